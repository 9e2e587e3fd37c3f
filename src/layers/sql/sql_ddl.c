/* SPDX-License-Identifier: Apache-2.0 */
/* The DDL of fdb-relational's dialect (fdb-relational-core/src/main/antlr/RelationalParser.g4:
 * createStatement, templateClause, tableDefinition, columnDefinition, primaryKeyDefinition,
 * indexDefinition, optionsClause, dropStatement), read by hand into sql_ddl. Queries and DML
 * are SQLite's; only these statements are parsed here:
 *
 *   CREATE SCHEMA TEMPLATE t
 *       CREATE TABLE x (col type [NOT NULL | NULL], ..., PRIMARY KEY (col, ...))
 *       CREATE [UNIQUE] INDEX i AS SELECT a, b, c FROM x [ORDER BY a, b]
 *       CREATE INDEX i AS SELECT COUNT(*) | COUNT(c) | SUM(c) | MAX_EVER(c) | MIN_EVER(c)
 *                          FROM x [GROUP BY g, ...] [WITH ATTRIBUTES LEGACY_EXTREMUM_EVER]
 *       CREATE [UNIQUE] INDEX i ON x (a [ASC], b) [INCLUDE (c, d)]
 *     [WITH OPTIONS (ENABLE_LONG_ROWS = true, INTERMINGLE_TABLES = false, STORE_ROW_VERSIONS = true)]
 *   CREATE DATABASE /path
 *   CREATE SCHEMA /path/name WITH TEMPLATE t
 *   DROP DATABASE [IF EXISTS] /path
 *   DROP SCHEMA TEMPLATE [IF EXISTS] t
 *   DROP SCHEMA [IF EXISTS] /path/name
 *
 * Unquoted identifiers are folded to upper case (fdb-relational's SemanticAnalyzer
 * normalization); "quoted" ones are kept. Identifiers must be valid protobuf names
 * ([A-Za-z_][A-Za-z0-9_]*) since tables and columns become messages and fields. Types:
 * BOOLEAN, INTEGER, BIGINT, FLOAT, DOUBLE, STRING, BYTES. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cfdb/errors.h"
#include "sql_internal.h"

void sql_errf(char *err, size_t cap, const char *fmt, ...)
{
    if (!err || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

typedef enum tok_kind { T_END = 0, T_IDENT, T_QIDENT, T_NUMBER, T_PATH, T_PUNCT, T_STRING } tok_kind;

typedef struct tok {
    tok_kind kind;
    const char *p;
    size_t n;
    size_t pos;
} tok;

typedef struct parser {
    cfdb_arena *a;
    const char *s;
    size_t len, i;
    tok t;           /* current token */
    char *err;
    size_t errcap;
    int rc;
} parser;

static int fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *p, const char *fmt, ...)
{
    if (p->rc)
        return p->rc;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sql_errf(p->err, p->errcap, "DDL error at offset %zu: %s", p->t.pos, msg);
    p->rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
    return p->rc;
}

static int oom(parser *p)
{
    if (!p->rc) {
        sql_errf(p->err, p->errcap, "out of memory");
        p->rc = CFDB_ERR_OUT_OF_MEMORY;
    }
    return p->rc;
}

static bool ident_start(int c) { return isalpha(c) || c == '_'; }
static bool ident_char(int c) { return isalnum(c) || c == '_' || c == '$'; }

