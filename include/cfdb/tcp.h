/* Non-blocking TCP helpers for the event loop. Numeric IPv4/IPv6 addresses
 * only: name resolution would block the loop thread.
 *
 * Every function returns a value >= 0 on success or -errno on failure, and
 * every socket it creates is non-blocking and close-on-exec. */
#ifndef CFDB_TCP_H
#define CFDB_TCP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Starts connecting to ip ("10.0.0.1", "::1" or "[::1]") : port, with
 * TCP_NODELAY set. Returns the fd, usually with the connect still in
 * progress: wait for CFDB_EV_WRITE, then call cfdb_tcp_connect_result. */
int cfdb_tcp_connect(const char *ip, uint16_t port);
/* 0 once connected, -EINPROGRESS if still connecting, else the failure
 * (-ECONNREFUSED, -ETIMEDOUT, ...). */
int cfdb_tcp_connect_result(int fd);

/* Listens on ip:port with SO_REUSEADDR (ip NULL or "" means any IPv4
 * address). Port 0 picks a free port; *bound_port (if not NULL) reports the
 * port actually bound. Returns the listening fd. */
int cfdb_tcp_listen(const char *ip, uint16_t port, int backlog, uint16_t *bound_port);
/* Returns a connected fd (non-blocking, TCP_NODELAY) or -EAGAIN when no
 * connection is waiting. */
int cfdb_tcp_accept(int listen_fd);

int cfdb_tcp_set_nodelay(int fd);

/* > 0 bytes moved, 0 = peer closed (read only), or -errno (-EAGAIN: try again
 * when ready). Interrupted calls are retried; writes never raise SIGPIPE. */
ssize_t cfdb_tcp_read(int fd, void *buf, size_t len);
ssize_t cfdb_tcp_write(int fd, const void *buf, size_t len);
ssize_t cfdb_tcp_writev(int fd, const struct iovec *iov, int iov_count);

#endif
