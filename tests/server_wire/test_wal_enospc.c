/* A full disk (issue 11, item 3), on a 4 MB tmpfs mounted in the test's own mount
 * namespace (unshare(CLONE_NEWNS); CI runs as root like this machine), under an
 * in-process cfdb-server --datadir:
 *   1. a snapshot that does not fit fails, leaves no snapshot.tmp behind, is reported in
 *      status json (cluster.messages, io_error/snapshot_failed) and backs off: the
 *      second failure waits about twice as long as the first;
 *   2. commits are acknowledged until the log cannot be written; the batch whose append
 *      fails answers commit_unknown_result (1021, see commit_proxy.c for why), after which
 *      status json says io_error with "No space left on device" and the qos limit is
 *      log_server_min_free_space;
 *   3. a commit sent while the disk is full waits (no answer), and no busy loop: the
 *      server's event loop sleeps;
 *   4. once space is freed the server recovers by itself: the waiting commit is
 *      acknowledged, status is clean again, every acknowledged key reads back (the
 *      1021 batch is absent: its partial record was cut), also after a restart. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "endpoint.h"
#include "error_codes.h"
#include "server_proc.h"
#include "srv_core.h"
#include "status.h"
#include "wal.h"
#include "server_embed.h"

#define SEC 1000000000ull
#define MS 1000000ull
#define VALUE_LEN 16000
#define MAX_KEYS 400

static char g_dir[256], g_data[300], g_ballast[300];
static bool g_mounted;

typedef se_fx fx; /* the shared in-process fixture (server_embed.h) */

static void fx_start(fx *f)
{
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.seed = 11;
    cfg.storage_servers = 1;
    cfg.datadir = g_data;
    assert_int_equal(se_start(f, &cfg), 0);
}

static void fx_stop(fx *f)
{
    se_stop(f);
}

static char g_value[VALUE_LEN + 1];

static const char *value_for(int i)
{
    memset(g_value, 'a' + i % 26, VALUE_LEN);
    g_value[VALUE_LEN] = 0;
    return g_value;
}

static cfdb_uid send_set(fx *f, const char *k, const char *v, cfdb_arena *a)
{
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    wc_txn_set(&t, a, k, v);
    return wc_commit_send(&f->w, &t);
}

static int commit_set(fx *f, const char *k, const char *v)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_uid tok = send_set(f, k, v, &a);
    cfdb_commit_id id;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_commit_id_reply, &id, &err, &a, 10 * SEC), 0);
    cfdb_arena_free(&a);
    return err;
}

static char *status_text(fx *f, cfdb_arena *a)
{
    cfdb_bytes j = status_cluster_json((srv *)f->srv, a);
    char *s = cfdb_arena_alloc(a, j.len + 1);
    memcpy(s, j.ptr, j.len);
    s[j.len] = 0;
    return s;
}

static void expect_kv(fx *f, const char *k, const char *want)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, cfdb_bytes_str(k), &ss, NULL, NULL, &a), 0);
    bool present = false;
    cfdb_bytes v;
    assert_int_equal(wc_get(&f->w, ss, cfdb_bytes_str(k), wc_grv(&f->w), &present, &v, &a), 0);
    if (!want) {
        if (present)
            fail_msg("%s is present, expected absent", k);
    } else if (!present || v.len != strlen(want) || memcmp(v.ptr, want, v.len) != 0) {
        fail_msg("%s: %s", k, present ? "wrong value" : "missing");
    }
    cfdb_arena_free(&a);
}

static void fill(const char *path, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    static char buf[65536];
    memset(buf, 0x5a, sizeof buf);
    for (size_t done = 0; done < n; done += sizeof buf)
        assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    close(fd);
}

