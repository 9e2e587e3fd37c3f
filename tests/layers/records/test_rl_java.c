/* SPDX-License-Identifier: Apache-2.0 */
/* Where a Java Record Layer application and cfdb share a store: the bytes cfdb writes at the
 * edges where the two used to differ, against a cfdb-server of its own. Every expected key
 * and value below is derived by hand from the Java source of fdb-record-layer (files under
 * fdb-record-layer-core/src/main/java/com/apple/foundationdb/record/, methods named at each
 * vector), never from cfdb's own encoders.
 *
 * Tuple codes (FoundationDB tuple layer): 0x01 bytes ... 0x00, 0x02 string ... 0x00,
 * 0x14 zero, 0x15 NN one-byte positive integer, 0x13 0xfe = -1, 0x30 + 16 bytes UUID,
 * 0x33 + 12 bytes versionstamp. P is the store prefix; keyspaces (FDBRecordStoreKeyspace)
 * 0 header, 1 records, 2 indexes, 5 index states, 6 index ranges, 8 record versions (old
 * format), 9 index build data. Person (tests/vectors/records/rl_types.proto) has primary key
 * (record type key 1, id). */
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
#include "cfdb/errors.h"
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

/* A field expression with a null interpretation other than the default. */
static const cfdb_kex *field_ni(const char *name, uint8_t ni)
{
    cfdb_kex *k = cfdb_arena_alloc(&arena, sizeof *k);
    assert_non_null(k);
    *k = *F(name);
    k->null_interpretation = ni;
    return k;
}

/* ---- transactions on a store ---- */

typedef int (*store_fn)(cfdb_rl_store *s, FDBTransaction *tr, void *ctx);

/* Opens the store (creating it), runs fn, writes held versions and commits, retrying. */
static int with_store(const cfdb_rl_metadata *md, cfdb_bytes prefix, store_fn fn, void *ctx)
{
    FDBTransaction *tr = api_tr();
    int err;
    for (;;) {
        cfdb_rl_store *s = NULL;
        err = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_CREATE_OR_OPEN, &s);
        if (!err && fn)
            err = fn(s, tr, ctx);
        if (!err)
            err = cfdb_rl_store_prepare_commit(s, tr);
        cfdb_rl_store_free(s);
        if (!err)
            err = api_commit(tr);
        if (!err || !fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, err))
            break;
        if (api_on_error(tr, err))
            break;
    }
    fdb_transaction_destroy(tr);
    return err;
}

static int save_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    return cfdb_rl_store_save(s, tr, &arena, ctx, NULL);
}

static int delete_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    return cfdb_rl_store_delete(s, tr, &arena, ctx, NULL);
}

static cfdb_tuple *pk_of(int64_t type_key, int64_t id)
{
    cfdb_tuple *t = cfdb_arena_alloc(&arena, sizeof *t);
    cfdb_tuple_init(t, &arena);
    cfdb_tuple_add_int(t, type_key);
    cfdb_tuple_add_int(t, id);
    return t;
}

/* A Person of rl_types.proto (name NULL: unset). */
static cfdb_pb_msg *person(const cfdb_rl_metadata *md, int64_t id, const char *name)
{
    const cfdb_rl_record_type *t = cfdb_rl_record_type_by_name(md, "Person");
    cfdb_pb_msg *m = cfdb_pb_msg_new(&arena, t->descriptor);
    cfdb_pb_value v;
    v.i = id;
    cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "id"), v);
    if (name) {
        v.s = cfdb_bytes_str(name);
        cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "name"), v);
    }
    return m;
}

/* ---- reading what is stored ---- */

static int read_range_fn(FDBTransaction *tr, void *ctx)
{
    void **io = ctx;
    cfdb_bytes *b = io[0];
    return dir_get_all(tr, &arena, b[0], b[1], (dir_kv **)io[1], (uint32_t *)io[2]);
}

