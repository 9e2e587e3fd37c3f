/* The database-level management calls of fdb_c.h, as libfdb_c 7.3.77 makes them
 * (fdbclient/NativeAPI.actor.cpp, ManagementAPI.actor.cpp):
 *
 *  - fdb_database_create_snapshot (DatabaseContext::createSnapshot): the uid must be 32 hex
 *    digits, else snap_invalid_uid_string (2509) at once; then snapCreate: a ProxySnapRequest
 *    {snapPayload, snapUID, reply, debugID = snapUID} (file id 5427684) to a commit proxy
 *    (CommitProxyInterface stream 7), at most once (a lost request is
 *    request_maybe_delivered); the proxy's answer is the call's.
 *  - fdb_database_force_recovery_with_data_loss (forceRecovery): a ForceRecoveryRequest
 *    {dcId, reply} (file id 14821350) to the cluster controller's ClusterInterface.forceRecovery
 *    (stream 5), found through the coordinators (the leader's ClusterControllerClientInterface).
 *    A broken promise or a lost connection waits for the cluster controller and asks again
 *    (brokenPromiseToNever + onChange); any other answer is the call's.
 *  - fdb_database_reboot_worker (rebootWorkerActor): GetClientWorkersRequest {reply} (file id
 *    10771791) to ClusterInterface.getClientWorkers (stream 4), answered with every worker's
 *    ClientWorkerInterface {reboot, profiler, setFailureInjection} (12418152); each address of
 *    the comma-separated list must be a worker's (its primary address, or its secondary one,
 *    ":tls" ignored), else the answer is 0; each worker must answer a GetLeaderRequest at its
 *    address (ClientLeaderRegInterface, well-known token 3) within CLI_CONNECT_TIMEOUT (10 s),
 *    else 0; then RebootRequest {deleteData false, checkData, waitForDuration} (11913957) goes
 *    to each worker's reboot stream, one way, and the answer is 1. A negative duration is 0.
 *  - cfdb_db_get_client_workers (getWorkerInterfaces, for \xff\xff/worker_interfaces/): the
 *    same GetClientWorkersRequest; its workers as (address, binary ClientWorkerInterface) rows.
 *    cfdb_db_get_client_workers_verified (the verify option): then GetLeaderRequest to each
 *    worker's address, keeping the rows of those answering within CLI_CONNECT_TIMEOUT.
 *  - cfdb_db_get_health_metrics (getHealthMetricsActor, for \xff\xff/metrics/health/):
 *    GetHealthMetricsRequest {reply, detailed} (11403900) to a GRV proxy's getHealthMetrics
 *    (GrvProxyInterface stream 2); failures ask again; the answer is the reply's serialized
 *    HealthMetrics. libfdb_c's cache of recent answers (AGGREGATE_/DETAILED_HEALTH_METRICS_MAX_
 *    STALENESS) is kept by the caller (special_metrics.c).
 *  - cfdb_db_get_dd_metrics (waitDataDistributionMetricsList, for
 *    \xff\xff/metrics/data_distribution_stats/): GetDDMetricsRequest {keys, shardLimit
 *    TOO_MANY, reply} (14536812) to a commit proxy's getDDMetrics (stream 9); dd_not_found and
 *    lost requests ask again; rows (shard begin key, shardBytes and shardBytesPerKSecond as two
 *    little-endian int64).
 *
 * Each call is one mg_op (heap: it outlives nothing but its own requests), holding a reference
 * on its database and on its future; the steps run on the network thread; a future completed
 * early (cancelled, destroyed) ends the op at its next step. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "exclusion.h"
#include "network_address.h"
#include "protocol_version.h"
#include "database.h"
#include "future.h"

#define MG_RETRY_NS 1000000000ull         /* asking the cluster controller again */
#define CLI_CONNECT_TIMEOUT_NS 10000000000ull /* CLIENT_KNOBS->CLI_CONNECT_TIMEOUT */
#define MG_MAX_WORKERS 64

enum mg_kind { MG_SNAPSHOT, MG_FORCE_RECOVERY, MG_REBOOT, MG_CLIENT_WORKERS, MG_HEALTH, MG_DD_METRICS,
               MG_EXCLUSION_CHECK };
enum mg_stage { MG_ASK, MG_VERIFY };

/* ---- messages: src/wire/msg_manage.c ---- */

/* ---- the operation ---- */

typedef struct mg_op mg_op;

