/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench end to end against an in-memory fdb_c stand-in (no server):
 * a tiny campaign, its sealed manifest, raw files, analyze/report, and every
 * gate excluding a whole comparison with its reason. Runs in seconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_test_util.h"
#include "json_reader.h"

#ifndef CFDB_BENCH_BIN
#error CFDB_BENCH_BIN must name the cfdb-bench binary
#endif
#ifndef MOCK_FDB_LIB
#error MOCK_FDB_LIB must name the mock fdb_c library
#endif

static char tmp[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/cfdb-bench-e2e-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    /* Any file will do as the cluster file: the mock ignores it. */
    char cf[128];
    snprintf(cf, sizeof cf, "%s/fdb.cluster", tmp);
    FILE *f = fopen(cf, "w");
    if (!f)
        return -1;
    fputs("mock:mock@127.0.0.1:1\n", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return sh("rm -rf '%s'", tmp) == 0 ? 0 : -1;
}

static void clear_env(void)
{
    unsetenv("MOCK_FDB_LOG_QUEUE");
    unsetenv("MOCK_FDB_MOVING");
    unsetenv("MOCK_FDB_NO_STATUS");
    unsetenv("MOCK_FDB_CONFLICT_EVERY");
    unsetenv("MOCK_FDB_FAIL_OPEN");
    setenv("MOCK_FDB_KEYS", "200", 1);
}

/* Common options: two arms of the same mock, lenient quiescence (CI boxes
 * are busy; the limits are recorded in the manifest). */
#define COMMON                                                                                    \
    CFDB_BENCH_BIN " run --no-default-arm --arm a=" MOCK_FDB_LIB " --arm b=" MOCK_FDB_LIB          \
                   " --cluster-file %s/fdb.cluster --keys 200 --quiet-max-cpu 100 "                 \
                   "--quiet-max-agg 101 --quiet-window 0.01 --quiet-wait 0 --out %s/%s"

static cfdb_jv *load_results(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s/report/results.json", tmp, name);
    cfdb_jv *v = cfdb_jv_parse_file(path);
    if (!v)
        fprintf(stderr, "cannot read %s as JSON\n", path);
    return v;
}

static void test_campaign(void **state)
{
    (void)state;
    clear_env();
    setenv("MOCK_FDB_CONFLICT_EVERY", "7", 1);
    assert_int_equal(sh(COMMON " --workloads grv,get100,range100,set100 --workers 1,2 "
                               "--counts 1=5+50,2=10+100 > %s/c1.out 2>&1",
                        tmp, tmp, "c1", tmp), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/c1/manifest.sha256", tmp);
    assert_int_equal(access(path, R_OK), 0);
    /* The sealed digest is printed. */
    char *seal = slurp(path), *out = NULL;
    snprintf(path, sizeof path, "%s/c1.out", tmp);
    out = slurp(path);
    assert_non_null(seal);
    assert_non_null(out);
    seal[64] = 0;
    assert_non_null(strstr(out, seal));
    assert_non_null(strstr(out, "[1/96]")); /* progress: 4 workloads x 2 levels x 6 blocks x 2 arms */
    free(out);

    /* Raw latencies: one line per measured transaction. */
    snprintf(path, sizeof path, "%s/c1/runs/get100-w2-b3-b.lat", tmp);
    assert_int_equal(count_lines(path), 100);

    cfdb_jv *r = load_results("c1");
    assert_non_null(r);
    assert_string_equal(cfdb_jv_path_string(r, "manifest_sha256"), seal);
    free(seal);
    const cfdb_jv *cmps = cfdb_jv_get(r, "comparisons");
    assert_non_null(cmps);
    assert_int_equal(cmps->count, 8);
    snprintf(path, sizeof path, "%s/c1/manifest.json", tmp);
    cfdb_jv *man = cfdb_jv_parse_file(path);
    assert_non_null(man);
    const cfdb_jv *mc = cfdb_jv_path(man, "malloc_counter");
    const int counted = mc && mc->type == JSON_OBJECT;
    cfdb_jv_free(man);
    for (size_t i = 0; i < cmps->count; i++) {
        const cfdb_jv *cm = cmps->items[i];
        assert_string_equal(cfdb_jv_path_string(cm, "status"), "ok");
        const cfdb_jv *ratios = cfdb_jv_get(cm, "ratios");
        assert_non_null(ratios);
        assert_int_equal(ratios->count, 11); /* one pair, eleven metrics */
        for (size_t k = 0; k < ratios->count; k++) {
            const cfdb_jv *rt = ratios->items[k];
            const cfdb_jv *br = cfdb_jv_get(rt, "block_ratios");
            if (!br) {
                /* Only allocations may be unmeasured (sanitized builds cannot
                 * preload the counter), and context switches may be zero (the mock
                 * library answers without ever blocking); everything else always is. */
                const char *m = cfdb_jv_path_string(rt, "metric");
                const char *why = cfdb_jv_path_string(rt, "unavailable");
                assert_non_null(why);
                if (!strcmp(m, "vcsw_per_txn") || !strcmp(m, "ivcsw_per_txn")) {
                    assert_non_null(strstr(why, "zero value"));
                    continue;
                }
                assert_true(!strcmp(m, "allocs_per_txn") || !strcmp(m, "alloc_bytes_per_txn"));
                assert_false(counted);
                continue;
            }
            assert_int_equal(br->count, 6);
            double g, lo, hi;
            assert_true(cfdb_jv_path_number(rt, "geomean", &g));
            assert_true(cfdb_jv_path_number(rt, "ci_low", &lo));
            assert_true(cfdb_jv_path_number(rt, "ci_high", &hi));
            assert_true(lo <= g && g <= hi);
            const char *verdict = cfdb_jv_path_string(rt, "verdict");
            const cfdb_jv *concl = cfdb_jv_get(rt, "conclusive");
            if (lo <= 1 && hi >= 1) {
                assert_string_equal(verdict, "inconclusive");
                assert_true(concl->type == JSON_BOOL && !concl->b);
            }
        }
        const char *wl = cfdb_jv_path_string(cm, "workload");
        const cfdb_jv *arms = cfdb_jv_get(cm, "arms");
        assert_int_equal(arms->count, 2);
        for (size_t a = 0; a < 2; a++) {
            double retries, vf, allocs;
            assert_true(cfdb_jv_path_number(arms->items[a], "retries", &retries));
            assert_true(cfdb_jv_path_number(arms->items[a], "verify_failures", &vf));
            assert_true(vf == 0);
            if (!strcmp(wl, "set100"))
                assert_true(retries > 0); /* the mock fails every 7th commit */
            /* transaction + future, counted by the interposer (when preloaded) */
            if (cfdb_jv_path_number(arms->items[a], "median.allocs_per_txn", &allocs))
                assert_true(allocs >= 2);
        }
    }
    cfdb_jv_free(r);

    /* analyze works from the files alone and is deterministic. */
    snprintf(path, sizeof path, "%s/c1/report/results.json", tmp);
    char *first = slurp(path);
    assert_int_equal(sh(CFDB_BENCH_BIN " analyze %s/c1 > /dev/null", tmp), 0);
    char *second = slurp(path);
    assert_non_null(first);
    assert_non_null(second);
    assert_string_equal(first, second);
    free(first);
    free(second);

    assert_int_equal(sh(CFDB_BENCH_BIN " report %s/c1 > /dev/null", tmp), 0);
    snprintf(path, sizeof path, "%s/c1/report/summary.md", tmp);
    char *md = slurp(path);
    assert_non_null(md);
    assert_non_null(strstr(md, "## 1 worker"));
    assert_non_null(strstr(md, "## 2 workers"));
    assert_non_null(strstr(md, "### Ratios a / b"));
    assert_non_null(strstr(md, "### Absolute medians"));
    assert_non_null(strstr(md, "## Exclusions\n\nNone."));
    if (sh("command -v gnuplot > /dev/null") == 0) {
        snprintf(path, sizeof path, "%s/c1/report/ratios-a-vs-b-w2.png", tmp);
        assert_int_equal(access(path, R_OK), 0);
        snprintf(path, sizeof path, "%s/c1/report/latency-range100-w1.png", tmp);
        assert_int_equal(access(path, R_OK), 0);
    } else {
        assert_non_null(strstr(md, "gnuplot was not found"));
    }
    free(md);

    /* A changed manifest breaks the seal: analyze refuses. */
    assert_int_equal(sh("sed -i 's/\"seed\": 1/\"seed\": 2/' %s/c1/manifest.json", tmp), 0);
    assert_true(sh(CFDB_BENCH_BIN " analyze %s/c1 > /dev/null 2>&1", tmp) != 0);
}

static void expect_excluded(const char *name, const char *reason_part)
{
    cfdb_jv *r = load_results(name);
    assert_non_null(r);
    const cfdb_jv *cmps = cfdb_jv_get(r, "comparisons");
    assert_non_null(cmps);
    assert_int_equal(cmps->count, 1);
    const cfdb_jv *cm = cmps->items[0];
    assert_string_equal(cfdb_jv_path_string(cm, "status"), "excluded");
    assert_null(cfdb_jv_get(cm, "ratios")); /* no partial ratios */
    const char *why = cfdb_jv_path_string(cm, "reasons");
    assert_non_null(why);
    if (!strstr(why, reason_part))
        fprintf(stderr, "reasons: %s\n", why);
    assert_non_null(strstr(why, reason_part));
    cfdb_jv_free(r);
    char path[256];
    snprintf(path, sizeof path, "%s/%s/report/summary.md", tmp, name);
    char *md = slurp(path);
    assert_non_null(md);
    assert_non_null(strstr(md, reason_part));
    free(md);
}

static void test_health_gate_log_queue(void **state)
{
    (void)state;
    clear_env();
    setenv("MOCK_FDB_LOG_QUEUE", "200000000", 1);
    assert_int_equal(sh(COMMON " --workloads grv --workers 1 --counts 1=2+20 > /dev/null 2>&1", tmp,
                        tmp, "h1"), 0);
    expect_excluded("h1", "worst log queue 200000000 bytes > limit 100000000");
    /* Stopped at the first failing arm: no silent reruns, nothing more run. */
    char path[256];
    snprintf(path, sizeof path, "%s/h1/runs/grv-w1-b2-a.kv", tmp);
    assert_int_not_equal(access(path, R_OK), 0);
}

static void test_health_gate_data_movement(void **state)
{
    (void)state;
    clear_env();
    setenv("MOCK_FDB_MOVING", "4096", 1);
    assert_int_equal(sh(COMMON " --workloads get100 --workers 1 --counts 1=2+20 > /dev/null 2>&1",
                        tmp, tmp, "h2"), 0);
    expect_excluded("h2", "data moving 4096 bytes > limit 0");
}

static void test_health_required(void **state)
{
    (void)state;
    clear_env();
    setenv("MOCK_FDB_NO_STATUS", "1", 1);
    /* Not required: reported as unverified, comparison kept. */
    assert_int_equal(sh(COMMON " --workloads grv --workers 1 --counts 1=2+20 > /dev/null 2>&1", tmp,
                        tmp, "h3"), 0);
    cfdb_jv *r = load_results("h3");
    assert_non_null(r);
    const cfdb_jv *cm = cfdb_jv_get(r, "comparisons")->items[0];
    assert_string_equal(cfdb_jv_path_string(cm, "status"), "ok");
    double unv;
    assert_true(cfdb_jv_path_number(cm, "health_unverified_runs", &unv));
    assert_true(unv == 12);
    cfdb_jv_free(r);
    /* Required: the comparison is excluded. */
    assert_int_equal(sh(COMMON " --workloads grv --workers 1 --counts 1=2+20 --require-health "
                               "> /dev/null 2>&1", tmp, tmp, "h4"), 0);
    expect_excluded("h4", "status/json not present");
}

static void test_quiet_gate(void **state)
{
    (void)state;
    clear_env();
    /* An aggregate limit of 0 % can never be met: no arm is launched. */
    assert_int_equal(sh(CFDB_BENCH_BIN " run --no-default-arm --arm a=" MOCK_FDB_LIB
                        " --arm b=" MOCK_FDB_LIB " --cluster-file %s/fdb.cluster --keys 200 "
                        "--quiet-max-agg 0 --quiet-window 0.05 --quiet-wait 0 --workloads grv "
                        "--workers 1 --counts 1=2+20 --out %s/q1 > /dev/null 2>&1", tmp, tmp), 0);
    expect_excluded("q1", "client CPU not quiescent");
    char path[256];
    snprintf(path, sizeof path, "%s/q1/runs/grv-w1-b1-a.lat", tmp);
    assert_int_not_equal(access(path, R_OK), 0);
}

static void test_run_failure(void **state)
{
    (void)state;
    clear_env();
    setenv("MOCK_FDB_FAIL_OPEN", "1", 1);
    /* Populate cannot open the database: the campaign stops before timing. */
    assert_int_not_equal(sh(COMMON " --workloads grv --workers 1 --counts 1=2+20 > /dev/null 2>&1",
                            tmp, tmp, "f1"), 0);
    /* Without populate the first run fails: the comparison is excluded. */
    assert_int_equal(sh(COMMON " --no-populate --workloads grv --workers 1 --counts 1=2+20 "
                               "> /dev/null 2>&1", tmp, tmp, "f2"), 0);
    expect_excluded("f2", "create_database");
}

static void test_missing_target_is_explained(void **state)
{
    (void)state;
    clear_env();
    assert_int_equal(sh(CFDB_BENCH_BIN " run --no-default-arm --arm a=" MOCK_FDB_LIB
                        " --server /nonexistent/cfdb-server --out %s/m1 > %s/m1.out 2>&1", tmp, tmp),
                     3);
    char path[128];
    snprintf(path, sizeof path, "%s/m1.out", tmp);
    char *out = slurp(path);
    assert_non_null(out);
    assert_non_null(strstr(out, "cfdb-server"));
    free(out);
    assert_int_equal(sh(CFDB_BENCH_BIN " run --no-default-arm --arm bad-name!=" MOCK_FDB_LIB
                        " > /dev/null 2>&1"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_campaign),
        cmocka_unit_test(test_health_gate_log_queue),
        cmocka_unit_test(test_health_gate_data_movement),
        cmocka_unit_test(test_health_required),
        cmocka_unit_test(test_quiet_gate),
        cmocka_unit_test(test_run_failure),
        cmocka_unit_test(test_missing_target_is_explained),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
