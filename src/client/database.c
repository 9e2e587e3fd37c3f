#include "database.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/endpoint.h"
#include "cfdb/errors.h"
#include "cfdb/network_address.h"
#include "cluster_file.h"
#include "future.h"
#include "json_writer.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#define MAX_COORDINATORS 16
#define MAX_PROXIES 8
#define COORDINATOR_RECONNECTION_DELAY_NS 1000000000ull /* COORDINATOR_RECONNECTION_DELAY */
#define GRV_RETRY_DELAY_NS 10000000ull                   /* LOAD_BALANCE_START_BACKOFF */
#define LOCATION_LIMIT 100

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
    struct location_request *next;
} location_request;

/* A coordinator from the connection string. A hostname is resolved when a request is about to
 * go to it, in a helper thread (getaddrinfo blocks), and resolved again after a connection to
 * it fails, as libfdb_c drops its DNS cache entry then (tryGetReplyFromHostname). */
typedef struct coordinator {
    cfdb_network_address addr; /* meaningful when !hostname or resolved */
    uint8_t v6[16];
    bool hostname;
    bool resolved;
    bool resolving;
    bool tls;
    char host[256];
    char service[32];
} coordinator;

struct cfdb_db {
    cfdb_client *cl;
    atomic_int refs;  /* memory: users (together one), requests in flight, tasks */
    atomic_int users; /* the application's handle and its transactions */
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

    /* read versions: one request in flight, the rest wait for the next */
    bool grv_in_flight;
    cfdb_waiter *grv_batch;   /* waiting for the reply in flight */
    cfdb_waiter *grv_pending; /* waiting for the next request */
    cfdb_timer grv_retry;
    int64_t last_version;

    /* GlobalConfig::updater's first refresh (lastKnown -1) once proxies are known: 0 not
     * sent, 1 in flight or waiting to retry, 2 answered */
    int gc_state;
    double gc_backoff_s;
    cfdb_timer gc_retry;

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

    /* shard locations, sorted by begin */
    cfdb_shard *shards;
    size_t nshards, cap_shards;
    location_request *locating;
};

cfdb_client *cfdb_db_client(cfdb_db *db)
{
    return db->cl;
}

int64_t cfdb_db_last_seen_version(const cfdb_db *db)
{
    return db->last_version;
}

void cfdb_db_note_version(cfdb_db *db, int64_t v)
{
    if (v > db->last_version)
        db->last_version = v;
}

/* ---- creation ---- */

static void poll_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void grv_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void gc_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void send_global_config(cfdb_db *db);
static void status_monitor_init(cfdb_db *db);
static void status_monitor_stop(cfdb_db *db);
static void check_resolved(cfdb_db *db, int index, bool ok);

/* Coordinators from a parsed connection string; hostnames stay unresolved until used. */
static int install_coordinators(cfdb_db *db, const cfdb_cluster_string *cs)
{
    snprintf(db->cluster_key, sizeof db->cluster_key, "%s", cs->key);
    db->ncoordinators = 0;
    db->coordinators_epoch++;
    for (size_t i = 0; i < cs->count && db->ncoordinators < MAX_COORDINATORS; i++) {
        const cfdb_coordinator *c = &cs->coords[i];
        coordinator *k = &db->coordinators[db->ncoordinators++];
        memset(k, 0, sizeof *k);
        k->tls = c->tls;
        if (c->is_hostname) {
            k->hostname = true;
            snprintf(k->host, sizeof k->host, "%s", c->host);
            snprintf(k->service, sizeof k->service, "%s", c->service);
            continue;
        }
        k->addr = c->addr;
        if (c->addr.ip.tag == 2) {
            memcpy(k->v6, c->v6, 16);
            k->addr.ip.v6.items = k->v6;
        }
    }
    return db->ncoordinators ? 0 : CFDB_ERR_CONNECTION_STRING_INVALID;
}

/* ---- hostname resolution (helper thread, result posted to the loop) ---- */

typedef struct resolve_job {
    cfdb_db *db;
    int index;
    unsigned epoch;
    char host[256], service[32];
    bool ok;
    cfdb_network_address addr;
    uint8_t v6[16];
} resolve_job;

static void send_poll(cfdb_db *db);
static void poll_failed(cfdb_db *db);

static void resolve_done(void *arg)
{
    resolve_job *job = arg;
    cfdb_db *db = job->db;
    if (job->epoch == db->coordinators_epoch && job->index < db->ncoordinators) {
        coordinator *k = &db->coordinators[job->index];
        k->resolving = false;
        if (job->ok) {
            bool tls = k->tls;
            k->addr = job->addr;
            k->addr.flags = tls ? CFDB_ADDR_FLAG_TLS : 0;
            k->addr.fromHostname = true;
            if (k->addr.ip.tag == 2) {
                memcpy(k->v6, job->v6, 16);
                k->addr.ip.v6.items = k->v6;
            }
            k->resolved = true;
        }
        check_resolved(db, job->index, job->ok);
        /* the discovery waiting for this coordinator goes on, or moves on (lookup_failed) */
        if (db->poll_waiting_dns && db->coordinator_index == job->index) {
            db->poll_waiting_dns = false;
            if (job->ok)
                send_poll(db);
            else
                poll_failed(db);
        }
    }
    free(job);
    cfdb_db_unref(db);
}

static void *resolve_thread(void *arg)
{
    resolve_job *job = arg;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo(job->host, job->service, &hints, &res) == 0 && res) {
        int n = 0;
        for (struct addrinfo *r = res; r; r = r->ai_next)
            if (r->ai_family == AF_INET || r->ai_family == AF_INET6)
                n++;
        /* one of the addresses, at random (INetworkConnections::pickOneAddress) */
        int pick = n ? (int)(cfdb_monotonic_ns() % (uint64_t)n) : 0;
        for (struct addrinfo *r = res; r; r = r->ai_next) {
            if (r->ai_family != AF_INET && r->ai_family != AF_INET6)
                continue;
            if (pick-- > 0)
                continue;
            if (r->ai_family == AF_INET) {
                const struct sockaddr_in *sa = (const struct sockaddr_in *)r->ai_addr;
                job->addr.ip.tag = 1;
                job->addr.ip.v4 = ntohl(sa->sin_addr.s_addr);
                job->addr.port = ntohs(sa->sin_port);
            } else {
                const struct sockaddr_in6 *sa = (const struct sockaddr_in6 *)r->ai_addr;
                memcpy(job->v6, &sa->sin6_addr, 16);
                job->addr.ip.tag = 2;
                job->addr.ip.v6.count = 16;
                job->addr.port = ntohs(sa->sin6_port);
            }
            job->ok = true;
            break;
        }
        freeaddrinfo(res);
    }
    if (cfdb_loop_post(cfdb_client_loop(job->db->cl), resolve_done, job) != 0) {
        cfdb_db_unref(job->db); /* the network is gone */
        free(job);
    }
    return NULL;
}

/* Starts resolving coordinator i unless already under way. False if no thread could start. */
static bool start_resolve(cfdb_db *db, int i)
{
    coordinator *k = &db->coordinators[i];
    if (k->resolving)
        return true;
    resolve_job *job = calloc(1, sizeof *job);
    if (!job)
        return false;
    job->db = db;
    job->index = i;
    job->epoch = db->coordinators_epoch;
    snprintf(job->host, sizeof job->host, "%s", k->host);
    snprintf(job->service, sizeof job->service, "%s", k->service);
    cfdb_db_ref(db);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, resolve_thread, job);
    pthread_attr_destroy(&attr);
    if (rc) {
        cfdb_db_unref(db);
        free(job);
        return false;
    }
    k->resolving = true;
    return true;
}

