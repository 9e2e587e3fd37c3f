/* SPDX-License-Identifier: Apache-2.0 */
#include "analyze.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json_writer.h"
#include "kvfile.h"
#include "manifest.h"
#include "stats.h"

const char *const bench_metric_names[BENCH_NMETRICS] = {
    "mean_us", "p50_us", "p99_us", "cpu_us_per_txn", "allocs_per_txn", "alloc_bytes_per_txn",
    "peak_rss_kb", "throughput_tps", "busy_cores", "vcsw_per_txn", "ivcsw_per_txn"};
const char *const bench_metric_labels[BENCH_NMETRICS] = {
    "mean latency (us)", "p50 latency (us)", "p99 latency (us)", "CPU us / txn", "allocs / txn",
    "alloc bytes / txn", "peak RSS (KiB)", "throughput (tx/s)", "busy cores",
    "voluntary ctx switches / txn", "involuntary ctx switches / txn"};
const int bench_metric_direction[BENCH_NMETRICS] = {-1, -1, -1, -1, -1, -1, -1, +1, 0, -1, -1};

static void add_reason(bench_comparison *cm, const char *fmt, ...)
{
    size_t off = strlen(cm->reasons);
    if (off && off + 2 < sizeof cm->reasons) {
        memcpy(cm->reasons + off, "; ", 3);
        off += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cm->reasons + off, sizeof cm->reasons - off, fmt, ap);
    va_end(ap);
    cm->excluded = 1;
}

