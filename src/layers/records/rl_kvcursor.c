/* SPDX-License-Identifier: Apache-2.0 */
/* The key-value cursor under every Record Layer scan (fdb-record-layer's KeyValueCursorBase,
 * KeyValueCursor and IndexPrefetchRangeKeyValueCursor), on fdb_c.h range reads; its range
 * comes from rl_range.c.
 *
 * The scan reads [firstGreaterOrEqual(low), firstGreaterOrEqual(high)); skip moves the begin
 * selector forward (offset 1 + skip) or the end selector back (offset 1 - skip). Each batch is
 * one fdb_transaction_get_range (or get_mapped_range) future; the next batch starts after the
 * last key (firstGreaterThan) or, reverse, ends at it. The cursor keeps a copy of the last key
 * read: its continuation is that key minus the prefix, wrapped by rl_continuation.c.
 * Stops as Java's does: RETURN_LIMIT_REACHED once `limit` rows were read (even when the source
 * happens to end there), else SOURCE_EXHAUSTED. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "rl_cursor_internal.h"

static int dup_key(cfdb_bytes k, cfdb_bytes *out)
{
    uint8_t *p = malloc(k.len ? k.len : 1);
    if (!p)
        return CFDB_ERR_OUT_OF_MEMORY;
    if (k.len)
        memcpy(p, k.ptr, k.len);
    *out = cfdb_bytes_make(p, k.len);
    return 0;
}

int rl_kvc_open(rl_kvc *c, FDBTransaction *tr, cfdb_bytes begin, cfdb_bytes end, size_t prefix_len,
                const cfdb_rl_scan_props *p, uint32_t limit, uint32_t skip, cfdb_bytes mapper)
{
    memset(c, 0, sizeof *c);
    c->tr = tr;
    c->reverse = p->reverse;
    c->snapshot = p->snapshot;
    c->mapped = mapper.len > 0;
    c->mapper = mapper;
    c->limit = limit;
    c->prefix_len = prefix_len;
    c->mode = p->mode_given ? p->mode : limit ? FDB_STREAMING_MODE_EXACT : FDB_STREAMING_MODE_WANT_ALL;
    if (c->mode == FDB_STREAMING_MODE_EXACT && !limit)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* exact_mode_without_limits */
    if (skip > 0x3fffffff)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    c->begin_offset = 1;
    c->end_offset = 1;
    if (c->reverse)
        c->end_offset -= (int)skip;
    else
        c->begin_offset += (int)skip;
    int rc = dup_key(begin, &c->begin);
    if (!rc)
        rc = dup_key(end, &c->end);
    return rc;
}

void rl_kvc_close(rl_kvc *c)
{
    if (c->f)
        fdb_future_destroy(c->f);
    c->f = NULL;
    free((void *)c->begin.ptr);
    free((void *)c->end.ptr);
    free(c->last_key);
    c->begin.ptr = c->end.ptr = NULL;
    c->last_key = NULL;
}

static int issue(rl_kvc *c)
{
    int lim = c->limit ? (int)(c->limit - c->seen) : 0;
    c->iteration++;
    c->requests++;
    if (c->mapped)
        c->f = fdb_transaction_get_mapped_range(
            c->tr, c->begin.ptr, (int)c->begin.len, c->begin_or_equal, c->begin_offset, c->end.ptr,
            (int)c->end.len, c->end_or_equal, c->end_offset, c->mapper.ptr, (int)c->mapper.len, lim, 0,
            c->mode, c->iteration, c->snapshot, c->reverse);
    else
        c->f = fdb_transaction_get_range(c->tr, c->begin.ptr, (int)c->begin.len, c->begin_or_equal,
                                         c->begin_offset, c->end.ptr, (int)c->end.len, c->end_or_equal,
                                         c->end_offset, lim, 0, c->mode, c->iteration, c->snapshot,
                                         c->reverse);
    if (!c->f)
        return CFDB_ERR_INTERNAL_ERROR;
    fdb_error_t e = fdb_future_block_until_ready(c->f);
    if (!e)
        e = fdb_future_get_error(c->f);
    fdb_bool_t more = 0;
    if (!e && c->mapped)
        e = fdb_future_get_mappedkeyvalue_array(c->f, &c->mkvs, &c->n, &more);
    else if (!e)
        e = fdb_future_get_keyvalue_array(c->f, &c->kvs, &c->n, &more);
    c->more = more;
    c->pos = 0;
    return e;
}

/* Moves the selectors past the last key read. */
static int advance(rl_kvc *c)
{
    cfdb_bytes k;
    int rc = dup_key(cfdb_bytes_make(c->last_key, c->last_len), &k);
    if (rc)
        return rc;
    if (c->reverse) {
        free((void *)c->end.ptr);
        c->end = k;
        c->end_or_equal = false;
        c->end_offset = 1;
    } else {
        free((void *)c->begin.ptr);
        c->begin = k;
        c->begin_or_equal = true;   /* firstGreaterThan */
        c->begin_offset = 1;
    }
    return 0;
}

static int remember(rl_kvc *c, cfdb_bytes key)
{
    if (key.len > c->last_cap) {
        size_t cap = key.len < 64 ? 64 : key.len * 2;
        uint8_t *p = realloc(c->last_key, cap);
        if (!p)
            return CFDB_ERR_OUT_OF_MEMORY;
        c->last_key = p;
        c->last_cap = cap;
    }
    if (key.len)
        memcpy(c->last_key, key.ptr, key.len);
    c->last_len = key.len;
    c->any = true;
    return 0;
}

int rl_kvc_next(rl_kvc *c, rl_kv *kv, bool *has)
{
    *has = false;
    for (;;) {
        if (c->limit && c->seen >= c->limit) {
            c->limited = true;
            return 0;
        }
        if (c->f && c->pos < c->n) {
            int i = c->pos++;
            memset(kv, 0, sizeof *kv);
            if (c->mapped) {
                const FDBMappedKeyValue *m = &c->mkvs[i];
                kv->key = cfdb_bytes_make(m->key.key, (size_t)m->key.key_length);
                kv->value = cfdb_bytes_make(m->value.key, (size_t)m->value.key_length);
                kv->sub = m->getRange.data;
                kv->nsub = m->getRange.m_size;
            } else {
                kv->key = cfdb_bytes_make(c->kvs[i].key, (size_t)c->kvs[i].key_length);
                kv->value = cfdb_bytes_make(c->kvs[i].value, (size_t)c->kvs[i].value_length);
            }
            /* A key outside the prefix cannot be continued from. */
            if (kv->key.len < c->prefix_len)
                return CFDB_ERR_INTERNAL_ERROR;
            int rc = remember(c, kv->key);
            if (rc)
                return rc;
            c->seen++;
            *has = true;
            return 0;
        }
        if (c->exhausted || c->limited)
            return 0;
        if (c->f) {
            bool was_more = c->more && c->n > 0;
            fdb_future_destroy(c->f);
            c->f = NULL;
            if (!was_more) {
                c->exhausted = true;
                return 0;
            }
            int rc = advance(c);
            if (rc)
                return rc;
        }
        int e = issue(c);
        if (e)
            return e;
    }
}

int rl_kvc_continuation(const rl_kvc *c, cfdb_arena *a, cfdb_bytes *out)
{
    if (!c->any) {
        *out = cfdb_bytes_make(NULL, 0);
        return 0;
    }
    return cfdb_rl_continuation_encode(
        a, cfdb_bytes_make(c->last_key + c->prefix_len, c->last_len - c->prefix_len), out);
}
