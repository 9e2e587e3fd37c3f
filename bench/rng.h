/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: a small, fully specified PRNG (splitmix64 seeding xoshiro256**)
 * so that bootstrap resamples and key sequences are reproducible from a seed. */
#ifndef CFDB_BENCH_RNG_H
#define CFDB_BENCH_RNG_H

#include <stdint.h>

typedef struct bench_rng {
    uint64_t s[4];
} bench_rng;

uint64_t bench_splitmix64(uint64_t *state);
void bench_rng_seed(bench_rng *r, uint64_t seed);
uint64_t bench_rng_next(bench_rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias (Lemire). */
uint64_t bench_rng_below(bench_rng *r, uint64_t n);

#endif
