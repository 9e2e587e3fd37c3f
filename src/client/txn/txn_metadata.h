/* Operations on cluster metadata (txn_metadata.c): \xff\xff/status/json, estimated range
 * sizes, split points; the entry points of the latter two are in transaction.h. */
#ifndef CFDB_CLIENT_TXN_METADATA_H
#define CFDB_CLIENT_TXN_METADATA_H

#include "transaction.h"

/* A get of \xff\xff/status/json (special_keys.c). */
cfdb_future *cfdb_txn_status_json(cfdb_txn *tx);

#endif
