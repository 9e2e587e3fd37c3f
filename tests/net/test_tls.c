/* TLS: the verify-peers rule language (parsing and matching, as libfdb_c 7.3 decides), TLS
 * sessions paired in memory (handshake, data, refusals), bad configurations, and a
 * FoundationDB connection over TLS on loopback (unchecksummed frames inside TLS). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "connection.h"
#include "frame.h"
#include "messages.h"
#include "tcp.h"
#include "tls.h"
#include "tls_verify.h"
#include "pki.h"

static char g_dir[] = "/tmp/cfdb-tls-test-XXXXXX";

static const char *path(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static int setup_pki(void **state)
{
    if (!mkdtemp(g_dir) || cfdb_pki_create(g_dir))
        return -1;
    return 0;
}

static int teardown_pki(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- rules ---- */

static STACK_OF(X509) *load_chain(const char *leaf_file, const char *extra_file)
{
    STACK_OF(X509) *chain = sk_X509_new_null();
    const char *files[2] = { leaf_file, extra_file };
    for (int i = 0; i < 2; i++) {
        if (!files[i])
            continue;
        FILE *f = fopen(path(files[i]), "r");
        assert_non_null(f);
        X509 *x;
        while ((x = PEM_read_X509(f, NULL, NULL, NULL)) != NULL)
            sk_X509_push(chain, x);
        fclose(f);
    }
    return chain;
}

static bool matches(const char *rules, STACK_OF(X509) *chain)
{
    char err[256];
    cfdb_tls_rules *r = cfdb_tls_rules_parse(rules, err, sizeof err);
    if (!r)
        fail_msg("rule \"%s\" did not parse: %s", rules, err);
    const char *why = NULL;
    bool ok = cfdb_tls_rules_match(r, chain, &why);
    if (!ok)
        assert_non_null(why);
    cfdb_tls_rules_free(r);
    return ok;
}

static void test_rule_syntax(void **state)
{
    static const char *const good[] = {
        "",
        "Check.Valid=1",
        "Check.Valid=0",
        "Check.Unexpired=1,Check.Valid=1",
        "S.CN=x",
        "Subject.CN=x,I.O=y,Issuer.OU=z,R.CN=w,Root.C=US",
        "CN=x",
        "CN>=pre,O<=suf",
        "CN=a\\,b",
        "CN=a\\2cb",
        "CN=x|O=y|Check.Valid=0",
        "subjectAltName=DNS:localhost",
        "S.UID=1,S.DC=com,S.L=here,S.ST=there",
        "CN=a=b",
        "CN=x,", /* a trailing comma ends the rule, as in libfdb_c */
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        cfdb_tls_rules *r = cfdb_tls_rules_parse(good[i], NULL, 0);
        if (!r)
            fail_msg("should parse: \"%s\"", good[i]);
        cfdb_tls_rules_free(r);
    }
    static const char *const bad[] = {
        "Check.Valid=2", "Check.Valid=10", "Check.Valid>=1", "Check.Nope=1", "CN", "CN=", "CN= x", "CN=#x",
        "X.CN=x", "serialNumber=1", "CN=a+b", "CN=a;b", "CN=a\"b", "CN=a<b", "CN=x,,O=y",
        "CN=a\\zz", "CN=a\\", "=x",
        "CN=trailing ", /* libfdb_c trims the spaces, then finds no ',' where the value ends */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256] = "";
        cfdb_tls_rules *r = cfdb_tls_rules_parse(bad[i], err, sizeof err);
        if (r)
            fail_msg("should not parse: \"%s\"", bad[i]);
        assert_non_null(strstr(err, "verify-peers"));
    }
    cfdb_tls_rules *r = cfdb_tls_rules_parse("CN=x|Check.Valid=0", NULL, 0);
    assert_true(cfdb_tls_rules_accept_invalid(r));
    cfdb_tls_rules_free(r);
    r = cfdb_tls_rules_parse("Check.Valid=1", NULL, 0);
    assert_false(cfdb_tls_rules_accept_invalid(r));
    cfdb_tls_rules_free(r);
}

