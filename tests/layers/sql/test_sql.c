/* SPDX-License-Identifier: Apache-2.0 */
/* SQL on records (src/layers/sql) against a cfdb-server of its own: DDL into the catalog
 * (in fdb-relational's layout, checked key by key), then DML and queries through SQLite's
 * virtual tables — joins, GROUP BY, subqueries, bound parameters, plans onto the primary key
 * and indexes, unique refusals, transactions — and bad input refused with clear errors. */
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
#include "cfdb/sql.h"
#include "sql_test_util.h"

static sqlite3 *db;
static char err[512];

static void ddl_ok(const char *s)
{
    int rc = cfdb_sql_ddl(g_env.db, s, err, sizeof err);
    if (rc)
        fail_msg("DDL failed (%d): %s\n  for: %s", rc, err, s);
}

static void ddl_bad(const char *s, const char *needle)
{
    int rc = cfdb_sql_ddl(g_env.db, s, err, sizeof err);
    if (rc == 0)
        fail_msg("DDL accepted: %s", s);
    if (!strstr(err, needle))
        fail_msg("message '%s' lacks '%s'", err, needle);
}

/* the rows of a statement, compared with the expected text */
static void expect_in(sqlite3 *h, const char *sql, const char *rows)
{
    char *got = sqlt_query(h, sql, NULL);
    if (strcmp(got, rows) != 0)
        fail_msg("%s\n  expected: [%s]\n  got:      [%s]", sql, rows, got);
    free(got);
}

static void expect(const char *sql, const char *rows)
{
    char *got = sqlt_query(db, sql, NULL);
    if (strcmp(got, rows) != 0)
        fail_msg("%s\n  expected: [%s]\n  got:      [%s]", sql, rows, got);
    free(got);
}

static void expect_err(const char *sql, const char *needle)
{
    char *got = sqlt_query(db, sql, NULL);
    if (strncmp(got, "ERR", 3) != 0 || !strstr(got, needle))
        fail_msg("%s\n  expected an error with '%s', got [%s]", sql, needle, got);
    free(got);
}

static const char shop[] =
    "CREATE SCHEMA TEMPLATE shop "
    "CREATE TABLE customer (id BIGINT, name STRING NOT NULL, city STRING, age INTEGER, "
    "  PRIMARY KEY (id)) "
    "CREATE TABLE orders (cust BIGINT, seq INTEGER, amount BIGINT, sku STRING, "
    "  PRIMARY KEY (cust, seq)) "
    "CREATE INDEX by_city AS SELECT city, age FROM customer ORDER BY city, age "
    "CREATE UNIQUE INDEX by_sku ON orders (sku) "
    "CREATE INDEX by_amount AS SELECT amount FROM orders ORDER BY amount "
    "CREATE INDEX total AS SELECT cust, SUM(amount) FROM orders GROUP BY cust "
    "CREATE INDEX n_cust AS SELECT COUNT(*) FROM customer";

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
    if (db)
        sqlite3_close(db);
    return api_env_teardown();
}

