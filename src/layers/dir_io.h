/* SPDX-License-Identifier: Apache-2.0 */
/* Blocking reads over the public fdb_c.h API for the directory layer (src/layers/directory*.c):
 * each issues one request on the caller's transaction, waits for it and copies the result
 * into an arena, so that no future outlives the call. Errors: FoundationDB codes. */
#ifndef CFDB_LAYERS_DIR_IO_H
#define CFDB_LAYERS_DIR_IO_H

#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <stdbool.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"

typedef struct dir_kv {
    cfdb_bytes key;
    cfdb_bytes value;
} dir_kv;

/* Value of key (copied into a); *present false when the key is absent. */
int dir_get(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes key, bool snapshot, bool *present,
            cfdb_bytes *value);
/* The first (or, reverse, last) pair in [begin, end); *found false when none. */
int dir_get_first(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes begin, cfdb_bytes end, bool snapshot,
                  bool reverse, bool *found, dir_kv *kv);
/* Every pair in [begin, end), in order, into an arena array. */
int dir_get_all(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes begin, cfdb_bytes end, dir_kv **kvs,
                uint32_t *count);

static inline void dir_set(FDBTransaction *tr, cfdb_bytes k, cfdb_bytes v)
{
    fdb_transaction_set(tr, k.ptr, (int)k.len, v.ptr, (int)v.len);
}

static inline void dir_clear(FDBTransaction *tr, cfdb_bytes k)
{
    fdb_transaction_clear(tr, k.ptr, (int)k.len);
}

static inline void dir_clear_range(FDBTransaction *tr, cfdb_bytes b, cfdb_bytes e)
{
    fdb_transaction_clear_range(tr, b.ptr, (int)b.len, e.ptr, (int)e.len);
}

/* The first key after every key starting with p (p without its trailing 0xff bytes, last
 * byte + 1); 2000 when p is empty or all 0xff. */
int dir_strinc(cfdb_arena *a, cfdb_bytes p, cfdb_bytes *out);
/* a + b in the arena. */
int dir_concat(cfdb_arena *a, cfdb_bytes x, cfdb_bytes y, cfdb_bytes *out);

#endif
