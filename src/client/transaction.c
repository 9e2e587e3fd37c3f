#include "transaction.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/atomic_ops.h"
#include "cfdb/endpoint.h"
#include "cfdb/errors.h"
#include "cfdb/mutation.h"
#include "cfdb/object_cache.h"
#include "ryw.h"
#include "txn_internal.h"

#include <foundationdb/fdb_c_options.g.h>

static void op_start(void *arg);

/* ---------- small helpers ---------- */

cfdb_future *cfdb_future_error(cfdb_future_kind kind, int error)
{
    cfdb_future *f = cfdb_future_new(kind);
    if (f)
        cfdb_future_complete(f, error);
    return f;
}

void txn_ref(cfdb_txn *tx)
{
    atomic_fetch_add(&tx->refs, 1);
}

/* Transactions are recycled through a small per-thread cache (their write map's arena
 * block with them), so that a transaction costs no malloc after warm-up. */
static void txn_destroy_cached(void *obj)
{
    cfdb_txn *tx = obj;
    cfdb_ryw_free(&tx->ryw);
    pthread_mutex_destroy(&tx->mu);
    free(tx);
}
static cfdb_object_cache g_txns = CFDB_OBJECT_CACHE_INIT(txn_destroy_cached);
static _Thread_local cfdb_object_cache_local tl_txns;

static void txn_free_task(void *arg)
{
    cfdb_txn *tx = arg;
    cfdb_conflicts_clear(tx);
    if (tx->versionstamp_future) {
        cfdb_future_complete(tx->versionstamp_future, CFDB_ERR_TRANSACTION_CANCELLED);
        cfdb_future_unref(tx->versionstamp_future);
        tx->versionstamp_future = NULL;
    }
    cfdb_db_user_unref(tx->db);
    if (cfdb_arena_block_capacity(&tx->ryw.arena) <= 64 * 1024) {
        cfdb_ryw_reset(&tx->ryw);
        if (cfdb_object_cache_put(&g_txns, &tl_txns, tx))
            return;
    }
    txn_destroy_cached(tx);
}

void txn_unref(cfdb_txn *tx)
{
    int before = atomic_fetch_sub(&tx->refs, 1);
    if (before <= 0) {
        fprintf(stderr, "cfdb: transaction reference count underflow\n");
        abort();
    }
    if (before != 1)
        return;
    /* nothing on the network thread refers to tx any more: free it here */
    txn_free_task(tx);
}

/* ---------- creation, options ---------- */

static void default_options(cfdb_txn_options *o)
{
    memset(o, 0, sizeof *o);
    o->retry_limit = -1;
    o->max_retry_delay_ms = (int64_t)(DEFAULT_MAX_BACKOFF * 1000);
    o->size_limit = TRANSACTION_SIZE_LIMIT;
}

static int apply_default(void *tx, int option, const uint8_t *value, int length)
{
    return cfdb_txn_set_option(tx, option, value, length);
}

cfdb_txn *cfdb_txn_create(cfdb_db *db)
{
    cfdb_txn *tx = cfdb_object_cache_get(&g_txns, &tl_txns);
    if (tx) {
        /* everything but the mutex and the (reset) read-your-writes state starts afresh */
        memset(&tx->db, 0, sizeof *tx - offsetof(cfdb_txn, db));
    } else {
        tx = calloc(1, sizeof *tx);
        if (!tx)
            return NULL;
        pthread_mutex_init(&tx->mu, NULL);
        cfdb_ryw_init(&tx->ryw);
    }
    tx->db = db;
    tx->cl = cfdb_db_client(db);
    cfdb_db_user_ref(db);
    atomic_init(&tx->refs, 1);
    atomic_init(&tx->gen, 1);
    tx->creation_ns = cfdb_monotonic_ns();
    cfdb_timer_init(&tx->deadline_timer, NULL, tx);
    default_options(&tx->opt);
    cfdb_retry_state_init(&tx->retry);
    cfdb_db_apply_defaults(db, tx, apply_default);
    return tx;
}

