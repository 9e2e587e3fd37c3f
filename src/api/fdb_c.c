/* The public C API of libfdb_c 7.3 (fdb_c.h, API version 730) over cfdb's client engine.
 * Handles are the engine's objects: FDBFuture is a cfdb_future, FDBTransaction a cfdb_txn,
 * FDBDatabase a cfdb_db. Functions this client does not implement yet return
 * unsupported_operation (or operation_failed where libfdb_c's signature has no error
 * channel); the README lists them. As in libfdb_c, every function that returns a future or
 * a result returns one, never NULL: its error is inside (when memory for it cannot be had,
 * a shared future complete with unknown_error, transaction.h). */
#define FDB_API_VERSION 730
/* the fdb_c.h functions are what libcfdb exports (it is built with hidden visibility) */
#define DLLEXPORT __attribute__((visibility("default")))
#include <foundationdb/fdb_c.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "cluster_file.h"
#include "database.h"
#include "future.h"
#include "net.h"
#include "option_codes.h"
#include "special_keys.h"
#include "tenant.h"
#include "tls_settings.h"
#include "transaction.h"

#define CFDB_MAX_API_VERSION 730
#define CFDB_CLIENT_VERSION "7.3.77"

/* Exported in libfdb_c for old API versions; at 730 fdb_c.h turns their names into
 * compile errors, so the names are freed first. */
#undef fdb_future_get_version
#undef fdb_future_is_error
#undef fdb_create_cluster
#undef fdb_cluster_create_database
#undef fdb_cluster_set_option
#undef fdb_cluster_destroy
#undef fdb_future_get_cluster
#undef fdb_future_get_database
#undef fdb_transaction_get_range_selector
DLLEXPORT fdb_error_t fdb_future_get_version(FDBFuture *f, int64_t *out);
DLLEXPORT fdb_bool_t fdb_future_is_error(FDBFuture *f);
DLLEXPORT FDBFuture *fdb_create_cluster(const char *cluster_file_path);
DLLEXPORT FDBFuture *fdb_cluster_create_database(void *c, uint8_t const *db_name, int db_name_length);
DLLEXPORT fdb_error_t fdb_cluster_set_option(void *c, int option, uint8_t const *value, int value_length);
DLLEXPORT void fdb_cluster_destroy(void *c);
DLLEXPORT fdb_error_t fdb_future_get_cluster(FDBFuture *f, void **out);
DLLEXPORT fdb_error_t fdb_future_get_database(FDBFuture *f, FDBDatabase **out);
DLLEXPORT FDBFuture *fdb_transaction_get_range_selector(FDBTransaction *tr, uint8_t const *begin_key_name,
                                                        int begin_key_name_length, fdb_bool_t begin_or_equal,
                                                        int begin_offset, uint8_t const *end_key_name,
                                                        int end_key_name_length, fdb_bool_t end_or_equal,
                                                        int end_offset, int limit);

static atomic_int g_api_version;
static cfdb_client *g_client;
static atomic_int g_network_state; /* 0 none, 1 set up, 2 running, 3 stopped */

typedef struct hook {
    void (*fn)(void *);
    void *arg;
} hook;
/* TLS settings gathered from network options and the environment; the context is made from
 * them when the first database with a :tls coordinator is created. */
static cfdb_tls_settings g_tls;
static bool g_env_options_loaded;
static pthread_mutex_t g_tls_mu = PTHREAD_MUTEX_INITIALIZER;

static hook g_hooks[64];
static int g_nhooks;
static pthread_mutex_t g_hooks_mu = PTHREAD_MUTEX_INITIALIZER;

#define F(f) ((cfdb_future *)(f))
#define TX(t) ((cfdb_txn *)(t))
#define DB(d) ((cfdb_db *)(d))

static FDBFuture *unsupported_future(void)
{
    return (FDBFuture *)cfdb_future_error(CFDB_FUTURE_VOID, CFDB_ERR_UNSUPPORTED_OPERATION);
}

/* ---------- api version, errors ---------- */

fdb_error_t fdb_select_api_version_impl(int runtime_version, int header_version)
{
    if (atomic_load(&g_api_version) != 0)
        return CFDB_ERR_API_VERSION_ALREADY_SET;
    if (runtime_version > header_version)
        return CFDB_ERR_API_VERSION_INVALID;
    if (header_version > CFDB_MAX_API_VERSION || runtime_version < 13)
        return CFDB_ERR_API_VERSION_NOT_SUPPORTED;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&g_api_version, &expected, runtime_version))
        return CFDB_ERR_API_VERSION_ALREADY_SET;
    cfdb_txn_set_api_version(runtime_version);
    cfdb_special_install(runtime_version);
    return 0;
}

int fdb_get_max_api_version(void)
{
    return CFDB_MAX_API_VERSION;
}

const char *fdb_get_client_version(void)
{
    return CFDB_CLIENT_VERSION ",cfdb," "fdb00b073000000";
}

const char *fdb_get_error(fdb_error_t code)
{
    return cfdb_error_message(code);
}

