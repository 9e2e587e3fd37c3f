/* The configuration database check of a coordinators change (config_txn.h), as libfdb_c
 * 7.3.77's verifyConfigurationDatabaseAlive runs a PAXOS configuration transaction
 * (fdbclient/PaxosConfigTransaction.actor.cpp) that reads the tuple (null, "test"):
 *
 *  1. reset: the coordinators are the database's connection string's (IP coordinators, then
 *     hostnames), the coordinators hash is std::hash<std::string> of its toString()
 *     ("key@coord,...").
 *  2. GetGenerationQuorum: ConfigTransactionGetGenerationRequest{hash, lastSeenLiveVersion} to
 *     every coordinator (well-known token 13), each answer within
 *     GET_GENERATION_QUORUM_TIMEOUT (3 s; broken_promise and a lost connection ask again);
 *     the first generation that a majority (n/2 + 1) answered is the read generation and its
 *     answerers the read replicas; when no generation can reach a majority any more, or every
 *     coordinator timed out, it is failed_to_reach_quorum: ask again after
 *     clamp(0.006 * 2^retries, 0, TIMEOUT_RETRY_UPPER_BOUND 20 s) (jitter left out).
 *     lastSeenLiveVersion is the highest live version seen, kept across resets.
 *  3. get: ConfigTransactionGetRequest{hash, generation, key} to a read replica (token 14),
 *     within GET_KNOB_TIMEOUT (3 s); timed_out, broken_promise and coordinators_changed
 *     reset the transaction and start again at 2.
 *  4. An error answer to a generation request (coordinators_changed when the node's hash
 *     differs) ends the get with that error; verifyConfigurationDatabaseAlive then backs off
 *     (coordinators_changed) or runs the transaction's onError (transaction_too_old and
 *     not_committed: a short delay, then again); any other error ends the check with it.
 *  The answer's value is not looked at: any answer means the configuration database is up.
 * cfdb bounds the whole check (timeout_ns, then timed_out); libfdb_c has no bound.
 * Everything after the start runs on the network thread; the caller waits on a future. */
#include <stdlib.h>
#include <string.h>

#include "config_messages.h"
#include "endpoint.h"
#include "error_codes.h"
#include "event_loop.h"
#include "network_address.h"
#include "config_txn.h"
#include "future.h"
#include "net.h"

#define GEN_TIMEOUT_NS 3000000000ull  /* CLIENT_KNOBS->GET_GENERATION_QUORUM_TIMEOUT */
#define GET_TIMEOUT_NS 3000000000ull  /* CLIENT_KNOBS->GET_KNOB_TIMEOUT */
#define RETRY_UPPER_NS 20000000000ull /* CLIENT_KNOBS->TIMEOUT_RETRY_UPPER_BOUND */
#define RESEND_NS 250000000ull        /* a lost connection: ask again */
#define TEST_KNOB "test"

typedef struct cv cv;
typedef struct cv_node {
    cv *v;
    cfdb_network_address addr;
    uint8_t v6[16];
    bool usable;
    uint64_t request;
    cfdb_timer resend;
    bool answered;
    cfdb_config_generation gen;
} cv_node;

struct cv {
    cfdb_db *db;
    cfdb_future *f;
    cfdb_task start;
    cfdb_timer overall, phase_timer, again;
    uint64_t timeout_ns, hash;
    char key[256];
    int n, replies, retries;
    bool reading, done, has_last_seen;
    int64_t last_seen;
    cfdb_config_generation gen;
    uint64_t get_request;
    cv_node node[CFDB_MAX_COORDINATORS];
};

static cfdb_loop *loop_of(cv *v)
{
    return cfdb_client_loop(cfdb_db_client(v->db));
}

static void forget_all(cv *v)
{
    cfdb_client *cl = cfdb_db_client(v->db);
    for (int i = 0; i < v->n; i++) {
        cfdb_loop_timer_cancel(loop_of(v), &v->node[i].resend);
        if (v->node[i].request)
            cfdb_client_forget(cl, v->node[i].request);
        v->node[i].request = 0;
    }
    if (v->get_request)
        cfdb_client_forget(cl, v->get_request);
    v->get_request = 0;
    cfdb_loop_timer_cancel(loop_of(v), &v->phase_timer);
    cfdb_loop_timer_cancel(loop_of(v), &v->again);
}

static void finish(cv *v, int error)
{
    if (v->done)
        return;
    v->done = true;
    forget_all(v);
    cfdb_loop_timer_cancel(loop_of(v), &v->overall);
    cfdb_future_complete(v->f, error);
    cfdb_future_unref(v->f);
    cfdb_db_unref(v->db);
    free(v);
}

static void attempt(cv *v);

/* Starts again from the generation quorum after delay_ns. */
static void retry_after(cv *v, uint64_t delay_ns)
{
    forget_all(v);
    cfdb_loop_timer_add_in(loop_of(v), &v->again, delay_ns);
}

