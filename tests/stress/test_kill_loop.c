/* kill -9 in a loop (issue 9). cfdb-server --datadir runs as a child process; NW writer
 * threads, each with its own wire-client connection (tests/server_wire/wire_client.h),
 * commit without pause while the test kills the server at random moments (before, during
 * and after commits, and sometimes right after asking for a snapshot). Each writer keeps a
 * client-side log: per sequence number "never attempted", "attempted" (sent, answer
 * unknown) or "acknowledged". After every restart, with the writers parked:
 *   - every acknowledged commit is there (key w<i>/<seq> with its value);
 *   - nothing present was never attempted (no key beyond the log, no stray keys);
 *   - each writer's counter (an ADD in every one of its commits) equals the number of
 *     its commits present: commits are atomic and applied once.
 * Between a kill and the restart the test sometimes appends to the WAL what a crash in
 * the middle of a write leaves: a torn prefix of a record, or a whole record whose
 * checksum does not match (WAL layout in src/server/wal.h). Such a record is never
 * acknowledged, so its key ("never/...") must not appear, and the commits acknowledged
 * after the recovery must survive the next kill: a WAL that kept the torn tail, or one
 * that skipped the checksum, fails here. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include <cmocka.h>

#include "endpoint.h"
#include "mutation.h"
#include "tcp.h"
#include "server_proc.h"
#include "wire_client.h"

#define NW 4
#define KILLS 60
#define MAXSEQ 200000

enum { S_NONE = 0, S_ATTEMPTED, S_ACKED };

typedef struct writer {
    int id;
    pthread_t th;
    uint8_t *state;
    uint32_t next_seq;
    uint64_t acked, unknown;
} writer;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned gen;   /* server generation the writers may use */
    int parked;     /* writers waiting for the next generation */
    bool stop;
    uint16_t port;
    char key[128];
} g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false, 0, { 0 } };

static writer g_w[NW];
static sp_proc g_p;
static char g_dir[256], g_data[300], g_wal[320];

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Waits for a generation after `seen`; false when stopping. */
static bool park(unsigned seen, unsigned *gen, uint16_t *port, char *key)
{
    pthread_mutex_lock(&g.mu);
    g.parked++;
    pthread_cond_broadcast(&g.cv);
    while (g.gen == seen && !g.stop)
        pthread_cond_wait(&g.cv, &g.mu);
    bool go = !g.stop;
    *gen = g.gen;
    *port = g.port;
    memcpy(key, g.key, sizeof g.key);
    pthread_mutex_unlock(&g.mu);
    return go;
}

static void *writer_main(void *arg)
{
    writer *me = arg;
    cfdb_loop *loop = cfdb_loop_create();
    unsigned gen = 0;
    uint16_t port;
    char key[128];
    sp_proc target;
    while (park(gen, &gen, &port, key)) {
        memset(&target, 0, sizeof target);
        target.port = port;
        memcpy(target.key, key, sizeof target.key);
        cfdb_arena a;
        cfdb_arena_init(&a);
        wc w;
        if (sp_connect(&w, loop, &target, &a) == 0) {
            int64_t rv = wc_grv(&w);
            while (rv > 0 && me->next_seq < MAXSEQ) {
                uint32_t seq = me->next_seq++;
                char k[32], v[32], ck[16];
                snprintf(k, sizeof k, "w%d/%07u", me->id, seq);
                snprintf(v, sizeof v, "s%u", seq);
                snprintf(ck, sizeof ck, "c%d", me->id);
                wc_txn t;
                memset(&t, 0, sizeof t);
                t.read_snapshot = rv;
                wc_txn_set(&t, &a, k, v);
                uint64_t one = 1;
                cfdb_bytes op, ckey;
                cfdb_arena_dup_bytes(&a, cfdb_bytes_make(&one, 8), &op);
                cfdb_arena_dup_bytes(&a, cfdb_bytes_str(ck), &ckey);
                wc_txn_atomic(&t, &a, CFDB_MUT_ADD_VALUE, ckey, op);
                me->state[seq] = S_ATTEMPTED;
                cfdb_commit_id id;
                int rc = wc_commit(&w, &t, &id, &a);
                if (rc == 0) {
                    me->state[seq] = S_ACKED;
                    me->acked++;
                } else {
                    me->unknown++; /* connection lost mid-commit (or an error): maybe applied */
                    break;
                }
                if ((seq & 63) == 63) { /* keep the arena small */
                    cfdb_arena_free(&a);
                    cfdb_arena_init(&a);
                }
            }
        }
        wc_close(&w);
        cfdb_arena_free(&a);
    }
    cfdb_loop_destroy(loop);
    return NULL;
}

