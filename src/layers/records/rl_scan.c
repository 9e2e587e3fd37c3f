/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer cursors: records by primary-key range (FDBRecordStore.scanTypedRecords: a
 * key-value cursor over the records subspace feeding the unsplitter, skip and limit counted
 * in records) and entries of a VALUE index over a tuple range (StandardIndexMaintainer.scan:
 * a key-value cursor over P + (2, subspace key), skip and limit in entries); fetching their
 * records is in rl_fetch.c. Contract in include/cfdb/records/cursor.h.
 *
 * Index scans (with or without fetching) are refused with 2000 when the index is not
 * readable in the store (FDBRecordStore.scanIndex's ScanNonReadableIndexException).
 *
 * Continuations: an index entry's is the key-value cursor's after reading it; a record's is
 * that of the last row the record consumed (Java's unsplitter keeps the continuation of the
 * last row it appended), so a row read ahead that belongs to the next record is read again on
 * resume. The record scan's key-value cursor has no row limit (Java clears it when records may
 * be split): with a record limit it reads in ITERATOR mode so that a short page does not read
 * the whole range. */
#include <stdlib.h>
#include <string.h>

#include "cfdb/records/cursor.h"
#include "rl_cursor_internal.h"
#include "rl_internal.h"

enum { KEYSPACE_RECORD = 1, KEYSPACE_INDEX = 2 };

int rl_index_subspace(cfdb_arena *a, const cfdb_rl_store *s, const cfdb_rl_index *ix, cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = cfdb_tuple_add_int(&t, KEYSPACE_INDEX);
    if (!rc)
        rc = cfdb_tuple_add_elem(&t, &ix->subspace_key);
    return rc ? rc : cfdb_tuple_pack(a, cfdb_rl_store_prefix(s), &t, out);
}

uint32_t rl_common_pk_len(const cfdb_rl_metadata *md, const cfdb_rl_index *ix)
{
    uint32_t len = 0;
    bool any = false;
    for (uint32_t i = 0; i < md->record_type_count; i++) {
        const cfdb_rl_record_type *t = &md->record_types[i];
        bool applies = ix->record_type_count == 0;
        for (uint32_t j = 0; j < ix->record_type_count && !applies; j++)
            applies = ix->record_types[j] == t;
        if (!applies)
            continue;
        uint32_t n = cfdb_kex_columns(t->primary_key);
        if (any && n != len)
            return 0;
        len = n;
        any = true;
    }
    return len;
}

/* Index.getColumnSize: key_with_value counts its key columns only. */
static uint32_t index_columns(const cfdb_rl_index *ix)
{
    if (ix->root->kind == CFDB_KEX_KEY_WITH_VALUE && ix->root->n1 >= 0)
        return (uint32_t)ix->root->n1;
    return cfdb_kex_columns(ix->root);
}

int rl_entry_primary_key(cfdb_arena *a, const cfdb_rl_index *ix, const cfdb_tuple *key,
                         uint32_t pk_len, cfdb_tuple *pk)
{
    cfdb_tuple_init(pk, a);
    uint32_t after = index_columns(ix);
    for (uint32_t i = 0; i < pk_len; i++) {
        uint32_t at;
        if (ix->pk_positions && i < ix->pk_position_count && ix->pk_positions[i] >= 0)
            at = (uint32_t)ix->pk_positions[i];
        else
            at = after++;
        if (at >= cfdb_tuple_count(key))
            return CFDB_ERR_SERIALIZATION_FAILED;   /* an entry too short for its index */
        int rc = cfdb_tuple_add_elem(pk, cfdb_tuple_get(key, at));
        if (rc)
            return rc;
    }
    return 0;
}

int rl_index_item(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_bytes key, cfdb_bytes value, cfdb_rl_item *item)
{
    cfdb_tuple_init(&item->index_key, a);
    cfdb_tuple_init(&item->index_value, a);
    if (key.len < c->sub.len ||
        cfdb_tuple_unpack(a, cfdb_bytes_make(key.ptr + c->sub.len, key.len - c->sub.len), &item->index_key))
        return CFDB_ERR_SERIALIZATION_FAILED;
    if (value.len && cfdb_tuple_unpack(a, value, &item->index_value))
        return CFDB_ERR_SERIALIZATION_FAILED;
    return rl_entry_primary_key(a, c->ix, &item->index_key, c->pk_len, &item->primary_key);
}

static void fdb_row(const void *rows, uint32_t i, cfdb_bytes *key, cfdb_bytes *value)
{
    const FDBKeyValue *r = (const FDBKeyValue *)rows + i;
    *key = cfdb_bytes_make(r->key, (size_t)r->key_length);
    *value = cfdb_bytes_make(r->value, (size_t)r->value_length);
}

