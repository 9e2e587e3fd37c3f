/* Retry loops under server faults injected through cfdb-server's control port:
 * commit_unknown_result (applied / not applied) with idempotent transactions, dropped
 * connections, a new proxy generation, future_version answers, shard splits and moves
 * (wrong_shard_server is handled inside the client), and a restart. Each fault must be
 * invisible to a correct retry loop, with no lost or duplicated effect. */
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
    const char *args[] = { "--storage-servers", "3", NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

static void control(const char *cmd)
{
    char ans[1024];
    if (api_server_control(&g_env.server, cmd, ans, sizeof ans))
        fail_msg("control '%s': %s", cmd, ans);
}

static uint64_t read_counter(const char *key)
{
    uint8_t b[8] = { 0 };
    int present = 0, len = 0;
    assert_int_equal(api_read_committed(key, L(key), &present, b, 8, &len), 0);
    if (!present)
        return 0;
    uint64_t v = 0;
    for (int i = len - 1; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

/* Adds 1 to counter exactly once: the transaction also writes marker and first checks it,
 * so a retry after commit_unknown_result that had in fact committed does nothing. Returns
 * how many times the commit answered 1021. */
static int idempotent_increment(const char *counter, const char *marker)
{
    FDBTransaction *tr = api_tr();
    uint8_t one[8] = { 1 };
    int unknown = 0;
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 50);
        int present = 0;
        fdb_error_t e = api_get(tr, marker, L(marker), 0, &present, NULL, 0, NULL);
        if (!e) {
            if (!present) {
                fdb_transaction_atomic_op(tr, S(counter), L(counter), one, 8, FDB_MUTATION_TYPE_ADD);
                fdb_transaction_set(tr, S(marker), L(marker), S("1"), 1);
            }
            e = api_commit(tr);
            if (!e)
                break;
        }
        if (e == 1021)
            unknown++;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
    return unknown;
}

static void fail_commits_test(const char *mode)
{
    char p[128], counter[192], marker[192];
    api_prefix(p, sizeof p, mode);
    snprintf(counter, sizeof counter, "%scounter", p);
    int unknown = 0;
    for (int i = 0; i < 6; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "fail-commits %d %s", i % 3, mode);
        control(cmd);
        snprintf(marker, sizeof marker, "%sdone/%d", p, i);
        unknown += idempotent_increment(counter, marker);
    }
    control("fail-commits 0");
    /* unapplied: every injected failure is seen by a commit with writes. applied: the retry
     * after the first one is read-only (the marker is there) and leftovers roll over */
    if (!strcmp(mode, "unapplied"))
        assert_int_equal(unknown, 0 + 1 + 2 + 0 + 1 + 2);
    else
        assert_true(unknown >= 2);
    assert_int_equal(read_counter(counter), 6);
}

static void test_commit_unknown_result_unapplied(void **state)
{
    (void)state;
    fail_commits_test("unapplied");
}

static void test_commit_unknown_result_applied(void **state)
{
    (void)state;
    fail_commits_test("applied");
}

static void test_commit_unknown_result_is_reported(void **state)
{
    (void)state;
    char p[128], k[192];
    api_prefix(p, sizeof p, "cur");
    snprintf(k, sizeof k, "%sk", p);
    control("fail-commits 1 applied");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(k), L(k), S("v"), 1);
    assert_int_equal(api_commit(tr), 1021);
    assert_true(fdb_error_predicate(FDB_ERROR_PREDICATE_MAYBE_COMMITTED, 1021));
    fdb_transaction_destroy(tr);
    /* applied: the write is there */
    int present = 0;
    assert_int_equal(api_read_committed(k, L(k), &present, NULL, 0, NULL), 0);
    assert_int_equal(present, 1);
}

/* a plain retry loop that sets a key; returns the number of errors seen */
static int set_with_retry(const char *key, const char *val)
{
    FDBTransaction *tr = api_tr();
    int errors = 0;
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 50);
        fdb_transaction_set(tr, S(key), L(key), S(val), L(val));
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        errors++;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
    return errors;
}

