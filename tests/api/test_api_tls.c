/* TLS through the public API: cfdb-server serving TLS only (its cluster file says :tls), and
 * clients configured the ways libfdb_c 7.3 reads its configuration — network options with
 * paths or PEM bytes, FDB_TLS_* and FDB_NETWORK_OPTION_TLS_* environment variables, an
 * encrypted key with its password, verify-peers rules. Each client runs in a child process,
 * since the network (and so the TLS configuration) is set up once per process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_helpers.h"
#include "pki.h"

static char g_pki[] = "/tmp/cfdb-api-tls-XXXXXX";
static api_server g_server;

static const char *pki(const char *name)
{
    static char buf[8][300];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_pki, name);
    return buf[k];
}

static int group_setup(void **state)
{
    if (!mkdtemp(g_pki) || cfdb_pki_create(g_pki))
        return -1;
    const char *args[] = { "--tls-cert", pki("server.pem"), "--tls-key", pki("server.key"), "--tls-ca",
                           pki("ca.pem"), "--tls-verify-peers", "S.O=cfdb", NULL };
    return api_server_start(&g_server, args);
}

static int group_teardown(void **state)
{
    api_server_stop(&g_server);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_pki);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- what a child does ---- */

typedef struct option {
    FDBNetworkOption code;
    const char *value; /* a string, or a file whose contents are the value when from_file */
    bool from_file;
} option;

static pthread_t g_net;

static void *net_main(void *arg)
{
    (void)arg;
    fdb_run_network();
    return NULL;
}

static char *slurp(const char *file, int *len)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return NULL;
    static char buf[4][16384];
    static int k;
    k = (k + 1) % 4;
    *len = (int)fread(buf[k], 1, sizeof buf[k], f);
    fclose(f);
    return buf[k];
}

#define CHILD_CHECK(cond, ...)             \
    do {                                   \
        if (!(cond)) {                     \
            fprintf(stderr, __VA_ARGS__);  \
            fprintf(stderr, "\n");         \
            return 1;                      \
        }                                  \
    } while (0)

/* Sets the options, connects through cluster_file, writes and reads back a key. Returns the
 * child's exit status: 0 when the outcome is what `want` says (0: success; 2107: database
 * creation refused; 1031: the transaction times out). */
static int child_run(const option *opts, const char *cluster_file, fdb_error_t want)
{
    CHILD_CHECK(fdb_select_api_version(FDB_API_VERSION) == 0, "select_api_version");
    for (const option *o = opts; o && o->code; o++) {
        int len = (int)strlen(o->value);
        const char *v = o->from_file ? slurp(o->value, &len) : o->value;
        CHILD_CHECK(v, "cannot read %s", o->value);
        fdb_error_t e = fdb_network_set_option(o->code, (const uint8_t *)v, len);
        CHILD_CHECK(e == 0, "set_option %d: %d", o->code, e);
    }
    CHILD_CHECK(fdb_setup_network() == 0, "setup_network");
    CHILD_CHECK(pthread_create(&g_net, NULL, net_main, NULL) == 0, "thread");
    FDBDatabase *db = NULL;
    fdb_error_t e = fdb_create_database(cluster_file, &db);
    if (want == 2107) {
        CHILD_CHECK(e == 2107, "create_database gave %d, wanted tls_error", e);
        fdb_stop_network();
        pthread_join(g_net, NULL);
        return 0;
    }
    CHILD_CHECK(e == 0, "create_database: %d", e);
    FDBTransaction *tr;
    CHILD_CHECK(fdb_database_create_transaction(db, &tr) == 0, "create_transaction");
    int64_t timeout_ms = 3000;
    fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&timeout_ms, 8);
    char key[64];
    snprintf(key, sizeof key, "tls/%d", (int)getpid());
    fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)"secret", 6);
    e = api_commit(tr);
    if (want == 1031) {
        CHILD_CHECK(e == 1031, "commit gave %d, wanted transaction_timed_out", e);
    } else {
        CHILD_CHECK(e == 0, "commit: %d", e);
        fdb_transaction_reset(tr);
        int present = 0, vlen = 0;
        char val[16];
        e = api_get(tr, key, (int)strlen(key), 0, &present, val, sizeof val, &vlen);
        CHILD_CHECK(e == 0 && present && vlen == 6 && memcmp(val, "secret", 6) == 0, "read back: %d", e);
    }
    fdb_transaction_destroy(tr);
    fdb_database_destroy(db);
    fdb_stop_network();
    pthread_join(g_net, NULL);
    return 0;
}

/* Runs child_run in a child process with extra environment variables ("NAME=value"). */
static void in_child(const option *opts, const char *const *env, const char *cluster_file, fdb_error_t want)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (const char *const *e = env; e && *e; e++)
            putenv((char *)*e);
        _exit(child_run(opts, cluster_file ? cluster_file : g_server.cluster_file, want));
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_cluster_file_says_tls(void **state)
{
    FILE *f = fopen(g_server.cluster_file, "r");
    assert_non_null(f);
    char line[256] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_non_null(strstr(line, ":tls"));
}

static void test_option_paths(void **state)
{
    option o[] = { { FDB_NET_OPTION_TLS_CERT_PATH, pki("client.pem"), false },
                   { FDB_NET_OPTION_TLS_KEY_PATH, pki("client.key"), false },
                   { FDB_NET_OPTION_TLS_CA_PATH, pki("ca.pem"), false },
                   { 0 } };
    in_child(o, NULL, NULL, 0);
}

