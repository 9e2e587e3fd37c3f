/* Read conflict accumulation against local writes, get_key/get_range conflict
 * ranges, the self-conflict rule and versionstamp key ranges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "conflict_ranges.h"
#include "key_selector.h"

#define B(s) cfdb_bytes_make((s), sizeof(s) - 1)
#define FF cfdb_bytes_make("\xff", 1)

static void expect_ranges(const cfdb_read_conflicts *rc, const char *const *bounds, size_t n)
{
    assert_int_equal(cfdb_read_conflicts_count(rc), n);
    size_t i = 0;
    for (cfdb_omap_node *x = cfdb_omap_first(&rc->set.map); x; x = cfdb_omap_next(x), i++) {
        if (!cfdb_bytes_eq(x->key, cfdb_bytes_str(bounds[2 * i])))
            fail_msg("range %zu begins with '%.*s', expected '%s'", i, (int)x->key.len, x->key.ptr, bounds[2 * i]);
        if (!cfdb_bytes_eq(x->val.bytes, cfdb_bytes_str(bounds[2 * i + 1])))
            fail_msg("range %zu ends with '%.*s', expected '%s'", i, (int)x->val.bytes.len, x->val.bytes.ptr,
                     bounds[2 * i + 1]);
    }
}

static void test_reads_minus_writes(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_write_map wm;
    cfdb_write_map_init(&wm, &a);
    cfdb_read_conflicts rc;
    cfdb_read_conflicts_init(&rc, &a);

    /* no writes: the whole range; coalescing of touching/overlapping reads */
    cfdb_read_conflicts_add(&rc, &wm, B("a"), B("c"));
    cfdb_read_conflicts_add(&rc, &wm, B("c"), B("d"));
    cfdb_read_conflicts_add(&rc, &wm, B("b"), B("bb"));
    cfdb_read_conflicts_add(&rc, &wm, B("x"), B("x"));  /* empty: ignored */
    cfdb_read_conflicts_add(&rc, &wm, B("y"), B("x"));  /* inverted: ignored */
    const char *r1[] = { "a", "d" };
    expect_ranges(&rc, r1, 1);

    /* a set key and a cleared range are decided locally: not conflict ranges */
    cfdb_read_conflicts rc2;
    cfdb_read_conflicts_init(&rc2, &a);
    cfdb_write_map_set(&wm, B("m"), B("1"), true);
    cfdb_write_map_clear(&wm, B("p"), B("r"), true);
    uint8_t one = 1;
    cfdb_write_map_atomic(&wm, CFDB_MUT_ADD_VALUE, B("q"), cfdb_bytes_make(&one, 1), true, 0, FF); /* folded */
    cfdb_write_map_atomic(&wm, CFDB_MUT_ADD_VALUE, B("s"), cfdb_bytes_make(&one, 1), true, 0, FF); /* dependent */
    cfdb_read_conflicts_add(&rc2, &wm, B("k"), B("t"));
    const char *r2[] = { "k", "m", "m\0", "p", "r", "t" };
    /* "m\0" is not a C string: check by hand */
    assert_int_equal(cfdb_read_conflicts_count(&rc2), 3);
    cfdb_omap_node *x = cfdb_omap_first(&rc2.set.map);
    assert_true(cfdb_bytes_eq(x->key, B("k")) && cfdb_bytes_eq(x->val.bytes, B("m")));
    x = cfdb_omap_next(x);
    assert_true(cfdb_bytes_eq(x->key, cfdb_bytes_make("m\0", 2)) && cfdb_bytes_eq(x->val.bytes, B("p")));
    x = cfdb_omap_next(x);
    assert_true(cfdb_bytes_eq(x->key, B("r")) && cfdb_bytes_eq(x->val.bytes, B("t"))); /* s (dependent) included */
    (void)r2;

    /* single keys */
    cfdb_read_conflicts rc3;
    cfdb_read_conflicts_init(&rc3, &a);
    cfdb_read_conflicts_add_key(&rc3, &wm, B("m")); /* set locally: nothing */
    cfdb_read_conflicts_add_key(&rc3, &wm, B("pp")); /* cleared: nothing */
    cfdb_read_conflicts_add_key(&rc3, &wm, B("s")); /* dependent: added */
    cfdb_read_conflicts_add_key(&rc3, NULL, B("m")); /* no write map: added */
    assert_int_equal(cfdb_read_conflicts_count(&rc3), 2);

    cfdb_write_map_destroy(&wm);
    cfdb_arena_free(&a);
}

