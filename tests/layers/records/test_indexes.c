/* SPDX-License-Identifier: Apache-2.0 */
/* Index types, index states, record versions and counts, delete-all (src/layers/records:
 * rl_index_value.c, rl_index_atomic.c, rl_index_version.c, rl_index_state.c, rl_store.c)
 * against a cfdb-server of its own, with the key and value bytes the Java Record Layer writes,
 * derived by hand from the layouts in docs/design/records.md: the whole sets of pairs under a
 * keyspace are in tests/vectors/records/index_entries.tsv (with their sources), the single
 * values and key parts checked in line here use:
 *   tuple codes: 0x02 string ... 0x00, 0x14 zero, 0x15 0xNN one-byte positive integer,
 *   0x13 0xfe = -1, 0x33 + 12 bytes versionstamp; P = the store prefix; keyspaces
 *   (FDBRecordStoreKeyspace) 1 records, 2 indexes, 4 record counts, 5 index states,
 *   6 index ranges, 7 uniqueness violations. Person's primary key is (record type key 1, id). */
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
        if (!err)
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
    for (cfdb_pb_msg **m = ctx; *m; m++) {
        int rc = cfdb_rl_store_save(s, tr, &arena, *m, NULL);
        if (rc)
            return rc;
    }
    return 0;
}

/* Saves the NULL-terminated records in one transaction. */
static int save(const cfdb_rl_metadata *md, cfdb_bytes p, cfdb_pb_msg *r1, cfdb_pb_msg *r2)
{
    cfdb_pb_msg *list[3] = { r1, r2, NULL };
    return with_store(md, p, save_fn, list);
}

static cfdb_tuple *pk_of(int64_t type_key, int64_t id)
{
    cfdb_tuple *t = cfdb_arena_alloc(&arena, sizeof *t);
    cfdb_tuple_init(t, &arena);
    cfdb_tuple_add_int(t, type_key);
    cfdb_tuple_add_int(t, id);
    return t;
}

static int delete_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    return cfdb_rl_store_delete(s, tr, &arena, ctx, NULL);
}

typedef struct mark_op {
    const char *name;
    cfdb_rl_index_state state;
} mark_op;

static int mark_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    mark_op *m = ctx;
    return cfdb_rl_store_mark_index(s, tr, m->name, m->state);
}

/* A Person of rl_types.proto. */
static cfdb_pb_msg *person(const cfdb_rl_metadata *md, int64_t id, const char *name, int color,
                           int64_t s32)
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
    if (color) {
        v.i = color;
        cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "color"), v);
    }
    v.i = s32;
    cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "s32"), v);
    return m;
}

static void set_u32(const cfdb_rl_metadata *md, cfdb_pb_msg *m, uint32_t u)
{
    const cfdb_rl_record_type *t = cfdb_rl_record_type_by_name(md, "Person");
    cfdb_pb_value v;
    v.u = u;
    cfdb_pb_set(m, cfdb_pb_field_by_name(t->descriptor, "u32"), v);
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
    cfdb_bytes range[2] = { rlt_cat(&arena, p, space), rlt_cat(&arena, rlt_cat(&arena, p, space), BYTES(0xff)) };
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

/* The pairs under P + space are exactly keys/values (P + key each). */
static void expect_under(cfdb_bytes p, cfdb_bytes space, const cfdb_bytes *keys,
                         const cfdb_bytes *values, uint32_t n)
{
    uint32_t count;
    dir_kv *kvs = read_under(p, space, &count);
    bool ok = count == n;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = cfdb_bytes_eq(kvs[i].key, rlt_cat(&arena, p, keys[i])) && cfdb_bytes_eq(kvs[i].value, values[i]);
    if (!ok) {
        dump(p, kvs, count);
        fail_msg("%u pairs under the space, want %u (listed above)", count, n);
    }
}

/* ---- byte vectors: tests/vectors/records/index_entries.tsv ---- */

#define VSET_MAX 16

/* One named set of the file: keys after P and whole values, in file order. */
typedef struct vset {
    cfdb_bytes keys[VSET_MAX], values[VSET_MAX];
    uint32_t n;
} vset;

static cfdb_bytes unhex(const char *h)
{
    if (!strcmp(h, "-"))
        return (cfdb_bytes){ (const uint8_t *)"", 0 };
    size_t len = strlen(h);
    assert_int_equal(len % 2, 0);
    uint8_t *b = cfdb_arena_alloc(&arena, len / 2 + 1);
    assert_non_null(b);
    for (size_t i = 0; i < len / 2; i++) {
        unsigned v;
        assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
        b[i] = (uint8_t)v;
    }
    return cfdb_bytes_make(b, len / 2);
}

static void load_set(const char *name, vset *out)
{
    FILE *f = fopen(CFDB_VECTORS_DIR "/records/index_entries.tsv", "r");
    assert_non_null(f);
    out->n = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *set = strtok(line, "\t\n"), *k = strtok(NULL, "\t\n"), *v = strtok(NULL, "\t\n");
        assert_non_null(v);
        if (strcmp(set, name))
            continue;
        assert_true(out->n < VSET_MAX);
        out->keys[out->n] = unhex(k);
        out->values[out->n] = unhex(v);
        out->n++;
    }
    fclose(f);
    if (!out->n)
        fail_msg("no vector set %s", name);
}

