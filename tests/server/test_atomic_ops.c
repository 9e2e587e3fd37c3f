/* Atomic ops and versionstamps against FoundationDB 7.3's definitions (Part 7 §7.5-7.6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "atomic_ops.h"
#include "error_codes.h"

#define ABSENT NULL
#define B(s) s, (sizeof(s) - 1)

typedef struct atomic_case {
    const char *name;
    int type;
    const char *existing; /* ABSENT = key absent */
    size_t existing_len;
    const char *operand;
    size_t operand_len;
    int want_present;
    const char *want;
    size_t want_len;
} atomic_case;

/* {name, type, existing, operand, present, result} */
#define CASE(name, type, e, p, present, r) { name, type, e, p, present, r }
#define E(s) B(s)
#define NOE ABSENT, 0

static const atomic_case cases[] = {
    /* AddValue: absent/empty existing -> operand; empty operand -> empty; else
     * (Pad(E) + P) mod 2^(8 len P). */
    CASE("add absent", CFDB_MUT_ADD_VALUE, NOE, E("\x01"), 1, E("\x01")),
    CASE("add empty existing", CFDB_MUT_ADD_VALUE, E(""), E("\x05\x00"), 1, E("\x05\x00")),
    CASE("add empty operand", CFDB_MUT_ADD_VALUE, E("\x07"), E(""), 1, E("")),
    CASE("add absent empty operand", CFDB_MUT_ADD_VALUE, NOE, E(""), 1, E("")),
    CASE("add carry wraps", CFDB_MUT_ADD_VALUE, E("\xff"), E("\x01"), 1, E("\x00")),
    CASE("add carry", CFDB_MUT_ADD_VALUE, E("\xff\x00"), E("\x01\x00"), 1, E("\x00\x01")),
    CASE("add longer existing truncated", CFDB_MUT_ADD_VALUE, E("\xff\xff\xff"), E("\x02"), 1, E("\x01")),
    CASE("add shorter existing padded", CFDB_MUT_ADD_VALUE, E("\x01"), E("\xff\xff"), 1, E("\x00\x00")),
    CASE("add multi-byte", CFDB_MUT_ADD_VALUE, E("\x10\x27\x00\x00"), E("\xf0\xd8\xff\xff"), 1, E("\x00\x00\x00\x00")),
    /* And (legacy): absent counts as zeros. */
    CASE("and absent zeros", CFDB_MUT_AND, NOE, E("\xff\x0f"), 1, E("\x00\x00")),
    CASE("and empty operand", CFDB_MUT_AND, E("\xff"), E(""), 1, E("")),
    CASE("and truncates existing", CFDB_MUT_AND, E("\x0f\xf0"), E("\xff"), 1, E("\x0f")),
    CASE("and pads existing with zeros", CFDB_MUT_AND, E("\xff"), E("\xff\xff"), 1, E("\xff\x00")),
    CASE("and empty existing", CFDB_MUT_AND, E(""), E("\xff"), 1, E("\x00")),
    /* AndV2: absent -> operand, else And. */
    CASE("andv2 absent", CFDB_MUT_AND_V2, NOE, E("\xab\xcd"), 1, E("\xab\xcd")),
    CASE("andv2 empty existing", CFDB_MUT_AND_V2, E(""), E("\xff"), 1, E("\x00")),
    CASE("andv2 pad", CFDB_MUT_AND_V2, E("\x0f"), E("\xff\xff"), 1, E("\x0f\x00")),
    CASE("andv2 empty operand", CFDB_MUT_AND_V2, E("\x0f"), E(""), 1, E("")),
    /* Or / Xor: absent/empty -> operand; empty operand -> empty; tail from operand. */
    CASE("or absent", CFDB_MUT_OR, NOE, E("\x12"), 1, E("\x12")),
    CASE("or empty existing", CFDB_MUT_OR, E(""), E("\x12"), 1, E("\x12")),
    CASE("or empty operand", CFDB_MUT_OR, E("\x12"), E(""), 1, E("")),
    CASE("or operand longer", CFDB_MUT_OR, E("\x01"), E("\x10\x10"), 1, E("\x11\x10")),
    CASE("or existing longer", CFDB_MUT_OR, E("\x01\x02\x03"), E("\x10"), 1, E("\x11")),
    CASE("xor absent", CFDB_MUT_XOR, NOE, E("\x12"), 1, E("\x12")),
    CASE("xor operand longer", CFDB_MUT_XOR, E("\xff"), E("\x0f\x0f"), 1, E("\xf0\x0f")),
    CASE("xor existing longer", CFDB_MUT_XOR, E("\xff\xff"), E("\xff"), 1, E("\x00")),
    CASE("xor empty operand", CFDB_MUT_XOR, E("\xff"), E(""), 1, E("")),
    /* AppendIfFits. */
    CASE("append absent", CFDB_MUT_APPEND_IF_FITS, NOE, E("ab"), 1, E("ab")),
    CASE("append empty existing", CFDB_MUT_APPEND_IF_FITS, E(""), E("ab"), 1, E("ab")),
    CASE("append empty operand", CFDB_MUT_APPEND_IF_FITS, E("xy"), E(""), 1, E("xy")),
    CASE("append", CFDB_MUT_APPEND_IF_FITS, E("xy"), E("ab"), 1, E("xyab")),
    /* Max: absent/empty -> operand; empty operand -> empty; ties -> operand. */
    CASE("max absent", CFDB_MUT_MAX, NOE, E("\x05"), 1, E("\x05")),
    CASE("max empty existing", CFDB_MUT_MAX, E(""), E("\x05"), 1, E("\x05")),
    CASE("max empty operand", CFDB_MUT_MAX, E("\x05"), E(""), 1, E("")),
    CASE("max existing wins", CFDB_MUT_MAX, E("\x02\x00"), E("\x01\x00"), 1, E("\x02\x00")),
    CASE("max operand wins", CFDB_MUT_MAX, E("\x01\x00"), E("\x02\x00"), 1, E("\x02\x00")),
    CASE("max high byte decides", CFDB_MUT_MAX, E("\xff\x00"), E("\x00\x01"), 1, E("\x00\x01")),
    CASE("max existing truncated", CFDB_MUT_MAX, E("\x00\x01"), E("\xff"), 1, E("\xff")),
    CASE("max existing padded wins", CFDB_MUT_MAX, E("\xff"), E("\xfe\x00"), 1, E("\xff\x00")),
    CASE("max operand tail nonzero", CFDB_MUT_MAX, E("\xff"), E("\x00\x01"), 1, E("\x00\x01")),
    CASE("max truncation makes existing win", CFDB_MUT_MAX, E("\x09\x07"), E("\x08"), 1, E("\x09")),
    /* Min (legacy): absent counts as zero. */
    CASE("min absent", CFDB_MUT_MIN, NOE, E("\x05\x01"), 1, E("\x00\x00")),
    CASE("min absent zero operand", CFDB_MUT_MIN, NOE, E("\x00"), 1, E("\x00")),
    CASE("min empty existing", CFDB_MUT_MIN, E(""), E("\x05"), 1, E("\x00")),
    CASE("min empty operand", CFDB_MUT_MIN, E("\x05"), E(""), 1, E("")),
    CASE("min operand wins", CFDB_MUT_MIN, E("\x02"), E("\x01"), 1, E("\x01")),
    CASE("min existing wins", CFDB_MUT_MIN, E("\x01"), E("\x02"), 1, E("\x01")),
    CASE("min existing truncated", CFDB_MUT_MIN, E("\xff\xff"), E("\x01"), 1, E("\x01")),
    CASE("min existing padded wins", CFDB_MUT_MIN, E("\x01"), E("\x00\x01"), 1, E("\x01\x00")),
    CASE("min truncation", CFDB_MUT_MIN, E("\x03\x09"), E("\x04"), 1, E("\x03")),
    /* MinV2: absent -> operand. */
    CASE("minv2 absent", CFDB_MUT_MIN_V2, NOE, E("\x05"), 1, E("\x05")),
    CASE("minv2 empty existing", CFDB_MUT_MIN_V2, E(""), E("\x05"), 1, E("\x00")),
    CASE("minv2 padded", CFDB_MUT_MIN_V2, E("\x01"), E("\x02\x00"), 1, E("\x01\x00")),
    CASE("minv2 empty operand", CFDB_MUT_MIN_V2, E("\x01"), E(""), 1, E("")),
    /* ByteMin / ByteMax: lexicographic on whole strings. */
    CASE("bytemin absent", CFDB_MUT_BYTE_MIN, NOE, E("b"), 1, E("b")),
    CASE("bytemin existing", CFDB_MUT_BYTE_MIN, E("abc"), E("abd"), 1, E("abc")),
    CASE("bytemin prefix", CFDB_MUT_BYTE_MIN, E("ab"), E("abc"), 1, E("ab")),
    CASE("bytemin operand", CFDB_MUT_BYTE_MIN, E("b"), E("a"), 1, E("a")),
    CASE("bytemin empty existing", CFDB_MUT_BYTE_MIN, E(""), E("a"), 1, E("")),
    CASE("bytemin empty operand", CFDB_MUT_BYTE_MIN, E("a"), E(""), 1, E("")),
    CASE("bytemax absent", CFDB_MUT_BYTE_MAX, NOE, E("b"), 1, E("b")),
    CASE("bytemax existing", CFDB_MUT_BYTE_MAX, E("abd"), E("abc"), 1, E("abd")),
    CASE("bytemax prefix", CFDB_MUT_BYTE_MAX, E("ab"), E("abc"), 1, E("abc")),
    CASE("bytemax longer existing", CFDB_MUT_BYTE_MAX, E("abc"), E("ab"), 1, E("abc")),
    CASE("bytemax empty operand", CFDB_MUT_BYTE_MAX, E("a"), E(""), 1, E("a")),
    /* CompareAndClear. */
    CASE("cac absent", CFDB_MUT_COMPARE_AND_CLEAR, NOE, E("x"), 0, E("")),
    CASE("cac equal", CFDB_MUT_COMPARE_AND_CLEAR, E("x"), E("x"), 0, E("")),
    CASE("cac equal empty", CFDB_MUT_COMPARE_AND_CLEAR, E(""), E(""), 0, E("")),
    CASE("cac different", CFDB_MUT_COMPARE_AND_CLEAR, E("x"), E("y"), 1, E("x")),
    CASE("cac prefix differs", CFDB_MUT_COMPARE_AND_CLEAR, E("x"), E("x\x00"), 1, E("x")),
};