fdb_bool_t fdb_error_predicate(int predicate_test, fdb_error_t code)
{
    return cfdb_error_predicate(predicate_test, code);
}

/* ---------- network ---------- */

fdb_error_t fdb_network_set_option(FDBNetworkOption option, uint8_t const *value, int value_length)
{
    if (!atomic_load(&g_api_version))
        return CFDB_ERR_API_VERSION_UNSET;
    /* MultiVersionApi::setNetworkOptionInternal: a code FDBNetworkOptions does not hold */
    if (!cfdb_option_code_known(cfdb_net_option_codes, cfdb_net_option_count, (int)option))
        return CFDB_ERR_INVALID_OPTION;
    pthread_mutex_lock(&g_tls_mu);
    int rc = 0;
    if (!g_env_options_loaded) { /* as libfdb_c: the environment's options first, then this one */
        g_env_options_loaded = true;
        rc = cfdb_tls_settings_load_env(&g_tls);
    }
    if (rc == 0 && option == FDB_NET_OPTION_DISABLE_CLIENT_BYPASS)
        cfdb_db_allow_grv_cache(); /* what USE_GRV_CACHE needs (db_grv.c) */
    if (rc == 0) {
        rc = cfdb_tls_settings_set(&g_tls, (int)option, value, value_length);
        /* other trace, knob and multi-version options are accepted without effect (README) */
        if (rc == 1)
            rc = 0;
    }
    pthread_mutex_unlock(&g_tls_mu);
    return rc;
}

/* The TLS context for :tls peers, from the gathered settings; NULL (with the reason in err)
 * if they cannot be loaded. */
static cfdb_tls_ctx *make_tls(char *err, size_t cap)
{
    pthread_mutex_lock(&g_tls_mu);
    cfdb_tls_config cfg;
    cfdb_tls_settings_resolve(&g_tls, &cfg);
    cfdb_tls_ctx *ctx = cfdb_tls_ctx_create(&cfg, false, err, cap);
    pthread_mutex_unlock(&g_tls_mu);
    return ctx;
}

/* Network thread: a :tls peer turned up (a proxy, storage server or forwarded coordinator)
 * although the cluster file named none. Failures are reported once on stderr. */
static cfdb_tls_ctx *tls_on_demand(void)
{
    char err[300];
    cfdb_tls_ctx *ctx = make_tls(err, sizeof err);
    static atomic_bool reported;
    if (!ctx && !atomic_exchange(&reported, true))
        fprintf(stderr, "cfdb: TLS configuration unusable: %s\n", err);
    return ctx;
}

/* A database whose coordinators are :tls needs the context now: when the settings cannot be
 * loaded, fdb_create_database fails with 2107 tls_error (libfdb_c only logs it and never
 * connects). Others get it on demand, so plaintext users never load OpenSSL's state. */
static fdb_error_t prepare_tls(void)
{
    if (cfdb_client_has_tls(g_client))
        return 0;
    char err[300];
    cfdb_tls_ctx *ctx = make_tls(err, sizeof err);
    if (!ctx) {
        fprintf(stderr, "cfdb: TLS configuration unusable: %s\n", err);
        return CFDB_ERR_TLS_ERROR;
    }
    if (!cfdb_client_set_tls(g_client, ctx))
        cfdb_tls_ctx_free(ctx); /* another thread was first */
    return 0;
}

fdb_error_t fdb_setup_network(void)
{
    if (!atomic_load(&g_api_version))
        return CFDB_ERR_API_VERSION_UNSET;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&g_network_state, &expected, 1))
        return CFDB_ERR_NETWORK_ALREADY_SETUP;
    pthread_mutex_lock(&g_tls_mu);
    int env_rc = 0;
    if (!g_env_options_loaded) {
        g_env_options_loaded = true;
        env_rc = cfdb_tls_settings_load_env(&g_tls);
    }
    pthread_mutex_unlock(&g_tls_mu);
    if (env_rc) {
        atomic_store(&g_network_state, 0);
        return env_rc;
    }
    g_client = cfdb_client_create();
    if (!g_client) {
        atomic_store(&g_network_state, 0);
        return CFDB_ERR_PLATFORM_ERROR;
    }
    cfdb_client_set_tls_factory(g_client, tls_on_demand);
    return 0;
}

fdb_error_t fdb_run_network(void)
{
    int expected = 1;
    if (!atomic_compare_exchange_strong(&g_network_state, &expected, 2))
        return expected == 0 ? CFDB_ERR_NETWORK_NOT_SETUP : CFDB_ERR_NETWORK_CANNOT_BE_RESTARTED;
    int rc = cfdb_loop_run(cfdb_client_loop(g_client));
    atomic_store(&g_network_state, 3);
    pthread_mutex_lock(&g_hooks_mu);
    int n = g_nhooks;
    pthread_mutex_unlock(&g_hooks_mu);
    for (int i = 0; i < n; i++)
        g_hooks[i].fn(g_hooks[i].arg);
    return rc; /* 0, or the FoundationDB code of a failed wait */
}

