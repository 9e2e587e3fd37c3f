/* Event loop: epoll for fds, an intrusive pairing heap for timers, an eventfd
 * plus a mutex-protected intrusive FIFO of task nodes posted from any thread.
 * See event_loop.h for the contract.
 *
 * Invariants: a timer is in the heap iff timer->armed; the heap's root is the
 * earliest (deadline, seq). A task node is in the queue iff task->queued; the
 * queue (head/tail) is only touched under queue_lock. Nothing on the post or
 * arm paths allocates: both link caller-owned nodes. */
#include "event_loop.h"

#include "error_codes.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define EVENT_BATCH 256
#define WAKE_TOKEN UINT64_MAX   /* epoll data of the eventfd; no fd slot has it */

typedef struct fd_slot {
    cfdb_fd_fn fn;             /* NULL when the slot is free */
    void *arg;
    unsigned events;           /* CFDB_EV_READ / CFDB_EV_WRITE interest */
    uint32_t generation;       /* bumped on remove so stale epoll events are dropped */
} fd_slot;


/* Counters written by the loop thread only: relaxed load+store, no lock prefix. */
#define BUMP(counter, n) \
    atomic_store_explicit(&(counter), atomic_load_explicit(&(counter), memory_order_relaxed) + (n), \
                          memory_order_relaxed)

struct cfdb_loop {
    int epoll_fd;
    int wake_fd;               /* eventfd, edge-triggered: written, never read */

    fd_slot *slots;            /* indexed by fd */
    size_t slot_count;

    cfdb_timer *heap;          /* pairing heap root on (deadline_ns, seq) */
    uint64_t next_timer_seq;
    uint64_t now_ns;

    /* Producers append nodes under the lock; the loop detaches the whole list
     * and runs it without the lock, so nobody waits on a task. */
    pthread_mutex_t queue_lock;
    cfdb_task *queue_head, *queue_tail;

    /* True only while the loop is about to block or blocked in epoll. A
     * producer that flips it to false owns the (single) eventfd write; a busy
     * loop leaves it false so posts cost no system call. */
    atomic_bool polling;
    atomic_bool stop_requested;
    bool have_epoll_pwait2;
    int wait_error;            /* FoundationDB code of the last failed wait, or 0 */

    struct epoll_event ready[EVENT_BATCH];
    int ready_count;

    _Atomic uint64_t stat_iterations, stat_waits, stat_wakeup_writes, stat_tasks_run;

    cfdb_loop_iteration_fn iteration_hook; /* around each iteration's callbacks, or NULL */
    void *iteration_arg;

    /* busyness over 1 s windows (see cfdb_loop_busyness) */
    uint64_t busy_window_start, busy_ns, stretch_ns, longest_stretch_ns;
    _Atomic double busyness;
};

static _Thread_local const cfdb_loop *current_loop;

uint64_t cfdb_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cfdb_loop_now_ns(const cfdb_loop *loop)
{
    return loop->now_ns;
}

/* ---- lifetime ---------------------------------------------------------- */

cfdb_loop *cfdb_loop_create(void)
{
    cfdb_loop *loop = calloc(1, sizeof *loop);
    if (!loop)
        return NULL;
    loop->epoll_fd = -1;
    loop->wake_fd = -1;
    if (pthread_mutex_init(&loop->queue_lock, NULL) != 0) {
        free(loop);
        errno = ENOMEM;
        return NULL;
    }
    loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epoll_fd < 0)
        goto fail;
    loop->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (loop->wake_fd < 0)
        goto fail;
    /* Edge-triggered: every write queues a fresh event, so the loop never
     * needs a read() to re-arm it. The counter cannot overflow in practice. */
    struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = WAKE_TOKEN };
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->wake_fd, &ev) < 0)
        goto fail;
    loop->have_epoll_pwait2 = true;
    loop->now_ns = cfdb_monotonic_ns();
    return loop;
