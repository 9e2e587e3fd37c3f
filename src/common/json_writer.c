/* See json_writer.h. */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cfdb_json_init(cfdb_json *j)
{
    memset(j, 0, sizeof *j);
}

void cfdb_json_init_layout(cfdb_json *j, cfdb_json_layout layout)
{
    memset(j, 0, sizeof *j);
    j->layout = layout;
}

void cfdb_json_init_pretty(cfdb_json *j)
{
    cfdb_json_init_layout(j, CFDB_JSON_PRETTY);
}

void cfdb_json_free(cfdb_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

static void put(cfdb_json *j, const char *s, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 1024;
        while (cap < j->len + n + 1)
            cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb) {
            j->failed = true;
            return;
        }
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = 0;
}

/* The indented layouts: a new line indented for depth levels. */
static void newline(cfdb_json *j, int depth)
{
    put(j, "\n", 1);
    for (int i = 0; i < depth; i++) {
        if (j->layout == CFDB_JSON_SPIRIT)
            put(j, "    ", 4);
        else
            put(j, "  ", 2);
    }
}

/* Before a value (or a key): the comma that separates it from the previous one (and in the
 * indented layouts its line); nothing between a key and its value. */
static void separate(cfdb_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        j->need_comma = true;
        return;
    }
    if (j->need_comma)
        put(j, ",", 1);
    j->need_comma = true;
    if (j->layout != CFDB_JSON_COMPACT && j->depth > 0)
        newline(j, j->depth);
}

static void open_container(cfdb_json *j, const char *c)
{
    separate(j);
    put(j, c, 1);
    j->depth++;
    j->need_comma = false;
}

/* need_comma tells whether the container holds anything: in the pretty layout an empty one
 * closes on its line, in json_spirit's on the next. */
static void close_container(cfdb_json *j, const char *c)
{
    if (j->depth > 0)
        j->depth--;
    if ((j->layout == CFDB_JSON_PRETTY && j->need_comma) || j->layout == CFDB_JSON_SPIRIT)
        newline(j, j->depth);
    put(j, c, 1);
    j->need_comma = true;
    if (j->layout == CFDB_JSON_PRETTY && j->depth == 0)
        put(j, "\n", 1);
}

void cfdb_json_begin_object(cfdb_json *j)
{
    open_container(j, "{");
}

void cfdb_json_end_object(cfdb_json *j)
{
    close_container(j, "}");
}

void cfdb_json_begin_array(cfdb_json *j)
{
    open_container(j, "[");
}

void cfdb_json_end_array(cfdb_json *j)
{
    close_container(j, "]");
}

/* The short escape of c in this layout, or 0. */
static char short_escape(const cfdb_json *j, unsigned char c)
{
    if (c == '"' || c == '\\')
        return (char)c;
    if (j->layout == CFDB_JSON_COMPACT)
        return 0;
    switch (c) {
    case '\n': return 'n';
    case '\r': return 'r';
    case '\t': return 't';
    case '\b': return j->layout == CFDB_JSON_SPIRIT ? 'b' : 0;
    case '\f': return j->layout == CFDB_JSON_SPIRIT ? 'f' : 0;
    default: return 0;
    }
}

static void quoted(cfdb_json *j, const char *s, size_t n)
{
    put(j, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        char e = short_escape(j, c);
        if (e) {
            esc[0] = '\\';
            esc[1] = e;
            put(j, esc, 2);
        } else if (c < 0x20 || (j->layout == CFDB_JSON_SPIRIT && c > 0x7e)) {
            snprintf(esc, sizeof esc, j->layout == CFDB_JSON_SPIRIT ? "\\u%04X" : "\\u%04x", c);
            put(j, esc, 6);
        } else {
            put(j, (const char *)&s[i], 1);
        }
    }
    put(j, "\"", 1);
}

void cfdb_json_key_n(cfdb_json *j, const char *key, size_t n)
{
    separate(j);
    quoted(j, key, n);
    if (j->layout == CFDB_JSON_SPIRIT)
        put(j, " : ", 3);
    else if (j->layout == CFDB_JSON_PRETTY)
        put(j, ": ", 2);
    else
        put(j, ":", 1);
    j->after_key = true; /* the value follows the colon directly */
}

void cfdb_json_key(cfdb_json *j, const char *key)
{
    cfdb_json_key_n(j, key, strlen(key));
}

void cfdb_json_string_n(cfdb_json *j, const char *s, size_t n)
{
    separate(j);
    quoted(j, s, n);
}

void cfdb_json_string(cfdb_json *j, const char *s)
{
    if (s) {
        cfdb_json_string_n(j, s, strlen(s));
    } else {
        separate(j);
        put(j, "null", 4);
    }
}

void cfdb_json_int(cfdb_json *j, int64_t v)
{
    char b[32];
    separate(j);
    put(j, b, (size_t)snprintf(b, sizeof b, "%" PRId64, v));
}

void cfdb_json_digits(cfdb_json *j, const char *digits, size_t n)
{
    separate(j);
    put(j, digits, n);
}

void cfdb_json_double(cfdb_json *j, double v)
{
    char b[40];
    separate(j);
    if (!isfinite(v))
        v = 0;
    put(j, b, (size_t)snprintf(b, sizeof b, "%.17g", v));
}

void cfdb_json_real(cfdb_json *j, double v, int digits)
{
    char b[48];
    separate(j);
    if (isfinite(v))
        put(j, b, (size_t)snprintf(b, sizeof b, "%.*g", digits, v));
    else
        put(j, "null", 4);
}

void cfdb_json_bool(cfdb_json *j, bool v)
{
    separate(j);
    put(j, v ? "true" : "false", v ? 4 : 5);
}

void cfdb_json_null(cfdb_json *j)
{
    separate(j);
    put(j, "null", 4);
}
