/* SPDX-License-Identifier: Apache-2.0 */
/* Protobuf internals shared by the codec, the message accessors and the descriptor loader.
 *
 * A cfdb_pb_msg is one allocation: the header, then one slot per field of its type (in the
 * type's field order). A singular slot keeps its value inline (vals == &one, count 0 or 1);
 * a repeated slot points to an arena array of cap values. Proto3 fields without presence
 * count as set once assigned, and are written only when non-default. The unknown-field list
 * is an arena array of raw tag+value slices.
 *
 * Wire format: tag = (number << 3) | wire type; wire types 0 varint, 1 fixed64, 2 length-
 * delimited, 3 start group, 4 end group, 5 fixed32. Field numbers 1 .. 2^29-1.
 */
#ifndef CFDB_RECORDS_PB_INTERNAL_H
#define CFDB_RECORDS_PB_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "error_codes.h"
#include "cfdb/records/protobuf.h"

enum {
    PB_WT_VARINT = 0,
    PB_WT_FIXED64 = 1,
    PB_WT_LEN = 2,
    PB_WT_SGROUP = 3,
    PB_WT_EGROUP = 4,
    PB_WT_FIXED32 = 5,
};

#define PB_MAX_FIELD_NUMBER 536870911u
#define PB_MAX_MESSAGE_SIZE 0x7fffffffu

typedef struct pb_slot {
    cfdb_pb_value *vals;
    uint32_t count;
    uint32_t cap;
    cfdb_pb_value one;
} pb_slot;

struct cfdb_pb_msg {
    const cfdb_pb_message *type;
    cfdb_arena *arena;
    cfdb_bytes *unknown;
    uint32_t unknown_count;
    uint32_t unknown_cap;
    uint32_t cached_size;   /* set by cfdb_pb_encoded_size */
    pb_slot slots[];
};

/* The wire type a field's values use when not packed. */
static inline int pb_wire_type(uint8_t type)
{
    switch (type) {
    case CFDB_PB_DOUBLE: case CFDB_PB_FIXED64: case CFDB_PB_SFIXED64:
        return PB_WT_FIXED64;
    case CFDB_PB_FLOAT: case CFDB_PB_FIXED32: case CFDB_PB_SFIXED32:
        return PB_WT_FIXED32;
    case CFDB_PB_STRING: case CFDB_PB_BYTES: case CFDB_PB_MESSAGE:
        return PB_WT_LEN;
    case CFDB_PB_GROUP:
        return PB_WT_SGROUP;
    default:
        return PB_WT_VARINT;
    }
}

/* Numeric types may be packed. */
static inline bool pb_packable(uint8_t type)
{
    int wt = pb_wire_type(type);
    return wt == PB_WT_VARINT || wt == PB_WT_FIXED64 || wt == PB_WT_FIXED32;
}

static inline size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Reads a varint of at most 10 bytes; false when truncated or longer. */
static inline bool pb_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return false;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return true;
        }
    }
    return false;
}

static inline uint64_t pb_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t pb_unzigzag64(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline void pb_errorf(cfdb_pb_error *err, int code, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void pb_errorf(cfdb_pb_error *err, int code, size_t offset, const char *fmt, ...)
{
    if (!err)
        return;
    err->code = code;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* Validates UTF-8 as protobuf's proto3 strings require (no surrogates, no overlongs). */
bool cfdb_pb_utf8_valid(const uint8_t *p, size_t n);

/* Bootstrap descriptors of descriptor.proto (the parts the loader reads). */
typedef enum pb_boot_id {
    PB_BOOT_FILE_SET, PB_BOOT_FILE, PB_BOOT_DESCRIPTOR, PB_BOOT_FIELD, PB_BOOT_ONEOF,
    PB_BOOT_ENUM, PB_BOOT_ENUM_VALUE, PB_BOOT_FIELD_OPTIONS, PB_BOOT_MESSAGE_OPTIONS,
    PB_BOOT_COUNT
} pb_boot_id;
/* The descriptor.proto message id, built once from pb_bootstrap.c's field table. */
const cfdb_pb_message *cfdb_pb_boot(pb_boot_id id);
#define cfdb_pb_boot_file_set (*cfdb_pb_boot(PB_BOOT_FILE_SET))
#define cfdb_pb_boot_file (*cfdb_pb_boot(PB_BOOT_FILE))
#define cfdb_pb_boot_field_options (*cfdb_pb_boot(PB_BOOT_FIELD_OPTIONS))
#define cfdb_pb_boot_message_options (*cfdb_pb_boot(PB_BOOT_MESSAGE_OPTIONS))

#endif
