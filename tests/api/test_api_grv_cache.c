/* The GRV cache (transaction option USE_GRV_CACHE) as libfdb_c 7.3 has it
 * (TransactionState::getReadVersion, DatabaseContext::updateCachedReadVersion,
 * backgroundGrvUpdater in NativeAPI.actor.cpp; src/client/db_grv.c):
 *  - without the network option DISABLE_CLIENT_BYPASS there is no shared state and the option
 *    is refused with invalid_option (2007), which the transaction reports later;
 *  - with it, a transaction's read version comes from the database's cache when that is at most
 *    0.1 s old; every GRV reply and every commit refreshes the cache, and once used, a
 *    background updater keeps it fresh;
 *  - SKIP_GRV_CACHE, or a transaction that has already retried, asks the proxies.
 * cfdb-server gives every read-version request a new version, so a version equal to the last
 * one seen can only have come from the cache. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static int64_t grv(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(f), 0);
    int64_t v = 0;
    assert_int_equal(fdb_future_get_int64(f, &v), 0);
    fdb_future_destroy(f);
    return v;
}

static int64_t fresh_version(void)
{
    FDBTransaction *tr = api_tr();
    int64_t v = grv(tr);
    fdb_transaction_destroy(tr);
    return v;
}

static int64_t cached_version(bool skip)
{
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_USE_GRV_CACHE, NULL, 0), 0);
    if (skip)
        assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SKIP_GRV_CACHE, NULL, 0), 0);
    int64_t v = grv(tr);
    fdb_transaction_destroy(tr);
    return v;
}

static unsigned long long grv_requests(void)
{
    unsigned long long n;
    assert_int_equal(api_server_status(&g_env.server, "grv_requests", &n), 0);
    return n;
}

/* Right after a read version, a cached one is that same version. On a loaded machine the two
 * may be more than 0.1 s apart, so up to five tries; every try must be at least as new. */
static void test_cached_version_is_the_last_seen(void **state)
{
    (void)state;
    int hits = 0;
    for (int i = 0; i < 5 && !hits; i++) {
        double t0 = api_now_ms();
        int64_t v1 = fresh_version();
        int64_t v2 = cached_version(false);
        print_message("fresh %lld, cached %lld (%.1f ms apart)\n", (long long)v1, (long long)v2, api_now_ms() - t0);
        assert_true(v2 >= v1);
        hits += v2 == v1;
    }
    assert_true(hits > 0);
}

/* A commit refreshes the cache: a cached read version right after it sees the commit. */
static void test_commit_refreshes_the_cache(void **state)
{
    (void)state;
    (void)cached_version(false); /* start the updater */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S("grv_cache/k"), 11, S("v"), 1);
    assert_int_equal(api_commit(tr), 0);
    int64_t c = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &c), 0);
    fdb_transaction_destroy(tr);
    int64_t v = cached_version(false);
    print_message("committed %lld, cached read version %lld\n", (long long)c, (long long)v);
    assert_true(v >= c);
}

/* The background updater keeps asking while nothing else does (about every 0.1 s), and the
 * cache follows it. */
static void test_background_updater(void **state)
{
    (void)state;
    int64_t v0 = cached_version(false);
    unsigned long long r0 = grv_requests();
    usleep(600 * 1000);
    unsigned long long r1 = grv_requests();
    int64_t v1 = cached_version(false);
    print_message("updater: %llu requests in 0.6 s; cached %lld -> %lld\n", r1 - r0, (long long)v0, (long long)v1);
    assert_true(r1 - r0 >= 2);
    assert_true(v1 > v0);
}

/* SKIP_GRV_CACHE asks the proxies: newer than what the cache holds. */
static void test_skip_grv_cache(void **state)
{
    (void)state;
    int64_t c = cached_version(false);
    int64_t s = cached_version(true);
    assert_true(s > c);
}

/* USE_GRV_CACHE set after an on_error is ignored (NativeAPI: only while numErrors == 0). */
static void test_ignored_after_a_retry(void **state)
{
    (void)state;
    int64_t c = cached_version(false);
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_on_error(tr, 1020); /* not_committed: retryable */
    assert_int_equal(api_wait(f), 0);
    fdb_future_destroy(f);
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_USE_GRV_CACHE, NULL, 0), 0);
    int64_t v = grv(tr);
    fdb_transaction_destroy(tr);
    assert_true(v > c);
}

/* Without DISABLE_CLIENT_BYPASS, in a process of its own: set_option answers 0 and the
 * transaction fails with invalid_option. */
static int without_bypass_disabled(void)
{
    if (api_env_setup(NULL))
        return 2;
    FDBTransaction *tr = api_tr();
    int rc = 0;
    if (fdb_transaction_set_option(tr, FDB_TR_OPTION_USE_GRV_CACHE, NULL, 0) != 0)
        rc = 3;
    fdb_transaction_set(tr, S("grv_cache/x"), 11, S("v"), 1);
    fdb_error_t e = api_commit(tr);
    if (e != 2007) {
        fprintf(stderr, "commit after USE_GRV_CACHE without DISABLE_CLIENT_BYPASS: %d, want 2007\n", e);
        rc = 4;
    }
    fdb_transaction_destroy(tr);
    api_env_teardown();
    return rc;
}

static int group_setup(void **state)
{
    (void)state;
    if (fdb_select_api_version(FDB_API_VERSION))
        return -1;
    if (fdb_network_set_option(FDB_NET_OPTION_DISABLE_CLIENT_BYPASS, NULL, 0))
        return -1;
    return api_env_setup(NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

int main(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(without_bypass_disabled());
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "USE_GRV_CACHE without DISABLE_CLIENT_BYPASS: child failed (status %d)\n", status);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_version_is_the_last_seen),
        cmocka_unit_test(test_commit_refreshes_the_cache),
        cmocka_unit_test(test_background_updater),
        cmocka_unit_test(test_skip_grv_cache),
        cmocka_unit_test(test_ignored_after_a_retry),
    };
    return cmocka_run_group_tests_name("api_grv_cache", tests, group_setup, group_teardown);
}
