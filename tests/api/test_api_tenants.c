/* Tenants through fdb_c.h, end to end against cfdb-server (started with tenant_mode
 * optional): tenants made by writing the \xff/tenant/ system keys as TenantManagement does
 * (tenant_fixture.c), then
 *   - fdb_tenant_get_id answers the id; a missing tenant gives tenant_not_found (2131) to
 *     get_id, reads and commits, latched in the handle;
 *   - isolation: each tenant sees only its own keys under the same names, never the raw
 *     keyspace's; a raw read of the prefix (the id as 8 big-endian bytes) shows the data;
 *     clear_range in a tenant clears only its keys;
 *   - range reads and get_key selectors stop at the tenant's edges;
 *   - system keys: reading \xff in a tenant is key_outside_legal_range (2004), and
 *     READ_SYSTEM_KEYS / ACCESS_SYSTEM_KEYS / RAW_ACCESS are invalid_option (2007) there;
 *   - versionstamped keys (the offset is moved past the prefix) and values in a tenant;
 *   - conflicts are per tenant; watches fire for the tenant's key, not for the raw key of the
 *     same name;
 *   - estimated range size, split points and get_mapped_range in a tenant;
 *   - a tenant handle destroyed before its transactions: they keep it alive;
 *   - tenant modes: required refuses tenant-less transactions (2130) unless raw access,
 *     disabled refuses tenants (2136);
 *   - what FoundationDB 7.3.77's C unit tests ask of the management calls:
 *     force_recovery_with_data_loss answers, create_snapshot checks its uid (2509) and the
 *     cluster answers snap_path_not_whitelisted (2505); reboot_worker waits for the cluster
 *     controller's worker list (cancelled here: the dev server has none to give). */
#include "api_helpers.h"
#include "tenant_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static int64_t g_alpha, g_beta;

