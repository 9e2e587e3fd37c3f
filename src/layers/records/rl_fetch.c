/* SPDX-License-Identifier: Apache-2.0 */
/* The records of index entries (fdb-record-layer's FDBRecordStoreBase.fetchIndexRecords and
 * scanIndexRecords(IndexFetchMethod), FDBRecordStore.scanIndexRemoteFetch and
 * indexEntriesToIndexRecords, StandardIndexMaintainer.scanRemoteFetchByValue and
 * createRemoteFetchMapper, FallbackCursor / remoteFetchFallbackFrom).
 *
 * SCAN_AND_FETCH: the index cursor feeds a ring of `pipeline` slots (64 by default, Java's
 * mapPipelined over loadIndexEntryRecord); each slot holds an entry and the future of its
 * record's range read (R + pack(pk) ... , the whole record with its pieces and version, as
 * SplitHelper.loadWithSplit reads it; a get of R + pack(pk) for stores that omit the unsplit
 * suffix). The ring is refilled before the oldest slot is waited for, so up to `pipeline`
 * reads are in flight; results come back in index order. A range read cut short (`more`, a
 * split record over the reply's byte limit) is continued from its last key.
 *
 * USE_REMOTE_FETCH: one get_mapped_range per batch over the index range with the mapper
 * (records subspace elements..., "{K[i]}" for each primary key column, "{...}"): the storage
 * server reads each entry's record range and returns it beside the entry. Requires the store
 * prefix to be a packed tuple (the mapper is a tuple, and the server parses keys as tuples)
 * and a primary key length common to the index's record types (2108 otherwise, Java's
 * RecordCoreArgumentException / UnsupportedRemoteFetchIndexException).
 * USE_REMOTE_FETCH_WITH_FALLBACK: any error while opening or reading the remote fetch (the
 * client refuses mapped reads in snapshot mode, with read-your-writes disabled, and over keys
 * the transaction wrote; the server may refuse a mapper) continues as SCAN_AND_FETCH from the
 * continuation of the last record returned, as Java's FallbackCursor does.
 *
 * Both give the same items and continuations: an item's continuation is the index cursor's
 * after its entry; orphans (entries without records) follow cfdb_rl_orphan; the final
 * continuation is the index cursor's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_cursor_internal.h"
#include "rl_internal.h"

int rl_cursor_open_kv(cfdb_rl_cursor *c, cfdb_bytes continuation, uint32_t limit, uint32_t skip,
                      cfdb_bytes mapper);

#define RL_DEFAULT_PIPELINE 64

static uint32_t index_columns(const cfdb_rl_index *ix)
{
    if (ix->root->kind == CFDB_KEX_KEY_WITH_VALUE && ix->root->n1 >= 0)
        return (uint32_t)ix->root->n1;
    return cfdb_kex_columns(ix->root);
}

int cfdb_rl_remote_fetch_mapper(const cfdb_rl_store *s, const cfdb_rl_index *ix, cfdb_arena *a,
                                cfdb_bytes *out)
{
    const cfdb_rl_metadata *md = cfdb_rl_store_metadata(s);
    uint32_t pk_len = rl_common_pk_len(md, ix);
    if (!pk_len)
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    cfdb_tuple records, index;
    cfdb_bytes isub;
    int rc = rl_index_subspace(a, s, ix, &isub);
    if (rc)
        return rc;
    if (cfdb_tuple_unpack(a, cfdb_rl_store_records_prefix(s), &records) ||
        cfdb_tuple_unpack(a, isub, &index))
        return CFDB_ERR_UNSUPPORTED_OPERATION;   /* the store prefix is not a tuple */
    uint32_t prefix = cfdb_tuple_count(&index), after = index_columns(ix);
    for (uint32_t i = 0; i < pk_len && !rc; i++) {
        uint32_t at = ix->pk_positions && i < ix->pk_position_count && ix->pk_positions[i] >= 0
                          ? (uint32_t)ix->pk_positions[i] : after++;
        char ref[32];
        snprintf(ref, sizeof ref, "{K[%u]}", at + prefix);
        rc = cfdb_tuple_add_cstr(&records, ref);
    }
    if (!rc)
        rc = cfdb_tuple_add_cstr(&records, "{...}");
    return rc ? rc : cfdb_tuple_pack(a, cfdb_bytes_make(NULL, 0), &records, out);
}

