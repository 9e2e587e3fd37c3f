/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: the description of a campaign, as sealed in the manifest. */
#ifndef CFDB_BENCH_CAMPAIGN_H
#define CFDB_BENCH_CAMPAIGN_H

#include <limits.h>
#include <stdint.h>

#include "gates.h"
#include "orders.h"
#include "sha256.h"
#include "workloads.h"

#define BENCH_MAX_LEVELS 8
#define BENCH_MAX_BLOCKS 240
#define BENCH_NAME_MAX 64
#define BENCH_PATH_MAX 4096

/* An arm is a library exporting fdb_c (loaded by the worker), or the floor (floor.h: the
 * worker replays pre-encoded requests itself; path and sha256 are cfdb-bench's own). */
enum { BENCH_ARM_LIBRARY = 0, BENCH_ARM_FLOOR = 1 };

typedef struct bench_arm {
    char name[BENCH_NAME_MAX];
    int kind;
    char path[BENCH_PATH_MAX];
    char sha256[BENCH_SHA256_HEX];
    int64_t size;
} bench_arm;

typedef struct bench_level {
    int workers;
    uint64_t warmup, measured;
} bench_level;

typedef struct bench_campaign {
    bench_arm arms[BENCH_MAX_ARMS];
    int narms;
    int workloads[WL_COUNT];
    int nworkloads;
    bench_level levels[BENCH_MAX_LEVELS];
    int nlevels;
    int blocks_requested, blocks;
    int orders[BENCH_MAX_BLOCKS * BENCH_MAX_ARMS]; /* [blocks][narms] arm indices */
    uint64_t keys, seed;
    int control_arm; /* arm used to populate and to read status */
    char floor_note[1024]; /* why there is no floor arm ("" when there is one) */

    char cluster_file[BENCH_PATH_MAX];
    int server_managed; /* the harness starts and stops cfdb-server */
    char server_path[BENCH_PATH_MAX];
    char server_sha256[BENCH_SHA256_HEX];

    char malloc_lib[BENCH_PATH_MAX]; /* empty: allocations not counted */
    char malloc_sha256[BENCH_SHA256_HEX];

    int quiet_enabled;
    bench_quiet_limits quiet;
    int health_enabled, health_required;
    bench_health_limits health;
    double run_timeout_s;
    char client_cpus[64]; /* --client-cpus: workers pinned to these CPUs ("" = not pinned) */
    char server_cpus[64]; /* --server-cpus: the managed cfdb-server pinned to these */

    unsigned bootstrap_resamples;
    uint64_t bootstrap_seed;

    char command_line[4096];
    char created_utc[32];
    char manifest_sha256[BENCH_SHA256_HEX];
} bench_campaign;

/* Seed of one block: identical for every arm in the block (paired keys). */
uint64_t bench_block_seed(const bench_campaign *c, int wl, int level, int block);

#endif
