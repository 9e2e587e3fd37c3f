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
 * All of it runs on the network thread with the operation machinery of transaction.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/endpoint.h"
#include "cfdb/errors.h"
#include "txn_internal.h"

#define ROW_UNLIMITED (-1)
#define BYTE_UNLIMITED (-1)

typedef struct mlimits {
    int rows, min_rows, bytes;
} mlimits;

typedef struct cfdb_mapped_state {
    cfdb_key_selector rbegin, rend; /* after orEqual removal: conflict ranges use these */
    cfdb_key_selector begin, end;   /* the native read's current selectors */
    cfdb_key_selector nbegin, nend; /* the native read's original selectors (fallback) */
    cfdb_bytes mapper;
    bool reverse;
    mlimits olim, lim;
    int phase;
    /* the shard of the current request */
    cfdb_bytes shard_begin, shard_end;
    bool modified;
    bool loc_backward;
    cfdb_bytes loc_key;
    /* selector resolution (GetKey) */
    cfdb_key_selector gk;
    void (*gk_done)(op *o, cfdb_bytes key);
    /* exact-range read over [xb, xe) */
    cfdb_bytes xb, xe, fb, fe;
    cfdb_bytes rb, re; /* this request's keys */
    /* result */
    cfdb_fdb_mkv *rows;
    int n, cap;
    bool more, read_to_begin, read_through_end;
} mstate;

enum { PH_RANGE = 1, PH_EXACT = 2 };

static void range_step(op *o);
static void exact_step(op *o);
static void gk_step(op *o);
static void native_finished(op *o);

/* ---------- small helpers ---------- */

static int key_after(cfdb_arena *a, cfdb_bytes k, cfdb_bytes *out)
{
    uint8_t *p = cfdb_arena_alloc(a, k.len + 1);
    if (!p)
        return -1;
    if (k.len)
        memcpy(p, k.ptr, k.len);
    p[k.len] = 0;
    *out = cfdb_bytes_make(p, k.len + 1);
    return 0;
}

static cfdb_bytes bmin(cfdb_bytes a, cfdb_bytes b)
{
    return cfdb_bytes_cmp(a, b) <= 0 ? a : b;
}

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

static bool limits_valid(const mlimits *l)
{
    return (l->rows >= 0 || l->rows == ROW_UNLIMITED) && (l->bytes >= 0 || l->bytes == BYTE_UNLIMITED) &&
           l->min_rows >= 0 && (l->min_rows <= l->rows || l->rows == ROW_UNLIMITED);
}

static bool limits_reached(const mlimits *l)
{
    return l->rows == 0 || (l->bytes == 0 && l->min_rows == 0);
}

static bool limits_min_rows_done(const mlimits *l)
{
    return l->bytes != BYTE_UNLIMITED && l->min_rows == 0;
}

/* The request's (limit, limitBytes) from the limits left (NativeAPI transformRangeLimits). */
static void request_limits(const mlimits *l, bool reverse, int32_t *limit, int32_t *bytes)
{
    if (l->bytes != 0) {
        int rows = l->rows == ROW_UNLIMITED ? REPLY_BYTE_LIMIT : (l->rows < REPLY_BYTE_LIMIT ? l->rows : REPLY_BYTE_LIMIT);
        *limit = reverse ? -rows : rows;
        *bytes = l->bytes == BYTE_UNLIMITED ? REPLY_BYTE_LIMIT : (l->bytes < REPLY_BYTE_LIMIT ? l->bytes : REPLY_BYTE_LIMIT);
    } else {
        *bytes = REPLY_BYTE_LIMIT;
        *limit = reverse ? -l->min_rows : l->min_rows;
    }
}

/* Rows counted against the limits: only the primary key and value, plus 8 bytes a row. */
static void limits_decrement(mlimits *l, const cfdb_mapped_key_value *rows, uint32_t n)
{
    if (l->rows != ROW_UNLIMITED)
        l->rows -= (int)n;
    l->min_rows = l->min_rows > (int)n ? l->min_rows - (int)n : 0;
    if (l->bytes != BYTE_UNLIMITED) {
        long long b = l->bytes;
        for (uint32_t i = 0; i < n; i++)
            b -= 8 + (long long)rows[i].kv.key.len + (long long)rows[i].kv.value.len;
        l->bytes = b > 0 ? (int)b : 0;
    }
}

