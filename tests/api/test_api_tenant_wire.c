/* What a tenant's transaction sends, field by field, read from the frames cfdb-server records
 * (--trace-frames) with the independent decoder tests/wire/fdb_ref.c. The expected values are
 * derived by hand from FoundationDB 7.3.77:
 *   - GetTenantIdRequest (CommitProxyInterface.h:391-411, serializer(reply, tenantName,
 *     minTenantVersion)): the name, and minTenantVersion = latestVersion (-2), as
 *     DatabaseContext::lookupTenant sends GetTenantIdRequest(tenant, latestVersion)
 *     (NativeAPI.actor.cpp:3481-3483);
 *   - reads (NativeAPI getValue/getKey/getRange, watchValue): the key relative to the tenant
 *     and TenantInfo.tenantId = the tenant's id (TransactionState::getTenantInfo,
 *     NativeAPI.actor.cpp:3537-3566);
 *   - GetKeyServerLocationsRequest (getKeyLocation_internal, NativeAPI.actor.cpp:3036-3037):
 *     the relative key, tenant = TenantInfo(id), minTenantVersion = the read version;
 *   - CommitTransactionRequest (tryCommit + applyTenantPrefix, NativeAPI.actor.cpp:6523-6561,
 *     6603-6609): every mutation's param1 prefixed with the id as 8 big-endian bytes,
 *     ClearRange's param2 too, SetVersionstampedKey's trailing offset + 8, read and write
 *     conflict ranges prefixed, the metadata version key left alone, tenantInfo.tenantId = id,
 *     transaction.tenantIds absent (the proxy fills it). */
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

#include "fdb_ref.h"

static char g_trace[64];
static int64_t g_id;

static int group_setup(void **state)
{
    (void)state;
    strcpy(g_trace, "/tmp/cfdb-tenant-wire-XXXXXX");
    int fd = mkstemp(g_trace);
    if (fd < 0)
        return -1;
    close(fd);
    const char *args[] = { "--trace-frames", g_trace, "--tenant-mode", "optional", NULL };
    if (api_env_setup(args))
        return -1;
    return tf_create_tenant(g_env.db, "wire", &g_id) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    int rc = api_env_teardown();
    unlink(g_trace);
    return rc;
}

/* Every recorded message of type m for which path has value want (want NULL: any), decoded
 * into docs (at most cap); returns how many. */
static int find_all(const ref_msg *m, const char *path, const char *want, ref_doc *docs, int cap)
{
    FILE *f = fopen(g_trace, "r");
    if (!f)
        return 0;
    static char line[1 << 20];
    static uint8_t msg[1 << 19];
    char needle[64];
    snprintf(needle, sizeof needle, "\"file_identifier\": %u,", m->file_id);
    int n = 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        if (!strstr(line, needle))
            continue;
        char *hex = strstr(line, "\"hex\": \"");
        if (!hex)
            continue;
        hex += 8;
        char *end = strchr(hex, '"');
        if (!end)
            continue;
        *end = 0;
        long len = ref_unhex(hex, msg, sizeof msg);
        ref_doc d;
        memset(&d, 0, sizeof d);
        if (len < 0 || ref_read(m, msg, (size_t)len, &d) != 0) {
            ref_doc_free(&d);
            continue;
        }
        const char *got = path ? ref_get(&d, path) : NULL;
        if (!path || (got && (!want || strcmp(got, want) == 0)))
            docs[n++] = d;
        else
            ref_doc_free(&d);
    }
    fclose(f);
    return n;
}

static void free_all(ref_doc *docs, int n)
{
    for (int i = 0; i < n; i++)
        ref_doc_free(&docs[i]);
}

static void assert_field(const ref_doc *doc, const char *path, const char *want)
{
    const char *got = ref_get(doc, path);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: got %s, want %s", path, got ? got : "(none)", want);
}

static char *bytes_text(const void *p, size_t n)
{
    return ref_bytes_value((const uint8_t *)p, n);
}

/* prefix(id) + key (klen bytes) as the decoder prints bytes */
static char *prefixed_text(const void *key, size_t klen)
{
    uint8_t buf[256];
    tf_prefix(g_id, buf);
    memcpy(buf + 8, key, klen);
    return bytes_text(buf, 8 + klen);
}

static char *id_text(void)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)g_id);
    return buf;
}

static void test_lookup_and_reads(void **state)
{
    (void)state;
    FDBTenant *t;
    assert_int_equal(fdb_database_open_tenant(g_env.db, S("wire"), 4, &t), 0);
    FDBTransaction *tr = tf_tenant_tr(t);
    char buf[16];
    int present, len;
    assert_int_equal(api_get(tr, S("wire/get"), 8, 0, &present, buf, sizeof buf, &len), 0);
    FDBFuture *f = fdb_transaction_get_range(tr, S("wire/r0"), 7, 0, 1, S("wire/r9"), 7, 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 0);
    int64_t rv;
    f = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_int64(f, &rv), 0);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);

    ref_doc d[8];
    char *name = bytes_text("wire", 4);
    int n = find_all(&ref_get_tenant_id_request, "tenantName", name, d, 8);
    free(name);
    assert_true(n >= 1);
    assert_field(&d[0], "minTenantVersion", "-2");
    free_all(d, n);

    char *key = bytes_text("wire/get", 8);
    n = find_all(&ref_get_value_request, "key", key, d, 8);
    free(key);
    assert_int_equal(n, 1);
    assert_field(&d[0], "tenantInfo.tenantId", id_text());
    char rvs[32];
    snprintf(rvs, sizeof rvs, "%lld", (long long)rv);
    assert_field(&d[0], "version", rvs);
    free_all(d, n);

    /* the location lookup for it: relative key, the tenant, the read version */
    key = bytes_text("wire/get", 8);
    n = find_all(&ref_get_key_server_locations_request, "begin", key, d, 8);
    free(key);
    assert_true(n >= 1);
    assert_field(&d[0], "tenant.tenantId", id_text());
    assert_field(&d[0], "minTenantVersion", rvs);
    free_all(d, n);

    /* the range read: relative selectors and the tenant */
    key = bytes_text("wire/r0", 7);
    n = find_all(&ref_get_key_values_request, "begin.key", key, d, 8);
    free(key);
    assert_int_equal(n, 1);
    assert_field(&d[0], "tenantInfo.tenantId", id_text());
    char *e = bytes_text("wire/r9", 7);
    assert_field(&d[0], "end.key", e);
    free(e);
    free_all(d, n);
}

