/* A FoundationDB connection on the event loop. The byte-level work (ConnectPacket, frame
 * parsing, checksums, message encoding) is the sans-I/O wire layer's; this file moves
 * bytes between it and a socket, answers pings, and coalesces writes: messages queued
 * during one loop iteration leave together in one write() from a task posted to the loop.
 * On a TLS connection the same plaintext passes through a TLS session (tls.h) on its
 * way to and from the socket.
 *
 * Bounds (FlowTransport's rules where it has them):
 *  - input: the buffer holds at most one partial frame; it is sized to the frame announced
 *    (as getNewBufferSize does), never above PACKET_LIMIT (100 MB: larger closes with 1500
 *    and a PacketLimitExceeded line), and shrinks back to READ_CHUNK once a large frame is
 *    consumed. Frames over PACKET_WARNING (2 MB) are logged, at most once a second.
 *  - output: with out_budget set, frames stop being read while more than out_budget bytes
 *    wait for the peer (`paused`: no read interest, the rest of the input stays buffered),
 *    and start again once they drained to half; the output buffer shrinks after a burst.
 *  - a pool, when given, counts in_cap + out_cap of all its connections (see connection.h).
 *  - time: one absolute handshake deadline; after it, idle_timeout_ns of silence closes
 *    and quiet_ping_ns of silence sends one ping (reset by any byte received). */
#include "connection.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "endpoint.h"
#include "error_codes.h"
#include "frame.h"
#include "messages.h"
#include "protocol_version.h"
#include "tcp.h"
#include "wire_errors.h"

enum conn_state {
    CONN_CONNECTING, /* TCP connect in progress */
    CONN_HANDSHAKE,  /* waiting for the peer's ConnectPacket */
    CONN_OPEN,
    CONN_DEAD,       /* closed; freed by the finalize task */
};

#define READ_CHUNK 65536
#define TLS_OUT_CAP 65536
#define CONNECT_TIMEOUT_NS (5ull * 1000000000ull)
#define OUT_MIN 16384          /* output buffer after a burst */
#define OUT_KEEP (4 * OUT_MIN) /* larger than this when drained: shrink to OUT_MIN */

struct cfdb_conn {
    cfdb_loop *loop;
    int fd;
    enum conn_state state;
    cfdb_conn_callbacks cb;
    void *arg;
    cfdb_conn_options opt;
    int close_error;

    uint8_t *in;
    size_t in_len, in_cap;
    uint8_t *out;
    size_t out_off, out_len, out_cap;
    bool flush_posted;        /* flush_node is queued */
    bool want_write;
    bool close_after_flush;

    fb_writer scratch;
    bool checksum;            /* plaintext links checksum frames; TLS links do not */
    cfdb_tls_session *tls;
    uint8_t *tls_out;         /* ciphertext on its way to the socket (TLS_OUT_CAP) */
    uint8_t *tls_in;          /* ciphertext just read (READ_CHUNK), same allocation */
    size_t tls_out_off, tls_out_len;
    cfdb_uid ping_token;
    cfdb_timer ping_timer;
    cfdb_timer idle_timer;
    uint64_t last_rx_ns;
    uint64_t handshake_deadline_ns;
    bool quiet_pinged;        /* the quiet_ping_ns ping went out since the last byte in */
    bool paused;              /* not reading: too much output waits for the peer */
    bool resume_posted;       /* resume_node is queued */
    /* Embedded task nodes: posting them cannot fail. Each is posted at most once at a
     * time (the *_posted flags), and nothing is posted after CONN_DEAD except
     * finalize_node, so the nodes queued before it have run when it frees the struct. */
    cfdb_task flush_node;
    cfdb_task resume_node;
    cfdb_task finalize_node;
    bool adopted;             /* accepted (server side) rather than dialled */
    cfdb_conn_stats stats;
};

static void conn_fail(cfdb_conn *c, int error);
static void flush_now(cfdb_conn *c);

/* Buffer capacity changed from old_cap to new_cap bytes: the pool's count follows. */
static void account(cfdb_conn *c, size_t old_cap, size_t new_cap)
{
    cfdb_conn_pool *p = c->opt.pool;
    if (!p)
        return;
    p->used = p->used - old_cap + new_cap;
    if (p->used > p->peak)
        p->peak = p->used;
}

