/* SPDX-License-Identifier: Apache-2.0 */
/* Record store: the store header check on open, and saving, loading and deleting records by
 * primary key, split over several keys when they are long (layout and rules in
 * include/cfdb/records/store.h; Java: FDBRecordStore.checkVersion/checkPossiblyRebuild,
 * SplitHelper.saveWithSplit/writeSplitRecord/clearPreviousSplitRecord, and
 * DynamicMessageRecordSerializer for the union message).
 *
 * Reads and writes go through the directory layer's blocking fdb_c.h helpers (dir_io.h):
 * nothing here touches the client's internals. A save clears the record's whole key range
 * first (its old pieces and version), as Java does when it does not know the old record's
 * size, then writes the value under (pk, 0) or its pieces under (pk, 1..n). A load reads the
 * record's range and puts it together with the unsplitter (rl_unsplit.c, shared with the
 * cursors: one assembly of pieces and versions).
 *
 * Also here: record versions (P + (1, pk..., -1) = pack((versionstamp)), held as a
 * SET_VERSIONSTAMPED_VALUE until cfdb_rl_store_prepare_commit; SplitHelper.writeVersion,
 * packVersion), record counts (ADD of a little-endian int64 at P + (4, count key...) when a
 * record is inserted or deleted; FDBRecordStore.addRecordCount), delete-all
 * (FDBRecordStore.deleteAllRecords: everything but the header and the index states), the
 * upgrade rules for indexes new since the stored metadata version
 * (FDBRecordStore.checkPossiblyRebuild / rebuildIndexes: built in the open transaction when
 * the store has at most 200 records or the index is on new record types only, else
 * disabled or write-only), and the dispatch of every applicable, not disabled index to its
 * maintainer (rl_index_*.c). Invariant: every versionstamped mutation of the transaction is
 * in s->pending until prepare_commit, so reads in the transaction never meet an unreadable
 * key. */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "../dir_io.h"
#include "cfdb/records/store.h"
#include "cfdb/subspace.h"
#include "rl_cursor_internal.h"
#include "rl_internal.h"

enum { KEYSPACE_STORE_INFO = RL_KS_STORE_INFO, KEYSPACE_RECORD = RL_KS_RECORD };
enum { SUFFIX_VERSION = -1, SUFFIX_UNSPLIT = 0, SUFFIX_FIRST_SPLIT = 1 };

int32_t cfdb_rl_store_format_version(const cfdb_rl_store *s)
{
    return s->format_version;
}

int32_t cfdb_rl_store_metadata_version(const cfdb_rl_store *s)
{
    return s->metadata_version;
}

bool cfdb_rl_store_omits_unsplit_suffix(const cfdb_rl_store *s)
{
    return s->omit_unsplit_suffix;
}

cfdb_bytes cfdb_rl_store_records_prefix(const cfdb_rl_store *s)
{
    return s->records;
}

void cfdb_rl_store_free(cfdb_rl_store *s)
{
    if (!s)
        return;
    cfdb_arena_free(&s->arena);
    cfdb_arena_free(&s->pending_arena);
    free(s);
}

/* prefix + pack((n)) */
static int keyspace_key(cfdb_arena *a, cfdb_bytes prefix, int64_t n, cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = cfdb_tuple_add_int(&t, n);
    return rc ? rc : cfdb_tuple_pack(a, prefix, &t, out);
}

static int64_t now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* ---- open ---- */

static int write_header(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_pb_msg *info)
{
    int rc = rl_set_int(info, "formatVersion", s->format_version);
    if (!rc)
        rc = rl_set_int(info, "metaDataversion", s->metadata_version);
    if (!rc)
        rc = rl_set_int(info, "lastUpdateTime", now_ms());
    if (!rc && s->omit_unsplit_suffix)
        rc = rl_set_int(info, "omit_unsplit_record_suffix", 1);
    const cfdb_pb_field *f = rl_f(info, "record_count_key");
    if (!rc && !s->md->record_count_key)
        cfdb_pb_clear(info, f);
    if (!rc && s->md->record_count_key && !rl_has(info, "record_count_key")) {
        cfdb_bytes raw;
        cfdb_pb_msg *key;
        rc = cfdb_kex_serialize(a, s->md->record_count_key, &raw);
        if (!rc)
            rc = cfdb_pb_decode(a, f->message, raw.ptr, raw.len, 0, &key, NULL);
        cfdb_pb_msg *dst;
        if (!rc)
            rc = cfdb_pb_mutable(info, f, &dst);
        if (!rc)
            rc = cfdb_pb_merge(dst, key);
    }
    cfdb_bytes value;
    if (!rc)
        rc = cfdb_pb_encode(info, a, &value);
    if (!rc)
        dir_set(tr, s->header_key, value);
    return rc;
}

static int rebuild_new_indexes(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, int32_t stored_md,
                               bool known, const cfdb_rl_open_options *opts);

/* FDBRecordStore.checkPossiblyRebuildRecordCounts: the counts are rebuilt when the store
 * began before format 2 (RECORD_COUNT_ADDED) or the header's record count key is not the
 * metadata's (compared as serialized KeyExpressions; absent on either side counts). */
static int counts_stale(const cfdb_rl_store *s, cfdb_arena *a, const cfdb_pb_msg *info,
                        int32_t format, bool *stale)
{
    const cfdb_kex *want = s->md->record_count_key;
    bool has = rl_has(info, "record_count_key");
    *stale = (format >= 1 && format < 2) || (!want && has) || (want && !has);
    if (*stale || !want)
        return 0;
    cfdb_bytes stored, mine;
    const cfdb_kex *k;
    int rc = cfdb_pb_encode((cfdb_pb_msg *)rl_msg(info, "record_count_key"), a, &stored);
    if (!rc && cfdb_kex_parse(a, stored.ptr, stored.len, &k)) {
        *stale = true;      /* a key cfdb cannot read is replaced */
        return 0;
    }
    if (!rc)
        rc = cfdb_kex_serialize(a, k, &stored);
    if (!rc)
        rc = cfdb_kex_serialize(a, want, &mine);
    if (!rc)
        *stale = !cfdb_bytes_eq(stored, mine);
    return rc;
}

