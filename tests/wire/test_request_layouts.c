/* Byte-pinned layouts of every request a FoundationDB 7.3 client sends.
 *
 * The independent reader (fdb_ref.c, written from FoundationDB 7.3.77's serialize() member
 * lists, not from src/wire) is checked three ways:
 *  1. hand-derived vtables: for each request and nested table, the vtable below was worked
 *     out by hand from the member list with FoundationDB's placement rule (generate_vtable,
 *     flow/flat_buffers.cpp: one slot per member in serialize() order, a union takes a u8 tag
 *     slot then a u32 offset slot; fields placed by size descending, ties in member order,
 *     each aligned to its size (UID: 8) from table+4; table size = end + 4). The test asserts
 *     the reader's own derivation agrees, and that every captured libfdb_c 7.3.77 request in
 *     tests/vectors/golden carries exactly these vtables;
 *  2. a hand-laid message: the 248-byte GetValueRequest of ../shared/protocol Part 3 §3.12
 *     (bytes FoundationDB's serializer produced), read field by field;
 *  3. cfdb's encoder: each request built in cfdb's C struct with a distinct value in every
 *     field, encoded by cfdb, then read back by the independent reader by field NAME. A
 *     description in src/wire with two fields swapped, a wrong width or a missing member
 *     fails here even though cfdb's decoder would agree with its own encoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "messages.h"
#include "fdb_ref.h"
#include "golden.h"

/* ---------------- 1. hand-derived vtables ---------------- */

typedef struct vt_case {
    const char *name;
    const ref_type *type;   /* NULL: the request of msg */
    const ref_msg *msg;
    uint16_t vt[20];        /* vtable bytes, table bytes, slots...; 0-terminated beyond */
} vt_case;

