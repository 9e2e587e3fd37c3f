/* SPDX-License-Identifier: Apache-2.0 */
/* A small JSON reader (src/common/json_reader.c), shared by the client (status json for the
 * exclusion checks) and the shell:
 *   - object members sorted by name (as json_spirit's mObject, a std::map: a repeated name
 *     keeps the last value), each with its position in the input;
 *   - integers kept as their digits, other numbers as doubles;
 *   - strings unescaped; a \uXXXX escape keeps only its low byte, as json_spirit's reader
 *     does.
 *
 * Memory: one parse allocates its nodes with malloc; nesting is bounded by
 * CFDB_JV_MAX_DEPTH and everything else by the input's length. Bad input: NULL returned,
 * nothing leaked. */
#ifndef CFDB_JSON_READER_H
#define CFDB_JSON_READER_H

#include <stdbool.h>
#include <stddef.h>

#define CFDB_JV_MAX_DEPTH 128

typedef enum cfdb_jv_type { JSON_NULL, JSON_BOOL, JSON_INT, JSON_REAL, JSON_STRING, JSON_ARRAY, JSON_OBJECT } cfdb_jv_type;

typedef struct cfdb_jv cfdb_jv;
struct cfdb_jv {
    cfdb_jv_type type;
    bool b;
    char *text;  /* STRING: the unescaped bytes; INT: the digits */
    size_t len;
    double real;
    char *name;  /* member name when inside an object */
    size_t name_len;
    size_t order; /* position in the input object */
    cfdb_jv **items; /* ARRAY / OBJECT (objects sorted by name) */
    size_t count;
};

/* Parses n bytes; NULL when they are not one JSON value (or out of memory). */
cfdb_jv *cfdb_jv_parse(const char *p, size_t n);
void cfdb_jv_free(cfdb_jv *j);
/* The member called name of an object, or NULL. */
const cfdb_jv *cfdb_jv_get(const cfdb_jv *obj, const char *name);

#endif /* CFDB_JSON_READER_H */
