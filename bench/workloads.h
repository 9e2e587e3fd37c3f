/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: the workloads. Each is one transaction shape run inside the
 * standard fdb_transaction_on_error retry loop.
 *
 * Keyspace (populated before timing): "cfdb-bench/v100/%010u" holds 100-byte
 * values and "cfdb-bench/v1000/%010u" 1,000-byte values, indices 0..keys-1.
 * Keys are drawn random uniform; writes overwrite keys of the same space so
 * value sizes never change.
 */
#ifndef CFDB_BENCH_WORKLOADS_H
#define CFDB_BENCH_WORKLOADS_H

#include <stdint.h>

#include "fdb_api.h"
#include "rng.h"

typedef enum {
    WL_GRV,
    WL_GET100,
    WL_GET1000,
    WL_RANGE100,
    WL_SET100,
    WL_BATCHSET50,
    WL_BATCHSET50X1000,
    WL_COUNT
} bench_workload;

#define BENCH_KEY_MAX 48
#define BENCH_RANGE_ROWS 100
#define BENCH_BATCH 50
#define BENCH_MAX_RETRIES 1000

const char *bench_workload_name(int wl);
const char *bench_workload_describe(int wl);
/* Returns the workload index or -1. */
int bench_workload_parse(const char *name);

/* Key number idx in the space of values of size vsize (100 or 1000). */
int bench_key(char *buf, int vsize, uint64_t idx);
/* A constant value of vsize bytes (vsize <= 1000). */
const uint8_t *bench_value(int vsize);

typedef struct bench_txn_counts {
    uint64_t retries;         /* on_error round trips that led to a retry */
    uint64_t errors;          /* transactions that ended in an error */
    uint64_t verify_failures; /* reads that returned the wrong shape */
    fdb_error_t last_error;
} bench_txn_counts;

/* Run one transaction of workload wl with the standard retry loop.
 * Returns 0 on success, -1 if the transaction ended in an error. */
int bench_run_txn(const bench_fdb_api *api, FDBDatabase *db, int wl, bench_rng *rng, uint64_t keys,
                  bench_txn_counts *c);

/* Write keys [first, first+count) of both spaces in one transaction with
 * the retry loop. */
int bench_populate_chunk(const bench_fdb_api *api, FDBDatabase *db, uint64_t first, uint64_t count,
                         bench_txn_counts *c);

#endif
