/* SPDX-License-Identifier: Apache-2.0 */
#include "kvfile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void kv_put_str(FILE *f, const char *k, const char *v)
{
    fprintf(f, "%s=", k);
    for (const char *p = v ? v : ""; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    fputc('\n', f);
}

void kv_put_int(FILE *f, const char *k, int64_t v)
{
    fprintf(f, "%s=%" PRId64 "\n", k, v);
}

void kv_put_num(FILE *f, const char *k, double v)
{
    fprintf(f, "%s=%.17g\n", k, v);
}

int kv_load(kvfile *kv, const char *path)
{
    memset(kv, 0, sizeof *kv);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        char *eq = strchr(line, '=');
        if (!eq || eq == line)
            continue;
        *eq = 0;
        char **nk = realloc(kv->keys, (size_t)(kv->n + 1) * sizeof *nk);
        if (!nk) {
            rc = -1;
            break;
        }
        kv->keys = nk;
        char **nv = realloc(kv->vals, (size_t)(kv->n + 1) * sizeof *nv);
        if (!nv) {
            rc = -1;
            break;
        }
        kv->vals = nv;
        kv->keys[kv->n] = strdup(line);
        kv->vals[kv->n] = strdup(eq + 1);
        kv->n++;
    }
    free(line);
    fclose(f);
    return rc;
}

void kv_free(kvfile *kv)
{
    for (int i = 0; i < kv->n; i++) {
        free(kv->keys[i]);
        free(kv->vals[i]);
    }
    free(kv->keys);
    free(kv->vals);
    memset(kv, 0, sizeof *kv);
}

const char *kv_get(const kvfile *kv, const char *k)
{
    for (int i = kv->n - 1; i >= 0; i--)
        if (kv->keys[i] && !strcmp(kv->keys[i], k))
            return kv->vals[i];
    return NULL;
}

double kv_num(const kvfile *kv, const char *k, double def)
{
    const char *v = kv_get(kv, k);
    if (!v || !*v)
        return def;
    char *end;
    double d = strtod(v, &end);
    return *end ? def : d;
}
