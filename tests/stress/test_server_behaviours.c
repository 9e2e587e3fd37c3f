/* Server behaviours that FoundationDB's own C unit tests (bindings/c/test/unit/
 * unit_tests.cpp in 7.3.77) rely on, through the public API on libcfdb:
 *   - set_read_version(1) then get: transaction_too_old (1007);
 *   - \xff/coordinators: 2004 without system-key access; with READ_SYSTEM_KEYS or
 *     ACCESS_SYSTEM_KEYS it holds the cluster's connection string (the cluster file's
 *     line);
 *   - fdb_database_force_recovery_with_data_loss and fdb_database_create_snapshot come
 *     back (FoundationDB's test expects success for the first, 2509 for a bad uid and then
 *     2505 snap_path_not_whitelisted for the second). The client does not implement them
 *     yet and answers 2108 at once; the test accepts that or the server's real answer,
 *     and fails on anything else or on a future that does not complete in 10 s. The
 *     server's answers are checked at the wire level in tests/server_wire/
 *     test_server_requests.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "stress_env.h"

static fdb_error_t wait_at_most(FDBFuture *f, double seconds, bool *done)
{
    double end = st_now() + seconds;
    while (!fdb_future_is_ready(f) && st_now() < end)
        usleep(2000);
    *done = fdb_future_is_ready(f);
    return *done ? fdb_future_get_error(f) : 0;
}

static void test_read_version_one_too_old(void **state)
{
    (void)state;
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_st.db, &tr), 0);
    fdb_transaction_set(tr, (const uint8_t *)"tv/k", 4, (const uint8_t *)"v", 1);
    FDBFuture *c = fdb_transaction_commit(tr);
    assert_int_equal(st_wait(c), 0);
    fdb_future_destroy(c);
    fdb_transaction_reset(tr);
    fdb_transaction_set_read_version(tr, 1);
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)"tv/k", 4, 0);
    bool done;
    fdb_error_t e = wait_at_most(f, 10, &done);
    assert_true(done);
    assert_int_equal(e, 1007);
    fdb_future_destroy(f);
    /* and on_error makes it retryable: a fresh read version reads the key */
    FDBFuture *oe = fdb_transaction_on_error(tr, 1007);
    assert_int_equal(st_wait(oe), 0);
    fdb_future_destroy(oe);
    f = fdb_transaction_get(tr, (const uint8_t *)"tv/k", 4, 0);
    assert_int_equal(st_wait(f), 0);
    fdb_bool_t present;
    const uint8_t *v;
    int vl;
    assert_int_equal(fdb_future_get_value(f, &present, &v, &vl), 0);
    assert_true(present);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void read_coordinators(FDBTransactionOption opt, const char *want)
{
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_st.db, &tr), 0);
    assert_int_equal(fdb_transaction_set_option(tr, opt, NULL, 0), 0);
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)"\xff/coordinators", 14, 0);
    assert_int_equal(st_wait(f), 0);
    fdb_bool_t present;
    const uint8_t *v;
    int vl;
    assert_int_equal(fdb_future_get_value(f, &present, &v, &vl), 0);
    assert_true(present);
    assert_int_equal(vl, (int)strlen(want));
    assert_memory_equal(v, want, (size_t)vl);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void test_coordinators_key(void **state)
{
    (void)state;
    char want[300] = { 0 };
    FILE *cf = fopen(g_st.server.cluster, "r");
    assert_non_null(cf);
    assert_non_null(fgets(want, sizeof want, cf));
    fclose(cf);
    want[strcspn(want, "\r\n")] = 0;
    assert_non_null(strchr(want, '@'));
    /* without system-key access */
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_st.db, &tr), 0);
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)"\xff/coordinators", 14, 0);
    assert_int_equal(st_wait(f), 2004);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    read_coordinators(FDB_TR_OPTION_READ_SYSTEM_KEYS, want);
    read_coordinators(FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, want);
}

static void test_management_calls_return(void **state)
{
    (void)state;
    bool done;
    FDBFuture *f = fdb_database_force_recovery_with_data_loss(g_st.db, (const uint8_t *)"test_id", 7);
    assert_non_null(f);
    fdb_error_t e = wait_at_most(f, 10, &done);
    fdb_future_destroy(f);
    if (!done)
        fail_msg("force_recovery_with_data_loss did not return in 10 s");
    if (e != 0 && e != 2108)
        fail_msg("force_recovery_with_data_loss: %d", e);
    print_message("force_recovery_with_data_loss: %d\n", e);
    /* a uid that is not 32 hex digits, then a good one */
    f = fdb_database_create_snapshot(g_st.db, (const uint8_t *)"invalid_uid", 11, (const uint8_t *)"test", 4);
    assert_non_null(f);
    e = wait_at_most(f, 10, &done);
    fdb_future_destroy(f);
    if (!done)
        fail_msg("create_snapshot did not return in 10 s");
    if (e != 2509 && e != 2108)
        fail_msg("create_snapshot with a bad uid: %d", e);
    const char *uid = "0123456789abcdef0123456789ABCDEF";
    f = fdb_database_create_snapshot(g_st.db, (const uint8_t *)uid, 32, (const uint8_t *)"test", 4);
    e = wait_at_most(f, 10, &done);
    fdb_future_destroy(f);
    if (!done)
        fail_msg("create_snapshot did not return in 10 s");
    if (e != 2505 && e != 2108)
        fail_msg("create_snapshot: %d", e);
    print_message("create_snapshot: %d\n", e);
}

static int setup(void **state)
{
    (void)state;
    return st_setup(NULL);
}

static int teardown(void **state)
{
    (void)state;
    st_teardown();
    st_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_version_one_too_old),
        cmocka_unit_test(test_coordinators_key),
        cmocka_unit_test(test_management_calls_return),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
