/* fdb_c.h basics against a live cfdb-server: API version selection, get/set/clear,
 * read-your-writes, snapshot reads, versions, size, reset/cancel, limits, errors. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

/* ---------------- API version (before the network exists) ---------------- */

static void test_api_version_header_too_new(void **state)
{
    (void)state;
    assert_int_equal(fdb_select_api_version_impl(730, 731), 2203); /* api_version_not_supported */
    assert_int_equal(fdb_select_api_version_impl(731, 730), 2202); /* api_version_invalid */
    assert_int_equal(fdb_select_api_version_impl(12, 730), 2203);
    assert_true(fdb_get_max_api_version() >= 730);
}

static void test_api_version_select_twice(void **state)
{
    (void)state;
    assert_int_equal(fdb_select_api_version(730), 0);
    assert_int_equal(fdb_select_api_version(730), 2201); /* api_version_already_set */
    assert_int_equal(fdb_select_api_version_impl(710, 730), 2201);
}

/* ---------------- helpers ---------------- */

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

static void check_value(FDBTransaction *tr, const char *key, const char *want, int snapshot)
{
    int present = -1, len = 0;
    char buf[256];
    assert_int_equal(api_get(tr, key, L(key), snapshot, &present, buf, sizeof buf, &len), 0);
    if (!want) {
        assert_int_equal(present, 0);
    } else {
        assert_int_equal(present, 1);
        assert_int_equal(len, (int)strlen(want));
        assert_memory_equal(buf, want, (size_t)len);
    }
}

static void expect_committed(const char *key, const char *want)
{
    FDBTransaction *tr = api_tr();
    check_value(tr, key, want, 0);
    fdb_transaction_destroy(tr);
}

static void put(const char *key, const char *val)
{
    assert_int_equal(api_set_committed(key, L(key), val, val ? L(val) : 0), 0);
}

static int64_t read_version(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(f), 0);
    int64_t v = 0;
    assert_int_equal(fdb_future_get_int64(f, &v), 0);
    fdb_future_destroy(f);
    return v;
}

/* One get_range over [b,e) with WANT_ALL and no limit; prints the rows as "k=v;" (keys without
 * the common prefix of b) into out; returns the more flag. */
static fdb_bool_t range_once(FDBTransaction *tr, const char *b, const char *e, int snapshot, char *out,
                             size_t cap)
{
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(b), L(b)),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(e), L(e)), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, snapshot, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    size_t o = strlen(out);
    int skip = (int)strlen(b) - 1;
    for (int i = 0; i < n; i++) {
        int sk = kv[i].key_length < skip ? 0 : skip;
        o += (size_t)snprintf(out + o, cap - o, "%.*s=%.*s;", kv[i].key_length - sk, (const char *)kv[i].key + sk,
                              kv[i].value_length, (const char *)kv[i].value);
    }
    fdb_future_destroy(f);
    return more;
}

/* The whole range, the way an application reads it: continue after the last key while more. */
static void range_string(FDBTransaction *tr, const char *b, const char *e, int snapshot, char *out, size_t cap)
{
    out[0] = 0;
    char begin[256];
    snprintf(begin, sizeof begin, "%s", b);
    for (int guard = 0; guard < 100; guard++) {
        FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(begin), L(begin)),
                                                 FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(e), L(e)), 0, 0,
                                                 FDB_STREAMING_MODE_ITERATOR, guard + 1, snapshot, 0);
        assert_int_equal(api_wait(f), 0);
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        size_t o = strlen(out);
        int skip = (int)strlen(b) - 1;
        for (int i = 0; i < n; i++) {
            int sk = kv[i].key_length < skip ? 0 : skip;
            o += (size_t)snprintf(out + o, cap - o, "%.*s=%.*s;", kv[i].key_length - sk,
                                  (const char *)kv[i].key + sk, kv[i].value_length, (const char *)kv[i].value);
        }
        if (more && n > 0) {
            /* the next batch starts just after the last key: test keys have no bytes below 0x20,
             * so last key + \x01 is a fine stand-in for first_greater_than(last) */
            int bl = kv[n - 1].key_length;
            assert_true(bl + 2 < (int)sizeof begin);
            memcpy(begin, kv[n - 1].key, (size_t)bl);
            begin[bl] = 0x01;
            begin[bl + 1] = 0;
            fdb_future_destroy(f);
            continue;
        }
        fdb_future_destroy(f);
        assert_false(more);
        return;
    }
    fail_msg("range did not end");
}

#define PFX(var, name)     \
    char var[128];         \
    api_prefix(var, sizeof var, name)
#define K(var, pfx, sfx) \
    char var[192];       \
    api_key(var, sizeof var, pfx, sfx)

/* ---------------- get / set / clear ---------------- */

static void test_set_get_clear(void **state)
{
    (void)state;
    PFX(p, "setget");
    K(k, p, "k");
    put(k, "v1");
    expect_committed(k, "v1");
    put(k, "v2-longer");
    expect_committed(k, "v2-longer");
    put(k, NULL); /* clear */
    expect_committed(k, NULL);
}

/* A code no option table holds fails at the call with 2007 invalid_option in every scope, as
 * in libfdb_c 7.3.77 (ThreadSafeTransaction::setOption, MultiVersionDatabase::setOption,
 * MultiVersionApi::setNetworkOptionInternal); a known option still answers 0, and the refused
 * one leaves the transaction usable (nothing deferred). */
static void test_unknown_option_codes(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, (FDBTransactionOption)9999, NULL, 0), 2007);
    assert_int_equal(fdb_transaction_set_option(tr, (FDBTransactionOption)0, NULL, 0), 2007);
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_CAUSAL_READ_RISKY, NULL, 0), 0);
    FDBFuture *v = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait_destroy(v), 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(fdb_database_set_option(g_env.db, (FDBDatabaseOption)9999, NULL, 0), 2007);
    assert_int_equal(fdb_network_set_option((FDBNetworkOption)9999, NULL, 0), 2007);
    /* a hidden, deprecated network option is in the table: accepted */
    assert_int_equal(fdb_network_set_option(FDB_NET_OPTION_BUGGIFY_DISABLE, NULL, 0), 0);
}

static void test_get_missing(void **state)
{
    (void)state;
    PFX(p, "missing");
    K(k, p, "never-written");
    expect_committed(k, NULL);
}

static void test_empty_value_and_binary_key(void **state)
{
    (void)state;
    PFX(p, "binary");
    char k[64];
    int pl = (int)strlen(p);
    memcpy(k, p, (size_t)pl);
    k[pl] = 0;
    k[pl + 1] = (char)0xfe;
    k[pl + 2] = 0;
    int kl = pl + 3;
    assert_int_equal(api_set_committed(k, kl, "", 0), 0);
    int present = -1, len = -2;
    assert_int_equal(api_read_committed(k, kl, &present, NULL, 0, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, 0);
    /* a key equal to the prefix of it is a different key */
    assert_int_equal(api_read_committed(k, kl - 1, &present, NULL, 0, &len), 0);
    assert_int_equal(present, 0);
}

static void test_clear_range(void **state)
{
    (void)state;
    PFX(p, "clrrange");
    const char *sfx[] = { "a", "b", "b0", "c", "d" };
    char keys[5][192];
    for (int i = 0; i < 5; i++) {
        api_key(keys[i], sizeof keys[i], p, sfx[i]);
        put(keys[i], "x");
    }
    FDBTransaction *tr = api_tr();
    fdb_transaction_clear_range(tr, S(keys[1]), L(keys[1]), S(keys[4]), L(keys[4])); /* [b, d) */
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    expect_committed(keys[0], "x");
    expect_committed(keys[1], NULL);
    expect_committed(keys[2], NULL);
    expect_committed(keys[3], NULL);
    expect_committed(keys[4], "x"); /* end is exclusive */
}

/* ---------------- read your writes ---------------- */

static void test_ryw_set_clear(void **state)
{
    (void)state;
    PFX(p, "rywset");
    K(k, p, "k");
    K(k2, p, "k2");
    put(k2, "committed");
    FDBTransaction *tr = api_tr();
    check_value(tr, k, NULL, 0);
    fdb_transaction_set(tr, S(k), L(k), S("local"), 5);
    check_value(tr, k, "local", 0);
    fdb_transaction_set(tr, S(k), L(k), S("local2"), 6);
    check_value(tr, k, "local2", 0);
    fdb_transaction_clear(tr, S(k), L(k));
    check_value(tr, k, NULL, 0);
    check_value(tr, k2, "committed", 0);
    fdb_transaction_clear(tr, S(k2), L(k2));
    check_value(tr, k2, NULL, 0);
    fdb_transaction_set(tr, S(k2), L(k2), S("again"), 5);
    check_value(tr, k2, "again", 0);
    /* nothing is visible to others before commit */
    expect_committed(k2, "committed");
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    expect_committed(k, NULL);
    expect_committed(k2, "again");
}

static void test_ryw_clear_range(void **state)
{
    (void)state;
    PFX(p, "rywclr");
    K(a, p, "a");
    K(b, p, "b");
    K(c, p, "c");
    K(d, p, "d");
    put(b, "B");
    put(c, "C");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(a), L(a), S("A"), 1);
    fdb_transaction_clear_range(tr, S(a), L(a), S(c), L(c)); /* clears local a and committed b */
    check_value(tr, a, NULL, 0);
    check_value(tr, b, NULL, 0);
    check_value(tr, c, "C", 0);
    fdb_transaction_set(tr, S(b), L(b), S("B2"), 2); /* set after the clear wins */
    check_value(tr, b, "B2", 0);
    fdb_transaction_set(tr, S(d), L(d), S("D"), 1);
    char out[512];
    range_string(tr, a, d, 0, out, sizeof out);
    assert_string_equal(out, "b=B2;c=C;");
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    expect_committed(a, NULL);
    expect_committed(b, "B2");
    expect_committed(d, "D");
}

