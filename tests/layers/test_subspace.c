/* SPDX-License-Identifier: Apache-2.0 */
/* Subspace (include/cfdb/subspace.h): prefix, pack, unpack, range, contains and nested
 * subspaces, with the bytes of bindings/python/fdb/subspace_impl.py's definitions
 * (Subspace(prefixTuple, rawPrefix).rawPrefix = rawPrefix + pack(prefixTuple), ...). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "cfdb/subspace.h"

#define BYTES(s) cfdb_bytes_make((s), sizeof(s) - 1)

static void assert_bytes(cfdb_bytes got, cfdb_bytes want)
{
    assert_int_equal(got.len, want.len);
    if (want.len)
        assert_memory_equal(got.ptr, want.ptr, want.len);
}

static void test_subspace(void **state)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_tuple t, one, child;
    cfdb_tuple_init(&t, &a);
    cfdb_tuple_init(&one, &a);
    cfdb_tuple_init(&child, &a);
    assert_int_equal(cfdb_tuple_add_cstr(&t, "app"), 0);
    assert_int_equal(cfdb_tuple_add_int(&one, 1), 0);
    assert_int_equal(cfdb_tuple_add_cstr(&child, "c"), 0);

    /* Subspace(("app",), rawPrefix=b"R") */
    cfdb_subspace s;
    assert_int_equal(cfdb_subspace_init(&s, &a, BYTES("R"), &t), 0);
    assert_bytes(cfdb_subspace_key(&s), BYTES("R\x02" "app\x00"));
    /* a raw prefix alone, and an empty subspace */
    cfdb_subspace raw, empty;
    assert_int_equal(cfdb_subspace_init(&raw, &a, BYTES("R"), NULL), 0);
    assert_bytes(raw.prefix, BYTES("R"));
    assert_int_equal(cfdb_subspace_init(&empty, &a, (cfdb_bytes){ 0 }, NULL), 0);
    assert_int_equal(empty.prefix.len, 0);

    /* pack / unpack */
    cfdb_bytes k;
    assert_int_equal(cfdb_subspace_pack(&s, &a, &one, &k), 0);
    assert_bytes(k, BYTES("R\x02" "app\x00\x15\x01"));
    cfdb_tuple back;
    assert_int_equal(cfdb_subspace_unpack(&s, &a, k, &back), 0);
    assert_int_equal(cfdb_tuple_compare(&back, &one), 0);
    assert_int_equal(cfdb_subspace_pack(&s, &a, NULL, &k), 0);
    assert_bytes(k, s.prefix);
    assert_int_equal(cfdb_subspace_unpack(&s, &a, s.prefix, &back), 0);
    assert_int_equal(cfdb_tuple_count(&back), 0);
    assert_int_equal(cfdb_subspace_unpack(&s, &a, BYTES("R\x02" "apq"), &back), CFDB_ERR_KEY_NOT_IN_SUBSPACE);
    assert_int_equal(cfdb_subspace_unpack(&s, &a, BYTES("R"), &back), CFDB_ERR_KEY_NOT_IN_SUBSPACE);
    assert_int_equal(cfdb_subspace_unpack(&empty, &a, BYTES("\x15\x02"), &back), 0);

    /* contains */
    assert_true(cfdb_subspace_contains(&s, BYTES("R\x02" "app\x00")));
    assert_true(cfdb_subspace_contains(&s, BYTES("R\x02" "app\x00zzz")));
    assert_false(cfdb_subspace_contains(&s, BYTES("R\x02" "app")));
    assert_false(cfdb_subspace_contains(&s, BYTES("S")));
    assert_true(cfdb_subspace_contains(&empty, BYTES("")));

    /* range: [prefix + pack(t) + 00, prefix + pack(t) + ff) */
    cfdb_bytes b, e;
    assert_int_equal(cfdb_subspace_range(&s, &a, NULL, &b, &e), 0);
    assert_bytes(b, BYTES("R\x02" "app\x00\x00"));
    assert_bytes(e, BYTES("R\x02" "app\x00\xff"));
    assert_int_equal(cfdb_subspace_range(&s, &a, &one, &b, &e), 0);
    assert_bytes(b, BYTES("R\x02" "app\x00\x15\x01\x00"));
    assert_bytes(e, BYTES("R\x02" "app\x00\x15\x01\xff"));

    /* nested: s["c"] */
    cfdb_subspace c;
    assert_int_equal(cfdb_subspace_sub(&c, &a, &s, &child), 0);
    assert_bytes(c.prefix, BYTES("R\x02" "app\x00\x02" "c\x00"));
    assert_int_equal(cfdb_subspace_pack(&c, &a, &one, &k), 0);
    assert_true(cfdb_subspace_contains(&s, k));
    assert_int_equal(cfdb_subspace_unpack(&s, &a, k, &back), 0);
    assert_int_equal(cfdb_tuple_count(&back), 2);
    assert_false(cfdb_subspace_contains(&c, s.prefix));

    /* versionstamps: the offset counts the prefix */
    cfdb_tuple v;
    cfdb_tuple_init(&v, &a);
    assert_int_equal(cfdb_tuple_add_incomplete_versionstamp(&v, 3), 0);
    assert_int_equal(cfdb_subspace_pack_with_versionstamp(&s, &a, &v, &k), 0);
    assert_int_equal(k.len, 6 + 13 + 4);
    assert_memory_equal(k.ptr + 19, "\x07\x00\x00\x00", 4);
    assert_int_equal(cfdb_subspace_pack(&s, &a, &v, &k), CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subspace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
