#include "cfdb/frame.h"

#include <string.h>
#include <xxhash.h>

#include "cfdb/wire_errors.h"

uint64_t cfdb_frame_checksum(const void *payload, size_t len)
{
    return XXH3_64bits(payload, len);
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
