/* SPDX-License-Identifier: Apache-2.0 */
/* alloc_count.h over bench/malloc_count.c's totals. */
#include <stdlib.h>

#include "alloc_count.h"

#ifdef CFDB_ALLOC_NOT_COUNTED
bool alloc_counted(void)
{
    return false;
}

uint64_t alloc_count(void)
{
    return 0;
}
#else
/* bench/malloc_count.c */
void cfdb_bench_malloc_stats(uint64_t *allocations, uint64_t *bytes);

bool alloc_counted(void)
{
    return true;
}

uint64_t alloc_count(void)
{
    uint64_t n = 0, bytes = 0;
    cfdb_bench_malloc_stats(&n, &bytes);
    return n;
}
#endif

bool alloc_count_sees_malloc(void)
{
    void *(*volatile alloc)(size_t) = malloc; /* not optimized away */
    uint64_t before = alloc_count();
    void *p = alloc(100);
    uint64_t after = alloc_count();
    free(p);
    return after - before >= 1;
}
