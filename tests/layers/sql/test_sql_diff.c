/* SPDX-License-Identifier: Apache-2.0 */
/* Differential test of the SQL layer: random schema templates, random rows, and thousands of
 * random statements — point and range predicates on indexed and non-indexed columns, NULLs,
 * IN lists, values of other types than the column's, ORDER BY (forward and reverse),
 * LIMIT/OFFSET, joins, GROUP BY and aggregates, and UPDATE/DELETE between them — run both on
 * cfdb SQL (virtual tables over Record Layer stores in a cfdb-server of its own) and on the
 * same data in plain in-memory SQLite tables; every answer must be identical.
 *
 * Seeded: CFDB_SQL_DIFF_SEED=<n> replays a run (the seed is printed first; CFDB_SQL_DIFF_LOG=1
 * prints every statement compared);
 * CFDB_SQL_DIFF_STATEMENTS=<n> sets the statements per schema (default 3000). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../api/api_helpers.h"
#include "cfdb/sql.h"
#include "sql_test_util.h"

static uint64_t rng, seed0;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

enum { T_BIGINT, T_INTEGER, T_STRING, T_BYTES, T_DOUBLE, T_BOOLEAN, T_FLOAT, T_NTYPES };
static const char *const ddl_type[] = { "BIGINT", "INTEGER", "STRING", "BYTES", "DOUBLE", "BOOLEAN", "FLOAT" };
static const char *const plain_type[] = { "INTEGER", "INTEGER", "TEXT", "BLOB", "REAL", "INTEGER", "REAL" };

typedef struct col {
    char name[8];
    int type;
} col;

typedef struct table {
    char name[8];
    col cols[8];
    int ncols;
    int npk;          /* the first npk columns are the primary key */
} table;

static table tabs[2];
static int ntabs;

/* a literal of a type (sometimes another type than asked, sometimes NULL) */
static void literal(char *out, size_t cap, int type, bool allow_null)
{
    static const char *const strs[] = { "''", "'a'", "'ab'", "'abc'", "'b'", "'ba'", "'z'",
                                        "'A'", "'\xc3\xa9'", "'a b'" };
    static const char *const blobs[] = { "x''", "x'00'", "x'0001'", "x'01'", "x'ff'", "x'7f80'" };
    uint32_t r = rnd(100);
    if (allow_null && r < 3) {
        snprintf(out, cap, "NULL");
        return;
    }
    if (r < 8) { /* another type than the column's */
        switch (rnd(4)) {
        case 0: snprintf(out, cap, "'%d'", (int)rnd(21) - 10); return;
        case 1: snprintf(out, cap, "%d.5", (int)rnd(21) - 10); return;
        case 2: snprintf(out, cap, "%d", (int)rnd(21) - 10); return;
        default: snprintf(out, cap, "%s", strs[rnd(10)]); return;
        }
    }
    switch (type) {
    case T_BIGINT:
        snprintf(out, cap, "%d", (int)rnd(41) - 20);
        break;
    case T_INTEGER:
        snprintf(out, cap, "%d", (int)rnd(41) - 20);
        break;
    case T_STRING:
        snprintf(out, cap, "%s", strs[rnd(10)]);
        break;
    case T_BYTES:
        snprintf(out, cap, "%s", blobs[rnd(6)]);
        break;
    case T_BOOLEAN:
        snprintf(out, cap, "%d", (int)rnd(2));
        break;
    default:
        snprintf(out, cap, "%g", ((int)rnd(41) - 20) / 4.0);
        break;
    }
}

static void value(char *out, size_t cap, int type, bool nullable)
{
    if (nullable && rnd(100) < 15) {
        snprintf(out, cap, "NULL");
        return;
    }
    /* rows hold values of their column's type only */
    static const char *const strs[] = { "''", "'a'", "'ab'", "'abc'", "'b'", "'ba'", "'z'",
                                        "'A'", "'\xc3\xa9'", "'a b'" };
    static const char *const blobs[] = { "x''", "x'00'", "x'0001'", "x'01'", "x'ff'", "x'7f80'" };
    switch (type) {
    case T_BIGINT:
    case T_INTEGER:
        snprintf(out, cap, "%d", (int)rnd(41) - 20);
        break;
    case T_STRING:
        snprintf(out, cap, "%s", strs[rnd(10)]);
        break;
    case T_BYTES:
        snprintf(out, cap, "%s", blobs[rnd(6)]);
        break;
    case T_BOOLEAN:
        snprintf(out, cap, "%d", (int)rnd(2));
        break;
    default:
        snprintf(out, cap, "%g", ((int)rnd(41) - 20) / 4.0);
        break;
    }
}