typedef struct mg_worker {
    mg_op *op;
    uint64_t verify;                /* its GetLeaderRequest while unanswered */
    cfdb_network_address addr;      /* the reboot stream's primary address */
    cfdb_network_address second;    /* its secondary address, if has_second */
    bool has_second;
    cfdb_uid reboot_token;
    bool ok; /* answered its GetLeaderRequest */
} mg_worker;

struct mg_op {
    cfdb_db *db;
    cfdb_future *f;
    enum mg_kind kind;
    enum mg_stage stage;
    cfdb_task run;
    cfdb_timer timer;
    cfdb_waiter w;
    uint64_t request;
    uint8_t *arg; /* snapshot command, dc id, or the address list */
    size_t arg_len;
    cfdb_uid uid;
    bool check; /* reboot: checkData; health: detailed */
    uint32_t duration; /* reboot: seconds; data distribution metrics: the end key's length */
    /* reboot: the requested workers, and which of them answered GetLeader */
    mg_worker targets[MG_MAX_WORKERS];
    int ntargets;
    int verified;
};

static void mg_step(mg_op *m);
static void workers_verified(mg_op *m);

static void mg_end(mg_op *m, int error)
{
    cfdb_loop *loop = cfdb_client_loop(cfdb_db_client(m->db));
    cfdb_loop_timer_cancel(loop, &m->timer);
    if (m->request)
        cfdb_client_forget(cfdb_db_client(m->db), m->request);
    for (int i = 0; i < m->ntargets; i++)
        if (m->targets[i].verify)
            cfdb_client_forget(cfdb_db_client(m->db), m->targets[i].verify);
    cfdb_future_try_complete(m->f, error);
    cfdb_future_unref(m->f);
    cfdb_db_unref(m->db);
    free(m->arg);
    free(m);
}

static void mg_timer(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    mg_op *m = arg;
    if (m->stage == MG_VERIFY && m->kind == MG_CLIENT_WORKERS) {
        workers_verified(m); /* CLI_CONNECT_TIMEOUT: those that did not answer are left out */
        return;
    }
    if (m->stage == MG_VERIFY) { /* CLI_CONNECT_TIMEOUT: a worker did not answer */
        m->f->r.i64 = 0;
        mg_end(m, 0);
        return;
    }
    mg_step(m);
}

static void mg_retry(mg_op *m)
{
    cfdb_loop_timer_add_in(cfdb_client_loop(cfdb_db_client(m->db)), &m->timer, MG_RETRY_NS);
}

static void mg_run(void *arg)
{
    mg_step(arg);
}

static void mg_ready(cfdb_waiter *w, int error, int64_t v)
{
    (void)v;
    mg_op *m = (mg_op *)((char *)w - offsetof(mg_op, w));
    if (error)
        mg_retry(m); /* no leader yet (or proxies): ask again */
    else
        mg_step(m);
}

/* The error an ErrorOr<Void> reply carries: 0, its error, or why it does not decode. */
static int void_reply_error(const uint8_t *msg, uint32_t len)
{
    cfdb_void v;
    cfdb_reply_error err = 0;
    uint64_t mem[4];
    cfdb_arena a;
    cfdb_arena_init_with(&a, mem, sizeof mem);
    int rc = fb_decode(&cfdb_msg_void_reply, msg, len, &v, &err, &a);
    cfdb_arena_free(&a);
    return rc ? rc : (int)err;
}

/* ---- snapshot ---- */

static void on_snap_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    mg_op *m = ctx;
    m->request = 0;
    if (!error) {
        error = void_reply_error(msg, len);
    } else {
        error = CFDB_ERR_REQUEST_MAYBE_DELIVERED; /* AtMostOnce: it may have been delivered */
    }
    mg_end(m, error);
}

static void snap_step(mg_op *m)
{
    const cfdb_endpoint_ref *proxy = cfdb_db_commit_proxy(m->db);
    if (!proxy) {
        m->w.fn = mg_ready;
        cfdb_db_when_ready(m->db, &m->w);
        return;
    }
    cfdb_proxy_snap_request req;
    memset(&req, 0, sizeof req);
    req.snapPayload = cfdb_bytes_make(m->arg, m->arg_len);
    req.snapUID = m->uid;
    req.debugID.present = true;
    req.debugID.value = m->uid;
    m->request = cfdb_client_request(cfdb_db_client(m->db), proxy->peer,
                                     cfdb_adjusted_token(proxy->token, CFDB_CP_PROXY_SNAP_REQ), &cfdb_msg_proxy_snap_request, &req,
                                     &req.reply.token, on_snap_reply, m);
    if (!m->request)
        mg_retry(m); /* not sent: nothing can have been delivered */
}

