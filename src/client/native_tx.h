/* The commit payload of a transaction with READ_YOUR_WRITES_DISABLE: NativeAPI's
 * Transaction keeps mutations and write conflict ranges in program order
 * (Transaction::set / atomicOp / clear / addWriteConflictRange). With read-your-
 * writes on, use cfdb_write_map_commit_data instead (key order, coalesced).
 * Callers run the cfdb_check_* validations first (retry_policy.h). */
#ifndef CFDB_CLIENT_NATIVE_TX_H
#define CFDB_CLIENT_NATIVE_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "cfdb/messages.h"
#include "cfdb/mutation.h"

typedef struct cfdb_native_tx {
    cfdb_arena *arena;
    cfdb_mutation *mutations;
    size_t n_mutations, cap_mutations;
    cfdb_key_range *write_ranges;
    size_t n_write_ranges, cap_write_ranges;
} cfdb_native_tx;

void cfdb_native_tx_init(cfdb_native_tx *t, cfdb_arena *arena);
void cfdb_native_tx_destroy(cfdb_native_tx *t);

/* SetValue + [k, k\0) when add_conflict. Returns 0 or -1 (out of memory). */
int cfdb_native_tx_set(cfdb_native_tx *t, cfdb_bytes key, cfdb_bytes value, bool add_conflict);
/* And/Min become AndV2/MinV2; no conflict range for SetVersionstampedKey (the
 * commit proxy adds the stamped key). Returns 0, -1, CFDB_ERR_INVALID_MUTATION_TYPE
 * or CFDB_ERR_CLIENT_INVALID_OPERATION (versionstamp offset check, as RYW does
 * before delegating). */
int cfdb_native_tx_atomic(cfdb_native_tx *t, int type, cfdb_bytes key, cfdb_bytes operand, bool add_conflict);
/* ClearRange [b, e) with over-long bounds truncated; empty ranges dropped. */
int cfdb_native_tx_clear(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end, bool add_conflict);
/* ClearRange [k, k\0); a key longer than any key can be is ignored. */
int cfdb_native_tx_clear_key(cfdb_native_tx *t, cfdb_bytes key, bool add_conflict);
/* add_conflict_range(WRITE): truncated, empty dropped. */
int cfdb_native_tx_add_write_conflict(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end);

#endif
