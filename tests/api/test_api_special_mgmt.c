/* \xff\xff/management/ and \xff\xff/configuration/ through fdb_c.h against cfdb-server, as
 * libfdb_c 7.3.77's implementations answer them: db_locked (lock with a UID, read it back,
 * another UID gets 1038, unlock), consistency_check_suspended, the exclusion lists mapped
 * from \xff/conf/ with the transaction's own writes laid over them, maintenance zones from
 * \xff\x02/healthyZone, data_distribution/mode, management options, coordinators from the
 * connection string, error_message, and 2108 for the implementations cfdb does not answer
 * (in_progress_exclusion/ and exclusions without force: test_api_exclusion). */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SL(x) ((int)sizeof(x) - 1)
#define MG "\xff\xff/management/"

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

static void set_sys(const char *key, int klen, const void *value, int vlen)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_LOCK_AWARE, NULL, 0);
    if (value)
        fdb_transaction_set(tr, S(key), klen, value, vlen);
    else
        fdb_transaction_clear(tr, S(key), klen);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

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

/* get of a special key in a fresh transaction: error; value NUL-terminated in out */
static fdb_error_t sget(const char *key, int klen, int *present, char *out, int cap)
{
    FDBTransaction *tr = api_tr();
    int len = 0;
    fdb_error_t e = api_get(tr, key, klen, 0, present, out, cap - 1, &len);
    if (!e && *present)
        out[len] = 0;
    fdb_transaction_destroy(tr);
    return e;
}

static int srange(FDBTransaction *tr, const char *b, int bl, const char *e, int el, char keys[][96], char vals[][96],
                  int cap, fdb_error_t *err)
{
    FDBFuture *f = fdb_transaction_get_range(tr, S(b), bl, 0, 1, S(e), el, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0,
                                             0, 0);
    *err = api_wait(f);
    int n = 0;
    if (!*err) {
        const FDBKeyValue *kv;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        assert_true(n <= cap);
        for (int i = 0; i < n; i++) {
            memcpy(keys[i], kv[i].key, (size_t)kv[i].key_length);
            keys[i][kv[i].key_length] = 0;
            memcpy(vals[i], kv[i].value, (size_t)kv[i].value_length);
            vals[i][kv[i].value_length] = 0;
        }
    }
    fdb_future_destroy(f);
    return n;
}