static void check_committed(const char *key, const char *val)
{
    char buf[64];
    int present = 0, len = 0;
    assert_int_equal(api_read_committed(key, L(key), &present, buf, sizeof buf, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, L(val));
    assert_memory_equal(buf, val, (size_t)len);
}

static void test_dropped_connections(void **state)
{
    (void)state;
    /* after "drop" (the server closes every connection) the next commit reconnects; this
     * once crashed: a first request id of 0 was taken as unsent and the database released twice */
    char p[128], k[192];
    api_prefix(p, sizeof p, "drop");
    snprintf(k, sizeof k, "%sk", p);
    set_with_retry(k, "before");
    control("drop");
    set_with_retry(k, "after");
    check_committed(k, "after");
    /* drop in the middle of a transaction: its retry loop still gets there */
    FDBTransaction *tr = api_tr();
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 50);
        int present;
        fdb_error_t e = api_get(tr, k, L(k), 0, &present, NULL, 0, NULL);
        if (!e && attempt == 0)
            control("drop");
        if (!e) {
            fdb_transaction_set(tr, S(k), L(k), S("mid"), 3);
            e = api_commit(tr);
        }
        if (!e)
            break;
        /* after a drop the commit may have been lost in flight: the set is idempotent */
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
    check_committed(k, "mid");
}

static void test_new_proxies(void **state)
{
    (void)state;
    char p[128], k[192];
    api_prefix(p, sizeof p, "proxies");
    snprintf(k, sizeof k, "%sk", p);
    set_with_retry(k, "1");
    control("new-proxies");
    set_with_retry(k, "2");
    check_committed(k, "2");
    control("new-proxies");
    check_committed(k, "2");
}

static void test_future_version_reads(void **state)
{
    (void)state;
    char p[128], k[192];
    api_prefix(p, sizeof p, "futurever");
    snprintf(k, sizeof k, "%sk", p);
    set_with_retry(k, "v");
    control("future-version 2");
    /* future_version is retryable: the read loop gets there */
    check_committed(k, "v");
}

static void test_shard_split_and_move(void **state)
{
    (void)state;
    char p[128];
    api_prefix(p, sizeof p, "moves");
    char keys[20][192];
    FDBTransaction *tr = api_tr();
    for (int i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof keys[i], "%s%02d", p, i);
        fdb_transaction_set(tr, S(keys[i]), L(keys[i]), S(keys[i]), L(keys[i]));
    }
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    /* the client caches locations; split and move the shard under it */
    for (int i = 0; i < 20; i++) {
        int present = 0;
        assert_int_equal(api_get(tr, keys[i], L(keys[i]), 0, &present, NULL, 0, NULL), 0);
        assert_int_equal(present, 1);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "split %s", keys[10]);
    control(cmd);
    snprintf(cmd, sizeof cmd, "split %s", keys[5]);
    control(cmd);
    for (int round = 0; round < 3; round++) {
        snprintf(cmd, sizeof cmd, "move %s %d", keys[10], (round + 1) % 3);
        control(cmd);
        snprintf(cmd, sizeof cmd, "move %s %d", keys[0], (round + 2) % 3);
        control(cmd);
        fdb_transaction_reset(tr);
        /* no error reaches the application: wrong_shard_server is handled inside */
        for (int i = 0; i < 20; i++) {
            char buf[200];
            int present = 0, len = 0;
            fdb_error_t e = api_get(tr, keys[i], L(keys[i]), 0, &present, buf, sizeof buf, &len);
            if (e)
                fail_msg("round %d get %s: error %d", round, keys[i], e);
            assert_int_equal(present, 1);
            assert_int_equal(len, i < round ? 5 : L(keys[i])); /* earlier rounds wrote "moved" */
        }
        char end[200];
        snprintf(end, sizeof end, "%s\xff", p);
        /* WANT_ALL returns early (more) where the snapshot cache the gets filled ends, as in
         * libfdb_c: read on from the last key, as a binding does */
        char from[200];
        int flen = L(p), total = 0;
        memcpy(from, p, (size_t)flen);
        for (int batch = 0; batch < 40; batch++) {
            FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_THAN(S(from), flen),
                                                     FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(end), L(end)), 0, 0,
                                                     FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
            fdb_error_t e = api_wait(f);
            if (e)
                fail_msg("round %d get_range: error %d", round, e);
            const FDBKeyValue *kv;
            int n;
            fdb_bool_t more;
            assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
            total += n;
            if (n) {
                memcpy(from, kv[n - 1].key, (size_t)kv[n - 1].key_length);
                flen = kv[n - 1].key_length;
            }
            fdb_future_destroy(f);
            if (!more)
                break;
        }
        assert_int_equal(total, 20);
        fdb_transaction_set(tr, S(keys[round]), L(keys[round]), S("moved"), 5);
        assert_int_equal(api_commit(tr), 0);
    }
    fdb_transaction_destroy(tr);
    check_committed(keys[2], "moved");
}