/* The error every new operation fails with (mu held). A passed deadline times the
 * transaction out for good, until a reset, whether or not anything was running (libfdb_c's
 * timebomb sets the reset promise). */
int txn_error_locked(cfdb_txn *tx)
{
    if (!tx->deferred_error && tx->deadline_ns && cfdb_monotonic_ns() >= tx->deadline_ns)
        tx->deferred_error = CFDB_ERR_TRANSACTION_TIMED_OUT;
    return tx->deferred_error;
}

static void txn_arm_deadline(cfdb_txn *tx);

static void deadline_rearm_task(void *arg)
{
    cfdb_txn *tx = arg;
    txn_arm_deadline(tx);
    txn_unref(tx);
}

static void post_deadline_rearm(cfdb_txn *tx)
{
    txn_ref(tx);
    if (cfdb_loop_post(cfdb_client_loop(tx->cl), deadline_rearm_task, tx) != 0)
        txn_unref(tx);
}

/* FDBTransactionOption (fdb_c_options.g.h). Options not acted on are accepted, as
 * libfdb_c accepts them; the README lists them. */
int cfdb_txn_set_option(cfdb_txn *tx, int option, const uint8_t *value, int length)
{
    int rc = 0;
    int64_t v = 0;
    pthread_mutex_lock(&tx->mu);
    cfdb_txn_options *o = &tx->opt;
    switch (option) {
    case FDB_TR_OPTION_CAUSAL_WRITE_RISKY: o->causal_write_risky = true; break;
    case FDB_TR_OPTION_CAUSAL_READ_RISKY: o->causal_read_risky = true; break;
    case FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE: tx->ryw.next_write_no_conflict = true; break;
    case FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE:
        /* only before the transaction has read or written (ReadYourWritesTransaction) */
        if (!cfdb_ryw_is_read_only(&tx->ryw) || cfdb_read_conflicts_count(&tx->ryw.reads))
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
        else
            o->read_your_writes_disable = true;
        break;
    case FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE: o->priority_system_immediate = true; break;
    case FDB_TR_OPTION_PRIORITY_BATCH: o->priority_batch = true; break;
    case FDB_TR_OPTION_INITIALIZE_NEW_DATABASE:
    case FDB_TR_OPTION_ACCESS_SYSTEM_KEYS:
        o->access_system_keys = o->read_system_keys = true;
        atomic_store(&tx->sys_readable, true);
        break;
    case FDB_TR_OPTION_READ_SYSTEM_KEYS:
        o->read_system_keys = true;
        atomic_store(&tx->sys_readable, true);
        break;
    case FDB_TR_OPTION_TIMEOUT:
        if ((rc = cfdb_option_int(value, length, 0, INT32_MAX, &v)) == 0) {
            /* from the transaction's creation (or last reset), as libfdb_c's timebomb; a
             * timeout that already went off stays so (txn_error_locked latches it first) */
            txn_error_locked(tx);
            o->timeout_ms = v;
            tx->deadline_ns = v ? tx->creation_ns + (uint64_t)v * 1000000ull : 0;
            if (v && atomic_load(&tx->refs) > 1)
                post_deadline_rearm(tx); /* operations are waiting: the new deadline applies to them */
        }
        break;
    case FDB_TR_OPTION_RETRY_LIMIT:
        if ((rc = cfdb_option_int(value, length, -1, INT32_MAX, &v)) == 0) {
            o->retry_limit = v;
            cfdb_retry_set_retry_limit(&tx->retry, v);
        }
        break;
    case FDB_TR_OPTION_MAX_RETRY_DELAY:
        if ((rc = cfdb_option_int(value, length, 0, INT32_MAX, &v)) == 0) {
            o->max_retry_delay_ms = v;
            cfdb_retry_set_max_retry_delay_ms(&tx->retry, v);
        }
        break;
    case FDB_TR_OPTION_SIZE_LIMIT:
        if ((rc = cfdb_option_int(value, length, 32, TRANSACTION_SIZE_LIMIT, &v)) == 0)
            o->size_limit = v;
        break;
    case FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE: o->snapshot_ryw_disable = false; break;
    case FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE: o->snapshot_ryw_disable = true; break;
    case FDB_TR_OPTION_LOCK_AWARE:
    case FDB_TR_OPTION_READ_LOCK_AWARE:
        o->lock_aware = true;
        break;
    case FDB_TR_OPTION_USED_DURING_COMMIT_PROTECTION_DISABLE: o->used_during_commit_protection_disable = true; break;
    case FDB_TR_OPTION_REPORT_CONFLICTING_KEYS: o->report_conflicting_keys = true; break;
    default:
        break;
    }
    /* ThreadSafeTransaction::setOption hands the option to the network thread and keeps what
     * it throws (invalid_option_value, a late READ_YOUR_WRITES_DISABLE...) as the
     * transaction's deferred error: set_option itself answers 0, and the next operation or
     * the commit fails with it. */
    if (rc && !tx->deferred_error)
        tx->deferred_error = rc;
    pthread_mutex_unlock(&tx->mu);
    return 0;
}

