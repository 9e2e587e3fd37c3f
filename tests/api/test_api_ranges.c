/* Range reads through fdb_c.h: streaming modes, limits, target_bytes, reverse, the more flag,
 * key selectors for get_key and get_range, ranges across shards on several storage servers,
 * and a 10,000-key range read in a loop. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* shard boundaries inside the s/ and big/ key spaces, spread over 3 storage servers */
static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--storage-servers", "3", "--shards", "big/02500,big/05000,big/07500,s/b,s/m,s/t",
                           NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* ---------------- helpers ---------------- */

/* a key selector as the four get_range arguments */
typedef struct sel {
    const uint8_t *key;
    int key_length;
    int or_equal;
    int offset;
} sel;

#define MAXK 64
typedef struct keyset {
    int n;
    char k[MAXK][160];
} keyset;

static void write_keys(const keyset *ks)
{
    FDBTransaction *tr = api_tr();
    for (;;) {
        for (int i = 0; i < ks->n; i++) {
            char v[80];
            snprintf(v, sizeof v, "v:%s", ks->k[i]);
            fdb_transaction_set(tr, S(ks->k[i]), L(ks->k[i]), S(v), L(v));
        }
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
}

/* prefix + "b", "d", ..., "z": 13 keys */
static void make_odd_keys(keyset *ks, const char *p)
{
    ks->n = 0;
    for (char c = 'b'; c <= 'z'; c += 2)
        snprintf(ks->k[ks->n++], sizeof ks->k[0], "%s%c", p, c);
}

/* the model: resolve a key selector over the sorted keys (all inside the test's space) */
static int resolve(const keyset *ks, const char *key, int or_equal, int offset)
{
    int i = -1; /* index of the last key < key (or <= key) */
    for (int j = 0; j < ks->n; j++) {
        int c = strcmp(ks->k[j], key);
        if (c < 0 || (or_equal && c == 0))
            i = j;
    }
    return i + offset; /* may be -1.. or n.. (outside) */
}

typedef struct rows {
    int n;
    int batches;
    int first_more;
    char k[12000][16];
} rows;

/* Reads [begin, end) (selectors) fully, the way an application does: continue after the last
 * row (forward) or before the first row (reverse) while more. Checks values "v:<key>". */
static void read_all(FDBTransaction *tr, sel b, sel e, int limit, int target_bytes,
                     FDBStreamingMode mode, int reverse, rows *out, char keys[][64], int maxkeys)
{
    uint8_t bk[256], ek[256];
    memcpy(bk, b.key, (size_t)b.key_length);
    memcpy(ek, e.key, (size_t)e.key_length);
    int bl = b.key_length, el = e.key_length, bo = b.or_equal, boff = b.offset, eo = e.or_equal, eoff = e.offset;
    int n = 0;
    out->batches = 0;
    for (int iter = 1;; iter++) {
        assert_true(iter < 20000);
        FDBFuture *f = fdb_transaction_get_range(tr, bk, bl, bo, boff, ek, el, eo, eoff, limit, target_bytes, mode,
                                                 iter, 0, reverse);
        assert_int_equal(api_wait(f), 0);
        const FDBKeyValue *kv;
        int cnt;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &cnt, &more), 0);
        if (out->batches == 0)
            out->first_more = more;
        out->batches++;
        for (int i = 0; i < cnt; i++) {
            assert_true(n < maxkeys);
            assert_true(kv[i].key_length < 64);
            memcpy(keys[n], kv[i].key, (size_t)kv[i].key_length);
            keys[n][kv[i].key_length] = 0;
            char want[80];
            snprintf(want, sizeof want, "v:%s", keys[n]);
            if (kv[i].value_length != L(want) || memcmp(kv[i].value, want, (size_t)kv[i].value_length))
                fail_msg("bad value for %s", keys[n]);
            n++;
        }
        if (limit > 0 && mode == FDB_STREAMING_MODE_EXACT) {
            /* EXACT: one batch of at most limit rows */
            fdb_future_destroy(f);
            break;
        }
        if (!more) {
            fdb_future_destroy(f);
            break;
        }
        assert_true(cnt > 0);
        const FDBKeyValue *last = &kv[cnt - 1];
        if (!reverse) { /* begin = first_greater_than(last) */
            memcpy(bk, last->key, (size_t)last->key_length);
            bl = last->key_length;
            bo = 1;
            boff = 1;
        } else { /* end = first_greater_or_equal(last) */
            memcpy(ek, last->key, (size_t)last->key_length);
            el = last->key_length;
            eo = 0;
            eoff = 1;
        }
        fdb_future_destroy(f);
        if (limit > 0) {
            limit -= cnt;
            if (limit < 0)
                fail_msg("more rows than the limit");
            if (limit == 0)
                break;
        }
    }
    out->n = n;
}

