/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tiny in-memory stand-in for libfdb_c, exporting the slice of the fdb_c
 * 7.3 ABI that cfdb-bench uses, so the harness can be tested end to end
 * without a server. Every future is ready at creation; writes are buffered
 * in the transaction and applied at commit.
 *
 * Knobs (environment):
 *   MOCK_FDB_LOG_QUEUE=BYTES   worst_queue_bytes_log_server in status json
 *   MOCK_FDB_MOVING=BYTES      moving_data.in_flight_bytes in status json
 *   MOCK_FDB_NO_STATUS=1       \xff\xff/status/json is absent
 *   MOCK_FDB_CONFLICT_EVERY=N  every Nth commit fails with not_committed
 *   MOCK_FDB_FAIL_OPEN=1       fdb_create_database fails
 *   MOCK_FDB_KEYS=N            pre-populate the cfdb-bench keyspace (each
 *                              worker is a fresh process with an empty store)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int fdb_error_t;
typedef int fdb_bool_t;

#pragma pack(push, 4)
typedef struct {
    const uint8_t *key;
    int key_length;
    const uint8_t *value;
    int value_length;
} kv_t;
#pragma pack(pop)

typedef struct {
    uint8_t *k, *v;
    int kl, vl;
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry *store;
static size_t nstore, capstore;
static uint64_t commits;
static int64_t version = 1000;

static pthread_mutex_t net_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t net_cv = PTHREAD_COND_INITIALIZER;
static int net_stop;

typedef struct FDB_database {
    int dummy;
} FDBDatabase;

typedef struct FDB_transaction {
    entry *w;
    size_t nw, capw;
} FDBTransaction;

enum { F_NONE, F_VERSION, F_VALUE, F_RANGE };

typedef struct FDB_future {
    int kind;
    fdb_error_t err;
    int64_t version;
    int present;
    uint8_t *value;
    int vl;
    kv_t *kvs;
    int nkv;
    uint8_t *blob;
} FDBFuture;

static int keycmp(const uint8_t *a, int al, const uint8_t *b, int bl)
{
    int n = al < bl ? al : bl;
    int c = memcmp(a, b, (size_t)n);
    return c ? c : (al > bl) - (al < bl);
}

/* First index with store[i] >= key (or > key when strict). */
static size_t bound(const uint8_t *k, int kl, int strict)
{
    size_t lo = 0, hi = nstore;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = keycmp(store[mid].k, store[mid].kl, k, kl);
        if (c < 0 || (strict && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void put(const uint8_t *k, int kl, const uint8_t *v, int vl)
{
    size_t i = bound(k, kl, 0);
    if (i < nstore && keycmp(store[i].k, store[i].kl, k, kl) == 0) {
        free(store[i].v);
        store[i].v = malloc((size_t)vl + 1);
        memcpy(store[i].v, v, (size_t)vl);
        store[i].vl = vl;
        return;
    }
    if (nstore == capstore) {
        capstore = capstore ? capstore * 2 : 1024;
        store = realloc(store, capstore * sizeof *store);
    }
    memmove(store + i + 1, store + i, (nstore - i) * sizeof *store);
    store[i].k = malloc((size_t)kl + 1);
    memcpy(store[i].k, k, (size_t)kl);
    store[i].kl = kl;
    store[i].v = malloc((size_t)vl + 1);
    memcpy(store[i].v, v, (size_t)vl);
    store[i].vl = vl;
    nstore++;
}

static FDBFuture *fut(int kind, fdb_error_t err)
{
    FDBFuture *f = calloc(1, sizeof *f);
    f->kind = kind;
    f->err = err;
    return f;
}

EXPORT fdb_error_t fdb_select_api_version_impl(int runtime_version, int header_version);
EXPORT const char *fdb_get_error(fdb_error_t code);
EXPORT fdb_error_t fdb_network_set_option(int option, const uint8_t *value, int value_length);
EXPORT fdb_error_t fdb_setup_network(void);
EXPORT fdb_error_t fdb_run_network(void);
EXPORT fdb_error_t fdb_stop_network(void);
EXPORT fdb_error_t fdb_create_database(const char *cluster_file_path, FDBDatabase **out);
EXPORT void fdb_database_destroy(FDBDatabase *d);
EXPORT fdb_error_t fdb_database_create_transaction(FDBDatabase *d, FDBTransaction **out);
EXPORT void fdb_transaction_destroy(FDBTransaction *tr);
EXPORT FDBFuture *fdb_transaction_get_read_version(FDBTransaction *tr);
EXPORT FDBFuture *fdb_transaction_get(FDBTransaction *tr, const uint8_t *key, int kl, fdb_bool_t snapshot);
EXPORT FDBFuture *fdb_transaction_get_range(FDBTransaction *tr, const uint8_t *bk, int bkl,
                                            fdb_bool_t bor, int boff, const uint8_t *ek, int ekl,
                                            fdb_bool_t eor, int eoff, int limit, int target_bytes,
                                            int mode, int iteration, fdb_bool_t snapshot,
                                            fdb_bool_t reverse);
EXPORT void fdb_transaction_set(FDBTransaction *tr, const uint8_t *k, int kl, const uint8_t *v, int vl);
EXPORT FDBFuture *fdb_transaction_commit(FDBTransaction *tr);
EXPORT FDBFuture *fdb_transaction_on_error(FDBTransaction *tr, fdb_error_t error);
EXPORT fdb_error_t fdb_future_block_until_ready(FDBFuture *f);
EXPORT fdb_error_t fdb_future_get_error(FDBFuture *f);
EXPORT fdb_error_t fdb_future_get_value(FDBFuture *f, fdb_bool_t *present, const uint8_t **v, int *vl);
EXPORT fdb_error_t fdb_future_get_keyvalue_array(FDBFuture *f, const kv_t **kv, int *n, fdb_bool_t *more);
EXPORT fdb_error_t fdb_future_get_int64(FDBFuture *f, int64_t *out);
EXPORT void fdb_future_destroy(FDBFuture *f);

fdb_error_t fdb_select_api_version_impl(int runtime_version, int header_version)
{
    (void)header_version;
    return runtime_version > 730 ? 2203 : 0; /* api_version_not_supported */
}

const char *fdb_get_error(fdb_error_t code)
{
    switch (code) {
    case 0: return "Success";
    case 1020: return "Transaction not committed due to conflict with another transaction";
    case 2203: return "API version not supported";
    case 1515: return "Unable to connect to cluster";
    default: return "Unknown error";
    }
}

fdb_error_t fdb_network_set_option(int option, const uint8_t *value, int value_length)
{
    (void)option, (void)value, (void)value_length;
    return 0;
}

fdb_error_t fdb_setup_network(void)
{
    return 0;
}

fdb_error_t fdb_run_network(void)
{
    pthread_mutex_lock(&net_mu);
    while (!net_stop)
        pthread_cond_wait(&net_cv, &net_mu);
    pthread_mutex_unlock(&net_mu);
    return 0;
}

fdb_error_t fdb_stop_network(void)
{
    pthread_mutex_lock(&net_mu);
    net_stop = 1;
    pthread_cond_broadcast(&net_cv);
    pthread_mutex_unlock(&net_mu);
    return 0;
}

fdb_error_t fdb_create_database(const char *cluster_file_path, FDBDatabase **out)
{
    (void)cluster_file_path;
    if (getenv("MOCK_FDB_FAIL_OPEN"))
        return 1515;
    const char *keys = getenv("MOCK_FDB_KEYS");
    if (keys) {
        static uint8_t val[1000];
        memset(val, 'v', sizeof val);
        pthread_mutex_lock(&mu);
        int empty = nstore == 0;
        for (int vs = 100; empty && vs <= 1000; vs *= 10) /* appends: sorted order */
            for (unsigned long long i = 0; i < strtoull(keys, NULL, 10); i++) {
                char k[64];
                int kl = snprintf(k, sizeof k, "cfdb-bench/v%d/%010llu", vs, i);
                put((const uint8_t *)k, kl, val, vs);
            }
        pthread_mutex_unlock(&mu);
    }
    *out = calloc(1, sizeof **out);
    return 0;
}

void fdb_database_destroy(FDBDatabase *d)
{
    free(d);
}

fdb_error_t fdb_database_create_transaction(FDBDatabase *d, FDBTransaction **out)
{
    (void)d;
    *out = calloc(1, sizeof **out);
    return 0;
}

static void clear_writes(FDBTransaction *tr)
{
    for (size_t i = 0; i < tr->nw; i++) {
        free(tr->w[i].k);
        free(tr->w[i].v);
    }
    tr->nw = 0;
}

void fdb_transaction_destroy(FDBTransaction *tr)
{
    clear_writes(tr);
    free(tr->w);
    free(tr);
}

FDBFuture *fdb_transaction_get_read_version(FDBTransaction *tr)
{
    (void)tr;
    FDBFuture *f = fut(F_VERSION, 0);
    pthread_mutex_lock(&mu);
    f->version = version;
    pthread_mutex_unlock(&mu);
    return f;
}

static char *status_json(void)
{
    const char *q = getenv("MOCK_FDB_LOG_QUEUE"), *m = getenv("MOCK_FDB_MOVING");
    char *s = malloc(512);
    snprintf(s, 512,
             "{\"client\":{\"database_status\":{\"available\":true}},\"cluster\":{\"qos\":"
             "{\"worst_queue_bytes_log_server\":%s},\"data\":{\"moving_data\":{\"in_flight_bytes\":%s,"
             "\"in_queue_bytes\":0}}}}",
             q ? q : "0", m ? m : "0");
    return s;
}

FDBFuture *fdb_transaction_get(FDBTransaction *tr, const uint8_t *key, int kl, fdb_bool_t snapshot)
{
    (void)tr, (void)snapshot;
    FDBFuture *f = fut(F_VALUE, 0);
    static const char status_key[] = "\xff\xff/status/json";
    if (kl == (int)sizeof status_key - 1 && !memcmp(key, status_key, (size_t)kl)) {
        if (!getenv("MOCK_FDB_NO_STATUS")) {
            f->value = (uint8_t *)status_json();
            f->vl = (int)strlen((char *)f->value);
            f->present = 1;
        }
        return f;
    }
    pthread_mutex_lock(&mu);
    size_t i = bound(key, kl, 0);
    if (i < nstore && keycmp(store[i].k, store[i].kl, key, kl) == 0) {
        f->present = 1;
        f->vl = store[i].vl;
        f->value = malloc((size_t)f->vl + 1);
        memcpy(f->value, store[i].v, (size_t)f->vl);
    }
    pthread_mutex_unlock(&mu);
    return f;
}

static size_t resolve(const uint8_t *k, int kl, fdb_bool_t or_equal, int offset)
{
    long base = (long)bound(k, kl, or_equal);
    long idx = base + offset - 1;
    if (idx < 0)
        idx = 0;
    if (idx > (long)nstore)
        idx = (long)nstore;
    return (size_t)idx;
}

FDBFuture *fdb_transaction_get_range(FDBTransaction *tr, const uint8_t *bk, int bkl, fdb_bool_t bor,
                                     int boff, const uint8_t *ek, int ekl, fdb_bool_t eor, int eoff,
                                     int limit, int target_bytes, int mode, int iteration,
                                     fdb_bool_t snapshot, fdb_bool_t reverse)
{
    (void)tr, (void)target_bytes, (void)mode, (void)iteration, (void)snapshot, (void)reverse;
    FDBFuture *f = fut(F_RANGE, 0);
    pthread_mutex_lock(&mu);
    size_t b = resolve(bk, bkl, bor, boff), e = resolve(ek, ekl, eor, eoff);
    size_t n = e > b ? e - b : 0;
    if (limit > 0 && n > (size_t)limit)
        n = (size_t)limit;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += (size_t)store[b + i].kl + (size_t)store[b + i].vl;
    f->kvs = calloc(n + 1, sizeof *f->kvs);
    f->blob = malloc(bytes + 1);
    uint8_t *p = f->blob;
    for (size_t i = 0; i < n; i++) {
        const entry *s = &store[b + i];
        memcpy(p, s->k, (size_t)s->kl);
        f->kvs[i].key = p;
        f->kvs[i].key_length = s->kl;
        p += s->kl;
        memcpy(p, s->v, (size_t)s->vl);
        f->kvs[i].value = p;
        f->kvs[i].value_length = s->vl;
        p += s->vl;
    }
    f->nkv = (int)n;
    pthread_mutex_unlock(&mu);
    return f;
}

void fdb_transaction_set(FDBTransaction *tr, const uint8_t *k, int kl, const uint8_t *v, int vl)
{
    if (tr->nw == tr->capw) {
        tr->capw = tr->capw ? tr->capw * 2 : 8;
        tr->w = realloc(tr->w, tr->capw * sizeof *tr->w);
    }
    entry *e = &tr->w[tr->nw++];
    e->k = malloc((size_t)kl + 1);
    memcpy(e->k, k, (size_t)kl);
    e->kl = kl;
    e->v = malloc((size_t)vl + 1);
    memcpy(e->v, v, (size_t)vl);
    e->vl = vl;
}

FDBFuture *fdb_transaction_commit(FDBTransaction *tr)
{
    const char *ce = getenv("MOCK_FDB_CONFLICT_EVERY");
    long every = ce ? atol(ce) : 0;
    pthread_mutex_lock(&mu);
    uint64_t n = ++commits;
    if (every > 0 && n % (uint64_t)every == 0) {
        pthread_mutex_unlock(&mu);
        return fut(F_NONE, 1020);
    }
    for (size_t i = 0; i < tr->nw; i++)
        put(tr->w[i].k, tr->w[i].kl, tr->w[i].v, tr->w[i].vl);
    version += 1000;
    pthread_mutex_unlock(&mu);
    clear_writes(tr);
    return fut(F_NONE, 0);
}

FDBFuture *fdb_transaction_on_error(FDBTransaction *tr, fdb_error_t error)
{
    int retryable = error == 1020 || error == 1007 || error == 1037 || error == 1213;
    if (retryable)
        clear_writes(tr);
    return fut(F_NONE, retryable ? 0 : error);
}

fdb_error_t fdb_future_block_until_ready(FDBFuture *f)
{
    (void)f;
    return 0;
}

fdb_error_t fdb_future_get_error(FDBFuture *f)
{
    return f->err;
}

fdb_error_t fdb_future_get_value(FDBFuture *f, fdb_bool_t *present, const uint8_t **v, int *vl)
{
    if (f->err)
        return f->err;
    *present = f->present;
    *v = f->value;
    *vl = f->vl;
    return 0;
}

fdb_error_t fdb_future_get_keyvalue_array(FDBFuture *f, const kv_t **kv, int *n, fdb_bool_t *more)
{
    if (f->err)
        return f->err;
    *kv = f->kvs;
    *n = f->nkv;
    *more = 0;
    return 0;
}

fdb_error_t fdb_future_get_int64(FDBFuture *f, int64_t *out)
{
    if (f->err)
        return f->err;
    *out = f->version;
    return 0;
}

void fdb_future_destroy(FDBFuture *f)
{
    if (!f)
        return;
    free(f->value);
    free(f->kvs);
    free(f->blob);
    free(f);
}
