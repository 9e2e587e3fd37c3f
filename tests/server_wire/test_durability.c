/* Durability of the cfdb-server binary with --datadir: commits acknowledged before a
 * kill -9 are all there after a restart (checksum of every user key before and after),
 * a torn WAL tail is ignored, and the control CLI drives the running process. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "endpoint.h"
#include "error_codes.h"
#include "tcp.h"
#include "wire_client.h"

#define SEC 1000000000ull
#define MS 1000000ull

typedef struct proc {
    pid_t pid;
    uint16_t port, control;
    char key[128];
} proc;

static char g_dir[256];

static void start_server(proc *p, int control_port)
{
    char cf[300], dd[300], cp[16];
    snprintf(cf, sizeof cf, "%s/fdb.cluster", g_dir);
    snprintf(dd, sizeof dd, "%s/data", g_dir);
    snprintf(cp, sizeof cp, "%d", control_port);
    unlink(cf);
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        execl(CFDB_SERVER_BIN, CFDB_SERVER_BIN, "--listen", "127.0.0.1:0", "--cluster-file", cf, "--datadir", dd,
              "--storage-servers", "3", "--control-port", cp, "--description", "dur", "--cluster-id", "test1",
              (char *)NULL);
        _exit(127);
    }
    /* the cluster file appears once the server listens */
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(cf, "r");
        if (f) {
            char line[256] = { 0 };
            if (fgets(line, sizeof line, f)) {
                char *at = strchr(line, '@'), *colon = strrchr(line, ':');
                if (at && colon) {
                    snprintf(p->key, sizeof p->key, "%.*s", (int)(at - line), line);
                    p->port = (uint16_t)atoi(colon + 1);
                }
            }
            fclose(f);
            if (p->port)
                return;
        }
        usleep(10000);
    }
    fail_msg("server did not start");
}

static void kill9(proc *p)
{
    kill(p->pid, SIGKILL);
    int st;
    waitpid(p->pid, &st, 0);
}