static char g_keys[12000][64];

static char g_ctx[640]; /* what is being checked, for failure messages */

static void expect_keys(int n, const keyset *ks, int from, int to, int reverse)
{
    int want = to > from ? to - from : 0;
    if (n != want) {
        print_message("%s: got %d rows, want %d\n", g_ctx, n, want);
        for (int i = 0; i < n; i++)
            print_message("  %s\n", g_keys[i]);
        fail();
    }
    for (int i = 0; i < n; i++) {
        const char *w = reverse ? ks->k[to - 1 - i] : ks->k[from + i];
        if (strcmp(g_keys[i], w))
            fail_msg("row %d: got %s want %s", i, g_keys[i], w);
    }
}

static rows g_rows;

static void full_range_in_mode(const char *p, const keyset *ks, FDBStreamingMode mode, int limit)
{
    char end[128];
    snprintf(end, sizeof end, "%s\xff", p);
    FDBTransaction *tr = api_tr();
    for (int reverse = 0; reverse <= 1; reverse++) {
        read_all(tr, (sel){ S(p), L(p), 0, 1 }, (sel){ S(end), L(end), 0, 1 }, limit, 0, mode,
                 reverse, &g_rows, g_keys, 12000);
        int want = limit && mode == FDB_STREAMING_MODE_EXACT && limit < ks->n ? limit : ks->n;
        if (!reverse)
            expect_keys(g_rows.n, ks, 0, want, 0);
        else
            expect_keys(g_rows.n, ks, ks->n - want, ks->n, 1);
    }
    fdb_transaction_destroy(tr);
}

/* ---------------- streaming modes ---------------- */

static void streaming_mode_test(const char *name, FDBStreamingMode mode, int limit)
{
    char p[128];
    api_prefix(p, sizeof p, name);
    keyset ks;
    make_odd_keys(&ks, p);
    write_keys(&ks);
    full_range_in_mode(p, &ks, mode, limit);
}

static void test_mode_want_all(void **state)
{
    (void)state;
    streaming_mode_test("want_all", FDB_STREAMING_MODE_WANT_ALL, 0);
}
static void test_mode_iterator(void **state)
{
    (void)state;
    streaming_mode_test("iterator", FDB_STREAMING_MODE_ITERATOR, 0);
}
static void test_mode_exact(void **state)
{
    (void)state;
    streaming_mode_test("exact", FDB_STREAMING_MODE_EXACT, 5);
    streaming_mode_test("exact", FDB_STREAMING_MODE_EXACT, 13);
    streaming_mode_test("exact", FDB_STREAMING_MODE_EXACT, 100);
}
static void test_mode_small(void **state)
{
    (void)state;
    streaming_mode_test("small", FDB_STREAMING_MODE_SMALL, 0);
}
static void test_mode_medium(void **state)
{
    (void)state;
    streaming_mode_test("medium", FDB_STREAMING_MODE_MEDIUM, 0);
}
static void test_mode_large(void **state)
{
    (void)state;
    streaming_mode_test("large", FDB_STREAMING_MODE_LARGE, 0);
}
static void test_mode_serial(void **state)
{
    (void)state;
    streaming_mode_test("serial", FDB_STREAMING_MODE_SERIAL, 0);
}

