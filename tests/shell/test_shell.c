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
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
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

/* Runs a table of cases (shell_run_cases); a mismatch fails with what the shell printed. */
#define CASES(...)                                                                  \
    do {                                                                            \
        const shell_case cases_[] = { __VA_ARGS__ };                                \
        char why_[8192];                                                            \
        if (shell_run_cases(&R, cf(), cases_, sizeof cases_ / sizeof *cases_, why_, \
                            sizeof why_))                                           \
            fail_msg("%s", why_);                                                   \
    } while (0)
/* line, stdout, stderr (NULL: any), exit status (-1: any) */
#define C(l, o, e, st) { .line = (l), .out = (o), .err = (e), .status = (st) }
/* the same with "Committed (<version>)" masked as "Committed (V)" */
#define CM(l, o, e, st) { .line = (l), .out = (o), .err = (e), .status = (st), .mask = true }

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

static void test_set_get_clear(void **state)
{
    (void)state;
    CASES(CM("writemode on; set sg/a 1; get sg/a; get sg/none; clear sg/a; get sg/a",
             ">>> writemode on\n"
             ">>> set sg/a 1\n"
             "Committed (V)\n"
             ">>> get sg/a\n"
             "`sg/a' is `1'\n"
             ">>> get sg/none\n"
             "`sg/none': not found\n"
             ">>> clear sg/a\n"
             "Committed (V)\n"
             ">>> get sg/a\n"
             "`sg/a': not found\n",
             "", 0));
    assert_null(db_value("sg/a"));
    /* one command: no ">>>" echo */
    assert_int_equal(api_set_committed("sg/b", 4, "val", 3), 0);
    CASES(C("get sg/b", "`sg/b' is `val'\n", NULL, 0));
}

static void test_clearrange_getrange(void **state)
{
    (void)state;
    CASES(C("writemode on; set gr/a 1; set gr/b 2; set gr/c 3; set gr/d 4; set grz 5", NULL, NULL, 0),
          C("getrange gr/", "\nRange limited to 25 keys\n`gr/a' is `1'\n`gr/b' is `2'\n`gr/c' is `3'\n`gr/d' is `4'\n\n",
            NULL, -1),
          C("getrange gr/b gr/d", "\nRange limited to 25 keys\n`gr/b' is `2'\n`gr/c' is `3'\n\n", NULL, -1),
          C("getrange gr/ gr0 2", "\nRange limited to 2 keys\n`gr/a' is `1'\n`gr/b' is `2'\n\n", NULL, -1),
          C("getrangekeys gr/ gr0 3", "\nRange limited to 3 keys\n`gr/a'\n`gr/b'\n`gr/c'\n\n", NULL, -1),
          /* cfdb's reverse forms: the last keys first */
          C("getrangereverse gr/ gr0 2", "\nRange limited to 2 keys\n`gr/d' is `4'\n`gr/c' is `3'\n\n", NULL, -1),
          C("getrangekeysreverse gr/", "\nRange limited to 25 keys\n`gr/d'\n`gr/c'\n`gr/b'\n`gr/a'\n\n", NULL, -1),
          /* limit: digits only, at most 9 of them; "" is 0 */
          C("getrange gr/ gr0 x1", NULL, "ERROR: bad limit\n", 1),
          C("getrange gr/ gr0 1234567890", NULL, "ERROR: bad limit\n", -1),
          C("getrange gr/ gr0 \"\"", "\nRange limited to 0 keys\n\n", NULL, 0),
          /* begin at or past \xff\xff */
          C("getrange \\xff\\xff", NULL, "ERROR: Key outside legal range (2004)\n", 1),
          /* more than one page (the default row limit is 25, so ask for more) */
          CM("writemode on; clearrange gr/b gr/d; getrangekeys gr/ gr0",
             ">>> writemode on\n>>> clearrange gr/b gr/d\nCommitted (V)\n"
             ">>> getrangekeys gr/ gr0\n\nRange limited to 25 keys\n`gr/a'\n`gr/d'\n\n",
             NULL, -1),
          /* usage */
          C("getrange", "Usage: getrange <BEGINKEY> [ENDKEY] [LIMIT]\n", NULL, 1));
    assert_string_equal(db_value("grz"), "5");
}

