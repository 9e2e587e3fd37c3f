/* SPDX-License-Identifier: Apache-2.0 */
/* Fetching the records of index entries (src/layers/records/rl_fetch.c) against a
 * cfdb-server of its own with three storage servers:
 *  - SCAN_AND_FETCH and USE_REMOTE_FETCH give the same records (ids, sizes, contents) and
 *    the same continuations for every range, direction, limit and skip tried, split records
 *    (150,000 and 250,000 bytes) included, with index and records on one storage server and
 *    on different ones (the index space moved with the control port's split/move);
 *  - orphans (an entry whose record is gone) by ERROR, SKIP and RETURN, identical both ways;
 *  - a 1,000-row scan with remote fetch is one get_mapped_range request at the server (and no
 *    other read but the store header); SCAN_AND_FETCH reads each record once with 64 reads in
 *    flight;
 *  - the fallback: a store whose prefix is not a tuple (USE_REMOTE_FETCH refused with 2108,
 *    WITH_FALLBACK answers by scan and fetch), and a transaction that wrote in the scanned
 *    range (the client refuses the mapped read) falls back with the same results. */
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
static cfdb_bytes prefix, big_prefix;

static const rls_person people[] = {
    { 1, "alice", 1, 1.5, 0 },  { 2, "bob", 2, 0.5, 0 },   { 3, "alice", 1, 2.5, 0 },
    { 4, "carol", 2, 9.0, 150000 }, { 5, "dave", 1, 0.0, 0 }, { 6, "bob", 0, 0, 0 },
    { 7, "erin", 2, 3.5, 0 },   { 8, "alice", 0, 0, 0 }, { 9, "carol", 1, 7.0, 250000 },
    { 10, "frank", 0, 0, 0 }, { 11, "bob", 1, 1.0, 0 },  { 12, NULL, 0, 0, 0 },
};
#define NPEOPLE ((int)(sizeof people / sizeof people[0]))
#define NBIG 1000

static int group_setup(void **state)
{
    (void)state;
    cfdb_arena_init(&rls_arena);
    if (api_env_setup(NULL))
        return -1;
    md = rls_metadata();
    prefix = rls_prefix(2);
    rls_save(md, prefix, people, NPEOPLE);
    big_prefix = rls_prefix(3);
    static rls_person many[NBIG];
    static char names[NBIG][16];
    for (int i = 0; i < NBIG; i++) {
        snprintf(names[i], sizeof names[i], "n%04d", (i * 7919) % NBIG);
        many[i].id = i + 1;
        many[i].name = names[i];
    }
    rls_save(md, big_prefix, many, NBIG);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cfdb_rl_metadata_free(md);
    cfdb_arena_free(&rls_arena);
    return api_env_teardown();
}

static cfdb_tuple *tup(const char *s)
{
    cfdb_tuple *t = cfdb_arena_alloc(&rls_arena, sizeof *t);
    cfdb_tuple_init(t, &rls_arena);
    assert_int_equal(cfdb_tuple_add_cstr(t, s), 0);
    return t;
}

static void assert_same(const rls_result *x, const rls_result *y)
{
    assert_int_equal(x->err, y->err);
    assert_int_equal(x->n, y->n);
    for (int i = 0; i < x->n; i++) {
        assert_int_equal(x->ids[i], y->ids[i]);
        assert_int_equal(x->bytes[i], y->bytes[i]);
        assert_int_equal(x->hash[i], y->hash[i]);
        assert_int_equal(x->versions[i].present, y->versions[i].present);
        assert_memory_equal(x->versions[i].bytes, y->versions[i].bytes, 12);
        assert_int_equal(x->conts[i].len, y->conts[i].len);
        assert_memory_equal(x->conts[i].ptr, y->conts[i].ptr, x->conts[i].len);
    }
    assert_int_equal(x->final_end, y->final_end);
    assert_int_equal(x->stop, y->stop);
    assert_int_equal(x->final_cont.len, y->final_cont.len);
    if (x->final_cont.len)
        assert_memory_equal(x->final_cont.ptr, y->final_cont.ptr, x->final_cont.len);
}

/* Both methods over several ranges, directions, limits and skips, and from every
 * continuation of the full scan. */