static void next(parser *p)
{
    if (p->rc) {
        p->t.kind = T_END;
        return;
    }
    const char *s = p->s;
    for (;;) {
        while (p->i < p->len && isspace((unsigned char)s[p->i]))
            p->i++;
        if (p->i + 1 < p->len && s[p->i] == '-' && s[p->i + 1] == '-') {
            while (p->i < p->len && s[p->i] != '\n')
                p->i++;
            continue;
        }
        if (p->i + 1 < p->len && s[p->i] == '/' && s[p->i + 1] == '*') {
            size_t j = p->i + 2;
            while (j + 1 < p->len && !(s[j] == '*' && s[j + 1] == '/'))
                j++;
            if (j + 1 >= p->len) {
                p->t.pos = p->i;
                fail(p, "unterminated comment");
                p->t.kind = T_END;
                return;
            }
            p->i = j + 2;
            continue;
        }
        break;
    }
    p->t.pos = p->i;
    p->t.p = s + p->i;
    if (p->i >= p->len) {
        p->t.kind = T_END;
        p->t.n = 0;
        return;
    }
    unsigned char c = (unsigned char)s[p->i];
    size_t j = p->i;
    if (ident_start(c)) {
        while (j < p->len && ident_char((unsigned char)s[j]))
            j++;
        p->t.kind = T_IDENT;
    } else if (isdigit(c)) {
        while (j < p->len && isdigit((unsigned char)s[j]))
            j++;
        p->t.kind = T_NUMBER;
    } else if (c == '"' || c == '`' || c == '\'') {
        char q = (char)c;
        j++;
        while (j < p->len && s[j] != q)
            j++;
        if (j >= p->len) {
            fail(p, "unterminated quoted %s", q == '\'' ? "string" : "identifier");
            p->t.kind = T_END;
            return;
        }
        j++;
        p->t.kind = q == '\'' ? T_STRING : T_QIDENT;
    } else if (c == '/') {
        j++;
        while (j < p->len && (ident_char((unsigned char)s[j]) || s[j] == '/' || s[j] == '-' ||
                              s[j] == '.'))
            j++;
        p->t.kind = T_PATH;
    } else {
        j++;
        p->t.kind = T_PUNCT;
    }
    p->t.n = j - p->i;
    p->i = j;
}

static bool is_kw(const parser *p, const char *kw)
{
    size_t n = strlen(kw);
    return p->t.kind == T_IDENT && p->t.n == n && strncasecmp(p->t.p, kw, n) == 0;
}

static bool accept_kw(parser *p, const char *kw)
{
    if (!is_kw(p, kw))
        return false;
    next(p);
    return true;
}

static int expect_kw(parser *p, const char *kw)
{
    if (accept_kw(p, kw))
        return 0;
    if (p->t.kind == T_END)
        return fail(p, "expected %s, found the end of the statement", kw);
    return fail(p, "expected %s, found '%.*s'", kw, (int)(p->t.n > 40 ? 40 : p->t.n), p->t.p);
}

static bool is_punct(const parser *p, char c)
{
    return p->t.kind == T_PUNCT && p->t.p[0] == c;
}

static bool accept_punct(parser *p, char c)
{
    if (!is_punct(p, c))
        return false;
    next(p);
    return true;
}

static int expect_punct(parser *p, char c)
{
    if (accept_punct(p, c))
        return 0;
    if (p->t.kind == T_END)
        return fail(p, "expected '%c', found the end of the statement", c);
    return fail(p, "expected '%c', found '%.*s'", c, (int)(p->t.n > 40 ? 40 : p->t.n), p->t.p);
}

/* An identifier: unquoted folded to upper case, quoted kept; a valid protobuf name. */
static const char *ident(parser *p, const char *what)
{
    if (p->rc)
        return NULL;
    if (p->t.kind != T_IDENT && p->t.kind != T_QIDENT) {
        if (p->t.kind == T_END)
            fail(p, "expected %s name, found the end of the statement", what);
        else
            fail(p, "expected %s name, found '%.*s'", what, (int)(p->t.n > 40 ? 40 : p->t.n),
                 p->t.p);
        return NULL;
    }
    const char *src = p->t.p;
    size_t n = p->t.n;
    bool quoted = p->t.kind == T_QIDENT;
    if (quoted) {
        src++;
        n -= 2;
    }
    if (n == 0 || n > SQL_MAX_IDENT) {
        fail(p, "%s name of %zu characters (1 to %d)", what, n, SQL_MAX_IDENT);
        return NULL;
    }
    if (!ident_start((unsigned char)src[0])) {
        fail(p, "%s name '%.*s' is not a valid protobuf name", what, (int)n, src);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)src[i]) && src[i] != '_') {
            fail(p, "%s name '%.*s' is not a valid protobuf name", what, (int)n, src);
            return NULL;
        }
    }
    char *out = cfdb_arena_alloc(p->a, n + 1);
    if (!out) {
        oom(p);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = quoted ? src[i] : (char)toupper((unsigned char)src[i]);
    out[n] = 0;
    next(p);
    return out;
}

