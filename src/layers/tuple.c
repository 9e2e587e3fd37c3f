/* SPDX-License-Identifier: Apache-2.0 */
/* Tuple layer, the values side: building tuples in an arena, typed reads, and the order
 * of tuples (equal to the order of their packed bytes, see include/cfdb/tuple.h).
 *
 * Invariants kept by every adder:
 *   - t->elems holds t->cap slots in t->arena; it doubles when full (the old array
 *     stays in the arena: at most twice the final size is ever used);
 *   - byte payloads are copied into the arena; STRING payloads are valid UTF-8;
 *   - an integer that fits int64_t is always CFDB_TUPLE_INT; a BIGINT magnitude has no
 *     leading zero byte. So one value has one representation and equality is exact. */
#include "error_codes.h"
#include "cfdb/tuple.h"
#include "tuple_internal.h"

#include <string.h>

void cfdb_tuple_init(cfdb_tuple *t, cfdb_arena *a)
{
    t->arena = a;
    t->elems = NULL;
    t->count = 0;
    t->cap = 0;
}

const cfdb_tuple_elem *cfdb_tuple_get(const cfdb_tuple *t, uint32_t i)
{
    return i < t->count ? &t->elems[i] : NULL;
}

static cfdb_tuple_elem *push(cfdb_tuple *t, cfdb_tuple_type type)
{
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 8;
        if (cap < t->cap || cap > (UINT32_MAX / sizeof(cfdb_tuple_elem)))
            return NULL;
        cfdb_tuple_elem *e = cfdb_arena_alloc(t->arena, (size_t)cap * sizeof *e);
        if (!e)
            return NULL;
        if (t->count)
            memcpy(e, t->elems, (size_t)t->count * sizeof *e);
        t->elems = e;
        t->cap = cap;
    }
    cfdb_tuple_elem *e = &t->elems[t->count++];
    memset(e, 0, sizeof *e);
    e->type = type;
    return e;
}

static int copy_payload(cfdb_tuple *t, const void *p, size_t n, cfdb_bytes *out)
{
    if (n > UINT32_MAX)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (n == 0) {
        *out = (cfdb_bytes){ (const uint8_t *)"", 0 };
        return 0;
    }
    void *c = cfdb_arena_dup(t->arena, p, n);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    *out = cfdb_bytes_make(c, n);
    return 0;
}

int cfdb_tuple_add_null(cfdb_tuple *t)
{
    return push(t, CFDB_TUPLE_NULL) ? 0 : CFDB_ERR_OUT_OF_MEMORY;
}

static int add_byteslike(cfdb_tuple *t, cfdb_tuple_type type, const void *p, size_t n)
{
    cfdb_bytes b;
    int err = copy_payload(t, p, n, &b);
    if (err)
        return err;
    cfdb_tuple_elem *e = push(t, type);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    e->v.bytes = b;
    return 0;
}

int cfdb_tuple_add_bytes(cfdb_tuple *t, const void *p, size_t n)
{
    return add_byteslike(t, CFDB_TUPLE_BYTES, p, n);
}

int cfdb_tuple_add_string(cfdb_tuple *t, const char *s, size_t n)
{
    if (!tuple_utf8_valid((const uint8_t *)s, n))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return add_byteslike(t, CFDB_TUPLE_STRING, s, n);
}

int cfdb_tuple_add_cstr(cfdb_tuple *t, const char *s)
{
    return cfdb_tuple_add_string(t, s, strlen(s));
}

int cfdb_tuple_add_int(cfdb_tuple *t, int64_t v)
{
    cfdb_tuple_elem *e = push(t, CFDB_TUPLE_INT);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    e->v.i = v;
    return 0;
}

int cfdb_tuple_add_uint64(cfdb_tuple *t, uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return cfdb_tuple_add_int(t, (int64_t)v);
    uint8_t mag[8];
    for (int k = 0; k < 8; k++)
        mag[k] = (uint8_t)(v >> (56 - 8 * k));
    return cfdb_tuple_add_bigint(t, false, mag, 8);
}

