/* SPDX-License-Identifier: Apache-2.0 */
/* Compile-time and run-time checks that <foundationdb/fdb_c.h> matches the
 * FoundationDB 7.3.77 C API at FDB_API_VERSION 730: enum values, macros and
 * struct layouts (values taken from bindings/c/foundationdb/fdb_c.h and
 * fdbclient/vexillographer/fdb.options at that tag). */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* ---- Version macros ------------------------------------------------------ */
_Static_assert(FDB_LATEST_API_VERSION == 730, "latest API version");
_Static_assert(FDB_LATEST_BINDINGS_API_VERSION == 730, "latest bindings API version");
_Static_assert(FDB_API_VERSION_CLIENT_TMP_DIR == 720, "client_tmp_dir version");
_Static_assert(FDB_API_VERSION_DISABLE_CLIENT_BYPASS == 720, "disable_client_bypass version");
_Static_assert(FDB_API_VERSION_TENANT_API_RELEASED == 720, "tenant API version");

#ifndef FDB_REMOVED_FUNCTION
#error FDB_REMOVED_FUNCTION missing
#endif
#if !defined(fdb_future_get_version) || !defined(fdb_future_is_error) || !defined(fdb_create_cluster) ||             \
    !defined(fdb_cluster_destroy) || !defined(fdb_future_get_cluster) || !defined(fdb_future_get_database) ||         \
    !defined(fdb_cluster_set_option) || !defined(fdb_cluster_create_database) ||                                     \
    !defined(fdb_transaction_get_range_selector)
#error removed-function traps missing at API version 730
#endif
#if !defined(fdb_select_api_version) || !defined(fdb_select_api_version_capped)
#error fdb_select_api_version macros missing
#endif
#if !defined(FDB_KEYSEL_LAST_LESS_THAN) || !defined(FDB_KEYSEL_FIRST_GREATER_OR_EQUAL)
#error key selector macros missing
#endif

/* ---- Enums ----------------------------------------------------------------- */
_Static_assert(FDB_STREAMING_MODE_WANT_ALL == -2, "streaming");
_Static_assert(FDB_STREAMING_MODE_ITERATOR == -1, "streaming");
_Static_assert(FDB_STREAMING_MODE_EXACT == 0, "streaming");
_Static_assert(FDB_STREAMING_MODE_SMALL == 1, "streaming");
_Static_assert(FDB_STREAMING_MODE_MEDIUM == 2, "streaming");
_Static_assert(FDB_STREAMING_MODE_LARGE == 3, "streaming");
_Static_assert(FDB_STREAMING_MODE_SERIAL == 4, "streaming");

_Static_assert(FDB_NET_OPTION_LOCAL_ADDRESS == 10, "net option");
_Static_assert(FDB_NET_OPTION_TRACE_ENABLE == 30, "net option");
_Static_assert(FDB_NET_OPTION_TRACE_FORMAT == 34, "net option");
_Static_assert(FDB_NET_OPTION_KNOB == 40, "net option");
_Static_assert(FDB_NET_OPTION_TLS_CERT_PATH == 43, "net option");
_Static_assert(FDB_NET_OPTION_TLS_KEY_BYTES == 45, "net option");
_Static_assert(FDB_NET_OPTION_DISABLE_MULTI_VERSION_CLIENT_API == 60, "net option");
_Static_assert(FDB_NET_OPTION_EXTERNAL_CLIENT_LIBRARY == 62, "net option");
_Static_assert(FDB_NET_OPTION_ENABLE_SLOW_TASK_PROFILING == 71, "net option");
_Static_assert(FDB_NET_OPTION_ENABLE_RUN_LOOP_PROFILING == 71, "net option");
_Static_assert(FDB_NET_OPTION_DISABLE_CLIENT_BYPASS == 72, "net option");
_Static_assert(FDB_NET_OPTION_CLIENT_TMP_DIR == 91, "net option");
_Static_assert(FDB_NET_OPTION_SUPPORTED_CLIENT_VERSIONS == 1000, "net option");
_Static_assert(FDB_NET_OPTION_EXTERNAL_CLIENT_TRANSPORT_ID == 1002, "net option");

