/* Management workers (special_keys_internal.h): a module's read or the modules' commit work
 * runs on a worker thread, blocking on the transaction's futures; the answer's future is
 * completed on the network thread (a posted task, so callbacks run where libfdb_c runs
 * them). A job holds a reference to its transaction and to its future until that task ran.
 *
 * Bound: at most SK_MAX_WORKERS threads exist at once. A job goes into one FIFO queue (an
 * intrusive list through the job, which the application's call already allocated, so the
 * queue costs nothing per job); a thread is started only while fewer than SK_MAX_WORKERS
 * run, and a thread takes jobs until the queue is empty, then exits (no idle threads).
 * Beyond the bound a job waits in the queue: libfdb_c runs its module actors on the network
 * thread with no limit and no error for many concurrent management calls, so waiting is the
 * only behaviour that keeps its semantics (a transaction timeout or cancel still ends the
 * wait, because the job's blocking reads fail). Jobs never wait on other jobs (modules read
 * only system keys, never \xff\xff), so the queue cannot deadlock. If no thread can be
 * started at all, the job fails with unknown_error as before. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "event_loop.h"
#include "foundationdb/fdb_c_options.g.h"
#include "net.h"
#include "special_keys.h"
#include "special_keys_internal.h"
#include "txn_api.h"

typedef struct sk_job {
    struct sk_job *next; /* the queue */
    cfdb_txn *tx;
    cfdb_future *f;
    cfdb_task done;
    int rc;
    bool commit;
    /* reads */
    const sk_impl *impls;
    int nimpls;
    cfdb_bytes begin, end;
    int limit;
    bool reverse, single;
    bool granted; /* counted in SK_STATE(tx)->active */
} sk_job;

int sk_rows_push(sk_rows *r, cfdb_arena *a, cfdb_bytes key, cfdb_bytes value)
{
    if (r->n == r->cap) {
        int nc = r->cap ? r->cap * 2 : 16;
        cfdb_fdb_kv *ni = cfdb_arena_alloc(a, (size_t)nc * sizeof *ni);
        if (!ni)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (r->n)
            memcpy(ni, r->items, (size_t)r->n * sizeof *ni);
        r->items = ni;
        r->cap = nc;
    }
    cfdb_bytes k, v;
    if (cfdb_arena_dup_bytes(a, key, &k) || cfdb_arena_dup_bytes(a, value, &v))
        return CFDB_ERR_UNKNOWN_ERROR;
    r->items[r->n++] = (cfdb_fdb_kv){ k.ptr, (int)k.len, v.ptr, (int)v.len };
    return 0;
}

int sk_collect(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_entries *out)
{
    memset(out, 0, sizeof *out);
    cfdb_txn_lock(tx);
    out->ryw_disabled = cfdb_txn_options_locked(tx)->read_your_writes_disable;
    int rc = 0;
    if (SK_STATE(tx)) {
        const sk_writes *w = &SK_STATE(tx)->w;
        size_t i = sk_writes_lower(w, begin), n = 0;
        for (size_t j = i; j < w->n && cfdb_bytes_cmp(w->items[j].begin, end) < 0; j++)
            n++;
        out->items = cfdb_arena_alloc(a, (n ? n : 1) * sizeof *out->items);
        if (!out->items)
            rc = CFDB_ERR_UNKNOWN_ERROR;
        for (size_t j = 0; j < n && !rc; j++) {
            const sk_write *e = &w->items[i + j];
            sk_write *c = &out->items[j];
            c->has_value = e->has_value;
            if (cfdb_arena_dup_bytes(a, e->begin, &c->begin) || cfdb_arena_dup_bytes(a, e->end, &c->end) ||
                cfdb_arena_dup_bytes(a, e->value, &c->value))
                rc = CFDB_ERR_UNKNOWN_ERROR;
        }
        if (!rc)
            out->n = n;
    }
    cfdb_txn_unlock(tx);
    return rc;
}

/* rywGetRange: the database's rows in [begin, end) with the transaction's special writes
 * laid over them (sets replace, clears remove). */
int sk_ryw_merge(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, const sk_rows *db, sk_rows *out)
{
    sk_entries w;
    int rc = sk_collect(tx, begin, end, a, &w);
    if (rc)
        return rc;
    if (w.ryw_disabled)
        w.n = 0;
    int i = 0;
    size_t j = 0;
    while (!rc && (i < db->n || j < w.n)) {
        cfdb_bytes k = i < db->n ? cfdb_bytes_make(db->items[i].key, (size_t)db->items[i].key_length)
                                 : cfdb_bytes_make(NULL, 0);
        if (j < w.n && (i >= db->n || cfdb_bytes_cmp(w.items[j].begin, k) <= 0)) {
            const sk_write *e = &w.items[j++];
            if (e->has_value)
                rc = sk_rows_push(out, a, e->begin, e->value);
            while (i < db->n && cfdb_bytes_cmp(cfdb_bytes_make(db->items[i].key, (size_t)db->items[i].key_length),
                                               e->end) < 0)
                i++;
        } else {
            rc = sk_rows_push(out, a, k, cfdb_bytes_make(db->items[i].value, (size_t)db->items[i].value_length));
            i++;
        }
    }
    return rc;
}

