/* The client's peer table (src/client/net.c): one peer per (address, port, TLS mark), found
 * again by hash among thousands; peers with no reference and no waiting request are forgotten
 * after about 2 s (CONNECTION_MONITOR_UNREFERENCED_CLOSE_DELAY) by the network thread's 1 s
 * heartbeat, referenced ones stay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "event_loop.h"
#include "network_address.h"
#include "net.h"

enum { N = 3000 };

static cfdb_network_address addr_n(int i, bool tls)
{
    return cfdb_network_address_ipv4(0x7f000000u | (uint32_t)(i / 1000 + 1) << 8 | (uint32_t)(i % 250),
                                     (uint16_t)(4500 + i % 7), tls ? CFDB_ADDR_FLAG_TLS : 0);
}

/* Runs the loop for at least ms milliseconds (the heartbeat sweeps once a second). */
static void run_for(cfdb_client *cl, uint64_t ms)
{
    uint64_t end = cfdb_monotonic_ns() + ms * 1000000ull;
    while (cfdb_monotonic_ns() < end) {
        cfdb_loop_run_once(cfdb_client_loop(cl), 100000000ull);
        assert_int_equal(cfdb_loop_wait_error(cfdb_client_loop(cl)), 0);
    }
}

static void test_lookup_by_hash_and_forgetting(void **state)
{
    (void)state;
    cfdb_client *cl = cfdb_client_create();
    assert_non_null(cl);
    static cfdb_peer *peers[N];
    for (int i = 0; i < N; i++) {
        cfdb_network_address a = addr_n(i, false);
        peers[i] = cfdb_client_peer(cl, &a);
        assert_non_null(peers[i]);
    }
    assert_int_equal(cfdb_client_peer_count(cl), N);
    for (int i = 0; i < N; i++) {
        cfdb_network_address a = addr_n(i, false), t = addr_n(i, true);
        assert_ptr_equal(cfdb_client_peer(cl, &a), peers[i]);
        assert_ptr_not_equal(cfdb_client_peer(cl, &t), peers[i]); /* :tls is another peer */
    }
    assert_int_equal(cfdb_client_peer_count(cl), 2 * N);
    char text[96];
    cfdb_peer_address(peers[1], text, sizeof text);
    assert_string_equal(text, "127.0.1.1:4501");
    uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
    cfdb_network_address a6 = { .ip = { .tag = 2, .v6 = { v6, 16 } }, .port = 4500 };
    cfdb_peer *p6 = cfdb_client_peer(cl, &a6);
    assert_non_null(p6);
    assert_ptr_equal(cfdb_client_peer(cl, &a6), p6);
    cfdb_peer_address(p6, text, sizeof text);
    assert_string_equal(text, "[2001:db8::1]:4500");

    /* every third peer referenced: the others go after ~2 s without use */
    for (int i = 0; i < N; i += 3)
        cfdb_peer_ref(peers[i]);
    run_for(cl, 3300);
    assert_int_equal(cfdb_client_peer_count(cl), N / 3);
    for (int i = 0; i < N; i += 3) {
        cfdb_network_address a = addr_n(i, false);
        assert_ptr_equal(cfdb_client_peer(cl, &a), peers[i]); /* still the same peer */
    }
    assert_int_equal(cfdb_client_peer_count(cl), N / 3);
    for (int i = 0; i < N; i += 3)
        cfdb_peer_unref(peers[i]);
    run_for(cl, 3300);
    assert_int_equal(cfdb_client_peer_count(cl), 0);
    cfdb_client_destroy(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_by_hash_and_forgetting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
