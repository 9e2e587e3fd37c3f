/* The commit's side effects other kinds and the transaction need (txn_commit.c). */
#ifndef CFDB_CLIENT_TXN_COMMIT_H
#define CFDB_CLIENT_TXN_COMMIT_H

#include "txn_internal.h"

/* The versionstamp future ends with the commit (network thread). */
void txn_settle_versionstamp(cfdb_txn *tx, int error, bool read_only);

#endif
