/* A storage server that answers with bytes that do not decode: each read fails with
 * serialization_failed (1044) after a bounded number of attempts (TXN_MAX_BAD_REPLIES in
 * src/client/txn_internal.h) instead of retrying every 10 ms for ever, and a good answer in
 * between starts the count again.
 *
 * The engine is linked into this program statically (fdb_c.c and the client's libraries)
 * with the linker's --wrap=fb_decode: while a reply type is "garbled", decoding it fails as
 * it fails for a malformed message; every other message, and that one when not garbled,
 * decodes as usual. The dev server is real, and the requests go out for real. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fb.h"
#include "messages.h"

#define SERIALIZATION_FAILED 1044
#define WAIT_MS 20000 /* far above 20 retries of 10 ms and a location lookup each */

/* ---------- the garbling decoder ---------- */

int __real_fb_decode(const fb_message *m, const uint8_t *buf, size_t len, void *item, cfdb_reply_error *error,
                     cfdb_arena *arena);
int __wrap_fb_decode(const fb_message *m, const uint8_t *buf, size_t len, void *item, cfdb_reply_error *error,
                     cfdb_arena *arena);

static const fb_message *_Atomic g_garbled;
static atomic_int g_garbled_seen;  /* replies garbled so far */
static atomic_int g_pass_every;    /* > 0: every this many replies of the type decode after all */

int __wrap_fb_decode(const fb_message *m, const uint8_t *buf, size_t len, void *item, cfdb_reply_error *error,
                     cfdb_arena *arena)
{
    if (m == atomic_load(&g_garbled)) {
        int n = atomic_fetch_add(&g_garbled_seen, 1) + 1;
        int every = atomic_load(&g_pass_every);
        if (!every || n % every)
            return SERIALIZATION_FAILED; /* fb_decode's answer to a malformed message */
    }
    return __real_fb_decode(m, buf, len, item, error, arena);
}

static void garble(const fb_message *m, int pass_every)
{
    atomic_store(&g_garbled_seen, 0);
    atomic_store(&g_pass_every, pass_every);
    atomic_store(&g_garbled, m);
}

/* ---------- tests ---------- */

static char g_prefix[64];

static int group_setup(void **state)
{
    (void)state;
    api_prefix(g_prefix, sizeof g_prefix, "garbage");
    /* three shards in the test's keys: a range read or size estimate takes a reply from each */
    char shards[160];
    snprintf(shards, sizeof shards, "%sb,%sc", g_prefix, g_prefix);
    const char *args[] = { "--shards", shards, NULL };
    if (api_env_setup(args))
        return -1;
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, "a");
    return api_set_committed(k, kl, "A", 1) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    garble(NULL, 0);
    return api_env_teardown();
}

/* The future ends with serialization_failed after a bounded number of garbled replies. */
static void expect_bounded(FDBFuture *f, const char *what)
{
    assert_non_null(f);
    fdb_error_t e = api_wait_ms(f, WAIT_MS);
    if (e == API_TIMEOUT)
        fail_msg("%s: still retrying after %d garbled replies", what, atomic_load(&g_garbled_seen));
    int seen = atomic_load(&g_garbled_seen);
    print_message("%s: %d (%s) after %d garbled replies\n", what, e, fdb_get_error(e), seen);
    assert_int_equal(e, SERIALIZATION_FAILED);
    assert_true(seen >= 2);   /* retried, not failed at the first */
    assert_true(seen <= 100); /* and bounded */
    fdb_future_destroy(f);
    garble(NULL, 0);
}

static void test_get(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, "a");
    garble(&cfdb_msg_get_value_reply, 0);
    expect_bounded(fdb_transaction_get(tr, (const uint8_t *)k, kl, 0), "get");
    fdb_transaction_destroy(tr);
}

static void test_get_range(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char b[96], e[96];
    int bl = api_key(b, sizeof b, g_prefix, "");
    int el = api_key(e, sizeof e, g_prefix, "\xff");
    garble(&cfdb_msg_get_key_values_reply, 0);
    expect_bounded(fdb_transaction_get_range(tr, (const uint8_t *)b, bl, 0, 1, (const uint8_t *)e, el, 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0),
                   "get_range");
    fdb_transaction_destroy(tr);
}

/* NativeAPI getKey (read-your-writes off) */
static void test_get_key(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, "a");
    garble(&cfdb_msg_get_key_reply, 0);
    expect_bounded(fdb_transaction_get_key(tr, (const uint8_t *)k, kl, 0, 2, 0), "get_key");
    fdb_transaction_destroy(tr);
}

static void test_estimated_range_size(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char b[96], e[96];
    int bl = api_key(b, sizeof b, g_prefix, "");
    int el = api_key(e, sizeof e, g_prefix, "\xff");
    garble(&cfdb_msg_storage_metrics_reply, 0);
    expect_bounded(fdb_transaction_get_estimated_range_size_bytes(tr, (const uint8_t *)b, bl, (const uint8_t *)e, el),
                   "get_estimated_range_size_bytes");
    fdb_transaction_destroy(tr);
}

static void test_mapped_range(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char b[96], e[96];
    int bl = api_key(b, sizeof b, g_prefix, "");
    int el = api_key(e, sizeof e, g_prefix, "\xff");
    /* the mapper's contents do not matter: no reply decodes */
    static const uint8_t mapper[] = { 0x01, 'x', 0x00 };
    garble(&cfdb_msg_get_mapped_key_values_reply, 0);
    expect_bounded(fdb_transaction_get_mapped_range(tr, (const uint8_t *)b, bl, 0, 1, (const uint8_t *)e, el, 0, 1,
                                                    mapper, sizeof mapper, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0,
                                                    0),
                   "get_mapped_range");
    fdb_transaction_destroy(tr);
}

/* A watch lasts until it fires: garbage from its storage server ends it too. */
static void test_watch(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char k[96];
    int kl = api_key(k, sizeof k, g_prefix, "watched");
    FDBFuture *w = fdb_transaction_watch(tr, (const uint8_t *)k, kl);
    garble(&cfdb_msg_watch_value_reply, 0);
    assert_int_equal(api_commit(tr), 0);
    /* the change the storage server reports: each time again, as the client asks again */
    assert_int_equal(api_set_committed(k, kl, "changed", 7), 0);
    expect_bounded(w, "watch");
    fdb_transaction_destroy(tr);
}

/* Only replies that fail in a row count: a good reply starts the count again, so an operation
 * that needs a reply from each of three shards over an occasionally bad link still succeeds
 * after more bad replies in all than the bound. */
static void test_good_reply_resets_the_count(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    char b[96], e[96];
    int bl = api_key(b, sizeof b, g_prefix, "");
    int el = api_key(e, sizeof e, g_prefix, "\xff");
    garble(&cfdb_msg_storage_metrics_reply, 15); /* every 15th reply decodes */
    FDBFuture *f = fdb_transaction_get_estimated_range_size_bytes(tr, (const uint8_t *)b, bl, (const uint8_t *)e, el);
    assert_int_equal(api_wait_ms(f, WAIT_MS), 0);
    int seen = atomic_load(&g_garbled_seen);
    print_message("estimated size over three shards: ok after %d replies, 3 of them good\n", seen);
    assert_true(seen - 3 > 20); /* more bad replies than the bound, none 20 in a row */
    fdb_future_destroy(f);
    garble(NULL, 0);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_get_range),
        cmocka_unit_test(test_get_key),
        cmocka_unit_test(test_estimated_range_size),
        cmocka_unit_test(test_mapped_range),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_good_reply_resets_the_count),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