static void conn_log(cfdb_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void conn_log(cfdb_conn *c, const char *fmt, ...)
{
    cfdb_conn_pool *p = c->opt.pool;
    if (!p || !p->log)
        return;
    char line[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->log(p->log_arg, line);
}

/* Large-packet warnings, at most one a second per pool (TraceEvent's suppressFor(1.0)). */
static bool warning_due(cfdb_conn *c)
{
    cfdb_conn_pool *p = c->opt.pool;
    if (!p)
        return false;
    uint64_t now = cfdb_loop_now_ns(c->loop);
    if (p->last_warning_ns && now - p->last_warning_ns < 1000000000ull)
        return false;
    p->last_warning_ns = now;
    return true;
}

static void finalize_task(void *arg)
{
    cfdb_conn *c = arg;
    if (c->cb.on_closed)
        c->cb.on_closed(c, c->close_error, c->arg);
    account(c, c->in_cap + c->out_cap, 0);
    free(c->in);
    free(c->out);
    free(c->tls_out);
    cfdb_tls_session_free(c->tls);
    fb_writer_free(&c->scratch);
    free(c);
}

static void conn_fail(cfdb_conn *c, int error)
{
    if (c->state == CONN_DEAD)
        return;
    c->state = CONN_DEAD;
    c->close_error = error;
    cfdb_loop_timer_cancel(c->loop, &c->ping_timer);
    cfdb_loop_timer_cancel(c->loop, &c->idle_timer);
    if (c->fd >= 0) {
        cfdb_loop_remove_fd(c->loop, c->fd);
        close(c->fd);
        c->fd = -1;
    }
    /* on_closed runs from the loop, never from inside the caller's own call */
    cfdb_loop_post_task(c->loop, &c->finalize_node);
}

/* Room for `more` bytes of output; false when out of memory. */
static bool reserve_out(cfdb_conn *c, size_t more)
{
    if (c->out_len + more <= c->out_cap)
        return true;
    if (c->out_off > 0) { /* slide unsent bytes to the front first */
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
        if (c->out_len + more <= c->out_cap)
            return true;
    }
    size_t cap = c->out_cap ? c->out_cap : OUT_MIN;
    while (cap < c->out_len + more)
        cap *= 2;
    uint8_t *nb = realloc(c->out, cap);
    if (!nb)
        return false;
    account(c, c->out_cap, cap);
    c->out = nb;
    c->out_cap = cap;
    return true;
}

/* After a burst has left: give the memory back. */
static void shrink_out(cfdb_conn *c)
{
    if (c->out_len != 0 || c->out_cap <= OUT_KEEP)
        return;
    uint8_t *nb = realloc(c->out, OUT_MIN);
    if (!nb)
        return;
    account(c, c->out_cap, OUT_MIN);
    c->out = nb;
    c->out_cap = OUT_MIN;
}

/* Bytes of our output that have not reached the socket yet. */
static size_t out_pending(const cfdb_conn *c)
{
    size_t n = c->out_len - c->out_off;
    if (c->tls)
        n += (c->tls_out_len - c->tls_out_off) + cfdb_tls_output_pending(c->tls);
    return n;
}

static bool pool_over(const cfdb_conn *c)
{
    const cfdb_conn_pool *p = c->opt.pool;
    return p && p->budget && p->used > p->budget;
}

/* Stop reading the peer's frames? */
static bool must_pause(const cfdb_conn *c)
{
    if (!c->opt.out_budget && !c->opt.pool)
        return false;
    size_t pend = out_pending(c);
    return (c->opt.out_budget && pend > c->opt.out_budget) || (pend > 0 && pool_over(c));
}

static bool may_resume(const cfdb_conn *c)
{
    size_t pend = out_pending(c);
    return !(c->opt.out_budget && pend > c->opt.out_budget / 2) && !(pend > 0 && pool_over(c));
}

static void update_interest(cfdb_conn *c)
{
    if (c->fd >= 0)
        cfdb_loop_modify_fd(c->loop, c->fd, (c->paused ? 0 : CFDB_EV_READ) | (c->want_write ? CFDB_EV_WRITE : 0));
}

static void set_write_interest(cfdb_conn *c, bool on)
{
    if (c->want_write == on || c->fd < 0)
        return;
    c->want_write = on;
    update_interest(c);
}

static void resume_task(void *arg);

/* Output drained a little: reading may start again (from a posted task, so that frames are
 * never delivered from inside a write). */
static void maybe_resume(cfdb_conn *c)
{
    if (!c->paused || c->resume_posted || c->state == CONN_DEAD || !may_resume(c))
        return;
    c->resume_posted = true;
    cfdb_loop_post_task(c->loop, &c->resume_node);
}

/* Writes queued ciphertext until the socket pushes back. False when the connection failed. */
static bool tls_push(cfdb_conn *c)
{
    for (;;) {
        if (c->tls_out_off == c->tls_out_len) {
            c->tls_out_off = 0;
            c->tls_out_len = cfdb_tls_output(c->tls, c->tls_out, TLS_OUT_CAP);
            if (c->tls_out_len == 0)
                break;
        }
        size_t n;
        if (cfdb_tcp_write(c->fd, c->tls_out + c->tls_out_off, c->tls_out_len - c->tls_out_off, &n)) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return false;
        }
        if (n == 0) {
            set_write_interest(c, true);
            return true;
        }
        c->stats.writes++;
        c->stats.bytes_out += n;
        c->tls_out_off += n;
    }
    set_write_interest(c, false);
    return true;
}

static void flush_tls(cfdb_conn *c)
{
    /* plaintext waits in c->out until the handshake is done */
    if (cfdb_tls_established(c->tls) && c->out_off < c->out_len) {
        if (cfdb_tls_write(c->tls, c->out + c->out_off, c->out_len - c->out_off)) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        c->out_off = c->out_len = 0;
        shrink_out(c);
    }
    if (!tls_push(c))
        return;
    if (c->close_after_flush && c->out_len == 0 && c->tls_out_off == c->tls_out_len)
        conn_fail(c, 0);
    else
        maybe_resume(c);
}

static void flush_now(cfdb_conn *c)
{
    if (c->state == CONN_DEAD || c->state == CONN_CONNECTING)
        return;
    if (c->tls) {
        flush_tls(c);
        return;
    }
    while (c->out_off < c->out_len) {
        size_t n;
        if (cfdb_tcp_write(c->fd, c->out + c->out_off, c->out_len - c->out_off, &n)) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        if (n == 0) {
            set_write_interest(c, true);
            maybe_resume(c);
            return;
        }
        c->stats.writes++;
        c->stats.bytes_out += n;
        c->out_off += n;
    }
    c->out_off = c->out_len = 0;
    shrink_out(c);
    set_write_interest(c, false);
    if (c->close_after_flush)
        conn_fail(c, 0);
    else
        maybe_resume(c);
}

static void flush_task(void *arg)
{
    cfdb_conn *c = arg;
    c->flush_posted = false;
    flush_now(c);
}

static void schedule_flush(cfdb_conn *c)
{
    if (c->flush_posted || c->state == CONN_DEAD)
        return;
    c->flush_posted = true;
    cfdb_loop_post_task(c->loop, &c->flush_node);
}

static int queue_frame(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len)
{
    size_t head = cfdb_frame_header_size(c->checksum);
    uint64_t packet = (uint64_t)len + CFDB_FRAME_TOKEN_SIZE; /* the length word's value */
    if (packet > CFDB_FRAME_PACKET_LIMIT) {
        /* FlowTransport logs this and sends anyway; its peer would then drop the connection,
         * so the frame is refused here and the connection kept */
        conn_log(c, "PacketLimitExceeded: not sending a %llu-byte packet (limit %u)", (unsigned long long)packet,
                 CFDB_FRAME_PACKET_LIMIT);
        return CFDB_WIRE_PLATFORM_ERROR;
    }
    if (packet > CFDB_FRAME_PACKET_WARNING && warning_due(c))
        conn_log(c, "LargePacketSent: %llu bytes (warning above %u)", (unsigned long long)packet,
                 CFDB_FRAME_PACKET_WARNING);
    if (!reserve_out(c, head + len))
        return CFDB_WIRE_OUT_OF_MEMORY;
    uint8_t *frame = c->out + c->out_len;
    memcpy(frame + head, msg, len);
    c->out_len += cfdb_frame_seal(frame, token, len, c->checksum);
    c->stats.frames_out++;
    schedule_flush(c);
    return 0;
}

int cfdb_conn_send(cfdb_conn *c, cfdb_uid token, const fb_message *m, const void *item, cfdb_reply_error error)
{
    if (c->state == CONN_DEAD || c->close_after_flush)
        return CFDB_WIRE_CONNECTION_FAILED;
    int rc = fb_encode(&c->scratch, m, item, error);
    if (rc)
        return rc;
    return queue_frame(c, token, fb_writer_message(&c->scratch), (uint32_t)fb_writer_message_len(&c->scratch));
}

int cfdb_conn_send_raw(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len)
{
    if (c->state == CONN_DEAD || c->close_after_flush)
        return CFDB_WIRE_CONNECTION_FAILED;
    return queue_frame(c, token, msg, len);
}

static void answer_ping(cfdb_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_ping_request req;
    cfdb_arena a;
    uint64_t mem[64];
    cfdb_arena_init_with(&a, mem, sizeof mem);
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_ping_request, msg, len, &req, NULL, &a) == 0) {
        cfdb_void v = { 0 };
        cfdb_conn_send(c, req.reply.token, &cfdb_msg_void_reply, &v, 0);
    }
    cfdb_arena_free(&a);
}

