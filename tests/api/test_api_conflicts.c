/* Conflicts and retry semantics through fdb_c.h: not_committed and on_error, snapshot reads,
 * explicit conflict ranges, old and future read versions, on_error classes, retry_limit and
 * timeout options. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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

#define KEYS(name)                       \
    char p[128], k[192], k2[192];        \
    api_prefix(p, sizeof p, name);       \
    snprintf(k, sizeof k, "%sk", p);     \
    snprintf(k2, sizeof k2, "%sk2", p)

static void rd(FDBTransaction *tr, const char *key, int snapshot)
{
    int present;
    assert_int_equal(api_get(tr, key, L(key), snapshot, &present, NULL, 0, NULL), 0);
}

static void test_conflict_then_retry(void **state)
{
    (void)state;
    KEYS("conflict");
    assert_int_equal(api_set_committed(k, L(k), "0", 1), 0);
    FDBTransaction *tr = api_tr();
    rd(tr, k, 0);
    assert_int_equal(api_set_committed(k, L(k), "1", 1), 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(tr), 1020);
    double t0 = api_now_ms();
    assert_int_equal(api_on_error(tr, 1020), 0);
    assert_true(api_now_ms() - t0 < 2000);
    /* the retry starts clean: the write is gone, and it commits */
    int present;
    assert_int_equal(api_get(tr, k2, L(k2), 0, &present, NULL, 0, NULL), 0);
    assert_int_equal(present, 0);
    rd(tr, k, 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    char buf[4];
    int len;
    assert_int_equal(api_read_committed(k2, L(k2), &present, buf, sizeof buf, &len), 0);
    assert_int_equal(present, 1);
}

/* REPORT_CONFLICTING_KEYS: after not_committed, \xff\xff/transaction/conflicting_keys/ shows
 * each conflicting read range as its begin = "1" and end = "0"; on_error clears it. */
