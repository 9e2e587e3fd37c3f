/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: load an fdb_c library with dlopen and resolve its entry points. */
#include "fdb_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define RESOLVE(member, sym)                                                        \
    do {                                                                            \
        void *p_ = dlsym(h, sym);                                                   \
        if (!p_) {                                                                  \
            snprintf(err, errlen, "%s: missing symbol %s", path, sym);              \
            dlclose(h);                                                             \
            return -1;                                                              \
        }                                                                           \
        memcpy(&api->member, &p_, sizeof p_);                                       \
    } while (0)

int bench_fdb_load(bench_fdb_api *api, const char *path, char *err, size_t errlen)
{
    memset(api, 0, sizeof *api);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "dlopen %s: %s", path, dlerror());
        return -1;
    }
    RESOLVE(select_api_version_impl, "fdb_select_api_version_impl");
    RESOLVE(get_error, "fdb_get_error");
    RESOLVE(network_set_option, "fdb_network_set_option");
    RESOLVE(setup_network, "fdb_setup_network");
    RESOLVE(run_network, "fdb_run_network");
    RESOLVE(stop_network, "fdb_stop_network");
    RESOLVE(create_database, "fdb_create_database");
    RESOLVE(database_destroy, "fdb_database_destroy");
    RESOLVE(database_create_transaction, "fdb_database_create_transaction");
    RESOLVE(transaction_destroy, "fdb_transaction_destroy");
    RESOLVE(transaction_get_read_version, "fdb_transaction_get_read_version");
    RESOLVE(transaction_get, "fdb_transaction_get");
    RESOLVE(transaction_get_range, "fdb_transaction_get_range");
    RESOLVE(transaction_set, "fdb_transaction_set");
    RESOLVE(transaction_commit, "fdb_transaction_commit");
    RESOLVE(transaction_on_error, "fdb_transaction_on_error");
    RESOLVE(future_block_until_ready, "fdb_future_block_until_ready");
    RESOLVE(future_get_error, "fdb_future_get_error");
    RESOLVE(future_get_value, "fdb_future_get_value");
    RESOLVE(future_get_keyvalue_array, "fdb_future_get_keyvalue_array");
    RESOLVE(future_get_int64, "fdb_future_get_int64");
    RESOLVE(future_destroy, "fdb_future_destroy");
    api->handle = h;
    return 0;
}

const char *bench_fdb_strerror(const bench_fdb_api *api, fdb_error_t e)
{
    const char *s = api->get_error ? api->get_error(e) : NULL;
    return s ? s : "unknown error";
}

fdb_error_t bench_fdb_wait(const bench_fdb_api *api, FDBFuture *f)
{
    if (!f)
        return 4100; /* internal_error */
    fdb_error_t e = api->future_block_until_ready(f);
    if (e)
        return e;
    return api->future_get_error(f);
}