/* The address to use for coordinator i, or NULL while its hostname is unresolved. */
static const cfdb_network_address *coordinator_address(const cfdb_db *db, int i)
{
    const coordinator *k = &db->coordinators[i];
    return !k->hostname || k->resolved ? &k->addr : NULL;
}

int cfdb_db_create(cfdb_client *cl, const char *connection_string, cfdb_db **out)
{
    cfdb_cluster_string cs;
    int rc = cfdb_cluster_string_parse(connection_string, strlen(connection_string), &cs);
    if (rc)
        return rc < 0 ? CFDB_ERR_INTERNAL_ERROR : rc;
    cfdb_db *db = calloc(1, sizeof *db);
    if (!db) {
        cfdb_cluster_string_free(&cs);
        return CFDB_ERR_INTERNAL_ERROR;
    }
    db->cl = cl;
    atomic_init(&db->refs, 1);
    atomic_init(&db->users, 1);
    atomic_init(&db->max_watches, 10000); /* DEFAULT_MAX_OUTSTANDING_WATCHES */
    db->min_acceptable_rv = INT64_MAX;
    db->memory_record_id = (cfdb_uid){ cfdb_monotonic_ns() * 0x9E3779B97F4A7C15ull, (uint64_t)(uintptr_t)db };
    pthread_mutex_init(&db->opt_mu, NULL);
    rc = install_coordinators(db, &cs);
    cfdb_cluster_string_free(&cs);
    if (rc) {
        free(db);
        return rc;
    }
    cfdb_timer_init(&db->poll_retry, poll_retry_fire, db);
    cfdb_timer_init(&db->grv_retry, grv_retry_fire, db);
    cfdb_timer_init(&db->gc_retry, gc_retry_fire, db);
    status_monitor_init(db);
    *out = db;
    return 0;
}

bool cfdb_db_uses_tls(const cfdb_db *db)
{
    for (int i = 0; i < db->ncoordinators; i++)
        if (db->coordinators[i].tls)
            return true;
    return false;
}

void cfdb_db_ref(cfdb_db *db)
{
    atomic_fetch_add(&db->refs, 1);
}

static void free_shards(cfdb_db *db)
{
    for (size_t i = 0; i < db->nshards; i++) {
        free((void *)db->shards[i].begin.ptr);
        free((void *)db->shards[i].end.ptr);
    }
    free(db->shards);
}

static void fail_list(cfdb_waiter **list, int error)
{
    while (*list) {
        cfdb_waiter *w = *list;
        *list = w->next;
        w->fn(w, error, 0);
    }
}

static void db_free(void *arg)
{
    cfdb_db *db = arg;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    cfdb_loop_timer_cancel(loop, &db->poll_retry);
    cfdb_loop_timer_cancel(loop, &db->grv_retry);
    cfdb_loop_timer_cancel(loop, &db->gc_retry);
    status_monitor_stop(db);
    cfdb_client_forget(db->cl, db->poll_request);
    fail_list(&db->ready_waiters, CFDB_ERR_OPERATION_CANCELLED);
    fail_list(&db->grv_pending, CFDB_ERR_OPERATION_CANCELLED);
    fail_list(&db->grv_batch, CFDB_ERR_OPERATION_CANCELLED);
    /* in-flight location/grv requests keep db alive through their own references */
    free_shards(db);
    if (db->persist_pending)
        cfdb_cluster_string_free(&db->forwarded);
    free(db->cluster_file);
    pthread_mutex_destroy(&db->opt_mu);
    free(db);
}

void cfdb_db_set_cluster_file(cfdb_db *db, const char *path)
{
    free(db->cluster_file);
    db->cluster_file = path ? strdup(path) : NULL;
}

/* The last user gone (network thread): discovery stops, so that the long poll, which holds
 * a reference of its own, lets the database go. */
static void db_shutdown(void *arg)
{
    cfdb_db *db = arg;
    db->closing = true;
    db->poll_waiting_dns = false;
    cfdb_loop_timer_cancel(cfdb_client_loop(db->cl), &db->poll_retry);
    if (db->poll_request) {
        cfdb_client_forget(db->cl, db->poll_request);
        db->poll_request = 0;
        cfdb_db_unref(db); /* the poll's */
    }
    fail_list(&db->ready_waiters, CFDB_ERR_OPERATION_CANCELLED);
    status_monitor_stop(db);
    cfdb_db_unref(db); /* the users' */
}

void cfdb_db_user_ref(cfdb_db *db)
{
    atomic_fetch_add(&db->users, 1);
}

void cfdb_db_user_unref(cfdb_db *db)
{
    if (atomic_fetch_sub(&db->users, 1) != 1)
        return;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    if (cfdb_loop_on_loop_thread(loop) || cfdb_loop_post(loop, db_shutdown, db) != 0)
        db_shutdown(db);
}

/* Any thread may drop a reference; the last one frees on the network thread, which owns
 * the timers and waiter lists. */
void cfdb_db_unref(cfdb_db *db)
{
    if (atomic_fetch_sub(&db->refs, 1) != 1)
        return;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    if (cfdb_loop_on_loop_thread(loop) || cfdb_loop_post(loop, db_free, db) != 0)
        db_free(db);
}

/* ---- discovery ---- */

static void send_poll(cfdb_db *db);
static void send_grv(cfdb_db *db);

static void install_proxies(cfdb_db *db, const cfdb_client_db_info *info)
{
    db->ngrv = db->ncommit = 0;
    for (uint32_t i = 0; i < info->grvProxies.count && db->ngrv < MAX_PROXIES; i++) {
        const cfdb_grv_proxy_interface *g = &info->grvProxies.items[i];
        if (g->provisional)
            continue;
        cfdb_peer *p = cfdb_client_peer(db->cl, &g->getConsistentReadVersion.endpoint.addresses.address);
        if (p)
            db->grv[db->ngrv++] = (cfdb_endpoint_ref){ p, g->getConsistentReadVersion.endpoint.token };
    }
    for (uint32_t i = 0; i < info->commitProxies.count && db->ncommit < MAX_PROXIES; i++) {
        const cfdb_commit_proxy_interface *c = &info->commitProxies.items[i];
        if (c->provisional)
            continue;
        cfdb_peer *p = cfdb_client_peer(db->cl, &c->commit.endpoint.addresses.address);
        if (p)
            db->commit[db->ncommit++] = (cfdb_endpoint_ref){ p, c->commit.endpoint.token };
    }
    db->have_proxies = db->ngrv > 0 && db->ncommit > 0;
    if (!db->have_proxies)
        return;
    fail_list(&db->ready_waiters, 0);
    if (db->gc_state == 0)
        send_global_config(db);
    if (db->grv_pending && !db->grv_in_flight)
        send_grv(db);
}

/* The coordinators moved: poll the new ones (MonitorLeader's forward handling). */
static bool follow_forward(cfdb_db *db, cfdb_bytes text)
{
    cfdb_cluster_string cs;
    if (cfdb_cluster_string_parse((const char *)text.ptr, text.len, &cs) != 0)
        return false;
    if (cs.count == 0) {
        cfdb_cluster_string_free(&cs);
        return false;
    }
    install_coordinators(db, &cs);
    if (db->persist_pending)
        cfdb_cluster_string_free(&db->forwarded);
    db->forwarded = cs;
    db->persist_pending = true;
    db->known_info_id = (cfdb_uid){ 0, 0 };
    db->coordinator_index = 0;
    db->failed_in_round = 0;
    db->poll_waiting_dns = false;
    return true;
}

static void persist_forwarded(cfdb_db *db)
{
    if (!db->persist_pending)
        return;
    if (db->cluster_file)
        cfdb_cluster_file_write(db->cluster_file, &db->forwarded);
    cfdb_cluster_string_free(&db->forwarded);
    db->persist_pending = false;
}

