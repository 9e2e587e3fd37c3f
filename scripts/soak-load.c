/* Load for scripts/soak-server.sh and the snapshot latency measurement; not part
 * of the build or of CI: the scripts compile it against build/src/api/libcfdb.so.
 *
 *   soak-load CLUSTER_FILE load N              N keys k%08d (24-byte values), 1,000 a
 *                                              transaction, 8 transactions in flight
 *   soak-load CLUSTER_FILE latency N SECONDS CONTROL_PORT TRIGGER
 *       reads random keys of the first N, each in a new transaction (read version + get),
 *       one after another, for SECONDS (the baseline); then sends TRIGGER to the server's
 *       control port ("snapshot start", or "snapshot" for a server without background
 *       snapshots) and keeps reading until "snapshot status" no longer says running (or
 *       the trigger returned, for "snapshot"); prints the slowest read, p99 and count of
 *       both phases.
 *   soak-load CLUSTER_FILE mixed SECONDS INTERVAL
 *       one read-modify-write transaction plus one 100-row range read after another for
 *       SECONDS; every INTERVAL seconds prints one line: operations, errors, p50/p99/max
 *       latency of each kind.
 *   soak-load CLUSTER_FILE count                prints how many k* keys there are
 *   soak-load CLUSTER_FILE bigreads SECONDS
 *       keeps 64 range reads of up to 80 KB replies in flight (stop the process with
 *       SIGSTOP to make it a client that never reads its replies).
 *
 * Latencies are wall-clock, per operation, in milliseconds. */
#define FDB_API_VERSION 730
#define _GNU_SOURCE
#include <foundationdb/fdb_c.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static FDBDatabase *g_db;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, fdb_error_t e)
{
    fprintf(stderr, "soak-load: %s: %d %s\n", what, e, fdb_get_error(e));
    exit(1);
}

static void *network_main(void *arg)
{
    (void)arg;
    fdb_error_t e = fdb_run_network();
    if (e)
        die("run_network", e);
    return NULL;
}

/* Waits; 0 or the future's error. */
static fdb_error_t wait_future(FDBFuture *f)
{
    fdb_error_t e = fdb_future_block_until_ready(f);
    return e ? e : fdb_future_get_error(f);
}

/* ---- samples ---- */

typedef struct samples {
    double *v;
    size_t n, cap;
    double max;
    unsigned long errors;
} samples;

static void add(samples *s, double ms)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v)
            exit(2);
    }
    s->v[s->n++] = ms;
    if (ms > s->max)
        s->max = ms;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(samples *s, double p)
{
    if (!s->n)
        return 0;
    qsort(s->v, s->n, sizeof *s->v, cmp_d);
    size_t i = (size_t)(p * (double)(s->n - 1));
    return s->v[i];
}

static void reset(samples *s)
{
    s->n = 0;
    s->max = 0;
    s->errors = 0;
}

/* ---- operations ---- */

static void key_of(long i, char *k)
{
    snprintf(k, 16, "k%08ld", i % 100000000);
}

/* One read in a new transaction. */
static fdb_error_t read_one(long i)
{
    FDBTransaction *tr;
    fdb_error_t e = fdb_database_create_transaction(g_db, &tr);
    if (e)
        return e;
    char k[16];
    key_of(i, k);
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)k, 9, 0);
    e = wait_future(f);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return e;
}

static void load(long n)
{
    enum { PER = 1000, INFLIGHT = 8 };
    long next = 0;
    int failures = 0;
    while (next < n) {
        FDBTransaction *tr[INFLIGHT];
        FDBFuture *f[INFLIGHT];
        long first[INFLIGHT];
        int k = 0;
        for (; k < INFLIGHT && next < n; k++) {
            if (fdb_database_create_transaction(g_db, &tr[k]))
                exit(1);
            first[k] = next;
            for (long i = next; i < next + PER && i < n; i++) {
                char key[16], val[32];
                key_of(i, key);
                snprintf(val, sizeof val, "value-%016ld-x", i);
                fdb_transaction_set(tr[k], (const uint8_t *)key, 9, (const uint8_t *)val, 24);
            }
            next += PER;
            f[k] = fdb_transaction_commit(tr[k]);
        }
        for (int j = 0; j < k; j++) {
            fdb_error_t e = wait_future(f[j]);
            fdb_future_destroy(f[j]);
            fdb_transaction_destroy(tr[j]);
            if (e) { /* redo from this block */
                next = first[j];
                if (++failures == 20) {
                    fprintf(stderr, "soak-load: commit: %s, 20 times in a row: giving up at key %ld\n",
                            fdb_get_error(e), next);
                    exit(3);
                }
                usleep(100000);
                break;
            }
            failures = 0;
        }
    }
}

