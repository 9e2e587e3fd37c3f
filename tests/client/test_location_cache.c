/* Location cache: lookups forward / key-before, reply insertion, overlapping
 * inserts, invalidation of a key and of a range, the LOCATION_CACHE_SIZE bound and
 * its eviction rule, the drop hook; checked against a byte-per-key model for short
 * keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "location_cache.h"

#define B(s) cfdb_bytes_make((s), sizeof(s) - 1)

static cfdb_location *mkloc(uint64_t id)
{
    cfdb_storage_server_interface ssi[2];
    memset(ssi, 0, sizeof ssi);
    static uint8_t v6[16] = { 0x20, 0x01, [15] = 7 };
    for (int i = 0; i < 2; i++) {
        ssi[i].uniqueID.first = id;
        ssi[i].uniqueID.second = (uint64_t)i;
        ssi[i].getValue.endpoint.token.first = id * 100 + (uint64_t)i;
        ssi[i].getValue.endpoint.addresses.address.ip.tag = (uint8_t)(i ? 2 : 1);
        ssi[i].getValue.endpoint.addresses.address.ip.v4 = 0x7f000001;
        if (i) {
            ssi[i].getValue.endpoint.addresses.address.ip.v6.items = v6;
            ssi[i].getValue.endpoint.addresses.address.ip.v6.count = 16;
        }
        ssi[i].getValue.endpoint.addresses.address.port = (uint16_t)(4500 + i);
    }
    return cfdb_location_new(ssi, 2);
}

static void test_basic(void **state)
{
    (void)state;
    cfdb_location_cache c;
    assert_int_equal(cfdb_location_cache_init(&c, 0), 0);
    cfdb_location *l1 = mkloc(1), *l2 = mkloc(2);
    assert_int_equal(l1->count, 2);
    assert_int_equal(l1->servers[1].addr.ip.tag, 2);
    assert_ptr_equal(l1->servers[1].addr.ip.v6.items, l1->servers[1].v6);
    assert_int_equal(l1->servers[1].v6[15], 7);
    assert_int_equal(l1->servers[0].get_value_token.first, 100);

    assert_null(cfdb_location_cache_get(&c, B("a"), false, NULL, NULL));
    cfdb_location_cache_insert(&c, B("b"), B("d"), l1);
    cfdb_location_cache_insert(&c, B("d"), B("f"), l2);
    cfdb_bytes b, e;
    assert_ptr_equal(cfdb_location_cache_get(&c, B("b"), false, &b, &e), l1);
    assert_true(cfdb_bytes_eq(b, B("b")) && cfdb_bytes_eq(e, B("d")));
    assert_ptr_equal(cfdb_location_cache_get(&c, B("c"), false, NULL, NULL), l1);
    assert_ptr_equal(cfdb_location_cache_get(&c, B("d"), false, NULL, NULL), l2);
    assert_null(cfdb_location_cache_get(&c, B("f"), false, NULL, NULL));
    assert_null(cfdb_location_cache_get(&c, B("a"), false, NULL, NULL));
    /* key before */
    assert_ptr_equal(cfdb_location_cache_get(&c, B("d"), true, NULL, NULL), l1);
    assert_ptr_equal(cfdb_location_cache_get(&c, B("f"), true, NULL, NULL), l2);
    assert_null(cfdb_location_cache_get(&c, B("b"), true, NULL, NULL));
    assert_ptr_equal(cfdb_location_cache_get(&c, B("b\0"), true, NULL, NULL), l1);

    /* overlapping insert splits */
    cfdb_location *l3 = mkloc(3);
    cfdb_location_cache_insert(&c, B("c"), B("e"), l3);
    assert_ptr_equal(cfdb_location_cache_get(&c, B("b"), false, &b, &e), l1);
    assert_true(cfdb_bytes_eq(e, B("c")));
    assert_ptr_equal(cfdb_location_cache_get(&c, B("d"), false, NULL, NULL), l3);
    assert_ptr_equal(cfdb_location_cache_get(&c, B("e"), false, &b, &e), l2);
    assert_true(cfdb_bytes_eq(b, B("e")) && cfdb_bytes_eq(e, B("f")));
    assert_int_equal(cfdb_location_cache_size(&c), 3);

    /* range lookups */
    cfdb_loc_hit hits[8];
    size_t nh;
    assert_true(cfdb_location_cache_get_ranges(&c, B("bb"), B("ee"), 10, false, hits, 8, &nh));
    assert_int_equal(nh, 3);
    assert_true(cfdb_bytes_eq(hits[0].begin, B("bb")) && cfdb_bytes_eq(hits[0].end, B("c")) && hits[0].loc == l1);
    assert_true(cfdb_bytes_eq(hits[1].begin, B("c")) && cfdb_bytes_eq(hits[1].end, B("e")) && hits[1].loc == l3);
    assert_true(cfdb_bytes_eq(hits[2].begin, B("e")) && cfdb_bytes_eq(hits[2].end, B("ee")) && hits[2].loc == l2);
    assert_true(cfdb_location_cache_get_ranges(&c, B("bb"), B("ee"), 2, true, hits, 8, &nh));
    assert_int_equal(nh, 2);
    assert_ptr_equal(hits[0].loc, l2);
    assert_ptr_equal(hits[1].loc, l3);
    assert_true(cfdb_location_cache_get_ranges(&c, B("b"), B("e"), 1, false, hits, 8, &nh));
    assert_int_equal(nh, 1);
    assert_false(cfdb_location_cache_get_ranges(&c, B("a"), B("c"), 10, false, hits, 8, &nh)); /* gap at a */
    assert_int_equal(nh, 0);
    assert_false(cfdb_location_cache_get_ranges(&c, B("e"), B("g"), 10, false, hits, 8, &nh)); /* gap at f */
    assert_true(cfdb_location_cache_get_ranges(&c, B("e"), B("g"), 1, false, hits, 8, &nh)); /* limit first */
    assert_false(cfdb_location_cache_get_ranges(&c, B("e"), B("g"), 10, true, hits, 8, &nh));

    /* invalidation */
    cfdb_location_cache_invalidate_key(&c, B("cc"), false);
    assert_null(cfdb_location_cache_get(&c, B("c"), false, NULL, NULL));
    assert_ptr_equal(cfdb_location_cache_get(&c, B("b"), false, NULL, NULL), l1);
    cfdb_location_cache_invalidate_key(&c, B("e"), true); /* range before "e" is gone already */
    assert_ptr_equal(cfdb_location_cache_get(&c, B("e"), false, NULL, NULL), l2);
    cfdb_location_cache_invalidate_key(&c, B("f"), true);
    assert_null(cfdb_location_cache_get(&c, B("e"), false, NULL, NULL));
    cfdb_location_cache_insert(&c, B(""), B("\xff\xff"), l3);
    assert_int_equal(cfdb_location_cache_size(&c), 1);
    cfdb_location_cache_invalidate_range(&c, B("x"), B("y"));
    assert_int_equal(cfdb_location_cache_size(&c), 0);

    cfdb_location_unref(l1);
    cfdb_location_unref(l2);
    cfdb_location_unref(l3);
    cfdb_location_cache_destroy(&c);
}