/* libfdb_c's RYW getRange stops early with more=1 once it holds a row and meets a key
 * range it has not read yet, when the read has a byte limit (WANT_ALL does: 80,000 bytes)
 * and its minimum row count is met (ReadYourWrites.actor.cpp, getRangeValue:
 * "limits.hasByteLimit() && limits.hasSatisfiedMinRows() && result.size()"). Following
 * `more` returns the rest. */
static void test_ryw_get_range_want_all_stops_early(void **state)
{
    (void)state;
    PFX(p, "rywwantall");
    K(a, p, "a");
    K(b, p, "b");
    K(c, p, "c");
    K(d, p, "d");
    put(b, "B");
    put(c, "C");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(a), L(a), S("A"), 1);
    char out[512];
    out[0] = 0;
    fdb_bool_t more = range_once(tr, a, d, 0, out, sizeof out);
    assert_string_equal(out, "a=A;");
    assert_true(more);
    /* the rest, from just after a */
    char a0[256];
    memcpy(a0, a, L(a));
    a0[L(a)] = 0;
    FDBFuture *f = fdb_transaction_get_range(tr, S(a0), L(a) + 1, 0, 1, S(d), L(d), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t m2;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &m2), 0);
    assert_int_equal(n, 2);
    assert_false(m2);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void test_ryw_get_range_cleared_region_is_known(void **state)
{
    (void)state;
    /* after set a; clear_range [a,c); set b=B2; set d, libfdb_c returns b=B2 with more=1:
     * the cleared region [a,c) is known locally, [c,d) is not, and the read stops there */
    PFX(p, "rywcleared");
    K(a, p, "a");
    K(b, p, "b");
    K(c, p, "c");
    K(d, p, "d");
    put(b, "B");
    put(c, "C");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(a), L(a), S("A"), 1);
    fdb_transaction_clear_range(tr, S(a), L(a), S(c), L(c));
    fdb_transaction_set(tr, S(b), L(b), S("B2"), 2);
    fdb_transaction_set(tr, S(d), L(d), S("D"), 1);
    char out[512];
    out[0] = 0;
    fdb_bool_t more = range_once(tr, a, d, 0, out, sizeof out);
    assert_string_equal(out, "b=B2;");
    assert_true(more);
    fdb_transaction_destroy(tr);
}

/* Key selectors see the transaction's own writes (RYW getKey / getRange): a key set in the
 * transaction is found, a key cleared in it is skipped, offsets count both. */
static void expect_key(FDBTransaction *tr, const char *key, int or_equal, int offset, const char *want)
{
    FDBFuture *f = fdb_transaction_get_key(tr, S(key), L(key), or_equal, offset, 0);
    assert_int_equal(api_wait(f), 0);
    const uint8_t *k;
    int kl;
    assert_int_equal(fdb_future_get_key(f, &k, &kl), 0);
    if (kl != L(want) || memcmp(k, want, (size_t)kl))
        fail_msg("get_key(%s, %d, %d) = %.*s, want %s", key, or_equal, offset, kl, (const char *)k, want);
    fdb_future_destroy(f);
}

static void test_ryw_key_selectors(void **state)
{
    (void)state;
    PFX(p, "rywsel");
    K(a, p, "a");
    K(b, p, "b");
    K(c, p, "c");
    K(d, p, "d");
    K(e, p, "e");
    K(z, p, "z");
    put(a, "A");
    put(c, "C");
    put(e, "E");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(b), L(b), S("B"), 1);
    fdb_transaction_clear(tr, S(c), L(c));
    expect_key(tr, a, 1, 1, b);  /* firstGreaterThan(a): the own write */
    expect_key(tr, e, 0, 0, b);  /* lastLessThan(e): c is cleared */
    expect_key(tr, c, 0, 1, e);  /* firstGreaterOrEqual(c): cleared, so e */
    expect_key(tr, a, 0, 2, b);  /* the second key >= a */
    expect_key(tr, a, 0, 3, e);  /* a, b, (c cleared), e */
    expect_key(tr, z, 0, -1, b); /* two before z: e, b */
    /* a range whose begin is resolved by an offset: firstGreaterOrEqual(a) + 1 = b; read on
     * while more (RYW may stop early at the end of the locally known region) */
    char got[256] = "", from[192];
    snprintf(from, sizeof from, "%s", a);
    int from_or_equal = 0, from_offset = 2;
    for (int guard = 0; guard < 10; guard++) {
        FDBFuture *f = fdb_transaction_get_range(tr, S(from), L(from), from_or_equal, from_offset,
                                                 FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(z), L(z)), 0, 0,
                                                 FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
        assert_int_equal(api_wait(f), 0);
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        for (int i = 0; i < n; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%.*s;", kv[i].value_length,
                     (const char *)kv[i].value);
        if (n) {
            snprintf(from, sizeof from, "%.*s", kv[n - 1].key_length, (const char *)kv[n - 1].key);
            from_or_equal = 1; /* firstGreaterThan(last) */
            from_offset = 1;
        }
        fdb_future_destroy(f);
        if (!more)
            break;
    }
    assert_string_equal(got, "B;E;");
    /* with read-your-writes disabled, storage alone answers */
    FDBTransaction *t2 = api_tr();
    assert_int_equal(fdb_transaction_set_option(t2, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    fdb_transaction_set(t2, S(b), L(b), S("B"), 1);
    expect_key(t2, a, 1, 1, c);
    fdb_transaction_destroy(t2);
    fdb_transaction_destroy(tr);
}

static void test_ryw_atomic(void **state)
{
    (void)state;
    PFX(p, "rywatomic");
    K(k, p, "counter");
    K(k2, p, "fresh");
    uint8_t one[8] = { 1 }, five[8] = { 5 };
    assert_int_equal(api_set_committed(k, L(k), one, 8), 0);
    FDBTransaction *tr = api_tr();
    fdb_transaction_atomic_op(tr, S(k), L(k), five, 8, FDB_MUTATION_TYPE_ADD);
    fdb_transaction_atomic_op(tr, S(k2), L(k2), five, 8, FDB_MUTATION_TYPE_ADD);
    int present = 0, len = 0;
    uint8_t buf[16];
    assert_int_equal(api_get(tr, k, L(k), 0, &present, buf, sizeof buf, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, 8);
    assert_int_equal(buf[0], 6);
    assert_int_equal(api_get(tr, k2, L(k2), 0, &present, buf, sizeof buf, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, 8);
    assert_int_equal(buf[0], 5);
    /* a second add stacks on the first */
    fdb_transaction_atomic_op(tr, S(k), L(k), five, 8, FDB_MUTATION_TYPE_ADD);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, buf, sizeof buf, &len), 0);
    assert_int_equal(buf[0], 11);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(api_read_committed(k, L(k), &present, buf, sizeof buf, &len), 0);
    assert_int_equal(len, 8);
    assert_int_equal(buf[0], 11);
}

static void test_ryw_get_range_merges(void **state)
{
    (void)state;
    PFX(p, "rywrange");
    K(a, p, "a");
    K(b, p, "b");
    K(c, p, "c");
    K(e, p, "e");
    K(f, p, "f");
    K(z, p, "z");
    put(a, "1");
    put(c, "3");
    put(e, "5");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(b), L(b), S("2"), 1);
    fdb_transaction_clear(tr, S(c), L(c));
    fdb_transaction_set(tr, S(e), L(e), S("55"), 2);
    fdb_transaction_set(tr, S(f), L(f), S("6"), 1);
    char out[512];
    range_string(tr, a, z, 0, out, sizeof out);
    assert_string_equal(out, "a=1;b=2;e=55;f=6;");
    /* reverse with a limit of 2 gives the last two */
    FDBFuture *fu = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(a), L(a)),
                                              FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(z), L(z)), 2, 0,
                                              FDB_STREAMING_MODE_EXACT, 0, 0, 1);
    assert_int_equal(api_wait(fu), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(fu, &kv, &n, &more), 0);
    assert_int_equal(n, 2);
    assert_memory_equal(kv[0].key, f, (size_t)L(f));
    assert_memory_equal(kv[1].key, e, (size_t)L(e));
    assert_true(more);
    fdb_future_destroy(fu);
    fdb_transaction_destroy(tr);
}

