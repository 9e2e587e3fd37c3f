/* SPDX-License-Identifier: Apache-2.0 */
/* Tuple layer, the bytes side: pack (sizing, then one write into an exact buffer) and
 * unpack (one pass, bounds-checked before every read). The encoding is described in
 * include/cfdb/tuple.h; the integer widths follow the official bindings exactly, including
 * their choice of 0x1d/0x0b for |v| >= 2^64-1 although it fits 8 bytes.
 *
 * Unpack never reads past the input, refuses nesting deeper than CFDB_TUPLE_MAX_DEPTH,
 * and allocates at most: one payload buffer of the input's size (all string and big
 * integer payloads are carved from it) plus the element arrays (doubling). */
#include "error_codes.h"
#include "cfdb/tuple.h"
#include "tuple_internal.h"

#include <string.h>

enum {
    C_NULL = 0x00, C_BYTES = 0x01, C_STRING = 0x02, C_NESTED = 0x05, C_NEG_BIG = 0x0b,
    C_ZERO = 0x14, C_POS_BIG = 0x1d, C_FLOAT = 0x20, C_DOUBLE = 0x21, C_FALSE = 0x26,
    C_TRUE = 0x27, C_UUID = 0x30, C_VS80 = 0x32, C_VS96 = 0x33,
};

/* ---- integers ---- */

static size_t min_bytes(uint64_t m)
{
    size_t n = 0;
    while (m) {
        n++;
        m >>= 8;
    }
    return n;
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t k = 0; k < n; k++)
        if (p[k] != v)
            return false;
    return true;
}

size_t tuple_encode_integer(const cfdb_tuple_elem *e, uint8_t *buf)
{
    if (e->type == CFDB_TUPLE_INT) {
        int64_t v = e->v.i;
        if (v == 0) {
            buf[0] = C_ZERO;
            return 1;
        }
        uint64_t m = v > 0 ? (uint64_t)v : (uint64_t)0 - (uint64_t)v;
        size_t n = min_bytes(m);
        uint64_t w = v > 0 ? m : ~m;
        buf[0] = (uint8_t)(v > 0 ? C_ZERO + n : C_ZERO - n);
        for (size_t k = 0; k < n; k++)
            buf[1 + k] = (uint8_t)(w >> (8 * (n - 1 - k)));
        return 1 + n;
    }
    /* BIGINT: magnitude of 8..255 significant bytes, value outside int64 */
    const uint8_t *mag = e->v.big.magnitude.ptr;
    size_t n = e->v.big.magnitude.len;
    if (n > 255)
        return 0;
    bool neg = e->v.big.negative;
    size_t pos;
    if (n <= 8 && !(n == 8 && all_bytes(mag, 8, 0xff))) {
        /* fits the 8-byte codes: the bindings use them below 2^64-1 */
        buf[0] = (uint8_t)(neg ? C_ZERO - 8 : C_ZERO + 8);
        memset(buf + 1, 0, 8 - n);
        memcpy(buf + 1 + (8 - n), mag, n);
        n = 8;
        pos = 1;
    } else {
        buf[0] = neg ? C_NEG_BIG : C_POS_BIG;
        buf[1] = (uint8_t)(neg ? n ^ 0xff : n);
        memcpy(buf + 2, mag, n);
        pos = 2;
    }
    if (neg)
        for (size_t k = 0; k < n; k++)
            buf[pos + k] = (uint8_t)~buf[pos + k];
    return pos + n;
}

/* ---- pack ---- */

static size_t escaped_len(cfdb_bytes b)
{
    size_t n = b.len;
    for (uint32_t k = 0; k < b.len; k++)
        n += b.ptr[k] == 0;
    return n;
}

