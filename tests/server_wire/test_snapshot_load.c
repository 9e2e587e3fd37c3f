/* A snapshot taken while commits and reads go on (issue 11, item 4). An in-process
 * cfdb-server with --datadir holds NKEYS keys; a background snapshot is started and held
 * part-way (control "snapshot hold on", after one ~1 ms step of copying rows), then:
 *   1. commits overwrite, clear and insert keys on both sides of where the copy stands,
 *      and each is acknowledged;
 *   2. reads at a new read version see exactly those changes, and reads at the read
 *      version from before them see the old values (the snapshot's version stays
 *      readable);
 *   3. the snapshot is released and more commits run while it copies the rest;
 *   4. the snapshot file holds exactly the store at its version (the keys and values
 *      before every change above), with a valid checksum and row count, and the frozen
 *      log it replaced is gone;
 *   5. a restart from the data directory (snapshot + log) shows every change.
 * Snapshot file format: src/server/wal.h ("CFDBSNP2"). */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cmocka.h>

#include "endpoint.h"
#include "error_codes.h"
#include "server.h"
#include "server_proc.h"
#include "server_embed.h"

#define NKEYS 30000
#define NALL (NKEYS + 2000) /* key indexes the test may use */
#define PAD "................................................................................"

static char g_dir[256], g_data[300];

typedef se_fx fx; /* the shared in-process fixture (server_embed.h) */

static void fx_start(fx *f)
{
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.seed = 7;
    cfg.storage_servers = 1;
    cfg.datadir = g_data;
    assert_int_equal(se_start(f, &cfg), 0);
}

static void fx_stop(fx *f)
{
    se_stop(f);
}

/* The model: generation of key i's value, or -1 when absent. */
static int g_model[NALL], g_before[NALL];

static void key_of(int i, char *out)
{
    snprintf(out, 16, "k/%06d", i);
}

static void value_of(int i, int gen, char *out)
{
    snprintf(out, 128, "v%d-%06d-%s", gen, i, PAD);
}

/* Commits up to 60 changes (gen < 0: clear the key) and updates the model. */
typedef struct change {
    int i, gen;
} change;

static void commit_changes(fx *f, const change *ch, int n)
{
    static char keys[64][16], vals[64][128];
    cfdb_arena a;
    cfdb_arena_init(&a);
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    for (int k = 0; k < n; k++) {
        key_of(ch[k].i, keys[k]);
        if (ch[k].gen >= 0) {
            value_of(ch[k].i, ch[k].gen, vals[k]);
            wc_txn_set(&t, &a, keys[k], vals[k]);
        } else {
            cfdb_bytes b = cfdb_bytes_str(keys[k]);
            wc_txn_atomic(&t, &a, CFDB_MUT_CLEAR_RANGE, b, wc_key_after(&a, b));
        }
    }
    cfdb_commit_id id;
    assert_int_equal(wc_commit(&f->w, &t, &id, &a), 0);
    for (int k = 0; k < n; k++)
        g_model[ch[k].i] = ch[k].gen;
    cfdb_arena_free(&a);
}