static void arm_idle(cfdb_conn *c);

/* Size of the whole frame whose start is at the front of the input, or 0 if its length word
 * has not arrived. Over PACKET_LIMIT: logged, the connection fails, and 1 is returned. */
static size_t frame_ahead(cfdb_conn *c, size_t at)
{
    if (c->state != CONN_OPEN || c->in_len - at < 4)
        return 0;
    uint32_t packet;
    memcpy(&packet, c->in + at, 4);
    if (packet > CFDB_FRAME_PACKET_LIMIT) {
        conn_log(c, "PacketLimitExceeded: peer announced a %u-byte packet (limit %u): closing the connection", packet,
                 CFDB_FRAME_PACKET_LIMIT);
        conn_fail(c, CFDB_WIRE_PLATFORM_ERROR);
        return 1;
    }
    return cfdb_frame_header_size(c->checksum) - CFDB_FRAME_TOKEN_SIZE + (size_t)packet;
}

/* Resizes the input buffer to cap bytes, within the pool's budget; false (the connection
 * failed) if impossible. */
static bool resize_input(cfdb_conn *c, size_t cap)
{
    cfdb_conn_pool *p = c->opt.pool;
    if (cap > c->in_cap && p && p->budget && p->used + (cap - c->in_cap) > p->budget) {
        p->refused++;
        conn_log(c, "connection memory budget of %zu bytes reached (%zu in use): refusing %zu more bytes of input, "
                    "closing the connection",
                 p->budget, p->used, cap - c->in_cap);
        conn_fail(c, CFDB_WIRE_OUT_OF_MEMORY);
        return false;
    }
    uint8_t *nb = realloc(c->in, cap);
    if (!nb) {
        if (cap < c->in_cap)
            return true; /* could not shrink: keep the larger buffer */
        conn_fail(c, CFDB_WIRE_OUT_OF_MEMORY);
        return false;
    }
    account(c, c->in_cap, cap);
    c->in = nb;
    c->in_cap = cap;
    return true;
}

