/* fuzz_frame: a connection stream as a receiver sees it.
 *
 * Input: one mode byte, then the stream.
 *   mode bit 0     frames carry an XXH3 checksum (plain TCP) or not (TLS)
 *   mode bit 1     the stream has no ConnectPacket (start directly with frames)
 *   mode bits 2-4  misalign each message by 0..7 bytes before decoding
 * The stream is parsed with cfdb_connect_packet_decode, then cfdb_frame_parse until it stops;
 * each frame's message is decoded with the description its file identifier picks, and printed
 * when it decodes. Nothing here may crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/arena.h"
#include "connect_packet.h"
#include "fb.h"
#include "frame.h"
#include "messages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(void)
{
    static FILE *null_out;
    if (!null_out)
        null_out = fopen("/dev/null", "w");
    return null_out;
}

static void decode_message(const uint8_t *msg, size_t len, unsigned shift)
{
    /* A private copy that ends exactly at the message end: ASan sees any over-read. */
    uint8_t *buf = malloc(len + shift + 1);
    if (!buf)
        return;
    uint8_t *copy = buf + shift;
    if (len)
        memcpy(copy, msg, len);

    const fb_message *m = cfdb_message_by_file_id(fb_peek_file_id(copy, len));
    if (m) {
        void *item = calloc(1, m->item->csize ? m->item->csize : 1);
        if (item) {
            cfdb_arena arena;
            cfdb_arena_init(&arena);
            cfdb_reply_error err = 0;
            if (fb_decode(m, copy, len, item, &err, &arena) == 0) {
                fb_printer pr = { sink(), 0, (shift & 1) != 0 };
                if (pr.out)
                    fb_print_message(&pr, m, item, err);
            }
            cfdb_arena_free(&arena);
            free(item);
        }
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    bool checksum = (mode & 1) != 0;
    bool connect = (mode & 2) == 0;
    unsigned shift = (mode >> 2) & 7;
    const uint8_t *p = data + 1;
    size_t left = size - 1;

    if (connect) {
        cfdb_connect_packet cp;
        size_t n = 0;
        if (cfdb_connect_packet_decode(p, left, &cp, &n) || n == 0)
            return 0;
        if (n > left)
            abort(); /* consumed more than it was given */
        p += n;
        left -= n;
    }

    while (left > 0) {
        cfdb_frame f;
        size_t n = 0;
        if (cfdb_frame_parse(p, left, checksum, &f, &n) || n == 0)
            break;
        if (n > left || f.msg < p || f.msg + f.msg_len > p + n)
            abort(); /* the frame claims bytes outside what it consumed */
        decode_message(f.msg, f.msg_len, shift);
        p += n;
        left -= n;
    }
    return 0;
}