static void put_key(cfdb_fdb_key *k, cfdb_bytes b)
{
    k->key = b.ptr ? b.ptr : (const uint8_t *)"";
    k->key_length = (int)b.len;
}

static cfdb_bytes get_key(const cfdb_fdb_key *k)
{
    return cfdb_bytes_make(k->key, (size_t)k->key_length);
}

/* Copies rows out of the receive buffer, in libfdb_c's MappedKeyValueRef layout. */
/* NativeAPI's byte count for a mapped reply: the index rows' keys and values, and for each
 * the secondary point read's key and value or the secondary range's expected size. */
static uint64_t mapped_weight(const cfdb_mapped_key_value *rows, uint32_t n)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cfdb_mapped_key_value *r = &rows[i];
        b += r->kv.key.len + r->kv.value.len;
        if (r->reqAndResult.tag == 1) {
            const cfdb_get_value_req_and_result *g = &r->reqAndResult.getValue;
            b += g->key.len + (g->result.present ? g->result.value.len : 0);
        } else if (r->reqAndResult.tag == 2) {
            const cfdb_key_value_vec *d = &r->reqAndResult.getRange.result.data;
            b += 32ull * d->count;
            for (uint32_t k = 0; k < d->count; k++)
                b += d->items[k].key.len + d->items[k].value.len;
        }
    }
    return b;
}

static int append_rows(op *o, const cfdb_mapped_key_value *rows, uint32_t n)
{
    mstate *m = o->mapped;
    cfdb_arena *a = &o->f->arena;
    if (m->n + (int)n > m->cap) {
        int cap = m->cap ? m->cap * 2 : 16;
        while (cap < m->n + (int)n)
            cap *= 2;
        cfdb_fdb_mkv *nr = cfdb_arena_alloc(a, (size_t)cap * sizeof *nr);
        if (!nr)
            return -1;
        if (m->n)
            memcpy(nr, m->rows, (size_t)m->n * sizeof *nr);
        m->rows = nr;
        m->cap = cap;
    }
    for (uint32_t i = 0; i < n; i++) {
        const cfdb_mapped_key_value *r = &rows[i];
        cfdb_fdb_mkv *d = &m->rows[m->n];
        memset(d, 0, sizeof *d);
        cfdb_bytes k, v;
        if (cfdb_arena_dup_bytes(a, r->kv.key, &k) || cfdb_arena_dup_bytes(a, r->kv.value, &v))
            return -1;
        put_key(&d->key, k);
        put_key(&d->value, v);
        unsigned char *raw = (unsigned char *)d;
        if (r->reqAndResult.tag == 1) {
            /* GetValueReqAndResultRef in the variant: key (12 bytes), Optional<Value>
             * (12 bytes + engaged flag); the variant's index (0) at byte 104 */
            const cfdb_get_value_req_and_result *g = &r->reqAndResult.getValue;
            cfdb_bytes gk, gv = { 0, 0 };
            if (cfdb_arena_dup_bytes(a, g->key, &gk))
                return -1;
            if (g->result.present && cfdb_arena_dup_bytes(a, g->result.value, &gv))
                return -1;
            cfdb_fdb_key fk, fv;
            put_key(&fk, gk);
            memcpy(raw + 24, &fk, sizeof fk);
            if (g->result.present) {
                put_key(&fv, gv);
                memcpy(raw + 36, &fv, sizeof fv);
                raw[48] = 1;
            }
            raw[104] = 0;
        } else {
            const cfdb_get_range_req_and_result *g = &r->reqAndResult.getRange;
            cfdb_bytes bk, ek;
            if (cfdb_arena_dup_bytes(a, g->begin.key, &bk) || cfdb_arena_dup_bytes(a, g->end.key, &ek))
                return -1;
            put_key(&d->get_range.begin.key, bk);
            d->get_range.begin.or_equal = g->begin.orEqual;
            d->get_range.begin.offset = g->begin.offset;
            put_key(&d->get_range.end.key, ek);
            d->get_range.end.or_equal = g->end.orEqual;
            d->get_range.end.offset = g->end.offset;
            uint32_t c = g->result.data.count;
            if (c) {
                cfdb_fdb_kv *kv = cfdb_arena_alloc(a, c * sizeof *kv);
                if (!kv)
                    return -1;
                for (uint32_t j = 0; j < c; j++) {
                    cfdb_bytes sk, sv;
                    if (cfdb_arena_dup_bytes(a, g->result.data.items[j].key, &sk) ||
                        cfdb_arena_dup_bytes(a, g->result.data.items[j].value, &sv))
                        return -1;
                    kv[j].key = sk.ptr ? sk.ptr : (const uint8_t *)"";
                    kv[j].key_length = (int)sk.len;
                    kv[j].value = sv.ptr ? sv.ptr : (const uint8_t *)"";
                    kv[j].value_length = (int)sv.len;
                }
                d->get_range.data = kv;
            }
            d->get_range.m_size = (int)c;
            d->get_range.m_capacity = (int)c;
            /* the rest of RangeResultRef (more, readThrough, readToBegin, readThroughEnd)
             * and the variant's index (1) */
            d->buffer[0] = g->result.more;
            if (g->result.readThrough.present) {
                cfdb_bytes rt;
                if (cfdb_arena_dup_bytes(a, g->result.readThrough.value, &rt))
                    return -1;
                cfdb_fdb_key fk;
                put_key(&fk, rt);
                memcpy(d->buffer + 4, &fk, sizeof fk);
                d->buffer[16] = 1;
            }
            d->buffer[20] = g->result.readToBegin;
            d->buffer[21] = g->result.readThroughEnd;
            d->buffer[24] = 1;
        }
        m->n++;
    }
    return 0;
}

