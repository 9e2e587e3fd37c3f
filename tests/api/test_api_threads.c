/* Many client threads on one network: 16 threads x 500 transactions of random gets and sets
 * on disjoint keys (each thread checks its reads against its own model), each transaction
 * also adding 1 to one shared counter; the final state is verified. */
#include "api_helpers.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define THREADS 16
#define TXNS 500
#define KEYS_PER_THREAD 16

static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--storage-servers", "3", "--shards", "t/threads/1/04,t/threads/1/10", NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

typedef struct worker {
    int id;
    char prefix[128];
    const char *counter;
    unsigned seed;
    int values[KEYS_PER_THREAD]; /* committed model: -1 = absent */
    char err[256];
    int commits;
} worker;

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static void *work(void *arg)
{
    worker *w = arg;
    FDBTransaction *tr = NULL;
    if (fdb_database_create_transaction(g_env.db, &tr)) {
        snprintf(w->err, sizeof w->err, "create_transaction");
        return NULL;
    }
    uint8_t one[8] = { 1 };
    for (int t = 0; t < TXNS && !w->err[0]; t++) {
        int pending[KEYS_PER_THREAD];
        for (;;) {
            memcpy(pending, w->values, sizeof pending);
            fdb_error_t e = 0;
            int ops = 1 + (int)(rnd(&w->seed) % 4);
            for (int o = 0; o < ops && !e; o++) {
                int ki = (int)(rnd(&w->seed) % KEYS_PER_THREAD);
                char key[192];
                snprintf(key, sizeof key, "%s%02d/%02d", w->prefix, w->id, ki);
                if (rnd(&w->seed) % 2) {
                    int present = 0, len = 0;
                    char buf[32];
                    e = api_get(tr, key, L(key), 0, &present, buf, sizeof buf - 1, &len);
                    if (e)
                        break;
                    int got = present ? (buf[len] = 0, atoi(buf)) : -1;
                    if (got != pending[ki]) {
                        snprintf(w->err, sizeof w->err, "thread %d key %d: read %d want %d", w->id, ki, got,
                                 pending[ki]);
                        break;
                    }
                } else {
                    int v = (int)(rnd(&w->seed) % 100000);
                    char val[16];
                    snprintf(val, sizeof val, "%d", v);
                    fdb_transaction_set(tr, S(key), L(key), S(val), L(val));
                    pending[ki] = v;
                }
            }
            if (w->err[0])
                break;
            if (!e) {
                fdb_transaction_atomic_op(tr, S(w->counter), L(w->counter), one, 8, FDB_MUTATION_TYPE_ADD);
                e = api_commit(tr);
            }
            if (!e) {
                memcpy(w->values, pending, sizeof pending);
                w->commits++;
                break;
            }
            if (e == 1021) { /* unknown result: cannot happen without faults */
                snprintf(w->err, sizeof w->err, "commit_unknown_result");
                break;
            }
            e = api_on_error(tr, e);
            if (e) {
                snprintf(w->err, sizeof w->err, "thread %d: error %d", w->id, e);
                break;
            }
        }
        fdb_transaction_reset(tr);
    }
    fdb_transaction_destroy(tr);
    return NULL;
}

static worker g_workers[THREADS];

static void test_threads_disjoint_keys_and_counter(void **state)
{
    (void)state;
    char p[128], counter[192];
    api_prefix(p, sizeof p, "threads");
    snprintf(counter, sizeof counter, "%scounter", p);
    pthread_t th[THREADS];
    double t0 = api_now_ms();
    for (int i = 0; i < THREADS; i++) {
        worker *w = &g_workers[i];
        memset(w, 0, sizeof *w);
        w->id = i;
        snprintf(w->prefix, sizeof w->prefix, "%s", p);
        w->counter = counter;
        w->seed = 1234u + (unsigned)i * 7919u;
        for (int k = 0; k < KEYS_PER_THREAD; k++)
            w->values[k] = -1;
        assert_int_equal(pthread_create(&th[i], NULL, work, w), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    print_message("%d transactions in %.0f ms\n", THREADS * TXNS, api_now_ms() - t0);
    for (int i = 0; i < THREADS; i++) {
        if (g_workers[i].err[0])
            fail_msg("%s", g_workers[i].err);
        assert_int_equal(g_workers[i].commits, TXNS);
    }
    /* final state: every key as its thread last committed it, and the counter */
    FDBTransaction *tr = api_tr();
    for (int i = 0; i < THREADS; i++) {
        if (i % 4 == 0)
            fdb_transaction_reset(tr);
        for (int k = 0; k < KEYS_PER_THREAD; k++) {
            char key[192], buf[32];
            snprintf(key, sizeof key, "%s%02d/%02d", p, i, k);
            int present = 0, len = 0;
            assert_int_equal(api_get(tr, key, L(key), 0, &present, buf, sizeof buf - 1, &len), 0);
            int got = present ? (buf[len] = 0, atoi(buf)) : -1;
            if (got != g_workers[i].values[k])
                fail_msg("final: thread %d key %d = %d want %d", i, k, got, g_workers[i].values[k]);
        }
    }
    uint8_t c[8];
    int present = 0, len = 0;
    assert_int_equal(api_get(tr, counter, L(counter), 0, &present, c, 8, &len), 0);
    assert_int_equal(len, 8);
    uint64_t total = 0;
    for (int i = 7; i >= 0; i--)
        total = (total << 8) | c[i];
    assert_int_equal(total, THREADS * TXNS);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_disjoint_keys_and_counter),
    };
    return cmocka_run_group_tests_name("api_threads", tests, group_setup, group_teardown);
}
