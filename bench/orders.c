/* SPDX-License-Identifier: Apache-2.0 */
#include "orders.h"

size_t bench_factorial(int k)
{
    size_t f = 1;
    for (int i = 2; i <= k; i++)
        f *= (size_t)i;
    return f;
}

int bench_blocks_for(int arms, int requested)
{
    if (arms < 1 || arms > BENCH_MAX_ARMS)
        return -1;
    int f = (int)bench_factorial(arms);
    if (requested < 1)
        requested = 1;
    return ((requested + f - 1) / f) * f;
}

/* Permutation number idx (0-based, lexicographic) of 0..k-1 via the
 * factorial number system. */
static void nth_permutation(int k, size_t idx, int *out)
{
    int pool[BENCH_MAX_ARMS];
    for (int i = 0; i < k; i++)
        pool[i] = i;
    int left = k;
    for (int pos = 0; pos < k; pos++) {
        size_t f = bench_factorial(left - 1);
        size_t sel = idx / f;
        idx %= f;
        out[pos] = pool[sel];
        for (int j = (int)sel; j < left - 1; j++)
            pool[j] = pool[j + 1];
        left--;
    }
}

int bench_orders(int arms, int blocks, int *orders)
{
    if (arms < 1 || arms > BENCH_MAX_ARMS || blocks < 1)
        return -1;
    size_t f = bench_factorial(arms);
    if ((size_t)blocks % f != 0)
        return -1;
    for (int b = 0; b < blocks; b++)
        nth_permutation(arms, (size_t)b % f, orders + (size_t)b * (size_t)arms);
    return 0;
}
