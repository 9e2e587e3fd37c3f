/* The database configuration in \xff/conf/, as fdbserver keeps it.
 *
 * A new database gets what `configure new single memory` writes (fdbclient/
 * ManagementAPI.actor.cpp configForToken; fdbclient/include/fdbclient/
 * GenericManagementAPI.actor.h changeConfig):
 *   \xff/conf/initialized                = "1"
 *   \xff/conf/storage_replicas           = "1"      ("single")
 *   \xff/conf/log_replicas               = "1"
 *   \xff/conf/log_anti_quorum            = "0"
 *   \xff/conf/storage_replication_policy = PolicyOne
 *   \xff/conf/log_replication_policy     = PolicyOne
 *   \xff/conf/log_engine                 = "2"      (KeyValueStoreType::SSD_BTREE_V2)
 *   \xff/conf/storage_engine             = "1"      (MEMORY; "2" = SSD_BTREE_V2 with --datadir)
 *   \xff/init_id                         = a random UID as text
 * A replication policy value is BinaryWriter with IncludeVersion(withReplicationPolicy,
 * 0x0FDB00B062010001): the version as 8 little-endian bytes, then the policy name as a
 * StringRef (4-byte little-endian length, bytes: "One"); PolicyOne has no members
 * (fdbrpc/include/fdbrpc/ReplicationPolicy.h serializeReplicationPolicy).
 * These are what DatabaseConfiguration::isValid() (fdbclient/DatabaseConfiguration.cpp)
 * needs, so fdbcli's `configure` can read the old configuration and change it.
 *
 * \xff/conf/tenant_mode is TenantMode as decimal text ("0" disabled, "1" optional, "2"
 * required; absent or unparsable = disabled: TenantMode::fromValue in
 * fdbclient/include/fdbclient/FDBTypes.h); it goes to clients in ClientDBInfo.tenantMode.
 * \xff/dbLocked (fdbclient/SystemData.cpp databaseLockedKey) present and non-empty means
 * the database is locked (the commit proxy's `locked`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit_proxy.h"
#include "coordinator.h"
#include "db_config.h"

#define CONF "\xff/conf/"
#define CONF_END "\xff/conf0"
#define DB_LOCKED_KEY "\xff/dbLocked"

/* "One" policy: PV_REPLICATION_POLICY (LE) + int32 length 3 (LE) + "One" */
static const uint8_t policy_one[15] = { 0x01, 0x00, 0x01, 0x62, 0xB0, 0x00, 0xDB, 0x0F,
                                        0x03, 0x00, 0x00, 0x00, 'O',  'n',  'e' };

static bool present_at_latest(srv *s, cfdb_bytes key)
{
    cfdb_bytes v;
    bool present = false;
    cfdb_mvcc_get(s->store, cfdb_mvcc_latest_version(s->store), key, &v, &present);
    return present;
}

int srv_config_init(srv *s)
{
    struct {
        const char *key;
        cfdb_bytes value;
    } base[] = {
        { CONF "initialized", CFDB_BYTES_LIT("1") },
        { CONF "storage_replicas", CFDB_BYTES_LIT("1") },
        { CONF "log_replicas", CFDB_BYTES_LIT("1") },
        { CONF "log_anti_quorum", CFDB_BYTES_LIT("0") },
        { CONF "storage_replication_policy", cfdb_bytes_make(policy_one, sizeof policy_one) },
        { CONF "log_replication_policy", cfdb_bytes_make(policy_one, sizeof policy_one) },
        { CONF "log_engine", CFDB_BYTES_LIT("2") },
        { CONF "storage_engine", s->cfg.datadir ? CFDB_BYTES_LIT("2") : CFDB_BYTES_LIT("1") },
    };
    enum { NBASE = sizeof base / sizeof base[0] };
    cfdb_mutation m[NBASE + 2];
    size_t n = 0;
    for (size_t i = 0; i < NBASE; i++) {
        cfdb_bytes k = cfdb_bytes_str(base[i].key);
        if (present_at_latest(s, k))
            continue;
        m[n].type = CFDB_MUT_SET_VALUE;
        m[n].param1 = k;
        m[n].param2 = base[i].value;
        n++;
    }
    char init_id[40], mode[16];
    if (!present_at_latest(s, CFDB_BYTES_LIT("\xff/init_id"))) {
        cfdb_uid u = srv_random_uid(s);
        snprintf(init_id, sizeof init_id, "%016llx%016llx", (unsigned long long)u.first,
                 (unsigned long long)u.second);
        m[n].type = CFDB_MUT_SET_VALUE;
        m[n].param1 = CFDB_BYTES_LIT("\xff/init_id");
        m[n].param2 = cfdb_bytes_str(init_id);
        n++;
    }
    if (s->cfg.tenant_mode >= 0) {
        snprintf(mode, sizeof mode, "%d", s->cfg.tenant_mode);
        m[n].type = CFDB_MUT_SET_VALUE;
        m[n].param1 = CFDB_BYTES_LIT(CONF "tenant_mode");
        m[n].param2 = cfdb_bytes_str(mode);
        n++;
    }
    int rc = n ? cp_apply_system(s, m, n) : 0;
    if (rc == 0)
        srv_config_refresh(s);
    return rc;
}

static bool in_range(cfdb_bytes b, cfdb_bytes e, cfdb_bytes rb, cfdb_bytes re)
{
    return cfdb_bytes_cmp(b, re) < 0 && cfdb_bytes_cmp(rb, e) < 0;
}

bool srv_config_touched(const cfdb_mutation *m, size_t n)
{
    const cfdb_bytes cb = CFDB_BYTES_LIT(CONF), ce = CFDB_BYTES_LIT(CONF_END);
    const cfdb_bytes lk = CFDB_BYTES_LIT(DB_LOCKED_KEY), lke = CFDB_BYTES_LIT(DB_LOCKED_KEY "\x00");
    for (size_t i = 0; i < n; i++) {
        cfdb_bytes b = m[i].param1, e;
        if (m[i].type == CFDB_MUT_CLEAR_RANGE) {
            e = m[i].param2;
        } else {
            /* a single key: [k, k\0) intersects [rb, re) iff rb <= k < re */
            if ((cfdb_bytes_cmp(b, cb) >= 0 && cfdb_bytes_cmp(b, ce) < 0) || cfdb_bytes_eq(b, lk))
                return true;
            continue;
        }
        if (in_range(b, e, cb, ce) || in_range(b, e, lk, lke))
            return true;
    }
    return false;
}

void srv_config_refresh(srv *s)
{
    int64_t v = cfdb_mvcc_latest_version(s->store);
    cfdb_bytes val;
    bool present = false;
    int mode = 0;
    if (cfdb_mvcc_get(s->store, v, CFDB_BYTES_LIT(CONF "tenant_mode"), &val, &present) == 0 && present) {
        char buf[16];
        size_t n = val.len < sizeof buf - 1 ? val.len : sizeof buf - 1;
        memcpy(buf, val.ptr, n);
        buf[n] = 0;
        mode = atoi(buf);
        if (mode < 0 || mode > 2)
            mode = 0;
    }
    present = false;
    bool locked = cfdb_mvcc_get(s->store, v, CFDB_BYTES_LIT(DB_LOCKED_KEY), &val, &present) == 0 && present &&
                  val.len > 0;
    s->db_locked = locked;
    if (mode != s->tenant_mode) {
        srv_log(s, "tenant mode %d -> %d: publishing a new ClientDBInfo", s->tenant_mode, mode);
        s->tenant_mode = mode;
        s->client_info_id = srv_random_uid(s);
        coord_client_info_changed(s);
    }
}