/* ---------- writes ---------- */

static int check_write_key(cfdb_txn *tx, cfdb_bytes key)
{
    if (!tx->opt.access_system_keys && key_is_system(key))
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    if (key.len > (key_is_system(key) ? SYSTEM_KEY_SIZE_LIMIT : KEY_SIZE_LIMIT))
        return CFDB_ERR_KEY_TOO_LARGE;
    return 0;
}

/* Misuse of a write makes the transaction fail: libfdb_c reports it on the next futures. */
static void defer_error(cfdb_txn *tx, int error)
{
    if (!tx->deferred_error)
        tx->deferred_error = error;
}

static bool writable(cfdb_txn *tx)
{
    if (tx->committing && !tx->opt.used_during_commit_protection_disable) {
        defer_error(tx, CFDB_ERR_USED_DURING_COMMIT);
        return false;
    }
    return true;
}

void cfdb_txn_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value)
{
    pthread_mutex_lock(&tx->mu);
    /* the metadata version only ever takes a versionstamp (RYW set) */
    int rc = is_metadata_version_key(key) ? CFDB_ERR_CLIENT_INVALID_OPERATION : check_write_key(tx, key);
    if (!rc && value.len > VALUE_SIZE_LIMIT)
        rc = CFDB_ERR_VALUE_TOO_LARGE;
    if (rc)
        defer_error(tx, rc);
    else if (writable(tx))
        cfdb_ryw_set(&tx->ryw, key, value);
    pthread_mutex_unlock(&tx->mu);
}

void cfdb_txn_clear(cfdb_txn *tx, cfdb_bytes key)
{
    pthread_mutex_lock(&tx->mu);
    int rc = check_write_key(tx, key);
    if (rc == CFDB_ERR_KEY_TOO_LARGE)
        rc = 0; /* clearing a key that cannot exist is a no-op */
    else if (rc)
        defer_error(tx, rc);
    if (!rc && key.len <= SYSTEM_KEY_SIZE_LIMIT && writable(tx))
        cfdb_ryw_clear_range(&tx->ryw, key, cfdb_bytes_make(NULL, 0), true);
    pthread_mutex_unlock(&tx->mu);
}

