/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-sql: an interactive SQL shell on FoundationDB records (include/cfdb/sql.h).
 *
 *   cfdb-sql [-C cluster_file] [-d /database] [-s schema] [-e statement]... [--fetch METHOD]
 *
 * Statements end with ';' (they may span lines). DDL (CREATE/DROP SCHEMA TEMPLATE, DATABASE,
 * SCHEMA) goes to the catalog; everything else is SQLite's SQL over the schema's tables,
 * run with the FoundationDB retry loop. Dot commands:
 *   .tables              the tables of the schema in use, with their columns
 *   .schemas [/db]       the schemas in the catalog (of one database)
 *   .use /db schema      attach another schema
 *   .fetch [METHOD]      SCAN_AND_FETCH, USE_REMOTE_FETCH, USE_REMOTE_FETCH_WITH_FALLBACK
 *   .help  .quit
 * EXPLAIN QUERY PLAN <query> shows the Record Layer plan of each table (index, ranges, fetch
 * method). Line editing and history (~/.cfdb_sql_history) by libedit when the input is a
 * terminal. */
#include <editline/readline.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfdb/sql.h"

static FDBDatabase *fdb;
static sqlite3 *conn;
static char cur_db[512], cur_schema[256];

static void *network(void *arg)
{
    (void)arg;
    fdb_run_network();
    return NULL;
}

static int print_row(void *ctx, int n, char **vals, char **names)
{
    bool *header = ctx;
    if (*header) {
        for (int i = 0; i < n; i++)
            printf("%s%s", i ? "|" : "", names[i]);
        printf("\n");
        *header = false;
    }
    for (int i = 0; i < n; i++)
        printf("%s%s", i ? "|" : "", vals[i] ? vals[i] : "NULL");
    printf("\n");
    return 0;
}

static int print_schema(void *ctx, const char *db, const char *schema, const char *tmpl,
                        int version)
{
    (void)ctx;
    printf("%s/%s  (template %s version %d)\n", db, schema, tmpl, version);
    return 0;
}

static bool is_ddl(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return strncasecmp(s, "CREATE SCHEMA", 13) == 0 || strncasecmp(s, "CREATE DATABASE", 15) == 0 ||
           strncasecmp(s, "DROP SCHEMA", 11) == 0 || strncasecmp(s, "DROP DATABASE", 13) == 0;
}

static int use_schema(const char *db, const char *schema)
{
    char err[512];
    if (!conn && sqlite3_open(":memory:", &conn) != SQLITE_OK) {
        fprintf(stderr, "cfdb-sql: sqlite3_open failed\n");
        return 1;
    }
    int rc = cfdb_sql_attach(conn, fdb, db, schema, err, sizeof err);
    if (rc) {
        fprintf(stderr, "cfdb-sql: %s\n", err);
        return 1;
    }
    snprintf(cur_db, sizeof cur_db, "%s", db);
    snprintf(cur_schema, sizeof cur_schema, "%s", schema);
    return 0;
}

