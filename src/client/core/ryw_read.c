/* Read-your-writes range reads and key selectors: see ryw_read.h. The structure
 * follows RYWImpl in fdbclient/ReadYourWrites.actor.cpp (7.3.77) step by step, since
 * every decision there shows in the requests libfdb_c sends. */
#include "ryw_read.h"

#include <limits.h>
#include <string.h>

#include "error_codes.h"
#include "key_selector.h"

#define REPLY_BYTE_LIMIT 80000 /* CLIENT_KNOBS->REPLY_BYTE_LIMIT */

enum { STEP_DONE = 0, STEP_NEED_READ = 1, STEP_PUSH = 2 };

static const cfdb_bytes k_empty = { (const uint8_t *)"", 0 };
static const cfdb_bytes k_all_end = { (const uint8_t *)"\xff\xff", 2 };

/* ---- GetRangeLimits ---- */

bool cfdb_limits_reached(const cfdb_range_limits *l)
{
    return l->rows == 0 || (l->bytes == 0 && l->min_rows == 0);
}

void cfdb_limits_decrement_row(cfdb_range_limits *l, const cfdb_key_value *kv)
{
    l->min_rows = l->min_rows > 0 ? l->min_rows - 1 : 0;
    if (l->rows >= 0)
        l->rows--;
    if (l->bytes >= 0) {
        int64_t b = (int64_t)l->bytes - 8 - kv->key.len - kv->value.len;
        l->bytes = b > 0 ? (int32_t)b : 0;
    }
}

void cfdb_limits_decrement_rows(cfdb_range_limits *l, const cfdb_key_value *rows, size_t n)
{
    if (l->rows >= 0)
        l->rows -= (int32_t)n;
    l->min_rows = l->min_rows > (int32_t)n ? l->min_rows - (int32_t)n : 0;
    if (l->bytes >= 0) {
        /* VectorRef::expectedSize + 8 per row, as GetRangeLimits::decrement */
        int64_t b = l->bytes;
        for (size_t i = 0; i < n; i++)
            b -= 8 + (int64_t)rows[i].key.len + rows[i].value.len;
        l->bytes = b > 0 ? (int32_t)b : 0;
    }
}

static bool has_byte_limit(const cfdb_range_limits *l)
{
    return l->bytes >= 0;
}
static bool has_row_limit(const cfdb_range_limits *l)
{
    return l->rows >= 0;
}

/* RYWImpl::setRequestLimits */
static void set_request_limits(cfdb_range_limits *req, int64_t additional, int offset, int request_count)
{
    int64_t m = 1 + additional > offset ? 1 + additional : offset;
    req->min_rows = (int32_t)(m < INT_MAX ? m : INT_MAX);
    if (has_row_limit(req)) {
        int64_t r = (req->rows > 1 ? req->rows : 1) + additional;
        if (r < offset)
            r = offset;
        req->rows = (int32_t)(r < INT_MAX ? r : INT_MAX);
    }
    if (req->bytes == 0) {
        req->bytes = -1;
        if (!has_row_limit(req)) {
            int64_t r = 1 + additional;
            if (r < offset)
                r = offset;
            req->rows = (int32_t)(r < INT_MAX ? r : INT_MAX);
        }
    } else if (has_byte_limit(req)) {
        int sh = request_count < 20 ? request_count : 20;
        int64_t b = (int64_t)req->bytes << sh;
        req->bytes = (int32_t)(b < REPLY_BYTE_LIMIT ? b : REPLY_BYTE_LIMIT);
    }
}

/* ---- segments ---- */

typedef struct walk {
    cfdb_ryw_read *r;
    int err; /* accessed_unreadable met where libfdb_c throws it, or 4000 unknown_error (out of memory) */
} walk;

