/* SPDX-License-Identifier: Apache-2.0 */
#ifndef FDB_C_OPTIONS_G_H
#define FDB_C_OPTIONS_G_H
#pragma once

/*
 * cfdb: option, mode and predicate codes of the FoundationDB C API (API
 * version 730). Included by fdb_c.h; applications should not include it
 * directly. The names and numbers are part of the libfdb_c ABI and must not
 * change. Each entry notes the value type fdb_*_set_option() expects.
 */

/* FDBNetworkOption: network options, for fdb_network_set_option() */
typedef enum {
    /* value: string; deprecated */
    FDB_NET_OPTION_LOCAL_ADDRESS = 10,

    /* value: string; deprecated */
    FDB_NET_OPTION_CLUSTER_FILE = 20,

    /* value: string */
    FDB_NET_OPTION_TRACE_ENABLE = 30,

    /* value: int64 (8 bytes, little-endian) */
    FDB_NET_OPTION_TRACE_ROLL_SIZE = 31,

    /* value: int64 (8 bytes, little-endian) */
    FDB_NET_OPTION_TRACE_MAX_LOGS_SIZE = 32,

    /* value: string */
    FDB_NET_OPTION_TRACE_LOG_GROUP = 33,

    /* value: string */
    FDB_NET_OPTION_TRACE_FORMAT = 34,

    /* value: string */
    FDB_NET_OPTION_TRACE_CLOCK_SOURCE = 35,

    /* value: string */
    FDB_NET_OPTION_TRACE_FILE_IDENTIFIER = 36,

    /* value: none */
    FDB_NET_OPTION_TRACE_SHARE_AMONG_CLIENT_THREADS = 37,

    /* value: none */
    FDB_NET_OPTION_TRACE_INITIALIZE_ON_SETUP = 38,

    /* value: string */
    FDB_NET_OPTION_TRACE_PARTIAL_FILE_SUFFIX = 39,

    /* value: string */
    FDB_NET_OPTION_KNOB = 40,

    /* value: string; deprecated */
    FDB_NET_OPTION_TLS_PLUGIN = 41,

    /* value: bytes */
    FDB_NET_OPTION_TLS_CERT_BYTES = 42,

    /* value: string */
    FDB_NET_OPTION_TLS_CERT_PATH = 43,

    /* value: bytes */
    FDB_NET_OPTION_TLS_KEY_BYTES = 45,

    /* value: string */
    FDB_NET_OPTION_TLS_KEY_PATH = 46,

    /* value: bytes */
    FDB_NET_OPTION_TLS_VERIFY_PEERS = 47,

    /* value: none */
    FDB_NET_OPTION_BUGGIFY_ENABLE = 48,

    /* value: none */
    FDB_NET_OPTION_BUGGIFY_DISABLE = 49,

    /* value: int64 (8 bytes, little-endian) */
    FDB_NET_OPTION_BUGGIFY_SECTION_ACTIVATED_PROBABILITY = 50,

    /* value: int64 (8 bytes, little-endian) */
    FDB_NET_OPTION_BUGGIFY_SECTION_FIRED_PROBABILITY = 51,

    /* value: bytes */
    FDB_NET_OPTION_TLS_CA_BYTES = 52,

    /* value: string */
    FDB_NET_OPTION_TLS_CA_PATH = 53,

    /* value: string */
    FDB_NET_OPTION_TLS_PASSWORD = 54,

    /* value: none */
    FDB_NET_OPTION_DISABLE_MULTI_VERSION_CLIENT_API = 60,

    /* value: none */
    FDB_NET_OPTION_CALLBACKS_ON_EXTERNAL_THREADS = 61,

    /* value: string */
    FDB_NET_OPTION_EXTERNAL_CLIENT_LIBRARY = 62,

    /* value: string */
    FDB_NET_OPTION_EXTERNAL_CLIENT_DIRECTORY = 63,

    /* value: none */
    FDB_NET_OPTION_DISABLE_LOCAL_CLIENT = 64,

    /* value: int64 (8 bytes, little-endian) */
    FDB_NET_OPTION_CLIENT_THREADS_PER_VERSION = 65,

    /* value: string */
    FDB_NET_OPTION_FUTURE_VERSION_CLIENT_LIBRARY = 66,

    /* value: none */
    FDB_NET_OPTION_RETAIN_CLIENT_LIBRARY_COPIES = 67,

    /* value: none */
    FDB_NET_OPTION_IGNORE_EXTERNAL_CLIENT_FAILURES = 68,

    /* value: none */
    FDB_NET_OPTION_FAIL_INCOMPATIBLE_CLIENT = 69,

    /* value: none */
    FDB_NET_OPTION_DISABLE_CLIENT_STATISTICS_LOGGING = 70,

    /* value: none; deprecated */
    FDB_NET_OPTION_ENABLE_SLOW_TASK_PROFILING = 71,

    /* value: none */
    FDB_NET_OPTION_ENABLE_RUN_LOOP_PROFILING = 71,

    /* value: none */
    FDB_NET_OPTION_DISABLE_CLIENT_BYPASS = 72,

    /* value: none */
    FDB_NET_OPTION_CLIENT_BUGGIFY_ENABLE = 80,

    /* value: none */
    FDB_NET_OPTION_CLIENT_BUGGIFY_DISABLE = 81,

    /* value: int64 (8 bytes, little-endian) */
    FDB_NET_OPTION_CLIENT_BUGGIFY_SECTION_ACTIVATED_PROBABILITY = 82,

    /* value: int64 (8 bytes, little-endian) */
    FDB_NET_OPTION_CLIENT_BUGGIFY_SECTION_FIRED_PROBABILITY = 83,

    /* value: string */
    FDB_NET_OPTION_DISTRIBUTED_CLIENT_TRACER = 90,

    /* value: string */
    FDB_NET_OPTION_CLIENT_TMP_DIR = 91,

    /* value: string; hidden, not for application use */
    FDB_NET_OPTION_SUPPORTED_CLIENT_VERSIONS = 1000,

    /* value: none; hidden, not for application use */
    FDB_NET_OPTION_EXTERNAL_CLIENT = 1001,

    /* value: int64 (8 bytes, little-endian); hidden, not for application use */
    FDB_NET_OPTION_EXTERNAL_CLIENT_TRANSPORT_ID = 1002
} FDBNetworkOption;

