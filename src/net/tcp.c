/* Non-blocking TCP helpers: thin wrappers over the socket calls that turn their
 * failures into FoundationDB codes and keep errno (see tcp.h). */
#define _GNU_SOURCE   /* accept4 */
#include "tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <unistd.h>

#include "error_codes.h"

/* Fills *out from a numeric IPv4 or IPv6 address (brackets allowed); false if it is not one. */
static bool make_address(const char *ip, uint16_t port, struct sockaddr_storage *out, socklen_t *len)
{
    memset(out, 0, sizeof *out);
    if (!ip || !*ip)
        ip = "0.0.0.0";
    struct sockaddr_in *v4 = (struct sockaddr_in *)out;
    if (inet_pton(AF_INET, ip, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        *len = sizeof *v4;
        return true;
    }
    char bare[INET6_ADDRSTRLEN];
    size_t n = strlen(ip);
    if (n >= 2 && ip[0] == '[' && ip[n - 1] == ']') {
        if (n - 2 >= sizeof bare)
            return false;
        memcpy(bare, ip + 1, n - 2);
        bare[n - 2] = '\0';
        ip = bare;
    }
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
    if (inet_pton(AF_INET6, ip, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        *len = sizeof *v6;
        return true;
    }
    return false;
}

int cfdb_tcp_set_nodelay(int fd)
{
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ? CFDB_ERR_PLATFORM_ERROR : 0;
}

int cfdb_tcp_connect(const char *ip, uint16_t port, int *fd_out)
{
    *fd_out = CFDB_TCP_NO_FD;
    struct sockaddr_storage addr;
    socklen_t len;
    if (!make_address(ip, port, &addr, &len)) {
        errno = EINVAL;
        return CFDB_ERR_PLATFORM_ERROR;
    }
    int rc = 0;
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return CFDB_ERR_PLATFORM_ERROR;
    /* Small request/response messages: never wait for Nagle. */
    if (cfdb_tcp_set_nodelay(fd)) {
        rc = CFDB_ERR_PLATFORM_ERROR;
    } else if (connect(fd, (struct sockaddr *)&addr, len) < 0 && errno != EINPROGRESS) {
        rc = CFDB_ERR_CONNECTION_FAILED;
    }
    if (rc) {
        int e = errno;
        close(fd);
        errno = e;
        return rc;
    }
    *fd_out = fd;
    return 0;
}

int cfdb_tcp_connect_result(int fd, bool *connected)
{
    *connected = false;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        return CFDB_ERR_CONNECTION_FAILED;
    if (err) {
        errno = err;
        return CFDB_ERR_CONNECTION_FAILED;
    }
    /* No error yet: connected only if the peer address is known. */
    struct sockaddr_storage peer;
    socklen_t peer_len = sizeof peer;
    if (getpeername(fd, (struct sockaddr *)&peer, &peer_len) < 0)
        return errno == ENOTCONN ? 0 : CFDB_ERR_CONNECTION_FAILED;
    *connected = true;
    return 0;
}

int cfdb_tcp_listen(const char *ip, uint16_t port, int backlog, uint16_t *bound_port, int *fd_out)
{
    *fd_out = CFDB_TCP_NO_FD;
    struct sockaddr_storage addr;
    socklen_t len;
    if (!make_address(ip, port, &addr, &len)) {
        errno = EINVAL;
        return CFDB_ERR_BIND_FAILED;
    }
    int rc;
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return CFDB_ERR_BIND_FAILED;
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
    *fd_out = fd;
    return 0;
fail:
    rc = errno == EADDRINUSE ? CFDB_ERR_ADDRESS_IN_USE : CFDB_ERR_BIND_FAILED;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int cfdb_tcp_accept(int listen_fd, int *fd_out)
{
    *fd_out = CFDB_TCP_NO_FD;
    int fd;
    do
        fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : CFDB_ERR_PLATFORM_ERROR;
    if (cfdb_tcp_set_nodelay(fd)) {
        int e = errno;
        close(fd);
        errno = e;
        return CFDB_ERR_PLATFORM_ERROR;
    }
    *fd_out = fd;
    return 0;
}

/* A transfer's result: n bytes, or "not ready", or a failure. */
static int transfer_result(ssize_t r, size_t *n, bool is_read)
{
    if (r > 0) {
        *n = (size_t)r;
        return 0;
    }
    *n = 0;
    if (r == 0 && is_read) {
        errno = 0; /* the peer closed */
        return CFDB_ERR_CONNECTION_FAILED;
    }
    if (r == 0 || errno == EAGAIN || errno == EWOULDBLOCK)
        return 0;
    return CFDB_ERR_CONNECTION_FAILED;
}

int cfdb_tcp_read(int fd, void *buf, size_t len, size_t *n)
{
    ssize_t r;
    do
        r = recv(fd, buf, len, 0);
    while (r < 0 && errno == EINTR);
    return transfer_result(r, n, true);
}

int cfdb_tcp_write(int fd, const void *buf, size_t len, size_t *n)
{
    ssize_t r;
    do
        r = send(fd, buf, len, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return transfer_result(r, n, false);
}

int cfdb_tcp_writev(int fd, const struct iovec *iov, int iov_count, size_t *n)
{
    struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iov_count };
    ssize_t r;
    do
        r = sendmsg(fd, &msg, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return transfer_result(r, n, false);
}
