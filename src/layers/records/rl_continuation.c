/* SPDX-License-Identifier: Apache-2.0 */
/* Continuation tokens of key-value cursors: the bytes of the Java Record Layer's
 * KeyValueCursorContinuation (fdb-record-layer-core/src/main/proto/record_cursor.proto:
 * inner_continuation = 1 (bytes), magic_number = 2 (sfixed64); KeyValueCursorBase.Continuation
 * with SerializationMode.TO_NEW, its default).
 *
 * Encoded as protobuf-java writes it, fields by number:
 *   0x0a <varint length> <inner bytes>  0x11 <magic, 8 bytes little-endian>
 * with magic 6773487359078157740 = 0x5E0042DD9873CDAC (bytes AC CD 73 98 DD 42 00 5E).
 * Decoding follows KeyValueCursorBase.Continuation.getInnerContinuation: bytes that do not
 * parse as that message, or parse without the magic number, are the old form (TO_OLD: the key
 * suffix itself) and are returned as they are. Parsing is protobuf's: fields in any order,
 * the last value of a field wins, unknown fields and known fields of another wire type are
 * skipped; groups (wire types 3 and 4), truncated or overlong varints and lengths past the
 * end make the bytes "not that message". Nothing is allocated by decoding. */
#include <string.h>

#include "error_codes.h"
#include "cfdb/records/cursor.h"

static bool read_varint(const uint8_t *p, size_t n, size_t *at, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*at >= n)
            return false;
        uint8_t b = p[(*at)++];
        if (shift == 63 && (b & 0x7e))
            return false;   /* more than 64 bits */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

int cfdb_rl_continuation_decode(cfdb_bytes data, cfdb_bytes *inner)
{
    const uint8_t *p = data.ptr;
    size_t n = data.len, at = 0;
    cfdb_bytes in = { NULL, 0 };
    uint64_t magic = 0;
    bool ok = true;
    while (ok && at < n) {
        uint64_t tag, len, v;
        if (!read_varint(p, n, &at, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
            ok = false;
            break;
        }
        switch (tag & 7) {
        case 0:
            ok = read_varint(p, n, &at, &v);
            break;
        case 1:
            if (n - at < 8) {
                ok = false;
                break;
            }
            if (tag >> 3 == 2) {
                magic = 0;
                for (int i = 7; i >= 0; i--)
                    magic = magic << 8 | p[at + (size_t)i];
            }
            at += 8;
            break;
        case 2:
            if (!read_varint(p, n, &at, &len) || len > n - at) {
                ok = false;
                break;
            }
            if (tag >> 3 == 1)
                in = cfdb_bytes_make(p + at, (size_t)len);
            at += (size_t)len;
            break;
        case 5:
            if (n - at < 4)
                ok = false;
            else
                at += 4;
            break;
        default:
            ok = false;
        }
    }
    if (ok && magic == (uint64_t)CFDB_RL_CONTINUATION_MAGIC) {
        *inner = in.ptr ? in : cfdb_bytes_make(p, 0);
        return 0;
    }
    *inner = data;   /* the old form: the key suffix itself */
    return 0;
}

int cfdb_rl_continuation_encode(cfdb_arena *a, cfdb_bytes inner, cfdb_bytes *out)
{
    uint8_t *buf = cfdb_arena_alloc(a, inner.len + 20);
    if (!buf)
        return CFDB_ERR_OUT_OF_MEMORY;
    size_t at = 0;
    buf[at++] = 0x0a;
    uint64_t len = inner.len;
    do {
        buf[at++] = (uint8_t)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
        len >>= 7;
    } while (len);
    if (inner.len)
        memcpy(buf + at, inner.ptr, inner.len);
    at += inner.len;
    buf[at++] = 0x11;
    uint64_t m = (uint64_t)CFDB_RL_CONTINUATION_MAGIC;
    for (int i = 0; i < 8; i++)
        buf[at++] = (uint8_t)(m >> (8 * i));
    *out = cfdb_bytes_make(buf, at);
    return 0;
}
