/* Where the client's TLS identity and trust come from (see tls_settings.h). */
#include "tls_settings.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error_codes.h"

/* fdb_c_options.g.h's network option codes */
enum {
    OPT_TLS_PLUGIN = 41,
    OPT_TLS_CERT_BYTES = 42,
    OPT_TLS_CERT_PATH = 43,
    OPT_TLS_KEY_BYTES = 45,
    OPT_TLS_KEY_PATH = 46,
    OPT_TLS_VERIFY_PEERS = 47,
    OPT_TLS_CA_BYTES = 52,
    OPT_TLS_CA_PATH = 53,
    OPT_TLS_PASSWORD = 54,
};

#define DEFAULT_CONFIG_DIR "/etc/foundationdb"

static int buf_set(cfdb_buf *b, const uint8_t *v, size_t len)
{
    char *p = malloc(len + 1);
    if (!p)
        return CFDB_ERR_PLATFORM_ERROR;
    if (len)
        memcpy(p, v, len);
    p[len] = 0;
    free(b->p);
    b->p = p;
    b->len = len;
    b->set = true;
    return 0;
}

static void buf_clear(cfdb_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

int cfdb_tls_settings_set(cfdb_tls_settings *t, int option, const uint8_t *value, int len)
{
    cfdb_buf *target, *other = NULL;
    switch (option) {
    case OPT_TLS_PLUGIN: /* deprecated: checked for a value, then ignored */
        return value ? 0 : CFDB_ERR_INVALID_OPTION_VALUE;
    case OPT_TLS_CERT_BYTES: target = &t->cert_bytes, other = &t->cert_path; break;
    case OPT_TLS_CERT_PATH: target = &t->cert_path, other = &t->cert_bytes; break;
    case OPT_TLS_KEY_BYTES: target = &t->key_bytes, other = &t->key_path; break;
    case OPT_TLS_KEY_PATH: target = &t->key_path, other = &t->key_bytes; break;
    case OPT_TLS_CA_BYTES: target = &t->ca_bytes, other = &t->ca_path; break;
    case OPT_TLS_CA_PATH: target = &t->ca_path, other = &t->ca_bytes; break;
    case OPT_TLS_PASSWORD: target = &t->password; break;
    case OPT_TLS_VERIFY_PEERS: target = &t->verify_peers; break;
    default:
        return 1;
    }
    if (!value)
        return CFDB_ERR_INVALID_OPTION_VALUE;
    int rc = buf_set(target, value, len > 0 ? (size_t)len : 0);
    if (rc == 0 && other)
        buf_clear(other);
    return rc;
}

static const struct {
    const char *name;
    int option;
} env_options[] = {
    { "TLS_PLUGIN", OPT_TLS_PLUGIN },       { "TLS_CERT_BYTES", OPT_TLS_CERT_BYTES },
    { "TLS_CERT_PATH", OPT_TLS_CERT_PATH }, { "TLS_KEY_BYTES", OPT_TLS_KEY_BYTES },
    { "TLS_KEY_PATH", OPT_TLS_KEY_PATH },   { "TLS_VERIFY_PEERS", OPT_TLS_VERIFY_PEERS },
    { "TLS_CA_BYTES", OPT_TLS_CA_BYTES },   { "TLS_CA_PATH", OPT_TLS_CA_PATH },
    { "TLS_PASSWORD", OPT_TLS_PASSWORD },
};

int cfdb_tls_settings_load_env(cfdb_tls_settings *t)
{
    for (size_t i = 0; i < sizeof env_options / sizeof *env_options; i++) {
        char var[64] = "FDB_NETWORK_OPTION_";
        strcat(var, env_options[i].name);
        const char *v = getenv(var);
        if (!v)
            continue;
        /* several values separated by ':', '\' escapes ':' and '\'; each is applied in turn */
        size_t n = strlen(v);
        char *val = malloc(n + 1);
        if (!val)
            return CFDB_ERR_PLATFORM_ERROR;
        size_t o = 0;
        int rc = 0;
        for (size_t p = 0; p <= n && rc == 0; p++) {
            if (p < n && v[p] == '\\') {
                if (p + 1 == n || (v[p + 1] != '\\' && v[p + 1] != ':')) {
                    rc = CFDB_ERR_ENVIRONMENT_VARIABLE_NETWORK_OPTION_FAILED;
                    break;
                }
                val[o++] = v[++p];
            } else if (p == n || v[p] == ':') {
                if (cfdb_tls_settings_set(t, env_options[i].option, (const uint8_t *)val, (int)o) != 0)
                    rc = CFDB_ERR_ENVIRONMENT_VARIABLE_NETWORK_OPTION_FAILED;
                o = 0;
            } else {
                val[o++] = v[p];
            }
        }
        free(val);
        if (rc)
            return rc;
    }
    return 0;
}

/* option path > environment variable > default file if it exists; NULL: none found */
static const char *pick_path(const cfdb_buf *opt, const char *env, const char *default_name, char *scratch,
                             size_t cap)
{
    if (opt->set && opt->len)
        return opt->p;
    const char *e = getenv(env);
    if (e && *e)
        return e;
    if (!default_name)
        return NULL;
    if (strlen(DEFAULT_CONFIG_DIR) + 1 + strlen(default_name) + 1 > cap)
        return NULL;
    strcpy(scratch, DEFAULT_CONFIG_DIR "/");
    strcat(scratch, default_name);
    return access(scratch, F_OK) == 0 ? scratch : NULL;
}

void cfdb_tls_settings_resolve(cfdb_tls_settings *t, cfdb_tls_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->cert_path = pick_path(&t->cert_path, "FDB_TLS_CERTIFICATE_FILE", "cert.pem", t->resolved_cert,
                               sizeof t->resolved_cert);
    if (!cfg->cert_path && t->cert_bytes.set) {
        cfg->cert_bytes = t->cert_bytes.p;
        cfg->cert_len = t->cert_bytes.len;
    }
    cfg->key_path = pick_path(&t->key_path, "FDB_TLS_KEY_FILE", "key.pem", t->resolved_key, sizeof t->resolved_key);
    if (!cfg->key_path && t->key_bytes.set) {
        cfg->key_bytes = t->key_bytes.p;
        cfg->key_len = t->key_bytes.len;
    }
    cfg->ca_path = pick_path(&t->ca_path, "FDB_TLS_CA_FILE", NULL, NULL, 0);
    if (!cfg->ca_path && t->ca_bytes.set) {
        cfg->ca_bytes = t->ca_bytes.p;
        cfg->ca_len = t->ca_bytes.len;
    }
    cfg->password = t->password.set ? t->password.p : getenv("FDB_TLS_PASSWORD");
    cfg->verify_peers = t->verify_peers.set ? t->verify_peers.p : getenv("FDB_TLS_VERIFY_PEERS");
}

void cfdb_tls_settings_clear(cfdb_tls_settings *t)
{
    buf_clear(&t->cert_path);
    buf_clear(&t->cert_bytes);
    buf_clear(&t->key_path);
    buf_clear(&t->key_bytes);
    buf_clear(&t->ca_path);
    buf_clear(&t->ca_bytes);
    buf_clear(&t->password);
    buf_clear(&t->verify_peers);
}
