/* The RYW read engine (ryw_read.c over snap_cache.c, ryw_iter.c and native_range.c),
 * as the client runs it, against a model: a sorted set of stored keys, a random
 * sequence of local sets and clears, and several reads per transaction sharing one
 * snapshot cache. A model storage server answers each GetKeyValuesRequest the way a
 * storage server does (it resolves both selectors, honours the row and byte limits,
 * and may return fewer rows with `more`); every result is compared with a direct
 * computation over the merged view. Request shapes libfdb_c sends are pinned by the
 * golden comparison (tests/client_golden); this test pins the answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include <cmocka.h>

#include "cfdb/errors.h"
#include "key_selector.h"
#include "native_range.h"
#include "ryw_read.h"

#define B(s) cfdb_bytes_make((s), sizeof(s) - 1)

/* universe: all keys of 1-2 letters over "abcd", sorted (the user keys, below the
 * readable end "\xff"), then two system keys that every database holds: selectors
 * always resolve somewhere, as in a real cluster */
#define NK 20
#define NT (NK + 2)
static char ukeys[NT][4] = { [NK] = "\xff/a", [NK + 1] = "\xff/b" };
static void init_universe(void)
{
    int n = 0;
    for (int i = 0; i < 4; i++) {
        ukeys[n][0] = (char)('a' + i);
        ukeys[n][1] = 0;
        n++;
        for (int j = 0; j < 4; j++) {
            ukeys[n][0] = (char)('a' + i);
            ukeys[n][1] = (char)('a' + j);
            ukeys[n][2] = 0;
            n++;
        }
    }
}
static cfdb_bytes uk(int i)
{
    return cfdb_bytes_str(ukeys[i]);
}

static uint64_t rs = 99;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

/* A selector resolved over a set of keys: the index of the key, -1 for the
 * beginning of the database, NK for its end. */
static int resolve(const bool *set, cfdb_key_selector sel)
{
    int first = 0; /* first key >= sel.key (> when orEqual) */
    while (first < NT && (sel.orEqual ? cfdb_bytes_cmp(uk(first), sel.key) <= 0 : cfdb_bytes_cmp(uk(first), sel.key) < 0))
        first++;
    int cnt = 0;
    if (sel.offset > 0) {
        for (int i = first; i < NT; i++)
            if ((i >= NK || set[i]) && ++cnt == sel.offset)
                return i < NK ? i : NK;
        return NK;
    }
    for (int i = first - 1; i >= 0; i--)
        if ((i >= NK || set[i]) && ++cnt == 1 - sel.offset)
            return i < NK ? i : NK;
    return -1;
}

/* The storage server's selector resolution inside its shard (findKey): false when the
 * selector needs keys outside the shard [, \xff\xff) — then it answers
 * wrong_shard_server, even off the ends of the database. */
static bool resolve_in_shard(const bool *store, cfdb_key_selector sel, int *out)
{
    int first = 0;
    while (first < NT && (sel.orEqual ? cfdb_bytes_cmp(uk(first), sel.key) <= 0 : cfdb_bytes_cmp(uk(first), sel.key) < 0))
        first++;
    int cnt = 0;
    if (sel.offset > 0) {
        for (int i = first; i < NT; i++)
            if ((i >= NK || store[i]) && ++cnt == sel.offset) {
                *out = i;
                return true;
            }
        *out = NT;
        return sel.offset - cnt == 1; /* firstGreaterOrEqual(shard end) is resolved */
    }
    for (int i = first - 1; i >= 0; i--)
        if ((i >= NK || store[i]) && ++cnt == 1 - sel.offset) {
            *out = i;
            return true;
        }
    return false;
}

/* The storage server: GetKeyValuesRequest over one shard covering everything.
 * Returns false for wrong_shard_server. */
static bool storage_read(const bool *store, const cfdb_native_range *nr, cfdb_key_value *rows, size_t *nrows,
                         bool *more)
{
    int b, e;
    if (!resolve_in_shard(store, nr->req_begin, &b) || !resolve_in_shard(store, nr->req_end, &e))
        return false;
    int limit = nr->req_limit < 0 ? -nr->req_limit : nr->req_limit;
    bool reverse = nr->req_limit < 0;
    int idx[NT], n = 0;
    for (int i = b; i < e && i < NT; i++)
        if (i >= NK || store[i])
            idx[n++] = i;
    size_t out = 0;
    int bytes = 0;
    for (int s = 0; s < n && (int)out < limit && bytes < nr->req_limit_bytes; s++) {
        int i = reverse ? idx[n - 1 - s] : idx[s];
        rows[out++] = (cfdb_key_value){ uk(i), B("s") };
        bytes += (int)uk(i).len + 1 + 24;
    }
    if (out > 1 && rnd(3) == 0)
        out = 1 + rnd((unsigned)out); /* a server may stop early: more = true */
    *more = out < (size_t)n;
    *nrows = out;
    return true;
}