static void test_conflicting_keys_report(void **state)
{
    (void)state;
    KEYS("ckeys");
    static const char prefix[] = "\xff\xff/transaction/conflicting_keys/";
    const int plen = (int)sizeof prefix - 1;
    assert_int_equal(api_set_committed(k, L(k), "0", 1), 0);
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_REPORT_CONFLICTING_KEYS, NULL, 0), 0);
    rd(tr, k, 0);
    rd(tr, k2, 0); /* read but not written by anyone: not reported */
    assert_int_equal(api_set_committed(k, L(k), "1", 1), 0);
    fdb_transaction_set(tr, S(p), L(p), S("x"), 1);
    assert_int_equal(api_commit(tr), 1020);

    uint8_t begin[256], end[256], key[256];
    memcpy(begin, prefix, (size_t)plen);
    memcpy(end, prefix, (size_t)plen);
    end[plen] = 0xff;
    FDBFuture *f = fdb_transaction_get_range(tr, begin, plen, 0, 1, end, plen + 1, 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 2);
    assert_false(more);
    memcpy(key, prefix, (size_t)plen);
    memcpy(key + plen, k, L(k));
    assert_int_equal(kv[0].key_length, plen + L(k));
    assert_memory_equal(kv[0].key, key, (size_t)(plen + L(k)));
    assert_int_equal(kv[0].value_length, 1);
    assert_int_equal(kv[0].value[0], '1');
    key[plen + L(k)] = 0; /* the end of the single-key range k\0 */
    assert_int_equal(kv[1].key_length, plen + L(k) + 1);
    assert_memory_equal(kv[1].key, key, (size_t)(plen + L(k) + 1));
    assert_int_equal(kv[1].value[0], '0');
    fdb_future_destroy(f);

    /* a point read of a boundary */
    int present = 0, len = 0;
    char v[4];
    assert_int_equal(api_get(tr, key, plen + L(k), 0, &present, v, sizeof v, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(v[0], '1');

    /* the retry starts without the report */
    assert_int_equal(api_on_error(tr, 1020), 0);
    f = fdb_transaction_get_range(tr, begin, plen, 0, 1, end, plen + 1, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 1,
                                  0, 0);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 0);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void test_snapshot_read_does_not_conflict(void **state)
{
    (void)state;
    KEYS("snapshot");
    FDBTransaction *tr = api_tr();
    rd(tr, k, 1);
    assert_int_equal(api_set_committed(k, L(k), "1", 1), 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

static void test_range_read_conflicts(void **state)
{
    (void)state;
    KEYS("rangeconf");
    char a[192], z[192], m[192];
    snprintf(a, sizeof a, "%sa", p);
    snprintf(m, sizeof m, "%sm", p);
    snprintf(z, sizeof z, "%sz", p);
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(a), L(a)),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(z), L(z)), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 0);
    assert_int_equal(api_set_committed(m, L(m), "new", 3), 0); /* a phantom in the range */
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(tr), 1020);
    /* a write outside the read range does not conflict */
    assert_int_equal(api_on_error(tr, 1020), 0);
    f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(a), L(a)),
                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(m), L(m)), 0, 0, FDB_STREAMING_MODE_WANT_ALL,
                                  0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 0);
    assert_int_equal(api_set_committed(z, L(z), "new", 3), 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

/* get_key reads the keys between the selector's key and the answer (RYWImpl::addConflictRange):
 * a key inserted there makes the commit conflict; one outside does not; snapshot never. */
static fdb_error_t get_key_then_commit(const char *sel_key, int or_equal, int offset, int snapshot,
                                       const char *insert, const char *want, const char *k2)
{
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_key(tr, S(sel_key), L(sel_key), or_equal, offset, snapshot);
    assert_int_equal(api_wait(f), 0);
    const uint8_t *key;
    int kl;
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    if (kl != L(want) || memcmp(key, want, (size_t)kl))
        fail_msg("get_key(%s, %d, %d) = %.*s, want %s", sel_key, or_equal, offset, kl, (const char *)key, want);
    fdb_future_destroy(f);
    assert_int_equal(api_set_committed(insert, L(insert), "new", 3), 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    fdb_error_t e = api_commit(tr);
    fdb_transaction_destroy(tr);
    assert_int_equal(api_set_committed(insert, L(insert), NULL, 0), 0);
    return e;
}

static void test_get_key_conflicts(void **state)
{
    (void)state;
    KEYS("getkeyconf");
    char a[192], b[192], c[192], d[192], e[192], f[192];
    snprintf(a, sizeof a, "%sa", p);
    snprintf(b, sizeof b, "%sb", p);
    snprintf(c, sizeof c, "%sc", p);
    snprintf(d, sizeof d, "%sd", p);
    snprintf(e, sizeof e, "%se", p);
    snprintf(f, sizeof f, "%sf", p);
    assert_int_equal(api_set_committed(a, L(a), "A", 1), 0);
    assert_int_equal(api_set_committed(c, L(c), "C", 1), 0);
    assert_int_equal(api_set_committed(e, L(e), "E", 1), 0);
    /* firstGreaterOrEqual(b) = c reads [b, c]: b inserted conflicts, d does not */
    assert_int_equal(get_key_then_commit(b, 0, 1, 0, b, c, k2), 1020);
    assert_int_equal(get_key_then_commit(b, 0, 1, 0, d, c, k2), 0);
    assert_int_equal(get_key_then_commit(b, 0, 1, 1, b, c, k2), 0);
    /* lastLessThan(e) = c reads [c, e): d inserted conflicts, f does not */
    assert_int_equal(get_key_then_commit(e, 0, 0, 0, d, c, k2), 1020);
    assert_int_equal(get_key_then_commit(e, 0, 0, 0, f, c, k2), 0);
    /* firstGreaterOrEqual(a) + 1 = c: b would shift the answer */
    assert_int_equal(get_key_then_commit(a, 0, 2, 0, b, c, k2), 1020);
}

/* A range whose begin selector is resolved with an offset reads from the selector's key: a key
 * inserted before the resolved begin changes the answer and conflicts. */
static void test_range_selector_conflicts(void **state)
{
    (void)state;
    KEYS("rangeselconf");
    char a[192], b[192], c[192], z[192];
    snprintf(a, sizeof a, "%sa", p);
    snprintf(b, sizeof b, "%sb", p);
    snprintf(c, sizeof c, "%sc", p);
    snprintf(z, sizeof z, "%sz", p);
    assert_int_equal(api_set_committed(a, L(a), "A", 1), 0);
    assert_int_equal(api_set_committed(c, L(c), "C", 1), 0);
    FDBTransaction *tr = api_tr();
    FDBFuture *fu = fdb_transaction_get_range(tr, S(a), L(a), 0, 2, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(z), L(z)),
                                              0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(fu), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(fu, &kv, &n, &more), 0);
    assert_int_equal(n, 1);
    assert_memory_equal(kv[0].key, c, (size_t)L(c));
    fdb_future_destroy(fu);
    assert_int_equal(api_set_committed(b, L(b), "B", 1), 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(tr), 1020);
    fdb_transaction_destroy(tr);
}

static void test_read_only_and_blind_writes_never_conflict(void **state)
{
    (void)state;
    KEYS("readonly");
    FDBTransaction *tr = api_tr();
    rd(tr, k, 0);
    assert_int_equal(api_set_committed(k, L(k), "1", 1), 0);
    assert_int_equal(api_commit(tr), 0); /* read-only */
    fdb_transaction_reset(tr);
    int64_t rv;
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(f), 0);
    fdb_future_get_int64(f, &rv);
    fdb_future_destroy(f);
    assert_int_equal(api_set_committed(k, L(k), "2", 1), 0);
    fdb_transaction_set(tr, S(k), L(k), S("3"), 1); /* blind write of a key changed since rv */
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

static void test_add_read_conflict_range(void **state)
{
    (void)state;
    KEYS("addread");
    char kend[200];
    int kl = L(k);
    memcpy(kend, k, (size_t)kl);
    kend[kl] = 0; /* k + \0 */
    FDBTransaction *tr = api_tr();
    /* fix the read version first (it is otherwise taken at commit, after the other write) */
    assert_int_equal(api_wait_destroy(fdb_transaction_get_read_version(tr)), 0);
    assert_int_equal(fdb_transaction_add_conflict_range(tr, S(k), kl, S(kend), kl + 1, FDB_CONFLICT_RANGE_TYPE_READ),
                     0);
    assert_int_equal(api_set_committed(k, kl, "1", 1), 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(tr), 1020);
    fdb_transaction_destroy(tr);
}

static void test_add_write_conflict_range(void **state)
{
    (void)state;
    KEYS("addwrite");
    char kend[200];
    int kl = L(k);
    memcpy(kend, k, (size_t)kl);
    kend[kl] = 0;
    FDBTransaction *reader = api_tr();
    rd(reader, k, 0);
    /* a transaction that only declares a write conflict on k (no mutation) */
    FDBTransaction *tr = api_tr();
    assert_int_equal(
        fdb_transaction_add_conflict_range(tr, S(k), kl, S(kend), kl + 1, FDB_CONFLICT_RANGE_TYPE_WRITE), 0);
    assert_int_equal(api_commit(tr), 0);
    int64_t cv = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
    assert_true(cv > 0); /* not read-only: it took a commit version */
    fdb_transaction_destroy(tr);
    fdb_transaction_set(reader, S(k2), L(k2), S("x"), 1);
    assert_int_equal(api_commit(reader), 1020);
    fdb_transaction_destroy(reader);
}

static void test_inverted_conflict_range(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_add_conflict_range(tr, S("t/b"), 3, S("t/a"), 3, FDB_CONFLICT_RANGE_TYPE_READ),
                     2005);
    fdb_transaction_destroy(tr);
}

