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
#include <time.h>

#include <cmocka.h>

#include "../../api/api_helpers.h"
#include "../../../src/layers/dir_io.h"
#include "cfdb/errors.h"
#include "cfdb/records/cursor.h"
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

typedef struct mark_op {
    const char *name;
    cfdb_rl_index_state state;
} mark_op;

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

static int mark_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    mark_op *m = ctx;
    return cfdb_rl_store_mark_index(s, tr, m->name, m->state);
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

/* ---- record versions in stores that began below format version 6 ---- */

typedef struct version_io {
    const cfdb_tuple *pk;
    cfdb_rl_version v;        /* cfdb_rl_store_load_version */
    cfdb_rl_version scanned;  /* the record scan's item */
    uint32_t items;
} version_io;

static int versions_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    version_io *io = ctx;
    int rc = cfdb_rl_store_load_version(s, tr, &arena, io->pk, &io->v);
    cfdb_rl_range all = cfdb_rl_range_all();
    cfdb_rl_cursor *c = NULL;
    io->items = 0;
    if (!rc)
        rc = cfdb_rl_scan_records(s, tr, &all, cfdb_bytes_make(NULL, 0), NULL, &c);
    for (bool has = true; !rc && has;) {
        cfdb_rl_item it;
        rc = cfdb_rl_cursor_next(c, &arena, &it, &has);
        if (!rc && has) {
            io->items++;
            io->scanned = it.version;
        }
    }
    cfdb_rl_cursor_free(c);
    return rc;
}

static bool read_key(cfdb_bytes key, cfdb_bytes *value)
{
    static uint8_t buf[4096];
    int present = 0, len = 0;
    assert_int_equal(api_read_committed(key.ptr, (int)key.len, &present, buf, sizeof buf, &len), 0);
    if (value)
        *value = cfdb_bytes_make(cfdb_arena_dup(&arena, buf, (size_t)len + 1), (size_t)len);
    return present != 0;
}

static void put(cfdb_bytes p, cfdb_bytes key, cfdb_bytes value)
{
    cfdb_bytes k = rlt_cat(&arena, p, key);
    assert_int_equal(api_set_committed(k.ptr, (int)k.len, value.ptr, (int)value.len), 0);
}

static cfdb_rl_metadata *versioned_md(int32_t version, bool store_versions)
{
    cfdb_pb_msg *m = rlt_base_metadata(&arena, version);
    if (store_versions)
        rl_set_int(m, "store_record_versions", 1);
    return rlt_load(&arena, m);
}

/* A store that began at format 4 without split_long_records keeps its unsplit records
 * without a suffix (omit_unsplit_record_suffix) and so, at any later format, its versions at
 * P + (8, pk...) as the 12 bytes of the version (FDBRecordStore.useOldVersionFormat,
 * recordVersionKey, saveVersionWithOldFormat; loadRecordVersionAsync reads them back with
 * FDBRecordVersion.complete(bytes)); nothing beside the record (SplitHelper's
 * KeyValueUnsplitter refuses a version key there with the old format). A delete clears it
 * (deleteTypedRecord). */
static void test_old_format_versions(void **state)
{
    (void)state;
    cfdb_rl_metadata *md = versioned_md(1, true);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    put(p, BYTES(0x14), BYTES(0x08, 0x04, 0x10, 0x01));   /* DataStoreInfo format 4, md 1 */
    assert_int_equal(with_store(md, p, save_fn, person(md, 7, "a")), 0);
    /* the record unsuffixed at P + (1, 1, 7); its version at P + (8, 1, 7): 12 bytes, the
     * commit's 10-byte version and local version 0 */
    uint32_t n;
    dir_kv *recs = read_under(p, BYTES(0x15, 0x01), &n);
    if (n != 1)
        dump(p, recs, n);
    assert_int_equal(n, 1);
    assert_true(cfdb_bytes_eq(recs[0].key, rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07))));
    dir_kv *vers = read_under(p, BYTES(0x15, 0x08), &n);
    if (n != 1)
        dump(p, vers, n);
    assert_int_equal(n, 1);
    assert_true(cfdb_bytes_eq(vers[0].key, rlt_cat(&arena, p, BYTES(0x15, 0x08, 0x15, 0x01, 0x15, 0x07))));
    assert_int_equal(vers[0].value.len, 12);
    assert_int_equal(vers[0].value.ptr[10], 0);
    assert_int_equal(vers[0].value.ptr[11], 0);
    assert_true(memcmp(vers[0].value.ptr, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 10) != 0);
    /* load and scan give that version */
    version_io io = { .pk = pk_of(1, 7) };
    assert_int_equal(with_store(md, p, versions_fn, &io), 0);
    assert_true(io.v.present && io.v.complete);
    assert_memory_equal(io.v.bytes, vers[0].value.ptr, 12);
    assert_int_equal(io.items, 1);
    assert_true(io.scanned.present && io.scanned.complete);
    assert_memory_equal(io.scanned.bytes, vers[0].value.ptr, 12);
    /* a version Java wrote: P + (8, 1, 7) = 12 bytes, read back as they are */
    cfdb_bytes javav = BYTES(0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0x09);
    put(p, BYTES(0x15, 0x08, 0x15, 0x01, 0x15, 0x07), javav);
    assert_int_equal(with_store(md, p, versions_fn, &io), 0);
    assert_true(io.v.present && io.v.complete);
    assert_memory_equal(io.v.bytes, javav.ptr, 12);
    assert_memory_equal(io.scanned.bytes, javav.ptr, 12);
    /* not 12 bytes: FDBRecordVersion refuses it */
    put(p, BYTES(0x15, 0x08, 0x15, 0x01, 0x15, 0x07), BYTES(0x33, 0x01));
    assert_int_equal(with_store(md, p, versions_fn, &io), CFDB_ERR_SERIALIZATION_FAILED);
    /* the delete clears the record and its version */
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 7)), 0);
    expect_under(p, BYTES(0x15, 0x01), NULL, NULL, 0);
    expect_under(p, BYTES(0x15, 0x08), NULL, NULL, 0);
    /* old format with split records (header 08 07 10 01 30 01: omit_unsplit_record_suffix at
     * format 7, metadata splitting long records): records keep their (0) suffix, versions
     * stay at P + (8); a version key beside the record is not the record's version */
    cfdb_pb_msg *ms = rlt_base_metadata(&arena, 1);
    rl_set_int(ms, "store_record_versions", 1);
    rl_set_int(ms, "split_long_records", 1);
    cfdb_rl_metadata *mds = rlt_load(&arena, ms);
    cfdb_bytes q = rlt_prefix(&arena, "rj");
    put(q, BYTES(0x14), BYTES(0x08, 0x07, 0x10, 0x01, 0x30, 0x01));
    assert_int_equal(with_store(mds, q, save_fn, person(mds, 7, "a")), 0);
    read_under(q, BYTES(0x15, 0x08), &n);
    assert_int_equal(n, 1);
    read_under(q, BYTES(0x15, 0x01), &n);
    assert_int_equal(n, 1);
    cfdb_bytes qv = rlt_cat(&arena, q, BYTES(0x15, 0x08, 0x15, 0x01, 0x15, 0x07));
    FDBTransaction *tr = api_tr();
    fdb_transaction_clear(tr, qv.ptr, (int)qv.len);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    put(q, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07, 0x13, 0xfe),
        BYTES(0x33, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0, 0));
    version_io qio = { .pk = pk_of(1, 7) };
    assert_int_equal(with_store(mds, q, versions_fn, &qio), 0);
    assert_false(qio.v.present);
    assert_int_equal(qio.items, 1);
    assert_false(qio.scanned.present);
    cfdb_rl_metadata_free(mds);
    cfdb_rl_metadata_free(md);
}

