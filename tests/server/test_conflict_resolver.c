/* Resolver: history conflicts, too-old, intra-batch order, reported indices,
 * half-open boundaries, forgetting, and a randomized check against a naive log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "conflict_resolver.h"

#define S(s) cfdb_bytes_str(s)
#define R(b, e) ((cfdb_conflict_range){ S(b), S(e) })

static cfdb_conflict_range point(const char *k)
{
    /* [k, k + "\0"): the key itself. */
    static char buf[64][16];
    static int next;
    char *p = buf[next++ % 64];
    size_t n = strlen(k);
    memcpy(p, k, n);
    p[n] = 0;
    return (cfdb_conflict_range){ S(k), cfdb_bytes_make(p, n + 1) };
}

typedef struct txn_spec {
    int64_t snapshot;
    cfdb_conflict_range reads[8];
    size_t nr;
    cfdb_conflict_range writes[8];
    size_t nw;
    bool report;
} txn_spec;

/* Resolves the batch and returns statuses in st[]; indices of txn 0..n-1 in res[]. */
static void resolve(cfdb_resolver *r, int64_t version, txn_spec *specs, size_t n, cfdb_arena *a,
                    cfdb_resolver_result *res)
{
    cfdb_resolver_txn txns[16];
    for (size_t i = 0; i < n; i++)
        txns[i] = (cfdb_resolver_txn){ specs[i].snapshot, specs[i].reads, specs[i].nr,
                                       specs[i].writes, specs[i].nw, specs[i].report };
    assert_int_equal(cfdb_resolver_resolve(r, version, txns, n, a, res), 0);
}

static int status1(cfdb_resolver *r, int64_t version, txn_spec spec)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_resolver_result res;
    resolve(r, version, &spec, 1, &a, &res);
    cfdb_arena_free(&a);
    return res.status;
}

static void test_history_conflicts(void **state)
{
    (void)state;
    cfdb_resolver *r = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    txn_spec w = { .snapshot = 50, .writes = { point("k") }, .nw = 1 };
    assert_int_equal(status1(r, 100, w), CFDB_RESOLVE_COMMITTED);
    /* Read before the write's version: conflict. At or after: fine. */
    txn_spec rd = { .snapshot = 99, .reads = { point("k") }, .nr = 1, .writes = { point("z") }, .nw = 1 };
    assert_int_equal(status1(r, 200, rd), CFDB_RESOLVE_CONFLICT);
    rd.snapshot = 100;
    assert_int_equal(status1(r, 201, rd), CFDB_RESOLVE_COMMITTED);
    /* The conflicting transaction's write of z was not recorded... */
    txn_spec rz = { .snapshot = 150, .reads = { point("z") }, .nr = 1 };
    /* ...but the committed one's (at 201) was. */
    assert_int_equal(status1(r, 300, rz), CFDB_RESOLVE_CONFLICT);
    rz.snapshot = 201;
    assert_int_equal(status1(r, 301, rz), CFDB_RESOLVE_COMMITTED);
    /* Read-only, no writes, no reads: always commit. */
    txn_spec empty = { .snapshot = 1 };
    assert_int_equal(status1(r, 302, empty), CFDB_RESOLVE_COMMITTED);
    /* Versions may not go backwards. */
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_resolver_result res;
    cfdb_resolver_txn t = { 0 };
    assert_int_equal(cfdb_resolver_resolve(r, 301, &t, 1, &a, &res), CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_arena_free(&a);
    cfdb_resolver_destroy(r);
}

static void test_half_open_boundaries(void **state)
{
    (void)state;
    cfdb_resolver *r = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    txn_spec w = { .snapshot = 1, .writes = { R("b", "d") }, .nw = 1 };
    assert_int_equal(status1(r, 100, w), CFDB_RESOLVE_COMMITTED);
    struct {
        const char *b, *e;
        int want;
    } cases[] = {
        { "a", "b", CFDB_RESOLVE_COMMITTED },   /* ends where the write begins */
        { "d", "e", CFDB_RESOLVE_COMMITTED },   /* begins where the write ends */
        { "a", "b\x00", CFDB_RESOLVE_CONFLICT }, /* includes b */
        { "c", "c\x00", CFDB_RESOLVE_CONFLICT },
        { "c\xff", "d", CFDB_RESOLVE_CONFLICT },
        { "a", "z", CFDB_RESOLVE_CONFLICT },
        { "c", "c", CFDB_RESOLVE_COMMITTED },   /* empty read range */
        { "c", "a", CFDB_RESOLVE_COMMITTED },   /* inverted */
        { "", "\xff", CFDB_RESOLVE_CONFLICT },
    };
    int64_t v = 200;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t elen = strlen(cases[i].e) + (i == 2 || i == 3 ? 1 : 0);
        txn_spec t = { .snapshot = 50, .reads = { { S(cases[i].b), cfdb_bytes_make(cases[i].e, elen) } }, .nr = 1 };
        assert_int_equal(status1(r, v++, t), cases[i].want);
    }
    /* The empty key and the write at the very start. */
    txn_spec w2 = { .snapshot = 1, .writes = { R("", "a") }, .nw = 1 };
    assert_int_equal(status1(r, 300, w2), CFDB_RESOLVE_COMMITTED);
    txn_spec t2 = { .snapshot = 250, .reads = { point("") }, .nr = 1 };
    assert_int_equal(status1(r, 301, t2), CFDB_RESOLVE_CONFLICT);
    txn_spec t3 = { .snapshot = 250, .reads = { R("a", "b") }, .nr = 1 };
    assert_int_equal(status1(r, 302, t3), CFDB_RESOLVE_COMMITTED);
    cfdb_resolver_destroy(r);
}

