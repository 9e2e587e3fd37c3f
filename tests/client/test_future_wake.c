/* Futures' waits and wake-ups (src/client/future.c): waiters sleep on shared futex words with a
 * slot bit each (128 slots) or, past that or as a second waiter on one future, on the future's
 * own word; the network thread's completions inside a batch (cfdb_future_wake_batch_begin/end)
 * wake slotted waiters only at the batch's end, all at once.
 *
 * Asserts: 160 threads blocked on 160 futures all return, each with its own future's result,
 * when the futures are completed inside one batch (no lost wake-up on either path); exactly 128
 * of them slept on slots; none of those returned before the batch ended; two waiters on one
 * future both return; a completion outside a batch (the application's cancel) wakes at once.
 * Every wait has a watchdog: a lost wake-up fails the test instead of hanging it. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "future.h"

#define NW 160

typedef struct waiter {
    cfdb_future *f;
    atomic_int seen_error; /* the future's error as the waiter saw it on return, -1 before */
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    cfdb_future_wait(w->f);
    atomic_store(&w->seen_error, w->f->error);
    return NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Waits until every future has a waiter announced on one path or the other. */
static void until_announced(waiter *ws, int n)
{
    for (int tries = 0; tries < 2000; tries++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            k += (atomic_load(&ws[i].f->wake) & (CFDB_FUTURE_WAKE_SLOTTED | CFDB_FUTURE_WAKE_SLEEPERS)) != 0;
        if (k == n)
            return;
        sleep_ms(5);
    }
    fail_msg("waiters did not go to sleep");
}

static void test_batch_wakes_every_waiter_at_its_end(void **state)
{
    (void)state;
    static waiter ws[NW];
    pthread_t th[NW];
    for (int i = 0; i < NW; i++) {
        ws[i].f = cfdb_future_new(CFDB_FUTURE_INT64);
        assert_non_null(ws[i].f);
        atomic_init(&ws[i].seen_error, -1);
        assert_int_equal(pthread_create(&th[i], NULL, wait_thread, &ws[i]), 0);
    }
    until_announced(ws, NW);
    int slotted = 0;
    for (int i = 0; i < NW; i++)
        slotted += (atomic_load(&ws[i].f->wake) & CFDB_FUTURE_WAKE_SLOTTED) != 0;
    assert_int_equal(slotted, CFDB_FUTURE_WAKE_SLOTS);

    cfdb_future_wake_batch_begin();
    for (int i = 0; i < NW; i++)
        cfdb_future_complete(ws[i].f, 1000 + i);
    sleep_ms(50);
    /* the slotted waiters are still asleep: their wake-up is held until the batch ends */
    for (int i = 0; i < NW; i++)
        if (atomic_load(&ws[i].f->wake) & CFDB_FUTURE_WAKE_SLOTTED)
            assert_int_equal(atomic_load(&ws[i].seen_error), -1);
    cfdb_future_wake_batch_end();

    for (int i = 0; i < NW; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(atomic_load(&ws[i].seen_error), 1000 + i);
        cfdb_future_unref(ws[i].f);
    }
}

static void test_two_waiters_and_completion_outside_a_batch(void **state)
{
    (void)state;
    waiter w[2];
    pthread_t th[2];
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_VOID);
    assert_non_null(f);
    for (int i = 0; i < 2; i++) {
        w[i].f = f;
        atomic_init(&w[i].seen_error, -1);
        assert_int_equal(pthread_create(&th[i], NULL, wait_thread, &w[i]), 0);
    }
    /* one sleeps on a slot, the other on the future's own word */
    for (int tries = 0; tries < 2000; tries++) {
        uint32_t bits = atomic_load(&f->wake);
        if ((bits & CFDB_FUTURE_WAKE_SLOTTED) && (bits & CFDB_FUTURE_WAKE_SLEEPERS))
            break;
        sleep_ms(5);
    }
    assert_int_equal(atomic_load(&f->wake) & (CFDB_FUTURE_WAKE_SLOTTED | CFDB_FUTURE_WAKE_SLEEPERS),
                     CFDB_FUTURE_WAKE_SLOTTED | CFDB_FUTURE_WAKE_SLEEPERS);
    cfdb_future_complete(f, 1101); /* no batch: woken at once */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(atomic_load(&w[i].seen_error), 1101);
    }
    cfdb_future_unref(f);
}

int main(void)
{
    alarm(30); /* a lost wake-up ends the test (SIGALRM) instead of hanging CI */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_wakes_every_waiter_at_its_end),
        cmocka_unit_test(test_two_waiters_and_completion_outside_a_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