static uint64_t fnv(uint64_t h, const void *d, size_t n)
{
    const uint8_t *p = d;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Checksum of every key below \xff, read shard by shard at one version. */
static uint64_t checksum(wc *w, size_t *nkeys)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    int64_t v = wc_grv(w);
    assert_true(v > 0);
    cfdb_get_key_server_locations_request req;
    cfdb_get_key_server_locations_reply rep;
    cfdb_reply_error err = 0;
    memset(&req, 0, sizeof req);
    req.begin = CFDB_BYTES_LIT("");
    req.end.present = 1;
    req.end.value = CFDB_BYTES_LIT("\xff");
    req.limit = 100;
    req.tenant.tenantId = -1;
    assert_int_equal(wc_call(w, cfdb_adjusted_token(w->commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                             &cfdb_msg_get_key_server_locations_request, &req, &req.reply.token,
                             &cfdb_msg_get_key_server_locations_reply, &rep, &err, &a),
                     0);
    uint64_t h = 0xcbf29ce484222325ull;
    *nkeys = 0;
    for (uint32_t s = 0; s < rep.results.count; s++) {
        cfdb_key_range r = rep.results.items[s].first;
        cfdb_uid ss = rep.results.items[s].second.items[0].getValue.endpoint.token;
        cfdb_bytes begin = r.begin;
        cfdb_bytes end = cfdb_bytes_cmp(r.end, CFDB_BYTES_LIT("\xff")) > 0 ? CFDB_BYTES_LIT("\xff") : r.end;
        cfdb_key_selector b = { begin, false, 1 };
        for (;;) {
            cfdb_get_key_values_reply kv;
            assert_int_equal(wc_get_range(w, ss, b, (cfdb_key_selector){ end, false, 1 }, v, 50, 80000, &kv, &a), 0);
            for (uint32_t i = 0; i < kv.data.count; i++) {
                uint32_t kl = kv.data.items[i].key.len, vl = kv.data.items[i].value.len;
                h = fnv(h, &kl, 4);
                h = fnv(h, kv.data.items[i].key.ptr, kl);
                h = fnv(h, &vl, 4);
                h = fnv(h, kv.data.items[i].value.ptr, vl);
                (*nkeys)++;
            }
            if (!kv.more)
                break;
            b = (cfdb_key_selector){ kv.data.items[kv.data.count - 1].key, true, 1 };
        }
    }
    cfdb_arena_free(&a);
    return h;
}

static void connect_db(wc *w, cfdb_loop *loop, proc *p, cfdb_arena *a)
{
    assert_int_equal(wc_connect(w, loop, p->port), 0);
    cfdb_client_db_info info;
    assert_int_equal(wc_open_database(w, p->key, &info, a), 0);
}

static void write_workload(wc *w, cfdb_arena *a, int round)
{
    for (int t = 0; t < 40; t++) {
        wc_txn txn;
        memset(&txn, 0, sizeof txn);
        txn.read_snapshot = wc_grv(w);
        for (int i = 0; i < 10; i++) {
            char *k = cfdb_arena_alloc(a, 32), *v = cfdb_arena_alloc(a, 64);
            snprintf(k, 32, "%c/key%04d", "bkx"[(t + i) % 3], (t * 37 + i * 11 + round * 5) % 300);
            snprintf(v, 64, "value-%d-%d-%d", round, t, i);
            wc_txn_set(&txn, a, k, v);
        }
        uint64_t one = 1;
        cfdb_bytes op;
        cfdb_arena_dup_bytes(a, cfdb_bytes_make(&one, 8), &op);
        wc_txn_atomic(&txn, a, CFDB_MUT_ADD_VALUE, CFDB_BYTES_LIT("counter"), op);
        if (t % 10 == 9) { /* a range clear */
            txn.muts[txn.nmuts++] = (cfdb_mutation){ CFDB_MUT_CLEAR_RANGE, CFDB_BYTES_LIT("k/key0100"),
                                                     CFDB_BYTES_LIT("k/key0150") };
            txn.writes[txn.nwrites++] = (cfdb_key_range){ CFDB_BYTES_LIT("k/key0100"), CFDB_BYTES_LIT("k/key0150") };
        }
        cfdb_commit_id id;
        assert_int_equal(wc_commit(w, &txn, &id, a), 0);
    }
}

static void test_kill9_recovery(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-durability-%d", (int)getpid());
    mkdir(g_dir, 0755);
    cfdb_loop *loop = cfdb_loop_create();
    cfdb_arena a;
    cfdb_arena_init(&a);
    proc p;
    memset(&p, 0, sizeof p);
    start_server(&p, 0);
    wc w;
    connect_db(&w, loop, &p, &a);
    write_workload(&w, &a, 1);
    size_t n1;
    uint64_t h1 = checksum(&w, &n1);
    assert_true(n1 > 100);
    int64_t v_before = wc_grv(&w);
    wc_close(&w);
    kill9(&p);

    /* restart: the same data, and versions keep going up */
    start_server(&p, 0);
    connect_db(&w, loop, &p, &a);
    assert_true(wc_grv(&w) > v_before);
    size_t n2;
    uint64_t h2 = checksum(&w, &n2);
    assert_int_equal(n2, n1);
    assert_true(h1 == h2);
    /* more commits, then a torn record at the end of the log, then kill -9 again */
    write_workload(&w, &a, 2);
    uint64_t h3 = checksum(&w, &n1);
    wc_close(&w);
    kill9(&p);
    char wal[300];
    snprintf(wal, sizeof wal, "%s/data/wal", g_dir);
    int fd = open(wal, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    static const char junk[] = "\x40\x00\x00\x00garbage-that-is-not-a-record";
    assert_true(write(fd, junk, sizeof junk - 1) > 0);
    close(fd);
    start_server(&p, 0);
    connect_db(&w, loop, &p, &a);
    uint64_t h4 = checksum(&w, &n2);
    assert_true(h3 == h4);
    assert_int_equal(n1, n2);
    /* a snapshot (through the control CLI), more commits, kill -9: snapshot + log */
    wc_close(&w);
    kill9(&p);
    uint16_t cport = 0;
    int lfd;
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", 0, 1, &cport, &lfd), 0);
    close(lfd);
    start_server(&p, cport);
    connect_db(&w, loop, &p, &a);
    write_workload(&w, &a, 3);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "%s --control %u snapshot > /dev/null", CFDB_SERVER_BIN, cport);
    assert_int_equal(system(cmd), 0);
    write_workload(&w, &a, 4);
    uint64_t h5 = checksum(&w, &n1);
    wc_close(&w);
    kill9(&p);
    struct stat st;
    char snap[300];
    snprintf(snap, sizeof snap, "%s/data/snapshot", g_dir);
    assert_int_equal(stat(snap, &st), 0);
    start_server(&p, 0);
    connect_db(&w, loop, &p, &a);
    uint64_t h6 = checksum(&w, &n2);
    assert_true(h5 == h6);
    assert_int_equal(n1, n2);
    wc_close(&w);
    kill9(&p);

    cfdb_arena_free(&a);
    cfdb_loop_destroy(loop);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
}

/* The control CLI: `cfdb-server --control PORT CMD`. */
static void test_control_cli(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-cli-%d", (int)getpid());
    mkdir(g_dir, 0755);
    /* a port that was free a moment ago, for the control socket */
    uint16_t free_port = 0;
    int lfd;
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", 0, 1, &free_port, &lfd), 0);
    close(lfd);
    int port = free_port;
    proc p;
    memset(&p, 0, sizeof p);
    start_server(&p, port);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --control %d snapshot > %s/out.txt", CFDB_SERVER_BIN, port, g_dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --control %d status > %s/out.txt", CFDB_SERVER_BIN, port, g_dir);
    assert_int_equal(system(cmd), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/out.txt", g_dir);
    FILE *f = fopen(path, "r");
    char line[256] = { 0 };
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_true(strncmp(line, "ok version=", 11) == 0);
    snprintf(cmd, sizeof cmd, "%s --control %d bogus > /dev/null", CFDB_SERVER_BIN, port);
    assert_int_not_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --control %d shutdown > /dev/null", CFDB_SERVER_BIN, port);
    assert_int_equal(system(cmd), 0);
    int st;
    assert_int_equal(waitpid(p.pid, &st, 0), p.pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_recovery),
        cmocka_unit_test(test_control_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