static void test_reply_and_eviction(void **state)
{
    (void)state;
    cfdb_location_cache c;
    cfdb_location_cache_init(&c, 10);
    cfdb_storage_server_interface ssi[1];
    memset(ssi, 0, sizeof ssi);
    cfdb_shard_location shards[3];
    memset(shards, 0, sizeof shards);
    const char *bounds[] = { "", "g", "p", "\xff" };
    for (int i = 0; i < 3; i++) {
        shards[i].first.begin = cfdb_bytes_str(bounds[i]);
        shards[i].first.end = cfdb_bytes_str(bounds[i + 1]);
        shards[i].second.items = ssi;
        shards[i].second.count = 1;
    }
    cfdb_get_key_server_locations_reply reply;
    memset(&reply, 0, sizeof reply);
    reply.results.items = shards;
    reply.results.count = 3;
    ssi[0].uniqueID.first = 42;
    assert_int_equal(cfdb_location_cache_insert_reply(&c, &reply, NULL, NULL), 0);
    assert_int_equal(cfdb_location_cache_size(&c), 3);
    cfdb_location *l = cfdb_location_cache_get(&c, B("h"), false, NULL, NULL);
    assert_non_null(l);
    assert_int_equal(l->servers[0].id.first, 42);
    cfdb_location_cache_invalidate_range(&c, B("f"), B("h"));
    assert_int_equal(cfdb_location_cache_size(&c), 1);
    assert_non_null(cfdb_location_cache_get(&c, B("q"), false, NULL, NULL));

    /* the bound holds */
    cfdb_location *loc = mkloc(9);
    char k[8];
    for (int i = 0; i < 200; i++) {
        k[0] = (char)('a' + i % 26);
        k[1] = (char)('a' + i / 26);
        k[2] = 0;
        char e2[3] = { k[0], k[1], 1 };
        assert_int_equal(cfdb_location_cache_insert(&c, cfdb_bytes_make(k, 2), cfdb_bytes_make(e2, 3), loc), 0);
        assert_true(cfdb_location_cache_size(&c) <= 11); /* bound checked before an insert, as FDB */
        assert_ptr_equal(cfdb_location_cache_get(&c, cfdb_bytes_make(k, 2), false, NULL, NULL), loc);
    }
    assert_true(loc->refs >= 2);
    cfdb_location_cache_destroy(&c);
    assert_int_equal(loc->refs, 1);
    cfdb_location_unref(loc);
}

