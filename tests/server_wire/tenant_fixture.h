/* Shared pieces of the tenant and configuration tests (test_server_tenants.c,
 * test_server_config.c): an in-process server with two tenants' shards laid out, tenant map
 * values written as fdbclient/include/fdbclient/Tenant.h serializes TenantMapEntry
 * (ObjectWriter, IncludeVersion; file id 7054389: id, tenantName, tenantLockState (uint8_t
 * enum), tenantLockId (Optional<UID>), tenantGroup (Optional<StringRef>),
 * configurationSequenceNum) and checked with the independent reader tests/wire/fdb_ref.c,
 * including the vtable FoundationDB's writer derives from that member list; commits and
 * reads with TenantInfo built by hand. Asserts with cmocka. */
#ifndef CFDB_TESTS_TENANT_FIXTURE_H
#define CFDB_TESTS_TENANT_FIXTURE_H

#include "server_embed.h"

#define SEC 1000000000ull
#define MS 1000000ull

/* tenant 1 ("alpha") and 2 ("beta"): prefixes are the ids as 8 big-endian bytes */
#define PA "\x00\x00\x00\x00\x00\x00\x00\x01"
#define PB "\x00\x00\x00\x00\x00\x00\x00\x02"
#define K(p, s) cfdb_bytes_make(p s, sizeof(p s) - 1)
#define ASSERT_BYTES(b, lit) assert_bytes((b), (lit), sizeof(lit) - 1)

typedef se_fx fx;

typedef struct t_commit {
    cfdb_mutation muts[8];
    uint32_t nmuts;
    cfdb_key_range reads[4], writes[8];
    uint32_t nreads, nwrites;
    int64_t tenant; /* -1 none */
    uint32_t flags;
} t_commit;

/* A server (tenant_mode as cfdb_server_config.tenant_mode; shard boundaries at alpha "k2"
 * and at beta's prefix, so alpha spans two shards), connected. */
fx *fx_start(int tenant_mode);
void fx_stop(fx *f);
/* \xff/tenant/map/ value and key of a tenant (lock: TenantLockState 0, 1, 2) */
cfdb_bytes entry_value(cfdb_arena *a, int64_t id, const char *name, uint8_t lock);
cfdb_bytes map_key(cfdb_arena *a, int64_t id);
/* Commits with a hand-built CommitTransactionRequest (tenant -1: none): the error (0 ok). */
void tc_init(t_commit *t, int64_t tenant, uint32_t flags);
void tc_mut(t_commit *t, cfdb_arena *a, uint8_t type, cfdb_bytes k, cfdb_bytes v);
int tc_commit(fx *f, const t_commit *t);
/* Writes (name NULL: clears) tenant id's map entry, lock aware. */
void put_tenant(fx *f, int64_t id, const char *name, uint8_t lock);
void put_raw(fx *f, cfdb_bytes k, const char *v);
/* alpha (1) and beta (2) with keys k1..k3 / k1, and one key of tenant 0 */
void two_tenants(fx *f);
/* The storage server owning an absolute key. */
cfdb_uid owner_of(fx *f, cfdb_bytes abs_key);
/* Reads with TenantInfo{tenant}: the in-band error (0 ok). */
int t_get(fx *f, int64_t tenant, cfdb_bytes key, int64_t version, bool lock_aware, cfdb_get_value_reply *r);
int t_range(fx *f, cfdb_uid ss, int64_t tenant, cfdb_key_selector b, cfdb_key_selector e,
            cfdb_get_key_values_reply *r);
int t_get_key(fx *f, cfdb_uid ss, int64_t tenant, cfdb_key_selector sel, cfdb_get_key_reply *r);
void assert_bytes(cfdb_bytes b, const char *want, size_t n);
/* GetTenantIdRequest: the error (0 ok, *id set). */
int tenant_id(fx *f, const char *name, int64_t *id);
/* Whether a GRV reply says the database is locked. */
bool grv_locked(fx *f);

/* The cluster controller's interface (from a GetLeaderRequest) and its status json (free it). */
cfdb_cluster_interface cluster_iface(fx *f);
char *status_json(fx *f);

#endif
