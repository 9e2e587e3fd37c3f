/* SPDX-License-Identifier: Apache-2.0 */
/* Error table and fdb_error_predicate classification, checked against the
 * values FoundationDB 7.3.77 defines (flow/include/flow/error_definitions.h,
 * bindings/c/fdb_c.cpp, flow/Error.cpp). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"

typedef struct {
    int code;
    const char *name;
    const char *message;
} sample;

/* Copied by hand from error_definitions.h at 7.3.77. */
static const sample samples[] = {
    {0, "success", "Success"},
    {1, "end_of_stream", "End of stream"},
    {1000, "operation_failed", "Operation failed"},
    {1007, "transaction_too_old", "Transaction is too old to perform reads or be committed"},
    {1009, "future_version", "Request for future version"},
    {1020, "not_committed", "Transaction not committed due to conflict with another transaction"},
    {1021, "commit_unknown_result", "Transaction may or may not have committed"},
    {1031, "transaction_timed_out", "Operation aborted because the transaction timed out"},
    {1037, "process_behind", "Storage process does not have recent mutations"},
    {1038, "database_locked", "Database is locked"},
    {1039, "cluster_version_changed", "The protocol version of the cluster has changed"},
    {1042, "commit_proxy_memory_limit_exceeded", "CommitProxy commit memory limit exceeded"},
    {1051, "batch_transaction_throttled", "Batch GRV request rate limit exceeded"},
    {1078, "grv_proxy_memory_limit_exceeded", "GetReadVersion proxy memory limit exceeded"},
    {1101, "operation_cancelled", "Asynchronous operation cancelled"},
    {1213, "tag_throttled", "Transaction tag is being throttled"},
    {1223, "proxy_tag_throttled", "Exceeded maximum proxy tag throttling duration"},
    {1510, "io_error", "Disk i/o operation failed"},
    {2000, "client_invalid_operation", "Invalid API call"},
    {2005, "inverted_range", "Range begin key larger than end key"},
    {2006, "invalid_option_value", "Option set with an invalid value"},
    {2009, "network_already_setup", "Network can be configured only once"},
    {2017, "used_during_commit", "Operation issued while a commit was outstanding"},
    {2032, "mapper_bad_range_decriptor", "\"{...}\" must be the last element of the mapper tuple"},
    {2101, "transaction_too_large", "Transaction exceeds byte limit"},
    {2102, "key_too_large", "Key length exceeds limit"},
    {2103, "value_too_large", "Value length exceeds limit"},
    {2131, "tenant_not_found", "Tenant does not exist"},
    {2134, "invalid_tenant_name", "Tenant name cannot begin with \\xff"},
    {2200, "api_version_unset", "API version is not set"},
    {2203, "api_version_not_supported", "API version not supported"},
    {4000, "unknown_error", "An unknown error occurred"},
    {4100, "internal_error", "An internal error occurred"},
    {4200, "not_implemented", "Not implemented yet"},
    {6000, "permission_denied", "Client tried to access unauthorized data"},
    {6005, "pkey_encode_error", "Failed to encode public/private key"},
};

static void test_samples(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        assert_true(cfdb_error_is_defined(samples[i].code));
        assert_string_equal(cfdb_error_name(samples[i].code), samples[i].name);
        assert_string_equal(cfdb_error_message(samples[i].code), samples[i].message);
    }
}

static void test_enum_values(void **state)
{
    (void)state;
    assert_int_equal(CFDB_ERR_SUCCESS, 0);
    assert_int_equal(CFDB_ERR_END_OF_STREAM, 1);
    assert_int_equal(CFDB_ERR_NOT_COMMITTED, 1020);
    assert_int_equal(CFDB_ERR_COMMIT_UNKNOWN_RESULT, 1021);
    assert_int_equal(CFDB_ERR_COMMIT_UNKNOWN_RESULT_FATAL, 1022);
    assert_int_equal(CFDB_ERR_TRANSACTION_CANCELLED, 1025);
    assert_int_equal(CFDB_ERR_TRANSACTION_TIMED_OUT, 1031);
    assert_int_equal(CFDB_ERR_CLUSTER_VERSION_CHANGED, 1039);
    assert_int_equal(CFDB_ERR_BROKEN_PROMISE, 1100);
    assert_int_equal(CFDB_ERR_OPERATION_CANCELLED, 1101);
    assert_int_equal(CFDB_ERR_CLIENT_INVALID_OPERATION, 2000);
    assert_int_equal(CFDB_ERR_API_VERSION_UNSET, 2200);
    assert_int_equal(CFDB_ERR_API_VERSION_ALREADY_SET, 2201);
    assert_int_equal(CFDB_ERR_API_VERSION_INVALID, 2202);
    assert_int_equal(CFDB_ERR_UNKNOWN_ERROR, 4000);
    assert_int_equal(CFDB_ERR_INTERNAL_ERROR, 4100);
    assert_int_equal(CFDB_ERR_PKEY_ENCODE_ERROR, 6005);
    assert_int_equal(CFDB_ERROR_PREDICATE_RETRYABLE, 50000);
    assert_int_equal(CFDB_ERROR_PREDICATE_MAYBE_COMMITTED, 50001);
    assert_int_equal(CFDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED, 50002);
}

/* The whole table: 343 codes at 7.3.77, each with a lowercase identifier name
 * and a non-empty message. */
