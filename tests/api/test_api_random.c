/* A randomized test (fixed seeds) of one client against a reference model of FoundationDB
 * semantics: a sorted map of committed data plus the transaction's pending view (read-your-
 * writes). Random set / clear / clear_range / atomic ops / get / get_range / commit / reset;
 * every read is compared with the model. Range reads follow the 'more' flag the way an
 * application does. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--storage-servers", "2", "--shards", "t/r1/1/k10,t/r1/1/k25,t/r2/2/k20", NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

#define NKEYS 40
#define VMAX 48

typedef struct mval {
    int present;
    int len;
    uint8_t b[VMAX];
} mval;

typedef struct model {
    mval v[NKEYS]; /* key i = prefix + "k%02d" */
} model;

static unsigned g_seed;
static unsigned rnd(void)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return (g_seed >> 16) & 0x7fff;
}

static void mkey(char *out, size_t cap, const char *p, int i)
{
    snprintf(out, cap, "%sk%02d", p, i);
}

static void apply_atomic(mval *e, int op, const uint8_t *p, int n)
{
    switch (op) {
    case FDB_MUTATION_TYPE_ADD: {
        if (!e->present || !e->len || !n) {
            e->present = 1;
            e->len = n;
            memcpy(e->b, p, (size_t)n);
            return;
        }
        int carry = 0;
        uint8_t r[VMAX];
        for (int i = 0; i < n; i++) {
            int s = (i < e->len ? e->b[i] : 0) + p[i] + carry;
            r[i] = (uint8_t)s;
            carry = s >> 8;
        }
        memcpy(e->b, r, (size_t)n);
        e->len = n;
        return;
    }
    case FDB_MUTATION_TYPE_BYTE_MAX: {
        if (e->present) {
            int m = e->len < n ? e->len : n;
            int c = memcmp(e->b, p, (size_t)m);
            if (c > 0 || (c == 0 && e->len > n))
                return;
        }
        e->present = 1;
        e->len = n;
        memcpy(e->b, p, (size_t)n);
        return;
    }
    case FDB_MUTATION_TYPE_APPEND_IF_FITS: {
        if (!e->present || !e->len) {
            e->present = 1;
            e->len = n;
            memcpy(e->b, p, (size_t)n);
            return;
        }
        if (e->len + n > VMAX) /* the test keeps values small: model refuses to grow, so do we */
            return;
        memcpy(e->b + e->len, p, (size_t)n);
        e->len += n;
        return;
    }
    case FDB_MUTATION_TYPE_COMPARE_AND_CLEAR:
        if (!e->present || (e->len == n && !memcmp(e->b, p, (size_t)n)))
            e->present = 0;
        return;
    }
}

static int vals_equal(const mval *m, int present, const uint8_t *b, int len)
{
    if (m->present != present)
        return 0;
    return !present || (m->len == len && !memcmp(m->b, b, (size_t)len));
}

