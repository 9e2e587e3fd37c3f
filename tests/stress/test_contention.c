/* Contention and the read-version boundary of conflict checks.
 *
 * test_transfers: NT threads move money between NA accounts (read two, write both, in a
 * retry loop with fdb_transaction_on_error); a checker thread sums every account in one
 * transaction again and again. The total never changes, and conflicts (1020) happened.
 *
 * test_conflict_boundary: FoundationDB's rule (fdbserver/Resolver / SkipList conflict
 * check): a transaction with read version R conflicts with a committed write at version
 * W to a key it read iff W > R. So with a write to K committed at C:
 *   read version C-1 (the write is at R+1): conflict, 1020;
 *   read version C   (the write is at R):   no conflict;
 *   read version C-1, but the read was a snapshot read (no read conflict range): commits.
 * A resolver that started checking at R+1 (W > R+1) would let the first one commit. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "stress_env.h"

#define NA 8
#define NT 8
#define PER 150
#define START 1000

static int64_t g_conflicts, g_commits, g_checks;
static int g_stop, g_bad;
static char g_bad_msg[200];

static void acct_key(char *k, int i)
{
    snprintf(k, 16, "acct/%02d", i);
}

static int64_t decode(const uint8_t *v, int vl)
{
    int64_t x = 0;
    if (vl == 8)
        memcpy(&x, v, 8);
    return x;
}

static fdb_error_t get_i64(FDBTransaction *tr, const char *k, int snapshot, int64_t *out)
{
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)k, (int)strlen(k), snapshot);
    fdb_error_t e = st_wait(f);
    if (!e) {
        fdb_bool_t present;
        const uint8_t *v;
        int vl;
        e = fdb_future_get_value(f, &present, &v, &vl);
        *out = present ? decode(v, vl) : -1;
    }
    fdb_future_destroy(f);
    return e;
}

static fdb_error_t retry(FDBTransaction *tr, fdb_error_t e)
{
    FDBFuture *f = fdb_transaction_on_error(tr, e);
    fdb_error_t r = st_wait(f);
    fdb_future_destroy(f);
    return r;
}

static void *transfer_thread(void *arg)
{
    uint64_t rng = 0x12345u + (uint64_t)(intptr_t)arg * 7919u;
    FDBTransaction *tr;
    if (fdb_database_create_transaction(g_st.db, &tr))
        return NULL;
    for (int n = 0; n < PER; n++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        int a = (int)(rng % NA), b = (int)((rng >> 8) % (NA - 1));
        if (b >= a)
            b++;
        int64_t amount = (int64_t)((rng >> 16) % 50);
        for (;;) {
            char ka[16], kb[16];
            acct_key(ka, a);
            acct_key(kb, b);
            int64_t va, vb;
            fdb_error_t e = get_i64(tr, ka, 0, &va);
            if (!e)
                e = get_i64(tr, kb, 0, &vb);
            if (!e) {
                va -= amount;
                vb += amount;
                fdb_transaction_set(tr, (const uint8_t *)ka, (int)strlen(ka), (const uint8_t *)&va, 8);
                fdb_transaction_set(tr, (const uint8_t *)kb, (int)strlen(kb), (const uint8_t *)&vb, 8);
                FDBFuture *c = fdb_transaction_commit(tr);
                e = st_wait(c);
                fdb_future_destroy(c);
            }
            if (!e) {
                __atomic_add_fetch(&g_commits, 1, __ATOMIC_SEQ_CST);
                fdb_transaction_reset(tr);
                break;
            }
            if (e == 1020)
                __atomic_add_fetch(&g_conflicts, 1, __ATOMIC_SEQ_CST);
            if (retry(tr, e)) {
                __atomic_store_n(&g_bad, 1, __ATOMIC_SEQ_CST);
                snprintf(g_bad_msg, sizeof g_bad_msg, "on_error(%d) failed", e);
                fdb_transaction_destroy(tr);
                return NULL;
            }
        }
    }
    fdb_transaction_destroy(tr);
    return NULL;
}

static fdb_error_t sum_accounts(int64_t *sum)
{
    FDBTransaction *tr;
    if (fdb_database_create_transaction(g_st.db, &tr))
        return 1000;
    fdb_error_t e;
    for (;;) {
        *sum = 0;
        e = 0;
        for (int i = 0; i < NA && !e; i++) {
            char k[16];
            acct_key(k, i);
            int64_t v;
            e = get_i64(tr, k, 0, &v);
            *sum += v;
        }
        if (!e)
            break;
        if ((e = retry(tr, e)) != 0)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

static void *checker_thread(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&g_stop, __ATOMIC_SEQ_CST)) {
        int64_t sum;
        fdb_error_t e = sum_accounts(&sum);
        if (e || sum != (int64_t)NA * START) {
            __atomic_store_n(&g_bad, 1, __ATOMIC_SEQ_CST);
            snprintf(g_bad_msg, sizeof g_bad_msg, "periodic check: error %d, total %lld (expected %lld)", e,
                     (long long)sum, (long long)NA * START);
            return NULL;
        }
        __atomic_add_fetch(&g_checks, 1, __ATOMIC_SEQ_CST);
        struct timespec ts = { 0, 5000000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void commit_ok(FDBTransaction *tr)
{
    FDBFuture *c = fdb_transaction_commit(tr);
    assert_int_equal(st_wait(c), 0);
    fdb_future_destroy(c);
}

static void test_transfers(void **state)
{
    (void)state;
    double t0 = st_now();
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_st.db, &tr), 0);
    for (int i = 0; i < NA; i++) {
        char k[16];
        int64_t v = START;
        acct_key(k, i);
        fdb_transaction_set(tr, (const uint8_t *)k, (int)strlen(k), (const uint8_t *)&v, 8);
    }
    commit_ok(tr);
    fdb_transaction_destroy(tr);

    pthread_t th[NT], chk;
    assert_int_equal(pthread_create(&chk, NULL, checker_thread, NULL), 0);
    for (int t = 0; t < NT; t++)
        assert_int_equal(pthread_create(&th[t], NULL, transfer_thread, (void *)(intptr_t)t), 0);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&g_stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(chk, NULL);
    if (g_bad)
        fail_msg("%s", g_bad_msg);
    int64_t sum;
    assert_int_equal(sum_accounts(&sum), 0);
    assert_int_equal(sum, (int64_t)NA * START);
    print_message("%lld transfers committed, %lld conflicts retried, %lld periodic total checks, %.1f s\n",
                  (long long)g_commits, (long long)g_conflicts, (long long)g_checks, st_now() - t0);
    assert_int_equal(g_commits, NT * PER);
    assert_true(g_conflicts > 0); /* there was contention */
    assert_true(g_checks > 0);
}

