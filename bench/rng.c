/* SPDX-License-Identifier: Apache-2.0 */
#include "rng.h"

uint64_t bench_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void bench_rng_seed(bench_rng *r, uint64_t seed)
{
    uint64_t st = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = bench_splitmix64(&st);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t bench_rng_below(bench_rng *r, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)bench_rng_next(r) * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = -n % n;
        while (l < t) {
            m = (unsigned __int128)bench_rng_next(r) * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}