_Static_assert(FDB_DB_OPTION_LOCATION_CACHE_SIZE == 10, "db option");
_Static_assert(FDB_DB_OPTION_MAX_WATCHES == 20, "db option");
_Static_assert(FDB_DB_OPTION_DATACENTER_ID == 22, "db option");
_Static_assert(FDB_DB_OPTION_TRANSACTION_TIMEOUT == 500, "db option");
_Static_assert(FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT == 501, "db option");
_Static_assert(FDB_DB_OPTION_TRANSACTION_AUTOMATIC_IDEMPOTENCY == 506, "db option");
_Static_assert(FDB_DB_OPTION_TRANSACTION_REPORT_CONFLICTING_KEYS == 702, "db option");
_Static_assert(FDB_DB_OPTION_TEST_CAUSAL_READ_RISKY == 900, "db option");

_Static_assert(FDB_TR_OPTION_CAUSAL_WRITE_RISKY == 10, "tr option");
_Static_assert(FDB_TR_OPTION_CAUSAL_READ_RISKY == 20, "tr option");
_Static_assert(FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE == 30, "tr option");
_Static_assert(FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE == 51, "tr option");
_Static_assert(FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE == 200, "tr option");
_Static_assert(FDB_TR_OPTION_PRIORITY_BATCH == 201, "tr option");
_Static_assert(FDB_TR_OPTION_ACCESS_SYSTEM_KEYS == 301, "tr option");
_Static_assert(FDB_TR_OPTION_READ_SYSTEM_KEYS == 302, "tr option");
_Static_assert(FDB_TR_OPTION_TIMEOUT == 500, "tr option");
_Static_assert(FDB_TR_OPTION_RETRY_LIMIT == 501, "tr option");
_Static_assert(FDB_TR_OPTION_MAX_RETRY_DELAY == 502, "tr option");
_Static_assert(FDB_TR_OPTION_SIZE_LIMIT == 503, "tr option");
_Static_assert(FDB_TR_OPTION_LOCK_AWARE == 700, "tr option");
_Static_assert(FDB_TR_OPTION_REPORT_CONFLICTING_KEYS == 712, "tr option");
_Static_assert(FDB_TR_OPTION_TAG == 800, "tr option");
_Static_assert(FDB_TR_OPTION_BYPASS_UNREADABLE == 1100, "tr option");
_Static_assert(FDB_TR_OPTION_AUTHORIZATION_TOKEN == 2000, "tr option");

_Static_assert(FDB_MUTATION_TYPE_ADD == 2, "mutation");
_Static_assert(FDB_MUTATION_TYPE_AND == 6 && FDB_MUTATION_TYPE_BIT_AND == 6, "mutation");
_Static_assert(FDB_MUTATION_TYPE_OR == 7 && FDB_MUTATION_TYPE_BIT_OR == 7, "mutation");
_Static_assert(FDB_MUTATION_TYPE_XOR == 8 && FDB_MUTATION_TYPE_BIT_XOR == 8, "mutation");
_Static_assert(FDB_MUTATION_TYPE_APPEND_IF_FITS == 9, "mutation");
_Static_assert(FDB_MUTATION_TYPE_MAX == 12 && FDB_MUTATION_TYPE_MIN == 13, "mutation");
_Static_assert(FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY == 14, "mutation");
_Static_assert(FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE == 15, "mutation");
_Static_assert(FDB_MUTATION_TYPE_BYTE_MIN == 16 && FDB_MUTATION_TYPE_BYTE_MAX == 17, "mutation");
_Static_assert(FDB_MUTATION_TYPE_COMPARE_AND_CLEAR == 20, "mutation");

_Static_assert(FDB_CONFLICT_RANGE_TYPE_READ == 0 && FDB_CONFLICT_RANGE_TYPE_WRITE == 1, "conflict range");

_Static_assert(FDB_ERROR_PREDICATE_RETRYABLE == 50000, "predicate");
_Static_assert(FDB_ERROR_PREDICATE_MAYBE_COMMITTED == 50001, "predicate");
_Static_assert(FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED == 50002, "predicate");

