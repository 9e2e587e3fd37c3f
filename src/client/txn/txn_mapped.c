/* Mapped range reads (fdb_transaction_get_mapped_range): the storage server reads a range
 * and, for each row, the secondary range (or value) its mapper names.
 *
 * Behaviour follows libfdb_c 7.3.77 layer by layer:
 * - the API: limits mapped as for get_range;
 * - the read-your-writes layer: refuses special keys, snapshot reads and transactions with
 *   read-your-writes disabled; reads storage directly (nothing merged with local writes) and
 *   then fails with get_mapped_range_reads_your_writes when the primary range or a secondary
 *   read touches keys the transaction wrote, else adds their read conflict ranges;
 * - the native layer: selectors go to the storage server as they are, one shard at a time,
 *   with continuation on `more`; a shard boundary met with an empty reply restarts the read
 *   on resolved keys, shard by shard (the "fallback" exact-range read).
 * All of it runs on the network thread with the operation machinery of txn_op.c; the rows
 * and conflict rules are in txn_mapped_rows.c. A reply that does not decode is retried at most
 * TXN_MAX_BAD_REPLIES times in a row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "txn_mapped.h"

static void range_step(op *o);
static void exact_step(op *o);
static void gk_step(op *o);
static void native_finished(op *o);

static bool sel_fgoe(const cfdb_key_selector *s)
{
    return !s->orEqual && s->offset == 1;
}

static bool sel_fgt(const cfdb_key_selector *s)
{
    return s->orEqual && s->offset == 1;
}

static bool sel_backward(const cfdb_key_selector *s)
{
    return !s->orEqual && s->offset <= 0;
}

/* ---------- finishing ---------- */

static void deliver(op *o)
{
    mstate *m = MS(o);
    cfdb_future *f = o->f;
    f->r.mkvs.items = m->n ? m->rows : NULL;
    f->r.mkvs.count = m->n;
    f->r.mkvs.more = m->more;
    op_finish(o, 0);
}

static void native_finished(op *o)
{
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    int rc = 0;
    if (atomic_load(&tx->gen) != o->gen)
        rc = CFDB_ERR_TRANSACTION_CANCELLED;
    if (!rc)
        rc = mapped_conflicts(o);
    pthread_mutex_unlock(&tx->mu);
    if (rc)
        op_finish(o, rc);
    else
        deliver(o);
}

/* ---------- retries ---------- */

static void retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    op *o = arg;
    if (op_abandoned(o))
        return;
    if (MS(o)->gk_done)
        gk_step(o);
    else if (MS(o)->phase == PH_EXACT)
        exact_step(o);
    else
        range_step(o);
}

static void retry_later(op *o, cfdb_bytes key, bool backward)
{
    cfdb_db_invalidate(o->tx->db, o->tx->tenant_id, key, backward);
    o->replica = 0;
    op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, retry_fire);
}

static void located(cfdb_waiter *w, int error, int64_t v)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error)
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, retry_fire);
    else
        retry_fire(NULL, NULL, o);
}

/* The shard for key, or NULL after starting a location lookup. */
static const cfdb_shard *shard_for(op *o, cfdb_bytes key, bool backward)
{
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, o->tx->tenant_id, key, backward);
    if (!s) {
        o->w.fn = located;
        cfdb_db_fetch_location(o->tx->db, o->tx->tenant_id, key, backward, o->tx->read_version, &o->w);
    }
    return s;
}

/* ---------- selector resolution (GetKey) ---------- */

static void gk_relocate(op *o, int error)
{
    (void)error;
    retry_later(o, MS(o)->gk.key, sel_backward(&MS(o)->gk));
}

static const txn_reply_desc gk_reply = {
    &cfdb_msg_get_key_reply, sizeof(cfdb_get_key_reply), offsetof(cfdb_get_key_reply, error), 0
};

static void on_gk_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    mstate *m = MS(o);
    cfdb_get_key_reply rep;
    if (!txn_storage_reply(o, error, msg, len, &gk_reply, &rep, &o->f->arena, gk_relocate))
        return;
    cfdb_bytes k;
    if (cfdb_arena_dup_bytes(&o->f->arena, rep.sel.key, &k)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    m->gk = (cfdb_key_selector){ k, rep.sel.orEqual, rep.sel.offset };
    if (m->gk.offset == 0 && m->gk.orEqual) {
        void (*done)(op *, cfdb_bytes) = m->gk_done;
        m->gk_done = NULL;
        done(o, k);
        return;
    }
    gk_step(o);
}

