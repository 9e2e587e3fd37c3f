/* Watches, as an operation kind: the value is taken through read-your-writes when the watch
 * is made, the WatchValueRequest goes out once the transaction commits, and
 * waitForCommittedVersion confirms the change (NativeAPI watchValue).
 *
 * A watch has its own lifetime: it waits in tx->watches (not in the ops in flight) until the
 * commit, outlives its transaction once started, and is not ended by the transaction's
 * timeout; it holds one of the database's MAX_WATCHES slots until it ends or the application
 * cancels it. A peer that answers with replies that do not decode ends it after
 * TXN_MAX_BAD_REPLIES in a row. */
#include "transaction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "txn_internal.h"
#include "txn_read.h"
#include "txn_watch.h"

typedef struct watch_op {
    op base;
    cfdb_bytes key;
    cfdb_opt_bytes watch_value;
    int64_t watch_version;
    int64_t watch_fired_version; /* the storage server's answer, while waitForCommittedVersion runs */
    bool watch_have_value;
    bool counted_watch; /* holds one of the database's MAX_WATCHES slots */
    cfdb_task release_task; /* watch_cancelled's (a future is cancelled at most once) */
} watch_op;

#define W(o) TXN_OP_AS(watch_op, o)

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
    if (W(o)->watch_fired_version)
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
        int rc = txn_decode(&cfdb_msg_watch_value_reply, msg, len, &rep, &err, &a);
        cfdb_arena_free(&a);
        if (rc && op_bad_reply(o, rc))
            return;
        if (!rc)
            op_good_reply(o);
        e = rc ? rc : err;
    }
    if (!e) {
        cfdb_db_note_version(o->tx->db, rep.version);
        W(o)->watch_fired_version = rep.version;
        watch_committed_check(o);
        return;
    }
    if (storage_error_relocates(e) || error)
        cfdb_db_invalidate(o->tx->db, txn_tenant_for(o->tx, W(o)->key), W(o)->key, false);
    if (e == CFDB_ERR_TIMED_OUT || storage_error_relocates(e) || e == CFDB_ERR_PROCESS_BEHIND ||
        e == CFDB_ERR_WATCH_CANCELLED || error || e == CFDB_ERR_SERIALIZATION_FAILED) {
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
        int rc = txn_decode(&cfdb_msg_get_read_version_reply, msg, len, &rep, &err, &a);
        cfdb_arena_free(&a);
        if (rc && op_bad_reply(o, rc))
            return;
        if (!rc)
            op_good_reply(o);
        error = rc ? rc : err;
        v = rep.version;
    }
    if (error || v <= 0) {
        op_retry_after(o, WATCH_RETRY_DELAY_NS, watch_retry_fire);
        return;
    }
    cfdb_db_note_version(o->tx->db, v);
    if (v - W(o)->watch_fired_version < 50000000) {
        op_finish(o, 0);
        return;
    }
    W(o)->watch_version = v;
    W(o)->watch_fired_version = 0;
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
    const cfdb_shard *s = txn_shard_or_locate(o, txn_tenant_for(o->tx, W(o)->key), W(o)->key, false, watch_located);
    if (!s)
        return;
    const cfdb_endpoint_ref *server = &s->servers[0];
    if (!W(o)->watch_have_value) {
        cfdb_get_value_request get;
        memset(&get, 0, sizeof get);
        get.key = W(o)->key;
        get.version = W(o)->watch_version;
        get.tenantInfo.tenantId = txn_tenant_for(o->tx, W(o)->key);
        get.ssLatestCommitVersions = cfdb_version_vector_empty();
        o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_VALUE),
                                         &cfdb_msg_get_value_request, &get, &get.reply.token, on_watch_read, o);
        if (!o->request)
            op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, watch_retry_fire);
        return;
    }
    cfdb_watch_value_request req;
    memset(&req, 0, sizeof req);
    req.key = W(o)->key;
    req.value = W(o)->watch_value;
    req.version = W(o)->watch_version;
    req.tenantInfo.tenantId = txn_tenant_for(o->tx, W(o)->key);
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
    int rc = error ? 0 : txn_decode(&cfdb_msg_get_value_reply, msg, len, &rep, &err, &o->f->arena);
    if (rc && op_bad_reply(o, rc))
        return;
    if (!error && !rc)
        op_good_reply(o);
    int e = error ? error : rc ? rc : err ? err : rep.error.present ? rep.error.value.code : 0;
    if (e) {
        cfdb_db_invalidate(o->tx->db, txn_tenant_for(o->tx, W(o)->key), W(o)->key, false);
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, watch_retry_fire);
        return;
    }
    W(o)->watch_value.present = rep.value.present;
    if (rep.value.present && cfdb_arena_dup_bytes(&o->f->arena, rep.value.value, &W(o)->watch_value.value)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    W(o)->watch_have_value = true;
    watch_step(o);
}

/* A watch compares against the key's value as of the commit: local writes decide it
 * when they cover the key; otherwise storage is read at the commit version. */
