/* FoundationDB 7.3's tenant metadata as stored under \xff/tenant/ (fdbclient/Tenant.h,
 * TenantMetadataSpecification at 7.3.77), the pieces the management modules need:
 *   map/<id: 8 bytes big-endian>      TenantMapEntry, ObjectWriter with IncludeVersion
 *                                     (u64 protocol version + flat buffer, file id 7054389:
 *                                     id, tenantName, tenantLockState (u8), tenantLockId
 *                                     (Optional<UID>), tenantGroup (Optional<bytes>),
 *                                     configurationSequenceNum)
 *   nameIndex/<tuple(name)>           tuple(id)
 *   lastId                            tuple(id)
 *   count                             int64 little-endian (AddValue)
 *   lastModification                  a versionstamp (SetVersionstampedValue)
 *   tenantGroup/map/<group>           TenantGroupEntry (IncludeVersion, file id 10764222, empty)
 *   tenantGroup/tenantIndex/<tuple(group, id)>  ""
 * and TenantMapEntry::toJson (json_spirit's compact writer, members in key order). */
#ifndef CFDB_CLIENT_TENANT_ENTRY_H
#define CFDB_CLIENT_TENANT_ENTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "uid.h"

#include "tenant_keys.h"

typedef struct tenant_entry {
    int64_t id;
    cfdb_bytes name;
    uint8_t lock_state;
    bool has_lock_id;
    cfdb_uid lock_id;
    bool has_group;
    cfdb_bytes group;
    int64_t config_seq;
} tenant_entry;

/* Encodes / decodes a TenantMapEntry value (into / from a, zero-copy on decode). */
int tenant_entry_encode(const tenant_entry *e, cfdb_arena *a, cfdb_bytes *out);
int tenant_entry_decode(cfdb_bytes value, cfdb_arena *a, tenant_entry *out);
/* The empty TenantGroupEntry value. */
int tenant_group_entry_encode(cfdb_arena *a, cfdb_bytes *out);
/* TenantMapEntry::toJson. */
int tenant_entry_json(const tenant_entry *e, cfdb_arena *a, cfdb_bytes *out);

/* The tuple encodings these keys use: a byte string (code 0x01, \x00 escaped as \x00\xff)
 * and an integer (codes 0x0c..0x1c). append_* write into buf (room: 2 * n + 2, or 9). */
size_t tuple_put_bytes(uint8_t *buf, cfdb_bytes b);
size_t tuple_put_int(uint8_t *buf, int64_t v);
/* Decodes one element at *p: returns 0, or 2020 (invalid tuple) / 1044. */
int tuple_get_int(cfdb_bytes in, size_t *pos, int64_t *out);
int tuple_get_bytes(cfdb_bytes in, size_t *pos, cfdb_arena *a, cfdb_bytes *out);

#endif
