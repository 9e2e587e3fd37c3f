/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench records --cluster-file: the Record Layer phase's quick form against a
 * cfdb-server this test starts (index space on its own shard, each storage server on its own
 * port), not one the bench starts. Checked: the run succeeds, every fetch case has a result
 * row for the `cluster' configuration, the placement names two different storage servers,
 * and with --control-port every run's getMappedRange requests were checked against the
 * server's counter; pointed at the control port of a server the bench does not use, that
 * check fails the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_helpers.h"
#include "bench_test_util.h"

#ifndef CFDB_BENCH_BIN
#error CFDB_BENCH_BIN must name the cfdb-bench binary
#endif

static api_server srv, other;
static char tmp[64];

static const char *const fetch_cases[] = {
    "fetch-1", "fetch-10", "fetch-1000", "fetch-1-rev", "fetch-10-rev", "fetch-1000-rev", "fetch-skip3of10",
    "fetch-split",
};

static void test_quick_against_cluster(void **state)
{
    (void)state;
    int rc = sh(CFDB_BENCH_BIN " records --quick --cluster-file %s --control-port %d --out %s/q 2>%s/q.err",
                srv.cluster_file, srv.control_port, tmp, tmp);
    char path[256];
    snprintf(path, sizeof path, "%s/q.err", tmp);
    char *err = slurp(path);
    if (rc != 0)
        fail_msg("cfdb-bench records exited %d:\n%s", rc, err ? err : "");
    assert_non_null(err);
    assert_non_null(strstr(err, "config cluster (index on "));
    assert_non_null(strstr(err, "mapped requests checked with the server's counter"));
    free(err);
    snprintf(path, sizeof path, "%s/q/results.tsv", tmp);
    char *res = slurp(path);
    assert_non_null(res);
    for (size_t i = 0; i < sizeof fetch_cases / sizeof *fetch_cases; i++) {
        char row[64];
        snprintf(row, sizeof row, "\ncluster\t%s\tratio\t", fetch_cases[i]);
        if (!strstr(res, row))
            fail_msg("no row for %s in\n%s", fetch_cases[i], res);
    }
    assert_null(strstr(res, "same-0")); /* only the cluster as it is */
    free(res);
    /* placement: index and records on two storage servers; 2 blocks x 8 cases x 2 arms checked */
    snprintf(path, sizeof path, "%s/q/placement.tsv", tmp);
    char *pl = slurp(path);
    assert_non_null(pl);
    char *line = strstr(pl, "\ncluster\t");
    assert_non_null(line);
    char ix[256], rec[256], placement[32];
    long long checked = -1, mismatched = -1;
    assert_int_equal(sscanf(line + 1, "cluster\t%255[^\t]\t%255[^\t]\t%31[^\t]\t%lld\t%lld", ix, rec, placement,
                            &checked, &mismatched),
                     5);
    assert_string_equal(placement, "different");
    assert_true(strcmp(ix, rec) != 0);
    assert_int_equal(checked, 32);
    assert_int_equal(mismatched, 0);
    free(pl);
    snprintf(path, sizeof path, "%s/q/summary.md", tmp);
    char *sum = slurp(path);
    assert_non_null(sum);
    assert_non_null(strstr(sum, "Against an existing cluster (--cluster-file)."));
    assert_non_null(strstr(sum, "| different | 32 runs, 0 differ |"));
    free(sum);
}

/* The check is real: another server's counter never moves, so the remote runs mismatch. */
static void test_request_check_catches_wrong_server(void **state)
{
    (void)state;
    int rc = sh(CFDB_BENCH_BIN " records --quick --cases fetch-10 --cluster-file %s --control-port %d --out %s/w "
                "2>%s/w.err",
                srv.cluster_file, other.control_port, tmp, tmp);
    assert_int_equal(rc, 1);
    char path[256];
    snprintf(path, sizeof path, "%s/w.err", tmp);
    char *err = slurp(path);
    assert_non_null(err);
    assert_non_null(strstr(err, "fetch-10 remote block 0: the server counted 0 mapped requests, the client "));
    free(err);
}

/* Without a control port the phase still runs; nothing is checked and the report says so. */
static void test_without_control_port(void **state)
{
    (void)state;
    int rc = sh(CFDB_BENCH_BIN " records --quick --cases fetch-1 --cluster-file %s --out %s/n 2>/dev/null",
                srv.cluster_file, tmp);
    assert_int_equal(rc, 0);
    char path[256];
    snprintf(path, sizeof path, "%s/n/summary.md", tmp);
    char *sum = slurp(path);
    assert_non_null(sum);
    assert_non_null(strstr(sum, "| different | no (no control port) |"));
    free(sum);
    /* a missing cluster file, and a control port without one, are refused */
    assert_int_equal(sh(CFDB_BENCH_BIN " records --cluster-file %s/none --out %s/x 2>/dev/null", tmp, tmp), 2);
    assert_int_equal(sh(CFDB_BENCH_BIN " records --control-port 1 --out %s/x 2>/dev/null", tmp), 2);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/cfdb-bench-rlc-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    /* the bench's store is the tuple prefix ("cfdb-bench-rl"); its index space P + (2) on a
     * shard of its own, on another storage server than the records */
    const char *const args[] = { "--shards", "\\x02cfdb-bench-rl\\x00\\x15\\x02", "--separate-ports", NULL };
    if (api_server_start(&srv, args) || api_server_start(&other, NULL))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    api_server_stop(&srv);
    api_server_stop(&other);
    sh("rm -rf %s", tmp);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quick_against_cluster),
        cmocka_unit_test(test_request_check_catches_wrong_server),
        cmocka_unit_test(test_without_control_port),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
