/* The shared JSON writer and reader (src/common/json_writer.h, json_reader.h): the compact
 * layout the client's documents use, the pretty layout of cfdb-bench's manifest and results
 * and the json_spirit layout of the shell's `status json`, byte for byte, and the reader's
 * dotted paths, numbers, strings and files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <math.h>

#include "json_reader.h"
#include "json_writer.h"

/* One document through both layouts. */
static void write_doc(cfdb_json *j)
{
    cfdb_json_begin_object(j);
    cfdb_json_key(j, "s");
    cfdb_json_string(j, "a\"b\\c\nd\te\x01");
    cfdb_json_key(j, "none");
    cfdb_json_string(j, NULL);
    cfdb_json_key(j, "list");
    cfdb_json_begin_array(j);
    cfdb_json_int(j, -42);
    cfdb_json_real(j, 0.1 + 0.2, 12);
    cfdb_json_real(j, NAN, 12);
    cfdb_json_double(j, 0.5);
    cfdb_json_double(j, INFINITY);
    cfdb_json_bool(j, true);
    cfdb_json_null(j);
    cfdb_json_begin_object(j);
    cfdb_json_end_object(j);
    cfdb_json_begin_array(j);
    cfdb_json_end_array(j);
    cfdb_json_end_array(j);
    cfdb_json_key(j, "o");
    cfdb_json_begin_object(j);
    cfdb_json_key(j, "k");
    cfdb_json_bool(j, false);
    cfdb_json_end_object(j);
    cfdb_json_end_object(j);
}

static void test_compact_layout(void **state)
{
    (void)state;
    cfdb_json j;
    cfdb_json_init(&j);
    write_doc(&j);
    assert_false(j.failed);
    assert_string_equal(j.buf, "{\"s\":\"a\\\"b\\\\c\\u000ad\\u0009e\\u0001\",\"none\":null,"
                               "\"list\":[-42,0.3,null,0.5,0,true,null,{},[]],\"o\":{\"k\":false}}");
    cfdb_json_free(&j);
}

static void test_pretty_layout(void **state)
{
    (void)state;
    cfdb_json j;
    cfdb_json_init_pretty(&j);
    write_doc(&j);
    assert_false(j.failed);
    assert_string_equal(j.buf, "{\n"
                               "  \"s\": \"a\\\"b\\\\c\\nd\\te\\u0001\",\n"
                               "  \"none\": null,\n"
                               "  \"list\": [\n"
                               "    -42,\n"
                               "    0.3,\n"
                               "    null,\n"
                               "    0.5,\n"
                               "    0,\n"
                               "    true,\n"
                               "    null,\n"
                               "    {},\n"
                               "    []\n"
                               "  ],\n"
                               "  \"o\": {\n"
                               "    \"k\": false\n"
                               "  }\n"
                               "}\n");
    cfdb_json_free(&j);
}

static void test_spirit_layout(void **state)
{
    (void)state;
    cfdb_json j;
    cfdb_json_init_layout(&j, CFDB_JSON_SPIRIT);
    write_doc(&j);
    cfdb_json_string_n(&j, "z\0\x7f\xc3\b", 5); /* a second top-level value, bytes as json_spirit */
    assert_false(j.failed);
    assert_string_equal(j.buf, "{\n"
                               "    \"s\" : \"a\\\"b\\\\c\\nd\\te\\u0001\",\n"
                               "    \"none\" : null,\n"
                               "    \"list\" : [\n"
                               "        -42,\n"
                               "        0.3,\n"
                               "        null,\n"
                               "        0.5,\n"
                               "        0,\n"
                               "        true,\n"
                               "        null,\n"
                               "        {\n"
                               "        },\n"
                               "        [\n"
                               "        ]\n"
                               "    ],\n"
                               "    \"o\" : {\n"
                               "        \"k\" : false\n"
                               "    }\n"
                               "},\"z\\u0000\\u007F\\u00C3\\b\"");
    cfdb_json_free(&j);
}

static void test_reader_paths(void **state)
{
    (void)state;
    const char *doc = "{\"a\": {\"b\": [1, 2.5e3, -3], \"s\": \"x\", \"i\": 12345678901, \"t\": true},"
                      " \"n\": null}";
    cfdb_jv *v = cfdb_jv_parse(doc, strlen(doc));
    assert_non_null(v);
    double d = 0;
    assert_true(cfdb_jv_path_number(v, "a.i", &d));
    assert_true(d == 12345678901.0);
    const cfdb_jv *b = cfdb_jv_path(v, "a.b");
    assert_non_null(b);
    assert_int_equal(b->count, 3);
    assert_true(cfdb_jv_number(b->items[1], &d));
    assert_true(d == 2500);
    assert_true(cfdb_jv_number(b->items[2], &d));
    assert_true(d == -3);
    assert_string_equal(cfdb_jv_path_string(v, "a.s"), "x");
    assert_null(cfdb_jv_path_string(v, "a.t"));          /* not a string */
    assert_false(cfdb_jv_path_number(v, "a.s", &d)); /* not a number */
    assert_false(cfdb_jv_path_number(v, "n", &d));
    assert_null(cfdb_jv_path(v, "a.b.c"));                /* through an array */
    assert_null(cfdb_jv_path(v, "a.zz"));
    assert_ptr_equal(cfdb_jv_path(v, ""), v);
    assert_false(cfdb_jv_number(NULL, &d));
    assert_null(cfdb_jv_string(NULL));
    cfdb_jv_free(v);
}

static void test_reader_files(void **state)
{
    (void)state;
    char path[] = "/tmp/cfdb-test-json-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* what the pretty writer wrote reads back */
    cfdb_json j;
    cfdb_json_init_pretty(&j);
    write_doc(&j);
    assert_int_equal(write(fd, j.buf, j.len), (ssize_t)j.len);
    close(fd);
    cfdb_json_free(&j);
    cfdb_jv *v = cfdb_jv_parse_file(path);
    assert_non_null(v);
    assert_string_equal(cfdb_jv_path_string(v, "s"), "a\"b\\c\nd\te\x01");
    assert_int_equal(cfdb_jv_get(v, "list")->count, 9);
    assert_int_equal(cfdb_jv_path(v, "o.k")->type, JSON_BOOL);
    cfdb_jv_free(v);
    /* not JSON, and no file */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"a\": ", f);
    fclose(f);
    assert_null(cfdb_jv_parse_file(path));
    unlink(path);
    assert_null(cfdb_jv_parse_file(path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_layout),
        cmocka_unit_test(test_pretty_layout),
        cmocka_unit_test(test_spirit_layout),
        cmocka_unit_test(test_reader_paths),
        cmocka_unit_test(test_reader_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
