/* Key selectors: constructors, removeOrEqual, shortcuts, and resolution against
 * storage + local writes compared with a direct computation on a model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfdb/errors.h"
#include "key_selector.h"
#include "ryw_range.h"

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

/* universe: all keys of 1-2 letters over "abcd", sorted */
#define NK 20
static char ukeys[NK][3];
static void init_universe(void)
{
    int n = 0;
    for (int i = 0; i < 4; i++) {
        ukeys[n][0] = (char)('a' + i);
        ukeys[n][1] = 0;
        n++;
        for (int j = 0; j < 4; j++) {
            ukeys[n][0] = (char)('a' + i);
            ukeys[n][1] = (char)('a' + j);
            ukeys[n][2] = 0;
            n++;
        }
    }
}
static cfdb_bytes uk(int i)
{
    return cfdb_bytes_str(ukeys[i]);
}

static uint64_t rs = 99;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static void test_resolve_randomized(void **state)
{
    (void)state;
    init_universe();
    static const uint8_t ffb = 0xff;
    cfdb_bytes maxk = cfdb_bytes_make(&ffb, 1);
    for (int round = 0; round < 2000; round++) {
        bool store[NK], view[NK];
        for (int i = 0; i < NK; i++)
            view[i] = store[i] = rnd(3) == 0;
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_write_map wm;
        cfdb_write_map_init(&wm, &a);
        int nops = (int)rnd(6);
        for (int op = 0; op < nops; op++) {
            int i = (int)rnd(NK), j = (int)rnd(NK);
            if (rnd(2)) {
                cfdb_write_map_set(&wm, uk(i), B("v"), true);
                view[i] = true;
            } else {
                if (i > j) {
                    int t = i;
                    i = j;
                    j = t;
                }
                cfdb_write_map_clear(&wm, uk(i), uk(j), true);
                for (int k = i; k < j; k++)
                    view[k] = false;
            }
        }
        cfdb_key_value rows[NK];
        for (int q = 0; q < 10; q++) {
            int ki = (int)rnd(NK);
            bool or_equal = rnd(2);
            int32_t offset = (int32_t)rnd(7) - 3;
            cfdb_key_selector sel = cfdb_sel_make(uk(ki), or_equal, offset);
            /* expected: base = index of first key >= k' (k' = key or keyAfter(key)) */
            int first_ge = ki + (or_equal ? 1 : 0); /* universe keys are exactly the candidates */
            const char *want;
            if (offset > 0) {
                int cnt = 0;
                want = "\xff";
                for (int i = first_ge; i < NK; i++)
                    if (view[i] && ++cnt == offset) {
                        want = ukeys[i];
                        break;
                    }
            } else {
                int cnt = 0;
                want = "";
                for (int i = first_ge - 1; i >= 0; i--)
                    if (view[i] && ++cnt == 1 - offset) {
                        want = ukeys[i];
                        break;
                    }
            }
            cfdb_sel_resolver r;
            assert_int_equal(cfdb_sel_resolve_start(&r, &wm, sel, maxk, &a), 0);
            int rc;
            while ((rc = cfdb_sel_resolve_advance(&r)) == CFDB_WM_RANGE_NEED_STORAGE) {
                /* feed storage rows in the requested range, in scan order, in chunks */
                size_t n = 0;
                if (!r.it.reverse) {
                    for (int i = 0; i < NK; i++)
                        if (store[i] && cfdb_bytes_cmp(uk(i), r.it.req_begin) >= 0 &&
                            cfdb_bytes_cmp(uk(i), r.it.req_end) < 0)
                            rows[n++] = (cfdb_key_value){ uk(i), B("s") };
                } else {
                    for (int i = NK - 1; i >= 0; i--)
                        if (store[i] && cfdb_bytes_cmp(uk(i), r.it.req_begin) >= 0 &&
                            cfdb_bytes_cmp(uk(i), r.it.req_end) < 0)
                            rows[n++] = (cfdb_key_value){ uk(i), B("s") };
                }
                size_t take = n ? 1 + rnd((unsigned)n) : 0;
                cfdb_sel_resolve_feed(&r, rows, take, take < n);
            }
            assert_int_equal(rc, CFDB_WM_RANGE_DONE);
            cfdb_bytes got = cfdb_sel_resolve_result(&r);
            if (!cfdb_bytes_eq(got, cfdb_bytes_str(want)))
                fail_msg("sel (%s,%d,%d): got '%.*s' want '%s'", ukeys[ki], or_equal, offset, (int)got.len, got.ptr,
                         want);
            cfdb_sel_resolve_free(&r);
        }
        cfdb_write_map_destroy(&wm);
        cfdb_arena_free(&a);
    }
}


/* expected resolution of (key index ki, or_equal, offset) on view; returns a universe
 * index, -1 for "" or NK for the max key */
static int expect_resolve(const bool *view, int ki, bool or_equal, int32_t offset)
{
    int first_ge = ki + (or_equal ? 1 : 0);
    int cnt = 0;
    if (offset > 0) {
        for (int i = first_ge; i < NK; i++)
            if (view[i] && ++cnt == offset)
                return i;
        return NK;
    }
    for (int i = first_ge - 1; i >= 0; i--)
        if (view[i] && ++cnt == 1 - offset)
            return i;
    return -1;
}

