/* FoundationDB connections over loopback: handshake, request/reply, pings answered by the
 * connection itself, coalesced writes, failures mapped to FoundationDB error codes, and the
 * bounds: back-pressure on a peer that does not read, buffers that shrink after a large
 * frame, the shared pool's count, frames over PACKET_LIMIT refused on send. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "connection.h"
#include "endpoint.h"
#include "frame.h"
#include "messages.h"
#include "tcp.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>

typedef struct side {
    cfdb_loop *loop;
    cfdb_conn *conn;
    int opened, closed, close_error, frames;
    cfdb_uid last_token;
    char last_key[64];
    bool reply_to_requests;
    bool count_only;
} side;

static void on_open(cfdb_conn *c, const cfdb_connect_packet *peer, void *arg)
{
    ((side *)arg)->opened++;
}

static void on_frame(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len, void *arg)
{
    side *s = arg;
    s->frames++;
    s->last_token = token;
    if (s->count_only)
        return;
    cfdb_arena a;
    cfdb_arena_init(&a);
    if (s->reply_to_requests) {
        cfdb_get_value_request req;
        memset(&req, 0, sizeof req);
        assert_int_equal(fb_decode(&cfdb_msg_get_value_request, msg, len, &req, NULL, &a), 0);
        snprintf(s->last_key, sizeof s->last_key, "%.*s", (int)req.key.len, req.key.ptr);
        cfdb_get_value_reply rep;
        memset(&rep, 0, sizeof rep);
        rep.penalty = 1.0;
        rep.value.present = 1;
        rep.value.value = req.key; /* echo the key as the value */
        assert_int_equal(cfdb_conn_send(c, req.reply.token, &cfdb_msg_get_value_reply, &rep, 0), 0);
    } else {
        cfdb_get_value_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err;
        assert_int_equal(fb_decode(&cfdb_msg_get_value_reply, msg, len, &rep, &err, &a), 0);
        snprintf(s->last_key, sizeof s->last_key, "%.*s", (int)rep.value.value.len, rep.value.value.ptr);
    }
    cfdb_arena_free(&a);
}

static void on_closed(cfdb_conn *c, int error, void *arg)
{
    side *s = arg;
    s->closed++;
    s->close_error = error;
    s->conn = NULL;
}

static const cfdb_conn_callbacks callbacks = { on_open, on_frame, on_closed };

typedef struct server {
    int listen_fd;
    uint16_t port;
    side side;
    cfdb_conn_pool *pool;
    size_t out_budget;
    int sndbuf; /* > 0: the accepted socket's SO_SNDBUF */
} server;

static void on_accept(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    server *srv = arg;
    int cfd;
    if (cfdb_tcp_accept(fd, &cfd) || cfd < 0)
        return;
    cfdb_conn_options opt = { .canonical_port = srv->port, .canonical_ip4 = 0x7f000001, .connection_id = 1 };
    opt.pool = srv->pool;
    opt.out_budget = srv->out_budget;
    if (srv->sndbuf > 0)
        setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &srv->sndbuf, sizeof srv->sndbuf);
    srv->side.conn = cfdb_conn_adopt(loop, cfd, &opt, &callbacks, &srv->side);
}

static void run_until(cfdb_loop *loop, int *flag, int want)
{
    for (int i = 0; i < 2000 && *flag < want; i++)
        cfdb_loop_run_once(loop, 5000000);
    assert_true(*flag >= want);
}

static void start_server(cfdb_loop *loop, server *srv)
{
    memset(srv, 0, sizeof *srv);
    srv->side.loop = loop;
    srv->side.reply_to_requests = true;
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", 0, 16, &srv->port, &srv->listen_fd), 0);
    assert_true(srv->listen_fd >= 0);
    assert_int_equal(cfdb_loop_add_fd(loop, srv->listen_fd, CFDB_EV_READ, on_accept, srv), 0);
}

static void stop_server(cfdb_loop *loop, server *srv)
{
    cfdb_loop_remove_fd(loop, srv->listen_fd);
    close(srv->listen_fd);
}

