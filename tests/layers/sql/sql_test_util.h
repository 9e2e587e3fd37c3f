/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the SQL tests: statements run and their rows gathered as text. */
#ifndef CFDB_TESTS_SQL_TEST_UTIL_H
#define CFDB_TESTS_SQL_TEST_UTIL_H

#include <sqlite3.h>

/* Runs one statement (parameters bound from params, "i:5", "t:abc", "n" for NULL, "d:1.5",
 * NULL-terminated, may be NULL) and returns its rows as text: columns joined by '|', rows
 * ended by '\n', NULL as "NULL", blobs as x'..'; on error "ERR <code>: <message>". The string
 * is the caller's (free). */
char *sqlt_query(sqlite3 *db, const char *sql, const char *const *params);

#endif
