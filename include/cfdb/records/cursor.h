/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer cursors: records by primary-key range, index entries over tuple ranges, and the
 * records of index entries fetched by SCAN_AND_FETCH or USE_REMOTE_FETCH (get_mapped_range),
 * each resumable in a new transaction from an opaque continuation (fdb-record-layer's
 * KeyValueCursorBase, SplitHelper.KeyValueUnsplitter, FDBRecordStore.scanTypedRecords /
 * scanIndex / scanIndexRemoteFetch, FDBRecordStoreBase.fetchIndexRecords).
 *
 * Ranges: a low and a high tuple, each with an endpoint type (Java's EndpointType):
 *   TREE_START / TREE_END  no bound (the tuple is ignored);
 *   RANGE_INCLUSIVE        low: keys >= pack(low); high: every key that has pack(high) as
 *                          prefix is included (pack(high) + 0xff is the exclusive end);
 *   RANGE_EXCLUSIVE        low: keys with pack(low) as prefix are excluded (strinc); high:
 *                          keys >= pack(high) are excluded.
 * Tuples compare as their packed bytes, so (x) inclusive covers (x, anything).
 *
 * Continuations: the bytes of Java's KeyValueCursorContinuation protobuf
 *   0x0a len <the last key read minus the range's common prefix> 0x11 <magic, 8 bytes LE>
 * where the common prefix is the subspace plus the bytes pack(low) and pack(high) share (Java's
 * calculatePrefixLength; both tuples must be the same ones on resume). Decoding accepts Java's
 * older form too (the raw suffix) as Java's getInnerContinuation does. A cursor that ran to the
 * end has no continuation (end: an empty token, is_end true). Resuming forward starts right
 * after the last key read (key + 0x00), reverse ends right before it.
 *
 * Limits: limit (0 = none) counts rows returned in this call (records for record scans, index
 * entries for index scans and fetches — orphans skipped by SKIP count, as in Java where the
 * limit sits on the index cursor). skip drops the first rows of every execution, including
 * one that resumes from a continuation, exactly as Java applies ExecuteProperties' skip each
 * time a cursor is built (KeyValueCursorBase.Builder adds it to the key selector after placing
 * the range at the continuation; scanTypedRecords puts .skip(n) on the unsplitter each time):
 * a continuation names the position after the last row returned, and the next execution
 * skips another `skip` rows from there. To page through "rows from the skip-th on" the
 * caller clears skip after the first page (Java callers use clearSkipAndLimit /
 * setSkip(0) for the pages that follow); to page with a gap of `skip` rows between pages, it
 * keeps it. The continuation taken before any row was returned is where this execution
 * began, so resuming from it skips again. Index scans and fetches skip with a key-selector
 * offset as Java does (begin + skip forward, end - skip reverse: skipped entries are never
 * read, orphans among them included); record scans skip whole records.
 *
 * Items and their bytes live in the arena given to next(); the cursor keeps its own arena for
 * batches. Errors: FoundationDB codes (from the transaction, 1044 for stored bytes that do
 * not decode, 2000 for misuse such as a continuation that is not one of ours or does not
 * fit the range or an index scan of an index that is not readable in the store — Java's
 * ScanNonReadableIndexException —, 2108 for a remote fetch the store cannot express, 4000 out of memory (CFDB_ERR_OUT_OF_MEMORY)). */
#ifndef CFDB_RECORDS_CURSOR_H
#define CFDB_RECORDS_CURSOR_H

#include "cfdb/records/store.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfdb_rl_endpoint {
    CFDB_RL_TREE_START = 0,
    CFDB_RL_TREE_END = 1,
    CFDB_RL_RANGE_INCLUSIVE = 2,
    CFDB_RL_RANGE_EXCLUSIVE = 3,
} cfdb_rl_endpoint;

typedef struct cfdb_rl_range {
    const cfdb_tuple *low, *high;       /* may be NULL with TREE_START / TREE_END */
    cfdb_rl_endpoint low_endpoint, high_endpoint;
} cfdb_rl_range;

/* Every key: TREE_START .. TREE_END. */
static inline cfdb_rl_range cfdb_rl_range_all(void)
{
    cfdb_rl_range r = { NULL, NULL, CFDB_RL_TREE_START, CFDB_RL_TREE_END };
    return r;
}

typedef enum cfdb_rl_fetch_method {
    CFDB_RL_SCAN_AND_FETCH = 0,
    CFDB_RL_USE_REMOTE_FETCH = 1,
    CFDB_RL_USE_REMOTE_FETCH_WITH_FALLBACK = 2,
} cfdb_rl_fetch_method;

/* Java's IndexOrphanBehavior: an index entry whose record is missing. */
typedef enum cfdb_rl_orphan {
    CFDB_RL_ORPHAN_ERROR = 0,     /* the cursor fails with 1044 */
    CFDB_RL_ORPHAN_SKIP = 1,
    CFDB_RL_ORPHAN_RETURN = 2,    /* returned with record NULL */
} cfdb_rl_orphan;

