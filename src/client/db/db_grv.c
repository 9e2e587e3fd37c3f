/* Read versions: DatabaseContext's version batchers (readVersionBatcher in NativeAPI.actor.cpp,
 * FoundationDB 7.3.77), one per set of request flags (priority, causal-read-risky...).
 *
 * A batcher collects waiters and sends them as one GetReadVersionRequest (transactionCount =
 * the batch's size). Like libfdb_c, several batches may be in flight at once, and a batch is
 * sent when it reaches MAX_BATCH_SIZE (1000) or when its window closes; the window adapts as
 * libfdb_c's batchTime does: after each reply it moves a tenth of the way towards half the
 * reply's latency, and never exceeds GRV_BATCH_TIMEOUT (5 ms). One difference, for latency:
 * when nothing of this batcher is in flight the request goes out at once (libfdb_c waits for
 * the window, which it starts at zero), so a lone transaction never waits; the window only
 * gathers the requests that arrive while others are already on their way.
 *
 * A batch whose proxy went away (request_maybe_delivered, broken_promise) goes back to its
 * batcher's queue and is sent again, to the next proxy, after LOAD_BALANCE_START_BACKOFF.
 *
 * Memory: batchers live in the database (GRV_BATCHERS slots, more than the flag combinations
 * a client sends); an in-flight batch is a grv_flight from the database's free list, kept for
 * reuse, so nothing is allocated per read version once warm. If a flight record cannot be
 * allocated the batch just waits for the next reply (the batcher then behaves as one
 * request in flight at a time): nothing fails for it.
 *
 * The GRV cache (USE_GRV_CACHE, DatabaseContext::updateCachedReadVersion and
 * backgroundGrvUpdater): every reply updates the newest version seen and the time its request
 * was sent (libfdb_c takes the transaction's start time; the batch's send time is at most a
 * batch window later). Once a transaction has used the cache, an updater keeps it fresh:
 * whenever the cache would be older than MAX_VERSION_CACHE_LAG less the updater's own
 * latency (grvDelay), or no proxy has been asked for MAX_PROXY_CONTACT_LAG, it asks for a read
 * version (default priority); otherwise it sleeps until one of the two is due.
 *
 * Invariants: every waiter is in exactly one place — a batcher's queue or one flight's list —
 * until its fn is called, exactly once. Each flight holds a database reference. */
#include "db_internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"

#define GRV_MAX_BATCH_SIZE 1000                /* MAX_BATCH_SIZE */
#define GRV_BATCH_TIMEOUT_NS 5000000ull        /* GRV_BATCH_TIMEOUT, 0.005 s */
#define MAX_VERSION_CACHE_LAG_NS 100000000ull  /* MAX_VERSION_CACHE_LAG, 0.1 s */
#define MAX_PROXY_CONTACT_LAG_NS 200000000ull  /* MAX_PROXY_CONTACT_LAG, 0.2 s */
#define GRV_CACHE_RK_COOLDOWN_NS 60000000000ull /* GRV_CACHE_RK_COOLDOWN, 60 s */

struct grv_flight {
    cfdb_db *db;
    grv_batcher *b;
    cfdb_waiter *waiters;
    uint64_t sent_ns;
    grv_flight *next; /* free list */
};

static void send_batch(grv_batcher *b);
static void grv_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void window_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);
static void updater_fire(cfdb_loop *loop, cfdb_timer *t, void *arg);

void db_grv_init(cfdb_db *db)
{
    cfdb_timer_init(&db->grv_retry, grv_retry_fire, db);
    cfdb_timer_init(&db->grv_updater, updater_fire, db);
    for (int i = 0; i < GRV_BATCHERS; i++) {
        db->grv_b[i].db = db;
        cfdb_timer_init(&db->grv_b[i].window, window_fire, &db->grv_b[i]);
    }
}

void db_grv_shutdown(cfdb_db *db)
{
    if (cfdb_loop_timer_cancel(cfdb_client_loop(db->cl), &db->grv_updater))
        cfdb_db_unref(db); /* the updater's sleep held a reference */
    db->grv_updater_started = false;
}

