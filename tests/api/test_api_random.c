/* A randomized test (fixed seeds) of one client against a reference model of FoundationDB
 * semantics: a sorted map of committed data plus the transaction's pending view (read-your-
 * writes). Random set / clear / clear_range / atomic ops / get / get_range / commit / reset;
 * every read is compared with the model. Range reads follow the 'more' flag the way an
 * application does.
 *
 * A second model runs in a tenant, the only data there, with what FoundationDB's binding
 * tester found the first one missed: key selectors of any key, orEqual and offset (before
 * the tenant's first key and past its last, as get_key and as both ends of range reads,
 * forward and reverse, with limits, with and without read-your-writes), several
 * get_versionstamp futures of one transaction (all get the same stamp), and invalid
 * arguments with libfdb_c's error and its timing: negative range limits fail at the call
 * (range_limits_invalid), a bad set_read_version fails the next operation (version_invalid,
 * or read_version_already_set once the transaction has a read version) until a reset. */
#include "api_helpers.h"
#include "tenant_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--storage-servers", "2", "--shards", "t/r1/1/k10,t/r1/1/k25,t/r2/2/k20", "--tenant-mode",
                           "optional", NULL };
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


/* ---------- in a tenant: selectors at its edges, repeated futures, invalid arguments ---------- */

static int present_keys(const model *m, int *order)
{
    int n = 0;
    for (int i = 0; i < NKEYS; i++)
        if (m->v[i].present)
            order[n++] = i;
    return n;
}

/* A random selector key: "", "a", one of the keys, a key + "\x00", "z", "\xfe" or "\xff". */
static int rand_sel_key(char *out)
{
    int r = (int)(rnd() % 10);
    if (r == 0)
        return 0;
    if (r == 1)
        return snprintf(out, 8, "a");
    if (r == 2)
        return snprintf(out, 8, "z");
    if (r == 3) {
        out[0] = (char)0xfe;
        return 1;
    }
    if (r == 4) {
        out[0] = (char)0xff;
        return 1;
    }
    int n = snprintf(out, 8, "k%02d", (int)(rnd() % NKEYS));
    if (r == 5)
        out[n++] = 0;
    return n;
}

/* The selector (key, or_equal, offset) over the present keys (order, n): the index of the
 * key it names among them, -1 before the first (""), n past the last ("\xff"). Keys compare
 * bytewise, then by length. */
static int sel_resolve_bytes(const char *key, int kl, int or_equal, int offset, const int *order, int n)
{
    int base = -1;
    for (int i = 0; i < n; i++) {
        char k[8];
        int l = snprintf(k, sizeof k, "k%02d", order[i]);
        int c = memcmp(k, key, (size_t)(l < kl ? l : kl));
        if (c == 0)
            c = l - kl;
        if (c < 0 || (or_equal && c == 0))
            base = i;
    }
    long r = (long)base + offset;
    return r < 0 ? -1 : r >= n ? n : (int)r;
}

/* get_key of a random selector against the model */
static fdb_error_t check_get_key(FDBTransaction *tr, const model *m, unsigned seed, int op)
{
    char sk[8];
    int sl = rand_sel_key(sk);
    int oe = (int)(rnd() % 2), off = (int)(rnd() % 9) - 4;
    int order[NKEYS];
    int n = present_keys(m, order);
    int idx = sel_resolve_bytes(sk, sl, oe, off, order, n);
    FDBFuture *f = fdb_transaction_get_key(tr, (const uint8_t *)sk, sl, oe, off, 0);
    fdb_error_t e = api_wait_ms(f, 10000);
    if (e == API_TIMEOUT)
        fail_msg("seed %u op %d: get_key hangs", seed, op);
    if (!e) {
        const uint8_t *k;
        int kl;
        assert_int_equal(fdb_future_get_key(f, &k, &kl), 0);
        char want[8];
        int wl = idx < 0 ? 0 : idx >= n ? 1 : snprintf(want, sizeof want, "k%02d", order[idx]);
        if (idx >= n)
            want[0] = (char)0xff;
        if (kl != wl || memcmp(k, want, (size_t)wl))
            fail_msg("seed %u op %d: get_key(%d bytes, %d, %d) got %.*s want %.*s", seed, op, sl, oe, off, kl,
                     (const char *)k, wl, want);
    }
    fdb_future_destroy(f);
    return e;
}