/* the cluster's version (status over the control port) */
static long long server_version(void)
{
    unsigned long long v;
    assert_int_equal(api_server_status(&g_env.server, "version", &v), 0);
    return (long long)v;
}

static void test_old_read_version(void **state)
{
    (void)state;
    /* version 1 is older than the 5,000,000-version MVCC window only once the cluster is
     * past it: wait for that (this test runs last; the server versions ~1e6 per second) */
    for (int i = 0; i < 100 && server_version() < 5500000; i++)
        usleep(100 * 1000);
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_read_version(tr, 1);
    int present;
    assert_int_equal(api_get(tr, "t/x", 3, 1, &present, NULL, 0, NULL), 1007);
    /* retryable: on_error resets and a fresh read version works */
    assert_int_equal(api_on_error(tr, 1007), 0);
    assert_int_equal(api_get(tr, "t/x", 3, 1, &present, NULL, 0, NULL), 0);
    fdb_transaction_destroy(tr);
}

static void test_future_read_version(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_read_version(tr, (int64_t)1 << 62);
    FDBFuture *f = fdb_transaction_get(tr, S("t/x"), 3, 1);
    assert_int_equal(api_wait_ms(f, 15000), 1009);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void test_on_error_classes(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    int retryable[] = { 1007, 1009, 1020, 1021, 1037, 1038 };
    for (size_t i = 0; i < sizeof retryable / sizeof *retryable; i++) {
        double t0 = api_now_ms();
        fdb_error_t e = api_on_error(tr, retryable[i]);
        if (e)
            fail_msg("on_error(%d) = %d", retryable[i], e);
        assert_true(api_now_ms() - t0 < 3000);
    }
    fdb_transaction_reset(tr);
    int fatal[] = { 1000, 1004, 1031, 1036, 2000, 2004, 2005, 2101, 2102, 2103, 4000 };
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        fdb_transaction_reset(tr);
        fdb_error_t e = api_on_error(tr, fatal[i]);
        if (e != fatal[i])
            fail_msg("on_error(%d) = %d", fatal[i], e);
    }
    int present;
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, "t/x", 3, 0, &present, NULL, 0, NULL), 0);
    fdb_transaction_destroy(tr);
}

