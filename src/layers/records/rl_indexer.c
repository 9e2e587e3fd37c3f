/* SPDX-License-Identifier: Apache-2.0 */
/* Record scans by primary-key range and the online indexer (fdb-record-layer's OnlineIndexer,
 * IndexingBase.buildCommitRetryAsync/handleCursorResult, IndexingMultiTargetByRecords
 * .buildRangeOnly/postIterateRangeOnly, IndexingRangeSet.forIndexBuild).
 *
 * rl_scan_records reads the record keys P + (1, pk..., suffix) of [begin, end) (packed
 * primary keys) in order, one get_range chunk at a time, and hands each whole record to the
 * callback; it stops after max_records records, or once max_bytes of keys and values were
 * read, at a record boundary, reporting the next record's packed primary key.
 *
 * cfdb_rl_index_build, one transaction per batch (each opens the store, so the header and
 * states are checked every time):
 *   readable index            nothing to do;
 *   disabled index            marked write-only (its data was cleared when disabled), so
 *                             saves maintain it from now on;
 *   write-only, ranges left   the first missing range of P + (6, subspace key) is scanned
 *                             with the batch limits, each record indexed, and
 *                             [range begin, next record's packed pk) (or the range end when
 *                             the scan ran out) added to the range set (require-empty, as
 *                             Java) in the same transaction;
 *   write-only, all built     marked readable (which checks uniqueness violations).
 * A crash loses at most the batch in flight: the range set says what is built. Saves while
 * the index is write-only maintain it (non-idempotent count/sum only inside built ranges,
 * see rl_store.c), and the batch's record reads conflict with concurrent saves of those
 * records. Limits keep each transaction far below FoundationDB's 5 s / 10 MB: at most
 * max_records records (100) and max_bytes of record data read (1 MB) per batch; a batch
 * that still fails with transaction_too_large (2101) or transaction_too_old (1007) is
 * retried with half as many records. */
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>

#include "../dir_io.h"
#include "rl_internal.h"

typedef struct rec_acc {
    dir_kv *kvs;
    uint32_t n, cap;
    cfdb_bytes pk_packed;     /* packed pk of the record being gathered */
    cfdb_tuple pk;
} rec_acc;

static int acc_push(cfdb_arena *a, rec_acc *r, const dir_kv *kv)
{
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 8;
        dir_kv *n = cfdb_arena_alloc(a, cap * sizeof *n);
        if (!n)
            return CFDB_ERR_OUT_OF_MEMORY;
        if (r->n)
            memcpy(n, r->kvs, r->n * sizeof *n);
        r->kvs = n;
        r->cap = cap;
    }
    r->kvs[r->n++] = *kv;
    return 0;
}

static int flush(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, rec_acc *r, rl_record_cb cb,
                 void *ctx, uint32_t *scanned)
{
    if (!r->n)
        return 0;
    cfdb_bytes base;
    bool found = false;
    const cfdb_rl_record_type *type = NULL;
    cfdb_pb_msg *rec = NULL;
    cfdb_rl_version version = { 0 };
    int rc = dir_concat(a, s->records, r->pk_packed, &base);
    if (!rc)
        rc = rl_record_from_kvs(s, a, base, r->kvs, r->n, &found, &type, &rec, &version);
    r->n = 0;
    if (!rc && found)
        rc = rl_old_version(s, tr, a, &r->pk, &version);   /* old format: at P + (8, pk...) */
    if (rc || !found)
        return rc;
    (*scanned)++;
    return cb(ctx, &r->pk, type, rec, &version);
}

