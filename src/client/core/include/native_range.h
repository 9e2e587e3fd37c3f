/* NativeAPI's getRange (fdbclient/NativeAPI.actor.cpp, 7.3.77: getRange,
 * transformRangeLimits, getRangeFallback) as a sans-I/O state machine: the
 * selectors go to the storage server as they are — it resolves them — one shard
 * at a time, with libfdb_c's row and byte limits in each GetKeyValuesRequest.
 *
 * Drive it:
 *   CFDB_NR_NEED_LOCATION  find the shard of loc_key (loc_backward: the shard
 *                          ending at it), then cfdb_native_range_located();
 *   CFDB_NR_NEED_REQUEST   send GetKeyValuesRequest{req_begin, req_end, req_limit,
 *                          req_limit_bytes} to that shard, then
 *                          cfdb_native_range_reply() with its rows;
 *   CFDB_NR_NEED_KEYS      getRangeFallback: a shard gave nothing and the selectors
 *                          cannot be carried over; resolve orig_begin and orig_end
 *                          to keys (NativeAPI getKey) and call
 *                          cfdb_native_range_keys();
 *   CFDB_NR_DONE           `result` holds the RangeResult.
 * After a relocation error (wrong shard, unreachable servers) call
 * cfdb_native_range_retry() and start again from the location. Differences from
 * libfdb_c, none in the golden scenarios: the fallback reads the exact range one
 * shard at a time through the same loop (libfdb_c's getExactRange asks for up to
 * 100 shard locations at once).
 *
 * Memory: rows are copied into `rows_arena` (for a read-your-writes read, the snapshot
 * cache's: the cache then keeps them without another copy; the caller holds the lock that
 * guards it around cfdb_native_range_reply); the selectors of later requests and everything
 * else go to `arena`, so sending a request reads nothing from rows_arena. */
#ifndef CFDB_CLIENT_NATIVE_RANGE_H
#define CFDB_CLIENT_NATIVE_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "messages.h"
#include "ryw_read.h"
#include "write_map.h"

enum {
    CFDB_NR_DONE = 0,
    CFDB_NR_NEED_LOCATION = 1,
    CFDB_NR_NEED_REQUEST = 2,
    CFDB_NR_NEED_KEYS = 3,
};

typedef struct cfdb_native_range {
    cfdb_arena *arena, *rows_arena;
    cfdb_key_selector begin, end, orig_begin, orig_end;
    cfdb_range_limits limits, orig_limits;
    bool reverse;
    bool exact; /* after the fallback: begin and end are resolved keys */
    int state;
    cfdb_bytes loc_key;
    bool loc_backward;
    cfdb_bytes shard_begin, shard_end;
    bool modified;
    cfdb_key_selector req_begin, req_end;
    int32_t req_limit, req_limit_bytes;
    cfdb_key_value *rows;
    size_t cap;
    cfdb_native_result result;
} cfdb_native_range;

void cfdb_native_range_start(cfdb_native_range *nr, cfdb_arena *arena, cfdb_arena *rows_arena, cfdb_key_selector begin,
                             cfdb_key_selector end, cfdb_range_limits limits, bool reverse);
/* What to do next (CFDB_NR_*). */
int cfdb_native_range_next(cfdb_native_range *nr);
/* The shard [begin, end) holding loc_key; the bytes must outlive the request. */
void cfdb_native_range_located(cfdb_native_range *nr, cfdb_bytes begin, cfdb_bytes end);
/* The storage server's rows (in read order) and its `more`. Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_native_range_reply(cfdb_native_range *nr, const cfdb_key_value *rows, size_t n, bool more);
/* The fallback's resolved keys. */
void cfdb_native_range_keys(cfdb_native_range *nr, cfdb_bytes begin, cfdb_bytes end);
void cfdb_native_range_retry(cfdb_native_range *nr);
/* wrong_shard_server: the storage server could not resolve a selector inside its
 * shard (it never resolves one past the shard, not even off the ends of the
 * database). NativeAPI then falls back (CFDB_NR_NEED_KEYS); an exact read just
 * tries the shard again. */
void cfdb_native_range_wrong_shard(cfdb_native_range *nr);

#endif
