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
 * size, then writes the value under (pk, 0) or its pieces under (pk, 1..n). */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "../dir_io.h"
#include "cfdb/records/store.h"
#include "cfdb/subspace.h"
#include "rl_internal.h"

struct cfdb_rl_store {
    const cfdb_rl_metadata *md;
    cfdb_arena arena;           /* prefixes */
    cfdb_bytes prefix;          /* P */
    cfdb_bytes header_key;      /* P + (0) */
    cfdb_bytes records;         /* P + (1) */
    int32_t format_version;
    int32_t metadata_version;
    bool omit_unsplit_suffix;
};

enum { KEYSPACE_STORE_INFO = 0, KEYSPACE_RECORD = 1, KEYSPACE_INDEX = 2 };
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
    if (!rc && s->md->record_count_key && !rl_has(info, "record_count_key")) {
        cfdb_bytes raw;
        cfdb_pb_msg *key;
        const cfdb_pb_field *f = rl_f(info, "record_count_key");
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

static int check_header(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_rl_open_mode mode)
{
    const cfdb_pb_message *info_type = cfdb_rl_schema_msg(RL_PKG "DataStoreInfo");
    if (!info_type)
        return CFDB_ERR_INTERNAL_ERROR;
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
        return info ? write_header(s, tr, a, info) : CFDB_ERR_INTERNAL_ERROR;
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
    s->format_version = format > CFDB_RL_FORMAT_CACHEABLE_STATE ? format
                                                               : CFDB_RL_FORMAT_CACHEABLE_STATE;
    s->metadata_version = md->version;
    if (format == s->format_version && stored_md == md->version)
        return 0;
    /* Indexes new or changed since the stored metadata version would need building over the
     * existing records (Java rebuilds them or marks them write-only); cfdb cannot yet, so it
     * refuses such an upgrade of a store that has records rather than serve empty indexes. */
    for (uint32_t i = 0; i < md->index_count; i++) {
        if (md->indexes[i].last_modified_version <= stored_md)
            continue;
        cfdb_bytes end;
        dir_kv first;
        bool found;
        if ((rc = dir_strinc(a, s->records, &end)) ||
            (rc = dir_get_first(tr, a, s->records, end, false, false, &found, &first)))
            return rc;
        if (found)
            return CFDB_ERR_UNSUPPORTED_OPERATION;
        break;
    }
    /* Upgrade: unsplit records written before format 5 keep their key without a suffix. */
    if (format >= 1 && format < CFDB_RL_FORMAT_SAVE_UNSPLIT_WITH_SUFFIX && !md->split_long_records)
        s->omit_unsplit_suffix = true;
    return write_header(s, tr, a, info);
}

int cfdb_rl_store_open(FDBTransaction *tr, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                       cfdb_rl_open_mode mode, cfdb_rl_store **out)
{
    *out = NULL;
    cfdb_rl_store *s = calloc(1, sizeof *s);
    if (!s)
        return CFDB_ERR_INTERNAL_ERROR;
    s->md = md;
    cfdb_arena_init(&s->arena);
    int rc = cfdb_arena_dup_bytes(&s->arena, prefix, &s->prefix);
    if (!rc)
        rc = keyspace_key(&s->arena, s->prefix, KEYSPACE_STORE_INFO, &s->header_key);
    if (!rc)
        rc = keyspace_key(&s->arena, s->prefix, KEYSPACE_RECORD, &s->records);
    if (!rc) {
        cfdb_arena tmp;
        cfdb_arena_init(&tmp);
        rc = check_header(s, tr, &tmp, mode);
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

/* The stored bytes of a record from its keys: (0) alone, or (1), (2), ... in order; a version
 * (-1) is skipped. */
static int assemble(cfdb_arena *a, size_t base_len, const dir_kv *kvs, uint32_t n, cfdb_bytes *out,
                    bool *found)
{
    uint64_t total = 0;
    int64_t expect = SUFFIX_FIRST_SPLIT;
    bool unsplit = false;
    uint32_t pieces = 0;
    bool *data = cfdb_arena_zalloc(a, n ? n : 1);
    if (!data)
        return CFDB_ERR_INTERNAL_ERROR;
    for (uint32_t i = 0; i < n; i++) {
        cfdb_tuple suffix;
        int64_t v;
        cfdb_bytes rest = cfdb_bytes_make(kvs[i].key.ptr + base_len, kvs[i].key.len - base_len);
        if (cfdb_tuple_unpack(a, rest, &suffix) || cfdb_tuple_count(&suffix) != 1 ||
            cfdb_tuple_get_int(&suffix, 0, &v))
            return CFDB_ERR_SERIALIZATION_FAILED;
        if (v == SUFFIX_VERSION)
            continue;
        if (unsplit || (v == SUFFIX_UNSPLIT && pieces) || (v != SUFFIX_UNSPLIT && v != expect))
            return CFDB_ERR_SERIALIZATION_FAILED;   /* pieces out of order or mixed */
        if (v == SUFFIX_UNSPLIT)
            unsplit = true;
        else
            expect++;
        pieces++;
        data[i] = true;
        total += kvs[i].value.len;
    }
    *found = pieces > 0;
    if (!pieces)
        return 0;
    if (total > 0x7fffffffu)   /* protobuf's message limit */
        return CFDB_ERR_SERIALIZATION_FAILED;
    uint8_t *buf = cfdb_arena_alloc(a, total ? (size_t)total : 1);
    if (!buf)
        return CFDB_ERR_INTERNAL_ERROR;
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!data[i])
            continue;
        memcpy(buf + at, kvs[i].value.ptr, kvs[i].value.len);
        at += kvs[i].value.len;
    }
    *out = cfdb_bytes_make(buf, at);
    return 0;
}

/* Reads the record stored under pk: *found, its type and message. */
static int read_record(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_bytes base,
                       cfdb_bytes begin, cfdb_bytes end, bool *found,
                       const cfdb_rl_record_type **type, cfdb_pb_msg **record)
{
    cfdb_bytes value = { NULL, 0 };
    int rc;
    if (stores_unsuffixed(s)) {
        rc = dir_get(tr, a, base, false, found, &value);
    } else {
        dir_kv *kvs;
        uint32_t n;
        rc = dir_get_all(tr, a, begin, end, &kvs, &n);
        if (!rc)
            rc = assemble(a, base.len, kvs, n, &value, found);
    }
    if (rc || !*found)
        return rc;
    const cfdb_rl_metadata *md = s->md;
    cfdb_pb_msg *u;
    if (cfdb_pb_decode(a, md->union_descriptor, value.ptr, value.len, 0, &u, NULL))
        return CFDB_ERR_SERIALIZATION_FAILED;
    /* Exactly one union field is set: it names the type. */
    const cfdb_pb_field *set = NULL;
    for (uint32_t i = 0; i < md->union_descriptor->field_count; i++) {
        const cfdb_pb_field *f = &md->union_descriptor->fields[i];
        if (cfdb_pb_count(u, f)) {
            if (set)
                return CFDB_ERR_SERIALIZATION_FAILED;
            set = f;
        }
    }
    *type = set ? cfdb_rl_record_type_of(md, set->message) : NULL;
    if (!*type)
        return CFDB_ERR_SERIALIZATION_FAILED;
    *record = cfdb_pb_get(u, set, 0)->m;
    return 0;
}

/* ---- indexes ---- */

static bool index_applies(const cfdb_rl_index *ix, const cfdb_rl_record_type *type)
{
    if (!type)
        return false;
    if (ix->record_type_count == 0)
        return true;   /* universal */
    for (uint32_t i = 0; i < ix->record_type_count; i++)
        if (ix->record_types[i] == type)
            return true;
    return false;
}

/* Index maintenance cfdb does so far: non-unique VALUE indexes. A record touched by any
 * other index is refused (2108) rather than left with that index out of date. */
static int check_maintained(const cfdb_rl_metadata *md, const cfdb_rl_record_type *type)
{
    for (uint32_t i = 0; i < md->index_count; i++) {
        const cfdb_rl_index *ix = &md->indexes[i];
        if (index_applies(ix, type) && (strcmp(ix->type, "value") != 0 || ix->unique))
            return CFDB_ERR_UNSUPPORTED_OPERATION;
    }
    return 0;
}

/* P + (2, subspace_key) + pack(entry key) */
static int entry_key(cfdb_rl_store *s, cfdb_arena *a, const cfdb_rl_index *ix,
                     const cfdb_tuple *key, cfdb_bytes *out)
{
    cfdb_tuple head;
    cfdb_tuple_init(&head, a);
    cfdb_bytes prefix;
    int rc = cfdb_tuple_add_int(&head, KEYSPACE_INDEX);
    if (!rc)
        rc = cfdb_tuple_add_elem(&head, &ix->subspace_key);
    if (!rc)
        rc = cfdb_tuple_pack(a, s->prefix, &head, &prefix);
    if (!rc)
        rc = cfdb_tuple_pack(a, prefix, key, out);
    return rc;
}

static bool same_entry(const cfdb_rl_index_entry *x, const cfdb_rl_index_entry *y)
{
    return cfdb_tuple_equal(&x->key, &y->key) && cfdb_tuple_equal(&x->value, &y->value);
}

/* StandardIndexMaintainer.update: entries of the old record that the new one does not have
 * are cleared, entries of the new one that the old did not have are set. */
static int update_indexes(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                          const cfdb_rl_record_type *old_type, const cfdb_pb_msg *old_rec,
                          const cfdb_rl_record_type *new_type, const cfdb_pb_msg *new_rec)
{
    const cfdb_rl_metadata *md = s->md;
    int rc = 0;
    for (uint32_t i = 0; i < md->index_count && !rc; i++) {
        const cfdb_rl_index *ix = &md->indexes[i];
        cfdb_rl_index_entry *olds = NULL, *news = NULL;
        uint32_t no = 0, nn = 0;
        if (old_rec && index_applies(ix, old_type))
            rc = cfdb_rl_index_entries(a, ix, old_type, old_rec, pk, &olds, &no);
        if (!rc && new_rec && index_applies(ix, new_type))
            rc = cfdb_rl_index_entries(a, ix, new_type, new_rec, pk, &news, &nn);
        for (uint32_t k = 0; k < no && !rc; k++) {
            bool kept = false;
            for (uint32_t j = 0; j < nn && !kept; j++)
                kept = same_entry(&olds[k], &news[j]);
            cfdb_bytes key;
            if (!kept && !(rc = entry_key(s, a, ix, &olds[k].key, &key)))
                dir_clear(tr, key);
        }
        for (uint32_t j = 0; j < nn && !rc; j++) {
            bool had = false;
            for (uint32_t k = 0; k < no && !had; k++)
                had = same_entry(&olds[k], &news[j]);
            if (had)
                continue;
            cfdb_bytes key, value;
            if ((rc = entry_key(s, a, ix, &news[j].key, &key)) ||
                (rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, &news[j].value, &value)))
                break;
            if (key.len > CFDB_RL_MAX_KEY_SIZE)
                rc = CFDB_ERR_KEY_TOO_LARGE;
            else if (value.len > CFDB_RL_MAX_VALUE_SIZE)
                rc = CFDB_ERR_VALUE_TOO_LARGE;
            else
                dir_set(tr, key, value);
        }
    }
    return rc;
}