static double *read_latencies(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    *n = 0;
    if (!f)
        return NULL;
    size_t cap = 4096;
    double *v = malloc(cap * sizeof *v);
    unsigned long long x;
    while (v && fscanf(f, "%llu", &x) == 1) {
        if (*n == cap) {
            double *nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        v[(*n)++] = (double)x / 1000.0; /* ns -> us */
    }
    fclose(f);
    return v;
}

int bench_run_metrics(const char *kv_path, const char *lat_path, bench_run_data *out,
                      double *lat_keep, size_t *nlat, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    kvfile kv;
    if (kv_load(&kv, kv_path) < 0) {
        snprintf(err, errlen, "missing");
        return -1;
    }
    int rc = -1;
    const char *st = kv_get(&kv, "status");
    if (!st || strcmp(st, "ok")) {
        const char *why = kv_get(&kv, "failure");
        snprintf(err, errlen, "status %s%s%s", st ? st : "?", why ? ": " : "", why ? why : "");
        goto out;
    }
    double measured = kv_num(&kv, "measured", 0);
    size_t n = 0;
    double *lat = read_latencies(lat_path, &n);
    if (!lat || n == 0 || (double)n != measured) {
        snprintf(err, errlen, "raw latencies: %zu of %.0f", n, measured);
        free(lat);
        goto out;
    }
    out->metric[M_MEAN] = bench_mean(lat, n);
    bench_sort(lat, n);
    out->metric[M_P50] = bench_percentile_sorted(lat, n, 0.50);
    out->metric[M_P99] = bench_percentile_sorted(lat, n, 0.99);
    out->have[M_MEAN] = out->have[M_P50] = out->have[M_P99] = 1;
    if (lat_keep) {
        memcpy(lat_keep, lat, n * sizeof *lat);
    }
    if (nlat)
        *nlat = n;
    free(lat);
    double cpu = kv_num(&kv, "lifecycle_cpu_us", NAN);
    if (isfinite(cpu)) {
        out->metric[M_CPU] = cpu / measured;
        out->have[M_CPU] = 1;
    }
    if (kv_num(&kv, "malloc_counted", 0) == 1) {
        double a = kv_num(&kv, "allocs_window", NAN), b = kv_num(&kv, "alloc_bytes_window", NAN);
        if (isfinite(a) && isfinite(b)) {
            out->metric[M_ALLOCS] = a / measured;
            out->metric[M_ALLOC_BYTES] = b / measured;
            out->have[M_ALLOCS] = out->have[M_ALLOC_BYTES] = 1;
        }
    }
    double rss = kv_num(&kv, "peak_rss_kb", NAN);
    if (isfinite(rss)) {
        out->metric[M_RSS] = rss;
        out->have[M_RSS] = 1;
    }
    double wall = kv_num(&kv, "window_wall_ns", 0) / 1e9;
    double wcpu = kv_num(&kv, "window_cpu_us", NAN) / 1e6;
    if (wall > 0) {
        out->metric[M_TPUT] = measured / wall;
        out->have[M_TPUT] = 1;
        if (isfinite(wcpu)) {
            out->metric[M_BUSY] = wcpu / wall;
            out->have[M_BUSY] = 1;
        }
    }
    /* context switches of the whole worker process during the measured window (getrusage:
     * ru_nvcsw = a thread gave up the CPU to wait, ru_nivcsw = it was preempted) */
    double vcsw = kv_num(&kv, "window_vcsw", NAN), ivcsw = kv_num(&kv, "window_ivcsw", NAN);
    if (isfinite(vcsw) && isfinite(ivcsw)) {
        out->metric[M_VCSW] = vcsw / measured;
        out->metric[M_IVCSW] = ivcsw / measured;
        out->have[M_VCSW] = out->have[M_IVCSW] = 1;
    }
    out->retries = kv_num(&kv, "retries", 0);
    out->errors = kv_num(&kv, "errors", 0);
    out->verify_failures = kv_num(&kv, "verify_failures", 0);
    const char *h = kv_get(&kv, "health_verdict");
    snprintf(out->health, sizeof out->health, "%s", h ? h : "?");
    out->present = 1;
    rc = 0;
out:
    kv_free(&kv);
    return rc;
}

static void load_exclusions(bench_analysis *an)
{
    char path[BENCH_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/exclusions.tsv", an->dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *t1 = strchr(line, '\t');
        if (!t1)
            continue;
        *t1++ = 0;
        char *t2 = strchr(t1, '\t');
        if (!t2)
            continue;
        *t2++ = 0;
        int wl = bench_workload_parse(line), workers = atoi(t1);
        for (int i = 0; i < an->ncmp; i++) {
            bench_comparison *cm = &an->cmp[i];
            if (cm->wl == wl && an->c.levels[cm->level].workers == workers)
                add_reason(cm, "%s", t2);
        }
    }
    fclose(f);
}

static int cmp_run_index(const bench_campaign *c, int b, int arm)
{
    return b * c->narms + arm;
}

static void analyze_comparison(bench_analysis *an, bench_comparison *cm)
{
    const bench_campaign *c = &an->c;
    const bench_level *lv = &c->levels[cm->level];
    const char *wname = bench_workload_name(cm->wl);
    cm->runs = calloc((size_t)c->blocks * (size_t)c->narms, sizeof *cm->runs);
    size_t cap = (size_t)lv->measured;
    double *pool[BENCH_MAX_ARMS] = {0};
    size_t npool[BENCH_MAX_ARMS] = {0};
    int pooled_ok = !cm->excluded && cap > 0 && cap < (1u << 26) / (unsigned)c->blocks;
    for (int a = 0; pooled_ok && a < c->narms; a++)
        if (!(pool[a] = malloc(cap * (size_t)c->blocks * sizeof(double))))
            pooled_ok = 0;
    for (int b = 0; b < c->blocks && cm->runs; b++) {
        for (int p = 0; p < c->narms; p++) {
            int a = c->orders[b * c->narms + p];
            char base[BENCH_PATH_MAX + 300], kvp[BENCH_PATH_MAX + 310], latp[BENCH_PATH_MAX + 310];
            snprintf(base, sizeof base, "%s/runs/%s-w%d-b%d-%s", an->dir, wname, lv->workers, b + 1,
                     c->arms[a].name);
            snprintf(kvp, sizeof kvp, "%s.kv", base);
            snprintf(latp, sizeof latp, "%s.lat", base);
            if (cm->excluded)
                continue; /* keep reasons from the gates; read nothing else */
            char err[512];
            bench_run_data *rd = &cm->runs[cmp_run_index(c, b, a)];
            size_t n = 0;
            if (bench_run_metrics(kvp, latp, rd, pooled_ok ? pool[a] + npool[a] : NULL, &n, err,
                                  sizeof err) < 0) {
                add_reason(cm, "run %s-w%d-b%d-%s: %s", wname, lv->workers, b + 1, c->arms[a].name, err);
                continue;
            }
            npool[a] += n;
            kvfile kv;
            if (kv_load(&kv, kvp) == 0) {
                const char *ms = kv_get(&kv, "manifest_sha256");
                const char *arm = kv_get(&kv, "arm");
                const char *wlk = kv_get(&kv, "workload");
                if (!ms || strcmp(ms, c->manifest_sha256))
                    add_reason(cm, "run %s-w%d-b%d-%s refers to another manifest", wname, lv->workers,
                               b + 1, c->arms[a].name);
                if (!arm || strcmp(arm, c->arms[a].name) || !wlk || strcmp(wlk, wname) ||
                    kv_num(&kv, "workers", -1) != lv->workers)
                    add_reason(cm, "run %s-w%d-b%d-%s does not match the design", wname, lv->workers,
                               b + 1, c->arms[a].name);
                kv_free(&kv);
            }
            if (!strcmp(rd->health, "unverified"))
                cm->health_unverified++;
            cm->retries[a] += rd->retries;
            cm->errors[a] += rd->errors;
            cm->verify_failures[a] += rd->verify_failures;
        }
    }
    if (!cm->runs)
        add_reason(cm, "out of memory");
    if (cm->excluded) {
        for (int a = 0; a < c->narms; a++)
            free(pool[a]);
        return;
    }
    /* Absolute medians across blocks. */
    double vals[BENCH_MAX_BLOCKS];
    for (int a = 0; a < c->narms; a++)
        for (int m = 0; m < BENCH_NMETRICS; m++) {
            int n = 0;
            for (int b = 0; b < c->blocks; b++) {
                const bench_run_data *rd = &cm->runs[cmp_run_index(c, b, a)];
                if (rd->have[m])
                    vals[n++] = rd->metric[m];
            }
            cm->median[a][m] = n == c->blocks ? bench_median(vals, (size_t)n) : NAN;
        }
    /* Pooled latency quantiles (all blocks) for the distribution plots. */
    if (pooled_ok) {
        for (int a = 0; a < c->narms; a++) {
            bench_sort(pool[a], npool[a]);
            for (int q = 0; q < BENCH_QPOINTS; q++)
                cm->quantiles[a][q] =
                    bench_percentile_sorted(pool[a], npool[a], (double)q / (BENCH_QPOINTS - 1));
        }
        cm->have_quantiles = 1;
    }
    for (int a = 0; a < c->narms; a++)
        free(pool[a]);
    /* Ratios for every pair of arms, every metric. */
    int npairs = c->narms * (c->narms - 1) / 2;
    cm->ratios = calloc((size_t)(npairs * BENCH_NMETRICS) + 1, sizeof *cm->ratios);
    if (!cm->ratios)
        return;
    for (int i = 0; i < c->narms; i++)
        for (int j = i + 1; j < c->narms; j++)
            for (int m = 0; m < BENCH_NMETRICS; m++) {
                bench_ratio *r = &cm->ratios[cm->nratios++];
                r->a = i;
                r->b = j;
                r->metric = m;
                r->valid = 1;
                for (int b = 0; b < c->blocks; b++) {
                    const bench_run_data *ra = &cm->runs[cmp_run_index(c, b, i)];
                    const bench_run_data *rb = &cm->runs[cmp_run_index(c, b, j)];
                    if (!ra->have[m] || !rb->have[m]) {
                        r->valid = 0;
                        snprintf(r->why, sizeof r->why, "not measured");
                        break;
                    }
                    if (!(ra->metric[m] > 0) || !(rb->metric[m] > 0)) {
                        r->valid = 0;
                        snprintf(r->why, sizeof r->why, "zero value in block %d (%g / %g)", b + 1,
                                 ra->metric[m], rb->metric[m]);
                        break;
                    }
                    r->block[b] = ra->metric[m] / rb->metric[m];
                }
                if (r->valid && bench_bootstrap_geomean(r->block, (size_t)c->blocks,
                                                        c->bootstrap_resamples, c->bootstrap_seed,
                                                        BENCH_BOOTSTRAP_CONFIDENCE, &r->ci) < 0) {
                    r->valid = 0;
                    snprintf(r->why, sizeof r->why, "bootstrap failed");
                }
            }
}

int bench_analyze(const char *dir, bench_analysis *an, char *err, size_t errlen)
{
    memset(an, 0, sizeof *an);
    snprintf(an->dir, sizeof an->dir, "%s", dir);
    char sha[BENCH_SHA256_HEX];
    if (bench_manifest_verify(dir, sha, err, errlen) < 0)
        return -1;
    if (bench_manifest_load(dir, &an->c, err, errlen) < 0)
        return -1;
    memcpy(an->c.manifest_sha256, sha, sizeof sha);
    an->ncmp = an->c.nworkloads * an->c.nlevels;
    an->cmp = calloc((size_t)an->ncmp + 1, sizeof *an->cmp);
    if (!an->cmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int w = 0; w < an->c.nworkloads; w++)
        for (int l = 0; l < an->c.nlevels; l++) {
            bench_comparison *cm = &an->cmp[w * an->c.nlevels + l];
            cm->wl = an->c.workloads[w];
            cm->level = l;
        }
    load_exclusions(an);
    for (int i = 0; i < an->ncmp; i++)
        analyze_comparison(an, &an->cmp[i]);
    return 0;
}

void bench_analysis_free(bench_analysis *an)
{
    for (int i = 0; i < an->ncmp; i++) {
        free(an->cmp[i].runs);
        free(an->cmp[i].ratios);
    }
    free(an->cmp);
    an->cmp = NULL;
    an->ncmp = 0;
}

const char *bench_ratio_verdict(const bench_analysis *an, const bench_ratio *r, char *buf, size_t len)
{
    if (!r->valid) {
        snprintf(buf, len, "n/a (%s)", r->why);
        return buf;
    }
    if (!r->ci.conclusive) {
        snprintf(buf, len, "inconclusive");
        return buf;
    }
    const char *a = an->c.arms[r->a].name, *b = an->c.arms[r->b].name;
    int dir = bench_metric_direction[r->metric];
    int a_lower = r->ci.hi < 1.0;
    if (dir == 0)
        snprintf(buf, len, "%s %s", a, a_lower ? "lower" : "higher");
    else if ((dir < 0) == a_lower)
        snprintf(buf, len, "%s better", a);
    else
        snprintf(buf, len, "%s better", b);
    return buf;
}

int bench_write_results_json(const bench_analysis *an, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const bench_campaign *c = &an->c;
    cfdb_json j;
    cfdb_json_init_pretty(&j);
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "format"); cfdb_json_string(&j, "cfdb-bench-results/1");
    cfdb_json_key(&j, "manifest_sha256"); cfdb_json_string(&j, c->manifest_sha256);
    cfdb_json_key(&j, "bootstrap");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "resamples"); cfdb_json_int(&j, c->bootstrap_resamples);
    cfdb_json_key(&j, "seed"); cfdb_json_int(&j, (int64_t)c->bootstrap_seed);
    cfdb_json_key(&j, "confidence"); cfdb_json_real(&j, BENCH_BOOTSTRAP_CONFIDENCE, BENCH_JSON_REAL_DIGITS);
    cfdb_json_key(&j, "method"); cfdb_json_string(&j, "percentile bootstrap of the geometric mean of block ratios, resampling whole blocks");
    cfdb_json_end_object(&j);
    cfdb_json_key(&j, "arms");
    cfdb_json_begin_array(&j);
    for (int a = 0; a < c->narms; a++) {
        cfdb_json_begin_object(&j);
        cfdb_json_key(&j, "name"); cfdb_json_string(&j, c->arms[a].name);
        cfdb_json_key(&j, "path"); cfdb_json_string(&j, c->arms[a].path);
        cfdb_json_key(&j, "sha256"); cfdb_json_string(&j, c->arms[a].sha256);
        cfdb_json_end_object(&j);
    }
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "metrics");
    cfdb_json_begin_array(&j);
    for (int m = 0; m < BENCH_NMETRICS; m++) {
        cfdb_json_begin_object(&j);
        cfdb_json_key(&j, "name"); cfdb_json_string(&j, bench_metric_names[m]);
        cfdb_json_key(&j, "label"); cfdb_json_string(&j, bench_metric_labels[m]);
        cfdb_json_key(&j, "better"); cfdb_json_string(&j, bench_metric_direction[m] < 0 ? "lower" : bench_metric_direction[m] > 0 ? "higher" : "neither");
        cfdb_json_end_object(&j);
    }
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "comparisons");
    cfdb_json_begin_array(&j);
    for (int i = 0; i < an->ncmp; i++) {
        const bench_comparison *cm = &an->cmp[i];
        const bench_level *lv = &c->levels[cm->level];
        cfdb_json_begin_object(&j);
        cfdb_json_key(&j, "workload"); cfdb_json_string(&j, bench_workload_name(cm->wl));
        cfdb_json_key(&j, "workers"); cfdb_json_int(&j, lv->workers);
        cfdb_json_key(&j, "warmup"); cfdb_json_int(&j, (int64_t)lv->warmup);
        cfdb_json_key(&j, "measured"); cfdb_json_int(&j, (int64_t)lv->measured);
        cfdb_json_key(&j, "status"); cfdb_json_string(&j, cm->excluded ? "excluded" : "ok");
        if (cm->excluded) {
            cfdb_json_key(&j, "reasons"); cfdb_json_string(&j, cm->reasons);
            cfdb_json_end_object(&j);
            continue;
        }
        cfdb_json_key(&j, "health_unverified_runs"); cfdb_json_int(&j, cm->health_unverified);
        cfdb_json_key(&j, "arms");
        cfdb_json_begin_array(&j);
        for (int a = 0; a < c->narms; a++) {
            cfdb_json_begin_object(&j);
            cfdb_json_key(&j, "name"); cfdb_json_string(&j, c->arms[a].name);
            cfdb_json_key(&j, "retries"); cfdb_json_real(&j, cm->retries[a], BENCH_JSON_REAL_DIGITS);
            cfdb_json_key(&j, "errors"); cfdb_json_real(&j, cm->errors[a], BENCH_JSON_REAL_DIGITS);
            cfdb_json_key(&j, "verify_failures"); cfdb_json_real(&j, cm->verify_failures[a], BENCH_JSON_REAL_DIGITS);
            cfdb_json_key(&j, "median");
            cfdb_json_begin_object(&j);
            for (int m = 0; m < BENCH_NMETRICS; m++) {
                cfdb_json_key(&j, bench_metric_names[m]);
                cfdb_json_real(&j, cm->median[a][m], BENCH_JSON_REAL_DIGITS);
            }
            cfdb_json_end_object(&j);
            cfdb_json_key(&j, "blocks");
            cfdb_json_begin_array(&j);
            for (int b = 0; b < c->blocks; b++) {
                const bench_run_data *rd = &cm->runs[b * c->narms + a];
                cfdb_json_begin_object(&j);
                cfdb_json_key(&j, "block"); cfdb_json_int(&j, b + 1);
                for (int p = 0; p < c->narms; p++)
                    if (c->orders[b * c->narms + p] == a) {
                        cfdb_json_key(&j, "position");
                        cfdb_json_int(&j, p + 1);
                    }
                for (int m = 0; m < BENCH_NMETRICS; m++) {
                    cfdb_json_key(&j, bench_metric_names[m]);
                    if (rd->have[m]) cfdb_json_real(&j, rd->metric[m], BENCH_JSON_REAL_DIGITS); else cfdb_json_null(&j);
                }
                cfdb_json_key(&j, "retries"); cfdb_json_real(&j, rd->retries, BENCH_JSON_REAL_DIGITS);
                cfdb_json_key(&j, "errors"); cfdb_json_real(&j, rd->errors, BENCH_JSON_REAL_DIGITS);
                cfdb_json_key(&j, "health"); cfdb_json_string(&j, rd->health);
                cfdb_json_end_object(&j);
            }
            cfdb_json_end_array(&j);
            cfdb_json_end_object(&j);
        }
        cfdb_json_end_array(&j);
        cfdb_json_key(&j, "ratios");
        cfdb_json_begin_array(&j);
        for (int k = 0; k < cm->nratios; k++) {
            const bench_ratio *r = &cm->ratios[k];
            char v[200];
            cfdb_json_begin_object(&j);
            cfdb_json_key(&j, "a"); cfdb_json_string(&j, c->arms[r->a].name);
            cfdb_json_key(&j, "b"); cfdb_json_string(&j, c->arms[r->b].name);
            cfdb_json_key(&j, "metric"); cfdb_json_string(&j, bench_metric_names[r->metric]);
            if (r->valid) {
                cfdb_json_key(&j, "geomean"); cfdb_json_real(&j, r->ci.estimate, BENCH_JSON_REAL_DIGITS);
                cfdb_json_key(&j, "ci_low"); cfdb_json_real(&j, r->ci.lo, BENCH_JSON_REAL_DIGITS);
                cfdb_json_key(&j, "ci_high"); cfdb_json_real(&j, r->ci.hi, BENCH_JSON_REAL_DIGITS);
                cfdb_json_key(&j, "conclusive"); cfdb_json_bool(&j, r->ci.conclusive);
                cfdb_json_key(&j, "block_ratios");
                cfdb_json_begin_array(&j);
                for (int b = 0; b < c->blocks; b++)
                    cfdb_json_real(&j, r->block[b], BENCH_JSON_REAL_DIGITS);
                cfdb_json_end_array(&j);
            } else {
                cfdb_json_key(&j, "unavailable"); cfdb_json_string(&j, r->why);
            }
            cfdb_json_key(&j, "verdict"); cfdb_json_string(&j, bench_ratio_verdict(an, r, v, sizeof v));
            cfdb_json_end_object(&j);
        }
        cfdb_json_end_array(&j);
        cfdb_json_end_object(&j);
    }
    cfdb_json_end_array(&j);
    cfdb_json_end_object(&j);
    bool written = !j.failed && fwrite(j.buf, 1, j.len, f) == j.len;
    cfdb_json_free(&j);
    return fclose(f) == 0 && written ? 0 : -1;
}

