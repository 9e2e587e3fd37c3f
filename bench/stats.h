/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: descriptive statistics on raw samples. */
#ifndef CFDB_BENCH_STATS_H
#define CFDB_BENCH_STATS_H

#include <stddef.h>

double bench_mean(const double *x, size_t n);
/* Sort x ascending in place. */
void bench_sort(double *x, size_t n);
/* Percentile p in [0,1] of an ascending-sorted sample, linear interpolation
 * between closest ranks (Hyndman & Fan type 7, the R/NumPy default). */
double bench_percentile_sorted(const double *sorted, size_t n, double p);
/* Median of an unsorted sample (copies; does not modify x). */
double bench_median(const double *x, size_t n);
/* Geometric mean of strictly positive values; NAN if any value <= 0 or n == 0. */
double bench_geomean(const double *x, size_t n);

#endif
