/* SPDX-License-Identifier: Apache-2.0 */
/* FoundationDB 7.3's tenant metadata keys (fdbclient/Tenant.h, TenantMetadataSpecification at
 * 7.3.77), shared by the client's management modules, cfdb-server and the shell:
 *   \xff/tenant/map/<id: 8 bytes big-endian>   TenantMapEntry (cfdb_msg_tenant_map_entry,
 *                                               stored with fb_encode_versioned)
 *   \xff/tenant/nameIndex/<tuple(name)>        tuple(id)
 *   \xff/tenant/lastId, count, lastModification, idPrefix
 *   \xff/tenant/tenantGroup/map/<group>, tenantGroup/tenantIndex/<tuple(group, id)>
 * with the cluster's tenant mode in \xff/conf/tenant_mode and a metacluster registration
 * in \xff/metacluster/clusterRegistration. A tenant's key prefix is its id, 8 bytes
 * big-endian. */
#ifndef CFDB_TENANT_KEYS_H
#define CFDB_TENANT_KEYS_H

#include <stdint.h>

#define TENANT_MAP_PREFIX "\xff/tenant/map/"
#define TENANT_NAME_INDEX_PREFIX "\xff/tenant/nameIndex/"
#define TENANT_LAST_ID_KEY "\xff/tenant/lastId"
#define TENANT_COUNT_KEY "\xff/tenant/count"
#define TENANT_LAST_MODIFICATION_KEY "\xff/tenant/lastModification"
#define TENANT_ID_PREFIX_KEY "\xff/tenant/idPrefix"
#define TENANT_GROUP_MAP_PREFIX "\xff/tenant/tenantGroup/map/"
#define TENANT_GROUP_INDEX_PREFIX "\xff/tenant/tenantGroup/tenantIndex/"
#define TENANT_MODE_KEY "\xff/conf/tenant_mode"
#define METACLUSTER_REGISTRATION_KEY "\xff/metacluster/clusterRegistration"

#define CFDB_TENANT_PREFIX_SIZE 8

/* TenantAPI::TenantLockState */
enum { TENANT_UNLOCKED = 0, TENANT_READ_ONLY = 1, TENANT_LOCKED = 2 };

/* The 8-byte key prefix of tenant id (big-endian). */
static inline void cfdb_tenant_prefix(int64_t id, uint8_t out[CFDB_TENANT_PREFIX_SIZE])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)id >> (56 - 8 * i));
}

#endif
