/* The exclusion messages and values (src/wire/msg_exclusion.c), against bytes derived by hand
 * from FoundationDB 7.3.77:
 *  - ExclusionSafetyCheckReply (CommitProxyInterface.h 696-707: file_identifier 11,
 *    serializer(safe)) as a ReplyPromise sends it: ErrorOr<EnsureTable<T>>, file id
 *    (2 << 24) | 11 (flow/include/flow/FileIdentifier.h ComposedIdentifier, depth 0 -> bit 24);
 *  - ExclusionSafetyCheckRequest (same file 709-721: 13852702 = 0xD3601E,
 *    serializer(exclusions, reply)) with one AddressExclusion (flow/include/flow/
 *    NetworkAddress.h 168-207: serializer(ip, port), port an int) 10.1.2.3:4500;
 *  placement (flow/flat_buffers.cpp generate_vtable): one slot per member in serialize()
 *  order, a union takes a u8 tag slot then a u32 offset slot, fields placed by size
 *  descending (ties in member order) from table+4, table size = end; vtables
 *  {vtable bytes, table bytes, slots...}; a table's soffset = table - vtable;
 *  - \xff/logs values (SystemData.cpp logsValue 498-513, BinaryWriter): version, int32 count,
 *    UID (two LE uint64), bool isV6, uint32 IP, uint16 port, uint16 flags[, bool fromHostname
 *    from 0x0FDB00B071010000].
 * And the decoders' bounds: every truncation and every single-bit flip of a valid
 * \xff/serverList/ and \xff/logs value decodes or fails with 1044, never reads past the end
 * (the sanitizer builds run this too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "exclusion.h"
#include "network_address.h"
#include "protocol_version.h"

static const uint8_t k_reply[48] = {
    0x10, 0x00, 0x00, 0x00, /* 0: root table at 16 */
    0x0b, 0x00, 0x00, 0x02, /* 4: file id 0x0200000B */
    /* 8: ErrorOr's vtable: 8 bytes, table 9, tag slot @8, offset slot @4 */
    0x08, 0x00, 0x09, 0x00, 0x08, 0x00, 0x04, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 16: root table, vtable at 16 - 8 */
    0x10, 0x00, 0x00, 0x00, /* 20: the value: 20 + 16 = 36 */
    0x02, 0x00, 0x00, 0x00, /* 24: tag 2 (the value, not an Error), padding */
    /* 28: ExclusionSafetyCheckReply's vtable: 6 bytes, table 5, safe @4; 2 bytes padding */
    0x06, 0x00, 0x05, 0x00, 0x04, 0x00, 0x00, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 36: the reply table, vtable at 28 */
    0x01, 0x00, 0x00, 0x00, /* 40: safe = true, padding */
    0x00, 0x00, 0x00, 0x00, /* 44: the message padded to 8 */
};

static const uint8_t k_request[128] = {
    0x10, 0x00, 0x00, 0x00, /* 0: root at 16 */
    0x1e, 0x60, 0xd3, 0x00, /* 4: 13852702 */
    0x06, 0x00, 0x08, 0x00, 0x04, 0x00, 0x00, 0x00, /* 8: root vtable {6, 8, @4} + padding */
    0x08, 0x00, 0x00, 0x00, /* 16: root table, vtable at 8 */
    0x0c, 0x00, 0x00, 0x00, /* 20: the request at 32 */
    /* 24: ExclusionSafetyCheckRequest's vtable: exclusions @4, reply @8, table 12 */
    0x08, 0x00, 0x0c, 0x00, 0x04, 0x00, 0x08, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 32: the request table, vtable at 24 */
    0x08, 0x00, 0x00, 0x00, /* 36: exclusions at 44 */
    0x44, 0x00, 0x00, 0x00, /* 40: reply at 40 + 68 = 108 */
    0x01, 0x00, 0x00, 0x00, /* 44: one exclusion */
    0x0c, 0x00, 0x00, 0x00, /* 48: it is at 60 */
    /* 52: AddressExclusion's vtable: ip @4, port @8, table 12 */
    0x08, 0x00, 0x0c, 0x00, 0x04, 0x00, 0x08, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 60: the exclusion, vtable at 52 */
    0x10, 0x00, 0x00, 0x00, /* 64: ip at 80 */
    0x94, 0x11, 0x00, 0x00, /* 68: port 4500 */
    /* 72: IPAddress's vtable: its variant's tag @8, offset @4, table 9 */
    0x08, 0x00, 0x09, 0x00, 0x08, 0x00, 0x04, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 80: IPAddress, vtable at 72 */
    0x08, 0x00, 0x00, 0x00, /* 84: the uint32 alternative at 92 */
    0x01, 0x00, 0x00, 0x00, /* 88: tag 1 (uint32: IPv4), padding */
    0x03, 0x02, 0x01, 0x0a, /* 92: 10.1.2.3 as the host-order integer 0x0A010203 */
    0x06, 0x00, 0x14, 0x00, 0x04, 0x00, 0x00, 0x00, /* 96: ReplyPromise's vtable {6, 20, token @4} */
    0x00, 0x00, 0x00, 0x00, /* 104: padding (the UID aligns to 8) */
    0x0c, 0x00, 0x00, 0x00, /* 108: ReplyPromise, vtable at 96 */
    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* 112: token.first */
    0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, /* 120: token.second */
};

