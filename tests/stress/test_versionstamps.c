/* Versionstamps from many concurrent committers. NT threads share one database
 * (one connection, so the dev server's commit proxy gets many commits per batch and
 * gives them batch indexes 0, 1, 2, ...). Each transaction writes a versionstamped key and
 * a versionstamped value and asks for fdb_transaction_get_versionstamp. Afterwards:
 *   - the 10 bytes the client future returned equal the 10 bytes in the stored key and
 *     in the stored value;
 *   - bytes 0-7 are the committed version, big-endian (fdb_transaction_get_committed_version);
 *   - bytes 8-9 are the batch index, big-endian: with at most NT commits in flight it is
 *     below NT, and within one version the indexes seen are distinct. A little-endian
 *     index (on the server or in the client's future) reads as a multiple of 256;
 *   - batch index != 0 happened (the test insists on it), and all stamps are distinct.
 * FoundationDB's layout: fdbclient/CommitProxyInterface.h CommitID (version, txnBatchId),
 * the stamp is version (8 bytes BE) + batch index (2 bytes BE), see
 * fdbclient/include/fdbclient/Versionstamp.h / ReadYourWrites getVersionstamp. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stress_env.h"

#define NT 16
#define PER 40

typedef struct rec {
    uint8_t fut[10];   /* from fdb_transaction_get_versionstamp */
    int64_t committed; /* fdb_transaction_get_committed_version */
    uint8_t key[10], val[10];
    bool have_key, have_val;
} rec;

static rec g_rec[NT][PER];
static int g_errors;