/* A database path: /a/b/c (each part non-empty). */
static const char *path(parser *p)
{
    if (p->rc)
        return NULL;
    if (p->t.kind != T_PATH) {
        fail(p, "expected a path starting with '/'");
        return NULL;
    }
    if (p->t.n < 2 || p->t.n > SQL_MAX_PATH || p->t.p[p->t.n - 1] == '/') {
        fail(p, "bad path '%.*s'", (int)(p->t.n > 60 ? 60 : p->t.n), p->t.p);
        return NULL;
    }
    for (size_t i = 1; i < p->t.n; i++) {
        if (p->t.p[i] == '/' && p->t.p[i - 1] == '/') {
            fail(p, "bad path '%.*s' (empty part)", (int)(p->t.n > 60 ? 60 : p->t.n), p->t.p);
            return NULL;
        }
    }
    char *out = cfdb_arena_alloc(p->a, p->t.n + 1);
    if (!out) {
        oom(p);
        return NULL;
    }
    memcpy(out, p->t.p, p->t.n);
    out[p->t.n] = 0;
    next(p);
    return out;
}

/* Growable arrays in the arena. */
static void *grow(parser *p, void *arr, uint32_t n, uint32_t *cap, size_t elem, uint32_t max,
                  const char *what)
{
    if (n >= max) {
        fail(p, "more than %u %s", max, what);
        return NULL;
    }
    if (n < *cap)
        return arr;
    uint32_t nc = *cap ? *cap * 2 : 8;
    void *na = cfdb_arena_alloc(p->a, nc * elem);
    if (!na) {
        oom(p);
        return NULL;
    }
    if (n)
        memcpy(na, arr, n * elem);
    *cap = nc;
    return na;
}

static const char *const type_names[] = { "BOOLEAN", "INTEGER", "BIGINT", "FLOAT",
                                          "DOUBLE",  "STRING",  "BYTES" };

const char *sql_type_name(sql_type t)
{
    return (unsigned)t < sizeof type_names / sizeof *type_names ? type_names[t] : "?";
}

static const sql_table *find_table(const sql_template *t, const char *name)
{
    for (uint32_t i = 0; i < t->ntables; i++)
        if (strcmp(t->tables[i].name, name) == 0)
            return &t->tables[i];
    return NULL;
}

enum { NO_COLUMN = -1 };

