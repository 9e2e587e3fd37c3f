/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench manifest sealing: written before timing, digest stored and
 * verified; any change to the manifest or its seal is detected; the design
 * reads back exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_reader.h"
#include "manifest.h"
#include "sha256.h"

static bench_campaign camp;
static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cfdb-bench-manifest-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    memset(&camp, 0, sizeof camp);
    /* Two arms that are both this test binary: any readable file will do. */
    camp.narms = 2;
    snprintf(camp.arms[0].name, BENCH_NAME_MAX, "cfdb");
    snprintf(camp.arms[1].name, BENCH_NAME_MAX, "fdb_c-7.3.77");
    for (int i = 0; i < 2; i++) {
        snprintf(camp.arms[i].path, BENCH_PATH_MAX, "/proc/self/exe");
        if (bench_sha256_file("/proc/self/exe", camp.arms[i].sha256) < 0)
            return -1;
        camp.arms[i].size = 1234 + i;
    }
    camp.workloads[0] = WL_GRV;
    camp.workloads[1] = WL_BATCHSET50X1000;
    camp.nworkloads = 2;
    camp.levels[0] = (bench_level){1, 200, 3000};
    camp.levels[1] = (bench_level){64, 1600, 32000};
    camp.nlevels = 2;
    camp.blocks_requested = 6;
    camp.blocks = 6;
    bench_orders(2, 6, camp.orders);
    camp.keys = 100000;
    camp.seed = 4242;
    camp.control_arm = 1;
    snprintf(camp.cluster_file, sizeof camp.cluster_file, "/tmp/x.cluster");
    camp.quiet_enabled = 1;
    camp.quiet = (bench_quiet_limits){0.15, 0.05, 0.5, 30};
    camp.health_enabled = 1;
    camp.health = (bench_health_limits){100e6, 0};
    camp.bootstrap_resamples = 20000;
    camp.bootstrap_seed = 492817;
    snprintf(camp.command_line, sizeof camp.command_line, "cfdb-bench run --test");
    snprintf(camp.created_utc, sizeof camp.created_utc, "2025-01-01T00:00:00Z");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_seal_and_verify(void **state)
{
    (void)state;
    char err[512], sha[BENCH_SHA256_HEX], path[128];
    assert_int_equal(bench_manifest_write(&camp, dir, err, sizeof err), 0);
    assert_int_equal(strlen(camp.manifest_sha256), 64);
    /* The printed digest is the SHA-256 of the file's bytes. */
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    char file_sha[BENCH_SHA256_HEX];
    assert_int_equal(bench_sha256_file(path, file_sha), 0);
    assert_string_equal(file_sha, camp.manifest_sha256);
    assert_int_equal(bench_manifest_verify(dir, sha, err, sizeof err), 0);
    assert_string_equal(sha, camp.manifest_sha256);
    /* sha256sum -c compatible seal file */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cd '%s' && sha256sum -c --status manifest.sha256", dir);
    assert_int_equal(system(cmd), 0);

    /* Tamper with the manifest: one byte. */
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    fseek(f, 20, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 20, SEEK_SET);
    fputc(c == 'x' ? 'y' : 'x', f);
    fclose(f);
    assert_int_equal(bench_manifest_verify(dir, sha, err, sizeof err), -1);
    assert_non_null(strstr(err, "does not match its seal"));

    /* Rewrite properly, then lose the seal. */
    assert_int_equal(bench_manifest_write(&camp, dir, err, sizeof err), 0);
    assert_int_equal(bench_manifest_verify(dir, sha, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/manifest.sha256", dir);
    unlink(path);
    assert_int_equal(bench_manifest_verify(dir, sha, err, sizeof err), -1);
    assert_non_null(strstr(err, "not sealed"));
}

static void test_design_reads_back(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(bench_manifest_write(&camp, dir, err, sizeof err), 0);
    static bench_campaign back;
    assert_int_equal(bench_manifest_load(dir, &back, err, sizeof err), 0);
    assert_int_equal(back.narms, 2);
    assert_string_equal(back.arms[1].name, "fdb_c-7.3.77");
    assert_string_equal(back.arms[0].sha256, camp.arms[0].sha256);
    assert_int_equal(back.control_arm, 1);
    assert_int_equal(back.nworkloads, 2);
    assert_int_equal(back.workloads[1], WL_BATCHSET50X1000);
    assert_int_equal(back.nlevels, 2);
    assert_int_equal(back.levels[1].workers, 64);
    assert_int_equal((int)back.levels[1].warmup, 1600);
    assert_int_equal((int)back.levels[1].measured, 32000);
    assert_int_equal(back.blocks, 6);
    assert_memory_equal(back.orders, camp.orders, 12 * sizeof(int));
    assert_int_equal((int)back.seed, 4242);
    assert_int_equal((int)back.keys, 100000);
    assert_int_equal(back.bootstrap_resamples, 20000);
    assert_int_equal((int)back.bootstrap_seed, 492817);
    assert_true(back.quiet_enabled && back.health_enabled);
    assert_true(back.health.max_log_queue_bytes == 100e6);
    /* Machine facts are present. */
    char path[128];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    cfdb_jv *v = cfdb_jv_parse_file(path);
    assert_non_null(v);
    double cpus;
    assert_true(cfdb_jv_path_number(v, "machine.cpus_online", &cpus));
    assert_true(cpus >= 1);
    assert_non_null(cfdb_jv_path_string(v, "machine.release"));
    cfdb_jv_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seal_and_verify),
        cmocka_unit_test(test_design_reads_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
