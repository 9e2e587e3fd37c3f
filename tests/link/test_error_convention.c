/* One error convention above the system-call layer: runs check_error_convention.sh (no
 * `return -1;`, -errno, -E... or negated FoundationDB code in src/ outside src/net's
 * system-call files and the script's commented allow-list) and fails with its report.
 * A second run on a scratch tree holding one offending file checks that the script
 * does catch it, so a pattern that matches nothing cannot pass unnoticed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* Runs the script on `root`; returns its exit status, the report in out (truncated). */
static int run_check(const char *root, char *out, size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "sh %s %s 2>&1", CFDB_ERROR_CHECK_SCRIPT, root);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t used = 0;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        size_t n = strlen(line);
        if (used + n < cap) {
            memcpy(out + used, line, n);
            used += n;
        }
    }
    out[used] = 0;
    int status = pclose(p);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_source_tree_keeps_the_convention(void **state)
{
    (void)state;
    static char out[1 << 16];
    assert_int_equal(run_check(CFDB_SOURCE_DIR, out, sizeof out), 0);
    assert_non_null(strstr(out, "checked ")); /* it looked at the files */
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Each offending form in a file that is not allow-listed fails the check; the same file
 * with the code in a comment or a positive code passes. */
static void test_script_catches_each_form(void **state)
{
    (void)state;
    static const char *bad[] = {
        "int f(void) { return -1; }\n",
        "int f(void) { return -errno; }\n",
        "int f(void) { return -EINVAL; }\n",
        "int f(void) { return -CFDB_WIRE_SERIALIZATION_FAILED; }\n",
        "int f(void) { return -2104; }\n",
        "int f(int rc) { return rc == -EAGAIN; }\n",
        "#define INVALID (-2104)\n",
    };
    char root[] = "/tmp/cfdb-errconv-XXXXXX";
    assert_non_null(mkdtemp(root));
    char dir[256], file[300];
    snprintf(dir, sizeof dir, "%s/src", root);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(dir, sizeof dir, "%s/src/client", root);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/x.c", dir);
    static char out[1 << 16];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file(file, bad[i]);
        int rc = run_check(root, out, sizeof out);
        if (rc != 1)
            fail_msg("not caught: %s", bad[i]);
        assert_non_null(strstr(out, "src/client/x.c:1:"));
    }
    write_file(file, "int f(void) { return 4000; } /* not return -1; */\n");
    /* a positive code (and -1 inside a comment) passes; the allow-list is empty now that
     * every file is converted, so nothing else is reported either */
    assert_int_equal(run_check(root, out, sizeof out), 0);
    assert_null(strstr(out, "src/client/x.c:1:"));
    assert_null(strstr(out, "does not exist"));
    unlink(file);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/src", root);
    rmdir(dir);
    rmdir(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_tree_keeps_the_convention),
        cmocka_unit_test(test_script_catches_each_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
