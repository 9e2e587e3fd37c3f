/* SPDX-License-Identifier: Apache-2.0 */
/* The minimal query API (src/layers/records/rl_query.c) against a cfdb-server of its own:
 * which scan the planner picks for each query, its explain string in the Java planner's
 * notation, the records each returns (expected ids written out by hand), pages with
 * continuations (with a skip applied on every page, as Java does), remote fetch and
 * scan-and-fetch giving the same answers, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "cfdb/records/query.h"
#include "rl_scan_fixture.h"

static cfdb_rl_metadata *md;
static cfdb_bytes prefix;

static const rls_person people[] = {
    { 1, "alice", 1, 1.5, 0 },  { 2, "bob", 2, 0.5, 0 },   { 3, "alice", 1, 2.5, 0 },
    { 4, "carol", 2, 9.0, 150000 }, { 5, "dave", 1, 0.0, 0 }, { 6, "bob", 0, 0, 0 },
    { 7, "erin", 2, 3.5, 0 },   { 8, "alice", 0, 0, 0 }, { 9, "carol", 1, 7.0, 0 },
    { 10, "frank", 0, 0, 0 }, { 11, "bob", 1, 1.0, 0 },  { 12, NULL, 0, 0, 0 },
};
#define NPEOPLE ((int)(sizeof people / sizeof people[0]))

static int group_setup(void **state)
{
    (void)state;
    cfdb_arena_init(&rls_arena);
    if (api_env_setup(NULL))
        return -1;
    md = rls_metadata();
    prefix = rls_prefix(5);
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

static cfdb_tuple_elem str(const char *s)
{
    cfdb_tuple_elem e = { .type = CFDB_TUPLE_STRING };
    e.v.bytes = cfdb_bytes_str(s);
    return e;
}

static cfdb_tuple_elem num(int64_t v)
{
    cfdb_tuple_elem e = { .type = CFDB_TUPLE_INT };
    e.v.i = v;
    return e;
}

static cfdb_tuple_elem dbl(double v)
{
    cfdb_tuple_elem e = { .type = CFDB_TUPLE_DOUBLE };
    e.v.d = v;
    return e;
}

/* Runs the query to its end in pages of `page` records (0: one page); returns the ids. */
static int run_plan(const cfdb_rl_plan *p, cfdb_bytes pfx, uint32_t page, cfdb_rl_fetch_method fetch,
                    int64_t *ids);
/* The same with skip on every page, or on the first page only (clear_skip: the caller clears
 * it after the first page, as Java callers do with ExecuteProperties.clearSkipAndLimit). */
static int run_plan_skip(const cfdb_rl_plan *p, cfdb_bytes pfx, uint32_t page, uint32_t skip,
                         bool clear_skip, cfdb_rl_fetch_method fetch, int64_t *ids);

static int run(const cfdb_rl_query *q, uint32_t page, cfdb_rl_fetch_method fetch, int64_t *ids,
               char *explain, size_t cap)
{
    cfdb_rl_plan *p;
    int rc = cfdb_rl_plan_query(md, q, &p);
    if (rc)
        return -rc;
    snprintf(explain, cap, "%s", cfdb_rl_plan_explain(p));
    int n = run_plan(p, prefix, page, fetch, ids);
    cfdb_rl_plan_free(p);
    return n;
}

/* Runs plan p over the store at pfx to its end in pages of `page` records; returns the ids. */
static int run_plan(const cfdb_rl_plan *p, cfdb_bytes pfx, uint32_t page, cfdb_rl_fetch_method fetch,
                    int64_t *ids)
{
    return run_plan_skip(p, pfx, page, 0, false, fetch, ids);
}

static int run_plan_skip(const cfdb_rl_plan *p, cfdb_bytes pfx, uint32_t page, uint32_t skip,
                         bool clear_skip, cfdb_rl_fetch_method fetch, int64_t *ids)
{
    int n = 0;
    cfdb_bytes cont = cfdb_bytes_make(NULL, 0);
    for (int pages = 0; pages < 50; pages++) {
        FDBTransaction *tr = api_tr();
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_rl_store *s;
        assert_int_equal(cfdb_rl_store_open(tr, md, pfx, CFDB_RL_OPEN, &s), 0);
        cfdb_rl_scan_props props = { 0 };
        props.limit = page;
        props.skip = clear_skip && pages > 0 ? 0 : skip;
        props.fetch = fetch;
        cfdb_rl_cursor *c;
        assert_int_equal(cfdb_rl_plan_execute(p, s, tr, cont, &props, &c), 0);
        int got = 0;
        for (;;) {
            cfdb_rl_item it;
            bool has;
            assert_int_equal(cfdb_rl_cursor_next(c, &a, &it, &has), 0);
            if (!has)
                break;
            assert_non_null(it.record);
            assert_int_equal(cfdb_tuple_get_int(&it.primary_key, 1, &ids[n]), 0);
            n++;
            got++;
        }
        bool end;
        cfdb_bytes k = cfdb_rl_cursor_continuation(c, &end);
        if (page)
            assert_true(got <= (int)page);
        assert_int_equal(cfdb_arena_dup_bytes(&rls_arena, k, &cont), 0);
        cfdb_rl_cursor_free(c);
        cfdb_rl_store_free(s);
        cfdb_arena_free(&a);
        fdb_transaction_destroy(tr);
        if (end)
            break;
    }
    return n;
}