static void test_lock_unlock(void **state)
{
    (void)state;
    static const char uid[] = "0123456789abcdef00112233445566ff";
    char v[128];
    int present;
    assert_int_equal(sget(MG "db_locked", SL(MG "db_locked"), &present, v, sizeof v), 0);
    assert_false(present);
    assert_int_equal(manage(MG "db_locked", SL(MG "db_locked"), uid, SL(uid)), 0);
    assert_int_equal(sget(MG "db_locked", SL(MG "db_locked"), &present, v, sizeof v), 0);
    assert_true(present);
    assert_string_equal(v, uid);
    /* \xff/dbLocked: a versionstamp then the UID's two halves little-endian */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_LOCK_AWARE, NULL, 0);
    uint8_t raw[64];
    int len;
    assert_int_equal(api_get(tr, "\xff/dbLocked", SL("\xff/dbLocked"), 0, &present, raw, sizeof raw, &len), 0);
    assert_true(present);
    assert_int_equal(len, 26);
    static const uint8_t halves[16] = { 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
                                        0xff, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00 };
    assert_memory_equal(raw + 10, halves, 16);
    fdb_transaction_destroy(tr);
    /* locked: a transaction that is not LOCK_AWARE fails with database_locked, one that is
     * commits */
    tr = api_tr();
    fdb_transaction_set(tr, S("mgmt/k"), 6, S("v"), 1);
    assert_int_equal(api_commit(tr), 1038);
    fdb_transaction_reset(tr);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_LOCK_AWARE, NULL, 0);
    fdb_transaction_set(tr, S("mgmt/k"), 6, S("v"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    /* the same UID again: nothing to do; another: database_locked */
    assert_int_equal(manage(MG "db_locked", SL(MG "db_locked"), uid, SL(uid)), 0);
    assert_int_equal(manage(MG "db_locked", SL(MG "db_locked"), "ffffffffffffffffffffffffffffffff", 32), 1038);
    /* a malformed UID: 2117 and the message */
    tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S(MG "db_locked"), SL(MG "db_locked"), S("xyz"), 3);
    assert_int_equal(api_commit(tr), 2117);
    char msg[256];
    assert_int_equal(api_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), 0, &present, msg,
                             sizeof msg - 1, &len),
                     0);
    assert_true(present);
    msg[len] = 0;
    assert_string_equal(msg,
                        "{\"command\":\"lock\",\"message\":\"Invalid UID hex string: xyz\",\"retriable\":false}");
    /* a reset forgets the message */
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), 0, &present, msg,
                             sizeof msg - 1, &len),
                     0);
    assert_false(present);
    fdb_transaction_destroy(tr);
    /* read-your-writes: the transaction's own lock write is what it reads */
    tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_clear(tr, S(MG "db_locked"), SL(MG "db_locked"));
    assert_int_equal(api_get(tr, MG "db_locked", SL(MG "db_locked"), 0, &present, NULL, 0, NULL), 0);
    assert_false(present);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(sget(MG "db_locked", SL(MG "db_locked"), &present, v, sizeof v), 0);
    assert_false(present);
    tr = api_tr();
    fdb_transaction_set(tr, S("mgmt/k"), 6, S("w"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

static void test_consistency_check(void **state)
{
    (void)state;
    char v[16];
    int present;
    assert_int_equal(sget(MG "consistency_check_suspended", SL(MG "consistency_check_suspended"), &present, v, 16), 0);
    assert_false(present);
    assert_int_equal(manage(MG "consistency_check_suspended", SL(MG "consistency_check_suspended"), "", 0), 0);
    assert_int_equal(sget(MG "consistency_check_suspended", SL(MG "consistency_check_suspended"), &present, v, 16), 0);
    assert_true(present);
    assert_string_equal(v, "");
    assert_int_equal(manage(MG "consistency_check_suspended", SL(MG "consistency_check_suspended"), NULL, 0), 0);
    assert_int_equal(sget(MG "consistency_check_suspended", SL(MG "consistency_check_suspended"), &present, v, 16), 0);
    assert_false(present);
}

static void test_exclusions_listed(void **state)
{
    (void)state;
    set_sys("\xff/conf/excluded/10.0.0.1:4500", SL("\xff/conf/excluded/10.0.0.1:4500"), "", 0);
    set_sys("\xff/conf/failed/10.0.0.2", SL("\xff/conf/failed/10.0.0.2"), "", 0);
    set_sys("\xff/conf/excluded_locality/zoneid:z1", SL("\xff/conf/excluded_locality/zoneid:z1"), "", 0);
    char keys[8][96], vals[8][96];
    fdb_error_t e;
    FDBTransaction *tr = api_tr();
    int n = srange(tr, MG "excluded/", SL(MG "excluded/"), MG "excluded0", SL(MG "excluded0"), keys, vals, 8, &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], MG "excluded/10.0.0.1:4500");
    n = srange(tr, MG "failed/", SL(MG "failed/"), MG "failed0", SL(MG "failed0"), keys, vals, 8, &e);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], MG "failed/10.0.0.2");
    n = srange(tr, MG "excluded_locality/", SL(MG "excluded_locality/"), MG "excluded_locality0",
               SL(MG "excluded_locality0"), keys, vals, 8, &e);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], MG "excluded_locality/zoneid:z1");
    /* the transaction's own writes are part of the answer (values ignored: "") */
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S(MG "excluded/10.0.0.3"), SL(MG "excluded/10.0.0.3"), S("ignored"), 7);
    fdb_transaction_clear(tr, S(MG "excluded/10.0.0.1:4500"), SL(MG "excluded/10.0.0.1:4500"));
    n = srange(tr, MG "excluded/", SL(MG "excluded/"), MG "excluded0", SL(MG "excluded0"), keys, vals, 8, &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], MG "excluded/10.0.0.3");
    assert_string_equal(vals[0], "");
    /* management options: only the known ones are kept */
    fdb_transaction_set(tr, S(MG "options/excluded/force"), SL(MG "options/excluded/force"), S("x"), 1);
    fdb_transaction_set(tr, S(MG "options/bogus"), SL(MG "options/bogus"), S("x"), 1);
    n = srange(tr, MG "options/", SL(MG "options/"), MG "options0", SL(MG "options0"), keys, vals, 8, &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], MG "options/excluded/force");
    assert_string_equal(vals[0], "");
    fdb_transaction_destroy(tr);
}