static void test_table_shape(void **state)
{
    (void)state;
    int count = 0;
    for (int code = 0; code <= CFDB_ERROR_MAX_VALID_CODE; code++) {
        if (!cfdb_error_is_defined(code)) {
            assert_string_equal(cfdb_error_name(code), "UNKNOWN_ERROR");
            assert_string_equal(cfdb_error_message(code), "UNKNOWN_ERROR");
            continue;
        }
        count++;
        const char *name = cfdb_error_name(code);
        const char *msg = cfdb_error_message(code);
        assert_non_null(name);
        assert_non_null(msg);
        assert_true(strlen(name) > 0);
        assert_true(strlen(msg) > 0);
        for (const char *p = name; *p; p++)
            assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_');
    }
    assert_int_equal(count, 343);
}

/* fdb_get_error() in libfdb_c: codes outside [0, 30000] become unknown_error;
 * undefined codes inside the range give "UNKNOWN_ERROR". */
static void test_unknown_codes(void **state)
{
    (void)state;
    static const int in_range[] = {2, 999, 1013, 1019, 12345, 29999, 30000};
    for (size_t i = 0; i < sizeof(in_range) / sizeof(in_range[0]); i++) {
        assert_false(cfdb_error_is_defined(in_range[i]));
        assert_string_equal(cfdb_error_message(in_range[i]), "UNKNOWN_ERROR");
        assert_string_equal(cfdb_error_name(in_range[i]), "UNKNOWN_ERROR");
    }
    static const int out_of_range[] = {-1, -1020, 30001, 50000, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof(out_of_range) / sizeof(out_of_range[0]); i++) {
        assert_false(cfdb_error_is_defined(out_of_range[i]));
        assert_string_equal(cfdb_error_message(out_of_range[i]), "An unknown error occurred");
        assert_string_equal(cfdb_error_name(out_of_range[i]), "unknown_error");
    }
}

static const int maybe_committed_set[] = {1021, 1039};
static const int retryable_not_committed_set[] = {1020, 1007, 1009, 1038, 1078, 1042, 1051, 1037, 1213, 1223};

static int in_set(const int *set, size_t n, int code)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == code)
            return 1;
    return 0;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void test_predicate_sets(void **state)
{
    (void)state;
    for (size_t i = 0; i < NELEM(maybe_committed_set); i++) {
        int c = maybe_committed_set[i];
        assert_true(cfdb_error_predicate(CFDB_ERROR_PREDICATE_MAYBE_COMMITTED, c));
        assert_true(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, c));
        assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED, c));
    }
    for (size_t i = 0; i < NELEM(retryable_not_committed_set); i++) {
        int c = retryable_not_committed_set[i];
        assert_true(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED, c));
        assert_true(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, c));
        assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_MAYBE_COMMITTED, c));
    }
}

/* Every other code (defined or not, plus out-of-range values) is in none of
 * the classes; unknown predicate selectors are always false. */
static void test_predicate_everything_else(void **state)
{
    (void)state;
    for (int code = -5; code <= CFDB_ERROR_MAX_VALID_CODE + 5; code++) {
        int mc = in_set(maybe_committed_set, NELEM(maybe_committed_set), code);
        int rnc = in_set(retryable_not_committed_set, NELEM(retryable_not_committed_set), code);
        assert_int_equal(!!cfdb_error_predicate(CFDB_ERROR_PREDICATE_MAYBE_COMMITTED, code), mc);
        assert_int_equal(!!cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED, code), rnc);
        assert_int_equal(!!cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, code), mc || rnc);
        assert_false(cfdb_error_predicate(0, code));
        assert_false(cfdb_error_predicate(49999, code));
        assert_false(cfdb_error_predicate(50003, code));
    }
    /* Notable non-retryable codes. */
    assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, CFDB_ERR_COMMIT_UNKNOWN_RESULT_FATAL));
    assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, CFDB_ERR_TRANSACTION_TIMED_OUT));
    assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, CFDB_ERR_TRANSACTION_CANCELLED));
    assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, CFDB_ERR_SUCCESS));
    assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, INT_MIN));
    assert_false(cfdb_error_predicate(CFDB_ERROR_PREDICATE_RETRYABLE, INT_MAX));
}

/* errno (either sign) becomes a positive FoundationDB code, defined, never -1. */
static void test_from_errno(void **state)
{
    (void)state;
    assert_int_equal(cfdb_error_from_errno(0), 0);
    assert_int_equal(cfdb_error_from_errno(ENOMEM), CFDB_ERR_PLATFORM_ERROR);
    assert_int_equal(cfdb_error_from_errno(-ENOENT), CFDB_ERR_FILE_NOT_FOUND);
    assert_int_equal(cfdb_error_from_errno(EACCES), CFDB_ERR_FILE_NOT_READABLE);
    assert_int_equal(cfdb_error_from_errno(-EADDRINUSE), CFDB_ERR_BIND_FAILED);
    assert_int_equal(cfdb_error_from_errno(ETIMEDOUT), CFDB_ERR_TIMED_OUT);
    assert_int_equal(cfdb_error_from_errno(-ECONNREFUSED), CFDB_ERR_CONNECTION_FAILED);
    assert_int_equal(cfdb_error_from_errno(EIO), CFDB_ERR_IO_ERROR);
    for (int e = 1; e < 134; e++) {
        int code = cfdb_error_from_errno(-e);
        assert_true(code > 0 && cfdb_error_is_defined(code));
        assert_int_equal(code, cfdb_error_from_errno(e));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_enum_values),
        cmocka_unit_test(test_table_shape),
        cmocka_unit_test(test_unknown_codes),
        cmocka_unit_test(test_predicate_sets),
        cmocka_unit_test(test_predicate_everything_else),
        cmocka_unit_test(test_from_errno),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
