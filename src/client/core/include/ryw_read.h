/* Read-your-writes range reads and key selector resolution, as libfdb_c 7.3.77's
 * ReadYourWritesTransaction does them (RYWImpl::getRangeValue, getRangeValueBack
 * and read(GetKeyReq) in fdbclient/ReadYourWrites.actor.cpp), as a sans-I/O state
 * machine.
 *
 * The read walks the RYW segment view (ryw_iter.h): rows the transaction wrote or
 * already read are answered locally; for an unknown stretch it asks for one
 * NativeAPI getRange (selectors, limits, direction) — CFDB_RYW_NEED_READ — chosen
 * exactly as libfdb_c chooses it (the row limit grows by the rows the selectors
 * skip and by single-key clears; the byte limit doubles with each request up to
 * REPLY_BYTE_LIMIT), and caches what comes back in the snapshot cache. A key
 * selector is resolved as a range read of one row, so libfdb_c sends
 * GetKeyValuesRequests for it, never GetKeyRequest, and so does cfdb.
 *
 * Nested reads: a range read whose end (forward) or begin (reverse) selector lies
 * beyond the other first resolves that selector as a get_key; that inner read
 * never nests again, so two frames suffice.
 *
 * With wm NULL the read sees only the snapshot cache: a snapshot read with
 * SNAPSHOT_RYW_DISABLE (readWithConflictRangeSnapshot).
 *
 * Memory: selectors, result arrays and materialised keys come from `arena` (the
 * operation's); rows point into the snapshot cache's arena (the transaction's):
 * copy them out before the transaction can be reset. Caller holds the transaction's
 * lock around every call. */
#ifndef CFDB_CLIENT_RYW_READ_H
#define CFDB_CLIENT_RYW_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "messages.h"
#include "ryw_iter.h"
#include "snap_cache.h"
#include "write_map.h"

/* Limits as GetRangeLimits: rows / bytes < 0 mean unlimited; min_rows is 1 for
 * limits built from (rows, bytes). */
typedef struct cfdb_range_limits {
    int32_t rows;
    int32_t bytes;
    int32_t min_rows;
} cfdb_range_limits;

static inline cfdb_range_limits cfdb_range_limits_make(int32_t rows, int32_t bytes)
{
    cfdb_range_limits l = { rows, bytes, 1 };
    return l;
}

/* What a NativeAPI getRange returned (RangeResult with its flags). */
typedef struct cfdb_native_result {
    const cfdb_key_value *rows; /* in read order (descending for a reverse read) */
    size_t n;
    bool more, read_to_begin, read_through_end;
    bool has_read_through;
    cfdb_bytes read_through;
    bool rows_in_cache_arena; /* rows, their array and bytes live in the snapshot cache's arena */
} cfdb_native_result;

enum {
    CFDB_RYW_DONE = 0,
    CFDB_RYW_NEED_READ = 1,
};

typedef struct cfdb_ryw_frame {
    uint8_t pc;
    bool reverse;
    bool get_key, get_key_back;
    cfdb_key_selector begin, end;
    cfdb_range_limits limits;
    cfdb_ryw_iter it, it_end;
    cfdb_key_value *rows;
    size_t n, cap;
    bool more;
    int64_t additional_rows;
    int items_past;
    int request_count;
    bool read_to_begin, read_through_end;
    int actual_begin_offset, actual_end_offset;
    cfdb_key_selector read_begin, read_end;
    cfdb_bytes key; /* get_key: the answer */
} cfdb_ryw_frame;

typedef struct cfdb_ryw_read {
    cfdb_snap_cache *cache;
    cfdb_write_map *wm;
    cfdb_arena *arena;
    cfdb_bytes max_key;
    cfdb_ryw_frame f[2];
    int depth;
    /* CFDB_RYW_NEED_READ: the NativeAPI getRange to run */
    cfdb_key_selector req_begin, req_end;
    cfdb_range_limits req_limits;
    bool req_reverse;
    const cfdb_native_result *fed;
    /* CFDB_RYW_DONE */
    const cfdb_key_value *rows;
    size_t n;
    bool more, read_to_begin, read_through_end;
    cfdb_bytes key;
} cfdb_ryw_read;

/* get_range(begin, end, limits, reverse) after RYW's checks: selectors without
 * orEqual, limits not reached and valid. */
void cfdb_ryw_read_range(cfdb_ryw_read *r, cfdb_snap_cache *cache, cfdb_write_map *wm, cfdb_arena *arena,
                         cfdb_bytes max_key, cfdb_key_selector begin, cfdb_key_selector end,
                         cfdb_range_limits limits, bool reverse);
/* get_key(sel). */
void cfdb_ryw_read_key(cfdb_ryw_read *r, cfdb_snap_cache *cache, cfdb_write_map *wm, cfdb_arena *arena,
                       cfdb_bytes max_key, cfdb_key_selector sel);
/* Runs until done or a NativeAPI read is needed: CFDB_RYW_DONE (rows/n/more/flags,
 * or key), CFDB_RYW_NEED_READ (req_*), CFDB_ERR_ACCESSED_UNREADABLE, or
 * 4000 unknown_error (out of memory); errors are FoundationDB codes, never 0 or 1. */
int cfdb_ryw_read_advance(cfdb_ryw_read *r);
/* The NativeAPI read's result; res must stay valid until the next advance returns.
 * Then call advance again. */
void cfdb_ryw_read_feed(cfdb_ryw_read *r, const cfdb_native_result *res);

/* GetRangeLimits helpers (fdbclient/NativeAPI.actor.cpp). */
bool cfdb_limits_reached(const cfdb_range_limits *l);
void cfdb_limits_decrement_row(cfdb_range_limits *l, const cfdb_key_value *kv);
void cfdb_limits_decrement_rows(cfdb_range_limits *l, const cfdb_key_value *rows, size_t n);

#endif