/* NativeAPI getKey over the whole database: "" and "\xff\xff" at the ends */
static cfdb_bytes native_get_key(const bool *store, cfdb_key_selector sel)
{
    int i;
    if (resolve_in_shard(store, sel, &i))
        return i >= NT ? B("\xff\xff") : uk(i);
    return B("");
}

static int run(cfdb_ryw_read *r, const bool *store, int *requests)
{
    cfdb_key_value rows[NT];
    int rc;
    cfdb_native_range nr; /* its result is read by the next advance */
    while ((rc = cfdb_ryw_read_advance(r)) == CFDB_RYW_NEED_READ) {
        cfdb_native_range_start(&nr, r->arena, r->arena, r->req_begin, r->req_end, r->req_limits, r->req_reverse);
        int s;
        while ((s = cfdb_native_range_next(&nr)) != CFDB_NR_DONE) {
            if (s == CFDB_NR_NEED_KEYS) {
                cfdb_native_range_keys(&nr, native_get_key(store, nr.orig_begin), native_get_key(store, nr.orig_end));
                continue;
            }
            cfdb_native_range_located(&nr, B(""), B("\xff\xff"));
            assert_true(nr.req_limit != 0 && nr.req_limit_bytes > 0);
            bool more;
            size_t n;
            (*requests)++;
            if (!storage_read(store, &nr, rows, &n, &more)) {
                cfdb_native_range_wrong_shard(&nr);
                continue;
            }
            assert_int_equal(cfdb_native_range_reply(&nr, rows, n, more), 0);
        }
        /* the rows were copied into the arena the cache uses: it keeps them as they are, as
         * the client does */
        nr.result.rows_in_cache_arena = r->arena == r->cache->arena;
        cfdb_ryw_read_feed(r, &nr.result);
    }
    return rc;
}

static void check_range(const bool *view, cfdb_key_selector sb, cfdb_key_selector se, int32_t lim, bool reverse,
                        const cfdb_ryw_read *r, int round, int q)
{
    int rb = resolve(view, sb), re = resolve(view, se);
    if (rb < 0)
        rb = 0;
    int keys[NK], nk = 0;
    if (!cfdb_sel_range_trivially_empty(&sb, &se))
        for (int i = 0; i < NK; i++)
            if (view[i] && i >= rb && i < re)
                keys[nk++] = i;
    size_t expect_n = (lim > 0 && nk > lim) ? (size_t)lim : (size_t)nk;
    if (r->n != expect_n)
        fail_msg("round %d q %d: %zu rows, expected %zu", round, q, r->n, expect_n);
    for (size_t i = 0; i < r->n; i++) {
        int want = reverse ? keys[nk - 1 - (int)i] : keys[i];
        if (!cfdb_bytes_eq(r->rows[i].key, uk(want)))
            fail_msg("round %d q %d: row %zu is %.*s, expected %s", round, q, i, (int)r->rows[i].key.len,
                     (const char *)r->rows[i].key.ptr, ukeys[want]);
    }
    /* libfdb_c says more whenever the row limit is reached, rows left or not */
    assert_int_equal(r->more, lim > 0 && (size_t)lim == expect_n && expect_n > 0);
}