static void test_catalog(void **state)
{
    (void)state;
    ddl_ok(shop);
    ddl_ok("CREATE DATABASE /test");
    ddl_bad("CREATE DATABASE /test", "already exists");
    ddl_bad("CREATE SCHEMA /nodb/s WITH TEMPLATE shop", "database /nodb does not exist");
    ddl_bad("CREATE SCHEMA /test/s WITH TEMPLATE nosuch", "schema template NOSUCH does not exist");
    ddl_ok("CREATE SCHEMA /test/s WITH TEMPLATE shop");
    ddl_bad("CREATE SCHEMA /test/s WITH TEMPLATE shop", "already exists");
    ddl_bad("DROP SCHEMA TEMPLATE shop", "used by schema /test/S");
    ddl_bad("CREATE SCHEMA TEMPLATE x CREATE TABLE t (a BIGINT)", "no PRIMARY KEY");
    ddl_bad("DROP DATABASE /nodb", "does not exist");
    ddl_ok("DROP DATABASE IF EXISTS /nodb");
    /* the catalog in fdb-relational's layout: /__SYS/__SYS/CATALOG = (null, null, 0), records
     * P + (1, (record type key, primary key...), 0) */
    static const uint8_t dbkey[] = { 0x00, 0x00, 0x14, 0x15, 0x01, 0x15, 0x01, 0x02, '/', 't',
                                     'e', 's', 't', 0x00, 0x14 };
    int present = 0, len = 0;
    char val[256];
    assert_int_equal(api_read_committed(dbkey, sizeof dbkey, &present, val, sizeof val, &len), 0);
    assert_true(present);
    /* the DATABASES union field (2) holding DATABASE_ID = "/test" */
    static const uint8_t dbval[] = { 0x12, 0x07, 0x0a, 0x05, '/', 't', 'e', 's', 't' };
    assert_int_equal(len, sizeof dbval);
    assert_memory_equal(val, dbval, sizeof dbval);
    /* the schema's record: (0, "/test", "S") */
    static const uint8_t skey[] = { 0x00, 0x00, 0x14, 0x15, 0x01, 0x14, 0x02, '/', 't', 'e', 's',
                                    't', 0x00, 0x02, 'S', 0x00, 0x14 };
    assert_int_equal(api_read_committed(skey, sizeof skey, &present, val, sizeof val, &len), 0);
    assert_true(present);
    assert_non_null(memmem(val, (size_t)len, "SHOP", 4));
    /* the template: (2, "SHOP", 1) holding the MetaData bytes */
    static const uint8_t tkey[] = { 0x00, 0x00, 0x14, 0x15, 0x01, 0x15, 0x02, 0x02, 'S', 'H', 'O',
                                    'P', 0x00, 0x15, 0x01, 0x14 };
    assert_int_equal(api_read_committed(tkey, sizeof tkey, &present, val, sizeof val, &len), 0);
    assert_true(present);
    /* and the catalog's own template, CATALOG_TEMPLATE version 1 */
    static const uint8_t ckey[] = { 0x00, 0x00, 0x14, 0x15, 0x01, 0x15, 0x02, 0x02, 'C', 'A', 'T',
                                    'A', 'L', 'O', 'G', '_', 'T', 'E', 'M', 'P', 'L', 'A', 'T',
                                    'E', 0x00, 0x15, 0x01, 0x14 };
    assert_int_equal(api_read_committed(ckey, sizeof ckey, &present, val, sizeof val, &len), 0);
    assert_true(present);
    ddl_bad("CREATE SCHEMA /test/gone WITH TEMPLATE shop extra", "unexpected 'extra'");
    assert_int_equal(cfdb_sql_open(g_env.db, "/test", "nosuch", &db, err, sizeof err),
                     2000);
    assert_non_null(strstr(err, "does not exist"));
    assert_int_equal(cfdb_sql_open(g_env.db, "/test", "s", &db, err, sizeof err), 0);
}