static void test_failed_on_error_cancels(void **state)
{
    (void)state;
    /* after on_error(tr, <non-retryable>) returns that error, libfdb_c 7.3 (API >= 610)
     * cancels the transaction: later operations fail with 1025 until reset (RYWImpl::onError
     * catch: resetPromise.sendError(transaction_cancelled())) */
    FDBTransaction *tr = api_tr();
    assert_int_equal(api_on_error(tr, 2004), 2004);
    int present;
    assert_int_equal(api_get(tr, "t/x", 3, 0, &present, NULL, 0, NULL), 1025);
    assert_int_equal(api_commit(tr), 1025);
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, "t/x", 3, 0, &present, NULL, 0, NULL), 0);
    fdb_transaction_destroy(tr);
}

static void test_on_error_resets_writes(void **state)
{
    (void)state;
    KEYS("onerrreset");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(k), L(k), S("x"), 1);
    assert_int_equal(api_on_error(tr, 1020), 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    int present;
    assert_int_equal(api_read_committed(k, L(k), &present, NULL, 0, NULL), 0);
    assert_int_equal(present, 0);
}

static void test_retry_limit(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    int64_t limit = 2;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_RETRY_LIMIT, (const uint8_t *)&limit, 8), 0);
    assert_int_equal(api_on_error(tr, 1020), 0);
    assert_int_equal(api_on_error(tr, 1020), 0);
    assert_int_equal(api_on_error(tr, 1020), 1020);
    /* the limit survives on_error resets but not reset(); retry counts restart with reset */
    fdb_transaction_reset(tr);
    assert_int_equal(api_on_error(tr, 1020), 0);
    fdb_transaction_destroy(tr);
}

static void test_timeout_option(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    int64_t ms = 100;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    /* a read that cannot finish (future version) is cut by the timeout */
    fdb_transaction_set_read_version(tr, (int64_t)1 << 62);
    double t0 = api_now_ms();
    FDBFuture *f = fdb_transaction_get(tr, S("t/x"), 3, 0);
    fdb_error_t e = api_wait_ms(f, 5000);
    fdb_future_destroy(f);
    assert_int_equal(e, 1031);
    assert_true(api_now_ms() - t0 < 2000);
    /* everything after fails the same way, and on_error does not retry it */
    int present;
    assert_int_equal(api_get(tr, "t/x", 3, 0, &present, NULL, 0, NULL), 1031);
    assert_int_equal(api_on_error(tr, 1031), 1031);
    fdb_transaction_destroy(tr);

    /* the timeout runs from the transaction's start: waiting past it fails the next op */
    tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    usleep(250 * 1000);
    assert_int_equal(api_get(tr, "t/x", 3, 0, &present, NULL, 0, NULL), 1031);
    fdb_transaction_destroy(tr);
}

static void test_database_timeout_option(void **state)
{
    (void)state;
    /* FDB_DB_OPTION_TRANSACTION_TIMEOUT applies to new transactions */
    FDBDatabase *db;
    assert_int_equal(fdb_create_database(g_env.server.cluster_file, &db), 0);
    int64_t ms = 100;
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_TRANSACTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    usleep(250 * 1000);
    int present;
    assert_int_equal(api_get(tr, "t/x", 3, 0, &present, NULL, 0, NULL), 1031);
    fdb_transaction_destroy(tr);
    fdb_database_destroy(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conflict_then_retry),
        cmocka_unit_test(test_conflicting_keys_report),
        cmocka_unit_test(test_snapshot_read_does_not_conflict),
        cmocka_unit_test(test_range_read_conflicts),
        cmocka_unit_test(test_get_key_conflicts),
        cmocka_unit_test(test_range_selector_conflicts),
        cmocka_unit_test(test_read_only_and_blind_writes_never_conflict),
        cmocka_unit_test(test_add_read_conflict_range),
        cmocka_unit_test(test_add_write_conflict_range),
        cmocka_unit_test(test_inverted_conflict_range),
        cmocka_unit_test(test_future_read_version),
        cmocka_unit_test(test_on_error_classes),
        cmocka_unit_test(test_failed_on_error_cancels),
        cmocka_unit_test(test_on_error_resets_writes),
        cmocka_unit_test(test_retry_limit),
        cmocka_unit_test(test_timeout_option),
        cmocka_unit_test(test_database_timeout_option),
        cmocka_unit_test(test_old_read_version),
    };
    return cmocka_run_group_tests_name("api_conflicts", tests, group_setup, group_teardown);
}