/* Worked out by hand (member list -> sorted placement); comments give the placement. */
static const vt_case k_vtables[] = {
    /* token(UID)@4 */
    { "ReplyPromise", &ref_t_reply_promise, NULL, { 6, 20, 4 } },
    /* traceID(16)@4 spanID(8)@20 m_Flags(1)@28 */
    { "SpanContext", &ref_t_span_context, NULL, { 10, 29, 4, 20, 28 } },
    /* string@4 */
    { "WipedString", &ref_t_wiped_string, NULL, { 6, 8, 4 } },
    /* tenantId(8)@4 token.off@12 token.tag@16 */
    { "TenantInfo", &ref_t_tenant_info, NULL, { 10, 17, 4, 16, 12 } },
    /* type@4 debugID.off@8 ccsv.off@12 cacheResult@16 debugID.tag@17 ccsv.tag@18 lockAware@19 */
    { "ReadOptions", &ref_t_read_options, NULL, { 18, 20, 4, 16, 17, 8, 18, 12, 19 } },
    /* key@4 offset@8 orEqual@12 */
    { "KeySelectorRef", &ref_t_key_selector, NULL, { 10, 13, 4, 12, 8 } },
    { "KeyRangeRef", &ref_t_key_range, NULL, { 8, 12, 4, 8 } },
    /* param1@4 param2@8 type@12 */
    { "MutationRef", &ref_t_mutation, NULL, { 10, 13, 12, 4, 8 } },
    /* read_snapshot(8)@4; rcr@12 wcr@16 mutations@20 span.off@24 tenantIds.off@28;
     * report_conflicting_keys@32 lock_aware@33 span.tag@34 tenantIds.tag@35 */
    { "CommitTransactionRef", &ref_t_commit_transaction_ref, NULL, { 24, 36, 12, 16, 20, 4, 32, 33, 34, 24, 35, 28 } },
    /* writeCosts(8)@4 opsCount@12 clearIdxCosts@16 expensiveCostEstCount@20 */
    { "ClientTrCommitCostEstimation", &ref_t_commit_cost_estimation, NULL, { 12, 24, 12, 4, 16, 20 } },
    { "pair<int,uint64_t>", &ref_t_clear_idx_cost_pair, NULL, { 8, 16, 12, 4 } },
    { "pair<tag,uint32_t>", &ref_t_tag_count_pair, NULL, { 8, 12, 4, 8 } },
    { "StorageMetrics", &ref_t_storage_metrics, NULL, { 14, 44, 4, 12, 20, 28, 36 } },
    { "ClientVersionRef", &ref_t_client_version, NULL, { 10, 16, 4, 8, 12 } },
    /* addr.off@4 addr.tag@8 */
    { "IPAddress", &ref_t_ip_address, NULL, { 8, 9, 8, 4 } },
    /* ip@4 port@8 flags@10 fromHostname@12 */
    { "NetworkAddress", &ref_t_network_address, NULL, { 12, 13, 4, 8, 10, 12 } },
    { "Hostname", &ref_t_hostname, NULL, { 10, 13, 4, 8, 12 } },
    { "PingRequest", NULL, &ref_ping_request, { 6, 8, 4 } },
    { "ProtocolInfoRequest", NULL, &ref_protocol_info_request, { 6, 8, 4 } },
    { "StatusRequest", NULL, &ref_status_request, { 6, 8, 4 } },
    /* knownLeader(16)@4 key@20 reply@24 */
    { "GetLeaderRequest", NULL, &ref_get_leader_request, { 10, 28, 20, 4, 24 } },
    /* knownClientInfoID(16)@4; issues@20 supportedVersions@24 traceLogGroup@28 clusterKey@32
     * coordinators@36 reply@40 hostnames@44; internal@48 */
    { "OpenDatabaseCoordRequest", NULL, &ref_open_database_coord_request,
      { 22, 49, 20, 24, 28, 4, 32, 36, 40, 44, 48 } },
    /* lastKnown(8)@4 reply@12 */
    { "GlobalConfigRefreshRequest", NULL, &ref_global_config_refresh_request, { 8, 16, 4, 12 } },
    /* maxVersion(8)@4; transactionCount@12 flags@16 tags@20 debugID.off@24 reply@28 span@32;
     * debugID.tag@36 */
    { "GetReadVersionRequest", NULL, &ref_get_read_version_request, { 20, 37, 12, 16, 20, 36, 24, 28, 32, 4 } },
    /* minTenantVersion(8)@4; begin@12 end.off@16 limit@20 reply@24 span@28 tenant@32;
     * end.tag@36 reverse@37 */
    { "GetKeyServerLocationsRequest", NULL, &ref_get_key_server_locations_request,
      { 22, 38, 12, 36, 16, 20, 37, 24, 28, 32, 4 } },
    /* no 8-byte field: transaction@4 reply@8 flags@12 debugID.off@16 cce.off@20 tagSet.off@24
     * span@28 tenant@32 idempotencyId@36; debugID.tag@40 cce.tag@41 tagSet.tag@42 */
    { "CommitTransactionRequest", NULL, &ref_commit_transaction_request,
      { 28, 43, 4, 8, 12, 40, 16, 41, 20, 42, 24, 28, 32, 36 } },
    /* minTenantVersion(8)@4 reply@12 tenantName@16 */
    { "GetTenantIdRequest", NULL, &ref_get_tenant_id_request, { 10, 20, 12, 16, 4 } },
    /* reply@4 detailed@8 */
    { "GetHealthMetricsRequest", NULL, &ref_get_health_metrics_request, { 8, 9, 4, 8 } },
    /* commitVersion(8)@4 tenant@12 batchIndexHighByte@16 */
    { "ExpireIdempotencyIdRequest", NULL, &ref_expire_idempotency_id_request, { 10, 17, 4, 16, 12 } },
    /* version(8)@4; key@12 tags.off@16 reply@20 span@24 tenant@28 options.off@32 sslcv@36;
     * tags.tag@40 options.tag@41 (= Part 3 §3.12) */
    { "GetValueRequest", NULL, &ref_get_value_request, { 24, 42, 12, 4, 40, 16, 20, 24, 28, 41, 32, 36 } },
    { "GetKeyRequest", NULL, &ref_get_key_request, { 24, 42, 12, 4, 40, 16, 20, 24, 28, 41, 32, 36 } },
    /* version(8)@4; begin@12 end@16 limit@20 limitBytes@24 tags.off@28 reply@32 span@36
     * tenant@40 options.off@44 sslcv@48; tags.tag@52 options.tag@53 */
    { "GetKeyValuesRequest", NULL, &ref_get_key_values_request,
      { 30, 54, 12, 16, 4, 20, 24, 52, 28, 32, 36, 40, 53, 44, 48 } },
    /* version(8)@4; begin@12 end@16 mapper@20 limit@24 limitBytes@28 tags.off@32 reply@36
     * span@40 tenant@44 options.off@48 sslcv@52; tags.tag@56 options.tag@57 */
    { "GetMappedKeyValuesRequest", NULL, &ref_get_mapped_key_values_request,
      { 32, 58, 12, 16, 20, 4, 24, 28, 56, 32, 36, 40, 44, 57, 48, 52 } },
    /* version(8)@4; key@12 value.off@16 tags.off@20 debugID.off@24 reply@28 span@32 tenant@36;
     * value.tag@40 tags.tag@41 debugID.tag@42 */
    { "WatchValueRequest", NULL, &ref_watch_value_request, { 26, 43, 12, 40, 16, 4, 41, 20, 42, 24, 28, 32, 36 } },
    /* minVersion(8)@4; keys@12 min@16 max@20 reply@24 tenant@28 */
    { "WaitMetricsRequest", NULL, &ref_wait_metrics_request, { 16, 32, 12, 16, 20, 24, 28, 4 } },
    /* chunkSize(8)@4; keys@12 reply@16 tenant@20 */
    { "SplitRangeRequest", NULL, &ref_split_range_request, { 12, 24, 12, 4, 16, 20 } },
};
#define N_VT (sizeof k_vtables / sizeof k_vtables[0])

static unsigned vt_len(const uint16_t *vt)
{
    return vt[0] / 2;
}

static void vt_text(const uint16_t *vt, unsigned n, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%u", i ? "," : "", vt[i]);
}

