/* What the layers above the transaction engine (the special key space, special/) may use of
 * a transaction besides transaction.h: the database it belongs to, its lock and state the
 * modules read, the conflicting-keys module (txn_conflicts.c), the commit without the special
 * key space's work, and the hook through which the transaction hands keys in \xff\xff to the
 * special key space's router. The engine's own structures stay in txn_internal.h. */
#ifndef CFDB_CLIENT_TXN_API_H
#define CFDB_CLIENT_TXN_API_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/bytes.h"
#include "error_codes.h"
#include "messages.h"
#include "database.h"
#include "ryw.h"
#include "transaction.h"

/* ---- the transaction as the modules see it ---- */

/* The database the transaction belongs to (fixed for its life). */
cfdb_db *cfdb_txn_db(cfdb_txn *tx);
/* A reference that keeps the transaction alive (a module's worker holds one while it runs). */
void txn_ref(cfdb_txn *tx);
void txn_unref(cfdb_txn *tx);
/* Whether the transaction's keys are relative to a tenant (fixed for its life). */
bool cfdb_txn_in_tenant(cfdb_txn *tx);

/* The transaction's lock, which the calls marked "lock held" below need. */
void cfdb_txn_lock(cfdb_txn *tx);
void cfdb_txn_unlock(cfdb_txn *tx);

/* The error a new operation fails with: the deferred one, or 1031 once the deadline passed
 * (lock held). */
int txn_error_locked(cfdb_txn *tx);
/* The error set options or writes deferred to the next operation (lock held). */
int cfdb_txn_deferred_error_locked(cfdb_txn *tx);
/* Whether a commit is under way (lock held). */
bool cfdb_txn_committing_locked(cfdb_txn *tx);
/* The options as set (lock held). */
const cfdb_txn_options *cfdb_txn_options_locked(cfdb_txn *tx);
/* The read-your-writes state: writes, reads and conflict ranges (lock held, read only). */
const cfdb_ryw *cfdb_txn_ryw_locked(cfdb_txn *tx);

/* The special key space's own state of the transaction (lock held): NULL until the special
 * key space stores one; the transaction hands it back to the router's reset. */
struct cfdb_sk_state;
struct cfdb_sk_state **cfdb_txn_special_state_locked(cfdb_txn *tx);

/* The span context (TransactionState::spanContext): drawn when first used, kept by
 * on_error's reset, drawn again after a full reset (lock held). */
typedef struct cfdb_txn_span {
    bool set;
    uint64_t trace_first, trace_second; /* traceID */
    uint64_t span_id;
} cfdb_txn_span;
cfdb_txn_span *cfdb_txn_span_locked(cfdb_txn *tx);

/* The system-key access a module's worker gives the transaction while it runs: libfdb_c's
 * module code uses NativeAPI's transaction, which does not check system keys, and leaves
 * RAW_ACCESS set. grant returns the access it replaced, restore puts it back (lock held). */
typedef struct cfdb_txn_access {
    bool access_system_keys, read_system_keys, sys_readable;
} cfdb_txn_access;
cfdb_txn_access cfdb_txn_grant_system_access_locked(cfdb_txn *tx);
void cfdb_txn_restore_system_access_locked(cfdb_txn *tx, cfdb_txn_access saved);

/* The error an operation fails with when memory for its results cannot be had. libfdb_c's
 * small-block allocator aborts the process; a large Arena block's std::bad_alloc reaches the
 * actor as a non-Error exception, which Flow turns into unknown_error. */
#define TXN_ERR_NO_MEMORY CFDB_ERR_UNKNOWN_ERROR
/* A future already complete with TXN_ERR_NO_MEMORY, for when no future can be allocated. */
cfdb_future *txn_future_no_memory(cfdb_future_kind kind);

/* ---- the special key space's router (installed once, before the first transaction) ---- */

/* Whether a key / a range read belongs to the special key space (\xff\xff up to \xff\xff\xff). */
bool cfdb_special_key(cfdb_bytes key);
bool cfdb_special_range(cfdb_bytes begin, cfdb_bytes end);

/* The router's entry points; each is called by the transaction for keys in the special key
 * space only. set, clear and reset are called with the transaction's lock held. */
typedef struct cfdb_special_router {
    cfdb_future *(*get)(cfdb_txn *tx, cfdb_bytes key);
    cfdb_future *(*get_range)(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);
    /* 0 or the error the transaction defers */
    int (*set)(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value);
    int (*clear)(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single);
    /* forgets the transaction's special writes and error message */
    void (*reset)(cfdb_txn *tx);
    /* whether the commit must first run the written modules' commits (takes the lock), and
     * that commit: the modules' work, then cfdb_txn_commit_now */
    bool (*commit_first)(cfdb_txn *tx);
    cfdb_future *(*commit)(cfdb_txn *tx);
} cfdb_special_router;

/* Installs the router (r stays valid for good). Without one, reads of the special key space
 * fail with unsupported_operation and writes there are refused the same way. */
void cfdb_txn_set_special_router(const cfdb_special_router *r);

/* The transaction's own commit, without the special key space's work (txn_commit.c). */
cfdb_future *cfdb_txn_commit_now(cfdb_txn *tx);

/* ---- \xff\xff/transaction/conflicting_keys/ (txn_conflicts.c) ---- */
bool cfdb_conflicts_is_special(cfdb_bytes key);
void cfdb_conflicts_clear(cfdb_txn *tx); /* lock held */
void cfdb_conflicts_record(cfdb_txn *tx, const cfdb_key_range *reads, uint32_t nreads, const int32_t *indices,
                           uint32_t n); /* takes the lock */
cfdb_future *cfdb_conflicts_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_conflicts_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);

#endif
