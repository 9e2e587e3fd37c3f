/* Behaviours bindings rely on, each as libfdb_c 7.3.77 has it (NativeAPI.actor.cpp,
 * ReadYourWrites.actor.cpp, bindings/c/fdb_c.cpp at the tag), against cfdb-server started with
 * tenant_mode optional:
 *   - in a tenant, range reads whose selectors resolve past the tenant's last key (or before
 *     its first) end at once with the rows inside the tenant, with and without
 *     read-your-writes;
 *   - every get_versionstamp future of a transaction gets the stamp;
 *   - set_read_version's version_invalid / read_version_already_set, deferred to the next
 *     operations;
 *   - range limits: -1 is unlimited, other negative row or byte limits range_limits_invalid;
 *   - below API 520 the old versionstamp operand forms (child processes selecting API 510,
 *     460, 200, and 520, 730);
 *   - estimated range size and split points of a cancelled transaction: transaction_cancelled;
 *   - range reads the transaction's own writes answer need no read version (nor tenant);
 *   - the network busyness as FoundationDB's C unit test monitor_network_busyness reads it,
 *     from the start (child processes) and after load;
 */
#include "api_helpers.h"
#include "tenant_fixture.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static int group_setup(void **state)
{
    (void)state;
    static const char *const args[] = { "--tenant-mode", "optional", NULL };
    return api_env_setup(args) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* The rows of a selector range read as "k=v," text; the future must be ready within 3 s. */
static fdb_error_t sel_range(FDBTransaction *tr, const char *bk, int bl, int bor, int bofs, const char *ek, int el,
                             int eor, int eofs, int limit, int reverse, char *out, size_t cap)
{
    FDBFuture *f = fdb_transaction_get_range(tr, S(bk), bl, bor, bofs, S(ek), el, eor, eofs, limit, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, reverse);
    fdb_error_t err = api_wait_ms(f, 3000);
    out[0] = 0;
    if (err == 0) {
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        size_t o = 0;
        for (int i = 0; i < n && o < cap; i++)
            o += (size_t)snprintf(out + o, cap - o, "%.*s=%.*s,", kv[i].key_length, (const char *)kv[i].key,
                                  kv[i].value_length, (const char *)kv[i].value);
    }
    fdb_future_destroy(f);
    return err;
}

/* ---------- selectors past a tenant's edges ---------- */

/* Each read of the edge checks in a transaction of its own (a cache warmed by an earlier read
 * would answer it without the storage server). */
static FDBTenant *g_edge_tenant;
static int g_edge_ryw_off, g_edge_write;

static FDBTransaction *edge_tr(void)
{
    FDBTransaction *tr = tf_tenant_tr(g_edge_tenant);
    if (g_edge_ryw_off)
        assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    if (g_edge_write)
        fdb_transaction_set(tr, S("b2"), 2, S("w"), 1);
    return tr;
}

static fdb_error_t edge_range(const char *bk, int bl, int bor, int bofs, const char *ek, int el, int eor, int eofs,
                              int limit, int reverse, char *out, size_t cap)
{
    FDBTransaction *tr = edge_tr();
    fdb_error_t e = sel_range(tr, bk, bl, bor, bofs, ek, el, eor, eofs, limit, reverse, out, cap);
    fdb_transaction_destroy(tr);
    return e;
}

static void check_edges(FDBTenant *t, int ryw_disabled, int with_write)
{
    g_edge_tenant = t;
    g_edge_ryw_off = ryw_disabled;
    g_edge_write = with_write;
    const char *mid = with_write ? "b=2,b2=w," : "b=2,";
    char out[256];
    /* begin firstGreaterThan(c), the last key: resolves to the tenant's end */
    assert_int_equal(edge_range("c", 1, 1, 1, "\xff", 1, 0, 1, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(edge_range("c", 1, 1, 1, "\xff", 1, 0, 1, 0, 1, out, sizeof out), 0);
    assert_string_equal(out, "");
    /* both past the end */
    assert_int_equal(edge_range("a", 1, 0, 10, "a", 1, 0, 20, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(edge_range("z", 1, 0, 1, "z", 1, 0, 5, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(edge_range("c", 1, 1, 1, "c", 1, 1, 3, 5, 1, out, sizeof out), 0);
    assert_string_equal(out, "");
    /* end past the end: the rows up to the tenant's end */
    assert_int_equal(edge_range("b", 1, 0, 1, "a", 1, 0, 9, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, with_write ? "b=2,b2=w,c=3," : "b=2,c=3,");
    /* reverse, the end past the tenant's end (the read-your-writes path once spun on these,
     * re-reading the same shard until transaction_too_old) */
    assert_int_equal(edge_range("b", 1, 0, 1, "a", 1, 0, 9, 0, 1, out, sizeof out), 0);
    assert_string_equal(out, with_write ? "c=3,b2=w,b=2," : "c=3,b=2,");
    assert_int_equal(edge_range("\xfe", 1, 0, -2, "c", 1, 1, 4, 0, 1, out, sizeof out), 0);
    assert_string_equal(out, with_write ? "c=3,b2=w,b=2," : "c=3,b=2,a=1,");
    assert_int_equal(edge_range("\xfe", 1, 0, -1, "z", 1, 1, 4, 1, 1, out, sizeof out), 0);
    assert_string_equal(out, "c=3,");
    assert_int_equal(edge_range("c", 1, 1, 1, "z", 1, 1, 4, 0, 1, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(edge_range("", 0, 0, 4, "b", 1, 1, 4, 0, 1, out, sizeof out), 0);
    assert_string_equal(out, with_write ? "c=3," : "");
    assert_int_equal(edge_range("", 0, 0, 1, "\xff", 1, 0, 3, 2, 1, out, sizeof out), 0);
    assert_string_equal(out, with_write ? "c=3,b2=w," : "c=3,b=2,");
    /* both before the start */
    assert_int_equal(edge_range("a", 1, 0, -3, "a", 1, 0, -1, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(edge_range("", 0, 0, -2, "a", 1, 0, 0, 0, 1, out, sizeof out), 0);
    assert_string_equal(out, "");
    /* begin before the start, end inside */
    assert_int_equal(edge_range("a", 1, 0, -5, "c", 1, 0, 1, 0, 0, out, sizeof out), 0);
    char want[64];
    snprintf(want, sizeof want, "a=1,%s", mid);
    assert_string_equal(out, want);
    /* begin past the end, end before the start (inverted after resolution) */
    assert_int_equal(edge_range("c", 1, 1, 2, "", 0, 0, -1, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
    /* a get_key past the end answers \xff */
    FDBTransaction *tr = edge_tr();
    FDBFuture *f = fdb_transaction_get_key(tr, S("c"), 1, 1, 4, 0);
    assert_int_equal(api_wait_ms(f, 3000), 0);
    const uint8_t *key;
    int kl;
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_int_equal(kl, 1);
    assert_int_equal(key[0], 0xff);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void check_all_edges(FDBTenant *t)
{
    for (int ryw_off = 0; ryw_off < 2; ryw_off++)
        for (int w = 0; w < 2; w++)
            if (!(ryw_off && w))
                check_edges(t, ryw_off, w);
}

/* First with nothing stored after the tenant (the last keys of the database), then with a
 * tenant and raw keys after it. */
static void test_selectors_past_tenant_edges(void **state)
{
    (void)state;
    int64_t id, id2;
    assert_int_equal(tf_create_tenant(g_env.db, "sel-edges", &id), 0);
    FDBTenant *t = tf_open_tenant("sel-edges");
    tf_tenant_set(t, "a", "1");
    tf_tenant_set(t, "b", "2");
    tf_tenant_set(t, "c", "3");
    check_all_edges(t);
    assert_int_equal(tf_create_tenant(g_env.db, "sel-edges-next", &id2), 0);
    FDBTenant *next = tf_open_tenant("sel-edges-next");
    tf_tenant_set(next, "", "next-first");
    tf_tenant_set(next, "x", "next-x");
    assert_int_equal(api_set_committed("zzz", 3, "raw", 3), 0);
    check_all_edges(t);
    fdb_tenant_destroy(next);
    fdb_tenant_destroy(t);
}

/* ---------- repeated futures of one kind ---------- */

static void versionstamp_of(FDBFuture *f, uint8_t out[10])
{
    assert_int_equal(api_wait_ms(f, 5000), 0);
    const uint8_t *key;
    int kl;
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_int_equal(kl, 10);
    memcpy(out, key, 10);
}

/* Every get_versionstamp of a transaction is a future of the same promise (NativeAPI's
 * versionstampPromise): all of them get the stamp, none is cancelled by a later one. */
static void test_versionstamp_futures_share_the_stamp(void **state)
{
    (void)state;
    char p[64], k[80];
    api_prefix(p, sizeof p, "vs-twice");
    int kl = api_key(k, sizeof k, p, "k");
    FDBTransaction *tr = api_tr();
    FDBFuture *f1, *f2, *f3;
    for (;;) {
        fdb_transaction_set(tr, S(k), kl, S("v"), 1);
        f1 = fdb_transaction_get_versionstamp(tr);
        f2 = fdb_transaction_get_versionstamp(tr);
        f3 = fdb_transaction_get_versionstamp(tr);
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        fdb_future_destroy(f1);
        fdb_future_destroy(f2);
        fdb_future_destroy(f3);
        assert_int_equal(api_on_error(tr, e), 0);
    }
    uint8_t v1[10], v2[10], v3[10];
    versionstamp_of(f1, v1);
    versionstamp_of(f2, v2);
    versionstamp_of(f3, v3);
    assert_memory_equal(v1, v2, 10);
    assert_memory_equal(v1, v3, 10);
    int64_t cv = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
    uint64_t stamp_version = 0;
    for (int i = 0; i < 8; i++)
        stamp_version = stamp_version << 8 | v1[i];
    assert_int_equal((int64_t)stamp_version, cv);
    /* one more after the commit: the same stamp at once */
    FDBFuture *f4 = fdb_transaction_get_versionstamp(tr);
    uint8_t v4[10];
    versionstamp_of(f4, v4);
    assert_memory_equal(v1, v4, 10);
    fdb_future_destroy(f1);
    fdb_future_destroy(f2);
    fdb_future_destroy(f3);
    fdb_future_destroy(f4);
    /* destroying one waiting future leaves the others waiting; a reset ends them all with
     * transaction_cancelled */
    fdb_transaction_reset(tr);
    f1 = fdb_transaction_get_versionstamp(tr);
    f2 = fdb_transaction_get_versionstamp(tr);
    f3 = fdb_transaction_get_versionstamp(tr);
    fdb_future_destroy(f2);
    assert_int_equal(api_wait_ms(f1, 200), API_TIMEOUT);
    fdb_transaction_reset(tr);
    assert_int_equal(api_wait_ms(f1, 5000), 1025);
    assert_int_equal(api_wait_ms(f3, 5000), 1025);
    fdb_future_destroy(f1);
    fdb_future_destroy(f3);
    /* read-only: every future ends with no_commit_version */
    f1 = fdb_transaction_get_versionstamp(tr);
    f2 = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 0);
    assert_int_equal(api_wait_ms(f1, 5000), 2021);
    assert_int_equal(api_wait_ms(f2, 5000), 2021);
    fdb_future_destroy(f1);
    fdb_future_destroy(f2);
    fdb_transaction_destroy(tr);
}

/* ---------- set_read_version's checks, deferred ---------- */

static fdb_error_t get_err(FDBTransaction *tr)
{
    int present, len;
    char buf[16];
    return api_get(tr, S("field/rv"), 8, 0, &present, buf, sizeof buf, &len);
}

static fdb_error_t grv_err(FDBTransaction *tr, int64_t *v)
{
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    fdb_error_t e = api_wait(f);
    if (!e && v)
        assert_int_equal(fdb_future_get_int64(f, v), 0);
    fdb_future_destroy(f);
    return e;
}

/* Transaction::setVersion: read_version_already_set once a read version was set or asked
 * for, else version_invalid for v <= 0. ThreadSafeTransaction keeps what it throws as the
 * deferred error: the call returns nothing, the next operations (reads, get_read_version,
 * commit, get_versionstamp, get_approximate_size, watch...) fail with it; a retryable
 * on_error or a reset clears it. */
static void test_set_read_version_checks(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    int64_t v = 0;
    assert_int_equal(grv_err(tr, &v), 0);
    assert_true(v > 0);
    fdb_transaction_reset(tr);
    /* 0 and negative versions */
    static const int64_t bad[] = { 0, -1, -1000000, INT64_MIN };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fdb_transaction_set_read_version(tr, bad[i]);
        assert_int_equal(get_err(tr), 2011);
        assert_int_equal(grv_err(tr, NULL), 2011);
        assert_int_equal(api_wait_destroy(fdb_transaction_get_approximate_size(tr)), 2011);
        assert_int_equal(api_wait_destroy(fdb_transaction_get_versionstamp(tr)), 2011);
        assert_int_equal(api_wait_destroy(fdb_transaction_watch(tr, S("field/rv"), 8)), 2011);
        fdb_transaction_set(tr, S("field/rv"), 8, S("x"), 1);
        assert_int_equal(api_commit(tr), 2011);
        /* not retryable: on_error answers it and keeps it */
        assert_int_equal(api_on_error(tr, 2011), 2011);
        assert_int_equal(get_err(tr), 2011);
        fdb_transaction_reset(tr);
        assert_int_equal(get_err(tr), 0);
        fdb_transaction_reset(tr);
    }
    /* a second set_read_version, even with the same version */
    fdb_transaction_set_read_version(tr, v);
    fdb_transaction_set_read_version(tr, v);
    assert_int_equal(get_err(tr), 2010);
    assert_int_equal(grv_err(tr, NULL), 2010);
    fdb_transaction_reset(tr);
    /* after get_read_version (waited for or not) */
    assert_int_equal(grv_err(tr, NULL), 0);
    fdb_transaction_set_read_version(tr, v);
    assert_int_equal(get_err(tr), 2010);
    fdb_transaction_reset(tr);
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    fdb_transaction_set_read_version(tr, v);
    assert_int_equal(api_wait_destroy(f), 0);
    assert_int_equal(get_err(tr), 2010);
    fdb_transaction_reset(tr);
    /* after a read (its read version), even one still in flight */
    assert_int_equal(get_err(tr), 0);
    fdb_transaction_set_read_version(tr, v);
    assert_int_equal(get_err(tr), 2010);
    fdb_transaction_reset(tr);
    int present, len;
    char buf[16];
    f = fdb_transaction_get(tr, S("field/rv"), 8, 0);
    fdb_transaction_set_read_version(tr, v);
    assert_int_equal(api_wait_destroy(f), 0);
    assert_int_equal(get_err(tr), 2010);
    fdb_transaction_reset(tr);
    /* a retryable error's on_error clears it too */
    fdb_transaction_set_read_version(tr, 0);
    assert_int_equal(get_err(tr), 2011);
    assert_int_equal(api_on_error(tr, 1020), 0);
    assert_int_equal(api_get(tr, S("field/rv"), 8, 0, &present, buf, sizeof buf, &len), 0);
    /* a valid version is taken */
    fdb_transaction_reset(tr);
    fdb_transaction_set_read_version(tr, v);
    int64_t got = 0;
    assert_int_equal(grv_err(tr, &got), 0);
    assert_int_equal(got, v);
    fdb_transaction_destroy(tr);
}

/* ---------- range limits ---------- */

static fdb_error_t range_err(FDBTransaction *tr, const char *b, const char *e, int limit, int target_bytes, int mode,
                             int iteration, int *rows)
{
    FDBFuture *f = fdb_transaction_get_range(tr, S(b), L(b), 0, 1, S(e), L(e), 0, 1, limit, target_bytes,
                                             (FDBStreamingMode)mode, iteration, 0, 0);
    fdb_error_t err = api_wait_ms(f, 5000);
    if (!err && rows) {
        const FDBKeyValue *kv;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, rows, &more), 0);
    }
    fdb_future_destroy(f);
    return err;
}

/* validate_and_update_parameters maps 0 to unlimited (-1, which is unlimited too) and caps
 * the byte limit by the mode's; GetRangeLimits::isValid then refuses other negative row or
 * byte limits with range_limits_invalid (2012), in RYW's getRange after the deferred error
 * and the keys' check (special keys: first in SpecialKeySpace::getRange). The mode's errors
 * come at the call, before anything. */
static void test_range_limits(void **state)
{
    (void)state;
    char p[64], b[80], e[80];
    api_prefix(p, sizeof p, "limits");
    api_key(b, sizeof b, p, "");
    api_key(e, sizeof e, p, "\xff");
    for (int i = 0; i < 3; i++) {
        char k[80];
        char sfx[2] = { (char)('a' + i), 0 };
        api_key(k, sizeof k, p, sfx);
        assert_int_equal(api_set_committed(k, L(k), "v", 1), 0);
    }
    FDBTransaction *tr = api_tr();
    int n = -1;
    enum { WANT_ALL = FDB_STREAMING_MODE_WANT_ALL, EXACT = FDB_STREAMING_MODE_EXACT,
           ITERATOR = FDB_STREAMING_MODE_ITERATOR };
    /* -1 rows or bytes: unlimited */
    assert_int_equal(range_err(tr, b, e, -1, 0, WANT_ALL, 0, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(range_err(tr, b, e, 0, -1, WANT_ALL, 0, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(range_err(tr, b, e, 2, -1, EXACT, 0, &n), 0);
    assert_int_equal(n, 2);
    /* (-1, -1) in exact mode is unlimited/unlimited: exact_mode_without_limits */
    assert_int_equal(range_err(tr, b, e, -1, -1, EXACT, 0, NULL), 2210);
    /* other negatives */
    static const int bad_rows[] = { -2, -5, INT32_MIN };
    for (size_t i = 0; i < sizeof bad_rows / sizeof bad_rows[0]; i++) {
        assert_int_equal(range_err(tr, b, e, bad_rows[i], 0, WANT_ALL, 0, NULL), 2012);
        assert_int_equal(range_err(tr, b, e, bad_rows[i], 100, EXACT, 0, NULL), 2012);
        assert_int_equal(range_err(tr, b, e, bad_rows[i], 0, ITERATOR, 1, NULL), 2012);
    }
    assert_int_equal(range_err(tr, b, e, 0, -2, WANT_ALL, 0, NULL), 2012);
    assert_int_equal(range_err(tr, b, e, 5, -100, EXACT, 0, NULL), 2012);
    assert_int_equal(range_err(tr, b, e, 0, INT32_MIN, ITERATOR, 2, NULL), 2012);
    /* the mode's errors first */
    assert_int_equal(range_err(tr, b, e, -5, 0, ITERATOR, 0, NULL), 2000);
    assert_int_equal(range_err(tr, b, e, -5, 0, 17, 0, NULL), 2000);
    /* the keys' check first */
    assert_int_equal(range_err(tr, b, "\xff\x01", -5, 0, WANT_ALL, 0, NULL), 2004);
    /* special keys */
    assert_int_equal(range_err(tr, "\xff\xff/transaction/read_conflict_range/",
                               "\xff\xff/transaction/read_conflict_range0", -3, 0, WANT_ALL, 0, NULL),
                     2012);
    assert_int_equal(range_err(tr, "\xff\xff/transaction/read_conflict_range/",
                               "\xff\xff/transaction/read_conflict_range0", -1, 0, WANT_ALL, 0, NULL),
                     0);
    /* a deferred error before the limits (this transaction read: already set) */
    fdb_transaction_set_read_version(tr, -1);
    assert_int_equal(range_err(tr, b, e, -5, 0, WANT_ALL, 0, NULL), 2010);
    fdb_transaction_reset(tr);
    fdb_transaction_set_read_version(tr, -1);
    assert_int_equal(range_err(tr, b, e, -5, 0, WANT_ALL, 0, NULL), 2011);
    assert_int_equal(range_err(tr, "\xff\xff/transaction/read_conflict_range/",
                               "\xff\xff/transaction/read_conflict_range0", -3, 0, WANT_ALL, 0, NULL),
                     2011);
    /* the transaction is not failed by it */
    fdb_transaction_reset(tr);
    assert_int_equal(range_err(tr, b, e, -5, 0, WANT_ALL, 0, NULL), 2012);
    assert_int_equal(range_err(tr, b, e, 0, 0, WANT_ALL, 0, &n), 0);
    assert_int_equal(n, 3);
    fdb_transaction_destroy(tr);
}

/* ---------- cancelled transactions' metadata reads ---------- */

static fdb_error_t estimate_err(FDBTransaction *tr)
{
    return api_wait_destroy(fdb_transaction_get_estimated_range_size_bytes(tr, S("a"), 1, S("z"), 1));
}

static fdb_error_t split_err(FDBTransaction *tr)
{
    return api_wait_destroy(fdb_transaction_get_range_split_points(tr, S("a"), 1, S("z"), 1, 1000));
}

/* RYW getEstimatedRangeSizeBytes / getRangeSplitPoints check the reset promise (a cancel, or
 * an on_error that failed) before anything is asked, and ThreadSafeTransaction's deferred
 * error before that: a cancelled transaction answers transaction_cancelled (1025), in a
 * deleted tenant too, where a live transaction hears tenant_not_found. */
static void test_metadata_reads_when_cancelled(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    assert_int_equal(estimate_err(tr), 0);
    assert_int_equal(split_err(tr), 0);
    fdb_transaction_cancel(tr);
    assert_int_equal(estimate_err(tr), 1025);
    assert_int_equal(split_err(tr), 1025);
    /* the range's own check comes first (at the call) */
    assert_int_equal(api_wait_destroy(fdb_transaction_get_estimated_range_size_bytes(tr, S("z"), 1, S("a"), 1)),
                     2005);
    fdb_transaction_reset(tr);
    assert_int_equal(estimate_err(tr), 0);
    /* a deferred error */
    fdb_transaction_set_read_version(tr, 0);
    assert_int_equal(estimate_err(tr), 2011);
    assert_int_equal(split_err(tr), 2011);
    fdb_transaction_destroy(tr);

    int64_t id;
    assert_int_equal(tf_create_tenant(g_env.db, "meta-gone", &id), 0);
    FDBTenant *t = tf_open_tenant("meta-gone");
    tf_tenant_set(t, "b", "1");
    assert_int_equal(tf_delete_tenant(g_env.db, "meta-gone", id), 0);
    /* live: the tenant's error */
    tr = tf_tenant_tr(t);
    assert_int_equal(estimate_err(tr), 2131);
    int present, len;
    char buf[8];
    assert_int_equal(api_get(tr, S("b"), 1, 0, &present, buf, sizeof buf, &len), 2131);
    /* a failed on_error cancels the transaction: then transaction_cancelled */
    assert_int_equal(api_on_error(tr, 2131), 2131);
    assert_int_equal(estimate_err(tr), 1025);
    assert_int_equal(split_err(tr), 1025);
    assert_int_equal(api_get(tr, S("b"), 1, 0, &present, buf, sizeof buf, &len), 1025);
    fdb_transaction_destroy(tr);
    tr = tf_tenant_tr(t);
    fdb_transaction_cancel(tr);
    assert_int_equal(estimate_err(tr), 1025);
    assert_int_equal(split_err(tr), 1025);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
}

/* ---------- reads its own writes answer, in a tenant that is gone ---------- */

/* RYWImpl answers a range read from the transaction's writes without the native transaction
 * (no read version, no tenant) when its own clear covers the range: a handle to a deleted
 * tenant reads the empty range; what needs the storage servers hears tenant_not_found. */
static void test_own_clear_in_deleted_tenant(void **state)
{
    (void)state;
    int64_t id;
    assert_int_equal(tf_create_tenant(g_env.db, "cleared-gone", &id), 0);
    FDBTenant *t = tf_open_tenant("cleared-gone");
    tf_tenant_set(t, "c", "1");
    fdb_tenant_destroy(t);
    assert_int_equal(tf_delete_tenant(g_env.db, "cleared-gone", id), 0);
    t = tf_open_tenant("cleared-gone");
    assert_int_equal(api_wait_destroy(fdb_tenant_get_id(t)), 2131);
    FDBTransaction *tr = tf_tenant_tr(t);
    fdb_transaction_clear_range(tr, S("a"), 1, S("m"), 1);
    fdb_transaction_set(tr, S("d"), 1, S("own"), 3);
    char out[128];
    /* inside the clear: empty, forward and reverse, with or without a limit */
    assert_int_equal(sel_range(tr, "b", 1, 0, 1, "d", 1, 0, 1, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(sel_range(tr, "a", 1, 0, 1, "c", 1, 0, 1, 3, 1, out, sizeof out), 0);
    assert_string_equal(out, "");
    /* the clear and the transaction's own set */
    assert_int_equal(sel_range(tr, "a", 1, 0, 1, "m", 1, 0, 1, 0, 0, out, sizeof out), 0);
    assert_string_equal(out, "d=own,");
    assert_int_equal(sel_range(tr, "a", 1, 0, 1, "m", 1, 0, 1, 0, 1, out, sizeof out), 0);
    assert_string_equal(out, "d=own,");
    /* a selector answered by the writes */
    FDBFuture *f = fdb_transaction_get_key(tr, S("b"), 1, 0, 1, 0);
    assert_int_equal(api_wait_ms(f, 3000), 0);
    const uint8_t *key;
    int kl;
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_int_equal(kl, 1);
    assert_int_equal(key[0], 'd');
    fdb_future_destroy(f);
    /* point reads: local too */
    int present, len;
    char buf[8];
    assert_int_equal(api_get(tr, S("c"), 1, 0, &present, buf, sizeof buf, &len), 0);
    assert_false(present);
    /* past the clear: the storage servers, and the tenant's error */
    /* (a read from "a" to "n" returns d with `more` set before reaching past the clear: a
     * byte limit and the minimum row satisfied, RYWImpl's early stop) */
    assert_int_equal(sel_range(tr, "l", 1, 0, 1, "n", 1, 0, 1, 0, 0, out, sizeof out), 2131);
    assert_int_equal(api_get(tr, S("x"), 1, 0, &present, buf, sizeof buf, &len), 2131);
    assert_int_equal(api_commit(tr), 2131);
    fdb_transaction_destroy(tr);
    /* snapshot reads go the same way */
    tr = tf_tenant_tr(t);
    fdb_transaction_clear_range(tr, S(""), 0, S("\xff"), 1);
    f = fdb_transaction_get_range(tr, S(""), 0, 0, 1, S("\xff"), 1, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 1, 0);
    assert_int_equal(api_wait_ms(f, 3000), 0);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
}

/* ---------- child processes: another API version, a fresh network ---------- */

/* Runs this program again as `argv0 <mode> <arg> <cluster file>` and returns its exit status
 * (fork + exec: the parent's network thread must not be copied into a child that uses fdb). */
static int run_child(const char *mode, const char *arg)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = 0;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *const argv[] = { self, (char *)mode, (char *)arg, g_env.server.cluster_file, NULL };
        execv(self, argv);
        _exit(127);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

#define CHILD_CHECK(cond)                                                              \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "child check failed at line %d: %s\n", __LINE__, #cond); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

static FDBDatabase *child_db(int version, const char *cluster_file)
{
    fdb_error_t e = fdb_select_api_version_impl(version, FDB_API_VERSION);
    if (e) {
        fprintf(stderr, "child: select_api_version(%d): %d\n", version, e);
        return NULL;
    }
    if (api_network_start())
        return NULL;
    FDBDatabase *db = NULL;
    e = fdb_create_database(cluster_file, &db);
    if (e) {
        fprintf(stderr, "child: create_database: %d\n", e);
        return NULL;
    }
    return db;
}

static fdb_error_t child_read(FDBDatabase *db, const uint8_t *k, int kl, uint8_t *out, int cap, int *len)
{
    FDBTransaction *tr;
    fdb_error_t e = fdb_database_create_transaction(db, &tr);
    if (e)
        return e;
    for (;;) {
        FDBFuture *f = fdb_transaction_get(tr, k, kl, 0);
        e = api_wait(f);
        if (!e) {
            fdb_bool_t present;
            const uint8_t *v;
            int vl;
            e = fdb_future_get_value(f, &present, &v, &vl);
            *len = present ? vl : -1;
            if (present && vl <= cap)
                memcpy(out, v, (size_t)vl);
            fdb_future_destroy(f);
            break;
        }
        fdb_future_destroy(f);
        f = fdb_transaction_on_error(tr, e);
        e = api_wait(f);
        fdb_future_destroy(f);
        if (e)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

/* Versionstamped operands at API `version` (RYW atomicOp): below 520 a key's offset is 2
 * bytes and a value's stamp is its first 10 bytes (no offset). */
static int child_versionstamps(int version, const char *cluster_file)
{
    FDBDatabase *db = child_db(version, cluster_file);
    CHILD_CHECK(db != NULL);
    char prefix[64];
    int pl = snprintf(prefix, sizeof prefix, "field/api%d/%d/", version, (int)getpid());
    uint8_t vkey[80], vval[32], skey[128], nkey[80], nval[32];
    int vkl = snprintf((char *)vkey, sizeof vkey, "%sval", prefix);
    int nkl = snprintf((char *)nkey, sizeof nkey, "%snew", prefix);
    bool old = version < 520;
    /* the value: 10 placeholder bytes, then "tail"; today's form adds the offset 0 */
    memcpy(vval, "XXXXXXXXXXtail", 14);
    int vvl = 14;
    if (!old) {
        memset(vval + 14, 0, 4);
        vvl = 18;
    }
    /* the key: prefix, 10 placeholder bytes, "k", the offset (2 or 4 bytes) */
    memcpy(skey, prefix, (size_t)pl);
    memcpy(skey + pl, "XXXXXXXXXXk", 11);
    int skl = pl + 11;
    skey[skl++] = (uint8_t)pl;
    skey[skl++] = 0;
    if (!old) {
        skey[skl++] = 0;
        skey[skl++] = 0;
    }
    /* today's value form at any version: below 520 its offset bytes are data */
    memcpy(nval, "0123456789\0\0\0\0", 14);
    FDBTransaction *tr;
    CHILD_CHECK(fdb_database_create_transaction(db, &tr) == 0);
    FDBFuture *vs = NULL;
    for (;;) {
        fdb_transaction_atomic_op(tr, vkey, vkl, vval, vvl, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
        fdb_transaction_atomic_op(tr, skey, skl, S("kv"), 2, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
        fdb_transaction_atomic_op(tr, nkey, nkl, nval, 14, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
        vs = fdb_transaction_get_versionstamp(tr);
        FDBFuture *c = fdb_transaction_commit(tr);
        fdb_error_t e = api_wait(c);
        fdb_future_destroy(c);
        if (!e)
            break;
        fdb_future_destroy(vs);
        c = fdb_transaction_on_error(tr, e);
        e = api_wait(c);
        fdb_future_destroy(c);
        if (e) {
            fprintf(stderr, "child: commit at API %d: %d\n", version, e);
            return 1;
        }
    }
    CHILD_CHECK(api_wait(vs) == 0);
    const uint8_t *stamp;
    int stl;
    CHILD_CHECK(fdb_future_get_key(vs, &stamp, &stl) == 0 && stl == 10);
    uint8_t st[10];
    memcpy(st, stamp, 10);
    fdb_future_destroy(vs);
    fdb_transaction_destroy(tr);
    uint8_t got[64];
    int gl = 0;
    /* the value: the stamp, then "tail" */
    CHILD_CHECK(child_read(db, vkey, vkl, got, sizeof got, &gl) == 0);
    CHILD_CHECK(gl == 14 && memcmp(got, st, 10) == 0 && memcmp(got + 10, "tail", 4) == 0);
    /* the key: prefix, stamp, "k" */
    uint8_t want[128];
    memcpy(want, prefix, (size_t)pl);
    memcpy(want + pl, st, 10);
    want[pl + 10] = 'k';
    CHILD_CHECK(child_read(db, want, pl + 11, got, sizeof got, &gl) == 0);
    CHILD_CHECK(gl == 2 && memcmp(got, "kv", 2) == 0);
    /* today's form: below 520 the four offset bytes stay in the value */
    CHILD_CHECK(child_read(db, nkey, nkl, got, sizeof got, &gl) == 0);
    CHILD_CHECK(memcmp(got, st, 10) == 0);
    CHILD_CHECK(gl == (old ? 14 : 10));
    if (old)
        CHILD_CHECK(memcmp(got + 10, "\0\0\0\0", 4) == 0);
    fdb_database_destroy(db);
    api_network_stop();
    return 0;
}

static void test_old_api_versionstamp_forms(void **state)
{
    (void)state;
    static const char *const versions[] = { "510", "460", "200", "520", "730" };
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        int st = run_child("--api-child", versions[i]);
        if (st)
            fail_msg("API %s child: exit status %d", versions[i], st);
    }
}

/* FoundationDB's C unit test monitor_network_busyness, in a fresh process: right after the
 * network starts, 40 readings 50 ms apart, each within [0, 1], at least one above 0. */
static int child_busyness(const char *cluster_file)
{
    FDBDatabase *db = child_db(FDB_API_VERSION, cluster_file);
    CHILD_CHECK(db != NULL);
    bool above_zero = false;
    for (int i = 0; i < 40; i++) {
        double b = fdb_database_get_main_thread_busyness(db);
        CHILD_CHECK(b >= 0.0 && b <= 1.0);
        if (b > 0)
            above_zero = true;
        usleep(50000);
    }
    CHILD_CHECK(above_zero);
    fdb_database_destroy(db);
    api_network_stop();
    return 0;
}

static void test_network_busyness_from_the_start(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        assert_int_equal(run_child("--busyness-child", "-"), 0);
    /* and after load, in this process: reads for a second and a half, then the readings */
    double end = api_now_ms() + 1500;
    FDBTransaction *tr = api_tr();
    while (api_now_ms() < end) {
        int present, len;
        char buf[8];
        assert_int_equal(api_get(tr, S("field/busy"), 10, 1, &present, buf, sizeof buf, &len), 0);
        fdb_transaction_reset(tr);
    }
    fdb_transaction_destroy(tr);
    bool above_zero = false;
    for (int i = 0; i < 40; i++) {
        double b = fdb_database_get_main_thread_busyness(g_env.db);
        assert_true(b >= 0.0 && b <= 1.0);
        above_zero = above_zero || b > 0;
        usleep(50000);
    }
    assert_true(above_zero);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--api-child") == 0)
        return child_versionstamps(atoi(argv[2]), argv[3]);
    if (argc == 4 && strcmp(argv[1], "--busyness-child") == 0)
        return child_busyness(argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selectors_past_tenant_edges),
        cmocka_unit_test(test_versionstamp_futures_share_the_stamp),
        cmocka_unit_test(test_set_read_version_checks),
        cmocka_unit_test(test_range_limits),
        cmocka_unit_test(test_old_api_versionstamp_forms),
        cmocka_unit_test(test_metadata_reads_when_cancelled),
        cmocka_unit_test(test_own_clear_in_deleted_tenant),
        cmocka_unit_test(test_network_busyness_from_the_start),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