/* A store at format 5 (unsplit records with the (0) suffix) keeps versions at P + (8, pk...);
 * opened at format 7 with store_record_versions, FDBRecordStore.checkRebuild /
 * addConvertRecordVersions moves each to P + (1, pk..., -1) = pack((versionstamp)) (0x33 +
 * the 12 bytes, SplitHelper.packVersion) and clears P + (8). Without store_record_versions
 * and a new metadata version, checkRebuild clears P + (8). */
static void test_old_versions_upgraded(void **state)
{
    (void)state;
    cfdb_rl_metadata *md = versioned_md(1, true);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    /* the records as a store at format 5 has them: made by cfdb, then the inline versions
     * moved to where format 5 keeps them, and the header put back to 5 */
    assert_int_equal(with_store(md, p, save_fn, person(md, 7, "a")), 0);
    assert_int_equal(with_store(md, p, save_fn, person(md, 8, "b")), 0);
    cfdb_bytes rec7k = BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07, 0x14);
    cfdb_bytes rec7;
    assert_true(read_key(rlt_cat(&arena, p, rec7k), &rec7));
    cfdb_bytes v7 = BYTES(0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x03);
    cfdb_bytes v8 = BYTES(0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x00);
    FDBTransaction *tr = api_tr();
    cfdb_bytes b = rlt_cat(&arena, p, BYTES(0x15, 0x01)), e = rlt_cat(&arena, p, BYTES(0x15, 0x02));
    fdb_transaction_clear_range(tr, b.ptr, (int)b.len, e.ptr, (int)e.len);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    cfdb_bytes rec8k = BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x08, 0x14);
    put(p, rec7k, rec7);
    put(p, rec8k, rec7);   /* the same bytes: Person 7; only keys matter below */
    put(p, BYTES(0x15, 0x08, 0x15, 0x01, 0x15, 0x07), v7);
    put(p, BYTES(0x15, 0x08, 0x15, 0x01, 0x15, 0x08), v8);
    put(p, BYTES(0x14), BYTES(0x08, 0x05, 0x10, 0x01));   /* format 5, md 1 */

    assert_int_equal(with_store(md, p, NULL, NULL), 0);
    cfdb_bytes keys[] = { rec7k, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x07, 0x13, 0xfe),
                          rec8k, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x08, 0x13, 0xfe) };
    cfdb_bytes values[] = {
        rec7, BYTES(0x33, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x03),
        rec7, BYTES(0x33, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x00) };
    /* P + (1, 1, 7, 0) and (1, 1, 7, -1): the version key sorts first (0x13 < 0x14) */
    cfdb_bytes sorted_k[] = { keys[1], keys[0], keys[3], keys[2] };
    cfdb_bytes sorted_v[] = { values[1], values[0], values[3], values[2] };
    expect_under(p, BYTES(0x15, 0x01), sorted_k, sorted_v, 4);
    expect_under(p, BYTES(0x15, 0x08), NULL, NULL, 0);
    cfdb_bytes header;
    assert_true(read_key(rlt_cat(&arena, p, BYTES(0x14)), &header));
    assert_memory_equal(header.ptr, ((uint8_t[]){ 0x08, 0x07 }), 2);
    version_io io = { .pk = pk_of(1, 7) };
    assert_int_equal(with_store(md, p, versions_fn, &io), 0);
    assert_true(io.v.present && io.v.complete);
    assert_memory_equal(io.v.bytes, v7.ptr, 12);

    /* format 5 without store_record_versions, metadata version 1 -> 2: P + (8) cleared */
    cfdb_rl_metadata *md2 = versioned_md(2, false);
    cfdb_bytes q = rlt_prefix(&arena, "rj");
    put(q, rec7k, rec7);
    put(q, BYTES(0x15, 0x08, 0x15, 0x01, 0x15, 0x07), v7);
    put(q, BYTES(0x14), BYTES(0x08, 0x05, 0x10, 0x01));
    assert_int_equal(with_store(md2, q, NULL, NULL), 0);
    expect_under(q, BYTES(0x15, 0x08), NULL, NULL, 0);
    expect_under(q, BYTES(0x15, 0x01), &rec7k, &rec7, 1);
    cfdb_rl_metadata_free(md2);
    cfdb_rl_metadata_free(md);
}

