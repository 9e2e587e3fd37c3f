/* Cluster file / connection string grammar (Part 4 §4.1), canonical form,
 * file location and atomic rewrite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "error_codes.h"
#include "cluster_file.h"

typedef struct {
    const char *in;
    const char *canonical; /* NULL: invalid */
} case_t;

static const case_t cases[] = {
    /* valid */
    { "asdf:2345@1.1.1.1:345", "asdf:2345@1.1.1.1:345" },
    { "0xxdeadbeef:100100100@1.1.1.1:34534,5.1.5.3:23443", "0xxdeadbeef:100100100@1.1.1.1:34534,5.1.5.3:23443" },
    { "#start of comment\n0xxdeadbeef:100100100@1.1.1.1:34534,5.1.5.3:23443\n# asdfasdf ##",
      "0xxdeadbeef:100100100@1.1.1.1:34534,5.1.5.3:23443" },
    { "  d e s c : i d @ 1.2.3.4 : 4500 \r\n", "desc:id@1.2.3.4:4500" },
    { "a_b:C9@1.2.3.4:4500:tls", "a_b:C9@1.2.3.4:4500:tls" },
    { "x:y@1.2.3.4:4500,1.2.3.4:4500:tls", "x:y@1.2.3.4:4500,1.2.3.4:4500:tls" }, /* TLS flag differs */
    { "x:y@1.2.3.4:4500,1.2.3.4:4501", "x:y@1.2.3.4:4500,1.2.3.4:4501" },
    { "0xxdeadbeef:100100100@[::1]:1234,[::1]:1235", "0xxdeadbeef:100100100@[::1]:1234,[::1]:1235" },
    { "0xxdeadbeef:100100100@[abcd:dcba::1]:1234,[abcd:dcba::abcd:1]:1234",
      "0xxdeadbeef:100100100@[abcd:dcba::1]:1234,[abcd:dcba::abcd:1]:1234" },
    { "x:y@[0:0:0:0:0:0:0:1]:4500:tls", "x:y@[::1]:4500:tls" },
    { "asdf:2345@localhost:1234", "asdf:2345@localhost:1234" },
    { "0xxdeadbeef:100100100@localhost:34534,host-name:23443", "0xxdeadbeef:100100100@localhost:34534,host-name:23443" },
    { "0xxdeadbeef:100100100@localhost:34534,host-name_part1.host-name_part2:1234:tls",
      "0xxdeadbeef:100100100@localhost:34534,host-name_part1.host-name_part2:1234:tls" },
    /* hostnames are listed after IPs */
    { "x:y@h.example:4500,10.0.0.1:4500", "x:y@10.0.0.1:4500,h.example:4500" },
    { "x:y@localhost:4500,localhost:4500:tls", "x:y@localhost:4500,localhost:4500:tls" },
    { "x:y@host.:4500", "x:y@host.:4500" },
    { "x:y@1.2.3.4:4500(fromHostname)", "x:y@1.2.3.4:4500(fromHostname)" },
    { ":@1.2.3.4:1", ":@1.2.3.4:1" }, /* empty description and id are accepted by libfdb_c */
    { "x:y@1.2.3.4:65536", "x:y@1.2.3.4:0" }, /* port stored as uint16 */
    { "x:y@[1.2.3.4]:5", "x:y@1.2.3.4:5" },
    /* invalid */
    { "asdf:2345@1.1.1.1:345,1.1.1.1:345", NULL }, /* duplicate */
    { "asdf:2345@localhost:1234,localhost:1234", NULL },
    { "x:y@1.2.3.4:4500:tls,1.2.3.4:4500:tls", NULL },
    { "", NULL },
    { "x:y", NULL },
    { "xy@1.2.3.4:4500", NULL },        /* no ':' in the key */
    { "x:y:z@1.2.3.4:4500", NULL },     /* ':' in the id */
    { "x-y:z@1.2.3.4:4500", NULL },     /* '-' in the description */
    { "x:y_z@1.2.3.4:4500", NULL },     /* '_' in the id */
    { "x:y@", NULL },                   /* no coordinator */
    { "x:y@1.2.3.4:4500,", NULL },      /* empty coordinator */
    { "x:y@,1.2.3.4:4500", NULL },
    { "x:y@1.2.3.4", NULL },            /* no port */
    { "x:y@1.2.3:4500", "x:y@1.2.3:4500" }, /* fewer than 4 digits: a hostname by the regex */
    { "x:y@1234:4500", NULL },
    { "x:y@1.2.3.4:45a", NULL },
    { "x:y@::1:4500", NULL },           /* IPv6 must be bracketed */
    { "x:y@[::1:4500", NULL },
    { "x:y@[::1]", NULL },
    { "x:y@[zz::1]:4500", NULL },
    { "x:y@host:tls", NULL },
    { "x:y@host..name:4500", NULL },
    { "x:y@.host:4500", NULL },
    { "x:y@1.2.3.4:4500@5.6.7.8:1", NULL },
    { "x:y@1.2.3.4:4500:tl", NULL },
};

