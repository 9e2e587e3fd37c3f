/* The shard location cache and its requests (getKeyLocation / getKeyRangeLocations):
 * GetKeyServerLocationsRequests to a commit proxy, identical lookups in flight shared.
 * Invariants: cached shards are sorted by begin and do not overlap. */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

#include "cfdb/endpoint.h"

void db_locations_free(cfdb_db *db)
{
    for (size_t i = 0; i < db->nshards; i++) {
        free((void *)db->shards[i].begin.ptr);
        free((void *)db->shards[i].end.ptr);
    }
    free(db->shards);
}

/* Index of the first shard whose end is > key (the one containing key, if cached). */
static size_t shard_search(const cfdb_db *db, cfdb_bytes key)
{
    size_t lo = 0, hi = db->nshards;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cfdb_bytes_cmp(db->shards[mid].end, key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const cfdb_shard *cfdb_db_cached_shard(cfdb_db *db, cfdb_bytes key, bool reverse)
{
    size_t i;
    if (reverse) {
        /* the shard containing the key just before `key`: begin < key <= end */
        size_t lo = 0, hi = db->nshards;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cfdb_bytes_cmp(db->shards[mid].end, key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        i = lo;
        if (i < db->nshards && cfdb_bytes_cmp(db->shards[i].begin, key) < 0)
            return &db->shards[i];
        return NULL;
    }
    i = shard_search(db, key);
    if (i < db->nshards && cfdb_bytes_cmp(db->shards[i].begin, key) <= 0)
        return &db->shards[i];
    return NULL;
}

static void remove_shard(cfdb_db *db, size_t i)
{
    free((void *)db->shards[i].begin.ptr);
    free((void *)db->shards[i].end.ptr);
    memmove(&db->shards[i], &db->shards[i + 1], (db->nshards - i - 1) * sizeof *db->shards);
    db->nshards--;
}

void cfdb_db_invalidate(cfdb_db *db, cfdb_bytes key, bool reverse)
{
    const cfdb_shard *s = cfdb_db_cached_shard(db, key, reverse);
    if (s)
        remove_shard(db, (size_t)(s - db->shards));
}

static cfdb_bytes dup_bytes(cfdb_bytes b)
{
    uint8_t *p = malloc(b.len ? b.len : 1);
    if (p && b.len)
        memcpy(p, b.ptr, b.len);
    return cfdb_bytes_make(p, b.len);
}

static void insert_shard(cfdb_db *db, const cfdb_shard_location *loc)
{
    cfdb_bytes begin = loc->first.begin, end = loc->first.end;
    if (cfdb_bytes_cmp(begin, end) >= 0 || loc->second.count == 0)
        return;
    /* drop cached shards overlapping the new one */
    size_t i = shard_search(db, cfdb_bytes_make(begin.ptr, begin.len));
    while (i < db->nshards && cfdb_bytes_cmp(db->shards[i].begin, end) < 0) {
        if (cfdb_bytes_cmp(db->shards[i].end, begin) > 0)
            remove_shard(db, i);
        else
            i++;
    }
    if (db->nshards == db->cap_shards) {
        size_t cap = db->cap_shards ? db->cap_shards * 2 : 64;
        cfdb_shard *ns = realloc(db->shards, cap * sizeof *ns);
        if (!ns)
            return;
        db->shards = ns;
        db->cap_shards = cap;
    }
    i = shard_search(db, begin);
    memmove(&db->shards[i + 1], &db->shards[i], (db->nshards - i) * sizeof *db->shards);
    cfdb_shard *s = &db->shards[i];
    memset(s, 0, sizeof *s);
    s->begin = dup_bytes(begin);
    s->end = dup_bytes(end);
    for (uint32_t k = 0; k < loc->second.count && s->nservers < CFDB_SHARD_MAX_REPLICAS; k++) {
        const cfdb_storage_server_interface *ssi = &loc->second.items[k];
        cfdb_peer *p = cfdb_client_peer(db->cl, &ssi->getValue.endpoint.addresses.address);
        if (p)
            s->servers[s->nservers++] = (cfdb_endpoint_ref){ p, ssi->getValue.endpoint.token };
    }
    db->nshards++;
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
        else
            for (uint32_t i = 0; i < rep.results.count; i++)
                insert_shard(db, &rep.results.items[i]);
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
static void fetch_locations(cfdb_db *db, cfdb_bytes key, const cfdb_bytes *end, int32_t limit, bool reverse,
                            int64_t read_version, cfdb_waiter *w)
{
    for (location_request *lr = db->locating; lr; lr = lr->next) {
        if (lr->reverse == reverse && lr->limit == limit && (lr->end != NULL) == (end != NULL) &&
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
    req.tenant.tenantId = -1;
    req.minTenantVersion = read_version > 0 ? read_version : -2; /* else latestVersion */
    cfdb_db_ref(db);
    uint64_t id = cfdb_client_request(db->cl, proxy->peer,
                                      cfdb_adjusted_token(proxy->token, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                                      &cfdb_msg_get_key_server_locations_request, &req, &req.reply.token,
                                      on_location_reply, lr);
    if (!id)
        on_location_reply(lr, CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
}

void cfdb_db_fetch_location(cfdb_db *db, cfdb_bytes key, bool reverse, int64_t read_version, cfdb_waiter *w)
{
    fetch_locations(db, key, NULL, LOCATION_LIMIT, reverse, read_version, w);
}

void cfdb_db_fetch_range_locations(cfdb_db *db, cfdb_bytes begin, cfdb_bytes end, int32_t limit,
                                   int64_t read_version, cfdb_waiter *w)
{
    fetch_locations(db, begin, &end, limit, false, read_version, w);
}

bool cfdb_db_range_cached(cfdb_db *db, cfdb_bytes begin, cfdb_bytes end, int32_t limit)
{
    /* DatabaseContext::getCachedLocations: every shard from begin's to the one holding the key
     * before end is cached, with no gap, or `limit` of them are */
    const cfdb_shard *s = cfdb_db_cached_shard(db, begin, false);
    for (int32_t n = 1; s; n++) {
        if (n >= limit || cfdb_bytes_cmp(s->end, end) >= 0)
            return true;
        size_t i = (size_t)(s - db->shards) + 1;
        if (i >= db->nshards || !cfdb_bytes_eq(db->shards[i].begin, s->end))
            return false;
        s = &db->shards[i];
    }
    return false;
}
