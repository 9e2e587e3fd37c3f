/* Hostname coordinators: a name that does not resolve yet does not stop fdb_create_database,
 * and a name whose address changes is followed once the old address stops answering (the name
 * is looked up again after a connection failure, as libfdb_c does).
 *
 * The test runs in a private mount namespace with its own /etc/hosts, so that it can change
 * what a name resolves to; where namespaces are not allowed the tests are skipped. */
#define _GNU_SOURCE
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#define HOST "cfdb-hostname-test.invalid"

static bool g_namespace;
static char g_hosts_copy[] = "/tmp/cfdb-hosts-XXXXXX";
static char g_original_hosts[8192];
static size_t g_original_len;

/* /etc/hosts = the original lines + "ip HOST" (ip NULL: no entry). glibc reads it per lookup. */
static void set_host(const char *ip)
{
    FILE *f = fopen("/etc/hosts", "w");
    assert_non_null(f);
    fwrite(g_original_hosts, 1, g_original_len, f);
    if (ip)
        fprintf(f, "\n%s %s\n", ip, HOST);
    assert_int_equal(fclose(f), 0);
}

static bool enter_namespace(void)
{
    FILE *f = fopen("/etc/hosts", "r");
    if (f) {
        g_original_len = fread(g_original_hosts, 1, sizeof g_original_hosts - 1, f);
        fclose(f);
    }
    int fd = mkstemp(g_hosts_copy);
    if (fd < 0)
        return false;
    close(fd);
    if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(g_hosts_copy, "/etc/hosts", NULL, MS_BIND, NULL) != 0) {
        fprintf(stderr, "test_api_hostnames: no private mount namespace (%s): tests skipped\n", strerror(errno));
        unlink(g_hosts_copy);
        return false;
    }
    return true;
}

static api_server g_a, g_b;

static int group_setup(void **state)
{
    (void)state;
    if (!g_namespace)
        return 0;
    set_host(NULL);
    return api_network_start();
}

static int group_teardown(void **state)
{
    (void)state;
    if (!g_namespace)
        return 0;
    api_server_stop(&g_a);
    api_server_stop(&g_b);
    api_network_stop();
    umount("/etc/hosts");
    unlink(g_hosts_copy);
    return 0;
}

static int port_of(const api_server *s)
{
    FILE *f = fopen(s->cluster_file, "r");
    assert_non_null(f);
    char line[256] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    char *colon = strrchr(line, ':');
    assert_non_null(colon);
    return atoi(colon + 1);
}

static FDBDatabase *g_db;

/* Runs one transaction that reads "where" and then sets it to `value`, retrying as an
 * application would; returns what it read ("" if absent). Fails after 30 s. */
static void read_then_write(char *seen, size_t cap, const char *value)
{
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_db, &tr), 0);
    int64_t timeout = 30000;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&timeout, 8), 0);
    for (;;) {
        int present = 0, len = 0;
        char buf[64];
        fdb_error_t e = api_get(tr, "where", 5, 0, &present, buf, sizeof buf, &len);
        if (e == 0) {
            snprintf(seen, cap, "%.*s", present ? len : 0, buf);
            fdb_transaction_set(tr, (const uint8_t *)"where", 5, (const uint8_t *)value, (int)strlen(value));
            e = api_commit(tr);
        }
        if (e == 0)
            break;
        e = api_on_error(tr, e);
        if (e)
            fail_msg("transaction failed: %d", e);
    }
    fdb_transaction_destroy(tr);
}

static void test_name_resolved_when_it_appears(void **state)
{
    (void)state;
    if (!g_namespace)
        skip();
    const char *a_args[] = { "--listen", "127.0.0.2:0", "--description", "hosttest", "--cluster-id", "abc123", NULL };
    assert_int_equal(api_server_start(&g_a, a_args), 0);
    char cs[256];
    snprintf(cs, sizeof cs, "hosttest:abc123@%s:%d", HOST, port_of(&g_a));

    /* the name does not resolve: the database is created all the same, and waits */
    assert_int_equal(fdb_create_database_from_connection_string(cs, &g_db), 0);
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_db, &tr), 0);
    int64_t timeout = 500;
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_TIMEOUT, (const uint8_t *)&timeout, 8), 0);
    int present;
    assert_int_equal(api_get(tr, "where", 5, 0, &present, NULL, 0, NULL), 1031);
    fdb_transaction_destroy(tr);

    /* now it does */
    set_host("127.0.0.2");
    char seen[64];
    read_then_write(seen, sizeof seen, "A");
    assert_string_equal(seen, "");
    read_then_write(seen, sizeof seen, "A");
    assert_string_equal(seen, "A");
}

static void test_address_change_followed(void **state)
{
    (void)state;
    if (!g_namespace)
        skip();
    /* the same cluster name and port on another address, with its own (empty) data */
    char port[16];
    snprintf(port, sizeof port, "127.0.0.3:%d", port_of(&g_a));
    api_server_stop(&g_a);
    const char *b_args[] = { "--listen", port, "--description", "hosttest", "--cluster-id", "abc123", NULL };
    assert_int_equal(api_server_start(&g_b, b_args), 0);
    set_host("127.0.0.3");

    char seen[64];
    read_then_write(seen, sizeof seen, "B");
    assert_string_equal(seen, ""); /* B's data: the client moved */
    read_then_write(seen, sizeof seen, "B");
    assert_string_equal(seen, "B");
    fdb_database_destroy(g_db);
}

int main(void)
{
    g_namespace = enter_namespace(); /* before any thread exists */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_resolved_when_it_appears),
        cmocka_unit_test(test_address_change_followed),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