static uint64_t backoff_ns(cv *v)
{
    int r = v->retries < 30 ? v->retries : 30;
    v->retries++;
    uint64_t d = 6000000ull << r;
    return d > RETRY_UPPER_NS ? RETRY_UPPER_NS : d;
}

/* An error thrown out of the transaction's get: verifyConfigurationDatabaseAlive's handling. */
static void get_failed(cv *v, int error)
{
    if (error == CFDB_ERR_COORDINATORS_CHANGED || error == CFDB_ERR_TRANSACTION_TOO_OLD ||
        error == CFDB_ERR_NOT_COMMITTED)
        retry_after(v, backoff_ns(v));
    else
        finish(v, error);
}

static void on_get(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    cv *v = ctx;
    v->get_request = 0;
    cfdb_reply_error err = 0;
    if (!error) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_config_get_reply rep;
        memset(&rep, 0, sizeof rep);
        int drc = fb_decode(&cfdb_msg_config_get_reply, msg, len, &rep, &err, &a);
        cfdb_arena_free(&a);
        if (drc)
            error = drc;
    }
    if (!error && !err) {
        finish(v, 0); /* the configuration database answered */
        return;
    }
    int e = error ? error : (int)err;
    if (e == CFDB_ERR_BROKEN_PROMISE || e == CFDB_ERR_CONNECTION_FAILED || e == CFDB_ERR_REQUEST_MAYBE_DELIVERED ||
        e == CFDB_ERR_COORDINATORS_CHANGED)
        retry_after(v, RESEND_NS); /* get()'s own loop: reset and again */
    else
        get_failed(v, e);
}

static void send_get(cv *v)
{
    cv_node *replica = NULL;
    for (int i = 0; i < v->n && !replica; i++)
        if (v->node[i].answered && v->node[i].gen.committedVersion == v->gen.committedVersion &&
            v->node[i].gen.liveVersion == v->gen.liveVersion)
            replica = &v->node[i];
    cfdb_client *cl = cfdb_db_client(v->db);
    cfdb_peer *peer = replica ? cfdb_client_peer(cl, &replica->addr) : NULL;
    cfdb_config_get_request req;
    memset(&req, 0, sizeof req);
    req.coordinatorsHash = v->hash;
    req.generation = v->gen;
    req.key.knobName = CFDB_BYTES_LIT(TEST_KNOB); /* configClass absent: the tuple's null */
    v->reading = true;
    cfdb_loop_timer_add_in(loop_of(v), &v->phase_timer, GET_TIMEOUT_NS);
    v->get_request = peer ? cfdb_client_request(cl, peer, cfdb_well_known_token(CFDB_WLTOKEN_CONFIGTXN_GET),
                                                &cfdb_msg_config_get_request, &req, &req.reply.token, on_get, v)
                          : 0;
    if (!v->get_request)
        retry_after(v, RESEND_NS);
}

static void quorum_failed(cv *v)
{
    retry_after(v, backoff_ns(v)); /* failed_to_reach_quorum: jittered delay, then again */
}

static void check_quorum(cv *v)
{
    int need = v->n / 2 + 1, best = 0, answered = 0;
    for (int i = 0; i < v->n; i++) {
        if (!v->node[i].answered)
            continue;
        answered++;
        int same = 0;
        for (int j = 0; j < v->n; j++)
            same += v->node[j].answered && v->node[j].gen.committedVersion == v->node[i].gen.committedVersion &&
                    v->node[j].gen.liveVersion == v->node[i].gen.liveVersion;
        if (same > best)
            best = same;
        if (same >= need) {
            v->gen = v->node[i].gen;
            forget_all(v);
            send_get(v);
            return;
        }
    }
    if (best + (v->n - answered) < need)
        quorum_failed(v);
}

static void send_generation(cv_node *o);

static void on_generation(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    cv_node *o = ctx;
    cv *v = o->v;
    o->request = 0;
    cfdb_reply_error err = 0;
    cfdb_config_get_generation_reply rep;
    memset(&rep, 0, sizeof rep);
    if (!error) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        int drc = fb_decode(&cfdb_msg_config_get_generation_reply, msg, len, &rep, &err, &a);
        cfdb_arena_free(&a);
        if (drc)
            error = drc;
    }
    int e = error ? error : (int)err;
    if (e == CFDB_ERR_BROKEN_PROMISE || e == CFDB_ERR_CONNECTION_FAILED || e == CFDB_ERR_REQUEST_MAYBE_DELIVERED) {
        cfdb_loop_timer_add_in(loop_of(v), &o->resend, RESEND_NS); /* until the 3 s timeout */
        return;
    }
    if (e) { /* thrown out of the quorum, then out of get() */
        get_failed(v, e);
        return;
    }
    o->answered = true;
    o->gen = rep.generation;
    if (!v->has_last_seen || rep.generation.liveVersion > v->last_seen) {
        v->last_seen = rep.generation.liveVersion;
        v->has_last_seen = true;
    }
    check_quorum(v);
}

