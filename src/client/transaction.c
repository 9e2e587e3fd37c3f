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

static void txn_ref(cfdb_txn *tx)
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

static void txn_unref(cfdb_txn *tx)
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

static bool key_is_system(cfdb_bytes k)
{
    return k.len > 0 && k.ptr[0] == 0xff;
}

static uint64_t now_ns(void)
{
    return cfdb_monotonic_ns();
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
    tx->creation_ns = now_ns();
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
    if (!tx->deferred_error && tx->deadline_ns && now_ns() >= tx->deadline_ns)
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
    pthread_mutex_unlock(&tx->mu);
    return rc;
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

static bool is_metadata_version_key(cfdb_bytes key)
{
    return cfdb_bytes_eq(key, CFDB_BYTES_LIT(METADATA_VERSION_KEY));
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

static void commit_begin(op *o);

static void commit_resume_task(void *arg)
{
    commit_begin(arg);
}

static void release_waiting_commit(cfdb_txn *tx)
{
    op *c = tx->commit_waiting;
    tx->commit_waiting = NULL;
    if (c && cfdb_loop_post(cfdb_client_loop(tx->cl), commit_resume_task, c) != 0)
        commit_begin(c);
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
    if (tx->deadline_ns && now_ns() >= tx->deadline_ns && o->kind != OP_ON_ERROR && o->kind != OP_WATCH) {
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
    if (deadline && now_ns() < deadline) { /* the timeout was extended */
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

/* ---------- storage reads ---------- */

typedef void (*located_fn)(op *o, const cfdb_endpoint_ref *server);

static void relocate_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void get_send(op *o, int64_t version);
static void get_located(cfdb_waiter *w, int error, int64_t v);

/* A storage read failed. An unreachable replica: try the shard's next one at once (the load
 * balancer's behaviour); wrong shard, or every replica tried: forget the location and look
 * it up again shortly (WRONG_SHARD_SERVER_DELAY). */
static void storage_failed(op *o, int error, bool reverse_lookup)
{
    bool transport = error == CFDB_ERR_REQUEST_MAYBE_DELIVERED || error == CFDB_ERR_CONNECTION_FAILED ||
                     error == CFDB_ERR_BROKEN_PROMISE;
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, o->key, reverse_lookup);
    if (transport && s && ++o->replicas_tried < s->nservers) {
        o->replica++;
        op_retry_after(o, 0, relocate_fire);
        return;
    }
    cfdb_db_invalidate(o->tx->db, o->key, reverse_lookup);
    o->replicas_tried = 0;
    op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, relocate_fire);
}

/* The database's answer for a get, merged with the transaction's own writes. */
static void get_deliver(op *o, bool present, cfdb_bytes value)
{
    /* copy out of the receive buffer: it is reused after this call */
    if (present && cfdb_arena_dup_bytes(&o->f->arena, value, &value)) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    cfdb_txn *tx = o->tx;
    int rc;
    pthread_mutex_lock(&tx->mu);
    if (atomic_load(&tx->gen) != o->gen)
        rc = CFDB_ERR_TRANSACTION_CANCELLED;
    else {
        /* the snapshot cache learns what storage said (RYW read(GetValueReq)) */
        if (!o->through && cfdb_snap_insert_key(&tx->ryw.cache, o->key, present ? &value : NULL))
            rc = CFDB_ERR_INTERNAL_ERROR;
        else
            rc = cfdb_ryw_point_resolve(&tx->ryw, o->key, &o->point, present ? &value : NULL, &o->f->arena,
                                        &o->f->r.value.value, &o->f->r.value.present);
    }
    pthread_mutex_unlock(&tx->mu);
    op_finish(o, rc);
}

static void on_get_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (op_abandoned(o))
        return;
    if (error) { /* transport: next replica, then relocate */
        storage_failed(o, error, false);
        return;
    }
    cfdb_get_value_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    int rc = fb_decode(&cfdb_msg_get_value_reply, msg, len, &rep, &err, &o->f->arena);
    if (rc) {
        storage_failed(o, rc, false);
        return;
    }
    int e = err ? err : rep.error.present ? rep.error.value.code : 0;
    if (storage_error_relocates(e)) {
        storage_failed(o, e, false);
        return;
    }
    if (e) {
        op_finish(o, e);
        return;
    }
    txn_cost_read(o, o->key.len + (rep.value.present ? rep.value.value.len : 0));
    get_deliver(o, rep.value.present, rep.value.value);
}

static void get_send(op *o, int64_t version)
{
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, o->key, false);
    if (!s) {
        o->w.fn = get_located;
        cfdb_db_fetch_location(o->tx->db, o->key, false, o->tx->read_version, &o->w);
        return;
    }
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_value_request req;
    memset(&req, 0, sizeof req);
    req.key = o->key;
    req.version = version;
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_VALUE),
                                     &cfdb_msg_get_value_request, &req, &req.reply.token, on_get_reply, o);
    if (!o->request)
        storage_failed(o, CFDB_ERR_CONNECTION_FAILED, false);
}

static void get_located(cfdb_waiter *w, int error, int64_t v)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error) {
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, relocate_fire);
        return;
    }
    get_send(o, o->tx->read_version);
}