/* ---------------- snapshot ---------------- */

static void test_snapshot_reads_see_own_writes(void **state)
{
    (void)state;
    PFX(p, "snapryw");
    K(k, p, "k");
    put(k, "committed");
    FDBTransaction *tr = api_tr();
    check_value(tr, k, "committed", 1);
    fdb_transaction_set(tr, S(k), L(k), S("mine"), 4);
    /* API 730: snapshot reads see the transaction's writes by default */
    check_value(tr, k, "mine", 1);
    check_value(tr, k, "mine", 0);
    fdb_transaction_destroy(tr);

    tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE, NULL, 0), 0);
    fdb_transaction_set(tr, S(k), L(k), S("mine"), 4);
    check_value(tr, k, "committed", 1);
    check_value(tr, k, "mine", 0);
    fdb_transaction_destroy(tr);
}

static void test_read_your_writes_disable(void **state)
{
    (void)state;
    PFX(p, "rywdisable");
    K(k, p, "k");
    put(k, "committed");
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    fdb_transaction_set(tr, S(k), L(k), S("mine"), 4);
    check_value(tr, k, "committed", 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    expect_committed(k, "mine");
}

/* ---------------- versions ---------------- */

static void test_read_version_monotonic(void **state)
{
    (void)state;
    PFX(p, "grv");
    K(k, p, "k");
    int64_t last = 0;
    for (int i = 0; i < 5; i++) {
        FDBTransaction *tr = api_tr();
        int64_t v = read_version(tr);
        assert_true(v > 0);
        assert_true(v >= last);
        /* the same transaction keeps its read version */
        assert_int_equal(read_version(tr), v);
        fdb_transaction_set(tr, S(k), L(k), S("x"), 1);
        assert_int_equal(api_commit(tr), 0);
        int64_t cv = 0;
        assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
        assert_true(cv > v);
        fdb_transaction_destroy(tr);
        /* a later transaction reads at or after that commit */
        tr = api_tr();
        int64_t v2 = read_version(tr);
        assert_true(v2 >= cv);
        fdb_transaction_destroy(tr);
        last = v2;
    }
}

static void test_set_read_version(void **state)
{
    (void)state;
    PFX(p, "setrv");
    K(k, p, "k");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(k), L(k), S("old"), 3);
    assert_int_equal(api_commit(tr), 0);
    int64_t v1 = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &v1), 0);
    fdb_transaction_reset(tr);
    fdb_transaction_set(tr, S(k), L(k), S("new"), 3);
    assert_int_equal(api_commit(tr), 0);
    int64_t v2 = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &v2), 0);
    assert_true(v2 > v1);
    fdb_transaction_reset(tr);

    fdb_transaction_set_read_version(tr, v1);
    assert_int_equal(read_version(tr), v1);
    check_value(tr, k, "old", 1);
    fdb_transaction_reset(tr);
    fdb_transaction_set_read_version(tr, v2);
    check_value(tr, k, "new", 1);
    fdb_transaction_reset(tr);
    fdb_transaction_set_read_version(tr, v1 - 1);
    check_value(tr, k, NULL, 1);
    fdb_transaction_destroy(tr);
}

static void test_committed_version(void **state)
{
    (void)state;
    PFX(p, "cv");
    K(k, p, "k");
    FDBTransaction *tr = api_tr();
    /* read-only: -1 */
    check_value(tr, k, NULL, 0);
    assert_int_equal(api_commit(tr), 0);
    int64_t cv = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
    assert_int_equal(cv, -1);
    fdb_transaction_reset(tr);
    /* empty transaction: -1 as well */
    assert_int_equal(api_commit(tr), 0);
    assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
    assert_int_equal(cv, -1);
    fdb_transaction_reset(tr);
    /* with a write */
    int64_t rv = read_version(tr);
    fdb_transaction_set(tr, S(k), L(k), S("v"), 1);
    assert_int_equal(api_commit(tr), 0);
    assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
    assert_true(cv > rv);
    fdb_transaction_destroy(tr);
}

static int64_t approx_size(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_get_approximate_size(tr);
    assert_int_equal(api_wait(f), 0);
    int64_t v = -1;
    assert_int_equal(fdb_future_get_int64(f, &v), 0);
    fdb_future_destroy(f);
    return v;
}

static void test_approximate_size(void **state)
{
    (void)state;
    PFX(p, "approx");
    FDBTransaction *tr = api_tr();
    int64_t s0 = approx_size(tr);
    assert_true(s0 >= 0);
    char k[192];
    char v[1000];
    memset(v, 'v', sizeof v);
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof k, "%s%04d", p, i);
        fdb_transaction_set(tr, S(k), L(k), S(v), (int)sizeof v);
    }
    int64_t s1 = approx_size(tr);
    assert_true(s1 >= s0 + 10 * 1000);
    snprintf(k, sizeof k, "%sz", p);
    fdb_transaction_clear_range(tr, S(p), L(p), S(k), L(k));
    int64_t s2 = approx_size(tr);
    assert_true(s2 > s1);
    fdb_transaction_reset(tr);
    assert_true(approx_size(tr) < s1);
    fdb_transaction_destroy(tr);
}

/* ---------------- reset / cancel ---------------- */

static void test_reset_discards_writes(void **state)
{
    (void)state;
    PFX(p, "reset");
    K(k, p, "k");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(k), L(k), S("v"), 1);
    fdb_transaction_reset(tr);
    check_value(tr, k, NULL, 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    expect_committed(k, NULL);
}

static void test_cancel(void **state)
{
    (void)state;
    PFX(p, "cancel");
    K(k, p, "k");
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(k), L(k), S("v"), 1);
    fdb_transaction_cancel(tr);
    int present;
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 1025);
    assert_int_equal(api_commit(tr), 1025);
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(p), L(p)),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(k), L(k)), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 1025);
    /* reset revives it */
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 0);
    assert_int_equal(present, 0);
    fdb_transaction_destroy(tr);
    expect_committed(k, NULL);
}

static void test_cancel_grv_and_on_error(void **state)
{
    (void)state;
    /* after fdb_transaction_cancel, get_read_version and on_error fail with
     * transaction_cancelled (1025): RYW getReadVersion and RYWImpl::onError both return
     * resetPromise's error */
    FDBTransaction *tr = api_tr();
    fdb_transaction_cancel(tr);
    assert_int_equal(api_wait_destroy(fdb_transaction_get_read_version(tr)), 1025);
    /* on_error does not revive a cancelled transaction, even for a retryable error */
    assert_int_equal(api_on_error(tr, 1020), 1025);
    assert_int_equal(api_on_error(tr, 1025), 1025);
    fdb_transaction_destroy(tr);
}