/* Room to read into: the whole of a frame whose length is known (no more: a 99 MB frame
 * takes 99 MB, not the next power of two), else at least a quarter chunk. False (the
 * connection failed) if impossible. */
static bool grow_input(cfdb_conn *c)
{
    size_t frame = frame_ahead(c, 0);
    if (c->state == CONN_DEAD)
        return false;
    size_t need = frame > c->in_len ? frame : c->in_len + READ_CHUNK / 4;
    if (need <= c->in_cap)
        return true;
    size_t cap = frame > c->in_len ? frame : c->in_len + READ_CHUNK;
    if (cap < READ_CHUNK)
        cap = READ_CHUNK;
    return resize_input(c, cap);
}

/* After a large frame has been consumed: back to one chunk. */
static void shrink_input(cfdb_conn *c)
{
    if (c->in_cap > 2 * READ_CHUNK && c->in_len <= READ_CHUNK / 2)
        resize_input(c, READ_CHUNK);
}

/* Processes everything complete in the input buffer (until paused). */
static void process_input(cfdb_conn *c)
{
    size_t at = 0;
    if (c->state == CONN_HANDSHAKE) {
        cfdb_connect_packet peer;
        size_t n;
        int rc = cfdb_connect_packet_decode(c->in, c->in_len, &peer, &n);
        if (rc) {
            conn_fail(c, rc);
            return;
        }
        if (n == 0)
            return;
        if (!cfdb_protocol_peer_exact(peer.protocol_version)) {
            conn_fail(c, CFDB_WIRE_INCOMPATIBLE_PROTOCOL);
            return;
        }
        at = n;
        c->state = CONN_OPEN;
        c->stats.peer_protocol = peer.protocol_version;
        arm_idle(c);
        if (c->cb.on_open)
            c->cb.on_open(c, &peer, c->arg);
    }
    while (c->state == CONN_OPEN && at < c->in_len) {
        if (must_pause(c)) {
            if (!c->paused) {
                c->paused = true;
                c->stats.pauses++;
                update_interest(c);
            }
            break;
        }
        if (frame_ahead(c, at) == 1)
            return; /* over the limit: failed */
        cfdb_frame f;
        size_t n;
        int rc = cfdb_frame_parse(c->in + at, c->in_len - at, c->checksum, &f, &n);
        if (rc) {
            conn_fail(c, rc);
            return;
        }
        if (n == 0)
            break;
        at += n;
        c->stats.frames_in++;
        if (f.msg_len + CFDB_FRAME_TOKEN_SIZE > CFDB_FRAME_PACKET_WARNING && warning_due(c))
            conn_log(c, "LargePacketReceived: %u bytes (warning above %u)", f.msg_len + CFDB_FRAME_TOKEN_SIZE,
                     CFDB_FRAME_PACKET_WARNING);
        if (cfdb_uid_eq(f.token, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET)))
            answer_ping(c, f.msg, f.msg_len);
        else if (cfdb_uid_eq(f.token, c->ping_token))
            ; /* our own ping's reply: its arrival already counted as traffic */
        else if (c->cb.on_frame)
            c->cb.on_frame(c, f.token, f.msg, f.msg_len, c->arg);
    }
    if (c->state == CONN_DEAD)
        return;
    if (at > 0) {
        memmove(c->in, c->in + at, c->in_len - at);
        c->in_len -= at;
        shrink_input(c);
    }
}

