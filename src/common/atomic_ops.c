/* Atomic ops as defined by FoundationDB 7.3. Integers are little-endian and
 * unsigned; the operand's length decides the result's length, so the existing
 * value is truncated or zero-extended ("padded") to it. */
#include "atomic_ops.h"

#include <string.h>

#include "error_codes.h"

/* Pad(E): existing truncated or zero-extended to n bytes, in the arena. */
static uint8_t *padded_copy(cfdb_arena *a, cfdb_bytes e, uint32_t n)
{
    uint8_t *buf = cfdb_arena_alloc(a, n);
    if (!buf)
        return NULL;
    uint32_t common = e.len < n ? e.len : n;
    if (common)
        memcpy(buf, e.ptr, common);
    memset(buf + common, 0, n - common);
    return buf;
}

static int little_endian_add(cfdb_bytes e, cfdb_bytes p, cfdb_arena *a, cfdb_bytes *out)
{
    if (e.len == 0 || p.len == 0) {
        *out = p;
        return 0;
    }
    uint8_t *buf = cfdb_arena_alloc(a, p.len);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    unsigned carry = 0;
    for (uint32_t i = 0; i < p.len; i++) {
        unsigned sum = (unsigned)p.ptr[i] + carry + (i < e.len ? e.ptr[i] : 0u);
        buf[i] = (uint8_t)sum;
        carry = sum >> 8;
    }
    *out = cfdb_bytes_make(buf, p.len);
    return 0;
}

enum bitwise_op { BIT_AND, BIT_OR, BIT_XOR };

/* And pads the existing value with zeros (so the tail becomes 0); Or and Xor keep
 * the operand's tail. */
static int bitwise(enum bitwise_op op, cfdb_bytes e, cfdb_bytes p, cfdb_arena *a,
                   cfdb_bytes *out)
{
    uint8_t *buf = cfdb_arena_alloc(a, p.len ? p.len : 1);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    for (uint32_t i = 0; i < p.len; i++) {
        uint8_t ev = i < e.len ? e.ptr[i] : 0;
        buf[i] = op == BIT_AND ? (uint8_t)(ev & p.ptr[i])
                 : op == BIT_OR ? (uint8_t)(ev | p.ptr[i])
                                : (uint8_t)(ev ^ p.ptr[i]);
    }
    *out = cfdb_bytes_make(buf, p.len);
    return 0;
}

/* Compares Pad(E) with P as little-endian unsigned integers of len(P) bytes. */
static int compare_padded(cfdb_bytes e, cfdb_bytes p)
{
    for (uint32_t i = p.len; i-- > 0;) {
        uint8_t ev = i < e.len ? e.ptr[i] : 0;
        if (ev != p.ptr[i])
            return ev < p.ptr[i] ? -1 : 1;
    }
    return 0;
}

/* Max/Min: the operand wins ties; when the existing value wins, the result is
 * Pad(E) (so the length is still the operand's). */
static int integer_pick(bool want_max, cfdb_bytes e, cfdb_bytes p, cfdb_arena *a,
                        cfdb_bytes *out)
{
    int c = compare_padded(e, p);
    bool existing_wins = want_max ? c > 0 : c < 0;
    if (!existing_wins) {
        *out = p;
        return 0;
    }
    uint8_t *buf = padded_copy(a, e, p.len);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    *out = cfdb_bytes_make(buf, p.len);
    return 0;
}

static int append_if_fits(cfdb_bytes e, cfdb_bytes p, cfdb_arena *a, cfdb_bytes *out)
{
    if (e.len == 0) {
        *out = p;
        return 0;
    }
    if (p.len == 0 || (uint64_t)e.len + p.len > CFDB_VALUE_SIZE_LIMIT) {
        *out = e; /* too long: silently unchanged */
        return 0;
    }
    uint8_t *buf = cfdb_arena_alloc(a, (size_t)e.len + p.len);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    memcpy(buf, e.ptr, e.len);
    memcpy(buf + e.len, p.ptr, p.len);
    *out = cfdb_bytes_make(buf, (size_t)e.len + p.len);
    return 0;
}

