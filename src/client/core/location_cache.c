/* The location cache: an ordered map (omap, malloc mode) from a range's begin to its end
 * and location. See location_cache.h for the contract and the eviction rule. */
#include "location_cache.h"

#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

#define OOM CFDB_ERR_UNKNOWN_ERROR /* out of memory, as the engine reports it */

static void copy_addr(cfdb_network_address *dst, uint8_t v6[16], const cfdb_network_address *src)
{
    *dst = *src;
    if (src->ip.tag == 2 && src->ip.v6.count == 16 && src->ip.v6.items) {
        memcpy(v6, src->ip.v6.items, 16);
        dst->ip.v6.items = v6;
        dst->ip.v6.count = 16;
    } else {
        dst->ip.v6.items = NULL;
        dst->ip.v6.count = 0;
    }
}

void cfdb_loc_server_from_interface(cfdb_loc_server *out, const cfdb_storage_server_interface *ssi)
{
    memset(out, 0, sizeof *out);
    out->id = ssi->uniqueID;
    const cfdb_endpoint *ep = &ssi->getValue.endpoint;
    copy_addr(&out->addr, out->v6, &ep->addresses.address);
    if (ep->addresses.secondaryAddress.present) {
        out->has_secondary = true;
        copy_addr(&out->secondary, out->secondary_v6, &ep->addresses.secondaryAddress.value);
    }
    out->get_value_token = ep->token;
    if (ssi->tssPairID.present) {
        out->has_tss_pair = true;
        out->tss_pair_id = ssi->tssPairID.value;
    }
}

cfdb_location *cfdb_location_new(const cfdb_storage_server_interface *ssi, size_t count)
{
    cfdb_location *l = malloc(sizeof *l + count * sizeof(cfdb_loc_server));
    if (!l)
        return NULL;
    l->refs = 1;
    l->count = (uint32_t)count;
    l->drop = NULL;
    for (size_t i = 0; i < count; i++) {
        cfdb_loc_server_from_interface(&l->servers[i], &ssi[i]);
        /* v6 pointers must refer to this copy */
        if (l->servers[i].addr.ip.v6.items)
            l->servers[i].addr.ip.v6.items = l->servers[i].v6;
        if (l->servers[i].secondary.ip.v6.items)
            l->servers[i].secondary.ip.v6.items = l->servers[i].secondary_v6;
    }
    return l;
}

void cfdb_location_ref(cfdb_location *loc)
{
    if (loc)
        loc->refs++;
}

void cfdb_location_unref(cfdb_location *loc)
{
    if (loc && --loc->refs == 0) {
        if (loc->drop)
            loc->drop(loc);
        free(loc);
    }
}

int cfdb_location_cache_init(cfdb_location_cache *c, size_t max_ranges)
{
    memset(c, 0, sizeof *c);
    c->max_ranges = max_ranges ? max_ranges : CFDB_LOCATION_CACHE_DEFAULT_SIZE;
    c->rng = 0x2545F4914F6CDD1Dull;
    return cfdb_omap_init(&c->map, NULL) ? OOM : 0;
}

static void free_range(cfdb_loc_range *r)
{
    if (!r)
        return;
    free((void *)r->end.ptr);
    cfdb_location_unref(r->loc);
    free(r);
}

static void remove_node(cfdb_location_cache *c, cfdb_omap_node *n)
{
    cfdb_loc_range *r = n->val.ptr;
    /* the last node takes the slot (nodes holds map.count entries before the removal) */
    cfdb_omap_node *moved = c->nodes[c->map.count - 1];
    c->nodes[r->slot] = moved;
    ((cfdb_loc_range *)moved->val.ptr)->slot = r->slot;
    cfdb_omap_remove(&c->map, n->key);
    free_range(r);
}

void cfdb_location_cache_clear(cfdb_location_cache *c)
{
    for (cfdb_omap_node *n = cfdb_omap_first(&c->map); n; n = cfdb_omap_next(n))
        free_range(n->val.ptr);
    cfdb_omap_clear(&c->map);
}

void cfdb_location_cache_destroy(cfdb_location_cache *c)
{
    cfdb_location_cache_clear(c);
    free(c->nodes);
    c->nodes = NULL;
    c->nodes_cap = 0;
    cfdb_omap_destroy(&c->map);
}

static cfdb_omap_node *containing(const cfdb_location_cache *c, cfdb_bytes key, bool reverse)
{
    cfdb_omap_node *n = reverse ? cfdb_omap_find_lt(&c->map, key) : cfdb_omap_find_le(&c->map, key);
    if (!n)
        return NULL;
    cfdb_loc_range *r = n->val.ptr;
    int cmp = cfdb_bytes_cmp(key, r->end);
    if (reverse ? cmp <= 0 : cmp < 0)
        return n;
    return NULL;
}

