/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: the worker, a fresh process per run ("cfdb-bench _worker").
 *
 * Modes:
 *   run       load the arm, run warm-up + measured transactions of one
 *             workload with N closed-loop threads, write PREFIX.lat (one
 *             latency in nanoseconds per measured transaction) and PREFIX.kv
 *             (counts, CPU, allocations, RSS, window).
 *   populate  write the keyspace.
 *   status    read \xff\xff/status/json through the API into PREFIX.status.json.
 */
#ifndef CFDB_BENCH_WORKER_H
#define CFDB_BENCH_WORKER_H

int bench_worker_main(int argc, char **argv);

#endif