int cfdb_tuple_add_bigint(cfdb_tuple *t, bool negative, const uint8_t *magnitude, size_t n)
{
    while (n && magnitude[0] == 0) {
        magnitude++;
        n--;
    }
    if (n > 255)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (n <= 8) {
        uint64_t m = 0;
        for (size_t k = 0; k < n; k++)
            m = (m << 8) | magnitude[k];
        if (!negative && m <= (uint64_t)INT64_MAX)
            return cfdb_tuple_add_int(t, (int64_t)m);
        if (negative && m <= (uint64_t)INT64_MAX + 1)
            return cfdb_tuple_add_int(t, m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m);
    }
    cfdb_bytes b;
    int err = copy_payload(t, magnitude, n, &b);
    if (err)
        return err;
    cfdb_tuple_elem *e = push(t, CFDB_TUPLE_BIGINT);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    e->v.big.negative = negative;
    e->v.big.magnitude = b;
    return 0;
}

int cfdb_tuple_add_float(cfdb_tuple *t, float v)
{
    cfdb_tuple_elem *e = push(t, CFDB_TUPLE_FLOAT);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    memcpy(&e->v.f, &v, sizeof v);
    return 0;
}

int cfdb_tuple_add_double(cfdb_tuple *t, double v)
{
    cfdb_tuple_elem *e = push(t, CFDB_TUPLE_DOUBLE);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    memcpy(&e->v.d, &v, sizeof v);
    return 0;
}

int cfdb_tuple_add_bool(cfdb_tuple *t, bool v)
{
    cfdb_tuple_elem *e = push(t, CFDB_TUPLE_BOOL);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    e->v.b = v;
    return 0;
}

int cfdb_tuple_add_uuid(cfdb_tuple *t, const uint8_t uuid[16])
{
    cfdb_tuple_elem *e = push(t, CFDB_TUPLE_UUID);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    memcpy(e->v.uuid, uuid, 16);
    return 0;
}

static int add_vs(cfdb_tuple *t, cfdb_tuple_type type, const uint8_t *vs, size_t n)
{
    cfdb_tuple_elem *e = push(t, type);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    memcpy(e->v.vs, vs, n);
    return 0;
}

int cfdb_tuple_add_versionstamp(cfdb_tuple *t, const uint8_t vs[12])
{
    return add_vs(t, CFDB_TUPLE_VERSIONSTAMP, vs, 12);
}

int cfdb_tuple_add_incomplete_versionstamp(cfdb_tuple *t, uint16_t user_version)
{
    uint8_t vs[12];
    memset(vs, 0xff, 10);
    vs[10] = (uint8_t)(user_version >> 8);
    vs[11] = (uint8_t)user_version;
    return add_vs(t, CFDB_TUPLE_VERSIONSTAMP, vs, 12);
}

int cfdb_tuple_add_versionstamp80(cfdb_tuple *t, const uint8_t vs[10])
{
    return add_vs(t, CFDB_TUPLE_VERSIONSTAMP80, vs, 10);
}

int cfdb_tuple_add_incomplete_versionstamp80(cfdb_tuple *t)
{
    uint8_t vs[10];
    memset(vs, 0xff, sizeof vs);
    return add_vs(t, CFDB_TUPLE_VERSIONSTAMP80, vs, 10);
}

int cfdb_tuple_add_nested(cfdb_tuple *t, const cfdb_tuple *n)
{
    cfdb_tuple_elem *e = push(t, CFDB_TUPLE_NESTED);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    e->v.nested = n;
    return 0;
}

int tuple_push_elem(cfdb_tuple *t, const cfdb_tuple_elem *src)
{
    cfdb_tuple_elem *e = push(t, src->type);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    *e = *src;
    return 0;
}