int rl_scan_records(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, cfdb_bytes begin,
                    cfdb_bytes end, uint32_t max_records, uint32_t max_bytes, rl_record_cb cb,
                    void *ctx, bool *more, cfdb_bytes *next, uint32_t *scanned)
{
    *more = false;
    *scanned = 0;
    cfdb_bytes kb, ke;
    int rc = dir_concat(a, s->records, begin, &kb);
    if (!rc)
        rc = end.len ? dir_concat(a, s->records, end, &ke)
                     : dir_concat(a, s->records, CFDB_BYTES_LIT("\xff"), &ke);
    if (rc)
        return rc;
    bool unsuffixed = s->omit_unsplit_suffix && !s->md->split_long_records;
    rec_acc r = { 0 };
    uint64_t bytes = 0;
    for (int iteration = 1;; iteration++) {
        FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(kb.ptr, (int)kb.len),
                                                 FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(ke.ptr, (int)ke.len), 0, 0,
                                                 FDB_STREAMING_MODE_ITERATOR, iteration, 0, 0);
        if (!f)
            return CFDB_ERR_INTERNAL_ERROR;
        rc = fdb_future_block_until_ready(f);
        if (!rc)
            rc = fdb_future_get_error(f);
        const FDBKeyValue *kv = NULL;
        int n = 0;
        fdb_bool_t m = 0;
        if (!rc)
            rc = fdb_future_get_keyvalue_array(f, &kv, &n, &m);
        for (int i = 0; i < n && !rc; i++) {
            dir_kv c;
            if (!(c.key.ptr = cfdb_arena_dup(a, kv[i].key, (size_t)kv[i].key_length + 1)) ||
                !(c.value.ptr = cfdb_arena_dup(a, kv[i].value, (size_t)kv[i].value_length + 1))) {
                rc = CFDB_ERR_OUT_OF_MEMORY;
                break;
            }
            c.key.len = (uint32_t)kv[i].key_length;
            c.value.len = (uint32_t)kv[i].value_length;
            /* the primary key: the key's tuple without its suffix */
            cfdb_tuple t, pk;
            cfdb_bytes rest = cfdb_bytes_make(c.key.ptr + s->records.len, c.key.len - s->records.len);
            if (cfdb_tuple_unpack(a, rest, &t) || cfdb_tuple_count(&t) < (unsuffixed ? 1u : 2u)) {
                rc = CFDB_ERR_SERIALIZATION_FAILED;
                break;
            }
            cfdb_tuple_init(&pk, a);
            uint32_t pk_len = cfdb_tuple_count(&t) - (unsuffixed ? 0 : 1);
            for (uint32_t j = 0; j < pk_len && !rc; j++)
                rc = cfdb_tuple_add_elem(&pk, cfdb_tuple_get(&t, j));
            cfdb_bytes pk_packed;
            if (!rc)
                rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, &pk, &pk_packed);
            if (rc)
                break;
            if (r.n && !cfdb_bytes_eq(pk_packed, r.pk_packed)) {
                if ((rc = flush(s, tr, a, &r, cb, ctx, scanned)))
                    break;
                if (*scanned >= max_records || bytes >= max_bytes) {
                    *more = true;
                    *next = pk_packed;
                    break;
                }
            }
            if (!r.n) {
                r.pk_packed = pk_packed;
                r.pk = pk;
            }
            bytes += c.key.len + c.value.len;
            rc = acc_push(a, &r, &c);
        }
        fdb_future_destroy(f);
        if (rc || *more)
            return rc;
        if (!m || n == 0)
            break;
        cfdb_bytes last = r.kvs[r.n - 1].key;
        if ((rc = dir_concat(a, last, CFDB_BYTES_LIT("\x00"), &kb)))
            return rc;
    }
    return flush(s, tr, a, &r, cb, ctx, scanned);
}

/* ---- Java's indexing bookkeeping under P + (9, subspace key) (IndexingSubspaces) ----
 *
 * IndexingBase.setIndexingTypeOrThrow / validateTypeStamp: the type stamp at
 * P + (9, sk, 2) is an IndexBuildIndexingStamp; building one index by records writes
 * {method: BY_RECORDS} (IndexingMultiTargetByRecords.compileSingleTargetLegacyIndexingTypeStamp)
 * where there is none or a similar one (equal once the block fields are dropped), and refuses
 * a stamp of another method or a blocked one (block set, expiry 0 or in the future):
 * PartlyBuiltException. IndexingHeartbeat.checkAndUpdateHeartbeat: another indexer's
 * heartbeat at P + (9, sk, 7, its UUID) younger than the lease (10 s,
 * OnlineIndexOperationConfig.DEFAULT_LEASE_LENGTH_MILLIS, and not more than a day in the
 * future) refuses the build (SynchronizedSessionLockedException); then the indexer's own
 * heartbeat is written: IndexBuildHeartbeat {info "BY_RECORDS" (the method's name), creation
 * time, now}. cfdb answers both refusals with 2000 and says why in the stats. */

