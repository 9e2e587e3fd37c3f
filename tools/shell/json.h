/* SPDX-License-Identifier: Apache-2.0 */
/* The pretty printer fdbcli uses for `status json' (json_spirit::write_string with
 * pretty_print, as printStatus in fdbcli/StatusCommand.actor.cpp calls it), over the values
 * of the shared JSON reader (src/common/json_reader.h):
 *   - object members sorted by name, "name" : value, one per line;
 *   - arrays one element per line; four spaces per level; an empty object or array is
 *     the opening bracket, a newline, the indentation and the closing bracket;
 *   - integers as integers, other numbers as printf("%.17g") (setprecision(17));
 *   - strings with \" \\ \b \f \n \r \t escaped and every other byte outside 0x20..0x7e
 *     as \u00XX (upper-case hex), as json_spirit does in the C locale. */
#ifndef CFDB_SHELL_JSON_H
#define CFDB_SHELL_JSON_H

#include <stdio.h>

#include "json_reader.h"

/* Writes j as json_spirit's pretty_print does (no trailing newline). */
void shell_json_pretty(FILE *f, const cfdb_jv *j);

#endif /* CFDB_SHELL_JSON_H */
