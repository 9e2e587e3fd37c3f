/* Tenants for the API tests, made the way FoundationDB 7.3.77's TenantManagement
 * (fdbclient/include/fdbclient/TenantManagement.actor.h createTenantTransaction) makes them,
 * by writing the \xff/tenant/ system keys (TenantMetadataSpecification in
 * fdbclient/include/fdbclient/Tenant.h) in one raw-access transaction:
 *   \xff/tenant/map/<id as 8 big-endian bytes> = TenantMapEntry (IncludeVersion: the protocol
 *       version, 8 bytes little-endian, then the ObjectWriter object, file id 7054389: id,
 *       tenantName, tenantLockState, tenantLockId, tenantGroup, configurationSequenceNum)
 *   \xff/tenant/nameIndex/<tuple(name)> = tuple(id)
 *   \xff/tenant/lastId = tuple(id)
 *   \xff/tenant/count += 1 (AddValue, 8 bytes little-endian)
 * Deleting clears the map entry and the name index and adds -1 to the count. The next id is
 * lastId + 1 (1 for the first), read in the same transaction. */
#ifndef CFDB_TESTS_API_TENANT_FIXTURE_H
#define CFDB_TESTS_API_TENANT_FIXTURE_H

#include "api_helpers.h"

/* Creates tenant `name` on db: 0 and its id in *id, or an FDB error. */
fdb_error_t tf_create_tenant(FDBDatabase *db, const char *name, int64_t *id);
/* Removes tenant (name, id) on db (its data is not checked). */
fdb_error_t tf_delete_tenant(FDBDatabase *db, const char *name, int64_t id);
/* Sets \xff/conf/tenant_mode ("0" disabled, "1" optional, "2" required). */
fdb_error_t tf_set_tenant_mode(FDBDatabase *db, int mode);
/* The tenant prefix of id (8 big-endian bytes). */
void tf_prefix(int64_t id, uint8_t out[8]);
/* The TenantMapEntry value written for (id, name): its bytes into out (cap), length returned,
 * 0 if it does not fit. */
int tf_entry_value(int64_t id, const char *name, uint8_t *out, int cap);

/* Opening a tenant, a transaction in it, and a committed write there, each asserting success
 * (cmocka): the tenant named name of g_env.db; a new transaction of t; key=value set in t
 * (value NULL: key cleared) and committed with the standard retry loop. */
FDBTenant *tf_open_tenant(const char *name);
FDBTransaction *tf_tenant_tr(FDBTenant *t);
void tf_tenant_set(FDBTenant *t, const char *key, const char *value);

#endif
