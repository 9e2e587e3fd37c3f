/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench-records: the Record Layer phase's campaign (design in rl_bench.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "orders.h"
#include "rl_bench.h"
#include "server.h"
#include "spawn.h"
#include "stats.h"

#define MAX_BLOCKS 48
#define MAX_CASES 16
#define MAX_CONFIGS 4

static const char *const all_cases[] = {
    "save", "load", "index-scan", "fetch-1", "fetch-10", "fetch-1000", "fetch-1-rev",
    "fetch-10-rev", "fetch-1000-rev", "fetch-skip3of10", "fetch-split",
};

typedef struct config {
    char name[32];
    bool split;
    double delay_ms;
} config;

typedef struct result {
    const char *config, *kase;
    int arms, blocks;
    double est, lo, hi;          /* remote / saf ratio, or latency in microseconds */
    int conclusive;
    double req_per_op[2], in_flight[2];
    double mean_us[2];
} result;

static char self[PATH_MAX];

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* One command on cfdb-server's control port (127.0.0.1:port); the answer line in ans. 0 if "ok". */
static int control(int port, const char *cmd, char *ans, size_t cap)
{
    ans[0] = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = { 5, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char line[256];
    int n = snprintf(line, sizeof line, "%s\n", cmd);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 || write(fd, line, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < cap - 1) {
        ssize_t r = read(fd, ans + got, cap - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (memchr(ans, '\n', got))
            break;
    }
    close(fd);
    ans[got] = 0;
    return strncmp(ans, "ok", 2) == 0 ? 0 : -1;
}

/* The server's getMappedRange request count (control `status`, mapped_requests=), or -1. */
static long long mapped_requests(int port)
{
    char ans[2048];
    if (port <= 0 || control(port, "status", ans, sizeof ans))
        return -1;
    const char *p = strstr(ans, " mapped_requests=");
    return p ? strtoll(p + 17, NULL, 10) : -1;
}

static int run_proc(char *const *argv, const char *log, double timeout)
{
    bench_spawn_result r;
    if (bench_spawn(argv, log, "", "", timeout, &r))
        return -1;
    return r.exited && r.exit_code == 0 ? 0 : -1;
}

static double mean_of(const char *lat_path, int *n_out)
{
    FILE *f = fopen(lat_path, "r");
    if (!f)
        return NAN;
    double sum = 0;
    int n = 0;
    unsigned long long v;
    while (fscanf(f, "%llu", &v) == 1) {
        sum += (double)v;
        n++;
    }
    fclose(f);
    *n_out = n;
    return n ? sum / n : NAN;
}

static double kv_num(const char *kv_path, const char *key)
{
    FILE *f = fopen(kv_path, "r");
    if (!f)
        return NAN;
    char line[256];
    double v = NAN;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == '=')
            v = strtod(line + kl + 1, NULL);
    fclose(f);
    return v;
}

/* The text of key in a .kv file into out ("" when absent). */
static void kv_text(const char *kv_path, const char *key, char *out, size_t cap)
{
    out[0] = 0;
    FILE *f = fopen(kv_path, "r");
    if (!f)
        return;
    char line[2048];
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == '=') {
            size_t l = strcspn(line + kl + 1, "\n");
            if (l >= cap)
                l = cap - 1;
            memcpy(out, line + kl + 1, l);
            out[l] = 0;
        }
    fclose(f);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: cfdb-bench records [options]   (cfdb-bench-records)\n"
            "  --out DIR          campaign folder (default ./cfdb-bench-records-YYYYmmdd-HHMMSS)\n"
            "  --server PATH      cfdb-server (default: ../src/server/cfdb-server or next to this binary)\n"
            "  --cluster-file F   run against an existing cluster instead of starting cfdb-server: one\n"
            "                     configuration, `cluster', with the shards as the cluster placed them\n"
            "                     (the store is written under the tuple prefix (\"cfdb-bench-rl\"), which is\n"
            "                     cleared first); --configs does not apply\n"
            "  --control-port P   with --cluster-file: the cluster is a cfdb-server with this control port\n"
            "                     on 127.0.0.1; its mapped-request counter is checked against the client's\n"
            "  --quick            short form: 2 blocks, 20+3 ops per run, 1,200 records, 6 split ones,\n"
            "                     fetch cases only, configurations same-0 and split-0.5\n"
            "  --blocks N         blocks per comparison (default 6, rounded up to a multiple of 2)\n"
            "  --ops N            measured ops per run (default 200); --warmup N (default 20)\n"
            "  --records N        small records (default 2000, at least 1,010); --big N split records (default 20)\n"
            "  --cases LIST       of save,load,index-scan,fetch-1,fetch-10,fetch-1000,fetch-1-rev,\n"
            "                     fetch-10-rev,fetch-1000-rev,fetch-skip3of10,fetch-split (default all)\n"
            "  --configs LIST     of same-0,same-0.5,split-0,split-0.5 (default all)\n"
            "Each configuration's placement (the storage servers of the name index and of the records,\n"
            "from fdb_transaction_get_addresses_for_key) is written to placement.tsv and summary.md.\n"
            "Against a cfdb-server (the ones started here, or --control-port) every run's getMappedRange\n"
            "requests counted by the server must equal the remote-fetch cursor's (0 for scan-and-fetch).\n");
}

