/* Allocation failures on the application's side of the API: for N = 1, 2, ... the Nth heap
 * allocation the application thread makes during a scripted transaction fails, and every call
 * must still behave: each function that returns a future returns one (never NULL), the future
 * becomes ready (nothing hangs), and it carries success or an error code -- unknown_error
 * (4000, txn_internal.h TXN_ERR_NO_MEMORY) where the failed allocation was the call's own, or
 * the error a failed write deferred to the operations after it -- and a key whose copy failed
 * is never used as an empty key (a get of it never answers another key's value). The loop
 * ends at the first N that the workload no longer reaches.
 *
 * The engine is linked into this program statically (fdb_c.c and the client's libraries,
 * not libcfdb.so) with the linker's --wrap for the malloc family, so the failures reach every
 * allocation of the client's code, in plain and sanitizer builds alike. The first case fails
 * only the application thread's allocations; the second any thread's (the network thread's
 * too). In steady state the engine allocates next to nothing per transaction (object caches,
 * recycled arenas: test_api_alloc.c), so N stays small. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---------- the failing allocator (when armed: this thread's, or any thread's) ---------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **out, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **out, size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);

static _Thread_local long tl_countdown; /* 0: off; 1: the next allocation fails */
static _Thread_local long tl_seen;      /* allocations while armed */
static atomic_long g_countdown;         /* the same for every thread's allocations */
static atomic_bool g_failed;
static _Thread_local bool tl_fail_all; /* every allocation of this thread fails */

static bool fail_now(void)
{
    if (tl_fail_all)
        return true;
    if (atomic_load_explicit(&g_countdown, memory_order_relaxed) > 0) {
        if (atomic_fetch_sub(&g_countdown, 1) == 1) {
            atomic_store(&g_failed, true);
            return true;
        }
        return false;
    }
    if (!tl_countdown)
        return false;
    tl_seen++;
    if (--tl_countdown)
        return false;
    return true; /* the countdown is now 0: later allocations succeed */
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m)
{
    return fail_now() ? NULL : __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}
int __wrap_posix_memalign(void **out, size_t align, size_t n)
{
    return fail_now() ? 12 /* ENOMEM */ : __real_posix_memalign(out, align, n);
}
void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return fail_now() ? NULL : __real_aligned_alloc(align, n);
}


static bool g_any_thread; /* the mode of the test running */

static void arm(long nth)
{
    if (g_any_thread) {
        atomic_store(&g_failed, false);
        atomic_store(&g_countdown, nth);
        return;
    }
    tl_seen = 0;
    tl_countdown = nth;
}

/* true if the armed failure happened */
static bool disarm(void)
{
    if (g_any_thread) {
        atomic_store(&g_countdown, 0);
        return atomic_load(&g_failed);
    }
    bool hit = tl_countdown == 0 && tl_seen > 0;
    tl_countdown = 0;
    return hit;
}

/* ---------- the workload ---------- */

#define BIG 60000 /* values this big need arena blocks of their own */
#define WAIT_MS 10000

static char g_prefix[64];
static uint8_t g_big[BIG];

static int group_setup(void **state)
{
    (void)state;
    if (api_env_setup(NULL))
        return -1;
    api_prefix(g_prefix, sizeof g_prefix, "allocfail");
    memset(g_big, 'v', sizeof g_big);
    /* two keys with different values: a failed key copy must not answer the other's */
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, "a");
    if (api_set_committed(k, kl, "A", 1))
        return -1;
    kl = api_key(k, sizeof k, g_prefix, "b");
    return api_set_committed(k, kl, "B", 1) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

typedef struct outcome {
    int calls;       /* futures checked */
    int errors;      /* of them, failed */
    int no_memory;   /* of them, with unknown_error */
} outcome;