cfdb_location *cfdb_location_cache_get(const cfdb_location_cache *c, cfdb_bytes key, bool reverse, cfdb_bytes *begin,
                                       cfdb_bytes *end)
{
    cfdb_omap_node *n = containing(c, key, reverse);
    if (!n)
        return NULL;
    cfdb_loc_range *r = n->val.ptr;
    if (begin)
        *begin = n->key;
    if (end)
        *end = r->end;
    return r->loc;
}

bool cfdb_location_cache_get_ranges(const cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end, size_t limit,
                                    bool reverse, cfdb_loc_hit *out, size_t cap, size_t *n)
{
    *n = 0;
    if (limit > cap)
        limit = cap;
    if (limit == 0 || cfdb_bytes_cmp(begin, end) >= 0)
        return true;
    cfdb_bytes pos = reverse ? end : begin;
    for (;;) {
        cfdb_omap_node *x = containing(c, pos, reverse);
        if (!x) {
            *n = 0;
            return false;
        }
        cfdb_loc_range *r = x->val.ptr;
        cfdb_loc_hit h;
        h.begin = cfdb_bytes_cmp(x->key, begin) > 0 ? x->key : begin;
        h.end = cfdb_bytes_cmp(r->end, end) < 0 ? r->end : end;
        h.loc = r->loc;
        out[(*n)++] = h;
        if (*n == limit)
            return true;
        if (reverse) {
            if (cfdb_bytes_cmp(x->key, begin) <= 0)
                return true;
            pos = x->key;
        } else {
            if (cfdb_bytes_cmp(r->end, end) >= 0)
                return true;
            pos = r->end;
        }
    }
}

static int put(cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end, cfdb_location *loc)
{
    cfdb_loc_range *r = malloc(sizeof *r);
    uint8_t *e = malloc(end.len ? end.len : 1);
    if (!r || !e) {
        free(r);
        free(e);
        return OOM;
    }
    if (end.len)
        memcpy(e, end.ptr, end.len);
    r->end = cfdb_bytes_make(e, end.len);
    r->loc = loc;
    cfdb_location_ref(loc);
    bool created;
    cfdb_omap_node *n = cfdb_omap_insert(&c->map, begin, &created);
    if (!n) {
        free_range(r);
        return OOM;
    }
    if (!created) {
        cfdb_loc_range *old = n->val.ptr;
        r->slot = old->slot;
        free_range(old);
    } else {
        if (c->map.count > c->nodes_cap) {
            size_t cap = c->nodes_cap ? c->nodes_cap * 2 : 64;
            cfdb_omap_node **nodes = realloc(c->nodes, cap * sizeof *nodes);
            if (!nodes) {
                cfdb_omap_remove(&c->map, begin);
                free_range(r);
                return OOM;
            }
            c->nodes = nodes;
            c->nodes_cap = cap;
        }
        r->slot = c->map.count - 1;
        c->nodes[r->slot] = n;
    }
    n->val.ptr = r;
    return 0;
}

/* Removes [begin, end) from the cache, trimming ranges that stick out. */
static int carve(cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_omap_node *p = cfdb_omap_find_lt(&c->map, begin);
    if (p) {
        cfdb_loc_range *r = p->val.ptr;
        if (cfdb_bytes_cmp(r->end, begin) > 0) {
            /* p = [pb, pe) with pb < begin < pe: keep [pb, begin), maybe [end, pe) */
            if (cfdb_bytes_cmp(r->end, end) > 0 && put(c, end, r->end, r->loc))
                return OOM;
            uint8_t *nb = malloc(begin.len ? begin.len : 1);
            if (!nb)
                return OOM;
            if (begin.len)
                memcpy(nb, begin.ptr, begin.len);
            free((void *)r->end.ptr);
            r->end = cfdb_bytes_make(nb, begin.len);
        }
    }
    cfdb_omap_node *n = cfdb_omap_find_ge(&c->map, begin);
    while (n && cfdb_bytes_cmp(n->key, end) < 0) {
        cfdb_omap_node *nx = cfdb_omap_next(n);
        cfdb_loc_range *r = n->val.ptr;
        if (cfdb_bytes_cmp(r->end, end) > 0) {
            if (put(c, end, r->end, r->loc))
                return OOM;
            nx = cfdb_omap_next(n); /* the new node follows n */
        }
        remove_node(c, n);
        n = nx;
    }
    return 0;
}

/* Whether the cached range at node n intersects [lo, hi). */
static bool intersects(const cfdb_omap_node *n, cfdb_bytes lo, cfdb_bytes hi)
{
    const cfdb_loc_range *r = n->val.ptr;
    return cfdb_bytes_cmp(n->key, hi) < 0 && cfdb_bytes_cmp(r->end, lo) > 0;
}

