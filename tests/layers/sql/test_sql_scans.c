/* SPDX-License-Identifier: Apache-2.0 */
/* What SQL's scans ask of the cluster, against a cfdb-server of its own whose control port
 * counts the requests and rows it served (status: mapped_requests, read_rows):
 *
 *  - a 1,010-row index scan with USE_REMOTE_FETCH through SQL sends as many get_mapped_range
 *    requests (one per batch; ~200-byte index keys make it several) as the same scan by the
 *    Record Layer called directly;
 *  - LIMIT / OFFSET pushdown (sql_limit.c): the plan (EXPLAIN QUERY PLAN's idxStr) says
 *    "LIMIT n [OFFSET m]" exactly when every constraint is consumed by the scan and the scan
 *    gives SQLite's order, not with a residual filter, a sort, a bound parameter SQLite checks
 *    again or an IN list, nor on a scan that also returns other (intermingled) tables' records;
 *    the answers equal the rows of the same query without LIMIT, sliced (UNION ALL arms too,
 *    where SQLite carries the unused OFFSET from one arm to the next); and a pushed scan makes
 *    the server return at most LIMIT + OFFSET index entries or 2 (LIMIT + OFFSET) records (a
 *    record scan with a limit reads in ITERATOR mode, whose batches at most double), where the
 *    same scan with a residual filter reads them all. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../api/api_helpers.h"
#include "cfdb/records/cursor.h"
#include "cfdb/sql.h"
#include "sql_catalog.h"
#include "sql_test_util.h"

#define ROWS 1000   /* in group 7 */
#define OTHERS 10   /* in group 8 */

static sqlite3 *db;
static char err[512];

static unsigned long long status(const char *name)
{
    unsigned long long v = 0;
    if (api_server_status(&g_env.server, name, &v))
        fail_msg("no %s in the server's status", name);
    return v;
}

/* names: odd ids start with 'o', even ones with 'e'; ~200 bytes so that a scan of BY_NAME
 * takes several batches. Notes: 'odd' or 'even' (no index). */
static void row_name(char *out, size_t cap, int id)
{
    snprintf(out, cap, "%c%05d-%0190d", id % 2 ? 'o' : 'e', id, 0);
}

static void bind_row(sqlite3_stmt *st, int id)
{
    char name[256];
    row_name(name, sizeof name, id);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, id < ROWS ? 7 : 8);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, id % 2 ? "odd" : "even", -1, SQLITE_STATIC);
}

static int group_setup(void **state)
{
    (void)state;
    if (api_env_setup(NULL))
        return -1;
    static const char *const ddl[] = {
        "CREATE SCHEMA TEMPLATE scans CREATE TABLE item (id BIGINT, grp INTEGER, name STRING, "
        "note STRING, PRIMARY KEY (id)) CREATE INDEX by_grp ON item (grp) "
        "CREATE INDEX by_name ON item (name)",
        "CREATE DATABASE /scans",
        "CREATE SCHEMA /scans/s WITH TEMPLATE scans",
        NULL,
    };
    if (sqlt_open_schema(g_env.db, ddl, "/scans", "s", &db))
        return -1;
    return sqlt_insert_rows(db, "INSERT INTO item VALUES (?, ?, ?, ?)", ROWS + OTHERS, bind_row);
}

static int group_teardown(void **state)
{
    (void)state;
    if (db)
        sqlite3_close(db);
    return api_env_teardown();
}

static char *plan_of(const char *sql)
{
    char q[1024];
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    return sqlt_query(db, q, NULL);
}

/* ---- remote fetch: one get_mapped_range request per batch, through SQL as directly ---- */