static void test_grammar_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfdb_cluster_string cs;
        int rc = cfdb_cluster_string_parse(cases[i].in, strlen(cases[i].in), &cs);
        if (!cases[i].canonical) {
            if (rc != CFDB_ERR_CONNECTION_STRING_INVALID)
                fail_msg("case %zu '%s': expected invalid, got %d", i, cases[i].in, rc);
            continue;
        }
        if (rc != 0)
            fail_msg("case %zu '%s': expected valid, got %d", i, cases[i].in, rc);
        char *s = cfdb_cluster_string_format(&cs);
        if (strcmp(s, cases[i].canonical) != 0)
            fail_msg("case %zu: '%s' != '%s'", i, s, cases[i].canonical);
        /* canonical text parses to itself */
        cfdb_cluster_string again;
        assert_int_equal(cfdb_cluster_string_parse(s, strlen(s), &again), 0);
        assert_true(cfdb_cluster_string_equal(&cs, &again));
        cfdb_cluster_string copy;
        assert_int_equal(cfdb_cluster_string_copy(&copy, &cs), 0);
        assert_true(cfdb_cluster_string_equal(&cs, &copy));
        cfdb_cluster_string_free(&copy);
        cfdb_cluster_string_free(&again);
        free(s);
        cfdb_cluster_string_free(&cs);
    }
}

static void test_embedded_nul(void **state)
{
    (void)state;
    static const char in[] = "x:y@1.2.3.4:5\0xyz";
    cfdb_cluster_string cs;
    assert_int_equal(cfdb_cluster_string_parse(in, sizeof in - 1, &cs), CFDB_ERR_CONNECTION_STRING_INVALID);
    static const char in2[] = "x\0:y@1.2.3.4:5";
    assert_int_equal(cfdb_cluster_string_parse(in2, sizeof in2 - 1, &cs), CFDB_ERR_CONNECTION_STRING_INVALID);
}

static void test_fields(void **state)
{
    (void)state;
    const char *in = "desc_1:abc123@10.0.0.1:4500:tls,[::1]:4501,fdb.local:4502:tls";
    cfdb_cluster_string cs;
    assert_int_equal(cfdb_cluster_string_parse(in, strlen(in), &cs), 0);
    assert_string_equal(cs.key, "desc_1:abc123");
    assert_string_equal(cs.description, "desc_1");
    assert_string_equal(cs.id, "abc123");
    assert_int_equal(cs.count, 3);
    assert_int_equal(cs.n_ip, 2);
    assert_false(cs.coords[0].is_hostname);
    assert_int_equal(cs.coords[0].addr.ip.tag, 1);
    assert_int_equal(cs.coords[0].addr.ip.v4, 0x0A000001u);
    assert_int_equal(cs.coords[0].addr.port, 4500);
    assert_true(cs.coords[0].addr.flags & CFDB_ADDR_FLAG_TLS);
    assert_int_equal(cs.coords[1].addr.ip.tag, 2);
    assert_ptr_equal(cs.coords[1].addr.ip.v6.items, cs.coords[1].v6);
    assert_int_equal(cs.coords[1].v6[15], 1);
    assert_false(cs.coords[1].addr.flags & CFDB_ADDR_FLAG_TLS);
    assert_true(cs.coords[2].is_hostname);
    assert_string_equal(cs.coords[2].host, "fdb.local");
    assert_string_equal(cs.coords[2].service, "4502");
    assert_true(cs.coords[2].tls);
    cfdb_cluster_string_free(&cs);
}

