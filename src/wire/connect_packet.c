#include "connect_packet.h"

#include <string.h>

#include "wire_errors.h"

/* Offsets after the 4-byte length word. */
enum {
    CP_VERSION = 0,
    CP_PORT = 8,
    CP_CONN_ID = 10,
    CP_IP4 = 18,
    CP_FLAGS = 22,
    CP_IP6 = 24,
    CP_BODY = 40,
    CP_MIN_BODY = CP_IP4 + 4, /* oldest packets end after the IPv4 address */
};

size_t cfdb_connect_packet_encode(const cfdb_connect_packet *p, uint8_t out[CFDB_CONNECT_PACKET_SIZE])
{
    uint32_t body = CP_BODY;
    uint8_t *b = out + 4;
    memcpy(out, &body, 4);
    memcpy(b + CP_VERSION, &p->protocol_version, 8);
    memcpy(b + CP_PORT, &p->canonical_port, 2);
    memcpy(b + CP_CONN_ID, &p->connection_id, 8);
    memcpy(b + CP_IP4, &p->canonical_ip4, 4);
    memcpy(b + CP_FLAGS, &p->flags, 2);
    memcpy(b + CP_IP6, p->canonical_ip6, 16);
    return CFDB_CONNECT_PACKET_SIZE;
}

int cfdb_connect_packet_decode(const uint8_t *buf, size_t len, cfdb_connect_packet *out, size_t *used)
{
    *used = 0;
    if (len < CFDB_CONNECT_PACKET_V0_SIZE)
        return 0;
    uint32_t body;
    memcpy(&body, buf, 4);
    if (body < CP_MIN_BODY || body > CFDB_CONNECT_PACKET_MAX_BODY)
        return CFDB_WIRE_SERIALIZATION_FAILED;
    if (len < 4 + (size_t)body)
        return 0;
    uint8_t tmp[CP_BODY] = { 0 };
    memcpy(tmp, buf + 4, body < CP_BODY ? body : CP_BODY);
    memset(out, 0, sizeof *out);
    memcpy(&out->protocol_version, tmp + CP_VERSION, 8);
    memcpy(&out->canonical_port, tmp + CP_PORT, 2);
    memcpy(&out->connection_id, tmp + CP_CONN_ID, 8);
    memcpy(&out->canonical_ip4, tmp + CP_IP4, 4);
    memcpy(&out->flags, tmp + CP_FLAGS, 2);
    memcpy(out->canonical_ip6, tmp + CP_IP6, 16);
    *used = 4 + (size_t)body;
    return 0;
}
