/* The read-your-writes segment view: see ryw_iter.h. */
#include "ryw_iter.h"

#include <string.h>

#include "error_codes.h"

static const cfdb_bytes k_all_end = { (const uint8_t *)"\xff\xff", 2 };

static cfdb_xkey xmax(cfdb_xkey a, cfdb_xkey b)
{
    return cfdb_xkey_cmp(a, b) >= 0 ? a : b;
}
static cfdb_xkey xmin(cfdb_xkey a, cfdb_xkey b)
{
    return cfdb_xkey_cmp(a, b) <= 0 ? a : b;
}

void cfdb_ryw_iter_init(cfdb_ryw_iter *it, const cfdb_snap_cache *cache, cfdb_write_map *wm, cfdb_arena *scratch)
{
    memset(it, 0, sizeof *it);
    it->cache = cache;
    it->wm = wm;
    it->scratch = scratch;
}

static const cfdb_wm_entry *op_entry(cfdb_write_map *wm, cfdb_bytes k)
{
    const cfdb_wm_entry *e = cfdb_write_map_entry(wm, k);
    return e && e->count ? e : NULL;
}

/* Cuts [*lo, *hi) by the ranges of s around K: at K itself (before=false) or just
 * before it. *inside: that point lies in one of the ranges. */
static void cut_by_ranges(const cfdb_range_set *s, cfdb_bytes K, bool before, cfdb_xkey *lo, cfdb_xkey *hi,
                          bool *inside)
{
    *inside = false;
    const cfdb_omap_node *r = before ? NULL : cfdb_range_set_find(s, K);
    if (!r) {
        const cfdb_omap_node *p = cfdb_range_set_last_beginning_before(s, K);
        if (p && before && cfdb_bytes_cmp(p->val.bytes, K) >= 0)
            r = p;
        else if (p)
            *lo = xmax(*lo, cfdb_xkey_of(p->val.bytes));
    }
    if (r) {
        *inside = true;
        *lo = xmax(*lo, cfdb_xkey_of(r->key));
        *hi = xmin(*hi, cfdb_xkey_of(r->val.bytes));
        return;
    }
    const cfdb_omap_node *n = cfdb_range_set_first_ending_after(s, K);
    if (n)
        *hi = xmin(*hi, cfdb_xkey_of(n->key));
}