static void test_exact_without_limit(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("t/"), 2),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("t0"), 2), 0, 0,
                                             FDB_STREAMING_MODE_EXACT, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 2210); /* exact_mode_without_limits */
    fdb_transaction_destroy(tr);
}

static void test_iterator_zero_iteration(void **state)
{
    (void)state;
    /* ITERATOR mode with iteration 0 is invalid (client_invalid_operation) */
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("t/"), 2),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("t0"), 2), 0, 0,
                                             FDB_STREAMING_MODE_ITERATOR, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 2000);
    fdb_transaction_destroy(tr);
}

/* ---------------- limits, target bytes, reverse, more ---------------- */

typedef struct one {
    int n;
    fdb_bool_t more;
    char k[MAXK][160];
    int bytes;
} one;

static void range_once(FDBTransaction *tr, sel b, sel e, int limit, int target_bytes,
                       FDBStreamingMode mode, int reverse, one *o)
{
    FDBFuture *f = fdb_transaction_get_range(tr, b.key, b.key_length, b.or_equal, b.offset, e.key, e.key_length,
                                             e.or_equal, e.offset, limit, target_bytes, mode, 1, 0, reverse);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int cnt;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &cnt, &o->more), 0);
    assert_true(cnt <= MAXK);
    o->n = cnt;
    o->bytes = 0;
    for (int i = 0; i < cnt; i++) {
        memcpy(o->k[i], kv[i].key, (size_t)kv[i].key_length);
        o->k[i][kv[i].key_length] = 0;
        o->bytes += kv[i].key_length + kv[i].value_length;
    }
    fdb_future_destroy(f);
}

static void test_limits_and_more(void **state)
{
    (void)state;
    char p[128], end[160];
    api_prefix(p, sizeof p, "limits");
    snprintf(end, sizeof end, "%s\xff", p);
    keyset ks;
    make_odd_keys(&ks, p);
    write_keys(&ks);
    FDBTransaction *tr = api_tr();
    sel b = { S(p), L(p), 0, 1 }, e = { S(end), L(end), 0, 1 };
    one o;
    int modes[] = { FDB_STREAMING_MODE_WANT_ALL, FDB_STREAMING_MODE_EXACT, FDB_STREAMING_MODE_SMALL,
                    FDB_STREAMING_MODE_ITERATOR, FDB_STREAMING_MODE_SERIAL };
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        for (int reverse = 0; reverse <= 1; reverse++) {
            range_once(tr, b, e, 5, 0, (FDBStreamingMode)modes[m], reverse, &o);
            assert_int_equal(o.n, 5);
            assert_true(o.more);
            for (int i = 0; i < 5; i++)
                assert_string_equal(o.k[i], reverse ? ks.k[12 - i] : ks.k[i]);
            range_once(tr, b, e, 100, 0, (FDBStreamingMode)modes[m], reverse, &o);
            if (modes[m] == FDB_STREAMING_MODE_EXACT) {
                assert_int_equal(o.n, 13);
                assert_false(o.more);
            } else {
                /* a byte-limited mode stops where the transaction's snapshot cache ends once it has
                 * a row (RYWImpl::getRangeValue: hasSatisfiedMinRows), as libfdb_c does: the five
                 * rows the limit-5 read cached, with more */
                assert_true(o.n == 5 || m > 0);
                assert_true(o.more || o.n == 13);
            }
            range_once(tr, b, e, 1, 0, (FDBStreamingMode)modes[m], reverse, &o);
            assert_int_equal(o.n, 1);
            assert_true(o.more);
            assert_string_equal(o.k[0], reverse ? ks.k[12] : ks.k[0]);
        }
    }
    /* no limit, WANT_ALL: everything, more = 0 */
    range_once(tr, b, e, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, &o);
    assert_int_equal(o.n, 13);
    assert_false(o.more);
    fdb_transaction_destroy(tr);
}

