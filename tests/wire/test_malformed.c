/* Bad input never crashes: every truncation and many corruptions of every golden message
 * either decode or fail with a FoundationDB error code (run under ASan/UBSan in CI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "messages.h"
#include "wire_errors.h"
#include "golden.h"

static int decode_once(const fb_message *m, const uint8_t *buf, size_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    void *item = cfdb_arena_zalloc(&a, m->item->csize + 1);
    cfdb_reply_error err;
    /* copy so that ASan sees reads past the end of the given length */
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    int rc = fb_decode(m, copy, len, item, &err, &a);
    free(copy);
    cfdb_arena_free(&a);
    return rc;
}

static void test_truncations_and_corruptions(void **state)
{
    char **names = golden_scenarios();
    uint64_t rng = 12345;
    size_t failures = 0, attempts = 0;
    for (size_t s = 0; names[s]; s++) {
        golden_capture cap;
        assert_int_equal(golden_load_frames(names[s], &cap), 0);
        for (size_t i = 0; i < cap.count; i++) {
            const golden_frame *g = &cap.frames[i];
            const fb_message *m = cfdb_message_by_file_id(fb_peek_file_id(g->msg, g->len));
            assert_non_null(m);
            for (size_t n = 0; n < g->len; n += 1 + n / 64) {
                int rc = decode_once(m, g->msg, n);
                attempts++;
                if (rc) {
                    failures++;
                    assert_true(rc == CFDB_WIRE_SERIALIZATION_FAILED || rc == 2005);
                }
            }
            uint8_t *copy = malloc(g->len);
            for (int k = 0; k < 64; k++) {
                memcpy(copy, g->msg, g->len);
                for (int flips = 0; flips < 3; flips++) {
                    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                    size_t at = 8 + rng % (g->len - 8); /* keep the file identifier */
                    copy[at] ^= (uint8_t)(1u << (rng >> 40) % 8);
                }
                int rc = decode_once(m, copy, g->len);
                attempts++;
                if (rc)
                    assert_true(rc == CFDB_WIRE_SERIALIZATION_FAILED || rc == 2005);
            }
            free(copy);
        }
        golden_free(&cap);
    }
    golden_free_names(names);
    assert_true(failures > 0 && attempts > failures);
}

static void test_specific_bad_messages(void **state)
{
    cfdb_ping_request p;
    /* wrong file identifier */
    uint8_t ping[56] = { 0x14, 0, 0, 0, 0xc7, 0xd2, 0x47, 0x00, 6, 0, 8, 0, 4, 0, 6, 0, 20, 0, 4, 0,
                         0x0c, 0, 0, 0, 4, 0, 0, 0, 0x14, 0, 0, 0, 4, 0, 0, 0, 0x16, 0, 0, 0 };
    cfdb_arena a;
    cfdb_arena_init(&a);
    assert_int_equal(fb_decode(&cfdb_msg_ping_request, ping, sizeof ping, &p, NULL, &a), 0);
    ping[4] ^= 1;
    assert_int_equal(fb_decode(&cfdb_msg_ping_request, ping, sizeof ping, &p, NULL, &a),
                     CFDB_WIRE_SERIALIZATION_FAILED);
    ping[4] ^= 1;
    /* root offset past the end */
    ping[0] = 200;
    assert_int_equal(fb_decode(&cfdb_msg_ping_request, ping, sizeof ping, &p, NULL, &a),
                     CFDB_WIRE_SERIALIZATION_FAILED);
    ping[0] = 0x14;
    /* soffset pointing before the buffer */
    ping[20] = 0xff;
    assert_int_equal(fb_decode(&cfdb_msg_ping_request, ping, sizeof ping, &p, NULL, &a),
                     CFDB_WIRE_SERIALIZATION_FAILED);
    ping[20] = 0x0c;
    /* child offset past the end */
    ping[24] = 0xf0;
    assert_int_equal(fb_decode(&cfdb_msg_ping_request, ping, sizeof ping, &p, NULL, &a),
                     CFDB_WIRE_SERIALIZATION_FAILED);
    /* too short to hold a header */
    assert_int_equal(fb_decode(&cfdb_msg_ping_request, ping, 7, &p, NULL, &a), CFDB_WIRE_SERIALIZATION_FAILED);

    /* an inverted KeyRangeRef is refused as FoundationDB refuses it */
    cfdb_key_range r = { CFDB_BYTES_LIT("b"), CFDB_BYTES_LIT("a") };
    cfdb_split_range_request sr;
    memset(&sr, 0, sizeof sr);
    sr.keys = r;
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &cfdb_msg_split_range_request, &sr, 0), 0);
    assert_int_equal(fb_decode(&cfdb_msg_split_range_request, fb_writer_message(&w), fb_writer_message_len(&w), &sr,
                               NULL, &a), 2005);
    fb_writer_free(&w);

    /* a vector count larger than the message is refused before any allocation */
    cfdb_split_range_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_bytes pts[2] = { CFDB_BYTES_LIT("a"), CFDB_BYTES_LIT("b") };
    rep.splitPoints.items = pts;
    rep.splitPoints.count = 2;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &cfdb_msg_split_range_reply, &rep, 0), 0);
    uint8_t *msg = fb_writer_message(&w);
    size_t len = fb_writer_message_len(&w);
    for (size_t i = 8; i + 4 <= len; i += 4) {
        uint32_t v;
        memcpy(&v, msg + i, 4);
        if (v == 2) { /* the count */
            v = 0x40000000;
            memcpy(msg + i, &v, 4);
            assert_int_equal(fb_decode(&cfdb_msg_split_range_reply, msg, len, &rep, NULL, &a),
                             CFDB_WIRE_SERIALIZATION_FAILED);
            break;
        }
    }
    fb_writer_free(&w);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncations_and_corruptions),
        cmocka_unit_test(test_specific_bad_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