static void test_remote_fetch_requests_equal(void **state)
{
    (void)state;
    assert_int_equal(cfdb_sql_set_fetch_method(db, CFDB_SQL_USE_REMOTE_FETCH), 0);
    const char *q = "SELECT id, note FROM item WHERE name >= 'e' AND name < 'p'";
    char *r = plan_of(q);
    if (!strstr(r, "Index(BY_NAME [NAME>=?, NAME<?]) USE_REMOTE_FETCH"))
        fail_msg("plan: %s", r);
    free(r);
    unsigned long long m0 = status("mapped_requests");
    r = sqlt_query(db, q, NULL);
    unsigned long long m1 = status("mapped_requests");
    size_t lines = 0;
    for (const char *p = r; *p; p++)
        lines += *p == '\n';
    free(r);
    assert_int_equal(lines, ROWS + OTHERS);

    /* the same scan by the Record Layer: the schema's store as cfdb_sql_open finds it */
    sql_catalog *cat;
    assert_int_equal(sql_catalog_new(&cat, err, sizeof err), 0);
    cfdb_arena a;
    cfdb_arena_init(&a);
    FDBTransaction *tr = api_tr();
    sql_schema_info info;
    assert_int_equal(sql_catalog_load_schema(cat, tr, &a, "/scans", "S", &info, err, sizeof err), 0);
    cfdb_rl_metadata *md;
    cfdb_pb_error pe = { 0 };
    assert_int_equal(cfdb_rl_metadata_from_proto(info.metadata.ptr, info.metadata.len, &md, &pe), 0);
    cfdb_rl_store *st;
    assert_int_equal(cfdb_rl_store_open(tr, md, info.prefix, CFDB_RL_OPEN, &st), 0);
    cfdb_tuple lo, hi;
    cfdb_tuple_init(&lo, &a);
    cfdb_tuple_init(&hi, &a);
    assert_int_equal(cfdb_tuple_add_string(&lo, "e", 1), 0);
    assert_int_equal(cfdb_tuple_add_string(&hi, "p", 1), 0);
    cfdb_rl_range range = { &lo, &hi, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_EXCLUSIVE };
    cfdb_rl_scan_props props = { .fetch = CFDB_RL_USE_REMOTE_FETCH };
    cfdb_rl_cursor *c;
    assert_int_equal(cfdb_rl_scan_index_records(st, tr, cfdb_rl_index_by_name(md, "BY_NAME"), &range,
                                                (cfdb_bytes){ 0 }, &props, &c),
                     0);
    cfdb_arena row;
    cfdb_arena_init(&row);
    size_t n = 0;
    for (;;) {
        cfdb_arena_reset(&row);
        cfdb_rl_item item;
        bool has;
        assert_int_equal(cfdb_rl_cursor_next(c, &row, &item, &has), 0);
        if (!has)
            break;
        assert_non_null(item.record);
        n++;
    }
    unsigned long long m2 = status("mapped_requests");
    assert_int_equal(n, ROWS + OTHERS);
    assert_int_equal(cfdb_rl_cursor_fetch_used(c), CFDB_RL_USE_REMOTE_FETCH);
    printf("get_mapped_range requests for %d rows: SQL %llu, Record Layer %llu (its cursor: %llu)\n", ROWS + OTHERS,
           m1 - m0, m2 - m1, (unsigned long long)cfdb_rl_cursor_requests(c));
    assert_true(m2 - m1 > 1); /* several batches */
    assert_int_equal(m1 - m0, m2 - m1);
    assert_int_equal(m2 - m1, cfdb_rl_cursor_requests(c));
    cfdb_rl_cursor_free(c);
    cfdb_arena_free(&row);
    cfdb_rl_store_free(st);
    fdb_transaction_destroy(tr);
    cfdb_rl_metadata_free(md);
    cfdb_arena_free(&a);
    sql_catalog_free(cat);
    assert_int_equal(cfdb_sql_set_fetch_method(db, CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK), 0);
}

/* ---- LIMIT / OFFSET pushdown ---- */

static void expect_plan(const char *sql, const char *has, bool pushed)
{
    char *r = plan_of(sql);
    if (!strstr(r, has))
        fail_msg("%s\n  plan lacks [%s]: %s", sql, has, r);
    if (!pushed && strstr(r, " LIMIT"))
        fail_msg("%s\n  LIMIT pushed although SQLite filters or sorts after the scan: %s", sql, r);
    free(r);
}