/* ---- blocking helpers ---- */

static int wait_done(cfdb_future *f)
{
    cfdb_future_wait(f);
    return f->error;
}

int skw_get(cfdb_txn *tx, cfdb_bytes key, cfdb_arena *a, bool *present, cfdb_bytes *value)
{
    cfdb_future *f = cfdb_txn_get(tx, key, false);
    int rc = wait_done(f);

    *present = false;
    if (!rc && f->r.value.present) {
        *present = true;
        if (cfdb_arena_dup_bytes(a, f->r.value.value, value))
            rc = CFDB_ERR_UNKNOWN_ERROR;
    }
    cfdb_future_unref(f);
    return rc;
}

static int range_pages(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool native, cfdb_arena *a,
                       sk_rows *out)
{
    memset(out, 0, sizeof *out);
    cfdb_bytes from = begin;
    for (int iteration = 1;; iteration++) {
        /* FDB_STREAMING_MODE_WANT_ALL (-2) in pages */
        int left = limit > 0 ? limit - out->n : 0;
        cfdb_future *f = native ? cfdb_txn_get_range_native(tx, from, end, left, -2, iteration)
                                : cfdb_txn_get_range(tx, from, false, 1, end, false, 1, left, 0, -2, iteration, false,
                                                     false);
        int rc = wait_done(f);
        bool more = false;
        for (int i = 0; !rc && i < f->r.kvs.count; i++) {
            const cfdb_fdb_kv *kv = &f->r.kvs.items[i];
            rc = sk_rows_push(out, a, cfdb_bytes_make(kv->key, (size_t)kv->key_length),
                              cfdb_bytes_make(kv->value, (size_t)kv->value_length));
        }
        if (!rc && f->r.kvs.more && f->r.kvs.count > 0) {
            more = !(limit > 0 && out->n >= limit);
            const cfdb_fdb_kv *last = &out->items[out->n - 1];
            uint8_t *k = cfdb_arena_alloc(a, (size_t)last->key_length + 1);
            if (!k) {
                rc = CFDB_ERR_UNKNOWN_ERROR;
            } else {
                memcpy(k, last->key, (size_t)last->key_length);
                k[last->key_length] = 0;
                from = cfdb_bytes_make(k, (size_t)last->key_length + 1);
            }
        }
        cfdb_future_unref(f);
        if (rc || !more)
            return rc;
    }
}

int skw_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, cfdb_arena *a, sk_rows *out)
{
    return range_pages(tx, begin, end, limit, false, a, out);
}

int skw_range_native(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, cfdb_arena *a, sk_rows *out)
{
    return range_pages(tx, begin, end, limit, true, a, out);
}

static int deferred(cfdb_txn *tx)
{
    cfdb_txn_lock(tx);
    int rc = cfdb_txn_deferred_error_locked(tx);
    cfdb_txn_unlock(tx);
    return rc;
}

int skw_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value)
{
    cfdb_txn_set(tx, key, value);
    return deferred(tx);
}

int skw_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_txn_clear_range(tx, begin, end);
    return deferred(tx);
}

int skw_atomic(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes param, int type)
{
    cfdb_txn_atomic_op(tx, key, param, type);
    return deferred(tx);
}

int skw_write_conflict(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end)
{
    return cfdb_txn_add_conflict_range(tx, begin, end, 1);
}

int skw_read_conflict(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end)
{
    return cfdb_txn_add_conflict_range(tx, begin, end, 0);
}

void skw_set_option(cfdb_txn *tx, int option)
{
    cfdb_txn_set_option(tx, option, NULL, 0);
}

/* ---- jobs ---- */

/* Several jobs may run on one transaction at once (a get and a range read of two modules):
 * the first saves the application's access, the last restores it (cfdb_sk_state.active). */
static bool grant_system_access(sk_job *j)
{
    cfdb_txn *tx = j->tx;
    cfdb_txn_lock(tx);
    if (!SK_STATE(tx))
        SK_STATE(tx) = calloc(1, sizeof *SK_STATE(tx));
    cfdb_sk_state *st = SK_STATE(tx);
    if (!st) {
        cfdb_txn_unlock(tx);
        return false;
    }
    j->granted = true;
    cfdb_txn_access was = cfdb_txn_grant_system_access_locked(tx);
    if (st->active++ == 0)
        st->saved = was;
    cfdb_txn_unlock(tx);
    return true;
}