static void test_dml_queries(void **state)
{
    (void)state;
    expect("INSERT INTO customer VALUES (1, 'ann', 'paris', 31), (2, 'bob', 'oslo', 45), "
           "(3, 'cy', 'paris', 22), (4, 'di', NULL, NULL)", "");
    expect("INSERT INTO orders VALUES (1, 1, 100, 'a1'), (1, 2, 250, 'a2'), (2, 1, 75, 'b1'), "
           "(3, 1, 300, 'c1'), (3, 2, 20, 'c2')", "");
    expect("SELECT id, name, city, age FROM customer ORDER BY id",
           "1|ann|paris|31\n2|bob|oslo|45\n3|cy|paris|22\n4|di|NULL|NULL\n");
    expect("SELECT name FROM customer WHERE id = 3", "cy\n");
    expect("SELECT name FROM customer WHERE city = 'paris' ORDER BY age", "cy\nann\n");
    expect("SELECT name FROM customer WHERE city = 'paris' AND age > 25", "ann\n");
    expect("SELECT name FROM customer WHERE age < 40 ORDER BY name", "ann\ncy\n");
    expect("SELECT cust, seq FROM orders WHERE amount >= 100 ORDER BY amount DESC",
           "3|1\n1|2\n1|1\n");
    expect("SELECT c.name, sum(o.amount) FROM customer c JOIN orders o ON o.cust = c.id "
           "GROUP BY c.name ORDER BY 2 DESC", "ann|350\ncy|320\nbob|75\n");
    expect("SELECT name FROM customer WHERE id IN (SELECT cust FROM orders WHERE amount > 200) "
           "ORDER BY name", "ann\ncy\n");
    expect("SELECT name FROM customer WHERE id NOT IN (SELECT cust FROM orders) ", "di\n");
    expect("SELECT count(*), max(age), min(name) FROM customer", "4|45|ann\n");
    expect("SELECT id FROM customer WHERE id BETWEEN 2 AND 3 ORDER BY id DESC", "3\n2\n");
    expect("SELECT sku FROM orders WHERE cust = 1 ORDER BY seq DESC LIMIT 1 OFFSET 0", "a2\n");
    expect("SELECT id FROM customer ORDER BY id LIMIT 2 OFFSET 1", "2\n3\n");
    expect("SELECT id FROM customer WHERE city IS NULL", "4\n");
    /* bound parameters and a prepared statement run twice */
    const char *const p1[] = { "i:2", NULL };
    char *r = sqlt_query(db, "SELECT name FROM customer WHERE id = ?", p1);
    assert_string_equal(r, "bob\n");
    free(r);
    const char *const p2[] = { "t:paris", "i:30", NULL };
    r = sqlt_query(db, "SELECT name FROM customer WHERE city = ? AND age >= ?", p2);
    assert_string_equal(r, "ann\n");
    free(r);
    /* updates and deletes keep the indexes right */
    expect("UPDATE customer SET city = 'rome', age = age + 1 WHERE id = 1", "");
    expect("SELECT name FROM customer WHERE city = 'paris'", "cy\n");
    expect("SELECT name, age FROM customer WHERE city = 'rome'", "ann|32\n");
    expect("UPDATE orders SET amount = amount * 2 WHERE amount < 100", "");
    expect("SELECT cust, seq, amount FROM orders WHERE amount < 200 ORDER BY amount",
           "3|2|40\n1|1|100\n2|1|150\n");
    expect("DELETE FROM orders WHERE cust = 3 AND seq = 2", "");
    expect("SELECT count(*) FROM orders WHERE amount < 1000", "4\n");
    expect("SELECT sku FROM orders WHERE sku > 'a' ORDER BY sku", "a1\na2\nb1\nc1\n");
    /* a changed primary key moves the row */
    expect("UPDATE customer SET id = 40 WHERE id = 4", "");
    expect("SELECT id, name FROM customer WHERE id >= 4", "40|di\n");
    /* the same answers by either fetch method */
    for (int m = 0; m < 3; m++) {
        assert_int_equal(cfdb_sql_set_fetch_method(db, (cfdb_sql_fetch)m), 0);
        expect("SELECT id, name FROM customer WHERE city >= 'oslo' ORDER BY city",
               "2|bob\n3|cy\n1|ann\n");
    }
    /* aggregate indexes answer from their entries, maintained by every write above */
    expect("SELECT cfdb_index_value('TOTAL', 1), cfdb_index_value('TOTAL', 2), "
           "cfdb_index_value('TOTAL', 3), cfdb_index_value('TOTAL', 99)", "350|150|300|NULL\n");
    expect("SELECT cust, sum(amount) FROM orders GROUP BY cust", "1|350\n2|150\n3|300\n");
    expect("SELECT cfdb_index_value('N_CUST'), count(*) FROM customer", "4|4\n");
    expect_err("SELECT cfdb_index_value('BY_CITY')", "not an aggregate index");
    expect_err("SELECT cfdb_index_value('TOTAL')", "has 1 group columns, 0 given");
    expect("SELECT cfdb_fetch_method('SCAN_AND_FETCH')", "SCAN_AND_FETCH\n");
    expect_err("SELECT cfdb_fetch_method('FAST')", "cfdb_fetch_method");
}

