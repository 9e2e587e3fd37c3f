/* A database handle's network-side state: cluster discovery through the coordinators
 * (OpenDatabaseCoordRequest long polls), the current GRV and commit proxies, batched read
 * versions, and the shard location cache. Runs on the network thread. */
#ifndef CFDB_CLIENT_DATABASE_H
#define CFDB_CLIENT_DATABASE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event_loop.h"
#include "net.h"

typedef struct cfdb_db cfdb_db;

/* An intrusive callback a caller embeds in its own state: no allocation per wait. */
#define CFDB_WAITER_MV_MAX 32
typedef struct cfdb_waiter cfdb_waiter;
struct cfdb_waiter {
    void (*fn)(cfdb_waiter *w, int error, int64_t value);
    cfdb_waiter *next;
    uint32_t flags; /* GRV priority flags */
    double tag_throttled_s; /* GRV replies: time the proxy queued the request for tag throttling */
    /* GRV replies: \xff/metadataVersion at that version (mv_len > CFDB_WAITER_MV_MAX: not kept) */
    bool mv_present;
    uint32_t mv_len;
    uint8_t mv[CFDB_WAITER_MV_MAX];
    /* GRV replies: the database is locked (a transaction that is not LOCK_AWARE fails with
     * database_locked, NativeAPI's getReadVersion check) */
    bool locked;
};

typedef struct cfdb_endpoint_ref {
    cfdb_peer *peer;
    cfdb_uid token;
} cfdb_endpoint_ref;

#define CFDB_SHARD_MAX_REPLICAS 8

typedef struct cfdb_shard {
    cfdb_bytes begin, end; /* owned */
    int nservers;
    cfdb_endpoint_ref servers[CFDB_SHARD_MAX_REPLICAS]; /* each a storage server's getValue base */
} cfdb_shard;

/* Creates the handle from a parsed connection string (description:id@addr,...).
 * Returns 0 or a FoundationDB error code (2104 connection_string_invalid). */
int cfdb_db_create(cfdb_client *cl, const char *connection_string, cfdb_db **out);
/* Users: the application's handle (from cfdb_db_create) and each transaction. When the last
 * goes, the database stops polling its coordinators and is freed once nothing is in flight. */
void cfdb_db_user_ref(cfdb_db *db);
void cfdb_db_user_unref(cfdb_db *db);

/* Any thread: the cluster's protocol version (ProtocolInfoRequest to the coordinator in use),
 * as soon as it differs from expected (0: the first one learned). A uint64 future. */
struct cfdb_future *cfdb_db_get_server_protocol(cfdb_db *db, uint64_t expected);

/* Any thread: the management calls (db_manage.c). create_snapshot: a void future (2509 for a
 * uid that is not 32 hex digits); force_recovery: a void future; reboot_worker: an int64
 * future, 1 once the reboot requests went out, 0 when an address is not a worker's or a worker
 * cannot be reached. NULL only when no future could be allocated. */
struct cfdb_future *cfdb_db_create_snapshot(cfdb_db *db, cfdb_bytes uid, cfdb_bytes command);
struct cfdb_future *cfdb_db_force_recovery(cfdb_db *db, cfdb_bytes dcid);
struct cfdb_future *cfdb_db_reboot_worker(cfdb_db *db, cfdb_bytes addresses, bool check, int duration);
/* getWorkerInterfaces: GetClientWorkersRequest to the cluster controller; a key-value future
 * of (worker address, ClientWorkerInterface in BinaryWriter IncludeVersion form). */
struct cfdb_future *cfdb_db_get_client_workers(cfdb_db *db);
/* The same, keeping only the workers that answer a GetLeaderRequest at their address within
 * CLI_CONNECT_TIMEOUT (worker_interfaces/verify). */
struct cfdb_future *cfdb_db_get_client_workers_verified(cfdb_db *db);
/* getHealthMetrics: GetHealthMetricsRequest to a GRV proxy; a value future holding the reply's
 * HealthMetrics in BinaryWriter IncludeVersion form (cfdb_health_metrics_decode). */
struct cfdb_future *cfdb_db_get_health_metrics(cfdb_db *db, bool detailed);
/* waitDataDistributionMetricsList: GetDDMetricsRequest to a commit proxy; a key-value future
 * of (shard begin key, shardBytes and shardBytesPerKSecond as two little-endian int64). */
struct cfdb_future *cfdb_db_get_dd_metrics(cfdb_db *db, cfdb_bytes begin, cfdb_bytes end);
/* checkSafeExclusions' commit-proxy request (exclusions): an int64 future, 1 safe, 0 not. */
struct cfdb_address_exclusion;
struct cfdb_future *cfdb_db_exclusion_safety_check(cfdb_db *db, const struct cfdb_address_exclusion *e, size_t n);

/* Any thread: libfdb_c's client status document (JSON, a key future): coordinators, proxies,
 * storage servers in the location cache, each connection's state and counters, health. */