static void compare_methods(cfdb_bytes pre, const char *index, cfdb_rl_orphan orphans, int expect_n)
{
    cfdb_rl_range ranges[] = {
        cfdb_rl_range_all(),
        { tup("alice"), tup("carol"), CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE },
        { tup("bob"), NULL, CFDB_RL_RANGE_EXCLUSIVE, CFDB_RL_TREE_END },
    };
    rls_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        for (int rev = 0; rev < 2; rev++) {
            for (uint32_t limit = 0; limit <= 3; limit += 3) {
                for (uint32_t skip = 0; skip <= 2; skip += 2) {
                    cfdb_rl_scan_props p = { 0 };
                    p.reverse = rev;
                    p.limit = limit;
                    p.skip = skip;
                    p.orphans = orphans;
                    p.fetch = CFDB_RL_SCAN_AND_FETCH;
                    rls_scan(RLS_FETCH, md, pre, index, &ranges[r], cfdb_bytes_make(NULL, 0), &p, a);
                    p.fetch = CFDB_RL_USE_REMOTE_FETCH;
                    rls_scan(RLS_FETCH, md, pre, index, &ranges[r], cfdb_bytes_make(NULL, 0), &p, b);
                    assert_same(a, b);
                    assert_int_equal(a->used, CFDB_RL_SCAN_AND_FETCH);
                    assert_int_equal(b->used, CFDB_RL_USE_REMOTE_FETCH);
                    if (r == 0 && !limit && !skip && expect_n >= 0)
                        assert_int_equal(a->n, expect_n);
                    if (limit || skip)
                        continue;
                    /* from every continuation, without and (over the whole index) with a
                     * skip, applied again from the continuation as Java's key selector
                     * offset is */
                    rls_result *fa = malloc(sizeof *fa), *fb = malloc(sizeof *fb);
                    for (int i = 0; i < a->n; i++) {
                        for (uint32_t sk = 0; sk <= (r == 0 ? 2u : 0u); sk += 2) {
                            p.skip = sk;
                            p.fetch = CFDB_RL_SCAN_AND_FETCH;
                            rls_scan(RLS_FETCH, md, pre, index, &ranges[r], a->conts[i], &p, fa);
                            p.fetch = CFDB_RL_USE_REMOTE_FETCH;
                            rls_scan(RLS_FETCH, md, pre, index, &ranges[r], a->conts[i], &p, fb);
                            assert_same(fa, fb);
                            if (orphans == CFDB_RL_ORPHAN_SKIP)
                                continue;   /* skipped entries may be orphans: no count */
                            int left = a->n - i - 1 - (int)sk;
                            assert_int_equal(fa->n, left > 0 ? left : 0);
                            for (int j = 0; j < fa->n; j++)
                                assert_int_equal(fa->ids[j], a->ids[i + 1 + (int)sk + j]);
                        }
                        p.skip = 0;
                    }
                    free(fa);
                    free(fb);
                }
            }
        }
    }
    free(a);
    free(b);
}

static void test_same_results(void **state)
{
    (void)state;
    compare_methods(prefix, "Person$name", CFDB_RL_ORPHAN_ERROR, 12);
    compare_methods(prefix, "Person$color_score", CFDB_RL_ORPHAN_ERROR, 12);
}

static void test_split_records_fetched(void **state)
{
    (void)state;
    rls_result *r = malloc(sizeof *r);
    cfdb_rl_range carol = { tup("carol"), tup("carol"), CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE };
    for (int m = 0; m < 2; m++) {
        cfdb_rl_scan_props p = { 0 };
        p.fetch = m ? CFDB_RL_USE_REMOTE_FETCH : CFDB_RL_SCAN_AND_FETCH;
        rls_scan(RLS_FETCH, md, prefix, "Person$name", &carol, cfdb_bytes_make(NULL, 0), &p, r);
        assert_int_equal(r->err, 0);
        assert_int_equal(r->n, 2);
        assert_int_equal(r->ids[0], 4);
        assert_int_equal(r->ids[1], 9);
        assert_true(r->bytes[0] > 150000 && r->bytes[0] < 150100);
        assert_true(r->bytes[1] > 250000 && r->bytes[1] < 250100);
    }
    free(r);
}

