/* Randomized comparison of the MVCC store against a naive model: a full copy of
 * the database after every commit, over a small key universe. Covers point reads,
 * range reads with limits, key selectors resolved across a shard map the way the
 * client walks it, range reads by selector, iterators and forgetting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "atomic_ops.h"
#include "error_codes.h"
#include "mvcc_store.h"

/* Keys: "" and every string of length 1..3 over {a, b, c}, kept sorted. */
enum { NKEYS = 40, MAXV = 6 };
static char universe[NKEYS][4];
static int universe_n;

typedef struct ref_value {
    bool present;
    uint8_t len;
    uint8_t data[64];
} ref_value;

typedef struct snapshot {
    int64_t version;
    ref_value v[NKEYS];
} snapshot;

static uint64_t rs = 0x1234567887654321ull;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static int cmp_str(const void *a, const void *b)
{
    return cfdb_bytes_cmp(cfdb_bytes_str(a), cfdb_bytes_str(b));
}

static void build_universe(void)
{
    const char al[] = "abc";
    universe_n = 0;
    universe[universe_n++][0] = 0;
    for (int len = 1; len <= 3; len++) {
        int total = len == 1 ? 3 : len == 2 ? 9 : 27;
        for (int i = 0; i < total; i++) {
            int x = i;
            for (int j = len - 1; j >= 0; j--) {
                universe[universe_n][j] = al[x % 3];
                x /= 3;
            }
            universe[universe_n][len] = 0;
            universe_n++;
        }
    }
    qsort(universe, (size_t)universe_n, sizeof universe[0], cmp_str);
}

static cfdb_bytes ukey(int i)
{
    return cfdb_bytes_str(universe[i]);
}

/* Any short string over the alphabet plus \x00 and \xff edges, for bounds. */
static cfdb_bytes random_bound(char *buf)
{
    int r = (int)(rnd() % 10);
    if (r == 0) {
        buf[0] = 0;
        return cfdb_bytes_make(buf, 0);
    }
    if (r == 1) {
        buf[0] = (char)0xff;
        return cfdb_bytes_make(buf, 1);
    }
    int len = 1 + (int)(rnd() % 4);
    for (int i = 0; i < len; i++)
        buf[i] = "abc\0"[rnd() % (i == len - 1 ? 4 : 3)];
    return cfdb_bytes_make(buf, (size_t)len);
}

static int random_key_index(void)
{
    return (int)(rnd() % (uint64_t)universe_n);
}

static void random_value(uint8_t *buf, uint32_t *len)
{
    *len = (uint32_t)(rnd() % (MAXV + 1));
    for (uint32_t i = 0; i < *len; i++)
        buf[i] = (uint8_t)(rnd() % 4 == 0 ? 0 : rnd() % 3);
}

/* ---- reference queries ---- */

static const snapshot *snap_at(const snapshot *snaps, int nsnaps, int64_t version)
{
    const snapshot *best = NULL;
    for (int i = 0; i < nsnaps; i++)
        if (snaps[i].version <= version)
            best = &snaps[i];
    return best;
}

/* Visible keys of a snapshot in order. */
static int visible_keys(const snapshot *sn, int *out)
{
    int n = 0;
    for (int i = 0; i < universe_n; i++)
        if (sn->v[i].present)
            out[n++] = i;
    return n;
}

/* Resolves a selector over the whole database: "" before the first key,
 * "\xff\xff" past the last. */
static cfdb_bytes ref_resolve(const snapshot *sn, cfdb_mvcc_selector sel)
{
    int keys[NKEYS];
    int n = visible_keys(sn, keys);
    int base = -1;
    for (int i = 0; i < n; i++) {
        int c = cfdb_bytes_cmp(ukey(keys[i]), sel.key);
        if (c < 0 || (c == 0 && sel.or_equal))
            base = i;
    }
    int64_t t = (int64_t)base + sel.offset;
    if (t < 0)
        return cfdb_bytes_make("", 0);
    if (t >= n)
        return cfdb_bytes_make("\xff\xff", 2);
    return ukey(keys[t]);
}

