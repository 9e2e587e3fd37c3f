/* Committing, as an operation kind: the commit request built from the read-your-writes
 * state (or, with read-your-writes off, NativeAPI's program-order buffers: ryw.c), the reply,
 * the versionstamp, commit_unknown_result's probe (NativeAPI commitDummyTransaction),
 * read-only commits, and the commit and versionstamp entry points.
 *
 * A commit waits for the attempt's reads in flight (txn_commit_must_wait) and fails with the
 * first read's error; it ends the versionstamp future and starts or ends the watches. A
 * commit that could not be sent, or whose fate is unknown, is retried a bounded number of
 * times (COMMIT_SEND_ATTEMPTS, DUMMY_COMMIT_ATTEMPTS). */
#include "transaction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "txn_special.h"
#include "tenant.h"
#include "tenant_commit.h"
#include "txn_commit.h"
#include "txn_internal.h"
#include "txn_watch.h"

typedef struct commit_op {
    op base;
    cfdb_commit_transaction_request commit; /* arrays in the future's arena */
    /* a tenant's commit: the read conflict ranges before the prefix was applied (the
     * conflicting keys the proxy reports are shown relative to the tenant) */
    cfdb_key_range_vec relative_reads;
    bool read_only;
    cfdb_key_range dummy_range; /* commit_unknown_result probe (NativeAPI commitDummyTransaction) */
    int attempts;               /* sends that failed, or probes */
    uint64_t sent_ns;           /* when the commit went out (NativeAPI's grvTime) */
} commit_op;

_Static_assert(sizeof(commit_op) <= CFDB_FUTURE_EXTRA_MAX, "a commit fits in its future's block");

#define C(o) TXN_OP_AS(commit_op, o)


/* The versionstamp future ends with the commit: the stamp on success (NativeAPI sends it
 * for every committed transaction), no_commit_version for a read-only one,
 * transaction_invalid_version after a failure. */
void txn_settle_versionstamp(cfdb_txn *tx, int error, bool read_only)
{
    cfdb_future *vf = tx->versionstamp_future;
    if (!vf)
        return;
    tx->versionstamp_future = NULL;
    if (!error && !read_only) {
        int rc = cfdb_arena_dup_bytes(&vf->arena, cfdb_bytes_make(tx->versionstamp, 10), &vf->r.key);
        cfdb_future_complete(vf, rc ? TXN_ERR_NO_MEMORY : 0);
    } else {
        cfdb_future_complete(vf, read_only && !error ? CFDB_ERR_NO_COMMIT_VERSION : CFDB_ERR_TRANSACTION_INVALID_VERSION);
    }
    cfdb_future_unref(vf);
    txn_unref(tx); /* the waiting future's (the caller holds another) */
}

void txn_cancel_versionstamp(cfdb_txn *tx)
{
    cfdb_future *vf = tx->versionstamp_future;
    if (!vf)
        return;
    tx->versionstamp_future = NULL;
    cfdb_future_complete(vf, CFDB_ERR_TRANSACTION_CANCELLED);
    cfdb_future_unref(vf);
    txn_unref(tx); /* the waiting future's (the caller holds another) */
}

/* ---- commit_unknown_result: make sure the lost commit can no longer land ----
 * NativeAPI's commitDummyTransaction: commit, at a fresh read version, a transaction that
 * reads and writes one key where the lost commit's read and write conflict ranges meet (the
 * self-conflict key at least). Once that commits, the lost one would conflict if it were still
 * in flight; then the application hears commit_unknown_result. */
#define DUMMY_COMMIT_ATTEMPTS 100

static void commit_done(op *o, int error);
static void dummy_start(op *o);

static void dummy_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    dummy_start(arg);
}

static void on_dummy_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (!error) {
        cfdb_commit_id id;
        memset(&id, 0, sizeof id);
        cfdb_reply_error err = 0;
        cfdb_arena a;
        uint64_t mem[64];
        cfdb_arena_init_with(&a, mem, sizeof mem);
        int rc = txn_decode(&cfdb_msg_commit_id_reply, msg, len, &id, &err, &a);
        cfdb_arena_free(&a);
        error = rc ? CFDB_ERR_COMMIT_UNKNOWN_RESULT : err ? err : id.version < 0 ? CFDB_ERR_NOT_COMMITTED : 0;
    }
    if (!error || ++C(o)->attempts >= DUMMY_COMMIT_ATTEMPTS) {
        commit_done(o, CFDB_ERR_COMMIT_UNKNOWN_RESULT);
        return;
    }
    op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, dummy_retry_fire);
}

