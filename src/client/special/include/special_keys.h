/* The special key space \xff\xff ... \xff\xff\xff (special_keys.c): reads there are answered
 * by the client itself, without read-your-writes or storage (module errors as libfdb_c's);
 * writes go to the modules that take them. The transaction reaches it through the router
 * installed here (txn_api.h). */
#ifndef CFDB_CLIENT_SPECIAL_KEYS_H
#define CFDB_CLIENT_SPECIAL_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/bytes.h"
#include "messages.h"
#include "transaction.h"
#include "txn_api.h"

/* fdb_select_api_version: records the API version the application selected (which modules
 * exist depends on it) and installs the special key space's router in the transaction. */
void cfdb_special_install(int api_version);

/* The router's entry points (cfdb_special_router's contract). */
cfdb_future *cfdb_special_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_special_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);
int cfdb_special_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value);
int cfdb_special_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single);
void cfdb_special_reset(cfdb_txn *tx);
bool cfdb_special_commit_first(cfdb_txn *tx);
cfdb_future *cfdb_special_commit(cfdb_txn *tx);

#endif