/* Waits until every writer is parked (they all lose their connection at the kill). */
static void wait_parked(void)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 30;
    pthread_mutex_lock(&g.mu);
    while (g.parked < NW)
        if (pthread_cond_timedwait(&g.cv, &g.mu, &dl)) {
            pthread_mutex_unlock(&g.mu);
            fail_msg("writers did not notice the kill");
        }
    pthread_mutex_unlock(&g.mu);
}

static void release_writers(void)
{
    pthread_mutex_lock(&g.mu);
    g.parked = 0;
    g.port = g_p.port;
    memcpy(g.key, g_p.key, sizeof g.key);
    g.gen++;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
}

typedef struct check_stats {
    uint64_t keys, acked_checked, unacked_present;
} check_stats;

/* Reads every key below \xff and checks the writers' logs against it. */
static void check_store(check_stats *st)
{
    cfdb_loop *loop = cfdb_loop_create();
    cfdb_arena a;
    cfdb_arena_init(&a);
    wc w;
    assert_int_equal(sp_connect(&w, loop, &g_p, &a), 0);
    int64_t v = wc_grv(&w);
    assert_true(v > 0);
    cfdb_uid ss;
    assert_int_equal(wc_locate(&w, CFDB_BYTES_LIT(""), &ss, NULL, NULL, &a), 0);
    uint32_t present[NW] = { 0 };
    int64_t counter[NW];
    bool have_counter[NW] = { false };
    static uint8_t seen[NW][MAXSEQ];
    memset(seen, 0, sizeof seen);
    st->unacked_present = 0; /* recounted each time: the last check's number is reported */
    cfdb_key_selector b = { CFDB_BYTES_LIT(""), false, 1 };
    for (;;) {
        cfdb_get_key_values_reply kv;
        assert_int_equal(
            wc_get_range(&w, ss, b, (cfdb_key_selector){ CFDB_BYTES_LIT("\xff"), false, 1 }, v, 1000, 1 << 22, &kv, &a),
            0);
        for (uint32_t i = 0; i < kv.data.count; i++) {
            cfdb_bytes k = kv.data.items[i].key, val = kv.data.items[i].value;
            char ks[64], vs[64];
            snprintf(ks, sizeof ks, "%.*s", (int)k.len, (const char *)k.ptr);
            snprintf(vs, sizeof vs, "%.*s", (int)val.len, (const char *)val.ptr);
            int wid;
            unsigned seq;
            char tail;
            st->keys++;
            if (sscanf(ks, "w%d/%7u%c", &wid, &seq, &tail) == 2 && wid >= 0 && wid < NW && seq < MAXSEQ) {
                if (g_w[wid].state[seq] == S_NONE)
                    fail_msg("%s is present but was never attempted", ks);
                char want[32];
                snprintf(want, sizeof want, "s%u", seq);
                if (strcmp(vs, want) != 0)
                    fail_msg("%s = %s, expected %s", ks, vs, want);
                if (g_w[wid].state[seq] == S_ATTEMPTED)
                    st->unacked_present++;
                seen[wid][seq] = 1;
                present[wid]++;
            } else if (sscanf(ks, "c%d%c", &wid, &tail) == 1 && wid >= 0 && wid < NW && val.len == 8) {
                memcpy(&counter[wid], val.ptr, 8);
                have_counter[wid] = true;
            } else {
                fail_msg("unexpected key %s (a commit never attempted, or a corrupt WAL record applied)", ks);
            }
        }
        if (!kv.more || kv.data.count == 0)
            break;
        /* the next page starts after the last key: keep it while the arena is recycled */
        static uint8_t last[256];
        cfdb_bytes lk = kv.data.items[kv.data.count - 1].key;
        assert_true(lk.len <= sizeof last);
        memcpy(last, lk.ptr, lk.len);
        b = (cfdb_key_selector){ cfdb_bytes_make(last, lk.len), true, 1 };
        cfdb_arena_free(&a);
        cfdb_arena_init(&a);
    }
    for (int i = 0; i < NW; i++) {
        for (uint32_t s = 0; s < g_w[i].next_seq; s++)
            if (g_w[i].state[s] == S_ACKED) {
                if (!seen[i][s])
                    fail_msg("acknowledged commit w%d/%07u is missing after the restart", i, s);
                st->acked_checked++;
            }
        if (present[i] && !have_counter[i])
            fail_msg("writer %d: %u commits present but no counter", i, present[i]);
        if (have_counter[i] && counter[i] != (int64_t)present[i])
            fail_msg("writer %d: counter %lld but %u of its commits present", i, (long long)counter[i], present[i]);
    }
    wc_close(&w);
    cfdb_arena_free(&a);
    cfdb_loop_destroy(loop);
}