static void test_plans(void **state)
{
    (void)state;
    char *r = sqlt_query(db, "EXPLAIN QUERY PLAN SELECT name FROM customer WHERE id = 3", NULL);
    assert_non_null(strstr(r, "Scan(CUSTOMER primary key [ID=?]) LOAD"));
    free(r);
    r = sqlt_query(db, "EXPLAIN QUERY PLAN SELECT name FROM customer WHERE city = 'x' AND age > 3", NULL);
    assert_non_null(strstr(r, "Index(BY_CITY [CITY=?, AGE>?])"));
    assert_non_null(strstr(r, "SCAN_AND_FETCH")); /* the fetch method set last */
    free(r);
    r = sqlt_query(db, "EXPLAIN QUERY PLAN SELECT city, age FROM customer WHERE city = 'x'", NULL);
    assert_non_null(strstr(r, "COVERING"));
    free(r);
    r = sqlt_query(db, "EXPLAIN QUERY PLAN SELECT * FROM orders ORDER BY amount DESC", NULL);
    if (!strstr(r, "Index(BY_AMOUNT) REVERSE"))
        fail_msg("plan: %s", r);
    assert_null(strstr(r, "TEMP B-TREE"));
    free(r);
    /* a bound parameter narrows the scan but SQLite checks it again (~) */
    r = sqlt_query(db, "EXPLAIN QUERY PLAN SELECT * FROM customer WHERE id = ?", NULL);
    assert_non_null(strstr(r, "[ID=?~]"));
    free(r);
    /* a value of another type than the column's widens the scan, SQLite decides */
    expect("SELECT id FROM customer WHERE id = '2'", "2\n");
    expect("SELECT id FROM customer WHERE id > 2.5 ORDER BY id", "3\n40\n");
    expect("SELECT id FROM customer WHERE name = 'cy'", "3\n");
}

/* a write statement and the number of rows it changed */
static void changes_in(sqlite3 *h, const char *sql, const char *const *params, int n)
{
    char *got = sqlt_query(h, sql, params);
    if (got[0])
        fail_msg("%s: [%s]", sql, got);
    free(got);
    if (sqlite3_changes(h) != n)
        fail_msg("%s: %d rows changed, not %d", sql, sqlite3_changes(h), n);
}

/* UPDATE and DELETE by a full primary key whose value is of another type than the key column's
 * (SQLite's comparison converts it): SQLite updates a row found by a unique plan in one pass,
 * taking the first row the scan returns, so that row must be the one (or none). */
static void test_other_typed_key_writes(void **state)
{
    (void)state;
    ddl_ok("CREATE SCHEMA TEMPLATE typed "
           "CREATE TABLE kv (k BIGINT, v BIGINT, PRIMARY KEY (k)) "
           "CREATE TABLE skv (s STRING, v BIGINT, PRIMARY KEY (s))");
    ddl_ok("CREATE SCHEMA /test/typed WITH TEMPLATE typed");
    sqlite3 *h;
    assert_int_equal(cfdb_sql_open(g_env.db, "/test", "typed", &h, err, sizeof err), 0);
    expect_in(h, "INSERT INTO kv VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (-6, 0)", "");
    expect_in(h, "INSERT INTO skv VALUES ('1', 0), ('2', 0), ('5', 0), ('05', 0)", "");
    /* an INTEGER key against text: numeric affinity, '-6' is -6 */
    changes_in(h, "UPDATE kv SET v = 11 WHERE k = '-6'", NULL, 1);
    changes_in(h, "UPDATE kv SET v = 12 WHERE k = ' 4'", NULL, 1);
    changes_in(h, "UPDATE kv SET v = 13 WHERE k = 2.0", NULL, 1);
    changes_in(h, "UPDATE kv SET v = 14 WHERE k = '3.0'", NULL, 1);
    /* values no integer equals */
    changes_in(h, "UPDATE kv SET v = 99 WHERE k = 2.5", NULL, 0);
    changes_in(h, "UPDATE kv SET v = 99 WHERE k = 'x'", NULL, 0);
    changes_in(h, "UPDATE kv SET v = 99 WHERE k = 9223372036854775808.0", NULL, 0);
    changes_in(h, "UPDATE kv SET v = 99 WHERE k = x'05'", NULL, 0);
    static const char *const p5[] = { "t:5", NULL };
    changes_in(h, "DELETE FROM kv WHERE k = ?", p5, 1);
    expect_in(h, "SELECT k, v FROM kv ORDER BY k", "-6|11\n1|0\n2|13\n3|14\n4|12\n");
    expect_in(h, "SELECT k FROM kv WHERE k = '4'", "4\n");
    /* a STRING key against a number: text affinity for a literal or parameter */
    changes_in(h, "UPDATE skv SET v = 21 WHERE s = 5", NULL, 1);
    static const char *const i2[] = { "i:2", NULL };
    changes_in(h, "UPDATE skv SET v = 22 WHERE s = ?", i2, 1);
    changes_in(h, "DELETE FROM skv WHERE s = 1", NULL, 1);
    expect_in(h, "SELECT s, v FROM skv ORDER BY s", "05|0\n2|22\n5|21\n");
    sqlite3_close(h);
}