static void get_have_version(cfdb_waiter *w, int error, int64_t version)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error) {
        op_finish(o, error);
        return;
    }
    cfdb_txn *tx = o->tx;
    int vrc = cfdb_db_validate_version(tx->db, version);
    if (vrc) {
        op_finish(o, vrc);
        return;
    }
    if (tx->mv_version == version && is_metadata_version_key(o->key)) {
        /* \xff/metadataVersion at our own read version: the GRV reply carried it */
        get_deliver(o, tx->mv_present, cfdb_bytes_make(tx->mv, tx->mv_len));
        return;
    }
    if (!o->through) {
        /* RYW read(GetValueReq): a key the transaction already read needs no request */
        pthread_mutex_lock(&tx->mu);
        cfdb_snap_seg s;
        bool known = false, present = false;
        cfdb_bytes value = { NULL, 0 };
        if (atomic_load(&tx->gen) == o->gen &&
            !cfdb_snap_seg_at(&tx->ryw.cache, cfdb_xkey_of(o->key), &o->f->arena, &s) &&
            s.type != CFDB_SNAP_UNKNOWN) {
            known = true;
            present = s.type == CFDB_SNAP_KV;
            if (present && cfdb_arena_dup_bytes(&o->f->arena, s.e->rows[s.idx].value, &value))
                known = false;
        }
        pthread_mutex_unlock(&tx->mu);
        if (known) {
            get_deliver(o, present, value);
            return;
        }
    }
    get_send(o, version);
}

static void read_step(op *o);
static void native_step(op *o);
static void get_key_step(op *o);

/* Picks a get_key or get_range up where it left off after a relocation: its NativeAPI
 * getKey, or the shard of its NativeAPI getRange. */
static void read_resume(op *o)
{
    if (o->native_key) {
        get_key_step(o);
    } else {
        cfdb_native_range_retry(o->nr);
        native_step(o);
    }
}

static void relocate_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    op *o = arg;
    if (op_abandoned(o))
        return;
    switch (o->kind) {
    case OP_GET: get_send(o, o->tx->read_version); break;
    case OP_GET_RANGE:
    case OP_GET_KEY: read_resume(o); break;
    default: break;
    }
}

/* ---------- NativeAPI getKey: GetKeyRequest until the selector is resolved ----------
 * Used where libfdb_c uses it: get_key with read-your-writes disabled, and getRange's
 * fallback (resolving both selectors after an empty shard). */

static void get_key_located(cfdb_waiter *w, int error, int64_t v)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error)
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, relocate_fire);
    else
        get_key_step(o);
}

/* KeySelectorRef::isBackward: resolution depends only on keys before the key. */
static bool selector_backward(const op *o)
{
    return !o->or_equal && o->offset <= 0;
}

static void native_key_done(op *o);

static void on_get_key_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (op_abandoned(o))
        return;
    bool backward = selector_backward(o);
    if (error) {
        storage_failed(o, error, backward);
        return;
    }
    cfdb_get_key_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    int rc = fb_decode(&cfdb_msg_get_key_reply, msg, len, &rep, &err, &o->f->arena);
    int e = rc ? rc : err ? err : rep.error.present ? rep.error.value.code : 0;
    if (rc || storage_error_relocates(e)) {
        storage_failed(o, e, backward);
        return;
    }
    if (e) {
        op_finish(o, e);
        return;
    }
    if (cfdb_arena_dup_bytes(&o->f->arena, rep.sel.key, &o->key)) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    o->or_equal = rep.sel.orEqual;
    o->offset = rep.sel.offset;
    if (o->offset == 0 && o->or_equal) /* resolved (NativeAPI getKey) */
        native_key_done(o);
    else
        get_key_step(o);
}

static void get_key_step(op *o)
{
    /* the ends of the key space resolve without asking */
    static const cfdb_bytes all_end = { (const uint8_t *)"\xff\xff", 2 };
    if (cfdb_bytes_eq(o->key, all_end)) {
        if (o->offset > 0) {
            o->key = all_end;
            native_key_done(o);
            return;
        }
        o->or_equal = false;
    } else if (o->key.len == 0 && o->offset <= 0) {
        native_key_done(o);
        return;
    }
    bool backward = selector_backward(o);
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, o->key, backward);
    if (!s) {
        o->w.fn = get_key_located;
        cfdb_db_fetch_location(o->tx->db, o->key, backward, o->tx->read_version, &o->w);
        return;
    }
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_key_request req;
    memset(&req, 0, sizeof req);
    req.sel.key = o->key;
    req.sel.orEqual = o->or_equal;
    req.sel.offset = o->offset;
    req.version = o->tx->read_version;
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_KEY),
                                     &cfdb_msg_get_key_request, &req, &req.reply.token, on_get_key_reply, o);
    if (!o->request)
        storage_failed(o, CFDB_ERR_CONNECTION_FAILED, backward);
}

static void native_key_start(op *o, cfdb_key_selector sel)
{
    o->native_key = true;
    o->key = sel.key;
    o->or_equal = sel.orEqual;
    o->offset = sel.offset;
    o->replica = 0;
    get_key_step(o);
}

static void deliver_key(op *o, cfdb_bytes key);
static void deliver_rows(op *o, const cfdb_key_value *rows, size_t n, bool more, bool read_to_begin,
                         bool read_through_end);

/* A NativeAPI getKey finished: get_key's answer (read-your-writes off), or one of the
 * fallback's two keys. */
static void native_key_done(op *o)
{
    o->native_key = false;
    if (o->kind == OP_GET_KEY) {
        /* RYW readThrough: keys past the readable space answer the readable end */
        cfdb_bytes top = txn_max_read_key(o->tx);
        deliver_key(o, cfdb_bytes_cmp(o->key, top) > 0 ? top : o->key);
        return;
    }
    if (!o->fallback_have_begin) {
        o->fallback_begin = o->key;
        o->fallback_have_begin = true;
        native_key_start(o, o->nr->orig_end);
        return;
    }
    o->fallback_have_begin = false;
    cfdb_native_range_keys(o->nr, o->fallback_begin, o->key);
    native_step(o);
}

/* ---------- NativeAPI getRange: selectors to the storage servers, shard by shard ---------- */

static void range_located(cfdb_waiter *w, int error, int64_t v)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error)
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, relocate_fire);
    else
        native_step(o);
}

static void native_done(op *o);