/* read the system key (NULL: absent) */
static bool sys_present(const char *key, int klen)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    int present = 0;
    assert_int_equal(api_get(tr, key, klen, 0, &present, NULL, 0, NULL), 0);
    fdb_transaction_destroy(tr);
    return present;
}

static void test_exclude_include(void **state)
{
    (void)state;
    /* without the force option: libfdb_c's checks pass for an address holding no server
     * (test_api_exclusion covers the refusals) */
    assert_int_equal(manage(MG "excluded/10.1.1.1:4500", SL(MG "excluded/10.1.1.1:4500"), "", 0), 0);
    assert_true(sys_present("\xff/conf/excluded/10.1.1.1:4500", SL("\xff/conf/excluded/10.1.1.1:4500")));
    /* with it: \xff/conf/excluded/<address> and a new version key */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S(MG "options/excluded/force"), SL(MG "options/excluded/force"), S(""), 0);
    fdb_transaction_set(tr, S(MG "excluded/10.1.1.1:4500"), SL(MG "excluded/10.1.1.1:4500"), S(""), 0);
    fdb_transaction_set(tr, S(MG "excluded/10.1.1.2"), SL(MG "excluded/10.1.1.2"), S(""), 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_true(sys_present("\xff/conf/excluded/10.1.1.1:4500", SL("\xff/conf/excluded/10.1.1.1:4500")));
    assert_true(sys_present("\xff/conf/excluded/10.1.1.2", SL("\xff/conf/excluded/10.1.1.2")));
    assert_true(sys_present("\xff/conf/excluded", SL("\xff/conf/excluded")));
    /* an address that does not parse: 2117 and libfdb_c's message */
    tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S(MG "options/excluded/force"), SL(MG "options/excluded/force"), S(""), 0);
    fdb_transaction_set(tr, S(MG "excluded/10.1.1.3:4500:tls"), SL(MG "excluded/10.1.1.3:4500:tls"), S(""), 0);
    assert_int_equal(api_commit(tr), 2117);
    int present, len;
    char msg[512];
    assert_int_equal(api_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), 0, &present, msg,
                             sizeof msg - 1, &len),
                     0);
    msg[len] = 0;
    assert_string_equal(msg, "{\"command\":\"exclude\",\"message\":\"ERROR: '10.1.1.3:4500:tls' is not a valid "
                             "network endpoint address\\n        Do not include the `:tls' suffix when naming a "
                             "process\\n\",\"retriable\":false}");
    fdb_transaction_destroy(tr);
    /* include: a clear takes the address out */
    assert_int_equal(manage(MG "excluded/10.1.1.2", SL(MG "excluded/10.1.1.2"), NULL, 0), 0);
    assert_false(sys_present("\xff/conf/excluded/10.1.1.2", SL("\xff/conf/excluded/10.1.1.2")));
    assert_true(sys_present("\xff/conf/excluded/10.1.1.1:4500", SL("\xff/conf/excluded/10.1.1.1:4500")));
    /* include all: a range clear */
    tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_clear_range(tr, S(MG "excluded/"), SL(MG "excluded/"), S(MG "excluded0"), SL(MG "excluded0"));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    assert_false(sys_present("\xff/conf/excluded/10.1.1.1:4500", SL("\xff/conf/excluded/10.1.1.1:4500")));
}

