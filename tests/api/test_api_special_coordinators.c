/* Changing coordinators through the special key space, end to end through fdb_c.h against a
 * cfdb-server running three coordination servers (its main listener P and --coordinator Q, R)
 * with a data directory. Expectations are derived by hand from FoundationDB 7.3.77:
 *   fdbclient/SpecialKeySpace.actor.cpp   coordinatorsCommitActor (parse, messages),
 *                                         CoordinatorsAutoImplActor (auto_coordinators)
 *   fdbclient/ManagementAPI.actor.cpp     changeQuorumChecker, generateErrorMessage,
 *                                         AutoQuorumChange::getDesired / isAcceptable
 *   fdbcli/CoordinatorsCommand.actor.cpp  the commit of a change fails with
 *                                         commit_unknown_result; the retry says "No change"
 *   ManagementAPIError::toJsonString      {"command":..,"message":..,"retriable":..}
 * The cases run in order on one server: the cluster moves P -> {Q,R} -> P, and its new
 * name survives a restart. */
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
#define DESCRIPTION "\xff\xff/configuration/coordinators/cluster_description"
#define CONFIG_DB "\xff\xff/configuration/coordinators/config_db"
#define AUTO "\xff\xff/management/auto_coordinators"
#define EM "\xff\xff/error_message"
#define CS "\xff\xff/connection_string"
#define PREV "\xff/previousCoordinators"

static api_server g_srv;
static char g_dir[64];            /* datadir and the client's cluster file */
static char g_client_file[128];   /* the client's own copy of the cluster file */
static char g_first_cs[512];      /* the connection string the cluster started with */
static unsigned g_p, g_q, g_r;    /* the coordination servers' ports */
static char g_pa[32], g_qa[32], g_ra[32];
static char g_datadir[96], g_listen[40], g_q_arg[8], g_r_arg[8];
static FDBDatabase *g_db;

static int start_server(void)
{
    const char *args[] = { "--listen", g_listen, "--coordinator", g_q_arg, "--coordinator", g_r_arg, "--datadir",
                           g_datadir, "--description", "orig", "--cluster-id", "abc123", NULL };
    return api_server_start(&g_srv, args);
}

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/cfdb-coord-test-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_datadir, sizeof g_datadir, "%s/data", g_dir);
    snprintf(g_client_file, sizeof g_client_file, "%s/client.cluster", g_dir);
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
    snprintf(g_qa, sizeof g_qa, "127.0.0.1:%u", g_q);
    snprintf(g_ra, sizeof g_ra, "127.0.0.1:%u", g_r);
    if (start_server() || api_network_start())
        return -1;
    /* the client's own cluster file, so that what it rewrites is told apart from the server's */
    char *cs = slurp(g_srv.cluster_file);
    if (!cs)
        return -1;
    snprintf(g_first_cs, sizeof g_first_cs, "%.*s", (int)strcspn(cs, "\n"), cs);
    FILE *f = fopen(g_client_file, "w");
    if (!f)
        return -1;
    fprintf(f, "%s\n", g_first_cs);
    fclose(f);
    return fdb_create_database(g_client_file, &g_db) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (g_db)
        fdb_database_destroy(g_db);
    api_network_stop();
    api_server_stop(&g_srv);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static FDBTransaction *new_tr(FDBDatabase *db)
{
    FDBTransaction *tr = NULL;
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    return tr;
}