static void test_limit_plans(void **state)
{
    (void)state;
    assert_int_equal(cfdb_sql_set_fetch_method(db, CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK), 0);
    /* pushed: every constraint consumed, the scan's order is the answer's */
    expect_plan("SELECT id FROM item LIMIT 5", "Scan(ITEM primary key) LIMIT 5", true);
    expect_plan("SELECT id FROM item WHERE id >= 100 AND id < 900 LIMIT 4 OFFSET 7",
                "Scan(ITEM primary key [ID>=?, ID<?]) LIMIT 4 OFFSET 7", true);
    expect_plan("SELECT id, name FROM item WHERE grp = 7 ORDER BY id LIMIT 5 OFFSET 10",
                "Index(BY_GRP [GRP=?]) USE_REMOTE_FETCH_WITH_FALLBACK ORDERED LIMIT 5 OFFSET 10", true);
    expect_plan("SELECT id FROM item WHERE grp = 7 ORDER BY id DESC LIMIT ? OFFSET ?",
                "REVERSE COVERING ORDERED LIMIT ? OFFSET ?", true);
    /* not pushed: a residual filter (a constraint the scan does not use, a value SQLite checks
     * again), a sort, an IN list */
    expect_plan("SELECT id FROM item WHERE note = 'odd' LIMIT 5", "Scan(ITEM primary key)", false);
    expect_plan("SELECT id FROM item WHERE grp = 7 AND note = 'odd' ORDER BY id LIMIT 5",
                "Index(BY_GRP [GRP=?])", false);
    expect_plan("SELECT id FROM item WHERE grp = ? LIMIT 5", "[GRP=?~]", false);
    expect_plan("SELECT id FROM item WHERE grp = 7 ORDER BY note, id LIMIT 5", "TEMP B-TREE", false);
    expect_plan("SELECT id FROM item WHERE id IN (1, 2, 3) LIMIT 2", "Scan(ITEM primary key [ID=?", false);
}

static void expect_rows(sqlite3 *h, const char *sql, const char *const *params, const char *want)
{
    char *got = sqlt_query(h, sql, params);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n  expected: [%.300s]\n  got:      [%.300s]", sql, want, got);
    free(got);
}

/* rows [offset, offset + limit) of a result (limit < 0: to the end) */
static char *slice(const char *rows, long offset, long limit)
{
    const char *p = rows;
    for (long i = 0; i < offset && *p; i++)
        p = strchr(p, '\n') + 1;
    const char *e = p;
    for (long i = 0; (limit < 0 || i < limit) && *e; i++)
        e = strchr(e, '\n') + 1;
    return strndup(p, (size_t)(e - p));
}

/* the query with LIMIT / OFFSET gives the rows of the query without them, sliced */
static void expect_slice(const char *base, long offset, long limit, const char *const *params)
{
    char q[1024];
    snprintf(q, sizeof q, "%s LIMIT %ld OFFSET %ld", base, limit, offset);
    char *all = sqlt_query(db, base, params);
    char *want = slice(all, offset, limit);
    expect_rows(db, q, params, want);
    free(all);
    free(want);
}

