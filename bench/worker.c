/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "worker.h"

#include <dlfcn.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fdb_api.h"
#include "floor.h"
#include "kvfile.h"
#include "rng.h"
#include "sha256.h"
#include "workloads.h"

typedef void (*malloc_stats_fn)(uint64_t *, uint64_t *);

typedef struct snap {
    uint64_t wall_ns;
    double cpu_us; /* user + system of the whole process */
    int64_t vcsw, ivcsw; /* voluntary / involuntary context switches of the whole process */
    int64_t net_vcsw, net_ivcsw; /* the same for the thread running fdb_run_network, or -1 */
    int64_t allocs, alloc_bytes;
} snap;

typedef struct wctx {
    bench_fdb_api api;
    FDBDatabase *db;
    const char *mode;
    int wl;
    int workers;
    uint64_t warmup, measured, keys, seed;
    malloc_stats_fn mstats;
    uint64_t *lat;
    _Atomic uint64_t next_ticket, done_warmup, done_measured;
    atomic_bool window_open; /* window_start taken: measured transactions may begin */
    snap window_start, window_end;
    pthread_mutex_t mu;
    bench_txn_counts counts; /* summed under mu */
    bench_txn_counts counts_measured;
    fdb_error_t net_error;
    _Atomic long net_tid; /* the network thread's id (0 until it runs) */
} wctx;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A thread's voluntary and involuntary context switches (/proc/self/task/TID/status), so the
 * hand-offs can be split between the network thread and the application's threads. */
static void thread_switches(long tid, int64_t *vol, int64_t *invol)
{
    *vol = *invol = -1;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    FILE *f = tid > 0 ? fopen(path, "r") : NULL;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        long long n;
        if (sscanf(line, "voluntary_ctxt_switches: %lld", &n) == 1)
            *vol = n;
        else if (sscanf(line, "nonvoluntary_ctxt_switches: %lld", &n) == 1)
            *invol = n;
    }
    fclose(f);
}

