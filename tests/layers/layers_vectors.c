/* SPDX-License-Identifier: Apache-2.0 */
/* See layers_vectors.h. Spec grammar (tests/vectors/layers/README.md):
 *   tuple := '(' [value {',' value}] ')'
 *   value := 'n' | 'T' | 'F' | 'b'HEX | 's'HEX | 'i'['-']HEX | 'f'HEX8 | 'd'HEX16 | 'u'HEX32
 *          | 'v'HEX24 | 'V'HEX4 | tuple */
#include "layers_vectors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static size_t hexlen(const char *p)
{
    size_t n = 0;
    while (hexval(p[n]) >= 0)
        n++;
    return n;
}

/* n hex digits from p into a (left-padded to whole bytes). */
static int unhex(cfdb_arena *a, const char *p, size_t n, cfdb_bytes *out)
{
    size_t bytes = (n + 1) / 2;
    uint8_t *b = cfdb_arena_alloc(a, bytes ? bytes : 1);
    if (!b)
        return CFDB_ERR_INTERNAL_ERROR;
    size_t odd = n % 2, k = 0;
    for (size_t i = 0; i < bytes; i++) {
        int hi = (i == 0 && odd) ? 0 : hexval(p[k++]);
        int lo = hexval(p[k++]);
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = cfdb_bytes_make(b, bytes);
    return 0;
}

static int parse_tuple(cfdb_arena *a, const char **pp, cfdb_tuple *t);

static int parse_value(cfdb_arena *a, const char **pp, cfdb_tuple *t)
{
    const char *p = *pp;
    char c = *p++;
    cfdb_bytes b;
    size_t n = hexlen(p);
    int err = 0;
    switch (c) {
    case 'n': err = cfdb_tuple_add_null(t); break;
    case 'T': err = cfdb_tuple_add_bool(t, true); break;
    case 'F': err = cfdb_tuple_add_bool(t, false); break;
    case 'b':
    case 's':
        if ((err = unhex(a, p, n, &b)))
            return err;
        err = c == 'b' ? cfdb_tuple_add_bytes(t, b.ptr, b.len) : cfdb_tuple_add_string(t, (const char *)b.ptr, b.len);
        p += n;
        break;
    case 'i': {
        bool neg = *p == '-';
        p += neg;
        n = hexlen(p);
        if ((err = unhex(a, p, n, &b)))
            return err;
        err = cfdb_tuple_add_bigint(t, neg, b.ptr, b.len);
        p += n;
        break;
    }
    case 'f':
    case 'd':
    case 'u':
    case 'v':
    case 'V': {
        size_t want = c == 'f' ? 8 : c == 'd' ? 16 : c == 'u' ? 32 : c == 'v' ? 24 : 4;
        if (n != want || (err = unhex(a, p, n, &b)))
            return err ? err : CFDB_ERR_CLIENT_INVALID_OPERATION;
        p += n;
        if (c == 'f') {
            uint32_t bits = (uint32_t)b.ptr[0] << 24 | (uint32_t)b.ptr[1] << 16 | (uint32_t)b.ptr[2] << 8 | b.ptr[3];
            float f;
            memcpy(&f, &bits, 4);
            err = cfdb_tuple_add_float(t, f);
        } else if (c == 'd') {
            uint64_t bits = 0;
            for (int k = 0; k < 8; k++)
                bits = bits << 8 | b.ptr[k];
            double d;
            memcpy(&d, &bits, 8);
            err = cfdb_tuple_add_double(t, d);
        } else if (c == 'u')
            err = cfdb_tuple_add_uuid(t, b.ptr);
        else if (c == 'v')
            err = cfdb_tuple_add_versionstamp(t, b.ptr);
        else
            err = cfdb_tuple_add_incomplete_versionstamp(t, (uint16_t)(b.ptr[0] << 8 | b.ptr[1]));
        break;
    }
    case '(': {
        cfdb_tuple *nt = cfdb_arena_alloc(a, sizeof *nt);
        if (!nt)
            return CFDB_ERR_INTERNAL_ERROR;
        cfdb_tuple_init(nt, a);
        p--;
        if ((err = parse_tuple(a, &p, nt)))
            return err;
        err = cfdb_tuple_add_nested(t, nt);
        break;
    }
    default:
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    *pp = p;
    return err;
}

static int parse_tuple(cfdb_arena *a, const char **pp, cfdb_tuple *t)
{
    const char *p = *pp;
    if (*p++ != '(')
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (*p == ')') {
        *pp = p + 1;
        return 0;
    }
    for (;;) {
        int err = parse_value(a, &p, t);
        if (err)
            return err;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p++ != ')')
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        *pp = p;
        return 0;
    }
}

int lv_parse_spec(cfdb_arena *a, const char *spec, cfdb_tuple *out)
{
    cfdb_tuple_init(out, a);
    const char *p = spec;
    int err = parse_tuple(a, &p, out);
    if (!err && *p)
        err = CFDB_ERR_CLIENT_INVALID_OPERATION;
    return err;
}

int lv_read(cfdb_arena *a, const char *path, bool is_kv, lv_line **lines)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int n = 0, ncap = 0;
    lv_line *out = NULL;
    while ((len = getline(&buf, &cap, f)) > 0) {
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            buf[--len] = 0;
        char *sp = strchr(buf, ' ');
        if (!sp) {
            fprintf(stderr, "%s: line %d has no space\n", path, n + 1);
            n = -1;
            break;
        }
        *sp = 0;
        if (n == ncap) {
            int c2 = ncap ? ncap * 2 : 64;
            lv_line *g = cfdb_arena_alloc(a, (size_t)c2 * sizeof *g);
            if (!g) {
                n = -1;
                break;
            }
            if (n)
                memcpy(g, out, (size_t)n * sizeof *g);
            out = g;
            ncap = c2;
        }
        lv_line *l = &out[n];
        memset(l, 0, sizeof *l);
        const char *second = sp + 1;
        if (is_kv) {
            if (unhex(a, buf, strlen(buf), &l->bytes) || unhex(a, second, strlen(second), &l->value)) {
                n = -1;
                break;
            }
        } else {
            l->versionstamp = buf[0] == '@';
            l->spec = cfdb_arena_dup(a, buf + l->versionstamp, strlen(buf + l->versionstamp) + 1);
            if (!l->spec || unhex(a, second, strlen(second), &l->bytes)) {
                n = -1;
                break;
            }
        }
        n++;
    }
    free(buf);
    fclose(f);
    if (n >= 0)
        *lines = out;
    return n;
}

const char *lv_hex(cfdb_bytes b)
{
    static char buf[2 * 600 + 4];
    size_t n = b.len > 600 ? 600 : b.len;
    for (size_t i = 0; i < n; i++)
        snprintf(buf + 2 * i, 3, "%02x", b.ptr[i]);
    buf[2 * n] = 0;
    if (n < b.len)
        strcat(buf, "...");
    return buf;
}
