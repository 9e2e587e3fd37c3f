/* The transaction object and its application-facing half: creation, recycling and
 * references; options; writes (recorded at once under the mutex, through read-your-writes or,
 * with READ_YOUR_WRITES_DISABLE, NativeAPI's program-order buffers: ryw.c); the read version
 * (get / set), the approximate size; reset, cancel and destroy. Reads, commits, watches and
 * on_error are operation kinds in their own files; the machinery that runs them is txn_op.c.
 *
 * Invariants: everything after `mu` and `ryw` starts at zero for a new or recycled object;
 * `gen` changes (under mu) exactly when an attempt ends (reset, cancel, destroy, on_error),
 * and operations of an older generation must not touch the transaction's state; a write's
 * misuse is never reported by the write itself but deferred to the next operation. */
#include "transaction.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_ops.h"
#include "endpoint.h"
#include "error_codes.h"
#include "mutation.h"
#include "object_cache.h"
#include "ryw.h"
#include "txn_special.h"
#include "tenant.h"
#include "txn_commit.h"
#include "txn_internal.h"
#include "txn_watch.h"

#include <foundationdb/fdb_c_options.g.h>

/* ---------- futures that are ready at once ---------- */

/* One future per kind, complete with TXN_ERR_NO_MEMORY, for when memory for a future cannot
 * be had: every fdb_c.h call that returns a future returns one, with the error inside, as
 * libfdb_c's do. Each handed-out reference is the caller's (fdb_future_destroy drops it);
 * the table's own reference keeps them alive for good. */
#define FUTURE_KINDS (CFDB_FUTURE_DOUBLE + 1)
static cfdb_future g_no_memory[FUTURE_KINDS];
static pthread_once_t g_no_memory_once = PTHREAD_ONCE_INIT;

static void no_memory_init(void)
{
    for (int k = 0; k < FUTURE_KINDS; k++) {
        cfdb_future *f = &g_no_memory[k];
        atomic_init(&f->refs, 1);
        atomic_init(&f->ready, true);
        atomic_init(&f->cancel_requested, false);
        atomic_init(&f->released, false);
        f->error = TXN_ERR_NO_MEMORY;
        f->kind = (cfdb_future_kind)k;
        pthread_mutex_init(&f->mu, NULL);
        atomic_init(&f->wake, CFDB_FUTURE_WAKE_READY);
        cfdb_arena_init(&f->arena);
    }
}

cfdb_future *txn_future_no_memory(cfdb_future_kind kind)
{
    pthread_once(&g_no_memory_once, no_memory_init);
    cfdb_future *f = &g_no_memory[(unsigned)kind < FUTURE_KINDS ? kind : CFDB_FUTURE_VOID];
    cfdb_future_ref(f);
    return f;
}

cfdb_future *cfdb_future_error(cfdb_future_kind kind, int error)
{
    cfdb_future *f = cfdb_future_new(kind);
    if (!f)
        return txn_future_no_memory(kind);
    cfdb_future_complete(f, error);
    return f;
}

cfdb_future *cfdb_future_or_no_memory(cfdb_future *f, cfdb_future_kind kind)
{
    return f ? f : txn_future_no_memory(kind);
}

/* ---------- references and recycling ---------- */

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
    txn_special_reset(tx);
    if (tx->versionstamp_future) {
        cfdb_future_complete(tx->versionstamp_future, CFDB_ERR_TRANSACTION_CANCELLED);
        cfdb_future_unref(tx->versionstamp_future);
        tx->versionstamp_future = NULL;
    }
    if (tx->tenant)
        cfdb_tenant_unref(tx->tenant);
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

static void deadline_rearm_task(void *arg);
static void txn_after_reset(void *arg);

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
    cfdb_task_init(&tx->deadline_rearm_task, deadline_rearm_task, tx);
    cfdb_task_init(&tx->after_reset_task, txn_after_reset, tx);
    default_options(&tx->opt);
    cfdb_retry_state_init(&tx->retry);
    tx->tenant_id = -1;
    cfdb_db_apply_defaults(db, tx, apply_default);
    return tx;
}

/* fdb_tenant_create_transaction: the transaction keeps its tenant (and so the tenant's
 * database) alive. */
