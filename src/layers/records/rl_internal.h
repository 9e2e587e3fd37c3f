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

/* ---- record store internals: index maintenance, states, held version mutations ---- */
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
    RL_KS_SLIDING_WINDOW = 10,
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
    /* record versions at P + (8, pk...) as 12 raw bytes, not beside the record (Java's
     * useOldVersionFormat: format < 6 or omit_unsplit_suffix) */
    bool old_versions;
    /* the header's cacheable flag: state changes bump \xff/metadataVersion */
    bool cacheable;
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
/* Whether key (columns first_col.. of root's keys) holds a null that Java's Key.Evaluated
 * marks NullStandin.NULL: one not from a field with the UNIQUE null interpretation
 * (IndexEntry.keyContainsNonUniqueNull). */
bool rl_key_has_non_unique_null(const cfdb_kex *root, const cfdb_tuple *key, uint32_t first_col);
/* Columns of an entry's index key (before the primary key): split point or all. */
uint32_t rl_index_key_columns(const cfdb_rl_index *ix);

/* Maintainers: update ix from old (rec NULL: none) to new (rec NULL: deleted). The caller
 * checked that the index applies and is not disabled. */
typedef int (*rl_update_fn)(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                            const cfdb_rl_index *ix, const rl_side *old, const rl_side *new_);
int rl_value_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const rl_side *old, const rl_side *new_);
/* A readable unique VALUE index's check of the new record's entries alone (no write): 2000
 * with s->violation set when one belongs to another record; 0 for other indexes. */
int rl_value_check_unique(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                          const rl_side *old, const rl_side *new_);
int rl_atomic_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                     const rl_side *old, const rl_side *new_);
int rl_version_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                      const rl_side *old, const rl_side *new_);

/* The mutation parameter an atomic index takes from an entry's grouped value
 * (rl_index_atomic.c). */
typedef enum rl_atomic_param {
    RL_PARAM_COUNT = 1,        /* +1 / -1 */
    RL_PARAM_COUNT_UPDATES,    /* +1 on every new entry, nothing on removal */
    RL_PARAM_COUNT_NOT_NULL,   /* +1 / -1 unless the grouped value holds a null */
    RL_PARAM_SUM,              /* +v / -v of an integer */
    RL_PARAM_LONG,             /* v, a non-negative integer, on insert only (MAX/MIN) */
    RL_PARAM_TUPLE,            /* pack(grouped value), on insert only (BYTE_MAX/BYTE_MIN) */
} rl_atomic_param;

/* One index type (the registry in rl_index.c; Java's IndexMaintainerFactory per type, found
 * through IndexMaintainerRegistry). Every rule that depends on the index type is here:
 * metadata, maintenance, scans and states. */
typedef struct cfdb_rl_maintainer {
    const char *type;             /* the index type name ("value", "count", ...) */
    rl_update_fn update;          /* NULL: known but not maintained by cfdb (saves to its
                                   * record types refused 2108, upgrades disable it) */
    bool allows_unique;           /* a unique index of the type is maintained */
    bool value_scans;             /* BY_VALUE scans and the query planner use it */
    bool idempotent;              /* updating it twice for one record is harmless, so a
                                   * write-only index needs no built-range check */
    /* Index(proto): a root that is not a grouping expression is wrapped in one, grouping
     * 1 column, or every column when implied_grouping is -1; 0: never wrapped. */
    int8_t implied_grouping;
    bool option_ungrouped;        /* a field-option index of the type is field.ungrouped() */
    /* Atomic types: the mutation and its parameter (op 0: not atomic). */
    FDBMutationType op;
    rl_atomic_param param;
    /* The type's own metadata rules, run for each record type the index applies to (last:
     * the last field its root reads there, or NULL): NULL when ix passes, else why (Java:
     * the factory's getIndexValidator). NULL: no rules of its own. */
    const char *(*validate)(const cfdb_rl_metadata *md, const cfdb_rl_index *ix,
                            const cfdb_pb_field *last);
} cfdb_rl_maintainer;

/* Metadata validation (rl_validate.c): the index types' rules, and MetaDataValidator's for
 * the whole metadata (NULL when it passes, else why and *name the type or index). */
const char *rl_validate_value(const cfdb_rl_metadata *md, const cfdb_rl_index *ix,
                              const cfdb_pb_field *last);
const char *rl_validate_version(const cfdb_rl_metadata *md, const cfdb_rl_index *ix,
                                const cfdb_pb_field *last);
const char *rl_validate_atomic(const cfdb_rl_metadata *md, const cfdb_rl_index *ix,
                               const cfdb_pb_field *last);
const char *rl_validate_metadata(const cfdb_rl_metadata *md, const char **name);

/* The registry entry of an index type name; NULL for a type cfdb does not know. */
const cfdb_rl_maintainer *rl_maintainer_find(const char *type);
/* Whether cfdb maintains ix (its type has an update and allows ix's uniqueness). */
bool rl_index_type_supported(const cfdb_rl_index *ix);
/* Whether updates of a write-only ix go only to ranges the online indexer has built. */
bool rl_index_update_needs_built_range(const cfdb_rl_index *ix);
/* Whether ix may be scanned BY_VALUE and planned over. */
bool rl_index_value_scans(const cfdb_rl_index *ix);
/* Through ix's maintainer; 2108 for types cfdb does not maintain. */
int rl_index_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const rl_side *old, const rl_side *new_);

/* Stores with a cacheable state (format 7's DataStoreInfo.cacheable): the database's
 * metadata version stamp set at commit, so Java's MetaDataVersionStampStoreStateCache drops
 * what it holds of this store (FDBRecordContext.setMetaDataVersionStamp: SET_VERSIONSTAMPED_VALUE
 * of \xff/metadataVersion with 14 zero bytes). Nothing for other stores. */
void rl_bump_metadata_version(const cfdb_rl_store *s, FDBTransaction *tr);

/* Former indexes (rl_former.c): read from a MetaData message into md (1044 for a subspace
 * key that is not a one-element tuple or null), and their data cleared when the stored
 * metadata version is one they existed at and were removed after. */
int rl_former_indexes_from_proto(cfdb_arena *a, const cfdb_pb_msg *p, cfdb_rl_metadata *md);
int rl_remove_former_indexes(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, int32_t stored_md);

/* Index states (rl_index_state.c). */
int rl_states_load(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a);
int rl_state_write(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                   cfdb_rl_index_state st);
/* Clears an index's entries, secondary and sliding-window spaces, built ranges, uniqueness
 * violations and build bookkeeping (FDBRecordStore.clearIndexData). */
int rl_index_clear_data(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix);
/* Clears P + (9, subspace key) but its lock, P + (9, subspace key, 0): the type stamp,
 * heartbeats and the rest of an online build's bookkeeping
 * (IndexingSubspaces.eraseAllIndexingDataButTheLockAndRangeSet). */
int rl_index_clear_build_data(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                              const cfdb_rl_index *ix);

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
/* Stores with old-format versions: the version of pk read from P + (8, pk...) (or held in
 * this transaction) into *version; nothing for other stores. */
int rl_old_version(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
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