static bool unreadable(const cfdb_ryw_iter *it)
{
    return it->unreadable;
}
/* RYWIterator::type(): throws accessed_unreadable on an unreadable segment */
static cfdb_ryw_seg seg_type(walk *w, const cfdb_ryw_iter *it)
{
    if (it->unreadable && !w->err)
        w->err = CFDB_ERR_ACCESSED_UNREADABLE;
    return it->type;
}
static bool is_unknown(walk *w, const cfdb_ryw_iter *it)
{
    return seg_type(w, it) == CFDB_RYW_UNKNOWN;
}
static bool is_empty(walk *w, const cfdb_ryw_iter *it)
{
    return seg_type(w, it) == CFDB_RYW_EMPTY;
}
static bool is_kv(walk *w, const cfdb_ryw_iter *it)
{
    return seg_type(w, it) == CFDB_RYW_KV;
}
static void next(walk *w, cfdb_ryw_iter *it)
{
    if (cfdb_ryw_iter_next(it))
        w->err = CFDB_ERR_UNKNOWN_ERROR;
}
static void prev(walk *w, cfdb_ryw_iter *it)
{
    if (cfdb_ryw_iter_prev(it))
        w->err = CFDB_ERR_UNKNOWN_ERROR;
}
static void skip(walk *w, cfdb_ryw_iter *it, cfdb_bytes k)
{
    if (cfdb_ryw_iter_skip(it, cfdb_xkey_of(k)))
        w->err = CFDB_ERR_UNKNOWN_ERROR;
}
static cfdb_bytes materialize(walk *w, cfdb_xkey x)
{
    cfdb_bytes b = { NULL, 0 };
    if (cfdb_xkey_bytes(x, w->r->arena, &b))
        w->err = CFDB_ERR_UNKNOWN_ERROR;
    return b;
}
static int kcmp(cfdb_bytes a, cfdb_bytes b)
{
    return cfdb_bytes_cmp(a, b);
}
static int xcmp_key(cfdb_xkey a, cfdb_bytes b)
{
    return cfdb_xkey_cmp(a, cfdb_xkey_of(b));
}
static bool is_fge(const cfdb_key_selector *s)
{
    return cfdb_sel_is_first_greater_or_equal(s);
}

/* RYWImpl::resolveKeySelectorFromCache */
static void resolve_from_cache(walk *w, cfdb_key_selector *key, cfdb_ryw_iter *it, bool *read_to_begin,
                               bool *read_through_end, int *actual_offset)
{
    cfdb_ryw_read *r = w->r;
    if (cfdb_sel_remove_or_equal(key, r->arena)) {
        w->err = CFDB_ERR_UNKNOWN_ERROR;
        return;
    }
    bool already_exhausted = key->offset == 1;
    skip(w, it, key->key);
    if (key->offset <= 0 && xcmp_key(it->begin, key->key) == 0 && key->key.len != 0)
        prev(w, it);
    cfdb_xkey keykey = cfdb_xkey_of(key->key);
    bool need_copy = false;
    cfdb_xkey maxk = cfdb_xkey_of(r->max_key);
    while (!w->err && key->offset > 1 && !unreadable(it) && !is_unknown(w, it) && cfdb_xkey_cmp(it->end, maxk) < 0) {
        if (is_kv(w, it))
            key->offset--;
        next(w, it);
        keykey = it->begin;
        need_copy = true;
    }
    while (!w->err && key->offset < 1 && !unreadable(it) && !is_unknown(w, it) && xcmp_key(it->begin, k_empty) != 0) {
        if (is_kv(w, it)) {
            key->offset++;
            if (key->offset == 1) {
                keykey = it->begin;
                need_copy = true;
                break;
            }
        }
        prev(w, it);
        keykey = it->end;
        need_copy = true;
    }
    if (!already_exhausted)
        *actual_offset = key->offset;
    if (!unreadable(it) && !is_unknown(w, it) && key->offset < 1) {
        *read_to_begin = true;
        key->key = k_empty;
        key->offset = 1;
        return;
    }
    if (!unreadable(it) && !is_unknown(w, it) && key->offset > 1) {
        *read_through_end = true;
        key->key = r->max_key;
        key->offset = 1;
        return;
    }
    while (!w->err && !unreadable(it) && is_empty(w, it) && cfdb_xkey_cmp(it->end, maxk) < 0) {
        next(w, it);
        keykey = it->begin;
        need_copy = true;
    }
    if (need_copy)
        key->key = materialize(w, keykey);
}

/* RYWImpl::skipUncached */
static int skip_uncached(walk *w, cfdb_ryw_iter *it, const cfdb_ryw_iter *end, int limit)
{
    cfdb_xkey b = it->begin, e = it->end;
    int single = 0;
    while (!w->err && !cfdb_ryw_iter_eq(it, end) && --limit >= 0) {
        if (unreadable(it) || is_empty(w, it)) {
            if (unreadable(it) || !cfdb_xkey_is_key_after(e, b)) {
                while (!w->err && (unreadable(it) || !is_unknown(w, it)))
                    prev(w, it);
                return single;
            }
            single++;
        } else {
            b = e;
        }
        next(w, it);
        e = it->end;
    }
    while (!w->err && (unreadable(it) || !is_unknown(w, it))) {
        prev(w, it);
    }
    return single;
}