typedef struct recount_ctx {
    cfdb_rl_store *s;
    cfdb_arena *a;
    cfdb_bytes *keys;
    int64_t *counts;
    uint32_t n, cap;
} recount_ctx;

static int recount_cb(void *ctx, const cfdb_tuple *pk, const cfdb_rl_record_type *type,
                      const cfdb_pb_msg *rec, const cfdb_rl_version *version)
{
    (void)pk, (void)version;
    recount_ctx *c = ctx;
    cfdb_kex_ctx kc = { &type->record_type_key, NULL };
    cfdb_tuple *keys;
    uint32_t n;
    cfdb_bytes space, key;
    int rc = cfdb_kex_evaluate(c->a, c->s->md->record_count_key, rec, &kc, &keys, &n);
    if (rc)
        return rc;
    if (n != 1)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* evaluateSingleton */
    if ((rc = rl_space(c->s, c->a, RL_KS_RECORD_COUNT, NULL, &space)) ||
        (rc = cfdb_tuple_pack(c->a, space, &keys[0], &key)))
        return rc;
    for (uint32_t i = 0; i < c->n; i++) {
        if (cfdb_bytes_eq(c->keys[i], key)) {
            c->counts[i]++;
            return 0;
        }
    }
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 16;
        cfdb_bytes *k = cfdb_arena_alloc(c->a, cap * sizeof *k);
        int64_t *v = cfdb_arena_alloc(c->a, cap * sizeof *v);
        if (!k || !v)
            return CFDB_ERR_OUT_OF_MEMORY;
        if (c->n) {
            memcpy(k, c->keys, c->n * sizeof *k);
            memcpy(v, c->counts, c->n * sizeof *v);
        }
        c->keys = k;
        c->counts = v;
        c->cap = cap;
    }
    c->keys[c->n] = key;
    c->counts[c->n++] = 1;
    return 0;
}

/* The rebuild: P + (4, ...) cleared (the tuple range: like Java, a count at P + (4) itself
 * stays), then every record counted under the new key and each count SET as a little-endian
 * int64 (FDBRecordStore.addRebuildRecordCountsJob: not while the header's
 * record_count_state is DISABLED), in the open transaction. */
static int rebuild_counts(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_pb_msg *info)
{
    cfdb_bytes space, b, e, next;
    cfdb_tuple empty;
    cfdb_tuple_init(&empty, a);
    int rc = rl_space(s, a, RL_KS_RECORD_COUNT, NULL, &space);
    if (!rc)
        rc = cfdb_tuple_range(a, space, &empty, &b, &e);
    if (rc)
        return rc;
    dir_clear_range(tr, b, e);
    if (!s->md->record_count_key || rl_int(info, "record_count_state") == 3)   /* DISABLED */
        return 0;
    recount_ctx c = { s, a, NULL, NULL, 0, 0 };
    bool more;
    uint32_t scanned;
    if ((rc = rl_scan_records(s, tr, a, (cfdb_bytes){ NULL, 0 }, (cfdb_bytes){ NULL, 0 }, UINT32_MAX,
                              UINT32_MAX, recount_cb, &c, &more, &next, &scanned)))
        return rc;
    for (uint32_t i = 0; i < c.n; i++) {
        uint8_t le[8];
        for (int j = 0; j < 8; j++)
            le[j] = (uint8_t)((uint64_t)c.counts[i] >> (8 * j));
        dir_set(tr, c.keys[i], cfdb_bytes_make(le, 8));
    }
    return 0;
}

/* [P + (8), strinc): the old-format version space (FDBRecordStore.getLegacyVersionSubspace). */
static int old_version_space(const cfdb_rl_store *s, cfdb_arena *a, cfdb_bytes *begin, cfdb_bytes *end)
{
    int rc = rl_space(s, a, RL_KS_RECORD_VERSION, NULL, begin);
    return rc ? rc : dir_strinc(a, *begin, end);
}

static int clear_old_versions(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a)
{
    cfdb_bytes b, e;
    int rc = old_version_space(s, a, &b, &e);
    if (!rc)
        dir_clear_range(tr, b, e);
    return rc;
}

/* P + (8, pk...) = 12 raw bytes becomes R + (pk..., -1) = pack((versionstamp)) (0x33 + the 12
 * bytes, SplitHelper.packVersion); then the old space is cleared. A key that is no tuple or
 * a value not 12 bytes long is 1044 (FDBRecordVersion.fromBytes). */
static int convert_versions(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a)
{
    cfdb_bytes b, e;
    dir_kv *kvs = NULL;
    uint32_t n = 0;
    int rc = old_version_space(s, a, &b, &e);
    if (!rc)
        rc = dir_get_all(tr, a, b, e, &kvs, &n);
    for (uint32_t i = 0; i < n && !rc; i++) {
        cfdb_tuple pk;
        cfdb_bytes base, key;
        uint8_t packed[13];
        if (kvs[i].value.len != 12 ||
            cfdb_tuple_unpack(a, cfdb_bytes_make(kvs[i].key.ptr + b.len, kvs[i].key.len - b.len), &pk) ||
            !cfdb_tuple_count(&pk))
            return CFDB_ERR_SERIALIZATION_FAILED;
        if ((rc = cfdb_tuple_pack(a, s->records, &pk, &base)) ||
            (rc = keyspace_key(a, base, -1, &key)))
            return rc;
        packed[0] = CFDB_TUPLE_VERSIONSTAMP;
        memcpy(packed + 1, kvs[i].value.ptr, 12);
        dir_set(tr, key, cfdb_bytes_make(packed, 13));
    }
    if (!rc)
        dir_clear_range(tr, b, e);
    return rc;
}

