/* SPDX-License-Identifier: Apache-2.0 */
/* How the cfdb shell prints keys and values.
 *
 * Bytes: FoundationDB's printable() (Traceable<StringRef>::toString in
 * flow/include/flow/Traceable.h, 7.3.77): bytes 32..126 as themselves except '\\' as
 * "\\\\", every other byte as \xNN with lower-case hex. This is how fdbcli prints the
 * keys and values of get, getrange and getrangekeys.
 *
 * Tuples (cfdb's --tuple mode): bytes that unpack as a tuple (include/cfdb/tuple.h) are
 * printed the way Python's repr prints the tuple the fdb binding returns:
 *   ('abc', b'\x00x', 42, None, True, 1.5, UUID('...'), ('nested',)), a one-element tuple
 *   with a trailing comma; text strings with ' and \\ escaped and control bytes as \xNN;
 *   versionstamps as Versionstamp(<20 hex digits>, <user version>) (incomplete: the hex is
 *   "incomplete"). Bytes that do not unpack are printed with printable().
 */
#ifndef CFDB_SHELL_PRINTING_H
#define CFDB_SHELL_PRINTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void shell_print_printable(FILE *f, const uint8_t *p, size_t n);
/* With tuple_mode, as a tuple when p unpacks as one; otherwise printable(). */
void shell_print_bytes(FILE *f, const uint8_t *p, size_t n, bool tuple_mode);
/* The tuple form of p when it unpacks (returns true), else nothing printed. */
bool shell_print_tuple(FILE *f, const uint8_t *p, size_t n);

#endif /* CFDB_SHELL_PRINTING_H */
