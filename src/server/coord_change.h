/* Coordinator changes (coord_change.c): what a one-process fdbserver does when a commit
 * sets \xff/coordinators to a new connection string (fdbclient ManagementAPI
 * changeQuorumChecker sets it; fdbserver CommitProxyServer then sends ChangeCoordinatorsRequest
 * to the cluster controller, which moves the coordinated state and ends the generation:
 * the commit's batch is answered commit_unknown_result, the old cluster key forwards to the
 * new connection string, a new generation of proxies starts).
 *
 * Invariants: the cluster key this server serves is always s->cluster_desc:s->cluster_id and
 * its coordinators are s->coord_set (listener indexes, in the string's order); every key it
 * served before is in s->old_keys and forwards to the current connection string; a new string
 * is accepted only when each of its coordinators is one of this process's coordination
 * servers (s->coord_listeners: the main listener and the --coordinator ones), each named
 * once, otherwise the transaction is refused with coordinators_changed and nothing of it is
 * applied (fdbserver's cluster controller would fail to parse a string naming one twice, its
 * proxy would die and the client would see commit_unknown_result; nothing is applied there
 * either). The accepted string is in \xff/coordinators, so with --datadir it survives a
 * restart: coord_change_recover adopts it when it names only coordination servers this
 * process runs again. */
#ifndef CFDB_SERVER_COORD_CHANGE_H
#define CFDB_SERVER_COORD_CHANGE_H

#include "srv_core.h"

/* Looks at one transaction's mutations. 0: it sets no new \xff/coordinators value;
 * 1: it sets one this server can take (copied to out, NUL-terminated);
 * CFDB_ERR_COORDINATORS_CHANGED: it sets one this server cannot take. */
int coord_change_check(srv *s, const cfdb_mutation *m, size_t n, char *out, size_t cap);

/* After the batch that set it was applied: adopt the new connection string. */
void coord_change_apply(srv *s, const char *cs);

/* At start, after the data directory was read: adopt the \xff/coordinators value a change
 * left there (its description, id and coordinators) when this process serves all of them. */
void coord_change_recover(srv *s);

/* A cluster key this server served before: the clients that use it are forwarded. */
bool coord_key_forwarded(const srv *s, cfdb_bytes key);

#endif