/* skip: index entries to skip first (the caller's on a new execution, 0 when the cursor
 * resumes itself after a fallback). */
static int open_scan_and_fetch(cfdb_rl_cursor *c, cfdb_bytes continuation, uint32_t limit,
                               uint32_t skip)
{
    c->used = CFDB_RL_SCAN_AND_FETCH;
    if (!c->slots) {
        uint32_t n = c->props.pipeline ? c->props.pipeline : RL_DEFAULT_PIPELINE;
        if (n > 10000)
            n = 10000;
        /* each slot's arena starts in a block of slot_mem: an entry of ordinary size costs no
         * allocation of its own, however many slots the scan fills */
        c->slots = calloc(n, sizeof *c->slots);
        c->slot_mem = malloc((size_t)n * RL_SLOT_BLOCK);
        if (!c->slots || !c->slot_mem) {
            free(c->slots);
            free(c->slot_mem);
            c->slots = NULL;
            c->slot_mem = NULL;
            return CFDB_ERR_OUT_OF_MEMORY;
        }
        c->nslots = n;
        for (uint32_t i = 0; i < n; i++)
            cfdb_arena_init_with(&c->slots[i].arena, c->slot_mem + (size_t)i * RL_SLOT_BLOCK, RL_SLOT_BLOCK);
    }
    return rl_cursor_open_kv(c, continuation, limit, skip, cfdb_bytes_make(NULL, 0));
}

int rl_fetch_open(cfdb_rl_cursor *c, cfdb_bytes continuation)
{
    cfdb_rl_fetch_method m = c->props.fetch;
    if (m == CFDB_RL_SCAN_AND_FETCH)
        return open_scan_and_fetch(c, continuation, c->props.limit, c->props.skip);
    cfdb_bytes mapper;
    int rc = c->props.snapshot ? CFDB_ERR_UNSUPPORTED_OPERATION
                               : cfdb_rl_remote_fetch_mapper(c->s, c->ix, &c->arena, &mapper);
    if (!rc) {
        c->used = CFDB_RL_USE_REMOTE_FETCH;
        rc = rl_cursor_open_kv(c, continuation, c->props.limit, c->props.skip, mapper);
    }
    if (rc && m == CFDB_RL_USE_REMOTE_FETCH_WITH_FALLBACK) {
        c->fell_back = true;
        return open_scan_and_fetch(c, continuation, c->props.limit, c->props.skip);
    }
    return rc;
}

void rl_fetch_close(cfdb_rl_cursor *c)
{
    for (uint32_t i = 0; i < c->nslots; i++) {
        c->slots[i].err = 0;
        if (c->slots[i].f)
            fdb_future_destroy(c->slots[i].f);
        cfdb_arena_free(&c->slots[i].arena);
    }
    free(c->slots);
    free(c->slot_mem);
    c->slots = NULL;
    c->slot_mem = NULL;
    c->nslots = 0;
}

static int set_cont(cfdb_rl_cursor *c, cfdb_bytes cont)
{
    cfdb_arena_reset(&c->cont_arena);
    return cfdb_arena_dup_bytes(&c->cont_arena, cont, &c->cont);
}

/* The item of an entry whose record rows are known; *skip when an orphan is skipped. */
static int finish_item(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_bytes key, cfdb_bytes value,
                       const FDBKeyValue *rows, int n, cfdb_rl_item *item, bool *skip)
{
    *skip = false;
    memset(item, 0, sizeof *item);
    int rc = rl_index_item(c, a, key, value, item);
    bool found = false;
    if (!rc)
        rc = rl_record_from_rows(c, a, rows, n, item, &found);
    if (rc || found)
        return rc;
    switch (c->props.orphans) {
    case CFDB_RL_ORPHAN_SKIP:
        *skip = true;
        return 0;
    case CFDB_RL_ORPHAN_RETURN:
        item->type = NULL;
        item->record = NULL;
        return 0;
    default:
        return CFDB_ERR_SERIALIZATION_FAILED;   /* Java: "record not found for index entry" */
    }
}

/* ---- USE_REMOTE_FETCH ---- */

