/* Every frame of every golden capture (real libfdb_c 7.3.77 <-> fdbserver 7.3.77) must:
 *  - arrive intact when the raw TCP streams of the .pcap are parsed by our connect-packet
 *    and frame parsers with XXH3 checksums on;
 *  - for the requests the client sent (c2s): decode with cfdb's codec and re-encode with
 *    cfdb's encoder into a message that carries the CAPTURED values, vtables and table
 *    images, as read by the independent reader fdb_ref.c (which knows nothing of src/wire);
 *  - for the replies (s2c): decode, and re-encode into bytes that decode to the same values
 *    (a self-consistency check only; the values themselves are checked below against what
 *    the real client reported in *.results.jsonl).
 *
 * Why the re-encoded request is compared field by field and not byte for byte with the
 * capture: FoundationDB's serializer is deterministic for one libfdb_c build, but its byte
 * placement is not something a second implementation can (or needs to) reproduce:
 *  - it writes back to front, and first emits one block with the vtables of every type
 *    reachable from the message type, ordered by the ADDRESSES of the static vtable objects
 *    in the libfdb_c binary (std::set<const VTable*>, flow/include/flow/flat_buffers.h:750-797),
 *    including vtables of absent Optionals and empty vectors;
 *  - it shares one 4-byte zero count among all empty strings and vectors of a message
 *    (emptyVector, flat_buffers.h:515-521, 614-625);
 * so every uoffset/soffset value and the padding between objects follow from those choices.
 * cfdb's encoder lays objects out front to back in pre-order (src/wire/fb_encode.c). What
 * IS deterministic and specified - every vtable (generate_vtable, flow/flat_buffers.cpp:44-56),
 * every table's field bytes at their slots, zero padding inside tables, every string, blob and
 * vector content - is compared for every captured request below. The test also counts
 * requests that happen to come out byte-identical (none do today) and prints the number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "connect_packet.h"
#include "frame.h"
#include "messages.h"
#include "protocol_version.h"
#include "fdb_ref.h"
#include "golden.h"
#include "print_util.h"

static const fb_message *message_for(const golden_frame *g)
{
    return cfdb_message_by_file_id(fb_peek_file_id(g->msg, g->len));
}

/* Client requests: cfdb decode -> cfdb encode -> same fields as the captured bytes. */
static void test_requests_reencode_to_the_captured_fields(void **state)
{
    char **names = golden_scenarios();
    assert_non_null(names);
    size_t requests = 0, identical = 0;
    fb_writer w;
    fb_writer_init(&w, 0);
    for (size_t s = 0; names[s]; s++) {
        golden_capture cap;
        assert_int_equal(golden_load_frames(names[s], &cap), 0);
        for (size_t i = 0; i < cap.count; i++) {
            const golden_frame *g = &cap.frames[i];
            if (!g->c2s)
                continue;
            uint32_t id = fb_peek_file_id(g->msg, g->len);
            const fb_message *m = cfdb_message_by_file_id(id);
            const ref_msg *rm = ref_msg_by_file_id(id);
            if (!m || !rm)
                fail_msg("%s frame %zu: no description of request %u (cfdb %p, reference %p)", names[s], i, id,
                         (const void *)m, (const void *)rm);
            cfdb_arena a;
            cfdb_arena_init(&a);
            void *item = cfdb_arena_zalloc(&a, m->item->csize + 1);
            cfdb_reply_error err = 0;
            int rc = fb_decode(m, g->msg, g->len, item, &err, &a);
            if (rc)
                fail_msg("%s frame %zu (%s): cfdb cannot decode the captured request: %d", names[s], i, m->name, rc);
            assert_int_equal(fb_encode(&w, m, item, 0), 0);
            const uint8_t *out = fb_writer_message(&w);
            size_t out_len = fb_writer_message_len(&w);
            if (out_len == g->len && memcmp(out, g->msg, g->len) == 0)
                identical++;
            ref_doc want, got;
            if (ref_read(rm, g->msg, g->len, &want))
                fail_msg("%s frame %zu (%s): reference reader: %s", names[s], i, rm->name, want.err);
            if (ref_read(rm, out, out_len, &got))
                fail_msg("%s frame %zu (%s): cfdb's re-encoding does not read: %s", names[s], i, rm->name, got.err);
            char diff[4096];
            size_t nd = ref_diff(&want, &got, diff, sizeof diff, 20);
            if (nd)
                fail_msg("%s frame %zu (%s): cfdb's re-encoding differs from the captured request in %zu fields "
                         "(libfdb_c = captured, cfdb = decoded+re-encoded):\n%s",
                         names[s], i, rm->name, nd, diff);
            ref_doc_free(&want);
            ref_doc_free(&got);
            cfdb_arena_free(&a);
            requests++;
        }
        golden_free(&cap);
    }
    fb_writer_free(&w);
    golden_free_names(names);
    print_message("%zu captured requests re-encoded field-identical; %zu of them byte-identical\n", requests,
                  identical);
    assert_true(requests >= 100);
}

