/* In-memory multi-version ordered key-value store: the dev server's storage
 * engine. Pure logic, no I/O. Reads at any version in [oldest, latest] see
 * exactly the mutations committed at versions <= the read version, like a
 * FoundationDB 7.3 storage server inside its MVCC window.
 *
 * Structure: a skip list ordered by key (O(log n) seeks, doubly linked at the
 * bottom level for reverse scans); each key carries a short newest-first chain
 * of (version, value | cleared) entries. A range clear writes a "cleared" entry
 * on each key it covers that is currently present. Every new entry is queued by
 * version so forgetting old versions touches only keys written since, and frees
 * entries, and whole keys, that no read at >= oldest can see.
 *
 * Memory returned by reads (keys, values) belongs to the store and stays valid
 * until the next cfdb_mvcc_apply / cfdb_mvcc_forget_before / cfdb_mvcc_destroy.
 * What a read at version v sees never changes while v >= oldest, so a long scan at
 * one version can go on across applies by seeking again after the last key it saw
 * (cfdb_mvcc_set_floor keeps v >= oldest meanwhile).
 * Arrays built for a result live in the caller's arena.
 *
 * Errors are FoundationDB codes from error_codes.h; out of memory is 4000 unknown_error. */
#ifndef CFDB_SERVER_MVCC_STORE_H
#define CFDB_SERVER_MVCC_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "mutation.h"

typedef struct cfdb_mvcc_store cfdb_mvcc_store;

/* FDB's KeySelectorRef: the last key < key (or <= key when or_equal), then
 * offset keys forward (negative: backward). */
typedef struct cfdb_mvcc_selector {
    cfdb_bytes key;
    bool or_equal;
    int32_t offset;
} cfdb_mvcc_selector;

typedef struct cfdb_mvcc_kv {
    cfdb_bytes key;
    cfdb_bytes value;
} cfdb_mvcc_kv;

/* A GetKeyValuesReply's payload: rows ascending (forward) or descending (reverse). */
typedef struct cfdb_mvcc_range_result {
    cfdb_mvcc_kv *rows; /* in the caller's arena; NULL when count == 0 */
    size_t count;
    bool more;          /* the row or byte limit stopped the scan */
} cfdb_mvcc_range_result;

/* Bytes a row costs against limitBytes: sizeof(KeyValueRef) on 64-bit + key + value. */
#define CFDB_MVCC_ROW_OVERHEAD 32
/* Byte budget of the range read behind a key selector with |offset| > 1
 * (SERVER_KNOBS->STORAGE_LIMIT_BYTES). */
#define CFDB_MVCC_SELECTOR_LIMIT_BYTES 500000

/* A new empty store; latest = oldest = 0. NULL when out of memory. */
cfdb_mvcc_store *cfdb_mvcc_create(void);
void cfdb_mvcc_destroy(cfdb_mvcc_store *s);

int64_t cfdb_mvcc_latest_version(const cfdb_mvcc_store *s);
int64_t cfdb_mvcc_oldest_version(const cfdb_mvcc_store *s);

/* Applies mutations in order at version (>= latest; equal means "more of the same
 * commit version") and makes version the latest. Accepted types: SetValue,
 * ClearRange (empty or inverted ranges do nothing), NoOp (ignored) and the atomic
 * ops 2, 6-9, 12, 13, 16-20, which are resolved here against the key's newest
 * value, including earlier mutations of this call, exactly as the storage server
 * does (a CompareAndClear that does not match changes nothing). Versionstamp
 * mutations must already have been rewritten by the commit path
 * (cfdb_transform_versionstamp_mutation).
 * The whole list is validated first: CFDB_ERR_INVALID_MUTATION_TYPE for any other
 * type, CFDB_ERR_CLIENT_INVALID_OPERATION when version < latest; nothing is applied
 * then. 4000 unknown_error means out of memory part-way (the store stays consistent
 * but holds a prefix of the list). */
int cfdb_mvcc_apply(cfdb_mvcc_store *s, int64_t version, const cfdb_mutation *mutations,
                    size_t count);

/* Drops what only reads below oldest could see (the MVCC window, normally
 * latest - 5,000,000). Clamped to latest; never moves backwards. */
