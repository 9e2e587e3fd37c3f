/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: the floor arm, a minimal client that shows the least any client can spend on a
 * workload on this machine and server ("cfdb-bench _worker --mode floor").
 *
 * It finds the cluster's GRV proxy, commit proxy and the storage server of the bench keyspace
 * once (OpenDatabaseCoordRequest, GetKeyServerLocationsRequest), then replays each workload's
 * requests on ONE connection from ONE thread: every request is encoded once into a per-slot
 * template before timing, and a transaction only patches its keys and read version into the
 * template and reseals the frame (length, XXH3 checksum). All requests ready in a loop
 * iteration leave in one writev(), every reply that has arrived is taken with one recv().
 * Workers are closed-loop slots multiplexed on that connection: a slot's transaction is its
 * GRV, then its read or commit; retries go back to the GRV, as fdb_transaction_on_error does.
 * Replies are decoded with the wire library's decoder into a fixed arena and checked (values
 * read back equal the populated ones, a range has its rows, a commit has a version).
 *
 * What it leaves out, on purpose (so cfdb / floor reads as the API's whole cost):
 *   - the fdb_c API, futures, threads and hand-offs between them, read-your-writes, the
 *     write map, conflict-range coalescing (keys are only sorted) and the self-conflict key;
 *   - location caching and lookups (the bench keyspace must sit on ONE shard of ONE storage
 *     server, and the GRV proxy, commit proxy and that storage server must share one
 *     address); a cluster that does not fit is refused with the reason, and "cfdb-bench run"
 *     then runs without the floor (it probes first: "--mode floor-probe");
 *   - GRV batching across slots (each slot asks for its own read version), commit batching,
 *     backoff on retries, watches, failure monitoring, pings of its own, TLS, tenants.
 */
#ifndef CFDB_BENCH_FLOOR_H
#define CFDB_BENCH_FLOOR_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_floor_opts {
    const char *cluster_file;
    const char *prefix; /* writes PREFIX.lat and PREFIX.kv, as a worker run does */
    int wl, workers;
    uint64_t warmup, measured, keys, seed;
} bench_floor_opts;

/* "_worker --mode floor": returns a process exit code; a failure is written to PREFIX.kv
 * (status=failed, failure=...). */
int bench_floor_main(const bench_floor_opts *o);

/* "_worker --mode floor-probe": discovery only. 0 when the floor can run against the cluster,
 * else -1 with the reason in why (e.g. the bench keyspace spans several shards). */
int bench_floor_probe(const char *cluster_file, char *why, size_t len);

#endif
