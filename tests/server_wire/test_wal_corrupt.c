/* Corruption is not a torn tail (issue 11, item 3). cfdb-server --datadir, run as a child
 * process, must:
 *   - refuse to start when a WAL record in the middle of the log is bad (payload byte,
 *     checksum, length field too large or too small) while valid records follow it,
 *     naming the file and the record's offset on stderr and leaving every file as it was;
 *   - with --recover-truncate, start with exactly the records before it, keep the cut
 *     bytes in wal.discarded-at-OFFSET, and append cleanly after it (a write acknowledged
 *     then survives a kill -9 and a restart without the flag);
 *   - remove a snapshot.tmp left by a snapshot that a kill -9 interrupted, and recover
 *     from the frozen log (wal.1) plus the active log it had started;
 *   - refuse a frozen log with a bad tail (a frozen log is always whole), and with
 *     --recover-truncate set the later logs aside;
 *   - refuse a snapshot whose checksum does not match, naming it.
 * (A torn tail of the active log is recovered silently: test_wal_torn.c.)
 * WAL layout: src/server/wal.h. */
#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "endpoint.h"
#include "server_proc.h"
#include "wire_client.h"

static char g_dir[256], g_data[300], g_err[300];
static sp_proc g_p;
static cfdb_loop *g_loop;
static uint16_t g_cport;

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    p[n] = 0;
    *len = (size_t)n;
    return p;
}

static void spit(const char *path, const uint8_t *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    close(fd);
}

static const char *data_path(const char *name)
{
    static char buf[4][400];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_data, name);
    return buf[k];
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Starts the server with stderr in g_err. Returns true when it came up (g_p set), false
 * when it exited (its exit status in *status). */
static bool start(bool recover_truncate, int *status)
{
    memset(&g_p, 0, sizeof g_p);
    snprintf(g_p.cluster, sizeof g_p.cluster, "%s/fdb.cluster", g_dir);
    unlink(g_p.cluster);
    char cport[16];
    snprintf(cport, sizeof cport, "%u", g_cport);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(g_err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
        }
        execl(CFDB_SERVER_BIN, CFDB_SERVER_BIN, "--listen", "127.0.0.1:0", "--cluster-file", g_p.cluster,
              "--description", "sp", "--cluster-id", "corrupt", "--datadir", g_data, "--storage-servers", "1",
              "--control-port", cport, recover_truncate ? "--recover-truncate" : (char *)NULL, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 5000; i++) {
        FILE *f = fopen(g_p.cluster, "r");
        if (f) {
            char line[256] = { 0 };
            if (fgets(line, sizeof line, f)) {
                char *at = strchr(line, '@'), *colon = strrchr(line, ':');
                if (at && colon) {
                    snprintf(g_p.key, sizeof g_p.key, "%.*s", (int)(at - line), line);
                    g_p.port = (uint16_t)atoi(colon + 1);
                }
            }
            fclose(f);
            if (g_p.port) {
                g_p.pid = pid;
                return true;
            }
        }
        if (waitpid(pid, status, WNOHANG) == pid)
            return false;
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, status, 0);
    fail_msg("the server neither came up nor exited");
    return false;
}

static void control(const char *cmd)
{
    char line[600];
    snprintf(line, sizeof line, "%s --control %u %s > /dev/null", CFDB_SERVER_BIN, g_cport, cmd);
    assert_int_equal(system(line), 0);
}

static void commit1(wc *w, const char *k, const char *v)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(w);
    wc_txn_set(&t, &a, k, v);
    cfdb_commit_id id;
    assert_int_equal(wc_commit(w, &t, &id, &a), 0);
    cfdb_arena_free(&a);
}

/* The user keys as "k=v,k=v,..." (one storage server: one shard). */
static void read_all(wc *w, char *out, size_t cap)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    int64_t v = wc_grv(w);
    cfdb_uid ss;
    assert_int_equal(wc_locate(w, CFDB_BYTES_LIT(""), &ss, NULL, NULL, &a), 0);
    cfdb_get_key_values_reply r;
    assert_int_equal(wc_get_range(w, ss, (cfdb_key_selector){ CFDB_BYTES_LIT(""), false, 1 },
                                  (cfdb_key_selector){ CFDB_BYTES_LIT("\xff"), false, 1 }, v, 1000, 1 << 20, &r, &a),
                     0);
    assert_false(r.more);
    size_t o = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < r.data.count && o < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%.*s=%.*s", i ? "," : "", (int)r.data.items[i].key.len,
                              (const char *)r.data.items[i].key.ptr, (int)r.data.items[i].value.len,
                              (const char *)r.data.items[i].value.ptr);
    cfdb_arena_free(&a);
}