/* Index on one storage server, records on another: the server follows the mapper across. */
static void test_separate_storage_servers(void **state)
{
    (void)state;
    /* P + (2): the index space starts here */
    char cmd[256], esc[128] = "";
    cfdb_tuple t;
    cfdb_tuple_init(&t, &rls_arena);
    cfdb_tuple_add_int(&t, 2);
    cfdb_bytes k;
    assert_int_equal(cfdb_tuple_pack(&rls_arena, prefix, &t, &k), 0);
    for (size_t i = 0; i < k.len; i++)
        sprintf(esc + 4 * i, "\\x%02x", k.ptr[i]);
    snprintf(cmd, sizeof cmd, "split %s", esc);
    assert_int_equal(api_server_control(&g_env.server, cmd, NULL, 0), 0);
    snprintf(cmd, sizeof cmd, "move %s 1", esc);
    char ans[256];
    if (api_server_control(&g_env.server, cmd, ans, sizeof ans))
        fail_msg("%s: %s", cmd, ans);
    compare_methods(prefix, "Person$name", CFDB_RL_ORPHAN_ERROR, 12);
    test_split_records_fetched(state);
}

static void test_orphans(void **state)
{
    (void)state;
    cfdb_bytes pre = rls_prefix(4);
    rls_save(md, pre, people, NPEOPLE);
    rls_orphan(pre, 3);   /* alice 3 */
    rls_orphan(pre, 9);   /* carol 9, split */
    compare_methods(pre, "Person$name", CFDB_RL_ORPHAN_SKIP, 10);
    compare_methods(pre, "Person$name", CFDB_RL_ORPHAN_RETURN, 12);
    rls_result *r = malloc(sizeof *r);
    cfdb_rl_range all = cfdb_rl_range_all();
    for (int m = 0; m < 2; m++) {
        cfdb_rl_scan_props p = { 0 };
        p.fetch = m ? CFDB_RL_USE_REMOTE_FETCH : CFDB_RL_SCAN_AND_FETCH;
        p.orphans = CFDB_RL_ORPHAN_RETURN;
        rls_scan(RLS_FETCH, md, pre, "Person$name", &all, cfdb_bytes_make(NULL, 0), &p, r);
        assert_int_equal(r->err, 0);
        /* index order 12, 1, 3, 8, 2, 6, 11, 4, 9, ...: 3 and 9 come back without records */
        assert_int_equal(r->ids[2], -1);
        assert_int_equal(r->ids[8], -1);
        assert_int_equal(r->ids[1], 1);
        p.orphans = CFDB_RL_ORPHAN_ERROR;
        rls_scan(RLS_FETCH, md, pre, "Person$name", &all, cfdb_bytes_make(NULL, 0), &p, r);
        assert_int_equal(r->err, CFDB_ERR_SERIALIZATION_FAILED);
    }
    free(r);
}

static void test_request_counts(void **state)
{
    (void)state;
    rls_result *r = malloc(sizeof *r);
    cfdb_rl_range all = cfdb_rl_range_all();
    for (int rev = 0; rev < 2; rev++) {
        unsigned long long reads0, mapped0, reads1, mapped1;
        cfdb_rl_scan_props p = { 0 };
        p.reverse = rev;
        p.limit = NBIG;
        p.fetch = CFDB_RL_USE_REMOTE_FETCH;
        rls_counters(&reads0, &mapped0);
        rls_scan(RLS_FETCH, md, big_prefix, "Person$name", &all, cfdb_bytes_make(NULL, 0), &p, r);
        rls_counters(&reads1, &mapped1);
        assert_int_equal(r->err, 0);
        assert_int_equal(r->n, NBIG);
        assert_int_equal(r->requests, 1);
        assert_int_equal(mapped1 - mapped0, 1);
        assert_int_equal(reads1 - reads0, 3);   /* the store header, the index states, the mapped read */
        p.fetch = CFDB_RL_SCAN_AND_FETCH;
        rls_counters(&reads0, &mapped0);
        rls_scan(RLS_FETCH, md, big_prefix, "Person$name", &all, cfdb_bytes_make(NULL, 0), &p, r);
        rls_counters(&reads1, &mapped1);
        assert_int_equal(r->err, 0);
        assert_int_equal(r->n, NBIG);
        assert_int_equal(mapped1 - mapped0, 0);
        assert_int_equal(reads1 - reads0, 3 + NBIG);
        assert_true(r->max_in_flight >= 64);
        for (int i = 1; i < r->n; i++)
            assert_true(r->ids[i] != r->ids[i - 1]);
    }
    free(r);
}

