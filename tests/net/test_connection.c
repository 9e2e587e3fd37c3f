/* FoundationDB connections over loopback: handshake, request/reply, pings answered by the
 * connection itself, coalesced writes, and failures mapped to FoundationDB error codes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cfdb/connection.h"
#include "cfdb/endpoint.h"
#include "cfdb/messages.h"
#include "cfdb/tcp.h"

typedef struct side {
    cfdb_loop *loop;
    cfdb_conn *conn;
    int opened, closed, close_error, frames;
    cfdb_uid last_token;
    char last_key[64];
    bool reply_to_requests;
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
} server;

static void on_accept(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    server *srv = arg;
    int cfd = cfdb_tcp_accept(fd);
    if (cfd < 0)
        return;
    cfdb_conn_options opt = { .canonical_port = srv->port, .canonical_ip4 = 0x7f000001, .connection_id = 1 };
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
    srv->listen_fd = cfdb_tcp_listen("127.0.0.1", 0, 16, &srv->port);
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

static void test_bad_peers(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    server srv;
    start_server(loop, &srv);

    /* a peer speaking another protocol version */
    int fd = cfdb_tcp_connect("127.0.0.1", srv.port);
    assert_true(fd >= 0);
    for (int i = 0; i < 100 && cfdb_tcp_connect_result(fd) == -EINPROGRESS; i++)
        usleep(1000);
    cfdb_connect_packet p = { .protocol_version = 0x1FDB00B072000000ull };
    uint8_t buf[CFDB_CONNECT_PACKET_SIZE];
    cfdb_connect_packet_encode(&p, buf);
    assert_int_equal(cfdb_tcp_write(fd, buf, sizeof buf), sizeof buf);
    run_until(loop, &srv.side.closed, 1);
    assert_int_equal(srv.side.close_error, 2100);
    close(fd);

    /* a corrupted frame */
    fd = cfdb_tcp_connect("127.0.0.1", srv.port);
    for (int i = 0; i < 100 && cfdb_tcp_connect_result(fd) == -EINPROGRESS; i++)
        usleep(1000);
    p.protocol_version = 0x1FDB00B073000000ull;
    cfdb_connect_packet_encode(&p, buf);
    assert_int_equal(cfdb_tcp_write(fd, buf, sizeof buf), sizeof buf);
    uint8_t frame[12 + 16 + 8] = { 24, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
    assert_int_equal(cfdb_tcp_write(fd, frame, sizeof frame), sizeof frame);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_reply),
        cmocka_unit_test(test_bad_peers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