/* The eviction index lists every cached range's node once, at the slot the range names. */
static void check_slots(const cfdb_location_cache *c)
{
    size_t n = 0;
    for (cfdb_omap_node *x = cfdb_omap_first(&c->map); x; x = cfdb_omap_next(x), n++) {
        const cfdb_loc_range *r = x->val.ptr;
        assert_true(r->slot < c->map.count);
        assert_ptr_equal(c->nodes[r->slot], x);
    }
    assert_int_equal(n, c->map.count);
}

/* Random operations over 1-byte keys against a model that tracks, per key, the
 * location and the identity of the cached range holding it. */
static void test_randomized(void **state)
{
    (void)state;
    uint64_t x = 12345;
#define RND(n) (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (unsigned)(x % (n)))
    cfdb_location *locs[4];
    for (int i = 0; i < 4; i++)
        locs[i] = mkloc((uint64_t)i);
    for (int round = 0; round < 500; round++) {
        cfdb_location_cache c;
        cfdb_location_cache_init(&c, 0);
        cfdb_location *model[16] = { 0 };
        int id[16] = { 0 };
        int next_id = 1;
        for (int op = 0; op < 40; op++) {
            unsigned a = RND(16), b = RND(17);
            uint8_t ka = (uint8_t)('a' + a), kb = (uint8_t)('a' + b);
            unsigned what = RND(4);
            if (what < 2 && a < b) {
                cfdb_location *l = locs[RND(4)];
                cfdb_location_cache_insert(&c, cfdb_bytes_make(&ka, 1), cfdb_bytes_make(&kb, 1), l);
                /* the part of a range sticking out on the right becomes its own range */
                if (b < 16 && id[b] && b > 0 && id[b] == id[b - 1]) {
                    int old = id[b], fresh = next_id++;
                    for (unsigned i = b; i < 16 && id[i] == old; i++)
                        id[i] = fresh;
                }
                int nid = next_id++;
                for (unsigned i = a; i < b; i++) {
                    model[i] = l;
                    id[i] = nid;
                }
            } else if (what == 2) {
                bool rev = RND(2);
                cfdb_location_cache_invalidate_key(&c, cfdb_bytes_make(&ka, 1), rev);
                int k = rev ? (int)a - 1 : (int)a;
                if (k >= 0 && id[k]) {
                    int gone = id[k];
                    for (unsigned i = 0; i < 16; i++)
                        if (id[i] == gone) {
                            id[i] = 0;
                            model[i] = NULL;
                        }
                }
            } else if (a < b) {
                cfdb_location_cache_invalidate_range(&c, cfdb_bytes_make(&ka, 1), cfdb_bytes_make(&kb, 1));
                int gone[16];
                int ng = 0;
                for (unsigned i = a; i < b; i++)
                    if (id[i])
                        gone[ng++] = id[i];
                for (unsigned i = 0; i < 16; i++)
                    for (int g = 0; g < ng; g++)
                        if (id[i] == gone[g]) {
                            id[i] = 0;
                            model[i] = NULL;
                        }
            }
            check_slots(&c);
            for (unsigned i = 0; i < 16; i++) {
                uint8_t ki = (uint8_t)('a' + i);
                assert_ptr_equal(cfdb_location_cache_get(&c, cfdb_bytes_make(&ki, 1), false, NULL, NULL), model[i]);
                uint8_t kn[2] = { ki, 0 };
                /* the key before "x\0" is "x" */
                assert_ptr_equal(cfdb_location_cache_get(&c, cfdb_bytes_make(kn, 2), true, NULL, NULL), model[i]);
            }
        }
        cfdb_location_cache_destroy(&c);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(locs[i]->refs, 1);
        cfdb_location_unref(locs[i]);
    }
}