static void test_request_reply(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    server srv;
    start_server(loop, &srv);
    side cli = { .loop = loop };
    cfdb_conn_options copt = { .ping_interval_ns = 20000000, .idle_timeout_ns = 500000000 };
    cli.conn = cfdb_conn_connect(loop, "127.0.0.1", srv.port, &copt, &callbacks, &cli);
    assert_non_null(cli.conn);
    run_until(loop, &cli.opened, 1);
    run_until(loop, &srv.side.opened, 1);

    /* 100 requests queued in one go leave coalesced, and all are answered */
    cfdb_uid storage = { 0x1234567800000001ull, 0x42 };
    for (int i = 0; i < 100; i++) {
        cfdb_get_value_request req;
        memset(&req, 0, sizeof req);
        char key[32];
        snprintf(key, sizeof key, "key%03d", i);
        req.key = cfdb_bytes_str(key);
        req.version = 1;
        req.reply.token = (cfdb_uid){ 0xabc0, (uint64_t)i };
        req.tenantInfo.tenantId = -1;
        req.ssLatestCommitVersions = cfdb_version_vector_empty();
        assert_int_equal(cfdb_conn_send(cli.conn, storage, &cfdb_msg_get_value_request, &req, 0), 0);
    }
    run_until(loop, &cli.frames, 100);
    assert_string_equal(cli.last_key, "key099");
    assert_true(cfdb_uid_eq(srv.side.last_token, storage));
    assert_int_equal(cli.last_token.second, 99);
    cfdb_conn_stats st;
    cfdb_conn_get_stats(cli.conn, &st);
    assert_true(st.writes < 20); /* coalesced, not one write per message */

    /* pings: the client pings every 20 ms; the server answers; nobody times out */
    int dummy = 0;
    for (int i = 0; i < 40; i++)
        cfdb_loop_run_once(loop, 10000000);
    (void)dummy;
    assert_int_equal(cli.closed, 0);
    assert_int_equal(srv.side.closed, 0);

    /* a clean close reaches both sides */
    cfdb_conn_close(cli.conn);
    run_until(loop, &cli.closed, 1);
    assert_int_equal(cli.close_error, 0);
    run_until(loop, &srv.side.closed, 1);
    assert_int_equal(srv.side.close_error, 1026);
    stop_server(loop, &srv);
    cfdb_loop_destroy(loop);
}

/* A blocking socket connected to 127.0.0.1:port. */
static int raw_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = htonl(0x7f000001u);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void test_bad_peers(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    server srv;
    start_server(loop, &srv);

    /* a peer speaking another protocol version */
    int fd = raw_connect(srv.port);
    cfdb_connect_packet p = { .protocol_version = 0x1FDB00B072000000ull };
    uint8_t buf[CFDB_CONNECT_PACKET_SIZE];
    cfdb_connect_packet_encode(&p, buf);
    assert_int_equal(write(fd, buf, sizeof buf), sizeof buf);
    run_until(loop, &srv.side.closed, 1);
    assert_int_equal(srv.side.close_error, 2100);
    close(fd);

    /* a corrupted frame */
    fd = raw_connect(srv.port);
    p.protocol_version = 0x1FDB00B073000000ull;
    cfdb_connect_packet_encode(&p, buf);
    assert_int_equal(write(fd, buf, sizeof buf), sizeof buf);
    uint8_t frame[12 + 16 + 8] = { 24, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
    assert_int_equal(write(fd, frame, sizeof frame), sizeof frame);
    run_until(loop, &srv.side.closed, 2);
    assert_int_equal(srv.side.close_error, 1520);
    close(fd);

    /* nothing listening */
    stop_server(loop, &srv);
    side cli = { .loop = loop };
    cli.conn = cfdb_conn_connect(loop, "127.0.0.1", srv.port, NULL, &callbacks, &cli);
    assert_non_null(cli.conn);
    run_until(loop, &cli.closed, 1);
    assert_int_equal(cli.close_error, 1026);
    cfdb_loop_destroy(loop);
}

/* A blocking raw peer: connected, ConnectPacket sent, small receive buffer. */
static int raw_peer(cfdb_loop *loop, server *srv)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(srv->port) };
    a.sin_addr.s_addr = htonl(0x7f000001u);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    cfdb_connect_packet p = { .protocol_version = 0x1FDB00B073000000ull };
    uint8_t buf[CFDB_CONNECT_PACKET_SIZE];
    cfdb_connect_packet_encode(&p, buf);
    assert_int_equal(write(fd, buf, sizeof buf), sizeof buf);
    run_until(loop, &srv->side.opened, 1);
    return fd;
}

/* A peer that sends 20,000 pings and reads nothing: the connection answers each itself, so
 * without back-pressure its output would hold all 20,000 answers. With out_budget it stops
 * reading at the budget; once the peer reads, everything is answered. */