int rl_record_from_rows(cfdb_rl_cursor *c, cfdb_arena *a, const FDBKeyValue *rows, int n,
                        cfdb_rl_item *item, bool *found)
{
    cfdb_tuple ik = item->index_key, iv = item->index_value, epk = item->primary_key;
    int rc = rl_unsplit_whole(c->unsuffixed, c->records.len, c->md, a, rows, n > 0 ? (uint32_t)n : 0,
                              fdb_row, item, found);
    if (!rc && *found) {
        item->index_key = ik;
        item->index_value = iv;
        /* the record's key must be the one the entry points to */
        if (!cfdb_tuple_equal(&epk, &item->primary_key))
            rc = CFDB_ERR_SERIALIZATION_FAILED;
        if (!rc)
            rc = rl_pending_item_version(c->s, c->tr, a, item);
    }
    return rc;
}

/* ---- opening ---- */

static int copy_tuple(cfdb_arena *a, const cfdb_tuple *t, const cfdb_tuple **out)
{
    if (!t) {
        *out = NULL;
        return 0;
    }
    cfdb_bytes packed;
    cfdb_tuple *n = cfdb_arena_alloc(a, sizeof *n);
    if (!n)
        return CFDB_ERR_OUT_OF_MEMORY;
    int rc = cfdb_tuple_pack(a, cfdb_bytes_make(NULL, 0), t, &packed);
    if (!rc)
        rc = cfdb_tuple_unpack(a, packed, n);
    *out = n;
    return rc;
}

static int new_cursor(int kind, cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_index *ix,
                      const cfdb_rl_range *range, const cfdb_rl_scan_props *props, cfdb_rl_cursor **out)
{
    *out = NULL;
    cfdb_rl_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    c->kind = kind;
    c->s = s;
    c->md = cfdb_rl_store_metadata(s);
    c->ix = ix;
    c->tr = tr;
    if (props)
        c->props = *props;
    cfdb_arena_init(&c->arena);
    cfdb_arena_init(&c->cont_arena);
    c->range = range ? *range : cfdb_rl_range_all();
    c->records = cfdb_rl_store_records_prefix(s);
    c->unsuffixed = cfdb_rl_store_omits_unsplit_suffix(s) && !c->md->split_long_records;
    *out = c;
    int rc = copy_tuple(&c->arena, c->range.low, &c->range.low);
    if (!rc)
        rc = copy_tuple(&c->arena, c->range.high, &c->range.high);
    if (!rc && ix) {
        if (!rl_index_value_scans(ix))
            return CFDB_ERR_UNSUPPORTED_OPERATION;   /* BY_VALUE scans of VALUE indexes only */
        /* Java's ScanNonReadableIndexException: a write-only or disabled index may miss
         * entries, so it is never scanned (2000, the code for a misuse of the API) */
        if (cfdb_rl_store_index_state(s, ix->name) != CFDB_RL_INDEX_READABLE)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        c->pk_len = rl_common_pk_len(c->md, ix);
        rc = rl_index_subspace(&c->arena, s, ix, &c->sub);
    } else if (!rc) {
        c->sub = c->records;
    }
    return rc;
}

static int set_start_continuation(cfdb_rl_cursor *c, cfdb_bytes continuation)
{
    return cfdb_arena_dup_bytes(&c->cont_arena, continuation, &c->cont);
}

/* Opens the key-value cursor of c over its range from continuation. */
static int open_kv(cfdb_rl_cursor *c, cfdb_bytes continuation, uint32_t limit, uint32_t skip,
                   cfdb_bytes mapper)
{
    cfdb_bytes begin, end;
    size_t plen;
    int rc = rl_resolve_range(&c->arena, c->sub, &c->range, continuation, c->props.reverse, &begin,
                              &end, &plen);
    if (rc)
        return rc;
    cfdb_rl_scan_props p = c->props;
    if (c->kind == RL_CUR_RECORDS && !p.mode_given) {
        p.mode_given = true;
        p.mode = c->props.limit ? FDB_STREAMING_MODE_ITERATOR : FDB_STREAMING_MODE_WANT_ALL;
    }
    rc = rl_kvc_open(&c->kv, c->tr, begin, end, plen, &p, limit, skip, mapper);
    c->kv_open = true;
    return rc;
}

/* The one way a cursor starts: made, placed at its continuation, then opened as its kind
 * reads (records through the unsplitter, index entries as they are, or index entries with
 * their records fetched); freed again on any error. */