/* ---- the bound (LOCATION_CACHE_SIZE) and eviction ---- */

static int drops;
static void count_drop(cfdb_location *loc)
{
    (void)loc;
    drops++;
}

static cfdb_location *dropping_loc(uint64_t id)
{
    cfdb_location *l = mkloc(id);
    l->drop = count_drop;
    return l;
}

/* A key "k%03d" and its end "k%03d\x01". */
static cfdb_bytes key_n(char *buf, int i, bool end)
{
    int n = snprintf(buf, 8, "k%03d", i);
    if (end)
        buf[n++] = 1;
    return cfdb_bytes_make(buf, (size_t)n);
}

/* With a bound of 3 the cache never holds more than 3 ranges, always the one just inserted,
 * and the ranges it let go were evicted (counted) with their locations released. */
static void test_bound_small_holds_and_evicts(void **state)
{
    (void)state;
    cfdb_location_cache c;
    assert_int_equal(cfdb_location_cache_init(&c, 3), 0);
    drops = 0;
    char b[8], e[8];
    for (int i = 0; i < 100; i++) {
        cfdb_location *l = dropping_loc((uint64_t)i);
        assert_int_equal(cfdb_location_cache_insert(&c, key_n(b, i, false), key_n(e, i, true), l), 0);
        cfdb_location_unref(l);
        assert_true(cfdb_location_cache_size(&c) <= 3);
        assert_ptr_equal(cfdb_location_cache_get(&c, key_n(b, i, false), false, NULL, NULL), l);
    }
    assert_int_equal(cfdb_location_cache_size(&c), 3);
    assert_int_equal(c.evictions, 97);
    assert_int_equal(drops, 97);
    cfdb_location_cache_destroy(&c);
    assert_int_equal(drops, 100);
}

/* Splitting a cached range in two by an insert inside it stays within the bound too. */
static void test_bound_with_carve_split(void **state)
{
    (void)state;
    cfdb_location_cache c;
    assert_int_equal(cfdb_location_cache_init(&c, 2), 0);
    cfdb_location *outer = mkloc(1), *inner = mkloc(2);
    assert_int_equal(cfdb_location_cache_insert(&c, B("a"), B("z"), outer), 0);
    assert_int_equal(cfdb_location_cache_insert(&c, B("m"), B("n"), inner), 0);
    assert_int_equal(cfdb_location_cache_size(&c), 2);
    assert_ptr_equal(cfdb_location_cache_get(&c, B("m"), false, NULL, NULL), inner);
    /* one of [a, m) and [n, z) went */
    bool left = cfdb_location_cache_get(&c, B("b"), false, NULL, NULL) != NULL;
    bool right = cfdb_location_cache_get(&c, B("x"), false, NULL, NULL) != NULL;
    assert_true(left != right);
    cfdb_location_cache_destroy(&c);
    cfdb_location_unref(outer);
    cfdb_location_unref(inner);
}

/* A bound of 0 keeps only the range last inserted; lowering the bound takes effect at the
 * next insert, at most 100 evictions per insert (setCachedLocation's maxEvictionAttempts). */
static void test_bound_zero_and_lowered(void **state)
{
    (void)state;
    cfdb_location_cache c;
    assert_int_equal(cfdb_location_cache_init(&c, 1000), 0);
    cfdb_location *l = mkloc(1);
    char b[8], e[8];
    for (int i = 0; i < 300; i++)
        assert_int_equal(cfdb_location_cache_insert(&c, key_n(b, i, false), key_n(e, i, true), l), 0);
    assert_int_equal(cfdb_location_cache_size(&c), 300);
    cfdb_location_cache_set_max(&c, 0);
    assert_int_equal(cfdb_location_cache_size(&c), 300); /* nothing until the next insert */
    assert_int_equal(cfdb_location_cache_insert(&c, B("x"), B("y"), l), 0);
    assert_int_equal(cfdb_location_cache_size(&c), 300 - 100 + 1);
    assert_int_equal(cfdb_location_cache_insert(&c, B("y"), B("yz"), l), 0);
    assert_int_equal(cfdb_location_cache_insert(&c, B("yz"), B("z"), l), 0);
    assert_int_equal(cfdb_location_cache_insert(&c, B("z"), B("zz"), l), 0);
    assert_int_equal(cfdb_location_cache_size(&c), 1);
    assert_ptr_equal(cfdb_location_cache_get(&c, B("z"), false, NULL, NULL), l);
    cfdb_location_cache_destroy(&c);
    assert_int_equal(l->refs, 1);
    cfdb_location_unref(l);
}