/* Remote fetch cannot express a store whose prefix is not a tuple. */
static void test_fallback_prefix(void **state)
{
    (void)state;
    cfdb_bytes raw = cfdb_bytes_str("rlscan-raw/");
    rls_save(md, raw, people, 4);
    rls_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    cfdb_rl_range all = cfdb_rl_range_all();
    cfdb_rl_scan_props p = { 0 };
    p.fetch = CFDB_RL_USE_REMOTE_FETCH;
    rls_scan(RLS_FETCH, md, raw, "Person$name", &all, cfdb_bytes_make(NULL, 0), &p, a);
    assert_int_equal(a->err, CFDB_ERR_UNSUPPORTED_OPERATION);
    p.fetch = CFDB_RL_USE_REMOTE_FETCH_WITH_FALLBACK;
    rls_scan(RLS_FETCH, md, raw, "Person$name", &all, cfdb_bytes_make(NULL, 0), &p, a);
    p.fetch = CFDB_RL_SCAN_AND_FETCH;
    rls_scan(RLS_FETCH, md, raw, "Person$name", &all, cfdb_bytes_make(NULL, 0), &p, b);
    assert_int_equal(a->used, CFDB_RL_SCAN_AND_FETCH);
    assert_int_equal(a->n, 4);
    assert_same(a, b);
    free(a);
    free(b);
}

/* A transaction that wrote inside the index range: the client refuses the mapped read
 * (get_mapped_range_reads_your_writes); WITH_FALLBACK continues by scan and fetch. */
static void test_fallback_after_write(void **state)
{
    (void)state;
    cfdb_rl_range all = cfdb_rl_range_all();
    FDBTransaction *tr = api_tr();
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_rl_store *s;
    assert_int_equal(cfdb_rl_store_open(tr, md, prefix, CFDB_RL_OPEN, &s), 0);
    /* a write in the index space, after the first entries */
    cfdb_bytes k;
    cfdb_tuple t;
    cfdb_tuple_init(&t, &a);
    cfdb_tuple_add_int(&t, 2);
    cfdb_tuple_add_cstr(&t, "Person$name");
    cfdb_tuple_add_cstr(&t, "zzz");
    assert_int_equal(cfdb_tuple_pack(&a, prefix, &t, &k), 0);
    fdb_transaction_set(tr, k.ptr, (int)k.len, (const uint8_t *)"", 0);
    /* with a skip too: the mapped read fails before delivering an entry, so the scan and
     * fetch that takes over starts where the cursor began and skips as it would have */
    for (uint32_t skip = 0; skip <= 2; skip += 2) {
    int64_t ids[2][20];
    int n[2] = { 0, 0 };
    for (int m = 0; m < 2; m++) {
        cfdb_rl_scan_props p = { 0 };
        p.skip = skip;
        p.fetch = m ? CFDB_RL_USE_REMOTE_FETCH_WITH_FALLBACK : CFDB_RL_SCAN_AND_FETCH;
        p.orphans = CFDB_RL_ORPHAN_RETURN;   /* the written entry has no record */
        cfdb_rl_cursor *c;
        assert_int_equal(cfdb_rl_scan_index_records(s, tr, cfdb_rl_index_by_name(md, "Person$name"),
                                                    &all, cfdb_bytes_make(NULL, 0), &p, &c), 0);
        for (;;) {
            cfdb_rl_item it;
            bool has;
            int rc = cfdb_rl_cursor_next(c, &a, &it, &has);
            if (rc == CFDB_ERR_SERIALIZATION_FAILED)
                break;   /* the "zzz" entry is not an index entry of this index's shape */
            assert_int_equal(rc, 0);
            if (!has)
                break;
            int64_t id = -1;
            cfdb_tuple_get_int(&it.primary_key, 1, &id);
            ids[m][n[m]++] = id;
        }
        assert_int_equal(cfdb_rl_cursor_fetch_used(c), CFDB_RL_SCAN_AND_FETCH);
        cfdb_rl_cursor_free(c);
    }
    assert_int_equal(n[0], n[1]);
    assert_true(n[0] >= 12 - (int)skip);
    for (int i = 0; i < n[0]; i++)
        assert_int_equal(ids[0][i], ids[1][i]);
    }
    cfdb_rl_store_free(s);
    cfdb_arena_free(&a);
    fdb_transaction_destroy(tr);
}