/* a range read of two random selectors, following `more`, against the model */
static fdb_error_t check_sel_range(FDBTransaction *tr, const model *m, unsigned seed, int op, bool edge)
{
    char bk[8], ek[8];
    int bl = rand_sel_key(bk), el = rand_sel_key(ek);
    int bo = (int)(rnd() % 2), boff = (int)(rnd() % 9) - 3, eo = (int)(rnd() % 2), eoff = (int)(rnd() % 9) - 3;
    int reverse = (int)(rnd() % 2), limit = rnd() % 3 ? 0 : 1 + (int)(rnd() % 4);
    if (edge) {
        /* from a few keys before the tenant's end to past its end, reverse: the read-your-
         * writes path must learn the tenant's end from the storage servers */
        bk[0] = (char)0xfe;
        bl = 1;
        bo = 0;
        boff = -(int)(rnd() % 5);
        el = snprintf(ek, sizeof ek, "k%02d", NKEYS - 1 - (int)(rnd() % 3));
        eo = (int)(rnd() % 2);
        eoff = 2 + (int)(rnd() % 4);
        reverse = 1;
    }
    int snapshot = (int)(rnd() % 4 == 0);
    static const int sel_modes[] = { FDB_STREAMING_MODE_WANT_ALL, FDB_STREAMING_MODE_ITERATOR, FDB_STREAMING_MODE_SMALL };
    int mode = sel_modes[rnd() % 3];
    int order[NKEYS];
    int n = present_keys(m, order);
    int ib = sel_resolve_bytes(bk, bl, bo, boff, order, n), ie = sel_resolve_bytes(ek, el, eo, eoff, order, n);
    if (ib < 0)
        ib = 0;
    if (ie < 0)
        ie = 0;
    int want[NKEYS], nw = 0;
    for (int i = reverse ? ie - 1 : ib; reverse ? i >= ib : i < ie; i += reverse ? -1 : 1)
        want[nw++] = order[i];
    if (limit && nw > limit)
        nw = limit;
    uint8_t cb[8], ce[8];
    memcpy(cb, bk, (size_t)bl);
    memcpy(ce, ek, (size_t)el);
    int got = 0, left = limit;
    for (int iter = 1; iter < 200; iter++) {
        FDBFuture *f = fdb_transaction_get_range(tr, cb, bl, bo, boff, ce, el, eo, eoff, left, 0,
                                                 (FDBStreamingMode)mode, iter, snapshot, reverse);
        fdb_error_t e = api_wait_ms(f, 10000);
        if (e == API_TIMEOUT)
            fail_msg("seed %u op %d: selector range read hangs", seed, op);
        if (e) {
            fdb_future_destroy(f);
            return e;
        }
        const FDBKeyValue *kv;
        int nk;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &nk, &more), 0);
        for (int i = 0; i < nk; i++, got++) {
            char wk[8];
            int wl = got < nw ? snprintf(wk, sizeof wk, "k%02d", want[got]) : 0;
            if (got >= nw || kv[i].key_length != wl || memcmp(kv[i].key, wk, (size_t)wl) ||
                !vals_equal(&m->v[want[got]], 1, kv[i].value, kv[i].value_length))
                fail_msg("seed %u op %d: selector range (%d,%d,%d)-(%d,%d,%d) rev %d limit %d: row %d is %.*s", seed,
                         op, bl, bo, boff, el, eo, eoff, reverse, limit, got, kv[i].key_length,
                         (const char *)kv[i].key);
        }
        if (limit) {
            left -= nk;
            if (left <= 0)
                more = 0;
        }
        if (!more || nk == 0) {
            fdb_future_destroy(f);
            break;
        }
        const FDBKeyValue *last = &kv[nk - 1];
        if (!reverse) {
            memcpy(cb, last->key, (size_t)last->key_length);
            bl = last->key_length;
            bo = 1;
            boff = 1;
        } else {
            memcpy(ce, last->key, (size_t)last->key_length);
            el = last->key_length;
            eo = 0;
            eoff = 1;
        }
        fdb_future_destroy(f);
    }
    if (got != nw)
        fail_msg("seed %u op %d: selector range: %d rows, want %d", seed, op, got, nw);
    return 0;
}

