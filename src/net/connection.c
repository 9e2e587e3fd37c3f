/* A FoundationDB connection on the event loop. The byte-level work (ConnectPacket, frame
 * parsing, checksums, message encoding) is the sans-I/O wire layer's; this file moves
 * bytes between it and a socket, answers pings, and coalesces writes: messages queued
 * during one loop iteration leave together in one write() from a task posted to the loop.
 * On a TLS connection the same plaintext passes through a TLS session (cfdb/tls.h) on its
 * way to and from the socket. */
#include "cfdb/connection.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfdb/endpoint.h"
#include "cfdb/frame.h"
#include "cfdb/messages.h"
#include "cfdb/protocol_version.h"
#include "cfdb/tcp.h"
#include "cfdb/wire_errors.h"

enum conn_state {
    CONN_CONNECTING, /* TCP connect in progress */
    CONN_HANDSHAKE,  /* waiting for the peer's ConnectPacket */
    CONN_OPEN,
    CONN_DEAD,       /* closed; freed by the finalize task */
};

#define READ_CHUNK 65536
#define TLS_OUT_CAP 65536
#define CONNECT_TIMEOUT_NS (5ull * 1000000000ull)

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
    bool flush_posted;
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
    cfdb_conn_stats stats;
};

static void conn_fail(cfdb_conn *c, int error);
static void flush_now(cfdb_conn *c);

static void finalize_task(void *arg)
{
    cfdb_conn *c = arg;
    if (c->cb.on_closed)
        c->cb.on_closed(c, c->close_error, c->arg);
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
    if (cfdb_loop_post(c->loop, finalize_task, c) != 0)
        finalize_task(c); /* the loop is being torn down */
}

static int reserve_out(cfdb_conn *c, size_t more)
{
    if (c->out_len + more <= c->out_cap)
        return 0;
    if (c->out_off > 0) { /* slide unsent bytes to the front first */
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
        if (c->out_len + more <= c->out_cap)
            return 0;
    }
    size_t cap = c->out_cap ? c->out_cap : 16384;
    while (cap < c->out_len + more)
        cap *= 2;
    uint8_t *nb = realloc(c->out, cap);
    if (!nb)
        return -1;
    c->out = nb;
    c->out_cap = cap;
    return 0;
}

static void set_write_interest(cfdb_conn *c, bool on)
{
    if (c->want_write == on || c->fd < 0)
        return;
    c->want_write = on;
    cfdb_loop_modify_fd(c->loop, c->fd, CFDB_EV_READ | (on ? CFDB_EV_WRITE : 0));
}

/* Writes queued ciphertext until the socket pushes back. 0, or -1 when the connection failed. */
static int tls_push(cfdb_conn *c)
{
    for (;;) {
        if (c->tls_out_off == c->tls_out_len) {
            c->tls_out_off = 0;
            c->tls_out_len = cfdb_tls_output(c->tls, c->tls_out, TLS_OUT_CAP);
            if (c->tls_out_len == 0)
                break;
        }
        ssize_t n = cfdb_tcp_write(c->fd, c->tls_out + c->tls_out_off, c->tls_out_len - c->tls_out_off);
        if (n == -EAGAIN) {
            set_write_interest(c, true);
            return 0;
        }
        if (n < 0) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return -1;
        }
        c->stats.writes++;
        c->stats.bytes_out += (uint64_t)n;
        c->tls_out_off += (size_t)n;
    }
    set_write_interest(c, false);
    return 0;
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
    }
    if (tls_push(c))
        return;
    if (c->close_after_flush && c->out_len == 0 && c->tls_out_off == c->tls_out_len)
        conn_fail(c, 0);
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
        ssize_t n = cfdb_tcp_write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (n == -EAGAIN) {
            set_write_interest(c, true);
            return;
        }
        if (n < 0) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        c->stats.writes++;
        c->stats.bytes_out += (uint64_t)n;
        c->out_off += (size_t)n;
    }
    c->out_off = c->out_len = 0;
    set_write_interest(c, false);
    if (c->close_after_flush)
        conn_fail(c, 0);
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
    if (cfdb_loop_post(c->loop, flush_task, c) == 0)
        c->flush_posted = true;
    else
        flush_now(c);
}

static int queue_frame(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len)
{
    size_t head = cfdb_frame_header_size(c->checksum);
    if (reserve_out(c, head + len))
        return -CFDB_WIRE_OUT_OF_MEMORY;
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
        return -CFDB_WIRE_CONNECTION_FAILED;
    int rc = fb_encode(&c->scratch, m, item, error);
    if (rc)
        return rc;
    return queue_frame(c, token, fb_writer_message(&c->scratch), (uint32_t)fb_writer_message_len(&c->scratch));
}

