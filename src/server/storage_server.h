/* Storage server role (storage_server.c): the storage servers in s->storage: reads over
 * the shared MVCC store restricted to the shards each one owns (waiting for versions not
 * yet reached), watches (parked until their key changes), metrics and split points. */
#ifndef CFDB_SERVER_STORAGE_SERVER_H
#define CFDB_SERVER_STORAGE_SERVER_H

#include "srv_core.h"

void ss_request(srv *s, srv_conn *c, const srv_endpoint *ep, const uint8_t *msg, uint32_t len);
/* Fires the parked watches whose keys changed (after writes). */
void ss_check_watches(srv *s);
/* Bytes of keys and values in [b, e) at the newest version (storage metrics' estimate). */
int64_t ss_range_bytes(srv *s, cfdb_bytes b, cfdb_bytes e);

#endif
