/* The special key space's write map (special_writes.h): a sorted array of disjoint ranges.
 * put/erase cut the entries they overlap (keeping the parts outside) and insert the new one;
 * every key and value is an owned heap copy, released by erase and free. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "special_writes.h"

static int dup(cfdb_bytes in, cfdb_bytes *out)
{
    uint8_t *p = malloc(in.len ? in.len : 1);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR;
    if (in.len)
        memcpy(p, in.ptr, in.len);
    *out = cfdb_bytes_make(p, in.len);
    return 0;
}

static void drop(sk_write *e)
{
    free((void *)e->begin.ptr);
    free((void *)e->end.ptr);
    free((void *)e->value.ptr);
    memset(e, 0, sizeof *e);
}

size_t sk_writes_lower(const sk_writes *w, cfdb_bytes begin)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cfdb_bytes_cmp(w->items[mid].end, begin) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int reserve(sk_writes *w, size_t more)
{
    if (w->n + more <= w->cap)
        return 0;
    if (w->n + more > SK_WRITES_MAX)
        return CFDB_ERR_TRANSACTION_TOO_LARGE;
    size_t nc = w->cap ? w->cap * 2 : 8;
    while (nc < w->n + more)
        nc *= 2;
    sk_write *ni = realloc(w->items, nc * sizeof *ni);
    if (!ni)
        return CFDB_ERR_UNKNOWN_ERROR;
    w->items = ni;
    w->cap = nc;
    return 0;
}

/* Removes [begin, end) from the map; *at receives where a new entry for it belongs. */
static int cut(sk_writes *w, cfdb_bytes begin, cfdb_bytes end, size_t *at)
{
    int rc = reserve(w, 2);
    if (rc)
        return rc;
    size_t i = sk_writes_lower(w, begin);
    if (i < w->n && cfdb_bytes_cmp(w->items[i].begin, begin) < 0) {
        sk_write *e = &w->items[i];
        if (cfdb_bytes_cmp(e->end, end) > 0) {
            /* the new range sits inside e: split e in two around it */
            sk_write right = { 0 };
            right.has_value = e->has_value;
            if ((rc = dup(end, &right.begin)) || (rc = dup(e->end, &right.end)) ||
                (e->has_value && (rc = dup(e->value, &right.value)))) {
                drop(&right);
                return rc;
            }
            cfdb_bytes nend;
            if ((rc = dup(begin, &nend))) {
                drop(&right);
                return rc;
            }
            free((void *)e->end.ptr);
            e->end = nend;
            memmove(&w->items[i + 2], &w->items[i + 1], (w->n - i - 1) * sizeof *w->items);
            w->items[i + 1] = right;
            w->n++;
            *at = i + 1;
            return 0;
        }
        cfdb_bytes nend;
        if ((rc = dup(begin, &nend)))
            return rc;
        free((void *)e->end.ptr);
        e->end = nend;
        i++;
    }
    size_t j = i;
    while (j < w->n && cfdb_bytes_cmp(w->items[j].end, end) <= 0)
        drop(&w->items[j++]);
    if (j < w->n && cfdb_bytes_cmp(w->items[j].begin, end) < 0) {
        cfdb_bytes nb;
        if ((rc = dup(end, &nb)))
            return rc;
        free((void *)w->items[j].begin.ptr);
        w->items[j].begin = nb;
    }
    memmove(&w->items[i], &w->items[j], (w->n - j) * sizeof *w->items);
    w->n -= j - i;
    *at = i;
    return 0;
}

int sk_writes_put(sk_writes *w, cfdb_bytes begin, cfdb_bytes end, const cfdb_bytes *value)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    sk_write e = { 0 };
    int rc;
    if ((rc = dup(begin, &e.begin)) || (rc = dup(end, &e.end)) || (value && (rc = dup(*value, &e.value)))) {
        drop(&e);
        return rc;
    }
    e.has_value = value != NULL;
    size_t at;
    if ((rc = cut(w, begin, end, &at)) || (rc = reserve(w, 1))) {
        drop(&e);
        return rc;
    }
    memmove(&w->items[at + 1], &w->items[at], (w->n - at) * sizeof *w->items);
    w->items[at] = e;
    w->n++;
    return 0;
}

int sk_writes_erase(sk_writes *w, cfdb_bytes begin, cfdb_bytes end)
{
    size_t at;
    return cfdb_bytes_cmp(begin, end) < 0 ? cut(w, begin, end, &at) : 0;
}

const sk_write *sk_writes_find(const sk_writes *w, cfdb_bytes key)
{
    size_t i = sk_writes_lower(w, key);
    if (i < w->n && cfdb_bytes_cmp(w->items[i].begin, key) <= 0)
        return &w->items[i];
    return NULL;
}

bool sk_writes_any(const sk_writes *w, cfdb_bytes begin, cfdb_bytes end)
{
    size_t i = sk_writes_lower(w, begin);
    return i < w->n && cfdb_bytes_cmp(w->items[i].begin, end) < 0;
}

void sk_writes_free(sk_writes *w)
{
    for (size_t i = 0; i < w->n; i++)
        drop(&w->items[i]);
    free(w->items);
    memset(w, 0, sizeof *w);
}
