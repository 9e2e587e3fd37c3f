/* ConnectPacket: the first bytes each side of a FoundationDB connection sends
 * (struct ConnectPacket in fdbrpc/FlowTransport.actor.cpp). 44 bytes for 7.3 peers:
 * u32 length(40), u64 protocol version, u16 canonical port, u64 connection id,
 * u32 canonical IPv4 (host order integer, stored LE), u16 flags, u8[16] IPv6. */
#ifndef CFDB_CONNECT_PACKET_H
#define CFDB_CONNECT_PACKET_H

#include <stddef.h>
#include <stdint.h>

#define CFDB_CONNECT_PACKET_SIZE 44
#define CFDB_CONNECT_PACKET_FLAG_IPV6 1
/* A receiver waits for this many bytes before it looks at the length word (CONNECT_PACKET_V0_SIZE). */
#define CFDB_CONNECT_PACKET_V0_SIZE 14
/* Largest length word we accept: 7.3 peers send 40; anything far larger is garbage. */
#define CFDB_CONNECT_PACKET_MAX_BODY 1024

typedef struct cfdb_connect_packet {
    uint64_t protocol_version;   /* with the object-serializer flag */
    uint16_t canonical_port;     /* 0 for a client that does not listen */
    uint64_t connection_id;
    uint32_t canonical_ip4;      /* (a<<24)|(b<<16)|(c<<8)|d */
    uint16_t flags;
    uint8_t canonical_ip6[16];
} cfdb_connect_packet;

/* Writes the 44-byte packet; returns its size. */
size_t cfdb_connect_packet_encode(const cfdb_connect_packet *p, uint8_t out[CFDB_CONNECT_PACKET_SIZE]);

/* Parses a packet at the start of buf. Returns 0 with *used = the bytes consumed (> 0), 0
 * with *used = 0 when more bytes are needed, or CFDB_WIRE_SERIALIZATION_FAILED (1044, *used
 * = 0) for an impossible length. Fields the sender left out (older, shorter packets) read
 * as zero. */
int cfdb_connect_packet_decode(const uint8_t *buf, size_t len, cfdb_connect_packet *out, size_t *used);

#endif
