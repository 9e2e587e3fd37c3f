/* Watches through fdb_c.h: firing on a change by another transaction, callbacks, cancel and
 * destroy, reset/destroy before commit, watches_disabled. */
#include "api_helpers.h"

#include <pthread.h>
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

#define KEY(name)                    \
    char p[128], k[192];             \
    api_prefix(p, sizeof p, name);   \
    snprintf(k, sizeof k, "%sk", p)

/* a committed watch on key */
static FDBFuture *watch_committed(const char *key)
{
    FDBTransaction *tr = api_tr();
    FDBFuture *w = fdb_transaction_watch(tr, S(key), L(key));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr); /* a committed watch outlives its transaction */
    return w;
}

static void test_watch_fires_on_change(void **state)
{
    (void)state;
    KEY("fires");
    assert_int_equal(api_set_committed(k, L(k), "a", 1), 0);
    FDBFuture *w = watch_committed(k);
    usleep(100 * 1000);
    assert_false(fdb_future_is_ready(w));
    assert_int_equal(api_set_committed(k, L(k), "b", 1), 0);
    assert_int_equal(api_wait_ms(w, 5000), 0);
    fdb_future_destroy(w);
}

static void test_watch_fires_on_clear_and_on_create(void **state)
{
    (void)state;
    KEY("clear");
    assert_int_equal(api_set_committed(k, L(k), "a", 1), 0);
    FDBFuture *w = watch_committed(k);
    assert_int_equal(api_set_committed(k, L(k), NULL, 0), 0);
    assert_int_equal(api_wait_ms(w, 5000), 0);
    fdb_future_destroy(w);
    /* on an absent key: fires when it is created */
    w = watch_committed(k);
    usleep(100 * 1000);
    assert_false(fdb_future_is_ready(w));
    assert_int_equal(api_set_committed(k, L(k), "new", 3), 0);
    assert_int_equal(api_wait_ms(w, 5000), 0);
    fdb_future_destroy(w);
}

typedef struct cb_ctx {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fired;
    fdb_error_t err;
} cb_ctx;

static void on_fire(FDBFuture *f, void *arg)
{
    cb_ctx *c = arg;
    pthread_mutex_lock(&c->mu);
    c->fired++;
    c->err = fdb_future_get_error(f);
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void test_watch_callback(void **state)
{
    (void)state;
    KEY("callback");
    assert_int_equal(api_set_committed(k, L(k), "a", 1), 0);
    FDBFuture *w = watch_committed(k);
    cb_ctx c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1 };
    assert_int_equal(fdb_future_set_callback(w, on_fire, &c), 0);
    assert_int_equal(api_set_committed(k, L(k), "b", 1), 0);
    double end = api_now_ms() + 5000;
    pthread_mutex_lock(&c.mu);
    while (!c.fired && api_now_ms() < end) {
        pthread_mutex_unlock(&c.mu);
        usleep(1000);
        pthread_mutex_lock(&c.mu);
    }
    pthread_mutex_unlock(&c.mu);
    assert_int_equal(c.fired, 1);
    assert_int_equal(c.err, 0);
    fdb_future_destroy(w);
}

static void test_watch_own_write_then_other_change(void **state)
{
    (void)state;
    KEY("ownwrite");
    assert_int_equal(api_set_committed(k, L(k), "a", 1), 0);
    /* a watch set after a write in the same transaction watches from the written value */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(k), L(k), S("mine"), 4);
    FDBFuture *w = fdb_transaction_watch(tr, S(k), L(k));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    usleep(200 * 1000);
    assert_false(fdb_future_is_ready(w));
    assert_int_equal(api_set_committed(k, L(k), "other", 5), 0);
    assert_int_equal(api_wait_ms(w, 5000), 0);
    fdb_future_destroy(w);
}

static void test_watch_cancel(void **state)
{
    (void)state;
    KEY("cancel");
    FDBFuture *w = watch_committed(k);
    fdb_future_cancel(w);
    assert_int_equal(api_wait_ms(w, 3000), 1101); /* operation_cancelled */
    fdb_future_destroy(w);
    /* destroying a pending watch is fine, and a later change does not touch it */
    w = watch_committed(k);
    fdb_future_destroy(w);
    assert_int_equal(api_set_committed(k, L(k), "x", 1), 0);
    usleep(50 * 1000);
}

static void test_watch_reset_before_commit(void **state)
{
    (void)state;
    KEY("reset");
    FDBTransaction *tr = api_tr();
    FDBFuture *w = fdb_transaction_watch(tr, S(k), L(k));
    fdb_transaction_reset(tr);
    assert_int_equal(api_wait_ms(w, 3000), 1025);
    fdb_future_destroy(w);
    /* destroying the transaction before commit does the same */
    w = fdb_transaction_watch(tr, S(k), L(k));
    fdb_transaction_destroy(tr);
    assert_int_equal(api_wait_ms(w, 3000), 1025);
    fdb_future_destroy(w);
}

