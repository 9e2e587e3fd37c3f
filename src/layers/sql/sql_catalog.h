/* SPDX-License-Identifier: Apache-2.0 */
/* The catalog in FoundationDB (sql_catalog.c): fdb-relational's /__SYS/__SYS/CATALOG store. */
#ifndef CFDB_SQL_CATALOG_H
#define CFDB_SQL_CATALOG_H

#include "cfdb/records/store.h"
#include "sql_internal.h"

typedef struct sql_catalog sql_catalog;

/* The catalog's metadata (built once; shared by the connections of a process is fine). */
int sql_catalog_new(sql_catalog **out, char *err, size_t errcap);
void sql_catalog_free(sql_catalog *c);

/* Runs a parsed DDL statement in tr (the caller commits and retries). */
int sql_catalog_exec(sql_catalog *c, FDBTransaction *tr, const sql_ddl *d, char *err,
                     size_t errcap);

typedef struct sql_schema_info {
    const char *template_name;
    int32_t template_version;
    int32_t upgraded_from;     /* the version before an upgrade on this load, else 0 */
    cfdb_bytes metadata;       /* the template's MetaData */
    cfdb_bytes prefix;         /* where the schema's store is */
} sql_schema_info;

/* A schema's template (upgrading the schema to the template's latest version). */
int sql_catalog_load_schema(sql_catalog *c, FDBTransaction *tr, cfdb_arena *a, const char *db,
                            const char *schema, sql_schema_info *out, char *err, size_t errcap);

typedef int (*sql_schema_fn)(void *ctx, const char *db, const char *schema, const char *tmpl,
                             int32_t version);
/* Every schema of db (NULL: of every database). */
int sql_catalog_list_schemas(sql_catalog *c, FDBTransaction *tr, const char *db, sql_schema_fn fn,
                             void *ctx);
/* The packed tuple (db_path[, schema]): a schema's store prefix, a database's range. */
int sql_schema_prefix(cfdb_arena *a, const char *db_path, const char *schema, cfdb_bytes *out);

#endif
