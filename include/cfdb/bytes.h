/* Byte strings that point into someone else's memory (a received buffer or an arena). */
#ifndef CFDB_BYTES_H
#define CFDB_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cfdb_bytes {
    const uint8_t *ptr;
    uint32_t len;
} cfdb_bytes;

#define CFDB_BYTES_LIT(s) ((cfdb_bytes){ (const uint8_t *)(s), (uint32_t)(sizeof(s) - 1) })

static inline cfdb_bytes cfdb_bytes_make(const void *p, size_t n)
{
    return (cfdb_bytes){ (const uint8_t *)p, (uint32_t)n };
}

static inline cfdb_bytes cfdb_bytes_str(const char *s)
{
    return cfdb_bytes_make(s, strlen(s));
}

/* Lexicographic byte order: FoundationDB's key order (a shorter prefix sorts first). */
static inline int cfdb_bytes_cmp(cfdb_bytes a, cfdb_bytes b)
{
    uint32_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c)
        return c;
    return a.len < b.len ? -1 : (a.len > b.len);
}

static inline bool cfdb_bytes_eq(cfdb_bytes a, cfdb_bytes b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

#endif