static void report(const char *what, samples *s)
{
    printf("%-28s reads=%zu errors=%lu p50=%.2f ms p99=%.2f ms max=%.2f ms\n", what, s->n, s->errors, pct(s, 0.5),
           pct(s, 0.99), s->max);
}

/* One control command over a connection kept open (no process started per command, which
 * would disturb what is measured). 0 when the answer starts with "ok". */
static int g_control_fd = -1;

static int control(const char *port, const char *cmd, char *out, size_t cap)
{
    if (g_control_fd < 0) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        g_control_fd = socket(AF_INET, SOCK_STREAM, 0);
        if (g_control_fd < 0 || connect(g_control_fd, (struct sockaddr *)&a, sizeof a)) {
            perror("soak-load: control port");
            exit(1);
        }
    }
    char line[256];
    int n = snprintf(line, sizeof line, "%s\n", cmd);
    if (write(g_control_fd, line, (size_t)n) != n)
        return -1;
    size_t got = 0;
    while (got < cap - 1) {
        ssize_t r = read(g_control_fd, out + got, cap - 1 - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
        if (memchr(out, '\n', got))
            break;
    }
    out[got] = 0;
    return strncmp(out, "ok", 2) == 0 ? 0 : -1;
}

typedef struct trigger_arg {
    const char *port, *cmd;
    volatile int done;
} trigger_arg;

static void *trigger_main(void *arg)
{
    trigger_arg *t = arg;
    char out[512];
    double t0 = now_ms();
    int rc = control(t->port, t->cmd, out, sizeof out);
    printf("trigger \"%s\": %s (%.0f ms)\n", t->cmd, rc == 0 ? "ok" : out, now_ms() - t0);
    if (strcmp(t->cmd, "snapshot") != 0) { /* background: wait until it is done */
        for (;;) {
            usleep(20000);
            if (control(t->port, "snapshot status", out, sizeof out) != 0 || !strstr(out, "running"))
                break;
        }
        printf("snapshot finished %.0f ms after the trigger: %s", now_ms() - t0, out);
    }
    __atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void latency(long n, double seconds, const char *port, const char *cmd)
{
    samples base = { 0 }, during = { 0 };
    unsigned long long x = 88172645463325252ull;
    double end = now_ms() + seconds * 1e3;
    while (now_ms() < end) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double t0 = now_ms();
        if (read_one((long)(x % (unsigned long long)n)))
            base.errors++;
        add(&base, now_ms() - t0);
    }
    trigger_arg t = { port, cmd, 0 };
    pthread_t th;
    pthread_create(&th, NULL, trigger_main, &t);
    while (!__atomic_load_n(&t.done, __ATOMIC_SEQ_CST)) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double t0 = now_ms();
        if (read_one((long)(x % (unsigned long long)n)))
            during.errors++;
        add(&during, now_ms() - t0);
    }
    pthread_join(th, NULL);
    report("baseline", &base);
    report("during the snapshot", &during);
}

/* ---- mixed load ---- */

static fdb_error_t rmw(long i)
{
    FDBTransaction *tr;
    fdb_error_t e = fdb_database_create_transaction(g_db, &tr);
    if (e)
        return e;
    char k[16];
    key_of(i, k);
    for (;;) {
        FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)k, 9, 0);
        e = wait_future(f);
        fdb_future_destroy(f);
        if (!e) {
            char val[32];
            snprintf(val, sizeof val, "value-%016ld-y", i);
            fdb_transaction_set(tr, (const uint8_t *)k, 9, (const uint8_t *)val, 24);
            f = fdb_transaction_commit(tr);
            e = wait_future(f);
            fdb_future_destroy(f);
            if (!e)
                break;
        }
        f = fdb_transaction_on_error(tr, e);
        fdb_error_t e2 = wait_future(f);
        fdb_future_destroy(f);
        if (e2) {
            e = e2;
            break;
        }
    }
    fdb_transaction_destroy(tr);
    return e;
}

static fdb_error_t range100(long i)
{
    FDBTransaction *tr;
    fdb_error_t e = fdb_database_create_transaction(g_db, &tr);
    if (e)
        return e;
    char b[16];
    key_of(i, b);
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)b, 9),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)"l", 1), 100, 0,
                                             FDB_STREAMING_MODE_EXACT, 1, 0, 0);
    e = wait_future(f);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return e;
}

