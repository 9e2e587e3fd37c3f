/* What ends with an attempt. libfdb_c 7.3.77: fdb_transaction_on_error (retryable) resets the
 * NativeAPI transaction, whose resetImpl cancels the watches still waiting for its commit
 * (cancelWatches: transaction_cancelled), and RYW's resetRyow fails its reset promise, which
 * ends a get_versionstamp whose commit never ran (transaction_cancelled); fdb_transaction_reset
 * and fdb_transaction_destroy do the same. Nothing waits for a commit that will not happen. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define TRANSACTION_CANCELLED 1025
#define NOT_COMMITTED 1020
#define WAIT_MS 5000

static char g_prefix[64];

static int group_setup(void **state)
{
    (void)state;
    if (api_env_setup(NULL))
        return -1;
    api_prefix(g_prefix, sizeof g_prefix, "lifecycle");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* A watch made in an attempt that on_error retries fails with transaction_cancelled; the next
 * attempt's commit does not start it. */
static void test_on_error_cancels_waiting_watch(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, "watched");
    FDBFuture *w = fdb_transaction_watch(tr, (const uint8_t *)k, kl);
    assert_int_equal(api_on_error(tr, NOT_COMMITTED), 0); /* retryable: the attempt is over */
    assert_int_equal(api_wait_ms(w, WAIT_MS), TRANSACTION_CANCELLED);
    fdb_future_destroy(w);
    /* the next attempt commits without it */
    fdb_transaction_set(tr, (const uint8_t *)k, kl, (const uint8_t *)"x", 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

/* get_versionstamp asked for before a commit that fails before it is sent (a deferred write
 * error) ends at on_error, reset or destroy with transaction_cancelled. */
static void versionstamp_then(int how)
{
    FDBTransaction *tr = api_tr();
    FDBFuture *vs = fdb_transaction_get_versionstamp(tr);
    static uint8_t big[100001]; /* value_too_large: the commit fails without a request */
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, "vs");
    fdb_transaction_set(tr, (const uint8_t *)k, kl, big, sizeof big);
    fdb_error_t e = api_commit(tr);
    assert_int_equal(e, 2103); /* value_too_large */
    assert_false(fdb_future_is_ready(vs)); /* libfdb_c: still waiting for a commit */
    if (how == 0) {
        assert_int_equal(api_on_error(tr, e), e); /* not retryable: nothing reset yet */
        assert_false(fdb_future_is_ready(vs));
        fdb_transaction_reset(tr);
    } else if (how == 1) {
        assert_int_equal(api_on_error(tr, NOT_COMMITTED), 0);
    } else {
        fdb_transaction_destroy(tr);
        tr = NULL;
    }
    assert_int_equal(api_wait_ms(vs, WAIT_MS), TRANSACTION_CANCELLED);
    fdb_future_destroy(vs);
    if (tr)
        fdb_transaction_destroy(tr);
}

static void test_reset_ends_versionstamp(void **state)
{
    (void)state;
    versionstamp_then(0);
}

static void test_on_error_ends_versionstamp(void **state)
{
    (void)state;
    versionstamp_then(1);
}

static void test_destroy_ends_versionstamp(void **state)
{
    (void)state;
    versionstamp_then(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_error_cancels_waiting_watch),
        cmocka_unit_test(test_reset_ends_versionstamp),
        cmocka_unit_test(test_on_error_ends_versionstamp),
        cmocka_unit_test(test_destroy_ends_versionstamp),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
