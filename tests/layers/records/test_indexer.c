/* SPDX-License-Identifier: Apache-2.0 */
/* The online indexer and the upgrade rules for new indexes (src/layers/records/rl_indexer.c,
 * rl_rangeset.c, rl_store.c) against a cfdb-server of its own: a store of 500 records gets
 * three new indexes (value, count, sum) with newer metadata, which disables them (more than
 * FDBRecordStore.MAX_RECORDS_FOR_REBUILD records); a build stopped after a few batches (as a
 * crash would leave it) has recorded exactly its built range in Java's RangeSet layout
 * (P + (6, subspace key) + pack((b"\x00")) = the next record's packed primary key); saves
 * while the index is write-only, inside and outside the built range; a second build resumes
 * and marks the index readable; every index then equals the one a store that had the index
 * from the start holds for the same records. Small stores build new indexes in the open
 * transaction; WRITE_ONLY can be asked for instead of DISABLED. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../api/api_helpers.h"
#include "../../../src/layers/dir_io.h"
#include "error_codes.h"
#include "cfdb/records/store.h"
#include "rl_internal.h"
#include "rl_test_util.h"

static cfdb_arena arena;

static int group_setup(void **state)
{
    (void)state;
    cfdb_arena_init(&arena);
    return api_env_setup(NULL) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cfdb_arena_free(&arena);
    return api_env_teardown();
}

#define F(name) cfdb_kex_field(&arena, name, CFDB_KEX_SCALAR)

/* Metadata version 1 (no indexes) or 2 (three indexes added at version 2). */
static cfdb_rl_metadata *metadata(int32_t version)
{
    cfdb_pb_msg *m = rlt_base_metadata(&arena, version);
    if (version >= 2) {
        cfdb_pb_msg *ix[3];
        ix[0] = rlt_add_index(&arena, m, "by_name", "value", F("name"), "Person");
        ix[1] = rlt_add_index(&arena, m, "per_color", "count", cfdb_kex_grouping(&arena, F("color"), 0),
                              "Person");
        const cfdb_kex *cs[] = { F("color"), F("s32") };
        ix[2] = rlt_add_index(&arena, m, "sum_s32", "sum",
                              cfdb_kex_grouping(&arena, cfdb_kex_then(&arena, cs, 2), 1), "Person");
        for (int i = 0; i < 3; i++)
            rl_set_int(ix[i], "last_modified_version", 2);
    }
    return rlt_load(&arena, m);
}

static cfdb_pb_msg *person(const cfdb_rl_metadata *md, int64_t id, int variant)
{
    const cfdb_rl_record_type *t = cfdb_rl_record_type_by_name(md, "Person");
    cfdb_pb_msg *m = cfdb_pb_msg_new(&arena, t->descriptor);
    cfdb_pb_value v;
    v.i = id;
    cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "id"), v);
    char *name = cfdb_arena_alloc(&arena, 16);
    snprintf(name, 16, "n%03d", (int)((id * 7 + variant) % 97));
    v.s = cfdb_bytes_str(name);
    cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "name"), v);
    v.i = 1 + (id + variant) % 2;
    cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "color"), v);
    v.i = (id % 13) - 6 + variant;
    cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "s32"), v);
    return m;
}

typedef struct save_batch {
    const cfdb_rl_metadata *md;
    cfdb_bytes prefix;
    const cfdb_rl_open_options *opts;
    int64_t first, last;
    int variant;
} save_batch;

static int run_batch(FDBTransaction *tr, save_batch *b)
{
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open_with(tr, b->md, b->prefix, CFDB_RL_CREATE_OR_OPEN, b->opts, &s);
    for (int64_t id = b->first; id <= b->last && !rc; id++)
        rc = cfdb_rl_store_save(s, tr, &arena, person(b->md, id, b->variant), NULL);
    if (!rc)
        rc = cfdb_rl_store_prepare_commit(s, tr);
    cfdb_rl_store_free(s);
    return rc;
}

