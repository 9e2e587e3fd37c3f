/* SPDX-License-Identifier: Apache-2.0 */
/* Record store: records of a cfdb_rl_metadata under a key prefix, in the Java Record Layer's
 * layout (fdb-record-layer's FDBRecordStore, FDBRecordStoreKeyspace, SplitHelper), over the
 * public fdb_c.h API. Calls block on their futures; each takes the caller's transaction.
 *
 * Layout under the store's prefix P (tuple-encoded keys):
 *   P + (0)                      store header: a DataStoreInfo protobuf
 *   P + (1, pk..., 0)            an unsplit record: the serialized union message with the
 *                                record in its type's union field
 *   P + (1, pk..., 1), (.., 2)   a record over 100,000 bytes, in 100,000-byte pieces, when the
 *                                metadata says split_long_records
 *   P + (1, pk...)               an unsplit record of a store whose header says
 *                                omit_unsplit_record_suffix (format < 5 without splitting)
 *   P + (2, subspace key, index key..., pk...)
 *                                an entry of a VALUE index: the index key, then the primary
 *                                key components the index key does not hold; the value is the
 *                                packed value columns (key_with_value) or empty
 *   P + (2, subspace key, group...)   count/sum/max_ever/min_ever aggregates (atomic ops)
 *   P + (4, count key...)        record counts (little-endian int64, ADD)
 *   P + (5, index name)          index state (absent: readable)
 *   P + (6, subspace key, ...)   built ranges of an index being built (Java's RangeSet)
 *   P + (7, subspace key, ...)   uniqueness violations of a write-only unique index
 *   P + (1, pk..., -1)           the record's version, pack((versionstamp))
 *   P + (3), (8) ... (10)        secondary index space, pre-format-6 versions, index builds,
 *                                sliding windows (not used by cfdb's index types)
 *
 * Opening checks the header as FDBRecordStore.checkVersion does: a store without a header
 * must be empty (else 2000), and is created (format version 7, CACHEABLE_STATE, Java's
 * default; metaDataversion = the metadata's version); a header whose format version is past
 * what cfdb reads (CFDB_RL_MAX_FORMAT_VERSION) is refused with 1058
 * unsupported_format_version; a stored metadata version above the metadata's is refused with
 * 2000 (Java's RecordStoreStaleMetaDataVersionException); an older one, or an older format
 * version, is upgraded in the header (lastUpdateTime refreshed, unknown header fields kept),
 * and indexes added or changed after the stored metadata version are rebuilt or disabled
 * (see cfdb_rl_open_options). Index states are read on open.
 *
 * Saves and deletes read the old record once (when the metadata has indexes or a record
 * count key, or *existed is asked for) and update every index of the old and new record's
 * types that is not disabled, each by its type's maintainer (see below).
 *
 * Errors: FoundationDB codes from the transaction, and 2000 client_invalid_operation (mode
 * refused: create on an existing store, open of a missing one; a record of a type the
 * metadata does not have; stale metadata), 2103 value_too_large (a record over 100,000 bytes
 * without split_long_records, or an index value over 100,000 bytes), 2102 key_too_large (an
 * index key over 10,000 bytes), 1044 serialization_failed (stored bytes that do not decode:
 * a bad header, a record whose pieces are out of order or whose union holds no record),
 * 1058, 4000 out of memory (CFDB_ERR_OUT_OF_MEMORY).
 *
 * Out-parameters, as for every Record Layer function that makes an object: *out is NULL
 * when cfdb_rl_store_open or cfdb_rl_store_open_with fails.
 */
#ifndef CFDB_RECORDS_STORE_H
#define CFDB_RECORDS_STORE_H

#ifndef FDB_API_VERSION
#define FDB_API_VERSION 730
#endif
#include <foundationdb/fdb_c.h>

#include "cfdb/records/metadata.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

/* Java's FormatVersion values cfdb knows; it writes CACHEABLE_STATE (7) and reads up to 7. */
#define CFDB_RL_FORMAT_SAVE_UNSPLIT_WITH_SUFFIX 5
#define CFDB_RL_FORMAT_SAVE_VERSION_WITH_RECORD 6
#define CFDB_RL_FORMAT_CACHEABLE_STATE 7
#define CFDB_RL_MAX_FORMAT_VERSION 7
/* SplitHelper.SPLIT_RECORD_SIZE */
#define CFDB_RL_SPLIT_RECORD_SIZE 100000
/* FoundationDB's key and value size limits, checked for index entries. */
#define CFDB_RL_MAX_KEY_SIZE 10000
#define CFDB_RL_MAX_VALUE_SIZE 100000

