/* Protocol versions of FoundationDB 7.3 (flow/ProtocolVersions.cmake at 7.3.77). */
#ifndef CFDB_PROTOCOL_VERSION_H
#define CFDB_PROTOCOL_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#define CFDB_PROTOCOL_VERSION          UINT64_C(0x0FDB00B073000000) /* every 7.3.x */
#define CFDB_PROTOCOL_MIN_COMPATIBLE   UINT64_C(0x0FDB00B072000000) /* on-disk downgrade floor */
#define CFDB_PROTOCOL_MIN_INVALID      UINT64_C(0x0FDB00B075000000)
#define CFDB_PROTOCOL_OBJECT_SERIALIZER_FLAG UINT64_C(0x1000000000000000)
#define CFDB_PROTOCOL_VERSION_FLAG_MASK      UINT64_C(0x0FFFFFFFFFFFFFFF)
#define CFDB_PROTOCOL_COMPATIBLE_MASK        UINT64_C(0xFFFFFFFFFFFF0000)
#define CFDB_PROTOCOL_MIN_VALID              UINT64_C(0x0FDB00A200060001)
/* Feature thresholds the transport looks at. */
#define CFDB_PROTOCOL_IPV6                   UINT64_C(0x0FDB00B061030000)
#define CFDB_PROTOCOL_INEXPENSIVE_MULTIVERSION UINT64_C(0x0FDB00A551000000)
#define CFDB_PROTOCOL_STABLE_INTERFACES      UINT64_C(0x0FDB00B070010000)

/* What a 7.3 peer writes into its ConnectPacket. */
#define CFDB_PROTOCOL_CONNECT_VERSION (CFDB_PROTOCOL_VERSION | CFDB_PROTOCOL_OBJECT_SERIALIZER_FLAG)

static inline uint64_t cfdb_protocol_strip_flags(uint64_t v)
{
    return v & CFDB_PROTOCOL_VERSION_FLAG_MASK;
}

/* Connect-time rule (ProtocolVersion::isCompatible): both versions, flags removed, agree on
 * everything but the low 16 bits. The caller also requires the object-serializer flag. */
static inline bool cfdb_protocol_is_compatible(uint64_t a, uint64_t b)
{
    return (cfdb_protocol_strip_flags(a) & CFDB_PROTOCOL_COMPATIBLE_MASK) ==
           (cfdb_protocol_strip_flags(b) & CFDB_PROTOCOL_COMPATIBLE_MASK);
}

/* Delivery-time rule: ordinary endpoints need the exact version; a peer that only passes
 * cfdb_protocol_is_compatible has its messages dropped (except ping / protocol info). */
static inline bool cfdb_protocol_peer_exact(uint64_t peer_connect_version)
{
    return (peer_connect_version & CFDB_PROTOCOL_OBJECT_SERIALIZER_FLAG) &&
           cfdb_protocol_strip_flags(peer_connect_version) == CFDB_PROTOCOL_VERSION;
}

#endif
