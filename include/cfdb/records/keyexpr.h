/* SPDX-License-Identifier: Apache-2.0 */
/* Key expressions of the Java Record Layer: how primary keys and index entries are computed
 * from a record (fdb-record-layer's metadata/expressions: FieldKeyExpression.java and its siblings).
 *
 * An expression is read from its serialized KeyExpression protobuf (exactly one member set,
 * as the Java fromProto demands) into a tree held in an arena. Evaluating it on a dynamic
 * message gives a list of keys, each a tuple (include/cfdb/tuple.h), with the Java semantics:
 *   field(name)          SCALAR: the value when set, else the null stand-in (a tuple null;
 *                        with NOT_NULL the field's default value instead). FAN_OUT over a
 *                        repeated field: one key per value (none when empty). CONCATENATE:
 *                        one key holding all values as a nested tuple. A field the message
 *                        type does not have evaluates as absent. SCALAR on a repeated field
 *                        is an error (2000).
 *   nest(parent, child)  the child evaluated on the parent field's message(s): one per
 *                        FAN_OUT value, or on "no message" (the child gives its null result)
 *                        when the parent is absent; with NOT_NULL on an empty message.
 *   then(a, b, ...)      the cartesian product of the children's keys, columns concatenated.
 *   list(a, b, ...)      as then, but each child's key becomes one nested-tuple column.
 *   grouping, key_with_value, dimensions: their whole/inner key (the split into grouping or
 *                        value columns is the index maintainer's business).
 *   record_type_key      the record type's key (ctx), null when none is given.
 *   version              the record's 12-byte versionstamp (ctx), null when none is given.
 *   value(literal)       the literal; empty(): one empty key.
 *   split, function      not evaluated: 2108 unsupported_operation.
 * Values become tuple elements as the Java Record Layer converts them (TupleTypeUtil): int32,
 * sint32, sfixed32, int64, sint64, sfixed64 and enum numbers as integers; uint32 and fixed32
 * as Java's signed int of the same bits, uint64 and fixed64 as Java's signed long of the same
 * bits; float, double, bool, string, bytes as themselves. A message value outside nest() is
 * an error (2000), as it cannot be put in a tuple.
 *
 * Errors (FoundationDB codes): 1044 serialization_failed for a KeyExpression protobuf that is
 * malformed or has no (or several) members; 2000 client_invalid_operation as above and when
 * evaluation would give more than CFDB_KEX_MAX_KEYS keys; 2108; 4000 out of memory (CFDB_ERR_OUT_OF_MEMORY).
 */
#ifndef CFDB_RECORDS_KEYEXPR_H
#define CFDB_RECORDS_KEYEXPR_H

#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/records/protobuf.h"
#include "cfdb/tuple.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

/* Most keys one evaluation may produce (fan-outs multiply). */
#define CFDB_KEX_MAX_KEYS 100000u

/* The KeyExpression member numbers. */
typedef enum cfdb_kex_kind {
    CFDB_KEX_THEN = 1,
    CFDB_KEX_NEST = 2,
    CFDB_KEX_FIELD = 3,
    CFDB_KEX_GROUPING = 4,
    CFDB_KEX_EMPTY = 5,
    CFDB_KEX_SPLIT = 6,
    CFDB_KEX_VERSION = 7,
    CFDB_KEX_VALUE = 8,
    CFDB_KEX_FUNCTION = 9,
    CFDB_KEX_KEY_WITH_VALUE = 10,
    CFDB_KEX_RECORD_TYPE_KEY = 11,
    CFDB_KEX_LIST = 12,
    CFDB_KEX_DIMENSIONS = 13,
} cfdb_kex_kind;

/* Field.FanType and Field.NullInterpretation numbers. */
enum { CFDB_KEX_SCALAR = 1, CFDB_KEX_FAN_OUT = 2, CFDB_KEX_CONCATENATE = 3 };
enum { CFDB_KEX_NULL_NOT_UNIQUE = 1, CFDB_KEX_NULL_UNIQUE = 2, CFDB_KEX_NOT_NULL = 3 };

typedef struct cfdb_kex cfdb_kex;
struct cfdb_kex {
    cfdb_kex_kind kind;
    /* FIELD (and NEST's parent, which is always a field) */
    const char *field_name;
    uint8_t fan_type;
    uint8_t null_interpretation;
    /* THEN, LIST: the children; NEST: [parent field, child]; GROUPING, KEY_WITH_VALUE,
     * DIMENSIONS, SPLIT: [whole key]; FUNCTION: [arguments] */
    const cfdb_kex *const *children;
    uint32_t child_count;
    /* GROUPING: grouped_count; KEY_WITH_VALUE: split_point; SPLIT: split_size;
     * DIMENSIONS: prefix_size and dimensions_size */
    int32_t n1, n2;
    /* VALUE: the literal (CFDB_TUPLE_NULL when none set); FUNCTION: its name in .bytes */
    cfdb_tuple_elem value;
};

/* Reads a serialized KeyExpression. */
int cfdb_kex_parse(cfdb_arena *a, const uint8_t *data, size_t len, const cfdb_kex **out);
/* Reads a decoded KeyExpression message (from MetaData, Index, RecordType, ...). */
int cfdb_kex_from_msg(cfdb_arena *a, const cfdb_pb_msg *msg, const cfdb_kex **out);
/* Number of columns of each key the expression produces. */
uint32_t cfdb_kex_columns(const cfdb_kex *k);

/* What evaluation needs besides the message. */
typedef struct cfdb_kex_ctx {
    const cfdb_tuple_elem *record_type_key;   /* NULL: record_type_key gives null */
    const uint8_t *version;                    /* 12 bytes, NULL: version gives null */
} cfdb_kex_ctx;

/* Evaluates k on msg (which may be NULL: "no message"). *keys receives an arena array of
 * *count tuples. */
int cfdb_kex_evaluate(cfdb_arena *a, const cfdb_kex *k, const cfdb_pb_msg *msg,
                      const cfdb_kex_ctx *ctx, cfdb_tuple **keys, uint32_t *count);

/* Builders, for metadata made in C (each returns NULL when out of memory). */
const cfdb_kex *cfdb_kex_field(cfdb_arena *a, const char *name, int fan_type);
const cfdb_kex *cfdb_kex_nest(cfdb_arena *a, const cfdb_kex *parent, const cfdb_kex *child);
const cfdb_kex *cfdb_kex_then(cfdb_arena *a, const cfdb_kex *const *children, uint32_t n);
const cfdb_kex *cfdb_kex_list(cfdb_arena *a, const cfdb_kex *const *children, uint32_t n);
const cfdb_kex *cfdb_kex_record_type_key(cfdb_arena *a);
const cfdb_kex *cfdb_kex_empty(cfdb_arena *a);
const cfdb_kex *cfdb_kex_version(cfdb_arena *a);
const cfdb_kex *cfdb_kex_grouping(cfdb_arena *a, const cfdb_kex *whole, int32_t grouped_count);
/* Serializes k as a KeyExpression protobuf (the bytes the Java Record Layer writes). */
int cfdb_kex_serialize(cfdb_arena *a, const cfdb_kex *k, cfdb_bytes *out);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