static void test_cancel_pending_commit_or_get(void **state)
{
    (void)state;
    PFX(p, "cancelpend");
    K(k, p, "k");
    FDBTransaction *tr = api_tr();
    FDBFuture *g = fdb_transaction_get(tr, S(k), L(k), 0);
    fdb_transaction_cancel(tr);
    fdb_error_t e = api_wait(g);
    /* either it completed before the cancel, or it was cancelled */
    assert_true(e == 0 || e == 1025);
    fdb_future_destroy(g);
    fdb_transaction_destroy(tr);
}

/* A cluster nobody answers: operations wait, and only the transaction's timeout, a cancel or
 * a reset ends them (as in libfdb_c, where they race the transaction's reset promise). */
static FDBDatabase *unreachable_db(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
    socklen_t al = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd); /* nothing listens there now */
    char cs[128];
    snprintf(cs, sizeof cs, "gone:gone@127.0.0.1:%d", ntohs(a.sin_port));
    FDBDatabase *db = NULL;
    assert_int_equal(fdb_create_database_from_connection_string(cs, &db), 0);
    return db;
}

static void test_unanswered_operations_end(void **state)
{
    (void)state;
    FDBDatabase *db = unreachable_db();
    FDBTransaction *tr;

    /* the transaction's timeout fires although nothing ever answers */
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    int64_t ms = 200;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    FDBFuture *g = fdb_transaction_get(tr, S("k"), 1, 0);
    FDBFuture *v = fdb_transaction_get_read_version(tr);
    fdb_transaction_set(tr, S("k"), 1, S("v"), 1);
    FDBFuture *c = fdb_transaction_commit(tr);
    assert_int_equal(api_wait_ms(g, 10000), 1031);
    assert_int_equal(api_wait_ms(v, 10000), 1031);
    assert_int_equal(api_wait_ms(c, 10000), 1031);
    fdb_future_destroy(g);
    fdb_future_destroy(v);
    fdb_future_destroy(c);
    fdb_transaction_destroy(tr);

    /* the database's default timeout, likewise */
    ms = 150;
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_TRANSACTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    g = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("a"), 1),
                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("b"), 1), 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0,
                                  0, 0);
    assert_int_equal(api_wait_ms(g, 10000), 1031);
    fdb_future_destroy(g);
    fdb_transaction_destroy(tr);
    ms = 0;
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_TRANSACTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);

    /* cancel and reset end waiting operations with transaction_cancelled */
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    g = fdb_transaction_get(tr, S("k"), 1, 0);
    v = fdb_transaction_get_key(tr, FDB_KEYSEL_LAST_LESS_THAN(S("k"), 1), 0);
    usleep(20000);
    assert_false(fdb_future_is_ready(g));
    fdb_transaction_cancel(tr);
    assert_int_equal(api_wait_ms(g, 10000), 1025);
    assert_int_equal(api_wait_ms(v, 10000), 1025);
    fdb_future_destroy(g);
    fdb_future_destroy(v);
    fdb_transaction_reset(tr);
    g = fdb_transaction_get(tr, S("k"), 1, 0);
    usleep(20000);
    fdb_transaction_reset(tr);
    assert_int_equal(api_wait_ms(g, 10000), 1025);
    fdb_future_destroy(g);
    /* after the reset the transaction works as new: a timeout set now applies */
    ms = 100;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    g = fdb_transaction_get(tr, S("k"), 1, 0);
    assert_int_equal(api_wait_ms(g, 10000), 1031);
    fdb_future_destroy(g);
    /* a pending get outlives its transaction's destruction and still ends */
    fdb_transaction_reset(tr);
    g = fdb_transaction_get(tr, S("k"), 1, 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(api_wait_ms(g, 10000), 1025);
    fdb_future_destroy(g);
    fdb_database_destroy(db);
}

static int64_t total_cost(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_get_total_cost(tr);
    assert_int_equal(api_wait(f), 0);
    int64_t c = -1;
    assert_int_equal(fdb_future_get_int64(f, &c), 0);
    fdb_future_destroy(f);
    return c;
}

/* libfdb_c 7.3's cost estimate: reads that reach storage and the mutations a commit sends. */
static void test_total_cost(void **state)
{
    (void)state;
    PFX(p, "cost");
    K(a, p, "a");
    K(b, p, "b");
    K(c, p, "c");
    FDBTransaction *tr = api_tr();
    assert_int_equal(total_cost(tr), 0);
    int present;
    assert_int_equal(api_get(tr, a, L(a), 0, &present, NULL, 0, NULL), 0); /* missing: one page */
    assert_int_equal(total_cost(tr), 4096);
    fdb_transaction_set(tr, S(a), L(a), S("1"), 1);
    assert_int_equal(api_get(tr, a, L(a), 0, &present, NULL, 0, NULL), 0); /* own write: free */
    assert_int_equal(total_cost(tr), 4096);
    static uint8_t big[5000];
    fdb_transaction_set(tr, S(b), L(b), big, sizeof big); /* two pages of write */
    fdb_transaction_clear(tr, S(c), L(c));
    int64_t one = 1;
    fdb_transaction_atomic_op(tr, S(c), L(c), (const uint8_t *)&one, 8, FDB_MUTATION_TYPE_ADD);
    assert_int_equal(total_cost(tr), 4096); /* writes count as the commit sends them */
    assert_int_equal(api_commit(tr), 0);
    /* set a: 16384, set b: 32768, c: one set (an add on a cleared key is a set): 16384 */
    assert_int_equal(total_cost(tr), 4096 + 16384 + 32768 + 16384);
    FDBFuture *d = fdb_transaction_get_tag_throttled_duration(tr);
    assert_int_equal(api_wait(d), 0);
    double s = -1;
    assert_int_equal(fdb_future_get_double(d, &s), 0);
    assert_true(s == 0.0); /* nobody throttles here */
    fdb_future_destroy(d);
    fdb_transaction_reset(tr);
    assert_int_equal(total_cost(tr), 0);
    /* a range read: once per call, 32 bytes a row plus keys and values */
    FDBFuture *r = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(p), L(p)),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(c), L(c) + 1), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(r), 0);
    fdb_future_destroy(r);
    assert_int_equal(total_cost(tr), 8192); /* 3 rows, 5000+ bytes: two pages */
    fdb_transaction_destroy(tr);
}

static char *client_status(FDBDatabase *db)
{
    FDBFuture *f = fdb_database_get_client_status(db);
    assert_int_equal(api_wait(f), 0);
    const uint8_t *k;
    int n;
    assert_int_equal(fdb_future_get_key(f, &k, &n), 0);
    char *copy = malloc((size_t)n + 1);
    memcpy(copy, k, (size_t)n);
    copy[n] = 0;
    fdb_future_destroy(f);
    /* well formed: braces and brackets balance outside strings */
    int depth = 0;
    bool in_str = false;
    for (int i = 0; i < n; i++) {
        char c = copy[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"')
            in_str = true;
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']')
            depth--;
        assert_true(depth >= 0);
    }
    assert_int_equal(depth, 0);
    assert_false(in_str);
    return copy;
}

/* libfdb_c's client status document: what the client knows and how its connections are. */
static void test_client_status(void **state)
{
    (void)state;
    PFX(p, "status");
    K(k, p, "k");
    assert_int_equal(api_set_committed(S(k), L(k), S("v"), 1), 0); /* proxies and a storage server known */
    char *s = client_status(g_env.db);
    assert_non_null(strstr(s, "\"InitializationState\":\"created\""));
    assert_non_null(strstr(s, "\"Healthy\":true"));
    char rec[400];
    snprintf(rec, sizeof rec, "\"ConnectionRecord\":\"file: %s\"", g_env.server.cluster_file);
    assert_non_null(strstr(s, rec));
    assert_non_null(strstr(s, "\"CurrentCoordinator\":\"127.0.0.1:"));
    assert_non_null(strstr(s, "\"Status\":\"connected\""));
    assert_non_null(strstr(s, "\"NumConnectionsFailed\":0"));
    assert_non_null(strstr(s, "\"SSID\":\""));
    assert_non_null(strstr(s, "\"GrvProxies\":[\"127.0.0.1:"));
    assert_non_null(strstr(s, "\"ProtocolVersion\":\"fdb00b073000000\""));
    free(s);

    /* a cluster nobody answers: not healthy, its coordinator failed */
    FDBDatabase *db = unreachable_db();
    s = client_status(db);
    assert_non_null(strstr(s, "\"Healthy\":false"));
    assert_non_null(strstr(s, "\"ConnectionRecord\":\"connection string: gone:gone@127.0.0.1:"));
    free(s);
    bool failed = false;
    for (int i = 0; i < 50 && !failed; i++) {
        usleep(20000);
        s = client_status(db);
        failed = strstr(s, "\"Status\":\"failed\"") != NULL;
        free(s);
    }
    assert_true(failed);
    fdb_database_destroy(db);
}

