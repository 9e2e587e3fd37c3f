/* NativeAPI getRange: see native_range.h. */
#include "native_range.h"

#include <string.h>

#include "error_codes.h"

#include "key_selector.h"
#include "kv_rows.h"

#define REPLY_BYTE_LIMIT 80000 /* CLIENT_KNOBS->REPLY_BYTE_LIMIT */

enum { ST_LOOP = 0, ST_LOCATE, ST_REQUEST, ST_KEYS, ST_DONE };

static const cfdb_bytes k_all_end = { (const uint8_t *)"\xff\xff", 2 };

void cfdb_native_range_start(cfdb_native_range *nr, cfdb_arena *arena, cfdb_arena *rows_arena, cfdb_key_selector begin,
                             cfdb_key_selector end, cfdb_range_limits limits, bool reverse)
{
    memset(nr, 0, sizeof *nr);
    nr->arena = arena;
    nr->rows_arena = rows_arena;
    nr->begin = nr->orig_begin = begin;
    nr->end = nr->orig_end = end;
    nr->limits = nr->orig_limits = limits;
    nr->reverse = reverse;
    if (begin.key.len == 0 && begin.offset < 1) {
        nr->result.read_to_begin = true;
        nr->begin = cfdb_first_greater_or_equal(begin.key);
    }
    nr->state = ST_LOOP;
}

/* KeySelectorRef::isDefinitelyGreater / isDefinitelyLess */
static bool definitely_greater(const cfdb_key_selector *s, cfdb_bytes k)
{
    int c = cfdb_bytes_cmp(s->key, k);
    return s->offset >= 1 && (cfdb_sel_is_first_greater_or_equal(s) ? c > 0 : c >= 0);
}
static bool definitely_less(const cfdb_key_selector *s, cfdb_bytes k)
{
    int c = cfdb_bytes_cmp(s->key, k);
    return s->offset <= 0 && (cfdb_sel_is_last_less_or_equal(s) ? c < 0 : c <= 0);
}

int cfdb_native_range_next(cfdb_native_range *nr)
{
    switch (nr->state) {
    case ST_LOOP:
        if (nr->end.key.len == 0 && (nr->end.offset < 1 || cfdb_sel_is_first_greater_or_equal(&nr->end))) {
            nr->state = ST_DONE;
            return CFDB_NR_DONE;
        }
        if (nr->reverse) {
            cfdb_key_selector e1 = nr->end;
            e1.offset--;
            nr->loc_key = nr->end.key;
            nr->loc_backward = cfdb_sel_is_backward(&e1);
        } else {
            nr->loc_key = nr->begin.key;
            nr->loc_backward = cfdb_sel_is_backward(&nr->begin);
        }
        nr->state = ST_LOCATE;
        return CFDB_NR_NEED_LOCATION;
    case ST_LOCATE: return CFDB_NR_NEED_LOCATION;
    case ST_REQUEST: return CFDB_NR_NEED_REQUEST;
    case ST_KEYS: return CFDB_NR_NEED_KEYS;
    default: return CFDB_NR_DONE;
    }
}

void cfdb_native_range_retry(cfdb_native_range *nr)
{
    if (nr->state != ST_DONE && nr->state != ST_KEYS)
        nr->state = ST_LOOP;
}

void cfdb_native_range_wrong_shard(cfdb_native_range *nr)
{
    if (nr->state == ST_DONE || nr->state == ST_KEYS)
        return;
    nr->state = nr->exact ? ST_LOOP : ST_KEYS;
}

/* transformRangeLimits */
static void transform_limits(const cfdb_range_limits *l, bool reverse, int32_t *limit, int32_t *bytes)
{
    if (l->bytes != 0) {
        *limit = l->rows < 0 ? REPLY_BYTE_LIMIT : (l->rows < REPLY_BYTE_LIMIT ? l->rows : REPLY_BYTE_LIMIT);
        if (reverse)
            *limit = -*limit;
        *bytes = l->bytes < 0 ? REPLY_BYTE_LIMIT : (l->bytes < REPLY_BYTE_LIMIT ? l->bytes : REPLY_BYTE_LIMIT);
    } else {
        *bytes = REPLY_BYTE_LIMIT;
        *limit = reverse ? -l->min_rows : l->min_rows;
    }
}