static void on_range_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (op_abandoned(o))
        return;
    if (error) {
        o->key = o->nr->loc_key;
        storage_failed(o, error, o->nr->loc_backward);
        return;
    }
    cfdb_get_key_values_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    /* decoded into the future's (recycled) arena: no heap allocation per reply */
    int rc = fb_decode(&cfdb_msg_get_key_values_reply, msg, len, &rep, &err, &o->f->arena);
    int e = rc ? rc : err ? err : rep.error.present ? rep.error.value.code : 0;
    if (!rc && e == CFDB_ERR_WRONG_SHARD_SERVER) {
        /* a selector the shard cannot resolve: forget the location, NativeAPI's fallback */
        cfdb_db_invalidate(o->tx->db, o->nr->loc_key, o->nr->loc_backward);
        cfdb_native_range_wrong_shard(o->nr);
        native_step(o);
        return;
    }
    if (rc || storage_error_relocates(e)) {
        o->key = o->nr->loc_key;
        storage_failed(o, e, o->nr->loc_backward);
        return;
    }
    if (e) {
        op_finish(o, e);
        return;
    }
    txn_cost_read_rows(o, rep.data.items, rep.data.count);
    /* NativeAPI asserts a reply with `more` carries rows; a server that breaks it is not
     * followed into a loop */
    bool more = rep.more && rep.data.count > 0;
    rc = cfdb_native_range_reply(o->nr, rep.data.items, rep.data.count, more);
    if (rc) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    native_step(o);
}

static void native_send(op *o, const cfdb_shard *s)
{
    cfdb_native_range *nr = o->nr;
    cfdb_bytes sb, se;
    /* the shard's bounds outlive the location cache entry they come from */
    if (cfdb_arena_dup_bytes(&o->f->arena, s->begin, &sb) || cfdb_arena_dup_bytes(&o->f->arena, s->end, &se)) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    cfdb_native_range_located(nr, sb, se);
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_key_values_request req;
    memset(&req, 0, sizeof req);
    req.begin = nr->req_begin;
    req.end = nr->req_end;
    req.version = o->tx->read_version;
    req.limit = nr->req_limit;
    req.limitBytes = nr->req_limit_bytes;
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer,
                                     cfdb_adjusted_token(server->token, CFDB_SS_GET_KEY_VALUES),
                                     &cfdb_msg_get_key_values_request, &req, &req.reply.token, on_range_reply, o);
    if (!o->request) {
        o->key = nr->loc_key;
        storage_failed(o, CFDB_ERR_CONNECTION_FAILED, nr->loc_backward);
    }
}

static void native_step(op *o)
{
    switch (cfdb_native_range_next(o->nr)) {
    case CFDB_NR_NEED_LOCATION:
    case CFDB_NR_NEED_REQUEST: {
        const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, o->nr->loc_key, o->nr->loc_backward);
        if (!s) {
            o->w.fn = range_located;
            cfdb_db_fetch_location(o->tx->db, o->nr->loc_key, o->nr->loc_backward, o->tx->read_version, &o->w);
            return;
        }
        native_send(o, s);
        return;
    }
    case CFDB_NR_NEED_KEYS:
        o->fallback_have_begin = false;
        native_key_start(o, o->nr->orig_begin);
        return;
    default: native_done(o); return;
    }
}

/* ---------- RYW reads: the snapshot cache and local writes over NativeAPI reads ---------- */

/* Copies the answer out of the transaction's memory into the future's (mu held). */
static void deliver_key(op *o, cfdb_bytes key)
{
    if (cfdb_arena_dup_bytes(&o->f->arena, key, &o->f->r.key)) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    cfdb_txn *tx = o->tx;
    if (!o->snapshot) {
        /* the keys between the selector's key and the answer decided it */
        cfdb_bytes cb, ce;
        if (cfdb_get_key_conflict_range(&o->sel0, o->f->r.key, &o->f->arena, &cb, &ce)) {
            op_finish(o, CFDB_ERR_INTERNAL_ERROR);
            return;
        }
        pthread_mutex_lock(&tx->mu);
        if (atomic_load(&tx->gen) == o->gen)
            cfdb_ryw_add_read_conflict(&tx->ryw, cb, ce);
        pthread_mutex_unlock(&tx->mu);
    }
    op_finish(o, 0);
}

/* rows live in the future's arena already */
static void deliver_rows(op *o, const cfdb_key_value *rows, size_t n, bool more, bool read_to_begin,
                         bool read_through_end)
{
    cfdb_future *f = o->f;
    cfdb_txn *tx = o->tx;
    cfdb_fdb_kv *kvs = cfdb_arena_alloc(&f->arena, (n ? n : 1) * sizeof *kvs);
    if (!kvs) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        kvs[i].key = rows[i].key.ptr;
        kvs[i].key_length = (int)rows[i].key.len;
        kvs[i].value = rows[i].value.ptr;
        kvs[i].value_length = (int)rows[i].value.len;
    }
    f->r.kvs.items = kvs;
    f->r.kvs.count = (int)n;
    f->r.kvs.more = more;
    cfdb_bytes b, e;
    if (!o->snapshot &&
        !cfdb_get_range_conflict_range(&o->begin_sel, &o->end_sel, o->reverse, rows, n, more, read_to_begin,
                                       read_through_end, txn_max_read_key(tx), &f->arena, &b, &e)) {
        /* RYWImpl::addConflictRange for a range read */
        pthread_mutex_lock(&tx->mu);
        if (atomic_load(&tx->gen) == o->gen)
            cfdb_ryw_add_read_conflict(&tx->ryw, b, e);
        pthread_mutex_unlock(&tx->mu);
    }
    op_finish(o, 0);
}

/* A NativeAPI getRange finished: hand it to the RYW read, or (read-your-writes off)
 * it is the answer. */
