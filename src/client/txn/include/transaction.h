/* Transactions: read-your-writes reads, buffered writes, commits, retries. Every function
 * returning a future returns one (errors inside it), never NULL.
 *
 * Threading: the application calls these from any thread. Writes (set, clear, atomic op,
 * conflict ranges) are recorded at once under the transaction's mutex; reads and commits
 * are prepared under it (so they see exactly the writes issued before them) and then run
 * on the network thread, completing a future. */
#ifndef CFDB_CLIENT_TRANSACTION_H
#define CFDB_CLIENT_TRANSACTION_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/bytes.h"
#include "database.h"
#include "future.h"

typedef struct cfdb_txn cfdb_txn;

typedef struct cfdb_txn_options {
    int64_t timeout_ms;        /* 0 = none */
    int64_t retry_limit;       /* -1 = unlimited */
    int64_t max_retry_delay_ms;
    int64_t size_limit;
    bool causal_read_risky;
    bool causal_write_risky;
    bool read_your_writes_disable;
    bool snapshot_ryw_disable;
    bool access_system_keys;
    bool raw_access;         /* RAW_ACCESS, READ_/ACCESS_SYSTEM_KEYS: no tenant checks */
    bool read_system_keys;
    bool lock_aware;
    bool priority_batch;
    bool priority_system_immediate;
    bool report_conflicting_keys;
    bool used_during_commit_protection_disable;
    bool use_grv_cache;  /* USE_GRV_CACHE: the read version may come from the database's cache */
    bool skip_grv_cache; /* SKIP_GRV_CACHE */
    /* special key space (special_keys.c) */
    bool special_key_space_enable_writes; /* SPECIAL_KEY_SPACE_ENABLE_WRITES */
    bool special_key_space_relaxed;       /* SPECIAL_KEY_SPACE_RELAXED */
} cfdb_txn_options;

cfdb_txn *cfdb_txn_create(cfdb_db *db);
struct cfdb_tenant;
/* A transaction of a tenant: its keys are relative to the tenant's prefix (tenant.h). */
cfdb_txn *cfdb_txn_create_in_tenant(struct cfdb_tenant *t);
/* The application's destroy: pending operations are cancelled. */
void cfdb_txn_destroy(cfdb_txn *tx);

/* Returns 0 or the error the API reports (invalid_option_value ...). */
int cfdb_txn_set_option(cfdb_txn *tx, int option, const uint8_t *value, int length);

/* Writes: return 0, or an error the API reports synchronously via the next operation
 * (libfdb_c reports write misuse on the transaction's following futures). */
void cfdb_txn_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value);
void cfdb_txn_clear(cfdb_txn *tx, cfdb_bytes key);
void cfdb_txn_clear_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end);
void cfdb_txn_atomic_op(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes param, int api_op);
int cfdb_txn_add_conflict_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int type);

cfdb_future *cfdb_txn_get(cfdb_txn *tx, cfdb_bytes key, bool snapshot);
cfdb_future *cfdb_txn_get_key(cfdb_txn *tx, cfdb_bytes key, bool or_equal, int offset, bool snapshot);
cfdb_future *cfdb_txn_get_range(cfdb_txn *tx, cfdb_bytes begin_key, bool begin_or_equal, int begin_offset,
                                cfdb_bytes end_key, bool end_or_equal, int end_offset, int limit, int target_bytes,
                                int mode, int iteration, bool snapshot, bool reverse);
/* NativeAPI's Transaction::getRange on the transaction beneath read-your-writes, as libfdb_c's
 * special-key modules read through ryw->getTransaction(): [begin, end) at the read version,
 * without the transaction's own writes or its read cache (every call asks the storage
 * servers, so a read version older than the MVCC window gives transaction_too_old); the
 * read conflict range is recorded as for any read. */
cfdb_future *cfdb_txn_get_range_native(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, int mode,
                                       int iteration);
cfdb_future *cfdb_txn_get_read_version(cfdb_txn *tx);
void cfdb_txn_set_read_version(cfdb_txn *tx, int64_t version);
cfdb_future *cfdb_txn_commit(cfdb_txn *tx);
int cfdb_txn_get_committed_version(cfdb_txn *tx, int64_t *out);
cfdb_future *cfdb_txn_get_versionstamp(cfdb_txn *tx);
cfdb_future *cfdb_txn_get_approximate_size(cfdb_txn *tx);
/* libfdb_c 7.3's cost estimate so far (int64) and tag-throttling delay (double), at once */
cfdb_future *cfdb_txn_get_total_cost(cfdb_txn *tx);
cfdb_future *cfdb_txn_get_tag_throttled_duration(cfdb_txn *tx);
cfdb_future *cfdb_txn_watch(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_txn_on_error(cfdb_txn *tx, int error);
void cfdb_txn_reset(cfdb_txn *tx);
void cfdb_txn_cancel(cfdb_txn *tx);

/* Metadata (txn_metadata.c). */
cfdb_future *cfdb_txn_get_estimated_range_size(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end);
cfdb_future *cfdb_txn_get_range_split_points(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int64_t chunk_size);
cfdb_future *cfdb_txn_get_addresses_for_key(cfdb_txn *tx, cfdb_bytes key);

/* Mapped range read (txn_mapped.c): fdb_transaction_get_mapped_range. */
cfdb_future *cfdb_txn_get_mapped_range(cfdb_txn *tx, cfdb_bytes begin_key, bool begin_or_equal, int begin_offset,
                                       cfdb_bytes end_key, bool end_or_equal, int end_offset, cfdb_bytes mapper,
                                       int limit, int target_bytes, int mode, int iteration, bool snapshot,
                                       bool reverse);

/* A future that is already complete with an error (never NULL: when no future can be
 * allocated, a shared one complete with unknown_error, see txn_future_no_memory). */
cfdb_future *cfdb_future_error(cfdb_future_kind kind, int error);
/* f, or (f NULL: its allocation failed) such a shared future of that kind. */
cfdb_future *cfdb_future_or_no_memory(cfdb_future *f, cfdb_future_kind kind);

#endif
