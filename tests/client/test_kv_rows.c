/* cfdb_kv_rows_copy (src/client/kv_rows.c): a range read's rows copied into an arena in bulk.
 * Asserts that every copy holds the source's bytes after the source is overwritten, that rows
 * laid out as a GetKeyValuesReply lays them out are copied as one span (offsets between rows
 * are kept, and the arena grows by the span only), that rows scattered far apart are copied
 * back to back instead (the arena grows by their bytes, not by the distance between them),
 * that empty keys and values come out as "" with length 0, and that dst may be src. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv_rows.h"

/* Writes n rows as kv_blob lays them out: (u32 len, key, u32 len, value) per row. */
static size_t blob(uint8_t *buf, cfdb_key_value *rows, size_t n, size_t vlen)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        char key[32];
        int kl = snprintf(key, sizeof key, "row/%06zu", i);
        uint32_t l = (uint32_t)kl;
        memcpy(buf + at, &l, 4);
        at += 4;
        memcpy(buf + at, key, (size_t)kl);
        rows[i].key = cfdb_bytes_make(buf + at, (size_t)kl);
        at += (size_t)kl;
        l = (uint32_t)vlen;
        memcpy(buf + at, &l, 4);
        at += 4;
        for (size_t j = 0; j < vlen; j++)
            buf[at + j] = (uint8_t)('a' + (i + j) % 26);
        rows[i].value = cfdb_bytes_make(buf + at, vlen);
        at += vlen;
    }
    return at;
}

static void expect_rows(const cfdb_key_value *got, size_t n, size_t vlen)
{
    for (size_t i = 0; i < n; i++) {
        char key[32];
        int kl = snprintf(key, sizeof key, "row/%06zu", i);
        assert_int_equal(got[i].key.len, (size_t)kl);
        assert_memory_equal(got[i].key.ptr, key, (size_t)kl);
        assert_int_equal(got[i].value.len, vlen);
        for (size_t j = 0; j < vlen; j++)
            assert_int_equal(got[i].value.ptr[j], (uint8_t)('a' + (i + j) % 26));
    }
}

static void test_reply_layout_is_one_span(void **state)
{
    (void)state;
    enum { N = 100, V = 100 };
    static uint8_t buf[N * (8 + 16 + V)];
    cfdb_key_value src[N], dst[N];
    size_t len = blob(buf, src, N, V);
    cfdb_arena a;
    cfdb_arena_init(&a);
    size_t before = a.total;
    assert_int_equal(cfdb_kv_rows_copy(&a, src, N, dst), 0);
    memset(buf, 0xEE, sizeof buf); /* the receive buffer is reused */
    expect_rows(dst, N, V);
    /* one span: the offsets between rows are those of the reply, and the arena grew by
     * about the span (the first key's length word is outside it) */
    for (size_t i = 1; i < N; i++)
        assert_int_equal(dst[i].key.ptr - dst[0].key.ptr, src[i].key.ptr - src[0].key.ptr);
    assert_true(a.total - before >= len - 4 && a.total - before <= len + 16);
    /* copying the copy keeps the layout (the second copy, into a future's arena) */
    cfdb_key_value again[N];
    assert_int_equal(cfdb_kv_rows_copy(&a, dst, N, again), 0);
    expect_rows(again, N, V);
    assert_int_equal(again[N - 1].value.ptr - again[0].key.ptr, dst[N - 1].value.ptr - dst[0].key.ptr);
    cfdb_arena_free(&a);
}

static void test_scattered_rows_are_packed(void **state)
{
    (void)state;
    enum { GAP = 1 << 20 };
    uint8_t *far = calloc(1, GAP + 64);
    assert_non_null(far);
    memcpy(far, "key/a", 5);
    memcpy(far + 8, "value-a", 7);
    memcpy(far + GAP, "key/b", 5);
    memcpy(far + GAP + 8, "value-b", 7);
    cfdb_key_value src[2] = {
        { cfdb_bytes_make(far, 5), cfdb_bytes_make(far + 8, 7) },
        { cfdb_bytes_make(far + GAP, 5), cfdb_bytes_make(far + GAP + 8, 7) },
    };
    cfdb_key_value dst[2];
    cfdb_arena a;
    cfdb_arena_init(&a);
    size_t before = a.total;
    assert_int_equal(cfdb_kv_rows_copy(&a, src, 2, dst), 0);
    memset(far, 0, GAP + 64);
    free(far);
    assert_true(a.total - before < 64); /* 24 bytes of rows (+ alignment), not a megabyte */
    assert_memory_equal(dst[0].key.ptr, "key/a", 5);
    assert_memory_equal(dst[0].value.ptr, "value-a", 7);
    assert_memory_equal(dst[1].key.ptr, "key/b", 5);
    assert_memory_equal(dst[1].value.ptr, "value-b", 7);
    assert_int_equal(dst[1].value.len, 7);
    cfdb_arena_free(&a);
}

static void test_empty_parts_and_in_place(void **state)
{
    (void)state;
    uint8_t buf[64];
    memcpy(buf, "k1", 2);
    memcpy(buf + 10, "k2v2", 4);
    cfdb_key_value rows[3] = {
        { cfdb_bytes_make(buf, 2), cfdb_bytes_make(NULL, 0) },       /* empty value */
        { cfdb_bytes_make(NULL, 0), cfdb_bytes_make(buf + 12, 2) },  /* empty key */
        { cfdb_bytes_make(buf + 10, 2), cfdb_bytes_make(buf + 12, 2) },
    };
    cfdb_arena a;
    cfdb_arena_init(&a);
    assert_int_equal(cfdb_kv_rows_copy(&a, rows, 3, rows), 0); /* dst == src */
    memset(buf, 0, sizeof buf);
    assert_memory_equal(rows[0].key.ptr, "k1", 2);
    assert_int_equal(rows[0].value.len, 0);
    assert_non_null(rows[0].value.ptr);
    assert_int_equal(rows[1].key.len, 0);
    assert_non_null(rows[1].key.ptr);
    assert_memory_equal(rows[1].value.ptr, "v2", 2);
    assert_memory_equal(rows[2].key.ptr, "k2", 2);
    assert_memory_equal(rows[2].value.ptr, "v2", 2);
    /* nothing but empty parts: no bytes, every pointer usable */
    cfdb_key_value empty[1] = { { cfdb_bytes_make(NULL, 0), cfdb_bytes_make(NULL, 0) } };
    assert_int_equal(cfdb_kv_rows_copy(&a, empty, 1, empty), 0);
    assert_non_null(empty[0].key.ptr);
    assert_non_null(empty[0].value.ptr);
    assert_int_equal(empty[0].key.len + empty[0].value.len, 0);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_layout_is_one_span),
        cmocka_unit_test(test_scattered_rows_are_packed),
        cmocka_unit_test(test_empty_parts_and_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
