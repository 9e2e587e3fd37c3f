/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer cursors (src/layers/records/rl_kvcursor.c, rl_scan.c, rl_unsplit.c,
 * rl_continuation.c) against a cfdb-server of their own:
 *  - continuation tokens byte for byte against the hand-derived vectors of
 *    tests/vectors/records/continuations.tsv (the Java Record Layer's
 *    KeyValueCursorContinuation), both directions, and the prefix rule for index and record
 *    ranges;
 *  - record scans by primary-key range and index scans over tuple ranges (inclusive,
 *    exclusive, open ends), forward and reverse, with the expected ids written out by hand;
 *  - round trips at every position: the continuation after each item, resumed in a new
 *    transaction, gives exactly the rest; pages of every limit give the whole scan and the
 *    same continuations; skip applies on every execution, from a continuation too, as in
 *    Java (paged with skip kept, and with skip cleared after the first page), with the pages
 *    of one index and one record scan written out by hand;
 *  - split records (over 100,000 bytes) through record scans both ways;
 *  - continuations that do not belong to the range are refused (2000). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "rl_scan_fixture.h"

static cfdb_rl_metadata *md;
static cfdb_bytes prefix;

/* index order by (name, id): null:12; alice: 1,3,8; bob: 2,6,11; carol: 4,9; dave: 5;
 * erin: 7; frank: 10. Records 4 and 9 are split (2 and 3 pieces). */
static const rls_person people[] = {
    { 1, "alice", 0, 0, 0 },  { 2, "bob", 0, 0, 0 },   { 3, "alice", 0, 0, 0 },
    { 4, "carol", 0, 0, 150000 }, { 5, "dave", 0, 0, 0 }, { 6, "bob", 0, 0, 0 },
    { 7, "erin", 0, 0, 0 },   { 8, "alice", 0, 0, 0 }, { 9, "carol", 0, 0, 250000 },
    { 10, "frank", 0, 0, 0 }, { 11, "bob", 0, 0, 0 },  { 12, NULL, 0, 0, 0 },
};
#define NPEOPLE ((int)(sizeof people / sizeof people[0]))

static int group_setup(void **state)
{
    (void)state;
    cfdb_arena_init(&rls_arena);
    if (api_env_setup(NULL))
        return -1;
    md = rls_metadata();
    prefix = rls_prefix(1);
    rls_save(md, prefix, people, NPEOPLE);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cfdb_rl_metadata_free(md);
    cfdb_arena_free(&rls_arena);
    return api_env_teardown();
}

static cfdb_bytes hex(const char *h)
{
    if (!strcmp(h, "-"))
        return cfdb_bytes_make("", 0);
    size_t n = strlen(h) / 2;
    uint8_t *p = cfdb_arena_alloc(&rls_arena, n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
        p[i] = (uint8_t)v;
    }
    return cfdb_bytes_make(p, n);
}

/* The vectors: kind -> (inner, token). */
typedef struct vec {
    char kind[32];
    cfdb_bytes inner, token;
} vec;
static vec vecs[32];
static int nvecs;

static void load_vectors(void)
{
    if (nvecs)
        return;
    FILE *f = fopen(CFDB_VECTORS_DIR "/records/continuations.tsv", "r");
    assert_non_null(f);
    static char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *k = strtok(line, "\t\n"), *i = strtok(NULL, "\t\n"), *t = strtok(NULL, "\t\n");
        assert_non_null(t);
        assert_true(nvecs < 32);
        snprintf(vecs[nvecs].kind, sizeof vecs[nvecs].kind, "%s", k);
        vecs[nvecs].inner = hex(i);
        vecs[nvecs].token = hex(t);
        nvecs++;
    }
    fclose(f);
    assert_true(nvecs >= 12);
}

static const vec *vector(const char *kind)
{
    load_vectors();
    for (int i = 0; i < nvecs; i++)
        if (!strcmp(vecs[i].kind, kind))
            return &vecs[i];
    fail_msg("no vector %s", kind);
    return NULL;
}