struct cfdb_future *cfdb_db_get_client_status(cfdb_db *db);

/* Any thread: a value future for \xff\xff/connection_string, /cluster_file_path or /cluster_id
 * (the last waits until the cluster has answered, as getClusterId does). */
enum cfdb_db_text { CFDB_DB_CONNECTION_STRING, CFDB_DB_CLUSTER_FILE_PATH, CFDB_DB_CLUSTER_ID };
struct cfdb_future *cfdb_db_text_value(cfdb_db *db, enum cfdb_db_text which);

/* Network thread: a watch takes one of the database's MAX_WATCHES slots (false: none left,
 * too_many_watches) until it ends. */
bool cfdb_db_watch_acquire(cfdb_db *db);
void cfdb_db_watch_release(cfdb_db *db);

/* Some coordinator is marked :tls. */
bool cfdb_db_uses_tls(const cfdb_db *db);
/* The file to rewrite when the coordinators change (before the network starts). */
void cfdb_db_set_cluster_file(cfdb_db *db, const char *path);

/* A coordinator from the connection string. A hostname is resolved when a request is about to
 * go to it, in a helper thread (getaddrinfo blocks), and resolved again after a connection to
 * it fails, as libfdb_c drops its DNS cache entry then (tryGetReplyFromHostname). */
#define CFDB_MAX_COORDINATORS 16
typedef struct cfdb_db_coord {
    cfdb_network_address addr; /* meaningful when !hostname or resolved */
    uint8_t v6[16];
    bool hostname;
    bool resolved;
    bool resolving;
    bool tls;
    char host[256];
    char service[32];
} cfdb_db_coord;
/* Network thread: the coordinators of the connection string in use (i < cfdb_db_coord_count). */
int cfdb_db_coord_count(cfdb_db *db);
const cfdb_db_coord *cfdb_db_coord_at(cfdb_db *db, int i);

/* State the layers above keep per database (the special key space's modules), one opaque
 * slot each: cfdb_db_slot returns the slot's state, made by make() at the first call that
 * finds it empty (NULL when make fails: the next call tries again) and freed by free_fn with
 * the database. Any thread. */
typedef enum cfdb_db_slot_id {
    CFDB_DB_SLOT_PROFILER_CONF, /* \xff\xff/actor_profiler_conf/'s map */
    CFDB_DB_SLOT_HEALTH_CACHE,  /* DatabaseContext::healthMetrics and its update times */
    CFDB_DB_SLOT_COUNT
} cfdb_db_slot_id;
void *cfdb_db_slot(cfdb_db *db, cfdb_db_slot_id id, void *(*make)(void), void (*free_fn)(void *));

/* The global-config view the database keeps up to date (global_config.h; NULL when it could
 * not be allocated: reads then see an empty configuration). */
struct cfdb_gc_view *cfdb_db_gc_view(cfdb_db *db);
void cfdb_db_ref(cfdb_db *db);
/* Drops a reference (any thread); the database is freed on the network thread. */
void cfdb_db_unref(cfdb_db *db);
cfdb_client *cfdb_db_client(cfdb_db *db);

/* Starts discovery (network thread). */
void cfdb_db_start(cfdb_db *db);

/* Calls w->fn(w, 0, 0) once proxies are known (at once if they are). */
void cfdb_db_when_ready(cfdb_db *db, cfdb_waiter *w);
/* Picks a commit / GRV proxy (round robin); NULL if none are known. */
const cfdb_endpoint_ref *cfdb_db_commit_proxy(cfdb_db *db);
const cfdb_endpoint_ref *cfdb_db_grv_proxy(cfdb_db *db);

/* A read version for w (w->flags: CFDB_GRV_* priority flags); requests that arrive while
 * one is in flight share the next one. w->fn(w, error, version). */
void cfdb_db_get_read_version(cfdb_db *db, cfdb_waiter *w);
/* USE_GRV_CACHE (network thread): the cached read version if libfdb_c would use it for a
 * transaction of these priority flags — at most MAX_VERSION_CACHE_LAG (0.1 s) old, and
 * ratekeeper has not throttled this priority in the last GRV_CACHE_RK_COOLDOWN (60 s) —
 * else 0 (then ask with cfdb_db_get_read_version). The first call starts the database's
 * background updater, which keeps the cache fresh (backgroundGrvUpdater). */
int64_t cfdb_db_cached_read_version(cfdb_db *db, uint32_t flags);
/* The network option DISABLE_CLIENT_BYPASS (any thread): libfdb_c then keeps the
 * multi-version client's shared state, which USE_GRV_CACHE needs (without it the option
 * fails with invalid_option). */
void cfdb_db_allow_grv_cache(void);
/* A commit's version, sent at sent_ns, for the GRV cache (tryCommit's updateCachedReadVersion). */
void cfdb_db_update_cached_read_version(cfdb_db *db, int64_t version, uint64_t sent_ns);
bool cfdb_db_grv_cache_allowed(void);

