/* SPDX-License-Identifier: Apache-2.0 */
#include "gates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_reader.h"

int bench_parse_proc_stat(const char *text, bench_cpu_sample *out)
{
    memset(out, 0, sizeof *out);
    int have_agg = 0;
    const char *line = text;
    while (line && *line) {
        if (!strncmp(line, "cpu", 3)) {
            const char *p = line + 3;
            int idx = -1;
            if (*p >= '0' && *p <= '9')
                idx = (int)strtol(p, (char **)&p, 10);
            unsigned long long v[10] = {0};
            int n = 0;
            while (n < 10) {
                while (*p == ' ')
                    p++;
                if (*p < '0' || *p > '9')
                    break;
                v[n++] = strtoull(p, (char **)&p, 10);
            }
            if (n >= 4) {
                /* user nice system idle iowait irq softirq steal guest guest_nice;
                 * guest time is already included in user/nice. */
                unsigned long long total = 0;
                for (int i = 0; i < n && i < 8; i++)
                    total += v[i];
                unsigned long long idle = v[3] + (n > 4 ? v[4] : 0);
                if (idx < 0) {
                    out->agg_total = total;
                    out->agg_busy = total - idle;
                    have_agg = 1;
                } else if (idx < BENCH_MAX_CPUS) {
                    out->total[idx] = total;
                    out->busy[idx] = total - idle;
                    if (idx + 1 > out->ncpu)
                        out->ncpu = idx + 1;
                }
            }
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return have_agg && out->ncpu > 0 ? 0 : -1;
}

static double frac(unsigned long long b0, unsigned long long t0, unsigned long long b1,
                   unsigned long long t1)
{
    if (t1 <= t0)
        return 0;
    return (double)(b1 - b0) / (double)(t1 - t0);
}

void bench_quiet_eval(const bench_cpu_sample *before, const bench_cpu_sample *after,
                      const bench_quiet_limits *lim, bench_quiet_result *res)
{
    res->busiest_cpu = 0;
    res->busiest_index = -1;
    int n = before->ncpu < after->ncpu ? before->ncpu : after->ncpu;
    for (int i = 0; i < n; i++) {
        if (after->busy[i] < before->busy[i])
            continue; /* CPU hot-plugged between samples */
        double f = frac(before->busy[i], before->total[i], after->busy[i], after->total[i]);
        if (f > res->busiest_cpu || res->busiest_index < 0) {
            res->busiest_cpu = f;
            res->busiest_index = i;
        }
    }
    res->aggregate = frac(before->agg_busy, before->agg_total, after->agg_busy, after->agg_total);
    int cpu_ok = res->busiest_cpu <= lim->max_cpu;
    int agg_ok = res->aggregate < lim->max_agg;
    res->pass = cpu_ok && agg_ok;
    if (res->pass)
        snprintf(res->detail, sizeof res->detail,
                 "quiet: busiest cpu%d %.1f%% (limit %.1f%%), aggregate %.1f%% (limit %.1f%%)",
                 res->busiest_index, 100 * res->busiest_cpu, 100 * lim->max_cpu,
                 100 * res->aggregate, 100 * lim->max_agg);
    else
        snprintf(res->detail, sizeof res->detail,
                 "client CPU not quiescent: busiest cpu%d %.1f%% (limit %.1f%%), aggregate %.1f%% "
                 "(limit < %.1f%%)",
                 res->busiest_index, 100 * res->busiest_cpu, 100 * lim->max_cpu,
                 100 * res->aggregate, 100 * lim->max_agg);
}

static int sample_file(const char *path, bench_cpu_sample *s)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - 1 - len, f)) > 0) {
        len += n;
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    buf[len] = 0;
    int rc = bench_parse_proc_stat(buf, s);
    free(buf);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_quiet_gate(const bench_quiet_limits *lim, const char *stat_path, bench_quiet_result *res)
{
    static bench_cpu_sample a, b; /* large; single-threaded caller */
    const char *path = stat_path ? stat_path : "/proc/stat";
    memset(res, 0, sizeof *res);
    double deadline = now_s() + lim->wait_s;
    for (;;) {
        res->attempts++;
        if (sample_file(path, &a) < 0) {
            res->pass = 0;
            snprintf(res->detail, sizeof res->detail, "cannot read %s", path);
            return;
        }
        double w = lim->window_s > 0 ? lim->window_s : 0.5;
        struct timespec ts = {(time_t)w, (long)((w - (double)(time_t)w) * 1e9)};
        nanosleep(&ts, NULL);
        if (sample_file(path, &b) < 0) {
            res->pass = 0;
            snprintf(res->detail, sizeof res->detail, "cannot read %s", path);
            return;
        }
        bench_quiet_eval(&a, &b, lim, res);
        if (res->pass || now_s() >= deadline)
            break;
    }
    if (!res->pass) {
        size_t off = strlen(res->detail);
        snprintf(res->detail + off, sizeof res->detail - off, " after %d windows of %.2fs",
                 res->attempts, lim->window_s);
    }
}

const char *bench_health_name(bench_health_verdict v)
{
    switch (v) {
    case BENCH_HEALTH_PASS: return "pass";
    case BENCH_HEALTH_FAIL: return "fail";
    default: return "unverified";
    }
}

void bench_health_eval(const char *status_json, size_t len, const bench_health_limits *lim,
                       bench_health_result *res)
{
    memset(res, 0, sizeof *res);
    res->log_queue_bytes = -1;
    res->moving_bytes = -1;
    cfdb_jv *root = cfdb_jv_parse(status_json, len);
    if (!root) {
        res->verdict = BENCH_HEALTH_UNVERIFIED;
        snprintf(res->detail, sizeof res->detail, "status json unreadable (not one JSON value)");
        return;
    }
    double q, inflight, inqueue;
    int have_q = cfdb_jv_path_number(root, "cluster.qos.worst_queue_bytes_log_server", &q);
    int have_f = cfdb_jv_path_number(root, "cluster.data.moving_data.in_flight_bytes", &inflight);
    int have_i = cfdb_jv_path_number(root, "cluster.data.moving_data.in_queue_bytes", &inqueue);
    cfdb_jv_free(root);
    if (have_q)
        res->log_queue_bytes = q;
    if (have_f || have_i)
        res->moving_bytes = (have_f ? inflight : 0) + (have_i ? inqueue : 0);

    char parts[2][240];
    int fail_ = 0, missing = 0;
    if (!have_q) {
        missing = 1;
        snprintf(parts[0], sizeof parts[0], "log queue not reported");
    } else if (q > lim->max_log_queue_bytes) {
        fail_ = 1;
        snprintf(parts[0], sizeof parts[0], "worst log queue %.0f bytes > limit %.0f", q,
                 lim->max_log_queue_bytes);
    } else {
        snprintf(parts[0], sizeof parts[0], "worst log queue %.0f bytes (limit %.0f)", q,
                 lim->max_log_queue_bytes);
    }
    if (!have_f && !have_i) {
        missing = 1;
        snprintf(parts[1], sizeof parts[1], "data movement not reported");
    } else if (res->moving_bytes > lim->max_moving_bytes) {
        fail_ = 1;
        snprintf(parts[1], sizeof parts[1], "data moving %.0f bytes > limit %.0f",
                 res->moving_bytes, lim->max_moving_bytes);
    } else {
        snprintf(parts[1], sizeof parts[1], "data moving %.0f bytes (limit %.0f)",
                 res->moving_bytes, lim->max_moving_bytes);
    }
    res->verdict = fail_ ? BENCH_HEALTH_FAIL : missing ? BENCH_HEALTH_UNVERIFIED : BENCH_HEALTH_PASS;
    snprintf(res->detail, sizeof res->detail, "%.240s; %.240s", parts[0], parts[1]);
}