static void hexdump(const char *label, const uint8_t *p, size_t n)
{
    fprintf(stderr, "  %s:", label);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %02x", p[i]);
    fprintf(stderr, "\n");
}

static void test_atomic_table(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const atomic_case *c = &cases[i];
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_bytes e = cfdb_bytes_make(c->existing, c->existing_len);
        cfdb_bytes out;
        bool present = false;
        int rc = cfdb_apply_atomic(c->type, c->existing ? &e : NULL,
                                   cfdb_bytes_make(c->operand, c->operand_len), &a, &out, &present);
        bool ok = rc == 0 && present == (c->want_present != 0);
        if (ok && present)
            ok = out.len == c->want_len && (out.len == 0 || memcmp(out.ptr, c->want, out.len) == 0);
        if (!ok) {
            failures++;
            fprintf(stderr, "FAIL %s: rc=%d present=%d\n", c->name, rc, present);
            hexdump("got", out.ptr, rc == 0 ? out.len : 0);
            hexdump("want", (const uint8_t *)c->want, c->want_len);
        }
        cfdb_arena_free(&a);
    }
    assert_int_equal(failures, 0);
}

/* Ties go to the operand (visible through which buffer is returned). */
static void test_ties_return_operand(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    uint8_t ev[2] = { 5, 0 }, pv[2] = { 5, 0 };
    cfdb_bytes e = cfdb_bytes_make(ev, 2), p = cfdb_bytes_make(pv, 2), out;
    bool present;
    const int types[] = { CFDB_MUT_MAX, CFDB_MUT_MIN, CFDB_MUT_MIN_V2,
                          CFDB_MUT_BYTE_MIN, CFDB_MUT_BYTE_MAX };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        assert_int_equal(cfdb_apply_atomic(types[i], &e, p, &a, &out, &present), 0);
        assert_true(present);
        assert_ptr_equal(out.ptr, pv);
    }
    cfdb_arena_free(&a);
}

