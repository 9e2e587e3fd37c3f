/* Endpoint tokens (fdbrpc/FlowTransport.h, fdbrpc/WellKnownEndpoints.h). */
#ifndef CFDB_ENDPOINT_H
#define CFDB_ENDPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "uid.h"

/* Bit 0 of token.first: set for request streams, clear for one-shot reply promises. */
#define CFDB_TOKEN_STREAM_FLAG UINT64_C(1)

enum cfdb_well_known_endpoint {
    CFDB_WLTOKEN_ENDPOINT_NOT_FOUND = 0,
    CFDB_WLTOKEN_PING_PACKET = 1,
    CFDB_WLTOKEN_UNAUTHORIZED_ENDPOINT = 2,
    CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER = 3,
    CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE = 4,
    CFDB_WLTOKEN_LEADERELECTIONREG_CANDIDACY = 5,
    CFDB_WLTOKEN_LEADERELECTIONREG_ELECTIONRESULT = 6,
    CFDB_WLTOKEN_LEADERELECTIONREG_LEADERHEARTBEAT = 7,
    CFDB_WLTOKEN_LEADERELECTIONREG_FORWARD = 8,
    CFDB_WLTOKEN_GENERATIONREG_READ = 9,
    CFDB_WLTOKEN_PROTOCOL_INFO = 10,
    CFDB_WLTOKEN_GENERATIONREG_WRITE = 11,
    CFDB_WLTOKEN_CLIENTLEADERREG_DESCRIPTOR_MUTABLE = 12,
    CFDB_WLTOKEN_PROCESS = 23,
    CFDB_WLTOKEN_RESERVED_COUNT = 25,
};

static inline cfdb_uid cfdb_well_known_token(uint32_t id)
{
    return (cfdb_uid){ UINT64_MAX, id };
}

static inline bool cfdb_token_is_well_known(cfdb_uid t)
{
    return t.first == UINT64_MAX && t.second < CFDB_WLTOKEN_RESERVED_COUNT;
}

/* Stream `index` of an interface whose first stream has token `base`
 * (Endpoint::getAdjustedEndpoint): first + (index << 32); low 32 bits of second + index. */
static inline cfdb_uid cfdb_adjusted_token(cfdb_uid base, uint32_t index)
{
    cfdb_uid t;
    t.first = base.first + ((uint64_t)index << 32);
    t.second = (base.second & UINT64_C(0xFFFFFFFF00000000)) | (uint32_t)((uint32_t)base.second + index);
    return t;
}

#endif