static int size_of(const cfdb_tuple *t, bool nested, int depth, size_t *size)
{
    if (depth > CFDB_TUPLE_MAX_DEPTH)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    size_t s = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const cfdb_tuple_elem *e = &t->elems[i];
        uint8_t ibuf[TUPLE_INT_MAX_ENCODED];
        size_t n;
        switch (e->type) {
        case CFDB_TUPLE_NULL: s += nested ? 2 : 1; break;
        case CFDB_TUPLE_BYTES:
        case CFDB_TUPLE_STRING: s += 2 + escaped_len(e->v.bytes); break;
        case CFDB_TUPLE_NESTED: {
            size_t inner;
            int err = size_of(e->v.nested, true, depth + 1, &inner);
            if (err)
                return err;
            s += 2 + inner;
            break;
        }
        case CFDB_TUPLE_INT:
        case CFDB_TUPLE_BIGINT:
            n = tuple_encode_integer(e, ibuf);
            if (!n)
                return CFDB_ERR_CLIENT_INVALID_OPERATION;
            s += n;
            break;
        case CFDB_TUPLE_FLOAT: s += 5; break;
        case CFDB_TUPLE_DOUBLE: s += 9; break;
        case CFDB_TUPLE_BOOL: s += 1; break;
        case CFDB_TUPLE_UUID: s += 17; break;
        case CFDB_TUPLE_VERSIONSTAMP80: s += 11; break;
        case CFDB_TUPLE_VERSIONSTAMP: s += 13; break;
        default: return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
        }
    }
    *size = s;
    return 0;
}

int cfdb_tuple_packed_size(const cfdb_tuple *t, size_t *size)
{
    return size_of(t, false, 0, size);
}

typedef struct writer {
    uint8_t *p;
    size_t pos;
    size_t vs_pos;     /* offset of the first incomplete versionstamp's version bytes */
    uint32_t vs_count; /* incomplete versionstamps written */
} writer;

static void put_escaped(writer *w, uint8_t code, cfdb_bytes b)
{
    w->p[w->pos++] = code;
    for (uint32_t k = 0; k < b.len; k++) {
        w->p[w->pos++] = b.ptr[k];
        if (b.ptr[k] == 0)
            w->p[w->pos++] = 0xff;
    }
    w->p[w->pos++] = 0x00;
}

static void put_be(writer *w, uint64_t v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        w->p[w->pos++] = (uint8_t)(v >> (8 * (n - 1 - k)));
}

/* The sizes were checked by size_of(): this cannot fail. */
static void write_tuple(writer *w, const cfdb_tuple *t, bool nested)
{
    for (uint32_t i = 0; i < t->count; i++) {
        const cfdb_tuple_elem *e = &t->elems[i];
        switch (e->type) {
        case CFDB_TUPLE_NULL:
            w->p[w->pos++] = C_NULL;
            if (nested)
                w->p[w->pos++] = 0xff;
            break;
        case CFDB_TUPLE_BYTES: put_escaped(w, C_BYTES, e->v.bytes); break;
        case CFDB_TUPLE_STRING: put_escaped(w, C_STRING, e->v.bytes); break;
        case CFDB_TUPLE_NESTED:
            w->p[w->pos++] = C_NESTED;
            write_tuple(w, e->v.nested, true);
            w->p[w->pos++] = 0x00;
            break;
        case CFDB_TUPLE_INT:
        case CFDB_TUPLE_BIGINT:
            w->pos += tuple_encode_integer(e, w->p + w->pos);
            break;
        case CFDB_TUPLE_FLOAT:
            w->p[w->pos++] = C_FLOAT;
            put_be(w, tuple_float_key(e->v.f), 4);
            break;
        case CFDB_TUPLE_DOUBLE:
            w->p[w->pos++] = C_DOUBLE;
            put_be(w, tuple_double_key(e->v.d), 8);
            break;
        case CFDB_TUPLE_BOOL: w->p[w->pos++] = e->v.b ? C_TRUE : C_FALSE; break;
        case CFDB_TUPLE_UUID:
            w->p[w->pos++] = C_UUID;
            memcpy(w->p + w->pos, e->v.uuid, 16);
            w->pos += 16;
            break;
        case CFDB_TUPLE_VERSIONSTAMP80:
        case CFDB_TUPLE_VERSIONSTAMP: {
            size_t n = e->type == CFDB_TUPLE_VERSIONSTAMP ? 12 : 10;
            w->p[w->pos++] = e->type == CFDB_TUPLE_VERSIONSTAMP ? C_VS96 : C_VS80;
            if (cfdb_tuple_versionstamp_is_incomplete(e) && w->vs_count++ == 0)
                w->vs_pos = w->pos;
            memcpy(w->p + w->pos, e->v.vs, n);
            w->pos += n;
            break;
        }
        }
    }
}

