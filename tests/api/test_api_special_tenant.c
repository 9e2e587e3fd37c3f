/* \xff\xff/management/tenant/ through fdb_c.h against cfdb-server, as libfdb_c 7.3.77's
 * TenantRangeImpl answers it: create by set, delete by clear, list by range read (values are
 * TenantMapEntry::toJson, compared whole), the \xff/tenant/ system keys the commit writes,
 * configure (tenant groups) and rename, and the errors: 2114 without
 * SPECIAL_KEY_SPACE_ENABLE_WRITES, 2136 with tenants disabled, 2133 deleting a tenant with
 * data, 2135 when the next prefix holds data, 2134 for a \xff name, 2131 / 2132 on renames,
 * 2117 with \xff\xff/error_message on conflicting renames. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAP "\xff\xff/management/tenant/map/"
#define SL(x) ((int)sizeof(x) - 1)

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

static void set_sys(const char *key, int klen, const char *value, int vlen)
{
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0), 0);
    if (value)
        fdb_transaction_set(tr, S(key), klen, S(value), vlen);
    else
        fdb_transaction_clear(tr, S(key), klen);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

/* A committed read of a system key. */
static fdb_error_t read_sys(const void *key, int klen, int *present, void *buf, int cap, int *len)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    fdb_error_t e = api_get(tr, key, klen, 0, present, buf, cap, len);
    fdb_transaction_destroy(tr);
    return e;
}

static void tenant_mode(const char *mode)
{
    set_sys("\xff/conf/tenant_mode", SL("\xff/conf/tenant_mode"), mode, mode ? L(mode) : 0);
}

/* One management commit: set (value) or clear (value NULL) of key. */
static fdb_error_t manage(const char *key, int klen, const char *value, int vlen)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    if (value)
        fdb_transaction_set(tr, S(key), klen, S(value), vlen);
    else
        fdb_transaction_clear(tr, S(key), klen);
    fdb_error_t e = api_commit(tr);
    fdb_transaction_destroy(tr);
    return e;
}

static fdb_error_t create(const char *name)
{
    char k[256];
    int n = snprintf(k, sizeof k, MAP "%s", name);
    return manage(k, n, "", 0);
}

static fdb_error_t delete(const char *name)
{
    char k[256];
    int n = snprintf(k, sizeof k, MAP "%s", name);
    return manage(k, n, NULL, 0);
}

/* The listing of the whole map: rows copied into keys / values (NUL-terminated). */
static int list(char keys[][128], char values[][512], int cap)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_RAW_ACCESS, NULL, 0);
    FDBFuture *f = fdb_transaction_get_range(tr, S(MAP), L(MAP), 0, 1, S("\xff\xff/management/tenant/map0"),
                                             L("\xff\xff/management/tenant/map0"), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_true(n <= cap);
    for (int i = 0; i < n; i++) {
        assert_true(kv[i].key_length < 128 && kv[i].value_length < 512);
        memcpy(keys[i], kv[i].key, (size_t)kv[i].key_length);
        keys[i][kv[i].key_length] = 0;
        memcpy(values[i], kv[i].value, (size_t)kv[i].value_length);
        values[i][kv[i].value_length] = 0;
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return n;
}

static int64_t last_id(void)
{
    uint8_t buf[16];
    int present, len;
    assert_int_equal(read_sys("\xff/tenant/lastId", SL("\xff/tenant/lastId"), &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_true(buf[0] > 0x14 && buf[0] <= 0x1c); /* a positive tuple integer */
    int64_t v = 0;
    for (int i = 1; i < len; i++)
        v = (v << 8) | buf[i];
    return v;
}

static int64_t count(void)
{
    uint8_t buf[8] = { 0 };
    int present, len;
    assert_int_equal(read_sys("\xff/tenant/count", SL("\xff/tenant/count"), &present, buf, sizeof buf, &len), 0);
    if (!present)
        return 0;
    assert_int_equal(len, 8);
    int64_t v;
    memcpy(&v, buf, 8);
    return v;
}

/* TenantMapEntry::toJson of an unlocked tenant without a group whose id is < 256 */
static void expected_json(char *out, size_t cap, int64_t id, const char *name_b64, const char *name, const char *group)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    /* 8 bytes 00..00 id: base64 of 7 zero bytes + id byte */
    char prefix64[13];
    snprintf(prefix64, sizeof prefix64, "AAAAAAAAA%c%c=", b64[(id >> 4) & 63], b64[(id & 15) << 2]);
    char grp[128] = "";
    if (group)
        snprintf(grp, sizeof grp, ",\"tenant_group\":%s", group);
    snprintf(out, cap,
             "{\"id\":%lld,\"lock_state\":\"unlocked\",\"name\":{\"base64\":\"%s\",\"printable\":\"%s\"},"
             "\"prefix\":{\"base64\":\"%s\",\"printable\":\"\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x%02llx\"}%s}",
             (long long)id, name_b64, name, prefix64, (long long)id, grp);
}

static void test_writes_need_the_option(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S(MAP "x"), L(MAP "x"), S(""), 0);
    assert_int_equal(api_commit(tr), 2114); /* special_keys_write_disabled */
    fdb_transaction_reset(tr);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S("\xff\xff/management/nothing"), L("\xff\xff/management/nothing"), S(""), 0);
    assert_int_equal(api_commit(tr), 2115); /* special_keys_no_write_module_found */
    fdb_transaction_reset(tr);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_clear_range(tr, S(MAP "a"), L(MAP "a"), S("\xff\xff/management/tenant1"),
                                L("\xff\xff/management/tenant1"));
    assert_int_equal(api_commit(tr), 2116); /* special_keys_cross_module_clear */
    fdb_transaction_destroy(tr);
}

