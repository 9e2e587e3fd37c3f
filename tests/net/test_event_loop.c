/* Event loop: timers, fd readiness, cross-thread posting and stopping. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "error_codes.h"
#include "event_loop.h"

#define MS 1000000ull

/* Runs iterations until *done is true; fails instead of hanging. */
static void run_until(cfdb_loop *loop, const atomic_bool *done)
{
    uint64_t give_up = cfdb_monotonic_ns() + 3000 * MS;
    while (!atomic_load(done)) {
        cfdb_loop_run_once(loop, 100 * MS);
        assert_int_equal(cfdb_loop_wait_error(loop), 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
}

/* ---- timers ------------------------------------------------------------ */

typedef struct fired_log {
    int order[2048];
    int count;
} fired_log;

typedef struct test_timer {
    cfdb_timer timer;
    int id;
    fired_log *log;
} test_timer;

static void record_fire(cfdb_loop *loop, cfdb_timer *timer, void *arg)
{
    test_timer *t = arg;
    assert_ptr_equal(&t->timer, timer);
    assert_false(cfdb_timer_is_armed(timer));
    t->log->order[t->log->count++] = t->id;
}

/* Deadlines armed out of order, some equal, some a few ms ahead. */
static void test_timers_fire_in_deadline_then_arming_order(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    assert_non_null(loop);
    fired_log log = { 0 };
    uint64_t base = cfdb_monotonic_ns();
    /* id -> deadline offset; equal offsets must keep arming order. */
    static const struct { int id; uint64_t offset; } plan[] = {
        { 5, 3 * MS }, { 2, 1 }, { 0, 0 }, { 3, 1 }, { 4, 2 * MS }, { 1, 0 }, { 6, 3 * MS },
    };
    test_timer timers[7];
    for (int i = 0; i < 7; i++) {
        timers[i] = (test_timer){ .id = plan[i].id, .log = &log };
        cfdb_timer_init(&timers[i].timer, record_fire, &timers[i]);
        cfdb_loop_timer_add_at(loop, &timers[i].timer, base + plan[i].offset);
        assert_true(cfdb_timer_is_armed(&timers[i].timer));
    }
    uint64_t give_up = base + 2000 * MS;
    while (log.count < 7 && cfdb_monotonic_ns() < give_up) {
        cfdb_loop_run_once(loop, CFDB_LOOP_WAIT_FOREVER);
        assert_int_equal(cfdb_loop_wait_error(loop), 0);
    }
    assert_int_equal(log.count, 7);
    for (int i = 0; i < 7; i++)
        assert_int_equal(log.order[i], i);
    /* Nothing fires early: the last timer waited its 3 ms. */
    assert_true(cfdb_monotonic_ns() >= base + 3 * MS);
    cfdb_loop_destroy(loop);
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Heap stress: 1000 timers, re-arm some, cancel some, check exact order. */
static void test_timer_heap_order_with_cancel_and_rearm(void **state)
{
    enum { N = 1000 };
    cfdb_loop *loop = cfdb_loop_create();
    fired_log *log = calloc(1, sizeof *log);
    test_timer *timers = calloc(N, sizeof *timers);
    uint64_t deadline[N];
    bool cancelled[N] = { false };
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    uint64_t base = cfdb_monotonic_ns() - 10000000;   /* all already due */
    for (int i = 0; i < N; i++) {
        timers[i] = (test_timer){ .id = i, .log = log };
        cfdb_timer_init(&timers[i].timer, record_fire, &timers[i]);
        deadline[i] = base + next_random(&rng) % 5000;
        cfdb_loop_timer_add_at(loop, &timers[i].timer, deadline[i]);
    }
    for (int i = 0; i < N; i += 7) {   /* re-arm: moves within the heap */
        deadline[i] = base + next_random(&rng) % 5000;
        cfdb_loop_timer_add_at(loop, &timers[i].timer, deadline[i]);
    }
    int live = N;
    for (int i = 0; i < N; i += 3) {
        assert_true(cfdb_loop_timer_cancel(loop, &timers[i].timer));
        assert_false(cfdb_loop_timer_cancel(loop, &timers[i].timer));
        assert_false(cfdb_timer_is_armed(&timers[i].timer));
        cancelled[i] = true;
        live--;
    }
    assert_int_equal(cfdb_loop_run_once(loop, 0), live);
    assert_int_equal(log->count, live);
    for (int k = 0; k < log->count; k++)
        assert_false(cancelled[log->order[k]]);
    for (int k = 1; k < log->count; k++) {
        int a = log->order[k - 1], b = log->order[k];
        assert_true(deadline[a] < deadline[b] ||
                    (deadline[a] == deadline[b] && timers[a].timer.seq < timers[b].timer.seq));
    }
    assert_int_equal(cfdb_loop_run_once(loop, 0), 0);
    cfdb_loop_destroy(loop);
    free(timers);
    free(log);
}

static cfdb_timer *victim;
static int victim_fired;

static void cancel_victim(cfdb_loop *loop, cfdb_timer *timer, void *arg)
{
    assert_true(cfdb_loop_timer_cancel(loop, victim));
}

static void count_victim(cfdb_loop *loop, cfdb_timer *timer, void *arg)
{
    victim_fired++;
}

static void test_timer_cancelled_by_earlier_timer_does_not_fire(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    cfdb_timer first, second;
    cfdb_timer_init(&first, cancel_victim, NULL);
    cfdb_timer_init(&second, count_victim, NULL);
    victim = &second;
    victim_fired = 0;
    uint64_t now = cfdb_monotonic_ns();
    cfdb_loop_timer_add_at(loop, &second, now);
    cfdb_loop_timer_add_at(loop, &first, now - 1);
    assert_int_equal(cfdb_loop_run_once(loop, 0), 1);
    assert_int_equal(victim_fired, 0);
    cfdb_loop_destroy(loop);
}

/* A timer re-arming itself for "now" must not monopolise one iteration. */
static void rearm_now(cfdb_loop *loop, cfdb_timer *timer, void *arg)
{
    (*(int *)arg)++;
    cfdb_loop_timer_add_at(loop, timer, 0);
}

static void test_self_rearming_timer_runs_once_per_iteration(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    int count = 0;
    cfdb_timer t;
    cfdb_timer_init(&t, rearm_now, &count);
    cfdb_loop_timer_add_in(loop, &t, 0);
    for (int i = 1; i <= 3; i++) {
        assert_int_equal(cfdb_loop_run_once(loop, CFDB_LOOP_WAIT_FOREVER), 1);
        assert_int_equal(count, i);
    }
    assert_true(cfdb_loop_timer_cancel(loop, &t));
    cfdb_loop_destroy(loop);
}

/* ---- file descriptors -------------------------------------------------- */

typedef struct fd_probe {
    int calls;
    unsigned last_events;
    int last_fd;
} fd_probe;

static void probe_fd(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    fd_probe *p = arg;
    p->calls++;
    p->last_events = events;
    p->last_fd = fd;
}

static void test_fd_readiness_on_socketpair(void **state)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    cfdb_loop *loop = cfdb_loop_create();
    fd_probe p = { 0 };

    assert_int_equal(cfdb_loop_add_fd(loop, sv[0], CFDB_EV_READ, probe_fd, &p), 0);
    assert_int_equal(cfdb_loop_add_fd(loop, sv[0], CFDB_EV_READ, probe_fd, &p), CFDB_ERR_PLATFORM_ERROR);
    assert_int_equal(cfdb_loop_run_once(loop, 0), 0);   /* nothing to read yet */

    assert_int_equal(write(sv[1], "x", 1), 1);
    assert_int_equal(cfdb_loop_run_once(loop, 1000 * MS), 1);
    assert_int_equal(p.calls, 1);
    assert_int_equal(p.last_fd, sv[0]);
    assert_int_equal(p.last_events, CFDB_EV_READ);
    /* Level-triggered: still readable until drained. */
    assert_int_equal(cfdb_loop_run_once(loop, 0), 1);
    char c;
    assert_int_equal(read(sv[0], &c, 1), 1);
    assert_int_equal(cfdb_loop_run_once(loop, 0), 0);

    /* An idle socket is writable at once. */
    assert_int_equal(cfdb_loop_modify_fd(loop, sv[0], CFDB_EV_READ | CFDB_EV_WRITE), 0);
    assert_int_equal(cfdb_loop_run_once(loop, 1000 * MS), 1);
    assert_int_equal(p.last_events, CFDB_EV_WRITE);

    /* Interest 0: registered but silent. */
    assert_int_equal(cfdb_loop_modify_fd(loop, sv[0], 0), 0);
    assert_int_equal(write(sv[1], "y", 1), 1);
    assert_int_equal(cfdb_loop_run_once(loop, 0), 0);

    assert_int_equal(cfdb_loop_modify_fd(loop, sv[0], CFDB_EV_READ), 0);
    assert_int_equal(cfdb_loop_remove_fd(loop, sv[0]), 0);
    assert_int_equal(cfdb_loop_remove_fd(loop, sv[0]), CFDB_ERR_FILE_NOT_FOUND);
    assert_int_equal(cfdb_loop_modify_fd(loop, sv[0], CFDB_EV_READ), CFDB_ERR_FILE_NOT_FOUND);
    assert_int_equal(cfdb_loop_run_once(loop, 0), 0);
    assert_int_equal(p.calls, 3);

    /* Peer hang-up reads as readable (read returns 0). */
    assert_int_equal(cfdb_loop_add_fd(loop, sv[0], CFDB_EV_READ, probe_fd, &p), 0);
    close(sv[1]);
    assert_int_equal(cfdb_loop_run_once(loop, 1000 * MS), 1);
    assert_true(p.last_events & CFDB_EV_READ);

    cfdb_loop_remove_fd(loop, sv[0]);
    close(sv[0]);
    cfdb_loop_destroy(loop);
}

/* Two ready fds whose callbacks each remove and close the other; the freed
 * number is reused at once for a fresh, never-ready registration. Exactly one
 * callback may run and the stale event must not reach the newcomer. */
typedef struct rival {
    int fd;
    int peer;
    struct rival *other;
    int calls;
} rival;

static fd_probe newcomer;
static int reuse_pipe[2];

static void remove_rival(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    rival *r = arg;
    r->calls++;
    assert_int_equal(cfdb_loop_remove_fd(loop, r->other->fd), 0);
    close(r->other->fd);
    int reused = dup(reuse_pipe[1]);   /* lowest free number: likely r->other->fd */
    assert_true(reused >= 0);
    assert_int_equal(cfdb_loop_add_fd(loop, reused, CFDB_EV_READ, probe_fd, &newcomer), 0);
    r->other->fd = reused;
}

static void test_removing_fd_inside_callback_drops_its_pending_event(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    int a[2], b[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    assert_int_equal(pipe(reuse_pipe), 0);
    memset(&newcomer, 0, sizeof newcomer);
    rival ra = { .fd = a[0], .peer = a[1] }, rb = { .fd = b[0], .peer = b[1] };
    ra.other = &rb;
    rb.other = &ra;
    assert_int_equal(cfdb_loop_add_fd(loop, ra.fd, CFDB_EV_READ, remove_rival, &ra), 0);
    assert_int_equal(cfdb_loop_add_fd(loop, rb.fd, CFDB_EV_READ, remove_rival, &rb), 0);
    assert_int_equal(write(a[1], "a", 1), 1);
    assert_int_equal(write(b[1], "b", 1), 1);
    /* Both are ready before the wait, so one epoll batch holds both. */
    assert_int_equal(cfdb_loop_run_once(loop, 1000 * MS), 1);
    assert_int_equal(ra.calls + rb.calls, 1);
    assert_int_equal(newcomer.calls, 0);

    rival *survivor = ra.calls ? &ra : &rb;
    cfdb_loop_remove_fd(loop, survivor->fd);
    cfdb_loop_remove_fd(loop, survivor->other->fd);
    close(ra.fd);
    close(rb.fd);
    close(a[1]);
    close(b[1]);
    close(reuse_pipe[0]);
    close(reuse_pipe[1]);
    cfdb_loop_destroy(loop);
}

/* ---- posting from other threads ---------------------------------------- */

enum { PRODUCERS = 4, TASKS_PER_PRODUCER = 100000 };

typedef struct post_state {
    cfdb_loop *loop;
    cfdb_task *tasks;                 /* one node per task */
    uint8_t *hits;                    /* one per task: must end at exactly 1 */
    int64_t last_seen[PRODUCERS];     /* per-producer FIFO check */
    atomic_int done;
    bool out_of_order;
} post_state;

static post_state posting;

static void count_task(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    int producer = (int)(id / TASKS_PER_PRODUCER);
    posting.hits[id]++;
    if ((int64_t)id <= posting.last_seen[producer])
        posting.out_of_order = true;
    posting.last_seen[producer] = (int64_t)id;
    atomic_fetch_add_explicit(&posting.done, 1, memory_order_relaxed);
}

static void *produce(void *arg)
{
    uintptr_t first = (uintptr_t)arg * TASKS_PER_PRODUCER;
    for (uintptr_t i = 0; i < TASKS_PER_PRODUCER; i++)
        if (!cfdb_loop_post_task(posting.loop, &posting.tasks[first + i]))
            abort(); /* a fresh node is always queued */
    return NULL;
}

static void test_posts_from_four_threads_each_run_exactly_once(void **state)
{
    memset(&posting, 0, sizeof posting);
    posting.loop = cfdb_loop_create();
    posting.hits = calloc(PRODUCERS * TASKS_PER_PRODUCER, 1);
    posting.tasks = calloc(PRODUCERS * TASKS_PER_PRODUCER, sizeof *posting.tasks);
    assert_non_null(posting.hits);
    assert_non_null(posting.tasks);
    for (uintptr_t i = 0; i < PRODUCERS * TASKS_PER_PRODUCER; i++)
        cfdb_task_init(&posting.tasks[i], count_task, (void *)i);
    for (int i = 0; i < PRODUCERS; i++)
        posting.last_seen[i] = -1;
    pthread_t threads[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, produce, (void *)i), 0);
    uint64_t give_up = cfdb_monotonic_ns() + 4000 * MS;
    while (atomic_load(&posting.done) < PRODUCERS * TASKS_PER_PRODUCER) {
        cfdb_loop_run_once(posting.loop, CFDB_LOOP_WAIT_FOREVER);
        assert_int_equal(cfdb_loop_wait_error(posting.loop), 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(cfdb_loop_run_once(posting.loop, 0), 0);
    for (size_t i = 0; i < PRODUCERS * TASKS_PER_PRODUCER; i++)
        assert_int_equal(posting.hits[i], 1);
    assert_false(posting.out_of_order);
    cfdb_loop_stats stats;
    cfdb_loop_get_stats(posting.loop, &stats);
    assert_int_equal(stats.tasks_run, PRODUCERS * TASKS_PER_PRODUCER);
    /* At most one eventfd write per blocking wait. */
    assert_true(stats.wakeup_writes <= stats.waits);
    free(posting.hits);
    free(posting.tasks);
    cfdb_loop_destroy(posting.loop);
}

/* Ping-pong: the loop is asleep for every post, so each must wake it. */
typedef struct ping {
    cfdb_loop *loop;
    cfdb_task task;
    atomic_int acked;
} ping;

static void ack(void *arg)
{
    ping *p = arg;
    assert_true(cfdb_loop_on_loop_thread(p->loop));
    atomic_fetch_add(&p->acked, 1);
}

static void *run_loop_thread(void *arg)
{
    return (void *)(intptr_t)cfdb_loop_run(arg);
}

static void test_post_wakes_a_sleeping_loop(void **state)
{
    enum { ROUNDS = 2000 };
    ping p = { .loop = cfdb_loop_create() };
    cfdb_task_init(&p.task, ack, &p);
    pthread_t loop_thread;
    assert_int_equal(pthread_create(&loop_thread, NULL, run_loop_thread, p.loop), 0);
    assert_false(cfdb_loop_on_loop_thread(p.loop));
    uint64_t give_up = cfdb_monotonic_ns() + 3000 * MS;
    for (int i = 0; i < ROUNDS; i++) {
        assert_true(cfdb_loop_post_task(p.loop, &p.task)); /* its last run has begun */
        while (atomic_load(&p.acked) != i + 1)
            assert_true(cfdb_monotonic_ns() < give_up);
    }
    cfdb_loop_stop(p.loop);
    void *rc;
    pthread_join(loop_thread, &rc);
    assert_int_equal((intptr_t)rc, 0);
    cfdb_loop_stats stats;
    cfdb_loop_get_stats(p.loop, &stats);
    assert_true(stats.wakeup_writes <= ROUNDS + 1);
    cfdb_loop_destroy(p.loop);
}

/* Posting from the loop thread itself never touches the eventfd. */
typedef struct chain {
    cfdb_loop *loop;
    cfdb_task task;
    int remaining;
    bool requeue_failed;
} chain;

static void repost(void *arg)
{
    chain *c = arg;
    if (--c->remaining > 0 && !cfdb_loop_post_task(c->loop, &c->task))
        c->requeue_failed = true; /* a node is off the queue once its fn runs */
}

static void test_post_from_loop_thread_makes_no_syscall(void **state)
{
    chain c = { .loop = cfdb_loop_create(), .remaining = 100 };
    cfdb_task_init(&c.task, repost, &c);
    assert_true(cfdb_loop_post_task(c.loop, &c.task));
    uint64_t give_up = cfdb_monotonic_ns() + 2000 * MS;
    while (c.remaining > 0) {
        /* Each iteration runs only what was queued before it started. */
        assert_int_equal(cfdb_loop_run_once(c.loop, CFDB_LOOP_WAIT_FOREVER), 1);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    cfdb_loop_stats stats;
    cfdb_loop_get_stats(c.loop, &stats);
    assert_int_equal(stats.wakeup_writes, 0);
    assert_int_equal(stats.tasks_run, 100);
    assert_false(c.requeue_failed);
    cfdb_loop_destroy(c.loop);
}

/* ---- stopping ---------------------------------------------------------- */

static void *stop_after_delay(void *arg)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    cfdb_loop_stop(arg);
    return NULL;
}

static void test_stop_from_another_thread(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    pthread_t stopper;
    uint64_t start = cfdb_monotonic_ns();
    assert_int_equal(pthread_create(&stopper, NULL, stop_after_delay, loop), 0);
    assert_int_equal(cfdb_loop_run(loop), 0);   /* nothing else to wake it */
    assert_true(cfdb_monotonic_ns() - start < 2000 * MS);
    pthread_join(stopper, NULL);
    cfdb_loop_destroy(loop);
}

static void stop_from_timer(cfdb_loop *loop, cfdb_timer *timer, void *arg)
{
    cfdb_loop_stop(loop);
}

static void test_stop_before_run_and_from_callback(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    cfdb_loop_stop(loop);
    assert_int_equal(cfdb_loop_run(loop), 0);   /* returns at once */

    cfdb_timer t;
    cfdb_timer_init(&t, stop_from_timer, NULL);
    cfdb_loop_timer_add_in(loop, &t, 1 * MS);
    assert_int_equal(cfdb_loop_run(loop), 0);
    assert_false(cfdb_timer_is_armed(&t));

    /* The stop was consumed: the next run waits for the timer's stop. */
    uint64_t start = cfdb_monotonic_ns();
    cfdb_loop_timer_add_in(loop, &t, 2 * MS);
    assert_int_equal(cfdb_loop_run(loop), 0);
    assert_false(cfdb_timer_is_armed(&t));
    assert_true(cfdb_monotonic_ns() - start >= 2 * MS);
    cfdb_loop_destroy(loop);
}

static void set_flag(void *arg)
{
    atomic_store((atomic_bool *)arg, true);
}

static void test_run_until_helper_with_post(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    atomic_bool done = false;
    cfdb_task t;
    cfdb_task_init(&t, set_flag, &done);
    cfdb_loop_post_task(loop, &t);
    run_until(loop, &done);
    cfdb_loop_destroy(loop);
}

static void spin_task(void *arg)
{
    uint64_t until = cfdb_monotonic_ns() + *(uint64_t *)arg;
    while (cfdb_monotonic_ns() < until)
        ;
}

static void tick(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)arg;
    cfdb_loop_timer_add_in(loop, t, 50000000ull);
}

/* Busyness: a 0.35 s burst of work in a window shows (burstiness (0.35-0.1)/0.4 ~ 0.6); a
 * window of near idleness (a timer every 50 ms) reads near 0. */
static void test_busyness_windows(void **state)
{
    (void)state;
    cfdb_loop *loop = cfdb_loop_create();
    assert_float_equal(cfdb_loop_busyness(loop), 0.0, 0.0);
    cfdb_timer t;
    cfdb_timer_init(&t, tick, NULL);
    cfdb_loop_timer_add_in(loop, &t, 0);
    uint64_t spin = 350000000ull;
    cfdb_loop_run_once(loop, 0); /* opens the first window */
    cfdb_task spin_node;
    cfdb_task_init(&spin_node, spin_task, &spin);
    assert_true(cfdb_loop_post_task(loop, &spin_node));
    uint64_t end = cfdb_monotonic_ns() + 1200000000ull;
    while (cfdb_monotonic_ns() < end)
        cfdb_loop_run_once(loop, 100000000ull);
    double busy = cfdb_loop_busyness(loop);
    assert_true(busy > 0.4 && busy <= 1.0);
    end = cfdb_monotonic_ns() + 2200000000ull;
    while (cfdb_monotonic_ns() < end)
        cfdb_loop_run_once(loop, 100000000ull);
    assert_true(cfdb_loop_busyness(loop) < 0.2);
    cfdb_loop_timer_cancel(loop, &t);
    cfdb_loop_destroy(loop);
}

/* ---- intrusive task nodes ---------------------------------------------- */

/* Each producer owns NODES embedded nodes and keeps re-posting each one as soon as the loop
 * has run it (a node is reusable once its fn starts): a producer waits for its node's
 * previous run, so each run is counted once and every producer's posts arrive in order. */
enum { NODE_PRODUCERS = 4, NODES = 8, ROUNDS_PER_NODE = 4000 };

typedef struct node_item {
    cfdb_task task;
    int producer;
    atomic_int posted; /* times posted */
    int ran;            /* times run (loop thread) */
    atomic_int ran_pub;
} node_item;

typedef struct node_state {
    cfdb_loop *loop;
    node_item items[NODE_PRODUCERS][NODES];
    int64_t last_seq[NODE_PRODUCERS];
    int64_t seq[NODE_PRODUCERS][NODES]; /* sequence number the producer gave the pending post */
    atomic_llong next_seq[NODE_PRODUCERS];
    atomic_int total;
    bool out_of_order;
} node_state;

static node_state nodes;

static void node_run(void *arg)
{
    node_item *it = arg;
    assert_true(cfdb_loop_on_loop_thread(nodes.loop));
    int p = it->producer;
    int64_t seq = nodes.seq[p][it - nodes.items[p]];
    if (seq <= nodes.last_seq[p])
        nodes.out_of_order = true;
    nodes.last_seq[p] = seq;
    it->ran++;
    atomic_store_explicit(&it->ran_pub, it->ran, memory_order_release);
    atomic_fetch_add_explicit(&nodes.total, 1, memory_order_relaxed);
}

static void *node_produce(void *arg)
{
    int p = (int)(intptr_t)arg;
    int64_t seq = 0;
    for (int round = 0; round < ROUNDS_PER_NODE; round++)
        for (int k = 0; k < NODES; k++) {
            node_item *it = &nodes.items[p][k];
            /* wait until the loop ran this node's previous post */
            while (atomic_load_explicit(&it->ran_pub, memory_order_acquire) != round)
                ;
            nodes.seq[p][k] = ++seq;
            atomic_fetch_add(&it->posted, 1);
            cfdb_loop_post_task(nodes.loop, &it->task);
        }
    return NULL;
}

static void test_task_nodes_from_four_threads_run_once_per_post_in_order(void **state)
{
    memset(&nodes, 0, sizeof nodes);
    nodes.loop = cfdb_loop_create();
    for (int p = 0; p < NODE_PRODUCERS; p++)
        for (int k = 0; k < NODES; k++) {
            nodes.items[p][k].producer = p;
            cfdb_task_init(&nodes.items[p][k].task, node_run, &nodes.items[p][k]);
        }
    pthread_t threads[NODE_PRODUCERS];
    for (intptr_t i = 0; i < NODE_PRODUCERS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, node_produce, (void *)i), 0);
    uint64_t give_up = cfdb_monotonic_ns() + 20000 * MS;
    while (atomic_load(&nodes.total) < NODE_PRODUCERS * NODES * ROUNDS_PER_NODE) {
        cfdb_loop_run_once(nodes.loop, 100 * MS);
        assert_int_equal(cfdb_loop_wait_error(nodes.loop), 0);
        assert_true(cfdb_monotonic_ns() < give_up);
    }
    for (int i = 0; i < NODE_PRODUCERS; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(cfdb_loop_run_once(nodes.loop, 0), 0);
    for (int p = 0; p < NODE_PRODUCERS; p++)
        for (int k = 0; k < NODES; k++) {
            assert_int_equal(nodes.items[p][k].ran, ROUNDS_PER_NODE);
            assert_int_equal(atomic_load(&nodes.items[p][k].posted), ROUNDS_PER_NODE);
        }
    assert_false(nodes.out_of_order);
    cfdb_loop_stats stats;
    cfdb_loop_get_stats(nodes.loop, &stats);
    assert_int_equal(stats.tasks_run, NODE_PRODUCERS * NODES * ROUNDS_PER_NODE);
    assert_true(stats.wakeup_writes <= stats.waits);
    cfdb_loop_destroy(nodes.loop);
}

static int coalesce_runs;

static void coalesce_run(void *arg)
{
    (void)arg;
    coalesce_runs++;
}

static void free_self(void *arg)
{
    free(arg); /* the node lives inside what fn frees */
    coalesce_runs++;
}

/* A node posted again while still queued runs once (the second post says so); once run it
 * may be posted again, and its fn may free the object that holds it. Distinct nodes run in
 * posting order. */
static void test_task_node_queued_once_reusable_after_run_and_fifo(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    cfdb_task t;
    cfdb_task_init(&t, coalesce_run, NULL);
    coalesce_runs = 0;
    assert_true(cfdb_loop_post_task(loop, &t));
    assert_false(cfdb_loop_post_task(loop, &t));
    assert_int_equal(cfdb_loop_run_once(loop, 0), 1);
    assert_int_equal(coalesce_runs, 1);
    assert_true(cfdb_loop_post_task(loop, &t));
    assert_int_equal(cfdb_loop_run_once(loop, 0), 1);
    assert_int_equal(coalesce_runs, 2);

    cfdb_task *owned = malloc(sizeof *owned);
    assert_non_null(owned);
    cfdb_task_init(owned, free_self, owned);
    cfdb_loop_post_task(loop, owned);
    assert_int_equal(cfdb_loop_run_once(loop, 0), 1);
    assert_int_equal(coalesce_runs, 3);

    /* distinct nodes keep posting order; a re-post of a queued node keeps its place */
    posting.hits = calloc(3 * TASKS_PER_PRODUCER, 1);
    for (int i = 0; i < PRODUCERS; i++)
        posting.last_seen[i] = -1;
    posting.out_of_order = false;
    atomic_store(&posting.done, 0);
    cfdb_task three[3];
    for (uintptr_t i = 0; i < 3; i++)
        cfdb_task_init(&three[i], count_task, (void *)i);
    assert_true(cfdb_loop_post_task(loop, &three[0]));
    assert_true(cfdb_loop_post_task(loop, &three[1]));
    assert_false(cfdb_loop_post_task(loop, &three[0]));
    assert_true(cfdb_loop_post_task(loop, &three[2]));
    assert_int_equal(cfdb_loop_run_once(loop, 0), 3);
    assert_false(posting.out_of_order);
    assert_int_equal(atomic_load(&posting.done), 3);
    free(posting.hits);
    cfdb_loop_destroy(loop);
}

/* ---- timers under churn ------------------------------------------------ */

enum { CHURN_TIMERS = 512, CHURN_STEPS = 20000 };

typedef struct churn_timer {
    cfdb_timer timer;
    bool armed_model;
    uint64_t deadline_model;
    uint64_t seq_model;
} churn_timer;

static churn_timer churn[CHURN_TIMERS];
static uint64_t churn_last_deadline, churn_last_seq;
static int churn_fired;
static bool churn_bad;

static void churn_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    churn_timer *c = arg;
    /* fires only when armed, in (deadline, arming order) order, never twice */
    if (!c->armed_model || t->armed)
        churn_bad = true;
    if (c->deadline_model < churn_last_deadline ||
        (c->deadline_model == churn_last_deadline && c->seq_model < churn_last_seq))
        churn_bad = true;
    churn_last_deadline = c->deadline_model;
    churn_last_seq = c->seq_model;
    c->armed_model = false;
    churn_fired++;
}

/* Random arm / re-arm / cancel of 512 timers against a model, deadlines in the past so that
 * every run fires everything due: the loop fires exactly the armed ones, in order. */
static void test_timers_order_and_cancel_under_churn(void **state)
{
    cfdb_loop *loop = cfdb_loop_create();
    uint64_t rng = 88172645463325252ull, seq = 0;
    for (int i = 0; i < CHURN_TIMERS; i++) {
        cfdb_timer_init(&churn[i].timer, churn_fire, &churn[i]);
        churn[i].armed_model = false;
    }
    churn_bad = false;
    int expected_fired = 0;
    churn_fired = 0;
    for (int step = 0; step < CHURN_STEPS; step++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        churn_timer *c = &churn[rng % CHURN_TIMERS];
        unsigned op = (unsigned)(rng >> 32) % 10;
        if (op < 6) {
            c->deadline_model = 1 + (rng >> 40) % 64; /* many equal deadlines */
            c->seq_model = ++seq;
            c->armed_model = true;
            cfdb_loop_timer_add_at(loop, &c->timer, c->deadline_model);
        } else if (op < 9) {
            assert_int_equal(cfdb_loop_timer_cancel(loop, &c->timer), c->armed_model);
            c->armed_model = false;
        } else {
            /* fire everything due so far (all deadlines are in the past) */
            for (int i = 0; i < CHURN_TIMERS; i++)
                expected_fired += churn[i].armed_model;
            churn_last_deadline = churn_last_seq = 0;
            cfdb_loop_run_once(loop, 0);
            for (int i = 0; i < CHURN_TIMERS; i++)
                assert_false(churn[i].armed_model || cfdb_timer_is_armed(&churn[i].timer));
            assert_int_equal(churn_fired, expected_fired);
        }
        assert_int_equal(cfdb_timer_is_armed(&c->timer), c->armed_model);
    }
    assert_false(churn_bad);
    cfdb_loop_destroy(loop);
    for (int i = 0; i < CHURN_TIMERS; i++)
        assert_false(cfdb_timer_is_armed(&churn[i].timer));
}

/* ---- iteration hook ---------------------------------------------------- */

typedef struct hook_log {
    char seq[64];
    int n;
} hook_log;

static void hook_record(void *arg, bool begin)
{
    hook_log *h = arg;
    if (h->n < 63)
        h->seq[h->n++] = begin ? '(' : ')';
}

static void task_record(void *arg)
{
    hook_log *h = arg;
    if (h->n < 63)
        h->seq[h->n++] = 't';
}

static void timer_record(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    hook_log *h = arg;
    if (h->n < 63)
        h->seq[h->n++] = 'm';
}

/* The hook brackets every iteration's callbacks: begin before the first, end after the last,
 * so work it holds back (the client's batched wake-ups) is done before the loop waits again. */
static void test_iteration_hook_brackets_callbacks(void **state)
{
    (void)state;
    cfdb_loop *loop = cfdb_loop_create();
    assert_non_null(loop);
    hook_log h = { .n = 0 };
    cfdb_loop_set_iteration_hook(loop, hook_record, &h);
    cfdb_task a, b;
    cfdb_task_init(&a, task_record, &h);
    cfdb_task_init(&b, task_record, &h);
    cfdb_timer t;
    cfdb_timer_init(&t, timer_record, &h);
    cfdb_loop_post_task(loop, &a);
    cfdb_loop_post_task(loop, &b);
    cfdb_loop_timer_add_in(loop, &t, 0);
    cfdb_loop_run_once(loop, 0);
    assert_int_equal(h.n, 5);
    assert_memory_equal(h.seq, "(mtt)", 5);
    cfdb_loop_run_once(loop, 0); /* an idle iteration is bracketed too */
    assert_int_equal(h.n, 7);
    assert_memory_equal(h.seq + 5, "()", 2);
    cfdb_loop_set_iteration_hook(loop, NULL, NULL);
    cfdb_loop_post_task(loop, &a);
    cfdb_loop_run_once(loop, 0);
    assert_int_equal(h.n, 8); /* removed: the task ran, no brackets */
    assert_int_equal(h.seq[7], 't');
    cfdb_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timers_fire_in_deadline_then_arming_order),
        cmocka_unit_test(test_timer_heap_order_with_cancel_and_rearm),
        cmocka_unit_test(test_timer_cancelled_by_earlier_timer_does_not_fire),
        cmocka_unit_test(test_self_rearming_timer_runs_once_per_iteration),
        cmocka_unit_test(test_fd_readiness_on_socketpair),
        cmocka_unit_test(test_removing_fd_inside_callback_drops_its_pending_event),
        cmocka_unit_test(test_posts_from_four_threads_each_run_exactly_once),
        cmocka_unit_test(test_post_wakes_a_sleeping_loop),
        cmocka_unit_test(test_post_from_loop_thread_makes_no_syscall),
        cmocka_unit_test(test_stop_from_another_thread),
        cmocka_unit_test(test_stop_before_run_and_from_callback),
        cmocka_unit_test(test_run_until_helper_with_post),
        cmocka_unit_test(test_busyness_windows),
        cmocka_unit_test(test_task_nodes_from_four_threads_run_once_per_post_in_order),
        cmocka_unit_test(test_task_node_queued_once_reusable_after_run_and_fifo),
        cmocka_unit_test(test_timers_order_and_cancel_under_churn),
        cmocka_unit_test(test_iteration_hook_brackets_callbacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
