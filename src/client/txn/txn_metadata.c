#define _GNU_SOURCE
/* Operation kinds that read cluster metadata rather than data: \xff\xff/status/json
 * (through the coordinators' leader and the cluster controller's status endpoint), estimated
 * range sizes (WaitMetrics) and split points (SplitRange), one shard at a time.
 * All run on the network thread with the operation machinery of txn_op.c; replies that do not
 * decode are retried at most TXN_MAX_BAD_REPLIES times in a row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "endpoint.h"
#include "error_codes.h"
#include "txn_internal.h"
#include "txn_metadata.h"

#define METRICS_RETRY_NS 10000000ull

typedef struct metadata_op {
    op base;
    cfdb_bytes key;     /* the start of what is left of the range */
    cfdb_bytes end_key;
    int64_t chunk_size; /* split points */
    int64_t sum;        /* estimated size so far */
    cfdb_bytes_vec points;
    uint32_t points_cap;
} metadata_op;

#define M(o) TXN_OP_AS(metadata_op, o)

static const txn_op_kind status_kind, estimate_kind, split_kind;

static void metadata_step(op *o);

static void retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    op *o = arg;
    if (!op_abandoned(o))
        metadata_step(o);
}

static void retry_later(op *o, cfdb_bytes key, bool reverse)
{
    cfdb_db_invalidate(o->tx->db, o->tx->tenant_id, key, reverse);
    op_retry_after(o, METRICS_RETRY_NS, retry_fire);
}

/* ---------- \xff\xff/status/json ---------- */

/* Whether "name" appears followed by the literal value (spaces allowed around ':'). */
static bool json_has(cfdb_bytes json, const char *name, const char *value)
{
    const uint8_t *p = json.ptr, *end = json.ptr + json.len;
    size_t nl = strlen(name), vl = strlen(value);
    while ((p = memmem(p, (size_t)(end - p), name, nl)) != NULL) {
        const uint8_t *q = p + nl;
        while (q < end && (*q == ' ' || *q == ':'))
            q++;
        if ((size_t)(end - q) >= vl && memcmp(q, value, vl) == 0)
            return true;
        p += nl;
    }
    return false;
}

/* Wraps the cluster controller's cluster object with the client section libfdb_c adds
 * (StatusClient.actor.cpp): coordinators reachable, cluster file, database_status. */
static void status_deliver(op *o, cfdb_bytes cluster_json, bool reachable)
{
    bool available = false, healthy = false;
    if (reachable && cluster_json.len) {
        const char *names[] = { "\"accepting_commits\"", "\"all_logs_recruited\"", "\"storage_recovered\"",
                                "\"fully_recovered\"" };
        bool recovered = false;
        for (size_t i = 0; i < 4 && !recovered; i++)
            recovered = json_has(cluster_json, "\"name\"", names[i]);
        available = recovered && json_has(cluster_json, "\"database_available\"", "true");
        healthy = available && json_has(cluster_json, "\"healthy\"", "true") &&
                  !json_has(cluster_json, "\"healthy\"", "false");
    }
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "{\"client\":{\"coordinators\":{\"quorum_reachable\":%s},"
                     "\"cluster_file\":{\"up_to_date\":true},\"messages\":[%s],"
                     "\"database_status\":{\"available\":%s,\"healthy\":%s},\"timestamp\":%lld}",
                     reachable ? "true" : "false",
                     cluster_json.len ? ""
                                      : "{\"name\":\"status_incomplete_cluster\",\"description\":\"Could not "
                                        "retrieve cluster status information.\"}",
                     available ? "true" : "false", healthy ? "true" : "false", (long long)time(NULL));
    const char *layers = "{\"layers\":{\"_valid\":false}}";
    size_t body = cluster_json.len ? cluster_json.len : strlen(layers);
    size_t total = (size_t)n + 11 + body + 1;
    uint8_t *out = cfdb_arena_alloc(&o->f->arena, total + 1);
    if (!out) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    size_t at = 0;
    memcpy(out, head, (size_t)n); /* the document is still open after the client section */
    at = (size_t)n;
    memcpy(out + at, ",\"cluster\":", 11);
    at += 11;
    memcpy(out + at, cluster_json.len ? cluster_json.ptr : (const uint8_t *)layers, body);
    at += body;
    out[at++] = '}';
    o->f->r.value.present = true;
    o->f->r.value.value = cfdb_bytes_make(out, at);
    op_finish(o, 0);
}

