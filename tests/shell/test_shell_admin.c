/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell's management commands end to end against a cfdb-server: tenant (create,
 * delete, list, get, configure, rename, the old one-word forms), configure tenant_mode,
 * lock / unlock (the passphrase on a pseudo-terminal), maintenance and coordinators.
 * Expected texts are fdbcli 7.3.77's (fdbcli/TenantCommands.actor.cpp, LockCommand,
 * MaintenanceCommand, CoordinatorsCommand, ConfigureCommand); effects are checked through
 * fdb_c.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "api_helpers.h"
#include "shell_driver.h"

static const char *cf(void) { return g_env.server.cluster_file; }

static shell_run R;

#define CASES(...)                                                                  \
    do {                                                                            \
        const shell_case cases_[] = { __VA_ARGS__ };                                \
        char why_[8192];                                                            \
        if (shell_run_cases(&R, cf(), cases_, sizeof cases_ / sizeof *cases_, why_, \
                            sizeof why_))                                           \
            fail_msg("%s", why_);                                                   \
    } while (0)
#define C(l, o, e, st) { .line = (l), .out = (o), .err = (e), .status = (st) }
#define CM(l, o, e, st) { .line = (l), .out = (o), .err = (e), .status = (st), .mask = true }

/* A special key's value read with fdb_c.h (NULL: absent). */
static char *special_value(const char *key)
{
    static char buf[1024];
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_LOCK_AWARE, NULL, 0);
    int present = 0, len = 0;
    assert_int_equal(api_get(tr, key, (int)strlen(key), 0, &present, buf, sizeof buf - 1, &len), 0);
    fdb_transaction_destroy(tr);
    if (!present)
        return NULL;
    buf[len] = 0;
    return buf;
}

/* A key's committed value outside any tenant, read with fdb_c.h (NULL: absent). */
static char *db_value_raw(const char *key)
{
    static char buf[256];
    int present = 0, len = 0;
    assert_int_equal(api_read_committed(key, (int)strlen(key), &present, buf, sizeof buf - 1, &len), 0);
    if (!present)
        return NULL;
    buf[len] = 0;
    return buf;
}