/* prefix + pack(t) + tail_extra spare bytes, in a; fills w. */
static int pack_common(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t, size_t extra,
                       writer *w, size_t *total)
{
    size_t body;
    int err = cfdb_tuple_packed_size(t, &body);
    if (err)
        return err;
    size_t n = prefix.len + body + extra;
    if (n > UINT32_MAX)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    uint8_t *p = cfdb_arena_alloc(a, n ? n : 1);
    if (!p)
        return CFDB_ERR_OUT_OF_MEMORY;
    if (prefix.len)
        memcpy(p, prefix.ptr, prefix.len);
    *w = (writer){ .p = p, .pos = prefix.len };
    write_tuple(w, t, false);
    *total = n;
    return 0;
}

int cfdb_tuple_pack(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t, cfdb_bytes *out)
{
    if (cfdb_tuple_count_incomplete(t))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    writer w;
    size_t n;
    int err = pack_common(a, prefix, t, 0, &w, &n);
    if (err)
        return err;
    *out = cfdb_bytes_make(w.p, n);
    return 0;
}

int cfdb_tuple_pack_to(const cfdb_tuple *t, uint8_t *buf, size_t cap, size_t *len)
{
    if (cfdb_tuple_count_incomplete(t))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    size_t n;
    int err = cfdb_tuple_packed_size(t, &n);
    if (err)
        return err;
    if (n > cap)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    writer w = { .p = buf };
    write_tuple(&w, t, false);
    *len = n;
    return 0;
}

int cfdb_tuple_pack_with_versionstamp(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t,
                                      cfdb_bytes *out)
{
    if (cfdb_tuple_count_incomplete(t) != 1)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    writer w;
    size_t n;
    int err = pack_common(a, prefix, t, 4, &w, &n);
    if (err)
        return err;
    for (int k = 0; k < 4; k++)
        w.p[w.pos + k] = (uint8_t)(w.vs_pos >> (8 * k));
    *out = cfdb_bytes_make(w.p, n);
    return 0;
}

int cfdb_tuple_range(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t, cfdb_bytes *begin,
                     cfdb_bytes *end)
{
    if (cfdb_tuple_count_incomplete(t))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    writer w;
    size_t n;
    int err = pack_common(a, prefix, t, 1, &w, &n);
    if (err)
        return err;
    uint8_t *e = cfdb_arena_dup(a, w.p, n);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    w.p[n - 1] = 0x00;
    e[n - 1] = 0xff;
    *begin = cfdb_bytes_make(w.p, n);
    *end = cfdb_bytes_make(e, n);
    return 0;
}

/* ---- unpack ---- */

typedef struct reader {
    cfdb_arena *arena;
    const uint8_t *p;
    size_t len;
    size_t pos;
    bool canonical;
    uint8_t *payload;      /* one buffer of len bytes for every payload, made on first use */
    size_t payload_used;
} reader;

#define MALFORMED CFDB_ERR_KEY_NOT_TUPLE

static uint8_t *payload(reader *r, size_t n)
{
    if (!r->payload) {
        r->payload = cfdb_arena_alloc(r->arena, r->len ? r->len : 1);
        if (!r->payload)
            return NULL;
    }
    uint8_t *p = r->payload + r->payload_used;
    r->payload_used += n; /* every payload is shorter than the bytes it came from */
    return p;
}

