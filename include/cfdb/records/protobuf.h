/* SPDX-License-Identifier: Apache-2.0 */
/* Protocol buffers, driven by descriptors loaded at run time (the Record Layer's records).
 *
 * Descriptors: a cfdb_pb_pool holds message and enum types loaded from a FileDescriptorSet
 * (what `protoc --descriptor_set_out --include_imports` writes) or from single serialized
 * FileDescriptorProtos (what the Java Record Layer stores in MetaData.records/dependencies).
 * Type names in fields are resolved with protobuf's scoping rules when a batch of files is
 * added; every name is unique in the pool. A pool owns all its descriptors: they live until
 * cfdb_pb_pool_destroy. Fields of a message are sorted by number.
 *
 * Messages: a cfdb_pb_msg is a dynamic message of one descriptor, held in a caller's arena
 * (include/cfdb/arena.h): one slot per field, values inline for singular fields and in one
 * arena array per repeated field; decoding counts the values of every field first and then
 * allocates exactly, so no memory is allocated per value. Strings and bytes that decoding
 * produces point into the input (keep it alive, or pass CFDB_PB_COPY_INPUT); setters copy
 * into the arena. Fields the descriptor does not know (or that arrive with another wire type,
 * or values of a closed enum the enum does not list) are kept as raw tag+value slices and
 * written back after the known fields, as the Java and C++ runtimes do, so a decode/encode
 * round trip keeps them.
 *
 * Encoding writes known fields in field-number order, then unknown fields: the bytes the
 * Java runtime writes for the same message. Repeated scalars are packed when the field says so
 * ([packed=true], or proto3 without [packed=false]). proto3 fields without presence are not
 * written when they hold their default (zero, empty); fields with presence (proto2 optional
 * and required, proto3 `optional`, message fields, oneof members) are written when set.
 *
 * Value storage (cfdb_pb_value) by field type:
 *   int32 sint32 sfixed32 int64 sint64 sfixed64 enum   .i  (sign-extended)
 *   uint32 fixed32 uint64 fixed64                      .u
 *   bool .b   float .f   double .d   string bytes .s   message group .m
 *
 * Errors are FoundationDB codes (include/cfdb/errors.h), 0 on success:
 *   1044 serialization_failed      malformed input: truncated varint/length/fixed value, a
 *                                  length past the end, wire types 6/7, field number 0,
 *                                  an end-group that does not match, packed data that does not
 *                                  divide, invalid UTF-8 in a proto3 string, nesting deeper
 *                                  than CFDB_PB_MAX_DEPTH, a missing required field, a
 *                                  message over 2 GiB, a decode that would use more memory
 *                                  than CFDB_PB_DECODE_BUDGET_*; for descriptors: a bad
 *                                  FileDescriptorSet, an unresolvable or duplicate type name,
 *                                  a field type that does not match what its name resolves to
 *   2000 client_invalid_operation  a setter or getter used on a field of another kind or
 *                                  another message, an index past the count
 *   4000 unknown_error             out of memory (CFDB_ERR_OUT_OF_MEMORY, as libfdb_c reports
 *                                  a failed allocation)
 *   4100 internal_error            an encoder invariant broke (the size computed for a
 *                                  message differs from the bytes written)
 * A cfdb_pb_error, when given, receives the code, the byte offset in the input where decoding
 * stopped and a sentence saying why.
 */
#ifndef CFDB_RECORDS_PROTOBUF_H
#define CFDB_RECORDS_PROTOBUF_H

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

/* Nesting of messages (and groups) decoding accepts, as the protobuf runtimes' default. */
#define CFDB_PB_MAX_DEPTH 100
/* Arena bytes one decode may use: BASE + PER_BYTE x input length (1044 past it). */
#define CFDB_PB_DECODE_BUDGET_BASE ((size_t)64 << 20)
#define CFDB_PB_DECODE_BUDGET_PER_BYTE ((size_t)64)