static int check_header(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_rl_open_mode mode,
                        const cfdb_rl_open_options *opts)
{
    const cfdb_pb_message *info_type = cfdb_rl_schema_msg(RL_PKG "DataStoreInfo");
    if (!info_type)
        return CFDB_ERR_OUT_OF_MEMORY;
    bool present;
    cfdb_bytes value;
    int rc = dir_get(tr, a, s->header_key, false, &present, &value);
    if (rc)
        return rc;
    const cfdb_rl_metadata *md = s->md;
    if (!present) {
        if (mode == CFDB_RL_OPEN)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* no such store */
        /* A store without a header must be empty (snapshot: the header read above already
         * conflicts with anyone creating it). */
        cfdb_bytes end;
        dir_kv first;
        bool found;
        if ((rc = dir_strinc(a, s->prefix, &end)) ||
            (rc = dir_get_first(tr, a, s->prefix, end, true, false, &found, &first)))
            return rc;
        if (found)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* no header but not empty */
        s->format_version = CFDB_RL_FORMAT_CACHEABLE_STATE;
        s->metadata_version = md->version;
        s->omit_unsplit_suffix = false;
        cfdb_pb_msg *info = cfdb_pb_msg_new(a, info_type);
        return info ? write_header(s, tr, a, info) : CFDB_ERR_OUT_OF_MEMORY;
    }
    if (mode == CFDB_RL_CREATE)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;       /* already exists */
    cfdb_pb_msg *info;
    if (cfdb_pb_decode(a, info_type, value.ptr, value.len, 0, &info, NULL))
        return CFDB_ERR_SERIALIZATION_FAILED;
    int32_t format = (int32_t)rl_int(info, "formatVersion");
    int32_t stored_md = (int32_t)rl_int(info, "metaDataversion");
    if (format > CFDB_RL_MAX_FORMAT_VERSION)
        return CFDB_ERR_UNSUPPORTED_FORMAT_VERSION;
    if (stored_md > md->version)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;       /* our metadata is stale */
    s->omit_unsplit_suffix = format >= CFDB_RL_FORMAT_SAVE_UNSPLIT_WITH_SUFFIX &&
                             rl_bool(info, "omit_unsplit_record_suffix");
    s->cacheable = rl_bool(info, "cacheable");
    s->format_version = format > CFDB_RL_FORMAT_CACHEABLE_STATE ? format
                                                               : CFDB_RL_FORMAT_CACHEABLE_STATE;
    s->metadata_version = md->version;
    /* the format is at least 7 now, so old-format versions only where the unsplit suffix is
     * omitted (FDBRecordStore.useOldVersionFormat) */
    s->old_versions = s->omit_unsplit_suffix;
    if (format == s->format_version && stored_md == md->version)
        return 0;
    /* Upgrade: unsplit records written before format 5 keep their key without a suffix. */
    if (format >= 1 && format < CFDB_RL_FORMAT_SAVE_UNSPLIT_WITH_SUFFIX && !md->split_long_records)
        s->omit_unsplit_suffix = true;
    s->old_versions = s->omit_unsplit_suffix;
    bool recount;
    if ((rc = counts_stale(s, a, info, format, &recount)))
        return rc;
    if (recount)
        cfdb_pb_clear(info, rl_f(info, "record_count_key"));   /* write_header sets the new one */
    if ((rc = write_header(s, tr, a, info)))
        return rc;
    if (recount && (rc = rebuild_counts(s, tr, a, info)))
        return rc;
    /* FDBRecordStore.checkRebuild: former indexes go before indexes are rebuilt */
    if (format >= 1 && stored_md != md->version && (rc = rl_remove_former_indexes(s, tr, a, stored_md)))
        return rc;
    /* FDBRecordStore.updateStoreHeaderAsync: a new header of a cacheable store */
    rl_bump_metadata_version(s, tr);
    /* FDBRecordStore.checkRebuild: versions of a store that began below format 6 move from
     * P + (8, pk...) beside their records (addConvertRecordVersions) when the store no longer
     * uses the old format; a store that stopped storing versions loses the old space when
     * its metadata version changes. cfdb moves them before any index is rebuilt, so VERSION
     * indexes rebuilt below read the moved versions. */
    if (format >= 1 && format < CFDB_RL_FORMAT_SAVE_VERSION_WITH_RECORD && md->store_record_versions &&
        !s->old_versions && (rc = convert_versions(s, tr, a)))
        return rc;
    if (format >= 1 && stored_md != md->version && !md->store_record_versions &&
        (format < CFDB_RL_FORMAT_SAVE_VERSION_WITH_RECORD || s->omit_unsplit_suffix) &&
        (rc = clear_old_versions(s, tr, a)))
        return rc;
    return rebuild_new_indexes(s, tr, a, stored_md, format != 0, opts);
}

static int count_cb(void *ctx, const cfdb_tuple *pk, const cfdb_rl_record_type *type,
                    const cfdb_pb_msg *rec, const cfdb_rl_version *version)
{
    (void)ctx, (void)pk, (void)type, (void)rec, (void)version;
    return 0;
}

typedef struct rebuild_ctx {
    cfdb_rl_store *s;
    FDBTransaction *tr;
    cfdb_arena *a;
    const cfdb_rl_index *ix;
} rebuild_ctx;