static void test_target_bytes(void **state)
{
    (void)state;
    char p[128], end[160];
    api_prefix(p, sizeof p, "tbytes");
    snprintf(end, sizeof end, "%s\xff", p);
    keyset ks;
    make_odd_keys(&ks, p);
    write_keys(&ks);
    FDBTransaction *tr = api_tr();
    sel b = { S(p), L(p), 0, 1 }, e = { S(end), L(end), 0, 1 };
    one o;
    /* a tiny byte target still returns at least one row */
    range_once(tr, b, e, 0, 1, FDB_STREAMING_MODE_EXACT, 0, &o);
    assert_true(o.n >= 1);
    assert_true(o.more);
    assert_string_equal(o.k[0], ks.k[0]);
    /* rows stop once the target is reached (FDB also counts a per-row overhead, so only
     * bounds are checked) */
    int row = L(ks.k[0]) * 2 + 2; /* key + "v:" + key */
    range_once(tr, b, e, 0, 3 * row, FDB_STREAMING_MODE_EXACT, 0, &o);
    assert_true(o.n >= 1);
    assert_true(o.n <= 4);
    assert_true(o.n < 13);
    assert_true(o.more);
    /* with a limit too: whichever comes first */
    range_once(tr, b, e, 2, 1000000, FDB_STREAMING_MODE_EXACT, 1, &o);
    assert_int_equal(o.n, 2);
    assert_string_equal(o.k[0], ks.k[12]);
    /* iterate with a small target: everything, in order */
    read_all(tr, b, e, 0, 2 * row, FDB_STREAMING_MODE_WANT_ALL, 0, &g_rows, g_keys, 12000);
    expect_keys(g_rows.n, &ks, 0, 13, 0);
    assert_true(g_rows.batches > 1);
    fdb_transaction_destroy(tr);
}

/* ---------------- key selectors ---------------- */

static void check_get_key(FDBTransaction *tr, const keyset *ks, const char *key, int or_equal, int offset)
{
    int idx = resolve(ks, key, or_equal, offset);
    assert_true(idx >= 0 && idx < ks->n);
    FDBFuture *f = fdb_transaction_get_key(tr, S(key), L(key), or_equal, offset, 0);
    fdb_error_t err = api_wait(f);
    if (err)
        fail_msg("get_key(%s, or_equal=%d, offset=%d): error %d", key, or_equal, offset, err);
    const uint8_t *k;
    int kl;
    assert_int_equal(fdb_future_get_key(f, &k, &kl), 0);
    if (kl != L(ks->k[idx]) || memcmp(k, ks->k[idx], (size_t)kl))
        fail_msg("get_key(%s, or_equal=%d, offset=%d): got %.*s want %s", key, or_equal, offset, kl,
                 (const char *)k, ks->k[idx]);
    fdb_future_destroy(f);
}

static int g_multi_shard; /* set while selectors_test runs over several shards */

static void selectors_test(const char *p, const keyset *ks)
{
    FDBTransaction *tr = api_tr();
    const char *probes[] = { "b", "c", "d", "m", "n", "x", "y" };
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
        fdb_transaction_reset(tr);
        char key[160];
        snprintf(key, sizeof key, "%s%s", p, probes[i]);
        for (int or_equal = 0; or_equal <= 1; or_equal++)
            for (int offset = -3; offset <= 4; offset++) {
                int idx = resolve(ks, key, or_equal, offset);
                if (idx < 0 || idx >= ks->n)
                    continue;
                check_get_key(tr, ks, key, or_equal, offset);
            }
    }
    /* get_range with selectors on both ends, forward and reverse (a fresh read version per
     * begin probe keeps the transaction young) */
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++)
        for (size_t j = 0; j < sizeof probes / sizeof *probes; j++) {
            if (j == 0)
                fdb_transaction_reset(tr);
            char bk[128], ek[128];
            snprintf(bk, sizeof bk, "%s%s", p, probes[i]);
            snprintf(ek, sizeof ek, "%s%s", p, probes[j]);
            for (int bo = 0; bo <= 1; bo++)
                for (int boff = -1; boff <= 2; boff++) {
                    int eo = !bo, eoff = boff + 1;
                    int from = resolve(ks, bk, bo, boff), to = resolve(ks, ek, eo, eoff);
                    if (from < 0 || to < 0 || from > ks->n || to > ks->n)
                        continue;
                    for (int reverse = 0; reverse <= 1; reverse++) {
                        snprintf(g_ctx, sizeof g_ctx, "get_range([%s,%d,%d], [%s,%d,%d], reverse=%d)", bk, bo,
                                 boff, ek, eo, eoff, reverse);
                        read_all(tr, (sel){ S(bk), L(bk), bo, boff },
                                 (sel){ S(ek), L(ek), eo, eoff }, 0, 0, FDB_STREAMING_MODE_WANT_ALL,
                                 reverse, &g_rows, g_keys, 12000);
                        if (!reverse)
                            expect_keys(g_rows.n, ks, from, to, 0);
                        else
                            expect_keys(g_rows.n, ks, from, to, 1);
                    }
                }
        }
    fdb_transaction_destroy(tr);
}

