/* Tenants as the dev server's roles see them (tenant_map.c): the tenant map lives in the
 * store under \xff/tenant/ (written by clients' management transactions, as on a real
 * cluster), and every role reads it from the MVCC store at the version it serves, so a
 * storage read at version v sees the tenants that existed at v, as a storage server's
 * versioned tenantMap does (fdbserver/storageserver.actor.cpp checkTenantEntry).
 *
 * \xff/tenant/map/<id as 8 big-endian bytes> = TenantMapEntry, ObjectWriter with
 * IncludeVersion: 8 bytes protocol version, then the flatbuffers object (file id 7054389,
 * fields id, tenantName, tenantLockState, tenantLockId, tenantGroup,
 * configurationSequenceNum; fdbclient/include/fdbclient/Tenant.h). A tenant's prefix is
 * its id as 8 big-endian bytes (TenantAPI::idToPrefix). */
#ifndef CFDB_SERVER_TENANT_MAP_H
#define CFDB_SERVER_TENANT_MAP_H

#include "tenant_keys.h" /* key names, lock states, cfdb_tenant_prefix */
#include "srv_core.h"

typedef struct srv_tenant {
    int64_t id;
    cfdb_bytes name; /* in the caller's arena */
    uint8_t lock_state;
} srv_tenant;

/* A key of a tenant's request made absolute: *k becomes prefix + *k (in a), unchanged when
 * prefix is empty. 0, or 4000 (out of memory) leaving *k as it was. */
int srv_tenant_key(cfdb_arena *a, cfdb_bytes prefix, cfdb_bytes *k);
/* Decodes a \xff/tenant/map/ value. 0, or 1044 when it does not decode. */
int srv_tenant_decode(cfdb_bytes value, cfdb_arena *a, srv_tenant *out);
/* The tenant with this id at version: 0, or tenant_not_found (2131). */
int srv_tenant_at(srv *s, int64_t version, int64_t id, cfdb_arena *a, srv_tenant *out);
/* The tenant named name at the newest version (the commit proxy's tenantNameIndex):
 * 0, or tenant_not_found (2131). */
int srv_tenant_by_name(srv *s, cfdb_bytes name, cfdb_arena *a, srv_tenant *out);
/* The read check of a storage server: tenant_not_found when the tenant does not exist at
 * version, tenant_locked (2144) when it is LOCKED and the read is not lock aware.
 * tenant_id -1 (no tenant) passes. On success *prefix is the tenant's prefix. */
int srv_tenant_check_read(srv *s, int64_t version, int64_t tenant_id, bool lock_aware, cfdb_arena *a,
                          cfdb_bytes *prefix);
/* Number of tenants at the newest version. */
size_t srv_tenant_count(srv *s);

#endif
