/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The floor arm (bench/floor.c) against a real cfdb-server: its reads check what they read
 * (the populated values, a range's 100 rows), its commits are durable (read back by the floor
 * and by libcfdb after the server restarted from its data directory), a cluster whose bench
 * keyspace spans two shards is refused with the reason and a campaign against it runs without
 * the floor, and a campaign with the floor reports cfdb / floor ratios (and, where allocations
 * are counted, none per transaction for the floor, and large batch writes through libcfdb
 * without malloc).
 * Exits 77 (ctest SKIP) while libcfdb.so or cfdb-server is not built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_test_util.h"
#include "json_reader.h"
#include "kvfile.h"

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

/* Starts cfdb-server in the background (extra: more options); waits for its cluster file. */
static void server_start(const char *name, const char *extra)
{
    sh("rm -f %s/%s.cluster", tmp, name);
    assert_int_equal(sh(CFDB_SERVER " --listen 127.0.0.1:0 --cluster-file %s/%s.cluster --quiet %s "
                        "> %s/%s.log 2>&1 & echo $! > %s/%s.pid",
                        tmp, name, extra, tmp, name, tmp, name),
                     0);
    char path[128];
    snprintf(path, sizeof path, "%s/%s.cluster", tmp, name);
    struct stat st;
    for (int i = 0; i < 400 && (stat(path, &st) || st.st_size == 0); i++)
        usleep(25000);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 0);
}

static void server_stop(const char *name)
{
    assert_int_equal(sh("p=$(cat %s/%s.pid); kill $p; for i in $(seq 200); do kill -0 $p 2>/dev/null || "
                        "exit 0; sleep 0.05; done; exit 1",
                        tmp, name),
                     0);
}

/* One worker run (mode floor, or run through libcfdb); returns its run file. */
static void worker(kvfile *kv, const char *mode, const char *server, const char *wl, int workers, int measured,
                   int keys, const char *out)
{
    char lib[512] = "";
    if (!strcmp(mode, "run") || !strcmp(mode, "populate"))
        snprintf(lib, sizeof lib, "--lib " CFDB_LIB);
    assert_int_equal(sh(CFDB_BENCH_BIN " _worker --mode %s %s --cluster-file %s/%s.cluster --out %s/%s "
                        "--workload %s --workers %d --warmup 10 --measured %d --keys %d --seed 7 "
                        "> %s/%s.log 2>&1",
                        mode, lib, tmp, server, tmp, out, wl, workers, measured, keys, tmp, out),
                     0);
    char path[256];
    snprintf(path, sizeof path, "%s/%s.kv", tmp, out);
    assert_int_equal(kv_load(kv, path), 0);
    assert_string_equal(kv_get(kv, "status"), "ok");
}

static double num(const kvfile *kv, const char *k)
{
    const char *v = kv_get(kv, k);
    assert_non_null(v);
    return atof(v);
}

/* Reads of the populated keyspace verify; the same reads of an empty one all fail verification. */
static void test_floor_reads_check_values(void **state)
{
    (void)state;
    server_start("r", "");
    kvfile kv;
    worker(&kv, "floor", "r", "get100", 1, 40, 500, "empty-get");
    assert_int_equal((int)num(&kv, "errors"), 0);
    assert_int_equal((int)num(&kv, "verify_failures"), 50); /* nothing is there yet */
    kv_free(&kv);
    worker(&kv, "populate", "r", "grv", 4, 1, 500, "pop");
    kv_free(&kv);
    static const char *const wls[] = {"grv", "get100", "get1000", "range100"};
    for (int i = 0; i < 4; i++)
        for (int w = 1; w <= 8; w += 7) {
            char out[64];
            snprintf(out, sizeof out, "%s-w%d", wls[i], w);
            worker(&kv, "floor", "r", wls[i], w, 200, 500, out);
            assert_int_equal((int)num(&kv, "errors"), 0);
            assert_int_equal((int)num(&kv, "verify_failures"), 0);
            assert_string_equal(kv_get(&kv, "mode"), "floor");
            /* one connection, one thread: at most one writev and one recv a round trip */
            assert_true(num(&kv, "floor_writes_window") <= (i ? 2 : 1) * 200);
            assert_true(num(&kv, "floor_reads_window") <= (i ? 2 : 1) * 200);
            kv_free(&kv);
            char lat[256];
            snprintf(lat, sizeof lat, "%s/%s.lat", tmp, out);
            assert_int_equal(count_lines(lat), 200);
        }
    server_stop("r");
}

/* The floor's commits survive a restart: read back by the floor (values compared) and by
 * libcfdb (a range read's rows counted). */