static void test_maintenance_and_dd(void **state)
{
    (void)state;
    /* IgnoreSSFailures: seconds 0 */
    uint8_t v[64] = { 0, 0, 0, 0x73, 0xb0, 0x00, 0xdb, 0x0f, 16, 0, 0, 0 };
    memcpy(v + 12, "IgnoreSSFailures", 16);
    memset(v + 28, 0, 8);
    set_sys("\xff\x02/healthyZone", SL("\xff\x02/healthyZone"), v, 36);
    char keys[8][96], vals[8][96];
    fdb_error_t e;
    FDBTransaction *tr = api_tr();
    int n = srange(tr, MG "maintenance/", SL(MG "maintenance/"), MG "maintenance0", SL(MG "maintenance0"), keys, vals,
                   8, &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], MG "maintenance/IgnoreSSFailures");
    assert_string_equal(vals[0], "0");
    fdb_transaction_destroy(tr);
    /* a zone cannot be set while storage failures are ignored */
    assert_int_equal(manage(MG "maintenance/z1", SL(MG "maintenance/z1"), "60", 2), 2117);
    assert_int_equal(manage(MG "maintenance/IgnoreSSFailures", SL(MG "maintenance/IgnoreSSFailures"), NULL, 0), 0);
    assert_int_equal(manage(MG "maintenance/z1", SL(MG "maintenance/z1"), "60", 2), 0);
    tr = api_tr();
    n = srange(tr, MG "maintenance/", SL(MG "maintenance/"), MG "maintenance0", SL(MG "maintenance0"), keys, vals, 8,
               &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], MG "maintenance/z1");
    double secs = atof(vals[0]);
    assert_true(secs > 0 && secs <= 60);
    fdb_transaction_destroy(tr);
    assert_int_equal(manage(MG "maintenance/z1", SL(MG "maintenance/z1"), NULL, 0), 0);
    assert_int_equal(manage(MG "maintenance/z1", SL(MG "maintenance/z1"), "-5", 2), 2117);
    /* data distribution mode: -1 when never set */
    int present;
    char m[16];
    assert_int_equal(sget(MG "data_distribution/mode", SL(MG "data_distribution/mode"), &present, m, 16), 0);
    assert_true(present);
    assert_string_equal(m, "-1");
    int32_t one = 1;
    set_sys("\xff/dataDistributionMode", SL("\xff/dataDistributionMode"), &one, 4);
    assert_int_equal(sget(MG "data_distribution/mode", SL(MG "data_distribution/mode"), &present, m, 16), 0);
    assert_string_equal(m, "1");
    /* the commit: mode 0 takes the move-keys lock as data distribution's mode lock */
    assert_int_equal(manage(MG "data_distribution/mode", SL(MG "data_distribution/mode"), "0", 1), 0);
    assert_int_equal(sget(MG "data_distribution/mode", SL(MG "data_distribution/mode"), &present, m, 16), 0);
    assert_string_equal(m, "0");
    tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    uint8_t owner[32];
    int len;
    assert_int_equal(api_get(tr, "\xff/moveKeysLock/Owner", SL("\xff/moveKeysLock/Owner"), 0, &present, owner,
                             sizeof owner, &len),
                     0);
    fdb_transaction_destroy(tr);
    assert_true(present);
    static const uint8_t mode_lock[16] = { 0xc9, 0x18, 0, 0, 0, 0, 0, 0, 0x61, 0x0d, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(len, 16);
    assert_memory_equal(owner, mode_lock, 16);
    assert_int_equal(manage(MG "data_distribution/mode", SL(MG "data_distribution/mode"), "7", 1), 2117);
    assert_int_equal(manage(MG "data_distribution/mode", SL(MG "data_distribution/mode"), "x", 1), 2117);
    assert_int_equal(manage(MG "data_distribution/other", SL(MG "data_distribution/other"), "1", 1), 2117);
    assert_int_equal(manage(MG "data_distribution/mode", SL(MG "data_distribution/mode"), NULL, 0), 0);
    assert_int_equal(sget(MG "data_distribution/mode", SL(MG "data_distribution/mode"), &present, m, 16), 0);
    assert_string_equal(m, "-1");
}

