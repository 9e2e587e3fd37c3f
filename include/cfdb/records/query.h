/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal Record Layer query: one record type, a conjunction of comparisons on its
 * top-level scalar fields, and an optional sort by one field; planned onto a VALUE index scan
 * (with its records fetched by SCAN_AND_FETCH or USE_REMOTE_FETCH) or a scan of the type's
 * records, with an explain string in the Java Record Layer's plan notation (RecordQueryPlan
 * toString: "Index(Person$name [[alice],[alice]])", "Scan([IS Person]) | name EQUALS alice").
 *
 * Planning (a small version of what the Java RecordQueryPlanner does for these queries):
 *  - candidates: VALUE indexes on the type (or on every type);
 *  - an index matches the filters on its leading columns: equality comparisons on columns 1..k,
 *    then at most one column with range comparisons (<, <=, >, >=; both sides allowed);
 *  - with a sort field, only indexes whose column k+1 (or, when every column matched an
 *    equality, the last equality column) is the sort field qualify; the scan runs reverse for
 *    a descending sort;
 *  - the index with the most matched comparisons wins (equalities count twice a range), the
 *    first declared on a tie; with none matched and no sort, a record scan: over the type's
 *    range when its primary key starts with the record type key ("Scan([IS T])"), else over
 *    every record with a type filter ("Scan(<,>) | [T]");
 *  - comparisons the scan does not cover are checked on each record ("| field OP value");
 *    a record whose field is unset never matches a comparison (Java's null semantics);
 *  - a sort no index provides is refused (2108): cfdb does no in-memory sort.
 * Range bounds: equalities give prefix (v1..vk) inclusive at both ends; a lower bound gives
 * (v1..vk, x) exclusive (>) or inclusive (>=), an upper bound likewise; an upper bound alone
 * starts after (v1..vk, null) so unset fields are not returned.
 *
 * Execution: a cursor (include/cfdb/records/cursor.h) whose limit and skip count the records
 * the query returns (after the residual comparisons and the type check); its continuations are
 * the underlying scan's, so a page resumes exactly after its last record in a new transaction.
 * skip applies on every execution, from a continuation too, as Java's plans apply
 * skipThenLimit each time they run: a caller paging a query with skip clears it after the
 * first page (Java: ExecuteProperties.clearSkipAndLimit / setSkip(0)).
 * Errors: 2000 for an unknown type or field, a comparison on a repeated or message field, or
 * a value of the wrong kind; 2108 as above; 4000 out of memory (CFDB_ERR_OUT_OF_MEMORY). */
#ifndef CFDB_RECORDS_QUERY_H
#define CFDB_RECORDS_QUERY_H

#include "cfdb/records/cursor.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfdb_rl_cmp {
    CFDB_RL_EQ = 0,
    CFDB_RL_LT = 1,
    CFDB_RL_LE = 2,
    CFDB_RL_GT = 3,
    CFDB_RL_GE = 4,
} cfdb_rl_cmp;

typedef struct cfdb_rl_filter {
    const char *field;
    cfdb_rl_cmp op;
    cfdb_tuple_elem value;        /* as the field's value is put in an index tuple */
} cfdb_rl_filter;

typedef struct cfdb_rl_query {
    const char *record_type;
    const cfdb_rl_filter *filters;
    uint32_t filter_count;
    const char *sort_field;       /* NULL: any order */
    bool sort_descending;
} cfdb_rl_query;

typedef struct cfdb_rl_plan cfdb_rl_plan;

int cfdb_rl_plan_query(const cfdb_rl_metadata *md, const cfdb_rl_query *q, cfdb_rl_plan **out);
/* Plans with the store's index states, as Java's RecordQueryPlanner given a RecordStoreState:
 * an index that is not readable there is never a candidate (the query falls back to another
 * index or a record scan). cfdb_rl_plan_query plans as if every index were readable; running
 * such a plan on a store where its index is not readable fails with 2000. The plan may be run
 * on other stores of the same metadata. */
int cfdb_rl_plan_query_store(const cfdb_rl_store *s, const cfdb_rl_query *q, cfdb_rl_plan **out);
/* The plan in the Java planner's notation (valid while the plan lives). */
const char *cfdb_rl_plan_explain(const cfdb_rl_plan *p);
/* The index the plan scans, NULL for a record scan. */
const cfdb_rl_index *cfdb_rl_plan_index(const cfdb_rl_plan *p);
/* Runs the plan: props->limit/skip count returned records, props->fetch chooses how an index
 * plan fetches its records; reverse is the plan's (props->reverse is ignored). */
int cfdb_rl_plan_execute(const cfdb_rl_plan *p, cfdb_rl_store *s, FDBTransaction *tr,
                         cfdb_bytes continuation, const cfdb_rl_scan_props *props,
                         cfdb_rl_cursor **out);
void cfdb_rl_plan_free(cfdb_rl_plan *p);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