/* Saves ids first..last (100 per transaction). */
static int save_range(const cfdb_rl_metadata *md, cfdb_bytes prefix, int64_t first, int64_t last,
                      int variant, const cfdb_rl_open_options *opts)
{
    for (int64_t at = first; at <= last; at += 100) {
        save_batch b = { md, prefix, opts, at, at + 99 < last ? at + 99 : last, variant };
        FDBTransaction *tr = api_tr();
        int err;
        for (;;) {
            err = run_batch(tr, &b);
            if (!err)
                err = api_commit(tr);
            if (!err || api_on_error(tr, err))
                break;
        }
        fdb_transaction_destroy(tr);
        if (err)
            return err;
    }
    return 0;
}

static dir_kv *read_under(cfdb_bytes p, cfdb_bytes space, uint32_t *n)
{
    FDBTransaction *tr = api_tr();
    dir_kv *kvs = NULL;
    cfdb_bytes b = rlt_cat(&arena, p, space);
    assert_int_equal(dir_get_all(tr, &arena, b, rlt_cat(&arena, b, BYTES(0xff)), &kvs, n), 0);
    fdb_transaction_destroy(tr);
    return kvs;
}

/* Opens the store with md (committing any upgrade) and returns the index's state. */
static cfdb_rl_index_state state_of(const cfdb_rl_metadata *md, cfdb_bytes p, const char *name)
{
    FDBTransaction *tr = api_tr();
    cfdb_rl_index_state st = CFDB_RL_INDEX_READABLE;
    for (;;) {
        cfdb_rl_store *s;
        int err = cfdb_rl_store_open(tr, md, p, CFDB_RL_OPEN, &s);
        if (!err) {
            st = cfdb_rl_store_index_state(s, name);
            cfdb_rl_store_free(s);
            err = api_commit(tr);
        }
        if (!err)
            break;
        assert_int_equal(api_on_error(tr, err), 0);
    }
    fdb_transaction_destroy(tr);
    return st;
}

/* Marks an index in its own transaction. */
static int mark(const cfdb_rl_metadata *md, cfdb_bytes p, const char *name, cfdb_rl_index_state st)
{
    FDBTransaction *tr = api_tr();
    cfdb_rl_store *s;
    int err = cfdb_rl_store_open(tr, md, p, CFDB_RL_OPEN, &s);
    if (!err) {
        err = cfdb_rl_store_mark_index(s, tr, name, st);
        cfdb_rl_store_free(s);
    }
    if (!err)
        err = api_commit(tr);
    fdb_transaction_destroy(tr);
    return err;
}

/* The index spaces P + (2) of two stores are equal, byte for byte after the prefixes. */
static void expect_same_indexes(cfdb_bytes p, cfdb_bytes ref)
{
    uint32_t n, m;
    dir_kv *a = read_under(p, BYTES(0x15, 0x02), &n);
    dir_kv *b = read_under(ref, BYTES(0x15, 0x02), &m);
    assert_int_equal(n, m);
    assert_true(n > 0);
    for (uint32_t i = 0; i < n; i++) {
        cfdb_bytes ka = cfdb_bytes_make(a[i].key.ptr + p.len, a[i].key.len - p.len);
        cfdb_bytes kb = cfdb_bytes_make(b[i].key.ptr + ref.len, b[i].key.len - ref.len);
        if (!cfdb_bytes_eq(ka, kb) || !cfdb_bytes_eq(a[i].value, b[i].value))
            fail_msg("index pair %u differs", i);
    }
}