static int fall_back(cfdb_rl_cursor *c)
{
    c->fell_back = true;
    uint32_t limit = 0;
    if (c->props.limit) {
        /* the limit counts index entries: what the remote fetch read already counts */
        uint32_t seen = c->kv.seen;
        limit = c->props.limit > seen ? c->props.limit - seen : 0;
        if (!limit) {
            c->kv.limited = true;
            return 0;
        }
    }
    /* The cursor resumes itself at c->cont: once the remote fetch delivered an entry the skip
     * is spent (its selector offset placed that entry); before any, c->cont is still where
     * this execution began and the skip applies again. */
    uint32_t skip = c->kv.seen ? 0 : c->props.skip;
    return open_scan_and_fetch(c, c->cont, limit, skip);
}

static int remote_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has)
{
    for (;;) {
        rl_kv kv;
        bool got;
        int rc = rl_kvc_next(&c->kv, &kv, &got);
        if (rc && c->props.fetch == CFDB_RL_USE_REMOTE_FETCH_WITH_FALLBACK)
            return CFDB_ERR_OPERATION_CANCELLED;   /* tells the caller to fall back */
        if (rc || !got) {
            *has = false;
            return rc;
        }
        bool skip;
        if ((rc = finish_item(c, a, kv.key, kv.value, kv.sub, kv.nsub, item, &skip)))
            return rc;
        cfdb_arena_reset(&c->cont_arena);
        if ((rc = rl_kvc_continuation(&c->kv, &c->cont_arena, &c->cont)))
            return rc;
        if (!skip) {
            *has = true;
            return 0;
        }
    }
}

/* ---- SCAN_AND_FETCH ---- */

static int issue_read(cfdb_rl_cursor *c, rl_fetch_slot *sl)
{
    cfdb_rl_item tmp;
    memset(&tmp, 0, sizeof tmp);
    int rc = rl_index_item(c, &sl->arena, sl->key, sl->value, &tmp);
    if (rc)
        return rc;
    if (c->unsuffixed) {
        rc = cfdb_tuple_pack(&sl->arena, c->records, &tmp.primary_key, &sl->rec_begin);
        if (rc)
            return rc;
        sl->f = fdb_transaction_get(c->tr, sl->rec_begin.ptr, (int)sl->rec_begin.len, c->props.snapshot);
    } else {
        rc = cfdb_tuple_range(&sl->arena, c->records, &tmp.primary_key, &sl->rec_begin, &sl->rec_end);
        if (rc)
            return rc;
        sl->f = fdb_transaction_get_range(c->tr, sl->rec_begin.ptr, (int)sl->rec_begin.len, 0, 1,
                                          sl->rec_end.ptr, (int)sl->rec_end.len, 0, 1, 0, 0,
                                          FDB_STREAMING_MODE_WANT_ALL, 1, c->props.snapshot, 0);
    }
    return sl->f ? 0 : CFDB_ERR_INTERNAL_ERROR;
}

static int fill(cfdb_rl_cursor *c)
{
    while (c->count < c->nslots && !c->index_done && !c->fill_err) {
        rl_kv kv;
        bool got;
        int rc = rl_kvc_next(&c->kv, &kv, &got);
        if (rc) {
            c->fill_err = rc;
            break;
        }
        if (!got) {
            c->index_done = true;
            break;
        }
        rl_fetch_slot *sl = &c->slots[(c->head + c->count) % c->nslots];
        cfdb_arena_reset(&sl->arena);
        sl->f = NULL;
        sl->err = 0;
        if ((rc = cfdb_arena_dup_bytes(&sl->arena, kv.key, &sl->key)) ||
            (rc = cfdb_arena_dup_bytes(&sl->arena, kv.value, &sl->value)) ||
            (rc = rl_kvc_continuation(&c->kv, &sl->arena, &sl->cont)))
            return rc;
        c->count++;
        if (c->count > c->max_in_flight)
            c->max_in_flight = c->count;
        sl->err = issue_read(c, sl);
    }
    return 0;
}

/* n bytes of p into a (one byte more allocated, so that an empty copy is not NULL). */
static const uint8_t *copy(cfdb_arena *a, const uint8_t *p, int n)
{
    uint8_t *d = cfdb_arena_alloc(a, (size_t)n + 1);
    if (d && n)
        memcpy(d, p, (size_t)n);
    return d;
}