static void test_configure_and_tenants(void **state)
{
    (void)state;
    CASES(C("configure tenant_mode=optional_experimental", "Configuration changed\n", "", 0),
          C("configure tenant_mode=sometimes", NULL, NULL, 1),
          C("tenant create t1", "The tenant `t1' has been created\n", "", 0),
          C("tenant create t2 tenant_group=g1", "The tenant `t2' has been created\n", "", 0),
          C("tenant create t1", "", "ERROR: A tenant with the given name already exists (2132)\n", 1),
          C("tenant create t3 colour=red", "", "ERROR: unrecognized configuration parameter `colour'.\n", 1),
          C("tenant create t3 tenant_group", "",
            "ERROR: invalid configuration string `tenant_group'. String must specify a value using `='.\n", 1),
          C("tenant list", "  1. t1\n  2. t2\n", "", 0),
          C("tenant list t2", "  1. t2\n", "", 0),
          C("tenant list a b", "The cluster has no tenants in the specified range\n", "", 0),
          C("tenant list t2 t1", "", "ERROR: end must be larger than begin\n", 1),
          C("tenant list a z limit=1", "  1. t1\n", "", 0),
          C("tenant list a z limit=0", "", "ERROR: invalid limit `0'\n", 1),
          C("tenant get t2",
            "  id: 2\n"
            "  prefix: \\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x02\n"
            "  name: t2\n"
            "  lock state: unlocked\n"
            "  tenant group: g1\n",
            "", 0),
          C("tenant get t1 JSON",
            "{\n"
            "    \"tenant\" : {\n"
            "        \"id\" : 1,\n"
            "        \"lock_state\" : \"unlocked\",\n"
            "        \"name\" : {\n"
            "            \"base64\" : \"dDE=\",\n"
            "            \"printable\" : \"t1\"\n"
            "        },\n"
            "        \"prefix\" : {\n"
            "            \"base64\" : \"AAAAAAAAAAE=\",\n"
            "            \"printable\" : \"\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x00\\\\x01\"\n"
            "        }\n"
            "    },\n"
            "    \"type\" : \"success\"\n"
            "}\n",
            "", 0),
          C("tenant get none", "", "ERROR: Tenant does not exist (2131)\n", 1),
          C("tenant get none JSON", "{\n    \"error\" : \"Tenant does not exist\",\n    \"type\" : \"error\"\n}\n", "",
            1),
          C("tenant configure t1 tenant_group=g2", "The configuration for tenant `t1' has been updated\n", "", 0),
          C("tenant configure t2 unset tenant_group", "The configuration for tenant `t2' has been updated\n", "", 0),
          C("tenant configure t2 unset", "", "ERROR: `unset' specified without a configuration parameter.\n", 1),
          C("tenant rename t1 t9", "The tenant `t1' has been renamed to `t9'\n", "", 0),
          C("tenant rename t1 t8", "", "ERROR: Tenant does not exist (2131)\n", 1),
          C("tenant rename t9 t2", "", "ERROR: A tenant with the given name already exists (2132)\n", 1),
          C("renametenant t9 t7", "The tenant `t9' has been renamed to `t7'\n", "", 0),
          C("tenant delete t7", "The tenant `t7' has been deleted\n", "", 0),
          C("deletetenant t7", "", "ERROR: Tenant does not exist (2131)\n", 1),
          C("listtenants", "  1. t2\n", "", 0),
          C("tenant delete t2", "The tenant `t2' has been deleted\n", "", 0),
          C("tenant list", "The cluster has no tenants\n", "", 0),
          C("tenant", "Usage: tenant <create|delete|list|get|getId|configure|rename|lock|unlock> [ARGS]\n", "", 0),
          C("tenant delete", "Usage: tenant delete <NAME>\n\nDeletes a tenant from the cluster by name.\n"
                             "Deletion will be allowed only if the specified tenant contains no data.\n",
            "", 1));
    /* what the shell configured and created, through fdb_c.h */
    int present = 0, len = 0;
    char mode[8];
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    assert_int_equal(api_get(tr, "\xff/conf/tenant_mode", 18, 0, &present, mode, sizeof mode, &len), 0);
    fdb_transaction_destroy(tr);
    assert_true(present);
    assert_int_equal(len, 1);
    assert_int_equal(mode[0], '1');
    CASES(C("tenant create data", "The tenant `data' has been created\n", "", 0));
    char *json = special_value("\xff\xff/management/tenant/map/data");
    assert_non_null(json);
    assert_non_null(strstr(json, "\"name\":{\"base64\":\"ZGF0YQ==\",\"printable\":\"data\"}"));
    CASES(C("configure tenant_mode=disabled", "Configuration changed\n", "", 0),
          C("tenant create more", "", "ERROR: Tenants have been disabled in the cluster (2136)\n", 1),
          C("configure tenant_mode=optional_experimental", "Configuration changed\n", "", 0),
          C("tenant delete data", "The tenant `data' has been deleted\n", "", 0));
}

/* A key in tenant name, read with fdb_c.h (NULL: absent). */
static char *tenant_value(const char *name, const char *key)
{
    static char buf[256];
    FDBTenant *t = NULL;
    assert_int_equal(fdb_database_open_tenant(g_env.db, (const uint8_t *)name, (int)strlen(name), &t), 0);
    FDBTransaction *tr = NULL;
    assert_int_equal(fdb_tenant_create_transaction(t, &tr), 0);
    int present = 0, len = 0;
    assert_int_equal(api_get(tr, key, (int)strlen(key), 0, &present, buf, sizeof buf - 1, &len), 0);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(t);
    if (!present)
        return NULL;
    buf[len] = 0;
    return buf;
}

/* usetenant / defaulttenant (fdbcli.actor.cpp's cli()): the data commands run in the
 * chosen tenant, the name is checked first, the tenant cannot change inside `begin', and
 * `tenant delete' of the tenant in use warns. */