fdb_error_t fdb_stop_network(void)
{
    int st = atomic_load(&g_network_state);
    if (st == 0)
        return CFDB_ERR_NETWORK_NOT_SETUP;
    cfdb_loop_stop(cfdb_client_loop(g_client));
    return 0;
}

fdb_error_t fdb_add_network_thread_completion_hook(void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&g_hooks_mu);
    int rc = 0;
    if (g_nhooks == (int)(sizeof g_hooks / sizeof g_hooks[0]))
        rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
    else
        g_hooks[g_nhooks++] = (hook){ fn, arg };
    pthread_mutex_unlock(&g_hooks_mu);
    return rc;
}

/* ---------- futures ---------- */

/* Completes a pending future as cancelled and tells its operation, if it asked to know. */
static void cancel_pending(cfdb_future *fu)
{
    if (cfdb_future_try_complete(fu, CFDB_ERR_OPERATION_CANCELLED) && fu->on_cancel)
        fu->on_cancel(fu);
}

void fdb_future_cancel(FDBFuture *f)
{
    cancel_pending(F(f));
}

/* libfdb_c's counting (future.h): released once called as often as getters succeeded. */
void fdb_future_release_memory(FDBFuture *f)
{
    cfdb_future_release_value(F(f));
}

void fdb_future_destroy(FDBFuture *f)
{
    if (!f)
        return;
    cfdb_future *fu = F(f);
    if (!cfdb_future_is_ready(fu)) {
        cfdb_future_set_callback(fu, NULL, NULL); /* a destroyed future calls nobody */
        cancel_pending(fu);
    }
    cfdb_future_unref(fu);
}

/* On the network thread (a callback) waiting for a future that is not ready would never end:
 * libfdb_c answers blocked_from_network_thread there (ThreadHelper.actor.h,
 * blockUntilReadyCheckOnMainThread); a ready future is fine. */
fdb_error_t fdb_future_block_until_ready(FDBFuture *f)
{
    if (cfdb_future_is_ready(F(f)))
        return 0;
    if (g_client && cfdb_loop_on_loop_thread(cfdb_client_loop(g_client)))
        return CFDB_ERR_BLOCKED_FROM_NETWORK_THREAD;
    cfdb_future_wait(F(f));
    return 0;
}

fdb_bool_t fdb_future_is_ready(FDBFuture *f)
{
    return cfdb_future_is_ready(F(f));
}

fdb_error_t fdb_future_set_callback(FDBFuture *f, FDBCallback callback, void *callback_parameter)
{
    if (!cfdb_future_set_callback(F(f), (cfdb_future_callback)callback, callback_parameter))
        callback(f, callback_parameter);
    return 0;
}

fdb_error_t fdb_future_get_error(FDBFuture *f)
{
    return cfdb_future_public_error(F(f));
}

fdb_bool_t fdb_future_is_error(FDBFuture *f)
{
    return cfdb_future_is_ready(F(f)) && cfdb_future_public_error(F(f)) != 0;
}

/* The error a getter reports: not ready, failed, released, or a result of another type;
 * 0 counts a reference to the result (fdb_future_release_memory). */
static int result_state(FDBFuture *f, cfdb_future_kind kind)
{
    return cfdb_future_get_begin(F(f), kind);
}

fdb_error_t fdb_future_get_int64(FDBFuture *f, int64_t *out)
{
    int rc = result_state(f, CFDB_FUTURE_INT64);
    if (!rc)
        *out = F(f)->r.i64;
    return rc;
}

fdb_error_t fdb_future_get_version(FDBFuture *f, int64_t *out)
{
    return fdb_future_get_int64(f, out);
}

fdb_error_t fdb_future_get_uint64(FDBFuture *f, uint64_t *out)
{
    int rc = result_state(f, CFDB_FUTURE_INT64);
    if (!rc)
        *out = (uint64_t)F(f)->r.i64;
    return rc;
}

fdb_error_t fdb_future_get_bool(FDBFuture *f, fdb_bool_t *out)
{
    int rc = result_state(f, CFDB_FUTURE_INT64);
    if (!rc)
        *out = F(f)->r.i64 != 0;
    return rc;
}

fdb_error_t fdb_future_get_double(FDBFuture *f, double *out)
{
    int rc = result_state(f, CFDB_FUTURE_DOUBLE);
    if (!rc)
        *out = F(f)->r.d;
    return rc;
}

fdb_error_t fdb_future_get_key(FDBFuture *f, uint8_t const **out_key, int *out_key_length)
{
    int rc = result_state(f, CFDB_FUTURE_KEY);
    if (!rc) {
        *out_key = F(f)->r.key.ptr ? F(f)->r.key.ptr : (const uint8_t *)"";
        *out_key_length = (int)F(f)->r.key.len;
    }
    return rc;
}

fdb_error_t fdb_future_get_value(FDBFuture *f, fdb_bool_t *out_present, uint8_t const **out_value,
                                 int *out_value_length)
{
    int rc = result_state(f, CFDB_FUTURE_VALUE);
    if (!rc) {
        *out_present = F(f)->r.value.present;
        *out_value = F(f)->r.value.value.ptr ? F(f)->r.value.value.ptr : (const uint8_t *)"";
        *out_value_length = (int)F(f)->r.value.value.len;
    }
    return rc;
}