static void put_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void *committer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < PER; i++) {
        FDBTransaction *tr;
        if (fdb_database_create_transaction(g_st.db, &tr)) {
            __atomic_add_fetch(&g_errors, 1, __ATOMIC_SEQ_CST);
            return NULL;
        }
        for (;;) {
            /* key: "vs/k/" + stamp + "/tt/iii", offset 5 */
            uint8_t key[64];
            int kl = snprintf((char *)key, sizeof key, "vs/k/0123456789/%02d/%03d", t, i);
            put_u32le(key + kl, 5);
            fdb_transaction_atomic_op(tr, key, kl + 4, (const uint8_t *)"x", 1, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
            /* value: "v:" + stamp, offset 2 */
            char vk[32];
            int vkl = snprintf(vk, sizeof vk, "vs/v/%02d/%03d", t, i);
            uint8_t val[16] = "v:0123456789";
            put_u32le(val + 12, 2);
            fdb_transaction_atomic_op(tr, (const uint8_t *)vk, vkl, val, 16, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
            FDBFuture *vs = fdb_transaction_get_versionstamp(tr);
            FDBFuture *c = fdb_transaction_commit(tr);
            fdb_error_t e = st_wait(c);
            fdb_future_destroy(c);
            if (e == 0) {
                e = st_wait(vs);
                const uint8_t *k;
                int len;
                if (e == 0 && fdb_future_get_key(vs, &k, &len) == 0 && len == 10)
                    memcpy(g_rec[t][i].fut, k, 10);
                else
                    __atomic_add_fetch(&g_errors, 1, __ATOMIC_SEQ_CST);
                fdb_transaction_get_committed_version(tr, &g_rec[t][i].committed);
                fdb_future_destroy(vs);
                break;
            }
            fdb_future_destroy(vs);
            FDBFuture *oe = fdb_transaction_on_error(tr, e);
            fdb_error_t e2 = st_wait(oe);
            fdb_future_destroy(oe);
            if (e2) {
                __atomic_add_fetch(&g_errors, 1, __ATOMIC_SEQ_CST);
                break;
            }
        }
        fdb_transaction_destroy(tr);
    }
    return NULL;
}

static void on_key_row(void *ctx, const uint8_t *k, int kl, const uint8_t *v, int vl)
{
    (void)ctx;
    (void)v;
    (void)vl;
    int t, i;
    char tail[16];
    /* "vs/k/" stamp(10) "/tt/iii" */
    assert_int_equal(kl, 5 + 10 + 7);
    snprintf(tail, sizeof tail, "%.*s", 7, (const char *)k + 15);
    assert_int_equal(sscanf(tail, "/%2d/%3d", &t, &i), 2);
    assert_true(t >= 0 && t < NT && i >= 0 && i < PER);
    assert_false(g_rec[t][i].have_key);
    memcpy(g_rec[t][i].key, k + 5, 10);
    g_rec[t][i].have_key = true;
}

static void on_val_row(void *ctx, const uint8_t *k, int kl, const uint8_t *v, int vl)
{
    (void)ctx;
    int t, i;
    char ks[32];
    snprintf(ks, sizeof ks, "%.*s", kl, (const char *)k);
    assert_int_equal(sscanf(ks, "vs/v/%2d/%3d", &t, &i), 2);
    assert_true(t >= 0 && t < NT && i >= 0 && i < PER);
    assert_int_equal(vl, 12); /* the offset is removed */
    assert_memory_equal(v, "v:", 2);
    memcpy(g_rec[t][i].val, v + 2, 10);
    g_rec[t][i].have_val = true;
}

static int cmp_stamp(const void *a, const void *b)
{
    return memcmp(a, b, 10);
}

static void test_versionstamps_concurrent(void **state)
{
    (void)state;
    double t0 = st_now();
    memset(g_rec, 0, sizeof g_rec);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        assert_int_equal(pthread_create(&th[t], NULL, committer, (void *)(intptr_t)t), 0);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    assert_int_equal(g_errors, 0);

    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_st.db, &tr), 0);
    assert_int_equal(st_read_range(tr, "vs/k/", 5, "vs/k0", 5, on_key_row, NULL), 0);
    assert_int_equal(st_read_range(tr, "vs/v/", 5, "vs/v0", 5, on_val_row, NULL), 0);
    fdb_transaction_destroy(tr);

    static uint8_t all[NT * PER][10];
    int nonzero = 0, max_index = 0;
    for (int t = 0; t < NT; t++)
        for (int i = 0; i < PER; i++) {
            rec *r = &g_rec[t][i];
            if (!r->have_key || !r->have_val)
                fail_msg("transaction %d/%d: stored key or value missing", t, i);
            if (memcmp(r->fut, r->key, 10) != 0 || memcmp(r->fut, r->val, 10) != 0)
                fail_msg("transaction %d/%d: versionstamp future %02x%02x..%02x%02x, stored key ..%02x%02x, value "
                         "..%02x%02x",
                         t, i, r->fut[0], r->fut[1], r->fut[8], r->fut[9], r->key[8], r->key[9], r->val[8],
                         r->val[9]);
            int64_t v = 0;
            for (int b = 0; b < 8; b++)
                v = (v << 8) | r->fut[b];
            assert_int_equal(v, r->committed);
            int index = (r->fut[8] << 8) | r->fut[9];
            if (index >= NT)
                fail_msg("transaction %d/%d: batch index %d (bytes %02x %02x) with at most %d commits in flight: "
                         "not big-endian?",
                         t, i, index, r->fut[8], r->fut[9], NT);
            if (index)
                nonzero++;
            if (index > max_index)
                max_index = index;
            memcpy(all[t * PER + i], r->fut, 10);
        }
    /* distinct stamps: no two transactions share (version, index) */
    qsort(all, NT * PER, 10, cmp_stamp);
    for (int j = 1; j < NT * PER; j++)
        assert_true(memcmp(all[j - 1], all[j], 10) < 0);
    /* within one version, the indexes are 0..n-1 (every commit here succeeds) */
    for (int j = 0; j < NT * PER;) {
        int k = j;
        while (k < NT * PER && memcmp(all[k], all[j], 8) == 0)
            k++;
        for (int m = j; m < k; m++)
            assert_int_equal((all[m][8] << 8) | all[m][9], m - j);
        j = k;
    }
    print_message("%d commits from %d threads, %d with batch index != 0 (max %d), %.1f s\n", NT * PER, NT, nonzero,
                  max_index, st_now() - t0);
    assert_true(nonzero > 0);
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
        cmocka_unit_test(test_versionstamps_concurrent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
