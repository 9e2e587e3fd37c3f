/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the cfdb-bench end-to-end tests. */
#ifndef CFDB_BENCH_TEST_UTIL_H
#define CFDB_BENCH_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "json_reader.h"

/* Run a shell command; returns its exit status (or -1). */
__attribute__((format(printf, 1, 2), unused)) static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "+ %s\n", cmd);
    int st = system(cmd);
    return st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Count lines of a file (-1 if missing). */
__attribute__((unused)) static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

__attribute__((unused)) static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b) {
        b[fread(b, 1, (size_t)n, f)] = 0;
    }
    fclose(f);
    return b;
}

#endif