/* ---- health metrics (getHealthMetricsActor: a GRV proxy's getHealthMetrics stream) ---- */

static void on_health_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    mg_op *m = ctx;
    m->request = 0;
    if (error) { /* loadBalance moves on to another proxy (this one, again, here) */
        mg_retry(m);
        return;
    }
    cfdb_get_health_metrics_reply rep;
    cfdb_reply_error err = 0;
    int rc = fb_decode(&cfdb_msg_get_health_metrics_reply, msg, len, &rep, &err, &m->f->arena);
    if (!rc && err == CFDB_ERR_BROKEN_PROMISE) {
        mg_retry(m);
        return;
    }
    if (!rc && !err) {
        m->f->r.value.present = true;
        m->f->r.value.value = rep.serialized;
    }
    mg_end(m, rc ? rc : (int)err);
}

static void health_step(mg_op *m)
{
    const cfdb_endpoint_ref *proxy = cfdb_db_grv_proxy(m->db);
    if (!proxy) {
        m->w.fn = mg_ready;
        cfdb_db_when_ready(m->db, &m->w);
        return;
    }
    cfdb_get_health_metrics_request req;
    memset(&req, 0, sizeof req);
    req.detailed = m->check;
    m->request = cfdb_client_request(cfdb_db_client(m->db), proxy->peer,
                                     cfdb_adjusted_token(proxy->token, CFDB_GRV_GET_HEALTH_METRICS),
                                     &cfdb_msg_get_health_metrics_request, &req, &req.reply.token, on_health_reply, m);
    if (!m->request)
        mg_retry(m);
}

/* ---- data distribution metrics (waitDataDistributionMetricsList: a commit proxy's
 * getDDMetrics) ---- */

static void on_dd_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    mg_op *m = ctx;
    m->request = 0;
    if (error) {
        mg_retry(m);
        return;
    }
    cfdb_get_dd_metrics_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    cfdb_future *f = m->f;
    int rc = fb_decode(&cfdb_msg_get_dd_metrics_reply, msg, len, &rep, &err, &f->arena);
    if (!rc && (err == CFDB_ERR_BROKEN_PROMISE || err == CFDB_ERR_DD_NOT_FOUND)) {
        mg_retry(m); /* ddMetricsGetRangeActor waits for a data distributor */
        return;
    }
    uint32_t n = rep.storageMetricsList.count;
    cfdb_fdb_kv *kv = !rc && !err ? cfdb_arena_alloc(&f->arena, (n ? n : 1) * sizeof *kv) : NULL;
    if (!rc && !err && !kv)
        rc = CFDB_ERR_UNKNOWN_ERROR;
    for (uint32_t i = 0; kv && i < n; i++) {
        const cfdb_dd_metrics_ref *d = &rep.storageMetricsList.items[i];
        uint8_t *v = cfdb_arena_alloc(&f->arena, 16);
        if (!v) {
            rc = CFDB_ERR_UNKNOWN_ERROR;
            break;
        }
        memcpy(v, &d->shardBytes, 8);
        memcpy(v + 8, &d->shardBytesPerKSecond, 8);
        kv[i] = (cfdb_fdb_kv){ d->beginKey.ptr, (int)d->beginKey.len, v, 16 };
    }
    if (!rc && !err) {
        f->r.kvs.items = kv;
        f->r.kvs.count = (int)n;
    }
    mg_end(m, rc ? rc : (int)err);
}

static void dd_step(mg_op *m)
{
    const cfdb_endpoint_ref *proxy = cfdb_db_commit_proxy(m->db);
    if (!proxy) {
        m->w.fn = mg_ready;
        cfdb_db_when_ready(m->db, &m->w);
        return;
    }
    cfdb_get_dd_metrics_request req;
    memset(&req, 0, sizeof req);
    /* arg: begin then end, split at arg_len - end_len */
    req.keys.begin = cfdb_bytes_make(m->arg, m->arg_len - m->duration);
    req.keys.end = cfdb_bytes_make(m->arg + m->arg_len - m->duration, m->duration);
    req.shardLimit = 1000000; /* CLIENT_KNOBS->TOO_MANY */
    m->request = cfdb_client_request(cfdb_db_client(m->db), proxy->peer,
                                     cfdb_adjusted_token(proxy->token, CFDB_CP_GET_DD_METRICS),
                                     &cfdb_msg_get_dd_metrics_request, &req, &req.reply.token, on_dd_reply, m);
    if (!m->request)
        mg_retry(m);
}