static void test_file_io(void **state)
{
    (void)state;
    char dir[] = "/tmp/cfdb_cf_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/fdb.cluster", dir);

    cfdb_cluster_string cs;
    assert_int_equal(cfdb_cluster_file_read(path, &cs), CFDB_ERR_NO_CLUSTER_FILE_FOUND);

    FILE *f = fopen(path, "w");
    fputs("# comment\n test:abc@127.0.0.1:4500 # trailing\n", f);
    fclose(f);
    assert_int_equal(cfdb_cluster_file_read(path, &cs), 0);
    assert_string_equal(cs.key, "test:abc");
    assert_true(cfdb_cluster_file_up_to_date(path, &cs));

    char *contents = cfdb_cluster_file_contents(&cs);
    assert_string_equal(contents, "# DO NOT EDIT!\n# This file is auto-generated, it is not to be edited by hand\n"
                                  "test:abc@127.0.0.1:4500\n");
    free(contents);

    cfdb_cluster_string other;
    const char *n = "test:def@127.0.0.1:4500,127.0.0.2:4500";
    assert_int_equal(cfdb_cluster_string_parse(n, strlen(n), &other), 0);
    assert_false(cfdb_cluster_file_up_to_date(path, &other));
    assert_int_equal(cfdb_cluster_file_write(path, &other), 0);
    assert_true(cfdb_cluster_file_up_to_date(path, &other));
    cfdb_cluster_string back;
    assert_int_equal(cfdb_cluster_file_read(path, &back), 0);
    assert_true(cfdb_cluster_string_equal(&back, &other));
    cfdb_cluster_string_free(&back);

    /* invalid contents */
    f = fopen(path, "w");
    fputs("garbage\n", f);
    fclose(f);
    assert_int_equal(cfdb_cluster_file_read(path, &back), CFDB_ERR_CONNECTION_STRING_INVALID);
    assert_false(cfdb_cluster_file_up_to_date(path, &other));

    /* too large */
    f = fopen(path, "w");
    for (int i = 0; i < 60001; i++)
        fputc(' ', f);
    fclose(f);
    assert_int_equal(cfdb_cluster_file_read(path, &back), CFDB_ERR_FILE_TOO_LARGE);
    f = fopen(path, "w");
    fputs("a:b@1.2.3.4:5", f);
    for (int i = 13; i < 60000; i++)
        fputc(' ', f);
    fclose(f);
    assert_int_equal(cfdb_cluster_file_read(path, &back), 0); /* exactly 60000 is fine */
    cfdb_cluster_string_free(&back);

    /* location rules */
    bool is_default;
    char *p = cfdb_cluster_file_locate("/explicit/path", &is_default);
    assert_string_equal(p, "/explicit/path");
    assert_false(is_default);
    free(p);
    setenv("FDB_CLUSTER_FILE", "/from/env", 1);
    p = cfdb_cluster_file_locate(NULL, &is_default);
    assert_string_equal(p, "/from/env");
    assert_false(is_default);
    free(p);
    p = cfdb_cluster_file_locate("", &is_default);
    assert_string_equal(p, "/from/env");
    free(p);
    char *resolved;
    assert_int_equal(cfdb_cluster_file_open(NULL, &back, &resolved), CFDB_ERR_NO_CLUSTER_FILE_FOUND);
    assert_string_equal(resolved, "/from/env");
    free(resolved);
    unsetenv("FDB_CLUSTER_FILE");
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    p = cfdb_cluster_file_locate(NULL, &is_default);
    assert_string_equal(p, "fdb.cluster"); /* exists in the current directory */
    assert_true(is_default);
    free(p);
    unlink(path);
    p = cfdb_cluster_file_locate(NULL, &is_default);
    assert_string_equal(p, "/etc/foundationdb/fdb.cluster");
    assert_true(is_default);
    free(p);
    assert_int_equal(chdir(cwd), 0);
    rmdir(dir);
    cfdb_cluster_string_free(&cs);
    cfdb_cluster_string_free(&other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar_table),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_embedded_nul),
        cmocka_unit_test(test_file_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
