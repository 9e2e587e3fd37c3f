/* Wire primitives: UID, protocol versions, ConnectPacket, framing with XXH3, adjusted
 * endpoint tokens, network addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "connect_packet.h"
#include "endpoint.h"
#include "frame.h"
#include "network_address.h"
#include "protocol_version.h"
#include "wire_errors.h"

static void test_uid(void **state)
{
    cfdb_uid u = { 0x0123456789abcdefull, 0xfedcba9876543210ull }, v;
    char buf[33];
    assert_string_equal(cfdb_uid_format(u, buf), "0123456789abcdeffedcba9876543210");
    assert_int_equal(cfdb_uid_parse(buf, &v), 0);
    assert_true(cfdb_uid_eq(u, v));
    assert_int_equal(cfdb_uid_parse("xyz", &v), 1044);
    assert_int_equal(cfdb_uid_parse("0123456789abcdeffedcba987654321g", &v), 1044);
    assert_int_equal(cfdb_uid_parse("0123456789abcdeffedcba987654321/", &v), 1044);
    uint8_t raw[16];
    cfdb_uid_store(raw, u);
    assert_int_equal(raw[0], 0xef); /* little-endian first */
    assert_int_equal(raw[8], 0x10);
    assert_true(cfdb_uid_eq(cfdb_uid_load(raw), u));
}

static void test_protocol_versions(void **state)
{
    assert_true(CFDB_PROTOCOL_CONNECT_VERSION == 0x1FDB00B073000000ull);
    assert_true(cfdb_protocol_peer_exact(0x1FDB00B073000000ull));
    assert_false(cfdb_protocol_peer_exact(0x0FDB00B073000000ull)); /* no serializer flag */
    assert_false(cfdb_protocol_peer_exact(0x1FDB00B073000001ull)); /* low bits differ */
    assert_true(cfdb_protocol_is_compatible(0x1FDB00B073000001ull, CFDB_PROTOCOL_VERSION));
    assert_false(cfdb_protocol_is_compatible(0x1FDB00B072000000ull, CFDB_PROTOCOL_VERSION));
    assert_false(cfdb_protocol_is_compatible(0x1FDB00B074000000ull, CFDB_PROTOCOL_VERSION));
}

static void test_connect_packet(void **state)
{
    /* the guide's example: a server listening on 10.0.0.2:4500, connection id 1 */
    static const uint8_t server[44] = { 0x28, 0, 0, 0, 0, 0, 0, 0x73, 0xb0, 0x00, 0xdb, 0x1f, 0x94, 0x11,
                                        1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0x0a };
    cfdb_connect_packet p;
    size_t used = 99;
    assert_int_equal(cfdb_connect_packet_decode(server, sizeof server, &p, &used), 0);
    assert_int_equal(used, 44);
    assert_true(p.protocol_version == 0x1FDB00B073000000ull);
    assert_int_equal(p.canonical_port, 4500);
    assert_int_equal(p.connection_id, 1);
    assert_int_equal(p.canonical_ip4, 0x0a000002);
    uint8_t out[44];
    assert_int_equal(cfdb_connect_packet_encode(&p, out), 44);
    assert_memory_equal(out, server, 44);
    /* incomplete input asks for more; impossible lengths are errors */
    for (size_t n = 0; n < 44; n++) {
        used = 99;
        assert_int_equal(cfdb_connect_packet_decode(server, n, &p, &used), 0);
        assert_int_equal(used, 0);
    }
    uint8_t bad[44];
    memcpy(bad, server, 44);
    bad[0] = 0xff;
    bad[1] = 0xff;
    assert_int_equal(cfdb_connect_packet_decode(bad, sizeof bad, &p, &used), CFDB_WIRE_SERIALIZATION_FAILED);
    assert_int_equal(used, 0);
    bad[0] = 4;
    bad[1] = 0;
    assert_int_equal(cfdb_connect_packet_decode(bad, sizeof bad, &p, &used), CFDB_WIRE_SERIALIZATION_FAILED);
}

static void test_xxh3_vectors(void **state)
{
    assert_true(cfdb_frame_checksum("", 0) == 0x2D06800538D394C2ull);
    assert_true(cfdb_frame_checksum("abc", 3) == 0x78AF5F94892F3950ull);
}

/* The ping frame of the protocol guide (Part 1 §1.4), checksum computed by FDB's xxhash. */
static const uint8_t ping_frame[] = {
    0x48, 0, 0, 0, 0x73, 0x7b, 0x3e, 0x6e, 0x7b, 0x6b, 0x87, 0xad,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0, 0, 0, 0,
    0x14, 0, 0, 0, 0xc7, 0xd2, 0x47, 0x00, 0x06, 0x00, 0x08, 0x00, 0x04, 0x00, 0x06, 0x00,
    0x14, 0x00, 0x04, 0x00, 0x0c, 0, 0, 0, 0x04, 0, 0, 0, 0x14, 0, 0, 0,
    0x04, 0, 0, 0, 0x16, 0, 0, 0, 0xa0, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0x02, 0, 0, 0, 0x01, 0, 0, 0,
};