_Static_assert(sizeof(cfdb_fdb_kv) == sizeof(FDBKeyValue), "FDBKeyValue layout");
_Static_assert(sizeof(cfdb_fdb_key) == sizeof(FDBKey), "FDBKey layout");

fdb_error_t fdb_future_get_keyvalue_array(FDBFuture *f, FDBKeyValue const **out_kv, int *out_count,
                                          fdb_bool_t *out_more)
{
    int rc = result_state(f, CFDB_FUTURE_KEYVALUES);
    if (!rc) {
        *out_kv = (FDBKeyValue const *)F(f)->r.kvs.items;
        *out_count = F(f)->r.kvs.count;
        *out_more = F(f)->r.kvs.more;
    }
    return rc;
}

/* FDBMappedKeyValue mirrors libfdb_c's MappedKeyValueRef byte for byte (112 bytes on LP64). */
_Static_assert(sizeof(cfdb_fdb_mkv) == sizeof(FDBMappedKeyValue), "FDBMappedKeyValue layout");
_Static_assert(offsetof(cfdb_fdb_mkv, get_range) == offsetof(FDBMappedKeyValue, getRange), "getRange offset");
_Static_assert(offsetof(cfdb_fdb_mkv, get_range.data) == offsetof(FDBMappedKeyValue, getRange.data), "data offset");
_Static_assert(offsetof(cfdb_fdb_mkv, buffer) == offsetof(FDBMappedKeyValue, buffer), "buffer offset");
_Static_assert(sizeof(cfdb_fdb_range_req) == sizeof(FDBGetRangeReqAndResult), "FDBGetRangeReqAndResult layout");

fdb_error_t fdb_future_get_mappedkeyvalue_array(FDBFuture *f, FDBMappedKeyValue const **out_kv, int *out_count,
                                                fdb_bool_t *out_more)
{
    int rc = result_state(f, CFDB_FUTURE_MAPPED);
    if (!rc) {
        *out_kv = (FDBMappedKeyValue const *)F(f)->r.mkvs.items;
        *out_count = F(f)->r.mkvs.count;
        *out_more = F(f)->r.mkvs.more;
    }
    return rc;
}

fdb_error_t fdb_future_get_key_array(FDBFuture *f, FDBKey const **out_key_array, int *out_count)
{
    int rc = result_state(f, CFDB_FUTURE_KEYS);
    if (!rc) {
        *out_key_array = (FDBKey const *)F(f)->r.keys.items;
        *out_count = F(f)->r.keys.count;
    }
    return rc;
}

fdb_error_t fdb_future_get_string_array(FDBFuture *f, const char ***out_strings, int *out_count)
{
    int rc = result_state(f, CFDB_FUTURE_STRINGS);
    if (!rc) {
        *out_strings = F(f)->r.strings.items;
        *out_count = F(f)->r.strings.count;
    }
    return rc;
}

fdb_error_t fdb_future_get_keyrange_array(FDBFuture *f, FDBKeyRange const **out_ranges, int *out_count)
{
    int rc = result_state(f, CFDB_FUTURE_KEYS);
    return rc ? rc : CFDB_ERR_UNSUPPORTED_OPERATION;
}

fdb_error_t fdb_future_get_granule_summary_array(FDBFuture *f, FDBGranuleSummary const **out, int *out_count)
{
    int rc = result_state(f, CFDB_FUTURE_KEYS);
    return rc ? rc : CFDB_ERR_UNSUPPORTED_OPERATION;
}

fdb_error_t fdb_future_readbg_get_descriptions(FDBFuture *f, FDBBGFileDescription **out, int *desc_count)
{
    int rc = result_state(f, CFDB_FUTURE_KEYS);
    return rc ? rc : CFDB_ERR_UNSUPPORTED_OPERATION;
}

fdb_error_t fdb_future_get_cluster(FDBFuture *f, void **out)
{
    return CFDB_ERR_UNSUPPORTED_OPERATION;
}

fdb_error_t fdb_future_get_database(FDBFuture *f, FDBDatabase **out)
{
    int rc = result_state(f, CFDB_FUTURE_DATABASE);
    if (!rc)
        *out = (FDBDatabase *)F(f)->r.database;
    return rc;
}

/* ---------- blob granule results (not supported) ---------- */

/* The one result every unsupported call answers: its getters report unsupported_operation,
 * destroying it does nothing (libfdb_c returns a result holding the error, never NULL). */
static char g_unsupported_result;
#define UNSUPPORTED_RESULT ((FDBResult *)(void *)&g_unsupported_result)

FDBResult *fdb_readbg_parse_snapshot_file(const uint8_t *file_data, int file_len, FDBBGTenantPrefix const *tp,
                                          FDBBGEncryptionCtx const *ec)
{
    return UNSUPPORTED_RESULT;
}