/* Reads every k/ key at version and compares with model. */
static void expect_reads(fx *f, int64_t version, const int *model, const char *what)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("k/"), &ss, NULL, NULL, &a), 0);
    int next = 0; /* every model index below next was checked */
    cfdb_key_selector b = { CFDB_BYTES_LIT("k/"), false, 1 };
    for (;;) {
        cfdb_get_key_values_reply r;
        assert_int_equal(
            wc_get_range(&f->w, ss, b, (cfdb_key_selector){ CFDB_BYTES_LIT("k0"), false, 1 }, version, 1000, 1 << 20, &r, &a),
            0);
        for (uint32_t k = 0; k < r.data.count; k++) {
            int i = atoi((const char *)r.data.items[k].key.ptr + 2);
            assert_true(i >= next && i < NALL);
            for (; next < i; next++)
                if (model[next] >= 0)
                    fail_msg("%s: k/%06d missing (expected generation %d)", what, next, model[next]);
            if (model[i] < 0)
                fail_msg("%s: k/%06d present, expected absent", what, i);
            char want[128];
            value_of(i, model[i], want);
            if (r.data.items[k].value.len != strlen(want) || memcmp(r.data.items[k].value.ptr, want, strlen(want)))
                fail_msg("%s: k/%06d has %.12s, expected %.12s", what, i, (const char *)r.data.items[k].value.ptr, want);
            next = i + 1;
        }
        if (!r.more || r.data.count == 0)
            break;
        static uint8_t last[64];
        cfdb_bytes lk = r.data.items[r.data.count - 1].key;
        assert_true(lk.len <= sizeof last);
        memcpy(last, lk.ptr, lk.len);
        b = (cfdb_key_selector){ cfdb_bytes_make(last, lk.len), true, 1 };
        cfdb_arena_reset(&a); /* the reply's memory: last is a copy */
    }
    for (; next < NALL; next++)
        if (model[next] >= 0)
            fail_msg("%s: k/%06d missing at the end", what, next);
    cfdb_arena_free(&a);
}

/* "ok running version=V keys=N failures=F ..." */
static bool snap_status(fx *f, int64_t *version, unsigned long long *keys)
{
    char out[512];
    cfdb_server_control(f->srv, "snapshot status", out, sizeof out);
    long long v = 0;
    unsigned long long k = 0;
    char state[16] = { 0 };
    assert_int_equal(sscanf(out, "ok %15s version=%lld keys=%llu", state, &v, &k), 3);
    *version = v;
    *keys = k;
    return strcmp(state, "running") == 0;
}

static void control_ok(fx *f, const char *cmd)
{
    char out[512];
    cfdb_server_control(f->srv, cmd, out, sizeof out);
    if (strncmp(out, "ok", 2) != 0)
        fail_msg("%s: %s", cmd, out);
}

/* The snapshot file's k/ rows must be exactly model; its checksum and count valid. */
static void expect_snapshot_file(int64_t want_version, const int *model)
{
    char path[400];
    snprintf(path, sizeof path, "%s/snapshot", g_data);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    size_t len = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *p = malloc(len);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, len, fp), len);
    fclose(fp);
    assert_true(len >= 32);
    uint64_t magic, count, h;
    int64_t v;
    memcpy(&magic, p, 8);
    memcpy(&v, p + 8, 8);
    memcpy(&count, p + len - 16, 8);
    memcpy(&h, p + len - 8, 8);
    assert_true(magic == UINT64_C(0x32504E5342444643));
    assert_true(v == want_version);
    assert_true(XXH3_64bits(p, len - 8) == h);
    size_t off = 16, rows = 0;
    int next = 0;
    while (off < len - 16) {
        uint32_t kl, vl;
        memcpy(&kl, p + off, 4);
        const uint8_t *k = p + off + 4;
        memcpy(&vl, p + off + 4 + kl, 4);
        const uint8_t *val = p + off + 8 + kl;
        off += 8 + (size_t)kl + vl;
        rows++;
        if (kl < 3 || memcmp(k, "k/", 2) != 0)
            continue;
        int i = atoi((const char *)k + 2);
        assert_true(i >= next && i < NALL);
        for (; next < i; next++)
            if (model[next] >= 0)
                fail_msg("snapshot: k/%06d missing", next);
        if (model[i] < 0)
            fail_msg("snapshot: k/%06d present, absent at its version", i);
        char want[128];
        value_of(i, model[i], want);
        if (vl != strlen(want) || memcmp(val, want, vl))
            fail_msg("snapshot: k/%06d has %.12s, expected %.12s (a value from after the snapshot's version?)", i,
                     (const char *)val, want);
        next = i + 1;
    }
    assert_int_equal(off, len - 16);
    assert_int_equal(rows, count);
    for (; next < NALL; next++)
        if (model[next] >= 0)
            fail_msg("snapshot: k/%06d missing at the end", next);
    free(p);
}