int bench_analyze_main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cfdb-bench analyze DIR\n");
        return 2;
    }
    bench_analysis an;
    char err[1024];
    if (bench_analyze(argv[1], &an, err, sizeof err) < 0) {
        fprintf(stderr, "cfdb-bench analyze: %s\n", err);
        bench_analysis_free(&an);
        return 1;
    }
    char path[BENCH_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/report", argv[1]);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/report/results.json", argv[1]);
    int rc = bench_write_results_json(&an, path) < 0;
    printf("manifest %s (seal verified)\n", an.c.manifest_sha256);
    for (int i = 0; i < an.ncmp; i++) {
        const bench_comparison *cm = &an.cmp[i];
        printf("%-16s w%-3d ", bench_workload_name(cm->wl), an.c.levels[cm->level].workers);
        if (cm->excluded) {
            printf("EXCLUDED: %s\n", cm->reasons);
            continue;
        }
        int shown = 0;
        for (int k = 0; k < cm->nratios; k++) {
            const bench_ratio *r = &cm->ratios[k];
            if (r->metric != M_MEAN && r->metric != M_CPU)
                continue;
            char v[200];
            if (r->valid)
                printf("%s%s/%s %s %.3f [%.3f, %.3f] %s", shown++ ? "  " : "", an.c.arms[r->a].name,
                       an.c.arms[r->b].name, bench_metric_names[r->metric], r->ci.estimate, r->ci.lo,
                       r->ci.hi, bench_ratio_verdict(&an, r, v, sizeof v));
        }
        if (!cm->nratios)
            printf("p50 %.1f us, %.0f tx/s", cm->median[0][M_P50], cm->median[0][M_TPUT]);
        printf("\n");
    }
    printf("results: %s\n", path);
    bench_analysis_free(&an);
    return rc;
}