FDBResult *fdb_readbg_parse_delta_file(const uint8_t *file_data, int file_len, FDBBGTenantPrefix const *tp,
                                       FDBBGEncryptionCtx const *ec)
{
    return UNSUPPORTED_RESULT;
}

void fdb_result_destroy(FDBResult *r)
{
    (void)r;
}

fdb_error_t fdb_result_get_keyvalue_array(FDBResult *r, FDBKeyValue const **out_kv, int *out_count,
                                          fdb_bool_t *out_more)
{
    return CFDB_ERR_UNSUPPORTED_OPERATION;
}

fdb_error_t fdb_result_get_bg_mutations_array(FDBResult *r, FDBBGMutation const **out, int *out_count)
{
    return CFDB_ERR_UNSUPPORTED_OPERATION;
}

/* ---------- databases ---------- */

static fdb_error_t create_database(const char *connection_string, FDBDatabase **out)
{
    if (atomic_load(&g_network_state) == 0)
        return CFDB_ERR_NETWORK_NOT_SETUP;
    cfdb_db *db;
    int rc = cfdb_db_create(g_client, connection_string, &db);
    if (rc)
        return rc;
    if (cfdb_db_uses_tls(db) && (rc = prepare_tls()) != 0) {
        cfdb_db_user_unref(db);
        return rc;
    }
    *out = (FDBDatabase *)db;
    return 0;
}

/* The cluster file is found as libfdb_c finds it: the given path, $FDB_CLUSTER_FILE,
 * ./fdb.cluster, then /etc/foundationdb/fdb.cluster (cluster_file.c). */
fdb_error_t fdb_create_database(const char *cluster_file_path, FDBDatabase **out_database)
{
    cfdb_cluster_string cs;
    char *resolved = NULL;
    int rc = cfdb_cluster_file_open(cluster_file_path, &cs, &resolved);
    if (rc) {
        free(resolved);
        return rc;
    }
    char *text = cfdb_cluster_string_format(&cs);
    cfdb_cluster_string_free(&cs);
    if (!text) {
        free(resolved);
        return CFDB_ERR_PLATFORM_ERROR;
    }
    rc = create_database(text, out_database);
    if (rc == 0)
        cfdb_db_set_cluster_file(DB(*out_database), resolved); /* rewritten if coordinators move */
    free(text);
    free(resolved);
    return rc;
}

fdb_error_t fdb_create_database_from_connection_string(const char *connection_string, FDBDatabase **out_database)
{
    return create_database(connection_string, out_database);
}

void fdb_database_destroy(FDBDatabase *d)
{
    if (d)
        cfdb_db_user_unref(DB(d)); /* its transactions keep it working until they go too */
}

fdb_error_t fdb_database_set_option(FDBDatabase *d, FDBDatabaseOption option, uint8_t const *value, int value_length)
{
    /* MultiVersionDatabase::setOption: a code FDBDatabaseOptions does not hold */
    if (!cfdb_option_code_known(cfdb_db_option_codes, cfdb_db_option_count, (int)option))
        return CFDB_ERR_INVALID_OPTION;
    return cfdb_db_set_option(DB(d), (int)option, value, value_length);
}

/* ThreadSafeDatabase::openTenant: never fails (the name is looked up in the background and
 * a missing tenant shows in the tenant's transactions and get_id). */
fdb_error_t fdb_database_open_tenant(FDBDatabase *d, uint8_t const *tenant_name, int tenant_name_length,
                                     FDBTenant **out_tenant)
{
    cfdb_tenant *t = cfdb_tenant_open(DB(d), cfdb_bytes_make(tenant_name, tenant_name_length > 0 ? (size_t)tenant_name_length : 0));
    if (!t)
        return CFDB_ERR_PLATFORM_ERROR;
    *out_tenant = (FDBTenant *)t;
    return 0;
}

fdb_error_t fdb_database_create_transaction(FDBDatabase *d, FDBTransaction **out_transaction)
{
    cfdb_txn *tx = cfdb_txn_create(DB(d));
    if (!tx)
        return CFDB_ERR_PLATFORM_ERROR;
    *out_transaction = (FDBTransaction *)tx;
    return 0;
}

static cfdb_bytes BL(const uint8_t *p, int n)
{
    return cfdb_bytes_make(p, n > 0 ? (size_t)n : 0);
}

FDBFuture *fdb_database_reboot_worker(FDBDatabase *db, uint8_t const *address, int address_length, fdb_bool_t check,
                                      int duration)
{
    return (FDBFuture *)cfdb_future_or_no_memory(
        cfdb_db_reboot_worker(DB(db), BL(address, address_length), check != 0, duration), CFDB_FUTURE_INT64);
}

FDBFuture *fdb_database_force_recovery_with_data_loss(FDBDatabase *db, uint8_t const *dcid, int dcid_length)
{
    return (FDBFuture *)cfdb_future_or_no_memory(cfdb_db_force_recovery(DB(db), BL(dcid, dcid_length)),
                                                 CFDB_FUTURE_VOID);
}

