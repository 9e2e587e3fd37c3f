/* SPDX-License-Identifier: Apache-2.0 */
/* fdbcli's command-line lexer (see lexer.h for the grammar). The line is edited in place
 * the way fdbcli's parseLine does it: a dropped quote or a resolved escape shortens the
 * buffer behind the scan position, so tokens already recorded (all before it) stay valid. */
#include "lexer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

typedef struct lex {
    char *b;
    size_t len;
    shell_parsed *out;
    shell_token *cur; /* tokens of the command being built */
    size_t cur_n, cur_cap;
    size_t cmd_cap;
} lex;

static bool is_sep(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

static int push_token(lex *l, size_t off, size_t n)
{
    if (l->cur_n == l->cur_cap) {
        size_t cap = l->cur_cap ? l->cur_cap * 2 : 4;
        shell_token *t = realloc(l->cur, cap * sizeof *t);
        if (!t)
            return CFDB_ERR_INTERNAL_ERROR;
        l->cur = t;
        l->cur_cap = cap;
    }
    l->cur[l->cur_n++] = (shell_token){l->b + off, n};
    return 0;
}

static int push_command(lex *l)
{
    shell_parsed *o = l->out;
    if (o->count == l->cmd_cap) {
        size_t cap = l->cmd_cap ? l->cmd_cap * 2 : 2;
        shell_command *c = realloc(o->commands, cap * sizeof *c);
        if (!c)
            return CFDB_ERR_INTERNAL_ERROR;
        o->commands = c;
        l->cmd_cap = cap;
    }
    o->commands[o->count++] = (shell_command){l->cur, l->cur_n};
    l->cur = NULL;
    l->cur_n = l->cur_cap = 0;
    return 0;
}

/* Removes n bytes at i, keeping the NUL after the end. */
static void erase(lex *l, size_t i, size_t n)
{
    memmove(l->b + i, l->b + i + n, l->len - i - n + 1);
    l->len -= n;
}

/* Parses the n characters at p as strtoul base 16 does; true when all were consumed. */
static bool hex_value(const char *p, size_t n, unsigned long *v)
{
    char tmp[8];
    memcpy(tmp, p, n);
    tmp[n] = 0;
    char *end;
    *v = strtoul(tmp, &end, 16);
    return *end == 0;
}

/* The first position at or after i whose byte is not in the separator class (only ' '
 * when spaces_only); len when there is none. */
static size_t skip(const lex *l, size_t i, bool spaces_only)
{
    while (i < l->len && (spaces_only ? l->b[i] == ' ' : is_sep(l->b[i])))
        i++;
    return i;
}

int shell_lexer_parse(const char *line, size_t len, shell_parsed *out)
{
    memset(out, 0, sizeof *out);
    lex l = {.len = len, .out = out};
    l.b = malloc(len + 1);
    if (!l.b)
        return CFDB_ERR_INTERNAL_ERROR;
    memcpy(l.b, line, len);
    l.b[len] = 0;
    out->buf = l.b;

    bool quoted = false, force = false;
    size_t i = skip(&l, 0, true), off = i;
    int err = 0;
    while (i <= l.len && !err) {
        char c = l.b[i]; /* b[len] is the NUL */
        if (c == ';' && !quoted) {
            if (i > off || (force && i == off))
                err = push_token(&l, off, i - off);
            if (!err)
                err = push_command(&l);
            off = i = skip(&l, i + 1, true);
            force = false;
        } else if (c == '"') {
            quoted = !quoted;
            erase(&l, i, 1);
            force = true;
        } else if (is_sep(c) && !quoted) {
            if (i > off || (force && i == off))
                err = push_token(&l, off, i - off);
            off = i = skip(&l, i, false);
            force = false;
        } else if (c == '\\') {
            /* A malformed escape ends parsing: the command keeps the tokens finished so
             * far (the one being read is dropped), as in fdbcli. */
            unsigned long v;
            char next = i + 1 < l.len ? l.b[i + 1] : 0;
            if (i + 2 > l.len) {
                out->malformed = true;
            } else if (next == '"' || next == '\\' || next == ' ' || next == ';') {
                erase(&l, i, 1);
                i++;
            } else if (next == 'u' && i + 6 <= l.len && hex_value(l.b + i + 2, 4, &v) && v <= 0xff) {
                l.b[i] = (char)v;
                erase(&l, i + 1, 5);
                i++;
            } else if (next == 'x' && i + 4 <= l.len && hex_value(l.b + i + 2, 2, &v)) {
                l.b[i] = (char)(unsigned char)v; /* strtoul's "-1" wraps, as char() does */
                erase(&l, i + 1, 3);
                i++;
            } else {
                out->malformed = true;
            }
            if (out->malformed)
                return push_command(&l);
        } else {
            i++;
        }
    }
    if (err) {
        free(l.cur);
        return err;
    }
    /* The scan ends one past the NUL; the last token ends at the line's end. */
    if (l.len > off || (force && l.len == off))
        err = push_token(&l, off, l.len - off);
    if (!err)
        err = push_command(&l);
    if (err) {
        free(l.cur);
        return err;
    }
    out->partial = quoted;
    return 0;
}

void shell_lexer_free(shell_parsed *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(p->commands[i].tokens);
    free(p->commands);
    free(p->buf);
    memset(p, 0, sizeof *p);
}

bool shell_token_is(shell_token t, const char *s)
{
    size_t n = strlen(s);
    return t.n == n && memcmp(t.p, s, n) == 0;
}

void shell_format_token(FILE *f, const char *p, size_t n, bool full_escaping)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (full_escaping && c == '\\')
            fputs("\\\\", f);
        else if (full_escaping && c == '"')
            fputs("\\\"", f);
        else if (c >= 32 && c < 127 && !(full_escaping && c == ' '))
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
}