/* ---- the cluster controller (force recovery, reboot) ---- */

/* The leader's ClusterInterface, decoded into a (scratch) arena; false if none is known. */
static bool cluster_interface(mg_op *m, cfdb_arena *a, cfdb_cluster_controller_client_interface *cc)
{
    cfdb_bytes info;
    bool forward = false;
    if (!cfdb_db_status_leader(m->db, &info, &forward) || forward || info.len <= 8)
        return false;
    memset(cc, 0, sizeof *cc);
    return fb_decode(&cfdb_msg_cluster_controller_client_interface, info.ptr + 8, info.len - 8, cc, NULL, a) == 0;
}

static void on_force_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    mg_op *m = ctx;
    m->request = 0;
    if (!error) {
        error = void_reply_error(msg, len);
        if (error != CFDB_ERR_BROKEN_PROMISE) {
            mg_end(m, error);
            return;
        }
    }
    mg_retry(m); /* brokenPromiseToNever: wait for the next cluster controller */
}

static void verify_done(mg_op *m);

static void on_verify_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    (void)msg;
    (void)len;
    mg_worker *t = ctx;
    mg_op *m = t->op;
    t->verify = 0;
    /* brokenPromiseToNever: a worker that does not answer runs into the timeout; any answer
     * (the leader it knows, or none) shows it can be reached */
    if (error && error != CFDB_ERR_BROKEN_PROMISE)
        return;
    if (error) {
        /* the endpoint is not there: never an answer (the timeout decides) */
        return;
    }
    t->ok = true;
    if (++m->verified == m->ntargets)
        verify_done(m);
}

static void ignore_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    (void)ctx;
    (void)error;
    (void)msg;
    (void)len;
}

static bool same_address(const cfdb_network_address *a, const char *text)
{
    char buf[96];
    size_t n = cfdb_network_address_format(a, buf, sizeof buf);
    /* ":tls" is not part of the address compared (rebootWorkerActor removes it) */
    if (n > 4 && strcmp(buf + n - 4, ":tls") == 0)
        buf[n - 4] = 0;
    return strcmp(buf, text) == 0;
}

/* BinaryWriter::toValue(ClientWorkerInterface, IncludeVersion()) as 7.3.77's
 * getWorkerInterfaces (fdbclient/ReadYourWrites.actor.cpp) writes it: the protocol version
 * (uint64, currentProtocolVersion, no flags), then for reboot, profiler and
 * setFailureInjection (ClientWorkerInterface::serialize order) the stream's Endpoint in
 * binary form (fdbrpc FlowTransport.h: NetworkAddressList {address, Optional secondary},
 * then the token UID as two uint64). A NetworkAddress (flow/NetworkAddress.h) is IPAddress
 * (bool isV6, then uint32 or 16 bytes), uint16 port, uint16 flags, bool fromHostname (present
 * since hasNetworkAddressHostnameFlag). All little-endian. At most 8 + 3 * 71 bytes. */
#define MG_BINARY_WORKER_MAX (8 + 3 * (2 * (1 + 16 + 5) + 1 + 16))
static uint8_t *put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}
static uint8_t *put_address(uint8_t *p, const cfdb_network_address *a)
{
    bool v6 = a->ip.tag == 2 && a->ip.v6.count == 16;
    *p++ = v6;
    if (v6) {
        memcpy(p, a->ip.v6.items, 16);
        p += 16;
    } else {
        p = put_le(p, a->ip.v4, 4);
    }
    p = put_le(p, a->port, 2);
    p = put_le(p, a->flags, 2);
    *p++ = a->fromHostname;
    return p;
}
static size_t binary_worker(const cfdb_client_worker_interface *w, uint8_t *out)
{
    const cfdb_request_stream *streams[3] = { &w->reboot, &w->profiler, &w->setFailureInjection };
    uint8_t *p = put_le(out, CFDB_PROTOCOL_VERSION, 8);
    for (int i = 0; i < 3; i++) {
        const cfdb_endpoint *ep = &streams[i]->endpoint;
        p = put_address(p, &ep->addresses.address);
        *p++ = ep->addresses.secondaryAddress.present;
        if (ep->addresses.secondaryAddress.present)
            p = put_address(p, &ep->addresses.secondaryAddress.value);
        p = put_le(p, ep->token.first, 8);
        p = put_le(p, ep->token.second, 8);
    }
    return (size_t)(p - out);
}