static void test_tenants_disabled(void **state)
{
    (void)state;
    tenant_mode(NULL);
    assert_int_equal(create("nope"), 2136);
    tenant_mode("0");
    assert_int_equal(create("nope"), 2136);
    /* tenant mode required: the management transaction works in raw access */
    tenant_mode("2");
    assert_int_equal(create("required"), 0);
    assert_int_equal(delete("required"), 0);
    tenant_mode("1");
}

static void test_create_list_delete(void **state)
{
    (void)state;
    tenant_mode("1");
    int64_t before = count();
    assert_int_equal(create("alpha"), 0);
    int64_t id = last_id();
    assert_true(id >= 1);
    assert_int_equal(count(), before + 1);
    /* the system keys: nameIndex/tuple("alpha") = tuple(id), map/<id> a versioned entry */
    uint8_t buf[256];
    int present, len;
    assert_int_equal(read_sys("\xff/tenant/nameIndex/\x01" "alpha\x00", SL("\xff/tenant/nameIndex/\x01" "alpha\x00"), &present, buf, sizeof buf, &len),
                     0);
    assert_true(present);
    assert_int_equal(len, 2);
    assert_int_equal(buf[0], 0x15);
    assert_int_equal(buf[1], id);
    char mk[32] = "\xff/tenant/map/\0\0\0\0\0\0\0";
    mk[20] = (char)id;
    assert_int_equal(read_sys(mk, 21, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    static const uint8_t pv[8] = { 0, 0, 0, 0x73, 0xb0, 0x00, 0xdb, 0x0f }; /* 0x0FDB00B073000000 LE */
    assert_memory_equal(buf, pv, 8);
    assert_int_equal(read_sys("\xff/tenant/lastModification", SL("\xff/tenant/lastModification"), &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_int_equal(len, 10);

    char keys[8][128], values[8][512], want[512];
    int n = list(keys, values, 8);
    int at = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], MAP "alpha") == 0)
            at = i;
    assert_true(at >= 0);
    expected_json(want, sizeof want, id, "YWxwaGE=", "alpha", NULL);
    assert_string_equal(values[at], want);

    /* a get of one tenant */
    FDBTransaction *tr = api_tr();
    char got[512];
    assert_int_equal(api_get(tr, MAP "alpha", L(MAP "alpha"), 0, &present, got, sizeof got - 1, &len), 0);
    assert_true(present);
    got[len] = 0;
    assert_string_equal(got, want);
    assert_int_equal(api_get(tr, MAP "absent", L(MAP "absent"), 0, &present, NULL, 0, NULL), 0);
    assert_false(present);
    fdb_transaction_destroy(tr);

    /* a second create of the same name changes nothing but takes an id (libfdb_c's allocator) */
    assert_int_equal(create("alpha"), 0);
    assert_int_equal(last_id(), id + 1);
    assert_int_equal(count(), before + 1);

    /* delete: refused while the prefix holds data */
    char data[9] = { 0, 0, 0, 0, 0, 0, 0, (char)id, 'k' };
    assert_int_equal(api_set_committed(data, 9, "v", 1), 0);
    assert_int_equal(delete("alpha"), 2133);
    assert_int_equal(api_set_committed(data, 9, NULL, 0), 0);
    assert_int_equal(delete("alpha"), 0);
    assert_int_equal(count(), before);
    n = list(keys, values, 8);
    for (int i = 0; i < n; i++)
        assert_string_not_equal(keys[i], MAP "alpha");
    /* deleting an absent tenant through the special keys is no error */
    assert_int_equal(delete("alpha"), 0);
}

static void test_create_errors(void **state)
{
    (void)state;
    tenant_mode("1");
    assert_int_equal(manage(MAP "\xff" "bad", L(MAP "\xff" "bad"), "", 0), 2134); /* invalid_tenant_name */
    /* data under the next id's prefix: tenant_prefix_allocator_conflict */
    int64_t next = last_id() + 1;
    char data[9] = { 0, 0, 0, 0, 0, 0, 0, (char)next, 'k' };
    assert_int_equal(api_set_committed(data, 9, "v", 1), 0);
    assert_int_equal(create("blocked"), 2135);
    assert_int_equal(api_set_committed(data, 9, NULL, 0), 0);
    assert_int_equal(create("blocked"), 0);
    assert_int_equal(delete("blocked"), 0);
}

static void test_rename_and_groups(void **state)
{
    (void)state;
    tenant_mode("1");
    assert_int_equal(create("old"), 0);
    int64_t id = last_id();
    assert_int_equal(manage("\xff\xff/management/tenant/rename/old", L("\xff\xff/management/tenant/rename/old"), "new",
                            3),
                     0);
    char keys[8][128], values[8][512], want[512];
    int n = list(keys, values, 8), at = -1;
    for (int i = 0; i < n; i++) {
        assert_string_not_equal(keys[i], MAP "old");
        if (strcmp(keys[i], MAP "new") == 0)
            at = i;
    }
    assert_true(at >= 0);
    expected_json(want, sizeof want, id, "bmV3", "new", NULL);
    assert_string_equal(values[at], want);
    /* renames of an absent tenant, onto an existing one */
    assert_int_equal(manage("\xff\xff/management/tenant/rename/old", L("\xff\xff/management/tenant/rename/old"), "x", 1),
                     2131);
    assert_int_equal(create("other"), 0);
    assert_int_equal(manage("\xff\xff/management/tenant/rename/new", L("\xff\xff/management/tenant/rename/new"),
                            "other", 5),
                     2132);
    /* two renames touching one name in a commit: 2117 and the error message */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S("\xff\xff/management/tenant/rename/new"), L("\xff\xff/management/tenant/rename/new"),
                        S("z"), 1);
    fdb_transaction_set(tr, S("\xff\xff/management/tenant/rename/z"), L("\xff\xff/management/tenant/rename/z"),
                        S("y"), 1);
    assert_int_equal(api_commit(tr), 2117);
    int present, len;
    char msg[256];
    assert_int_equal(api_get(tr, "\xff\xff/error_message", L("\xff\xff/error_message"), 0, &present, msg,
                             sizeof msg - 1, &len),
                     0);
    assert_true(present);
    msg[len] = 0;
    assert_string_equal(msg, "{\"command\":\"rename tenant\",\"message\":\"tenant rename conflict\",\"retriable\":false}");
    fdb_transaction_destroy(tr);

    /* tenant_group through configure/<tuple(name, "tenant_group")> */
    static const char cfg[] = "\xff\xff/management/tenant/configure/\x01new\x00\x01tenant_group\x00";
    assert_int_equal(manage(cfg, (int)sizeof cfg - 1, "g1", 2), 0);
    n = list(keys, values, 8);
    at = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], MAP "new") == 0)
            at = i;
    assert_true(at >= 0);
    expected_json(want, sizeof want, id, "bmV3", "new", "{\"base64\":\"ZzE=\",\"printable\":\"g1\"}");
    assert_string_equal(values[at], want);
    uint8_t buf[64];
    assert_int_equal(read_sys("\xff/tenant/tenantGroup/map/g1", SL("\xff/tenant/tenantGroup/map/g1"), &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    /* an unknown parameter: invalid_tenant_configuration */
    static const char bad[] = "\xff\xff/management/tenant/configure/\x01new\x00\x01" "colour\x00";
    assert_int_equal(manage(bad, (int)sizeof bad - 1, "x", 1), 2140);
    /* deleting the group's last tenant removes the group */
    assert_int_equal(delete("new"), 0);
    assert_int_equal(read_sys("\xff/tenant/tenantGroup/map/g1", SL("\xff/tenant/tenantGroup/map/g1"), &present, buf, sizeof buf, &len), 0);
    assert_false(present);
    assert_int_equal(delete("other"), 0);
}

static void test_list_bounds_and_limits(void **state)
{
    (void)state;
    tenant_mode("1");
    assert_int_equal(create("b1"), 0);
    assert_int_equal(create("b2"), 0);
    assert_int_equal(create("b3"), 0);
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, S(MAP "b2"), L(MAP "b2"), 0, 1, S(MAP "b3"), L(MAP "b3"), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 1);
    assert_memory_equal(kv[0].key, MAP "b2", L(MAP "b2"));
    fdb_future_destroy(f);
    f = fdb_transaction_get_range(tr, S(MAP), L(MAP), 0, 1, S(MAP "c"), L(MAP "c"), 0, 1, 2, 0,
                                  FDB_STREAMING_MODE_WANT_ALL, 0, 0, 1);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 2);
    assert_true(more);
    assert_memory_equal(kv[0].key, MAP "b3", L(MAP "b3"));
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    /* a range clear deletes every tenant in it */
    assert_int_equal(manage(MAP "b", L(MAP "b"), NULL, 0), 0); /* a single key: none named "b" */
    FDBTransaction *t2 = api_tr();
    fdb_transaction_set_option(t2, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_clear_range(t2, S(MAP "b"), L(MAP "b"), S(MAP "c"), L(MAP "c"));
    assert_int_equal(api_commit(t2), 0);
    fdb_transaction_destroy(t2);
    char keys[8][128], values[8][512];
    n = list(keys, values, 8);
    for (int i = 0; i < n; i++)
        assert_false(keys[i][strlen(MAP)] == 'b');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_need_the_option),
        cmocka_unit_test(test_tenants_disabled),
        cmocka_unit_test(test_create_list_delete),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_rename_and_groups),
        cmocka_unit_test(test_list_bounds_and_limits),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