static int rebuild_cb(void *ctx, const cfdb_tuple *pk, const cfdb_rl_record_type *type,
                      const cfdb_pb_msg *rec, const cfdb_rl_version *version)
{
    rebuild_ctx *c = ctx;
    return rl_index_record(c->s, c->tr, c->a, c->ix, pk, type, rec, version);
}

/* Whether every record type of ix is newer than the stored metadata version (Java's
 * FDBRecordStore.areAllRecordTypesSince: no records of them can exist). A type without a
 * since_version (0) is not new; a universal index is never on new types only. known is
 * false for a header of format 0 (empty), which says nothing of what the store holds. */
static bool on_new_types(const cfdb_rl_index *ix, int32_t stored_md, bool known)
{
    if (!known || !ix->record_type_count)
        return false;
    for (uint32_t i = 0; i < ix->record_type_count; i++) {
        int32_t since = ix->record_types[i]->since_version;
        if (since <= 0 || since <= stored_md)
            return false;
    }
    return true;
}

/* FDBRecordStore.checkPossiblyRebuild/rebuildIndexes: indexes added or changed after the
 * stored metadata version are cleared, then built here (few records, or new types only) or
 * given opts->too_many_records_state for the online indexer. */
static int rebuild_new_indexes(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, int32_t stored_md,
                               bool known, const cfdb_rl_open_options *opts)
{
    const cfdb_rl_metadata *md = s->md;
    int64_t records = -1;
    int rc = 0;
    for (uint32_t i = 0; i < md->index_count && !rc; i++) {
        const cfdb_rl_index *ix = &md->indexes[i];
        if (ix->last_modified_version <= stored_md)
            continue;
        bool more;
        cfdb_bytes next;
        uint32_t n;
        if (records < 0) {
            if ((rc = rl_scan_records(s, tr, a, (cfdb_bytes){ NULL, 0 }, (cfdb_bytes){ NULL, 0 },
                                      CFDB_RL_MAX_RECORDS_FOR_REBUILD + 1, UINT32_MAX, count_cb, NULL,
                                      &more, &next, &n)))
                return rc;
            records = more ? CFDB_RL_MAX_RECORDS_FOR_REBUILD + 1 : n;
        }
        if ((rc = rl_index_clear_data(s, tr, a, ix)))
            return rc;
        if (records == 0 || on_new_types(ix, stored_md, known)) {
            rc = rl_state_write(s, tr, a, ix, CFDB_RL_INDEX_READABLE);
        } else if (!rl_index_type_supported(ix)) {
            /* cfdb cannot build it: disabled, so saves need not maintain it either */
            rc = rl_state_write(s, tr, a, ix, CFDB_RL_INDEX_DISABLED);
        } else if (records <= CFDB_RL_MAX_RECORDS_FOR_REBUILD && !(opts && opts->build_online)) {
            rebuild_ctx c = { s, tr, a, ix };
            rc = rl_state_write(s, tr, a, ix, CFDB_RL_INDEX_READABLE);
            if (!rc)
                rc = rl_scan_records(s, tr, a, (cfdb_bytes){ NULL, 0 }, (cfdb_bytes){ NULL, 0 },
                                     UINT32_MAX, UINT32_MAX, rebuild_cb, &c, &more, &next, &n);
        } else {
            rc = rl_state_write(s, tr, a, ix,
                                opts && opts->too_many_records_state == CFDB_RL_INDEX_WRITE_ONLY
                                    ? CFDB_RL_INDEX_WRITE_ONLY : CFDB_RL_INDEX_DISABLED);
        }
    }
    return rc;
}

int cfdb_rl_store_open(FDBTransaction *tr, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                       cfdb_rl_open_mode mode, cfdb_rl_store **out)
{
    return cfdb_rl_store_open_with(tr, md, prefix, mode, NULL, out);
}