/* Server replies: decode, re-encode, decode again, same values (self-consistency only). */
static void test_replies_decode_and_reencode(void **state)
{
    char **names = golden_scenarios();
    assert_non_null(names);
    size_t scenarios = 0, frames = 0;
    fb_writer w;
    fb_writer_init(&w, 0);
    for (size_t s = 0; names[s]; s++, scenarios++) {
        golden_capture cap;
        assert_int_equal(golden_load_frames(names[s], &cap), 0);
        assert_true(cap.count > 0);
        for (size_t i = 0; i < cap.count; i++) {
            const golden_frame *g = &cap.frames[i];
            if (g->c2s)
                continue;
            frames++;
            const fb_message *m = message_for(g);
            if (!m)
                fail_msg("%s frame %zu: unknown file identifier %u", names[s], i, fb_peek_file_id(g->msg, g->len));
            cfdb_arena a;
            cfdb_arena_init(&a);
            void *item = cfdb_arena_zalloc(&a, m->item->csize + 1);
            void *again = cfdb_arena_zalloc(&a, m->item->csize + 1);
            cfdb_reply_error err = 0, err2 = 0;
            int rc = fb_decode(m, g->msg, g->len, item, &err, &a);
            if (rc)
                fail_msg("%s frame %zu (%s): decode failed %d", names[s], i, m->name, rc);
            assert_int_equal(fb_encode(&w, m, item, err), 0);
            assert_int_equal(fb_writer_message_len(&w) % 8, 0);
            rc = fb_decode(m, fb_writer_message(&w), fb_writer_message_len(&w), again, &err2, &a);
            if (rc)
                fail_msg("%s frame %zu (%s): our re-encoding does not decode: %d", names[s], i, m->name, rc);
            char *t1 = print_to_string(m, item, err), *t2 = print_to_string(m, again, err2);
            if (strcmp(t1, t2) != 0)
                fail_msg("%s frame %zu (%s) differs after re-encoding:\n%s\nvs\n%s", names[s], i, m->name, t1, t2);
            free(t1);
            free(t2);
            cfdb_arena_free(&a);
        }
        golden_free(&cap);
    }
    fb_writer_free(&w);
    golden_free_names(names);
    assert_true(scenarios >= 15);
    assert_true(frames >= 100);
}

/* Parses one raw TCP direction as FoundationDB does: ConnectPacket, then checksummed frames. */
static void test_pcap_streams_parse_with_checksums(void **state)
{
    char **names = golden_scenarios();
    size_t total_frames = 0;
    for (size_t s = 0; names[s]; s++) {
        golden_stream *streams;
        size_t n;
        assert_int_equal(golden_load_streams(names[s], &streams, &n), 0);
        assert_true(n >= 2);
        golden_capture cap;
        assert_int_equal(golden_load_frames(names[s], &cap), 0);
        size_t matched = 0;
        for (size_t i = 0; i < n; i++) {
            const golden_stream *st = &streams[i];
            cfdb_connect_packet cp;
            size_t used;
            assert_int_equal(cfdb_connect_packet_decode(st->data, st->len, &cp, &used), 0);
            assert_int_equal(used, CFDB_CONNECT_PACKET_SIZE);
            assert_true(cfdb_protocol_peer_exact(cp.protocol_version));
            bool from_client = cp.canonical_port == 0;
            if (!from_client) /* the server names the port the client dialled */
                assert_int_equal(cp.canonical_port, st->src_port);
            size_t at = used;
            while (at < st->len) {
                cfdb_frame f;
                size_t k;
                assert_int_equal(cfdb_frame_parse(st->data + at, st->len - at, true, &f, &k), 0);
                if (k == 0)
                    break; /* capture ended mid-frame */
                /* the same bytes as the frames.jsonl record of this direction */
                bool found = false;
                for (size_t j = 0; j < cap.count && !found; j++)
                    found = cap.frames[j].c2s == from_client && cfdb_uid_eq(cap.frames[j].token, f.token) &&
                            cap.frames[j].len == f.msg_len && memcmp(cap.frames[j].msg, f.msg, f.msg_len) == 0;
                assert_true(found);
                matched++;
                at += k;
            }
        }
        assert_int_equal(matched, cap.count);
        total_frames += matched;
        golden_free(&cap);
        golden_free_streams(streams, n);
    }
    golden_free_names(names);
    assert_true(total_frames >= 230);
}

