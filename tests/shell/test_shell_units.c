/* SPDX-License-Identifier: Apache-2.0 */
/* Units of the cfdb shell that --exec cannot reach with every input: the lexer's fdbcli
 * quirks (tools/shell/lexer.c) and the json_spirit-style pretty printer (json.c) on
 * escapes, reals, repeated names, empty containers and malformed or too deep input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "lexer.h"

static void expect_tokens(const shell_command *c, const char *const *want, const size_t *lens, size_t n)
{
    assert_int_equal(c->count, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(c->tokens[i].n, lens[i]);
        assert_memory_equal(c->tokens[i].p, want[i], lens[i]);
    }
}

static void test_lexer(void **state)
{
    (void)state;
    shell_parsed p;
    const char *line = "  set \"b c\"d\\;e x\\x41\\u0042\"\"; get \"\" ;\ttab\tsep ";
    assert_int_equal(shell_lexer_parse(line, strlen(line), &p), 0);
    assert_false(p.malformed);
    assert_false(p.partial);
    assert_int_equal(p.count, 3);
    const char *c0[] = {"set", "b cd;e", "xAB"};
    const size_t l0[] = {3, 6, 3};
    expect_tokens(&p.commands[0], c0, l0, 3);
    const char *c1[] = {"get", ""};
    const size_t l1[] = {3, 0};
    expect_tokens(&p.commands[1], c1, l1, 2);
    const char *c2[] = {"tab", "sep"};
    const size_t l2[] = {3, 3};
    expect_tokens(&p.commands[2], c2, l2, 2);
    shell_lexer_free(&p);

    /* \xNN is read by strtoul: a sign or a leading space is accepted as fdbcli accepts it;
     * \x00 gives a NUL byte inside the token */
    line = "\\x-1 \\x 9 a\\x00b";
    assert_int_equal(shell_lexer_parse(line, strlen(line), &p), 0);
    const char *c3[] = {"\xff", "\x09", "a\0b"};
    const size_t l3[] = {1, 1, 3};
    expect_tokens(&p.commands[0], c3, l3, 3);
    shell_lexer_free(&p);

    /* malformed: parsing stops, the finished tokens of the command stay */
    line = "get a; set k \\xg1 v";
    assert_int_equal(shell_lexer_parse(line, strlen(line), &p), 0);
    assert_true(p.malformed);
    assert_int_equal(p.count, 2);
    const char *c4[] = {"set", "k"};
    const size_t l4[] = {3, 1};
    expect_tokens(&p.commands[1], c4, l4, 2);
    shell_lexer_free(&p);
    const char *bad[] = {"a\\", "\\x1", "\\u00", "\\u0100", "\\q", "\\u00zz"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(shell_lexer_parse(bad[i], strlen(bad[i]), &p), 0);
        assert_true(p.malformed);
        shell_lexer_free(&p);
    }
    /* an open quote is partial; quoted ; and spaces are kept */
    line = "get \"a; b";
    assert_int_equal(shell_lexer_parse(line, strlen(line), &p), 0);
    assert_true(p.partial);
    assert_int_equal(p.count, 1);
    const char *c5[] = {"get", "a; b"};
    const size_t l5[] = {3, 4};
    expect_tokens(&p.commands[0], c5, l5, 2);
    shell_lexer_free(&p);
}

static char *pretty(const char *in)
{
    cfdb_jv *j = cfdb_jv_parse(in, strlen(in));
    if (!j)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    shell_json_pretty(f, j);
    fclose(f);
    cfdb_jv_free(j);
    return buf;
}

static void test_json_pretty(void **state)
{
    (void)state;
    char *s = pretty("{\"b\":[1,2.5,{}],\"a\":\"x\",\"a\":true,\"c\":[],\"d\":null,\"e\":-3,\"f\":0.1,"
                     "\"g\":18446744073709551615,\"h\":1e3}");
    assert_non_null(s);
    assert_string_equal(s, "{\n"
                           "    \"a\" : true,\n"
                           "    \"b\" : [\n"
                           "        1,\n"
                           "        2.5,\n"
                           "        {\n"
                           "        }\n"
                           "    ],\n"
                           "    \"c\" : [\n"
                           "    ],\n"
                           "    \"d\" : null,\n"
                           "    \"e\" : -3,\n"
                           "    \"f\" : 0.10000000000000001,\n"
                           "    \"g\" : 18446744073709551615,\n"
                           "    \"h\" : 1000\n"
                           "}");
    free(s);
    s = pretty("{\"s\":\"q\\\"b\\\\n\\n\\t\\u00e9\\u0001/\\/\xc3\xa9\"}");
    assert_non_null(s);
    assert_string_equal(s, "{\n    \"s\" : \"q\\\"b\\\\n\\n\\t\\u00E9\\u0001//\\u00C3\\u00A9\"\n}");
    free(s);
    s = pretty("[]");
    assert_string_equal(s, "[\n]");
    free(s);

    const char *bad[] = {"", "{", "{\"a\" 1}", "[1,]", "[1 2]", "\"abc", "{\"a\":tru}", "[1] x", "\"\\x\"",
                         "\"a\nb\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(pretty(bad[i]));
    /* nesting is bounded */
    char deep[2 * CFDB_JV_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < CFDB_JV_MAX_DEPTH + 1; i++)
        deep[n++] = '[';
    for (int i = 0; i < CFDB_JV_MAX_DEPTH + 1; i++)
        deep[n++] = ']';
    deep[n] = 0;
    assert_null(pretty(deep));
    deep[n - 1] = 0;
    assert_non_null(s = pretty(deep + 1));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lexer),
        cmocka_unit_test(test_json_pretty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
