#include "future.h"

#include "error_codes.h"
#include "object_cache.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


/* Sleeps while *word == expected (the kernel checks it atomically with going to sleep).
 * Spurious returns are fine: callers re-check. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
    (void)syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
    (void)syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* ---- slots: waiters sleeping on shared words, woken in batches (see future.h) ---- */

#define SLOT_GROUPS (CFDB_FUTURE_WAKE_SLOTS / 32)
#define NO_SLOT CFDB_FUTURE_WAKE_SLOTS /* sleep_slot when no slotted waiter */
/* A group's word changes (+1) before each wake, so a waiter that read it before the wake
 * cannot go to sleep after it. */
static _Atomic uint32_t g_group_word[SLOT_GROUPS];
/* Free slots: bit set = free. */
static _Atomic uint64_t g_free_slots[CFDB_FUTURE_WAKE_SLOTS / 64] = { UINT64_MAX, UINT64_MAX };
/* This thread's batch: whether one is open, and the slots it completed and has not woken yet,
 * per group. One thread-local object, so each function finds it with one TLS lookup. */
typedef struct wake_batch {
    bool open;
    uint32_t pending[SLOT_GROUPS];
} wake_batch;
static _Thread_local wake_batch tl_batch;

static int slot_take(void)
{
    for (int i = 0; i < CFDB_FUTURE_WAKE_SLOTS / 64; i++) {
        uint64_t m = atomic_load_explicit(&g_free_slots[i], memory_order_relaxed);
        while (m) {
            int b = __builtin_ctzll(m);
            if (atomic_compare_exchange_weak_explicit(&g_free_slots[i], &m, m & ~(1ull << b),
                                                      memory_order_acquire, memory_order_relaxed))
                return i * 64 + b;
        }
    }
    return NO_SLOT;
}

static void slot_put(int slot)
{
    atomic_fetch_or_explicit(&g_free_slots[slot / 64], 1ull << (slot % 64), memory_order_release);
}

static void wake_group(int group, uint32_t bits)
{
    /* the bump orders every READY set before it ahead of any waiter that reads the word after */
    atomic_fetch_add_explicit(&g_group_word[group], 1, memory_order_seq_cst);
    (void)syscall(SYS_futex, (uint32_t *)&g_group_word[group], FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL,
                  NULL, bits);
}

static void wake_slot(int slot)
{
    if (slot < 0 || slot >= NO_SLOT)
        return;
    wake_batch *b = &tl_batch;
    if (b->open)
        b->pending[slot / 32] |= 1u << (slot % 32);
    else
        wake_group(slot / 32, 1u << (slot % 32));
}

void cfdb_future_wake_batch_begin(void)
{
    tl_batch.open = true;
}

void cfdb_future_wake_batch_end(void)
{
    wake_batch *b = &tl_batch;
    b->open = false;
    for (int g = 0; g < SLOT_GROUPS; g++)
        if (b->pending[g]) {
            uint32_t bits = b->pending[g];
            b->pending[g] = 0;
            wake_group(g, bits);
        }
}

/* Futures (with room for an operation) are recycled through an object cache:
 * after warm-up a transaction's futures cost no malloc. The cache is bounded, so memory
 * freed on one thread and allocated on another settles instead of growing. */
#define BLOCK_SIZE (sizeof(cfdb_future) + CFDB_FUTURE_EXTRA_MAX)
#define KEEP_ARENA_MAX (64 * 1024)

static void block_destroy(void *obj);
static cfdb_object_cache g_blocks = CFDB_OBJECT_CACHE_INIT(block_destroy);
static _Thread_local cfdb_object_cache_local tl_blocks;

static cfdb_future *block_get(void)
{
    cfdb_future *f = cfdb_object_cache_get(&g_blocks, &tl_blocks);
    if (f)
        return f;
    f = malloc(BLOCK_SIZE);
    if (!f)
        return NULL;
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    cfdb_arena_init(&f->arena);
    return f;
}