int cfdb_rl_store_open_with(FDBTransaction *tr, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                            cfdb_rl_open_mode mode, const cfdb_rl_open_options *opts,
                            cfdb_rl_store **out)
{
    *out = NULL;
    cfdb_rl_store *s = calloc(1, sizeof *s);
    if (!s)
        return CFDB_ERR_OUT_OF_MEMORY;
    s->md = md;
    cfdb_arena_init(&s->arena);
    cfdb_arena_init(&s->pending_arena);
    s->states = cfdb_arena_zalloc(&s->arena, md->index_count ? md->index_count : 1);
    int rc = s->states ? cfdb_arena_dup_bytes(&s->arena, prefix, &s->prefix) : CFDB_ERR_OUT_OF_MEMORY;
    if (!rc)
        rc = keyspace_key(&s->arena, s->prefix, KEYSPACE_STORE_INFO, &s->header_key);
    if (!rc)
        rc = keyspace_key(&s->arena, s->prefix, KEYSPACE_RECORD, &s->records);
    if (!rc) {
        cfdb_arena tmp;
        cfdb_arena_init(&tmp);
        rc = rl_states_load(s, tr, &tmp);
        if (!rc)
            rc = check_header(s, tr, &tmp, mode, opts);
        cfdb_arena_free(&tmp);
    }
    if (rc) {
        cfdb_rl_store_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- records ---- */

/* R + pack(pk), and the range of every key under it. */
static int record_keys(cfdb_rl_store *s, cfdb_arena *a, const cfdb_tuple *pk, cfdb_bytes *base,
                       cfdb_bytes *begin, cfdb_bytes *end)
{
    int rc = cfdb_tuple_pack(a, s->records, pk, base);
    if (!rc)
        rc = cfdb_tuple_range(a, s->records, pk, begin, end);
    return rc;
}

static bool stores_unsuffixed(const cfdb_rl_store *s)
{
    return s->omit_unsplit_suffix && !s->md->split_long_records;
}

/* pk's version key (FDBRecordStore.recordVersionKey): R + pack(pk) + pack((-1)) beside the
 * record (base = R + pack(pk)), or P + pack((8, pk...)) with old-format versions. */
static int version_key(const cfdb_rl_store *s, cfdb_arena *a, cfdb_bytes base, const cfdb_tuple *pk,
                       cfdb_bytes *out)
{
    if (!s->old_versions)
        return keyspace_key(a, base, SUFFIX_VERSION, out);
    cfdb_bytes space;
    int rc = rl_space(s, a, RL_KS_RECORD_VERSION, NULL, &space);
    return rc ? rc : cfdb_tuple_pack(a, space, pk, out);
}

/* A held version (saved in this transaction) overrides the stored one. Its value is
 * 0x33 + 12 bytes + offset beside the record, 12 bytes + offset in the old format. */
static bool pending_version(const cfdb_rl_store *s, cfdb_bytes version_key, cfdb_rl_version *version)
{
    const rl_pending *p = version ? rl_pending_find(s, version_key) : NULL;
    if (!p)
        return false;
    version->present = true;
    version->complete = false;
    memcpy(version->bytes, p->value.ptr + (s->old_versions ? 0 : 1), 12);
    return true;
}

int rl_old_version(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                   cfdb_rl_version *version)
{
    if (!s->old_versions)
        return 0;
    memset(version, 0, sizeof *version);   /* never one read beside the record */
    cfdb_bytes vkey, value;
    bool present;
    int rc = version_key(s, a, (cfdb_bytes){ NULL, 0 }, pk, &vkey);
    if (rc || pending_version(s, vkey, version))
        return rc;
    /* FDBRecordStore.loadRecordVersionAsync: no versions stored, nothing read */
    if (!s->md->store_record_versions)
        return 0;
    if ((rc = dir_get(tr, a, vkey, false, &present, &value)) || !present)
        return rc;
    if (value.len != 12)
        return CFDB_ERR_SERIALIZATION_FAILED;    /* FDBRecordVersion.complete(bytes) */
    version->present = true;
    version->complete = true;
    memcpy(version->bytes, value.ptr, 12);
    return 0;
}

int rl_pending_item_version(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_rl_item *item)
{
    if (s->old_versions)
        return rl_old_version(s, tr, a, &item->primary_key, &item->version);
    if (!s->pending_count)
        return 0;
    cfdb_bytes base, vkey;
    int rc = cfdb_tuple_pack(a, s->records, &item->primary_key, &base);
    if (!rc)
        rc = keyspace_key(a, base, SUFFIX_VERSION, &vkey);
    if (!rc)
        pending_version(s, vkey, &item->version);
    return rc;
}

static void dir_row(const void *rows, uint32_t i, cfdb_bytes *key, cfdb_bytes *value)
{
    const dir_kv *r = (const dir_kv *)rows + i;
    *key = r->key;
    *value = r->value;
}

/* The record in the rows of one primary key (base = R + pack(pk)), put together by the
 * unsplitter (rl_unsplit.c), the one assembly of split pieces and versions. */
int rl_record_from_kvs(cfdb_rl_store *s, cfdb_arena *a, cfdb_bytes base, const void *kvs, uint32_t n,
                       bool *found, const cfdb_rl_record_type **type, cfdb_pb_msg **record,
                       cfdb_rl_version *version)
{
    const dir_kv *kv = kvs;
    /* the old unsuffixed layout keeps the record under R + pack(pk) alone */
    bool unsuffixed = n == 1 && kv[0].key.len == base.len;
    cfdb_rl_item item;
    int rc = rl_unsplit_whole(unsuffixed, s->records.len, s->md, a, kvs, n, dir_row, &item, found);
    if (rc || !*found)
        return rc;
    *type = item.type;
    *record = item.record;
    if (version)
        *version = item.version;
    return 0;
}

/* Reads the record stored under pk: *found, its type, message and version. */
static int read_record(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                       cfdb_bytes base, cfdb_bytes begin, cfdb_bytes end, bool *found,
                       const cfdb_rl_record_type **type, cfdb_pb_msg **record,
                       cfdb_rl_version *version)
{
    if (version)
        memset(version, 0, sizeof *version);
    int rc;
    if (stores_unsuffixed(s)) {
        dir_kv kv = { base, { NULL, 0 } };
        rc = dir_get(tr, a, base, false, found, &kv.value);
        if (!rc && *found)
            rc = rl_record_from_kvs(s, a, base, &kv, 1, found, type, record, version);
    } else {
        dir_kv *kvs;
        uint32_t n;
        rc = dir_get_all(tr, a, begin, end, &kvs, &n);
        if (!rc)
            rc = rl_record_from_kvs(s, a, base, kvs, n, found, type, record, version);
    }
    if (!rc && *found && version) {
        if (s->old_versions)
            return rl_old_version(s, tr, a, pk, version);
        cfdb_bytes vkey;
        if ((rc = keyspace_key(a, base, SUFFIX_VERSION, &vkey)))
            return rc;
        pending_version(s, vkey, version);
    }
    return rc;
}

int rl_read_record(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                   bool *found, const cfdb_rl_record_type **type, cfdb_pb_msg **record,
                   cfdb_rl_version *version)
{
    cfdb_bytes base, begin, end;
    int rc = record_keys(s, a, pk, &base, &begin, &end);
    return rc ? rc : read_record(s, tr, a, pk, base, begin, end, found, type, record, version);
}

/* ---- indexes ---- */

/* Every index of the old and the new record's types that is not disabled, through its
 * maintainer. A write-only index whose updates are not idempotent (count, sum) is updated
 * only for records in ranges the online indexer has built (Java's updateWhileWriteOnly), so
 * the builder does not count them twice. */
static int update_indexes(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const rl_side *old,
                          const rl_side *new_)
{
    const cfdb_rl_metadata *md = s->md;
    int rc = 0;
    cfdb_bytes pk_bytes = { NULL, 0 };
    for (uint32_t i = 0; i < md->index_count && !rc; i++) {
        const cfdb_rl_index *ix = &md->indexes[i];
        if (s->states[i] == CFDB_RL_INDEX_DISABLED)
            continue;
        rl_side o = { 0 }, n = { 0 };
        if (old->rec && rl_index_applies(ix, old->type))
            o = *old;
        if (new_->rec && rl_index_applies(ix, new_->type))
            n = *new_;
        if (!o.rec && !n.rec)
            continue;
        if (s->states[i] == CFDB_RL_INDEX_WRITE_ONLY && rl_index_update_needs_built_range(ix)) {
            cfdb_bytes space;
            bool built;
            const cfdb_tuple *pk = o.rec ? o.pk : n.pk;
            if (!pk_bytes.ptr && (rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, pk, &pk_bytes)))
                break;
            if ((rc = rl_space(s, a, RL_KS_INDEX_RANGE, &ix->subspace_key, &space)) ||
                (rc = rl_rangeset_contains(tr, a, space, pk_bytes, &built)))
                break;
            if (!built)
                continue;
        }
        rc = rl_index_update(s, tr, a, ix, &o, &n);
    }
    return rc;
}

/* Refuses records whose types have indexes cfdb does not maintain (2108) rather than leave
 * those stale. */
static int check_maintained(const cfdb_rl_store *s, const cfdb_rl_record_type *type)
{
    const cfdb_rl_metadata *md = s->md;
    for (uint32_t i = 0; i < md->index_count; i++) {
        const cfdb_rl_index *ix = &md->indexes[i];
        if (s->states[i] != CFDB_RL_INDEX_DISABLED && rl_index_applies(ix, type) &&
            !rl_index_type_supported(ix))
            return CFDB_ERR_UNSUPPORTED_OPERATION;
    }
    return 0;
}

/* ADD of a little-endian int64 at P + (4, count key...) (FDBRecordStore.addRecordCount). */
static int add_record_count(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                            const cfdb_rl_record_type *type, const cfdb_pb_msg *rec, int64_t delta)
{
    if (!s->md->record_count_key)
        return 0;
    cfdb_kex_ctx ctx = { &type->record_type_key, NULL };
    cfdb_tuple *keys;
    uint32_t n;
    int rc = cfdb_kex_evaluate(a, s->md->record_count_key, rec, &ctx, &keys, &n);
    if (rc)
        return rc;
    if (n != 1)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* evaluateSingleton */
    cfdb_bytes space, key;
    if ((rc = rl_space(s, a, RL_KS_RECORD_COUNT, NULL, &space)) ||
        (rc = cfdb_tuple_pack(a, space, &keys[0], &key)))
        return rc;
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)((uint64_t)delta >> (8 * i));
    fdb_transaction_atomic_op(tr, key.ptr, (int)key.len, le, 8, FDB_MUTATION_TYPE_ADD);
    return 0;
}

