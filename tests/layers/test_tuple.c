/* SPDX-License-Identifier: Apache-2.0 */
/* Tuple layer (include/cfdb/tuple.h): the encodings documented in FoundationDB's
 * design/tuple.md at 7.3.77 (its "Test case" lines, cited per test), the integer widths
 * and float transformation of bindings/python/fdb/tuple.py worked out by hand, malformed
 * inputs, the versionstamp offset, and randomized properties: unpack(pack(t)) == t and
 * compare(a, b) has the sign of memcmp(pack(a), pack(b)). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "cfdb/tuple.h"

static cfdb_arena A;

static int setup(void **state)
{
    cfdb_arena_init(&A);
    return 0;
}

static int teardown(void **state)
{
    cfdb_arena_free(&A);
    return 0;
}

#define BYTES(s) cfdb_bytes_make((s), sizeof(s) - 1)

static void assert_packs_to(const cfdb_tuple *t, cfdb_bytes want)
{
    cfdb_bytes got;
    assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, t, &got), 0);
    if (!cfdb_bytes_eq(got, want)) {
        fprintf(stderr, "packed:");
        for (uint32_t i = 0; i < got.len; i++)
            fprintf(stderr, " %02x", got.ptr[i]);
        fprintf(stderr, "\nwanted:");
        for (uint32_t i = 0; i < want.len; i++)
            fprintf(stderr, " %02x", want.ptr[i]);
        fprintf(stderr, "\n");
        fail();
    }
    /* and back: the same tuple, and the canonical reader accepts it */
    cfdb_tuple u;
    assert_int_equal(cfdb_tuple_unpack_flags(&A, got, CFDB_TUPLE_UNPACK_CANONICAL, &u), 0);
    assert_int_equal(cfdb_tuple_compare(t, &u), 0);
    size_t n;
    assert_int_equal(cfdb_tuple_packed_size(t, &n), 0);
    assert_int_equal(n, want.len);
}

/* design/tuple.md, Byte String: pack("foo\x00bar") == b'\x01foo\x00\xffbar\x00' */
static void test_spec_byte_string(void **state)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_bytes(&t, "foo\0bar", 7), 0);
    assert_packs_to(&t, BYTES("\x01" "foo\x00\xff" "bar\x00"));
}

/* design/tuple.md, Unicode String: pack(u"F\u00d4O\u0000bar") == b'\x02F\xc3\x94O\x00\xffbar\x00' */
static void test_spec_unicode_string(void **state)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_string(&t, "F\xc3\x94O\0bar", 8), 0);
    assert_packs_to(&t, BYTES("\x02" "F\xc3\x94O\x00\xff" "bar\x00"));
    /* invalid UTF-8 cannot be added */
    assert_int_equal(cfdb_tuple_add_string(&t, "\xc3", 1), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_tuple_add_string(&t, "\xed\xa0\x80", 3), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_tuple_add_string(&t, "\xc0\x80", 2), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_tuple_add_string(&t, "\xf4\x90\x80\x80", 4), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_tuple_add_string(&t, "\xf0\x9f\x98\x80", 4), 0); /* U+1F600 */
}

/* design/tuple.md, Nested Tuple: pack(("foo\x00bar", None, ())) ==
 * b'\x05\x01foo\x00\xffbar\x00\x00\xff\x05\x00\x00' */