static void test_key_selectors(void **state)
{
    (void)state;
    char p[128];
    api_prefix(p, sizeof p, "selectors");
    keyset ks;
    make_odd_keys(&ks, p);
    write_keys(&ks);
    selectors_test(p, &ks);
}

static void test_get_key_last_less_or_equal(void **state)
{
    (void)state;
    /* lastLessOrEqual(K) with K absent is the last key below K (once returned K itself) */
    char p[128];
    api_prefix(p, sizeof p, "lastle");
    keyset ks;
    make_odd_keys(&ks, p);
    write_keys(&ks);
    FDBTransaction *tr = api_tr();
    char key[160];
    snprintf(key, sizeof key, "%sc", p);
    check_get_key(tr, &ks, key, 1, 0);
    snprintf(key, sizeof key, "%sd", p);
    check_get_key(tr, &ks, key, 1, 0);
    snprintf(key, sizeof key, "%sm", p);
    check_get_key(tr, &ks, key, 1, 0);
    fdb_transaction_destroy(tr);
}

static void test_get_key_database_edges(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    /* before the first key: the empty key; after the last: \xff */
    FDBFuture *f = fdb_transaction_get_key(tr, FDB_KEYSEL_LAST_LESS_THAN(S(""), 0), 0);
    assert_int_equal(api_wait(f), 0);
    const uint8_t *k;
    int kl = -1;
    assert_int_equal(fdb_future_get_key(f, &k, &kl), 0);
    assert_int_equal(kl, 0);
    fdb_future_destroy(f);
    f = fdb_transaction_get_key(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xfe\xff"), 2), 0);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_key(f, &k, &kl), 0);
    assert_int_equal(kl, 1);
    assert_int_equal(k[0], 0xff);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* ---------------- across shards ---------------- */

static void test_ranges_across_shards(void **state)
{
    (void)state;
    /* fixed space s/ with boundaries s/b, s/m, s/t on 3 storage servers */
    assert_int_equal(api_clear_prefix("s/"), 0);
    keyset ks;
    ks.n = 0;
    for (char c = 'a'; c <= 'z'; c++)
        snprintf(ks.k[ks.n++], sizeof ks.k[0], "s/%c", c);
    write_keys(&ks);
    /* every mode, forward and reverse */
    int modes[] = { FDB_STREAMING_MODE_WANT_ALL, FDB_STREAMING_MODE_ITERATOR, FDB_STREAMING_MODE_SMALL,
                    FDB_STREAMING_MODE_MEDIUM, FDB_STREAMING_MODE_LARGE, FDB_STREAMING_MODE_SERIAL };
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++)
        full_range_in_mode("s/", &ks, (FDBStreamingMode)modes[m], 0);
    full_range_in_mode("s/", &ks, FDB_STREAMING_MODE_EXACT, 20);
    /* one request with a limit that spans boundaries */
    FDBTransaction *tr = api_tr();
    one o;
    range_once(tr, (sel){ S("s/a"), 3, 0, 1 }, (sel){ S("s/z"), 3, 0, 1 }, 20, 0,
               FDB_STREAMING_MODE_EXACT, 0, &o);
    assert_int_equal(o.n, 20);
    for (int i = 0; i < 20; i++)
        assert_string_equal(o.k[i], ks.k[i]);
    range_once(tr, (sel){ S("s/a"), 3, 0, 1 }, (sel){ S("s/z"), 3, 0, 1 }, 0, 0,
               FDB_STREAMING_MODE_WANT_ALL, 1, &o);
    assert_int_equal(o.n, 25);
    assert_false(o.more);
    assert_string_equal(o.k[0], "s/y");
    assert_string_equal(o.k[24], "s/a");
    fdb_transaction_destroy(tr);
    /* selectors whose offsets cross shard boundaries */
    g_multi_shard = 1;
    selectors_test("s/", &ks);
    g_multi_shard = 0;
    tr = api_tr();
    check_get_key(tr, &ks, "s/a", 0, 20);  /* s/a + 19 = s/t */
    check_get_key(tr, &ks, "s/z", 0, -20); /* back across two boundaries */
    check_get_key(tr, &ks, "s/m", 0, 0);   /* last less than a boundary: s/l */
    check_get_key(tr, &ks, "s/m", 1, 1);   /* first greater than a boundary */
    check_get_key(tr, &ks, "s/m", 1, 0);   /* last less or equal: the boundary key */
    fdb_transaction_destroy(tr);
}

static void test_get_key_backward_or_equal_multi_shard(void **state)
{
    (void)state;
    /* or_equal=1 with a negative offset across shard boundaries (once looped until 1007:
     * the backward shard lookup, KeySelectorRef::isBackward, was wrong) */
    keyset ks;
    ks.n = 0;
    for (char c = 'a'; c <= 'z'; c++)
        snprintf(ks.k[ks.n++], sizeof ks.k[0], "s/%c", c);
    write_keys(&ks);
    const char *probes[][1] = { { "s/c" }, { "s/b" }, { "s/m" }, { "s/z" } };
    for (size_t i = 0; i < 4; i++) {
        FDBTransaction *tr = api_tr();
        int idx = resolve(&ks, probes[i][0], 1, -1);
        FDBFuture *f = fdb_transaction_get_key(tr, S(probes[i][0]), L(probes[i][0]), 1, -1, 0);
        fdb_error_t e = api_wait_ms(f, 2000);
        if (e)
            fail_msg("get_key(%s, 1, -1): error %d (want %s)", probes[i][0], e, ks.k[idx]);
        const uint8_t *k;
        int kl;
        assert_int_equal(fdb_future_get_key(f, &k, &kl), 0);
        assert_int_equal(kl, L(ks.k[idx]));
        assert_memory_equal(k, ks.k[idx], (size_t)kl);
        fdb_future_destroy(f);
        fdb_transaction_destroy(tr);
    }
}

/* ---------------- 10,000 keys ---------------- */

static void test_ten_thousand_keys(void **state)
{
    (void)state;
    const int N = 10000;
    assert_int_equal(api_clear_prefix("big/"), 0);
    char v[101];
    FDBTransaction *tr = api_tr();
    for (int batch = 0; batch < N / 1000; batch++) {
        for (;;) {
            for (int i = batch * 1000; i < (batch + 1) * 1000; i++) {
                char k[32];
                snprintf(k, sizeof k, "big/%05d", i);
                snprintf(v, sizeof v, "v:%s", k);
                fdb_transaction_set(tr, S(k), L(k), S(v), L(v));
            }
            fdb_error_t e = api_commit(tr);
            if (!e)
                break;
            assert_int_equal(api_on_error(tr, e), 0);
        }
        fdb_transaction_reset(tr);
    }
    int modes[] = { FDB_STREAMING_MODE_ITERATOR, FDB_STREAMING_MODE_WANT_ALL, FDB_STREAMING_MODE_SMALL };
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++)
        for (int reverse = 0; reverse <= 1; reverse++) {
            read_all(tr, (sel){ S("big/"), 4, 0, 1 }, (sel){ S("big0"), 4, 0, 1 }, 0, 0,
                     (FDBStreamingMode)modes[m], reverse, &g_rows, g_keys, 12000);
            assert_int_equal(g_rows.n, N);
            for (int i = 0; i < N; i++) {
                char k[32];
                snprintf(k, sizeof k, "big/%05d", reverse ? N - 1 - i : i);
                if (strcmp(g_keys[i], k))
                    fail_msg("mode %d reverse %d row %d: %s want %s", modes[m], reverse, i, g_keys[i], k);
            }
            if (modes[m] == FDB_STREAMING_MODE_ITERATOR)
                assert_true(g_rows.batches > 1);
        }
    /* a limit across shard boundaries */
    read_all(tr, (sel){ S("big/02400"), 9, 0, 1 }, (sel){ S("big0"), 4, 0, 1 }, 300, 0,
             FDB_STREAMING_MODE_WANT_ALL, 0, &g_rows, g_keys, 12000);
    assert_int_equal(g_rows.n, 300);
    assert_string_equal(g_keys[0], "big/02400");
    assert_string_equal(g_keys[299], "big/02699");
    fdb_transaction_destroy(tr);
}