/* ---- cacheable store state ---- */

static cfdb_bytes mdv_key(void)
{
    return cfdb_bytes_str("\xff/metadataVersion");
}

/* Opens the store and marks an index in one transaction, giving the commit's versionstamp. */
static int mark_stamped(const cfdb_rl_metadata *md, cfdb_bytes p, const char *name,
                        cfdb_rl_index_state st, uint8_t stamp[10])
{
    FDBTransaction *tr = api_tr();
    cfdb_rl_store *s = NULL;
    int rc = cfdb_rl_store_open(tr, md, p, CFDB_RL_OPEN, &s);
    if (!rc)
        rc = cfdb_rl_store_mark_index(s, tr, name, st);
    cfdb_rl_store_free(s);
    FDBFuture *vf = rc ? NULL : fdb_transaction_get_versionstamp(tr);
    if (!rc)
        rc = api_commit(tr);
    if (vf) {
        const uint8_t *k;
        int len;
        if (!rc && !(rc = fdb_future_block_until_ready(vf)) && !(rc = fdb_future_get_error(vf)) &&
            !(rc = fdb_future_get_key(vf, &k, &len)) && len == 10)
            memcpy(stamp, k, 10);
        fdb_future_destroy(vf);
    }
    fdb_transaction_destroy(tr);
    return rc;
}

/* A store whose header says cacheable (DataStoreInfo.cacheable = 7, format 7): every index
 * state change sets the database's metadata version stamp, so a Java process caching the
 * store state (MetaDataVersionStampStoreStateCache) re-reads it:
 * FDBRecordStore.updateIndexState -> FDBRecordContext.setMetaDataVersionStamp =
 * SET_VERSIONSTAMPED_VALUE of \xff/metadataVersion with META_DATA_VERSION_STAMP_VALUE (10
 * zero bytes + offset 0), so the key holds the commit's 10-byte versionstamp. A store that is
 * not cacheable leaves the key alone. */
static void test_cacheable_state_bumps_metadata_version(void **state)
{
    (void)state;
    cfdb_pb_msg *m = rlt_base_metadata(&arena, 1);
    rlt_add_index(&arena, m, "pn", "value", F("name"), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    assert_int_equal(with_store(md, p, NULL, NULL), 0);
    /* not cacheable: the key stays as it was */
    cfdb_bytes before = { NULL, 0 }, after;
    bool had = read_key(mdv_key(), &before);
    uint8_t stamp[10] = { 0 };
    assert_int_equal(mark_stamped(md, p, "pn", CFDB_RL_INDEX_WRITE_ONLY, stamp), 0);
    bool has = read_key(mdv_key(), &after);
    assert_int_equal(has, had);
    if (has)
        assert_true(cfdb_bytes_eq(before, after));
    /* cacheable (header 08 07 10 01 38 01): each mark sets it to its commit's stamp */
    put(p, BYTES(0x14), BYTES(0x08, 0x07, 0x10, 0x01, 0x38, 0x01));
    assert_int_equal(mark_stamped(md, p, "pn", CFDB_RL_INDEX_DISABLED, stamp), 0);
    assert_true(read_key(mdv_key(), &after));
    assert_int_equal(after.len, 10);
    assert_memory_equal(after.ptr, stamp, 10);
    assert_int_equal(mark_stamped(md, p, "pn", CFDB_RL_INDEX_WRITE_ONLY, stamp), 0);
    assert_true(read_key(mdv_key(), &after));
    assert_memory_equal(after.ptr, stamp, 10);
    /* an upgrade's new header of a cacheable store (FDBRecordStore.updateStoreHeaderAsync) */
    cfdb_rl_metadata *md2 = rlt_load(&arena, rlt_base_metadata(&arena, 2));
    FDBTransaction *tr = api_tr();
    cfdb_rl_store *s = NULL;
    assert_int_equal(cfdb_rl_store_open(tr, md2, p, CFDB_RL_OPEN, &s), 0);
    cfdb_rl_store_free(s);
    FDBFuture *vf = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 0);
    const uint8_t *k;
    int len;
    assert_int_equal(fdb_future_block_until_ready(vf), 0);
    assert_int_equal(fdb_future_get_key(vf, &k, &len), 0);
    assert_int_equal(len, 10);
    assert_true(read_key(mdv_key(), &after));
    assert_memory_equal(after.ptr, k, 10);
    fdb_future_destroy(vf);
    fdb_transaction_destroy(tr);
    cfdb_rl_metadata_free(md2);
    cfdb_rl_metadata_free(md);
}