static void test_spec_nested(void **state)
{
    cfdb_tuple t, n, empty;
    cfdb_tuple_init(&t, &A);
    cfdb_tuple_init(&n, &A);
    cfdb_tuple_init(&empty, &A);
    assert_int_equal(cfdb_tuple_add_bytes(&n, "foo\0bar", 7), 0);
    assert_int_equal(cfdb_tuple_add_null(&n), 0);
    assert_int_equal(cfdb_tuple_add_nested(&n, &empty), 0);
    assert_int_equal(cfdb_tuple_add_nested(&t, &n), 0);
    assert_packs_to(&t, BYTES("\x05\x01" "foo\x00\xff" "bar\x00\x00\xff\x05\x00\x00"));
    /* the empty nested tuple sorts before the one holding only null (the spec's example) */
    cfdb_tuple a, b, an, bn;
    cfdb_tuple_init(&a, &A);
    cfdb_tuple_init(&b, &A);
    cfdb_tuple_init(&an, &A);
    cfdb_tuple_init(&bn, &A);
    assert_int_equal(cfdb_tuple_add_null(&bn), 0);
    assert_int_equal(cfdb_tuple_add_nested(&a, &an), 0);
    assert_int_equal(cfdb_tuple_add_nested(&b, &bn), 0);
    assert_packs_to(&a, BYTES("\x05\x00"));
    assert_packs_to(&b, BYTES("\x05\x00\xff\x00"));
    assert_true(cfdb_tuple_compare(&a, &b) < 0);
    /* top-level null is a single byte */
    cfdb_tuple z;
    cfdb_tuple_init(&z, &A);
    assert_int_equal(cfdb_tuple_add_null(&z), 0);
    assert_packs_to(&z, BYTES("\x00"));
}

typedef struct {
    int64_t v;
    const char *enc;
    size_t len;
} int_case;

#define IC(v, s) { (v), (s), sizeof(s) - 1 }

/* design/tuple.md, Integer: pack(-5551212) == b'\x11\xabK\x93' and "-1 is 0x13 0xfe";
 * the rest by the rules of that section (big-endian, one's complement for negatives,
 * the shortest width). */