/* For each {"op":"get"} result, the last GetValueRequest for that key and the reply sent
 * to its reply token must agree with what the real client saw. */
static void test_get_replies_match_client_results(void **state)
{
    char **names = golden_scenarios();
    size_t checked = 0;
    for (size_t s = 0; names[s]; s++) {
        char path[512];
        snprintf(path, sizeof path, "%s/golden/%s.results.jsonl", CFDB_VECTORS_DIR, names[s]);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        golden_capture cap;
        assert_int_equal(golden_load_frames(names[s], &cap), 0);
        char line[65536], op[64], hex[32768], present[8];
        char seen_keys[64][128];
        unsigned seen_count[64], nseen = 0;
        while (fgets(line, sizeof line, f)) {
            if (!golden_json_field(line, "op", op, sizeof op) || strcmp(op, "get") != 0)
                continue;
            uint8_t key[4096], want[16384];
            assert_true(golden_json_field(line, "key", hex, sizeof hex));
            long klen = golden_unhex(hex, key, sizeof key);
            assert_true(golden_json_field(line, "value", hex, sizeof hex));
            long vlen = golden_unhex(hex, want, sizeof want);
            bool want_present = !golden_json_field(line, "present", present, sizeof present) || strcmp(present, "false");
            /* the n-th get of a key in the results is the n-th GetValueRequest for it */
            unsigned occurrence = 0, k;
            golden_json_field(line, "key", hex, sizeof hex);
            for (k = 0; k < nseen && strcmp(seen_keys[k], hex) != 0; k++)
                ;
            if (k < nseen) {
                occurrence = ++seen_count[k];
            } else if (nseen < 64 && strlen(hex) < 128) {
                strcpy(seen_keys[nseen], hex);
                seen_count[nseen++] = 0;
            }

            cfdb_arena a;
            cfdb_arena_init(&a);
            cfdb_uid reply_token = { 0, 0 };
            bool have_request = false;
            for (size_t i = 0; i < cap.count; i++) {
                cfdb_get_value_request req;
                memset(&req, 0, sizeof req);
                if (!cap.frames[i].c2s || message_for(&cap.frames[i]) != &cfdb_msg_get_value_request)
                    continue;
                assert_int_equal(fb_decode(&cfdb_msg_get_value_request, cap.frames[i].msg, cap.frames[i].len, &req,
                                           NULL, &a), 0);
                if (req.key.len == klen && memcmp(req.key.ptr, key, (size_t)klen) == 0 && occurrence-- == 0) {
                    reply_token = req.reply.token;
                    have_request = true;
                    break;
                }
            }
            if (!have_request) { /* answered from the client's cache (e.g. \xff/metadataVersion) */
                cfdb_arena_free(&a);
                continue;
            }
            bool have_reply = false;
            for (size_t i = 0; i < cap.count; i++) {
                if (cap.frames[i].c2s || !cfdb_uid_eq(cap.frames[i].token, reply_token))
                    continue;
                cfdb_get_value_reply rep;
                memset(&rep, 0, sizeof rep);
                cfdb_reply_error err;
                assert_int_equal(fb_decode(&cfdb_msg_get_value_reply, cap.frames[i].msg, cap.frames[i].len, &rep,
                                           &err, &a), 0);
                if (err || rep.error.present)
                    fail_msg("%s: get of key %s answered with error %u/%u", names[s], hex, err, rep.error.value.code);
                assert_int_equal(rep.value.present, want_present);
                if (want_present) {
                    assert_int_equal(rep.value.value.len, vlen);
                    assert_memory_equal(rep.value.value.ptr, want, (size_t)vlen);
                }
                have_reply = true;
            }
            assert_true(have_reply);
            checked++;
            cfdb_arena_free(&a);
        }
        fclose(f);
        golden_free(&cap);
    }
    golden_free_names(names);
    assert_true(checked >= 10);
}