cfdb_txn *cfdb_txn_create_in_tenant(cfdb_tenant *t)
{
    cfdb_txn *tx = cfdb_txn_create(cfdb_tenant_db(t));
    if (!tx)
        return NULL;
    cfdb_tenant_ref(t);
    tx->tenant = t;
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

static void deadline_rearm_task(void *arg)
{
    cfdb_txn *tx = arg;
    txn_arm_deadline(tx);
    txn_unref(tx);
}

static void post_deadline_rearm(cfdb_txn *tx)
{
    txn_ref(tx);
    if (!cfdb_loop_post_task(cfdb_client_loop(tx->cl), &tx->deadline_rearm_task))
        txn_unref(tx); /* already queued: that run re-arms for this deadline too */
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
        else if (!o->read_your_writes_disable) {
            o->read_your_writes_disable = true;
            cfdb_ryw_disable(&tx->ryw); /* writes go to NativeAPI's buffers (native_tx.c) */
        }
        break;
    case FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE: o->priority_system_immediate = true; break;
    case FDB_TR_OPTION_PRIORITY_BATCH: o->priority_batch = true; break;
    case FDB_TR_OPTION_INITIALIZE_NEW_DATABASE:
        o->access_system_keys = o->read_system_keys = true;
        atomic_store(&tx->sys_readable, true);
        break;
    /* NativeAPI: the system-key options imply raw access (no tenant checks, no tenant), and a
     * tenant's transaction refuses them (invalid_option), as it refuses provisional proxies */
    case FDB_TR_OPTION_ACCESS_SYSTEM_KEYS:
    case FDB_TR_OPTION_READ_SYSTEM_KEYS:
    case FDB_TR_OPTION_RAW_ACCESS:
        if (tx->tenant) {
            rc = CFDB_ERR_INVALID_OPTION;
            break;
        }
        o->raw_access = true;
        if (option == FDB_TR_OPTION_ACCESS_SYSTEM_KEYS)
            o->access_system_keys = true;
        if (option != FDB_TR_OPTION_RAW_ACCESS) {
            o->read_system_keys = true;
            atomic_store(&tx->sys_readable, true);
        }
        break;
    case FDB_TR_OPTION_USE_PROVISIONAL_PROXIES:
        if (tx->tenant)
            rc = CFDB_ERR_INVALID_OPTION;
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
    case FDB_TR_OPTION_USE_GRV_CACHE:
        /* NativeAPI: without the multi-version client's shared state (network option
         * DISABLE_CLIENT_BYPASS) invalid_option; ignored once the transaction has retried */
        if (!cfdb_db_grv_cache_allowed())
            rc = CFDB_ERR_INVALID_OPTION;
        else if (tx->retry.retries == 0)
            o->use_grv_cache = true;
        break;
    case FDB_TR_OPTION_SKIP_GRV_CACHE: o->skip_grv_cache = true; break;
    case FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES: o->special_key_space_enable_writes = true; break;
    case FDB_TR_OPTION_SPECIAL_KEY_SPACE_RELAXED: o->special_key_space_relaxed = true; break;
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
    if (cfdb_special_key(key)) { /* RYW set: the special key space first */
        int sk = txn_special_set(tx, key, value);
        if (sk)
            defer_error(tx, sk);
        pthread_mutex_unlock(&tx->mu);
        return;
    }
    /* the metadata version only ever takes a versionstamp (RYW set) */
    int rc = is_metadata_version_key(key) ? CFDB_ERR_CLIENT_INVALID_OPERATION : check_write_key(tx, key);
    if (!rc && value.len > VALUE_SIZE_LIMIT)
        rc = CFDB_ERR_VALUE_TOO_LARGE;
    if (!rc && writable(tx))
        rc = cfdb_ryw_set(&tx->ryw, key, value);
    if (rc)
        defer_error(tx, rc);
    pthread_mutex_unlock(&tx->mu);
}

void cfdb_txn_clear(cfdb_txn *tx, cfdb_bytes key)
{
    pthread_mutex_lock(&tx->mu);
    if (cfdb_special_key(key)) {
        int sk = writable(tx) ? txn_special_clear(tx, key, key, true) : 0;
        if (sk)
            defer_error(tx, sk);
        pthread_mutex_unlock(&tx->mu);
        return;
    }
    int rc = check_write_key(tx, key);
    if (rc == CFDB_ERR_KEY_TOO_LARGE)
        rc = 0; /* clearing a key that cannot exist is a no-op */
    else if (rc)
        defer_error(tx, rc);
    if (!rc && key.len <= SYSTEM_KEY_SIZE_LIMIT && writable(tx) &&
        (rc = cfdb_ryw_clear_range(&tx->ryw, key, cfdb_bytes_make(NULL, 0), true)) != 0)
        defer_error(tx, rc);
    pthread_mutex_unlock(&tx->mu);
}

void cfdb_txn_clear_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end)
{
    pthread_mutex_lock(&tx->mu);
    cfdb_bytes limit = tx->opt.access_system_keys ? CFDB_BYTES_LIT("\xff\xff") : CFDB_BYTES_LIT("\xff");
    if (cfdb_bytes_cmp(begin, end) > 0)
        defer_error(tx, CFDB_ERR_INVERTED_RANGE);
    else if (cfdb_special_range(begin, end)) {
        int sk = writable(tx) ? txn_special_clear(tx, begin, end, false) : 0;
        if (sk)
            defer_error(tx, sk);
    }
    else if (cfdb_bytes_cmp(begin, limit) > 0 || cfdb_bytes_cmp(end, limit) > 0)
        defer_error(tx, CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    else if (cfdb_bytes_cmp(begin, end) < 0 && writable(tx)) {
        int rc = cfdb_ryw_clear_range(&tx->ryw, begin, end, false);
        if (rc)
            defer_error(tx, rc);
    }
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
    if (!rc && writable(tx))
        rc = cfdb_ryw_atomic(&tx->ryw, type, key, param);
    if (rc)
        defer_error(tx, rc);
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
        rc = type == 0 ? cfdb_ryw_add_read_conflict(&tx->ryw, begin, end)
                       : cfdb_ryw_add_write_conflict(&tx->ryw, begin, end);
    }
    pthread_mutex_unlock(&tx->mu);
    return rc;
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

/* ---- get_read_version: an operation that waits for the attempt's read version ---- */

static void grv_ready(cfdb_waiter *w, int error, int64_t version)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    o->f->r.i64 = version;
    op_finish(o, error);
}

