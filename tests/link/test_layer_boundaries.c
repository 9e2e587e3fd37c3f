/* The client's library boundaries hold at compile time: a source of special/ cannot include
 * the engine's txn_internal.h or the database's db_internal.h, the sans-I/O core cannot
 * include the event loop, a connection or db's headers, txn/ cannot include the special key
 * space and db/ cannot include the transaction. Each case builds one probe
 * (tests/link/layer_probes/, compiled with that library's include path) through the build
 * system and checks the outcome; the permitted includes are built the same way, so a failure
 * means the include path, not the harness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

/* Builds probe `name`: its exit status; the output's first line naming `needle` goes to *hit. */
static int build_probe(const char *name, const char *needle, bool *hit)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s%s 2>&1", CFDB_PROBE_BUILD, name);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[2048];
    *hit = false;
    while (fgets(line, sizeof line, p)) {
        if (needle && strstr(line, needle) && strstr(line, "error")) {
            if (!*hit)
                printf("%s: %s", name, line);
            *hit = true;
        }
    }
    int status = pclose(p);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void refused(const char *name, const char *header)
{
    bool hit;
    int rc = build_probe(name, header, &hit);
    if (rc == 0 || !hit)
        fail_msg("probe %s: including %s was not refused (exit %d)", name, header, rc);
}

static void allowed(const char *name)
{
    bool hit;
    int rc = build_probe(name, NULL, &hit);
    if (rc != 0)
        fail_msg("probe %s: a permitted include did not compile (exit %d)", name, rc);
}

static void test_special_sees_no_engine_internals(void **state)
{
    (void)state;
    refused("special_txn_internal", "txn_internal.h");
    refused("special_db_internal", "db_internal.h");
    allowed("special_txn_api");
}

static void test_core_is_sans_io(void **state)
{
    (void)state;
    refused("core_event_loop", "event_loop.h");
    refused("core_connection", "connection.h");
    refused("core_database", "database.h");
    allowed("core_ryw");
}

static void test_txn_does_not_see_special(void **state)
{
    (void)state;
    refused("txn_special_keys", "special_keys.h");
    allowed("txn_txn_internal");
}

static void test_db_does_not_see_txn(void **state)
{
    (void)state;
    refused("db_transaction", "transaction.h");
    allowed("db_db_internal");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_special_sees_no_engine_internals),
        cmocka_unit_test(test_core_is_sans_io),
        cmocka_unit_test(test_txn_does_not_see_special),
        cmocka_unit_test(test_db_does_not_see_txn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