static int run_statement(const char *sql)
{
    if (is_ddl(sql)) {
        char err[512];
        int rc = cfdb_sql_ddl(fdb, sql, err, sizeof err);
        if (rc) {
            fprintf(stderr, "Error: %s\n", err);
            return 1;
        }
        printf("OK\n");
        return 0;
    }
    if (!conn) {
        fprintf(stderr, "Error: no schema in use (-d /db -s schema, or .use /db schema)\n");
        return 1;
    }
    bool header = true;
    char *msg = NULL;
    int rc = cfdb_sql_exec(conn, sql, print_row, &header, &msg);
    if (rc) {
        fprintf(stderr, "Error: %s\n", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return 1;
    }
    return 0;
}

static int tables(void)
{
    if (!conn) {
        fprintf(stderr, "Error: no schema in use\n");
        return 1;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(conn, "SELECT cfdb_tables()", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return 1;
    }
    char *list = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        char q[512];
        snprintf(q, sizeof q, "SELECT group_concat(name || ' ' || type || CASE WHEN hidden THEN ' HIDDEN' ELSE '' END, ', ') FROM "
                              "pragma_table_xinfo('%s')", name);
        sqlite3_stmt *c;
        if (sqlite3_prepare_v2(conn, q, -1, &c, NULL) != SQLITE_OK)
            continue;
        if (sqlite3_step(c) == SQLITE_ROW)
            printf("%s (%s)\n", name, sqlite3_column_text(c, 0) ? (const char *)sqlite3_column_text(c, 0) : "");
        sqlite3_finalize(c);
    }
    free(list);
    return 0;
}

static int dot(char *line)
{
    char *cmd = strtok(line, " \t\n");
    char *a1 = strtok(NULL, " \t\n"), *a2 = strtok(NULL, " \t\n");
    if (!cmd)
        return 0;
    if (!strcmp(cmd, ".quit") || !strcmp(cmd, ".exit"))
        return -1;
    if (!strcmp(cmd, ".tables"))
        return tables();
    if (!strcmp(cmd, ".schemas")) {
        char err[512];
        int rc = cfdb_sql_list_schemas(fdb, a1, print_schema, NULL, err, sizeof err);
        if (rc)
            fprintf(stderr, "Error: %s\n", err);
        return rc != 0;
    }
    if (!strcmp(cmd, ".use")) {
        if (!a1 || !a2) {
            fprintf(stderr, "usage: .use /database schema\n");
            return 1;
        }
        return use_schema(a1, a2);
    }
    if (!strcmp(cmd, ".fetch")) {
        if (!conn) {
            fprintf(stderr, "Error: no schema in use\n");
            return 1;
        }
        char q[256];
        snprintf(q, sizeof q, a1 ? "SELECT cfdb_fetch_method('%s')" : "SELECT cfdb_fetch_method()",
                 a1);
        return run_statement(q);
    }
    if (!strcmp(cmd, ".help")) {
        printf(".tables | .schemas [/db] | .use /db schema | .fetch [METHOD] | .quit\n"
               "DDL: CREATE SCHEMA TEMPLATE t CREATE TABLE ... | CREATE DATABASE /db | "
               "CREATE SCHEMA /db/s WITH TEMPLATE t | DROP ...\n"
               "SQL: SQLite's, over the schema's tables; EXPLAIN QUERY PLAN shows the plans\n");
        return 0;
    }
    fprintf(stderr, "Error: unknown command %s (.help)\n", cmd);
    return 1;
}

int main(int argc, char **argv)
{
    const char *cluster = NULL, *db = NULL, *schema = NULL, *fetch = NULL;
    const char *exec[64];
    int nexec = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-C") && i + 1 < argc)
            cluster = argv[++i];
        else if (!strcmp(argv[i], "-d") && i + 1 < argc)
            db = argv[++i];
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            schema = argv[++i];
        else if (!strcmp(argv[i], "-e") && i + 1 < argc && nexec < 64)
            exec[nexec++] = argv[++i];
        else if (!strcmp(argv[i], "--fetch") && i + 1 < argc)
            fetch = argv[++i];
        else {
            fprintf(stderr, "usage: cfdb-sql [-C cluster_file] [-d /database -s schema] "
                            "[-e statement]... [--fetch METHOD]\n");
            return 2;
        }
    }
    int e = fdb_select_api_version(FDB_API_VERSION);
    if (!e)
        e = fdb_setup_network();
    pthread_t th;
    if (!e && pthread_create(&th, NULL, network, NULL))
        e = 4100;
    if (!e)
        e = fdb_create_database(cluster, &fdb);
    if (e) {
        fprintf(stderr, "cfdb-sql: FoundationDB error %d: %s\n", e, fdb_get_error(e));
        return 1;
    }
    int status = 0;
    if (db && schema && use_schema(db, schema))
        status = 1;
    if (!status && fetch) {
        char q[128];
        snprintf(q, sizeof q, ".fetch %s", fetch);
        status = dot(q) != 0;
    }
    for (int i = 0; i < nexec && !status; i++)
        status = exec[i][0] == '.' ? dot((char *)exec[i]) > 0 : run_statement(exec[i]);
    if (nexec == 0 && !status) {
        bool tty = isatty(0);
        char hist[1024] = "";
        if (tty) {
            rl_readline_name = "cfdb-sql";
            using_history();
            const char *home = getenv("HOME");
            if (home) {
                snprintf(hist, sizeof hist, "%s/.cfdb_sql_history", home);
                read_history(hist);
            }
        }
        char *stmt = NULL;
        size_t len = 0;
        for (;;) {
            char *line;
            if (tty) {
                line = readline(len ? "   ...> " : "cfdb-sql> ");
            } else {
                size_t cap = 0;
                line = NULL;
                if (getline(&line, &cap, stdin) < 0) {
                    free(line);
                    line = NULL;
                } else {
                    line[strcspn(line, "\n")] = 0;
                }
            }
            if (!line)
                break;
            if (tty && *line)
                add_history(line);
            if (len == 0 && line[0] == '.') {
                int r = dot(line);
                free(line);
                if (r < 0)
                    break;
                status |= r;
                continue;
            }
            size_t n = strlen(line);
            char *ns = realloc(stmt, len + n + 2);
            if (!ns)
                break;
            stmt = ns;
            memcpy(stmt + len, line, n);
            len += n;
            stmt[len++] = '\n';
            stmt[len] = 0;
            free(line);
            /* a statement ends with ';' outside quotes */
            bool q1 = false, q2 = false;
            char last = 0;
            for (size_t i = 0; i < len; i++) {
                char c = stmt[i];
                if (c == '\'' && !q2)
                    q1 = !q1;
                else if (c == '"' && !q1)
                    q2 = !q2;
                if (c != ' ' && c != '\n' && c != '\t')
                    last = c;
            }
            if (!q1 && !q2 && last == ';') {
                status |= run_statement(stmt);
                len = 0;
                stmt[0] = 0;
            }
        }
        if (len && !status)
            status |= run_statement(stmt);
        free(stmt);
        if (tty && hist[0])
            write_history(hist);
    }
    if (conn)
        sqlite3_close(conn);
    fdb_database_destroy(fdb);
    fdb_stop_network();
    pthread_join(th, NULL);
    return status;
}
