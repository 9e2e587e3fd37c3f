/* The shard location cache and its requests (getKeyLocation / getKeyRangeLocations):
 * GetKeyServerLocationsRequests to a commit proxy, identical lookups in flight shared, the
 * answers kept in location_cache.c's bounded cache (LOCATION_CACHE_SIZE).
 *
 * Invariants: every location in db->locs was made by make_location: its servers' `peer`
 * handles are cfdb_peer pointers holding a reference each, released by drop_location when
 * the location goes (eviction, invalidation, replacement or the database's end). A shard
 * is cached only if at least one of its servers has a usable address, so a cached shard
 * always has nservers >= 1. db->loc_count follows the cache's size after every change. */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "tenant.h"

int db_locations_init(cfdb_db *db)
{
    atomic_init(&db->loc_max, CFDB_LOCATION_CACHE_DEFAULT_SIZE);
    atomic_init(&db->loc_count, 0);
    return cfdb_location_cache_init(&db->locs, CFDB_LOCATION_CACHE_DEFAULT_SIZE);
}

static void count_changed(cfdb_db *db)
{
    atomic_store_explicit(&db->loc_count, cfdb_location_cache_size(&db->locs), memory_order_relaxed);
}

void db_locations_free(cfdb_db *db)
{
    cfdb_location_cache_destroy(&db->locs);
    free(db->abs_buf[0]);
    free(db->abs_buf[1]);
}

size_t cfdb_db_location_cache_count(cfdb_db *db)
{
    return atomic_load_explicit(&db->loc_count, memory_order_relaxed);
}

static void drop_location(cfdb_location *loc)
{
    for (uint32_t i = 0; i < loc->count; i++)
        if (loc->servers[i].peer)
            cfdb_peer_unref(loc->servers[i].peer);
}

/* A shard's location with a referenced peer per usable server (at most
 * CFDB_SHARD_MAX_REPLICAS); NULL when none is usable or memory is out. */
static cfdb_location *make_location(void *ctx, const cfdb_shard_location *shard)
{
    cfdb_db *db = ctx;
    size_t n = shard->second.count < CFDB_SHARD_MAX_REPLICAS ? shard->second.count : CFDB_SHARD_MAX_REPLICAS;
    cfdb_location *loc = n ? cfdb_location_new(shard->second.items, n) : NULL;
    if (!loc)
        return NULL;
    loc->drop = drop_location;
    int usable = 0;
    for (uint32_t i = 0; i < loc->count; i++) {
        cfdb_peer *p = cfdb_client_peer(db->cl, &shard->second.items[i].getValue.endpoint.addresses.address);
        if (p) {
            cfdb_peer_ref(p);
            usable++;
        }
        loc->servers[i].peer = p;
    }
    if (!usable) {
        cfdb_location_unref(loc);
        return NULL;
    }
    return loc;
}

/* ---- tenants: the cache is keyed by absolute key ---- */

/* The absolute form of a tenant's key in the database's scratch buffer `slot` (0 or 1; valid
 * until the next call for that slot), or the key itself without a tenant. False when memory
 * for it cannot be had. */
static bool absolute_key(cfdb_db *db, int slot, int64_t tenant, cfdb_bytes key, cfdb_bytes *out)
{
    if (tenant < 0) {
        *out = key;
        return true;
    }
    size_t need = key.len + CFDB_TENANT_PREFIX_SIZE;
    if (db->abs_cap[slot] < need) {
        size_t cap = need < 64 ? 64 : need * 2;
        uint8_t *p = realloc(db->abs_buf[slot], cap);
        if (!p)
            return false;
        db->abs_buf[slot] = p;
        db->abs_cap[slot] = cap;
    }
    cfdb_tenant_prefix(tenant, db->abs_buf[slot]);
    if (key.len)
        memcpy(db->abs_buf[slot] + CFDB_TENANT_PREFIX_SIZE, key.ptr, key.len);
    *out = cfdb_bytes_make(db->abs_buf[slot], need);
    return true;
}

/* toPrefixRelativeRange for one bound: the bound without the prefix, or `outside` when it does
 * not start with the prefix. */