enum { BUILD_TYPE_STAMP = 2, BUILD_HEARTBEAT = 7 };
enum { METHOD_BY_RECORDS = 1 };
#define LEASE_MS 10000
#define DAY_MS 86400000

typedef struct session {
    uint8_t id[16];            /* the indexer's UUID */
    int64_t created_ms;
} session;

static int64_t now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* P + (9, subspace key, key) (FDBRecordStore.indexBuildSubspace + IndexingSubspaces). */
static int build_space(const cfdb_rl_store *s, cfdb_arena *a, const cfdb_rl_index *ix, int64_t key,
                       cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = cfdb_tuple_add_int(&t, RL_KS_INDEX_BUILD);
    if (!rc)
        rc = cfdb_tuple_add_elem(&t, &ix->subspace_key);
    if (!rc)
        rc = cfdb_tuple_add_int(&t, key);
    return rc ? rc : cfdb_tuple_pack(a, s->prefix, &t, out);
}

static int check_stamp(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                       cfdb_rl_indexer_stats *stats)
{
    static const uint8_t by_records[] = { 0x08, METHOD_BY_RECORDS };   /* method = 1 */
    const cfdb_pb_message *type = cfdb_rl_schema_msg(RL_PKG "IndexBuildIndexingStamp");
    if (!type)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_bytes key, value;
    bool present;
    int rc = build_space(s, a, ix, BUILD_TYPE_STAMP, &key);
    if (!rc)
        rc = dir_get(tr, a, key, false, &present, &value);
    if (rc)
        return rc;
    if (present) {
        cfdb_pb_msg *m;
        if (cfdb_pb_decode(a, type, value.ptr, value.len, 0, &m, NULL))
            return CFDB_ERR_SERIALIZATION_FAILED;   /* "invalid indexing type stamp" */
        int64_t method = rl_int(m, "method");
        int64_t expiry = rl_int(m, "blockExpireEpochMilliSeconds");
        bool blocked = rl_bool(m, "block") && (expiry == 0 || (uint64_t)expiry > (uint64_t)now_ms());
        bool similar = method == METHOD_BY_RECORDS && !rl_has(m, "source_index_subspace_key") &&
                       !rl_has(m, "source_index_last_modified_version") && !rl_count(m, "targetIndex");
        if (blocked || !similar) {
            stats->other_method = (int32_t)method;
            stats->blocked = blocked;
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        }
        if (cfdb_bytes_eq(value, cfdb_bytes_make(by_records, sizeof by_records)))
            return 0;
    }
    dir_set(tr, key, cfdb_bytes_make(by_records, sizeof by_records));
    return 0;
}

static int heartbeat(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                     const session *ses, cfdb_rl_indexer_stats *stats)
{
    const cfdb_pb_message *type = cfdb_rl_schema_msg(RL_PKG "IndexBuildHeartbeat");
    if (!type)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_bytes space, b, e, key, value;
    cfdb_tuple empty, id;
    cfdb_tuple_init(&empty, a);
    cfdb_tuple_init(&id, a);
    dir_kv *kvs;
    uint32_t n;
    int rc = build_space(s, a, ix, BUILD_HEARTBEAT, &space);
    if (!rc)
        rc = cfdb_tuple_range(a, space, &empty, &b, &e);
    if (!rc)
        rc = dir_get_all(tr, a, b, e, &kvs, &n);
    if (rc)
        return rc;
    int64_t now = now_ms();
    for (uint32_t i = 0; i < n; i++) {
        cfdb_tuple t;
        cfdb_pb_msg *hb;
        if (cfdb_tuple_unpack(a, cfdb_bytes_make(kvs[i].key.ptr + space.len, kvs[i].key.len - space.len), &t) ||
            cfdb_tuple_count(&t) != 1 || cfdb_tuple_get(&t, 0)->type != CFDB_TUPLE_UUID)
            return CFDB_ERR_SERIALIZATION_FAILED;   /* not (UUID): getUUID fails */
        if (!memcmp(cfdb_tuple_get(&t, 0)->v.uuid, ses->id, 16))
            continue;
        if (cfdb_pb_decode(a, type, kvs[i].value.ptr, kvs[i].value.len, 0, &hb, NULL))
            continue;   /* a bad heartbeat is ignored */
        int64_t age = now - rl_int(hb, "heartbeatTimeMilliseconds");
        if (age > -DAY_MS && age < LEASE_MS) {
            stats->other_indexer = true;
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        }
    }
    cfdb_pb_msg *mine = cfdb_pb_msg_new(a, type);
    if (!mine)
        return CFDB_ERR_OUT_OF_MEMORY;
    if ((rc = cfdb_tuple_add_uuid(&id, ses->id)) || (rc = cfdb_tuple_pack(a, space, &id, &key)) ||
        (rc = rl_set_bytes(mine, "info", cfdb_bytes_str("BY_RECORDS"))) ||
        (rc = rl_set_int(mine, "createTimeMilliseconds", ses->created_ms)) ||
        (rc = rl_set_int(mine, "heartbeatTimeMilliseconds", now)) ||
        (rc = cfdb_pb_encode(mine, a, &value)))
        return rc;
    dir_set(tr, key, value);
    return 0;
}

