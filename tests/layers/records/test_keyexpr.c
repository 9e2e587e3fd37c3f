/* SPDX-License-Identifier: Apache-2.0 */
/* Key expressions (src/layers/records/rl_keyexpr*.c): reading and writing KeyExpression
 * protobufs, and evaluation on records with the Java Record Layer's semantics.
 *
 * The record is tests/vectors/records/person.txtpb, encoded by protoc at build time. Expected
 * keys are written as packed tuple bytes derived by hand from the tuple spec (int 7 is
 * 15 07, a string is 02 ... 00, null 00, a nested tuple 05 ... 00); expected KeyExpression
 * bytes by hand from record_key_expression.proto's numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "cfdb/records/keyexpr.h"

typedef struct fx {
    cfdb_pb_pool *pool;
    cfdb_arena arena;
    const cfdb_pb_message *person;
    cfdb_pb_msg *ann;        /* person.txtpb */
    cfdb_pb_msg *nobody;     /* an empty Person */
} fx;

static cfdb_bytes read_vector(cfdb_arena *a, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CFDB_PB_VECTORS, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    uint8_t *buf = cfdb_arena_alloc(a, 1 << 16);
    size_t n = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return cfdb_bytes_make(buf, n);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    cfdb_arena_init(&f->arena);
    assert_int_equal(cfdb_pb_pool_create(&f->pool), 0);
    cfdb_bytes set = read_vector(&f->arena, "rl_types.pb");
    assert_int_equal(cfdb_pb_pool_add_set(f->pool, set.ptr, set.len, NULL), 0);
    f->person = cfdb_pb_pool_message(f->pool, "cfdb.rl.Person");
    assert_non_null(f->person);
    cfdb_bytes in = read_vector(&f->arena, "person.bin");
    assert_int_equal(cfdb_pb_decode(&f->arena, f->person, in.ptr, in.len, 0, &f->ann, NULL), 0);
    f->nobody = cfdb_pb_msg_new(&f->arena, f->person);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    cfdb_pb_pool_destroy(f->pool);
    cfdb_arena_free(&f->arena);
    free(f);
    return 0;
}

#define BYTES(...) ((cfdb_bytes){ (const uint8_t[]){ __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ }) })
#define NOKEYS ((cfdb_bytes){ NULL, 0 })

/* Evaluates k and checks the packed keys, given as a list of byte strings ending with
 * NOKEYS. */
static void expect_keys(fx *f, const cfdb_kex *k, const cfdb_pb_msg *m, const cfdb_kex_ctx *ctx,
                        const cfdb_bytes *want)
{
    assert_non_null(k);
    cfdb_tuple *keys;
    uint32_t n;
    int rc = cfdb_kex_evaluate(&f->arena, k, m, ctx, &keys, &n);
    if (rc)
        fail_msg("evaluate: %d", rc);
    uint32_t wn = 0;
    while (want[wn].ptr)
        wn++;
    if (n != wn)
        fail_msg("%u keys, want %u", n, wn);
    for (uint32_t i = 0; i < n; i++) {
        cfdb_bytes got;
        assert_int_equal(cfdb_tuple_pack(&f->arena, (cfdb_bytes){ NULL, 0 }, &keys[i], &got), 0);
        if (!cfdb_bytes_eq(got, want[i])) {
            for (uint32_t b = 0; b < got.len; b++)
                print_message("%02x ", got.ptr[b]);
            fail_msg("key %u differs", i);
        }
    }
}

#define EXPECT(k, m, ...) expect_keys(f, (k), (m), NULL, (const cfdb_bytes[]){ __VA_ARGS__, NOKEYS })
#define EXPECT_NONE(k, m) expect_keys(f, (k), (m), NULL, (const cfdb_bytes[]){ NOKEYS })

static const cfdb_kex *fld(fx *f, const char *name, int fan)
{
    return cfdb_kex_field(&f->arena, name, fan);
}

static const cfdb_kex *not_null(fx *f, const char *name)
{
    cfdb_kex *k = (cfdb_kex *)cfdb_kex_field(&f->arena, name, CFDB_KEX_SCALAR);
    k->null_interpretation = CFDB_KEX_NOT_NULL;
    return k;
}

