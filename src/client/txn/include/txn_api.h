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
#include "messages.h"
#include "transaction.h"

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
