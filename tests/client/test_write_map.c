/* Write map (read-your-writes state): unit cases and a randomized comparison
 * against a plain sorted-map model that applies every operation directly. */
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
#include "key_selector.h"
#include "native_range.h"
#include "ryw_read.h"
#include "write_map.h"

#define B(s) cfdb_bytes_str(s)
static const uint8_t FFFF[2] = { 0xff, 0xff };
static const uint8_t FF[1] = { 0xff };
#define READ_VERSION 0x0000000100000000LL
#define COMMIT_VERSION 0x0000000100000005LL
#define BATCH_INDEX 3

/* ---------------- reference model: sorted array of owned key/values ---------------- */

typedef struct mkv {
    uint8_t k[24];
    uint32_t klen;
    uint8_t v[64];
    uint32_t vlen;
} mkv;

typedef struct model {
    mkv *items;
    size_t n, cap;
} model;

static int mk_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl)
{
    return cfdb_bytes_cmp(cfdb_bytes_make(a, al), cfdb_bytes_make(b, bl));
}

static size_t model_lb(const model *m, cfdb_bytes k)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (mk_cmp(m->items[mid].k, m->items[mid].klen, k.ptr, k.len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const mkv *model_get(const model *m, cfdb_bytes k)
{
    size_t i = model_lb(m, k);
    if (i < m->n && mk_cmp(m->items[i].k, m->items[i].klen, k.ptr, k.len) == 0)
        return &m->items[i];
    return NULL;
}

static void model_put(model *m, cfdb_bytes k, cfdb_bytes v)
{
    assert_true(k.len <= 24);
    if (v.len > 64)
        v.len = 64; /* values in tests stay small; keep the model bounded */
    size_t i = model_lb(m, k);
    if (!(i < m->n && mk_cmp(m->items[i].k, m->items[i].klen, k.ptr, k.len) == 0)) {
        if (m->n == m->cap) {
            m->cap = m->cap ? m->cap * 2 : 16;
            m->items = realloc(m->items, m->cap * sizeof(mkv));
        }
        if (m->n > i)
            memmove(&m->items[i + 1], &m->items[i], (m->n - i) * sizeof(mkv));
        m->n++;
        memcpy(m->items[i].k, k.ptr, k.len);
        m->items[i].klen = k.len;
    }
    memcpy(m->items[i].v, v.ptr, v.len);
    m->items[i].vlen = v.len;
}

static void model_clear(model *m, cfdb_bytes b, cfdb_bytes e)
{
    if (cfdb_bytes_cmp(b, e) >= 0)
        return;
    size_t i = model_lb(m, b), j = model_lb(m, e);
    if (i == j)
        return;
    memmove(&m->items[i], &m->items[j], (m->n - j) * sizeof(mkv));
    m->n -= j - i;
}

static void model_atomic(model *m, int type, cfdb_bytes k, cfdb_bytes operand)
{
    const mkv *cur = model_get(m, k);
    cfdb_bytes ex;
    if (cur)
        ex = cfdb_bytes_make(cur->v, cur->vlen);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_bytes out;
    bool present;
    assert_int_equal(cfdb_apply_atomic(type, cur ? &ex : NULL, operand, &a, &out, &present), 0);
    if (present) {
        uint8_t tmp[64];
        uint32_t l = out.len > 64 ? 64 : out.len;
        memcpy(tmp, out.ptr, l);
        model_put(m, k, cfdb_bytes_make(tmp, l));
    } else {
        uint8_t ka[25];
        memcpy(ka, k.ptr, k.len);
        ka[k.len] = 0;
        model_clear(m, k, cfdb_bytes_make(ka, k.len + 1));
    }
    cfdb_arena_free(&a);
}

static void model_copy(model *dst, const model *src)
{
    dst->n = src->n;
    dst->cap = src->n + 1;
    dst->items = malloc(dst->cap * sizeof(mkv));
    if (src->n)
        memcpy(dst->items, src->items, src->n * sizeof(mkv));
}

/* ---------------- random generation ---------------- */

static uint64_t rng_state = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static cfdb_bytes rand_key(uint8_t *buf)
{
    uint32_t len = 1 + rnd(3);
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (uint8_t)("abcd"[rnd(4)]);
    if (rnd(6) == 0)
        buf[len++] = 0; /* keys right after another key */
    return cfdb_bytes_make(buf, len);
}

static cfdb_bytes rand_val(uint8_t *buf, uint32_t fixed_len)
{
    uint32_t len = fixed_len ? fixed_len : rnd(5);
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (uint8_t)rnd(256);
    return cfdb_bytes_make(buf, len);
}

static const int atomic_types[] = { CFDB_MUT_ADD_VALUE, CFDB_MUT_OR, CFDB_MUT_XOR, CFDB_MUT_AND_V2,
                                    CFDB_MUT_MIN_V2, CFDB_MUT_MAX, CFDB_MUT_BYTE_MIN, CFDB_MUT_BYTE_MAX,
                                    CFDB_MUT_APPEND_IF_FITS, CFDB_MUT_COMPARE_AND_CLEAR, CFDB_MUT_AND,
                                    CFDB_MUT_MIN };

/* ---- range reads through the client's read-your-writes engine (ryw_read.c over
 * native_range.c), against `store` as a storage server holding one shard ["", "\xff\xff"):
 * it resolves selectors as findKey does (wrong_shard_server when a selector needs keys
 * outside the shard), and may answer with fewer rows than asked (more). Two system keys
 * above every test key stand for the ones every database holds. ---- */

typedef struct range_result {
    const cfdb_key_value *rows;
    size_t count;
    bool more;
} range_result;

static const char *const k_system_keys[] = { "\xff/a", "\xff/b" };

/* the i-th key of store + system keys */
static cfdb_bytes store_key(const model *store, size_t i)
{
    if (i < store->n)
        return cfdb_bytes_make(store->items[i].k, store->items[i].klen);
    return cfdb_bytes_str(k_system_keys[i - store->n]);
}

/* findKey inside the one shard: false for wrong_shard_server; *out = store->n + 2 means the
 * end of the shard */
static bool store_resolve(const model *store, cfdb_key_selector sel, size_t *out)
{
    size_t total = store->n + 2, first = 0;
    while (first < total && (sel.orEqual ? cfdb_bytes_cmp(store_key(store, first), sel.key) <= 0
                                         : cfdb_bytes_cmp(store_key(store, first), sel.key) < 0))
        first++;
    if (sel.offset > 0) {
        size_t want = (size_t)sel.offset;
        if (first + want - 1 < total) {
            *out = first + want - 1;
            return true;
        }
        *out = total;
        return first + want - 1 == total; /* firstGreaterOrEqual(shard end) */
    }
    size_t back = (size_t)(1 - sel.offset);
    if (back > first)
        return false;
    *out = first - back;
    return true;
}

static int run_range(cfdb_write_map *wm, const model *store, cfdb_bytes b, cfdb_bytes e, bool reverse,
                     cfdb_range_limits lim, cfdb_arena *out, range_result *res)
{
    cfdb_snap_cache cache;
    assert_int_equal(cfdb_snap_init(&cache, out), 0);
    cfdb_ryw_read r;
    cfdb_ryw_read_range(&r, &cache, wm, out, B("\xff"), cfdb_first_greater_or_equal(b), cfdb_first_greater_or_equal(e),
                        lim, reverse);
    cfdb_native_range nr;
    cfdb_key_value *rows = calloc(store->n + 2, sizeof *rows);
    int rc, guard = 0;
    while ((rc = cfdb_ryw_read_advance(&r)) == CFDB_RYW_NEED_READ) {
        cfdb_native_range_start(&nr, out, out, r.req_begin, r.req_end, r.req_limits, r.req_reverse);
        int st;
        while ((st = cfdb_native_range_next(&nr)) != CFDB_NR_DONE) {
            assert_true(++guard < 100000);
            if (st == CFDB_NR_NEED_KEYS) {
                size_t bi, ei;
                cfdb_bytes bk = store_resolve(store, nr.orig_begin, &bi) && bi < store->n + 2
                                    ? store_key(store, bi)
                                    : (nr.orig_begin.offset > 0 ? B("\xff\xff") : B(""));
                cfdb_bytes ek = store_resolve(store, nr.orig_end, &ei) && ei < store->n + 2
                                    ? store_key(store, ei)
                                    : (nr.orig_end.offset > 0 ? B("\xff\xff") : B(""));
                cfdb_native_range_keys(&nr, bk, ek);
                continue;
            }
            cfdb_native_range_located(&nr, B(""), B("\xff\xff"));
            size_t lo, hi;
            if (!store_resolve(store, nr.req_begin, &lo) || !store_resolve(store, nr.req_end, &hi)) {
                cfdb_native_range_wrong_shard(&nr);
                continue;
            }
            size_t avail = hi > lo ? hi - lo : 0;
            size_t limit = (size_t)(nr.req_limit < 0 ? -nr.req_limit : nr.req_limit);
            size_t take = avail < limit ? avail : limit;
            if (take > 1 && rnd(3) == 0)
                take = 1 + rnd((uint32_t)take); /* a server may stop early */
            for (size_t i = 0; i < take; i++) {
                size_t idx = nr.req_limit < 0 ? hi - 1 - i : lo + i;
                rows[i].key = store_key(store, idx);
                rows[i].value = idx < store->n ? cfdb_bytes_make(store->items[idx].v, store->items[idx].vlen)
                                               : B("sys");
            }
            assert_int_equal(cfdb_native_range_reply(&nr, rows, take, take < avail), 0);
        }
        nr.result.rows_in_cache_arena = true; /* copied into `out`, the cache's arena */
        cfdb_ryw_read_feed(&r, &nr.result);
    }
    free(rows);
    res->rows = r.rows;
    res->count = r.n;
    res->more = r.more;
    return rc;
}

static void check_range(cfdb_write_map *wm, const model *store, const model *view, cfdb_bytes b, cfdb_bytes e,
                        bool reverse, cfdb_range_limits lim, bool unreadable_ok)
{
    cfdb_arena out;
    cfdb_arena_init(&out);
    range_result it;
    int rc = run_range(wm, store, b, e, reverse, lim, &out, &it);
    if (unreadable_ok && rc == CFDB_ERR_ACCESSED_UNREADABLE) {
        cfdb_arena_free(&out);
        return;
    }
    assert_int_equal(rc, CFDB_RYW_DONE);
    /* expected rows */
    size_t lo = cfdb_bytes_cmp(b, e) < 0 ? model_lb(view, b) : 0;
    size_t hi = cfdb_bytes_cmp(b, e) < 0 ? model_lb(view, e) : 0;
    size_t total = hi - lo;
    assert_true(it.count <= total);
    for (size_t i = 0; i < it.count; i++) {
        const mkv *x = reverse ? &view->items[hi - 1 - i] : &view->items[lo + i];
        assert_true(cfdb_bytes_eq(it.rows[i].key, cfdb_bytes_make(x->k, x->klen)));
        assert_true(cfdb_bytes_eq(it.rows[i].value, cfdb_bytes_make(x->v, x->vlen)));
    }
    /* limits: exact row count when only rows are limited */
    cfdb_range_limits l = lim;
    size_t expect_full = 0;
    bool reached = false;
    for (size_t i = 0; i < total; i++) {
        if (l.rows == 0 || (l.bytes == 0 && l.min_rows == 0)) {
            reached = true;
            break;
        }
        const mkv *x = reverse ? &view->items[hi - 1 - i] : &view->items[lo + i];
        if (l.min_rows > 0)
            l.min_rows--;
        if (l.rows > 0)
            l.rows--;
        if (l.bytes >= 0) {
            int64_t nb = (int64_t)l.bytes - 8 - x->klen - x->vlen;
            l.bytes = nb < 0 ? 0 : (int32_t)nb;
        }
        expect_full++;
    }
    if (l.rows == 0 || (l.bytes == 0 && l.min_rows == 0))
        reached = true;
    if (lim.bytes < 0) {
        assert_int_equal(it.count, expect_full);
        assert_int_equal(it.more, reached);
    } else {
        /* byte-limited reads may stop early (with more) once they hold a row */
        assert_true(it.count <= expect_full);
        if (!it.more) {
            assert_int_equal(it.count, expect_full);
            assert_false(reached);
        } else if (!(it.count == expect_full && reached)) {
            assert_true(it.count >= 1); /* early stop */
        }
    }
    cfdb_arena_free(&out);
}

static void apply_mutations(model *m, const cfdb_mutation *muts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cfdb_mutation *x = &muts[i];
        if (x->type == CFDB_MUT_SET_VALUE)
            model_put(m, x->param1, x->param2);
        else if (x->type == CFDB_MUT_CLEAR_RANGE)
            model_clear(m, x->param1, x->param2);
        else
            model_atomic(m, x->type, x->param1, x->param2);
    }
}

/* The union of the model's written ranges, normalized, compared with the write map's. */
typedef struct rng_list {
    struct {
        uint8_t b[25], e[25];
        uint32_t bl, el;
    } r[512];
    size_t n;
} rng_list;

static void rl_add(rng_list *l, cfdb_bytes b, cfdb_bytes e)
{
    if (cfdb_bytes_cmp(b, e) >= 0 || l->n >= 512)
        return;
    memcpy(l->r[l->n].b, b.ptr, b.len);
    l->r[l->n].bl = b.len;
    memcpy(l->r[l->n].e, e.ptr, e.len);
    l->r[l->n].el = e.len;
    l->n++;
}

/* Is key k covered by the list? */
static bool rl_covers(const rng_list *l, cfdb_bytes k)
{
    for (size_t i = 0; i < l->n; i++)
        if (mk_cmp(l->r[i].b, l->r[i].bl, k.ptr, k.len) <= 0 && mk_cmp(k.ptr, k.len, l->r[i].e, l->r[i].el) < 0)
            return true;
    return false;
}

static void random_round(unsigned seed_round, bool stamps)
{
    cfdb_arena arena;
    cfdb_arena_init(&arena);
    cfdb_write_map wm;
    assert_int_equal(cfdb_write_map_init(&wm, &arena), 0);
    model store = { 0 }, view;
    uint8_t kb[16], kb2[16], vb[16];
    int nstore = (int)rnd(20);
    for (int i = 0; i < nstore; i++) {
        cfdb_bytes k = rand_key(kb);
        model_put(&store, k, rand_val(vb, 0));
    }
    model_copy(&view, &store);
    static rng_list conflicts;
    conflicts.n = 0;
    int nops = 1 + (int)rnd(40);
    for (int i = 0; i < nops; i++) {
        uint32_t what = rnd(10);
        bool conflict = rnd(4) != 0;
        cfdb_bytes k = rand_key(kb);
        uint8_t ka[16];
        memcpy(ka, k.ptr, k.len);
        ka[k.len] = 0;
        cfdb_bytes kafter = cfdb_bytes_make(ka, k.len + 1);
        if (what < 3) {
            cfdb_bytes v = rand_val(vb, 0);
            assert_int_equal(cfdb_write_map_set(&wm, k, v, conflict), 0);
            model_put(&view, k, v);
            if (conflict)
                rl_add(&conflicts, k, kafter);
        } else if (what < 4) {
            cfdb_bytes k2 = rand_key(kb2);
            cfdb_bytes b = cfdb_bytes_cmp(k, k2) <= 0 ? k : k2, e = cfdb_bytes_cmp(k, k2) <= 0 ? k2 : k;
            assert_int_equal(cfdb_write_map_clear(&wm, b, e, conflict), 0);
            model_clear(&view, b, e);
            if (conflict)
                rl_add(&conflicts, b, e);
        } else if (what < 5) {
            assert_int_equal(cfdb_write_map_clear_key(&wm, k, conflict), 0);
            model_clear(&view, k, kafter);
            if (conflict)
                rl_add(&conflicts, k, kafter);
        } else if (stamps && what == 5) {
            /* SetVersionstampedValue: 10-byte placeholder at offset 0 */
            uint8_t vv[14] = { 0 };
            vv[10] = 0;
            assert_int_equal(cfdb_write_map_atomic(&wm, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, k, cfdb_bytes_make(vv, 14),
                                                   conflict, READ_VERSION, cfdb_bytes_make(FF, 1)),
                             0);
            cfdb_mutation m = { CFDB_MUT_SET_VERSIONSTAMPED_VALUE, k, cfdb_bytes_make(vv, 14) };
            cfdb_arena t;
            cfdb_arena_init(&t);
            assert_int_equal(cfdb_transform_versionstamp_mutation(&m, COMMIT_VERSION, BATCH_INDEX, &t), 0);
            model_put(&view, m.param1, m.param2);
            cfdb_arena_free(&t);
            if (conflict)
                rl_add(&conflicts, k, kafter);
        } else if (stamps && what == 6) {
            /* SetVersionstampedKey: one letter, placeholder, offset 1 */
            uint8_t vk[1 + 10 + 4] = { (uint8_t)("abcd"[rnd(4)]), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
            cfdb_bytes v = rand_val(vb, 0);
            assert_int_equal(cfdb_write_map_atomic(&wm, CFDB_MUT_SET_VERSIONSTAMPED_KEY, cfdb_bytes_make(vk, 15), v,
                                                   conflict, READ_VERSION, cfdb_bytes_make(FF, 1)),
                             0);
            cfdb_mutation m = { CFDB_MUT_SET_VERSIONSTAMPED_KEY, cfdb_bytes_make(vk, 15), v };
            cfdb_arena t;
            cfdb_arena_init(&t);
            assert_int_equal(cfdb_transform_versionstamp_mutation(&m, COMMIT_VERSION, BATCH_INDEX, &t), 0);
            model_put(&view, m.param1, m.param2);
            cfdb_arena_free(&t);
        } else {
            int type = atomic_types[rnd(sizeof atomic_types / sizeof atomic_types[0])];
            cfdb_bytes v = rand_val(vb, rnd(2) ? 2 : 0);
            assert_int_equal(
                cfdb_write_map_atomic(&wm, type, k, v, conflict, 0, cfdb_bytes_make(FF, 1)), 0);
            int mt = type == CFDB_MUT_AND ? CFDB_MUT_AND_V2 : type == CFDB_MUT_MIN ? CFDB_MUT_MIN_V2 : type;
            model_atomic(&view, mt, k, v);
            if (conflict)
                rl_add(&conflicts, k, kafter);
        }
        /* point reads against the model */
        for (int q = 0; q < 3; q++) {
            cfdb_bytes rk = rand_key(kb2);
            const mkv *want = model_get(&view, rk);
            const mkv *base = model_get(&store, rk);
            cfdb_bytes val;
            cfdb_wm_lookup_kind kind = cfdb_write_map_lookup(&wm, rk, &val);
            if (stamps && kind == CFDB_WM_UNREADABLE)
                continue;
            switch (kind) {
            case CFDB_WM_UNMODIFIED:
                assert_true((want == NULL) == (base == NULL));
                if (want)
                    assert_true(cfdb_bytes_eq(cfdb_bytes_make(want->v, want->vlen),
                                              cfdb_bytes_make(base->v, base->vlen)));
                break;
            case CFDB_WM_VALUE:
                assert_non_null(want);
                assert_true(cfdb_bytes_eq(val, cfdb_bytes_make(want->v, want->vlen)));
                break;
            case CFDB_WM_ABSENT:
                assert_null(want);
                break;
            case CFDB_WM_DEPENDENT: {
                cfdb_bytes bv = base ? cfdb_bytes_make(base->v, base->vlen) : (cfdb_bytes){ 0 };
                cfdb_bytes out;
                bool present;
                assert_int_equal(cfdb_write_map_apply(&wm, rk, base ? &bv : NULL, &out, &present), 0);
                assert_int_equal(present, want != NULL);
                if (want)
                    assert_true(cfdb_bytes_eq(out, cfdb_bytes_make(want->v, want->vlen)));
                break;
            }
            default:
                fail_msg("unexpected lookup kind %d", kind);
            }
        }
    }
    /* range reads */
    for (int q = 0; q < 12; q++) {
        cfdb_bytes b = rand_key(kb), e = rand_key(kb2);
        if (rnd(5) == 0)
            b = (cfdb_bytes){ (const uint8_t *)"", 0 };
        if (rnd(5) == 0)
            e = cfdb_bytes_make(FF, 1);
        int32_t rows = rnd(3) ? (int32_t)(1 + rnd(6)) : -1;
        int32_t bytes = rnd(3) == 0 ? (int32_t)rnd(40) : -1;
        if (rows < 0 && bytes < 0 && rnd(2))
            rows = 3;
        cfdb_range_limits lim = cfdb_range_limits_make(rows, bytes);
        check_range(&wm, &store, &view, b, e, rnd(2) != 0, lim, stamps);
    }
    /* commit payload: applying it to storage gives the view */
    cfdb_arena out;
    cfdb_arena_init(&out);
    cfdb_mutation *muts;
    cfdb_key_range *wr;
    size_t nm, nw;
    assert_int_equal(cfdb_write_map_commit_data(&wm, &out, &muts, &nm, &wr, &nw), 0);
    model applied;
    model_copy(&applied, &store);
    cfdb_arena tr;
    cfdb_arena_init(&tr);
    for (size_t i = 0; i < nm; i++)
        assert_int_equal(cfdb_transform_versionstamp_mutation(&muts[i], COMMIT_VERSION, BATCH_INDEX, &tr), 0);
    apply_mutations(&applied, muts, nm);
    cfdb_arena_free(&tr);
    assert_int_equal(applied.n, view.n);
    for (size_t i = 0; i < view.n; i++) {
        assert_int_equal(mk_cmp(applied.items[i].k, applied.items[i].klen, view.items[i].k, view.items[i].klen), 0);
        assert_int_equal(mk_cmp(applied.items[i].v, applied.items[i].vlen, view.items[i].v, view.items[i].vlen), 0);
    }
    /* write conflicts: sorted, disjoint, non-touching, same coverage as the model */
    for (size_t i = 0; i < nw; i++) {
        assert_true(cfdb_bytes_cmp(wr[i].begin, wr[i].end) < 0);
        if (i && !stamps) /* flushes for versionstamped keys come first, uncoalesced, as in FDB */
            assert_true(cfdb_bytes_cmp(wr[i - 1].end, wr[i].begin) < 0);
        /* begin is covered; and the key just before end as well */
        assert_true(rl_covers(&conflicts, wr[i].begin));
    }
    cfdb_range_set all;
    cfdb_range_set_init(&all, &out);
    for (size_t j = 0; j < nw; j++)
        cfdb_range_set_add(&all, wr[j].begin, wr[j].end);
    for (size_t i = 0; i < conflicts.n; i++) {
        cfdb_bytes b = cfdb_bytes_make(conflicts.r[i].b, conflicts.r[i].bl);
        cfdb_bytes e = cfdb_bytes_make(conflicts.r[i].e, conflicts.r[i].el);
        cfdb_omap_node *c = cfdb_range_set_find(&all, b);
        assert_non_null(c);
        assert_true(cfdb_bytes_cmp(e, c->val.bytes) <= 0);
    }
    (void)seed_round;
    free(applied.items);
    free(store.items);
    free(view.items);
    cfdb_arena_free(&out);
    cfdb_write_map_destroy(&wm);
    cfdb_arena_free(&arena);
}

static void test_randomized(void **state)
{
    (void)state;
    for (unsigned r = 0; r < 3000; r++)
        random_round(r, false);
}

static void test_randomized_versionstamps(void **state)
{
    (void)state;
    for (unsigned r = 0; r < 3000; r++)
        random_round(r, true);
}

/* ---------------- unit cases ---------------- */

static void test_set_clear_lookup(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_write_map wm;
    cfdb_write_map_init(&wm, &a);
    assert_true(cfdb_write_map_is_empty(&wm));
    cfdb_bytes v;
    assert_int_equal(cfdb_write_map_lookup(&wm, B("a"), &v), CFDB_WM_UNMODIFIED);
    cfdb_write_map_set(&wm, B("a"), B("1"), true);
    assert_false(cfdb_write_map_is_empty(&wm));
    assert_int_equal(cfdb_write_map_lookup(&wm, B("a"), &v), CFDB_WM_VALUE);
    assert_true(cfdb_bytes_eq(v, B("1")));
    cfdb_write_map_clear(&wm, B("a"), B("c"), true);
    assert_int_equal(cfdb_write_map_lookup(&wm, B("a"), &v), CFDB_WM_ABSENT);
    assert_int_equal(cfdb_write_map_lookup(&wm, B("b"), &v), CFDB_WM_ABSENT);
    assert_int_equal(cfdb_write_map_lookup(&wm, B("c"), &v), CFDB_WM_UNMODIFIED);
    /* add on cleared key folds against "absent" */
    uint8_t one[2] = { 1, 0 };
    cfdb_write_map_atomic(&wm, CFDB_MUT_ADD_VALUE, B("b"), cfdb_bytes_make(one, 2), true, 0, B("\xff"));
    assert_int_equal(cfdb_write_map_lookup(&wm, B("b"), &v), CFDB_WM_VALUE);
    assert_true(cfdb_bytes_eq(v, cfdb_bytes_make(one, 2)));
    /* add on an unknown key stays dependent */
    cfdb_write_map_atomic(&wm, CFDB_MUT_ADD_VALUE, B("d"), cfdb_bytes_make(one, 2), true, 0, B("\xff"));
    cfdb_write_map_atomic(&wm, CFDB_MUT_ADD_VALUE, B("d"), cfdb_bytes_make(one, 2), true, 0, B("\xff"));
    assert_int_equal(cfdb_write_map_lookup(&wm, B("d"), &v), CFDB_WM_DEPENDENT);
    const cfdb_wm_entry *e = cfdb_write_map_entry(&wm, B("d"));
    assert_int_equal(e->count, 1); /* same-length adds coalesce */
    uint8_t base[2] = { 5, 0 }, two_plus_five[2] = { 7, 0 };
    cfdb_bytes bb = cfdb_bytes_make(base, 2), out;
    bool present;
    assert_int_equal(cfdb_write_map_apply(&wm, B("d"), &bb, &out, &present), 0);
    assert_true(present);
    assert_true(cfdb_bytes_eq(out, cfdb_bytes_make(two_plus_five, 2)));
    /* different-length adds stack */
    uint8_t one4[4] = { 1, 0, 0, 0 };
    cfdb_write_map_atomic(&wm, CFDB_MUT_ADD_VALUE, B("d"), cfdb_bytes_make(one4, 4), true, 0, B("\xff"));
    assert_int_equal(cfdb_write_map_entry(&wm, B("d"))->count, 2);
    /* a different atomic type stacks too; a set replaces the stack */
    cfdb_write_map_atomic(&wm, CFDB_MUT_OR, B("d"), cfdb_bytes_make(one4, 4), true, 0, B("\xff"));
    assert_int_equal(cfdb_write_map_entry(&wm, B("d"))->count, 3);
    cfdb_write_map_set(&wm, B("d"), B("x"), true);
    assert_int_equal(cfdb_write_map_entry(&wm, B("d"))->count, 1);
    assert_int_equal(cfdb_write_map_atomic(&wm, CFDB_MUT_SET_VALUE, B("q"), B("x"), true, 0, B("\xff")),
                     CFDB_ERR_INVALID_MUTATION_TYPE);
    cfdb_write_map_destroy(&wm);
    cfdb_arena_free(&a);
}

static void test_commit_order(void **state)
{
    (void)state;
    cfdb_arena a, o;
    cfdb_arena_init(&a);
    cfdb_arena_init(&o);
    cfdb_write_map wm;
    cfdb_write_map_init(&wm, &a);
    cfdb_write_map_set(&wm, B("m"), B("1"), true);
    cfdb_write_map_clear(&wm, B("a"), B("z"), true);
    cfdb_write_map_set(&wm, B("k"), B("2"), true);
    cfdb_write_map_clear_key(&wm, B("p"), false);
    cfdb_write_map_atomic(&wm, CFDB_MUT_AND, B("zz"), B("\x0f"), false, 0, B("\xff"));
    cfdb_mutation *m;
    cfdb_key_range *w;
    size_t nm, nw;
    assert_int_equal(cfdb_write_map_commit_data(&wm, &o, &m, &nm, &w, &nw), 0);
    /* clears first, split around "k"; then k; then zz (AndV2) */
    assert_int_equal(nm, 4);
    assert_int_equal(m[0].type, CFDB_MUT_CLEAR_RANGE);
    assert_true(cfdb_bytes_eq(m[0].param1, B("a")) && cfdb_bytes_eq(m[0].param2, B("k")));
    assert_int_equal(m[1].type, CFDB_MUT_CLEAR_RANGE);
    assert_true(cfdb_bytes_eq(m[1].param1, cfdb_bytes_make("k\0", 2)) && cfdb_bytes_eq(m[1].param2, B("z")));
    assert_int_equal(m[2].type, CFDB_MUT_SET_VALUE);
    assert_true(cfdb_bytes_eq(m[2].param1, B("k")));
    assert_int_equal(m[3].type, CFDB_MUT_AND_V2);
    assert_int_equal(nw, 1);
    assert_true(cfdb_bytes_eq(w[0].begin, B("a")) && cfdb_bytes_eq(w[0].end, B("z")));
    cfdb_write_map_destroy(&wm);
    cfdb_arena_free(&a);
    cfdb_arena_free(&o);
}

static void test_versionstamps(void **state)
{
    (void)state;
    cfdb_arena a, o;
    cfdb_arena_init(&a);
    cfdb_arena_init(&o);
    cfdb_write_map wm;
    cfdb_write_map_init(&wm, &a);
    /* key "p" + 10 placeholder bytes + "s", offset 1 */
    uint8_t vk[1 + 10 + 1 + 4] = { 'p', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 's', 1, 0, 0, 0 };
    cfdb_write_map_set(&wm, B("p\x05"), B("inside"), true);
    cfdb_write_map_set(&wm, B("a"), B("outside"), true);
    assert_int_equal(cfdb_write_map_atomic(&wm, CFDB_MUT_SET_VERSIONSTAMPED_KEY, cfdb_bytes_make(vk, sizeof vk),
                                           B("v"), true, 0x0102030405060708LL, cfdb_bytes_make(FF, 1)),
                     0);
    /* the range of stamped keys is unreadable; "a" is not */
    cfdb_bytes v;
    assert_int_equal(cfdb_write_map_lookup(&wm, B("p\x05"), &v), CFDB_WM_UNREADABLE);
    assert_int_equal(cfdb_write_map_lookup(&wm, B("a"), &v), CFDB_WM_VALUE);
    cfdb_arena out;
    cfdb_arena_init(&out);
    range_result it;
    model empty = { 0 };
    assert_int_equal(run_range(&wm, &empty, B("p"), B("q"), false, cfdb_range_limits_make(-1, -1), &out, &it),
                     CFDB_ERR_ACCESSED_UNREADABLE);
    assert_int_equal(run_range(&wm, &empty, B(""), B("b"), false, cfdb_range_limits_make(-1, -1), &out, &it),
                     CFDB_RYW_DONE);
    assert_int_equal(it.count, 1);
    cfdb_arena_free(&out);
    cfdb_mutation *m;
    cfdb_key_range *w;
    size_t nm, nw;
    assert_int_equal(cfdb_write_map_commit_data(&wm, &o, &m, &nm, &w, &nw), 0);
    /* p\x01 was flushed early (it lies in the stamp range), then a, then the stamped key */
    assert_int_equal(nm, 3);
    assert_true(cfdb_bytes_eq(m[0].param1, B("p\x05")));
    assert_true(cfdb_bytes_eq(m[1].param1, B("a")));
    assert_int_equal(m[2].type, CFDB_MUT_SET_VERSIONSTAMPED_KEY);
    assert_int_equal(m[2].param1.len, sizeof vk);
    assert_int_equal(m[2].param1.ptr[1], 0x01); /* minimum stamp from the read version */
    assert_int_equal(m[2].param1.ptr[8], 0x08);
    /* conflicts: p\x01 (flushed) then a; nothing for the stamped key */
    assert_int_equal(nw, 2);
    assert_true(cfdb_bytes_eq(w[0].begin, B("p\x05")));
    assert_true(cfdb_bytes_eq(w[1].begin, B("a")));
    /* bad offsets */
    uint8_t bad[6] = { 'x', 'y', 9, 0, 0, 0 };
    assert_int_equal(cfdb_write_map_atomic(&wm, CFDB_MUT_SET_VERSIONSTAMPED_KEY, cfdb_bytes_make(bad, 6), B("v"),
                                           true, 0, cfdb_bytes_make(FF, 1)),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_write_map_atomic(&wm, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, B("k"), cfdb_bytes_make(bad, 6),
                                           true, 0, cfdb_bytes_make(FF, 1)),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* versionstamped value: key unreadable until cleared */
    uint8_t vv[14] = { 0 };
    assert_int_equal(cfdb_write_map_atomic(&wm, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, B("k"), cfdb_bytes_make(vv, 14),
                                           true, 0, cfdb_bytes_make(FF, 1)),
                     0);
    assert_int_equal(cfdb_write_map_lookup(&wm, B("k"), &v), CFDB_WM_UNREADABLE);
    cfdb_write_map_clear_key(&wm, B("k"), true);
    assert_int_equal(cfdb_write_map_lookup(&wm, B("k"), &v), CFDB_WM_ABSENT);
    (void)FFFF;
    cfdb_write_map_destroy(&wm);
    cfdb_arena_free(&a);
    cfdb_arena_free(&o);
}

static void test_many_writes(void **state)
{
    (void)state;
    cfdb_arena a, o;
    cfdb_arena_init(&a);
    cfdb_arena_init(&o);
    cfdb_write_map wm;
    cfdb_write_map_init(&wm, &a);
    char k[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(k, sizeof k, "key%08d", (i * 7919) % 100000);
        assert_int_equal(cfdb_write_map_set(&wm, cfdb_bytes_make(k, (size_t)n), B("v"), true), 0);
    }
    cfdb_mutation *m;
    cfdb_key_range *w;
    size_t nm, nw;
    assert_int_equal(cfdb_write_map_commit_data(&wm, &o, &m, &nm, &w, &nw), 0);
    assert_int_equal(nm, 100000);
    for (size_t i = 1; i < nm; i++)
        assert_true(cfdb_bytes_cmp(m[i - 1].param1, m[i].param1) < 0);
    cfdb_write_map_destroy(&wm);
    cfdb_arena_free(&a);
    cfdb_arena_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_clear_lookup),
        cmocka_unit_test(test_commit_order),
        cmocka_unit_test(test_versionstamps),
        cmocka_unit_test(test_many_writes),
        cmocka_unit_test(test_randomized),
        cmocka_unit_test(test_randomized_versionstamps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
