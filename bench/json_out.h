/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: a streaming JSON writer with indentation and comma tracking. */
#ifndef CFDB_BENCH_JSON_OUT_H
#define CFDB_BENCH_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

#define JSON_OUT_MAX_DEPTH 32

typedef struct json_out {
    FILE *f;
    int depth;
    int count[JSON_OUT_MAX_DEPTH]; /* members written at each depth */
    int pending_key;               /* a key was written, value comes next */
} json_out;

void jo_init(json_out *j, FILE *f);
void jo_obj(json_out *j);  /* { */
void jo_arr(json_out *j);  /* [ */
void jo_end_obj(json_out *j);
void jo_end_arr(json_out *j);
void jo_key(json_out *j, const char *k);
void jo_str(json_out *j, const char *s);
void jo_int(json_out *j, int64_t v);
void jo_num(json_out *j, double v); /* NaN/inf become null */
void jo_bool(json_out *j, int v);
void jo_null(json_out *j);
/* Write a JSON string literal with escapes to f. */
void jo_write_escaped(FILE *f, const char *s);

#endif
