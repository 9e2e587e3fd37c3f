/* Discovery: the coordinators of the connection string (hostnames resolved in a helper
 * thread when first needed and again after a connection to them fails), the
 * OpenDatabaseCoordRequest long poll that keeps ClientDBInfo (proxies, cluster id, forwarded
 * coordinators) current, and the start-up global configuration refresh.
 *
 * Invariants: at most one poll is in flight (db->poll_request), holding a database reference;
 * db->coordinators_epoch changes whenever the coordinators are replaced, so a lookup finished
 * for an old list is ignored; a resolve job holds a database reference until its result has run
 * on the network thread (posted through its own task node: it cannot be lost). */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include "endpoint.h"
#include "global_config.h"

static void send_poll(cfdb_db *db);
static void poll_failed(cfdb_db *db);
static void poll_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void gc_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void send_global_config(cfdb_db *db);
static void gc_history(cfdb_db *db, const cfdb_version_history_vec *h);

void db_discovery_init(cfdb_db *db)
{
    cfdb_timer_init(&db->poll_retry, poll_retry_fire, db);
    cfdb_timer_init(&db->gc_retry, gc_retry_fire, db);
    db->gc_view = cfdb_gc_view_new();
}

/* Coordinators from a parsed connection string; hostnames stay unresolved until used. */
int db_install_coordinators(cfdb_db *db, const cfdb_cluster_string *cs)
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
    cfdb_task done; /* posts the result to the loop */
    cfdb_db *db;
    int index;
    unsigned epoch;
    char host[256], service[32];
    bool ok;
    cfdb_network_address addr;
    uint8_t v6[16];
} resolve_job;

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
        db_check_resolved(db, job->index, job->ok);
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
    cfdb_loop_post_task(cfdb_client_loop(job->db->cl), &job->done);
    return NULL;
}

/* Starts resolving coordinator i unless already under way. False if no thread could start. */
bool db_start_resolve(cfdb_db *db, int i)
{
    coordinator *k = &db->coordinators[i];
    if (k->resolving)
        return true;
    resolve_job *job = calloc(1, sizeof *job);
    if (!job)
        return false;
    cfdb_task_init(&job->done, resolve_done, job);
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
const cfdb_network_address *db_coordinator_address(const cfdb_db *db, int i)
{
    const coordinator *k = &db->coordinators[i];
    return !k->hostname || k->resolved ? &k->addr : NULL;
}

/* ---- discovery ---- */


void db_release_proxies(cfdb_db *db)
{
    for (int i = 0; i < db->ngrv; i++)
        cfdb_peer_unref(db->grv[i].peer);
    for (int i = 0; i < db->ncommit; i++)
        cfdb_peer_unref(db->commit[i].peer);
    db->ngrv = db->ncommit = 0;
}

/* The proxy lists hold a reference on their peers. */
static void install_proxies(cfdb_db *db, const cfdb_client_db_info *info)
{
    db_release_proxies(db);
    for (uint32_t i = 0; i < info->grvProxies.count && db->ngrv < MAX_PROXIES; i++) {
        const cfdb_grv_proxy_interface *g = &info->grvProxies.items[i];
        if (g->provisional)
            continue;
        cfdb_peer *p = cfdb_client_peer(db->cl, &g->getConsistentReadVersion.endpoint.addresses.address);
        if (p) {
            cfdb_peer_ref(p);
            db->grv[db->ngrv++] = (cfdb_endpoint_ref){ p, g->getConsistentReadVersion.endpoint.token };
        }
    }
    for (uint32_t i = 0; i < info->commitProxies.count && db->ncommit < MAX_PROXIES; i++) {
        const cfdb_commit_proxy_interface *c = &info->commitProxies.items[i];
        if (c->provisional)
            continue;
        cfdb_peer *p = cfdb_client_peer(db->cl, &c->commit.endpoint.addresses.address);
        if (p) {
            cfdb_peer_ref(p);
            db->commit[db->ncommit++] = (cfdb_endpoint_ref){ p, c->commit.endpoint.token };
        }
    }
    db->have_proxies = db->ngrv > 0 && db->ncommit > 0;
    if (!db->have_proxies)
        return;
    db_fail_list(&db->ready_waiters, 0);
    if (db->gc_state == 0)
        send_global_config(db);
    db_grv_proxies_ready(db);
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
    db_install_coordinators(db, &cs);
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
            db->tenant_mode = (int)info.tenantMode.mode;
            db->tenant_mode_final = info.grvProxies.count > 0 && !info.grvProxies.items[0].provisional;
            install_proxies(db, &info);
            gc_history(db, &info.history);
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
    const cfdb_network_address *addr = db_coordinator_address(db, db->coordinator_index);
    if (!addr) {
        db->poll_waiting_dns = true; /* resolve_done sends the poll, or moves on */
        if (!db_start_resolve(db, db->coordinator_index)) {
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
 * connected (fdbclient/GlobalConfig.actor.cpp, GlobalConfig::updater -> refresh(-1, 0)),
 * retrying with GLOBAL_CONFIG_REFRESH_BACKOFF 0.5 s doubling to 60 s, then follows
 * ClientDBInfo.history: entries newer than its last update are applied; when the first
 * entry is newer than that (history missed, or INT64_MAX after a protocol change) it
 * refreshes again with lastKnown = its last update, asking every 0.25 s until the reply's
 * version reaches the newest history entry. The view (global_config.c) answers
 * \xff\xff/global_config/ and the profiling keys. gc_state: 0 no refresh yet, 1 a refresh
 * in flight or waiting, 2 idle. */

static void gc_refresh(cfdb_db *db)
{
    cfdb_gc_refresh_begin(db->gc_view);
    db->gc_backoff_s = 0.5; /* a new Backoff per refresh */
    send_global_config(db);
}

static void gc_after_refresh(cfdb_db *db)
{
    db->gc_state = 2;
    /* the updater's loop runs once more after a refresh (its "continue"), which also takes
     * a ClientDBInfo that came meanwhile */
    if (db->gc_view && cfdb_gc_step(db->gc_view, true))
        gc_refresh(db);
}

static void gc_history(cfdb_db *db, const cfdb_version_history_vec *h)
{
    if (!db->gc_view || cfdb_gc_set_history(db->gc_view, h))
        return;
    /* during a refresh (gc_state 1) the history waits for gc_after_refresh */
    if (db->gc_state == 2 && cfdb_gc_step(db->gc_view, false))
        gc_refresh(db);
}

static void on_gc_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    cfdb_db *db = ctx;
    bool done = true;
    if (!error) {
        cfdb_global_config_refresh_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err = 0;
        cfdb_arena a;
        cfdb_arena_init(&a);
        error = fb_decode(&cfdb_msg_global_config_refresh_reply, msg, len, &rep, &err, &a);
        if (!error)
            error = err;
        if (!error && db->gc_view)
            done = cfdb_gc_refresh_reply(db->gc_view, &rep.result.data, rep.version);
        cfdb_arena_free(&a);
    }
    if (db->closing) {
        db->gc_state = 2;
    } else if (error) {
        double d = db->gc_backoff_s;
        db->gc_backoff_s = d * 2 < 60.0 ? d * 2 : 60.0;
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->gc_retry, (uint64_t)(d * 1e9));
    } else if (!done) {
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->gc_retry, 250000000u); /* delay(0.25) */
    } else {
        gc_after_refresh(db);
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
    req.lastKnown = db->gc_view ? cfdb_gc_refresh_last_known(db->gc_view) : -1;
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
