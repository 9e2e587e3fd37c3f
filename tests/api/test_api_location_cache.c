/* The location cache's bound (FDB_DB_OPTION_LOCATION_CACHE_SIZE) through fdb_c.h: with a
 * database limited to a few cached shards, point reads, reverse reads and range reads across
 * 24 shards on 3 storage servers return the right data while the cache never holds more than
 * the bound; a database with the default bound keeps every shard it met. The engine is linked
 * in statically so the test can read the cache's size (cfdb_db_location_cache_count), which
 * libcfdb.so does not export; everything else goes through the public API. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "database.h"

enum { SHARDS = 24, KEYS_PER_SHARD = 3, BOUND = 3 };

/* Shard boundaries lc/01 .. lc/23: shard i holds the keys lc/<i>/... */
static int group_setup(void **state)
{
    (void)state;
    static char shards[SHARDS * 8];
    size_t o = 0;
    for (int i = 1; i < SHARDS; i++)
        o += (size_t)snprintf(shards + o, sizeof shards - o, "%slc/%02d", i > 1 ? "," : "", i);
    const char *args[] = { "--storage-servers", "3", "--shards", shards, NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

static int key_of(char *out, int shard, int k)
{
    return snprintf(out, 32, "lc/%02d/k%d", shard, k);
}

static void write_all(void)
{
    for (int s = 0; s < SHARDS; s++)
        for (int k = 0; k < KEYS_PER_SHARD; k++) {
            char key[32], val[32];
            int kl = key_of(key, s, k), vl = snprintf(val, sizeof val, "v%d.%d", s, k);
            assert_int_equal(api_set_committed(key, kl, val, vl), 0);
        }
}

static FDBDatabase *open_db(int64_t cache_size)
{
    FDBDatabase *db = NULL;
    assert_int_equal(fdb_create_database(g_env.server.cluster_file, &db), 0);
    if (cache_size >= 0)
        assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_LOCATION_CACHE_SIZE, (const uint8_t *)&cache_size,
                                                 8),
                         0);
    return db;
}

static size_t cache_count(FDBDatabase *db)
{
    return cfdb_db_location_cache_count((cfdb_db *)db);
}

/* Reads every key of every shard, forwards then backwards, one transaction per pass. */
static void read_every_key(FDBDatabase *db, size_t bound)
{
    for (int pass = 0; pass < 2; pass++) {
        FDBTransaction *tr;
        assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
        for (int i = 0; i < SHARDS; i++) {
            int s = pass == 0 ? i : SHARDS - 1 - i;
            for (int k = 0; k < KEYS_PER_SHARD; k++) {
                char key[32], want[32], got[64];
                int kl = key_of(key, s, k), wl = snprintf(want, sizeof want, "v%d.%d", s, k), present = 0, len = 0;
                assert_int_equal(api_get(tr, key, kl, 0, &present, got, sizeof got, &len), 0);
                assert_true(present);
                assert_int_equal(len, wl);
                assert_memory_equal(got, want, (size_t)wl);
                assert_true(cache_count(db) <= bound);
            }
        }
        fdb_transaction_destroy(tr);
    }
}

/* A range read over all shards, forwards and in reverse, in small batches: each get_range
 * call stops at a shard boundary at the latest (more = 1), the next one goes on from there. */
static void read_whole_range(FDBDatabase *db, size_t bound)
{
    for (int reverse = 0; reverse < 2; reverse++) {
        FDBTransaction *tr;
        assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
        char begin[64] = "lc/", end[64] = "lc0";
        int bl = 3, el = 3, got = 0, more = 1;
        for (int calls = 0; more; calls++) {
            assert_true(calls < 1000);
            FDBFuture *f = fdb_transaction_get_range(
                tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)begin, bl),
                FDB_KEYSEL_FIRST_GREATER_OR_EQUAL((const uint8_t *)end, el), 0, 0, FDB_STREAMING_MODE_SMALL,
                calls + 1, 0, reverse);
            assert_int_equal(api_wait(f), 0);
            const FDBKeyValue *kv;
            int n;
            assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
            for (int i = 0; i < n; i++, got++) {
                int j = reverse ? SHARDS * KEYS_PER_SHARD - 1 - got : got;
                char want[32];
                int wl = key_of(want, j / KEYS_PER_SHARD, j % KEYS_PER_SHARD);
                assert_true(j >= 0 && j < SHARDS * KEYS_PER_SHARD);
                assert_int_equal(kv[i].key_length, wl);
                assert_memory_equal(kv[i].key, want, (size_t)wl);
            }
            if (n > 0 && more) { /* go on after (before, in reverse) the last key */
                const FDBKeyValue *last = &kv[n - 1];
                if (reverse) {
                    memcpy(end, last->key, (size_t)last->key_length);
                    el = last->key_length;
                } else {
                    memcpy(begin, last->key, (size_t)last->key_length);
                    begin[last->key_length] = 0;
                    bl = last->key_length + 1;
                }
            }
            fdb_future_destroy(f);
            assert_true(cache_count(db) <= bound);
        }
        assert_int_equal(got, SHARDS * KEYS_PER_SHARD);
        fdb_transaction_destroy(tr);
    }
}

static void test_small_bound_reads_stay_correct_and_bounded(void **state)
{
    (void)state;
    write_all();
    FDBDatabase *db = open_db(BOUND);
    read_every_key(db, BOUND);
    read_whole_range(db, BOUND);
    assert_true(cache_count(db) >= 1);
    fdb_database_destroy(db);
}

/* Bound 0 (allowed, as libfdb_c): only the shard last looked up stays, reads still work. */
static void test_bound_zero(void **state)
{
    (void)state;
    FDBDatabase *db = open_db(0);
    read_every_key(db, 1);
    read_whole_range(db, 1);
    fdb_database_destroy(db);
}

/* The default bound keeps every shard met; out-of-range values are refused. (Lowering the bound
 * takes effect at the next insert: test_location_cache checks that.) */
static void test_default_bound_keeps_every_shard(void **state)
{
    (void)state;
    FDBDatabase *db = open_db(-1);
    read_every_key(db, SIZE_MAX);
    assert_true(cache_count(db) >= SHARDS);
    int64_t bad = -1;
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_LOCATION_CACHE_SIZE, (const uint8_t *)&bad, 8), 2006);
    bad = (int64_t)INT32_MAX + 1;
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_LOCATION_CACHE_SIZE, (const uint8_t *)&bad, 8), 2006);
    assert_int_equal(fdb_database_set_option(db, FDB_DB_OPTION_LOCATION_CACHE_SIZE, (const uint8_t *)&bad, 4), 2006);
    fdb_database_destroy(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_bound_reads_stay_correct_and_bounded),
        cmocka_unit_test(test_bound_zero),
        cmocka_unit_test(test_default_bound_keeps_every_shard),
    };
    return cmocka_run_group_tests_name("api_location_cache", tests, group_setup, group_teardown);
}
