/* The special-key modules of issue 12's last part, against cfdb-server through fdb_c.h, with
 * expectations derived by hand from FoundationDB 7.3.77's source (file / function named at
 * each test):
 *   \xff\xff/global_config/        GlobalConfigImpl, GlobalConfig::applyChanges / insert / updater
 *   \xff\xff/tracing/              TracingOptionsImpl, Transaction::setTransactionID / setToken
 *   \xff\xff/management/profiling/ ClientProfilingImpl: not registered at API 730
 *   \xff\xff/actor_lineage/        ActorLineageImpl (actorLineageGetRangeActor, parse helpers)
 *   \xff\xff/actor_profiler_conf/  ActorProfilerConf, ProfilerConfigT::reset / getConfig
 *   \xff\xff/worker_interfaces/    with management/options/worker_interfaces/verify
 *   \xff\xff/metrics/health/       DatabaseContext::getHealthMetrics' staleness cache
 * The history value's flat buffer is read back with cfdb's wire library (fb_decode of
 * VersionHistory, checked against golden captures elsewhere); every other expected byte is
 * written out here. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fb.h"
#include "messages.h"

#define SL(x) ((int)sizeof(x) - 1)
#define GC "\xff\xff/global_config/"
#define TR "\xff\xff/tracing/"
#define AL "\xff\xff/actor_lineage/"
#define AP "\xff\xff/actor_profiler_conf/"
#define EM "\xff\xff/error_message"

static int group_setup(void **state)
{
    (void)state;
    return api_env_setup(NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static FDBTransaction *writer(void)
{
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0), 0);
    return tr;
}

/* A range read: its error; rows in *kv (valid until *f is destroyed). */
static fdb_error_t range(FDBTransaction *tr, const char *b, int bl, const char *e, int el, const FDBKeyValue **kv,
                         int *n, FDBFuture **f)
{
    *f = fdb_transaction_get_range(tr, S(b), bl, 0, 1, S(e), el, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    fdb_error_t err = api_wait(*f);
    *n = 0;
    if (!err) {
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(*f, kv, n, &more), 0);
    }
    return err;
}

static fdb_error_t range_count(FDBTransaction *tr, const char *b, int bl, const char *e, int el, int *n)
{
    const FDBKeyValue *kv;
    FDBFuture *f;
    fdb_error_t err = range(tr, b, bl, e, el, &kv, n, &f);
    fdb_future_destroy(f);
    return err;
}

static void check_value(FDBTransaction *tr, const char *key, int klen, const void *want, int wlen)
{
    int present = 0, len = 0;
    char buf[512];
    assert_int_equal(api_get(tr, key, klen, 0, &present, buf, sizeof buf, &len), 0);
    if (!want) {
        assert_false(present);
        return;
    }
    assert_true(present);
    assert_int_equal(len, wlen);
    assert_memory_equal(buf, want, (size_t)wlen);
}

static void expect_error_message(FDBTransaction *tr, const char *json)
{
    check_value(tr, EM, SL(EM), json, (int)strlen(json));
}

static void set(FDBTransaction *tr, const char *k, int kl, const void *v, int vl)
{
    fdb_transaction_set(tr, S(k), kl, (const uint8_t *)v, vl);
}

/* ---------------- \xff\xff/global_config/ ---------------- */

/* Tuple encodings (FoundationDB's tuple spec), by hand:
 *   "abc"        02 61 62 63 00
 *   42           15 2a                      (one-byte positive integer)
 *   1.5 double   21 bf f8 00 00 00 00 00 00 (0x3ff8000000000000 with the sign bit flipped)
 *   true         27
 *   0.25 float   20 be 80 00 00             (0x3e800000 with the sign bit flipped)
 *   versionstamp 33 + 12 bytes */
static const uint8_t T_STR[] = { 0x02, 'a', 'b', 'c', 0x00 };
static const uint8_t T_INT[] = { 0x15, 0x2a };
static const uint8_t T_DBL[] = { 0x21, 0xbf, 0xf8, 0, 0, 0, 0, 0, 0 };
static const uint8_t T_BOOL[] = { 0x27 };
static const uint8_t T_FLT[] = { 0x20, 0xbe, 0x80, 0x00, 0x00 };

#define RAW "\xff/globalConfig/k/"
#define HIST "\xff/globalConfig/h/"

static FDBTransaction *system_reader(void)
{
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0), 0);
    return tr;
}

/* Waits (at most 5 s) until the client's view shows key with the given presence. */
static void await_view(const char *key, int klen, bool present_wanted)
{
    for (int i = 0; i < 100; i++) {
        FDBTransaction *tr = api_tr();
        int present = 0, len;
        char buf[64];
        assert_int_equal(api_get(tr, key, klen, 0, &present, buf, sizeof buf, &len), 0);
        fdb_transaction_destroy(tr);
        if (!!present == present_wanted)
            return;
        sleep_ms(50);
    }
    fail_msg("the global config view did not follow the history");
}

