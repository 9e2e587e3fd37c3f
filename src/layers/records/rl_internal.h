/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer internals: the embedded schema (record_metadata.proto and
 * record_key_expression.proto, compiled by protoc at build time into rl_schema_data.c) and
 * helpers to read dynamic messages by field name. */
#ifndef CFDB_RECORDS_RL_INTERNAL_H
#define CFDB_RECORDS_RL_INTERNAL_H

#include "error_codes.h"
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

/* ---- record store internals: index maintenance, states, held version mutations
 * (wt-rlidx) ---- */
#ifndef FDB_API_VERSION
#define FDB_API_VERSION 730
#endif
#include <foundationdb/fdb_c.h>
#include "cfdb/records/store.h"

/* Keyspaces under a store's prefix (FDBRecordStoreKeyspace). */
enum {
    RL_KS_STORE_INFO = 0, RL_KS_RECORD = 1, RL_KS_INDEX = 2, RL_KS_SECONDARY = 3,
    RL_KS_RECORD_COUNT = 4, RL_KS_INDEX_STATE = 5, RL_KS_INDEX_RANGE = 6,
    RL_KS_UNIQUENESS_VIOLATIONS = 7, RL_KS_RECORD_VERSION = 8, RL_KS_INDEX_BUILD = 9,
};

/* A versionstamped mutation held until commit (FDBRecordContext's version mutations). */
typedef struct rl_pending {
    FDBMutationType op;
    cfdb_bytes key, value;
} rl_pending;

struct cfdb_rl_store {
    const cfdb_rl_metadata *md;
    cfdb_arena arena;           /* prefixes, states */
    cfdb_bytes prefix;          /* P */
    cfdb_bytes header_key;      /* P + (0) */
    cfdb_bytes records;         /* P + (1) */
    int32_t format_version;
    int32_t metadata_version;
    bool omit_unsplit_suffix;
    uint8_t *states;            /* cfdb_rl_index_state per md->indexes[i] */
    cfdb_arena pending_arena;
    rl_pending *pending;
    uint32_t pending_count, pending_cap;
    uint16_t next_local;        /* next local version */
    const cfdb_rl_index *violation;
};

/* P + pack((keyspace, elem)) (elem NULL: P + pack((keyspace))). */
int rl_space(const cfdb_rl_store *s, cfdb_arena *a, int64_t keyspace, const cfdb_tuple_elem *elem,
             cfdb_bytes *out);
/* The index's subspace P + (2, subspace key). */
int rl_index_space(const cfdb_rl_store *s, cfdb_arena *a, const cfdb_rl_index *ix, cfdb_bytes *out);
uint32_t rl_index_pos(const cfdb_rl_store *s, const cfdb_rl_index *ix);
bool rl_index_applies(const cfdb_rl_index *ix, const cfdb_rl_record_type *type);

int rl_pending_add(cfdb_rl_store *s, FDBMutationType op, cfdb_bytes key, cfdb_bytes value);
bool rl_pending_remove(cfdb_rl_store *s, cfdb_bytes key);
const rl_pending *rl_pending_find(const cfdb_rl_store *s, cfdb_bytes key);

/* One side of an index update: a record, its type, primary key and version (12 bytes, NULL
 * when it has none). */
typedef struct rl_side {
    const cfdb_rl_record_type *type;
    const cfdb_pb_msg *rec;
    const cfdb_tuple *pk;
    const uint8_t *version;
} rl_side;

/* Entries as cfdb_rl_index_entries, with the record's version for version() columns. */
int rl_index_entries_v(cfdb_arena *a, const cfdb_rl_index *ix, const rl_side *r,
                       cfdb_rl_index_entry **out, uint32_t *count);
/* Columns of an entry's index key (before the primary key): split point or all. */
uint32_t rl_index_key_columns(const cfdb_rl_index *ix);

/* Maintainers: update ix from old (rec NULL: none) to new (rec NULL: deleted). The caller
 * checked that the index applies and is not disabled. */
int rl_value_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const rl_side *old, const rl_side *new_);
int rl_atomic_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                     const rl_side *old, const rl_side *new_);
int rl_version_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                      const rl_side *old, const rl_side *new_);
bool rl_atomic_supported(const char *type);
bool rl_atomic_idempotent(const char *type);
/* Dispatch by type; 2108 for types cfdb does not maintain. */
int rl_index_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const rl_side *old, const rl_side *new_);
bool rl_index_type_supported(const cfdb_rl_index *ix);

/* Index states (rl_index_state.c). */
int rl_states_load(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a);
int rl_state_write(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                   cfdb_rl_index_state st);
/* Clears an index's entries, secondary space, built ranges and uniqueness violations. */
int rl_index_clear_data(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix);

/* Range sets (rl_rangeset.c): Java's com.apple.foundationdb.async.RangeSet under subspace
 * `space`: key space + pack((begin bytes)) -> end bytes; begin {0x00}, end {0xff} stand for
 * the whole space. */
int rl_rangeset_insert(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes space, cfdb_bytes begin,
                       cfdb_bytes end, bool require_empty, bool *changed);
/* The first missing range; *found false when the set covers everything. */
int rl_rangeset_first_missing(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes space, bool *found,
                              cfdb_bytes *begin, cfdb_bytes *end);
int rl_rangeset_contains(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes space, cfdb_bytes key,
                         bool *out);

/* Store internals used by the indexer (rl_store.c). */
int rl_read_record(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                   bool *found, const cfdb_rl_record_type **type, cfdb_pb_msg **record,
                   cfdb_rl_version *version);
int rl_record_from_kvs(cfdb_rl_store *s, cfdb_arena *a, cfdb_bytes base, const void *kvs, uint32_t n,
                       bool *found, const cfdb_rl_record_type **type, cfdb_pb_msg **record,
                       cfdb_rl_version *version);

/* Record scans for the indexer and in-line rebuilds (rl_indexer.c): records whose packed
 * primary key is in [begin, end) (raw pk bytes after P + (1); empty end: to the end), in
 * order, at most max_records (then *more and *next = the next record's packed key) or until
 * max_bytes of keys and values were read. cb is called for each whole record. */
typedef int (*rl_record_cb)(void *ctx, const cfdb_tuple *pk, const cfdb_rl_record_type *type,
                            const cfdb_pb_msg *rec, const cfdb_rl_version *version);
int rl_scan_records(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_bytes begin,
                    cfdb_bytes end, uint32_t max_records, uint32_t max_bytes, rl_record_cb cb,
                    void *ctx, bool *more, cfdb_bytes *next, uint32_t *scanned);
/* Indexes one existing record into ix (the builders' path: no old record). */
int rl_index_record(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const cfdb_tuple *pk, const cfdb_rl_record_type *type, const cfdb_pb_msg *rec,
                    const cfdb_rl_version *version);

#endif
