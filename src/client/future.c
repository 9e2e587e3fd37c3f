#include "future.h"

#include <stdlib.h>

cfdb_future *cfdb_future_new(cfdb_future_kind kind)
{
    cfdb_future *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    atomic_init(&f->refs, 1);
    atomic_init(&f->ready, false);
    atomic_init(&f->cancel_requested, false);
    f->kind = kind;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    cfdb_arena_init(&f->arena);
    return f;
}

void cfdb_future_complete(cfdb_future *f, int error)
{
    pthread_mutex_lock(&f->mu);
    if (atomic_load_explicit(&f->ready, memory_order_relaxed)) {
        pthread_mutex_unlock(&f->mu); /* already completed (e.g. cancelled): first one wins */
        return;
    }
    f->error = error;
    atomic_store_explicit(&f->ready, true, memory_order_release);
    cfdb_future_callback cb = f->callback;
    void *arg = f->callback_arg;
    f->callback = NULL;
    if (f->waiters)
        pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (cb)
        cb(f, arg);
}

void cfdb_future_wait(cfdb_future *f)
{
    if (cfdb_future_is_ready(f))
        return;
    pthread_mutex_lock(&f->mu);
    f->waiters++;
    while (!atomic_load_explicit(&f->ready, memory_order_acquire))
        pthread_cond_wait(&f->cv, &f->mu);
    f->waiters--;
    pthread_mutex_unlock(&f->mu);
}

bool cfdb_future_set_callback(cfdb_future *f, cfdb_future_callback cb, void *arg)
{
    pthread_mutex_lock(&f->mu);
    bool stored = !atomic_load_explicit(&f->ready, memory_order_acquire);
    if (stored) {
        f->callback = cb;
        f->callback_arg = arg;
    }
    pthread_mutex_unlock(&f->mu);
    return stored;
}

void cfdb_future_ref(cfdb_future *f)
{
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}

void cfdb_future_unref(cfdb_future *f)
{
    if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
        return;
    cfdb_arena_free(&f->arena);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
}