static void test_spec_integers(void **state)
{
    static const int_case cases[] = {
        IC(-5551212, "\x11\xab\x4b\x93"),
        IC(-1, "\x13\xfe"),
        IC(0, "\x14"),
        IC(1, "\x15\x01"),
        IC(255, "\x15\xff"),
        IC(256, "\x16\x01\x00"),
        IC(-255, "\x13\x00"),
        IC(-256, "\x12\xfe\xff"),
        IC(65535, "\x16\xff\xff"),
        IC(65536, "\x17\x01\x00\x00"),
        IC(INT64_MAX, "\x1c\x7f\xff\xff\xff\xff\xff\xff\xff"),
        IC(INT64_MIN, "\x0c\x7f\xff\xff\xff\xff\xff\xff\xff"),
        IC(INT64_MIN + 1, "\x0c\x80\x00\x00\x00\x00\x00\x00\x00"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfdb_tuple t;
        cfdb_tuple_init(&t, &A);
        assert_int_equal(cfdb_tuple_add_int(&t, cases[i].v), 0);
        assert_packs_to(&t, cfdb_bytes_make(cases[i].enc, cases[i].len));
        cfdb_tuple u;
        assert_int_equal(cfdb_tuple_unpack(&A, cfdb_bytes_make(cases[i].enc, cases[i].len), &u), 0);
        int64_t got;
        assert_int_equal(cfdb_tuple_get_int(&u, 0, &got), 0);
        assert_int_equal(got, cases[i].v);
    }
}

/* Beyond int64: the 8-byte codes up to 2^64-2, then 0x1d/0x0b with a length byte, as
 * bindings/python/fdb/tuple.py writes (it switches at |v| >= 2^64-1). */
static void test_big_integers(void **state)
{
    static const uint8_t ff8[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t fe8[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe };
    static const uint8_t two64[9] = { 1, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t two63[8] = { 0x80, 0, 0, 0, 0, 0, 0, 0 };
    struct {
        bool neg;
        const uint8_t *mag;
        size_t n;
        const char *enc;
        size_t len;
        cfdb_tuple_type type;
    } cases[] = {
        { false, fe8, 8, "\x1c\xff\xff\xff\xff\xff\xff\xff\xfe", 9, CFDB_TUPLE_BIGINT },
        { false, ff8, 8, "\x1d\x08\xff\xff\xff\xff\xff\xff\xff\xff", 10, CFDB_TUPLE_BIGINT },
        { false, two64, 9, "\x1d\x09\x01\x00\x00\x00\x00\x00\x00\x00\x00", 11, CFDB_TUPLE_BIGINT },
        { true, fe8, 8, "\x0c\x00\x00\x00\x00\x00\x00\x00\x01", 9, CFDB_TUPLE_BIGINT },
        { true, ff8, 8, "\x0b\xf7\x00\x00\x00\x00\x00\x00\x00\x00", 10, CFDB_TUPLE_BIGINT },
        { true, two64, 9, "\x0b\xf6\xfe\xff\xff\xff\xff\xff\xff\xff\xff", 11, CFDB_TUPLE_BIGINT },
        { false, two63, 8, "\x1c\x80\x00\x00\x00\x00\x00\x00\x00", 9, CFDB_TUPLE_BIGINT },
        /* -2^63 fits int64: stored as INT */
        { true, two63, 8, "\x0c\x7f\xff\xff\xff\xff\xff\xff\xff", 9, CFDB_TUPLE_INT },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfdb_tuple t;
        cfdb_tuple_init(&t, &A);
        assert_int_equal(cfdb_tuple_add_bigint(&t, cases[i].neg, cases[i].mag, cases[i].n), 0);
        assert_int_equal(cfdb_tuple_get(&t, 0)->type, cases[i].type);
        assert_packs_to(&t, cfdb_bytes_make(cases[i].enc, cases[i].len));
    }
    /* uint64 helper */
    cfdb_tuple t;
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_uint64(&t, UINT64_MAX), 0);
    assert_packs_to(&t, BYTES("\x1d\x08\xff\xff\xff\xff\xff\xff\xff\xff"));
    /* 255 magnitude bytes is the widest; 256 is refused */
    uint8_t big[256];
    memset(big, 0xab, sizeof big);
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_bigint(&t, true, big, 255), 0);
    cfdb_bytes p;
    assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &t, &p), 0);
    assert_int_equal(p.len, 257);
    assert_int_equal(p.ptr[0], 0x0b);
    assert_int_equal(p.ptr[1], 0x00);
    assert_int_equal(p.ptr[2], 0x54);
    assert_int_equal(cfdb_tuple_add_bigint(&t, false, big, 256), CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* order across widths: -2^64 < -(2^64-1) < INT64_MIN < -1 < 0 < INT64_MAX < 2^63 < 2^64-1 < 2^64 */
    cfdb_tuple v[9];
    for (int k = 0; k < 9; k++)
        cfdb_tuple_init(&v[k], &A);
    assert_int_equal(cfdb_tuple_add_bigint(&v[0], true, two64, 9), 0);
    assert_int_equal(cfdb_tuple_add_bigint(&v[1], true, ff8, 8), 0);
    assert_int_equal(cfdb_tuple_add_int(&v[2], INT64_MIN), 0);
    assert_int_equal(cfdb_tuple_add_int(&v[3], -1), 0);
    assert_int_equal(cfdb_tuple_add_int(&v[4], 0), 0);
    assert_int_equal(cfdb_tuple_add_int(&v[5], INT64_MAX), 0);
    assert_int_equal(cfdb_tuple_add_bigint(&v[6], false, two63, 8), 0);
    assert_int_equal(cfdb_tuple_add_bigint(&v[7], false, ff8, 8), 0);
    assert_int_equal(cfdb_tuple_add_bigint(&v[8], false, two64, 9), 0);
    for (int k = 0; k < 8; k++) {
        assert_true(cfdb_tuple_compare(&v[k], &v[k + 1]) < 0);
        assert_true(cfdb_tuple_compare(&v[k + 1], &v[k]) > 0);
    }
}