/* reads key in a fresh transaction of db, retrying retryable errors; NUL-terminated */
static fdb_error_t sget(FDBDatabase *db, const char *key, int klen, int *present, char *out, int cap)
{
    FDBTransaction *tr = new_tr(db);
    fdb_error_t e;
    for (;;) {
        int len = 0;
        e = api_get(tr, key, klen, 0, present, out, cap - 1, &len);
        if (!e) {
            out[*present ? len : 0] = 0;
            break;
        }
        if (api_on_error(tr, e))
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

/* the error message after a 2117 (read in the failed transaction, as fdbcli does) */
static void error_message(FDBTransaction *tr, char *msg, int cap)
{
    int present = 0, len = 0;
    msg[0] = 0;
    if (api_get(tr, EM, SL(EM), 0, &present, msg, cap - 1, &len) == 0 && present)
        msg[len] = 0;
}

/* one coordinators change in its own transaction (NULL: not written); on 2117 the message */
static fdb_error_t change(const char *processes, const char *description, char *msg, int cap)
{
    FDBTransaction *tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    if (processes)
        fdb_transaction_set(tr, (const uint8_t *)PROCESSES, SL(PROCESSES), (const uint8_t *)processes,
                            (int)strlen(processes));
    if (description)
        fdb_transaction_set(tr, (const uint8_t *)DESCRIPTION, SL(DESCRIPTION), (const uint8_t *)description,
                            (int)strlen(description));
    fdb_error_t e = api_commit(tr);
    if (msg) {
        msg[0] = 0;
        if (e == 2117)
            error_message(tr, msg, cap);
    }
    fdb_transaction_destroy(tr);
    return e;
}

static void coordinators_failure(char *out, size_t cap, const char *message, bool retriable)
{
    snprintf(out, cap, "{\"command\":\"coordinators\",\"message\":\"%s\",\"retriable\":%s}", message,
             retriable ? "true" : "false");
}

static void raw_coordinators(char *out, int cap)
{
    FDBTransaction *tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    int present = 0, len = 0;
    for (;;) {
        fdb_error_t e = api_get(tr, "\xff/coordinators", SL("\xff/coordinators"), 0, &present, out, cap - 1, &len);
        if (!e || api_on_error(tr, e))
            break;
    }
    assert_true(present);
    out[len] = 0;
    fdb_transaction_destroy(tr);
}

/* a set and get through a database handle (a working cluster behind it) */
static void round_trip(FDBDatabase *db, const char *key, const char *value)
{
    FDBTransaction *tr = new_tr(db);
    for (;;) {
        fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)value, (int)strlen(value));
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
    char got[128];
    int present = 0;
    assert_int_equal(sget(db, key, (int)strlen(key), &present, got, sizeof got), 0);
    assert_true(present);
    assert_string_equal(got, value);
}

/* SpecialKeySpace::set: without SPECIAL_KEY_SPACE_ENABLE_WRITES, special_keys_write_disabled */
static void test_writes_need_option(void **state)
{
    (void)state;
    FDBTransaction *tr = new_tr(g_db);
    fdb_transaction_set(tr, (const uint8_t *)DESCRIPTION, SL(DESCRIPTION), (const uint8_t *)"x", 1);
    assert_int_equal(api_commit(tr), 2114);
    fdb_transaction_destroy(tr);
    char v[512];
    int present = 0;
    assert_int_equal(sget(g_db, CS, SL(CS), &present, v, sizeof v), 0);
    assert_string_equal(v, g_first_cs);
}

/* coordinatorsCommitActor: each part of processes is a hostname or a valid NetworkAddress */
static void test_invalid_processes(void **state)
{
    (void)state;
    char two_bad[96], empty_part[96];
    snprintf(two_bad, sizeof two_bad, "%s,not_an_address", g_pa);
    snprintf(empty_part, sizeof empty_part, "%s,,%s", g_pa, g_qa);
    struct {
        const char *value, *named;
    } cases[] = {
        { two_bad, "not_an_address" },  /* neither hostname nor address */
        { "127.0.0.1", "127.0.0.1" },   /* no port */
        { "0.0.0.0:0", "0.0.0.0:0" },   /* parses but !isValid() */
        { "", "" },                     /* boost::split gives one empty part */
        { empty_part, "" },
        { "1.2.3.4:4500:xyz", "1.2.3.4:4500:xyz" }, /* only ":tls" may follow the port */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char msg[512], want[512], text[256];
        snprintf(text, sizeof text, "ERROR: '%s' is not a valid network endpoint address\\n", cases[i].named);
        coordinators_failure(want, sizeof want, text, false);
        assert_int_equal(change(cases[i].value, NULL, msg, sizeof msg), 2117);
        assert_string_equal(msg, want);
    }
    /* processes are checked before the description */
    char msg[512], want[512];
    coordinators_failure(want, sizeof want, "ERROR: 'x' is not a valid network endpoint address\\n", false);
    assert_int_equal(change("x", "bad-desc", msg, sizeof msg), 2117);
    assert_string_equal(msg, want);
}

/* isAlphaNumeric: [A-Za-z0-9_]+ */
static void test_invalid_description(void **state)
{
    (void)state;
    const char *bad[] = { "bad-desc", "", "sp ace", "dot.ted" };
    char want[256];
    coordinators_failure(want, sizeof want, "Cluster description must match [A-Za-z0-9_]+", false);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char msg[512];
        assert_int_equal(change(NULL, bad[i], msg, sizeof msg), 2117);
        assert_string_equal(msg, want);
    }
}

