/* on_error classification and backoff sequences (Part 6 §6.2-6.3), key/value checks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "retry_policy.h"

#define B(s) cfdb_bytes_make((s), sizeof(s) - 1)
#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-12)

static void test_classify(void **state)
{
    (void)state;
    const int r[] = { 1020, 1021, 1038, 1042, 1078, 1037, 1051, 1213, 1079, 1223 };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        assert_int_equal(cfdb_retry_classify(r[i]), CFDB_RETRY_BACKOFF);
    assert_int_equal(cfdb_retry_classify(1007), CFDB_RETRY_FUTURE);
    assert_int_equal(cfdb_retry_classify(1009), CFDB_RETRY_FUTURE);
    const int no[] = { 0, 1001, 1004, 1006, 1025, 1029, 1030, 1031, 1039, 1100, 1211, 2101, 2102, 2000, 4000 };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_int_equal(cfdb_retry_classify(no[i]), CFDB_RETRY_NO);
}

static void test_backoff_sequence(void **state)
{
    (void)state;
    cfdb_retry_state s;
    cfdb_retry_state_init(&s);
    double d;
    /* full delay with random01 = 1 (upper bound): 0.01, 0.02, 0.04 ... capped at 1.0 */
    double expect = 0.01;
    for (int i = 0; i < 12; i++) {
        assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), 0);
        NEAR(d, expect);
        expect = expect * 2 > 1.0 ? 1.0 : expect * 2;
    }
    NEAR(s.backoff, 1.0);
    /* jitter multiplies */
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 0.25, 0, &d), 0);
    NEAR(d, 0.25);
    /* F errors: min(0.01, max_backoff) and backoff untouched */
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_TRANSACTION_TOO_OLD, 0.5, 0, &d), 0);
    NEAR(d, 0.01);
    NEAR(s.backoff, 1.0);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_FUTURE_VERSION, 0.5, 0, &d), 0);
    NEAR(d, 0.01);
    assert_int_equal(s.retries, 15);

    /* memory-limit errors grow to 30 s */
    cfdb_retry_state_init(&s);
    expect = 0.01;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_GRV_PROXY_MEMORY_LIMIT_EXCEEDED, 1.0, 0, &d), 0);
        NEAR(d, expect);
        expect = expect * 2 > 30.0 ? 30.0 : expect * 2;
    }
    NEAR(s.backoff, 30.0);
    /* ...and a normal error then caps the stored backoff back to max_backoff */
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), 0);
    NEAR(d, 30.0);
    NEAR(s.backoff, 1.0);

    /* MAX_RETRY_DELAY option */
    cfdb_retry_state_init(&s);
    cfdb_retry_set_max_retry_delay_ms(&s, 50);
    double seq[] = { 0.01, 0.02, 0.04, 0.05, 0.05 };
    for (int i = 0; i < 5; i++) {
        assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_COMMIT_UNKNOWN_RESULT, 1.0, 0, &d), 0);
        NEAR(d, seq[i]);
    }
    cfdb_retry_set_max_retry_delay_ms(&s, 5);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_FUTURE_VERSION, 1.0, 0, &d), 0);
    NEAR(d, 0.005);

    /* tag throttling: at least the throttle, at most 5 s, then jitter */
    cfdb_retry_state_init(&s);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_TAG_THROTTLED, 1.0, 2.0, &d), 0);
    NEAR(d, 2.0);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_TAG_THROTTLED, 0.5, 60.0, &d), 0);
    NEAR(d, 2.5);
    NEAR(s.backoff, 0.04);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_PROXY_TAG_THROTTLED, 1.0, 60.0, &d), 0);
    NEAR(d, 0.04); /* the throttle only counts for tag_throttled */
    NEAR(s.proxy_tag_throttled_duration, 5.0);
}

static void test_non_retryable_and_limits(void **state)
{
    (void)state;
    cfdb_retry_state s;
    double d;
    cfdb_retry_state_init(&s);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_KEY_TOO_LARGE, 1.0, 0, &d), CFDB_ERR_KEY_TOO_LARGE);
    /* the transaction is now cancelled: every on_error fails with transaction_cancelled */
    assert_int_equal(s.cancelled_error, CFDB_ERR_TRANSACTION_CANCELLED);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), CFDB_ERR_TRANSACTION_CANCELLED);
    cfdb_retry_state_full_reset(&s);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), 0);

    /* success -> client_invalid_operation */
    cfdb_retry_state_init(&s);
    assert_int_equal(cfdb_retry_on_error(&s, 0, 1.0, 0, &d), CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* broken_promise -> transaction_cancelled */
    cfdb_retry_state_init(&s);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_BROKEN_PROMISE, 1.0, 0, &d), CFDB_ERR_TRANSACTION_CANCELLED);
    /* a timed-out transaction reports the timeout */
    cfdb_retry_state_init(&s);
    s.cancelled_error = CFDB_ERR_TRANSACTION_TIMED_OUT;
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), CFDB_ERR_TRANSACTION_TIMED_OUT);

    /* retry limit: the (limit+1)-th on_error returns the error it was given */
    cfdb_retry_state_init(&s);
    cfdb_retry_set_retry_limit(&s, 2);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), 0);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_TRANSACTION_TOO_OLD, 1.0, 0, &d), 0);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), CFDB_ERR_NOT_COMMITTED);
    assert_int_equal(s.cancelled_error, CFDB_ERR_TRANSACTION_CANCELLED);
    cfdb_retry_state_init(&s);
    cfdb_retry_set_retry_limit(&s, 0);
    assert_int_equal(cfdb_retry_on_error(&s, CFDB_ERR_NOT_COMMITTED, 1.0, 0, &d), CFDB_ERR_NOT_COMMITTED);
}

