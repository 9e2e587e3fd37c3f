/* A FoundationDB 7.3 connection on the event loop: ConnectPacket exchange, framed messages
 * with XXH3 checksums, automatic answers to pings, coalesced writes. Shared by the client
 * and the dev server; all calls happen on the loop thread.
 *
 * Lifetime: a connection lives until cfdb_conn_close() or until it fails; either way
 * on_closed is called exactly once (not from inside cfdb_conn_close itself), after which
 * the connection must not be used. Memory is released after on_closed returns. */
#ifndef CFDB_CONNECTION_H
#define CFDB_CONNECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/connect_packet.h"
#include "cfdb/event_loop.h"
#include "cfdb/fb.h"
#include "cfdb/tls.h"
#include "cfdb/uid.h"

typedef struct cfdb_conn cfdb_conn;

typedef struct cfdb_conn_callbacks {
    /* The peer's ConnectPacket arrived and is compatible; frames may follow. */
    void (*on_open)(cfdb_conn *c, const cfdb_connect_packet *peer, void *arg);
    /* One message addressed to `token`. msg is valid only during the call. Pings to the
     * well-known ping token are answered by the connection and not reported. */
    void (*on_frame)(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len, void *arg);
    /* The connection is gone: error is a FoundationDB code (1026 connection_failed,
     * 2100 incompatible_protocol_version, 1520 checksum_failed, 1500 platform_error ...),
     * or 0 after cfdb_conn_close. */
    void (*on_closed)(cfdb_conn *c, int error, void *arg);
} cfdb_conn_callbacks;

typedef struct cfdb_conn_options {
    /* What our ConnectPacket says: a listening server gives its port and IPv4 address
     * (clients assert the port equals the one they dialled); a client gives zeros. */
    uint16_t canonical_port;
    uint32_t canonical_ip4;
    uint64_t connection_id;
    /* Disconnect if the peer sends nothing at all for this long (0 = never). */
    uint64_t idle_timeout_ns;
    /* Clients: send a ping after this much silence (0 = never). */
    uint64_t ping_interval_ns;
    /* Non-NULL: the connection runs TLS with this context (client or server side as the
     * context was made) from its first byte, and frames carry no checksum. The context must
     * outlive the connection. A failed handshake closes it with 1026 connection_failed, as
     * libfdb_c reports it. */
    cfdb_tls_ctx *tls;
} cfdb_conn_options;

/* Starts a non-blocking connect to ip:port ("127.0.0.1", "::1"); our ConnectPacket is
 * queued at once. Returns NULL (and sets errno) only when no socket could be made. */
cfdb_conn *cfdb_conn_connect(cfdb_loop *loop, const char *ip, uint16_t port, const cfdb_conn_options *opt,
                             const cfdb_conn_callbacks *cb, void *arg);

/* Adopts an accepted socket (server side); our ConnectPacket is queued at once (on TLS, once
 * the handshake is done). NULL on failure, and the fd is still the caller's to close. */
cfdb_conn *cfdb_conn_adopt(cfdb_loop *loop, int fd, const cfdb_conn_options *opt, const cfdb_conn_callbacks *cb,
                           void *arg);

/* Queues one message to `token`. Writes are coalesced: everything queued during one
 * loop iteration leaves in as few write() calls as possible. Returns 0 or a negative
 * FoundationDB error code (e.g. the connection is closing: -1026). */
int cfdb_conn_send(cfdb_conn *c, cfdb_uid token, const fb_message *m, const void *item, cfdb_reply_error error);

/* Queues an already encoded message. */
int cfdb_conn_send_raw(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len);

/* Closes after trying to flush what is queued; on_closed(c, 0) follows from the loop. */
void cfdb_conn_close(cfdb_conn *c);

/* Drops the connection at once, as a network failure would (for fault injection). */
void cfdb_conn_abort(cfdb_conn *c, int error);

bool cfdb_conn_is_open(const cfdb_conn *c);
void *cfdb_conn_user(const cfdb_conn *c);
void cfdb_conn_set_user(cfdb_conn *c, void *arg);

typedef struct cfdb_conn_stats {
    uint64_t frames_in, frames_out, bytes_in, bytes_out, writes, reads;
    uint64_t pings;          /* pings we sent */
    uint64_t idle_timeouts;  /* 1 if it was closed for the peer's silence */
    uint64_t peer_protocol;  /* from the peer's ConnectPacket, once open */
} cfdb_conn_stats;
void cfdb_conn_get_stats(const cfdb_conn *c, cfdb_conn_stats *out);

#endif