static void native_done(op *o)
{
    const cfdb_native_result *res = &o->nr->result;
    if (o->through) {
        /* RYW readThrough: rows at or past the readable end are dropped */
        size_t n = res->n;
        bool more = res->more;
        if (!o->reverse && n && cfdb_bytes_cmp(res->rows[n - 1].key, txn_max_read_key(o->tx)) >= 0) {
            while (n && cfdb_bytes_cmp(res->rows[n - 1].key, txn_max_read_key(o->tx)) >= 0)
                n--;
            more = false;
        }
        deliver_rows(o, res->rows, n, more, res->read_to_begin, res->read_through_end);
        return;
    }
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    if (atomic_load(&tx->gen) != o->gen) {
        pthread_mutex_unlock(&tx->mu);
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
        return;
    }
    cfdb_ryw_read_feed(o->rr, res);
    pthread_mutex_unlock(&tx->mu);
    read_step(o);
}

/* Runs the RYW read until it needs storage or is done. */
static void read_step(op *o)
{
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    if (atomic_load(&tx->gen) != o->gen) {
        pthread_mutex_unlock(&tx->mu);
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
        return;
    }
    int rc = cfdb_ryw_read_advance(o->rr);
    if (rc == CFDB_RYW_NEED_READ) {
        pthread_mutex_unlock(&tx->mu);
        cfdb_native_range_start(o->nr, &o->f->arena, o->rr->req_begin, o->rr->req_end, o->rr->req_limits,
                                o->rr->req_reverse);
        o->replica = 0;
        native_step(o);
        return;
    }
    if (rc != CFDB_RYW_DONE) {
        pthread_mutex_unlock(&tx->mu);
        op_finish(o, rc < 0 ? CFDB_ERR_INTERNAL_ERROR : rc);
        return;
    }
    /* the answer may point into the transaction's memory: copy it while mu is held */
    if (o->kind == OP_GET_KEY) {
        cfdb_bytes k;
        int e = cfdb_arena_dup_bytes(&o->f->arena, o->rr->key, &k);
        pthread_mutex_unlock(&tx->mu);
        if (e)
            op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        else
            deliver_key(o, k);
        return;
    }
    cfdb_key_value *rows = o->rr->n ? cfdb_arena_alloc(&o->f->arena, o->rr->n * sizeof *rows) : NULL;
    int e = o->rr->n && !rows;
    for (size_t i = 0; !e && i < o->rr->n; i++)
        e = cfdb_arena_dup_bytes(&o->f->arena, o->rr->rows[i].key, &rows[i].key) ||
            cfdb_arena_dup_bytes(&o->f->arena, o->rr->rows[i].value, &rows[i].value);
    pthread_mutex_unlock(&tx->mu);
    if (e)
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
    else
        deliver_rows(o, rows, o->rr->n, o->rr->more, o->rr->read_to_begin, o->rr->read_through_end);
}

/* get_key / get_range once the read version is known. */
static void read_have_version(cfdb_waiter *w, int error, int64_t version)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (!error)
        error = cfdb_db_validate_version(o->tx->db, version);
    if (error) {
        op_finish(o, error);
        return;
    }
    o->nr = cfdb_arena_alloc(&o->f->arena, sizeof *o->nr);
    if (o->kind == OP_GET_RANGE && !o->nr) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    if (o->through) {
        if (o->kind == OP_GET_KEY) {
            native_key_start(o, o->sel0);
        } else {
            cfdb_native_range_start(o->nr, &o->f->arena, o->begin_sel, o->end_sel, o->rlimits, o->reverse);
            native_step(o);
        }
        return;
    }
    o->rr = cfdb_arena_alloc(&o->f->arena, sizeof *o->rr);
    if (!o->rr || !o->nr) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    cfdb_write_map *wm = o->use_ryw ? &tx->ryw.wm : NULL;
    if (o->kind == OP_GET_KEY)
        cfdb_ryw_read_key(o->rr, &tx->ryw.cache, wm, &o->f->arena, txn_max_read_key(tx), o->sel0);
    else
        cfdb_ryw_read_range(o->rr, &tx->ryw.cache, wm, &o->f->arena, txn_max_read_key(tx), o->begin_sel,
                            o->end_sel, o->rlimits, o->reverse);
    pthread_mutex_unlock(&tx->mu);
    read_step(o);
}

/* ---------- commit ---------- */

static void start_watches(cfdb_txn *tx, int error);

/* The versionstamp future ends with the commit: the stamp on success (NativeAPI sends it
 * for every committed transaction), no_commit_version for a read-only one,
 * transaction_invalid_version after a failure. */