typedef enum cfdb_rl_open_mode {
    CFDB_RL_CREATE_OR_OPEN = 0,
    CFDB_RL_CREATE = 1,
    CFDB_RL_OPEN = 2,
} cfdb_rl_open_mode;

typedef struct cfdb_rl_store cfdb_rl_store;

int cfdb_rl_store_open(FDBTransaction *tr, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                       cfdb_rl_open_mode mode, cfdb_rl_store **out);
void cfdb_rl_store_free(cfdb_rl_store *s);

/* What the header said when the store was opened (after any upgrade). */
int32_t cfdb_rl_store_format_version(const cfdb_rl_store *s);
int32_t cfdb_rl_store_metadata_version(const cfdb_rl_store *s);
bool cfdb_rl_store_omits_unsplit_suffix(const cfdb_rl_store *s);
/* P + (1): where the records are. */
cfdb_bytes cfdb_rl_store_records_prefix(const cfdb_rl_store *s);

/* Saves (inserts or replaces) a record: its type is the metadata's record type of its
 * message type. *existed (may be NULL) tells whether a record had that primary key. */
int cfdb_rl_store_save(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_pb_msg *record,
                       bool *existed);

typedef struct cfdb_rl_loaded {
    bool found;
    const cfdb_rl_record_type *type;
    cfdb_pb_msg *record;          /* in the caller's arena */
    cfdb_tuple primary_key;
} cfdb_rl_loaded;

/* Loads the record with primary key pk (found false when none). */
int cfdb_rl_store_load(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                       cfdb_rl_loaded *out);
/* Deletes the record with primary key pk; *existed (may be NULL) tells whether there was one. */
int cfdb_rl_store_delete(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                         bool *existed);


/* ---- index types, index states, record versions, counts, delete-all, online indexer
 * (layouts and Java sources in docs/design/records.md) ----
 *
 * Index maintenance by type (src/layers/records/rl_index_*.c): "value" (unique too: a
 * second record with the same index key is refused with 2000 client_invalid_operation when
 * the index is readable, Java's RecordIndexUniquenessViolation — checked before the save
 * writes anything, so a refused save leaves the transaction as it was — or recorded under
 * P + (7, subspace key, index key..., pk...) = the other primary key when it is write-only);
 * "count", "count_updates", "count_not_null", "sum" (little-endian int64 ADD),
 * "max_ever_long"/"min_ever_long" (MAX/MIN of a little-endian int64, negatives refused),
 * "max_ever_tuple"/"min_ever_tuple" (BYTE_MAX/BYTE_MIN of the packed grouped tuple), each at
 * P + (2, subspace key, group...); "version" (entries keyed by the record's versionstamp,
 * written with SET_VERSIONSTAMPED_KEY at commit). Other types (rank, text, ...) are refused
 * with 2108 on save.
 *
 * Versions: a save into a store whose metadata stores record versions (which version indexes
 * require, as Java's IndexValidator) gets an incomplete version (10 x 0xff + a 2-byte local counter); its
 * versionstamped mutations are held by the store until cfdb_rl_store_prepare_commit, which
 * must be called on the transaction just before committing it (as Java's FDBRecordContext
 * applies its version mutations at commit). After a retry (on_error), open a new store or
 * call cfdb_rl_store_reset_pending. */
typedef enum cfdb_rl_index_state {
    CFDB_RL_INDEX_READABLE = 0,    /* IndexState.READABLE: no key in the index-state space */
    CFDB_RL_INDEX_WRITE_ONLY = 1,  /* maintained, not readable */
    CFDB_RL_INDEX_DISABLED = 2,    /* neither */
} cfdb_rl_index_state;

typedef struct cfdb_rl_open_options {
    /* The state an index added or changed since the stored metadata version gets on an
     * upgrade when it cannot be built in the open transaction (more than
     * CFDB_RL_MAX_RECORDS_FOR_REBUILD records, not on new record types): DISABLED by
     * default, as Java's FDBRecordStore.disabledIfTooManyRecordsForRebuild, or WRITE_ONLY. */
    cfdb_rl_index_state too_many_records_state;
    /* true: such an index is never built in the open transaction, whatever the number of
     * records (it gets too_many_records_state), for a caller that builds it online with
     * cfdb_rl_index_build (which records uniqueness violations rather than failing the
     * open); a store without records or an index on new record types only is still marked
     * readable at once. */
    bool build_online;
} cfdb_rl_open_options;
/* FDBRecordStore.MAX_RECORDS_FOR_REBUILD */
#define CFDB_RL_MAX_RECORDS_FOR_REBUILD 200