static void gk_step(op *o)
{
    mstate *m = MS(o);
    static const cfdb_bytes all_end = { (const uint8_t *)"\xff\xff", 2 };
    if (cfdb_bytes_eq(m->gk.key, all_end)) {
        if (m->gk.offset > 0) {
            void (*done)(op *, cfdb_bytes) = m->gk_done;
            m->gk_done = NULL;
            done(o, all_end);
            return;
        }
        m->gk.orEqual = false;
    } else if (m->gk.key.len == 0 && m->gk.offset <= 0) {
        void (*done)(op *, cfdb_bytes) = m->gk_done;
        m->gk_done = NULL;
        done(o, cfdb_bytes_make("", 0));
        return;
    }
    bool backward = sel_backward(&m->gk);
    const cfdb_shard *s = shard_for(o, m->gk.key, backward);
    if (!s)
        return;
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_key_request req;
    memset(&req, 0, sizeof req);
    req.sel = m->gk;
    req.version = o->tx->read_version;
    req.tenantInfo.tenantId = o->tx->tenant_id;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_KEY),
                                     &cfdb_msg_get_key_request, &req, &req.reply.token, on_gk_reply, o);
    if (!o->request)
        retry_later(o, m->gk.key, backward);
}

/* Resolves sel (no storage needed for firstGreaterOrEqual / firstGreaterThan). */
static void resolve(op *o, cfdb_key_selector sel, void (*done)(op *o, cfdb_bytes key))
{
    mstate *m = MS(o);
    if (sel_fgoe(&sel)) {
        done(o, sel.key);
        return;
    }
    if (sel_fgt(&sel)) {
        cfdb_bytes k;
        if (mapped_key_after(&o->f->arena, sel.key, &k)) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
        done(o, k);
        return;
    }
    m->gk = sel;
    m->gk_done = done;
    o->replica = 0;
    gk_step(o);
}

/* ---------- the exact-range read on resolved keys (after a shard boundary surprise) ---------- */

static void exact_finished(op *o)
{
    mstate *m = MS(o);
    if (m->fb.len == 0 && (!m->reverse || !m->more))
        m->read_to_begin = true;
    if (cfdb_bytes_eq(m->fe, CFDB_BYTES_LIT("\xff\xff")) && (m->reverse || !m->more))
        m->read_through_end = true;
    native_finished(o);
}

static const txn_reply_desc mapped_reply = {
    &cfdb_msg_get_mapped_key_values_reply, sizeof(cfdb_get_mapped_key_values_reply),
    offsetof(cfdb_get_mapped_key_values_reply, error), 0
};

static void exact_relocate(op *o, int error)
{
    (void)error;
    mstate *m = MS(o);
    retry_later(o, m->reverse ? m->xe : m->xb, m->reverse);
}

static void on_exact_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    mstate *m = MS(o);
    cfdb_get_mapped_key_values_reply rep;
    /* the rows are copied out at once: a scratch arena */
    cfdb_arena scratch;
    cfdb_arena_init(&scratch);
    if (!txn_storage_reply(o, error, msg, len, &mapped_reply, &rep, &scratch, exact_relocate)) {
        cfdb_arena_free(&scratch);
        return;
    }
    uint32_t n = rep.data.count;
    if (mapped_append_rows(o, rep.data.items, n)) {
        cfdb_arena_free(&scratch);
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    mapped_limits_decrement(&m->lim, rep.data.items, n);
    cfdb_arena_free(&scratch);
    if (mapped_limits_reached(&m->lim)) {
        m->more = true;
        exact_finished(o);
        return;
    }
    bool more = rep.more;
    cfdb_bytes lastk = m->n ? mapped_row_key(m, m->n - 1) : cfdb_bytes_make("", 0);
    if (m->reverse && more && n > 0 && cfdb_bytes_eq(lastk, m->rb))
        more = false;
    if (more && n > 0) {
        /* the same shard again, after the last row */
        if (m->reverse)
            m->xe = lastk;
        else if (mapped_key_after(&o->f->arena, lastk, &m->xb)) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
    } else if (m->reverse) {
        m->xe = m->rb;
    } else {
        m->xb = m->re;
    }
    if (cfdb_bytes_cmp(m->xb, m->xe) >= 0) {
        m->more = false;
        exact_finished(o);
        return;
    }
    if (mapped_limits_min_rows_done(&m->lim) && m->n > 0) {
        m->more = true;
        exact_finished(o);
        return;
    }
    exact_step(o);
}