static sqlite3 *cf, *pl;
static long statements, row_mismatch_checks;

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* rows sorted (for statements whose order is not fully defined) */
static char *sorted(char *s)
{
    if (strncmp(s, "ERR", 3) == 0)
        return s;
    size_t n = 0, total = strlen(s);
    for (char *p = s; *p; p++)
        n += *p == '\n';
    char **lines = malloc((n + 1) * sizeof *lines);
    size_t k = 0;
    for (char *p = s, *q; *p; p = q + 1) {
        q = strchr(p, '\n');
        *q = 0;
        lines[k++] = p;
    }
    qsort(lines, k, sizeof *lines, cmp_lines);
    size_t len = total + 1;
    char *out = malloc(len + 1);
    out[0] = 0;
    size_t o = 0;
    for (size_t i = 0; i < k; i++) {
        size_t l = strlen(lines[i]);
        memcpy(out + o, lines[i], l);
        o += l;
        out[o++] = '\n';
    }
    out[o] = 0;
    free(lines);
    free(s);
    return out;
}

/* The statement before the one compared (a DML statement, for SELECT changes()). */
static char previous[2048];

static void both(const char *sql, bool ordered)
{
    statements++;
    if (getenv("CFDB_SQL_DIFF_LOG"))
        fprintf(stderr, "S %ld: %s\n", statements, sql);
    char *a = sqlt_query(cf, sql, NULL);
    char *b = sqlt_query(pl, sql, NULL);
    bool a_err = strncmp(a, "ERR", 3) == 0, b_err = strncmp(b, "ERR", 3) == 0;
    if (!ordered) {
        a = sorted(a);
        b = sorted(b);
    }
    if (a_err != b_err || (!a_err && strcmp(a, b) != 0)) {
        char eqp[2200];
        snprintf(eqp, sizeof eqp, "EXPLAIN QUERY PLAN %s", sql);
        char *plan = sqlt_query(cf, eqp, NULL);
        fail_msg("difference after %ld statements (seed %llu):\n  %s\n  cfdb:  [%s]\n  "
                 "sqlite: [%s]\n  plan: %s\n  after: %s", statements, (unsigned long long)seed0, sql, a, b,
                 plan, previous);
    }
    free(a);
    free(b);
    snprintf(previous, sizeof previous, "%s", sql);
}

static void exec_both(const char *sql)
{
    if (getenv("CFDB_SQL_DIFF_LOG"))
        fprintf(stderr, "E: %s\n", sql);
    char *a = sqlt_query(cf, sql, NULL);
    char *b = sqlt_query(pl, sql, NULL);
    if (strcmp(a, b) != 0)
        fail_msg("setup statement differs: %s\n  cfdb: [%s]\n  sqlite: [%s]", sql, a, b);
    free(a);
    free(b);
}

