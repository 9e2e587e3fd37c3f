/* The client's TLS settings as libfdb_c 7.3 gathers them: the TLS network options (a path and
 * the matching bytes replace each other), the same options from FDB_NETWORK_OPTION_TLS_*
 * variables, and at resolve time FDB_TLS_* variables and the default files:
 *
 *   certificate  option path > FDB_TLS_CERTIFICATE_FILE > <etc>/cert.pem if present > option bytes
 *   key          option path > FDB_TLS_KEY_FILE > <etc>/key.pem if present > option bytes
 *   CA           option path > FDB_TLS_CA_FILE > option bytes
 *   password     option > FDB_TLS_PASSWORD;   verify peers  option > FDB_TLS_VERIFY_PEERS > Check.Valid=1
 *
 * where <etc> is /etc/foundationdb. Not thread-safe: the API layer serialises calls. */
#ifndef CFDB_CLIENT_TLS_SETTINGS_H
#define CFDB_CLIENT_TLS_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tls.h"

typedef struct cfdb_buf {
    char *p;
    size_t len;
    bool set;
} cfdb_buf;

typedef struct cfdb_tls_settings {
    cfdb_buf cert_path, cert_bytes, key_path, key_bytes, ca_path, ca_bytes, password, verify_peers;
    /* resolved copies handed out by cfdb_tls_settings_resolve */
    char resolved_cert[4096], resolved_key[4096];
} cfdb_tls_settings;

/* Applies a network option. Returns 0, 2006 invalid_option_value (a TLS option without a
 * value), or 1 when the option is not a TLS option (the caller handles it). */
int cfdb_tls_settings_set(cfdb_tls_settings *t, int option, const uint8_t *value, int len);

/* Applies FDB_NETWORK_OPTION_TLS_* from the environment (values split on ':' with '\' escapes,
 * as libfdb_c does). 0, or 2022 environment_variable_network_option_failed. */
int cfdb_tls_settings_load_env(cfdb_tls_settings *t);

/* Fills cfg with the effective sources (pointers into t, or into the environment). */
void cfdb_tls_settings_resolve(cfdb_tls_settings *t, cfdb_tls_config *cfg);

void cfdb_tls_settings_clear(cfdb_tls_settings *t);

#endif
