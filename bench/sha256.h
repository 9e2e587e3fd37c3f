/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: SHA-256 of files and buffers (OpenSSL libcrypto), as lowercase hex. */
#ifndef CFDB_BENCH_SHA256_H
#define CFDB_BENCH_SHA256_H

#include <stddef.h>

#define BENCH_SHA256_HEX 65 /* 64 hex digits + NUL */

int bench_sha256_buf(const void *data, size_t len, char hex[BENCH_SHA256_HEX]);
/* Returns 0, or -1 if the file cannot be read. */
int bench_sha256_file(const char *path, char hex[BENCH_SHA256_HEX]);

#endif