/* reads [bi, ei) following 'more'; compares with the model's view; returns 0 if equal */
static int check_range(FDBTransaction *tr, const char *p, const model *m, int bi, int ei, int reverse, int limit,
                       int mode, int snapshot, fdb_error_t *err)
{
    char bk[160], ek[160];
    mkey(bk, sizeof bk, p, bi);
    mkey(ek, sizeof ek, p, ei);
    int bl = L(bk), el = L(ek), bo = 0, boff = 1, eo = 0, eoff = 1;
    int want[NKEYS], nw = 0;
    for (int i = reverse ? ei - 1 : bi; reverse ? i >= bi : i < ei; i += reverse ? -1 : 1)
        if (m->v[i].present)
            want[nw++] = i;
    if (limit && nw > limit)
        nw = limit;
    int got = 0, left = limit;
    for (int iter = 1; iter < 1000; iter++) {
        FDBFuture *f = fdb_transaction_get_range(tr, S(bk), bl, bo, boff, S(ek), el, eo, eoff, left, 0,
                                                 (FDBStreamingMode)mode, iter, snapshot, reverse);
        *err = api_wait(f);
        if (*err) {
            fdb_future_destroy(f);
            return 0;
        }
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        fdb_future_get_keyvalue_array(f, &kv, &n, &more);
        for (int i = 0; i < n; i++, got++) {
            char wk[160];
            if (got >= nw) {
                print_message("range: extra row %.*s\n", kv[i].key_length, (const char *)kv[i].key);
                fdb_future_destroy(f);
                return 1;
            }
            mkey(wk, sizeof wk, p, want[got]);
            if (kv[i].key_length != L(wk) || memcmp(kv[i].key, wk, (size_t)L(wk)) ||
                !vals_equal(&m->v[want[got]], 1, kv[i].value, kv[i].value_length)) {
                print_message("range row %d: got %.*s want %s\n", got, kv[i].key_length, (const char *)kv[i].key, wk);
                fdb_future_destroy(f);
                return 1;
            }
        }
        if (limit) {
            left -= n;
            if (left <= 0)
                more = 0;
        }
        if (!more || n == 0) {
            fdb_future_destroy(f);
            break;
        }
        const FDBKeyValue *last = &kv[n - 1];
        if (!reverse) {
            memcpy(bk, last->key, (size_t)last->key_length);
            bl = last->key_length;
            bo = 1;
            boff = 1;
        } else {
            memcpy(ek, last->key, (size_t)last->key_length);
            el = last->key_length;
            eo = 0;
            eoff = 1;
        }
        fdb_future_destroy(f);
    }
    if (got != nw) {
        print_message("range [%d,%d) rev=%d limit=%d: %d rows, want %d\n", bi, ei, reverse, limit, got, nw);
        return 1;
    }
    return 0;
}