static void run_tenant_random(unsigned seed, int nops, const char *tenant_name)
{
    g_seed = seed;
    int64_t id;
    assert_int_equal(tf_create_tenant(g_env.db, tenant_name, &id), 0);
    FDBTenant *t = NULL;
    assert_int_equal(fdb_database_open_tenant(g_env.db, S(tenant_name), L(tenant_name), &t), 0);
    model committed, pending;
    memset(&committed, 0, sizeof committed);
    pending = committed;
    FDBTransaction *tr = NULL;
    int ryw_off = 0, has_rv = 0, writes = 0, ops_in_tx = 0;
    FDBFuture *vs[3];
    int nvs = 0;
    int counts[8] = { 0 };
#define NEW_TR()                                                                                         \
    do {                                                                                                 \
        if (tr)                                                                                          \
            fdb_transaction_destroy(tr);                                                                 \
        assert_int_equal(fdb_tenant_create_transaction(t, &tr), 0);                                      \
        ryw_off = rnd() % 5 == 0;                                                                        \
        if (ryw_off)                                                                                     \
            assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0); \
        pending = committed;                                                                             \
        has_rv = writes = ops_in_tx = 0;                                                                 \
        for (int i_ = 0; i_ < nvs; i_++)                                                                 \
            fdb_future_destroy(vs[i_]);                                                                  \
        nvs = 0;                                                                                         \
    } while (0)
    NEW_TR();
    for (int op = 0; op < nops; op++) {
        int r = (int)(rnd() % 100);
        char key[8];
        int ki = (int)(rnd() % NKEYS);
        snprintf(key, sizeof key, "k%02d", ki);
        fdb_error_t e = 0;
        /* without read-your-writes the reads see the committed data only */
        const model *view = ryw_off ? &committed : &pending;
        if (r < 20) {
            uint8_t v[4];
            int n = 1 + (int)(rnd() % 4);
            for (int i = 0; i < n; i++)
                v[i] = (uint8_t)('a' + rnd() % 4);
            fdb_transaction_set(tr, S(key), L(key), v, n);
            pending.v[ki].present = 1;
            pending.v[ki].len = n;
            memcpy(pending.v[ki].b, v, (size_t)n);
            writes++;
        } else if (r < 28) {
            int kj = ki + (int)(rnd() % 10);
            if (kj > NKEYS)
                kj = NKEYS;
            char ek[8];
            snprintf(ek, sizeof ek, "k%02d", kj);
            fdb_transaction_clear_range(tr, S(key), L(key), S(ek), L(ek));
            for (int i = ki; i < kj; i++)
                pending.v[i].present = 0;
            writes += kj > ki; /* an empty range is no mutation */
        } else if (r < 43) {
            e = check_sel_range(tr, view, seed, op, false);
            has_rv = 1;
            counts[0]++;
        } else if (r < 46 && !ops_in_tx) { /* a fresh transaction's first read at the tenant's end */
            e = check_sel_range(tr, view, seed, op, true);
            has_rv = 1;
            counts[6]++;
        } else if (r < 53) {
            e = check_get_key(tr, view, seed, op);
            has_rv = 1;
            counts[1]++;
        } else if (r < 60) { /* another get_versionstamp future */
            if (nvs < 3)
                vs[nvs++] = fdb_transaction_get_versionstamp(tr);
            counts[2]++;
        } else if (r < 65) { /* a negative range limit: at the call, nothing else changes */
            int lim = -2 - (int)(rnd() % 4);
            FDBFuture *f = fdb_transaction_get_range(tr, S("k"), 1, 0, 1, S("l"), 1, 0, 1, lim, 0,
                                                     FDB_STREAMING_MODE_WANT_ALL, 0, 0, (int)(rnd() % 2));
            assert_true(fdb_future_is_ready(f));
            assert_int_equal(fdb_future_get_error(f), 2012);
            fdb_future_destroy(f);
            counts[3]++;
        } else if (r < 69) { /* a bad set_read_version: the next operation fails, until a reset */
            int64_t v = rnd() % 2 ? 0 : -(int64_t)(1 + rnd() % 1000);
            if (rnd() % 2) { /* the transaction has a read version: already set comes first */
                assert_int_equal(api_wait_destroy(fdb_transaction_get_read_version(tr)), 0);
                has_rv = 2;
            }
            fdb_transaction_set_read_version(tr, v);
            int present, len;
            char buf[8];
            /* after reads the read-your-writes answered alone there may be no read version */
            fdb_error_t got = api_get(tr, S(key), L(key), 0, &present, buf, sizeof buf, &len);
            if (has_rv == 2 || !has_rv)
                assert_int_equal(got, has_rv ? 2010 : 2011);
            else
                assert_true(got == 2010 || got == 2011);
            assert_int_equal(api_wait_destroy(fdb_transaction_get_read_version(tr)), got);
            for (int i = 0; i < nvs; i++)
                fdb_future_destroy(vs[i]);
            nvs = 0;
            fdb_transaction_reset(tr);
            if (ryw_off)
                assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
            pending = committed;
            has_rv = writes = ops_in_tx = 0;
            counts[4]++;
            continue;
        } else if (r < 90) {
            int present = 0, len = 0;
            uint8_t buf[VMAX + 1];
            e = api_get(tr, key, L(key), (int)(rnd() % 4 == 0), &present, buf, sizeof buf, &len);
            if (!e && !vals_equal(&view->v[ki], present, buf, len))
                fail_msg("seed %u op %d: tenant get k%02d differs", seed, op, ki);
            has_rv = 1;
        } else {
            e = api_commit(tr);
            if (!e) {
                /* every versionstamp future: the same 10 bytes, or no_commit_version when
                 * nothing was written */
                uint8_t first[10];
                for (int i = 0; i < nvs; i++) {
                    fdb_error_t ve = api_wait_ms(vs[i], 10000);
                    if (!writes) {
                        assert_int_equal(ve, 2021);
                        continue;
                    }
                    assert_int_equal(ve, 0);
                    const uint8_t *k;
                    int kl;
                    assert_int_equal(fdb_future_get_key(vs[i], &k, &kl), 0);
                    assert_int_equal(kl, 10);
                    if (i == 0)
                        memcpy(first, k, 10);
                    else
                        assert_memory_equal(first, k, 10);
                }
                committed = pending;
                counts[5]++;
                NEW_TR();
                continue;
            }
        }
        if (e) {
            if (e != 1007 && e != 1020)
                fail_msg("seed %u op %d: unexpected error %d", seed, op, e);
            assert_int_equal(api_on_error(tr, e), 0);
            NEW_TR();
            continue;
        }
        if (++ops_in_tx > 40) {
            e = api_commit(tr);
            if (!e)
                committed = pending;
            NEW_TR();
        }
    }
    fdb_transaction_destroy(tr);
    for (int i = 0; i < nvs; i++)
        fdb_future_destroy(vs[i]);
    fdb_tenant_destroy(t);