static void on_status_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    o->request = 0;
    if (op_abandoned(o))
        return;
    cfdb_status_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    if (error || txn_decode(&cfdb_msg_status_reply, msg, len, &rep, &err, &o->f->arena) || err) {
        status_deliver(o, cfdb_bytes_make("", 0), true);
        return;
    }
    cfdb_bytes copy;
    if (cfdb_arena_dup_bytes(&o->f->arena, rep.statusStr, &copy)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    status_deliver(o, copy, true);
}

/* The cluster controller's databaseStatus endpoint from the leader's serializedInfo (an 8-byte
 * protocol version, then ClusterControllerClientInterface): StatusRequest to it. */
static void status_request(op *o, cfdb_bytes info)
{
    if (info.len <= 8) {
        status_deliver(o, cfdb_bytes_make("", 0), true);
        return;
    }
    cfdb_cluster_controller_client_interface cc;
    memset(&cc, 0, sizeof cc);
    if (txn_decode(&cfdb_msg_cluster_controller_client_interface, info.ptr + 8, (uint32_t)(info.len - 8), &cc, NULL,
                  &o->f->arena)) {
        status_deliver(o, cfdb_bytes_make("", 0), true);
        return;
    }
    const cfdb_endpoint *ep = &cc.clientInterface.databaseStatus.endpoint;
    cfdb_peer *peer = cfdb_client_peer(o->tx->cl, &ep->addresses.address);
    cfdb_status_request req;
    memset(&req, 0, sizeof req);
    o->request = peer ? cfdb_client_request(o->tx->cl, peer, ep->token, &cfdb_msg_status_request, &req,
                                            &req.reply.token, on_status_reply, o)
                      : 0;
    if (!o->request)
        status_deliver(o, cfdb_bytes_make("", 0), true);
}

/* statusFetcherImpl: with a quorum of coordinators reachable, the cluster section comes from
 * the cluster controller the leader monitor found (waiting at most 2 s for it). */
static void status_have_leader(cfdb_waiter *w, int error, int64_t v)
{
    (void)v;
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    cfdb_bytes info;
    bool forward = false;
    if (error || !cfdb_db_status_leader(o->tx->db, &info, &forward) || forward) {
        status_deliver(o, cfdb_bytes_make("", 0), true);
        return;
    }
    /* copied: the monitor may replace it while the request is out */
    cfdb_bytes copy;
    if (cfdb_arena_dup_bytes(&o->f->arena, info, &copy)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    status_request(o, copy);
}

static void status_checked(cfdb_waiter *w, int error, int64_t quorum_reachable)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error || !quorum_reachable) {
        status_deliver(o, cfdb_bytes_make("", 0), false);
        return;
    }
    o->w.fn = status_have_leader;
    cfdb_db_status_leader_wait(o->tx->db, &o->w);
}

/* StatusClient::statusFetcher (fdbclient/StatusClient.actor.cpp 612-633): the database's
 * leader monitor for status runs (its GetLeaderRequest per coordinator goes first), then the
 * coordinators check (clientCoordinatorsStatusFetcher: GetLeaderRequest and
 * ProtocolInfoRequest to each), then the StatusRequest. database.c does the coordinator work. */
static void status_start(op *o)
{
    cfdb_db_status_monitor(o->tx->db);
    o->w.fn = status_checked;
    cfdb_db_check_coordinators(o->tx->db, &o->w);
}

/* ---------- estimated size and split points, one shard at a time ---------- */

