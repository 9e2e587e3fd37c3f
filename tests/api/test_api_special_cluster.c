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
 *     bits of second + i), which the tokens show. */
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
    return api_env_setup(NULL);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_interfaces),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
