/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: Record Layer continuation tokens (src/layers/records/rl_continuation.c)
 * and the scan ranges they continue (rl_range.c). Any bytes decode (to the inner bytes of a
 * KeyValueCursorContinuation, or to themselves as the old form) without failing; the inner
 * bytes lie inside the input; encoding them and decoding again gives them back; a range
 * continued from them is refused (2000) or lies inside the range it continues, never past it.
 * Input: byte 0 picks the direction and the range's endpoint types, the rest is the token. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/layers/records/rl_cursor_internal.h"
#include "error_codes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    cfdb_bytes tok = cfdb_bytes_make(data + 1, size - 1);
    cfdb_bytes inner;
    if (cfdb_rl_continuation_decode(tok, &inner))
        abort();
    if (inner.len && (inner.ptr < tok.ptr || inner.ptr + inner.len > tok.ptr + tok.len))
        abort();
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_bytes enc, again;
    if (cfdb_rl_continuation_encode(&a, inner, &enc) || cfdb_rl_continuation_decode(enc, &again) ||
        again.len != inner.len || (inner.len && memcmp(again.ptr, inner.ptr, inner.len)))
        abort();

    /* a range under subspace ("s", 2): ("b") .. ("m", 5) with endpoint types from sel */
    cfdb_tuple s, lo, hi;
    cfdb_tuple_init(&s, &a);
    cfdb_tuple_init(&lo, &a);
    cfdb_tuple_init(&hi, &a);
    cfdb_tuple_add_cstr(&s, "s");
    cfdb_tuple_add_int(&s, 2);
    cfdb_tuple_add_cstr(&lo, "b");
    cfdb_tuple_add_cstr(&hi, "m");
    cfdb_tuple_add_int(&hi, 5);
    cfdb_bytes sub;
    if (cfdb_tuple_pack(&a, cfdb_bytes_make(NULL, 0), &s, &sub))
        abort();
    static const cfdb_rl_endpoint lows[] = { CFDB_RL_TREE_START, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_EXCLUSIVE },
                                  highs[] = { CFDB_RL_TREE_END, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_EXCLUSIVE };
    cfdb_rl_range r = { &lo, &hi, lows[(sel >> 1) % 3], highs[(sel >> 3) % 3] };
    bool reverse = sel & 1;
    cfdb_bytes b0, e0, b, e;
    size_t p0, p;
    if (rl_resolve_range(&a, sub, &r, cfdb_bytes_make(NULL, 0), reverse, &b0, &e0, &p0))
        abort();
    int rc = rl_resolve_range(&a, sub, &r, tok, reverse, &b, &e, &p);
    if (rc && rc != CFDB_ERR_CLIENT_INVALID_OPERATION)
        abort();
    if (!rc && (cfdb_bytes_cmp(b, b0) < 0 || cfdb_bytes_cmp(e, e0) > 0 || p != p0))
        abort();
    cfdb_arena_free(&a);
    return 0;
}
