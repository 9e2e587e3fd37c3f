/* SPDX-License-Identifier: Apache-2.0 */
/* The loadable extension cfdbsql.so against a cfdb-server of its own, loaded by Debian's
 * sqlite3 shell (.load) and by Python's sqlite3 module (load_extension, /usr/bin/python3):
 * DDL through cfdb_ddl, a schema attached with cfdb_open, writes and reads (bound parameters
 * from Python), an index plan in EXPLAIN QUERY PLAN, and a bad statement's error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../api/api_helpers.h"

#ifndef CFDB_SQL_EXT_ENV
#define CFDB_SQL_EXT_ENV ""
#endif

static api_server server;

static char *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t r;
    while ((r = fread(out + n, 1, cap - n - 1, p)) > 0)
        n += r;
    out[n] = 0;
    int st = pclose(p);
    (void)st;
    return out;
}

static void need(const char *out, const char *s)
{
    if (!strstr(out, s))
        fail_msg("output lacks '%s':\n%s", s, out);
}

static void test_sqlite3_shell(void **state)
{
    (void)state;
    char script[512], cmd[1024];
    snprintf(script, sizeof script, "%s/shell.sql", server.dir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f,
            ".load %s\n"
            "SELECT cfdb_open('%s');\n"
            "SELECT cfdb_ddl('CREATE SCHEMA TEMPLATE ext CREATE TABLE kv (k STRING, v BIGINT, "
            "PRIMARY KEY (k)) CREATE INDEX byv ON kv (v)');\n"
            "SELECT cfdb_ddl('CREATE DATABASE /ext');\n"
            "SELECT cfdb_ddl('CREATE SCHEMA /ext/s WITH TEMPLATE ext');\n"
            "SELECT cfdb_open('%s', '/ext', 's');\n"
            "INSERT INTO kv VALUES ('a', 1), ('b', 2), ('c', 3);\n"
            "SELECT 'row', k, v FROM kv WHERE v >= 2 ORDER BY v;\n"
            "EXPLAIN QUERY PLAN SELECT k FROM kv WHERE v = 2;\n"
            "SELECT 'count', count(*) FROM kv;\n"
            "INSERT INTO kv VALUES ('d', 'not a number');\n",
            CFDB_SQL_EXT_PATH, server.cluster_file, server.cluster_file);
    fclose(f);
    snprintf(cmd, sizeof cmd, CFDB_SQL_EXT_ENV "sqlite3 -batch :memory: < %s 2>&1", script);
    char *out = run(cmd);
    need(out, "row|b|2\nrow|c|3\n");
    need(out, "Index(BYV [V=?])");
    need(out, "count|3");
    need(out, "type mismatch: KV.V is BIGINT");
    free(out);
}

static void test_python(void **state)
{
    (void)state;
    if (access("/usr/bin/python3", X_OK) != 0)
        fail_msg("/usr/bin/python3 (Debian's, with sqlite3 extension loading) is needed");
    char script[512], cmd[1024];
    snprintf(script, sizeof script, "%s/ext.py", server.dir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f,
            "import sqlite3\n"
            "c = sqlite3.connect(':memory:')\n"
            "c.enable_load_extension(True)\n"
            "c.load_extension('%s')\n"
            "c.execute('SELECT cfdb_open(?, ?, ?)', ('%s', '/ext', 's'))\n"
            "c.execute('INSERT INTO kv VALUES (?, ?)', ('e', 5))\n"
            "c.commit()\n"
            "for k, v in c.execute('SELECT k, v FROM kv WHERE k > ? ORDER BY k', ('b',)):\n"
            "    print('py', k, v)\n"
            "try:\n"
            "    c.execute('INSERT INTO kv VALUES (?, ?)', ('a', 9))\n"
            "except sqlite3.Error as e:\n"
            "    print('refused', e)\n",
            CFDB_SQL_EXT_PATH, server.cluster_file);
    fclose(f);
    snprintf(cmd, sizeof cmd, CFDB_SQL_EXT_ENV "/usr/bin/python3 %s 2>&1", script);
    char *out = run(cmd);
    need(out, "py c 3\npy e 5\n");
    need(out, "refused UNIQUE constraint failed: KV.K (primary key)");
    free(out);
}

static int setup(void **state)
{
    (void)state;
    return api_server_start(&server, NULL);
}

static int teardown(void **state)
{
    (void)state;
    api_server_stop(&server);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sqlite3_shell),
        cmocka_unit_test(test_python),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