/* ---- the online indexer's type stamp and heartbeats ---- */

/* protobuf varint of v into out; its length */
static size_t varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* IndexBuildProto.IndexBuildHeartbeat {info "BY_RECORDS", createTimeMilliseconds t,
 * heartbeatTimeMilliseconds t} as Java's toByteArray: 0a 0a "BY_RECORDS", 10 varint, 18 varint */
static cfdb_bytes java_heartbeat(int64_t t)
{
    uint8_t *b = cfdb_arena_alloc(&arena, 64);
    assert_non_null(b);
    size_t n = 0;
    b[n++] = 0x0a;
    b[n++] = 10;
    memcpy(b + n, "BY_RECORDS", 10);
    n += 10;
    b[n++] = 0x10;
    n += varint(b + n, (uint64_t)t);
    b[n++] = 0x18;
    n += varint(b + n, (uint64_t)t);
    return cfdb_bytes_make(b, n);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* IndexingBase / IndexingSubspaces / IndexingHeartbeat (provider/foundationdb): the online
 * indexer building one index by records keeps P + (9, "pn", 2) = IndexBuildIndexingStamp
 * {method BY_RECORDS} = 08 01 (IndexingMultiTargetByRecords
 * .compileSingleTargetLegacyIndexingTypeStamp, FDBRecordStore.saveIndexingTypeStamp); refuses
 * a stamp of another method (a BY_INDEX build: 08 02 12 <source subspace key> 18 <version>),
 * a blocked one (block = field 5) and another indexer's live heartbeat at
 * P + (9, "pn", 7, UUID); clears its own heartbeat when it stops
 * (IndexingBase.clearHeartbeats) and, once readable, all of P + (9, "pn") but the lock
 * (IndexingSubspaces.eraseAllIndexingDataButTheLockAndRangeSet). */
static void test_indexer_stamp_and_heartbeats(void **state)
{
    (void)state;
    cfdb_pb_msg *m = rlt_base_metadata(&arena, 1);
    rlt_add_index(&arena, m, "pn", "value", F("name"), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    mark_op dis = { "pn", CFDB_RL_INDEX_DISABLED };
    assert_int_equal(with_store(md, p, mark_fn, &dis), 0);
    for (int i = 1; i <= 10; i++)
        assert_int_equal(with_store(md, p, save_fn, person(md, i, "x")), 0);
    cfdb_bytes build = BYTES(0x15, 0x09, 0x02, 'p', 'n', 0x00);
    cfdb_bytes stamp_k = BYTES(0x15, 0x09, 0x02, 'p', 'n', 0x00, 0x15, 0x02);
    cfdb_bytes other_hb = BYTES(0x15, 0x09, 0x02, 'p', 'n', 0x00, 0x15, 0x07, 0x30,
                                0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef,
                                0x81, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef);
    cfdb_bytes entries = BYTES(0x15, 0x02, 0x02, 'p', 'n', 0x00);
    cfdb_rl_indexer_stats st;

    /* a BY_INDEX build of Java's in progress: refused, nothing indexed */
    cfdb_bytes by_index = BYTES(0x08, 0x02, 0x12, 0x03, 0x02, 'a', 0x00, 0x18, 0x01);
    put(p, stamp_k, by_index);
    cfdb_rl_indexer_options o = { .max_records = 3, .max_batches = 2 };
    assert_int_equal(cfdb_rl_index_build(g_env.db, md, p, "pn", &o, &st), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(st.other_method, 2);
    assert_int_equal(st.records, 0);
    expect_under(p, entries, NULL, NULL, 0);
    expect_under(p, build, &stamp_k, &by_index, 1);
    /* a blocked BY_RECORDS stamp (block = true, no expiry): refused */
    cfdb_bytes blocked = BYTES(0x08, 0x01, 0x28, 0x01);
    put(p, stamp_k, blocked);
    assert_int_equal(cfdb_rl_index_build(g_env.db, md, p, "pn", &o, &st), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_true(st.blocked);
    /* block expired (blockExpireEpochMilliSeconds = 1): similar, replaced by 08 01 */
    put(p, stamp_k, BYTES(0x08, 0x01, 0x28, 0x01, 0x30, 0x01));
    /* ... but another indexer's heartbeat of now: refused */
    put(p, other_hb, java_heartbeat(wall_ms()));
    assert_int_equal(cfdb_rl_index_build(g_env.db, md, p, "pn", &o, &st), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_true(st.other_indexer);
    /* its heartbeat 20 s old (lease 10 s): two batches, then stopped with the stamp 08 01 and
     * no heartbeat of its own left */
    cfdb_bytes old_hb = java_heartbeat(wall_ms() - 20000);
    put(p, other_hb, old_hb);
    assert_int_equal(cfdb_rl_index_build(g_env.db, md, p, "pn", &o, &st), 0);
    assert_int_equal(st.batches, 2);
    assert_int_equal(st.records, 6);
    assert_false(st.readable);
    cfdb_bytes by_records = BYTES(0x08, 0x01);
    expect_under(p, build, (cfdb_bytes[]){ stamp_k, other_hb }, (cfdb_bytes[]){ by_records, old_hb }, 2);
    /* resumed at once (its own cleared heartbeat does not block): readable, and P + (9, "pn")
     * empty */
    assert_int_equal(cfdb_rl_index_build(g_env.db, md, p, "pn", NULL, &st), 0);
    assert_true(st.readable);
    assert_int_equal(st.records, 4);
    expect_under(p, build, NULL, NULL, 0);
    uint32_t n;
    read_under(p, entries, &n);
    assert_int_equal(n, 10);
    /* disabling clears the stamp too (FDBRecordStore.clearIndexData) */
    put(p, stamp_k, by_index);
    assert_int_equal(with_store(md, p, mark_fn, &dis), 0);
    expect_under(p, build, NULL, NULL, 0);
    cfdb_rl_metadata_free(md);
}

/* ---- aggregate indexes ---- */

static cfdb_pb_msg *add_option(cfdb_pb_msg *ix, const char *key, const char *value)
{
    cfdb_pb_msg *opt;
    assert_int_equal(rl_add_msg(ix, "options", &opt), 0);
    rl_set_bytes(opt, "key", cfdb_bytes_str(key));
    rl_set_bytes(opt, "value", cfdb_bytes_str(value));
    return ix;
}

/* clearWhenZero (IndexOptions.CLEAR_WHEN_ZERO): AtomicMutationIndexMaintainer.updateIndexKeys
 * follows the ADD of a COUNT_CLEAR_WHEN_ZERO / SUM_LONG_CLEAR_WHEN_ZERO mutation with
 * COMPARE_AND_CLEAR of FDBRecordStore.INT64_ZERO (8 zero bytes), so once the last record of
 * a group goes its key does too; without the option the key stays with 8 zero bytes. Counts
 * grouped by name (GroupingKeyExpression(name, 0)): P + (2, "c", "a") = ADD 01 00 .. 00. */
static void test_clear_when_zero(void **state)
{
    (void)state;
    cfdb_pb_msg *m = rlt_base_metadata(&arena, 1);
    add_option(rlt_add_index(&arena, m, "c", "count", cfdb_kex_grouping(&arena, F("name"), 0), "Person"),
               "clearWhenZero", "True");
    rlt_add_index(&arena, m, "k", "count", cfdb_kex_grouping(&arena, F("name"), 0), "Person");
    const cfdb_kex *name_id[] = { F("name"), F("id") };
    add_option(rlt_add_index(&arena, m, "s", "sum", cfdb_kex_grouping(&arena, cfdb_kex_then(&arena, name_id, 2), 1),
                             "Person"),
               "clearWhenZero", "true");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    assert_int_equal(with_store(md, p, save_fn, person(md, 5, "a")), 0);
    cfdb_bytes c = BYTES(0x15, 0x02, 0x02, 'c', 0x00), k = BYTES(0x15, 0x02, 0x02, 'k', 0x00);
    cfdb_bytes sp = BYTES(0x15, 0x02, 0x02, 's', 0x00);
    cfdb_bytes ca = BYTES(0x15, 0x02, 0x02, 'c', 0x00, 0x02, 'a', 0x00);
    cfdb_bytes ka = BYTES(0x15, 0x02, 0x02, 'k', 0x00, 0x02, 'a', 0x00);
    cfdb_bytes sa = BYTES(0x15, 0x02, 0x02, 's', 0x00, 0x02, 'a', 0x00);
    cfdb_bytes one = BYTES(0x01, 0, 0, 0, 0, 0, 0, 0), five = BYTES(0x05, 0, 0, 0, 0, 0, 0, 0);
    cfdb_bytes zero = BYTES(0, 0, 0, 0, 0, 0, 0, 0);
    expect_under(p, c, &ca, &one, 1);
    expect_under(p, k, &ka, &one, 1);
    expect_under(p, sp, &sa, &five, 1);
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 5)), 0);
    expect_under(p, c, NULL, NULL, 0);
    expect_under(p, sp, NULL, NULL, 0);
    expect_under(p, k, &ka, &zero, 1);
    cfdb_rl_metadata_free(md);
}

/* MAX_EVER_TUPLE / MIN_EVER_TUPLE: AtomicMutation.Standard.getMutationParam falls to its
 * default, entry.getKey().pack(), for a removed entry as for an added one, so
 * AtomicMutationIndexMaintainer.updateIndexKeys issues BYTE_MAX / BYTE_MIN when a record
 * leaves the index too. Seen where the record was never applied: saved while the index was
 * disabled, then deleted while it is write-only (the _EVER types are idempotent, so
 * maintained while write-only): P + (2, "mt") (ungrouped: the subspace itself) =
 * pack(("zz")) = 02 7a 7a 00. */
static void test_ever_tuple_on_removal(void **state)
{
    (void)state;
    cfdb_pb_msg *m = rlt_base_metadata(&arena, 1);
    rlt_add_index(&arena, m, "mt", "max_ever_tuple", cfdb_kex_grouping(&arena, F("name"), 1), "Person");
    rlt_add_index(&arena, m, "nt", "min_ever_tuple", cfdb_kex_grouping(&arena, F("name"), 1), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    mark_op dis[] = { { "mt", CFDB_RL_INDEX_DISABLED }, { "nt", CFDB_RL_INDEX_DISABLED } };
    mark_op wo[] = { { "mt", CFDB_RL_INDEX_WRITE_ONLY }, { "nt", CFDB_RL_INDEX_WRITE_ONLY } };
    for (int i = 0; i < 2; i++)
        assert_int_equal(with_store(md, p, mark_fn, &dis[i]), 0);
    assert_int_equal(with_store(md, p, save_fn, person(md, 5, "zz")), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(with_store(md, p, mark_fn, &wo[i]), 0);
    cfdb_bytes mt = BYTES(0x15, 0x02, 0x02, 'm', 't', 0x00), nt = BYTES(0x15, 0x02, 0x02, 'n', 't', 0x00);
    expect_under(p, mt, NULL, NULL, 0);
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 5)), 0);
    cfdb_bytes zz = BYTES(0x02, 'z', 'z', 0x00);
    /* the ungrouped key is the subspace key itself: read it directly */
    cfdb_bytes v;
    assert_true(read_key(rlt_cat(&arena, p, mt), &v));
    assert_true(cfdb_bytes_eq(v, zz));
    assert_true(read_key(rlt_cat(&arena, p, nt), &v));
    assert_true(cfdb_bytes_eq(v, zz));
    cfdb_rl_metadata_free(md);
}

/* Nulls of fields with the UNIQUE null interpretation are values for uniqueness and counts:
 * StandardIndexMaintainer.updateOneKeyAsync checks uniqueness unless
 * IndexEntry.keyContainsNonUniqueNull (only NullStandin.NULL, the NOT_UNIQUE default, counts);
 * AtomicMutation.Standard COUNT_NOT_NULL skips the same. A unique index "un" on
 * name UNIQUE: the first Person without a name writes P + (2, "un", null, 1, 1) =
 * 15 02 02 75 6e 00 00 15 01 15 01 = '', the second is a violation. On plain name both go in.
 * count_not_null "cn" of name UNIQUE counts them: P + (2, "cn") = 02 00 .. 00. */
static void test_unique_nulls(void **state)
{
    (void)state;
    cfdb_pb_msg *m = rlt_base_metadata(&arena, 1);
    cfdb_pb_msg *un = rlt_add_index(&arena, m, "un", "value", field_ni("name", CFDB_KEX_NULL_UNIQUE), "Person");
    add_option(un, "unique", "true");
    add_option(rlt_add_index(&arena, m, "up", "value", F("name"), "Person"), "unique", "true");
    rlt_add_index(&arena, m, "cn", "count_not_null",
                  cfdb_kex_grouping(&arena, field_ni("name", CFDB_KEX_NULL_UNIQUE), 1), "Person");
    rlt_add_index(&arena, m, "cp", "count_not_null", cfdb_kex_grouping(&arena, F("name"), 1), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    assert_int_equal(with_store(md, p, save_fn, person(md, 1, NULL)), 0);
    cfdb_bytes k1 = BYTES(0x15, 0x02, 0x02, 'u', 'n', 0x00, 0x00, 0x15, 0x01, 0x15, 0x01);
    cfdb_bytes e = EMPTY;
    expect_under(p, BYTES(0x15, 0x02, 0x02, 'u', 'n', 0x00), &k1, &e, 1);
    assert_int_equal(with_store(md, p, save_fn, person(md, 2, NULL)), CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* without "un": "up" (NOT_UNIQUE nulls) takes both */
    cfdb_pb_msg *m2 = rlt_base_metadata(&arena, 1);
    add_option(rlt_add_index(&arena, m2, "up", "value", F("name"), "Person"), "unique", "true");
    rlt_add_index(&arena, m2, "cn", "count_not_null",
                  cfdb_kex_grouping(&arena, field_ni("name", CFDB_KEX_NULL_UNIQUE), 1), "Person");
    rlt_add_index(&arena, m2, "cp", "count_not_null", cfdb_kex_grouping(&arena, F("name"), 1), "Person");
    cfdb_rl_metadata *md2 = rlt_load(&arena, m2);
    cfdb_bytes q = rlt_prefix(&arena, "rj");
    assert_int_equal(with_store(md2, q, save_fn, person(md2, 1, NULL)), 0);
    assert_int_equal(with_store(md2, q, save_fn, person(md2, 2, NULL)), 0);
    cfdb_bytes v;
    assert_true(read_key(rlt_cat(&arena, q, BYTES(0x15, 0x02, 0x02, 'c', 'n', 0x00)), &v));
    assert_true(cfdb_bytes_eq(v, BYTES(0x02, 0, 0, 0, 0, 0, 0, 0)));
    assert_false(read_key(rlt_cat(&arena, q, BYTES(0x15, 0x02, 0x02, 'c', 'p', 0x00)), NULL));
    cfdb_rl_metadata_free(md2);
    cfdb_rl_metadata_free(md);
}

/* ---- a record type in several union fields ---- */

/* The one FileDescriptorProto of a FileDescriptorSet made by make_pb_vectors.sh. */
static cfdb_bytes only_file(const char *vector)
{
    cfdb_bytes set = rlt_read_vector(&arena, vector);
    assert_int_equal(set.ptr[0], 0x0a);
    uint32_t len = 0, shift = 0, i = 1;
    while (set.ptr[i] & 0x80) {
        len |= (uint32_t)(set.ptr[i++] & 0x7f) << shift;
        shift += 7;
    }
    len |= (uint32_t)set.ptr[i++] << shift;
    assert_int_equal(i + len, set.len);
    return cfdb_bytes_make(set.ptr + i, len);
}

/* tests/vectors/records/rl_union2.proto: RecordTypeUnion { Rec old = 1; Other a = 2;
 * Rec _Rec = 3; Other b = 4; Rec newer = 5; }. RecordMetaDataBuilder.fillUnionFields /
 * remapUnionField keep, for writing, the field named "_" + the type's name, else the one
 * with the larger number: Rec under _Rec (3), Other under b (4); RecordType.getRecordTypeKey
 * stays the smallest number (Rec 1, Other 2). DynamicMessageRecordSerializer.serialize then
 * writes the union with that field: Rec {id 7} at P + (1, 7, 0) = 1a 02 08 07, Other {id 9}
 * at P + (1, 9, 0) = 22 02 08 09. A record Java wrote under another field of the type
 * (old: 0a 02 08 08) is read as that type. */
static void test_union_field_for_writing(void **state)
{
    (void)state;
    cfdb_pb_msg *m = rlt_schema_msg(&arena, RL_PKG "MetaData");
    assert_int_equal(rl_set_bytes(m, "records", only_file("rl_union2_only.pb")), 0);
    rlt_add_type(&arena, m, "Rec", F("id"));
    rlt_add_type(&arena, m, "Other", F("id"));
    rl_set_int(m, "version", 1);
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    const cfdb_rl_record_type *rec = cfdb_rl_record_type_by_name(md, "Rec");
    const cfdb_rl_record_type *other = cfdb_rl_record_type_by_name(md, "Other");
    assert_int_equal(rec->union_field->number, 3);
    assert_int_equal(other->union_field->number, 4);
    assert_int_equal(rec->record_type_key.v.i, 1);
    assert_int_equal(other->record_type_key.v.i, 2);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    cfdb_pb_value v;
    cfdb_pb_msg *r = cfdb_pb_msg_new(&arena, rec->descriptor);
    v.i = 7;
    cfdb_pb_set(r, cfdb_pb_field_by_name(rec->descriptor, "id"), v);
    cfdb_pb_msg *o = cfdb_pb_msg_new(&arena, other->descriptor);
    v.i = 9;
    cfdb_pb_set(o, cfdb_pb_field_by_name(other->descriptor, "id"), v);
    assert_int_equal(with_store(md, p, save_fn, r), 0);
    assert_int_equal(with_store(md, p, save_fn, o), 0);
    cfdb_bytes keys[] = { BYTES(0x15, 0x01, 0x15, 0x07, 0x14), BYTES(0x15, 0x01, 0x15, 0x09, 0x14) };
    cfdb_bytes values[] = { BYTES(0x1a, 0x02, 0x08, 0x07), BYTES(0x22, 0x02, 0x08, 0x09) };
    expect_under(p, BYTES(0x15, 0x01), keys, values, 2);
    put(p, BYTES(0x15, 0x01, 0x15, 0x08, 0x14), BYTES(0x0a, 0x02, 0x08, 0x08));
    FDBTransaction *tr = api_tr();
    cfdb_rl_store *s;
    assert_int_equal(cfdb_rl_store_open(tr, md, p, CFDB_RL_OPEN, &s), 0);
    cfdb_tuple pk;
    cfdb_tuple_init(&pk, &arena);
    cfdb_tuple_add_int(&pk, 8);
    cfdb_rl_loaded l;
    assert_int_equal(cfdb_rl_store_load(s, tr, &arena, &pk, &l), 0);
    assert_true(l.found);
    assert_ptr_equal(l.type, rec);
    cfdb_rl_store_free(s);
    fdb_transaction_destroy(tr);
    cfdb_rl_metadata_free(md);
}

/* ---- record counts ---- */

static cfdb_rl_metadata *counted_md(int32_t version, const cfdb_kex *count_key)
{
    cfdb_pb_msg *m = rlt_base_metadata(&arena, version);
    if (count_key)
        rlt_kex_into(&arena, m, "record_count_key", count_key);
    return rlt_load(&arena, m);
}

/* FDBRecordStore.checkPossiblyRebuildRecordCounts: when the header's record_count_key is not
 * the metadata's, P + (4, ...) is cleared, the header gets the new key (or none), and
 * addRebuildRecordCountsJob SETs each group's count as a little-endian int64. Counts by name
 * (P + (4, "a") = ADD 1 per record), then by record type key: P + (4, 1) = 03 00 .. 00 for
 * three Persons; then no count key: P + (4) empty and the header without field 4. */
static void test_record_count_key_changed(void **state)
{
    (void)state;
    cfdb_rl_metadata *md1 = counted_md(1, F("name"));
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    assert_int_equal(with_store(md1, p, save_fn, person(md1, 1, "a")), 0);
    assert_int_equal(with_store(md1, p, save_fn, person(md1, 2, "a")), 0);
    assert_int_equal(with_store(md1, p, save_fn, person(md1, 3, "b")), 0);
    cfdb_bytes counts = BYTES(0x15, 0x04);
    cfdb_bytes by_name[] = { BYTES(0x15, 0x04, 0x02, 'a', 0x00), BYTES(0x15, 0x04, 0x02, 'b', 0x00) };
    cfdb_bytes n_by_name[] = { BYTES(2, 0, 0, 0, 0, 0, 0, 0), BYTES(1, 0, 0, 0, 0, 0, 0, 0) };
    expect_under(p, counts, by_name, n_by_name, 2);

    cfdb_rl_metadata *md2 = counted_md(2, cfdb_kex_record_type_key(&arena));
    assert_int_equal(with_store(md2, p, NULL, NULL), 0);
    cfdb_bytes by_type = BYTES(0x15, 0x04, 0x15, 0x01), three = BYTES(3, 0, 0, 0, 0, 0, 0, 0);
    expect_under(p, counts, &by_type, &three, 1);
    /* the header's record_count_key (field 4) is KeyExpression {record_type_key (11): {}} =
     * 22 02 5a 00 */
    cfdb_bytes header;
    assert_true(read_key(rlt_cat(&arena, p, BYTES(0x14)), &header));
    bool found = false;
    for (uint32_t i = 0; i + 4 <= header.len; i++)
        found |= !memcmp(header.ptr + i, "\x22\x02\x5a\x00", 4);
    assert_true(found);
    /* saves count under the new key */
    assert_int_equal(with_store(md2, p, save_fn, person(md2, 4, "c")), 0);
    cfdb_bytes four = BYTES(4, 0, 0, 0, 0, 0, 0, 0);
    expect_under(p, counts, &by_type, &four, 1);

    cfdb_rl_metadata *md3 = counted_md(3, NULL);
    assert_int_equal(with_store(md3, p, NULL, NULL), 0);
    expect_under(p, counts, NULL, NULL, 0);
    assert_true(read_key(rlt_cat(&arena, p, BYTES(0x14)), &header));
    for (uint32_t i = 0; i + 4 <= header.len; i++)
        assert_false(!memcmp(header.ptr + i, "\x22\x02\x5a\x00", 4));
    cfdb_rl_metadata_free(md3);
    cfdb_rl_metadata_free(md2);
    cfdb_rl_metadata_free(md1);
}

/* ---- former indexes ---- */

static void add_former(cfdb_pb_msg *m, const char *name, cfdb_bytes subspace_key, int32_t added,
                       int32_t removed)
{
    cfdb_pb_msg *f;
    assert_int_equal(rl_add_msg(m, "former_indexes", &f), 0);
    if (name)
        rl_set_bytes(f, "former_name", cfdb_bytes_str(name));
    rl_set_bytes(f, "subspace_key", subspace_key);
    rl_set_int(f, "added_version", added);
    rl_set_int(f, "removed_version", removed);
}

/* FDBRecordStore.checkRebuild -> removeFormerIndex for each of
 * RecordMetaData.getFormerIndexesSince(stored version) (added <= stored < removed): the
 * tuple ranges under P + (2, "old"), (3, "old"), (10, "old"), (6, "old"), (7, "old") cleared and
 * the state P + (5, "old") set READABLE (cleared). A former index added after the stored
 * version ("x": added 2, removed 2) is left alone. FormerIndex.subspace_key is the packed
 * tuple ("old") = 02 6f 6c 64 00 (FormerIndex.toProto). */
static void test_former_indexes(void **state)
{
    (void)state;
    cfdb_pb_msg *m1 = rlt_base_metadata(&arena, 1);
    rlt_add_index(&arena, m1, "old", "value", F("name"), "Person");
    cfdb_rl_metadata *md1 = rlt_load(&arena, m1);
    cfdb_bytes p = rlt_prefix(&arena, "rj");
    assert_int_equal(with_store(md1, p, save_fn, person(md1, 1, "a")), 0);
    mark_op wo = { "old", CFDB_RL_INDEX_WRITE_ONLY };
    assert_int_equal(with_store(md1, p, mark_fn, &wo), 0);
    cfdb_bytes x_entry = BYTES(0x15, 0x02, 0x02, 'x', 0x00, 0x15, 0x01);
    put(p, x_entry, BYTES(0x01));
    cfdb_bytes old_ix = BYTES(0x15, 0x02, 0x02, 'o', 'l', 'd', 0x00);
    uint32_t n;
    read_under(p, old_ix, &n);
    assert_int_equal(n, 1);
    read_under(p, BYTES(0x15, 0x05), &n);
    assert_int_equal(n, 1);
    read_under(p, BYTES(0x15, 0x06), &n);
    assert_int_equal(n, 1);

    cfdb_pb_msg *m2 = rlt_base_metadata(&arena, 2);
    add_former(m2, "old", BYTES(0x02, 'o', 'l', 'd', 0x00), 1, 2);
    add_former(m2, NULL, BYTES(0x02, 'x', 0x00), 2, 2);
    cfdb_rl_metadata *md2 = rlt_load(&arena, m2);
    assert_int_equal(md2->former_index_count, 2);
    assert_int_equal(with_store(md2, p, NULL, NULL), 0);
    expect_under(p, old_ix, NULL, NULL, 0);
    expect_under(p, BYTES(0x15, 0x05), NULL, NULL, 0);
    expect_under(p, BYTES(0x15, 0x06), NULL, NULL, 0);
    cfdb_bytes one = BYTES(0x01);
    expect_under(p, BYTES(0x15, 0x02, 0x02, 'x', 0x00), &x_entry, &one, 1);
    /* a former index whose subspace key is no one-element tuple: 1044 */
    cfdb_pb_msg *m3 = rlt_base_metadata(&arena, 3);
    add_former(m3, "bad", BYTES(0x02, 'a', 0x00, 0x02, 'b', 0x00), 1, 3);
    cfdb_bytes raw;
    assert_int_equal(cfdb_pb_encode(m3, &arena, &raw), 0);
    cfdb_rl_metadata *bad;
    cfdb_pb_error err;
    assert_int_equal(cfdb_rl_metadata_from_proto(raw.ptr, raw.len, &bad, &err), CFDB_ERR_SERIALIZATION_FAILED);
    cfdb_rl_metadata_free(md2);
    cfdb_rl_metadata_free(md1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pk_positions_ignore_null_interpretation),
        cmocka_unit_test(test_old_format_versions),
        cmocka_unit_test(test_old_versions_upgraded),
        cmocka_unit_test(test_cacheable_state_bumps_metadata_version),
        cmocka_unit_test(test_indexer_stamp_and_heartbeats),
        cmocka_unit_test(test_clear_when_zero),
        cmocka_unit_test(test_ever_tuple_on_removal),
        cmocka_unit_test(test_unique_nulls),
        cmocka_unit_test(test_union_field_for_writing),
        cmocka_unit_test(test_record_count_key_changed),
        cmocka_unit_test(test_former_indexes),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