static void test_limit_results(void **state)
{
    (void)state;
    expect_slice("SELECT id FROM item", 0, 5, NULL);
    expect_slice("SELECT id FROM item", 1003, 20, NULL); /* past the end */
    expect_slice("SELECT id FROM item WHERE id >= 100 AND id < 900", 7, 4, NULL);
    expect_slice("SELECT id, name FROM item WHERE grp = 7 ORDER BY id", 10, 5, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 7 ORDER BY id DESC", 2, 3, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 7 ORDER BY id", 995, -1, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 7 ORDER BY id", 5000, 5, NULL);
    /* the residual and sorted cases, where SQLite alone applies the LIMIT */
    expect_slice("SELECT id FROM item WHERE note = 'odd'", 0, 5, NULL);
    expect_slice("SELECT id FROM item WHERE note = 'odd'", 3, 5, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 7 AND note = 'odd' ORDER BY id", 3, 5, NULL);
    expect_slice("SELECT id FROM item WHERE name LIKE 'o%'", 3, 5, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 7 ORDER BY note, id DESC", 1, 4, NULL);
    expect_slice("SELECT id FROM item WHERE grp = ? ORDER BY id", 2, 3, (const char *const[]){ "i:8", NULL });
    /* a compound SELECT: each arm gets the LIMIT and what remains of the OFFSET */
    expect_slice("SELECT id FROM item WHERE grp = 8 UNION ALL SELECT id FROM item WHERE grp = 8 ORDER BY 1", 12, 5, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 8 UNION ALL SELECT id FROM item WHERE grp = 8", 12, 5, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 8 UNION ALL SELECT id FROM item WHERE grp = 8", 3, 5, NULL);
    expect_slice("SELECT id FROM item WHERE grp = 8 UNION ALL SELECT id FROM item WHERE grp = 8", 8, 5, NULL);
    /* bound LIMIT and OFFSET */
    expect_rows(db, "SELECT id FROM item WHERE grp = 7 ORDER BY id LIMIT ? OFFSET ?",
                (const char *const[]){ "i:3", "i:10", NULL }, "10\n11\n12\n");
    expect_rows(db, "SELECT id FROM item WHERE grp = 8 ORDER BY id LIMIT ? OFFSET ?",
                (const char *const[]){ "i:-1", "i:-4", NULL },
                "1000\n1001\n1002\n1003\n1004\n1005\n1006\n1007\n1008\n1009\n");
    /* a point read by primary key after an OFFSET: no row */
    expect_rows(db, "SELECT id FROM item WHERE id = 3 LIMIT 1 OFFSET 1", NULL, "");
    expect_rows(db, "SELECT id FROM item WHERE id = 3 LIMIT 1 OFFSET 0", NULL, "3\n");
}

/* intermingled tables share the primary key range: a record scan of one skips the other's
 * records after the Record Layer's limit would have counted them, so no pushdown */
static void test_limit_intermingled(void **state)
{
    (void)state;
    static const char *const ddl[] = {
        "CREATE SCHEMA TEMPLATE mixed CREATE TABLE x (id BIGINT, PRIMARY KEY (id)) "
        "CREATE TABLE y (id BIGINT, PRIMARY KEY (id)) WITH OPTIONS (INTERMINGLE_TABLES = true)",
        "CREATE SCHEMA /scans/m WITH TEMPLATE mixed",
        NULL,
    };
    sqlite3 *m;
    assert_int_equal(sqlt_open_schema(g_env.db, ddl, "/scans", "m", &m), 0);
    expect_rows(m, "INSERT INTO x VALUES (0), (2), (4), (6)", NULL, "");
    expect_rows(m, "INSERT INTO y VALUES (1), (3), (5), (7)", NULL, "");
    char *r = sqlt_query(m, "EXPLAIN QUERY PLAN SELECT id FROM x LIMIT 3", NULL);
    if (!strstr(r, "Scan(X primary key)") || strstr(r, " LIMIT"))
        fail_msg("plan: %s", r);
    free(r);
    expect_rows(m, "SELECT id FROM x LIMIT 3", NULL, "0\n2\n4\n");
    expect_rows(m, "SELECT id FROM y LIMIT 2 OFFSET 1", NULL, "3\n5\n");
    sqlite3_close(m);
}

/* rows the server's range and mapped range reads returned while sql ran */
static unsigned long long rows_read(const char *sql, const char *want)
{
    unsigned long long before = status("read_rows");
    char *r = sqlt_query(db, sql, NULL);
    unsigned long long n = status("read_rows") - before;
    if (strcmp(r, want) != 0)
        fail_msg("%s\n  expected: [%s]\n  got:      [%s]", sql, want, r);
    free(r);
    return n;
}

static void test_limit_bounds_reads(void **state)
{
    (void)state;
    /* what a statement reads besides its scan (opening the store) */
    unsigned long long base = rows_read("SELECT id FROM item WHERE grp = 99 ORDER BY id LIMIT 5", "");
    /* an index scan: LIMIT + OFFSET entries, SQLite skips the first 10 */
    unsigned long long ix = rows_read("SELECT id FROM item WHERE grp = 7 ORDER BY id LIMIT 5 OFFSET 10",
                                      "10\n11\n12\n13\n14\n");
    /* a record scan: LIMIT + OFFSET records, in ITERATOR batches */
    unsigned long long pk = rows_read("SELECT id FROM item LIMIT 5 OFFSET 10", "10\n11\n12\n13\n14\n");
    /* the same index scan with a residual filter: SQLite applies the LIMIT */
    unsigned long long resid = rows_read("SELECT id FROM item WHERE grp = 7 AND note = 'odd' ORDER BY id "
                                         "LIMIT 5 OFFSET 10",
                                         "21\n23\n25\n27\n29\n");
    printf("rows read: base %llu, index LIMIT 5 OFFSET 10: %llu, records LIMIT 5 OFFSET 10: %llu, "
           "with a residual filter: %llu\n", base, ix, pk, resid);
    assert_true(ix >= base && ix - base <= 15);
    assert_true(pk >= base && pk - base <= 30);
    assert_true(resid >= base && resid - base >= ROWS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remote_fetch_requests_equal),
        cmocka_unit_test(test_limit_plans),
        cmocka_unit_test(test_limit_results),
        cmocka_unit_test(test_limit_intermingled),
        cmocka_unit_test(test_limit_bounds_reads),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