static void on_poll_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    cfdb_db *db = ctx;
    db->poll_request = 0;
    if (error == 0) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_client_db_info info;
        memset(&info, 0, sizeof info);
        cfdb_reply_error err = 0;
        int rc = fb_decode(&cfdb_msg_client_db_info_reply, msg, len, &info, &err, &a);
        if (rc == 0 && err == 0 && info.forward.present && follow_forward(db, info.forward.value)) {
            cfdb_arena_free(&a);
            send_poll(db);
            cfdb_db_unref(db);
            return;
        }
        if (rc == 0 && err == 0 && !info.forward.present) {
            db->known_info_id = info.id;
            db->cluster_id = info.clusterId;
            db->failed_in_round = 0;
            install_proxies(db, &info);
            persist_forwarded(db);
            cfdb_arena_free(&a);
            send_poll(db); /* long poll again at the same coordinator */
            cfdb_db_unref(db);
            return;
        }
        cfdb_arena_free(&a);
    }
    coordinator *k = &db->coordinators[db->coordinator_index];
    if (error == CFDB_ERR_REQUEST_MAYBE_DELIVERED && k->hostname)
        k->resolved = false; /* the connection failed: look the name up again next time */
    poll_failed(db);
    cfdb_db_unref(db);
}

/* The coordinator being polled did not answer: the next one, or a pause after a full round. */
static void poll_failed(cfdb_db *db)
{
    if (db->closing)
        return;
    db->coordinator_index = (db->coordinator_index + 1) % db->ncoordinators;
    if (++db->failed_in_round >= db->ncoordinators) {
        db->failed_in_round = 0;
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->poll_retry, COORDINATOR_RECONNECTION_DELAY_NS);
    } else {
        send_poll(db);
    }
}

static void poll_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    send_poll(arg);
}

static void send_poll(cfdb_db *db)
{
    static const cfdb_client_version versions[1] = {
        { { (const uint8_t *)"7.3.77", 6 }, { (const uint8_t *)"", 0 }, { (const uint8_t *)"fdb00b073000000", 15 } }
    };
    if (db->closing)
        return;
    cfdb_open_database_coord_request *r = &db->poll;
    memset(r, 0, sizeof *r);
    r->supportedVersions.items = (cfdb_client_version *)versions;
    r->supportedVersions.count = 1;
    r->traceLogGroup = cfdb_bytes_str("default");
    r->knownClientInfoID = db->known_info_id;
    r->clusterKey = cfdb_bytes_str(db->cluster_key);
    /* the connection string as written: IP coordinators and hostnames (MonitorLeader) */
    uint32_t na = 0, nh = 0;
    for (int i = 0; i < db->ncoordinators; i++) {
        const coordinator *k = &db->coordinators[i];
        if (k->hostname)
            db->req_hostnames[nh++] = (cfdb_hostname){ cfdb_bytes_str(k->host), cfdb_bytes_str(k->service), k->tls };
        else
            db->req_addresses[na++] = k->addr;
    }
    r->coordinators.items = db->req_addresses;
    r->coordinators.count = na;
    r->hostnames.items = db->req_hostnames;
    r->hostnames.count = nh;
    const cfdb_network_address *addr = coordinator_address(db, db->coordinator_index);
    if (!addr) {
        db->poll_waiting_dns = true; /* resolve_done sends the poll, or moves on */
        if (!start_resolve(db, db->coordinator_index)) {
            db->poll_waiting_dns = false;
            cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->poll_retry, COORDINATOR_RECONNECTION_DELAY_NS);
        }
        return;
    }
    cfdb_peer *p = cfdb_client_peer(db->cl, addr);
    cfdb_db_ref(db);
    db->poll_request =
        p ? cfdb_client_request(db->cl, p, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE),
                                &cfdb_msg_open_database_coord_request, r, &r->reply.token, on_poll_reply, db)
          : 0;
    if (!db->poll_request) {
        cfdb_db_unref(db);
        coordinator *k = &db->coordinators[db->coordinator_index];
        if (k->hostname)
            k->resolved = false; /* unreachable for now: look it up again */
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->poll_retry, COORDINATOR_RECONNECTION_DELAY_NS);
    }
}

void cfdb_db_start(cfdb_db *db)
{
    if (db->started)
        return;
    db->started = true;
    send_poll(db);
}

void cfdb_db_when_ready(cfdb_db *db, cfdb_waiter *w)
{
    if (db->have_proxies) {
        w->fn(w, 0, 0);
        return;
    }
    w->next = db->ready_waiters;
    db->ready_waiters = w;
    cfdb_db_start(db);
}

const cfdb_endpoint_ref *cfdb_db_commit_proxy(cfdb_db *db)
{
    return db->ncommit ? &db->commit[db->next_commit++ % (unsigned)db->ncommit] : NULL;
}

const cfdb_endpoint_ref *cfdb_db_grv_proxy(cfdb_db *db)
{
    return db->ngrv ? &db->grv[db->next_grv++ % (unsigned)db->ngrv] : NULL;
}

/* ---- global configuration ----
 * libfdb_c reads the cluster's global configuration from a GRV proxy as soon as it is
 * connected (fdbclient/GlobalConfig.actor.cpp, GlobalConfig::updater -> refresh(-1)),
 * retrying with GLOBAL_CONFIG_REFRESH_BACKOFF 0.5 s doubling to 60 s. cfdb uses none of
 * the values (sampling and profiling knobs), but sends the request as libfdb_c does:
 * servers and proxies see the same traffic from either client. */

static void on_gc_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    cfdb_db *db = ctx;
    if (!error) {
        cfdb_global_config_refresh_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err = 0;
        cfdb_arena a;
        cfdb_arena_init(&a);
        error = fb_decode(&cfdb_msg_global_config_refresh_reply, msg, len, &rep, &err, &a);
        if (!error)
            error = err;
        cfdb_arena_free(&a);
    }
    if (error && !db->closing) {
        double d = db->gc_backoff_s;
        db->gc_backoff_s = d * 2 < 60.0 ? d * 2 : 60.0;
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->gc_retry, (uint64_t)(d * 1e9));
    } else {
        db->gc_state = 2;
    }
    cfdb_db_unref(db);
}

static void send_global_config(cfdb_db *db)
{
    const cfdb_endpoint_ref *proxy = cfdb_db_grv_proxy(db);
    if (!proxy)
        return; /* sent when proxies are installed */
    if (db->gc_state == 0)
        db->gc_backoff_s = 0.5;
    db->gc_state = 1;
    cfdb_global_config_refresh_request req;
    memset(&req, 0, sizeof req);
    req.lastKnown = -1;
    cfdb_db_ref(db);
    uint64_t id = cfdb_client_request(db->cl, proxy->peer,
                                      cfdb_adjusted_token(proxy->token, CFDB_GRV_REFRESH_GLOBAL_CONFIG),
                                      &cfdb_msg_global_config_refresh_request, &req, &req.reply.token, on_gc_reply,
                                      db);
    if (!id)
        on_gc_reply(db, CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
}

static void gc_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    cfdb_db *db = arg;
    if (!db->closing)
        send_global_config(db);
}

/* ---- read versions ---- */

static void send_grv(cfdb_db *db);

