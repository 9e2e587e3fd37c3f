/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell's command-line lexer: fdbcli's quoting and escapes (parseLine in
 * fdbcli/fdbcli.actor.cpp, FoundationDB 7.3.77), and the token formatting fdbcli uses
 * when it echoes commands (formatStringRef).
 *
 * A line is split into commands at unquoted ';' and each command into tokens at unquoted
 * space, tab, CR or LF. '"' toggles quoting (and is dropped; "" is an empty token).
 * Backslash escapes, quoted or not: \" \\ \<space> \; stand for the character itself,
 * \xNN for one byte (two characters read by strtoul base 16, which must consume both),
 * \uNNNN for one byte 0..255. Any other escape, or one cut short by the end of the line,
 * is malformed; an open quote at the end is partial.
 *
 * Memory: shell_lexer_parse copies the line into one heap buffer owned by the result;
 * tokens point into it (binary-safe: a token may contain NUL bytes). The token and command
 * arrays grow by doubling and are bounded by the line's length.
 */
#ifndef CFDB_SHELL_LEXER_H
#define CFDB_SHELL_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct shell_token {
    const char *p;
    size_t n;
} shell_token;

typedef struct shell_command {
    shell_token *tokens;
    size_t count;
} shell_command;

typedef struct shell_parsed {
    char *buf;               /* the line, escapes resolved in place */
    shell_command *commands; /* at least one (possibly empty) command */
    size_t count;
    bool malformed;          /* a bad escape sequence: parsing stopped there */
    bool partial;            /* an unterminated quote */
} shell_parsed;

/* Parses len bytes of line. 0, or 4100 (internal_error) when out of memory. */
int shell_lexer_parse(const char *line, size_t len, shell_parsed *out);
void shell_lexer_free(shell_parsed *p);

/* True when token t equals the C string s. */
bool shell_token_is(shell_token t, const char *s);

/* fdbcli's formatStringRef: bytes 32..126 as themselves, others as \xNN; with full
 * escaping also '\\' as "\\\\", '"' as "\\\"" and ' ' as \x20. */
void shell_format_token(FILE *f, const char *p, size_t n, bool full_escaping);

#endif /* CFDB_SHELL_LEXER_H */