static void test_reply_bytes(void **state)
{
    (void)state;
    fb_writer w;
    fb_writer_init(&w, 0);
    cfdb_exclusion_safety_check_reply r = { true };
    assert_int_equal(fb_encode(&w, &cfdb_msg_exclusion_safety_check_reply, &r, 0), 0);
    assert_int_equal(fb_writer_message_len(&w), sizeof k_reply);
    assert_memory_equal(fb_writer_message(&w), k_reply, sizeof k_reply);
    fb_writer_free(&w);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_exclusion_safety_check_reply d = { false };
    cfdb_reply_error err = 1;
    assert_int_equal(fb_decode(&cfdb_msg_exclusion_safety_check_reply, k_reply, sizeof k_reply, &d, &err, &a), 0);
    assert_int_equal(err, 0);
    assert_true(d.safe);
    cfdb_arena_free(&a);
}

static void test_request_bytes(void **state)
{
    (void)state;
    cfdb_address_exclusion e = { 0 };
    e.ip.tag = 1;
    e.ip.v4 = 0x0A010203u;
    e.port = 4500;
    cfdb_exclusion_safety_check_request q;
    memset(&q, 0, sizeof q);
    q.exclusions.items = &e;
    q.exclusions.count = 1;
    q.reply.token.first = 0x1122334455667788ull;
    q.reply.token.second = 0x99aabbccddeeff00ull;
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &cfdb_msg_exclusion_safety_check_request, &q, 0), 0);
    assert_int_equal(fb_writer_message_len(&w), sizeof k_request);
    assert_memory_equal(fb_writer_message(&w), k_request, sizeof k_request);
    fb_writer_free(&w);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_exclusion_safety_check_request d;
    memset(&d, 0, sizeof d);
    assert_int_equal(fb_decode(&cfdb_msg_exclusion_safety_check_request, k_request, sizeof k_request, &d, NULL, &a), 0);
    assert_int_equal(d.exclusions.count, 1);
    assert_int_equal(d.exclusions.items[0].ip.tag, 1);
    assert_int_equal(d.exclusions.items[0].ip.v4, 0x0A010203u);
    assert_int_equal(d.exclusions.items[0].port, 4500);
    assert_true(d.reply.token.first == q.reply.token.first && d.reply.token.second == q.reply.token.second);
    /* every truncation is refused */
    for (size_t n = 0; n < sizeof k_request; n++) {
        memset(&d, 0, sizeof d);
        assert_int_not_equal(fb_decode(&cfdb_msg_exclusion_safety_check_request, k_request, n, &d, NULL, &a), 0);
    }
    cfdb_arena_free(&a);
}

static void test_matches(void **state)
{
    (void)state;
    cfdb_address_exclusion machine, proc;
    memset(&machine, 0, sizeof machine);
    machine.ip.tag = 1;
    machine.ip.v4 = 0x0A010203u;
    proc = machine;
    proc.port = 4500;
    cfdb_network_address at = cfdb_network_address_ipv4(0x0A010203u, 4500, 0);
    cfdb_network_address other_port = cfdb_network_address_ipv4(0x0A010203u, 4501, 0);
    cfdb_network_address other_ip = cfdb_network_address_ipv4(0x0A010204u, 4500, 0);
    assert_true(cfdb_exclusion_matches(&machine, &at));
    assert_true(cfdb_exclusion_matches(&machine, &other_port));
    assert_false(cfdb_exclusion_matches(&machine, &other_ip));
    assert_true(cfdb_exclusion_matches(&proc, &at));
    assert_false(cfdb_exclusion_matches(&proc, &other_port));
}

/* logsValue(withLogsValue): one log 10.1.2.3:4500 (flags 0), no old logs */
static const uint8_t k_logs[41] = {
    0x01, 0x00, 0x01, 0x62, 0xb0, 0x00, 0xdb, 0x0f, /* 0x0FDB00B062010001 */
    0x01, 0x00, 0x00, 0x00,                         /* one current log */
    0x01, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, /* UID(1, 2) */
    0x00,                                           /* not v6 */
    0x03, 0x02, 0x01, 0x0a,                         /* 10.1.2.3 */
    0x94, 0x11, 0x00, 0x00,                         /* port, flags */
    0x00, 0x00, 0x00, 0x00,                         /* no old logs */
};