static bool in_list(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && !strncmp(p, name, n))
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

static void find_server(char *out, size_t cap)
{
    char dir[PATH_MAX - 64];
    size_t n = strlen(self) < sizeof dir - 1 ? strlen(self) : sizeof dir - 1;
    memcpy(dir, self, n);
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    snprintf(out, cap, "%s/../src/server/cfdb-server", dir);
    if (access(out, X_OK) == 0)
        return;
    snprintf(out, cap, "%s/cfdb-server", dir);
}

/* The index space of the bench store, P + (2), as cfdb-server's --shards text. */
static void index_space_key(char *out, size_t cap)
{
    static const char prefix[] = "cfdb-bench-rl";
    size_t at = 0;
    at += (size_t)snprintf(out + at, cap - at, "\\x02");
    for (const char *p = prefix; *p; p++)
        at += (size_t)snprintf(out + at, cap - at, "%c", *p);
    snprintf(out + at, cap - at, "\\x00\\x15\\x02");
}

int bench_rl_main(int argc, char **argv)
{
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sl > 0 ? sl : 0] = 0;
    char out[PATH_MAX] = "", server_bin[PATH_MAX] = "", cluster_file[PATH_MAX] = "";
    int control_port = 0;
    const char *cases = NULL, *configs = NULL;
    int blocks = 6;
    unsigned long long ops = 200, warmup = 20, records = 2000, big = 20;
    bool quick = false;
    static const struct option opts[] = {
        {"out", 1, 0, 'o'}, {"server", 1, 0, 'S'}, {"quick", 0, 0, 'q'}, {"blocks", 1, 0, 'B'},
        {"ops", 1, 0, 'n'}, {"warmup", 1, 0, 'w'}, {"records", 1, 0, 'r'}, {"big", 1, 0, 'b'},
        {"cases", 1, 0, 'c'}, {"configs", 1, 0, 'C'}, {"help", 0, 0, 'h'}, {"cluster-file", 1, 0, 'F'},
        {"control-port", 1, 0, 'P'}, {0, 0, 0, 0},
    };
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'o': snprintf(out, sizeof out, "%s", optarg); break;
        case 'S': snprintf(server_bin, sizeof server_bin, "%s", optarg); break;
        case 'q': quick = true; break;
        case 'B': blocks = atoi(optarg); break;
        case 'n': ops = strtoull(optarg, NULL, 10); break;
        case 'w': warmup = strtoull(optarg, NULL, 10); break;
        case 'r': records = strtoull(optarg, NULL, 10); break;
        case 'b': big = strtoull(optarg, NULL, 10); break;
        case 'c': cases = optarg; break;
        case 'C': configs = optarg; break;
        case 'F': {
            char *r = realpath(optarg, NULL);
            if (!r) {
                fprintf(stderr, "cfdb-bench records: cluster file %s not found\n", optarg);
                return 2;
            }
            snprintf(cluster_file, sizeof cluster_file, "%s", r);
            free(r);
            break;
        }
        case 'P': control_port = atoi(optarg); break;
        default: usage(); return ch == 'h' ? 0 : 2;
        }
    }
    if (quick) {
        blocks = 2;
        ops = 20;
        warmup = 3;
        records = 1200;
        big = 6;
        if (!cases)
            cases = "fetch-1,fetch-10,fetch-1000,fetch-1-rev,fetch-10-rev,fetch-1000-rev,fetch-skip3of10,fetch-split";
        if (!configs)
            configs = "same-0,split-0.5";
    }
    if (records < 1010 || blocks < 1 || blocks > MAX_BLOCKS || !ops || control_port < 0 || control_port > 65535 ||
        (control_port && !cluster_file[0])) {
        usage();
        return 2;
    }
    if (!out[0]) {
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(out, sizeof out, "cfdb-bench-records-%Y%m%d-%H%M%S", &tm);
    }
    if (!server_bin[0])
        find_server(server_bin, sizeof server_bin);
    char runs[PATH_MAX + 8];
    snprintf(runs, sizeof runs, "%s/runs", out);
    if ((mkdir(out, 0755) && errno != EEXIST) || (mkdir(runs, 0755) && errno != EEXIST)) {
        fprintf(stderr, "cfdb-bench records: cannot create %s\n", out);
        return 1;
    }
    blocks = bench_blocks_for(2, blocks);
    int orders[MAX_BLOCKS * 2];
    bench_orders(2, blocks, orders);

    static const config all_configs[] = {
        { "same-0", false, 0 }, { "same-0.5", false, 0.5 }, { "split-0", true, 0 }, { "split-0.5", true, 0.5 },
    };
    static const config cluster_config[] = { { "cluster", false, 0 } };
    const config *cfgs = cluster_file[0] ? cluster_config : all_configs;
    size_t ncfgs = cluster_file[0] ? 1 : sizeof all_configs / sizeof all_configs[0];
    static result results[MAX_CONFIGS * MAX_CASES];
    static struct {
        char config[32], index_servers[1024], record_servers[1024], placement[32];
        long long checked, mismatched;
    } places[MAX_CONFIGS];
    int nresults = 0, failures = 0, nplaces = 0;
    for (size_t ci = 0; ci < ncfgs; ci++) {
        const config *cf = &cfgs[ci];
        if (!cluster_file[0] && !in_list(configs, cf->name))
            continue;
        char port[16], key[128], err[512];
        int ctl_port = cluster_file[0] ? control_port : free_port();
        snprintf(port, sizeof port, "%d", ctl_port);
        index_space_key(key, sizeof key);
        const char *extra_same[] = { "--control-port", port, NULL };
        const char *extra_split[] = { "--control-port", port, "--shards", key, "--separate-ports", NULL };
        bench_server srv;
        memset(&srv, 0, sizeof srv);
        if (cluster_file[0]) {
            snprintf(srv.cluster_file, sizeof srv.cluster_file, "%s", cluster_file);
        } else if (bench_server_start_args(server_bin, out, "", cf->split ? extra_split : extra_same, 30, &srv, err,
                                           sizeof err)) {
            fprintf(stderr, "cfdb-bench records: %s\n", err);
            return 1;
        }
        char log[PATH_MAX + 32], recs[32], bigs[32];
        snprintf(log, sizeof log, "%s/worker.log", out);
        snprintf(recs, sizeof recs, "%llu", records);
        snprintf(bigs, sizeof bigs, "%llu", big);
        char *pop[] = { self, "_populate", "--cluster-file", srv.cluster_file, "--records", recs, "--big", bigs, NULL };
        if (run_proc(pop, log, 600)) {
            fprintf(stderr, "cfdb-bench records: populate failed, see %s\n", log);
            if (srv.pid > 0)
                bench_server_stop(&srv);
            return 1;
        }
        if (cf->delay_ms > 0) {
            char d[64], ans[256];
            snprintf(d, sizeof d, "delay %g", cf->delay_ms);
            if (control(ctl_port, d, ans, sizeof ans)) {
                fprintf(stderr, "cfdb-bench records: cannot set the delay\n");
                bench_server_stop(&srv);
                return 1;
            }
        }
        /* where the cluster put the index and the records */
        char place_prefix[2 * PATH_MAX], place_kv[2 * PATH_MAX + 8];
        snprintf(place_prefix, sizeof place_prefix, "%s/%.31s-placement", runs, cf->name);
        snprintf(place_kv, sizeof place_kv, "%s.kv", place_prefix);
        char *plc[] = { self, "_placement", "--cluster-file", srv.cluster_file, "--out", place_prefix, NULL };
        __typeof__(places[0]) *pl = &places[nplaces++];
        memset(pl, 0, sizeof *pl);
        snprintf(pl->config, sizeof pl->config, "%.31s", cf->name);
        if (run_proc(plc, log, 60) == 0) {
            kv_text(place_kv, "index_servers", pl->index_servers, sizeof pl->index_servers);
            kv_text(place_kv, "record_servers", pl->record_servers, sizeof pl->record_servers);
            kv_text(place_kv, "placement", pl->placement, sizeof pl->placement);
        } else {
            snprintf(pl->placement, sizeof pl->placement, "unknown");
        }
        if (!cluster_file[0] && strcmp(pl->placement, cf->split ? "different" : "same") != 0) {
            fprintf(stderr, "cfdb-bench records: config %s: index and records placed `%s'\n", cf->name, pl->placement);
            failures++;
        }
        bool counted = mapped_requests(ctl_port) >= 0;
        if (cluster_file[0] && control_port && !counted) {
            fprintf(stderr, "cfdb-bench records: no mapped_requests from the control port %d\n", control_port);
            return 1;
        }
        fprintf(stderr, "config %s (index on %s, records on %s: %s; delay %g ms%s)\n", cf->name, pl->index_servers,
                pl->record_servers, pl->placement, cf->delay_ms,
                counted ? "; mapped requests checked with the server's counter" : "");
        for (size_t k = 0; k < sizeof all_cases / sizeof all_cases[0]; k++) {
            const char *kase = all_cases[k];
            if (!in_list(cases, kase))
                continue;
            bool fetch = !strncmp(kase, "fetch-", 6);
            int narms = fetch ? 2 : 1;
            static const char *const arm_names[] = { "remote", "saf" };
            double means[MAX_BLOCKS][2], req[2] = { 0, 0 }, inflight[2] = { 0, 0 };
            for (int b = 0; b < blocks; b++) {
                for (int i = 0; i < narms; i++) {
                    int arm = narms == 2 ? orders[b * 2 + i] : 0;
                    char prefix[2 * PATH_MAX], seed[32], opss[32], warms[32], lat[2 * PATH_MAX + 8], kv[2 * PATH_MAX + 8];
                    snprintf(prefix, sizeof prefix, "%s/%s-%s-b%d-%s", runs, cf->name, kase, b,
                             fetch ? arm_names[arm] : "only");
                    snprintf(seed, sizeof seed, "%d", 1000 + b * 7919 + (int)k);
                    snprintf(opss, sizeof opss, "%llu", ops);
                    snprintf(warms, sizeof warms, "%llu", warmup);
                    char *w[] = { self, "_run", "--cluster-file", srv.cluster_file, "--case", (char *)kase,
                                  "--arm", (char *)(fetch ? arm_names[arm] : "saf"), "--ops", opss, "--warmup",
                                  warms, "--seed", seed, "--records", recs, "--big", bigs, "--out", prefix, NULL };
                    long long before = counted ? mapped_requests(ctl_port) : -1;
                    if (run_proc(w, log, 600)) {
                        fprintf(stderr, "  %s %s block %d failed (see %s)\n", kase, fetch ? arm_names[arm] : "run", b, log);
                        failures++;
                    }
                    snprintf(lat, sizeof lat, "%s.lat", prefix);
                    snprintf(kv, sizeof kv, "%s.kv", prefix);
                    if (counted && fetch) {
                        /* the server's getMappedRange requests of this run = the remote cursor's
                         * (measured and warm-up ops), and none for scan-and-fetch */
                        long long after = mapped_requests(ctl_port);
                        double want = arm == 0 ? kv_num(kv, "requests") + kv_num(kv, "warmup_requests") : 0;
                        pl->checked++;
                        if (before < 0 || after < 0 || isnan(want) || (double)(after - before) != want ||
                            (arm == 0 && want <= 0)) {
                            fprintf(stderr, "  %s %s block %d: the server counted %lld mapped requests, the client %.0f\n",
                                    kase, arm_names[arm], b, after - before, want);
                            pl->mismatched++;
                            failures++;
                        }
                    }
                    int n = 0;
                    means[b][arm] = mean_of(lat, &n);
                    req[arm] += kv_num(kv, "requests") / kv_num(kv, "ops") / blocks;
                    double mif = kv_num(kv, "max_in_flight");
                    if (mif > inflight[arm])
                        inflight[arm] = mif;
                }
            }
            result *r = &results[nresults++];
            memset(r, 0, sizeof *r);
            r->config = cf->name;
            r->kase = kase;
            r->arms = narms;
            r->blocks = blocks;
            double vals[MAX_BLOCKS];
            for (int b = 0; b < blocks; b++)
                vals[b] = narms == 2 ? means[b][0] / means[b][1] : means[b][0] / 1000.0;
            for (int a = 0; a < narms; a++) {
                double s = 0;
                for (int b = 0; b < blocks; b++)
                    s += means[b][a];
                r->mean_us[a] = s / blocks / 1000.0;
                r->req_per_op[a] = req[a];
                r->in_flight[a] = inflight[a];
            }
            bench_ci bci;
            if (bench_bootstrap_geomean(vals, (size_t)blocks, BENCH_BOOTSTRAP_RESAMPLES, BENCH_BOOTSTRAP_SEED,
                                        BENCH_BOOTSTRAP_CONFIDENCE, &bci) == 0) {
                r->est = bci.estimate;
                r->lo = bci.lo;
                r->hi = bci.hi;
                r->conclusive = bci.conclusive;
            } else {
                r->est = r->lo = r->hi = NAN;
            }
            if (narms == 2)
                fprintf(stderr, "  %-16s remote/saf %.3f [%.3f, %.3f]  (remote %.0f us, %.2f req/op; saf %.0f us, %.0f in flight)\n",
                        kase, r->est, r->lo, r->hi, r->mean_us[0], r->req_per_op[0], r->mean_us[1], r->in_flight[1]);
            else
                fprintf(stderr, "  %-16s %.0f us [%.0f, %.0f]\n", kase, r->est, r->lo, r->hi);
        }
        if (srv.pid > 0)
            bench_server_stop(&srv);
    }

    /* results.tsv, summary.md, placement.tsv, the plot */
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/results.tsv", out);
    FILE *t = fopen(path, "w");
    snprintf(path, sizeof path, "%s/summary.md", out);
    FILE *m = fopen(path, "w");
    snprintf(path, sizeof path, "%s/ratios.dat", out);
    FILE *d = fopen(path, "w");
    if (!t || !m || !d) {
        fprintf(stderr, "cfdb-bench records: cannot write results in %s\n", out);
        return 1;
    }
    fprintf(t, "config\tcase\tmetric\testimate\tlo\thi\tconclusive\tremote_us\tsaf_us\tremote_requests_per_op\tsaf_max_in_flight\n");
    fprintf(m, "# cfdb-bench records\n\n%d blocks per comparison, %llu+%llu ops per run, %llu records (+%llu split).\n"
               "Ratios are USE_REMOTE_FETCH / SCAN_AND_FETCH mean latency per op (geometric mean over blocks,\n"
               "95 %% percentile bootstrap); below 1 means remote fetch is faster.\n\n"
               "| config | case | remote/saf | 95 %% interval | remote µs | saf µs | remote req/op | saf in flight |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- |\n",
            blocks, warmup, ops, records, big);
    int di = 0;
    for (int i = 0; i < nresults; i++) {
        const result *r = &results[i];
        if (r->arms == 2) {
            fprintf(t, "%s\t%s\tratio\t%.4f\t%.4f\t%.4f\t%d\t%.1f\t%.1f\t%.2f\t%.0f\n", r->config, r->kase, r->est,
                    r->lo, r->hi, r->conclusive, r->mean_us[0], r->mean_us[1], r->req_per_op[0], r->in_flight[1]);
            fprintf(m, "| %s | %s | %.3f | [%.3f, %.3f]%s | %.0f | %.0f | %.2f | %.0f |\n", r->config, r->kase,
                    r->est, r->lo, r->hi, r->conclusive ? "" : " inconclusive", r->mean_us[0], r->mean_us[1],
                    r->req_per_op[0], r->in_flight[1]);
            fprintf(d, "%d \"%s %s\" %.4f %.4f %.4f\n", di++, r->config, r->kase, r->est, r->lo, r->hi);
        } else {
            fprintf(t, "%s\t%s\tlatency_us\t%.1f\t%.1f\t%.1f\t\t\t\t\t\n", r->config, r->kase, r->est, r->lo, r->hi);
        }
    }
    fprintf(m, "\n%s\n\n| config | index on | records on | placement | mapped requests checked against the server |\n"
               "| --- | --- | --- | --- | --- |\n",
            cluster_file[0] ? "Against an existing cluster (--cluster-file)." : "Against the cfdb-server started per configuration.");
    snprintf(path, sizeof path, "%s/placement.tsv", out);
    FILE *pt = fopen(path, "w");
    if (pt)
        fprintf(pt, "config\tindex_servers\trecord_servers\tplacement\tmapped_checked\tmapped_mismatched\n");
    for (int i = 0; i < nplaces; i++) {
        char chk[64];
        if (places[i].checked)
            snprintf(chk, sizeof chk, "%lld runs, %lld differ", places[i].checked, places[i].mismatched);
        else
            snprintf(chk, sizeof chk, "no (no control port)");
        fprintf(m, "| %s | %s | %s | %s | %s |\n", places[i].config, places[i].index_servers,
                places[i].record_servers, places[i].placement, chk);
        if (pt)
            fprintf(pt, "%s\t%s\t%s\t%s\t%lld\t%lld\n", places[i].config, places[i].index_servers,
                    places[i].record_servers, places[i].placement, places[i].checked, places[i].mismatched);
    }
    if (pt)
        fclose(pt);
    fprintf(m, "\n| config | case | latency µs (geomean of block means) | 95 %% interval |\n| --- | --- | --- | --- |\n");
    for (int i = 0; i < nresults; i++)
        if (results[i].arms == 1)
            fprintf(m, "| %s | %s | %.0f | [%.0f, %.0f] |\n", results[i].config, results[i].kase,
                    results[i].est, results[i].lo, results[i].hi);
    fclose(t);
    fclose(d);
    if (di && system("command -v gnuplot >/dev/null 2>&1") == 0) {
        snprintf(path, sizeof path, "%s/ratios.gp", out);
        FILE *g = fopen(path, "w");
        if (g) {
            fprintf(g, "set terminal png size 1200,%d noenhanced\nset output '%s/records.png'\n"
                       "set title 'USE_REMOTE_FETCH / SCAN_AND_FETCH latency (95%% bootstrap)'\n"
                       "set xtics rotate by -60\nset grid y\nset yrange [0:*]\nset xrange [-1:%d]\n"
                       "set arrow from -1,1 to %d,1 nohead dt 2\nunset key\n"
                       "plot '%s/ratios.dat' using 1:3:4:5:xtic(2) with yerrorbars pt 7\n",
                    600, out, di, di, out);
            fclose(g);
            char cmd[PATH_MAX * 2 + 64];
            snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>>'%s/gnuplot.log'", path, out);
            if (system(cmd) == 0)
                fprintf(m, "\n![ratios](records.png)\n");
        }
    }
    fclose(m);
    fprintf(stderr, "cfdb-bench records: results in %s/summary.md\n", out);
    return failures ? 1 : 0;
}