static void on_metrics_reply(void *ctx, int error, const uint8_t *msg, uint32_t len);
static void on_split_reply(void *ctx, int error, const uint8_t *msg, uint32_t len);

static void located(cfdb_waiter *w, int error, int64_t v)
{
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error)
        op_retry_after(o, METRICS_RETRY_NS, retry_fire);
    else
        metadata_step(o);
}

/* Returns 0 or TXN_ERR_NO_MEMORY. */
static int add_point(op *o, cfdb_bytes k)
{
    if (M(o)->points.count == M(o)->points_cap) {
        uint32_t cap = M(o)->points_cap ? M(o)->points_cap * 2 : 16;
        cfdb_bytes *n = cfdb_arena_alloc(&o->f->arena, cap * sizeof *n);
        if (!n)
            return TXN_ERR_NO_MEMORY;
        if (M(o)->points.count)
            memcpy(n, M(o)->points.items, M(o)->points.count * sizeof *n);
        M(o)->points.items = n;
        M(o)->points_cap = cap;
    }
    if (cfdb_arena_dup_bytes(&o->f->arena, k, &M(o)->points.items[M(o)->points.count]))
        return TXN_ERR_NO_MEMORY;
    M(o)->points.count++;
    return 0;
}

static void split_deliver(op *o)
{
    cfdb_fdb_key *keys = cfdb_arena_alloc(&o->f->arena, (M(o)->points.count ? M(o)->points.count : 1) * sizeof *keys);
    if (!keys) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    for (uint32_t i = 0; i < M(o)->points.count; i++) {
        keys[i].key = M(o)->points.items[i].ptr;
        keys[i].key_length = (int)M(o)->points.items[i].len;
    }
    o->f->r.keys.items = keys;
    o->f->r.keys.count = (int)M(o)->points.count;
    op_finish(o, 0);
}

/* The shard holding the key, or NULL after starting a location lookup. Estimated sizes and
 * split points first get the locations of the whole rest of the range as libfdb_c does
 * (getKeyRangeLocations: nothing is asked when the cache covers it, else one
 * GetKeyServerLocationsRequest with the range's end): getStorageMetricsLargeKeyRange with
 * limit INT_MAX and, without a tenant, latestVersion (NativeAPI.actor.cpp 7815-7835);
 * getRangeSplitPoints with CLIENT_KNOBS->TOO_MANY and the read version if there is one
 * (NativeAPI.actor.cpp 8153-8170, 3288-3305). */
#define RANGE_SIZE_LOCATION_LIMIT 2147483647 /* std::numeric_limits<int>::max() */
#define SPLIT_POINTS_LOCATION_LIMIT 1000000  /* CLIENT_KNOBS->TOO_MANY */
static const cfdb_shard *shard_or_locate(op *o)
{
    cfdb_db *db = o->tx->db;
    if (o->kind == &estimate_kind || o->kind == &split_kind) {
        int32_t limit = o->kind == &estimate_kind ? RANGE_SIZE_LOCATION_LIMIT : SPLIT_POINTS_LOCATION_LIMIT;
        if (!cfdb_db_range_cached(db, o->tx->tenant_id, M(o)->key, M(o)->end_key, limit)) {
            o->w.fn = located;
            cfdb_db_fetch_range_locations(db, o->tx->tenant_id, M(o)->key, M(o)->end_key, limit,
                                          o->kind == &estimate_kind ? 0 : o->tx->read_version, &o->w);
            return NULL;
        }
    }
    const cfdb_shard *s = cfdb_db_cached_shard(db, o->tx->tenant_id, M(o)->key, false);
    if (!s) {
        o->w.fn = located;
        cfdb_db_fetch_location(db, o->tx->tenant_id, M(o)->key, false, o->tx->read_version, &o->w);
    }
    return s;
}