/* RYWImpl::skipUncachedBack */
static int skip_uncached_back(walk *w, cfdb_ryw_iter *it, const cfdb_ryw_iter *end, int limit)
{
    cfdb_xkey b = it->begin, e = it->end;
    int single = 0;
    while (!w->err && !cfdb_ryw_iter_eq(it, end) && --limit >= 0) {
        if (unreadable(it) || is_empty(w, it)) {
            if (unreadable(it) || !cfdb_xkey_is_key_after(e, b)) {
                while (!w->err && (unreadable(it) || !is_unknown(w, it)))
                    next(w, it);
                return single;
            }
            single++;
        } else {
            e = b;
        }
        prev(w, it);
        b = it->begin;
    }
    while (!w->err && (unreadable(it) || !is_unknown(w, it)))
        next(w, it);
    return single;
}

/* RYWImpl::countUncached (it is a copy) */
static int count_uncached(walk *w, cfdb_ryw_iter it, cfdb_bytes max_key, int max_clears)
{
    if (max_clears <= 0)
        return 0;
    cfdb_xkey b = it.begin, e = it.end;
    int single = 0;
    while (!w->err && xcmp_key(e, max_key) < 0) {
        if (unreadable(&it) || is_empty(w, &it)) {
            if (unreadable(&it) || !cfdb_xkey_is_key_after(e, b))
                return single;
            if (++single >= max_clears)
                return max_clears;
        } else {
            b = e;
        }
        next(w, &it);
        e = it.end;
    }
    return single;
}

/* RYWImpl::countUncachedBack */
static int count_uncached_back(walk *w, cfdb_ryw_iter it, int max_clears)
{
    if (max_clears <= 0)
        return 0;
    cfdb_xkey b = it.begin, e = it.end;
    int single = 0;
    while (!w->err && xcmp_key(b, k_empty) > 0) {
        if (unreadable(&it) || is_empty(w, &it)) {
            if (unreadable(&it) || !cfdb_xkey_is_key_after(e, b))
                return single;
            if (++single >= max_clears)
                return max_clears;
        } else {
            e = b;
        }
        prev(w, &it);
        b = it.begin;
    }
    return single;
}

/* ---- results ---- */