/* The history entries' values, decoded; returns their count. */
static int read_history(cfdb_arena *a, cfdb_version_history *out, int cap, int64_t *last_version)
{
    FDBTransaction *tr = system_reader();
    const FDBKeyValue *kv;
    FDBFuture *f;
    int n;
    assert_int_equal(range(tr, HIST, SL(HIST), "\xff/globalConfig/h0", SL("\xff/globalConfig/h0"), &kv, &n, &f), 0);
    assert_true(n <= cap);
    for (int i = 0; i < n; i++) {
        /* key: the prefix + the commit's 10-byte versionstamp (the 4-byte offset removed) */
        assert_int_equal(kv[i].key_length, SL(HIST) + 10);
        uint64_t pv = 0;
        assert_true(kv[i].value_length > 8);
        memcpy(&pv, kv[i].value, 8); /* IncludeVersion: the protocol version, little-endian */
        assert_true(pv == UINT64_C(0x0FDB00B073000000));
        memset(&out[i], 0, sizeof out[i]);
        assert_int_equal(fb_decode(&cfdb_msg_version_history, kv[i].value + 8, (uint32_t)kv[i].value_length - 8,
                                   &out[i], NULL, a),
                         0);
        assert_true(out[i].version == 0); /* VersionHistory vh{ 0 } */
        uint64_t v = 0;
        for (int b = 0; b < 8; b++)
            v = (v << 8) | kv[i].key[SL(HIST) + b];
        *last_version = (int64_t)v;
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return n;
}

static void expect_mutation(const cfdb_mutation *m, int type, const char *p1, int l1, const void *p2, int l2)
{
    assert_int_equal(m->type, type);
    assert_int_equal((int)m->param1.len, l1);
    assert_memory_equal(m->param1.ptr, p1, (size_t)l1);
    assert_int_equal((int)m->param2.len, l2);
    assert_memory_equal(m->param2.ptr, p2, (size_t)l2);
}

static void test_global_config_write_read(void **state)
{
    (void)state;
    /* writes need SPECIAL_KEY_SPACE_ENABLE_WRITES (SpecialKeySpace::set: 2114) */
    FDBTransaction *tr = api_tr();
    set(tr, GC "t/s", SL(GC "t/s"), T_STR, sizeof T_STR);
    assert_int_equal(api_commit(tr), 2114);
    fdb_transaction_destroy(tr);

    tr = writer();
    set(tr, GC "t/s", SL(GC "t/s"), T_STR, sizeof T_STR);
    set(tr, GC "t/i", SL(GC "t/i"), T_INT, sizeof T_INT);
    set(tr, GC "t/d", SL(GC "t/d"), T_DBL, sizeof T_DBL);
    set(tr, GC "t/b", SL(GC "t/b"), T_BOOL, sizeof T_BOOL);
    set(tr, GC "t/f", SL(GC "t/f"), T_FLT, sizeof T_FLT);
    set(tr, GC "t/raw", SL(GC "t/raw"), "hello", 5); /* not a tuple: stored, not in the view */
    /* GlobalConfigImpl::getRange reads the database's view, not the transaction's writes */
    check_value(tr, GC "t/s", SL(GC "t/s"), NULL, 0);
    assert_int_equal(api_commit(tr), 0);
    int64_t committed;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &committed), 0);
    fdb_transaction_destroy(tr);

    /* applyChanges: \xff/globalConfig/k/<bare key> = the value as given */
    tr = system_reader();
    check_value(tr, RAW "t/s", SL(RAW "t/s"), T_STR, sizeof T_STR);
    check_value(tr, RAW "t/i", SL(RAW "t/i"), T_INT, sizeof T_INT);
    check_value(tr, RAW "t/d", SL(RAW "t/d"), T_DBL, sizeof T_DBL);
    check_value(tr, RAW "t/b", SL(RAW "t/b"), T_BOOL, sizeof T_BOOL);
    check_value(tr, RAW "t/f", SL(RAW "t/f"), T_FLT, sizeof T_FLT);
    check_value(tr, RAW "t/raw", SL(RAW "t/raw"), "hello", 5);
    /* \xff/globalConfig/v: SetVersionstampedValue of "0123456789\0\0\0\0" at offset 0: the
     * 10-byte versionstamp (commit version big-endian, then the batch index) */
    int present, len;
    uint8_t vbuf[64];
    assert_int_equal(api_get(tr, "\xff/globalConfig/v", SL("\xff/globalConfig/v"), 0, &present, vbuf, sizeof vbuf, &len),
                     0);
    assert_true(present);
    assert_int_equal(len, 10);
    uint64_t v = 0;
    for (int b = 0; b < 8; b++)
        v = (v << 8) | vbuf[b];
    assert_true((int64_t)v == committed);
    fdb_transaction_destroy(tr);

    /* the history entry: insertions in key order, each SetValue(bare key, value) */
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_version_history h[4];
    int64_t hv;
    assert_int_equal(read_history(&a, h, 4, &hv), 1);
    assert_true(hv == committed);
    assert_int_equal((int)h[0].mutations.count, 6);
    expect_mutation(&h[0].mutations.items[0], 0, "t/b", 3, T_BOOL, sizeof T_BOOL);
    expect_mutation(&h[0].mutations.items[1], 0, "t/d", 3, T_DBL, sizeof T_DBL);
    expect_mutation(&h[0].mutations.items[2], 0, "t/f", 3, T_FLT, sizeof T_FLT);
    expect_mutation(&h[0].mutations.items[3], 0, "t/i", 3, T_INT, sizeof T_INT);
    expect_mutation(&h[0].mutations.items[4], 0, "t/raw", 5, "hello", 5);
    expect_mutation(&h[0].mutations.items[5], 0, "t/s", 3, T_STR, sizeof T_STR);
    cfdb_arena_free(&a);

    /* the client's view follows ClientDBInfo.history (GlobalConfig::updater) */
    await_view(GC "t/s", SL(GC "t/s"), true);
    tr = api_tr();
    check_value(tr, GC "t/s", SL(GC "t/s"), "abc", 3);
    check_value(tr, GC "t/i", SL(GC "t/i"), "42", 2);
    check_value(tr, GC "t/d", SL(GC "t/d"), "1.500000", 8); /* std::to_string(double) */
    check_value(tr, GC "t/b", SL(GC "t/b"), "1", 1);        /* std::to_string(bool) */
    check_value(tr, GC "t/f", SL(GC "t/f"), "0.250000", 8);
    check_value(tr, GC "t/raw", SL(GC "t/raw"), NULL, 0); /* Tuple::unpack failed: dropped */
    /* removePrefix by size: up to the module's end the range's end becomes "" */
    int n;
    assert_int_equal(range_count(tr, GC, SL(GC), "\xff\xff/global_config0", SL("\xff\xff/global_config0"), &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(range_count(tr, GC "t/", SL(GC "t/"), "\xff\xff/global_config0", SL("\xff\xff/global_config0"), &n),
                     2005); /* inverted_range */
    const FDBKeyValue *kv;
    FDBFuture *f;
    assert_int_equal(range(tr, GC, SL(GC), GC "\xff", SL(GC "\xff"), &kv, &n, &f), 0);
    assert_int_equal(n, 5);
    static const char *const keys[] = { GC "t/b", GC "t/d", GC "t/f", GC "t/i", GC "t/s" };
    for (int i = 0; i < 5; i++) {
        assert_int_equal(kv[i].key_length, (int)strlen(keys[i]));
        assert_memory_equal(kv[i].key, keys[i], strlen(keys[i]));
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void test_global_config_clear_and_history(void **state)
{
    (void)state;
    /* a single-key clear: ClearRange(bare, bare\0) in the history, the raw key cleared */
    FDBTransaction *tr = writer();
    fdb_transaction_clear(tr, S(GC "t/i"), SL(GC "t/i"));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    tr = system_reader();
    check_value(tr, RAW "t/i", SL(RAW "t/i"), NULL, 0);
    fdb_transaction_destroy(tr);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_version_history h[4];
    int64_t hv;
    assert_int_equal(read_history(&a, h, 4, &hv), 2);
    assert_int_equal((int)h[1].mutations.count, 1);
    expect_mutation(&h[1].mutations.items[0], 1, "t/i", 3, "t/i\0", 4);
    await_view(GC "t/i", SL(GC "t/i"), false);

    /* a clear up to the module's end: its end lacks the prefix, so no mutation, but an
     * entry is still written (globalConfigCommitActor) */
    tr = writer();
    fdb_transaction_clear_range(tr, S(GC), SL(GC), S("\xff\xff/global_config0"), SL("\xff\xff/global_config0"));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(read_history(&a, h, 4, &hv), 3);
    assert_int_equal((int)h[2].mutations.count, 0);
    tr = system_reader();
    check_value(tr, RAW "t/s", SL(RAW "t/s"), T_STR, sizeof T_STR);
    fdb_transaction_destroy(tr);

    /* at most 3 entries: the oldest beyond 2 are cleared before this commit's is added */
    tr = writer();
    uint8_t vs[13] = { 0x33, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    set(tr, GC "t/vs", SL(GC "t/vs"), vs, sizeof vs);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(read_history(&a, h, 4, &hv), 3);
    assert_int_equal((int)h[2].mutations.count, 1);
    expect_mutation(&h[2].mutations.items[0], 0, "t/vs", 4, vs, sizeof vs);
    cfdb_arena_free(&a);

    /* a versionstamp value is kept by GlobalConfig::insert but GlobalConfigImpl::getRange
     * has no text for it: ASSERT(false), internal_error */
    for (int i = 0; i < 100; i++) {
        tr = api_tr();
        int n;
        fdb_error_t err = range_count(tr, GC "t/v", SL(GC "t/v"), GC "t/w", SL(GC "t/w"), &n);
        fdb_transaction_destroy(tr);
        if (err == 4100)
            break;
        assert_int_equal(err, 0);
        assert_int_equal(n, 0);
        assert_true(i < 99);
        sleep_ms(50);
    }
    tr = api_tr();
    check_value(tr, GC "t/s", SL(GC "t/s"), "abc", 3); /* the other keys read as before */
    fdb_transaction_destroy(tr);
    tr = writer();
    fdb_transaction_clear_range(tr, S(GC "t/"), SL(GC "t/"), S(GC "t0"), SL(GC "t0"));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    await_view(GC "t/s", SL(GC "t/s"), false);
}

/* A history entry written under another protocol version: the cluster controller publishes
 * one entry of version INT64_MAX (monitorGlobalConfig) and the client reads the whole
 * configuration again (GlobalConfig::updater -> refresh), so a key written straight into
 * \xff/globalConfig/k/ (no history of its own) appears in the view. */
static void test_global_config_protocol_change(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0), 0);
    set(tr, RAW "p/x", SL(RAW "p/x"), T_INT, sizeof T_INT);
    static const uint8_t old_entry[12] = { 0x00, 0x00, 0x00, 0x72, 0xb0, 0x00, 0xdb, 0x0f, 0, 0, 0, 0 };
    set(tr, HIST "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x00\x00", SL(HIST) + 10, old_entry, sizeof old_entry);
    fdb_transaction_atomic_op(tr, S("\xff/globalConfig/v"), SL("\xff/globalConfig/v"), S("0123456789\0\0\0\0"), 14,
                              FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    await_view(GC "p/x", SL(GC "p/x"), true);
    tr = api_tr();
    check_value(tr, GC "p/x", SL(GC "p/x"), "42", 2);
    fdb_transaction_destroy(tr);
    /* clean up: no history, no version */
    tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0), 0);
    fdb_transaction_clear_range(tr, S("\xff/globalConfig/"), SL("\xff/globalConfig/"), S("\xff/globalConfig0"),
                                SL("\xff/globalConfig0"));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

/* ---------------- \xff\xff/tracing/ ---------------- */

static void read_tracing(FDBTransaction *tr, char *id, char *token)
{
    const FDBKeyValue *kv;
    FDBFuture *f;
    int n;
    assert_int_equal(range(tr, TR, SL(TR), "\xff\xff/tracing0", SL("\xff\xff/tracing0"), &kv, &n, &f), 0);
    assert_int_equal(n, 2);
    /* key order: token, then transaction_id */
    assert_int_equal(kv[0].key_length, SL(TR "token"));
    assert_memory_equal(kv[0].key, TR "token", SL(TR "token"));
    assert_int_equal(kv[1].key_length, SL(TR "transaction_id"));
    assert_memory_equal(kv[1].key, TR "transaction_id", SL(TR "transaction_id"));
    /* UID::toString: 32 lowercase hex digits; spanID: std::to_string(uint64_t) */
    assert_int_equal(kv[1].value_length, 32);
    for (int i = 0; i < 32; i++)
        assert_non_null(memchr("0123456789abcdef", kv[1].value[i], 16));
    memcpy(id, kv[1].value, 32);
    id[32] = 0;
    assert_true(kv[0].value_length >= 1 && kv[0].value_length <= 20);
    for (int i = 0; i < kv[0].value_length; i++)
        assert_true(kv[0].value[i] >= '0' && kv[0].value[i] <= '9');
    memcpy(token, kv[0].value, (size_t)kv[0].value_length);
    token[kv[0].value_length] = 0;
    fdb_future_destroy(f);
}

static void test_tracing(void **state)
{
    (void)state;
    char id1[33], id2[33], tok1[24], tok2[24];
    FDBTransaction *tr = writer();
    read_tracing(tr, id1, tok1);
    read_tracing(tr, id2, tok2);
    assert_string_equal(id1, id2); /* one span context per transaction */
    assert_string_equal(tok1, tok2);
    /* on_error's reset keeps it (Transaction::reset: generateNewSpan false) */
    assert_int_equal(api_on_error(tr, 1020), 0);
    read_tracing(tr, id2, tok2);
    assert_string_equal(id1, id2);
    /* fdb_transaction_reset draws a new one (fullReset) */
    fdb_transaction_reset(tr);
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0), 0);
    read_tracing(tr, id2, tok2);
    assert_string_not_equal(id1, id2);

    /* setTransactionID(UID::fromString(value)); setToken: "false" 0, "true" random */
    set(tr, TR "transaction_id", SL(TR "transaction_id"), "0123456789abcdef0011223344556677", 32);
    set(tr, TR "token", SL(TR "token"), "false", 5);
    check_value(tr, TR "transaction_id", SL(TR "transaction_id"), "0123456789abcdef0011223344556677", 32);
    check_value(tr, TR "token", SL(TR "token"), "0", 1);
    set(tr, TR "token", SL(TR "token"), "true", 4);
    read_tracing(tr, id2, tok2);
    assert_string_equal(id2, "0123456789abcdef0011223344556677");
    assert_string_not_equal(tok2, "0");
    /* other keys of the module: nothing happens, nothing is answered */
    set(tr, TR "other", SL(TR "other"), "x", 1);
    check_value(tr, TR "other", SL(TR "other"), NULL, 0);
    /* nothing was recorded: the commit goes through */
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);

    /* a token other than true/false: special_keys_api_failure at once */
    tr = writer();
    set(tr, TR "token", SL(TR "token"), "maybe", 5);
    assert_int_equal(api_commit(tr), 2117);
    fdb_transaction_destroy(tr);
    /* the error is the transaction's deferred error: a later get fails with it too
     * (ThreadSafeTransaction checks it first), so its message cannot be read here */
    tr = writer();
    set(tr, TR "token", SL(TR "token"), "maybe", 5);
    int present, len;
    char buf[256];
    assert_int_equal(api_get(tr, EM, SL(EM), 0, &present, buf, sizeof buf, &len), 2117);
    fdb_transaction_destroy(tr);
    /* UID::fromString's ASSERTs: not 32 characters, or not hex: internal_error */
    tr = writer();
    set(tr, TR "transaction_id", SL(TR "transaction_id"), "abc", 3);
    assert_int_equal(api_commit(tr), 4100);
    fdb_transaction_destroy(tr);
    tr = writer();
    set(tr, TR "transaction_id", SL(TR "transaction_id"), "zz23456789abcdef0011223344556677", 32);
    assert_int_equal(api_commit(tr), 4100);
    fdb_transaction_destroy(tr);

    /* after a write (approximate size > 0): recorded, the commit fails */
    char p[64];
    api_prefix(p, sizeof p, "tracing");
    tr = writer();
    set(tr, p, L(p), "v", 1);
    set(tr, TR "token", SL(TR "token"), "true", 4);
    expect_error_message(tr, "{\"command\":\"configure trace\",\"message\":\"tracing options must be set first\","
                             "\"retriable\":false}");
    assert_int_equal(api_commit(tr), 2117);
    fdb_transaction_destroy(tr);

    /* clears are refused (TracingOptionsImpl::clear) */
    tr = writer();
    fdb_transaction_clear(tr, S(TR "token"), SL(TR "token"));
    assert_int_equal(api_commit(tr), 2117);
    fdb_transaction_destroy(tr);
}