static void test_too_old(void **state)
{
    (void)state;
    cfdb_resolver *r = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    const int64_t C = 10000000;
    txn_spec t = { .snapshot = C - 5000000 - 1, .reads = { point("a") }, .nr = 1, .writes = { point("a") }, .nw = 1 };
    assert_int_equal(status1(r, C, t), CFDB_RESOLVE_TOO_OLD);
    t.snapshot = C - 5000000 + 1; /* (the next batch is at C + 1) */
    assert_int_equal(status1(r, C + 1, t), CFDB_RESOLVE_COMMITTED);
    /* Write-only transactions are never too old. */
    txn_spec wo = { .snapshot = 1, .writes = { point("b") }, .nw = 1 };
    assert_int_equal(status1(r, C + 2, wo), CFDB_RESOLVE_COMMITTED);
    /* A too-old transaction's writes are dropped. */
    txn_spec old = { .snapshot = 2, .reads = { point("x") }, .nr = 1, .writes = { point("c") }, .nw = 1 };
    assert_int_equal(status1(r, C + 3, old), CFDB_RESOLVE_TOO_OLD);
    txn_spec rc = { .snapshot = C, .reads = { point("c") }, .nr = 1 };
    assert_int_equal(status1(r, C + 4, rc), CFDB_RESOLVE_COMMITTED);
    assert_int_equal(cfdb_resolver_oldest_version(r), C + 4 - 5000000);
    cfdb_resolver_destroy(r);
}

static void test_intra_batch(void **state)
{
    (void)state;
    cfdb_resolver *r = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_resolver_result res[4];
    /* Earlier writer, later reader: the reader conflicts. */
    txn_spec b1[] = {
        { .snapshot = 10, .writes = { point("a") }, .nw = 1 },
        { .snapshot = 10, .reads = { point("a") }, .nr = 1, .writes = { point("b") }, .nw = 1 },
        /* reads b, written by a conflicting transaction: fine */
        { .snapshot = 10, .reads = { point("b") }, .nr = 1 },
    };
    resolve(r, 100, b1, 3, &a, res);
    assert_int_equal(res[0].status, CFDB_RESOLVE_COMMITTED);
    assert_int_equal(res[1].status, CFDB_RESOLVE_CONFLICT);
    assert_int_equal(res[2].status, CFDB_RESOLVE_COMMITTED);
    /* Later writer, earlier reader: both commit (only earlier writes count). */
    txn_spec b2[] = {
        { .snapshot = 100, .reads = { point("q") }, .nr = 1, .writes = { point("r") }, .nw = 1 },
        { .snapshot = 100, .writes = { point("q") }, .nw = 1 },
    };
    resolve(r, 200, b2, 2, &a, res);
    assert_int_equal(res[0].status, CFDB_RESOLVE_COMMITTED);
    assert_int_equal(res[1].status, CFDB_RESOLVE_COMMITTED);
    /* A transaction conflicting with history does not shadow later ones. */
    txn_spec b3[] = {
        { .snapshot = 150, .reads = { point("q") }, .nr = 1, .writes = { point("s") }, .nw = 1 },
        { .snapshot = 150, .reads = { point("s") }, .nr = 1, .writes = { point("t") }, .nw = 1 },
        { .snapshot = 150, .reads = { point("t") }, .nr = 1 },
        /* Self read-write on the same key in one transaction is no conflict. */
        { .snapshot = 200, .reads = { point("u") }, .nr = 1, .writes = { point("u") }, .nw = 1 },
    };
    resolve(r, 300, b3, 4, &a, res);
    assert_int_equal(res[0].status, CFDB_RESOLVE_CONFLICT);
    assert_int_equal(res[1].status, CFDB_RESOLVE_COMMITTED);
    assert_int_equal(res[2].status, CFDB_RESOLVE_CONFLICT);
    assert_int_equal(res[3].status, CFDB_RESOLVE_COMMITTED);
    /* The batch's writes are history at 300 for the next batch. */
    txn_spec n1 = { .snapshot = 299, .reads = { point("t") }, .nr = 1 };
    assert_int_equal(status1(r, 400, n1), CFDB_RESOLVE_CONFLICT);
    n1.snapshot = 300;
    assert_int_equal(status1(r, 401, n1), CFDB_RESOLVE_COMMITTED);
    cfdb_arena_free(&a);
    cfdb_resolver_destroy(r);
}