/* ---- save, load, delete ---- */

int cfdb_rl_store_save(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_pb_msg *record,
                       bool *existed)
{
    const cfdb_rl_metadata *md = s->md;
    s->violation = NULL;
    const cfdb_rl_record_type *type = cfdb_rl_record_type_of(md, cfdb_pb_msg_type(record));
    if (!type)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    int rc = check_maintained(s, type);
    if (rc)
        return rc;
    cfdb_tuple pk;
    if ((rc = cfdb_rl_primary_key(a, type, record, &pk)))
        return rc;
    /* The union message holding the record in its type's field. */
    cfdb_pb_msg *u = cfdb_pb_msg_new(a, md->union_descriptor), *inner;
    if (!u)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_bytes value, base, begin, end, vkey;
    if ((rc = cfdb_pb_mutable(u, type->union_field, &inner)) || (rc = cfdb_pb_merge(inner, record)) ||
        (rc = cfdb_pb_encode(u, a, &value)) || (rc = record_keys(s, a, &pk, &base, &begin, &end)) ||
        (rc = version_key(s, a, base, &pk, &vkey)))
        return rc;
    if (value.len > CFDB_RL_SPLIT_RECORD_SIZE && !md->split_long_records)
        return CFDB_ERR_VALUE_TOO_LARGE;
    /* The old record: one read, for its index entries, version, count (and *existed). */
    bool found = false;
    const cfdb_rl_record_type *old_type = NULL;
    cfdb_pb_msg *old = NULL;
    cfdb_rl_version old_version = { 0 };
    if ((md->index_count || existed || md->record_count_key) &&
        (rc = read_record(s, tr, a, &pk, base, begin, end, &found, &old_type, &old, &old_version)))
        return rc;
    if (found && old_type != type && (rc = check_maintained(s, old_type)))
        return rc;
    if (existed)
        *existed = found;

    /* A new incomplete version for this save (FDBRecordVersion.incomplete(localVersion)). */
    uint8_t version[12];
    bool versioned = md->store_record_versions;   /* version indexes need it (metadata) */
    if (versioned) {
        memset(version, 0xff, 10);
        version[10] = (uint8_t)(s->next_local >> 8);
        version[11] = (uint8_t)s->next_local;
        s->next_local++;
    }
    rl_side o = { old_type, found ? old : NULL, &pk, old_version.present ? old_version.bytes : NULL };
    rl_side n = { type, record, &pk, versioned ? version : NULL };
    /* unique indexes first: a refused save writes nothing */
    for (uint32_t i = 0; i < md->index_count; i++) {
        const cfdb_rl_index *ix = &md->indexes[i];
        rl_side oi = o.rec && rl_index_applies(ix, o.type) ? o : (rl_side){ 0 };
        if (strcmp(ix->type, "value") == 0 && rl_index_applies(ix, type) &&
            (rc = rl_value_check_unique(s, tr, a, ix, &oi, &n)))
            return rc;
    }
    if ((rc = update_indexes(s, tr, a, &o, &n)))
        return rc;

    dir_clear_range(tr, begin, end);
    rl_pending_remove(s, vkey);
    if (stores_unsuffixed(s)) {
        dir_set(tr, base, value);
    } else if (value.len <= CFDB_RL_SPLIT_RECORD_SIZE) {
        cfdb_bytes key;
        if ((rc = keyspace_key(a, base, SUFFIX_UNSPLIT, &key)))
            return rc;
        dir_set(tr, key, value);
    } else {
        int64_t index = SUFFIX_FIRST_SPLIT;
        for (uint32_t off = 0; off < value.len; off += CFDB_RL_SPLIT_RECORD_SIZE, index++) {
            uint32_t len = value.len - off;
            if (len > CFDB_RL_SPLIT_RECORD_SIZE)
                len = CFDB_RL_SPLIT_RECORD_SIZE;
            cfdb_bytes key;
            if ((rc = keyspace_key(a, base, index, &key)))
                return rc;
            dir_set(tr, key, cfdb_bytes_make(value.ptr + off, len));
        }
    }
    if (versioned && s->old_versions) {
        /* P + (8, pk...) = the 12 bytes of the incomplete version + offset 0, at commit
         * (FDBRecordStore.saveVersionWithOldFormat) */
        uint8_t raw[16] = { 0 };
        memcpy(raw, version, 12);
        if ((rc = rl_pending_add(s, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE, vkey,
                                 cfdb_bytes_make(raw, sizeof raw))))
            return rc;
    } else if (versioned) {
        /* P + (1, pk..., -1) = pack((incomplete versionstamp)) + offset, at commit */
        cfdb_tuple vt;
        cfdb_tuple_init(&vt, a);
        cfdb_bytes packed;
        uint16_t local = (uint16_t)(version[10] << 8 | version[11]);
        if ((rc = cfdb_tuple_add_incomplete_versionstamp(&vt, local)) ||
            (rc = cfdb_tuple_pack_with_versionstamp(a, (cfdb_bytes){ NULL, 0 }, &vt, &packed)) ||
            (rc = rl_pending_add(s, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE, vkey, packed)))
            return rc;
    }
    if (!found)
        rc = add_record_count(s, tr, a, type, record, 1);
    return rc;
}

