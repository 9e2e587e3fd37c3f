/* SPDX-License-Identifier: Apache-2.0 */
/* The failing, counting malloc family: see alloc_fail.h. */
#include <stddef.h>
#include <stdlib.h>

#include "alloc_fail.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static long g_countdown; /* 0: off; 1: the next allocation fails */
static long g_seen;      /* allocations while armed */
static long g_live;      /* blocks handed out and not freed */

void af_arm(long n)
{
    g_seen = 0;
    g_countdown = n;
}

bool af_disarm(void)
{
    bool hit = g_countdown == 0 && g_seen > 0;
    g_countdown = 0;
    return hit;
}

long af_live(void)
{
    return g_live;
}

static bool fail_now(void)
{
    if (!g_countdown)
        return false;
    g_seen++;
    return --g_countdown == 0;
}

void *__wrap_malloc(size_t n)
{
    void *p = fail_now() ? NULL : __real_malloc(n);
    g_live += p != NULL;
    return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
    void *p = fail_now() ? NULL : __real_calloc(n, m);
    g_live += p != NULL;
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now())
        return NULL;
    void *q = __real_realloc(p, n);
    g_live += !p && q;
    return q;
}

void __wrap_free(void *p)
{
    g_live -= p != NULL;
    __real_free(p);
}