static int group_setup(void **state)
{
    (void)state;
    static const char *const args[] = { "--tenant-mode", "optional", NULL };
    if (api_env_setup(args))
        return -1;
    if (tf_create_tenant(g_env.db, "alpha", &g_alpha) || tf_create_tenant(g_env.db, "beta", &g_beta))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* the tenant's value of key into buf ("" and returns 0 when absent), or the error */
static fdb_error_t tenant_get(FDBTenant *t, const void *key, int klen, char *buf, int cap)
{
    FDBTransaction *tr = tf_tenant_tr(t);
    int present = 0, len = 0;
    fdb_error_t e = api_get(tr, key, klen, 0, &present, buf, cap - 1, &len);
    buf[present && !e ? len : 0] = 0;
    fdb_transaction_destroy(tr);
    return e;
}

/* the tenant's rows in [b, e) as "k=v," text */
static fdb_error_t tenant_range(FDBTenant *t, const char *b, int bl, const char *e, int el, int reverse, char *out,
                                size_t cap)
{
    FDBTransaction *tr = tf_tenant_tr(t);
    FDBFuture *f = fdb_transaction_get_range(tr, S(b), bl, 0, 1, S(e), el, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0,
                                             0, reverse);
    fdb_error_t err = api_wait(f);
    out[0] = 0;
    if (!err) {
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        size_t o = 0;
        for (int i = 0; i < n && o < cap; i++)
            o += (size_t)snprintf(out + o, cap - o, "%.*s=%.*s,", kv[i].key_length, (const char *)kv[i].key,
                                  kv[i].value_length, (const char *)kv[i].value);
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return err;
}

static void prefixed(int64_t id, const char *key, uint8_t *out, int *len)
{
    tf_prefix(id, out);
    memcpy(out + 8, key, strlen(key));
    *len = 8 + (int)strlen(key);
}

/* ---------- ids ---------- */

static void test_get_id(void **state)
{
    (void)state;
    assert_true(g_alpha >= 1 && g_beta == g_alpha + 1);
    FDBTenant *t = tf_open_tenant("alpha");
    FDBFuture *f = fdb_tenant_get_id(t);
    assert_int_equal(api_wait(f), 0);
    int64_t id = 0;
    assert_int_equal(fdb_future_get_int64(f, &id), 0);
    assert_int_equal(id, g_alpha);
    fdb_future_destroy(f);
    fdb_tenant_destroy(t);
    t = tf_open_tenant("beta");
    f = fdb_tenant_get_id(t);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_int64(f, &id), 0);
    assert_int_equal(id, g_beta);
    fdb_future_destroy(f);
    fdb_tenant_destroy(t);
}

static void test_missing_tenant(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("no-such-tenant");
    assert_int_equal(api_wait_destroy(fdb_tenant_get_id(t)), 2131);
    char buf[16];
    assert_int_equal(tenant_get(t, "k", 1, buf, sizeof buf), 2131);
    FDBTransaction *tr = tf_tenant_tr(t);
    fdb_transaction_set(tr, S("k"), 1, S("v"), 1);
    assert_int_equal(api_commit(tr), 2131);
    /* not retryable: on_error gives it back */
    assert_int_equal(api_on_error(tr, 2131), 2131);
    /* the read version needs no tenant (getReadVersion does not wait for it) */
    fdb_transaction_reset(tr);
    assert_int_equal(api_wait_destroy(fdb_transaction_get_read_version(tr)), 0);
    fdb_transaction_destroy(tr);
    /* latched: creating the tenant afterwards does not revive this handle */
    int64_t id;
    assert_int_equal(tf_create_tenant(g_env.db, "no-such-tenant", &id), 0);
    assert_int_equal(api_wait_destroy(fdb_tenant_get_id(t)), 2131);
    fdb_tenant_destroy(t);
    /* a new handle finds it */
    t = tf_open_tenant("no-such-tenant");
    FDBFuture *f = fdb_tenant_get_id(t);
    assert_int_equal(api_wait(f), 0);
    int64_t got;
    assert_int_equal(fdb_future_get_int64(f, &got), 0);
    assert_int_equal(got, id);
    fdb_future_destroy(f);
    fdb_tenant_destroy(t);
}

/* ---------- isolation and prefixes ---------- */

static void test_isolation_and_prefix(void **state)
{
    (void)state;
    FDBTenant *a = tf_open_tenant("alpha"), *b = tf_open_tenant("beta");
    tf_tenant_set(a, "iso/k", "in-alpha");
    tf_tenant_set(b, "iso/k", "in-beta");
    assert_int_equal(api_set_committed("iso/k", 5, "raw", 3), 0);
    char buf[64];
    assert_int_equal(tenant_get(a, "iso/k", 5, buf, sizeof buf), 0);
    assert_string_equal(buf, "in-alpha");
    assert_int_equal(tenant_get(b, "iso/k", 5, buf, sizeof buf), 0);
    assert_string_equal(buf, "in-beta");
    /* the raw keyspace holds the tenants' data under their prefixes */
    uint8_t k[64];
    int kl, present, len;
    prefixed(g_alpha, "iso/k", k, &kl);
    assert_int_equal(api_read_committed(k, kl, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_int_equal(len, 8);
    assert_memory_equal(buf, "in-alpha", 8);
    prefixed(g_beta, "iso/k", k, &kl);
    assert_int_equal(api_read_committed(k, kl, &present, buf, sizeof buf, &len), 0);
    assert_true(present && len == 7 && memcmp(buf, "in-beta", 7) == 0);
    assert_int_equal(api_read_committed("iso/k", 5, &present, buf, sizeof buf, &len), 0);
    assert_true(present && len == 3 && memcmp(buf, "raw", 3) == 0);
    /* a raw range read of alpha's prefix shows exactly its rows, prefixed */
    FDBTransaction *tr = api_tr();
    uint8_t pb[8], pe[8];
    tf_prefix(g_alpha, pb);
    tf_prefix(g_alpha + 1, pe);
    FDBFuture *f = fdb_transaction_get_range(tr, pb, 8, 0, 1, pe, 8, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    int found = 0;
    for (int i = 0; i < n; i++) {
        assert_true(kv[i].key_length >= 8 && memcmp(kv[i].key, pb, 8) == 0);
        if (kv[i].key_length == 13 && memcmp((const char *)kv[i].key + 8, "iso/k", 5) == 0)
            found++;
    }
    assert_int_equal(found, 1);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    /* a tenant's clear_range clears its keys only */
    tr = tf_tenant_tr(a);
    fdb_transaction_clear_range(tr, S("iso/"), 4, S("iso0"), 4);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(tenant_get(a, "iso/k", 5, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(tenant_get(b, "iso/k", 5, buf, sizeof buf), 0);
    assert_string_equal(buf, "in-beta");
    assert_int_equal(api_read_committed("iso/k", 5, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    fdb_tenant_destroy(a);
    fdb_tenant_destroy(b);
}

static void test_range_and_selectors_at_edges(void **state)
{
    (void)state;
    int64_t id, id2;
    assert_int_equal(tf_create_tenant(g_env.db, "edges", &id), 0);
    assert_int_equal(tf_create_tenant(g_env.db, "edges-after", &id2), 0);
    FDBTenant *t = tf_open_tenant("edges");
    tf_tenant_set(t, "b", "2");
    tf_tenant_set(t, "a", "1");
    tf_tenant_set(t, "c", "3");
    /* keys in the tenants just before and just after it */
    FDBTenant *before = tf_open_tenant("alpha"), *after = tf_open_tenant("edges-after");
    tf_tenant_set(before, "zz", "alpha-last");
    tf_tenant_set(after, "", "beta-first");
    char out[256];
    assert_int_equal(tenant_range(t, "", 0, "\xff", 1, 0, out, sizeof out), 0);
    assert_string_equal(out, "a=1,b=2,c=3,");
    assert_int_equal(tenant_range(t, "", 0, "\xff", 1, 1, out, sizeof out), 0);
    assert_string_equal(out, "c=3,b=2,a=1,");
    /* selectors: before the first key resolves to the tenant's start, past the last to its end */
    FDBTransaction *tr = tf_tenant_tr(t);
    FDBFuture *f = fdb_transaction_get_key(tr, S("a"), 1, 0, 0, 0); /* lastLessThan("a") */
    assert_int_equal(api_wait(f), 0);
    const uint8_t *key;
    int kl;
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_int_equal(kl, 0);
    fdb_future_destroy(f);
    f = fdb_transaction_get_key(tr, S("c"), 1, 1, 1, 0); /* firstGreaterThan("c") */
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_int_equal(kl, 1);
    assert_int_equal(key[0], 0xff);
    fdb_future_destroy(f);
    f = fdb_transaction_get_key(tr, S("a"), 1, 0, 2, 0); /* firstGreaterOrEqual("a") + 1 */
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_int_equal(kl, 1);
    assert_int_equal(key[0], 'b');
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(before);
    fdb_tenant_destroy(after);
    fdb_tenant_destroy(t);
}

/* With read-your-writes off, NativeAPI getKey follows the storage servers' answers: they search
 * the shard clamped to the tenant (TenantAPI::clampRangeToTenant: the prefix .. prefix +
 * \xff\xff), so a selector past the tenant's last key comes back as \xff\xff + offset, which
 * getKey answers as allKeys.end and RYW's readThrough as \xff. (A server clamping to prefix +
 * \xff instead gives a location that does not hold the relative key \xff: the client ends
 * with wrong_shard_server, 1001, after TXN_MAX_BAD_REPLIES lookups.) */
static void test_native_get_key_past_tenant_end(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("edges");
    FDBTransaction *tr = tf_tenant_tr(t);
    FDBFuture *f;
    const uint8_t *key;
    int kl;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    f = fdb_transaction_get_key(tr, S("a"), 1, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_int_equal(kl, 0);
    fdb_future_destroy(f);
    f = fdb_transaction_get_key(tr, S("c"), 1, 1, 5, 0);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_key(f, &key, &kl), 0);
    assert_true(kl == 1 && key[0] == 0xff);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
}

static void test_system_keys_in_tenant(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("alpha");
    char buf[16];
    assert_int_equal(tenant_get(t, "\xff/x", 3, buf, sizeof buf), 2004);
    FDBTransaction *tr = tf_tenant_tr(t);
    fdb_transaction_set(tr, S("\xff/x"), 3, S("v"), 1);
    assert_int_equal(api_commit(tr), 2004);
    static const FDBTransactionOption refused[] = { FDB_TR_OPTION_READ_SYSTEM_KEYS, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS,
                                                    FDB_TR_OPTION_RAW_ACCESS };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        fdb_transaction_reset(tr);
        assert_int_equal(fdb_transaction_set_option(tr, refused[i], NULL, 0), 0);
        int present, len;
        assert_int_equal(api_get(tr, S("k"), 1, 0, &present, buf, sizeof buf, &len), 2007);
    }
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
}

/* ---------- versionstamps ---------- */

static void test_versionstamps_in_tenant(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("beta");
    FDBTransaction *tr = tf_tenant_tr(t);
    /* key "vs/" + 10 placeholder bytes, offset 3 (little-endian) */
    uint8_t key[17] = { 'v', 's', '/', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0 };
    fdb_transaction_atomic_op(tr, key, sizeof key, S("stamped"), 7, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    uint8_t val[15] = { (uint8_t)'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 }; /* offset 1 */
    fdb_transaction_atomic_op(tr, S("vsv"), 3, val, sizeof val, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    FDBFuture *vsf = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 0);
    assert_int_equal(api_wait(vsf), 0);
    const uint8_t *vs;
    int vsl;
    assert_int_equal(fdb_future_get_key(vsf, &vs, &vsl), 0);
    assert_int_equal(vsl, 10);
    uint8_t stamp[10];
    memcpy(stamp, vs, 10);
    fdb_future_destroy(vsf);
    fdb_transaction_destroy(tr);
    /* in the tenant: the key with the stamp where the offset said, relative */
    uint8_t want[13] = { 'v', 's', '/' };
    memcpy(want + 3, stamp, 10);
    char buf[64];
    assert_int_equal(tenant_get(t, want, sizeof want, buf, sizeof buf), 0);
    assert_string_equal(buf, "stamped");
    int present, len;
    tr = tf_tenant_tr(t);
    assert_int_equal(api_get(tr, S("vsv"), 3, 0, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_int_equal(len, 11);
    assert_int_equal(buf[0], 'x');
    assert_memory_equal(buf + 1, stamp, 10);
    fdb_transaction_destroy(tr);
    /* raw: prefix + the same key */
    uint8_t raw[21];
    tf_prefix(g_beta, raw);
    memcpy(raw + 8, want, sizeof want);
    assert_int_equal(api_read_committed(raw, sizeof raw, &present, buf, sizeof buf, &len), 0);
    assert_true(present && len == 7 && memcmp(buf, "stamped", 7) == 0);
    fdb_tenant_destroy(t);
}

/* ---------- conflicts, watches ---------- */

static void test_conflicts_are_per_tenant(void **state)
{
    (void)state;
    FDBTenant *a = tf_open_tenant("alpha"), *b = tf_open_tenant("beta");
    tf_tenant_set(a, "cf", "0");
    tf_tenant_set(b, "cf", "0");
    char buf[16];
    int present, len;
    FDBTransaction *t1 = tf_tenant_tr(a), *t2 = tf_tenant_tr(a), *t3 = tf_tenant_tr(b);
    assert_int_equal(api_get(t1, S("cf"), 2, 0, &present, buf, sizeof buf, &len), 0);
    assert_int_equal(api_get(t3, S("cf"), 2, 0, &present, buf, sizeof buf, &len), 0);
    fdb_transaction_set(t2, S("cf"), 2, S("1"), 1);
    assert_int_equal(api_commit(t2), 0);
    /* beta's reader does not conflict with alpha's write of the same name */
    fdb_transaction_set(t3, S("other"), 5, S("x"), 1);
    assert_int_equal(api_commit(t3), 0);
    /* alpha's reader does */
    fdb_transaction_set(t1, S("other"), 5, S("x"), 1);
    assert_int_equal(api_commit(t1), 1020);
    fdb_transaction_destroy(t1);
    fdb_transaction_destroy(t2);
    fdb_transaction_destroy(t3);
    fdb_tenant_destroy(a);
    fdb_tenant_destroy(b);
}

static void test_watch_in_tenant(void **state)
{
    (void)state;
    FDBTenant *a = tf_open_tenant("alpha");
    tf_tenant_set(a, "w", "0");
    FDBTransaction *tr = tf_tenant_tr(a);
    FDBFuture *w = fdb_transaction_watch(tr, S("w"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    /* the raw key of the same name and beta's are other keys */
    assert_int_equal(api_set_committed("w", 1, "raw", 3), 0);
    FDBTenant *b = tf_open_tenant("beta");
    tf_tenant_set(b, "w", "b");
    usleep(200 * 1000);
    assert_false(fdb_future_is_ready(w));
    tf_tenant_set(a, "w", "1");
    assert_int_equal(api_wait_ms(w, 5000), 0);
    fdb_future_destroy(w);
    fdb_tenant_destroy(a);
    fdb_tenant_destroy(b);
}

/* ---------- metadata reads, mapped ranges ---------- */

static void test_metadata_and_mapped_in_tenant(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("alpha");
    FDBTransaction *tr = tf_tenant_tr(t);
    FDBFuture *f = fdb_transaction_get_estimated_range_size_bytes(tr, S(""), 0, S("\xff"), 1);
    assert_int_equal(api_wait(f), 0);
    int64_t size = -1;
    assert_int_equal(fdb_future_get_int64(f, &size), 0);
    assert_true(size >= 0);
    fdb_future_destroy(f);
    f = fdb_transaction_get_range_split_points(tr, S("a"), 1, S("z"), 1, 1000);
    assert_int_equal(api_wait(f), 0);
    const FDBKey *keys;
    int n;
    assert_int_equal(fdb_future_get_key_array(f, &keys, &n), 0);
    assert_true(n >= 2);
    assert_int_equal(keys[0].key_length, 1);
    assert_int_equal(keys[0].key[0], 'a');
    assert_int_equal(keys[n - 1].key[0], 'z');
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);

    /* a mapped range: index rows ("i", value, key) point at records ("r", key) in the tenant */
    static const uint8_t rec1[] = { 0x02, 'r', 0x00, 0x02, '1', 0x00 };
    static const uint8_t rec2[] = { 0x02, 'r', 0x00, 0x02, '2', 0x00 };
    static const uint8_t idx1[] = { 0x02, 'i', 0x00, 0x02, 'v', 0x00, 0x02, '1', 0x00 };
    static const uint8_t idx2[] = { 0x02, 'i', 0x00, 0x02, 'v', 0x00, 0x02, '2', 0x00 };
    static const uint8_t mapper[] = { 0x02, 'r', 0x00, 0x02, '{', 'K', '[', '2', ']', '}', 0x00, 0x02, '{', '.', '.',
                                      '.', '}', 0x00 };
    tr = tf_tenant_tr(t);
    fdb_transaction_set(tr, rec1, sizeof rec1, S("one"), 3);
    fdb_transaction_set(tr, rec2, sizeof rec2, S("two"), 3);
    fdb_transaction_set(tr, idx1, sizeof idx1, S(""), 0);
    fdb_transaction_set(tr, idx2, sizeof idx2, S(""), 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    static const uint8_t ib[] = { 0x02, 'i', 0x00 }, ie[] = { 0x02, 'i', 0x01 };
    f = fdb_transaction_get_mapped_range(tr, ib, sizeof ib, 0, 1, ie, sizeof ie, 0, 1, mapper, sizeof mapper, 0, 0,
                                         FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBMappedKeyValue *m;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &m, &n, &more), 0);
    assert_int_equal(n, 2);
    assert_int_equal(m[0].getRange.m_size, 1);
    assert_int_equal(m[0].getRange.data[0].value_length, 3);
    assert_memory_equal(m[0].getRange.data[0].value, "one", 3);
    assert_int_equal(m[1].getRange.m_size, 1);
    assert_memory_equal(m[1].getRange.data[0].value, "two", 3);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
}

/* ---------- references ---------- */

static void test_transactions_keep_tenant(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("alpha");
    FDBTransaction *tr = tf_tenant_tr(t);
    fdb_tenant_destroy(t); /* the transaction holds it */
    fdb_transaction_set(tr, S("kept"), 4, S("yes"), 3);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    char buf[16];
    int present, len;
    assert_int_equal(api_get(tr, S("kept"), 4, 0, &present, buf, sizeof buf, &len), 0);
    assert_true(present && len == 3 && memcmp(buf, "yes", 3) == 0);
    fdb_transaction_destroy(tr);
}

/* FoundationDB's "Tenant create, access, and delete": a tenant removed while its handle (and
 * a transaction of it) exists: reads at a later version find no tenant (2131, from the storage
 * server), and it is not retryable. */
static void test_tenant_deleted(void **state)
{
    (void)state;
    int64_t id;
    assert_int_equal(tf_create_tenant(g_env.db, "gone", &id), 0);
    FDBTenant *t = tf_open_tenant("gone");
    tf_tenant_set(t, "foo", "bar");
    char buf[16];
    assert_int_equal(tenant_get(t, "foo", 3, buf, sizeof buf), 0);
    assert_string_equal(buf, "bar");
    tf_tenant_set(t, "foo", NULL);
    FDBTransaction *tr = tf_tenant_tr(t);
    int present, len;
    assert_int_equal(api_get(tr, S("foo"), 3, 0, &present, buf, sizeof buf, &len), 0);
    assert_false(present);
    assert_int_equal(tf_delete_tenant(g_env.db, "gone", id), 0);
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, S("foo"), 3, 0, &present, buf, sizeof buf, &len), 2131);
    assert_int_equal(api_on_error(tr, 2131), 2131);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
}

/* What FoundationDB's unit tests ask of read versions and size limits, in a tenant. */
static void test_read_version_and_size_limit_in_tenant(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("alpha");
    FDBTransaction *tr = tf_tenant_tr(t);
    /* an old read version: transaction_too_old */
    fdb_transaction_set_read_version(tr, 1);
    char buf[16];
    int present, len;
    assert_int_equal(api_get(tr, S("rv"), 2, 0, &present, buf, sizeof buf, &len), 1007);
    /* a version from the future: future_version */
    fdb_transaction_reset(tr);
    fdb_transaction_set_read_version(tr, (int64_t)1 << 62);
    assert_int_equal(api_get(tr, S("rv"), 2, 0, &present, buf, sizeof buf, &len), 1009);
    /* SIZE_LIMIT counts the tenant's writes: a commit above it is transaction_too_large */
    fdb_transaction_reset(tr);
    int64_t limit = 100;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SIZE_LIMIT, (const uint8_t *)&limit, 8), 0);
    static const char big[200] = { 'v' };
    fdb_transaction_set(tr, S("big"), 3, (const uint8_t *)big, sizeof big);
    assert_int_equal(api_commit(tr), 2101);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
}

/* ---------- tenant modes ---------- */

/* Retries op until it answers want: the mode reaches the client with the next ClientDBInfo. */
static fdb_error_t poll_get(FDBTenant *t, fdb_error_t want, int raw)
{
    fdb_error_t e = -1;
    for (int i = 0; i < 100; i++) {
        FDBTransaction *tr = t ? tf_tenant_tr(t) : api_tr();
        if (raw)
            fdb_transaction_set_option(tr, FDB_TR_OPTION_RAW_ACCESS, NULL, 0);
        char buf[16];
        int present, len;
        e = api_get(tr, S("mode-k"), 6, 0, &present, buf, sizeof buf, &len);
        fdb_transaction_destroy(tr);
        if (e == want)
            return e;
        usleep(50 * 1000);
    }
    return e;
}

static void test_tenant_modes(void **state)
{
    (void)state;
    FDBTenant *t = tf_open_tenant("alpha");
    assert_int_equal(tf_set_tenant_mode(g_env.db, 2), 0);
    assert_int_equal(poll_get(NULL, 2130, 0), 2130);
    /* raw access still works; a tenant's transaction works */
    assert_int_equal(poll_get(NULL, 0, 1), 0);
    assert_int_equal(poll_get(t, 0, 0), 0);
    /* a write-only transaction fails at its commit */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S("mode-k"), 6, S("v"), 1);
    assert_int_equal(api_commit(tr), 2130);
    fdb_transaction_destroy(tr);
    /* back to optional through raw access */
    FDBTransaction *raw = api_tr();
    assert_int_equal(fdb_transaction_set_option(raw, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0), 0);
    fdb_transaction_set(raw, S("\xff/conf/tenant_mode"), L("\xff/conf/tenant_mode"), S("0"), 1);
    assert_int_equal(api_commit(raw), 0);
    fdb_transaction_destroy(raw);
    /* disabled: a tenant is refused, tenant-less transactions work */
    assert_int_equal(poll_get(t, 2136, 0), 2136);
    assert_int_equal(poll_get(NULL, 0, 0), 0);
    assert_int_equal(tf_set_tenant_mode(g_env.db, 1), 0);
    assert_int_equal(poll_get(t, 0, 0), 0);
    fdb_tenant_destroy(t);
}

/* ---------- management calls (FoundationDB's C unit tests ask these) ---------- */

static void test_force_recovery_answers(void **state)
{
    (void)state;
    FDBFuture *f = fdb_database_force_recovery_with_data_loss(g_env.db, S("test_id"), 7);
    assert_int_equal(api_wait_ms(f, 10000), 0);
    fdb_future_destroy(f);
}

static void test_create_snapshot(void **state)
{
    (void)state;
    /* the uid must be 32 hex digits (DatabaseContext::createSnapshot): 2509 without asking */
    FDBFuture *f = fdb_database_create_snapshot(g_env.db, S("invalid_uid"), 11, S("test"), 4);
    assert_int_equal(api_wait_ms(f, 10000), 2509);
    fdb_future_destroy(f);
    f = fdb_database_create_snapshot(g_env.db, S("0123456789abcdefABCDEF012345678g"), 32, S("test"), 4);
    assert_int_equal(api_wait_ms(f, 10000), 2509);
    fdb_future_destroy(f);
    f = fdb_database_create_snapshot(g_env.db, S("0123456789abcdef0123456789abcde"), 31, S("test"), 4);
    assert_int_equal(api_wait_ms(f, 10000), 2509);
    fdb_future_destroy(f);
    /* a valid one reaches a commit proxy, which has no whitelisted binary: 2505 */
    f = fdb_database_create_snapshot(g_env.db, S("0123456789abcdefABCDEF0123456789"), 32, S("test"), 4);
    assert_int_equal(api_wait_ms(f, 10000), 2505);
    fdb_future_destroy(f);
}

/* rebootWorkerActor asks the cluster controller for its workers (GetClientWorkersRequest):
 * an address that is no worker's answers false; the server's own address is rebooted (a
 * one-way RebootRequest) and answers true, and the database keeps working afterwards (the
 * server's proxies come back). Cancelling ends the call with 1101. */
static void test_reboot_worker(void **state)
{
    (void)state;
    int64_t ok = -1;
    FDBFuture *f = fdb_database_reboot_worker(g_env.db, S("127.0.0.1:1"), 11, 0, 0);
    assert_int_equal(api_wait_ms(f, 20000), 0);
    assert_int_equal(fdb_future_get_int64(f, &ok), 0);
    assert_int_equal(ok, 0);
    fdb_future_destroy(f);
    /* the server's own address, from the cluster file ("desc:id@ip:port") */
    char line[300] = "";
    FILE *cf = fopen(g_env.server.cluster_file, "r");
    assert_non_null(cf);
    assert_non_null(fgets(line, sizeof line, cf));
    fclose(cf);
    char *addr = strchr(line, '@');
    assert_non_null(addr);
    addr++;
    addr[strcspn(addr, ",\r\n")] = 0;
    f = fdb_database_reboot_worker(g_env.db, S(addr), (int)strlen(addr), 0, 0);
    assert_int_equal(api_wait_ms(f, 20000), 0);
    assert_int_equal(fdb_future_get_int64(f, &ok), 0);
    assert_int_equal(ok, 1);
    fdb_future_destroy(f);
    char buf[16];
    int present = 0, len = 0;
    FDBTransaction *tr = api_tr();
    assert_int_equal(api_get(tr, S("after-reboot"), 12, 0, &present, buf, sizeof buf, &len), 0);
    fdb_transaction_destroy(tr);
    f = fdb_database_reboot_worker(g_env.db, S("127.0.0.1:1"), 11, 0, 0);
    fdb_future_cancel(f);
    assert_int_equal(api_wait_ms(f, 5000), 1101);
    fdb_future_destroy(f);
    /* a negative duration is taken as 0; destroying the future unwaited is fine too */
    f = fdb_database_reboot_worker(g_env.db, S("127.0.0.1:1"), 11, 1, -5);
    fdb_future_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_id),
        cmocka_unit_test(test_missing_tenant),
        cmocka_unit_test(test_isolation_and_prefix),
        cmocka_unit_test(test_range_and_selectors_at_edges),
        cmocka_unit_test(test_native_get_key_past_tenant_end),
        cmocka_unit_test(test_system_keys_in_tenant),
        cmocka_unit_test(test_versionstamps_in_tenant),
        cmocka_unit_test(test_conflicts_are_per_tenant),
        cmocka_unit_test(test_watch_in_tenant),
        cmocka_unit_test(test_metadata_and_mapped_in_tenant),
        cmocka_unit_test(test_transactions_keep_tenant),
        cmocka_unit_test(test_tenant_deleted),
        cmocka_unit_test(test_read_version_and_size_limit_in_tenant),
        cmocka_unit_test(test_tenant_modes),
        cmocka_unit_test(test_force_recovery_answers),
        cmocka_unit_test(test_create_snapshot),
        cmocka_unit_test(test_reboot_worker),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
