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
 *    equal to full scans and the unique one is enforced;
 *  - an index another session is building (a live heartbeat of the Record Layer's indexer)
 *    does not fail the open: it is not planned until built. */
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
#include <sys/time.h>
#include <unistd.h>

#include "../../api/api_helpers.h"
#include "cfdb/arena.h"
#include "cfdb/sql.h"
#include "cfdb/tuple.h"
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

/* P + (9, index name, 7, uuid) = IndexBuildHeartbeat of another session, an hour ahead (the
 * Record Layer takes a heartbeat younger than its 10 s lease, up to a day ahead, as live),
 * or cleared. */
static void other_heartbeat(const char *schema, const char *index, bool set)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_tuple t;
    cfdb_tuple_init(&t, &a);
    static const uint8_t uuid[16] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47, 0x88,
                                      0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01 };
    assert_int_equal(cfdb_tuple_add_cstr(&t, "/up"), 0);
    assert_int_equal(cfdb_tuple_add_cstr(&t, schema), 0);
    assert_int_equal(cfdb_tuple_add_int(&t, 9), 0);
    assert_int_equal(cfdb_tuple_add_cstr(&t, index), 0);
    assert_int_equal(cfdb_tuple_add_int(&t, 7), 0);
    assert_int_equal(cfdb_tuple_add_uuid(&t, uuid), 0);
    cfdb_bytes key;
    assert_int_equal(cfdb_tuple_pack(&a, (cfdb_bytes){ NULL, 0 }, &t, &key), 0);
    /* info = "BY_RECORDS" (1), createTimeMilliseconds (2), heartbeatTimeMilliseconds (3) */
    uint8_t v[64];
    size_t n = 0;
    v[n++] = 0x0a;
    v[n++] = 10;
    memcpy(v + n, "BY_RECORDS", 10);
    n += 10;
    struct timeval tv;
    gettimeofday(&tv, NULL);   /* epoch milliseconds, as Java's currentTimeMillis */
    uint64_t ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
    for (int field = 2; field <= 3; field++) {
        uint64_t x = field == 2 ? ms : ms + 3600000;
        v[n++] = (uint8_t)(field << 3);
        do {
            v[n++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
            x >>= 7;
        } while (x);
    }
    FDBTransaction *tr = api_tr();
    for (;;) {
        if (set)
            fdb_transaction_set(tr, key.ptr, (int)key.len, v, (int)n);
        else
            fdb_transaction_clear(tr, key.ptr, (int)key.len);
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
    cfdb_arena_free(&a);
}

/* An index another session is building (its live heartbeat): the open goes on without it
 * and does not plan it, cfdb_build_indexes says who holds it; once that session is gone
 * the build runs. */
static void test_index_built_elsewhere(void **state)
{
    (void)state;
    assert_int_equal(cfdb_sql_set_index_build_limits(0, 0), 0);
    ddl_ok("CREATE SCHEMA TEMPLATE busy CREATE TABLE t (id BIGINT, v BIGINT, PRIMARY KEY (id))");
    ddl_ok("CREATE SCHEMA /up/e WITH TEMPLATE busy");
    sqlite3 *db;
    assert_int_equal(cfdb_sql_open(g_env.db, "/up", "e", &db, err, sizeof err), 0);
    assert_int_equal(cfdb_sql_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    for (int i = 1; i <= 300; i++) {
        char sql[96];
        snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%d, %d)", i, i % 10);
        assert_int_equal(cfdb_sql_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    assert_int_equal(cfdb_sql_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    ddl_ok("CREATE SCHEMA TEMPLATE busy CREATE TABLE t (id BIGINT, v BIGINT, PRIMARY KEY (id)) "
           "CREATE INDEX by_v ON t (v)");
    /* one batch, then the other session's heartbeat (the upgrade clears an index's build
     * bookkeeping, so it comes after) */
    assert_int_equal(cfdb_sql_set_index_build_limits(100, 1), 0);
    assert_int_equal(cfdb_sql_open(g_env.db, "/up", "e", &db, err, sizeof err), 0);
    sqlite3_close(db);
    assert_int_equal(cfdb_sql_set_index_build_limits(0, 0), 0);
    other_heartbeat("E", "BY_V", true);
    if (cfdb_sql_open(g_env.db, "/up", "e", &db, err, sizeof err))
        fail_msg("open while another session builds: %s", err);
    assert_false(plan_has(db, "SELECT id FROM t WHERE v = 3", "BY_V"));
    expect(db, "SELECT count(*) FROM t WHERE v = 3", "30\n");
    char *r = q(db, "SELECT cfdb_build_indexes()");
    if (!strstr(r, "building index BY_V of T: another index build holds it (a live indexer)"))
        fail_msg("cfdb_build_indexes: %s", r);
    free(r);
    other_heartbeat("E", "BY_V", false);
    expect(db, "SELECT cfdb_build_indexes()", "2\n");
    assert_true(plan_has(db, "SELECT id FROM t WHERE v = 3", "Index(BY_V [V=?])"));
    expect(db, "SELECT count(*) FROM t WHERE v = 3", "30\n");
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_online_build_on_open),
        cmocka_unit_test(test_unique_violation),
        cmocka_unit_test(test_build_under_faults),
        cmocka_unit_test(test_index_built_elsewhere),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