int cfdb_tuple_add_elem(cfdb_tuple *t, const cfdb_tuple_elem *src)
{
    switch (src->type) {
    case CFDB_TUPLE_BYTES:
        return cfdb_tuple_add_bytes(t, src->v.bytes.ptr, src->v.bytes.len);
    case CFDB_TUPLE_STRING:
        return cfdb_tuple_add_string(t, (const char *)src->v.bytes.ptr, src->v.bytes.len);
    case CFDB_TUPLE_BIGINT:
        return cfdb_tuple_add_bigint(t, src->v.big.negative, src->v.big.magnitude.ptr,
                                     src->v.big.magnitude.len);
    case CFDB_TUPLE_NULL: case CFDB_TUPLE_NESTED: case CFDB_TUPLE_INT: case CFDB_TUPLE_FLOAT:
    case CFDB_TUPLE_DOUBLE: case CFDB_TUPLE_BOOL: case CFDB_TUPLE_UUID:
    case CFDB_TUPLE_VERSIONSTAMP80: case CFDB_TUPLE_VERSIONSTAMP:
        return tuple_push_elem(t, src);
    }
    return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
}

/* ---- typed reads ---- */

static const cfdb_tuple_elem *typed(const cfdb_tuple *t, uint32_t i, cfdb_tuple_type type)
{
    const cfdb_tuple_elem *e = cfdb_tuple_get(t, i);
    return e && e->type == type ? e : NULL;
}

int cfdb_tuple_get_int(const cfdb_tuple *t, uint32_t i, int64_t *out)
{
    const cfdb_tuple_elem *e = typed(t, i, CFDB_TUPLE_INT);
    if (!e)
        return CFDB_ERR_INVALID_TUPLE_INDEX;
    *out = e->v.i;
    return 0;
}

int cfdb_tuple_get_bytes(const cfdb_tuple *t, uint32_t i, cfdb_bytes *out)
{
    const cfdb_tuple_elem *e = typed(t, i, CFDB_TUPLE_BYTES);
    if (!e)
        return CFDB_ERR_INVALID_TUPLE_INDEX;
    *out = e->v.bytes;
    return 0;
}

int cfdb_tuple_get_string(const cfdb_tuple *t, uint32_t i, cfdb_bytes *out)
{
    const cfdb_tuple_elem *e = typed(t, i, CFDB_TUPLE_STRING);
    if (!e)
        return CFDB_ERR_INVALID_TUPLE_INDEX;
    *out = e->v.bytes;
    return 0;
}

int cfdb_tuple_get_nested(const cfdb_tuple *t, uint32_t i, const cfdb_tuple **out)
{
    const cfdb_tuple_elem *e = typed(t, i, CFDB_TUPLE_NESTED);
    if (!e)
        return CFDB_ERR_INVALID_TUPLE_INDEX;
    *out = e->v.nested;
    return 0;
}

bool cfdb_tuple_versionstamp_is_incomplete(const cfdb_tuple_elem *e)
{
    if (e->type != CFDB_TUPLE_VERSIONSTAMP && e->type != CFDB_TUPLE_VERSIONSTAMP80)
        return false;
    for (int k = 0; k < 10; k++)
        if (e->v.vs[k] != 0xff)
            return false;
    return true;
}

static uint32_t count_incomplete(const cfdb_tuple *t, int depth)
{
    uint32_t n = 0;
    if (depth > CFDB_TUPLE_MAX_DEPTH)
        return 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const cfdb_tuple_elem *e = &t->elems[i];
        if (e->type == CFDB_TUPLE_NESTED)
            n += count_incomplete(e->v.nested, depth + 1);
        else if (cfdb_tuple_versionstamp_is_incomplete(e))
            n++;
    }
    return n;
}

uint32_t cfdb_tuple_count_incomplete(const cfdb_tuple *t)
{
    return count_incomplete(t, 0);
}

/* ---- order ---- */

uint32_t tuple_float_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u ^ 0x80000000u);
}

uint64_t tuple_double_key(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return (u & 0x8000000000000000ull) ? ~u : (u ^ 0x8000000000000000ull);
}

/* The first type code of e's encoding, for ordering elements of different kinds.
 * Integers all answer 0x14: they are ordered among themselves by value. */