/* The version of the last whole record in the WAL (0 if none) and the log's length. */
static int64_t wal_last_version(size_t *len_out)
{
    FILE *f = fopen(g_wal, "rb");
    *len_out = 0;
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    size_t off = 0;
    int64_t last = 0;
    while (off + 12 + 8 <= (size_t)n) {
        uint32_t plen;
        memcpy(&plen, p + off, 4);
        if (off + 12 + plen > (size_t)n)
            break;
        memcpy(&last, p + off + 12, 8);
        off += 12 + plen;
    }
    free(p);
    *len_out = (size_t)n;
    return last;
}

/* Appends what a crash in the middle of writing one more record would leave: its first
 * `keep` bytes, or (keep == SIZE_MAX) all of it with a wrong checksum. The record would
 * set never/<n>: a key no writer ever attempts. */
static void append_torn(int n, uint64_t *rng, int *torn, int *badsum)
{
    size_t len;
    int64_t last = wal_last_version(&len);
    if (last == 0)
        return; /* an empty log (right after a snapshot): nothing to tear after */
    char key[32];
    int kl = snprintf(key, sizeof key, "never/%03d", n);
    uint8_t rec[128];
    size_t o = 12;
    int64_t ver = last + 1;
    uint32_t cnt = 1, l1 = (uint32_t)kl, l2 = 5;
    memcpy(rec + o, &ver, 8);
    o += 8;
    memcpy(rec + o, &cnt, 4);
    o += 4;
    rec[o++] = CFDB_MUT_SET_VALUE;
    memcpy(rec + o, &l1, 4);
    o += 4;
    memcpy(rec + o, key, (size_t)kl);
    o += (size_t)kl;
    memcpy(rec + o, &l2, 4);
    o += 4;
    memcpy(rec + o, "never", 5);
    o += 5;
    uint32_t plen = (uint32_t)(o - 12);
    uint64_t h = XXH3_64bits(rec + 12, plen);
    memcpy(rec, &plen, 4);
    memcpy(rec + 4, &h, 8);
    size_t keep;
    if (n % 2) {
        keep = 1 + (size_t)(rnd(rng) % (o - 1)); /* 1 .. o-1 bytes */
        (*torn)++;
    } else {
        rec[4 + rnd(rng) % 8] ^= (uint8_t)(1u << (rnd(rng) % 8)); /* one checksum bit */
        keep = o;
        (*badsum)++;
    }
    int fd = open(g_wal, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, rec, keep), (ssize_t)keep);
    close(fd);
}

static void control_snapshot(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(0x7f000001);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        static const char cmd[] = "snapshot\n";
        if (write(fd, cmd, sizeof cmd - 1) < 0) {
            /* the server may be gone already */
        }
    }
    close(fd);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void start(uint16_t *cport)
{
    char cp[16];
    *cport = test_free_port();
    assert_true(*cport != 0);
    snprintf(cp, sizeof cp, "%u", *cport);
    const char *const args[] = { "--storage-servers", "1", "--control-port", cp, NULL };
    /* the control port was free a moment ago; if someone took it, try another */
    for (int i = 0; i < 5; i++) {
        if (sp_start(&g_p, CFDB_SERVER_BIN, g_dir, g_data, args) == 0)
            return;
        *cport = test_free_port();
        snprintf(cp, sizeof cp, "%u", *cport);
    }
    fail_msg("cfdb-server did not start");
}

