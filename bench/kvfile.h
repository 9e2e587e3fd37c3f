/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: flat "key=value" files (one per run), readable by people and
 * by the analyze step. Values run to the end of the line. */
#ifndef CFDB_BENCH_KVFILE_H
#define CFDB_BENCH_KVFILE_H

#include <stdint.h>
#include <stdio.h>

typedef struct kvfile {
    int n;
    char **keys, **vals;
} kvfile;

void kv_put_str(FILE *f, const char *k, const char *v); /* newlines in v become spaces */
void kv_put_int(FILE *f, const char *k, int64_t v);
void kv_put_num(FILE *f, const char *k, double v);

int kv_load(kvfile *kv, const char *path); /* 0 or -1 */
void kv_free(kvfile *kv);
/* Last value of key k (later lines win), or NULL. */
const char *kv_get(const kvfile *kv, const char *k);
/* Numeric value or def when absent / unparsable. */
double kv_num(const kvfile *kv, const char *k, double def);

#endif