/* MG_CLIENT_WORKERS: the reply's workers as rows in the future's arena, key the reboot
 * stream's address as NetworkAddress::toString, value binary_worker, in reply order. */
static int workers_rows(mg_op *m, const cfdb_client_workers_reply *rep)
{
    cfdb_future *f = m->f;
    uint32_t n = rep->workers.count;
    cfdb_fdb_kv *kv = cfdb_arena_alloc(&f->arena, (n ? n : 1) * sizeof *kv);
    if (!kv)
        return CFDB_ERR_UNKNOWN_ERROR;
    for (uint32_t i = 0; i < n; i++) {
        char key[96];
        size_t klen = cfdb_network_address_format(&rep->workers.items[i].reboot.endpoint.addresses.address, key,
                                                  sizeof key);
        uint8_t val[MG_BINARY_WORKER_MAX];
        size_t vlen = binary_worker(&rep->workers.items[i], val);
        cfdb_bytes k, v;
        if (klen >= sizeof key || cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_make((const uint8_t *)key, klen), &k) ||
            cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_make(val, vlen), &v))
            return CFDB_ERR_UNKNOWN_ERROR;
        kv[i] = (cfdb_fdb_kv){ k.ptr, (int)k.len, v.ptr, (int)v.len };
    }
    f->r.kvs.items = kv;
    f->r.kvs.count = (int)n;
    f->r.kvs.more = false;
    return 0;
}

/* verifyInterfaceActor for each target: GetLeaderRequest at its address (on_verify_reply
 * marks the ones that answer), and the CLI_CONNECT_TIMEOUT timer that ends the wait. */
static void verify_targets(mg_op *m, cfdb_client *cl)
{
    for (int i = 0; i < m->ntargets; i++) {
        cfdb_peer *peer = cfdb_client_peer(cl, &m->targets[i].addr);
        cfdb_get_leader_request req;
        memset(&req, 0, sizeof req);
        m->targets[i].verify =
            peer ? cfdb_client_request(cl, peer, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                                       &cfdb_msg_get_leader_request, &req, &req.reply.token, on_verify_reply,
                                       &m->targets[i])
                 : 0;
    }
    cfdb_loop_timer_add_in(cfdb_client_loop(cl), &m->timer, CLI_CONNECT_TIMEOUT_NS);
}

/* worker_interfaces/verify (workerInterfacesImplGetRangeActor with verify set): each worker
 * is asked GetLeaderRequest at its address, as verifyInterfaceActor does; the rows of those
 * that answer within CLI_CONNECT_TIMEOUT are kept (workers_verified). Workers past
 * MG_MAX_WORKERS are not asked and not kept. */
static void workers_verify(mg_op *m, const cfdb_client_workers_reply *rep)
{
    m->stage = MG_VERIFY;
    m->verified = 0;
    m->ntargets = 0;
    cfdb_client *cl = cfdb_db_client(m->db);
    for (uint32_t i = 0; i < rep->workers.count && m->ntargets < MG_MAX_WORKERS; i++) {
        mg_worker *t = &m->targets[m->ntargets++];
        t->op = m;
        t->addr = rep->workers.items[i].reboot.endpoint.addresses.address;
        t->ok = false;
    }
    verify_targets(m, cl);
}

/* The verified workers' rows (the future's rows are in reply order, as the targets). */
static void workers_verified(mg_op *m)
{
    cfdb_fdb_kv *kv = m->f->r.kvs.items;
    int n = 0;
    for (int i = 0; i < m->f->r.kvs.count; i++)
        if (i < m->ntargets && m->targets[i].ok)
            kv[n++] = kv[i];
    m->f->r.kvs.count = n;
    mg_end(m, 0);
}

