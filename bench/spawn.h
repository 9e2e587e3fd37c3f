/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: run one worker as a fresh process (fork + exec of this binary). */
#ifndef CFDB_BENCH_SPAWN_H
#define CFDB_BENCH_SPAWN_H

#include <stddef.h>

typedef struct bench_spawn_result {
    int exited;      /* 1 if it exited normally */
    int exit_code;   /* when exited */
    int signal;      /* when killed */
    int timed_out;
    double wall_s;
} bench_spawn_result;

/* Run argv (argv[0] = path) with stdout+stderr appended to log_path,
 * when preload is non-empty LD_PRELOAD=preload, and when cpus is non-empty pinned to those
 * CPUs (cpus.h). Kill it after timeout_s. Returns 0 if it could be started. */
int bench_spawn(char *const argv[], const char *log_path, const char *preload, const char *cpus,
                double timeout_s, bench_spawn_result *r);
/* Human-readable description of a result ("exit 0", "signal 11", "timed out"). */
void bench_spawn_describe(const bench_spawn_result *r, char *out, size_t len);

#endif