static void test_conflicting_indices(void **state)
{
    (void)state;
    cfdb_resolver *r = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_resolver_result res[3];
    txn_spec w = { .snapshot = 1, .writes = { point("h1"), point("h3") }, .nw = 2 };
    assert_int_equal(status1(r, 100, w), CFDB_RESOLVE_COMMITTED);

    /* History: every conflicting range is reported. */
    txn_spec t[] = {
        { .snapshot = 50, .reads = { point("h0"), point("h1"), point("h2"), R("h3", "h4") }, .nr = 4,
          .report = true },
        { .snapshot = 50, .reads = { point("h0"), point("h1"), point("h2"), R("h3", "h4") }, .nr = 4 },
    };
    resolve(r, 200, t, 2, &a, res);
    assert_int_equal(res[0].status, CFDB_RESOLVE_CONFLICT);
    assert_int_equal(res[0].conflicting_count, 2);
    assert_int_equal(res[0].conflicting[0], 1);
    assert_int_equal(res[0].conflicting[1], 3);
    assert_int_equal(res[1].status, CFDB_RESOLVE_CONFLICT);
    assert_int_equal(res[1].conflicting_count, 0); /* not asked for */

    /* Intra-batch: only the first conflicting range. */
    txn_spec t2[] = {
        { .snapshot = 200, .writes = { point("i2"), point("i3") }, .nw = 2 },
        { .snapshot = 200, .reads = { point("i0"), point("i1"), point("i2"), point("i3") }, .nr = 4,
          .report = true },
        { .snapshot = 200, .reads = { point("i9") }, .nr = 1, .report = true },
    };
    resolve(r, 300, t2, 3, &a, res);
    assert_int_equal(res[1].status, CFDB_RESOLVE_CONFLICT);
    assert_int_equal(res[1].conflicting_count, 1);
    assert_int_equal(res[1].conflicting[0], 2);
    assert_int_equal(res[2].status, CFDB_RESOLVE_COMMITTED);
    assert_int_equal(res[2].conflicting_count, 0);

    /* History hit plus intra-batch hit: history ranges only (the batch check is skipped). */
    txn_spec t3[] = {
        { .snapshot = 300, .writes = { point("j1") }, .nw = 1 },
        { .snapshot = 250, .reads = { point("j1"), point("i2") }, .nr = 2, .report = true },
    };
    resolve(r, 400, t3, 2, &a, res);
    assert_int_equal(res[1].status, CFDB_RESOLVE_CONFLICT);
    assert_int_equal(res[1].conflicting_count, 1);
    assert_int_equal(res[1].conflicting[0], 1);
    cfdb_arena_free(&a);
    cfdb_resolver_destroy(r);
}

/* Old history gets merged away as batches move on. */
static void test_forgetting(void **state)
{
    (void)state;
    cfdb_resolver *r = cfdb_resolver_create(1000);
    cfdb_arena a;
    cfdb_arena_init(&a);
    int64_t v = 1;
    char keys[100][16];
    for (int b = 0; b < 100; b++) {
        txn_spec t = { .snapshot = v, .nw = 0 };
        for (int i = 0; i < 8; i++) {
            snprintf(keys[(b * 8 + i) % 100], 16, "key%05d", b * 8 + i);
            t.writes[t.nw++] = point(keys[(b * 8 + i) % 100]);
        }
        v += 10;
        assert_int_equal(status1(r, v, t), CFDB_RESOLVE_COMMITTED);
    }
    size_t before = cfdb_resolver_history_size(r);
    assert_true(before >= 800);
    /* Move far past the window with small batches: old boundaries disappear. */
    for (int b = 0; b < 2000; b++) {
        txn_spec t = { .snapshot = v, .writes = { point("zz") }, .nw = 1 };
        v += 2000;
        assert_int_equal(status1(r, v, t), CFDB_RESOLVE_COMMITTED);
    }
    size_t after = cfdb_resolver_history_size(r);
    assert_true(after < 10);
    /* And conflicts still work on the surviving history. */
    txn_spec rd = { .snapshot = v - 1, .reads = { point("zz") }, .nr = 1 };
    assert_int_equal(status1(r, v + 1, rd), CFDB_RESOLVE_CONFLICT);
    cfdb_arena_free(&a);
    cfdb_resolver_destroy(r);
}