static void on_grv_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    cfdb_db *db = ctx;
    db->grv_in_flight = false;
    int64_t version = 0;
    double throttled = 0;
    bool mv_present = false;
    uint32_t mv_len = 0;
    uint8_t mv[CFDB_WAITER_MV_MAX];
    if (error == 0) {
        cfdb_get_read_version_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err = 0;
        cfdb_arena a;
        uint64_t mem[128];
        cfdb_arena_init_with(&a, mem, sizeof mem);
        int rc = fb_decode(&cfdb_msg_get_read_version_reply, msg, len, &rep, &err, &a);
        cfdb_arena_free(&a);
        if (rc)
            error = CFDB_ERR_REQUEST_MAYBE_DELIVERED; /* unreadable: treat as lost */
        else if (err)
            error = err;
        else if (rep.version <= 0)
            error = CFDB_ERR_INTERNAL_ERROR;
        else if (rep.locked)
            error = CFDB_ERR_DATABASE_LOCKED; /* lock_aware transactions are not supported yet */
        version = rep.version;
        if (!error && version < db->min_acceptable_rv)
            db->min_acceptable_rv = version;
        throttled = rep.proxyTagThrottledDuration;
        mv_present = rep.metadataVersion.present;
        mv_len = mv_present ? rep.metadataVersion.value.len : 0;
        if (mv_len <= sizeof mv && mv_len)
            memcpy(mv, rep.metadataVersion.value.ptr, mv_len);
    }
    if (error == CFDB_ERR_REQUEST_MAYBE_DELIVERED || error == CFDB_ERR_BROKEN_PROMISE) {
        /* the proxy went away: the batch is retried on the next proxy */
        cfdb_waiter **tail = &db->grv_batch;
        while (*tail)
            tail = &(*tail)->next;
        *tail = db->grv_pending;
        db->grv_pending = db->grv_batch;
        db->grv_batch = NULL;
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->grv_retry, GRV_RETRY_DELAY_NS);
        cfdb_db_unref(db);
        return;
    }
    if (!error)
        cfdb_db_note_version(db, version);
    cfdb_waiter *list = db->grv_batch;
    db->grv_batch = NULL;
    if (db->grv_pending)
        send_grv(db);
    while (list) {
        cfdb_waiter *w = list;
        list = w->next;
        w->tag_throttled_s = throttled;
        w->mv_present = mv_present;
        w->mv_len = mv_len;
        if (mv_len && mv_len <= sizeof w->mv)
            memcpy(w->mv, mv, mv_len);
        w->fn(w, error, version);
    }
    cfdb_db_unref(db);
}

static void grv_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    cfdb_db *db = arg;
    if (!db->grv_in_flight && db->grv_pending)
        send_grv(db);
}

static void send_grv(cfdb_db *db)
{
    const cfdb_endpoint_ref *proxy = cfdb_db_grv_proxy(db);
    if (!proxy)
        return; /* sent when proxies are installed */
    /* libfdb_c batches read versions per flags (DatabaseContext::versionBatcher[flags]):
     * the oldest waiter's flags make this batch, the others wait for the next */
    cfdb_waiter *oldest = db->grv_pending;
    while (oldest->next)
        oldest = oldest->next;
    uint32_t flags = oldest->flags ? oldest->flags : CFDB_GRV_PRIORITY_DEFAULT, count = 0;
    cfdb_waiter *batch = NULL, *rest = NULL, **bt = &batch, **rt = &rest;
    for (cfdb_waiter *w = db->grv_pending, *nx; w; w = nx) {
        nx = w->next;
        w->next = NULL;
        if ((w->flags ? w->flags : CFDB_GRV_PRIORITY_DEFAULT) == flags) {
            *bt = w;
            bt = &w->next;
            count++;
        } else {
            *rt = w;
            rt = &w->next;
        }
    }
    cfdb_get_read_version_request req;
    memset(&req, 0, sizeof req);
    req.transactionCount = count;
    req.flags = flags;
    req.maxVersion = -1;
    db->grv_batch = batch;
    db->grv_pending = rest;
    db->grv_in_flight = true;
    cfdb_db_ref(db);
    uint64_t id = cfdb_client_request(db->cl, proxy->peer, proxy->token, &cfdb_msg_get_read_version_request, &req,
                                      &req.reply.token, on_grv_reply, db);
    if (!id)
        on_grv_reply(db, CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
}

void cfdb_db_get_read_version(cfdb_db *db, cfdb_waiter *w)
{
    w->next = db->grv_pending;
    db->grv_pending = w;
    if (!db->have_proxies) {
        cfdb_db_start(db);
        return;
    }
    if (!db->grv_in_flight)
        send_grv(db);
}

/* ---- shard locations ---- */

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

/* ---- database-level operations: a future, the database, a step on the network thread ---- */

/* The head of every such operation's state (its first member). */
typedef struct db_task {
    cfdb_db *db;
    cfdb_future *f;
} db_task;

/* Allocates a task of `size` bytes with a new future of `kind`; NULL (and *out, if any, a future
 * completed with platform_error) when memory runs out. */
static db_task *db_task_new(cfdb_db *db, cfdb_future_kind kind, size_t size, cfdb_future **out)
{
    cfdb_future *f = cfdb_future_new(kind);
    db_task *t = f ? calloc(1, size) : NULL;
    *out = f;
    if (!t) {
        if (f)
            cfdb_future_complete(f, CFDB_ERR_PLATFORM_ERROR);
        return NULL;
    }
    t->db = db;
    t->f = f;
    cfdb_future_ref(f); /* the task's */
    cfdb_db_ref(db);
    return t;
}

/* Releases what the task holds (network thread, or before it was posted). */
static void db_task_end(db_task *t)
{
    cfdb_db_unref(t->db);
    cfdb_future_unref(t->f);
    free(t);
}

/* Runs run(t) on the network thread; returns the application's future. */
static cfdb_future *db_task_post(db_task *t, cfdb_task_fn run)
{
    cfdb_future *f = t->f;
    if (cfdb_loop_post(cfdb_client_loop(t->db->cl), run, t) != 0) {
        cfdb_future_complete(f, CFDB_ERR_NETWORK_NOT_SETUP);
        db_task_end(t);
    }
    return f;
}

/* ---- the cluster's protocol version ---- */

#define PROTOCOL_RETRY_NS 500000000ull   /* no coordinator yet, or it failed */
#define PROTOCOL_RECHECK_NS 1000000000ull /* the version is still the expected one */

typedef struct protocol_query {
    db_task t; /* first */
    uint64_t expected;
    uint64_t request;
    cfdb_timer timer;
    cfdb_protocol_info_request req;
} protocol_query;

static void protocol_step(void *arg);

static void protocol_done(protocol_query *q)
{
    cfdb_loop_timer_cancel(cfdb_client_loop(q->t.db->cl), &q->timer);
    db_task_end(&q->t);
}

static void protocol_timer(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    protocol_step(arg);
}

static void protocol_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    protocol_query *q = ctx;
    q->request = 0;
    uint64_t delay = PROTOCOL_RETRY_NS;
    if (!error && !cfdb_future_is_ready(q->t.f)) {
        cfdb_protocol_info_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err = 0;
        uint64_t mem[16];
        cfdb_arena a;
        cfdb_arena_init_with(&a, mem, sizeof mem);
        if (fb_decode(&cfdb_msg_protocol_info_reply, msg, len, &rep, &err, &a) == 0 && err == 0) {
            if (q->expected == 0 || rep.version != q->expected) {
                q->t.f->r.i64 = (int64_t)rep.version;
                cfdb_future_complete(q->t.f, 0);
            }
            delay = PROTOCOL_RECHECK_NS; /* unchanged: look again later, until it changes */
        }
        cfdb_arena_free(&a);
    }
    if (cfdb_future_is_ready(q->t.f)) {
        protocol_done(q);
        return;
    }
    cfdb_loop_timer_add_in(cfdb_client_loop(q->t.db->cl), &q->timer, delay);
}