static bool row_is_value(const cfdb_fdb_mkv *r)
{
    return ((const unsigned char *)r)[104] == 0;
}

/* ---------- local writes: mapped reads must not meet them ---------- */

/* The first boundary of a range in s inside [b, e), or (interior) b itself when a range
 * of s strictly contains b. skip_after_entry: a range end that is just after a written
 * key (a set's own conflict range) is no boundary of its own. */
static bool range_set_touch(const cfdb_write_map *wm, const cfdb_range_set *s, cfdb_bytes b, cfdb_bytes e,
                            bool interior, bool skip_after_entry, cfdb_bytes *at)
{
    cfdb_omap_node *n = cfdb_range_set_last_beginning_before(s, b);
    if (!n)
        n = cfdb_omap_first(&s->map);
    for (; n && cfdb_bytes_cmp(n->key, e) < 0; n = cfdb_omap_next(n)) {
        cfdb_bytes rb = n->key, re = n->val.bytes;
        if (interior && cfdb_bytes_cmp(rb, b) < 0 && cfdb_bytes_cmp(re, b) > 0) {
            *at = b;
            return true;
        }
        if (cfdb_bytes_cmp(rb, b) >= 0) {
            *at = rb;
            return true;
        }
        if (cfdb_bytes_cmp(re, b) >= 0 && cfdb_bytes_cmp(re, e) < 0) {
            bool skip = false;
            if (skip_after_entry && re.len > 0 && re.ptr[re.len - 1] == 0)
                skip = cfdb_omap_find(&wm->entries, cfdb_bytes_make(re.ptr, re.len - 1)) != NULL;
            if (!skip) {
                *at = re;
                return true;
            }
        }
    }
    return false;
}

/* Whether the transaction wrote anything read-your-writes would show in [b, e): *at
 * receives the first such key. An empty range only checks a clear around b. */
static bool first_modified(const cfdb_write_map *wm, cfdb_bytes b, cfdb_bytes e, cfdb_bytes *at)
{
    if (cfdb_bytes_cmp(b, e) >= 0) {
        cfdb_omap_node *n = cfdb_range_set_find(&wm->cleared, b);
        if (n && cfdb_bytes_cmp(n->key, b) < 0) {
            *at = b;
            return true;
        }
        return false;
    }
    bool found = false;
    cfdb_bytes best = e, x;
    cfdb_omap_node *n = cfdb_omap_find_ge(&wm->entries, b);
    if (n && cfdb_bytes_cmp(n->key, e) < 0) {
        best = n->key;
        found = true;
    }
    if (range_set_touch(wm, &wm->cleared, b, e, true, false, &x) && (!found || cfdb_bytes_cmp(x, best) < 0)) {
        best = x;
        found = true;
    }
    if (range_set_touch(wm, &wm->unreadable, b, e, true, false, &x) && (!found || cfdb_bytes_cmp(x, best) < 0)) {
        best = x;
        found = true;
    }
    if (range_set_touch(wm, &wm->conflict, b, e, false, true, &x) && (!found || cfdb_bytes_cmp(x, best) < 0)) {
        best = x;
        found = true;
    }
    *at = best;
    return found;
}

