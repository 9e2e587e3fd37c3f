/* SPDX-License-Identifier: Apache-2.0 */
/* Fixture for the Record Layer cursor tests (test_cursor.c, test_fetch.c, test_query.c): a
 * store of Person records (rl_types.proto) under a tuple prefix ("rlscan", n), with a VALUE
 * index Person$name on name, saved through the record store; scans run to their end in one
 * fresh transaction each, collecting ids and the continuation after every item. */
#ifndef CFDB_TESTS_RL_SCAN_FIXTURE_H
#define CFDB_TESTS_RL_SCAN_FIXTURE_H

#include "../../api/api_helpers.h"
#include "cfdb/records/cursor.h"
#include "rl_test_util.h"

#define RLS_MAX 1200

extern cfdb_arena rls_arena;

/* Metadata: Person keyed by (record type key, id), split_long_records, indexes Person$name
 * (field name) and Person$color_score (color, score). */
cfdb_rl_metadata *rls_metadata(void);
/* The same with store_record_versions, and the one index Person$name. */
cfdb_rl_metadata *rls_metadata_versions(void);
/* pack(("rlscan", n)) */
cfdb_bytes rls_prefix(int n);

typedef struct rls_person {
    int64_t id;
    const char *name;
    int color;          /* 0: unset */
    double score;
    size_t blob;        /* bytes of blob (0: unset) */
} rls_person;

/* Saves the people in transactions of at most 50 records (or 5 when any blob is large). */
/* The Person record of p, in a. */
cfdb_pb_msg *rls_person_msg(cfdb_arena *a, const cfdb_rl_metadata *md, const rls_person *p);
void rls_save(cfdb_rl_metadata *md, cfdb_bytes prefix, const rls_person *p, int n);
/* The same; with versions (store_record_versions), versions[i] gets person i's version as
 * committed (the transaction's versionstamp and the save's local version). */
void rls_save_versioned(cfdb_rl_metadata *md, cfdb_bytes prefix, const rls_person *p, int n,
                        uint8_t (*versions)[12]);
/* Deletes the record with id (leaving its index entries: an orphan) by clearing its keys. */
void rls_orphan(cfdb_bytes prefix, int64_t id);

typedef enum { RLS_RECORDS, RLS_INDEX, RLS_FETCH } rls_kind;

typedef struct rls_result {
    int n;
    int64_t ids[RLS_MAX];            /* the id of each item (-1: orphan returned) */
    size_t bytes[RLS_MAX];           /* record sizes */
    cfdb_rl_version versions[RLS_MAX];   /* record versions */
    bool split[RLS_MAX];             /* records stored in pieces */
    uint64_t hash[RLS_MAX];          /* FNV-1a of the record re-encoded (0: none) */
    cfdb_bytes conts[RLS_MAX];       /* continuation after each item */
    cfdb_bytes final_cont;
    bool final_end;
    cfdb_rl_stop stop;
    cfdb_rl_fetch_method used;
    uint32_t max_in_flight;
    uint64_t requests;
    int err;
} rls_result;

/* Runs a cursor to its end in a fresh transaction (retried on retryable errors). */
void rls_scan(rls_kind kind, cfdb_rl_metadata *md, cfdb_bytes prefix, const char *index,
              const cfdb_rl_range *range, cfdb_bytes cont, const cfdb_rl_scan_props *props,
              rls_result *out);

/* The server's counters from "status". */
void rls_counters(unsigned long long *reads, unsigned long long *mapped);

#endif