int cfdb_apply_atomic(int mutation_type, const cfdb_bytes *existing, cfdb_bytes operand,
                      cfdb_arena *a, cfdb_bytes *out, bool *out_present)
{
    static const uint8_t empty_byte = 0;
    bool present = existing != NULL;
    /* Most ops treat an absent value like an empty one. */
    cfdb_bytes e = present ? *existing : cfdb_bytes_make(&empty_byte, 0);
    cfdb_bytes p = operand;
    *out_present = true;

    switch (mutation_type) {
    case CFDB_MUT_ADD_VALUE:
        return little_endian_add(e, p, a, out);
    case CFDB_MUT_AND_V2:
        if (!present) {
            *out = p;
            return 0;
        }
        /* fall through */
    case CFDB_MUT_AND:
        if (p.len == 0) {
            *out = p;
            return 0;
        }
        return bitwise(BIT_AND, e, p, a, out);
    case CFDB_MUT_OR:
    case CFDB_MUT_XOR:
        if (e.len == 0 || p.len == 0) {
            *out = p;
            return 0;
        }
        return bitwise(mutation_type == CFDB_MUT_OR ? BIT_OR : BIT_XOR, e, p, a, out);
    case CFDB_MUT_APPEND_IF_FITS:
        return append_if_fits(e, p, a, out);
    case CFDB_MUT_MAX:
        if (e.len == 0 || p.len == 0) {
            *out = p;
            return 0;
        }
        return integer_pick(true, e, p, a, out);
    case CFDB_MUT_MIN_V2:
        if (!present) {
            *out = p;
            return 0;
        }
        /* fall through */
    case CFDB_MUT_MIN:
        /* Legacy Min compares even an absent/empty value (as zero). */
        if (p.len == 0) {
            *out = p;
            return 0;
        }
        return integer_pick(false, e, p, a, out);
    case CFDB_MUT_BYTE_MIN:
        *out = present && cfdb_bytes_cmp(e, p) < 0 ? e : p;
        return 0;
    case CFDB_MUT_BYTE_MAX:
        *out = present && cfdb_bytes_cmp(e, p) > 0 ? e : p;
        return 0;
    case CFDB_MUT_COMPARE_AND_CLEAR:
        if (!present || cfdb_bytes_eq(e, p)) {
            *out_present = false;
            *out = cfdb_bytes_make(&empty_byte, 0);
        } else {
            *out = e;
        }
        return 0;
    default:
        return CFDB_ERR_INVALID_MUTATION_TYPE;
    }
}

void cfdb_place_versionstamp(uint8_t dst[CFDB_VERSIONSTAMP_SIZE], int64_t version,
                             uint16_t batch_index)
{
    uint64_t v = (uint64_t)version;
    for (int i = 0; i < 8; i++)
        dst[i] = (uint8_t)(v >> (56 - 8 * i));
    dst[8] = (uint8_t)(batch_index >> 8);
    dst[9] = (uint8_t)batch_index;
}

static int32_t trailing_offset(cfdb_bytes param)
{
    const uint8_t *t = param.ptr + param.len - 4;
    return (int32_t)((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
                     (uint32_t)t[3] << 24);
}

int cfdb_transform_versionstamp(cfdb_bytes param, int64_t version, uint16_t batch_index,
                                cfdb_arena *a, cfdb_bytes *out)
{
    if (param.len < 4)
        return cfdb_arena_dup_bytes(a, param, out);
    int64_t pos = trailing_offset(param);
    cfdb_bytes body = cfdb_bytes_make(param.ptr, param.len - 4);
    if (body.len == 0) {
        *out = body;
        return 0;
    }
    uint8_t *buf = cfdb_arena_dup(a, body.ptr, body.len);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    if (pos >= 0 && pos + CFDB_VERSIONSTAMP_SIZE <= (int64_t)body.len)
        cfdb_place_versionstamp(buf + pos, version, batch_index);
    *out = cfdb_bytes_make(buf, body.len);
    return 0;
}

int cfdb_transform_versionstamp_mutation(cfdb_mutation *m, int64_t version,
                                         uint16_t batch_index, cfdb_arena *a)
{
    cfdb_bytes *param;
    if (m->type == CFDB_MUT_SET_VERSIONSTAMPED_KEY)
        param = &m->param1;
    else if (m->type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE)
        param = &m->param2;
    else
        return 0;
    cfdb_bytes stamped;
    if (cfdb_transform_versionstamp(*param, version, batch_index, a, &stamped))
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    *param = stamped;
    m->type = CFDB_MUT_SET_VALUE;
    return 0;
}

int cfdb_versionstamp_param_check(cfdb_bytes param)
{
    if (param.len < 4)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    int64_t pos = trailing_offset(param);
    if (pos < 0 || pos + CFDB_VERSIONSTAMP_SIZE > (int64_t)param.len - 4)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return 0;
}
