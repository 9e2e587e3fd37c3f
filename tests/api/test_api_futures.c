/* Futures through fdb_c.h, on libfdb_c 7.3's terms:
 *  - fdb_future_release_memory: libfdb_c counts a reference per successful fdb_future_get_*
 *    and drops one per release; the release that brings the count to exactly zero releases
 *    the result, and from then on the getters and fdb_future_get_error report 1102
 *    future_released (a failed future keeps its own error). Facts from
 *    flow/include/flow/ThreadHelper.actor.h (ThreadSingleAssignmentVarBase::releaseMemory,
 *    cleanupUnsafe, ThreadSingleAssignmentVar::get) and bindings/c/fdb_c.cpp at 7.3.77.
 *  - on the network thread (in a callback), fdb_future_block_until_ready on a future that is
 *    not ready returns 2026 blocked_from_network_thread instead of waiting forever
 *    (blockUntilReadyCheckOnMainThread); the other future and transaction calls work there.
 * The callback checks cannot assert on the network thread (cmocka's failure jumps belong to
 * the test's thread): they record what they saw, and the test asserts it afterwards. */
#include "api_helpers.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define FUTURE_RELEASED 1102
#define TRANSACTION_CANCELLED 1025
#define BLOCKED_FROM_NETWORK_THREAD 2026

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

/* a committed key under a fresh prefix: key "<prefix>k" = value */
static void committed_key(const char *name, char *key, size_t cap, const char *value)
{
    char p[128];
    api_prefix(p, sizeof p, name);
    snprintf(key, cap, "%sk", p);
    assert_int_equal(api_set_committed(S(key), L(key), S(value), L(value)), 0);
}

static FDBFuture *ready_get(FDBTransaction *tr, const char *key)
{
    FDBFuture *f = fdb_transaction_get(tr, S(key), L(key), 0);
    assert_non_null(f);
    assert_int_equal(api_wait(f), 0);
    return f;
}

/* fdb_future_get_value, expecting rc; on success the value must be `want` */
static void check_value(FDBFuture *f, fdb_error_t rc, const char *want)
{
    fdb_bool_t present = 0;
    const uint8_t *v = NULL;
    int n = -1;
    assert_int_equal(fdb_future_get_value(f, &present, &v, &n), rc);
    if (rc == 0) {
        assert_true(present);
        assert_int_equal(n, L(want));
        assert_memory_equal(v, want, (size_t)n);
    }
}

/* ---------- fdb_future_release_memory ---------- */

/* Two gets count two references: the first release leaves the value readable (and the get
 * after it counts again), the value goes when releases have caught up with gets. */