/* Adds [b, e) to the read conflicts unless local writes meet it (then what precedes
 * them is added and the error is returned). */
static int conflict_unmodified(cfdb_txn *tx, cfdb_bytes b, cfdb_bytes e)
{
    cfdb_bytes at;
    if (first_modified(&tx->ryw.wm, b, e, &at)) {
        cfdb_ryw_add_read_conflict(&tx->ryw, b, at);
        return CFDB_ERR_GET_MAPPED_RANGE_READS_YOUR_WRITES;
    }
    cfdb_ryw_add_read_conflict(&tx->ryw, b, e);
    return 0;
}

/* The primary range's conflict range (RYW addConflictRange for either direction). */
static int primary_conflict(op *o)
{
    mstate *m = o->mapped;
    cfdb_txn *tx = o->tx;
    cfdb_arena *a = &o->f->arena;
    const cfdb_key_selector *sb = &m->rbegin, *se = &m->rend;
    cfdb_bytes rb, re;
    if (cfdb_bytes_cmp(sb->key, se->key) < 0) {
        if (!m->reverse) {
            rb = sb->key;
            re = se->offset > 0 && m->more ? sb->key : se->key;
        } else {
            rb = sb->offset <= 1 && m->more ? se->key : sb->key;
            re = se->key;
        }
    } else {
        rb = se->key;
        re = sb->key;
    }
    if (m->read_to_begin && sb->offset <= 0)
        rb = cfdb_bytes_make("", 0);
    if (m->read_through_end && se->offset > 0)
        re = txn_max_read_key(tx);
    if (m->n) {
        cfdb_bytes first = get_key(&m->rows[0].key), last = get_key(&m->rows[m->n - 1].key);
        if (!m->reverse) {
            if (sb->offset <= 0)
                rb = bmin(rb, first);
            if (cfdb_bytes_cmp(re, last) <= 0 && key_after(a, last, &re))
                return CFDB_ERR_INTERNAL_ERROR;
        } else {
            rb = bmin(rb, last);
            if (se->offset > 0 && cfdb_bytes_cmp(re, first) <= 0 && key_after(a, first, &re))
                return CFDB_ERR_INTERNAL_ERROR;
        }
    }
    return conflict_unmodified(tx, rb, re);
}