static void test_randomized(void **state)
{
    (void)state;
    init_universe();
    cfdb_bytes maxk = B("\xff");
    int total_requests = 0, reads = 0, cached_reads = 0;
    for (int round = 0; round < 3000; round++) {
        bool store[NK], view[NK];
        for (int i = 0; i < NK; i++)
            view[i] = store[i] = rnd(3) == 0;
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_write_map wm;
        cfdb_write_map_init(&wm, &a);
        cfdb_snap_cache cache;
        assert_int_equal(cfdb_snap_init(&cache, &a), 0);
        bool ryw = rnd(4) != 0;
        for (int q = 0; q < 8; q++) {
            if (ryw && rnd(2)) { /* a write between reads */
                int i = (int)rnd(NK), j = (int)rnd(NK);
                if (rnd(2)) {
                    cfdb_write_map_set(&wm, uk(i), B("v"), true);
                    view[i] = true;
                } else {
                    if (i > j) {
                        int t = i;
                        i = j;
                        j = t;
                    }
                    cfdb_write_map_clear(&wm, uk(i), uk(j), true);
                    for (int k = i; k < j; k++)
                        view[k] = false;
                }
            }
            const bool *seen = ryw ? view : store;
            cfdb_ryw_read r;
            int requests = 0;
            if (rnd(3) == 0) {
                cfdb_key_selector sel = cfdb_sel_make(uk((int)rnd(NK)), rnd(2), (int32_t)rnd(7) - 3);
                cfdb_ryw_read_key(&r, &cache, ryw ? &wm : NULL, &a, maxk, sel);
                assert_int_equal(run(&r, store, &requests), CFDB_RYW_DONE);
                int want = resolve(seen, sel);
                cfdb_bytes expect = want < 0 ? B("") : want >= NK ? maxk : uk(want);
                if (!cfdb_bytes_eq(r.key, expect))
                    fail_msg("round %d q %d: get_key(%s, %d, %d) = %.*s, expected %.*s", round, q,
                             (const char *)sel.key.ptr, sel.orEqual, sel.offset, (int)r.key.len,
                             (const char *)r.key.ptr, (int)expect.len, (const char *)expect.ptr);
            } else {
                int bi = (int)rnd(NK), ei = (int)rnd(NK);
                cfdb_key_selector sb = cfdb_sel_make(uk(bi), rnd(2), (int32_t)rnd(5) - 2);
                cfdb_key_selector se = cfdb_sel_make(uk(ei), rnd(2), (int32_t)rnd(5) - 1);
                if (rnd(2))
                    sb = cfdb_first_greater_or_equal(uk(bi));
                if (rnd(2))
                    se = cfdb_first_greater_or_equal(uk(ei));
                assert_int_equal(cfdb_sel_remove_or_equal(&sb, &a), 0);
                assert_int_equal(cfdb_sel_remove_or_equal(&se, &a), 0);
                bool reverse = rnd(2);
                int32_t lim = rnd(3) ? (int32_t)(1 + rnd(5)) : -1;
                int32_t bytes = rnd(4) == 0 ? (int32_t)(1 + rnd(60)) : -1;
                if (cfdb_sel_range_trivially_empty(&sb, &se))
                    continue; /* the API answers these without a read */
                cfdb_ryw_read_range(&r, &cache, ryw ? &wm : NULL, &a, maxk, sb, se, cfdb_range_limits_make(lim, bytes),
                                    reverse);
                assert_int_equal(run(&r, store, &requests), CFDB_RYW_DONE);
                if (bytes < 0) {
                    check_range(seen, sb, se, lim, reverse, &r, round, q);
                } else {
                    /* a byte limit returns a prefix of the rows, at least one when any */
                    bool sorted = true;
                    for (size_t i = 1; i < r.n; i++)
                        sorted &= reverse ? cfdb_bytes_cmp(r.rows[i - 1].key, r.rows[i].key) > 0
                                          : cfdb_bytes_cmp(r.rows[i - 1].key, r.rows[i].key) < 0;
                    assert_true(sorted);
                }
            }
            reads++;
            total_requests += requests;
            cached_reads += requests == 0;
        }
        cfdb_write_map_destroy(&wm);
        cfdb_arena_free(&a);
    }
    print_message("%d reads, %d requests, %d answered from the cache and local writes alone\n", reads,
                  total_requests, cached_reads);
    assert_true(cached_reads > reads / 10); /* the snapshot cache is in use */
}

/* What libfdb_c asks storage for, computed by hand from RYWImpl::getRangeValue and
 * NativeAPI's transformRangeLimits (7.3.77): */
