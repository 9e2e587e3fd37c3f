/* SPDX-License-Identifier: Apache-2.0 */
/* Online builds of a schema's indexes that are not readable (sql_indexes.c). */
#ifndef CFDB_SQL_INDEXES_H
#define CFDB_SQL_INDEXES_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/records/store.h"

typedef struct sql_build_report {
    uint32_t transactions;     /* batches committed (each a bounded transaction) */
    uint64_t records;          /* records indexed */
    uint32_t built;            /* indexes made readable */
    uint32_t left;             /* indexes still not readable (stopped at max_transactions) */
} sql_build_report;

/* Builds every index of md that readable[] (by metadata position) says is not readable and
 * cfdb can build, with the Record Layer's online indexer: at most max_records records per
 * transaction (0: the indexer's 100), at most max_transactions batches in all (0: no limit;
 * the build stops there as if interrupted, and a later call resumes from the indexer's
 * recorded ranges). readable[] is updated. 0, or the indexer's error with err saying which
 * index; a unique index whose rows have duplicate keys is 2000 with "UNIQUE index I of T
 * cannot be built: ..." naming one duplicate key; an index another session is building is
 * 2000 "... another index build holds it (...)", or skipped (counted in left) when busy_ok. */
int sql_indexes_build(FDBDatabase *db, const cfdb_rl_metadata *md, cfdb_bytes prefix, bool *readable,
                      uint32_t max_records, uint32_t max_transactions, bool busy_ok, sql_build_report *rep,
                      char *err, size_t errcap);

/* The same with the limits cfdb_sql_set_index_build_limits set and busy_ok (what opening a
 * schema does). */
int sql_indexes_build_on_open(FDBDatabase *db, const cfdb_rl_metadata *md, cfdb_bytes prefix, bool *readable,
                              char *err, size_t errcap);

#endif