/* ---------------- \xff\xff/management/profiling/ at API 730 ---------------- */

/* ClientProfilingImpl is registered only below ApiVersion::withClientProfilingDeprecated (720;
 * NativeAPI.actor.cpp registerSpecialKeysImpl's deprecatedVersion): at 730 its keys belong to
 * no implementation of the management module. */
static void test_profiling_unregistered(void **state)
{
    (void)state;
    FDBTransaction *tr = writer();
    check_value(tr, "\xff\xff/management/profiling/client_txn_sample_rate",
                 SL("\xff\xff/management/profiling/client_txn_sample_rate"), NULL, 0);
    int n;
    assert_int_equal(range_count(tr, "\xff\xff/management/profiling/", SL("\xff\xff/management/profiling/"),
                                 "\xff\xff/management/profiling0", SL("\xff\xff/management/profiling0"), &n),
                     0);
    assert_int_equal(n, 0);
    set(tr, "\xff\xff/management/profiling/client_txn_sample_rate",
        SL("\xff\xff/management/profiling/client_txn_sample_rate"), "0.5", 3);
    assert_int_equal(api_commit(tr), 2115); /* special_keys_no_write_module_found */
    fdb_transaction_destroy(tr);
}

/* ---------------- \xff\xff/actor_lineage/ ---------------- */

