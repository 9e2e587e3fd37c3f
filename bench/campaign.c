/* SPDX-License-Identifier: Apache-2.0 */
#include "campaign.h"

#include "rng.h"

uint64_t bench_block_seed(const bench_campaign *c, int wl, int level, int block)
{
    uint64_t st = c->seed ^ ((uint64_t)wl << 48) ^ ((uint64_t)level << 32) ^ (uint64_t)block;
    return bench_splitmix64(&st);
}