void cfdb_txn_clear_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end)
{
    pthread_mutex_lock(&tx->mu);
    cfdb_bytes limit = tx->opt.access_system_keys ? CFDB_BYTES_LIT("\xff\xff") : CFDB_BYTES_LIT("\xff");
    if (cfdb_bytes_cmp(begin, end) > 0)
        defer_error(tx, CFDB_ERR_INVERTED_RANGE);
    else if (cfdb_bytes_cmp(begin, limit) > 0 || cfdb_bytes_cmp(end, limit) > 0)
        defer_error(tx, CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    else if (cfdb_bytes_cmp(begin, end) < 0 && writable(tx))
        cfdb_ryw_clear_range(&tx->ryw, begin, end, false);
    pthread_mutex_unlock(&tx->mu);
}

void cfdb_txn_atomic_op(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes param, int api_op)
{
    /* API codes are the wire codes, except that API >= 510 sends MinV2 / AndV2 */
    int type = api_op == CFDB_MUT_MIN ? CFDB_MUT_MIN_V2 : api_op == CFDB_MUT_AND ? CFDB_MUT_AND_V2 : api_op;
    pthread_mutex_lock(&tx->mu);
    int rc = 0;
    static const uint8_t stamp_only[14] = { 0 }; /* metadataVersionRequiredValue */
    if (is_metadata_version_key(key)) {
        /* anyone may stamp it, with exactly this operand and nothing else (RYW atomicOp) */
        if (type != CFDB_MUT_SET_VERSIONSTAMPED_VALUE || !cfdb_bytes_eq(param, cfdb_bytes_make(stamp_only, 14)))
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
    } else if (!cfdb_mutation_is_atomic(type)) {
        rc = CFDB_ERR_INVALID_MUTATION_TYPE;
    } else if (type == CFDB_MUT_SET_VERSIONSTAMPED_KEY) {
        if (cfdb_versionstamp_param_check(key))
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
        else if (!tx->opt.access_system_keys && key_is_system(key))
            rc = CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
        else if (key.len > KEY_SIZE_LIMIT + 4)
            rc = CFDB_ERR_KEY_TOO_LARGE;
    } else {
        rc = check_write_key(tx, key);
        if (!rc && type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE && cfdb_versionstamp_param_check(param))
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    if (!rc && param.len > VALUE_SIZE_LIMIT + (type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE ? 4u : 0u))
        rc = CFDB_ERR_VALUE_TOO_LARGE;
    if (rc)
        defer_error(tx, rc);
    else if (writable(tx))
        cfdb_ryw_atomic(&tx->ryw, type, key, param);
    pthread_mutex_unlock(&tx->mu);
}

int cfdb_txn_add_conflict_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int type)
{
    if (cfdb_bytes_cmp(begin, end) > 0)
        return CFDB_ERR_INVERTED_RANGE;
    if (type != 0 && type != 1)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    pthread_mutex_lock(&tx->mu);
    if (tx->committing && !tx->opt.used_during_commit_protection_disable) {
        defer_error(tx, CFDB_ERR_USED_DURING_COMMIT); /* checkUsedDuringCommit */
        pthread_mutex_unlock(&tx->mu);
        return CFDB_ERR_USED_DURING_COMMIT;
    }
    /* no key is longer than the limit: longer bounds are cut to limit + 1 byte */
    begin = cfdb_truncate_range_key(begin);
    end = cfdb_truncate_range_key(end);
    /* reads: getMaxReadKey, except exactly the metadata version key; writes: getMaxWriteKey */
    cfdb_bytes limit = type == 0 ? txn_max_read_key(tx)
                                 : (tx->opt.access_system_keys ? CFDB_BYTES_LIT("\xff\xff") : CFDB_BYTES_LIT("\xff"));
    static const char mvk_end[] = METADATA_VERSION_KEY "\x00";
    bool mvk_only = type == 0 && is_metadata_version_key(begin) &&
                    cfdb_bytes_eq(end, cfdb_bytes_make(mvk_end, sizeof mvk_end - 1));
    int rc = 0;
    if (cfdb_bytes_cmp(end, limit) > 0 && !mvk_only)
        rc = CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    else if (cfdb_bytes_cmp(begin, end) < 0) {
        if (type == 0)
            cfdb_ryw_add_read_conflict(&tx->ryw, begin, end);
        else
            cfdb_ryw_add_write_conflict(&tx->ryw, begin, end);
    }
    pthread_mutex_unlock(&tx->mu);
    return rc;
}

/* ---------- operations: common machinery (network thread) ---------- */

_Static_assert(sizeof(op) <= CFDB_FUTURE_EXTRA_MAX, "an op fits in its future's block");
_Static_assert(offsetof(op, w) == 0, "an op's waiter is the op (waiter lists hold ops)");

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
op *op_new(cfdb_txn *tx, enum op_kind kind, cfdb_future_kind fkind)
{
    op *o;
    cfdb_future *f = cfdb_future_new_with(fkind, sizeof *o, (void **)&o);
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
    cfdb_arena_init(&o->commit_arena);
    cfdb_timer_init(&o->timer, NULL, o);
    return o;
}

/* Queues the op's start on the network thread; returns the application's future. */
cfdb_future *op_launch(op *o)
{
    cfdb_future *f = o->f;
    if (cfdb_loop_post(cfdb_client_loop(o->tx->cl), op_start, o) != 0) {
        op_finish(o, CFDB_ERR_NETWORK_NOT_SETUP);
    }
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

/* ---- a commit waits for the attempt's reads (RYWImpl::commit waits on `reading`) ---- */

/* What RYW adds to `reading`: get, getKey, getRange, getAddressesForKey (not mapped ranges) */
static bool is_read(enum op_kind k)
{
    return k == OP_GET || k == OP_GET_KEY || k == OP_GET_RANGE || k == OP_ADDRESSES;
}


static void commit_resume_task(void *arg)
{
    txn_commit_begin(arg);
}

static void release_waiting_commit(cfdb_txn *tx)
{
    op *c = tx->commit_waiting;
    tx->commit_waiting = NULL;
    if (c && cfdb_loop_post(cfdb_client_loop(tx->cl), commit_resume_task, c) != 0)
        txn_commit_begin(c);
}

/* Network thread, as a read starts. */
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

void op_finish(op *o, int error)
{
    if (o->finished) {
        fprintf(stderr, "cfdb: operation %d finished twice\n", (int)o->kind);
        abort();
    }
    o->finished = true;
    txn_cost_op_finished(o, error);
    if (o->counted_read)
        read_done(o, error);
    if (o->counted_watch) {
        o->counted_watch = false;
        cfdb_db_watch_release(o->tx->db);
    }
    cfdb_loop *loop = cfdb_client_loop(o->tx->cl);
    if (cfdb_timer_is_armed(&o->timer))
        cfdb_loop_timer_cancel(loop, &o->timer);
    if (o->request)
        cfdb_client_forget(o->tx->cl, o->request);
    op_unlink(o);
    cfdb_arena_free(&o->commit_arena);
    cfdb_txn *tx = o->tx;
    cfdb_future *f = o->f;
    /* o lives inside f: nothing may touch it after the op's reference is dropped */
    cfdb_future_complete(f, error);
    cfdb_future_unref(f);
    txn_unref(tx);
}

/* True when the op should stop: cancelled by the application, or its transaction was
 * reset, cancelled or timed out. Finishes it in that case. */
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
    if (tx->deadline_ns && cfdb_monotonic_ns() >= tx->deadline_ns && o->kind != OP_ON_ERROR && o->kind != OP_WATCH) {
        op_finish(o, CFDB_ERR_TRANSACTION_TIMED_OUT);
        return true;
    }
    return false;
}

/* Ends the application's side of the ops in flight: their futures become ready with error at
 * once, as libfdb_c fails outstanding reads when a transaction is reset, cancelled or times
 * out. Each op finds its future ready at its next step and winds down then (it may be
 * parked, e.g. waiting for a read version from a cluster that does not answer). */
static void complete_ops(cfdb_txn *tx, int error, bool only_current_gen)
{
    unsigned gen = atomic_load(&tx->gen);
    for (op *o = tx->ops; o; o = o->next) {
        /* watches have their own rules; on_error is what resets */
        if (o->kind == OP_WATCH || o->kind == OP_ON_ERROR)
            continue;
        if (only_current_gen ? o->gen != gen : o->gen == gen)
            continue; /* a timeout ends the current ops, a reset the ones from before it */
        cfdb_future_complete(o->f, error);
    }
}

static void deadline_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    cfdb_txn *tx = arg;
    pthread_mutex_lock(&tx->mu);
    uint64_t deadline = tx->deadline_ns;
    pthread_mutex_unlock(&tx->mu);
    if (deadline && cfdb_monotonic_ns() < deadline) { /* the timeout was extended */
        if (cfdb_loop_timer_add_at(loop, t, deadline) != 0)
            txn_unref(tx); /* cannot re-arm: ops still notice the deadline at their next step */
        return;
    }
    if (deadline) {
        pthread_mutex_lock(&tx->mu);
        txn_error_locked(tx);
        pthread_mutex_unlock(&tx->mu);
        complete_ops(tx, CFDB_ERR_TRANSACTION_TIMED_OUT, true);
    }
    txn_unref(tx);
}

