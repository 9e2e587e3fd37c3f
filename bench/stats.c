/* SPDX-License-Identifier: Apache-2.0 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double bench_mean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    /* Kahan-compensated sum: 32,000 latencies must not lose digits. */
    double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        double y = x[i] - c;
        double t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
}

double bench_percentile_sorted(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    if (p <= 0)
        return sorted[0];
    if (p >= 1)
        return sorted[n - 1];
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)floor(h);
    double frac = h - (double)lo;
    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double bench_median(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c)
        return NAN;
    memcpy(c, x, n * sizeof *c);
    bench_sort(c, n);
    double m = bench_percentile_sorted(c, n, 0.5);
    free(c);
    return m;
}

double bench_geomean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !isfinite(x[i]))
            return NAN;
        s += log(x[i]);
    }
    return exp(s / (double)n);
}