static void metadata_step(op *o)
{
    if (o->kind == &status_kind) {
        status_start(o);
        return;
    }
    const cfdb_shard *s = shard_or_locate(o);
    if (!s)
        return;
    /* the part of [key, end) inside this shard */
    cfdb_key_range keys = { M(o)->key, cfdb_bytes_cmp(s->end, M(o)->end_key) < 0 ? s->end : M(o)->end_key };
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    if (o->kind == &estimate_kind) {
        cfdb_wait_metrics_request req;
        memset(&req, 0, sizeof req);
        req.keys = keys;
        req.max.bytes = -1; /* an inverted window: the answer comes at once */
        req.tenantInfo.tenantId = o->tx->tenant_id;
        req.minVersion = -2;
        o->request = cfdb_client_request(o->tx->cl, server->peer,
                                         cfdb_adjusted_token(server->token, CFDB_SS_WAIT_METRICS),
                                         &cfdb_msg_wait_metrics_request, &req, &req.reply.token, on_metrics_reply, o);
    } else {
        cfdb_split_range_request req;
        memset(&req, 0, sizeof req);
        req.keys = keys;
        req.chunkSize = M(o)->chunk_size;
        req.tenantInfo.tenantId = o->tx->tenant_id;
        o->request = cfdb_client_request(o->tx->cl, server->peer,
                                         cfdb_adjusted_token(server->token, CFDB_SS_GET_RANGE_SPLIT_POINTS),
                                         &cfdb_msg_split_range_request, &req, &req.reply.token, on_split_reply, o);
    }
    if (!o->request)
        retry_later(o, M(o)->key, false);
}

/* Moves the key to the end of the shard just answered: 1 when the range is done, 0 when
 * not, or TXN_ERR_NO_MEMORY. */
static int next_shard(op *o)
{
    const cfdb_shard *s = cfdb_db_cached_shard(o->tx->db, o->tx->tenant_id, M(o)->key, false);
    if (!s || cfdb_bytes_cmp(s->end, M(o)->end_key) >= 0)
        return 1;
    return cfdb_arena_dup_bytes(&o->f->arena, s->end, &M(o)->key) ? TXN_ERR_NO_MEMORY : 0;
}

static void metadata_relocate(op *o, int error)
{
    (void)error;
    retry_later(o, M(o)->key, false);
}

/* StorageMetrics has no in-band error; future_version is retried (getStorageMetrics) */
static const txn_reply_desc metrics_reply = {
    &cfdb_msg_storage_metrics_reply, sizeof(cfdb_storage_metrics), TXN_REPLY_NO_INBAND,
    TXN_REPLY_RELOCATE_FUTURE_VERSION
};
static const txn_reply_desc split_reply = {
    &cfdb_msg_split_range_reply, sizeof(cfdb_split_range_reply), TXN_REPLY_NO_INBAND, 0
};

static void on_metrics_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    cfdb_storage_metrics m;
    cfdb_arena a;
    uint64_t mem[32];
    cfdb_arena_init_with(&a, mem, sizeof mem);
    bool ok = txn_storage_reply(o, error, msg, len, &metrics_reply, &m, &a, metadata_relocate);
    cfdb_arena_free(&a);
    if (!ok)
        return;
    M(o)->sum += m.bytes;
    int next = next_shard(o);
    if (next == 1) {
        o->f->r.i64 = M(o)->sum;
        op_finish(o, 0);
    } else if (next) {
        op_finish(o, next);
    } else {
        metadata_step(o);
    }
}

static void on_split_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    cfdb_split_range_reply rep;
    if (!txn_storage_reply(o, error, msg, len, &split_reply, &rep, &o->f->arena, metadata_relocate))
        return;
    /* [begin] + split points and shard boundaries in order + [end] (getRangeSplitPoints) */
    for (uint32_t i = 0; i < rep.splitPoints.count; i++)
        if (add_point(o, rep.splitPoints.items[i])) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
    int next = next_shard(o);
    if (next > 1) {
        op_finish(o, next);
        return;
    }
    if (next == 1) {
        if (add_point(o, M(o)->end_key)) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
        split_deliver(o);
        return;
    }
    if (add_point(o, M(o)->key)) { /* the shard boundary */
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    metadata_step(o);
}