/* The write map's segment containing x, or the keys just before x. */
static int wm_seg(cfdb_ryw_iter *it, cfdb_xkey x, bool before)
{
    cfdb_write_map *wm = it->wm;
    it->we = NULL;
    if (!wm) {
        it->wtype = CFDB_WM_SEG_UNMODIFIED;
        it->unreadable = false;
        it->wbegin = cfdb_xkey_of(cfdb_bytes_make("", 0));
        it->wend = cfdb_xkey_after(cfdb_xkey_of(k_all_end));
        return 0;
    }
    cfdb_bytes K;
    if (cfdb_xkey_bytes(x, it->scratch, &K))
        return CFDB_ERR_UNKNOWN_ERROR;
    /* a key with pending operations is a segment of its own */
    cfdb_bytes opk = K;
    const cfdb_wm_entry *e = NULL;
    if (!before)
        e = op_entry(wm, K);
    else if (K.len && K.ptr[K.len - 1] == 0) {
        opk = cfdb_bytes_make(K.ptr, K.len - 1);
        e = op_entry(wm, opk);
    }
    if (e) {
        it->wtype = cfdb_write_map_entry_kind(wm, e, NULL) == CFDB_WM_DEPENDENT ? CFDB_WM_SEG_DEPENDENT
                                                                               : CFDB_WM_SEG_INDEPENDENT;
        it->unreadable = e->unreadable;
        it->we = e;
        it->wbegin = cfdb_xkey_of(opk);
        it->wend = cfdb_xkey_after(it->wbegin);
        return 0;
    }
    /* a gap: cut by the neighbouring written keys, the ends of the user key space
     * (WriteMap keeps entries at "\xff\xff" and after it), cleared and unreadable ranges */
    cfdb_xkey lo = cfdb_xkey_of(cfdb_bytes_make("", 0)), hi = cfdb_xkey_after(cfdb_xkey_of(k_all_end));
    int c = cfdb_bytes_cmp(K, k_all_end);
    if (c < 0 || (before && c == 0))
        hi = cfdb_xkey_of(k_all_end);
    else
        lo = cfdb_xkey_of(k_all_end);
    const cfdb_omap_node *p = cfdb_omap_find_lt(&wm->entries, K);
    while (p && !((const cfdb_wm_entry *)p->val.ptr)->count)
        p = NULL; /* entries always hold operations; an empty one cuts nothing */
    if (p) {
        cfdb_xkey pe = cfdb_xkey_after(cfdb_xkey_of(p->key));
        if (cfdb_xkey_cmp(pe, cfdb_xkey_of(K)) <= 0)
            lo = xmax(lo, pe);
    }
    const cfdb_omap_node *n = before ? cfdb_omap_find_ge(&wm->entries, K) : cfdb_omap_find_gt(&wm->entries, K);
    if (n)
        hi = xmin(hi, cfdb_xkey_of(n->key));
    bool cleared, unreadable;
    cut_by_ranges(&wm->cleared, K, before, &lo, &hi, &cleared);
    cut_by_ranges(&wm->unreadable, K, before, &lo, &hi, &unreadable);
    it->wtype = cleared ? CFDB_WM_SEG_CLEARED : CFDB_WM_SEG_UNMODIFIED;
    it->unreadable = unreadable;
    it->wbegin = lo;
    it->wend = hi;
    return 0;
}

static const cfdb_ryw_seg k_type_map[4][3] = {
    /* unmodified */ { CFDB_RYW_UNKNOWN, CFDB_RYW_EMPTY, CFDB_RYW_KV },
    /* cleared */ { CFDB_RYW_EMPTY, CFDB_RYW_EMPTY, CFDB_RYW_EMPTY },
    /* independent */ { CFDB_RYW_KV, CFDB_RYW_KV, CFDB_RYW_KV },
    /* dependent */ { CFDB_RYW_UNKNOWN, CFDB_RYW_KV, CFDB_RYW_KV },
};

static uint64_t wm_version(const cfdb_ryw_iter *it)
{
    return it->wm ? it->wm->version : 0;
}

static void merge(cfdb_ryw_iter *it)
{
    it->begin = xmax(it->c.begin, it->wbegin);
    it->end = xmin(it->c.end, it->wend);
    it->type = k_type_map[it->wtype][it->c.type];
}

/* Both sides searched from x. */
static int locate(cfdb_ryw_iter *it, cfdb_xkey x, bool before)
{
    int rc = before ? cfdb_snap_seg_before(it->cache, x, it->scratch, &it->c)
                    : cfdb_snap_seg_at(it->cache, x, it->scratch, &it->c);
    it->wcur = false;
    if (rc || wm_seg(it, x, before))
        return CFDB_ERR_UNKNOWN_ERROR;
    it->cver = it->cache->version;
    it->wver = wm_version(it);
    merge(it);
    return 0;
}

static bool stale(const cfdb_ryw_iter *it)
{
    return it->cver != it->cache->version || it->wver != wm_version(it);
}

/* The first node at or after n whose key is >= x (keys as begins) or whose end is > x
 * (ranges). */
static const cfdb_omap_node *entry_from(const cfdb_omap_node *n, cfdb_xkey x)
{
    while (n && cfdb_xkey_cmp(cfdb_xkey_of(n->key), x) < 0)
        n = cfdb_omap_next(n);
    return n;
}
static const cfdb_omap_node *range_from(const cfdb_omap_node *n, cfdb_xkey x)
{
    while (n && cfdb_xkey_cmp(cfdb_xkey_of(n->val.bytes), x) <= 0)
        n = cfdb_omap_next(n);
    return n;
}

