/* A cache of same-sized objects for hot paths: a small per-thread stack in front of a
 * shared, mutex-protected one. Objects are often allocated on one thread (the
 * application's) and released on another (the network thread); the shared stack moves
 * them back, so steady state needs no malloc. The cache only keeps pointers: creating
 * and destroying objects is the caller's job. */
#ifndef CFDB_OBJECT_CACHE_H
#define CFDB_OBJECT_CACHE_H

#include <pthread.h>
#include <stdbool.h>

#define CFDB_OBJECT_CACHE_LOCAL 32
#define CFDB_OBJECT_CACHE_SHARED 1024

typedef struct cfdb_object_cache cfdb_object_cache;

typedef struct cfdb_object_cache_local {
    void *items[CFDB_OBJECT_CACHE_LOCAL];
    int count;
    cfdb_object_cache *owner; /* set once the thread's exit hook is registered */
} cfdb_object_cache_local;

struct cfdb_object_cache {
    pthread_mutex_t mu;
    void *items[CFDB_OBJECT_CACHE_SHARED];
    int count;
    /* Destroys an object the cache cannot keep (when a thread exits with a full shared
     * stack). */
    void (*destroy)(void *obj);
    pthread_once_t once;
    pthread_key_t exit_key; /* a thread's local stack goes back to the shared one at exit */
};

#define CFDB_OBJECT_CACHE_INIT(DESTROY) \
    { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0, DESTROY, PTHREAD_ONCE_INIT, 0 }

/* A cached object, or NULL (then allocate one). */
void *cfdb_object_cache_get(cfdb_object_cache *shared, cfdb_object_cache_local *local);
/* Keeps obj; false when both levels are full (then destroy it). */
bool cfdb_object_cache_put(cfdb_object_cache *shared, cfdb_object_cache_local *local, void *obj);

#endif