static int clear_heartbeat(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                           const session *ses)
{
    cfdb_bytes space, key;
    cfdb_tuple id;
    cfdb_tuple_init(&id, a);
    int rc = build_space(s, a, ix, BUILD_HEARTBEAT, &space);
    if (!rc)
        rc = cfdb_tuple_add_uuid(&id, ses->id);
    if (!rc)
        rc = cfdb_tuple_pack(a, space, &id, &key);
    if (!rc)
        dir_clear(tr, key);
    return rc;
}

/* ---- online indexer ---- */

typedef struct build_ctx {
    cfdb_rl_store *s;
    FDBTransaction *tr;
    cfdb_arena *a;
    const cfdb_rl_index *ix;
} build_ctx;

static int build_cb(void *ctx, const cfdb_tuple *pk, const cfdb_rl_record_type *type,
                    const cfdb_pb_msg *rec, const cfdb_rl_version *version)
{
    build_ctx *c = ctx;
    return rl_index_record(c->s, c->tr, c->a, c->ix, pk, type, rec, version);
}

typedef enum { STEP_BATCH, STEP_STATE, STEP_DONE } step_kind;

/* One transaction's work; *kind says what it did. */
static int step(FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                const cfdb_rl_index *ix, uint32_t max_records, uint32_t max_bytes, step_kind *kind,
                uint32_t *indexed, const session *ses, cfdb_rl_indexer_stats *stats)
{
    cfdb_rl_store *s;
    *indexed = 0;
    int rc = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_OPEN, &s);
    if (rc)
        return rc;
    cfdb_rl_index_state st = (cfdb_rl_index_state)s->states[rl_index_pos(s, ix)];
    if (st == CFDB_RL_INDEX_READABLE) {
        *kind = STEP_DONE;
    } else if (st == CFDB_RL_INDEX_DISABLED) {
        *kind = STEP_STATE;
        if (!(rc = check_stamp(s, tr, a, ix, stats)) &&
            !(rc = cfdb_rl_store_mark_index(s, tr, ix->name, CFDB_RL_INDEX_WRITE_ONLY)))
            rc = heartbeat(s, tr, a, ix, ses, stats);
    } else {
        cfdb_bytes space, b, e, next;
        bool missing, more, changed;
        if (!(rc = rl_space(s, a, RL_KS_INDEX_RANGE, &ix->subspace_key, &space)))
            rc = rl_rangeset_first_missing(tr, a, space, &missing, &b, &e);
        if (!rc && !missing) {
            *kind = STEP_STATE;
            rc = cfdb_rl_store_mark_index(s, tr, ix->name, CFDB_RL_INDEX_READABLE);
            /* IndexingBase.markIndexReadableForIndex: the build's bookkeeping goes */
            if (!rc)
                rc = rl_index_clear_build_data(s, tr, a, ix);
        } else if (!rc && !(rc = check_stamp(s, tr, a, ix, stats)) &&
                   !(rc = heartbeat(s, tr, a, ix, ses, stats))) {
            *kind = STEP_BATCH;
            build_ctx c = { s, tr, a, ix };
            cfdb_bytes sb = b.len == 1 && b.ptr[0] == 0x00 ? (cfdb_bytes){ NULL, 0 } : b;
            cfdb_bytes se = e.len == 1 && e.ptr[0] == 0xff ? (cfdb_bytes){ NULL, 0 } : e;
            rc = rl_scan_records(s, tr, a, sb, se, max_records, max_bytes, build_cb, &c, &more, &next,
                                 indexed);
            if (!rc)
                rc = rl_rangeset_insert(tr, a, space, b, more ? next : e, true, &changed);
            if (!rc)
                rc = cfdb_rl_store_prepare_commit(s, tr);
        }
    }
    cfdb_rl_store_free(s);
    return rc;
}