void txn_start_watches(cfdb_txn *tx, int error)
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
        W(o)->watch_version = tx->committed_version > 0 ? tx->committed_version : tx->read_version;
        pthread_mutex_lock(&tx->mu);
        cfdb_ryw_point p;
        if (cfdb_ryw_point_prepare(&tx->ryw, W(o)->key, &p, &o->f->arena) == 0 && p.known) {
            bool present;
            if (cfdb_ryw_point_resolve(NULL, W(o)->key, &p, NULL, &o->f->arena, &W(o)->watch_value.value, &present) == 0) {
                W(o)->watch_value.present = present;
                W(o)->watch_have_value = true;
            }
        }
        pthread_mutex_unlock(&tx->mu);
        watch_step(o);
    }
}


void txn_cancel_watches(cfdb_txn *tx)
{
    op *list = tx->watches;
    tx->watches = NULL;
    while (list) {
        op *o = list;
        list = o->next;
        o->next = o->prev = NULL;
        op_link(o);
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
    }
}

/* A cancelled or destroyed watch gives its MAX_WATCHES slot back at once (libfdb_c's
 * watch actor is cancelled then), not when its request next comes back. */
static void watch_release_task(void *arg)
{
    cfdb_future *f = arg;
    op *o = f->op;
    if (!o->finished && W(o)->counted_watch) {
        W(o)->counted_watch = false;
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
    cfdb_task_init(&W(o)->release_task, watch_release_task, f);
    cfdb_loop_post_task(cfdb_client_loop(o->cl), &W(o)->release_task);
}

/* RYWImpl::watch reads the key through read-your-writes when the watch is made, a
 * non-snapshot read (its read conflict range included): local writes and what the
 * transaction already read answer it without a request, as in libfdb_c. A value that
 * needs storage is read once the transaction commits, at the commit version (libfdb_c
 * reads it at the read version right away). mu held; 0 or an allocation failure. */
static int watch_read_locally(cfdb_txn *tx, op *o)
{
    int rc = cfdb_ryw_add_read_conflict_key(&tx->ryw, W(o)->key);
    if (rc)
        return rc;
    /* what local writes and the snapshot cache cannot answer is read at the commit */
    cfdb_ryw_point p;
    if (cfdb_ryw_point_prepare(&tx->ryw, W(o)->key, &p, &o->f->arena))
        return 0;
    const cfdb_bytes *base = NULL;
    if (!p.known) {
        cfdb_snap_seg seg;
        if (cfdb_snap_seg_at(&tx->ryw.cache, cfdb_xkey_of(W(o)->key), &o->f->arena, &seg) ||
            seg.type == CFDB_SNAP_UNKNOWN)
            return 0;
        if (seg.type == CFDB_SNAP_KV)
            base = &seg.e->rows[seg.idx].value;
    }
    bool present;
    if (cfdb_ryw_point_resolve(&tx->ryw, W(o)->key, &p, base, &o->f->arena, &W(o)->watch_value.value, &present) ==
        0) {
        W(o)->watch_value.present = present;
        W(o)->watch_have_value = true;
    }
    return 0;
}

/* Network thread: the watch waits for the commit, in tx->watches (not in the ops in flight). */
static void watch_start(op *o)
{
    cfdb_txn *tx = o->tx;
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
    W(o)->counted_watch = true;
    o->next = tx->watches;
    tx->watches = o;
}

static void watch_finish(op *o, int error)
{
    (void)error;
    if (W(o)->counted_watch) {
        W(o)->counted_watch = false;
        cfdb_db_watch_release(o->tx->db);
    }
}

static const txn_op_kind watch_kind = {
    .name = "watch",
    .flags = TXN_OP_OWN_LIFETIME,
    .start = watch_start,
    .raw_start = true,
    .finish = watch_finish,
};

_Static_assert(sizeof(watch_op) <= CFDB_FUTURE_EXTRA_MAX, "a watch fits in its future's block");

cfdb_future *cfdb_txn_watch(cfdb_txn *tx, cfdb_bytes key)
{
    pthread_mutex_lock(&tx->mu);
    /* RYW watch's order of checks */
    int rc = txn_error_locked(tx);
    if (!rc && tx->opt.read_your_writes_disable)
        rc = CFDB_ERR_WATCHES_DISABLED;
    if (!rc)
        rc = txn_check_read_key(tx, key);
    if (!rc && key.len > (key_is_system(key) ? SYSTEM_KEY_SIZE_LIMIT : KEY_SIZE_LIMIT))
        rc = CFDB_ERR_KEY_TOO_LARGE;
    if (rc) {
        pthread_mutex_unlock(&tx->mu);
        return cfdb_future_error(CFDB_FUTURE_VOID, rc);
    }
    op *o = op_new(tx, &watch_kind, CFDB_FUTURE_VOID, sizeof(watch_op));
    if (!o) {
        pthread_mutex_unlock(&tx->mu);
        return txn_future_no_memory(CFDB_FUTURE_VOID);
    }
    if (cfdb_arena_dup_bytes(&o->f->arena, key, &W(o)->key))
        rc = TXN_ERR_NO_MEMORY;
    else
        rc = watch_read_locally(tx, o);
    if (!rc) {
        o->f->op = o;
        o->f->on_cancel = watch_cancelled;
    }
    pthread_mutex_unlock(&tx->mu);
    return rc ? op_settle(o, rc) : op_launch(o);
}