static void test_key_checks(void **state)
{
    (void)state;
    static uint8_t big[40000];
    memset(big, 'a', sizeof big);
    bool noop;
    assert_int_equal(cfdb_check_set(B("k"), B("v"), false, false), 0);
    assert_int_equal(cfdb_check_set(B("\xff"), B("v"), false, false), CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    assert_int_equal(cfdb_check_set(B("\xff/x"), B("v"), true, false), 0);
    assert_int_equal(cfdb_check_set(B("\xff\xff"), B("v"), true, false), CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    assert_int_equal(cfdb_check_set(B("\xff/metadataVersion"), B("v"), true, false),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_check_set(cfdb_bytes_make(big, 10000), B("v"), false, false), 0);
    assert_int_equal(cfdb_check_set(cfdb_bytes_make(big, 10001), B("v"), false, false), CFDB_ERR_KEY_TOO_LARGE);
    assert_int_equal(cfdb_check_set(cfdb_bytes_make(big, 10008), B("v"), false, true), 0);
    assert_int_equal(cfdb_check_set(cfdb_bytes_make(big, 10009), B("v"), false, true), CFDB_ERR_KEY_TOO_LARGE);
    big[0] = 0xff;
    assert_int_equal(cfdb_check_set(cfdb_bytes_make(big, 30000), B("v"), true, false), 0);
    assert_int_equal(cfdb_check_set(cfdb_bytes_make(big, 30001), B("v"), true, false), CFDB_ERR_KEY_TOO_LARGE);
    big[0] = 'a';
    assert_int_equal(cfdb_check_set(B("k"), cfdb_bytes_make(big, 100000), false, false), 0);
    assert_int_equal(cfdb_check_set(B("k"), cfdb_bytes_make(big, 100001), false, false), CFDB_ERR_VALUE_TOO_LARGE);
    /* key errors come before value errors */
    assert_int_equal(cfdb_check_set(cfdb_bytes_make(big, 10001), cfdb_bytes_make(big, 100001), false, false),
                     CFDB_ERR_KEY_TOO_LARGE);

    static const uint8_t zeros[14] = { 0 };
    assert_int_equal(cfdb_check_atomic(CFDB_MUT_SET_VERSIONSTAMPED_VALUE, B("\xff/metadataVersion"),
                                       cfdb_bytes_make(zeros, 14), false, false),
                     0);
    assert_int_equal(cfdb_check_atomic(CFDB_MUT_ADD_VALUE, B("\xff/metadataVersion"), cfdb_bytes_make(zeros, 14),
                                       false, false),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_check_atomic(CFDB_MUT_SET_VALUE, B("k"), B("v"), false, false),
                     CFDB_ERR_INVALID_MUTATION_TYPE);
    assert_int_equal(cfdb_check_atomic(30, B("k"), B("v"), false, false), CFDB_ERR_INVALID_MUTATION_TYPE);
    assert_int_equal(cfdb_check_atomic(CFDB_MUT_ADD_VALUE, B("\xff"), B("v"), false, false),
                     CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    assert_int_equal(cfdb_check_atomic(CFDB_MUT_ADD_VALUE, B("k"), B("v"), false, false), 0);

    assert_int_equal(cfdb_check_clear_range(B("b"), B("a"), false), CFDB_ERR_INVERTED_RANGE);
    assert_int_equal(cfdb_check_clear_range(B("a"), B("\xff"), false), 0);
    assert_int_equal(cfdb_check_clear_range(B("a"), B("\xff\x00"), false), CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    assert_int_equal(cfdb_check_clear_key(B("\xff"), false, &noop), CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    assert_int_equal(cfdb_check_clear_key(cfdb_bytes_make(big, 20000), false, &noop), 0);
    assert_true(noop);

    assert_int_equal(cfdb_check_get(B("\xff"), false, &noop), CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);
    assert_int_equal(cfdb_check_get(B("\xff/metadataVersion"), false, &noop), 0);
    assert_int_equal(cfdb_check_get(cfdb_bytes_make(big, 10008), false, &noop), 0);
    assert_false(noop);
    assert_int_equal(cfdb_check_get(cfdb_bytes_make(big, 10009), false, &noop), 0);
    assert_true(noop);
    assert_int_equal(cfdb_check_selector_key(B("\xff"), false), 0);
    assert_int_equal(cfdb_check_selector_key(B("\xff\x00"), false), CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);

    assert_int_equal(cfdb_check_conflict_range(B("b"), B("a"), false, false), CFDB_ERR_INVERTED_RANGE);
    assert_int_equal(cfdb_check_conflict_range(B("\xff/metadataVersion"), cfdb_bytes_make("\xff/metadataVersion\0", 18),
                                               false, false),
                     0);
    assert_int_equal(cfdb_check_conflict_range(B("\xff/metadataVersion"), cfdb_bytes_make("\xff/metadataVersion\0", 18),
                                               true, false),
                     CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE);

    cfdb_bytes t = cfdb_truncate_range_key(cfdb_bytes_make(big, 20000));
    assert_int_equal(t.len, 10009);

    cfdb_mutation m = { CFDB_MUT_SET_VALUE, B("key"), B("value") };
    cfdb_key_range r = { B("a"), B("b") };
    uint64_t sz = cfdb_commit_size(&m, 1, &r, 1, &r, 1);
    assert_int_equal(sz, CFDB_SIZEOF_MUTATION_REF + 8 + 2 * (CFDB_SIZEOF_KEY_RANGE_REF + 2));
    assert_int_equal(cfdb_check_commit_size(10000000, CFDB_KNOB_TRANSACTION_SIZE_LIMIT), 0);
    assert_int_equal(cfdb_check_commit_size(10000001, CFDB_KNOB_TRANSACTION_SIZE_LIMIT),
                     CFDB_ERR_TRANSACTION_TOO_LARGE);
}

static void test_options(void **state)
{
    (void)state;
    int64_t v;
    uint8_t le[8] = { 0x10, 0x27, 0, 0, 0, 0, 0, 0 }; /* 10000 */
    assert_int_equal(cfdb_option_int(le, 8, CFDB_OPTION_TIMEOUT_MIN, CFDB_OPTION_TIMEOUT_MAX, &v), 0);
    assert_int_equal(v, 10000);
    assert_int_equal(cfdb_option_int(le, 4, 0, 100000, &v), CFDB_ERR_INVALID_OPTION_VALUE);
    assert_int_equal(cfdb_option_int(NULL, 0, 0, 100000, &v), CFDB_ERR_INVALID_OPTION_VALUE);
    assert_int_equal(cfdb_option_int(le, 8, 0, 9999, &v), CFDB_ERR_INVALID_OPTION_VALUE);
    uint8_t minus1[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    assert_int_equal(cfdb_option_int(minus1, 8, CFDB_OPTION_RETRY_LIMIT_MIN, CFDB_OPTION_RETRY_LIMIT_MAX, &v), 0);
    assert_int_equal(v, -1);
    assert_int_equal(cfdb_option_int(minus1, 8, CFDB_OPTION_TIMEOUT_MIN, CFDB_OPTION_TIMEOUT_MAX, &v),
                     CFDB_ERR_INVALID_OPTION_VALUE);
    uint8_t sz[8] = { 31, 0, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(cfdb_option_int(sz, 8, CFDB_OPTION_SIZE_LIMIT_MIN, CFDB_OPTION_SIZE_LIMIT_MAX, &v),
                     CFDB_ERR_INVALID_OPTION_VALUE);
    NEAR(cfdb_timeout_deadline(100.0, 0), 0);
    NEAR(cfdb_timeout_deadline(100.0, 2500), 102.5);
    /* approximate size bookkeeping */
    assert_int_equal(cfdb_approx_size_set(3, 5, true), 3 + 5 + CFDB_SIZEOF_MUTATION_REF + CFDB_SIZEOF_KEY_RANGE_REF + 7);
    assert_int_equal(cfdb_approx_size_set(3, 5, false), 3 + 5 + CFDB_SIZEOF_MUTATION_REF);
    assert_int_equal(cfdb_approx_size_clear_key(3, false), 7 + CFDB_SIZEOF_KEY_RANGE_REF);
    assert_int_equal(cfdb_approx_size_clear_range(1, 2, true), 3 + CFDB_SIZEOF_MUTATION_REF + CFDB_SIZEOF_KEY_RANGE_REF + 3);
    assert_int_equal(cfdb_approx_size_conflict_range(1, 2), 3 + CFDB_SIZEOF_KEY_RANGE_REF);
    assert_int_equal(cfdb_approx_size_read_key(4), 9 + CFDB_SIZEOF_KEY_RANGE_REF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_backoff_sequence),
        cmocka_unit_test(test_non_retryable_and_limits),
        cmocka_unit_test(test_key_checks),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
