/* Hello, FoundationDB: set a key, read it back, with the standard retry loop.
 * Builds against <foundationdb/fdb_c.h> and runs on libfdb_c 7.3 or on cfdb.
 *   hello [CLUSTER_FILE] */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(fdb_error_t err, const char *what)
{
    if (err) {
        fprintf(stderr, "%s: %s (%d)\n", what, fdb_get_error(err), err);
        exit(1);
    }
}

static void *network_thread(void *arg)
{
    (void)arg;
    check(fdb_run_network(), "run network");
    return NULL;
}

/* Waits for f; returns its error (0 on success). */
static fdb_error_t wait_for(FDBFuture *f)
{
    check(fdb_future_block_until_ready(f), "block");
    return fdb_future_get_error(f);
}

int main(int argc, char **argv)
{
    check(fdb_select_api_version(FDB_API_VERSION), "select api version");
    check(fdb_setup_network(), "setup network");
    pthread_t net;
    pthread_create(&net, NULL, network_thread, NULL);

    FDBDatabase *db;
    check(fdb_create_database(argc > 1 ? argv[1] : NULL, &db), "create database");
    FDBTransaction *tr;
    check(fdb_database_create_transaction(db, &tr), "create transaction");

    const char *key = "hello", *value = "world";
    for (;;) { /* write */
        fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)value, (int)strlen(value));
        FDBFuture *f = fdb_transaction_commit(tr);
        fdb_error_t err = wait_for(f);
        fdb_future_destroy(f);
        if (!err)
            break;
        f = fdb_transaction_on_error(tr, err);
        check(wait_for(f), "commit");
        fdb_future_destroy(f);
    }
    fdb_transaction_reset(tr);
    for (;;) { /* read */
        FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)key, (int)strlen(key), 0);
        fdb_error_t err = wait_for(f);
        if (!err) {
            fdb_bool_t present;
            const uint8_t *v;
            int len;
            check(fdb_future_get_value(f, &present, &v, &len), "get value");
            printf("%s -> %.*s\n", key, present ? len : 6, present ? (const char *)v : "(none)");
            fdb_future_destroy(f);
            break;
        }
        fdb_future_destroy(f);
        f = fdb_transaction_on_error(tr, err);
        check(wait_for(f), "get");
        fdb_future_destroy(f);
    }
    fdb_transaction_destroy(tr);
    fdb_database_destroy(db);
    check(fdb_stop_network(), "stop network");
    pthread_join(net, NULL);
    return 0;
}