static void test_logs_value(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_log_entry log;
    log.id.first = 1;
    log.id.second = 2;
    log.address = cfdb_network_address_ipv4(0x0A010203u, 4500, 0);
    cfdb_logs_value v = { &log, NULL, 1, 0 };
    cfdb_bytes out;
    assert_int_equal(cfdb_logs_value_encode(UINT64_C(0x0FDB00B062010001), &v, &a, &out), 0);
    assert_int_equal(out.len, sizeof k_logs);
    assert_memory_equal(out.ptr, k_logs, sizeof k_logs);
    cfdb_logs_value d;
    assert_int_equal(cfdb_logs_value_decode(cfdb_bytes_make(k_logs, sizeof k_logs), &a, &d), 0);
    assert_int_equal(d.nlogs, 1);
    assert_int_equal(d.nold, 0);
    assert_true(d.logs[0].id.first == 1 && d.logs[0].id.second == 2);
    assert_int_equal(d.logs[0].address.ip.v4, 0x0A010203u);
    assert_int_equal(d.logs[0].address.port, 4500);
    /* from the hostname flag's version on, a fromHostname byte follows the flags */
    assert_int_equal(cfdb_logs_value_encode(CFDB_PROTOCOL_VERSION, &v, &a, &out), 0);
    assert_int_equal(out.len, sizeof k_logs + 1);
    assert_int_equal(cfdb_logs_value_decode(out, &a, &d), 0);
    assert_int_equal(d.logs[0].address.port, 4500);
    /* cut short anywhere, or a huge count: 1044 */
    for (size_t n = 0; n < sizeof k_logs; n++)
        assert_int_equal(cfdb_logs_value_decode(cfdb_bytes_make(k_logs, n), &a, &d), CFDB_ERR_SERIALIZATION_FAILED);
    uint8_t big[sizeof k_logs];
    memcpy(big, k_logs, sizeof big);
    big[11] = 0x7f; /* 0x7f000001 logs in 29 bytes */
    assert_int_equal(cfdb_logs_value_decode(cfdb_bytes_make(big, sizeof big), &a, &d), CFDB_ERR_SERIALIZATION_FAILED);
    for (size_t bit = 0; bit < 8 * sizeof k_logs; bit++) {
        memcpy(big, k_logs, sizeof big);
        big[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = cfdb_logs_value_decode(cfdb_bytes_make(big, sizeof big), &a, &d);
        assert_true(rc == 0 || rc == CFDB_ERR_SERIALIZATION_FAILED);
    }
    cfdb_arena_free(&a);
}

static void test_server_list_value(void **state)
{
    (void)state;
    cfdb_storage_server_interface ssi;
    memset(&ssi, 0, sizeof ssi);
    ssi.uniqueID.first = 7;
    cfdb_locality_entry loc = { CFDB_BYTES_LIT("zoneid"), { 1, CFDB_BYTES_LIT("z1") } };
    ssi.locality._data.items = &loc;
    ssi.locality._data.count = 1;
    ssi.getValue.endpoint.addresses.address = cfdb_network_address_ipv4(0x0A010203u, 4500, 0);
    ssi.acceptingRequests = true;
    fb_writer w;
    fb_writer_init(&w, 8);
    assert_int_equal(fb_encode(&w, &cfdb_msg_storage_server_interface, &ssi, 0), 0);
    size_t n = fb_writer_message_len(&w) + 8;
    uint8_t *v = malloc(n), *bad = malloc(n);
    assert_non_null(v);
    assert_non_null(bad);
    uint64_t pv = CFDB_PROTOCOL_CONNECT_VERSION;
    memcpy(v, &pv, 8);
    memcpy(v + 8, fb_writer_message(&w), n - 8);
    fb_writer_free(&w);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_storage_server_interface d;
    assert_int_equal(cfdb_server_list_value_decode(cfdb_bytes_make(v, n), &a, &d), 0);
    assert_int_equal(d.getValue.endpoint.addresses.address.port, 4500);
    assert_int_equal(d.locality._data.count, 1);
    for (size_t k = 0; k < n; k++) { /* cut short: refused, unless only trailing padding went */
        int rc = cfdb_server_list_value_decode(cfdb_bytes_make(v, k), &a, &d);
        assert_true(rc == CFDB_ERR_SERIALIZATION_FAILED || (rc == 0 && k >= n - 7));
    }
    for (size_t bit = 0; bit < 8 * n; bit++) { /* one bit flipped */
        memcpy(bad, v, n);
        bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = cfdb_server_list_value_decode(cfdb_bytes_make(bad, n), &a, &d);
        assert_true(rc == 0 || rc == CFDB_ERR_SERIALIZATION_FAILED);
    }
    /* a value from before hasStorageInterfaceReadiness (BinaryReader form): not read */
    memcpy(bad, v, n);
    pv = UINT64_C(0x0FDB00B070000000);
    memcpy(bad, &pv, 8);
    assert_int_equal(cfdb_server_list_value_decode(cfdb_bytes_make(bad, n), &a, &d), CFDB_ERR_SERIALIZATION_FAILED);
    cfdb_arena_free(&a);
    free(v);
    free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_bytes),  cmocka_unit_test(test_request_bytes),
        cmocka_unit_test(test_matches),      cmocka_unit_test(test_logs_value),
        cmocka_unit_test(test_server_list_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