FDBFuture *fdb_database_create_snapshot(FDBDatabase *db, uint8_t const *uid, int uid_length,
                                       uint8_t const *snap_command, int snap_command_length)
{
    return (FDBFuture *)cfdb_future_or_no_memory(
        cfdb_db_create_snapshot(DB(db), BL(uid, uid_length), BL(snap_command, snap_command_length)),
        CFDB_FUTURE_VOID);
}

double fdb_database_get_main_thread_busyness(FDBDatabase *db)
{
    return g_client ? cfdb_loop_busyness(cfdb_client_loop(g_client)) : 0.0;
}

FDBFuture *fdb_database_get_server_protocol(FDBDatabase *db, uint64_t expected_version)
{
    return (FDBFuture *)cfdb_future_or_no_memory(cfdb_db_get_server_protocol(DB(db), expected_version),
                                                 CFDB_FUTURE_INT64);
}

#define BLOB_STUB(name, target_type, ...)               \
    FDBFuture *name(target_type *t, __VA_ARGS__)        \
    {                                                   \
        return unsupported_future();                    \
    }

BLOB_STUB(fdb_database_purge_blob_granules, FDBDatabase, uint8_t const *b, int bl, uint8_t const *e, int el,
          int64_t purge_version, fdb_bool_t force)
BLOB_STUB(fdb_database_wait_purge_granules_complete, FDBDatabase, uint8_t const *k, int kl)
BLOB_STUB(fdb_database_blobbify_range, FDBDatabase, uint8_t const *b, int bl, uint8_t const *e, int el)
BLOB_STUB(fdb_database_blobbify_range_blocking, FDBDatabase, uint8_t const *b, int bl, uint8_t const *e, int el)
BLOB_STUB(fdb_database_unblobbify_range, FDBDatabase, uint8_t const *b, int bl, uint8_t const *e, int el)
BLOB_STUB(fdb_database_list_blobbified_ranges, FDBDatabase, uint8_t const *b, int bl, uint8_t const *e, int el,
          int range_limit)
BLOB_STUB(fdb_database_verify_blob_range, FDBDatabase, uint8_t const *b, int bl, uint8_t const *e, int el,
          int64_t version)
BLOB_STUB(fdb_database_flush_blob_range, FDBDatabase, uint8_t const *b, int bl, uint8_t const *e, int el,
          fdb_bool_t compact, int64_t version)
BLOB_STUB(fdb_tenant_purge_blob_granules, FDBTenant, uint8_t const *b, int bl, uint8_t const *e, int el,
          int64_t purge_version, fdb_bool_t force)
BLOB_STUB(fdb_tenant_wait_purge_granules_complete, FDBTenant, uint8_t const *k, int kl)
BLOB_STUB(fdb_tenant_blobbify_range, FDBTenant, uint8_t const *b, int bl, uint8_t const *e, int el)
BLOB_STUB(fdb_tenant_blobbify_range_blocking, FDBTenant, uint8_t const *b, int bl, uint8_t const *e, int el)
BLOB_STUB(fdb_tenant_unblobbify_range, FDBTenant, uint8_t const *b, int bl, uint8_t const *e, int el)
BLOB_STUB(fdb_tenant_list_blobbified_ranges, FDBTenant, uint8_t const *b, int bl, uint8_t const *e, int el,
          int range_limit)
BLOB_STUB(fdb_tenant_verify_blob_range, FDBTenant, uint8_t const *b, int bl, uint8_t const *e, int el,
          int64_t version)
BLOB_STUB(fdb_tenant_flush_blob_range, FDBTenant, uint8_t const *b, int bl, uint8_t const *e, int el,
          fdb_bool_t compact, int64_t version)

FDBFuture *fdb_database_get_client_status(FDBDatabase *db)
{
    return (FDBFuture *)cfdb_future_or_no_memory(cfdb_db_get_client_status(DB(db)), CFDB_FUTURE_KEY);
}

fdb_error_t fdb_tenant_create_transaction(FDBTenant *tenant, FDBTransaction **out_transaction)
{
    cfdb_txn *tx = cfdb_txn_create_in_tenant((cfdb_tenant *)tenant);
    if (!tx)
        return CFDB_ERR_PLATFORM_ERROR;
    *out_transaction = (FDBTransaction *)tx;
    return 0;
}

FDBFuture *fdb_tenant_get_id(FDBTenant *tenant)
{
    return (FDBFuture *)cfdb_future_or_no_memory(cfdb_tenant_get_id((cfdb_tenant *)tenant), CFDB_FUTURE_INT64);
}

/* The tenant's transactions keep it (and its database) alive. */
void fdb_tenant_destroy(FDBTenant *tenant)
{
    if (tenant)
        cfdb_tenant_unref((cfdb_tenant *)tenant);
}

/* Removed before API 610; kept as symbols so old binaries still link. */
FDBFuture *fdb_create_cluster(const char *cluster_file_path)
{
    return unsupported_future();
}

FDBFuture *fdb_cluster_create_database(void *c, uint8_t const *db_name, int db_name_length)
{
    return unsupported_future();
}