static void test_kill9_loop(void **state)
{
    (void)state;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-killloop-%d", (int)getpid());
    snprintf(g_data, sizeof g_data, "%s/data", g_dir);
    snprintf(g_wal, sizeof g_wal, "%s/wal", g_data);
    mkdir(g_dir, 0755);
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)t0.tv_nsec << 20) ^ (uint64_t)getpid();
    if (getenv("CFDB_STRESS_SEED")) /* to replay a failure */
        rng = strtoull(getenv("CFDB_STRESS_SEED"), NULL, 0);
    if (!rng)
        rng = 1;
    print_message("seed %llu (CFDB_STRESS_SEED replays it)\n", (unsigned long long)rng);
    for (int i = 0; i < NW; i++) {
        g_w[i].id = i;
        g_w[i].state = calloc(MAXSEQ, 1);
        assert_non_null(g_w[i].state);
        assert_int_equal(pthread_create(&g_w[i].th, NULL, writer_main, &g_w[i]), 0);
    }
    wait_parked(); /* all waiting for the first server */
    uint16_t cport;
    start(&cport);
    check_stats st = { 0 };
    int torn = 0, badsum = 0, snaps = 0;
    uint64_t unknown_before = 0;
    int kills_mid_commit = 0;
    for (int k = 0; k < KILLS; k++) {
        release_writers();
        unsigned ms = (unsigned)(rnd(&rng) % 60);
        if (rnd(&rng) % 8 == 0) { /* a snapshot, then the kill soon after (maybe during) */
            sleep_ms(ms);
            control_snapshot(cport);
            snaps++;
            ms = (unsigned)(rnd(&rng) % 10);
        }
        sleep_ms(ms);
        sp_kill9(&g_p);
        wait_parked();
        uint64_t unknown = 0;
        for (int i = 0; i < NW; i++)
            unknown += g_w[i].unknown;
        if (unknown > unknown_before)
            kills_mid_commit++;
        unknown_before = unknown;
        if (k % 3 == 1) /* every third restart: a torn record (odd k) or a bad checksum (even k) */
            append_torn(k, &rng, &torn, &badsum);
        start(&cport);
        check_store(&st);
    }
    pthread_mutex_lock(&g.mu);
    g.stop = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    uint64_t acked = 0, unknown = 0;
    for (int i = 0; i < NW; i++) {
        pthread_join(g_w[i].th, NULL);
        acked += g_w[i].acked;
        unknown += g_w[i].unknown;
        free(g_w[i].state);
        g_w[i].state = NULL;
    }
    sp_kill9(&g_p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("%d kills (%d with commits in flight), %llu commits acknowledged, %llu in flight at a kill "
                  "(%llu of them applied), %llu acknowledged-commit checks, %d torn tails, %d bad checksums, "
                  "%d snapshots, %.1f s\n",
                  KILLS, kills_mid_commit, (unsigned long long)acked, (unsigned long long)unknown,
                  (unsigned long long)st.unacked_present, (unsigned long long)st.acked_checked, torn, badsum,
                  snaps, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    /* the loop must really have exercised what it claims */
    assert_true(acked > 100);
    assert_true(kills_mid_commit >= KILLS / 4);
    assert_true(torn > 0 && badsum > 0);
}

static int teardown(void **state)
{
    (void)state;
    sp_kill9(&g_p);
    pthread_mutex_lock(&g.mu);
    bool running = !g.stop && g_w[0].state != NULL;
    g.stop = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    if (running) /* a failed check: the writers lose their connection and stop */
        for (int i = 0; i < NW; i++)
            pthread_join(g_w[i].th, NULL);
    if (g_dir[0])
        sp_rmtree(g_dir);
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_kill9_loop, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
