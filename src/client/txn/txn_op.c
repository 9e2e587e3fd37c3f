/* The operation machinery, generic over operation kinds (txn_internal.h): making an op in its
 * future's block, queueing its start on the network thread, the transaction's list of ops in
 * flight, ending an op exactly once, abandonment (cancelled future, reset, timeout), the
 * transaction's deadline timer, a commit waiting for the attempt's reads (RYW's `reading`),
 * retry timers with a bound on undecodable replies, and the read version every operation of an
 * attempt shares (TransactionState::startTransaction).
 *
 * A kind is known only through its txn_op_kind table: start, flags, finish. Everything here
 * runs on the network thread except op_new, op_launch and op_settle (application threads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "tenant.h"
#include "txn_internal.h"

_Static_assert(offsetof(op, w) == 0, "an op's waiter is the op (waiter lists hold ops)");

static void op_start(void *arg);

/* A cheap per-thread generator (xorshift32) for choices made on application threads,
 * where the client's own generator (network thread only) may not be used. */
static uint32_t thread_random(void)
{
    static _Thread_local uint32_t x;
    if (!x)
        x = ((uint32_t)(uintptr_t)&x ^ (uint32_t)cfdb_monotonic_ns()) | 1;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* The op lives in its future's allocation (freed with the future's last reference). */
op *op_new(cfdb_txn *tx, const txn_op_kind *kind, cfdb_future_kind fkind, size_t size)
{
    op *o;
    if (size < sizeof *o || size > CFDB_FUTURE_EXTRA_MAX) {
        fprintf(stderr, "cfdb: operation %s does not fit its future (%zu bytes)\n", kind->name, size);
        abort();
    }
    cfdb_future *f = cfdb_future_new_with(fkind, size, (void **)&o);
    if (!f)
        return NULL;
    o->kind = kind;
    o->tx = tx;
    o->cl = tx->cl;
    o->f = f;
    cfdb_future_ref(f); /* the op's own reference */
    txn_ref(tx);
    o->gen = atomic_load(&tx->gen);
    o->replica = (int)(thread_random() & 0xffff); /* spreads reads over a shard's replicas */
    cfdb_timer_init(&o->timer, NULL, o);
    cfdb_task_init(&o->task, op_start, o);
    return o;
}

cfdb_future *op_launch(op *o)
{
    cfdb_future *f = o->f;
    cfdb_loop_post_task(cfdb_client_loop(o->tx->cl), &o->task);
    return f;
}

cfdb_future *op_settle(op *o, int error)
{
    cfdb_future *f = o->f;
    op_finish(o, error);
    return f;
}

void op_link(op *o)
{
    cfdb_txn *tx = o->tx;
    o->next = tx->ops;
    o->prev = NULL;
    if (tx->ops)
        tx->ops->prev = o;
    tx->ops = o;
}

static void op_unlink(op *o)
{
    cfdb_txn *tx = o->tx;
    if (o->prev)
        o->prev->next = o->next;
    else if (tx->ops == o)
        tx->ops = o->next;
    if (o->next)
        o->next->prev = o->prev;
    o->prev = o->next = NULL;
}

/* ---------- a commit waits for the attempt's reads (RYWImpl::commit waits on `reading`) ---------- */

static void commit_resume(op *c)
{
    if (c->kind->resume)
        c->kind->resume(c);
    else
        c->kind->start(c);
}

static void commit_resume_task(void *arg)
{
    commit_resume(arg);
}

static void release_waiting_commit(cfdb_txn *tx)
{
    op *c = tx->commit_waiting;
    tx->commit_waiting = NULL;
    if (!c)
        return;
    cfdb_task_init(&c->task, commit_resume_task, c); /* op_start's run is long over */
    cfdb_loop_post_task(cfdb_client_loop(tx->cl), &c->task);
}

bool txn_commit_must_wait(op *o)
{
    cfdb_txn *tx = o->tx;
    if (tx->reads_gen != o->gen || tx->reads_in_flight == 0)
        return false;
    release_waiting_commit(tx); /* (a second commit cannot be: used_during_commit) */
    tx->commit_waiting = o;     /* read_done resumes it */
    return true;
}

static void read_started(op *o)
{
    cfdb_txn *tx = o->tx;
    if (tx->reads_gen != o->gen) { /* a new attempt: the old one's reads no longer hold anything */
        tx->reads_gen = o->gen;
        tx->reads_in_flight = 0;
        release_waiting_commit(tx);
    }
    tx->reads_in_flight++;
    o->counted_read = true;
}