static void test_back_pressure(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    server srv;
    start_server(loop, &srv);
    cfdb_conn_pool pool = { 0 };
    srv.pool = &pool;
    srv.out_budget = 32768;
    srv.sndbuf = 4096;
    int fd = raw_peer(loop, &srv);

    enum { PINGS = 20000 };
    cfdb_uid reply = { 0x77, 0x88 };
    cfdb_ping_request req = { { reply } };
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &cfdb_msg_ping_request, &req, 0), 0);
    size_t ml = fb_writer_message_len(&w), head = cfdb_frame_header_size(true), fl = head + ml;
    uint8_t *all = malloc(fl * PINGS);
    assert_non_null(all);
    for (int i = 0; i < PINGS; i++) {
        memcpy(all + i * fl + head, fb_writer_message(&w), ml);
        cfdb_frame_seal(all + i * fl, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET), (uint32_t)ml, true);
    }
    fb_writer_free(&w);
    /* the server stops reading: the sends stall before all the pings are out */
    size_t sent = 0;
    for (int spins = 0; spins < 3000 && sent < fl * PINGS; spins++) {
        ssize_t n = send(fd, all + sent, fl * PINGS - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            sent += (size_t)n;
        cfdb_loop_run_once(loop, 1000000);
    }
    cfdb_conn_stats st;
    cfdb_conn_get_stats(srv.side.conn, &st);
    assert_true(st.pauses >= 1);
    assert_true(pool.peak < 256 * 1024); /* budget + one read's answers, not 20,000 answers */
    /* now the peer reads: every ping gets its answer, the rest of the sends go through */
    size_t replies = 0, have = 0;
    bool skipped = false;
    static uint8_t in[1 << 16];
    for (int spins = 0; spins < 200000 && replies < PINGS; spins++) {
        if (sent < fl * PINGS) {
            ssize_t n = send(fd, all + sent, fl * PINGS - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
        }
        cfdb_loop_run_once(loop, 0);
        ssize_t r = recv(fd, in + have, sizeof in - have, MSG_DONTWAIT);
        if (r <= 0) {
            struct pollfd pf = { fd, POLLIN, 0 };
            poll(&pf, 1, 1);
            continue;
        }
        have += (size_t)r;
        size_t at = 0;
        if (!skipped) {
            if (have < CFDB_CONNECT_PACKET_SIZE)
                continue;
            at = CFDB_CONNECT_PACKET_SIZE;
            skipped = true;
        }
        for (;;) {
            cfdb_frame f;
            size_t c;
            assert_int_equal(cfdb_frame_parse(in + at, have - at, true, &f, &c), 0);
            if (c == 0)
                break;
            at += c;
            if (cfdb_uid_eq(f.token, reply))
                replies++;
        }
        memmove(in, in + at, have - at);
        have -= at;
    }
    assert_int_equal(replies, PINGS);
    assert_int_equal(srv.side.closed, 0);
    free(all);
    close(fd);
    run_until(loop, &srv.side.closed, 1);
    for (int i = 0; i < 10; i++)
        cfdb_loop_run_once(loop, 1000000);
    assert_int_equal(pool.used, 0); /* every buffer was given back to the pool's count */
    stop_server(loop, &srv);
    cfdb_loop_destroy(loop);
}

/* A 3 MB frame takes a 3 MB buffer, which goes once the frame is delivered; a frame over
 * PACKET_LIMIT is refused on send with 1500 and the connection stays. */
static void test_large_frames(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    server srv;
    start_server(loop, &srv);
    cfdb_conn_pool pool = { 0 };
    srv.pool = &pool;
    srv.side.count_only = true;
    side cli = { .loop = loop };
    cli.conn = cfdb_conn_connect(loop, "127.0.0.1", srv.port, NULL, &callbacks, &cli);
    run_until(loop, &srv.side.opened, 1);
    run_until(loop, &cli.opened, 1);
    size_t big = 3u << 20;
    uint8_t *msg = calloc(1, big);
    assert_non_null(msg);
    cfdb_uid tok = { 0x5, 0x6 };
    assert_int_equal(cfdb_conn_send_raw(cli.conn, tok, msg, (uint32_t)big), 0);
    run_until(loop, &srv.side.frames, 1);
    assert_true(pool.peak >= big);
    assert_true(pool.used <= 128 * 1024);
    free(msg);

    /* one byte over the limit (the length word counts the token too) */
    uint32_t over = CFDB_FRAME_PACKET_LIMIT - CFDB_FRAME_TOKEN_SIZE + 1;
    uint8_t *huge = malloc(over); /* never touched: refused before it is read */
    assert_non_null(huge);
    assert_int_equal(cfdb_conn_send_raw(cli.conn, tok, huge, over), 1500);
    free(huge);
    assert_true(cfdb_conn_is_open(cli.conn));
    cfdb_conn_close(cli.conn);
    run_until(loop, &cli.closed, 1);
    assert_int_equal(cli.close_error, 0);
    run_until(loop, &srv.side.closed, 1);
    stop_server(loop, &srv);
    cfdb_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_reply),
        cmocka_unit_test(test_bad_peers),
        cmocka_unit_test(test_back_pressure),
        cmocka_unit_test(test_large_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
