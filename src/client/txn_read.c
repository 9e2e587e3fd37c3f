/* A transaction's reads on the network thread: point reads (get), and get_key and
 * get_range as read-your-writes reads (ryw_read.c) over NativeAPI range reads
 * (native_range.c) and, where libfdb_c uses it, NativeAPI getKey; with read-your-writes off,
 * the NativeAPI reads alone. Relocation and retry on storage errors. The API entry points
 * (any thread) are at the end. */
#include "transaction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/endpoint.h"
#include "cfdb/errors.h"
#include "txn_internal.h"

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

const cfdb_shard *txn_shard_or_locate(op *o, cfdb_bytes key, bool backward, void (*located)(cfdb_waiter *w, int error, int64_t value))
{
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, key, backward);
    if (!s) {
        o->w.fn = located;
        cfdb_db_fetch_location(o->tx->db, key, backward, o->tx->read_version, &o->w);
    }
    return s;
}

static void get_send(op *o, int64_t version)
{
    const cfdb_shard *s = txn_shard_or_locate(o, o->key, false, get_located);
    if (!s)
        return;
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

void txn_get_have_version(cfdb_waiter *w, int error, int64_t version)
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
    case OP_GET_KEY:
    case OP_ADDRESSES: read_resume(o); break;
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
    cfdb_key_selector sel = { o->key, o->or_equal, o->offset };
    cfdb_bytes end_key;
    if (cfdb_sel_native_shortcut(&sel, &end_key)) {
        o->key = end_key;
        native_key_done(o);
        return;
    }
    o->or_equal = sel.orEqual;
    bool backward = selector_backward(o);
    const cfdb_shard *s = txn_shard_or_locate(o, o->key, backward, get_key_located);
    if (!s)
        return;
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
    if (o->through) {
        rc = cfdb_native_range_reply(o->nr, rep.data.items, rep.data.count, more);
    } else {
        /* the rows go straight into the snapshot cache's arena (mu guards it) */
        cfdb_txn *tx = o->tx;
        pthread_mutex_lock(&tx->mu);
        if (atomic_load(&tx->gen) != o->gen) {
            pthread_mutex_unlock(&tx->mu);
            op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
            return;
        }
        rc = cfdb_native_range_reply(o->nr, rep.data.items, rep.data.count, more);
        o->nr->result.rows_in_cache_arena = true;
        pthread_mutex_unlock(&tx->mu);
    }
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
        const cfdb_shard *s = txn_shard_or_locate(o, o->nr->loc_key, o->nr->loc_backward, range_located);
        if (s)
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

void txn_native_read(op *o, cfdb_key_selector begin, cfdb_key_selector end, cfdb_range_limits limits, bool reverse,
                     void (*done)(op *o))
{
    o->through = true;
    o->native_done_hook = done;
    cfdb_native_range_start(o->nr, &o->f->arena, &o->f->arena, begin, end, limits, reverse);
    o->replica = 0;
    native_step(o);
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
    if (o->native_done_hook) {
        o->native_done_hook(o);
        return;
    }
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
        cfdb_native_range_start(o->nr, &o->f->arena, &tx->ryw.arena, o->rr->req_begin, o->rr->req_end,
                                o->rr->req_limits, o->rr->req_reverse);
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
void txn_read_have_version(cfdb_waiter *w, int error, int64_t version)
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
            cfdb_native_range_start(o->nr, &o->f->arena, &o->f->arena, o->begin_sel, o->end_sel, o->rlimits,
                                    o->reverse);
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


/* get and watch: the metadata version key is readable without system-key access */
int txn_check_read_key(cfdb_txn *tx, cfdb_bytes key)
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
        rc = txn_check_read_key(tx, key);
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