static void settle_versionstamp(cfdb_txn *tx, int error, bool read_only)
{
    cfdb_future *vf = tx->versionstamp_future;
    if (!vf)
        return;
    tx->versionstamp_future = NULL;
    if (!error && !read_only) {
        cfdb_arena_dup_bytes(&vf->arena, cfdb_bytes_make(tx->versionstamp, 10), &vf->r.key);
        cfdb_future_complete(vf, 0);
    } else {
        cfdb_future_complete(vf, read_only && !error ? CFDB_ERR_NO_COMMIT_VERSION : CFDB_ERR_TRANSACTION_INVALID_VERSION);
    }
    cfdb_future_unref(vf);
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
        int rc = fb_decode(&cfdb_msg_commit_id_reply, msg, len, &id, &err, &a);
        cfdb_arena_free(&a);
        error = rc ? CFDB_ERR_COMMIT_UNKNOWN_RESULT : err ? err : id.version < 0 ? CFDB_ERR_NOT_COMMITTED : 0;
    }
    if (!error || ++o->dummy_attempts >= DUMMY_COMMIT_ATTEMPTS) {
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
    req.transaction.read_conflict_ranges.items = &o->dummy_range;
    req.transaction.read_conflict_ranges.count = 1;
    req.transaction.write_conflict_ranges.items = &o->dummy_range;
    req.transaction.write_conflict_ranges.count = 1;
    req.transaction.read_snapshot = version;
    req.flags = CFDB_COMMIT_FLAG_IS_LOCK_AWARE;
    req.tenantInfo.tenantId = -1;
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
    const cfdb_commit_transaction *t = &o->commit.transaction;
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
            o->dummy_range.begin = cfdb_bytes_make(after, k.len);
            o->dummy_range.end = cfdb_bytes_make(after, k.len + 1);
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
        int rc = fb_decode(&cfdb_msg_commit_id_reply, msg, len, &id, &err, &a);
        error = 0;
        if (rc || err == CFDB_ERR_BROKEN_PROMISE || err == CFDB_ERR_REQUEST_MAYBE_DELIVERED)
            lost = true;
        else if (err)
            error = err;
        else if (id.version == -1) {
            error = CFDB_ERR_NOT_COMMITTED; /* conflicting keys were reported */
            if (id.conflictingKRIndices.present)
                cfdb_conflicts_record(tx, o->commit.transaction.read_conflict_ranges.items,
                                      o->commit.transaction.read_conflict_ranges.count,
                                      id.conflictingKRIndices.value.items, id.conflictingKRIndices.value.count);
        } else {
            tx->committed_version = id.version;
            uint64_t v = (uint64_t)id.version;
            for (int i = 0; i < 8; i++)
                tx->versionstamp[i] = (uint8_t)(v >> (56 - 8 * i));
            tx->versionstamp[8] = (uint8_t)(id.txnBatchId >> 8);
            tx->versionstamp[9] = (uint8_t)id.txnBatchId;
            tx->has_versionstamp = true;
            cfdb_db_note_version(tx->db, id.version);
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
    settle_versionstamp(tx, error, false);
    start_watches(tx, error);
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
    o->request = proxy ? cfdb_client_request(tx->cl, proxy->peer, cfdb_adjusted_token(proxy->token, CFDB_CP_COMMIT),
                                             &cfdb_msg_commit_transaction_request, &o->commit,
                                             &o->commit.reply.token, on_commit_reply, o)
                       : 0;
    if (o->request)
        return;
    if (++o->dummy_attempts < COMMIT_SEND_ATTEMPTS)
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
                                   cfdb_client_random(tx->cl), &o->f->arena, &o->commit.transaction);
    bool report = tx->opt.report_conflicting_keys, lock_aware = tx->opt.lock_aware;
    if (!rc && atomic_load(&tx->gen) == o->gen)
        txn_cost_commit(tx, &o->commit.transaction);
    pthread_mutex_unlock(&tx->mu);
    if (rc) {
        commit_done(o, rc);
        return;
    }
    o->commit.transaction.report_conflicting_keys = report;
    o->commit.flags = lock_aware ? CFDB_COMMIT_FLAG_IS_LOCK_AWARE : 0;
    o->commit.tenantInfo.tenantId = -1;
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
    if (o->read_only) {
        read_only_commit_done(o->tx, error);
        settle_versionstamp(o->tx, error, true);
        start_watches(o->tx, error);
        op_finish(o, error);
        return;
    }
    if (error) {
        commit_done(o, error);
        return;
    }
    commit_send(o, version);
}

/* ---------- watches ---------- */

static void watch_step(op *o);
static void watch_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void on_watch_read(void *ctx, int error, const uint8_t *msg, uint32_t len);
static void watch_committed_check(op *o);

static void watch_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    op *o = arg;
    if (cfdb_future_is_ready(o->f)) {
        op_finish(o, CFDB_ERR_OPERATION_CANCELLED);
        return;
    }
    if (o->watch_fired_version)
        watch_committed_check(o);
    else
        watch_step(o);
}

static void on_watch_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (cfdb_future_is_ready(o->f)) {
        op_finish(o, CFDB_ERR_OPERATION_CANCELLED);
        return;
    }
    int e = error;
    cfdb_watch_value_reply rep;
    memset(&rep, 0, sizeof rep);
    if (!e) {
        cfdb_reply_error err = 0;
        cfdb_arena a;
        uint64_t mem[32];
        cfdb_arena_init_with(&a, mem, sizeof mem);
        int rc = fb_decode(&cfdb_msg_watch_value_reply, msg, len, &rep, &err, &a);
        cfdb_arena_free(&a);
        e = rc ? rc : err;
    }
    if (!e) {
        cfdb_db_note_version(o->tx->db, rep.version);
        o->watch_fired_version = rep.version;
        watch_committed_check(o);
        return;
    }
    if (storage_error_relocates(e) || error)
        cfdb_db_invalidate(o->tx->db, o->key, false);
    if (e == CFDB_ERR_TIMED_OUT || storage_error_relocates(e) ||
        e == CFDB_ERR_PROCESS_BEHIND || e == CFDB_ERR_WATCH_CANCELLED || error || e < 0) {
        /* re-arm (timed out) or relocate; a watch lasts until it fires or is cancelled */
        op_retry_after(o, e == CFDB_ERR_WATCH_CANCELLED ? 1000000000ull : WATCH_RETRY_DELAY_NS, watch_retry_fire);
        return;
    }
    op_finish(o, e);
}

/* NativeAPI watchValue after the storage server answered: waitForCommittedVersion asks a
 * GRV proxy for a read version (transactionCount 0; its flags stay 0: GetReadVersionRequest's
 * constructor sets the priority bits on its parameter, not the member). A version within
 * 50,000,000 of the storage server's confirms the change; otherwise the watch goes on from
 * that version. */
