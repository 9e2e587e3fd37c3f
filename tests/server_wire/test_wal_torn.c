/* Torn and corrupt WAL tails, byte by byte (issue 9). A crash can leave the last WAL
 * record cut anywhere, or whole but with a checksum that does not match. For every
 * length of the last record (0 .. full-1 bytes kept), and for a full-length last record
 * with a bad checksum or a flipped payload byte, cfdb-server --datadir must:
 *   1. recover exactly the records before it (the torn record is not applied);
 *   2. cut the torn bytes off, so that a write acknowledged after the recovery is
 *      still there after the next kill -9 (a log that kept the torn tail would append
 *      after garbage and lose it at the next replay).
 * WAL layout (src/server/wal.h): records of u32 payload length, u64 XXH3(payload),
 * payload = i64 version, u32 count, mutations. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "endpoint.h"
#include "server_proc.h"
#include "wire_client.h"

#define NBASE 20

static char g_dir[256], g_data[300], g_wal[320];
static const char *const g_args[] = { "--storage-servers", "1", NULL };

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

static void spit(const char *path, const uint8_t *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    assert_int_equal(fsync(fd), 0);
    close(fd);
}

/* Offsets of whole records (by their length fields only). */
static size_t record_starts(const uint8_t *p, size_t len, size_t *starts, size_t cap)
{
    size_t off = 0, n = 0;
    while (off + 12 <= len && n < cap) {
        uint32_t plen;
        memcpy(&plen, p + off, 4);
        if (off + 12 + plen > len)
            break;
        starts[n++] = off;
        off += 12 + plen;
    }
    assert_int_equal(off, len); /* the log we wrote ends on a record boundary */
    return n;
}

typedef struct kv {
    char key[64], value[64];
} kv;

/* Every key below \xff at the current read version (one storage server: one shard). */
static size_t read_all(wc *w, kv *out, size_t cap)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    int64_t v = wc_grv(w);
    assert_true(v > 0);
    cfdb_uid ss;
    assert_int_equal(wc_locate(w, CFDB_BYTES_LIT(""), &ss, NULL, NULL, &a), 0);
    size_t n = 0;
    cfdb_key_selector b = { CFDB_BYTES_LIT(""), false, 1 };
    for (;;) {
        cfdb_get_key_values_reply kvr;
        assert_int_equal(wc_get_range(w, ss, b, (cfdb_key_selector){ CFDB_BYTES_LIT("\xff"), false, 1 }, v, 1000,
                                      1 << 20, &kvr, &a),
                         0);
        for (uint32_t i = 0; i < kvr.data.count && n < cap; i++, n++) {
            snprintf(out[n].key, sizeof out[n].key, "%.*s", (int)kvr.data.items[i].key.len,
                     (const char *)kvr.data.items[i].key.ptr);
            snprintf(out[n].value, sizeof out[n].value, "%.*s", (int)kvr.data.items[i].value.len,
                     (const char *)kvr.data.items[i].value.ptr);
        }
        if (!kvr.more || kvr.data.count == 0)
            break;
        b = (cfdb_key_selector){ kvr.data.items[kvr.data.count - 1].key, true, 1 };
    }
    cfdb_arena_free(&a);
    return n;
}

static void commit_kv(wc *w, const char *k1, const char *v1, const char *k2, const char *v2)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(w);
    wc_txn_set(&t, &a, k1, v1);
    if (k2)
        wc_txn_set(&t, &a, k2, v2);
    cfdb_commit_id id;
    assert_int_equal(wc_commit(w, &t, &id, &a), 0); /* acknowledged */
    cfdb_arena_free(&a);
}

/* The store holds exactly the base keys, plus `extra` (with value "x") if not NULL, plus
 * the last record's keys if want_last. */
static void expect_state(wc *w, const char *extra, bool want_last, const char *what)
{
    static kv got[NBASE + 16];
    size_t n = read_all(w, got, NBASE + 16);
    size_t want = NBASE + (extra ? 1 : 0) + (want_last ? 2 : 0);
    if (n != want) {
        for (size_t i = 0; i < n; i++)
            print_message("  %s = %s\n", got[i].key, got[i].value);
        fail_msg("%s: %zu keys, expected %zu", what, n, want);
    }
    if (want_last && n == want && strcmp(got[n - 1].key, "last/b") != 0) {
        fail_msg("%s: last/b missing", what);
    }
    size_t i = 0;
    if (extra) {
        assert_string_equal(got[i].key, extra);
        assert_string_equal(got[i].value, "x");
        i++;
    }
    for (int b = 0; b < NBASE; b++, i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "base/%03d", b);
        snprintf(v, sizeof v, "v%d", b);
        assert_string_equal(got[i].key, k);
        assert_string_equal(got[i].value, v);
    }
    if (want_last) {
        assert_string_equal(got[i].key, "last/a");
        assert_string_equal(got[i].value, "LA");
        assert_string_equal(got[i + 1].key, "last/b");
        assert_string_equal(got[i + 1].value, "LB");
    }
}