static void test_rule_matching(void **state)
{
    STACK_OF(X509) *server = load_chain("server.pem", "ca.pem");
    assert_true(matches("", server));
    assert_true(matches("Check.Valid=1", server));
    assert_true(matches("CN=cfdb-server", server));
    assert_true(matches("S.CN=cfdb-server,S.O=cfdb,S.OU=server", server));
    assert_false(matches("S.CN=cfdb-client", server));
    assert_false(matches("S.CN=cfdb-serve", server)); /* exact means exact */
    assert_true(matches("S.CN>=cfdb-", server));
    assert_true(matches("S.CN<=-server", server));
    assert_false(matches("S.CN<=-client", server));
    assert_true(matches("I.CN=cfdb test CA,I.O=cfdb", server));
    assert_true(matches("I.CN=cfdb\\20test CA", server)); /* hex escape */
    assert_false(matches("I.CN=other CA", server));
    assert_true(matches("R.CN=cfdb test CA", server));
    assert_false(matches("S.C=US", server)); /* absent field */
    /* alternatives: any one rule */
    assert_true(matches("S.CN=nope|S.OU=server", server));
    assert_false(matches("S.CN=nope|S.OU=nope", server));
    /* every term of a rule */
    assert_false(matches("S.CN=cfdb-server,S.OU=client", server));
    /* subject alternative names */
    assert_true(matches("S.subjectAltName=DNS:localhost", server));
    assert_true(matches("subjectAltName>=URI:spiffe://cfdb/", server));
    assert_true(matches("subjectAltName=EMAIL:server@cfdb.test", server));
    assert_false(matches("subjectAltName=DNS:elsewhere", server));
    assert_false(matches("subjectAltName=localhost", server)); /* no kind */
    /* libfdb_c's quirks, kept: a DNS rule also matches email entries, an IP rule URI entries,
     * and IP entries themselves never match */
    assert_true(matches("subjectAltName=DNS:server@cfdb.test", server));
    assert_true(matches("subjectAltName=IP:spiffe://cfdb/server", server));
    assert_false(matches("subjectAltName=IP:127.0.0.1", server));
    sk_X509_pop_free(server, X509_free);

    STACK_OF(X509) *dup = load_chain("dup.pem", "ca.pem");
    assert_false(matches("S.OU=a", dup)); /* two OU entries: ambiguous, refused */
    assert_true(matches("S.CN=cfdb-dup", dup));
    sk_X509_pop_free(dup, X509_free);

    /* root = the last certificate of the chain, issuer = the leaf's issuer */
    STACK_OF(X509) *chained = load_chain("chained.pem", "ca.pem");
    assert_int_equal(sk_X509_num(chained), 3);
    assert_true(matches("R.CN=cfdb test CA,I.CN=cfdb test intermediate", chained));
    assert_false(matches("R.CN=cfdb test intermediate", chained));
    sk_X509_pop_free(chained, X509_free);
}

/* ---- sessions in memory ---- */

static cfdb_tls_ctx *make_ctx(bool server, const char *cert, const char *key, const char *ca, const char *rules)
{
    cfdb_tls_config cfg = { 0 };
    cfg.cert_path = cert ? path(cert) : NULL;
    cfg.key_path = key ? path(key) : NULL;
    cfg.ca_path = ca ? path(ca) : NULL;
    cfg.verify_peers = rules;
    char err[256];
    cfdb_tls_ctx *ctx = cfdb_tls_ctx_create(&cfg, server, err, sizeof err);
    if (!ctx)
        fail_msg("context: %s", err);
    return ctx;
}

/* The handshake's state here: 1 done, 0 waiting for input, -2107 failed. */
static int hs(cfdb_tls_session *s)
{
    int rc = cfdb_tls_handshake(s);
    return rc ? -rc : cfdb_tls_established(s) ? 1 : 0;
}

/* Moves ciphertext both ways until neither side makes progress; returns the handshake
 * results in *cr / *sr (1 done, 0 stuck, < 0 failed). */
