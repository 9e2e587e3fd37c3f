/* Non-blocking TCP helpers for the event loop. Numeric IPv4/IPv6 addresses
 * only: name resolution would block the loop thread.
 *
 * Every function returns 0 or a FoundationDB error code (positive), and leaves
 * errno as the failing system call set it, for messages and for callers that
 * must tell causes apart (EMFILE at accept). Descriptors and byte counts come
 * back through out-parameters. Every socket made here is non-blocking,
 * close-on-exec and has TCP_NODELAY. */
#ifndef CFDB_TCP_H
#define CFDB_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define CFDB_TCP_NO_FD (-1) /* *fd when there is no descriptor */

/* Starts connecting to ip ("10.0.0.1", "::1" or "[::1]") : port. *fd gets the
 * socket, usually with the connect still in progress: wait for CFDB_EV_WRITE,
 * then call cfdb_tcp_connect_result. 1500 platform_error when no socket could
 * be made or the address is not numeric (errno EINVAL), 1026
 * connection_failed when the connect failed at once. */
int cfdb_tcp_connect(const char *ip, uint16_t port, int *fd);
/* 0 with *connected telling whether the connect finished, or 1026
 * connection_failed (errno: ECONNREFUSED, ETIMEDOUT, ...). */
int cfdb_tcp_connect_result(int fd, bool *connected);

/* Listens on ip:port with SO_REUSEADDR (ip NULL or "" means any IPv4
 * address). Port 0 picks a free port; *bound_port (if not NULL) reports the
 * port actually bound. 0 with *fd, 2105 address_in_use, or 1512 bind_failed. */
int cfdb_tcp_listen(const char *ip, uint16_t port, int backlog, uint16_t *bound_port, int *fd);
/* 0 with *fd a connected socket, or *fd = CFDB_TCP_NO_FD when no connection
 * is waiting; 1500 platform_error when accept failed (errno EMFILE, ENFILE,
 * ECONNABORTED, ...). */
int cfdb_tcp_accept(int listen_fd, int *fd);

/* 0 or 1500 platform_error. */
int cfdb_tcp_set_nodelay(int fd);

/* 0 with *n bytes moved (0: the socket is not ready, try again when it is),
 * or 1026 connection_failed: the peer closed (reads; errno 0) or the socket
 * failed. Interrupted calls are retried; writes never raise SIGPIPE. */
int cfdb_tcp_read(int fd, void *buf, size_t len, size_t *n);
int cfdb_tcp_write(int fd, const void *buf, size_t len, size_t *n);
int cfdb_tcp_writev(int fd, const struct iovec *iov, int iov_count, size_t *n);

#endif
