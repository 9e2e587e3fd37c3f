/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer metadata: record types and indexes, as the Java Record Layer's RecordMetaData
 * (fdb-record-layer's RecordMetaData, RecordMetaDataBuilder, RecordType and Index).
 *
 * Two ways in, as in Java:
 *  - cfdb_rl_metadata_from_proto: a serialized MetaData message (what RecordMetaData.toProto
 *    writes and FDBMetaDataStore keeps): the records FileDescriptorProto and its dependencies,
 *    record types with their primary keys, indexes, version, options.
 *  - cfdb_rl_metadata_from_file: a records .proto compiled by protoc, with the Record Layer's
 *    options: (com.apple.foundationdb.record.record).usage = UNION or a message named
 *    RecordTypeUnion is the union; (field).primary_key gives a primary key; (field).index
 *    adds an index named "Type$field"; (schema) gives split_long_records and
 *    store_record_versions; (record).since_version and .record_type_key.
 * The union message's fields name the record types: each must be a singular message field,
 * the type's record type key is the smallest union field number holding it unless an
 * explicit key is given, and every record type needs a primary key. Index types keep their
 * Java names ("value", "count", "sum", "max_ever_long", "version", ...); count, sum, rank,
 * min/max_ever without a grouping expression get one as Java's Index(proto) adds it. An
 * index's record types: none = every type (universal), else the listed ones. An index's
 * subspace key is the one element of its subspace_key tuple, else its name.
 *
 * The metadata owns a descriptor pool and an arena; everything it points to lives until
 * cfdb_rl_metadata_free. Errors: 1044 serialization_failed for malformed protobuf or
 * metadata that breaks the rules above (err->message says which); 4000 out of memory (CFDB_ERR_OUT_OF_MEMORY).
 */
#ifndef CFDB_RECORDS_METADATA_H
#define CFDB_RECORDS_METADATA_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/records/keyexpr.h"
#include "cfdb/records/protobuf.h"
#include "cfdb/tuple.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfdb_rl_index cfdb_rl_index;

typedef struct cfdb_rl_record_type {
    const char *name;                       /* the message's short name */
    const cfdb_pb_message *descriptor;
    const cfdb_pb_field *union_field;       /* the union field that holds it */
    const cfdb_kex *primary_key;
    cfdb_tuple_elem record_type_key;
    int32_t since_version;                  /* 0 when not known */
    const cfdb_rl_index *const *indexes;    /* indexes on this type only */
    uint32_t index_count;
    const cfdb_rl_index *const *multi_type_indexes;   /* indexes on it and other types */
    uint32_t multi_type_index_count;
} cfdb_rl_record_type;

typedef struct cfdb_rl_index_option {
    const char *key;
    const char *value;
} cfdb_rl_index_option;

struct cfdb_rl_index {
    const char *name;
    const char *type;                       /* "value", "count", ... */
    const cfdb_kex *root;
    cfdb_tuple_elem subspace_key;
    const cfdb_rl_index_option *options;
    uint32_t option_count;
    bool unique;                            /* option unique = "true" */
    int32_t added_version;
    int32_t last_modified_version;
    const cfdb_rl_record_type *const *record_types;   /* none: universal */
    uint32_t record_type_count;
    /* Single-type indexes: for each primary key component, its position in the index key, or
     * -1 (Java's primaryKeyComponentPositions); NULL when the key holds none of them. */
    const int32_t *pk_positions;
    uint32_t pk_position_count;
};

typedef struct cfdb_rl_metadata {
    cfdb_pb_pool *pool;
    const cfdb_pb_file *records_file;
    const cfdb_pb_message *union_descriptor;
    const cfdb_rl_record_type *record_types;
    uint32_t record_type_count;
    const cfdb_rl_index *indexes;
    uint32_t index_count;
    int32_t version;
    bool split_long_records;
    bool store_record_versions;
    const cfdb_kex *record_count_key;       /* NULL when none */
} cfdb_rl_metadata;

int cfdb_rl_metadata_from_proto(const uint8_t *data, size_t len, cfdb_rl_metadata **out,
                                cfdb_pb_error *err);
/* set: a serialized FileDescriptorSet holding file_name and its imports. */
int cfdb_rl_metadata_from_file(const uint8_t *set, size_t set_len, const char *file_name,
                               cfdb_rl_metadata **out, cfdb_pb_error *err);
void cfdb_rl_metadata_free(cfdb_rl_metadata *md);

const cfdb_rl_record_type *cfdb_rl_record_type_by_name(const cfdb_rl_metadata *md,
                                                       const char *name);
const cfdb_rl_record_type *cfdb_rl_record_type_of(const cfdb_rl_metadata *md,
                                                  const cfdb_pb_message *descriptor);
const cfdb_rl_index *cfdb_rl_index_by_name(const cfdb_rl_metadata *md, const char *name);
/* An index option's value, NULL when not set. */
const char *cfdb_rl_index_option_value(const cfdb_rl_index *index, const char *key);

/* An index entry: its key (the index key followed by the primary key components the index
 * key does not hold) and its value (key_with_value's value columns, else empty). */
typedef struct cfdb_rl_index_entry {
    cfdb_tuple key;
    cfdb_tuple value;
} cfdb_rl_index_entry;

/* The entries index ix has for record (of type type, primary key pk). */
int cfdb_rl_index_entries(cfdb_arena *a, const cfdb_rl_index *ix, const cfdb_rl_record_type *type,
                          const cfdb_pb_msg *record, const cfdb_tuple *pk,
                          cfdb_rl_index_entry **out, uint32_t *count);
/* Positions of the primary key's components in an index key (see cfdb_rl_index). */
int cfdb_rl_pk_positions(cfdb_arena *a, const cfdb_kex *index_root, const cfdb_kex *primary_key,
                         const int32_t **positions, uint32_t *count);

/* A record's primary key: the type's primary key expression must give exactly one key
 * (2000 otherwise, as Java's evaluateSingleton). */
int cfdb_rl_primary_key(cfdb_arena *a, const cfdb_rl_record_type *type, const cfdb_pb_msg *record,
                        cfdb_tuple *out);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