/* Cuts the gap [x, *hi) by range r, the first range ending after x; returns whether x
 * lies in it. */
static bool cut_gap(const cfdb_omap_node *r, cfdb_xkey x, cfdb_xkey *hi)
{
    if (!r)
        return false;
    bool inside = cfdb_xkey_cmp(cfdb_xkey_of(r->key), x) <= 0;
    *hi = xmin(*hi, cfdb_xkey_of(inside ? r->val.bytes : r->key));
    return inside;
}

/* The write map's segment beginning at x, the end of the current one, found from the
 * cursors: the same segment wm_seg(x, false) computes, as the segments partition the key
 * space at the written keys, the keys after them and the ranges' boundaries. */
static int wm_next(cfdb_ryw_iter *it, cfdb_xkey x)
{
    cfdb_write_map *wm = it->wm;
    if (!wm || cfdb_xkey_cmp(x, cfdb_xkey_of(k_all_end)) >= 0) {
        it->wcur = false;
        return wm_seg(it, x, false);
    }
    if (!it->wcur) {
        cfdb_bytes xb;
        if (cfdb_xkey_bytes(x, it->scratch, &xb))
            return CFDB_ERR_UNKNOWN_ERROR;
        it->wn = cfdb_omap_find_ge(&wm->entries, xb);
        it->wc = cfdb_range_set_first_ending_after(&wm->cleared, xb);
        it->wu = cfdb_range_set_first_ending_after(&wm->unreadable, xb);
        it->wcur = true;
    } else {
        it->wn = entry_from(it->wn, x);
        it->wc = range_from(it->wc, x);
        it->wu = range_from(it->wu, x);
    }
    const cfdb_omap_node *n = it->wn;
    if (n && cfdb_xkey_eq(cfdb_xkey_of(n->key), x)) {
        const cfdb_wm_entry *e = n->val.ptr;
        if (!e->count) { /* not a segment of its own (wm_seg's rule) */
            it->wcur = false;
            return wm_seg(it, x, false);
        }
        it->wtype = cfdb_write_map_entry_kind(wm, e, NULL) == CFDB_WM_DEPENDENT ? CFDB_WM_SEG_DEPENDENT
                                                                               : CFDB_WM_SEG_INDEPENDENT;
        it->unreadable = e->unreadable;
        it->we = e;
        it->wbegin = cfdb_xkey_of(n->key);
        it->wend = cfdb_xkey_after(it->wbegin);
        return 0;
    }
    cfdb_xkey hi = cfdb_xkey_of(k_all_end);
    if (n)
        hi = xmin(hi, cfdb_xkey_of(n->key));
    it->we = NULL;
    bool cleared = cut_gap(it->wc, x, &hi);
    it->unreadable = cut_gap(it->wu, x, &hi);
    it->wtype = cleared ? CFDB_WM_SEG_CLEARED : CFDB_WM_SEG_UNMODIFIED;
    it->wbegin = x;
    it->wend = hi;
    return 0;
}

int cfdb_ryw_iter_skip(cfdb_ryw_iter *it, cfdb_xkey x)
{
    return locate(it, x, false);
}

int cfdb_ryw_iter_next(cfdb_ryw_iter *it)
{
    cfdb_xkey x = it->end;
    if (stale(it))
        return locate(it, x, false);
    int c = cfdb_xkey_cmp(it->c.end, it->wend);
    if (c <= 0 && !cfdb_snap_seg_next(&it->c) && cfdb_snap_seg_at(it->cache, x, it->scratch, &it->c))
        return CFDB_ERR_UNKNOWN_ERROR;
    if (c >= 0 && wm_next(it, x))
        return CFDB_ERR_UNKNOWN_ERROR;
    /* the side(s) that moved begin at x, the other one contains it */
    it->begin = x;
    it->end = xmin(it->c.end, it->wend);
    it->type = k_type_map[it->wtype][it->c.type];
    return 0;
}