static void test_field_values(void **state)
{
    fx *f = *state;
    const cfdb_pb_msg *ann = f->ann;
    EXPECT(fld(f, "id", CFDB_KEX_SCALAR), ann, BYTES(0x15, 0x07));
    EXPECT(fld(f, "name", CFDB_KEX_SCALAR), ann, BYTES(0x02, 'a', 'n', 'n', 0x00));
    /* uint32 and fixed64 as Java's signed int/long of the same bits: -1. */
    EXPECT(fld(f, "u32", CFDB_KEX_SCALAR), ann, BYTES(0x13, 0xfe));
    EXPECT(fld(f, "f64", CFDB_KEX_SCALAR), ann, BYTES(0x13, 0xfe));
    EXPECT(fld(f, "color", CFDB_KEX_SCALAR), ann, BYTES(0x15, 0x02));     /* enum number */
    EXPECT(fld(f, "blob", CFDB_KEX_SCALAR), ann, BYTES(0x01, 0x00, 0xff, 0x01, 0x00));
    EXPECT(fld(f, "score", CFDB_KEX_SCALAR), ann,
           BYTES(0x21, 0xc0, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00));
    EXPECT(fld(f, "ratio", CFDB_KEX_SCALAR), ann, BYTES(0x20, 0xbf, 0x00, 0x00, 0x00));
    EXPECT(fld(f, "flag", CFDB_KEX_SCALAR), ann, BYTES(0x27));
    EXPECT(fld(f, "s32", CFDB_KEX_SCALAR), ann, BYTES(0x13, 0xfc));
}

static void test_absent_and_null_interpretation(void **state)
{
    fx *f = *state;
    /* Absent optional field: the null stand-in; NOT_NULL: the field's default. */
    EXPECT(fld(f, "with_default", CFDB_KEX_SCALAR), f->ann, BYTES(0x00));
    EXPECT(not_null(f, "with_default"), f->ann, BYTES(0x15, 0x2a));
    EXPECT(not_null(f, "name"), f->nobody, BYTES(0x02, 0x00));
    EXPECT(fld(f, "name", CFDB_KEX_SCALAR), f->nobody, BYTES(0x00));
    /* A field the type does not have, and no message at all. */
    EXPECT(fld(f, "nope", CFDB_KEX_SCALAR), f->ann, BYTES(0x00));
    EXPECT_NONE(fld(f, "nope", CFDB_KEX_FAN_OUT), f->ann);
    EXPECT(fld(f, "id", CFDB_KEX_SCALAR), NULL, BYTES(0x00));
    EXPECT(fld(f, "tags", CFDB_KEX_CONCATENATE), NULL, BYTES(0x00));
    cfdb_kex *cn = (cfdb_kex *)fld(f, "tags", CFDB_KEX_CONCATENATE);
    cn->null_interpretation = CFDB_KEX_NOT_NULL;
    EXPECT(cn, NULL, BYTES(0x05, 0x00));
}

static void test_repeated(void **state)
{
    fx *f = *state;
    EXPECT(fld(f, "tags", CFDB_KEX_FAN_OUT), f->ann, BYTES(0x02, 'a', 0x00), BYTES(0x02, 'b', 0x00),
           BYTES(0x02, 'c', 0x00));
    EXPECT(fld(f, "tags", CFDB_KEX_CONCATENATE), f->ann,
           BYTES(0x05, 0x02, 'a', 0x00, 0x02, 'b', 0x00, 0x02, 'c', 0x00, 0x00));
    EXPECT_NONE(fld(f, "tags", CFDB_KEX_FAN_OUT), f->nobody);
    EXPECT(fld(f, "tags", CFDB_KEX_CONCATENATE), f->nobody, BYTES(0x05, 0x00));
}