/* The pairs under P + space are exactly the set's. */
static void expect_set(cfdb_bytes p, cfdb_bytes space, const char *name)
{
    vset v;
    load_set(name, &v);
    expect_under(p, space, v.keys, v.values, v.n);
}

#define NEG_LE(v) BYTES((uint8_t)(256 - (v)), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)

/* Metadata: rl_types.proto with the given extra indexes. */
static cfdb_pb_msg *base(int32_t version)
{
    return rlt_base_metadata(&arena, version);
}

static cfdb_pb_msg *add_unique(cfdb_pb_msg *ix)
{
    cfdb_pb_msg *opt;
    rl_add_msg(ix, "options", &opt);
    rl_set_bytes(opt, "key", cfdb_bytes_str("unique"));
    rl_set_bytes(opt, "value", cfdb_bytes_str("true"));
    return ix;
}

#define F(name) cfdb_kex_field(&arena, name, CFDB_KEX_SCALAR)

/* ---- unique VALUE ---- */

static void test_unique_value(void **state)
{
    (void)state;
    cfdb_pb_msg *m = base(1);
    add_unique(rlt_add_index(&arena, m, "u", "value", F("name"), "Person"));
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rx");
    cfdb_bytes ix = BYTES(0x15, 0x02, 0x02, 'u', 0x00);

    assert_int_equal(save(md, p, person(md, 1, "a", 0, 0), NULL), 0);
    assert_int_equal(save(md, p, person(md, 2, "b", 0, 0), NULL), 0);
    expect_set(p, ix, "unique.entries");

    /* A second "a" while readable: RecordIndexUniquenessViolation, nothing written. */
    assert_int_equal(save(md, p, person(md, 3, "a", 0, 0), NULL), CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* ... also when the first is saved earlier in the same transaction. */
    assert_int_equal(save(md, p, person(md, 4, "c", 0, 0), person(md, 5, "c", 0, 0)),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    expect_set(p, ix, "unique.entries");
    /* Re-saving the same record with the same name is no violation. */
    assert_int_equal(save(md, p, person(md, 1, "a", 0, 7), NULL), 0);

    /* Write-only: the save goes through and the violation is recorded both ways. */
    mark_op wo = { "u", CFDB_RL_INDEX_WRITE_ONLY };
    assert_int_equal(with_store(md, p, mark_fn, &wo), 0);
    expect_set(p, BYTES(0x15, 0x05), "unique.state_write_only");
    assert_int_equal(save(md, p, person(md, 3, "a", 0, 0), NULL), 0);
    expect_set(p, BYTES(0x15, 0x07), "unique.violations");
    /* Readable again is refused while violations exist. */
    mark_op rd = { "u", CFDB_RL_INDEX_READABLE };
    assert_int_equal(with_store(md, p, mark_fn, &rd), CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* Deleting one side removes its entry and, being the last but one, the other's too. */
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 3)), 0);
    expect_under(p, BYTES(0x15, 0x07), NULL, NULL, 0);
    assert_int_equal(with_store(md, p, mark_fn, &rd), 0);
    expect_under(p, BYTES(0x15, 0x05), NULL, NULL, 0);
    expect_under(p, BYTES(0x15, 0x06), NULL, NULL, 0);   /* built ranges cleared */
    cfdb_rl_metadata_free(md);
}

