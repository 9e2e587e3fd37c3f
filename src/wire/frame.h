/* Packet framing after the ConnectPacket (sendPacket / scanPackets in FlowTransport):
 *   u32 length | u64 XXH3_64bits(payload) (absent on TLS links) | payload
 * where payload = 16-byte destination token + ObjectSerializer message.
 * Pure functions over caller buffers: no I/O, no allocation. */
#ifndef CFDB_FRAME_H
#define CFDB_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uid.h"

#define CFDB_FRAME_TOKEN_SIZE 16
#define CFDB_FRAME_PACKET_LIMIT (100u << 20) /* PACKET_LIMIT: larger frames drop the connection */
#define CFDB_FRAME_PACKET_WARNING (2u << 20)
/* Bytes before the message: length, checksum, token. */
#define CFDB_FRAME_HEADER_MAX (4 + 8 + CFDB_FRAME_TOKEN_SIZE)

typedef struct cfdb_frame {
    cfdb_uid token;
    const uint8_t *msg;   /* points into the parsed buffer */
    uint32_t msg_len;
} cfdb_frame;

static inline size_t cfdb_frame_header_size(bool checksum)
{
    return 4 + (checksum ? 8 : 0) + CFDB_FRAME_TOKEN_SIZE;
}

/* Parses one frame at the start of buf. Returns 0 with *used = the bytes consumed (> 0), or
 * 0 with *used = 0 if the frame is not complete yet; or a FoundationDB error code (*used = 0):
 * 1520 checksum_failed, 1500 platform_error for a length over the limit or too short to
 * hold a token. */
int cfdb_frame_parse(const uint8_t *buf, size_t len, bool checksum, cfdb_frame *out, size_t *used);

/* Fills the header in front of a message already laid out at
 * frame + cfdb_frame_header_size(checksum); returns the total frame size. */
size_t cfdb_frame_seal(uint8_t *frame, cfdb_uid token, uint32_t msg_len, bool checksum);

/* XXH3-64, seed 0, as FoundationDB's framing uses it. */
uint64_t cfdb_frame_checksum(const void *payload, size_t len);

#endif