static void protocol_step(void *arg)
{
    protocol_query *q = arg;
    if (cfdb_future_is_ready(q->t.f)) { /* cancelled or destroyed */
        protocol_done(q);
        return;
    }
    cfdb_db_start(q->t.db); /* discovery picks (and resolves) the coordinator */
    cfdb_peer *p = cfdb_db_coordinator(q->t.db);
    memset(&q->req, 0, sizeof q->req);
    q->request = p ? cfdb_client_request(q->t.db->cl, p, cfdb_well_known_token(CFDB_WLTOKEN_PROTOCOL_INFO),
                                         &cfdb_msg_protocol_info_request, &q->req, &q->req.reply.token,
                                         protocol_reply, q)
                   : 0;
    if (!q->request)
        cfdb_loop_timer_add_in(cfdb_client_loop(q->t.db->cl), &q->timer, PROTOCOL_RETRY_NS);
}

cfdb_future *cfdb_db_get_server_protocol(cfdb_db *db, uint64_t expected)
{
    cfdb_future *f;
    protocol_query *q = (protocol_query *)db_task_new(db, CFDB_FUTURE_INT64, sizeof(protocol_query), &f);
    if (!q)
        return f;
    q->expected = expected;
    cfdb_timer_init(&q->timer, protocol_timer, q);
    return db_task_post(&q->t, protocol_step);
}

static void uid_text(cfdb_uid u, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)u.first, (unsigned long long)u.second);
}

/* A coordinator as written: "host:service[:tls]" or "ip:port[:tls]". */
static void coordinator_text(const coordinator *k, char *out, size_t cap)
{
    if (k->hostname)
        snprintf(out, cap, "%s:%s%s", k->host, k->service, k->tls ? ":tls" : "");
    else
        cfdb_network_address_format(&k->addr, out, cap);
}

/* "description:id@coordinator,..." as the coordinators were written (hostnames kept). */
static void connection_string(const cfdb_db *db, char *out, size_t cap)
{
    size_t o = (size_t)snprintf(out, cap, "%s@", db->cluster_key);
    for (int i = 0; i < db->ncoordinators && o < cap; i++) {
        char text[320];
        coordinator_text(&db->coordinators[i], text, sizeof text);
        o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? "," : "", text);
    }
}

/* ---- \xff\xff/connection_string, /cluster_file_path, /cluster_id ---- */

typedef struct text_task {
    db_task t; /* first */
    cfdb_waiter w; /* the ready waiter for cluster_id */
    enum cfdb_db_text which;
} text_task;

static void text_answer(text_task *t, int error)
{
    cfdb_db *db = t->t.db;
    cfdb_future *f = t->t.f;
    char buf[4200];
    bool present = true;
    if (!error) {
        switch (t->which) {
        case CFDB_DB_CONNECTION_STRING:
            connection_string(db, buf, sizeof buf);
            break;
        case CFDB_DB_CLUSTER_FILE_PATH:
            /* a database made from a connection string has a memory record: its id */
            if (db->cluster_file)
                snprintf(buf, sizeof buf, "%s", db->cluster_file);
            else
                uid_text(db->memory_record_id, buf);
            break;
        case CFDB_DB_CLUSTER_ID:
            uid_text(db->cluster_id, buf);
            break;
        }
        f->r.value.present = present;
        if (cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_make(buf, strlen(buf)), &f->r.value.value))
            error = CFDB_ERR_PLATFORM_ERROR;
    }
    cfdb_future_complete(f, error);
    db_task_end(&t->t);
}

static void text_ready(cfdb_waiter *w, int error, int64_t unused)
{
    (void)unused;
    text_answer((text_task *)((char *)w - offsetof(text_task, w)), error);
}

static void text_run(void *arg)
{
    text_task *t = arg;
    if (t->which == CFDB_DB_CLUSTER_ID && !t->t.db->have_proxies) {
        t->w.fn = text_ready; /* getClusterId waits for the cluster's ClientDBInfo */
        cfdb_db_when_ready(t->t.db, &t->w);
        return;
    }
    text_answer(t, 0);
}

cfdb_future *cfdb_db_text_value(cfdb_db *db, enum cfdb_db_text which)
{
    cfdb_future *f;
    text_task *t = (text_task *)db_task_new(db, CFDB_FUTURE_VALUE, sizeof(text_task), &f);
    if (!t)
        return f;
    t->which = which;
    return db_task_post(&t->t, text_run);
}

/* ---- fdb_database_get_client_status ---- */

/* Adds p to the distinct peers the report covers. */
static void note_peer(cfdb_peer **seen, int *n, int cap, cfdb_peer *p)
{
    if (!p)
        return;
    for (int i = 0; i < *n; i++)
        if (seen[i] == p)
            return;
    if (*n < cap)
        seen[(*n)++] = p;
}

static void proxies_json(cfdb_json *j, const char *key, const cfdb_endpoint_ref *refs, int n, cfdb_peer **seen,
                         int *nseen, int cap)
{
    cfdb_json_key(j, key);
    cfdb_json_begin_array(j);
    for (int i = 0; i < n; i++) {
        char a[96];
        cfdb_peer_address(refs[i].peer, a, sizeof a);
        cfdb_json_string(j, a);
        note_peer(seen, nseen, cap, refs[i].peer);
    }
    cfdb_json_end_array(j);
}

/* DatabaseContext::getClientStatus's report (keys in order, as json_spirit writes them);
 * returns its Healthy. */
static bool database_status_json(cfdb_db *db, cfdb_json *j)
{
    enum { CAP = 256 };
    cfdb_peer *seen[CAP];
    int nseen = 0;
    bool healthy = db->ncoordinators > 0 && db->ngrv > 0 && db->ncommit > 0;
    cfdb_json_begin_object(j);
    char id[33];
    uid_text(db->cluster_id, id);
    cfdb_json_key(j, "ClusterID");
    cfdb_json_string(j, id);
    proxies_json(j, "CommitProxies", db->commit, db->ncommit, seen, &nseen, CAP);

    /* coordinators: hostnames first, then addresses, as written */
    cfdb_peer *current = NULL;
    const cfdb_network_address *cur = db->ncoordinators ? coordinator_address(db, db->coordinator_index) : NULL;
    if (cur)
        current = cfdb_client_peer(db->cl, cur);
    healthy = healthy && current;
    for (int i = 0; i < db->ncoordinators; i++) {
        const cfdb_network_address *a = coordinator_address(db, i);
        if (a)
            note_peer(seen, &nseen, CAP, cfdb_client_peer(db->cl, a));
    }
    /* storage servers known from the location cache */
    int ss_start = nseen;
    cfdb_peer *ss_peer[CAP];
    cfdb_uid ss_id[CAP];
    int nss = 0;
    for (size_t i = 0; i < db->nshards; i++)
        for (int k = 0; k < db->shards[i].nservers; k++) {
            const cfdb_endpoint_ref *r = &db->shards[i].servers[k];
            bool dup = false;
            for (int x = 0; x < nss && !dup; x++)
                dup = cfdb_uid_eq(ss_id[x], r->token);
            if (!dup && nss < CAP) {
                ss_peer[nss] = r->peer;
                ss_id[nss++] = r->token;
            }
        }
    (void)ss_start;

    /* Connections: every distinct peer named anywhere above */
    for (int i = 0; i < db->ngrv; i++)
        note_peer(seen, &nseen, CAP, db->grv[i].peer);
    for (int i = 0; i < nss; i++)
        note_peer(seen, &nseen, CAP, ss_peer[i]);
    int failed = 0;
    cfdb_json_key(j, "Connections");
    cfdb_json_begin_array(j);
    for (int i = 0; i < nseen; i++) {
        cfdb_peer_connection_json(seen[i], j);
        failed += cfdb_peer_failed(seen[i]);
    }
    cfdb_json_end_array(j);
    healthy = healthy && failed == 0;

    cfdb_json_key(j, "Coordinators");
    cfdb_json_begin_array(j);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < db->ncoordinators; i++) {
            const coordinator *k = &db->coordinators[i];
            if (k->hostname != (pass == 0))
                continue;
            char text[320];
            coordinator_text(k, text, sizeof text);
            cfdb_json_string(j, text);
        }
    cfdb_json_end_array(j);
    if (current) {
        char a[96];
        cfdb_peer_address(current, a, sizeof a);
        cfdb_json_key(j, "CurrentCoordinator");
        cfdb_json_string(j, a);
    }
    proxies_json(j, "GrvProxies", db->grv, db->ngrv, seen, &nseen, CAP);
    cfdb_json_key(j, "Healthy");
    cfdb_json_bool(j, healthy);
    cfdb_json_key(j, "NumConnectionsFailed");
    cfdb_json_int(j, failed);
    cfdb_json_key(j, "StorageServers");
    cfdb_json_begin_array(j);
    for (int i = 0; i < nss; i++) {
        char a[96];
        cfdb_peer_address(ss_peer[i], a, sizeof a);
        uid_text(ss_id[i], id);
        cfdb_json_begin_object(j);
        cfdb_json_key(j, "Address");
        cfdb_json_string(j, a);
        cfdb_json_key(j, "SSID");
        cfdb_json_string(j, id);
        cfdb_json_end_object(j);
    }
    cfdb_json_end_array(j);
    cfdb_json_end_object(j);
    return healthy;
}

