/* Internals of a database handle (struct cfdb_db) shared by the files that implement it:
 *   database.c      creation, references and shutdown, options, watches slots
 *   db_discovery.c  coordinators, hostname resolution, ClientDBInfo long polls, global config
 *   db_grv.c        read versions batched per priority flags
 *   db_locations.c  the shard location cache (over location_cache.c) and its lookups
 *   db_info.c       protocol version, client status JSON, \xff\xff/connection_string etc.
 *   db_status.c     \xff\xff/status/json's leader monitor and coordinators check
 * Everything here runs on the network thread unless a comment says otherwise; nothing outside
 * these files includes this header. */
#ifndef CFDB_CLIENT_DB_INTERNAL_H
#define CFDB_CLIENT_DB_INTERNAL_H

#include <pthread.h>

#include "error_codes.h"
#include "cluster_file.h"
#include "database.h"
#include "location_cache.h"

#define MAX_COORDINATORS CFDB_MAX_COORDINATORS
#define MAX_PROXIES 8
#define COORDINATOR_RECONNECTION_DELAY_NS 1000000000ull /* COORDINATOR_RECONNECTION_DELAY */
#define GRV_RETRY_DELAY_NS 10000000ull                   /* LOAD_BALANCE_START_BACKOFF */
#define LOCATION_LIMIT 100

/* A read-version batcher (db_grv.c): waiters for one set of GRV flags. */
#define GRV_BATCHERS 32
typedef struct grv_flight grv_flight;
typedef struct grv_batcher {
    cfdb_db *db;
    bool used;
    uint32_t flags;
    cfdb_waiter *pending, *pending_tail; /* FIFO, not sent yet */
    uint32_t npending;
    uint32_t in_flight;  /* batches sent and not answered */
    double window_ns;    /* libfdb_c's batchTime */
    cfdb_timer window;   /* closes the current window */
} grv_batcher;

typedef struct location_request {
    cfdb_db *db;
    cfdb_waiter *waiters;
    uint8_t *key;
    uint32_t key_len;
    bool reverse;
    /* a range lookup (getKeyRangeLocations): [key, end) with its shard limit; end == NULL
     * for a single key's (getKeyLocation: no end, LOCATION_LIMIT) */
    uint8_t *end;
    uint32_t end_len;
    int32_t limit;
    int64_t tenant; /* -1, or the tenant key and end are relative to */
    struct location_request *next;
} location_request;

typedef cfdb_db_coord coordinator; /* (database.h) */

struct cfdb_db {
    cfdb_client *cl;
    atomic_int refs;  /* memory: users (together one), requests in flight, tasks */
    atomic_int users; /* the application's handle and its transactions */
    cfdb_task free_task, shutdown_task; /* posted by the last unref / user unref */
    atomic_int max_watches; /* MAX_WATCHES (default 10,000) */
    int watches;            /* outstanding, network thread */
    /* DatabaseContext::minAcceptableReadVersion: the lowest read version a GRV proxy has
     * given this database (network thread); reads below it fail with 1007 locally */
    int64_t min_acceptable_rv;
    bool closing;     /* no user left: discovery stopped */

    char cluster_key[256];
    coordinator coordinators[MAX_COORDINATORS];
    int ncoordinators;
    unsigned coordinators_epoch; /* bumped when the coordinators are replaced */
    /* what OpenDatabaseCoordRequest carries: addresses and hostnames as written */
    cfdb_network_address req_addresses[MAX_COORDINATORS];
    cfdb_hostname req_hostnames[MAX_COORDINATORS];

    /* discovery */
    bool started;
    cfdb_uid known_info_id;
    int coordinator_index;
    int failed_in_round;
    bool poll_waiting_dns; /* the coordinator to poll is being resolved */
    uint64_t poll_request;
    cfdb_timer poll_retry;
    cfdb_open_database_coord_request poll;

    cfdb_uid cluster_id; /* ClientDBInfo.clusterId */
    cfdb_uid memory_record_id; /* names a database made from a connection string */

    /* proxies */
    bool have_proxies;
    cfdb_endpoint_ref grv[MAX_PROXIES], commit[MAX_PROXIES];
    int ngrv, ncommit;
    unsigned next_grv, next_commit;
    cfdb_waiter *ready_waiters;

    /* read versions: one batcher per request flags (db_grv.c) */
    grv_batcher grv_b[GRV_BATCHERS];
    grv_flight *grv_free; /* in-flight batch records, kept for reuse */
    cfdb_timer grv_retry; /* a batch whose proxy went away, sent again */
    /* the GRV cache (USE_GRV_CACHE): DatabaseContext's cachedReadVersion / lastGrvTime,
     * lastProxyRequestTime, lastRk*ThrottleTime, and backgroundGrvUpdater's state */
    int64_t grv_cache_version;
    uint64_t grv_cache_time_ns;      /* when the request that brought it was sent */
    uint64_t grv_last_proxy_ns;
    uint64_t grv_rk_default_ns, grv_rk_batch_ns; /* 0: never throttled */
    bool grv_updater_started, grv_updater_waiting;
    double grv_updater_delay_ns;     /* grvDelay */
    uint64_t grv_updater_sent_ns;
    cfdb_waiter grv_updater_waiter;
    cfdb_timer grv_updater;
    int64_t last_version;

