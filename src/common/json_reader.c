/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON reader (see json_reader.h). Recursive descent over the input; depth bounded
 * by CFDB_JV_MAX_DEPTH. */
#include "json_reader.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    const char *p, *end;
    int depth;
} reader;

static void ws(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool lit(reader *r, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, s, n) != 0)
        return false;
    r->p += n;
    return true;
}

/* The value of hex digit c, or 16 when c is not one. */
static unsigned hexdig(char c)
{
    if (c >= '0' && c <= '9')
        return (unsigned)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (unsigned)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (unsigned)(c - 'A' + 10);
    return 16;
}

/* A string at r->p (after the opening quote); its bytes into a new buffer. */
static char *read_string(reader *r, size_t *len)
{
    char *out = malloc((size_t)(r->end - r->p) + 1); /* unescaping never grows it beyond */
    if (!out)
        return NULL;
    size_t n = 0;
    while (r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        if ((unsigned char)c < 0x20)
            goto bad;
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        if (r->p >= r->end)
            goto bad;
        c = *r->p++;
        switch (c) {
        case '"': case '\\': case '/': out[n++] = c; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            if (r->end - r->p < 4)
                goto bad;
            unsigned v = 0;
            for (int k = 0; k < 4; k++) {
                unsigned d = hexdig(r->p[k]);
                if (d > 15)
                    goto bad;
                v = v * 16 + d;
            }
            r->p += 4;
            /* json_spirit keeps only the low byte of the code unit (unicode_str_to_char) */
            out[n++] = (char)(v & 0xff);
            break;
        }
        default:
            goto bad;
        }
    }
    if (r->p >= r->end)
        goto bad;
    r->p++; /* closing quote */
    out[n] = 0;
    *len = n;
    return out;
bad:
    free(out);
    return NULL;
}

static int cmp_members(const void *a, const void *b)
{
    const cfdb_jv *x = *(cfdb_jv *const *)a, *y = *(cfdb_jv *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    if (c)
        return c;
    if (x->name_len != y->name_len)
        return x->name_len < y->name_len ? -1 : 1;
    /* equal names: the later one sorts last, and is the one kept */
    return x->order < y->order ? -1 : x->order > y->order;
}

static cfdb_jv *value(reader *r);

static bool push(cfdb_jv *c, cfdb_jv *item, size_t *cap)
{
    if (c->count == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        cfdb_jv **p = realloc(c->items, nc * sizeof *p);
        if (!p)
            return false;
        c->items = p;
        *cap = nc;
    }
    c->items[c->count++] = item;
    return true;
}

static cfdb_jv *container(reader *r, cfdb_jv *j, bool object)
{
    size_t cap = 0;
    char close = object ? '}' : ']';
    ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return j;
    }
    for (;;) {
        char *name = NULL;
        size_t name_len = 0;
        if (object) {
            ws(r);
            if (r->p >= r->end || *r->p != '"')
                goto bad;
            r->p++;
            if (!(name = read_string(r, &name_len)))
                goto bad;
            ws(r);
            if (r->p >= r->end || *r->p != ':') {
                free(name);
                goto bad;
            }
            r->p++;
        }
        cfdb_jv *item = value(r);
        if (!item) {
            free(name);
            goto bad;
        }
        item->name = name;
        item->name_len = name_len;
        item->order = j->count;
        if (!push(j, item, &cap)) {
            cfdb_jv_free(item);
            goto bad;
        }
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            break;
        }
        goto bad;
    }
    if (object && j->count > 1) {
        /* sort by name, the input order breaking ties; then keep the last of equal names */
        qsort(j->items, j->count, sizeof *j->items, cmp_members);
        size_t out = 0;
        for (size_t i = 0; i < j->count; i++) {
            cfdb_jv *m = j->items[i];
            if (i + 1 < j->count && j->items[i + 1]->name_len == m->name_len &&
                memcmp(j->items[i + 1]->name, m->name, m->name_len) == 0) {
                cfdb_jv_free(m);
                continue;
            }
            j->items[out++] = m;
        }
        j->count = out;
    }
    return j;
bad:
    cfdb_jv_free(j);
    return NULL;
}

static cfdb_jv *value(reader *r)
{
    ws(r);
    if (r->p >= r->end || ++r->depth > CFDB_JV_MAX_DEPTH)
        return NULL;
    cfdb_jv *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    char c = *r->p;
    if (c == '{' || c == '[') {
        r->p++;
        j->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
        j = container(r, j, c == '{');
    } else if (c == '"') {
        r->p++;
        j->type = JSON_STRING;
        if (!(j->text = read_string(r, &j->len))) {
            free(j);
            j = NULL;
        }
    } else if (lit(r, "true") || lit(r, "false")) {
        j->type = JSON_BOOL;
        j->b = r->p[-1] == 'e' && r->p[-2] == 'u';
    } else if (lit(r, "null")) {
        j->type = JSON_NULL;
    } else {
        const char *s = r->p;
        bool real = false;
        if (r->p < r->end && *r->p == '-')
            r->p++;
        while (r->p < r->end && ((*r->p >= '0' && *r->p <= '9') || *r->p == '.' || *r->p == 'e' ||
                                 *r->p == 'E' || *r->p == '+' || *r->p == '-')) {
            if (*r->p == '.' || *r->p == 'e' || *r->p == 'E')
                real = true;
            r->p++;
        }
        size_t n = (size_t)(r->p - s);
        char buf[128];
        char *end;
        if (n == 0 || n >= sizeof buf) {
            free(j);
            return NULL;
        }
        memcpy(buf, s, n);
        buf[n] = 0;
        if (real) {
            j->type = JSON_REAL;
            j->real = strtod(buf, &end);
        } else {
            /* int64 or uint64 as json_spirit keeps them: printed back in decimal */
            j->type = JSON_INT;
            char digits[32];
            if (buf[0] == '-') {
                long long v = strtoll(buf, &end, 10);
                snprintf(digits, sizeof digits, "%lld", v);
            } else {
                unsigned long long v = strtoull(buf, &end, 10);
                snprintf(digits, sizeof digits, "%llu", v);
            }
            j->len = strlen(digits);
            j->text = malloc(j->len + 1);
            if (j->text)
                memcpy(j->text, digits, j->len + 1);
            else
                end = buf;
        }
        if (*end) {
            cfdb_jv_free(j);
            return NULL;
        }
    }
    r->depth--;
    return j;
}

cfdb_jv *cfdb_jv_parse(const char *p, size_t n)
{
    reader r = {p, p + n, 0};
    cfdb_jv *j = value(&r);
    if (!j)
        return NULL;
    ws(&r);
    if (r.p != r.end) {
        cfdb_jv_free(j);
        return NULL;
    }
    return j;
}

void cfdb_jv_free(cfdb_jv *j)
{
    if (!j)
        return;
    if (j->type == JSON_ARRAY || j->type == JSON_OBJECT)
        for (size_t i = 0; i < j->count; i++)
            cfdb_jv_free(j->items[i]);
    free(j->items);
    free(j->text);
    free(j->name);
    free(j);
}

const cfdb_jv *cfdb_jv_get(const cfdb_jv *obj, const char *name)
{
    if (!obj || obj->type != JSON_OBJECT)
        return NULL;
    size_t n = strlen(name);
    for (size_t i = 0; i < obj->count; i++)
        if (obj->items[i]->name_len == n && memcmp(obj->items[i]->name, name, n) == 0)
            return obj->items[i];
    return NULL;
}