/* Checks one scan of the versioned store: every person once, split ones split, each with
 * the version it was committed with; returns the ids in order. */
static void check_versions(const rls_result *r, uint8_t (*versions)[12], int64_t *ids)
{
    assert_int_equal(r->err, 0);
    assert_int_equal(r->n, NPEOPLE);
    int split = 0;
    bool seen[NPEOPLE + 1] = { false };
    for (int i = 0; i < r->n; i++) {
        int64_t id = r->ids[i];
        assert_true(id >= 1 && id <= NPEOPLE);
        assert_false(seen[id]);
        seen[id] = true;
        ids[i] = id;
        split += r->split[i];
        assert_int_equal(r->split[i], people[id - 1].blob > 100000);
        assert_true(r->versions[i].present);
        assert_true(r->versions[i].complete);
        assert_memory_equal(r->versions[i].bytes, versions[id - 1], 12);
    }
    assert_int_equal(split, 2);
}

/* Records saved with versions (store_record_versions: P + (1, pk..., -1) beside the record's
 * pieces) come back with them from record scans and from index fetches by SCAN_AND_FETCH and
 * USE_REMOTE_FETCH, forward and reverse, split (ids 4, 9) and unsplit: the version read is
 * the commit's versionstamp and the save's local version. In the saving transaction (the
 * version still held for commit) a scan gives the incomplete version, as a load does. */
static void test_versions_scanned(void **state)
{
    (void)state;
    cfdb_rl_metadata *vmd = rls_metadata_versions();
    cfdb_bytes vpre = rls_prefix(8);
    static uint8_t versions[NPEOPLE][12];
    rls_save_versioned(vmd, vpre, people, NPEOPLE, versions);
    assert_memory_not_equal(versions[0], versions[5], 10);   /* two transactions of 5 */
    cfdb_rl_range all = cfdb_rl_range_all();
    rls_result *r = malloc(sizeof *r);
    for (int rev = 0; rev < 2; rev++) {
        int64_t first[NPEOPLE], ids[NPEOPLE];
        for (int k = 0; k < 3; k++) {
            cfdb_rl_scan_props p = { 0 };
            p.reverse = rev;
            p.fetch = k == 2 ? CFDB_RL_USE_REMOTE_FETCH : CFDB_RL_SCAN_AND_FETCH;
            rls_scan(k ? RLS_FETCH : RLS_RECORDS, vmd, vpre, k ? "Person$name" : NULL, &all,
                     cfdb_bytes_make(NULL, 0), &p, r);
            if (k)
                assert_int_equal(r->used, p.fetch);
            check_versions(r, versions, ids);
            if (k == 1)
                memcpy(first, ids, sizeof ids);
            if (k == 2)
                assert_memory_equal(first, ids, sizeof ids);
            if (k == 0)
                assert_int_equal(ids[0], rev ? 12 : 1);   /* by primary key */
        }
    }
    free(r);

    /* in the saving transaction: 10 x 0xff and the local version */
    FDBTransaction *tr = api_tr();
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_rl_store *s;
    assert_int_equal(cfdb_rl_store_open(tr, vmd, vpre, CFDB_RL_OPEN, &s), 0);
    const rls_person more[] = { { 20, "zed", 0, 0, 0 }, { 21, "zed", 0, 0, 120000 } };
    for (int i = 0; i < 2; i++)
        assert_int_equal(cfdb_rl_store_save(s, tr, &a, rls_person_msg(&a, vmd, &more[i]), NULL), 0);
    cfdb_rl_range zed = { tup("zed"), tup("zed"), CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE };
    for (int k = 0; k < 2; k++) {
        cfdb_rl_scan_props p = { 0 };
        p.reverse = true;
        cfdb_rl_cursor *c;
        if (k)
            assert_int_equal(cfdb_rl_scan_index_records(s, tr, cfdb_rl_index_by_name(vmd, "Person$name"), &zed,
                                                        cfdb_bytes_make(NULL, 0), &p, &c), 0);
        else
            assert_int_equal(cfdb_rl_scan_records(s, tr, &all, cfdb_bytes_make(NULL, 0), &p, &c), 0);
        for (int i = 0; i < 3; i++) {
            cfdb_rl_item it;
            bool has;
            assert_int_equal(cfdb_rl_cursor_next(c, &a, &it, &has), 0);
            if (k && i == 2) {   /* the index range holds the two new records only */
                assert_false(has);
                break;
            }
            assert_true(has);
            int64_t id;
            assert_int_equal(cfdb_tuple_get_int(&it.primary_key, 1, &id), 0);
            assert_true(it.version.present);
            if (i == 2) {   /* the record scan goes on to the committed 12, its version complete */
                assert_int_equal(id, 12);
                assert_true(it.version.complete);
                assert_memory_equal(it.version.bytes, versions[11], 12);
                break;
            }
            assert_int_equal(id, 21 - i);
            assert_int_equal(it.split, id == 21);
            assert_false(it.version.complete);
            for (int b = 0; b < 10; b++)
                assert_int_equal(it.version.bytes[b], 0xff);
            assert_int_equal(it.version.bytes[10], 0);
            assert_int_equal(it.version.bytes[11], id == 21 ? 1 : 0);
        }
        cfdb_rl_cursor_free(c);
    }
    cfdb_rl_store_free(s);
    cfdb_arena_free(&a);
    fdb_transaction_destroy(tr);
    cfdb_rl_metadata_free(vmd);
}