static void on_watch_committed(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (cfdb_future_is_ready(o->f)) {
        op_finish(o, CFDB_ERR_OPERATION_CANCELLED);
        return;
    }
    int64_t v = 0;
    if (!error) {
        cfdb_get_read_version_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err = 0;
        cfdb_arena a;
        uint64_t mem[128];
        cfdb_arena_init_with(&a, mem, sizeof mem);
        int rc = fb_decode(&cfdb_msg_get_read_version_reply, msg, len, &rep, &err, &a);
        cfdb_arena_free(&a);
        error = rc ? rc : err;
        v = rep.version;
    }
    if (error || v <= 0) {
        op_retry_after(o, WATCH_RETRY_DELAY_NS, watch_retry_fire);
        return;
    }
    cfdb_db_note_version(o->tx->db, v);
    if (v - o->watch_fired_version < 50000000) {
        op_finish(o, 0);
        return;
    }
    o->watch_version = v;
    o->watch_fired_version = 0;
    watch_step(o);
}

static void watch_committed_check(op *o)
{
    const cfdb_endpoint_ref *proxy = cfdb_db_grv_proxy(o->tx->db);
    if (!proxy) {
        op_retry_after(o, WATCH_RETRY_DELAY_NS, watch_retry_fire);
        return;
    }
    cfdb_get_read_version_request req;
    memset(&req, 0, sizeof req);
    req.transactionCount = 0;
    req.flags = 0;
    req.maxVersion = -1;
    o->request = cfdb_client_request(o->tx->cl, proxy->peer, proxy->token, &cfdb_msg_get_read_version_request, &req,
                                     &req.reply.token, on_watch_committed, o);
    if (!o->request)
        op_retry_after(o, WATCH_RETRY_DELAY_NS, watch_retry_fire);
}

static void watch_located(cfdb_waiter *w, int error, int64_t v)
{
    op *o = (op *)w;
    if (error)
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, watch_retry_fire);
    else
        watch_step(o);
}

static void watch_step(op *o)
{
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, o->key, false);
    if (!s) {
        o->w.fn = watch_located;
        cfdb_db_fetch_location(o->tx->db, o->key, false, o->tx->read_version, &o->w);
        return;
    }
    const cfdb_endpoint_ref *server = &s->servers[0];
    if (!o->watch_have_value) {
        cfdb_get_value_request get;
        memset(&get, 0, sizeof get);
        get.key = o->key;
        get.version = o->watch_version;
        get.tenantInfo.tenantId = -1;
        get.ssLatestCommitVersions = cfdb_version_vector_empty();
        o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_VALUE),
                                         &cfdb_msg_get_value_request, &get, &get.reply.token, on_watch_read, o);
        if (!o->request)
            op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, watch_retry_fire);
        return;
    }
    cfdb_watch_value_request req;
    memset(&req, 0, sizeof req);
    req.key = o->key;
    req.value = o->watch_value;
    req.version = o->watch_version;
    req.tenantInfo.tenantId = -1;
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_WATCH_VALUE),
                                     &cfdb_msg_watch_value_request, &req, &req.reply.token, on_watch_reply, o);
    if (!o->request)
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, watch_retry_fire);
}

static void on_watch_read(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (cfdb_future_is_ready(o->f)) {
        op_finish(o, CFDB_ERR_OPERATION_CANCELLED);
        return;
    }
    cfdb_get_value_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    int rc = error ? error : fb_decode(&cfdb_msg_get_value_reply, msg, len, &rep, &err, &o->f->arena);
    int e = rc ? rc : err ? err : rep.error.present ? rep.error.value.code : 0;
    if (e) {
        cfdb_db_invalidate(o->tx->db, o->key, false);
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, watch_retry_fire);
        return;
    }
    o->watch_value.present = rep.value.present;
    if (rep.value.present)
        cfdb_arena_dup_bytes(&o->f->arena, rep.value.value, &o->watch_value.value);
    o->watch_have_value = true;
    watch_step(o);
}

/* A watch compares against the key's value as of the commit: local writes decide it
 * when they cover the key; otherwise storage is read at the commit version. */