static void assert_bytes(cfdb_bytes got, cfdb_bytes want)
{
    if (got.len != want.len || (want.len && memcmp(got.ptr, want.ptr, want.len))) {
        char g[512] = "", w[512] = "";
        for (size_t i = 0; i < got.len && i < 200; i++)
            sprintf(g + 2 * i, "%02x", got.ptr[i]);
        for (size_t i = 0; i < want.len && i < 200; i++)
            sprintf(w + 2 * i, "%02x", want.ptr[i]);
        fail_msg("bytes differ:\n got  %s\n want %s", g, w);
    }
}

static void test_token_vectors(void **state)
{
    (void)state;
    load_vectors();
    int both = 0, decode = 0;
    for (int i = 0; i < nvecs; i++) {
        cfdb_bytes inner;
        assert_int_equal(cfdb_rl_continuation_decode(vecs[i].token, &inner), 0);
        assert_bytes(inner, vecs[i].inner);
        if (strcmp(vecs[i].kind, "decode") != 0) {
            cfdb_bytes tok;
            assert_int_equal(cfdb_rl_continuation_encode(&rls_arena, vecs[i].inner, &tok), 0);
            assert_bytes(tok, vecs[i].token);
            both++;
        } else {
            decode++;
        }
    }
    assert_true(both >= 5 && decode >= 7);
}

/* ---- scans against the expected ids ---- */

static cfdb_tuple *tup(const char *s, int64_t id)
{
    cfdb_tuple *t = cfdb_arena_alloc(&rls_arena, sizeof *t);
    cfdb_tuple_init(t, &rls_arena);
    if (s)
        assert_int_equal(cfdb_tuple_add_cstr(t, s), 0);
    else
        assert_int_equal(cfdb_tuple_add_int(t, 1), 0);   /* record type key */
    if (id >= 0)
        assert_int_equal(cfdb_tuple_add_int(t, id), 0);
    return t;
}

static cfdb_rl_range rng(const cfdb_tuple *lo, cfdb_rl_endpoint le, const cfdb_tuple *hi, cfdb_rl_endpoint he)
{
    cfdb_rl_range r = { lo, hi, le, he };
    return r;
}