static void test_hand_derived_vtables_match_the_rule(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_VT; i++) {
        const vt_case *c = &k_vtables[i];
        const ref_type *t = c->type ? c->type : c->msg->type;
        uint16_t got[66];
        unsigned n = ref_expected_vtable(t, got, 66);
        char a[256], b[256];
        vt_text(c->vt, vt_len(c->vt), a, sizeof a);
        vt_text(got, n, b, sizeof b);
        if (n != vt_len(c->vt) || memcmp(got, c->vt, n * 2) != 0)
            fail_msg("%s: hand-derived vtable %s, reader derives %s", c->name, a, b);
    }
    /* every request the reader knows has a hand-derived vtable here */
    for (unsigned m = 0; m < ref_msg_count; m++) {
        bool found = false;
        for (size_t i = 0; i < N_VT; i++)
            found |= k_vtables[i].msg == ref_msgs[m];
        if (!found)
            fail_msg("%s has no hand-derived vtable", ref_msgs[m]->name);
    }
}

static const vt_case *vt_for_msg(const ref_msg *m)
{
    for (size_t i = 0; i < N_VT; i++)
        if (k_vtables[i].msg == m)
            return &k_vtables[i];
    return NULL;
}

/* Every client-to-server frame of every capture reads cleanly, with the hand-derived
 * vtables, no unknown slots and zero padding. */
static void test_captured_requests_have_these_layouts(void **state)
{
    (void)state;
    char **names = golden_scenarios();
    assert_non_null(names);
    unsigned seen[32] = { 0 };
    size_t total = 0;
    for (size_t s = 0; names[s]; s++) {
        golden_capture cap;
        assert_int_equal(golden_load_frames(names[s], &cap), 0);
        for (size_t i = 0; i < cap.count; i++) {
            const golden_frame *g = &cap.frames[i];
            if (!g->c2s)
                continue;
            const ref_msg *m = ref_msg_by_file_id(ref_peek_file_id(g->msg, g->len));
            if (!m)
                fail_msg("%s frame %zu: client request with unknown file identifier %u", names[s], i,
                         ref_peek_file_id(g->msg, g->len));
            ref_doc d;
            if (ref_read(m, g->msg, g->len, &d) != 0)
                fail_msg("%s frame %zu (%s): %s", names[s], i, m->name, d.err);
            if (d.vt_mismatch || d.nonzero_pad)
                fail_msg("%s frame %zu (%s): %u vtables differ from the member list, %u tables with padding", names[s],
                         i, m->name, d.vt_mismatch, d.nonzero_pad);
            for (size_t k = 0; k < d.n; k++)
                if (strstr(d.e[k].path, "@extra_slots") || strcmp(d.e[k].value, "<absent>") == 0)
                    fail_msg("%s frame %zu (%s): %s = %s", names[s], i, m->name, d.e[k].path, d.e[k].value);
            const vt_case *c = vt_for_msg(m);
            char want[256];
            vt_text(c->vt, vt_len(c->vt), want, sizeof want);
            const char *got = ref_get(&d, "@vt");
            assert_non_null(got);
            if (strcmp(got, want) != 0)
                fail_msg("%s frame %zu: %s vtable %s, hand-derived %s", names[s], i, m->name, got, want);
            for (unsigned k = 0; k < ref_msg_count; k++)
                if (ref_msgs[k] == m)
                    seen[k]++;
            ref_doc_free(&d);
            total++;
        }
        golden_free(&cap);
    }
    golden_free_names(names);
    /* the captures hold these kinds (GetKeyRequest, GetTenantIdRequest, GetHealthMetricsRequest,
     * ExpireIdempotencyIdRequest are not captured) */
    const ref_msg *captured[] = { &ref_ping_request,
                                  &ref_protocol_info_request,
                                  &ref_get_leader_request,
                                  &ref_open_database_coord_request,
                                  &ref_status_request,
                                  &ref_global_config_refresh_request,
                                  &ref_get_read_version_request,
                                  &ref_get_key_server_locations_request,
                                  &ref_commit_transaction_request,
                                  &ref_get_value_request,
                                  &ref_get_key_values_request,
                                  &ref_get_mapped_key_values_request,
                                  &ref_watch_value_request,
                                  &ref_wait_metrics_request,
                                  &ref_split_range_request };
    for (size_t c = 0; c < sizeof captured / sizeof captured[0]; c++)
        for (unsigned k = 0; k < ref_msg_count; k++)
            if (ref_msgs[k] == captured[c] && seen[k] == 0)
                fail_msg("no captured %s", captured[c]->name);
    assert_true(total >= 100);
}

/* ---------------- 2. a hand-laid message ---------------- */

/* Part 3 §3.12 of ../shared/protocol: GetValueRequest key "hello", version 0x100000023, reply
 * token (0x1111111111111110, 0x2222222200000005), no tenant, empty version vector. */
static const char *const k_get_value_hex =
    "54000000" "82018100" "0000" "060008000400"
    "18002a000c00040028001000140018001c00290020002400" "060014000400" "0a001d00040014001c00"
    "0a001100040010000c00" "120014000400100011000800" "12000c001300"
    "4a000000" "04000000" "4c000000" "2300000001000000" "84000000" "00000000" "64000000" "40000000"
    "24000000" "00000000" "08000000" "00" "00" "0000"
    "10000000" "0000000000000000ffffffffffffffff"
    "64000000" "ffffffffffffffff" "00000000" "00" "00000000000000"
    "86000000" "00000000000000000000000000000000" "0000000000000000" "00" "000000"
    "ac000000" "10111111111111110500000022222222" "00000000"
    "05000000" "68656c6c6f" "000000";