/* Network thread, as an op starts: the timeout fires even if nothing answers. */
static void txn_arm_deadline(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    uint64_t deadline = tx->deadline_ns;
    pthread_mutex_unlock(&tx->mu);
    if (!deadline)
        return;
    bool armed = cfdb_timer_is_armed(&tx->deadline_timer);
    if (!armed)
        cfdb_timer_init(&tx->deadline_timer, deadline_fire, tx);
    if (cfdb_loop_timer_add_at(cfdb_client_loop(tx->cl), &tx->deadline_timer, deadline) == 0 && !armed)
        txn_ref(tx); /* the armed timer's reference */
}

static void txn_disarm_deadline(cfdb_txn *tx)
{
    if (cfdb_loop_timer_cancel(cfdb_client_loop(tx->cl), &tx->deadline_timer))
        txn_unref(tx);
}

void op_retry_after(op *o, uint64_t delay_ns, cfdb_timer_fn fn)
{
    if (cfdb_timer_is_armed(&o->timer)) {
        fprintf(stderr, "cfdb: operation %d retried twice\n", (int)o->kind);
        abort();
    }
    cfdb_timer_init(&o->timer, fn, o);
    cfdb_loop_timer_add_in(cfdb_client_loop(o->tx->cl), &o->timer, delay_ns);
}

