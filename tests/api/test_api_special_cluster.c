/* Special-key modules answered from cluster requests, against cfdb-server through fdb_c.h:
 *   - \xff\xff/worker_interfaces/ (7.3.77 WorkerInterfacesSpecialKeyImpl over NativeAPI's
 *     getWorkerInterfaces, fdbclient/ReadYourWrites.actor.cpp): one row per client worker of
 *     the cluster controller, key = prefix + NetworkAddress::toString() of its reboot stream,
 *     value = BinaryWriter::toValue(ClientWorkerInterface, IncludeVersion()). The expected
 *     bytes are derived by hand from 7.3.77's source:
 *       IncludeVersion writes the ProtocolVersion as a uint64: 0x0FDB00B073000000 (7.3);
 *       ClientWorkerInterface::serialize: reboot, profiler, setFailureInjection
 *       (fdbclient/include/fdbclient/ClientWorkerInterface.h), each RequestStream as its
 *       Endpoint; Endpoint binary form (fdbrpc/include/fdbrpc/FlowTransport.h): addresses
 *       (NetworkAddressList: address, Optional<NetworkAddress> secondaryAddress), token;
 *       NetworkAddress binary form (flow/include/flow/NetworkAddress.h): IPAddress (bool v6,
 *       uint32 v4), uint16 port, uint16 flags, then bool fromHostname (7.3 has the hostname
 *       flag); Optional: a bool then the value; UID: two uint64. So 8 + 3 * 27 = 89 bytes.
 *     The dev server's profiler and setFailureInjection streams are its worker's reboot
 *     endpoint adjusted by 1 and 2 (Endpoint::getAdjustedEndpoint: first + (i << 32), low 32
 *     bits of second + i), which the tokens show.
 *   - \xff\xff/metrics/health/ (7.3.77 HealthMetricsRangeImpl, healthMetricsToKVPairs): the
 *     GRV proxy's HealthMetrics as JSON rows. The dev server reports a one-process cluster with
 *     nothing queued: every lag and queue 0, so no health/aggregate row (libfdb_c writes it only
 *     when worstStorageDurabilityLag != 0); per storage server (its UID as in \xff/serverTag/,
 *     UID::toString = 32 hex digits) {"cpu_usage":0,"disk_usage":0,"storage_durability_lag":0,
 *     "storage_queue":0} (json_spirit: std::map key order, doubles as %.17g), and one
 *     log/<uid> {"log_queue":0}.
 *   - \xff\xff/metrics/data_distribution_stats/ (see test_data_distribution_stats). */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define WI "\xff\xff/worker_interfaces/"
#define SL(x) ((int)sizeof(x) - 1)