/* A column's position, NO_COLUMN when the table has none of that name. */
static int col_index(const sql_table *t, const char *name)
{
    for (uint32_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return (int)i;
    return NO_COLUMN;
}

static int parse_table(parser *p, sql_template *tm)
{
    sql_table tb = { 0 };
    uint32_t ccap = 0;
    tb.name = ident(p, "table");
    if (p->rc)
        return p->rc;
    if (find_table(tm, tb.name))
        return fail(p, "table %s defined twice", tb.name);
    if (expect_punct(p, '('))
        return p->rc;
    bool have_pk = false;
    for (;;) {
        if (is_kw(p, "PRIMARY")) {
            next(p);
            if (expect_kw(p, "KEY") || expect_punct(p, '('))
                return p->rc;
            if (have_pk)
                return fail(p, "table %s has two primary keys", tb.name);
            have_pk = true;
            uint32_t pcap = 0;
            do {
                const char *c = ident(p, "primary key column");
                if (p->rc)
                    return p->rc;
                int ci = col_index(&tb, c);
                if (ci < 0)
                    return fail(p, "primary key column %s is not a column of %s", c, tb.name);
                for (uint32_t k = 0; k < tb.npk; k++)
                    if (tb.pk[k] == (uint32_t)ci)
                        return fail(p, "primary key column %s named twice", c);
                tb.pk = grow(p, tb.pk, tb.npk, &pcap, sizeof *tb.pk, SQL_MAX_COLUMNS,
                             "primary key columns");
                if (!tb.pk)
                    return p->rc;
                tb.pk[tb.npk++] = (uint32_t)ci;
            } while (accept_punct(p, ','));
            if (expect_punct(p, ')'))
                return p->rc;
        } else if (is_kw(p, "SINGLE")) {
            return fail(p, "SINGLE ROW ONLY tables are not supported");
        } else {
            sql_column c = { 0 };
            c.name = ident(p, "column");
            if (p->rc)
                return p->rc;
            if (col_index(&tb, c.name) >= 0)
                return fail(p, "column %s defined twice in %s", c.name, tb.name);
            if (have_pk)
                return fail(p, "column %s after the PRIMARY KEY clause", c.name);
            if (p->t.kind != T_IDENT)
                return fail(p, "expected a type for column %s", c.name);
            bool found = false;
            for (unsigned k = 0; k < sizeof type_names / sizeof *type_names; k++) {
                if (is_kw(p, type_names[k])) {
                    c.type = (sql_type)k;
                    found = true;
                    break;
                }
            }
            if (!found)
                return fail(p, "unknown type '%.*s' for column %s (BOOLEAN, INTEGER, BIGINT, "
                               "FLOAT, DOUBLE, STRING, BYTES)",
                            (int)(p->t.n > 40 ? 40 : p->t.n), p->t.p, c.name);
            next(p);
            if (is_kw(p, "ARRAY"))
                return fail(p, "ARRAY columns are not supported (column %s)", c.name);
            if (accept_kw(p, "NOT")) {
                if (expect_kw(p, "NULL"))
                    return p->rc;
                c.not_null = true;
            } else {
                accept_kw(p, "NULL");
            }
            tb.cols = grow(p, tb.cols, tb.ncols, &ccap, sizeof *tb.cols, SQL_MAX_COLUMNS,
                           "columns in a table");
            if (!tb.cols)
                return p->rc;
            tb.cols[tb.ncols++] = c;
        }
        if (accept_punct(p, ','))
            continue;
        if (expect_punct(p, ')'))
            return p->rc;
        break;
    }
    if (!have_pk)
        return fail(p, "table %s has no PRIMARY KEY", tb.name);
    if (tb.ncols == 0)
        return fail(p, "table %s has no columns", tb.name);
    uint32_t cap = tm->ntables;
    sql_table *nt = cfdb_arena_alloc(p->a, (tm->ntables + 1) * sizeof *nt);
    if (!nt)
        return oom(p);
    (void)cap;
    if (tm->ntables)
        memcpy(nt, tm->tables, tm->ntables * sizeof *nt);
    nt[tm->ntables++] = tb;
    tm->tables = nt;
    return 0;
}

static int name_list(parser *p, const char ***out, uint32_t *n, const char *what)
{
    uint32_t cap = 0;
    do {
        const char *c = ident(p, what);
        if (p->rc)
            return p->rc;
        *out = grow(p, (void *)*out, *n, &cap, sizeof **out, SQL_MAX_COLUMNS, "index columns");
        if (!*out)
            return p->rc;
        (*out)[(*n)++] = c;
    } while (accept_punct(p, ','));
    return 0;
}

static bool in_list(const char *const *l, uint32_t n, const char *s)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(l[i], s) == 0)
            return true;
    return false;
}

