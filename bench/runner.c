/* SPDX-License-Identifier: Apache-2.0 */
#include "runner.h"

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "campaign.h"
#include "cpus.h"
#include "gates.h"
#include "kvfile.h"
#include "manifest.h"
#include "orders.h"
#include "paths.h"
#include "server.h"
#include "sha256.h"
#include "spawn.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static FILE *campaign_log;

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (campaign_log) {
        va_start(ap, fmt);
        vfprintf(campaign_log, fmt, ap);
        va_end(ap);
        fflush(campaign_log);
    }
}

static void fmt_dur(double s, char *out, size_t len)
{
    if (s < 0 || s != s)
        s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(out, len, "%ldh%02ldm%02lds", t / 3600, t / 60 % 60, t % 60);
    else if (t >= 60)
        snprintf(out, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, len, "%lds", t);
}

static int mkdir_p(const char *path)
{
    char tmp[BENCH_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* Default warm-up + measured counts of the issue, by worker level. */
static void default_counts(int workers, uint64_t *warm, uint64_t *meas)
{
    if (workers <= 1) {
        *warm = 200;
        *meas = 3000;
    } else if (workers <= 8) {
        *warm = 800;
        *meas = 12000;
    } else if (workers <= 32) {
        *warm = 1600;
        *meas = 24000;
    } else {
        *warm = 1600;
        *meas = 32000;
    }
}

static int add_arm(bench_campaign *c, const char *name, const char *path, char *err, size_t errlen)
{
    if (c->narms >= BENCH_MAX_ARMS) {
        snprintf(err, errlen, "at most %d arms", BENCH_MAX_ARMS);
        return -1;
    }
    if (!*name || strlen(name) >= BENCH_NAME_MAX || strspn(name, "abcdefghijklmnopqrstuvwxyz"
                                                                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                  "0123456789._+-") != strlen(name)) {
        snprintf(err, errlen, "arm name '%s' must be 1-63 characters of [A-Za-z0-9._+-]", name);
        return -1;
    }
    for (int i = 0; i < c->narms; i++)
        if (!strcmp(c->arms[i].name, name)) {
            snprintf(err, errlen, "arm name '%s' given twice", name);
            return -1;
        }
    char *real = realpath(path, NULL);
    if (!real || !bench_file_exists(real)) {
        snprintf(err, errlen, "arm %s: library %s not found", name, path);
        free(real);
        return -1;
    }
    bench_arm *a = &c->arms[c->narms];
    snprintf(a->name, sizeof a->name, "%s", name);
    snprintf(a->path, sizeof a->path, "%s", real);
    free(real);
    struct stat st;
    a->size = stat(a->path, &st) == 0 ? (int64_t)st.st_size : -1;
    if (bench_sha256_file(a->path, a->sha256) < 0) {
        snprintf(err, errlen, "arm %s: cannot read %s", name, a->path);
        return -1;
    }
    c->narms++;
    return 0;
}

/* Probes the cluster with "_worker --mode floor-probe" and adds the floor arm, re-planning the
 * blocks for one more arm. -1 with the reason when it cannot be had. */
static int add_floor_arm(bench_campaign *c, const char *self, const char *dir, char *err, size_t errlen)
{
    if (c->narms >= BENCH_MAX_ARMS) {
        snprintf(err, errlen, "already %d arms, the most a campaign takes", c->narms);
        return -1;
    }
    for (int i = 0; i < c->narms; i++)
        if (!strcmp(c->arms[i].name, "floor")) {
            snprintf(err, errlen, "an arm is already named 'floor'");
            return -1;
        }
    char prefix[BENCH_PATH_MAX + 32], log[BENCH_PATH_MAX + 64], kvpath[BENCH_PATH_MAX + 64];
    snprintf(prefix, sizeof prefix, "%s/floor-probe", dir);
    snprintf(log, sizeof log, "%s.log", prefix);
    snprintf(kvpath, sizeof kvpath, "%s.kv", prefix);
    char *argv[] = {(char *)self, "_worker", "--mode", "floor-probe", "--cluster-file",
                    (char *)c->cluster_file, "--out", prefix, NULL};
    bench_spawn_result r;
    if (bench_spawn(argv, log, NULL, c->client_cpus, 60, &r) < 0 || !r.exited || r.exit_code) {
        kvfile kv;
        const char *why = NULL;
        if (kv_load(&kv, kvpath) == 0)
            why = kv_get(&kv, "failure");
        char d[128];
        bench_spawn_describe(&r, d, sizeof d);
        snprintf(err, errlen, "%s", why ? why : d);
        if (why)
            kv_free(&kv);
        return -1;
    }
    bench_arm *a = &c->arms[c->narms];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "floor");
    a->kind = BENCH_ARM_FLOOR;
    snprintf(a->path, sizeof a->path, "%s", self);
    struct stat st;
    a->size = stat(self, &st) == 0 ? (int64_t)st.st_size : -1;
    if (bench_sha256_file(self, a->sha256) < 0) {
        snprintf(err, errlen, "cannot read %.900s", self);
        return -1;
    }
    int blocks = bench_blocks_for(c->narms + 1, c->blocks_requested);
    if (blocks < 1 || blocks > BENCH_MAX_BLOCKS || bench_orders(c->narms + 1, blocks, c->orders) < 0) {
        bench_orders(c->narms, c->blocks, c->orders);
        snprintf(err, errlen, "cannot counterbalance %d arms in at most %d blocks", c->narms + 1,
                 BENCH_MAX_BLOCKS);
        return -1;
    }
    c->narms++;
    if (blocks != c->blocks)
        fprintf(stderr, "cfdb-bench: note: %d blocks with the floor arm (all %zu orders of %d arms)\n",
                blocks, bench_factorial(c->narms), c->narms);
    c->blocks = blocks;
    return 0;
}

static int parse_list_int(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 4096)
            return -1;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

static void usage_run(void)
{
    fprintf(stderr,
        "usage: cfdb-bench run [options]\n"
        "Arms (each a library exporting the fdb_c API, loaded with dlopen in a fresh process):\n"
        "  --arm NAME=PATH         add an arm (repeatable)\n"
        "  --cfdb-lib PATH         the default 'cfdb' arm (default: found next to the binary)\n"
        "  --no-default-arm        do not add the cfdb arm\n"
        "  --all-arms              also add every system libfdb_c.so found\n"
        "  --control-arm NAME      arm used to populate and read status (default: first)\n"
        "  --no-floor              no floor arm (default: added when the cluster suits it: the\n"
        "                          bench keyspace on one shard, proxies and storage in one process)\n"
        "Target:\n"
        "  --cluster-file PATH     use an existing cluster (default: start cfdb-server)\n"
        "  --server PATH           cfdb-server binary (default: found next to the binary)\n"
        "Design:\n"
        "  --workloads LIST        grv,get100,get1000,range100,set100,batchset50,batchset50x1000\n"
        "  --workers LIST          worker levels (default 1,8,32,64)\n"
        "  --counts LIST           W=WARMUP+MEASURED,... per level (defaults 1=200+3000,\n"
        "                          8=800+12000, 32=1600+24000, 64=1600+32000)\n"
        "  --scale F               multiply all counts by F\n"
        "  --blocks N              blocks per comparison (default 6; rounded up to a\n"
        "                          multiple of arms!)\n"
        "  --keys N                keyspace size (default 100000)\n"
        "  --seed N                key-sequence seed (default 1)\n"
        "  --quick                 short campaign: workers 1,8; counts 1=50+500, 8=100+1000;\n"
        "                          keys 10000\n"
        "  --no-populate           the keyspace is already populated\n"
        "Gates:\n"
        "  --quiet-max-cpu PCT     busiest CPU limit (default 15)\n"
        "  --quiet-max-agg PCT     aggregate limit (default 5)\n"
        "  --quiet-window S        sampling window (default 0.5)\n"
        "  --quiet-wait S          wait this long for quiet before failing (default 30)\n"
        "  --no-quiet-gate         disable (recorded in the manifest and report)\n"
        "  --max-log-queue BYTES   worst log queue limit (default 100000000)\n"
        "  --max-moving-bytes B    data movement limit (default 0)\n"
        "  --no-health-gate        disable (recorded)\n"
        "  --require-health        a status that does not report the gated fields fails\n"
        "Other:\n"
        "  --out DIR               campaign folder (default ./cfdb-bench-YYYYmmdd-HHMMSS)\n"
        "  --malloc-lib PATH       allocation counter to preload (default: found)\n"
        "  --run-timeout S         kill a run after S seconds (default 600)\n"
        "  --client-cpus LIST      pin every worker process to these CPUs (e.g. 0 or 0-1)\n"
        "  --server-cpus LIST      pin the cfdb-server the harness starts to these CPUs\n"
        "  --no-report             do not analyze and report at the end\n");
}

typedef struct run_opts {
    const char *cfdb_lib, *server, *cluster_file, *out, *malloc_lib, *control;
    int no_default_arm, all_arms, quick, no_populate, no_report, no_floor;
    double scale;
} run_opts;

static void append_exclusion(const char *dir, const char *wl, int workers, const char *reason)
{
    char path[BENCH_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/exclusions.tsv", dir);
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "%s\t%d\t", wl, workers);
    for (const char *p = reason; *p; p++)
        fputc(*p == '\t' || *p == '\n' ? ' ' : *p, f);
    fputc('\n', f);
    fclose(f);
}

/* Status read through the control arm in a fresh process, then judged. */
static void health_gate(const bench_campaign *c, const char *self, const char *dir, const char *id,
                        bench_health_result *hr)
{
    char prefix[BENCH_PATH_MAX + 300], log[BENCH_PATH_MAX + 320], status[BENCH_PATH_MAX + 320];
    snprintf(prefix, sizeof prefix, "%s/health/%s", dir, id);
    snprintf(log, sizeof log, "%s.log", prefix);
    snprintf(status, sizeof status, "%s.status.json", prefix);
    const bench_arm *a = &c->arms[c->control_arm];
    char *argv[] = {(char *)self, "_worker", "--mode", "status", "--lib", (char *)a->path,
                    "--cluster-file", (char *)c->cluster_file, "--out", prefix, NULL};
    bench_spawn_result r;
    memset(hr, 0, sizeof *hr);
    hr->log_queue_bytes = hr->moving_bytes = -1;
    if (bench_spawn(argv, log, NULL, c->client_cpus, 60, &r) < 0 || !r.exited || r.exit_code) {
        char d[128];
        bench_spawn_describe(&r, d, sizeof d);
        kvfile kv;
        const char *why = NULL;
        if (kv_load(&kv, (snprintf(log, sizeof log, "%s.kv", prefix), log)) == 0)
            why = kv_get(&kv, "failure");
        hr->verdict = BENCH_HEALTH_UNVERIFIED;
        snprintf(hr->detail, sizeof hr->detail, "status not readable (%s%s%s)", d, why ? ": " : "",
                 why ? why : "");
        if (why)
            kv_free(&kv);
        return;
    }
    FILE *f = fopen(status, "rb");
    char *buf = NULL;
    size_t len = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        if (n >= 0 && (buf = malloc((size_t)n + 1)))
            len = fread(buf, 1, (size_t)n, f);
        fclose(f);
    }
    if (!buf) {
        hr->verdict = BENCH_HEALTH_UNVERIFIED;
        snprintf(hr->detail, sizeof hr->detail, "status file missing");
        return;
    }
    bench_health_eval(buf, len, &c->health, hr);
    free(buf);
}

