/* SPDX-License-Identifier: Apache-2.0 */
/* The byte range of a Record Layer scan (fdb-record-layer's KeyValueCursorBase.Builder.prepare
 * and calculatePrefixLength, TupleRange.toRange):
 *   lowBytes  = subspace + pack(low)  (the subspace alone for TREE_START)
 *   highBytes = subspace + pack(high) (the subspace alone for TREE_END)
 *   prefix    = subspace + the bytes lowBytes and highBytes share
 *   with a continuation (inner bytes i): forward lowBytes = prefix + i (CONTINUATION),
 *   reverse highBytes = prefix + i (CONTINUATION)
 *   low:  TREE_START, RANGE_INCLUSIVE as is; RANGE_EXCLUSIVE strinc; CONTINUATION + 0x00
 *   high: RANGE_EXCLUSIVE, CONTINUATION as is; TREE_END, RANGE_INCLUSIVE + 0xff
 * cfdb adds one check Java does not make: the continued position must lie inside the range
 * without the continuation (else 2000), so a token from another range or a forged one cannot
 * move a scan outside the range it names. Pure computation: no I/O (fuzzed with the token
 * decoder by fuzz/fuzz_continuation.c). */
#include <string.h>

#include "error_codes.h"
#include "rl_cursor_internal.h"

static int cat(cfdb_arena *a, cfdb_bytes x, cfdb_bytes y, cfdb_bytes *out)
{
    uint8_t *p = cfdb_arena_alloc(a, x.len + y.len + 1);
    if (!p)
        return CFDB_ERR_OUT_OF_MEMORY;
    if (x.len)
        memcpy(p, x.ptr, x.len);
    if (y.len)
        memcpy(p + x.len, y.ptr, y.len);
    *out = cfdb_bytes_make(p, x.len + y.len);
    return 0;
}

static int strinc(cfdb_arena *a, cfdb_bytes k, cfdb_bytes *out)
{
    size_t n = k.len;
    while (n && k.ptr[n - 1] == 0xff)
        n--;
    if (!n)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    uint8_t *p = cfdb_arena_alloc(a, n);
    if (!p)
        return CFDB_ERR_OUT_OF_MEMORY;
    memcpy(p, k.ptr, n);
    p[n - 1]++;
    *out = cfdb_bytes_make(p, n);
    return 0;
}

static int endpoint_bytes(cfdb_arena *a, cfdb_bytes sub, const cfdb_tuple *t, bool unbounded,
                          cfdb_bytes *out)
{
    if (unbounded || !t) {
        *out = sub;
        return 0;
    }
    return cfdb_tuple_pack(a, sub, t, out);
}

static const uint8_t zero = 0, ff = 0xff;

static int low_key(cfdb_arena *a, cfdb_bytes low, int ep, bool continued, cfdb_bytes *out)
{
    if (continued)
        return cat(a, low, cfdb_bytes_make(&zero, 1), out);
    switch (ep) {
    case CFDB_RL_TREE_START: case CFDB_RL_RANGE_INCLUSIVE:
        *out = low;
        return 0;
    case CFDB_RL_RANGE_EXCLUSIVE:
        return strinc(a, low, out);
    default:
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
}

static int high_key(cfdb_arena *a, cfdb_bytes high, int ep, bool continued, cfdb_bytes *out)
{
    if (continued || ep == CFDB_RL_RANGE_EXCLUSIVE) {
        *out = high;
        return 0;
    }
    if (ep == CFDB_RL_TREE_END || ep == CFDB_RL_RANGE_INCLUSIVE)
        return cat(a, high, cfdb_bytes_make(&ff, 1), out);
    return CFDB_ERR_CLIENT_INVALID_OPERATION;
}

int rl_resolve_range(cfdb_arena *a, cfdb_bytes sub, const cfdb_rl_range *range,
                     cfdb_bytes continuation, bool reverse, cfdb_bytes *begin, cfdb_bytes *end,
                     size_t *prefix_len)
{
    cfdb_bytes lo, hi;
    int rc = endpoint_bytes(a, sub, range->low, range->low_endpoint == CFDB_RL_TREE_START, &lo);
    if (!rc)
        rc = endpoint_bytes(a, sub, range->high, range->high_endpoint == CFDB_RL_TREE_END, &hi);
    if (rc)
        return rc;
    if (range->low_endpoint == CFDB_RL_TREE_END || range->high_endpoint == CFDB_RL_TREE_START)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    size_t p = sub.len;
    while (p < lo.len && p < hi.len && lo.ptr[p] == hi.ptr[p])
        p++;
    *prefix_len = p;
    cfdb_bytes b0, e0;
    if ((rc = low_key(a, lo, range->low_endpoint, false, &b0)) ||
        (rc = high_key(a, hi, range->high_endpoint, false, &e0)))
        return rc;
    if (continuation.len == 0) {
        *begin = b0;
        *end = e0;
        return 0;
    }
    cfdb_bytes inner, at;
    if ((rc = cfdb_rl_continuation_decode(continuation, &inner)) ||
        (rc = cat(a, cfdb_bytes_make(lo.ptr, p), inner, &at)))
        return rc;
    if (reverse) {
        *begin = b0;
        rc = high_key(a, at, 0, true, end);
    } else {
        *end = e0;
        rc = low_key(a, at, 0, true, begin);
    }
    if (rc)
        return rc;
    /* The position must lie inside the range it claims to continue. */
    cfdb_bytes pos = reverse ? *end : *begin;
    if (cfdb_bytes_cmp(pos, b0) < 0 || cfdb_bytes_cmp(pos, e0) > 0)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return 0;
}

