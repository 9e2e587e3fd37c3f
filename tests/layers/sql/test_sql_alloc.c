/* SPDX-License-Identifier: Apache-2.0 */
/* No heap allocation per row on cfdb's virtual-table path, against a cfdb-server of its own.
 *
 * Allocations are counted in the whole process (tests/api/alloc_count.h over
 * bench/malloc_count.c: SQLite's, the Record Layer's, the client's network thread's). Each
 * scan runs through one prepared statement with a bound upper bound, once for 10 rows and once
 * for 1,000 (the best of REPEAT runs each, after a warm-up): the difference divided by the 990
 * extra rows is what a row costs, and must stay under PER_ROW (a batch's allocations — a reply
 * arena, a mapped reply — spread over its rows stay far below it; one allocation per row is 1).
 *
 *   scan        statement                                          plan
 *   primary     SELECT id, name FROM t WHERE id >= 0 AND id < ?    records by primary key
 *   covering    SELECT grp, id FROM t WHERE grp >= 0 AND grp < ?   BY_GRP entries only
 *   remote      SELECT id, name, note ... grp >= 0 AND grp < ?     BY_GRP, USE_REMOTE_FETCH
 *   fetch       the same                                           BY_GRP, SCAN_AND_FETCH
 *
 * Sanitizer builds count nothing (alloc_counted() false): the scans run and each case skips,
 * as tests/allowed-skips.txt allows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../api/alloc_count.h"
#include "../../api/api_helpers.h"
#include "cfdb/sql.h"
#include "sql_test_util.h"

#define ROWS 1000
#define REPEAT 3
#define PER_ROW 0.05

static sqlite3 *db;

static void bind_row(sqlite3_stmt *st, int id)
{
    char name[128];
    snprintf(name, sizeof name, "name-%05d-%080d", id, 0);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, id);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, id % 2 ? "odd" : "even", -1, SQLITE_STATIC);
}

static int group_setup(void **state)
{
    (void)state;
    if (api_env_setup(NULL))
        return -1;
    static const char *const ddl[] = {
        "CREATE SCHEMA TEMPLATE alloc CREATE TABLE t (id BIGINT, grp INTEGER, name STRING, "
        "note STRING, PRIMARY KEY (id)) CREATE INDEX by_grp ON t (grp)",
        "CREATE DATABASE /alloc",
        "CREATE SCHEMA /alloc/s WITH TEMPLATE alloc",
        NULL,
    };
    if (sqlt_open_schema(g_env.db, ddl, "/alloc", "s", &db))
        return -1;
    return sqlt_insert_rows(db, "INSERT INTO t VALUES (?, ?, ?, ?)", ROWS, bind_row);
}

static int group_teardown(void **state)
{
    (void)state;
    if (db)
        sqlite3_close(db);
    return api_env_teardown();
}

/* one execution of st for ids below n: the allocations it made; checks the rows */
static uint64_t run_once(sqlite3_stmt *st, int n)
{
    uint64_t before = alloc_count();
    sqlite3_bind_int64(st, 1, n);
    int rows = 0, rc;
    int64_t sum = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sum += sqlite3_column_int64(st, 0);
        for (int i = 1; i < sqlite3_column_count(st); i++)
            if (sqlite3_column_type(st, i) == SQLITE_NULL)
                fail_msg("row %d: column %d is NULL", rows, i);
        (void)sqlite3_column_text(st, sqlite3_column_count(st) - 1);
        rows++;
    }
    sqlite3_reset(st);
    uint64_t after = alloc_count();
    if (rc != SQLITE_DONE)
        fail_msg("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
    if (rows != n || sum != (int64_t)n * (n - 1) / 2)
        fail_msg("%s: %d rows (sum %lld) for n = %d", sqlite3_sql(st), rows, (long long)sum, n);
    return after - before;
}

static uint64_t best_of(sqlite3_stmt *st, int n)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < REPEAT; i++) {
        uint64_t a = run_once(st, n);
        if (a < best)
            best = a;
    }
    return best;
}

static void per_row(const char *scan, const char *sql, const char *plan, cfdb_sql_fetch fetch)
{
    assert_int_equal(cfdb_sql_set_fetch_method(db, fetch), 0);
    char q[512];
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    char *r = sqlt_query(db, q, NULL);
    if (!strstr(r, plan))
        fail_msg("%s: plan lacks [%s]: %s", sql, plan, r);
    free(r);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL))
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    run_once(st, 10); /* warm-up: SQLite's and the client's caches */
    run_once(st, ROWS);
    uint64_t a10 = best_of(st, 10), a1000 = best_of(st, ROWS);
    sqlite3_finalize(st);
    if (!alloc_counted()) {
        printf("alloc %-9s not counted: sanitizer build, its malloc cannot be interposed\n", scan);
        skip();
        return;
    }
    assert_true(alloc_count_sees_malloc()); /* the counter is interposed: 0 would mean nothing */
    double per = ((double)a1000 - (double)a10) / (ROWS - 10);
    printf("alloc %-9s %llu allocations for 10 rows, %llu for %d: %.4f per row (at most %.2f)\n", scan,
           (unsigned long long)a10, (unsigned long long)a1000, ROWS, per, PER_ROW);
    if (per > PER_ROW)
        fail_msg("%s: %.4f heap allocations per row, over %.2f", scan, per, PER_ROW);
}

static void test_primary(void **state)
{
    (void)state;
    per_row("primary", "SELECT id, name FROM t WHERE id >= 0 AND id < ?",
            "Scan(T primary key [ID>=?, ID<?~])", CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK);
}

static void test_covering(void **state)
{
    (void)state;
    per_row("covering", "SELECT id, grp FROM t WHERE grp >= 0 AND grp < ?", "Index(BY_GRP [GRP>=?, GRP<?~]) COVERING",
            CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK);
}

static void test_remote_fetch(void **state)
{
    (void)state;
    per_row("remote", "SELECT id, name, note FROM t WHERE grp >= 0 AND grp < ?",
            "Index(BY_GRP [GRP>=?, GRP<?~]) USE_REMOTE_FETCH", CFDB_SQL_USE_REMOTE_FETCH);
}

static void test_scan_and_fetch(void **state)
{
    (void)state;
    per_row("fetch", "SELECT id, name, note FROM t WHERE grp >= 0 AND grp < ?",
            "Index(BY_GRP [GRP>=?, GRP<?~]) SCAN_AND_FETCH", CFDB_SQL_SCAN_AND_FETCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_primary),
        cmocka_unit_test(test_covering),
        cmocka_unit_test(test_remote_fetch),
        cmocka_unit_test(test_scan_and_fetch),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