/* Waits for the head slot's read; its rows into *rows (in a). */
static int collect(cfdb_rl_cursor *c, rl_fetch_slot *sl, cfdb_arena *a, FDBKeyValue **rows, int *n)
{
    *rows = NULL;
    *n = 0;
    int cap = 0;
    for (;;) {
        fdb_error_t e = fdb_future_block_until_ready(sl->f);
        if (!e)
            e = fdb_future_get_error(sl->f);
        if (e)
            return e;
        if (c->unsuffixed) {
            fdb_bool_t present;
            const uint8_t *v;
            int vl;
            if ((e = fdb_future_get_value(sl->f, &present, &v, &vl)))
                return e;
            if (present) {
                FDBKeyValue *r = cfdb_arena_alloc(a, sizeof *r);
                if (!r)
                    return CFDB_ERR_OUT_OF_MEMORY;
                r->key = sl->rec_begin.ptr;
                r->key_length = (int)sl->rec_begin.len;
                r->value = copy(a, v, vl);
                r->value_length = vl;
                if (!r->value)
                    return CFDB_ERR_OUT_OF_MEMORY;
                *rows = r;
                *n = 1;
            }
            return 0;
        }
        const FDBKeyValue *kvs;
        int m;
        fdb_bool_t more;
        if ((e = fdb_future_get_keyvalue_array(sl->f, &kvs, &m, &more)))
            return e;
        if (*n + m > cap) {
            int ncap = (*n + m) * 2 + 4;
            FDBKeyValue *nr = cfdb_arena_alloc(a, (size_t)ncap * sizeof *nr);
            if (!nr)
                return CFDB_ERR_OUT_OF_MEMORY;
            if (*n)
                memcpy(nr, *rows, (size_t)*n * sizeof *nr);
            *rows = nr;
            cap = ncap;
        }
        for (int i = 0; i < m; i++) {
            FDBKeyValue *r = &(*rows)[(*n)++];
            r->key = copy(a, kvs[i].key, kvs[i].key_length);
            r->key_length = kvs[i].key_length;
            r->value = copy(a, kvs[i].value, kvs[i].value_length);
            r->value_length = kvs[i].value_length;
            if (!r->key || !r->value)
                return CFDB_ERR_OUT_OF_MEMORY;
        }
        if (!more || !m)
            return 0;
        /* a record longer than one reply: continue after its last key */
        const FDBKeyValue *last = &(*rows)[*n - 1];
        fdb_future_destroy(sl->f);
        sl->f = fdb_transaction_get_range(c->tr, last->key, last->key_length, 1, 1, sl->rec_end.ptr,
                                          (int)sl->rec_end.len, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL,
                                          1, c->props.snapshot, 0);
        if (!sl->f)
            return CFDB_ERR_INTERNAL_ERROR;
    }
}

static int saf_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has)
{
    for (;;) {
        int rc = fill(c);
        if (rc)
            return rc;
        if (!c->count) {
            *has = false;
            return c->fill_err;
        }
        rl_fetch_slot *sl = &c->slots[c->head];
        FDBKeyValue *rows = NULL;
        int n = 0;
        rc = sl->err ? sl->err : collect(c, sl, a, &rows, &n);
        if (sl->f)
            fdb_future_destroy(sl->f);
        sl->f = NULL;
        c->head = (c->head + 1) % c->nslots;
        c->count--;
        if (rc)
            return rc;
        bool skip;
        if ((rc = finish_item(c, a, sl->key, sl->value, rows, n, item, &skip)) ||
            (rc = set_cont(c, sl->cont)))
            return rc;
        if (!skip) {
            *has = true;
            return 0;
        }
    }
}

int rl_fetch_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has)
{
    if (c->used == CFDB_RL_USE_REMOTE_FETCH) {
        int rc = remote_next(c, a, item, has);
        if (rc != CFDB_ERR_OPERATION_CANCELLED)
            return rc;
        if ((rc = fall_back(c)))
            return rc;
        if (c->kv.limited) {
            *has = false;
            return 0;
        }
    }
    return saf_next(c, a, item, has);
}