static void test_watch_failed_commit(void **state)
{
    (void)state;
    KEY("failedcommit");
    char k2[200];
    snprintf(k2, sizeof k2, "%sk2", p);
    FDBTransaction *tr = api_tr();
    int present;
    assert_int_equal(api_get(tr, k2, L(k2), 0, &present, NULL, 0, NULL), 0);
    FDBFuture *w = fdb_transaction_watch(tr, S(k), L(k));
    assert_int_equal(api_set_committed(k2, L(k2), "x", 1), 0);
    fdb_transaction_set(tr, S(k), L(k), S("y"), 1);
    assert_int_equal(api_commit(tr), 1020);
    /* the watch fails with the commit's error */
    assert_int_equal(api_wait_ms(w, 3000), 1020);
    fdb_future_destroy(w);
    fdb_transaction_destroy(tr);
}

static void test_watches_disabled_without_ryw(void **state)
{
    (void)state;
    KEY("disabled");
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    FDBFuture *w = fdb_transaction_watch(tr, S(k), L(k));
    assert_int_equal(api_wait_ms(w, 3000), 1034);
    fdb_future_destroy(w);
    fdb_transaction_destroy(tr);
}

static void test_many_watches_fire(void **state)
{
    (void)state;
    KEY("many");
    enum { N = 50 };
    FDBFuture *w[N];
    char keys[N][200];
    FDBTransaction *tr = api_tr();
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "%s%03d", p, i);
        w[i] = fdb_transaction_watch(tr, S(keys[i]), L(keys[i]));
    }
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    for (int i = 0; i < N; i += 2)
        fdb_transaction_set(tr, S(keys[i]), L(keys[i]), S("x"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    for (int i = 0; i < N; i += 2)
        assert_int_equal(api_wait_ms(w[i], 5000), 0);
    for (int i = 1; i < N; i += 2)
        assert_false(fdb_future_is_ready(w[i]));
    for (int i = 0; i < N; i++)
        fdb_future_destroy(w[i]);
}

static FDBFuture *watch_committed_on(FDBDatabase *db, const char *key, fdb_error_t want_commit)
{
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    FDBFuture *w = fdb_transaction_watch(tr, S(key), L(key));
    assert_int_equal(api_commit(tr), want_commit);
    fdb_transaction_destroy(tr);
    return w;
}

/* MAX_WATCHES bounds a database's outstanding watches: one more fails with too_many_watches,
 * and a watch that ends gives its slot back (DatabaseContext's watch counter). */
static void test_max_watches(void **state)
{
    (void)state;
    KEY("maxw");
    FDBDatabase *db;
    assert_int_equal(fdb_create_database(g_env.server.cluster_file, &db), 0);
    int64_t bad = -1, two = 2;
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_MAX_WATCHES, (const uint8_t *)&bad, 8), 2006);
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_MAX_WATCHES, (const uint8_t *)&two, 8), 0);
    assert_int_equal(api_set_committed(k, L(k), "a", 1), 0);
    FDBFuture *w1 = watch_committed_on(db, k, 0);
    FDBFuture *w2 = watch_committed_on(db, k, 0);
    FDBFuture *w3 = watch_committed_on(db, k, 0);
    assert_int_equal(api_wait_ms(w3, 5000), 1032);
    fdb_future_destroy(w3);
    /* the two fire; their slots are free again */
    assert_int_equal(api_set_committed(k, L(k), "b", 1), 0);
    assert_int_equal(api_wait_ms(w1, 5000), 0);
    assert_int_equal(api_wait_ms(w2, 5000), 0);
    fdb_future_destroy(w1);
    fdb_future_destroy(w2);
    usleep(20000);
    FDBFuture *w4 = watch_committed_on(db, k, 0);
    FDBFuture *w5 = watch_committed_on(db, k, 0);
    usleep(100000);
    assert_false(fdb_future_is_ready(w4));
    assert_false(fdb_future_is_ready(w5));
    /* cancelling a watch frees its slot at once */
    fdb_future_cancel(w4);
    fdb_future_destroy(w4);
    usleep(20000);
    FDBFuture *w6 = watch_committed_on(db, k, 0);
    usleep(100000);
    assert_false(fdb_future_is_ready(w6));
    fdb_future_destroy(w5);
    fdb_future_destroy(w6);
    fdb_database_destroy(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch_fires_on_change),
        cmocka_unit_test(test_watch_fires_on_clear_and_on_create),
        cmocka_unit_test(test_watch_callback),
        cmocka_unit_test(test_watch_own_write_then_other_change),
        cmocka_unit_test(test_watch_cancel),
        cmocka_unit_test(test_watch_reset_before_commit),
        cmocka_unit_test(test_watch_failed_commit),
        cmocka_unit_test(test_watches_disabled_without_ryw),
        cmocka_unit_test(test_many_watches_fire),
        cmocka_unit_test(test_max_watches),
    };
    return cmocka_run_group_tests_name("api_watch", tests, group_setup, group_teardown);
}
