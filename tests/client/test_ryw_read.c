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

#include "error_codes.h"
#include "mutation.h"
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

static void check_range(const bool *view, cfdb_key_selector sb, cfdb_key_selector se, int32_t lim, bool reverse,
                        const cfdb_ryw_read *r, int round, int q);

/* While a read waits for storage, another read of the same transaction may complete and
 * fill the snapshot cache under it (the client runs reads concurrently): with
 * interleave_view set, run() does that now and then, and checks the other read's rows
 * against interleave_view too. */
static const bool *interleave_view;
static int interleaved;

static int run(cfdb_ryw_read *r, const bool *store, int *requests)
{
    cfdb_key_value rows[NT];
    int rc;
    cfdb_native_range nr; /* its result is read by the next advance */
    while ((rc = cfdb_ryw_read_advance(r)) == CFDB_RYW_NEED_READ) {
        if (interleave_view && rnd(4) == 0) {
            const bool *view = interleave_view;
            interleave_view = NULL; /* one level */
            cfdb_key_selector sb = cfdb_first_greater_or_equal(uk((int)rnd(NK)));
            cfdb_key_selector se = cfdb_first_greater_or_equal(uk((int)rnd(NK)));
            bool reverse = rnd(2);
            if (!cfdb_sel_range_trivially_empty(&sb, &se)) {
                cfdb_ryw_read other;
                int other_requests = 0;
                cfdb_ryw_read_range(&other, r->cache, r->wm, r->arena, r->max_key, sb, se,
                                    cfdb_range_limits_make(-1, -1), reverse);
                assert_int_equal(run(&other, store, &other_requests), CFDB_RYW_DONE);
                check_range(view, sb, se, -1, reverse, &other, -1, -1);
                interleaved++;
            }
            interleave_view = view;
        }
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
            interleave_view = seen;
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
    interleave_view = NULL;
    print_message("%d reads, %d requests, %d answered from the cache and local writes alone, %d reads "
                  "completed while another waited for storage\n",
                  reads, total_requests, cached_reads, interleaved);
    assert_true(interleaved > reads / 20);
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


/* ---- the segment iterator: incremental steps against fresh searches ----
 *
 * cfdb_ryw_iter_next / _prev step from cursors kept in the snapshot cache and the write
 * map (ryw_iter.h); cfdb_ryw_iter_skip searches from the key. Over random caches and
 * write maps — keys with zero bytes inside and at the end, so segment boundaries such as
 * k\0 meet stored and written keys, cleared ranges, unreadable ranges from versionstamped
 * keys, dependent (atomic) writes — a walk of random steps in both directions, with cache
 * inserts and writes made between steps (a read that waits for storage sees both), must
 * give at every step the segment a fresh search from its begin gives. */

#define NX 39 /* every key of 1-3 bytes over "\0", "a", "b", in key order */
static uint8_t xkeys[NX][3];
static uint32_t xlens[NX];
static bool xstore[NX];
static void init_xkeys(void)
{
    static const uint8_t alpha[3] = { 0, 'a', 'b' };
    int n = 0;
    for (int a = 0; a < 3; a++) {
        xkeys[n][0] = alpha[a];
        xlens[n++] = 1;
        for (int b = 0; b < 3; b++) {
            xkeys[n][0] = alpha[a];
            xkeys[n][1] = alpha[b];
            xlens[n++] = 2;
            for (int c = 0; c < 3; c++) {
                xkeys[n][0] = alpha[a];
                xkeys[n][1] = alpha[b];
                xkeys[n][2] = alpha[c];
                xlens[n++] = 3;
            }
        }
    }
}
static cfdb_bytes xk(int i)
{
    return cfdb_bytes_make(xkeys[i], xlens[i]);
}

/* What a read of [xk(i), xk(j)) (j == NX: to "\xff") or a get of xk(i) tells the cache. */
static void random_cache_insert(cfdb_snap_cache *cache)
{
    int i = (int)rnd(NX);
    if (rnd(3) == 0) {
        cfdb_bytes v = B("s");
        assert_int_equal(cfdb_snap_insert_key(cache, xk(i), xstore[i] ? &v : NULL), 0);
        return;
    }
    int j = i + 1 + (int)rnd((unsigned)(NX - i));
    cfdb_key_value rows[NX];
    size_t n = 0;
    for (int k = i; k < j && k < NX; k++)
        if (xstore[k])
            rows[n++] = (cfdb_key_value){ xk(k), B("s") };
    cfdb_xkey end = cfdb_xkey_of(j < NX ? xk(j) : B("\xff"));
    if (j < NX && rnd(3) == 0) { /* a read that ended just after a key: end k\0 */
        end = cfdb_xkey_after(cfdb_xkey_of(xk(j - 1)));
        if (!xstore[j - 1])
            end = cfdb_xkey_of(xk(j - 1)); /* the rows must cover the range */
        while (n && cfdb_xkey_cmp(cfdb_xkey_of(rows[n - 1].key), end) >= 0)
            n--;
    }
    assert_int_equal(cfdb_snap_insert_range(cache, xk(i), end, rows, n, false), 0);
}

static void random_write(cfdb_write_map *wm)
{
    int i = (int)rnd(NX), j = (int)rnd(NX);
    switch (rnd(6)) {
    case 0:
    case 1:
        assert_int_equal(cfdb_write_map_set(wm, xk(i), B("w"), true), 0);
        break;
    case 2:
        assert_int_equal(cfdb_write_map_clear(wm, xk(i < j ? i : j), xk(i < j ? j : i), true), 0);
        break;
    case 3:
        assert_int_equal(cfdb_write_map_clear_key(wm, xk(i), true), 0);
        break;
    case 4: /* dependent on the stored value */
        assert_int_equal(cfdb_write_map_atomic(wm, CFDB_MUT_ADD_VALUE, xk(i), B("\x01"), true, 0, B("\xff")), 0);
        break;
    default: { /* versionstamped key: the range of its possible keys becomes unreadable */
        uint8_t k[15] = { 0 };
        memcpy(k, xkeys[i], xlens[i]);
        k[11] = 1; /* the stamp at offset 1: [xk(i)[0] "\0"*10, xk(i)[0] "\xff"*10 "\0") */
        assert_int_equal(cfdb_write_map_atomic(wm, CFDB_MUT_SET_VERSIONSTAMPED_KEY, cfdb_bytes_make(k, 15),
                                               B("w"), true, 0, B("\xff")),
                         0);
        break;
    }
    }
}

static void assert_same_segment(cfdb_ryw_iter *it, cfdb_ryw_iter *fresh, int round, int step)
{
    if (!cfdb_xkey_eq(it->begin, fresh->begin) || !cfdb_xkey_eq(it->end, fresh->end) || it->type != fresh->type ||
        it->wtype != fresh->wtype || it->unreadable != fresh->unreadable || it->c.type != fresh->c.type ||
        it->c.e != fresh->c.e || (it->c.type == CFDB_SNAP_KV && it->c.idx != fresh->c.idx) ||
        !cfdb_xkey_eq(it->wbegin, fresh->wbegin) || !cfdb_xkey_eq(it->wend, fresh->wend))
        fail_msg("round %d step %d: stepped to [%u bytes +%u, %u bytes +%u) type %d/%d/%d, a search finds "
                 "[%u bytes +%u, %u bytes +%u) type %d/%d/%d",
                 round, step, it->begin.k.len, it->begin.z, it->end.k.len, it->end.z, it->type, it->wtype,
                 it->c.type, fresh->begin.k.len, fresh->begin.z, fresh->end.k.len, fresh->end.z, fresh->type,
                 fresh->wtype, fresh->c.type);
    if (it->type == CFDB_RYW_KV && !it->unreadable) {
        cfdb_key_value a, b;
        bool pa, pb;
        assert_int_equal(cfdb_ryw_iter_kv(it, &a, &pa), cfdb_ryw_iter_kv(fresh, &b, &pb));
        assert_int_equal(pa, pb);
        assert_true(cfdb_bytes_eq(a.key, b.key));
        if (pa)
            assert_true(cfdb_bytes_eq(a.value, b.value));
    }
}

static void test_iter_steps_match_search(void **state)
{
    (void)state;
    init_xkeys();
    const cfdb_xkey top = cfdb_xkey_of(B("\xff"));
    long steps = 0, after_change = 0;
    for (int round = 0; round < 2000; round++) {
        for (int i = 0; i < NX; i++)
            xstore[i] = rnd(2) == 0;
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_write_map wm;
        cfdb_write_map_init(&wm, &a);
        cfdb_snap_cache cache;
        assert_int_equal(cfdb_snap_init(&cache, &a), 0);
        bool ryw = rnd(5) != 0;
        for (int n = (int)rnd(6); n > 0; n--)
            random_cache_insert(&cache);
        for (int n = ryw ? (int)rnd(8) : 0; n > 0; n--)
            random_write(&wm);
        cfdb_ryw_iter it, fresh;
        cfdb_ryw_iter_init(&it, &cache, ryw ? &wm : NULL, &a);
        assert_int_equal(cfdb_ryw_iter_skip(&it, cfdb_xkey_of(xk((int)rnd(NX)))), 0);
        bool changed = false;
        for (int step = 0; step < 80; step++) {
            unsigned what = rnd(10);
            if (what == 0) {
                random_cache_insert(&cache);
                changed = true;
                continue;
            }
            if (what == 1 && ryw) {
                random_write(&wm);
                changed = true;
                continue;
            }
            bool fwd = what & 1;
            if (fwd && cfdb_xkey_cmp(it.end, top) >= 0)
                fwd = false;
            if (!fwd && it.begin.k.len == 0 && it.begin.z == 0)
                fwd = true;
            assert_int_equal(fwd ? cfdb_ryw_iter_next(&it) : cfdb_ryw_iter_prev(&it), 0);
            cfdb_ryw_iter_init(&fresh, &cache, ryw ? &wm : NULL, &a);
            assert_int_equal(cfdb_ryw_iter_skip(&fresh, it.begin), 0);
            assert_same_segment(&it, &fresh, round, step);
            steps++;
            after_change += changed;
            changed = false;
        }
        cfdb_write_map_destroy(&wm);
        cfdb_arena_free(&a);
    }
    print_message("%ld steps, %ld of them right after a cache insert or a write\n", steps, after_change);
    assert_true(after_change > steps / 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_limits),
        cmocka_unit_test(test_randomized),
        cmocka_unit_test(test_iter_steps_match_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