static void test_mapper_bytes(void **state)
{
    (void)state;
    /* prefix ("rlscan", 2): 02 "rlscan" 00 15 02; records R = prefix + 15 01; the index
     * subspace prefix + (2, "Person$name") has 4 elements; Person$name's entry is
     * (name, record type key, id): the primary key is at 1 and 2, so K[5], K[6]. */
    FDBTransaction *tr = api_tr();
    cfdb_rl_store *s;
    assert_int_equal(cfdb_rl_store_open(tr, md, prefix, CFDB_RL_OPEN, &s), 0);
    cfdb_bytes m;
    assert_int_equal(cfdb_rl_remote_fetch_mapper(s, cfdb_rl_index_by_name(md, "Person$name"), &rls_arena, &m), 0);
    static const uint8_t want[] = {
        0x02, 'r', 'l', 's', 'c', 'a', 'n', 0x00, 0x15, 0x02, 0x15, 0x01,
        0x02, '{', 'K', '[', '5', ']', '}', 0x00,
        0x02, '{', 'K', '[', '6', ']', '}', 0x00,
        0x02, '{', '.', '.', '.', '}', 0x00,
    };
    assert_int_equal(m.len, sizeof want);
    assert_memory_equal(m.ptr, want, sizeof want);
    /* (color, score): entry (color, score, rtk, id): K[6], K[7] */
    assert_int_equal(cfdb_rl_remote_fetch_mapper(s, cfdb_rl_index_by_name(md, "Person$color_score"), &rls_arena, &m), 0);
    assert_int_equal(m.len, sizeof want);
    assert_int_equal(m.ptr[16], '6');
    assert_int_equal(m.ptr[24], '7');
    cfdb_rl_store_free(s);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapper_bytes),
        cmocka_unit_test(test_same_results),
        cmocka_unit_test(test_split_records_fetched),
        cmocka_unit_test(test_orphans),
        cmocka_unit_test(test_request_counts),
        cmocka_unit_test(test_fallback_prefix),
        cmocka_unit_test(test_fallback_after_write),
        cmocka_unit_test(test_separate_storage_servers),
        cmocka_unit_test(test_versions_scanned),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
