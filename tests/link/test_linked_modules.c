/* No module compiled but not shipped: runs check_linked_modules.sh (every object of the
 * libraries libcfdb.so is built from has a global symbol in libcfdb.so, or in cfdb-server /
 * cfdb-decode for the wire and common objects they share) and fails with its report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>

#include <cmocka.h>

static void test_every_object_is_linked(void **state)
{
    (void)state;
    FILE *p = popen(CFDB_LINK_CHECK_COMMAND " 2>&1", "r");
    assert_non_null(p);
    char line[512];
    int lines = 0;
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        lines++;
    }
    int status = pclose(p);
    assert_true(lines > 0); /* it reports at least how many objects it checked */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_object_is_linked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