static void on_workers_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    mg_op *m = ctx;
    m->request = 0;
    if (error) {
        mg_retry(m);
        return;
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_client_workers_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    int rc = fb_decode(&cfdb_msg_client_workers_reply, msg, len, &rep, &err, &a);
    if (rc || err) {
        cfdb_arena_free(&a);
        if (!rc && err == CFDB_ERR_BROKEN_PROMISE) {
            mg_retry(m);
            return;
        }
        mg_end(m, rc ? rc : err);
        return;
    }
    if (m->kind == MG_CLIENT_WORKERS) {
        int wrc = workers_rows(m, &rep);
        if (!wrc && m->check && rep.workers.count > 0) { /* worker_interfaces/verify */
            workers_verify(m, &rep);
            cfdb_arena_free(&a);
            return;
        }
        cfdb_arena_free(&a);
        mg_end(m, wrc);
        return;
    }
    /* every requested address must be a worker's */
    m->ntargets = 0;
    const char *p = (const char *)m->arg, *end = p + m->arg_len;
    bool all_found = true;
    while (p <= end && all_found) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        char want[96];
        size_t n = (size_t)(stop - p);
        if (n >= sizeof want || m->ntargets == MG_MAX_WORKERS) {
            all_found = false;
            break;
        }
        memcpy(want, p, n);
        want[n] = 0;
        bool found = false;
        for (uint32_t i = 0; i < rep.workers.count && !found; i++) {
            const cfdb_endpoint *ep = &rep.workers.items[i].reboot.endpoint;
            bool second = ep->addresses.secondaryAddress.present;
            if (same_address(&ep->addresses.address, want) ||
                (second && same_address(&ep->addresses.secondaryAddress.value, want))) {
                mg_worker *t = &m->targets[m->ntargets++];
                t->op = m;
                t->addr = ep->addresses.address;
                t->has_second = second;
                if (second)
                    t->second = ep->addresses.secondaryAddress.value;
                t->reboot_token = ep->token;
                found = true;
            }
        }
        all_found = found;
        if (!comma)
            break;
        p = comma + 1;
    }
    cfdb_arena_free(&a);
    if (!all_found) {
        m->f->r.i64 = 0;
        mg_end(m, 0);
        return;
    }
    /* verifyInterfaceActor: each worker answers GetLeaderRequest within CLI_CONNECT_TIMEOUT */
    m->stage = MG_VERIFY;
    m->verified = 0;
    cfdb_client *cl = cfdb_db_client(m->db);
    verify_targets(m, cl);
}

/* Every worker answered: RebootRequest to each, one way (ReplyPromise-less .send). */
static void verify_done(mg_op *m)
{
    if (m->kind == MG_CLIENT_WORKERS) {
        workers_verified(m);
        return;
    }
    cfdb_client *cl = cfdb_db_client(m->db);
    for (int i = 0; i < m->ntargets; i++) {
        cfdb_peer *peer = cfdb_client_peer(cl, &m->targets[i].addr);
        cfdb_reboot_request req = { false, m->check, m->duration };
        cfdb_uid unused;
        uint64_t id = peer ? cfdb_client_request(cl, peer, m->targets[i].reboot_token, &cfdb_msg_reboot_request, &req, &unused,
                                                 ignore_reply, NULL)
                           : 0;
        if (id)
            cfdb_client_forget(cl, id); /* no answer comes: the message is queued, nothing waits */
    }
    m->f->r.i64 = 1;
    mg_end(m, 0);
}

static void cc_step(mg_op *m)
{
    cfdb_db_status_monitor(m->db); /* monitorLeader for the cluster controller */
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_cluster_controller_client_interface cc;
    if (!cluster_interface(m, &a, &cc)) {
        cfdb_arena_free(&a);
        m->w.fn = mg_ready;
        cfdb_db_status_leader_wait(m->db, &m->w);
        return;
    }
    cfdb_client *cl = cfdb_db_client(m->db);
    const cfdb_endpoint *ep = m->kind == MG_FORCE_RECOVERY ? &cc.clientInterface.forceRecovery.endpoint
                                                            : &cc.clientInterface.getClientWorkers.endpoint;
    cfdb_peer *peer = cfdb_client_peer(cl, &ep->addresses.address);
    if (m->kind == MG_FORCE_RECOVERY) {
        cfdb_force_recovery_request req;
        memset(&req, 0, sizeof req);
        req.dcId = cfdb_bytes_make(m->arg, m->arg_len);
        m->request = peer ? cfdb_client_request(cl, peer, ep->token, &cfdb_msg_force_recovery_request, &req, &req.reply.token,
                                                on_force_reply, m)
                          : 0;
    } else {
        cfdb_get_client_workers_request req;
        memset(&req, 0, sizeof req);
        m->request = peer ? cfdb_client_request(cl, peer, ep->token, &cfdb_msg_get_client_workers_request, &req, &req.reply.token,
                                                on_workers_reply, m)
                          : 0;
    }
    cfdb_arena_free(&a);
    if (!m->request)
        mg_retry(m);
}

/* ---- exclusion safety (checkSafeExclusions' request): ExclusionSafetyCheckRequest
 * {exclusions, reply} (13852702) to a commit proxy's exclusionSafetyCheckReq (stream 8); a
 * lost request asks again (basicLoadBalance), the reply's error or its `safe` is the answer.
 * The exclusions travel in arg as EXCL_PACKED bytes each: tag (1 v4, 2 v6), 16 address bytes
 * (v4: the host-order uint32 first), int32 port. ---- */