static void dummy_have_version(cfdb_waiter *w, int error, int64_t version)
{
    op *o = (op *)w;
    const cfdb_endpoint_ref *proxy = error ? NULL : cfdb_db_commit_proxy(o->tx->db);
    if (!proxy) {
        on_dummy_reply(o, error ? error : CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
        return;
    }
    cfdb_commit_transaction_request req;
    memset(&req, 0, sizeof req);
    req.transaction.read_conflict_ranges.items = &C(o)->dummy_range;
    req.transaction.read_conflict_ranges.count = 1;
    req.transaction.write_conflict_ranges.items = &C(o)->dummy_range;
    req.transaction.write_conflict_ranges.count = 1;
    req.transaction.read_snapshot = version;
    req.flags = CFDB_COMMIT_FLAG_IS_LOCK_AWARE;
    /* a tenant's probe: its range is absolute already (skipApplyTenantPrefix) */
    req.tenantInfo.tenantId = o->tx->tenant_id;
    o->request = cfdb_client_request(o->tx->cl, proxy->peer, cfdb_adjusted_token(proxy->token, CFDB_CP_COMMIT),
                                     &cfdb_msg_commit_transaction_request, &req, &req.reply.token, on_dummy_reply, o);
    if (!o->request)
        on_dummy_reply(o, CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
}

static void dummy_start(op *o)
{
    o->w.fn = dummy_have_version;
    o->w.flags = CFDB_GRV_PRIORITY_DEFAULT;
    cfdb_db_get_read_version(o->tx->db, &o->w);
}

/* Where the lost commit's read and write conflict ranges meet; false if they do not. */
static bool pick_dummy_key(op *o)
{
    const cfdb_commit_transaction *t = &C(o)->commit.transaction;
    for (uint32_t i = 0; i < t->write_conflict_ranges.count; i++) {
        cfdb_key_range w = t->write_conflict_ranges.items[i];
        for (uint32_t j = 0; j < t->read_conflict_ranges.count; j++) {
            cfdb_key_range r = t->read_conflict_ranges.items[j];
            if (cfdb_bytes_cmp(w.begin, r.end) >= 0 || cfdb_bytes_cmp(r.begin, w.end) >= 0)
                continue;
            cfdb_bytes k = cfdb_bytes_cmp(w.begin, r.begin) > 0 ? w.begin : r.begin;
            uint8_t *after = cfdb_arena_alloc(&o->f->arena, k.len + 1);
            if (!after)
                return false;
            memcpy(after, k.ptr, k.len);
            after[k.len] = 0;
            C(o)->dummy_range.begin = cfdb_bytes_make(after, k.len);
            C(o)->dummy_range.end = cfdb_bytes_make(after, k.len + 1);
            return true;
        }
    }
    return false;
}

static void on_commit_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    cfdb_txn *tx = o->tx;
    o->request = 0;
    if (atomic_load(&tx->gen) != o->gen) {
        /* reset (or timed out and reset) meanwhile: this answer is not the new attempt's */
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
        return;
    }
    bool lost = error != 0; /* the connection went: it may or may not have committed */
    cfdb_arena a;
    uint64_t mem[64];
    cfdb_arena_init_with(&a, mem, sizeof mem);
    if (!lost) {
        cfdb_commit_id id;
        memset(&id, 0, sizeof id);
        cfdb_reply_error err = 0;
        int rc = txn_decode(&cfdb_msg_commit_id_reply, msg, len, &id, &err, &a);
        error = 0;
        if (rc || err == CFDB_ERR_BROKEN_PROMISE || err == CFDB_ERR_REQUEST_MAYBE_DELIVERED)
            lost = true;
        else if (err)
            error = err;
        else if (id.version == -1) {
            error = CFDB_ERR_NOT_COMMITTED; /* conflicting keys were reported */
            if (id.conflictingKRIndices.present) {
                const cfdb_key_range_vec *reads =
                    tx->tenant ? &C(o)->relative_reads : &C(o)->commit.transaction.read_conflict_ranges;
                cfdb_conflicts_record(tx, reads->items, reads->count, id.conflictingKRIndices.value.items,
                                      id.conflictingKRIndices.value.count);
            }
        } else {
            tx->committed_version = id.version;
            uint64_t v = (uint64_t)id.version;
            for (int i = 0; i < 8; i++)
                tx->versionstamp[i] = (uint8_t)(v >> (56 - 8 * i));
            tx->versionstamp[8] = (uint8_t)(id.txnBatchId >> 8);
            tx->versionstamp[9] = (uint8_t)id.txnBatchId;
            tx->has_versionstamp = true;
            cfdb_db_note_version(tx->db, id.version);
            cfdb_db_update_cached_read_version(tx->db, id.version, C(o)->sent_ns);
        }
    }
    cfdb_arena_free(&a);
    if (lost) {
        pthread_mutex_lock(&tx->mu);
        bool causal_write_risky = tx->opt.causal_write_risky;
        pthread_mutex_unlock(&tx->mu);
        if (!causal_write_risky && pick_dummy_key(o)) {
            dummy_start(o);
            return;
        }
        error = CFDB_ERR_COMMIT_UNKNOWN_RESULT;
    }
    commit_done(o, error);
}

static void commit_done(op *o, int error)
{
    cfdb_txn *tx = o->tx;
    if (atomic_load(&tx->gen) != o->gen) { /* the transaction moved on: leave its state alone */
        op_finish(o, error ? error : CFDB_ERR_TRANSACTION_CANCELLED);
        return;
    }
    pthread_mutex_lock(&tx->mu);
    tx->committing = false;
    tx->committed = error == 0;
    pthread_mutex_unlock(&tx->mu);
    txn_settle_versionstamp(tx, error, false);
    txn_start_watches(tx, error);
    op_finish(o, error);
}

/* A commit that could not even be sent (no proxy yet, no connection) cannot be in flight:
 * it is sent again shortly, as the load balancer would, for up to this many attempts. */
#define COMMIT_SEND_ATTEMPTS 500

static void commit_transmit(op *o);

static void commit_resend_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    commit_transmit(arg);
}