static cfdb_location *make_skip_odd(void *ctx, const cfdb_shard_location *s)
{
    int *made = ctx;
    (*made)++;
    if (s->first.begin.len && (s->first.begin.ptr[s->first.begin.len - 1] & 1))
        return NULL; /* not cacheable */
    cfdb_location *l = cfdb_location_new(s->second.items, s->second.count);
    l->drop = count_drop;
    return l;
}

/* A reply longer than the bound keeps its first shards (the one asked about first), and they
 * push out what was cached elsewhere rather than each other; make can refuse a shard. */
static void test_reply_longer_than_bound(void **state)
{
    (void)state;
    cfdb_location_cache c;
    assert_int_equal(cfdb_location_cache_init(&c, 4), 0);
    cfdb_location *other = mkloc(7);
    assert_int_equal(cfdb_location_cache_insert(&c, B("a"), B("b"), other), 0);
    assert_int_equal(cfdb_location_cache_insert(&c, B("x"), B("y"), other), 0);
    cfdb_storage_server_interface ssi[1];
    memset(ssi, 0, sizeof ssi);
    enum { N = 10 };
    cfdb_shard_location shards[N];
    char keys[N + 1][2];
    for (int i = 0; i <= N; i++) {
        keys[i][0] = 'c';
        keys[i][1] = (char)('0' + 2 * i); /* even last bytes: cacheable */
    }
    memset(shards, 0, sizeof shards);
    for (int i = 0; i < N; i++) {
        shards[i].first.begin = cfdb_bytes_make(keys[i], 2);
        shards[i].first.end = cfdb_bytes_make(keys[i + 1], 2);
        shards[i].second.items = ssi;
        shards[i].second.count = 1;
    }
    cfdb_get_key_server_locations_reply reply;
    memset(&reply, 0, sizeof reply);
    reply.results.items = shards;
    reply.results.count = N;
    int made = 0;
    drops = 0;
    assert_int_equal(cfdb_location_cache_insert_reply(&c, &reply, make_skip_odd, &made), 0);
    assert_int_equal(made, 4);
    assert_int_equal(cfdb_location_cache_size(&c), 4);
    for (int i = 0; i < N; i++)
        assert_int_equal(cfdb_location_cache_get(&c, shards[i].first.begin, false, NULL, NULL) != NULL, i < 4);
    assert_null(cfdb_location_cache_get(&c, B("a"), false, NULL, NULL));
    assert_null(cfdb_location_cache_get(&c, B("x"), false, NULL, NULL));
    assert_int_equal(c.evictions, 2);

    /* a reverse reply: descending shards, the first holds the key before the one asked */
    cfdb_shard_location rev[N];
    for (int i = 0; i < N; i++)
        rev[i] = shards[N - 1 - i];
    reply.results.items = rev;
    assert_int_equal(cfdb_location_cache_insert_reply(&c, &reply, NULL, NULL), 0);
    assert_int_equal(cfdb_location_cache_size(&c), 4);
    for (int i = 0; i < N; i++)
        assert_int_equal(cfdb_location_cache_get(&c, shards[i].first.begin, false, NULL, NULL) != NULL, i >= N - 4);
    assert_non_null(cfdb_location_cache_get(&c, shards[N - 1].first.end, true, NULL, NULL));
    assert_int_equal(drops, 4); /* the first reply's locations went with their ranges */

    /* one shard whose servers cannot be used: nothing cached, nothing evicted */
    reply.results.count = 1;
    shards[0].first.begin = B("e1");
    shards[0].first.end = B("e3");
    reply.results.items = shards;
    made = 0;
    assert_int_equal(cfdb_location_cache_insert_reply(&c, &reply, make_skip_odd, &made), 0);
    assert_int_equal(made, 1);
    assert_int_equal(cfdb_location_cache_size(&c), 4);
    cfdb_location_cache_destroy(&c);
    cfdb_location_unref(other);
}