static int read_escaped(reader *r, cfdb_tuple_elem *e)
{
    size_t start = r->pos, k = start, zeros = 0;
    for (;;) {
        if (k >= r->len)
            return MALFORMED; /* no terminator */
        if (r->p[k] == 0x00) {
            if (k + 1 < r->len && r->p[k + 1] == 0xff) {
                zeros++;
                k += 2;
                continue;
            }
            break;
        }
        k++;
    }
    size_t n = k - start - zeros;
    uint8_t *out = payload(r, n);
    if (!out)
        return CFDB_ERR_OUT_OF_MEMORY;
    size_t o = 0;
    for (size_t j = start; j < k; j++) {
        out[o++] = r->p[j];
        if (r->p[j] == 0x00)
            j++; /* skip the 0xff escape */
    }
    if (e->type == CFDB_TUPLE_STRING && !tuple_utf8_valid(out, n))
        return MALFORMED;
    e->v.bytes = cfdb_bytes_make(out, n);
    r->pos = k + 1;
    return 0;
}

/* An integer from its magnitude (big-endian, maybe with leading zeros). */
static int set_integer(reader *r, cfdb_tuple_elem *e, bool neg, const uint8_t *mag, size_t n,
                       bool complemented)
{
    uint8_t tmp[255];
    for (size_t k = 0; k < n; k++)
        tmp[k] = complemented ? (uint8_t)~mag[k] : mag[k];
    size_t skip = 0;
    while (skip < n && tmp[skip] == 0)
        skip++;
    const uint8_t *m = tmp + skip;
    size_t len = n - skip;
    if (len <= 8) {
        uint64_t v = 0;
        for (size_t k = 0; k < len; k++)
            v = (v << 8) | m[k];
        if (!neg && v <= (uint64_t)INT64_MAX) {
            e->type = CFDB_TUPLE_INT;
            e->v.i = (int64_t)v;
            return 0;
        }
        if (neg && v <= (uint64_t)INT64_MAX + 1) {
            e->type = CFDB_TUPLE_INT;
            e->v.i = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
            return 0;
        }
    }
    uint8_t *out = payload(r, len);
    if (!out)
        return CFDB_ERR_OUT_OF_MEMORY;
    memcpy(out, m, len);
    e->type = CFDB_TUPLE_BIGINT;
    e->v.big.negative = neg;
    e->v.big.magnitude = cfdb_bytes_make(out, len);
    return 0;
}

static int read_int(reader *r, uint8_t code, cfdb_tuple_elem *e)
{
    const uint8_t *data;
    size_t n;
    bool neg;
    if (code == C_POS_BIG || code == C_NEG_BIG) {
        if (r->pos >= r->len)
            return MALFORMED;
        neg = code == C_NEG_BIG;
        n = neg ? r->p[r->pos] ^ 0xff : r->p[r->pos];
        r->pos++;
        if (r->len - r->pos < n)
            return MALFORMED;
        data = r->p + r->pos;
        /* canonical: no leading zero in the magnitude, and only for |v| >= 2^64-1 */
        if (r->canonical &&
            (n == 0 || data[0] == (neg ? 0xff : 0x00) || n < 8 ||
             (n == 8 && !all_bytes(data, 8, neg ? 0x00 : 0xff))))
            return MALFORMED;
    } else {
        neg = code < C_ZERO;
        n = neg ? (size_t)(C_ZERO - code) : (size_t)(code - C_ZERO);
        if (r->len - r->pos < n)
            return MALFORMED;
        data = r->p + r->pos;
        if (r->canonical && n &&
            (data[0] == (neg ? 0xff : 0x00) || (n == 8 && all_bytes(data, 8, neg ? 0x00 : 0xff))))
            return MALFORMED;
    }
    r->pos += n;
    return set_integer(r, e, neg, data, n, neg);
}

static int read_fixed(reader *r, size_t n, uint8_t *out)
{
    if (r->len - r->pos < n)
        return MALFORMED;
    memcpy(out, r->p + r->pos, n);
    r->pos += n;
    return 0;
}

static int read_tuple(reader *r, cfdb_tuple *t, bool nested, int depth);