/* Decrypts what the TLS session holds into the input and processes it, until it is empty or
 * the connection pauses. */
static void tls_drain(cfdb_conn *c)
{
    while (!c->paused) {
        if (!grow_input(c))
            return;
        size_t got;
        if (cfdb_tls_read(c->tls, c->in + c->in_len, c->in_cap - c->in_len, &got)) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        if (got == 0)
            break;
        c->in_len += got;
        process_input(c);
        if (c->state == CONN_DEAD)
            return;
    }
    if (cfdb_tls_output_pending(c->tls))
        flush_tls(c); /* post-handshake messages (tickets, key updates, alerts) */
}

/* Ciphertext arrived: advance the handshake, then decrypt everything available. */
static void tls_input(cfdb_conn *c, const uint8_t *cipher, size_t n)
{
    if (cfdb_tls_feed(c->tls, cipher, n)) {
        conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
        return;
    }
    if (!cfdb_tls_established(c->tls)) {
        if (cfdb_tls_handshake(c->tls)) {
            tls_push(c); /* best effort: the alert tells the peer why */
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        flush_tls(c); /* handshake replies, then our ConnectPacket once established */
        if (!cfdb_tls_established(c->tls) || c->state == CONN_DEAD)
            return;
    }
    tls_drain(c);
}

static void on_readable(cfdb_conn *c)
{
    while (!c->paused) {
        if (!c->tls && !grow_input(c))
            return;
        size_t n;
        int rc = c->tls ? cfdb_tcp_read(c->fd, c->tls_in, READ_CHUNK, &n)
                        : cfdb_tcp_read(c->fd, c->in + c->in_len, c->in_cap - c->in_len, &n);
        if (rc) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        if (n == 0)
            break;
        c->stats.reads++;
        c->stats.bytes_in += n;
        c->last_rx_ns = cfdb_loop_now_ns(c->loop);
        c->quiet_pinged = false;
        if (c->tls) {
            tls_input(c, c->tls_in, n);
        } else {
            c->in_len += n;
            process_input(c);
        }
        if (c->state == CONN_DEAD)
            return;
        if (!c->tls && n < c->in_cap - c->in_len)
            break; /* short read: the socket is drained */
    }
}

/* Reading again after a pause: first the frames already buffered, then the socket. */
static void resume_task(void *arg)
{
    cfdb_conn *c = arg;
    c->resume_posted = false;
    if (c->state == CONN_DEAD || !c->paused || !may_resume(c))
        return;
    c->paused = false;
    update_interest(c);
    process_input(c);
    if (c->state != CONN_DEAD && !c->paused && c->tls)
        tls_drain(c);
}

static void on_io(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    cfdb_conn *c = arg;
    if (c->state == CONN_CONNECTING) {
        bool connected;
        if (cfdb_tcp_connect_result(fd, &connected)) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        if (!connected)
            return;
        c->state = CONN_HANDSHAKE;
        c->last_rx_ns = cfdb_loop_now_ns(loop);
        if (c->tls && cfdb_tls_handshake(c->tls)) { /* queues the ClientHello */
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        flush_now(c);
        if (c->state == CONN_DEAD)
            return;
    }
    if (c->paused && (events & CFDB_EV_ERROR)) {
        conn_fail(c, CFDB_WIRE_CONNECTION_FAILED); /* not reading: nothing else would notice */
        return;
    }
    if (events & (CFDB_EV_READ | CFDB_EV_ERROR))
        on_readable(c);
    if (c->state != CONN_DEAD && (events & CFDB_EV_WRITE))
        flush_now(c);
}

static void ping_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    cfdb_conn *c = arg;
    if (c->state == CONN_OPEN) {
        cfdb_ping_request req = { { c->ping_token } };
        c->stats.pings++;
        cfdb_conn_send(c, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET), &cfdb_msg_ping_request, &req, 0);
    }
    if (c->state != CONN_DEAD)
        cfdb_loop_timer_add_in(loop, t, c->opt.ping_interval_ns);
}

