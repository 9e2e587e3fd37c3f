#include "key_selector.h"

#include <string.h>

#include "error_codes.h"

static const uint8_t all_end[2] = { 0xff, 0xff };

int cfdb_key_after(cfdb_arena *a, cfdb_bytes key, cfdb_bytes *out)
{
    if (cfdb_bytes_eq(key, cfdb_bytes_make(all_end, 2))) {
        *out = key;
        return 0;
    }
    uint8_t *p = cfdb_arena_alloc(a, (size_t)key.len + 1);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
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
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
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