/* A future from the API: never NULL, ready within WAIT_MS, success or a positive error. */
static fdb_error_t check(outcome *out, FDBFuture *f, const char *what, long nth)
{
    if (!f)
        fail_msg("N=%ld: %s returned NULL", nth, what);
    fdb_error_t e = api_wait_ms(f, WAIT_MS);
    if (e == API_TIMEOUT)
        fail_msg("N=%ld: %s never became ready", nth, what);
    if (e < 0)
        fail_msg("N=%ld: %s failed with negative error %d", nth, what, e);
    out->calls++;
    if (e && getenv("ALLOC_FAIL_VERBOSE"))
        print_message("N=%ld: %s -> %d\n", nth, what, e);
    if (e)
        out->errors++;
    if (e == 4000)
        out->no_memory++;
    return e;
}

/* A get of prefix+suffix: if it succeeds it answers that key's own value. */
static void check_get(outcome *out, FDBTransaction *tr, const char *suffix, const char *want, long nth)
{
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, suffix);
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)k, kl, 0);
    if (check(out, f, "get", nth) == 0) {
        fdb_bool_t present;
        const uint8_t *v;
        int vl;
        assert_int_equal(fdb_future_get_value(f, &present, &v, &vl), 0);
        if (want) {
            if (!present || vl != (int)strlen(want) || memcmp(v, want, (size_t)vl) != 0)
                fail_msg("N=%ld: get %s answered another value", nth, suffix);
        }
    }
    fdb_future_destroy(f);
}

