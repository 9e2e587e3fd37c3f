/* The read-your-writes view of the key space as segments (RYWIterator in
 * fdbclient/RYWIterator.cpp, 7.3.77): the snapshot cache's segments (unknown, empty,
 * one row) overlaid with the write map's (unmodified, cleared, a written key that is
 * independent of or dependent on the database's value). The overlay's type:
 *
 *                 cache: unknown   empty    row
 *   unmodified            unknown   empty    row
 *   cleared               empty     empty    empty
 *   independent write     row       row      row
 *   dependent write       unknown   row      row
 *
 * A segment is unreadable where the write map says so (versionstamped operations);
 * the read algorithms then fail with accessed_unreadable unless bypassed.
 *
 * Stepping is incremental, as RYWIterator advances its two sub-iterators: next / prev
 * move only the side(s) whose segment ends (begins) at the merged boundary, the cache
 * side from its entry and row index (cfdb_snap_seg_next / _prev), the write map side
 * forward through cursors into the write map's entries and its cleared and unreadable
 * range sets. Those cursors and the cache segment are valid for the versions of the
 * cache and the write map they were computed at (cver, wver); when either changed (a
 * cache insert by this or another read, a write while a read waits for storage), a step
 * re-locates both sides from the key with searches. So the iterator behaves as a
 * position: every step gives the segment a fresh search from the key would give.
 * Versions count from the cache's and write map's init: an iterator does not outlive
 * the transaction's reset (the client cancels its reads then).
 *
 * The write map's segments are derived from cfdb's write map (write_map.h): a key
 * with pending operations is a one-key segment [k, k\0); between such keys the
 * boundaries of cleared and unreadable ranges cut the gaps. FoundationDB's WriteMap
 * can hold two adjacent cleared segments where cfdb's range set holds one (two
 * touching clear_range calls); that changes no request: a cleared segment of more
 * than one key is never counted as a single-key clear either way. */
#ifndef CFDB_CLIENT_RYW_ITER_H
#define CFDB_CLIENT_RYW_ITER_H

#include <stdbool.h>

#include "snap_cache.h"
#include "write_map.h"

typedef enum cfdb_ryw_seg {
    CFDB_RYW_UNKNOWN = 0,
    CFDB_RYW_EMPTY = 1,
    CFDB_RYW_KV = 2,
} cfdb_ryw_seg;

typedef enum cfdb_wm_seg {
    CFDB_WM_SEG_UNMODIFIED = 0,
    CFDB_WM_SEG_CLEARED = 1,
    CFDB_WM_SEG_INDEPENDENT = 2,
    CFDB_WM_SEG_DEPENDENT = 3,
} cfdb_wm_seg;

typedef struct cfdb_ryw_iter {
    const cfdb_snap_cache *cache;
    cfdb_write_map *wm; /* NULL: the cache alone (snapshot reads without RYW) */
    cfdb_arena *scratch;
    /* the segment */
    cfdb_xkey begin, end;
    cfdb_ryw_seg type;
    cfdb_wm_seg wtype;
    bool unreadable;
    cfdb_snap_seg c;           /* the cache's segment */
    cfdb_xkey wbegin, wend;    /* the write map's segment */
    const cfdb_wm_entry *we;   /* its entry when it is a written key's, else NULL */
    /* what c and the write map's segment were computed at */
    uint64_t cver, wver;
    /* wcur: the write map cursors are valid for wbegin: wn the first entry whose key is
     * >= wbegin, wc / wu the first cleared / unreadable range whose end is > wbegin */
    bool wcur;
    const cfdb_omap_node *wn, *wc, *wu;
} cfdb_ryw_iter;

void cfdb_ryw_iter_init(cfdb_ryw_iter *it, const cfdb_snap_cache *cache, cfdb_write_map *wm, cfdb_arena *scratch);
/* The segment containing x. Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_ryw_iter_skip(cfdb_ryw_iter *it, cfdb_xkey x);
/* The next / previous segment. Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_ryw_iter_next(cfdb_ryw_iter *it);
int cfdb_ryw_iter_prev(cfdb_ryw_iter *it);
/* Refreshes the segment at the same position after the cache or writes changed. */
int cfdb_ryw_iter_refresh(cfdb_ryw_iter *it);
static inline bool cfdb_ryw_iter_eq(const cfdb_ryw_iter *a, const cfdb_ryw_iter *b)
{
    return cfdb_xkey_eq(a->begin, b->begin);
}
/* The row of a KV segment: *present false when the writes delete it (a
 * compare-and-clear). Returns 0, 4000 unknown_error (out of memory) or CFDB_ERR_ACCESSED_UNREADABLE. Memory of the
 * computed value: the write map's arena. */
int cfdb_ryw_iter_kv(cfdb_ryw_iter *it, cfdb_key_value *out, bool *present);
/* skipContiguous / skipContiguousBack on a KV segment the writes leave to the cache:
 * the cache rows from this one onward (backward: downward) while their keys stay
 * below bound (backward: at or above bound) and inside the writes' unmodified
 * segment. The iterator moves to the last of them. *rows points at the first row in
 * key order, *n is how many. On any other segment: just this row (*n = 1, rows
 * computed by cfdb_ryw_iter_kv into *one). Returns 0 or an error (4000 unknown_error: out of memory). */
int cfdb_ryw_iter_run(cfdb_ryw_iter *it, cfdb_xkey bound, bool backward, cfdb_key_value *one,
                      const cfdb_key_value **rows, size_t *n, bool *present);

#endif
