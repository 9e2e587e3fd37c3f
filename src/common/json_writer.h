/* A small JSON writer, shared by the client (the documents it builds itself:
 * fdb_database_get_client_status, tenant entries), cfdb-bench (its manifest and results)
 * and the shell (`status json`): a growable buffer, commas placed automatically, strings
 * escaped.
 *
 * Three layouts:
 *   CFDB_JSON_COMPACT (cfdb_json_init): no white space at all; bytes below 0x20 as \u00xx.
 *   CFDB_JSON_PRETTY (cfdb_json_init_pretty, cfdb-bench's reports): each member and element
 *     on a line of its own, two spaces per level, "key": value, an empty object or array as
 *     {} or [], \n \r \t escaped as such, a newline after the outermost value.
 *   CFDB_JSON_SPIRIT (json_spirit's pretty_print, as fdbcli prints `status json'): four
 *     spaces per level, "key" : value, an empty object or array as the opening bracket, a
 *     newline, the indentation and the closing bracket; \b \f \n \r \t escaped as such and
 *     every other byte outside 0x20..0x7e as \u00XX; no newline at the end.
 * An allocation failure sets failed and makes every later call a no-op. */
#ifndef CFDB_JSON_WRITER_H
#define CFDB_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cfdb_json_layout { CFDB_JSON_COMPACT, CFDB_JSON_PRETTY, CFDB_JSON_SPIRIT } cfdb_json_layout;

typedef struct cfdb_json {
    char *buf;        /* NUL-terminated once anything is written */
    size_t len, cap;
    bool failed;      /* out of memory: the document is unusable */
    bool need_comma;  /* a value was written at this level */
    bool after_key;   /* a key was written: its value comes next */
    cfdb_json_layout layout;
    int depth;        /* containers open */
} cfdb_json;

void cfdb_json_init(cfdb_json *j); /* CFDB_JSON_COMPACT */
void cfdb_json_init_pretty(cfdb_json *j); /* CFDB_JSON_PRETTY */
void cfdb_json_init_layout(cfdb_json *j, cfdb_json_layout layout);
void cfdb_json_free(cfdb_json *j);
void cfdb_json_begin_object(cfdb_json *j);
void cfdb_json_end_object(cfdb_json *j);
void cfdb_json_begin_array(cfdb_json *j);
void cfdb_json_end_array(cfdb_json *j);
void cfdb_json_key(cfdb_json *j, const char *key); /* the next value belongs to it */
void cfdb_json_key_n(cfdb_json *j, const char *key, size_t n);
void cfdb_json_string(cfdb_json *j, const char *s); /* NULL writes null */
void cfdb_json_string_n(cfdb_json *j, const char *s, size_t n);
void cfdb_json_int(cfdb_json *j, int64_t v);
/* An integer given as its decimal digits (one beyond int64, as the JSON reader keeps it). */
void cfdb_json_digits(cfdb_json *j, const char *digits, size_t n);
/* %.17g; a value that is not finite is written as 0. */
void cfdb_json_double(cfdb_json *j, double v);
/* %.*g with digits significant digits; a value that is not finite is written as null. */
void cfdb_json_real(cfdb_json *j, double v, int digits);
void cfdb_json_bool(cfdb_json *j, bool v);
void cfdb_json_null(cfdb_json *j);

#endif