static void take(const wctx *c, snap *s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    s->wall_ns = now_ns();
    s->cpu_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
                (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
    s->vcsw = ru.ru_nvcsw;
    s->ivcsw = ru.ru_nivcsw;
    thread_switches(atomic_load(&c->net_tid), &s->net_vcsw, &s->net_ivcsw);
    s->allocs = s->alloc_bytes = -1;
    if (c->mstats) {
        uint64_t n, b;
        c->mstats(&n, &b);
        s->allocs = (int64_t)n;
        s->alloc_bytes = (int64_t)b;
    }
}

static void *network_thread(void *arg)
{
    wctx *c = arg;
    atomic_store(&c->net_tid, (long)syscall(SYS_gettid));
    c->net_error = c->api.run_network();
    return NULL;
}

static void add_counts(bench_txn_counts *to, const bench_txn_counts *from)
{
    to->retries += from->retries;
    to->errors += from->errors;
    to->verify_failures += from->verify_failures;
    if (from->last_error)
        to->last_error = from->last_error;
}

typedef struct tctx {
    wctx *c;
    int index;
} tctx;

static void *run_thread(void *arg)
{
    tctx *t = arg;
    wctx *c = t->c;
    bench_rng rng;
    /* Same seed for every arm of a block: the arms see the same key sequence. */
    bench_rng_seed(&rng, c->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(t->index + 1)));
    bench_txn_counts warm = {0}, meas = {0};
    const uint64_t total = c->warmup + c->measured;
    for (;;) {
        uint64_t ticket = atomic_fetch_add(&c->next_ticket, 1);
        if (ticket >= total)
            break;
        int measured = ticket >= c->warmup;
        /* The window opens once every warm-up transaction has finished, and no measured one
         * starts before: otherwise another worker's first measured transaction (or a late
         * warm-up one) falls on the wrong side of window_start. */
        if (measured)
            while (!atomic_load(&c->window_open))
                sched_yield();
        uint64_t t0 = now_ns();
        bench_run_txn(&c->api, c->db, c->wl, &rng, c->keys, measured ? &meas : &warm);
        uint64_t t1 = now_ns();
        if (!measured && atomic_fetch_add(&c->done_warmup, 1) + 1 == c->warmup) {
            take(c, &c->window_start);
            atomic_store(&c->window_open, true);
        }
        if (measured) {
            c->lat[ticket - c->warmup] = t1 - t0;
            if (atomic_fetch_add(&c->done_measured, 1) + 1 == c->measured)
                take(c, &c->window_end);
        }
    }
    pthread_mutex_lock(&c->mu);
    add_counts(&c->counts, &warm);
    add_counts(&c->counts, &meas);
    add_counts(&c->counts_measured, &meas);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

typedef struct pctx {
    wctx *c;
} pctx;

static void *populate_thread(void *arg)
{
    wctx *c = ((pctx *)arg)->c;
    bench_txn_counts cnt = {0};
    const uint64_t chunk = 100;
    for (;;) {
        uint64_t first = atomic_fetch_add(&c->next_ticket, chunk);
        if (first >= c->keys)
            break;
        uint64_t n = c->keys - first < chunk ? c->keys - first : chunk;
        bench_populate_chunk(&c->api, c->db, first, n, &cnt);
    }
    pthread_mutex_lock(&c->mu);
    add_counts(&c->counts, &cnt);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static int read_status(wctx *c, const char *out_path, char *err, size_t errlen)
{
    static const char key[] = "\xff\xff/status/json";
    FDBTransaction *tr = NULL;
    fdb_error_t e = c->api.database_create_transaction(c->db, &tr);
    if (e) {
        snprintf(err, errlen, "create_transaction: %s", bench_fdb_strerror(&c->api, e));
        return -1;
    }
    int rc = -1;
    for (int attempt = 0; attempt < 20; attempt++) {
        FDBFuture *f = c->api.transaction_get(tr, (const uint8_t *)key, (int)sizeof key - 1, 0);
        e = bench_fdb_wait(&c->api, f);
        if (!e) {
            fdb_bool_t present = 0;
            const uint8_t *v = NULL;
            int vl = 0;
            e = c->api.future_get_value(f, &present, &v, &vl);
            if (!e) {
                if (!present) {
                    snprintf(err, errlen, "\\xff\\xff/status/json not present");
                } else {
                    FILE *o = fopen(out_path, "wb");
                    if (o && fwrite(v, 1, (size_t)vl, o) == (size_t)vl && fclose(o) == 0)
                        rc = 0;
                    else
                        snprintf(err, errlen, "cannot write %.900s", out_path);
                }
                c->api.future_destroy(f);
                break;
            }
        }
        if (f)
            c->api.future_destroy(f);
        FDBFuture *ef = c->api.transaction_on_error(tr, e);
        fdb_error_t e2 = bench_fdb_wait(&c->api, ef);
        if (ef)
            c->api.future_destroy(ef);
        if (e2) {
            snprintf(err, errlen, "status read: %s (%d)", bench_fdb_strerror(&c->api, e2), e2);
            break;
        }
        snprintf(err, errlen, "status read: %s (%d) after retries", bench_fdb_strerror(&c->api, e),
                 e);
    }
    c->api.transaction_destroy(tr);
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: cfdb-bench _worker --mode run|populate|status|floor|floor-probe [--lib PATH] "
                    "--cluster-file PATH --out PREFIX [--lib-sha256 HEX] [--workload W] "
                    "[--workers N] [--warmup N] [--measured N] [--keys N] [--seed N]\n");
}

static int write_failure(const char *prefix, const char *msg)
{
    fprintf(stderr, "cfdb-bench worker: %s\n", msg);
    if (!prefix)
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s.kv", prefix);
    FILE *f = fopen(path, "w");
    if (f) {
        kv_put_str(f, "status", "failed");
        kv_put_str(f, "failure", msg);
        fclose(f);
    }
    return 1;
}

int bench_worker_main(int argc, char **argv)
{
    static wctx c; /* large-ish; one per process */
    const char *lib = NULL, *lib_sha = NULL, *cluster = NULL, *prefix = NULL;
    const char *wl_name = "grv";
    c.mode = "run";
    c.workers = 1;
    c.warmup = 0;
    c.measured = 100;
    c.keys = 1000;
    c.seed = 1;
    enum { O_MODE = 1, O_LIB, O_SHA, O_CLUSTER, O_OUT, O_WL, O_WORKERS, O_WARM, O_MEAS, O_KEYS, O_SEED };
    static const struct option opts[] = {
        {"mode", required_argument, 0, O_MODE},       {"lib", required_argument, 0, O_LIB},
        {"lib-sha256", required_argument, 0, O_SHA},  {"cluster-file", required_argument, 0, O_CLUSTER},
        {"out", required_argument, 0, O_OUT},         {"workload", required_argument, 0, O_WL},
        {"workers", required_argument, 0, O_WORKERS}, {"warmup", required_argument, 0, O_WARM},
        {"measured", required_argument, 0, O_MEAS},   {"keys", required_argument, 0, O_KEYS},
        {"seed", required_argument, 0, O_SEED},       {0, 0, 0, 0}};
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_MODE: c.mode = optarg; break;
        case O_LIB: lib = optarg; break;
        case O_SHA: lib_sha = optarg; break;
        case O_CLUSTER: cluster = optarg; break;
        case O_OUT: prefix = optarg; break;
        case O_WL: wl_name = optarg; break;
        case O_WORKERS: c.workers = atoi(optarg); break;
        case O_WARM: c.warmup = strtoull(optarg, NULL, 10); break;
        case O_MEAS: c.measured = strtoull(optarg, NULL, 10); break;
        case O_KEYS: c.keys = strtoull(optarg, NULL, 10); break;
        case O_SEED: c.seed = strtoull(optarg, NULL, 10); break;
        default: usage(); return 2;
        }
    }
    /* The floor arm (floor.c) loads no library. */
    if (cluster && prefix && !strcmp(c.mode, "floor-probe")) {
        char why[1024];
        if (bench_floor_probe(cluster, why, sizeof why) < 0)
            return write_failure(prefix, why);
        char path[4096];
        snprintf(path, sizeof path, "%s.kv", prefix);
        FILE *f = fopen(path, "w");
        if (!f)
            return 1;
        kv_put_str(f, "status", "ok");
        kv_put_str(f, "mode", "floor-probe");
        return fclose(f) ? 1 : 0;
    }
    if (cluster && prefix && !strcmp(c.mode, "floor") && c.workers >= 1 && c.workers <= 4096) {
        bench_floor_opts fo = {cluster, prefix, bench_workload_parse(wl_name), c.workers,
                               c.warmup, c.measured, c.keys, c.seed};
        return bench_floor_main(&fo);
    }
    if (!lib || !cluster || !prefix || c.workers < 1 || c.workers > 4096) {
        usage();
        return 2;
    }
    int is_run = !strcmp(c.mode, "run"), is_pop = !strcmp(c.mode, "populate"),
        is_status = !strcmp(c.mode, "status");
    if (!is_run && !is_pop && !is_status) {
        usage();
        return 2;
    }
    c.wl = bench_workload_parse(wl_name);
    if (is_run && (c.wl < 0 || c.measured == 0))
        return write_failure(prefix, "bad workload or measured count");
    char msg[1024];
    if (lib_sha) {
        char hex[BENCH_SHA256_HEX];
        if (bench_sha256_file(lib, hex) < 0 || strcmp(hex, lib_sha)) {
            snprintf(msg, sizeof msg, "library %s does not match the sealed SHA-256", lib);
            return write_failure(prefix, msg);
        }
    }
    (void)bench_value(100);
    pthread_mutex_init(&c.mu, NULL);
    if (is_run) {
        c.lat = calloc(c.measured, sizeof *c.lat);
        if (!c.lat)
            return write_failure(prefix, "out of memory for latencies");
    }
    /* Library load, then the lifecycle clock starts. */
    uint64_t load0 = now_ns();
    if (bench_fdb_load(&c.api, lib, msg, sizeof msg) < 0)
        return write_failure(prefix, msg);
    uint64_t load1 = now_ns();
    void *sym = dlsym(RTLD_DEFAULT, "cfdb_bench_malloc_stats");
    memcpy(&c.mstats, &sym, sizeof sym);
    snap life0, life1, ready;
    take(&c, &life0);

    fdb_error_t e = c.api.select_api_version_impl(BENCH_FDB_API_VERSION, BENCH_FDB_API_VERSION);
    if (e) {
        snprintf(msg, sizeof msg, "select_api_version(730): %s (%d)", bench_fdb_strerror(&c.api, e), e);
        return write_failure(prefix, msg);
    }
    if ((e = c.api.setup_network())) {
        snprintf(msg, sizeof msg, "setup_network: %s (%d)", bench_fdb_strerror(&c.api, e), e);
        return write_failure(prefix, msg);
    }
    pthread_t net;
    if (pthread_create(&net, NULL, network_thread, &c))
        return write_failure(prefix, "cannot start the network thread");
    if ((e = c.api.create_database(cluster, &c.db))) {
        snprintf(msg, sizeof msg, "create_database(%s): %s (%d)", cluster,
                 bench_fdb_strerror(&c.api, e), e);
        c.api.stop_network();
        pthread_join(net, NULL);
        return write_failure(prefix, msg);
    }
    take(&c, &ready);

    int rc = 0;
    msg[0] = 0;
    int nthreads = is_status ? 0 : c.workers;
    pthread_t *th = calloc((size_t)(nthreads ? nthreads : 1), sizeof *th);
    tctx *tc = calloc((size_t)(nthreads ? nthreads : 1), sizeof *tc);
    pctx pc = {&c};
    int started = 0;
    if (is_run && c.warmup == 0) { /* no warm-up to wait for: the window opens now */
        take(&c, &c.window_start);
        atomic_store(&c.window_open, true);
    }
    for (int i = 0; th && tc && i < nthreads; i++) {
        tc[i].c = &c;
        tc[i].index = i;
        if (pthread_create(&th[i], NULL, is_run ? run_thread : populate_thread,
                           is_run ? (void *)&tc[i] : (void *)&pc))
            break;
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (started < nthreads) {
        rc = 1;
        snprintf(msg, sizeof msg, "could start only %d of %d threads", started, nthreads);
    }
    char status_path[4096];
    snprintf(status_path, sizeof status_path, "%s.status.json", prefix);
    if (is_status && read_status(&c, status_path, msg, sizeof msg) < 0)
        rc = 1;
    snap before_close;
    take(&c, &before_close);
    c.api.database_destroy(c.db);
    e = c.api.stop_network();
    pthread_join(net, NULL);
    take(&c, &life1);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    free(th);
    free(tc);

    if (is_pop && c.counts.errors) {
        rc = 1;
        snprintf(msg, sizeof msg, "populate: %llu chunk transactions failed (last error %d: %s)",
                 (unsigned long long)c.counts.errors, c.counts.last_error,
                 bench_fdb_strerror(&c.api, c.counts.last_error));
    }
    if (rc)
        return write_failure(prefix, msg);

    char path[4096];
    if (is_run) {
        snprintf(path, sizeof path, "%s.lat", prefix);
        FILE *lf = fopen(path, "w");
        if (!lf)
            return write_failure(prefix, "cannot write the latency file");
        for (uint64_t i = 0; i < c.measured; i++)
            fprintf(lf, "%llu\n", (unsigned long long)c.lat[i]);
        if (fclose(lf))
            return write_failure(prefix, "cannot write the latency file");
    }
    snprintf(path, sizeof path, "%s.kv", prefix);
    FILE *f = fopen(path, "w");
    if (!f)
        return write_failure(NULL, "cannot write the run file");
    kv_put_str(f, "status", "ok");
    kv_put_str(f, "mode", c.mode);
    kv_put_str(f, "lib", lib);
    kv_put_int(f, "pid", (int64_t)getpid());
    if (is_run) {
        kv_put_str(f, "workload", bench_workload_name(c.wl));
        kv_put_int(f, "workers", c.workers);
        kv_put_int(f, "warmup", (int64_t)c.warmup);
        kv_put_int(f, "measured", (int64_t)c.measured);
        kv_put_int(f, "keys", (int64_t)c.keys);
        {
            char sb[32];
            snprintf(sb, sizeof sb, "%llu", (unsigned long long)c.seed);
            kv_put_str(f, "seed", sb);
        }
        kv_put_int(f, "retries", (int64_t)c.counts.retries);
        kv_put_int(f, "errors", (int64_t)c.counts.errors);
        kv_put_int(f, "retries_measured", (int64_t)c.counts_measured.retries);
        kv_put_int(f, "errors_measured", (int64_t)c.counts_measured.errors);
        kv_put_int(f, "verify_failures", (int64_t)c.counts.verify_failures);
        kv_put_int(f, "last_error", c.counts.last_error);
        kv_put_num(f, "window_wall_ns", (double)(c.window_end.wall_ns - c.window_start.wall_ns));
        kv_put_num(f, "window_cpu_us", c.window_end.cpu_us - c.window_start.cpu_us);
        kv_put_int(f, "window_vcsw", c.window_end.vcsw - c.window_start.vcsw);
        kv_put_int(f, "window_ivcsw", c.window_end.ivcsw - c.window_start.ivcsw);
        if (c.window_start.net_vcsw >= 0 && c.window_end.net_vcsw >= 0) {
            kv_put_int(f, "window_net_vcsw", c.window_end.net_vcsw - c.window_start.net_vcsw);
            kv_put_int(f, "window_net_ivcsw", c.window_end.net_ivcsw - c.window_start.net_ivcsw);
        }
        if (c.mstats) {
            kv_put_int(f, "allocs_window", c.window_end.allocs - c.window_start.allocs);
            kv_put_int(f, "alloc_bytes_window", c.window_end.alloc_bytes - c.window_start.alloc_bytes);
        }
    }
    kv_put_num(f, "load_ms", (double)(load1 - load0) / 1e6);
    kv_put_num(f, "setup_ms", (double)(ready.wall_ns - life0.wall_ns) / 1e6);
    kv_put_num(f, "close_ms", (double)(life1.wall_ns - before_close.wall_ns) / 1e6);
    kv_put_num(f, "lifecycle_wall_ns", (double)(life1.wall_ns - life0.wall_ns));
    kv_put_num(f, "lifecycle_cpu_us", life1.cpu_us - life0.cpu_us);
    if (c.mstats) {
        kv_put_int(f, "allocs_lifecycle", life1.allocs - life0.allocs);
        kv_put_int(f, "alloc_bytes_lifecycle", life1.alloc_bytes - life0.alloc_bytes);
    }
    kv_put_int(f, "malloc_counted", c.mstats ? 1 : 0);
    kv_put_int(f, "peak_rss_kb", ru.ru_maxrss);
    {
        cpu_set_t allowed;
        kv_put_int(f, "cpus_allowed", sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : -1);
    }
    kv_put_int(f, "stop_network_error", e);
    kv_put_int(f, "run_network_error", c.net_error);
    if (fclose(f))
        return 1;
    return 0;
}
