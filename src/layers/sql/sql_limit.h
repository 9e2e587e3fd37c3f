/* SPDX-License-Identifier: Apache-2.0 */
/* LIMIT and OFFSET pushed into a table's Record Layer scan (sql_limit.c). */
#ifndef CFDB_SQL_LIMIT_H
#define CFDB_SQL_LIMIT_H

#ifdef CFDB_SQL_EXTENSION
#include <sqlite3ext.h>
#else
#include <sqlite3.h>
#endif
#include <stdbool.h>
#include <stdint.h>

/* idxNum bits of a pushed LIMIT / OFFSET (the other bits are sql_vtab.c's) */
#define SQL_LIMIT_PUSHED (1 << 28)
#define SQL_OFFSET_PUSHED (1 << 29)

typedef struct sql_limit_plan {
    int flags;              /* SQL_LIMIT_PUSHED, | SQL_OFFSET_PUSHED, or 0 */
    int limit_c, offset_c;  /* their constraints (-1: none) */
} sql_limit_plan;

/* In xBestIndex, once the plan's constraints have their argvIndex and omit (*argv the next
 * free argvIndex): pushes SQLite's LIMIT (and OFFSET) constraints when that cannot change the
 * answer, i.e. every other constraint is consumed (argvIndex and omit), the rows need no sort
 * after the scan (ordered: no ORDER BY, or orderByConsumed) and the scan returns exactly the
 * table's rows (exact: no other table's records to drop). LIMIT and then OFFSET get the next
 * argv positions, neither omitted: SQLite still skips and counts, the scan only stops after
 * LIMIT + OFFSET rows. */
void sql_limit_plan_make(sqlite3_index_info *info, bool ordered, bool exact, int *argv,
                         sql_limit_plan *out);
/* " LIMIT n|? [OFFSET n|?]" for EXPLAIN QUERY PLAN, when pushed. */
void sql_limit_plan_describe(sqlite3_index_info *info, const sql_limit_plan *p, sqlite3_str *s);

typedef struct sql_limit_args {
    bool no_rows;           /* LIMIT 0 */
    uint32_t limit;         /* the scan's row limit: LIMIT + OFFSET (0 = none) */
} sql_limit_args;

/* In xFilter: the pushed values (the last arguments: LIMIT, then OFFSET) taken off *argc. A
 * negative or non-integer LIMIT is no limit, as is one past 2^32 - 1 with the OFFSET; a
 * negative OFFSET is none. */
void sql_limit_args_take(int idx_num, sqlite3_value **argv, int *argc, sql_limit_args *out);

#endif
