/* SPDX-License-Identifier: Apache-2.0 */
/* Tuple layer: FoundationDB's order-preserving encoding of typed tuples (the
 * typecodes of design/tuple.md in FoundationDB 7.3), byte-compatible with the
 * official Python and Java bindings.
 *
 * Encoding, one element after another, each [code][data]:
 *   0x00             null (inside a nested tuple: 0x00 0xff)
 *   0x01 / 0x02      byte string / UTF-8 string, each 0x00 written 0x00 0xff, ended by 0x00
 *   0x05 ... 0x00    nested tuple: its elements, then 0x00
 *   0x0c..0x13       negative integer of 8..1 bytes, big-endian one's complement
 *   0x14             zero
 *   0x15..0x1c       positive integer of 1..8 bytes, big-endian
 *   0x0b / 0x1d      integer of 9..255 bytes (and, as the bindings do, exactly
 *                    |v| >= 2^64-1): a length byte (bits flipped for 0x0b) then
 *                    the magnitude big-endian (one's complement for 0x0b)
 *   0x20 / 0x21      float / double, big-endian IEEE bits; negative: all bits
 *                    flipped, otherwise only the sign bit
 *   0x26 / 0x27      false / true
 *   0x30             UUID, 16 bytes in network order
 *   0x32             80-bit versionstamp (10 bytes): "reserved" in the spec, refused by the
 *                    official bindings; cfdb reads it, and writes it only when one is added
 *   0x33             96-bit versionstamp (10-byte transaction version + 2-byte user
 *                    version, big-endian); incomplete when the first 10 bytes are all 0xff
 * Every other code is refused with invalid_tuple_data_type (2250), as the official
 * bindings refuse them: the deprecated 0x03/0x04/0x25, reserved 0x0a/0x1e/0x22-0x24/0x31,
 * and the user type codes 0x40-0x4f (neither binding passes them through).
 *
 * Order: cfdb_tuple_compare() orders tuples exactly as memcmp orders their packed
 * bytes (a shorter prefix first); integers by value whatever their width, floats in
 * IEEE total order (-0.0 < 0.0, NaNs by bits).
 *
 * Memory: a tuple lives in a caller's arena (include/cfdb/arena.h): the element array
 * grows by doubling inside the arena and every string/big-integer payload added or
 * unpacked is copied into it, so there is no malloc per element and everything is
 * released with the arena. A nested element points to a cfdb_tuple that must live at
 * least as long as its parent (use the same arena).
 *
 * Errors are FoundationDB codes (include/cfdb/errors.h): 0 on success,
 *   2250 invalid_tuple_data_type  unknown or unsupported type code in packed bytes
 *   2041 key_not_tuple            malformed packed bytes: truncated element, missing
 *                                 terminator, invalid UTF-8, nesting deeper than
 *                                 CFDB_TUPLE_MAX_DEPTH, or (canonical mode) a
 *                                 non-canonical encoding
 *   2251 invalid_tuple_index      element index out of range / element of another type
 *   2000 client_invalid_operation a value that cannot be packed: incomplete
 *                                 versionstamp in a plain pack, none or several in a
 *                                 versionstamp pack, invalid UTF-8 string, integer
 *                                 wider than 255 bytes
 *   4000 unknown_error            out of memory (CFDB_ERR_OUT_OF_MEMORY)
 */
#ifndef CFDB_TUPLE_H
#define CFDB_TUPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

/* Maximum nesting of tuples inside tuples that unpack accepts (and pack produces). */
#define CFDB_TUPLE_MAX_DEPTH 256