static void make_schema(int n, char *ddl, size_t cap)
{
    ntabs = 2;
    size_t o = (size_t)snprintf(ddl, cap, "CREATE SCHEMA TEMPLATE diff%d ", n);
    for (int t = 0; t < ntabs; t++) {
        table *tb = &tabs[t];
        snprintf(tb->name, sizeof tb->name, "T%d", t);
        tb->ncols = 3 + (int)rnd(4);
        tb->npk = 1 + (int)rnd(2);
        for (int c = 0; c < tb->ncols; c++) {
            snprintf(tb->cols[c].name, sizeof tb->cols[c].name, "C%d", c);
            /* primary key columns: integers or strings */
            tb->cols[c].type = c < tb->npk ? (rnd(3) == 0 ? T_STRING : (int)rnd(2)) : (int)rnd(T_NTYPES);
        }
        o += (size_t)snprintf(ddl + o, cap - o, "CREATE TABLE %s (", tb->name);
        for (int c = 0; c < tb->ncols; c++)
            o += (size_t)snprintf(ddl + o, cap - o, "%s %s, ", tb->cols[c].name, ddl_type[tb->cols[c].type]);
        o += (size_t)snprintf(ddl + o, cap - o, "PRIMARY KEY (");
        for (int c = 0; c < tb->npk; c++)
            o += (size_t)snprintf(ddl + o, cap - o, "%s%s", c ? ", " : "", tb->cols[c].name);
        o += (size_t)snprintf(ddl + o, cap - o, ")) ");
        /* one to three value indexes: one or two key columns, maybe an INCLUDE column */
        int nix = 1 + (int)rnd(3);
        for (int i = 0; i < nix; i++) {
            int k1 = (int)rnd((uint32_t)tb->ncols), k2 = (int)rnd((uint32_t)tb->ncols);
            int inc = (int)rnd((uint32_t)tb->ncols);
            o += (size_t)snprintf(ddl + o, cap - o, "CREATE INDEX %s_I%d ON %s (%s", tb->name, i,
                                  tb->name, tb->cols[k1].name);
            if (k2 != k1 && rnd(2))
                o += (size_t)snprintf(ddl + o, cap - o, ", %s", tb->cols[k2].name);
            else
                k2 = k1;
            o += (size_t)snprintf(ddl + o, cap - o, ")");
            if (inc != k1 && inc != k2 && rnd(2))
                o += (size_t)snprintf(ddl + o, cap - o, " INCLUDE (%s)", tb->cols[inc].name);
            o += (size_t)snprintf(ddl + o, cap - o, " ");
        }
    }
}