/* changeQuorumChecker: the same coordinators and name are SAME_NETWORK_ADDRESSES, after
 * \xff/previousCoordinators was cleared (resetPreviousCoordinatorsKey) */
static void test_no_change(void **state)
{
    (void)state;
    char want[256], msg[512];
    coordinators_failure(want, sizeof want, "No change (existing configuration satisfies request)", false);
    /* \xff/previousCoordinators set, to see it cleared */
    FDBTransaction *tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_set(tr, (const uint8_t *)PREV, SL(PREV), (const uint8_t *)"x", 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);

    assert_int_equal(change(g_pa, NULL, msg, sizeof msg), 2117);
    assert_string_equal(msg, want);
    assert_int_equal(change(NULL, "orig", msg, sizeof msg), 2117);
    assert_string_equal(msg, want);
    assert_int_equal(change(g_pa, "orig", msg, sizeof msg), 2117);
    assert_string_equal(msg, want);
    /* only config_db written: no coordinators (the current ones), the current name */
    tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, (const uint8_t *)CONFIG_DB, SL(CONFIG_DB), (const uint8_t *)"", 0);
    assert_int_equal(api_commit(tr), 2117);
    error_message(tr, msg, sizeof msg);
    assert_string_equal(msg, want);
    fdb_transaction_destroy(tr);

    tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    int present = 1, len = 0;
    char v[16];
    assert_int_equal(api_get(tr, PREV, SL(PREV), 0, &present, v, sizeof v, &len), 0);
    assert_false(present);
    fdb_transaction_destroy(tr);
}

/* changeQuorumChecker: every new coordinator must answer GetLeaderRequest within 5 s, else
 * COORDINATOR_UNREACHABLE (retriable) and nothing changes */
static void test_unreachable(void **state)
{
    (void)state;
    unsigned u;
    do
        u = test_free_port();
    while (u == g_p || u == g_q || u == g_r);
    char processes[128], want[256], msg[512], before[512], after[512];
    /* a hostname (Hostname::isHostname), resolved, then asked like the addresses */
    snprintf(processes, sizeof processes, "%s,localhost:%u,%s", g_qa, u, g_ra);
    raw_coordinators(before, sizeof before);
    coordinators_failure(want, sizeof want, "One of the specified coordinators is unreachable", true);
    double t0 = api_now_ms();
    assert_int_equal(change(processes, NULL, msg, sizeof msg), 2117);
    assert_true(api_now_ms() - t0 >= 4900); /* the 5 s wait happened (not a performance bound) */
    assert_string_equal(msg, want);
    raw_coordinators(after, sizeof after);
    assert_string_equal(before, after);
}

/* libfdb_c does not refuse a coordinator named twice (fdbcli does, before writing); the new
 * string reaches the cluster, which does not take it: nothing changes */
static void test_duplicates(void **state)
{
    (void)state;
    char processes[80], before[512], after[512];
    snprintf(processes, sizeof processes, "%s,%s", g_qa, g_qa);
    raw_coordinators(before, sizeof before);
    assert_int_equal(change(processes, NULL, NULL, 0), 1027);
    raw_coordinators(after, sizeof after);
    assert_string_equal(before, after);
}

static bool alnum32(const char *id, size_t n)
{
    if (n != 32)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') || (id[i] >= '0' && id[i] <= '9')))
            return false;
    return true;
}

/* a new description: a new key description:<32 random alphanumerics> on the same coordinator;
 * the commit fails with commit_unknown_result (the generation ends), fdbcli's retry then sees
 * "No change"; the client follows the forward and rewrites its cluster file */