/* fdbcli's checks before it reads or clears a range: a KeyRangeRef refuses begin > end
 * with 2005 (on stderr, exit 1), after the limit is parsed and after writemode; in a
 * transaction the error rolls it back. Equal keys are an empty range. */
static void test_inverted_ranges(void **state)
{
    (void)state;
    assert_int_equal(api_set_committed("ir/p0", 5, "0", 1), 0);
    assert_int_equal(api_set_committed("ir/p1", 5, "1", 1), 0);
    const char *inv = "ERROR: Range begin key larger than end key (2005)\n";
    CASES(C("getrange ir/p1 ir/p0", "", inv, 1),
          C("getrangekeys ir/p1 ir/p0 5", "", inv, 1),
          C("getrangereverse ir/p1 ir/p0", "", inv, 1),
          C("getrangekeysreverse ir/p1 ir/p0 1", "", inv, 1),
          C("getrange ir/p1 ir/p1", "\nRange limited to 25 keys\n\n", "", 0),
          C("getrange ir/p1 ir/p0 x", "", "ERROR: bad limit\n", 1),
          C("getrange ir/p1 ir/p0 1 2", "Usage: getrange <BEGINKEY> [ENDKEY] [LIMIT]\n", "", 1),
          /* one key: the range of keys starting with it */
          C("getrangekeys ir/p1", "\nRange limited to 25 keys\n`ir/p1'\n\n", "", 0),
          C("clearrange ir/p1 ir/p0", "", "ERROR: writemode must be enabled to set or clear keys in the database.\n", 1),
          C("writemode on; clearrange ir/p1 ir/p0; get ir/p0", ">>> writemode on\n>>> clearrange ir/p1 ir/p0\n", inv, 1),
          C("begin; getrange ir/p1 ir/p0; get ir/p0",
            ">>> begin\nTransaction started\n>>> getrange ir/p1 ir/p0\nRolling back current transaction\n", inv, 1),
          C("writemode on; begin; clear ir/p1; clearrange ir/p1 ir/p0; commit",
            ">>> writemode on\n>>> begin\nTransaction started\n>>> clear ir/p1\n>>> clearrange ir/p1 ir/p0\n"
            "Rolling back current transaction\n",
            inv, 1));
    /* the same from a script on stdin: the failed line ends the script's status as 1 */
    const char *args[] = {"-C", cf(), "--no-status", NULL};
    assert_int_equal(shell_exec(&R, args, "getrange ir/p1 ir/p0\nget ir/p1\n", NULL), 0);
    assert_string_equal(R.err, inv);
    assert_non_null(strstr(R.out, "`ir/p1' is `1'\n"));
    assert_int_equal(R.status, 1);
    assert_string_equal(db_value("ir/p0"), "0");
    assert_string_equal(db_value("ir/p1"), "1");
}

/* A script line with a NUL byte: fdbcli runs the part before it (`clear victim' of
 * `clear victim<NUL>-not-this-key'); cfdb refuses the whole line. A zero byte written as
 * \x00 is a key byte. */