static fdb_error_t special_get(FDBTransaction *tr, const char *key, int *present, char *buf, int cap)
{
    int len = 0;
    fdb_error_t e = api_get(tr, key, (int)strlen(key), 0, present, buf, cap - 1, &len);
    buf[e == 0 && *present ? len : 0] = 0;
    return e;
}

/* The special key space's modules, as libfdb_c lays them out. */
static void test_special_keys(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char v[512];
    int present;
    /* connection string and cluster file: what the database was opened with */
    assert_int_equal(special_get(tr, "\xff\xff/connection_string", &present, v, sizeof v), 0);
    assert_true(present);
    FILE *f = fopen(g_env.server.cluster_file, "r");
    char line[512] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    line[strcspn(line, "\n")] = 0;
    assert_string_equal(v, line);
    assert_int_equal(special_get(tr, "\xff\xff/cluster_file_path", &present, v, sizeof v), 0);
    assert_true(present);
    assert_string_equal(v, g_env.server.cluster_file);
    /* the cluster's id: 32 hex digits, the one the client status reports */
    assert_int_equal(special_get(tr, "\xff\xff/cluster_id", &present, v, sizeof v), 0);
    assert_true(present);
    assert_int_equal(strlen(v), 32);
    assert_int_equal(strspn(v, "0123456789abcdef"), 32);
    char *status = client_status(g_env.db);
    char want[64];
    snprintf(want, sizeof want, "\"ClusterID\":\"%s\"", v);
    assert_non_null(strstr(status, want));
    free(status);
    /* no management call has left a message */
    assert_int_equal(special_get(tr, "\xff\xff/error_message", &present, v, sizeof v), 0);
    assert_false(present);
    /* outside every module, across modules, and modules not implemented */
    assert_int_equal(special_get(tr, "\xff\xff/no_such_module", &present, v, sizeof v), 2113);
    assert_int_equal(special_get(tr, "\xff\xff", &present, v, sizeof v), 2113);
    FDBFuture *r = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\xff/transaction/"), 15),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\xff/worker_interfaces/"), 21),
                                             0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(r), 2112);
    r = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\xff/nowhere/"), 11),
                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\xff/nowhere0"), 11), 0, 0,
                                  FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(r), 2113);
    /* the single-key modules read as ranges (SingleSpecialKeyImpl::getRange): the key's row
     * when it has a value */
    {
        static const char *const singles[] = { "\xff\xff/connection_string", "\xff\xff/cluster_file_path",
                                               "\xff\xff/cluster_id", "\xff\xff/status/json",
                                               "\xff\xff/error_message" };
        for (size_t i = 0; i < sizeof singles / sizeof *singles; i++) {
            const char *k = singles[i];
            int kl = (int)strlen(k);
            char after[64];
            memcpy(after, k, (size_t)kl);
            after[kl] = 0;
            FDBFuture *rf = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)k, kl),
                                                      FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)after, kl + 1),
                                                      0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
            assert_int_equal(api_wait(rf), 0);
            const FDBKeyValue *kv;
            int n;
            fdb_bool_t more;
            assert_int_equal(fdb_future_get_keyvalue_array(rf, &kv, &n, &more), 0);
            int pk;
            assert_int_equal(special_get(tr, k, &pk, v, sizeof v), 0);
            if (strcmp(k, "\xff\xff/status/json") == 0) { /* a new document each read */
                assert_int_equal(n, 1);
                assert_int_equal(kv[0].value[0], '{');
            } else {
                assert_int_equal(n, pk ? 1 : 0);
                if (pk) {
                    assert_int_equal(kv[0].value_length, (int)strlen(v));
                    assert_memory_equal(kv[0].value, v, strlen(v));
                }
            }
            if (n) {
                assert_int_equal(kv[0].key_length, kl);
                assert_memory_equal(kv[0].key, k, (size_t)kl);
            }
            assert_int_equal(strcmp(k, "\xff\xff/error_message") == 0 ? 0 : 1, pk);
            fdb_future_destroy(rf);
        }
    }
    /* auto_coordinators (test_api_special_coordinators): with one coordinator that is also the
     * one worker, the auto quorum is the current one */
    {
        char procs[256];
        int pp;
        assert_int_equal(special_get(tr, "\xff\xff/configuration/coordinators/processes", &pp, procs, sizeof procs), 0);
        assert_true(pp);
        assert_int_equal(special_get(tr, "\xff\xff/management/auto_coordinators", &present, v, sizeof v), 0);
        assert_true(present);
        assert_string_equal(v, procs);
    }
    /* metrics/health/ is answered (test_api_special_cluster): no aggregate row while the worst
     * storage durability lag is 0 */
    assert_int_equal(special_get(tr, "\xff\xff/metrics/health/aggregate", &present, v, sizeof v), 0);
    assert_false(present);
    /* the transaction's own conflict ranges, as boundaries */
    {
        FDBTransaction *t = api_tr();
        assert_int_equal(api_get(t, "sk/r", 4, 0, &present, NULL, 0, NULL), 0);
        fdb_transaction_set(t, S("sk/w"), 4, S("v"), 1);
        assert_int_equal(fdb_transaction_add_conflict_range(t, S("sk/a"), 4, S("sk/b"), 4,
                                                            FDB_CONFLICT_RANGE_TYPE_WRITE),
                         0);
        static const char rp[] = "\xff\xff/transaction/read_conflict_range/";
        static const char wp[] = "\xff\xff/transaction/write_conflict_range/";
        FDBFuture *rr = fdb_transaction_get_range(t, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(rp), sizeof rp - 1),
                                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\xff/transaction/read_conflict_range0"), sizeof rp - 1),
                                                  0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
        assert_int_equal(api_wait(rr), 0);
        const FDBKeyValue *kv;
        int count;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(rr, &kv, &count, &more), 0);
        assert_int_equal(count, 2);
        assert_int_equal(kv[0].key_length, (int)sizeof rp - 1 + 4);
        assert_memory_equal((const char *)kv[0].key + sizeof rp - 1, "sk/r", 4);
        assert_memory_equal(kv[0].value, "1", 1);
        assert_int_equal(kv[1].key_length, (int)sizeof rp - 1 + 5); /* "sk/r\0" */
        assert_memory_equal(kv[1].value, "0", 1);
        fdb_future_destroy(rr);
        FDBFuture *wr = fdb_transaction_get_range(t, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(wp), sizeof wp - 1),
                                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\xff/transaction/write_conflict_range0"), sizeof wp - 1),
                                                  0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
        assert_int_equal(api_wait(wr), 0);
        assert_int_equal(fdb_future_get_keyvalue_array(wr, &kv, &count, &more), 0);
        assert_int_equal(count, 4); /* [sk/a, sk/b) and [sk/w, sk/w\0) */
        assert_memory_equal((const char *)kv[0].key + sizeof wp - 1, "sk/a", 4);
        assert_memory_equal((const char *)kv[2].key + sizeof wp - 1, "sk/w", 4);
        fdb_future_destroy(wr);
        /* the whole module: each implementation's rows joined in key order (2 read
         * boundaries, then 4 write boundaries); reversed; limited */
        static const char tb[] = "\xff\xff/transaction/", te[] = "\xff\xff/transaction0";
        for (int rev = 0; rev < 2; rev++) {
            FDBFuture *all = fdb_transaction_get_range(t, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(tb), sizeof tb - 1),
                                                       FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(te), sizeof te - 1), 0, 0,
                                                       FDB_STREAMING_MODE_WANT_ALL, 0, 0, rev);
            assert_int_equal(api_wait(all), 0);
            assert_int_equal(fdb_future_get_keyvalue_array(all, &kv, &count, &more), 0);
            assert_int_equal(count, 6);
            assert_false(more);
            const FDBKeyValue *first = &kv[rev ? 5 : 0], *last = &kv[rev ? 0 : 5];
            assert_memory_equal((const char *)first->key + sizeof rp - 1, "sk/r", 4);
            assert_memory_equal(first->key, rp, sizeof rp - 1);
            assert_memory_equal(last->key, wp, sizeof wp - 1);
            assert_int_equal(last->key_length, (int)sizeof wp - 1 + 5); /* "sk/w\0" */
            fdb_future_destroy(all);
        }
        FDBFuture *lim = fdb_transaction_get_range(t, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(tb), sizeof tb - 1),
                                                   FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(te), sizeof te - 1), 3, 0,
                                                   FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
        assert_int_equal(api_wait(lim), 0);
        assert_int_equal(fdb_future_get_keyvalue_array(lim, &kv, &count, &more), 0);
        assert_int_equal(count, 3);
        assert_true(more);
        assert_memory_equal((const char *)kv[2].key + sizeof wp - 1, "sk/a", 4);
        fdb_future_destroy(lim);
        char key[80];
        snprintf(key, sizeof key, "%ssk/r", rp);
        assert_int_equal(special_get(t, key, &present, v, sizeof v), 0);
        assert_true(present);
        assert_string_equal(v, "1");
        fdb_transaction_destroy(t);
    }
    /* a database opened from a connection string names its record by an id */
    FDBDatabase *db;
    assert_int_equal(fdb_create_database_from_connection_string(line, &db), 0);
    FDBTransaction *t2;
    assert_int_equal(fdb_database_create_transaction(db, &t2), 0);
    assert_int_equal(special_get(t2, "\xff\xff/cluster_file_path", &present, v, sizeof v), 0);
    assert_true(present);
    assert_int_equal(strlen(v), 32);
    fdb_transaction_destroy(t2);
    fdb_database_destroy(db);
    fdb_transaction_destroy(tr);
}

