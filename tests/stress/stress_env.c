/* See stress_env.h. */
#include "stress_env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

st_env g_st;
static pthread_t g_net;
static bool g_net_running;

static void *net_main(void *arg)
{
    (void)arg;
    fdb_error_t e = fdb_run_network();
    if (e)
        fprintf(stderr, "fdb_run_network: %d\n", e);
    return NULL;
}

int st_setup(const char *const *extra)
{
    memset(&g_st, 0, sizeof g_st);
    snprintf(g_st.dir, sizeof g_st.dir, "/tmp/cfdb-stress-%d-XXXXXX", (int)getpid());
    if (!mkdtemp(g_st.dir))
        return -1;
    if (sp_start(&g_st.server, CFDB_SERVER_BIN, g_st.dir, NULL, extra))
        return -1;
    if (!g_net_running) {
        if (fdb_select_api_version(FDB_API_VERSION) || fdb_setup_network())
            return -1;
        if (pthread_create(&g_net, NULL, net_main, NULL))
            return -1;
        g_net_running = true;
    }
    return fdb_create_database(g_st.server.cluster, &g_st.db) ? -1 : 0;
}

void st_teardown(void)
{
    if (g_st.db)
        fdb_database_destroy(g_st.db);
    g_st.db = NULL;
    sp_kill9(&g_st.server);
    if (g_st.dir[0])
        sp_rmtree(g_st.dir);
    g_st.dir[0] = 0;
}

void st_shutdown(void)
{
    if (g_net_running) {
        fdb_stop_network();
        pthread_join(g_net, NULL);
        g_net_running = false;
    }
}

fdb_error_t st_wait(FDBFuture *f)
{
    fdb_error_t e = fdb_future_block_until_ready(f);
    return e ? e : fdb_future_get_error(f);
}

fdb_error_t st_read_range(FDBTransaction *tr, const void *begin, int bl, const void *end, int el, st_kv_fn fn,
                          void *ctx)
{
    uint8_t *cur = malloc((size_t)bl + 1);
    if (!cur)
        return 1000;
    memcpy(cur, begin, (size_t)bl);
    int cl = bl, or_equal = 0;
    fdb_error_t err = 0;
    for (int iteration = 1;; iteration++) {
        FDBFuture *f = fdb_transaction_get_range(tr, cur, cl, or_equal, 1, end, el, 0, 1, 0, 0,
                                                 FDB_STREAMING_MODE_WANT_ALL, iteration, 0, 0);
        err = st_wait(f);
        if (err) {
            fdb_future_destroy(f);
            break;
        }
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        err = fdb_future_get_keyvalue_array(f, &kv, &n, &more);
        if (err) {
            fdb_future_destroy(f);
            break;
        }
        for (int i = 0; i < n; i++)
            fn(ctx, kv[i].key, kv[i].key_length, kv[i].value, kv[i].value_length);
        if (!more || n == 0) {
            fdb_future_destroy(f);
            break;
        }
        uint8_t *nc = realloc(cur, (size_t)kv[n - 1].key_length + 1);
        if (!nc) {
            fdb_future_destroy(f);
            err = 1000;
            break;
        }
        cur = nc;
        memcpy(cur, kv[n - 1].key, (size_t)kv[n - 1].key_length);
        cl = kv[n - 1].key_length;
        or_equal = 1; /* firstGreaterThan(last) */
        fdb_future_destroy(f);
    }
    free(cur);
    return err;
}

double st_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
