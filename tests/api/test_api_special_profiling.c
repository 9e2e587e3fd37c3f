/* \xff\xff/management/profiling/ below API 720 (7.3.77 fdbclient/SpecialKeySpace.actor.cpp
 * ClientProfilingImpl; NativeAPI.actor.cpp registers it with deprecatedVersion 720, so this
 * program selects API 710 before anything else). Expectations by hand:
 *   - unset, both options read "default" (GlobalConfig::get<T> default: infinity / -1);
 *   - a set is read back as written within the transaction (the write map's entry);
 *   - commit: sample rate "0.25" is stored as the tuple double 21 bf d0 00 00 00 00 00 00
 *     (0x3fd0000000000000, sign bit flipped) at \xff/globalConfig/k/config/fdb_client_info/
 *     client_txn_sample_rate, size limit "1000" as the tuple integer 16 03 e8; afterwards the
 *     database's global-config view answers "0.250000" (std::to_string) and "1000";
 *   - "default" clears the key; values boost::lexical_cast refuses fail the commit with 2117
 *     and the JSON message; clears fail with 2117. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define SL(x) ((int)sizeof(x) - 1)
#define PR "\xff\xff/management/profiling/"
#define RATE PR "client_txn_sample_rate"
#define SIZE PR "client_txn_size_limit"
#define RAW_RATE "\xff/globalConfig/k/config/fdb_client_info/client_txn_sample_rate"
#define RAW_SIZE "\xff/globalConfig/k/config/fdb_client_info/client_txn_size_limit"

static int group_setup(void **state)
{
    (void)state;
    if (fdb_select_api_version(710))
        return -1;
    return api_env_setup(NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

static FDBTransaction *writer(void)
{
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0), 0);
    return tr;
}

static void check(FDBTransaction *tr, const char *key, int klen, const char *want, int wlen)
{
    int present = 0, len = 0;
    char buf[256];
    assert_int_equal(api_get(tr, key, klen, 0, &present, buf, sizeof buf, &len), 0);
    if (!want) {
        assert_false(present);
        return;
    }
    assert_true(present);
    assert_int_equal(len, wlen);
    assert_memory_equal(buf, want, (size_t)wlen);
}

static void check_raw(const char *key, int klen, const void *want, int wlen)
{
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0), 0);
    check(tr, key, klen, want, wlen);
    fdb_transaction_destroy(tr);
}

/* Waits (5 s at most) until a fresh transaction reads want at key. */
static void await(const char *key, int klen, const char *want)
{
    for (int i = 0; i < 100; i++) {
        FDBTransaction *tr = api_tr();
        int present = 0, len = 0;
        char buf[64];
        assert_int_equal(api_get(tr, key, klen, 0, &present, buf, sizeof buf - 1, &len), 0);
        fdb_transaction_destroy(tr);
        if (present && len == (int)strlen(want) && memcmp(buf, want, (size_t)len) == 0)
            return;
        struct timespec ts = { 0, 50000000L };
        nanosleep(&ts, NULL);
    }
    fail_msg("the view never showed %s", want);
}

static fdb_error_t commit_value(const char *key, int klen, const char *value, char *msg, size_t cap)
{
    FDBTransaction *tr = writer();
    fdb_transaction_set(tr, (const uint8_t *)key, klen, (const uint8_t *)value, (int)strlen(value));
    check(tr, key, klen, value, (int)strlen(value)); /* the written value, before commit */
    fdb_error_t err = api_commit(tr);
    if (err && msg) {
        int present = 0, len = 0;
        assert_int_equal(api_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), 0, &present, msg,
                                 (int)cap - 1, &len),
                         0);
        msg[present ? len : 0] = 0;
    }
    fdb_transaction_destroy(tr);
    return err;
}

static void test_profiling(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    check(tr, RATE, SL(RATE), "default", 7);
    check(tr, SIZE, SL(SIZE), "default", 7);
    fdb_transaction_destroy(tr);

    char msg[512];
    assert_int_equal(commit_value(RATE, SL(RATE), "0.25", msg, sizeof msg), 0);
    static const uint8_t rate[] = { 0x21, 0xbf, 0xd0, 0, 0, 0, 0, 0, 0 };
    check_raw(RAW_RATE, SL(RAW_RATE), (const char *)rate, sizeof rate);
    assert_int_equal(commit_value(SIZE, SL(SIZE), "1000", msg, sizeof msg), 0);
    static const uint8_t size[] = { 0x16, 0x03, 0xe8 };
    check_raw(RAW_SIZE, SL(RAW_SIZE), (const char *)size, sizeof size);
    await(RATE, SL(RATE), "0.250000");
    await(SIZE, SL(SIZE), "1000");

    /* lexical_cast refuses: the commit fails, nothing changes */
    assert_int_equal(commit_value(RATE, SL(RATE), "0.5x", msg, sizeof msg), 2117);
    assert_string_equal(msg, "{\"command\":\"profile\",\"message\":\"Invalid transaction sample rate(double): 0.5x\","
                             "\"retriable\":false}");
    assert_int_equal(commit_value(SIZE, SL(SIZE), "1.5", msg, sizeof msg), 2117);
    assert_string_equal(msg, "{\"command\":\"profile\",\"message\":\"Invalid transaction size limit(int64_t): 1.5\","
                             "\"retriable\":false}");
    check_raw(RAW_RATE, SL(RAW_RATE), (const char *)rate, sizeof rate);

    /* clears are refused */
    tr = writer();
    fdb_transaction_clear(tr, (const uint8_t *)RATE, SL(RATE));
    assert_int_equal(api_commit(tr), 2117);
    fdb_transaction_destroy(tr);

    /* "default" clears the global-config key */
    assert_int_equal(commit_value(RATE, SL(RATE), "default", msg, sizeof msg), 0);
    check_raw(RAW_RATE, SL(RAW_RATE), NULL, 0);
    await(RATE, SL(RATE), "default");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiling),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