static void test_commit_is_prefixed(void **state)
{
    (void)state;
    FDBTenant *t;
    assert_int_equal(fdb_database_open_tenant(g_env.db, S("wire"), 4, &t), 0);
    FDBTransaction *tr = tf_tenant_tr(t);
    char buf[16];
    int present, len;
    assert_int_equal(api_get(tr, S("wc/read"), 7, 0, &present, buf, sizeof buf, &len), 0);
    fdb_transaction_set(tr, S("wc/a"), 4, S("1"), 1);
    fdb_transaction_clear_range(tr, S("wc/b"), 4, S("wc/c"), 4);
    /* "wc/v" + 10 placeholder bytes + offset 4, little-endian */
    uint8_t vk[18] = { 'w', 'c', '/', 'v', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0 };
    fdb_transaction_atomic_op(tr, vk, sizeof vk, S("x"), 1, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);

    ref_doc d[4];
    char *tid = id_text();
    int n = find_all(&ref_commit_transaction_request, "tenantInfo.tenantId", tid, d, 4);
    /* the tenant's first commit in this test group is this one (the fixture's are raw) */
    assert_int_equal(n, 1);
    const ref_doc *c = &d[0];
    /* the write map sends clears first, then sets, in key order */
    char *p;
    assert_field(c, "transaction.mutations[0].type", "1"); /* ClearRange */
    p = prefixed_text("wc/b", 4);
    assert_field(c, "transaction.mutations[0].param1", p);
    free(p);
    p = prefixed_text("wc/c", 4);
    assert_field(c, "transaction.mutations[0].param2", p);
    free(p);
    assert_field(c, "transaction.mutations[1].type", "0"); /* SetValue */
    p = prefixed_text("wc/a", 4);
    assert_field(c, "transaction.mutations[1].param1", p);
    free(p);
    assert_field(c, "transaction.mutations[2].type", "14"); /* SetVersionstampedKey */
    uint8_t moved[18];
    memcpy(moved, vk, sizeof moved);
    moved[14] = 4 + 8; /* the offset past the prefix */
    p = prefixed_text(moved, sizeof moved);
    assert_field(c, "transaction.mutations[2].param1", p);
    free(p);
    /* the read conflict range of the get: [prefix+wc/read, prefix+wc/read\0) travels as
     * (k\0, "") */
    uint8_t rk[8];
    memcpy(rk, "wc/read", 7);
    rk[7] = 0;
    p = prefixed_text(rk, 8);
    assert_field(c, "transaction.read_conflict_ranges[0].begin", p);
    free(p);
    /* the versionstamp makes the transaction self-conflicting (NativeAPI makeSelfConflicting:
     * a read and a write conflict range on \xff/SC/<random uid>), prefixed like the others */
    const char *sc = ref_get(c, "transaction.read_conflict_ranges[1].begin");
    assert_non_null(sc);
    p = prefixed_text("\xff/SC/", 5);
    p[strlen(p) - 1] = 0;
    assert_true(strncmp(sc, p, strlen(p)) == 0);
    free(p);
    assert_field(c, "transaction.read_conflict_ranges.count", "2");
    assert_field(c, "transaction.write_conflict_ranges[2].begin", sc);
    /* write conflict ranges: every one inside the prefix */
    for (int i = 0; i < 4; i++) {
        char path[64];
        snprintf(path, sizeof path, "transaction.write_conflict_ranges[%d].begin", i);
        const char *b = ref_get(c, path);
        if (!b)
            break;
        uint8_t pre[8];
        tf_prefix(g_id, pre);
        char *pt = bytes_text(pre, 8);
        pt[strlen(pt) - 1] = 0; /* without the closing quote: a prefix of the value */
        assert_true(strncmp(b, pt, strlen(pt)) == 0);
        free(pt);
    }
    /* CommitTransactionRef.tenantIds stays absent (the proxy fills it for its resolvers) */
    assert_field(c, "transaction.tenantIds", "none");
    free_all(d, n);
}

static void test_watch_request(void **state)
{
    (void)state;
    FDBTenant *t;
    assert_int_equal(fdb_database_open_tenant(g_env.db, S("wire"), 4, &t), 0);
    FDBTransaction *tr = tf_tenant_tr(t);
    FDBFuture *w = fdb_transaction_watch(tr, S("ww"), 2);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    /* fire it so that the request is surely out and answered */
    tr = tf_tenant_tr(t);
    fdb_transaction_set(tr, S("ww"), 2, S("1"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(api_wait_ms(w, 5000), 0);
    fdb_future_destroy(w);
    fdb_tenant_destroy(t);
    ref_doc d[4];
    char *key = bytes_text("ww", 2);
    int n = find_all(&ref_watch_value_request, "key", key, d, 4);
    free(key);
    assert_true(n >= 1);
    assert_field(&d[0], "tenantInfo.tenantId", id_text());
    free_all(d, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_and_reads),
        cmocka_unit_test(test_commit_is_prefixed),
        cmocka_unit_test(test_watch_request),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