static void commit_transmit(op *o)
{
    cfdb_txn *tx = o->tx;
    const cfdb_endpoint_ref *proxy = cfdb_db_commit_proxy(tx->db);
    C(o)->sent_ns = cfdb_loop_now_ns(cfdb_client_loop(tx->cl));
    o->request = proxy ? cfdb_client_request(tx->cl, proxy->peer, cfdb_adjusted_token(proxy->token, CFDB_CP_COMMIT),
                                             &cfdb_msg_commit_transaction_request, &C(o)->commit,
                                             &C(o)->commit.reply.token, on_commit_reply, o)
                       : 0;
    if (o->request)
        return;
    if (++C(o)->attempts < COMMIT_SEND_ATTEMPTS)
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, commit_resend_fire);
    else
        commit_done(o, CFDB_ERR_COMMIT_UNKNOWN_RESULT);
}

static void commit_send(op *o, int64_t read_version)
{
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    /* the request's arrays live in the future's (recycled) arena: no malloc per commit */
    int rc = cfdb_ryw_build_commit(&tx->ryw, read_version, tx->opt.causal_write_risky, cfdb_client_random(tx->cl),
                                   cfdb_client_random(tx->cl), &o->f->arena, &C(o)->commit.transaction);
    bool report = tx->opt.report_conflicting_keys, lock_aware = tx->opt.lock_aware;
    if (!rc && atomic_load(&tx->gen) == o->gen)
        txn_cost_commit(tx, &C(o)->commit.transaction);
    pthread_mutex_unlock(&tx->mu);
    if (!rc && tx->tenant) {
        /* tryCommit: applyTenantPrefix, and the request's TenantInfo */
        C(o)->relative_reads = C(o)->commit.transaction.read_conflict_ranges;
        rc = cfdb_tenant_apply_prefix(&C(o)->commit.transaction, tx->tenant_id, &o->f->arena);
    }
    if (rc) {
        commit_done(o, rc);
        return;
    }
    C(o)->commit.transaction.report_conflicting_keys = report;
    C(o)->commit.flags = lock_aware ? CFDB_COMMIT_FLAG_IS_LOCK_AWARE : 0;
    C(o)->commit.tenantInfo.tenantId = tx->tenant_id;
    commit_transmit(o);
}

static void read_only_commit_done(cfdb_txn *tx, int error);

static void commit_have_version(cfdb_waiter *w, int error, int64_t version)
{
    op *o = (op *)w;
    if (atomic_load(&o->tx->gen) != o->gen) {
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
        return;
    }
    if (C(o)->read_only) {
        read_only_commit_done(o->tx, error);
        txn_settle_versionstamp(o->tx, error, true);
        txn_start_watches(o->tx, error);
        op_finish(o, error);
        return;
    }
    if (error) {
        commit_done(o, error);
        return;
    }
    commit_send(o, version);
}


/* A read-only commit is a commit too while it waits (commitStarted): a second one or a write
 * meanwhile is used_during_commit. */