static int append_rows(walk *w, cfdb_ryw_frame *f, const cfdb_key_value *rows, size_t n, bool reversed)
{
    if (f->n + n > f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        while (cap < f->n + n)
            cap *= 2;
        cfdb_key_value *na = cfdb_arena_alloc(w->r->arena, cap * sizeof *na);
        if (!na) {
            w->err = CFDB_ERR_UNKNOWN_ERROR;
            return CFDB_ERR_UNKNOWN_ERROR;
        }
        if (f->n)
            memcpy(na, f->rows, f->n * sizeof *na);
        f->rows = na;
        f->cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        f->rows[f->n + i] = reversed ? rows[n - 1 - i] : rows[i];
    f->n += n;
    return 0;
}

static int finish_empty(cfdb_ryw_frame *f, bool read_to_begin, bool read_through_end)
{
    f->n = 0;
    f->more = false;
    f->read_to_begin = read_to_begin;
    f->read_through_end = read_through_end;
    return STEP_DONE;
}

/* The nested get_key a frame waits for. */
static void push_get_key(cfdb_ryw_read *r, cfdb_key_selector sel);

/* RYWImpl::getKnownKeyRange: what a forward NativeAPI read proved about storage. */
static void known_range_fwd(walk *w, const cfdb_native_result *d, cfdb_key_selector begin, cfdb_key_selector end,
                            cfdb_bytes *kb, cfdb_xkey *ke)
{
    cfdb_bytes b = begin.offset <= 1 ? begin.key : k_all_end;
    cfdb_xkey e = cfdb_xkey_of(!d->more && end.offset >= 1 ? end.key : k_empty);
    if (d->read_to_begin)
        b = k_empty;
    if (d->read_through_end)
        e = cfdb_xkey_of(k_all_end);
    if (d->n) {
        if (kcmp(d->rows[0].key, b) < 0)
            b = d->rows[0].key;
        if (d->has_read_through) {
            if (xcmp_key(e, d->read_through) < 0)
                e = cfdb_xkey_of(d->read_through);
        } else {
            cfdb_xkey last = cfdb_xkey_of(d->rows[d->n - 1].key);
            if (!(!d->more && cfdb_xkey_cmp(last, e) < 0))
                e = cfdb_xkey_after(last);
        }
    }
    (void)w;
    *kb = b;
    *ke = e;
}

/* RYWImpl::getKnownKeyRangeBack (rows in descending order) */
static void known_range_back(walk *w, const cfdb_native_result *d, cfdb_key_selector begin, cfdb_key_selector end,
                             cfdb_bytes *kb, cfdb_xkey *ke)
{
    cfdb_bytes b = !d->more && begin.offset <= 1 ? begin.key : k_all_end;
    cfdb_xkey e = cfdb_xkey_of(end.offset >= 1 ? end.key : k_empty);
    if (d->read_to_begin)
        b = k_empty;
    if (d->read_through_end)
        e = cfdb_xkey_of(k_all_end);
    if (d->n) {
        if (d->has_read_through) {
            if (kcmp(d->read_through, b) < 0)
                b = d->read_through;
        } else {
            cfdb_bytes lowest = d->rows[d->n - 1].key;
            if (!(!d->more && kcmp(lowest, b) > 0))
                b = lowest;
        }
        cfdb_xkey top = cfdb_xkey_of(d->rows[0].key);
        if (!(cfdb_xkey_cmp(top, e) < 0))
            e = cfdb_xkey_after(top);
    }
    (void)w;
    *kb = b;
    *ke = e;
}

static void cache_insert(walk *w, cfdb_bytes b, cfdb_xkey e, const cfdb_native_result *d, bool reversed)
{
    cfdb_ryw_read *r = w->r;
    if (xcmp_key(e, b) <= 0)
        return;
    const cfdb_key_value *rows = d->rows;
    if (reversed && d->n > 1) {
        /* the ascending copy is kept by the cache when the rows are */
        cfdb_arena *a = d->rows_in_cache_arena ? r->cache->arena : r->arena;
        cfdb_key_value *asc = cfdb_arena_alloc(a, d->n * sizeof *asc);
        if (!asc) {
            w->err = CFDB_ERR_UNKNOWN_ERROR;
            return;
        }
        for (size_t i = 0; i < d->n; i++)
            asc[i] = d->rows[d->n - 1 - i];
        rows = asc;
    }
    if (cfdb_snap_insert_range(r->cache, b, e, rows, d->n, d->rows_in_cache_arena))
        w->err = CFDB_ERR_UNKNOWN_ERROR;
}

static void emit_read(cfdb_ryw_read *r, cfdb_key_selector b, cfdb_key_selector e, cfdb_range_limits l, bool reverse)
{
    r->req_begin = b;
    r->req_end = e;
    r->req_limits = l;
    r->req_reverse = reverse;
}

/* ---- forward: RYWImpl::getRangeValue ---- */

static int run_forward(walk *w, cfdb_ryw_frame *f)
{
    cfdb_ryw_read *r = w->r;
    switch (f->pc) {
    case 1: goto after_first_key;
    case 2: goto after_read;
    case 3: goto after_last_key;
    default: break;
    }
    f->it_end = f->it;
    resolve_from_cache(w, &f->begin, &f->it, &f->read_to_begin, &f->read_through_end, &f->actual_begin_offset);
    resolve_from_cache(w, &f->end, &f->it_end, &f->read_to_begin, &f->read_through_end, &f->actual_end_offset);
    if (w->err)
        return w->err;
    if (f->actual_begin_offset >= f->actual_end_offset && kcmp(f->begin.key, f->end.key) >= 0)
        return finish_empty(f, false, false);
    if ((is_fge(&f->begin) && kcmp(f->begin.key, r->max_key) == 0) ||
        (is_fge(&f->end) && f->end.key.len == 0))
        return finish_empty(f, f->read_to_begin, f->read_through_end);
    if (!is_fge(&f->end) && kcmp(f->begin.key, f->end.key) > 0) {
        f->pc = 1;
        push_get_key(r, f->end);
        return STEP_PUSH;
    }
    goto loop;

after_first_key : {
    cfdb_bytes resolved = r->f[r->depth + 1].key;
    if (resolved.len == 0)
        f->read_to_begin = true;
    if (kcmp(resolved, r->max_key) == 0)
        f->read_through_end = true;
    if (kcmp(f->begin.key, resolved) >= 0 && !cfdb_sel_is_backward(&f->begin))
        return finish_empty(f, false, false);
    if (resolved.len == 0)
        return finish_empty(f, f->read_to_begin, f->read_through_end);
    resolve_from_cache(w, &f->begin, &f->it, &f->read_to_begin, &f->read_through_end, &f->actual_begin_offset);
    resolve_from_cache(w, &f->end, &f->it_end, &f->read_to_begin, &f->read_through_end, &f->actual_end_offset);
    if (w->err)
        return w->err;
}

loop:
    for (;;) {
        if (w->err)
            return w->err;
        if (!f->n && f->actual_begin_offset >= f->actual_end_offset && kcmp(f->begin.key, f->end.key) >= 0)
            return finish_empty(f, false, false);
        if (f->end.offset <= 1 && f->end.key.len == 0)
            return finish_empty(f, f->read_to_begin, f->read_through_end);
        if ((f->begin.offset >= f->end.offset && kcmp(f->begin.key, f->end.key) >= 0) ||
            (f->begin.offset >= 1 && kcmp(f->begin.key, r->max_key) >= 0)) {
            if (is_fge(&f->end) || !f->n)
                break;
            f->pc = 3;
            push_get_key(r, f->end);
            return STEP_PUSH;
        }
        if (!unreadable(&f->it) && !is_unknown(w, &f->it) && cfdb_xkey_cmp(f->it.begin, f->it_end.begin) > 0) {
            if (is_fge(&f->end))
                break;
            return finish_empty(f, f->read_to_begin, f->read_through_end);
        }
        if (cfdb_limits_reached(&f->limits) && f->items_past >= 1 - f->end.offset)
            break;
        if (cfdb_ryw_iter_eq(&f->it, &f->it_end) &&
            ((!unreadable(&f->it) && !is_unknown(w, &f->it)) ||
             (f->begin.offset > 0 && is_fge(&f->end) && xcmp_key(f->it.begin, f->end.key) == 0)))
            break;
        bool unknown = is_unknown(w, &f->it); /* throws on an unreadable segment */
        if (w->err)
            return w->err;
        if (unknown) {
            if (has_byte_limit(&f->limits) && f->limits.min_rows == 0 && f->n && f->items_past >= 1 - f->end.offset) {
                f->more = true;
                break;
            }
            cfdb_ryw_iter uc_end = f->it;
            int single = 0;
            int clear_limit = f->request_count ? 1 << (f->request_count < 20 ? f->request_count : 20) : 0;
            if (cfdb_xkey_cmp(f->it.begin, f->it_end.begin) < 0) {
                int s = skip_uncached(w, &uc_end, &f->it_end, clear_limit + 100);
                single = s < clear_limit ? s : clear_limit;
            }
            if (!cfdb_ryw_iter_eq(&uc_end, &f->it_end)) {
                f->read_end = cfdb_first_greater_or_equal(materialize(w, uc_end.end));
                if (f->end.offset < 1)
                    f->additional_rows += 1 - f->end.offset;
            } else if (f->end.offset < 1) {
                f->read_end = cfdb_first_greater_or_equal(f->end.key);
                f->additional_rows += 1 - f->end.offset;
            } else {
                f->read_end = f->end;
                if (f->end.offset > 1) {
                    single += count_uncached(w, uc_end, r->max_key, clear_limit - single);
                    f->read_end.offset += single;
                }
            }
            f->additional_rows += single;
            if (is_fge(&f->begin)) {
                cfdb_bytes k = xcmp_key(f->it.begin, f->begin.key) > 0 ? materialize(w, f->it.begin) : f->begin.key;
                f->begin = cfdb_first_greater_or_equal(k);
                f->read_begin = f->begin;
            } else if (f->begin.offset > 1) {
                f->read_begin = cfdb_first_greater_or_equal(f->begin.key);
                f->additional_rows += f->begin.offset - 1;
            } else {
                f->read_begin = f->begin;
                single = count_uncached_back(w, f->it, clear_limit);
                f->read_begin.offset -= single;
                f->additional_rows += single;
            }
            if (kcmp(f->read_end.key, f->read_begin.key) < 0)
                f->read_end.key = f->read_begin.key;
            if (w->err)
                return w->err;
            cfdb_range_limits req = f->limits;
            set_request_limits(&req, f->additional_rows, 2 - f->read_begin.offset, f->request_count);
            f->request_count++;
            f->additional_rows = 0;
            emit_read(r, f->read_begin, f->read_end, req, false);
            f->pc = 2;
            return STEP_NEED_READ;
        after_read : {
            cfdb_bytes kb;
            cfdb_xkey ke;
            known_range_fwd(w, r->fed, f->read_begin, f->read_end, &kb, &ke);
            cache_insert(w, kb, ke, r->fed, false);
            resolve_from_cache(w, &f->begin, &f->it, &f->read_to_begin, &f->read_through_end,
                               &f->actual_begin_offset);
            resolve_from_cache(w, &f->end, &f->it_end, &f->read_to_begin, &f->read_through_end,
                               &f->actual_end_offset);
        }
        } else if (is_kv(w, &f->it)) {
            cfdb_key_value one;
            const cfdb_key_value *rows;
            size_t n;
            bool present;
            cfdb_xkey bound = cfdb_xkey_of(is_fge(&f->end) ? f->end.key : r->max_key);
            int rc = cfdb_ryw_iter_run(&f->it, bound, false, &one, &rows, &n, &present);
            if (rc)
                return rc;
            if (present) {
                size_t count = 0;
                for (; count < n && !cfdb_limits_reached(&f->limits); count++)
                    cfdb_limits_decrement_row(&f->limits, &rows[count]);
                f->items_past += (int)(n - count);
                if (count && append_rows(w, f, rows, count, false))
                    return CFDB_ERR_UNKNOWN_ERROR;
            }
            next(w, &f->it);
        } else {
            next(w, &f->it);
        }
    }
    if (0) {
    after_last_key : {
        cfdb_bytes resolved = r->f[r->depth + 1].key;
        if (resolved.len == 0)
            f->read_to_begin = true;
        if (kcmp(resolved, r->max_key) == 0)
            f->read_through_end = true;
        f->end = cfdb_first_greater_or_equal(resolved);
    }
    }
    if (w->err)
        return w->err;
    f->more = f->more || cfdb_limits_reached(&f->limits);
    if (is_fge(&f->end)) {
        size_t keep = 0;
        while (keep < f->n && kcmp(f->rows[keep].key, f->end.key) < 0)
            keep++;
        if (keep < f->n)
            f->more = false;
        f->n = keep;
    }
    f->read_through_end = !f->more && f->read_through_end;
    return STEP_DONE;
}

/* ---- reverse: RYWImpl::getRangeValueBack ---- */

static int run_backward(walk *w, cfdb_ryw_frame *f)
{
    cfdb_ryw_read *r = w->r;
    switch (f->pc) {
    case 1: goto after_first_key;
    case 2: goto after_read;
    case 3: goto after_last_key;
    default: break;
    }
    f->it_end = f->it;
    resolve_from_cache(w, &f->end, &f->it, &f->read_to_begin, &f->read_through_end, &f->actual_end_offset);
    resolve_from_cache(w, &f->begin, &f->it_end, &f->read_to_begin, &f->read_through_end, &f->actual_begin_offset);
    if (w->err)
        return w->err;
    if (f->actual_begin_offset >= f->actual_end_offset && kcmp(f->begin.key, f->end.key) >= 0)
        return finish_empty(f, false, false);
    if ((is_fge(&f->begin) && kcmp(f->begin.key, r->max_key) == 0) ||
        (is_fge(&f->end) && f->end.key.len == 0))
        return finish_empty(f, f->read_to_begin, f->read_through_end);
    if (!is_fge(&f->begin) && kcmp(f->begin.key, f->end.key) > 0) {
        f->pc = 1;
        push_get_key(r, f->begin);
        return STEP_PUSH;
    }
    goto loop;

after_first_key : {
    cfdb_bytes resolved = r->f[r->depth + 1].key;
    if (resolved.len == 0)
        f->read_to_begin = true;
    if (kcmp(resolved, r->max_key) == 0)
        f->read_through_end = true;
    if (kcmp(resolved, f->end.key) >= 0 && f->end.offset <= 1)
        return finish_empty(f, false, false);
    if (kcmp(resolved, r->max_key) == 0)
        return finish_empty(f, f->read_to_begin, f->read_through_end);
    resolve_from_cache(w, &f->end, &f->it, &f->read_to_begin, &f->read_through_end, &f->actual_end_offset);
    resolve_from_cache(w, &f->begin, &f->it_end, &f->read_to_begin, &f->read_through_end, &f->actual_begin_offset);
    if (w->err)
        return w->err;
}

loop:
    for (;;) {
        if (w->err)
            return w->err;
        if (!f->n && f->actual_begin_offset >= f->actual_end_offset && kcmp(f->begin.key, f->end.key) >= 0)
            return finish_empty(f, false, false);
        if (!cfdb_sel_is_backward(&f->begin) && kcmp(f->begin.key, r->max_key) >= 0)
            return finish_empty(f, f->read_to_begin, f->read_through_end);
        if ((f->begin.offset >= f->end.offset && kcmp(f->begin.key, f->end.key) >= 0) ||
            (f->end.offset <= 1 && f->end.key.len == 0)) {
            if (is_fge(&f->begin) || !f->n)
                break;
            f->pc = 3;
            push_get_key(r, f->begin);
            return STEP_PUSH;
        }
        if (f->items_past >= f->begin.offset - 1 && !unreadable(&f->it) && !is_unknown(w, &f->it) &&
            cfdb_xkey_cmp(f->it.begin, f->it_end.begin) < 0) {
            if (is_fge(&f->begin))
                break;
            return finish_empty(f, f->read_to_begin, f->read_through_end);
        }
        if (cfdb_limits_reached(&f->limits) && f->items_past >= f->begin.offset - 1)
            break;
        if (is_fge(&f->end) && xcmp_key(f->it.begin, f->end.key) == 0) {
            if (f->items_past >= f->begin.offset - 1 && cfdb_ryw_iter_eq(&f->it, &f->it_end))
                break;
            prev(w, &f->it);
        }
        bool unknown = is_unknown(w, &f->it); /* throws on an unreadable segment */
        if (w->err)
            return w->err;
        if (unknown) {
            if (has_byte_limit(&f->limits) && f->n && f->items_past >= f->begin.offset - 1) {
                f->more = true;
                break;
            }
            cfdb_ryw_iter uc_end = f->it;
            int single = 0;
            int clear_limit = f->request_count ? 1 << (f->request_count < 20 ? f->request_count : 20) : 0;
            if (cfdb_xkey_cmp(f->it.begin, f->it_end.begin) > 0) {
                int s = skip_uncached_back(w, &uc_end, &f->it_end, clear_limit + 100);
                single = s < clear_limit ? s : clear_limit;
            }
            if (!cfdb_ryw_iter_eq(&uc_end, &f->it_end)) {
                f->read_begin = cfdb_first_greater_or_equal(materialize(w, uc_end.begin));
                if (f->begin.offset > 1)
                    f->additional_rows += f->begin.offset - 1;
            } else if (f->begin.offset > 1) {
                f->read_begin = cfdb_first_greater_or_equal(f->begin.key);
                f->additional_rows += f->begin.offset - 1;
            } else {
                f->read_begin = f->begin;
                if (f->begin.offset < 1) {
                    single += count_uncached_back(w, uc_end, clear_limit - single);
                    f->read_begin.offset -= single;
                }
            }
            f->additional_rows += single;
            if (is_fge(&f->end)) {
                cfdb_bytes k = xcmp_key(f->it.end, f->end.key) < 0 ? materialize(w, f->it.end) : f->end.key;
                f->end = cfdb_first_greater_or_equal(k);
                f->read_end = f->end;
            } else if (f->end.offset < 1) {
                f->read_end = cfdb_first_greater_or_equal(f->end.key);
                f->additional_rows += 1 - f->end.offset;
            } else {
                f->read_end = f->end;
                single = count_uncached(w, f->it, r->max_key, clear_limit);
                f->read_end.offset += single;
                f->additional_rows += single;
            }
            if (kcmp(f->read_begin.key, f->read_end.key) > 0)
                f->read_begin.key = f->read_end.key;
            if (w->err)
                return w->err;
            cfdb_range_limits req = f->limits;
            set_request_limits(&req, f->additional_rows, f->read_end.offset, f->request_count);
            f->request_count++;
            f->additional_rows = 0;
            emit_read(r, f->read_begin, f->read_end, req, true);
            f->pc = 2;
            return STEP_NEED_READ;
        after_read : {
            cfdb_bytes kb;
            cfdb_xkey ke;
            known_range_back(w, r->fed, f->read_begin, f->read_end, &kb, &ke);
            cache_insert(w, kb, ke, r->fed, true);
            resolve_from_cache(w, &f->end, &f->it, &f->read_to_begin, &f->read_through_end, &f->actual_end_offset);
            resolve_from_cache(w, &f->begin, &f->it_end, &f->read_to_begin, &f->read_through_end,
                               &f->actual_begin_offset);
        }
        } else {
            if (is_kv(w, &f->it)) {
                cfdb_key_value one;
                const cfdb_key_value *rows;
                size_t n;
                bool present;
                int rc = cfdb_ryw_iter_kv(&f->it, &one, &present);
                if (rc)
                    return rc;
                if (present) {
                    cfdb_xkey bound = cfdb_xkey_of(is_fge(&f->begin) ? f->begin.key : k_empty);
                    rc = cfdb_ryw_iter_run(&f->it, bound, true, &one, &rows, &n, &present);
                    if (rc)
                        return rc;
                    size_t count = 0;
                    for (; count < n && !cfdb_limits_reached(&f->limits); count++)
                        cfdb_limits_decrement_row(&f->limits, &rows[n - count - 1]);
                    f->items_past += (int)(n - count);
                    if (count && append_rows(w, f, rows + (n - count), count, true))
                        return CFDB_ERR_UNKNOWN_ERROR;
                }
            }
            if (w->err)
                return w->err;
            if (cfdb_ryw_iter_eq(&f->it, &f->it_end))
                break;
            prev(w, &f->it);
        }
    }
    if (0) {
    after_last_key : {
        cfdb_bytes resolved = r->f[r->depth + 1].key;
        if (resolved.len == 0)
            f->read_to_begin = true;
        if (kcmp(resolved, r->max_key) == 0)
            f->read_through_end = true;
        f->begin = cfdb_first_greater_or_equal(resolved);
    }
    }
    if (w->err)
        return w->err;
    f->more = f->more || cfdb_limits_reached(&f->limits);
    if (is_fge(&f->begin)) {
        /* rows are descending: keep those >= begin */
        size_t keep = 0;
        while (keep < f->n && kcmp(f->rows[keep].key, f->begin.key) >= 0)
            keep++;
        if (keep < f->n)
            f->more = false;
        f->n = keep;
    }
    f->read_to_begin = !f->more && f->read_to_begin;
    return STEP_DONE;
}

/* ---- frames ---- */

static void frame_init(cfdb_ryw_read *r, cfdb_ryw_frame *f, cfdb_key_selector begin, cfdb_key_selector end,
                       cfdb_range_limits limits, bool reverse)
{
    memset(f, 0, sizeof *f);
    f->begin = begin;
    f->end = end;
    f->limits = limits;
    f->reverse = reverse;
    f->actual_begin_offset = begin.offset;
    f->actual_end_offset = end.offset;
    cfdb_ryw_iter_init(&f->it, r->cache, r->wm, r->arena);
}

/* read(GetKeyReq): a range read of one row from the selector outward */
static void frame_init_key(cfdb_ryw_read *r, cfdb_ryw_frame *f, cfdb_key_selector sel)
{
    cfdb_range_limits one = { 1, -1, 1 };
    if (sel.offset > 0) {
        frame_init(r, f, sel, cfdb_first_greater_or_equal(r->max_key), one, false);
        f->get_key_back = false;
    } else {
        sel.offset++;
        frame_init(r, f, cfdb_first_greater_or_equal(k_empty), sel, one, true);
        f->get_key_back = true;
    }
    f->get_key = true;
}

static void push_get_key(cfdb_ryw_read *r, cfdb_key_selector sel)
{
    frame_init_key(r, &r->f[r->depth + 1], sel);
    r->depth++;
}

/* The key a finished get_key frame answers. */
static cfdb_bytes frame_key(const cfdb_ryw_read *r, const cfdb_ryw_frame *f)
{
    if (!f->get_key_back) {
        if (f->read_to_begin)
            return k_empty;
        if (f->read_through_end || !f->n)
            return r->max_key;
        return f->rows[0].key;
    }
    if (f->read_through_end)
        return r->max_key;
    if (f->read_to_begin || !f->n)
        return k_empty;
    return f->rows[0].key;
}

static void read_init(cfdb_ryw_read *r, cfdb_snap_cache *cache, cfdb_write_map *wm, cfdb_arena *arena,
                      cfdb_bytes max_key)
{
    memset(r, 0, sizeof *r);
    r->cache = cache;
    r->wm = wm;
    r->arena = arena;
    r->max_key = max_key;
}

void cfdb_ryw_read_range(cfdb_ryw_read *r, cfdb_snap_cache *cache, cfdb_write_map *wm, cfdb_arena *arena,
                         cfdb_bytes max_key, cfdb_key_selector begin, cfdb_key_selector end,
                         cfdb_range_limits limits, bool reverse)
{
    read_init(r, cache, wm, arena, max_key);
    frame_init(r, &r->f[0], begin, end, limits, reverse);
}

void cfdb_ryw_read_key(cfdb_ryw_read *r, cfdb_snap_cache *cache, cfdb_write_map *wm, cfdb_arena *arena,
                       cfdb_bytes max_key, cfdb_key_selector sel)
{
    read_init(r, cache, wm, arena, max_key);
    frame_init_key(r, &r->f[0], sel);
}

void cfdb_ryw_read_feed(cfdb_ryw_read *r, const cfdb_native_result *res)
{
    r->fed = res;
}

int cfdb_ryw_read_advance(cfdb_ryw_read *r)
{
    for (;;) {
        cfdb_ryw_frame *f = &r->f[r->depth];
        walk w = { r, 0 };
        int rc = f->reverse ? run_backward(&w, f) : run_forward(&w, f);
        r->fed = NULL;
        if (rc == STEP_PUSH)
            continue;
        if (rc == STEP_NEED_READ)
            return CFDB_RYW_NEED_READ;
        if (rc != STEP_DONE)
            return rc;
        if (w.err)
            return w.err;
        if (f->get_key)
            f->key = frame_key(r, f);
        if (r->depth > 0) {
            r->depth--;
            continue;
        }
        r->rows = f->rows;
        r->n = f->n;
        r->more = f->more;
        r->read_to_begin = f->read_to_begin;
        r->read_through_end = f->read_through_end;
        r->key = f->key;
        return CFDB_RYW_DONE;
    }
}
