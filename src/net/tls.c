/* TLS contexts and sessions over OpenSSL memory BIOs (see tls.h). Settings follow
 * libfdb_c 7.3: any TLS version and cipher OpenSSL allows by default, the certificate chain and
 * key from PEM, trust only in the configured CA (never the system store), no SNI and no
 * hostname check: peers are judged by the verify-peers rules alone. Clients require the
 * server's certificate; servers ask for the client's but accept a client without one. */
#include "tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "tls_verify.h"

struct cfdb_tls_ctx {
    SSL_CTX *ssl;
    cfdb_tls_rules *rules;
    char *password;
    bool server;
};

struct cfdb_tls_session {
    cfdb_tls_ctx *ctx;
    SSL *ssl;
    BIO *in, *out; /* memory BIOs: ciphertext from and to the socket */
    bool established;
    char error[200];
};

static void openssl_reason(char *buf, size_t cap, const char *what)
{
    unsigned long e = ERR_get_error();
    char r[160] = "";
    if (e)
        ERR_error_string_n(e, r, sizeof r);
    ERR_clear_error();
    snprintf(buf, cap, "%s%s%s", what, *r ? ": " : "", r);
}

static int password_cb(char *buf, int size, int rwflag, void *user)
{
    (void)rwflag;
    const char *pw = user;
    if (!pw || size <= 0)
        return 0;
    int n = (int)strlen(pw);
    if (n > size)
        n = size;
    memcpy(buf, pw, (size_t)n);
    return n;
}

static BIO *source_bio(const char *path, const char *bytes, size_t len)
{
    if (bytes && len)
        return BIO_new_mem_buf(bytes, (int)len);
    if (path && *path)
        return BIO_new_file(path, "r");
    return NULL;
}

static int load_chain(SSL_CTX *ssl, const cfdb_tls_config *cfg, char *err, size_t cap)
{
    BIO *b = source_bio(cfg->cert_path, cfg->cert_bytes, cfg->cert_len);
    if (!b) {
        openssl_reason(err, cap, "cannot open the TLS certificate");
        return CFDB_TLS_ERROR;
    }
    X509 *leaf = PEM_read_bio_X509_AUX(b, NULL, NULL, NULL);
    int rc = leaf && SSL_CTX_use_certificate(ssl, leaf) == 1 ? 0 : CFDB_TLS_ERROR;
    X509_free(leaf);
    /* the rest of the file is the chain up to (not necessarily including) the CA */
    X509 *extra;
    while (rc == 0 && (extra = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(ssl, extra) != 1) {
            X509_free(extra);
            rc = CFDB_TLS_ERROR;
        }
    }
    BIO_free(b);
    if (rc) {
        openssl_reason(err, cap, "bad TLS certificate");
        return CFDB_TLS_ERROR;
    }
    ERR_clear_error(); /* the end-of-file "no start line" of the chain loop */
    return 0;
}

static int load_key(SSL_CTX *ssl, const cfdb_tls_config *cfg, const char *password, char *err, size_t cap)
{
    BIO *b = source_bio(cfg->key_path, cfg->key_bytes, cfg->key_len);
    if (!b) {
        openssl_reason(err, cap, "cannot open the TLS key");
        return CFDB_TLS_ERROR;
    }
    EVP_PKEY *key = PEM_read_bio_PrivateKey(b, NULL, password_cb, (void *)password);
    BIO_free(b);
    int rc = key && SSL_CTX_use_PrivateKey(ssl, key) == 1 && SSL_CTX_check_private_key(ssl) == 1 ? 0 : CFDB_TLS_ERROR;
    EVP_PKEY_free(key);
    if (rc)
        openssl_reason(err, cap, "bad TLS key (or it does not match the certificate, or a wrong password)");
    return rc;
}

static int load_ca(SSL_CTX *ssl, const cfdb_tls_config *cfg, char *err, size_t cap)
{
    BIO *b = source_bio(cfg->ca_path, cfg->ca_bytes, cfg->ca_len);
    if (!b) {
        openssl_reason(err, cap, "cannot open the TLS CA file");
        return CFDB_TLS_ERROR;
    }
    X509_STORE *store = SSL_CTX_get_cert_store(ssl);
    int added = 0;
    X509 *x;
    while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
        if (X509_STORE_add_cert(store, x) == 1)
            added++;
        X509_free(x);
    }
    BIO_free(b);
    ERR_clear_error();
    if (!added) {
        snprintf(err, cap, "the TLS CA file holds no certificate");
        return CFDB_TLS_ERROR;
    }
    return 0;
}

static int verify_cb(int preverified, X509_STORE_CTX *store)
{
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    cfdb_tls_session *s = ssl ? SSL_get_app_data(ssl) : NULL;
    if (!s)
        return 0;
    const cfdb_tls_rules *rules = s->ctx->rules;
    if (cfdb_tls_rules_accept_invalid(rules))
        return 1;
    if (!preverified) {
        snprintf(s->error, sizeof s->error, "peer certificate not valid: %s",
                 X509_verify_cert_error_string(X509_STORE_CTX_get_error(store)));
        return 0;
    }
    if (X509_STORE_CTX_get_error_depth(store) != 0)
        return 1; /* the rules look at the whole chain once, at the leaf */
    const char *why = NULL;
    if (!cfdb_tls_rules_match(rules, X509_STORE_CTX_get0_chain(store), &why)) {
        snprintf(s->error, sizeof s->error, "%s", why);
        return 0;
    }
    return 1;
}

