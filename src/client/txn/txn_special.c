/* The transaction's side of the special key space: where it is, and the one router
 * (special/special_keys.c) the transaction hands its keys to, found through a hook so that
 * the engine does not depend on the modules above it. */
#include <stdatomic.h>

#include "error_codes.h"
#include "txn_internal.h"
#include "txn_special.h"

static _Atomic(const cfdb_special_router *) g_router;

void cfdb_txn_set_special_router(const cfdb_special_router *r)
{
    atomic_store_explicit(&g_router, r, memory_order_release);
}

static const cfdb_special_router *router(void)
{
    return atomic_load_explicit(&g_router, memory_order_acquire);
}

bool cfdb_special_key(cfdb_bytes key)
{
    static const uint8_t lo[] = { 0xff, 0xff }, hi[] = { 0xff, 0xff, 0xff };
    return cfdb_bytes_cmp(key, cfdb_bytes_make(lo, 2)) >= 0 && cfdb_bytes_cmp(key, cfdb_bytes_make(hi, 3)) < 0;
}

bool cfdb_special_range(cfdb_bytes begin, cfdb_bytes end)
{
    static const uint8_t lo[] = { 0xff, 0xff }, hi[] = { 0xff, 0xff, 0xff };
    return cfdb_special_key(begin) && cfdb_bytes_cmp(end, cfdb_bytes_make(lo, 2)) >= 0 &&
           cfdb_bytes_cmp(end, cfdb_bytes_make(hi, 3)) <= 0;
}

cfdb_future *txn_special_get(cfdb_txn *tx, cfdb_bytes key)
{
    const cfdb_special_router *r = router();
    return r ? r->get(tx, key) : cfdb_future_error(CFDB_FUTURE_VALUE, CFDB_ERR_UNSUPPORTED_OPERATION);
}

cfdb_future *txn_special_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse)
{
    const cfdb_special_router *r = router();
    return r ? r->get_range(tx, begin, end, limit, reverse)
             : cfdb_future_error(CFDB_FUTURE_KEYVALUES, CFDB_ERR_UNSUPPORTED_OPERATION);
}

int txn_special_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value)
{
    const cfdb_special_router *r = router();
    return r ? r->set(tx, key, value) : CFDB_ERR_UNSUPPORTED_OPERATION;
}

int txn_special_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single)
{
    const cfdb_special_router *r = router();
    return r ? r->clear(tx, begin, end, single) : CFDB_ERR_UNSUPPORTED_OPERATION;
}

void txn_special_reset(cfdb_txn *tx)
{
    const cfdb_special_router *r = router();
    if (r)
        r->reset(tx);
}

bool txn_special_commit_first(cfdb_txn *tx)
{
    const cfdb_special_router *r = router();
    return r && r->commit_first(tx);
}

cfdb_future *txn_special_commit(cfdb_txn *tx)
{
    return router()->commit(tx); /* only after txn_special_commit_first said so */
}