/* ---- COUNT, SUM, MAX/MIN_EVER ---- */

static void test_atomic(void **state)
{
    (void)state;
    cfdb_pb_msg *m = base(1);
    /* count grouped by color; sum of s32 grouped by color; ungrouped count; max/min ever of
     * u32; max ever of the name tuple */
    rlt_add_index(&arena, m, "c", "count", cfdb_kex_grouping(&arena, F("color"), 0), "Person");
    const cfdb_kex *cs[] = { F("color"), F("s32") };
    rlt_add_index(&arena, m, "s", "sum", cfdb_kex_grouping(&arena, cfdb_kex_then(&arena, cs, 2), 1),
                  "Person");
    rlt_add_index(&arena, m, "n", "count", cfdb_kex_grouping(&arena, cfdb_kex_empty(&arena), 0),
                  "Person");
    rlt_add_index(&arena, m, "mx", "max_ever_long", cfdb_kex_grouping(&arena, F("u32"), 1), "Person");
    rlt_add_index(&arena, m, "mn", "min_ever_long", cfdb_kex_grouping(&arena, F("u32"), 1), "Person");
    rlt_add_index(&arena, m, "mt", "max_ever_tuple", cfdb_kex_grouping(&arena, F("name"), 1), "Person");
    rlt_add_index(&arena, m, "nt", "min_ever_tuple", cfdb_kex_grouping(&arena, F("name"), 1), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rx");

    cfdb_pb_msg *a = person(md, 1, "b", 1, 5), *b = person(md, 2, "a", 1, -3), *c = person(md, 3, "c", 2, 7);
    set_u32(md, a, 5);
    set_u32(md, b, 9);
    set_u32(md, c, 3);
    assert_int_equal(save(md, p, a, b), 0);
    assert_int_equal(save(md, p, c, NULL), 0);
    expect_set(p, BYTES(0x15, 0x02), "atomic.saved");

    /* b moves to BLUE with s32 -4; a is deleted: counts and sums follow, the _ever ones keep
     * what they saw. */
    cfdb_pb_msg *b2 = person(md, 2, "a", 2, -4);
    set_u32(md, b2, 9);
    assert_int_equal(save(md, p, b2, NULL), 0);
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 1)), 0);
    expect_set(p, BYTES(0x15, 0x02), "atomic.updated");

    /* MAX_EVER_LONG refuses negatives: uint32 0xffffffff is Java's int -1. */
    cfdb_pb_msg *neg = person(md, 4, "d", 1, 0);
    set_u32(md, neg, 0xffffffffu);
    assert_int_equal(save(md, p, neg, NULL), CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* An aggregate index whose root is not a grouping expression: refused when the metadata
     * is loaded (IndexValidator.validateGrouping), not by every save. */
    cfdb_pb_msg *m2 = base(1);
    rlt_add_index(&arena, m2, "bad", "max_ever_long", F("u32"), "Person");
    cfdb_bytes raw;
    assert_int_equal(cfdb_pb_encode(m2, &arena, &raw), 0);
    cfdb_rl_metadata *md2 = NULL;
    cfdb_pb_error err;
    assert_int_equal(cfdb_rl_metadata_from_proto(raw.ptr, raw.len, &md2, &err),
                     CFDB_ERR_SERIALIZATION_FAILED);
    assert_null(md2);
    assert_non_null(strstr(err.message, "index type requires grouping: bad"));
    /* SUM of -3 alone: NEG_LE */
    cfdb_bytes p2 = rlt_prefix(&arena, "rx");
    assert_int_equal(save(md, p2, person(md, 5, "e", 1, -3), NULL), 0);
    uint32_t n;
    dir_kv *kvs = read_under(p2, BYTES(0x15, 0x02, 0x02, 's', 0x00), &n);
    assert_int_equal(n, 1);
    assert_true(cfdb_bytes_eq(kvs[0].value, NEG_LE(3)));
    cfdb_rl_metadata_free(md);
}

