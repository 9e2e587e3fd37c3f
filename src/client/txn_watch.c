/* Watches: the value is taken through read-your-writes when the watch is made, the
 * WatchValueRequest goes out once the transaction commits, and waitForCommittedVersion
 * confirms the change (NativeAPI watchValue). */
#include "transaction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/endpoint.h"
#include "cfdb/errors.h"
#include "txn_internal.h"

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
    const cfdb_shard *s = txn_shard_or_locate(o, o->key, false, watch_located);
    if (!s)
        return;
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
        rc = txn_check_read_key(tx, key);
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
