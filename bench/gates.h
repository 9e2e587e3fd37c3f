/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: the gates that keep contaminated runs out of a comparison.
 *
 * Quiescence (before each arm): over a short window no CPU may be busier
 * than max_cpu and the aggregate must stay under max_agg, from /proc/stat.
 * Server health (after each arm): the worst log-server queue from
 * \xff\xff/status/json must not exceed max_log_queue_bytes and no more than
 * max_moving_bytes of data may be moving (in flight + queued).
 */
#ifndef CFDB_BENCH_GATES_H
#define CFDB_BENCH_GATES_H

#include <stddef.h>

#define BENCH_MAX_CPUS 1024

typedef struct bench_cpu_sample {
    int ncpu;
    unsigned long long agg_busy, agg_total;
    unsigned long long busy[BENCH_MAX_CPUS], total[BENCH_MAX_CPUS];
} bench_cpu_sample;

typedef struct bench_quiet_limits {
    double max_cpu;   /* fraction, default 0.15 */
    double max_agg;   /* fraction, default 0.05 */
    double window_s;  /* sampling window, default 0.5 */
    double wait_s;    /* how long to wait for quiet before failing, default 30 */
} bench_quiet_limits;

typedef struct bench_quiet_result {
    int pass;
    double busiest_cpu; /* fraction */
    int busiest_index;
    double aggregate;   /* fraction */
    int attempts;
    char detail[256];
} bench_quiet_result;

/* Parse the text of /proc/stat. Returns 0 or -1. */
int bench_parse_proc_stat(const char *text, bench_cpu_sample *out);
/* Judge the interval between two samples. */
void bench_quiet_eval(const bench_cpu_sample *before, const bench_cpu_sample *after,
                      const bench_quiet_limits *lim, bench_quiet_result *res);
/* Sample /proc/stat (or stat_path) until a window passes or wait_s expires. */
void bench_quiet_gate(const bench_quiet_limits *lim, const char *stat_path, bench_quiet_result *res);

typedef enum { BENCH_HEALTH_PASS, BENCH_HEALTH_FAIL, BENCH_HEALTH_UNVERIFIED } bench_health_verdict;

typedef struct bench_health_limits {
    double max_log_queue_bytes; /* default 100e6 */
    double max_moving_bytes;    /* default 0 */
} bench_health_limits;

typedef struct bench_health_result {
    bench_health_verdict verdict;
    double log_queue_bytes; /* -1 when not reported */
    double moving_bytes;    /* -1 when not reported */
    char detail[512];
} bench_health_result;

/* Judge a \xff\xff/status/json document. */
void bench_health_eval(const char *status_json, size_t len, const bench_health_limits *lim,
                       bench_health_result *res);
const char *bench_health_name(bench_health_verdict v);

#endif