/* ---- VERSION index and record versions ---- */

typedef struct version_io {
    const cfdb_tuple *pk;
    cfdb_rl_version v;
} version_io;

static int load_version_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    version_io *io = ctx;
    return cfdb_rl_store_load_version(s, tr, &arena, io->pk, &io->v);
}

/* Saves id 1 twice and id 2 once in one transaction, reading id 1's version between. */
static int twice_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    const cfdb_rl_metadata *md = ctx;
    int rc = cfdb_rl_store_save(s, tr, &arena, person(md, 1, "x", 0, 0), NULL);
    if (!rc)
        rc = cfdb_rl_store_save(s, tr, &arena, person(md, 2, "y", 0, 0), NULL);
    if (!rc)
        rc = cfdb_rl_store_save(s, tr, &arena, person(md, 1, "z", 0, 0), NULL);
    cfdb_rl_version v;
    if (!rc)
        rc = cfdb_rl_store_load_version(s, tr, &arena, pk_of(1, 1), &v);
    /* incomplete: 10 x 0xff, then local version 2 (the third save) */
    if (!rc && (!v.present || v.complete || v.bytes[0] != 0xff || v.bytes[9] != 0xff ||
                v.bytes[10] != 0 || v.bytes[11] != 2))
        rc = CFDB_ERR_INTERNAL_ERROR;
    return rc;
}

static void test_version_index(void **state)
{
    (void)state;
    cfdb_pb_msg *m = base(1);
    rl_set_int(m, "store_record_versions", 1);
    rlt_add_index(&arena, m, "vi", "version", cfdb_kex_version(&arena), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    /* Without store_record_versions the metadata is refused (Java's IndexValidator). */
    cfdb_pb_msg *nv = base(1);
    rlt_add_index(&arena, nv, "vi", "version", cfdb_kex_version(&arena), "Person");
    cfdb_bytes raw;
    assert_int_equal(cfdb_pb_encode(nv, &arena, &raw), 0);
    cfdb_rl_metadata *bad;
    cfdb_pb_error err;
    assert_int_equal(cfdb_rl_metadata_from_proto(raw.ptr, raw.len, &bad, &err), CFDB_ERR_SERIALIZATION_FAILED);
    cfdb_bytes p = rlt_prefix(&arena, "rx");
    assert_int_equal(with_store(md, p, twice_fn, (void *)md), 0);
    assert_int_equal(save(md, p, person(md, 3, "w", 0, 0), NULL), 0);

    /* P + (2, "vi", versionstamp, 1, id) = '': one entry per record (id 1's first save left
     * nothing), ordered by commit then local version: id 2 (local 1), id 1 (local 2), then
     * id 3 of the later commit (local 0). */
    uint32_t n;
    dir_kv *kvs = read_under(p, BYTES(0x15, 0x02, 0x02, 'v', 'i', 0x00), &n);
    if (n != 3)
        dump(p, kvs, n);
    assert_int_equal(n, 3);
    size_t at = p.len + 6;
    int64_t ids[] = { 2, 1, 3 };
    uint16_t locals[] = { 1, 2, 0 };
    for (uint32_t i = 0; i < 3; i++) {
        const uint8_t *k = kvs[i].key.ptr;
        assert_int_equal(kvs[i].key.len, at + 13 + 4);
        assert_int_equal(k[at], 0x33);
        assert_int_equal(k[at + 11] << 8 | k[at + 12], locals[i]);
        assert_memory_equal(k + at + 13, ((uint8_t[]){ 0x15, 0x01, 0x15, (uint8_t)ids[i] }), 4);
        assert_int_equal(kvs[i].value.len, 0);
        /* the record's version (P + (1, 1, id, -1)) is the entry's versionstamp */
        version_io io = { .pk = pk_of(1, ids[i]) };
        assert_int_equal(with_store(md, p, load_version_fn, &io), 0);
        assert_true(io.v.present && io.v.complete);
        assert_memory_equal(io.v.bytes, k + at + 1, 12);
    }
    assert_memory_equal(kvs[0].key.ptr + at + 1, kvs[1].key.ptr + at + 1, 10);   /* one commit */
    assert_true(memcmp(kvs[1].key.ptr + at + 1, kvs[2].key.ptr + at + 1, 10) < 0);

    /* Deleting id 2 clears its entry (complete version now) and its version key. */
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 2)), 0);
    read_under(p, BYTES(0x15, 0x02, 0x02, 'v', 'i', 0x00), &n);
    assert_int_equal(n, 2);
    version_io gone = { .pk = pk_of(1, 2) };
    assert_int_equal(with_store(md, p, load_version_fn, &gone), 0);
    assert_false(gone.v.present);
    cfdb_rl_metadata_free(md);
}