static void test_floor_commits_durable(void **state)
{
    (void)state;
    char extra[128];
    snprintf(extra, sizeof extra, "--datadir %s/data", tmp);
    server_start("d", extra);
    kvfile kv;
    /* 60 batches of 50 sets over 101 keys (seed 7) write every one of them; the range reads
     * below start at key 0 or 1, so together they check all 101 */
    worker(&kv, "floor", "d", "batchset50", 1, 50, 101, "commit");
    assert_int_equal((int)num(&kv, "errors"), 0);
    assert_int_equal((int)num(&kv, "verify_failures"), 0);
    kv_free(&kv);
    worker(&kv, "floor", "d", "set100", 4, 100, 101, "commit1");
    assert_int_equal((int)num(&kv, "errors"), 0);
    kv_free(&kv);
    server_stop("d");
    server_start("d", extra);
    worker(&kv, "floor", "d", "get100", 1, 200, 101, "readback");
    assert_int_equal((int)num(&kv, "errors"), 0);
    assert_int_equal((int)num(&kv, "verify_failures"), 0);
    kv_free(&kv);
    worker(&kv, "floor", "d", "range100", 1, 50, 101, "readback-range");
    assert_int_equal((int)num(&kv, "errors"), 0);
    assert_int_equal((int)num(&kv, "verify_failures"), 0);
    kv_free(&kv);
    worker(&kv, "run", "d", "range100", 1, 50, 101, "readback-cfdb");
    assert_int_equal((int)num(&kv, "errors"), 0);
    assert_int_equal((int)num(&kv, "verify_failures"), 0);
    kv_free(&kv);
    server_stop("d");
}

/* Two shards over the bench keyspace: the floor refuses with the reason, and a campaign on that
 * cluster (--cluster-file) runs without it and says why. */
static void test_floor_refuses_several_shards(void **state)
{
    (void)state;
    server_start("s", "--shards cfdb-bench/v100/0000000250");
    assert_int_not_equal(sh(CFDB_BENCH_BIN " _worker --mode floor-probe --cluster-file %s/s.cluster "
                            "--out %s/probe > %s/probe.log 2>&1", tmp, tmp, tmp),
                         0);
    assert_int_equal(sh("grep -q '^failure=floor: the bench keyspace .* spans 2 shards' %s/probe.kv", tmp), 0);
    kvfile kv;
    assert_int_not_equal(sh(CFDB_BENCH_BIN " _worker --mode floor --cluster-file %s/s.cluster --out %s/f "
                            "--workload get100 --measured 10 > %s/f.log 2>&1", tmp, tmp, tmp),
                         0);
    assert_int_equal(sh("grep -q '^status=failed' %s/f.kv", tmp), 0);
    assert_int_equal(sh(CFDB_BENCH_BIN " run --cfdb-lib " CFDB_LIB " --cluster-file %s/s.cluster "
                        "--workloads grv --workers 1 --counts 1=5+20 --blocks 1 --keys 500 "
                        "--no-quiet-gate --run-timeout 60 --out %s/c > %s/c.log 2>&1", tmp, tmp, tmp),
                     0);
    char path[256];
    snprintf(path, sizeof path, "%s/c/manifest.json", tmp);
    cfdb_jv *m = cfdb_jv_parse_file(path);
    assert_non_null(m);
    assert_int_equal(cfdb_jv_get(m, "arms")->count, 1);
    assert_non_null(strstr(cfdb_jv_path_string(m, "floor_note"), "spans 2 shards"));
    cfdb_jv_free(m);
    (void)kv;
    server_stop("s");
}

/* One field of the control port's status answer of server `name` (started with
 * --control-port 0; the port is in its log). */
static unsigned long long status_field(const char *name, const char *field)
{
    char cmd[512], line[4096] = "";
    snprintf(cmd, sizeof cmd,
             CFDB_SERVER " --control $(sed -n 's/.*control port \\([0-9]*\\).*/\\1/p' %s/%s.log) status",
             tmp, name);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    pclose(p);
    char key[64];
    snprintf(key, sizeof key, " %s=", field);
    const char *v = strstr(line, key);
    if (!v)
        fail_msg("no %s in '%s'", field, line);
    return strtoull(v + strlen(key), NULL, 10);
}

/* The server counts its commit and GRV batches: 8 floor slots send their requests in one
 * writev, so the server's batches hold several of them, and every request is in one batch. */
static void test_server_batch_counters(void **state)
{
    (void)state;
    server_start("b", "--control-port 0");
    assert_int_equal(status_field("b", "commit_batches"), 0);
    assert_int_equal(status_field("b", "grv_batches"), 0);
    kvfile kv;
    worker(&kv, "floor", "b", "set100", 8, 200, 500, "batches");
    assert_int_equal((int)num(&kv, "errors"), 0);
    kv_free(&kv);
    unsigned long long commits = status_field("b", "commits"), batches = status_field("b", "commit_batches");
    assert_int_equal(commits, 210);
    assert_int_equal(status_field("b", "commit_batch_txns"), 210);
    assert_true(batches >= 210 / 8 && batches < 210);
    unsigned long long cmax = status_field("b", "commit_batch_max");
    assert_true(cmax >= 2 && cmax <= 8);
    assert_int_equal(status_field("b", "grv_batch_requests"), status_field("b", "grv_requests"));
    unsigned long long gb = status_field("b", "grv_batches"), gmax = status_field("b", "grv_batch_max");
    assert_true(gb < 210 && gmax >= 2 && gmax <= 8);
    server_stop("b");
}