static void test_nest(void **state)
{
    fx *f = *state;
    cfdb_arena *a = &f->arena;
    const cfdb_kex *city = fld(f, "city", CFDB_KEX_SCALAR), *zip = fld(f, "zip", CFDB_KEX_SCALAR);
    EXPECT(cfdb_kex_nest(a, fld(f, "home", CFDB_KEX_SCALAR), city), f->ann,
           BYTES(0x02, 'O', 's', 'l', 'o', 0x00));
    EXPECT(cfdb_kex_nest(a, fld(f, "past", CFDB_KEX_FAN_OUT), city), f->ann,
           BYTES(0x02, 'R', 'o', 'm', 'e', 0x00), BYTES(0x02, 'N', 'i', 'c', 'e', 0x00));
    const cfdb_kex *cz[] = { city, zip };
    EXPECT(cfdb_kex_nest(a, fld(f, "past", CFDB_KEX_FAN_OUT), cfdb_kex_then(a, cz, 2)), f->ann,
           BYTES(0x02, 'R', 'o', 'm', 'e', 0x00, 0x15, 0x01),
           BYTES(0x02, 'N', 'i', 'c', 'e', 0x00, 0x00));
    EXPECT(cfdb_kex_nest(a, fld(f, "home", CFDB_KEX_SCALAR), fld(f, "lines", CFDB_KEX_CONCATENATE)),
           f->ann, BYTES(0x05, 0x02, 'x', 0x00, 0x00));
    /* Absent parent: the child sees no message; with NOT_NULL an empty one. */
    EXPECT(cfdb_kex_nest(a, fld(f, "home", CFDB_KEX_SCALAR), city), f->nobody, BYTES(0x00));
    EXPECT_NONE(cfdb_kex_nest(a, fld(f, "past", CFDB_KEX_FAN_OUT), city), f->nobody);
    EXPECT(cfdb_kex_nest(a, not_null(f, "home"), not_null(f, "zip")), f->nobody, BYTES(0x14));
}