/* ---- record counts, delete-all, disabled indexes ---- */

typedef struct count_io {
    const cfdb_tuple *key;
    int64_t n;
} count_io;

static int count_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    count_io *io = ctx;
    return cfdb_rl_store_record_count(s, tr, &arena, io->key, &io->n);
}

static int delete_all_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    (void)ctx;
    return cfdb_rl_store_delete_all(s, tr);
}

static void test_counts_delete_all_states(void **state)
{
    (void)state;
    cfdb_pb_msg *m = base(1);
    rlt_kex_into(&arena, m, "record_count_key", cfdb_kex_record_type_key(&arena));
    rlt_add_index(&arena, m, "nm", "value", F("name"), "Person");
    rlt_add_index(&arena, m, "off", "value", F("id"), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rx");
    mark_op dis = { "off", CFDB_RL_INDEX_DISABLED };
    assert_int_equal(with_store(md, p, mark_fn, &dis), 0);
    expect_set(p, BYTES(0x15, 0x05), "state.disabled");

    assert_int_equal(save(md, p, person(md, 1, "a", 0, 0), person(md, 2, "b", 0, 0)), 0);
    assert_int_equal(save(md, p, person(md, 1, "c", 0, 0), NULL), 0);   /* update: no count */
    const cfdb_rl_record_type *ot = cfdb_rl_record_type_by_name(md, "Order");
    cfdb_pb_msg *order = cfdb_pb_msg_new(&arena, ot->descriptor);
    cfdb_pb_value v = { .i = 9 };
    cfdb_pb_set(order, cfdb_pb_field_by_name(ot->descriptor, "order_id"), v);
    assert_int_equal(save(md, p, order, NULL), 0);
    expect_set(p, BYTES(0x15, 0x04), "counts.by_type");
    count_io all = { .key = NULL }, persons = { .key = pk_of(1, 0) };
    cfdb_tuple_init((cfdb_tuple *)persons.key, &arena);
    cfdb_tuple_add_int((cfdb_tuple *)persons.key, 1);
    assert_int_equal(with_store(md, p, count_fn, &all), 0);
    assert_int_equal(all.n, 3);
    assert_int_equal(with_store(md, p, count_fn, &persons), 0);
    assert_int_equal(persons.n, 2);
    assert_int_equal(with_store(md, p, delete_fn, pk_of(1, 2)), 0);
    assert_int_equal(with_store(md, p, count_fn, &all), 0);
    assert_int_equal(all.n, 2);
    /* The disabled index got nothing; the readable one has the live names. */
    expect_set(p, BYTES(0x15, 0x02), "value.live");

    /* Delete-all: records, entries and counts go; header and index states stay. */
    assert_int_equal(with_store(md, p, delete_all_fn, NULL), 0);
    for (uint8_t ks = 1; ks <= 4; ks++)
        expect_under(p, BYTES(0x15, ks), NULL, NULL, 0);
    expect_set(p, BYTES(0x15, 0x05), "state.disabled");
    cfdb_bytes hk[] = { BYTES(0x14) };
    FDBTransaction *tr = api_tr();
    bool present;
    cfdb_bytes hv;
    assert_int_equal(dir_get(tr, &arena, rlt_cat(&arena, p, hk[0]), false, &present, &hv), 0);
    fdb_transaction_destroy(tr);
    assert_true(present);
    cfdb_rl_metadata_free(md);
}

/* ---- reads per save: the old record only ---- */

typedef struct rcr_io {
    cfdb_rl_store *s;
    cfdb_pb_msg *rec;
    uint32_t ranges;
    cfdb_bytes first;
} rcr_io;

static void test_reads_per_save(void **state)
{
    (void)state;
    cfdb_pb_msg *m = base(1);
    rlt_add_index(&arena, m, "i1", "value", F("name"), "Person");
    rlt_add_index(&arena, m, "i2", "value", F("s32"), "Person");
    rlt_add_index(&arena, m, "i3", "value", F("color"), "Person");
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rx");
    assert_int_equal(save(md, p, person(md, 1, "a", 1, 1), NULL), 0);
    /* Store opened in one transaction, used in another: the second one's read conflict
     * ranges (\xff\xff/transaction/read_conflict_range/) are what the save read. */
    FDBTransaction *t1 = api_tr(), *t2 = api_tr();
    cfdb_rl_store *s;
    assert_int_equal(cfdb_rl_store_open(t1, md, p, CFDB_RL_OPEN, &s), 0);
    assert_int_equal(cfdb_rl_store_save(s, t2, &arena, person(md, 1, "b", 2, 2), NULL), 0);
    cfdb_bytes rb = CFDB_BYTES_LIT("\xff\xff/transaction/read_conflict_range/");
    cfdb_bytes re = CFDB_BYTES_LIT("\xff\xff/transaction/read_conflict_range/\xff");
    dir_kv *kvs;
    uint32_t n;
    assert_int_equal(dir_get_all(t2, &arena, rb, re, &kvs, &n), 0);
    /* one range: [P + (1, 1, 1) + 0x00, P + (1, 1, 1) + 0xff), the old record's keys */
    if (n != 2)
        dump(rb, kvs, n);
    assert_int_equal(n, 2);
    cfdb_bytes want = rlt_cat(&arena, rb, rlt_cat(&arena, p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x01, 0x00)));
    assert_true(cfdb_bytes_eq(kvs[0].key, want));
    cfdb_rl_store_free(s);
    fdb_transaction_destroy(t1);
    fdb_transaction_destroy(t2);
    cfdb_rl_metadata_free(md);
}