/* Random inserts and invalidations into caches bounded at 1..4 ranges: never more ranges than
 * the bound, the range just inserted is there whole, and whatever is cached agrees with an
 * unbounded model (eviction only forgets, it never mixes ranges up). */
static void test_randomized_bounded(void **state)
{
    (void)state;
    uint64_t x = 777;
    cfdb_location *locs[4];
    for (int i = 0; i < 4; i++)
        locs[i] = mkloc((uint64_t)i);
    for (int round = 0; round < 400; round++) {
        size_t bound = 1 + round % 4;
        cfdb_location_cache c;
        assert_int_equal(cfdb_location_cache_init(&c, bound), 0);
        cfdb_location *model[16] = { 0 };
        for (int op = 0; op < 60; op++) {
            unsigned a = RND(16), b = RND(17);
            uint8_t ka = (uint8_t)('a' + a), kb = (uint8_t)('a' + b);
            if (RND(5) < 4 && a < b) {
                cfdb_location *l = locs[RND(4)];
                assert_int_equal(cfdb_location_cache_insert(&c, cfdb_bytes_make(&ka, 1), cfdb_bytes_make(&kb, 1), l), 0);
                for (unsigned i = a; i < b; i++) {
                    model[i] = l;
                    uint8_t ki = (uint8_t)('a' + i);
                    cfdb_bytes rb, re;
                    assert_ptr_equal(cfdb_location_cache_get(&c, cfdb_bytes_make(&ki, 1), false, &rb, &re), l);
                    assert_true(cfdb_bytes_eq(rb, cfdb_bytes_make(&ka, 1)) && cfdb_bytes_eq(re, cfdb_bytes_make(&kb, 1)));
                }
            } else {
                cfdb_location_cache_invalidate_key(&c, cfdb_bytes_make(&ka, 1), false);
            }
            assert_true(cfdb_location_cache_size(&c) <= bound);
            check_slots(&c);
            for (unsigned i = 0; i < 16; i++) {
                uint8_t ki = (uint8_t)('a' + i);
                cfdb_location *got = cfdb_location_cache_get(&c, cfdb_bytes_make(&ki, 1), false, NULL, NULL);
                if (got)
                    assert_ptr_equal(got, model[i]);
            }
        }
        cfdb_location_cache_destroy(&c);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(locs[i]->refs, 1);
        cfdb_location_unref(locs[i]);
    }
}

/* Eviction picks ranges across the cached span, not always the lowest ones (FDB evicts a
 * random range): 50 inserts into a full cache of 100 evict some of the upper half too. */
static void test_eviction_spreads(void **state)
{
    (void)state;
    cfdb_location_cache c;
    assert_int_equal(cfdb_location_cache_init(&c, 100), 0);
    cfdb_location *l = mkloc(3);
    char b[8], e[8];
    for (int i = 0; i < 100; i++)
        assert_int_equal(cfdb_location_cache_insert(&c, key_n(b, i, false), key_n(e, i, true), l), 0);
    for (int i = 0; i < 50; i++) {
        char z[8];
        int n = snprintf(z, sizeof z, "z%03d", i);
        assert_int_equal(cfdb_location_cache_insert(&c, cfdb_bytes_make(z, (size_t)n), cfdb_bytes_make(z, (size_t)n + 1), l), 0);
    }
    int low_gone = 0, high_gone = 0;
    for (int i = 0; i < 100; i++)
        if (!cfdb_location_cache_get(&c, key_n(b, i, false), false, NULL, NULL)) {
            if (i < 50)
                low_gone++;
            else
                high_gone++;
        }
    assert_int_equal(cfdb_location_cache_size(&c), 100);
    assert_true(low_gone > 0 && high_gone > 0);
    cfdb_location_cache_destroy(&c);
    cfdb_location_unref(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_reply_and_eviction),
        cmocka_unit_test(test_bound_small_holds_and_evicts),
        cmocka_unit_test(test_bound_with_carve_split),
        cmocka_unit_test(test_bound_zero_and_lowered),
        cmocka_unit_test(test_reply_longer_than_bound),
        cmocka_unit_test(test_randomized_bounded),
        cmocka_unit_test(test_eviction_spreads),
        cmocka_unit_test(test_randomized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