void db_grv_free(cfdb_db *db)
{
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    cfdb_loop_timer_cancel(loop, &db->grv_retry);
    cfdb_loop_timer_cancel(loop, &db->grv_updater);
    for (int i = 0; i < GRV_BATCHERS; i++) {
        cfdb_loop_timer_cancel(loop, &db->grv_b[i].window);
        db_fail_list(&db->grv_b[i].pending, CFDB_ERR_OPERATION_CANCELLED);
        db->grv_b[i].pending_tail = NULL;
    }
    /* flights hold database references: none is in flight here */
    while (db->grv_free) {
        grv_flight *f = db->grv_free;
        db->grv_free = f->next;
        free(f);
    }
}

/* Sends every batcher's queue that nothing holds back (proxies known, no retry pending). */
static void send_ready(cfdb_db *db)
{
    for (int i = 0; i < GRV_BATCHERS; i++) {
        grv_batcher *b = &db->grv_b[i];
        if (b->pending && (b->in_flight == 0 || b->npending >= GRV_MAX_BATCH_SIZE))
            send_batch(b);
    }
}

void db_grv_proxies_ready(cfdb_db *db)
{
    send_ready(db);
}

static void grv_retry_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    cfdb_db *db = arg;
    for (int i = 0; i < GRV_BATCHERS; i++)
        if (db->grv_b[i].pending)
            send_batch(&db->grv_b[i]);
}

static void window_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    grv_batcher *b = arg;
    if (b->pending)
        send_batch(b);
}

/* libfdb_c's dynamic batching: batchTime = min(0.1 * latency / 2 + 0.9 * batchTime, GRV_BATCH_TIMEOUT). */
static void adapt_window(grv_batcher *b, uint64_t latency_ns)
{
    double target = (double)latency_ns * 0.5;
    double next = 0.1 * target + 0.9 * b->window_ns;
    b->window_ns = next > (double)GRV_BATCH_TIMEOUT_NS ? (double)GRV_BATCH_TIMEOUT_NS : next;
}

static void requeue_front(grv_batcher *b, cfdb_waiter *list)
{
    if (!list)
        return;
    cfdb_waiter *last = list;
    uint32_t n = 1;
    while (last->next) {
        last = last->next;
        n++;
    }
    last->next = b->pending;
    if (!b->pending)
        b->pending_tail = last;
    b->pending = list;
    b->npending += n;
}

static void on_grv_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    grv_flight *fl = ctx;
    cfdb_db *db = fl->db;
    grv_batcher *b = fl->b;
    b->in_flight--;
    int64_t version = 0;
    double throttled = 0;
    bool mv_present = false, rk_default = false, rk_batch = false, locked = false;
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
        locked = rep.locked; /* each waiter's transaction decides (LOCK_AWARE) */
        version = rep.version;
        if (!error && version < db->min_acceptable_rv)
            db->min_acceptable_rv = version;
        throttled = rep.proxyTagThrottledDuration;
        rk_default = rep.rkDefaultThrottled;
        rk_batch = rep.rkBatchThrottled;
        mv_present = rep.metadataVersion.present;
        mv_len = mv_present ? rep.metadataVersion.value.len : 0;
        if (mv_len <= sizeof mv && mv_len)
            memcpy(mv, rep.metadataVersion.value.ptr, mv_len);
    }
    cfdb_waiter *list = fl->waiters;
    fl->waiters = NULL;
    fl->next = db->grv_free;
    db->grv_free = fl;
    if (error == CFDB_ERR_REQUEST_MAYBE_DELIVERED || error == CFDB_ERR_BROKEN_PROMISE) {
        /* the proxy went away: the batch is retried on the next proxy */
        requeue_front(b, list);
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &db->grv_retry, GRV_RETRY_DELAY_NS);
        cfdb_db_unref(db);
        return;
    }
    if (!error) {
        uint64_t now = cfdb_loop_now_ns(cfdb_client_loop(db->cl));
        cfdb_db_note_version(db, version);
        adapt_window(b, now - fl->sent_ns);
        cfdb_db_update_cached_read_version(db, version, fl->sent_ns);
        db->grv_last_proxy_ns = fl->sent_ns;
        if (rk_default)
            db->grv_rk_default_ns = now;
        if (rk_batch)
            db->grv_rk_batch_ns = now;
    }
    /* nothing of this batcher left in flight: what gathered goes at once */
    if (b->pending && b->in_flight == 0 && !cfdb_timer_is_armed(&db->grv_retry))
        send_batch(b);
    while (list) {
        cfdb_waiter *w = list;
        list = w->next;
        w->tag_throttled_s = throttled;
        w->mv_present = mv_present;
        w->locked = locked;
        w->mv_len = mv_len;
        if (mv_len && mv_len <= sizeof w->mv)
            memcpy(w->mv, mv, mv_len);
        w->fn(w, error, version);
    }
    cfdb_db_unref(db);
}