static void test_unique_and_bad_input(void **state)
{
    (void)state;
    expect_err("INSERT INTO orders VALUES (9, 9, 1, 'a1')", "UNIQUE constraint failed: index BY_SKU");
    expect("SELECT count(*) FROM orders WHERE cust = 9", "0\n");
    expect_err("INSERT INTO customer VALUES (2, 'dup', NULL, NULL)", "UNIQUE constraint failed: CUSTOMER.ID");
    expect("INSERT OR REPLACE INTO customer VALUES (2, 'bob2', 'oslo', 46)", "");
    expect("SELECT name FROM customer WHERE id = 2", "bob2\n");
    expect("INSERT OR IGNORE INTO customer VALUES (2, 'bob3', 'oslo', 46)", "");
    expect("SELECT name FROM customer WHERE id = 2", "bob2\n");
    expect_err("UPDATE orders SET sku = 'a1' WHERE sku = 'b1'", "UNIQUE constraint failed");
    expect("SELECT sku FROM orders WHERE cust = 2", "b1\n");
    expect_err("INSERT INTO customer VALUES (7, NULL, NULL, NULL)", "NOT NULL constraint failed: CUSTOMER.NAME");
    expect_err("INSERT INTO customer VALUES (NULL, 'x', NULL, NULL)", "NOT NULL constraint failed: CUSTOMER.ID");
    expect_err("INSERT INTO customer VALUES (8, 'x', 'y', 'old')", "type mismatch: CUSTOMER.AGE is INTEGER");
    expect_err("INSERT INTO customer VALUES (8, 'x', 'y', 5000000000)", "out of INTEGER's range");
    expect_err("INSERT INTO customer VALUES (8, 42, 'y', 1)", "type mismatch: CUSTOMER.NAME is STRING");
    expect_err("INSERT INTO customer (id, nosuch) VALUES (8, 1)", "no column named nosuch");
    expect_err("SELECT nosuch FROM customer", "no such column");
    expect_err("SELEC * FROM customer", "syntax error");
    expect_err("SELECT * FROM nosuch", "no such table");
    /* a row over the Record Layer's 100,000 bytes (no ENABLE_LONG_ROWS) */
    expect_err("INSERT INTO customer VALUES (9, printf('%.200000c', 'x'), NULL, NULL)",
               "FoundationDB error 2103");
    expect("SELECT count(*) FROM customer WHERE id >= 7", "1\n");
    /* nothing of a failed multi-row statement stays */
    expect_err("INSERT INTO customer VALUES (10, 'ok', NULL, NULL), (11, NULL, NULL, NULL)", "NOT NULL");
    expect("SELECT count(*) FROM customer WHERE id IN (10, 11)", "0\n");
}