#define EXCL_PACKED 21

static void on_exclusion_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    mg_op *m = ctx;
    m->request = 0;
    if (error) {
        mg_retry(m);
        return;
    }
    cfdb_exclusion_safety_check_reply rep = { false };
    cfdb_reply_error err = 0;
    uint64_t mem[8];
    cfdb_arena a;
    cfdb_arena_init_with(&a, mem, sizeof mem);
    int rc = fb_decode(&cfdb_msg_exclusion_safety_check_reply, msg, len, &rep, &err, &a);
    cfdb_arena_free(&a);
    if (!rc && err == CFDB_ERR_BROKEN_PROMISE) {
        mg_retry(m);
        return;
    }
    m->f->r.i64 = rep.safe ? 1 : 0;
    mg_end(m, rc ? rc : (int)err);
}

static void exclusion_step(mg_op *m)
{
    const cfdb_endpoint_ref *proxy = cfdb_db_commit_proxy(m->db);
    if (!proxy) {
        m->w.fn = mg_ready;
        cfdb_db_when_ready(m->db, &m->w);
        return;
    }
    size_t n = m->arg_len / EXCL_PACKED;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_address_exclusion *e = n ? cfdb_arena_zalloc(&a, n * sizeof *e) : NULL;
    if (n && !e) {
        cfdb_arena_free(&a);
        mg_end(m, CFDB_ERR_UNKNOWN_ERROR);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = m->arg + i * EXCL_PACKED;
        e[i].ip.tag = p[0];
        if (p[0] == 2) {
            e[i].ip.v6.items = (uint8_t *)p + 1;
            e[i].ip.v6.count = 16;
        } else {
            memcpy(&e[i].ip.v4, p + 1, 4);
        }
        memcpy(&e[i].port, p + 17, 4);
    }
    cfdb_exclusion_safety_check_request req;
    memset(&req, 0, sizeof req);
    req.exclusions.items = e;
    req.exclusions.count = (uint32_t)n;
    m->request = cfdb_client_request(cfdb_db_client(m->db), proxy->peer,
                                     cfdb_adjusted_token(proxy->token, CFDB_CP_EXCLUSION_SAFETY_CHECK_REQ),
                                     &cfdb_msg_exclusion_safety_check_request, &req, &req.reply.token,
                                     on_exclusion_reply, m);
    cfdb_arena_free(&a);
    if (!m->request)
        mg_retry(m);
}

static void mg_step(mg_op *m)
{
    if (cfdb_future_is_ready(m->f)) { /* cancelled or destroyed */
        mg_end(m, CFDB_ERR_OPERATION_CANCELLED);
        return;
    }
    cfdb_db_start(m->db);
    if (m->kind == MG_SNAPSHOT)
        snap_step(m);
    else if (m->kind == MG_HEALTH)
        health_step(m);
    else if (m->kind == MG_DD_METRICS)
        dd_step(m);
    else if (m->kind == MG_EXCLUSION_CHECK)
        exclusion_step(m);
    else
        cc_step(m);
}

static cfdb_future *mg_launch(cfdb_db *db, enum mg_kind kind, cfdb_future_kind fkind, const uint8_t *arg,
                              size_t arg_len, mg_op **out)
{
    cfdb_future *f = cfdb_future_new(fkind);
    mg_op *m = f ? calloc(1, sizeof *m) : NULL;
    uint8_t *copy = m ? malloc(arg_len ? arg_len : 1) : NULL;
    if (!copy) {
        free(m);
        if (f)
            cfdb_future_complete(f, CFDB_ERR_UNKNOWN_ERROR);
        *out = NULL;
        return f;
    }
    if (arg_len)
        memcpy(copy, arg, arg_len);
    m->db = db;
    m->f = f;
    m->kind = kind;
    m->arg = copy;
    m->arg_len = arg_len;
    cfdb_future_ref(f); /* the op's */
    cfdb_db_ref(db);
    cfdb_timer_init(&m->timer, mg_timer, m);
    *out = m;
    return f;
}

static void mg_post(mg_op *m)
{
    cfdb_task_init(&m->run, mg_run, m);
    cfdb_loop_post_task(cfdb_client_loop(cfdb_db_client(m->db)), &m->run);
}