static void run_random(unsigned seed, int nops, const char *name)
{
    g_seed = seed;
    char p[128];
    api_prefix(p, sizeof p, name);
    model committed, pending;
    memset(&committed, 0, sizeof committed);
    pending = committed;
    FDBTransaction *tr = api_tr();
    int ops_in_tx = 0, commits = 0, reads = 0;
    static const int modes[] = { FDB_STREAMING_MODE_WANT_ALL, FDB_STREAMING_MODE_ITERATOR, FDB_STREAMING_MODE_EXACT,
                                 FDB_STREAMING_MODE_SMALL, FDB_STREAMING_MODE_SERIAL };
    for (int op = 0; op < nops; op++) {
        int r = (int)(rnd() % 100);
        char key[160];
        int ki = (int)(rnd() % NKEYS);
        mkey(key, sizeof key, p, ki);
        fdb_error_t e = 0;
        if (r < 25) { /* set */
            uint8_t v[8];
            int n = 1 + (int)(rnd() % 8);
            for (int i = 0; i < n; i++)
                v[i] = (uint8_t)('a' + rnd() % 4);
            fdb_transaction_set(tr, S(key), L(key), v, n);
            pending.v[ki].present = 1;
            pending.v[ki].len = n;
            memcpy(pending.v[ki].b, v, (size_t)n);
        } else if (r < 32) { /* clear */
            fdb_transaction_clear(tr, S(key), L(key));
            pending.v[ki].present = 0;
        } else if (r < 37) { /* clear_range */
            int kj = ki + (int)(rnd() % 8);
            if (kj > NKEYS)
                kj = NKEYS;
            char ek[160];
            mkey(ek, sizeof ek, p, kj);
            fdb_transaction_clear_range(tr, S(key), L(key), S(ek), L(ek));
            for (int i = ki; i < kj; i++)
                pending.v[i].present = 0;
        } else if (r < 50) { /* atomic */
            static const int aops[] = { FDB_MUTATION_TYPE_ADD, FDB_MUTATION_TYPE_BYTE_MAX,
                                        FDB_MUTATION_TYPE_APPEND_IF_FITS, FDB_MUTATION_TYPE_COMPARE_AND_CLEAR };
            int aop = aops[rnd() % 4];
            uint8_t v[4];
            int n = aop == FDB_MUTATION_TYPE_ADD ? 4 : 1 + (int)(rnd() % 3);
            for (int i = 0; i < n; i++)
                v[i] = (uint8_t)(aop == FDB_MUTATION_TYPE_COMPARE_AND_CLEAR ? 'a' + rnd() % 2 : rnd() % 256);
            if (aop == FDB_MUTATION_TYPE_APPEND_IF_FITS && pending.v[ki].present && pending.v[ki].len + n > 40)
                continue; /* keep values small (no 100,000-byte limit cases here) */
            fdb_transaction_atomic_op(tr, S(key), L(key), v, n, (FDBMutationType)aop);
            apply_atomic(&pending.v[ki], aop, v, n);
        } else if (r < 72) { /* get */
            int snapshot = (int)(rnd() % 4 == 0);
            int present = 0, len = 0;
            uint8_t buf[VMAX + 1];
            e = api_get(tr, key, L(key), snapshot, &present, buf, sizeof buf, &len);
            if (!e && !vals_equal(&pending.v[ki], present, buf, len))
                fail_msg("seed %u op %d: get k%02d: got %s len %d, want %s len %d", seed, op, ki,
                         present ? "present" : "absent", len, pending.v[ki].present ? "present" : "absent",
                         pending.v[ki].len);
            reads++;
        } else if (r < 85) { /* get_range */
            int kj = ki + 1 + (int)(rnd() % 15);
            if (kj > NKEYS)
                kj = NKEYS;
            int reverse = (int)(rnd() % 2);
            int mode = modes[rnd() % 5];
            int limit = mode == FDB_STREAMING_MODE_EXACT || rnd() % 3 == 0 ? 1 + (int)(rnd() % 6) : 0;
            if (check_range(tr, p, &pending, ki, kj, reverse, limit, mode, (int)(rnd() % 4 == 0), &e))
                fail_msg("seed %u op %d: get_range [k%02d, k%02d) reverse %d mode %d limit %d differs", seed, op, ki,
                         kj, reverse, mode, limit);
            reads++;
        } else if (r < 95) { /* commit */
            e = api_commit(tr);
            if (!e) {
                committed = pending;
                commits++;
                fdb_transaction_reset(tr);
                ops_in_tx = 0;
            }
        } else { /* reset */
            fdb_transaction_reset(tr);
            pending = committed;
            ops_in_tx = 0;
        }
        if (e) {
            /* a single client: only a too-old transaction can happen; restart it */
            if (e != 1007)
                fail_msg("seed %u op %d: unexpected error %d", seed, op, e);
            assert_int_equal(api_on_error(tr, e), 0);
            pending = committed;
            ops_in_tx = 0;
        }
        if (++ops_in_tx > 60) { /* keep transactions short */
            assert_int_equal(api_commit(tr), 0);
            committed = pending;
            fdb_transaction_reset(tr);
            ops_in_tx = 0;
        }
    }
    /* finally: the committed model equals the database */
    assert_int_equal(api_commit(tr), 0);
    committed = pending;
    fdb_transaction_reset(tr);
    fdb_error_t e = 0;
    if (check_range(tr, p, &committed, 0, NKEYS, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, &e) || e)
        fail_msg("seed %u: final state differs (error %d)", seed, e);
    fdb_transaction_destroy(tr);
    print_message("seed %u: %d ops, %d commits, %d reads\n", seed, nops, commits, reads);
}

static void test_random_seed_1(void **state)
{
    (void)state;
    /* prefix t/r1/1/ matches the shard boundaries given to the server */
    run_random(1, 2000, "r1");
}

static void test_random_seed_2(void **state)
{
    (void)state;
    run_random(2, 2000, "r2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_seed_1),
        cmocka_unit_test(test_random_seed_2),
    };
    return cmocka_run_group_tests_name("api_random", tests, group_setup, group_teardown);
}
