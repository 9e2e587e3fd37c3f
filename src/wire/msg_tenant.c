/* Tenant metadata objects (fdbclient/include/fdbclient/Tenant.h), stored as system-key values
 * with IncludeVersion (the 8-byte little-endian protocol version, then the flat buffer):
 *   TenantMapEntry (file identifier 7054389): serializer(ar, id, tenantName, tenantLockState,
 *     tenantLockId, tenantGroup, configurationSequenceNum); tenantLockState is an enum class
 *     of uint8_t (0 unlocked, 1 read_only, 2 locked).
 *   TenantGroupEntry (10764222): no fields.
 * The one definition used by the client's tenant modules, the dev server and the tests. */
#include "msg_types.h"

FB_OPTIONAL_DEF(tenant_opt_uid, "Optional<UID>", cfdb_opt_uid, fb_uid);
FB_OPTIONAL_DEF(tenant_opt_group, "Optional<TenantGroupName>", cfdb_opt_bytes, fb_bytes);
FB_TABLE_DEF(tenant_map_entry, "TenantMapEntry", cfdb_tenant_map_entry,
             FB_FIELD(cfdb_tenant_map_entry, id, fb_i64), FB_FIELD(cfdb_tenant_map_entry, tenantName, fb_bytes),
             FB_FIELD(cfdb_tenant_map_entry, tenantLockState, fb_u8),
             FB_FIELD(cfdb_tenant_map_entry, tenantLockId, tenant_opt_uid),
             FB_FIELD(cfdb_tenant_map_entry, tenantGroup, tenant_opt_group),
             FB_FIELD(cfdb_tenant_map_entry, configurationSequenceNum, fb_i64));
const fb_message cfdb_msg_tenant_map_entry = { "TenantMapEntry", 7054389, FB_MSG_REQUEST, &tenant_map_entry };

FB_EMPTY_TABLE_DEF(tenant_group_entry, "TenantGroupEntry", cfdb_tenant_group_entry);
const fb_message cfdb_msg_tenant_group_entry = { "TenantGroupEntry", 10764222, FB_MSG_REQUEST, &tenant_group_entry };