fail:;
    int saved = errno;
    cfdb_loop_destroy(loop);
    errno = saved;
    return NULL;
}

void cfdb_loop_destroy(cfdb_loop *loop)
{
    if (!loop)
        return;
    if (loop->wake_fd >= 0)
        close(loop->wake_fd);
    if (loop->epoll_fd >= 0)
        close(loop->epoll_fd);
    /* Armed timers belong to their owners; just mark them idle. */
    while (loop->heap)
        cfdb_loop_timer_cancel(loop, loop->heap);
    /* Queued caller-owned nodes are dropped (see the header): mark them idle. */
    for (cfdb_task *t = loop->queue_head; t; t = t->next)
        atomic_store_explicit(&t->queued, false, memory_order_relaxed);
    free(loop->slots);
    pthread_mutex_destroy(&loop->queue_lock);
    free(loop);
}

/* ---- file descriptors -------------------------------------------------- */

static uint32_t to_epoll_events(unsigned events)
{
    return ((events & CFDB_EV_READ) ? EPOLLIN : 0u) | ((events & CFDB_EV_WRITE) ? EPOLLOUT : 0u);
}

static fd_slot *registered_slot(cfdb_loop *loop, int fd)
{
    if (fd < 0 || (size_t)fd >= loop->slot_count || !loop->slots[fd].fn)
        return NULL;
    return &loop->slots[fd];
}

static int grow_slots(cfdb_loop *loop, int fd)
{
    size_t want = (size_t)fd + 1;
    if (want <= loop->slot_count)
        return 0;
    size_t count = loop->slot_count ? loop->slot_count : 64;
    while (count < want)
        count *= 2;
    fd_slot *slots = realloc(loop->slots, count * sizeof *slots);
    if (!slots)
        return -ENOMEM;
    memset(slots + loop->slot_count, 0, (count - loop->slot_count) * sizeof *slots);
    loop->slots = slots;
    loop->slot_count = count;
    return 0;
}

static int add_fd(cfdb_loop *loop, int fd, unsigned events, cfdb_fd_fn fn, void *arg)
{
    if (fd < 0 || !fn || (events & ~(unsigned)(CFDB_EV_READ | CFDB_EV_WRITE)))
        return -EINVAL;
    int rc = grow_slots(loop, fd);
    if (rc)
        return rc;
    fd_slot *slot = &loop->slots[fd];
    if (slot->fn)
        return -EEXIST;
    struct epoll_event ev = {
        .events = to_epoll_events(events),
        .data.u64 = (uint64_t)slot->generation << 32 | (uint32_t)fd,
    };
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -errno;
    slot->fn = fn;
    slot->arg = arg;
    slot->events = events;
    return 0;
}

static int modify_fd(cfdb_loop *loop, int fd, unsigned events)
{
    if (events & ~(unsigned)(CFDB_EV_READ | CFDB_EV_WRITE))
        return -EINVAL;
    fd_slot *slot = registered_slot(loop, fd);
    if (!slot)
        return -ENOENT;
    if (slot->events == events)
        return 0;   /* common when a writer re-asks for WRITE: skip the syscall */
    struct epoll_event ev = {
        .events = to_epoll_events(events),
        .data.u64 = (uint64_t)slot->generation << 32 | (uint32_t)fd,
    };
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, fd, &ev) < 0)
        return -errno;
    slot->events = events;
    return 0;
}

static int remove_fd(cfdb_loop *loop, int fd)
{
    fd_slot *slot = registered_slot(loop, fd);
    if (!slot)
        return -ENOENT;
    /* Forget the slot even if epoll already dropped a closed fd. */
    int rc = epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, fd, NULL) < 0 ? -errno : 0;
    slot->fn = NULL;
    slot->arg = NULL;
    slot->events = 0;
    slot->generation++;
    return rc == -EBADF || rc == -ENOENT ? 0 : rc;
}

