/* Event loop: one thread waits on file descriptors, timers and posted tasks.
 *
 * In the spirit of Redis's `ae`: level-triggered epoll, callbacks, nothing
 * hidden. The client's network thread and the dev server each run one.
 *
 * Threading: everything here must be called on the loop thread (the one in
 * cfdb_loop_run / cfdb_loop_run_once), except cfdb_loop_post_task,
 * cfdb_loop_stop and cfdb_monotonic_ns, which any thread may call at any time.
 *
 * Errors: the fd functions return 0 or a FoundationDB code (the errno mapped by
 * cfdb_error_from_errno); a failed wait ends cfdb_loop_run with that code and is
 * kept for cfdb_loop_wait_error (run_once's result is a count); posting and
 * arming timers cannot fail. */
#ifndef CFDB_EVENT_LOOP_H
#define CFDB_EVENT_LOOP_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cfdb_loop cfdb_loop;

/* ---- lifetime ---------------------------------------------------------- */

/* Returns NULL when out of memory or file descriptors (errno says which). */
cfdb_loop *cfdb_loop_create(void);
/* Tasks still queued are dropped without running: drain with
 * cfdb_loop_run_once(loop, 0) first if they own resources. Registered fds are
 * not closed (the loop never owns them). */
void cfdb_loop_destroy(cfdb_loop *loop);

/* ---- file descriptors -------------------------------------------------- */

enum {
    CFDB_EV_READ = 1u << 0,
    CFDB_EV_WRITE = 1u << 1,
    /* Reported, never requested: error or hang-up. Comes with the READ/WRITE
     * bits you asked for so the next read/write tells you why. */
    CFDB_EV_ERROR = 1u << 2,
};

/* `events` is the subset of CFDB_EV_* that is ready. Readiness may be
 * spurious (non-blocking I/O then would block); callbacks may
 * register, modify or unregister any fd, including their own. */
typedef void (*cfdb_fd_fn)(cfdb_loop *loop, int fd, unsigned events, void *arg);

/* Level-triggered interest in `events` (0 is allowed: registered but idle).
 * Returns 0 or a FoundationDB code (already registered, a bad fd or events:
 * platform_error; epoll's errno mapped otherwise). */
int cfdb_loop_add_fd(cfdb_loop *loop, int fd, unsigned events, cfdb_fd_fn fn, void *arg);
/* Changes the interest set; returns 0 or a FoundationDB code (not registered:
 * file_not_found). */
int cfdb_loop_modify_fd(cfdb_loop *loop, int fd, unsigned events);
/* Call before close(fd). Pending events for fd are discarded, even if the
 * number is reused by a new registration in the same iteration. Returns 0 or a
 * FoundationDB code (not registered: file_not_found). */
int cfdb_loop_remove_fd(cfdb_loop *loop, int fd);

/* ---- timers ------------------------------------------------------------ */

/* Monotonic clock (CLOCK_MONOTONIC) in nanoseconds. */
uint64_t cfdb_monotonic_ns(void);
/* The clock as read after the last wait: cheap, good enough for deadlines
 * computed inside callbacks. */
uint64_t cfdb_loop_now_ns(const cfdb_loop *loop);

typedef struct cfdb_timer cfdb_timer;
typedef void (*cfdb_timer_fn)(cfdb_loop *loop, cfdb_timer *timer, void *arg);

/* One-shot timer, embedded in and owned by the caller. The loop keeps armed
 * timers in an intrusive pairing heap made of these nodes, so arming never
 * allocates and cannot fail. Fields are private; use the functions below. */
struct cfdb_timer {
    uint64_t deadline_ns;
    uint64_t seq;          /* tie-break: equal deadlines fire in arming order */
    cfdb_timer *child;     /* first child in the heap */
    cfdb_timer *sibling;   /* next sibling */
    cfdb_timer *prev;      /* previous sibling, or the parent for a first child */
    bool armed;
    cfdb_timer_fn fn;
    void *arg;
};

void cfdb_timer_init(cfdb_timer *timer, cfdb_timer_fn fn, void *arg);
static inline bool cfdb_timer_is_armed(const cfdb_timer *timer)
{
    return timer->armed;
}
/* Arms (or re-arms, moving it) for an absolute cfdb_monotonic_ns() time.
 * The callback runs once, after which the timer is idle and may be re-armed
 * or freed. Cannot fail. O(1); cancelling and firing are O(log n)
 * amortised. */