static fdb_error_t lineage(const char *b, int bl, const char *e, int el, const char *message)
{
    FDBTransaction *tr = api_tr();
    int n = -1;
    fdb_error_t err = range_count(tr, b, bl, e, el, &n);
    if (!err)
        assert_int_equal(n, 0); /* no samples: a 7.3.77 fdbserver is built without ENABLE_SAMPLING */
    if (message) {
        char json[256];
        snprintf(json, sizeof json, "{\"command\":\"read actor_lineage\",\"message\":\"%s\",\"retriable\":false}",
                 message);
        assert_int_equal(err, 2117);
        expect_error_message(tr, json);
    }
    fdb_transaction_destroy(tr);
    return err;
}

static void test_actor_lineage(void **state)
{
    (void)state;
    /* splitAny("/") needs index and host on both ends */
    lineage(AL, SL(AL), "\xff\xff/actor_lineage0", SL("\xff\xff/actor_lineage0"),
            "missing required parameters (index, host)");
    lineage(AL "state/", SL(AL "state/"), AL "state/\xff", SL(AL "state/\xff"),
            "missing required parameters (index, host)");
    /* neither state/ nor time/ */
    lineage(AL "foo/1.2.3.4:1", SL(AL "foo/1.2.3.4:1"), AL "foo/1.2.3.4:2", SL(AL "foo/1.2.3.4:2"),
            "invalid index in actor_lineage");
    /* NetworkAddress::parse throws an Error: "failed to parse key" */
    lineage(AL "state/nohost", SL(AL "state/nohost"), AL "state/nohost/x", SL(AL "state/nohost/x"),
            "failed to parse key");
    /* two hosts */
    lineage(AL "state/1.2.3.4:1", SL(AL "state/1.2.3.4:1"), AL "state/1.2.3.4:2", SL(AL "state/1.2.3.4:2"),
            "the host must remain the same on both ends of the range");
    /* the parse helpers' std::exceptions leave the actor as unknown_error */
    assert_int_equal(lineage(AL "state/0.0.0.0:0", SL(AL "state/0.0.0.0:0"), AL "state/0.0.0.0:0/x",
                             SL(AL "state/0.0.0.0:0/x"), NULL),
                     4000); /* !isValid(): std::invalid_argument */
    assert_int_equal(lineage(AL "state/1.2.3.4:1/sleeping", SL(AL "state/1.2.3.4:1/sleeping"), AL "state/1.2.3.4:1/x",
                             SL(AL "state/1.2.3.4:1/x"), NULL),
                     4000); /* WaitState: std::range_error */
    assert_int_equal(lineage(AL "time/1.2.3.4:1/yesterday", SL(AL "time/1.2.3.4:1/yesterday"), AL "time/1.2.3.4:1/z",
                             SL(AL "time/1.2.3.4:1/z"), NULL),
                     4000); /* strptime("%FT%T%z") */
    assert_int_equal(lineage(AL "state/1.2.3.4:1/Disk/2020-01-02T03:04:05+0000/x",
                             SL(AL "state/1.2.3.4:1/Disk/2020-01-02T03:04:05+0000/x"), AL "state/1.2.3.4:1/Running",
                             SL(AL "state/1.2.3.4:1/Running"), NULL),
                     4000); /* std::stoi */
    /* well-formed: state and time orders, a get of one key */
    assert_int_equal(lineage(AL "state/1.2.3.4:1/Disk/2020-01-02T03:04:05+0000/7",
                             SL(AL "state/1.2.3.4:1/Disk/2020-01-02T03:04:05+0000/7"), AL "state/1.2.3.4:1/running",
                             SL(AL "state/1.2.3.4:1/running"), NULL),
                     0);
    assert_int_equal(lineage(AL "time/1.2.3.4:1/2020-01-02T03:04:05+0000/network", SL(AL "time/1.2.3.4:1/2020-01-02T03:04:05+0000/network"),
                             AL "time/1.2.3.4:1/2030-01-02T03:04:05+0000", SL(AL "time/1.2.3.4:1/2030-01-02T03:04:05+0000"), NULL),
                     0);
    /* read only: SpecialKeySpace::set finds no write implementation */
    FDBTransaction *tr = writer();
    set(tr, AL "state/1.2.3.4:1", SL(AL "state/1.2.3.4:1"), "x", 1);
    assert_int_equal(api_commit(tr), 2115);
    fdb_transaction_destroy(tr);
}