static int group_setup(void **state)
{
    (void)state;
    static const char *const args[] = { "--shards", "ddk005", NULL }; /* a shard begins at ddk005 */
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* The server's address "127.0.0.1:<port>" from its cluster file (desc:id@addr). */
static void server_address(char *out, size_t cap)
{
    FILE *f = fopen(g_env.server.cluster_file, "r");
    assert_non_null(f);
    char line[300];
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    char *at = strchr(line, '@');
    assert_non_null(at);
    at++;
    at[strcspn(at, ",\n")] = 0;
    assert_true(strlen(at) < cap);
    strcpy(out, at);
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void test_worker_interfaces(void **state)
{
    (void)state;
    char addr[64];
    server_address(addr, sizeof addr);
    unsigned port = (unsigned)atoi(strchr(addr, ':') + 1);
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, (const uint8_t *)WI, SL(WI), 0, 1,
                                             (const uint8_t *)"\xff\xff/worker_interfaces0",
                                             SL("\xff\xff/worker_interfaces0"), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 1);
    char want[96];
    int wl = snprintf(want, sizeof want, WI "%s", addr);
    assert_int_equal(kv[0].key_length, wl);
    assert_memory_equal(kv[0].key, want, (size_t)wl);

    const uint8_t *v = kv[0].value;
    assert_int_equal(kv[0].value_length, 89);
    assert_true(le(v, 8) == UINT64_C(0x0FDB00B073000000));
    uint64_t first = 0, second = 0;
    for (int i = 0; i < 3; i++) {
        const uint8_t *e = v + 8 + 27 * i;
        assert_int_equal(e[0], 0);                      /* IPAddress: not v6 */
        assert_true(le(e + 1, 4) == 0x7F000001u);       /* 127.0.0.1 */
        assert_int_equal((unsigned)le(e + 5, 2), port); /* port */
        assert_int_equal((int)le(e + 7, 2), 0);         /* flags: no TLS, public */
        assert_int_equal(e[9], 0);                      /* fromHostname */
        assert_int_equal(e[10], 0);                     /* no secondary address */
        uint64_t t1 = le(e + 11, 8), t2 = le(e + 19, 8);
        if (i == 0) {
            first = t1;
            second = t2;
            assert_true(first != 0 || second != 0);
        } else {
            assert_true(t1 == first + ((uint64_t)i << 32));
            assert_true(t2 == ((second & UINT64_C(0xffffffff00000000)) | (uint32_t)((uint32_t)second + (uint32_t)i)));
        }
    }

    /* the same row as a single-key read; a key in the module that is no worker is absent */
    int present, len;
    uint8_t buf[128];
    assert_int_equal(api_get(tr, want, wl, 0, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_int_equal(len, 89);
    assert_memory_equal(buf, v, 89);
    assert_int_equal(api_get(tr, WI "10.0.0.1:1", SL(WI "10.0.0.1:1"), 0, &present, buf, sizeof buf, &len), 0);
    assert_false(present);
    /* a range that misses the worker's key is empty */
    FDBFuture *g = fdb_transaction_get_range(tr, (const uint8_t *)WI "2", SL(WI "2"), 0, 1,
                                             (const uint8_t *)"\xff\xff/worker_interfaces0",
                                             SL("\xff\xff/worker_interfaces0"), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    assert_int_equal(api_wait(g), 0);
    assert_int_equal(fdb_future_get_keyvalue_array(g, &kv, &n, &more), 0);
    assert_int_equal(n, 0);
    fdb_future_destroy(g);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static int read_range(FDBTransaction *tr, const char *b, int bl, const char *e, int el, const FDBKeyValue **kv,
                      FDBFuture **f)
{
    *f = fdb_transaction_get_range(tr, (const uint8_t *)b, bl, 0, 1, (const uint8_t *)e, el, 0, 1, 0, 0,
                                   FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    assert_int_equal(api_wait(*f), 0);
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(*f, kv, &n, &more), 0);
    return n;
}

#define HM "\xff\xff/metrics/health/"
#define STORAGE_JSON "{\"cpu_usage\":0,\"disk_usage\":0,\"storage_durability_lag\":0,\"storage_queue\":0}"

static void test_health_metrics(void **state)
{
    (void)state;
    /* the storage servers' UIDs, from \xff/serverTag/<UID: two little-endian uint64> */
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0), 0);
    const FDBKeyValue *kv;
    FDBFuture *f;
    int ns = read_range(tr, "\xff/serverTag/", SL("\xff/serverTag/"), "\xff/serverTag0", SL("\xff/serverTag0"), &kv, &f);
    assert_true(ns >= 1 && ns <= 8);
    char want[8][96];
    for (int i = 0; i < ns; i++) {
        assert_int_equal(kv[i].key_length, SL("\xff/serverTag/") + 16);
        const uint8_t *u = kv[i].key + SL("\xff/serverTag/");
        snprintf(want[i], sizeof want[i], HM "storage/%016llx%016llx", (unsigned long long)le(u, 8),
                 (unsigned long long)le(u + 8, 8));
    }
    fdb_future_destroy(f);
    /* key order of the expected rows (the UIDs' hex order is their key order) */
    for (int i = 0; i < ns; i++)
        for (int j = i + 1; j < ns; j++)
            if (strcmp(want[j], want[i]) < 0) {
                char t[96];
                strcpy(t, want[i]);
                strcpy(want[i], want[j]);
                strcpy(want[j], t);
            }
    fdb_transaction_reset(tr);

    int n = read_range(tr, HM, SL(HM), "\xff\xff/metrics/health0", SL("\xff\xff/metrics/health0"), &kv, &f);
    assert_int_equal(n, 1 + ns);
    /* log/<uid> first: 32 lowercase hex digits, {"log_queue":0} */
    assert_int_equal(kv[0].key_length, SL(HM "log/") + 32);
    assert_memory_equal(kv[0].key, HM "log/", SL(HM "log/"));
    for (int i = SL(HM "log/"); i < kv[0].key_length; i++)
        assert_non_null(strchr("0123456789abcdef", kv[0].key[i]));
    assert_int_equal(kv[0].value_length, SL("{\"log_queue\":0}"));
    assert_memory_equal(kv[0].value, "{\"log_queue\":0}", SL("{\"log_queue\":0}"));
    for (int i = 0; i < ns; i++) {
        assert_int_equal(kv[1 + i].key_length, (int)strlen(want[i]));
        assert_memory_equal(kv[1 + i].key, want[i], strlen(want[i]));
        assert_int_equal(kv[1 + i].value_length, SL(STORAGE_JSON));
        assert_memory_equal(kv[1 + i].value, STORAGE_JSON, SL(STORAGE_JSON));
    }
    fdb_future_destroy(f);

    /* the aggregate alone: absent while the worst durability lag is 0 */
    n = read_range(tr, HM "aggregate", SL(HM "aggregate"), HM "aggregate\x00", SL(HM "aggregate\x00"), &kv, &f);
    assert_int_equal(n, 0);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    /* one storage server's row as a single-key read, on a database handle of its own: the
     * handle's health cache is empty, so the read asks detailed (on this handle, a detailed
     * read 0.5..5 s after the detailed answer above would ask without detail and find no
     * per-process rows: test_api_special_modules checks that) */
    FDBDatabase *db2;
    assert_int_equal(fdb_create_database(g_env.server.cluster_file, &db2), 0);
    assert_int_equal(fdb_database_create_transaction(db2, &tr), 0);
    int present, len;
    char buf[256];
    assert_int_equal(api_get(tr, want[0], (int)strlen(want[0]), 0, &present, buf, sizeof buf, &len), 0);
    assert_true(present);
    assert_int_equal(len, SL(STORAGE_JSON));
    fdb_transaction_destroy(tr);
    fdb_database_destroy(db2);
}

#define DD "\xff\xff/metrics/data_distribution_stats/"

/* Every shard's row; returns the sum of shard_bytes, checking each row's form; *at gets the
 * shard_bytes of the shard beginning at ddk005. */
static long long dd_total(int *rows, long long *at)
{
    FDBTransaction *tr = api_tr();
    const FDBKeyValue *kv;
    FDBFuture *f;
    int n = read_range(tr, DD, SL(DD), DD "\xff\xff", SL(DD "\xff\xff"), &kv, &f);
    assert_true(n >= 1);
    /* the first shard begins at "" */
    assert_int_equal(kv[0].key_length, SL(DD));
    long long total = 0;
    for (int i = 0; i < n; i++) {
        assert_true(kv[i].key_length >= SL(DD));
        assert_memory_equal(kv[i].key, DD, SL(DD));
        char v[128];
        assert_true(kv[i].value_length < (int)sizeof v);
        memcpy(v, kv[i].value, (size_t)kv[i].value_length);
        v[kv[i].value_length] = 0;
        long long bytes = -1;
        int used = 0;
        assert_int_equal(sscanf(v, "{\"shard_bytes\":%lld,\"shard_bytes_per_ksecond\":0}%n", &bytes, &used), 1);
        assert_int_equal(used, kv[i].value_length);
        assert_true(bytes >= 0);
        total += bytes;
        if (kv[i].key_length == SL(DD "ddk005") && memcmp(kv[i].key, DD "ddk005", SL(DD "ddk005")) == 0)
            *at = bytes;
    }
    *rows = n;
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return total;
}

/* \xff\xff/metrics/data_distribution_stats/ (7.3.77 DDStatsRangeImpl): one row per shard, key
 * the prefix + the shard's begin key, value {"shard_bytes":N,"shard_bytes_per_ksecond":N}
 * (json_spirit, key order); the dev server's shard_bytes is the bytes of keys and values
 * stored in the shard, so writing ten 6-byte keys with 100-byte values adds exactly 1060,
 * half of it to the shard the server was told to begin at ddk005. */
static void test_data_distribution_stats(void **state)
{
    (void)state;
    int rows0, rows1;
    long long at0 = -1, at1 = -1;
    long long before = dd_total(&rows0, &at0);
    assert_true(rows0 >= 2 && at0 >= 0);
    char key[8], val[100];
    memset(val, 'v', sizeof val);
    FDBTransaction *tr = api_tr();
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof key, "ddk%03d", i);
        fdb_transaction_set(tr, (const uint8_t *)key, 6, (const uint8_t *)val, sizeof val);
    }
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    long long after = dd_total(&rows1, &at1);
    assert_int_equal(rows1, rows0);
    assert_int_equal(after - before, 1060);
    assert_int_equal(at1 - at0, 530); /* ddk005..ddk009 are in the shard beginning at ddk005 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_interfaces),
        cmocka_unit_test(test_health_metrics),
        cmocka_unit_test(test_data_distribution_stats),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