/* ---- randomized: against a log of every recorded write ---- */

typedef struct logged_write {
    char b[4], e[4];
    size_t bl, el;
    int64_t version;
} logged_write;

static uint64_t rs = 0xdeadbeefcafef00dull;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static void random_range(char *b, size_t *bl, char *e, size_t *el)
{
    *bl = rnd() % 4;
    for (size_t i = 0; i < *bl; i++)
        b[i] = "abcd"[rnd() % 4];
    if (rnd() % 2) {
        memcpy(e, b, *bl);
        e[*bl] = 0;
        *el = *bl + 1; /* single key */
    } else {
        *el = rnd() % 4;
        for (size_t i = 0; i < *el; i++)
            e[i] = "abcd"[rnd() % 4];
    }
}

static bool intersects(cfdb_bytes rb, cfdb_bytes re, cfdb_bytes wb, cfdb_bytes we)
{
    return cfdb_bytes_cmp(rb, re) < 0 && cfdb_bytes_cmp(wb, we) < 0 && cfdb_bytes_cmp(rb, we) < 0 &&
           cfdb_bytes_cmp(wb, re) < 0;
}

static void test_random_against_log(void **state)
{
    (void)state;
    const int64_t window = 50;
    cfdb_resolver *r = cfdb_resolver_create(window);
    size_t cap = 200000, nlog = 0;
    logged_write *log = malloc(cap * sizeof *log);
    cfdb_arena a;
    cfdb_arena_init(&a);
    int64_t v = 100;
    for (int batch = 0; batch < 3000; batch++) {
        v += 1 + (int64_t)(rnd() % 10);
        cfdb_arena_reset(&a);
        size_t n = 1 + rnd() % 6;
        cfdb_resolver_txn txns[6];
        cfdb_conflict_range ranges[6][8];
        char keybuf[6][8][2][4];
        for (size_t t = 0; t < n; t++) {
            size_t nr = rnd() % 4, nw = rnd() % 4;
            for (size_t i = 0; i < nr + nw; i++) {
                size_t bl, el;
                random_range(keybuf[t][i][0], &bl, keybuf[t][i][1], &el);
                ranges[t][i] = (cfdb_conflict_range){ cfdb_bytes_make(keybuf[t][i][0], bl),
                                                      cfdb_bytes_make(keybuf[t][i][1], el) };
            }
            txns[t] = (cfdb_resolver_txn){ v - 1 - (int64_t)(rnd() % (window + 10)), ranges[t], nr,
                                           ranges[t] + nr, nw, rnd() % 2 == 0 };
        }
        cfdb_resolver_result res[6];
        assert_int_equal(cfdb_resolver_resolve(r, v, txns, n, &a, res), 0);
        assert_true(cfdb_resolver_consistent(r));

        /* Naive model. */
        int want[6];
        int32_t want_idx[6][8];
        size_t want_n[6];
        bool committed[6];
        for (size_t t = 0; t < n; t++) {
            const cfdb_resolver_txn *tx = &txns[t];
            want_n[t] = 0;
            committed[t] = false;
            if (tx->read_count && tx->read_snapshot < v - window) {
                want[t] = CFDB_RESOLVE_TOO_OLD;
                continue;
            }
            want[t] = CFDB_RESOLVE_COMMITTED;
            for (size_t i = 0; i < tx->read_count; i++) {
                bool hit = false;
                for (size_t w = 0; w < nlog && !hit; w++)
                    hit = log[w].version > tx->read_snapshot &&
                          intersects(tx->read_ranges[i].begin, tx->read_ranges[i].end,
                                     cfdb_bytes_make(log[w].b, log[w].bl), cfdb_bytes_make(log[w].e, log[w].el));
                if (hit) {
                    want[t] = CFDB_RESOLVE_CONFLICT;
                    want_idx[t][want_n[t]++] = (int32_t)i;
                }
            }
        }
        for (size_t t = 0; t < n; t++) {
            const cfdb_resolver_txn *tx = &txns[t];
            if (want[t] != CFDB_RESOLVE_COMMITTED)
                continue;
            for (size_t i = 0; i < tx->read_count && want[t] == CFDB_RESOLVE_COMMITTED; i++)
                for (size_t u = 0; u < t; u++) {
                    if (!committed[u])
                        continue;
                    for (size_t w = 0; w < txns[u].write_count; w++)
                        if (intersects(tx->read_ranges[i].begin, tx->read_ranges[i].end,
                                       txns[u].write_ranges[w].begin, txns[u].write_ranges[w].end)) {
                            want[t] = CFDB_RESOLVE_CONFLICT;
                            want_idx[t][0] = (int32_t)i;
                            want_n[t] = 1;
                            goto next_txn;
                        }
                }
        next_txn:
            committed[t] = want[t] == CFDB_RESOLVE_COMMITTED;
        }
        for (size_t t = 0; t < n; t++) {
            assert_int_equal(res[t].status, want[t]);
            size_t expect_n = txns[t].report_conflicting_keys ? want_n[t] : 0;
            if (want[t] == CFDB_RESOLVE_TOO_OLD)
                expect_n = 0;
            assert_int_equal(res[t].conflicting_count, expect_n);
            for (size_t i = 0; i < expect_n; i++)
                assert_int_equal(res[t].conflicting[i], want_idx[t][i]);
            if (committed[t])
                for (size_t w = 0; w < txns[t].write_count; w++) {
                    assert_true(nlog < cap);
                    logged_write *lw = &log[nlog++];
                    lw->bl = txns[t].write_ranges[w].begin.len;
                    lw->el = txns[t].write_ranges[w].end.len;
                    memcpy(lw->b, txns[t].write_ranges[w].begin.ptr, lw->bl);
                    memcpy(lw->e, txns[t].write_ranges[w].end.ptr, lw->el);
                    lw->version = v;
                }
        }
        /* The model may forget what the window makes irrelevant, too. */
        size_t keep = 0;
        for (size_t w = 0; w < nlog; w++)
            if (log[w].version >= v - window - 20)
                log[keep++] = log[w];
        nlog = keep;
    }
    /* Forgetting keeps history to roughly the window's writes. */
    fprintf(stderr, "history boundaries after the random run: %zu\n", cfdb_resolver_history_size(r));
    assert_true(cfdb_resolver_history_size(r) < 1000);
    free(log);
    cfdb_arena_free(&a);
    cfdb_resolver_destroy(r);
}