#undef NEW_TR
    print_message("tenant seed %u: %d ops: %d selector ranges (%d at the end), %d get_key, %d versionstamp futures, "
                  "%d bad limits, %d bad read versions, %d commits\n",
                  seed, nops, counts[0], counts[6], counts[1], counts[2], counts[3], counts[4], counts[5]);
}

static void test_tenant_selectors_seed_3(void **state)
{
    (void)state;
    run_tenant_random(3, 2500, "rand-t3");
}

static void test_tenant_selectors_seed_4(void **state)
{
    (void)state;
    run_tenant_random(4, 2500, "rand-t4");
}

/* ---------- the model at random API versions, a child process each ---------- */

static const char *g_self;

static int child_main(int version, unsigned seed);

static void test_random_api_versions(void **state)
{
    (void)state;
    /* in this process 730 is selected: a second selection fails at the call */
    assert_int_equal(fdb_select_api_version_impl(730, FDB_API_VERSION), 2201);
    assert_int_equal(fdb_get_max_api_version(), 730);
    g_seed = 77;
    int versions[8] = { 13, 730 };
    for (int i = 2; i < 8; i++)
        versions[i] = 13 + (int)(rnd() % (730 - 13 + 1));
    for (int i = 0; i < 8; i++) {
        char vs[16], ss[16];
        snprintf(vs, sizeof vs, "%d", versions[i]);
        snprintf(ss, sizeof ss, "%u", 100u + (unsigned)i);
        fflush(stdout);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            execl("/proc/self/exe", g_self, "--api-version-child", vs, ss, (char *)NULL);
            _exit(127);
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("API version %d (seed %s): child status %d", versions[i], ss, st);
    }
}