static void client_status_run(void *arg)
{
    db_task *t = arg;
    cfdb_db *db = t->db;
    cfdb_db_start(db);
    cfdb_json j;
    cfdb_json_init(&j);
    /* MultiVersionDatabase's wrapper around the report, keys in order */
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "AvailableClients");
    cfdb_json_begin_array(&j);
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "ProtocolVersion");
    cfdb_json_string(&j, "fdb00b073000000");
    cfdb_json_key(&j, "ReleaseVersion");
    cfdb_json_string(&j, "7.3.77");
    cfdb_json_key(&j, "ThreadIndex");
    cfdb_json_int(&j, 0);
    cfdb_json_end_object(&j);
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "ConnectionRecord");
    if (db->cluster_file) {
        size_t n = strlen(db->cluster_file) + 7;
        char *rec = malloc(n);
        if (rec) {
            snprintf(rec, n, "file: %s", db->cluster_file);
            cfdb_json_string(&j, rec);
            free(rec);
        } else {
            j.failed = true;
        }
    } else {
        char cs[4200];
        size_t o = (size_t)snprintf(cs, sizeof cs, "connection string: ");
        connection_string(db, cs + o, sizeof cs - o);
        cfdb_json_string(&j, cs);
    }
    cfdb_json_key(&j, "DatabaseStatus");
    bool healthy = database_status_json(db, &j);
    cfdb_json_key(&j, "Healthy");
    cfdb_json_bool(&j, healthy);
    cfdb_json_key(&j, "InitializationState");
    cfdb_json_string(&j, "created");
    if (db->have_proxies) { /* the cluster answered: it speaks our protocol */
        cfdb_json_key(&j, "ProtocolVersion");
        cfdb_json_string(&j, "fdb00b073000000");
    }
    cfdb_json_end_object(&j);

    cfdb_future *f = t->f;
    int rc = CFDB_ERR_PLATFORM_ERROR;
    if (!j.failed) {
        void *copy = cfdb_arena_dup(&f->arena, j.buf, j.len);
        if (copy) {
            f->r.key = (cfdb_bytes){ copy, j.len };
            rc = 0;
        }
    }
    cfdb_json_free(&j);
    cfdb_future_complete(f, rc);
    db_task_end(t);
}

cfdb_future *cfdb_db_get_client_status(cfdb_db *db)
{
    cfdb_future *f;
    db_task *t = db_task_new(db, CFDB_FUTURE_KEY, sizeof(db_task), &f);
    return t ? db_task_post(t, client_status_run) : f;
}

cfdb_peer *cfdb_db_coordinator(cfdb_db *db)
{
    const cfdb_network_address *addr = coordinator_address(db, db->coordinator_index % db->ncoordinators);
    return addr ? cfdb_client_peer(db->cl, addr) : NULL;
}

const char *cfdb_db_cluster_key(const cfdb_db *db)
{
    return db->cluster_key;
}

/* FDBDatabaseOption -> the transaction option it sets by default (fdb.options). */
static int default_for(int db_option)
{
    switch (db_option) {
    case 26: return 600;  /* SNAPSHOT_RYW_ENABLE */
    case 27: return 601;  /* SNAPSHOT_RYW_DISABLE */
    case 500: return 500; /* TRANSACTION_TIMEOUT */
    case 501: return 501; /* TRANSACTION_RETRY_LIMIT */
    case 502: return 502; /* TRANSACTION_MAX_RETRY_DELAY */
    case 503: return 503; /* TRANSACTION_SIZE_LIMIT */
    case 504: return 20;  /* TRANSACTION_CAUSAL_READ_RISKY */
    case 506: return 505; /* TRANSACTION_AUTOMATIC_IDEMPOTENCY */
    case 700: return 1100; /* TRANSACTION_BYPASS_UNREADABLE */
    case 701: return 701; /* TRANSACTION_USED_DURING_COMMIT_PROTECTION_DISABLE */
    case 702: return 712; /* TRANSACTION_REPORT_CONFLICTING_KEYS */
    default: return 0;
    }
}

bool cfdb_db_watch_acquire(cfdb_db *db)
{
    if (db->watches >= atomic_load(&db->max_watches))
        return false;
    db->watches++;
    return true;
}

void cfdb_db_watch_release(cfdb_db *db)
{
    db->watches--;
}

int cfdb_db_set_option(cfdb_db *db, int option, const uint8_t *value, int length)
{
    if (option == 20) { /* MAX_WATCHES: 0 .. 1,000,000 */
        int64_t v;
        if (length != 8 || !value)
            return CFDB_ERR_INVALID_OPTION_VALUE;
        memcpy(&v, value, 8);
        if (v < 0 || v > 1000000)
            return CFDB_ERR_INVALID_OPTION_VALUE;
        atomic_store(&db->max_watches, (int)v);
        return 0;
    }
    int txn_option = default_for(option);
    if (!txn_option)
        return 0; /* location cache size, max watches, machine/datacenter ids...: accepted */
    if ((option >= 500 && option <= 503) && (length != 8 || !value))
        return CFDB_ERR_INVALID_OPTION_VALUE;
    pthread_mutex_lock(&db->opt_mu);
    int i;
    for (i = 0; i < db->ndefaults && db->defaults[i].option != txn_option; i++)
        ;
    /* the two snapshot RYW options replace each other */
    if (i == db->ndefaults && (txn_option == 600 || txn_option == 601))
        for (i = 0; i < db->ndefaults && db->defaults[i].option != (txn_option == 600 ? 601 : 600); i++)
            ;
    if (i < 16) {
        db->defaults[i].option = txn_option;
        db->defaults[i].length = length > 0 && length <= 8 ? length : 0;
        if (db->defaults[i].length)
            memcpy(db->defaults[i].value, value, (size_t)db->defaults[i].length);
        if (i == db->ndefaults)
            db->ndefaults++;
    }
    pthread_mutex_unlock(&db->opt_mu);
    return 0;
}

void cfdb_db_apply_defaults(cfdb_db *db, void *tx, int (*apply)(void *tx, int option, const uint8_t *v, int len))
{
    pthread_mutex_lock(&db->opt_mu);
    for (int i = 0; i < db->ndefaults; i++)
        apply(tx, db->defaults[i].option, db->defaults[i].length ? db->defaults[i].value : NULL,
              db->defaults[i].length);
    pthread_mutex_unlock(&db->opt_mu);
}

/* DatabaseContext::validateVersion for a database made by fdb_create_database (switchable):
 * a read below every read version this database has been given cannot be served. */
