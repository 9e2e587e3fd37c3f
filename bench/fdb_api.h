/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: the slice of the public fdb_c.h API (API version 730) that the
 * harness uses, resolved at run time with dlopen + dlsym so that any
 * library exporting the fdb_c ABI can be an arm.
 *
 * When <foundationdb/fdb_c.h> is available its types are used and every
 * function pointer type is taken from the header's own prototype, so a
 * signature mismatch is a compile error; otherwise the types are declared
 * here from the published fdb_c 7.3 signatures.
 */
#ifndef CFDB_BENCH_FDB_API_H
#define CFDB_BENCH_FDB_API_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_FDB_API_VERSION 730

#if defined(__has_include)
#if __has_include(<foundationdb/fdb_c.h>)
#ifndef FDB_API_VERSION
#define FDB_API_VERSION BENCH_FDB_API_VERSION
#endif
#include <foundationdb/fdb_c.h>
#define BENCH_HAVE_FDB_C_H 1
#endif
#endif

#ifdef BENCH_HAVE_FDB_C_H
#define BENCH_FN(name) __typeof__(&name)
#else
typedef struct FDB_future FDBFuture;
typedef struct FDB_database FDBDatabase;
typedef struct FDB_transaction FDBTransaction;
typedef int fdb_error_t;
typedef int fdb_bool_t;
#pragma pack(push, 4)
typedef struct keyvalue {
    const uint8_t *key;
    int key_length;
    const uint8_t *value;
    int value_length;
} FDBKeyValue;
#pragma pack(pop)
#endif

/* Streaming mode EXACT (0) and WANT_ALL (-2) are ABI constants. */
#define BENCH_STREAMING_MODE_EXACT 0
#define BENCH_STREAMING_MODE_WANT_ALL (-2)

typedef struct bench_fdb_api {
    void *handle;
#ifdef BENCH_HAVE_FDB_C_H
    BENCH_FN(fdb_select_api_version_impl) select_api_version_impl;
    BENCH_FN(fdb_get_error) get_error;
    BENCH_FN(fdb_network_set_option) network_set_option;
    BENCH_FN(fdb_setup_network) setup_network;
    BENCH_FN(fdb_run_network) run_network;
    BENCH_FN(fdb_stop_network) stop_network;
    BENCH_FN(fdb_create_database) create_database;
    BENCH_FN(fdb_database_destroy) database_destroy;
    BENCH_FN(fdb_database_create_transaction) database_create_transaction;
    BENCH_FN(fdb_transaction_destroy) transaction_destroy;
    BENCH_FN(fdb_transaction_get_read_version) transaction_get_read_version;
    BENCH_FN(fdb_transaction_get) transaction_get;
    BENCH_FN(fdb_transaction_get_range) transaction_get_range;
    BENCH_FN(fdb_transaction_set) transaction_set;
    BENCH_FN(fdb_transaction_commit) transaction_commit;
    BENCH_FN(fdb_transaction_on_error) transaction_on_error;
    BENCH_FN(fdb_future_block_until_ready) future_block_until_ready;
    BENCH_FN(fdb_future_get_error) future_get_error;
    BENCH_FN(fdb_future_get_value) future_get_value;
    BENCH_FN(fdb_future_get_keyvalue_array) future_get_keyvalue_array;
    BENCH_FN(fdb_future_get_int64) future_get_int64;
    BENCH_FN(fdb_future_destroy) future_destroy;
#else
    fdb_error_t (*select_api_version_impl)(int runtime_version, int header_version);
    const char *(*get_error)(fdb_error_t code);
    fdb_error_t (*network_set_option)(int option, const uint8_t *value, int value_length);
    fdb_error_t (*setup_network)(void);
    fdb_error_t (*run_network)(void);
    fdb_error_t (*stop_network)(void);
    fdb_error_t (*create_database)(const char *cluster_file_path, FDBDatabase **out_database);
    void (*database_destroy)(FDBDatabase *d);
    fdb_error_t (*database_create_transaction)(FDBDatabase *d, FDBTransaction **out_transaction);
    void (*transaction_destroy)(FDBTransaction *tr);
    FDBFuture *(*transaction_get_read_version)(FDBTransaction *tr);
    FDBFuture *(*transaction_get)(FDBTransaction *tr, const uint8_t *key_name, int key_name_length,
                                  fdb_bool_t snapshot);
    FDBFuture *(*transaction_get_range)(FDBTransaction *tr, const uint8_t *begin_key_name,
                                        int begin_key_name_length, fdb_bool_t begin_or_equal,
                                        int begin_offset, const uint8_t *end_key_name,
                                        int end_key_name_length, fdb_bool_t end_or_equal,
                                        int end_offset, int limit, int target_bytes, int mode,
                                        int iteration, fdb_bool_t snapshot, fdb_bool_t reverse);
    void (*transaction_set)(FDBTransaction *tr, const uint8_t *key_name, int key_name_length,
                            const uint8_t *value, int value_length);
    FDBFuture *(*transaction_commit)(FDBTransaction *tr);
    FDBFuture *(*transaction_on_error)(FDBTransaction *tr, fdb_error_t error);
    fdb_error_t (*future_block_until_ready)(FDBFuture *f);
    fdb_error_t (*future_get_error)(FDBFuture *f);
    fdb_error_t (*future_get_value)(FDBFuture *f, fdb_bool_t *out_present,
                                    const uint8_t **out_value, int *out_value_length);
    fdb_error_t (*future_get_keyvalue_array)(FDBFuture *f, const FDBKeyValue **out_kv,
                                             int *out_count, fdb_bool_t *out_more);
    fdb_error_t (*future_get_int64)(FDBFuture *f, int64_t *out);
    void (*future_destroy)(FDBFuture *f);
#endif
} bench_fdb_api;

/* dlopen(path) and resolve every function above. On failure returns -1 and
 * writes a message into err. */
int bench_fdb_load(bench_fdb_api *api, const char *path, char *err, size_t errlen);

/* fdb_get_error() through the loaded library (never NULL). */
const char *bench_fdb_strerror(const bench_fdb_api *api, fdb_error_t e);

/* Block on f, return its error and destroy nothing. */
fdb_error_t bench_fdb_wait(const bench_fdb_api *api, FDBFuture *f);

#endif