static void exact_step(op *o)
{
    mstate *m = MS(o);
    cfdb_bytes lockey = m->reverse ? m->xe : m->xb;
    const cfdb_shard *s = shard_for(o, lockey, m->reverse);
    if (!s)
        return;
    m->rb = cfdb_bytes_cmp(s->begin, m->xb) > 0 ? s->begin : m->xb;
    m->re = cfdb_bytes_cmp(s->end, m->xe) < 0 ? s->end : m->xe;
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_mapped_key_values_request req;
    memset(&req, 0, sizeof req);
    req.begin = (cfdb_key_selector){ m->rb, false, 1 };
    req.end = (cfdb_key_selector){ m->re, false, 1 };
    req.mapper = m->mapper;
    req.version = o->tx->read_version;
    mapped_request_limits(&m->lim, m->reverse, &req.limit, &req.limitBytes);
    req.tenantInfo.tenantId = o->tx->tenant_id;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer,
                                     cfdb_adjusted_token(server->token, CFDB_SS_GET_MAPPED_KEY_VALUES),
                                     &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token, on_exact_reply, o);
    if (!o->request)
        retry_later(o, lockey, m->reverse);
}

static void fallback_have_end(op *o, cfdb_bytes e)
{
    mstate *m = MS(o);
    m->fe = e;
    m->xb = m->fb;
    m->xe = m->fe;
    if (cfdb_bytes_cmp(m->fb, m->fe) >= 0) {
        m->more = false;
        native_finished(o);
        return;
    }
    m->phase = PH_EXACT;
    o->replica = 0;
    exact_step(o);
}

static void fallback_have_begin(op *o, cfdb_bytes b)
{
    MS(o)->fb = b;
    resolve(o, MS(o)->end, fallback_have_end);
}

/* The read starts over from the original selectors, on resolved keys. */
static void fallback(op *o, const cfdb_key_selector *obegin, const cfdb_key_selector *oend)
{
    mstate *m = MS(o);
    m->n = 0;
    m->more = false;
    m->read_to_begin = m->read_through_end = false;
    m->lim = m->olim;
    m->begin = *obegin;
    m->end = *oend;
    resolve(o, m->begin, fallback_have_begin);
}

/* ---------- the native range read: selectors to storage, shard by shard ---------- */

static void on_range_reply(void *ctx, int error, const uint8_t *msg, uint32_t len);