static void test_build_interrupted_and_resumed(void **state)
{
    (void)state;
    cfdb_rl_metadata *md1 = metadata(1), *md2 = metadata(2);
    cfdb_bytes p = rlt_prefix(&arena, "rb"), ref = rlt_prefix(&arena, "rb");
    assert_int_equal(save_range(md1, p, 1, 500, 0, NULL), 0);
    /* Newer metadata: 500 records > 200, so the new indexes are disabled (Java's default):
     * P + (5, "by_name") = pack((2)). */
    assert_int_equal(state_of(md2, p, "by_name"), CFDB_RL_INDEX_DISABLED);
    uint32_t n;
    dir_kv *st = read_under(p, BYTES(0x15, 0x05), &n);
    assert_int_equal(n, 3);
    assert_true(cfdb_bytes_eq(st[0].key,
                              rlt_cat(&arena, p, BYTES(0x15, 0x05, 0x02, 'b', 'y', '_', 'n', 'a', 'm', 'e', 0x00))));
    assert_true(cfdb_bytes_eq(st[0].value, BYTES(0x15, 0x02)));
    /* Saves while disabled do not touch the index. */
    assert_int_equal(save_range(md2, p, 7, 7, 1, NULL), 0);
    read_under(p, BYTES(0x15, 0x02), &n);
    assert_int_equal(n, 0);

    /* Build, stopped after 3 batches of 64 (as a crash would). */
    const char *names[] = { "by_name", "per_color", "sum_s32" };
    for (int i = 0; i < 3; i++) {
        cfdb_rl_indexer_options o = { .max_records = 64, .max_batches = 3 };
        cfdb_rl_indexer_stats stats;
        assert_int_equal(cfdb_rl_index_build(g_env.db, md2, p, names[i], &o, &stats), 0);
        assert_int_equal(stats.batches, 3);
        assert_int_equal(stats.records, 192);
        assert_false(stats.readable);
        assert_int_equal(state_of(md2, p, names[i]), CFDB_RL_INDEX_WRITE_ONLY);
    }
    /* The built range: [b"\x00", pack((1, 193))): P + (6, "by_name", b"\x00") = 15 01 15 c1. */
    dir_kv *rs = read_under(p, BYTES(0x15, 0x06, 0x02, 'b', 'y', '_', 'n', 'a', 'm', 'e', 0x00), &n);
    assert_int_equal(n, 1);
    assert_true(cfdb_bytes_eq(rs[0].key, rlt_cat(&arena, p, BYTES(0x15, 0x06, 0x02, 'b', 'y', '_', 'n', 'a', 'm', 'e',
                                                      0x00, 0x01, 0x00, 0xff, 0x00))));
    assert_true(cfdb_bytes_eq(rs[0].value, BYTES(0x15, 0x01, 0x15, 0xc1)));

    /* Readable before it is built: refused (Java's IndexNotBuiltException). */
    assert_int_equal(mark(md2, p, "by_name", CFDB_RL_INDEX_READABLE), CFDB_ERR_CLIENT_INVALID_OPERATION);

    /* Saves while write-only: inside the built range (ids 5, 100), outside (300, 450), new
     * (600..610) and deletes are covered by the model test. Counts and sums change only for
     * records in built ranges; the builder adds the others. */
    assert_int_equal(save_range(md2, p, 5, 5, 3, NULL), 0);
    assert_int_equal(save_range(md2, p, 100, 100, 3, NULL), 0);
    assert_int_equal(save_range(md2, p, 300, 300, 3, NULL), 0);
    assert_int_equal(save_range(md2, p, 450, 450, 3, NULL), 0);
    assert_int_equal(save_range(md2, p, 600, 610, 3, NULL), 0);

    /* Resume: the rest, then readable (state key and built ranges gone). */
    for (int i = 0; i < 3; i++) {
        cfdb_rl_indexer_options o = { .max_records = 64 };
        cfdb_rl_indexer_stats stats;
        assert_int_equal(cfdb_rl_index_build(g_env.db, md2, p, names[i], &o, &stats), 0);
        assert_true(stats.readable);
        assert_int_equal(stats.records, 500 + 11 - 192);
        assert_int_equal(state_of(md2, p, names[i]), CFDB_RL_INDEX_READABLE);
    }
    read_under(p, BYTES(0x15, 0x05), &n);
    assert_int_equal(n, 0);
    read_under(p, BYTES(0x15, 0x06), &n);
    assert_int_equal(n, 0);

    /* The reference: the same final records saved with the indexes from the start. */
    assert_int_equal(save_range(md2, ref, 1, 500, 0, NULL), 0);
    assert_int_equal(save_range(md2, ref, 7, 7, 1, NULL), 0);
    int64_t changed[] = { 5, 100, 300, 450 };
    for (int i = 0; i < 4; i++)
        assert_int_equal(save_range(md2, ref, changed[i], changed[i], 3, NULL), 0);
    assert_int_equal(save_range(md2, ref, 600, 610, 3, NULL), 0);
    expect_same_indexes(p, ref);

    /* Building a readable index does nothing. */
    cfdb_rl_indexer_stats stats;
    assert_int_equal(cfdb_rl_index_build(g_env.db, md2, p, "by_name", NULL, &stats), 0);
    assert_true(stats.readable);
    assert_int_equal(stats.batches, 0);
    cfdb_rl_metadata_free(md1);
    cfdb_rl_metadata_free(md2);
}