static void read_done(op *o, int error)
{
    cfdb_txn *tx = o->tx;
    if (tx->reads_gen != o->gen)
        return;
    tx->reads_in_flight--;
    /* the commit fails with a read's own error (AndFuture of the reads); a read the application
     * cancelled, or that a reset or timeout ended, goes on in libfdb_c and is not counted */
    if (error && error != CFDB_ERR_OPERATION_CANCELLED && error != CFDB_ERR_TRANSACTION_CANCELLED &&
        error != CFDB_ERR_TRANSACTION_TIMED_OUT) {
        pthread_mutex_lock(&tx->mu);
        if (atomic_load(&tx->gen) == o->gen && !tx->read_error)
            tx->read_error = error;
        pthread_mutex_unlock(&tx->mu);
    }
    if (tx->reads_in_flight == 0)
        release_waiting_commit(tx);
}

/* ---------- ending ---------- */

void op_finish(op *o, int error)
{
    if (o->finished) {
        fprintf(stderr, "cfdb: operation %s finished twice\n", o->kind->name);
        abort();
    }
    o->finished = true;
    txn_cost_op_finished(o, error);
    if (o->counted_read)
        read_done(o, error);
    if (o->kind->finish)
        o->kind->finish(o, error);
    cfdb_loop *loop = cfdb_client_loop(o->tx->cl);
    if (cfdb_timer_is_armed(&o->timer))
        cfdb_loop_timer_cancel(loop, &o->timer);
    if (o->request)
        cfdb_client_forget(o->tx->cl, o->request);
    op_unlink(o);
    cfdb_txn *tx = o->tx;
    cfdb_future *f = o->f;
    /* o lives inside f: nothing may touch it after the op's reference is dropped */
    cfdb_future_complete(f, error);
    cfdb_future_unref(f);
    txn_unref(tx);
}

bool op_abandoned(op *o)
{
    cfdb_txn *tx = o->tx;
    if (cfdb_future_is_ready(o->f)) {
        op_finish(o, CFDB_ERR_OPERATION_CANCELLED);
        return true;
    }
    if (atomic_load(&tx->gen) != o->gen) {
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
        return true;
    }
    if (tx->deadline_ns && cfdb_monotonic_ns() >= tx->deadline_ns && !(o->kind->flags & TXN_OP_OWN_LIFETIME)) {
        op_finish(o, CFDB_ERR_TRANSACTION_TIMED_OUT);
        return true;
    }
    return false;
}

bool op_bad_reply(op *o, int rc)
{
    if (++o->bad_replies < TXN_MAX_BAD_REPLIES)
        return false;
    op_finish(o, rc);
    return true;
}

bool txn_storage_reply(op *o, int transport_error, const uint8_t *msg, uint32_t len, const txn_reply_desc *d,
                       void *rep, cfdb_arena *arena, txn_relocate_fn relocate)
{
    o->request = 0;
    if (op_abandoned(o))
        return false;
    if (transport_error) {
        relocate(o, transport_error);
        return false;
    }
    memset(rep, 0, d->size);
    cfdb_reply_error err = 0;
    int rc = txn_decode(d->msg, msg, len, rep, &err, arena);
    if (rc) {
        if (!op_bad_reply(o, rc))
            relocate(o, rc);
        return false;
    }
    op_good_reply(o);
    int e = err;
    if (!e && d->error_offset != TXN_REPLY_NO_INBAND) {
        const cfdb_opt_error *inband = (const cfdb_opt_error *)(const void *)((const char *)rep + d->error_offset);
        if (inband->present)
            e = inband->value.code;
    }
    if (!e)
        return true;
    if (storage_error_relocates(e) ||
        (e == CFDB_ERR_FUTURE_VERSION && (d->flags & TXN_REPLY_RELOCATE_FUTURE_VERSION)))
        relocate(o, e);
    else
        op_finish(o, e);
    return false;
}

/* Ends the application's side of the ops in flight: their futures become ready with error at
 * once, as libfdb_c fails outstanding reads when a transaction is reset, cancelled or times
 * out. Each op finds its future ready at its next step and winds down then (it may be
 * parked, e.g. waiting for a read version from a cluster that does not answer). */
void txn_complete_ops(cfdb_txn *tx, int error, bool only_current_gen)
{
    unsigned gen = atomic_load(&tx->gen);
    for (op *o = tx->ops; o; o = o->next) {
        if (o->kind->flags & TXN_OP_OWN_LIFETIME)
            continue;
        if (only_current_gen ? o->gen != gen : o->gen == gen)
            continue; /* a timeout ends the current ops, a reset the ones from before it */
        cfdb_future_complete(o->f, error);
    }
}

