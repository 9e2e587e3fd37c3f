/* Ordered map from byte-string keys to opaque values: a skip list.
 * Nodes come from an arena (transaction-lifetime maps: removal just unlinks)
 * or from malloc (long-lived maps: removal frees the node). The key bytes are
 * copied into the node. Used by the write map, the conflict-range sets and
 * the location cache. */
#ifndef CFDB_CLIENT_OMAP_H
#define CFDB_CLIENT_OMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"

#define CFDB_OMAP_MAX_LEVEL 24

/* memcmp's sign for n bytes, compared eight at a time as big-endian words: keys are
 * short and compared at every step of a read, where a call to memcmp costs more than
 * the comparison. */
static inline int cfdb_key_prefix_cmp(const uint8_t *a, const uint8_t *b, uint32_t n)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
#endif
    for (; n; a++, b++, n--)
        if (*a != *b)
            return *a < *b ? -1 : 1;
    return 0;
}
/* cfdb_bytes_cmp with cfdb_key_prefix_cmp: the map's key order */
static inline int cfdb_omap_key_cmp(cfdb_bytes a, cfdb_bytes b)
{
    int c = cfdb_key_prefix_cmp(a.ptr, b.ptr, a.len < b.len ? a.len : b.len);
    return c ? c : a.len < b.len ? -1 : a.len > b.len;
}

typedef struct cfdb_omap_node {
    cfdb_bytes key;
    union {
        void *ptr;
        cfdb_bytes bytes;
    } val;
    int level;
    struct cfdb_omap_node *next[];
} cfdb_omap_node;

typedef struct cfdb_omap {
    cfdb_omap_node *head; /* sentinel with CFDB_OMAP_MAX_LEVEL links */
    int level;
    size_t count;
    uint64_t rng;
    cfdb_arena *arena; /* NULL: nodes are malloc'ed and freed on removal */
} cfdb_omap;

/* arena may be NULL (malloc mode). Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_omap_init(cfdb_omap *m, cfdb_arena *arena);
/* Frees malloc'ed nodes (values are the caller's business). */
void cfdb_omap_destroy(cfdb_omap *m);
/* Removes every node (frees them in malloc mode). */
void cfdb_omap_clear(cfdb_omap *m);

static inline cfdb_omap_node *cfdb_omap_first(const cfdb_omap *m)
{
    return m->head->next[0];
}
static inline cfdb_omap_node *cfdb_omap_next(const cfdb_omap_node *n)
{
    return n->next[0];
}
cfdb_omap_node *cfdb_omap_last(const cfdb_omap *m);

cfdb_omap_node *cfdb_omap_find(const cfdb_omap *m, cfdb_bytes key);    /* == key */
cfdb_omap_node *cfdb_omap_find_ge(const cfdb_omap *m, cfdb_bytes key); /* first >= key */
cfdb_omap_node *cfdb_omap_find_gt(const cfdb_omap *m, cfdb_bytes key); /* first > key */
cfdb_omap_node *cfdb_omap_find_lt(const cfdb_omap *m, cfdb_bytes key); /* last < key */
cfdb_omap_node *cfdb_omap_find_le(const cfdb_omap *m, cfdb_bytes key); /* last <= key */

/* Node with this key, created (value zeroed) when absent; *created tells which.
 * NULL when out of memory. */
cfdb_omap_node *cfdb_omap_insert(cfdb_omap *m, cfdb_bytes key, bool *created);
/* Removes the node with this key if present; returns whether one was removed.
 * In malloc mode the node is freed: read its value before. */
bool cfdb_omap_remove(cfdb_omap *m, cfdb_bytes key);

#endif
