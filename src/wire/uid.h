/* UID: FoundationDB's 128-bit identifier (two u64, `first` then `second`, little-endian on the wire).
 * Tokens that address endpoints are UIDs too. */
#ifndef CFDB_UID_H
#define CFDB_UID_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cfdb_uid {
    uint64_t first;
    uint64_t second;
} cfdb_uid;

static inline bool cfdb_uid_eq(cfdb_uid a, cfdb_uid b)
{
    return a.first == b.first && a.second == b.second;
}

static inline bool cfdb_uid_is_zero(cfdb_uid a)
{
    return a.first == 0 && a.second == 0;
}

/* 32 hex digits, `first` then `second`, as FoundationDB prints UIDs; buf needs 33 bytes. */
char *cfdb_uid_format(cfdb_uid u, char buf[33]);
/* Accepts the 32-hex-digit form; returns 0 or CFDB_WIRE_SERIALIZATION_FAILED (1044). */
int cfdb_uid_parse(const char *s, cfdb_uid *out);

void cfdb_uid_store(uint8_t out[16], cfdb_uid u);
cfdb_uid cfdb_uid_load(const uint8_t in[16]);

#endif