/* A commit waits for the transaction's reads in flight and fails with their error
 * (RYWImpl::commit waits on the AndFuture of its reads). */
static void test_commit_waits_for_reads(void **state)
{
    (void)state;
    PFX(p, "cwait");
    K(k, p, "k");
    FDBTransaction *tr = api_tr();
    FDBFuture *g = fdb_transaction_get(tr, S(k), L(k), 0);
    FDBFuture *c = fdb_transaction_commit(tr); /* read-only: nothing to send, still waits */
    assert_int_equal(api_wait(c), 0);
    assert_true(fdb_future_is_ready(g));
    assert_int_equal(fdb_future_get_error(g), 0);
    fdb_future_destroy(g);
    fdb_future_destroy(c);
    fdb_transaction_reset(tr);

    /* a read that fails fails the commit, which then writes nothing */
    fdb_transaction_set_read_version(tr, 0x7ffffffffffffff0ll);
    g = fdb_transaction_get(tr, S(k), L(k), 0);
    fdb_transaction_set(tr, S(k), L(k), S("x"), 1);
    c = fdb_transaction_commit(tr);
    assert_int_equal(api_wait(c), 1009);
    assert_int_equal(api_wait(g), 1009);
    fdb_future_destroy(g);
    fdb_future_destroy(c);
    fdb_transaction_destroy(tr);
    expect_committed(k, NULL);
}

static void server_control(const char *cmd)
{
    char ans[256];
    if (api_server_control(&g_env.server, cmd, ans, sizeof ans))
        fail_msg("control '%s': %s", cmd, ans);
}

/* What a commit does not wait for or fail with: reads the application cancelled or dropped
 * (they go on in libfdb_c); and what a commit in progress forbids, read-only or not. */
static void test_commit_and_abandoned_reads(void **state)
{
    (void)state;
    PFX(p, "cabandon");
    K(k, p, "k");
    FDBTransaction *tr = api_tr();
    server_control("delay 300");
    FDBFuture *g = fdb_transaction_get(tr, S(k), L(k), 0);
    usleep(50000);
    fdb_future_destroy(g); /* dropped while pending */
    FDBFuture *r = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(p), L(p)),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(k), L(k)), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    fdb_future_cancel(r);
    fdb_future_destroy(r);
    fdb_transaction_set(tr, S(k), L(k), S("v"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);

    /* a second commit while a read-only one waits for its reads */
    g = fdb_transaction_get(tr, S(k), L(k), 0);
    FDBFuture *c1 = fdb_transaction_commit(tr);
    FDBFuture *c2 = fdb_transaction_commit(tr);
    assert_int_equal(api_wait(c2), 2017);
    fdb_future_destroy(c2);
    api_wait(c1);
    fdb_future_destroy(c1);
    api_wait(g);
    fdb_future_destroy(g);
    fdb_transaction_reset(tr);

    /* add_conflict_range while committing, and with a bad type */
    fdb_transaction_set(tr, S(k), L(k), S("w"), 1);
    FDBFuture *c = fdb_transaction_commit(tr);
    assert_int_equal(fdb_transaction_add_conflict_range(tr, S(p), L(p), S(k), L(k), FDB_CONFLICT_RANGE_TYPE_READ),
                     2017);
    api_wait(c);
    fdb_future_destroy(c);
    fdb_transaction_reset(tr);
    assert_int_equal(fdb_transaction_add_conflict_range(tr, S(p), L(p), S(k), L(k), (FDBConflictRangeType)7), 2000);
    server_control("delay 0");

    /* a timeout set while a read waits applies to it at once */
    fdb_transaction_reset(tr);
    FDBFuture *rv = fdb_transaction_get_read_version(tr); /* only the read itself is slowed */
    assert_int_equal(api_wait(rv), 0);
    fdb_future_destroy(rv);
    server_control("delay 2000");
    g = fdb_transaction_get(tr, S(k), L(k), 0);
    usleep(50000);
    int64_t ms = 200;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    assert_int_equal(api_wait_ms(g, 1500), 1031);
    fdb_future_destroy(g);
    server_control("delay 0");
    fdb_transaction_destroy(tr);
}

/* The timeout counts from the transaction's creation (or reset), and once passed it sticks
 * until a reset, whatever runs or not (libfdb_c's timebomb). */
static void test_timeout_semantics(void **state)
{
    (void)state;
    PFX(p, "tmo");
    K(k, p, "k");
    int present;
    FDBTransaction *tr = api_tr();
    usleep(300000);
    int64_t ms = 100; /* set late: already expired */
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 1031);
    fdb_transaction_reset(tr); /* a new start */
    ms = 250;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 0);
    usleep(400000); /* expires with nothing running */
    ms = 0;         /* too late to lift it */
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 1031);
    assert_int_equal(api_on_error(tr, 1007), 1031);
    fdb_transaction_set(tr, S(k), L(k), S("v"), 1);
    assert_int_equal(api_commit(tr), 1031);
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 0);
    /* the same when no operation ever ran under the timeout */
    fdb_transaction_reset(tr);
    fdb_transaction_set(tr, S(k), L(k), S("v"), 1);
    ms = 100;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    usleep(300000);
    ms = 0;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    assert_int_equal(api_commit(tr), 1031);
    /* on_error keeps the start: a timeout set after it still counts from creation */
    fdb_transaction_reset(tr);
    usleep(200000);
    assert_int_equal(api_on_error(tr, 1020), 0);
    ms = 150;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&ms, 8), 0);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 1031);
    fdb_transaction_destroy(tr);
    expect_committed(k, NULL);
}

/* \xff/metadataVersion: readable and stamped without system-key access; a read at the
 * transaction's own read version is answered from the GRV reply. */
