/* SPDX-License-Identifier: Apache-2.0 */
/* Record store (src/layers/records/rl_store.c) against a cfdb-server of its own, through the
 * public fdb_c.h API: the store header on create and open (stale metadata, upgrades, too-new
 * formats, non-empty stores without a header), records saved and loaded by primary key with
 * the key and value bytes the Java Record Layer writes (hand-derived below), long records
 * split into 100,000-byte pieces and put back together, deletes, the old unsuffixed layout. */
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
static cfdb_rl_metadata *md12;        /* version 12, no splitting */
static cfdb_rl_metadata *md12_split;  /* version 12, split_long_records */
static const cfdb_rl_record_type *person;
static cfdb_bytes person_bin;         /* protoc's encoding of person.txtpb */

static int group_setup(void **state)
{
    cfdb_arena_init(&arena);
    if (api_env_setup(NULL))
        return -1;
    md12 = rlt_load(&arena, rlt_base_metadata(&arena, 12));
    cfdb_pb_msg *m = rlt_base_metadata(&arena, 12);
    rl_set_int(m, "split_long_records", 1);
    md12_split = rlt_load(&arena, m);
    person = cfdb_rl_record_type_by_name(md12, "Person");
    person_bin = rlt_read_vector(&arena, "person.bin");
    return 0;
}

static int group_teardown(void **state)
{
    cfdb_rl_metadata_free(md12);
    cfdb_rl_metadata_free(md12_split);
    cfdb_arena_free(&arena);
    return api_env_teardown();
}

typedef int (*txn_fn)(FDBTransaction *tr, void *ctx);

/* Runs fn in a transaction with the usual retry loop; an error of fn that on_error does not
 * retry is returned. */