static void range_metadata_begin(op *o)
{
    if (o->kind == &split_kind && add_point(o, M(o)->key)) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    metadata_step(o);
}

static void range_metadata_tenant_ready(cfdb_waiter *w, int error, int64_t v)
{
    (void)v;
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error)
        op_finish(o, error);
    else
        range_metadata_begin(o);
}

/* A tenant's estimated size and split points need the tenant's id: they wait for the
 * transaction's start (populateAndGetTenant / startTransaction), whose gate also runs
 * getTenantInfo's checks; without a tenant those checks run here (getRangeSplitPoints sends
 * getTenantInfo(), so a cluster that requires tenants refuses it; getEstimatedRangeSizeBytes
 * sends none). */
static void range_metadata_start(op *o)
{
    if (o->tx->tenant && !o->tx->tenant_ready) {
        o->w.fn = range_metadata_tenant_ready;
        txn_need_read_version(o->tx, &o->w);
        return;
    }
    int e = txn_tenant_check(o);
    if (e) {
        op_finish(o, e);
        return;
    }
    range_metadata_begin(o);
}

static const txn_op_kind status_kind = { .name = "status_json", .start = metadata_step };
static const txn_op_kind estimate_kind = {
    .name = "get_estimated_range_size",
    .flags = TXN_OP_TENANT_CHECK_IF_TENANT,
    .start = range_metadata_start,
};
static const txn_op_kind split_kind = { .name = "get_range_split_points", .start = range_metadata_start };

_Static_assert(sizeof(metadata_op) <= CFDB_FUTURE_EXTRA_MAX, "a metadata op fits in its future's block");

/* ---------- the API's entry points ---------- */

static cfdb_future *range_metadata_op(cfdb_txn *tx, const txn_op_kind *kind, cfdb_future_kind fkind,
                                      cfdb_bytes begin, cfdb_bytes end, int64_t chunk)
{
    if (cfdb_bytes_cmp(begin, end) > 0)
        return cfdb_future_error(fkind, CFDB_ERR_INVERTED_RANGE);
    if (!txn_key_readable(tx, begin) || (!txn_key_readable(tx, end) && !cfdb_bytes_eq(end, CFDB_BYTES_LIT("\xff"))))
        return cfdb_future_error(fkind, CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    op *o = op_new(tx, kind, fkind, sizeof(metadata_op));
    if (!o)
        return txn_future_no_memory(fkind);
    if (cfdb_arena_dup_bytes(&o->f->arena, begin, &M(o)->key) ||
        cfdb_arena_dup_bytes(&o->f->arena, end, &M(o)->end_key))
        return op_settle(o, TXN_ERR_NO_MEMORY);
    M(o)->chunk_size = chunk;
    if (kind == &estimate_kind && cfdb_bytes_cmp(begin, end) == 0)
        return op_settle(o, 0); /* (the future's int64 is 0) */
    return op_launch(o);
}

cfdb_future *cfdb_txn_get_estimated_range_size(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end)
{
    return range_metadata_op(tx, &estimate_kind, CFDB_FUTURE_INT64, begin, end, 0);
}

cfdb_future *cfdb_txn_get_range_split_points(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int64_t chunk_size)
{
    if (chunk_size <= 0)
        return cfdb_future_error(CFDB_FUTURE_KEYS, CFDB_ERR_INVALID_OPTION_VALUE);
    return range_metadata_op(tx, &split_kind, CFDB_FUTURE_KEYS, begin, end, chunk_size);
}

cfdb_future *cfdb_txn_status_json(cfdb_txn *tx)
{
    pthread_mutex_lock(&tx->mu);
    int rc = txn_error_locked(tx);
    pthread_mutex_unlock(&tx->mu);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_VALUE, rc);
    op *o = op_new(tx, &status_kind, CFDB_FUTURE_VALUE, sizeof(metadata_op));
    return o ? op_launch(o) : txn_future_no_memory(CFDB_FUTURE_VALUE);
}