/* Arms the idle timer for the next thing due: the handshake deadline before the connection
 * is open; after it, the quiet ping and the idle timeout, both counted from the last byte
 * received (bytes move last_rx_ns without touching the timer: it recomputes when it fires). */
static void arm_idle(cfdb_conn *c)
{
    uint64_t next = UINT64_MAX;
    if (c->state != CONN_OPEN) {
        next = c->handshake_deadline_ns;
    } else {
        if (c->opt.idle_timeout_ns)
            next = c->last_rx_ns + c->opt.idle_timeout_ns;
        if (c->opt.quiet_ping_ns && !c->quiet_pinged && c->last_rx_ns + c->opt.quiet_ping_ns < next)
            next = c->last_rx_ns + c->opt.quiet_ping_ns;
    }
    if (next == UINT64_MAX)
        cfdb_loop_timer_cancel(c->loop, &c->idle_timer);
    else
        cfdb_loop_timer_add_at(c->loop, &c->idle_timer, next);
}

static void idle_check(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    cfdb_conn *c = arg;
    (void)t;
    uint64_t now = cfdb_loop_now_ns(loop);
    if (c->state != CONN_OPEN) {
        if (now >= c->handshake_deadline_ns) {
            c->stats.idle_timeouts = 1;
            /* FlowTransport: an incoming connection without its ConnectPacket in time is
             * timed_out; an outgoing one that does not connect is connection_failed */
            conn_fail(c, c->adopted ? CFDB_ERR_TIMED_OUT : CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
    } else {
        uint64_t silent = now - c->last_rx_ns;
        if (c->opt.idle_timeout_ns && silent >= c->opt.idle_timeout_ns) {
            c->stats.idle_timeouts = 1;
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        if (c->opt.quiet_ping_ns && !c->quiet_pinged && silent >= c->opt.quiet_ping_ns) {
            cfdb_ping_request req = { { c->ping_token } };
            c->quiet_pinged = true;
            c->stats.pings++;
            cfdb_conn_send(c, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET), &cfdb_msg_ping_request, &req, 0);
        }
    }
    arm_idle(c);
}

/* Frees a connection that never reached the loop; the caller keeps the fd. */
static void discard(cfdb_conn *c)
{
    c->cb.on_closed = NULL;
    finalize_task(c);
}

/* On failure returns NULL and leaves fd open for the caller. */
static cfdb_conn *conn_new(cfdb_loop *loop, int fd, enum conn_state st, const cfdb_conn_options *opt,
                           const cfdb_conn_callbacks *cb, void *arg)
{
    cfdb_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->loop = loop;
    c->fd = fd;
    c->state = st;
    c->cb = *cb;
    c->arg = arg;
    c->adopted = st == CONN_HANDSHAKE;
    if (opt)
        c->opt = *opt;
    c->checksum = c->opt.tls == NULL;
    if (c->opt.tls) {
        c->tls = cfdb_tls_session_new(c->opt.tls);
        c->tls_out = malloc(TLS_OUT_CAP + READ_CHUNK);
        c->tls_in = c->tls_out ? c->tls_out + TLS_OUT_CAP : NULL;
        if (!c->tls || !c->tls_out) {
            discard(c);
            return NULL;
        }
    }
    fb_writer_init(&c->scratch, cfdb_frame_header_size(c->checksum));
    /* a one-shot reply token: bit 0 of first clear */
    c->ping_token.first = ((uint64_t)(uintptr_t)c * 0x9E3779B97F4A7C15ull) & ~CFDB_TOKEN_STREAM_FLAG;
    c->ping_token.second = cfdb_monotonic_ns();
    cfdb_timer_init(&c->ping_timer, ping_fire, c);
    cfdb_timer_init(&c->idle_timer, idle_check, c);
    cfdb_task_init(&c->flush_node, flush_task, c);
    cfdb_task_init(&c->resume_node, resume_task, c);
    cfdb_task_init(&c->finalize_node, finalize_task, c);
    /* not the loop's cached clock: a loop that has not run for a while would start the
     * handshake deadline in the past */
    c->last_rx_ns = cfdb_monotonic_ns();

    cfdb_connect_packet p;
    memset(&p, 0, sizeof p);
    p.protocol_version = CFDB_PROTOCOL_CONNECT_VERSION;
    p.canonical_port = c->opt.canonical_port;
    p.canonical_ip4 = c->opt.canonical_ip4;
    p.connection_id = c->opt.connection_id;
    if (!reserve_out(c, CFDB_CONNECT_PACKET_SIZE)) {
        discard(c);
        return NULL;
    }
    c->out_len += cfdb_connect_packet_encode(&p, c->out);

    unsigned ev = CFDB_EV_READ | (st == CONN_CONNECTING ? CFDB_EV_WRITE : 0);
    c->want_write = st == CONN_CONNECTING;
    if (cfdb_loop_add_fd(loop, fd, ev, on_io, c) != 0) {
        discard(c);
        return NULL;
    }
    if (c->opt.ping_interval_ns)
        cfdb_loop_timer_add_in(loop, &c->ping_timer, c->opt.ping_interval_ns);
    c->handshake_deadline_ns =
        c->last_rx_ns + (c->opt.handshake_timeout_ns ? c->opt.handshake_timeout_ns : CONNECT_TIMEOUT_NS);
    arm_idle(c);
    if (st != CONN_CONNECTING)
        schedule_flush(c);
    return c;
}

cfdb_conn *cfdb_conn_connect(cfdb_loop *loop, const char *ip, uint16_t port, const cfdb_conn_options *opt,
                             const cfdb_conn_callbacks *cb, void *arg)
{
    int fd;
    if (cfdb_tcp_connect(ip, port, &fd))
        return NULL; /* errno says why */
    cfdb_conn *c = conn_new(loop, fd, CONN_CONNECTING, opt, cb, arg);
    if (!c) {
        close(fd);
        errno = ENOMEM;
    }
    return c;
}

cfdb_conn *cfdb_conn_adopt(cfdb_loop *loop, int fd, const cfdb_conn_options *opt, const cfdb_conn_callbacks *cb,
                           void *arg)
{
    cfdb_tcp_set_nodelay(fd);
    return conn_new(loop, fd, CONN_HANDSHAKE, opt, cb, arg);
}

void cfdb_conn_close(cfdb_conn *c)
{
    if (c->state == CONN_DEAD || c->close_after_flush)
        return;
    c->close_after_flush = true;
    bool drained = c->out_off == c->out_len &&
                   (!c->tls || (c->tls_out_off == c->tls_out_len && cfdb_tls_output_pending(c->tls) == 0));
    if (c->state == CONN_CONNECTING || drained)
        conn_fail(c, 0);
    else
        schedule_flush(c);
}

void cfdb_conn_abort(cfdb_conn *c, int error)
{
    conn_fail(c, error);
}

bool cfdb_conn_is_open(const cfdb_conn *c)
{
    return c->state == CONN_OPEN && !c->close_after_flush;
}

void *cfdb_conn_user(const cfdb_conn *c)
{
    return c->arg;
}

void cfdb_conn_set_user(cfdb_conn *c, void *arg)
{
    c->arg = arg;
}

void cfdb_conn_get_stats(const cfdb_conn *c, cfdb_conn_stats *out)
{
    *out = c->stats;
}
