/* SPDX-License-Identifier: Apache-2.0 */
/* The loadable SQLite extension cfdbsql.so: Debian's sqlite3 shell (`.load cfdbsql`) and
 * Python's sqlite3 (`conn.load_extension("cfdbsql")`) get the function
 *
 *   SELECT cfdb_open(cluster_file, database_path, schema);
 *
 * (cluster_file NULL or '' for the default one) which starts the FoundationDB client's network (once per process, on a thread of its own),
 * opens the cluster and attaches the schema's tables to the connection, after which they are
 * queried and written as any table; cfdb_ddl(text) and cfdb_fetch_method(text) come with
 * them (include/cfdb/sql.h). cfdb_open(cluster_file) alone connects without a schema and gives
 * cfdb_ddl(text), to create the first template, database and schema. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/sql.h"

static pthread_mutex_t ext_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t ext_thread;
static int ext_network_error = -1;   /* -1: not started */

typedef struct ext_db {
    char *cluster_file;
    FDBDatabase *db;
    struct ext_db *next;
} ext_db;
static ext_db *ext_dbs;

static void *ext_run(void *arg)
{
    (void)arg;
    fdb_run_network();
    return NULL;
}

static int ext_network(void)
{
    if (ext_network_error >= 0)
        return ext_network_error;
    int e = fdb_select_api_version(FDB_API_VERSION);
    if (e == 2201) /* api_version_already_set: the host program uses the client too */
        e = 0;
    if (!e) {
        e = fdb_setup_network();
        if (e == 2009) { /* network_already_setup: the host runs it */
            ext_network_error = 0;
            return 0;
        }
    }
    if (!e && pthread_create(&ext_thread, NULL, ext_run, NULL) != 0)
        e = 4100;
    ext_network_error = e;
    return e;
}

static void fn_ddl_only(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *text = (const char *)sqlite3_value_text(argv[0]);
    char err[512];
    int e = text ? cfdb_sql_ddl(sqlite3_user_data(ctx), text, err, sizeof err) : 2000;
    if (e)
        sqlite3_result_error(ctx, text ? err : "cfdb_ddl: a DDL statement is needed", -1);
    else
        sqlite3_result_text(ctx, "OK", 2, SQLITE_STATIC);
}

static void fn_open(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *cf = (const char *)sqlite3_value_text(argv[0]);
    const char *path = argc == 3 ? (const char *)sqlite3_value_text(argv[1]) : NULL;
    const char *schema = argc == 3 ? (const char *)sqlite3_value_text(argv[2]) : NULL;
    if (argc == 3 && (!path || !schema)) {
        sqlite3_result_error(ctx, "cfdb_open(cluster_file, database_path, schema)", -1);
        return;
    }
    pthread_mutex_lock(&ext_lock);
    int e = ext_network();
    FDBDatabase *db = NULL;
    if (!e) {
        const char *key = cf ? cf : "";
        for (ext_db *d = ext_dbs; d; d = d->next)
            if (strcmp(d->cluster_file, key) == 0)
                db = d->db;
        if (!db) {
            ext_db *d = calloc(1, sizeof *d);
            if (d && (d->cluster_file = strdup(key)) &&
                !(e = fdb_create_database(cf && *cf ? cf : NULL, &d->db))) {
                d->next = ext_dbs;
                ext_dbs = d;
                db = d->db;
            } else {
                if (d)
                    free(d->cluster_file);
                free(d);
                if (!e)
                    e = 4000;
            }
        }
    }
    pthread_mutex_unlock(&ext_lock);
    if (e) {
        char *m = sqlite3_mprintf("cfdb_open: FoundationDB error %d: %s", e, fdb_get_error(e));
        sqlite3_result_error(ctx, m, -1);
        sqlite3_free(m);
        return;
    }
    if (argc == 1) {
        if (sqlite3_create_function(sqlite3_context_db_handle(ctx), "cfdb_ddl", 1, SQLITE_UTF8, db,
                                    fn_ddl_only, NULL, NULL) != SQLITE_OK)
            sqlite3_result_error(ctx, "cfdb_open: registering cfdb_ddl failed", -1);
        else
            sqlite3_result_text(ctx, "OK", 2, SQLITE_STATIC);
        return;
    }
    char err[512];
    e = cfdb_sql_attach(sqlite3_context_db_handle(ctx), db, path, schema, err, sizeof err);
    if (e) {
        char *m = sqlite3_mprintf("cfdb_open: %s", err);
        sqlite3_result_error(ctx, m, -1);
        sqlite3_free(m);
        return;
    }
    sqlite3_result_text(ctx, "OK", 2, SQLITE_STATIC);
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_cfdbsql_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);
int sqlite3_cfdbsql_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
    (void)err;
    SQLITE_EXTENSION_INIT2(api);
    int rc = sqlite3_create_function(db, "cfdb_open", 3, SQLITE_UTF8, NULL, fn_open, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "cfdb_open", 1, SQLITE_UTF8, NULL, fn_open, NULL, NULL);
    return rc;
}
