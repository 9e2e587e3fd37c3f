/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: tuple layer (include/cfdb/tuple.h). Any input either fails to unpack with
 * key_not_tuple or invalid_tuple_data_type, or unpacks; then:
 *   - the tuple equals itself and packs (plain pack when it holds no incomplete
 *     versionstamp, pack_with_versionstamp when it holds exactly one: then the last four
 *     bytes are the little-endian offset of ten 0xff bytes; with two or more both refuse);
 *   - when the input is canonical (CFDB_TUPLE_UNPACK_CANONICAL accepts it), the packed bytes
 *     ARE the input;
 *   - otherwise (the documented canonicalization: integers written wider than needed),
 *     the packed bytes are canonical, unpack to an equal tuple and pack again to themselves. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "cfdb/tuple.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1u << 16)
        return 0;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_bytes in = cfdb_bytes_make(data, size);
    cfdb_tuple t, c;
    int err = cfdb_tuple_unpack(&a, in, &t);
    if (err) {
        CHECK(err == CFDB_ERR_KEY_NOT_TUPLE || err == CFDB_ERR_INVALID_TUPLE_DATA_TYPE);
        /* the canonical reader is stricter, never looser */
        CHECK(cfdb_tuple_unpack_flags(&a, in, CFDB_TUPLE_UNPACK_CANONICAL, &c) != 0);
        cfdb_arena_free(&a);
        return 0;
    }
    CHECK(cfdb_tuple_compare(&t, &t) == 0);
    bool canonical = cfdb_tuple_unpack_flags(&a, in, CFDB_TUPLE_UNPACK_CANONICAL, &c) == 0;
    if (canonical)
        CHECK(cfdb_tuple_compare(&t, &c) == 0);
    uint32_t incomplete = cfdb_tuple_count_incomplete(&t);
    cfdb_bytes p;
    if (incomplete == 0) {
        CHECK(cfdb_tuple_pack(&a, (cfdb_bytes){ 0 }, &t, &p) == 0);
        CHECK(cfdb_tuple_pack_with_versionstamp(&a, (cfdb_bytes){ 0 }, &t, &p) ==
              CFDB_ERR_CLIENT_INVALID_OPERATION);
        CHECK(cfdb_tuple_pack(&a, (cfdb_bytes){ 0 }, &t, &p) == 0);
    } else {
        CHECK(cfdb_tuple_pack(&a, (cfdb_bytes){ 0 }, &t, &p) == CFDB_ERR_CLIENT_INVALID_OPERATION);
        if (incomplete > 1) {
            CHECK(cfdb_tuple_pack_with_versionstamp(&a, (cfdb_bytes){ 0 }, &t, &p) ==
                  CFDB_ERR_CLIENT_INVALID_OPERATION);
            cfdb_arena_free(&a);
            return 0;
        }
        CHECK(cfdb_tuple_pack_with_versionstamp(&a, (cfdb_bytes){ 0 }, &t, &p) == 0);
        CHECK(p.len >= 4 + 11);
        p.len -= 4;
        uint32_t off = (uint32_t)p.ptr[p.len] | (uint32_t)p.ptr[p.len + 1] << 8 |
                       (uint32_t)p.ptr[p.len + 2] << 16 | (uint32_t)p.ptr[p.len + 3] << 24;
        CHECK(off >= 1 && off + 10 <= p.len);
        for (int k = 0; k < 10; k++)
            CHECK(p.ptr[off + k] == 0xff);
        CHECK(p.ptr[off - 1] == 0x33 || p.ptr[off - 1] == 0x32);
    }
    size_t sz;
    CHECK(cfdb_tuple_packed_size(&t, &sz) == 0 && sz == p.len);
    if (canonical) {
        CHECK(cfdb_bytes_eq(p, in));
    } else {
        cfdb_tuple u;
        CHECK(cfdb_tuple_unpack_flags(&a, p, CFDB_TUPLE_UNPACK_CANONICAL, &u) == 0);
        CHECK(cfdb_tuple_compare(&t, &u) == 0);
        uint8_t *again = malloc(p.len ? p.len : 1);
        size_t n = 0;
        if (incomplete == 0) {
            CHECK(again && cfdb_tuple_pack_to(&u, again, p.len, &n) == 0);
            CHECK(n == p.len && memcmp(again, p.ptr, n) == 0);
        }
        free(again);
    }
    cfdb_arena_free(&a);
    return 0;
}
