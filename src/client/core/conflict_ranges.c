#include "conflict_ranges.h"

#include <stdlib.h>
#include <string.h>

#include "atomic_ops.h"
#include "error_codes.h"
#include "retry_policy.h"

static int key_after(cfdb_arena *a, cfdb_bytes k, cfdb_bytes *out)
{
    uint8_t *p = cfdb_arena_alloc(a, (size_t)k.len + 1);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    if (k.len)
        memcpy(p, k.ptr, k.len);
    p[k.len] = 0;
    *out = cfdb_bytes_make(p, (size_t)k.len + 1);
    return 0;
}

static cfdb_bytes bmin(cfdb_bytes a, cfdb_bytes b)
{
    return cfdb_bytes_cmp(a, b) <= 0 ? a : b;
}

int cfdb_read_conflicts_init(cfdb_read_conflicts *rc, cfdb_arena *arena)
{
    rc->arena = arena;
    return cfdb_range_set_init(&rc->set, arena);
}

/* Whether a write-map entry decides its key without the stored value. */
static bool entry_independent(const cfdb_wm_entry *e)
{
    if (!e->count)
        return false;
    int t = e->ops[0].type;
    return t == CFDB_MUT_SET_VALUE || t == CFDB_MUT_CLEAR_RANGE || t == CFDB_MUT_SET_VERSIONSTAMPED_VALUE ||
           t == CFDB_MUT_SET_VERSIONSTAMPED_KEY;
}

int cfdb_read_conflicts_add(cfdb_read_conflicts *rc, const cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    cfdb_bytes b, e;
    if (cfdb_arena_dup_bytes(rc->arena, begin, &b) || cfdb_arena_dup_bytes(rc->arena, end, &e))
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    if (!wm)
        return cfdb_range_set_add(&rc->set, b, e);
    cfdb_bytes pos = b;
    while (cfdb_bytes_cmp(pos, e) < 0) {
        cfdb_omap_node *n = cfdb_omap_find_ge(&wm->entries, pos);
        if (n && cfdb_bytes_cmp(n->key, e) >= 0)
            n = NULL;
        if (n && cfdb_bytes_eq(n->key, pos)) {
            cfdb_bytes ka;
            if (key_after(rc->arena, pos, &ka))
                return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
            if (!entry_independent(n->val.ptr) && cfdb_range_set_add(&rc->set, pos, ka))
                return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
            pos = ka;
            continue;
        }
        cfdb_bytes seg_end = n ? n->key : e;
        cfdb_omap_node *cl = cfdb_range_set_find(&wm->cleared, pos);
        if (cl) {
            pos = bmin(seg_end, cl->val.bytes);
            continue;
        }
        cfdb_omap_node *nx = cfdb_range_set_first_ending_after(&wm->cleared, pos);
        if (nx)
            seg_end = bmin(seg_end, nx->key);
        if (cfdb_range_set_add(&rc->set, pos, seg_end))
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        pos = seg_end;
    }
    return 0;
}

int cfdb_read_conflicts_add_key(cfdb_read_conflicts *rc, const cfdb_write_map *wm, cfdb_bytes key)
{
    cfdb_bytes ka;
    if (key_after(rc->arena, key, &ka))
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    return cfdb_read_conflicts_add(rc, wm, key, ka);
}

int cfdb_get_key_conflict_range(const cfdb_key_selector *sel, cfdb_bytes result, cfdb_arena *arena,
                                cfdb_bytes *begin, cfdb_bytes *end)
{
    cfdb_bytes k;
    if (sel->orEqual) {
        if (key_after(arena, sel->key, &k))
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    } else {
        k = sel->key;
    }
    if (sel->offset <= 0) {
        *begin = result;
        *end = k;
        return 0;
    }
    *begin = k;
    return key_after(arena, result, end);
}

int cfdb_get_range_conflict_range(const cfdb_key_selector *bs, const cfdb_key_selector *es, bool reverse,
                                  const cfdb_key_value *rows, size_t n, bool more, bool read_to_begin,
                                  bool read_through_end, cfdb_bytes max_read_key, cfdb_arena *arena,
                                  cfdb_bytes *begin, cfdb_bytes *end)
{
    cfdb_bytes rb, re;
    static const uint8_t none = 0;
    cfdb_bytes all_begin = cfdb_bytes_make(&none, 0);
    if (!reverse) {
        if (cfdb_bytes_cmp(bs->key, es->key) < 0) {
            rb = bs->key;
            re = (es->offset > 0 && more) ? bs->key : es->key;
        } else {
            rb = es->key;
            re = bs->key;
        }
        if (read_to_begin && bs->offset <= 0)
            rb = all_begin;
        if (read_through_end && es->offset > 0)
            re = max_read_key;
        if (n) {
            if (bs->offset <= 0)
                rb = bmin(rb, rows[0].key);
            if (cfdb_bytes_cmp(re, rows[n - 1].key) <= 0 && key_after(arena, rows[n - 1].key, &re))
                return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        }
    } else {
        if (cfdb_bytes_cmp(bs->key, es->key) < 0) {
            rb = (bs->offset <= 1 && more) ? es->key : bs->key;
            re = es->key;
        } else {
            rb = es->key;
            re = bs->key;
        }
        if (read_to_begin && bs->offset <= 0)
            rb = all_begin;
        if (read_through_end && es->offset > 0)
            re = max_read_key;
        if (n) {
            rb = bmin(rb, rows[n - 1].key);
            if (es->offset > 0 && cfdb_bytes_cmp(re, rows[0].key) <= 0 && key_after(arena, rows[0].key, &re))
                return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        }
    }
    if (cfdb_arena_dup_bytes(arena, rb, begin) || cfdb_arena_dup_bytes(arena, re, end))
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    return 0;
}