typedef struct cfdb_rl_scan_props {
    bool reverse;
    uint32_t limit;               /* rows returned by this cursor; 0 = no limit */
    uint32_t skip;                /* rows dropped first, on every execution (from a
                                     continuation too: see Limits above) */
    bool snapshot;                /* snapshot reads (not with remote fetch: the client refuses) */
    bool mode_given;              /* false: EXACT with a limit, else WANT_ALL (Java's choice
                                     when the scan properties name no streaming mode) */
    FDBStreamingMode mode;
    uint32_t pipeline;            /* SCAN_AND_FETCH record reads in flight; 0 = 64 */
    cfdb_rl_fetch_method fetch;   /* for index record scans */
    cfdb_rl_orphan orphans;
} cfdb_rl_scan_props;

/* Why a cursor stopped (Java's NoNextReason). */
typedef enum cfdb_rl_stop {
    CFDB_RL_SOURCE_EXHAUSTED = 0,
    CFDB_RL_RETURN_LIMIT_REACHED = 1,
} cfdb_rl_stop;

typedef struct cfdb_rl_item {
    /* record scans and fetches */
    const cfdb_rl_record_type *type;  /* NULL for an orphan returned by ORPHAN_RETURN */
    cfdb_pb_msg *record;
    cfdb_tuple primary_key;
    uint64_t record_bytes;            /* serialized size of the union message */
    bool split;                       /* stored in several pieces */
    cfdb_rl_version version;          /* the record's version, when stored with one (complete
                                         when read from the database, incomplete when saved
                                         in this transaction) */
    /* index scans and fetches */
    cfdb_tuple index_key;             /* the entry's key tuple (index subspace removed) */
    cfdb_tuple index_value;           /* the entry's value tuple (empty for plain VALUE) */
} cfdb_rl_item;

typedef struct cfdb_rl_cursor cfdb_rl_cursor;

/* Records whose primary keys are in range. */
int cfdb_rl_scan_records(cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_range *range,
                         cfdb_bytes continuation, const cfdb_rl_scan_props *props,
                         cfdb_rl_cursor **out);
/* Entries of a VALUE index whose keys are in range (no records fetched). */
int cfdb_rl_scan_index(cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_index *ix,
                       const cfdb_rl_range *range, cfdb_bytes continuation,
                       const cfdb_rl_scan_props *props, cfdb_rl_cursor **out);
/* Entries of a VALUE index with their records, by props->fetch. */
int cfdb_rl_scan_index_records(cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_index *ix,
                               const cfdb_rl_range *range, cfdb_bytes continuation,
                               const cfdb_rl_scan_props *props, cfdb_rl_cursor **out);

/* The next item into *item (its memory in a): 0 with *has_next true, or 0 with *has_next
 * false when the cursor stopped (cfdb_rl_cursor_stop says why), or an error (the cursor
 * then stays failed). */
int cfdb_rl_cursor_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has_next);
/* Where to resume after the last item returned (before any: where the scan began; after the
 * end: is_end and no bytes). Valid until the next call on the cursor. */
cfdb_bytes cfdb_rl_cursor_continuation(const cfdb_rl_cursor *c, bool *is_end);
cfdb_rl_stop cfdb_rl_cursor_stop(const cfdb_rl_cursor *c);
/* Which fetch the cursor ended up using (a fallback shows as SCAN_AND_FETCH). */
cfdb_rl_fetch_method cfdb_rl_cursor_fetch_used(const cfdb_rl_cursor *c);
/* What the cursor did: the most SCAN_AND_FETCH record reads it had in flight at once, and the
 * range / mapped range requests its index or record key-value cursor issued (batches). */
uint32_t cfdb_rl_cursor_max_in_flight(const cfdb_rl_cursor *c);
uint64_t cfdb_rl_cursor_requests(const cfdb_rl_cursor *c);
void cfdb_rl_cursor_free(cfdb_rl_cursor *c);

/* The continuation token codec (Java's KeyValueCursorBase.Continuation): inner is the key
 * suffix. Decoding gives the inner bytes (pointing into data), or data itself when it is not
 * a KeyValueCursorContinuation with the magic number (Java's fallback to the old form). */
#define CFDB_RL_CONTINUATION_MAGIC 6773487359078157740ll
int cfdb_rl_continuation_encode(cfdb_arena *a, cfdb_bytes inner, cfdb_bytes *out);
int cfdb_rl_continuation_decode(cfdb_bytes data, cfdb_bytes *inner);

/* The mapper tuple USE_REMOTE_FETCH sends (StandardIndexMaintainer.createRemoteFetchMapper):
 * the records subspace's tuple elements, "{K[i]}" for each primary key column's position in
 * the index entry key, then "{...}". 2108 when the store prefix is not a packed tuple. */
int cfdb_rl_remote_fetch_mapper(const cfdb_rl_store *s, const cfdb_rl_index *ix, cfdb_arena *a,
                                cfdb_bytes *out);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