static int run(txn_fn fn, void *ctx)
{
    FDBTransaction *tr = api_tr();
    int err;
    for (;;) {
        err = fn(tr, ctx);
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

typedef struct op {
    const cfdb_rl_metadata *md;
    cfdb_bytes prefix;
    cfdb_rl_open_mode mode;
    const cfdb_pb_msg *record;      /* save */
    const cfdb_tuple *pk;           /* load, delete */
    bool existed;
    cfdb_rl_loaded loaded;
    int32_t format, md_version;
    bool omit;
} op;

static int do_open(FDBTransaction *tr, void *ctx)
{
    op *o = ctx;
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open(tr, o->md, o->prefix, o->mode, &s);
    if (rc)
        return rc;
    o->format = cfdb_rl_store_format_version(s);
    o->md_version = cfdb_rl_store_metadata_version(s);
    o->omit = cfdb_rl_store_omits_unsplit_suffix(s);
    cfdb_rl_store_free(s);
    return 0;
}

static int do_save(FDBTransaction *tr, void *ctx)
{
    op *o = ctx;
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open(tr, o->md, o->prefix, CFDB_RL_CREATE_OR_OPEN, &s);
    if (rc)
        return rc;
    rc = cfdb_rl_store_save(s, tr, &arena, o->record, &o->existed);
    if (!rc)
        rc = cfdb_rl_store_prepare_commit(s, tr);
    cfdb_rl_store_free(s);
    return rc;
}

static int do_load(FDBTransaction *tr, void *ctx)
{
    op *o = ctx;
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open(tr, o->md, o->prefix, CFDB_RL_OPEN, &s);
    if (rc)
        return rc;
    rc = cfdb_rl_store_load(s, tr, &arena, o->pk, &o->loaded);
    cfdb_rl_store_free(s);
    return rc;
}

static int do_delete(FDBTransaction *tr, void *ctx)
{
    op *o = ctx;
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open(tr, o->md, o->prefix, CFDB_RL_OPEN, &s);
    if (rc)
        return rc;
    rc = cfdb_rl_store_delete(s, tr, &arena, o->pk, &o->existed);
    cfdb_rl_store_free(s);
    return rc;
}

static bool read_key(cfdb_bytes key, cfdb_bytes *value)
{
    static uint8_t buf[200000];
    int present = 0, len = 0;
    assert_int_equal(api_read_committed(key.ptr, (int)key.len, &present, buf, sizeof buf, &len), 0);
    if (value)
        *value = cfdb_bytes_make(cfdb_arena_dup(&arena, buf, (size_t)len), (size_t)len);
    return present != 0;
}

static cfdb_pb_msg *ann(void)
{
    cfdb_pb_msg *m;
    assert_int_equal(cfdb_pb_decode(&arena, person->descriptor, person_bin.ptr, person_bin.len, 0, &m,
                                    NULL), 0);
    return m;
}

static cfdb_tuple *pk_of(int64_t type_key, int64_t id)
{
    cfdb_tuple *t = cfdb_arena_alloc(&arena, sizeof *t);
    cfdb_tuple_init(t, &arena);
    cfdb_tuple_add_int(t, type_key);
    cfdb_tuple_add_int(t, id);
    return t;
}

static void test_create_and_header(void **state)
{
    op o = { .md = md12, .prefix = rlt_prefix(&arena, "rl"), .mode = CFDB_RL_OPEN };
    assert_int_equal(run(do_open, &o), CFDB_ERR_CLIENT_INVALID_OPERATION);   /* no store yet */
    o.mode = CFDB_RL_CREATE;
    assert_int_equal(run(do_open, &o), 0);
    assert_int_equal(o.format, 7);
    assert_int_equal(o.md_version, 12);
    assert_int_equal(run(do_open, &o), CFDB_ERR_CLIENT_INVALID_OPERATION);   /* exists */
    o.mode = CFDB_RL_OPEN;
    assert_int_equal(run(do_open, &o), 0);

    /* P + (0): DataStoreInfo { formatVersion: 7, metaDataversion: 12, lastUpdateTime: ... } */
    cfdb_bytes header;
    assert_true(read_key(rlt_cat(&arena, o.prefix, BYTES(0x14)), &header));
    assert_true(header.len > 6);
    assert_memory_equal(header.ptr, ((uint8_t[]){ 0x08, 0x07, 0x10, 0x0c, 0x28 }), 5);
}

static void test_metadata_versions(void **state)
{
    op o = { .md = md12, .prefix = rlt_prefix(&arena, "rl"), .mode = CFDB_RL_CREATE };
    assert_int_equal(run(do_open, &o), 0);
    /* Older metadata than the store's: refused. */
    cfdb_rl_metadata *md11 = rlt_load(&arena, rlt_base_metadata(&arena, 11));
    o.md = md11;
    o.mode = CFDB_RL_OPEN;
    assert_int_equal(run(do_open, &o), CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* Newer metadata: the header is upgraded, and then 12 is stale. */
    cfdb_rl_metadata *md13 = rlt_load(&arena, rlt_base_metadata(&arena, 13));
    o.md = md13;
    assert_int_equal(run(do_open, &o), 0);
    cfdb_bytes header;
    assert_true(read_key(rlt_cat(&arena, o.prefix, BYTES(0x14)), &header));
    assert_memory_equal(header.ptr, ((uint8_t[]){ 0x08, 0x07, 0x10, 0x0d }), 4);
    o.md = md12;
    assert_int_equal(run(do_open, &o), CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_rl_metadata_free(md11);
    cfdb_rl_metadata_free(md13);
}

static void test_headers_from_elsewhere(void **state)
{
    /* A format version past what cfdb reads. */
    cfdb_bytes p = rlt_prefix(&arena, "rl"), hk = rlt_cat(&arena, p, BYTES(0x14));
    cfdb_bytes h99 = BYTES(0x08, 0x63, 0x10, 0x0c);
    assert_int_equal(api_set_committed(hk.ptr, (int)hk.len, h99.ptr, (int)h99.len), 0);
    op o = { .md = md12, .prefix = p, .mode = CFDB_RL_CREATE_OR_OPEN };
    assert_int_equal(run(do_open, &o), CFDB_ERR_UNSUPPORTED_FORMAT_VERSION);
    /* A header that is not a DataStoreInfo. */
    cfdb_bytes junk = BYTES(0x08);
    assert_int_equal(api_set_committed(hk.ptr, (int)hk.len, junk.ptr, (int)junk.len), 0);
    assert_int_equal(run(do_open, &o), CFDB_ERR_SERIALIZATION_FAILED);
    /* Data but no header. */
    p = rlt_prefix(&arena, "rl");
    cfdb_bytes rec = rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x05, 0x14));
    assert_int_equal(api_set_committed(rec.ptr, (int)rec.len, "x", 1), 0);
    o.prefix = p;
    assert_int_equal(run(do_open, &o), CFDB_ERR_CLIENT_INVALID_OPERATION);

    /* An old store (format 4) without split_long_records keeps unsplit records unsuffixed;
     * the header is upgraded to 7 with omit_unsplit_record_suffix. */
    p = rlt_prefix(&arena, "rl");
    hk = rlt_cat(&arena, p, BYTES(0x14));
    cfdb_bytes h4 = BYTES(0x08, 0x04, 0x10, 0x0c);
    assert_int_equal(api_set_committed(hk.ptr, (int)hk.len, h4.ptr, (int)h4.len), 0);
    o.prefix = p;
    o.mode = CFDB_RL_OPEN;
    assert_int_equal(run(do_open, &o), 0);
    assert_int_equal(o.format, 7);
    assert_true(o.omit);
    cfdb_bytes header;
    assert_true(read_key(hk, &header));
    assert_memory_equal(header.ptr, ((uint8_t[]){ 0x08, 0x07, 0x10, 0x0c, 0x28 }), 5);
    assert_int_equal(header.ptr[header.len - 2], 0x30);    /* omit_unsplit_record_suffix (6) */
    assert_int_equal(header.ptr[header.len - 1], 0x01);
    op s = { .md = md12, .prefix = p, .record = ann() };
    assert_int_equal(run(do_save, &s), 0);
    cfdb_bytes v;
    assert_true(read_key(rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07)), &v));   /* no (0) */
    assert_false(read_key(rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07, 0x14)), NULL));
    op l = { .md = md12, .prefix = p, .pk = pk_of(1, 7) };
    assert_int_equal(run(do_load, &l), 0);
    assert_true(l.loaded.found);
    op d = { .md = md12, .prefix = p, .pk = pk_of(1, 7) };
    assert_int_equal(run(do_delete, &d), 0);
    assert_true(d.existed);
    assert_false(read_key(rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07)), NULL));
}

