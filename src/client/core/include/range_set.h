/* A set of keys kept as disjoint, non-adjacent half-open ranges [begin, end):
 * adding merges overlapping or touching ranges, removing splits them. Memory
 * comes from an arena. Used for a transaction's cleared ranges and its read
 * and write conflict ranges. */
#ifndef CFDB_CLIENT_RANGE_SET_H
#define CFDB_CLIENT_RANGE_SET_H

#include "omap.h"

typedef struct cfdb_range_set {
    cfdb_omap map; /* begin -> end (val.bytes) */
    cfdb_arena *arena;
} cfdb_range_set;

int cfdb_range_set_init(cfdb_range_set *s, cfdb_arena *arena);
void cfdb_range_set_clear(cfdb_range_set *s);
/* Empty or inverted ranges are ignored. Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_range_set_add(cfdb_range_set *s, cfdb_bytes begin, cfdb_bytes end);
int cfdb_range_set_remove(cfdb_range_set *s, cfdb_bytes begin, cfdb_bytes end);
/* The range containing key, or NULL. node->key is its begin, node->val.bytes its end. */
cfdb_omap_node *cfdb_range_set_find(const cfdb_range_set *s, cfdb_bytes key);
/* First range whose end is > key (it may contain key or lie after it), or NULL. */
cfdb_omap_node *cfdb_range_set_first_ending_after(const cfdb_range_set *s, cfdb_bytes key);
/* Last range whose begin is < key (it may contain keys before key), or NULL. */
cfdb_omap_node *cfdb_range_set_last_beginning_before(const cfdb_range_set *s, cfdb_bytes key);
/* Whether any key of [begin, end) is in the set. */
bool cfdb_range_set_intersects(const cfdb_range_set *s, cfdb_bytes begin, cfdb_bytes end);
static inline size_t cfdb_range_set_count(const cfdb_range_set *s)
{
    return s->map.count;
}

#endif