static void test_append_size_limit(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    uint8_t *big = calloc(CFDB_VALUE_SIZE_LIMIT, 1);
    assert_non_null(big);
    cfdb_bytes out;
    bool present;
    /* Exactly at the limit: appended. */
    cfdb_bytes e = cfdb_bytes_make(big, CFDB_VALUE_SIZE_LIMIT - 2);
    assert_int_equal(cfdb_apply_atomic(CFDB_MUT_APPEND_IF_FITS, &e, CFDB_BYTES_LIT("zz"), &a,
                                       &out, &present), 0);
    assert_int_equal(out.len, CFDB_VALUE_SIZE_LIMIT);
    assert_memory_equal(out.ptr + CFDB_VALUE_SIZE_LIMIT - 2, "zz", 2);
    /* One byte over: unchanged. */
    e.len = CFDB_VALUE_SIZE_LIMIT - 1;
    assert_int_equal(cfdb_apply_atomic(CFDB_MUT_APPEND_IF_FITS, &e, CFDB_BYTES_LIT("zz"), &a,
                                       &out, &present), 0);
    assert_true(present);
    assert_ptr_equal(out.ptr, big);
    assert_int_equal(out.len, CFDB_VALUE_SIZE_LIMIT - 1);
    free(big);
    cfdb_arena_free(&a);
}