/* Element types; the value is the element's (first) type code. */
typedef enum cfdb_tuple_type {
    CFDB_TUPLE_NULL = 0x00,
    CFDB_TUPLE_BYTES = 0x01,
    CFDB_TUPLE_STRING = 0x02,
    CFDB_TUPLE_NESTED = 0x05,
    CFDB_TUPLE_INT = 0x14,           /* fits int64_t: v.i */
    CFDB_TUPLE_BIGINT = 0x1d,        /* outside int64_t: v.big (never a value that fits) */
    CFDB_TUPLE_FLOAT = 0x20,
    CFDB_TUPLE_DOUBLE = 0x21,
    CFDB_TUPLE_BOOL = 0x27,
    CFDB_TUPLE_UUID = 0x30,
    CFDB_TUPLE_VERSIONSTAMP80 = 0x32,
    CFDB_TUPLE_VERSIONSTAMP = 0x33,
} cfdb_tuple_type;

typedef struct cfdb_tuple cfdb_tuple;

typedef struct cfdb_tuple_elem {
    cfdb_tuple_type type;
    union {
        cfdb_bytes bytes;            /* BYTES, STRING (valid UTF-8), unescaped */
        int64_t i;                   /* INT */
        struct {
            bool negative;
            cfdb_bytes magnitude;    /* |v| big-endian, no leading zero byte, 8..255 bytes */
        } big;                       /* BIGINT */
        float f;                     /* FLOAT (bits kept exactly, NaN payloads too) */
        double d;                    /* DOUBLE */
        bool b;                      /* BOOL */
        uint8_t uuid[16];            /* UUID */
        uint8_t vs[12];              /* VERSIONSTAMP (12 bytes) / VERSIONSTAMP80 (first 10) */
        const cfdb_tuple *nested;    /* NESTED */
    } v;
} cfdb_tuple_elem;

struct cfdb_tuple {
    cfdb_arena *arena;
    cfdb_tuple_elem *elems;
    uint32_t count;
    uint32_t cap;
};

/* An empty tuple whose elements will live in arena a. */
void cfdb_tuple_init(cfdb_tuple *t, cfdb_arena *a);
/* Forgets the elements (their memory stays in the arena until it is reset). */
static inline void cfdb_tuple_clear(cfdb_tuple *t) { t->count = 0; }
static inline uint32_t cfdb_tuple_count(const cfdb_tuple *t) { return t->count; }
/* The element at index i, or NULL when i >= count. */
const cfdb_tuple_elem *cfdb_tuple_get(const cfdb_tuple *t, uint32_t i);

/* Appending elements (payloads are copied into the tuple's arena). */
int cfdb_tuple_add_null(cfdb_tuple *t);
int cfdb_tuple_add_bytes(cfdb_tuple *t, const void *p, size_t n);
/* s must be valid UTF-8 (else 2000); may contain NUL bytes. */
int cfdb_tuple_add_string(cfdb_tuple *t, const char *s, size_t n);
int cfdb_tuple_add_cstr(cfdb_tuple *t, const char *s);
int cfdb_tuple_add_int(cfdb_tuple *t, int64_t v);
int cfdb_tuple_add_uint64(cfdb_tuple *t, uint64_t v);
/* Arbitrary-precision integer: sign and big-endian magnitude (leading zeros allowed,
 * at most 255 significant bytes). Stored as INT when it fits int64_t. */
int cfdb_tuple_add_bigint(cfdb_tuple *t, bool negative, const uint8_t *magnitude, size_t n);
int cfdb_tuple_add_float(cfdb_tuple *t, float v);
int cfdb_tuple_add_double(cfdb_tuple *t, double v);
int cfdb_tuple_add_bool(cfdb_tuple *t, bool v);
int cfdb_tuple_add_uuid(cfdb_tuple *t, const uint8_t uuid[16]);
/* A complete 96-bit versionstamp: 10-byte transaction version + 2-byte user version. */
int cfdb_tuple_add_versionstamp(cfdb_tuple *t, const uint8_t vs[12]);
/* An incomplete one (transaction version 0xff * 10), filled in at commit by a
 * SET_VERSIONSTAMPED_KEY/VALUE packed with cfdb_tuple_pack_with_versionstamp(). */