static void pump(cfdb_tls_session *c, cfdb_tls_session *s, int *cr, int *sr)
{
    uint8_t buf[65536];
    *cr = hs(c);
    *sr = 0;
    for (int round = 0; round < 20; round++) {
        size_t n, moved = 0;
        while ((n = cfdb_tls_output(c, buf, sizeof buf)) > 0) {
            assert_int_equal(cfdb_tls_feed(s, buf, n), 0);
            moved += n;
        }
        if (*sr == 0)
            *sr = hs(s);
        while ((n = cfdb_tls_output(s, buf, sizeof buf)) > 0) {
            assert_int_equal(cfdb_tls_feed(c, buf, n), 0);
            moved += n;
        }
        if (*cr == 0)
            *cr = hs(c);
        if (!moved)
            break;
    }
}

static void handshake_case(const char *client_cert, const char *client_key, const char *client_ca,
                           const char *client_rules, const char *server_cert, const char *server_key,
                           const char *server_ca, const char *server_rules, int want_client, int want_server)
{
    cfdb_tls_ctx *cctx = make_ctx(false, client_cert, client_key, client_ca, client_rules);
    cfdb_tls_ctx *sctx = make_ctx(true, server_cert, server_key, server_ca, server_rules);
    cfdb_tls_session *c = cfdb_tls_session_new(cctx), *s = cfdb_tls_session_new(sctx);
    int cr, sr;
    pump(c, s, &cr, &sr);
    if ((want_client == 1) != (cr == 1) || (want_server == 1) != (sr == 1))
        fail_msg("client %d (%s) server %d (%s), wanted %d %d", cr, cfdb_tls_last_error(c), sr,
                 cfdb_tls_last_error(s), want_client, want_server);
    if (want_client < 0)
        assert_int_equal(cr, -CFDB_TLS_ERROR);
    if (cr == 1 && sr == 1) {
        /* data both ways, including more than one TLS record */
        static uint8_t big[100000];
        for (size_t i = 0; i < sizeof big; i++)
            big[i] = (uint8_t)(i * 7);
        assert_int_equal(cfdb_tls_write(c, big, sizeof big), 0);
        uint8_t buf[70000];
        size_t n;
        while ((n = cfdb_tls_output(c, buf, sizeof buf)) > 0)
            assert_int_equal(cfdb_tls_feed(s, buf, n), 0);
        static uint8_t got[100000];
        size_t have = 0, r;
        do {
            assert_int_equal(cfdb_tls_read(s, got + have, sizeof got - have, &r), 0);
            have += r;
        } while (r > 0);
        assert_int_equal(have, sizeof big);
        assert_memory_equal(got, big, sizeof big);
        assert_int_equal(cfdb_tls_write(s, "pong", 4), 0);
        while ((n = cfdb_tls_output(s, buf, sizeof buf)) > 0)
            assert_int_equal(cfdb_tls_feed(c, buf, n), 0);
        char four[8] = "";
        /* the client may first consume session tickets */
        size_t k = 0;
        for (int i = 0; i < 4 && k == 0; i++)
            assert_int_equal(cfdb_tls_read(c, four, sizeof four, &k), 0);
        assert_int_equal(k, 4);
        assert_memory_equal(four, "pong", 4);
    }
    cfdb_tls_session_free(c);
    cfdb_tls_session_free(s);
    cfdb_tls_ctx_free(cctx);
    cfdb_tls_ctx_free(sctx);
}

static void test_handshakes(void **state)
{
    /* mutual TLS with the default rules */
    handshake_case("client.pem", "client.key", "ca.pem", NULL, "server.pem", "server.key", "ca.pem", NULL, 1, 1);
    /* rules on both sides that match */
    handshake_case("client.pem", "client.key", "ca.pem", "S.CN=cfdb-server", "server.pem", "server.key", "ca.pem",
                   "S.OU=client,I.CN=cfdb test CA", 1, 1);
    /* the client's rule refuses the server */
    handshake_case("client.pem", "client.key", "ca.pem", "S.CN=someone-else", "server.pem", "server.key", "ca.pem",
                   NULL, -1, 0);
    /* the server's rule refuses the client */
    handshake_case("client.pem", "client.key", "ca.pem", NULL, "server.pem", "server.key", "ca.pem", "S.OU=admin", 1,
                   -1);
    /* a client without a CA cannot trust the server */
    handshake_case("client.pem", "client.key", NULL, NULL, "server.pem", "server.key", "ca.pem", NULL, -1, 0);
    /* ... unless its rules say Check.Valid=0 */
    handshake_case("client.pem", "client.key", NULL, "Check.Valid=0", "server.pem", "server.key", "ca.pem", NULL, 1,
                   1);
    /* a client certificate from another CA is refused by the server */
    handshake_case("other.pem", "other.key", "ca.pem", NULL, "server.pem", "server.key", "ca.pem", NULL, 1, -1);
    /* an expired server certificate is refused by the client */
    handshake_case("client.pem", "client.key", "ca.pem", NULL, "expired.pem", "expired.key", "ca.pem", NULL, -1, 0);
    /* a server chain through an intermediate (sent by the server) verifies against the root */
    handshake_case("client.pem", "client.key", "ca.pem", "R.CN=cfdb test CA,S.CN=cfdb-chained", "chained.pem",
                   "chained.key", "ca.pem", NULL, 1, 1);
    /* a client with no certificate: the server (like fdbserver) lets it in */
    handshake_case(NULL, NULL, "ca.pem", NULL, "server.pem", "server.key", "ca.pem", NULL, 1, 1);
}

