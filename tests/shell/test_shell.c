/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell (tools/shell) through --exec and a script on stdin, against a cfdb-server
 * this test starts. Expected texts are fdbcli 7.3.77's (fdbcli/fdbcli.actor.cpp) byte for
 * byte; writes are checked independently through fdb_c.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_helpers.h"
#include "shell_driver.h"

static const char *cf(void) { return g_env.server.cluster_file; }

static shell_run R;

static void run(const char *line)
{
    assert_int_equal(shell_exec_line(&R, cf(), line), 0);
}

/* The committed value of key (NULL: absent), read with fdb_c.h. */
static char *db_value(const char *key)
{
    static char buf[4096];
    int present = 0, len = 0;
    assert_int_equal(api_read_committed(key, (int)strlen(key), &present, buf, sizeof buf - 1, &len), 0);
    if (!present)
        return NULL;
    buf[len] = 0;
    return buf;
}

/* Replaces every "Committed (<digits>)" by "Committed (V)" so outputs can be compared. */
static void mask_versions(char *s)
{
    char *p = s;
    while ((p = strstr(p, "Committed (")) != NULL) {
        p += strlen("Committed (");
        char *q = p;
        while (*q >= '0' && *q <= '9')
            q++;
        assert_true(q > p);
        *p = 'V';
        memmove(p + 1, q, strlen(q) + 1);
    }
}

static void test_set_get_clear(void **state)
{
    (void)state;
    run("writemode on; set sg/a 1; get sg/a; get sg/none; clear sg/a; get sg/a");
    mask_versions(R.out);
    assert_string_equal(R.out, ">>> writemode on\n"
                               ">>> set sg/a 1\n"
                               "Committed (V)\n"
                               ">>> get sg/a\n"
                               "`sg/a' is `1'\n"
                               ">>> get sg/none\n"
                               "`sg/none': not found\n"
                               ">>> clear sg/a\n"
                               "Committed (V)\n"
                               ">>> get sg/a\n"
                               "`sg/a': not found\n");
    assert_string_equal(R.err, "");
    assert_int_equal(R.status, 0);
    assert_null(db_value("sg/a"));

    /* one command: no ">>>" echo */
    assert_int_equal(api_set_committed("sg/b", 4, "val", 3), 0);
    run("get sg/b");
    assert_string_equal(R.out, "`sg/b' is `val'\n");
    assert_int_equal(R.status, 0);
}

static void test_clearrange_getrange(void **state)
{
    (void)state;
    run("writemode on; set gr/a 1; set gr/b 2; set gr/c 3; set gr/d 4; set grz 5");
    assert_int_equal(R.status, 0);
    run("getrange gr/");
    assert_string_equal(R.out, "\nRange limited to 25 keys\n"
                               "`gr/a' is `1'\n`gr/b' is `2'\n`gr/c' is `3'\n`gr/d' is `4'\n\n");
    run("getrange gr/b gr/d");
    assert_string_equal(R.out, "\nRange limited to 25 keys\n`gr/b' is `2'\n`gr/c' is `3'\n\n");
    run("getrange gr/ gr0 2");
    assert_string_equal(R.out, "\nRange limited to 2 keys\n`gr/a' is `1'\n`gr/b' is `2'\n\n");
    run("getrangekeys gr/ gr0 3");
    assert_string_equal(R.out, "\nRange limited to 3 keys\n`gr/a'\n`gr/b'\n`gr/c'\n\n");
    /* cfdb's reverse forms: the last keys first */
    run("getrangereverse gr/ gr0 2");
    assert_string_equal(R.out, "\nRange limited to 2 keys\n`gr/d' is `4'\n`gr/c' is `3'\n\n");
    run("getrangekeysreverse gr/");
    assert_string_equal(R.out, "\nRange limited to 25 keys\n`gr/d'\n`gr/c'\n`gr/b'\n`gr/a'\n\n");
    /* limit: digits only, at most 9 of them; "" is 0 */
    run("getrange gr/ gr0 x1");
    assert_string_equal(R.err, "ERROR: bad limit\n");
    assert_int_equal(R.status, 1);
    run("getrange gr/ gr0 1234567890");
    assert_string_equal(R.err, "ERROR: bad limit\n");
    run("getrange gr/ gr0 \"\"");
    assert_string_equal(R.out, "\nRange limited to 0 keys\n\n");
    assert_int_equal(R.status, 0);
    /* begin at or past \xff\xff */
    run("getrange \\xff\\xff");
    assert_string_equal(R.err, "ERROR: Key outside legal range (2004)\n");
    assert_int_equal(R.status, 1);
    /* more than one page (the default row limit is 25, so ask for more) */
    run("writemode on; clearrange gr/b gr/d; getrangekeys gr/ gr0");
    mask_versions(R.out);
    assert_string_equal(R.out, ">>> writemode on\n>>> clearrange gr/b gr/d\nCommitted (V)\n"
                               ">>> getrangekeys gr/ gr0\n\nRange limited to 25 keys\n`gr/a'\n`gr/d'\n\n");
    assert_string_equal(db_value("grz"), "5");
    /* usage */
    run("getrange");
    assert_string_equal(R.out, "Usage: getrange <BEGINKEY> [ENDKEY] [LIMIT]\n");
    assert_int_equal(R.status, 1);
}