static void range_step(op *o)
{
    mstate *m = MS(o);
    if (m->end.key.len == 0 && (m->end.offset < 1 || sel_fgoe(&m->end))) {
        native_finished(o);
        return;
    }
    cfdb_key_selector end_minus = m->end;
    end_minus.offset--;
    m->loc_key = m->reverse ? m->end.key : m->begin.key;
    m->loc_backward = m->reverse ? sel_backward(&end_minus) : sel_backward(&m->begin);
    const cfdb_shard *s = shard_for(o, m->loc_key, m->loc_backward);
    if (!s)
        return;
    if (cfdb_arena_dup_bytes(&o->f->arena, s->begin, &m->shard_begin) ||
        cfdb_arena_dup_bytes(&o->f->arena, s->end, &m->shard_end)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    m->modified = false;
    cfdb_get_mapped_key_values_request req;
    memset(&req, 0, sizeof req);
    /* (begin - 1) definitely resolves before the shard: read from the shard's start */
    cfdb_key_selector bm = m->begin;
    bm.offset--;
    bool bm_less = bm.offset <= 0 && (bm.orEqual && bm.offset == 0 ? cfdb_bytes_cmp(bm.key, m->shard_begin) < 0
                                                                     : cfdb_bytes_cmp(bm.key, m->shard_begin) <= 0);
    if (m->reverse && bm_less && (!sel_fgoe(&m->begin) || !cfdb_bytes_eq(m->begin.key, m->shard_begin))) {
        req.begin = (cfdb_key_selector){ m->shard_begin, false, 1 };
        m->modified = true;
    } else {
        req.begin = m->begin;
    }
    bool e_greater = m->end.offset >= 1 && (sel_fgoe(&m->end) ? cfdb_bytes_cmp(m->end.key, m->shard_end) > 0
                                                               : cfdb_bytes_cmp(m->end.key, m->shard_end) >= 0);
    if (!m->reverse && e_greater) {
        req.end = (cfdb_key_selector){ m->shard_end, false, 1 };
        m->modified = true;
    } else {
        req.end = m->end;
    }
    req.mapper = m->mapper;
    req.version = o->tx->read_version;
    mapped_request_limits(&m->lim, m->reverse, &req.limit, &req.limitBytes);
    req.tenantInfo.tenantId = o->tx->tenant_id;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    o->request = cfdb_client_request(o->tx->cl, server->peer,
                                     cfdb_adjusted_token(server->token, CFDB_SS_GET_MAPPED_KEY_VALUES),
                                     &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token, on_range_reply, o);
    if (!o->request)
        retry_later(o, m->loc_key, m->loc_backward);
}

/* wrong_shard_server: forget the location, NativeAPI's fallback resolves the selectors;
 * other relocating errors (and transport errors, as all_alternatives_failed): retry later */
static void range_relocate(op *o, int error)
{
    mstate *m = MS(o);
    if (error == CFDB_ERR_WRONG_SHARD_SERVER) {
        cfdb_db_invalidate(o->tx->db, o->tx->tenant_id, m->loc_key, m->loc_backward);
        o->replica = 0;
        fallback(o, &m->nbegin, &m->nend);
        return;
    }
    retry_later(o, m->loc_key, m->loc_backward);
}

static void on_range_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    mstate *m = MS(o);
    cfdb_get_mapped_key_values_reply rep;
    cfdb_arena scratch;
    cfdb_arena_init(&scratch);
    if (!txn_storage_reply(o, error, msg, len, &mapped_reply, &rep, &scratch, range_relocate)) {
        cfdb_arena_free(&scratch);
        return;
    }
    uint32_t n = rep.data.count;
    txn_cost_read(o, mapped_weight(rep.data.items, n));
    mapped_limits_decrement(&m->lim, rep.data.items, n);
    bool finished = mapped_limits_reached(&m->lim) || (!m->modified && !rep.more) || mapped_limits_min_rows_done(&m->lim);
    if (mapped_append_rows(o, rep.data.items, n)) {
        cfdb_arena_free(&scratch);
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    bool rep_more = rep.more;
    cfdb_arena_free(&scratch);
    if (finished) {
        m->more = m->modified || mapped_limits_reached(&m->lim) || rep_more;
        native_finished(o);
        return;
    }
    if (!rep_more) {
        if (n == 0) {
            fallback(o, &m->nbegin, &m->nend);
            return;
        }
        if (m->reverse)
            m->end = (cfdb_key_selector){ m->shard_begin, false, 1 };
        else
            m->begin = (cfdb_key_selector){ m->shard_end, false, 1 };
    } else {
        cfdb_bytes lastk = mapped_row_key(m, m->n - 1);
        if (m->reverse)
            m->end = (cfdb_key_selector){ lastk, false, 1 };
        else
            m->begin = (cfdb_key_selector){ lastk, true, 1 };
    }
    o->replica = 0;
    range_step(o);
}

/* The native layer's checks, then the read (RYW hands it its selectors). */
static void native_start(op *o)
{
    mstate *m = MS(o);
    if (mapped_limits_reached(&m->lim)) {
        native_finished(o);
        return;
    }
    if (!mapped_limits_valid(&m->lim)) {
        op_finish(o, CFDB_ERR_RANGE_LIMITS_INVALID);
        return;
    }
    if (m->begin.offset >= m->end.offset && cfdb_bytes_cmp(m->begin.key, m->end.key) >= 0) {
        native_finished(o);
        return;
    }
    m->nbegin = m->begin;
    m->nend = m->end;
    if (m->begin.key.len == 0 && m->begin.offset < 1) {
        m->read_to_begin = true;
        m->begin = (cfdb_key_selector){ m->begin.key, false, 1 };
    }
    m->phase = PH_RANGE;
    range_step(o);
}

static void reverse_end_resolved(op *o, cfdb_bytes key)
{
    mstate *m = MS(o);
    cfdb_bytes top = txn_max_read_key(o->tx);
    m->end = (cfdb_key_selector){ cfdb_bytes_cmp(key, top) > 0 ? top : key, false, 1 };
    native_start(o);
}

static void have_version(cfdb_waiter *w, int error, int64_t version)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error) {
        op_finish(o, error);
        return;
    }
    mstate *m = MS(o);
    if (m->reverse && m->end.offset > 1) {
        /* a reverse read resolves an end selector past its key first */
        resolve(o, m->end, reverse_end_resolved);
        return;
    }
    native_start(o);
}

static void mapped_start(op *o)
{
    o->w.fn = have_version;
    txn_need_read_version(o->tx, &o->w);
}

/* Not in RYW's `reading` (libfdb_c's getMappedRange is not added to it); costed. */
static const txn_op_kind mapped_kind = { .name = "get_mapped_range", .flags = TXN_OP_COSTED, .start = mapped_start };