/* ---------------- \xff\xff/actor_profiler_conf/ ---------------- */

/* The rows of [b, e) in the module; returns their count (rows into keys / values). */
static int conf_rows(FDBDatabase *db, const char *b, int bl, const char *e, int el, char keys[][64], char values[][64])
{
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    const FDBKeyValue *kv;
    FDBFuture *f;
    int n;
    assert_int_equal(range(tr, b, bl, e, el, &kv, &n, &f), 0);
    assert_true(n <= 4);
    for (int i = 0; i < n; i++) {
        assert_true(kv[i].key_length < 64 && kv[i].value_length < 64);
        memcpy(keys[i], kv[i].key, (size_t)kv[i].key_length);
        keys[i][kv[i].key_length] = 0;
        memcpy(values[i], kv[i].value, (size_t)kv[i].value_length);
        values[i][kv[i].value_length] = 0;
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return n;
}

/* Sets name = value in a transaction, commits; returns the commit's error, and the error
 * message (NUL-terminated) in msg when it failed. */
static fdb_error_t conf_commit(const char *name, const char *value, char *msg, size_t cap)
{
    char key[96];
    int kl = snprintf(key, sizeof key, AP "%s", name);
    FDBTransaction *tr = writer();
    set(tr, key, kl, value, (int)strlen(value));
    fdb_error_t err = api_commit(tr);
    if (err && msg) {
        int present = 0, len = 0;
        assert_int_equal(api_get(tr, EM, SL(EM), 0, &present, msg, (int)cap - 1, &len), 0);
        assert_true(present);
        msg[len] = 0;
    }
    fdb_transaction_destroy(tr);
    return err;
}

static void conf_clear(const char *name)
{
    char key[96];
    int kl = snprintf(key, sizeof key, AP "%s", name);
    FDBTransaction *tr = writer();
    fdb_transaction_clear(tr, S(key), kl);
    assert_int_equal(api_commit(tr), 0); /* nothing recorded: an empty commit */
    fdb_transaction_destroy(tr);
}

static void test_actor_profiler_conf(void **state)
{
    (void)state;
    char k[4][64], v[4][64], msg[256];
    FDBDatabase *db = g_env.db;
    /* the database's map starts as ProfilerConfig's getConfig: ingestor = none */
    assert_int_equal(conf_rows(db, AP, SL(AP), "\xff\xff/actor_profiler_conf0", SL("\xff\xff/actor_profiler_conf0"), k, v),
                     0); /* the end becomes "" */
    assert_int_equal(conf_rows(db, AP, SL(AP), AP "z", SL(AP "z"), k, v), 1);
    assert_string_equal(k[0], AP "ingestor");
    assert_string_equal(v[0], "none");
    /* rows are keyed with the range's begin, not the module's prefix */
    assert_int_equal(conf_rows(db, AP "a", SL(AP "a"), AP "z", SL(AP "z"), k, v), 1);
    assert_string_equal(k[0], AP "aingestor");
    /* begin < name is strict: from the name itself nothing */
    assert_int_equal(conf_rows(db, AP "ingestor", SL(AP "ingestor"), AP "z", SL(AP "z"), k, v), 0);
    /* and so a get of the option has no value */
    FDBTransaction *tr = api_tr();
    check_value(tr, AP "ingestor", SL(AP "ingestor"), NULL, 0);
    fdb_transaction_destroy(tr);

    /* ProfilerConfigT::reset's errors, as the error message's text itself */
    assert_int_equal(conf_commit("ingestor", "bogus", msg, sizeof msg), 2117);
    assert_string_equal(msg, "Unsupported ingestor: bogus");
    /* the map is the database's: the failed commit's value stays */
    assert_int_equal(conf_rows(db, AP, SL(AP), AP "z", SL(AP "z"), k, v), 1);
    assert_string_equal(v[0], "bogus");
    assert_int_equal(conf_commit("ingestor", "fluentd", msg, sizeof msg), 2117);
    assert_string_equal(msg, "Endpoint is required for fluentd ingestor");
    assert_int_equal(conf_commit("ingestor_endpoint", "notanaddress", msg, sizeof msg), 2117);
    assert_string_equal(msg, "Can't parse address notanaddress");
    assert_int_equal(conf_commit("ingestor_protocol", "sctp", msg, sizeof msg), 2117);
    assert_string_equal(msg, "Unsupported protocol for fluentd: sctp");
    assert_int_equal(conf_commit("zzz", "1", msg, sizeof msg), 2117);
    assert_string_equal(msg, "Unsupported protocol for fluentd: sctp"); /* map order: ingestor_protocol first */
    conf_clear("zzz");
    assert_int_equal(conf_commit("ingestor_protocol", "tcp", msg, sizeof msg), 2117);
    assert_string_equal(msg, "Can't parse address notanaddress");
    /* a range clear removes the names from b through e inclusive */
    tr = writer();
    fdb_transaction_clear_range(tr, S(AP "ingestor_e"), SL(AP "ingestor_e"), S(AP "ingestor_endpoint"),
                                SL(AP "ingestor_endpoint"));
    fdb_transaction_destroy(tr);
    assert_int_equal(conf_rows(db, AP, SL(AP), AP "z", SL(AP "z"), k, v), 2);
    assert_string_equal(k[0], AP "ingestor");
    assert_string_equal(k[1], AP "ingestor_protocol");
    assert_int_equal(conf_commit("ingestor_endpoint", "127.0.0.1:9999", msg, sizeof msg), 0);

    /* a database made now starts from the process's FluentD configuration (getConfig) */
    FDBDatabase *db2;
    assert_int_equal(fdb_create_database(g_env.server.cluster_file, &db2), 0);
    assert_int_equal(conf_rows(db2, AP, SL(AP), AP "z", SL(AP "z"), k, v), 3);
    assert_string_equal(k[0], AP "collector_endpoint");
    assert_string_equal(v[0], "127.0.0.1:9999");
    assert_string_equal(k[1], AP "collector_protocol");
    assert_string_equal(v[1], "tcp");
    assert_string_equal(k[2], AP "ingestor");
    assert_string_equal(v[2], "fluentd");
    fdb_database_destroy(db2);

    /* back to none: ingestor_endpoint and ingestor_protocol are accepted and unused */
    assert_int_equal(conf_commit("ingestor", "none", msg, sizeof msg), 0);
    assert_int_equal(fdb_create_database(g_env.server.cluster_file, &db2), 0);
    assert_int_equal(conf_rows(db2, AP, SL(AP), AP "z", SL(AP "z"), k, v), 1);
    assert_string_equal(v[0], "none");
    fdb_database_destroy(db2);
}

/* ---------------- worker_interfaces/verify, health metrics cache ---------------- */

#define WI "\xff\xff/worker_interfaces/"
#define VERIFY "\xff\xff/management/options/worker_interfaces/verify"

static void test_worker_interfaces_verify(void **state)
{
    (void)state;
    /* the dev server's one worker answers GetLeaderRequest at its address: listed */
    FDBTransaction *tr = writer();
    set(tr, VERIFY, SL(VERIFY), "", 0);
    int n;
    assert_int_equal(range_count(tr, WI, SL(WI), "\xff\xff/worker_interfaces0", SL("\xff\xff/worker_interfaces0"), &n),
                     0);
    assert_int_equal(n, 1);
    fdb_transaction_destroy(tr);
}

#define HM "\xff\xff/metrics/health/"

static int health_rows(FDBTransaction *tr)
{
    int n;
    assert_int_equal(range_count(tr, HM, SL(HM), "\xff\xff/metrics/health0", SL("\xff\xff/metrics/health0"), &n), 0);
    return n;
}

/* The server's count of GetHealthMetricsRequests: all, and the detailed ones. */
static void health_requests(unsigned long long *all, unsigned long long *detailed)
{
    assert_int_equal(api_server_status(&g_env.server, "health_requests", all), 0);
    assert_int_equal(api_server_status(&g_env.server, "health_detailed", detailed), 0);
}

/* DatabaseContext::getHealthMetrics: an answer within 0.5 s of the last is reused (no
 * request); a detailed read later than that but within 5 s of the last detailed answer asks
 * without detail, and HealthMetrics::update(reply, detailed = true, true) then empties the
 * per-process entries: no rows. The server counts the requests. The windows are timing, so
 * each check is tried until one attempt's reads fall inside its window (a loaded machine
 * may need several); the test fails if none does. */
static void test_health_metrics_cache(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    bool reused = false, emptied = false;
    for (int attempt = 0; attempt < 8 && !(reused && emptied); attempt++) {
        /* nothing cached, and (after an attempt's detailed answer) no detailed answer
         * younger than 5 s */
        sleep_ms(attempt ? 5100 : 600);
        unsigned long long a0, d0, a1, d1, a2, d2;
        health_requests(&a0, &d0);
        double t0 = api_now_ms();
        int first = health_rows(tr);
        double t1 = api_now_ms();
        health_requests(&a1, &d1);
        assert_true(first >= 2); /* log/<uid> and storage/<uid> rows */
        if (t1 - t0 < 450) {
            /* the last detailed answer is at least 5 s old or within 0.5 s: one request,
             * detailed unless this read was served from an earlier attempt's answer */
            assert_true(a1 - a0 <= 1);
            int again = health_rows(tr);
            double t2 = api_now_ms();
            health_requests(&a2, &d2);
            if (t2 - t0 < 450) {
                assert_int_equal(a2, a1); /* reused */
                assert_int_equal(again, first);
                reused = true;
            }
        }
        if (a1 - a0 == 1 && d1 - d0 == 1) {
            /* a detailed answer arrived at about t1: a detailed read 0.5..5 s later asks
             * without detail and empties the rows */
            sleep_ms(700);
            double t3 = api_now_ms();
            health_requests(&a0, &d0);
            int later = health_rows(tr);
            double t4 = api_now_ms();
            health_requests(&a1, &d1);
            if (t4 - t1 < 4500 && t3 - t1 > 500) {
                assert_int_equal(a1 - a0, 1);
                assert_int_equal(d1 - d0, 0); /* asked without detail */
                assert_int_equal(later, 0);
                emptied = true;
            }
        }
        if (!(reused && emptied))
            print_message("health cache: attempt %d missed a timing window (reused %d, emptied %d)\n", attempt,
                          reused, emptied);
    }
    assert_true(reused);
    assert_true(emptied);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_global_config_write_read),
        cmocka_unit_test(test_global_config_clear_and_history),
        cmocka_unit_test(test_global_config_protocol_change),
        cmocka_unit_test(test_tracing),
        cmocka_unit_test(test_profiling_unregistered),
        cmocka_unit_test(test_actor_lineage),
        cmocka_unit_test(test_actor_profiler_conf),
        cmocka_unit_test(test_worker_interfaces_verify),
        cmocka_unit_test(test_health_metrics_cache),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
