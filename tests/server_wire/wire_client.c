/* Test wire client; see wire_client.h. */
#include "wire_client.h"

#include <stdlib.h>
#include <string.h>

#include "endpoint.h"

#define SEC 1000000000ull

static void on_open(cfdb_conn *c, const cfdb_connect_packet *peer, void *arg)
{
    wc *w = arg;
    (void)c;
    (void)peer;
    w->open = true;
}

static void on_frame(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len, void *arg)
{
    wc *w = arg;
    (void)c;
    if (w->nframes == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 16;
        w->frames = realloc(w->frames, w->cap * sizeof(wc_frame));
    }
    wc_frame *f = &w->frames[w->nframes++];
    f->token = token;
    f->msg = malloc(len ? len : 1);
    memcpy(f->msg, msg, len);
    f->len = len;
}

static void on_closed(cfdb_conn *c, int error, void *arg)
{
    wc *w = arg;
    (void)c;
    w->closed = true;
    w->open = false;
    w->close_error = error;
    w->conn = NULL;
}

static const cfdb_conn_callbacks cb = { on_open, on_frame, on_closed };

void wc_pump(wc *w, uint64_t ns)
{
    uint64_t end = cfdb_monotonic_ns() + ns;
    for (;;) {
        uint64_t now = cfdb_monotonic_ns();
        if (now >= end)
            break;
        cfdb_loop_run_once(w->loop, end - now);
    }
}

int wc_connect(wc *w, cfdb_loop *loop, uint16_t port)
{
    memset(w, 0, sizeof(*w));
    w->loop = loop;
    w->rng = 0x1234567 ^ ((uint64_t)port << 20) ^ (uint64_t)(uintptr_t)w;
    cfdb_conn_options opt = { 0 };
    w->conn = cfdb_conn_connect(loop, "127.0.0.1", port, &opt, &cb, w);
    if (!w->conn)
        return -1;
    uint64_t end = cfdb_monotonic_ns() + 5 * SEC;
    while (!w->open && !w->closed && cfdb_monotonic_ns() < end)
        cfdb_loop_run_once(loop, 10000000ull);
    return w->open ? 0 : -1;
}

void wc_close(wc *w)
{
    if (w->conn && !w->closed) {
        cfdb_conn_close(w->conn);
        uint64_t end = cfdb_monotonic_ns() + 2 * SEC;
        while (!w->closed && cfdb_monotonic_ns() < end)
            cfdb_loop_run_once(w->loop, 10000000ull);
    }
    for (size_t i = 0; i < w->nframes; i++)
        free(w->frames[i].msg);
    free(w->frames);
    w->frames = NULL;
    w->nframes = w->cap = 0;
}