static int check_index(parser *p, const sql_template *tm, const sql_index *ix)
{
    const sql_table *tb = find_table(tm, ix->table);
    if (!tb)
        return fail(p, "index %s: unknown table %s (tables are defined before their indexes)",
                    ix->name, ix->table);
    for (uint32_t i = 0; i < ix->nkeys; i++) {
        if (col_index(tb, ix->keys[i]) < 0)
            return fail(p, "index %s: unknown column %s in %s", ix->name, ix->keys[i], tb->name);
        if (in_list(ix->keys, i, ix->keys[i]))
            return fail(p, "index %s: column %s named twice", ix->name, ix->keys[i]);
    }
    for (uint32_t i = 0; i < ix->nvalues; i++) {
        if (col_index(tb, ix->values[i]) < 0)
            return fail(p, "index %s: unknown column %s in %s", ix->name, ix->values[i],
                        tb->name);
        if (in_list(ix->values, i, ix->values[i]) || in_list(ix->keys, ix->nkeys, ix->values[i]))
            return fail(p, "index %s: column %s named twice", ix->name, ix->values[i]);
    }
    if (ix->agg_col) {
        int ci = col_index(tb, ix->agg_col);
        if (ci < 0)
            return fail(p, "index %s: unknown column %s in %s", ix->name, ix->agg_col, tb->name);
        sql_type t = tb->cols[ci].type;
        if (ix->kind != SQL_IX_COUNT_NOT_NULL && t != SQL_INTEGER && t != SQL_BIGINT)
            return fail(p, "index %s: %s aggregates need an INTEGER or BIGINT column, %s is %s",
                        ix->name, ix->kind == SQL_IX_SUM ? "SUM" : "MAX_EVER/MIN_EVER",
                        ix->agg_col, sql_type_name(t));
    }
    if (ix->kind == SQL_IX_VALUE && ix->nkeys == 0)
        return fail(p, "index %s has no key columns", ix->name);
    for (uint32_t i = 0; i < tm->nindexes; i++)
        if (strcmp(tm->indexes[i].name, ix->name) == 0)
            return fail(p, "index %s defined twice", ix->name);
    return 0;
}