static void test_invalid_types(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    const int bad[] = { -1, 0, 1, 3, 4, 5, 10, 11, 14, 15, 21, 22, 23, 24, 99 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfdb_bytes out;
        bool present;
        assert_int_equal(cfdb_apply_atomic(bad[i], NULL, CFDB_BYTES_LIT("x"), &a, &out, &present),
                         CFDB_ERR_INVALID_MUTATION_TYPE);
    }
    assert_true(cfdb_mutation_is_atomic(CFDB_MUT_SET_VERSIONSTAMPED_KEY));
    assert_true(cfdb_mutation_is_atomic(CFDB_MUT_COMPARE_AND_CLEAR));
    assert_false(cfdb_mutation_is_atomic(CFDB_MUT_SET_VALUE));
    assert_false(cfdb_mutation_is_atomic(CFDB_MUT_CLEAR_RANGE));
    assert_false(cfdb_mutation_is_atomic(CFDB_MUT_MAX_ATOMIC_OP));
    assert_true(cfdb_mutation_is_single_key(CFDB_MUT_SET_VALUE));
    cfdb_arena_free(&a);
}

/* ---- randomized comparison with the integer definitions ---- */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Little-endian value of Pad(x, n), n <= 8. */
static uint64_t le_value(const uint8_t *x, size_t xlen, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)(i < xlen ? x[i] : 0) << (8 * i);
    return v;
}

static void test_random_against_definition(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    for (int iter = 0; iter < 200000; iter++) {
        uint8_t ev[8], pv[8];
        size_t el = rnd() % 9, pl = 1 + rnd() % 8;
        bool absent = rnd() % 5 == 0;
        for (size_t i = 0; i < 8; i++) {
            /* Small alphabet so ties and equal prefixes are common. */
            ev[i] = (uint8_t)(rnd() % 3 == 0 ? 0 : rnd() % 4);
            pv[i] = (uint8_t)(rnd() % 3 == 0 ? 0 : rnd() % 4);
        }
        cfdb_bytes e = cfdb_bytes_make(ev, el), p = cfdb_bytes_make(pv, pl), out;
        bool present;
        uint64_t mask = pl == 8 ? ~0ull : ((1ull << (8 * pl)) - 1);
        uint64_t E = absent ? 0 : le_value(ev, el, pl), P = le_value(pv, pl, pl);
        bool e_empty = absent || el == 0;

        cfdb_arena_reset(&a);
        assert_int_equal(cfdb_apply_atomic(CFDB_MUT_ADD_VALUE, absent ? NULL : &e, p, &a, &out, &present), 0);
        uint64_t want = e_empty ? P : ((E + P) & mask);
        assert_int_equal(out.len, pl);
        assert_true(le_value(out.ptr, out.len, pl) == want);

        assert_int_equal(cfdb_apply_atomic(CFDB_MUT_MAX, absent ? NULL : &e, p, &a, &out, &present), 0);
        want = e_empty ? P : (E > P ? E : P);
        assert_int_equal(out.len, pl);
        assert_true(le_value(out.ptr, out.len, pl) == want);

        assert_int_equal(cfdb_apply_atomic(CFDB_MUT_MIN, absent ? NULL : &e, p, &a, &out, &present), 0);
        want = E < P ? E : P; /* absent and empty both count as 0 */
        assert_int_equal(out.len, pl);
        assert_true(le_value(out.ptr, out.len, pl) == want);

        assert_int_equal(cfdb_apply_atomic(CFDB_MUT_MIN_V2, absent ? NULL : &e, p, &a, &out, &present), 0);
        want = absent ? P : (E < P ? E : P);
        assert_int_equal(out.len, pl);
        assert_true(le_value(out.ptr, out.len, pl) == want);

        assert_int_equal(cfdb_apply_atomic(CFDB_MUT_AND_V2, absent ? NULL : &e, p, &a, &out, &present), 0);
        want = absent ? P : (E & P);
        assert_true(le_value(out.ptr, out.len, pl) == want);

        assert_int_equal(cfdb_apply_atomic(CFDB_MUT_XOR, absent ? NULL : &e, p, &a, &out, &present), 0);
        want = e_empty ? P : (E ^ P);
        assert_true(le_value(out.ptr, out.len, pl) == want);

        assert_int_equal(cfdb_apply_atomic(CFDB_MUT_BYTE_MAX, absent ? NULL : &e, p, &a, &out, &present), 0);
        cfdb_bytes bw = absent ? p : (cfdb_bytes_cmp(e, p) > 0 ? e : p);
        assert_true(cfdb_bytes_eq(out, bw));
    }
    cfdb_arena_free(&a);
}