static void test_usetenant(void **state)
{
    (void)state;
    const char *open_tr = "ERROR: Tenant cannot be changed while a transaction is open\n";
    CASES(C("configure tenant_mode=optional_experimental", "Configuration changed\n", "", 0),
          C("usetenant", "Using the default tenant\n", "", 0),
          C("defaulttenant", "Using the default tenant\n", "", 0),
          C("usetenant nosuch", "", "ERROR: Tenant `nosuch' does not exist\n", 1),
          C("usetenant \\x01b", "", "ERROR: Tenant `\\x01b' does not exist\n", 1),
          C("usetenant a b", "Usage: usetenant [NAME]\n", "", 1),
          C("defaulttenant x", "Usage: defaulttenant\n", "", 1),
          C("tenant create ut1", "The tenant `ut1' has been created\n", "", 0),
          C("writemode on; set ut/k raw", NULL, "", 0),
          CM("writemode on; usetenant ut1; usetenant; set ut/k inside; set ut/l 2; get ut/k; getrange ut/ ut0; "
            "getrangekeys ut/l ut/k",
            ">>> writemode on\n>>> usetenant ut1\nUsing tenant `ut1'\n>>> usetenant\nUsing tenant `ut1'\n"
            ">>> set ut/k inside\nCommitted (V)\n>>> set ut/l 2\nCommitted (V)\n>>> get ut/k\n`ut/k' is `inside'\n"
            ">>> getrange ut/ ut0\n\nRange limited to 25 keys\n`ut/k' is `inside'\n`ut/l' is `2'\n\n"
            ">>> getrangekeys ut/l ut/k\n",
            "ERROR: Range begin key larger than end key (2005)\n", 1),
          C("usetenant ut1; defaulttenant; get ut/k",
            ">>> usetenant ut1\nUsing tenant `ut1'\n>>> defaulttenant\nUsing the default tenant\n"
            ">>> get ut/k\n`ut/k' is `raw'\n",
            "", 0),
          /* begin takes the tenant's transaction; inside it the tenant is fixed */
          C("usetenant ut1; writemode on; begin; clear ut/l; usetenant ut1",
            ">>> usetenant ut1\nUsing tenant `ut1'\n>>> writemode on\n>>> begin\nTransaction started\n"
            ">>> clear ut/l\n>>> usetenant ut1\n",
            open_tr, 1),
          C("begin; defaulttenant", ">>> begin\nTransaction started\n>>> defaulttenant\n", open_tr, 1),
          C("begin; usetenant", ">>> begin\nTransaction started\n>>> usetenant\nUsing the default tenant\n", "", 0),
          C("usetenant ut1; writemode on; begin; clear ut/l; commit; getversion", NULL, "", 0));
    assert_non_null(strstr(R.out, ">>> commit\nCommitted ("));
    assert_string_equal(tenant_value("ut1", "ut/k"), "inside");
    assert_null(tenant_value("ut1", "ut/l"));
    assert_string_equal(db_value_raw("ut/k"), "raw");
    /* deleting the tenant in use warns (the tenant form only); its commands then fail */
    CASES(C("writemode on; usetenant ut1; clear ut/k; tenant delete ut1; get ut/k",
            NULL, "ERROR: Tenant does not exist (2131)\n", 1));
    shell_mask_versions(R.out);
    assert_string_equal(R.out,
                        ">>> writemode on\n>>> usetenant ut1\nUsing tenant `ut1'\n>>> clear ut/k\nCommitted (V)\n"
                        ">>> tenant delete ut1\nThe tenant `ut1' has been deleted\n"
                        "WARNING: the active tenant was deleted. Use the `usetenant' or `defaulttenant'\n"
                        "command to choose a new tenant.\n\n" /* printAtCol's line for the text's last \n */
                        ">>> get ut/k\n");
    CASES(C("tenant create ut2", NULL, "", 0),
          C("usetenant ut2; deletetenant ut2",
            ">>> usetenant ut2\nUsing tenant `ut2'\n>>> deletetenant ut2\nThe tenant `ut2' has been deleted\n", "",
            0));
    /* a cluster that requires a tenant: fdbcli's own text for 2130 */
    CASES(C("configure tenant_mode=required_experimental", "Configuration changed\n", "", 0),
          C("get ut/k", "",
            "ERROR: tenant name required. Use the `usetenant' command to select a tenant or\n"
            "enable the `RAW_ACCESS' option to read raw keys.\n",
            1),
          C("configure tenant_mode=optional_experimental", "Configuration changed\n", "", 0),
          C("writemode on; clear ut/k", NULL, "", 0));
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A write in tenant `name' through fdb_c.h (k = v, or k cleared): the commit's error. */
static fdb_error_t tenant_write(const char *name, bool set)
{
    FDBTenant *tn = NULL;
    FDBTransaction *tr = NULL;
    assert_int_equal(fdb_database_open_tenant(g_env.db, (const uint8_t *)name, (int)strlen(name), &tn), 0);
    assert_int_equal(fdb_tenant_create_transaction(tn, &tr), 0);
    if (set)
        fdb_transaction_set(tr, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1);
    else
        fdb_transaction_clear(tr, (const uint8_t *)"k", 1);
    fdb_error_t e = api_commit(tr);
    fdb_transaction_destroy(tr);
    fdb_tenant_destroy(tn);
    return e;
}

/* tenant lock / unlock: fdbcli's texts (tenantLockCommand), the entry's lock state and id as
 * tenant get shows them, and the lock's effect on a tenant transaction's commit (2144). */
static void test_tenant_lock(void **state)
{
    (void)state;
    CASES(C("configure tenant_mode=optional_experimental", "Configuration changed\n", "", 0),
          C("tenant create lk", "The tenant `lk' has been created\n", "", 0),
          C("tenant lock lk w 1234", "Locked tenant `lk' with UID `00000000000000000000000000001234'\n", "", 0),
          C("tenant get lk", NULL, "", 0));
    assert_true(ends_with(R.out, "  name: lk\n  lock state: read only\n  lock id: 00000000000000000000000000001234\n"));
    CASES(C("tenant lock lk rw 99", "", "ERROR: Tenant locked with a different UID\n", 1),
          C("tenant unlock lk 99", "", "ERROR: Wrong lock UID\n", 1),
          /* the same UID may change the kind of lock */
          C("tenant lock lk rw 00000000000000000000000000001234",
            "Locked tenant `lk' with UID `00000000000000000000000000001234'\n", "", 0));
    assert_non_null(strstr(special_value("\xff\xff/management/tenant/map/lk"),
                           "\"lock_id\":\"00000000000000000000000000001234\",\"lock_state\":\"locked\""));
    assert_int_equal(tenant_write("lk", true), 2144);
    CASES(C("tenant unlock lk 1234", "Unlocked tenant `lk'\n", "", 0),
          C("tenant get lk", NULL, "", 0));
    assert_true(ends_with(R.out, "  name: lk\n  lock state: unlocked\n"));
    assert_int_equal(tenant_write("lk", true), 0);
    /* a lock with a UID of the shell's own choosing, then unlocked with it */
    CASES(C("tenant lock lk", NULL, "", 0));
    assert_int_equal(strncmp(R.out, "Locked tenant `lk' with UID `", 29), 0);
    assert_string_equal(R.out + 29 + 32, "'\n");
    char line[96];
    snprintf(line, sizeof line, "tenant unlock lk %.32s", R.out + 29);
    assert_int_equal(tenant_write("lk", true), 2144);
    CASES(C(line, "Unlocked tenant `lk'\n", "", 0));
    assert_int_equal(tenant_write("lk", true), 0);
    CASES(C("tenant lock none", "", "ERROR: Tenant `none' does not exist\n", 1),
          C("tenant lock lk x", "", "ERROR: Invalid lock type `x'\n", 1),
          C("tenant lock lk rw 123456789012345678901234567890123", "",
            "ERROR: Couldn't not parse `123456789012345678901234567890123' as a valid UID", 1),
          C("tenant unlock lk", "Usage: tenant unlock <NAME> <UID>\n\n", "", 1),
          C("tenant lock lk w 1 2",
            "Usage: tenant lock <NAME> [w|rw] [UID]\n\n"
            "Locks a tenant for read-write or read-only with a given UID.\n"
            "By default a read-write lock is created.\n"
            "If no UID is passed, fdbcli will generate one.\n"
            "UID has to be a 16-byte number represented in hex.\n",
            "", 1),
          C("configure tenant_mode=disabled", "Configuration changed\n", "", 0),
          C("tenant lock lk", "", "ERROR: Tenants have been disabled in the cluster (2136)\n", 1),
          C("configure tenant_mode=optional_experimental", "Configuration changed\n", "", 0));
    assert_int_equal(tenant_write("lk", false), 0);
    CASES(C("tenant delete lk", "The tenant `lk' has been deleted\n", "", 0));
}

