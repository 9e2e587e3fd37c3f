/* Each shared library exports what its installed headers declare and nothing else: runs
 * check_exports.sh (nm -D --defined-only against the fdb_ and cfdb_ names the headers
 * declare) on libcfdb.so, libcfdb_layers.so and libcfdb_records.so, and once on purpose
 * against the wrong headers to see that the check does fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

/* Runs the check on lib with headers; returns its exit status, *extra_lines the number of
 * lines naming an extra symbol (indented by two spaces). */
static int run_check(const char *lib, const char *headers, int *extra_lines)
{
    char cmd[8192];
    int n = snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", CFDB_EXPORTS_SCRIPT, lib, headers);
    assert_true(n > 0 && (size_t)n < sizeof cmd);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[512];
    int lines = 0;
    *extra_lines = 0;
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        lines++;
        if (strncmp(line, "  ", 2) == 0)
            (*extra_lines)++;
    }
    int status = pclose(p);
    assert_true(lines > 0); /* it reports at least how many symbols it checked */
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_libfdb_c_exports_only_fdb_c_h(void **state)
{
    (void)state;
    int extra;
    assert_int_equal(run_check(CFDB_LIB_FDB_C, CFDB_HEADERS_FDB_C, &extra), 0);
    assert_int_equal(extra, 0);
}

static void test_layers_export_only_their_headers(void **state)
{
    (void)state;
    int extra;
    assert_int_equal(run_check(CFDB_LIB_LAYERS, CFDB_HEADERS_LAYERS, &extra), 0);
    assert_int_equal(extra, 0);
}

static void test_records_export_only_their_headers(void **state)
{
    (void)state;
    int extra;
    assert_int_equal(run_check(CFDB_LIB_RECORDS, CFDB_HEADERS_RECORDS, &extra), 0);
    assert_int_equal(extra, 0);
}

/* The check itself: libcfdb_layers.so measured against the Record Layer's headers exports
 * nothing they declare (cfdb_tuple_pack among them), and against fdb_c.h likewise. */
static void test_check_fails_on_undeclared_exports(void **state)
{
    (void)state;
    int extra;
    assert_int_equal(run_check(CFDB_LIB_LAYERS, CFDB_HEADERS_RECORDS, &extra), 1);
    assert_true(extra > 0);
    assert_int_equal(run_check(CFDB_LIB_RECORDS, CFDB_HEADERS_FDB_C, &extra), 1);
    assert_true(extra > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libfdb_c_exports_only_fdb_c_h),
        cmocka_unit_test(test_layers_export_only_their_headers),
        cmocka_unit_test(test_records_export_only_their_headers),
        cmocka_unit_test(test_check_fails_on_undeclared_exports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
