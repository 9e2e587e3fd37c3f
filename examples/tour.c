/* A short tour of the FoundationDB C API, for libfdb_c 7.3 or cfdb:
 * a retry loop, writes, a range scan, an atomic counter and a watch.
 *   tour [CLUSTER_FILE] */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <pthread.h>
#include <stdint.h>
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

static fdb_error_t wait_for(FDBFuture *f)
{
    check(fdb_future_block_until_ready(f), "block");
    return fdb_future_get_error(f);
}

/* The standard retry loop: run body, commit; on a retryable error on_error waits
 * (with backoff) and resets the transaction, and we run the body again. */
typedef fdb_error_t (*body_fn)(FDBTransaction *tr, void *arg);

static void run_transaction(FDBDatabase *db, body_fn body, void *arg, const char *what)
{
    FDBTransaction *tr;
    check(fdb_database_create_transaction(db, &tr), "create transaction");
    for (;;) {
        fdb_error_t err = body(tr, arg);
        if (!err) {
            FDBFuture *c = fdb_transaction_commit(tr);
            err = wait_for(c);
            fdb_future_destroy(c);
            if (!err)
                break;
        }
        FDBFuture *e = fdb_transaction_on_error(tr, err);
        check(wait_for(e), what); /* not retryable: give up */
        fdb_future_destroy(e);
    }
    fdb_transaction_destroy(tr);
}

static const uint8_t *K(const char *s)
{
    return (const uint8_t *)s;
}

static fdb_error_t write_fruit(FDBTransaction *tr, void *arg)
{
    static const char *fruit[] = { "apple", "banana", "cherry", "date", "elderberry" };
    fdb_transaction_clear_range(tr, K("tour/"), 5, K("tour0"), 5);
    for (int i = 0; i < 5; i++) {
        char key[64];
        int n = snprintf(key, sizeof key, "tour/fruit/%d", i);
        fdb_transaction_set(tr, K(key), n, K(fruit[i]), (int)strlen(fruit[i]));
    }
    return 0;
}

static fdb_error_t scan_fruit(FDBTransaction *tr, void *arg)
{
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(K("tour/fruit/"), 11),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(K("tour/fruit0"), 11), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    fdb_error_t err = wait_for(f);
    if (!err) {
        const FDBKeyValue *kv;
        int count;
        fdb_bool_t more;
        check(fdb_future_get_keyvalue_array(f, &kv, &count, &more), "range");
        printf("range scan: %d keys\n", count);
        for (int i = 0; i < count; i++)
            printf("  %.*s = %.*s\n", kv[i].key_length, (const char *)kv[i].key, kv[i].value_length,
                   (const char *)kv[i].value);
    }
    fdb_future_destroy(f);
    return err;
}

static fdb_error_t increment(FDBTransaction *tr, void *arg)
{
    int64_t one = 1; /* little-endian, as ADD expects */
    fdb_transaction_atomic_op(tr, K("tour/counter"), 12, (const uint8_t *)&one, 8, FDB_MUTATION_TYPE_ADD);
    return 0;
}

static fdb_error_t read_counter(FDBTransaction *tr, void *arg)
{
    FDBFuture *f = fdb_transaction_get(tr, K("tour/counter"), 12, 0);
    fdb_error_t err = wait_for(f);
    if (!err) {
        fdb_bool_t present;
        const uint8_t *v;
        int len;
        check(fdb_future_get_value(f, &present, &v, &len), "counter");
        int64_t n = 0;
        if (present && len == 8)
            memcpy(&n, v, 8);
        *(int64_t *)arg = n;
    }
    fdb_future_destroy(f);
    return err;
}

typedef struct watch_arg {
    FDBFuture *watch;
} watch_arg;

static fdb_error_t arm_watch(FDBTransaction *tr, void *arg)
{
    ((watch_arg *)arg)->watch = fdb_transaction_watch(tr, K("tour/bell"), 9);
    return 0;
}

static fdb_error_t ring_bell(FDBTransaction *tr, void *arg)
{
    fdb_transaction_set(tr, K("tour/bell"), 9, K("ding"), 4);
    return 0;
}

int main(int argc, char **argv)
{
    check(fdb_select_api_version(FDB_API_VERSION), "select api version");
    check(fdb_setup_network(), "setup network");
    pthread_t net;
    pthread_create(&net, NULL, network_thread, NULL);
    FDBDatabase *db;
    check(fdb_create_database(argc > 1 ? argv[1] : NULL, &db), "create database");

    run_transaction(db, write_fruit, NULL, "write");
    run_transaction(db, scan_fruit, NULL, "scan");

    for (int i = 0; i < 10; i++)
        run_transaction(db, increment, NULL, "increment");
    int64_t counter = 0;
    run_transaction(db, read_counter, &counter, "read counter");
    printf("atomic counter after 10 increments: %lld\n", (long long)counter);

    watch_arg w = { NULL };
    run_transaction(db, arm_watch, &w, "watch"); /* the watch starts when its transaction commits */
    run_transaction(db, ring_bell, NULL, "ring");
    check(wait_for(w.watch), "watch");
    printf("watch fired: tour/bell changed\n");
    fdb_future_destroy(w.watch);

    fdb_database_destroy(db);
    check(fdb_stop_network(), "stop network");
    pthread_join(net, NULL);
    printf("tour done\n");
    return 0;
}