static int parse_index(parser *p, sql_template *tm, bool unique)
{
    sql_index ix = { 0 };
    ix.unique = unique;
    ix.name = ident(p, "index");
    if (p->rc)
        return p->rc;
    if (accept_kw(p, "ON")) {
        ix.table = ident(p, "table");
        if (expect_punct(p, '('))
            return p->rc;
        uint32_t cap = 0;
        do {
            const char *c = ident(p, "index column");
            if (p->rc)
                return p->rc;
            if (is_kw(p, "DESC"))
                return fail(p, "index %s: descending index columns are not supported", ix.name);
            accept_kw(p, "ASC");
            ix.keys = grow(p, (void *)ix.keys, ix.nkeys, &cap, sizeof *ix.keys, SQL_MAX_COLUMNS,
                           "index columns");
            if (!ix.keys)
                return p->rc;
            ix.keys[ix.nkeys++] = c;
        } while (accept_punct(p, ','));
        if (expect_punct(p, ')'))
            return p->rc;
        if (accept_kw(p, "INCLUDE")) {
            if (expect_punct(p, '(') || name_list(p, &ix.values, &ix.nvalues, "INCLUDE column") ||
                expect_punct(p, ')'))
                return p->rc;
        }
    } else {
        if (expect_kw(p, "AS") || expect_kw(p, "SELECT"))
            return p->rc;
        static const struct {
            const char *kw;
            sql_index_kind kind;
        } aggs[] = { { "COUNT", SQL_IX_COUNT }, { "SUM", SQL_IX_SUM },
                     { "MAX_EVER", SQL_IX_MAX_EVER }, { "MIN_EVER", SQL_IX_MIN_EVER } };
        const char **sel = NULL;
        uint32_t nsel = 0, scap = 0;
        bool agg = false;
        do {
            bool is_agg = false;
            for (unsigned k = 0; k < sizeof aggs / sizeof *aggs; k++) {
                if (is_kw(p, aggs[k].kw)) {
                    /* an aggregate only when followed by '(' */
                    size_t save_i = p->i;
                    tok save_t = p->t;
                    next(p);
                    if (!is_punct(p, '(')) {
                        p->i = save_i;
                        p->t = save_t;
                        break;
                    }
                    next(p);
                    if (agg)
                        return fail(p, "index %s: one aggregate per index", ix.name);
                    agg = is_agg = true;
                    ix.kind = aggs[k].kind;
                    if (ix.kind == SQL_IX_COUNT && accept_punct(p, '*')) {
                        /* COUNT(*) */
                    } else {
                        if (ix.kind == SQL_IX_COUNT)
                            ix.kind = SQL_IX_COUNT_NOT_NULL;
                        ix.agg_col = ident(p, "aggregated column");
                    }
                    if (expect_punct(p, ')'))
                        return p->rc;
                    break;
                }
            }
            if (p->rc)
                return p->rc;
            if (!is_agg) {
                const char *c = ident(p, "selected column");
                if (p->rc)
                    return p->rc;
                sel = grow(p, (void *)sel, nsel, &scap, sizeof *sel, SQL_MAX_COLUMNS,
                           "selected columns");
                if (!sel)
                    return p->rc;
                sel[nsel++] = c;
            }
        } while (accept_punct(p, ','));
        if (expect_kw(p, "FROM"))
            return p->rc;
        ix.table = ident(p, "table");
        if (p->rc)
            return p->rc;
        if (is_kw(p, "WHERE"))
            return fail(p, "index %s: filtered (WHERE) indexes are not supported", ix.name);
        if (agg) {
            if (unique)
                return fail(p, "index %s: an aggregate index cannot be UNIQUE", ix.name);
            const char **group = NULL;
            uint32_t ngroup = 0;
            if (accept_kw(p, "GROUP")) {
                if (expect_kw(p, "BY") || name_list(p, &group, &ngroup, "GROUP BY column"))
                    return p->rc;
            }
            for (uint32_t i = 0; i < nsel; i++)
                if (!in_list(group, ngroup, sel[i]))
                    return fail(p, "index %s: selected column %s is not in GROUP BY", ix.name,
                                sel[i]);
            ix.keys = group;
            ix.nkeys = ngroup;
            if (accept_kw(p, "WITH")) {
                if (expect_kw(p, "ATTRIBUTES") || expect_kw(p, "LEGACY_EXTREMUM_EVER"))
                    return p->rc;
                ix.legacy_extremum = true;
            }
        } else {
            if (is_kw(p, "GROUP"))
                return fail(p, "index %s: GROUP BY without an aggregate", ix.name);
            if (accept_kw(p, "ORDER")) {
                if (expect_kw(p, "BY"))
                    return p->rc;
                uint32_t cap = 0;
                do {
                    const char *c = ident(p, "ORDER BY column");
                    if (p->rc)
                        return p->rc;
                    if (is_kw(p, "DESC"))
                        return fail(p, "index %s: descending index columns are not supported",
                                    ix.name);
                    accept_kw(p, "ASC");
                    if (!in_list(sel, nsel, c))
                        return fail(p, "index %s: ORDER BY column %s is not selected", ix.name,
                                    c);
                    ix.keys = grow(p, (void *)ix.keys, ix.nkeys, &cap, sizeof *ix.keys,
                                   SQL_MAX_COLUMNS, "index columns");
                    if (!ix.keys)
                        return p->rc;
                    ix.keys[ix.nkeys++] = c;
                } while (accept_punct(p, ','));
                /* the selected columns not ordered by are the index's values */
                uint32_t vcap = 0;
                for (uint32_t i = 0; i < nsel; i++) {
                    if (in_list(ix.keys, ix.nkeys, sel[i]))
                        continue;
                    ix.values = grow(p, (void *)ix.values, ix.nvalues, &vcap, sizeof *ix.values,
                                     SQL_MAX_COLUMNS, "index columns");
                    if (!ix.values)
                        return p->rc;
                    ix.values[ix.nvalues++] = sel[i];
                }
            } else {
                ix.keys = sel;
                ix.nkeys = nsel;
            }
        }
    }
    if (p->rc || check_index(p, tm, &ix))
        return p->rc;
    if (tm->nindexes >= SQL_MAX_INDEXES)
        return fail(p, "more than %d indexes", SQL_MAX_INDEXES);
    sql_index *ni = cfdb_arena_alloc(p->a, (tm->nindexes + 1) * sizeof *ni);
    if (!ni)
        return oom(p);
    if (tm->nindexes)
        memcpy(ni, tm->indexes, tm->nindexes * sizeof *ni);
    ni[tm->nindexes++] = ix;
    tm->indexes = ni;
    return 0;
}

