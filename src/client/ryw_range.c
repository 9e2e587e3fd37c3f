#include "ryw_range.h"

#include <string.h>

#include "conflict_ranges.h"

int cfdb_ryw_range_start(cfdb_ryw_range *r, cfdb_write_map *wm, cfdb_key_selector begin, cfdb_key_selector end,
                         cfdb_range_limits limits, bool reverse, cfdb_bytes max_key, cfdb_arena *arena)
{
    memset(r, 0, sizeof *r);
    r->wm = wm;
    r->arena = arena;
    r->reverse = reverse;
    r->limits = limits;
    r->max_key = max_key;
    if (cfdb_sel_remove_or_equal(&begin, arena) || cfdb_sel_remove_or_equal(&end, arena))
        return -1;
    r->begin = begin;
    r->end = end;
    r->stage = CFDB_RYW_RANGE_RESOLVE_BEGIN;
    if (cfdb_sel_range_trivially_empty(&begin, &end))
        r->stage = CFDB_RYW_RANGE_FINISHED;
    return 0;
}

static void set_request_from_iter(cfdb_ryw_range *r, const cfdb_wm_range_iter *it)
{
    r->req_begin = it->req_begin;
    r->req_end = it->req_end;
    r->req_reverse = it->reverse;
}

/* Resolves one selector; *key receives the result when DONE. */
static int run_resolver(cfdb_ryw_range *r, cfdb_key_selector sel, cfdb_bytes *key)
{
    if (cfdb_sel_is_first_greater_or_equal(&sel)) {
        *key = cfdb_bytes_cmp(sel.key, r->max_key) > 0 ? r->max_key : sel.key;
        return CFDB_WM_RANGE_DONE;
    }
    if (!r->res_active) {
        if (cfdb_sel_resolve_start(&r->res, r->wm, sel, r->max_key, r->arena))
            return -1;
        r->res_active = true;
    }
    int rc = cfdb_sel_resolve_advance(&r->res);
    if (rc == CFDB_WM_RANGE_NEED_STORAGE) {
        set_request_from_iter(r, &r->res.it);
        return rc;
    }
    if (rc == CFDB_WM_RANGE_DONE) {
        *key = cfdb_sel_resolve_result(&r->res);
        if (key->len == 0)
            r->read_to_begin = true;
        if (cfdb_bytes_eq(*key, r->max_key))
            r->read_through_end = true;
        /* rows of the resolver live in its array: the key itself is in the arena */
        cfdb_sel_resolve_free(&r->res);
        r->res_active = false;
    }
    return rc;
}

int cfdb_ryw_range_advance(cfdb_ryw_range *r)
{
    int rc;
    for (;;) {
        switch (r->stage) {
        case CFDB_RYW_RANGE_RESOLVE_BEGIN:
            rc = run_resolver(r, r->begin, &r->begin_key);
            if (rc != CFDB_WM_RANGE_DONE)
                return rc;
            r->stage = CFDB_RYW_RANGE_RESOLVE_END;
            break;
        case CFDB_RYW_RANGE_RESOLVE_END:
            rc = run_resolver(r, r->end, &r->end_key);
            if (rc != CFDB_WM_RANGE_DONE)
                return rc;
            r->stage = CFDB_RYW_RANGE_READ;
            if (cfdb_bytes_cmp(r->begin_key, r->end_key) >= 0) {
                r->stage = CFDB_RYW_RANGE_FINISHED;
                break;
            }
            cfdb_wm_range_start(&r->it, r->wm, r->begin_key, r->end_key, r->reverse, r->limits, r->arena);
            r->it_active = true;
            break;
        case CFDB_RYW_RANGE_READ:
            rc = cfdb_wm_range_advance(&r->it);
            if (rc == CFDB_WM_RANGE_NEED_STORAGE) {
                set_request_from_iter(r, &r->it);
                return rc;
            }
            if (rc != CFDB_WM_RANGE_DONE)
                return rc;
            r->rows = r->it.rows;
            r->count = r->it.count;
            r->more = r->it.more;
            r->stage = CFDB_RYW_RANGE_FINISHED;
            return CFDB_WM_RANGE_DONE;
        case CFDB_RYW_RANGE_FINISHED:
        default:
            return CFDB_WM_RANGE_DONE;
        }
    }
}

void cfdb_ryw_range_feed(cfdb_ryw_range *r, const cfdb_key_value *rows, size_t n, bool more)
{
    if (r->stage == CFDB_RYW_RANGE_READ)
        cfdb_wm_range_feed(&r->it, rows, n, more);
    else if (r->res_active)
        cfdb_sel_resolve_feed(&r->res, rows, n, more);
}

int cfdb_ryw_range_conflict(const cfdb_ryw_range *r, cfdb_bytes *begin, cfdb_bytes *end)
{
    return cfdb_get_range_conflict_range(&r->begin, &r->end, r->reverse, r->rows, r->count, r->more,
                                         r->read_to_begin, r->read_through_end && !r->more, r->max_key, r->arena,
                                         begin, end);
}

void cfdb_ryw_range_free(cfdb_ryw_range *r)
{
    if (r->res_active)
        cfdb_sel_resolve_free(&r->res);
    if (r->it_active)
        cfdb_wm_range_free(&r->it);
    r->res_active = r->it_active = false;
    r->rows = NULL;
}
