/* SPDX-License-Identifier: Apache-2.0 */
/* The json_spirit-style pretty printer fdbcli uses for `status json' (see json.h). */
#include "json.h"

#include <stdint.h>
#include <string.h>

static void put_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c >= 0x20 && c <= 0x7e)
                fputc(c, f);
            else
                fprintf(f, "\\u%04X", c);
        }
    }
    fputc('"', f);
}

static void indent(FILE *f, int level)
{
    for (int i = 0; i < level; i++)
        fputs("    ", f);
}

static void pretty(FILE *f, const cfdb_jv *j, int level)
{
    switch (j->type) {
    case JSON_NULL: fputs("null", f); break;
    case JSON_BOOL: fputs(j->b ? "true" : "false", f); break;
    case JSON_INT: fwrite(j->text, 1, j->len, f); break;
    case JSON_REAL: fprintf(f, "%.17g", j->real); break;
    case JSON_STRING: put_string(f, j->text, j->len); break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        fputc(j->type == JSON_OBJECT ? '{' : '[', f);
        fputc('\n', f);
        for (size_t i = 0; i < j->count; i++) {
            indent(f, level + 1);
            if (j->type == JSON_OBJECT) {
                put_string(f, j->items[i]->name, j->items[i]->name_len);
                fputs(" : ", f);
            }
            pretty(f, j->items[i], level + 1);
            if (i + 1 < j->count)
                fputc(',', f);
            fputc('\n', f);
        }
        indent(f, level);
        fputc(j->type == JSON_OBJECT ? '}' : ']', f);
        break;
    }
}

void shell_json_pretty(FILE *f, const cfdb_jv *j) { pretty(f, j, 0); }
