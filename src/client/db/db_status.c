/* \xff\xff/status/json's coordinator work: the leader monitor (one GetLeaderRequest long
 * poll per coordinator while status is read, stopped STATUS_IDLE_TIMEOUT after the last read)
 * and the coordinators check (GetLeader then ProtocolInfo to each, smart quorum).
 *
 * Invariants: each request in flight holds a database reference; a check in flight is on
 * db->checks until check_finish, which calls its waiter exactly once. */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

#include "endpoint.h"

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

void db_status_monitor_stop(cfdb_db *db)
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
    const cfdb_network_address *addr = db_coordinator_address(db, i);
    if (!addr)
        db_start_resolve(db, i); /* a hostname: asked once resolved (the retry below) */
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
        db_status_monitor_stop(db);
    else
        cfdb_loop_timer_add_in(loop, &db->sm_idle, STATUS_IDLE_TIMEOUT_NS - idle + 10000);
}

static void sm_wait_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    sm_fail_waiters(arg, CFDB_ERR_TIMED_OUT);
}

void db_status_init(cfdb_db *db)
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
    const cfdb_network_address *addr = db_coordinator_address(db, i);
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
void db_check_resolved(cfdb_db *db, int index, bool ok)
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
            if (!db_coordinator_address(db, i)) {
                /* a hostname not resolved yet: both its requests wait for the lookup */
                if (pass == 0 && db_start_resolve(db, i)) {
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
