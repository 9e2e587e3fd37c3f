/* The dev server's core, which every role builds on: the shared state (struct cfdb_server:
 * listeners, connections, the endpoint table, parked requests, versions, batching queues,
 * faults, counters) and the services implemented by server.c (transport, replies,
 * parking, versions, logging) and dispatch.c (endpoint registration and lookup, routing
 * a request to its role, storage interfaces as published to clients).
 * A role includes this header and the headers of only the roles it calls into; each
 * role's entry points are declared in its own header (coordinator.h, grv_proxy.h,
 * commit_proxy.h, storage_server.h, management.h, status.h, control.h, system_keys.h).
 * Everything runs on one event-loop thread; nothing here is thread-safe. */
#ifndef CFDB_SERVER_SRV_CORE_H
#define CFDB_SERVER_SRV_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfdb/arena.h"
#include "connection.h"
#include "event_loop.h"
#include "messages.h"
#include "uid.h"

#include "conflict_resolver.h"
#include "mvcc_store.h"
#include "server.h"
#include "shard_map.h"

#define SRV_MAX_LISTENERS 40
#define SRV_MVCC_WINDOW 5000000
#define SRV_FUTURE_VERSION_DELAY_NS 1000000000ull
#define SRV_WATCH_TIMEOUT_NS (30ull * 1000000000ull)
#define SRV_OPEN_DATABASE_TIMEOUT_NS (600ull * 1000000000ull)

typedef struct cfdb_server srv;
typedef struct srv_conn srv_conn;

/* What a registered token leads to. */
typedef enum srv_role {
    ROLE_COORDINATOR = 1, /* well-known tokens */
    ROLE_CLUSTER,         /* cluster controller's ClusterInterface */
    ROLE_GRV,
    ROLE_COMMIT,
    ROLE_STORAGE,
    ROLE_WORKER, /* ClientWorkerInterface.reboot */
} srv_role;

typedef struct srv_endpoint {
    cfdb_uid token;
    uint8_t role;
    uint8_t used;
    uint16_t index;   /* stream index within the interface */
    int32_t owner;    /* storage server index, or -1 */
    int32_t listener; /* listener the endpoint lives on */
} srv_endpoint;

/* One listening socket: a "process" of the simulated cluster. */
typedef struct srv_listener {
    srv *s;
    int fd;
    uint16_t port;
    bool unreachable; /* closed on purpose; connections refused */
    const char *name;
} srv_listener;

/* A connection and the replies that may still be owed on it. */
struct srv_conn {
    srv *s;
    cfdb_conn *conn;
    int listener;
    bool open;     /* false once on_closed ran */
    int refs;      /* parked requests holding this */
    srv_conn *next, *prev;
};

/* A request whose reply is sent later (long poll, watch, future version wait, delay). */
typedef struct srv_parked srv_parked;
typedef void (*srv_parked_fn)(srv *s, srv_parked *p, bool timed_out);
struct srv_parked {
    srv *s;
    srv_conn *c;
    cfdb_uid reply;
    int kind;
    cfdb_timer timer;
    srv_parked_fn fn;
    srv_parked *next, *prev;
    /* request copy, kind-specific */
    uint8_t *msg;       /* owned copy of the raw request message */
    uint32_t msg_len;
    cfdb_uid token;     /* endpoint it was addressed to */
    int64_t version;    /* watch: version; waits: target version */
    uint8_t *key;       /* watch key (owned) */
    uint32_t key_len;
    uint8_t *value;     /* watch value (owned), NULL if absent */
    uint32_t value_len;
    bool value_present;
    int32_t owner;      /* storage server index */
    int64_t tenant;     /* watch: the tenant it was set in, -1 none */
    uint64_t deadline_ns;
};

enum srv_parked_kind {
    PARK_OPEN_DATABASE = 1,
    PARK_GET_LEADER,
    PARK_WATCH,
    PARK_RETRY, /* a storage read waiting for its version */
    PARK_DELAYED_REPLY,
    PARK_TENANT_ID,        /* GetTenantIdRequest waiting for its minTenantVersion */
    PARK_TENANT_LOCATIONS, /* GetKeyServerLocationsRequest (tenant not found yet) likewise */
};