/* ---- save, load, delete ---- */

int cfdb_rl_store_save(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_pb_msg *record,
                       bool *existed)
{
    const cfdb_rl_metadata *md = s->md;
    /* Java writes an incomplete version at commit (its record context holds the versionstamp
     * mutation until then); cfdb has no such context yet, so it does not write a record
     * without the version Java would store beside it. */
    if (md->store_record_versions)
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    const cfdb_rl_record_type *type = cfdb_rl_record_type_of(md, cfdb_pb_msg_type(record));
    if (!type)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    int rc = check_maintained(md, type);
    if (rc)
        return rc;
    cfdb_tuple pk;
    if ((rc = cfdb_rl_primary_key(a, type, record, &pk)))
        return rc;
    /* The union message holding the record in its type's field. */
    cfdb_pb_msg *u = cfdb_pb_msg_new(a, md->union_descriptor), *inner;
    if (!u)
        return CFDB_ERR_INTERNAL_ERROR;
    cfdb_bytes value, base, begin, end;
    if ((rc = cfdb_pb_mutable(u, type->union_field, &inner)) || (rc = cfdb_pb_merge(inner, record)) ||
        (rc = cfdb_pb_encode(u, a, &value)) || (rc = record_keys(s, a, &pk, &base, &begin, &end)))
        return rc;
    if (value.len > CFDB_RL_SPLIT_RECORD_SIZE && !md->split_long_records)
        return CFDB_ERR_VALUE_TOO_LARGE;
    /* The old record: one read, for its index entries (and *existed). */
    bool found = false;
    const cfdb_rl_record_type *old_type = NULL;
    cfdb_pb_msg *old = NULL;
    if ((md->index_count || existed) &&
        (rc = read_record(s, tr, a, base, begin, end, &found, &old_type, &old)))
        return rc;
    if (found && old_type != type && (rc = check_maintained(md, old_type)))
        return rc;
    if (existed)
        *existed = found;

    dir_clear_range(tr, begin, end);
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
            uint32_t n = value.len - off;
            if (n > CFDB_RL_SPLIT_RECORD_SIZE)
                n = CFDB_RL_SPLIT_RECORD_SIZE;
            cfdb_bytes key;
            if ((rc = keyspace_key(a, base, index, &key)))
                return rc;
            dir_set(tr, key, cfdb_bytes_make(value.ptr + off, n));
        }
    }
    return update_indexes(s, tr, a, &pk, found ? old_type : NULL, found ? old : NULL, type, record);
}

