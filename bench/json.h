/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: a small JSON reader (DOM) for \xff\xff/status/json and the
 * sealed manifest. */
#ifndef CFDB_BENCH_JSON_H
#define CFDB_BENCH_JSON_H

#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value json_value;
struct json_value {
    json_type type;
    double number;      /* JSON_NUMBER, JSON_BOOL (0/1) */
    char *string;       /* JSON_STRING (NUL-terminated, escapes decoded) */
    size_t count;       /* JSON_ARRAY, JSON_OBJECT */
    char **keys;        /* JSON_OBJECT */
    json_value **items; /* JSON_ARRAY, JSON_OBJECT */
};

/* Parse len bytes. Returns NULL on a syntax error (with a message in err). */
json_value *json_parse(const char *text, size_t len, char *err, size_t errlen);
json_value *json_parse_file(const char *path, char *err, size_t errlen);
void json_free(json_value *v);

/* Member of an object, or NULL. */
const json_value *json_member(const json_value *obj, const char *key);
/* Dotted path lookup, e.g. "cluster.qos.worst_queue_bytes_log_server". */
const json_value *json_path(const json_value *root, const char *path);
/* Number at path; returns 0 and sets *out, or -1 if absent / not a number. */
int json_path_number(const json_value *root, const char *path, double *out);
/* String at path or NULL. */
const char *json_path_string(const json_value *root, const char *path);

#endif