int cfdb_tuple_add_incomplete_versionstamp(cfdb_tuple *t, uint16_t user_version);
/* 80-bit versionstamp (type 0x32; the official bindings cannot read it). */
int cfdb_tuple_add_versionstamp80(cfdb_tuple *t, const uint8_t vs[10]);
int cfdb_tuple_add_incomplete_versionstamp80(cfdb_tuple *t);
/* A nested tuple: n is referenced, not copied; it must outlive t. */
int cfdb_tuple_add_nested(cfdb_tuple *t, const cfdb_tuple *n);
/* Appends a copy of e (payload copied, a nested tuple referenced). */
int cfdb_tuple_add_elem(cfdb_tuple *t, const cfdb_tuple_elem *e);

/* Typed reads: 2251 when i is out of range or the element has another type. */
int cfdb_tuple_get_int(const cfdb_tuple *t, uint32_t i, int64_t *out);
int cfdb_tuple_get_bytes(const cfdb_tuple *t, uint32_t i, cfdb_bytes *out);   /* BYTES */
int cfdb_tuple_get_string(const cfdb_tuple *t, uint32_t i, cfdb_bytes *out);  /* STRING */
int cfdb_tuple_get_nested(const cfdb_tuple *t, uint32_t i, const cfdb_tuple **out);

/* True when the versionstamp element's transaction version is still all 0xff. */
bool cfdb_tuple_versionstamp_is_incomplete(const cfdb_tuple_elem *e);
/* Number of incomplete versionstamps (80- or 96-bit) anywhere in t, nested ones too. */
uint32_t cfdb_tuple_count_incomplete(const cfdb_tuple *t);

/* Exact size of prefix + packed t, without any versionstamp offset. 2000 when t holds a
 * value that cannot be packed (integer wider than 255 bytes, nesting too deep). */
int cfdb_tuple_packed_size(const cfdb_tuple *t, size_t *size);

/* out = prefix + pack(t), in arena a. 2000 when t contains an incomplete versionstamp
 * (as the official bindings' pack). prefix may be empty ({NULL, 0}). */
int cfdb_tuple_pack(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t, cfdb_bytes *out);
/* Writes into buf (capacity cap); *len = bytes written. 2000 when too small. */
int cfdb_tuple_pack_to(const cfdb_tuple *t, uint8_t *buf, size_t cap, size_t *len);
/* For SET_VERSIONSTAMPED_KEY / SET_VERSIONSTAMPED_VALUE (API >= 520): prefix + pack(t)
 * followed by the 4-byte little-endian offset of the incomplete versionstamp's
 * transaction version. t must hold exactly one incomplete versionstamp (else 2000). */
int cfdb_tuple_pack_with_versionstamp(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t,
                                      cfdb_bytes *out);
/* The keys of all tuples that start with t (and are longer):
 * [prefix + pack(t) + 0x00, prefix + pack(t) + 0xff). */
int cfdb_tuple_range(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t, cfdb_bytes *begin,
                     cfdb_bytes *end);

/* Unpack flags. */
#define CFDB_TUPLE_UNPACK_CANONICAL 1u  /* refuse encodings pack would not produce */

/* Decodes packed bytes into out (initialised here, elements in arena a). Like the
 * official bindings it accepts non-canonical integer encodings (a value written wider
 * than needed: 0x15 0x00, 0x1d with fewer than 9 bytes, ...); pack then writes the
 * canonical form. Unlike Python it refuses an unterminated string or nested tuple at
 * the end of the input (as Java does). */
int cfdb_tuple_unpack(cfdb_arena *a, cfdb_bytes packed, cfdb_tuple *out);
int cfdb_tuple_unpack_flags(cfdb_arena *a, cfdb_bytes packed, unsigned flags, cfdb_tuple *out);

/* <0, 0, >0 as the packed bytes of a and b compare (without packing them). */
int cfdb_tuple_compare(const cfdb_tuple *a, const cfdb_tuple *b);
int cfdb_tuple_elem_compare(const cfdb_tuple_elem *a, const cfdb_tuple_elem *b);
static inline bool cfdb_tuple_equal(const cfdb_tuple *a, const cfdb_tuple *b)
{
    return cfdb_tuple_compare(a, b) == 0;
}

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CFDB_TUPLE_H */
