/* Skip-list map and range set against simple models. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "range_set.h"

static uint64_t rs = 7;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static void test_omap(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_omap m;
        assert_int_equal(cfdb_omap_init(&m, mode ? &a : NULL), 0);
        bool present[256] = { false };
        for (int i = 0; i < 20000; i++) {
            uint8_t k = (uint8_t)rnd(256);
            cfdb_bytes kb = cfdb_bytes_make(&k, 1);
            if (rnd(3)) {
                bool created;
                cfdb_omap_node *n = cfdb_omap_insert(&m, kb, &created);
                assert_non_null(n);
                assert_int_equal(created, !present[k]);
                present[k] = true;
            } else {
                assert_int_equal(cfdb_omap_remove(&m, kb), present[k]);
                present[k] = false;
            }
            uint8_t q = (uint8_t)rnd(256);
            cfdb_bytes qb = cfdb_bytes_make(&q, 1);
            int ge = -1, gt = -1, lt = -1, le = -1;
            for (int j = q; j < 256; j++)
                if (present[j]) {
                    ge = j;
                    break;
                }
            for (int j = q + 1; j < 256; j++)
                if (present[j]) {
                    gt = j;
                    break;
                }
            for (int j = q - 1; j >= 0; j--)
                if (present[j]) {
                    lt = j;
                    break;
                }
            for (int j = q; j >= 0; j--)
                if (present[j]) {
                    le = j;
                    break;
                }
            cfdb_omap_node *n;
            n = cfdb_omap_find_ge(&m, qb);
            assert_int_equal(n ? n->key.ptr[0] : -1, ge);
            n = cfdb_omap_find_gt(&m, qb);
            assert_int_equal(n ? n->key.ptr[0] : -1, gt);
            n = cfdb_omap_find_lt(&m, qb);
            assert_int_equal(n ? n->key.ptr[0] : -1, lt);
            n = cfdb_omap_find_le(&m, qb);
            assert_int_equal(n ? n->key.ptr[0] : -1, le);
            n = cfdb_omap_find(&m, qb);
            assert_int_equal(n != NULL, present[q]);
        }
        size_t cnt = 0;
        int prev = -1;
        for (cfdb_omap_node *n = cfdb_omap_first(&m); n; n = cfdb_omap_next(n), cnt++) {
            assert_true(n->key.ptr[0] > prev);
            prev = n->key.ptr[0];
        }
        assert_int_equal(cnt, m.count);
        cfdb_omap_node *last = cfdb_omap_last(&m);
        assert_int_equal(last ? last->key.ptr[0] : -1, prev);
        cfdb_omap_destroy(&m);
        cfdb_arena_free(&a);
    }
}

/* keys: single bytes 0..63 plus the empty key; a bitmap of covered single-byte keys,
 * and ranges with 1-byte bounds */
static void test_range_set_randomized(void **state)
{
    (void)state;
    static uint8_t bytes[65];
    for (int i = 0; i < 65; i++)
        bytes[i] = (uint8_t)i;
    for (int round = 0; round < 300; round++) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_range_set s;
        cfdb_range_set_init(&s, &a);
        bool cov[64] = { false };
        for (int op = 0; op < 60; op++) {
            unsigned b = rnd(65), e = rnd(65);
            cfdb_bytes bb = cfdb_bytes_make(&bytes[b], 1), eb = cfdb_bytes_make(&bytes[e], 1);
            if (rnd(3)) {
                assert_int_equal(cfdb_range_set_add(&s, bb, eb), 0);
                for (unsigned i = b; i < e && i < 64; i++)
                    cov[i] = true;
            } else {
                assert_int_equal(cfdb_range_set_remove(&s, bb, eb), 0);
                for (unsigned i = b; i < e && i < 64; i++)
                    cov[i] = false;
            }
            /* ranges: sorted, disjoint, not touching, exactly the model's runs */
            size_t runs = 0;
            for (int i = 0; i < 64; i++)
                if (cov[i] && (i == 0 || !cov[i - 1]))
                    runs++;
            assert_int_equal(cfdb_range_set_count(&s), runs);
            for (cfdb_omap_node *n = cfdb_omap_first(&s.map); n; n = cfdb_omap_next(n)) {
                assert_int_equal(n->key.len, 1);
                assert_int_equal(n->val.bytes.len, 1);
                int lo = n->key.ptr[0], hi = n->val.bytes.ptr[0];
                assert_true(lo < hi);
                for (int i = lo; i < hi; i++)
                    assert_true(cov[i]);
                assert_true(lo == 0 || !cov[lo - 1]);
                assert_true(hi == 64 || !cov[hi]);
            }
            for (int i = 0; i < 64; i++)
                assert_int_equal(cfdb_range_set_find(&s, cfdb_bytes_make(&bytes[i], 1)) != NULL, cov[i]);
            unsigned qb = rnd(65), qe = rnd(65);
            bool any = false;
            for (unsigned i = qb; i < qe && i < 64; i++)
                any = any || cov[i];
            assert_int_equal(cfdb_range_set_intersects(&s, cfdb_bytes_make(&bytes[qb], 1),
                                                       cfdb_bytes_make(&bytes[qe], 1)),
                             any);
        }
        cfdb_arena_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_omap),
        cmocka_unit_test(test_range_set_randomized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
