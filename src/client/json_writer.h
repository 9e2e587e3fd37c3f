/* A small JSON writer for the documents the client builds itself (fdb_database_get_client_status):
 * a growable buffer, commas placed automatically, strings escaped. */
#ifndef CFDB_CLIENT_JSON_WRITER_H
#define CFDB_CLIENT_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cfdb_json {
    char *buf;
    size_t len, cap;
    bool failed;      /* out of memory: the document is unusable */
    bool need_comma;  /* a value was written at this level */
} cfdb_json;

void cfdb_json_init(cfdb_json *j);
void cfdb_json_free(cfdb_json *j);
void cfdb_json_begin_object(cfdb_json *j);
void cfdb_json_end_object(cfdb_json *j);
void cfdb_json_begin_array(cfdb_json *j);
void cfdb_json_end_array(cfdb_json *j);
void cfdb_json_key(cfdb_json *j, const char *key); /* the next value belongs to it */
void cfdb_json_string(cfdb_json *j, const char *s);
void cfdb_json_int(cfdb_json *j, int64_t v);
void cfdb_json_double(cfdb_json *j, double v);
void cfdb_json_bool(cfdb_json *j, bool v);

#endif