static void start_watches(cfdb_txn *tx, int error)
{
    op *list = tx->watches;
    tx->watches = NULL;
    while (list) {
        op *o = list;
        list = o->next;
        o->next = o->prev = NULL;
        op_link(o);
        if (error) {
            op_finish(o, error);
            continue;
        }
        o->watch_version = tx->committed_version > 0 ? tx->committed_version : tx->read_version;
        pthread_mutex_lock(&tx->mu);
        cfdb_ryw_point p;
        if (cfdb_ryw_point_prepare(&tx->ryw, o->key, &p, &o->f->arena) == 0 && p.known) {
            bool present;
            if (cfdb_ryw_point_resolve(NULL, o->key, &p, NULL, &o->f->arena, &o->watch_value.value, &present) == 0) {
                o->watch_value.present = present;
                o->watch_have_value = true;
            }
        }
        pthread_mutex_unlock(&tx->mu);
        watch_step(o);
    }
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
    if (o->read_only && !tx->watches) {
        read_only_commit_done(tx, 0);
        settle_versionstamp(tx, 0, true);
        op_finish(o, 0); /* read-only: libfdb_c reports committed version -1 */
        return;
    }
    o->w.fn = commit_have_version;
    /* NativeAPI tryCommit: no read version yet means no reads, so no need for causal
     * consistency */
    txn_need_read_version_flags(tx, &o->w, CFDB_GRV_FLAG_CAUSAL_READ_RISKY);
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
        o->w.fn = get_have_version;
        txn_need_read_version(tx, &o->w);
        break;
    case OP_GET_KEY:
        o->w.fn = read_have_version;
        txn_need_read_version(tx, &o->w);
        break;
    case OP_GET_RANGE:
        o->w.fn = read_have_version;
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
        commit_begin(o);
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

/* get and watch: the metadata version key is readable without system-key access */
static int check_read_key(cfdb_txn *tx, cfdb_bytes key)
{
    if (is_metadata_version_key(key))
        return 0;
    return txn_key_readable(tx, key) ? 0 : CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
}

cfdb_future *cfdb_txn_get(cfdb_txn *tx, cfdb_bytes key, bool snapshot)
{
    if (cfdb_special_key(key))
        return cfdb_special_get(tx, key);
    pthread_mutex_lock(&tx->mu);
    int rc = txn_error_locked(tx);
    if (!rc)
        rc = check_read_key(tx, key);
    if (rc) {
        pthread_mutex_unlock(&tx->mu);
        return cfdb_future_error(CFDB_FUTURE_VALUE, rc);
    }
    /* no key that long can exist: absent, no error (getMaxReadKeySize: + a tenant prefix) */
    if (key.len > (key_is_system(key) ? SYSTEM_KEY_SIZE_LIMIT : KEY_SIZE_LIMIT + 8)) {
        pthread_mutex_unlock(&tx->mu);
        return cfdb_future_error(CFDB_FUTURE_VALUE, 0);
    }
    op *o = op_new(tx, OP_GET, CFDB_FUTURE_VALUE);
    if (!o) {
        pthread_mutex_unlock(&tx->mu);
        return NULL;
    }
    cfdb_arena_dup_bytes(&o->f->arena, key, &o->key);
    bool use_ryw = !tx->opt.read_your_writes_disable && !(snapshot && tx->opt.snapshot_ryw_disable);
    o->use_ryw = use_ryw;
    o->through = tx->opt.read_your_writes_disable;
    if (use_ryw)
        rc = cfdb_ryw_point_prepare(&tx->ryw, o->key, &o->point, &o->f->arena);
    else
        memset(&o->point, 0, sizeof o->point);
    if (!snapshot && !rc)
        cfdb_ryw_add_read_conflict_key(&tx->ryw, o->key);
    if (rc == CFDB_ERR_ACCESSED_UNREADABLE && !tx->read_error)
        tx->read_error = rc; /* a read's failure, as if it had run: the commit fails with it */
    pthread_mutex_unlock(&tx->mu);
    /* op_finish must not take the mutex on this (application) thread: nothing is linked */
    if (rc || (use_ryw && o->point.known)) {
        /* answered by the transaction's own writes: no network involved */
        if (!rc)
            rc = cfdb_ryw_point_resolve(NULL, o->key, &o->point, NULL, &o->f->arena, &o->f->r.value.value,
                                        &o->f->r.value.present);
        cfdb_future *f = o->f;
        op_finish(o, rc);
        return f;
    }
    return op_launch(o);
}

cfdb_future *cfdb_txn_get_key(cfdb_txn *tx, cfdb_bytes key, bool or_equal, int offset, bool snapshot)
{
    pthread_mutex_lock(&tx->mu);
    int rc = txn_error_locked(tx);
    if (!rc && key.len > SYSTEM_KEY_SIZE_LIMIT)
        rc = CFDB_ERR_KEY_TOO_LARGE;
    /* RYW getKey: a selector key beyond the readable key space is refused */
    if (!rc && cfdb_bytes_cmp(key, txn_max_read_key(tx)) > 0)
        rc = CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    op *o = rc ? NULL : op_new(tx, OP_GET_KEY, CFDB_FUTURE_KEY);
    if (o) {
        if (cfdb_arena_dup_bytes(&o->f->arena, key, &o->key))
            rc = CFDB_ERR_INTERNAL_ERROR;
        o->sel0 = (cfdb_key_selector){ o->key, or_equal, offset };
        o->snapshot = snapshot;
        o->through = tx->opt.read_your_writes_disable;
        o->use_ryw = !tx->opt.read_your_writes_disable && !(snapshot && tx->opt.snapshot_ryw_disable);
    }
    pthread_mutex_unlock(&tx->mu);
    if (rc && o) {
        cfdb_future *f = o->f;
        op_finish(o, rc);
        return f;
    }
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_KEY, rc);
    return o ? op_launch(o) : NULL;
}

cfdb_future *cfdb_txn_get_range(cfdb_txn *tx, cfdb_bytes begin_key, bool begin_or_equal, int begin_offset,
                                cfdb_bytes end_key, bool end_or_equal, int end_offset, int limit, int target_bytes,
                                int mode, int iteration, bool snapshot, bool reverse)
{
    cfdb_ryw_limits lim;
    int rc = cfdb_ryw_limits_from_api(limit, target_bytes, mode, iteration, &lim);
    if (!rc && cfdb_special_range(begin_key, end_key))
        return cfdb_special_get_range(tx, begin_key, end_key, limit, reverse);
    pthread_mutex_lock(&tx->mu);
    if (!rc)
        rc = txn_error_locked(tx);
    if (!rc) {
        /* RYW getRange: selector keys beyond the readable key space are refused */
        cfdb_bytes top = txn_max_read_key(tx);
        if (cfdb_bytes_cmp(begin_key, top) > 0 || cfdb_bytes_cmp(end_key, top) > 0)
            rc = CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    }
    op *o = rc ? NULL : op_new(tx, OP_GET_RANGE, CFDB_FUTURE_KEYVALUES);
    bool empty = false;
    if (o) {
        cfdb_arena *a = &o->f->arena;
        cfdb_bytes bk = { 0, 0 }, ek = { 0, 0 };
        if (cfdb_arena_dup_bytes(a, begin_key, &bk) || cfdb_arena_dup_bytes(a, end_key, &ek))
            rc = CFDB_ERR_INTERNAL_ERROR;
        o->begin_sel = (cfdb_key_selector){ bk, begin_or_equal, begin_offset };
        o->end_sel = (cfdb_key_selector){ ek, end_or_equal, end_offset };
        if (!rc && (cfdb_sel_remove_or_equal(&o->begin_sel, a) || cfdb_sel_remove_or_equal(&o->end_sel, a)))
            rc = CFDB_ERR_INTERNAL_ERROR;
        o->rlimits = cfdb_range_limits_make(lim.rows, lim.bytes);
        o->reverse = reverse;
        o->snapshot = snapshot;
        o->through = tx->opt.read_your_writes_disable;
        o->use_ryw = !tx->opt.read_your_writes_disable && !(snapshot && tx->opt.snapshot_ryw_disable);
        /* an inverted range reads nothing and adds no conflict range */
        empty = !rc && cfdb_sel_range_trivially_empty(&o->begin_sel, &o->end_sel);
    }
    pthread_mutex_unlock(&tx->mu);
    if (rc && !o)
        return cfdb_future_error(CFDB_FUTURE_KEYVALUES, rc);
    if (!o)
        return NULL;
    if (rc || empty) {
        cfdb_future *f = o->f;
        f->r.kvs.items = NULL;
        f->r.kvs.count = 0;
        f->r.kvs.more = false;
        op_finish(o, rc);
        return f;
    }
    return op_launch(o);
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

cfdb_future *cfdb_txn_commit(cfdb_txn *tx)
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
    op *o = op_new(tx, OP_COMMIT, CFDB_FUTURE_VOID);
    if (o)
        o->read_only = read_only; /* nothing to send, but watches start at its read version */
    pthread_mutex_unlock(&tx->mu);
    return o ? op_launch(o) : NULL;
}