static int open_cursor(int kind, cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_index *ix,
                       const cfdb_rl_range *range, cfdb_bytes continuation, const cfdb_rl_scan_props *props,
                       cfdb_rl_cursor **out)
{
    *out = NULL;
    cfdb_rl_cursor *c;
    int rc = new_cursor(kind, s, tr, ix, range, props, &c);
    if (!rc)
        rc = set_start_continuation(c, continuation);
    if (!rc && kind == RL_CUR_RECORDS) {
        /* records skip whole records in next(), from a continuation too (Java's
         * KeyValueUnsplitter.skip on every execution) */
        rc = open_kv(c, continuation, 0, 0, cfdb_bytes_make(NULL, 0));
        if (!rc) {
            rl_unsplit_init(&c->us, c->props.reverse, c->unsuffixed, c->records.len);
            c->us_open = true;
            /* forward from a continuation, the range begins at its key + 0x00 */
            cfdb_bytes b = c->kv.begin;
            if (continuation.len && !c->props.reverse && b.len && b.ptr[b.len - 1] == 0x00)
                rc = rl_unsplit_after(&c->us, cfdb_bytes_make(b.ptr, b.len - 1));
        }
    } else if (!rc && kind == RL_CUR_INDEX) {
        /* index entries skip with the begin (reverse: end) selector's offset, from a
         * continuation too: Java's KeyValueCursorBase.Builder.prepare adds the skip after
         * placing the range at the continuation */
        rc = open_kv(c, continuation, c->props.limit, c->props.skip, cfdb_bytes_make(NULL, 0));
    } else if (!rc) {
        rc = rl_fetch_open(c, continuation);
    }
    if (rc) {
        cfdb_rl_cursor_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int cfdb_rl_scan_records(cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_range *range,
                         cfdb_bytes continuation, const cfdb_rl_scan_props *props,
                         cfdb_rl_cursor **out)
{
    return open_cursor(RL_CUR_RECORDS, s, tr, NULL, range, continuation, props, out);
}

int cfdb_rl_scan_index(cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_index *ix,
                       const cfdb_rl_range *range, cfdb_bytes continuation,
                       const cfdb_rl_scan_props *props, cfdb_rl_cursor **out)
{
    return open_cursor(RL_CUR_INDEX, s, tr, ix, range, continuation, props, out);
}

int cfdb_rl_scan_index_records(cfdb_rl_store *s, FDBTransaction *tr, const cfdb_rl_index *ix,
                               const cfdb_rl_range *range, cfdb_bytes continuation,
                               const cfdb_rl_scan_props *props, cfdb_rl_cursor **out)
{
    return open_cursor(RL_CUR_FETCH, s, tr, ix, range, continuation, props, out);
}

/* Exposed to rl_fetch.c through the cursor's open_kv: */
int rl_cursor_open_kv(cfdb_rl_cursor *c, cfdb_bytes continuation, uint32_t limit, uint32_t skip,
                      cfdb_bytes mapper);
int rl_cursor_open_kv(cfdb_rl_cursor *c, cfdb_bytes continuation, uint32_t limit, uint32_t skip,
                      cfdb_bytes mapper)
{
    if (c->kv_open) {
        c->requests_before += c->kv.requests;
        rl_kvc_close(&c->kv);
        c->kv_open = false;
    }
    return open_kv(c, continuation, limit, skip, mapper);
}

/* ---- next ---- */

static int consumed(cfdb_rl_cursor *c, cfdb_bytes key)
{
    if (key.len > c->cons_cap) {
        size_t cap = key.len < 64 ? 64 : key.len * 2;
        uint8_t *p = realloc(c->cons_key, cap);
        if (!p)
            return CFDB_ERR_OUT_OF_MEMORY;
        c->cons_key = p;
        c->cons_cap = cap;
    }
    if (key.len)
        memcpy(c->cons_key, key.ptr, key.len);
    c->cons_len = key.len;
    return 0;
}

static int set_cont_inner(cfdb_rl_cursor *c, const uint8_t *key, size_t len)
{
    cfdb_arena_reset(&c->cont_arena);
    size_t p = c->kv.prefix_len;
    return cfdb_rl_continuation_encode(&c->cont_arena, cfdb_bytes_make(key + p, len - p), &c->cont);
}

/* The next whole record of a record scan. */
static int next_record(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has)
{
    for (;;) {
        rl_kv kv;
        bool got;
        int rc;
        if (c->pending) {
            kv = c->pending_kv;
            got = true;
            c->pending = false;
        } else if ((rc = rl_kvc_next(&c->kv, &kv, &got))) {
            return rc;
        }
        if (!got) {
            bool complete;
            if ((rc = rl_unsplit_finish(&c->us, &complete)))
                return rc;
            if (!complete) {
                *has = false;
                return 0;
            }
        } else {
            rl_us_action act;
            if ((rc = rl_unsplit_add(&c->us, kv.key, kv.value, &act)))
                return rc;
            if (act == RL_US_DONE_BEFORE) {
                c->pending = true;
                c->pending_kv = kv;
            } else if ((rc = consumed(c, kv.key))) {
                return rc;
            }
            if (act == RL_US_MORE)
                continue;
        }
        if ((rc = rl_unsplit_take(&c->us, c->md, a, item)) ||
            (rc = rl_pending_item_version(c->s, c->tr, a, item)))
            return rc;
        *has = true;
        return set_cont_inner(c, c->cons_key, c->cons_len);
    }
}

int cfdb_rl_cursor_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has_next)
{
    *has_next = false;
    memset(item, 0, sizeof *item);
    if (c->err)
        return c->err;
    if (c->stopped)
        return 0;
    int rc = 0;
    bool has = false;
    if (c->kind == RL_CUR_QUERY) {
        rc = rl_query_next(c, a, item, &has);
        if (!rc && !has)
            c->stopped = true;
    } else if (c->kind == RL_CUR_FETCH) {
        rc = rl_fetch_next(c, a, item, &has);
        if (!rc && !has) {
            c->stopped = true;
            c->stop = c->kv.limited ? CFDB_RL_RETURN_LIMIT_REACHED : CFDB_RL_SOURCE_EXHAUSTED;
            if (c->stop == CFDB_RL_SOURCE_EXHAUSTED)
                c->cont_end = true;
            else {
                cfdb_arena_reset(&c->cont_arena);
                rc = rl_kvc_continuation(&c->kv, &c->cont_arena, &c->cont);
            }
        }
    } else if (c->kind == RL_CUR_INDEX) {
        rl_kv kv;
        rc = rl_kvc_next(&c->kv, &kv, &has);
        if (!rc && has) {
            rc = rl_index_item(c, a, kv.key, kv.value, item);
            if (!rc)
                rc = set_cont_inner(c, kv.key.ptr, kv.key.len);
        } else if (!rc) {
            c->stopped = true;
            c->stop = c->kv.limited ? CFDB_RL_RETURN_LIMIT_REACHED : CFDB_RL_SOURCE_EXHAUSTED;
            c->cont_end = c->stop == CFDB_RL_SOURCE_EXHAUSTED;
        }
    } else {
        for (;;) {
            if (c->props.limit && c->returned >= c->props.limit) {
                c->stopped = true;
                c->stop = CFDB_RL_RETURN_LIMIT_REACHED;
                return 0;
            }
            rc = next_record(c, a, item, &has);
            if (rc || !has)
                break;
            if (c->skipped < c->props.skip) {
                c->skipped++;
                continue;
            }
            break;
        }
        if (!rc && !has) {
            c->stopped = true;
            c->stop = CFDB_RL_SOURCE_EXHAUSTED;
            c->cont_end = true;
        }
    }
    if (rc) {
        c->err = rc;
        return rc;
    }
    if (has)
        c->returned++;
    *has_next = has;
    return 0;
}

cfdb_bytes cfdb_rl_cursor_continuation(const cfdb_rl_cursor *c, bool *is_end)
{
    if (is_end)
        *is_end = c->cont_end;
    return c->cont_end ? cfdb_bytes_make(NULL, 0) : c->cont;
}

cfdb_rl_stop cfdb_rl_cursor_stop(const cfdb_rl_cursor *c)
{
    return c->stop;
}

cfdb_rl_fetch_method cfdb_rl_cursor_fetch_used(const cfdb_rl_cursor *c)
{
    return c->inner ? c->inner->used : c->used;
}

uint32_t cfdb_rl_cursor_max_in_flight(const cfdb_rl_cursor *c)
{
    return c->inner ? c->inner->max_in_flight : c->max_in_flight;
}

uint64_t cfdb_rl_cursor_requests(const cfdb_rl_cursor *c)
{
    return c->inner ? cfdb_rl_cursor_requests(c->inner) : c->requests_before + c->kv.requests;
}

void cfdb_rl_cursor_free(cfdb_rl_cursor *c)
{
    if (!c)
        return;
    if (c->kind == RL_CUR_FETCH)
        rl_fetch_close(c);
    cfdb_rl_cursor_free(c->inner);
    if (c->kv_open)
        rl_kvc_close(&c->kv);
    if (c->us_open)
        rl_unsplit_free(&c->us);
    free(c->cons_key);
    cfdb_arena_free(&c->cont_arena);
    cfdb_arena_free(&c->arena);
    free(c);
}
