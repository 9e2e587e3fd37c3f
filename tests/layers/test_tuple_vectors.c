/* SPDX-License-Identifier: Apache-2.0 */
/* The tuple encodings FoundationDB 7.3.77's Python binding produced (fdb.tuple.pack and
 * pack_with_versionstamp), recorded in tests/vectors/layers/tuples.txt by
 * scripts/check-python-binding.sh: cfdb packs the same values to the same bytes, unpacks the
 * binding's bytes to the same values, and orders them as their bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "cfdb/tuple.h"
#include "layers_vectors.h"

static cfdb_arena A;
static lv_line *lines;
static int count;

static int setup(void **state)
{
    cfdb_arena_init(&A);
    count = lv_read(&A, CFDB_VECTORS_DIR "/layers/tuples.txt", false, &lines);
    return count > 0 ? 0 : -1;
}

static int teardown(void **state)
{
    cfdb_arena_free(&A);
    return 0;
}

/* The recording covers every type the bindings write. */
static void test_vectors_cover_every_type(void **state)
{
    const char *needles[] = { "(n", "(b", "(s", "(i", "(i-", "(f", "(d", "(T", "(F", "(u", "(v", "((", "V" };
    for (size_t k = 0; k < sizeof needles / sizeof needles[0]; k++) {
        bool seen = false;
        for (int i = 0; i < count && !seen; i++)
            seen = strstr(lines[i].spec, needles[k]) != NULL;
        if (!seen)
            fprintf(stderr, "no vector for %s\n", needles[k]);
        assert_true(seen);
    }
    /* the codes of the recorded first elements include the arbitrary-precision ones */
    bool big_pos = false, big_neg = false;
    for (int i = 0; i < count; i++) {
        if (lines[i].bytes.len > 1 && lines[i].bytes.ptr[0] == 0x1d)
            big_pos = true;
        if (lines[i].bytes.len > 1 && lines[i].bytes.ptr[0] == 0x0b)
            big_neg = true;
    }
    assert_true(big_pos && big_neg);
    assert_true(count >= 80);
}

static void test_pack_equals_python(void **state)
{
    for (int i = 0; i < count; i++) {
        cfdb_tuple t;
        int err = lv_parse_spec(&A, lines[i].spec, &t);
        if (err)
            fprintf(stderr, "line %d: bad spec %s (%d)\n", i + 1, lines[i].spec, err);
        assert_int_equal(err, 0);
        cfdb_bytes p;
        if (lines[i].versionstamp)
            err = cfdb_tuple_pack_with_versionstamp(&A, (cfdb_bytes){ 0 }, &t, &p);
        else
            err = cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &t, &p);
        assert_int_equal(err, 0);
        if (!cfdb_bytes_eq(p, lines[i].bytes)) {
            fprintf(stderr, "line %d %s\n  cfdb   %s\n", i + 1, lines[i].spec, lv_hex(p));
            fprintf(stderr, "  python %s\n", lv_hex(lines[i].bytes));
            fail();
        }
    }
}

static void test_unpack_python_bytes(void **state)
{
    for (int i = 0; i < count; i++) {
        cfdb_tuple want, got;
        assert_int_equal(lv_parse_spec(&A, lines[i].spec, &want), 0);
        cfdb_bytes b = lines[i].bytes;
        if (lines[i].versionstamp) {
            /* the body, then the 4-byte little-endian offset of the ten 0xff bytes */
            assert_true(b.len >= 4 + 11);
            b.len -= 4;
            uint32_t off = (uint32_t)b.ptr[b.len] | (uint32_t)b.ptr[b.len + 1] << 8 |
                           (uint32_t)b.ptr[b.len + 2] << 16 | (uint32_t)b.ptr[b.len + 3] << 24;
            assert_int_equal(b.ptr[off - 1], 0x33);
            for (int k = 0; k < 10; k++)
                assert_int_equal(b.ptr[off + k], 0xff);
        }
        int err = cfdb_tuple_unpack_flags(&A, b, CFDB_TUPLE_UNPACK_CANONICAL, &got);
        if (err)
            fprintf(stderr, "line %d: unpack %s -> %d\n", i + 1, lv_hex(b), err);
        assert_int_equal(err, 0);
        if (cfdb_tuple_compare(&want, &got) != 0) {
            fprintf(stderr, "line %d: %s unpacked to another value\n", i + 1, lines[i].spec);
            fail();
        }
        assert_int_equal(cfdb_tuple_count_incomplete(&got), lines[i].versionstamp ? 1 : 0);
    }
}

/* compare() orders the values as memcmp orders Python's bytes, for every pair. */
static void test_order_equals_python_bytes(void **state)
{
    cfdb_tuple *t = cfdb_arena_alloc(&A, (size_t)count * sizeof *t);
    cfdb_bytes *b = cfdb_arena_alloc(&A, (size_t)count * sizeof *b);
    assert_non_null(t);
    assert_non_null(b);
    int n = 0;
    for (int i = 0; i < count; i++) {
        if (lines[i].versionstamp)
            continue;
        assert_int_equal(lv_parse_spec(&A, lines[i].spec, &t[n]), 0);
        b[n++] = lines[i].bytes;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int c = cfdb_tuple_compare(&t[i], &t[j]);
            int m = cfdb_bytes_cmp(b[i], b[j]);
            c = c < 0 ? -1 : c > 0;
            m = m < 0 ? -1 : m > 0;
            if (c != m) {
                fprintf(stderr, "%s vs %s: compare %d, bytes %d\n", lines[i].spec, lines[j].spec, c, m);
                fail();
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_cover_every_type),
        cmocka_unit_test(test_pack_equals_python),
        cmocka_unit_test(test_unpack_python_bytes),
        cmocka_unit_test(test_order_equals_python_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