static void test_then_list_and_context(void **state)
{
    fx *f = *state;
    cfdb_arena *a = &f->arena;
    const cfdb_kex *it[] = { fld(f, "id", CFDB_KEX_SCALAR), fld(f, "tags", CFDB_KEX_FAN_OUT) };
    EXPECT(cfdb_kex_then(a, it, 2), f->ann, BYTES(0x15, 0x07, 0x02, 'a', 0x00),
           BYTES(0x15, 0x07, 0x02, 'b', 0x00), BYTES(0x15, 0x07, 0x02, 'c', 0x00));
    /* Cartesian product in order: every tag with every past city. */
    const cfdb_kex *tp[] = { fld(f, "tags", CFDB_KEX_FAN_OUT),
                             cfdb_kex_nest(a, fld(f, "past", CFDB_KEX_FAN_OUT),
                                           fld(f, "zip", CFDB_KEX_SCALAR)) };
    EXPECT(cfdb_kex_then(a, tp, 2), f->ann, BYTES(0x02, 'a', 0x00, 0x15, 0x01),
           BYTES(0x02, 'a', 0x00, 0x00), BYTES(0x02, 'b', 0x00, 0x15, 0x01),
           BYTES(0x02, 'b', 0x00, 0x00), BYTES(0x02, 'c', 0x00, 0x15, 0x01),
           BYTES(0x02, 'c', 0x00, 0x00));
    /* A fan-out with nothing makes the whole product empty. */
    EXPECT_NONE(cfdb_kex_then(a, it, 2), f->nobody);
    /* list: one nested-tuple column per child, ((7), ("ann")). */
    const cfdb_kex *in[] = { fld(f, "id", CFDB_KEX_SCALAR), fld(f, "name", CFDB_KEX_SCALAR) };
    EXPECT(cfdb_kex_list(a, in, 2), f->ann,
           BYTES(0x05, 0x15, 0x07, 0x00, 0x05, 0x02, 'a', 'n', 'n', 0x00, 0x00));
    cfdb_tuple *keys;
    uint32_t n;
    assert_int_equal(cfdb_kex_evaluate(a, cfdb_kex_empty(a), f->ann, NULL, &keys, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(cfdb_tuple_count(&keys[0]), 0);

    /* Record type key and version come from the context. */
    const cfdb_kex *ri[] = { cfdb_kex_record_type_key(a), fld(f, "id", CFDB_KEX_SCALAR) };
    cfdb_tuple_elem one = { .type = CFDB_TUPLE_INT, .v.i = 1 };
    const uint8_t vs[12] = { 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 2 };
    cfdb_kex_ctx ctx = { &one, vs };
    expect_keys(f, cfdb_kex_then(a, ri, 2), f->ann, &ctx,
                (const cfdb_bytes[]){ BYTES(0x15, 0x01, 0x15, 0x07), NOKEYS });
    EXPECT(cfdb_kex_then(a, ri, 2), f->ann, BYTES(0x00, 0x15, 0x07));
    expect_keys(f, cfdb_kex_version(a), f->ann, &ctx,
                (const cfdb_bytes[]){ BYTES(0x33, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 2), NOKEYS });
    assert_int_equal(cfdb_kex_columns(cfdb_kex_then(a, ri, 2)), 2);
    assert_int_equal(cfdb_kex_columns(cfdb_kex_list(a, in, 2)), 2);
    assert_int_equal(cfdb_kex_columns(cfdb_kex_empty(a)), 0);
}

static void test_evaluation_errors(void **state)
{
    fx *f = *state;
    cfdb_arena *a = &f->arena;
    cfdb_tuple *keys;
    uint32_t n;
    /* SCALAR on a repeated field, a message as a key value, nest through a non-message. */
    assert_int_equal(cfdb_kex_evaluate(a, fld(f, "tags", CFDB_KEX_SCALAR), f->ann, NULL, &keys, &n),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_kex_evaluate(a, fld(f, "home", CFDB_KEX_SCALAR), f->ann, NULL, &keys, &n),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_kex_evaluate(a, cfdb_kex_nest(a, fld(f, "id", CFDB_KEX_SCALAR),
                                                        fld(f, "x", CFDB_KEX_SCALAR)),
                                       f->ann, NULL, &keys, &n),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_kex_evaluate(a, cfdb_kex_nest(a, fld(f, "past", CFDB_KEX_CONCATENATE),
                                                        fld(f, "city", CFDB_KEX_SCALAR)),
                                       f->ann, NULL, &keys, &n),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* 400 tags x 400 tags = 160,000 keys: over the cap. */
    cfdb_pb_msg *many = cfdb_pb_msg_new(a, f->person);
    const cfdb_pb_field *tags = cfdb_pb_field_by_name(f->person, "tags");
    for (int i = 0; i < 400; i++) {
        cfdb_pb_value v;
        v.s = cfdb_bytes_str("t");
        assert_int_equal(cfdb_pb_add(many, tags, v), 0);
    }
    const cfdb_kex *tt[] = { fld(f, "tags", CFDB_KEX_FAN_OUT), fld(f, "tags", CFDB_KEX_FAN_OUT) };
    assert_int_equal(cfdb_kex_evaluate(a, cfdb_kex_then(a, tt, 2), many, NULL, &keys, &n),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_kex_evaluate(a, tt[0], many, NULL, &keys, &n), 0);
    assert_int_equal(n, 400);
}

/* then(field("id"), field("tags", FAN_OUT)) as the Java Record Layer serializes it. */
static const uint8_t then_bytes[] = {
    0x0a, 0x1a,                                            /* KeyExpression.then, 26 bytes */
    0x0a, 0x0a,                                            /*  Then.child, 10 bytes */
    0x1a, 0x08,                                            /*   KeyExpression.field, 8 */
    0x0a, 0x02, 'i', 'd', 0x10, 0x01, 0x18, 0x01,          /*    name, SCALAR, NOT_UNIQUE */
    0x0a, 0x0c,                                            /*  Then.child, 12 bytes */
    0x1a, 0x0a,
    0x0a, 0x04, 't', 'a', 'g', 's', 0x10, 0x02, 0x18, 0x01, /*    name, FAN_OUT, NOT_UNIQUE */
};

static void test_proto_round_trip(void **state)
{
    fx *f = *state;
    cfdb_arena *a = &f->arena;
    const cfdb_kex *k;
    assert_int_equal(cfdb_kex_parse(a, then_bytes, sizeof then_bytes, &k), 0);
    assert_int_equal(k->kind, CFDB_KEX_THEN);
    assert_int_equal(k->child_count, 2);
    assert_string_equal(k->children[1]->field_name, "tags");
    assert_int_equal(k->children[1]->fan_type, CFDB_KEX_FAN_OUT);
    EXPECT(k, f->ann, BYTES(0x15, 0x07, 0x02, 'a', 0x00), BYTES(0x15, 0x07, 0x02, 'b', 0x00),
           BYTES(0x15, 0x07, 0x02, 'c', 0x00));

    const cfdb_kex *it[] = { fld(f, "id", CFDB_KEX_SCALAR), fld(f, "tags", CFDB_KEX_FAN_OUT) };
    cfdb_bytes out;
    assert_int_equal(cfdb_kex_serialize(a, cfdb_kex_then(a, it, 2), &out), 0);
    assert_int_equal(out.len, sizeof then_bytes);
    assert_memory_equal(out.ptr, then_bytes, sizeof then_bytes);

    /* nest, grouping, record type key, empty, version survive a write and a read. */
    const cfdb_kex *parts[] = {
        cfdb_kex_record_type_key(a),
        cfdb_kex_nest(a, fld(f, "past", CFDB_KEX_FAN_OUT), fld(f, "city", CFDB_KEX_SCALAR)),
        cfdb_kex_grouping(a, cfdb_kex_version(a), 0),
        cfdb_kex_empty(a),
    };
    const cfdb_kex *big = cfdb_kex_then(a, parts, 4);
    assert_int_equal(cfdb_kex_serialize(a, big, &out), 0);
    const cfdb_kex *back;
    assert_int_equal(cfdb_kex_parse(a, out.ptr, out.len, &back), 0);
    cfdb_bytes again;
    assert_int_equal(cfdb_kex_serialize(a, back, &again), 0);
    assert_true(cfdb_bytes_eq(out, again));
    assert_int_equal(back->children[1]->kind, CFDB_KEX_NEST);
    assert_string_equal(back->children[1]->children[0]->field_name, "past");
    assert_int_equal(back->children[2]->kind, CFDB_KEX_GROUPING);
    assert_int_equal(back->children[2]->children[0]->kind, CFDB_KEX_VERSION);
}

static void test_bad_protos(void **state)
{
    fx *f = *state;
    cfdb_arena *a = &f->arena;
    const cfdb_kex *k;
    /* No member; two members (field and empty); a Field without its required fan_type; a
     * Then without children; a fan type out of range; truncated bytes. */
    assert_int_equal(cfdb_kex_parse(a, (const uint8_t *)"", 0, &k), CFDB_ERR_SERIALIZATION_FAILED);
    const uint8_t two[] = { 0x1a, 0x08, 0x0a, 0x02, 'i', 'd', 0x10, 0x01, 0x18, 0x01, 0x2a, 0x00 };
    assert_int_equal(cfdb_kex_parse(a, two, sizeof two, &k), CFDB_ERR_SERIALIZATION_FAILED);
    const uint8_t nofan[] = { 0x1a, 0x04, 0x0a, 0x02, 'i', 'd' };
    assert_int_equal(cfdb_kex_parse(a, nofan, sizeof nofan, &k), CFDB_ERR_SERIALIZATION_FAILED);
    const uint8_t nochild[] = { 0x0a, 0x00 };
    assert_int_equal(cfdb_kex_parse(a, nochild, sizeof nochild, &k), CFDB_ERR_SERIALIZATION_FAILED);
    const uint8_t badfan[] = { 0x1a, 0x06, 0x0a, 0x02, 'i', 'd', 0x10, 0x07 };
    assert_int_equal(cfdb_kex_parse(a, badfan, sizeof badfan, &k), CFDB_ERR_SERIALIZATION_FAILED);
    assert_int_equal(cfdb_kex_parse(a, then_bytes, sizeof then_bytes - 3, &k),
                     CFDB_ERR_SERIALIZATION_FAILED);
    /* A literal with two values. */
    const uint8_t lit2[] = { 0x42, 0x04, 0x18, 0x01, 0x38, 0x02 };
    assert_int_equal(cfdb_kex_parse(a, lit2, sizeof lit2, &k), CFDB_ERR_SERIALIZATION_FAILED);
    const uint8_t lit[] = { 0x42, 0x02, 0x18, 0x05 };   /* value { long_value: 5 } */
    assert_int_equal(cfdb_kex_parse(a, lit, sizeof lit, &k), 0);
    EXPECT(k, NULL, BYTES(0x15, 0x05));
    /* split is read but not evaluated. */
    const uint8_t split[] = { 0x32, 0x06, 0x0a, 0x02, 0x2a, 0x00, 0x10, 0x02 };
    assert_int_equal(cfdb_kex_parse(a, split, sizeof split, &k), 0);
    cfdb_tuple *keys;
    uint32_t n;
    assert_int_equal(cfdb_kex_evaluate(a, k, f->ann, NULL, &keys, &n),
                     CFDB_ERR_UNSUPPORTED_OPERATION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_values),
        cmocka_unit_test(test_absent_and_null_interpretation),
        cmocka_unit_test(test_repeated),
        cmocka_unit_test(test_nest),
        cmocka_unit_test(test_then_list_and_context),
        cmocka_unit_test(test_evaluation_errors),
        cmocka_unit_test(test_proto_round_trip),
        cmocka_unit_test(test_bad_protos),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
