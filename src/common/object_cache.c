#include "object_cache.h"

#include <stddef.h>

/* A thread's local stack is handed back to the shared one when the thread exits, so no
 * cached object is ever lost with a thread's storage. */
static void flush_local(void *arg)
{
    cfdb_object_cache_local *local = arg;
    cfdb_object_cache *shared = local->owner;
    pthread_mutex_lock(&shared->mu);
    while (local->count && shared->count < CFDB_OBJECT_CACHE_SHARED)
        shared->items[shared->count++] = local->items[--local->count];
    pthread_mutex_unlock(&shared->mu);
    while (local->count)
        shared->destroy(local->items[--local->count]);
    local->owner = NULL;
}

/* pthread_once cannot pass an argument: the few caches each have their own slot here. */
#define MAX_CACHES 8
static cfdb_object_cache *g_registering;
static pthread_mutex_t g_register_mu = PTHREAD_MUTEX_INITIALIZER;

static void create_key(void)
{
    pthread_key_create(&g_registering->exit_key, flush_local);
}

static void register_thread(cfdb_object_cache *shared, cfdb_object_cache_local *local)
{
    pthread_mutex_lock(&g_register_mu);
    g_registering = shared;
    pthread_once(&shared->once, create_key);
    pthread_mutex_unlock(&g_register_mu);
    local->owner = shared;
    pthread_setspecific(shared->exit_key, local);
}

void *cfdb_object_cache_get(cfdb_object_cache *shared, cfdb_object_cache_local *local)
{
    if (local->count)
        return local->items[--local->count];
    void *obj = NULL;
    pthread_mutex_lock(&shared->mu);
    /* refill half the local stack at once: one lock per several objects */
    while (shared->count && local->count < CFDB_OBJECT_CACHE_LOCAL / 2)
        local->items[local->count++] = shared->items[--shared->count];
    pthread_mutex_unlock(&shared->mu);
    if (local->count) {
        if (!local->owner)
            register_thread(shared, local);
        obj = local->items[--local->count];
    }
    return obj;
}

bool cfdb_object_cache_put(cfdb_object_cache *shared, cfdb_object_cache_local *local, void *obj)
{
    if (!local->owner)
        register_thread(shared, local);
    if (local->count < CFDB_OBJECT_CACHE_LOCAL) {
        local->items[local->count++] = obj;
        return true;
    }
    bool kept = false;
    pthread_mutex_lock(&shared->mu);
    /* spill half the local stack: objects freed here are wanted on other threads */
    while (local->count > CFDB_OBJECT_CACHE_LOCAL / 2 && shared->count < CFDB_OBJECT_CACHE_SHARED)
        shared->items[shared->count++] = local->items[--local->count];
    if (local->count < CFDB_OBJECT_CACHE_LOCAL) {
        local->items[local->count++] = obj;
        kept = true;
    }
    pthread_mutex_unlock(&shared->mu);
    return kept;
}