void cfdb_mvcc_forget_before(cfdb_mvcc_store *s, int64_t oldest);
/* Keeps reads at `floor` possible: cfdb_mvcc_forget_before goes no further than floor
 * while it is set (a snapshot being written at that version iterates it across many
 * applies). 0 removes the floor. */
void cfdb_mvcc_set_floor(cfdb_mvcc_store *s, int64_t floor);

/* CFDB_ERR_TRANSACTION_TOO_OLD below oldest, CFDB_ERR_FUTURE_VERSION above latest,
 * else 0. (The server maps latestVersion and waiting itself.) */
int cfdb_mvcc_check_read_version(const cfdb_mvcc_store *s, int64_t version);

/* Point read. *present false when the key has no value at version. */
int cfdb_mvcc_get(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes key,
                  cfdb_bytes *value, bool *present);

/* Range read of [begin, end) as the storage server's readRange: limit > 0 reads
 * forward, limit < 0 reverse (|limit| rows at most); rows are taken while rows
 * remain and the byte budget is > 0, each costing 32 + key + value bytes, so the
 * last row may overrun. more = (row limit reached) || (budget <= 0). begin >= end
 * gives no rows. */
int cfdb_mvcc_read_range(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes begin,
                         cfdb_bytes end, int limit, int limit_bytes, cfdb_arena *a,
                         cfdb_mvcc_range_result *out);

/* GetKeyRequest within one shard [shard_begin, shard_end) (the caller's shard map
 * picks the shard containing sel.key, or the one before it for a backward
 * selector, i.e. !or_equal && offset <= 0). Result as GetKeyReply.sel: (k, true, 0)
 * when resolved; when resolution runs off the shard (or past the 500,000-byte scan
 * budget), firstGreaterOrEqual(k) + remaining offset (negative remaining) or
 * firstGreaterOrEqual(k) + remaining - 1 (positive remaining), where k is the shard
 * edge or the scan's last key. Keys are in the arena or the store.
 * CFDB_ERR_WRONG_SHARD_SERVER when the selector does not start inside the shard. */
int cfdb_mvcc_get_key(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes shard_begin,
                      cfdb_bytes shard_end, cfdb_mvcc_selector sel, cfdb_arena *a,
                      cfdb_mvcc_selector *out);

/* GetKeyValuesRequest within one shard [shard_begin, shard_end) chosen for the
 * begin selector: resolves both selectors in the shard (each may end at most one
 * step past it), then reads as cfdb_mvcc_read_range; begin >= end gives no rows
 * and more = false. CFDB_ERR_WRONG_SHARD_SERVER when a selector lies outside the
 * shard or needs more than the shard to resolve. */
int cfdb_mvcc_get_range(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes shard_begin,
                        cfdb_bytes shard_end, cfdb_mvcc_selector begin,
                        cfdb_mvcc_selector end, int limit, int limit_bytes, cfdb_arena *a,
                        cfdb_mvcc_range_result *out);

/* Cursor over the keys visible at one version. Invalidated by apply/forget. */
typedef struct cfdb_mvcc_iter {
    const cfdb_mvcc_store *store;
    const void *node; /* NULL when past either end */
    int64_t version;
    cfdb_bytes key;
    cfdb_bytes value;
} cfdb_mvcc_iter;

/* Position on the first visible key >= key (seek_ge), > key (seek_gt), or the last
 * visible key <= key (seek_le), < key (seek_lt). The version is not range-checked;
 * use cfdb_mvcc_check_read_version. */
void cfdb_mvcc_iter_seek_ge(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key);
void cfdb_mvcc_iter_seek_gt(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key);
void cfdb_mvcc_iter_seek_le(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key);
void cfdb_mvcc_iter_seek_lt(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key);
bool cfdb_mvcc_iter_valid(const cfdb_mvcc_iter *it);
void cfdb_mvcc_iter_next(cfdb_mvcc_iter *it);
void cfdb_mvcc_iter_prev(cfdb_mvcc_iter *it);

/* Bookkeeping, for tests and status: keys in the index (visible or not), version
 * entries held, and bytes of keys plus values held. */
typedef struct cfdb_mvcc_stats {
    size_t keys;
    size_t entries;
    size_t bytes;
} cfdb_mvcc_stats;
void cfdb_mvcc_get_stats(const cfdb_mvcc_store *s, cfdb_mvcc_stats *out);

#endif