static void test_small_store_builds_in_line(void **state)
{
    (void)state;
    cfdb_rl_metadata *md1 = metadata(1), *md2 = metadata(2);
    cfdb_bytes p = rlt_prefix(&arena, "rb"), ref = rlt_prefix(&arena, "rb");
    assert_int_equal(save_range(md1, p, 1, 150, 0, NULL), 0);
    /* 150 records: built while opening, readable at once. */
    assert_int_equal(state_of(md2, p, "per_color"), CFDB_RL_INDEX_READABLE);
    assert_int_equal(save_range(md2, ref, 1, 150, 0, NULL), 0);
    expect_same_indexes(p, ref);

    /* Asking for WRITE_ONLY instead of DISABLED on a bigger store. */
    cfdb_bytes q = rlt_prefix(&arena, "rb");
    assert_int_equal(save_range(md1, q, 1, 250, 0, NULL), 0);
    cfdb_rl_open_options wo = { .too_many_records_state = CFDB_RL_INDEX_WRITE_ONLY };
    assert_int_equal(save_range(md2, q, 1, 1, 0, &wo), 0);
    assert_int_equal(state_of(md2, q, "by_name"), CFDB_RL_INDEX_WRITE_ONLY);

    /* build_online: a small store's new index is left to the online indexer too */
    cfdb_bytes o = rlt_prefix(&arena, "rb");
    assert_int_equal(save_range(md1, o, 1, 20, 0, NULL), 0);
    cfdb_rl_open_options online = { .too_many_records_state = CFDB_RL_INDEX_DISABLED, .build_online = true };
    assert_int_equal(save_range(md2, o, 21, 21, 0, &online), 0);
    assert_int_equal(state_of(md2, o, "by_name"), CFDB_RL_INDEX_DISABLED);
    cfdb_rl_indexer_stats st;
    assert_int_equal(cfdb_rl_index_build(g_env.db, md2, o, "by_name", NULL, &st), 0);
    assert_true(st.readable);
    assert_int_equal(st.records, 21);

    /* A new index of a type cfdb cannot maintain (rank): disabled on upgrade even with few
     * records, and saves go on without it. */
    cfdb_pb_msg *mr = rlt_base_metadata(&arena, 2);
    cfdb_pb_msg *rank = rlt_add_index(&arena, mr, "rk", "rank", F("s32"), "Person");
    rl_set_int(rank, "last_modified_version", 2);
    cfdb_rl_metadata *mdr = rlt_load(&arena, mr);
    cfdb_bytes r = rlt_prefix(&arena, "rb");
    assert_int_equal(save_range(md1, r, 1, 10, 0, NULL), 0);
    assert_int_equal(state_of(mdr, r, "rk"), CFDB_RL_INDEX_DISABLED);
    assert_int_equal(save_range(mdr, r, 11, 11, 0, NULL), 0);
    cfdb_rl_metadata_free(mdr);
    cfdb_rl_metadata_free(md1);
    cfdb_rl_metadata_free(md2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_interrupted_and_resumed),
        cmocka_unit_test(test_small_store_builds_in_line),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
