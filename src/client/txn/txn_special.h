/* The transaction's calls into the special key space's router (txn_special.c): each goes to
 * the installed router (txn_api.h), with the same contract as its entry point there. */
#ifndef CFDB_CLIENT_TXN_SPECIAL_H
#define CFDB_CLIENT_TXN_SPECIAL_H

#include <stdbool.h>

#include "txn_api.h"

cfdb_future *txn_special_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *txn_special_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);
int txn_special_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value);
int txn_special_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single);
void txn_special_reset(cfdb_txn *tx);
bool txn_special_commit_first(cfdb_txn *tx);
cfdb_future *txn_special_commit(cfdb_txn *tx);

#endif
