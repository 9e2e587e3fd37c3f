/* Futures: the results of asynchronous client operations, as fdb_c.h exposes them.
 * A future is completed once, on the network thread; the callback (if any) runs on the
 * network thread, or at once on the caller's thread when it is set on a future that is
 * already ready (libfdb_c's rule).
 *
 * Waiting takes no lock. A waiter takes one of CFDB_FUTURE_WAKE_SLOTS slots, records it in the
 * future, announces itself in `wake` (CFDB_FUTURE_WAKE_SLOTTED) and sleeps on its group's shared
 * futex word with its slot's bit (FUTEX_WAIT_BITSET); with no slot free, or a second waiter on
 * the same future, it sleeps on `wake` itself (CFDB_FUTURE_WAKE_SLEEPERS). Completion publishes
 * `ready`, leaves the mutex and only then sets CFDB_FUTURE_WAKE_READY, so a woken waiter never
 * finds the completer holding a lock it needs (on one CPU that cost two context switches per
 * operation: the waiter preempted the completer inside the lock, blocked on it, and was woken
 * once more). On the network thread, inside a loop iteration (cfdb_future_wake_batch_begin/end,
 * called by the client's loop hook), the slots to wake are collected and woken at the end of
 * the iteration with one FUTEX_WAKE_BITSET per group: the waking thread is preempted at most
 * once per iteration instead of once per future, and the woken threads run one after another
 * (on one CPU: one context switch per transaction instead of two). `mu` guards the callback,
 * exactly-once completion and the release-memory count. */
#ifndef CFDB_CLIENT_FUTURE_H
#define CFDB_CLIENT_FUTURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"

typedef void (*cfdb_future_callback)(void *future, void *arg);

typedef enum cfdb_future_kind {
    CFDB_FUTURE_VOID,
    CFDB_FUTURE_INT64,     /* versions, sizes */
    CFDB_FUTURE_VALUE,     /* optional value */
    CFDB_FUTURE_KEY,
    CFDB_FUTURE_KEYVALUES, /* key-value array + more */
    CFDB_FUTURE_STRINGS,   /* string array */
    CFDB_FUTURE_KEYS,      /* key array */
    CFDB_FUTURE_DATABASE,
    CFDB_FUTURE_MAPPED,    /* mapped key-value array + more */
    CFDB_FUTURE_DOUBLE,
} cfdb_future_kind;

/* Matches FDBKeyValue's packed layout (fdb_c.h); filled in place for the API. */
typedef struct __attribute__((packed, aligned(4))) cfdb_fdb_kv {
    const uint8_t *key;
    int key_length;
    const uint8_t *value;
    int value_length;
} cfdb_fdb_kv;

typedef struct __attribute__((packed, aligned(4))) cfdb_fdb_key {
    const uint8_t *key;
    int key_length;
} cfdb_fdb_key;

/* FDBKeySelector, FDBGetRangeReqAndResult and FDBMappedKeyValue (fdb_c.h): 20, 56 and
 * 112 bytes on LP64. A row's bytes mirror libfdb_c's MappedKeyValueRef, buffer included
 * (txn_mapped.c fills it). */
typedef struct cfdb_fdb_selector {
    cfdb_fdb_key key;
    int or_equal;
    int offset;
} cfdb_fdb_selector;

typedef struct cfdb_fdb_range_req {
    cfdb_fdb_selector begin, end;
    cfdb_fdb_kv *data;
    int m_size, m_capacity;
} cfdb_fdb_range_req;

typedef struct cfdb_fdb_mkv {
    cfdb_fdb_key key;
    cfdb_fdb_key value;
    cfdb_fdb_range_req get_range;
    unsigned char buffer[32];
} cfdb_fdb_mkv;

typedef struct cfdb_future cfdb_future;

#define CFDB_FUTURE_WAKE_READY 1u    /* `wake`: completed, waiters return */
#define CFDB_FUTURE_WAKE_SLEEPERS 2u /* `wake`: somebody sleeps (or is about to) on this word */
#define CFDB_FUTURE_WAKE_SLOTTED 4u  /* `wake`: a waiter sleeps on slot `sleep_slot` */
#define CFDB_FUTURE_WAKE_SLOTS 128   /* waiters that can sleep on the shared words at once */