/* ---- versionstamps ---- */

static cfdb_bytes with_offset(cfdb_arena *a, const char *body, size_t n, int32_t off)
{
    uint8_t *buf = cfdb_arena_alloc(a, n + 4);
    memcpy(buf, body, n);
    uint32_t u = (uint32_t)off;
    for (int i = 0; i < 4; i++)
        buf[n + i] = (uint8_t)(u >> (8 * i));
    return cfdb_bytes_make(buf, n + 4);
}

static const uint8_t STAMP[10] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a };
static const int64_t STAMP_VERSION = 0x0102030405060708ll;
static const uint16_t STAMP_BATCH = 0x090a;

static void test_place_versionstamp(void **state)
{
    (void)state;
    uint8_t out[10];
    cfdb_place_versionstamp(out, STAMP_VERSION, STAMP_BATCH);
    assert_memory_equal(out, STAMP, 10);
    cfdb_place_versionstamp(out, 1, 0);
    const uint8_t one[10] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
    assert_memory_equal(out, one, 10);
}

static void test_transform_versionstamp(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_bytes out;
    const char body[] = "ab\0\0\0\0\0\0\0\0\0\0cd"; /* 2 + 10 placeholder + 2 */
    const size_t blen = 14;

    /* Valid offset: stamp placed, offset stripped. */
    assert_int_equal(cfdb_transform_versionstamp(with_offset(&a, body, blen, 2), STAMP_VERSION,
                                                 STAMP_BATCH, &a, &out), 0);
    assert_int_equal(out.len, blen);
    assert_memory_equal(out.ptr, "ab", 2);
    assert_memory_equal(out.ptr + 2, STAMP, 10);
    assert_memory_equal(out.ptr + 12, "cd", 2);

    /* Last valid offset (len - 10). */
    assert_int_equal(cfdb_transform_versionstamp(with_offset(&a, body, blen, 4), STAMP_VERSION,
                                                 STAMP_BATCH, &a, &out), 0);
    assert_memory_equal(out.ptr, "ab\0\0", 4);
    assert_memory_equal(out.ptr + 4, STAMP, 10);

    /* Invalid offsets: stripped, bytes untouched, still a success. */
    const int32_t bad[] = { 5, -1, 14, INT32_MAX, INT32_MIN };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cfdb_transform_versionstamp(with_offset(&a, body, blen, bad[i]),
                                                     STAMP_VERSION, STAMP_BATCH, &a, &out), 0);
        assert_int_equal(out.len, blen);
        assert_memory_equal(out.ptr, body, blen);
    }

    /* Shorter than 4 bytes: left alone entirely. */
    assert_int_equal(cfdb_transform_versionstamp(CFDB_BYTES_LIT("xyz"), 1, 1, &a, &out), 0);
    assert_true(cfdb_bytes_eq(out, CFDB_BYTES_LIT("xyz")));
    /* Exactly 4 bytes: just an offset, nothing left. */
    assert_int_equal(cfdb_transform_versionstamp(with_offset(&a, "", 0, 0), 1, 1, &a, &out), 0);
    assert_int_equal(out.len, 0);
    /* Exactly 10 bytes of body at offset 0 (the metadataVersion operand). */
    const char zeros[10] = { 0 };
    assert_int_equal(cfdb_transform_versionstamp(with_offset(&a, zeros, 10, 0), STAMP_VERSION,
                                                 STAMP_BATCH, &a, &out), 0);
    assert_memory_equal(out.ptr, STAMP, 10);
    cfdb_arena_free(&a);
}

