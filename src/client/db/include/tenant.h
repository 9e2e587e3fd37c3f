/* Tenants, client side (FoundationDB 7.3's Tenant and DatabaseContext::lookupTenant):
 *
 *  - a tenant handle (fdb_database_open_tenant) names a tenant and looks its id up at once: a
 *    GetTenantIdRequest {tenantName, minTenantVersion = latestVersion} to a commit proxy
 *    (CommitProxyInterface stream 11). commit_proxy_memory_limit_exceeded backs off and asks
 *    again (up to RESOURCE_CONSTRAINED_MAX_BACKOFF), as do lost requests and a missing proxy
 *    (basicLoadBalance / onProxiesChanged); any other answer, tenant_not_found (2131)
 *    included, is latched in the handle for good, as libfdb_c's Tenant keeps its idFuture;
 *  - references: the application's handle and each transaction of the tenant (libfdb_c's
 *    ThreadSafeTransaction keeps its Tenant), plus the lookup while it runs; the handle keeps
 *    its database in use;
 *  - the prefix of a tenant is its id as 8 big-endian bytes (TenantAPI::idToPrefix), applied
 *    to a commit by the sans-I/O core (tenant_commit.h).
 *
 * Threads: cfdb_tenant_open / ref / unref / get_id from any thread; cfdb_tenant_wait and
 * cfdb_tenant_id on the network thread. */
#ifndef CFDB_CLIENT_TENANT_H
#define CFDB_CLIENT_TENANT_H

#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"
#include "tenant_keys.h"
#include "database.h"

typedef struct cfdb_tenant cfdb_tenant;
struct cfdb_future;

/* A new handle for `name` (copied), its id lookup started; NULL when memory is short. */
cfdb_tenant *cfdb_tenant_open(cfdb_db *db, cfdb_bytes name);
void cfdb_tenant_ref(cfdb_tenant *t);
void cfdb_tenant_unref(cfdb_tenant *t);
cfdb_db *cfdb_tenant_db(const cfdb_tenant *t);
/* fdb_tenant_get_id: an int64 future of the lookup (its latched error, if it failed). */
struct cfdb_future *cfdb_tenant_get_id(cfdb_tenant *t);
/* Network thread: w->fn(w, error, id) once the lookup has ended (at once if it has). */
void cfdb_tenant_wait(cfdb_tenant *t, cfdb_waiter *w);

#endif