static void expect(const ref_doc *d, const char *path, const char *value)
{
    const char *v = ref_get(d, path);
    if (!v)
        fail_msg("%s: no field %s", d->msg->name, path);
    if (strcmp(v, value) != 0)
        fail_msg("%s.%s: expected %s, read %s", d->msg->name, path, value, v);
}

static void test_hand_laid_get_value_request(void **state)
{
    (void)state;
    uint8_t msg[256];
    long n = ref_unhex(k_get_value_hex, msg, sizeof msg);
    assert_int_equal(n, 248);
    ref_doc d;
    if (ref_read(&ref_get_value_request, msg, (size_t)n, &d))
        fail_msg("%s", d.err);
    assert_int_equal(d.vt_mismatch, 0);
    expect(&d, "@vt", "24,42,12,4,40,16,20,24,28,41,32,36");
    expect(&d, "key", "x'68656c6c6f'");
    expect(&d, "version", "4294967331");
    expect(&d, "tags", "none");
    expect(&d, "reply.token", "11111111111111102222222200000005");
    expect(&d, "spanContext.traceID", "00000000000000000000000000000000");
    expect(&d, "spanContext.spanID", "0");
    expect(&d, "spanContext.m_Flags", "0");
    expect(&d, "tenantInfo.tenantId", "-1");
    expect(&d, "tenantInfo.token", "none");
    expect(&d, "options", "none");
    expect(&d, "ssLatestCommitVersions", "x'0000000000000000ffffffffffffffff'");
    assert_int_equal(d.n, 15); /* 4 vtables + 11 fields: nothing else */
    ref_doc_free(&d);
    /* one byte off: the version's low byte */
    msg[0x60] = 0x24;
    assert_int_equal(ref_read(&ref_get_value_request, msg, (size_t)n, &d), 0);
    expect(&d, "version", "4294967332");
    ref_doc_free(&d);
    /* a truncated message is refused, not read past its end */
    assert_int_not_equal(ref_read(&ref_get_value_request, msg, 200, &d), 0);
    ref_doc_free(&d);
}

/* ---------------- 3. cfdb's encoder, read back by name ---------------- */

static ref_doc encode_and_read(const fb_message *cm, const ref_msg *rm, const void *item)
{
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, cm, item, 0), 0);
    ref_doc d;
    if (ref_read(rm, fb_writer_message(&w), fb_writer_message_len(&w), &d))
        fail_msg("%s as encoded by cfdb: %s", rm->name, d.err);
    if (d.vt_mismatch || d.nonzero_pad)
        fail_msg("%s as encoded by cfdb: %u vtables differ from FoundationDB's, %u tables with non-zero padding",
                 rm->name, d.vt_mismatch, d.nonzero_pad);
    const vt_case *c = vt_for_msg(rm);
    char want[256];
    vt_text(c->vt, vt_len(c->vt), want, sizeof want);
    expect(&d, "@vt", want);
    fb_writer_free(&w);
    return d;
}

#define U(a, b) ((cfdb_uid){ (a), (b) })
static const cfdb_uid k_token = { 0x0102030405060708ull, 0x1112131415161718ull };
#define TOKEN_TEXT "01020304050607081112131415161718"
static const cfdb_span_context k_span = { { 0xa1a2a3a4a5a6a7a8ull, 0xb1b2b3b4b5b6b7b8ull }, 0xc1c2c3c4c5c6c7c8ull, 1 };

static void expect_span(const ref_doc *d, const char *prefix)
{
    char p[128];
    snprintf(p, sizeof p, "%s.traceID", prefix);
    expect(d, p, "a1a2a3a4a5a6a7a8b1b2b3b4b5b6b7b8");
    snprintf(p, sizeof p, "%s.spanID", prefix);
    expect(d, p, "13961937044701104072"); /* 0xc1c2c3c4c5c6c7c8 */
    snprintf(p, sizeof p, "%s.m_Flags", prefix);
    expect(d, p, "1");
}

static cfdb_tenant_info tenant(void)
{
    cfdb_tenant_info t;
    memset(&t, 0, sizeof t);
    t.tenantId = 0x0123456789;
    t.token.present = 1;
    t.token.value.str = CFDB_BYTES_LIT("tok");
    return t;
}

static void expect_tenant(const ref_doc *d, const char *prefix)
{
    char p[128];
    snprintf(p, sizeof p, "%s.tenantId", prefix);
    expect(d, p, "4886718345");
    snprintf(p, sizeof p, "%s.token.string", prefix);
    expect(d, p, "x'746f6b'");
}

static cfdb_opt_read_options options(void)
{
    cfdb_opt_read_options o;
    memset(&o, 0, sizeof o);
    o.present = 1;
    o.value.type = CFDB_READ_HIGH;
    o.value.cacheResult = true;
    o.value.debugID.present = 1;
    o.value.debugID.value = U(0x99, 0x98);
    o.value.consistencyCheckStartVersion.present = 1;
    o.value.consistencyCheckStartVersion.value = 777;
    o.value.lockAware = true;
    return o;
}

static void expect_options(const ref_doc *d)
{
    expect(d, "options", "present");
    expect(d, "options.type", "4");
    expect(d, "options.cacheResult", "true");
    expect(d, "options.debugID", "00000000000000990000000000000098");
    expect(d, "options.consistencyCheckStartVersion", "777");
    expect(d, "options.lockAware", "true");
}