static void test_save_load_delete(void **state)
{
    cfdb_bytes p = rlt_prefix(&arena, "rl");
    op s = { .md = md12, .prefix = p, .record = ann() };
    assert_int_equal(run(do_save, &s), 0);
    assert_false(s.existed);

    /* Key P + (1, 1, 7, 0): records keyspace, Person's record type key 1, id 7, unsplit.
     * Value: the union with the record in field 1 (_Person): 0a <len> <record bytes>. */
    cfdb_bytes v;
    assert_true(read_key(rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07, 0x14)), &v));
    assert_int_equal(v.ptr[0], 0x0a);
    assert_true(person_bin.len < 128);
    assert_int_equal(v.ptr[1], person_bin.len);
    assert_int_equal(v.len, person_bin.len + 2);
    assert_memory_equal(v.ptr + 2, person_bin.ptr, person_bin.len);

    op l = { .md = md12, .prefix = p, .pk = pk_of(1, 7) };
    assert_int_equal(run(do_load, &l), 0);
    assert_true(l.loaded.found);
    assert_ptr_equal(l.loaded.type, person);
    cfdb_bytes again;
    assert_int_equal(cfdb_pb_encode(l.loaded.record, &arena, &again), 0);
    assert_true(cfdb_bytes_eq(again, person_bin));
    op miss = { .md = md12, .prefix = p, .pk = pk_of(1, 8) };
    assert_int_equal(run(do_load, &miss), 0);
    assert_false(miss.loaded.found);

    assert_int_equal(run(do_save, &s), 0);
    assert_true(s.existed);
    op d = { .md = md12, .prefix = p, .pk = pk_of(1, 7) };
    assert_int_equal(run(do_delete, &d), 0);
    assert_true(d.existed);
    assert_int_equal(run(do_load, &l), 0);
    assert_false(l.loaded.found);
    assert_int_equal(run(do_delete, &d), 0);
    assert_false(d.existed);

    /* Metadata that stores record versions: P + (1, 1, 7, -1) = pack((versionstamp)), the
     * commit version then local version 0 (more in test_indexes.c). */
    cfdb_pb_msg *vm = rlt_base_metadata(&arena, 12);
    rl_set_int(vm, "store_record_versions", 1);
    cfdb_rl_metadata *mdv = rlt_load(&arena, vm);
    const cfdb_rl_record_type *pv = cfdb_rl_record_type_by_name(mdv, "Person");
    cfdb_pb_msg *rv;
    assert_int_equal(cfdb_pb_decode(&arena, pv->descriptor, person_bin.ptr, person_bin.len, 0, &rv, NULL), 0);
    op sv = { .md = mdv, .prefix = p, .record = rv };
    assert_int_equal(run(do_save, &sv), 0);
    cfdb_bytes vval;
    assert_true(read_key(rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07, 0x13, 0xfe)), &vval));
    assert_int_equal(vval.len, 13);
    assert_int_equal(vval.ptr[0], 0x33);
    assert_int_equal(vval.ptr[11], 0);
    assert_int_equal(vval.ptr[12], 0);
    cfdb_rl_metadata_free(mdv);

    /* A message of a type that is not a record type. */
    const cfdb_pb_message *addr = cfdb_pb_pool_message(md12->pool, "cfdb.rl.Address");
    op bad = { .md = md12, .prefix = p, .record = cfdb_pb_msg_new(&arena, addr) };
    assert_int_equal(run(do_save, &bad), CFDB_ERR_CLIENT_INVALID_OPERATION);
}

