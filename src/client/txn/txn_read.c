/* A transaction's reads, as operation kinds: point reads (get), and get_key and get_range as
 * read-your-writes reads (ryw_read.c) over the NativeAPI reads of txn_native.c; with
 * read-your-writes off, the NativeAPI reads alone (readThrough), their read conflict ranges
 * in NativeAPI's program-order buffers (native_tx.h). The API entry points (any thread) are at
 * the end: they check the request, take what local writes say under the mutex, and launch the
 * operation (or answer at once).
 *
 * Every read kind counts in RYW's `reading` (a commit waits for it); get and get_range add
 * their storage replies to the transaction's cost. */
#include "transaction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "kv_rows.h"
#include "txn_special.h"
#include "txn_read.h"

static void get_send(read_op *r);

/* ---------- get ---------- */

/* The database's answer for a get, merged with the transaction's own writes. */
static void get_deliver(read_op *r, bool present, cfdb_bytes value)
{
    op *o = &r->base;
    /* copy out of the receive buffer: it is reused after this call */
    if (present && cfdb_arena_dup_bytes(&o->f->arena, value, &value)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    cfdb_txn *tx = o->tx;
    int rc;
    pthread_mutex_lock(&tx->mu);
    if (atomic_load(&tx->gen) != o->gen)
        rc = CFDB_ERR_TRANSACTION_CANCELLED;
    else {
        /* the snapshot cache learns what storage said (RYW read(GetValueReq)) */
        if (!r->through && cfdb_snap_insert_key(&tx->ryw.cache, r->key, present ? &value : NULL))
            rc = TXN_ERR_NO_MEMORY;
        else
            rc = cfdb_ryw_point_resolve(&tx->ryw, r->key, &r->point, present ? &value : NULL, &o->f->arena,
                                        &o->f->r.value.value, &o->f->r.value.present);
    }
    pthread_mutex_unlock(&tx->mu);
    op_finish(o, rc);
}

static void get_relocate(op *o, int error)
{
    txn_storage_failed((read_op *)o, error, false);
}

static const txn_reply_desc get_value_reply = {
    &cfdb_msg_get_value_reply, sizeof(cfdb_get_value_reply), offsetof(cfdb_get_value_reply, error), 0
};

static void on_get_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    read_op *r = ctx;
    op *o = &r->base;
    cfdb_get_value_reply rep;
    if (!txn_storage_reply(o, error, msg, len, &get_value_reply, &rep, &o->f->arena, get_relocate))
        return;
    txn_cost_read(o, r->key.len + (rep.value.present ? rep.value.value.len : 0));
    get_deliver(r, rep.value.present, rep.value.value);
}

static void get_located(cfdb_waiter *w, int error, int64_t v)
{
    (void)v;
    read_op *r = (read_op *)w;
    if (op_abandoned(&r->base))
        return;
    if (error)
        txn_storage_failed(r, CFDB_ERR_WRONG_SHARD_SERVER, false);
    else
        get_send(r);
}

static void get_send(read_op *r)
{
    op *o = &r->base;
    const cfdb_shard *s = txn_shard_or_locate(o, read_tenant(r, r->key), r->key, false, get_located);
    if (!s)
        return;
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_value_request req;
    memset(&req, 0, sizeof req);
    req.key = r->key;
    req.version = o->tx->read_version;
    req.tenantInfo.tenantId = read_tenant(r, r->key);
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_VALUE),
                                     &cfdb_msg_get_value_request, &req, &req.reply.token, on_get_reply, r);
    if (!o->request)
        txn_storage_failed(r, CFDB_ERR_CONNECTION_FAILED, false);
}

