/* A transaction's read-your-writes state as the transaction code uses it: the write map,
 * the read conflict ranges, size accounting, and assembling the commit request. With
 * READ_YOUR_WRITES_DISABLE (cfdb_ryw_disable) writes and conflict ranges go to NativeAPI's
 * program-order buffers instead (native_tx.h), as ReadYourWritesTransaction delegates them to
 * its NativeAPI Transaction; the size is counted the same way either way. Writes return 0 or
 * a FoundationDB error (unknown_error when memory is short). Not thread-safe: the
 * transaction's mutex guards it. */
#ifndef CFDB_CLIENT_RYW_H
#define CFDB_CLIENT_RYW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "messages.h"
#include "conflict_ranges.h"
#include "native_tx.h"
#include "range_set.h"
#include "snap_cache.h"
#include "write_map.h"

typedef struct cfdb_ryw {
    cfdb_arena arena;
    /* the arena's first block, inside the transaction object: writes and a range read of a
     * hundred rows (cached in the snapshot cache) fit without a malloc, even for a transaction
     * object used for the first time */
    uint64_t arena_mem[2048];
    cfdb_write_map wm;
    cfdb_snap_cache cache; /* what the transaction read: later reads of it need no request */
    cfdb_read_conflicts reads;
    bool next_write_no_conflict;
    bool has_versionstamp_ops;
    size_t size;           /* approximate bytes of mutations and conflict ranges */
    int64_t read_version;  /* cached read version, for versionstamped-key ranges */
    bool disabled;         /* READ_YOUR_WRITES_DISABLE: writes and conflicts go to native */
    cfdb_native_tx native; /* in arena */
} cfdb_ryw;

void cfdb_ryw_init(cfdb_ryw *r);
void cfdb_ryw_reset(cfdb_ryw *r);
void cfdb_ryw_free(cfdb_ryw *r);
/* READ_YOUR_WRITES_DISABLE, before anything was written (until the next reset). */
void cfdb_ryw_disable(cfdb_ryw *r);

int cfdb_ryw_set(cfdb_ryw *r, cfdb_bytes key, cfdb_bytes value);
/* clear(key) when single_key (end ignored), else clear_range(begin, end). */
int cfdb_ryw_clear_range(cfdb_ryw *r, cfdb_bytes begin, cfdb_bytes end, bool single_key);
/* Returns 0 or the error to defer (invalid versionstamp parameters...). */
int cfdb_ryw_atomic(cfdb_ryw *r, int type, cfdb_bytes key, cfdb_bytes operand);
int cfdb_ryw_add_read_conflict(cfdb_ryw *r, cfdb_bytes begin, cfdb_bytes end);
int cfdb_ryw_add_read_conflict_key(cfdb_ryw *r, cfdb_bytes key);
int cfdb_ryw_add_write_conflict(cfdb_ryw *r, cfdb_bytes begin, cfdb_bytes end);

size_t cfdb_ryw_size(const cfdb_ryw *r);
bool cfdb_ryw_is_read_only(const cfdb_ryw *r);
bool cfdb_ryw_has_versionstamp_ops(const cfdb_ryw *r);

/* A point read: what local writes say about a key, captured when the read is issued. */
typedef struct cfdb_ryw_point {
    bool known;     /* the answer needs no storage read */
    bool dependent; /* storage value, then local atomic ops (cfdb_write_map_apply) */
    bool present;
    cfdb_bytes value;
    int error;
} cfdb_ryw_point;

/* Prepares a point read of key (copied results go to arena). Returns 0 or an error. */
int cfdb_ryw_point_prepare(cfdb_ryw *r, cfdb_bytes key, cfdb_ryw_point *p, cfdb_arena *arena);
/* The value the read returns: storage (NULL = absent, ignored when known) with local
 * writes applied; the result is copied into arena. For dependent reads, r must be the
 * (locked) transaction state; it may be NULL otherwise. */
int cfdb_ryw_point_resolve(cfdb_ryw *r, cfdb_bytes key, const cfdb_ryw_point *p, const cfdb_bytes *storage,
                           cfdb_arena *arena, cfdb_bytes *out, bool *present);

/* Fills the commit's CommitTransactionRef: mutations and write conflict ranges in the
 * write map's commit order, read conflict ranges and, unless causal_write_risky, the
 * self-conflict key \xff/SC/<16 random bytes> when no read range meets a write range
 * (NativeAPI's makeSelfConflicting). Versionstamped keys get no write range here: the
 * commit proxy adds the final key. Arrays in arena. */
int cfdb_ryw_build_commit(cfdb_ryw *r, int64_t read_version, bool causal_write_risky, uint64_t rnd1, uint64_t rnd2,
                          cfdb_arena *arena, cfdb_commit_transaction *out);

/* ---- range reads ---- */

typedef struct cfdb_ryw_limits {
    int32_t rows;  /* < 0: unlimited */
    int32_t bytes; /* < 0: unlimited */
} cfdb_ryw_limits;

/* fdb_transaction_get_range's (limit, target_bytes, mode, iteration) as libfdb_c maps
 * them (validate_and_update_parameters in bindings/c/fdb_c.cpp). */
int cfdb_ryw_limits_from_api(int limit, int target_bytes, int mode, int iteration, cfdb_ryw_limits *out);

/* True for selectors that name a key without storage: firstGreaterOrEqual(k) and
 * firstGreaterThan(k); *key receives k or k + "\x00" (in arena). */
bool cfdb_selector_simple_key(cfdb_key_selector sel, cfdb_arena *arena, cfdb_bytes *key);

#endif