typedef struct ref_range {
    int rows[NKEYS];
    int count;
    bool more;
} ref_range;

static void ref_read_range(const snapshot *sn, cfdb_bytes b, cfdb_bytes e, int limit, int bytes,
                           ref_range *out)
{
    int keys[NKEYS];
    int n = visible_keys(sn, keys);
    out->count = 0;
    int64_t budget = bytes;
    if (limit >= 0) {
        for (int i = 0; i < n && limit > 0 && budget > 0; i++) {
            cfdb_bytes k = ukey(keys[i]);
            if (cfdb_bytes_cmp(k, b) < 0 || cfdb_bytes_cmp(k, e) >= 0)
                continue;
            out->rows[out->count++] = keys[i];
            limit--;
            budget -= 32 + k.len + sn->v[keys[i]].len;
        }
    } else {
        for (int i = n - 1; i >= 0 && limit < 0 && budget > 0; i--) {
            cfdb_bytes k = ukey(keys[i]);
            if (cfdb_bytes_cmp(k, b) < 0 || cfdb_bytes_cmp(k, e) >= 0)
                continue;
            out->rows[out->count++] = keys[i];
            limit++;
            budget -= 32 + k.len + sn->v[keys[i]].len;
        }
    }
    out->more = limit == 0 || budget <= 0;
}

static void check_rows(const snapshot *sn, const ref_range *want, const cfdb_mvcc_range_result *got)
{
    if (want->count != (int)got->count || want->more != got->more)
        fprintf(stderr, "range mismatch: want %d rows more=%d got %zu more=%d\n", want->count,
                want->more, got->count, got->more);
    assert_int_equal(want->count, (int)got->count);
    assert_int_equal(want->more, got->more);
    for (int i = 0; i < want->count; i++) {
        const ref_value *rv = &sn->v[want->rows[i]];
        assert_true(cfdb_bytes_eq(got->rows[i].key, ukey(want->rows[i])));
        assert_true(cfdb_bytes_eq(got->rows[i].value, cfdb_bytes_make(rv->data, rv->len)));
    }
}

/* ---- shard maps: boundaries splitting ["", "\xff\xff") ---- */

static const char *const shard_bounds[] = { "", "ab", "b", "bab", "c", "cc" };
enum { NSHARDS = 6 };
static cfdb_bytes shard_begin(int i)
{
    return cfdb_bytes_str(shard_bounds[i]);
}
static cfdb_bytes shard_end(int i)
{
    return i + 1 < NSHARDS ? cfdb_bytes_str(shard_bounds[i + 1]) : cfdb_bytes_make("\xff\xff", 2);
}

/* The shard containing key, or the one before it when the selector is backward
 * (the client's locate with Reverse). */
static int shard_for(cfdb_mvcc_selector sel)
{
    bool backward = !sel.or_equal && sel.offset <= 0;
    for (int i = NSHARDS - 1; i >= 0; i--) {
        int c = cfdb_bytes_cmp(sel.key, shard_begin(i));
        if (backward ? c > 0 : c >= 0)
            return i;
    }
    return 0;
}

/* How much of the interesting ground the random runs covered. */
static int multi_round_walks, shard_answers, shard_refusals;

/* The client's getKey loop. */
static cfdb_bytes walk_selector(cfdb_mvcc_store *s, int64_t version, cfdb_mvcc_selector sel,
                                cfdb_arena *a)
{
    for (int rounds = 0; rounds < 200; rounds++) {
        if (cfdb_bytes_eq(sel.key, cfdb_bytes_make("\xff\xff", 2))) {
            if (sel.offset > 0)
                return sel.key;
            sel.or_equal = false;
        } else if (sel.key.len == 0 && sel.offset <= 0) {
            return sel.key;
        }
        int sh = shard_for(sel);
        cfdb_mvcc_selector out;
        assert_int_equal(cfdb_mvcc_get_key(s, version, shard_begin(sh), shard_end(sh), sel, a, &out), 0);
        if (out.or_equal && out.offset == 0) {
            multi_round_walks += rounds > 0;
            return out.key;
        }
        sel = out;
    }
    fail_msg("selector walk did not terminate");
    return sel.key;
}