_Static_assert(FDB_BG_MUTATION_TYPE_SET_VALUE == 0 && FDB_BG_MUTATION_TYPE_CLEAR_RANGE == 1, "bg mutation");

/* ---- Types ------------------------------------------------------------------ */
_Static_assert(sizeof(fdb_error_t) == sizeof(int) && (fdb_error_t)-1 < 0, "fdb_error_t is int");
_Static_assert(sizeof(fdb_bool_t) == sizeof(int) && (fdb_bool_t)-1 < 0, "fdb_bool_t is int");
_Static_assert(sizeof(FDBStreamingMode) == sizeof(int), "enums are int sized");

/* FDBKeyValue and friends are packed to 4 bytes, so on LP64 there is no
 * padding after the int lengths. */
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(FDBKey) == 12, "FDBKey");
_Static_assert(offsetof(FDBKey, key) == 0 && offsetof(FDBKey, key_length) == 8, "FDBKey");
_Static_assert(_Alignof(FDBKey) == 4, "FDBKey packed");
_Static_assert(sizeof(FDBKeyValue) == 24, "FDBKeyValue");
_Static_assert(_Alignof(FDBKeyValue) == 4, "FDBKeyValue packed");
_Static_assert(offsetof(FDBKeyValue, key) == 0, "FDBKeyValue.key");
_Static_assert(offsetof(FDBKeyValue, key_length) == 8, "FDBKeyValue.key_length");
_Static_assert(offsetof(FDBKeyValue, value) == 12, "FDBKeyValue.value");
_Static_assert(offsetof(FDBKeyValue, value_length) == 20, "FDBKeyValue.value_length");
_Static_assert(sizeof(FDBKeySelector) == 20, "FDBKeySelector");
_Static_assert(offsetof(FDBKeySelector, orEqual) == 12 && offsetof(FDBKeySelector, offset) == 16, "FDBKeySelector");
_Static_assert(sizeof(FDBGetRangeReqAndResult) == 56, "FDBGetRangeReqAndResult");
_Static_assert(offsetof(FDBGetRangeReqAndResult, end) == 20, "FDBGetRangeReqAndResult.end");
_Static_assert(offsetof(FDBGetRangeReqAndResult, data) == 40, "FDBGetRangeReqAndResult.data");
_Static_assert(offsetof(FDBGetRangeReqAndResult, m_size) == 48, "FDBGetRangeReqAndResult.m_size");
_Static_assert(offsetof(FDBGetRangeReqAndResult, m_capacity) == 52, "FDBGetRangeReqAndResult.m_capacity");
_Static_assert(sizeof(FDBMappedKeyValue) == 112, "FDBMappedKeyValue");
_Static_assert(offsetof(FDBMappedKeyValue, value) == 12, "FDBMappedKeyValue.value");
_Static_assert(offsetof(FDBMappedKeyValue, getRange) == 24, "FDBMappedKeyValue.getRange");
_Static_assert(offsetof(FDBMappedKeyValue, buffer) == 80, "FDBMappedKeyValue.buffer");
_Static_assert(sizeof(FDBKeyRange) == 24, "FDBKeyRange");
_Static_assert(offsetof(FDBKeyRange, end_key) == 12 && offsetof(FDBKeyRange, end_key_length) == 20, "FDBKeyRange");
_Static_assert(sizeof(FDBGranuleSummary) == 56, "FDBGranuleSummary");
_Static_assert(offsetof(FDBGranuleSummary, snapshot_version) == 24, "FDBGranuleSummary");
_Static_assert(sizeof(FDBBGMutation) == 36, "FDBBGMutation");
_Static_assert(offsetof(FDBBGMutation, version) == 4 && offsetof(FDBBGMutation, param1_ptr) == 12, "FDBBGMutation");
_Static_assert(sizeof(FDBBGTenantPrefix) == 16 && offsetof(FDBBGTenantPrefix, prefix) == 4, "FDBBGTenantPrefix");
_Static_assert(sizeof(FDBBGEncryptionKey) == 40, "FDBBGEncryptionKey");
_Static_assert(offsetof(FDBBGEncryptionKey, base_kcv) == 16 && offsetof(FDBBGEncryptionKey, random_salt) == 20,
               "FDBBGEncryptionKey");