int cfdb_rl_store_load(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                       cfdb_rl_loaded *out)
{
    memset(out, 0, sizeof *out);
    cfdb_bytes base, begin, end;
    int rc = record_keys(s, a, pk, &base, &begin, &end);
    if (!rc)
        rc = read_record(s, tr, a, base, begin, end, &out->found, &out->type, &out->record);
    if (rc || !out->found) {
        out->found = false;
        return rc;
    }
    cfdb_tuple_init(&out->primary_key, a);
    for (uint32_t i = 0; i < cfdb_tuple_count(pk) && !rc; i++)
        rc = cfdb_tuple_add_elem(&out->primary_key, cfdb_tuple_get(pk, i));
    return rc;
}

int cfdb_rl_store_delete(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_tuple *pk,
                         bool *existed)
{
    cfdb_bytes base, begin, end;
    int rc = record_keys(s, a, pk, &base, &begin, &end);
    if (rc)
        return rc;
    bool found = false;
    const cfdb_rl_record_type *old_type = NULL;
    cfdb_pb_msg *old = NULL;
    if ((s->md->index_count || existed) &&
        (rc = read_record(s, tr, a, base, begin, end, &found, &old_type, &old)))
        return rc;
    if (found && (rc = check_maintained(s->md, old_type)))
        return rc;
    if (existed)
        *existed = found;
    dir_clear_range(tr, begin, end);
    if (stores_unsuffixed(s))
        dir_clear(tr, base);
    return found ? update_indexes(s, tr, a, pk, old_type, old, NULL, NULL) : 0;
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
