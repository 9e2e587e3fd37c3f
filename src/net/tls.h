/* TLS for FoundationDB connections (OpenSSL). A cfdb_tls_ctx holds one side's identity and
 * trust (certificate chain, key, CA bundle, the verify-peers rules); a cfdb_tls_session is one
 * connection's TLS state over memory buffers: the caller feeds it the bytes read from the
 * socket and writes out what it produces, so the socket stays with the connection (writes
 * without SIGPIPE, one event loop) and a session can be tested or fuzzed without one.
 *
 * FoundationDB runs TLS from the first byte of a connection to an address marked ":tls"; the
 * ConnectPacket and the frames then travel inside TLS, and frames carry no checksum. */
#ifndef CFDB_TLS_H
#define CFDB_TLS_H

#include <stdbool.h>
#include <stddef.h>

#define CFDB_TLS_ERROR 2107 /* tls_error */

/* Where each piece comes from: *_path names a PEM file, *_bytes holds PEM text (the bytes
 * win when both are set). NULL/empty means unset. */
typedef struct cfdb_tls_config {
    const char *cert_path, *key_path, *ca_path;
    const char *cert_bytes, *key_bytes, *ca_bytes;
    size_t cert_len, key_len, ca_len;
    const char *password;     /* for an encrypted private key */
    const char *verify_peers; /* FoundationDB's rules ("Check.Valid=1,S.CN=x|..."); NULL: Check.Valid=1 */
} cfdb_tls_config;

typedef struct cfdb_tls_ctx cfdb_tls_ctx;
typedef struct cfdb_tls_session cfdb_tls_session;

/* Builds a context for clients (server=false) or servers. NULL on a bad configuration,
 * with a one-line reason in err. */
cfdb_tls_ctx *cfdb_tls_ctx_create(const cfdb_tls_config *cfg, bool server, char *err, size_t err_cap);
void cfdb_tls_ctx_free(cfdb_tls_ctx *ctx);

cfdb_tls_session *cfdb_tls_session_new(cfdb_tls_ctx *ctx);
void cfdb_tls_session_free(cfdb_tls_session *s);

/* Every call returning int returns 0 or a FoundationDB error code: 2107 tls_error, or 1026
 * connection_failed when the peer closed the TLS session. */

/* Bytes read from the socket. 0, or 2107 if the session cannot take them. */
int cfdb_tls_feed(cfdb_tls_session *s, const void *cipher, size_t len);

/* Advances the handshake: 0 (done once cfdb_tls_established says so; otherwise it needs more
 * input: write out the output first), or 2107 (handshake failed: protocol error, or the
 * peer's certificate broke the rules). */
int cfdb_tls_handshake(cfdb_tls_session *s);
bool cfdb_tls_established(const cfdb_tls_session *s);

/* Decrypts up to cap bytes into plain: 0 with *got bytes copied (0: none until more input),
 * 1026 when the peer closed the TLS session, 2107 on an error. */
int cfdb_tls_read(cfdb_tls_session *s, void *plain, size_t cap, size_t *got);

/* Encrypts all of plain (after the handshake). 0 or 2107. */
int cfdb_tls_write(cfdb_tls_session *s, const void *plain, size_t len);

/* Ciphertext waiting for the socket: copies up to cap bytes out and returns how many. */
size_t cfdb_tls_output(cfdb_tls_session *s, void *buf, size_t cap);
size_t cfdb_tls_output_pending(const cfdb_tls_session *s);

/* Why the last call failed (OpenSSL's reason or the broken rule), for logs. */
const char *cfdb_tls_last_error(const cfdb_tls_session *s);

#endif