static void get_have_version(cfdb_waiter *w, int error, int64_t version)
{
    read_op *r = (read_op *)w;
    op *o = &r->base;
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
    if (tx->mv_version == version && is_metadata_version_key(r->key)) {
        /* \xff/metadataVersion at our own read version: the GRV reply carried it */
        get_deliver(r, tx->mv_present, cfdb_bytes_make(tx->mv, tx->mv_len));
        return;
    }
    if (!r->through) {
        /* RYW read(GetValueReq): a key the transaction already read needs no request */
        pthread_mutex_lock(&tx->mu);
        cfdb_snap_seg s;
        bool known = false, present = false, no_memory = false;
        cfdb_bytes value = { NULL, 0 };
        if (atomic_load(&tx->gen) == o->gen &&
            !cfdb_snap_seg_at(&tx->ryw.cache, cfdb_xkey_of(r->key), &o->f->arena, &s) &&
            s.type != CFDB_SNAP_UNKNOWN) {
            known = true;
            present = s.type == CFDB_SNAP_KV;
            if (present && cfdb_arena_dup_bytes(&o->f->arena, s.e->rows[s.idx].value, &value))
                no_memory = true;
        }
        pthread_mutex_unlock(&tx->mu);
        if (no_memory) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
        if (known) {
            get_deliver(r, present, value);
            return;
        }
    }
    get_send(r);
}

static void get_start(op *o)
{
    o->w.fn = get_have_version;
    txn_need_read_version(o->tx, &o->w);
}

static const txn_op_kind get_kind = {
    .name = "get",
    .flags = TXN_OP_READ | TXN_OP_COSTED,
    .start = get_start,
};

/* ---------- get_key, get_range: the RYW read over NativeAPI reads ---------- */

static void read_step(read_op *r);

/* A read conflict range of a non-snapshot get_key / get_range: read-your-writes' map, or
 * (RYW off) the read's slot among NativeAPI's extra ranges. */
static void add_read_conflict(read_op *r, cfdb_bytes b, cfdb_bytes e)
{
    op *o = &r->base;
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    int rc = 0;
    if (atomic_load(&tx->gen) == o->gen)
        rc = r->has_conflict_slot ? cfdb_native_tx_fill_read(&tx->ryw.native, r->conflict_slot, b, e)
                                  : cfdb_ryw_add_read_conflict(&tx->ryw, b, e);
    if (rc && !tx->read_error)
        tx->read_error = rc; /* the commit cannot leave it out */
    pthread_mutex_unlock(&tx->mu);
}

