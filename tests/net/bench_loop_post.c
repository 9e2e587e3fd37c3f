/* Micro-benchmark: what cfdb_loop_post_task costs, with and without a wakeup.
 * Posts cycle through a ring of embedded task nodes (RING per producer); a post
 * that finds its node still queued is coalesced and not counted.
 * Not a test; run by hand: ./bench_loop_post [iterations] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "event_loop.h"

static atomic_long tasks_done;
static atomic_bool spin_loop_running;

#define RING 4096

static void count(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&tasks_done, 1, memory_order_relaxed);
}

typedef struct ring {
    cfdb_task nodes[RING];
    long next;
    long accepted; /* posts that queued their node */
} ring;

static ring *ring_new(void)
{
    ring *r = calloc(1, sizeof *r);
    if (!r)
        abort();
    for (int i = 0; i < RING; i++)
        cfdb_task_init(&r->nodes[i], count, NULL);
    return r;
}

static void ring_post(ring *r, cfdb_loop *loop)
{
    if (cfdb_loop_post_task(loop, &r->nodes[r->next++ % RING]))
        r->accepted++;
}

static void print_stats(const char *name, cfdb_loop *loop, long posts, uint64_t ns)
{
    cfdb_loop_stats s;
    cfdb_loop_get_stats(loop, &s);
    printf("%-44s %8.1f ns/post   eventfd writes/post %.4f   loop waits/post %.4f\n", name,
           (double)ns / (double)posts, (double)s.wakeup_writes / (double)posts,
           (double)s.waits / (double)posts);
}

/* 1. Loop thread posting to itself: lock, append, unlock, flag check. */
static void bench_same_thread(long n)
{
    cfdb_loop *loop = cfdb_loop_create();
    ring *r = ring_new();
    atomic_store(&tasks_done, 0);
    uint64_t start = cfdb_monotonic_ns();
    for (long i = 0; i < n; i += 1000) {
        for (int k = 0; k < 1000; k++)
            ring_post(r, loop);
        cfdb_loop_run_once(loop, 0);
    }
    uint64_t ns = cfdb_monotonic_ns() - start;
    print_stats("same thread (post + run, batches of 1000)", loop, n, ns);
    cfdb_loop_destroy(loop);
    free(r);
}

/* 2. Another thread posts while the loop spins with run_once(0): the loop
 *    never announces a wait, so no post should write the eventfd. */
static void *spin(void *arg)
{
    cfdb_loop *loop = arg;
    while (atomic_load_explicit(&spin_loop_running, memory_order_relaxed))
        cfdb_loop_run_once(loop, 0);
    cfdb_loop_run_once(loop, 0);
    return NULL;
}

static void bench_busy_loop(long n)
{
    cfdb_loop *loop = cfdb_loop_create();
    ring *r = ring_new();
    atomic_store(&tasks_done, 0);
    atomic_store(&spin_loop_running, true);
    pthread_t t;
    pthread_create(&t, NULL, spin, loop);
    uint64_t start = cfdb_monotonic_ns();
    for (long i = 0; i < n; i++)
        ring_post(r, loop);
    uint64_t ns = cfdb_monotonic_ns() - start;
    atomic_store(&spin_loop_running, false);
    pthread_join(t, NULL);
    print_stats("other thread -> busy loop (producer side)", loop, n, ns);
    cfdb_loop_destroy(loop);
    free(r);
}

/* 3. Streaming into a loop that blocks when idle (cfdb_loop_run). */
static void *run(void *arg)
{
    cfdb_loop_run(arg);
    return NULL;
}

static void bench_streaming(long n, int producers);

typedef struct producer_arg {
    cfdb_loop *loop;
    long n;
    ring *r;
} producer_arg;

static void *produce(void *arg)
{
    producer_arg *p = arg;
    for (long i = 0; i < p->n; i++)
        ring_post(p->r, p->loop);
    return NULL;
}

static void bench_streaming(long n, int producers)
{
    cfdb_loop *loop = cfdb_loop_create();
    atomic_store(&tasks_done, 0);
    pthread_t loop_thread, threads[8];
    pthread_create(&loop_thread, NULL, run, loop);
    producer_arg args[8];
    uint64_t start = cfdb_monotonic_ns();
    for (int i = 0; i < producers; i++) {
        args[i] = (producer_arg){ loop, n / producers, ring_new() };
        pthread_create(&threads[i], NULL, produce, &args[i]);
    }
    long accepted = 0;
    for (int i = 0; i < producers; i++) {
        pthread_join(threads[i], NULL);
        accepted += args[i].r->accepted;
    }
    while (atomic_load(&tasks_done) < accepted)
        ;
    uint64_t ns = cfdb_monotonic_ns() - start;
    cfdb_loop_stop(loop);
    pthread_join(loop_thread, NULL);
    char name[64];
    snprintf(name, sizeof name, "%d producer(s) -> blocking loop (wall/post)", producers);
    print_stats(name, loop, (n / producers) * producers, ns);
    cfdb_loop_destroy(loop);
    for (int i = 0; i < producers; i++)
        free(args[i].r);
}

/* 4. Ping-pong: post, wait for the task to run, repeat. The loop is asleep
 *    every time, so this is the full wakeup round trip. */
static void bench_ping_pong(long n)
{
    cfdb_loop *loop = cfdb_loop_create();
    atomic_store(&tasks_done, 0);
    pthread_t loop_thread;
    pthread_create(&loop_thread, NULL, run, loop);
    uint64_t round_trip = 0, in_post = 0;
    cfdb_task node;
    cfdb_task_init(&node, count, NULL);
    for (long i = 0; i < n; i++) {
        uint64_t t0 = cfdb_monotonic_ns();
        cfdb_loop_post_task(loop, &node); /* idle: the previous run took it off the queue */
        uint64_t t1 = cfdb_monotonic_ns();
        while (atomic_load_explicit(&tasks_done, memory_order_acquire) != i + 1)
            ;
        in_post += t1 - t0;
        round_trip += cfdb_monotonic_ns() - t0;
        /* Let the loop go back to sleep so every post must wake it. */
        cfdb_loop_stats s;
        do
            cfdb_loop_get_stats(loop, &s);
        while (s.waits < (uint64_t)i + 2);
    }
    cfdb_loop_stop(loop);
    pthread_join(loop_thread, NULL);
    print_stats("post to a sleeping loop (caller's cost)", loop, n, in_post);
    print_stats("post until task ran on sleeping loop", loop, n, round_trip);
    cfdb_loop_destroy(loop);
}

/* Reference: one bare eventfd write, the syscall a wakeup costs. */
static void bench_eventfd_write(long n)
{
    int fd = eventfd(0, EFD_NONBLOCK);
    uint64_t one = 1, drained;
    uint64_t start = cfdb_monotonic_ns();
    for (long i = 0; i < n; i++)
        if (write(fd, &one, sizeof one) != sizeof one)
            abort();
    uint64_t ns = cfdb_monotonic_ns() - start;
    if (read(fd, &drained, sizeof drained) != sizeof drained)
        abort();
    close(fd);
    printf("%-44s %8.1f ns/write\n", "reference: bare eventfd write", (double)ns / (double)n);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    bench_eventfd_write(n / 10);
    bench_same_thread(n);
    bench_busy_loop(n);
    bench_streaming(n, 1);
    bench_streaming(n, 4);
    bench_ping_pong(n / 20);
    return 0;
}
