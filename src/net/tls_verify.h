/* FoundationDB's TLS peer verification rules (the TLS_VERIFY_PEERS option, FDB_TLS_VERIFY_PEERS).
 *
 *   rules := rule ('|' rule)*          any one rule matching is enough
 *   rule  := term (',' term)*          every term of the rule must match
 *   term  := Check.Valid=0|1           0 anywhere: accept every certificate, even invalid ones
 *          | Check.Unexpired=0|1       parsed; expiry is left to chain validation, as in 7.3
 *          | [scope.]FIELD op VALUE
 *   scope := S | Subject | I | Issuer | R | Root   (default Subject; Root = the chain's last cert)
 *   FIELD := C | CN | L | ST | O | OU | UID | DC | subjectAltName
 *   op    := '=' exact | '>=' prefix | '<=' suffix
 *   VALUE := RFC 4514 escaped text; subjectAltName values are DNS:x, EMAIL:x, URI:x or IP:x
 *
 * A name field matches only when the name has exactly one entry of that type. With Check.Valid=1
 * (the default) the chain must also verify against the configured CA. */
#ifndef CFDB_TLS_VERIFY_H
#define CFDB_TLS_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cfdb_tls_rules cfdb_tls_rules;

/* Parses a rule string. NULL on a syntax error (FoundationDB's tls_error), with the reason
 * in err. An empty string gives an empty rule set: every valid chain is accepted. */
cfdb_tls_rules *cfdb_tls_rules_parse(const char *text, char *err, size_t err_cap);
void cfdb_tls_rules_free(cfdb_tls_rules *r);

/* True when some rule says Check.Valid=0. */
bool cfdb_tls_rules_accept_invalid(const cfdb_tls_rules *r);

/* Checks a verified chain (an OpenSSL STACK_OF(X509), leaf first). On refusal returns false
 * and points *reason at a static description. */
bool cfdb_tls_rules_match(const cfdb_tls_rules *r, const void *chain, const char **reason);

#endif