static int read_elem(reader *r, cfdb_tuple *t, int depth)
{
    uint8_t code = r->p[r->pos++];
    cfdb_tuple_elem tmp;
    memset(&tmp, 0, sizeof tmp);
    cfdb_tuple_elem *e = &tmp;
    uint8_t raw[16];
    int err = 0;
    switch (code) {
    case C_NULL:
        e->type = CFDB_TUPLE_NULL;
        break;
    case C_BYTES:
    case C_STRING:
        e->type = code == C_BYTES ? CFDB_TUPLE_BYTES : CFDB_TUPLE_STRING;
        err = read_escaped(r, e);
        break;
    case C_NESTED: {
        if (depth + 1 > CFDB_TUPLE_MAX_DEPTH)
            return MALFORMED;
        cfdb_tuple *n = cfdb_arena_alloc(r->arena, sizeof *n);
        if (!n)
            return CFDB_ERR_OUT_OF_MEMORY;
        cfdb_tuple_init(n, r->arena);
        err = read_tuple(r, n, true, depth + 1);
        e->type = CFDB_TUPLE_NESTED;
        e->v.nested = n;
        break;
    }
    case C_FLOAT: {
        err = read_fixed(r, 4, raw);
        uint32_t k = (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 | (uint32_t)raw[2] << 8 | raw[3];
        k = (k & 0x80000000u) ? (k ^ 0x80000000u) : ~k;
        e->type = CFDB_TUPLE_FLOAT;
        memcpy(&e->v.f, &k, 4);
        break;
    }
    case C_DOUBLE: {
        err = read_fixed(r, 8, raw);
        uint64_t k = 0;
        for (int j = 0; j < 8; j++)
            k = (k << 8) | raw[j];
        k = (k & 0x8000000000000000ull) ? (k ^ 0x8000000000000000ull) : ~k;
        e->type = CFDB_TUPLE_DOUBLE;
        memcpy(&e->v.d, &k, 8);
        break;
    }
    case C_FALSE:
    case C_TRUE:
        e->type = CFDB_TUPLE_BOOL;
        e->v.b = code == C_TRUE;
        break;
    case C_UUID:
        e->type = CFDB_TUPLE_UUID;
        err = read_fixed(r, 16, e->v.uuid);
        break;
    case C_VS80:
        e->type = CFDB_TUPLE_VERSIONSTAMP80;
        err = read_fixed(r, 10, e->v.vs);
        break;
    case C_VS96:
        e->type = CFDB_TUPLE_VERSIONSTAMP;
        err = read_fixed(r, 12, e->v.vs);
        break;
    default:
        if (code >= C_NEG_BIG && code <= C_POS_BIG)
            err = read_int(r, code, e);
        else
            return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
        break;
    }
    if (err)
        return err;
    return tuple_push_elem(t, e);
}

static int read_tuple(reader *r, cfdb_tuple *t, bool nested, int depth)
{
    for (;;) {
        if (r->pos >= r->len)
            return nested ? MALFORMED : 0; /* a nested tuple needs its 0x00 */
        if (nested && r->p[r->pos] == 0x00) {
            if (r->pos + 1 < r->len && r->p[r->pos + 1] == 0xff) {
                r->pos += 2;
                int err = cfdb_tuple_add_null(t);
                if (err)
                    return err;
                continue;
            }
            r->pos++;
            return 0;
        }
        int err = read_elem(r, t, depth);
        if (err)
            return err;
    }
}

int cfdb_tuple_unpack_flags(cfdb_arena *a, cfdb_bytes packed, unsigned flags, cfdb_tuple *out)
{
    cfdb_tuple_init(out, a);
    reader r = { .arena = a, .p = packed.ptr, .len = packed.len,
                 .canonical = (flags & CFDB_TUPLE_UNPACK_CANONICAL) != 0 };
    return read_tuple(&r, out, false, 0);
}

int cfdb_tuple_unpack(cfdb_arena *a, cfdb_bytes packed, cfdb_tuple *out)
{
    return cfdb_tuple_unpack_flags(a, packed, 0, out);
}