/* The public fd functions: the system's errno mapped to a FoundationDB code. */
int cfdb_loop_add_fd(cfdb_loop *loop, int fd, unsigned events, cfdb_fd_fn fn, void *arg)
{
    return cfdb_error_from_errno(add_fd(loop, fd, events, fn, arg));
}

int cfdb_loop_modify_fd(cfdb_loop *loop, int fd, unsigned events)
{
    return cfdb_error_from_errno(modify_fd(loop, fd, events));
}

int cfdb_loop_remove_fd(cfdb_loop *loop, int fd)
{
    return cfdb_error_from_errno(remove_fd(loop, fd));
}

static int dispatch_fd_events(cfdb_loop *loop)
{
    int ran = 0;
    for (int i = 0; i < loop->ready_count; i++) {
        uint64_t token = loop->ready[i].data.u64;
        if (token == WAKE_TOKEN)
            continue;   /* its only job was to end the wait */
        int fd = (int)(uint32_t)token;
        fd_slot *slot = registered_slot(loop, fd);
        if (!slot || slot->generation != (uint32_t)(token >> 32))
            continue;   /* removed (maybe re-added) by an earlier callback */
        uint32_t ep = loop->ready[i].events;
        unsigned fired = ((ep & EPOLLIN) ? CFDB_EV_READ : 0u) | ((ep & EPOLLOUT) ? CFDB_EV_WRITE : 0u);
        fired &= slot->events;
        if (ep & (EPOLLERR | EPOLLHUP))
            fired |= CFDB_EV_ERROR | slot->events;
        if (!fired)
            continue;
        slot->fn(loop, fd, fired, slot->arg);
        ran++;
    }
    loop->ready_count = 0;
    return ran;
}

/* ---- timers: an intrusive pairing heap of caller-owned timers ---------- */

void cfdb_timer_init(cfdb_timer *timer, cfdb_timer_fn fn, void *arg)
{
    *timer = (cfdb_timer){ .fn = fn, .arg = arg };
}

static bool timer_before(const cfdb_timer *a, const cfdb_timer *b)
{
    return a->deadline_ns != b->deadline_ns ? a->deadline_ns < b->deadline_ns : a->seq < b->seq;
}

/* Links two detached heaps (roots with no prev/sibling); returns the new root. */
static cfdb_timer *heap_meld(cfdb_timer *a, cfdb_timer *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (timer_before(b, a)) {
        cfdb_timer *t = a;
        a = b;
        b = t;
    }
    b->prev = a;
    b->sibling = a->child;
    if (a->child)
        a->child->prev = b;
    a->child = b;
    a->sibling = a->prev = NULL;
    return a;
}

/* The standard two-pass merge of a sibling list (left to right in pairs, then
 * right to left); iterative so deep lists cannot overflow the stack. */
static cfdb_timer *heap_merge_pairs(cfdb_timer *first)
{
    if (!first)
        return NULL;
    cfdb_timer *pairs = NULL; /* merged pairs, in reverse order, chained by sibling */
    while (first) {
        cfdb_timer *a = first, *b = first->sibling;
        first = b ? b->sibling : NULL;
        a->sibling = a->prev = NULL;
        if (b)
            b->sibling = b->prev = NULL;
        cfdb_timer *m = heap_meld(a, b);
        m->sibling = pairs;
        pairs = m;
    }
    cfdb_timer *root = NULL;
    while (pairs) {
        cfdb_timer *next = pairs->sibling;
        pairs->sibling = NULL;
        root = heap_meld(root, pairs);
        pairs = next;
    }
    return root;
}

static void heap_remove(cfdb_loop *loop, cfdb_timer *t)
{
    if (t == loop->heap) {
        loop->heap = heap_merge_pairs(t->child);
    } else {
        /* cut t's subtree out of its parent's child list, then meld it back without t */
        if (t->prev->child == t)
            t->prev->child = t->sibling;
        else
            t->prev->sibling = t->sibling;
        if (t->sibling)
            t->sibling->prev = t->prev;
        loop->heap = heap_meld(loop->heap, heap_merge_pairs(t->child));
    }
    t->child = t->sibling = t->prev = NULL;
    t->armed = false;
}