static void test_release_after_as_many_gets_as_releases(void **state)
{
    (void)state;
    char key[192];
    committed_key("release_count", key, sizeof key, "the value");
    FDBTransaction *tr = api_tr();
    FDBFuture *f = ready_get(tr, key);

    for (int i = 0; i < 3; i++)
        check_value(f, 0, "the value"); /* 3 references */
    fdb_future_release_memory(f);        /* 2 */
    check_value(f, 0, "the value");      /* 3 */
    fdb_future_release_memory(f);        /* 2 */
    fdb_future_release_memory(f);        /* 1 */
    check_value(f, 0, "the value");      /* 2 */
    assert_int_equal(fdb_future_get_error(f), 0); /* counts nothing */
    fdb_future_release_memory(f);        /* 1 */
    check_value(f, 0, "the value");      /* 2 */
    fdb_future_release_memory(f);        /* 1 */
    fdb_future_release_memory(f);        /* 0: released */

    check_value(f, FUTURE_RELEASED, NULL);
    assert_true(fdb_future_is_ready(f));
    assert_int_equal(fdb_future_get_error(f), FUTURE_RELEASED);
    /* it stays released; more releases change nothing */
    fdb_future_release_memory(f);
    check_value(f, FUTURE_RELEASED, NULL);
    assert_int_equal(fdb_future_get_error(f), FUTURE_RELEASED);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* A release with no get before it takes the count below zero: the next get brings it back to
 * zero, and the release after that does not reach zero, so the value stays readable. */
static void test_release_before_any_get_releases_nothing(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(f), 0);
    int64_t v1 = 0, v2 = 0;
    fdb_future_release_memory(f); /* -1 */
    assert_int_equal(fdb_future_get_int64(f, &v1), 0); /* 0 */
    assert_true(v1 > 0);
    fdb_future_release_memory(f); /* -1 */
    assert_int_equal(fdb_future_get_int64(f, &v2), 0);
    assert_int_equal(v1, v2);
    assert_int_equal(fdb_future_get_error(f), 0);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* A failed future counts no reference and keeps its error: a release never turns it into
 * future_released. */
static void test_release_keeps_a_failure(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    fdb_transaction_cancel(tr);
    FDBFuture *f = fdb_transaction_get(tr, S("x"), 1, 0);
    assert_int_equal(api_wait(f), TRANSACTION_CANCELLED);
    check_value(f, TRANSACTION_CANCELLED, NULL);
    fdb_future_release_memory(f);
    check_value(f, TRANSACTION_CANCELLED, NULL);
    fdb_future_release_memory(f);
    assert_int_equal(fdb_future_get_error(f), TRANSACTION_CANCELLED);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* The same for the other result kinds: a version, a key-value array, a key. */
static void test_release_other_result_kinds(void **state)
{
    (void)state;
    char key[192];
    committed_key("release_kinds", key, sizeof key, "v");
    FDBTransaction *tr = api_tr();

    FDBFuture *rv = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(rv), 0);
    int64_t version = 0;
    assert_int_equal(fdb_future_get_int64(rv, &version), 0);
    fdb_future_release_memory(rv);
    assert_int_equal(fdb_future_get_int64(rv, &version), FUTURE_RELEASED);
    assert_int_equal(fdb_future_get_error(rv), FUTURE_RELEASED);
    fdb_future_destroy(rv);

    char end[200];
    snprintf(end, sizeof end, "%s\xff", key);
    FDBFuture *range = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(key), L(key)),
                                                 FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(end), L(end)), 0, 0,
                                                 FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(range), 0);
    const FDBKeyValue *kv = NULL;
    int count = 0;
    fdb_bool_t more = 1;
    assert_int_equal(fdb_future_get_keyvalue_array(range, &kv, &count, &more), 0);
    assert_int_equal(count, 1);
    fdb_future_release_memory(range);
    assert_int_equal(fdb_future_get_keyvalue_array(range, &kv, &count, &more), FUTURE_RELEASED);
    fdb_future_destroy(range);

    FDBFuture *k = fdb_transaction_get_key(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(key), L(key)), 0);
    assert_int_equal(api_wait(k), 0);
    const uint8_t *kp = NULL;
    int kl = 0;
    assert_int_equal(fdb_future_get_key(k, &kp, &kl), 0);
    assert_int_equal(kl, L(key));
    fdb_future_release_memory(k);
    assert_int_equal(fdb_future_get_key(k, &kp, &kl), FUTURE_RELEASED);
    fdb_future_destroy(k);
    fdb_transaction_destroy(tr);
}

/* ---------- calls from the network thread ---------- */

typedef struct event {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int set;
} event;

static void event_init(event *e)
{
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    e->set = 0;
}

static void event_set(event *e)
{
    pthread_mutex_lock(&e->mu);
    e->set = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* false if not set within ms */
static bool event_wait(event *e, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&e->mu);
    int rc = 0;
    while (!e->set && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&e->cv, &e->mu, &until);
    bool set = e->set != 0;
    pthread_mutex_unlock(&e->mu);
    return set;
}

static void event_destroy(event *e)
{
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
}

/* What the callbacks saw; -100 marks "not reached". */
typedef struct net_ctx {
    pthread_t app_thread;
    FDBTransaction *tr;
    const char *key;
    const char *other_key;
    event done;
    int on_network_thread;     /* the first callback did not run on the test's thread */
    int first_get_rc;          /* fdb_future_get_value of the ready future */
    int first_block_rc;        /* block_until_ready on that (ready) future */
    int second_was_ready;      /* the new get's future right after it was made */
    int second_block_rc;       /* block_until_ready on it */
    int pending_destroyed;     /* a third future destroyed while pending */
    int second_cb_rc;          /* in the chained callback: get_value of the second future */
    int second_cb_present;
    int second_cb_network;     /* the chained callback ran on the network thread */
    FDBFuture *second;
} net_ctx;

static void second_callback(FDBFuture *f, void *arg)
{
    net_ctx *c = arg;
    c->second_cb_network = !pthread_equal(pthread_self(), c->app_thread);
    fdb_bool_t present = 0;
    const uint8_t *v = NULL;
    int n = 0;
    c->second_cb_rc = fdb_future_get_value(f, &present, &v, &n);
    c->second_cb_present = present;
    event_set(&c->done);
}

