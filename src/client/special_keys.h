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

/* Writes into the special key space (mu held): 0 or the error the transaction defers
 * (2114 without SPECIAL_KEY_SPACE_ENABLE_WRITES, 2115, 2116, 2117). */
int cfdb_special_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value);
int cfdb_special_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single);
/* A reset forgets the special writes and the error message (mu held). */
void cfdb_special_reset(cfdb_txn *tx);
/* Whether the commit must first run the written modules' commits (takes mu), and that
 * commit: the modules' work on a worker, then cfdb_txn_commit_now. */
bool cfdb_special_commit_first(cfdb_txn *tx);
cfdb_future *cfdb_special_commit(cfdb_txn *tx);
/* The transaction's own commit, without the special key space's work (txn_commit.c). */
cfdb_future *cfdb_txn_commit_now(cfdb_txn *tx);

struct sk_impl;
/* The writable implementation whose range holds key, or NULL. */
const struct sk_impl *sk_find_write_impl(cfdb_bytes key);

/* The API version the application selected (fdb_select_api_version; 0 before): which
 * implementations exist depends on it (special_profiling.c; issue 12, modules). */
void cfdb_special_set_api_version(int version);
/* That version, or 0 before fdb_select_api_version (atomic operations' forms depend on it:
 * cfdb_txn_atomic_op). */
int cfdb_selected_api_version(void);

/* Conflicting keys reported by a failed commit (txn_conflicts.c). */
bool cfdb_conflicts_is_special(cfdb_bytes key);
void cfdb_conflicts_clear(cfdb_txn *tx); /* mu held */
void cfdb_conflicts_record(cfdb_txn *tx, const cfdb_key_range *reads, uint32_t nreads, const int32_t *indices,
                           uint32_t n); /* takes mu */
cfdb_future *cfdb_conflicts_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_conflicts_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);

#endif