static void test_option_bytes_and_rules(void **state)
{
    option o[] = { { FDB_NET_OPTION_TLS_CERT_BYTES, pki("client.pem"), true },
                   { FDB_NET_OPTION_TLS_KEY_BYTES, pki("client.key"), true },
                   { FDB_NET_OPTION_TLS_CA_BYTES, pki("ca.pem"), true },
                   { FDB_NET_OPTION_TLS_VERIFY_PEERS, "S.CN=nobody|S.CN=cfdb-server,I.CN=cfdb test CA", false },
                   { 0 } };
    in_child(o, NULL, NULL, 0);
}

static void test_encrypted_key(void **state)
{
    option o[] = { { FDB_NET_OPTION_TLS_PASSWORD, "secret", false }, /* before the key, as libfdb_c allows */
                   { FDB_NET_OPTION_TLS_CERT_PATH, pki("client.pem"), false },
                   { FDB_NET_OPTION_TLS_KEY_PATH, pki("client-encrypted.key"), false },
                   { FDB_NET_OPTION_TLS_CA_PATH, pki("ca.pem"), false },
                   { 0 } };
    in_child(o, NULL, NULL, 0);
    /* without the password the key cannot be loaded */
    option bad[] = { { FDB_NET_OPTION_TLS_CERT_PATH, pki("client.pem"), false },
                     { FDB_NET_OPTION_TLS_KEY_PATH, pki("client-encrypted.key"), false },
                     { FDB_NET_OPTION_TLS_CA_PATH, pki("ca.pem"), false },
                     { 0 } };
    in_child(bad, NULL, NULL, 2107);
}

static void test_environment(void **state)
{
    static char cert[400], key[400], ca[400];
    snprintf(cert, sizeof cert, "FDB_TLS_CERTIFICATE_FILE=%s", pki("client.pem"));
    snprintf(key, sizeof key, "FDB_TLS_KEY_FILE=%s", pki("client.key"));
    snprintf(ca, sizeof ca, "FDB_NETWORK_OPTION_TLS_CA_PATH=%s", pki("ca.pem"));
    const char *env[] = { cert, key, ca, "FDB_TLS_VERIFY_PEERS=S.OU=server", NULL };
    in_child(NULL, env, NULL, 0);
    /* an environment rule that refuses the server: connections fail, the transaction times out */
    const char *picky[] = { cert, key, ca, "FDB_TLS_VERIFY_PEERS=S.OU=storage", NULL };
    in_child(NULL, picky, NULL, 1031);
    /* a malformed FDB_NETWORK_OPTION_ value (a dangling escape) fails the network setup */
    pid_t pid = fork();
    if (pid == 0) {
        putenv("FDB_NETWORK_OPTION_TLS_CA_PATH=bad\\");
        fdb_select_api_version(FDB_API_VERSION);
        _exit(fdb_setup_network() == 2022 ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_refusals(void **state)
{
    /* the server's rule (S.O=cfdb) refuses a certificate from another CA */
    option other[] = { { FDB_NET_OPTION_TLS_CERT_PATH, pki("other.pem"), false },
                       { FDB_NET_OPTION_TLS_KEY_PATH, pki("other.key"), false },
                       { FDB_NET_OPTION_TLS_CA_PATH, pki("ca.pem"), false },
                       { 0 } };
    in_child(other, NULL, NULL, 1031);
    /* no CA: the client cannot trust the server */
    option no_ca[] = { { FDB_NET_OPTION_TLS_CERT_PATH, pki("client.pem"), false },
                       { FDB_NET_OPTION_TLS_KEY_PATH, pki("client.key"), false },
                       { 0 } };
    in_child(no_ca, NULL, NULL, 1031);
    /* unless Check.Valid=0 */
    option lax[] = { { FDB_NET_OPTION_TLS_CERT_PATH, pki("client.pem"), false },
                     { FDB_NET_OPTION_TLS_KEY_PATH, pki("client.key"), false },
                     { FDB_NET_OPTION_TLS_VERIFY_PEERS, "Check.Valid=0", false },
                     { 0 } };
    in_child(lax, NULL, NULL, 0);
    /* configurations that cannot be loaded are refused when the database is created */
    option missing[] = { { FDB_NET_OPTION_TLS_CA_PATH, pki("no-such-ca.pem"), false }, { 0 } };
    in_child(missing, NULL, NULL, 2107);
    option bad_rules[] = { { FDB_NET_OPTION_TLS_CA_PATH, pki("ca.pem"), false },
                           { FDB_NET_OPTION_TLS_VERIFY_PEERS, "Check.Valid=2", false },
                           { 0 } };
    in_child(bad_rules, NULL, NULL, 2107);
    option mismatch[] = { { FDB_NET_OPTION_TLS_CERT_PATH, pki("client.pem"), false },
                          { FDB_NET_OPTION_TLS_KEY_PATH, pki("server.key"), false },
                          { 0 } };
    in_child(mismatch, NULL, NULL, 2107);
}

static void test_plaintext_client_at_tls_server(void **state)
{
    /* the same coordinator without :tls: the client speaks plaintext and never gets in */
    char plain[400];
    snprintf(plain, sizeof plain, "%s/plain.cluster", g_pki);
    FILE *in = fopen(g_server.cluster_file, "r");
    assert_non_null(in);
    char line[256] = "";
    assert_non_null(fgets(line, sizeof line, in));
    fclose(in);
    char *tls = strstr(line, ":tls");
    assert_non_null(tls);
    *tls = '\n';
    tls[1] = 0;
    FILE *out = fopen(plain, "w");
    assert_non_null(out);
    fputs(line, out);
    fclose(out);
    in_child(NULL, NULL, plain, 1031);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_file_says_tls),
        cmocka_unit_test(test_option_paths),
        cmocka_unit_test(test_option_bytes_and_rules),
        cmocka_unit_test(test_encrypted_key),
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_plaintext_client_at_tls_server),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