static void test_many_rows(void **state)
{
    (void)state;
    /* 300 rows of 1 kB: more than one reply's byte limit, so the shell reads page after page */
    static char value[1000];
    memset(value, 'v', sizeof value);
    FDBTransaction *tr = api_tr();
    for (int i = 0; i < 300; i++) {
        char key[16];
        snprintf(key, sizeof key, "mr/%03d", i);
        fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)value, (int)sizeof value);
    }
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    run("getrangekeys mr/ mr0 290");
    /* header + 290 lines + blank, every key once and in order */
    char want[8192] = "\nRange limited to 290 keys\n";
    for (int i = 0; i < 290; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "`mr/%03d'\n", i);
    strcat(want, "\n");
    assert_string_equal(R.out, want);
    run("getrangekeysreverse mr/ mr0 290");
    strcpy(want, "\nRange limited to 290 keys\n");
    for (int i = 299; i >= 10; i--)
        snprintf(want + strlen(want), sizeof want - strlen(want), "`mr/%03d'\n", i);
    strcat(want, "\n");
    assert_string_equal(R.out, want);
}

static void test_quoting_and_escapes(void **state)
{
    (void)state;
    run("writemode on; set \"q hello world\" \"a;b\"; set q\\ x\\\\y \\\"quoted\\\"; set q\\x00\\u0041 \\xff\\x20; "
        "set \"q\"empty \"\"");
    assert_int_equal(R.status, 0);
    mask_versions(R.out);
    /* the echo escapes spaces, backslashes and quotes (fdbcli's formatStringRef) */
    assert_string_equal(R.out, ">>> writemode on\n"
                               ">>> set q\\x20hello\\x20world a;b\n"
                               "Committed (V)\n"
                               ">>> set q\\x20x\\\\y \\\"quoted\\\"\n"
                               "Committed (V)\n"
                               ">>> set q\\x00A \\xff\\x20\n"
                               "Committed (V)\n"
                               ">>> set qempty \n"
                               "Committed (V)\n");
    assert_string_equal(db_value("q hello world"), "a;b");
    assert_string_equal(db_value("q x\\y"), "\"quoted\"");
    assert_string_equal(db_value("qempty"), "");
    int present = 0, len = 0;
    char buf[16];
    assert_int_equal(api_read_committed("q\0A", 3, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_int_equal(len, 2);
    assert_memory_equal(buf, "\xff ", 2);

    /* printable(): backslash doubled, non-printable bytes as \xNN, space as itself */
    run("get \"q x\\\\y\"; get q\\x00A; get \"q hello world\"");
    assert_string_equal(R.out, ">>> get q\\x20x\\\\y\n`q x\\\\y' is `\"quoted\"'\n"
                               ">>> get q\\x00A\n`q\\x00A' is `\\xff '\n"
                               ">>> get q\\x20hello\\x20world\n`q hello world' is `a;b'\n");

    /* malformed escapes: the message on stdout, then fdbcli's two lines on stderr */
    run("get q\\xzz");
    assert_string_equal(R.out, "ERROR: malformed escape sequence\n get\n");
    assert_string_equal(R.err, "ERROR: Command failed to completely parse.\n"
                               "ERROR: Not running partial or malformed command:");
    assert_int_equal(R.status, 1);
    run("get \\u0100");
    assert_string_equal(R.out, "ERROR: malformed escape sequence\n get\n");
    run("get a\\");
    assert_string_equal(R.out, "ERROR: malformed escape sequence\n get\n");
    run("get \\q");
    assert_int_equal(R.status, 1);
    /* unterminated quote */
    run("get \"q hello");
    assert_string_equal(R.out, "ERROR: unterminated quote\n get q\\x20hello\n");
    assert_int_equal(R.status, 1);
    /* commands before a malformed one still run */
    run("get qempty; get \\x1");
    assert_string_equal(R.out, "ERROR: malformed escape sequence\n>>> get qempty\n`qempty' is `'\n get\n");
    /* tabs separate tokens, a trailing ';' adds an empty command */
    run("get\tqempty;");
    assert_string_equal(R.out, ">>> get qempty\n`qempty' is `'\n");
}

static void test_writemode_off(void **state)
{
    (void)state;
    const char *lines[] = {"set wm/a 1", "clear wm/a", "clearrange wm/a wm/b", "set wm/a"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        run(lines[i]);
        assert_string_equal(R.out, "");
        assert_string_equal(R.err, "ERROR: writemode must be enabled to set or clear keys in the database.\n");
        assert_int_equal(R.status, 1);
    }
    assert_null(db_value("wm/a"));
    run("writemode on; writemode off; set wm/a 1; get wm/a");
    assert_string_equal(R.out, ">>> writemode on\n>>> writemode off\n>>> set wm/a 1\n"
                               "WARNING: the previous command failed, the remaining commands will not be executed.\n");
    assert_int_equal(R.status, 1);
    assert_null(db_value("wm/a"));
    run("writemode maybe");
    assert_string_equal(R.out, "Usage: writemode <on|off>\n");
    assert_int_equal(R.status, 1);
}

static void test_transactions(void **state)
{
    (void)state;
    run("writemode on; begin; set tx/a 1; set tx/b 2; get tx/a; getrangekeys tx/; commit; get tx/b");
    mask_versions(R.out);
    assert_string_equal(R.out, ">>> writemode on\n>>> begin\nTransaction started\n>>> set tx/a 1\n>>> set tx/b 2\n"
                               ">>> get tx/a\n`tx/a' is `1'\n"
                               ">>> getrangekeys tx/\n\nRange limited to 25 keys\n`tx/a'\n`tx/b'\n\n"
                               ">>> commit\nCommitted (V)\n>>> get tx/b\n`tx/b' is `2'\n");
    assert_int_equal(R.status, 0);
    assert_string_equal(db_value("tx/a"), "1");

    /* nothing is written before commit: rollback and reset discard */
    run("writemode on; begin; set tx/c 3; rollback; get tx/c; begin; set tx/d 4; reset; commit");
    assert_string_equal(R.out, ">>> writemode on\n>>> begin\nTransaction started\n>>> set tx/c 3\n"
                               ">>> rollback\nTransaction rolled back\n>>> get tx/c\n`tx/c': not found\n"
                               ">>> begin\nTransaction started\n>>> set tx/d 4\n>>> reset\nTransaction reset\n"
                               ">>> commit\nNothing to commit\n");
    assert_null(db_value("tx/c"));
    assert_null(db_value("tx/d"));

    /* state errors */
    run("commit");
    assert_string_equal(R.err, "ERROR: No active transaction\n");
    assert_int_equal(R.status, 1);
    run("rollback");
    assert_string_equal(R.err, "ERROR: No active transaction\n");
    run("begin; begin");
    assert_string_equal(R.err, "ERROR: Already in transaction\n");
    assert_int_equal(R.status, 1);

    /* an error inside a transaction rolls it back */
    run("writemode on; begin; set tx/e 5; getrange \\xff\\xff\\xff; commit");
    assert_string_equal(R.out, ">>> writemode on\n>>> begin\nTransaction started\n>>> set tx/e 5\n"
                               ">>> getrange \\xff\\xff\\xff\nRolling back current transaction\n");
    assert_string_equal(R.err, "ERROR: Key outside legal range (2004)\n");
    assert_int_equal(R.status, 1);
    assert_null(db_value("tx/e"));

    /* the rolled-back transaction is gone for the next line too (a script on stdin) */
    const char *args[] = {"-C", cf(), "--no-status", NULL};
    assert_int_equal(shell_exec(&R, args, "writemode on\nbegin\nset tx/f 6\ngetrange \\xff\\xff\\xff\ncommit\n"
                                          "get tx/f\n", NULL), 0);
    assert_string_equal(R.err, "ERROR: Key outside legal range (2004)\nERROR: No active transaction\n");
    assert_non_null(strstr(R.out, "Rolling back current transaction\n`tx/f': not found\n"));
    assert_null(db_value("tx/f"));
}

static void test_getversion_and_status(void **state)
{
    (void)state;
    run("getversion");
    assert_int_equal(R.status, 0);
    char *end;
    long long v = strtoll(R.out, &end, 10);
    assert_true(v > 0);
    assert_string_equal(end, "\n");

    run("status minimal");
    assert_string_equal(R.out, "The database is available.\n");
    assert_int_equal(R.status, 0);
    run("status");
    assert_string_equal(R.out, "The database is available.\n");
    run("status json");
    assert_int_equal(R.status, 0);
    /* json_spirit's pretty print: sorted members, 4-space indent, " : " */
    assert_true(strncmp(R.out, "{\n    \"client\" : {\n        \"cluster_file\" : {\n"
                               "            \"up_to_date\" : true\n        },\n", 80) == 0);
    assert_non_null(strstr(R.out, "\n    \"cluster\" : {\n"));
    assert_non_null(strstr(R.out, "\"available\" : true,\n"));
    assert_string_equal(R.out + R.out_len - 3, "\n}\n");
    run("status bogus");
    assert_string_equal(R.out, "Usage: status [minimal|details|json]\n");
    assert_int_equal(R.status, 1);
}

static void test_options(void **state)
{
    (void)state;
    run("option on TIMEOUT 5000; option on READ_YOUR_WRITES_DISABLE; option");
    assert_string_equal(R.out, ">>> option on TIMEOUT 5000\nOption enabled for all transactions\n"
                               ">>> option on READ_YOUR_WRITES_DISABLE\nOption enabled for all transactions\n"
                               ">>> option\n\nCurrently enabled options:\n\n"
                               "READ_YOUR_WRITES_DISABLE\nTIMEOUT: `\\x88\\x13\\x00\\x00\\x00\\x00\\x00\\x00'\n\n");
    assert_int_equal(R.status, 0);
    run("option");
    assert_string_equal(R.err, "There are no options enabled\n");
    assert_int_equal(R.status, 0);
    run("option on NO_SUCH_OPTION");
    assert_string_equal(R.err, "ERROR: invalid option 'NO_SUCH_OPTION'. Try `help options' for a list of "
                               "available options.\n");
    assert_int_equal(R.status, 1);
    run("option on TIMEOUT");
    assert_string_equal(R.err, "ERROR: option expected a parameter\n");
    run("option on READ_YOUR_WRITES_DISABLE 1");
    assert_string_equal(R.err, "ERROR: option did not expect a parameter\n");
    run("option on TIMEOUT 12x");
    assert_string_equal(R.err, "ERROR: could not parse value `12x' as an integer\n");
    run("option maybe TIMEOUT");
    assert_string_equal(R.err, "ERROR: Invalid option state `maybe': option must be turned `on' or `off'\n");
    run("begin; option off TIMEOUT");
    assert_string_equal(R.err, "ERROR: Cannot turn option off when using a transaction created with `begin'\n");
    run("option off TIMEOUT 1");
    assert_string_equal(R.err, "ERROR: Cannot specify option argument when turning option off\n");
    /* options take effect: an integer one (8 bytes little-endian) ... */
    run("writemode on; option on SIZE_LIMIT 40; set opt/k 0123456789012345678901234567890123456789");
    assert_string_equal(R.err, "ERROR: Transaction exceeds byte limit (2101)\n");
    assert_int_equal(R.status, 1);
    assert_null(db_value("opt/k"));
    /* ... and one without a value, in a transaction */
    assert_int_equal(api_set_committed("opt/r", 5, "old", 3), 0);
    run("writemode on; begin; option on READ_YOUR_WRITES_DISABLE; set opt/r new; get opt/r; rollback");
    assert_non_null(strstr(R.out, ">>> get opt/r\n`opt/r' is `old'\n"));
    run("writemode on; begin; set opt/r new; get opt/r; rollback");
    assert_non_null(strstr(R.out, ">>> get opt/r\n`opt/r' is `new'\n"));
    /* in a transaction: applies to it only */
    run("begin; option on TIMEOUT 1000; commit; option");
    assert_non_null(strstr(R.out, ">>> option on TIMEOUT 1000\nOption enabled for current transaction\n"));
    assert_string_equal(R.err, "There are no options enabled\n");
}

static void test_errors_and_exit_codes(void **state)
{
    (void)state;
    run("frobnicate");
    assert_string_equal(R.err, "ERROR: Unknown command `frobnicate'. Try `help'?\n");
    assert_int_equal(R.status, 1);
    run("get a b");
    assert_string_equal(R.out, "Usage: get <KEY>\n");
    assert_int_equal(R.status, 1);
    run("get");
    assert_int_equal(R.status, 1);
    run("getversion x");
    assert_string_equal(R.out, "Usage: getversion\n");
    run("bogus; get a");
    assert_string_equal(R.out, ">>> bogus\n"
                               "WARNING: the previous command failed, the remaining commands will not be executed.\n");
    run("exit; frobnicate");
    assert_string_equal(R.out, ">>> exit\n");
    assert_int_equal(R.status, 0);
    run("sleep 0.01");
    assert_int_equal(R.status, 0);
    run("sleep abc");
    assert_string_equal(R.out, "Usage: sleep <SECONDS>\n");
    assert_int_equal(R.status, 1);
    run("help get");
    assert_true(strncmp(R.out, "\nget <KEY>\n\nFetch the value for a given key.\n", 44) == 0);
    run("help nosuch");
    assert_string_equal(R.out, "I don't know anything about `nosuch'\n");
    run("help");
    assert_true(strncmp(R.out, "\nList of commands:\n\n begin:\n      begin a new transaction\n", 55) == 0);
    assert_null(strstr(R.out, " quit:"));

    /* a cluster file that does not exist */
    const char *args[] = {"-C", "/nonexistent/fdb.cluster", "--exec", "get a", NULL};
    assert_int_equal(shell_exec(&R, args, NULL, NULL), 0);
    assert_string_equal(R.err, "Unable to read cluster file `/nonexistent/fdb.cluster': 1515 No cluster file found "
                               "in current directory or default location\n");
    assert_int_equal(R.status, 1);
    /* a cluster file that is not a connection string: fdbcli's message, nothing on stdout */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/bad.cluster", g_env.server.dir);
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("not a connection string\n", f);
    fclose(f);
    const char *args1[] = {"-C", bad, NULL};
    assert_int_equal(shell_exec(&R, args1, "get a\n", NULL), 0);
    char want[512];
    snprintf(want, sizeof want, "Invalid cluster file `%s': 2104 Connection string invalid\n", bad);
    assert_string_equal(R.err, want);
    assert_string_equal(R.out, "");
    assert_int_equal(R.status, 1);
    unlink(bad);
    /* --timeout needs --exec; bad arguments */
    const char *args2[] = {"-C", cf(), "--timeout", "3", NULL};
    assert_int_equal(shell_exec(&R, args2, NULL, NULL), 0);
    assert_string_equal(R.err, "ERROR: --timeout may only be specified with --exec\n");
    assert_int_equal(R.status, 1);
    const char *args3[] = {"--bogus", NULL};
    assert_int_equal(shell_exec(&R, args3, NULL, NULL), 0);
    assert_int_equal(R.status, 1);
}

static void test_timeout(void **state)
{
    (void)state;
    const char *args[] = {"-C", cf(), "--timeout", "1", "--exec", "watch to/never", NULL};
    assert_int_equal(shell_exec(&R, args, NULL, NULL), 0);
    assert_string_equal(R.err, "Specified timeout reached -- exiting...\n");
    assert_int_equal(R.status, 1);
}

static void test_watch(void **state)
{
    (void)state;
    assert_int_equal(api_set_committed("wa/k", 4, "old", 3), 0);
    /* the shell blocks in the watch; change the key until it reports (the watch may be
     * set after our first write) */
    int in[2];
    assert_int_equal(pipe(in), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(in[0]);
        shell_run r;
        int rc = shell_exec_line(&r, cf(), "watch wa/k");
        dprintf(in[1], "%d|%d|%s|%s", rc, r.status, r.out, r.err);
        _exit(0);
    }
    close(in[1]);
    char got[4096] = "";
    size_t n = 0;
    for (int i = 0; i < 200; i++) {
        char val[16];
        snprintf(val, sizeof val, "new%d", i);
        assert_int_equal(api_set_committed("wa/k", 4, val, (int)strlen(val)), 0);
        struct pollfd fd = {in[0], POLLIN, 0};
        if (poll(&fd, 1, 100) > 0)
            break;
    }
    ssize_t k;
    while ((k = read(in[0], got + n, sizeof got - 1 - n)) > 0)
        n += (size_t)k;
    got[n] = 0;
    close(in[0]);
    waitpid(pid, NULL, 0);
    assert_true(strncmp(got, "0|0|`wa/k' is `new", 18) == 0);
    assert_string_equal(got + n - 3, "'\n|");
}

static void test_tuple_mode(void **state)
{
    (void)state;
    /* ("tm", 1) -> (b"v",) and a key that is not a tuple */
    run("writemode on; set \\x02tm\\x00\\x15\\x01 \\x01v\\x00; set \\x02tm\\x00\\x15\\x02 raw\\xff");
    assert_int_equal(R.status, 0);
    const char *args[] = {"-C", cf(), "--tuple", "--exec", "getrange \\x02tm\\x00", NULL};
    assert_int_equal(shell_exec(&R, args, NULL, NULL), 0);
    assert_string_equal(R.out, "\nRange limited to 25 keys\n"
                               "`('tm', 1)' is `(b'v',)'\n"
                               "`('tm', 2)' is `raw\\xff'\n\n");
    run("getrange \\x02tm\\x00");
    assert_string_equal(R.out, "\nRange limited to 25 keys\n"
                               "`\\x02tm\\x00\\x15\\x01' is `\\x01v\\x00'\n"
                               "`\\x02tm\\x00\\x15\\x02' is `raw\\xff'\n\n");
}

static void test_stdin_script(void **state)
{
    (void)state;
    const char *args[] = {"-C", cf(), "--no-status", NULL};
    assert_int_equal(shell_exec(&R, args, "writemode on\nset sc/a 1\n\nget sc/a\nexit\nget sc/a\n", NULL), 0);
    mask_versions(R.out);
    char want[512];
    snprintf(want, sizeof want,
             "Using cluster file `%s'.\n\nWelcome to the fdbcli. For help, type `help'.\n"
             "Committed (V)\n`sc/a' is `1'\n",
             cf());
    assert_string_equal(R.out, want);
    assert_int_equal(R.status, 0);

    /* the initial status check; end of input prints a newline; a failed command: exit 1 */
    const char *args2[] = {"-C", cf(), NULL};
    assert_int_equal(shell_exec(&R, args2, "get sc/a\nnosuchcommand\nget sc/a\n", NULL), 0);
    snprintf(want, sizeof want,
             "Using cluster file `%s'.\n\nThe database is available.\n\nWelcome to the fdbcli. For help, type "
             "`help'.\n`sc/a' is `1'\n`sc/a' is `1'\n\n",
             cf());
    assert_string_equal(R.out, want);
    assert_string_equal(R.err, "ERROR: Unknown command `nosuchcommand'. Try `help'?\n");
    assert_int_equal(R.status, 1);

    /* FDB_CLUSTER_FILE is used without -C */
    setenv("FDB_CLUSTER_FILE", cf(), 1);
    const char *args3[] = {"--exec", "get sc/a", NULL};
    assert_int_equal(shell_exec(&R, args3, NULL, NULL), 0);
    unsetenv("FDB_CLUSTER_FILE");
    assert_string_equal(R.out, "`sc/a' is `1'\n");
    assert_int_equal(R.status, 0);
}

static int setup(void **state)
{
    (void)state;
    return api_env_setup(NULL);
}

static int teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_get_clear),
        cmocka_unit_test(test_clearrange_getrange),
        cmocka_unit_test(test_many_rows),
        cmocka_unit_test(test_quoting_and_escapes),
        cmocka_unit_test(test_writemode_off),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_getversion_and_status),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_errors_and_exit_codes),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_tuple_mode),
        cmocka_unit_test(test_stdin_script),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
