/* The configuration database's node (config_node.c): what a 7.3.77 coordinator's ConfigNode
 * answers on the well-known ConfigTransactionInterface tokens 13..17 for a PAXOS
 * configuration database. One state serves every coordination server of the process. */
#ifndef CFDB_SERVER_CONFIG_NODE_H
#define CFDB_SERVER_CONFIG_NODE_H

#include "srv_core.h"

/* Handles a request to well-known token 13..17 on a coordination listener. */
void config_node_dispatch(srv *s, srv_conn *c, uint32_t token, const uint8_t *msg, uint32_t len);
void config_node_free(srv *s);

#endif
