/* Configuration database messages (src/wire/msg_config.c) against FoundationDB 7.3.77:
 *  - ConfigTransactionGetGenerationReply (fdbclient/include/fdbclient/
 *    ConfigTransactionInterface.h: file_identifier 2934851 = 0x2CC843, serializer(generation);
 *    ConfigGeneration serializer(committedVersion, liveVersion), no file identifier, so a
 *    table) as a ReplyPromise sends it: ErrorOr<EnsureTable<T>>, file id (2 << 24) | id
 *    (flow/include/flow/FileIdentifier.h). Bytes derived by hand with the placement rules of
 *    flow/flat_buffers.cpp (one slot per member in serialize() order, fields by size
 *    descending from table+4, 8-byte members 8-aligned, vtable before its table);
 *  - every request and reply round-trips (knob values of each variant alternative,
 *    KnobValueRef's variant<int, double, int64_t, bool, ValueRef> tags 1..5, an absent
 *    configClass, a clear mutation, the annotation);
 *  - the registry finds each file identifier; the well-known tokens are 13..17
 *    (fdbrpc/include/fdbrpc/WellKnownEndpoints.h);
 *  - cfdb_std_string_hash equals libstdc++'s std::hash<std::string> (values printed by a
 *    g++ 12 program on this machine: std::hash<std::string>()(s)). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config_messages.h"
#include "endpoint.h"

static const uint8_t k_generation_reply[72] = {
    0x10, 0x00, 0x00, 0x00, /* 0: root table at 16 */
    0x43, 0xc8, 0x2c, 0x02, /* 4: file id 0x022CC843 */
    /* 8: ErrorOr's vtable: 8 bytes, table 9, tag slot @8, offset slot @4 */
    0x08, 0x00, 0x09, 0x00, 0x08, 0x00, 0x04, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 16: root table, vtable at 16 - 8 */
    0x10, 0x00, 0x00, 0x00, /* 20: the value at 20 + 16 = 36 */
    0x02, 0x00, 0x00, 0x00, /* 24: tag 2 (the reply), padding */
    /* 28: the reply's vtable: 6 bytes, table 8, generation @4; 2 bytes padding */
    0x06, 0x00, 0x08, 0x00, 0x04, 0x00, 0x00, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 36: the reply table, vtable at 28 */
    0x0c, 0x00, 0x00, 0x00, /* 40: generation at 52 */
    /* 44: ConfigGeneration's vtable: 8 bytes, table 20, committedVersion @4, liveVersion @12 */
    0x08, 0x00, 0x14, 0x00, 0x04, 0x00, 0x0c, 0x00,
    0x08, 0x00, 0x00, 0x00, /* 52: ConfigGeneration, vtable at 44 */
    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 56: committedVersion 7 */
    0x09, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 64: liveVersion 265 */
};

static void test_generation_reply_bytes(void **state)
{
    (void)state;
    cfdb_config_get_generation_reply r = { { 7, 265 } };
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &cfdb_msg_config_get_generation_reply, &r, 0), 0);
    assert_int_equal(fb_writer_message_len(&w), sizeof k_generation_reply);
    assert_memory_equal(fb_writer_message(&w), k_generation_reply, sizeof k_generation_reply);
    fb_writer_free(&w);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_config_get_generation_reply d;
    memset(&d, 0, sizeof d);
    cfdb_reply_error err = 1;
    assert_int_equal(
        fb_decode(&cfdb_msg_config_get_generation_reply, k_generation_reply, sizeof k_generation_reply, &d, &err, &a),
        0);
    assert_int_equal(err, 0);
    assert_int_equal(d.generation.committedVersion, 7);
    assert_int_equal(d.generation.liveVersion, 265);
    /* a truncated message is refused, not read past its end */
    memset(&d, 0, sizeof d);
    assert_int_not_equal(fb_decode(&cfdb_msg_config_get_generation_reply, k_generation_reply, 60, &d, &err, &a), 0);
    cfdb_arena_free(&a);
}

static void *round_trip(const fb_message *m, const void *item, size_t csize, cfdb_arena *a, fb_writer *w)
{
    fb_writer_init(w, 0);
    assert_int_equal(fb_encode(w, m, item, 0), 0);
    assert_int_equal(fb_peek_file_id(fb_writer_message(w), fb_writer_message_len(w)), m->file_id);
    void *out = cfdb_arena_zalloc(a, csize);
    cfdb_reply_error err = 0;
    assert_int_equal(fb_decode(m, fb_writer_message(w), fb_writer_message_len(w), out, &err, a), 0);
    assert_int_equal(err, 0);
    return out;
}