static fdb_error_t g_child_version;
static unsigned g_child_seed;

static void test_child_version(void **state)
{
    (void)state;
    char name[32];
    snprintf(name, sizeof name, "v%d", (int)g_child_version);
    run_random(g_child_seed, 300, name);
}

static int child_main(int version, unsigned seed)
{
    /* runtime above header: api_version_invalid (2202); header above 730 or runtime below 13:
     * api_version_not_supported; none of them selects anything */
    if (fdb_select_api_version_impl(FDB_API_VERSION + 1, FDB_API_VERSION) != 2202 ||
        fdb_select_api_version_impl(version, FDB_API_VERSION + 10) != 2203 ||
        fdb_select_api_version_impl(12, FDB_API_VERSION) != 2203) {
        fprintf(stderr, "API version %d: wrong selection errors\n", version);
        return 1;
    }
    fdb_error_t e = fdb_select_api_version_impl(version, FDB_API_VERSION);
    if (e || fdb_select_api_version_impl(version, FDB_API_VERSION) != 2201) {
        fprintf(stderr, "API version %d: select %d\n", version, e);
        return 1;
    }
    g_child_version = version;
    g_child_seed = seed;
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_child_version) };
    char gname[48];
    snprintf(gname, sizeof gname, "api_random_version_%d", version);
    return cmocka_run_group_tests_name(gname, tests, group_setup, group_teardown) ? 1 : 0;
}

int main(int argc, char **argv)
{
    g_self = argv[0];
    if (argc == 4 && !strcmp(argv[1], "--api-version-child"))
        return child_main(atoi(argv[2]), (unsigned)strtoul(argv[3], NULL, 10));
    const struct CMUnitTest tests[] = {
        /* the tenants first: nothing is stored after them yet (the raw keys of the other
         * seeds sort after every tenant prefix) */
        cmocka_unit_test(test_tenant_selectors_seed_3),
        cmocka_unit_test(test_tenant_selectors_seed_4),
        cmocka_unit_test(test_random_seed_1),
        cmocka_unit_test(test_random_seed_2),
        cmocka_unit_test(test_random_api_versions),
    };
    return cmocka_run_group_tests_name("api_random", tests, group_setup, group_teardown);
}
