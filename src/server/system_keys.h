/* System keys (system_keys.c): the \xff metadata that describes the simulated cluster
 * (\xff/keyServers/, \xff/serverTag/, \xff/serverList/, \xff/coordinators), written
 * into the store through the commit proxy like real metadata. */
#ifndef CFDB_SERVER_SYSTEM_KEYS_H
#define CFDB_SERVER_SYSTEM_KEYS_H

#include "srv_core.h"

/* Writes \xff/keyServers/ (and server list/tag keys) for the current shard map. */
int srv_write_system_keys(srv *s);

#endif