static char *slurp(const char *name, size_t *len)
{
    FILE *f = fopen(path(name), "r");
    assert_non_null(f);
    static char buf[4][8192];
    static int k;
    k = (k + 1) % 4;
    *len = fread(buf[k], 1, sizeof buf[k], f);
    fclose(f);
    return buf[k];
}

static void test_configurations(void **state)
{
    char err[256];
    cfdb_tls_config cfg = { 0 };

    /* PEM bytes instead of files, and an encrypted key with its password */
    cfg.cert_bytes = slurp("client.pem", &cfg.cert_len);
    cfg.key_bytes = slurp("client-encrypted.key", &cfg.key_len);
    cfg.ca_bytes = slurp("ca.pem", &cfg.ca_len);
    cfg.password = "secret";
    cfdb_tls_ctx *ctx = cfdb_tls_ctx_create(&cfg, false, err, sizeof err);
    if (!ctx)
        fail_msg("%s", err);
    cfdb_tls_ctx_free(ctx);

    /* wrong password */
    cfg.password = "guess";
    assert_null(cfdb_tls_ctx_create(&cfg, false, err, sizeof err));
    assert_non_null(strstr(err, "key"));
    cfg.password = NULL;
    assert_null(cfdb_tls_ctx_create(&cfg, false, err, sizeof err));

    /* a key that is not the certificate's */
    memset(&cfg, 0, sizeof cfg);
    cfg.cert_path = path("client.pem");
    cfg.key_path = path("server.key");
    assert_null(cfdb_tls_ctx_create(&cfg, false, err, sizeof err));
    assert_non_null(strstr(err, "key"));

    /* missing files */
    cfg.key_path = path("client.key");
    cfg.ca_path = path("no-such-ca.pem");
    assert_null(cfdb_tls_ctx_create(&cfg, false, err, sizeof err));
    assert_non_null(strstr(err, "CA"));
    cfg.ca_path = NULL;
    cfg.cert_path = path("no-such.pem");
    assert_null(cfdb_tls_ctx_create(&cfg, false, err, sizeof err));
    assert_non_null(strstr(err, "certificate"));

    /* a CA file that is not PEM */
    cfg.cert_path = path("client.pem");
    cfg.ca_bytes = "garbage";
    cfg.ca_len = 7;
    assert_null(cfdb_tls_ctx_create(&cfg, false, err, sizeof err));
    cfg.ca_bytes = NULL;
    cfg.ca_len = 0;

    /* bad rules */
    cfg.verify_peers = "Check.Valid=7";
    assert_null(cfdb_tls_ctx_create(&cfg, false, err, sizeof err));
    assert_non_null(strstr(err, "verify-peers"));
    cfg.verify_peers = NULL;

    /* a server needs its own certificate and key; a client may go without */
    memset(&cfg, 0, sizeof cfg);
    assert_null(cfdb_tls_ctx_create(&cfg, true, err, sizeof err));
    ctx = cfdb_tls_ctx_create(&cfg, false, err, sizeof err);
    assert_non_null(ctx);
    cfdb_tls_ctx_free(ctx);
}

