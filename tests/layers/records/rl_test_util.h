/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the Record Layer tests: protoc-made vectors, and MetaData protobufs built
 * field by field with the library's embedded schema. */
#ifndef CFDB_TESTS_RL_TEST_UTIL_H
#define CFDB_TESTS_RL_TEST_UTIL_H

#include "cfdb/records/keyexpr.h"
#include "cfdb/records/metadata.h"

#define BYTES(...) ((cfdb_bytes){ (const uint8_t[]){ __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ }) })

/* A file made by make_pb_vectors.sh (in CFDB_PB_VECTORS), read into the arena. */
cfdb_bytes rlt_read_vector(cfdb_arena *a, const char *name);
/* The FileDescriptorProto of rl_types.proto (the one file of rl_types_only.pb). */
cfdb_bytes rlt_records_file(cfdb_arena *a);
/* A new message of the embedded schema ("com.apple.foundationdb.record.MetaData", ...). */
cfdb_pb_msg *rlt_schema_msg(cfdb_arena *a, const char *full_name);
/* Sets the KeyExpression field `field` of parent to k. */
void rlt_kex_into(cfdb_arena *a, cfdb_pb_msg *parent, const char *field, const cfdb_kex *k);
cfdb_pb_msg *rlt_add_type(cfdb_arena *a, cfdb_pb_msg *md, const char *name, const cfdb_kex *pk);
cfdb_pb_msg *rlt_add_index(cfdb_arena *a, cfdb_pb_msg *md, const char *name, const char *type,
                           const cfdb_kex *root, const char *record_type);
/* A MetaData for rl_types.proto: Person keyed by (record type key, id), Order by order_id,
 * the given version. */
cfdb_pb_msg *rlt_base_metadata(cfdb_arena *a, int32_t version);
/* Encodes md and loads it (asserting success); its version is first raised to the highest
 * index version, as a metadata built in code (RecordMetaDataBuilder.addIndex) has it. */
cfdb_rl_metadata *rlt_load(cfdb_arena *a, cfdb_pb_msg *md);
/* A fresh key prefix "<tag>/<n>/" in a (n counts up across the process), so each test's
 * store lives apart. */
cfdb_bytes rlt_prefix(cfdb_arena *a, const char *tag);
/* x followed by y, in a. */
cfdb_bytes rlt_cat(cfdb_arena *a, cfdb_bytes x, cfdb_bytes y);

#endif
