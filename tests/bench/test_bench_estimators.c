/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench estimators on known inputs: mean, percentiles, geometric mean,
 * the percentile bootstrap with its fixed seed, the PRNG and the
 * counterbalanced orders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "bootstrap.h"
#include "orders.h"
#include "rng.h"
#include "stats.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void test_mean_and_percentiles(void **state)
{
    (void)state;
    double x[] = {4, 1, 3, 2};
    NEAR(bench_mean(x, 4), 2.5, 1e-15);
    bench_sort(x, 4);
    assert_true(x[0] == 1 && x[3] == 4);
    /* Type 7: h = (n-1) p */
    NEAR(bench_percentile_sorted(x, 4, 0.5), 2.5, 1e-15);
    NEAR(bench_percentile_sorted(x, 4, 0.99), 3.97, 1e-12);
    NEAR(bench_percentile_sorted(x, 4, 0.0), 1, 0);
    NEAR(bench_percentile_sorted(x, 4, 1.0), 4, 0);
    double y[101];
    for (int i = 0; i <= 100; i++)
        y[i] = i;
    NEAR(bench_percentile_sorted(y, 101, 0.99), 99, 1e-12);
    NEAR(bench_percentile_sorted(y, 101, 0.5), 50, 1e-12);
    double z[] = {5, 1, 9};
    NEAR(bench_median(z, 3), 5, 0);
    assert_true(z[0] == 5); /* median does not sort its input */
    assert_true(isnan(bench_mean(x, 0)));
}

static void test_geomean(void **state)
{
    (void)state;
    double a[] = {2, 8};
    NEAR(bench_geomean(a, 2), 4, 1e-12);
    double b[] = {0.5, 2, 1};
    NEAR(bench_geomean(b, 3), 1, 1e-12);
    double c[] = {1.1};
    NEAR(bench_geomean(c, 1), 1.1, 1e-15);
    double bad[] = {1, 0};
    assert_true(isnan(bench_geomean(bad, 2)));
    double neg[] = {1, -2};
    assert_true(isnan(bench_geomean(neg, 2)));
}

static void test_rng_reference_stream(void **state)
{
    (void)state;
    /* splitmix64-seeded xoshiro256**, cross-checked against an independent
     * Python implementation of the published algorithms. */
    bench_rng r;
    bench_rng_seed(&r, 492817);
    assert_true(bench_rng_next(&r) == 12096965379707857491ull);
    assert_true(bench_rng_next(&r) == 10296451040558162712ull);
    assert_true(bench_rng_next(&r) == 15535728528439383402ull);
    bench_rng_seed(&r, 7);
    int hist[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint64_t v = bench_rng_below(&r, 6);
        assert_true(v < 6);
        hist[v]++;
    }
    for (int i = 0; i < 6; i++)
        assert_true(hist[i] > 9500 && hist[i] < 10500);
}

static void test_bootstrap_reference_values(void **state)
{
    (void)state;
    /* Expected values from an independent Python reimplementation (same PRNG,
     * Lemire bounded draws, type-7 percentiles), 20,000 resamples, seed 492817. */
    double win[] = {0.81, 0.79, 0.84, 0.80, 0.78, 0.83};
    bench_ci ci;
    assert_int_equal(bench_bootstrap_geomean(win, 6, BENCH_BOOTSTRAP_RESAMPLES, BENCH_BOOTSTRAP_SEED,
                                             0.95, &ci), 0);
    NEAR(ci.estimate, 0.80805765042994837, 1e-12);
    NEAR(ci.lo, 0.79159504239008383, 1e-12);
    NEAR(ci.hi, 0.82486262729346793, 1e-12);
    assert_true(ci.conclusive);

    double tie[] = {0.97, 1.04, 0.99, 1.02, 0.95, 1.05};
    assert_int_equal(bench_bootstrap_geomean(tie, 6, BENCH_BOOTSTRAP_RESAMPLES, BENCH_BOOTSTRAP_SEED,
                                             0.95, &ci), 0);
    NEAR(ci.estimate, 1.0026720079490989, 1e-12);
    NEAR(ci.lo, 0.97453915329433249, 1e-12);
    NEAR(ci.hi, 1.0314466599204952, 1e-12);
    assert_false(ci.conclusive); /* contains 1: inconclusive, not a win */
}

