/* A tenant handle and its id lookup (tenant.h): FoundationDB 7.3.77's Tenant(Database, name),
 * whose idFuture is DatabaseContext::lookupTenant (NativeAPI.actor.cpp lookupTenantImpl).
 *
 * Invariants: the lookup runs on the network thread, from the handle's creation until it has
 * an answer, holding one reference; `done` is set once, after which `id` / `error` never
 * change (the answer is latched, as libfdb_c's idFuture is). Waiters (transactions about to
 * read or commit, get_id futures) are called once each, on the network thread. The handle
 * holds a user reference on its database. */
#include "tenant.h"

#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "future.h"

/* ClientKnobs at 7.3.77: DEFAULT_BACKOFF, DEFAULT_MAX_BACKOFF, RESOURCE_CONSTRAINED_MAX_BACKOFF */
#define LOOKUP_BACKOFF_S 0.01
#define LOOKUP_MAX_BACKOFF_S 1.0
#define LOOKUP_CONSTRAINED_MAX_BACKOFF_S 30.0
/* A proxy that keeps answering what does not decode: the lookup ends with the error after
 * this many in a row (libfdb_c's transport would drop such a connection). */
#define LOOKUP_MAX_BAD_REPLIES 20

struct cfdb_tenant {
    cfdb_db *db;
    cfdb_client *cl;
    atomic_int refs;
    uint8_t *name;
    size_t name_len;
    cfdb_task start;
    /* network thread */
    cfdb_timer retry;
    cfdb_waiter proxies_ready;
    uint64_t request;
    double backoff_s;
    int bad_replies;
    cfdb_waiter *waiters;
    bool done;
    int error;
    int64_t id;
};

void cfdb_tenant_ref(cfdb_tenant *t)
{
    atomic_fetch_add(&t->refs, 1);
}

void cfdb_tenant_unref(cfdb_tenant *t)
{
    if (atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    /* nothing runs for it any more: the lookup holds a reference until it ends */
    cfdb_db *db = t->db;
    free(t->name);
    free(t);
    cfdb_db_user_unref(db);
}

cfdb_db *cfdb_tenant_db(const cfdb_tenant *t)
{
    return t->db;
}

static void lookup_step(cfdb_tenant *t);

static void lookup_end(cfdb_tenant *t, int error, int64_t id)
{
    t->done = true;
    t->error = error;
    t->id = error ? -1 : id;
    cfdb_waiter *list = t->waiters;
    t->waiters = NULL;
    while (list) {
        cfdb_waiter *w = list;
        list = w->next;
        w->fn(w, t->error, t->id);
    }
    cfdb_tenant_unref(t); /* the lookup's */
}

static void retry_fire(cfdb_loop *loop, cfdb_timer *timer, void *arg)
{
    (void)loop;
    (void)timer;
    lookup_step(arg);
}

/* DatabaseContext::updateBackoff: the delay grows until the next success. */
static void retry_later(cfdb_tenant *t, double max_s)
{
    double d = t->backoff_s;
    t->backoff_s = t->backoff_s * 2 > max_s ? max_s : t->backoff_s * 2;
    cfdb_loop_timer_add_in(cfdb_client_loop(t->cl), &t->retry, (uint64_t)(d * 1e9));
}

static void on_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    cfdb_tenant *t = ctx;
    t->request = 0;
    if (error) { /* lost (the proxy went away): another proxy, as basicLoadBalance does */
        retry_later(t, LOOKUP_MAX_BACKOFF_S);
        return;
    }
    cfdb_get_tenant_id_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    uint64_t mem[8];
    cfdb_arena a;
    cfdb_arena_init_with(&a, mem, sizeof mem);
    int rc = fb_decode(&cfdb_msg_get_tenant_id_reply, msg, len, &rep, &err, &a);
    cfdb_arena_free(&a);
    if (rc) {
        if (++t->bad_replies >= LOOKUP_MAX_BAD_REPLIES)
            lookup_end(t, rc, 0);
        else
            retry_later(t, LOOKUP_MAX_BACKOFF_S);
        return;
    }
    t->bad_replies = 0;
    if (err == CFDB_ERR_COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED) {
        retry_later(t, LOOKUP_CONSTRAINED_MAX_BACKOFF_S);
        return;
    }
    if (err == CFDB_ERR_BROKEN_PROMISE || err == CFDB_ERR_REQUEST_MAYBE_DELIVERED) {
        retry_later(t, LOOKUP_MAX_BACKOFF_S);
        return;
    }
    lookup_end(t, err, rep.tenantId);
}

