/* SPDX-License-Identifier: Apache-2.0 */
/* SQL on FoundationDB records (libcfdb_sql): fdb-relational's schema templates and catalog,
 * with SQLite as the query engine over Record Layer stores (docs/design/sql.md).
 *
 * DDL is fdb-relational's (CREATE SCHEMA TEMPLATE / DATABASE / SCHEMA, DROP of each), run by
 * cfdb_sql_ddl or the SQL function cfdb_ddl('...'); queries and DML are SQLite's, over one
 * virtual table per table of the schema (in SQLite's temp schema of the connection). Each
 * table's rows are Record Layer records; INSERT, UPDATE and DELETE maintain every index
 * through the Record Layer, and unique indexes refuse duplicates (SQLITE_CONSTRAINT).
 *
 * Transactions: a statement in autocommit mode reads and writes in one FoundationDB
 * transaction, committed when the statement ends; BEGIN ... COMMIT spans its statements in
 * one FoundationDB transaction (committed at COMMIT). A FoundationDB error fails the statement
 * with a message "FoundationDB error N: description" (cfdb_sql_last_error gives N) and rolls
 * the FoundationDB transaction back; cfdb_sql_exec retries autocommit statements that fail
 * with retryable errors (fdb_transaction_on_error's loop).
 *
 * Paging: each table has a hidden BLOB column CFDB_CONTINUATION: selected, where the scan
 * resumes after the row; `WHERE ... AND cfdb_continuation IS ?` resumes the same query there,
 * in a new transaction (fdb-relational's ContinuationProto; another query's is refused).
 *
 * Fetch method of index scans that need their records (per connection; default
 * USE_REMOTE_FETCH_WITH_FALLBACK as fdb-relational's Options.INDEX_FETCH_METHOD), also settable
 * with SELECT cfdb_fetch_method('SCAN_AND_FETCH'). */
#ifndef CFDB_SQL_H
#define CFDB_SQL_H

#include <stddef.h>

#ifndef FDB_API_VERSION
#define FDB_API_VERSION 730
#endif
#include <foundationdb/fdb_c.h>
#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libcfdb_sql.so is built with hidden visibility; what this header declares is its API. */
#pragma GCC visibility push(default)

/* Runs one DDL statement in its own transaction (with the retry loop). 0, or a FoundationDB
 * error code (2000 for bad DDL or a catalog rule broken: err says which). */
int cfdb_sql_ddl(FDBDatabase *db, const char *ddl, char *err, size_t errcap);

/* Opens an in-memory SQLite connection whose tables are those of schema `schema` of
 * database `db_path` (e.g. "/demo", "S"). The caller closes it with sqlite3_close; db must
 * outlive it. 0 or an error code (err says why). */
int cfdb_sql_open(FDBDatabase *db, const char *db_path, const char *schema, sqlite3 **out,
                  char *err, size_t errcap);
/* The same on an existing SQLite connection (the tables of a schema attached before are
 * dropped first). Registers the functions cfdb_ddl(text), cfdb_fetch_method([text]),
 * cfdb_tables() (the schema's tables, comma-separated), cfdb_index_value(index, group...)
 * (an aggregate index's value for a group: COUNT, SUM, MAX_EVER, MIN_EVER; NULL for none)
 * and cfdb_build_indexes([max records per transaction [, max transactions]]) (builds the
 * indexes that are not readable, outside BEGIN..COMMIT; gives the number of batch
 * transactions it committed).
 *
 * Opening a schema whose template gained or changed indexes builds them with the Record
 * Layer's online indexer, in transactions of at most 100 records (resuming a build an
 * earlier open left unfinished), and the planner uses an index only once it is readable;
 * an index whose definition did not change is kept. A unique index whose rows have
 * duplicate keys cannot be built: the open fails with 2000 and "UNIQUE index I of T cannot
 * be built: ..." (the index stays write-only until the rows are fixed). */
int cfdb_sql_attach(sqlite3 *conn, FDBDatabase *db, const char *db_path, const char *schema,
                    char *err, size_t errcap);

/* sqlite3_exec with the FoundationDB retry loop: a statement run in autocommit mode that
 * fails with a retryable FoundationDB error is run again (after on_error's back-off), up to
 * 100 times. */
int cfdb_sql_exec(sqlite3 *conn, const char *sql, int (*cb)(void *, int, char **, char **),
                  void *ctx, char **errmsg);

/* The FoundationDB error code of the last statement that failed on one (0 when it failed for
 * another reason or none failed). */
int cfdb_sql_last_error(sqlite3 *conn);

/* Calls fn for each schema of database db_path (NULL: of every database), as the catalog's
 * SCHEMAS table lists them. fn returning non-zero stops the listing with that value. */
int cfdb_sql_list_schemas(FDBDatabase *db, const char *db_path,
                          int (*fn)(void *ctx, const char *db, const char *schema,
                                    const char *template_name, int template_version),
                          void *ctx, char *err, size_t errcap);

typedef enum cfdb_sql_fetch {
    CFDB_SQL_SCAN_AND_FETCH = 0,
    CFDB_SQL_USE_REMOTE_FETCH = 1,
    CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK = 2,
} cfdb_sql_fetch;
int cfdb_sql_set_fetch_method(sqlite3 *conn, cfdb_sql_fetch method);

/* Bounds the index builds of later opens in this process: records per transaction (0: 100)
 * and batch transactions per open (0: no limit; an open that reaches it leaves the rest
 * unbuilt and not used by queries, for cfdb_build_indexes or a later open). 0. */
int cfdb_sql_set_index_build_limits(unsigned max_records, unsigned max_transactions);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