static void test_maintenance_and_coordinators(void **state)
{
    (void)state;
    FILE *f = fopen(cf(), "r");
    assert_non_null(f);
    char cs[256] = { 0 };
    assert_non_null(fgets(cs, sizeof cs, f));
    fclose(f);
    cs[strcspn(cs, "\r\n")] = 0;
    char want[512];
    snprintf(want, sizeof want,
             "Cluster description: %.*s\nCluster coordinators (1): %s\n"
             "Type `help coordinators' to learn how to change this information.\n",
             (int)(strchr(cs, ':') - cs), cs, strchr(cs, '@') + 1);
    CASES(C("coordinators", want, "", 0), C("maintenance", "No ongoing maintenance.\n", "", 0),
          C("maintenance on zone1 100", "", "", 0),
          C("maintenance on zone1 soon", "Usage: maintenance [on|off] [ZONEID] [SECONDS]\n", "", 1));
    CASES(C("maintenance", NULL, "", 0));
    assert_true(strcmp(R.out, "Maintenance for zone zone1 will continue for 99 seconds.\n") == 0 ||
                strcmp(R.out, "Maintenance for zone zone1 will continue for 100 seconds.\n") == 0);
    assert_non_null(special_value("\xff\xff/management/maintenance/zone1"));
    CASES(C("maintenance off", "", "", 0), C("maintenance", "No ongoing maintenance.\n", "", 0));
    assert_null(special_value("\xff\xff/management/maintenance/zone1"));
}

