/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by the Record Layer's cursors (rl_kvcursor.c, rl_unsplit.c, rl_scan.c,
 * rl_fetch.c): the key-value cursor over a resolved range, and the unsplitter that puts
 * records stored in pieces back together. */
#ifndef CFDB_RECORDS_RL_CURSOR_INTERNAL_H
#define CFDB_RECORDS_RL_CURSOR_INTERNAL_H

#include "cfdb/records/cursor.h"

/* ---- key-value cursor (rl_kvcursor.c): KeyValueCursorBase ---- */

typedef struct rl_kv {
    cfdb_bytes key, value;
    const FDBKeyValue *sub;     /* mapped reads: the secondary range's rows */
    int nsub;
} rl_kv;

typedef struct rl_kvc {
    FDBTransaction *tr;
    bool reverse, snapshot, mapped;
    cfdb_bytes mapper;
    /* selectors of the next request */
    cfdb_bytes begin, end;      /* owned copies (malloc) */
    bool begin_or_equal, end_or_equal;
    int begin_offset, end_offset;
    uint32_t limit, seen;       /* rows (0 = no limit) */
    FDBStreamingMode mode;
    int iteration;
    /* the current batch */
    FDBFuture *f;
    const FDBKeyValue *kvs;
    const FDBMappedKeyValue *mkvs;
    int n, pos;
    bool more, exhausted, limited;
    /* continuation: the last key read minus prefix_len bytes */
    size_t prefix_len;
    uint8_t *last_key;
    size_t last_len, last_cap;
    bool any;
    uint64_t requests;          /* range / mapped range requests issued */
} rl_kvc;

/* The byte range of range under subspace sub, with the continuation applied (Java's
 * KeyValueCursorBase.Builder.prepare and TupleRange.toRange); *prefix_len is the length of
 * the part every key of the range shares that continuations leave out. 2000 when the
 * continuation does not decode to a position inside the range. */
int rl_resolve_range(cfdb_arena *a, cfdb_bytes sub, const cfdb_rl_range *range,
                     cfdb_bytes continuation, bool reverse, cfdb_bytes *begin, cfdb_bytes *end,
                     size_t *prefix_len);

/* Opens a cursor over [begin, end); skip moves the first selector (Java: begin + skip,
 * end - skip); mapper non-empty: get_mapped_range. */
int rl_kvc_open(rl_kvc *c, FDBTransaction *tr, cfdb_bytes begin, cfdb_bytes end, size_t prefix_len,
                const cfdb_rl_scan_props *p, uint32_t limit, uint32_t skip, cfdb_bytes mapper);
/* The next row (valid until the next call): 0 with *has; *has false at the end (exhausted or
 * limited says which). */
int rl_kvc_next(rl_kvc *c, rl_kv *kv, bool *has);
/* Continuation bytes (protobuf form) for the last key read, into a. */
int rl_kvc_continuation(const rl_kvc *c, cfdb_arena *a, cfdb_bytes *out);
void rl_kvc_close(rl_kvc *c);

/* ---- unsplitter (rl_unsplit.c): SplitHelper.KeyValueUnsplitter ---- */

typedef struct rl_unsplit {
    bool reverse;
    bool unsuffixed;            /* every key is a whole record (omit_unsplit_record_suffix) */
    size_t base_len;            /* length of the records subspace prefix R */
    cfdb_arena arena;           /* the pieces of the record being assembled */
    cfdb_arena *whole;          /* rl_unsplit_whole: the caller's arena holds the pieces instead
                                   (the item's, reset by the caller), and no record before the
                                   one to remember: no allocation of its own per record */
    bool active;
    uint8_t *prefix;            /* R + pack(pk) of the record being assembled */
    size_t prefix_len, prefix_cap;
    int64_t index;              /* the last suffix seen */
    bool has_data;
    cfdb_bytes *pieces;
    uint32_t npieces, cap;
    uint64_t bytes;
    bool split;
    cfdb_rl_version version;    /* from the record's (-1) key, when it has one */
    uint8_t *last;              /* R + pack(pk) of the record taken before (malloc) */
    size_t last_len, last_cap;
    bool has_last;
} rl_unsplit;

typedef enum { RL_US_MORE = 0, RL_US_DONE_WITH = 1, RL_US_DONE_BEFORE = 2 } rl_us_action;

void rl_unsplit_init(rl_unsplit *u, bool reverse, bool unsuffixed, size_t base_len);
void rl_unsplit_free(rl_unsplit *u);
/* Feeds one row. DONE_WITH: the record is complete with this row; DONE_BEFORE: the record
 * was complete before it (the row is not consumed: feed it again after taking the record).
 * 1044 for pieces out of order or a record without its start. */
int rl_unsplit_add(rl_unsplit *u, cfdb_bytes key, cfdb_bytes value, rl_us_action *action);
/* A scan continued after key (the last row of a record taken on an earlier page): rows of
 * that record's primary key that follow are refused as the rest of one page would be.
 * Keys that are not a record's row are ignored. */
int rl_unsplit_after(rl_unsplit *u, cfdb_bytes key);
/* At the end of the input: *complete when a record was in progress (1044 when what is held
 * cannot be a whole record). */