static void test_frames(void **state)
{
    cfdb_frame f;
    size_t used = 0;
    assert_int_equal(cfdb_frame_parse(ping_frame, sizeof ping_frame, true, &f, &used), 0);
    assert_int_equal(used, sizeof ping_frame);
    assert_true(cfdb_uid_eq(f.token, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET)));
    assert_int_equal(f.msg_len, 56);
    /* every prefix is "need more" */
    for (size_t n = 0; n < sizeof ping_frame; n++) {
        used = 99;
        assert_int_equal(cfdb_frame_parse(ping_frame, n, true, &f, &used), 0);
        assert_int_equal(used, 0);
    }
    /* sealing the same message gives the same bytes */
    uint8_t out[sizeof ping_frame];
    memcpy(out + 28, ping_frame + 28, 56);
    assert_int_equal(cfdb_frame_seal(out, f.token, 56, true), sizeof ping_frame);
    assert_memory_equal(out, ping_frame, sizeof ping_frame);
    /* a flipped bit fails the checksum */
    uint8_t bad[sizeof ping_frame];
    memcpy(bad, ping_frame, sizeof bad);
    bad[60] ^= 1;
    assert_int_equal(cfdb_frame_parse(bad, sizeof bad, true, &f, &used), CFDB_WIRE_CHECKSUM_FAILED);
    assert_int_equal(used, 0);
    /* lengths: over PACKET_LIMIT, or too short to hold a token */
    uint32_t huge = CFDB_FRAME_PACKET_LIMIT + 1, tiny = 15;
    memcpy(bad, &huge, 4);
    assert_int_equal(cfdb_frame_parse(bad, sizeof bad, true, &f, &used), CFDB_WIRE_PLATFORM_ERROR);
    memcpy(bad, &tiny, 4);
    assert_int_equal(cfdb_frame_parse(bad, sizeof bad, true, &f, &used), CFDB_WIRE_PLATFORM_ERROR);
    /* without checksum (TLS): 4-byte header */
    uint8_t tls[4 + 16 + 56];
    memcpy(tls + 20, ping_frame + 28, 56);
    assert_int_equal(cfdb_frame_seal(tls, f.token, 56, false), sizeof tls);
    assert_int_equal(cfdb_frame_parse(tls, sizeof tls, false, &f, &used), 0);
    assert_int_equal(used, sizeof tls);
    assert_int_equal(f.msg_len, 56);
}

static void test_adjusted_tokens(void **state)
{
    cfdb_uid base = { 0xa1a2a3a4a5a6a7a9ull, 0xb1b2b3b400000010ull };
    cfdb_uid t = cfdb_adjusted_token(base, 2);
    assert_true(t.first == 0xa1a2a3a6a5a6a7a9ull);
    assert_true(t.second == 0xb1b2b3b400000012ull);
    assert_true(cfdb_uid_eq(cfdb_adjusted_token(base, 0), base));
    /* the low 32 bits of second wrap without carrying into the high half */
    cfdb_uid w = cfdb_adjusted_token((cfdb_uid){ 1, 0x00000001ffffffffull }, 1);
    assert_true(w.second == 0x0000000100000000ull);
    assert_true(w.first == 0x0000000100000001ull);
    assert_true(cfdb_token_is_well_known(cfdb_well_known_token(4)));
}

static void test_network_addresses(void **state)
{
    cfdb_network_address a;
    uint8_t v6[16];
    char buf[80];
    assert_int_equal(cfdb_network_address_parse("127.0.0.1:4500", 14, &a, v6), 0);
    assert_int_equal(a.ip.tag, 1);
    assert_int_equal(a.ip.v4, 0x7f000001);
    assert_int_equal(a.port, 4500);
    cfdb_network_address_format(&a, buf, sizeof buf);
    assert_string_equal(buf, "127.0.0.1:4500");
    const char *tls = "10.1.2.3:4501:tls";
    assert_int_equal(cfdb_network_address_parse(tls, strlen(tls), &a, v6), 0);
    assert_int_equal(a.flags, CFDB_ADDR_FLAG_TLS);
    cfdb_network_address_format(&a, buf, sizeof buf);
    assert_string_equal(buf, tls);
    const char *six = "[::1]:4500";
    assert_int_equal(cfdb_network_address_parse(six, strlen(six), &a, v6), 0);
    assert_int_equal(a.ip.tag, 2);
    assert_int_equal(v6[15], 1);
    cfdb_network_address_format(&a, buf, sizeof buf);
    assert_string_equal(buf, six);
    const char *bad[] = { "", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "300.0.0.1:1", "1.2.3:4", "[::1:4500",
                          "host:4500", "1.2.3.4:45x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cfdb_network_address_parse(bad[i], strlen(bad[i]), &a, v6), 2104);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uid),           cmocka_unit_test(test_protocol_versions),
        cmocka_unit_test(test_connect_packet), cmocka_unit_test(test_xxh3_vectors),
        cmocka_unit_test(test_frames),        cmocka_unit_test(test_adjusted_tokens),
        cmocka_unit_test(test_network_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