cfdb_tls_ctx *cfdb_tls_ctx_create(const cfdb_tls_config *cfg, bool server, char *err, size_t err_cap)
{
    char scratch[8];
    if (!err) {
        err = scratch;
        err_cap = sizeof scratch;
    }
    *err = 0;
    cfdb_tls_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->server = server;
    ctx->rules = cfdb_tls_rules_parse(cfg->verify_peers ? cfg->verify_peers : "Check.Valid=1", err, err_cap);
    if (!ctx->rules)
        goto fail;
    if (cfg->password && !(ctx->password = strdup(cfg->password)))
        goto fail;
    ctx->ssl = SSL_CTX_new(TLS_method());
    if (!ctx->ssl) {
        openssl_reason(err, err_cap, "cannot create a TLS context");
        goto fail;
    }
    SSL_CTX_set_options(ctx->ssl, SSL_OP_ALL);
    SSL_CTX_set_default_passwd_cb(ctx->ssl, password_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx->ssl, ctx->password);
    bool have_cert = (cfg->cert_path && *cfg->cert_path) || cfg->cert_len;
    bool have_key = (cfg->key_path && *cfg->key_path) || cfg->key_len;
    if (have_cert && load_chain(ctx->ssl, cfg, err, err_cap))
        goto fail;
    if (have_key && load_key(ctx->ssl, cfg, ctx->password, err, err_cap))
        goto fail;
    if (server && !(have_cert && have_key)) {
        snprintf(err, err_cap, "a TLS server needs a certificate and a key");
        goto fail;
    }
    if (((cfg->ca_path && *cfg->ca_path) || cfg->ca_len) && load_ca(ctx->ssl, cfg, err, err_cap))
        goto fail;
    SSL_CTX_set_verify(ctx->ssl, server ? SSL_VERIFY_PEER : SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       verify_cb);
    return ctx;
fail:
    cfdb_tls_ctx_free(ctx);
    return NULL;
}

void cfdb_tls_ctx_free(cfdb_tls_ctx *ctx)
{
    if (!ctx)
        return;
    SSL_CTX_free(ctx->ssl);
    cfdb_tls_rules_free(ctx->rules);
    free(ctx->password);
    free(ctx);
}

cfdb_tls_session *cfdb_tls_session_new(cfdb_tls_ctx *ctx)
{
    cfdb_tls_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->ssl = SSL_new(ctx->ssl);
    s->in = BIO_new(BIO_s_mem());
    s->out = BIO_new(BIO_s_mem());
    if (!s->ssl || !s->in || !s->out) {
        SSL_free(s->ssl);
        BIO_free(s->in);
        BIO_free(s->out);
        free(s);
        return NULL;
    }
    BIO_set_mem_eof_return(s->in, -1); /* an empty input means "wait", not end of stream */
    SSL_set_bio(s->ssl, s->in, s->out);
    SSL_set_app_data(s->ssl, s);
    if (ctx->server)
        SSL_set_accept_state(s->ssl);
    else
        SSL_set_connect_state(s->ssl);
    return s;
}

void cfdb_tls_session_free(cfdb_tls_session *s)
{
    if (!s)
        return;
    SSL_free(s->ssl); /* frees both BIOs */
    free(s);
}

int cfdb_tls_feed(cfdb_tls_session *s, const void *cipher, size_t len)
{
    while (len > 0) {
        int chunk = len > (1u << 30) ? 1 << 30 : (int)len;
        int n = BIO_write(s->in, cipher, chunk);
        if (n <= 0) {
            snprintf(s->error, sizeof s->error, "cannot buffer TLS input");
            return CFDB_TLS_ERROR;
        }
        cipher = (const char *)cipher + n;
        len -= (size_t)n;
    }
    return 0;
}

/* 0 for "needs more input", 2107 for a real failure. */
static int classify(cfdb_tls_session *s, int rc, const char *what)
{
    int e = SSL_get_error(s->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    if (!*s->error)
        openssl_reason(s->error, sizeof s->error, what);
    ERR_clear_error();
    return CFDB_TLS_ERROR;
}

int cfdb_tls_handshake(cfdb_tls_session *s)
{
    if (s->established)
        return 0;
    int rc = SSL_do_handshake(s->ssl);
    if (rc == 1) {
        s->established = true;
        return 0;
    }
    return classify(s, rc, "TLS handshake failed");
}

bool cfdb_tls_established(const cfdb_tls_session *s)
{
    return s->established;
}

int cfdb_tls_read(cfdb_tls_session *s, void *plain, size_t cap, size_t *got)
{
    *got = 0;
    int rc = SSL_read_ex(s->ssl, plain, cap, got);
    if (rc == 1)
        return 0;
    *got = 0;
    if (SSL_get_error(s->ssl, rc) == SSL_ERROR_ZERO_RETURN)
        return CFDB_ERR_CONNECTION_FAILED;
    return classify(s, rc, "TLS read failed");
}

int cfdb_tls_write(cfdb_tls_session *s, const void *plain, size_t len)
{
    while (len > 0) {
        size_t done = 0;
        int rc = SSL_write_ex(s->ssl, plain, len, &done);
        if (rc != 1) {
            /* memory BIOs never push back, so any failure is final */
            classify(s, rc, "TLS write failed");
            return CFDB_TLS_ERROR;
        }
        plain = (const char *)plain + done;
        len -= done;
    }
    return 0;
}

size_t cfdb_tls_output(cfdb_tls_session *s, void *buf, size_t cap)
{
    if (cap > (1u << 30))
        cap = 1u << 30;
    int n = BIO_read(s->out, buf, (int)cap);
    return n > 0 ? (size_t)n : 0;
}

size_t cfdb_tls_output_pending(const cfdb_tls_session *s)
{
    return BIO_ctrl_pending(s->out);
}

const char *cfdb_tls_last_error(const cfdb_tls_session *s)
{
    return s->error;
}