static void restore_system_access(sk_job *j)
{
    cfdb_txn *tx = j->tx;
    if (!j->granted)
        return;
    j->granted = false;
    cfdb_txn_lock(tx);
    cfdb_sk_state *st = SK_STATE(tx); /* kept while active > 0 (cfdb_special_reset) */
    if (st && st->active > 0 && --st->active == 0)
        cfdb_txn_restore_system_access_locked(tx, st->saved);
    cfdb_txn_unlock(tx);
}

static void job_done_task(void *arg)
{
    sk_job *j = arg;
    cfdb_future_try_complete(j->f, j->rc);
    cfdb_future_unref(j->f);
    txn_unref(j->tx);
    free((void *)j->begin.ptr);
    free(j);
}

static int run_read(sk_job *j)
{
    cfdb_future *f = j->f;
    sk_rows rows = { 0 };
    int rc = 0;
    for (int i = 0; i < j->nimpls && !rc; i++) {
        const sk_impl *m = &j->impls[i];
        cfdb_bytes mb = cfdb_bytes_str(m->begin), me;
        uint8_t *tmp = NULL;
        if (m->end) {
            me = cfdb_bytes_str(m->end);
        } else {
            tmp = cfdb_arena_alloc(&f->arena, mb.len + 1);
            if (!tmp)
                return CFDB_ERR_UNKNOWN_ERROR;
            memcpy(tmp, mb.ptr, mb.len);
            tmp[mb.len] = 0;
            me = cfdb_bytes_make(tmp, mb.len + 1);
        }
        cfdb_bytes b = cfdb_bytes_cmp(j->begin, mb) > 0 ? j->begin : mb;
        cfdb_bytes e = cfdb_bytes_cmp(j->end, me) < 0 ? j->end : me;
        if (cfdb_bytes_cmp(b, e) >= 0)
            continue;
        if (!m->read) {
            rc = CFDB_ERR_UNSUPPORTED_OPERATION;
            break;
        }
        sk_rows part = { 0 };
        rc = m->read(j->tx, b, e, &f->arena, &part);
        for (int k = 0; k < part.n && !rc; k++) {
            /* a module answers only inside what was asked */
            cfdb_bytes key = cfdb_bytes_make(part.items[k].key, (size_t)part.items[k].key_length);
            if (cfdb_bytes_cmp(key, b) < 0 || cfdb_bytes_cmp(key, e) >= 0)
                continue;
            if (rows.n == rows.cap) {
                int nc = rows.cap ? rows.cap * 2 : 16;
                cfdb_fdb_kv *ni = cfdb_arena_alloc(&f->arena, (size_t)nc * sizeof *ni);
                if (!ni) {
                    rc = CFDB_ERR_UNKNOWN_ERROR;
                    break;
                }
                if (rows.n)
                    memcpy(ni, rows.items, (size_t)rows.n * sizeof *ni);
                rows.items = ni;
                rows.cap = nc;
            }
            rows.items[rows.n++] = part.items[k];
        }
    }
    if (rc)
        return rc;
    if (j->single) {
        f->r.value.present = rows.n > 0;
        if (rows.n)
            f->r.value.value = cfdb_bytes_make(rows.items[0].value, (size_t)rows.items[0].value_length);
        return 0;
    }
    if (j->reverse)
        for (int i = 0; i < rows.n / 2; i++) {
            cfdb_fdb_kv t = rows.items[i];
            rows.items[i] = rows.items[rows.n - 1 - i];
            rows.items[rows.n - 1 - i] = t;
        }
    bool more = false;
    if (j->limit > 0 && rows.n > j->limit) {
        rows.n = j->limit;
        more = true;
    }
    f->r.kvs.items = rows.items;
    f->r.kvs.count = rows.n;
    f->r.kvs.more = more;
    return 0;
}

static int run_commit(sk_job *j)
{
    cfdb_txn *tx = j->tx;
    cfdb_arena a;
    cfdb_arena_init(&a);
    sk_entries all;
    int rc = sk_collect(tx, CFDB_BYTES_LIT("\xff\xff"), CFDB_BYTES_LIT("\xff\xff\xff"), &a, &all);
    /* the written modules, in the order of their first written range (commitActor) */
    const sk_impl *order[64];
    int n = 0;
    for (size_t i = 0; i < all.n && !rc; i++) {
        const sk_impl *m = sk_find_write_impl(all.items[i].begin);
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen = seen || order[k] == m;
        if (m && !seen && n < (int)(sizeof order / sizeof *order))
            order[n++] = m;
    }
    for (int k = 0; k < n && !rc; k++)
        rc = order[k]->commit ? order[k]->commit(tx, &a) : CFDB_ERR_UNSUPPORTED_OPERATION;
    cfdb_arena_free(&a);
    restore_system_access(j);
    if (rc)
        return rc;
    cfdb_future *c = cfdb_txn_commit_now(tx);
    rc = wait_done(c);
    cfdb_future_unref(c);
    return rc;
}