/* ---------- read versions ---------- */

static void txn_rv_ready(cfdb_waiter *w, int error, int64_t version)
{
    cfdb_txn *tx = (cfdb_txn *)((char *)w - offsetof(cfdb_txn, rv_waiter));
    tx->rv_requested = false;
    /* under mu: a reset on the application's thread bumps gen and clears these */
    pthread_mutex_lock(&tx->mu);
    unsigned gen = atomic_load(&tx->gen);
    bool current = tx->rv_gen == gen;
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
            list->fn(list, current ? error : CFDB_ERR_TRANSACTION_CANCELLED, tx->read_version);
        list = next;
    }
    txn_unref(tx);
}

/* Calls w when the transaction has a read version. */
void txn_need_read_version(cfdb_txn *tx, cfdb_waiter *w)
{
    txn_need_read_version_flags(tx, w, 0);
}

/* TransactionState::startTransaction(flags): the flags count only for the request that
 * fetches the read version (a commit without reads asks with FLAG_CAUSAL_READ_RISKY). */
void txn_need_read_version_flags(cfdb_txn *tx, cfdb_waiter *w, uint32_t extra_flags)
{
    if (tx->read_version) {
        w->fn(w, 0, tx->read_version);
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
    pthread_mutex_unlock(&tx->mu);
    txn_ref(tx);
    cfdb_db_get_read_version(tx->db, &tx->rv_waiter);
}

/* ---------- on_error ---------- */

static void txn_reset_locked(cfdb_txn *tx, bool keep_backoff);

static void on_error_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    op *o = arg;
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    if (txn_error_locked(tx) == CFDB_ERR_TRANSACTION_TIMED_OUT) {
        pthread_mutex_unlock(&tx->mu); /* timed out during the backoff: it stays so */
        op_finish(o, CFDB_ERR_TRANSACTION_TIMED_OUT);
        return;
    }
    txn_reset_locked(tx, true);
    pthread_mutex_unlock(&tx->mu);
    complete_ops(tx, CFDB_ERR_TRANSACTION_CANCELLED, false);
    op_finish(o, 0);
}

/* Classification, backoff, retry limit and the cancelled state are retry_policy.c's
 * (Transaction::onError and ReadYourWritesTransaction::onError). */
