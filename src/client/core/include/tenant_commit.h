/* A tenant transaction's commit made absolute (NativeAPI applyTenantPrefix): the tenant's
 * prefix is its id as 8 big-endian bytes (TenantAPI::idToPrefix); it goes before every
 * mutation's param1 (the metadata version key excepted), ClearRange's param2,
 * SetVersionstampedKey's key (its trailing little-endian offset grows by 8) and every read and
 * write conflict range whose begin is not the metadata version key. Sans-I/O (tenant_commit.c). */
#ifndef CFDB_CLIENT_TENANT_COMMIT_H
#define CFDB_CLIENT_TENANT_COMMIT_H

#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"
#include "tenant_keys.h"

/* applyTenantPrefix on a commit built in arena a: 0 or TXN_ERR_NO_MEMORY's code. */
int cfdb_tenant_apply_prefix(cfdb_commit_transaction *t, int64_t id, cfdb_arena *a);

#endif