static int populate(const bench_campaign *c, const char *self, const char *dir)
{
    char prefix[BENCH_PATH_MAX + 32], log[BENCH_PATH_MAX + 64], keys[32], seed[32];
    snprintf(prefix, sizeof prefix, "%s/populate", dir);
    snprintf(log, sizeof log, "%s.log", prefix);
    snprintf(keys, sizeof keys, "%llu", (unsigned long long)c->keys);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
    const bench_arm *a = &c->arms[c->control_arm];
    char *argv[] = {(char *)self, "_worker", "--mode", "populate", "--lib", (char *)a->path,
                    "--lib-sha256", (char *)a->sha256, "--cluster-file", (char *)c->cluster_file,
                    "--out", prefix, "--workers", "8", "--keys", keys, NULL};
    bench_spawn_result r;
    say("populating %llu keys (100 B and 1,000 B values) with arm %s ...\n",
        (unsigned long long)c->keys, a->name);
    double t0 = now_s();
    if (bench_spawn(argv, log, NULL, c->client_cpus, c->run_timeout_s * 4, &r) < 0 || !r.exited || r.exit_code) {
        char d[128];
        bench_spawn_describe(&r, d, sizeof d);
        say("populate failed (%s); see %s\n", d, log);
        return -1;
    }
    say("populated in %.1f s\n", now_s() - t0);
    return 0;
}