/* A transaction at read version rv reads K (snapshot or not), writes Z, commits. */
static fdb_error_t read_then_commit(int64_t rv, int snapshot, int64_t *seen)
{
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_st.db, &tr), 0);
    fdb_transaction_set_read_version(tr, rv);
    fdb_error_t e = get_i64(tr, "bound/K", snapshot, seen);
    assert_int_equal(e, 0);
    int64_t one = 1;
    fdb_transaction_set(tr, (const uint8_t *)"bound/Z", 7, (const uint8_t *)&one, 8);
    FDBFuture *c = fdb_transaction_commit(tr);
    e = st_wait(c);
    fdb_future_destroy(c);
    fdb_transaction_destroy(tr);
    return e;
}

static void test_conflict_boundary(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        /* the write to K, committed at C */
        FDBTransaction *tr;
        assert_int_equal(fdb_database_create_transaction(g_st.db, &tr), 0);
        int64_t v = 100 + round;
        fdb_transaction_set(tr, (const uint8_t *)"bound/K", 7, (const uint8_t *)&v, 8);
        commit_ok(tr);
        int64_t c;
        assert_int_equal(fdb_transaction_get_committed_version(tr, &c), 0);
        fdb_transaction_destroy(tr);
        int64_t seen;
        /* read at C-1: sees the old value, and the write at C = R+1 is a conflict */
        assert_int_equal(read_then_commit(c - 1, 0, &seen), 1020);
        assert_true(seen != v);
        /* read at C: sees the write, which is at R: no conflict */
        assert_int_equal(read_then_commit(c, 0, &seen), 0);
        assert_int_equal(seen, v);
        /* read at C-1 without a read conflict range: commits */
        assert_int_equal(read_then_commit(c - 1, 1, &seen), 0);
        assert_true(seen != v);
    }
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
        cmocka_unit_test(test_conflict_boundary),
        cmocka_unit_test(test_transfers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