/* Field types: FieldDescriptorProto.Type's numbers. */
typedef enum cfdb_pb_type {
    CFDB_PB_DOUBLE = 1,
    CFDB_PB_FLOAT = 2,
    CFDB_PB_INT64 = 3,
    CFDB_PB_UINT64 = 4,
    CFDB_PB_INT32 = 5,
    CFDB_PB_FIXED64 = 6,
    CFDB_PB_FIXED32 = 7,
    CFDB_PB_BOOL = 8,
    CFDB_PB_STRING = 9,
    CFDB_PB_GROUP = 10,
    CFDB_PB_MESSAGE = 11,
    CFDB_PB_BYTES = 12,
    CFDB_PB_UINT32 = 13,
    CFDB_PB_ENUM = 14,
    CFDB_PB_SFIXED32 = 15,
    CFDB_PB_SFIXED64 = 16,
    CFDB_PB_SINT32 = 17,
    CFDB_PB_SINT64 = 18,
} cfdb_pb_type;

/* FieldDescriptorProto.Label's numbers. */
typedef enum cfdb_pb_label {
    CFDB_PB_OPTIONAL = 1,
    CFDB_PB_REQUIRED = 2,
    CFDB_PB_REPEATED = 3,
} cfdb_pb_label;

typedef struct cfdb_pb_msg cfdb_pb_msg;
typedef struct cfdb_pb_message cfdb_pb_message;
typedef struct cfdb_pb_enum cfdb_pb_enum;
typedef struct cfdb_pb_file cfdb_pb_file;

typedef union cfdb_pb_value {
    int64_t i;
    uint64_t u;
    bool b;
    float f;
    double d;
    cfdb_bytes s;
    cfdb_pb_msg *m;
} cfdb_pb_value;

typedef struct cfdb_pb_enum_value {
    const char *name;
    int32_t number;
} cfdb_pb_enum_value;

struct cfdb_pb_enum {
    const char *full_name;  /* "pkg.Outer.Color", no leading dot */
    const char *name;       /* "Color" */
    const cfdb_pb_enum_value *values;
    uint32_t value_count;
    bool closed;            /* proto2: values not listed are kept as unknown fields */
    const cfdb_pb_file *file;
};

typedef struct cfdb_pb_field {
    const char *name;
    uint32_t number;
    uint8_t type;           /* cfdb_pb_type */
    uint8_t label;          /* cfdb_pb_label */
    bool packed;            /* repeated scalar written packed */
    bool presence;          /* singular field that knows "set" from "default" */
    bool has_default;       /* proto2 [default = ...] given */
    int32_t oneof;          /* index into the message's oneofs, -1 for none */
    uint32_t index;         /* position in the message's fields */
    const cfdb_pb_message *message;     /* MESSAGE, GROUP */
    const cfdb_pb_enum *enumeration;    /* ENUM */
    const char *type_name;  /* as the descriptor wrote it, NULL for scalars */
    cfdb_pb_value default_value;  /* proto2 default, else zero/empty */
    cfdb_bytes options;     /* serialized FieldOptions, extensions included */
} cfdb_pb_field;

struct cfdb_pb_message {
    const char *full_name;  /* "pkg.Outer.Inner", no leading dot */
    const char *name;
    const cfdb_pb_field *fields;        /* sorted by number */
    uint32_t field_count;
    const char *const *oneofs;          /* oneof names, by oneof index */
    uint32_t oneof_count;
    bool map_entry;
    cfdb_bytes options;     /* serialized MessageOptions, extensions included */
    const cfdb_pb_file *file;
};

struct cfdb_pb_file {
    const char *name;       /* "dir/x.proto" */
    const char *package;    /* "" when none */
    bool proto3;
    const cfdb_pb_message *const *messages;   /* top-level messages, in file order */
    uint32_t message_count;
    const cfdb_pb_enum *const *enums;         /* top-level enums */
    uint32_t enum_count;
    const char *const *dependencies;
    uint32_t dependency_count;
    cfdb_bytes options;     /* serialized FileOptions */
};

typedef struct cfdb_pb_error {
    int code;
    size_t offset;
    char message[160];
} cfdb_pb_error;

/* ---- descriptor pool ---- */

typedef struct cfdb_pb_pool cfdb_pb_pool;

int cfdb_pb_pool_create(cfdb_pb_pool **out);
void cfdb_pb_pool_destroy(cfdb_pb_pool *pool);
/* Adds every file of a serialized FileDescriptorSet. Types may refer to files added before
 * or in the same set. On error the pool is left as it was. */
int cfdb_pb_pool_add_set(cfdb_pb_pool *pool, const uint8_t *data, size_t len, cfdb_pb_error *err);
/* Adds serialized FileDescriptorProtos (any order among themselves). */
int cfdb_pb_pool_add_files(cfdb_pb_pool *pool, const cfdb_bytes *files, size_t count,
                           cfdb_pb_error *err);
