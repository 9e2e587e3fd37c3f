/* A FoundationDB connection on the event loop. The byte-level work (ConnectPacket, frame
 * parsing, checksums, message encoding) is the sans-I/O wire layer's; this file moves
 * bytes between it and a socket, answers pings, and coalesces writes: messages queued
 * during one loop iteration leave together in one write() from a task posted to the loop. */
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

static void flush_now(cfdb_conn *c)
{
    if (c->state == CONN_DEAD || c->state == CONN_CONNECTING)
        return;
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
    size_t head = cfdb_frame_header_size(true);
    if (reserve_out(c, head + len))
        return -CFDB_WIRE_OUT_OF_MEMORY;
    uint8_t *frame = c->out + c->out_len;
    memcpy(frame + head, msg, len);
    c->out_len += cfdb_frame_seal(frame, token, len, true);
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
        if (c->cb.on_open)
            c->cb.on_open(c, &peer, c->arg);
    }
    while (c->state == CONN_OPEN && at < c->in_len) {
        cfdb_frame f;
        long n = cfdb_frame_parse(c->in + at, c->in_len - at, true, &f);
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

static void on_readable(cfdb_conn *c)
{
    for (;;) {
        if (c->in_cap - c->in_len < READ_CHUNK / 4) {
            size_t cap = c->in_cap ? c->in_cap * 2 : READ_CHUNK;
            /* a frame may be as large as PACKET_LIMIT; grow as needed, never beyond */
            if (cap > CFDB_FRAME_PACKET_LIMIT + READ_CHUNK) {
                conn_fail(c, CFDB_WIRE_PLATFORM_ERROR);
                return;
            }
            uint8_t *nb = realloc(c->in, cap);
            if (!nb) {
                conn_fail(c, CFDB_WIRE_OUT_OF_MEMORY);
                return;
            }
            c->in = nb;
            c->in_cap = cap;
        }
        ssize_t n = cfdb_tcp_read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
        if (n == -EAGAIN)
            break;
        if (n <= 0) {
            conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
            return;
        }
        c->stats.reads++;
        c->stats.bytes_in += (uint64_t)n;
        c->in_len += (size_t)n;
        c->last_rx_ns = cfdb_loop_now_ns(c->loop);
        process_input(c);
        if (c->state == CONN_DEAD)
            return;
        if ((size_t)n < c->in_cap - (c->in_len))
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
        conn_fail(c, CFDB_WIRE_CONNECTION_FAILED);
        return;
    }
    cfdb_loop_timer_add_in(loop, t, (limit ? limit : CONNECT_TIMEOUT_NS) / 4);
}

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
    fb_writer_init(&c->scratch, cfdb_frame_header_size(true));
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
        finalize_task(c);
        return NULL;
    }
    c->out_len += cfdb_connect_packet_encode(&p, c->out);

    unsigned ev = CFDB_EV_READ | (st == CONN_CONNECTING ? CFDB_EV_WRITE : 0);
    c->want_write = st == CONN_CONNECTING;
    if (cfdb_loop_add_fd(loop, fd, ev, on_io, c) != 0) {
        c->cb.on_closed = NULL;
        close(fd);
        free(c->out);
        fb_writer_free(&c->scratch);
        free(c);
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
    return conn_new(loop, fd, CONN_CONNECTING, opt, cb, arg);
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
    if (c->state == CONN_CONNECTING || c->out_off == c->out_len)
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