static void test_metadata_version_key(void **state)
{
    (void)state;
    static const char mvk[] = "\xff/metadataVersion";
    static const uint8_t zeros[14] = { 0 };
    FDBTransaction *tr = api_tr();
    fdb_transaction_atomic_op(tr, S(mvk), 17, zeros, 14, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    FDBFuture *vs = fdb_transaction_get_versionstamp(tr);
    /* written in this transaction: unreadable until committed, and a failed read fails the
     * commit (RYW commit waits on its reads) */
    int present;
    assert_int_equal(api_get(tr, mvk, 17, 0, &present, NULL, 0, NULL), 1036);
    assert_int_equal(api_commit(tr), 1036);
    fdb_future_destroy(vs);
    fdb_transaction_reset(tr);
    fdb_transaction_atomic_op(tr, S(mvk), 17, zeros, 14, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    vs = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 0);
    assert_int_equal(api_wait(vs), 0);
    const uint8_t *stamp;
    int n;
    assert_int_equal(fdb_future_get_key(vs, &stamp, &n), 0);
    uint8_t want[10];
    memcpy(want, stamp, 10);
    fdb_future_destroy(vs);
    fdb_transaction_reset(tr);
    uint8_t got[32];
    int len = 0;
    assert_int_equal(api_get(tr, mvk, 17, 0, &present, got, sizeof got, &len), 0);
    assert_true(present);
    assert_int_equal(len, 10);
    assert_memory_equal(got, want, 10);
    /* set and other atomic ops on it are refused; reading other system keys still needs access */
    fdb_transaction_reset(tr);
    fdb_transaction_set(tr, S(mvk), 17, S("x"), 1);
    assert_int_equal(api_commit(tr), 2000);
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, "\xff/metadataVersion0", 18, 0, &present, NULL, 0, NULL), 2004);
    /* a read conflict on exactly that key is allowed too, a write conflict is not */
    fdb_transaction_reset(tr);
    assert_int_equal(fdb_transaction_add_conflict_range(tr, S(mvk), 17, S("\xff/metadataVersion\x00"), 18,
                                                        FDB_CONFLICT_RANGE_TYPE_READ),
                     0);
    assert_int_equal(fdb_transaction_add_conflict_range(tr, S(mvk), 17, S("\xff/metadataVersion\x00"), 18,
                                                        FDB_CONFLICT_RANGE_TYPE_WRITE),
                     2004);
    fdb_transaction_destroy(tr);
}

static void test_server_protocol(void **state)
{
    (void)state;
    /* the first version learned, from the coordinator's ProtocolInfo */
    FDBFuture *f = fdb_database_get_server_protocol(g_env.db, 0);
    assert_int_equal(api_wait_ms(f, 10000), 0);
    uint64_t v = 0;
    assert_int_equal(fdb_future_get_uint64(f, &v), 0);
    assert_true(v == 0x0FDB00B073000000ull);
    fdb_future_destroy(f);
    /* a different expectation answers at once */
    f = fdb_database_get_server_protocol(g_env.db, 0x0FDB00B072000000ull);
    assert_int_equal(api_wait_ms(f, 10000), 0);
    assert_int_equal(fdb_future_get_uint64(f, &v), 0);
    assert_true(v == 0x0FDB00B073000000ull);
    fdb_future_destroy(f);
    /* the current one: it waits for a change, until the application gives up */
    f = fdb_database_get_server_protocol(g_env.db, 0x0FDB00B073000000ull);
    assert_int_equal(api_wait_ms(f, 1500), API_TIMEOUT);
    fdb_future_destroy(f);
    /* nobody to ask: it waits too */
    FDBDatabase *db = unreachable_db();
    f = fdb_database_get_server_protocol(db, 0);
    assert_int_equal(api_wait_ms(f, 700), API_TIMEOUT);
    fdb_future_cancel(f);
    assert_int_equal(api_wait_ms(f, 100), 1101);
    fdb_future_destroy(f);
    fdb_database_destroy(db);
    /* the network thread's busyness is a fraction */
    double busy = fdb_database_get_main_thread_busyness(g_env.db);
    assert_true(busy >= 0.0 && busy <= 1.0);
}

/* ---------------- limits and illegal keys ---------------- */

static void test_key_size_limit(void **state)
{
    (void)state;
    PFX(p, "keylimit");
    int pl = (int)strlen(p);
    char *big = malloc(10001);
    memset(big, 'k', 10001);
    memcpy(big, p, (size_t)pl);

    /* exactly 10,000 bytes is legal */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(big), 10000, S("v"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    int present = 0;
    assert_int_equal(api_get(tr, big, 10000, 0, &present, NULL, 0, NULL), 0);
    assert_int_equal(present, 1);
    fdb_transaction_reset(tr);

    /* reading a key too long to exist is not an error: it is absent (getMaxReadKeySize) */
    char *huge = malloc(20000);
    memset(huge, 'k', 20000);
    present = 1;
    assert_int_equal(api_get(tr, huge, 20000, 0, &present, NULL, 0, NULL), 0);
    assert_int_equal(present, 0);
    free(huge);
    fdb_transaction_reset(tr);

    /* 10,001: key_too_large on the next operation and on commit */
    fdb_transaction_set(tr, S(big), 10001, S("v"), 1);
    assert_int_equal(api_commit(tr), 2102);
    fdb_transaction_reset(tr);
    fdb_transaction_set(tr, S(big), 10001, S("v"), 1);
    assert_int_equal(api_get(tr, p, pl, 0, &present, NULL, 0, NULL), 2102);
    fdb_transaction_reset(tr);
    /* FDB ignores a clear of a key too large to exist */
    fdb_transaction_clear(tr, S(big), 10001);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    fdb_transaction_atomic_op(tr, S(big), 10001, S("\x01\0\0\0"), 4, FDB_MUTATION_TYPE_ADD);
    assert_int_equal(api_commit(tr), 2102);
    /* non-retryable: on_error hands it back */
    assert_int_equal(api_on_error(tr, 2102), 2102);
    fdb_transaction_destroy(tr);
    free(big);
}

static void test_value_size_limit(void **state)
{
    (void)state;
    PFX(p, "vallimit");
    K(k, p, "k");
    char *big = malloc(100001);
    memset(big, 'v', 100001);
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(k), L(k), S(big), 100000);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    int present = 0, len = 0;
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, 100000);
    fdb_transaction_reset(tr);
    fdb_transaction_set(tr, S(k), L(k), S(big), 100001);
    assert_int_equal(api_commit(tr), 2103);
    fdb_transaction_reset(tr);
    fdb_transaction_set(tr, S(k), L(k), S(big), 100001);
    assert_int_equal(api_get(tr, k, L(k), 0, &present, NULL, 0, NULL), 2103);
    fdb_transaction_destroy(tr);
    free(big);
}

static void test_system_keys_need_access(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    int present;
    /* reading \xff... */
    assert_int_equal(api_get(tr, "\xff/coordinators", 15, 0, &present, NULL, 0, NULL), 2004);
    fdb_transaction_reset(tr);
    /* writing \xff... */
    fdb_transaction_set(tr, S("\xff\x02"), 2, S("bar"), 3);
    assert_int_equal(api_commit(tr), 2004);
    fdb_transaction_reset(tr);
    fdb_transaction_clear(tr, S("\xff\x02"), 2);
    assert_int_equal(api_commit(tr), 2004);
    fdb_transaction_reset(tr);
    fdb_transaction_clear_range(tr, S("t/"), 2, S("\xff\x03"), 2);
    assert_int_equal(api_commit(tr), 2004);
    fdb_transaction_reset(tr);

    /* with ACCESS_SYSTEM_KEYS it works */
    for (;;) {
        assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0), 0);
        fdb_transaction_set(tr, S("\xff\x02/cfdb-api-test"), 16, S("bar"), 3);
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_reset(tr);
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0), 0);
    char buf[8];
    int len = 0;
    assert_int_equal(api_get(tr, "\xff\x02/cfdb-api-test", 16, 0, &present, buf, sizeof buf, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, 3);
    assert_memory_equal(buf, "bar", 3);
    fdb_transaction_destroy(tr);
}

static void test_system_range_read_needs_access(void **state)
{
    (void)state;
    /* a get_range whose end key is past \xff (e.g. [\xff, \xff\xff) or ["t/", \xff\x01))
     * fails without READ_SYSTEM_KEYS with key_outside_legal_range (2004) (RYW getRange:
     * begin or end key > getMaxReadKey()) */
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff"), 1),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\xff"), 2), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 2004);
    fdb_transaction_reset(tr);
    f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("t/"), 2),
                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff\x01"), 2), 0, 0,
                                  FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 2004);
    fdb_transaction_reset(tr);
    /* ending exactly at \xff is legal */
    f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xfe"), 1),
                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S("\xff"), 1), 0, 0,
                                  FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 0);
    fdb_transaction_destroy(tr);
}

