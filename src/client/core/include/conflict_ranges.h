/* Read conflict ranges of a transaction and the commit-time conflict rules:
 * - reads add the parts of their range that local writes do not decide
 *   (RYWImpl::updateConflictMap: unmodified keys and keys with dependent atomic
 *   ops count, cleared keys and independently written keys do not), coalesced;
 * - the ranges a get_key / get_range read adds (RYWImpl::addConflictRange);
 * - the self-conflict key "\xff/SC/" + 16 random bytes added as read and write
 *   range when no write range intersects a read range (Transaction::commitMutations
 *   / makeSelfConflicting, unless CAUSAL_WRITE_RISKY);
 * - the write range of a SetVersionstampedKey (getVersionstampKeyRange). */
#ifndef CFDB_CLIENT_CONFLICT_RANGES_H
#define CFDB_CLIENT_CONFLICT_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"
#include "range_set.h"
#include "write_map.h"

typedef struct cfdb_read_conflicts {
    cfdb_range_set set;
    cfdb_arena *arena;
} cfdb_read_conflicts;

int cfdb_read_conflicts_init(cfdb_read_conflicts *rc, cfdb_arena *arena);
/* Adds [begin, end) minus what wm decides locally (wm may be NULL: everything).
 * Also the path of add_conflict_range(READ) after its checks and truncation.
 * Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_read_conflicts_add(cfdb_read_conflicts *rc, const cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end);
/* A get(key): [key, key\0) unless wm decides the key. */
int cfdb_read_conflicts_add_key(cfdb_read_conflicts *rc, const cfdb_write_map *wm, cfdb_bytes key);
static inline size_t cfdb_read_conflicts_count(const cfdb_read_conflicts *rc)
{
    return cfdb_range_set_count(&rc->set);
}

/* Range a non-snapshot get_key(sel) returning result reads:
 * offset <= 0: [result, k'), else [k', keyAfter(result)) where k' is sel.key
 * (keyAfter(sel.key) when or_equal). Memory from arena. Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_get_key_conflict_range(const cfdb_key_selector *sel, cfdb_bytes result, cfdb_arena *arena,
                                cfdb_bytes *begin, cfdb_bytes *end);

/* Range a non-snapshot get_range reads (RYWImpl::addConflictRange for
 * GetRangeReq): begin/end are the selectors as passed to the read (or_equal
 * already removed), rows the result in scan order. read_to_begin /
 * read_through_end as the result reports them (false unless the read reached the
 * ends of the key space). Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory); an empty range means nothing to add. */
int cfdb_get_range_conflict_range(const cfdb_key_selector *begin_sel, const cfdb_key_selector *end_sel, bool reverse,
                                  const cfdb_key_value *rows, size_t n, bool more, bool read_to_begin,
                                  bool read_through_end, cfdb_bytes max_read_key, cfdb_arena *arena,
                                  cfdb_bytes *begin, cfdb_bytes *end);

/* NativeAPI's intersects(): whether some range of a overlaps some range of b. */
bool cfdb_ranges_intersect(const cfdb_key_range *a, size_t na, const cfdb_key_range *b, size_t nb);

/* "\xff/SC/" + 16 bytes (a random UID: first then second, little-endian). */
#define CFDB_SELF_CONFLICT_PREFIX "\xff/SC/"
int cfdb_self_conflict_key(const uint8_t random16[16], cfdb_arena *arena, cfdb_bytes *key);

/* The conflict ranges a commit request carries: reads (coalesced, key order) and
 * writes as given, plus the self-conflict range in both when no write range
 * intersects a read range and causal_write_risky is off. Arrays from arena.
 * Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_commit_conflict_ranges(const cfdb_read_conflicts *rc, const cfdb_key_range *writes, size_t n_writes,
                                bool causal_write_risky, const uint8_t random16[16], cfdb_arena *arena,
                                cfdb_key_range **out_reads, size_t *n_reads, cfdb_key_range **out_writes,
                                size_t *n_out_writes);

/* getVersionstampKeyRange: for a SetVersionstampedKey param (key with a 4-byte
 * little-endian offset at the end), [key with (min_version, 0) stamped,
 * min(key with ff x 10 stamped + "\x00", max_key)). Returns 0, CFDB_ERR_UNKNOWN_ERROR (out of memory), or
 * CFDB_ERR_CLIENT_INVALID_OPERATION for a bad offset. */
int cfdb_versionstamp_key_range(cfdb_bytes param, int64_t min_version, cfdb_bytes max_key, cfdb_arena *arena,
                                cfdb_bytes *begin, cfdb_bytes *end);

#endif
