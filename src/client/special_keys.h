/* The special key space \xff\xff ... \xff\xff\xff (special_keys.c) and the
 * \xff\xff/transaction/conflicting_keys/ module (txn_conflicts.c): reads there are answered
 * by the client itself, without read-your-writes or storage (module errors as libfdb_c's). */
#ifndef CFDB_CLIENT_SPECIAL_KEYS_H
#define CFDB_CLIENT_SPECIAL_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/bytes.h"
#include "cfdb/messages.h"
#include "transaction.h"

/* Whether a key / a range read belongs to the special key space. */
bool cfdb_special_key(cfdb_bytes key);
bool cfdb_special_range(cfdb_bytes begin, cfdb_bytes end);
cfdb_future *cfdb_special_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_special_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);

/* Conflicting keys reported by a failed commit (txn_conflicts.c). */
bool cfdb_conflicts_is_special(cfdb_bytes key);
void cfdb_conflicts_clear(cfdb_txn *tx); /* mu held */
void cfdb_conflicts_record(cfdb_txn *tx, const cfdb_key_range *reads, uint32_t nreads, const int32_t *indices,
                           uint32_t n); /* takes mu */
cfdb_future *cfdb_conflicts_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_conflicts_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);

#endif
