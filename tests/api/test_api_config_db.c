/* A coordinators change through fdb_c.h now checks the configuration database as libfdb_c
 * 7.3.77 does (fdbclient/ManagementAPI.actor.cpp changeQuorumChecker: the "No change" branch
 * runs verifyConfigurationDatabaseAlive unless \xff\xff/configuration/coordinators/config_db
 * was written, SpecialKeySpace.actor.cpp CoordinatorsImpl), against a cfdb-server with three
 * coordination servers P, Q, R whose coordinators serve the configuration database
 * (src/server/config_node.c). The server's control-port status counts the requests
 * (config_requests=N):
 *  - "No change" on one coordinator: one ConfigTransactionGetGenerationRequest and one
 *    ConfigTransactionGetRequest, and the answer is still SAME_NETWORK_ADDRESSES;
 *  - config_db written: no configuration-database request;
 *  - after moving to P,Q,R (commit_unknown_result, then "No change"): a generation request to
 *    each of the three and a get, with the hash of the new connection string (status
 *    config_hash_adopted=0: the client's std::hash matches the server's). */
#include "api_helpers.h"
#include "free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#define SL(x) ((int)sizeof(x) - 1)
#define PROCESSES "\xff\xff/configuration/coordinators/processes"
#define CONFIG_DB "\xff\xff/configuration/coordinators/config_db"
#define EM "\xff\xff/error_message"
#define NO_CHANGE "{\"command\":\"coordinators\",\"message\":\"No change (existing configuration satisfies request)\",\"retriable\":false}"

static api_server g_srv;
static unsigned g_p, g_q, g_r;
static char g_pa[32], g_listen[40], g_q_arg[8], g_r_arg[8], g_all[128];
static FDBDatabase *g_db;

static int group_setup(void **state)
{
    (void)state;
    g_p = test_free_port();
    do
        g_q = test_free_port();
    while (g_q == g_p);
    do
        g_r = test_free_port();
    while (g_r == g_p || g_r == g_q);
    if (!g_p || !g_q || !g_r)
        return -1;
    snprintf(g_listen, sizeof g_listen, "127.0.0.1:%u", g_p);
    snprintf(g_q_arg, sizeof g_q_arg, "%u", g_q);
    snprintf(g_r_arg, sizeof g_r_arg, "%u", g_r);
    snprintf(g_pa, sizeof g_pa, "127.0.0.1:%u", g_p);
    snprintf(g_all, sizeof g_all, "127.0.0.1:%u,127.0.0.1:%u,127.0.0.1:%u", g_p, g_q, g_r);
    const char *args[] = { "--listen", g_listen, "--coordinator", g_q_arg, "--coordinator", g_r_arg,
                           "--description", "cfg", "--cluster-id", "cfgdb002", NULL };
    if (api_server_start(&g_srv, args) || api_network_start())
        return -1;
    return fdb_create_database(g_srv.cluster_file, &g_db) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (g_db)
        fdb_database_destroy(g_db);
    api_network_stop();
    api_server_stop(&g_srv);
    return 0;
}

static unsigned long long status_field(const char *name)
{
    unsigned long long v;
    assert_int_equal(api_server_status(&g_srv, name, &v), 0);
    return v;
}

static unsigned long long config_requests(void)
{
    return status_field("config_requests");
}

/* One coordinators commit (processes, and config_db when asked); retries commit_unknown_result
 * as fdbcli does; returns the last error and, on 2117, the message. */
static fdb_error_t change(const char *processes, bool config_db, char *msg, int cap)
{
    FDBTransaction *tr = NULL;
    assert_int_equal(fdb_database_create_transaction(g_db, &tr), 0);
    fdb_error_t e;
    for (int attempt = 0;; attempt++) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
        fdb_transaction_set(tr, (const uint8_t *)PROCESSES, SL(PROCESSES), (const uint8_t *)processes,
                            (int)strlen(processes));
        if (config_db)
            fdb_transaction_set(tr, (const uint8_t *)CONFIG_DB, SL(CONFIG_DB), (const uint8_t *)"", 0);
        e = api_commit(tr);
        if (e != 1021 || attempt == 5)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    msg[0] = 0;
    int present = 0, len = 0;
    if (e == 2117 && api_get(tr, EM, SL(EM), 0, &present, msg, cap - 1, &len) == 0 && present)
        msg[len] = 0;
    fdb_transaction_destroy(tr);
    return e;
}


static void test_no_change_reads_config_db(void **state)
{
    (void)state;
    char msg[512];
    unsigned long long before = config_requests();
    assert_int_equal(change(g_pa, false, msg, sizeof msg), 2117);
    assert_string_equal(msg, NO_CHANGE);
    assert_int_equal(config_requests() - before, 2); /* one generation, one get */
}

static void test_config_db_written_skips(void **state)
{
    (void)state;
    char msg[512];
    unsigned long long before = config_requests();
    assert_int_equal(change(g_pa, true, msg, sizeof msg), 2117);
    assert_string_equal(msg, NO_CHANGE);
    assert_int_equal(config_requests(), before);
}

static void test_three_coordinators(void **state)
{
    (void)state;
    char msg[512];
    unsigned long long before = config_requests();
    assert_int_equal(change(g_all, false, msg, sizeof msg), 2117);
    assert_string_equal(msg, NO_CHANGE);
    /* the change itself asks nothing of the configuration database; the "No change" after it
     * asks all three coordinators for a generation, then one of them for the key */
    assert_true(config_requests() - before >= 4);
    before = config_requests();
    assert_int_equal(change(g_all, false, msg, sizeof msg), 2117);
    assert_string_equal(msg, NO_CHANGE);
    assert_true(config_requests() - before >= 3); /* at least a quorum's generations and a get */
    assert_int_equal(status_field("config_hash_adopted"), 0); /* every hash was the server's own */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_change_reads_config_db),
        cmocka_unit_test(test_config_db_written_skips),
        cmocka_unit_test(test_three_coordinators),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