static bool frozen_logs_present(void)
{
    DIR *d = opendir(g_data);
    assert_non_null(d);
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "wal.", 4) == 0)
            found = true;
    closedir(d);
    return found;
}

static void test_snapshot_during_load(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-snapload-%d", (int)getpid());
    snprintf(g_data, sizeof g_data, "%s/data", g_dir);
    mkdir(g_dir, 0755);
    fx f;
    fx_start(&f);

    /* NKEYS keys, every tenth index left out (inserted during the snapshot) */
    for (int i = 0; i < NALL; i++)
        g_model[i] = -1;
    change ch[64];
    int n = 0;
    for (int i = 0; i < NKEYS; i++) {
        if (i % 10 == 5)
            continue;
        ch[n++] = (change){ i, 0 };
        if (n == 60) {
            commit_changes(&f, ch, n);
            n = 0;
        }
    }
    if (n)
        commit_changes(&f, ch, n);

    /* start, let one step copy rows, hold */
    control_ok(&f, "snapshot hold on");
    control_ok(&f, "snapshot start");
    int64_t sv;
    unsigned long long copied;
    assert_true(snap_status(&f, &sv, &copied));
    assert_int_equal(copied, 0);
    control_ok(&f, "snapshot hold off");
    for (int k = 0; k < 200 && copied == 0; k++) {
        cfdb_loop_run_once(f.loop, 20000000ull);
        snap_status(&f, &sv, &copied);
    }
    control_ok(&f, "snapshot hold on");
    assert_true(snap_status(&f, &sv, &copied));
    assert_true(copied > 0);
    print_message("snapshot at version %lld held after %llu of ~%d rows\n", (long long)sv, copied, NKEYS);
    memcpy(g_before, g_model, sizeof g_model);
    int64_t v_before = wc_grv(&f.w);
    assert_true(v_before >= sv);

    /* 1. commits on both sides of the copy position: overwrite, clear, insert */
    n = 0;
    for (int i = 0; i < NALL; i += 97) {
        int gen = i % 10 == 5 || i >= NKEYS ? 1 : (i % 3 == 0 ? -1 : 1);
        ch[n++] = (change){ i, gen };
        if (n == 60) {
            commit_changes(&f, ch, n);
            n = 0;
        }
    }
    if (n)
        commit_changes(&f, ch, n);
    assert_true(snap_status(&f, &sv, &copied)); /* still held */

    /* 2. reads now and at the version before the changes */
    expect_reads(&f, wc_grv(&f.w), g_model, "new read version, snapshot held");
    expect_reads(&f, v_before, g_before, "read version from before the changes");

    /* 3. release; more commits while the copy goes on */
    control_ok(&f, "snapshot hold off");
    n = 0;
    for (int i = 3; i < NALL; i += 41) {
        ch[n++] = (change){ i, i % 2 ? 2 : -1 };
        if (n == 60) {
            commit_changes(&f, ch, n);
            n = 0;
        }
    }
    if (n)
        commit_changes(&f, ch, n);
    for (int k = 0; k < 1000 && snap_status(&f, &sv, &copied); k++)
        cfdb_loop_run_once(f.loop, 10000000ull);
    assert_false(snap_status(&f, &sv, &copied));
    expect_reads(&f, wc_grv(&f.w), g_model, "after the snapshot");

    /* 4. the file is the store at its version; the frozen log is gone */
    expect_snapshot_file(sv, g_before);
    assert_false(frozen_logs_present());

    /* 5. restart: snapshot + log */
    fx_stop(&f);
    fx_start(&f);
    expect_reads(&f, wc_grv(&f.w), g_model, "after a restart");
    fx_stop(&f);
}

static int teardown(void **state)
{
    (void)state;
    if (g_dir[0])
        sp_rmtree(g_dir);
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_snapshot_during_load, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