static sp_proc g_p;
static cfdb_loop *g_loop;

static void up(wc *w, cfdb_arena *a)
{
    assert_int_equal(sp_start(&g_p, CFDB_SERVER_BIN, g_dir, g_data, g_args), 0);
    assert_int_equal(sp_connect(w, g_loop, &g_p, a), 0);
}

static void down(wc *w)
{
    wc_close(w);
    sp_kill9(&g_p);
}

/* One case: the WAL is `log` (the base records, then `tail`), recovery must show the
 * base only (or base + last if want_last); then an acknowledged write survives a kill -9. */
static void run_case(const uint8_t *log, size_t len, bool want_last, const char *what, int n)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    wc w;
    spit(g_wal, log, len);
    up(&w, &a);
    expect_state(&w, NULL, want_last, what);
    char after[32];
    snprintf(after, sizeof after, "after/%03d", n);
    commit_kv(&w, after, "x", NULL, NULL);
    down(&w);
    /* the write acknowledged after recovering from the torn tail */
    up(&w, &a);
    expect_state(&w, after, want_last, what);
    down(&w);
    cfdb_arena_free(&a);
}

static void test_torn_tail_every_length(void **state)
{
    (void)state;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-waltorn-%d", (int)getpid());
    snprintf(g_data, sizeof g_data, "%s/data", g_dir);
    snprintf(g_wal, sizeof g_wal, "%s/wal", g_data);
    mkdir(g_dir, 0755);
    g_loop = cfdb_loop_create();
    cfdb_arena a;
    cfdb_arena_init(&a);
    wc w;

    /* the base: NBASE acknowledged commits, then the last record (two keys) */
    up(&w, &a);
    for (int b = 0; b < NBASE; b++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "base/%03d", b);
        snprintf(v, sizeof v, "v%d", b);
        commit_kv(&w, k, v, NULL, NULL);
    }
    commit_kv(&w, "last/a", "LA", "last/b", "LB");
    expect_state(&w, NULL, true, "before the crash");
    down(&w);

    size_t len;
    uint8_t *full = slurp(g_wal, &len);
    size_t starts[64];
    size_t nrec = record_starts(full, len, starts, 64);
    assert_int_equal(nrec, NBASE + 1); /* one record per commit, none other */
    size_t s = starts[nrec - 1], rec = len - s;
    print_message("WAL: %zu records, %zu bytes, last record %zu bytes\n", nrec, len, rec);

    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    int cases = 0;
    /* positive control: the intact log recovers the last record */
    run_case(full, len, true, "intact log", cases++);
    /* every torn length of the last record: 0 .. rec-1 bytes of it kept */
    for (size_t keep = 0; keep < rec; keep++) {
        char what[64];
        snprintf(what, sizeof what, "last record cut to %zu of %zu bytes", keep, rec);
        run_case(full, s + keep, false, what, cases++);
    }
    /* full length, bad checksum: each byte of the checksum field in turn would be slow;
     * flip one bit in its first and last byte */
    for (int which = 0; which < 2; which++) {
        memcpy(buf, full, len);
        buf[s + 4 + (which ? 7 : 0)] ^= 0x10;
        run_case(buf, len, false, "full-length last record, bad checksum", cases++);
    }
    /* full length, checksum intact but a payload byte changed (the value "LB" -> "LC") */
    memcpy(buf, full, len);
    buf[len - 1] ^= 0x01;
    run_case(buf, len, false, "full-length last record, corrupt payload", cases++);
    /* a corrupt length field that points past the end */
    memcpy(buf, full, len);
    buf[s + 3] = 0x7f;
    run_case(buf, len, false, "last record with a huge length", cases++);

    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("%d recoveries checked (%d kill -9), %.1f s\n", cases * 2, cases * 2 + 1,
                  (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    free(buf);
    free(full);
    cfdb_arena_free(&a);
    cfdb_loop_destroy(g_loop);
}

/* Also after a failed assertion: no server left behind, no temp dir. */
static int teardown(void **state)
{
    (void)state;
    sp_kill9(&g_p);
    if (g_dir[0])
        sp_rmtree(g_dir);
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_torn_tail_every_length, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
