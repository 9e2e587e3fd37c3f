/* SPDX-License-Identifier: Apache-2.0 */
/* A point select through SQL and the same record loaded through the Record Layer directly,
 * each run N times against a cfdb-server, for instruction counts (scripts/instr-budget.sh runs
 * it under cachegrind at two N and divides the difference, so set-up and exit cancel out):
 *
 *   setup        the schema /perf/S (template PERF: table ITEM (ID BIGINT, NAME STRING,
 *                QTY INTEGER, PRIMARY KEY (ID))) and ITEMS rows; run once, not measured
 *   sql_point    SELECT name, qty FROM item WHERE id = ? through one prepared statement, in
 *                autocommit mode: each execution is one FoundationDB transaction (a read
 *                version, the store header, the record)
 *   rl_point     what that statement asks of the Record Layer, called directly: a
 *                transaction, cfdb_rl_store_open of the schema's store, cfdb_rl_store_load of
 *                the record by primary key, its fields read
 *
 * Both read the same records in the same order, and check each row (id, name, qty), so a path
 * that stops doing its work fails here instead of looking cheap.
 *
 * usage: cfdb-sql-paths CLUSTER_FILE setup|sql_point|rl_point N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../api/api_helpers.h"
#include "cfdb/records/cursor.h"
#include "cfdb/sql.h"
#include "sql_catalog.h"

#define ITEMS 100

static int fail(const char *what, int code)
{
    fprintf(stderr, "sql_paths: %s (%d)\n", what, code);
    return 1;
}

static void item_name(char *out, size_t cap, long id)
{
    snprintf(out, cap, "item-%05ld", id);
}

static int setup(FDBDatabase *fdb)
{
    char err[512];
    static const char *const ddl[] = {
        ("CREATE SCHEMA TEMPLATE perf CREATE TABLE item (id BIGINT, name STRING, qty INTEGER, "
         "PRIMARY KEY (id))"),
        "CREATE DATABASE /perf",
        "CREATE SCHEMA /perf/s WITH TEMPLATE perf",
    };
    for (size_t i = 0; i < sizeof ddl / sizeof *ddl; i++) {
        int rc = cfdb_sql_ddl(fdb, ddl[i], err, sizeof err);
        if (rc) {
            fprintf(stderr, "sql_paths: %s: %s\n", ddl[i], err);
            return 1;
        }
    }
    sqlite3 *db;
    int rc = cfdb_sql_open(fdb, "/perf", "s", &db, err, sizeof err);
    if (rc)
        return fail(err, rc);
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(db, "INSERT INTO item VALUES (?, ?, ?)", -1, &st, NULL);
    for (long id = 0; !rc && id < ITEMS; id++) {
        char name[32];
        item_name(name, sizeof name, id);
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 3, id * 3);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : 1;
        sqlite3_reset(st);
    }
    if (rc)
        fprintf(stderr, "sql_paths: insert: %s\n", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

static int check_row(long id, const char *name, int name_len, long long qty)
{
    char want[32];
    item_name(want, sizeof want, id);
    if (!name || name_len != (int)strlen(want) || memcmp(name, want, (size_t)name_len) || qty != id * 3)
        return fail("wrong row", (int)id);
    return 0;
}

static int sql_point(FDBDatabase *fdb, long n)
{
    char err[512];
    sqlite3 *db;
    int rc = cfdb_sql_open(fdb, "/perf", "s", &db, err, sizeof err);
    if (rc)
        return fail(err, rc);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT name, qty FROM item WHERE id = ?", -1, &st, NULL))
        return fail(sqlite3_errmsg(db), 0);
    for (long i = 0; i < n && !rc; i++) {
        long id = i % ITEMS;
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) != SQLITE_ROW) {
            rc = fail(sqlite3_errmsg(db), cfdb_sql_last_error(db));
            break;
        }
        rc = check_row(id, (const char *)sqlite3_column_text(st, 0), sqlite3_column_bytes(st, 0),
                       sqlite3_column_int64(st, 1));
        if (!rc && sqlite3_step(st) != SQLITE_DONE)
            rc = fail("more than one row", (int)id);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

typedef struct load_ctx {
    sql_catalog *cat;
    cfdb_arena *a;
    sql_schema_info info;
} load_ctx;

static int rl_point(FDBDatabase *fdb, long n)
{
    /* the schema's metadata and store prefix, as cfdb_sql_open finds them */
    char err[512];
    sql_catalog *cat;
    int rc = sql_catalog_new(&cat, err, sizeof err);
    if (rc)
        return fail(err, rc);
    cfdb_arena a;
    cfdb_arena_init(&a);
    FDBTransaction *tr;
    if ((rc = fdb_database_create_transaction(fdb, &tr)))
        return fail("create transaction", rc);
    sql_schema_info info;
    rc = sql_catalog_load_schema(cat, tr, &a, "/perf", "S", &info, err, sizeof err);
    fdb_transaction_destroy(tr);
    if (rc)
        return fail(err, rc);
    cfdb_rl_metadata *md;
    cfdb_pb_error pe = { 0 };
    if ((rc = cfdb_rl_metadata_from_proto(info.metadata.ptr, info.metadata.len, &md, &pe)))
        return fail(pe.message, rc);
    const cfdb_rl_record_type *rt = cfdb_rl_record_type_by_name(md, "ITEM");
    if (!rt)
        return fail("no ITEM", 0);
    const cfdb_pb_field *fname = cfdb_pb_field_by_name(rt->descriptor, "NAME");
    const cfdb_pb_field *fqty = cfdb_pb_field_by_name(rt->descriptor, "QTY");
    if (!fname || !fqty)
        return fail("no NAME or QTY", 0);
    cfdb_arena row;
    cfdb_arena_init(&row);
    for (long i = 0; i < n && !rc; i++) {
        long id = i % ITEMS;
        if ((rc = fdb_database_create_transaction(fdb, &tr)))
            return fail("create transaction", rc);
        cfdb_arena_reset(&row);
        cfdb_rl_store *s;
        rc = cfdb_rl_store_open(tr, md, info.prefix, CFDB_RL_OPEN, &s);
        if (rc) {
            fdb_transaction_destroy(tr);
            return fail("store open", rc);
        }
        cfdb_tuple pk;
        cfdb_tuple_init(&pk, &row);
        cfdb_rl_loaded l;
        if (cfdb_tuple_add_elem(&pk, &rt->record_type_key) || cfdb_tuple_add_int(&pk, id))
            rc = fail("primary key", 0);
        else if ((rc = cfdb_rl_store_load(s, tr, &row, &pk, &l)))
            rc = fail("load", rc);
        else if (!l.found || l.type != rt)
            rc = fail("record not found", (int)id);
        else {
            const cfdb_pb_value *nv = cfdb_pb_get(l.record, fname, 0);
            const cfdb_pb_value *qv = cfdb_pb_get(l.record, fqty, 0);
            rc = check_row(id, nv ? (const char *)nv->s.ptr : NULL, nv ? (int)nv->s.len : 0,
                           qv ? qv->i : -1);
        }
        cfdb_rl_store_free(s);
        fdb_transaction_destroy(tr);
    }
    cfdb_arena_free(&row);
    cfdb_rl_metadata_free(md);
    cfdb_arena_free(&a);
    sql_catalog_free(cat);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fail("usage: cfdb-sql-paths CLUSTER_FILE setup|sql_point|rl_point N", 0);
    long n = atol(argv[3]);
    if (n <= 0)
        return fail("N must be positive", 0);
    if (api_network_start())
        return fail("network", 0);
    FDBDatabase *fdb;
    int rc = fdb_create_database(argv[1], &fdb);
    if (rc)
        return fail("create database", rc);
    if (!strcmp(argv[2], "setup"))
        rc = setup(fdb);
    else if (!strcmp(argv[2], "sql_point"))
        rc = sql_point(fdb, n);
    else if (!strcmp(argv[2], "rl_point"))
        rc = rl_point(fdb, n);
    else
        rc = fail("unknown path", 0);
    fdb_database_destroy(fdb);
    api_network_stop();
    return rc;
}
