/* The management workers' bound (src/client/special_worker.c): many concurrent reads of
 * \xff\xff/management/ modules all complete, and the library never runs more than its fixed
 * number of worker threads for them (counted from /proc/self/task, the kernel's list of the
 * process's threads). The bound is observed against a cluster that cannot be reached: every
 * module read then blocks until the transaction's timeout, so a thread-per-call library would
 * hold one thread per outstanding read at the moment of counting. */
#include "api_helpers.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define SL(x) ((int)sizeof(x) - 1)
#define MG "\xff\xff/management/"
#define NREADS 16
#define MAX_WORKERS 4 /* SK_MAX_WORKERS in special_worker.c */

static char g_dead_cluster[300];

static int group_setup(void **state)
{
    (void)state;
    if (api_env_setup(NULL))
        return -1;
    /* a cluster file naming a port where nothing listens */
    snprintf(g_dead_cluster, sizeof g_dead_cluster, "%s/dead.cluster", g_env.server.dir);
    FILE *f = fopen(g_dead_cluster, "w");
    if (!f)
        return -1;
    fputs("dead:dead@127.0.0.1:1\n", f);
    fclose(f);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    remove(g_dead_cluster);
    return api_env_teardown();
}

static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* More concurrent module reads than workers against cfdb-server: each one answers, with the
 * value the lock module computes from \xff/dbLocked (absent) and the maintenance module's
 * empty range. */
static void test_reads_beyond_bound_complete(void **state)
{
    (void)state;
    FDBTransaction *tr[NREADS];
    FDBFuture *f[NREADS];
    for (int i = 0; i < NREADS; i++) {
        tr[i] = api_tr();
        if (i % 2)
            f[i] = fdb_transaction_get(tr[i], S(MG "db_locked"), SL(MG "db_locked"), 0);
        else
            f[i] = fdb_transaction_get_range(tr[i], S(MG "maintenance/"), SL(MG "maintenance/"), 0, 1,
                                             S(MG "maintenance0"), SL(MG "maintenance0"), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    }
    for (int i = 0; i < NREADS; i++) {
        assert_int_equal(api_wait(f[i]), 0);
        if (i % 2) {
            fdb_bool_t present = 1;
            const uint8_t *v;
            int vl;
            assert_int_equal(fdb_future_get_value(f[i], &present, &v, &vl), 0);
            assert_false(present);
        } else {
            const FDBKeyValue *kv;
            int n = -1;
            fdb_bool_t more;
            assert_int_equal(fdb_future_get_keyvalue_array(f[i], &kv, &n, &more), 0);
            assert_int_equal(n, 0);
        }
        fdb_future_destroy(f[i]);
        fdb_transaction_destroy(tr[i]);
    }
}

/* Reads that block: at most MAX_WORKERS extra threads while NREADS wait, every read ends
 * with the transaction's timeout (1031), and the workers are gone once the queue is empty. */
static void test_threads_bounded(void **state)
{
    (void)state;
    FDBDatabase *db;
    assert_int_equal(fdb_create_database(g_dead_cluster, &db), 0);
    /* the database's own connection machinery first, so that it is in the baseline */
    FDBTransaction *warm;
    assert_int_equal(fdb_database_create_transaction(db, &warm), 0);
    int64_t short_ms = 200;
    fdb_transaction_set_option(warm, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&short_ms, 8);
    FDBFuture *wf = fdb_transaction_get(warm, S("k"), 1, 0);
    assert_int_equal(api_wait(wf), 1031);
    fdb_future_destroy(wf);
    fdb_transaction_destroy(warm);
    sleep_ms(100);
    int base = thread_count();

    FDBTransaction *tr[NREADS];
    FDBFuture *f[NREADS];
    int64_t timeout_ms = 1000;
    for (int i = 0; i < NREADS; i++) {
        assert_int_equal(fdb_database_create_transaction(db, &tr[i]), 0);
        fdb_transaction_set_option(tr[i], FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&timeout_ms, 8);
        f[i] = fdb_transaction_get(tr[i], S(MG "db_locked"), SL(MG "db_locked"), 0);
    }
    sleep_ms(300);
    int during = thread_count();
    int ready = 0;
    for (int i = 0; i < NREADS; i++)
        ready += fdb_future_is_ready(f[i]) ? 1 : 0;
    assert_int_equal(ready, 0); /* still blocked: the count saw them all outstanding */
    assert_true(during - base <= MAX_WORKERS);
    assert_true(during - base >= 1); /* the reads do run on workers */
    for (int i = 0; i < NREADS; i++) {
        assert_int_equal(api_wait(f[i]), 1031);
        fdb_future_destroy(f[i]);
        fdb_transaction_destroy(tr[i]);
    }
    /* workers exit when the queue is empty */
    int after = thread_count();
    for (int k = 0; k < 100 && after > base; k++) {
        sleep_ms(20);
        after = thread_count();
    }
    assert_int_equal(after, base);
    fdb_database_destroy(db);
}

/* Module reads running at once on one transaction: each one's system-key access lasts until
 * the last ends (one job's end must not take it from another), and the application's own
 * access comes back afterwards (a plain read of \xff... is key_outside_legal_range, 2004). */
static void test_concurrent_jobs_one_transaction(void **state)
{
    (void)state;
    static const char ct[] = "\xff\xff/configuration/process/class_type/",
                      ce[] = "\xff\xff/configuration/process/class_type0",
                      cs[] = "\xff\xff/configuration/process/class_source/",
                      cse[] = "\xff\xff/configuration/process/class_source0";
    for (int round = 0; round < 30; round++) {
        FDBTransaction *tr = api_tr();
        FDBFuture *f[4];
        f[0] = fdb_transaction_get_range(tr, S(ct), SL(ct), 0, 1, S(ce), SL(ce), 0, 1, 0, 0,
                                         FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
        f[1] = fdb_transaction_get_range(tr, S(cs), SL(cs), 0, 1, S(cse), SL(cse), 0, 1, 0, 0,
                                         FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
        f[2] = fdb_transaction_get(tr, S(MG "db_locked"), SL(MG "db_locked"), 0);
        f[3] = fdb_transaction_get(tr, S(MG "consistency_check_suspended"), SL(MG "consistency_check_suspended"), 0);
        for (int i = 0; i < 4; i++) {
            assert_int_equal(api_wait(f[i]), 0);
            fdb_future_destroy(f[i]);
        }
        FDBFuture *g = fdb_transaction_get(tr, S("\xff/x"), 2, 0);
        assert_int_equal(api_wait(g), 2004);
        fdb_future_destroy(g);
        fdb_transaction_destroy(tr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_jobs_one_transaction),
        cmocka_unit_test(test_reads_beyond_bound_complete),
        cmocka_unit_test(test_threads_bounded),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
