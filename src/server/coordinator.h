/* Coordinator role (coordinator.c): the well-known coordinator tokens (openDatabase long
 * poll, getLeader, protocol info), the cluster controller's status stream, and the
 * cluster's generation: the proxies' tokens and the ClientDBInfo that clients learn them
 * from. A new generation wakes the parked openDatabase/getLeader polls. */
#ifndef CFDB_SERVER_COORDINATOR_H
#define CFDB_SERVER_COORDINATOR_H

#include "srv_core.h"

void coord_open_database(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void coord_get_leader(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void coord_protocol_info(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void coord_status(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
/* A new generation of proxies: new tokens, new ClientDBInfo id; wakes long polls. */
void coord_new_generation(srv *s);
void coord_client_info_changed(srv *s);
/* Answers an openDatabase (leader false) or getLeader poll for a key that moved: a
 * forward to the current connection string. */
void coord_forward_reply(srv *s, srv_conn *c, cfdb_uid reply, bool leader);

/* Whether listener is a coordination server (coord_listener or a --coordinator one). */
bool coord_is_listener(const srv *s, int listener);

/* Fills a ClientDBInfo in the arena. */
void coord_client_db_info(srv *s, cfdb_arena *a, cfdb_client_db_info *out);

#endif