static void test_request_limits(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_snap_cache cache;
    assert_int_equal(cfdb_snap_init(&cache, &a), 0);
    cfdb_ryw_read r;
    /* WANT_ALL (SERIAL: 80000 bytes, no row limit): limit 80000, limitBytes 80000 */
    cfdb_ryw_read_range(&r, &cache, NULL, &a, B("\xff"), cfdb_first_greater_or_equal(B("a")),
                        cfdb_first_greater_or_equal(B("b")), cfdb_range_limits_make(-1, 80000), false);
    assert_int_equal(cfdb_ryw_read_advance(&r), CFDB_RYW_NEED_READ);
    cfdb_native_range nr;
    cfdb_native_range_start(&nr, &a, &a, r.req_begin, r.req_end, r.req_limits, false);
    assert_int_equal(cfdb_native_range_next(&nr), CFDB_NR_NEED_LOCATION);
    cfdb_native_range_located(&nr, B(""), B("\xff\xff"));
    assert_int_equal(nr.req_limit, 80000);
    assert_int_equal(nr.req_limit_bytes, 80000);
    /* a limit of 10 rows, EXACT: limit 10, limitBytes 80000 */
    cfdb_ryw_read_range(&r, &cache, NULL, &a, B("\xff"), cfdb_first_greater_or_equal(B("c")),
                        cfdb_first_greater_or_equal(B("d")), cfdb_range_limits_make(10, -1), false);
    assert_int_equal(cfdb_ryw_read_advance(&r), CFDB_RYW_NEED_READ);
    cfdb_native_range_start(&nr, &a, &a, r.req_begin, r.req_end, r.req_limits, false);
    cfdb_native_range_next(&nr);
    cfdb_native_range_located(&nr, B(""), B("\xff\xff"));
    assert_int_equal(nr.req_limit, 10);
    assert_int_equal(nr.req_limit_bytes, 80000);
    /* reverse, 5 rows: limit -5 */
    cfdb_ryw_read_range(&r, &cache, NULL, &a, B("\xff"), cfdb_first_greater_or_equal(B("e")),
                        cfdb_first_greater_or_equal(B("f")), cfdb_range_limits_make(5, -1), true);
    assert_int_equal(cfdb_ryw_read_advance(&r), CFDB_RYW_NEED_READ);
    cfdb_native_range_start(&nr, &a, &a, r.req_begin, r.req_end, r.req_limits, true);
    cfdb_native_range_next(&nr);
    cfdb_native_range_located(&nr, B(""), B("\xff\xff"));
    assert_int_equal(nr.req_limit, -5);
    /* ITERATOR iteration 1 (4096 bytes): limit 80000, limitBytes 4096 */
    cfdb_ryw_read_range(&r, &cache, NULL, &a, B("\xff"), cfdb_first_greater_or_equal(B("g")),
                        cfdb_first_greater_or_equal(B("h")), cfdb_range_limits_make(-1, 4096), false);
    assert_int_equal(cfdb_ryw_read_advance(&r), CFDB_RYW_NEED_READ);
    cfdb_native_range_start(&nr, &a, &a, r.req_begin, r.req_end, r.req_limits, false);
    cfdb_native_range_next(&nr);
    cfdb_native_range_located(&nr, B(""), B("\xff\xff"));
    assert_int_equal(nr.req_limit, 80000);
    assert_int_equal(nr.req_limit_bytes, 4096);
    /* get_key(lastLessThan(k)) reads one row backward: firstGreaterOrEqual("")..(k, 1), limit -1 */
    cfdb_ryw_read_key(&r, &cache, NULL, &a, B("\xff"), cfdb_last_less_than(B("k")));
    assert_int_equal(cfdb_ryw_read_advance(&r), CFDB_RYW_NEED_READ);
    assert_true(r.req_reverse);
    assert_true(cfdb_bytes_eq(r.req_end.key, B("k")));
    assert_int_equal(r.req_end.offset, 1);
    cfdb_native_range_start(&nr, &a, &a, r.req_begin, r.req_end, r.req_limits, true);
    cfdb_native_range_next(&nr);
    cfdb_native_range_located(&nr, B(""), B("\xff\xff"));
    assert_int_equal(nr.req_limit, -1);
    /* the byte limit doubles with each request of one read (setRequestLimits: bytes <<
     * requestCount): storage's first reply is one row the transaction has cleared, so the read
     * has nothing yet and asks again, from after that row, for twice the bytes */
    cfdb_write_map wm;
    cfdb_write_map_init(&wm, &a);
    cfdb_write_map_clear_key(&wm, B("b"), true);
    cfdb_ryw_read_range(&r, &cache, &wm, &a, B("\xff"), cfdb_first_greater_or_equal(B("a")),
                        cfdb_first_greater_or_equal(B("z")), cfdb_range_limits_make(-1, 100), false);
    assert_int_equal(cfdb_ryw_read_advance(&r), CFDB_RYW_NEED_READ);
    assert_int_equal(r.req_limits.bytes, 100);
    cfdb_key_value row_b = { B("b"), B("v") };
    cfdb_native_result first = { &row_b, 1, true, false, false, false, { NULL, 0 }, false };
    cfdb_ryw_read_feed(&r, &first);
    assert_int_equal(cfdb_ryw_read_advance(&r), CFDB_RYW_NEED_READ);
    assert_true(cfdb_bytes_eq(r.req_begin.key, cfdb_bytes_make("b\0", 2)));
    assert_int_equal(r.req_limits.bytes, 200);
    cfdb_write_map_destroy(&wm);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_limits),
        cmocka_unit_test(test_randomized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