void cfdb_native_range_located(cfdb_native_range *nr, cfdb_bytes sb, cfdb_bytes se)
{
    nr->shard_begin = sb;
    nr->shard_end = se;
    nr->modified = false;
    cfdb_key_selector b1 = nr->begin;
    b1.offset--;
    if (nr->reverse && definitely_less(&b1, sb) &&
        (!cfdb_sel_is_first_greater_or_equal(&nr->begin) || !cfdb_bytes_eq(nr->begin.key, sb))) {
        nr->req_begin = cfdb_first_greater_or_equal(sb);
        nr->modified = true;
    } else {
        nr->req_begin = nr->begin;
    }
    if (!nr->reverse && definitely_greater(&nr->end, se)) {
        nr->req_end = cfdb_first_greater_or_equal(se);
        nr->modified = true;
    } else {
        nr->req_end = nr->end;
    }
    transform_limits(&nr->limits, nr->reverse, &nr->req_limit, &nr->req_limit_bytes);
    nr->state = ST_REQUEST;
}

static int keep(cfdb_native_range *nr, const cfdb_key_value *rows, size_t n)
{
    if (n == 0)
        return 0; /* nothing to keep (and no row array to point past yet) */
    size_t have = nr->result.n;
    if (have + n > nr->cap) {
        size_t cap = nr->cap ? nr->cap * 2 : 16;
        while (cap < have + n)
            cap *= 2;
        cfdb_key_value *na = cfdb_arena_alloc(nr->rows_arena, cap * sizeof *na);
        if (!na)
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        if (have)
            memcpy(na, nr->rows, have * sizeof *na);
        nr->rows = na;
        nr->cap = cap;
    }
    if (cfdb_kv_rows_copy(nr->rows_arena, rows, n, nr->rows + have))
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    nr->result.rows = nr->rows;
    nr->result.n = have + n;
    return 0;
}

/* getRangeFallback's flags once the exact range is read */
static void finish(cfdb_native_range *nr, bool more)
{
    nr->result.more = more;
    if (nr->exact) {
        if (nr->begin.key.len == 0 && (!nr->reverse || !more))
            nr->result.read_to_begin = true;
        if (cfdb_bytes_eq(nr->end.key, k_all_end) && (nr->reverse || !more))
            nr->result.read_through_end = true;
    }
    nr->state = ST_DONE;
}

int cfdb_native_range_reply(cfdb_native_range *nr, const cfdb_key_value *rows, size_t n, bool more)
{
    cfdb_limits_decrement_rows(&nr->limits, rows, n);
    if (nr->reverse && cfdb_sel_is_last_less_or_equal(&nr->begin) && n &&
        cfdb_bytes_eq(rows[n - 1].key, nr->begin.key))
        nr->modified = false;
    bool reached = cfdb_limits_reached(&nr->limits);
    bool finished =
        reached || (!nr->modified && !more) || (nr->limits.bytes >= 0 && nr->limits.min_rows == 0);
    bool read_through = nr->modified && !more;
    if (keep(nr, rows, n))
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    if (finished) {
        if (read_through) {
            nr->result.has_read_through = true;
            nr->result.read_through = nr->reverse ? nr->shard_begin : nr->shard_end;
        }
        finish(nr, nr->modified || reached || more);
        return 0;
    }
    if (!more) {
        if (!n && !nr->exact) {
            /* the selectors cannot move past an empty shard: resolve them first */
            nr->state = ST_KEYS;
            return 0;
        }
        if (nr->reverse)
            nr->end = cfdb_first_greater_or_equal(nr->shard_begin);
        else
            nr->begin = cfdb_first_greater_or_equal(nr->shard_end);
    } else {
        cfdb_bytes last;
        if (cfdb_arena_dup_bytes(nr->arena, nr->rows[nr->result.n - 1].key, &last))
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        if (nr->reverse)
            nr->end = cfdb_first_greater_or_equal(last);
        else
            nr->begin = cfdb_first_greater_than(last);
    }
    nr->state = ST_LOOP;
    return 0;
}

void cfdb_native_range_keys(cfdb_native_range *nr, cfdb_bytes b, cfdb_bytes e)
{
    /* getRangeFallback starts over: a new result, the original limits */
    memset(&nr->result, 0, sizeof nr->result);
    nr->exact = true;
    nr->limits = nr->orig_limits;
    nr->begin = cfdb_first_greater_or_equal(b);
    nr->end = cfdb_first_greater_or_equal(e);
    if (cfdb_bytes_cmp(b, e) >= 0) {
        nr->state = ST_DONE;
        nr->exact = false;
        return;
    }
    nr->state = ST_LOOP;
}