/* A campaign with the floor: cfdb / floor ratios, no allocation per floor transaction, and
 * (allocations counted) batches of 1,000-byte values through libcfdb without malloc. */
static void test_campaign_with_floor(void **state)
{
    (void)state;
    assert_int_equal(sh(CFDB_BENCH_BIN " run --cfdb-lib " CFDB_LIB " --server " CFDB_SERVER
                        " --workloads get100,batchset50x1000 --workers 1 --counts 1=20+100 --blocks 2 "
                        "--keys 500 --no-quiet-gate --run-timeout 60 --out %s/cf > %s/cf.log 2>&1",
                        tmp, tmp),
                     0);
    char path[256];
    snprintf(path, sizeof path, "%s/cf/report/results.json", tmp);
    cfdb_jv *r = cfdb_jv_parse_file(path);
    assert_non_null(r);
    const cfdb_jv *cmps = cfdb_jv_get(r, "comparisons");
    assert_int_equal(cmps->count, 2);
    for (size_t i = 0; i < cmps->count; i++) {
        const cfdb_jv *cm = cmps->items[i];
        assert_string_equal(cfdb_jv_path_string(cm, "status"), "ok");
        const cfdb_jv *arms = cfdb_jv_get(cm, "arms");
        assert_int_equal(arms->count, 2);
        int saw_floor = 0;
        for (size_t a = 0; a < arms->count; a++) {
            const char *name = cfdb_jv_path_string(arms->items[a], "name");
            double errors = -1, vf = -1, allocs = -1;
            assert_true(cfdb_jv_path_number(arms->items[a], "errors", &errors));
            assert_true(cfdb_jv_path_number(arms->items[a], "verify_failures", &vf));
            assert_true(errors == 0 && vf == 0);
            int counted = cfdb_jv_path_number(arms->items[a], "median.allocs_per_txn", &allocs);
            if (!strcmp(name, "floor")) {
                saw_floor = 1;
                if (counted)
                    assert_true(allocs == 0);
            } else if (counted && !strcmp(cfdb_jv_path_string(cm, "workload"), "batchset50x1000")) {
                assert_true(allocs < 0.1); /* the transaction keeps its 128 KiB arena block */
            }
        }
        assert_true(saw_floor);
        const cfdb_jv *ratios = cfdb_jv_get(cm, "ratios");
        int cfdb_floor = 0;
        for (size_t k = 0; ratios && k < ratios->count; k++)
            cfdb_floor += !strcmp(cfdb_jv_path_string(ratios->items[k], "a"), "cfdb") &&
                          !strcmp(cfdb_jv_path_string(ratios->items[k], "b"), "floor");
        assert_true(cfdb_floor > 0);
    }
    cfdb_jv_free(r);
    assert_int_equal(sh("grep -q 'cfdb / floor' %s/cf/report/summary.md", tmp), 0);
    /* --no-floor: the arm is left out, and the manifest says so */
    assert_int_equal(sh(CFDB_BENCH_BIN " run --cfdb-lib " CFDB_LIB " --server " CFDB_SERVER
                        " --workloads grv --workers 1 --counts 1=5+20 --blocks 1 --keys 500 --no-floor "
                        "--no-quiet-gate --run-timeout 60 --no-report --out %s/nf > %s/nf.log 2>&1",
                        tmp, tmp),
                     0);
    assert_int_equal(sh("grep -q '\"floor_note\": *\"off (--no-floor)\"' %s/nf/manifest.json", tmp), 0);
}

int main(void)
{
    if (!CFDB_LIB[0] || !CFDB_SERVER[0] || access(CFDB_LIB, R_OK) || access(CFDB_SERVER, X_OK)) {
        printf("SKIP: needs the cfdb client library and cfdb-server (lib '%s', server '%s')\n", CFDB_LIB,
               CFDB_SERVER);
        return 77;
    }
    snprintf(tmp, sizeof tmp, "/tmp/cfdb-bench-floor-XXXXXX");
    if (!mkdtemp(tmp))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor_reads_check_values),
        cmocka_unit_test(test_floor_commits_durable),
        cmocka_unit_test(test_floor_refuses_several_shards),
        cmocka_unit_test(test_server_batch_counters),
        cmocka_unit_test(test_campaign_with_floor),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sh("for p in %s/*.pid; do kill $(cat $p) 2>/dev/null; done; rm -rf '%s'", tmp, tmp);
    return rc;
}