fdb_error_t fdb_cluster_set_option(void *c, int option, uint8_t const *value, int value_length)
{
    return CFDB_ERR_UNSUPPORTED_OPERATION;
}

void fdb_cluster_destroy(void *c)
{
    (void)c;
}

/* ---------- transactions ---------- */

static cfdb_bytes B(const uint8_t *p, int n)
{
    return cfdb_bytes_make(p, n > 0 ? (size_t)n : 0);
}

void fdb_transaction_destroy(FDBTransaction *tr)
{
    if (tr)
        cfdb_txn_destroy(TX(tr));
}

void fdb_transaction_cancel(FDBTransaction *tr)
{
    cfdb_txn_cancel(TX(tr));
}

fdb_error_t fdb_transaction_set_option(FDBTransaction *tr, FDBTransactionOption option, uint8_t const *value,
                                       int value_length)
{
    /* ThreadSafeTransaction::setOption: a code FDBTransactionOptions does not hold fails at
     * the call (every other option error is deferred to the next operation) */
    if (!cfdb_option_code_known(cfdb_tr_option_codes, cfdb_tr_option_count, (int)option))
        return CFDB_ERR_INVALID_OPTION;
    return cfdb_txn_set_option(TX(tr), (int)option, value, value_length);
}

void fdb_transaction_set_read_version(FDBTransaction *tr, int64_t version)
{
    cfdb_txn_set_read_version(TX(tr), version);
}

FDBFuture *fdb_transaction_get_read_version(FDBTransaction *tr)
{
    return (FDBFuture *)cfdb_txn_get_read_version(TX(tr));
}

FDBFuture *fdb_transaction_get(FDBTransaction *tr, uint8_t const *key_name, int key_name_length, fdb_bool_t snapshot)
{
    return (FDBFuture *)cfdb_txn_get(TX(tr), B(key_name, key_name_length), snapshot);
}

FDBFuture *fdb_transaction_get_key(FDBTransaction *tr, uint8_t const *key_name, int key_name_length,
                                   fdb_bool_t or_equal, int offset, fdb_bool_t snapshot)
{
    return (FDBFuture *)cfdb_txn_get_key(TX(tr), B(key_name, key_name_length), or_equal, offset, snapshot);
}

FDBFuture *fdb_transaction_get_addresses_for_key(FDBTransaction *tr, uint8_t const *key_name, int key_name_length)
{
    return (FDBFuture *)cfdb_txn_get_addresses_for_key(TX(tr), B(key_name, key_name_length));
}

FDBFuture *fdb_transaction_get_range(FDBTransaction *tr, uint8_t const *begin_key_name, int begin_key_name_length,
                                     fdb_bool_t begin_or_equal, int begin_offset, uint8_t const *end_key_name,
                                     int end_key_name_length, fdb_bool_t end_or_equal, int end_offset, int limit,
                                     int target_bytes, FDBStreamingMode mode, int iteration, fdb_bool_t snapshot,
                                     fdb_bool_t reverse)
{
    return (FDBFuture *)cfdb_txn_get_range(TX(tr), B(begin_key_name, begin_key_name_length), begin_or_equal,
                                           begin_offset, B(end_key_name, end_key_name_length), end_or_equal,
                                           end_offset, limit, target_bytes, (int)mode, iteration, snapshot, reverse);
}

FDBFuture *fdb_transaction_get_range_selector(FDBTransaction *tr, uint8_t const *begin_key_name,
                                              int begin_key_name_length, fdb_bool_t begin_or_equal, int begin_offset,
                                              uint8_t const *end_key_name, int end_key_name_length,
                                              fdb_bool_t end_or_equal, int end_offset, int limit)
{
    return fdb_transaction_get_range(tr, begin_key_name, begin_key_name_length, begin_or_equal, begin_offset,
                                     end_key_name, end_key_name_length, end_or_equal, end_offset, limit, 0,
                                     FDB_STREAMING_MODE_EXACT, 0, 0, 0);
}

FDBFuture *fdb_transaction_get_mapped_range(FDBTransaction *tr, uint8_t const *begin_key_name,
                                            int begin_key_name_length, fdb_bool_t begin_or_equal, int begin_offset,
                                            uint8_t const *end_key_name, int end_key_name_length,
                                            fdb_bool_t end_or_equal, int end_offset, uint8_t const *mapper_name,
                                            int mapper_name_length, int limit, int target_bytes,
                                            FDBStreamingMode mode, int iteration, fdb_bool_t snapshot,
                                            fdb_bool_t reverse)
{
    return (FDBFuture *)cfdb_txn_get_mapped_range(TX(tr), B(begin_key_name, begin_key_name_length), begin_or_equal,
                                                  begin_offset, B(end_key_name, end_key_name_length), end_or_equal,
                                                  end_offset, B(mapper_name, mapper_name_length), limit, target_bytes,
                                                  (int)mode, iteration, snapshot, reverse);
}

