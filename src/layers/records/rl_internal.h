/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer internals: the embedded schema (record_metadata.proto and
 * record_key_expression.proto, compiled by protoc at build time into rl_schema_data.c) and
 * helpers to read dynamic messages by field name. */
#ifndef CFDB_RECORDS_RL_INTERNAL_H
#define CFDB_RECORDS_RL_INTERNAL_H

#include "cfdb/errors.h"
#include "cfdb/records/protobuf.h"

#define RL_PKG "com.apple.foundationdb.record."
#define RL_EXPR_PKG "com.apple.foundationdb.record.expressions."

/* The schema pool, loaded once (thread-safe); NULL only when out of memory. */
const cfdb_pb_pool *cfdb_rl_schema(void);
/* A schema message by full name; NULL when the pool could not load or the name is unknown. */
const cfdb_pb_message *cfdb_rl_schema_msg(const char *full_name);

/* Field access by name on messages of the schema (the names are the .proto's; a name the
 * type lacks reads as unset). */
const cfdb_pb_field *rl_f(const cfdb_pb_msg *m, const char *name);
bool rl_has(const cfdb_pb_msg *m, const char *name);
int64_t rl_int(const cfdb_pb_msg *m, const char *name);
bool rl_bool(const cfdb_pb_msg *m, const char *name);
cfdb_bytes rl_bytes(const cfdb_pb_msg *m, const char *name);
const cfdb_pb_msg *rl_msg(const cfdb_pb_msg *m, const char *name);
uint32_t rl_count(const cfdb_pb_msg *m, const char *name);
const cfdb_pb_value *rl_at(const cfdb_pb_msg *m, const char *name, uint32_t i);
/* Setters for building schema messages; 2000 for a name the type lacks. */
int rl_set_int(cfdb_pb_msg *m, const char *name, int64_t v);
int rl_set_bytes(cfdb_pb_msg *m, const char *name, cfdb_bytes v);
int rl_mutable(cfdb_pb_msg *m, const char *name, cfdb_pb_msg **out);
int rl_add_msg(cfdb_pb_msg *m, const char *name, cfdb_pb_msg **out);
char *rl_strdup(cfdb_arena *a, cfdb_bytes s);

#include "cfdb/tuple.h"
/* A KeyExpression Value literal as a tuple element (null when no member is set; 1044 when
 * several are, as Java's LiteralKeyExpression.fromProtoValue). */
int rl_value_elem(cfdb_arena *a, const cfdb_pb_msg *value, cfdb_tuple_elem *out);

#endif