int cfdb_rl_store_open_with(FDBTransaction *tr, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                            cfdb_rl_open_mode mode, const cfdb_rl_open_options *opts,
                            cfdb_rl_store **out);

/* Writes the held versionstamped mutations into tr (call right before committing it). */
int cfdb_rl_store_prepare_commit(cfdb_rl_store *s, FDBTransaction *tr);
/* Forgets held mutations and restarts the local version counter (after a retry). */
void cfdb_rl_store_reset_pending(cfdb_rl_store *s);

/* A record's version as loaded (cfdb_rl_store_load_version): the 12-byte FDBRecordVersion,
 * complete when read from the database, incomplete (10 x 0xff + local) when saved in this
 * transaction. */
typedef struct cfdb_rl_version {
    bool present;
    bool complete;
    uint8_t bytes[12];
} cfdb_rl_version;
int cfdb_rl_store_load_version(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                               const cfdb_tuple *pk, cfdb_rl_version *out);

/* Index states (P + (5, index name) = pack((code)), absent when readable). */
cfdb_rl_index_state cfdb_rl_store_index_state(const cfdb_rl_store *s, const char *index_name);
/* Marks an index write-only or disabled (disabling clears its entries, built ranges and
 * uniqueness violations, as FDBRecordStore.markIndexDisabled); readable needs the index
 * built (its range set complete: 2000 otherwise) and, unique, without violations (2000). */
int cfdb_rl_store_mark_index(cfdb_rl_store *s, FDBTransaction *tr, const char *index_name,
                             cfdb_rl_index_state state);
/* The uniqueness violation a save last ran into: its index (NULL when none). */
const cfdb_rl_index *cfdb_rl_store_last_violation(const cfdb_rl_store *s);

/* Sum of the record counts under P + (4, key...) (key may be NULL or empty: all of them). */
int cfdb_rl_store_record_count(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                               const cfdb_tuple *key, int64_t *out);
/* Deletes every record and index entry; keeps the header and the index states
 * (FDBRecordStore.deleteAllRecords). */
int cfdb_rl_store_delete_all(cfdb_rl_store *s, FDBTransaction *tr);

/* Online indexer (rl_indexer.c): builds index `index_name` of the store at prefix over its
 * existing records in batches, one transaction each, recording built primary-key ranges in
 * P + (6, subspace key) (Java's RangeSet) so that a later call resumes after the last
 * committed batch, then marks the index readable. As Java's OnlineIndexer building one index
 * by records, it stamps the build BY_RECORDS at P + (9, subspace key, 2) and keeps a
 * heartbeat at P + (9, subspace key, 7, its UUID) in every batch; a build another method
 * started (a BY_INDEX build's ranges are index keys, not primary keys), a blocked stamp or
 * another live indexer is refused with 2000 (see the stats). */
typedef struct cfdb_rl_indexer_options {
    uint32_t max_records;      /* per transaction; 0: 100 */
    uint32_t max_bytes;        /* record bytes read per transaction; 0: 1,000,000 */
    uint32_t max_batches;      /* stop (as if interrupted) after this many; 0: no limit */
} cfdb_rl_indexer_options;
typedef struct cfdb_rl_indexer_stats {
    uint32_t batches;          /* transactions committed */
    uint64_t records;          /* records indexed */
    uint32_t retries;
    bool readable;             /* the index was marked readable */
    /* Why another indexer's bookkeeping under P + (9, subspace key) refused the build (2000):
     * the method of an indexing type stamp other than BY_RECORDS (IndexBuildIndexingStamp
     * .Method: 2 BY_INDEX, 4 MULTI_TARGET_BY_RECORDS, 5 MUTUAL_BY_RECORDS, ...; 0 none),
     * a blocked stamp, or a heartbeat of another indexer younger than its 10 s lease. */
    int32_t other_method;
    bool blocked;
    bool other_indexer;
} cfdb_rl_indexer_stats;
int cfdb_rl_index_build(FDBDatabase *db, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                        const char *index_name, const cfdb_rl_indexer_options *opts,
                        cfdb_rl_indexer_stats *stats);
/* Cursors and scans (include/cfdb/records/cursor.h): what a store was opened with. */
const cfdb_rl_metadata *cfdb_rl_store_metadata(const cfdb_rl_store *s);
/* P: the store's prefix. */
cfdb_bytes cfdb_rl_store_prefix(const cfdb_rl_store *s);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
