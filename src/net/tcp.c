/* Non-blocking TCP helpers: thin wrappers that return -errno. */
#define _GNU_SOURCE   /* accept4 */
#include "cfdb/tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Fills *out from a numeric IPv4 or IPv6 address (brackets allowed). */
static int make_address(const char *ip, uint16_t port, struct sockaddr_storage *out, socklen_t *len)
{
    memset(out, 0, sizeof *out);
    if (!ip || !*ip)
        ip = "0.0.0.0";
    struct sockaddr_in *v4 = (struct sockaddr_in *)out;
    if (inet_pton(AF_INET, ip, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        *len = sizeof *v4;
        return 0;
    }
    char bare[INET6_ADDRSTRLEN];
    size_t n = strlen(ip);
    if (n >= 2 && ip[0] == '[' && ip[n - 1] == ']') {
        if (n - 2 >= sizeof bare)
            return -EINVAL;
        memcpy(bare, ip + 1, n - 2);
        bare[n - 2] = '\0';
        ip = bare;
    }
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
    if (inet_pton(AF_INET6, ip, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        *len = sizeof *v6;
        return 0;
    }
    return -EINVAL;
}

int cfdb_tcp_set_nodelay(int fd)
{
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ? -errno : 0;
}

int cfdb_tcp_connect(const char *ip, uint16_t port)
{
    struct sockaddr_storage addr;
    socklen_t len;
    int rc = make_address(ip, port, &addr, &len);
    if (rc)
        return rc;
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return -errno;
    /* Small request/response messages: never wait for Nagle. */
    rc = cfdb_tcp_set_nodelay(fd);
    if (rc == 0 && connect(fd, (struct sockaddr *)&addr, len) < 0 && errno != EINPROGRESS)
        rc = -errno;
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

int cfdb_tcp_connect_result(int fd)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        return -errno;
    if (err)
        return -err;
    /* No error yet: connected only if the peer address is known. */
    struct sockaddr_storage peer;
    socklen_t peer_len = sizeof peer;
    if (getpeername(fd, (struct sockaddr *)&peer, &peer_len) < 0)
        return errno == ENOTCONN ? -EINPROGRESS : -errno;
    return 0;
}

int cfdb_tcp_listen(const char *ip, uint16_t port, int backlog, uint16_t *bound_port)
{
    struct sockaddr_storage addr;
    socklen_t len;
    int rc = make_address(ip, port, &addr, &len);
    if (rc)
        return rc;
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return -errno;
    int one = 1;
    /* Restarting a server must not wait out TIME_WAIT on its port. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&addr, len) < 0 ||
        listen(fd, backlog > 0 ? backlog : SOMAXCONN) < 0)
        goto fail;
    if (bound_port) {
        struct sockaddr_storage bound;
        socklen_t bound_len = sizeof bound;
        if (getsockname(fd, (struct sockaddr *)&bound, &bound_len) < 0)
            goto fail;
        *bound_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                        : ((struct sockaddr_in *)&bound)->sin_port);
    }
    return fd;
fail:
    rc = -errno;
    close(fd);
    return rc;
}

int cfdb_tcp_accept(int listen_fd)
{
    int fd;
    do
        fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    int rc = cfdb_tcp_set_nodelay(fd);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

ssize_t cfdb_tcp_read(int fd, void *buf, size_t len)
{
    ssize_t n;
    do
        n = recv(fd, buf, len, 0);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -(ssize_t)errno : n;
}

ssize_t cfdb_tcp_write(int fd, const void *buf, size_t len)
{
    ssize_t n;
    do
        n = send(fd, buf, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -(ssize_t)errno : n;
}

ssize_t cfdb_tcp_writev(int fd, const struct iovec *iov, int iov_count)
{
    struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iov_count };
    ssize_t n;
    do
        n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -(ssize_t)errno : n;
}
