/* A complete read-your-writes get_range as a sans-I/O state machine: the
 * selectors are normalised (removeOrEqual, trivial-empty test), resolved against
 * storage + local writes when they are not plain firstGreaterOrEqual, then the
 * resolved key range is read through the write map with the row/byte limits. The
 * caller answers each CFDB_WM_RANGE_NEED_STORAGE with storage rows (snapshot
 * reads at the transaction's read version) and, for non-snapshot reads, adds
 * cfdb_ryw_range_conflict() to the read conflict ranges at the end. */
#ifndef CFDB_CLIENT_RYW_RANGE_H
#define CFDB_CLIENT_RYW_RANGE_H

#include <stdbool.h>

#include "key_selector.h"
#include "write_map.h"

typedef enum cfdb_ryw_range_stage {
    CFDB_RYW_RANGE_RESOLVE_BEGIN,
    CFDB_RYW_RANGE_RESOLVE_END,
    CFDB_RYW_RANGE_READ,
    CFDB_RYW_RANGE_FINISHED,
} cfdb_ryw_range_stage;

typedef struct cfdb_ryw_range {
    cfdb_write_map *wm;
    cfdb_arena *arena;
    cfdb_key_selector begin, end; /* after removeOrEqual */
    bool reverse;
    cfdb_range_limits limits;
    cfdb_bytes max_key;
    cfdb_ryw_range_stage stage;
    cfdb_sel_resolver res;
    bool res_active;
    cfdb_bytes begin_key, end_key; /* resolved */
    bool read_to_begin, read_through_end;
    cfdb_wm_range_iter it;
    bool it_active;
    /* the request to answer when NEED_STORAGE: [req_begin, req_end), req_reverse */
    cfdb_bytes req_begin, req_end;
    bool req_reverse;
    /* result (valid after DONE) */
    const cfdb_key_value *rows;
    size_t count;
    bool more;
} cfdb_ryw_range;

/* Starts get_range(begin, end, limits, reverse). max_key: cfdb_max_read_key().
 * The caller has already validated keys and limits (a reached limit means no
 * call at all: the result is empty). Returns 0 or -1. */
int cfdb_ryw_range_start(cfdb_ryw_range *r, cfdb_write_map *wm, cfdb_key_selector begin, cfdb_key_selector end,
                         cfdb_range_limits limits, bool reverse, cfdb_bytes max_key, cfdb_arena *arena);
/* CFDB_WM_RANGE_DONE (r->rows, r->count, r->more), CFDB_WM_RANGE_NEED_STORAGE
 * (read r->req_begin .. r->req_end, descending when r->req_reverse), an error code
 * (accessed_unreadable) or -1. */
int cfdb_ryw_range_advance(cfdb_ryw_range *r);
void cfdb_ryw_range_feed(cfdb_ryw_range *r, const cfdb_key_value *rows, size_t n, bool more);
/* The read conflict range of the finished read (RYWImpl::addConflictRange);
 * begin >= end means none. Returns 0 or -1. */
int cfdb_ryw_range_conflict(const cfdb_ryw_range *r, cfdb_bytes *begin, cfdb_bytes *end);
void cfdb_ryw_range_free(cfdb_ryw_range *r);

#endif