/* A maintenance time whose end version is no int64 (libfdb_c converts the double
 * unchecked): refused at commit with a special-keys failure and nothing written. */
static void test_maintenance_time_range(void **state)
{
    (void)state;
    static const char *const bad[] = { "1e300", "nan", "-nan", "inf", "9.3e12", "1e400" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FDBTransaction *tr = api_tr();
        assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0), 0);
        const char *k = "\xff\xff/management/maintenance/zone1";
        fdb_transaction_set(tr, (const uint8_t *)k, (int)strlen(k), (const uint8_t *)bad[i], (int)strlen(bad[i]));
        FDBFuture *f = fdb_transaction_commit(tr);
        assert_int_equal(api_wait(f), 2117);
        fdb_future_destroy(f);
        { /* 1e400 reads as inf */
            char msg[512];
            int present = 0, len = 0;
            assert_int_equal(api_get(tr, "\xff\xff/error_message", 16, 0, &present, msg, sizeof msg - 1, &len), 0);
            assert_true(present);
            msg[len] = 0;
            if (!strstr(msg, "is out of range") || !strstr(msg, "\"command\":\"maintenance\""))
                fail_msg("%s: %s", bad[i], msg);
        }
        fdb_transaction_destroy(tr);
        assert_null(special_value("\xff\xff/management/maintenance/zone1"));
    }
    /* the shell's maintenance command writes the same value */
    CASES(C("maintenance on zone1 1e300", NULL, NULL, 1), C("maintenance", "No ongoing maintenance.\n", "", 0));
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    int present = 1, len = 0;
    char buf[64];
    assert_int_equal(api_get(tr, "\xff/healthyZone", 14, 0, &present, buf, sizeof buf, &len), 0);
    fdb_transaction_destroy(tr);
    assert_false(present);
    /* the largest time that still fits is taken */
    CASES(C("maintenance on zone1 1e12", "", "", 0), C("maintenance off", "", "", 0));
}

static void set_sys(const char *key)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)"", 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