static void proxies_ready(cfdb_waiter *w, int error, int64_t v)
{
    (void)v;
    cfdb_tenant *t = (cfdb_tenant *)((char *)w - offsetof(cfdb_tenant, proxies_ready));
    if (error) /* the database is closing */
        lookup_end(t, error, 0);
    else
        lookup_step(t);
}

static void lookup_step(cfdb_tenant *t)
{
    cfdb_db_start(t->db);
    const cfdb_endpoint_ref *proxy = cfdb_db_commit_proxy(t->db);
    if (!proxy) {
        t->proxies_ready.fn = proxies_ready;
        cfdb_db_when_ready(t->db, &t->proxies_ready);
        return;
    }
    cfdb_get_tenant_id_request req;
    memset(&req, 0, sizeof req);
    req.tenantName = cfdb_bytes_make(t->name, t->name_len);
    req.minTenantVersion = -2; /* latestVersion */
    t->request = cfdb_client_request(t->cl, proxy->peer, cfdb_adjusted_token(proxy->token, CFDB_CP_GET_TENANT_ID),
                                     &cfdb_msg_get_tenant_id_request, &req, &req.reply.token, on_reply, t);
    if (!t->request)
        retry_later(t, LOOKUP_MAX_BACKOFF_S);
}

static void start_task(void *arg)
{
    lookup_step(arg);
}

cfdb_tenant *cfdb_tenant_open(cfdb_db *db, cfdb_bytes name)
{
    cfdb_tenant *t = calloc(1, sizeof *t);
    uint8_t *copy = t ? malloc(name.len ? name.len : 1) : NULL;
    if (!copy) {
        free(t);
        return NULL;
    }
    if (name.len)
        memcpy(copy, name.ptr, name.len);
    t->name = copy;
    t->name_len = name.len;
    t->db = db;
    t->cl = cfdb_db_client(db);
    t->backoff_s = LOOKUP_BACKOFF_S;
    t->id = -1;
    atomic_init(&t->refs, 2); /* the application's handle and the lookup */
    cfdb_db_user_ref(db);
    cfdb_timer_init(&t->retry, retry_fire, t);
    cfdb_task_init(&t->start, start_task, t);
    cfdb_loop_post_task(cfdb_client_loop(t->cl), &t->start);
    return t;
}

void cfdb_tenant_wait(cfdb_tenant *t, cfdb_waiter *w)
{
    if (t->done) {
        w->fn(w, t->error, t->id);
        return;
    }
    w->next = t->waiters;
    t->waiters = w;
}

/* ---- fdb_tenant_get_id ---- */

typedef struct id_wait {
    cfdb_waiter w; /* first */
    cfdb_tenant *t;
    cfdb_future *f;
    cfdb_task task;
} id_wait;

static void id_ready(cfdb_waiter *w, int error, int64_t id)
{
    id_wait *iw = (id_wait *)w;
    cfdb_tenant *t = iw->t;
    cfdb_future *f = iw->f;
    if (!error)
        f->r.i64 = id;
    cfdb_future_try_complete(f, error); /* (a cancelled future is complete already) */
    cfdb_future_unref(f); /* iw lives in f: not touched after this */
    cfdb_tenant_unref(t);
}

static void id_task(void *arg)
{
    id_wait *iw = arg;
    cfdb_tenant_wait(iw->t, &iw->w);
}

cfdb_future *cfdb_tenant_get_id(cfdb_tenant *t)
{
    id_wait *iw;
    cfdb_future *f = cfdb_future_new_with(CFDB_FUTURE_INT64, sizeof *iw, (void **)&iw);
    if (!f)
        return NULL;
    iw->w.fn = id_ready;
    iw->t = t;
    iw->f = f;
    cfdb_future_ref(f); /* the waiter's */
    cfdb_tenant_ref(t);
    cfdb_task_init(&iw->task, id_task, iw);
    cfdb_loop_post_task(cfdb_client_loop(t->cl), &iw->task);
    return f;
}