    /* GlobalConfig::updater's first refresh (lastKnown -1) once proxies are known: 0 not
     * sent, 1 in flight or waiting to retry, 2 answered */
    int gc_state;
    double gc_backoff_s;
    cfdb_timer gc_retry;
    /* global config: the view GlobalConfig keeps (global_config.h);
     * NULL when it could not be allocated (reads then see an empty configuration) */
    struct cfdb_gc_view *gc_view;
    /* the upper layers' per-database state (cfdb_db_slot), made at first use */
    struct {
        void *state;
        void (*free_fn)(void *);
    } slots[CFDB_DB_SLOT_COUNT];

    /* coordinator changes (ClientDBInfo.forward): the new string is written back to the
     * cluster file once the new coordinators have answered, as libfdb_c does */
    char *cluster_file;
    cfdb_cluster_string forwarded;
    bool persist_pending;

    /* transaction defaults from database options: {transaction option, value} */
    pthread_mutex_t opt_mu;
    struct {
        int option;
        uint8_t value[8];
        int length;
    } defaults[16];
    int ndefaults;

    /* \xff\xff/status/json's leader monitor (StatusClient::statusFetcher's monitorLeader):
     * one GetLeaderRequest long poll per coordinator while status is read, stopped after
     * STATUS_IDLE_TIMEOUT without a status read */
    struct status_nominee {
        uint64_t request;
        struct sm_ctx *ctx; /* the request's context (freed with it) */
        bool have;
        bool forward;
        cfdb_uid change;
        uint8_t *info; /* the LeaderInfo's serializedInfo (malloc'ed) */
        uint32_t info_len;
    } sm[MAX_COORDINATORS];
    bool sm_running;
    int sm_count;
    uint64_t sm_last_fetch_ns;
    cfdb_timer sm_idle, sm_retry, sm_wait;
    cfdb_waiter *sm_waiters;
    struct coord_check *checks; /* coordinators checks in flight (some wait for a name lookup) */

    /* shard locations (db_locations.c): each cached location's servers hold a reference on
     * their peers; loc_max is LOCATION_CACHE_SIZE (set from any thread, applied before each
     * insert); loc_count mirrors the cache's size for other threads (tests) */
    cfdb_location_cache locs;
    cfdb_shard shard_view; /* what cfdb_db_cached_shard returned last */
    atomic_llong loc_max;
    atomic_size_t loc_count;
    location_request *locating;
    /* absolute forms of tenants' keys for cache lookups (db_locations.c) */
    uint8_t *abs_buf[2];
    size_t abs_cap[2];

    /* ClientDBInfo.tenantMode, and whether its first GRV proxy was not provisional */
    int tenant_mode;
    bool tenant_mode_final;
};

/* database.c */
/* Calls every waiter of *list with error, emptying it. */
void db_fail_list(cfdb_waiter **list, int error);

/* db_discovery.c */
void db_discovery_init(cfdb_db *db);
/* Coordinators from a parsed connection string; 0 or connection_string_invalid. */
int db_install_coordinators(cfdb_db *db, const cfdb_cluster_string *cs);
/* Starts resolving coordinator i's hostname unless under way; false if it cannot start. */
bool db_start_resolve(cfdb_db *db, int i);
/* The address to use for coordinator i, or NULL while its hostname is unresolved. */
const cfdb_network_address *db_coordinator_address(const cfdb_db *db, int i);
/* Empties the proxy lists, releasing their peers. */
void db_release_proxies(cfdb_db *db);

/* db_grv.c */
void db_grv_init(cfdb_db *db);
/* At the database's end: queued waiters fail with operation_cancelled, records are freed. */
void db_grv_free(cfdb_db *db);
/* Users gone: the GRV cache's background updater stops. */
void db_grv_shutdown(cfdb_db *db);
/* Proxies became known: sends the read versions that waited for them. */
void db_grv_proxies_ready(cfdb_db *db);

/* db_locations.c */
int db_locations_init(cfdb_db *db); /* 0 or platform_error */
void db_locations_free(cfdb_db *db);
/* Calls fn for each distinct (peer, token) among the cached storage servers, at most cap. */
void db_locations_servers(cfdb_db *db, void (*fn)(void *ctx, cfdb_peer *peer, cfdb_uid token), void *ctx);

/* db_status.c */
void db_status_init(cfdb_db *db);
void db_status_monitor_stop(cfdb_db *db);
/* Coordinator index's hostname lookup ended (ok: resolved): the checks waiting for it go on. */
void db_check_resolved(cfdb_db *db, int index, bool ok);

#endif