static void test_exclude_list_and_include(void **state)
{
    (void)state;
    CASES(C("exclude",
            "There are currently no servers or localities excluded from the database.\n"
            "To learn how to exclude a server, type `help exclude'.\n",
            "", 0));
    set_sys("\xff/conf/excluded/10.0.0.9:4500");
    set_sys("\xff/conf/excluded/10.0.0.7");
    set_sys("\xff/conf/excluded/10.0.0.7:4501");
    set_sys("\xff/conf/failed/10.0.0.8");
    set_sys("\xff/conf/excluded_locality/locality_zoneid:z1");
    CASES(C("exclude",
            "There are currently 4 servers or localities being excluded from the database:\n"
            "  10.0.0.7\n  10.0.0.7:4501\n  10.0.0.9:4500\n  locality_zoneid:z1\n"
            "To find out whether it is safe to remove one or more of these\n"
            "servers from the cluster, type `exclude <addresses>'.\n"
            "To return one of these servers to the cluster, type `include <addresses>'.\n"
            "\n"
            "There are currently 1 servers or localities marked as failed in the database:\n"
            "  10.0.0.8\n"
            "To return one of these servers to the cluster, type `include failed <addresses>'.\n",
            "", 0),
          /* a whole machine takes its processes with it */
          C("include 10.0.0.7", "", "", 0), C("include locality_zoneid:z1", "", "", 0),
          C("include 10.0.0.9:4500:tls", "        Do not include the `:tls' suffix when naming a process\n",
            "ERROR: '10.0.0.9:4500:tls' is neither a valid network endpoint address nor a locality\n", 1),
          C("include", "Usage: include all|[<ADDRESS...>] [locality_dcid:<excludedcid>] [locality_zoneid:<excludezoneid>] "
                       "[locality_machineid:<excludemachineid>] [locality_processid:<excludeprocessid>] or any locality "
                       "data\n",
            "", 1),
          C("exclude",
            "There are currently 1 servers or localities being excluded from the database:\n"
            "  10.0.0.9:4500\n"
            "To find out whether it is safe to remove one or more of these\n"
            "servers from the cluster, type `exclude <addresses>'.\n"
            "To return one of these servers to the cluster, type `include <addresses>'.\n"
            "\n"
            "There are currently 1 servers or localities marked as failed in the database:\n"
            "  10.0.0.8\n"
            "To return one of these servers to the cluster, type `include failed <addresses>'.\n",
            "", 0),
          C("include all; include failed all", ">>> include all\n>>> include failed all\n", "", 0),
          C("exclude",
            "There are currently no servers or localities excluded from the database.\n"
            "To learn how to exclude a server, type `help exclude'.\n",
            "", 0));
}

/* One worker 127.0.0.1:4500 ("p1", unset class) in \xff/worker/, in FoundationDB's binary
 * ProcessData form (the list written here replaces the server's own). */