typedef struct srv_storage {
    cfdb_uid id;
    cfdb_uid base; /* getValue token; derived streams by index */
    int listener;
    char machine_id[33], process_id[33];
} srv_storage;

/* Commit requests collected during one loop iteration form a batch. */
typedef struct srv_pending_commit {
    srv_conn *c;
    cfdb_uid reply;
    uint8_t *msg;
    uint32_t msg_len;
} srv_pending_commit;

typedef struct srv_pending_grv {
    srv_conn *c;
    cfdb_uid reply;
} srv_pending_grv;

typedef struct srv_faults {
    uint64_t delay_ns;          /* every reply waits this long */
    int fail_commits;           /* next N commits answer commit_unknown_result */
    bool fail_commits_applied;  /* ... after applying them */
    int future_version_reads;   /* next N storage reads answer future_version */
    int drop_after_commits;     /* reserved */
} srv_faults;

struct cfdb_server {
    cfdb_loop *loop;
    cfdb_server_config cfg;
    FILE *trace;        /* --trace-frames */
    uint64_t trace_seq;
    char cluster_desc[64], cluster_id[64];
    uint64_t rng;

    srv_listener listeners[SRV_MAX_LISTENERS];
    int nlisteners;
    cfdb_tls_ctx *tls; /* NULL: plaintext */
    int coord_listener, grv_listener, commit_listener;

    /* endpoint table: open addressing on token */
    srv_endpoint *eps;
    size_t eps_cap, eps_count;

    srv_conn conns;      /* sentinel */
    /* connection limits (server.c): buffer memory, count, descriptor exhaustion */
    cfdb_conn_pool pool;
    int nconns, max_conns;
    int spare_fd;            /* given up to accept and refuse a connection at EMFILE */
    cfdb_timer accept_timer; /* listeners paused after EMFILE/ENFILE */
    uint64_t accept_backoff_ns, refuse_log_ns, refused;
    srv_parked parked;   /* sentinel */

    /* roles */
    cfdb_uid cluster_id_uid;
    cfdb_uid client_info_id;  /* ClientDBInfo generation */
    /* global config: the history ClientDBInfo carries (global_config.c) */
    cfdb_arena gc_arena;
    cfdb_version_history *gc_history;
    size_t gc_nhistory;
    cfdb_uid grv_base, commit_base, cc_base;
    cfdb_uid leader_change_id;
    char proxy_process_id[33];
    cfdb_uid log_id; /* the transaction log's id (\xff/logs) */
    cfdb_uid worker_base; /* ClientWorkerInterface streams (management.c) */
    cfdb_timer reboot_timer;
    uint32_t reboot_wait_s;
    char forward[512]; /* coordinators moved: the new connection string ("" = none) */
    /* cluster keys ("desc:id") served before a coordinators change: they forward to the
     * current connection string (coord_change.c); the oldest is dropped past SRV_OLD_KEYS */
#define SRV_OLD_KEYS 8
    char old_keys[SRV_OLD_KEYS][128];
    int n_old_keys;
    /* coordination servers (coord_change.c): every coordinator listener (coord_listener
     * first, then the --coordinator ones) and those the current connection string names, in
     * its order */
#define SRV_MAX_COORDS 8
    int coord_listeners[SRV_MAX_COORDS], n_coord_listeners;
    int coord_set[SRV_MAX_COORDS], n_coord_set;
    srv_storage *storage;
    int nstorage;
    srv_shard_map shards;

    /* data */
    cfdb_mvcc_store *store;
    cfdb_resolver *resolver;
    uint64_t start_ns;
    int64_t base_version; /* version at start_ns */
    int64_t last_commit_version;

    /* batching */
    cfdb_timer batch_timer;
    srv_pending_grv *grvs;
    size_t ngrvs, grvs_cap;
    srv_pending_commit *commits;
    size_t ncommits, commits_cap;

    cfdb_timer maint_timer;

    /* durability */
    struct srv_wal *wal;

    /* faults */
    srv_faults faults;

    /* control */
    int control_fd;
    uint16_t control_port;
    struct srv_control_client *controls;

