#include "frame.h"

#include <string.h>
#include <xxhash.h>
#if defined(CFDB_HAVE_XXH3_DISPATCH)
#include <xxh_x86dispatch.h>
#endif

#include "wire_errors.h"

/* FlowTransport checksums every packet on a connection that is not TLS, both ways: the
 * sender computes XXH3-64 over the payload, the receiver recomputes and compares it
 * (scanPackets: checksum_failed). Same function, same value on every CPU. Where libxxhash
 * exports its runtime dispatch (CMake checks: CFDB_HAVE_XXH3_DISPATCH) it picks the widest
 * vector unit present: AVX2 needs about a third of the instructions of the SSE2 baseline on a
 * 14 KB range reply. */
uint64_t cfdb_frame_checksum(const void *payload, size_t len)
{
#if defined(CFDB_HAVE_XXH3_DISPATCH)
    return XXH3_64bits_dispatch(payload, len);
#else
    return XXH3_64bits(payload, len);
#endif
}

int cfdb_frame_parse(const uint8_t *buf, size_t len, bool checksum, cfdb_frame *out, size_t *used)
{
    size_t head = checksum ? 12 : 4;
    *used = 0;
    if (len < 4)
        return 0;
    uint32_t payload_len;
    memcpy(&payload_len, buf, 4);
    if (payload_len > CFDB_FRAME_PACKET_LIMIT || payload_len < CFDB_FRAME_TOKEN_SIZE)
        return CFDB_WIRE_PLATFORM_ERROR;
    if (len < head + payload_len)
        return 0;
    const uint8_t *payload = buf + head;
    if (checksum) {
        uint64_t want;
        memcpy(&want, buf + 4, 8);
        if (cfdb_frame_checksum(payload, payload_len) != want)
            return CFDB_WIRE_CHECKSUM_FAILED;
    }
    out->token = cfdb_uid_load(payload);
    out->msg = payload + CFDB_FRAME_TOKEN_SIZE;
    out->msg_len = payload_len - CFDB_FRAME_TOKEN_SIZE;
    *used = head + payload_len;
    return 0;
}

size_t cfdb_frame_seal(uint8_t *frame, cfdb_uid token, uint32_t msg_len, bool checksum)
{
    size_t head = checksum ? 12 : 4;
    uint32_t payload_len = msg_len + CFDB_FRAME_TOKEN_SIZE;
    memcpy(frame, &payload_len, 4);
    cfdb_uid_store(frame + head, token);
    if (checksum) {
        uint64_t sum = cfdb_frame_checksum(frame + head, payload_len);
        memcpy(frame + 4, &sum, 8);
    }
    return head + payload_len;
}