static void test_restart(void **state)
{
    (void)state;
    /* after "restart" (connections dropped, new proxy generation, MVCC history forgotten) a
     * get reconnects and completes; it once hung (endpoint-not-found replies were ignored) */
    char p[128], k[192];
    api_prefix(p, sizeof p, "restart");
    snprintf(k, sizeof k, "%sk", p);
    set_with_retry(k, "before");
    control("restart");
    check_committed(k, "before");
    set_with_retry(k, "after");
    check_committed(k, "after");
    /* a transaction that read before the restart: its retry loop completes */
    FDBTransaction *tr = api_tr();
    int present;
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 0);
    control("restart");
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 50);
        fdb_transaction_set(tr, S(k), L(k), S("last"), 4);
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
        e = api_get(tr, k, L(k), 0, &present, NULL, 0, NULL);
        if (e)
            assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
    check_committed(k, "last");
}

/* Answers to an attempt that was given up on (timed out, then reset) must not leak into the
 * next attempt: its versionstamp, committed version, watches and read version are its own. */
static void test_late_answers_after_reset(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    int64_t ms = 300;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    FDBFuture *first_rv = fdb_transaction_get_read_version(tr); /* so the commit itself is what waits */
    assert_int_equal(api_wait(first_rv), 0);
    fdb_future_destroy(first_rv);
    control("delay 900");
    fdb_transaction_set(tr, S("late/a"), 6, S("1"), 1);
    assert_int_equal(api_commit(tr), 1031); /* the commit is still on its way */
    fdb_transaction_reset(tr);
    control("delay 0");
    fdb_transaction_set(tr, S("late/b"), 6, S("2"), 1);
    FDBFuture *vs = fdb_transaction_get_versionstamp(tr);
    FDBFuture *c = fdb_transaction_commit(tr);
    usleep(1200000); /* the first commit's late answer arrives meanwhile */
    assert_int_equal(api_wait(c), 0);
    fdb_future_destroy(c);
    int64_t committed = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &committed), 0);
    assert_int_equal(api_wait(vs), 0);
    const uint8_t *stamp;
    int n;
    assert_int_equal(fdb_future_get_key(vs, &stamp, &n), 0);
    assert_int_equal(n, 10);
    int64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | stamp[i];
    assert_true(v == committed); /* the new commit's, not the late one's */
    fdb_future_destroy(vs);

    /* a read version asked before a reset does not answer the one asked after it */
    fdb_transaction_reset(tr);
    control("delay 500");
    FDBFuture *old = fdb_transaction_get_read_version(tr);
    usleep(50000);
    fdb_transaction_reset(tr);
    assert_int_equal(api_wait(old), 1025);
    fdb_future_destroy(old);
    control("delay 0");
    FDBFuture *rv = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(rv), 0);
    int64_t version = 0;
    assert_int_equal(fdb_future_get_int64(rv, &version), 0);
    assert_true(version > 0);
    fdb_future_destroy(rv);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_unknown_result_unapplied),
        cmocka_unit_test(test_commit_unknown_result_applied),
        cmocka_unit_test(test_commit_unknown_result_is_reported),
        cmocka_unit_test(test_dropped_connections),
        cmocka_unit_test(test_new_proxies),
        cmocka_unit_test(test_future_version_reads),
        cmocka_unit_test(test_shard_split_and_move),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_late_answers_after_reset),
    };
    if (getenv("API_TEST_FILTER")) /* e.g. API_TEST_FILTER='*restart*' */
        cmocka_set_test_filter(getenv("API_TEST_FILTER"));
    return cmocka_run_group_tests_name("api_faults", tests, group_setup, group_teardown);
}