static void test_get_key_and_range_ranges(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_bytes b, e;
    cfdb_key_selector s = cfdb_first_greater_or_equal(B("k"));
    cfdb_get_key_conflict_range(&s, B("m"), &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("k")) && cfdb_bytes_eq(e, cfdb_bytes_make("m\0", 2)));
    s = cfdb_first_greater_than(B("k"));
    cfdb_get_key_conflict_range(&s, B("m"), &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, cfdb_bytes_make("k\0", 2)));
    s = cfdb_last_less_than(B("k"));
    cfdb_get_key_conflict_range(&s, B("c"), &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("c")) && cfdb_bytes_eq(e, B("k")));
    s = cfdb_last_less_or_equal(B("k"));
    cfdb_get_key_conflict_range(&s, B("c"), &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("c")) && cfdb_bytes_eq(e, cfdb_bytes_make("k\0", 2)));

    cfdb_key_value rows[2] = { { B("b"), B("1") }, { B("c"), B("2") } };
    cfdb_key_selector bs = cfdb_first_greater_or_equal(B("a")), es = cfdb_first_greater_or_equal(B("z"));
    /* forward, complete: [begin, end) */
    cfdb_get_range_conflict_range(&bs, &es, false, rows, 2, false, false, false, FF, &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("a")) && cfdb_bytes_eq(e, B("z")));
    /* forward, limited (more): [begin, keyAfter(last row)) */
    cfdb_get_range_conflict_range(&bs, &es, false, rows, 2, true, false, false, FF, &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("a")) && cfdb_bytes_eq(e, cfdb_bytes_make("c\0", 2)));
    /* reverse, limited: rows come high to low: [last row, end) */
    cfdb_key_value rrows[2] = { { B("c"), B("2") }, { B("b"), B("1") } };
    cfdb_get_range_conflict_range(&bs, &es, true, rrows, 2, true, false, false, FF, &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("b")) && cfdb_bytes_eq(e, B("z")));
    cfdb_get_range_conflict_range(&bs, &es, true, rrows, 2, false, false, false, FF, &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("a")) && cfdb_bytes_eq(e, B("z")));
    /* empty forward with more=false */
    cfdb_get_range_conflict_range(&bs, &es, false, NULL, 0, false, false, false, FF, &a, &b, &e);
    assert_true(cfdb_bytes_eq(b, B("a")) && cfdb_bytes_eq(e, B("z")));
    cfdb_arena_free(&a);
}

