/* Commit proxy role (commit_proxy.c): key-server locations, tenant ids, and commits,
 * queued per loop iteration (s->commits), resolved, given versions, made durable in the
 * write-ahead log and applied to the store before they are answered. The batch timer
 * that calls cp_flush is the core's (srv_batch_schedule, dispatch.c). */
#ifndef CFDB_SERVER_COMMIT_PROXY_H
#define CFDB_SERVER_COMMIT_PROXY_H

#include <stddef.h>

#include "mutation.h"
#include "srv_core.h"

void cp_key_server_locations(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void cp_commit(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void cp_get_tenant_id(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
/* GetDDMetricsRequest (stream 9): per shard its byte estimate */
void cp_dd_metrics(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
/* ExclusionSafetyCheckRequest (stream 8): the data distributor's team check */
void cp_exclusion_safety_check(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
/* Resolves, logs, applies and answers the queued commits. */
void cp_flush(srv *s);
/* Applies one batch of already-decided mutations (system writes, recovery). */
int cp_apply_system(srv *s, const cfdb_mutation *m, size_t n);

#endif