/* Every pair under P + space (committed). */
static dir_kv *read_under(cfdb_bytes p, cfdb_bytes space, uint32_t *n)
{
    cfdb_bytes range[2] = { rlt_cat(&arena, p, space),
                            rlt_cat(&arena, rlt_cat(&arena, p, space), BYTES(0xff)) };
    dir_kv *kvs = NULL;
    void *io[3] = { range, &kvs, n };
    FDBTransaction *tr = api_tr();
    assert_int_equal(read_range_fn(tr, io), 0);
    fdb_transaction_destroy(tr);
    return kvs;
}

static void dump(cfdb_bytes p, const dir_kv *kvs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t b = p.len; b < kvs[i].key.len; b++)
            print_message("%02x ", kvs[i].key.ptr[b]);
        print_message("= ");
        for (uint32_t b = 0; b < kvs[i].value.len; b++)
            print_message("%02x ", kvs[i].value.ptr[b]);
        print_message("\n");
    }
}

/* The pairs under P + space are exactly keys/values (P + key each; a NULL values entry
 * matches any value of that key). */
static void expect_under(cfdb_bytes p, cfdb_bytes space, const cfdb_bytes *keys,
                         const cfdb_bytes *values, uint32_t n)
{
    uint32_t count;
    dir_kv *kvs = read_under(p, space, &count);
    bool ok = count == n;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = cfdb_bytes_eq(kvs[i].key, rlt_cat(&arena, p, keys[i])) &&
             (!values || !values[i].ptr || cfdb_bytes_eq(kvs[i].value, values[i]));
    if (!ok) {
        dump(p, kvs, count);
        fail_msg("%u pairs under the space, want %u (listed above)", count, n);
    }
}

#define EMPTY ((cfdb_bytes){ (const uint8_t *)"", 0 })

/* ---- primary key components in index keys ---- */

/* An index on (name, id NOT_NULL) of Person (pk: record type key, id). Java's
 * FieldKeyExpression.equals compares only field name and fan type, so
 * RecordMetaDataBuilder.buildPrimaryKeyComponentPositions finds pk column 1 (id) at index
 * column 1, and FDBRecordStoreBase.indexEntryKey / Index.trimPrimaryKey append only the
 * record type key: P + (2, "pn", "a", 5, 1) = ''. (Before: P + (2, "pn", "a", 5, 1, 5),
 * which Java's update never clears.) */
static void test_pk_positions_ignore_null_interpretation(void **state)
{
    (void)state;
    cfdb_pb_msg *m = rlt_base_metadata(&arena, 1);
    const cfdb_kex *cols[] = { F("name"), field_ni("id", CFDB_KEX_NOT_NULL) };
    rlt_add_index(&arena, m, "pn", "value", cfdb_kex_then(&arena, cols, 2), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    const cfdb_rl_index *ix = cfdb_rl_index_by_name(md, "pn");
    assert_non_null(ix->pk_positions);
    assert_int_equal(ix->pk_position_count, 2);
    assert_int_equal(ix->pk_positions[0], -1);
    assert_int_equal(ix->pk_positions[1], 1);

    cfdb_bytes p = rlt_prefix(&arena, "rj");
    assert_int_equal(with_store(md, p, save_fn, person(md, 5, "a")), 0);
    cfdb_bytes ixs = BYTES(0x15, 0x02, 0x02, 'p', 'n', 0x00);
    cfdb_bytes k1 = BYTES(0x15, 0x02, 0x02, 'p', 'n', 0x00, 0x02, 'a', 0x00, 0x15, 0x05, 0x15, 0x01);
    cfdb_bytes v1 = EMPTY;
    expect_under(p, ixs, &k1, &v1, 1);
    /* An update clears exactly that key (what Java's update would clear too). */
    assert_int_equal(with_store(md, p, save_fn, person(md, 5, "b")), 0);
    cfdb_bytes k2 = BYTES(0x15, 0x02, 0x02, 'p', 'n', 0x00, 0x02, 'b', 0x00, 0x15, 0x05, 0x15, 0x01);
    expect_under(p, ixs, &k2, &v1, 1);
    /* A delete clears it too. */
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 5)), 0);
    expect_under(p, ixs, NULL, NULL, 0);
    cfdb_rl_metadata_free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pk_positions_ignore_null_interpretation),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