static void test_self_conflict(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_read_conflicts rc;
    cfdb_read_conflicts_init(&rc, &a);
    uint8_t rnd[16];
    for (int i = 0; i < 16; i++)
        rnd[i] = (uint8_t)(i + 1);
    cfdb_key_range w[1] = { { B("w"), B("w\0") } };
    cfdb_key_range *ro, *wo;
    size_t nr, nw;
    /* blind write: self-conflict key added to both */
    assert_int_equal(cfdb_commit_conflict_ranges(&rc, w, 1, false, rnd, &a, &ro, &nr, &wo, &nw), 0);
    assert_int_equal(nr, 1);
    assert_int_equal(nw, 2);
    assert_int_equal(ro[0].begin.len, 5 + 16);
    assert_memory_equal(ro[0].begin.ptr, "\xff/SC/", 5);
    assert_memory_equal(ro[0].begin.ptr + 5, rnd, 16);
    assert_int_equal(ro[0].end.len, 22);
    assert_true(cfdb_bytes_eq(wo[1].begin, ro[0].begin));
    /* causal_write_risky: nothing added */
    assert_int_equal(cfdb_commit_conflict_ranges(&rc, w, 1, true, rnd, &a, &ro, &nr, &wo, &nw), 0);
    assert_int_equal(nr, 0);
    assert_int_equal(nw, 1);
    /* a read that does not intersect the write: still added */
    cfdb_read_conflicts_add(&rc, NULL, B("a"), B("b"));
    assert_int_equal(cfdb_commit_conflict_ranges(&rc, w, 1, false, rnd, &a, &ro, &nr, &wo, &nw), 0);
    assert_int_equal(nr, 2);
    assert_int_equal(nw, 2);
    /* a read intersecting the write: not added */
    cfdb_read_conflicts_add(&rc, NULL, B("v"), B("x"));
    assert_int_equal(cfdb_commit_conflict_ranges(&rc, w, 1, false, rnd, &a, &ro, &nr, &wo, &nw), 0);
    assert_int_equal(nr, 2);
    assert_int_equal(nw, 1);
    assert_true(cfdb_bytes_eq(ro[0].begin, B("a")) && cfdb_bytes_eq(ro[1].begin, B("v")));
    /* read-only transaction: still gets it (the engine skips sending read-only commits) */
    assert_int_equal(cfdb_commit_conflict_ranges(&rc, NULL, 0, false, rnd, &a, &ro, &nr, &wo, &nw), 0);
    assert_int_equal(nw, 1);

    /* intersects: touching ranges do not intersect */
    cfdb_key_range x[2] = { { B("a"), B("b") }, { B("c"), B("d") } };
    cfdb_key_range y[1] = { { B("b"), B("c") } };
    cfdb_key_range z[1] = { { B("bz"), B("c\0") } };
    assert_false(cfdb_ranges_intersect(x, 2, y, 1));
    assert_true(cfdb_ranges_intersect(x, 2, z, 1));
    assert_false(cfdb_ranges_intersect(x, 0, z, 1));
    cfdb_arena_free(&a);
}

static void test_versionstamp_key_range(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    uint8_t k[2 + 10 + 1 + 4] = { 'a', 'b', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'z', 2, 0, 0, 0 };
    cfdb_bytes b, e;
    assert_int_equal(cfdb_versionstamp_key_range(cfdb_bytes_make(k, sizeof k), 0x1122334455667788LL, FF, &a, &b, &e), 0);
    uint8_t wb[13] = { 'a', 'b', 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0, 0, 'z' };
    uint8_t we[14] = { 'a', 'b', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'z', 0 };
    assert_true(cfdb_bytes_eq(b, cfdb_bytes_make(wb, 13)));
    assert_true(cfdb_bytes_eq(e, cfdb_bytes_make(we, 14)));
    /* clipped to the max key */
    uint8_t hk[10 + 4] = { 0 };
    assert_int_equal(cfdb_versionstamp_key_range(cfdb_bytes_make(hk, 14), 1, FF, &a, &b, &e), 0);
    assert_true(cfdb_bytes_eq(e, FF));
    /* bad offsets */
    uint8_t bad[3] = { 0, 0, 0 };
    assert_int_equal(cfdb_versionstamp_key_range(cfdb_bytes_make(bad, 3), 1, FF, &a, &b, &e),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    k[13] = 4; /* 4 + 10 > 13 */
    assert_int_equal(cfdb_versionstamp_key_range(cfdb_bytes_make(k, sizeof k), 1, FF, &a, &b, &e),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    k[13] = 3; /* 3 + 10 == 13: ok */
    assert_int_equal(cfdb_versionstamp_key_range(cfdb_bytes_make(k, sizeof k), 1, FF, &a, &b, &e), 0);
    k[16] = 0x80; /* negative */
    assert_int_equal(cfdb_versionstamp_key_range(cfdb_bytes_make(k, sizeof k), 1, FF, &a, &b, &e),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_minus_writes),
        cmocka_unit_test(test_get_key_and_range_ranges),
        cmocka_unit_test(test_self_conflict),
        cmocka_unit_test(test_versionstamp_key_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