static void first_callback(FDBFuture *f, void *arg)
{
    net_ctx *c = arg;
    c->on_network_thread = !pthread_equal(pthread_self(), c->app_thread);
    if (!c->on_network_thread) {
        event_set(&c->done); /* ready before the callback was set: the test tries again */
        return;
    }
    fdb_bool_t present = 0;
    const uint8_t *v = NULL;
    int n = 0;
    c->first_get_rc = fdb_future_get_value(f, &present, &v, &n);
    c->first_block_rc = fdb_future_block_until_ready(f);

    /* a new read in the same transaction: not ready (the storage server has to answer, and
     * only this thread could hear it), so blocking on it would deadlock */
    FDBFuture *f2 = fdb_transaction_get(c->tr, S(c->other_key), L(c->other_key), 0);
    c->second_was_ready = fdb_future_is_ready(f2);
    c->second_block_rc = fdb_future_block_until_ready(f2);

    /* a pending future can be destroyed here */
    FDBFuture *f3 = fdb_transaction_get(c->tr, S(c->key), L(c->key), 1);
    fdb_future_destroy(f3);
    c->pending_destroyed = 1;

    /* and a callback chained on the pending one runs later, on this thread too */
    c->second = f2;
    if (fdb_future_set_callback(f2, second_callback, c) != 0)
        event_set(&c->done);
}

static void test_block_from_network_thread(void **state)
{
    (void)state;
    char key[192], other[200];
    committed_key("from_callback", key, sizeof key, "first");
    snprintf(other, sizeof other, "%s2", key);
    assert_int_equal(api_set_committed(S(other), L(other), S("second"), 6), 0);

    bool on_network = false;
    for (int attempt = 0; attempt < 20 && !on_network; attempt++) {
        net_ctx c;
        memset(&c, 0, sizeof c);
        c.app_thread = pthread_self();
        c.key = key;
        c.other_key = other;
        c.first_get_rc = c.first_block_rc = c.second_block_rc = c.second_cb_rc = -100;
        event_init(&c.done);
        c.tr = api_tr();
        FDBFuture *f1 = fdb_transaction_get(c.tr, S(key), L(key), 0);
        assert_int_equal(fdb_future_set_callback(f1, first_callback, &c), 0);
        /* no deadlock: everything above answers within seconds. After one the network
         * thread is stuck for good and nothing after this could end: stop here. */
        if (!event_wait(&c.done, 20000)) {
            fprintf(stderr, "test_block_from_network_thread: the callbacks did not finish in 20 s (deadlock on "
                            "the network thread?)\n");
            _exit(1);
        }
        on_network = c.on_network_thread;
        if (on_network) {
            assert_int_equal(c.first_get_rc, 0);
            assert_int_equal(c.first_block_rc, 0);
            assert_false(c.second_was_ready);
            assert_int_equal(c.second_block_rc, BLOCKED_FROM_NETWORK_THREAD);
            assert_true(c.pending_destroyed);
            assert_non_null(c.second);
            assert_true(c.second_cb_network);
            assert_int_equal(c.second_cb_rc, 0);
            assert_true(c.second_cb_present);
            /* from the test's thread the same future blocks (it is ready) and reads */
            assert_int_equal(fdb_future_block_until_ready(c.second), 0);
            check_value(c.second, 0, "second");
            fdb_future_destroy(c.second);
        }
        fdb_future_destroy(f1);
        fdb_transaction_destroy(c.tr);
        event_destroy(&c.done);
    }
    assert_true(on_network);
}

/* Off the network thread, block_until_ready still waits (and returns 0), also for a future
 * whose transaction fails. */
static void test_block_from_application_thread(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    assert_int_equal(fdb_future_block_until_ready(f), 0);
    assert_true(fdb_future_is_ready(f));
    assert_int_equal(fdb_future_get_error(f), 0);
    fdb_future_destroy(f);
    fdb_transaction_cancel(tr);
    f = fdb_transaction_get(tr, S("k"), 1, 0);
    assert_int_equal(fdb_future_block_until_ready(f), 0);
    assert_int_equal(fdb_future_get_error(f), TRANSACTION_CANCELLED);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release_after_as_many_gets_as_releases),
        cmocka_unit_test(test_release_before_any_get_releases_nothing),
        cmocka_unit_test(test_release_keeps_a_failure),
        cmocka_unit_test(test_release_other_result_kinds),
        cmocka_unit_test(test_block_from_network_thread),
        cmocka_unit_test(test_block_from_application_thread),
    };
    return cmocka_run_group_tests_name("api_futures", tests, group_setup, group_teardown);
}
