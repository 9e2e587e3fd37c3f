/* Status (status.c): the cluster section of the status JSON, built from the server's
 * state and counters (served by the coordinator's status request). */
#ifndef CFDB_SERVER_STATUS_H
#define CFDB_SERVER_STATUS_H

#include "srv_core.h"

/* JSON text of the cluster section, in the arena. */
cfdb_bytes status_cluster_json(srv *s, cfdb_arena *a);

#endif