/* FDBDatabaseOption: database options, for fdb_database_set_option() */
typedef enum {
    /* value: int64 (8 bytes, little-endian) */
    FDB_DB_OPTION_LOCATION_CACHE_SIZE = 10,

    /* value: int64 (8 bytes, little-endian) */
    FDB_DB_OPTION_MAX_WATCHES = 20,

    /* value: string */
    FDB_DB_OPTION_MACHINE_ID = 21,

    /* value: string */
    FDB_DB_OPTION_DATACENTER_ID = 22,

    /* value: none */
    FDB_DB_OPTION_SNAPSHOT_RYW_ENABLE = 26,

    /* value: none */
    FDB_DB_OPTION_SNAPSHOT_RYW_DISABLE = 27,

    /* value: int64 (8 bytes, little-endian); default for transaction option 405 */
    FDB_DB_OPTION_TRANSACTION_LOGGING_MAX_FIELD_LENGTH = 405,

    /* value: int64 (8 bytes, little-endian); default for transaction option 500 */
    FDB_DB_OPTION_TRANSACTION_TIMEOUT = 500,

    /* value: int64 (8 bytes, little-endian); default for transaction option 501 */
    FDB_DB_OPTION_TRANSACTION_RETRY_LIMIT = 501,

    /* value: int64 (8 bytes, little-endian); default for transaction option 502 */
    FDB_DB_OPTION_TRANSACTION_MAX_RETRY_DELAY = 502,

    /* value: int64 (8 bytes, little-endian); default for transaction option 503 */
    FDB_DB_OPTION_TRANSACTION_SIZE_LIMIT = 503,

    /* value: none; default for transaction option 20 */
    FDB_DB_OPTION_TRANSACTION_CAUSAL_READ_RISKY = 504,

    /* value: none; deprecated; default for transaction option 23 */
    FDB_DB_OPTION_TRANSACTION_INCLUDE_PORT_IN_ADDRESS = 505,

    /* value: none; default for transaction option 505 */
    FDB_DB_OPTION_TRANSACTION_AUTOMATIC_IDEMPOTENCY = 506,

    /* value: none; default for transaction option 1100 */
    FDB_DB_OPTION_TRANSACTION_BYPASS_UNREADABLE = 700,

    /* value: none; default for transaction option 701 */
    FDB_DB_OPTION_TRANSACTION_USED_DURING_COMMIT_PROTECTION_DISABLE = 701,

    /* value: none; default for transaction option 712 */
    FDB_DB_OPTION_TRANSACTION_REPORT_CONFLICTING_KEYS = 702,

    /* value: none */
    FDB_DB_OPTION_USE_CONFIG_DATABASE = 800,

    /* value: int64 (8 bytes, little-endian) */
    FDB_DB_OPTION_TEST_CAUSAL_READ_RISKY = 900
} FDBDatabaseOption;