/* Tenants (NativeAPI's TenantInfo in getKeyLocation and friends): `tenant` is a tenant id, or
 * -1 for none. With a tenant, keys given and shard bounds returned are relative to the
 * tenant's prefix (its id as 8 big-endian bytes); the cache itself is keyed by absolute key,
 * and a shard bound outside the tenant reads as "" (begin) or "\xff\xff" (end)
 * (toPrefixRelativeRange). Lookups send the relative key with TenantInfo; the proxy answers
 * absolute ranges.
 *
 * The cached shard holding key (reverse: the key just before it), or NULL; nservers >= 1.
 * A view of the location cache: valid until the next cache change or the next call of this
 * function (copy what you keep). */
const cfdb_shard *cfdb_db_cached_shard(cfdb_db *db, int64_t tenant, cfdb_bytes key, bool reverse);
/* Asks a commit proxy where key lives and caches the answer; w->fn(w, error, 0).
 * read_version (0 if unknown) goes in minTenantVersion, as NativeAPI sends it. */
void cfdb_db_fetch_location(cfdb_db *db, int64_t tenant, cfdb_bytes key, bool reverse, int64_t read_version,
                            cfdb_waiter *w);
/* getKeyRangeLocations' request: the shards of [begin, end), at most limit of them, cached as
 * they come (GetKeyServerLocationsRequest with that end and limit). w->fn(w, error, 0). */
void cfdb_db_fetch_range_locations(cfdb_db *db, int64_t tenant, cfdb_bytes begin, cfdb_bytes end, int32_t limit,
                                   int64_t read_version, cfdb_waiter *w);
/* Whether the cache holds the shards of [begin, end) with no gap, or the first limit of them
 * (getCachedLocations): then getKeyRangeLocations asks nothing. begin < end. */
bool cfdb_db_range_cached(cfdb_db *db, int64_t tenant, cfdb_bytes begin, cfdb_bytes end, int32_t limit);
/* Forgets the cached shard holding key (after wrong_shard_server). */
void cfdb_db_invalidate(cfdb_db *db, int64_t tenant, cfdb_bytes key, bool reverse);
/* How many shards the location cache holds (any thread; as of the last change). The cache
 * keeps at most max(LOCATION_CACHE_SIZE, 1), default 600000. */
size_t cfdb_db_location_cache_count(cfdb_db *db);
/* 0, or the error a read at this version fails with before any request (network thread). */
int cfdb_db_validate_version(const cfdb_db *db, int64_t version);
/* ClientDBInfo.tenantMode (0 disabled, 1 optional, 2 required), and whether the GRV proxies
 * it came with are real ones (not provisional): NativeAPI's getTenantInfo refuses a tenant
 * in a disabled cluster only then. Network thread. */
int cfdb_db_tenant_mode(const cfdb_db *db, bool *proxies_final);

/* Database options (FDBDatabaseOption). The transaction defaults among them are kept and
 * replayed on every new or reset transaction; returns 0 or invalid_option_value. */
int cfdb_db_set_option(cfdb_db *db, int option, const uint8_t *value, int length);
/* Calls apply(tx, txn_option, value, length) for each transaction default. Any thread. */
void cfdb_db_apply_defaults(cfdb_db *db, void *tx, int (*apply)(void *tx, int option, const uint8_t *v, int len));

/* A coordinator to ask (round robin over the cluster file's), and the cluster key
 * "description:id". */
cfdb_peer *cfdb_db_coordinator(cfdb_db *db);
const char *cfdb_db_cluster_key(const cfdb_db *db);

/* \xff\xff/status/json's coordinator work (network thread). A status read keeps the leader
 * monitor running (started by the first, stopped 120 s after the last): one GetLeaderRequest
 * long poll per coordinator. */
void cfdb_db_status_monitor(cfdb_db *db);
/* w->fn(w, 0, 0) once the monitor knows the leader, or an error after 2 s without one. */
void cfdb_db_status_leader_wait(cfdb_db *db, cfdb_waiter *w);
/* The leader's serializedInfo (valid until the loop runs again: copy it), or false. */
bool cfdb_db_status_leader(cfdb_db *db, cfdb_bytes *serialized_info, bool *forward);
/* Checks every coordinator (GetLeaderRequest, then ProtocolInfoRequest each); w->fn(w, 0, 1)
 * when a majority answered GetLeader (quorum_reachable), w->fn(w, 0, 0) otherwise. */
void cfdb_db_check_coordinators(cfdb_db *db, cfdb_waiter *w);

/* The most recent committed version this client has seen (for causality of watches). */
int64_t cfdb_db_last_seen_version(const cfdb_db *db);
void cfdb_db_note_version(cfdb_db *db, int64_t v);

#endif
