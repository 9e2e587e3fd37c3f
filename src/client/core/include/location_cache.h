/* The client's key-location cache (DatabaseContext::locationCache in
 * NativeAPI.actor.cpp): key ranges -> the storage servers holding them. Gaps are
 * "unknown". Lookup by key (forward) or by the key before (reverse reads),
 * insertion of GetKeyServerLocationsReply results, invalidation of the range
 * containing a key or of every range intersecting a range, and a size bound with
 * random eviction: the database option LOCATION_CACHE_SIZE, default
 * CLIENT_KNOBS->LOCATION_CACHE_EVICTION_SIZE (600000; fdb.options' text says 100000,
 * the code uses the knob). As setCachedLocation, up to 100 random ranges are evicted
 * before an insert while the cache is full; a range being inserted is never evicted,
 * so after each insert the cache holds at most max(max_ranges, 1) ranges (unless the
 * bound was just lowered by more than that: it then shrinks by up to 100 per insert).
 *
 * Invariants: cached ranges do not overlap; nodes[0..map.count) lists each range's
 * node once (range->slot is its index), so an evicted range is uniformly random, as
 * FDB's randomRange; each holds one reference on its
 * location; a location's `drop` hook (if set) runs when its last reference goes, so
 * an owner can release what its servers' `peer` handles hold. Sans-I/O, one thread. */
#ifndef CFDB_CLIENT_LOCATION_CACHE_H
#define CFDB_CLIENT_LOCATION_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/bytes.h"
#include "messages.h"
#include "uid.h"
#include "omap.h"

/* What the engine needs to talk to one storage server. Other streams' tokens
 * derive from get_value_token with cfdb_adjusted_token(token, stream index). */
typedef struct cfdb_loc_server {
    cfdb_uid id;              /* StorageServerInterface.uniqueID */
    cfdb_network_address addr; /* primary address; addr.ip.v6 points at v6 below */
    uint8_t v6[16];
    bool has_secondary;
    cfdb_network_address secondary;
    uint8_t secondary_v6[16];
    cfdb_uid get_value_token; /* getValue endpoint token (stream 0) */
    bool has_tss_pair;
    cfdb_uid tss_pair_id;
    void *peer; /* the owner's handle for the connection to addr (NULL: none); see drop */
} cfdb_loc_server;

/* An immutable, reference-counted server list. */
typedef struct cfdb_location cfdb_location;
struct cfdb_location {
    uint32_t refs;
    uint32_t count;
    void (*drop)(cfdb_location *loc); /* called once refs reach 0, before the memory goes */
    cfdb_loc_server servers[];
};

/* Copies a decoded interface into a cfdb_loc_server. */
void cfdb_loc_server_from_interface(cfdb_loc_server *out, const cfdb_storage_server_interface *ssi);
/* A new location (refs = 1, no peers, no drop hook) from count interfaces; NULL if out
 * of memory. */
cfdb_location *cfdb_location_new(const cfdb_storage_server_interface *ssi, size_t count);
void cfdb_location_ref(cfdb_location *loc);
void cfdb_location_unref(cfdb_location *loc);

#define CFDB_LOCATION_CACHE_DEFAULT_SIZE 600000 /* LOCATION_CACHE_EVICTION_SIZE */
#define CFDB_LOCATION_CACHE_MAX_EVICTIONS 100  /* setCachedLocation's maxEvictionAttempts */

typedef struct cfdb_location_cache {
    cfdb_omap map; /* begin -> cfdb_loc_range* (malloc mode) */
    struct cfdb_omap_node **nodes; /* every node, in no order: random eviction picks one */
    size_t nodes_cap;
    size_t max_ranges;
    uint64_t rng;
    uint64_t evictions; /* ranges evicted so far (tests, status) */
} cfdb_location_cache;

typedef struct cfdb_loc_range {
    cfdb_bytes end; /* malloc'ed */
    cfdb_location *loc;
    size_t slot; /* index in cache->nodes */
} cfdb_loc_range;

/* max_ranges 0 means CFDB_LOCATION_CACHE_DEFAULT_SIZE. Returns 0 or unknown_error (4000, out of memory). */
int cfdb_location_cache_init(cfdb_location_cache *c, size_t max_ranges);
/* LOCATION_CACHE_SIZE: the bound from now on (0 allowed: only the range last inserted is
 * kept). Nothing is evicted until the next insert, as in FDB. */
static inline void cfdb_location_cache_set_max(cfdb_location_cache *c, size_t max_ranges)
{
    c->max_ranges = max_ranges;
}
void cfdb_location_cache_destroy(cfdb_location_cache *c);
static inline size_t cfdb_location_cache_size(const cfdb_location_cache *c)
{
    return c->map.count;
}

/* The cached range containing key (reverse=false) or the key just before key
 * (reverse=true: the range r with r.begin < key <= r.end). Returns the location
 * (not referenced: valid until the cache changes; take a ref to keep it) or NULL
 * when unknown; *begin / *end (may be NULL) receive the range (cache memory). */
cfdb_location *cfdb_location_cache_get(const cfdb_location_cache *c, cfdb_bytes key, bool reverse, cfdb_bytes *begin,
                                       cfdb_bytes *end);

/* One cached shard met by a range lookup, clipped to the looked-up range (bounds
 * point into the cache or into the caller's begin/end). */
typedef struct cfdb_loc_hit {
    cfdb_bytes begin, end;
    cfdb_location *loc;
} cfdb_loc_hit;

/* getCachedLocations: the cached shards covering [begin, end) in order (from the
 * end when reverse), at most limit (and at most cap) of them. Returns true when
 * they are all cached up to the limit; false (and *n = 0) when a gap is met first:
 * the caller then asks the proxies. */
bool cfdb_location_cache_get_ranges(const cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end, size_t limit,
                                    bool reverse, cfdb_loc_hit *out, size_t cap, size_t *n);

/* Records [begin, end) -> loc (takes a reference of its own); whatever was cached
 * over that range is replaced. Evicts random other ranges first when the cache is
 * full (see the top). Returns 0 or unknown_error (4000, out of memory). */
int cfdb_location_cache_insert(cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end, cfdb_location *loc);

/* Builds the location of one shard of a reply (NULL: the shard is not cached, e.g. none
 * of its servers is usable). */
typedef cfdb_location *(*cfdb_location_make_fn)(void *ctx, const cfdb_shard_location *shard);

/* Inserts the shards of a GetKeyServerLocationsReply, each with its own location (made
 * by make, or cfdb_location_new when make is NULL). The reply lists the shards from the
 * one asked about (holding the key, or the key before for a reverse lookup, or the
 * range's begin) outwards; when there are more than the bound allows only the first
 * max(max_ranges, 1) are kept, and they evict nothing of each other, so the shard asked
 * about is always cached afterwards. Returns 0 or unknown_error (4000, out of memory). */
int cfdb_location_cache_insert_reply(cfdb_location_cache *c, const cfdb_get_key_server_locations_reply *reply,
                                     cfdb_location_make_fn make, void *ctx);

/* invalidateCache(key[, isBackward]): the cached range containing key (or the key
 * before it) becomes unknown. */
void cfdb_location_cache_invalidate_key(cfdb_location_cache *c, cfdb_bytes key, bool reverse);
/* invalidateCache(range): every cached range intersecting [begin, end) becomes unknown. */
void cfdb_location_cache_invalidate_range(cfdb_location_cache *c, cfdb_bytes begin, cfdb_bytes end);
void cfdb_location_cache_clear(cfdb_location_cache *c);

#endif
