/* The control port's plain `snapshot` command on a durable cfdb-server: the snapshot is
 * written in the background (snapshot.c) and the command is answered once a snapshot
 * taken at or after the command's moment is written, while the event loop goes on serving
 * other control clients and FoundationDB clients:
 *   - with the background copy held, a waiting `snapshot` leaves `ping` on another control
 *     connection, read versions and commits answered; released, it answers with the version
 *     (not before the data committed before the command) and the snapshot file is there;
 *   - lines a client sends after its `snapshot` are answered after it, in order;
 *   - when a snapshot that started before the command is still running, the command waits
 *     for a new one (its answer's version is at least the command's);
 *   - on a server without --datadir it answers "err not durable" at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tcp.h"
#include "server_embed.h"

#define MS 1000000ull

static char g_dir[64], g_data[128];

static void start(se_fx *f, bool durable)
{
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.storage_servers = 1;
    cfg.control_port = 0;
    if (durable) {
        snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-ctlsnapXXXXXX");
        assert_non_null(mkdtemp(g_dir));
        snprintf(g_data, sizeof g_data, "%s/data", g_dir);
        cfg.datadir = g_data;
    }
    assert_int_equal(se_start(f, &cfg), 0);
}

static void stop(se_fx *f, bool durable)
{
    se_stop(f);
    if (durable) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        assert_int_equal(system(cmd), 0);
    }
}

/* A control connection, connected while the test's loop runs. */
static int ctl_open(se_fx *f)
{
    int fd = -1;
    assert_int_equal(cfdb_tcp_connect("127.0.0.1", cfdb_server_control_port(f->srv), &fd), 0);
    bool ok = false;
    for (int i = 0; i < 1000 && !ok; i++) {
        assert_int_equal(cfdb_tcp_connect_result(fd, &ok), 0);
        if (!ok)
            wc_pump(&f->w, MS);
    }
    assert_true(ok);
    return fd;
}

static void ctl_send(int fd, const char *text)
{
    size_t w = 0;
    assert_int_equal(cfdb_tcp_write(fd, text, strlen(text), &w), 0);
    assert_int_equal(w, strlen(text));
}

/* Pumps the loop until a whole line arrives (true, in out) or timeout_ms passes. */
static bool ctl_line(se_fx *f, int fd, char *out, size_t cap, unsigned timeout_ms)
{
    size_t got = 0;
    for (unsigned i = 0; i <= timeout_ms; i++) {
        size_t r = 0;
        if (got < cap - 1 && cfdb_tcp_read(fd, out + got, 1, &r) == 0 && r == 1) {
            if (out[got] == '\n') {
                out[got] = 0;
                return true;
            }
            got++;
            i--; /* a byte: no time spent */
            continue;
        }
        wc_pump(&f->w, MS);
    }
    out[got] = 0;
    return false;
}

static int64_t written_version(const char *line)
{
    const char *p = strstr(line, "ok snapshot written at version ");
    assert_non_null(p);
    return atoll(p + strlen("ok snapshot written at version "));
}

static void commit_some(se_fx *f, int from, int n)
{
    for (int i = from; i < from + n; i++) {
        wc_txn t;
        memset(&t, 0, sizeof t);
        t.read_snapshot = wc_grv(&f->w);
        char k[32];
        snprintf(k, sizeof k, "k%05d", i);
        wc_txn_set(&t, &f->a, k, "value");
        cfdb_commit_id id;
        assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    }
}

static void test_snapshot_does_not_block(void **state)
{
    (void)state;
    se_fx f;
    start(&f, true);
    commit_some(&f, 0, 200);
    int64_t before = wc_grv(&f.w);
    int a = ctl_open(&f), b = ctl_open(&f);
    char line[256];
    ctl_send(b, "snapshot hold on\n");
    assert_true(ctl_line(&f, b, line, sizeof line, 5000));
    assert_string_equal(line, "ok hold on");

    ctl_send(a, "snapshot\nping\n");
    /* held: no answer yet, and the loop still serves everyone else */
    assert_false(ctl_line(&f, a, line, sizeof line, 200));
    ctl_send(b, "ping\n");
    assert_true(ctl_line(&f, b, line, sizeof line, 5000));
    assert_string_equal(line, "ok pong");
    commit_some(&f, 200, 20);
    assert_true(wc_grv(&f.w) > before);
    ctl_send(b, "snapshot status\n");
    assert_true(ctl_line(&f, b, line, sizeof line, 5000));
    assert_non_null(strstr(line, "ok running"));

    ctl_send(b, "snapshot hold off\n");
    assert_true(ctl_line(&f, b, line, sizeof line, 5000));
    assert_true(ctl_line(&f, a, line, sizeof line, 10000));
    int64_t v = written_version(line);
    assert_true(v >= before);
    /* the line sent after it is answered after it */
    assert_true(ctl_line(&f, a, line, sizeof line, 5000));
    assert_string_equal(line, "ok pong");
    char path[200];
    snprintf(path, sizeof path, "%s/snapshot", g_data);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);

    /* a snapshot that began before the command does not answer it */
    ctl_send(b, "snapshot hold on\n");
    assert_true(ctl_line(&f, b, line, sizeof line, 5000));
    ctl_send(b, "snapshot start\n");
    assert_true(ctl_line(&f, b, line, sizeof line, 5000));
    assert_string_equal(line, "ok snapshot started");
    commit_some(&f, 300, 20);
    int64_t want = wc_grv(&f.w) - 1;
    ctl_send(a, "snapshot\n");
    assert_false(ctl_line(&f, a, line, sizeof line, 100));
    ctl_send(b, "snapshot hold off\n");
    assert_true(ctl_line(&f, b, line, sizeof line, 5000));
    assert_true(ctl_line(&f, a, line, sizeof line, 10000));
    assert_true(written_version(line) >= want);
    close(a);
    close(b);
    stop(&f, true);
}

static void test_not_durable(void **state)
{
    (void)state;
    se_fx f;
    start(&f, false);
    int a = ctl_open(&f);
    char line[256];
    ctl_send(a, "snapshot\n");
    assert_true(ctl_line(&f, a, line, sizeof line, 5000));
    assert_string_equal(line, "err not durable");
    close(a);
    stop(&f, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_does_not_block),
        cmocka_unit_test(test_not_durable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