/* One scripted transaction, every call under the armed allocator. */
static void workload(outcome *out, long nth)
{
    FDBTransaction *tr = NULL;
    fdb_error_t ce = fdb_database_create_transaction(g_env.db, &tr);
    if (ce) { /* the transaction object itself: an error code, no object */
        assert_true(ce > 0);
        out->calls++;
        out->errors++;
        return;
    }
    char k[96], e[96];
    int kl, el;
    FDBFuture *f;
    check_get(out, tr, "a", "A", nth);
    kl = api_key(k, sizeof k, g_prefix, "w");
    g_big[0] = (uint8_t)('A' + nth % 26); /* this round's value */
    fdb_transaction_set(tr, (const uint8_t *)k, kl, g_big, sizeof g_big);
    check_get(out, tr, "b", "B", nth);
    kl = api_key(k, sizeof k, g_prefix, "a");
    el = api_key(e, sizeof e, g_prefix, "c");
    f = fdb_transaction_get_range(tr, (const uint8_t *)k, kl, 0, 1, (const uint8_t *)e, el, 0, 1, 0, 0,
                                  FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    if (check(out, f, "get_range", nth) == 0) {
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        /* a, b -- or a with more set: RYW returns what it has once a storage read would be
         * needed past its first row (hasSatisfiedMinRows), as libfdb_c does */
        if (n < 1 || n > 2 || (n == 1 && !more))
            fail_msg("N=%ld: get_range answered %d rows (more %d)", nth, n, more);
        char want[96];
        for (int i = 0; i < n; i++) {
            int wl = api_key(want, sizeof want, g_prefix, i ? "b" : "a");
            if (kv[i].key_length != wl || memcmp(kv[i].key, want, (size_t)wl) != 0)
                fail_msg("N=%ld: get_range row %d is another key", nth, i);
        }
    }
    fdb_future_destroy(f);
    f = fdb_transaction_get_key(tr, (const uint8_t *)k, kl, 0, 1, 0);
    check(out, f, "get_key", nth);
    fdb_future_destroy(f);
    f = fdb_transaction_get_read_version(tr);
    check(out, f, "get_read_version", nth);
    fdb_future_destroy(f);
    f = fdb_transaction_get_estimated_range_size_bytes(tr, (const uint8_t *)k, kl, (const uint8_t *)e, el);
    check(out, f, "get_estimated_range_size_bytes", nth);
    fdb_future_destroy(f);
    f = fdb_transaction_get_approximate_size(tr);
    check(out, f, "get_approximate_size", nth);
    fdb_future_destroy(f);
    static const char wc[] = "\xff\xff/transaction/write_conflict_range/";
    static const char wce[] = "\xff\xff/transaction/write_conflict_range0";
    f = fdb_transaction_get_range(tr, (const uint8_t *)wc, (int)sizeof wc - 1, 0, 1, (const uint8_t *)wce,
                                  (int)sizeof wce - 1, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    check(out, f, "special keys", nth);
    fdb_future_destroy(f);
    kl = api_key(k, sizeof k, g_prefix, "watched");
    FDBFuture *w = fdb_transaction_watch(tr, (const uint8_t *)k, kl);
    if (!w)
        fail_msg("N=%ld: watch returned NULL", nth);
    FDBFuture *vs = fdb_transaction_get_versionstamp(tr);
    if (!vs)
        fail_msg("N=%ld: get_versionstamp returned NULL", nth);
    f = fdb_transaction_commit(tr);
    fdb_error_t commit = check(out, f, "commit", nth);
    fdb_future_destroy(f);
    if (!commit) { /* committed: with this round's write (a write that failed fails the commit) */
        long armed = tl_countdown, garmed = atomic_exchange(&g_countdown, 0);
        tl_countdown = 0;
        kl = api_key(k, sizeof k, g_prefix, "w");
        static char got[BIG];
        int present = 0, len = 0;
        assert_int_equal(api_read_committed(k, kl, &present, got, sizeof got, &len), 0);
        if (!present || len != BIG || memcmp(got, g_big, BIG) != 0)
            fail_msg("N=%ld: the commit succeeded without the transaction's write", nth);
        tl_countdown = armed;
        atomic_store(&g_countdown, garmed);
    }
    fdb_future_cancel(w); /* the watch need not fire: it must answer once cancelled */
    check(out, w, "watch", nth);
    fdb_future_destroy(w);
    f = fdb_transaction_on_error(tr, commit ? commit : 1020);
    check(out, f, "on_error", nth);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    /* the stamp, or (a commit that failed before it was sent) transaction_cancelled once
     * on_error or the destroy ended the attempt, as RYW's reset promise does */
    check(out, vs, "get_versionstamp", nth);
    fdb_future_destroy(vs);
}

static void run_all(const char *who)
{
    outcome total = { 0, 0, 0 };
    long reached = 0;
    for (long nth = 1; nth < 100000; nth++) {
        outcome out = { 0, 0, 0 };
        arm(nth);
        workload(&out, nth);
        bool hit = disarm();
        total.calls += out.calls;
        total.errors += out.errors;
        total.no_memory += out.no_memory;
        if (!hit)
            break; /* the workload makes fewer than nth allocations here */
        reached = nth;
    }
    print_message("alloc-fail: allocations 1..%ld of %s failed in turn; %d futures checked, "
                  "%d failed (%d with unknown_error), none NULL, none hung\n",
                  reached, who, total.calls, total.errors, total.no_memory);
    assert_true(reached >= 1);        /* the workload allocates at all */
    assert_true(total.no_memory >= 1); /* some failure reached a future as unknown_error */
    /* with nothing failing, the same workload succeeds */
    outcome clean = { 0, 0, 0 };
    workload(&clean, 0);
    assert_int_equal(clean.no_memory, 0);
}

static void test_nth_allocation_fails(void **state)
{
    (void)state;
    g_any_thread = false;
    run_all("the application thread");
}

/* The same with the Nth allocation of the whole process (the network thread's too: which one
 * that is varies from run to run). */
static void test_nth_allocation_of_any_thread_fails(void **state)
{
    (void)state;
    g_any_thread = true;
    run_all("any thread");
    g_any_thread = false;
}

/* With no memory at all on the application thread, every fdb_c.h function that returns a
 * future or a result still returns one, and each future becomes ready. */
static void test_no_memory_never_null(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char k[96], e[96];
    int kl = api_key(k, sizeof k, g_prefix, "a");
    int el = api_key(e, sizeof e, g_prefix, "c");
    static const uint8_t mapper[] = { 0x01, 'x', 0x00 };
    outcome out = { 0, 0, 0 };
    FDBFuture *fs[32];
    const char *names[32];
    int n = 0;
    tl_fail_all = true;
#define ADD(name, call) (names[n] = (name), fs[n++] = (call))
    ADD("get_read_version", fdb_transaction_get_read_version(tr));
    ADD("get", fdb_transaction_get(tr, (const uint8_t *)k, kl, 0));
    ADD("get_key", fdb_transaction_get_key(tr, (const uint8_t *)k, kl, 0, 1, 0));
    ADD("get_range", fdb_transaction_get_range(tr, (const uint8_t *)k, kl, 0, 1, (const uint8_t *)e, el, 0, 1, 0, 0,
                                               FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0));
    ADD("get_mapped_range",
        fdb_transaction_get_mapped_range(tr, (const uint8_t *)k, kl, 0, 1, (const uint8_t *)e, el, 0, 1, mapper,
                                         sizeof mapper, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0));
    ADD("get_estimated_range_size_bytes",
        fdb_transaction_get_estimated_range_size_bytes(tr, (const uint8_t *)k, kl, (const uint8_t *)e, el));
    ADD("get_range_split_points",
        fdb_transaction_get_range_split_points(tr, (const uint8_t *)k, kl, (const uint8_t *)e, el, 1000));
    ADD("get_addresses_for_key", fdb_transaction_get_addresses_for_key(tr, (const uint8_t *)k, kl));
    ADD("get_approximate_size", fdb_transaction_get_approximate_size(tr));
    ADD("get_total_cost", fdb_transaction_get_total_cost(tr));
    ADD("get_tag_throttled_duration", fdb_transaction_get_tag_throttled_duration(tr));
    static const char status[] = "\xff\xff/status/json", cs[] = "\xff\xff/connection_string";
    ADD("status/json", fdb_transaction_get(tr, (const uint8_t *)status, (int)sizeof status - 1, 0));
    ADD("connection_string", fdb_transaction_get(tr, (const uint8_t *)cs, (int)sizeof cs - 1, 0));
    ADD("get_server_protocol", fdb_database_get_server_protocol(g_env.db, 0));
    ADD("get_client_status", fdb_database_get_client_status(g_env.db));
    ADD("get_blob_granule_ranges", fdb_transaction_get_blob_granule_ranges(tr, (const uint8_t *)k, kl,
                                                                         (const uint8_t *)e, el, 10));
    ADD("watch", fdb_transaction_watch(tr, (const uint8_t *)k, kl));
    ADD("get_versionstamp", fdb_transaction_get_versionstamp(tr));
    ADD("commit", fdb_transaction_commit(tr));
    ADD("on_error", fdb_transaction_on_error(tr, 1020));
#undef ADD
    FDBResult *res = fdb_transaction_read_blob_granules(tr, (const uint8_t *)k, kl, (const uint8_t *)e, el, 0, -2,
                                                        (FDBReadBlobGranuleContext){ 0 });
    tl_fail_all = false;
    assert_non_null(res);
    const FDBKeyValue *kv;
    int count;
    fdb_bool_t more;
    assert_true(fdb_result_get_keyvalue_array(res, &kv, &count, &more) > 0);
    fdb_result_destroy(res);
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], "watch") == 0 && fs[i])
            fdb_future_cancel(fs[i]); /* it may have started: it need not fire */
        if (strcmp(names[i], "get_versionstamp") == 0 && fs[i] && !fdb_future_is_ready(fs[i]))
            continue; /* settled by the destroy below */
        check(&out, fs[i], names[i], -1);
        fdb_future_destroy(fs[i]);
    }
    fdb_transaction_destroy(tr);
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], "get_versionstamp") == 0 && !fdb_future_is_ready(fs[i])) {
            check(&out, fs[i], names[i], -1);
            fdb_future_destroy(fs[i]);
        }
    print_message("no memory: %d futures, %d failed (%d with unknown_error), none NULL, none hung\n", out.calls,
                  out.errors, out.no_memory);
    assert_int_equal(out.calls, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nth_allocation_fails),
        cmocka_unit_test(test_nth_allocation_of_any_thread_fails),
        cmocka_unit_test(test_no_memory_never_null),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