int cfdb_ryw_iter_prev(cfdb_ryw_iter *it)
{
    cfdb_xkey x = it->begin;
    if (stale(it))
        return locate(it, x, true);
    int c = cfdb_xkey_cmp(it->c.begin, it->wbegin);
    if (c >= 0 && !cfdb_snap_seg_prev(&it->c) && cfdb_snap_seg_before(it->cache, x, it->scratch, &it->c))
        return CFDB_ERR_UNKNOWN_ERROR;
    if (c <= 0) {
        it->wcur = false;
        if (wm_seg(it, x, true))
            return CFDB_ERR_UNKNOWN_ERROR;
    }
    it->begin = xmax(it->c.begin, it->wbegin);
    it->end = x;
    it->type = k_type_map[it->wtype][it->c.type];
    return 0;
}

int cfdb_ryw_iter_refresh(cfdb_ryw_iter *it)
{
    return locate(it, it->begin, false);
}

int cfdb_ryw_iter_kv(cfdb_ryw_iter *it, cfdb_key_value *out, bool *present)
{
    if (it->wtype == CFDB_WM_SEG_UNMODIFIED) {
        *out = it->c.e->rows[it->c.idx];
        *present = true;
        return 0;
    }
    const cfdb_bytes *base = NULL;
    if (it->wtype == CFDB_WM_SEG_DEPENDENT && it->c.type == CFDB_SNAP_KV)
        base = &it->c.e->rows[it->c.idx].value;
    out->key = it->wbegin.k;
    if (it->we && !stale(it))
        return cfdb_write_map_apply_entry(it->wm, it->we, base, &out->value, present);
    return cfdb_write_map_apply(it->wm, it->wbegin.k, base, &out->value, present);
}

/* To the KV segment of row idx of the cache's current known range, a row inside the
 * write map's current (unmodified) segment: only the cache side moves. */
static int move_to_row(cfdb_ryw_iter *it, size_t idx)
{
    cfdb_xkey k = cfdb_xkey_of(it->c.e->rows[idx].key);
    if (stale(it))
        return cfdb_ryw_iter_skip(it, k);
    it->c.type = CFDB_SNAP_KV;
    it->c.idx = idx;
    it->c.begin = k;
    it->c.end = cfdb_xkey_after(k);
    merge(it);
    return 0;
}

int cfdb_ryw_iter_run(cfdb_ryw_iter *it, cfdb_xkey bound, bool backward, cfdb_key_value *one,
                      const cfdb_key_value **rows, size_t *n, bool *present)
{
    if (it->wtype != CFDB_WM_SEG_UNMODIFIED) {
        int rc = cfdb_ryw_iter_kv(it, one, present);
        *rows = one;
        *n = 1;
        return rc;
    }
    *present = true;
    const cfdb_snap_entry *e = it->c.e;
    size_t i = it->c.idx, j = it->c.idx;
    if (!backward) {
        cfdb_xkey lim = xmin(bound, it->wend);
        if (cfdb_xkey_cmp(e->end, lim) <= 0)
            j = e->n - 1; /* every row of the known range is below lim */
        while (j + 1 < e->n && cfdb_xkey_cmp(cfdb_xkey_of(e->rows[j + 1].key), lim) < 0)
            j++;
        *rows = &e->rows[i];
        *n = j - i + 1;
        return j == i ? 0 : move_to_row(it, j);
    }
    /* skipContiguousBack stops above the writes' segment begin + "\0" */
    cfdb_xkey lim = xmax(bound, cfdb_xkey_after(it->wbegin));
    if (cfdb_xkey_cmp(cfdb_xkey_of(e->begin), lim) >= 0)
        i = 0; /* every row of the known range is at or above lim */
    while (i > 0 && cfdb_xkey_cmp(cfdb_xkey_of(e->rows[i - 1].key), lim) >= 0)
        i--;
    *rows = &e->rows[i];
    *n = j - i + 1;
    return j == i ? 0 : move_to_row(it, i);
}