static int parse_bool(parser *p, bool *out)
{
    if (accept_kw(p, "TRUE"))
        *out = true;
    else if (accept_kw(p, "FALSE"))
        *out = false;
    else
        return fail(p, "expected true or false");
    return 0;
}

static int parse_template(parser *p, sql_ddl *d)
{
    sql_template *tm = cfdb_arena_zalloc(p->a, sizeof *tm);
    if (!tm)
        return oom(p);
    d->tmpl = tm;
    tm->name = d->name = ident(p, "schema template");
    if (p->rc)
        return p->rc;
    while (accept_kw(p, "CREATE")) {
        if (accept_kw(p, "TABLE")) {
            if (tm->ntables >= SQL_MAX_TABLES)
                return fail(p, "more than %d tables", SQL_MAX_TABLES);
            if (parse_table(p, tm))
                return p->rc;
        } else if (accept_kw(p, "UNIQUE")) {
            if (expect_kw(p, "INDEX") || parse_index(p, tm, true))
                return p->rc;
        } else if (accept_kw(p, "INDEX")) {
            if (parse_index(p, tm, false))
                return p->rc;
        } else if (is_kw(p, "TYPE") || is_kw(p, "STRUCT") || is_kw(p, "ENUM") ||
                   is_kw(p, "VIEW") || is_kw(p, "FUNCTION") || is_kw(p, "VECTOR")) {
            return fail(p, "CREATE %.*s in a schema template is not supported", (int)p->t.n,
                        p->t.p);
        } else {
            return fail(p, "expected TABLE or INDEX after CREATE");
        }
    }
    if (tm->ntables == 0)
        return fail(p, "schema template %s has no tables", tm->name);
    if (accept_kw(p, "WITH")) {
        if (expect_kw(p, "OPTIONS") || expect_punct(p, '('))
            return p->rc;
        do {
            bool *opt;
            if (accept_kw(p, "ENABLE_LONG_ROWS"))
                opt = &tm->enable_long_rows;
            else if (accept_kw(p, "INTERMINGLE_TABLES"))
                opt = &tm->intermingle_tables;
            else if (accept_kw(p, "STORE_ROW_VERSIONS"))
                opt = &tm->store_row_versions;
            else
                return fail(p, "unknown option (ENABLE_LONG_ROWS, INTERMINGLE_TABLES, "
                               "STORE_ROW_VERSIONS)");
            if (expect_punct(p, '=') || parse_bool(p, opt))
                return p->rc;
        } while (accept_punct(p, ','));
        if (expect_punct(p, ')'))
            return p->rc;
    }
    return 0;
}

