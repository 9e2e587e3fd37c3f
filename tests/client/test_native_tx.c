/* Program-order commit payload with read-your-writes disabled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cfdb/errors.h"
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
    assert_int_equal(t.n_write_ranges, 4);
    assert_true(cfdb_bytes_eq(t.write_ranges[0].begin, B("z")));
    assert_true(cfdb_bytes_eq(t.write_ranges[1].end, B("c")));
    assert_true(cfdb_bytes_eq(t.write_ranges[3].begin, B("q")));
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
    cfdb_native_tx_destroy(&t);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