static void test_garbage_input(void **state)
{
    /* a plaintext FoundationDB peer talking to a TLS endpoint: a clean failure */
    cfdb_tls_ctx *sctx = make_ctx(true, "server.pem", "server.key", "ca.pem", NULL);
    cfdb_tls_session *s = cfdb_tls_session_new(sctx);
    uint8_t junk[CFDB_CONNECT_PACKET_SIZE];
    cfdb_connect_packet p = { .protocol_version = 0x1FDB00B073000000ull };
    size_t n = cfdb_connect_packet_encode(&p, junk);
    assert_int_equal(cfdb_tls_feed(s, junk, n), 0);
    assert_int_equal(cfdb_tls_handshake(s), CFDB_TLS_ERROR);
    assert_true(strlen(cfdb_tls_last_error(s)) > 0);
    cfdb_tls_session_free(s);
    cfdb_tls_ctx_free(sctx);
}

/* ---- a FoundationDB connection over TLS ---- */

typedef struct side {
    cfdb_conn *conn;
    int opened, closed, close_error, frames;
    char last[64];
} side;

static void on_open(cfdb_conn *c, const cfdb_connect_packet *peer, void *arg)
{
    ((side *)arg)->opened++;
}

static void on_frame(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len, void *arg)
{
    side *s = arg;
    s->frames++;
    snprintf(s->last, sizeof s->last, "%.*s", (int)len, (const char *)msg);
    if (token.first == 1) /* the server side echoes to token 2 */
        cfdb_conn_send_raw(c, (cfdb_uid){ 2, 0 }, msg, len);
}

static void on_closed(cfdb_conn *c, int error, void *arg)
{
    side *s = arg;
    s->closed++;
    s->close_error = error;
    s->conn = NULL;
}

static const cfdb_conn_callbacks callbacks = { on_open, on_frame, on_closed };

typedef struct listener {
    int fd;
    uint16_t port;
    cfdb_tls_ctx *tls;
    side side;
    size_t out_budget;
    int sndbuf;
} listener;

static void on_accept(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    listener *l = arg;
    int cfd;
    if (cfdb_tcp_accept(fd, &cfd) || cfd < 0)
        return;
    cfdb_conn_options opt = { .canonical_port = l->port, .canonical_ip4 = 0x7f000001, .tls = l->tls };
    opt.out_budget = l->out_budget;
    if (l->sndbuf > 0)
        setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &l->sndbuf, sizeof l->sndbuf);
    l->side.conn = cfdb_conn_adopt(loop, cfd, &opt, &callbacks, &l->side);
    if (!l->side.conn)
        close(cfd);
}

static void run_until(cfdb_loop *loop, int *flag, int want)
{
    for (int i = 0; i < 2000 && *flag < want; i++)
        cfdb_loop_run_once(loop, 5000000);
    assert_true(*flag >= want);
}

