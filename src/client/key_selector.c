#include "key_selector.h"

#include <string.h>

static const uint8_t all_end[2] = { 0xff, 0xff };

int cfdb_key_after(cfdb_arena *a, cfdb_bytes key, cfdb_bytes *out)
{
    if (cfdb_bytes_eq(key, cfdb_bytes_make(all_end, 2))) {
        *out = key;
        return 0;
    }
    uint8_t *p = cfdb_arena_alloc(a, (size_t)key.len + 1);
    if (!p)
        return -1;
    if (key.len)
        memcpy(p, key.ptr, key.len);
    p[key.len] = 0;
    *out = cfdb_bytes_make(p, (size_t)key.len + 1);
    return 0;
}

int cfdb_sel_remove_or_equal(cfdb_key_selector *s, cfdb_arena *a)
{
    if (!s->orEqual)
        return 0;
    if (cfdb_key_after(a, s->key, &s->key))
        return -1;
    s->orEqual = false;
    return 0;
}

bool cfdb_sel_native_shortcut(cfdb_key_selector *s, cfdb_bytes *result)
{
    if (cfdb_bytes_eq(s->key, cfdb_bytes_make(all_end, 2))) {
        if (s->offset > 0) {
            *result = cfdb_bytes_make(all_end, 2);
            return true;
        }
        s->orEqual = false;
    } else if (s->key.len == 0 && s->offset <= 0) {
        *result = cfdb_bytes_make(all_end, 0);
        return true;
    }
    return false;
}

bool cfdb_sel_range_trivially_empty(const cfdb_key_selector *begin, const cfdb_key_selector *end)
{
    return begin->offset >= end->offset && cfdb_bytes_cmp(begin->key, end->key) >= 0;
}

int cfdb_sel_resolve_start(cfdb_sel_resolver *r, cfdb_write_map *wm, cfdb_key_selector sel, cfdb_bytes max_key,
                           cfdb_arena *arena)
{
    memset(r, 0, sizeof *r);
    r->sel = sel;
    r->max_key = max_key;
    cfdb_bytes k = sel.key;
    if (sel.orEqual && cfdb_key_after(arena, sel.key, &k))
        return -1;
    static const uint8_t none = 0;
    cfdb_bytes all_begin = cfdb_bytes_make(&none, 0);
    if (sel.offset > 0) {
        r->want = (uint32_t)sel.offset;
        cfdb_bytes b = cfdb_bytes_cmp(k, max_key) < 0 ? k : max_key;
        cfdb_wm_range_start(&r->it, wm, b, max_key, false, cfdb_range_limits_make(sel.offset, -1), arena);
    } else {
        int64_t want = 1 - (int64_t)sel.offset;
        if (want > INT32_MAX)
            want = INT32_MAX;
        r->want = (uint32_t)want;
        cfdb_bytes e = cfdb_bytes_cmp(k, max_key) < 0 ? k : max_key;
        cfdb_wm_range_start(&r->it, wm, all_begin, e, true, cfdb_range_limits_make((int32_t)want, -1), arena);
    }
    return 0;
}

int cfdb_sel_resolve_advance(cfdb_sel_resolver *r)
{
    int rc = cfdb_wm_range_advance(&r->it);
    if (rc == CFDB_WM_RANGE_DONE) {
        if (r->it.count >= r->want && r->want > 0)
            r->result = r->it.rows[r->want - 1].key;
        else if (r->sel.offset > 0)
            r->result = r->max_key;
        else
            r->result = cfdb_bytes_make(all_end, 0);
    }
    return rc;
}

void cfdb_sel_resolve_feed(cfdb_sel_resolver *r, const cfdb_key_value *rows, size_t n, bool more)
{
    cfdb_wm_range_feed(&r->it, rows, n, more);
}

cfdb_bytes cfdb_sel_resolve_result(const cfdb_sel_resolver *r)
{
    return r->result;
}

void cfdb_sel_resolve_free(cfdb_sel_resolver *r)
{
    cfdb_wm_range_free(&r->it);
}