static cfdb_bytes relative_bound(int64_t tenant, cfdb_bytes k, cfdb_bytes outside)
{
    if (tenant < 0)
        return k;
    uint8_t prefix[CFDB_TENANT_PREFIX_SIZE];
    cfdb_tenant_prefix(tenant, prefix);
    if (k.len >= CFDB_TENANT_PREFIX_SIZE && memcmp(k.ptr, prefix, CFDB_TENANT_PREFIX_SIZE) == 0)
        return cfdb_bytes_make(k.ptr + CFDB_TENANT_PREFIX_SIZE, k.len - CFDB_TENANT_PREFIX_SIZE);
    return outside;
}

/* Fills db->shard_view from a cached range (relative to the tenant's prefix, if any). */
static const cfdb_shard *view(cfdb_db *db, int64_t tenant, cfdb_bytes begin, cfdb_bytes end,
                              const cfdb_location *loc)
{
    cfdb_shard *s = &db->shard_view;
    s->begin = relative_bound(tenant, begin, CFDB_BYTES_LIT(""));
    s->end = relative_bound(tenant, end, CFDB_BYTES_LIT("\xff\xff"));
    s->nservers = 0;
    for (uint32_t i = 0; i < loc->count && s->nservers < CFDB_SHARD_MAX_REPLICAS; i++)
        if (loc->servers[i].peer)
            s->servers[s->nservers++] = (cfdb_endpoint_ref){ loc->servers[i].peer, loc->servers[i].get_value_token };
    return s;
}

const cfdb_shard *cfdb_db_cached_shard(cfdb_db *db, int64_t tenant, cfdb_bytes key, bool reverse)
{
    cfdb_bytes abs, b, e;
    if (!absolute_key(db, 0, tenant, key, &abs))
        return NULL;
    const cfdb_location *loc = cfdb_location_cache_get(&db->locs, abs, reverse, &b, &e);
    return loc ? view(db, tenant, b, e, loc) : NULL;
}

void cfdb_db_invalidate(cfdb_db *db, int64_t tenant, cfdb_bytes key, bool reverse)
{
    cfdb_bytes abs;
    if (!absolute_key(db, 0, tenant, key, &abs))
        return; /* nothing cached could be found for it either */
    cfdb_location_cache_invalidate_key(&db->locs, abs, reverse);
    count_changed(db);
}

void db_locations_servers(cfdb_db *db, void (*fn)(void *ctx, cfdb_peer *peer, cfdb_uid token), void *ctx)
{
    for (cfdb_omap_node *n = cfdb_omap_first(&db->locs.map); n; n = cfdb_omap_next(n)) {
        const cfdb_loc_range *r = n->val.ptr;
        for (uint32_t i = 0; i < r->loc->count; i++)
            if (r->loc->servers[i].peer)
                fn(ctx, r->loc->servers[i].peer, r->loc->servers[i].get_value_token);
    }
}

static void on_location_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    location_request *lr = ctx;
    cfdb_db *db = lr->db;
    for (location_request **pp = &db->locating; *pp; pp = &(*pp)->next)
        if (*pp == lr) {
            *pp = lr->next;
            break;
        }
    if (error == 0) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_get_key_server_locations_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err = 0;
        int rc = fb_decode(&cfdb_msg_get_key_server_locations_reply, msg, len, &rep, &err, &a);
        if (rc)
            error = CFDB_ERR_REQUEST_MAYBE_DELIVERED;
        else if (err)
            error = err;
        else {
            cfdb_location_cache_set_max(&db->locs, (size_t)atomic_load(&db->loc_max));
            int lrc = cfdb_location_cache_insert_reply(&db->locs, &rep, make_location, db);
            if (lrc)
                error = lrc; /* out of memory: unknown_error */
            count_changed(db);
        }
        cfdb_arena_free(&a);
    }
    /* commit_proxy_memory_limit_exceeded and lost requests: the caller retries */
    cfdb_waiter *list = lr->waiters;
    free(lr->key);
    free(lr->end);
    free(lr);
    while (list) {
        cfdb_waiter *w = list;
        list = w->next;
        w->fn(w, error, 0);
    }
    cfdb_db_unref(db);
}

/* Asks a commit proxy for the shards of [key, end) (end NULL: the shard of key alone, as
 * getKeyLocation asks with no end) and caches them. An identical lookup in flight is shared. */