static void plain_tables(void)
{
    for (int t = 0; t < ntabs; t++) {
        table *tb = &tabs[t];
        char sql[1024];
        size_t o = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE %s (", tb->name);
        for (int c = 0; c < tb->ncols; c++)
            o += (size_t)snprintf(sql + o, sizeof sql - o, "%s %s, ", tb->cols[c].name, plain_type[tb->cols[c].type]);
        o += (size_t)snprintf(sql + o, sizeof sql - o, "PRIMARY KEY (");
        for (int c = 0; c < tb->npk; c++)
            o += (size_t)snprintf(sql + o, sizeof sql - o, "%s%s", c ? ", " : "", tb->cols[c].name);
        snprintf(sql + o, sizeof sql - o, "))");
        char *r = sqlt_query(pl, sql, NULL);
        assert_string_equal(r, "");
        free(r);
    }
}

static void insert_rows(int t, int n)
{
    table *tb = &tabs[t];
    for (int i = 0; i < n; i++) {
        char sql[1024], v[64];
        size_t o = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (", tb->name);
        for (int c = 0; c < tb->ncols; c++) {
            value(v, sizeof v, tb->cols[c].type, c >= tb->npk);
            o += (size_t)snprintf(sql + o, sizeof sql - o, "%s%s", c ? ", " : "", v);
        }
        snprintf(sql + o, sizeof sql - o, ")");
        char *b = sqlt_query(pl, sql, NULL);
        char *a = sqlt_query(cf, sql, NULL);
        /* a duplicate primary key is refused by both */
        if ((strncmp(a, "ERR", 3) == 0) != (strncmp(b, "ERR", 3) == 0))
            fail_msg("insert differs: %s\n  cfdb: [%s]\n  sqlite: [%s]", sql, a, b);
        free(a);
        free(b);
    }
}

/* a predicate on table tb (alias al, may be empty) */
static size_t predicate(char *out, size_t cap, const table *tb, const char *al)
{
    const col *c = &tb->cols[rnd((uint32_t)tb->ncols)];
    char l1[64], l2[64];
    literal(l1, sizeof l1, c->type, true);
    literal(l2, sizeof l2, c->type, false);
    const char *dot = al[0] ? "." : "";
    switch (rnd(11)) {
    case 0: case 1: case 2:
        return (size_t)snprintf(out, cap, "%s%s%s = %s", al, dot, c->name, l1);
    case 3:
        return (size_t)snprintf(out, cap, "%s%s%s < %s", al, dot, c->name, l1);
    case 4:
        return (size_t)snprintf(out, cap, "%s%s%s >= %s", al, dot, c->name, l1);
    case 5:
        return (size_t)snprintf(out, cap, "%s%s%s > %s AND %s%s%s <= %s", al, dot, c->name, l1, al, dot, c->name, l2);
    case 6:
        return (size_t)snprintf(out, cap, "%s%s%s BETWEEN %s AND %s", al, dot, c->name, l1, l2);
    case 7:
        return (size_t)snprintf(out, cap, "%s%s%s IN (%s, %s)", al, dot, c->name, l1, l2);
    case 8:
        return (size_t)snprintf(out, cap, "%s%s%s IS %sNULL", al, dot, c->name, rnd(2) ? "NOT " : "");
    case 9: {
        const col *d = &tb->cols[rnd((uint32_t)tb->ncols)];
        literal(l2, sizeof l2, d->type, false);
        return (size_t)snprintf(out, cap, "%s%s%s = %s AND %s%s%s > %s", al, dot, c->name, l1, al, dot, d->name, l2);
    }
    default: {
        const col *d = &tb->cols[rnd((uint32_t)tb->ncols)];
        literal(l2, sizeof l2, d->type, false);
        return (size_t)snprintf(out, cap, "(%s%s%s < %s OR %s%s%s = %s)", al, dot, c->name, l1, al, dot, d->name, l2);
    }
    }
}

/* ORDER BY some columns then the whole primary key (a total order) */
static size_t order_by(char *out, size_t cap, const table *tb, const char *al)
{
    const char *dot = al[0] ? "." : "";
    const char *dir = rnd(2) ? " DESC" : "";
    size_t o = (size_t)snprintf(out, cap, " ORDER BY ");
    int first = (int)rnd((uint32_t)tb->ncols);
    o += (size_t)snprintf(out + o, cap - o, "%s%s%s%s", al, dot, tb->cols[first].name, dir);
    for (int c = 0; c < tb->npk; c++)
        if (c != first)
            o += (size_t)snprintf(out + o, cap - o, ", %s%s%s%s", al, dot, tb->cols[c].name, rnd(4) ? dir : "");
    return o;
}

static void random_statement(void)
{
    char sql[2048];
    const table *tb = &tabs[rnd((uint32_t)ntabs)];
    uint32_t kind = rnd(100);
    size_t o;
    if (kind < 45) { /* a filtered select, ordered or not, maybe paged */
        o = (size_t)snprintf(sql, sizeof sql, "SELECT * FROM %s", tb->name);
        if (rnd(5)) {
            o += (size_t)snprintf(sql + o, sizeof sql - o, " WHERE ");
            o += predicate(sql + o, sizeof sql - o, tb, "");
        }
        bool ordered = rnd(2);
        if (ordered) {
            o += order_by(sql + o, sizeof sql - o, tb, "");
            if (rnd(2))
                o += (size_t)snprintf(sql + o, sizeof sql - o, " LIMIT %u OFFSET %u", rnd(10), rnd(5));
        }
        both(sql, ordered);
    } else if (kind < 60) { /* projections of indexed columns (covering scans) */
        const col *c = &tb->cols[rnd((uint32_t)tb->ncols)];
        char l[64];
        literal(l, sizeof l, c->type, false);
        snprintf(sql, sizeof sql, "SELECT %s, %s FROM %s WHERE %s %s %s", c->name, tb->cols[0].name,
                 tb->name, c->name, rnd(2) ? ">" : "=", l);
        both(sql, false);
    } else if (kind < 72) { /* aggregates, grouped or not */
        const col *g = &tb->cols[rnd((uint32_t)tb->ncols)];
        const col *a = &tb->cols[rnd((uint32_t)tb->ncols)];
        o = (size_t)snprintf(sql, sizeof sql, "SELECT %s, count(*), count(%s), min(%s), max(%s), "
                             "typeof(sum(%s)) FROM %s", g->name, a->name, a->name, a->name, a->name, tb->name);
        if (rnd(2)) {
            o += (size_t)snprintf(sql + o, sizeof sql - o, " WHERE ");
            o += predicate(sql + o, sizeof sql - o, tb, "");
        }
        snprintf(sql + o, sizeof sql - o, " GROUP BY %s", g->name);
        both(sql, false);
    } else if (kind < 80) { /* a join on columns of one type */
        const table *u = &tabs[1 - (tb - tabs)];
        int ci = (int)rnd((uint32_t)tb->ncols), cj = -1;
        for (int k = 0; k < u->ncols; k++)
            if (u->cols[k].type == tb->cols[ci].type && (cj < 0 || rnd(2)))
                cj = k;
        if (cj < 0)
            cj = 0;
        o = (size_t)snprintf(sql, sizeof sql, "SELECT a.%s, b.%s, a.%s FROM %s a JOIN %s b ON a.%s = b.%s",
                             tb->cols[0].name, u->cols[0].name, tb->cols[ci].name, tb->name, u->name,
                             tb->cols[ci].name, u->cols[cj].name);
        if (rnd(2)) {
            o += (size_t)snprintf(sql + o, sizeof sql - o, " WHERE ");
            o += predicate(sql + o, sizeof sql - o, tb, "a");
        }
        both(sql, false);
    } else if (kind < 85) { /* a subquery */
        const table *u = &tabs[1 - (tb - tabs)];
        o = (size_t)snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE %s IN (SELECT %s FROM %s WHERE ",
                             tb->name, tb->cols[0].name, u->cols[0].name, u->name);
        o += predicate(sql + o, sizeof sql - o, u, "");
        snprintf(sql + o, sizeof sql - o, ")");
        both(sql, true);
    } else if (kind < 93) { /* an update */
        const col *c = &tb->cols[tb->npk + (int)rnd((uint32_t)(tb->ncols - tb->npk))];
        char v[64];
        value(v, sizeof v, c->type, true);
        o = (size_t)snprintf(sql, sizeof sql, "UPDATE %s SET %s = %s WHERE ", tb->name, c->name, v);
        predicate(sql + o, sizeof sql - o, tb, "");
        both(sql, true);
        both("SELECT changes()", true);
    } else if (kind < 97) { /* a delete */
        o = (size_t)snprintf(sql, sizeof sql, "DELETE FROM %s WHERE ", tb->name);
        predicate(sql + o, sizeof sql - o, tb, "");
        both(sql, true);
        both("SELECT changes()", true);
    } else { /* new rows */
        insert_rows((int)(tb - tabs), 5);
    }
}

static int group_setup(void **state)
{
    (void)state;
    const char *s = getenv("CFDB_SQL_DIFF_SEED");
    rng = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) * 2654435761u;
    if (!rng)
        rng = 1;
    seed0 = rng;
    printf("test_sql_diff: CFDB_SQL_DIFF_SEED=%llu\n", (unsigned long long)rng);
    fflush(stdout);
    return api_env_setup(NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

static void test_diff(void **state)
{
    (void)state;
    const char *ns = getenv("CFDB_SQL_DIFF_STATEMENTS");
    long per_schema = ns ? strtol(ns, NULL, 10) : 3000;
    char err[512];
    assert_int_equal(cfdb_sql_ddl(g_env.db, "CREATE DATABASE /diff", err, sizeof err), 0);
    for (int n = 0; n < 3; n++) {
        char ddl[8192], sql[128];
        make_schema(n, ddl, sizeof ddl);
        printf("test_sql_diff: schema %d: %s\n", n, ddl);
        fflush(stdout);
        if (cfdb_sql_ddl(g_env.db, ddl, err, sizeof err))
            fail_msg("template: %s\n  %s", err, ddl);
        snprintf(sql, sizeof sql, "CREATE SCHEMA /diff/s%d WITH TEMPLATE diff%d", n, n);
        assert_int_equal(cfdb_sql_ddl(g_env.db, sql, err, sizeof err), 0);
        snprintf(sql, sizeof sql, "S%d", n);
        if (cfdb_sql_open(g_env.db, "/diff", sql, &cf, err, sizeof err))
            fail_msg("open: %s", err);
        if (getenv("CFDB_SQL_DIFF_FETCH"))
            cfdb_sql_set_fetch_method(cf, (cfdb_sql_fetch)atoi(getenv("CFDB_SQL_DIFF_FETCH")));
        assert_int_equal(sqlite3_open(":memory:", &pl), SQLITE_OK);
        plain_tables();
        for (int t = 0; t < ntabs; t++)
            insert_rows(t, 120);
        both("SELECT * FROM T0", false);
        both("SELECT * FROM T1", false);
        for (long i = 0; i < per_schema; i++)
            random_statement();
        /* the indexes agree with the records after all the writes: each index scanned in full */
        both("SELECT * FROM T0", false);
        both("SELECT * FROM T1", false);
        exec_both("SELECT 1");
        sqlite3_close(cf);
        sqlite3_close(pl);
    }
    printf("test_sql_diff: %ld statements compared\n", statements);
    (void)row_mismatch_checks;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
