/* Commit conflict detection with FoundationDB 7.3 resolver semantics
 * (ConflictBatch in fdbserver/SkipList.cpp, Resolver.actor.cpp). Pure logic.
 *
 * For a batch committing at version C, with newOldest = C - window:
 *  1. a transaction with read ranges and read_snapshot < newOldest is too old;
 *  2. otherwise it conflicts if a read range intersects a write range recorded at
 *     a version > read_snapshot by an earlier batch;
 *  3. or if a read range intersects a write range of an earlier transaction of the
 *     same batch that was not itself rejected;
 *  4. else it commits, and its write ranges are recorded at C once the whole batch
 *     has been checked.
 * Ranges are half-open [begin, end); empty or inverted ranges intersect nothing.
 *
 * History is an interval map (key -> version of the last write covering it) kept
 * in a skip list whose links carry the maximum version they span, so a read range
 * is checked in O(log n) however many writes it covers. Intervals older than
 * newOldest are merged away a little every batch. */
#ifndef CFDB_SERVER_CONFLICT_RESOLVER_H
#define CFDB_SERVER_CONFLICT_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"

/* MAX_WRITE_TRANSACTION_LIFE_VERSIONS */
#define CFDB_RESOLVER_DEFAULT_WINDOW 5000000

typedef struct cfdb_resolver cfdb_resolver;

typedef struct cfdb_conflict_range {
    cfdb_bytes begin;
    cfdb_bytes end;
} cfdb_conflict_range;

typedef struct cfdb_resolver_txn {
    int64_t read_snapshot;
    const cfdb_conflict_range *read_ranges;
    size_t read_count;
    const cfdb_conflict_range *write_ranges;
    size_t write_count;
    bool report_conflicting_keys;
} cfdb_resolver_txn;

/* Same numbers as ConflictBatch::TransactionCommitResult. */
enum cfdb_resolve_status {
    CFDB_RESOLVE_CONFLICT = 0,
    CFDB_RESOLVE_TOO_OLD = 1,
    CFDB_RESOLVE_COMMITTED = 3,
};

typedef struct cfdb_resolver_result {
    int status; /* enum cfdb_resolve_status */
    /* With report_conflicting_keys, the indices into read_ranges found conflicting,
     * ascending: every range that hits history, or else the first range that hits
     * an earlier transaction of the batch (what FDB reports). In the arena. */
    int32_t *conflicting;
    size_t conflicting_count;
} cfdb_resolver_result;

/* window: how far back history is kept (CFDB_RESOLVER_DEFAULT_WINDOW normally).
 * NULL when out of memory. */
cfdb_resolver *cfdb_resolver_create(int64_t window);
void cfdb_resolver_destroy(cfdb_resolver *r);

/* Resolves one batch at commit_version (>= every earlier batch's), writing
 * results[i] for txns[i]. Returns 0, CFDB_ERR_CLIENT_INVALID_OPERATION when the
 * version goes backwards, or CFDB_ERR_UNKNOWN_ERROR (4000) when out of memory (history is then unchanged
 * unless the failure hit while recording, in which case some committed writes may
 * be missing; treat it as fatal). */
int cfdb_resolver_resolve(cfdb_resolver *r, int64_t commit_version,
                          const cfdb_resolver_txn *txns, size_t count, cfdb_arena *a,
                          cfdb_resolver_result *results);

/* newOldest of the last batch: history below it is being forgotten. */
int64_t cfdb_resolver_oldest_version(const cfdb_resolver *r);
/* Interval boundaries held in history, for tests of forgetting. */
size_t cfdb_resolver_history_size(const cfdb_resolver *r);
/* Checks the history's skip list: keys strictly increasing at every level, each level a
 * subsequence of the one below, and every link's maximum equal to the largest version of
 * the boundaries it spans; the same for the last batch's map. True when all hold (tests call it after every batch). */
bool cfdb_resolver_consistent(const cfdb_resolver *r);

#endif
