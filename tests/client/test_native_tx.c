/* Program-order commit payload with read-your-writes disabled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "native_tx.h"

#define B(s) cfdb_bytes_make((s), sizeof(s) - 1)

static void test_program_order(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_native_tx t;
    cfdb_native_tx_init(&t, &a);
    assert_int_equal(cfdb_native_tx_set(&t, B("z"), B("1"), true), 0);
    assert_int_equal(cfdb_native_tx_clear(&t, B("a"), B("c"), true), 0);
    assert_int_equal(cfdb_native_tx_clear(&t, B("c"), B("c"), true), 0); /* empty: dropped */
    assert_int_equal(cfdb_native_tx_atomic(&t, CFDB_MUT_MIN, B("m"), B("\x01"), false), 0);
    assert_int_equal(cfdb_native_tx_clear_key(&t, B("k"), true), 0);
    uint8_t vkey[2 + 10 + 4] = { 'v', 'k', [12] = 2, [13] = 0, [14] = 0, [15] = 0 };
    assert_int_equal(cfdb_native_tx_atomic(&t, CFDB_MUT_SET_VERSIONSTAMPED_KEY, cfdb_bytes_make(vkey, sizeof vkey),
                                           B("x"), true),
                     0);
    assert_int_equal(cfdb_native_tx_add_write_conflict(&t, B("q"), B("r")), 0);
    assert_int_equal(t.n_mutations, 5);
    assert_int_equal(t.mutations[0].type, CFDB_MUT_SET_VALUE);
    assert_int_equal(t.mutations[1].type, CFDB_MUT_CLEAR_RANGE);
    assert_int_equal(t.mutations[2].type, CFDB_MUT_MIN_V2);
    assert_int_equal(t.mutations[3].type, CFDB_MUT_CLEAR_RANGE);
    assert_true(cfdb_bytes_eq(t.mutations[3].param2, cfdb_bytes_make("k\0", 2)));
    assert_int_equal(t.mutations[4].type, CFDB_MUT_SET_VERSIONSTAMPED_KEY);
    /* write ranges: z, [a,c), k, [q,r) -- none for the atomic without conflict or the stamped key */
    assert_int_equal(t.writes.n, 4);
    assert_true(cfdb_bytes_eq(t.writes.items[0].begin, B("z")));
    assert_true(cfdb_bytes_eq(t.writes.items[1].end, B("c")));
    assert_true(cfdb_bytes_eq(t.writes.items[3].begin, B("q")));
    /* errors */
    assert_int_equal(cfdb_native_tx_atomic(&t, CFDB_MUT_SET_VALUE, B("k"), B("v"), true),
                     CFDB_ERR_INVALID_MUTATION_TYPE);
    assert_int_equal(cfdb_native_tx_atomic(&t, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, B("k"), B("abc"), true),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* over-long clear bounds are truncated */
    static uint8_t big[20000];
    memset(big, 'b', sizeof big);
    assert_int_equal(cfdb_native_tx_clear(&t, B("a"), cfdb_bytes_make(big, sizeof big), false), 0);
    assert_int_equal(t.mutations[5].param2.len, 10009);
    assert_int_equal(cfdb_native_tx_clear_key(&t, cfdb_bytes_make(big, sizeof big), false), 0);
    assert_int_equal(t.n_mutations, 6); /* ignored */
    cfdb_arena_free(&a);
}

/* Read conflict ranges: a get's and an added range in program order, then the getKey /
 * getRange ones in the order those reads were issued, whenever they completed; the
 * self-conflict range only when no write meets a read. */
