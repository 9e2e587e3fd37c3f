/* SPDX-License-Identifier: Apache-2.0 */
#include "json_out.h"

#include <inttypes.h>
#include <math.h>

void jo_init(json_out *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
    j->pending_key = 0;
}

static void indent(json_out *j)
{
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Separator before a value or key at the current depth. */
static void before_value(json_out *j)
{
    if (j->pending_key) {
        j->pending_key = 0;
        return;
    }
    if (j->depth > 0) {
        if (j->count[j->depth]++)
            fputc(',', j->f);
        indent(j);
    }
}

void jo_write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void open_(json_out *j, char c)
{
    before_value(j);
    fputc(c, j->f);
    if (j->depth + 1 < JSON_OUT_MAX_DEPTH)
        j->depth++;
    j->count[j->depth] = 0;
}

static void close_(json_out *j, char c)
{
    int had = j->count[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had)
        indent(j);
    fputc(c, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

void jo_obj(json_out *j) { open_(j, '{'); }
void jo_arr(json_out *j) { open_(j, '['); }
void jo_end_obj(json_out *j) { close_(j, '}'); }
void jo_end_arr(json_out *j) { close_(j, ']'); }

void jo_key(json_out *j, const char *k)
{
    before_value(j);
    jo_write_escaped(j->f, k);
    fputs(": ", j->f);
    j->pending_key = 1;
}

void jo_str(json_out *j, const char *s)
{
    before_value(j);
    if (s)
        jo_write_escaped(j->f, s);
    else
        fputs("null", j->f);
}

void jo_int(json_out *j, int64_t v)
{
    before_value(j);
    fprintf(j->f, "%" PRId64, v);
}

void jo_num(json_out *j, double v)
{
    before_value(j);
    if (isfinite(v))
        fprintf(j->f, "%.12g", v);
    else
        fputs("null", j->f);
}

void jo_bool(json_out *j, int v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->f);
}

void jo_null(json_out *j)
{
    before_value(j);
    fputs("null", j->f);
}
