/* A small JSON writer, shared by the client (the documents it builds itself:
 * fdb_database_get_client_status, tenant entries) and cfdb-bench (its manifest and
 * results): a growable buffer, commas placed automatically, strings escaped.
 *
 * Two layouts: compact (cfdb_json_init: no white space at all) and pretty
 * (cfdb_json_init_pretty: each member and element on a line of its own, indented by two
 * spaces per level, "key": value, \n \r \t escaped as such, a newline after the outermost
 * value). An allocation failure sets failed and makes every later call a no-op. */
#ifndef CFDB_JSON_WRITER_H
#define CFDB_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cfdb_json {
    char *buf;        /* NUL-terminated once anything is written */
    size_t len, cap;
    bool failed;      /* out of memory: the document is unusable */
    bool need_comma;  /* a value was written at this level */
    bool after_key;   /* a key was written: its value comes next */
    bool pretty;
    int depth;        /* containers open */
} cfdb_json;

void cfdb_json_init(cfdb_json *j);
void cfdb_json_init_pretty(cfdb_json *j);
void cfdb_json_free(cfdb_json *j);
void cfdb_json_begin_object(cfdb_json *j);
void cfdb_json_end_object(cfdb_json *j);
void cfdb_json_begin_array(cfdb_json *j);
void cfdb_json_end_array(cfdb_json *j);
void cfdb_json_key(cfdb_json *j, const char *key); /* the next value belongs to it */
void cfdb_json_string(cfdb_json *j, const char *s); /* NULL writes null */
void cfdb_json_int(cfdb_json *j, int64_t v);
/* %.17g; a value that is not finite is written as 0. */
void cfdb_json_double(cfdb_json *j, double v);
/* %.*g with digits significant digits; a value that is not finite is written as null. */
void cfdb_json_real(cfdb_json *j, double v, int digits);
void cfdb_json_bool(cfdb_json *j, bool v);
void cfdb_json_null(cfdb_json *j);

#endif