static bool off_the_ends(cfdb_bytes k)
{
    return k.len == 0 || cfdb_bytes_eq(k, cfdb_bytes_make("\xff\xff", 2));
}

static cfdb_mvcc_selector random_selector(char *buf)
{
    cfdb_mvcc_selector sel;
    sel.key = random_bound(buf);
    sel.or_equal = rnd() % 2;
    int r = (int)(rnd() % 10);
    sel.offset = r < 6 ? (int32_t)(r % 2) : (int32_t)(rnd() % 13) - 6;
    return sel;
}

static void run_random(uint64_t seed, int commits, int window)
{
    rs = seed;
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    snapshot *snaps = calloc((size_t)commits + 1, sizeof *snaps);
    int nsnaps = 1; /* version 0: empty */
    int64_t version = 0;
    cfdb_arena a;
    cfdb_arena_init(&a);

    for (int c = 0; c < commits; c++) {
        version += 1 + (int64_t)(rnd() % 3);
        snapshot *sn = &snaps[nsnaps];
        *sn = snaps[nsnaps - 1];
        sn->version = version;
        cfdb_arena_reset(&a);

        int nm = (int)(rnd() % 6);
        cfdb_mutation ms[6];
        for (int i = 0; i < nm; i++) {
            int kind = (int)(rnd() % 10);
            int ki = random_key_index();
            uint8_t *vb = cfdb_arena_alloc(&a, MAXV + 1);
            uint32_t vl;
            random_value(vb, &vl);
            if (kind < 4) {
                ms[i] = (cfdb_mutation){ CFDB_MUT_SET_VALUE, ukey(ki), cfdb_bytes_make(vb, vl) };
            } else if (kind < 6) {
                char *b1 = cfdb_arena_alloc(&a, 8), *b2 = cfdb_arena_alloc(&a, 8);
                ms[i] = (cfdb_mutation){ CFDB_MUT_CLEAR_RANGE, random_bound(b1), random_bound(b2) };
            } else {
                static const int ops[] = { 2, 6, 7, 8, 9, 12, 13, 16, 17, 18, 19, 20 };
                int op = ops[rnd() % (sizeof ops / sizeof ops[0])];
                /* Compare-and-clear against the current value half of the time. */
                if (op == CFDB_MUT_COMPARE_AND_CLEAR && sn->v[ki].present && rnd() % 2) {
                    memcpy(vb, sn->v[ki].data, sn->v[ki].len);
                    vl = sn->v[ki].len;
                }
                ms[i] = (cfdb_mutation){ op, ukey(ki), cfdb_bytes_make(vb, vl) };
            }
            /* Model: apply to the copy. */
            const cfdb_mutation *m = &ms[i];
            if (m->type == CFDB_MUT_CLEAR_RANGE) {
                for (int k = 0; k < universe_n; k++)
                    if (cfdb_bytes_cmp(ukey(k), m->param1) >= 0 && cfdb_bytes_cmp(ukey(k), m->param2) < 0)
                        sn->v[k].present = false;
            } else {
                ref_value *rv = &sn->v[ki];
                cfdb_bytes nv = m->param2;
                bool present = true;
                if (m->type != CFDB_MUT_SET_VALUE) {
                    cfdb_bytes ex = cfdb_bytes_make(rv->data, rv->len);
                    assert_int_equal(cfdb_apply_atomic(m->type, rv->present ? &ex : NULL, m->param2, &a,
                                                       &nv, &present), 0);
                }
                if (present) {
                    uint8_t tmp[sizeof rv->data];
                    assert_true(nv.len <= sizeof tmp);
                    memcpy(tmp, nv.ptr, nv.len);
                    memcpy(rv->data, tmp, nv.len);
                    rv->len = (uint8_t)nv.len;
                }
                rv->present = present;
            }
        }
        /* Values can grow with AppendIfFits; keep them bounded for the model. */
        for (int k = 0; k < universe_n; k++)
            if (sn->v[k].present && sn->v[k].len > MAXV * 2) {
                sn->v[k].present = false;
            }
        assert_int_equal(cfdb_mvcc_apply(s, version, ms, (size_t)nm), 0);
        /* Mirror the model's bounding with a clear of the over-long keys. */
        for (int k = 0; k < universe_n; k++) {
            cfdb_bytes v;
            bool p;
            if (!sn->v[k].present && cfdb_mvcc_get(s, version, ukey(k), &v, &p) == 0 && p &&
                v.len > MAXV * 2) {
                char *end = cfdb_arena_alloc(&a, 5);
                memcpy(end, universe[k], strlen(universe[k]));
                end[strlen(universe[k])] = 0;
                cfdb_mutation clr = { CFDB_MUT_CLEAR_RANGE, ukey(k),
                                      cfdb_bytes_make(end, strlen(universe[k]) + 1) };
                assert_int_equal(cfdb_mvcc_apply(s, version, &clr, 1), 0);
            }
        }
        nsnaps++;

        if (window && rnd() % 4 == 0)
            cfdb_mvcc_forget_before(s, version - window);

        /* Queries at random readable versions. */
        int64_t oldest = cfdb_mvcc_oldest_version(s);
        for (int q = 0; q < 8; q++) {
            int64_t rv = oldest + (int64_t)(rnd() % (uint64_t)(version - oldest + 1));
            const snapshot *at = snap_at(snaps, nsnaps, rv);
            cfdb_arena_reset(&a);

            int ki = random_key_index();
            cfdb_bytes v;
            bool p;
            assert_int_equal(cfdb_mvcc_get(s, rv, ukey(ki), &v, &p), 0);
            assert_int_equal(p, at->v[ki].present);
            if (p)
                assert_true(cfdb_bytes_eq(v, cfdb_bytes_make(at->v[ki].data, at->v[ki].len)));

            char b1[8], b2[8];
            cfdb_bytes rb = random_bound(b1), re = random_bound(b2);
            int limit = (int)(rnd() % 8) + 1;
            if (rnd() % 2)
                limit = -limit;
            int bytes = 1 + (int)(rnd() % 200);
            ref_range want;
            ref_read_range(at, rb, re, limit, bytes, &want);
            cfdb_mvcc_range_result got;
            assert_int_equal(cfdb_mvcc_read_range(s, rv, rb, re, limit, bytes, &a, &got), 0);
            check_rows(at, &want, &got);

            /* Selector resolved across the shard map. */
            char sb[8];
            cfdb_mvcc_selector sel = random_selector(sb);
            cfdb_bytes want_key = ref_resolve(at, sel);
            cfdb_bytes got_key = walk_selector(s, rv, sel, &a);
            if (!cfdb_bytes_eq(want_key, got_key))
                fprintf(stderr, "selector (%.*s,%d,%d) at %lld: want '%.*s' got '%.*s'\n",
                        (int)sel.key.len, sel.key.ptr, sel.or_equal, sel.offset, (long long)rv,
                        (int)want_key.len, want_key.ptr, (int)got_key.len, got_key.ptr);
            assert_true(cfdb_bytes_eq(want_key, got_key));

            /* Range by selectors over one shard covering everything. */
            char sb2[8];
            cfdb_mvcc_selector bsel = random_selector(sb), esel = random_selector(sb2);
            cfdb_bytes kb = ref_resolve(at, bsel), ke = ref_resolve(at, esel);
            int whole = cfdb_mvcc_get_range(s, rv, cfdb_bytes_make("", 0),
                                            cfdb_bytes_make("\xff\xff", 2), bsel, esel, limit,
                                            bytes, &a, &got);
            if (whole) {
                /* Like FDB, a selector running off either end of the database is
                 * wrong_shard_server (the client then resolves it with GetKey). */
                assert_int_equal(whole, CFDB_ERR_WRONG_SHARD_SERVER);
                assert_true(off_the_ends(kb) || off_the_ends(ke));
            } else if (cfdb_bytes_cmp(kb, ke) >= 0) {
                assert_int_equal(got.count, 0);
                assert_false(got.more);
            } else {
                ref_read_range(at, kb, ke, limit, bytes, &want);
                check_rows(at, &want, &got);
            }
            /* And per shard: when a shard answers, it answers the clipped range. */
            int sh = shard_for(bsel);
            int rc = cfdb_mvcc_get_range(s, rv, shard_begin(sh), shard_end(sh), bsel, esel, limit,
                                         bytes, &a, &got);
            shard_answers += rc == 0;
            shard_refusals += rc != 0;
            if (rc == 0) {
                cfdb_bytes clip_e = cfdb_bytes_cmp(ke, shard_end(sh)) < 0 ? ke : shard_end(sh);
                if (cfdb_bytes_cmp(kb, clip_e) >= 0) {
                    assert_int_equal(got.count, 0);
                } else {
                    ref_read_range(at, kb, clip_e, limit, bytes, &want);
                    check_rows(at, &want, &got);
                }
            } else {
                assert_int_equal(rc, CFDB_ERR_WRONG_SHARD_SERVER);
            }

            /* Iterator walk matches the visible keys. */
            int keys[NKEYS];
            int n = visible_keys(at, keys);
            cfdb_mvcc_iter it;
            int idx = 0;
            for (cfdb_mvcc_iter_seek_ge(&it, s, rv, cfdb_bytes_make("", 0)); cfdb_mvcc_iter_valid(&it);
                 cfdb_mvcc_iter_next(&it))
                assert_true(idx < n && cfdb_bytes_eq(it.key, ukey(keys[idx++])));
            assert_int_equal(idx, n);
            idx = n;
            for (cfdb_mvcc_iter_seek_lt(&it, s, rv, cfdb_bytes_make("\xff", 1)); cfdb_mvcc_iter_valid(&it);
                 cfdb_mvcc_iter_prev(&it))
                assert_true(idx > 0 && cfdb_bytes_eq(it.key, ukey(keys[--idx])));
            assert_int_equal(idx, 0);
        }
        if (oldest > 0) {
            cfdb_bytes v;
            bool p;
            assert_int_equal(cfdb_mvcc_get(s, oldest - 1, ukey(0), &v, &p), CFDB_ERR_TRANSACTION_TOO_OLD);
        }
    }
    /* Forget everything but the latest: the store keeps only the visible keys. */
    cfdb_mvcc_forget_before(s, version);
    cfdb_mvcc_stats st;
    cfdb_mvcc_get_stats(s, &st);
    int keys[NKEYS];
    int n = visible_keys(&snaps[nsnaps - 1], keys);
    assert_int_equal(st.keys, (size_t)n);
    assert_int_equal(st.entries, (size_t)n);

    cfdb_arena_free(&a);
    free(snaps);
    cfdb_mvcc_destroy(s);
}

static void test_random_no_forgetting(void **state)
{
    (void)state;
    build_universe();
    for (uint64_t seed = 1; seed <= 10; seed++)
        run_random(seed * 0x9E3779B97F4A7C15ull, 400, 0);
}

static void test_random_with_forgetting(void **state)
{
    (void)state;
    build_universe();
    for (uint64_t seed = 1; seed <= 10; seed++)
        run_random(seed * 0xBF58476D1CE4E5B9ull + 7, 400, 1 + (int)(seed % 5) * 3);
    fprintf(stderr, "selector walks over several shards: %d; per-shard ranges answered %d, refused %d\n",
            multi_round_walks, shard_answers, shard_refusals);
    assert_true(multi_round_walks > 100 && shard_answers > 100 && shard_refusals > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_no_forgetting),
        cmocka_unit_test(test_random_with_forgetting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