static void mixed(double seconds, double interval)
{
    samples w = { 0 }, r = { 0 };
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    double start = now_ms(), next = start + interval * 1e3, end = start + seconds * 1e3;
    while (now_ms() < end) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double t0 = now_ms();
        if (rmw((long)(x % 100000)))
            w.errors++;
        double t1 = now_ms();
        add(&w, t1 - t0);
        if (range100((long)(x % 100000)))
            r.errors++;
        add(&r, now_ms() - t1);
        if (now_ms() >= next) {
            printf("t=%.0fs rmw: n=%zu err=%lu p50=%.2f p99=%.2f max=%.2f ms | range100: n=%zu err=%lu p50=%.2f "
                   "p99=%.2f max=%.2f ms\n",
                   (now_ms() - start) / 1e3, w.n, w.errors, pct(&w, 0.5), pct(&w, 0.99), w.max, r.n, r.errors,
                   pct(&r, 0.5), pct(&r, 0.99), r.max);
            fflush(stdout);
            reset(&w);
            reset(&r);
            next += interval * 1e3;
        }
    }
}

static void count(void)
{
    FDBTransaction *tr;
    if (fdb_database_create_transaction(g_db, &tr))
        exit(1);
    char begin[16] = "k";
    int blen = 1;
    long n = 0;
    for (;;) {
        FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_THAN((const uint8_t *)begin, blen),
                                                 FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)"l", 1), 0, 0,
                                                 FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
        fdb_error_t e = wait_future(f);
        if (e)
            die("count", e);
        const FDBKeyValue *kv;
        int cnt;
        fdb_bool_t more;
        if ((e = fdb_future_get_keyvalue_array(f, &kv, &cnt, &more)))
            die("count", e);
        n += cnt;
        if (cnt) {
            blen = kv[cnt - 1].key_length < 15 ? kv[cnt - 1].key_length : 15;
            memcpy(begin, kv[cnt - 1].key, (size_t)blen);
        }
        fdb_future_destroy(f);
        if (!more || !cnt)
            break;
    }
    fdb_transaction_destroy(tr);
    printf("%ld keys\n", n);
}

static void bigreads(double seconds)
{
    enum { N = 64 };
    FDBTransaction *tr[N];
    FDBFuture *f[N];
    double end = now_ms() + seconds * 1e3;
    unsigned long rounds = 0;
    while (now_ms() < end) {
        for (int i = 0; i < N; i++) {
            if (fdb_database_create_transaction(g_db, &tr[i]))
                exit(1);
            f[i] = fdb_transaction_get_range(tr[i], FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)"k", 1),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)"l", 1), 2000,
                                             80000, FDB_STREAMING_MODE_EXACT, 1, 0, 0);
        }
        for (int i = 0; i < N; i++) {
            (void)wait_future(f[i]);
            fdb_future_destroy(f[i]);
            fdb_transaction_destroy(tr[i]);
        }
        rounds++;
    }
    printf("bigreads: %lu rounds of %d\n", rounds, N);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: see the comment at the top of scripts/soak-load.c\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    fdb_error_t e = fdb_select_api_version(FDB_API_VERSION);
    if (e)
        die("select_api_version", e);
    if ((e = fdb_setup_network()))
        die("setup_network", e);
    pthread_t net;
    pthread_create(&net, NULL, network_main, NULL);
    if ((e = fdb_create_database(argv[1], &g_db)))
        die("create_database", e);
    const char *mode = argv[2];
    if (!strcmp(mode, "load") && argc == 4) {
        double t0 = now_ms();
        load(atol(argv[3]));
        printf("loaded %s keys in %.1f s\n", argv[3], (now_ms() - t0) / 1e3);
    } else if (!strcmp(mode, "latency") && argc == 7) {
        latency(atol(argv[3]), atof(argv[4]), argv[5], argv[6]);
    } else if (!strcmp(mode, "mixed") && argc == 5) {
        mixed(atof(argv[3]), atof(argv[4]));
    } else if (!strcmp(mode, "count") && argc == 3) {
        count();
    } else if (!strcmp(mode, "bigreads") && argc == 4) {
        bigreads(atof(argv[3]));
    } else {
        fprintf(stderr, "soak-load: bad arguments\n");
        return 2;
    }
    fdb_database_destroy(g_db);
    if ((e = fdb_stop_network()))
        die("stop_network", e);
    pthread_join(net, NULL);
    return 0;
}