/* A save a readable unique index refuses writes nothing, even of the indexes before it ("c"
 * precedes "u"): the transaction that goes on and commits holds no trace of it. */
static int refused_then_commit_fn(cfdb_rl_store *s, FDBTransaction *tr, void *ctx)
{
    (void)ctx;
    const cfdb_rl_metadata *md = cfdb_rl_store_metadata(s);
    assert_int_equal(cfdb_rl_store_save(s, tr, &arena, person(md, 3, "a", 2, 0), NULL),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_ptr_equal(cfdb_rl_store_last_violation(s), cfdb_rl_index_by_name(md, "u"));
    return 0;
}

static void test_unique_refusal_writes_nothing(void **state)
{
    (void)state;
    cfdb_pb_msg *m = base(1);
    rlt_add_index(&arena, m, "c", "value", F("color"), "Person");
    add_unique(rlt_add_index(&arena, m, "u", "value", F("name"), "Person"));
    cfdb_rl_metadata *md = rlt_load(&arena, m);
    cfdb_bytes p = rlt_prefix(&arena, "rn");
    assert_int_equal(save(md, p, person(md, 1, "a", 1, 0), NULL), 0);
    assert_int_equal(with_store(md, p, refused_then_commit_fn, NULL), 0);
    /* c: (color 1, record type key 1, id 1) alone; no record 3 */
    cfdb_bytes k = BYTES(0x15, 0x02, 0x02, 'c', 0x00, 0x15, 0x01, 0x15, 0x01, 0x15, 0x01);
    cfdb_bytes v = { (const uint8_t *)"", 0 };
    expect_under(p, BYTES(0x15, 0x02, 0x02, 'c', 0x00), &k, &v, 1);
    expect_under(p, BYTES(0x15, 0x01, 0x15, 0x01, 0x15, 0x03), NULL, NULL, 0);
    cfdb_rl_metadata_free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unique_value),
        cmocka_unit_test(test_unique_refusal_writes_nothing),
        cmocka_unit_test(test_atomic),
        cmocka_unit_test(test_version_index),
        cmocka_unit_test(test_counts_delete_all_states),
        cmocka_unit_test(test_reads_per_save),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