static void test_ryw_range_randomized(void **state)
{
    (void)state;
    init_universe();
    static const uint8_t ffb = 0xff;
    cfdb_bytes maxk = cfdb_bytes_make(&ffb, 1);
    for (int round = 0; round < 2000; round++) {
        bool store[NK], view[NK];
        for (int i = 0; i < NK; i++)
            view[i] = store[i] = rnd(3) == 0;
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_write_map wm;
        cfdb_write_map_init(&wm, &a);
        int nops = (int)rnd(6);
        for (int op = 0; op < nops; op++) {
            int i = (int)rnd(NK), j = (int)rnd(NK);
            if (rnd(2)) {
                cfdb_write_map_set(&wm, uk(i), B("v"), true);
                view[i] = true;
            } else {
                if (i > j) {
                    int t = i;
                    i = j;
                    j = t;
                }
                cfdb_write_map_clear(&wm, uk(i), uk(j), true);
                for (int k = i; k < j; k++)
                    view[k] = false;
            }
        }
        cfdb_key_value rows[NK];
        for (int q = 0; q < 8; q++) {
            int bi = (int)rnd(NK), ei = (int)rnd(NK);
            bool beq = rnd(2), eeq = rnd(2);
            int32_t boff = (int32_t)rnd(5) - 2, eoff = (int32_t)rnd(5) - 1;
            if (rnd(2)) {
                beq = false;
                boff = 1;
            }
            if (rnd(2)) {
                eeq = false;
                eoff = 1;
            }
            bool reverse = rnd(2);
            int32_t lim = rnd(3) ? (int32_t)(1 + rnd(5)) : -1;
            cfdb_ryw_range rr;
            assert_int_equal(cfdb_ryw_range_start(&rr, &wm, cfdb_sel_make(uk(bi), beq, boff),
                                                  cfdb_sel_make(uk(ei), eeq, eoff), cfdb_range_limits_make(lim, -1),
                                                  reverse, maxk, &a),
                             0);
            int rc;
            while ((rc = cfdb_ryw_range_advance(&rr)) == CFDB_WM_RANGE_NEED_STORAGE) {
                size_t n = 0;
                for (int s = 0; s < NK; s++) {
                    int i = rr.req_reverse ? NK - 1 - s : s;
                    if (store[i] && cfdb_bytes_cmp(uk(i), rr.req_begin) >= 0 && cfdb_bytes_cmp(uk(i), rr.req_end) < 0)
                        rows[n++] = (cfdb_key_value){ uk(i), B("s") };
                }
                size_t take = n ? 1 + rnd((unsigned)n) : 0;
                cfdb_ryw_range_feed(&rr, rows, take, take < n);
            }
            assert_int_equal(rc, CFDB_WM_RANGE_DONE);
            /* expected: keys of view in [rb, re) */
            int rb, re;
            if (!beq && boff == 1)
                rb = bi;
            else
                rb = expect_resolve(view, bi, beq, boff);
            if (!eeq && eoff == 1)
                re = ei;
            else
                re = expect_resolve(view, ei, eeq, eoff);
            if (rb < 0)
                rb = 0;
            /* RYW's trivially-empty test on the selectors after removeOrEqual */
            cfdb_arena t;
            cfdb_arena_init(&t);
            cfdb_key_selector sb = cfdb_sel_make(uk(bi), beq, boff), se = cfdb_sel_make(uk(ei), eeq, eoff);
            cfdb_sel_remove_or_equal(&sb, &t);
            cfdb_sel_remove_or_equal(&se, &t);
            bool trivial = cfdb_sel_range_trivially_empty(&sb, &se);
            cfdb_arena_free(&t);
            int keys[NK], nk = 0;
            if (!trivial)
                for (int i = 0; i < NK; i++)
                    if (view[i] && i >= rb && i < re)
                        keys[nk++] = i;
            size_t expect_n = (lim > 0 && nk > lim) ? (size_t)lim : (size_t)nk;
            if (rr.count != expect_n)
                fail_msg("round %d q %d: count %zu expected %zu", round, q, rr.count, expect_n);
            for (size_t i = 0; i < rr.count; i++) {
                int want = reverse ? keys[nk - 1 - (int)i] : keys[i];
                assert_true(cfdb_bytes_eq(rr.rows[i].key, uk(want)));
            }
            assert_int_equal(rr.more, lim > 0 && (size_t)lim == expect_n && expect_n > 0);
            cfdb_bytes cb, ce;
            assert_int_equal(cfdb_ryw_range_conflict(&rr, &cb, &ce), 0);
            /* every returned row is inside the conflict range */
            for (size_t i = 0; i < rr.count; i++)
                assert_true(cfdb_bytes_cmp(cb, rr.rows[i].key) <= 0 && cfdb_bytes_cmp(rr.rows[i].key, ce) < 0);
            cfdb_ryw_range_free(&rr);
        }
        cfdb_write_map_destroy(&wm);
        cfdb_arena_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basics),
        cmocka_unit_test(test_resolve_randomized),
        cmocka_unit_test(test_ryw_range_randomized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
