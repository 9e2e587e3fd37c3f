/* The client's hot paths, each run N times in one thread with no I/O, for instruction
 * counts (scripts/instr-budget.sh runs it under cachegrind at two N and divides the
 * difference, so set-up and exit cancel out):
 *
 *   encode_get_value   a GetValueRequest as txn_read.c fills it, encoded by fb_encode
 *   decode_get_value   a 100-byte GetValueReply decoded by fb_decode into a recycled arena
 *   ryw_merge_range    a 100-row range read through the read-your-writes engine
 *                      (ryw_read.c) over a write map holding 50 sets and 10 clears
 *                      interleaved with those rows: the NativeAPI reads it asks for (two:
 *                      the cleared stretch splits it) are answered by a model storage
 *                      server, and the 140 merged rows come back
 *
 * Each result is checked (sizes, values, row count), so a path that stops doing its work
 * fails here instead of looking cheap.
 *
 * usage: cfdb-hot-paths PATH N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/arena.h"
#include "fb.h"
#include "messages.h"
#include "key_selector.h"
#include "ryw_read.h"
#include "snap_cache.h"
#include "write_map.h"

static int fail(const char *what)
{
    fprintf(stderr, "hot_paths: %s\n", what);
    return 1;
}

static int encode_get_value(long n)
{
    fb_writer w;
    fb_writer_init(&w, 40);
    static const char key[] = "bench/get/key/00000042";
    size_t len = 0;
    for (long i = 0; i < n; i++) {
        cfdb_get_value_request req;
        memset(&req, 0, sizeof req);
        req.key = cfdb_bytes_make(key, sizeof key - 1);
        req.version = 1000000 + i;
        req.tenantInfo.tenantId = -1;
        req.ssLatestCommitVersions = cfdb_version_vector_empty();
        req.reply.token.first = (uint64_t)i;
        req.reply.token.second = 7;
        fb_writer_reset(&w, 40);
        if (fb_encode(&w, &cfdb_msg_get_value_request, &req, 0))
            return fail("encode failed");
        if (i == 0)
            len = fb_writer_message_len(&w);
        else if (fb_writer_message_len(&w) != len)
            return fail("encoded size changed");
    }
    fb_writer_free(&w);
    return len ? 0 : fail("nothing encoded");
}

static int decode_get_value(long n)
{
    uint8_t value[100];
    for (int i = 0; i < 100; i++)
        value[i] = (uint8_t)i;
    cfdb_get_value_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.penalty = 1;
    rep.value.present = true;
    rep.value.value = cfdb_bytes_make(value, sizeof value);
    fb_writer w;
    fb_writer_init(&w, 0);
    if (fb_encode(&w, &cfdb_msg_get_value_reply, &rep, 0))
        return fail("encode reply failed");
    const uint8_t *msg = fb_writer_message(&w);
    size_t len = fb_writer_message_len(&w);
    cfdb_arena a;
    cfdb_arena_init(&a);
    for (long i = 0; i < n; i++) {
        cfdb_get_value_reply got;
        memset(&got, 0, sizeof got);
        cfdb_reply_error err = 0;
        cfdb_arena_reset(&a);
        if (fb_decode(&cfdb_msg_get_value_reply, msg, len, &got, &err, &a) || err)
            return fail("decode failed");
        if (!got.value.present || got.value.value.len != sizeof value || got.value.value.ptr[99] != 99)
            return fail("decoded the wrong value");
    }
    cfdb_arena_free(&a);
    fb_writer_free(&w);
    return 0;
}

#define NROWS 100

static int ryw_merge_range(long n)
{
    /* storage: keys k000..k198 (even numbers), 100 rows; local writes: 50 sets of odd keys
     * k001..k099, and clears of k100..k118 (10 stored rows): 100 + 50 - 10 = 140 rows. */
    static char skeys[NROWS][8], wkeys[50][8], value[16] = "value-of-a-row!";
    cfdb_key_value rows[NROWS];
    for (int i = 0; i < NROWS; i++) {
        snprintf(skeys[i], sizeof skeys[i], "k%03d", 2 * i);
        rows[i].key = cfdb_bytes_str(skeys[i]);
        rows[i].value = cfdb_bytes_make(value, 15);
    }
    for (int i = 0; i < 50; i++)
        snprintf(wkeys[i], sizeof wkeys[i], "k%03d", 2 * i + 1);
    cfdb_arena txa, opa;
    cfdb_arena_init(&txa);
    cfdb_arena_init(&opa);
    for (long it = 0; it < n; it++) {
        cfdb_arena_reset(&txa);
        cfdb_arena_reset(&opa);
        cfdb_write_map wm;
        cfdb_snap_cache cache;
        if (cfdb_write_map_init(&wm, &txa) || cfdb_snap_init(&cache, &txa))
            return fail("init failed");
        for (int i = 0; i < 50; i++)
            if (cfdb_write_map_set(&wm, cfdb_bytes_str(wkeys[i]), cfdb_bytes_make(value, 15), true))
                return fail("set failed");
        if (cfdb_write_map_clear(&wm, cfdb_bytes_str("k100"), cfdb_bytes_str("k119"), true))
            return fail("clear failed");
        cfdb_ryw_read r;
        cfdb_ryw_read_range(&r, &cache, &wm, &opa, cfdb_bytes_str("\xff"),
                            cfdb_first_greater_or_equal(cfdb_bytes_str("k")),
                            cfdb_first_greater_or_equal(cfdb_bytes_str("l")), cfdb_range_limits_make(-1, -1),
                            false);
        int rc, reads = 0;
        cfdb_native_result res;
        while ((rc = cfdb_ryw_read_advance(&r)) == CFDB_RYW_NEED_READ) {
            /* the model storage server: the rows in [begin, end) of two first_greater_or_equal
             * selectors (the cleared stretch splits the read in two, as in libfdb_c) */
            if (++reads > 2 || r.req_reverse || r.req_begin.orEqual || r.req_begin.offset != 1 ||
                r.req_end.orEqual || r.req_end.offset != 1)
                return fail("unexpected NativeAPI read");
            size_t lo = 0, hi;
            while (lo < NROWS && cfdb_bytes_cmp(rows[lo].key, r.req_begin.key) < 0)
                lo++;
            for (hi = lo; hi < NROWS && cfdb_bytes_cmp(rows[hi].key, r.req_end.key) < 0; hi++)
                ;
            memset(&res, 0, sizeof res);
            res.rows = rows + lo;
            res.n = hi - lo;
            cfdb_ryw_read_feed(&r, &res);
        }
        if (rc != CFDB_RYW_DONE)
            return fail("read failed");
        if (r.n != NROWS + 50 - 10 || r.more)
            return fail("wrong merged row count");
        if (it == 0) /* ascending; stored even keys outside the clear, written odd keys */
            for (size_t i = 0; i < r.n; i++) {
                const uint8_t *d = r.rows[i].key.ptr;
                if (r.rows[i].key.len != 4)
                    return fail("wrong merged key");
                int k = (d[1] - '0') * 100 + (d[2] - '0') * 10 + (d[3] - '0');
                bool want = k % 2 ? k < 100 : k < 100 || k >= 120;
                if (!want || (i && cfdb_bytes_cmp(r.rows[i - 1].key, r.rows[i].key) >= 0) ||
                    r.rows[i].value.len != 15)
                    return fail("wrong merged rows");
            }
        cfdb_write_map_destroy(&wm);
    }
    cfdb_arena_free(&txa);
    cfdb_arena_free(&opa);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fail("usage: cfdb-hot-paths encode_get_value|decode_get_value|ryw_merge_range N");
    long n = atol(argv[2]);
    if (n <= 0)
        return fail("N must be positive");
    if (!strcmp(argv[1], "encode_get_value"))
        return encode_get_value(n);
    if (!strcmp(argv[1], "decode_get_value"))
        return decode_get_value(n);
    if (!strcmp(argv[1], "ryw_merge_range"))
        return ryw_merge_range(n);
    return fail("unknown path");
}
