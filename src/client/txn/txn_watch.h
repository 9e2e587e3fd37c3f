/* Watches wait for their transaction's commit (txn_watch.c). */
#ifndef CFDB_CLIENT_TXN_WATCH_H
#define CFDB_CLIENT_TXN_WATCH_H

#include "txn_internal.h"

/* The commit ended (error 0: committed, or read-only): the watches waiting for it start
 * or fail (network thread). */
void txn_start_watches(cfdb_txn *tx, int error);
/* The attempt ended (reset, cancel, destroy, on_error): the watches still waiting for its
 * commit end with transaction_cancelled (NativeAPI cancelWatches) (network thread). */
void txn_cancel_watches(cfdb_txn *tx);

#endif
