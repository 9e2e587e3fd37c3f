/* The snapshot cache of a read-your-writes transaction: see snap_cache.h. */
#include "snap_cache.h"

#include <string.h>

#include "error_codes.h"

static inline uint8_t xbyte(cfdb_xkey x, uint32_t i)
{
    return i < x.k.len ? x.k.ptr[i] : 0;
}

/* cfdb_xkey_cmp past the first cbl bytes, which are equal */
int cfdb_xkey_cmp_tail(cfdb_xkey a, cfdb_xkey b, uint32_t cbl)
{
    /* past the shorter base, the other side reads zeros */
    for (uint32_t i = cbl; i < a.k.len; i++)
        if (a.k.ptr[i])
            return 1;
    uint32_t j = cbl;
    while (j < b.k.len && !b.k.ptr[j])
        j++;
    uint64_t sa = (uint64_t)a.k.len + a.z, sb = (uint64_t)b.k.len + b.z;
    return j < b.k.len || sa < sb ? -1 : sa > sb;
}

bool cfdb_xkey_is_key_after(cfdb_xkey b, cfdb_xkey a)
{
    uint64_t sa = (uint64_t)a.k.len + a.z, sb = (uint64_t)b.k.len + b.z;
    if (sb != sa + 1 || xbyte(b, (uint32_t)sa) != 0)
        return false;
    for (uint32_t i = 0; i < sa; i++)
        if (xbyte(a, i) != xbyte(b, i))
            return false;
    return true;
}

int cfdb_xkey_bytes(cfdb_xkey x, cfdb_arena *arena, cfdb_bytes *out)
{
    if (!x.z) {
        *out = x.k;
        return 0;
    }
    size_t n = (size_t)x.k.len + x.z;
    uint8_t *p = cfdb_arena_alloc(arena, n);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR;
    if (x.k.len)
        memcpy(p, x.k.ptr, x.k.len);
    memset(p + x.k.len, 0, x.z);
    *out = cfdb_bytes_make(p, n);
    return 0;
}

static int add_entry(cfdb_snap_cache *c, cfdb_bytes begin, cfdb_xkey end, const cfdb_key_value *rows, size_t n)
{
    cfdb_snap_entry *e = cfdb_arena_alloc(c->arena, sizeof *e);
    if (!e)
        return CFDB_ERR_UNKNOWN_ERROR;
    e->begin = begin;
    e->end = end;
    e->rows = rows;
    e->n = n;
    c->version++;
    bool created;
    cfdb_omap_node *node = cfdb_omap_insert(&c->entries, begin, &created);
    if (!node)
        return CFDB_ERR_UNKNOWN_ERROR;
    e->begin = node->key; /* the node's own copy */
    node->val.ptr = e;
    return 0;
}

static int add_sentinels(cfdb_snap_cache *c)
{
    static const cfdb_bytes all_end = { (const uint8_t *)"\xff\xff", 2 };
    cfdb_xkey after_all = { all_end, 1 };
    return add_entry(c, cfdb_bytes_make("", 0), cfdb_xkey_of(cfdb_bytes_make("", 0)), NULL, 0) ||
                   add_entry(c, all_end, after_all, NULL, 0)
               ? CFDB_ERR_UNKNOWN_ERROR
               : 0;
}

int cfdb_snap_init(cfdb_snap_cache *c, cfdb_arena *arena)
{
    c->arena = arena;
    c->version = 0;
    if (cfdb_omap_init(&c->entries, arena))
        return CFDB_ERR_UNKNOWN_ERROR;
    return add_sentinels(c);
}

int cfdb_snap_reset(cfdb_snap_cache *c)
{
    cfdb_omap_clear(&c->entries);
    c->version++;
    return add_sentinels(c);
}