static void test_transactions(void **state)
{
    (void)state;
    expect("BEGIN", "");
    expect("INSERT INTO customer VALUES (20, 'tx', 'lima', 1)", "");
    expect("INSERT INTO orders VALUES (20, 1, 5, 'tx1')", "");
    expect("SELECT name FROM customer WHERE id = 20", "tx\n");
    expect("ROLLBACK", "");
    expect("SELECT count(*) FROM customer WHERE id = 20", "0\n");
    expect("SELECT count(*) FROM orders WHERE sku = 'tx1'", "0\n");
    expect("BEGIN", "");
    expect("INSERT INTO customer VALUES (21, 'tx', 'lima', 1)", "");
    expect("UPDATE customer SET age = 2 WHERE id = 21", "");
    expect("COMMIT", "");
    expect("SELECT age FROM customer WHERE city = 'lima'", "2\n");
    /* a conflicting writer: our read, their commit, our commit fails with 1020 */
    expect("BEGIN", "");
    expect("SELECT age FROM customer WHERE id = 21", "2\n");
    expect("UPDATE customer SET age = 3 WHERE id = 21", "");
    sqlite3 *other;
    assert_int_equal(cfdb_sql_open(g_env.db, "/test", "S", &other, err, sizeof err), 0);
    char *r = sqlt_query(other, "UPDATE customer SET age = 9 WHERE id = 21", NULL);
    assert_string_equal(r, "");
    free(r);
    r = sqlt_query(db, "COMMIT", NULL);
    assert_non_null(strstr(r, "FoundationDB error 1020"));
    free(r);
    assert_int_equal(cfdb_sql_last_error(db), 1020);
    free(sqlt_query(db, "ROLLBACK", NULL)); /* the failed COMMIT may have ended it already */
    expect("SELECT age FROM customer WHERE id = 21", "9\n");
    /* cfdb_sql_exec retries autocommit statements */
    char *msg = NULL;
    assert_int_equal(cfdb_sql_exec(db, "UPDATE customer SET age = age + 1 WHERE id = 21; "
                                       "UPDATE customer SET age = age + 1 WHERE id = 21", NULL,
                                   NULL, &msg), SQLITE_OK);
    expect("SELECT age FROM customer WHERE id = 21", "11\n");
    sqlite3_close(other);
    /* a commit the server fails (not applied): cfdb_sql_exec's loop runs the statement again,
     * the row and its index entries are there once */
    assert_int_equal(api_server_control(&g_env.server, "fail-commits 1 unapplied", NULL, 0), 0);
    msg = NULL;
    if (cfdb_sql_exec(db, "INSERT INTO orders VALUES (30, 1, 777, 'retry')", NULL, NULL, &msg) !=
        SQLITE_OK)
        fail_msg("retried insert failed: %s", msg);
    expect("SELECT cust, seq FROM orders WHERE sku = 'retry'", "30|1\n");
    expect("SELECT cust FROM orders WHERE amount = 777", "30\n");
    /* the same failure reaches a caller stepping by itself, with FoundationDB's code */
    assert_int_equal(api_server_control(&g_env.server, "fail-commits 1 unapplied", NULL, 0), 0);
    char *r2 = sqlt_query(db, "INSERT INTO orders VALUES (30, 2, 778, 'retry2')", NULL);
    if (strncmp(r2, "ERR", 3) != 0 || !strstr(r2, "FoundationDB error"))
        fail_msg("a failed commit gave [%s]", r2);
    free(r2);
    assert_true(cfdb_sql_last_error(db) != 0);
    expect("SELECT count(*) FROM orders WHERE sku = 'retry2'", "0\n");
    expect("SELECT count(*) FROM orders WHERE amount = 778", "0\n");
}