void cfdb_loop_timer_add_at(cfdb_loop *loop, cfdb_timer *timer, uint64_t deadline_ns)
{
    if (timer->armed)
        heap_remove(loop, timer);
    timer->deadline_ns = deadline_ns;
    timer->seq = loop->next_timer_seq++;
    timer->child = timer->sibling = timer->prev = NULL;
    timer->armed = true;
    loop->heap = heap_meld(loop->heap, timer);
}

void cfdb_loop_timer_add_in(cfdb_loop *loop, cfdb_timer *timer, uint64_t delay_ns)
{
    uint64_t now = cfdb_monotonic_ns();
    uint64_t deadline = delay_ns > UINT64_MAX - now ? UINT64_MAX : now + delay_ns;
    cfdb_loop_timer_add_at(loop, timer, deadline);
}

bool cfdb_loop_timer_cancel(cfdb_loop *loop, cfdb_timer *timer)
{
    if (!timer->armed)
        return false;
    heap_remove(loop, timer);
    return true;
}

static int fire_due_timers(cfdb_loop *loop)
{
    /* Timers armed by these callbacks wait for the next iteration, so a timer
     * that re-arms itself for "now" cannot starve fds and tasks. */
    uint64_t seq_limit = loop->next_timer_seq;
    int ran = 0;
    while (loop->heap) {
        cfdb_timer *t = loop->heap;
        if (t->deadline_ns > loop->now_ns || t->seq >= seq_limit)
            break;
        heap_remove(loop, t);
        t->fn(loop, t, t->arg);
        ran++;
    }
    return ran;
}

/* ---- cross-thread tasks ------------------------------------------------ */

static void write_wakeup(cfdb_loop *loop)
{
    uint64_t one = 1;
    /* Cannot fail short of counter overflow (~2^64 writes): ignore result. */
    ssize_t n = write(loop->wake_fd, &one, sizeof one);
    (void)n;
    atomic_fetch_add_explicit(&loop->stat_wakeup_writes, 1, memory_order_relaxed);
}

void cfdb_task_init(cfdb_task *task, cfdb_task_fn fn, void *arg)
{
    task->next = NULL;
    task->fn = fn;
    task->arg = arg;
    atomic_init(&task->queued, false);
}

/* Wakes the loop if it is (about to be) blocked. No lost wakeup: the loop
 * sets `polling` before it checks the queue under queue_lock, so either it saw
 * the new task or we see `polling`. Only the thread that flips it writes. */
static void wake_if_polling(cfdb_loop *loop)
{
    if (atomic_load_explicit(&loop->polling, memory_order_relaxed) &&
        atomic_exchange_explicit(&loop->polling, false, memory_order_acq_rel))
        write_wakeup(loop);
}

/* Appends under queue_lock. */
static void enqueue_locked(cfdb_loop *loop, cfdb_task *task)
{
    task->next = NULL;
    atomic_store_explicit(&task->queued, true, memory_order_relaxed);
    if (loop->queue_tail)
        loop->queue_tail->next = task;
    else
        loop->queue_head = task;
    loop->queue_tail = task;
}

bool cfdb_loop_post_task(cfdb_loop *loop, cfdb_task *task)
{
    pthread_mutex_lock(&loop->queue_lock);
    bool already = atomic_load_explicit(&task->queued, memory_order_relaxed);
    if (!already)
        enqueue_locked(loop, task);
    pthread_mutex_unlock(&loop->queue_lock);
    if (!already)
        wake_if_polling(loop);
    return !already;
}

static bool tasks_pending(cfdb_loop *loop)
{
    pthread_mutex_lock(&loop->queue_lock);
    bool any = loop->queue_head != NULL;
    pthread_mutex_unlock(&loop->queue_lock);
    return any;
}

