/* SPDX-License-Identifier: Apache-2.0 */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p, *end;
    char *err;
    size_t errlen;
    int depth;
} parser;

static json_value *parse_value(parser *ps);

static void fail(parser *ps, const char *msg)
{
    if (ps->err && !ps->err[0])
        snprintf(ps->err, ps->errlen, "json: %s", msg);
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static json_value *new_value(json_type t)
{
    json_value *v = calloc(1, sizeof *v);
    if (v)
        v->type = t;
    return v;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void put_utf8(char **o, unsigned cp)
{
    char *q = *o;
    if (cp < 0x80) {
        *q++ = (char)cp;
    } else if (cp < 0x800) {
        *q++ = (char)(0xC0 | (cp >> 6));
        *q++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *q++ = (char)(0xE0 | (cp >> 12));
        *q++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *q++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *q++ = (char)(0xF0 | (cp >> 18));
        *q++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *q++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *q++ = (char)(0x80 | (cp & 0x3F));
    }
    *o = q;
}

static char *parse_string(parser *ps)
{
    if (ps->p >= ps->end || *ps->p != '"') {
        fail(ps, "expected string");
        return NULL;
    }
    ps->p++;
    const char *start = ps->p;
    while (ps->p < ps->end && *ps->p != '"') {
        if (*ps->p == '\\')
            ps->p++;
        ps->p++;
    }
    if (ps->p >= ps->end) {
        fail(ps, "unterminated string");
        return NULL;
    }
    size_t raw = (size_t)(ps->p - start);
    char *out = malloc(raw * 2 + 1); /* \uXXXX (6 bytes) expands to at most 4 */
    if (!out)
        return NULL;
    char *o = out;
    for (const char *s = start; s < ps->p; s++) {
        if (*s != '\\') {
            *o++ = *s;
            continue;
        }
        s++;
        switch (*s) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {
            unsigned cp = 0;
            for (int i = 1; i <= 4; i++) {
                int h = (s + i < ps->p) ? hexval(s[i]) : -1;
                if (h < 0) {
                    free(out);
                    fail(ps, "bad \\u escape");
                    return NULL;
                }
                cp = cp * 16 + (unsigned)h;
            }
            s += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && s + 6 < ps->p && s[1] == '\\' && s[2] == 'u') {
                unsigned lo = 0;
                int ok = 1;
                for (int i = 3; i <= 6; i++) {
                    int h = hexval(s[i]);
                    if (h < 0)
                        ok = 0;
                    lo = lo * 16 + (unsigned)(h < 0 ? 0 : h);
                }
                if (ok && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    s += 6;
                }
            }
            put_utf8(&o, cp);
            break;
        }
        default: *o++ = *s; break;
        }
    }
    *o = 0;
    ps->p++;
    return out;
}

static int push(json_value *v, char *key, json_value *item)
{
    json_value **ni = realloc(v->items, (v->count + 1) * sizeof *ni);
    if (!ni)
        return -1;
    v->items = ni;
    if (v->type == JSON_OBJECT) {
        char **nk = realloc(v->keys, (v->count + 1) * sizeof *nk);
        if (!nk)
            return -1;
        v->keys = nk;
        v->keys[v->count] = key;
    }
    v->items[v->count++] = item;
    return 0;
}

static json_value *parse_container(parser *ps, int object)
{
    json_value *v = new_value(object ? JSON_OBJECT : JSON_ARRAY);
    if (!v)
        return NULL;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
        ps->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (object) {
            key = parse_string(ps);
            if (!key)
                goto bad;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                fail(ps, "expected ':'");
                goto bad;
            }
            ps->p++;
        }
        json_value *item = parse_value(ps);
        if (!item || push(v, key, item) < 0) {
            free(key);
            json_free(item);
            goto bad;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
            ps->p++;
            return v;
        }
        fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
        goto bad;
    }
bad:
    json_free(v);
    return NULL;
}

static json_value *parse_value(parser *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end");
        return NULL;
    }
    if (++ps->depth > 200) {
        fail(ps, "nesting too deep");
        return NULL;
    }
    json_value *v = NULL;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        v = parse_container(ps, c == '{');
    } else if (c == '"') {
        char *s = parse_string(ps);
        if (s && (v = new_value(JSON_STRING)))
            v->string = s;
        else
            free(s);
    } else if (ps->end - ps->p >= 4 && !memcmp(ps->p, "null", 4)) {
        ps->p += 4;
        v = new_value(JSON_NULL);
    } else if (ps->end - ps->p >= 4 && !memcmp(ps->p, "true", 4)) {
        ps->p += 4;
        if ((v = new_value(JSON_BOOL)))
            v->number = 1;
    } else if (ps->end - ps->p >= 5 && !memcmp(ps->p, "false", 5)) {
        ps->p += 5;
        v = new_value(JSON_BOOL);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t n = 0;
        while (ps->p < ps->end && n < sizeof buf - 1 &&
               strchr("+-0123456789.eE", *ps->p))
            buf[n++] = *ps->p++;
        buf[n] = 0;
        char *endp;
        double d = strtod(buf, &endp);
        if (*endp) {
            fail(ps, "bad number");
        } else if ((v = new_value(JSON_NUMBER))) {
            v->number = d;
        }
    } else {
        fail(ps, "unexpected character");
    }
    ps->depth--;
    return v;
}

json_value *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    parser ps = {text, text + len, err, errlen, 0};
    if (err && errlen)
        err[0] = 0;
    json_value *v = parse_value(&ps);
    if (!v)
        return NULL;
    skip_ws(&ps);
    if (ps.p != ps.end) {
        fail(&ps, "trailing characters");
        json_free(v);
        return NULL;
    }
    return v;
}

json_value *json_parse_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s", path);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return NULL;
    }
    json_value *v = json_parse(buf, len, err, errlen);
    free(buf);
    return v;
}

void json_free(json_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->count; i++) {
        if (v->keys)
            free(v->keys[i]);
        json_free(v->items[i]);
    }
    free(v->keys);
    free(v->items);
    free(v->string);
    free(v);
}

const json_value *json_member(const json_value *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->count; i++)
        if (!strcmp(obj->keys[i], key))
            return obj->items[i];
    return NULL;
}

const json_value *json_path(const json_value *root, const char *path)
{
    const json_value *v = root;
    char seg[256];
    while (v && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof seg)
            return NULL;
        memcpy(seg, path, n);
        seg[n] = 0;
        v = json_member(v, seg);
        path += n;
        if (*path == '.')
            path++;
    }
    return v;
}

int json_path_number(const json_value *root, const char *path, double *out)
{
    const json_value *v = json_path(root, path);
    if (!v || v->type != JSON_NUMBER)
        return -1;
    *out = v->number;
    return 0;
}

const char *json_path_string(const json_value *root, const char *path)
{
    const json_value *v = json_path(root, path);
    return v && v->type == JSON_STRING ? v->string : NULL;
}
