/* Read-version batching as libfdb_c's readVersionBatcher does it (src/client/db_grv.c):
 * several GetReadVersionRequests of one priority may be in flight at once, and the requests
 * that arrive while others are on their way are gathered into batches (transactionCount > 1).
 *
 * The server's replies are held back with its delay fault, so that what the client sends
 * while a read version is outstanding can be counted at the server (control "status":
 * grv_requests, grv_transactions). The counts are read while the first reply is still held:
 * a client that keeps one request in flight and queues the rest (cfdb before this batcher)
 * would show one request there. */
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

static void control(const char *cmd, char *ans, size_t cap)
{
    if (api_server_control(&g_env.server, cmd, ans, cap))
        fail_msg("control '%s': %s", cmd, ans);
}

static void grv_counts(unsigned long long *requests, unsigned long long *transactions)
{
    char ans[1024];
    control("status", ans, sizeof ans);
    const char *r = strstr(ans, "grv_requests="), *t = strstr(ans, "grv_transactions=");
    assert_non_null(r);
    assert_non_null(t);
    *requests = strtoull(r + 13, NULL, 10);
    *transactions = strtoull(t + 17, NULL, 10);
}

static void sleep_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

static void wait_version(FDBFuture *f)
{
    assert_int_equal(fdb_future_block_until_ready(f), 0);
    int64_t v = 0;
    assert_int_equal(fdb_future_get_int64(f, &v), 0);
    assert_true(v > 0);
    fdb_future_destroy(f);
}

/* A second read version does not wait for the first one's reply. */
static void test_second_request_while_first_in_flight(void **state)
{
    (void)state;
    char ans[256];
    /* warm up: proxies known, connection open */
    FDBTransaction *w = api_tr();
    wait_version(fdb_transaction_get_read_version(w));
    fdb_transaction_destroy(w);

    unsigned long long r0, t0, r1, t1;
    grv_counts(&r0, &t0);
    control("delay 1500", ans, sizeof ans);
    FDBTransaction *a = api_tr(), *b = api_tr();
    FDBFuture *fa = fdb_transaction_get_read_version(a);
    sleep_ms(100); /* a's request is out and held */
    FDBFuture *fb = fdb_transaction_get_read_version(b);
    sleep_ms(300); /* b's request is out too, and a's reply still held */
    grv_counts(&r1, &t1);
    assert_false(fdb_future_is_ready(fa)); /* the counts were read while a was outstanding */
    control("delay 0", ans, sizeof ans);
    wait_version(fa);
    wait_version(fb);
    print_message("while the first reply was held: %llu requests for %llu transactions\n", r1 - r0, t1 - t0);
    assert_int_equal(r1 - r0, 2);
    assert_int_equal(t1 - t0, 2);
    fdb_transaction_destroy(a);
    fdb_transaction_destroy(b);
}

/* Many read versions asked for while one is outstanding are gathered into batches: every
 * transaction is counted once, in fewer requests than transactions, all answered. */
static void test_requests_gathered_into_batches(void **state)
{
    (void)state;
    enum { N = 200 };
    char ans[256];
    unsigned long long r0, t0, r1, t1;
    grv_counts(&r0, &t0);
    control("delay 1000", ans, sizeof ans);
    FDBTransaction *first = api_tr();
    FDBFuture *ff = fdb_transaction_get_read_version(first);
    sleep_ms(100);
    static FDBTransaction *tr[N];
    static FDBFuture *f[N];
    for (int i = 0; i < N; i++) {
        tr[i] = api_tr();
        f[i] = fdb_transaction_get_read_version(tr[i]);
    }
    sleep_ms(400);
    grv_counts(&r1, &t1);
    assert_false(fdb_future_is_ready(ff));
    control("delay 0", ans, sizeof ans);
    wait_version(ff);
    for (int i = 0; i < N; i++) {
        wait_version(f[i]);
        fdb_transaction_destroy(tr[i]);
    }
    fdb_transaction_destroy(first);
    print_message("while the first reply was held: %llu requests for %llu transactions\n", r1 - r0, t1 - t0);
    assert_int_equal(t1 - t0, N + 1);   /* every transaction asked for, before any reply */
    assert_true(r1 - r0 >= 2);          /* the others did not wait for the first reply */
    assert_true(r1 - r0 < N + 1);       /* and they were batched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_request_while_first_in_flight),
        cmocka_unit_test(test_requests_gathered_into_batches),
    };
    return cmocka_run_group_tests_name("api_grv_batching", tests, group_setup, group_teardown);
}
