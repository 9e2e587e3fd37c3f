/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: start and stop the cfdb-server the harness targets by default. */
#ifndef CFDB_BENCH_SERVER_H
#define CFDB_BENCH_SERVER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct bench_server {
    pid_t pid;
    int port;
    char cluster_file[4096];
} bench_server;

/* Start `bin --listen 127.0.0.1:PORT --cluster-file DIR/fdb.cluster` with
 * output to DIR/server.log, pinned to `cpus` when not empty (cpus.h), and wait until the
 * cluster file is written.
 * Returns 0, or -1 with a message in err. */
int bench_server_start(const char *bin, const char *dir, const char *cpus, double timeout_s,
                       bench_server *s, char *err, size_t errlen);
/* The same with extra cfdb-server arguments (NULL-terminated, may be NULL): the Record Layer
 * phase (rl_bench.c) starts it with --shards, --separate-ports and --control-port. */
int bench_server_start_args(const char *bin, const char *dir, const char *cpus,
                            const char *const *extra, double timeout_s, bench_server *s, char *err,
                            size_t errlen);
void bench_server_stop(bench_server *s);

#endif
