/* SQL on FoundationDB records in C (include/cfdb/sql.h): an fdb-relational schema template
 * with a value index and a unique index, a database and a schema in the catalog, rows
 * written and read through SQLite's SQL (a prepared statement with bound parameters, a join,
 * GROUP BY, the plan of an index scan in EXPLAIN QUERY PLAN), and a unique index refusing a
 * duplicate.
 *   example_sql [CLUSTER_FILE]
 * Runs against cfdb-server or a FoundationDB 7.3 cluster; it drops and recreates the
 * database /example_sql and the template EXAMPLE_SHOP. */
#define FDB_API_VERSION 730
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cfdb/sql.h"

static void *network_thread(void *arg)
{
    (void)arg;
    fdb_run_network();
    return NULL;
}

static void ddl(FDBDatabase *db, const char *s)
{
    char err[512];
    if (cfdb_sql_ddl(db, s, err, sizeof err)) {
        fprintf(stderr, "DDL failed: %s\n", err);
        exit(1);
    }
}

static int print_row(void *ctx, int n, char **vals, char **names)
{
    (void)ctx;
    (void)names;
    printf("   ");
    for (int i = 0; i < n; i++)
        printf("%s%s", i ? " | " : " ", vals[i] ? vals[i] : "NULL");
    printf("\n");
    return 0;
}

static void sql(sqlite3 *conn, const char *s)
{
    char *msg = NULL;
    printf("sql> %s\n", s);
    if (cfdb_sql_exec(conn, s, print_row, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "failed: %s\n", msg);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *cluster = argc > 1 ? argv[1] : NULL;
    pthread_t net;
    if (fdb_select_api_version(FDB_API_VERSION) || fdb_setup_network() ||
        pthread_create(&net, NULL, network_thread, NULL))
        return 1;
    FDBDatabase *db;
    if (fdb_create_database(cluster, &db))
        return 1;

    char err[512];
    cfdb_sql_ddl(db, "DROP DATABASE IF EXISTS /example_sql", err, sizeof err);
    cfdb_sql_ddl(db, "DROP SCHEMA TEMPLATE IF EXISTS example_shop", err, sizeof err);
    ddl(db, "CREATE SCHEMA TEMPLATE example_shop "
            "CREATE TABLE customer (id BIGINT, name STRING NOT NULL, city STRING, PRIMARY KEY (id)) "
            "CREATE TABLE orders (cust BIGINT, seq INTEGER, amount BIGINT, sku STRING, "
            "  PRIMARY KEY (cust, seq)) "
            "CREATE INDEX orders_by_amount AS SELECT amount, sku FROM orders ORDER BY amount "
            "CREATE UNIQUE INDEX orders_by_sku ON orders (sku)");
    ddl(db, "CREATE DATABASE /example_sql");
    ddl(db, "CREATE SCHEMA /example_sql/main WITH TEMPLATE example_shop");

    sqlite3 *conn;
    if (cfdb_sql_open(db, "/example_sql", "main", &conn, err, sizeof err)) {
        fprintf(stderr, "open: %s\n", err);
        return 1;
    }
    sql(conn, "INSERT INTO customer VALUES (1, 'ann', 'paris'), (2, 'bob', 'oslo')");
    /* a prepared statement, run with bound parameters in one BEGIN..COMMIT transaction */
    sql(conn, "BEGIN");
    sqlite3_stmt *ins;
    sqlite3_prepare_v2(conn, "INSERT INTO orders VALUES (?, ?, ?, ?)", -1, &ins, NULL);
    for (int i = 0; i < 6; i++) {
        char sku[16];
        snprintf(sku, sizeof sku, "sku-%d", i);
        sqlite3_bind_int64(ins, 1, 1 + i % 2);
        sqlite3_bind_int(ins, 2, i);
        sqlite3_bind_int64(ins, 3, 10 * (i + 1));
        sqlite3_bind_text(ins, 4, sku, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            fprintf(stderr, "insert: %s\n", sqlite3_errmsg(conn));
            return 1;
        }
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sql(conn, "COMMIT");
    sql(conn, "SELECT sku, amount FROM orders WHERE amount BETWEEN 20 AND 40 ORDER BY amount DESC");
    sql(conn, "EXPLAIN QUERY PLAN SELECT sku, amount FROM orders WHERE amount BETWEEN 20 AND 40 "
              "ORDER BY amount DESC");
    sql(conn, "SELECT c.name, count(*), sum(o.amount) FROM customer c JOIN orders o "
              "ON o.cust = c.id GROUP BY c.name ORDER BY c.name");
    printf("sql> INSERT INTO orders VALUES (2, 99, 1, 'sku-0')   -- a duplicate sku\n");
    char *msg = NULL;
    if (cfdb_sql_exec(conn, "INSERT INTO orders VALUES (2, 99, 1, 'sku-0')", NULL, NULL, &msg) ==
        SQLITE_OK) {
        fprintf(stderr, "the unique index accepted a duplicate\n");
        return 1;
    }
    printf("   refused: %s\n", msg);
    sqlite3_free(msg);
    sqlite3_close(conn);
    fdb_database_destroy(db);
    fdb_stop_network();
    pthread_join(net, NULL);
    return 0;
}