int cfdb_db_validate_version(const cfdb_db *db, int64_t version)
{
    if (version == 0)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return version < db->min_acceptable_rv ? CFDB_ERR_TRANSACTION_TOO_OLD : 0;
}

/* ---- \xff\xff/status/json: the leader monitor and the coordinators check ----
 * StatusClient::statusFetcher (fdbclient/StatusClient.actor.cpp 612-633) keeps a monitorLeader
 * of its own running while status is read: monitorNominee (fdbclient/MonitorLeader.actor.cpp
 * 497-531) asks each coordinator GetLeaderRequest(key, the nominee it last gave, or zero) in a
 * loop, so after the first answer the request is a long poll that returns when the leader
 * changes; getLeader (533-573) picks the leader among the nominees. timeoutMonitorLeader stops
 * it after STATUS_IDLE_TIMEOUT (120 s, fdbclient/ClientKnobs.cpp) without a status read. */
#define STATUS_IDLE_TIMEOUT_NS 120000000000ull
#define STATUS_CC_WAIT_NS 2000000000ull /* statusFetcherImpl's interfaceTimeout */
#define LEADER_CHANGE_ID_MASK (~(UINT64_C(0x7f) << 57)) /* LeaderInfo::changeIDMask */

struct sm_ctx {
    cfdb_db *db;
    int index;
};

static void sm_send(cfdb_db *db, int i);

static void sm_fail_waiters(cfdb_db *db, int error)
{
    if (cfdb_timer_is_armed(&db->sm_wait))
        cfdb_loop_timer_cancel(cfdb_client_loop(db->cl), &db->sm_wait);
    cfdb_waiter *list = db->sm_waiters;
    db->sm_waiters = NULL;
    while (list) {
        cfdb_waiter *w = list;
        list = w->next;
        w->fn(w, error, 0);
    }
}

/* getLeader: a forwarding nominee wins; else the changeID (masked) most coordinators name. */
static int sm_leader(const cfdb_db *db)
{
    int best = -1, best_count = 0;
    for (int i = 0; i < db->sm_count; i++)
        if (db->sm[i].have && db->sm[i].forward)
            return i;
    for (int i = 0; i < db->sm_count; i++) {
        if (!db->sm[i].have)
            continue;
        int count = 0;
        for (int j = 0; j < db->sm_count; j++)
            if (db->sm[j].have && db->sm[j].change.second == db->sm[i].change.second &&
                (db->sm[j].change.first & LEADER_CHANGE_ID_MASK) == (db->sm[i].change.first & LEADER_CHANGE_ID_MASK))
                count++;
        if (count > best_count) {
            best = i;
            best_count = count;
        }
    }
    return best;
}

static void sm_forget(cfdb_db *db, int i)
{
    if (db->sm[i].request) {
        cfdb_client_forget(db->cl, db->sm[i].request);
        db->sm[i].request = 0;
        free(db->sm[i].ctx);
        db->sm[i].ctx = NULL;
        cfdb_db_unref(db); /* the request's */
    }
}

static void status_monitor_stop(cfdb_db *db)
{
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    cfdb_loop_timer_cancel(loop, &db->sm_idle);
    cfdb_loop_timer_cancel(loop, &db->sm_retry);
    for (int i = 0; i < db->sm_count; i++) {
        sm_forget(db, i);
        free(db->sm[i].info);
        memset(&db->sm[i], 0, sizeof db->sm[i]);
    }
    db->sm_running = false;
    sm_fail_waiters(db, CFDB_ERR_OPERATION_CANCELLED);
}

static void on_sm_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    struct sm_ctx *c = ctx;
    cfdb_db *db = c->db;
    int i = c->index;
    free(c);
    struct status_nominee *n = &db->sm[i];
    n->ctx = NULL;
    n->request = 0;
    if (!db->sm_running || db->closing) {
        cfdb_db_unref(db);
        return;
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_leader_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    if (error || fb_decode(&cfdb_msg_get_leader_reply, msg, len, &rep, &err, &a) || err) {
        /* retryBrokenPromise: asked again after a pause */
        cfdb_arena_free(&a);
        if (!cfdb_timer_is_armed(&db->sm_retry))
            cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->sm_retry, COORDINATOR_RECONNECTION_DELAY_NS);
        cfdb_db_unref(db);
        return;
    }
    bool have = rep.leader.present;
    if (have != n->have || (have && (!cfdb_uid_eq(rep.leader.value.changeID, n->change) ||
                                     rep.leader.value.forward != n->forward ||
                                     rep.leader.value.serializedInfo.len != n->info_len ||
                                     memcmp(rep.leader.value.serializedInfo.ptr, n->info, n->info_len) != 0))) {
        free(n->info);
        n->info = NULL;
        n->info_len = 0;
        n->have = have;
        if (have) {
            n->change = rep.leader.value.changeID;
            n->forward = rep.leader.value.forward;
            cfdb_bytes info = rep.leader.value.serializedInfo;
            n->info = malloc(info.len ? info.len : 1);
            if (n->info) {
                memcpy(n->info, info.ptr, info.len);
                n->info_len = (uint32_t)info.len;
            } else {
                n->have = false;
            }
        }
    }
    cfdb_arena_free(&a);
    bool stop = n->have && n->forward; /* monitorNominee waits forever after a forward */
    if (db->sm_waiters && sm_leader(db) >= 0)
        sm_fail_waiters(db, 0);
    if (!stop && db->sm_running)
        sm_send(db, i);
    cfdb_db_unref(db);
}

static void sm_send(cfdb_db *db, int i)
{
    const cfdb_network_address *addr = coordinator_address(db, i);
    if (!addr)
        start_resolve(db, i); /* a hostname: asked once resolved (the retry below) */
    cfdb_peer *p = addr ? cfdb_client_peer(db->cl, addr) : NULL;
    struct sm_ctx *c = p ? malloc(sizeof *c) : NULL;
    if (!c) {
        if (!cfdb_timer_is_armed(&db->sm_retry))
            cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->sm_retry, COORDINATOR_RECONNECTION_DELAY_NS);
        return;
    }
    c->db = db;
    c->index = i;
    cfdb_get_leader_request req;
    memset(&req, 0, sizeof req);
    req.key = cfdb_bytes_str(db->cluster_key);
    if (db->sm[i].have)
        req.knownLeader = db->sm[i].change;
    cfdb_db_ref(db);
    db->sm[i].ctx = c;
    db->sm[i].request = cfdb_client_request(db->cl, p, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                                            &cfdb_msg_get_leader_request, &req, &req.reply.token, on_sm_reply, c);
    if (!db->sm[i].request) {
        db->sm[i].ctx = NULL;
        free(c);
        cfdb_db_unref(db);
        if (!cfdb_timer_is_armed(&db->sm_retry))
            cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->sm_retry, COORDINATOR_RECONNECTION_DELAY_NS);
    }
}

static void sm_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    cfdb_db *db = arg;
    if (!db->sm_running || db->closing)
        return;
    for (int i = 0; i < db->sm_count; i++)
        if (!db->sm[i].request && !(db->sm[i].have && db->sm[i].forward))
            sm_send(db, i);
}

static void sm_idle_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)t;
    cfdb_db *db = arg;
    uint64_t idle = cfdb_monotonic_ns() - db->sm_last_fetch_ns;
    if (idle > STATUS_IDLE_TIMEOUT_NS)
        status_monitor_stop(db);
    else
        cfdb_loop_timer_add_in(loop, &db->sm_idle, STATUS_IDLE_TIMEOUT_NS - idle + 10000);
}

static void sm_wait_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    sm_fail_waiters(arg, CFDB_ERR_TIMED_OUT);
}

static void status_monitor_init(cfdb_db *db)
{
    cfdb_timer_init(&db->sm_idle, sm_idle_fire, db);
    cfdb_timer_init(&db->sm_retry, sm_retry_fire, db);
    cfdb_timer_init(&db->sm_wait, sm_wait_fire, db);
}