/* one page: rows as text, the last row's continuation into cont (blob) */
static char *page(const char *sql, const void *cont, int cont_len, void *next, int *next_len)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (cont)
        sqlite3_bind_blob(st, 1, cont, cont_len, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 1);
    char *out = calloc(1, 4096);
    int rc;
    *next_len = -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        strcat(out, (const char *)sqlite3_column_text(st, 0));
        strcat(out, ",");
        *next_len = sqlite3_column_bytes(st, 1);
        memcpy(next, sqlite3_column_blob(st, 1), (size_t)*next_len);
    }
    if (rc != SQLITE_DONE) {
        snprintf(out, 4096, "ERR %s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    return out;
}

static void test_continuations(void **state)
{
    (void)state;
    expect("INSERT INTO customer VALUES (50, 'p1', 'x', 1), (51, 'p2', 'x', 2), (52, 'p3', 'x', 3), "
           "(53, 'p4', 'x', 4), (54, 'p5', 'x', 5)", "");
    /* pages of two by the BY_CITY index, each in a transaction of its own */
    const char *q = "SELECT name, cfdb_continuation FROM customer WHERE city = 'x' "
                    "AND cfdb_continuation IS ? ORDER BY age LIMIT 2";
    const char *qe = "SELECT name, cfdb_continuation FROM customer WHERE city = 'x' "
                     "AND cfdb_continuation = ? ORDER BY age LIMIT 2";
    char *r = sqlt_query(db, "EXPLAIN QUERY PLAN SELECT name, cfdb_continuation FROM customer "
                             "WHERE city = 'x' AND cfdb_continuation = x'00' ORDER BY age LIMIT 2", NULL);
    assert_non_null(strstr(r, "FROM CONTINUATION"));
    assert_null(strstr(r, "TEMP B-TREE"));
    free(r);
    uint8_t c1[512], c2[512], c3[512];
    int l1, l2, l3;
    char *p = page(q, NULL, 0, c1, &l1);
    assert_string_equal(p, "p1,p2,");
    free(p);
    /* a row written between pages, after the position, is seen by the next page */
    expect("INSERT INTO customer VALUES (55, 'p2b', 'x', 2)", "");
    p = page(qe, c1, l1, c2, &l2);
    assert_string_equal(p, "p2b,p3,");
    free(p);
    p = page(qe, c2, l2, c3, &l3);
    assert_string_equal(p, "p4,p5,");
    free(p);
    uint8_t c4[512];
    int l4;
    p = page(qe, c3, l3, c4, &l4);
    assert_string_equal(p, "");
    free(p);
    /* a continuation of another query, and bytes that are none */
    uint8_t other[512];
    int lo;
    p = page("SELECT name, cfdb_continuation FROM customer WHERE cfdb_continuation IS ? LIMIT 1",
             NULL, 0, other, &lo);
    free(p);
    p = page(qe, other, lo, c4, &l4);
    if (strncmp(p, "ERR", 3) != 0 || !strstr(p, "not one of this query's continuations"))
        fail_msg("a foreign continuation gave [%s]", p);
    free(p);
    p = page(qe, "garbage", 7, c4, &l4);
    assert_true(strncmp(p, "ERR", 3) == 0);
    free(p);
    expect_err("SELECT name FROM customer WHERE cfdb_continuation = 5", "a BLOB from an earlier page");
    expect("DELETE FROM customer WHERE city = 'x'", "");
}

static void test_drop(void **state)
{
    (void)state;
    ddl_ok("CREATE SCHEMA /test/s2 WITH TEMPLATE shop");
    sqlite3 *d2;
    assert_int_equal(cfdb_sql_open(g_env.db, "/test", "s2", &d2, err, sizeof err), 0);
    char *r = sqlt_query(d2, "SELECT count(*) FROM customer", NULL);
    assert_string_equal(r, "0\n"); /* a schema of its own */
    free(r);
    sqlite3_close(d2);
    ddl_ok("DROP SCHEMA /test/s2");
    ddl_bad("DROP SCHEMA /test/s2", "does not exist");
    assert_int_not_equal(cfdb_sql_open(g_env.db, "/test", "s2", &d2, err, sizeof err), 0);
    /* a new template version upgrades the schema on open: a new index is built */
    ddl_ok("CREATE SCHEMA TEMPLATE shop "
           "CREATE TABLE customer (id BIGINT, name STRING NOT NULL, city STRING, age INTEGER, "
           "  PRIMARY KEY (id)) "
           "CREATE TABLE orders (cust BIGINT, seq INTEGER, amount BIGINT, sku STRING, "
           "  PRIMARY KEY (cust, seq)) "
           "CREATE INDEX by_city AS SELECT city, age FROM customer ORDER BY city, age "
           "CREATE UNIQUE INDEX by_sku ON orders (sku) "
           "CREATE INDEX by_amount AS SELECT amount FROM orders ORDER BY amount "
           "CREATE INDEX total AS SELECT cust, SUM(amount) FROM orders GROUP BY cust "
           "CREATE INDEX n_cust AS SELECT COUNT(*) FROM customer "
           "CREATE INDEX by_name ON customer (name)");
    assert_int_equal(cfdb_sql_open(g_env.db, "/test", "s", &d2, err, sizeof err), 0);
    r = sqlt_query(d2, "EXPLAIN QUERY PLAN SELECT id FROM customer WHERE name = 'cy'", NULL);
    assert_non_null(strstr(r, "Index(BY_NAME [NAME=?])"));
    free(r);
    r = sqlt_query(d2, "SELECT id FROM customer WHERE name = 'cy'", NULL);
    assert_string_equal(r, "3\n");
    free(r);
    sqlite3_close(d2);
    sqlite3_close(db);
    db = NULL;
    ddl_ok("DROP DATABASE /test");
    ddl_ok("DROP SCHEMA TEMPLATE shop");
    ddl_bad("DROP SCHEMA TEMPLATE shop", "does not exist");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog),
        cmocka_unit_test(test_dml_queries),
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_other_typed_key_writes),
        cmocka_unit_test(test_unique_and_bad_input),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_continuations),
        cmocka_unit_test(test_drop),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
