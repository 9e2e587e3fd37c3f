/* SPDX-License-Identifier: Apache-2.0 */
/* The dev server's hot paths as a program for instruction counts (scripts/instr-budget.sh
 * runs it under cachegrind, twice with different call counts, and takes the difference).
 *
 *   cfdb-server-paths PATH N
 *
 * resolve_batchset50: N transactions through the conflict resolver in batches of 16, each
 * the shape cfdb-bench's batchset50 commits have: 50 point writes on keys drawn uniformly
 * from 2,000 (the bench's layout, sorted and deduplicated as clients send them) and one
 * self-conflict range (a random 16-byte key under \xff/SC/, read and written). Versions
 * advance 4,000 a batch, so history reaches its steady size within the 5 s window. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conflict_resolver.h"

enum { KEYS = 2000, BATCH = 16, WRITES = 50, KEY_LEN = 26, SC_LEN = 21 };

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int cmp_idx(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int resolve_batchset50(long n)
{
    /* every key and its key-after, made once: a transaction only points at them */
    static uint8_t keys[KEYS][KEY_LEN + 1];
    for (int k = 0; k < KEYS; k++) {
        char buf[KEY_LEN + 1];
        snprintf(buf, sizeof buf, "cfdb-bench/v100/%010d", k);
        memcpy(keys[k], buf, KEY_LEN);
        keys[k][KEY_LEN] = 0;
    }
    static uint8_t sc[BATCH][SC_LEN + 1];
    static cfdb_conflict_range ranges[BATCH][WRITES + 1];
    cfdb_resolver_txn txns[BATCH];
    cfdb_resolver_result res[BATCH];
    cfdb_resolver *r = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    if (!r)
        return 1;
    cfdb_arena a;
    cfdb_arena_init(&a);
    int64_t v = 1000000;
    long committed = 0;
    for (long done = 0; done < n; done += BATCH) {
        cfdb_arena_reset(&a);
        v += 4000;
        size_t count = (size_t)(n - done < BATCH ? n - done : BATCH);
        for (size_t t = 0; t < count; t++) {
            uint32_t idx[WRITES];
            for (int i = 0; i < WRITES; i++)
                idx[i] = (uint32_t)(rnd() % KEYS);
            qsort(idx, WRITES, sizeof idx[0], cmp_idx);
            size_t w = 0;
            for (int i = 0; i < WRITES; i++)
                if (i == 0 || idx[i] != idx[i - 1])
                    ranges[t][w++] = (cfdb_conflict_range){ cfdb_bytes_make(keys[idx[i]], KEY_LEN),
                                                            cfdb_bytes_make(keys[idx[i]], KEY_LEN + 1) };
            memcpy(sc[t], "\xff/SC/", 5);
            uint64_t x = rnd(), y = rnd();
            memcpy(sc[t] + 5, &x, 8);
            memcpy(sc[t] + 13, &y, 8);
            sc[t][SC_LEN] = 0;
            ranges[t][w] = (cfdb_conflict_range){ cfdb_bytes_make(sc[t], SC_LEN), cfdb_bytes_make(sc[t], SC_LEN + 1) };
            txns[t] = (cfdb_resolver_txn){ v - 1000, &ranges[t][w], 1, ranges[t], w + 1, false };
        }
        if (cfdb_resolver_resolve(r, v, txns, count, &a, res))
            return 1;
        for (size_t t = 0; t < count; t++)
            committed += res[t].status == CFDB_RESOLVE_COMMITTED;
    }
    cfdb_arena_free(&a);
    cfdb_resolver_destroy(r);
    /* blind writers with their own self-conflict keys all commit */
    return committed == n ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cfdb-server-paths resolve_batchset50 N\n");
        return 2;
    }
    long n = atol(argv[2]);
    if (!strcmp(argv[1], "resolve_batchset50"))
        return resolve_batchset50(n);
    fprintf(stderr, "cfdb-server-paths: unknown path %s\n", argv[1]);
    return 2;
}