/* Conflict ranges of the secondary reads (forward range reads, or single keys). */
static int secondary_conflicts(op *o)
{
    mstate *m = o->mapped;
    cfdb_arena *a = &o->f->arena;
    for (int i = 0; i < m->n; i++) {
        const cfdb_fdb_mkv *r = &m->rows[i];
        int rc;
        if (row_is_value(r)) {
            cfdb_fdb_key fk;
            memcpy(&fk, (const unsigned char *)r + 24, sizeof fk);
            cfdb_bytes k = get_key(&fk), after;
            if (key_after(a, k, &after))
                return CFDB_ERR_INTERNAL_ERROR;
            rc = conflict_unmodified(o->tx, k, after);
        } else {
            const cfdb_fdb_range_req *g = &r->get_range;
            cfdb_bytes bk = get_key(&g->begin.key), ek = get_key(&g->end.key), rb, re;
            bool more = r->buffer[0] != 0;
            if (cfdb_bytes_cmp(bk, ek) < 0) {
                rb = bk;
                re = g->end.offset > 0 && more ? bk : ek;
            } else {
                rb = ek;
                re = bk;
            }
            if (r->buffer[20] && g->begin.offset <= 0)
                rb = cfdb_bytes_make("", 0);
            if (r->buffer[21] && g->end.offset > 0)
                re = txn_max_read_key(o->tx);
            if (g->m_size > 0) {
                cfdb_bytes first = cfdb_bytes_make(g->data[0].key, (size_t)g->data[0].key_length);
                cfdb_bytes last = cfdb_bytes_make(g->data[g->m_size - 1].key, (size_t)g->data[g->m_size - 1].key_length);
                if (g->begin.offset <= 0)
                    rb = bmin(rb, first);
                if (cfdb_bytes_cmp(re, last) <= 0 && key_after(a, last, &re))
                    return CFDB_ERR_INTERNAL_ERROR;
            }
            rc = conflict_unmodified(o->tx, rb, re);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* ---------- finishing ---------- */

static void deliver(op *o)
{
    mstate *m = o->mapped;
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
        rc = primary_conflict(o);
    if (!rc)
        rc = secondary_conflicts(o);
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
    if (o->mapped->gk_done)
        gk_step(o);
    else if (o->mapped->phase == PH_EXACT)
        exact_step(o);
    else
        range_step(o);
}

static void retry_later(op *o, cfdb_bytes key, bool backward)
{
    cfdb_db_invalidate(o->tx->db, key, backward);
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
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, key, backward);
    if (!s) {
        o->w.fn = located;
        cfdb_db_fetch_location(o->tx->db, key, backward, o->tx->read_version, &o->w);
    }
    return s;
}

/* ---------- selector resolution (GetKey) ---------- */

static void on_gk_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    mstate *m = o->mapped;
    o->request = 0;
    if (op_abandoned(o))
        return;
    bool backward = sel_backward(&m->gk);
    if (error) {
        retry_later(o, m->gk.key, backward);
        return;
    }
    cfdb_get_key_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    int rc = fb_decode(&cfdb_msg_get_key_reply, msg, len, &rep, &err, &o->f->arena);
    int e = rc ? rc : err ? err : rep.error.present ? rep.error.value.code : 0;
    if (rc || storage_error_relocates(e)) {
        retry_later(o, m->gk.key, backward);
        return;
    }
    if (e) {
        op_finish(o, e);
        return;
    }
    cfdb_bytes k;
    if (cfdb_arena_dup_bytes(&o->f->arena, rep.sel.key, &k)) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
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
    mstate *m = o->mapped;
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
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_KEY),
                                     &cfdb_msg_get_key_request, &req, &req.reply.token, on_gk_reply, o);
    if (!o->request)
        retry_later(o, m->gk.key, backward);
}

