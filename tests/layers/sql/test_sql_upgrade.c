/* SPDX-License-Identifier: Apache-2.0 */
/* Template upgrades of big stores: the indexes a new template version adds are built by the
 * Record Layer's online indexer in bounded transactions when the schema is opened.
 *
 * A schema with 3,000 rows of template version 1 (a value index BY_QTY and a COUNT index)
 * gets version 2, which adds a SUM index QTY_BY_CITY, a value index BY_CITY and a unique
 * index BY_CODE and keeps the others unchanged; each new index takes 30 batches of 100:
 *  - an open limited to 5 batches (cfdb_sql_set_index_build_limits) commits at least 5
 *    transactions (the server's commit counter) and leaves QTY_BY_CITY partly built, the
 *    others disabled and not planned, while BY_QTY and the COUNT index stay readable and exact;
 *  - writes while QTY_BY_CITY is write-only, inside and outside its built ranges;
 *  - cfdb_build_indexes(100, 30) resumes: 25 batches finish QTY_BY_CITY (not 30: the built
 *    ranges are kept), whose sums then equal SQLite's, and 5 start BY_CITY;
 *  - writes while BY_CITY is write-only;
 *  - cfdb_build_indexes() finishes: 25 for BY_CITY and 30 for BY_CODE, 90 batches in all,
 *    so nothing else (no unchanged index) was rebuilt; the server counts them as commits;
 *  - queries through the new indexes give the rows of a full scan (`+col` keeps SQLite from
 *    offering the constraint to the index) and their plans name the index;
 *  - a second schema of the same template whose rows repeat a code cannot build BY_CODE:
 *    its open fails with "UNIQUE index BY_CODE of ITEM cannot be built" naming the key, and
 *    so does one of 20 rows (which the Record Layer alone would build inside the open);
 *  - a third one (1,000 rows) is built while commits answer commit_unknown_result (applied)
 *    and another thread drops the server's connections every 3 ms: the indexes come out
 *    equal to full scans and the unique one is enforced. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../../api/api_helpers.h"
#include "cfdb/sql.h"
#include "sql_test_util.h"

#define ROWS 3000
#define DUP_ROWS 300
#define FAULT_ROWS 1000
#define SMALL_DUP_ROWS 20   /* under the Record Layer's 200 built in the open's transaction */

static char err[768];

static void ddl_ok(const char *s)
{
    if (cfdb_sql_ddl(g_env.db, s, err, sizeof err))
        fail_msg("DDL failed: %s\n  for: %s", err, s);
}

static char *q(sqlite3 *db, const char *sql)
{
    return sqlt_query(db, sql, NULL);
}

static void expect(sqlite3 *db, const char *sql, const char *rows)
{
    char *got = q(db, sql);
    if (strcmp(got, rows) != 0)
        fail_msg("%s\n  expected: [%s]\n  got:      [%s]", sql, rows, got);
    free(got);
}

static bool plan_has(sqlite3 *db, const char *sql, const char *needle)
{
    char buf[512];
    snprintf(buf, sizeof buf, "EXPLAIN QUERY PLAN %s", sql);
    char *p = q(db, buf);
    bool has = strstr(p, needle) != NULL;
    free(p);
    return has;
}

static unsigned long long commits(void)
{
    unsigned long long n = 0;
    assert_int_equal(api_server_status(&g_env.server, "commits", &n), 0);
    return n;
}

static const char v1[] =
    "CREATE SCHEMA TEMPLATE up "
    "CREATE TABLE item (id BIGINT, code STRING NOT NULL, city STRING, qty BIGINT, PRIMARY KEY (id)) "
    "CREATE INDEX by_qty ON item (qty) "
    "CREATE INDEX n_all AS SELECT COUNT(*) FROM item";
