/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the SQL tests: statements run and their rows gathered as text. */
#ifndef CFDB_TESTS_SQL_TEST_UTIL_H
#define CFDB_TESTS_SQL_TEST_UTIL_H

#include "cfdb/sql.h"

/* Runs one statement (parameters bound from params, "i:5", "t:abc", "n" for NULL, "d:1.5",
 * NULL-terminated, may be NULL) and returns its rows as text: columns joined by '|', rows
 * ended by '\n', NULL as "NULL", blobs as x'..'; on error "ERR <code>: <message>". The string
 * is the caller's (free). */
char *sqlt_query(sqlite3 *db, const char *sql, const char *const *params);

/* Runs the DDL statements (NULL-terminated) and opens db_path/schema into *out: 0, or -1 with
 * the failure printed on stderr (for a group setup). */
int sqlt_open_schema(FDBDatabase *fdb, const char *const *ddl, const char *db_path, const char *schema,
                     sqlite3 **out);

/* Runs the INSERT statement n times in one transaction (BEGIN..COMMIT), bind(st, i) binding
 * row i's values: 0, or -1 with the failure printed on stderr. */
int sqlt_insert_rows(sqlite3 *db, const char *insert, int n, void (*bind)(sqlite3_stmt *st, int i));

#endif