static cfdb_opt_tag_set tags(void)
{
    static cfdb_bytes t[1];
    t[0] = CFDB_BYTES_LIT("tg");
    cfdb_opt_tag_set s;
    memset(&s, 0, sizeof s);
    s.present = 1;
    s.value.tags.items = t;
    s.value.tags.count = 1;
    return s;
}
#define TAGS_TEXT "x'027467'" /* TagSet blob: u8 length, bytes */

static cfdb_version_vector vv(void)
{
    cfdb_version_vector v = cfdb_version_vector_empty();
    v.maxVersion = 0x55;
    return v;
}
#define VV_TEXT "x'00000000000000005500000000000000'"

static void test_cfdb_storage_requests_by_name(void **state)
{
    (void)state;
    {
        cfdb_get_value_request r;
        memset(&r, 0, sizeof r);
        r.key = CFDB_BYTES_LIT("k1");
        r.version = 1001;
        r.tags = tags();
        r.reply.token = k_token;
        r.spanContext = k_span;
        r.tenantInfo = tenant();
        r.options = options();
        r.ssLatestCommitVersions = vv();
        ref_doc d = encode_and_read(&cfdb_msg_get_value_request, &ref_get_value_request, &r);
        expect(&d, "key", "x'6b31'");
        expect(&d, "version", "1001");
        expect(&d, "tags", TAGS_TEXT);
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_span(&d, "spanContext");
        expect_tenant(&d, "tenantInfo");
        expect_options(&d);
        expect(&d, "ssLatestCommitVersions", VV_TEXT);
        ref_doc_free(&d);
    }
    {
        cfdb_get_key_request r;
        memset(&r, 0, sizeof r);
        r.sel.key = CFDB_BYTES_LIT("sk");
        r.sel.orEqual = true;
        r.sel.offset = -7;
        r.version = 1002;
        r.tags = tags();
        r.reply.token = k_token;
        r.spanContext = k_span;
        r.tenantInfo = tenant();
        r.options = options();
        r.ssLatestCommitVersions = vv();
        ref_doc d = encode_and_read(&cfdb_msg_get_key_request, &ref_get_key_request, &r);
        expect(&d, "sel.key", "x'736b'");
        expect(&d, "sel.orEqual", "true");
        expect(&d, "sel.offset", "-7");
        expect(&d, "version", "1002");
        expect(&d, "tags", TAGS_TEXT);
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_span(&d, "spanContext");
        expect_tenant(&d, "tenantInfo");
        expect_options(&d);
        expect(&d, "ssLatestCommitVersions", VV_TEXT);
        ref_doc_free(&d);
    }
    for (int mapped = 0; mapped < 2; mapped++) {
        cfdb_get_mapped_key_values_request r; /* GetKeyValuesRequest is the same minus mapper */
        memset(&r, 0, sizeof r);
        r.begin.key = CFDB_BYTES_LIT("b");
        r.begin.orEqual = true;
        r.begin.offset = 3;
        r.end.key = CFDB_BYTES_LIT("e");
        r.end.orEqual = false;
        r.end.offset = -4;
        r.mapper = CFDB_BYTES_LIT("map");
        r.version = 1003;
        r.limit = 10;
        r.limitBytes = 80000;
        r.tags = tags();
        r.reply.token = k_token;
        r.spanContext = k_span;
        r.tenantInfo = tenant();
        r.options = options();
        r.ssLatestCommitVersions = vv();
        ref_doc d;
        if (mapped) {
            d = encode_and_read(&cfdb_msg_get_mapped_key_values_request, &ref_get_mapped_key_values_request, &r);
            expect(&d, "mapper", "x'6d6170'");
        } else {
            cfdb_get_key_values_request k;
            memset(&k, 0, sizeof k);
            k.begin = r.begin;
            k.end = r.end;
            k.version = r.version;
            k.limit = r.limit;
            k.limitBytes = r.limitBytes;
            k.tags = r.tags;
            k.reply = r.reply;
            k.spanContext = r.spanContext;
            k.tenantInfo = r.tenantInfo;
            k.options = r.options;
            k.ssLatestCommitVersions = r.ssLatestCommitVersions;
            d = encode_and_read(&cfdb_msg_get_key_values_request, &ref_get_key_values_request, &k);
        }
        expect(&d, "begin.key", "x'62'");
        expect(&d, "begin.orEqual", "true");
        expect(&d, "begin.offset", "3");
        expect(&d, "end.key", "x'65'");
        expect(&d, "end.orEqual", "false");
        expect(&d, "end.offset", "-4");
        expect(&d, "version", "1003");
        expect(&d, "limit", "10");
        expect(&d, "limitBytes", "80000");
        expect(&d, "tags", TAGS_TEXT);
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_span(&d, "spanContext");
        expect_tenant(&d, "tenantInfo");
        expect_options(&d);
        expect(&d, "ssLatestCommitVersions", VV_TEXT);
        ref_doc_free(&d);
    }
    {
        cfdb_watch_value_request r;
        memset(&r, 0, sizeof r);
        r.key = CFDB_BYTES_LIT("wk");
        r.value.present = 1;
        r.value.value = CFDB_BYTES_LIT("wv");
        r.version = 1004;
        r.tags = tags();
        r.debugID.present = 1;
        r.debugID.value = U(0x31, 0x32);
        r.reply.token = k_token;
        r.spanContext = k_span;
        r.tenantInfo = tenant();
        ref_doc d = encode_and_read(&cfdb_msg_watch_value_request, &ref_watch_value_request, &r);
        expect(&d, "key", "x'776b'");
        expect(&d, "value", "x'7776'");
        expect(&d, "version", "1004");
        expect(&d, "tags", TAGS_TEXT);
        expect(&d, "debugID", "00000000000000310000000000000032");
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_span(&d, "spanContext");
        expect_tenant(&d, "tenantInfo");
        ref_doc_free(&d);
    }
    {
        cfdb_wait_metrics_request r;
        memset(&r, 0, sizeof r);
        r.keys.begin = CFDB_BYTES_LIT("a");
        r.keys.end = CFDB_BYTES_LIT("z");
        r.min = (cfdb_storage_metrics){ 1, 2, 3, 4, 5 };
        r.max = (cfdb_storage_metrics){ -6, 7, 8, 9, 10 };
        r.reply.token = k_token;
        r.tenantInfo = tenant();
        r.minVersion = -2;
        ref_doc d = encode_and_read(&cfdb_msg_wait_metrics_request, &ref_wait_metrics_request, &r);
        expect(&d, "keys.begin", "x'61'");
        expect(&d, "keys.end", "x'7a'");
        expect(&d, "min.bytes", "1");
        expect(&d, "min.bytesWrittenPerKSecond", "2");
        expect(&d, "min.iosPerKSecond", "3");
        expect(&d, "min.bytesReadPerKSecond", "4");
        expect(&d, "min.opsReadPerKSecond", "5");
        expect(&d, "max.bytes", "-6");
        expect(&d, "max.bytesWrittenPerKSecond", "7");
        expect(&d, "max.iosPerKSecond", "8");
        expect(&d, "max.bytesReadPerKSecond", "9");
        expect(&d, "max.opsReadPerKSecond", "10");
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_tenant(&d, "tenantInfo");
        expect(&d, "minVersion", "-2");
        ref_doc_free(&d);
    }
    {
        cfdb_split_range_request r;
        memset(&r, 0, sizeof r);
        r.keys.begin = CFDB_BYTES_LIT("a");
        r.keys.end = CFDB_BYTES_LIT("a\0");
        r.keys.end.len = 2;
        r.chunkSize = 1000;
        r.reply.token = k_token;
        r.tenantInfo = tenant();
        ref_doc d = encode_and_read(&cfdb_msg_split_range_request, &ref_split_range_request, &r);
        /* a single-key range travels as (k\0, "") (FDBTypes.h:385) */
        expect(&d, "keys.begin", "x'6100'");
        expect(&d, "keys.end", "x''");
        expect(&d, "chunkSize", "1000");
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_tenant(&d, "tenantInfo");
        ref_doc_free(&d);
    }
}