static size_t run_posted_tasks(cfdb_loop *loop)
{
    pthread_mutex_lock(&loop->queue_lock);
    cfdb_task *batch = loop->queue_head;
    loop->queue_head = loop->queue_tail = NULL;
    pthread_mutex_unlock(&loop->queue_lock);

    /* Tasks posted while these run go to the fresh queue: next iteration. A
     * node may be re-posted or freed by its own fn, so each is unlinked first. */
    size_t ran = 0;
    while (batch) {
        cfdb_task *t = batch;
        batch = t->next;
        cfdb_task_fn fn = t->fn;
        void *arg = t->arg;
        atomic_store_explicit(&t->queued, false, memory_order_release);
        fn(arg);
        ran++;
    }
    return ran;
}

/* ---- running ----------------------------------------------------------- */

static int wait_for_events(cfdb_loop *loop, uint64_t wait_ns)
{
    int n;
    if (loop->have_epoll_pwait2) {
        struct timespec ts = { .tv_sec = (time_t)(wait_ns / 1000000000u),
                               .tv_nsec = (long)(wait_ns % 1000000000u) };
        n = epoll_pwait2(loop->epoll_fd, loop->ready, EVENT_BATCH,
                         wait_ns == CFDB_LOOP_WAIT_FOREVER ? NULL : &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n < 0 ? -errno : n;
        loop->have_epoll_pwait2 = false;   /* kernel < 5.11 */
    }
    /* Milliseconds, rounded up: waking early would just spin. */
    int ms;
    if (wait_ns == CFDB_LOOP_WAIT_FOREVER)
        ms = -1;
    else if (wait_ns / 1000000u >= INT_MAX)
        ms = INT_MAX;
    else
        ms = (int)((wait_ns + 999999u) / 1000000u);
    n = epoll_wait(loop->epoll_fd, loop->ready, EVENT_BATCH, ms);
    return n < 0 ? -errno : n;
}

#define BUSY_WINDOW_NS 1000000000ull
#define BURST_MIN_S 0.1 /* libfdb_c's busyness burstiness knobs */
#define BURST_MAX_S 0.5

/* Work time since the loop woke up. A window's busyness is libfdb_c's: the larger of the busy
 * fraction and how close the longest uninterrupted busy stretch came to BURST_MAX_S. */
static void account_busy(cfdb_loop *loop, bool waited)
{
    uint64_t end = cfdb_monotonic_ns(), work = end - loop->now_ns;
    loop->busy_ns += work;
    loop->stretch_ns = waited ? work : loop->stretch_ns + work;
    if (loop->stretch_ns > loop->longest_stretch_ns)
        loop->longest_stretch_ns = loop->stretch_ns;
    if (!loop->busy_window_start) {
        loop->busy_window_start = end;
        return;
    }
    uint64_t elapsed = end - loop->busy_window_start;
    if (elapsed < BUSY_WINDOW_NS)
        return;
    double fraction = (double)(loop->busy_ns < elapsed ? loop->busy_ns : elapsed) / (double)elapsed;
    double burst = ((double)loop->longest_stretch_ns / 1e9 - BURST_MIN_S) / (BURST_MAX_S - BURST_MIN_S);
    burst = burst < 0 ? 0 : burst > 1 ? 1 : burst;
    atomic_store_explicit(&loop->busyness, fraction > burst ? fraction : burst, memory_order_relaxed);
    loop->busy_window_start = end;
    loop->busy_ns = loop->longest_stretch_ns = 0;
}

double cfdb_loop_busyness(const cfdb_loop *loop)
{
    return atomic_load_explicit(&((cfdb_loop *)loop)->busyness, memory_order_relaxed);
}

int cfdb_loop_run_once(cfdb_loop *loop, uint64_t max_wait_ns)
{
    const cfdb_loop *outer = current_loop;
    current_loop = loop;
    BUMP(loop->stat_iterations, 1);

    uint64_t wait_ns = max_wait_ns;
    if (atomic_load_explicit(&loop->stop_requested, memory_order_acquire))
        wait_ns = 0;
    if (wait_ns && loop->heap) {
        uint64_t now = cfdb_monotonic_ns(), due = loop->heap->deadline_ns;
        wait_ns = due <= now ? 0 : (due - now < wait_ns ? due - now : wait_ns);
    }
    if (wait_ns) {
        /* Announce the nap, then re-check the queue (see wake_if_polling). */
        atomic_store_explicit(&loop->polling, true, memory_order_seq_cst);
        BUMP(loop->stat_waits, 1);
        if (tasks_pending(loop)) {
            atomic_store_explicit(&loop->polling, false, memory_order_relaxed);
            wait_ns = 0;
        }
    }

    int n = wait_for_events(loop, wait_ns);
    if (wait_ns)   /* awake again: posts need not write any more */
        atomic_store_explicit(&loop->polling, false, memory_order_relaxed);
    if (n < 0 && n != -EINTR) {
        loop->wait_error = cfdb_error_from_errno(-n);
        current_loop = outer;
        return 0;
    }
    loop->ready_count = n > 0 ? n : 0;
    loop->now_ns = cfdb_monotonic_ns();

    cfdb_loop_iteration_fn hook = loop->iteration_hook;
    void *hook_arg = loop->iteration_arg;
    if (hook)
        hook(hook_arg, true);
    int ran = dispatch_fd_events(loop);
    ran += fire_due_timers(loop);
    size_t tasks = run_posted_tasks(loop);
    BUMP(loop->stat_tasks_run, tasks);
    ran += tasks > (size_t)(INT_MAX - ran) ? INT_MAX - ran : (int)tasks;
    if (hook)
        hook(hook_arg, false);
    account_busy(loop, wait_ns != 0);
    current_loop = outer;
    return ran;
}

int cfdb_loop_run(cfdb_loop *loop)
{
    int rc = 0;
    loop->wait_error = 0;
    while (!atomic_load_explicit(&loop->stop_requested, memory_order_acquire)) {
        cfdb_loop_run_once(loop, CFDB_LOOP_WAIT_FOREVER);
        if (loop->wait_error) {
            rc = loop->wait_error;
            break;
        }
    }
    atomic_store_explicit(&loop->stop_requested, false, memory_order_relaxed);
    return rc;
}

void cfdb_loop_stop(cfdb_loop *loop)
{
    atomic_store_explicit(&loop->stop_requested, true, memory_order_release);
    /* Stop is rare: always wake from other threads rather than reason about
     * a second flag. From a callback the loop is awake already. */
    if (current_loop != loop)
        write_wakeup(loop);
}

int cfdb_loop_wait_error(const cfdb_loop *loop)
{
    return loop->wait_error;
}

bool cfdb_loop_on_loop_thread(const cfdb_loop *loop)
{
    return current_loop == loop;
}

void cfdb_loop_set_iteration_hook(cfdb_loop *loop, cfdb_loop_iteration_fn fn, void *arg)
{
    loop->iteration_hook = fn;
    loop->iteration_arg = arg;
}

void cfdb_loop_get_stats(const cfdb_loop *loop, cfdb_loop_stats *out)
{
    /* The loop is const to callers; the atomics are only read. */
    cfdb_loop *l = (cfdb_loop *)loop;
    out->iterations = atomic_load_explicit(&l->stat_iterations, memory_order_relaxed);
    out->waits = atomic_load_explicit(&l->stat_waits, memory_order_relaxed);
    out->wakeup_writes = atomic_load_explicit(&l->stat_wakeup_writes, memory_order_relaxed);
    out->tasks_run = atomic_load_explicit(&l->stat_tasks_run, memory_order_relaxed);
}
