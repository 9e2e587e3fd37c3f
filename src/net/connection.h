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

#include "connect_packet.h"
#include "event_loop.h"
#include "fb.h"
#include "tls.h"
#include "uid.h"

typedef struct cfdb_conn cfdb_conn;

/* Memory shared by a set of connections (a server's): the bytes of their input and output
 * buffers are counted here. A connection whose input buffer would take `used` past `budget`
 * (a large frame announced, or a new connection) is closed with 1500 platform_error and a log
 * line; while `used` is over the budget, connections with output waiting stop reading frames
 * until it has drained. The caller zeroes it, sets budget and log, and keeps it alive as long
 * as any connection using it; the counters are the connection layer's. */
typedef struct cfdb_conn_pool {
    size_t budget;  /* 0: unbounded (counted only) */
    size_t used, peak;
    uint64_t refused; /* connections closed for the budget */
    /* One line about a peer that broke a rule (PacketLimitExceeded, LargePacketReceived, the
     * budget); NULL: silent. */
    void (*log)(void *log_arg, const char *line);
    void *log_arg;
    uint64_t last_warning_ns; /* large-packet warnings: at most one a second */
} cfdb_conn_pool;

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
    /* Back-pressure: once more than this many bytes of our output wait for the peer, stop
     * reading its frames until they drain to half of it (0 = never stop: a client must keep
     * reading replies whatever it has queued). */
    size_t out_budget;
    /* Shared memory accounting and logging (NULL: none). */
    cfdb_conn_pool *pool;
    /* The peer's ConnectPacket (and the TLS handshake) must be complete this long after the
     * connection started; bytes arriving do not extend it (0: 5 s). Adopted connections that
     * miss it close with 1004 timed_out, outgoing ones with 1026 connection_failed. */
    uint64_t handshake_timeout_ns;
    /* Send one ping once the peer has been silent this long (0 = never): with idle_timeout_ns
     * a little longer, a peer that answers pings stays, a dead one goes (FlowTransport's
     * connectionMonitor for incoming connections). */
    uint64_t quiet_ping_ns;
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
 * loop iteration leaves in as few write() calls as possible. Returns 0 or a FoundationDB
 * error code: 1026 connection_failed (closing), 1500 platform_error (a frame over
 * PACKET_LIMIT, logged as PacketLimitExceeded, or no memory), 1044 when the item cannot be
 * encoded. Frames over PACKET_WARNING are sent and logged (LargePacketSent). */
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
    uint64_t pauses;         /* times reading stopped for back-pressure */
} cfdb_conn_stats;
void cfdb_conn_get_stats(const cfdb_conn *c, cfdb_conn_stats *out);

#endif
