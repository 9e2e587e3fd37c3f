/* SPDX-License-Identifier: Apache-2.0 */
/* A small JSON reader and the pretty printer fdbcli uses for `status json'
 * (json_spirit::write_string with pretty_print, as printStatus in
 * fdbcli/StatusCommand.actor.cpp calls it):
 *   - object members sorted by name (json_spirit's mObject is a std::map; a repeated
 *     name keeps the last value), "name" : value, one per line;
 *   - arrays one element per line; four spaces per level; an empty object or array is
 *     the opening bracket, a newline, the indentation and the closing bracket;
 *   - integers as integers, other numbers as printf("%.17g") (setprecision(17));
 *   - strings with \" \\ \b \f \n \r \t escaped and every other byte outside 0x20..0x7e
 *     as \u00XX (upper-case hex), as json_spirit does in the C locale; a \uXXXX escape
 *     read keeps only its low byte, as json_spirit's reader does.
 *
 * Memory: one parse allocates its nodes with malloc; nesting is bounded by
 * SHELL_JSON_MAX_DEPTH and everything else by the input's length. Bad input: 0 returned,
 * nothing leaked.
 */
#ifndef CFDB_SHELL_JSON_H
#define CFDB_SHELL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SHELL_JSON_MAX_DEPTH 128

typedef enum shell_json_type { JSON_NULL, JSON_BOOL, JSON_INT, JSON_REAL, JSON_STRING, JSON_ARRAY, JSON_OBJECT } shell_json_type;

typedef struct shell_json shell_json;
struct shell_json {
    shell_json_type type;
    bool b;
    char *text;  /* STRING: the unescaped bytes; INT: the digits */
    size_t len;
    double real;
    char *name;  /* member name when inside an object */
    size_t name_len;
    size_t order; /* position in the input object */
    shell_json **items; /* ARRAY / OBJECT (objects sorted by name) */
    size_t count;
};

/* Parses n bytes; NULL when they are not one JSON value (or out of memory). */
shell_json *shell_json_parse(const char *p, size_t n);
void shell_json_free(shell_json *j);
/* The member called name of an object, or NULL. */
const shell_json *shell_json_get(const shell_json *obj, const char *name);
/* Writes j as json_spirit's pretty_print does (no trailing newline). */
void shell_json_pretty(FILE *f, const shell_json *j);

#endif /* CFDB_SHELL_JSON_H */