int cfdb_txn_get_committed_version(cfdb_txn *tx, int64_t *out)
{
    *out = tx->committed_version ? tx->committed_version : -1;
    return 0;
}

static void versionstamp_task(void *arg)
{
    op *o = arg;
    cfdb_txn *tx = o->tx;
    if (tx->has_versionstamp) {
        cfdb_arena_dup_bytes(&o->f->arena, cfdb_bytes_make(tx->versionstamp, 10), &o->f->r.key);
        op_link(o);
        op_finish(o, 0);
        return;
    }
    if (tx->versionstamp_future) { /* only the latest request is answered */
        cfdb_future_complete(tx->versionstamp_future, CFDB_ERR_OPERATION_CANCELLED);
        cfdb_future_unref(tx->versionstamp_future);
    }
    /* the op's reference to its future becomes the transaction's; the op is done */
    cfdb_arena_free(&o->commit_arena);
    tx->versionstamp_future = o->f;
    txn_unref(tx);
}

cfdb_future *cfdb_txn_get_versionstamp(cfdb_txn *tx)
{
    op *o = op_new(tx, OP_GRV, CFDB_FUTURE_KEY);
    if (!o)
        return NULL;
    cfdb_future *f = o->f;
    if (cfdb_loop_post(cfdb_client_loop(tx->cl), versionstamp_task, o) != 0) {
        op_link(o);
        op_finish(o, CFDB_ERR_NETWORK_NOT_SETUP);
    }
    return f;
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

/* A cancelled or destroyed watch gives its MAX_WATCHES slot back at once (libfdb_c's
 * watch actor is cancelled then), not when its request next comes back. */
static void watch_release_task(void *arg)
{
    cfdb_future *f = arg;
    op *o = f->op;
    if (!o->finished && o->counted_watch) {
        o->counted_watch = false;
        cfdb_db_watch_release(o->tx->db);
    }
    cfdb_future_unref(f);
}

/* Any thread: o->tx may be gone already (a watch outlives its transaction), so only the op's
 * own fields are used here. */
static void watch_cancelled(cfdb_future *f)
{
    op *o = f->op;
    cfdb_future_ref(f);
    if (cfdb_loop_post(cfdb_client_loop(o->cl), watch_release_task, f) != 0)
        cfdb_future_unref(f);
}

/* RYWImpl::watch reads the key through read-your-writes when the watch is made, a
 * non-snapshot read (its read conflict range included): local writes and what the
 * transaction already read answer it without a request, as in libfdb_c. A value that
 * needs storage is read once the transaction commits, at the commit version (libfdb_c
 * reads it at the read version right away). mu held. */
static void watch_read_locally(cfdb_txn *tx, op *o)
{
    cfdb_ryw_add_read_conflict_key(&tx->ryw, o->key);
    cfdb_ryw_point p;
    if (cfdb_ryw_point_prepare(&tx->ryw, o->key, &p, &o->f->arena))
        return;
    const cfdb_bytes *base = NULL;
    if (!p.known) {
        cfdb_snap_seg seg;
        if (cfdb_snap_seg_at(&tx->ryw.cache, cfdb_xkey_of(o->key), &o->f->arena, &seg) ||
            seg.type == CFDB_SNAP_UNKNOWN)
            return;
        if (seg.type == CFDB_SNAP_KV)
            base = &seg.e->rows[seg.idx].value;
    }
    bool present;
    if (cfdb_ryw_point_resolve(&tx->ryw, o->key, &p, base, &o->f->arena, &o->watch_value.value, &present) == 0) {
        o->watch_value.present = present;
        o->watch_have_value = true;
    }
}

cfdb_future *cfdb_txn_watch(cfdb_txn *tx, cfdb_bytes key)
{
    pthread_mutex_lock(&tx->mu);
    /* RYW watch's order of checks */
    int rc = txn_error_locked(tx);
    if (!rc && tx->opt.read_your_writes_disable)
        rc = CFDB_ERR_WATCHES_DISABLED;
    if (!rc)
        rc = check_read_key(tx, key);
    if (!rc && key.len > (key_is_system(key) ? SYSTEM_KEY_SIZE_LIMIT : KEY_SIZE_LIMIT))
        rc = CFDB_ERR_KEY_TOO_LARGE;
    op *o = rc ? NULL : op_new(tx, OP_WATCH, CFDB_FUTURE_VOID);
    if (o) {
        cfdb_arena_dup_bytes(&o->f->arena, key, &o->key);
        o->f->op = o;
        o->f->on_cancel = watch_cancelled;
        watch_read_locally(tx, o);
    }
    pthread_mutex_unlock(&tx->mu);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_VOID, rc);
    return o ? op_launch(o) : NULL;
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
        tx->creation_ns = now_ns();
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