static void grv_start(op *o)
{
    o->w.fn = grv_ready;
    txn_need_read_version(o->tx, &o->w);
}

/* getReadVersion waits for no tenant (TransactionState::getReadVersion, not startTransaction) */
static const txn_op_kind grv_kind = { .name = "get_read_version", .flags = TXN_OP_TENANT_NONE, .start = grv_start };

cfdb_future *cfdb_txn_get_read_version(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    int rc = txn_error_locked(tx);
    pthread_mutex_unlock(&tx->mu);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_INT64, rc);
    op *o = op_new(tx, &grv_kind, CFDB_FUTURE_INT64, sizeof *o);
    return o ? op_launch(o) : txn_future_no_memory(CFDB_FUTURE_INT64);
}

/* ---- set_read_version: on the network thread, in order with the operations queued before ---- */

typedef struct set_rv_op {
    op base;
    int64_t version;
} set_rv_op;

static void set_rv_start(op *o)
{
    if (atomic_load(&o->tx->gen) == o->gen)
        o->tx->read_version = TXN_OP_AS(set_rv_op, o)->version;
    op_link(o);
    op_finish(o, 0);
}

static const txn_op_kind set_rv_kind = { .name = "set_read_version", .start = set_rv_start, .raw_start = true };

void cfdb_txn_set_read_version(cfdb_txn *tx, int64_t version)
{
    op *o = op_new(tx, &set_rv_kind, CFDB_FUTURE_VOID, sizeof(set_rv_op));
    if (!o) { /* no memory to queue it: set it here (under mu, as the network thread sets it) */
        pthread_mutex_lock(&tx->mu);
        tx->read_version = version;
        pthread_mutex_unlock(&tx->mu);
        return;
    }
    TXN_OP_AS(set_rv_op, o)->version = version;
    cfdb_future_unref(op_launch(o)); /* nobody waits for it */
}

cfdb_future *cfdb_txn_get_approximate_size(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    int64_t size = (int64_t)cfdb_ryw_size(&tx->ryw);
    pthread_mutex_unlock(&tx->mu);
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_INT64);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_INT64);
    f->r.i64 = size;
    cfdb_future_complete(f, 0);
    return f;
}

/* Clears the transaction's state (mutex held). Pending operations of the old generation
 * are abandoned by the bump of gen. */
void txn_reset_locked(cfdb_txn *tx, bool keep_backoff)
{
    atomic_fetch_add(&tx->gen, 1);
    cfdb_ryw_reset(&tx->ryw);
    cfdb_conflicts_clear(tx);
    txn_special_reset(tx);
    tx->deferred_error = 0;
    tx->cancelled = false;
    tx->committing = false;
    tx->committed = false;
    tx->read_error = 0;
    if (!keep_backoff) {
        tx->span.set = false; /* fullReset: a new span context */
        cfdb_retry_state_full_reset(&tx->retry);
        default_options(&tx->opt);
        atomic_store(&tx->sys_readable, false);
        tx->deadline_ns = 0;
        tx->creation_ns = cfdb_monotonic_ns();
    } else if (tx->opt.timeout_ms == 0) {
        tx->deadline_ns = 0;
    }
    if (tx->opt.read_your_writes_disable) /* kept by on_error's reset */
        cfdb_ryw_disable(&tx->ryw);
    tx->read_version = 0;
    tx->committed_version = 0;
    tx->has_versionstamp = false;
    tx->total_cost = 0;
    tx->tag_throttled_s = 0;
}

/* After a reset, cancel or destroy (all end what was running with transaction_cancelled):
 * the network thread ends the watches and operations of the old generations. The task node
 * is the transaction's own (a reference while queued), so posting it cannot fail. */
static void txn_after_reset(void *arg)
{
    cfdb_txn *tx = arg;
    txn_cancel_watches(tx);
    /* operations in flight end for the application now, and wind down at their next step */
    txn_complete_ops(tx, CFDB_ERR_TRANSACTION_CANCELLED, false);
    txn_cancel_versionstamp(tx);
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
    if (!cfdb_loop_post_task(cfdb_client_loop(tx->cl), &tx->after_reset_task))
        txn_unref(tx); /* already queued: that run ends this generation's work too */
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