int cfdb_conn_send_raw(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len)
{
    if (c->state == CONN_DEAD || c->close_after_flush)
        return -CFDB_WIRE_CONNECTION_FAILED;
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

/* Processes everything complete in the input buffer. */
static void process_input(cfdb_conn *c)
{
    size_t at = 0;
    if (c->state == CONN_HANDSHAKE) {
        cfdb_connect_packet peer;
        long n = cfdb_connect_packet_decode(c->in, c->in_len, &peer);
        if (n == 0)
            return;
        if (n < 0) {
            conn_fail(c, -(int)n);
            return;
        }
        if (!cfdb_protocol_peer_exact(peer.protocol_version)) {
            conn_fail(c, CFDB_WIRE_INCOMPATIBLE_PROTOCOL);
            return;
        }
        at = (size_t)n;
        c->state = CONN_OPEN;
        c->stats.peer_protocol = peer.protocol_version;
        if (c->cb.on_open)
            c->cb.on_open(c, &peer, c->arg);
    }
    while (c->state == CONN_OPEN && at < c->in_len) {
        cfdb_frame f;
        long n = cfdb_frame_parse(c->in + at, c->in_len - at, c->checksum, &f);
        if (n == 0)
            break;
        if (n < 0) {
            conn_fail(c, -(int)n);
            return;
        }
        at += (size_t)n;
        c->stats.frames_in++;
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
    }
}

/* Room for at least a quarter chunk more input; false (connection failed) if impossible. */
static bool grow_input(cfdb_conn *c)
{
    if (c->in_cap - c->in_len >= READ_CHUNK / 4)
        return true;
    size_t cap = c->in_cap ? c->in_cap * 2 : READ_CHUNK;
    /* a frame may be as large as PACKET_LIMIT; grow as needed, never beyond */
    if (cap > CFDB_FRAME_PACKET_LIMIT + READ_CHUNK) {
        conn_fail(c, CFDB_WIRE_PLATFORM_ERROR);
        return false;
    }
    uint8_t *nb = realloc(c->in, cap);
    if (!nb) {
        conn_fail(c, CFDB_WIRE_OUT_OF_MEMORY);
        return false;
    }
    c->in = nb;
    c->in_cap = cap;
    return true;
}

/* Ciphertext arrived: advance the handshake, then decrypt everything available. */
static void tls_input(cfdb_conn *c, const uint8_t *cipher, size_t n)
{
    if (cfdb_tls_feed(c->tls, cipher, n)) {
        conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
        return;
    }
    if (!cfdb_tls_established(c->tls)) {
        int rc = cfdb_tls_handshake(c->tls);
        if (rc < 0) {
            tls_push(c); /* best effort: the alert tells the peer why */
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        flush_tls(c); /* handshake replies, then our ConnectPacket once established */
        if (rc == 0 || c->state == CONN_DEAD)
            return;
    }
    for (;;) {
        if (!grow_input(c))
            return;
        long got = cfdb_tls_read(c->tls, c->in + c->in_len, c->in_cap - c->in_len);
        if (got == 0)
            break;
        if (got < 0) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        c->in_len += (size_t)got;
        process_input(c);
        if (c->state == CONN_DEAD)
            return;
    }
    if (cfdb_tls_output_pending(c->tls))
        flush_tls(c); /* post-handshake messages (tickets, key updates, alerts) */
}

static void on_readable(cfdb_conn *c)
{
    for (;;) {
        if (!c->tls && !grow_input(c))
            return;
        ssize_t n = c->tls ? cfdb_tcp_read(c->fd, c->tls_in, READ_CHUNK)
                           : cfdb_tcp_read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
        if (n == -EAGAIN)
            break;
        if (n <= 0) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        c->stats.reads++;
        c->stats.bytes_in += (uint64_t)n;
        c->last_rx_ns = cfdb_loop_now_ns(c->loop);
        if (c->tls) {
            tls_input(c, c->tls_in, (size_t)n);
        } else {
            c->in_len += (size_t)n;
            process_input(c);
        }
        if (c->state == CONN_DEAD)
            return;
        if (!c->tls && (size_t)n < c->in_cap - c->in_len)
            break; /* short read: the socket is drained */
    }
}

static void on_io(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    cfdb_conn *c = arg;
    if (c->state == CONN_CONNECTING) {
        int rc = cfdb_tcp_connect_result(fd);
        if (rc == -EINPROGRESS)
            return;
        if (rc != 0) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        c->state = CONN_HANDSHAKE;
        c->last_rx_ns = cfdb_loop_now_ns(loop);
        if (c->tls && cfdb_tls_handshake(c->tls) < 0) { /* queues the ClientHello */
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        flush_now(c);
        if (c->state == CONN_DEAD)
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

static void idle_check(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    cfdb_conn *c = arg;
    uint64_t now = cfdb_loop_now_ns(loop);
    uint64_t limit = c->state == CONN_OPEN ? c->opt.idle_timeout_ns : CONNECT_TIMEOUT_NS;
    if (limit && now - c->last_rx_ns >= limit) {
        c->stats.idle_timeouts = 1;
        conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
        return;
    }
    cfdb_loop_timer_add_in(loop, t, (limit ? limit : CONNECT_TIMEOUT_NS) / 4);
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
    c->last_rx_ns = cfdb_loop_now_ns(loop);

    cfdb_connect_packet p;
    memset(&p, 0, sizeof p);
    p.protocol_version = CFDB_PROTOCOL_CONNECT_VERSION;
    p.canonical_port = c->opt.canonical_port;
    p.canonical_ip4 = c->opt.canonical_ip4;
    p.connection_id = c->opt.connection_id;
    if (reserve_out(c, CFDB_CONNECT_PACKET_SIZE)) {
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
    cfdb_loop_timer_add_in(loop, &c->idle_timer,
                           (c->opt.idle_timeout_ns ? c->opt.idle_timeout_ns : CONNECT_TIMEOUT_NS) / 4);
    if (st != CONN_CONNECTING)
        schedule_flush(c);
    return c;
}

cfdb_conn *cfdb_conn_connect(cfdb_loop *loop, const char *ip, uint16_t port, const cfdb_conn_options *opt,
                             const cfdb_conn_callbacks *cb, void *arg)
{
    int fd = cfdb_tcp_connect(ip, port);
    if (fd < 0) {
        errno = -fd;
        return NULL;
    }
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