_Static_assert(sizeof(mapped_op) <= CFDB_FUTURE_EXTRA_MAX, "a mapped read fits in its future's block");

/* ---------- the API's entry point (any thread) ---------- */
static bool in_special_keys(cfdb_bytes k)
{
    return cfdb_bytes_cmp(k, CFDB_BYTES_LIT("\xff\xff")) >= 0 && cfdb_bytes_cmp(k, CFDB_BYTES_LIT("\xff\xff\xff")) < 0;
}

/* removeOrEqual: firstGreaterThan(k) and the like become k + "\x00" without orEqual. */
static int remove_or_equal(cfdb_arena *a, cfdb_key_selector *s)
{
    if (!s->orEqual)
        return 0;
    s->orEqual = false;
    return mapped_key_after(a, s->key, &s->key);
}

cfdb_future *cfdb_txn_get_mapped_range(cfdb_txn *tx, cfdb_bytes begin_key, bool begin_or_equal, int begin_offset,
                                       cfdb_bytes end_key, bool end_or_equal, int end_offset, cfdb_bytes mapper,
                                       int limit, int target_bytes, int mode, int iteration, bool snapshot,
                                       bool reverse)
{
    mlimits lim;
    int rc = mapped_api_limits(limit, target_bytes, mode, iteration, &lim);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_MAPPED, rc);
    bool empty = false;
    pthread_mutex_lock(&tx->mu);
    rc = tx->deferred_error;
    if (!rc && in_special_keys(begin_key) && cfdb_bytes_cmp(end_key, CFDB_BYTES_LIT("\xff\xff")) >= 0 &&
        cfdb_bytes_cmp(end_key, CFDB_BYTES_LIT("\xff\xff\xff")) <= 0)
        rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (!rc && (tx->committing || tx->committed)) {
        /* a read once the commit started; unless protection is off it also fails the transaction */
        if (!tx->opt.used_during_commit_protection_disable && !tx->deferred_error)
            tx->deferred_error = CFDB_ERR_USED_DURING_COMMIT;
        rc = CFDB_ERR_USED_DURING_COMMIT;
    }
    if (!rc) {
        cfdb_bytes top = txn_max_read_key(tx);
        if (cfdb_bytes_cmp(begin_key, top) > 0 || cfdb_bytes_cmp(end_key, top) > 0)
            rc = CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    }
    if (!rc && mapped_limits_reached(&lim))
        empty = true;
    if (!rc && !empty && !mapped_limits_valid(&lim))
        rc = CFDB_ERR_RANGE_LIMITS_INVALID;
    if (rc) {
        pthread_mutex_unlock(&tx->mu);
        return cfdb_future_error(CFDB_FUTURE_MAPPED, rc);
    }
    op *o = op_new(tx, &mapped_kind, CFDB_FUTURE_MAPPED, sizeof(mapped_op));
    if (!o) {
        pthread_mutex_unlock(&tx->mu);
        return txn_future_no_memory(CFDB_FUTURE_MAPPED);
    }
    cfdb_arena *a = &o->f->arena;
    mstate *m = MS(o);
    cfdb_bytes bk = { 0, 0 }, ek = { 0, 0 }, mk = { 0, 0 };
    if (cfdb_arena_dup_bytes(a, begin_key, &bk) || cfdb_arena_dup_bytes(a, end_key, &ek) ||
        cfdb_arena_dup_bytes(a, mapper, &mk))
        rc = TXN_ERR_NO_MEMORY;
    m->rbegin = (cfdb_key_selector){ bk, begin_or_equal, begin_offset };
    m->rend = (cfdb_key_selector){ ek, end_or_equal, end_offset };
    if (!rc)
        rc = remove_or_equal(a, &m->rbegin);
    if (!rc)
        rc = remove_or_equal(a, &m->rend);
    m->begin = m->rbegin;
    m->end = m->rend;
    m->mapper = mk;
    m->reverse = reverse;
    m->olim = m->lim = lim;
    if (!rc && !empty && m->rbegin.offset >= m->rend.offset && cfdb_bytes_cmp(m->rbegin.key, m->rend.key) >= 0)
        empty = true; /* inverted: nothing to read */
    /* only serializable reads through the read-your-writes layer */
    if (!rc && !empty && (snapshot || tx->opt.read_your_writes_disable))
        rc = CFDB_ERR_UNSUPPORTED_OPERATION;
    pthread_mutex_unlock(&tx->mu);
    if (rc)
        return op_settle(o, rc);
    if (empty) {
        cfdb_future *f = o->f;
        deliver(o);
        return f;
    }
    return op_launch(o);
}