int rl_unsplit_finish(rl_unsplit *u, bool *complete);
/* Takes the completed record: decodes the union message into item (type, record, primary
 * key, sizes) in a, then resets for the next record. */
int rl_unsplit_take(rl_unsplit *u, const cfdb_rl_metadata *md, cfdb_arena *a, cfdb_rl_item *item);
/* The one record in rows 0..n-1 (all the keys of one primary key, in key order; row(rows, i)
 * gives row i): *found when there was one, then item as rl_unsplit_take. 1044 when the rows
 * hold more than one record or not a whole one. u is initialized here and freed. */
typedef void (*rl_row_fn)(const void *rows, uint32_t i, cfdb_bytes *key, cfdb_bytes *value);
int rl_unsplit_whole(bool unsuffixed, size_t base_len, const cfdb_rl_metadata *md, cfdb_arena *a,
                     const void *rows, uint32_t n, rl_row_fn row, cfdb_rl_item *item, bool *found);

/* The primary key of an index entry's key tuple (Index.getEntryPrimaryKey); pk_len columns. */
int rl_entry_primary_key(cfdb_arena *a, const cfdb_rl_index *ix, const cfdb_tuple *key,
                         uint32_t pk_len, cfdb_tuple *pk);
/* The primary key length all record types of ix share, 0 when they differ. */
uint32_t rl_common_pk_len(const cfdb_rl_metadata *md, const cfdb_rl_index *ix);
/* P + (2, subspace key) */
int rl_index_subspace(cfdb_arena *a, const cfdb_rl_store *s, const cfdb_rl_index *ix, cfdb_bytes *out);

/* ---- the cursor (rl_scan.c; fetching in rl_fetch.c) ---- */

enum { RL_CUR_RECORDS = 0, RL_CUR_INDEX = 1, RL_CUR_FETCH = 2, RL_CUR_QUERY = 3 };

/* One SCAN_AND_FETCH read in flight: an index entry and the future of its record's keys. */
#define RL_SLOT_BLOCK 1024

typedef struct rl_fetch_slot {
    cfdb_arena arena;
    cfdb_bytes key, value;        /* the index entry (copied) */
    cfdb_bytes cont;              /* the continuation after it */
    cfdb_bytes rec_begin, rec_end;
    FDBFuture *f;
    int err;                      /* the entry could not be read: reported when it is reached */
} rl_fetch_slot;

struct cfdb_rl_cursor {
    int kind;
    cfdb_rl_store *s;
    const cfdb_rl_metadata *md;
    const cfdb_rl_index *ix;
    FDBTransaction *tr;
    cfdb_rl_scan_props props;
    cfdb_arena arena;             /* for the cursor's life: range tuples, subspaces, mapper */
    cfdb_rl_range range;          /* deep copy */
    cfdb_bytes sub;               /* the scanned subspace (records or index) */
    cfdb_bytes records;           /* R */
    bool unsuffixed;
    uint32_t pk_len;
    rl_kvc kv;
    bool kv_open;
    /* records: the unsplitter, a row it handed back, and the last row it consumed */
    rl_unsplit us;
    bool us_open, pending;
    rl_kv pending_kv;
    uint8_t *cons_key;
    size_t cons_len, cons_cap;
    /* continuation after the last item */
    cfdb_arena cont_arena;
    cfdb_bytes cont;
    bool cont_end;
    int err;
    bool stopped;
    cfdb_rl_stop stop;
    uint32_t returned, skipped;
    /* fetch */
    cfdb_rl_fetch_method used;
    rl_fetch_slot *slots;
    uint8_t *slot_mem;            /* the slots' arenas' first blocks (RL_SLOT_BLOCK each), one
                                     allocation for them all */
    uint32_t nslots, head, count;
    bool index_done;
    int fill_err;                 /* the index cursor failed: reported after the slots before */
    uint32_t max_in_flight;
    uint64_t requests_before;     /* requests of key-value cursors closed by a fallback */
    bool fell_back;
    /* query: the scan it runs and the plan's residual comparisons */
    cfdb_rl_cursor *inner;
    const struct cfdb_rl_plan *plan;
};

/* rl_query.c */
int rl_query_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has);

/* rl_fetch.c */
int rl_fetch_open(cfdb_rl_cursor *c, cfdb_bytes continuation);
int rl_fetch_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has);
void rl_fetch_close(cfdb_rl_cursor *c);
/* rl_scan.c: an index row into item's index_key, index_value and primary_key. */
int rl_index_item(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_bytes key, cfdb_bytes value, cfdb_rl_item *item);
/* rl_scan.c: the records of one primary key from its rows (forward, R + pk prefixed);
 * *found false when there are none. */
int rl_record_from_rows(cfdb_rl_cursor *c, cfdb_arena *a, const FDBKeyValue *rows, int n,
                        cfdb_rl_item *item, bool *found);
/* item->version from a versionstamp held for commit, when item's record was saved with one in
 * this transaction, or, in a store with old-format versions, from P + (8, pk...) (rl_store.c;
 * as a load gets it). */
int rl_pending_item_version(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_rl_item *item);

#endif
