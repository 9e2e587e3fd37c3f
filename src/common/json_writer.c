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

void cfdb_json_init_pretty(cfdb_json *j)
{
    memset(j, 0, sizeof *j);
    j->pretty = true;
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

/* Pretty layout: a new line indented for depth levels. */
static void newline(cfdb_json *j, int depth)
{
    put(j, "\n", 1);
    for (int i = 0; i < depth; i++)
        put(j, "  ", 2);
}

/* Before a value (or a key): the comma that separates it from the previous one (and in the
 * pretty layout its line); nothing between a key and its value. */
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
    if (j->pretty && j->depth > 0)
        newline(j, j->depth);
}

static void open_container(cfdb_json *j, const char *c)
{
    separate(j);
    put(j, c, 1);
    j->depth++;
    j->need_comma = false;
}

/* need_comma tells whether the container holds anything: an empty one closes on its line. */
static void close_container(cfdb_json *j, const char *c)
{
    if (j->depth > 0)
        j->depth--;
    if (j->pretty && j->need_comma)
        newline(j, j->depth);
    put(j, c, 1);
    j->need_comma = true;
    if (j->pretty && j->depth == 0)
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

static void quoted(cfdb_json *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(j, esc, 2);
        } else if (j->pretty && (*p == '\n' || *p == '\r' || *p == '\t')) {
            esc[0] = '\\';
            esc[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
            put(j, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            put(j, esc, 6);
        } else {
            put(j, (const char *)p, 1);
        }
    }
    put(j, "\"", 1);
}

void cfdb_json_key(cfdb_json *j, const char *key)
{
    separate(j);
    quoted(j, key);
    if (j->pretty)
        put(j, ": ", 2);
    else
        put(j, ":", 1);
    j->after_key = true; /* the value follows the colon directly */
}

void cfdb_json_string(cfdb_json *j, const char *s)
{
    separate(j);
    if (s)
        quoted(j, s);
    else
        put(j, "null", 4);
}

void cfdb_json_int(cfdb_json *j, int64_t v)
{
    char b[32];
    separate(j);
    put(j, b, (size_t)snprintf(b, sizeof b, "%" PRId64, v));
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