typedef struct qcase {
    cfdb_rl_filter f[3];
    uint32_t nf;
    const char *sort;
    bool desc;
    const char *explain;
    int64_t ids[12];
    int n;
} qcase;

static void test_plans(void **state)
{
    (void)state;
    const qcase cases[] = {
        { { { "name", CFDB_RL_EQ, str("alice") } }, 1, NULL, false,
          "Index(Person$name [[alice],[alice]])", { 1, 3, 8 }, 3 },
        { { { "color", CFDB_RL_EQ, num(1) }, { "score", CFDB_RL_GT, dbl(1.0) } }, 2, NULL, false,
          "Index(Person$color_score ([1, 1.0],[1]])", { 1, 3, 9 }, 3 },
        { { { "color", CFDB_RL_EQ, num(1) }, { "score", CFDB_RL_GE, dbl(1.0) }, { "score", CFDB_RL_LT, dbl(7.0) } },
          3, NULL, false, "Index(Person$color_score [[1, 1.0],[1, 7.0]))", { 11, 1, 3 }, 3 },
        { { { "score", CFDB_RL_GT, dbl(5) } }, 1, NULL, false,
          "Scan([IS Person]) | score GREATER_THAN 5.0", { 4, 9 }, 2 },
        { { { 0 } }, 0, "name", false, "Index(Person$name <,>)", { 12, 1, 3, 8, 2, 6, 11, 4, 9, 5, 7, 10 }, 12 },
        { { { "name", CFDB_RL_LT, str("carol") } }, 1, "name", true,
          "Index(Person$name ([null],[carol]) REVERSE)", { 11, 6, 2, 8, 3, 1 }, 6 },
        { { { "name", CFDB_RL_EQ, str("bob") }, { "color", CFDB_RL_EQ, num(2) } }, 2, NULL, false,
          "Index(Person$name [[bob],[bob]]) | color EQUALS 2", { 2 }, 1 },
        { { { "color", CFDB_RL_EQ, num(2) } }, 1, "score", true,
          "Index(Person$color_score [[2],[2]] REVERSE)", { 4, 7, 2 }, 3 },
        { { { 0 } }, 0, NULL, false, "Scan([IS Person])", { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, 12 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const qcase *c = &cases[i];
        cfdb_rl_query q = { "Person", c->f, c->nf, c->sort, c->desc };
        for (uint32_t page = 0; page <= 2; page++) {
            for (int m = 0; m < 2; m++) {
                int64_t ids[64];
                char ex[256];
                int n = run(&q, page, m ? CFDB_RL_USE_REMOTE_FETCH : CFDB_RL_SCAN_AND_FETCH, ids, ex, sizeof ex);
                if (strcmp(ex, c->explain))
                    fail_msg("case %zu: explain '%s', want '%s'", i, ex, c->explain);
                if (n != c->n)
                    fail_msg("case %zu (page %u): %d records, want %d", i, page, n, c->n);
                for (int j = 0; j < n; j++)
                    assert_int_equal(ids[j], c->ids[j]);
            }
        }
    }
}

static void test_refusals(void **state)
{
    (void)state;
    cfdb_rl_plan *p;
    cfdb_rl_filter f = { "score", CFDB_RL_GT, dbl(1) };
    cfdb_rl_query q = { "Person", NULL, 0, "score", false };
    assert_int_equal(cfdb_rl_plan_query(md, &q, &p), CFDB_ERR_UNSUPPORTED_OPERATION);   /* no index sorts by score */
    q = (cfdb_rl_query){ "Nobody", &f, 1, NULL, false };
    assert_int_equal(cfdb_rl_plan_query(md, &q, &p), CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_rl_filter bad = { "tags", CFDB_RL_EQ, str("x") };   /* repeated */
    q = (cfdb_rl_query){ "Person", &bad, 1, NULL, false };
    assert_int_equal(cfdb_rl_plan_query(md, &q, &p), CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_rl_filter nofield = { "nope", CFDB_RL_EQ, str("x") };
    q = (cfdb_rl_query){ "Person", &nofield, 1, NULL, false };
    assert_int_equal(cfdb_rl_plan_query(md, &q, &p), CFDB_ERR_CLIENT_INVALID_OPERATION);
}

/* Opens the store at pfx in a new transaction. */
static cfdb_rl_store *open_store(cfdb_bytes pfx, FDBTransaction **tr)
{
    *tr = api_tr();
    cfdb_rl_store *s;
    assert_int_equal(cfdb_rl_store_open(*tr, md, pfx, CFDB_RL_OPEN, &s), 0);
    return s;
}

/* Sets Person$name's state in the store at pfx (committed). */
static void mark_name(cfdb_bytes pfx, cfdb_rl_index_state st)
{
    FDBTransaction *tr;
    cfdb_rl_store *s = open_store(pfx, &tr);
    assert_int_equal(cfdb_rl_store_mark_index(s, tr, "Person$name", st), 0);
    assert_int_equal(api_commit(tr), 0);
    cfdb_rl_store_free(s);
    fdb_transaction_destroy(tr);
}

/* An index that is not readable is never scanned (Java's ScanNonReadableIndexException: 2000
 * here) and never planned (RecordQueryPlanner over a RecordStoreState): the query falls back
 * to a record scan with the same answer; a plan made without the store's states is refused
 * when run. Both write-only and disabled; the readable store of the other tests still scans. */
static void test_non_readable_index(void **state)
{
    (void)state;
    cfdb_bytes pfx2 = rls_prefix(6);
    rls_save(md, pfx2, people, NPEOPLE);
    const cfdb_rl_index *ix = cfdb_rl_index_by_name(md, "Person$name");
    assert_non_null(ix);
    cfdb_rl_filter f = { "name", CFDB_RL_EQ, str("alice") };
    cfdb_rl_query q = { "Person", &f, 1, NULL, false };
    cfdb_rl_plan *by_index;
    assert_int_equal(cfdb_rl_plan_query(md, &q, &by_index), 0);
    assert_string_equal(cfdb_rl_plan_explain(by_index), "Index(Person$name [[alice],[alice]])");
    const cfdb_rl_index_state states[] = { CFDB_RL_INDEX_WRITE_ONLY, CFDB_RL_INDEX_DISABLED };
    for (int k = 0; k < 2; k++) {
        mark_name(pfx2, states[k]);
        FDBTransaction *tr;
        cfdb_rl_store *s = open_store(pfx2, &tr);
        assert_int_equal(cfdb_rl_store_index_state(s, "Person$name"), states[k]);
        cfdb_rl_cursor *c = NULL;
        cfdb_rl_scan_props props = { 0 };
        assert_int_equal(cfdb_rl_scan_index(s, tr, ix, NULL, cfdb_bytes_make(NULL, 0), &props, &c),
                         CFDB_ERR_CLIENT_INVALID_OPERATION);
        assert_null(c);
        for (int m = 0; m < 2; m++) {
            props.fetch = m ? CFDB_RL_USE_REMOTE_FETCH : CFDB_RL_SCAN_AND_FETCH;
            assert_int_equal(cfdb_rl_scan_index_records(s, tr, ix, NULL, cfdb_bytes_make(NULL, 0), &props, &c),
                             CFDB_ERR_CLIENT_INVALID_OPERATION);
            assert_null(c);
            assert_int_equal(cfdb_rl_plan_execute(by_index, s, tr, cfdb_bytes_make(NULL, 0), &props, &c),
                             CFDB_ERR_CLIENT_INVALID_OPERATION);
            assert_null(c);
        }
        /* planned against this store: a record scan with the filter on top */
        cfdb_rl_plan *p;
        assert_int_equal(cfdb_rl_plan_query_store(s, &q, &p), 0);
        assert_null(cfdb_rl_plan_index(p));
        assert_string_equal(cfdb_rl_plan_explain(p), "Scan([IS Person]) | name EQUALS alice");
        cfdb_rl_store_free(s);
        fdb_transaction_destroy(tr);
        for (uint32_t page = 0; page <= 2; page += 2) {
            int64_t ids[64];
            assert_int_equal(run_plan(p, pfx2, page, CFDB_RL_USE_REMOTE_FETCH, ids), 3);
            assert_int_equal(ids[0], 1);
            assert_int_equal(ids[1], 3);
            assert_int_equal(ids[2], 8);
        }
        cfdb_rl_plan_free(p);
        /* a sort only the non-readable index gives cannot be planned */
        s = open_store(pfx2, &tr);
        cfdb_rl_query sorted = { "Person", NULL, 0, "name", false };
        assert_int_equal(cfdb_rl_plan_query_store(s, &sorted, &p), CFDB_ERR_UNSUPPORTED_OPERATION);
        cfdb_rl_store_free(s);
        fdb_transaction_destroy(tr);
    }
    /* the readable store: planned onto the index, which scans */
    FDBTransaction *tr;
    cfdb_rl_store *s = open_store(prefix, &tr);
    cfdb_rl_plan *p;
    assert_int_equal(cfdb_rl_plan_query_store(s, &q, &p), 0);
    assert_ptr_equal(cfdb_rl_plan_index(p), ix);
    cfdb_rl_scan_props props = { 0 };
    cfdb_rl_cursor *c = NULL;
    assert_int_equal(cfdb_rl_scan_index(s, tr, ix, NULL, cfdb_bytes_make(NULL, 0), &props, &c), 0);
    cfdb_rl_cursor_free(c);
    cfdb_rl_store_free(s);
    fdb_transaction_destroy(tr);
    int64_t ids[64];
    assert_int_equal(run_plan(p, prefix, 0, CFDB_RL_SCAN_AND_FETCH, ids), 3);
    assert_int_equal(ids[0], 1);
    cfdb_rl_plan_free(p);
    cfdb_rl_plan_free(by_index);
}

/* A query's skip applies on every execution, from a continuation too, as Java's plans run
 * skipThenLimit each time (RecordQueryFilterPlanBase, RecordQueryTypeFilterPlan over an inner
 * plan run with clearSkipAndLimit). Expected pages, derived by hand from the people above:
 *  - Scan([IS Person]), ids 1..12, limit 3, skip 2: skips 1 2, returns 3 4 5; resumes after 5,
 *    skips 6 7, returns 8 9 10; resumes after 10, skips 11 12: end. Skip cleared after the
 *    first page: 3 4 5, then 6 7 8, 9 10 11, 12.
 *  - sorted by name (Index(Person$name <,>): 12 1 3 8 2 6 11 4 9 5 7 10), limit 2, skip 1:
 *    1 3 | 2 6 | 4 9 | 7 10 | (after 10, nothing to skip: end).
 *  - name >= alice sorted by name, with the residual color = 1 (alice 1 and 3, bob 11,
 *    carol 9, dave 5 in name order), limit 2, skip 1: the skip counts records that pass the
 *    residual: skips 1, returns 3 11; resumes after 11, skips 9, returns 5: end. */
static void test_skip_each_execution(void **state)
{
    (void)state;
    cfdb_rl_filter from_alice[2] = { { "name", CFDB_RL_GE, str("alice") }, { "color", CFDB_RL_EQ, num(1) } };
    static const struct {
        uint32_t nf;
        bool filtered, sorted, clear;
        uint32_t page, skip;
        int64_t ids[12];
        int n;
    } cases[] = {
        { 0, false, false, false, 3, 2, { 3, 4, 5, 8, 9, 10 }, 6 },
        { 0, false, false, true, 3, 2, { 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, 10 },
        { 0, false, true, false, 2, 1, { 1, 3, 2, 6, 4, 9, 7, 10 }, 8 },
        { 2, true, true, false, 2, 1, { 3, 11, 5 }, 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfdb_rl_query q = { "Person", cases[i].filtered ? from_alice : NULL, cases[i].nf,
                            cases[i].sorted ? "name" : NULL, false };
        cfdb_rl_plan *p;
        assert_int_equal(cfdb_rl_plan_query(md, &q, &p), 0);
        for (int m = 0; m < 2; m++) {
            int64_t ids[64];
            int n = run_plan_skip(p, prefix, cases[i].page, cases[i].skip, cases[i].clear,
                                  m ? CFDB_RL_USE_REMOTE_FETCH : CFDB_RL_SCAN_AND_FETCH, ids);
            if (n != cases[i].n)
                fail_msg("case %zu (%s): %d records, want %d", i, cfdb_rl_plan_explain(p), n,
                         cases[i].n);
            for (int j = 0; j < n; j++)
                assert_int_equal(ids[j], cases[i].ids[j]);
        }
        cfdb_rl_plan_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_non_readable_index),
        cmocka_unit_test(test_skip_each_execution),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