static void assert_ids(const rls_result *r, const int64_t *want, int n, bool reverse)
{
    assert_int_equal(r->err, 0);
    if (r->n != n) {
        fprintf(stderr, "got:");
        for (int i = 0; i < r->n; i++)
            fprintf(stderr, " %lld", (long long)r->ids[i]);
        fprintf(stderr, "\n");
    }
    assert_int_equal(r->n, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(r->ids[i], want[reverse ? n - 1 - i : i]);
}

typedef struct scase {
    rls_kind kind;
    const char *index;
    cfdb_rl_range range;
    int64_t want[16];
    int n;
} scase;

/* Rows a paged scan returns with skip s kept on every page and limit l over n rows (Java's
 * ExecuteProperties: each execution skips s then returns up to l): page k starts at position
 * k(s + l), skips s, returns min(l, what is left). */
static int kept_skip_total(int n, int s, int l)
{
    int total = 0;
    for (int start = 0; start < n; start += s + l) {
        int left = n - start - s;
        total += left <= 0 ? 0 : left < l ? left : l;
    }
    return total;
}

/* Every position: the continuation after item i resumes at item i + 1 in a new transaction;
 * pages of each limit rebuild the scan with the same continuations; skip on every page (Java's
 * ExecuteProperties reapplied at each execution) or on the first page only (the caller
 * clearing it, as Java callers do with clearSkipAndLimit). */
static void round_trips(const scase *c, bool reverse)
{
    cfdb_rl_scan_props p = { 0 };
    p.reverse = reverse;
    rls_result *full = malloc(sizeof *full), *r = malloc(sizeof *r);
    rls_scan(c->kind, md, prefix, c->index, &c->range, cfdb_bytes_make(NULL, 0), &p, full);
    assert_ids(full, c->want, c->n, reverse);
    assert_true(full->final_end);
    assert_int_equal(full->stop, CFDB_RL_SOURCE_EXHAUSTED);
    for (int i = 0; i < full->n; i++) {
        rls_scan(c->kind, md, prefix, c->index, &c->range, full->conts[i], &p, r);
        assert_int_equal(r->err, 0);
        assert_int_equal(r->n, full->n - i - 1);
        for (int j = 0; j < r->n; j++) {
            assert_int_equal(r->ids[j], full->ids[i + 1 + j]);
            assert_bytes(r->conts[j], full->conts[i + 1 + j]);
        }
        assert_true(r->final_end);
    }
    for (uint32_t limit = 1; limit <= 5; limit += 2) {
        for (uint32_t skip = 0; skip <= 3; skip += 3) {
            for (int clear = 0; clear < 2; clear++) {
                cfdb_bytes cont = cfdb_bytes_make(NULL, 0);
                int got = 0, pages = 0, pos = 0;   /* pos: the first row after cont */
                p.limit = limit;
                for (;;) {
                    p.skip = clear && pages > 0 ? 0 : skip;
                    rls_scan(c->kind, md, prefix, c->index, &c->range, cont, &p, r);
                    assert_int_equal(r->err, 0);
                    assert_true(r->n <= (int)limit);
                    for (int j = 0; j < r->n; j++) {
                        int at = pos + (int)p.skip + j;
                        assert_true(at < full->n);
                        assert_int_equal(r->ids[j], full->ids[at]);
                        assert_bytes(r->conts[j], full->conts[at]);
                    }
                    got += r->n;
                    pages++;
                    assert_true(pages < 40);
                    if (r->final_end) {
                        assert_int_equal(r->stop, CFDB_RL_SOURCE_EXHAUSTED);
                        break;
                    }
                    assert_int_equal(r->stop, CFDB_RL_RETURN_LIMIT_REACHED);
                    assert_int_equal(r->n, (int)limit);
                    assert_bytes(r->final_cont, r->conts[r->n - 1]);
                    cont = r->final_cont;
                    pos += (int)p.skip + r->n;
                }
                int want = clear ? (full->n > (int)skip ? full->n - (int)skip : 0)
                                 : kept_skip_total(full->n, (int)skip, (int)limit);
                assert_int_equal(got, want);
            }
        }
    }
    free(full);
    free(r);
}

static void test_index_ranges(void **state)
{
    (void)state;
    const scase cases[] = {
        { RLS_INDEX, "Person$name", { NULL, NULL, CFDB_RL_TREE_START, CFDB_RL_TREE_END },
          { 12, 1, 3, 8, 2, 6, 11, 4, 9, 5, 7, 10 }, 12 },
        { RLS_INDEX, "Person$name",
          { tup("alice", -1), tup("bob", -1), CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE },
          { 1, 3, 8, 2, 6, 11 }, 6 },
        { RLS_INDEX, "Person$name",
          { tup("alice", -1), tup("carol", -1), CFDB_RL_RANGE_EXCLUSIVE, CFDB_RL_RANGE_EXCLUSIVE },
          { 2, 6, 11 }, 3 },
        { RLS_INDEX, "Person$name", { tup("bob", -1), NULL, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_TREE_END },
          { 2, 6, 11, 4, 9, 5, 7, 10 }, 8 },
        { RLS_INDEX, "Person$name", { NULL, tup("bob", -1), CFDB_RL_TREE_START, CFDB_RL_RANGE_EXCLUSIVE },
          { 12, 1, 3, 8 }, 4 },
        { RLS_INDEX, "Person$name",
          { tup("alice", -1), tup("alice", -1), CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE },
          { 1, 3, 8 }, 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        round_trips(&cases[i], false);
        round_trips(&cases[i], true);
    }
}

static void test_record_ranges(void **state)
{
    (void)state;
    const scase cases[] = {
        { RLS_RECORDS, NULL, { NULL, NULL, CFDB_RL_TREE_START, CFDB_RL_TREE_END },
          { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, 12 },
        { RLS_RECORDS, NULL, { tup(NULL, 3), tup(NULL, 9), CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE },
          { 3, 4, 5, 6, 7, 8, 9 }, 7 },
        { RLS_RECORDS, NULL, { tup(NULL, 3), tup(NULL, 9), CFDB_RL_RANGE_EXCLUSIVE, CFDB_RL_RANGE_EXCLUSIVE },
          { 4, 5, 6, 7, 8 }, 5 },
        { RLS_RECORDS, NULL, { tup(NULL, 8), NULL, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_TREE_END },
          { 8, 9, 10, 11, 12 }, 5 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        round_trips(&cases[i], false);
        round_trips(&cases[i], true);
    }
}

/* Skip on every execution, written out by hand (Java: KeyValueCursorBase.Builder.prepare adds
 * ExecuteProperties' skip to the begin selector, or subtracts it from the end selector in
 * reverse, after placing the range at the continuation; scanTypedRecords puts .skip(n) on the
 * unsplitter of every cursor it builds). Pages of limit 3, skip 3 kept:
 *  - Person$name, all 12 entries in index order 12 1 3 8 2 6 11 4 9 5 7 10: page 1 skips
 *    12 1 3 and returns 8 2 6 (limit reached); page 2 resumes after 6, skips 11 4 9 and
 *    returns 5 7 10 (limit reached); page 3 resumes after 10, has nothing to skip or return:
 *    source exhausted. Reverse (10 7 5 9 4 11 6 2 8 3 1 12): 9 4 11, then 3 1 12, then end.
 *  - records 1..12 by primary key: 4 5 6, then 10 11 12, then end; reverse 9 8 7, 3 2 1.
 *  - records 3..9 inclusive (7 rows) reverse: skips 9 8 7, returns 6 5 4; resumes after 4,
 *    skips 3 and runs out: source exhausted with no row. */
static void test_skip_every_execution(void **state)
{
    (void)state;
    static const struct {
        rls_kind kind;
        const char *index;
        bool reverse;
        int64_t page[3][3];
        int n[3];
        int pages;
        bool lo_hi;   /* records 3..9 inclusive instead of everything */
    } cases[] = {
        { RLS_INDEX, "Person$name", false, { { 8, 2, 6 }, { 5, 7, 10 }, { 0 } }, { 3, 3, 0 }, 3, false },
        { RLS_INDEX, "Person$name", true, { { 9, 4, 11 }, { 3, 1, 12 }, { 0 } }, { 3, 3, 0 }, 3, false },
        { RLS_FETCH, "Person$name", false, { { 8, 2, 6 }, { 5, 7, 10 }, { 0 } }, { 3, 3, 0 }, 3, false },
        { RLS_RECORDS, NULL, false, { { 4, 5, 6 }, { 10, 11, 12 }, { 0 } }, { 3, 3, 0 }, 3, false },
        { RLS_RECORDS, NULL, true, { { 9, 8, 7 }, { 3, 2, 1 }, { 0 } }, { 3, 3, 0 }, 3, false },
        { RLS_RECORDS, NULL, true, { { 6, 5, 4 }, { 0 }, { 0 } }, { 3, 0, 0 }, 2, true },
    };
    rls_result *r = malloc(sizeof *r);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfdb_rl_range range = cases[i].lo_hi ? rng(tup(NULL, 3), CFDB_RL_RANGE_INCLUSIVE, tup(NULL, 9),
                                                   CFDB_RL_RANGE_INCLUSIVE)
                                             : cfdb_rl_range_all();
        cfdb_rl_scan_props p = { 0 };
        p.reverse = cases[i].reverse;
        p.limit = 3;
        p.skip = 3;
        cfdb_bytes cont = cfdb_bytes_make(NULL, 0);
        for (int pg = 0; pg < cases[i].pages; pg++) {
            rls_scan(cases[i].kind, md, prefix, cases[i].index, &range, cont, &p, r);
            assert_ids(r, cases[i].page[pg], cases[i].n[pg], false);
            bool last = pg == cases[i].pages - 1;
            assert_int_equal(r->final_end, last);
            assert_int_equal(r->stop, last ? CFDB_RL_SOURCE_EXHAUSTED : CFDB_RL_RETURN_LIMIT_REACHED);
            cont = r->final_cont;
        }
    }
    free(r);
}

/* Split records come back whole, both ways, with their sizes. */
static void test_split_records_scanned(void **state)
{
    (void)state;
    rls_result *r = malloc(sizeof *r);
    cfdb_rl_range all = cfdb_rl_range_all();
    for (int rev = 0; rev < 2; rev++) {
        cfdb_rl_scan_props p = { 0 };
        p.reverse = rev;
        rls_scan(RLS_RECORDS, md, prefix, NULL, &all, cfdb_bytes_make(NULL, 0), &p, r);
        assert_int_equal(r->err, 0);
        assert_int_equal(r->n, 12);
        for (int i = 0; i < r->n; i++) {
            int64_t id = r->ids[i];
            if (id == 4)
                assert_true(r->bytes[i] > 150000 && r->bytes[i] < 150100);
            else if (id == 9)
                assert_true(r->bytes[i] > 250000 && r->bytes[i] < 250100);
            else
                assert_true(r->bytes[i] < 100);
        }
    }
    free(r);
}

/* The tokens the cursors hand out are the hand-derived ones. */
static void test_position_vectors(void **state)
{
    (void)state;
    rls_result *r = malloc(sizeof *r);
    cfdb_rl_scan_props p = { 0 };
    cfdb_rl_range ab = rng(tup("alice", -1), CFDB_RL_RANGE_INCLUSIVE, tup("bob", -1), CFDB_RL_RANGE_INCLUSIVE);
    rls_scan(RLS_INDEX, md, prefix, "Person$name", &ab, cfdb_bytes_make(NULL, 0), &p, r);
    assert_int_equal(r->err, 0);
    assert_int_equal(r->ids[0], 1);
    assert_bytes(r->conts[0], vector("index_alice_bob")->token);
    cfdb_rl_range all = cfdb_rl_range_all();
    rls_scan(RLS_RECORDS, md, prefix, NULL, &all, cfdb_bytes_make(NULL, 0), &p, r);
    assert_int_equal(r->err, 0);
    assert_int_equal(r->ids[4], 5);
    assert_bytes(r->conts[4], vector("records_all_5")->token);
    /* the old (raw) form resumes at the same place */
    rls_scan(RLS_RECORDS, md, prefix, NULL, &all, vector("records_all_5")->inner, &p, r);
    assert_int_equal(r->err, 0);
    assert_int_equal(r->n, 7);
    assert_int_equal(r->ids[0], 6);
    free(r);
}

/* A continuation from another range, or bytes that point outside this one, are refused. */
static void test_foreign_continuation(void **state)
{
    (void)state;
    rls_result *r = malloc(sizeof *r);
    cfdb_rl_scan_props p = { 0 };
    cfdb_rl_range cd = rng(tup("carol", -1), CFDB_RL_RANGE_INCLUSIVE, tup("dave", -1), CFDB_RL_RANGE_INCLUSIVE);
    cfdb_rl_range all = cfdb_rl_range_all();
    /* "alice..." relative to the prefix S + 02: before carol */
    rls_scan(RLS_INDEX, md, prefix, "Person$name", &cd, vector("index_alice_bob")->token, &p, r);
    assert_int_equal(r->err, CFDB_ERR_CLIENT_INVALID_OPERATION);
    p.reverse = true;
    uint8_t ff[] = { 0xff, 0xff };
    cfdb_bytes big;
    assert_int_equal(cfdb_rl_continuation_encode(&rls_arena, cfdb_bytes_make(ff, 2), &big), 0);
    rls_scan(RLS_RECORDS, md, prefix, NULL, &all, big, &p, r);
    assert_int_equal(r->err, CFDB_ERR_CLIENT_INVALID_OPERATION);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_vectors),
        cmocka_unit_test(test_position_vectors),
        cmocka_unit_test(test_index_ranges),
        cmocka_unit_test(test_record_ranges),
        cmocka_unit_test(test_skip_every_execution),
        cmocka_unit_test(test_split_records_scanned),
        cmocka_unit_test(test_foreign_continuation),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