static void test_cfdb_proxy_requests_by_name(void **state)
{
    (void)state;
    {
        cfdb_tag_count tc[1] = { { CFDB_BYTES_LIT("tag"), 5 } };
        cfdb_get_read_version_request r;
        memset(&r, 0, sizeof r);
        r.transactionCount = 3;
        r.flags = 0x08000001;
        r.tags.items = tc;
        r.tags.count = 1;
        r.debugID.present = 1;
        r.debugID.value = U(0x41, 0x42);
        r.reply.token = k_token;
        r.spanContext = k_span;
        r.maxVersion = 99;
        ref_doc d = encode_and_read(&cfdb_msg_get_read_version_request, &ref_get_read_version_request, &r);
        expect(&d, "transactionCount", "3");
        expect(&d, "flags", "134217729");
        expect(&d, "tags.count", "1");
        expect(&d, "tags[0].first", "x'746167'");
        expect(&d, "tags[0].second", "5");
        expect(&d, "debugID", "00000000000000410000000000000042");
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_span(&d, "spanContext");
        expect(&d, "maxVersion", "99");
        ref_doc_free(&d);
    }
    {
        cfdb_get_key_server_locations_request r;
        memset(&r, 0, sizeof r);
        r.begin = CFDB_BYTES_LIT("kb");
        r.end.present = 1;
        r.end.value = CFDB_BYTES_LIT("ke");
        r.limit = 100;
        r.reverse = true;
        r.reply.token = k_token;
        r.spanContext = k_span;
        r.tenant = tenant();
        r.minTenantVersion = 1005;
        ref_doc d =
            encode_and_read(&cfdb_msg_get_key_server_locations_request, &ref_get_key_server_locations_request, &r);
        expect(&d, "begin", "x'6b62'");
        expect(&d, "end", "x'6b65'");
        expect(&d, "limit", "100");
        expect(&d, "reverse", "true");
        expect(&d, "reply.token", TOKEN_TEXT);
        expect_span(&d, "spanContext");
        expect_tenant(&d, "tenant");
        expect(&d, "minTenantVersion", "1005");
        ref_doc_free(&d);
    }
    {
        cfdb_key_range rr[2] = { { CFDB_BYTES_LIT("r1"), CFDB_BYTES_LIT("r9") }, { CFDB_BYTES_LIT("s"), { NULL, 0 } } };
        static const uint8_t s0[] = { 's', 0 };
        rr[1].end = (cfdb_bytes){ s0, 2 };
        cfdb_key_range wr[1] = { { CFDB_BYTES_LIT("w1"), CFDB_BYTES_LIT("w2") } };
        cfdb_mutation mu[2] = { { CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("k"), CFDB_BYTES_LIT("v") },
                                { CFDB_MUT_ADD_VALUE, CFDB_BYTES_LIT("c"), CFDB_BYTES_LIT("\x01") } };
        int64_t tids[2] = { 7, 8 };
        cfdb_clear_idx_cost cic[1] = { { 2, 300 } };
        cfdb_commit_transaction_request r;
        memset(&r, 0, sizeof r);
        r.transaction.read_conflict_ranges.items = rr;
        r.transaction.read_conflict_ranges.count = 2;
        r.transaction.write_conflict_ranges.items = wr;
        r.transaction.write_conflict_ranges.count = 1;
        r.transaction.mutations.items = mu;
        r.transaction.mutations.count = 2;
        r.transaction.read_snapshot = 1006;
        r.transaction.report_conflicting_keys = true;
        r.transaction.lock_aware = false;
        r.transaction.spanContext.present = 1;
        r.transaction.spanContext.value = k_span;
        r.transaction.tenantIds.present = 1;
        r.transaction.tenantIds.value.items = tids;
        r.transaction.tenantIds.value.count = 2;
        r.reply.token = k_token;
        r.flags = 6;
        r.debugID.present = 1;
        r.debugID.value = U(0x51, 0x52);
        r.commitCostEstimation.present = 1;
        r.commitCostEstimation.value.opsCount = 11;
        r.commitCostEstimation.value.writeCosts = 12;
        r.commitCostEstimation.value.clearIdxCosts.items = cic;
        r.commitCostEstimation.value.clearIdxCosts.count = 1;
        r.commitCostEstimation.value.expensiveCostEstCount = 13;
        r.tagSet = tags();
        r.spanContext = k_span;
        r.tenantInfo = tenant();
        static const uint8_t idem[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
        r.idempotencyId = (cfdb_bytes){ idem, 16 };
        ref_doc d = encode_and_read(&cfdb_msg_commit_transaction_request, &ref_commit_transaction_request, &r);
        expect(&d, "transaction.read_conflict_ranges.count", "2");
        expect(&d, "transaction.read_conflict_ranges[0].begin", "x'7231'");
        expect(&d, "transaction.read_conflict_ranges[0].end", "x'7239'");
        expect(&d, "transaction.read_conflict_ranges[1].begin", "x'7300'"); /* single key: (k\0, "") */
        expect(&d, "transaction.read_conflict_ranges[1].end", "x''");
        expect(&d, "transaction.write_conflict_ranges.count", "1");
        expect(&d, "transaction.write_conflict_ranges[0].begin", "x'7731'");
        expect(&d, "transaction.write_conflict_ranges[0].end", "x'7732'");
        expect(&d, "transaction.mutations.count", "2");
        expect(&d, "transaction.mutations[0].type", "0");
        expect(&d, "transaction.mutations[0].param1", "x'6b'");
        expect(&d, "transaction.mutations[0].param2", "x'76'");
        expect(&d, "transaction.mutations[1].type", "2");
        expect(&d, "transaction.mutations[1].param1", "x'63'");
        expect(&d, "transaction.mutations[1].param2", "x'01'");
        expect(&d, "transaction.read_snapshot", "1006");
        expect(&d, "transaction.report_conflicting_keys", "true");
        expect(&d, "transaction.lock_aware", "false");
        expect(&d, "transaction.spanContext", "present");
        expect_span(&d, "transaction.spanContext");
        expect(&d, "transaction.tenantIds", "present");
        expect(&d, "transaction.tenantIds.count", "2");
        expect(&d, "transaction.tenantIds[0]", "7");
        expect(&d, "transaction.tenantIds[1]", "8");
        expect(&d, "reply.token", TOKEN_TEXT);
        expect(&d, "flags", "6");
        expect(&d, "debugID", "00000000000000510000000000000052");
        expect(&d, "commitCostEstimation.opsCount", "11");
        expect(&d, "commitCostEstimation.writeCosts", "12");
        expect(&d, "commitCostEstimation.clearIdxCosts[0].first", "2");
        expect(&d, "commitCostEstimation.clearIdxCosts[0].second", "300");
        expect(&d, "commitCostEstimation.expensiveCostEstCount", "13");
        expect(&d, "tagSet", TAGS_TEXT);
        expect_span(&d, "spanContext");
        expect_tenant(&d, "tenantInfo");
        expect(&d, "idempotencyId", "x'0102030405060708090a0b0c0d0e0f10'");
        ref_doc_free(&d);
    }
    {
        cfdb_get_tenant_id_request r;
        memset(&r, 0, sizeof r);
        r.reply.token = k_token;
        r.tenantName = CFDB_BYTES_LIT("tn");
        r.minTenantVersion = 1007;
        ref_doc d = encode_and_read(&cfdb_msg_get_tenant_id_request, &ref_get_tenant_id_request, &r);
        expect(&d, "reply.token", TOKEN_TEXT);
        expect(&d, "tenantName", "x'746e'");
        expect(&d, "minTenantVersion", "1007");
        ref_doc_free(&d);
    }
    {
        cfdb_expire_idempotency_id_request r;
        memset(&r, 0, sizeof r);
        r.commitVersion = 1008;
        r.batchIndexHighByte = 9;
        r.tenant = tenant();
        ref_doc d = encode_and_read(&cfdb_msg_expire_idempotency_id_request, &ref_expire_idempotency_id_request, &r);
        expect(&d, "commitVersion", "1008");
        expect(&d, "batchIndexHighByte", "9");
        expect_tenant(&d, "tenant");
        ref_doc_free(&d);
    }
    {
        cfdb_global_config_refresh_request r = { -1, { k_token } };
        ref_doc d = encode_and_read(&cfdb_msg_global_config_refresh_request, &ref_global_config_refresh_request, &r);
        expect(&d, "lastKnown", "-1");
        expect(&d, "reply.token", TOKEN_TEXT);
        ref_doc_free(&d);
    }
}

static void test_cfdb_discovery_requests_by_name(void **state)
{
    (void)state;
    {
        cfdb_bytes issues[1] = { CFDB_BYTES_LIT("iss") };
        cfdb_client_version cv[1] = { { CFDB_BYTES_LIT("7.3.77"), CFDB_BYTES_LIT("src"),
                                        CFDB_BYTES_LIT("fdb00b073000000") } };
        cfdb_network_address na[1];
        memset(na, 0, sizeof na);
        na[0].ip.tag = 1;
        na[0].ip.v4 = 0x7f000001;
        na[0].port = 4500;
        na[0].flags = 2;
        na[0].fromHostname = true;
        cfdb_hostname hn[1] = { { CFDB_BYTES_LIT("host"), CFDB_BYTES_LIT("4500"), true } };
        cfdb_open_database_coord_request r;
        memset(&r, 0, sizeof r);
        r.issues.items = issues;
        r.issues.count = 1;
        r.supportedVersions.items = cv;
        r.supportedVersions.count = 1;
        r.traceLogGroup = CFDB_BYTES_LIT("default");
        r.knownClientInfoID = U(0x61, 0x62);
        r.clusterKey = CFDB_BYTES_LIT("d:id");
        r.coordinators.items = na;
        r.coordinators.count = 1;
        r.reply.token = k_token;
        r.hostnames.items = hn;
        r.hostnames.count = 1;
        r.internal = true;
        ref_doc d = encode_and_read(&cfdb_msg_open_database_coord_request, &ref_open_database_coord_request, &r);
        expect(&d, "issues[0]", "x'697373'");
        expect(&d, "supportedVersions[0].clientVersion", "x'372e332e3737'");
        expect(&d, "supportedVersions[0].sourceVersion", "x'737263'");
        expect(&d, "supportedVersions[0].protocolVersion", "x'666462303062303733303030303030'");
        expect(&d, "traceLogGroup", "x'64656661756c74'");
        expect(&d, "knownClientInfoID", "00000000000000610000000000000062");
        expect(&d, "clusterKey", "x'643a6964'");
        expect(&d, "coordinators[0].ip.addr.@alt", "1");
        expect(&d, "coordinators[0].ip.addr", "2130706433");
        expect(&d, "coordinators[0].port", "4500");
        expect(&d, "coordinators[0].flags", "2");
        expect(&d, "coordinators[0].fromHostname", "true");
        expect(&d, "reply.token", TOKEN_TEXT);
        expect(&d, "hostnames[0].host", "x'686f7374'");
        expect(&d, "hostnames[0].service", "x'34353030'");
        expect(&d, "hostnames[0].isTLS", "true");
        expect(&d, "internal", "true");
        ref_doc_free(&d);
    }
    {
        cfdb_get_leader_request r = { CFDB_BYTES_LIT("d:id"), U(0x71, 0x72), { k_token } };
        ref_doc d = encode_and_read(&cfdb_msg_get_leader_request, &ref_get_leader_request, &r);
        expect(&d, "key", "x'643a6964'");
        expect(&d, "knownLeader", "00000000000000710000000000000072");
        expect(&d, "reply.token", TOKEN_TEXT);
        ref_doc_free(&d);
    }
    {
        cfdb_ping_request p = { { k_token } };
        ref_doc d = encode_and_read(&cfdb_msg_ping_request, &ref_ping_request, &p);
        expect(&d, "reply.token", TOKEN_TEXT);
        ref_doc_free(&d);
        cfdb_protocol_info_request q = { { k_token } };
        d = encode_and_read(&cfdb_msg_protocol_info_request, &ref_protocol_info_request, &q);
        expect(&d, "reply.token", TOKEN_TEXT);
        ref_doc_free(&d);
        cfdb_status_request s = { { k_token } };
        d = encode_and_read(&cfdb_msg_status_request, &ref_status_request, &s);
        expect(&d, "reply.token", TOKEN_TEXT);
        ref_doc_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_derived_vtables_match_the_rule),
        cmocka_unit_test(test_captured_requests_have_these_layouts),
        cmocka_unit_test(test_hand_laid_get_value_request),
        cmocka_unit_test(test_cfdb_storage_requests_by_name),
        cmocka_unit_test(test_cfdb_proxy_requests_by_name),
        cmocka_unit_test(test_cfdb_discovery_requests_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
