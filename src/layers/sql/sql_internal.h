/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the SQL layer: the DDL's syntax tree (sql_ddl.c), the template's Record Layer
 * metadata (sql_template.c), the catalog (sql_catalog.c) and the virtual tables
 * (sql_vtab.c). docs/design/sql.md says where each layout comes from. */
#ifndef CFDB_SQL_INTERNAL_H
#define CFDB_SQL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/records/metadata.h"
#include "cfdb/sql.h"

/* Column types of fdb-relational's DDL (RelationalParser.g4 primitiveType). */
typedef enum sql_type {
    SQL_BOOLEAN = 0,
    SQL_INTEGER,
    SQL_BIGINT,
    SQL_FLOAT,
    SQL_DOUBLE,
    SQL_STRING,
    SQL_BYTES,
} sql_type;

typedef struct sql_column {
    const char *name;
    sql_type type;
    bool not_null;
} sql_column;

typedef struct sql_table {
    const char *name;
    sql_column *cols;
    uint32_t ncols;
    uint32_t *pk;          /* column positions of the primary key, in order */
    uint32_t npk;
} sql_table;

typedef enum sql_index_kind {
    SQL_IX_VALUE = 0,
    SQL_IX_COUNT,          /* COUNT(*) */
    SQL_IX_COUNT_NOT_NULL, /* COUNT(col) */
    SQL_IX_SUM,
    SQL_IX_MAX_EVER,
    SQL_IX_MIN_EVER,
} sql_index_kind;

typedef struct sql_index {
    const char *name;
    const char *table;
    bool unique;
    sql_index_kind kind;
    /* VALUE: key columns (ORDER BY / ON list) then value columns (the rest of the SELECT
     * list / INCLUDE). Aggregates: the GROUP BY columns, then the aggregated column (none
     * for COUNT(*)). */
    const char **keys;
    uint32_t nkeys;
    const char **values;
    uint32_t nvalues;
    const char *agg_col;
    bool legacy_extremum;  /* WITH ATTRIBUTES LEGACY_EXTREMUM_EVER */
} sql_index;

typedef struct sql_template {
    const char *name;
    sql_table *tables;
    uint32_t ntables;
    sql_index *indexes;
    uint32_t nindexes;
    bool enable_long_rows;
    bool intermingle_tables;
    bool store_row_versions;
} sql_template;

typedef enum sql_ddl_kind {
    SQL_DDL_CREATE_TEMPLATE = 1,
    SQL_DDL_CREATE_DATABASE,
    SQL_DDL_CREATE_SCHEMA,
    SQL_DDL_DROP_TEMPLATE,
    SQL_DDL_DROP_DATABASE,
    SQL_DDL_DROP_SCHEMA,
} sql_ddl_kind;

typedef struct sql_ddl {
    sql_ddl_kind kind;
    bool if_exists;
    const char *path;          /* database path; CREATE/DROP SCHEMA: the database part */
    const char *name;          /* schema or template name */
    const char *template_name; /* CREATE SCHEMA ... WITH TEMPLATE */
    sql_template *tmpl;        /* CREATE SCHEMA TEMPLATE */
} sql_ddl;

/* Most of each thing the DDL accepts (bad input gets 2000 with a message past these). */
#define SQL_MAX_IDENT 128
#define SQL_MAX_PATH 512
#define SQL_MAX_TABLES 256
#define SQL_MAX_COLUMNS 512
#define SQL_MAX_INDEXES 512
#define SQL_MAX_DDL_BYTES (1u << 20)

/* Parses one DDL statement (a trailing ';' allowed). Everything lives in a. 0, or 2000
 * client_invalid_operation with err saying what and where; 4000 out of memory. */
int sql_ddl_parse(cfdb_arena *a, const char *text, size_t len, sql_ddl **out, char *err,
                  size_t errcap);
/* true when text starts with a DDL keyword (CREATE/DROP followed by SCHEMA/DATABASE). */
bool sql_is_ddl(const char *text);

/* The template's MetaData protobuf, as fdb-relational's RecordLayerSchemaTemplate
 * toRecordMetadata().toProto() (sql_template.c). version: the template's version; each
 * index gets it as added_version and last_modified_version, except an index prev (the
 * previous version's metadata, NULL for none) has with the same definition (name, type,
 * uniqueness, table, primary key, key expression, column types), which keeps prev's: the
 * Record Layer rebuilds on upgrade only the indexes modified after the store's version. */
int sql_template_metadata(cfdb_arena *a, const sql_template *t, int32_t version,
                          const cfdb_rl_metadata *prev, cfdb_bytes *out, char *err, size_t errcap);

/* Maps a column of a loaded metadata's record type back to the DDL's type. */
sql_type sql_type_of_field(const cfdb_pb_field *f);
const char *sql_type_name(sql_type t);

/* A SQL continuation (sql_cont.c): fdb-relational's ContinuationProto fields cfdb uses. */
typedef struct sql_cont {
    cfdb_bytes state;          /* the Record Layer cursor's continuation */
    uint32_t binding_hash;     /* of the scan's range (the bound values) */
    uint32_t plan_hash;        /* of the table and plan */
    bool at_end;               /* CURSOR_AFTER_LAST */
} sql_cont;
int sql_cont_encode(cfdb_arena *a, const sql_cont *c, cfdb_bytes *out);
/* 2000 for bytes that are not a continuation of ours. */
int sql_cont_decode(cfdb_bytes in, sql_cont *c);
uint32_t sql_hash32(uint32_t h, const void *p, size_t n);

void sql_errf(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