const cfdb_pb_message *cfdb_pb_pool_message(const cfdb_pb_pool *pool, const char *full_name);
const cfdb_pb_enum *cfdb_pb_pool_enum(const cfdb_pb_pool *pool, const char *full_name);
const cfdb_pb_file *cfdb_pb_pool_file(const cfdb_pb_pool *pool, const char *name);

const cfdb_pb_field *cfdb_pb_field_by_number(const cfdb_pb_message *m, uint32_t number);
const cfdb_pb_field *cfdb_pb_field_by_name(const cfdb_pb_message *m, const char *name);
const cfdb_pb_enum_value *cfdb_pb_enum_by_number(const cfdb_pb_enum *e, int32_t number);
const cfdb_pb_enum_value *cfdb_pb_enum_by_name(const cfdb_pb_enum *e, const char *name);
static inline bool cfdb_pb_field_repeated(const cfdb_pb_field *f)
{
    return f->label == CFDB_PB_REPEATED;
}

/* ---- dynamic messages ---- */

/* A new, empty message in the arena (NULL when out of memory). */
cfdb_pb_msg *cfdb_pb_msg_new(cfdb_arena *arena, const cfdb_pb_message *type);
const cfdb_pb_message *cfdb_pb_msg_type(const cfdb_pb_msg *msg);

/* Singular fields: set (with presence) or, without presence, holding a non-default value.
 * Repeated fields: at least one value. */
bool cfdb_pb_has(const cfdb_pb_msg *msg, const cfdb_pb_field *f);
/* Number of values: 0 or 1 for a singular field. */
uint32_t cfdb_pb_count(const cfdb_pb_msg *msg, const cfdb_pb_field *f);
/* The i-th value (NULL past the count). For a singular field i must be 0. */
const cfdb_pb_value *cfdb_pb_get(const cfdb_pb_msg *msg, const cfdb_pb_field *f, uint32_t i);
/* A singular field's value, or its default when not set (a NULL .m for messages). */
cfdb_pb_value cfdb_pb_get_or_default(const cfdb_pb_msg *msg, const cfdb_pb_field *f);
/* Which member of oneof `oneof` is set, or NULL. */
const cfdb_pb_field *cfdb_pb_which_oneof(const cfdb_pb_msg *msg, uint32_t oneof);

/* Setters copy strings/bytes into the message's arena. Setting a oneof member clears the
 * others. Message values: use cfdb_pb_mutable / cfdb_pb_add_msg. */
int cfdb_pb_set(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_value v);
int cfdb_pb_add(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_value v);
/* The singular message field's message, created empty when not set. */
int cfdb_pb_mutable(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_msg **out);
/* Appends a new empty message to a repeated message field. */
int cfdb_pb_add_msg(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_msg **out);
void cfdb_pb_clear(cfdb_pb_msg *msg, const cfdb_pb_field *f);

/* Unknown fields, each one raw tag+value as it was read. */
uint32_t cfdb_pb_unknown_count(const cfdb_pb_msg *msg);
cfdb_bytes cfdb_pb_unknown(const cfdb_pb_msg *msg, uint32_t i);

/* Merges src into dst (same type): protobuf's MergeFrom. dst's arena receives copies. */
int cfdb_pb_merge(cfdb_pb_msg *dst, const cfdb_pb_msg *src);

/* ---- codec ---- */

enum {
    CFDB_PB_COPY_INPUT = 1,     /* copy the input into the arena first */
    CFDB_PB_PARTIAL = 2,        /* do not check required fields */
};

/* Decodes one message of `type`. On error *out is NULL and the arena may hold garbage
 * (reset it). */
int cfdb_pb_decode(cfdb_arena *arena, const cfdb_pb_message *type, const uint8_t *data,
                   size_t len, unsigned flags, cfdb_pb_msg **out, cfdb_pb_error *err);
/* Serialized size (also caches nested sizes for the next encode). 1044 above 2 GiB. */
int cfdb_pb_encoded_size(cfdb_pb_msg *msg, size_t *size);
/* Encodes into the arena. */
int cfdb_pb_encode(cfdb_pb_msg *msg, cfdb_arena *arena, cfdb_bytes *out);
/* Encodes into buf (cap bytes; 2000 when too small), *written = size. */
int cfdb_pb_encode_to(cfdb_pb_msg *msg, uint8_t *buf, size_t cap, size_t *written);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