/* first row with key >= x, at index lo or after it (every row before lo is < x) */
static size_t lower_bound(const cfdb_snap_entry *e, cfdb_xkey x, size_t lo)
{
    size_t hi = e->n;
    if (lo >= hi || cfdb_xkey_cmp(cfdb_xkey_of(e->rows[lo].key), x) >= 0)
        return lo;
    lo++;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cfdb_xkey_cmp(cfdb_xkey_of(e->rows[mid].key), x) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const cfdb_snap_entry *entry_of(const cfdb_omap_node *n)
{
    return n ? (const cfdb_snap_entry *)n->val.ptr : NULL;
}

/* Inside known range e: the segment containing x (before=false) or the keys just
 * before x (before=true). */
static void known_seg(const cfdb_omap_node *node, cfdb_xkey x, bool before, cfdb_snap_seg *out)
{
    const cfdb_snap_entry *e = entry_of(node);
    size_t idx = lower_bound(e, x, 0);
    out->node = node;
    out->e = e;
    if (!before && idx < e->n && cfdb_xkey_eq(cfdb_xkey_of(e->rows[idx].key), x)) {
        out->type = CFDB_SNAP_KV;
        out->idx = idx;
        out->begin = x;
        out->end = cfdb_xkey_after(cfdb_xkey_of(e->rows[idx].key));
        return;
    }
    if (before && idx > 0 && cfdb_xkey_eq(cfdb_xkey_after(cfdb_xkey_of(e->rows[idx - 1].key)), x)) {
        out->type = CFDB_SNAP_KV;
        out->idx = idx - 1;
        out->begin = cfdb_xkey_of(e->rows[idx - 1].key);
        out->end = x;
        return;
    }
    out->type = CFDB_SNAP_EMPTY;
    out->idx = idx;
    out->begin = idx > 0 ? cfdb_xkey_after(cfdb_xkey_of(e->rows[idx - 1].key)) : cfdb_xkey_of(e->begin);
    out->end = idx < e->n ? cfdb_xkey_of(e->rows[idx].key) : e->end;
}

static void unknown_seg(const cfdb_omap_node *node, cfdb_snap_seg *out)
{
    const cfdb_snap_entry *e = entry_of(node), *next = entry_of(cfdb_omap_next(node));
    out->type = CFDB_SNAP_UNKNOWN;
    out->node = node;
    out->e = NULL;
    out->idx = 0;
    out->begin = e->end;
    /* the last sentinel ends past every key a read can reach */
    out->end = next ? cfdb_xkey_of(next->begin) : e->end;
}

int cfdb_snap_seg_at(const cfdb_snap_cache *c, cfdb_xkey x, cfdb_arena *scratch, cfdb_snap_seg *out)
{
    cfdb_bytes xb;
    if (cfdb_xkey_bytes(x, scratch, &xb))
        return CFDB_ERR_UNKNOWN_ERROR;
    const cfdb_omap_node *node = cfdb_omap_find_le(&c->entries, xb);
    const cfdb_snap_entry *e = entry_of(node);
    if (cfdb_xkey_cmp(x, e->end) < 0)
        known_seg(node, x, false, out);
    else
        unknown_seg(node, out);
    return 0;
}

int cfdb_snap_seg_before(const cfdb_snap_cache *c, cfdb_xkey x, cfdb_arena *scratch, cfdb_snap_seg *out)
{
    cfdb_bytes xb;
    if (cfdb_xkey_bytes(x, scratch, &xb))
        return CFDB_ERR_UNKNOWN_ERROR;
    const cfdb_omap_node *node = cfdb_omap_find_lt(&c->entries, xb);
    if (!node)
        node = cfdb_omap_first(&c->entries);
    const cfdb_snap_entry *e = entry_of(node);
    if (cfdb_xkey_cmp(e->end, x) >= 0 && cfdb_xkey_cmp(cfdb_xkey_of(e->begin), x) < 0)
        known_seg(node, x, true, out);
    else
        unknown_seg(node, out);
    return 0;
}

static void set_kv(cfdb_snap_seg *s, size_t idx)
{
    s->type = CFDB_SNAP_KV;
    s->idx = idx;
    s->begin = cfdb_xkey_of(s->e->rows[idx].key);
    s->end = cfdb_xkey_after(s->begin);
}

static void set_empty(cfdb_snap_seg *s, size_t idx, cfdb_xkey begin)
{
    const cfdb_snap_entry *e = s->e;
    s->type = CFDB_SNAP_EMPTY;
    s->idx = idx;
    s->begin = begin;
    s->end = idx < e->n ? cfdb_xkey_of(e->rows[idx].key) : e->end;
}

bool cfdb_snap_seg_next(cfdb_snap_seg *s)
{
    cfdb_xkey x = s->end;
    const cfdb_snap_entry *e = s->e;
    if (s->type == CFDB_SNAP_EMPTY && s->idx < e->n) {
        set_kv(s, s->idx); /* an empty segment ends at the next row */
        return true;
    }
    if (s->type == CFDB_SNAP_KV) {
        size_t idx = s->idx + 1;
        if (idx < e->n && cfdb_xkey_eq(cfdb_xkey_of(e->rows[idx].key), x))
            set_kv(s, idx);
        else if (idx < e->n || cfdb_xkey_cmp(x, e->end) < 0)
            set_empty(s, idx, x);
        else
            goto past;
        return true;
    }
past:
    /* x is the end of s's entry (or, unknown, the begin of the next one): the entry
     * holding x is the last one beginning at or before it */
    {
        const cfdb_omap_node *node = s->node, *nx = cfdb_omap_next(node);
        if (!nx)
            return false;
        while (nx && cfdb_xkey_cmp(cfdb_xkey_of(nx->key), x) <= 0) {
            node = nx;
            nx = cfdb_omap_next(nx);
        }
        e = entry_of(node);
        if (cfdb_xkey_cmp(x, e->end) < 0)
            known_seg(node, x, false, s);
        else
            unknown_seg(node, s);
    }
    return true;
}

bool cfdb_snap_seg_prev(cfdb_snap_seg *s)
{
    const cfdb_snap_entry *e = s->e;
    if (s->type == CFDB_SNAP_EMPTY && s->idx > 0) {
        set_kv(s, s->idx - 1); /* an empty segment begins after a row */
        return true;
    }
    if (s->type == CFDB_SNAP_KV) {
        size_t idx = s->idx;
        if (idx > 0) {
            cfdb_xkey after_prev = cfdb_xkey_after(cfdb_xkey_of(e->rows[idx - 1].key));
            if (cfdb_xkey_eq(after_prev, s->begin))
                set_kv(s, idx - 1);
            else
                set_empty(s, idx, after_prev);
            return true;
        }
        if (cfdb_xkey_cmp(cfdb_xkey_of(e->begin), s->begin) < 0) {
            set_empty(s, 0, cfdb_xkey_of(e->begin));
            return true;
        }
    }
    return false; /* into an earlier entry: search */
}

int cfdb_snap_insert_key(cfdb_snap_cache *c, cfdb_bytes key, const cfdb_bytes *value)
{
    cfdb_snap_seg s;
    if (cfdb_snap_seg_at(c, cfdb_xkey_of(key), c->arena, &s))
        return CFDB_ERR_UNKNOWN_ERROR;
    if (s.type != CFDB_SNAP_UNKNOWN)
        return 0;
    cfdb_bytes k;
    if (cfdb_arena_dup_bytes(c->arena, key, &k))
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_key_value *row = NULL;
    if (value) {
        row = cfdb_arena_alloc(c->arena, sizeof *row);
        if (!row || cfdb_arena_dup_bytes(c->arena, *value, &row->value))
            return CFDB_ERR_UNKNOWN_ERROR;
        row->key = k;
    }
    return add_entry(c, k, cfdb_xkey_after(cfdb_xkey_of(k)), row, value ? 1 : 0);
}

int cfdb_snap_insert_range(cfdb_snap_cache *c, cfdb_bytes begin, cfdb_xkey end, const cfdb_key_value *rows,
                           size_t n, bool owned)
{
    cfdb_xkey b = cfdb_xkey_of(begin), e = end;
    if (cfdb_xkey_cmp(b, e) >= 0)
        return 0;
    cfdb_bytes bb, eb;
    if (cfdb_xkey_bytes(b, c->arena, &bb) || cfdb_xkey_bytes(e, c->arena, &eb))
        return CFDB_ERR_UNKNOWN_ERROR;
    /* the entries [first, last) are replaced; first/last are begin keys */
    const cfdb_omap_node *nb = cfdb_omap_find_le(&c->entries, bb);
    const cfdb_snap_entry *eb_ent = entry_of(nb);
    const cfdb_omap_node *first;
    if (cfdb_xkey_cmp(b, eb_ent->end) < 0 && !cfdb_bytes_eq(eb_ent->begin, begin)) {
        /* begins inside a known range: start where it ends */
        b = eb_ent->end;
        first = cfdb_omap_next(nb);
    } else {
        first = cfdb_xkey_cmp(b, eb_ent->end) < 0 ? nb : cfdb_omap_next(nb);
    }
    const cfdb_omap_node *ne = cfdb_omap_find_le(&c->entries, eb);
    const cfdb_snap_entry *ee_ent = entry_of(ne);
    const cfdb_omap_node *last;
    if (cfdb_xkey_cmp(e, ee_ent->end) < 0) {
        /* ends inside a known range: stop where it begins */
        e = cfdb_xkey_of(ee_ent->begin);
        last = ne;
    } else {
        last = cfdb_omap_next(ne);
    }
    if (cfdb_xkey_cmp(b, e) >= 0)
        return 0;
    cfdb_bytes new_begin;
    if (cfdb_xkey_bytes(b, c->arena, &new_begin))
        return CFDB_ERR_UNKNOWN_ERROR;
    /* keep the rows in [b, e), copied */
    size_t i = 0, j = n;
    while (i < n && cfdb_xkey_cmp(cfdb_xkey_of(rows[i].key), b) < 0)
        i++;
    while (j > i && cfdb_xkey_cmp(cfdb_xkey_of(rows[j - 1].key), e) >= 0)
        j--;
    const cfdb_key_value *kept = owned && j > i ? rows + i : NULL;
    if (j > i && !owned) {
        cfdb_key_value *copy = cfdb_arena_alloc(c->arena, (j - i) * sizeof *copy);
        if (!copy)
            return CFDB_ERR_UNKNOWN_ERROR;
        for (size_t r = i; r < j; r++)
            if (cfdb_arena_dup_bytes(c->arena, rows[r].key, &copy[r - i].key) ||
                cfdb_arena_dup_bytes(c->arena, rows[r].value, &copy[r - i].value))
                return CFDB_ERR_UNKNOWN_ERROR;
        kept = copy;
    }
    if (cfdb_xkey_bytes(e, c->arena, &eb))
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_xkey e_copy = { eb, 0 };
    if (e.z == 0 && cfdb_arena_dup_bytes(c->arena, e.k, &e_copy.k))
        return CFDB_ERR_UNKNOWN_ERROR;
    /* remove the entries now covered (their rows are part of this read too) */
    cfdb_bytes stop = last ? last->key : cfdb_bytes_make(NULL, 0);
    bool removed_sentinel = false;
    c->version++;
    while (first && (!last || cfdb_bytes_cmp(first->key, stop) < 0)) {
        const cfdb_omap_node *nx = cfdb_omap_next(first);
        if (first->key.len == 0)
            removed_sentinel = true;
        cfdb_omap_remove(&c->entries, first->key);
        first = nx;
    }
    if (add_entry(c, new_begin, e_copy, kept, j > i ? j - i : 0))
        return CFDB_ERR_UNKNOWN_ERROR;
    if (removed_sentinel && new_begin.len != 0)
        return add_entry(c, cfdb_bytes_make("", 0), cfdb_xkey_of(cfdb_bytes_make("", 0)), NULL, 0);
    return 0;
}
