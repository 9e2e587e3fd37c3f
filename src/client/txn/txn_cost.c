/* What a transaction costs in libfdb_c 7.3's units (TransactionState::totalCost, for tag
 * throttling), and how long GRV proxies held it for tag throttling.
 *
 *   read  cost(b) = 4096 * max(1, ceil(b / 4096))        TAG_THROTTLING_PAGE_SIZE
 *   write cost(b) = 4 * 4096 * max(1, ceil(b / 4096))    x GLOBAL_TAG_THROTTLING_RW_FUNGIBILITY_RATIO
 *
 * A point read that reaches a storage server costs read(key + value); a range read (mapped or
 * not) costs read(32 * rows + keys + values) once per call, secondary results included; reads
 * answered from the transaction's own writes, get_key and metadata reads cost nothing. Writes
 * are counted as they leave in the commit: a set write(key + value), an atomic op write(key),
 * a clear 4096. A reset or a retrying on_error starts again from 0. */
#include "error_codes.h"
#include "mutation.h"
#include "txn_internal.h"

#define PAGE 4096
#define RW_RATIO 4

static int64_t pages(uint64_t bytes)
{
    return bytes == 0 ? 1 : (int64_t)((bytes + PAGE - 1) / PAGE);
}

void txn_cost_read(op *o, uint64_t bytes)
{
    o->read_storage = true;
    o->read_bytes += bytes;
}

void txn_cost_read_rows(op *o, const cfdb_key_value *rows, uint32_t n)
{
    uint64_t b = 32ull * n; /* sizeof(KeyValueRef) per row in RangeResultRef::expectedSize */
    for (uint32_t i = 0; i < n; i++)
        b += rows[i].key.len + rows[i].value.len;
    txn_cost_read(o, b);
}

void txn_cost_op_finished(op *o, int error)
{
    if (error || !o->read_storage)
        return;
    if (!(o->kind->flags & TXN_OP_COSTED)) /* get, get_range, get_mapped_range */
        return;
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu); /* a reset (gen bump, cost to 0) happens under mu */
    if (atomic_load(&tx->gen) == o->gen)
        atomic_fetch_add(&tx->total_cost, pages(o->read_bytes) * PAGE);
    pthread_mutex_unlock(&tx->mu);
}

void txn_cost_commit(cfdb_txn *tx, const cfdb_commit_transaction *t)
{
    int64_t cost = 0;
    for (uint32_t i = 0; i < t->mutations.count; i++) {
        const cfdb_mutation *m = &t->mutations.items[i];
        if (m->type == CFDB_MUT_CLEAR_RANGE)
            cost += PAGE;
        else if (m->type == CFDB_MUT_SET_VALUE)
            cost += RW_RATIO * PAGE * pages(m->param1.len + m->param2.len);
        else
            cost += RW_RATIO * PAGE * pages(m->param1.len);
    }
    atomic_fetch_add(&tx->total_cost, cost);
}

cfdb_future *cfdb_txn_get_total_cost(cfdb_txn *tx)
{
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_INT64);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_INT64);
    f->r.i64 = atomic_load(&tx->total_cost);
    cfdb_future_complete(f, 0);
    return f;
}

cfdb_future *cfdb_txn_get_tag_throttled_duration(cfdb_txn *tx)
{
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_DOUBLE);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_DOUBLE);
    f->r.d = atomic_load(&tx->tag_throttled_s);
    cfdb_future_complete(f, 0);
    return f;
}