static bool bytes_eq(cfdb_bytes b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0;
}

static void test_commit_round_trip(void **state)
{
    (void)state;
    cfdb_config_mutation muts[6];
    memset(muts, 0, sizeof muts);
    const char *names[6] = { "an_int", "a_double", "an_int64", "a_bool", "a_string", "cleared" };
    for (int i = 0; i < 6; i++) {
        muts[i].key.knobName = cfdb_bytes_str(names[i]);
        if (i % 2) {
            muts[i].key.configClass.present = 1;
            muts[i].key.configClass.value = cfdb_bytes_str("class_a");
        }
        if (i < 5) {
            muts[i].value.present = 1;
            muts[i].value.value.tag = (uint8_t)(i + 1);
        }
    }
    muts[0].value.value.i = -5;
    muts[1].value.value.d = 2.5;
    muts[2].value.value.l = INT64_C(1) << 40;
    muts[3].value.value.b = true;
    muts[4].value.value.s = cfdb_bytes_str("hello");
    cfdb_config_commit_request q;
    memset(&q, 0, sizeof q);
    q.coordinatorsHash = UINT64_C(0xf5517efe516cd4b7);
    q.generation = (cfdb_config_generation){ 3, 4 };
    q.mutations.items = muts;
    q.mutations.count = 6;
    q.annotation.timestamp = 1234.5;
    q.annotation.description = cfdb_bytes_str("why");
    q.reply.token = (cfdb_uid){ 0x11, 0x22 };
    cfdb_arena a;
    cfdb_arena_init(&a);
    fb_writer w;
    cfdb_config_commit_request *d = round_trip(&cfdb_msg_config_commit_request, &q, sizeof q, &a, &w);
    assert_int_equal(d->coordinatorsHash, q.coordinatorsHash);
    assert_int_equal(d->generation.committedVersion, 3);
    assert_int_equal(d->generation.liveVersion, 4);
    assert_int_equal(d->mutations.count, 6);
    for (int i = 0; i < 6; i++) {
        assert_true(bytes_eq(d->mutations.items[i].key.knobName, names[i]));
        assert_int_equal(d->mutations.items[i].key.configClass.present, i % 2);
        assert_int_equal(d->mutations.items[i].value.present, i < 5);
        if (i < 5)
            assert_int_equal(d->mutations.items[i].value.value.tag, i + 1);
    }
    assert_int_equal(d->mutations.items[0].value.value.i, -5);
    assert_true(d->mutations.items[1].value.value.d == 2.5);
    assert_int_equal(d->mutations.items[2].value.value.l, INT64_C(1) << 40);
    assert_true(d->mutations.items[3].value.value.b);
    assert_true(bytes_eq(d->mutations.items[4].value.value.s, "hello"));
    assert_true(bytes_eq(d->mutations.items[1].key.configClass.value, "class_a"));
    assert_true(d->annotation.timestamp == 1234.5);
    assert_true(bytes_eq(d->annotation.description, "why"));
    assert_int_equal(d->reply.token.first, 0x11);
    fb_writer_free(&w);
    cfdb_arena_free(&a);
}