static void one_worker(void)
{
    uint8_t k[32], v[128];
    uint32_t two = 2;
    size_t kn = 0, o = 0;
    memcpy(k, "\xff/worker/", 9), kn = 9;
    memcpy(k + kn, &two, 4), kn += 4;
    memcpy(k + kn, "p1", 2), kn += 2;
    uint64_t pv = 0x0FDB00B062010001ull, count = 1;
    uint32_t nine = 9, ip = 0x7F000001;
    int16_t zero16 = 0;
    uint16_t port = 4500, flags = 0;
    memcpy(v + o, &pv, 8), o += 8;
    memcpy(v + o, &count, 8), o += 8;
    memcpy(v + o, &nine, 4), o += 4;
    memcpy(v + o, "processid", 9), o += 9;
    v[o++] = 1;
    memcpy(v + o, &two, 4), o += 4;
    memcpy(v + o, "p1", 2), o += 2;
    memcpy(v + o, &zero16, 2), o += 2;
    memcpy(v + o, &zero16, 2), o += 2;
    v[o++] = 0;
    memcpy(v + o, &ip, 4), o += 4;
    memcpy(v + o, &port, 2), o += 2;
    memcpy(v + o, &flags, 2), o += 2;
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_clear_range(tr, (const uint8_t *)"\xff/worker/", 9, (const uint8_t *)"\xff/worker0", 9);
    fdb_transaction_set(tr, k, (int)kn, v, (int)o);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

static void test_setclass(void **state)
{
    (void)state;
    one_worker();
    CASES(C("setclass", "There are currently 1 processes in the database:\n  127.0.0.1:4500: unset (command_line)\n", "",
            0),
          C("setclass 127.0.0.1:4500 storage", "", "", 0),
          C("setclass", "There are currently 1 processes in the database:\n  127.0.0.1:4500: storage (set_class)\n",
            "", 0),
          C("setclass 127.0.0.1:4501 storage", "No matching addresses found\n", "", 1),
          C("setclass 127.0.0.1:4500 bogus", "", "ERROR: 'bogus' is not a valid process class\n", 1),
          C("setclass 127.0.0.1:4500 default", "", "", 0),
          C("setclass", "There are currently 1 processes in the database:\n  127.0.0.1:4500: unset (command_line)\n", "",
            0),
          C("setclass 127.0.0.1:4500", "Usage: setclass [<ADDRESS> <CLASS>]\n", "", 1));
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_clear_range(tr, (const uint8_t *)"\xff/worker/", 9, (const uint8_t *)"\xff/worker0", 9);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    CASES(C("setclass",
            "No processes are registered in the database.\nThere are currently 0 processes in the database:\n", "", 0));
}

static void test_lock_unlock(void **state)
{
    (void)state;
    CASES(C("tenant create lk", "The tenant `lk' has been created\n", "", 0));
    CASES(C("lock", NULL, "", 0));
    /* "Locking database with lockUID: <32 hex>\nDatabase locked.\n" */
    assert_int_equal(strncmp(R.out, "Locking database with lockUID: ", 31), 0);
    char uid[33];
    memcpy(uid, R.out + 31, 32);
    uid[32] = 0;
    assert_string_equal(R.out + 63, "\nDatabase locked.\n");
    assert_string_equal(special_value("\xff\xff/management/db_locked"), uid);
    /* a transaction that is not lock aware: database_locked */
    CASES(C("get k", "", "ERROR: Database is locked (1038)\n", 1),
          C("unlock 123", "Usage: unlock <UID>\n", "", 1),
          /* usetenant's lookup is lock aware (tryGetTenant's READ_LOCK_AWARE); the tenant's
           * reads are not */
          C("usetenant lk; get k", ">>> usetenant lk\nUsing tenant `lk'\n>>> get k\n",
            "ERROR: Database is locked (1038)\n", 1));
    /* the passphrase must be repeated: from a script on stdin, a wrong one */
    char script[128];
    snprintf(script, sizeof script, "unlock %s\nnot the phrase\n", uid);
    const shell_case wrong[] = { { .input = script, .err = "ERROR: Incorrect passphrase entered.\n", .status = 1 } };
    char why[8192];
    if (shell_run_cases(&R, cf(), wrong, 1, why, sizeof why))
        fail_msg("%s", why);
    assert_non_null(strstr(R.out, "Unlocking the database is a potentially dangerous operation.\n"));
    assert_string_equal(special_value("\xff\xff/management/db_locked"), uid);
    /* on a terminal: read the phrase and type it back */
    shell_pty p;
    const char *args[] = { "-C", cf(), NULL };
    assert_int_equal(shell_pty_start(&p, args, g_env.server.dir), 0);
    char line[96];
    snprintf(line, sizeof line, "unlock %s\r", uid);
    assert_int_equal(shell_pty_send(&p, line), 0);
    assert_int_equal(shell_pty_expect(&p, "dangerous operation.\r\n"), 0);
    assert_int_equal(shell_pty_expect(&p, "Repeat the above passphrase"), 0);
    char *ph = strstr(p.buf, "dangerous operation.\r\n");
    assert_non_null(ph);
    ph += strlen("dangerous operation.\r\n");
    char phrase[16] = { 0 };
    memcpy(phrase, ph, 10);
    char typed[24];
    snprintf(typed, sizeof typed, "%s\r", phrase);
    assert_int_equal(shell_pty_send(&p, typed), 0);
    assert_int_equal(shell_pty_expect(&p, "Database unlocked."), 0);
    assert_int_equal(shell_pty_send(&p, "exit\r"), 0);
    shell_pty_finish(&p);
    assert_null(special_value("\xff\xff/management/db_locked"));
    CASES(C("get k", "`k': not found\n", "", 0), C("tenant delete lk", "The tenant `lk' has been deleted\n", "", 0));
}

/* The server's address, from the cluster file. */
static const char *server_address(void)
{
    static char addr[128];
    assert_int_equal(shell_cluster_address(cf(), addr, sizeof addr), 0);
    return addr;
}

/* kill, suspend, expensive_data_check (fdbcli's KillCommand, SuspendCommand,
 * ExpensiveDataCheckCommand): the list of workers from \xff\xff/worker_interfaces/ kept for
 * the session, the checks against it, the reboot requests; a suspended server does not answer
 * for the SECONDS asked. Last: it takes the server away for a while. */
static void test_kill_suspend(void **state)
{
    (void)state;
    const char *addr = server_address();
    char listed[256], line[256], out[1024];
    snprintf(listed, sizeof listed, "\nThe following address can be killed:\n%s\n\n", addr);
    CASES(C("kill list", "\nNo addresses can be killed.\n\n", "", 0),
          C("kill all", "",
            "ERROR: no processes to kill. You must run the `kill\u2019 command before running `kill all\u2019.\n", 1),
          C("kill 127.0.0.1:1", "", "ERROR: process `127.0.0.1:1' not recognized.\n", 1),
          C("expensive_data_check all", "",
            "ERROR: no processes to check. You must run the `expensive_data_check\u2019 command before running "
            "`expensive_data_check all\u2019.\n",
            0),
          C("kill", listed, "", 0),
          C("kill; kill 127.0.0.1:1", NULL, "ERROR: process `127.0.0.1:1' not recognized.\n", 1),
          C("suspend; suspend 1", NULL, "", 1));
    assert_non_null(strstr(R.out, ">>> suspend 1\nUsage: suspend <SECONDS> <ADDRESS...>\n"));
    snprintf(line, sizeof line, "kill; kill all");
    snprintf(out, sizeof out, ">>> kill\n%s>>> kill all\nAttempted to kill 1 processes\n", listed);
    CASES(C(line, out, "", 0), C("get k", "`k': not found\n", "", 0));
    snprintf(line, sizeof line, "kill; kill %s", addr);
    snprintf(out, sizeof out, ">>> kill\n%s>>> kill %s\nAttempted to kill 1 processes\n", listed, addr);
    CASES(C(line, out, "", 0), C("get k", "`k': not found\n", "", 0));
    snprintf(line, sizeof line, "expensive_data_check; expensive_data_check list; expensive_data_check all");
    snprintf(out, sizeof out,
             ">>> expensive_data_check\n\nThe following address can be checked:\n%s\n\n"
             ">>> expensive_data_check list\n\nThe following address can be checked:\n%s\n\n"
             ">>> expensive_data_check all\nAttempted to kill and check 1 processes\n",
             addr, addr);
    CASES(C(line, out, "", 0), C("get k", "`k': not found\n", "", 0));
    snprintf(line, sizeof line, "suspend; suspend x %s", addr);
    CASES(C(line, NULL, "", 1));
    assert_non_null(strstr(R.out, "Usage: suspend <SECONDS> <ADDRESS...>\n"));
    /* suspended for 4 s: a read with a 2 s timeout after a short pause times out (a server
     * rebooted without a suspension answers well within that) */
    snprintf(line, sizeof line, "suspend; suspend 4 %s", addr);
    snprintf(out, sizeof out,
             ">>> suspend\n\nThe following address can be suspended:\n%s\n\n>>> suspend 4 %s\n"
             "Attempted to suspend 1 processes\n",
             addr, addr);
    CASES(C(line, out, "", 0));
    nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
    FDBTransaction *tr = api_tr();
    int64_t timeout_ms = 2000;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&timeout_ms, 8), 0);
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(f), 1031);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    CASES(C("get k", "`k': not found\n", "", 0));
}

static int setup(void **state)
{
    (void)state;
    return api_env_setup(NULL);
}

static int teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configure_and_tenants),
        cmocka_unit_test(test_tenant_lock),
        cmocka_unit_test(test_usetenant),
        cmocka_unit_test(test_maintenance_and_coordinators),
        cmocka_unit_test(test_maintenance_time_range),
        cmocka_unit_test(test_exclude_list_and_include),
        cmocka_unit_test(test_lock_unlock),
        cmocka_unit_test(test_setclass),
        cmocka_unit_test(test_kill_suspend),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