/* "rec/000=v0,...,rec/<n-1>=v<n-1>" then extra (if any). */
static void expected(int n, const char *extra, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = 0;
    if (extra)
        o += (size_t)snprintf(out + o, cap - o, "%s", extra);
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(out + o, cap - o, "%srec/%03d=v%d", o ? "," : "", i, i);
}

static void expect_state(int n, const char *extra, const char *what)
{
    static char got[16384], want[16384];
    wc w;
    cfdb_arena a;
    cfdb_arena_init(&a);
    assert_int_equal(sp_connect(&w, g_loop, &g_p, &a), 0);
    read_all(&w, got, sizeof got);
    expected(n, extra, want, sizeof want);
    if (strcmp(got, want) != 0)
        fail_msg("%s:\n  got  %s\n  want %s", what, got, want);
    wc_close(&w);
    cfdb_arena_free(&a);
}

static void write_records(int from, int to)
{
    wc w;
    cfdb_arena a;
    cfdb_arena_init(&a);
    assert_int_equal(sp_connect(&w, g_loop, &g_p, &a), 0);
    for (int i = from; i < to; i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "rec/%03d", i);
        snprintf(v, sizeof v, "v%d", i);
        commit1(&w, k, v);
    }
    wc_close(&w);
    cfdb_arena_free(&a);
}

/* Offsets of the records of a whole log. */
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
    assert_int_equal(off, len);
    return n;
}