static void block_destroy(void *obj)
{
    cfdb_future *f = obj;
    cfdb_arena_free(&f->arena);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

static void block_put(cfdb_future *f)
{
    /* keep the arena's block: the next user's results need no malloc */
    cfdb_arena_reset(&f->arena);
    if (cfdb_arena_block_capacity(&f->arena) <= KEEP_ARENA_MAX && cfdb_object_cache_put(&g_blocks, &tl_blocks, f))
        return;
    block_destroy(f);
}

cfdb_future *cfdb_future_new_with(cfdb_future_kind kind, size_t extra, void **extra_out)
{
    if (extra > CFDB_FUTURE_EXTRA_MAX)
        return NULL;
    cfdb_future *f = block_get();
    if (!f)
        return NULL;
    atomic_init(&f->refs, 1);
    atomic_init(&f->ready, false);
    atomic_init(&f->cancel_requested, false);
    f->error = 0;
    f->kind = kind;
    atomic_init(&f->wake, 0);
    atomic_init(&f->sleep_slot, NO_SLOT);
    f->callback = NULL;
    f->callback_arg = NULL;
    f->on_cancel = NULL;
    f->op = NULL;
    f->value_refs = 0;
    atomic_init(&f->released, false);
    memset(&f->r, 0, sizeof f->r);
    if (extra_out) {
        *extra_out = (unsigned char *)f + sizeof *f;
        memset(*extra_out, 0, extra);
    }
    return f;
}

cfdb_future *cfdb_future_new(cfdb_future_kind kind)
{
    return cfdb_future_new_with(kind, 0, NULL);
}

void cfdb_future_complete(cfdb_future *f, int error)
{
    cfdb_future_try_complete(f, error);
}

bool cfdb_future_try_complete(cfdb_future *f, int error)
{
    pthread_mutex_lock(&f->mu);
    if (atomic_load_explicit(&f->ready, memory_order_relaxed)) {
        pthread_mutex_unlock(&f->mu); /* already completed (e.g. cancelled): first one wins */
        return false;
    }
    f->error = error;
    atomic_store_explicit(&f->ready, true, memory_order_release);
    cfdb_future_callback cb = f->callback;
    void *arg = f->callback_arg;
    f->callback = NULL;
    pthread_mutex_unlock(&f->mu);
    /* Outside the lock (see the header). The completer holds a reference, so f lives on. */
    uint32_t was = atomic_fetch_or_explicit(&f->wake, CFDB_FUTURE_WAKE_READY, memory_order_acq_rel);
    if (was & CFDB_FUTURE_WAKE_SLOTTED)
        wake_slot(atomic_load_explicit(&f->sleep_slot, memory_order_relaxed));
    if (was & CFDB_FUTURE_WAKE_SLEEPERS)
        futex_wake_all(&f->wake);
    if (cb)
        cb(f, arg);
    return true;
}

void cfdb_future_wait(cfdb_future *f)
{
    if (cfdb_future_is_ready(f))
        return;
    /* Our own reference while we sleep: another thread destroying its handle meanwhile must
     * not recycle the block under us. */
    cfdb_future_ref(f);
    int slot = slot_take();
    int none = NO_SLOT;
    if (slot != NO_SLOT &&
        !atomic_compare_exchange_strong_explicit(&f->sleep_slot, &none, slot, memory_order_relaxed,
                                                 memory_order_relaxed)) {
        slot_put(slot); /* another thread waits on this future with a slot: use the own word */
        slot = NO_SLOT;
    }
    uint32_t flag = slot != NO_SLOT ? CFDB_FUTURE_WAKE_SLOTTED : CFDB_FUTURE_WAKE_SLEEPERS;
    for (;;) {
        /* the group word first: a wake after this read changes it, and the sleep then returns */
        uint32_t word = slot != NO_SLOT ? atomic_load_explicit(&g_group_word[slot / 32], memory_order_acquire) : 0;
        uint32_t w = atomic_load_explicit(&f->wake, memory_order_acquire);
        if (w & CFDB_FUTURE_WAKE_READY)
            break;
        /* announce (the CAS publishes sleep_slot too); a completion in between fails it */
        if (!(w & flag) && !atomic_compare_exchange_weak_explicit(&f->wake, &w, w | flag, memory_order_acq_rel,
                                                                  memory_order_acquire))
            continue;
        if (slot != NO_SLOT)
            (void)syscall(SYS_futex, (uint32_t *)&g_group_word[slot / 32], FUTEX_WAIT_BITSET_PRIVATE, word, NULL,
                          NULL, 1u << (slot % 32));
        else
            futex_wait(&f->wake, w | flag);
    }
    /* the slot stays recorded in the future (a late wake of it is harmless), but is free */
    if (slot != NO_SLOT)
        slot_put(slot);
    /* CFDB_FUTURE_WAKE_READY is set after `ready` (release): the result is visible. */
    cfdb_future_unref(f);
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
    block_put(f);
}

int cfdb_future_public_error(cfdb_future *f)
{
    if (!cfdb_future_is_ready(f))
        return CFDB_ERR_FUTURE_NOT_SET;
    if (f->error)
        return f->error;
    return atomic_load_explicit(&f->released, memory_order_acquire) ? CFDB_ERR_FUTURE_RELEASED : 0;
}

int cfdb_future_get_begin(cfdb_future *f, cfdb_future_kind kind)
{
    if (!cfdb_future_is_ready(f))
        return CFDB_ERR_FUTURE_NOT_SET;
    if (f->error)
        return f->error; /* a failed future counts no reference (libfdb_c throws first) */
    if (f->kind != kind)
        return CFDB_ERR_INTERNAL_ERROR;
    pthread_mutex_lock(&f->mu);
    int rc = atomic_load_explicit(&f->released, memory_order_relaxed) ? CFDB_ERR_FUTURE_RELEASED : 0;
    if (!rc)
        f->value_refs++;
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void cfdb_future_release_value(cfdb_future *f)
{
    /* Only the count and the flag change: the result's bytes stay until the future is
     * destroyed, so a getter that read them just before needs no lock while it copies. */
    pthread_mutex_lock(&f->mu);
    if (--f->value_refs == 0) {
        if (cfdb_future_is_ready(f) && !f->error)
            atomic_store_explicit(&f->released, true, memory_order_release);
        f->value_refs = 0;
    }
    pthread_mutex_unlock(&f->mu);
}