int cfdb_rl_store_load(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                       cfdb_rl_loaded *out)
{
    memset(out, 0, sizeof *out);
    cfdb_bytes base, begin, end;
    int rc = record_keys(s, a, pk, &base, &begin, &end);
    if (!rc)
        rc = read_record(s, tr, a, pk, base, begin, end, &out->found, &out->type, &out->record, NULL);
    if (rc || !out->found) {
        out->found = false;
        return rc;
    }
    cfdb_tuple_init(&out->primary_key, a);
    for (uint32_t i = 0; i < cfdb_tuple_count(pk) && !rc; i++)
        rc = cfdb_tuple_add_elem(&out->primary_key, cfdb_tuple_get(pk, i));
    return rc;
}

int cfdb_rl_store_load_version(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                               const cfdb_tuple *pk, cfdb_rl_version *out)
{
    memset(out, 0, sizeof *out);
    bool found;
    const cfdb_rl_record_type *type;
    cfdb_pb_msg *rec;
    int rc = rl_read_record(s, tr, a, pk, &found, &type, &rec, out);
    if (!rc && !found)
        memset(out, 0, sizeof *out);
    return rc;
}

int cfdb_rl_store_delete(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                         bool *existed)
{
    cfdb_bytes base, begin, end, vkey;
    int rc = record_keys(s, a, pk, &base, &begin, &end);
    if (!rc)
        rc = version_key(s, a, base, pk, &vkey);
    if (rc)
        return rc;
    bool found = false;
    const cfdb_rl_record_type *old_type = NULL;
    cfdb_pb_msg *old = NULL;
    cfdb_rl_version old_version = { 0 };
    const cfdb_rl_metadata *md = s->md;
    if ((md->index_count || existed || md->record_count_key) &&
        (rc = read_record(s, tr, a, pk, base, begin, end, &found, &old_type, &old, &old_version)))
        return rc;
    if (found && (rc = check_maintained(s, old_type)))
        return rc;
    if (existed)
        *existed = found;
    if (found) {
        rl_side o = { old_type, old, pk, old_version.present ? old_version.bytes : NULL };
        rl_side n = { 0 };
        if ((rc = update_indexes(s, tr, a, &o, &n)) ||
            (rc = add_record_count(s, tr, a, old_type, old, -1)))
            return rc;
    }
    dir_clear_range(tr, begin, end);
    rl_pending_remove(s, vkey);
    if (stores_unsuffixed(s))
        dir_clear(tr, base);
    /* FDBRecordStore.deleteTypedRecord: the old-format version key goes with the record */
    if (s->old_versions && md->store_record_versions)
        dir_clear(tr, vkey);
    return 0;
}