/* design/tuple.md, IEEE Binary Floating Point: pack(-42f) == b'\x20\x3d\xd7\xff\xff' */
static void test_spec_floats(void **state)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_float(&t, -42.0f), 0);
    assert_packs_to(&t, BYTES("\x20\x3d\xd7\xff\xff"));
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_double(&t, 1.0), 0);      /* 3ff0... sign flipped */
    assert_packs_to(&t, BYTES("\x21\xbf\xf0\x00\x00\x00\x00\x00\x00"));
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_double(&t, -0.0), 0);     /* 8000... all flipped */
    assert_packs_to(&t, BYTES("\x21\x7f\xff\xff\xff\xff\xff\xff\xff"));
    /* total order: -nan < -inf < -1 < -0 < 0 < 1 < inf < nan */
    double order[] = { -__builtin_nan(""), -__builtin_inf(), -1.0, -0.0, 0.0, 1e-300, 1.0,
                       __builtin_inf(), __builtin_nan("") };
    for (size_t k = 0; k + 1 < sizeof order / sizeof order[0]; k++) {
        cfdb_tuple a, b;
        cfdb_tuple_init(&a, &A);
        cfdb_tuple_init(&b, &A);
        assert_int_equal(cfdb_tuple_add_double(&a, order[k]), 0);
        assert_int_equal(cfdb_tuple_add_double(&b, order[k + 1]), 0);
        assert_true(cfdb_tuple_compare(&a, &b) < 0);
        cfdb_bytes pa, pb;
        assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &a, &pa), 0);
        assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &b, &pb), 0);
        assert_true(cfdb_bytes_cmp(pa, pb) < 0);
    }
    /* a NaN payload survives a round trip bit for bit */
    uint32_t bits = 0x7fc12345u;
    float f;
    memcpy(&f, &bits, 4);
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_float(&t, f), 0);
    cfdb_bytes p;
    assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &t, &p), 0);
    cfdb_tuple u;
    assert_int_equal(cfdb_tuple_unpack(&A, p, &u), 0);
    uint32_t back;
    memcpy(&back, &cfdb_tuple_get(&u, 0)->v.f, 4);
    assert_int_equal(back, bits);
}

static void test_bool_uuid_versionstamp(void **state)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &A);
    uint8_t uuid[16], vs[12], vs80[10];
    for (int k = 0; k < 16; k++)
        uuid[k] = (uint8_t)(0xf0 + k);
    for (int k = 0; k < 12; k++)
        vs[k] = (uint8_t)(k + 1);
    for (int k = 0; k < 10; k++)
        vs80[k] = (uint8_t)(0xa0 + k);
    assert_int_equal(cfdb_tuple_add_bool(&t, false), 0);
    assert_int_equal(cfdb_tuple_add_bool(&t, true), 0);
    assert_int_equal(cfdb_tuple_add_uuid(&t, uuid), 0);
    assert_int_equal(cfdb_tuple_add_versionstamp(&t, vs), 0);
    assert_int_equal(cfdb_tuple_add_versionstamp80(&t, vs80), 0);
    assert_packs_to(&t, BYTES("\x26\x27"
                              "\x30\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff"
                              "\x33\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"
                              "\x32\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9"));
    assert_int_equal(cfdb_tuple_count_incomplete(&t), 0);
}

/* SET_VERSIONSTAMPED_KEY wants the offset of the 10-byte version, 4 bytes little-endian
 * (API >= 520), after prefix + pack(t). */