void cfdb_db_status_monitor(cfdb_db *db)
{
    db->sm_last_fetch_ns = cfdb_monotonic_ns();
    if (db->sm_running || db->closing)
        return;
    db->sm_running = true;
    db->sm_count = db->ncoordinators;
    for (int i = 0; i < db->sm_count; i++)
        sm_send(db, i);
    cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->sm_idle, STATUS_IDLE_TIMEOUT_NS + 10000);
}

void cfdb_db_status_leader_wait(cfdb_db *db, cfdb_waiter *w)
{
    if (!db->sm_running || db->closing) {
        w->fn(w, CFDB_ERR_OPERATION_CANCELLED, 0);
        return;
    }
    if (sm_leader(db) >= 0) {
        w->fn(w, 0, 0);
        return;
    }
    w->next = db->sm_waiters;
    db->sm_waiters = w;
    if (!cfdb_timer_is_armed(&db->sm_wait))
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->sm_wait, STATUS_CC_WAIT_NS);
}

bool cfdb_db_status_leader(cfdb_db *db, cfdb_bytes *serialized_info, bool *forward)
{
    int i = db->sm_running ? sm_leader(db) : -1;
    if (i < 0)
        return false;
    *serialized_info = cfdb_bytes_make(db->sm[i].info, db->sm[i].info_len);
    *forward = db->sm[i].forward;
    return true;
}

/* clientCoordinatorsStatusFetcher (fdbclient/StatusClient.actor.cpp 304-376): every
 * coordinator is asked GetLeaderRequest(key, zero) and, after all of those,
 * ProtocolInfoRequest; the answer waits for a majority of each, then up to 1.5 s more for the
 * rest (smartQuorum), or 2 s in all. */
#define CHECK_QUORUM_EXTRA_NS 1500000000ull
#define CHECK_DEADLINE_NS 2000000000ull

typedef struct coord_check coord_check;
typedef struct check_req {
    coord_check *c;
    bool leader;
    int index;
} check_req;

struct coord_check {
    cfdb_db *db;
    cfdb_waiter *w;
    int n;
    int pending;              /* requests without an answer yet */
    int leaders_ok, protocols_ok;
    uint64_t requests[2 * MAX_COORDINATORS];
    check_req reqs[2 * MAX_COORDINATORS];
    bool answered[2 * MAX_COORDINATORS];
    bool quorum;              /* both majorities reached: the extra time runs */
    bool waiting_dns[MAX_COORDINATORS]; /* a hostname being resolved: asked once it is */
    cfdb_timer deadline, extra;
    coord_check *next;        /* db->checks */
};

static void check_finish(coord_check *c)
{
    for (coord_check **pp = &c->db->checks; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    cfdb_loop *loop = cfdb_client_loop(c->db->cl);
    cfdb_loop_timer_cancel(loop, &c->deadline);
    cfdb_loop_timer_cancel(loop, &c->extra);
    for (int i = 0; i < 2 * c->n; i++)
        if (!c->answered[i] && c->requests[i])
            cfdb_client_forget(c->db->cl, c->requests[i]);
    bool reachable = c->leaders_ok >= c->n / 2 + 1;
    cfdb_waiter *w = c->w;
    cfdb_db *db = c->db;
    free(c);
    w->fn(w, 0, reachable ? 1 : 0);
    cfdb_db_unref(db);
}

static void check_timer(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    check_finish(arg);
}

static void check_progress(coord_check *c)
{
    if (c->pending == 0) {
        check_finish(c);
        return;
    }
    int need = c->n / 2 + 1;
    if (!c->quorum && c->leaders_ok >= need && c->protocols_ok >= need) {
        c->quorum = true;
        cfdb_loop_timer_add_in(cfdb_client_loop(c->db->cl), &c->extra, CHECK_QUORUM_EXTRA_NS);
    }
}

static void on_check_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    check_req *r = ctx;
    coord_check *c = r->c;
    int slot = (r->leader ? 0 : c->n) + r->index;
    c->answered[slot] = true;
    c->pending--;
    if (!error) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_reply_error err = 0;
        int rc;
        if (r->leader) {
            cfdb_get_leader_reply rep;
            memset(&rep, 0, sizeof rep);
            rc = fb_decode(&cfdb_msg_get_leader_reply, msg, len, &rep, &err, &a);
        } else {
            cfdb_protocol_info_reply rep;
            memset(&rep, 0, sizeof rep);
            rc = fb_decode(&cfdb_msg_protocol_info_reply, msg, len, &rep, &err, &a);
        }
        cfdb_arena_free(&a);
        if (!rc && !err) {
            if (r->leader)
                c->leaders_ok++;
            else
                c->protocols_ok++;
        }
    }
    check_progress(c);
}

/* Sends coordinator i's request of the given pass (0 GetLeader, 1 ProtocolInfo); false if it
 * could not go. */
static bool check_send(coord_check *c, int pass, int i)
{
    cfdb_db *db = c->db;
    int slot = pass * c->n + i;
    check_req *r = &c->reqs[slot];
    r->c = c;
    r->leader = pass == 0;
    r->index = i;
    const cfdb_network_address *addr = coordinator_address(db, i);
    cfdb_peer *p = addr ? cfdb_client_peer(db->cl, addr) : NULL;
    if (!p)
        return false;
    if (r->leader) {
        cfdb_get_leader_request req;
        memset(&req, 0, sizeof req);
        req.key = cfdb_bytes_str(db->cluster_key);
        c->requests[slot] = cfdb_client_request(db->cl, p, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                                                &cfdb_msg_get_leader_request, &req, &req.reply.token, on_check_reply,
                                                r);
    } else {
        cfdb_protocol_info_request req;
        memset(&req, 0, sizeof req);
        c->requests[slot] = cfdb_client_request(db->cl, p, cfdb_well_known_token(CFDB_WLTOKEN_PROTOCOL_INFO),
                                                &cfdb_msg_protocol_info_request, &req, &req.reply.token,
                                                on_check_reply, r);
    }
    if (!c->requests[slot])
        return false;
    c->pending++;
    return true;
}

/* A coordinator's name was looked up: the checks waiting for it ask it now (retryGetReplyFromHostname
 * resolves, then sends), or count it unreachable. */
static void check_resolved(cfdb_db *db, int index, bool ok)
{
    coord_check *c = db->checks;
    while (c) {
        coord_check *next = c->next;
        if (index < c->n && c->waiting_dns[index]) {
            c->waiting_dns[index] = false;
            c->pending -= 2; /* the two requests counted while the name was looked up */
            if (ok) {
                check_send(c, 0, index);
                check_send(c, 1, index);
            }
            check_progress(c); /* may finish c */
        }
        c = next;
    }
}

void cfdb_db_check_coordinators(cfdb_db *db, cfdb_waiter *w)
{
    coord_check *c = calloc(1, sizeof *c);
    if (!c) {
        w->fn(w, 0, 0);
        return;
    }
    c->db = db;
    c->w = w;
    c->n = db->ncoordinators;
    cfdb_db_ref(db);
    cfdb_timer_init(&c->deadline, check_timer, c);
    cfdb_timer_init(&c->extra, check_timer, c);
    c->next = db->checks;
    db->checks = c;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->n; i++) {
            if (!coordinator_address(db, i)) {
                /* a hostname not resolved yet: both its requests wait for the lookup */
                if (pass == 0 && start_resolve(db, i)) {
                    c->waiting_dns[i] = true;
                    c->pending += 2;
                }
                continue;
            }
            check_send(c, pass, i);
        }
    if (c->pending == 0) {
        check_finish(c);
        return;
    }
    cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &c->deadline, CHECK_DEADLINE_NS);
}