static void test_connection_over_tls(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    listener l = { 0 };
    l.tls = make_ctx(true, "server.pem", "server.key", "ca.pem", NULL);
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", 0, 16, &l.port, &l.fd), 0);
    assert_int_equal(cfdb_loop_add_fd(loop, l.fd, CFDB_EV_READ, on_accept, &l), 0);

    cfdb_tls_ctx *cctx = make_ctx(false, "client.pem", "client.key", "ca.pem", "S.CN=cfdb-server");
    side cli = { 0 };
    cfdb_conn_options copt = { .ping_interval_ns = 20000000, .idle_timeout_ns = 500000000, .tls = cctx };
    cli.conn = cfdb_conn_connect(loop, "127.0.0.1", l.port, &copt, &callbacks, &cli);
    assert_non_null(cli.conn);
    run_until(loop, &cli.opened, 1);
    run_until(loop, &l.side.opened, 1);

    /* many messages, some large: queued in one go, echoed back intact */
    static char big[300000];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 50; i++) {
        char msg[32];
        int n = snprintf(msg, sizeof msg, "message %02d", i);
        assert_int_equal(cfdb_conn_send_raw(cli.conn, (cfdb_uid){ 1, 0 }, (const uint8_t *)msg, (uint32_t)n), 0);
        if (i % 10 == 0)
            assert_int_equal(cfdb_conn_send_raw(cli.conn, (cfdb_uid){ 1, 0 }, (const uint8_t *)big, sizeof big), 0);
    }
    assert_int_equal(cfdb_conn_send_raw(cli.conn, (cfdb_uid){ 1, 0 }, (const uint8_t *)"last", 4), 0);
    run_until(loop, &cli.frames, 56);
    assert_string_equal(cli.last, "last");
    assert_int_equal(l.side.frames, 56);

    /* pings flow inside TLS; nobody times out */
    for (int i = 0; i < 30; i++)
        cfdb_loop_run_once(loop, 10000000);
    assert_int_equal(cli.closed, 0);
    assert_int_equal(l.side.closed, 0);

    cfdb_conn_close(cli.conn);
    run_until(loop, &cli.closed, 1);
    assert_int_equal(cli.close_error, 0);
    run_until(loop, &l.side.closed, 1);

    /* a client whose rules refuse the server: the connection fails as connection_failed */
    cfdb_tls_ctx *picky = make_ctx(false, "client.pem", "client.key", "ca.pem", "S.CN=not-this-server");
    side refused = { 0 };
    copt.tls = picky;
    refused.conn = cfdb_conn_connect(loop, "127.0.0.1", l.port, &copt, &callbacks, &refused);
    run_until(loop, &refused.closed, 1);
    assert_int_equal(refused.opened, 0);
    assert_int_equal(refused.close_error, 1026);
    run_until(loop, &l.side.closed, 2);

    /* a plaintext client knocking at the TLS port */
    side plain = { 0 };
    plain.conn = cfdb_conn_connect(loop, "127.0.0.1", l.port, NULL, &callbacks, &plain);
    run_until(loop, &plain.closed, 1);
    assert_int_equal(plain.opened, 0);
    run_until(loop, &l.side.closed, 3);
    assert_int_equal(l.side.opened, 1);

    cfdb_loop_remove_fd(loop, l.fd);
    close(l.fd);
    cfdb_loop_destroy(loop);
    cfdb_tls_ctx_free(l.tls);
    cfdb_tls_ctx_free(cctx);
    cfdb_tls_ctx_free(picky);
}

/* ---- back-pressure over TLS, against a peer driven by hand ---- */

typedef struct raw_tls {
    cfdb_loop *loop;
    int fd;
    cfdb_tls_session *s;
    uint8_t *pend; /* ciphertext not yet taken by the socket */
    size_t pend_len, pend_cap;
} raw_tls;

/* Moves ciphertext to the socket without blocking; the loop runs meanwhile. */
static void rt_pump_out(raw_tls *r)
{
    size_t n;
    uint8_t buf[16384];
    while ((n = cfdb_tls_output(r->s, buf, sizeof buf)) > 0) {
        if (r->pend_len + n > r->pend_cap) {
            r->pend_cap = (r->pend_len + n) * 2;
            r->pend = realloc(r->pend, r->pend_cap);
            assert_non_null(r->pend);
        }
        memcpy(r->pend + r->pend_len, buf, n);
        r->pend_len += n;
    }
    if (r->pend_len) {
        ssize_t w = send(r->fd, r->pend, r->pend_len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            memmove(r->pend, r->pend + w, r->pend_len - (size_t)w);
            r->pend_len -= (size_t)w;
        }
    }
}

/* Reads what the socket has into the session; returns the ciphertext bytes read. */
static size_t rt_pump_in(raw_tls *r)
{
    uint8_t buf[16384];
    ssize_t n = recv(r->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0)
        return 0;
    assert_int_equal(cfdb_tls_feed(r->s, buf, (size_t)n), 0);
    return (size_t)n;
}

