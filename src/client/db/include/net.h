/* The client's network context: the event loop the network thread runs, one connection
 * per peer address, and the table that routes replies to the requests awaiting them.
 * Everything here runs on the network thread. */
#ifndef CFDB_CLIENT_NET_H
#define CFDB_CLIENT_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connection.h"
#include "event_loop.h"
#include "fb.h"
#include "messages.h"

typedef struct cfdb_client cfdb_client;
struct cfdb_json;
typedef struct cfdb_peer cfdb_peer;

/* A reply (error 0, the message bytes, valid during the call) or a transport failure
 * (error 1030 request_maybe_delivered: the connection went away while waiting). */
typedef void (*cfdb_reply_fn)(void *ctx, int error, const uint8_t *msg, uint32_t len);

cfdb_client *cfdb_client_create(void);
void cfdb_client_destroy(cfdb_client *cl);
cfdb_loop *cfdb_client_loop(cfdb_client *cl);

/* Installs the TLS context for peers marked :tls (any thread, once). False if one is
 * already installed (ctx then stays the caller's). The client frees it when destroyed. */
bool cfdb_client_set_tls(cfdb_client *cl, cfdb_tls_ctx *ctx);
bool cfdb_client_has_tls(cfdb_client *cl);
/* Makes the TLS context when a :tls peer is first needed and none is installed (set before the
 * network runs; called on the network thread; NULL: cannot). */
typedef cfdb_tls_ctx *(*cfdb_tls_factory)(void);
void cfdb_client_set_tls_factory(cfdb_client *cl, cfdb_tls_factory fn);

/* The peer for an address (created on first use; connected lazily), found by hash. NULL if
 * the address is not usable (e.g. hostname not resolved) or memory is out. Without a
 * reference the pointer is good for the current loop step only: a peer with no reference
 * and no request waiting on it is forgotten (its connection closed) after 2 s. */
cfdb_peer *cfdb_client_peer(cfdb_client *cl, const cfdb_network_address *addr);
/* Keeps a peer beyond the current step (location cache entries, proxy lists). */
void cfdb_peer_ref(cfdb_peer *p);
void cfdb_peer_unref(cfdb_peer *p);
/* How many peers the client knows (tests). */
size_t cfdb_client_peer_count(const cfdb_client *cl);

/* fdb_database_get_client_status: a peer's "Connections" entry (libfdb_c's fields), and
 * whether its last connection attempt failed. */
void cfdb_peer_connection_json(cfdb_peer *p, struct cfdb_json *j);
bool cfdb_peer_failed(const cfdb_peer *p);

/* "ip:port" of a peer (IPv6 in brackets, ":tls" when marked). */
void cfdb_peer_address(const cfdb_peer *p, char *buf, size_t cap);

/* Sends a request: allocates a reply token, stores it at *reply_token (the request's
 * ReplyPromise member inside item), encodes and queues the message. The reply (or a
 * failure) is delivered once to fn. Returns a request id for cfdb_client_forget, or 0
 * when the request could not be sent (fn is then not called). */
uint64_t cfdb_client_request(cfdb_client *cl, cfdb_peer *peer, cfdb_uid dest, const fb_message *m, void *item,
                             cfdb_uid *reply_token, cfdb_reply_fn fn, void *ctx);

/* Stops waiting for a request: its reply, if it comes, is dropped; fn is not called. */
void cfdb_client_forget(cfdb_client *cl, uint64_t request_id);

/* 64 random bits (xoshiro seeded from the OS), for tokens and ids. */
uint64_t cfdb_client_random(cfdb_client *cl);

#endif