void cfdb_loop_timer_add_at(cfdb_loop *loop, cfdb_timer *timer, uint64_t deadline_ns);
/* Same, `delay_ns` from now. */
void cfdb_loop_timer_add_in(cfdb_loop *loop, cfdb_timer *timer, uint64_t delay_ns);
/* Returns true if the timer was armed (it will now not fire). */
bool cfdb_loop_timer_cancel(cfdb_loop *loop, cfdb_timer *timer);

/* ---- cross-thread tasks ------------------------------------------------ */

typedef void (*cfdb_task_fn)(void *arg);

/* A task node embedded in the caller's object: posting it links the node into
 * the loop's queue, so posting never allocates and cannot fail. A node is in
 * the queue at most once: posting a node that is still queued does nothing
 * (the one queued run covers both). Once the loop has taken the node off the
 * queue, just before calling fn, it may be posted again or freed (fn may free
 * the object holding it). Fields are private: set them with cfdb_task_init. */
typedef struct cfdb_task cfdb_task;
struct cfdb_task {
    cfdb_task *next;
    cfdb_task_fn fn;
    void *arg;
    _Atomic(bool) queued;
};

void cfdb_task_init(cfdb_task *task, cfdb_task_fn fn, void *arg);

/* Any thread: queue the task to run fn(arg) on the loop thread. Tasks run in
 * posting order per posting thread. Wakes the loop only if it is (about to be)
 * blocked, so a post to a busy loop makes no system call. Cannot fail. Returns
 * true when it queued the node, false when the node was queued already (an
 * owner that takes a reference per post gives it back then). An object posted
 * from several places at once either has a node per purpose or keeps its own
 * queue of work behind one node. */
bool cfdb_loop_post_task(cfdb_loop *loop, cfdb_task *task);

/* ---- running ----------------------------------------------------------- */

#define CFDB_LOOP_WAIT_FOREVER UINT64_MAX

/* One iteration: wait up to max_wait_ns (0 = poll, CFDB_LOOP_WAIT_FOREVER =
 * until something happens) for fds, timers, posted tasks or a stop request,
 * then run ready fd callbacks, due timers and queued tasks, in that order.
 * Returns the number of callbacks run (>= 0). When waiting fails (not EINTR)
 * nothing runs, 0 is returned and cfdb_loop_wait_error reports why. */
int cfdb_loop_run_once(cfdb_loop *loop, uint64_t max_wait_ns);
/* Iterates until cfdb_loop_stop. A stop requested before run is not lost:
 * run returns at once and the request is consumed. Returns 0, or the
 * FoundationDB code of a failed wait (cfdb_error_from_errno of its errno). */
int cfdb_loop_run(cfdb_loop *loop);
/* Loop thread: the FoundationDB code of the last failed wait since run
 * started (or ever, for run_once alone), 0 when none failed. */
int cfdb_loop_wait_error(const cfdb_loop *loop);
/* Any thread, including loop callbacks (then it takes effect when the
 * current iteration ends). */
void cfdb_loop_stop(cfdb_loop *loop);
/* True while called from inside cfdb_loop_run / run_once on this loop. */
bool cfdb_loop_on_loop_thread(const cfdb_loop *loop);
/* Before the loop runs: fn(arg, true) is called on the loop thread when an iteration starts
 * its callbacks (after the wait) and fn(arg, false) when they are done (before the next
 * wait), so an owner can hold back work of its own (the client batches the wake-ups of
 * threads blocked on futures) and do it once per iteration. NULL removes it. */
typedef void (*cfdb_loop_iteration_fn)(void *arg, bool begin);
void cfdb_loop_set_iteration_hook(cfdb_loop *loop, cfdb_loop_iteration_fn fn, void *arg);

/* Any thread: how busy the loop was over its last complete 1 s window, 0..1 (the larger of
 * the fraction of time spent working and the longest busy stretch scaled from 0.1 s to
 * 0.5 s), as libfdb_c's network busyness. Windows close only while the loop runs; an owner
 * wanting a fresh value when idle keeps a periodic timer armed. */
double cfdb_loop_busyness(const cfdb_loop *loop);

/* Counters for tests and benchmarks (approximate when read off-thread). */
typedef struct cfdb_loop_stats {
    uint64_t iterations;
    uint64_t waits;          /* times the loop announced it may block: each
                              * allows at most one wakeup write */
    uint64_t wakeup_writes;  /* eventfd writes by cfdb_loop_post_task / stop */
    uint64_t tasks_run;
} cfdb_loop_stats;

void cfdb_loop_get_stats(const cfdb_loop *loop, cfdb_loop_stats *out);

#endif
