/* The commit's side effects other kinds and the transaction need (txn_commit.c). */
#ifndef CFDB_CLIENT_TXN_COMMIT_H
#define CFDB_CLIENT_TXN_COMMIT_H

#include "txn_internal.h"

/* The versionstamp future ends with the commit (network thread). */
void txn_settle_versionstamp(cfdb_txn *tx, int error, bool read_only);
/* The attempt ended without its commit (reset, on_error): a versionstamp future waiting for
 * it fails with transaction_cancelled, as RYW's reset promise fails it (network thread). */
void txn_cancel_versionstamp(cfdb_txn *tx);

#endif