static void test_incomplete_versionstamp(void **state)
{
    cfdb_tuple t, n;
    cfdb_tuple_init(&t, &A);
    cfdb_tuple_init(&n, &A);
    assert_int_equal(cfdb_tuple_add_cstr(&t, "ab"), 0);           /* 02 61 62 00 */
    assert_int_equal(cfdb_tuple_add_int(&n, 7), 0);               /* 15 07 */
    assert_int_equal(cfdb_tuple_add_incomplete_versionstamp(&n, 0x0102), 0);
    assert_int_equal(cfdb_tuple_add_nested(&t, &n), 0);           /* 05 ... 00 */
    assert_int_equal(cfdb_tuple_count_incomplete(&t), 1);
    cfdb_bytes out;
    /* a plain pack refuses it, as the bindings do */
    assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &t, &out), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_tuple_pack_with_versionstamp(&A, BYTES("PRE"), &t, &out), 0);
    static const char want[] = "PRE" "\x02" "ab\x00" "\x05\x15\x07\x33"
                               "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x02" "\x00"
                               "\x0b\x00\x00\x00";
    /* version bytes at 3 (prefix) + 4 (string) + 1 (nested code) + 2 (int) + 1 (vs code) = 11 */
    assert_int_equal(out.len, sizeof want - 1);
    assert_memory_equal(out.ptr, want, sizeof want - 1);
    /* none, or two, incomplete versionstamps: refused */
    cfdb_tuple z;
    cfdb_tuple_init(&z, &A);
    assert_int_equal(cfdb_tuple_add_int(&z, 1), 0);
    assert_int_equal(cfdb_tuple_pack_with_versionstamp(&A, (cfdb_bytes){ 0 }, &z, &out),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_tuple_add_incomplete_versionstamp80(&t), 0);
    assert_int_equal(cfdb_tuple_count_incomplete(&t), 2);
    assert_int_equal(cfdb_tuple_pack_with_versionstamp(&A, (cfdb_bytes){ 0 }, &t, &out),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    /* an 80-bit one alone works the same way */
    cfdb_tuple_init(&z, &A);
    assert_int_equal(cfdb_tuple_add_incomplete_versionstamp80(&z), 0);
    assert_int_equal(cfdb_tuple_pack_with_versionstamp(&A, (cfdb_bytes){ 0 }, &z, &out), 0);
    assert_int_equal(out.len, 15);
    assert_memory_equal(out.ptr + 11, "\x01\x00\x00\x00", 4);
}

static void test_range_and_prefix(void **state)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_cstr(&t, "a"), 0);
    cfdb_bytes b, e;
    assert_int_equal(cfdb_tuple_range(&A, BYTES("P"), &t, &b, &e), 0);
    assert_int_equal(b.len, 5);
    assert_memory_equal(b.ptr, "P\x02" "a\x00\x00", 5);
    assert_memory_equal(e.ptr, "P\x02" "a\x00\xff", 5);
    /* every longer tuple starting with t falls inside; t itself and others do not */
    cfdb_tuple l;
    cfdb_tuple_init(&l, &A);
    assert_int_equal(cfdb_tuple_add_cstr(&l, "a"), 0);
    assert_int_equal(cfdb_tuple_add_null(&l), 0);
    cfdb_bytes pl, pt;
    assert_int_equal(cfdb_tuple_pack(&A, BYTES("P"), &l, &pl), 0);
    assert_int_equal(cfdb_tuple_pack(&A, BYTES("P"), &t, &pt), 0);
    assert_true(cfdb_bytes_cmp(b, pl) <= 0 && cfdb_bytes_cmp(pl, e) < 0);
    assert_true(cfdb_bytes_cmp(pt, b) < 0);
    /* pack_to: exact size needed */
    uint8_t buf[4];
    size_t n = 0;
    assert_int_equal(cfdb_tuple_pack_to(&t, buf, 2, &n), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_tuple_pack_to(&t, buf, 3, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "\x02" "a\x00", 3);
}

