/* TCP helpers driven by the event loop: a loopback echo server and client; failures come
 * back as FoundationDB codes with errno telling the cause. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "event_loop.h"
#include "tcp.h"

#define MS 1000000ull
#define MESSAGE_SIZE (1u << 20)   /* big enough to hit EAGAIN on both sides */

/* Echo server connection: whatever was read and not yet written back. */
typedef struct echo_conn {
    uint8_t buf[64 * 1024];
    size_t len;
    bool peer_closed;
} echo_conn;

typedef struct echo_test {
    int listen_fd;
    int server_fd;
    echo_conn server;

    int client_fd;
    bool connected;
    uint8_t *out;        /* what the client sends */
    uint8_t *in;         /* what comes back */
    size_t sent, received;
    bool done;
} echo_test;

static void server_io(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    echo_test *t = arg;
    echo_conn *c = &t->server;
    if (c->len) {   /* flush first: keeps memory bounded, order intact */
        size_t n;
        assert_int_equal(cfdb_tcp_write(fd, c->buf, c->len, &n), 0);
        if (n == 0)
            return; /* not ready */
        memmove(c->buf, c->buf + n, c->len - n);
        c->len -= n;
    }
    if (!c->len && !c->peer_closed) {
        size_t n;
        int rc = cfdb_tcp_read(fd, c->buf, sizeof c->buf, &n);
        if (rc) {
            assert_int_equal(rc, 1026); /* connection_failed: the peer closed */
            assert_int_equal(errno, 0);
            c->peer_closed = true;
        } else {
            c->len = n;
        }
    }
    /* Read only when the buffer is empty, write only while it is not. */
    cfdb_loop_modify_fd(loop, fd, c->len ? CFDB_EV_WRITE : (c->peer_closed ? 0 : CFDB_EV_READ));
}

static void on_accept(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    echo_test *t = arg;
    int conn, none;
    assert_int_equal(cfdb_tcp_accept(fd, &conn), 0);
    if (conn == CFDB_TCP_NO_FD)
        return;
    assert_true(conn >= 0);
    assert_int_equal(t->server_fd, -1);
    t->server_fd = conn;
    assert_int_equal(cfdb_tcp_accept(fd, &none), 0); /* nobody else waiting */
    assert_int_equal(none, CFDB_TCP_NO_FD);
    assert_int_equal(cfdb_loop_add_fd(loop, conn, CFDB_EV_READ, server_io, t), 0);
}

static void client_io(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    echo_test *t = arg;
    if (!t->connected) {
        assert_int_equal(cfdb_tcp_connect_result(fd, &t->connected), 0);
        assert_true(t->connected);
    }
    if ((events & CFDB_EV_WRITE) && t->sent < MESSAGE_SIZE) {
        /* Two pieces through writev to exercise it. */
        size_t left = MESSAGE_SIZE - t->sent, half = left / 2;
        struct iovec iov[2] = { { t->out + t->sent, half }, { t->out + t->sent + half, left - half } };
        size_t n;
        assert_int_equal(cfdb_tcp_writev(fd, iov, 2, &n), 0);
        t->sent += n;
    }
    if (events & CFDB_EV_READ) {
        size_t n;
        assert_int_equal(cfdb_tcp_read(fd, t->in + t->received, MESSAGE_SIZE - t->received, &n), 0);
        t->received += n;
    }
    if (t->received == MESSAGE_SIZE) {
        t->done = true;
        cfdb_loop_modify_fd(loop, fd, 0);
        return;
    }
    cfdb_loop_modify_fd(loop, fd, CFDB_EV_READ | (t->sent < MESSAGE_SIZE ? CFDB_EV_WRITE : 0));
}