static int cmp_begin(const void *x, const void *y)
{
    return cfdb_bytes_cmp(((const cfdb_key_range *)x)->begin, ((const cfdb_key_range *)y)->begin);
}

bool cfdb_ranges_intersect(const cfdb_key_range *a, size_t na, const cfdb_key_range *b, size_t nb)
{
    if (!na || !nb)
        return false;
    bool hit = false;
    /* the usual few ranges: compare pairs directly, no allocation (commit hot path) */
    if (na * nb <= 256) {
        for (size_t i = 0; i < na && !hit; i++)
            for (size_t j = 0; j < nb && !hit; j++)
                hit = cfdb_bytes_cmp(a[i].begin, b[j].end) < 0 && cfdb_bytes_cmp(b[j].begin, a[i].end) < 0;
        return hit;
    }
    cfdb_key_range *l = malloc(na * sizeof *l), *r = malloc(nb * sizeof *r);
    if (!l || !r) {
        /* quadratic fallback without memory */
        for (size_t i = 0; i < na && !hit; i++)
            for (size_t j = 0; j < nb && !hit; j++)
                hit = cfdb_bytes_cmp(a[i].begin, b[j].end) < 0 && cfdb_bytes_cmp(b[j].begin, a[i].end) < 0;
        free(l);
        free(r);
        return hit;
    }
    memcpy(l, a, na * sizeof *l);
    memcpy(r, b, nb * sizeof *r);
    qsort(l, na, sizeof *l, cmp_begin);
    qsort(r, nb, sizeof *r, cmp_begin);
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (cfdb_bytes_cmp(l[i].end, r[j].begin) <= 0)
            i++;
        else if (cfdb_bytes_cmp(r[j].end, l[i].begin) <= 0)
            j++;
        else {
            hit = true;
            break;
        }
    }
    free(l);
    free(r);
    return hit;
}

int cfdb_self_conflict_key(const uint8_t random16[16], cfdb_arena *arena, cfdb_bytes *key)
{
    size_t pl = sizeof CFDB_SELF_CONFLICT_PREFIX - 1;
    uint8_t *p = cfdb_arena_alloc(arena, pl + 16);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    memcpy(p, CFDB_SELF_CONFLICT_PREFIX, pl);
    memcpy(p + pl, random16, 16);
    *key = cfdb_bytes_make(p, pl + 16);
    return 0;
}

int cfdb_commit_conflict_ranges(const cfdb_read_conflicts *rc, const cfdb_key_range *writes, size_t n_writes,
                                bool causal_write_risky, const uint8_t random16[16], cfdb_arena *arena,
                                cfdb_key_range **out_reads, size_t *n_reads, cfdb_key_range **out_writes,
                                size_t *n_out_writes)
{
    size_t nr = rc ? cfdb_range_set_count(&rc->set) : 0;
    cfdb_key_range *reads = cfdb_arena_alloc(arena, (nr + 1) * sizeof *reads);
    cfdb_key_range *ws = cfdb_arena_alloc(arena, (n_writes + 1) * sizeof *ws);
    if (!reads || !ws)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    size_t i = 0;
    if (rc)
        for (cfdb_omap_node *n = cfdb_omap_first(&rc->set.map); n; n = cfdb_omap_next(n)) {
            /* Transaction::addReadConflictRange: over-long bounds shortened, empty dropped */
            cfdb_key_range kr = { cfdb_truncate_range_key(n->key), cfdb_truncate_range_key(n->val.bytes) };
            if (cfdb_bytes_cmp(kr.begin, kr.end) < 0)
                reads[i++] = kr;
        }
    nr = i;
    if (n_writes)
        memcpy(ws, writes, n_writes * sizeof *ws);
    size_t nw = n_writes;
    if (!causal_write_risky && !cfdb_ranges_intersect(ws, nw, reads, nr)) {
        cfdb_bytes k, ka;
        if (cfdb_self_conflict_key(random16, arena, &k) || key_after(arena, k, &ka))
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        reads[nr].begin = k;
        reads[nr].end = ka;
        nr++;
        ws[nw].begin = k;
        ws[nw].end = ka;
        nw++;
    }
    *out_reads = reads;
    *n_reads = nr;
    *out_writes = ws;
    *n_out_writes = nw;
    return 0;
}

int cfdb_versionstamp_key_range(cfdb_bytes param, int64_t min_version, cfdb_bytes max_key, cfdb_arena *arena,
                                cfdb_bytes *begin, cfdb_bytes *end)
{
    if (param.len < 4)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    const uint8_t *t = param.ptr + param.len - 4;
    int32_t pos = (int32_t)((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24);
    uint32_t blen = param.len - 4;
    if (pos < 0 || (int64_t)pos + 10 > (int64_t)blen)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    uint8_t *b = cfdb_arena_alloc(arena, blen ? blen : 1);
    uint8_t *e = cfdb_arena_alloc(arena, (size_t)blen + 1);
    if (!b || !e)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    memcpy(b, param.ptr, blen);
    memcpy(e, param.ptr, blen);
    cfdb_place_versionstamp(b + pos, min_version, 0);
    memset(e + pos, 0xff, 10);
    e[blen] = 0;
    *begin = cfdb_bytes_make(b, blen);
    *end = bmin(cfdb_bytes_make(e, (size_t)blen + 1), max_key);
    return 0;
}
