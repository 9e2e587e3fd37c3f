/* SPDX-License-Identifier: Apache-2.0 */
#include "bootstrap.h"

#include <math.h>
#include <stdlib.h>

#include "rng.h"
#include "stats.h"

int bench_bootstrap_geomean(const double *ratios, size_t n, unsigned resamples, uint64_t seed,
                            double confidence, bench_ci *out)
{
    if (n == 0 || resamples == 0 || !(confidence > 0 && confidence < 1))
        return -1;
    double *logs = malloc(n * sizeof *logs);
    double *stat = malloc((size_t)resamples * sizeof *stat);
    if (!logs || !stat) {
        free(logs);
        free(stat);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(ratios[i] > 0) || !isfinite(ratios[i])) {
            free(logs);
            free(stat);
            return -1;
        }
        logs[i] = log(ratios[i]);
    }
    out->estimate = bench_geomean(ratios, n);
    bench_rng r;
    bench_rng_seed(&r, seed);
    for (unsigned b = 0; b < resamples; b++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += logs[bench_rng_below(&r, n)];
        stat[b] = exp(s / (double)n);
    }
    bench_sort(stat, resamples);
    double alpha = (1.0 - confidence) / 2.0;
    out->lo = bench_percentile_sorted(stat, resamples, alpha);
    out->hi = bench_percentile_sorted(stat, resamples, 1.0 - alpha);
    out->conclusive = !(out->lo <= 1.0 && out->hi >= 1.0);
    free(logs);
    free(stat);
    return 0;
}
