/* SPDX-License-Identifier: Apache-2.0 */
/* alloc_count.h over bench/malloc_count.c's totals. */
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