static void read_only_commit_done(cfdb_txn *tx, int error)
{
    pthread_mutex_lock(&tx->mu);
    tx->committing = false;
    tx->committed = error == 0;
    pthread_mutex_unlock(&tx->mu);
}

static void commit_begin(op *o)
{
    cfdb_txn *tx = o->tx;
    if (op_abandoned(o))
        return;
    pthread_mutex_lock(&tx->mu);
    int read_error = atomic_load(&tx->gen) == o->gen ? tx->read_error : 0;
    pthread_mutex_unlock(&tx->mu);
    if (read_error) {
        commit_done(o, read_error);
        return;
    }
    if (C(o)->read_only && !tx->watches) {
        read_only_commit_done(tx, 0);
        txn_settle_versionstamp(tx, 0, true);
        op_finish(o, 0); /* read-only: libfdb_c reports committed version -1 */
        return;
    }
    o->w.fn = commit_have_version;
    /* NativeAPI tryCommit: no read version yet means no reads, so no need for causal
     * consistency */
    txn_need_read_version_flags(tx, &o->w, CFDB_GRV_FLAG_CAUSAL_READ_RISKY);
}

/* Network thread, and again once the attempt's reads in flight are done. */
static void commit_start(op *o)
{
    if (!txn_commit_must_wait(o))
        commit_begin(o);
}

static const txn_op_kind commit_kind = { .name = "commit", .start = commit_start, .resume = commit_begin };


cfdb_future *cfdb_txn_commit(cfdb_txn *tx)
{
    /* SPECIAL_KEY_SPACE_ENABLE_WRITES: the written modules' work first (RYW commit) */
    if (txn_special_commit_first(tx))
        return txn_special_commit(tx);
    return cfdb_txn_commit_now(tx);
}

cfdb_future *cfdb_txn_commit_now(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    int rc = txn_error_locked(tx);
    if (!rc && tx->committing)
        rc = CFDB_ERR_USED_DURING_COMMIT;
    if (!rc && cfdb_ryw_size(&tx->ryw) > (size_t)tx->opt.size_limit)
        rc = CFDB_ERR_TRANSACTION_TOO_LARGE;
    if (rc) {
        pthread_mutex_unlock(&tx->mu);
        return cfdb_future_error(CFDB_FUTURE_VOID, rc);
    }
    bool read_only = cfdb_ryw_is_read_only(&tx->ryw);
    tx->committing = true;
    cfdb_conflicts_clear(tx); /* a new attempt: earlier reports no longer apply */
    op *o = op_new(tx, &commit_kind, CFDB_FUTURE_VOID, sizeof(commit_op));
    if (o)
        C(o)->read_only = read_only; /* nothing to send, but watches start at its read version */
    else
        tx->committing = false;
    pthread_mutex_unlock(&tx->mu);
    return o ? op_launch(o) : txn_future_no_memory(CFDB_FUTURE_VOID);
}

int cfdb_txn_get_committed_version(cfdb_txn *tx, int64_t *out)
{
    *out = tx->committed_version ? tx->committed_version : -1;
    return 0;
}

/* ---------- get_versionstamp: answered when the commit ends (txn_settle_versionstamp) ---------- */

static void versionstamp_start(op *o)
{
    cfdb_txn *tx = o->tx;
    if (tx->has_versionstamp) {
        int rc = cfdb_arena_dup_bytes(&o->f->arena, cfdb_bytes_make(tx->versionstamp, 10), &o->f->r.key);
        op_link(o);
        op_finish(o, rc ? TXN_ERR_NO_MEMORY : 0);
        return;
    }
    if (tx->versionstamp_future) { /* only the latest request is answered */
        cfdb_future_complete(tx->versionstamp_future, CFDB_ERR_OPERATION_CANCELLED);
        cfdb_future_unref(tx->versionstamp_future);
        txn_unref(tx); /* its reference: this op's takes over */
    }
    /* the op's references to its future and transaction stay while the future waits (a reset
     * then finds the transaction still in use and ends it); the op is done */
    tx->versionstamp_future = o->f;
}

static const txn_op_kind versionstamp_kind = { .name = "get_versionstamp", .start = versionstamp_start, .raw_start = true };

cfdb_future *cfdb_txn_get_versionstamp(cfdb_txn *tx)
{
    op *o = op_new(tx, &versionstamp_kind, CFDB_FUTURE_KEY, sizeof *o);
    return o ? op_launch(o) : txn_future_no_memory(CFDB_FUTURE_KEY);
}
