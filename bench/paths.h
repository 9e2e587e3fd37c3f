/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: where the harness finds its own binary, the cfdb client
 * library, cfdb-server, the malloc counter and other fdb_c libraries. */
#ifndef CFDB_BENCH_PATHS_H
#define CFDB_BENCH_PATHS_H

#include <stddef.h>

/* Absolute path of the running executable. */
int bench_self_exe(char *out, size_t len);
/* Directory of the running executable. */
int bench_self_dir(char *out, size_t len);
int bench_file_exists(const char *path);
int bench_is_executable(const char *path);

/* First existing candidate relative to the binary directory, or -1. */
int bench_find_cfdb_lib(char *out, size_t len);
int bench_find_server(char *out, size_t len);
int bench_find_malloc_lib(char *out, size_t len);
/* System copies of libfdb_c (e.g. a real 7.3.x); returns how many were
 * found, at most max, each written into out[i] (len bytes). */
int bench_find_system_fdb_c(char out[][4096], int max);

#endif
