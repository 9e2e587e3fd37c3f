/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_test_util.h"

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->n + n + 1)
            nc *= 2;
        b->p = realloc(b->p, nc);
        if (!b->p)
            abort();
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

char *sqlt_query(sqlite3 *db, const char *sql, const char *const *params)
{
    buf b = { 0 };
    puts_(&b, "");
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    char tmp[64];
    if (rc) {
        snprintf(tmp, sizeof tmp, "ERR %d: ", rc);
        puts_(&b, tmp);
        puts_(&b, sqlite3_errmsg(db));
        return b.p;
    }
    for (int i = 0; params && params[i]; i++) {
        const char *p = params[i];
        if (p[0] == 'i')
            sqlite3_bind_int64(st, i + 1, strtoll(p + 2, NULL, 10));
        else if (p[0] == 'd')
            sqlite3_bind_double(st, i + 1, strtod(p + 2, NULL));
        else if (p[0] == 't')
            sqlite3_bind_text(st, i + 1, p + 2, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(st, i + 1);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int n = sqlite3_column_count(st);
        for (int i = 0; i < n; i++) {
            if (i)
                puts_(&b, "|");
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_NULL:
                puts_(&b, "NULL");
                break;
            case SQLITE_INTEGER:
                snprintf(tmp, sizeof tmp, "%lld", (long long)sqlite3_column_int64(st, i));
                puts_(&b, tmp);
                break;
            case SQLITE_FLOAT:
                snprintf(tmp, sizeof tmp, "%.17g", sqlite3_column_double(st, i));
                puts_(&b, tmp);
                break;
            case SQLITE_BLOB: {
                const unsigned char *p = sqlite3_column_blob(st, i);
                int len = sqlite3_column_bytes(st, i);
                puts_(&b, "x'");
                for (int k = 0; k < len; k++) {
                    snprintf(tmp, sizeof tmp, "%02x", p[k]);
                    puts_(&b, tmp);
                }
                puts_(&b, "'");
                break;
            }
            default:
                put(&b, (const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
            }
        }
        puts_(&b, "\n");
    }
    if (rc != SQLITE_DONE) {
        b.n = 0;
        snprintf(tmp, sizeof tmp, "ERR %d: ", rc);
        puts_(&b, tmp);
        puts_(&b, sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    return b.p;
}

int sqlt_open_schema(FDBDatabase *fdb, const char *const *ddl, const char *db_path, const char *schema,
                     sqlite3 **out)
{
    char err[512];
    for (size_t i = 0; ddl[i]; i++)
        if (cfdb_sql_ddl(fdb, ddl[i], err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", ddl[i], err);
            return -1;
        }
    if (cfdb_sql_open(fdb, db_path, schema, out, err, sizeof err)) {
        fprintf(stderr, "opening %s/%s: %s\n", db_path, schema, err);
        return -1;
    }
    return 0;
}

int sqlt_insert_rows(sqlite3 *db, const char *insert, int n, void (*bind)(sqlite3_stmt *st, int i))
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) || sqlite3_prepare_v2(db, insert, -1, &st, NULL)) {
        fprintf(stderr, "%s: %s\n", insert, sqlite3_errmsg(db));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        bind(st, i);
        if (sqlite3_step(st) != SQLITE_DONE) {
            fprintf(stderr, "%s (row %d): %s\n", insert, i, sqlite3_errmsg(db));
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)) {
        fprintf(stderr, "COMMIT: %s\n", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}