static void send_batch(grv_batcher *b)
{
    cfdb_db *db = b->db;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    const cfdb_endpoint_ref *proxy = db->have_proxies ? cfdb_db_grv_proxy(db) : NULL;
    if (!proxy)
        return; /* sent when proxies are installed */
    grv_flight *fl = db->grv_free;
    if (fl)
        db->grv_free = fl->next;
    else if (!(fl = malloc(sizeof *fl))) {
        /* no record: the batch waits for a reply in flight (on_grv_reply sends it), or, with
         * none in flight, for the retry timer */
        if (b->in_flight == 0)
            cfdb_loop_timer_add_in(loop, &db->grv_retry, GRV_RETRY_DELAY_NS);
        return;
    }
    cfdb_loop_timer_cancel(loop, &b->window);
    /* at most MAX_BATCH_SIZE waiters, oldest first */
    cfdb_waiter *list = b->pending, *last = list;
    uint32_t count = 1;
    while (count < GRV_MAX_BATCH_SIZE && last->next) {
        last = last->next;
        count++;
    }
    b->pending = last->next;
    if (!b->pending)
        b->pending_tail = NULL;
    last->next = NULL;
    b->npending -= count;
    fl->db = db;
    fl->b = b;
    fl->waiters = list;
    fl->sent_ns = cfdb_loop_now_ns(loop);
    fl->next = NULL;
    b->in_flight++;
    cfdb_db_ref(db);
    cfdb_get_read_version_request req;
    memset(&req, 0, sizeof req);
    req.transactionCount = count;
    req.flags = b->flags;
    req.maxVersion = -1;
    uint64_t id = cfdb_client_request(db->cl, proxy->peer, proxy->token, &cfdb_msg_get_read_version_request, &req,
                                      &req.reply.token, on_grv_reply, fl);
    if (!id) {
        on_grv_reply(fl, CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
        return;
    }
    /* a full batch may have left more behind */
    if (b->pending && b->npending >= GRV_MAX_BATCH_SIZE)
        send_batch(b);
    else if (b->pending)
        cfdb_loop_timer_add_in(loop, &b->window, (uint64_t)b->window_ns);
}

/* The batcher for these flags: the one already serving them, else a free slot. There are
 * more slots than flag combinations (priority x causal-read-risky x provisional proxies x
 * min-known-committed-version), so a slot is always found. */
static grv_batcher *batcher_for(cfdb_db *db, uint32_t flags)
{
    grv_batcher *free_slot = NULL;
    for (int i = 0; i < GRV_BATCHERS; i++) {
        grv_batcher *b = &db->grv_b[i];
        if (b->used && b->flags == flags)
            return b;
        if (!free_slot && (!b->used || (!b->pending && b->in_flight == 0)))
            free_slot = b;
    }
    if (free_slot) {
        free_slot->used = true;
        free_slot->flags = flags;
        return free_slot;
    }
    return &db->grv_b[flags % GRV_BATCHERS]; /* unreachable with GRV_BATCHERS >= 32 */
}

void cfdb_db_get_read_version(cfdb_db *db, cfdb_waiter *w)
{
    uint32_t flags = w->flags ? w->flags : CFDB_GRV_PRIORITY_DEFAULT;
    grv_batcher *b = batcher_for(db, flags);
    w->next = NULL;
    if (b->pending_tail)
        b->pending_tail->next = w;
    else
        b->pending = w;
    b->pending_tail = w;
    b->npending++;
    if (!db->have_proxies) {
        cfdb_db_start(db);
        return;
    }
    if (cfdb_timer_is_armed(&db->grv_retry))
        return; /* a batch is waiting to retry: this one goes with it */
    if (b->in_flight == 0 || b->npending >= GRV_MAX_BATCH_SIZE)
        send_batch(b);
    else if (!cfdb_timer_is_armed(&b->window))
        cfdb_loop_timer_add_in(cfdb_client_loop(db->cl), &b->window, (uint64_t)b->window_ns);
}

/* ---- the GRV cache ---- */

/* updateCachedReadVersion: the newest version wins; its time only moves forward. */
void cfdb_db_update_cached_read_version(cfdb_db *db, int64_t version, uint64_t sent_ns)
{
    if (version >= db->grv_cache_version) {
        db->grv_cache_version = version;
        if (sent_ns > db->grv_cache_time_ns)
            db->grv_cache_time_ns = sent_ns;
    }
}

static void updater_reply(cfdb_waiter *w, int error, int64_t version)
{
    (void)version;
    cfdb_db *db = (cfdb_db *)((char *)w - offsetof(cfdb_db, grv_updater_waiter));
    db->grv_updater_waiting = false;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    if (!error) /* grvDelay = (grvDelay + latency) / 2 */
        db->grv_updater_delay_ns = (db->grv_updater_delay_ns + (double)(cfdb_loop_now_ns(loop) - db->grv_updater_sent_ns)) / 2;
    if (db->grv_updater_started) {
        /* after an error, libfdb_c's onError + Backoff: wait a little before the next try */
        cfdb_db_ref(db);
        cfdb_loop_timer_add_in(loop, &db->grv_updater, error ? GRV_RETRY_DELAY_NS : 0);
    }
    cfdb_db_unref(db);
}

static void updater_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)t;
    cfdb_db *db = arg;
    if (!db->grv_updater_started || db->closing) {
        cfdb_db_unref(db);
        return;
    }
    uint64_t now = cfdb_loop_now_ns(loop);
    double bound = (double)MAX_VERSION_CACHE_LAG_NS - db->grv_updater_delay_ns;
    double since_cache = (double)(now - db->grv_cache_time_ns);
    double since_proxy = (double)(now - db->grv_last_proxy_ns);
    if (since_cache >= bound || since_proxy > (double)MAX_PROXY_CONTACT_LAG_NS) {
        /* the timer's reference passes to the request */
        db->grv_updater_waiting = true;
        db->grv_updater_sent_ns = now;
        memset(&db->grv_updater_waiter, 0, sizeof db->grv_updater_waiter);
        db->grv_updater_waiter.fn = updater_reply;
        db->grv_updater_waiter.flags = CFDB_GRV_PRIORITY_DEFAULT;
        cfdb_db_get_read_version(db, &db->grv_updater_waiter);
        return;
    }
    double a = (double)MAX_PROXY_CONTACT_LAG_NS - since_proxy, b = bound - since_cache;
    double wait = a < b ? a : b;
    if (wait < 1e6)
        wait = 1e6; /* at least 1 ms */
    cfdb_loop_timer_add_in(loop, &db->grv_updater, (uint64_t)wait); /* keeps the reference */
}