static void test_other_round_trips(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    fb_writer w;

    cfdb_config_get_generation_request g;
    memset(&g, 0, sizeof g);
    g.coordinatorsHash = 99;
    g.lastSeenLiveVersion.present = 1;
    g.lastSeenLiveVersion.value = 41;
    cfdb_config_get_generation_request *gd = round_trip(&cfdb_msg_config_get_generation_request, &g, sizeof g, &a, &w);
    assert_int_equal(gd->coordinatorsHash, 99);
    assert_int_equal(gd->lastSeenLiveVersion.present, 1);
    assert_int_equal(gd->lastSeenLiveVersion.value, 41);
    fb_writer_free(&w);

    cfdb_config_get_request r;
    memset(&r, 0, sizeof r);
    r.generation = (cfdb_config_generation){ 5, 6 };
    r.key.knobName = cfdb_bytes_str("test");
    cfdb_config_get_request *rd = round_trip(&cfdb_msg_config_get_request, &r, sizeof r, &a, &w);
    assert_int_equal(rd->key.configClass.present, 0);
    assert_true(bytes_eq(rd->key.knobName, "test"));
    assert_int_equal(rd->generation.liveVersion, 6);
    fb_writer_free(&w);

    cfdb_config_get_reply gr;
    memset(&gr, 0, sizeof gr);
    cfdb_config_get_reply *grd = round_trip(&cfdb_msg_config_get_reply, &gr, sizeof gr, &a, &w);
    assert_int_equal(grd->value.present, 0);
    fb_writer_free(&w);
    gr.value.present = 1;
    gr.value.value.tag = CFDB_KNOB_DOUBLE;
    gr.value.value.d = -0.25;
    grd = round_trip(&cfdb_msg_config_get_reply, &gr, sizeof gr, &a, &w);
    assert_int_equal(grd->value.value.tag, CFDB_KNOB_DOUBLE);
    assert_true(grd->value.value.d == -0.25);
    fb_writer_free(&w);

    cfdb_config_get_knobs_request k;
    memset(&k, 0, sizeof k);
    k.configClass.present = 1;
    k.configClass.value = cfdb_bytes_str("c");
    cfdb_config_get_knobs_request *kd = round_trip(&cfdb_msg_config_get_knobs_request, &k, sizeof k, &a, &w);
    assert_true(bytes_eq(kd->configClass.value, "c"));
    fb_writer_free(&w);

    cfdb_bytes names[2] = { cfdb_bytes_str("x"), cfdb_bytes_str("yy") };
    cfdb_config_get_knobs_reply kr = { { names, 2 } };
    cfdb_config_get_knobs_reply *krd = round_trip(&cfdb_msg_config_get_knobs_reply, &kr, sizeof kr, &a, &w);
    assert_int_equal(krd->knobNames.count, 2);
    assert_true(bytes_eq(krd->knobNames.items[1], "yy"));
    fb_writer_free(&w);

    cfdb_config_get_classes_request c = { 7, { 1, 2 } };
    cfdb_config_get_classes_request *cd = round_trip(&cfdb_msg_config_get_classes_request, &c, sizeof c, &a, &w);
    assert_int_equal(cd->coordinatorsHash, 7);
    assert_int_equal(cd->generation.liveVersion, 2);
    fb_writer_free(&w);
    cfdb_arena_free(&a);
}

static void test_registry_and_tokens(void **state)
{
    (void)state;
    static const uint32_t ids[] = { 138941, 0x02000000u | 2934851, 923040, 0x02000000u | 2034110, 103841,
                                    7163400, 0x02000000u | 5309618, 987410, 0x02000000u | 4109852 };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const fb_message *m = cfdb_message_by_file_id(ids[i]);
        assert_non_null(m);
        assert_int_equal(m->file_id, ids[i]);
    }
    assert_int_equal(CFDB_WLTOKEN_CONFIGTXN_GETGENERATION, 13);
    assert_int_equal(CFDB_WLTOKEN_CONFIGTXN_GET, 14);
    assert_int_equal(CFDB_WLTOKEN_CONFIGTXN_GETCLASSES, 15);
    assert_int_equal(CFDB_WLTOKEN_CONFIGTXN_GETKNOBS, 16);
    assert_int_equal(CFDB_WLTOKEN_CONFIGTXN_COMMIT, 17);
    assert_true(cfdb_token_is_well_known(cfdb_well_known_token(CFDB_WLTOKEN_CONFIGTXN_COMMIT)));
}

static void test_std_string_hash(void **state)
{
    (void)state;
    assert_int_equal(cfdb_std_string_hash("", 0), UINT64_C(0x553e93901e462a6e));
    assert_int_equal(cfdb_std_string_hash("a", 1), UINT64_C(0x454ddee488c1ed6b));
    const char *s1 = "test:abc@127.0.0.1:4500";
    assert_int_equal(cfdb_std_string_hash(s1, strlen(s1)), UINT64_C(0xf5517efe516cd4b7));
    const char *s2 = "desc:id@127.0.0.1:4500,127.0.0.1:4501";
    assert_int_equal(cfdb_std_string_hash(s2, strlen(s2)), UINT64_C(0x475b0db48a67f1d2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generation_reply_bytes), cmocka_unit_test(test_commit_round_trip),
        cmocka_unit_test(test_other_round_trips),      cmocka_unit_test(test_registry_and_tokens),
        cmocka_unit_test(test_std_string_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
