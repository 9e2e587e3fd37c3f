/* GRV proxy role (grv_proxy.c): GetReadVersion requests, queued per loop iteration and
 * answered together from the server's read version (s->grvs), and the global config
 * refresh. */
#ifndef CFDB_SERVER_GRV_PROXY_H
#define CFDB_SERVER_GRV_PROXY_H

#include "srv_core.h"

void grv_request(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void grv_global_config_refresh(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
/* GetHealthMetricsRequest (GrvProxyInterface stream 2): this process's health metrics */
void grv_health_metrics(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
/* Answers the queued GRV requests (the core's batch timer calls it). */
void grv_flush(srv *s);

#endif