static void run_job(sk_job *j)
{
    if (!grant_system_access(j)) {
        j->rc = CFDB_ERR_UNKNOWN_ERROR;
    } else if (j->commit) {
        j->rc = run_commit(j);
    } else {
        j->rc = run_read(j);
        restore_system_access(j);
    }
    cfdb_task_init(&j->done, job_done_task, j);
    cfdb_loop_post_task(cfdb_client_loop(cfdb_db_client(cfdb_txn_db(j->tx))), &j->done);
}

#define SK_MAX_WORKERS 4

static struct {
    pthread_mutex_t mu;
    sk_job *head, *tail;
    int running; /* threads started and not yet exited */
} pool = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0 };

static sk_job *pool_take(void)
{
    pthread_mutex_lock(&pool.mu);
    sk_job *j = pool.head;
    if (j) {
        pool.head = j->next;
        if (!pool.head)
            pool.tail = NULL;
    } else {
        pool.running--;
    }
    pthread_mutex_unlock(&pool.mu);
    return j;
}

static void *worker_main(void *arg)
{
    (void)arg;
    for (sk_job *j; (j = pool_take()) != NULL;)
        run_job(j);
    return NULL;
}

/* Queues j; 0, or unknown_error when no thread runs and none could be started (j was not
 * queued then). */
static int pool_submit(sk_job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&pool.mu);
    if (pool.tail)
        pool.tail->next = j;
    else
        pool.head = j;
    pool.tail = j;
    int rc = 0;
    if (pool.running < SK_MAX_WORKERS) {
        pthread_attr_t attr;
        pthread_t t;
        int ok = pthread_attr_init(&attr) == 0;
        ok = ok && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0;
        ok = ok && pthread_create(&t, &attr, worker_main, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (ok) {
            pool.running++;
        } else if (pool.running == 0) {
            /* nobody would take it: unqueue (it is the only job, the queue was empty) */
            pool.head = pool.tail = NULL;
            rc = CFDB_ERR_UNKNOWN_ERROR;
        }
    }
    pthread_mutex_unlock(&pool.mu);
    return rc;
}

static cfdb_future *start(sk_job *j, cfdb_future_kind kind)
{
    j->f = cfdb_future_new(kind);
    if (!j->f) {
        free((void *)j->begin.ptr);
        free(j);
        return txn_future_no_memory(kind);
    }
    cfdb_future *f = j->f; /* the job may be gone as soon as a worker ran it */
    cfdb_future_ref(f);
    txn_ref(j->tx);
    if (pool_submit(j)) {
        cfdb_future_complete(f, CFDB_ERR_UNKNOWN_ERROR);
        cfdb_future_unref(f);
        txn_unref(j->tx);
        free((void *)j->begin.ptr);
        free(j);
    }
    return f;
}

cfdb_future *sk_async_read(cfdb_txn *tx, const sk_impl *impls, int nimpls, cfdb_bytes begin, cfdb_bytes end,
                           int limit, bool reverse, bool single)
{
    cfdb_future_kind kind = single ? CFDB_FUTURE_VALUE : CFDB_FUTURE_KEYVALUES;
    sk_job *j = calloc(1, sizeof *j);
    uint8_t *keys = malloc(begin.len + end.len + 1);
    if (!j || !keys) {
        free(j);
        free(keys);
        return txn_future_no_memory(kind);
    }
    memcpy(keys, begin.ptr, begin.len);
    memcpy(keys + begin.len, end.ptr, end.len);
    j->tx = tx;
    j->impls = impls;
    j->nimpls = nimpls;
    j->begin = cfdb_bytes_make(keys, begin.len);
    j->end = cfdb_bytes_make(keys + begin.len, end.len);
    j->limit = limit;
    j->reverse = reverse;
    j->single = single;
    return start(j, kind);
}

cfdb_future *sk_async_commit(cfdb_txn *tx)
{
    sk_job *j = calloc(1, sizeof *j);
    if (!j)
        return txn_future_no_memory(CFDB_FUTURE_VOID);
    j->tx = tx;
    j->commit = true;
    return start(j, CFDB_FUTURE_VOID);
}