/* "/db/path/schema" -> path "/db/path", name "schema" (fdb-relational's schemaId). */
static int split_schema_path(parser *p, sql_ddl *d)
{
    size_t pos = p->t.pos;
    const char *full = path(p);
    if (p->rc)
        return p->rc;
    const char *slash = strrchr(full, '/');
    if (slash == full) {
        p->t.pos = pos;
        return fail(p, "schema path %s has no database part (/database/schema)", full);
    }
    char *db = cfdb_arena_alloc(p->a, (size_t)(slash - full) + 1);
    if (!db)
        return oom(p);
    memcpy(db, full, (size_t)(slash - full));
    db[slash - full] = 0;
    d->path = db;
    const char *nm = slash + 1;
    for (const char *c = nm; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return fail(p, "schema name '%s' is not a valid name", nm);
    if (!ident_start((unsigned char)nm[0]))
        return fail(p, "schema name '%s' is not a valid name", nm);
    char *up = cfdb_arena_dup(p->a, nm, strlen(nm) + 1);
    if (!up)
        return oom(p);
    for (char *c = up; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    d->name = up;
    return 0;
}

bool sql_is_ddl(const char *text)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    parser p = { .a = &a, .s = text, .len = strlen(text) };
    next(&p);
    bool ddl = false;
    if (is_kw(&p, "CREATE") || is_kw(&p, "DROP")) {
        next(&p);
        ddl = is_kw(&p, "SCHEMA") || is_kw(&p, "DATABASE");
    }
    cfdb_arena_free(&a);
    return ddl;
}

int sql_ddl_parse(cfdb_arena *a, const char *text, size_t len, sql_ddl **out, char *err,
                  size_t errcap)
{
    *out = NULL;
    if (len > SQL_MAX_DDL_BYTES) {
        sql_errf(err, errcap, "DDL statement of %zu bytes (at most %u)", len, SQL_MAX_DDL_BYTES);
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    parser p = { .a = a, .s = text, .len = len, .err = err, .errcap = errcap };
    sql_ddl *d = cfdb_arena_zalloc(a, sizeof *d);
    if (!d)
        return oom(&p);
    next(&p);
    if (accept_kw(&p, "CREATE")) {
        if (accept_kw(&p, "SCHEMA")) {
            if (accept_kw(&p, "TEMPLATE")) {
                d->kind = SQL_DDL_CREATE_TEMPLATE;
                parse_template(&p, d);
            } else {
                d->kind = SQL_DDL_CREATE_SCHEMA;
                if (!split_schema_path(&p, d) && !expect_kw(&p, "WITH") &&
                    !expect_kw(&p, "TEMPLATE"))
                    d->template_name = ident(&p, "schema template");
            }
        } else if (accept_kw(&p, "DATABASE")) {
            d->kind = SQL_DDL_CREATE_DATABASE;
            d->path = path(&p);
        } else {
            fail(&p, "expected SCHEMA, SCHEMA TEMPLATE or DATABASE after CREATE");
        }
    } else if (accept_kw(&p, "DROP")) {
        if (accept_kw(&p, "SCHEMA")) {
            if (accept_kw(&p, "TEMPLATE")) {
                d->kind = SQL_DDL_DROP_TEMPLATE;
                if (accept_kw(&p, "IF") && !expect_kw(&p, "EXISTS"))
                    d->if_exists = true;
                if (!p.rc)
                    d->name = ident(&p, "schema template");
            } else {
                d->kind = SQL_DDL_DROP_SCHEMA;
                if (accept_kw(&p, "IF") && !expect_kw(&p, "EXISTS"))
                    d->if_exists = true;
                if (!p.rc)
                    split_schema_path(&p, d);
            }
        } else if (accept_kw(&p, "DATABASE")) {
            d->kind = SQL_DDL_DROP_DATABASE;
            if (accept_kw(&p, "IF") && !expect_kw(&p, "EXISTS"))
                d->if_exists = true;
            if (!p.rc)
                d->path = path(&p);
        } else {
            fail(&p, "expected SCHEMA, SCHEMA TEMPLATE or DATABASE after DROP");
        }
    } else {
        fail(&p, "not a DDL statement (CREATE or DROP of a SCHEMA TEMPLATE, DATABASE or SCHEMA)");
    }
    if (!p.rc) {
        accept_punct(&p, ';');
        if (p.t.kind != T_END)
            fail(&p, "unexpected '%.*s' after the statement", (int)(p.t.n > 40 ? 40 : p.t.n),
                 p.t.p);
    }
    if (p.rc)
        return p.rc;
    *out = d;
    return 0;
}
