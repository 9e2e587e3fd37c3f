/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: an LD_PRELOAD library that counts heap allocations.
 *
 * The runner preloads it into every worker process, so whatever the arm
 * allocates through the C heap (malloc, calloc, realloc, the aligned
 * allocators, operator new on glibc) is counted: number of allocation calls
 * and bytes requested. It forwards to glibc's __libc_* entry points, which
 * avoids the dlsym(RTLD_NEXT) bootstrap problem. Counters are per thread
 * (single writer, relaxed atomics) and summed on demand, so counting adds no
 * shared cache-line traffic to the arm being measured.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define EXPORT __attribute__((visibility("default")))
#define SLOTS 4096

typedef struct slot {
    _Atomic uint64_t count, bytes;
    char pad[64 - 2 * sizeof(uint64_t)];
} slot;

static slot slots[SLOTS];
static atomic_int next_slot;
static slot overflow; /* shared, only when more than SLOTS threads ever ran */
static _Atomic uint64_t overflow_count, overflow_bytes;
static __thread slot *my_slot __attribute__((tls_model("initial-exec")));

static inline void count(size_t n)
{
    slot *s = my_slot;
    if (!s) {
        int i = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);
        s = i < SLOTS ? &slots[i] : &overflow;
        my_slot = s;
    }
    if (s == &overflow) {
        atomic_fetch_add_explicit(&overflow_count, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&overflow_bytes, n, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&s->count, atomic_load_explicit(&s->count, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&s->bytes, atomic_load_explicit(&s->bytes, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* The worker finds this with dlsym(RTLD_DEFAULT, ...). */
EXPORT void cfdb_bench_malloc_stats(uint64_t *allocations, uint64_t *bytes);
EXPORT void cfdb_bench_malloc_stats(uint64_t *allocations, uint64_t *bytes)
{
    uint64_t c = atomic_load_explicit(&overflow_count, memory_order_relaxed);
    uint64_t b = atomic_load_explicit(&overflow_bytes, memory_order_relaxed);
    int n = atomic_load_explicit(&next_slot, memory_order_relaxed);
    if (n > SLOTS)
        n = SLOTS;
    for (int i = 0; i < n; i++) {
        c += atomic_load_explicit(&slots[i].count, memory_order_relaxed);
        b += atomic_load_explicit(&slots[i].bytes, memory_order_relaxed);
    }
    *allocations = c;
    *bytes = b;
}

EXPORT void *malloc(size_t n);
EXPORT void *calloc(size_t a, size_t b);
EXPORT void *realloc(void *p, size_t n);
EXPORT void free(void *p);
EXPORT void *memalign(size_t al, size_t n);
EXPORT void *aligned_alloc(size_t al, size_t n);
EXPORT int posix_memalign(void **out, size_t al, size_t n);
EXPORT void *valloc(size_t n);
EXPORT void *pvalloc(size_t n);

void *malloc(size_t n)
{
    count(n);
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    count(a * b);
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    count(n);
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}

void *memalign(size_t al, size_t n)
{
    count(n);
    return __libc_memalign(al, n);
}

void *aligned_alloc(size_t al, size_t n)
{
    count(n);
    return __libc_memalign(al, n);
}

int posix_memalign(void **out, size_t al, size_t n)
{
    if (al < sizeof(void *) || (al & (al - 1)))
        return EINVAL;
    count(n);
    void *p = __libc_memalign(al, n);
    if (!p && n)
        return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t n)
{
    count(n);
    return __libc_memalign(4096, n);
}

void *pvalloc(size_t n)
{
    count(n);
    return __libc_memalign(4096, (n + 4095) & ~(size_t)4095);
}
