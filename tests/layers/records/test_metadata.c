/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer metadata (src/layers/records/rl_metadata.c): from a records .proto with the
 * Record Layer's options (tests/vectors/records/rl_options.proto, compiled by protoc), and
 * from MetaData protobufs built here field by field, as the Java Record Layer stores them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "cfdb/records/metadata.h"
#include "rl_internal.h"
#include "rl_test_util.h"

static cfdb_arena arena;

static cfdb_bytes read_vector(const char *name)
{
    return rlt_read_vector(&arena, name);
}

static cfdb_bytes pack1(const cfdb_tuple *t)
{
    cfdb_bytes out;
    assert_int_equal(cfdb_tuple_pack(&arena, (cfdb_bytes){ NULL, 0 }, t, &out), 0);
    return out;
}

static void test_from_options(void **state)
{
    cfdb_bytes set = read_vector("rl_options.pb");
    cfdb_rl_metadata *md;
    cfdb_pb_error err;
    int rc = cfdb_rl_metadata_from_file(set.ptr, set.len, "rl_options.proto", &md, &err);
    if (rc)
        fail_msg("from_file: %d %s", rc, err.message);
    assert_string_equal(md->union_descriptor->full_name, "cfdb.rlo.Everything");
    assert_int_equal(md->record_type_count, 2);      /* Helper is NESTED, Customer once */
    assert_true(md->split_long_records);
    assert_true(md->store_record_versions);

    const cfdb_rl_record_type *item = cfdb_rl_record_type_by_name(md, "Item");
    const cfdb_rl_record_type *cust = cfdb_rl_record_type_by_name(md, "Customer");
    assert_non_null(item);
    assert_non_null(cust);
    assert_null(cfdb_rl_record_type_by_name(md, "Helper"));
    /* Explicit key from (record).record_type_key; else the smallest union field number. */
    assert_int_equal(item->record_type_key.type, CFDB_TUPLE_INT);
    assert_int_equal(item->record_type_key.v.i, 99);
    assert_int_equal(cust->record_type_key.v.i, 3);
    assert_int_equal(cust->union_field->number, 3);
    assert_ptr_equal(cfdb_rl_record_type_of(md, cust->descriptor), cust);
    assert_int_equal(cust->primary_key->kind, CFDB_KEX_FIELD);
    assert_string_equal(cust->primary_key->field_name, "id");
    assert_string_equal(item->primary_key->field_name, "sku");

    /* Indexes from field options, named Type$field, versions 1..3 in field order. */
    assert_int_equal(md->index_count, 3);
    assert_int_equal(md->version, 3);
    const cfdb_rl_index *email = cfdb_rl_index_by_name(md, "Customer$email");
    const cfdb_rl_index *tags = cfdb_rl_index_by_name(md, "Customer$tags");
    const cfdb_rl_index *score = cfdb_rl_index_by_name(md, "Customer$score");
    assert_non_null(email);
    assert_non_null(tags);
    assert_non_null(score);
    assert_string_equal(email->type, "value");
    assert_true(email->unique);
    assert_string_equal(cfdb_rl_index_option_value(email, "unique"), "true");
    assert_false(tags->unique);
    assert_int_equal(tags->root->fan_type, CFDB_KEX_FAN_OUT);
    assert_string_equal(score->type, "rank");
    assert_int_equal(score->root->kind, CFDB_KEX_GROUPING);
    assert_int_equal(email->last_modified_version, 1);
    assert_int_equal(score->last_modified_version, 3);
    assert_int_equal(score->added_version, 3);
    assert_int_equal(email->subspace_key.type, CFDB_TUPLE_STRING);
    assert_true(cfdb_bytes_eq(email->subspace_key.v.bytes, cfdb_bytes_str("Customer$email")));
    assert_int_equal(cust->index_count, 3);
    assert_ptr_equal(cust->indexes[0], email);
    assert_int_equal(item->index_count, 0);
    assert_int_equal(cust->since_version, 3);
    assert_int_equal(item->since_version, 0);

    /* The primary key of a Customer record. */
    cfdb_pb_msg *c = cfdb_pb_msg_new(&arena, cust->descriptor);
    cfdb_pb_value v;
    v.i = 5;
    cfdb_pb_set(c, cfdb_pb_field_by_name(cust->descriptor, "id"), v);
    cfdb_tuple pk;
    assert_int_equal(cfdb_rl_primary_key(&arena, cust, c, &pk), 0);
    assert_true(cfdb_bytes_eq(pack1(&pk), BYTES(0x15, 0x05)));
    assert_int_equal(cfdb_rl_primary_key(&arena, item, c, &pk), CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_rl_metadata_free(md);

    /* The union is found by usage or by the name RecordTypeUnion; a file without one fails. */
    assert_int_equal(cfdb_rl_metadata_from_file(set.ptr, set.len, "record_metadata_extensions.proto",
                                                &md, &err),
                     CFDB_ERR_SERIALIZATION_FAILED);
    assert_non_null(strstr(err.message, "union"));
    assert_null(md);
    assert_int_equal(cfdb_rl_metadata_from_file(set.ptr, set.len, "missing.proto", &md, &err),
                     CFDB_ERR_SERIALIZATION_FAILED);
}

/* ---- MetaData protobufs ---- */

static cfdb_pb_msg *new_schema_msg(const char *name)
{
    return rlt_schema_msg(&arena, name);
}

static cfdb_bytes records_file(void)
{
    return rlt_records_file(&arena);
}

static cfdb_pb_msg *add_index(cfdb_pb_msg *md, const char *name, const char *type,
                              const cfdb_kex *root, const char *record_type)
{
    return rlt_add_index(&arena, md, name, type, root, record_type);
}

static cfdb_pb_msg *add_type(cfdb_pb_msg *md, const char *name, const cfdb_kex *pk)
{
    return rlt_add_type(&arena, md, name, pk);
}

static cfdb_pb_msg *base_metadata(void)
{
    return rlt_base_metadata(&arena, 12);
}

static cfdb_rl_metadata *load(cfdb_pb_msg *md, int want, const char *msg_part)
{
    cfdb_bytes raw;
    assert_int_equal(cfdb_pb_encode(md, &arena, &raw), 0);
    cfdb_rl_metadata *out;
    cfdb_pb_error err;
    int rc = cfdb_rl_metadata_from_proto(raw.ptr, raw.len, &out, &err);
    if (rc != want)
        fail_msg("from_proto: %d, want %d (%s)", rc, want, err.message);
    if (msg_part && !strstr(err.message, msg_part))
        fail_msg("error '%s' does not say '%s'", err.message, msg_part);
    return out;
}

static void test_from_proto(void **state)
{
    cfdb_pb_msg *md = base_metadata();
    cfdb_pb_msg *ix = add_index(md, "by_name", NULL, cfdb_kex_field(&arena, "name", CFDB_KEX_SCALAR),
                                "Person");
    assert_int_equal(rl_set_bytes(ix, "subspace_key", BYTES(0x15, 0x07)), 0);
    assert_int_equal(rl_set_int(ix, "last_modified_version", 4), 0);
    add_index(md, "all_count", "count", cfdb_kex_empty(&arena), NULL);
    ix = add_index(md, "old_unique", NULL, cfdb_kex_field(&arena, "who", CFDB_KEX_SCALAR), "Order");
    assert_int_equal(rl_set_int(ix, "index_type", 2), 0);      /* Index.Type.UNIQUE */
    ix = add_index(md, "both", "value", cfdb_kex_field(&arena, "name", CFDB_KEX_SCALAR), "Person");
    cfdb_pb_value v;
    v.s = cfdb_bytes_str("Order");
    assert_int_equal(cfdb_pb_add(ix, rl_f(ix, "record_type"), v), 0);
    cfdb_pb_msg *opt;
    assert_int_equal(rl_add_msg(ix, "options", &opt), 0);
    rl_set_bytes(opt, "key", cfdb_bytes_str("unique"));
    rl_set_bytes(opt, "value", cfdb_bytes_str("true"));
    add_index(md, "sum_ids", "sum", cfdb_kex_field(&arena, "id", CFDB_KEX_SCALAR), "Person");

    cfdb_rl_metadata *m = load(md, 0, NULL);
    assert_string_equal(m->union_descriptor->name, "RecordTypeUnion");
    assert_int_equal(m->version, 12);
    assert_int_equal(m->record_type_count, 2);
    const cfdb_rl_record_type *person = cfdb_rl_record_type_by_name(m, "Person");
    const cfdb_rl_record_type *order = cfdb_rl_record_type_by_name(m, "Order");
    assert_int_equal(person->record_type_key.v.i, 1);
    assert_int_equal(order->record_type_key.v.i, 2);
    assert_int_equal(person->primary_key->kind, CFDB_KEX_THEN);

    const cfdb_rl_index *by_name = cfdb_rl_index_by_name(m, "by_name");
    assert_string_equal(by_name->type, "value");
    assert_int_equal(by_name->subspace_key.type, CFDB_TUPLE_INT);
    assert_int_equal(by_name->subspace_key.v.i, 7);
    assert_int_equal(by_name->last_modified_version, 4);
    assert_int_equal(by_name->added_version, 1);   /* absent: 1, as old metadata */
    const cfdb_rl_index *all = cfdb_rl_index_by_name(m, "all_count");
    assert_int_equal(all->record_type_count, 0);   /* universal */
    assert_int_equal(all->root->kind, CFDB_KEX_GROUPING);   /* added for count */
    assert_int_equal(all->root->n1, 0);            /* count: grouped_count = columns (0) */
    const cfdb_rl_index *sum = cfdb_rl_index_by_name(m, "sum_ids");
    assert_int_equal(sum->root->kind, CFDB_KEX_GROUPING);
    assert_int_equal(sum->root->n1, 1);
    const cfdb_rl_index *old = cfdb_rl_index_by_name(m, "old_unique");
    assert_string_equal(old->type, "value");
    assert_true(old->unique);
    assert_true(cfdb_rl_index_by_name(m, "both")->unique);

    assert_int_equal(person->index_count, 2);      /* by_name, sum_ids */
    assert_int_equal(person->multi_type_index_count, 1);
    assert_string_equal(person->multi_type_indexes[0]->name, "both");
    assert_int_equal(order->index_count, 1);
    assert_string_equal(order->indexes[0]->name, "old_unique");

    /* Person's primary key includes its record type key. */
    cfdb_bytes rec = read_vector("person.bin");
    cfdb_pb_msg *ann;
    assert_int_equal(cfdb_pb_decode(&arena, person->descriptor, rec.ptr, rec.len, 0, &ann, NULL), 0);
    cfdb_tuple pk;
    assert_int_equal(cfdb_rl_primary_key(&arena, person, ann, &pk), 0);
    assert_true(cfdb_bytes_eq(pack1(&pk), BYTES(0x15, 0x01, 0x15, 0x07)));
    cfdb_rl_metadata_free(m);
}

static void test_bad_metadata(void **state)
{
    /* No records. */
    load(new_schema_msg(RL_PKG "MetaData"), CFDB_ERR_SERIALIZATION_FAILED, "no records");
    /* A record type without a primary key. */
    cfdb_pb_msg *md = new_schema_msg(RL_PKG "MetaData");
    rl_set_bytes(md, "records", records_file());
    add_type(md, "Person", cfdb_kex_field(&arena, "id", CFDB_KEX_SCALAR));
    load(md, CFDB_ERR_SERIALIZATION_FAILED, "Order");
    /* An index on an unknown type; twice the same index name; a subspace key of two items. */
    md = base_metadata();
    add_index(md, "x", NULL, cfdb_kex_field(&arena, "name", CFDB_KEX_SCALAR), "Nobody");
    load(md, CFDB_ERR_SERIALIZATION_FAILED, "unknown record type");
    md = base_metadata();
    add_index(md, "x", NULL, cfdb_kex_field(&arena, "name", CFDB_KEX_SCALAR), "Person");
    add_index(md, "x", NULL, cfdb_kex_field(&arena, "who", CFDB_KEX_SCALAR), "Order");
    load(md, CFDB_ERR_SERIALIZATION_FAILED, "already defined");
    md = base_metadata();
    cfdb_pb_msg *ix = add_index(md, "x", NULL, cfdb_kex_field(&arena, "name", CFDB_KEX_SCALAR), NULL);
    rl_set_bytes(ix, "subspace_key", BYTES(0x15, 0x01, 0x15, 0x02));
    load(md, CFDB_ERR_SERIALIZATION_FAILED, "single item");
    /* An index whose root expression has no member. */
    md = base_metadata();
    cfdb_pb_msg *bad;
    rl_add_msg(md, "indexes", &bad);
    rl_set_bytes(bad, "name", cfdb_bytes_str("empty_root"));
    load(md, CFDB_ERR_SERIALIZATION_FAILED, "root expression");
    /* A record types entry for a type the union does not hold. */
    md = base_metadata();
    add_type(md, "Ghost", cfdb_kex_field(&arena, "id", CFDB_KEX_SCALAR));
    load(md, CFDB_ERR_SERIALIZATION_FAILED, "unknown record type");
    /* Malformed bytes. */
    cfdb_rl_metadata *m;
    cfdb_pb_error err;
    assert_int_equal(cfdb_rl_metadata_from_proto((const uint8_t *)"\x0a\x09", 2, &m, &err),
                     CFDB_ERR_SERIALIZATION_FAILED);
    assert_null(m);
}

static int setup(void **state)
{
    cfdb_arena_init(&arena);
    return 0;
}

static int teardown(void **state)
{
    cfdb_arena_free(&arena);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_options),
        cmocka_unit_test(test_from_proto),
        cmocka_unit_test(test_bad_metadata),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