static void run_echo(const char *ip)
{
    uint16_t port = 0;
    int listen_fd;
    int rc = cfdb_tcp_listen(ip, 0, 16, &port, &listen_fd);
    if (rc && (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)) {
        skip();   /* no IPv6 loopback on this machine */
        return;
    }
    assert_int_equal(rc, 0);
    assert_true(listen_fd >= 0);
    cfdb_loop *loop = cfdb_loop_create();
    assert_non_null(loop);
    echo_test *t = calloc(1, sizeof *t);
    t->server_fd = -1;
    t->listen_fd = listen_fd;
    assert_true(port != 0);
    assert_int_equal(cfdb_loop_add_fd(loop, t->listen_fd, CFDB_EV_READ, on_accept, t), 0);

    t->out = malloc(MESSAGE_SIZE);
    t->in = malloc(MESSAGE_SIZE);
    for (size_t i = 0; i < MESSAGE_SIZE; i++)
        t->out[i] = (uint8_t)(i * 131 + (i >> 9));
    assert_int_equal(cfdb_tcp_connect(ip, port, &t->client_fd), 0);
    assert_true(t->client_fd >= 0);
    /* WRITE signals the end of the connect. */
    assert_int_equal(cfdb_loop_add_fd(loop, t->client_fd, CFDB_EV_WRITE, client_io, t), 0);

    uint64_t give_up = cfdb_monotonic_ns() + 3000 * MS;
    while (!t->done) {
        cfdb_loop_run_once(loop, 100 * MS);
        assert_int_equal(cfdb_loop_wait_error(loop), 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    assert_memory_equal(t->in, t->out, MESSAGE_SIZE);

    /* Closing the client ends the server side cleanly. */
    cfdb_loop_remove_fd(loop, t->client_fd);
    close(t->client_fd);
    while (!t->server.peer_closed) {
        cfdb_loop_run_once(loop, 100 * MS);
        assert_int_equal(cfdb_loop_wait_error(loop), 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    cfdb_loop_remove_fd(loop, t->server_fd);
    close(t->server_fd);
    cfdb_loop_remove_fd(loop, t->listen_fd);
    close(t->listen_fd);
    free(t->out);
    free(t->in);
    free(t);
    cfdb_loop_destroy(loop);
}

static void test_echo_over_ipv4_loopback(void **state)
{
    run_echo("127.0.0.1");
}

static void test_echo_over_ipv6_loopback(void **state)
{
    run_echo("[::1]");
}

static void note_events(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    *(unsigned *)arg = events;
}

static void test_connect_refused_is_reported(void **state)
{
    /* Take a free port, then free it: nobody listens there. */
    uint16_t port = 0;
    int fd;
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", 0, 1, &port, &fd), 0);
    close(fd);

    cfdb_loop *loop = cfdb_loop_create();
    int client;
    assert_int_equal(cfdb_tcp_connect("127.0.0.1", port, &client), 0);
    assert_true(client >= 0);
    unsigned events = 0;
    assert_int_equal(cfdb_loop_add_fd(loop, client, CFDB_EV_WRITE, note_events, &events), 0);
    uint64_t give_up = cfdb_monotonic_ns() + 3000 * MS;
    while (!events) {
        cfdb_loop_run_once(loop, 100 * MS);
        assert_int_equal(cfdb_loop_wait_error(loop), 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    assert_true(events & CFDB_EV_ERROR);
    bool connected = true;
    assert_int_equal(cfdb_tcp_connect_result(client, &connected), 1026); /* connection_failed */
    assert_int_equal(errno, ECONNREFUSED);
    assert_false(connected);
    cfdb_loop_remove_fd(loop, client);
    close(client);
    cfdb_loop_destroy(loop);
}

static void test_bad_addresses_are_rejected(void **state)
{
    int fd = 7;
    assert_int_equal(cfdb_tcp_connect("localhost", 1, &fd), 1500); /* no DNS: platform_error */
    assert_int_equal(errno, EINVAL);
    assert_int_equal(fd, CFDB_TCP_NO_FD);
    assert_int_equal(cfdb_tcp_connect("1.2.3", 1, &fd), 1500);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(cfdb_tcp_listen("[::1", 0, 1, NULL, &fd), 1512); /* bind_failed */
    assert_int_equal(errno, EINVAL);
    char buf[1];
    size_t n = 9;
    assert_int_equal(cfdb_tcp_read(-1, buf, 1, &n), 1026);
    assert_int_equal(errno, EBADF);
    assert_int_equal(n, 0);
    assert_int_equal(cfdb_tcp_write(-1, buf, 1, &n), 1026);
    assert_int_equal(errno, EBADF);
    /* a port in use is address_in_use, as FoundationDB names it */
    uint16_t port;
    int a, b;
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", 0, 1, &port, &a), 0);
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", port, 1, NULL, &b), 2105);
    assert_int_equal(errno, EADDRINUSE);
    close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_over_ipv4_loopback),
        cmocka_unit_test(test_echo_over_ipv6_loopback),
        cmocka_unit_test(test_connect_refused_is_reported),
        cmocka_unit_test(test_bad_addresses_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
