/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: the estimation step. Works from the campaign folder alone
 * (sealed manifest, run files, raw latencies, exclusions): per block the
 * ratio arm A / arm B of every metric, their geometric mean and a 95 %
 * percentile bootstrap over whole blocks. A comparison with an exclusion or
 * a missing / failed / foreign run gets no ratios at all.
 */
#ifndef CFDB_BENCH_ANALYZE_H
#define CFDB_BENCH_ANALYZE_H

#include "bootstrap.h"
#include "campaign.h"

enum {
    M_MEAN,
    M_P50,
    M_P99,
    M_CPU,
    M_ALLOCS,
    M_ALLOC_BYTES,
    M_RSS,
    M_TPUT,
    M_BUSY,
    M_VCSW,
    M_IVCSW,
    BENCH_NMETRICS
};

#define BENCH_QPOINTS 201 /* latency quantiles kept per arm for plots */

extern const char *const bench_metric_names[BENCH_NMETRICS];
extern const char *const bench_metric_labels[BENCH_NMETRICS];
/* -1: lower is better, +1: higher is better, 0: descriptive only. */
extern const int bench_metric_direction[BENCH_NMETRICS];

typedef struct bench_run_data {
    int present;
    double metric[BENCH_NMETRICS];
    int have[BENCH_NMETRICS];
    double retries, errors, verify_failures;
    char health[16];
} bench_run_data;

typedef struct bench_ratio {
    int a, b, metric;
    int valid;
    char why[160];
    double block[BENCH_MAX_BLOCKS];
    bench_ci ci;
} bench_ratio;

typedef struct bench_comparison {
    int wl, level;
    int excluded;
    char reasons[4096];
    bench_run_data *runs; /* [block][arm index] */
    double median[BENCH_MAX_ARMS][BENCH_NMETRICS];
    double retries[BENCH_MAX_ARMS], errors[BENCH_MAX_ARMS], verify_failures[BENCH_MAX_ARMS];
    int health_unverified;
    double quantiles[BENCH_MAX_ARMS][BENCH_QPOINTS]; /* pooled latency, us */
    int have_quantiles;
    bench_ratio *ratios;
    int nratios;
} bench_comparison;

typedef struct bench_analysis {
    char dir[BENCH_PATH_MAX];
    bench_campaign c;
    bench_comparison *cmp;
    int ncmp;
} bench_analysis;

/* The verdict of a ratio in words, e.g. "cfdb better", "inconclusive". */
const char *bench_ratio_verdict(const bench_analysis *an, const bench_ratio *r, char *buf, size_t len);

int bench_analyze(const char *dir, bench_analysis *an, char *err, size_t errlen);
int bench_write_results_json(const bench_analysis *an, const char *path);
void bench_analysis_free(bench_analysis *an);

/* Per-run metrics from a run file and its raw latencies (exposed for tests). */
int bench_run_metrics(const char *kv_path, const char *lat_path, bench_run_data *out,
                      double *lat_us_out_or_null, size_t *nlat, char *err, size_t errlen);

/* "cfdb-bench analyze DIR" */
int bench_analyze_main(int argc, char **argv);

#endif
