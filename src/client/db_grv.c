/* Read versions (DatabaseContext's version batcher): GetReadVersionRequests batched per
 * priority flags, one request in flight at a time; waiters arriving meanwhile share the next.
 * A batch whose proxy went away is retried on the next proxy after LOAD_BALANCE_START_BACKOFF.
 *
 * Invariants: db->grv_batch holds the waiters of the request in flight (grv_in_flight, which
 * holds a database reference); db->grv_pending those waiting for the next one; every waiter
 * is called exactly once. */
#include "db_internal.h"

#include <string.h>

#include "cfdb/endpoint.h"

static void send_grv(cfdb_db *db);
static void grv_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);

void db_grv_init(cfdb_db *db)
{
    cfdb_timer_init(&db->grv_retry, grv_retry_fire, db);
}

void db_grv_proxies_ready(cfdb_db *db)
{
    if (db->grv_pending && !db->grv_in_flight)
        send_grv(db);
}


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