static void test_commit_payload(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_native_tx t;
    cfdb_native_tx_init(&t, &a);
    assert_true(cfdb_native_tx_is_read_only(&t));
    uint32_t s1, s2, s3;
    assert_int_equal(cfdb_native_tx_reserve_read(&t, &s1), 0);
    assert_int_equal(cfdb_native_tx_add_read_key(&t, B("g")), 0);
    assert_int_equal(cfdb_native_tx_reserve_read(&t, &s2), 0);
    assert_int_equal(cfdb_native_tx_reserve_read(&t, &s3), 0);
    assert_int_equal(cfdb_native_tx_add_read_conflict(&t, B("r"), B("s")), 0);
    assert_int_equal(cfdb_native_tx_fill_read(&t, s2, B("m"), B("n")), 0); /* completes first */
    assert_int_equal(cfdb_native_tx_fill_read(&t, s1, B("b"), B("c")), 0);
    /* s3 never completes: left out */
    assert_int_equal(cfdb_native_tx_set(&t, B("z"), B("1"), true), 0);
    assert_int_equal(cfdb_native_tx_set(&t, B("a"), B("2"), true), 0);
    assert_int_equal(cfdb_native_tx_set(&t, B("z"), B("3"), true), 0);
    assert_false(cfdb_native_tx_is_read_only(&t));
    uint8_t rnd[16] = { 1 };
    cfdb_commit_transaction c;
    assert_int_equal(cfdb_native_tx_build_commit(&t, 77, false, rnd, &a, &c), 0);
    assert_int_equal(c.read_snapshot, 77);
    assert_int_equal(c.mutations.count, 3); /* not coalesced, not sorted */
    assert_true(cfdb_bytes_eq(c.mutations.items[0].param1, B("z")));
    assert_true(cfdb_bytes_eq(c.mutations.items[1].param1, B("a")));
    assert_true(cfdb_bytes_eq(c.mutations.items[2].param2, B("3")));
    assert_int_equal(c.read_conflict_ranges.count, 5); /* g, [r,s), [b,c), [m,n), self-conflict */
    assert_true(cfdb_bytes_eq(c.read_conflict_ranges.items[0].begin, B("g")));
    assert_true(cfdb_bytes_eq(c.read_conflict_ranges.items[1].begin, B("r")));
    assert_true(cfdb_bytes_eq(c.read_conflict_ranges.items[2].begin, B("b")));
    assert_true(cfdb_bytes_eq(c.read_conflict_ranges.items[3].begin, B("m")));
    cfdb_bytes sc = c.read_conflict_ranges.items[4].begin;
    assert_true(sc.len == 5 + 16 && memcmp(sc.ptr, "\xff/SC/", 5) == 0 && sc.ptr[5] == 1);
    assert_int_equal(c.write_conflict_ranges.count, 4); /* z, a, z, self-conflict */
    assert_true(cfdb_bytes_eq(c.write_conflict_ranges.items[3].begin, sc));
    /* a write inside a read range: no self-conflict key */
    assert_int_equal(cfdb_native_tx_set(&t, B("m"), B("4"), true), 0);
    assert_int_equal(cfdb_native_tx_build_commit(&t, 77, false, rnd, &a, &c), 0);
    assert_int_equal(c.read_conflict_ranges.count, 4);
    assert_int_equal(c.write_conflict_ranges.count, 4);
    /* causal_write_risky: none either */
    cfdb_native_tx_init(&t, &a);
    assert_int_equal(cfdb_native_tx_set(&t, B("k"), B("v"), true), 0);
    assert_int_equal(cfdb_native_tx_build_commit(&t, 1, true, rnd, &a, &c), 0);
    assert_int_equal(c.read_conflict_ranges.count, 0);
    assert_int_equal(c.write_conflict_ranges.count, 1);
    cfdb_arena_free(&a);
}

/* Many writes grow the arrays in the arena, keeping every element. */
static void test_growth(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_native_tx t;
    cfdb_native_tx_init(&t, &a);
    for (int i = 0; i < 1000; i++) {
        char k[16];
        int n = snprintf(k, sizeof k, "k%04d", i);
        assert_int_equal(cfdb_native_tx_set(&t, cfdb_bytes_make(k, (size_t)n), B("v"), true), 0);
    }
    assert_int_equal(t.n_mutations, 1000);
    assert_int_equal(t.writes.n, 1000);
    assert_true(cfdb_bytes_eq(t.mutations[0].param1, B("k0000")));
    assert_true(cfdb_bytes_eq(t.mutations[999].param1, B("k0999")));
    assert_true(cfdb_bytes_eq(t.writes.items[500].end, cfdb_bytes_make("k0500\0", 6)));
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program_order),
        cmocka_unit_test(test_commit_payload),
        cmocka_unit_test(test_growth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
