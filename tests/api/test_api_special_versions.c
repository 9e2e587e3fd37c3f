/* \xff\xff/management/version_epoch and min_required_commit_version through fdb_c.h against
 * cfdb-server, as libfdb_c 7.3.77's VersionEpochImpl and AdvanceVersionImpl answer them: the
 * decimal text of the int64 system keys, the raw 8-byte epoch written and cleared, the
 * advanceversion checks with their messages in \xff\xff/error_message. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SL(x) ((int)sizeof(x) - 1)
#define VE "\xff\xff/management/version_epoch"
#define MV "\xff\xff/management/min_required_commit_version"
#define EM "\xff\xff/error_message"

static int group_setup(void **state)
{
    (void)state;
    return api_env_setup(NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* a management write in its own transaction; on 2117 the message goes into msg */
static fdb_error_t manage(const char *key, int klen, const void *value, int vlen, char *msg, int cap)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    if (value)
        fdb_transaction_set(tr, S(key), klen, value, vlen);
    else
        fdb_transaction_clear(tr, S(key), klen);
    fdb_error_t e = api_commit(tr);
    if (msg) {
        msg[0] = 0;
        int present = 0, len = 0;
        if (e == 2117 && api_get(tr, EM, SL(EM), 0, &present, msg, cap - 1, &len) == 0 && present)
            msg[len] = 0;
    }
    fdb_transaction_destroy(tr);
    return e;
}

static fdb_error_t sget(const char *key, int klen, int *present, char *out, int cap)
{
    FDBTransaction *tr = api_tr();
    int len = 0;
    fdb_error_t e = api_get(tr, key, klen, 0, present, out, cap - 1, &len);
    if (!e && *present)
        out[len] = 0;
    fdb_transaction_destroy(tr);
    return e;
}

static int64_t raw_int64(const char *key, int klen, int *present)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    uint8_t raw[16];
    int len = 0;
    assert_int_equal(api_get(tr, key, klen, 0, present, raw, sizeof raw, &len), 0);
    fdb_transaction_destroy(tr);
    int64_t n = 0;
    if (*present) {
        assert_int_equal(len, 8);
        memcpy(&n, raw, 8);
    }
    return n;
}

static int64_t read_version(void)
{
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    assert_int_equal(api_wait(f), 0);
    int64_t v;
    assert_int_equal(fdb_future_get_int64(f, &v), 0);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return v;
}

static void test_version_epoch(void **state)
{
    (void)state;
    char v[64];
    int present = 1;
    assert_int_equal(sget(VE, SL(VE), &present, v, sizeof v), 0);
    assert_false(present);
    int64_t epoch = -1234567890123LL;
    assert_int_equal(manage(VE, SL(VE), &epoch, 8, NULL, 0), 0);
    assert_int_equal(raw_int64("\xff/versionEpoch", SL("\xff/versionEpoch"), &present), epoch);
    assert_true(present);
    assert_int_equal(sget(VE, SL(VE), &present, v, sizeof v), 0);
    assert_true(present);
    assert_string_equal(v, "-1234567890123");
    /* the value is the int64 itself: fewer than 8 bytes cannot be read */
    assert_int_equal(manage(VE, SL(VE), "123", 3, NULL, 0), 1044);
    /* while an epoch is set, advanceversion is refused */
    char msg[512];
    assert_int_equal(manage(MV, SL(MV), "99999999999", 11, msg, sizeof msg), 2117);
    assert_non_null(strstr(msg, "Illegal to modify the version while the version epoch is enabled"));
    assert_non_null(strstr(msg, "\"command\":\"advanceversion\""));
    assert_int_equal(manage(VE, SL(VE), NULL, 0, NULL, 0), 0);
    raw_int64("\xff/versionEpoch", SL("\xff/versionEpoch"), &present);
    assert_false(present);
    assert_int_equal(sget(VE, SL(VE), &present, v, sizeof v), 0);
    assert_false(present);
}

static void test_min_required_commit_version(void **state)
{
    (void)state;
    char v[64], msg[512];
    int present = 1;
    assert_int_equal(sget(MV, SL(MV), &present, v, sizeof v), 0);
    assert_false(present);
    int64_t want = read_version() + 1000000;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)want);
    assert_int_equal(manage(MV, SL(MV), text, (int)strlen(text), NULL, 0), 0);
    /* stored as the version after it */
    assert_int_equal(raw_int64("\xff/minRequiredCommitVersion", SL("\xff/minRequiredCommitVersion"), &present),
                     want + 1);
    assert_true(present);
    char expect[32];
    snprintf(expect, sizeof expect, "%lld", (long long)(want + 1));
    assert_int_equal(sget(MV, SL(MV), &present, v, sizeof v), 0);
    assert_true(present);
    assert_string_equal(v, expect);
    /* read-your-writes: the transaction's own value before commit */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S(MV), SL(MV), S("not a number"), 12);
    int len = 0;
    assert_int_equal(api_get(tr, MV, SL(MV), 0, &present, v, sizeof v - 1, &len), 0);
    assert_true(present);
    v[len] = 0;
    assert_string_equal(v, "not a number");
    fdb_transaction_destroy(tr);
    /* the checks, in libfdb_c's order and words */
    assert_int_equal(manage(MV, SL(MV), "12x", 3, msg, sizeof msg), 2117);
    assert_non_null(strstr(msg, "Invalid version(int64_t) argument: 12x"));
    assert_int_equal(manage(MV, SL(MV), "1", 1, msg, sizeof msg), 2117);
    assert_non_null(strstr(msg, "Current read version is larger than the given version"));
    assert_int_equal(manage(MV, SL(MV), "9191836036854775807", 19, msg, sizeof msg), 2117);
    assert_non_null(strstr(msg, "The given version is larger than the maximum allowed value"));
    assert_non_null(strstr(msg, "\"retriable\":false"));
    /* the largest allowed value is accepted */
    assert_int_equal(manage(MV, SL(MV), "9191836036854775806", 19, NULL, 0), 0);
    raw_int64("\xff/minRequiredCommitVersion", SL("\xff/minRequiredCommitVersion"), &present);
    assert_true(present);
    /* a clear clears the system key */
    assert_int_equal(manage(MV, SL(MV), NULL, 0, NULL, 0), 0);
    raw_int64("\xff/minRequiredCommitVersion", SL("\xff/minRequiredCommitVersion"), &present);
    assert_false(present);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_epoch),
        cmocka_unit_test(test_min_required_commit_version),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