static int hex_value(int c)
{
    return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

cfdb_future *cfdb_db_create_snapshot(cfdb_db *db, cfdb_bytes uid, cfdb_bytes command)
{
    bool valid = uid.len == 32;
    for (size_t i = 0; valid && i < uid.len; i++)
        valid = isxdigit(uid.ptr[i]) != 0;
    if (!valid) {
        cfdb_future *f = cfdb_future_new(CFDB_FUTURE_VOID);
        if (f)
            cfdb_future_complete(f, CFDB_ERR_SNAP_INVALID_UID_STRING);
        return f;
    }
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_SNAPSHOT, CFDB_FUTURE_VOID, command.ptr, command.len, &m);
    if (!m)
        return f;
    /* UID::fromString: the first 16 digits are `first`, the next 16 `second` */
    for (int i = 0; i < 16; i++) {
        m->uid.first = (m->uid.first << 4) | (uint64_t)hex_value(uid.ptr[i]);
        m->uid.second = (m->uid.second << 4) | (uint64_t)hex_value(uid.ptr[16 + i]);
    }
    mg_post(m);
    return f;
}

cfdb_future *cfdb_db_force_recovery(cfdb_db *db, cfdb_bytes dcid)
{
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_FORCE_RECOVERY, CFDB_FUTURE_VOID, dcid.ptr, dcid.len, &m);
    if (m)
        mg_post(m);
    return f;
}

cfdb_future *cfdb_db_reboot_worker(cfdb_db *db, cfdb_bytes addresses, bool check, int duration)
{
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_REBOOT, CFDB_FUTURE_INT64, addresses.ptr, addresses.len, &m);
    if (!m)
        return f;
    m->check = check;
    m->duration = duration < 0 ? 0 : (uint32_t)duration;
    mg_post(m);
    return f;
}

cfdb_future *cfdb_db_get_client_workers(cfdb_db *db)
{
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_CLIENT_WORKERS, CFDB_FUTURE_KEYVALUES, NULL, 0, &m);
    if (m)
        mg_post(m);
    return f;
}

cfdb_future *cfdb_db_get_client_workers_verified(cfdb_db *db)
{
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_CLIENT_WORKERS, CFDB_FUTURE_KEYVALUES, NULL, 0, &m);
    if (m) {
        m->check = true;
        mg_post(m);
    }
    return f;
}

cfdb_future *cfdb_db_get_health_metrics(cfdb_db *db, bool detailed)
{
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_HEALTH, CFDB_FUTURE_VALUE, NULL, 0, &m);
    if (!m)
        return f;
    m->check = detailed;
    mg_post(m);
    return f;
}

cfdb_future *cfdb_db_get_dd_metrics(cfdb_db *db, cfdb_bytes begin, cfdb_bytes end)
{
    uint8_t *both = malloc(begin.len + end.len + 1);
    if (!both) {
        cfdb_future *f = cfdb_future_new(CFDB_FUTURE_KEYVALUES);
        if (f)
            cfdb_future_complete(f, CFDB_ERR_UNKNOWN_ERROR);
        return f;
    }
    if (begin.len)
        memcpy(both, begin.ptr, begin.len);
    if (end.len)
        memcpy(both + begin.len, end.ptr, end.len);
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_DD_METRICS, CFDB_FUTURE_KEYVALUES, both, begin.len + end.len, &m);
    free(both);
    if (!m)
        return f;
    m->duration = (uint32_t)end.len;
    mg_post(m);
    return f;
}

cfdb_future *cfdb_db_exclusion_safety_check(cfdb_db *db, const cfdb_address_exclusion *e, size_t n)
{
    uint8_t *packed = calloc(n ? n : 1, EXCL_PACKED);
    if (!packed) {
        cfdb_future *f = cfdb_future_new(CFDB_FUTURE_INT64);
        if (f)
            cfdb_future_complete(f, CFDB_ERR_UNKNOWN_ERROR);
        return f;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = packed + i * EXCL_PACKED;
        p[0] = e[i].ip.tag == 2 ? 2 : 1;
        if (p[0] == 2 && e[i].ip.v6.count == 16)
            memcpy(p + 1, e[i].ip.v6.items, 16);
        else
            memcpy(p + 1, &e[i].ip.v4, 4);
        memcpy(p + 17, &e[i].port, 4);
    }
    mg_op *m;
    cfdb_future *f = mg_launch(db, MG_EXCLUSION_CHECK, CFDB_FUTURE_INT64, packed, n * EXCL_PACKED, &m);
    free(packed);
    if (m)
        mg_post(m);
    return f;
}