void fdb_transaction_set(FDBTransaction *tr, uint8_t const *key_name, int key_name_length, uint8_t const *value,
                         int value_length)
{
    cfdb_txn_set(TX(tr), B(key_name, key_name_length), B(value, value_length));
}

void fdb_transaction_atomic_op(FDBTransaction *tr, uint8_t const *key_name, int key_name_length,
                               uint8_t const *param, int param_length, FDBMutationType operation_type)
{
    cfdb_txn_atomic_op(TX(tr), B(key_name, key_name_length), B(param, param_length), (int)operation_type);
}

void fdb_transaction_clear(FDBTransaction *tr, uint8_t const *key_name, int key_name_length)
{
    cfdb_txn_clear(TX(tr), B(key_name, key_name_length));
}

void fdb_transaction_clear_range(FDBTransaction *tr, uint8_t const *begin_key_name, int begin_key_name_length,
                                 uint8_t const *end_key_name, int end_key_name_length)
{
    cfdb_txn_clear_range(TX(tr), B(begin_key_name, begin_key_name_length), B(end_key_name, end_key_name_length));
}

FDBFuture *fdb_transaction_watch(FDBTransaction *tr, uint8_t const *key_name, int key_name_length)
{
    return (FDBFuture *)cfdb_txn_watch(TX(tr), B(key_name, key_name_length));
}

FDBFuture *fdb_transaction_commit(FDBTransaction *tr)
{
    return (FDBFuture *)cfdb_txn_commit(TX(tr));
}

fdb_error_t fdb_transaction_get_committed_version(FDBTransaction *tr, int64_t *out_version)
{
    return cfdb_txn_get_committed_version(TX(tr), out_version);
}

FDBFuture *fdb_transaction_get_tag_throttled_duration(FDBTransaction *tr)
{
    return (FDBFuture *)cfdb_txn_get_tag_throttled_duration(TX(tr));
}

FDBFuture *fdb_transaction_get_total_cost(FDBTransaction *tr)
{
    return (FDBFuture *)cfdb_txn_get_total_cost(TX(tr));
}

FDBFuture *fdb_transaction_get_approximate_size(FDBTransaction *tr)
{
    return (FDBFuture *)cfdb_txn_get_approximate_size(TX(tr));
}

FDBFuture *fdb_transaction_get_versionstamp(FDBTransaction *tr)
{
    return (FDBFuture *)cfdb_txn_get_versionstamp(TX(tr));
}

FDBFuture *fdb_transaction_on_error(FDBTransaction *tr, fdb_error_t error)
{
    return (FDBFuture *)cfdb_txn_on_error(TX(tr), error);
}

void fdb_transaction_reset(FDBTransaction *tr)
{
    cfdb_txn_reset(TX(tr));
}

fdb_error_t fdb_transaction_add_conflict_range(FDBTransaction *tr, uint8_t const *begin_key_name,
                                               int begin_key_name_length, uint8_t const *end_key_name,
                                               int end_key_name_length, FDBConflictRangeType type)
{
    return cfdb_txn_add_conflict_range(TX(tr), B(begin_key_name, begin_key_name_length),
                                       B(end_key_name, end_key_name_length), (int)type);
}

FDBFuture *fdb_transaction_get_estimated_range_size_bytes(FDBTransaction *tr, uint8_t const *begin_key_name,
                                                          int begin_key_name_length, uint8_t const *end_key_name,
                                                          int end_key_name_length)
{
    return (FDBFuture *)cfdb_txn_get_estimated_range_size(TX(tr), B(begin_key_name, begin_key_name_length),
                                                          B(end_key_name, end_key_name_length));
}

FDBFuture *fdb_transaction_get_range_split_points(FDBTransaction *tr, uint8_t const *begin_key_name,
                                                  int begin_key_name_length, uint8_t const *end_key_name,
                                                  int end_key_name_length, int64_t chunk_size)
{
    return (FDBFuture *)cfdb_txn_get_range_split_points(TX(tr), B(begin_key_name, begin_key_name_length),
                                                        B(end_key_name, end_key_name_length), chunk_size);
}

FDBFuture *fdb_transaction_get_blob_granule_ranges(FDBTransaction *tr, uint8_t const *b, int bl, uint8_t const *e,
                                                   int el, int range_limit)
{
    return unsupported_future();
}

FDBResult *fdb_transaction_read_blob_granules(FDBTransaction *tr, uint8_t const *b, int bl, uint8_t const *e, int el,
                                              int64_t begin_version, int64_t read_version,
                                              FDBReadBlobGranuleContext granule_context)
{
    return UNSUPPORTED_RESULT;
}

FDBFuture *fdb_transaction_summarize_blob_granules(FDBTransaction *tr, uint8_t const *b, int bl, uint8_t const *e,
                                                   int el, int64_t summary_version, int range_limit)
{
    return unsupported_future();
}

FDBFuture *fdb_transaction_read_blob_granules_description(FDBTransaction *tr, uint8_t const *b, int bl,
                                                          uint8_t const *e, int el, int64_t begin_version,
                                                          int64_t read_version, int64_t *read_version_out)
{
    return unsupported_future();
}