/* A random cached range outside [lo, hi) (the ranges being inserted), or NULL if there
 * is none: uniformly among all ranges (randomRange); the ranges outside lie before lo or
 * after hi, so when the pick lands inside, the first or the last range is outside if any is. */
static cfdb_omap_node *eviction_victim(cfdb_location_cache *c, cfdb_bytes lo, cfdb_bytes hi)
{
    if (c->map.count == 0)
        return NULL;
    uint64_t x = c->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->rng = x;
    cfdb_omap_node *v = c->nodes[x % c->map.count];
    if (!intersects(v, lo, hi))
        return v;
    cfdb_omap_node *first = cfdb_omap_first(&c->map), *last = cfdb_omap_last(&c->map);
    if (!intersects(first, lo, hi))
        return first;
    return !intersects(last, lo, hi) ? last : NULL;
}

/* Evicts ranges outside [lo, hi) while more than `keep` are cached, at most *budget. */
static void evict_down_to(cfdb_location_cache *c, size_t keep, cfdb_bytes lo, cfdb_bytes hi, int *budget)
{
    while (c->map.count > keep && *budget > 0) {
        cfdb_omap_node *n = eviction_victim(c, lo, hi);
        if (!n)
            return;
        remove_node(c, n);
        c->evictions++;
        --*budget;
    }
}

/* Inserts [begin, end) -> loc, evicting only ranges outside [lo, hi). */
static int insert_protected(cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end, cfdb_location *loc,
                            cfdb_bytes lo, cfdb_bytes hi, int *budget)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    size_t max = c->max_ranges ? c->max_ranges : 1;
    evict_down_to(c, max - 1, lo, hi, budget); /* room for the new range */
    /* begin/end may point into cache memory that carve frees: copy first */
    uint8_t *buf = malloc((size_t)begin.len + end.len + 1);
    if (!buf)
        return OOM;
    if (begin.len)
        memcpy(buf, begin.ptr, begin.len);
    if (end.len)
        memcpy(buf + begin.len, end.ptr, end.len);
    cfdb_bytes b = cfdb_bytes_make(buf, begin.len), e = cfdb_bytes_make(buf + begin.len, end.len);
    int rc = carve(c, b, e);
    if (!rc)
        rc = put(c, b, e, loc);
    /* carving a range in two adds one: evict another to stay in the bound */
    if (!rc)
        evict_down_to(c, max, cfdb_bytes_cmp(b, lo) < 0 ? b : lo, cfdb_bytes_cmp(e, hi) > 0 ? e : hi, budget);
    free(buf);
    return rc;
}

int cfdb_location_cache_insert(cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end, cfdb_location *loc)
{
    int budget = CFDB_LOCATION_CACHE_MAX_EVICTIONS;
    return insert_protected(c, begin, end, loc, begin, end, &budget);
}

int cfdb_location_cache_insert_reply(cfdb_location_cache *c, const cfdb_get_key_server_locations_reply *reply,
                                     cfdb_location_make_fn make, void *ctx)
{
    size_t max = c->max_ranges ? c->max_ranges : 1;
    size_t n = reply->results.count < max ? reply->results.count : max;
    if (n == 0)
        return 0;
    /* the span of the shards kept: none of them evicts another */
    cfdb_bytes lo = reply->results.items[0].first.begin, hi = reply->results.items[0].first.end;
    for (size_t i = 1; i < n; i++) {
        const cfdb_key_range *r = &reply->results.items[i].first;
        if (cfdb_bytes_cmp(r->begin, lo) < 0)
            lo = r->begin;
        if (cfdb_bytes_cmp(r->end, hi) > 0)
            hi = r->end;
    }
    int budget = CFDB_LOCATION_CACHE_MAX_EVICTIONS * (int)n;
    for (size_t i = 0; i < n; i++) {
        const cfdb_shard_location *s = &reply->results.items[i];
        cfdb_location *loc = make ? make(ctx, s) : cfdb_location_new(s->second.items, s->second.count);
        if (!loc) {
            if (make)
                continue; /* not cacheable */
            return OOM;
        }
        int rc = insert_protected(c, s->first.begin, s->first.end, loc, lo, hi, &budget);
        cfdb_location_unref(loc);
        if (rc)
            return rc;
    }
    return 0;
}

void cfdb_location_cache_invalidate_key(cfdb_location_cache *c, cfdb_bytes key, bool reverse)
{
    cfdb_omap_node *n = containing(c, key, reverse);
    if (n)
        remove_node(c, n);
}

void cfdb_location_cache_invalidate_range(cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return;
    /* the range containing begin, then every range beginning before end */
    cfdb_omap_node *n = containing(c, begin, false);
    if (!n)
        n = cfdb_omap_find_ge(&c->map, begin);
    while (n && cfdb_bytes_cmp(n->key, end) < 0) {
        cfdb_omap_node *nx = cfdb_omap_next(n);
        remove_node(c, n);
        n = nx;
    }
}