/* Scale: many batches of many small transactions stay fast. */
static void test_scale(void **state)
{
    (void)state;
    cfdb_resolver *r = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    cfdb_arena a;
    cfdb_arena_init(&a);
    enum { N = 200 };
    cfdb_resolver_txn txns[N];
    cfdb_conflict_range ranges[N][2];
    char keys[N][2][12];
    cfdb_resolver_result res[N];
    int64_t v = 1000;
    size_t commits = 0;
    for (int b = 0; b < 1000; b++) {
        cfdb_arena_reset(&a);
        v += 5000;
        for (int t = 0; t < N; t++) {
            for (int j = 0; j < 2; j++) {
                snprintf(keys[t][j], 11, "%09u", (unsigned)(rnd() % 1000000));
                keys[t][j][9] = 0;
                ranges[t][j] = (cfdb_conflict_range){ cfdb_bytes_make(keys[t][j], 9),
                                                      cfdb_bytes_make(keys[t][j], 10) };
            }
            txns[t] = (cfdb_resolver_txn){ v - 20000, &ranges[t][0], 1, &ranges[t][1], 1, false };
        }
        assert_int_equal(cfdb_resolver_resolve(r, v, txns, N, &a, res), 0);
        for (int t = 0; t < N; t++)
            commits += res[t].status == CFDB_RESOLVE_COMMITTED;
    }
    assert_true(commits > 1000 * N / 2);
    assert_true(cfdb_resolver_consistent(r));
    /* History holds only the last ~5e6 versions' writes (1000 batches x 5000). */
    assert_true(cfdb_resolver_history_size(r) < 2 * 2 * 1000 * N);
    cfdb_arena_free(&a);
    cfdb_resolver_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_conflicts),
        cmocka_unit_test(test_half_open_boundaries),
        cmocka_unit_test(test_too_old),
        cmocka_unit_test(test_intra_batch),
        cmocka_unit_test(test_conflicting_indices),
        cmocka_unit_test(test_forgetting),
        cmocka_unit_test(test_random_against_log),
        cmocka_unit_test(test_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
