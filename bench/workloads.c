/* SPDX-License-Identifier: Apache-2.0 */
#include "workloads.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static const char *const names[WL_COUNT] = {
    "grv", "get100", "get1000", "range100", "set100", "batchset50", "batchset50x1000",
};

static const char *const descriptions[WL_COUNT] = {
    "get read version only",
    "one get of a 100-byte value",
    "one get of a 1,000-byte value",
    "one range read of 100 consecutive keys (100-byte values)",
    "one 100-byte set and commit",
    "50 sets of 100 bytes and commit",
    "50 sets of 1,000 bytes and commit",
};

const char *bench_workload_name(int wl)
{
    return wl >= 0 && wl < WL_COUNT ? names[wl] : "?";
}

const char *bench_workload_describe(int wl)
{
    return wl >= 0 && wl < WL_COUNT ? descriptions[wl] : "?";
}

int bench_workload_parse(const char *name)
{
    for (int i = 0; i < WL_COUNT; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

int bench_key(char *buf, int vsize, uint64_t idx)
{
    return snprintf(buf, BENCH_KEY_MAX, "cfdb-bench/v%d/%010llu", vsize, (unsigned long long)idx);
}

static uint8_t value_bytes[1000];
static pthread_once_t value_once = PTHREAD_ONCE_INIT;

static void value_fill(void)
{
    for (int i = 0; i < 1000; i++)
        value_bytes[i] = (uint8_t)('a' + i % 26);
}

const uint8_t *bench_value(int vsize)
{
    (void)vsize;
    pthread_once(&value_once, value_fill);
    return value_bytes;
}

typedef struct txn_plan {
    int wl;
    uint64_t keys;
    uint64_t idx[BENCH_BATCH];
} txn_plan;

/* One attempt of the transaction body. Returns the fdb error (0 on success). */
static fdb_error_t attempt(const bench_fdb_api *api, FDBTransaction *tr, const txn_plan *p,
                           bench_txn_counts *c)
{
    char key[BENCH_KEY_MAX], end[BENCH_KEY_MAX];
    FDBFuture *f = NULL;
    fdb_error_t e = 0;
    switch (p->wl) {
    case WL_GRV: {
        f = api->transaction_get_read_version(tr);
        e = bench_fdb_wait(api, f);
        if (!e) {
            int64_t v = 0;
            e = api->future_get_int64(f, &v);
        }
        break;
    }
    case WL_GET100:
    case WL_GET1000: {
        int vs = p->wl == WL_GET100 ? 100 : 1000;
        int kl = bench_key(key, vs, p->idx[0]);
        f = api->transaction_get(tr, (const uint8_t *)key, kl, 0);
        e = bench_fdb_wait(api, f);
        if (!e) {
            fdb_bool_t present = 0;
            const uint8_t *v = NULL;
            int vl = 0;
            e = api->future_get_value(f, &present, &v, &vl);
            if (!e && (!present || vl != vs))
                c->verify_failures++;
        }
        break;
    }
    case WL_RANGE100: {
        int kl = bench_key(key, 100, p->idx[0]);
        int el = bench_key(end, 100, p->idx[0] + BENCH_RANGE_ROWS);
        f = api->transaction_get_range(tr, (const uint8_t *)key, kl, 0, 1, (const uint8_t *)end, el,
                                       0, 1, BENCH_RANGE_ROWS, 0, BENCH_STREAMING_MODE_EXACT, 1, 0,
                                       0);
        e = bench_fdb_wait(api, f);
        if (!e) {
            const FDBKeyValue *kv = NULL;
            int n = 0;
            fdb_bool_t more = 0;
            e = api->future_get_keyvalue_array(f, &kv, &n, &more);
            uint64_t want = p->keys - p->idx[0] < BENCH_RANGE_ROWS ? p->keys - p->idx[0]
                                                                   : BENCH_RANGE_ROWS;
            if (!e && (uint64_t)n != want)
                c->verify_failures++;
        }
        break;
    }
    case WL_SET100:
    case WL_BATCHSET50:
    case WL_BATCHSET50X1000: {
        int n = p->wl == WL_SET100 ? 1 : BENCH_BATCH;
        int vs = p->wl == WL_BATCHSET50X1000 ? 1000 : 100;
        const uint8_t *val = bench_value(vs);
        for (int i = 0; i < n; i++) {
            int kl = bench_key(key, vs, p->idx[i]);
            api->transaction_set(tr, (const uint8_t *)key, kl, val, vs);
        }
        f = api->transaction_commit(tr);
        e = bench_fdb_wait(api, f);
        break;
    }
    default:
        return 2000; /* client_invalid_operation */
    }
    if (f)
        api->future_destroy(f);
    return e;
}

/* The standard loop: body, then on_error until success or a fatal error. */
static int retry_loop(const bench_fdb_api *api, FDBDatabase *db, const txn_plan *p,
                      bench_txn_counts *c, uint64_t populate_first, uint64_t populate_count)
{
    FDBTransaction *tr = NULL;
    fdb_error_t e = api->database_create_transaction(db, &tr);
    if (e) {
        c->errors++;
        c->last_error = e;
        return -1;
    }
    int rc = 0;
    for (unsigned attempt_no = 0;; attempt_no++) {
        if (p) {
            e = attempt(api, tr, p, c);
        } else {
            char key[BENCH_KEY_MAX];
            for (uint64_t i = populate_first; i < populate_first + populate_count; i++) {
                int kl = bench_key(key, 100, i);
                api->transaction_set(tr, (const uint8_t *)key, kl, bench_value(100), 100);
                kl = bench_key(key, 1000, i);
                api->transaction_set(tr, (const uint8_t *)key, kl, bench_value(1000), 1000);
            }
            FDBFuture *f = api->transaction_commit(tr);
            e = bench_fdb_wait(api, f);
            if (f)
                api->future_destroy(f);
        }
        if (!e)
            break;
        FDBFuture *ef = api->transaction_on_error(tr, e);
        fdb_error_t e2 = bench_fdb_wait(api, ef);
        if (ef)
            api->future_destroy(ef);
        if (e2 || attempt_no + 1 >= BENCH_MAX_RETRIES) {
            c->errors++;
            c->last_error = e2 ? e2 : e;
            rc = -1;
            break;
        }
        c->retries++;
    }
    api->transaction_destroy(tr);
    return rc;
}

int bench_run_txn(const bench_fdb_api *api, FDBDatabase *db, int wl, bench_rng *rng, uint64_t keys,
                  bench_txn_counts *c)
{
    txn_plan p;
    p.wl = wl;
    p.keys = keys;
    int n = (wl == WL_BATCHSET50 || wl == WL_BATCHSET50X1000) ? BENCH_BATCH : 1;
    uint64_t span = keys;
    if (wl == WL_RANGE100)
        span = keys > BENCH_RANGE_ROWS ? keys - BENCH_RANGE_ROWS + 1 : 1;
    for (int i = 0; i < n; i++)
        p.idx[i] = span ? bench_rng_below(rng, span) : 0;
    return retry_loop(api, db, &p, c, 0, 0);
}

int bench_populate_chunk(const bench_fdb_api *api, FDBDatabase *db, uint64_t first, uint64_t count,
                         bench_txn_counts *c)
{
    return retry_loop(api, db, NULL, c, first, count);
}
