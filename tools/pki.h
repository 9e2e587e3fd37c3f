/* A throwaway PKI for TLS trials and tests (see pki.c). */
#ifndef CFDB_TOOLS_PKI_H
#define CFDB_TOOLS_PKI_H

#include <stdbool.h>

/* Writes into dir (which must exist):
 *   ca.pem                        the CA (CN=cfdb test CA, O=cfdb)
 *   server.pem / server.key       CN=cfdb-server, O=cfdb, OU=server; SAN DNS:localhost,
 *                                 IP:127.0.0.1, URI:spiffe://cfdb/server, email:server@cfdb.test
 *   client.pem / client.key       CN=cfdb-client, O=cfdb, OU=client; SAN DNS:client.cfdb.test,
 *                                 email:client@cfdb.test
 *   client-encrypted.key          the client key, encrypted with the password "secret"
 *   other-ca.pem, other.pem/.key  a client certificate from another CA
 *   expired.pem / expired.key     signed by the CA, expired an hour ago
 *   chained.pem / chained.key     leaf (CN=cfdb-chained) + intermediate, signed via the intermediate
 *   dup.pem / dup.key             two OU entries (ambiguous for OU rules)
 * Returns 0, or -1 on failure. */
int cfdb_pki_create(const char *dir);

#endif