static const char v2[] =
    "CREATE SCHEMA TEMPLATE up "
    "CREATE TABLE item (id BIGINT, code STRING NOT NULL, city STRING, qty BIGINT, PRIMARY KEY (id)) "
    "CREATE INDEX by_qty ON item (qty) "
    "CREATE INDEX n_all AS SELECT COUNT(*) FROM item "
    "CREATE INDEX qty_by_city AS SELECT city, SUM(qty) FROM item GROUP BY city "
    "CREATE INDEX by_city ON item (city) "
    "CREATE UNIQUE INDEX by_code ON item (code)";

/* rows 1..n: code c<i> (or d<i % dup> when dup > 0), city city<i % 7>, qty i % 50 */
static void fill(sqlite3 *db, int n, int dup)
{
    char sql[256];
    for (int i = 1; i <= n; i++) {
        if (i % 500 == 1)
            assert_int_equal(cfdb_sql_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
        snprintf(sql, sizeof sql, "INSERT INTO item VALUES (%d, '%c%d', 'city%d', %d)", i, dup ? 'd' : 'c',
                 dup ? i % dup : i, i % 7, i % 50);
        char *e = NULL;
        if (cfdb_sql_exec(db, sql, NULL, NULL, &e) != SQLITE_OK)
            fail_msg("%s: %s", sql, e);
        if (i % 500 == 0 || i == n)
            assert_int_equal(cfdb_sql_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    }
}

static int group_setup(void **state)
{
    (void)state;
    if (api_env_setup(NULL))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* The rows a query through an index gives equal those of a full scan, and the plans say so. */
static void same_as_scan(sqlite3 *db, const char *col, const char *value, const char *index)
{
    char ix[256], scan[256], ixplan[64];
    snprintf(ix, sizeof ix, "SELECT id, code, city, qty FROM item WHERE %s = %s ORDER BY id", col, value);
    snprintf(scan, sizeof scan, "SELECT id, code, city, qty FROM item WHERE +%s = %s ORDER BY id", col, value);
    snprintf(ixplan, sizeof ixplan, "Index(%s ", index);
    if (!plan_has(db, ix, ixplan))
        fail_msg("%s does not use %s", ix, index);
    assert_false(plan_has(db, scan, "Index("));
    char *a = q(db, ix), *b = q(db, scan);
    if (strcmp(a, b) != 0)
        fail_msg("%s\n  index: [%.300s]\n  scan:  [%.300s]", ix, a, b);
    assert_true(strlen(a) > 0);
    free(a);
    free(b);
}

/* QTY_BY_CITY's sums are SQLite's over a full scan, for every city. */
static void sums_as_scan(sqlite3 *db)
{
    for (int city = 0; city < 7; city++) {
        char a[128], b[128];
        snprintf(a, sizeof a, "SELECT cfdb_index_value('QTY_BY_CITY', 'city%d')", city);
        snprintf(b, sizeof b, "SELECT sum(qty) FROM item WHERE +city = 'city%d'", city);
        char *x = q(db, a), *y = q(db, b);
        if (strcmp(x, y) != 0 || x[0] == 'E' || x[0] == 'N')
            fail_msg("city%d: index %s, scan %s", city, x, y);
        free(x);
        free(y);
    }
}

static void test_online_build_on_open(void **state)
{
    (void)state;
    ddl_ok(v1);
    ddl_ok("CREATE DATABASE /up");
    ddl_ok("CREATE SCHEMA /up/a WITH TEMPLATE up");
    ddl_ok("CREATE SCHEMA /up/b WITH TEMPLATE up");
    ddl_ok("CREATE SCHEMA /up/c WITH TEMPLATE up");
    ddl_ok("CREATE SCHEMA /up/d WITH TEMPLATE up");
    sqlite3 *db;
    assert_int_equal(cfdb_sql_open(g_env.db, "/up", "a", &db, err, sizeof err), 0);
    fill(db, ROWS, 0);
    sqlite3_close(db);
    assert_int_equal(cfdb_sql_open(g_env.db, "/up", "b", &db, err, sizeof err), 0);
    fill(db, DUP_ROWS, 100);
    sqlite3_close(db);
    assert_int_equal(cfdb_sql_open(g_env.db, "/up", "c", &db, err, sizeof err), 0);
    fill(db, FAULT_ROWS, 0);
    sqlite3_close(db);
    assert_int_equal(cfdb_sql_open(g_env.db, "/up", "d", &db, err, sizeof err), 0);
    fill(db, SMALL_DUP_ROWS, 7);
    sqlite3_close(db);

    ddl_ok(v2);
    /* an open bounded to 5 batches of 100 records */
    assert_int_equal(cfdb_sql_set_index_build_limits(100, 5), 0);
    unsigned long long c0 = commits();
    if (cfdb_sql_open(g_env.db, "/up", "a", &db, err, sizeof err))
        fail_msg("open: %s", err);
    unsigned long long c1 = commits();
    assert_true(c1 - c0 >= 5);
    /* BY_CITY is disabled: not planned; BY_QTY and N_ALL did not change: readable */
    assert_false(plan_has(db, "SELECT id FROM item WHERE city = 'city3'", "BY_CITY"));
    assert_false(plan_has(db, "SELECT id FROM item WHERE code = 'c17'", "BY_CODE"));
    assert_true(plan_has(db, "SELECT id FROM item WHERE qty = 7", "Index(BY_QTY [QTY=?])"));
    expect(db, "SELECT cfdb_index_value('N_ALL')", "3000\n");
    same_as_scan(db, "qty", "7", "BY_QTY");
    expect(db, "SELECT count(*) FROM item WHERE city = 'city3'", "429\n");

    /* writes while QTY_BY_CITY is write-only, inside and outside its built ranges */
    assert_int_equal(cfdb_sql_exec(db, "INSERT INTO item VALUES (5000, 'c5000', 'city3', 1)", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(cfdb_sql_exec(db, "DELETE FROM item WHERE id IN (3, 10, 2999)", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(cfdb_sql_exec(db, "UPDATE item SET city = 'city3' WHERE id IN (1, 2000)", NULL, NULL, NULL),
                     SQLITE_OK);

    /* 25 batches finish QTY_BY_CITY, 5 start BY_CITY */
    unsigned long long c2 = commits();
    expect(db, "SELECT cfdb_build_indexes(100, 30)", "30\n");
    assert_true(commits() - c2 >= 30);
    sums_as_scan(db);
    assert_false(plan_has(db, "SELECT id FROM item WHERE city = 'city3'", "BY_CITY"));
    /* writes while BY_CITY is write-only */
    assert_int_equal(cfdb_sql_exec(db, "INSERT INTO item VALUES (5001, 'c5001', 'city4', 2)", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(cfdb_sql_exec(db, "DELETE FROM item WHERE id IN (20, 2500)", NULL, NULL, NULL), SQLITE_OK);
    /* the rest: 25 for BY_CITY, 30 for BY_CODE */
    unsigned long long c3 = commits();
    expect(db, "SELECT count(*) FROM item", "2997\n");    /* a read before it is fine */
    expect(db, "SELECT cfdb_build_indexes()", "55\n");
    assert_true(commits() - c3 >= 55);
    expect(db, "SELECT cfdb_build_indexes()", "0\n");   /* nothing left */
    assert_int_equal(cfdb_sql_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    char *inside = q(db, "SELECT cfdb_build_indexes()");
    assert_non_null(strstr(inside, "not inside a transaction"));
    free(inside);
    assert_int_equal(cfdb_sql_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    for (int city = 0; city < 7; city++) {
        char v[16];
        snprintf(v, sizeof v, "'city%d'", city);
        same_as_scan(db, "city", v, "BY_CITY");
    }
    same_as_scan(db, "code", "'c17'", "BY_CODE");
    same_as_scan(db, "code", "'c5000'", "BY_CODE");
    expect(db, "SELECT count(*) FROM item WHERE city >= 'city0'", "2997\n");
    expect(db, "SELECT count(*) FROM item WHERE city = 'city3'", "429\n");
    expect(db, "SELECT cfdb_index_value('N_ALL')", "2997\n");
    sums_as_scan(db);
    /* the unique index is enforced now */
    char *r = q(db, "INSERT INTO item VALUES (6000, 'c17', NULL, 0)");
    assert_non_null(strstr(r, "UNIQUE constraint failed: index BY_CODE of ITEM"));
    free(r);
    sqlite3_close(db);

    /* a new open finds everything readable: the load and nothing else */
    assert_int_equal(cfdb_sql_set_index_build_limits(0, 0), 0);
    unsigned long long c4 = commits();
    assert_int_equal(cfdb_sql_open(g_env.db, "/up", "a", &db, err, sizeof err), 0);
    assert_true(commits() - c4 <= 1);
    assert_true(plan_has(db, "SELECT id FROM item WHERE city = 'city3'", "Index(BY_CITY"));
    sqlite3_close(db);
}

static void test_unique_violation(void **state)
{
    (void)state;
    sqlite3 *db = NULL;
    assert_int_equal(cfdb_sql_set_index_build_limits(0, 0), 0);
    for (int attempt = 0; attempt < 4; attempt++) {   /* the same answer every time */
        /* a big store and a small one: both built online, so both name the duplicate */
        int rc = cfdb_sql_open(g_env.db, "/up", attempt % 2 ? "d" : "b", &db, err, sizeof err);
        assert_int_equal(rc, 2000);
        assert_null(db);
        if (!strstr(err, "UNIQUE index BY_CODE of ITEM cannot be built") || !strstr(err, "same key ('d"))
            fail_msg("message: %s", err);
    }
    printf("test_sql_upgrade: %s\n", err);
}

static atomic_bool g_stop;
static atomic_int g_drops;

static void *dropper(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_stop)) {
        char ans[256];
        if (api_server_control(&g_env.server, "drop", ans, sizeof ans) == 0)
            atomic_fetch_add(&g_drops, 1);
        usleep(3000);
    }
    return NULL;
}

/* The build under faults: commits answering commit_unknown_result (applied and not) and
 * connections dropped by another thread while the open builds; the indexes come out exact. */
static void test_build_under_faults(void **state)
{
    (void)state;
    char ans[256];
    assert_int_equal(cfdb_sql_set_index_build_limits(50, 0), 0);
    assert_int_equal(api_server_control(&g_env.server, "fail-commits 3 applied", ans, sizeof ans), 0);
    pthread_t th;
    atomic_store(&g_stop, false);
    assert_int_equal(pthread_create(&th, NULL, dropper, NULL), 0);
    while (atomic_load(&g_drops) == 0)   /* the first drop is in before the open */
        usleep(1000);
    sqlite3 *db = NULL;
    int rc = cfdb_sql_open(g_env.db, "/up", "c", &db, err, sizeof err);
    atomic_store(&g_stop, true);
    pthread_join(th, NULL);
    if (rc)
        fail_msg("open under faults: %s", err);
    /* whatever is left of the injected failures */
    assert_int_equal(api_server_control(&g_env.server, "fail-commits 0", ans, sizeof ans), 0);
    printf("test_sql_upgrade: %d drops during the build\n", atomic_load(&g_drops));
    expect(db, "SELECT cfdb_build_indexes()", "0\n");
    for (int city = 0; city < 7; city++) {
        char v[16];
        snprintf(v, sizeof v, "'city%d'", city);
        same_as_scan(db, "city", v, "BY_CITY");
    }
    expect(db, "SELECT count(*) FROM item WHERE city >= 'city0'", "1000\n");
    expect(db, "SELECT count(*) FROM item WHERE code >= 'c'", "1000\n");
    same_as_scan(db, "code", "'c999'", "BY_CODE");
    char *r = q(db, "INSERT INTO item VALUES (6000, 'c17', NULL, 0)");
    assert_non_null(strstr(r, "UNIQUE constraint failed: index BY_CODE of ITEM"));
    free(r);
    sqlite3_close(db);
    assert_int_equal(cfdb_sql_set_index_build_limits(0, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_online_build_on_open),
        cmocka_unit_test(test_unique_violation),
        cmocka_unit_test(test_build_under_faults),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
