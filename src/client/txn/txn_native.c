/* NativeAPI reads on the network thread (txn_read.h): the shard for a key from the location
 * cache or a lookup, relocation after storage errors, NativeAPI getKey (GetKeyRequest until
 * the selector is resolved; used for get_key with read-your-writes off and getRange's
 * fallback) and NativeAPI getRange (native_range.c's state machine driven shard by shard).
 * Replies are decoded into the future's recycled arena (no heap allocation per reply); one
 * that does not decode counts against TXN_MAX_BAD_REPLIES. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "txn_read.h"

static void native_step(read_op *r);
static void get_key_step(read_op *r);

/* ---------- locations and relocation ---------- */

const cfdb_shard *txn_shard_or_locate(op *o, int64_t tenant, cfdb_bytes key, bool backward,
                                      void (*located)(cfdb_waiter *w, int error, int64_t value))
{
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, tenant, key, backward);
    if (!s) {
        o->w.fn = located;
        cfdb_db_fetch_location(o->tx->db, tenant, key, backward, o->tx->read_version, &o->w);
    }
    return s;
}

/* Picks the read up where it left off: its NativeAPI getKey, or the shard of its NativeAPI
 * getRange. */
static void read_resume(read_op *r)
{
    if (r->native_key) {
        get_key_step(r);
    } else {
        cfdb_native_range_retry(r->nr);
        native_step(r);
    }
}

static void relocate_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    read_op *r = arg;
    if (op_abandoned(&r->base))
        return;
    if (r->resume)
        r->resume(r);
    else
        read_resume(r);
}

void txn_storage_failed(read_op *r, int error, bool backward)
{
    op *o = &r->base;
    bool transport = error == CFDB_ERR_REQUEST_MAYBE_DELIVERED || error == CFDB_ERR_CONNECTION_FAILED ||
                     error == CFDB_ERR_BROKEN_PROMISE;
    int64_t tenant = read_tenant(r, r->key);
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, tenant, r->key, backward);
    if (transport && s && ++o->replicas_tried < s->nservers) {
        o->replica++;
        op_retry_after(o, 0, relocate_fire);
        return;
    }
    cfdb_db_invalidate(o->tx->db, tenant, r->key, backward);
    o->replicas_tried = 0;
    op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, relocate_fire);
}

/* A location lookup answered: go on, or (no answer) try again shortly. */
static bool selector_backward(const read_op *r);

static void located(cfdb_waiter *w, int error, int64_t v)
{
    (void)v;
    read_op *r = (read_op *)w;
    if (op_abandoned(&r->base))
        return;
    if (!error) {
        /* a proxy whose answer does not hold the key asked about would have the read ask
         * again forever: such answers count as bad replies (TXN_MAX_BAD_REPLIES) */
        cfdb_bytes k = r->native_key ? r->key : r->nr->loc_key;
        bool back = r->native_key ? selector_backward(r) : r->nr->loc_backward;
        if (!cfdb_db_cached_shard(r->base.tx->db, read_tenant(r, k), k, back)) {
            if (op_bad_reply(&r->base, CFDB_ERR_WRONG_SHARD_SERVER))
                return;
            error = CFDB_ERR_WRONG_SHARD_SERVER;
        }
    }
    if (error)
        op_retry_after(&r->base, WRONG_SHARD_SERVER_DELAY_NS, relocate_fire);
    else if (r->native_key)
        get_key_step(r);
    else
        native_step(r);
}

/* ---------- NativeAPI getKey: GetKeyRequest until the selector is resolved ---------- */

/* KeySelectorRef::isBackward: resolution depends only on keys before the key. */
static bool selector_backward(const read_op *r)
{
    return !r->or_equal && r->offset <= 0;
}

static void native_key_done(read_op *r);

static void get_key_relocate(op *o, int error)
{
    read_op *r = (read_op *)o;
    txn_storage_failed(r, error, selector_backward(r));
}

static const txn_reply_desc get_key_reply = {
    &cfdb_msg_get_key_reply, sizeof(cfdb_get_key_reply), offsetof(cfdb_get_key_reply, error), 0
};

static void on_get_key_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    read_op *r = ctx;
    op *o = &r->base;
    cfdb_get_key_reply rep;
    if (!txn_storage_reply(o, error, msg, len, &get_key_reply, &rep, &o->f->arena, get_key_relocate))
        return;
    if (cfdb_arena_dup_bytes(&o->f->arena, rep.sel.key, &r->key)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    r->or_equal = rep.sel.orEqual;
    r->offset = rep.sel.offset;
    if (r->offset == 0 && r->or_equal) /* resolved (NativeAPI getKey) */
        native_key_done(r);
    else
        get_key_step(r);
}

static void get_key_step(read_op *r)
{
    op *o = &r->base;
    /* the ends of the key space resolve without asking */
    cfdb_key_selector sel = { r->key, r->or_equal, r->offset };
    cfdb_bytes end_key;
    if (cfdb_sel_native_shortcut(&sel, &end_key)) {
        r->key = end_key;
        native_key_done(r);
        return;
    }
    r->or_equal = sel.orEqual;
    bool backward = selector_backward(r);
    const cfdb_shard *s = txn_shard_or_locate(o, read_tenant(r, r->key), r->key, backward, located);
    if (!s)
        return;
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_key_request req;
    memset(&req, 0, sizeof req);
    req.sel.key = r->key;
    req.sel.orEqual = r->or_equal;
    req.sel.offset = r->offset;
    req.version = o->tx->read_version;
    req.tenantInfo.tenantId = read_tenant(r, r->key);
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_KEY),
                                     &cfdb_msg_get_key_request, &req, &req.reply.token, on_get_key_reply, r);
    if (!o->request)
        txn_storage_failed(r, CFDB_ERR_CONNECTION_FAILED, backward);
}