static void test_back_pressure_over_tls(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    listener l = { 0 };
    l.tls = make_ctx(true, "server.pem", "server.key", "ca.pem", NULL);
    l.out_budget = 32768;
    l.sndbuf = 4096;
    assert_int_equal(cfdb_tcp_listen("127.0.0.1", 0, 16, &l.port, &l.fd), 0);
    assert_int_equal(cfdb_loop_add_fd(loop, l.fd, CFDB_EV_READ, on_accept, &l), 0);

    cfdb_tls_ctx *cctx = make_ctx(false, "client.pem", "client.key", "ca.pem", NULL);
    raw_tls r = { .loop = loop, .s = cfdb_tls_session_new(cctx) };
    r.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int small = 4096;
    setsockopt(r.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(l.port) };
    a.sin_addr.s_addr = htonl(0x7f000001u);
    assert_int_equal(connect(r.fd, (struct sockaddr *)&a, sizeof a), 0);
    for (int i = 0; i < 2000 && !cfdb_tls_established(r.s); i++) {
        assert_int_equal(cfdb_tls_handshake(r.s), 0);
        rt_pump_out(&r);
        cfdb_loop_run_once(loop, 1000000);
        rt_pump_in(&r);
    }
    assert_true(cfdb_tls_established(r.s));

    /* our ConnectPacket, then 3,000 messages of 1,000 bytes that the server echoes back */
    enum { N = 3000, LEN = 1000 };
    cfdb_connect_packet p = { .protocol_version = 0x1FDB00B073000000ull };
    uint8_t cp[CFDB_CONNECT_PACKET_SIZE];
    assert_int_equal(cfdb_tls_write(r.s, cp, cfdb_connect_packet_encode(&p, cp)), 0);
    size_t head = cfdb_frame_header_size(false), fl = head + LEN;
    uint8_t *frame = calloc(1, fl);
    assert_non_null(frame);
    memset(frame + head, 'm', LEN);
    cfdb_frame_seal(frame, (cfdb_uid){ 1, 0 }, LEN, false);
    int queued = 0;
    for (int spins = 0; spins < 3000; spins++) {
        for (int k = 0; k < 10 && queued < N && r.pend_len < 65536; k++, queued++)
            assert_int_equal(cfdb_tls_write(r.s, frame, fl), 0);
        rt_pump_out(&r);
        cfdb_loop_run_once(loop, 1000000);
    }
    /* we read nothing: the server stopped reading long before all 3,000 */
    cfdb_conn_stats st;
    cfdb_conn_get_stats(l.side.conn, &st);
    assert_true(st.pauses >= 1);
    assert_true(l.side.frames < N / 2);

    /* now we read: every message comes back, and the rest of ours goes through */
    uint8_t *plain = malloc(1 << 20);
    assert_non_null(plain);
    size_t have = 0;
    int echoes = 0;
    bool connected = false;
    for (int spins = 0; spins < 200000 && echoes < N; spins++) {
        for (int k = 0; k < 10 && queued < N && r.pend_len < 65536; k++, queued++)
            assert_int_equal(cfdb_tls_write(r.s, frame, fl), 0);
        rt_pump_out(&r);
        cfdb_loop_run_once(loop, 0);
        if (!rt_pump_in(&r))
            continue;
        size_t got;
        do {
            assert_int_equal(cfdb_tls_read(r.s, plain + have, (1 << 20) - have, &got), 0);
            have += got;
        } while (got > 0 && have < (1 << 20));
        size_t at = 0;
        if (!connected) {
            if (have < CFDB_CONNECT_PACKET_SIZE)
                continue;
            at = CFDB_CONNECT_PACKET_SIZE;
            connected = true;
        }
        for (;;) {
            cfdb_frame f;
            size_t c;
            assert_int_equal(cfdb_frame_parse(plain + at, have - at, false, &f, &c), 0);
            if (c == 0)
                break;
            at += c;
            if (f.token.first == 2 && f.msg_len == LEN)
                echoes++;
        }
        memmove(plain, plain + at, have - at);
        have -= at;
    }
    assert_int_equal(echoes, N);
    assert_int_equal(l.side.closed, 0);
    free(plain);
    free(frame);
    free(r.pend);
    close(r.fd);
    run_until(loop, &l.side.closed, 1);
    cfdb_tls_session_free(r.s);
    cfdb_loop_remove_fd(loop, l.fd);
    close(l.fd);
    cfdb_loop_destroy(loop);
    cfdb_tls_ctx_free(l.tls);
    cfdb_tls_ctx_free(cctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_syntax),     cmocka_unit_test(test_rule_matching),
        cmocka_unit_test(test_handshakes),      cmocka_unit_test(test_configurations),
        cmocka_unit_test(test_garbage_input),   cmocka_unit_test(test_connection_over_tls),
        cmocka_unit_test(test_back_pressure_over_tls),
    };
    return cmocka_run_group_tests(tests, setup_pki, teardown_pki);
}
