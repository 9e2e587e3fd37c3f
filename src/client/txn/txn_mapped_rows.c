/* Mapped range reads, the row side (txn_mapped.h): limits, the rows copied into libfdb_c's
 * MappedKeyValueRef layout, and the read-your-writes layer's rules -- a mapped read reads
 * storage directly and fails with get_mapped_range_reads_your_writes when its primary range
 * or a secondary read meets keys the transaction wrote; else their read conflict ranges are
 * added. */
#include <string.h>

#include "error_codes.h"
#include "txn_mapped.h"

/* ---------- small helpers ---------- */

int mapped_key_after(cfdb_arena *a, cfdb_bytes k, cfdb_bytes *out)
{
    uint8_t *p = cfdb_arena_alloc(a, k.len + 1);
    if (!p)
        return TXN_ERR_NO_MEMORY;
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

bool mapped_limits_valid(const mlimits *l)
{
    return (l->rows >= 0 || l->rows == ROW_UNLIMITED) && (l->bytes >= 0 || l->bytes == BYTE_UNLIMITED) &&
           l->min_rows >= 0 && (l->min_rows <= l->rows || l->rows == ROW_UNLIMITED);
}

bool mapped_limits_reached(const mlimits *l)
{
    return l->rows == 0 || (l->bytes == 0 && l->min_rows == 0);
}

bool mapped_limits_min_rows_done(const mlimits *l)
{
    return l->bytes != BYTE_UNLIMITED && l->min_rows == 0;
}

void mapped_request_limits(const mlimits *l, bool reverse, int32_t *limit, int32_t *bytes)
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

void mapped_limits_decrement(mlimits *l, const cfdb_mapped_key_value *rows, uint32_t n)
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

cfdb_bytes mapped_row_key(const mstate *m, int i)
{
    return get_key(&m->rows[i].key);
}

/* NativeAPI's byte count for a mapped reply: the index rows' keys and values, and for each
 * the secondary point read's key and value or the secondary range's expected size. */
uint64_t mapped_weight(const cfdb_mapped_key_value *rows, uint32_t n)
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

int mapped_append_rows(op *o, const cfdb_mapped_key_value *rows, uint32_t n)
{
    mstate *m = MS(o);
    cfdb_arena *a = &o->f->arena;
    if (m->n + (int)n > m->cap) {
        int cap = m->cap ? m->cap * 2 : 16;
        while (cap < m->n + (int)n)
            cap *= 2;
        cfdb_fdb_mkv *nr = cfdb_arena_alloc(a, (size_t)cap * sizeof *nr);
        if (!nr)
            return TXN_ERR_NO_MEMORY;
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
            return TXN_ERR_NO_MEMORY;
        put_key(&d->key, k);
        put_key(&d->value, v);
        unsigned char *raw = (unsigned char *)d;
        if (r->reqAndResult.tag == 1) {
            /* GetValueReqAndResultRef in the variant: key (12 bytes), Optional<Value>
             * (12 bytes + engaged flag); the variant's index (0) at byte 104 */
            const cfdb_get_value_req_and_result *g = &r->reqAndResult.getValue;
            cfdb_bytes gk, gv = { 0, 0 };
            if (cfdb_arena_dup_bytes(a, g->key, &gk))
                return TXN_ERR_NO_MEMORY;
            if (g->result.present && cfdb_arena_dup_bytes(a, g->result.value, &gv))
                return TXN_ERR_NO_MEMORY;
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
                return TXN_ERR_NO_MEMORY;
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
                    return TXN_ERR_NO_MEMORY;
                for (uint32_t j = 0; j < c; j++) {
                    cfdb_bytes sk, sv;
                    if (cfdb_arena_dup_bytes(a, g->result.data.items[j].key, &sk) ||
                        cfdb_arena_dup_bytes(a, g->result.data.items[j].value, &sv))
                        return TXN_ERR_NO_MEMORY;
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
                    return TXN_ERR_NO_MEMORY;
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

int mapped_api_limits(int limit, int target_bytes, int mode, int iteration, mlimits *out)
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
    mstate *m = MS(o);
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
            if (cfdb_bytes_cmp(re, last) <= 0 && mapped_key_after(a, last, &re))
                return TXN_ERR_NO_MEMORY;
        } else {
            rb = bmin(rb, last);
            if (se->offset > 0 && cfdb_bytes_cmp(re, first) <= 0 && mapped_key_after(a, first, &re))
                return TXN_ERR_NO_MEMORY;
        }
    }
    return conflict_unmodified(tx, rb, re);
}

/* Conflict ranges of the secondary reads (forward range reads, or single keys). */
static int secondary_conflicts(op *o)
{
    mstate *m = MS(o);
    cfdb_arena *a = &o->f->arena;
    for (int i = 0; i < m->n; i++) {
        const cfdb_fdb_mkv *r = &m->rows[i];
        int rc;
        if (row_is_value(r)) {
            cfdb_fdb_key fk;
            memcpy(&fk, (const unsigned char *)r + 24, sizeof fk);
            cfdb_bytes k = get_key(&fk), after;
            if (mapped_key_after(a, k, &after))
                return TXN_ERR_NO_MEMORY;
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
                if (cfdb_bytes_cmp(re, last) <= 0 && mapped_key_after(a, last, &re))
                    return TXN_ERR_NO_MEMORY;
            }
            rc = conflict_unmodified(o->tx, rb, re);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int mapped_conflicts(op *o)
{
    int rc = primary_conflict(o);
    return rc ? rc : secondary_conflicts(o);
}
