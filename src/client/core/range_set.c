#include "range_set.h"

#include "error_codes.h"

int cfdb_range_set_init(cfdb_range_set *s, cfdb_arena *arena)
{
    s->arena = arena;
    return cfdb_omap_init(&s->map, arena);
}

void cfdb_range_set_clear(cfdb_range_set *s)
{
    cfdb_omap_clear(&s->map);
}

static int put(cfdb_range_set *s, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_bytes e;
    if (cfdb_arena_dup_bytes(s->arena, end, &e))
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_omap_node *n = cfdb_omap_insert(&s->map, begin, NULL);
    if (!n)
        return CFDB_ERR_UNKNOWN_ERROR;
    n->val.bytes = e;
    return 0;
}

int cfdb_range_set_add(cfdb_range_set *s, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    cfdb_omap_node *p = cfdb_omap_find_le(&s->map, begin);
    /* the first range beginning after begin, before or after begin moves back to p->key */
    cfdb_omap_node *n = p ? cfdb_omap_next(p) : cfdb_omap_first(&s->map);
    if (p && cfdb_bytes_cmp(p->val.bytes, begin) >= 0) {
        if (cfdb_bytes_cmp(p->val.bytes, end) >= 0)
            return 0; /* already covered */
        begin = p->key;
        /* p stays (same begin); its end grows below */
    }
    /* absorb every range beginning in (begin, end] */
    while (n && cfdb_bytes_cmp(n->key, end) <= 0) {
        cfdb_omap_node *nx = cfdb_omap_next(n);
        if (cfdb_bytes_cmp(n->val.bytes, end) > 0)
            end = n->val.bytes; /* arena memory: stays valid after unlinking */
        cfdb_omap_remove(&s->map, n->key);
        n = nx;
    }
    if (p && cfdb_bytes_eq(p->key, begin)) /* p's end grows: no second search */
        return cfdb_arena_dup_bytes(s->arena, end, &p->val.bytes) ? CFDB_ERR_UNKNOWN_ERROR : 0;
    return put(s, begin, end);
}

int cfdb_range_set_remove(cfdb_range_set *s, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    cfdb_omap_node *p = cfdb_omap_find_lt(&s->map, begin);
    if (p && cfdb_bytes_cmp(p->val.bytes, begin) > 0) {
        cfdb_bytes old_end = p->val.bytes;
        p->val.bytes = begin;
        if (cfdb_arena_dup_bytes(s->arena, begin, &p->val.bytes))
            return CFDB_ERR_UNKNOWN_ERROR;
        if (cfdb_bytes_cmp(old_end, end) > 0)
            return put(s, end, old_end);
    }
    cfdb_omap_node *n = cfdb_omap_find_ge(&s->map, begin);
    while (n && cfdb_bytes_cmp(n->key, end) < 0) {
        cfdb_omap_node *nx = cfdb_omap_next(n);
        cfdb_bytes nend = n->val.bytes;
        cfdb_omap_remove(&s->map, n->key);
        if (cfdb_bytes_cmp(nend, end) > 0)
            return put(s, end, nend);
        n = nx;
    }
    return 0;
}

cfdb_omap_node *cfdb_range_set_find(const cfdb_range_set *s, cfdb_bytes key)
{
    cfdb_omap_node *p = cfdb_omap_find_le(&s->map, key);
    return (p && cfdb_bytes_cmp(key, p->val.bytes) < 0) ? p : NULL;
}

cfdb_omap_node *cfdb_range_set_first_ending_after(const cfdb_range_set *s, cfdb_bytes key)
{
    cfdb_omap_node *p = cfdb_omap_find_le(&s->map, key);
    if (p && cfdb_bytes_cmp(p->val.bytes, key) > 0)
        return p;
    return cfdb_omap_find_gt(&s->map, key);
}

cfdb_omap_node *cfdb_range_set_last_beginning_before(const cfdb_range_set *s, cfdb_bytes key)
{
    return cfdb_omap_find_lt(&s->map, key);
}

bool cfdb_range_set_intersects(const cfdb_range_set *s, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return false;
    cfdb_omap_node *n = cfdb_range_set_first_ending_after(s, begin);
    return n && cfdb_bytes_cmp(n->key, end) < 0;
}
