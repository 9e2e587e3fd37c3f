/* \xff\xff/worker_interfaces/ (7.3.77 WorkerInterfacesSpecialKeyImpl,
 * fdbclient/SpecialKeySpace.actor.cpp): the cluster controller's client workers
 * (getWorkerInterfaces: GetClientWorkersRequest, db_manage.c's cfdb_db_get_client_workers),
 * each as \xff\xff/worker_interfaces/<address> = its ClientWorkerInterface in BinaryWriter
 * IncludeVersion form, sorted by key (sk_async_read keeps those inside the range read). Runs
 * on a management worker thread (special_worker.c), blocking on the request's future.
 * With the management option \xff\xff/management/options/worker_interfaces/verify set in this
 * transaction (a set recorded in its special write map; a clear forgets it), each worker is
 * asked GetLeaderRequest at its address (verifyInterfaceActor, CLI_CONNECT_TIMEOUT 10 s) and
 * only those that answer are listed (cfdb_db_get_client_workers_verified). libfdb_c asks only
 * the workers whose row lies in the range read; cfdb asks every worker, which changes only
 * which rows were asked for, not the rows answered. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "database.h"
#include "future.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define WI_PREFIX "\xff\xff/worker_interfaces/"

static int by_key(const void *x, const void *y)
{
    const cfdb_fdb_kv *a = x, *b = y;
    return cfdb_bytes_cmp(cfdb_bytes_make(a->key, (size_t)a->key_length),
                          cfdb_bytes_make(b->key, (size_t)b->key_length));
}

int sk_worker_interfaces_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    (void)begin;
    (void)end;
    /* getSpecialKeySpaceWriteMap()[options/worker_interfaces/verify].first */
    sk_entries opt;
    static const char verify_key[] = SK_MGMT "options/worker_interfaces/verify";
    int vrc = sk_collect(tx, CFDB_BYTES_LIT(verify_key), cfdb_bytes_make((const uint8_t *)verify_key, sizeof verify_key),
                         a, &opt);
    if (vrc)
        return vrc;
    bool verify = opt.n > 0 && opt.items[0].has_value && cfdb_bytes_eq(opt.items[0].begin, CFDB_BYTES_LIT(verify_key));
    cfdb_future *f = verify ? cfdb_db_get_client_workers_verified(cfdb_txn_db(tx)) : cfdb_db_get_client_workers(cfdb_txn_db(tx));
    if (!f)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_future_wait(f);
    int rc = f->error;
    const size_t pl = sizeof WI_PREFIX - 1;
    for (int i = 0; !rc && i < f->r.kvs.count; i++) {
        const cfdb_fdb_kv *w = &f->r.kvs.items[i];
        uint8_t *k = cfdb_arena_alloc(a, pl + (size_t)w->key_length);
        if (!k) {
            rc = CFDB_ERR_UNKNOWN_ERROR;
            break;
        }
        memcpy(k, WI_PREFIX, pl);
        memcpy(k + pl, w->key, (size_t)w->key_length);
        cfdb_bytes key = cfdb_bytes_make(k, pl + (size_t)w->key_length);
        rc = sk_rows_push(out, a, key, cfdb_bytes_make(w->value, (size_t)w->value_length));
    }
    cfdb_future_unref(f);
    if (!rc && out->n > 1)
        qsort(out->items, (size_t)out->n, sizeof *out->items, by_key);
    return rc;
}
