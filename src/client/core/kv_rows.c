/* Rows copied in bulk: see kv_rows.h. */
#include "kv_rows.h"

#include <stdint.h>
#include <string.h>

#include "error_codes.h"

static const uint8_t k_empty[1] = { 0 };

int cfdb_kv_rows_copy(cfdb_arena *a, const cfdb_key_value *src, size_t n, cfdb_key_value *dst)
{
    /* One pass: the bytes in total and the span they lie in (empty parts do not count). */
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const cfdb_bytes *part[2] = { &src[i].key, &src[i].value };
        for (int k = 0; k < 2; k++) {
            if (!part[k]->len)
                continue;
            uintptr_t p = (uintptr_t)part[k]->ptr;
            total += part[k]->len;
            if (p < lo)
                lo = p;
            if (p + part[k]->len > hi)
                hi = p + part[k]->len;
        }
    }
    if (!total) {
        for (size_t i = 0; i < n; i++)
            dst[i] = (cfdb_key_value){ cfdb_bytes_make(k_empty, 0), cfdb_bytes_make(k_empty, 0) };
        return 0;
    }
    size_t span = (size_t)(hi - lo);
    if (span <= total + CFDB_KV_ROWS_SLACK(n, total)) {
        uint8_t *copy = cfdb_arena_alloc(a, span);
        if (!copy)
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        memcpy(copy, (const void *)lo, span);
        for (size_t i = 0; i < n; i++) {
            cfdb_bytes key = src[i].key, value = src[i].value;
            dst[i].key = key.len ? cfdb_bytes_make(copy + ((uintptr_t)key.ptr - lo), key.len)
                                 : cfdb_bytes_make(k_empty, 0);
            dst[i].value = value.len ? cfdb_bytes_make(copy + ((uintptr_t)value.ptr - lo), value.len)
                                     : cfdb_bytes_make(k_empty, 0);
        }
        return 0;
    }
    uint8_t *copy = cfdb_arena_alloc(a, total);
    if (!copy)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    for (size_t i = 0; i < n; i++) {
        cfdb_bytes key = src[i].key, value = src[i].value;
        dst[i].key = cfdb_bytes_make(key.len ? copy : k_empty, key.len);
        if (key.len)
            memcpy(copy, key.ptr, key.len);
        copy += key.len;
        dst[i].value = cfdb_bytes_make(value.len ? copy : k_empty, value.len);
        if (value.len)
            memcpy(copy, value.ptr, value.len);
        copy += value.len;
    }
    return 0;
}