int64_t cfdb_db_cached_read_version(cfdb_db *db, uint32_t flags)
{
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    uint64_t now = cfdb_loop_now_ns(loop);
    uint32_t prio = flags & CFDB_GRV_FLAG_PRIORITY_MASK;
    /* rkThrottlingCooledDown */
    uint64_t rk = prio == CFDB_GRV_PRIORITY_BATCH ? db->grv_rk_batch_ns
                  : prio == CFDB_GRV_PRIORITY_SYSTEM_IMMEDIATE ? 0 : db->grv_rk_default_ns;
    if (rk && now - rk <= GRV_CACHE_RK_COOLDOWN_NS)
        return 0;
    if (!db->grv_updater_started && !db->closing) {
        db->grv_updater_started = true;
        db->grv_updater_delay_ns = 1e6; /* grvDelay starts at 0.001 s */
        cfdb_db_ref(db);
        cfdb_loop_timer_add_in(loop, &db->grv_updater, 0);
    }
    if (db->grv_cache_version && now - db->grv_cache_time_ns <= MAX_VERSION_CACHE_LAG_NS)
        return db->grv_cache_version;
    return 0;
}

static atomic_bool g_grv_cache_allowed;

void cfdb_db_allow_grv_cache(void)
{
    atomic_store(&g_grv_cache_allowed, true);
}

bool cfdb_db_grv_cache_allowed(void)
{
    return atomic_load(&g_grv_cache_allowed);
}
