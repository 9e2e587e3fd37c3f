/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: compare fdb_c.h client libraries on the same server.
 *
 *   cfdb-bench                 short campaign against a cfdb-server it
 *                              starts, every arm it can find, summary printed
 *   cfdb-bench run [options]   a campaign (see cfdb-bench run --help)
 *   cfdb-bench analyze DIR     estimation from the raw files -> report/results.json
 *   cfdb-bench report DIR      results.json, summary.md and plots
 */
#include <stdio.h>
#include <string.h>

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyze.h"
#include "report.h"
#include "runner.h"
#include "worker.h"

static int usage(void)
{
    fprintf(stderr,
            "usage:\n"
            "  cfdb-bench                 short campaign (cfdb-server started here, all arms found)\n"
            "  cfdb-bench run [options]   run a campaign; cfdb-bench run --help\n"
            "  cfdb-bench analyze DIR     ratios and bootstrap intervals from the raw files\n"
            "  cfdb-bench report DIR      results.json, summary.md and plots in DIR/report\n"
            "  cfdb-bench records [opts]  the Record Layer phase (cfdb-bench-records --help)\n");
    return 2;
}

/* Runs NAME found next to this binary with argv (argv[0] replaced by its path). */
static int bench_exec_sibling(const char *name, int argc, char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    snprintf(path, sizeof path, "%s/%s", self, name);
    (void)argc;
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "cfdb-bench: cannot run %s\n", path);
    return 1;
}

static int run_and_report(int argc, char **argv)
{
    char dir[4096] = {0};
    int want_report = 0;
    int rc = bench_run_main(argc, argv, dir, sizeof dir, &want_report);
    if (!dir[0] || !want_report || (rc != 0 && rc != 130))
        return rc;
    bench_analysis an;
    char err[1024];
    if (bench_analyze(dir, &an, err, sizeof err) < 0) {
        fprintf(stderr, "cfdb-bench: analyze: %s\n", err);
        bench_analysis_free(&an);
        return 1;
    }
    if (bench_report_write(&an, 1) < 0) {
        fprintf(stderr, "cfdb-bench: cannot write the report in %s/report\n", dir);
        rc = 1;
    }
    bench_analysis_free(&an);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        char *args[] = {"run", "--quick", "--all-arms", NULL};
        return run_and_report(3, args);
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "_worker"))
        return bench_worker_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return run_and_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "analyze"))
        return bench_analyze_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return bench_report_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "records")) /* the Record Layer phase: cfdb-bench-records beside this binary */
        return bench_exec_sibling("cfdb-bench-records", argc - 1, argv + 1);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage();
        return 0;
    }
    return usage();
}