static void on_error_start(op *o)
{
    cfdb_txn *tx = o->tx;
    double delay = 0, r01 = (double)(cfdb_client_random(tx->cl) >> 11) / 9007199254740992.0;
    pthread_mutex_lock(&tx->mu);
    if (txn_error_locked(tx) == CFDB_ERR_TRANSACTION_TIMED_OUT) {
        pthread_mutex_unlock(&tx->mu); /* the reset promise is set: on_error answers with it */
        op_finish(o, CFDB_ERR_TRANSACTION_TIMED_OUT);
        return;
    }
    int rc = cfdb_retry_on_error(&tx->retry, o->error, r01, 0.0, &delay);
    if (rc && tx->retry.cancelled_error) {
        /* a failed on_error leaves the transaction cancelled until reset (RYW onError) */
        tx->deferred_error = tx->retry.cancelled_error;
        tx->cancelled = true;
    }
    pthread_mutex_unlock(&tx->mu);
    if (rc) {
        op_finish(o, rc);
        return;
    }
    op_retry_after(o, (uint64_t)(delay * 1e9), on_error_fire);
}

/* ---------- starting operations (network thread) ---------- */

static void grv_op_ready(cfdb_waiter *w, int error, int64_t version)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    o->f->r.i64 = version;
    op_finish(o, error);
}

static void op_start(void *arg)
{
    op *o = arg;
    cfdb_txn *tx = o->tx;
    if (o->kind == OP_WATCH) {
        /* waits for the commit; not in the ops list */
        if (atomic_load(&tx->gen) != o->gen) {
            op_link(o);
            op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
            return;
        }
        if (!cfdb_db_watch_acquire(tx->db)) { /* DatabaseContext::increaseWatchCounter */
            op_link(o);
            op_finish(o, CFDB_ERR_TOO_MANY_WATCHES);
            return;
        }
        o->counted_watch = true;
        o->next = tx->watches;
        tx->watches = o;
        return;
    }
    op_link(o);
    if (o->kind == OP_ON_ERROR) {
        on_error_start(o);
        return;
    }
    if (op_abandoned(o))
        return;
    txn_arm_deadline(tx);
    cfdb_db_start(tx->db);
    if (is_read(o->kind))
        read_started(o);
    switch (o->kind) {
    case OP_GET:
        o->w.fn = txn_get_have_version;
        txn_need_read_version(tx, &o->w);
        break;
    case OP_GET_KEY:
        o->w.fn = txn_read_have_version;
        txn_need_read_version(tx, &o->w);
        break;
    case OP_GET_RANGE:
        o->w.fn = txn_read_have_version;
        txn_need_read_version(tx, &o->w);
        break;
    case OP_GRV:
        o->w.fn = grv_op_ready;
        txn_need_read_version(tx, &o->w);
        break;
    case OP_COMMIT:
        if (tx->reads_gen == o->gen && tx->reads_in_flight > 0) {
            release_waiting_commit(tx); /* (a second commit cannot be: used_during_commit) */
            tx->commit_waiting = o;     /* read_done resumes it */
            break;
        }
        txn_commit_begin(o);
        break;
    case OP_MAPPED_RANGE:
        cfdb_mapped_op_start(o);
        break;
    default:
        cfdb_metadata_op_start(o);
    }
}

/* ---------- the API's operations (any thread) ---------- */

cfdb_bytes txn_max_read_key(const cfdb_txn *tx)
{
    return atomic_load(&((cfdb_txn *)tx)->sys_readable) ? CFDB_BYTES_LIT("\xff\xff") : CFDB_BYTES_LIT("\xff");
}

bool txn_key_readable(const cfdb_txn *tx, cfdb_bytes key)
{
    cfdb_bytes limit = txn_max_read_key(tx);
    return cfdb_bytes_cmp(key, limit) < 0;
}

cfdb_future *cfdb_txn_get_read_version(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    int rc = txn_error_locked(tx);
    pthread_mutex_unlock(&tx->mu);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_INT64, rc);
    op *o = op_new(tx, OP_GRV, CFDB_FUTURE_INT64);
    return o ? op_launch(o) : NULL;
}

static void set_read_version_task(void *arg)
{
    op *o = arg;
    if (atomic_load(&o->tx->gen) == o->gen)
        o->tx->read_version = o->watch_version;
    op_link(o);
    op_finish(o, 0);
}