/* ---------- the deadline ---------- */

static void deadline_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    cfdb_txn *tx = arg;
    pthread_mutex_lock(&tx->mu);
    uint64_t deadline = tx->deadline_ns;
    pthread_mutex_unlock(&tx->mu);
    if (deadline && cfdb_monotonic_ns() < deadline) { /* the timeout was extended */
        cfdb_loop_timer_add_at(loop, t, deadline); /* keeps the armed timer's reference */
        return;
    }
    if (deadline) {
        pthread_mutex_lock(&tx->mu);
        txn_error_locked(tx);
        pthread_mutex_unlock(&tx->mu);
        txn_complete_ops(tx, CFDB_ERR_TRANSACTION_TIMED_OUT, true);
    }
    txn_unref(tx);
}

/* Network thread, as an op starts: the timeout fires even if nothing answers. */
void txn_arm_deadline(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    uint64_t deadline = tx->deadline_ns;
    pthread_mutex_unlock(&tx->mu);
    if (!deadline)
        return;
    bool armed = cfdb_timer_is_armed(&tx->deadline_timer);
    if (!armed)
        cfdb_timer_init(&tx->deadline_timer, deadline_fire, tx);
    cfdb_loop_timer_add_at(cfdb_client_loop(tx->cl), &tx->deadline_timer, deadline);
    if (!armed)
        txn_ref(tx); /* the armed timer's reference */
}

void txn_disarm_deadline(cfdb_txn *tx)
{
    if (cfdb_loop_timer_cancel(cfdb_client_loop(tx->cl), &tx->deadline_timer))
        txn_unref(tx);
}

void op_retry_after(op *o, uint64_t delay_ns, cfdb_timer_fn fn)
{
    if (cfdb_timer_is_armed(&o->timer)) {
        fprintf(stderr, "cfdb: operation %s retried twice\n", o->kind->name);
        abort();
    }
    cfdb_timer_init(&o->timer, fn, o);
    cfdb_loop_timer_add_in(cfdb_client_loop(o->tx->cl), &o->timer, delay_ns);
}

/* ---------- the read version, and the tenant ---------- */

int txn_tenant_check(op *o)
{
    cfdb_txn *tx = o->tx;
    uint32_t flags = o->kind->flags;
    if (flags & (TXN_OP_TENANT_NONE | TXN_OP_TENANT_NO_CHECK))
        return 0;
    bool final;
    int mode = cfdb_db_tenant_mode(tx->db, &final);
    int error = 0;
    if (!tx->tenant && mode == 2 && !(flags & TXN_OP_TENANT_CHECK_IF_TENANT))
        error = CFDB_ERR_TENANT_NAME_REQUIRED;
    else if (tx->tenant && mode == 0 && final)
        error = CFDB_ERR_TENANTS_DISABLED; /* (provisional proxies do not know the mode) */
    if (!error)
        return 0;
    pthread_mutex_lock(&tx->mu); /* options change on application threads */
    bool raw = tx->opt.raw_access;
    pthread_mutex_unlock(&tx->mu);
    return raw ? 0 : error;
}

/* Hands the read version to an op's waiter, with getTenantInfo's verdict. */
static void rv_deliver(cfdb_waiter *w, int error, int64_t version)
{
    if (!error)
        error = txn_tenant_check((op *)w); /* every waiter is an op's */
    w->fn(w, error, version);
}

static void txn_tenant_ready(cfdb_waiter *w, int error, int64_t id)
{
    cfdb_txn *tx = (cfdb_txn *)((char *)w - offsetof(cfdb_txn, tenant_waiter));
    tx->tenant_waiting = false;
    if (!error) {
        tx->tenant_ready = true;
        tx->tenant_id = id;
    }
    cfdb_waiter *list = tx->tenant_waiters;
    tx->tenant_waiters = NULL;
    while (list) {
        cfdb_waiter *next = list->next;
        if (error)
            list->fn(list, error, 0);
        else
            txn_need_read_version_flags(tx, list, list->flags);
        list = next;
    }
    txn_unref(tx);
}

