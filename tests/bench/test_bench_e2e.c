/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench end to end for real: a tiny campaign of the cfdb client
 * (twice, as an A/A comparison) against a cfdb-server the harness starts.
 * Exits 77 (ctest SKIP) while libcfdb.so or cfdb-server is not built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_test_util.h"
#include "json_reader.h"

#ifndef CFDB_BENCH_BIN
#error CFDB_BENCH_BIN must name the cfdb-bench binary
#endif
#ifndef CFDB_LIB
#define CFDB_LIB ""
#endif
#ifndef CFDB_SERVER
#define CFDB_SERVER ""
#endif

static char tmp[64];

static void test_tiny_campaign(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/cfdb-bench-real-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    /* Quiescence limits are relaxed for CI (recorded in the manifest). */
    int rc = sh(CFDB_BENCH_BIN " run --cfdb-lib " CFDB_LIB " --arm cfdb-again=" CFDB_LIB
                " --server " CFDB_SERVER " --workloads grv,get100,range100,set100,batchset50 "
                "--workers 1,4 --counts 1=10+100,4=20+200 --keys 1000 --quiet-max-cpu 100 "
                "--quiet-max-agg 101 --quiet-window 0.01 --quiet-wait 0 --run-timeout 60 "
                "--client-cpus 0 --server-cpus 0 --out %s/c", tmp);
    assert_int_equal(rc, 0);
    char path[256];
    snprintf(path, sizeof path, "%s/c/report/results.json", tmp);
    cfdb_jv *r = cfdb_jv_parse_file(path);
    assert_non_null(r);
    const cfdb_jv *cmps = cfdb_jv_get(r, "comparisons");
    assert_non_null(cmps);
    assert_int_equal(cmps->count, 10);
    for (size_t i = 0; i < cmps->count; i++) {
        const cfdb_jv *cm = cmps->items[i];
        const char *st = cfdb_jv_path_string(cm, "status");
        double workers = 0;
        cfdb_jv_path_number(cm, "workers", &workers);
        if (strcmp(st, "ok"))
            fprintf(stderr, "%s w%g excluded: %s\n", cfdb_jv_path_string(cm, "workload"), workers,
                    cfdb_jv_path_string(cm, "reasons"));
        assert_string_equal(st, "ok");
        const cfdb_jv *arms = cfdb_jv_get(cm, "arms");
        for (size_t a = 0; a < arms->count; a++) {
            double errors, vf;
            assert_true(cfdb_jv_path_number(arms->items[a], "errors", &errors));
            assert_true(cfdb_jv_path_number(arms->items[a], "verify_failures", &vf));
            assert_true(errors == 0);
            assert_true(vf == 0);
            /* context switches per transaction are measured for every arm */
            double vcsw = -1, ivcsw = -1;
            assert_true(cfdb_jv_path_number(arms->items[a], "median.vcsw_per_txn", &vcsw));
            assert_true(cfdb_jv_path_number(arms->items[a], "median.ivcsw_per_txn", &ivcsw));
            assert_true(vcsw >= 0 && ivcsw >= 0);
        }
        assert_non_null(cfdb_jv_get(cm, "ratios"));
    }
    cfdb_jv_free(r);
    /* --client-cpus / --server-cpus: recorded in the manifest, and each worker saw one CPU */
    snprintf(path, sizeof path, "%s/c/manifest.json", tmp);
    cfdb_jv *m = cfdb_jv_parse_file(path);
    assert_non_null(m);
    assert_string_equal(cfdb_jv_path_string(m, "pinning.client_cpus"), "0");
    assert_string_equal(cfdb_jv_path_string(m, "pinning.server_cpus"), "0");
    cfdb_jv_free(m);
    assert_int_equal(sh("grep -q '^cpus_allowed=1$' %s/c/runs/grv-w1-b1-cfdb.kv", tmp), 0);
    /* a CPU list that cannot be had fails the campaign before it runs */
    assert_int_not_equal(sh(CFDB_BENCH_BIN " run --cfdb-lib " CFDB_LIB " --server " CFDB_SERVER
                            " --client-cpus 4000 --out %s/d 2>/dev/null", tmp), 0);
    sh("rm -rf '%s'", tmp);
}

int main(void)
{
    if (!CFDB_LIB[0] || !CFDB_SERVER[0] || access(CFDB_LIB, R_OK) || access(CFDB_SERVER, X_OK)) {
        printf("SKIP: needs the cfdb client library and cfdb-server (lib '%s', server '%s')\n",
               CFDB_LIB, CFDB_SERVER);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_campaign),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