/* The server must refuse to start, name path and offset, and leave the files alone. */
static void expect_refusal(const char *path, size_t offset, const uint8_t *content, size_t len, const char *what)
{
    int status = 0;
    if (start(false, &status)) {
        sp_kill9(&g_p);
        fail_msg("%s: the server started", what);
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    size_t elen;
    char *err = (char *)slurp(g_err, &elen);
    char want[600];
    snprintf(want, sizeof want, "%s is corrupt at offset %zu", path, offset);
    if (!strstr(err, want) || !strstr(err, "--recover-truncate"))
        fail_msg("%s: stderr does not say \"%s\" and how to recover:\n%s", what, want, err);
    if (!strstr(err, "cfdb-server: not started: file_corrupt (1522)"))
        fail_msg("%s: stderr does not give the code file_corrupt (1522):\n%s", what, err);
    free(err);
    size_t now_len;
    uint8_t *now = slurp(path, &now_len);
    assert_int_equal(now_len, len);
    assert_memory_equal(now, content, len);
    free(now);
}

static void test_mid_file_corruption(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    int status;
    assert_true(start(false, &status));
    write_records(0, 30);
    sp_kill9(&g_p);

    size_t len;
    uint8_t *full = slurp(data_path("wal"), &len);
    size_t starts[64];
    assert_int_equal(record_starts(full, len, starts, 64), 30);
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    size_t at = starts[10], rec = starts[11] - starts[10];

    /* each kind of damage to record 10 of 30 */
    struct {
        size_t off;
        uint8_t value; /* 0: flip bit 0x04 */
        const char *what;
    } damage[] = {
        { at + rec - 1, 0, "a payload byte" },
        { at + 4, 0, "a checksum byte" },
        { at + 3, 0x7f, "the length field (far past the end)" },
        { at, 0x03, "the length field (shorter than a record)" },
    };
    for (size_t d = 0; d < sizeof damage / sizeof damage[0]; d++) {
        memcpy(bad, full, len);
        if (damage[d].value)
            bad[damage[d].off] = damage[d].value;
        else
            bad[damage[d].off] ^= 0x04;
        if (damage[d].off == at)
            memset(bad + at + 1, 0, 3);
        spit(data_path("wal"), bad, len);
        expect_refusal(data_path("wal"), at, bad, len, damage[d].what);
        char kept[64];
        snprintf(kept, sizeof kept, "wal.discarded-at-%zu", at);
        assert_false(exists(data_path(kept)));
    }

    /* --recover-truncate: the records before it, the rest kept aside */
    memcpy(bad, full, len);
    bad[at + rec - 1] ^= 0x04;
    spit(data_path("wal"), bad, len);
    assert_true(start(true, &status));
    expect_state(10, NULL, "after --recover-truncate");
    char kept[64];
    snprintf(kept, sizeof kept, "wal.discarded-at-%zu", at);
    size_t klen;
    uint8_t *k = slurp(data_path(kept), &klen);
    assert_int_equal(klen, len - at);
    assert_memory_equal(k, bad + at, klen);
    free(k);
    {
        wc w;
        assert_int_equal(sp_connect(&w, g_loop, &g_p, &a), 0);
        commit1(&w, "after", "1");
        wc_close(&w);
    }
    sp_kill9(&g_p);
    /* no flag needed any more: the log was cut cleanly */
    assert_true(start(false, &status));
    expect_state(10, "after=1", "restart after --recover-truncate");
    sp_kill9(&g_p);
    free(bad);
    free(full);
    cfdb_arena_free(&a);
}

static void test_snapshot_files(void **state)
{
    (void)state;
    int status;
    /* a snapshot interrupted by kill -9: wal.1 frozen, a new wal, snapshot.tmp left */
    assert_true(start(false, &status));
    write_records(0, 10);
    control("snapshot hold on");
    control("snapshot start");
    write_records(10, 20);
    sp_kill9(&g_p);
    assert_true(exists(data_path("wal.1")));
    assert_true(exists(data_path("snapshot.tmp")));
    assert_false(exists(data_path("snapshot")));
    static uint8_t junk[1 << 20];
    memset(junk, 0xab, sizeof junk);
    spit(data_path("snapshot.tmp"), junk, sizeof junk); /* as a half-written snapshot */
    assert_true(start(false, &status));
    assert_false(exists(data_path("snapshot.tmp")));
    expect_state(20, NULL, "frozen log + active log");
    sp_kill9(&g_p);

    /* a frozen log is always whole: a bad tail there is corruption */
    size_t len;
    uint8_t *frozen = slurp(data_path("wal.1"), &len);
    size_t starts[32];
    assert_int_equal(record_starts(frozen, len, starts, 32), 10);
    spit(data_path("wal.1"), frozen, len - 5);
    expect_refusal(data_path("wal.1"), starts[9], frozen, len - 5, "frozen log with a torn tail");
    assert_true(start(true, &status));
    expect_state(9, NULL, "frozen log cut by --recover-truncate");
    assert_true(exists(data_path("wal.discarded")));
    sp_kill9(&g_p);
    free(frozen);

    /* a snapshot, then one byte of it changed: refused, named, unchanged */
    assert_true(start(false, &status));
    control("snapshot");
    sp_kill9(&g_p);
    assert_false(exists(data_path("wal.1")));
    uint8_t *snap = slurp(data_path("snapshot"), &len);
    snap[len / 2] ^= 0x01;
    spit(data_path("snapshot"), snap, len);
    /* refused with the file, the offset (a changed byte inside a row: every row still
     * parses, so the whole-file checksum at len - 8 is where it shows) and the code, with
     * --recover-truncate too, which cuts only log tails: a snapshot is the base of all the
     * data and the logs it replaced are gone */
    for (int rt = 0; rt < 2; rt++) {
        assert_false(start(rt == 1, &status));
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
        size_t elen;
        char *err = (char *)slurp(g_err, &elen);
        char want[600];
        snprintf(want, sizeof want, "snapshot %s is corrupt at offset %zu of %zu: its checksum does not match",
                 data_path("snapshot"), len - 8, len);
        if (!strstr(err, want) || !strstr(err, "cfdb-server: not started: file_corrupt (1522)"))
            fail_msg("stderr does not say \"%s\" and file_corrupt (1522):\n%s", want, err);
        if (rt == 1 && !strstr(err, "--recover-truncate applies only to a log's torn or corrupt tail, not to a "
                                    "snapshot"))
            fail_msg("stderr does not say why --recover-truncate does not apply:\n%s", err);
        free(err);
        size_t now_len;
        uint8_t *now = slurp(data_path("snapshot"), &now_len);
        assert_int_equal(now_len, len);
        assert_memory_equal(now, snap, len);
        free(now);
    }
    /* a row length running past the rows: the row's offset is named */
    uint8_t *cut = malloc(len);
    assert_non_null(cut);
    memcpy(cut, snap, len);
    cut[len / 2] ^= 0x01; /* back as it was */
    uint32_t huge = 0x7fffffff;
    memcpy(cut + 16, &huge, 4); /* the first row's key length (CFDBSNP2: magic, version, rows) */
    spit(data_path("snapshot"), cut, len);
    assert_false(start(true, &status));
    size_t elen;
    char *err = (char *)slurp(g_err, &elen);
    char want[600];
    snprintf(want, sizeof want, "snapshot %s is corrupt at offset 16 of %zu: its rows do not parse", data_path("snapshot"),
             len);
    if (!strstr(err, want) || !strstr(err, "(1522)"))
        fail_msg("stderr does not say \"%s\" and 1522:\n%s", want, err);
    free(err);
    free(cut);
    free(snap);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-walcorrupt-%d", (int)getpid());
    snprintf(g_data, sizeof g_data, "%s/data", g_dir);
    snprintf(g_err, sizeof g_err, "%s/stderr.txt", g_dir);
    sp_rmtree(g_dir);
    mkdir(g_dir, 0755);
    g_cport = test_free_port();
    g_loop = cfdb_loop_create();
    return g_loop ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sp_kill9(&g_p);
    if (g_loop)
        cfdb_loop_destroy(g_loop);
    g_loop = NULL;
    if (g_dir[0])
        sp_rmtree(g_dir);
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mid_file_corruption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
