#include "cfdb/object_cache.h"

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
    if (local->count)
        obj = local->items[--local->count];
    return obj;
}

bool cfdb_object_cache_put(cfdb_object_cache *shared, cfdb_object_cache_local *local, void *obj)
{
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