static void test_change_description(void **state)
{
    (void)state;
    FDBTransaction *tr = new_tr(g_db);
    char msg[512], want[256];
    fdb_error_t e;
    int attempt = 0;
    for (;; attempt++) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
        fdb_transaction_set(tr, (const uint8_t *)DESCRIPTION, SL(DESCRIPTION), (const uint8_t *)"renamed", 7);
        e = api_commit(tr);
        if (e == 2117 || attempt == 5)
            break;
        assert_int_equal(e, 1021); /* commit_unknown_result */
        assert_int_equal(api_on_error(tr, e), 0);
    }
    assert_int_equal(e, 2117);
    assert_true(attempt >= 1);
    error_message(tr, msg, sizeof msg);
    coordinators_failure(want, sizeof want, "No change (existing configuration satisfies request)", false);
    assert_string_equal(msg, want);
    fdb_transaction_destroy(tr);

    char v[512];
    int present = 0;
    assert_int_equal(sget(g_db, DESCRIPTION, SL(DESCRIPTION), &present, v, sizeof v), 0);
    assert_string_equal(v, "renamed");
    assert_int_equal(sget(g_db, PROCESSES, SL(PROCESSES), &present, v, sizeof v), 0);
    assert_string_equal(v, g_pa);
    raw_coordinators(v, sizeof v);
    char *at = strchr(v, '@');
    assert_non_null(at);
    assert_true(!strncmp(v, "renamed:", 8) && alnum32(v + 8, (size_t)(at - v - 8)));
    assert_string_equal(at + 1, g_pa);
    /* the client's cluster file holds the new string; a database opened from it works */
    char cs[512];
    snprintf(cs, sizeof cs, "%s", v);
    for (int i = 0; i < 200; i++) {
        const char *file = slurp(g_client_file);
        if (file && strstr(file, cs))
            break;
        usleep(10000);
    }
    assert_non_null(strstr(slurp(g_client_file), cs));
    FDBDatabase *db2 = NULL;
    assert_int_equal(fdb_create_database(g_client_file, &db2), 0);
    round_trip(db2, "coord/after_rename", "1");
    assert_int_equal(sget(db2, CS, SL(CS), &present, v, sizeof v), 0);
    assert_string_equal(v, cs);
    fdb_database_destroy(db2);
}

/* from one coordinator to two others: the value written to \xff/coordinators lists them as
 * NetworkAddress sorts (by port here); processes reads them sorted as strings */
static void move_to(const char *processes, const char *sorted_text, const char *sorted_addresses)
{
    FDBTransaction *tr = new_tr(g_db);
    fdb_error_t e;
    for (int attempt = 0;; attempt++) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
        fdb_transaction_set(tr, (const uint8_t *)PROCESSES, SL(PROCESSES), (const uint8_t *)processes,
                            (int)strlen(processes));
        e = api_commit(tr);
        if (e != 1021 || attempt == 5)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    assert_int_equal(e, 2117); /* after the change: "No change" */
    fdb_transaction_destroy(tr);
    char v[512];
    int present = 0;
    assert_int_equal(sget(g_db, PROCESSES, SL(PROCESSES), &present, v, sizeof v), 0);
    assert_string_equal(v, sorted_text);
    assert_int_equal(sget(g_db, DESCRIPTION, SL(DESCRIPTION), &present, v, sizeof v), 0);
    assert_string_equal(v, "renamed");
    raw_coordinators(v, sizeof v);
    assert_non_null(strchr(v, '@'));
    assert_string_equal(strchr(v, '@') + 1, sorted_addresses);
}

