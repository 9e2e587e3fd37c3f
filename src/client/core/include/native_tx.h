/* The commit payload of a transaction with READ_YOUR_WRITES_DISABLE, as NativeAPI's
 * Transaction keeps it (fdbclient/NativeAPI.actor.cpp 7.3.77): ReadYourWritesTransaction hands
 * every write to it, so mutations and write conflict ranges stay in program order, one per
 * call, neither sorted nor coalesced (Transaction::set / atomicOp / clear /
 * addWriteConflictRange). Read conflict ranges too: a get's single-key range and an
 * addReadConflictRange go in when issued; a getKey's or getRange's range is known when it
 * completes and is appended at commit in the order the reads were issued
 * (extraConflictRanges). With read-your-writes on, ryw.c uses the write map instead.
 *
 * Memory: every array and key lives in the arena given at init (the transaction's, reset
 * with it); arrays double when full. Functions return 0, or a FoundationDB error code:
 * unknown_error (4000, what libfdb_c's actors make of a failed allocation) when memory is
 * short. Callers run the cfdb_check_* validations first (retry_policy.h). Not thread-safe:
 * the transaction's mutex guards it. */
#ifndef CFDB_CLIENT_NATIVE_TX_H
#define CFDB_CLIENT_NATIVE_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"
#include "mutation.h"

typedef struct cfdb_native_ranges {
    cfdb_key_range *items;
    size_t n, cap;
} cfdb_native_ranges;

typedef struct cfdb_native_tx {
    cfdb_arena *arena;
    cfdb_mutation *mutations;
    size_t n_mutations, cap_mutations;
    cfdb_native_ranges writes; /* write conflict ranges */
    cfdb_native_ranges reads;  /* read conflict ranges added when issued */
    cfdb_native_ranges extra;  /* getKey / getRange conflict ranges: a slot per read, filled later */
} cfdb_native_tx;

void cfdb_native_tx_init(cfdb_native_tx *t, cfdb_arena *arena);

/* SetValue + [k, k\0) when add_conflict. */
int cfdb_native_tx_set(cfdb_native_tx *t, cfdb_bytes key, cfdb_bytes value, bool add_conflict);
/* And/Min become AndV2/MinV2; no conflict range for SetVersionstampedKey (the
 * commit proxy adds the stamped key). Returns 0, an allocation failure,
 * CFDB_ERR_INVALID_MUTATION_TYPE or CFDB_ERR_CLIENT_INVALID_OPERATION (versionstamp offset
 * check, as RYW does before delegating). */
int cfdb_native_tx_atomic(cfdb_native_tx *t, int type, cfdb_bytes key, cfdb_bytes operand, bool add_conflict);
/* ClearRange [b, e) with over-long bounds truncated; empty ranges dropped. */
int cfdb_native_tx_clear(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end, bool add_conflict);
/* ClearRange [k, k\0); a key longer than any key can be is ignored. */
int cfdb_native_tx_clear_key(cfdb_native_tx *t, cfdb_bytes key, bool add_conflict);
/* add_conflict_range(WRITE) / (READ): truncated, empty dropped. */
int cfdb_native_tx_add_write_conflict(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end);
int cfdb_native_tx_add_read_conflict(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end);
/* A get's [k, k\0) (Transaction::get, not snapshot). */
int cfdb_native_tx_add_read_key(cfdb_native_tx *t, cfdb_bytes key);
/* A getKey / getRange being issued: its slot among the extra ranges (*slot), empty until
 * cfdb_native_tx_fill_read sets it. */
int cfdb_native_tx_reserve_read(cfdb_native_tx *t, uint32_t *slot);
int cfdb_native_tx_fill_read(cfdb_native_tx *t, uint32_t slot, cfdb_bytes begin, cfdb_bytes end);

/* NativeAPI commitMutations: nothing to send without mutations and write conflict ranges. */
bool cfdb_native_tx_is_read_only(const cfdb_native_tx *t);
/* The CommitTransactionRef: mutations and write ranges in program order; the read ranges,
 * then the non-empty extra ones; then, unless causal_write_risky, the self-conflict range
 * \xff/SC/<random16> in both when no write range meets a read range (makeSelfConflicting).
 * Arrays in arena. */
int cfdb_native_tx_build_commit(const cfdb_native_tx *t, int64_t read_version, bool causal_write_risky,
                                const uint8_t random16[16], cfdb_arena *arena, cfdb_commit_transaction *out);

#endif