static void test_typed_getters(void **state)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &A);
    assert_int_equal(cfdb_tuple_add_int(&t, 5), 0);
    assert_int_equal(cfdb_tuple_add_bytes(&t, "x", 1), 0);
    int64_t v;
    cfdb_bytes b;
    assert_int_equal(cfdb_tuple_get_int(&t, 0, &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(cfdb_tuple_get_int(&t, 1, &v), CFDB_ERR_INVALID_TUPLE_INDEX);
    assert_int_equal(cfdb_tuple_get_int(&t, 2, &v), CFDB_ERR_INVALID_TUPLE_INDEX);
    assert_int_equal(cfdb_tuple_get_bytes(&t, 1, &b), 0);
    assert_int_equal(cfdb_tuple_get_string(&t, 1, &b), CFDB_ERR_INVALID_TUPLE_INDEX);
    assert_null(cfdb_tuple_get(&t, 2));
}

typedef struct {
    const char *in;
    size_t len;
    int err;
} bad_case;

#define BC(s, e) { (s), sizeof(s) - 1, (e) }

static void test_malformed(void **state)
{
    static const bad_case cases[] = {
        BC("\x01" "abc", CFDB_ERR_KEY_NOT_TUPLE),               /* no terminator */
        BC("\x01" "a\x00\xff", CFDB_ERR_KEY_NOT_TUPLE),         /* escape, then end */
        BC("\x02\xff\x00", CFDB_ERR_KEY_NOT_TUPLE),             /* invalid UTF-8 */
        BC("\x02\xc0\x80\x00", CFDB_ERR_KEY_NOT_TUPLE),         /* overlong NUL */
        BC("\x05\x14", CFDB_ERR_KEY_NOT_TUPLE),                 /* nested without its end */
        BC("\x05\x00\xff", CFDB_ERR_KEY_NOT_TUPLE),             /* nested null, then end */
        BC("\x16\x01", CFDB_ERR_KEY_NOT_TUPLE),                 /* short integer */
        BC("\x1c\x01\x02\x03\x04\x05\x06\x07", CFDB_ERR_KEY_NOT_TUPLE),
        BC("\x1d", CFDB_ERR_KEY_NOT_TUPLE),                     /* no length byte */
        BC("\x1d\x09\x01", CFDB_ERR_KEY_NOT_TUPLE),             /* short big integer */
        BC("\x0b\xf6\x01", CFDB_ERR_KEY_NOT_TUPLE),
        BC("\x20\x00\x00\x00", CFDB_ERR_KEY_NOT_TUPLE),
        BC("\x21\x00", CFDB_ERR_KEY_NOT_TUPLE),
        BC("\x30\x00\x01", CFDB_ERR_KEY_NOT_TUPLE),
        BC("\x32\x00", CFDB_ERR_KEY_NOT_TUPLE),
        BC("\x33\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", CFDB_ERR_KEY_NOT_TUPLE),
        BC("\x03", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),           /* deprecated nested */
        BC("\x04", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),
        BC("\x0a", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),
        BC("\x1e", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),
        BC("\x22", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),           /* long double: reserved */
        BC("\x25", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),           /* deprecated true */
        BC("\x31", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),
        BC("\x40", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),           /* user type codes: refused */
        BC("\x4f\x00", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),
        BC("\xff", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),
        BC("\x00\xff", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),       /* 00 ff is only nested */
        BC("\x14\x05\x05\x40\x00\x00", CFDB_ERR_INVALID_TUPLE_DATA_TYPE),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfdb_tuple t;
        int err = cfdb_tuple_unpack(&A, cfdb_bytes_make(cases[i].in, cases[i].len), &t);
        if (err != cases[i].err)
            fprintf(stderr, "case %zu: got %d want %d\n", i, err, cases[i].err);
        assert_int_equal(err, cases[i].err);
    }
    /* nesting: CFDB_TUPLE_MAX_DEPTH levels are fine, one more is refused */
    uint8_t deep[2 * (CFDB_TUPLE_MAX_DEPTH + 1)];
    for (int d = CFDB_TUPLE_MAX_DEPTH; d <= CFDB_TUPLE_MAX_DEPTH + 1; d++) {
        memset(deep, 0x05, (size_t)d);
        memset(deep + d, 0x00, (size_t)d);
        cfdb_tuple t;
        int err = cfdb_tuple_unpack(&A, cfdb_bytes_make(deep, 2 * (size_t)d), &t);
        assert_int_equal(err, d <= CFDB_TUPLE_MAX_DEPTH ? 0 : CFDB_ERR_KEY_NOT_TUPLE);
        if (!err) {
            cfdb_bytes p;
            assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &t, &p), 0);
            assert_true(cfdb_bytes_eq(p, cfdb_bytes_make(deep, 2 * (size_t)d)));
        }
    }
}