    /* counters (status) */
    uint64_t n_commits, n_conflicts, n_grvs, n_reads, n_writes, n_unknown;
    uint64_t n_grv_requests; /* GetReadVersionRequests received (n_grvs counts their transactions) */
    /* batching (status): batches flushed, requests / transactions in them, the largest */
    uint64_t n_commit_batches, n_commit_batched, max_commit_batch;
    uint64_t n_grv_batches, n_grv_batched, max_grv_batch;
    uint64_t n_mapped_requests; /* GetMappedKeyValuesRequests received (Record Layer remote fetch) */
    uint64_t n_read_rows;       /* rows range and mapped range reads returned (index entries for mapped) */
    uint64_t n_health_requests, n_health_detailed; /* GetHealthMetricsRequests received, detailed ones */
    /* configuration database (config_node.c): the node's state, requests received */
    struct srv_config_node *config_node;
    uint64_t n_config_requests;
    uint64_t n_config_adopted; /* coordinators hashes adopted (a client's std::hash is not libstdc++'s) */
    /* configuration (db_config.c) */
    int tenant_mode; /* TenantMode: 0 disabled, 1 optional, 2 required */
    bool db_locked;  /* \xff/dbLocked set */
    bool started;
    bool cluster_file_written;
};

/* ---- server.c ---- */
uint64_t srv_random64(srv *s);
cfdb_uid srv_random_uid(srv *s);
/* Rewrites --cluster-file with the current connection string (server.c). */
int srv_write_cluster_file(srv *s);
/* A fresh random stream base token (bit 0 of first set, room for derived streams). */
cfdb_uid srv_random_base(srv *s);
int64_t srv_clock_version(srv *s);
/* Makes the store's latest version at least the clock (empty version): the read version. */
int64_t srv_advance_version(srv *s);
cfdb_network_address srv_listener_address(srv *s, int listener);
/* Sends a reply now, or after the injected delay. */
void srv_reply(srv *s, srv_conn *c, cfdb_uid reply, const fb_message *m, const void *item, cfdb_reply_error err);
void srv_conn_ref(srv_conn *c);
void srv_conn_unref(srv_conn *c);
srv_parked *srv_park(srv *s, srv_conn *c, cfdb_uid reply, int kind, srv_parked_fn fn, uint64_t timeout_ns);
void srv_unpark(srv *s, srv_parked *p); /* frees it */
void srv_log(srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void srv_drop_connections(srv *s, int listener); /* -1 = all */
int srv_set_unreachable(srv *s, int listener, bool unreachable);
void srv_bytes_repr(cfdb_bytes b, char *out, size_t cap);
/* A request that does not decode as what its endpoint takes: logged, and the connection is
 * closed so that nothing the peer sent on it waits for an answer that will never come.
 * (fdbrpc/FlowTransport.actor.cpp deliver(): a receiver that fails to deserialize makes
 * a server process exit, which its peers see as the connection failing.) */
void srv_bad_request(srv *s, srv_conn *c, const char *what);

/* ---- dispatch.c ---- */
int srv_endpoints_init(srv *s);
void srv_endpoints_free(srv *s);
int srv_register(srv *s, cfdb_uid token, srv_role role, uint16_t index, int32_t owner, int32_t listener);
int srv_register_interface(srv *s, cfdb_uid base, int nstreams, srv_role role, int32_t owner, int32_t listener);
void srv_unregister_interface(srv *s, cfdb_uid base, int nstreams);
const srv_endpoint *srv_lookup(const srv *s, cfdb_uid token);
void srv_dispatch(srv *s, srv_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len);
/* Logs the request by name and answers endpoint-not-found (the client fails over). */
void srv_unsupported(srv *s, srv_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len);
int64_t srv_next_commit_version(srv *s);
/* Storage server i's interface as clients see it (key-location replies, \xff/serverList). */
void ss_fill_interface(srv *s, int ss, cfdb_arena *a, cfdb_storage_server_interface *out);

/* ---- batching (dispatch.c: the batch timer flushes both proxies' queues) ---- */
void srv_batch_init(srv *s);
/* Arms the batch timer for this loop iteration (queued GRVs/commits, an unblocked log). */
void srv_batch_schedule(srv *s);

#endif