static void fetch_locations(cfdb_db *db, int64_t tenant, cfdb_bytes key, const cfdb_bytes *end, int32_t limit,
                            bool reverse, int64_t read_version, cfdb_waiter *w)
{
    for (location_request *lr = db->locating; lr; lr = lr->next) {
        if (lr->tenant == tenant && lr->reverse == reverse && lr->limit == limit &&
            (lr->end != NULL) == (end != NULL) &&
            cfdb_bytes_eq(cfdb_bytes_make(lr->key, lr->key_len), key) &&
            (!end || cfdb_bytes_eq(cfdb_bytes_make(lr->end, lr->end_len), *end))) {
            w->next = lr->waiters;
            lr->waiters = w;
            return;
        }
    }
    const cfdb_endpoint_ref *proxy = cfdb_db_commit_proxy(db);
    if (!proxy) {
        w->fn(w, CFDB_ERR_REQUEST_MAYBE_DELIVERED, 0);
        return;
    }
    location_request *lr = calloc(1, sizeof *lr);
    uint8_t *k = lr ? malloc(key.len ? key.len : 1) : NULL;
    uint8_t *e = k && end ? malloc(end->len ? end->len : 1) : NULL;
    if (!lr || !k || (end && !e)) {
        free(lr);
        free(k);
        w->fn(w, CFDB_ERR_INTERNAL_ERROR, 0);
        return;
    }
    lr->db = db;
    lr->key = k;
    if (key.len)
        memcpy(lr->key, key.ptr, key.len);
    lr->key_len = (uint32_t)key.len;
    if (end) {
        lr->end = e;
        if (end->len)
            memcpy(lr->end, end->ptr, end->len);
        lr->end_len = (uint32_t)end->len;
    }
    lr->limit = limit;
    lr->reverse = reverse;
    lr->tenant = tenant;
    lr->waiters = w;
    w->next = NULL;
    lr->next = db->locating;
    db->locating = lr;

    cfdb_get_key_server_locations_request req;
    memset(&req, 0, sizeof req);
    req.begin = key;
    if (end) {
        req.end.present = true;
        req.end.value = *end;
    }
    req.limit = limit;
    req.reverse = reverse;
    req.tenant.tenantId = tenant; /* -1: none; else begin and end are relative to it */
    req.minTenantVersion = read_version > 0 ? read_version : -2; /* else latestVersion */
    cfdb_db_ref(db);
    uint64_t id = cfdb_client_request(db->cl, proxy->peer,
                                      cfdb_adjusted_token(proxy->token, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                                      &cfdb_msg_get_key_server_locations_request, &req, &req.reply.token,
                                      on_location_reply, lr);
    if (!id)
        on_location_reply(lr, CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
}

void cfdb_db_fetch_location(cfdb_db *db, int64_t tenant, cfdb_bytes key, bool reverse, int64_t read_version,
                            cfdb_waiter *w)
{
    fetch_locations(db, tenant, key, NULL, LOCATION_LIMIT, reverse, read_version, w);
}

void cfdb_db_fetch_range_locations(cfdb_db *db, int64_t tenant, cfdb_bytes begin, cfdb_bytes end, int32_t limit,
                                   int64_t read_version, cfdb_waiter *w)
{
    fetch_locations(db, tenant, begin, &end, limit, false, read_version, w);
}

bool cfdb_db_range_cached(cfdb_db *db, int64_t tenant, cfdb_bytes begin, cfdb_bytes end, int32_t limit)
{
    if (!absolute_key(db, 0, tenant, begin, &begin) || !absolute_key(db, 1, tenant, end, &end))
        return false;
    /* DatabaseContext::getCachedLocations: every shard from begin's to the one holding the key
     * before end is cached, with no gap, or `limit` of them are. A reply keeps at most the
     * cache's bound of shards, so no more than that many are asked for here. */
    size_t bound = db->locs.max_ranges ? db->locs.max_ranges : 1;
    size_t want = limit > 0 && (size_t)limit < bound ? (size_t)limit : bound;
    cfdb_bytes b, e;
    if (!cfdb_location_cache_get(&db->locs, begin, false, &b, &e))
        return false;
    for (size_t n = 1;; n++) {
        if (n >= want || cfdb_bytes_cmp(e, end) >= 0)
            return true;
        /* the next range must begin where this one ends */
        if (!cfdb_location_cache_get(&db->locs, e, false, &b, &e))
            return false;
    }
}