static uint64_t rnd(wc *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

cfdb_uid wc_reply_token(wc *w)
{
    cfdb_uid t = { rnd(w) & ~CFDB_TOKEN_STREAM_FLAG, rnd(w) };
    return t;
}

cfdb_uid wc_send(wc *w, cfdb_uid dest, const fb_message *m, const void *req, cfdb_uid *reply_slot)
{
    cfdb_uid t = wc_reply_token(w);
    if (reply_slot)
        *reply_slot = t;
    if (w->conn && !w->closed)
        cfdb_conn_send(w->conn, dest, m, req, 0);
    return t;
}

static long find(wc *w, cfdb_uid token)
{
    for (size_t i = 0; i < w->nframes; i++)
        if (cfdb_uid_eq(w->frames[i].token, token))
            return (long)i;
    return -1;
}

bool wc_has(wc *w, cfdb_uid token)
{
    return find(w, token) >= 0;
}

int wc_wait(wc *w, cfdb_uid token, const fb_message *rm, void *out, cfdb_reply_error *err, cfdb_arena *a,
            uint64_t timeout_ns)
{
    uint64_t end = cfdb_monotonic_ns() + timeout_ns;
    long i;
    while ((i = find(w, token)) < 0) {
        uint64_t now = cfdb_monotonic_ns();
        if (now >= end)
            return 1;
        if (w->closed)
            return -1;
        cfdb_loop_run_once(w->loop, end - now);
    }
    wc_frame f = w->frames[i];
    memmove(&w->frames[i], &w->frames[i + 1], (w->nframes - (size_t)i - 1) * sizeof(wc_frame));
    w->nframes--;
    /* keep the bytes alive as long as the arena: copy into it */
    uint8_t *copy = cfdb_arena_alloc(a, f.len ? f.len : 1);
    memcpy(copy, f.msg, f.len);
    free(f.msg);
    if (!rm)
        return 0;
    memset(out, 0, rm->item->csize);
    return fb_decode(rm, copy, f.len, out, err, a) ? -1 : 0;
}

int wc_call(wc *w, cfdb_uid dest, const fb_message *m, const void *req, cfdb_uid *reply_slot, const fb_message *rm,
            void *out, cfdb_reply_error *err, cfdb_arena *a)
{
    cfdb_uid t = wc_send(w, dest, m, req, reply_slot);
    return wc_wait(w, t, rm, out, err, a, 10 * SEC);
}

int wc_open_database(wc *w, const char *cluster_key, cfdb_client_db_info *info, cfdb_arena *a)
{
    cfdb_open_database_coord_request req;
    memset(&req, 0, sizeof req);
    req.clusterKey = cfdb_bytes_str(cluster_key);
    req.traceLogGroup = CFDB_BYTES_LIT("default");
    req.knownClientInfoID = w->client_info_id;
    cfdb_reply_error err = 0;
    int rc = wc_call(w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE),
                     &cfdb_msg_open_database_coord_request, &req, &req.reply.token, &cfdb_msg_client_db_info_reply,
                     info, &err, a);
    if (rc || err)
        return rc ? rc : err;
    w->client_info_id = info->id;
    if (info->grvProxies.count < 1 || info->commitProxies.count < 1)
        return -1;
    w->grv = info->grvProxies.items[0].getConsistentReadVersion.endpoint.token;
    w->grv_port = info->grvProxies.items[0].getConsistentReadVersion.endpoint.addresses.address.port;
    w->commit = info->commitProxies.items[0].commit.endpoint.token;
    w->commit_port = info->commitProxies.items[0].commit.endpoint.addresses.address.port;
    return 0;
}

int64_t wc_grv(wc *w)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_read_version_request req;
    memset(&req, 0, sizeof req);
    req.transactionCount = 1;
    req.flags = CFDB_GRV_PRIORITY_DEFAULT;
    req.maxVersion = -1;
    cfdb_get_read_version_reply r;
    cfdb_reply_error err = 0;
    int64_t v = -1;
    if (wc_call(w, w->grv, &cfdb_msg_get_read_version_request, &req, &req.reply.token,
                &cfdb_msg_get_read_version_reply, &r, &err, &a) == 0 &&
        !err)
        v = r.version;
    cfdb_arena_free(&a);
    return v;
}