int cfdb_rl_store_delete_all(cfdb_rl_store *s, FDBTransaction *tr)
{
    /* [P + (1), P + (5) + 0x00) and [P + (5) + 0xff, strinc(P)) */
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_bytes states, sb, se, end;
    int rc = rl_space(s, &a, RL_KS_INDEX_STATE, NULL, &states);
    if (!rc)
        rc = dir_concat(&a, states, CFDB_BYTES_LIT("\x00"), &sb);
    if (!rc)
        rc = dir_concat(&a, states, CFDB_BYTES_LIT("\xff"), &se);
    if (!rc)
        rc = dir_strinc(&a, s->prefix, &end);
    if (!rc) {
        dir_clear_range(tr, s->records, sb);
        dir_clear_range(tr, se, end);
        cfdb_rl_store_reset_pending(s);
    }
    cfdb_arena_free(&a);
    return rc;
}

int cfdb_rl_store_record_count(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                               const cfdb_tuple *key, int64_t *out)
{
    *out = 0;
    cfdb_bytes space, begin, end;
    cfdb_tuple empty;
    cfdb_tuple_init(&empty, a);
    int rc = rl_space(s, a, RL_KS_RECORD_COUNT, NULL, &space);
    if (!rc)
        rc = cfdb_tuple_pack(a, space, key ? key : &empty, &begin);
    if (!rc)
        rc = dir_strinc(a, begin, &end);
    dir_kv *kvs = NULL;
    uint32_t n = 0;
    if (!rc)
        rc = dir_get_all(tr, a, begin, end, &kvs, &n);
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (kvs[i].value.len != 8)
            return CFDB_ERR_SERIALIZATION_FAILED;
        uint64_t v = 0;
        for (int b = 7; b >= 0; b--)
            v = v << 8 | kvs[i].value.ptr[b];
        *out += (int64_t)v;
    }
    return rc;
}

void rl_bump_metadata_version(const cfdb_rl_store *s, FDBTransaction *tr)
{
    static const uint8_t key[] = "\xff/metadataVersion";
    static const uint8_t stamp_at_0[14] = { 0 };   /* 10-byte stamp, then offset 0 (LE) */
    if (s->cacheable)
        fdb_transaction_atomic_op(tr, key, (int)sizeof key - 1, stamp_at_0, (int)sizeof stamp_at_0,
                                  FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
}

/* ---- held version mutations ---- */

const rl_pending *rl_pending_find(const cfdb_rl_store *s, cfdb_bytes key)
{
    for (uint32_t i = 0; i < s->pending_count; i++)
        if (cfdb_bytes_eq(s->pending[i].key, key))
            return &s->pending[i];
    return NULL;
}

bool rl_pending_remove(cfdb_rl_store *s, cfdb_bytes key)
{
    for (uint32_t i = 0; i < s->pending_count; i++) {
        if (cfdb_bytes_eq(s->pending[i].key, key)) {
            s->pending[i] = s->pending[--s->pending_count];
            return true;
        }
    }
    return false;
}

int rl_pending_add(cfdb_rl_store *s, FDBMutationType op, cfdb_bytes key, cfdb_bytes value)
{
    rl_pending_remove(s, key);
    if (s->pending_count == s->pending_cap) {
        uint32_t cap = s->pending_cap ? s->pending_cap * 2 : 16;
        rl_pending *p = cfdb_arena_alloc(&s->pending_arena, cap * sizeof *p);
        if (!p)
            return CFDB_ERR_OUT_OF_MEMORY;
        if (s->pending_count)
            memcpy(p, s->pending, s->pending_count * sizeof *p);
        s->pending = p;
        s->pending_cap = cap;
    }
    rl_pending *p = &s->pending[s->pending_count];
    if (cfdb_arena_dup_bytes(&s->pending_arena, key, &p->key) ||
        cfdb_arena_dup_bytes(&s->pending_arena, value, &p->value))
        return CFDB_ERR_OUT_OF_MEMORY;
    p->op = op;
    s->pending_count++;
    return 0;
}

void cfdb_rl_store_reset_pending(cfdb_rl_store *s)
{
    cfdb_arena_free(&s->pending_arena);
    cfdb_arena_init(&s->pending_arena);
    s->pending = NULL;
    s->pending_count = s->pending_cap = 0;
    s->next_local = 0;
}

int cfdb_rl_store_prepare_commit(cfdb_rl_store *s, FDBTransaction *tr)
{
    for (uint32_t i = 0; i < s->pending_count; i++) {
        const rl_pending *p = &s->pending[i];
        fdb_transaction_atomic_op(tr, p->key.ptr, (int)p->key.len, p->value.ptr, (int)p->value.len,
                                  p->op);
    }
    cfdb_rl_store_reset_pending(s);
    return 0;
}

const cfdb_rl_index *cfdb_rl_store_last_violation(const cfdb_rl_store *s)
{
    return s->violation;
}

int rl_space(const cfdb_rl_store *s, cfdb_arena *a, int64_t keyspace, const cfdb_tuple_elem *elem,
             cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = cfdb_tuple_add_int(&t, keyspace);
    if (!rc && elem)
        rc = cfdb_tuple_add_elem(&t, elem);
    return rc ? rc : cfdb_tuple_pack(a, s->prefix, &t, out);
}

int rl_index_space(const cfdb_rl_store *s, cfdb_arena *a, const cfdb_rl_index *ix, cfdb_bytes *out)
{
    return rl_space(s, a, RL_KS_INDEX, &ix->subspace_key, out);
}

uint32_t rl_index_pos(const cfdb_rl_store *s, const cfdb_rl_index *ix)
{
    return (uint32_t)(ix - s->md->indexes);
}

/* ---- accessors for cursors and scans (rl_cursor.c, rl_scan.c, rl_fetch.c) ---- */

const cfdb_rl_metadata *cfdb_rl_store_metadata(const cfdb_rl_store *s)
{
    return s->md;
}

cfdb_bytes cfdb_rl_store_prefix(const cfdb_rl_store *s)
{
    return s->prefix;
}