static void test_transform_mutation(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    const char zeros[10] = { 0 };
    cfdb_mutation m = { CFDB_MUT_SET_VERSIONSTAMPED_KEY, with_offset(&a, zeros, 10, 0),
                        CFDB_BYTES_LIT("value") };
    assert_int_equal(cfdb_transform_versionstamp_mutation(&m, STAMP_VERSION, STAMP_BATCH, &a), 0);
    assert_int_equal(m.type, CFDB_MUT_SET_VALUE);
    assert_int_equal(m.param1.len, 10);
    assert_memory_equal(m.param1.ptr, STAMP, 10);
    assert_true(cfdb_bytes_eq(m.param2, CFDB_BYTES_LIT("value")));

    m = (cfdb_mutation){ CFDB_MUT_SET_VERSIONSTAMPED_VALUE, CFDB_BYTES_LIT("key"),
                         with_offset(&a, zeros, 10, 0) };
    assert_int_equal(cfdb_transform_versionstamp_mutation(&m, STAMP_VERSION, STAMP_BATCH, &a), 0);
    assert_int_equal(m.type, CFDB_MUT_SET_VALUE);
    assert_true(cfdb_bytes_eq(m.param1, CFDB_BYTES_LIT("key")));
    assert_memory_equal(m.param2.ptr, STAMP, 10);

    /* Invalid offset: still becomes SetValue with the offset removed. */
    m = (cfdb_mutation){ CFDB_MUT_SET_VERSIONSTAMPED_VALUE, CFDB_BYTES_LIT("key"),
                         with_offset(&a, "abc", 3, 0) };
    assert_int_equal(cfdb_transform_versionstamp_mutation(&m, STAMP_VERSION, STAMP_BATCH, &a), 0);
    assert_int_equal(m.type, CFDB_MUT_SET_VALUE);
    assert_true(cfdb_bytes_eq(m.param2, CFDB_BYTES_LIT("abc")));

    /* Other types untouched. */
    m = (cfdb_mutation){ CFDB_MUT_ADD_VALUE, CFDB_BYTES_LIT("k"), CFDB_BYTES_LIT("\x01\0\0\0\0") };
    assert_int_equal(cfdb_transform_versionstamp_mutation(&m, 1, 1, &a), 0);
    assert_int_equal(m.type, CFDB_MUT_ADD_VALUE);
    assert_int_equal(m.param2.len, 5);
    cfdb_arena_free(&a);
}

static void test_versionstamp_param_check(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    const char body[16] = { 0 };
    assert_int_equal(cfdb_versionstamp_param_check(with_offset(&a, body, 10, 0)), 0);
    assert_int_equal(cfdb_versionstamp_param_check(with_offset(&a, body, 16, 6)), 0);
    assert_int_equal(cfdb_versionstamp_param_check(with_offset(&a, body, 16, 7)),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_versionstamp_param_check(with_offset(&a, body, 16, -1)),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_versionstamp_param_check(with_offset(&a, body, 9, 0)),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_versionstamp_param_check(CFDB_BYTES_LIT("abc")),
                     CFDB_ERR_CLIENT_INVALID_OPERATION);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomic_table),
        cmocka_unit_test(test_ties_return_operand),
        cmocka_unit_test(test_append_size_limit),
        cmocka_unit_test(test_invalid_types),
        cmocka_unit_test(test_random_against_definition),
        cmocka_unit_test(test_place_versionstamp),
        cmocka_unit_test(test_transform_versionstamp),
        cmocka_unit_test(test_transform_mutation),
        cmocka_unit_test(test_versionstamp_param_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