void cfdb_txn_set_read_version(cfdb_txn *tx, int64_t version)
{
    op *o = op_new(tx, OP_GRV, CFDB_FUTURE_VOID);
    if (!o)
        return;
    o->watch_version = version;
    cfdb_future *f = o->f;
    cfdb_future_ref(f);
    if (cfdb_loop_post(cfdb_client_loop(tx->cl), set_read_version_task, o) != 0) {
        op_link(o);
        op_finish(o, 0);
    }
    cfdb_future_unref(f);
    cfdb_future_unref(f);
}

cfdb_future *cfdb_txn_get_approximate_size(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    int64_t size = (int64_t)cfdb_ryw_size(&tx->ryw);
    pthread_mutex_unlock(&tx->mu);
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_INT64);
    if (f) {
        f->r.i64 = size;
        cfdb_future_complete(f, 0);
    }
    return f;
}

cfdb_future *cfdb_txn_on_error(cfdb_txn *tx, int error)
{
    op *o = op_new(tx, OP_ON_ERROR, CFDB_FUTURE_VOID);
    if (!o)
        return NULL;
    o->error = error;
    return op_launch(o);
}

/* Clears the transaction's state (mutex held). Pending operations of the old generation
 * are abandoned by the bump of gen. */
static void txn_reset_locked(cfdb_txn *tx, bool keep_backoff)
{
    atomic_fetch_add(&tx->gen, 1);
    cfdb_ryw_reset(&tx->ryw);
    cfdb_conflicts_clear(tx);
    tx->deferred_error = 0;
    tx->cancelled = false;
    tx->committing = false;
    tx->committed = false;
    tx->read_error = 0;
    if (!keep_backoff) {
        cfdb_retry_state_full_reset(&tx->retry);
        default_options(&tx->opt);
        atomic_store(&tx->sys_readable, false);
        tx->deadline_ns = 0;
        tx->creation_ns = cfdb_monotonic_ns();
    } else if (tx->opt.timeout_ms == 0) {
        tx->deadline_ns = 0;
    }
    tx->read_version = 0;
    tx->committed_version = 0;
    tx->has_versionstamp = false;
    tx->total_cost = 0;
    tx->tag_throttled_s = 0;
}

/* After a reset, cancel or destroy (all end what was running with transaction_cancelled):
 * the network thread ends the watches and operations of the old generation. The task
 * carries the transaction itself (a reference), so posting it allocates nothing. */
static void txn_after_reset(void *arg)
{
    cfdb_txn *tx = arg;
    op *list = tx->watches;
    tx->watches = NULL;
    while (list) {
        op *o = list;
        list = o->next;
        o->next = o->prev = NULL;
        op_link(o);
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
    }
    /* operations in flight end for the application now, and wind down at their next step */
    complete_ops(tx, CFDB_ERR_TRANSACTION_CANCELLED, false);
    txn_disarm_deadline(tx);
    txn_unref(tx);
}

static void txn_post_after_reset(cfdb_txn *tx)
{
    /* Only the application's handle: no watch or operation to end, no need to wake the
     * network thread (this runs once per transaction). */
    if (atomic_load(&tx->refs) == 1)
        return;
    txn_ref(tx);
    if (cfdb_loop_post(cfdb_client_loop(tx->cl), txn_after_reset, tx) != 0)
        txn_unref(tx);
}

void cfdb_txn_reset(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    txn_reset_locked(tx, false);
    pthread_mutex_unlock(&tx->mu);
    cfdb_db_apply_defaults(tx->db, tx, apply_default);
    txn_post_after_reset(tx);
}

void cfdb_txn_cancel(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    atomic_fetch_add(&tx->gen, 1);
    tx->deferred_error = CFDB_ERR_TRANSACTION_CANCELLED;
    tx->cancelled = true;
    tx->retry.cancelled_error = CFDB_ERR_TRANSACTION_CANCELLED;
    pthread_mutex_unlock(&tx->mu);
    txn_post_after_reset(tx);
}

void cfdb_txn_destroy(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    atomic_fetch_add(&tx->gen, 1);
    pthread_mutex_unlock(&tx->mu);
    txn_post_after_reset(tx);
    txn_unref(tx);
}
