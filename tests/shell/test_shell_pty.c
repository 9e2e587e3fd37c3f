/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell interactively, on a pseudo-terminal (forkpty): typed commands, the
 * history (up arrow, and ~/.cfdb_history across sessions), tab completion of a command
 * name and of an option name, against a cfdb-server this test starts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_helpers.h"
#include "shell_driver.h"

static char g_home[256];

static void read_history_file(char *buf, size_t cap)
{
    char path[300];
    snprintf(path, sizeof path, "%s/.cfdb_history", g_home);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

static void test_interactive_session(void **state)
{
    (void)state;
    const char *args[] = {"-C", g_env.server.cluster_file, NULL};
    shell_pty p;
    assert_int_equal(shell_pty_start(&p, args, g_home), 0);
    assert_int_equal(shell_pty_expect(&p, "The database is available."), 0);
    assert_int_equal(shell_pty_expect(&p, "Welcome to the fdbcli. For help, type `help'."), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);

    assert_int_equal(shell_pty_send(&p, "writemode on\r"), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);
    assert_int_equal(shell_pty_send(&p, "set pty/k \"hello world\"\r"), 0);
    assert_int_equal(shell_pty_expect(&p, "Committed ("), 0);
    assert_int_equal(shell_pty_send(&p, "get pty/k\r"), 0);
    assert_int_equal(shell_pty_expect(&p, "`pty/k' is `hello world'"), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);

    /* up arrow recalls "get pty/k": change the value first so the answer is new */
    assert_int_equal(api_set_committed("pty/k", 5, "second", 6), 0);
    assert_int_equal(shell_pty_send(&p, "\x1b[A"), 0);
    assert_int_equal(shell_pty_expect(&p, "get pty/k"), 0);
    assert_int_equal(shell_pty_send(&p, "\r"), 0);
    assert_int_equal(shell_pty_expect(&p, "`pty/k' is `second'"), 0);
    /* (libedit flushes what was typed before the prompt: always wait for it) */
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);

    /* two up arrows: the set line before it (a repeated line is kept once, as fdbcli's
     * linenoise keeps it) */
    assert_int_equal(shell_pty_send(&p, "\x1b[A\x1b[A\r"), 0);
    assert_int_equal(shell_pty_expect(&p, "Committed ("), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);

    /* tab completes a command name ("getvers" -> "getversion "): libedit draws the
     * completed tail after moving the cursor */
    assert_int_equal(shell_pty_send(&p, "getvers\t"), 0);
    assert_int_equal(shell_pty_expect(&p, "ion "), 0);
    assert_int_equal(shell_pty_send(&p, "\r"), 0);
    /* the read version: a line of digits after the command */
    assert_int_equal(shell_pty_expect(&p, "\r\n"), 0);
    size_t line_start = p.mark;
    assert_int_equal(shell_pty_expect(&p, "\r\n"), 0);
    assert_true(p.mark - 2 > line_start);
    for (size_t i = line_start; i < p.mark - 2; i++)
        assert_true(p.buf[i] >= '0' && p.buf[i] <= '9');
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);

    /* and an option name after "option on " */
    assert_int_equal(shell_pty_send(&p, "option on READ_YOUR_W\t"), 0);
    assert_int_equal(shell_pty_expect(&p, "RITES_DISABLE "), 0);
    assert_int_equal(shell_pty_send(&p, "\r"), 0);
    assert_int_equal(shell_pty_expect(&p, "Option enabled for all transactions"), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);

    /* an error keeps the session going */
    assert_int_equal(shell_pty_send(&p, "frobnicate\r"), 0);
    assert_int_equal(shell_pty_expect(&p, "ERROR: Unknown command `frobnicate'. Try `help'?"), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);
    assert_int_equal(shell_pty_send(&p, "exit\r"), 0);
    assert_int_equal(shell_pty_finish(&p), 0);

    /* the history file has the commands, not the writemode line (kept out, as fdbcli);
     * libedit's format writes a space as \040 */
    char hist[8192];
    read_history_file(hist, sizeof hist);
    assert_non_null(strstr(hist, "get\\040pty/k"));
    assert_non_null(strstr(hist, "getversion"));
    assert_null(strstr(hist, "writemode"));

    /* a new session recalls the last command of the previous one */
    assert_int_equal(shell_pty_start(&p, args, g_home), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);
    assert_int_equal(shell_pty_send(&p, "\x1b[A\x1b[A\r"), 0); /* exit, then frobnicate */
    assert_int_equal(shell_pty_expect(&p, "Unknown command `frobnicate'"), 0);
    assert_int_equal(shell_pty_expect(&p, "fdb> "), 0);
    /* end of input (^D on an empty line) ends the session with status 0 */
    assert_int_equal(shell_pty_send(&p, "\x04"), 0);
    assert_int_equal(shell_pty_finish(&p), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_home, sizeof g_home, "/tmp/cfdb-shell-pty-XXXXXX");
    if (!mkdtemp(g_home))
        return -1;
    return api_env_setup(NULL);
}

static int teardown(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/.cfdb_history", g_home);
    unlink(path);
    rmdir(g_home);
    return api_env_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interactive_session),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