/* FDBTransactionOption: transaction options, for fdb_transaction_set_option() */
typedef enum {
    /* value: none */
    FDB_TR_OPTION_CAUSAL_WRITE_RISKY = 10,

    /* value: none */
    FDB_TR_OPTION_CAUSAL_READ_RISKY = 20,

    /* value: none */
    FDB_TR_OPTION_CAUSAL_READ_DISABLE = 21,

    /* value: none */
    FDB_TR_OPTION_INCLUDE_PORT_IN_ADDRESS = 23,

    /* value: none */
    FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE = 30,

    /* value: none; hidden, not for application use */
    FDB_TR_OPTION_COMMIT_ON_FIRST_PROXY = 40,

    /* value: none; hidden, not for application use */
    FDB_TR_OPTION_CHECK_WRITES_ENABLE = 50,

    /* value: none */
    FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE = 51,

    /* value: none; deprecated */
    FDB_TR_OPTION_READ_AHEAD_DISABLE = 52,

    /* value: none */
    FDB_TR_OPTION_READ_SERVER_SIDE_CACHE_ENABLE = 507,

    /* value: none */
    FDB_TR_OPTION_READ_SERVER_SIDE_CACHE_DISABLE = 508,

    /* value: none */
    FDB_TR_OPTION_READ_PRIORITY_NORMAL = 509,

    /* value: none */
    FDB_TR_OPTION_READ_PRIORITY_LOW = 510,

    /* value: none */
    FDB_TR_OPTION_READ_PRIORITY_HIGH = 511,

    /* value: none */
    FDB_TR_OPTION_DURABILITY_DATACENTER = 110,

    /* value: none */
    FDB_TR_OPTION_DURABILITY_RISKY = 120,

    /* value: none; deprecated */
    FDB_TR_OPTION_DURABILITY_DEV_NULL_IS_WEB_SCALE = 130,

    /* value: none */
    FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE = 200,

    /* value: none */
    FDB_TR_OPTION_PRIORITY_BATCH = 201,

    /* value: none */
    FDB_TR_OPTION_INITIALIZE_NEW_DATABASE = 300,

    /* value: none */
    FDB_TR_OPTION_ACCESS_SYSTEM_KEYS = 301,

    /* value: none */
    FDB_TR_OPTION_READ_SYSTEM_KEYS = 302,

    /* value: none */
    FDB_TR_OPTION_RAW_ACCESS = 303,

    /* value: none */
    FDB_TR_OPTION_BYPASS_STORAGE_QUOTA = 304,

    /* value: none; hidden, not for application use */
    FDB_TR_OPTION_DEBUG_DUMP = 400,

    /* value: string */
    FDB_TR_OPTION_DEBUG_RETRY_LOGGING = 401,

    /* value: string; deprecated */
    FDB_TR_OPTION_TRANSACTION_LOGGING_ENABLE = 402,

    /* value: string */
    FDB_TR_OPTION_DEBUG_TRANSACTION_IDENTIFIER = 403,

    /* value: none */
    FDB_TR_OPTION_LOG_TRANSACTION = 404,

    /* value: int64 (8 bytes, little-endian) */
    FDB_TR_OPTION_TRANSACTION_LOGGING_MAX_FIELD_LENGTH = 405,

    /* value: none */
    FDB_TR_OPTION_SERVER_REQUEST_TRACING = 406,

    /* value: int64 (8 bytes, little-endian); persists across reset/on_error */
    FDB_TR_OPTION_TIMEOUT = 500,

    /* value: int64 (8 bytes, little-endian); persists across reset/on_error */
    FDB_TR_OPTION_RETRY_LIMIT = 501,

    /* value: int64 (8 bytes, little-endian); persists across reset/on_error */
    FDB_TR_OPTION_MAX_RETRY_DELAY = 502,

    /* value: int64 (8 bytes, little-endian) */
    FDB_TR_OPTION_SIZE_LIMIT = 503,

    /* value: string; hidden, not for application use */
    FDB_TR_OPTION_IDEMPOTENCY_ID = 504,

    /* value: none */
    FDB_TR_OPTION_AUTOMATIC_IDEMPOTENCY = 505,

    /* value: none */
    FDB_TR_OPTION_SNAPSHOT_RYW_ENABLE = 600,

    /* value: none */
    FDB_TR_OPTION_SNAPSHOT_RYW_DISABLE = 601,

    /* value: none */
    FDB_TR_OPTION_LOCK_AWARE = 700,

    /* value: none */
    FDB_TR_OPTION_USED_DURING_COMMIT_PROTECTION_DISABLE = 701,

    /* value: none */
    FDB_TR_OPTION_READ_LOCK_AWARE = 702,

    /* value: none; hidden, not for application use */
    FDB_TR_OPTION_FIRST_IN_BATCH = 710,

    /* value: none */
    FDB_TR_OPTION_USE_PROVISIONAL_PROXIES = 711,

    /* value: none */
    FDB_TR_OPTION_REPORT_CONFLICTING_KEYS = 712,

    /* value: none */
    FDB_TR_OPTION_SPECIAL_KEY_SPACE_RELAXED = 713,

    /* value: none */
    FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES = 714,

    /* value: string */
    FDB_TR_OPTION_TAG = 800,

    /* value: string */
    FDB_TR_OPTION_AUTO_THROTTLE_TAG = 801,

    /* value: bytes */
    FDB_TR_OPTION_SPAN_PARENT = 900,

    /* value: none */
    FDB_TR_OPTION_EXPENSIVE_CLEAR_COST_ESTIMATION_ENABLE = 1000,

    /* value: none */
    FDB_TR_OPTION_BYPASS_UNREADABLE = 1100,

    /* value: none */
    FDB_TR_OPTION_USE_GRV_CACHE = 1101,

    /* value: none; hidden, not for application use */
    FDB_TR_OPTION_SKIP_GRV_CACHE = 1102,

    /* value: string; persists across reset/on_error; sensitive */
    FDB_TR_OPTION_AUTHORIZATION_TOKEN = 2000
} FDBTransactionOption;