static int kind_code(const cfdb_tuple_elem *e)
{
    if (e->type == CFDB_TUPLE_BIGINT)
        return CFDB_TUPLE_INT;
    if (e->type == CFDB_TUPLE_BOOL)
        return e->v.b ? 0x27 : 0x26;
    return (int)e->type;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

static int compare_tuples(const cfdb_tuple *a, const cfdb_tuple *b, int depth);

static int elem_compare(const cfdb_tuple_elem *a, const cfdb_tuple_elem *b, int depth)
{
    int ka = kind_code(a), kb = kind_code(b);
    if (ka != kb)
        return ka < kb ? -1 : 1;
    switch (a->type) {
    case CFDB_TUPLE_NULL:
    case CFDB_TUPLE_BOOL:
        return 0;
    case CFDB_TUPLE_BYTES:
    case CFDB_TUPLE_STRING:
        /* the 0x00 -> 0x00 0xff escape preserves the order of the raw bytes */
        return cfdb_bytes_cmp(a->v.bytes, b->v.bytes);
    case CFDB_TUPLE_NESTED:
        return compare_tuples(a->v.nested, b->v.nested, depth + 1);
    case CFDB_TUPLE_INT:
    case CFDB_TUPLE_BIGINT:
        if (a->type == CFDB_TUPLE_INT && b->type == CFDB_TUPLE_INT)
            return a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
        else {
            uint8_t ea[TUPLE_INT_MAX_ENCODED], eb[TUPLE_INT_MAX_ENCODED];
            size_t na = tuple_encode_integer(a, ea), nb = tuple_encode_integer(b, eb);
            return cfdb_bytes_cmp(cfdb_bytes_make(ea, na), cfdb_bytes_make(eb, nb));
        }
    case CFDB_TUPLE_FLOAT:
        return cmp_u64(tuple_float_key(a->v.f), tuple_float_key(b->v.f));
    case CFDB_TUPLE_DOUBLE:
        return cmp_u64(tuple_double_key(a->v.d), tuple_double_key(b->v.d));
    case CFDB_TUPLE_UUID:
        return memcmp(a->v.uuid, b->v.uuid, 16);
    case CFDB_TUPLE_VERSIONSTAMP80:
        return memcmp(a->v.vs, b->v.vs, 10);
    case CFDB_TUPLE_VERSIONSTAMP:
        return memcmp(a->v.vs, b->v.vs, 12);
    }
    return 0;
}

static int compare_tuples(const cfdb_tuple *a, const cfdb_tuple *b, int depth)
{
    if (depth > CFDB_TUPLE_MAX_DEPTH)
        return 0;
    uint32_t n = a->count < b->count ? a->count : b->count;
    for (uint32_t i = 0; i < n; i++) {
        int c = elem_compare(&a->elems[i], &b->elems[i], depth);
        if (c)
            return c < 0 ? -1 : 1;
    }
    return a->count < b->count ? -1 : a->count > b->count;
}

int cfdb_tuple_compare(const cfdb_tuple *a, const cfdb_tuple *b)
{
    return compare_tuples(a, b, 0);
}

int cfdb_tuple_elem_compare(const cfdb_tuple_elem *a, const cfdb_tuple_elem *b)
{
    int c = elem_compare(a, b, 0);
    return c < 0 ? -1 : c > 0;
}

/* ---- UTF-8 (RFC 3629: what Python's strict utf-8 codec accepts) ---- */

bool tuple_utf8_valid(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint8_t lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
        if (c >= 0xc2 && c <= 0xdf)
            len = 2;
        else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            if (c == 0xe0)
                lo = 0xa0;      /* no overlong */
            else if (c == 0xed)
                hi = 0x9f;      /* no surrogates */
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f;      /* <= U+10FFFF */
        } else
            return false;
        if (n - i < len)
            return false;
        if (p[i + 1] < lo || p[i + 1] > hi)
            return false;
        for (size_t k = 2; k < len; k++)
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
        i += len;
    }
    return true;
}
