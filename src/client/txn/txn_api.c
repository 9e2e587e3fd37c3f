/* The transaction as the layers above see it (txn_api.h): accessors over cfdb_txn. */
#include "txn_internal.h"

cfdb_db *cfdb_txn_db(cfdb_txn *tx)
{
    return tx->db;
}

bool cfdb_txn_in_tenant(cfdb_txn *tx)
{
    return tx->tenant != NULL;
}

void cfdb_txn_lock(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
}

void cfdb_txn_unlock(cfdb_txn *tx)
{
    pthread_mutex_unlock(&tx->mu);
}

int cfdb_txn_deferred_error_locked(cfdb_txn *tx)
{
    return tx->deferred_error;
}

bool cfdb_txn_committing_locked(cfdb_txn *tx)
{
    return tx->committing;
}

const cfdb_txn_options *cfdb_txn_options_locked(cfdb_txn *tx)
{
    return &tx->opt;
}

const cfdb_ryw *cfdb_txn_ryw_locked(cfdb_txn *tx)
{
    return &tx->ryw;
}

struct cfdb_sk_state **cfdb_txn_special_state_locked(cfdb_txn *tx)
{
    return &tx->sk;
}

cfdb_txn_span *cfdb_txn_span_locked(cfdb_txn *tx)
{
    return &tx->span;
}

cfdb_txn_access cfdb_txn_grant_system_access_locked(cfdb_txn *tx)
{
    cfdb_txn_access was = { tx->opt.access_system_keys, tx->opt.read_system_keys, atomic_load(&tx->sys_readable) };
    tx->opt.access_system_keys = tx->opt.read_system_keys = true;
    tx->opt.raw_access = true;
    atomic_store(&tx->sys_readable, true);
    return was;
}

void cfdb_txn_restore_system_access_locked(cfdb_txn *tx, cfdb_txn_access saved)
{
    tx->opt.access_system_keys = saved.access_system_keys;
    tx->opt.read_system_keys = saved.read_system_keys;
    atomic_store(&tx->sys_readable, saved.sys_readable);
}
