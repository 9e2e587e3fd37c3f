/* A transaction's read-your-writes state (the write map of FDB's
 * ReadYourWritesTransaction, fdbclient/WriteMap.h): per key a stack of pending
 * operations (a known value / cleared, or atomic ops on an unknown base), the
 * cleared ranges, the write-conflict ranges and the "unreadable" ranges left by
 * versionstamped operations.
 *
 * Callers validate keys, values and ranges first (see retry_policy.h:
 * cfdb_check_*); the write map only checks versionstamp parameters.
 *
 * Memory: keys, values and computed results live in the arena passed to
 * cfdb_write_map_init; nothing is freed before cfdb_write_map_destroy (and the
 * arena's own reset/free). Everything here is single-threaded. */
#ifndef CFDB_CLIENT_WRITE_MAP_H
#define CFDB_CLIENT_WRITE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"
#include "mutation.h"
#include "omap.h"
#include "range_set.h"

/* One pending operation on a key. type CFDB_MUT_SET_VALUE with present=false is
 * "the key is cleared". */
typedef struct cfdb_wm_op {
    uint8_t type;
    bool present;
    cfdb_bytes value;
} cfdb_wm_op;

typedef struct cfdb_wm_entry {
    cfdb_wm_op *ops;
    uint32_t count, cap;
    bool unreadable;
} cfdb_wm_entry;

typedef struct cfdb_wm_mutvec {
    cfdb_mutation *items;
    size_t count, cap;
    bool on_stack; /* items is caller storage, not malloc'ed */
} cfdb_wm_mutvec;

typedef struct cfdb_wm_rangevec {
    cfdb_key_range *items;
    size_t count, cap;
    bool on_stack;
} cfdb_wm_rangevec;

typedef struct cfdb_write_map {
    cfdb_arena *arena;
    cfdb_omap entries;        /* key -> cfdb_wm_entry* (val.ptr) */
    cfdb_range_set cleared;    /* keys cleared (point entries inside take precedence) */
    cfdb_range_set conflict;   /* write conflict ranges */
    cfdb_range_set unreadable; /* ranges made unreadable by SetVersionstampedKey */
    /* Mutations and write conflict ranges already handed to the "native"
     * transaction when a SetVersionstampedKey flushed its range (FDB's
     * writeRangeToNativeTransaction); they precede everything else at commit. */
    cfdb_wm_mutvec early_mutations;
    cfdb_wm_rangevec early_conflicts;
    bool empty;
    /* Changes with every write (any change of entries, cleared or unreadable): the
     * read-your-writes iterator keeps cursors into the maps while it stays the same. */
    uint64_t version;
} cfdb_write_map;

int cfdb_write_map_init(cfdb_write_map *wm, cfdb_arena *arena);
void cfdb_write_map_destroy(cfdb_write_map *wm);
/* True until the first write or write-conflict range. */
static inline bool cfdb_write_map_is_empty(const cfdb_write_map *wm)
{
    return wm->empty;
}

/* set(key, value). Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_write_map_set(cfdb_write_map *wm, cfdb_bytes key, cfdb_bytes value, bool add_conflict);
/* clear_range(begin, end); an empty or inverted range does nothing. */
int cfdb_write_map_clear(cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end, bool add_conflict);
/* clear(key) == clear_range(key, key + "\x00"). */
int cfdb_write_map_clear_key(cfdb_write_map *wm, cfdb_bytes key, bool add_conflict);
/* An atomic op as ReadYourWritesTransaction::atomicOp (API >= 520): And/Min
 * become AndV2/MinV2; SetVersionstampedKey flushes and marks unreadable the range
 * of possible stamped keys (getVersionstampKeyRange with read_version, clipped to
 * max_read_key) and adds no write conflict range; read_version is the cached read
 * version or 0. Returns 0, 4000 unknown_error (out of memory), CFDB_ERR_INVALID_MUTATION_TYPE or
 * CFDB_ERR_CLIENT_INVALID_OPERATION (bad versionstamp offset). */
int cfdb_write_map_atomic(cfdb_write_map *wm, int type, cfdb_bytes key, cfdb_bytes operand,
                          bool add_conflict, int64_t read_version, cfdb_bytes max_read_key);
/* add_conflict_range(WRITE). */
int cfdb_write_map_add_write_conflict(cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end);

typedef enum cfdb_wm_lookup_kind {
    CFDB_WM_UNMODIFIED = 0, /* not written: read storage, use as is */
    CFDB_WM_VALUE = 1,      /* known value (*value) */
    CFDB_WM_ABSENT = 2,     /* known absent */
    CFDB_WM_DEPENDENT = 3,  /* read storage, then cfdb_write_map_apply */
    CFDB_WM_UNREADABLE = 4, /* reading it fails with accessed_unreadable (1036) */
} cfdb_wm_lookup_kind;

/* What a get(key) sees. *value is set for CFDB_WM_VALUE (memory in the map's arena). */
cfdb_wm_lookup_kind cfdb_write_map_lookup(cfdb_write_map *wm, cfdb_bytes key, cfdb_bytes *value);
/* For CFDB_WM_DEPENDENT keys (works for any key): the value after applying the
 * key's pending operations to base (NULL = absent in storage). Results live in
 * wm's arena. Returns 0, 4000 unknown_error (out of memory), or CFDB_ERR_ACCESSED_UNREADABLE. */
int cfdb_write_map_apply(cfdb_write_map *wm, cfdb_bytes key, const cfdb_bytes *base, cfdb_bytes *out,
                         bool *out_present);

/* What a get of the key of entry e sees (cfdb_write_map_lookup for a key with an entry). */
cfdb_wm_lookup_kind cfdb_write_map_entry_kind(cfdb_write_map *wm, const cfdb_wm_entry *e, cfdb_bytes *value);

/* cfdb_write_map_apply for the key of entry e. */
int cfdb_write_map_apply_entry(cfdb_write_map *wm, const cfdb_wm_entry *e, const cfdb_bytes *base, cfdb_bytes *out,
                               bool *out_present);

/* The pending operations of key (NULL when none). */
const cfdb_wm_entry *cfdb_write_map_entry(const cfdb_write_map *wm, cfdb_bytes key);

/* Commit payload as ReadYourWritesTransaction::commit hands it to the native
 * transaction: first whatever versionstamped-key operations flushed early, then
 * every cleared range (key order, split around keys written after the clear),
 * then each key's operation stack (key order; a cleared key gives ClearRange
 * [k, k\0)); write conflict ranges are coalesced, in key order. Arrays are
 * allocated in out_arena; mutations point into the write map's arena. */
int cfdb_write_map_commit_data(cfdb_write_map *wm, cfdb_arena *out_arena, cfdb_mutation **mutations,
                               size_t *n_mutations, cfdb_key_range **write_ranges, size_t *n_write_ranges);

#endif