static void test_nul_in_script(void **state)
{
    (void)state;
    assert_int_equal(api_set_committed("nul/victim", 10, "v", 1), 0);
    assert_int_equal(api_set_committed("nul/victim\0-not-this-key", 24, "w", 1), 0);
    static const char script[] = "writemode on\nclear nul/victim\0-not-this-key\nget nul/victim\n";
    const char *args[] = {"-C", cf(), "--no-status", NULL};
    assert_int_equal(shell_exec_bytes(&R, args, script, sizeof script - 1, NULL), 0);
    assert_string_equal(R.err, "ERROR: the line contains a NUL byte and was not run (write a zero byte in a key "
                               "or value as \\x00)\n");
    assert_non_null(strstr(R.out, "Welcome to the fdbcli. For help, type `help'.\n`nul/victim' is `v'\n"));
    assert_null(strstr(R.out, "Committed"));
    assert_int_equal(R.status, 1);
    assert_string_equal(db_value("nul/victim"), "v");
    int present = 0, len = 0;
    char buf[8];
    assert_int_equal(api_read_committed("nul/victim\0-not-this-key", 24, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    /* the escaped form clears the key with the zero byte, and only it */
    static const char escaped[] = "writemode on\nclear nul/victim\\x00-not-this-key\n";
    assert_int_equal(shell_exec(&R, args, escaped, NULL), 0);
    assert_int_equal(R.status, 0);
    assert_int_equal(api_read_committed("nul/victim\0-not-this-key", 24, &present, buf, sizeof buf, &len), 0);
    assert_false(present);
    assert_string_equal(db_value("nul/victim"), "v");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of the children reaped so far (the shell runs), user + system */
static double children_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* sleep's argument: flow's delay() waits forever from 4e12 s on (1e400 parses as inf),
 * NaN is refused, zero and negative return at once. */
static void test_sleep_range(void **state)
{
    (void)state;
    static const char *const forever[] = { "1e400", "4e12", "inf" };
    for (size_t i = 0; i < sizeof forever / sizeof *forever; i++) {
        char line[32];
        snprintf(line, sizeof line, "sleep %s", forever[i]);
        const char *args[] = {"-C", cf(), "--timeout", i == 0 ? "2" : "1", "--exec", line, NULL};
        double t0 = now_ms(), c0 = children_cpu_ms();
        assert_int_equal(shell_exec(&R, args, NULL, NULL), 0);
        if (R.status != 1 || strcmp(R.err, "Specified timeout reached -- exiting...\n") != 0 || now_ms() - t0 < 900)
            fail_msg("%s: status %d after %.0f ms, stderr `%s'", line, R.status, now_ms() - t0, R.err);
        /* waiting, not spinning (an unchecked conversion gave nanosleep a negative time, and
         * its EINVAL was retried at once) */
        if (children_cpu_ms() - c0 > 250)
            fail_msg("%s: the shell used %.0f ms of CPU while it slept", line, children_cpu_ms() - c0);
    }
    CASES(C("sleep nan", "Usage: sleep <SECONDS>\n", "", 1),
          C("sleep -nan", "Usage: sleep <SECONDS>\n", "", 1),
          C("sleep -1e400", "", "", 0),
          C("sleep 0", "", "", 0),
          C("sleep 0.05", "", "", 0));
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
    /* the echo escapes spaces, backslashes and quotes (fdbcli's formatStringRef) */
    CASES(CM("writemode on; set \"q hello world\" \"a;b\"; set q\\ x\\\\y \\\"quoted\\\"; set q\\x00\\u0041 \\xff\\x20; "
             "set \"q\"empty \"\"",
             ">>> writemode on\n"
             ">>> set q\\x20hello\\x20world a;b\n"
             "Committed (V)\n"
             ">>> set q\\x20x\\\\y \\\"quoted\\\"\n"
             "Committed (V)\n"
             ">>> set q\\x00A \\xff\\x20\n"
             "Committed (V)\n"
             ">>> set qempty \n"
             "Committed (V)\n",
             NULL, 0));
    assert_string_equal(db_value("q hello world"), "a;b");
    assert_string_equal(db_value("q x\\y"), "\"quoted\"");
    assert_string_equal(db_value("qempty"), "");
    int present = 0, len = 0;
    char buf[16];
    assert_int_equal(api_read_committed("q\0A", 3, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_int_equal(len, 2);
    assert_memory_equal(buf, "\xff ", 2);

    CASES(/* printable(): backslash doubled, non-printable bytes as \xNN, space as itself */
          C("get \"q x\\\\y\"; get q\\x00A; get \"q hello world\"",
            ">>> get q\\x20x\\\\y\n`q x\\\\y' is `\"quoted\"'\n"
            ">>> get q\\x00A\n`q\\x00A' is `\\xff '\n"
            ">>> get q\\x20hello\\x20world\n`q hello world' is `a;b'\n",
            NULL, -1),
          /* malformed escapes: the message on stdout, then fdbcli's two lines on stderr */
          C("get q\\xzz", "ERROR: malformed escape sequence\n get\n",
            "ERROR: Command failed to completely parse.\nERROR: Not running partial or malformed command:", 1),
          C("get \\u0100", "ERROR: malformed escape sequence\n get\n", NULL, -1),
          C("get a\\", "ERROR: malformed escape sequence\n get\n", NULL, -1),
          C("get \\q", NULL, NULL, 1),
          /* unterminated quote */
          C("get \"q hello", "ERROR: unterminated quote\n get q\\x20hello\n", NULL, 1),
          /* commands before a malformed one still run */
          C("get qempty; get \\x1", "ERROR: malformed escape sequence\n>>> get qempty\n`qempty' is `'\n get\n", NULL,
            -1),
          /* tabs separate tokens, a trailing ';' adds an empty command */
          C("get\tqempty;", ">>> get qempty\n`qempty' is `'\n", NULL, -1));
}

static void test_writemode_off(void **state)
{
    (void)state;
#define WM_REFUSED "ERROR: writemode must be enabled to set or clear keys in the database.\n"
    CASES(C("set wm/a 1", "", WM_REFUSED, 1), C("clear wm/a", "", WM_REFUSED, 1),
          C("clearrange wm/a wm/b", "", WM_REFUSED, 1), C("set wm/a", "", WM_REFUSED, 1));
    assert_null(db_value("wm/a"));
    CASES(C("writemode on; writemode off; set wm/a 1; get wm/a",
            ">>> writemode on\n>>> writemode off\n>>> set wm/a 1\n"
            "WARNING: the previous command failed, the remaining commands will not be executed.\n",
            NULL, 1),
          C("writemode maybe", "Usage: writemode <on|off>\n", NULL, 1));
    assert_null(db_value("wm/a"));
}

static void test_transactions(void **state)
{
    (void)state;
    CASES(CM("writemode on; begin; set tx/a 1; set tx/b 2; get tx/a; getrangekeys tx/; commit; get tx/b",
             ">>> writemode on\n>>> begin\nTransaction started\n>>> set tx/a 1\n>>> set tx/b 2\n"
             ">>> get tx/a\n`tx/a' is `1'\n"
             ">>> getrangekeys tx/\n\nRange limited to 25 keys\n`tx/a'\n`tx/b'\n\n"
             ">>> commit\nCommitted (V)\n>>> get tx/b\n`tx/b' is `2'\n",
             NULL, 0),
          /* nothing is written before commit: rollback and reset discard */
          C("writemode on; begin; set tx/c 3; rollback; get tx/c; begin; set tx/d 4; reset; commit",
            ">>> writemode on\n>>> begin\nTransaction started\n>>> set tx/c 3\n"
            ">>> rollback\nTransaction rolled back\n>>> get tx/c\n`tx/c': not found\n"
            ">>> begin\nTransaction started\n>>> set tx/d 4\n>>> reset\nTransaction reset\n"
            ">>> commit\nNothing to commit\n",
            NULL, -1),
          /* state errors */
          C("commit", NULL, "ERROR: No active transaction\n", 1),
          C("rollback", NULL, "ERROR: No active transaction\n", -1),
          C("begin; begin", NULL, "ERROR: Already in transaction\n", 1),
          /* an error inside a transaction rolls it back */
          C("writemode on; begin; set tx/e 5; getrange \\xff\\xff\\xff; commit",
            ">>> writemode on\n>>> begin\nTransaction started\n>>> set tx/e 5\n"
            ">>> getrange \\xff\\xff\\xff\nRolling back current transaction\n",
            "ERROR: Key outside legal range (2004)\n", 1));
    assert_string_equal(db_value("tx/a"), "1");
    assert_null(db_value("tx/c"));
    assert_null(db_value("tx/d"));
    assert_null(db_value("tx/e"));

    /* the rolled-back transaction is gone for the next line too (a script on stdin) */
    const shell_case script[] = { { .input = "writemode on\nbegin\nset tx/f 6\ngetrange \\xff\\xff\\xff\ncommit\n"
                                             "get tx/f\n",
                                    .err = "ERROR: Key outside legal range (2004)\nERROR: No active transaction\n",
                                    .status = -1 } };
    char why[8192];
    if (shell_run_cases(&R, cf(), script, 1, why, sizeof why))
        fail_msg("%s", why);
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

    CASES(C("status minimal", "The database is available.\n", NULL, 0),
          C("status", "The database is available.\n", NULL, -1));
    run("status json");
    assert_int_equal(R.status, 0);
    /* json_spirit's pretty print: sorted members, 4-space indent, " : " */
    assert_true(strncmp(R.out, "{\n    \"client\" : {\n        \"cluster_file\" : {\n"
                               "            \"up_to_date\" : true\n        },\n", 80) == 0);
    assert_non_null(strstr(R.out, "\n    \"cluster\" : {\n"));
    assert_non_null(strstr(R.out, "\"available\" : true,\n"));
    assert_string_equal(R.out + R.out_len - 3, "\n}\n");
    CASES(C("status bogus", "Usage: status [minimal|details|json]\n", NULL, 1));
}

static void test_options(void **state)
{
    (void)state;
    assert_int_equal(api_set_committed("opt/r", 5, "old", 3), 0);
    CASES(C("option on TIMEOUT 5000; option on READ_YOUR_WRITES_DISABLE; option",
            ">>> option on TIMEOUT 5000\nOption enabled for all transactions\n"
            ">>> option on READ_YOUR_WRITES_DISABLE\nOption enabled for all transactions\n"
            ">>> option\n\nCurrently enabled options:\n\n"
            "READ_YOUR_WRITES_DISABLE\nTIMEOUT: `\\x88\\x13\\x00\\x00\\x00\\x00\\x00\\x00'\n\n",
            NULL, 0),
          C("option", NULL, "There are no options enabled\n", 0),
          C("option on NO_SUCH_OPTION", NULL,
            "ERROR: invalid option 'NO_SUCH_OPTION'. Try `help options' for a list of available options.\n", 1),
          C("option on TIMEOUT", NULL, "ERROR: option expected a parameter\n", -1),
          C("option on READ_YOUR_WRITES_DISABLE 1", NULL, "ERROR: option did not expect a parameter\n", -1),
          C("option on TIMEOUT 12x", NULL, "ERROR: could not parse value `12x' as an integer\n", -1),
          C("option maybe TIMEOUT", NULL,
            "ERROR: Invalid option state `maybe': option must be turned `on' or `off'\n", -1),
          C("begin; option off TIMEOUT", NULL,
            "ERROR: Cannot turn option off when using a transaction created with `begin'\n", -1),
          C("option off TIMEOUT 1", NULL, "ERROR: Cannot specify option argument when turning option off\n", -1),
          /* options take effect: an integer one (8 bytes little-endian) ... */
          C("writemode on; option on SIZE_LIMIT 40; set opt/k 0123456789012345678901234567890123456789", NULL,
            "ERROR: Transaction exceeds byte limit (2101)\n", 1));
    assert_null(db_value("opt/k"));
    /* ... and one without a value, in a transaction */
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
    CASES(C("frobnicate", NULL, "ERROR: Unknown command `frobnicate'. Try `help'?\n", 1),
          C("get a b", "Usage: get <KEY>\n", NULL, 1), C("get", NULL, NULL, 1),
          C("getversion x", "Usage: getversion\n", NULL, -1),
          C("bogus; get a",
            ">>> bogus\nWARNING: the previous command failed, the remaining commands will not be executed.\n", NULL,
            -1),
          C("exit; frobnicate", ">>> exit\n", NULL, 0), C("sleep 0.01", NULL, NULL, 0),
          C("sleep abc", "Usage: sleep <SECONDS>\n", NULL, 1),
          C("help nosuch", "I don't know anything about `nosuch'\n", NULL, -1));
    run("help get");
    assert_true(strncmp(R.out, "\nget <KEY>\n\nFetch the value for a given key.\n", 44) == 0);
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
    CASES(C("getrange \\x02tm\\x00",
            "\nRange limited to 25 keys\n"
            "`\\x02tm\\x00\\x15\\x01' is `\\x01v\\x00'\n"
            "`\\x02tm\\x00\\x15\\x02' is `raw\\xff'\n\n",
            NULL, -1));
}

static void test_stdin_script(void **state)
{
    (void)state;
    const char *args[] = {"-C", cf(), "--no-status", NULL};
    assert_int_equal(shell_exec(&R, args, "writemode on\nset sc/a 1\n\nget sc/a\nexit\nget sc/a\n", NULL), 0);
    shell_mask_versions(R.out);
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
        cmocka_unit_test(test_inverted_ranges),
        cmocka_unit_test(test_nul_in_script),
        cmocka_unit_test(test_sleep_range),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
