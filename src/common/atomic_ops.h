/* Atomic-operation and versionstamp arithmetic with FoundationDB 7.3 semantics
 * (fdbclient/Atomic.h). Shared by the dev server's storage and the client's
 * read-your-writes cache, so both compute byte-identical results. */
#ifndef CFDB_ATOMIC_OPS_H
#define CFDB_ATOMIC_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "mutation.h"

/* Largest value AppendIfFits may produce (CLIENT_KNOBS->VALUE_SIZE_LIMIT). */
#define CFDB_VALUE_SIZE_LIMIT 100000

/* A versionstamp: 8-byte big-endian commit version then 2-byte big-endian batch index. */
#define CFDB_VERSIONSTAMP_SIZE 10

/* Computes the value a key holds after atomic op mutation_type with operand is applied
 * to existing (NULL when the key is absent).
 * *out_present = false means the key ends up absent (CompareAndClear that matched, or
 * on an absent key). *out may point into *existing or into operand's memory, or into
 * the arena for computed results; copy it if those can go away.
 * Returns 0, CFDB_ERR_INVALID_MUTATION_TYPE for anything but 2, 6, 7, 8, 9, 12, 13,
 * 16, 17, 18, 19, 20 (versionstamp ops must be transformed first), or CFDB_ERR_UNKNOWN_ERROR
 * (4000) when the arena is out of memory. */
int cfdb_apply_atomic(int mutation_type, const cfdb_bytes *existing, cfdb_bytes operand,
                      cfdb_arena *a, cfdb_bytes *out, bool *out_present);

/* Writes the 10-byte stamp for (commit version, index in the commit batch). */
void cfdb_place_versionstamp(uint8_t dst[CFDB_VERSIONSTAMP_SIZE], int64_t version,
                             uint16_t batch_index);

/* The commit proxy's rewrite of a SetVersionstampedKey/Value parameter: a param of
 * at least 4 bytes loses its trailing little-endian int32 offset, and when
 * 0 <= offset <= remaining_len - 10 the 10 bytes at offset are overwritten with the
 * stamp. Shorter params and out-of-range offsets leave the bytes as they are (the
 * server does not fail the commit). *out is a fresh copy in the arena.
 * Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000) when the arena is out of memory. */
int cfdb_transform_versionstamp(cfdb_bytes param, int64_t version, uint16_t batch_index,
                                cfdb_arena *a, cfdb_bytes *out);

/* Applies cfdb_transform_versionstamp to param1 (SetVersionstampedKey) or param2
 * (SetVersionstampedValue) and turns the mutation into SetValue, as the proxy does.
 * Other mutation types are left alone. Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_transform_versionstamp_mutation(cfdb_mutation *m, int64_t version,
                                         uint16_t batch_index, cfdb_arena *a);

/* The client-side check of a versionstamp param (len >= 4, offset >= 0,
 * offset + 10 <= len - 4): 0 when valid, else CFDB_ERR_CLIENT_INVALID_OPERATION. */
int cfdb_versionstamp_param_check(cfdb_bytes param);

#endif