static cfdb_pb_msg *long_person(uint32_t name_len)
{
    cfdb_pb_msg *m = ann();
    char *name = cfdb_arena_alloc(&arena, name_len);
    for (uint32_t i = 0; i < name_len; i++)
        name[i] = (char)('a' + i % 26);
    cfdb_pb_value v;
    v.s = cfdb_bytes_make(name, name_len);
    assert_int_equal(cfdb_pb_set(m, cfdb_pb_field_by_name(person->descriptor, "name"), v), 0);
    return m;
}

static void test_split_records(void **state)
{
    cfdb_bytes p = rlt_prefix(&arena, "rl");
    /* Without split_long_records a record over 100,000 bytes is refused. */
    op s = { .md = md12, .prefix = p, .record = long_person(250000) };
    assert_int_equal(run(do_save, &s), CFDB_ERR_VALUE_TOO_LARGE);

    const cfdb_rl_record_type *ps = cfdb_rl_record_type_by_name(md12_split, "Person");
    cfdb_pb_msg *big;
    cfdb_bytes big_bin;
    assert_int_equal(cfdb_pb_encode(long_person(250000), &arena, &big_bin), 0);
    assert_int_equal(cfdb_pb_decode(&arena, ps->descriptor, big_bin.ptr, big_bin.len, 0, &big, NULL), 0);
    s.md = md12_split;
    s.record = big;
    assert_int_equal(run(do_save, &s), 0);
    /* Pieces (1), (2), (3) of 100,000, 100,000 and the rest; no (0). */
    cfdb_bytes base = rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07)), v1, v2, v3;
    assert_false(read_key(rlt_cat(&arena, base, BYTES(0x14)), NULL));
    assert_true(read_key(rlt_cat(&arena, base, BYTES(0x15, 0x01)), &v1));
    assert_true(read_key(rlt_cat(&arena, base, BYTES(0x15, 0x02)), &v2));
    assert_true(read_key(rlt_cat(&arena, base, BYTES(0x15, 0x03)), &v3));
    assert_false(read_key(rlt_cat(&arena, base, BYTES(0x15, 0x04)), NULL));
    assert_int_equal(v1.len, 100000);
    assert_int_equal(v2.len, 100000);
    assert_int_equal(v3.len, big_bin.len + 4 - 200000);   /* union tag + 3-byte length */

    op l = { .md = md12_split, .prefix = p, .pk = pk_of(1, 7) };
    assert_int_equal(run(do_load, &l), 0);
    assert_true(l.loaded.found);
    cfdb_bytes again;
    assert_int_equal(cfdb_pb_encode(l.loaded.record, &arena, &again), 0);
    assert_true(cfdb_bytes_eq(again, big_bin));

    /* A short record over it: the pieces go, (0) comes. */
    cfdb_pb_msg *small;
    assert_int_equal(cfdb_pb_decode(&arena, ps->descriptor, person_bin.ptr, person_bin.len, 0, &small,
                                    NULL), 0);
    s.record = small;
    assert_int_equal(run(do_save, &s), 0);
    assert_true(s.existed);
    assert_true(read_key(rlt_cat(&arena, base, BYTES(0x14)), NULL));
    assert_false(read_key(rlt_cat(&arena, base, BYTES(0x15, 0x01)), NULL));
    assert_false(read_key(rlt_cat(&arena, base, BYTES(0x15, 0x03)), NULL));

    /* Corrupt layouts whose bytes, put together, would still decode: pieces (1) and (3)
     * (a gap), and (0) beside (1). */
    cfdb_bytes k1 = rlt_cat(&arena, base, BYTES(0x15, 0x01)), k3 = rlt_cat(&arena, base, BYTES(0x15, 0x03)),
               k0 = rlt_cat(&arena, base, BYTES(0x14));
    cfdb_bytes whole;
    assert_true(read_key(k0, &whole));
    assert_int_equal(api_set_committed(k0.ptr, (int)k0.len, NULL, 0), 0);
    assert_int_equal(api_set_committed(k1.ptr, (int)k1.len, whole.ptr, (int)whole.len), 0);
    assert_int_equal(api_set_committed(k3.ptr, (int)k3.len, "", 0), 0);
    assert_int_equal(run(do_load, &l), CFDB_ERR_SERIALIZATION_FAILED);
    assert_int_equal(api_set_committed(k3.ptr, (int)k3.len, NULL, 0), 0);
    assert_int_equal(run(do_load, &l), 0);                 /* (1) alone is fine */
    assert_true(l.loaded.found);
    assert_int_equal(api_set_committed(k0.ptr, (int)k0.len, "", 0), 0);
    assert_int_equal(run(do_load, &l), CFDB_ERR_SERIALIZATION_FAILED);
    assert_int_equal(api_set_committed(k1.ptr, (int)k1.len, NULL, 0), 0);
    /* A union that holds nothing, and one that holds two records (an empty Order, field 2). */
    assert_int_equal(run(do_load, &l), CFDB_ERR_SERIALIZATION_FAILED);
    cfdb_bytes two = rlt_cat(&arena, whole, BYTES(0x12, 0x00));
    assert_int_equal(api_set_committed(k0.ptr, (int)k0.len, two.ptr, (int)two.len), 0);
    assert_int_equal(run(do_load, &l), CFDB_ERR_SERIALIZATION_FAILED);
    /* A version (-1) with no record beside it: Java's FoundSplitWithoutStartException
     * (SplitHelper.loadWithSplit), 1044 here; a malformed version value, likewise. */
    cfdb_bytes kv = rlt_cat(&arena, base, BYTES(0x13, 0xfe));
    const uint8_t vs[13] = { 0x33, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0 };
    assert_int_equal(api_set_committed(k0.ptr, (int)k0.len, NULL, 0), 0);
    assert_int_equal(api_set_committed(kv.ptr, (int)kv.len, vs, 13), 0);
    assert_int_equal(run(do_load, &l), CFDB_ERR_SERIALIZATION_FAILED);
    assert_int_equal(api_set_committed(k0.ptr, (int)k0.len, whole.ptr, (int)whole.len), 0);
    assert_int_equal(run(do_load, &l), 0);                 /* with its record: fine */
    assert_true(l.loaded.found);
    assert_int_equal(api_set_committed(kv.ptr, (int)kv.len, vs, 12), 0);
    assert_int_equal(run(do_load, &l), CFDB_ERR_SERIALIZATION_FAILED);
    assert_int_equal(api_set_committed(kv.ptr, (int)kv.len, NULL, 0), 0);
}