/* Spot checks of decoded values against what the scenarios did. */
static void test_decoded_values_are_right(void **state)
{
    golden_capture cap;
    assert_int_equal(golden_load_frames("writes", &cap), 0);
    cfdb_arena a;
    cfdb_arena_init(&a);
    bool saw_commit = false;
    for (size_t i = 0; i < cap.count; i++) {
        if (message_for(&cap.frames[i]) != &cfdb_msg_commit_transaction_request)
            continue;
        cfdb_commit_transaction_request req;
        memset(&req, 0, sizeof req);
        assert_int_equal(fb_decode(&cfdb_msg_commit_transaction_request, cap.frames[i].msg, cap.frames[i].len, &req,
                                   NULL, &a), 0);
        const cfdb_commit_transaction *t = &req.transaction;
        assert_int_equal(req.tenantInfo.tenantId, -1);
        assert_true(t->read_snapshot > 0);
        for (uint32_t k = 0; k < t->mutations.count; k++) {
            const cfdb_mutation *mu = &t->mutations.items[k];
            /* single-key clears arrive as (ClearRange, k, k\0) after decoding */
            if (mu->type == CFDB_MUT_CLEAR_RANGE && mu->param1.len == 3 && memcmp(mu->param1.ptr, "w/b", 3) == 0) {
                assert_int_equal(mu->param2.len, 4);
                assert_memory_equal(mu->param2.ptr, "w/b\0", 4);
                saw_commit = true;
            }
        }
        for (uint32_t k = 0; k < t->write_conflict_ranges.count; k++) {
            const cfdb_key_range *r = &t->write_conflict_ranges.items[k];
            assert_true(cfdb_bytes_cmp(r->begin, r->end) < 0);
        }
    }
    assert_true(saw_commit);
    golden_free(&cap);

    /* ClientDBInfo names at least one GRV and one commit proxy on 127.0.0.1:4689. */
    assert_int_equal(golden_load_frames("connect", &cap), 0);
    bool saw_info = false;
    for (size_t i = 0; i < cap.count; i++) {
        if (message_for(&cap.frames[i]) != &cfdb_msg_client_db_info_reply)
            continue;
        cfdb_client_db_info info;
        memset(&info, 0, sizeof info);
        cfdb_reply_error err;
        assert_int_equal(fb_decode(&cfdb_msg_client_db_info_reply, cap.frames[i].msg, cap.frames[i].len, &info, &err,
                                   &a), 0);
        assert_int_equal(err, 0);
        assert_true(info.grvProxies.count >= 1);
        assert_true(info.commitProxies.count >= 1);
        const cfdb_network_address *addr = &info.grvProxies.items[0].getConsistentReadVersion.endpoint.addresses.address;
        assert_int_equal(addr->ip.tag, 1);
        assert_int_equal(addr->ip.v4, 0x7f000001);
        assert_int_equal(addr->port, 4689);
        assert_false(info.grvProxies.items[0].provisional);
        assert_true(info.grvProxies.items[0].getConsistentReadVersion.endpoint.token.first & 1);
        saw_info = true;
    }
    assert_true(saw_info);
    golden_free(&cap);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_reencode_to_the_captured_fields),
        cmocka_unit_test(test_replies_decode_and_reencode),
        cmocka_unit_test(test_pcap_streams_parse_with_checksums),
        cmocka_unit_test(test_get_replies_match_client_results),
        cmocka_unit_test(test_decoded_values_are_right),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