/* Encodings the bindings read although they never write them; pack canonicalizes. */
static void test_noncanonical(void **state)
{
    static const struct {
        const char *in;
        size_t len;
        const char *canon;
        size_t clen;
    } cases[] = {
        { "\x15\x00", 2, "\x14", 1 },
        { "\x16\x00\x05", 3, "\x15\x05", 2 },
        { "\x13\xff", 2, "\x14", 1 },
        { "\x12\xff\xfe", 3, "\x13\xfe", 2 },
        { "\x1d\x00", 2, "\x14", 1 },
        { "\x1d\x01\x07", 3, "\x15\x07", 2 },
        { "\x0b\xff", 2, "\x14", 1 },
        { "\x0b\xfe\xfe", 3, "\x13\xfe", 2 },
        { "\x1c\xff\xff\xff\xff\xff\xff\xff\xff", 9, "\x1d\x08\xff\xff\xff\xff\xff\xff\xff\xff", 10 },
        { "\x1d\x09\x00\xff\xff\xff\xff\xff\xff\xff\xfe", 11, "\x1c\xff\xff\xff\xff\xff\xff\xff\xfe", 9 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfdb_bytes in = cfdb_bytes_make(cases[i].in, cases[i].len);
        cfdb_tuple t;
        assert_int_equal(cfdb_tuple_unpack(&A, in, &t), 0);
        assert_int_equal(cfdb_tuple_unpack_flags(&A, in, CFDB_TUPLE_UNPACK_CANONICAL, &t),
                         CFDB_ERR_KEY_NOT_TUPLE);
        assert_int_equal(cfdb_tuple_unpack(&A, in, &t), 0);
        assert_packs_to(&t, cfdb_bytes_make(cases[i].canon, cases[i].clen));
    }
}

/* ---- randomized properties ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void random_tuple(cfdb_tuple *t, int depth);

static void random_elem(cfdb_tuple *t, int depth)
{
    static const char alphabet[] = { 0x00, 0x01, 'a', 'b', (char)0xff };
    char buf[8];
    uint8_t raw[16];
    size_t n = rnd() % 4;
    switch (rnd() % 13) {
    case 0: assert_int_equal(cfdb_tuple_add_null(t), 0); break;
    case 1:
        for (size_t k = 0; k < n; k++)
            buf[k] = alphabet[rnd() % sizeof alphabet];
        assert_int_equal(cfdb_tuple_add_bytes(t, buf, n), 0);
        break;
    case 2:
        for (size_t k = 0; k < n; k++)
            buf[k] = "\0ab\x7f"[rnd() % 4];
        assert_int_equal(cfdb_tuple_add_string(t, buf, n), 0);
        break;
    case 3:
        if (depth < 3) {
            cfdb_tuple *nt = cfdb_arena_alloc(&A, sizeof *nt);
            assert_non_null(nt);
            cfdb_tuple_init(nt, &A);
            random_tuple(nt, depth + 1);
            assert_int_equal(cfdb_tuple_add_nested(t, nt), 0);
        } else
            assert_int_equal(cfdb_tuple_add_null(t), 0);
        break;
    case 4: {
        int shift = (int)(rnd() % 64);
        int64_t v = (int64_t)(rnd() >> shift);
        assert_int_equal(cfdb_tuple_add_int(t, rnd() & 1 ? v : -v), 0);
        break;
    }
    case 5: assert_int_equal(cfdb_tuple_add_int(t, (int64_t)(rnd() % 7) - 3), 0); break;
    case 6: {
        size_t len = 8 + rnd() % 3;
        for (size_t k = 0; k < len; k++)
            raw[k] = (uint8_t)(rnd() % 3 == 0 ? 0xff : rnd());
        assert_int_equal(cfdb_tuple_add_bigint(t, rnd() & 1, raw, len), 0);
        break;
    }
    case 7: {
        uint32_t bits = (uint32_t)rnd();
        float f;
        memcpy(&f, &bits, 4);
        assert_int_equal(cfdb_tuple_add_float(t, f), 0);
        break;
    }
    case 8: {
        uint64_t bits = rnd();
        double d;
        memcpy(&d, &bits, 8);
        assert_int_equal(cfdb_tuple_add_double(t, rnd() & 1 ? d : (double)(int)(rnd() % 5) - 2), 0);
        break;
    }
    case 9: assert_int_equal(cfdb_tuple_add_bool(t, rnd() & 1), 0); break;
    case 10:
        for (int k = 0; k < 16; k++)
            raw[k] = (uint8_t)(rnd() % 3);
        assert_int_equal(cfdb_tuple_add_uuid(t, raw), 0);
        break;
    case 11:
        for (int k = 0; k < 12; k++)
            raw[k] = (uint8_t)(rnd() % 3);
        assert_int_equal(cfdb_tuple_add_versionstamp(t, raw), 0);
        break;
    default:
        for (int k = 0; k < 10; k++)
            raw[k] = (uint8_t)(rnd() % 3);
        assert_int_equal(cfdb_tuple_add_versionstamp80(t, raw), 0);
        break;
    }
}

static void random_tuple(cfdb_tuple *t, int depth)
{
    size_t n = rnd() % 5;
    for (size_t k = 0; k < n; k++)
        random_elem(t, depth);
}

static int sign(int c)
{
    return c < 0 ? -1 : c > 0;
}

static void test_random_roundtrip_and_order(void **state)
{
    rng = 0x9e3779b97f4a7c15ull;
    for (int iter = 0; iter < 20000; iter++) {
        cfdb_arena_reset(&A);
        cfdb_tuple a, b;
        cfdb_tuple_init(&a, &A);
        cfdb_tuple_init(&b, &A);
        random_tuple(&a, 0);
        /* b often shares a prefix with a, so that the comparison goes deep */
        for (uint32_t k = 0; k < a.count && rnd() % 3; k++)
            assert_int_equal(cfdb_tuple_add_elem(&b, &a.elems[k]), 0);
        random_tuple(&b, 0);
        cfdb_bytes pa, pb;
        assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &a, &pa), 0);
        assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &b, &pb), 0);
        /* round trip: same value, same bytes, canonical */
        cfdb_tuple ua;
        assert_int_equal(cfdb_tuple_unpack_flags(&A, pa, CFDB_TUPLE_UNPACK_CANONICAL, &ua), 0);
        assert_int_equal(cfdb_tuple_compare(&a, &ua), 0);
        cfdb_bytes pua;
        assert_int_equal(cfdb_tuple_pack(&A, (cfdb_bytes){ 0 }, &ua, &pua), 0);
        assert_true(cfdb_bytes_eq(pa, pua));
        /* order */
        int c = sign(cfdb_tuple_compare(&a, &b));
        int m = sign(cfdb_bytes_cmp(pa, pb));
        if (c != m) {
            fprintf(stderr, "iteration %d: compare %d, bytes %d\n", iter, c, m);
            fail();
        }
        assert_int_equal(sign(cfdb_tuple_compare(&b, &a)), -m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spec_byte_string, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_unicode_string, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_floats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bool_uuid_versionstamp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incomplete_versionstamp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_range_and_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_getters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noncanonical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_roundtrip_and_order, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