static void test_inverted_clear_range(void **state)
{
    (void)state;
    PFX(p, "inverted");
    K(a, p, "a");
    K(b, p, "b");
    FDBTransaction *tr = api_tr();
    fdb_transaction_clear_range(tr, S(b), L(b), S(a), L(a));
    assert_int_equal(api_commit(tr), 2005);
    fdb_transaction_reset(tr);
    fdb_transaction_clear_range(tr, S(b), L(b), S(a), L(a));
    int present;
    assert_int_equal(api_get(tr, a, L(a), 0, &present, NULL, 0, NULL), 2005);
    fdb_transaction_reset(tr);
    /* an empty range [a, a) is fine */
    fdb_transaction_clear_range(tr, S(a), L(a), S(a), L(a));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

static void test_inverted_get_range_is_empty(void **state)
{
    (void)state;
    PFX(p, "invrange");
    K(a, p, "a");
    K(b, p, "b");
    put(a, "x");
    put(b, "y");
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(b), L(b)),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(a), L(a)), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n = -1;
    fdb_bool_t more = 1;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 0);
    assert_false(more);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* ---------------- errors ---------------- */

static void test_error_strings(void **state)
{
    (void)state;
    assert_string_equal(fdb_get_error(0), "Success");
    assert_string_equal(fdb_get_error(1007), "Transaction is too old to perform reads or be committed");
    assert_string_equal(fdb_get_error(1009), "Request for future version");
    assert_string_equal(fdb_get_error(1020), "Transaction not committed due to conflict with another transaction");
    assert_string_equal(fdb_get_error(1021), "Transaction may or may not have committed");
    assert_string_equal(fdb_get_error(1025), "Operation aborted because the transaction was cancelled");
    assert_string_equal(fdb_get_error(1031), "Operation aborted because the transaction timed out");
    assert_string_equal(fdb_get_error(2004), "Key outside legal range");
    const char *u = fdb_get_error(31999);
    assert_non_null(u);
    assert_true(strlen(u) > 0);
}

static void test_error_predicates(void **state)
{
    (void)state;
    const int R = FDB_ERROR_PREDICATE_RETRYABLE, M = FDB_ERROR_PREDICATE_MAYBE_COMMITTED,
              N = FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED;
    int retryable[] = { 1007, 1009, 1020, 1021, 1037, 1038, 1039, 1042, 1051, 1078 };
    for (size_t i = 0; i < sizeof retryable / sizeof *retryable; i++)
        assert_true(fdb_error_predicate(R, retryable[i]));
    int not_retryable[] = { 0, 1000, 1004, 1025, 1031, 1036, 1101, 2000, 2004, 2005, 2006, 2007,
                            2011, 2020, 2023, 2100, 2101, 2102, 2103, 2108, 2200, 4000, 4100 };
    for (size_t i = 0; i < sizeof not_retryable / sizeof *not_retryable; i++)
        assert_false(fdb_error_predicate(R, not_retryable[i]));
    assert_true(fdb_error_predicate(M, 1021));
    assert_true(fdb_error_predicate(M, 1039));
    int not_maybe[] = { 1000, 1004, 1007, 1020, 1025, 1038, 1101, 2002 };
    for (size_t i = 0; i < sizeof not_maybe / sizeof *not_maybe; i++)
        assert_false(fdb_error_predicate(M, not_maybe[i]));
    int rnc[] = { 1007, 1009, 1020, 1037, 1038, 1042, 1051, 1078 };
    for (size_t i = 0; i < sizeof rnc / sizeof *rnc; i++)
        assert_true(fdb_error_predicate(N, rnc[i]));
    int not_rnc[] = { 1021, 1025, 1031, 1039, 2004 };
    for (size_t i = 0; i < sizeof not_rnc / sizeof *not_rnc; i++)
        assert_false(fdb_error_predicate(N, not_rnc[i]));
    assert_false(fdb_error_predicate(99999, 1020));
}

/* Option values are checked on the network thread in libfdb_c (ThreadSafeTransaction::setOption):
 * a SIZE_LIMIT outside [32, 10,000,000] is accepted by set_option and the commit fails with
 * invalid_option_value (2006); the next attempt after on_error has no such error. */
static void test_size_limit_out_of_range_fails_the_commit(void **state)
{
    (void)state;
    int64_t bad[] = { 31, 10000001 };
    for (int i = 0; i < 2; i++) {
        FDBTransaction *tr = api_tr();
        assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, (const uint8_t *)&bad[i], 8), 0);
        fdb_transaction_set(tr, (const uint8_t *)"size_limit_k", 12, (const uint8_t *)"v", 1);
        assert_int_equal(api_commit(tr), 2006);
        fdb_transaction_destroy(tr);
    }
    int64_t ok = 1000;
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, (const uint8_t *)&ok, 8), 0);
    fdb_transaction_set(tr, (const uint8_t *)"size_limit_k", 12, (const uint8_t *)"v", 1);
    assert_int_equal(api_commit(tr), 0);
    /* and a commit over the limit is transaction_too_large (2101) */
    fdb_transaction_reset(tr);
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, (const uint8_t *)&ok, 8), 0);
    char big[2000];
    memset(big, 'x', sizeof big);
    fdb_transaction_set(tr, (const uint8_t *)"size_limit_k", 12, (const uint8_t *)big, sizeof big);
    assert_int_equal(api_commit(tr), 2101);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest version_tests[] = {
        cmocka_unit_test(test_api_version_header_too_new),
        cmocka_unit_test(test_api_version_select_twice),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_get_clear),
        cmocka_unit_test(test_unknown_option_codes),
        cmocka_unit_test(test_size_limit_out_of_range_fails_the_commit),
        cmocka_unit_test(test_get_missing),
        cmocka_unit_test(test_empty_value_and_binary_key),
        cmocka_unit_test(test_clear_range),
        cmocka_unit_test(test_ryw_set_clear),
        cmocka_unit_test(test_ryw_clear_range),
        cmocka_unit_test(test_ryw_get_range_want_all_stops_early),
        cmocka_unit_test(test_ryw_get_range_cleared_region_is_known),
        cmocka_unit_test(test_ryw_key_selectors),
        cmocka_unit_test(test_ryw_atomic),
        cmocka_unit_test(test_ryw_get_range_merges),
        cmocka_unit_test(test_snapshot_reads_see_own_writes),
        cmocka_unit_test(test_read_your_writes_disable),
        cmocka_unit_test(test_read_version_monotonic),
        cmocka_unit_test(test_set_read_version),
        cmocka_unit_test(test_committed_version),
        cmocka_unit_test(test_approximate_size),
        cmocka_unit_test(test_reset_discards_writes),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_cancel_grv_and_on_error),
        cmocka_unit_test(test_cancel_pending_commit_or_get),
        cmocka_unit_test(test_unanswered_operations_end),
        cmocka_unit_test(test_server_protocol),
        cmocka_unit_test(test_total_cost),
        cmocka_unit_test(test_client_status),
        cmocka_unit_test(test_special_keys),
        cmocka_unit_test(test_commit_waits_for_reads),
        cmocka_unit_test(test_commit_and_abandoned_reads),
        cmocka_unit_test(test_timeout_semantics),
        cmocka_unit_test(test_metadata_version_key),
        cmocka_unit_test(test_key_size_limit),
        cmocka_unit_test(test_value_size_limit),
        cmocka_unit_test(test_system_keys_need_access),
        cmocka_unit_test(test_system_range_read_needs_access),
        cmocka_unit_test(test_inverted_clear_range),
        cmocka_unit_test(test_inverted_get_range_is_empty),
        cmocka_unit_test(test_error_strings),
        cmocka_unit_test(test_error_predicates),
    };
    int failed = cmocka_run_group_tests_name("api_version", version_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("api_basics", tests, group_setup, group_teardown);
    return failed ? 1 : 0;
}
