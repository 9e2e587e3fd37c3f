/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: percentile bootstrap of the geometric mean of block ratios,
 * resampling whole blocks with replacement. */
#ifndef CFDB_BENCH_BOOTSTRAP_H
#define CFDB_BENCH_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_BOOTSTRAP_RESAMPLES 20000
#define BENCH_BOOTSTRAP_SEED 492817u
#define BENCH_BOOTSTRAP_CONFIDENCE 0.95

typedef struct bench_ci {
    double estimate; /* geometric mean of the block ratios */
    double lo, hi;   /* percentile interval */
    int conclusive;  /* 1 when the interval excludes 1 */
} bench_ci;

/* ratios[n]: one ratio per block, all > 0. Returns 0, or -1 when the input
 * is unusable (n == 0, a ratio <= 0 or not finite). */
int bench_bootstrap_geomean(const double *ratios, size_t n, unsigned resamples, uint64_t seed,
                            double confidence, bench_ci *out);

#endif