static void send_generation(cv_node *o)
{
    cv *v = o->v;
    cfdb_client *cl = cfdb_db_client(v->db);
    cfdb_peer *peer = o->usable ? cfdb_client_peer(cl, &o->addr) : NULL;
    cfdb_config_get_generation_request req;
    memset(&req, 0, sizeof req);
    req.coordinatorsHash = v->hash;
    req.lastSeenLiveVersion.present = v->has_last_seen;
    req.lastSeenLiveVersion.value = v->last_seen;
    o->request = peer ? cfdb_client_request(cl, peer, cfdb_well_known_token(CFDB_WLTOKEN_CONFIGTXN_GETGENERATION),
                                            &cfdb_msg_config_get_generation_request, &req, &req.reply.token,
                                            on_generation, o)
                      : 0;
    if (!o->request && o->usable)
        cfdb_loop_timer_add_in(loop_of(v), &o->resend, RESEND_NS);
}

static void on_resend(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    send_generation(arg);
}

static void on_phase_timeout(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    cv *v = arg;
    if (v->reading)
        retry_after(v, RESEND_NS); /* get: timed_out resets the transaction */
    else
        quorum_failed(v); /* the rest timed out: no majority */
}

static void on_overall(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    finish(arg, CFDB_ERR_TIMED_OUT);
}

static void on_again(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    attempt(arg);
}

/* PaxosConfigTransactionImpl::reset, then the generation quorum. */
static void attempt(cv *v)
{
    cfdb_db *db = v->db;
    char cs[CFDB_MAX_COORDINATORS * 300 + 300];
    size_t o = (size_t)snprintf(cs, sizeof cs, "%s@", cfdb_db_cluster_key(db));
    v->n = 0;
    for (int pass = 0; pass < 2; pass++) /* ClusterConnectionString::toString: IPs, then hostnames */
        for (int i = 0; i < cfdb_db_coord_count(db) && v->n < CFDB_MAX_COORDINATORS; i++) {
            const cfdb_db_coord *k = cfdb_db_coord_at(db, i);
            if (k->hostname != (pass == 1))
                continue;
            char text[320];
            if (k->hostname)
                snprintf(text, sizeof text, "%s:%s%s", k->host, k->service, k->tls ? ":tls" : "");
            else
                cfdb_network_address_format(&k->addr, text, sizeof text);
            if (o < sizeof cs)
                o += (size_t)snprintf(cs + o, sizeof cs - o, "%s%s", v->n ? "," : "", text);
            cv_node *nd = &v->node[v->n++];
            nd->addr = k->addr;
            memcpy(nd->v6, k->v6, 16);
            if (nd->addr.ip.tag == 2) {
                nd->addr.ip.v6.items = nd->v6;
                nd->addr.ip.v6.count = 16;
            }
            nd->usable = !k->hostname || k->resolved;
            nd->answered = false;
            nd->request = 0;
        }
    v->hash = cfdb_std_string_hash(cs, o < sizeof cs ? o : sizeof cs - 1);
    v->reading = false;
    if (v->n == 0) {
        finish(v, CFDB_ERR_COORDINATORS_CHANGED);
        return;
    }
    cfdb_loop_timer_add_in(loop_of(v), &v->phase_timer, GEN_TIMEOUT_NS);
    for (int i = 0; i < v->n && !v->done && !v->reading; i++)
        send_generation(&v->node[i]);
}

static void on_start(void *arg)
{
    cv *v = arg;
    cfdb_loop_timer_add_in(loop_of(v), &v->overall, v->timeout_ns);
    attempt(v);
}

int cfdb_config_verify_alive(cfdb_db *db, uint64_t timeout_ns)
{
    cv *v = calloc(1, sizeof *v);
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_INT64);
    if (!v || !f) {
        free(v);
        if (f)
            cfdb_future_unref(f);
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    v->db = db;
    cfdb_db_ref(db);
    v->f = f;
    cfdb_future_ref(f);
    v->timeout_ns = timeout_ns;
    for (int i = 0; i < CFDB_MAX_COORDINATORS; i++) {
        v->node[i].v = v;
        cfdb_timer_init(&v->node[i].resend, on_resend, &v->node[i]);
    }
    cfdb_timer_init(&v->overall, on_overall, v);
    cfdb_timer_init(&v->phase_timer, on_phase_timeout, v);
    cfdb_timer_init(&v->again, on_again, v);
    cfdb_task_init(&v->start, on_start, v);
    cfdb_loop_post_task(loop_of(v), &v->start);
    cfdb_future_wait(f);
    int rc = f->error;
    cfdb_future_unref(f);
    return rc;
}