void txn_native_get_key(read_op *r, cfdb_key_selector sel)
{
    r->native_key = true;
    r->key = sel.key;
    r->or_equal = sel.orEqual;
    r->offset = sel.offset;
    r->base.replica = 0;
    get_key_step(r);
}

/* A NativeAPI getKey finished: the kind's answer, or one of the fallback's two keys. */
static void native_key_done(read_op *r)
{
    r->native_key = false;
    if (!r->fallback) {
        r->key_resolved(r);
        return;
    }
    if (!r->fallback_have_begin) {
        r->fallback_begin = r->key;
        r->fallback_have_begin = true;
        txn_native_get_key(r, r->nr->orig_end);
        return;
    }
    r->fallback = r->fallback_have_begin = false;
    cfdb_native_range_keys(r->nr, r->fallback_begin, r->key);
    native_step(r);
}

/* ---------- NativeAPI getRange: selectors to the storage servers, shard by shard ---------- */

/* wrong_shard_server on a range: a selector the shard cannot resolve, so the location is
 * forgotten and NativeAPI's fallback resolves the selectors first; other relocating errors as
 * for point reads. */
static void range_relocate(op *o, int error)
{
    read_op *r = (read_op *)o;
    r->key = r->nr->loc_key; /* what a relocation forgets */
    if (error == CFDB_ERR_WRONG_SHARD_SERVER) {
        cfdb_db_invalidate(o->tx->db, read_tenant(r, r->nr->loc_key), r->nr->loc_key, r->nr->loc_backward);
        cfdb_native_range_wrong_shard(r->nr);
        native_step(r);
        return;
    }
    txn_storage_failed(r, error, r->nr->loc_backward);
}

static const txn_reply_desc get_key_values_reply = {
    &cfdb_msg_get_key_values_reply, sizeof(cfdb_get_key_values_reply), offsetof(cfdb_get_key_values_reply, error), 0
};

static void on_range_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    read_op *r = ctx;
    op *o = &r->base;
    cfdb_get_key_values_reply rep;
    /* decoded into the future's (recycled) arena: no heap allocation per reply */
    if (!txn_storage_reply(o, error, msg, len, &get_key_values_reply, &rep, &o->f->arena, range_relocate))
        return;
    int rc;
    txn_cost_read_rows(o, rep.data.items, rep.data.count);
    /* NativeAPI asserts a reply with `more` carries rows; a server that breaks it is not
     * followed into a loop */
    bool more = rep.more && rep.data.count > 0;
    if (r->through) {
        rc = cfdb_native_range_reply(r->nr, rep.data.items, rep.data.count, more);
    } else {
        /* the rows go straight into the snapshot cache's arena (mu guards it) */
        cfdb_txn *tx = o->tx;
        pthread_mutex_lock(&tx->mu);
        if (atomic_load(&tx->gen) != o->gen) {
            pthread_mutex_unlock(&tx->mu);
            op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
            return;
        }
        rc = cfdb_native_range_reply(r->nr, rep.data.items, rep.data.count, more);
        r->nr->result.rows_in_cache_arena = true;
        pthread_mutex_unlock(&tx->mu);
    }
    if (rc) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    native_step(r);
}

static void native_send(read_op *r, const cfdb_shard *s)
{
    op *o = &r->base;
    cfdb_native_range *nr = r->nr;
    cfdb_bytes sb, se;
    /* the shard's bounds outlive the location cache entry they come from */
    if (cfdb_arena_dup_bytes(&o->f->arena, s->begin, &sb) || cfdb_arena_dup_bytes(&o->f->arena, s->end, &se)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
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
    req.tenantInfo.tenantId = read_tenant(r, nr->loc_key);
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer,
                                     cfdb_adjusted_token(server->token, CFDB_SS_GET_KEY_VALUES),
                                     &cfdb_msg_get_key_values_request, &req, &req.reply.token, on_range_reply, r);
    if (!o->request) {
        r->key = nr->loc_key;
        txn_storage_failed(r, CFDB_ERR_CONNECTION_FAILED, nr->loc_backward);
    }
}

static void native_step(read_op *r)
{
    switch (cfdb_native_range_next(r->nr)) {
    case CFDB_NR_NEED_LOCATION:
    case CFDB_NR_NEED_REQUEST: {
        const cfdb_shard *s = txn_shard_or_locate(&r->base, read_tenant(r, r->nr->loc_key), r->nr->loc_key,
                                                     r->nr->loc_backward, located);
        if (s)
            native_send(r, s);
        return;
    }
    case CFDB_NR_NEED_KEYS:
        r->fallback = true;
        r->fallback_have_begin = false;
        txn_native_get_key(r, r->nr->orig_begin);
        return;
    default: r->range_done(r); return;
    }
}

void txn_native_range(read_op *r, cfdb_arena *rows_arena, cfdb_key_selector begin, cfdb_key_selector end,
                      cfdb_range_limits limits, bool reverse)
{
    cfdb_native_range_start(r->nr, &r->base.f->arena, rows_arena, begin, end, limits, reverse);
    r->base.replica = 0;
    native_step(r);
}

void txn_native_read(read_op *r, cfdb_key_selector begin, cfdb_key_selector end, cfdb_range_limits limits,
                     bool reverse, void (*done)(read_op *r))
{
    r->through = true;
    r->raw = true;
    r->range_done = done;
    txn_native_range(r, &r->base.f->arena, begin, end, limits, reverse);
}