/* ---- VALUE indexes ---- */

/* Every key/value under P + (2), committed. */
static int read_index_space(FDBTransaction *tr, void *ctx)
{
    void **io = ctx;
    cfdb_bytes begin = rlt_cat(&arena, *(cfdb_bytes *)io[0], BYTES(0x15, 0x02));
    cfdb_bytes end = rlt_cat(&arena, begin, BYTES(0xff));
    return dir_get_all(tr, &arena, begin, end, (dir_kv **)io[1], (uint32_t *)io[2]);
}

static void expect_index_space(cfdb_bytes p, const cfdb_bytes *keys, const cfdb_bytes *values,
                               uint32_t n)
{
    dir_kv *kvs;
    uint32_t count;
    void *io[3] = { &p, &kvs, &count };
    assert_int_equal(run(read_index_space, io), 0);
    if (count != n) {
        for (uint32_t i = 0; i < count; i++) {
            for (uint32_t b = p.len; b < kvs[i].key.len; b++)
                print_message("%02x ", kvs[i].key.ptr[b]);
            print_message("\n");
        }
        fail_msg("%u index entries, want %u", count, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        cfdb_bytes want = rlt_cat(&arena, p, keys[i]);
        if (!cfdb_bytes_eq(kvs[i].key, want)) {
            for (uint32_t b = p.len; b < kvs[i].key.len; b++)
                print_message("%02x ", kvs[i].key.ptr[b]);
            fail_msg("index key %u differs", i);
        }
        assert_true(cfdb_bytes_eq(kvs[i].value, values ? values[i] : (cfdb_bytes){ NULL, 0 }));
    }
}

#define IX(name) 0x15, 0x02, 0x02, name
#define STR1(c) 0x02, c, 0x00

static cfdb_rl_metadata *indexed_metadata(const char *extra_type, bool unique)
{
    cfdb_arena *a = &arena;
    cfdb_pb_msg *m = rlt_base_metadata(a, 12);
    rlt_add_index(a, m, "n", "value", cfdb_kex_field(a, "name", CFDB_KEX_SCALAR), "Person");
    const cfdb_kex *ni[] = { cfdb_kex_field(a, "name", CFDB_KEX_SCALAR),
                             cfdb_kex_field(a, "id", CFDB_KEX_SCALAR) };
    rlt_add_index(a, m, "i", "value", cfdb_kex_then(a, ni, 2), "Person");
    rlt_add_index(a, m, "t", "value", cfdb_kex_field(a, "tags", CFDB_KEX_FAN_OUT), "Person");
    rlt_add_index(a, m, "w", "value", cfdb_kex_field(a, "who", CFDB_KEX_SCALAR), NULL);
    cfdb_pb_msg *kv = rlt_add_index(a, m, "v", "value", cfdb_kex_field(a, "name", CFDB_KEX_SCALAR),
                                    "Person");
    rlt_kex_into(a, kv, "value_expression", cfdb_kex_field(a, "id", CFDB_KEX_SCALAR));
    if (extra_type) {
        cfdb_pb_msg *x = rlt_add_index(a, m, "x", extra_type, cfdb_kex_field(a, "id", CFDB_KEX_SCALAR),
                                       "Person");
        if (unique) {
            cfdb_pb_msg *opt;
            rl_add_msg(x, "options", &opt);
            rl_set_bytes(opt, "key", cfdb_bytes_str("unique"));
            rl_set_bytes(opt, "value", cfdb_bytes_str("true"));
        }
    }
    return rlt_load(a, m);
}

static void test_value_indexes(void **state)
{
    cfdb_rl_metadata *md = indexed_metadata(NULL, false);
    const cfdb_rl_record_type *pt = cfdb_rl_record_type_by_name(md, "Person");
    const cfdb_rl_record_type *ot = cfdb_rl_record_type_by_name(md, "Order");
    /* Positions: "i" = (name, id) holds id, the primary key's second component; "n" none. */
    const cfdb_rl_index *ii = cfdb_rl_index_by_name(md, "i");
    assert_int_equal(ii->pk_position_count, 2);
    assert_int_equal(ii->pk_positions[0], -1);
    assert_int_equal(ii->pk_positions[1], 1);
    assert_null(cfdb_rl_index_by_name(md, "n")->pk_positions);
    assert_null(cfdb_rl_index_by_name(md, "w")->pk_positions);   /* universal: never */

    cfdb_bytes p = rlt_prefix(&arena, "rl");
    cfdb_pb_msg *rec;
    assert_int_equal(cfdb_pb_decode(&arena, pt->descriptor, person_bin.ptr, person_bin.len, 0, &rec,
                                    NULL), 0);
    op s = { .md = md, .prefix = p, .record = rec };
    assert_int_equal(run(do_save, &s), 0);
    /* In key order: "i" ("ann", 7, 1); "n" ("ann", 1, 7); "t" ("a"|"b"|"c", 1, 7);
     * "v" ("ann", 1) = (7); "w" (null, 1, 7). */
    cfdb_bytes keys[] = {
        BYTES(IX('i'), 0x00, 0x02, 'a', 'n', 'n', 0x00, 0x15, 0x07, 0x15, 0x01),
        BYTES(IX('n'), 0x00, 0x02, 'a', 'n', 'n', 0x00, 0x15, 0x01, 0x15, 0x07),
        BYTES(IX('t'), 0x00, STR1('a'), 0x15, 0x01, 0x15, 0x07),
        BYTES(IX('t'), 0x00, STR1('b'), 0x15, 0x01, 0x15, 0x07),
        BYTES(IX('t'), 0x00, STR1('c'), 0x15, 0x01, 0x15, 0x07),
        BYTES(IX('v'), 0x00, 0x02, 'a', 'n', 'n', 0x00, 0x15, 0x01),
        BYTES(IX('w'), 0x00, 0x00, 0x15, 0x01, 0x15, 0x07),
    };
    cfdb_bytes empty = { NULL, 0 };
    cfdb_bytes values[] = { empty, empty, empty, empty, empty, BYTES(0x15, 0x07), empty };
    expect_index_space(p, keys, values, 7);

    /* Update: name "bo", tags (b, z): changed entries move, (t, b) stays. */
    const cfdb_pb_field *name = cfdb_pb_field_by_name(pt->descriptor, "name");
    const cfdb_pb_field *tags = cfdb_pb_field_by_name(pt->descriptor, "tags");
    cfdb_pb_value v;
    v.s = cfdb_bytes_str("bo");
    cfdb_pb_set(rec, name, v);
    cfdb_pb_clear(rec, tags);
    v.s = cfdb_bytes_str("b");
    cfdb_pb_add(rec, tags, v);
    v.s = cfdb_bytes_str("z");
    cfdb_pb_add(rec, tags, v);
    assert_int_equal(run(do_save, &s), 0);
    assert_true(s.existed);
    cfdb_bytes keys2[] = {
        BYTES(IX('i'), 0x00, 0x02, 'b', 'o', 0x00, 0x15, 0x07, 0x15, 0x01),
        BYTES(IX('n'), 0x00, 0x02, 'b', 'o', 0x00, 0x15, 0x01, 0x15, 0x07),
        BYTES(IX('t'), 0x00, STR1('b'), 0x15, 0x01, 0x15, 0x07),
        BYTES(IX('t'), 0x00, STR1('z'), 0x15, 0x01, 0x15, 0x07),
        BYTES(IX('v'), 0x00, 0x02, 'b', 'o', 0x00, 0x15, 0x01),
        BYTES(IX('w'), 0x00, 0x00, 0x15, 0x01, 0x15, 0x07),
    };
    cfdb_bytes values2[] = { empty, empty, empty, empty, BYTES(0x15, 0x07), empty };
    expect_index_space(p, keys2, values2, 6);

    /* An Order: only the universal index applies; its primary key is (order_id). */
    cfdb_pb_msg *order = cfdb_pb_msg_new(&arena, ot->descriptor);
    v.i = 3;
    cfdb_pb_set(order, cfdb_pb_field_by_name(ot->descriptor, "order_id"), v);
    v.s = cfdb_bytes_str("q");
    cfdb_pb_set(order, cfdb_pb_field_by_name(ot->descriptor, "who"), v);
    op so = { .md = md, .prefix = p, .record = order };
    assert_int_equal(run(do_save, &so), 0);

    /* Deleting the Person removes all its entries and leaves the Order's. */
    op d = { .md = md, .prefix = p, .pk = pk_of(1, 7) };
    assert_int_equal(run(do_delete, &d), 0);
    assert_true(d.existed);
    cfdb_bytes keys3[] = { BYTES(IX('w'), 0x00, STR1('q'), 0x15, 0x03) };
    expect_index_space(p, keys3, NULL, 1);

    /* Newer metadata with an index added since (last_modified_version 13 > 12): built in the
     * open transaction (one record, under FDBRecordStore.MAX_RECORDS_FOR_REBUILD). */
    cfdb_arena *a = &arena;
    cfdb_pb_msg *m13 = rlt_base_metadata(a, 13);
    cfdb_pb_msg *nix = rlt_add_index(a, m13, "late", "value",
                                     cfdb_kex_field(a, "name", CFDB_KEX_SCALAR), "Person");
    rl_set_int(nix, "last_modified_version", 13);
    cfdb_rl_metadata *md13 = rlt_load(a, m13);
    op up = { .md = md13, .prefix = p, .mode = CFDB_RL_OPEN };
    assert_int_equal(run(do_open, &up), 0);
    assert_int_equal(up.md_version, 13);
    cfdb_rl_metadata_free(md13);
    cfdb_rl_metadata_free(md);

    /* Indexes cfdb does not maintain: a save of a type they cover is refused. */
    const char *kinds[] = { "rank", "text", "max_ever_version", "count" };
    for (int k = 0; k < 4; k++) {
        cfdb_rl_metadata *mx = indexed_metadata(kinds[k], k == 3);   /* unique count */
        const cfdb_rl_record_type *px = cfdb_rl_record_type_by_name(mx, "Person");
        cfdb_pb_msg *r;
        assert_int_equal(cfdb_pb_decode(&arena, px->descriptor, person_bin.ptr, person_bin.len, 0, &r,
                                        NULL), 0);
        op sx = { .md = mx, .prefix = rlt_prefix(&arena, "rl"), .record = r };
        assert_int_equal(run(do_save, &sx), CFDB_ERR_UNSUPPORTED_OPERATION);
        cfdb_rl_metadata_free(mx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_header),
        cmocka_unit_test(test_metadata_versions),
        cmocka_unit_test(test_headers_from_elsewhere),
        cmocka_unit_test(test_save_load_delete),
        cmocka_unit_test(test_split_records),
        cmocka_unit_test(test_value_indexes),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