static void test_full_disk(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-enospc-%d", (int)getpid());
    snprintf(g_data, sizeof g_data, "%s/data", g_dir);
    snprintf(g_ballast, sizeof g_ballast, "%s/ballast", g_dir);
    mkdir(g_dir, 0755);
    if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", g_dir, "tmpfs", 0, "size=4m") != 0) {
        print_message("no private tmpfs: %s\n", strerror(errno));
        skip();
    }
    g_mounted = true;
    fill(g_ballast, 1536 * 1024); /* freed at step 4 */

    fx f;
    fx_start(&f);
    srv *s = (srv *)f.srv;
    static char keys[MAX_KEYS][16];
    int acked = 0, failed_at = -1;

    /* 1. fill until a snapshot of the store cannot fit any more, but the log still can */
    for (; acked < MAX_KEYS; acked++) {
        snprintf(keys[acked], sizeof keys[acked], "big/%04d", acked);
        assert_int_equal(commit_set(&f, keys[acked], value_for(acked)), 0);
        srv_wal_health h;
        srv_wal_get_health(s, &h);
        if (h.log_bytes > 1400 * 1024)
            break;
    }
    acked++;
    char out[512];
    cfdb_server_control(f.srv, "snapshot", out, sizeof out);
    assert_string_equal(out, "err snapshot failed: 1510"); /* ENOSPC: io_error */
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s/snapshot.tmp", g_data);
    assert_true(access(tmp, F_OK) != 0);
    srv_wal_health h1, h2;
    srv_wal_get_health(s, &h1);
    assert_int_equal(h1.snapshot_failures, 1);
    assert_int_equal(h1.snapshot_errno, ENOSPC);
    assert_false(h1.blocked);
    cfdb_arena a;
    cfdb_arena_init(&a);
    char *st = status_text(&f, &a);
    if (!strstr(st, "\"type\":\"snapshot_failed\"") || !strstr(st, "No space left on device"))
        fail_msg("status json does not report the failed snapshot: %s", st);
    cfdb_server_control(f.srv, "snapshot", out, sizeof out);
    assert_string_equal(out, "err snapshot failed: 1510"); /* ENOSPC: io_error */
    assert_true(access(tmp, F_OK) != 0);
    srv_wal_get_health(s, &h2);
    assert_int_equal(h2.snapshot_failures, 2);
    print_message("snapshot back-off: next attempt in %.2f s, then %.2f s\n", h1.next_snapshot_seconds,
                  h2.next_snapshot_seconds);
    assert_true(h1.next_snapshot_seconds > 0.5);
    assert_true(h2.next_snapshot_seconds > 1.5 * h1.next_snapshot_seconds);

    /* 2. commits until the log cannot be written */
    for (; acked < MAX_KEYS; acked++) {
        snprintf(keys[acked], sizeof keys[acked], "big/%04d", acked);
        int err = commit_set(&f, keys[acked], value_for(acked));
        if (err) {
            assert_int_equal(err, CFDB_ERR_COMMIT_UNKNOWN_RESULT);
            failed_at = acked;
            break;
        }
    }
    assert_true(failed_at >= 0);
    print_message("%d commits acknowledged before the disk was full\n", failed_at);
    assert_true(srv_wal_blocked(s));
    cfdb_arena_reset(&a);
    st = status_text(&f, &a);
    if (!strstr(st, "\"type\":\"log_write_failed\"") || !strstr(st, "No space left on device") ||
        !strstr(st, "\"name\":\"log_server_min_free_space\""))
        fail_msg("status json does not report the full log: %s", st);

    /* 3. a commit now waits; the loop sleeps meanwhile */
    cfdb_arena ha;
    cfdb_arena_init(&ha);
    cfdb_uid held = send_set(&f, "held", "h", &ha);
    cfdb_loop_stats ls0, ls1;
    cfdb_loop_get_stats(f.loop, &ls0);
    wc_pump(&f.w, 700 * MS);
    cfdb_loop_get_stats(f.loop, &ls1);
    assert_false(wc_has(&f.w, held));
    print_message("loop iterations in 0.7 s while blocked: %llu\n",
                  (unsigned long long)(ls1.iterations - ls0.iterations));
    assert_true(ls1.iterations - ls0.iterations < 200);

    /* 4. space returns: the server recovers by itself */
    assert_int_equal(unlink(g_ballast), 0);
    cfdb_commit_id id;
    cfdb_reply_error err = -1;
    assert_int_equal(wc_wait(&f.w, held, &cfdb_msg_commit_id_reply, &id, &err, &ha, 8 * SEC), 0);
    assert_int_equal(err, 0);
    assert_false(srv_wal_blocked(s));
    cfdb_arena_reset(&a);
    st = status_text(&f, &a);
    assert_null(strstr(st, "log_write_failed"));
    assert_null(strstr(st, "log_server_min_free_space"));
    assert_int_equal(commit_set(&f, "after", "x"), 0);
    for (int i = 0; i < failed_at; i++)
        expect_kv(&f, keys[i], value_for(i));
    expect_kv(&f, keys[failed_at], NULL);
    expect_kv(&f, "held", "h");
    fx_stop(&f);

    fx_start(&f);
    for (int i = 0; i < failed_at; i++)
        expect_kv(&f, keys[i], value_for(i));
    expect_kv(&f, keys[failed_at], NULL);
    expect_kv(&f, "held", "h");
    expect_kv(&f, "after", "x");
    fx_stop(&f);
    cfdb_arena_free(&ha);
    cfdb_arena_free(&a);
}

static int teardown(void **state)
{
    (void)state;
    if (g_mounted)
        umount2(g_dir, MNT_DETACH);
    if (g_dir[0])
        sp_rmtree(g_dir);
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_full_disk, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