int bench_run_main(int argc, char **argv, char *out_dir, size_t out_len, int *want_report)
{
    static bench_campaign c;
    memset(&c, 0, sizeof c);
    run_opts ro = {0};
    ro.scale = 1.0;
    int levels[BENCH_MAX_LEVELS] = {1, 8, 32, 64}, nlevels = 4;
    struct { int w; uint64_t warm, meas; } counts[BENCH_MAX_LEVELS];
    int ncounts = 0;
    const char *arm_specs[BENCH_MAX_ARMS * 2];
    int narm_specs = 0;
    c.blocks_requested = 6;
    c.keys = 100000;
    c.seed = 1;
    c.quiet_enabled = 1;
    c.quiet.max_cpu = 0.15;
    c.quiet.max_agg = 0.05;
    c.quiet.window_s = 0.5;
    c.quiet.wait_s = 30;
    c.health_enabled = 1;
    c.health.max_log_queue_bytes = 100e6;
    c.health.max_moving_bytes = 0;
    c.run_timeout_s = 600;
    c.bootstrap_resamples = BENCH_BOOTSTRAP_RESAMPLES;
    c.bootstrap_seed = BENCH_BOOTSTRAP_SEED;
    for (int i = 0; i < WL_COUNT; i++)
        c.workloads[c.nworkloads++] = i;
    int keys_set = 0, levels_set = 0;

    enum {
        O_ARM = 1, O_CFDB, O_NODEF, O_ALL, O_CTL, O_CLUSTER, O_SERVER, O_WL, O_WORKERS, O_COUNTS,
        O_SCALE, O_BLOCKS, O_KEYS, O_SEED, O_QUICK, O_NOPOP, O_QCPU, O_QAGG, O_QWIN, O_QWAIT,
        O_NOQ, O_LOGQ, O_MOVE, O_NOH, O_REQH, O_OUT, O_MALLOC, O_TIMEOUT, O_NOREPORT, O_HELP, O_CCPUS, O_SCPUS, O_NOFLOOR
    };
    static const struct option opts[] = {
        {"arm", required_argument, 0, O_ARM},          {"cfdb-lib", required_argument, 0, O_CFDB},
        {"no-default-arm", no_argument, 0, O_NODEF},   {"all-arms", no_argument, 0, O_ALL},
        {"control-arm", required_argument, 0, O_CTL},  {"cluster-file", required_argument, 0, O_CLUSTER},
        {"server", required_argument, 0, O_SERVER},    {"workloads", required_argument, 0, O_WL},
        {"workers", required_argument, 0, O_WORKERS},  {"counts", required_argument, 0, O_COUNTS},
        {"scale", required_argument, 0, O_SCALE},      {"blocks", required_argument, 0, O_BLOCKS},
        {"keys", required_argument, 0, O_KEYS},        {"seed", required_argument, 0, O_SEED},
        {"quick", no_argument, 0, O_QUICK},            {"no-populate", no_argument, 0, O_NOPOP},
        {"quiet-max-cpu", required_argument, 0, O_QCPU}, {"quiet-max-agg", required_argument, 0, O_QAGG},
        {"quiet-window", required_argument, 0, O_QWIN}, {"quiet-wait", required_argument, 0, O_QWAIT},
        {"no-quiet-gate", no_argument, 0, O_NOQ},      {"max-log-queue", required_argument, 0, O_LOGQ},
        {"max-moving-bytes", required_argument, 0, O_MOVE}, {"no-health-gate", no_argument, 0, O_NOH},
        {"require-health", no_argument, 0, O_REQH},    {"out", required_argument, 0, O_OUT},
        {"malloc-lib", required_argument, 0, O_MALLOC}, {"run-timeout", required_argument, 0, O_TIMEOUT},
        {"no-report", no_argument, 0, O_NOREPORT},     {"help", no_argument, 0, O_HELP},
        {"client-cpus", required_argument, 0, O_CCPUS}, {"server-cpus", required_argument, 0, O_SCPUS},
        {"no-floor", no_argument, 0, O_NOFLOOR},       {0, 0, 0, 0}};
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_ARM:
            if (narm_specs < (int)(sizeof arm_specs / sizeof *arm_specs))
                arm_specs[narm_specs++] = optarg;
            break;
        case O_CFDB: ro.cfdb_lib = optarg; break;
        case O_NODEF: ro.no_default_arm = 1; break;
        case O_ALL: ro.all_arms = 1; break;
        case O_CTL: ro.control = optarg; break;
        case O_CLUSTER: ro.cluster_file = optarg; break;
        case O_SERVER: ro.server = optarg; break;
        case O_WL: {
            c.nworkloads = 0;
            char *s = strdup(optarg), *save = NULL;
            for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int w = bench_workload_parse(t);
                if (w < 0 || c.nworkloads >= WL_COUNT) {
                    fprintf(stderr, "cfdb-bench: unknown workload '%s'\n", t);
                    free(s);
                    return 2;
                }
                c.workloads[c.nworkloads++] = w;
            }
            free(s);
            break;
        }
        case O_WORKERS:
            nlevels = parse_list_int(optarg, levels, BENCH_MAX_LEVELS);
            levels_set = 1;
            if (nlevels < 1) {
                fprintf(stderr, "cfdb-bench: bad --workers '%s'\n", optarg);
                return 2;
            }
            break;
        case O_COUNTS: {
            char *s = strdup(optarg), *save = NULL;
            for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                unsigned w;
                unsigned long long a, b;
                if (sscanf(t, "%u=%llu+%llu", &w, &a, &b) != 3 || ncounts >= BENCH_MAX_LEVELS || !b) {
                    fprintf(stderr, "cfdb-bench: bad --counts item '%s' (want W=WARMUP+MEASURED)\n", t);
                    free(s);
                    return 2;
                }
                counts[ncounts].w = (int)w;
                counts[ncounts].warm = a;
                counts[ncounts].meas = b;
                ncounts++;
            }
            free(s);
            break;
        }
        case O_SCALE: ro.scale = atof(optarg); break;
        case O_BLOCKS: c.blocks_requested = atoi(optarg); break;
        case O_KEYS: c.keys = strtoull(optarg, NULL, 10); keys_set = 1; break;
        case O_SEED: c.seed = strtoull(optarg, NULL, 10) & ((1ull << 53) - 1); break;
        case O_QUICK: ro.quick = 1; break;
        case O_NOPOP: ro.no_populate = 1; break;
        case O_QCPU: c.quiet.max_cpu = atof(optarg) / 100.0; break;
        case O_QAGG: c.quiet.max_agg = atof(optarg) / 100.0; break;
        case O_QWIN: c.quiet.window_s = atof(optarg); break;
        case O_QWAIT: c.quiet.wait_s = atof(optarg); break;
        case O_NOQ: c.quiet_enabled = 0; break;
        case O_LOGQ: c.health.max_log_queue_bytes = atof(optarg); break;
        case O_MOVE: c.health.max_moving_bytes = atof(optarg); break;
        case O_NOH: c.health_enabled = 0; break;
        case O_REQH: c.health_required = 1; break;
        case O_OUT: ro.out = optarg; break;
        case O_MALLOC: ro.malloc_lib = optarg; break;
        case O_TIMEOUT: c.run_timeout_s = atof(optarg); break;
        case O_NOREPORT: ro.no_report = 1; break;
        case O_NOFLOOR: ro.no_floor = 1; break;
        case O_CCPUS:
        case O_SCPUS: {
            char *dst = o == O_CCPUS ? c.client_cpus : c.server_cpus, why[128];
            if (bench_cpus_check(optarg, why, sizeof why) < 0 || strlen(optarg) >= sizeof c.client_cpus) {
                fprintf(stderr, "cfdb-bench: --%s-cpus: %s\n", o == O_CCPUS ? "client" : "server",
                        strlen(optarg) >= sizeof c.client_cpus ? "list too long" : why);
                return 2;
            }
            snprintf(dst, sizeof c.client_cpus, "%s", optarg);
            break;
        }
        case O_HELP: usage_run(); return 0;
        default: usage_run(); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cfdb-bench run: unexpected argument '%s'\n", argv[optind]);
        usage_run();
        return 2;
    }
    if (ro.quick) {
        if (!levels_set) {
            levels[0] = 1;
            levels[1] = 8;
            nlevels = 2;
        }
        if (!keys_set)
            c.keys = 10000;
    }
    if (c.keys < BENCH_RANGE_ROWS + 1) {
        fprintf(stderr, "cfdb-bench: --keys must be at least %d\n", BENCH_RANGE_ROWS + 1);
        return 2;
    }
    if (!(ro.scale > 0)) {
        fprintf(stderr, "cfdb-bench: --scale must be positive\n");
        return 2;
    }
    for (int i = 0; i < nlevels; i++) {
        bench_level *l = &c.levels[c.nlevels++];
        l->workers = levels[i];
        default_counts(levels[i], &l->warmup, &l->measured);
        if (ro.quick) {
            l->warmup = levels[i] <= 1 ? 50 : 100;
            l->measured = levels[i] <= 1 ? 500 : 1000;
        }
        for (int k = 0; k < ncounts; k++)
            if (counts[k].w == levels[i]) {
                l->warmup = counts[k].warm;
                l->measured = counts[k].meas;
            }
        l->warmup = (uint64_t)((double)l->warmup * ro.scale + 0.5);
        l->measured = (uint64_t)((double)l->measured * ro.scale + 0.5);
        if (l->measured < 1)
            l->measured = 1;
    }

    /* Arms. */
    char err[1024];
    if (!ro.no_default_arm) {
        char lib[BENCH_PATH_MAX];
        if (ro.cfdb_lib)
            snprintf(lib, sizeof lib, "%s", ro.cfdb_lib);
        if (!ro.cfdb_lib && bench_find_cfdb_lib(lib, sizeof lib) < 0) {
            if (narm_specs == 0) {
                fprintf(stderr,
                        "cfdb-bench: the cfdb client library (libcfdb.so, CMake target 'cfdb') was "
                        "not found next to this binary (../src/api/libcfdb.so); build it, pass "
                        "--cfdb-lib PATH, or give arms with --arm NAME=PATH\n");
                return 3;
            }
            fprintf(stderr, "cfdb-bench: note: libcfdb.so not found; running without the cfdb arm\n");
        } else if (add_arm(&c, "cfdb", lib, err, sizeof err) < 0) {
            fprintf(stderr, "cfdb-bench: %s\n", err);
            return 2;
        }
    }
    for (int i = 0; i < narm_specs; i++) {
        char name[BENCH_NAME_MAX + 1];
        const char *eq = strchr(arm_specs[i], '=');
        if (!eq || eq == arm_specs[i] || (size_t)(eq - arm_specs[i]) > BENCH_NAME_MAX) {
            fprintf(stderr, "cfdb-bench: --arm wants NAME=PATH, got '%s'\n", arm_specs[i]);
            return 2;
        }
        memcpy(name, arm_specs[i], (size_t)(eq - arm_specs[i]));
        name[eq - arm_specs[i]] = 0;
        if (add_arm(&c, name, eq + 1, err, sizeof err) < 0) {
            fprintf(stderr, "cfdb-bench: %s\n", err);
            return 2;
        }
    }
    if (ro.all_arms) {
        char found[4][4096];
        int n = bench_find_system_fdb_c(found, 4);
        for (int i = 0; i < n; i++) {
            int dup = 0;
            char hex[BENCH_SHA256_HEX];
            if (bench_sha256_file(found[i], hex) == 0)
                for (int k = 0; k < c.narms; k++)
                    if (!strcmp(c.arms[k].sha256, hex))
                        dup = 1;
            if (dup)
                continue;
            char name[32];
            snprintf(name, sizeof name, i ? "fdb_c-%d" : "fdb_c", i + 1);
            if (add_arm(&c, name, found[i], err, sizeof err) == 0)
                fprintf(stderr, "cfdb-bench: found arm %s = %s\n", name, found[i]);
        }
    }
    if (c.narms < 1) {
        fprintf(stderr, "cfdb-bench: no arms\n");
        return 3;
    }
    if (c.narms == 1)
        fprintf(stderr, "cfdb-bench: note: one arm only; absolute numbers but no ratios\n");
    c.control_arm = 0;
    if (ro.control) {
        c.control_arm = -1;
        for (int i = 0; i < c.narms; i++)
            if (!strcmp(c.arms[i].name, ro.control))
                c.control_arm = i;
        if (c.control_arm < 0) {
            fprintf(stderr, "cfdb-bench: --control-arm %s is not an arm\n", ro.control);
            return 2;
        }
    }
    c.blocks = bench_blocks_for(c.narms, c.blocks_requested);
    if (c.blocks < 1 || c.blocks > BENCH_MAX_BLOCKS || bench_orders(c.narms, c.blocks, c.orders) < 0) {
        fprintf(stderr, "cfdb-bench: cannot counterbalance %d arms in at most %d blocks\n", c.narms,
                BENCH_MAX_BLOCKS);
        return 2;
    }
    if (c.blocks != c.blocks_requested)
        fprintf(stderr, "cfdb-bench: note: %d blocks (not %d) so that all %zu orders of %d arms "
                        "are used equally\n",
                c.blocks, c.blocks_requested, bench_factorial(c.narms), c.narms);

    /* Malloc counter. */
    char mlib[BENCH_PATH_MAX];
    if (ro.malloc_lib)
        snprintf(mlib, sizeof mlib, "%s", ro.malloc_lib);
    if (dlsym(RTLD_DEFAULT, "__asan_init")) {
        fprintf(stderr, "cfdb-bench: note: sanitized build; the allocation counter cannot be "
                        "preloaded under AddressSanitizer, allocations will be reported as "
                        "unavailable\n");
    } else if (ro.malloc_lib ? bench_file_exists(mlib)
                             : bench_find_malloc_lib(mlib, sizeof mlib) == 0) {
        char *r = realpath(mlib, NULL);
        snprintf(c.malloc_lib, sizeof c.malloc_lib, "%s", r ? r : mlib);
        free(r);
        bench_sha256_file(c.malloc_lib, c.malloc_sha256);
    } else {
        fprintf(stderr, "cfdb-bench: note: allocation counter (libcfdb-bench-malloc.so) not found; "
                        "allocations will be reported as unavailable\n");
    }

    /* Target: resolved before anything is written. */
    if (ro.cluster_file) {
        char *r = realpath(ro.cluster_file, NULL);
        if (!r) {
            fprintf(stderr, "cfdb-bench: cluster file %s not found\n", ro.cluster_file);
            return 2;
        }
        snprintf(c.cluster_file, sizeof c.cluster_file, "%s", r);
        free(r);
    } else {
        char sbin[BENCH_PATH_MAX];
        if (ro.server)
            snprintf(sbin, sizeof sbin, "%s", ro.server);
        if (ro.server ? !bench_is_executable(sbin) : bench_find_server(sbin, sizeof sbin) < 0) {
            fprintf(stderr,
                    "cfdb-bench: no target: cfdb-server (CMake target 'cfdb-server') was not found "
                    "next to this binary (../src/server/cfdb-server); build it, pass --server PATH, "
                    "or use --cluster-file PATH for an existing cluster\n");
            return 3;
        }
        char *r = realpath(sbin, NULL);
        snprintf(c.server_path, sizeof c.server_path, "%s", r ? r : sbin);
        free(r);
        c.server_managed = 1;
        bench_sha256_file(c.server_path, c.server_sha256);
    }

    /* Output folder. */
    char dir[BENCH_PATH_MAX];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(c.created_utc, sizeof c.created_utc, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    if (ro.out) {
        snprintf(dir, sizeof dir, "%s", ro.out);
    } else {
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
        snprintf(dir, sizeof dir, "cfdb-bench-%s", stamp);
    }
    char path[BENCH_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (bench_file_exists(path)) {
        fprintf(stderr, "cfdb-bench: %s already holds a campaign; choose another --out\n", dir);
        return 2;
    }
    if (mkdir_p(dir) < 0) {
        fprintf(stderr, "cfdb-bench: cannot create %s: %s\n", dir, strerror(errno));
        return 2;
    }
    {
        char *r = realpath(dir, NULL);
        if (r) {
            snprintf(dir, sizeof dir, "%s", r);
            free(r);
        }
    }
    snprintf(out_dir, out_len, "%s", dir);
    snprintf(path, sizeof path, "%s/runs", dir);
    mkdir_p(path);
    snprintf(path, sizeof path, "%s/health", dir);
    mkdir_p(path);
    snprintf(path, sizeof path, "%s/campaign.log", dir);
    campaign_log = fopen(path, "a");
    {
        size_t off = 0;
        off += (size_t)snprintf(c.command_line + off, sizeof c.command_line - off, "cfdb-bench");
        for (int i = 0; i < argc && off < sizeof c.command_line; i++)
            off += (size_t)snprintf(c.command_line + off, sizeof c.command_line - off, " %s", argv[i]);
    }

    /* Target. */
    char self[BENCH_PATH_MAX];
    if (bench_self_exe(self, sizeof self) < 0) {
        fprintf(stderr, "cfdb-bench: cannot find my own binary\n");
        return 1;
    }
    bench_server srv = {0};
    if (c.server_managed) {
        const char *sbin = c.server_path;
        say("starting %s ...\n", sbin);
        if (bench_server_start(sbin, dir, c.server_cpus, 30, &srv, err, sizeof err) < 0) {
            say("cfdb-bench: %s\n", err);
            return 3;
        }
        snprintf(c.cluster_file, sizeof c.cluster_file, "%s", srv.cluster_file);
        say("cfdb-server pid %d listening on 127.0.0.1:%d\n", (int)srv.pid, srv.port);
    }

    /* The floor arm, when the cluster suits it (floor.h); otherwise the campaign goes on
     * without it and says why. */
    if (ro.no_floor) {
        snprintf(c.floor_note, sizeof c.floor_note, "off (--no-floor)");
    } else if (add_floor_arm(&c, self, dir, err, sizeof err) < 0) {
        snprintf(c.floor_note, sizeof c.floor_note, "off: %.1000s", err);
        say("cfdb-bench: note: no floor arm: %s\n", err);
    }

    /* Seal the design before any timing. */
    if (bench_manifest_write(&c, dir, err, sizeof err) < 0) {
        say("cfdb-bench: %s\n", err);
        bench_server_stop(&srv);
        return 1;
    }
    say("campaign folder: %s\n", dir);
    say("manifest sealed: sha256 %s\n", c.manifest_sha256);
    for (int i = 0; i < c.narms; i++)
        say("  arm %-12s %s (sha256 %.16s...)\n", c.arms[i].name, c.arms[i].path, c.arms[i].sha256);

    int rc = 0;
    if (!ro.no_populate && populate(&c, self, dir) < 0) {
        bench_server_stop(&srv);
        return 1;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    const int total_runs = c.nworkloads * c.nlevels * c.blocks * c.narms;
    int runs_done = 0, excluded = 0;
    double t_start = now_s(), run_time_sum = 0;
    for (int wi = 0; wi < c.nworkloads; wi++) {
        for (int li = 0; li < c.nlevels; li++) {
            const int wl = c.workloads[wi];
            const bench_level *lv = &c.levels[li];
            const char *wname = bench_workload_name(wl);
            int failed = 0;
            for (int b = 0; b < c.blocks && !failed; b++) {
                for (int p = 0; p < c.narms && !failed; p++) {
                    if (interrupted) {
                        append_exclusion(dir, wname, lv->workers, "campaign interrupted");
                        failed = 1;
                        break;
                    }
                    const bench_arm *a = &c.arms[c.orders[b * c.narms + p]];
                    char id[256], prefix[BENCH_PATH_MAX + 300], kvpath[BENCH_PATH_MAX + 310],
                        log[BENCH_PATH_MAX + 310];
                    snprintf(id, sizeof id, "%s-w%d-b%d-%s", wname, lv->workers, b + 1, a->name);
                    snprintf(prefix, sizeof prefix, "%s/runs/%s", dir, id);
                    snprintf(kvpath, sizeof kvpath, "%s.kv", prefix);
                    snprintf(log, sizeof log, "%s.log", prefix);
                    uint64_t seed = bench_block_seed(&c, wl, li, b);

                    double elapsed = now_s() - t_start;
                    double eta = runs_done ? run_time_sum / runs_done * (total_runs - runs_done) : 0;
                    char el[32], left[32];
                    fmt_dur(elapsed, el, sizeof el);
                    fmt_dur(eta, left, sizeof left);
                    say("[%d/%d] %s w%d block %d/%d arm %s (%d/%d) | elapsed %s, left ~%s\n",
                        runs_done + 1, total_runs, wname, lv->workers, b + 1, c.blocks, a->name,
                        p + 1, c.narms, el, runs_done ? left : "?");

                    bench_quiet_result q = {0};
                    q.pass = 1;
                    snprintf(q.detail, sizeof q.detail, "quiescence gate disabled");
                    if (c.quiet_enabled)
                        bench_quiet_gate(&c.quiet, NULL, &q);
                    if (!q.pass) {
                        FILE *f = fopen(kvpath, "w");
                        if (f) {
                            kv_put_str(f, "status", "not_launched");
                            kv_put_str(f, "failure", q.detail);
                            fclose(f);
                        }
                    } else {
                        char warm[32], meas[32], workers[16], keys[32], seeds[32];
                        snprintf(warm, sizeof warm, "%llu", (unsigned long long)lv->warmup);
                        snprintf(meas, sizeof meas, "%llu", (unsigned long long)lv->measured);
                        snprintf(workers, sizeof workers, "%d", lv->workers);
                        snprintf(keys, sizeof keys, "%llu", (unsigned long long)c.keys);
                        snprintf(seeds, sizeof seeds, "%llu", (unsigned long long)seed);
                        char *wargv[] = {self, "_worker", "--mode", "run", "--lib", (char *)a->path,
                                         "--lib-sha256", (char *)a->sha256, "--cluster-file",
                                         c.cluster_file, "--out", prefix, "--workload", (char *)wname,
                                         "--workers", workers, "--warmup", warm, "--measured", meas,
                                         "--keys", keys, "--seed", seeds, NULL};
                        char *fargv[] = {self, "_worker", "--mode", "floor", "--cluster-file",
                                         c.cluster_file, "--out", prefix, "--workload", (char *)wname,
                                         "--workers", workers, "--warmup", warm, "--measured", meas,
                                         "--keys", keys, "--seed", seeds, NULL};
                        bench_spawn_result r;
                        if (bench_spawn(a->kind == BENCH_ARM_FLOOR ? fargv : wargv, log, c.malloc_lib,
                                        c.client_cpus, c.run_timeout_s, &r) < 0) {
                            r.exited = 1;
                            r.exit_code = 126;
                        }
                        run_time_sum += r.wall_s;
                        char desc[160];
                        bench_spawn_describe(&r, desc, sizeof desc);
                        kvfile kv;
                        int ok = r.exited && r.exit_code == 0 && kv_load(&kv, kvpath) == 0;
                        const char *st = ok ? kv_get(&kv, "status") : NULL;
                        char reason[1200];
                        if (!ok || !st || strcmp(st, "ok")) {
                            const char *why = ok ? kv_get(&kv, "failure") : NULL;
                            kvfile kv2;
                            int have2 = !ok && kv_load(&kv2, kvpath) == 0;
                            if (have2)
                                why = kv_get(&kv2, "failure");
                            snprintf(reason, sizeof reason, "run %s failed (%s%s%s)", id, desc,
                                     why ? ": " : "", why ? why : "");
                            if (have2)
                                kv_free(&kv2);
                            failed = 1;
                        } else {
                            double wall = kv_num(&kv, "window_wall_ns", 0) / 1e9;
                            say("        %.0f tx/s, %.0f retries, %.0f errors, %.1f s\n",
                                wall > 0 ? (double)lv->measured / wall : 0,
                                kv_num(&kv, "retries", 0), kv_num(&kv, "errors", 0), r.wall_s);
                        }
                        if (ok)
                            kv_free(&kv);
                        /* Gate results and design facts go into the run file. */
                        bench_health_result h = {0};
                        h.verdict = BENCH_HEALTH_UNVERIFIED;
                        h.log_queue_bytes = h.moving_bytes = -1;
                        snprintf(h.detail, sizeof h.detail, "server health gate disabled");
                        if (!failed && c.health_enabled)
                            health_gate(&c, self, dir, id, &h);
                        FILE *f = fopen(kvpath, "a");
                        if (f) {
                            kv_put_str(f, "manifest_sha256", c.manifest_sha256);
                            kv_put_str(f, "arm", a->name);
                            kv_put_int(f, "block", b);
                            kv_put_int(f, "position", p);
                            kv_put_str(f, "run_seed", seeds);
                            kv_put_str(f, "process", desc);
                            kv_put_num(f, "process_wall_s", r.wall_s);
                            kv_put_int(f, "quiet_pass", q.pass);
                            kv_put_num(f, "quiet_busiest_cpu", q.busiest_cpu);
                            kv_put_num(f, "quiet_aggregate", q.aggregate);
                            kv_put_str(f, "quiet_detail", q.detail);
                            kv_put_str(f, "health_verdict", c.health_enabled ? bench_health_name(h.verdict)
                                                                             : "disabled");
                            kv_put_num(f, "health_log_queue_bytes", h.log_queue_bytes);
                            kv_put_num(f, "health_moving_bytes", h.moving_bytes);
                            kv_put_str(f, "health_detail", h.detail);
                            fclose(f);
                        }
                        if (!failed && c.health_enabled &&
                            (h.verdict == BENCH_HEALTH_FAIL ||
                             (h.verdict == BENCH_HEALTH_UNVERIFIED && c.health_required))) {
                            snprintf(reason, sizeof reason,
                                     "server health gate after %s: %s", id, h.detail);
                            failed = 1;
                        }
                        if (failed) {
                            append_exclusion(dir, wname, lv->workers, reason);
                            say("        EXCLUDED %s w%d: %s\n", wname, lv->workers, reason);
                        }
                    }
                    if (!q.pass) {
                        char reason[700];
                        snprintf(reason, sizeof reason, "before %s: %s", id, q.detail);
                        append_exclusion(dir, wname, lv->workers, reason);
                        say("        EXCLUDED %s w%d: %s\n", wname, lv->workers, reason);
                        failed = 1;
                    }
                    runs_done++;
                }
            }
            if (failed) {
                excluded++;
                /* No partial ratios and no silent reruns: the rest of this
                 * comparison is skipped and counted as skipped. */
                int per = c.blocks * c.narms;
                int start_of_next = (wi * c.nlevels + li + 1) * per;
                runs_done = start_of_next;
            }
        }
    }
    char el[32];
    fmt_dur(now_s() - t_start, el, sizeof el);
    say("campaign done in %s: %d comparisons, %d excluded%s\n", el, c.nworkloads * c.nlevels,
        excluded, interrupted ? " (interrupted)" : "");
    bench_server_stop(&srv);
    if (campaign_log) {
        fclose(campaign_log);
        campaign_log = NULL;
    }
    *want_report = !ro.no_report;
    if (interrupted)
        rc = 130;
    return rc;
}
