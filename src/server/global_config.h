/* The cluster's global configuration as clients see it (global_config.c): GRV proxies'
 * GlobalConfigRefreshReply and ClientDBInfo.history. */
#ifndef CFDB_SERVER_GLOBAL_CONFIG_H
#define CFDB_SERVER_GLOBAL_CONFIG_H

#include "srv_core.h"

/* Whether a commit's mutations (versionstamps applied) write \xff/globalConfig/v. */
bool srv_gc_touched(const cfdb_mutation *m, size_t n);
/* Reads the history again and publishes a new ClientDBInfo (after such a commit, at start). */
void srv_gc_refresh(srv *s);
/* The published history into a ClientDBInfo (points into the server's arena). */
void srv_gc_client_info(srv *s, cfdb_client_db_info *out);
/* A GlobalConfigRefreshReply at the latest version (rows in a). */
void srv_gc_refresh_reply(srv *s, cfdb_arena *a, cfdb_global_config_refresh_reply *r);

#endif