int wc_locate(wc *w, cfdb_bytes key, cfdb_uid *ss, uint16_t *port, cfdb_key_range *shard, cfdb_arena *a)
{
    cfdb_get_key_server_locations_request req;
    memset(&req, 0, sizeof req);
    req.begin = key;
    req.limit = 100;
    req.tenant.tenantId = -1;
    req.minTenantVersion = -2;
    cfdb_get_key_server_locations_reply r;
    cfdb_reply_error err = 0;
    int rc = wc_call(w, cfdb_adjusted_token(w->commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                     &cfdb_msg_get_key_server_locations_request, &req, &req.reply.token,
                     &cfdb_msg_get_key_server_locations_reply, &r, &err, a);
    if (rc || err)
        return rc ? rc : err;
    if (r.results.count != 1 || r.results.items[0].second.count < 1)
        return -1;
    *ss = r.results.items[0].second.items[0].getValue.endpoint.token;
    if (port)
        *port = r.results.items[0].second.items[0].getValue.endpoint.addresses.address.port;
    if (shard)
        *shard = r.results.items[0].first;
    return 0;
}

int wc_get(wc *w, cfdb_uid ss, cfdb_bytes key, int64_t version, bool *present, cfdb_bytes *value, cfdb_arena *a)
{
    cfdb_get_value_request req;
    memset(&req, 0, sizeof req);
    req.key = key;
    req.version = version;
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    cfdb_get_value_reply r;
    cfdb_reply_error err = 0;
    int rc = wc_call(w, ss, &cfdb_msg_get_value_request, &req, &req.reply.token, &cfdb_msg_get_value_reply, &r, &err,
                     a);
    if (rc || err)
        return rc ? -1 : err;
    if (r.error.present)
        return r.error.value.code;
    *present = r.value.present;
    if (value)
        *value = r.value.value;
    return 0;
}

int wc_get_range(wc *w, cfdb_uid ss, cfdb_key_selector b, cfdb_key_selector e, int64_t version, int limit,
                 int limit_bytes, cfdb_get_key_values_reply *out, cfdb_arena *a)
{
    cfdb_get_key_values_request req;
    memset(&req, 0, sizeof req);
    req.begin = b;
    req.end = e;
    req.version = version;
    req.limit = limit;
    req.limitBytes = limit_bytes;
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    cfdb_reply_error err = 0;
    int rc = wc_call(w, cfdb_adjusted_token(ss, CFDB_SS_GET_KEY_VALUES), &cfdb_msg_get_key_values_request, &req,
                     &req.reply.token, &cfdb_msg_get_key_values_reply, out, &err, a);
    if (rc || err)
        return rc ? -1 : err;
    return out->error.present ? out->error.value.code : 0;
}

cfdb_bytes wc_key_after(cfdb_arena *a, cfdb_bytes k)
{
    uint8_t *p = cfdb_arena_alloc(a, k.len + 1);
    memcpy(p, k.ptr, k.len);
    p[k.len] = 0;
    return cfdb_bytes_make(p, k.len + 1);
}

void wc_txn_set(wc_txn *t, cfdb_arena *a, const char *k, const char *v)
{
    cfdb_bytes key = cfdb_bytes_str(k);
    t->muts[t->nmuts++] = (cfdb_mutation){ CFDB_MUT_SET_VALUE, key, cfdb_bytes_str(v) };
    t->writes[t->nwrites++] = (cfdb_key_range){ key, wc_key_after(a, key) };
}

void wc_txn_atomic(wc_txn *t, cfdb_arena *a, int type, cfdb_bytes k, cfdb_bytes operand)
{
    t->muts[t->nmuts++] = (cfdb_mutation){ (uint8_t)type, k, operand };
    if (type != CFDB_MUT_SET_VERSIONSTAMPED_KEY)
        t->writes[t->nwrites++] = (cfdb_key_range){ k, wc_key_after(a, k) };
}

void wc_txn_read(wc_txn *t, cfdb_arena *a, const char *k)
{
    cfdb_bytes key = cfdb_bytes_str(k);
    t->reads[t->nreads++] = (cfdb_key_range){ key, wc_key_after(a, key) };
}

cfdb_uid wc_commit_send(wc *w, const wc_txn *t)
{
    cfdb_commit_transaction_request req;
    memset(&req, 0, sizeof req);
    req.transaction.read_conflict_ranges.items = (cfdb_key_range *)t->reads;
    req.transaction.read_conflict_ranges.count = (uint32_t)t->nreads;
    req.transaction.write_conflict_ranges.items = (cfdb_key_range *)t->writes;
    req.transaction.write_conflict_ranges.count = (uint32_t)t->nwrites;
    req.transaction.mutations.items = (cfdb_mutation *)t->muts;
    req.transaction.mutations.count = (uint32_t)t->nmuts;
    req.transaction.read_snapshot = t->read_snapshot;
    req.transaction.report_conflicting_keys = t->report_conflicting_keys;
    req.tenantInfo.tenantId = -1;
    return wc_send(w, w->commit, &cfdb_msg_commit_transaction_request, &req, &req.reply.token);
}

int wc_commit(wc *w, const wc_txn *t, cfdb_commit_id *id, cfdb_arena *a)
{
    cfdb_uid tok = wc_commit_send(w, t);
    cfdb_reply_error err = 0;
    int rc = wc_wait(w, tok, &cfdb_msg_commit_id_reply, id, &err, a, 10 * SEC);
    if (rc)
        return -1;
    return err;
}