_Static_assert(sizeof(FDBBGEncryptionCtx) == 104, "FDBBGEncryptionCtx");
_Static_assert(offsetof(FDBBGEncryptionCtx, headerKey) == 48 && offsetof(FDBBGEncryptionCtx, iv) == 92,
               "FDBBGEncryptionCtx");
_Static_assert(sizeof(FDBBGFilePointer) == 148, "FDBBGFilePointer");
_Static_assert(offsetof(FDBBGFilePointer, file_offset) == 12 && offsetof(FDBBGFilePointer, encryption_ctx) == 44,
               "FDBBGFilePointer");
_Static_assert(sizeof(FDBBGFileDescription) == 216, "FDBBGFileDescription");
_Static_assert(offsetof(FDBBGFileDescription, snapshot_file_pointer) == 28 &&
                   offsetof(FDBBGFileDescription, delta_files) == 180 &&
                   offsetof(FDBBGFileDescription, tenant_prefix) == 200,
               "FDBBGFileDescription");
_Static_assert(sizeof(FDBReadBlobGranuleContext) == 40, "FDBReadBlobGranuleContext");
#endif

/* ---- Run-time checks through stubs of the library entry points ------------ */
static int seen_runtime_version, seen_header_version;

fdb_error_t fdb_select_api_version_impl(int runtime_version, int header_version)
{
    seen_runtime_version = runtime_version;
    seen_header_version = header_version;
    return 0;
}

static int max_api_version_stub = 730;

int fdb_get_max_api_version(void)
{
    return max_api_version_stub;
}

static void test_select_api_version_macro(void **state)
{
    (void)state;
    assert_int_equal(fdb_select_api_version(710), 0);
    assert_int_equal(seen_runtime_version, 710);
    assert_int_equal(seen_header_version, 730);

    max_api_version_stub = 720;
    assert_int_equal(fdb_select_api_version_capped(700), 0);
    assert_int_equal(seen_runtime_version, 700);
    assert_int_equal(seen_header_version, 720);
    max_api_version_stub = 730;
    assert_int_equal(fdb_select_api_version_capped(730), 0);
    assert_int_equal(seen_header_version, 730);
}

typedef struct {
    const uint8_t *key;
    int len, or_equal, offset;
} selector;

static selector sel(const uint8_t *key, int len, int or_equal, int offset)
{
    selector s = {key, len, or_equal, offset};
    return s;
}

static void test_key_selector_macros(void **state)
{
    (void)state;
    static const uint8_t k[] = "k";
    selector s = sel(FDB_KEYSEL_LAST_LESS_THAN(k, 1));
    assert_true(s.key == k && s.len == 1 && s.or_equal == 0 && s.offset == 0);
    s = sel(FDB_KEYSEL_LAST_LESS_OR_EQUAL(k, 1));
    assert_true(s.or_equal == 1 && s.offset == 0);
    s = sel(FDB_KEYSEL_FIRST_GREATER_THAN(k, 1));
    assert_true(s.or_equal == 1 && s.offset == 1);
    s = sel(FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(k, 1));
    assert_true(s.or_equal == 0 && s.offset == 1);
}

static void test_keyvalue_array_stride(void **state)
{
    (void)state;
    /* A packed array of FDBKeyValue must be walkable with plain indexing,
     * exactly as the library lays it out. */
    static const uint8_t a[] = "a", b[] = "bb";
    FDBKeyValue kv[2];
    kv[0].key = a;
    kv[0].key_length = 1;
    kv[0].value = b;
    kv[0].value_length = 2;
    kv[1] = kv[0];
    kv[1].key = b;
    assert_int_equal((const char *)&kv[1] - (const char *)&kv[0], sizeof(FDBKeyValue));
    assert_ptr_equal(kv[1].key, b);
    assert_int_equal(kv[1].value_length, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_api_version_macro),
        cmocka_unit_test(test_key_selector_macros),
        cmocka_unit_test(test_keyvalue_array_stride),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