static void txn_rv_ready(cfdb_waiter *w, int error, int64_t version)
{
    cfdb_txn *tx = (cfdb_txn *)((char *)w - offsetof(cfdb_txn, rv_waiter));
    tx->rv_requested = false;
    /* under mu: a reset on the application's thread bumps gen and clears these */
    pthread_mutex_lock(&tx->mu);
    unsigned gen = atomic_load(&tx->gen);
    bool current = tx->rv_gen == gen;
    if (!error && w->locked && !tx->opt.lock_aware)
        error = CFDB_ERR_DATABASE_LOCKED;
    if (current && !error && !tx->read_version) {
        tx->read_version = version;
        tx->tag_throttled_s = tx->tag_throttled_s + w->tag_throttled_s;
        if (w->mv_len <= sizeof tx->mv) {
            tx->mv_version = version;
            tx->mv_present = w->mv_present;
            tx->mv_len = w->mv_len;
            memcpy(tx->mv, w->mv, w->mv_len);
        }
    }
    pthread_mutex_unlock(&tx->mu);
    cfdb_waiter *list = tx->rv_waiters;
    tx->rv_waiters = NULL;
    while (list) {
        cfdb_waiter *next = list->next;
        op *o = (op *)list; /* every waiter is an op's */
        if (!current && o->gen == gen)
            txn_need_read_version(tx, list); /* it came after a reset: the old answer is not its */
        else
            rv_deliver(list, current ? error : CFDB_ERR_TRANSACTION_CANCELLED, tx->read_version);
        list = next;
    }
    txn_unref(tx);
}

void txn_need_read_version(cfdb_txn *tx, cfdb_waiter *w)
{
    txn_need_read_version_flags(tx, w, 0);
}

/* TransactionState::startTransaction(flags): the flags count only for the request that
 * fetches the read version (a commit without reads asks with FLAG_CAUSAL_READ_RISKY). */
void txn_need_read_version_flags(cfdb_txn *tx, cfdb_waiter *w, uint32_t extra_flags)
{
    if (tx->tenant && !tx->tenant_ready && !(((op *)w)->kind->flags & TXN_OP_TENANT_NONE)) {
        /* startTransaction: the tenant's id first (its lookup started when it was opened) */
        w->flags = extra_flags;
        w->next = tx->tenant_waiters;
        tx->tenant_waiters = w;
        if (!tx->tenant_waiting) {
            tx->tenant_waiting = true;
            tx->tenant_waiter.fn = txn_tenant_ready;
            txn_ref(tx);
            cfdb_tenant_wait(tx->tenant, &tx->tenant_waiter);
        }
        return;
    }
    if (tx->read_version) {
        rv_deliver(w, 0, tx->read_version);
        return;
    }
    w->next = tx->rv_waiters;
    tx->rv_waiters = w;
    if (tx->rv_requested)
        return;
    tx->rv_requested = true;
    tx->rv_gen = atomic_load(&tx->gen);
    tx->rv_waiter.fn = txn_rv_ready;
    pthread_mutex_lock(&tx->mu); /* options change on application threads */
    tx->rv_waiter.flags = tx->opt.priority_system_immediate ? CFDB_GRV_PRIORITY_SYSTEM_IMMEDIATE
                          : tx->opt.priority_batch         ? CFDB_GRV_PRIORITY_BATCH
                                                           : CFDB_GRV_PRIORITY_DEFAULT;
    if (tx->opt.causal_read_risky)
        tx->rv_waiter.flags |= CFDB_GRV_FLAG_CAUSAL_READ_RISKY;
    tx->rv_waiter.flags |= extra_flags;
    bool use_cache = tx->opt.use_grv_cache && !tx->opt.skip_grv_cache;
    pthread_mutex_unlock(&tx->mu);
    txn_ref(tx);
    if (use_cache) { /* TransactionState::getReadVersion with useGrvCache */
        int64_t v = cfdb_db_cached_read_version(tx->db, tx->rv_waiter.flags);
        if (v) {
            tx->rv_waiter.tag_throttled_s = 0;
            tx->rv_waiter.mv_present = false;
            tx->rv_waiter.locked = false;
            tx->rv_waiter.mv_len = UINT32_MAX; /* \xff/metadataVersion not known: read it */
            txn_rv_ready(&tx->rv_waiter, 0, v);
            return;
        }
    }
    cfdb_db_get_read_version(tx->db, &tx->rv_waiter);
}

/* ---------- starting ---------- */

static void op_start(void *arg)
{
    op *o = arg;
    cfdb_txn *tx = o->tx;
    const txn_op_kind *k = o->kind;
    if (k->raw_start) {
        k->start(o);
        return;
    }
    op_link(o);
    if (!(k->flags & TXN_OP_OWN_LIFETIME)) {
        if (op_abandoned(o))
            return;
        txn_arm_deadline(tx);
        cfdb_db_start(tx->db);
    }
    if (k->flags & TXN_OP_READ)
        read_started(o);
    k->start(o);
}