static void test_coordinators_read(void **state)
{
    (void)state;
    /* the cluster file: desc:id@addr */
    FILE *fp = fopen(g_env.server.cluster_file, "r");
    assert_non_null(fp);
    char cs[256] = { 0 };
    assert_non_null(fgets(cs, sizeof cs, fp));
    fclose(fp);
    cs[strcspn(cs, "\r\n")] = 0;
    char *colon = strchr(cs, ':'), *at = strchr(cs, '@');
    assert_non_null(colon);
    assert_non_null(at);
    char desc[64], v[256];
    snprintf(desc, sizeof desc, "%.*s", (int)(colon - cs), cs);
    int present;
    assert_int_equal(sget("\xff\xff/configuration/coordinators/cluster_description",
                          SL("\xff\xff/configuration/coordinators/cluster_description"), &present, v, sizeof v),
                     0);
    assert_true(present);
    assert_string_equal(v, desc);
    assert_int_equal(sget("\xff\xff/configuration/coordinators/processes",
                          SL("\xff\xff/configuration/coordinators/processes"), &present, v, sizeof v),
                     0);
    assert_true(present);
    assert_string_equal(v, at + 1);
    /* clearing them is refused as libfdb_c refuses it */
    assert_int_equal(manage("\xff\xff/configuration/coordinators/processes",
                            SL("\xff\xff/configuration/coordinators/processes"), NULL, 0),
                     2117);
}

static void test_module_reads(void **state)
{
    (void)state;
    char keys[8][96], vals[8][96];
    fdb_error_t e;
    FDBTransaction *tr = api_tr();
    /* profiling/ is not registered at API 730 (test_api_special_modules): no rows */
    srange(tr, MG "profiling/", SL(MG "profiling/"), MG "profiling0", SL(MG "profiling0"), keys, vals, 8, &e);
    assert_int_equal(e, 0);
    /* a read across implementations answers each one met: auto_coordinators (the one
     * coordinator) comes first; nothing else in management/ answers 2108 */
    int n = srange(tr, MG, SL(MG), MG "db_locked", SL(MG "db_locked"), keys, vals, 8, &e);
    assert_int_equal(e, 0);
    assert_true(n >= 1);
    assert_string_equal(keys[0], MG "auto_coordinators");
    assert_non_null(strchr(vals[0], ':'));
    /* between implementations nothing is registered: empty, no error */
    srange(tr, MG "db_locked\x01", SL(MG "db_locked\x01"), MG "excluded/", SL(MG "excluded/"), keys, vals, 8, &e);
    assert_int_equal(e, 0);
    fdb_transaction_destroy(tr);
    assert_int_equal(manage(MG "profiling/client_txn_sample_rate", SL(MG "profiling/client_txn_sample_rate"), "0.5",
                            3),
                     2115); /* no write implementation at API 730 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_unlock),         cmocka_unit_test(test_consistency_check),
        cmocka_unit_test(test_exclusions_listed),   cmocka_unit_test(test_exclude_include),
        cmocka_unit_test(test_maintenance_and_dd),
        cmocka_unit_test(test_coordinators_read),   cmocka_unit_test(test_module_reads),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