/* Called on the application's thread, right after its fdb_future_cancel/destroy completed a
 * pending future with operation_cancelled, so that the operation can let go of what it holds
 * (it must not touch its transaction there: that may be gone). */
typedef void (*cfdb_future_cancel_fn)(cfdb_future *f);

struct cfdb_future {
    atomic_int refs;     /* the application's handle + each owner in flight */
    atomic_bool ready;
    atomic_bool cancel_requested;
    int error;
    cfdb_future_kind kind;
    pthread_mutex_t mu;
    _Atomic uint32_t wake; /* futex word: CFDB_FUTURE_WAKE_READY | _SLEEPERS | _SLOTTED */
    _Atomic int sleep_slot; /* the slotted waiter's slot, or CFDB_FUTURE_WAKE_SLOTS (none) */
    cfdb_future_callback callback;
    void *callback_arg;
    cfdb_future_cancel_fn on_cancel;
    void *op; /* the operation that will complete this future */
    /* fdb_future_release_memory, as libfdb_c counts it (ThreadSingleAssignmentVarBase in
     * flow/include/flow/ThreadHelper.actor.h): each successful fdb_future_get_* adds a
     * reference to the result, each release takes one; when a release brings the count to
     * exactly zero the result is released and the future reports future_released (1102)
     * from then on, unless it had failed (it keeps its error). value_refs is under mu. */
    int value_refs;
    atomic_bool released;

    cfdb_arena arena;
    union {
        int64_t i64;
        double d;
        struct {
            bool present;
            cfdb_bytes value;
        } value;
        cfdb_bytes key;
        struct {
            cfdb_fdb_kv *items;
            int count;
            bool more;
        } kvs;
        struct {
            cfdb_fdb_mkv *items;
            int count;
            bool more;
        } mkvs;
        struct {
            const char **items;
            int count;
        } strings;
        struct {
            cfdb_fdb_key *items;
            int count;
        } keys;
        void *database;
    } r;
};

cfdb_future *cfdb_future_new(cfdb_future_kind kind);
/* A future with `extra` zeroed bytes after it (an operation's state lives there, so one
 * allocation serves both; extra <= CFDB_FUTURE_EXTRA_MAX). *extra_out points at them. */
#define CFDB_FUTURE_EXTRA_MAX 2048
cfdb_future *cfdb_future_new_with(cfdb_future_kind kind, size_t extra, void **extra_out);
/* Completes the future (once): error 0 means the result fields are set. */
void cfdb_future_complete(cfdb_future *f, int error);
/* The same; true if this call completed it (false: it was already ready). */
bool cfdb_future_try_complete(cfdb_future *f, int error);
static inline bool cfdb_future_is_ready(cfdb_future *f)
{
    return atomic_load_explicit(&f->ready, memory_order_acquire);
}
void cfdb_future_wait(cfdb_future *f);
/* The calling thread holds back the wake-ups of slotted waiters of the futures it completes
 * until cfdb_future_wake_batch_end, which wakes them all (one system call per group). */
void cfdb_future_wake_batch_begin(void);
void cfdb_future_wake_batch_end(void);
/* Returns whether the callback was stored (false: the future is ready, call it yourself). */
bool cfdb_future_set_callback(cfdb_future *f, cfdb_future_callback cb, void *arg);
void cfdb_future_ref(cfdb_future *f);
void cfdb_future_unref(cfdb_future *f);

/* The application's view of a ready future's error: its error, or future_released (1102)
 * once fdb_future_release_memory released a result; CFDB_ERR_FUTURE_NOT_SET if not ready. */
int cfdb_future_public_error(cfdb_future *f);
/* A getter's check: the public error, or CFDB_ERR_INTERNAL_ERROR for a result of another
 * kind; 0 means the result may be read (and counts one value reference). */
int cfdb_future_get_begin(cfdb_future *f, cfdb_future_kind kind);
/* fdb_future_release_memory. */
void cfdb_future_release_value(cfdb_future *f);

#endif