/* FDBStreamingMode: range read streaming modes */
typedef enum {
    FDB_STREAMING_MODE_WANT_ALL = -2,

    FDB_STREAMING_MODE_ITERATOR = -1,

    FDB_STREAMING_MODE_EXACT = 0,

    FDB_STREAMING_MODE_SMALL = 1,

    FDB_STREAMING_MODE_MEDIUM = 2,

    FDB_STREAMING_MODE_LARGE = 3,

    FDB_STREAMING_MODE_SERIAL = 4
} FDBStreamingMode;

/* FDBMutationType: atomic operations, for fdb_transaction_atomic_op() */
typedef enum {
    FDB_MUTATION_TYPE_ADD = 2,

    /* deprecated */
    FDB_MUTATION_TYPE_AND = 6,

    FDB_MUTATION_TYPE_BIT_AND = 6,

    /* deprecated */
    FDB_MUTATION_TYPE_OR = 7,

    FDB_MUTATION_TYPE_BIT_OR = 7,

    /* deprecated */
    FDB_MUTATION_TYPE_XOR = 8,

    FDB_MUTATION_TYPE_BIT_XOR = 8,

    FDB_MUTATION_TYPE_APPEND_IF_FITS = 9,

    FDB_MUTATION_TYPE_MAX = 12,

    FDB_MUTATION_TYPE_MIN = 13,

    FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY = 14,

    FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE = 15,

    FDB_MUTATION_TYPE_BYTE_MIN = 16,

    FDB_MUTATION_TYPE_BYTE_MAX = 17,

    FDB_MUTATION_TYPE_COMPARE_AND_CLEAR = 20
} FDBMutationType;

/* FDBConflictRangeType: conflict range kinds, for fdb_transaction_add_conflict_range() */
typedef enum {
    FDB_CONFLICT_RANGE_TYPE_READ = 0,

    FDB_CONFLICT_RANGE_TYPE_WRITE = 1
} FDBConflictRangeType;

/* FDBErrorPredicate: error classes, for fdb_error_predicate() */
typedef enum {
    FDB_ERROR_PREDICATE_RETRYABLE = 50000,

    FDB_ERROR_PREDICATE_MAYBE_COMMITTED = 50001,

    FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED = 50002
} FDBErrorPredicate;

#endif /* FDB_C_OPTIONS_G_H */