/* get_addresses_for_key reads \xff/serverTag/, \xff/keyServers/<key> and \xff/serverList/ in the
 * transaction (libfdb_c's getAddressesForKeyActor): in every shard it names the server of the
 * cluster file (one process here), with its port. */
static void test_addresses_for_key_in_every_shard(void **state)
{
    (void)state;
    const char *keys[] = { "", "big/0100", "big/03000", "big/09999", "s/a", "s/c", "s/n", "s/z", "zzz" };
    FILE *f = fopen(g_env.server.cluster_file, "r");
    assert_non_null(f);
    char line[512] = { 0 };
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    const char *at = strchr(line, '@');
    assert_non_null(at);
    char want[128];
    snprintf(want, sizeof want, "%.*s", (int)strcspn(at + 1, ",\n"), at + 1);
    FDBTransaction *tr = api_tr();
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        FDBFuture *fut = fdb_transaction_get_addresses_for_key(tr, (const uint8_t *)keys[i], (int)strlen(keys[i]));
        assert_int_equal(api_wait(fut), 0);
        const char **addrs;
        int n;
        assert_int_equal(fdb_future_get_string_array(fut, &addrs, &n), 0);
        assert_true(n >= 1);
        for (int j = 0; j < n; j++)
            if (strcmp(addrs[j], want) != 0)
                fail_msg("key '%s': address %s, the server is at %s", keys[i], addrs[j], want);
        fdb_future_destroy(fut);
    }
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_want_all),
        cmocka_unit_test(test_mode_iterator),
        cmocka_unit_test(test_mode_exact),
        cmocka_unit_test(test_mode_small),
        cmocka_unit_test(test_mode_medium),
        cmocka_unit_test(test_mode_large),
        cmocka_unit_test(test_mode_serial),
        cmocka_unit_test(test_exact_without_limit),
        cmocka_unit_test(test_iterator_zero_iteration),
        cmocka_unit_test(test_limits_and_more),
        cmocka_unit_test(test_target_bytes),
        cmocka_unit_test(test_key_selectors),
        cmocka_unit_test(test_get_key_last_less_or_equal),
        cmocka_unit_test(test_get_key_database_edges),
        cmocka_unit_test(test_ranges_across_shards),
        cmocka_unit_test(test_addresses_for_key_in_every_shard),
        cmocka_unit_test(test_get_key_backward_or_equal_multi_shard),
        cmocka_unit_test(test_ten_thousand_keys),
    };
    return cmocka_run_group_tests_name("api_ranges", tests, group_setup, group_teardown);
}