static int commit(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_commit(tr);
    if (!f)
        return CFDB_ERR_INTERNAL_ERROR;
    int rc = fdb_future_block_until_ready(f);
    if (!rc)
        rc = fdb_future_get_error(f);
    fdb_future_destroy(f);
    return rc;
}

static int on_error(FDBTransaction *tr, int err)
{
    FDBFuture *f = fdb_transaction_on_error(tr, err);
    if (!f)
        return CFDB_ERR_INTERNAL_ERROR;
    int rc = fdb_future_block_until_ready(f);
    if (!rc)
        rc = fdb_future_get_error(f);
    fdb_future_destroy(f);
    return rc;
}

int cfdb_rl_index_build(FDBDatabase *db, const cfdb_rl_metadata *md, cfdb_bytes prefix,
                        const char *index_name, const cfdb_rl_indexer_options *opts,
                        cfdb_rl_indexer_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    const cfdb_rl_index *ix = cfdb_rl_index_by_name(md, index_name);
    if (!ix)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (!rl_index_type_supported(ix))
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    uint32_t max_records = opts && opts->max_records ? opts->max_records : 100;
    uint32_t max_bytes = opts && opts->max_bytes ? opts->max_bytes : 1000000;
    uint32_t max_batches = opts ? opts->max_batches : 0;
    session ses = { .created_ms = now_ms() };
    if (getrandom(ses.id, sizeof ses.id, 0) != (ssize_t)sizeof ses.id)
        return CFDB_ERR_INTERNAL_ERROR;
    ses.id[6] = (uint8_t)((ses.id[6] & 0x0f) | 0x40);   /* a version 4 UUID, as UUID.randomUUID */
    ses.id[8] = (uint8_t)((ses.id[8] & 0x3f) | 0x80);
    FDBTransaction *tr;
    int rc = fdb_database_create_transaction(db, &tr);
    if (rc)
        return rc;
    cfdb_arena a;
    cfdb_arena_init(&a);
    bool wrote_heartbeat = false;
    for (;;) {
        step_kind kind = STEP_DONE;
        uint32_t indexed = 0;
        cfdb_arena_reset(&a);
        rc = step(tr, &a, md, prefix, ix, max_records, max_bytes, &kind, &indexed, &ses, stats);
        if (!rc && kind != STEP_DONE)
            rc = commit(tr);
        if (rc) {
            if (rc == CFDB_ERR_TRANSACTION_TOO_LARGE || rc == CFDB_ERR_TRANSACTION_TOO_OLD) {
                if (max_records > 1)
                    max_records /= 2;
                rc = on_error(tr, rc == CFDB_ERR_TRANSACTION_TOO_LARGE ? CFDB_ERR_TRANSACTION_TOO_OLD : rc);
            } else if (fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, rc)) {
                rc = on_error(tr, rc);
            }
            if (rc)
                break;
            stats->retries++;
            continue;
        }
        fdb_transaction_reset(tr);
        wrote_heartbeat = true;
        if (kind == STEP_DONE) {
            stats->readable = true;
            break;
        }
        if (kind == STEP_BATCH) {
            stats->batches++;
            stats->records += indexed;
            if (max_batches && stats->batches >= max_batches)
                break;
        }
    }
    /* IndexingBase.clearHeartbeats: a session that stops before the index is readable takes
     * its heartbeat away (best effort: a failure here leaves one that expires in 10 s) */
    if (wrote_heartbeat && !stats->readable) {
        for (int attempt = 0; attempt < 5; attempt++) {
            cfdb_rl_store *s = NULL;
            cfdb_arena_reset(&a);
            fdb_transaction_reset(tr);
            int crc = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_OPEN, &s);
            if (!crc)
                crc = clear_heartbeat(s, tr, &a, ix, &ses);
            cfdb_rl_store_free(s);
            if (!crc)
                crc = commit(tr);
            if (!crc || on_error(tr, crc))
                break;
        }
    }
    cfdb_arena_free(&a);
    fdb_transaction_destroy(tr);
    return rc;
}