/* Resolves sel (no storage needed for firstGreaterOrEqual / firstGreaterThan). */
static void resolve(op *o, cfdb_key_selector sel, void (*done)(op *o, cfdb_bytes key))
{
    mstate *m = o->mapped;
    if (sel_fgoe(&sel)) {
        done(o, sel.key);
        return;
    }
    if (sel_fgt(&sel)) {
        cfdb_bytes k;
        if (key_after(&o->f->arena, sel.key, &k)) {
            op_finish(o, CFDB_ERR_INTERNAL_ERROR);
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
    mstate *m = o->mapped;
    if (m->fb.len == 0 && (!m->reverse || !m->more))
        m->read_to_begin = true;
    if (cfdb_bytes_eq(m->fe, CFDB_BYTES_LIT("\xff\xff")) && (m->reverse || !m->more))
        m->read_through_end = true;
    native_finished(o);
}

static void on_exact_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    mstate *m = o->mapped;
    o->request = 0;
    if (op_abandoned(o))
        return;
    cfdb_bytes lockey = m->reverse ? m->xe : m->xb;
    if (error) {
        retry_later(o, lockey, m->reverse);
        return;
    }
    cfdb_get_mapped_key_values_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    cfdb_arena scratch;
    cfdb_arena_init(&scratch);
    int rc = fb_decode(&cfdb_msg_get_mapped_key_values_reply, msg, len, &rep, &err, &scratch);
    int e = rc ? rc : err ? err : rep.error.present ? rep.error.value.code : 0;
    if (rc || storage_error_relocates(e)) {
        cfdb_arena_free(&scratch);
        retry_later(o, lockey, m->reverse);
        return;
    }
    if (e) {
        cfdb_arena_free(&scratch);
        op_finish(o, e);
        return;
    }
    uint32_t n = rep.data.count;
    if (append_rows(o, rep.data.items, n)) {
        cfdb_arena_free(&scratch);
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    limits_decrement(&m->lim, rep.data.items, n);
    cfdb_arena_free(&scratch);
    if (limits_reached(&m->lim)) {
        m->more = true;
        exact_finished(o);
        return;
    }
    bool more = rep.more;
    cfdb_bytes lastk = m->n ? get_key(&m->rows[m->n - 1].key) : cfdb_bytes_make("", 0);
    if (m->reverse && more && n > 0 && cfdb_bytes_eq(lastk, m->rb))
        more = false;
    if (more && n > 0) {
        /* the same shard again, after the last row */
        if (m->reverse)
            m->xe = lastk;
        else if (key_after(&o->f->arena, lastk, &m->xb)) {
            op_finish(o, CFDB_ERR_INTERNAL_ERROR);
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
    if (limits_min_rows_done(&m->lim) && m->n > 0) {
        m->more = true;
        exact_finished(o);
        return;
    }
    exact_step(o);
}

static void exact_step(op *o)
{
    mstate *m = o->mapped;
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
    request_limits(&m->lim, m->reverse, &req.limit, &req.limitBytes);
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer,
                                     cfdb_adjusted_token(server->token, CFDB_SS_GET_MAPPED_KEY_VALUES),
                                     &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token, on_exact_reply, o);
    if (!o->request)
        retry_later(o, lockey, m->reverse);
}

static void fallback_have_end(op *o, cfdb_bytes e)
{
    mstate *m = o->mapped;
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
    o->mapped->fb = b;
    resolve(o, o->mapped->end, fallback_have_end);
}

/* The read starts over from the original selectors, on resolved keys. */
static void fallback(op *o, const cfdb_key_selector *obegin, const cfdb_key_selector *oend)
{
    mstate *m = o->mapped;
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
    mstate *m = o->mapped;
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
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
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
    request_limits(&m->lim, m->reverse, &req.limit, &req.limitBytes);
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    o->request = cfdb_client_request(o->tx->cl, server->peer,
                                     cfdb_adjusted_token(server->token, CFDB_SS_GET_MAPPED_KEY_VALUES),
                                     &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token, on_range_reply, o);
    if (!o->request)
        retry_later(o, m->loc_key, m->loc_backward);
}

static void on_range_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    mstate *m = o->mapped;
    o->request = 0;
    if (op_abandoned(o))
        return;
    if (error) { /* transport: as all_alternatives_failed */
        retry_later(o, m->loc_key, m->loc_backward);
        return;
    }
    cfdb_get_mapped_key_values_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    cfdb_arena scratch;
    cfdb_arena_init(&scratch);
    int rc = fb_decode(&cfdb_msg_get_mapped_key_values_reply, msg, len, &rep, &err, &scratch);
    int e = rc ? rc : err ? err : rep.error.present ? rep.error.value.code : 0;
    if (rc || e == CFDB_ERR_ALL_ALTERNATIVES_FAILED) {
        cfdb_arena_free(&scratch);
        retry_later(o, m->loc_key, m->loc_backward);
        return;
    }
    if (e == CFDB_ERR_WRONG_SHARD_SERVER) {
        cfdb_arena_free(&scratch);
        cfdb_db_invalidate(o->tx->db, m->loc_key, m->loc_backward);
        o->replica = 0;
        fallback(o, &m->nbegin, &m->nend);
        return;
    }
    if (e) {
        cfdb_arena_free(&scratch);
        op_finish(o, e);
        return;
    }
    uint32_t n = rep.data.count;
    txn_cost_read(o, mapped_weight(rep.data.items, n));
    limits_decrement(&m->lim, rep.data.items, n);
    bool finished = limits_reached(&m->lim) || (!m->modified && !rep.more) || limits_min_rows_done(&m->lim);
    if (append_rows(o, rep.data.items, n)) {
        cfdb_arena_free(&scratch);
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    bool rep_more = rep.more;
    cfdb_arena_free(&scratch);
    if (finished) {
        m->more = m->modified || limits_reached(&m->lim) || rep_more;
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
        cfdb_bytes lastk = get_key(&m->rows[m->n - 1].key);
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
    mstate *m = o->mapped;
    if (limits_reached(&m->lim)) {
        native_finished(o);
        return;
    }
    if (!limits_valid(&m->lim)) {
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
    mstate *m = o->mapped;
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
    mstate *m = o->mapped;
    if (m->reverse && m->end.offset > 1) {
        /* a reverse read resolves an end selector past its key first */
        resolve(o, m->end, reverse_end_resolved);
        return;
    }
    native_start(o);
}

void cfdb_mapped_op_start(op *o)
{
    o->w.fn = have_version;
    txn_need_read_version(o->tx, &o->w);
}

/* ---------- the API's entry point (any thread) ---------- */

/* fdb_c's parameter mapping for range reads (limit, target_bytes, mode, iteration). */
static int api_limits(int limit, int target_bytes, int mode, int iteration, mlimits *out)
{
    static const int mode_bytes[] = { BYTE_UNLIMITED, 256, 1000, 4096, 80000 };
    static const int progression[] = { 4096, 6144, 9216, 13824, 20736, 31104, 46656, 69984, 80000, 120000 };
    enum { WANT_ALL = -2, ITERATOR = -1, EXACT = 0, SERIAL = 4 };
    if (!limit)
        limit = ROW_UNLIMITED;
    if (!target_bytes)
        target_bytes = BYTE_UNLIMITED;
    if (limit == ROW_UNLIMITED && target_bytes == BYTE_UNLIMITED && mode == EXACT)
        return CFDB_ERR_EXACT_MODE_WITHOUT_LIMITS;
    if (mode == WANT_ALL)
        mode = SERIAL;
    int mb;
    if (mode == ITERATOR) {
        if (iteration <= 0)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        mb = progression[(iteration > 10 ? 10 : iteration) - 1];
    } else if (mode >= 0 && mode <= SERIAL) {
        mb = mode_bytes[mode];
    } else {
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    if (target_bytes == BYTE_UNLIMITED)
        target_bytes = mb;
    else if (mb != BYTE_UNLIMITED && mb < target_bytes)
        target_bytes = mb;
    out->rows = limit;
    out->min_rows = 1;
    out->bytes = target_bytes;
    return 0;
}

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
    return key_after(a, s->key, &s->key);
}

cfdb_future *cfdb_txn_get_mapped_range(cfdb_txn *tx, cfdb_bytes begin_key, bool begin_or_equal, int begin_offset,
                                       cfdb_bytes end_key, bool end_or_equal, int end_offset, cfdb_bytes mapper,
                                       int limit, int target_bytes, int mode, int iteration, bool snapshot,
                                       bool reverse)
{
    mlimits lim;
    int rc = api_limits(limit, target_bytes, mode, iteration, &lim);
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
    if (!rc && limits_reached(&lim))
        empty = true;
    if (!rc && !empty && !limits_valid(&lim))
        rc = CFDB_ERR_RANGE_LIMITS_INVALID;
    op *o = rc ? NULL : op_new(tx, OP_MAPPED_RANGE, CFDB_FUTURE_MAPPED);
    mstate *m = NULL;
    if (o) {
        cfdb_arena *a = &o->f->arena;
        m = cfdb_arena_zalloc(a, sizeof *m);
        cfdb_bytes bk = { 0, 0 }, ek = { 0, 0 }, mk = { 0, 0 };
        if (!m || cfdb_arena_dup_bytes(a, begin_key, &bk) || cfdb_arena_dup_bytes(a, end_key, &ek) ||
            cfdb_arena_dup_bytes(a, mapper, &mk))
            rc = CFDB_ERR_INTERNAL_ERROR;
        if (m) {
            o->mapped = m;
            m->rbegin = (cfdb_key_selector){ bk, begin_or_equal, begin_offset };
            m->rend = (cfdb_key_selector){ ek, end_or_equal, end_offset };
            if (!rc && (remove_or_equal(a, &m->rbegin) || remove_or_equal(a, &m->rend)))
                rc = CFDB_ERR_INTERNAL_ERROR;
            m->begin = m->rbegin;
            m->end = m->rend;
            m->mapper = mk;
            m->reverse = reverse;
            m->olim = m->lim = lim;
            if (!rc && !empty && m->rbegin.offset >= m->rend.offset &&
                cfdb_bytes_cmp(m->rbegin.key, m->rend.key) >= 0)
                empty = true; /* inverted: nothing to read */
        }
        /* only serializable reads through the read-your-writes layer */
        if (!rc && !empty && (snapshot || tx->opt.read_your_writes_disable))
            rc = CFDB_ERR_UNSUPPORTED_OPERATION;
    }
    pthread_mutex_unlock(&tx->mu);
    if (!o)
        return rc ? cfdb_future_error(CFDB_FUTURE_MAPPED, rc) : NULL;
    if (rc || empty) {
        cfdb_future *f = o->f;
        if (!rc)
            deliver(o);
        else
            op_finish(o, rc);
        return f;
    }
    return op_launch(o);
}