/* Copies the answer out of the transaction's memory into the future's. */
static void deliver_key(read_op *r, cfdb_bytes key)
{
    op *o = &r->base;
    if (cfdb_arena_dup_bytes(&o->f->arena, key, &o->f->r.key)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    if (!r->snapshot) {
        /* the keys between the selector's key and the answer decided it */
        cfdb_bytes cb, ce;
        if (cfdb_get_key_conflict_range(&r->sel0, o->f->r.key, &o->f->arena, &cb, &ce)) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
        add_read_conflict(r, cb, ce);
    }
    op_finish(o, 0);
}

/* rows live in the future's arena already */
static void deliver_rows(read_op *r, const cfdb_key_value *rows, size_t n, bool more, bool read_to_begin,
                         bool read_through_end)
{
    op *o = &r->base;
    cfdb_future *f = o->f;
    cfdb_fdb_kv *kvs = cfdb_arena_alloc(&f->arena, (n ? n : 1) * sizeof *kvs);
    if (!kvs) {
        op_finish(o, TXN_ERR_NO_MEMORY);
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
    if (!r->snapshot) {
        /* RYWImpl::addConflictRange for a range read */
        if (cfdb_get_range_conflict_range(&r->begin_sel, &r->end_sel, r->reverse, rows, n, more, read_to_begin,
                                          read_through_end, txn_max_read_key(o->tx), &f->arena, &b, &e)) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
        add_read_conflict(r, b, e);
    }
    op_finish(o, 0);
}

/* get_key with read-your-writes off: the NativeAPI getKey's answer. */
static void through_key_resolved(read_op *r)
{
    /* RYW readThrough: keys past the readable space answer the readable end */
    cfdb_bytes top = txn_max_read_key(r->base.tx);
    deliver_key(r, cfdb_bytes_cmp(r->key, top) > 0 ? top : r->key);
}

/* A NativeAPI getRange finished: hand it to the RYW read, or (read-your-writes off)
 * it is the answer. */
static void range_done(read_op *r)
{
    op *o = &r->base;
    const cfdb_native_result *res = &r->nr->result;
    if (r->through) {
        /* RYW readThrough: rows at or past the readable end are dropped */
        size_t n = res->n;
        bool more = res->more;
        if (!r->reverse && n && cfdb_bytes_cmp(res->rows[n - 1].key, txn_max_read_key(o->tx)) >= 0) {
            while (n && cfdb_bytes_cmp(res->rows[n - 1].key, txn_max_read_key(o->tx)) >= 0)
                n--;
            more = false;
        }
        deliver_rows(r, res->rows, n, more, res->read_to_begin, res->read_through_end);
        return;
    }
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    if (atomic_load(&tx->gen) != o->gen) {
        pthread_mutex_unlock(&tx->mu);
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
        return;
    }
    cfdb_ryw_read_feed(r->rr, res);
    pthread_mutex_unlock(&tx->mu);
    read_step(r);
}

/* Runs the RYW read until it needs storage or is done. */
static void read_step(read_op *r)
{
    op *o = &r->base;
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    if (atomic_load(&tx->gen) != o->gen) {
        pthread_mutex_unlock(&tx->mu);
        op_finish(o, CFDB_ERR_TRANSACTION_CANCELLED);
        return;
    }
    int rc = cfdb_ryw_read_advance(r->rr);
    if (rc == CFDB_RYW_NEED_READ) {
        pthread_mutex_unlock(&tx->mu);
        txn_native_range(r, &tx->ryw.arena, r->rr->req_begin, r->rr->req_end, r->rr->req_limits,
                         r->rr->req_reverse);
        return;
    }
    if (rc != CFDB_RYW_DONE) {
        pthread_mutex_unlock(&tx->mu);
        op_finish(o, rc);
        return;
    }
    /* the answer may point into the transaction's memory: copy it while mu is held */
    if (r->range) {
        cfdb_key_value *rows = r->rr->n ? cfdb_arena_alloc(&o->f->arena, r->rr->n * sizeof *rows) : NULL;
        int e = r->rr->n && (!rows || cfdb_kv_rows_copy(&o->f->arena, r->rr->rows, r->rr->n, rows));
        pthread_mutex_unlock(&tx->mu);
        if (e)
            op_finish(o, TXN_ERR_NO_MEMORY);
        else
            deliver_rows(r, rows, r->rr->n, r->rr->more, r->rr->read_to_begin, r->rr->read_through_end);
        return;
    }
    cfdb_bytes k;
    int e = cfdb_arena_dup_bytes(&o->f->arena, r->rr->key, &k);
    pthread_mutex_unlock(&tx->mu);
    if (e)
        op_finish(o, TXN_ERR_NO_MEMORY);
    else
        deliver_key(r, k);
}

/* get_key / get_range once the read version is known. */
static void read_have_version(cfdb_waiter *w, int error, int64_t version)
{
    read_op *r = (read_op *)w;
    op *o = &r->base;
    if (op_abandoned(o))
        return;
    if (!error)
        error = cfdb_db_validate_version(o->tx->db, version);
    if (error) {
        op_finish(o, error);
        return;
    }
    bool range = r->range;
    r->nr = cfdb_arena_alloc(&o->f->arena, sizeof *r->nr);
    r->rr = r->through ? NULL : cfdb_arena_alloc(&o->f->arena, sizeof *r->rr);
    if (!r->nr || (!r->through && !r->rr)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    r->range_done = range_done;
    if (r->through) {
        if (!range) {
            r->key_resolved = through_key_resolved;
            txn_native_get_key(r, r->sel0);
        } else {
            txn_native_range(r, &o->f->arena, r->begin_sel, r->end_sel, r->rlimits, r->reverse);
        }
        return;
    }
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    cfdb_write_map *wm = r->use_ryw ? &tx->ryw.wm : NULL;
    if (!range)
        cfdb_ryw_read_key(r->rr, &tx->ryw.cache, wm, &o->f->arena, txn_max_read_key(tx), r->sel0);
    else
        cfdb_ryw_read_range(r->rr, &tx->ryw.cache, wm, &o->f->arena, txn_max_read_key(tx), r->begin_sel,
                            r->end_sel, r->rlimits, r->reverse);
    pthread_mutex_unlock(&tx->mu);
    read_step(r);
}

static void read_start(op *o)
{
    o->w.fn = read_have_version;
    txn_need_read_version(o->tx, &o->w);
}

/* get_key does not count in the transaction's cost (libfdb_c 7.3 adds none for it) */
static const txn_op_kind get_key_kind = { .name = "get_key", .flags = TXN_OP_READ, .start = read_start };
static const txn_op_kind get_range_kind = {
    .name = "get_range",
    .flags = TXN_OP_READ | TXN_OP_COSTED,
    .start = read_start,
};

_Static_assert(sizeof(read_op) <= CFDB_FUTURE_EXTRA_MAX, "a read fits in its future's block");

/* ---------- the API's entry points (any thread) ---------- */

/* get and watch: the metadata version key is readable without system-key access */
int txn_check_read_key(cfdb_txn *tx, cfdb_bytes key)
{
    if (is_metadata_version_key(key))
        return 0;
    return txn_key_readable(tx, key) ? 0 : CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
}

/* RYW off, not snapshot: reserve the read's place among NativeAPI's extra conflict ranges
 * (mu held). */
static int reserve_conflict_slot(cfdb_txn *tx, read_op *r)
{
    if (!r->through || r->snapshot || !tx->opt.read_your_writes_disable)
        return 0; /* (a native read under RYW adds its range to RYW's map) */
    r->has_conflict_slot = true;
    return cfdb_native_tx_reserve_read(&tx->ryw.native, &r->conflict_slot);
}

cfdb_future *cfdb_txn_get(cfdb_txn *tx, cfdb_bytes key, bool snapshot)
{
    if (cfdb_special_key(key))
        return txn_special_get(tx, key);
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
    op *o = op_new(tx, &get_kind, CFDB_FUTURE_VALUE, sizeof(read_op));
    if (!o) {
        pthread_mutex_unlock(&tx->mu);
        return txn_future_no_memory(CFDB_FUTURE_VALUE);
    }
    read_op *r = TXN_OP_AS(read_op, o);
    if (cfdb_arena_dup_bytes(&o->f->arena, key, &r->key)) {
        pthread_mutex_unlock(&tx->mu);
        return op_settle(o, TXN_ERR_NO_MEMORY);
    }
    bool use_ryw = !tx->opt.read_your_writes_disable && !(snapshot && tx->opt.snapshot_ryw_disable);
    r->use_ryw = use_ryw;
    r->through = tx->opt.read_your_writes_disable;
    r->resume = get_send;
    if (use_ryw)
        rc = cfdb_ryw_point_prepare(&tx->ryw, r->key, &r->point, &o->f->arena);
    if (!snapshot && !rc)
        rc = cfdb_ryw_add_read_conflict_key(&tx->ryw, r->key);
    if (rc == CFDB_ERR_ACCESSED_UNREADABLE && !tx->read_error)
        tx->read_error = rc; /* a read's failure, as if it had run: the commit fails with it */
    pthread_mutex_unlock(&tx->mu);
    /* op_finish must not take the mutex on this (application) thread: nothing is linked */
    if (rc || (use_ryw && r->point.known)) {
        /* answered by the transaction's own writes: no network involved */
        if (!rc)
            rc = cfdb_ryw_point_resolve(NULL, r->key, &r->point, NULL, &o->f->arena, &o->f->r.value.value,
                                        &o->f->r.value.present);
        return op_settle(o, rc);
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
    if (rc) {
        pthread_mutex_unlock(&tx->mu);
        return cfdb_future_error(CFDB_FUTURE_KEY, rc);
    }
    op *o = op_new(tx, &get_key_kind, CFDB_FUTURE_KEY, sizeof(read_op));
    if (!o) {
        pthread_mutex_unlock(&tx->mu);
        return txn_future_no_memory(CFDB_FUTURE_KEY);
    }
    read_op *r = TXN_OP_AS(read_op, o);
    if (cfdb_arena_dup_bytes(&o->f->arena, key, &r->key))
        rc = TXN_ERR_NO_MEMORY;
    r->sel0 = (cfdb_key_selector){ r->key, or_equal, offset };
    r->snapshot = snapshot;
    r->through = tx->opt.read_your_writes_disable;
    r->use_ryw = !tx->opt.read_your_writes_disable && !(snapshot && tx->opt.snapshot_ryw_disable);
    if (!rc)
        rc = reserve_conflict_slot(tx, r);
    pthread_mutex_unlock(&tx->mu);
    return rc ? op_settle(o, rc) : op_launch(o);
}

static cfdb_future *get_range(cfdb_txn *tx, cfdb_bytes begin_key, bool begin_or_equal, int begin_offset,
                              cfdb_bytes end_key, bool end_or_equal, int end_offset, int limit, int target_bytes,
                              int mode, int iteration, bool snapshot, bool reverse, bool native)
{
    cfdb_ryw_limits lim;
    int rc = cfdb_ryw_limits_from_api(limit, target_bytes, mode, iteration, &lim);
    if (!rc && cfdb_special_range(begin_key, end_key))
        return txn_special_get_range(tx, begin_key, end_key, limit, reverse);
    pthread_mutex_lock(&tx->mu);
    if (!rc)
        rc = txn_error_locked(tx);
    if (!rc) {
        /* RYW getRange: selector keys beyond the readable key space are refused */
        cfdb_bytes top = txn_max_read_key(tx);
        if (cfdb_bytes_cmp(begin_key, top) > 0 || cfdb_bytes_cmp(end_key, top) > 0)
            rc = CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    }
    if (rc) {
        pthread_mutex_unlock(&tx->mu);
        return cfdb_future_error(CFDB_FUTURE_KEYVALUES, rc);
    }
    op *o = op_new(tx, &get_range_kind, CFDB_FUTURE_KEYVALUES, sizeof(read_op));
    if (!o) {
        pthread_mutex_unlock(&tx->mu);
        return txn_future_no_memory(CFDB_FUTURE_KEYVALUES);
    }
    read_op *r = TXN_OP_AS(read_op, o);
    r->range = true;
    cfdb_arena *a = &o->f->arena;
    cfdb_bytes bk = { 0, 0 }, ek = { 0, 0 };
    if (cfdb_arena_dup_bytes(a, begin_key, &bk) || cfdb_arena_dup_bytes(a, end_key, &ek))
        rc = TXN_ERR_NO_MEMORY;
    r->begin_sel = (cfdb_key_selector){ bk, begin_or_equal, begin_offset };
    r->end_sel = (cfdb_key_selector){ ek, end_or_equal, end_offset };
    if (!rc && (cfdb_sel_remove_or_equal(&r->begin_sel, a) || cfdb_sel_remove_or_equal(&r->end_sel, a)))
        rc = TXN_ERR_NO_MEMORY;
    r->rlimits = cfdb_range_limits_make(lim.rows, lim.bytes);
    r->reverse = reverse;
    r->snapshot = snapshot;
    r->through = native || tx->opt.read_your_writes_disable;
    r->use_ryw = !r->through && !(snapshot && tx->opt.snapshot_ryw_disable);
    /* an inverted range reads nothing and adds no conflict range */
    bool empty = !rc && cfdb_sel_range_trivially_empty(&r->begin_sel, &r->end_sel);
    if (!rc && !empty)
        rc = reserve_conflict_slot(tx, r);
    pthread_mutex_unlock(&tx->mu);
    if (rc || empty)
        return op_settle(o, rc); /* (the future's rows are zero: none, no more) */
    return op_launch(o);
}

cfdb_future *cfdb_txn_get_range(cfdb_txn *tx, cfdb_bytes begin_key, bool begin_or_equal, int begin_offset,
                                cfdb_bytes end_key, bool end_or_equal, int end_offset, int limit, int target_bytes,
                                int mode, int iteration, bool snapshot, bool reverse)
{
    return get_range(tx, begin_key, begin_or_equal, begin_offset, end_key, end_or_equal, end_offset, limit,
                     target_bytes, mode, iteration, snapshot, reverse, false);
}

cfdb_future *cfdb_txn_get_range_native(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, int mode,
                                       int iteration)
{
    return get_range(tx, begin, false, 1, end, false, 1, limit, 0, mode, iteration, false, false, true);
}