static void test_bootstrap_properties(void **state)
{
    (void)state;
    bench_ci ci, ci2;
    /* Constant ratios: a degenerate interval at the value. */
    double k[] = {0.8, 0.8, 0.8, 0.8, 0.8, 0.8};
    assert_int_equal(bench_bootstrap_geomean(k, 6, 20000, 492817, 0.95, &ci), 0);
    NEAR(ci.estimate, 0.8, 1e-12);
    NEAR(ci.lo, 0.8, 1e-12);
    NEAR(ci.hi, 0.8, 1e-12);
    assert_true(ci.conclusive);
    /* Two blocks {a, b}: resample geomeans are a (1/4), sqrt(ab) (1/2), b (1/4),
     * so the 2.5 % and 97.5 % points are exactly a and b. */
    double two[] = {0.5, 2.0};
    assert_int_equal(bench_bootstrap_geomean(two, 2, 20000, 492817, 0.95, &ci), 0);
    NEAR(ci.estimate, 1.0, 1e-12);
    NEAR(ci.lo, 0.5, 1e-12);
    NEAR(ci.hi, 2.0, 1e-12);
    assert_false(ci.conclusive);
    /* Bounds inside [min, max]; deterministic for a seed; seed matters. */
    double v[] = {1.2, 1.5, 1.1, 1.4, 1.3, 1.25};
    assert_int_equal(bench_bootstrap_geomean(v, 6, 20000, 492817, 0.95, &ci), 0);
    assert_true(ci.lo >= 1.1 && ci.hi <= 1.5 && ci.lo <= ci.estimate && ci.estimate <= ci.hi);
    assert_int_equal(bench_bootstrap_geomean(v, 6, 20000, 492817, 0.95, &ci2), 0);
    assert_true(ci.lo == ci2.lo && ci.hi == ci2.hi);
    assert_int_equal(bench_bootstrap_geomean(v, 6, 20000, 1, 0.95, &ci2), 0);
    assert_true(ci.lo != ci2.lo || ci.hi != ci2.hi);
    assert_true(ci.conclusive);
    /* Unusable input. */
    double z[] = {1, 0};
    assert_int_equal(bench_bootstrap_geomean(z, 2, 100, 1, 0.95, &ci), -1);
    assert_int_equal(bench_bootstrap_geomean(v, 0, 100, 1, 0.95, &ci), -1);
}

static void check_balance(int arms, int blocks)
{
    int orders[BENCH_MAX_ARMS * 240];
    assert_int_equal(bench_orders(arms, blocks, orders), 0);
    size_t f = bench_factorial(arms);
    /* Every block is a permutation. */
    for (int b = 0; b < blocks; b++) {
        int seen[BENCH_MAX_ARMS] = {0};
        for (int p = 0; p < arms; p++)
            seen[orders[b * arms + p]]++;
        for (int a = 0; a < arms; a++)
            assert_int_equal(seen[a], 1);
    }
    /* Every order appears blocks / k! times. */
    for (int b = 0; b < blocks; b++) {
        int same = 0;
        for (int c = 0; c < blocks; c++)
            same += !memcmp(&orders[b * arms], &orders[c * arms], (size_t)arms * sizeof(int));
        assert_int_equal(same, (int)((size_t)blocks / f));
    }
    /* Every arm sits in every position equally often. */
    for (int a = 0; a < arms; a++)
        for (int p = 0; p < arms; p++) {
            int n = 0;
            for (int b = 0; b < blocks; b++)
                n += orders[b * arms + p] == a;
            assert_int_equal(n, blocks / arms);
        }
}

static void test_orders(void **state)
{
    (void)state;
    assert_int_equal(bench_factorial(3), 6);
    assert_int_equal(bench_blocks_for(1, 6), 6);
    assert_int_equal(bench_blocks_for(2, 6), 6);
    assert_int_equal(bench_blocks_for(3, 6), 6);
    assert_int_equal(bench_blocks_for(4, 6), 24);
    assert_int_equal(bench_blocks_for(2, 5), 6);
    check_balance(1, 6);
    check_balance(2, 6);
    check_balance(3, 6);
    check_balance(4, 24);
    int o[12];
    assert_int_equal(bench_orders(2, 6, o), 0);
    /* AB BA AB BA AB BA: alternation also balances drift over time. */
    int want[] = {0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0};
    assert_memory_equal(o, want, sizeof want);
    int bad[40];
    assert_int_equal(bench_orders(3, 4, bad), -1); /* not a multiple of 3! */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_and_percentiles),
        cmocka_unit_test(test_geomean),
        cmocka_unit_test(test_rng_reference_stream),
        cmocka_unit_test(test_bootstrap_reference_values),
        cmocka_unit_test(test_bootstrap_properties),
        cmocka_unit_test(test_orders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
