/* TCP helpers driven by the event loop: a loopback echo server and client. */
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

#include "cfdb/event_loop.h"
#include "cfdb/tcp.h"

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
        ssize_t n = cfdb_tcp_write(fd, c->buf, c->len);
        if (n == -EAGAIN)
            return;
        assert_true(n > 0);
        memmove(c->buf, c->buf + n, c->len - (size_t)n);
        c->len -= (size_t)n;
    }
    if (!c->len && !c->peer_closed) {
        ssize_t n = cfdb_tcp_read(fd, c->buf, sizeof c->buf);
        if (n == 0)
            c->peer_closed = true;
        else if (n != -EAGAIN) {
            assert_true(n > 0);
            c->len = (size_t)n;
        }
    }
    /* Read only when the buffer is empty, write only while it is not. */
    cfdb_loop_modify_fd(loop, fd, c->len ? CFDB_EV_WRITE : (c->peer_closed ? 0 : CFDB_EV_READ));
}

static void on_accept(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    echo_test *t = arg;
    int conn = cfdb_tcp_accept(fd);
    if (conn == -EAGAIN)
        return;
    assert_true(conn >= 0);
    assert_int_equal(t->server_fd, -1);
    t->server_fd = conn;
    assert_int_equal(cfdb_tcp_accept(fd), -EAGAIN);
    assert_int_equal(cfdb_loop_add_fd(loop, conn, CFDB_EV_READ, server_io, t), 0);
}

static void client_io(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    echo_test *t = arg;
    if (!t->connected) {
        assert_int_equal(cfdb_tcp_connect_result(fd), 0);
        t->connected = true;
    }
    if ((events & CFDB_EV_WRITE) && t->sent < MESSAGE_SIZE) {
        /* Two pieces through writev to exercise it. */
        size_t left = MESSAGE_SIZE - t->sent, half = left / 2;
        struct iovec iov[2] = { { t->out + t->sent, half }, { t->out + t->sent + half, left - half } };
        ssize_t n = cfdb_tcp_writev(fd, iov, 2);
        if (n != -EAGAIN) {
            assert_true(n > 0);
            t->sent += (size_t)n;
        }
    }
    if (events & CFDB_EV_READ) {
        ssize_t n = cfdb_tcp_read(fd, t->in + t->received, MESSAGE_SIZE - t->received);
        if (n != -EAGAIN) {
            assert_true(n > 0);
            t->received += (size_t)n;
        }
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
    int listen_fd = cfdb_tcp_listen(ip, 0, 16, &port);
    if (listen_fd == -EADDRNOTAVAIL || listen_fd == -EAFNOSUPPORT) {
        skip();   /* no IPv6 loopback on this machine */
        return;
    }
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
    t->client_fd = cfdb_tcp_connect(ip, port);
    assert_true(t->client_fd >= 0);
    /* WRITE signals the end of the connect. */
    assert_int_equal(cfdb_loop_add_fd(loop, t->client_fd, CFDB_EV_WRITE, client_io, t), 0);

    uint64_t give_up = cfdb_monotonic_ns() + 3000 * MS;
    while (!t->done) {
        assert_true(cfdb_loop_run_once(loop, 100 * MS) >= 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    assert_memory_equal(t->in, t->out, MESSAGE_SIZE);

    /* Closing the client ends the server side cleanly. */
    cfdb_loop_remove_fd(loop, t->client_fd);
    close(t->client_fd);
    while (!t->server.peer_closed) {
        assert_true(cfdb_loop_run_once(loop, 100 * MS) >= 0);
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
    int fd = cfdb_tcp_listen("127.0.0.1", 0, 1, &port);
    assert_true(fd >= 0);
    close(fd);

    cfdb_loop *loop = cfdb_loop_create();
    int client = cfdb_tcp_connect("127.0.0.1", port);
    assert_true(client >= 0);
    unsigned events = 0;
    assert_int_equal(cfdb_loop_add_fd(loop, client, CFDB_EV_WRITE, note_events, &events), 0);
    uint64_t give_up = cfdb_monotonic_ns() + 3000 * MS;
    while (!events) {
        assert_true(cfdb_loop_run_once(loop, 100 * MS) >= 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    assert_true(events & CFDB_EV_ERROR);
    assert_int_equal(cfdb_tcp_connect_result(client), -ECONNREFUSED);
    cfdb_loop_remove_fd(loop, client);
    close(client);
    cfdb_loop_destroy(loop);
}

static void test_bad_addresses_are_rejected(void **state)
{
    assert_int_equal(cfdb_tcp_connect("localhost", 1), -EINVAL);   /* no DNS */
    assert_int_equal(cfdb_tcp_connect("1.2.3", 1), -EINVAL);
    assert_int_equal(cfdb_tcp_listen("[::1", 0, 1, NULL), -EINVAL);
    char buf[1];
    assert_int_equal(cfdb_tcp_read(-1, buf, 1), -EBADF);
    assert_int_equal(cfdb_tcp_write(-1, buf, 1), -EBADF);
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