static void test_change_processes(void **state)
{
    (void)state;
    char given[80], by_string[80], by_port[80];
    snprintf(given, sizeof given, "%s,%s", g_ra, g_qa);
    bool q_first_text = strcmp(g_qa, g_ra) < 0, q_first_port = g_q < g_r;
    snprintf(by_string, sizeof by_string, "%s,%s", q_first_text ? g_qa : g_ra, q_first_text ? g_ra : g_qa);
    snprintf(by_port, sizeof by_port, "%s,%s", q_first_port ? g_qa : g_ra, q_first_port ? g_ra : g_qa);
    move_to(given, by_string, by_port);
    /* handles made before, from the first connection string, and from the rewritten file work */
    round_trip(g_db, "coord/after_move", "2");
    FDBDatabase *db2 = NULL;
    assert_int_equal(fdb_create_database(g_client_file, &db2), 0);
    round_trip(db2, "coord/after_move2", "3");
    fdb_database_destroy(db2);
    char old_file[128];
    snprintf(old_file, sizeof old_file, "%s/first.cluster", g_dir);
    FILE *f = fopen(old_file, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", g_first_cs);
    fclose(f);
    FDBDatabase *db3 = NULL;
    assert_int_equal(fdb_create_database(old_file, &db3), 0);
    char v[64];
    int present = 0;
    assert_int_equal(sget(db3, "coord/after_move", 16, &present, v, sizeof v), 0);
    assert_true(present);
    fdb_database_destroy(db3);
}

/* CoordinatorsAutoImpl: with {Q, R} (even, and neither is a worker's address) the auto quorum
 * is chosen from the workers: the one process, P */
static void test_auto_coordinators(void **state)
{
    (void)state;
    char v[512];
    int present = 0;
    assert_int_equal(sget(g_db, AUTO, SL(AUTO), &present, v, sizeof v), 0);
    assert_true(present);
    assert_string_equal(v, g_pa);
    /* back to P: the current quorum is acceptable and is the answer */
    move_to(g_pa, g_pa, g_pa);
    assert_int_equal(sget(g_db, AUTO, SL(AUTO), &present, v, sizeof v), 0);
    assert_string_equal(v, g_pa);
    /* P excluded: not acceptable, and no worker left: NOT_ENOUGH_MACHINES (retriable) */
    char key[64];
    int kl = snprintf(key, sizeof key, "\xff/conf/excluded/%s", g_pa);
    FDBTransaction *tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_set(tr, (const uint8_t *)key, kl, (const uint8_t *)"", 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    tr = new_tr(g_db);
    int len = 0;
    assert_int_equal(api_get(tr, AUTO, SL(AUTO), 0, &present, v, sizeof v - 1, &len), 2117);
    error_message(tr, v, sizeof v);
    assert_string_equal(v, "{\"command\":\"auto_coordinators\",\"message\":\"Too few fdbserver machines to provide "
                           "coordination at the current redundancy level\",\"retriable\":true}");
    fdb_transaction_destroy(tr);
    tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_clear(tr, (const uint8_t *)key, kl);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    /* read-only */
    tr = new_tr(g_db);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, (const uint8_t *)AUTO, SL(AUTO), (const uint8_t *)"x", 1);
    assert_int_equal(api_commit(tr), 2115); /* special_keys_no_write_module_found */
    fdb_transaction_destroy(tr);
}

/* the new name and coordinators are in \xff/coordinators, durable in the data directory: a
 * restart (same arguments, --description orig) serves them, and the client's handle and file
 * keep working */
static void test_restart_durable(void **state)
{
    (void)state;
    char before[512];
    raw_coordinators(before, sizeof before);
    api_server_stop(&g_srv);
    assert_int_equal(start_server(), 0);
    char *file = slurp(g_srv.cluster_file);
    assert_non_null(file);
    assert_non_null(strstr(file, before));
    char v[512];
    int present = 0;
    assert_int_equal(sget(g_db, DESCRIPTION, SL(DESCRIPTION), &present, v, sizeof v), 0);
    assert_string_equal(v, "renamed");
    assert_int_equal(sget(g_db, "coord/after_rename", 18, &present, v, sizeof v), 0);
    assert_true(present);
    FDBDatabase *db2 = NULL;
    assert_int_equal(fdb_create_database(g_client_file, &db2), 0);
    round_trip(db2, "coord/after_restart", "4");
    fdb_database_destroy(db2);
    raw_coordinators(v, sizeof v);
    assert_string_equal(v, before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_need_option),  cmocka_unit_test(test_invalid_processes),
        cmocka_unit_test(test_invalid_description), cmocka_unit_test(test_no_change),
        cmocka_unit_test(test_unreachable),         cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_change_description),  cmocka_unit_test(test_change_processes),
        cmocka_unit_test(test_auto_coordinators),   cmocka_unit_test(test_restart_durable),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
