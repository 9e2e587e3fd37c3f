/* SPDX-License-Identifier: Apache-2.0 */
/* Records put back together from their keys, one row at a time, in scan order
 * (fdb-record-layer's SplitHelper.KeyValueUnsplitter appendFirst/appendNext, and
 * DynamicMessageRecordSerializer for the union message).
 *
 * Keys are R + pack(pk) + pack((suffix)): 0 an unsplit record, 1, 2, ... the pieces of a split
 * one, -1 the record's version. Forward, a record starts with its version or its first piece
 * and is complete at (0), or when a key of another record arrives after (1..n); reverse, it
 * starts with (0) or its last piece and is complete at its version, or when another record's
 * key arrives after (0) or (1). Pieces must be consecutive. Anything else (a version alone, a
 * piece without its start, pieces out of order, a suffix that is not one integer) is 1044
 * serialization_failed, as Java's FoundSplitWithoutStartException / "Split record segments
 * out of order" refuse it. A record whose primary key is the one of the record taken just
 * before (an unsplit (0) followed by pieces (1..n) of the same key; across pages too, from
 * the continuation's key) is 1044 as well: the load and the reverse scan meet the same rows
 * as one broken record. Stores that omit the unsplit suffix keep every record under
 * R + pack(pk) alone. Piece bytes are copied into the unsplitter's arena until taken (for
 * rl_unsplit_whole, into the caller's arena: a load or a fetched record allocates nothing of
 * its own).
 * The version key's value is pack((versionstamp)) — 0x33 and 12 bytes (SplitHelper.packVersion)
 * — and anything else there is 1044; the version goes out with the record (complete: it was
 * read from the database).
 *
 * This is the one assembly of pieces: record scans and fetches feed it row by row, the
 * store's loads and the indexer's record scans a whole record at once (rl_unsplit_whole). */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "rl_cursor_internal.h"

enum { SFX_VERSION = -1, SFX_UNSPLIT = 0, SFX_FIRST = 1 };

void rl_unsplit_init(rl_unsplit *u, bool reverse, bool unsuffixed, size_t base_len)
{
    memset(u, 0, sizeof *u);
    u->reverse = reverse;
    u->unsuffixed = unsuffixed;
    u->base_len = base_len;
    cfdb_arena_init(&u->arena);
}

void rl_unsplit_free(rl_unsplit *u)
{
    cfdb_arena_free(&u->arena);
    free(u->last);
    u->last = NULL;
}

/* Where the pieces and the prefix go. */
static cfdb_arena *mem(rl_unsplit *u)
{
    return u->whole ? u->whole : &u->arena;
}

/* Remembers the prefix of the record just taken. */
static int keep_last(rl_unsplit *u, const uint8_t *prefix, size_t len)
{
    if (len > u->last_cap) {
        uint8_t *p = realloc(u->last, len);
        if (!p)
            return CFDB_ERR_OUT_OF_MEMORY;
        u->last = p;
        u->last_cap = len;
    }
    if (len)
        memcpy(u->last, prefix, len);
    u->last_len = len;
    u->has_last = true;
    return 0;
}

static int push_piece(rl_unsplit *u, cfdb_bytes v)
{
    if (u->npieces == u->cap) {
        uint32_t cap = u->cap ? u->cap * 2 : 8;
        cfdb_bytes *n = cfdb_arena_alloc(mem(u), cap * sizeof *n);
        if (!n)
            return CFDB_ERR_OUT_OF_MEMORY;
        if (u->npieces)
            memcpy(n, u->pieces, u->npieces * sizeof *n);
        u->pieces = n;
        u->cap = cap;
    }
    cfdb_bytes copy;
    int rc = cfdb_arena_dup_bytes(mem(u), v, &copy);
    if (rc)
        return rc;
    u->pieces[u->npieces++] = copy;
    u->bytes += v.len;
    u->has_data = true;
    return 0;
}

/* The suffix of key after its record prefix: one integer. */
static int split_key(cfdb_arena *a, cfdb_bytes key, size_t base_len, size_t *prefix_len,
                     int64_t *index)
{
    if (key.len <= base_len)
        return CFDB_ERR_SERIALIZATION_FAILED;
    cfdb_tuple t;
    if (cfdb_tuple_unpack(a, cfdb_bytes_make(key.ptr + base_len, key.len - base_len), &t) ||
        cfdb_tuple_count(&t) < 2 || cfdb_tuple_get_int(&t, cfdb_tuple_count(&t) - 1, index))
        return CFDB_ERR_SERIALIZATION_FAILED;
    /* the last element's encoded length: pack it again */
    cfdb_tuple last;
    cfdb_tuple_init(&last, a);
    size_t n;
    if (cfdb_tuple_add_int(&last, *index) || cfdb_tuple_packed_size(&last, &n))
        return CFDB_ERR_OUT_OF_MEMORY;
    *prefix_len = key.len - n;
    return 0;
}

/* The version key's value: pack((versionstamp)), 13 bytes. */
static int take_version(rl_unsplit *u, cfdb_bytes value)
{
    if (value.len != 13 || value.ptr[0] != 0x33)
        return CFDB_ERR_SERIALIZATION_FAILED;
    u->version.present = true;
    u->version.complete = true;
    memcpy(u->version.bytes, value.ptr + 1, 12);
    return 0;
}

static int start(rl_unsplit *u, cfdb_bytes key, size_t plen)
{
    /* A record's keys are adjacent: a second record with the primary key of the one before
     * is the rest of that one (an unsplit record beside pieces of a split one), which the
     * load and the reverse scan refuse as well. */
    if (u->has_last && plen == u->last_len && !memcmp(key.ptr, u->last, plen))
        return CFDB_ERR_SERIALIZATION_FAILED;
    if (plen > u->prefix_cap) {
        uint8_t *p = cfdb_arena_alloc(mem(u), plen);
        if (!p)
            return CFDB_ERR_OUT_OF_MEMORY;
        u->prefix = p;
        u->prefix_cap = plen;
    }
    memcpy(u->prefix, key.ptr, plen);
    u->prefix_len = plen;
    u->active = true;
    return 0;
}

int rl_unsplit_add(rl_unsplit *u, cfdb_bytes key, cfdb_bytes value, rl_us_action *action)
{
    *action = RL_US_MORE;
    if (u->unsuffixed) {
        if (u->active) {
            *action = RL_US_DONE_BEFORE;
            return 0;
        }
        int rc = start(u, key, key.len);
        if (!rc)
            rc = push_piece(u, value);
        u->index = SFX_UNSPLIT;
        *action = RL_US_DONE_WITH;
        return rc;
    }
    size_t plen;
    int64_t idx;
    /* the key's tuple, parsed in a stack block: no allocation per row for ordinary keys */
    _Alignas(16) uint8_t block[1024];
    cfdb_arena tmp;
    cfdb_arena_init_with(&tmp, block, sizeof block);
    int rc = split_key(&tmp, key, u->base_len, &plen, &idx);
    cfdb_arena_free(&tmp);
    if (rc)
        return rc;
    bool rev = u->reverse;
    if (u->active && (plen != u->prefix_len || memcmp(key.ptr, u->prefix, plen))) {
        /* another record: the one held must be complete */
        bool ok;
        rc = rl_unsplit_finish(u, &ok);
        if (!rc)
            *action = RL_US_DONE_BEFORE;
        return rc;
    }
    if (!u->active) {
        if ((rc = start(u, key, plen)))
            return rc;
        u->index = idx;
        if (idx == SFX_UNSPLIT) {
            u->split = false;
            *action = rev ? RL_US_MORE : RL_US_DONE_WITH;
            return push_piece(u, value);
        }
        if (!rev && idx == SFX_VERSION)
            return take_version(u, value);   /* the version comes first forward */
        if ((rev && idx != SFX_VERSION && idx > 0) || idx == SFX_FIRST) {
            u->split = true;
            return push_piece(u, value);
        }
        return CFDB_ERR_SERIALIZATION_FAILED;
    }
    int64_t cur = u->index;
    if (!rev && cur == SFX_VERSION && (idx == SFX_UNSPLIT || idx == SFX_FIRST)) {
        u->index = idx;
        u->split = idx == SFX_FIRST;
        if (idx == SFX_UNSPLIT)
            *action = RL_US_DONE_WITH;
        return push_piece(u, value);
    }
    if (!rev && cur >= SFX_FIRST && idx == cur + 1) {
        u->index = idx;
        return push_piece(u, value);
    }
    if (rev && idx == SFX_VERSION && (cur == SFX_FIRST || cur == SFX_UNSPLIT)) {
        u->index = idx;
        *action = RL_US_DONE_WITH;
        return take_version(u, value);
    }
    if (rev && cur > SFX_FIRST && idx == cur - 1) {
        u->index = idx;
        return push_piece(u, value);
    }
    return CFDB_ERR_SERIALIZATION_FAILED;
}

int rl_unsplit_after(rl_unsplit *u, cfdb_bytes key)
{
    if (u->unsuffixed)
        return keep_last(u, key.ptr, key.len);
    size_t plen;
    int64_t idx;
    cfdb_arena tmp;
    cfdb_arena_init(&tmp);
    int rc = split_key(&tmp, key, u->base_len, &plen, &idx);
    cfdb_arena_free(&tmp);
    return rc ? 0 : keep_last(u, key.ptr, plen);
}

int rl_unsplit_finish(rl_unsplit *u, bool *complete)
{
    *complete = u->active;
    if (!u->active)
        return 0;
    if (!u->has_data)
        return CFDB_ERR_SERIALIZATION_FAILED;       /* a version without its record */
    if (u->reverse && u->index != SFX_UNSPLIT && u->index != SFX_FIRST && u->index != SFX_VERSION)
        return CFDB_ERR_SERIALIZATION_FAILED;       /* the first piece is missing */
    return 0;
}

int rl_unsplit_take(rl_unsplit *u, const cfdb_rl_metadata *md, cfdb_arena *a, cfdb_rl_item *item)
{
    memset(item, 0, sizeof *item);
    int rc = 0;
    if (u->bytes > 0x7fffffffu)
        return CFDB_ERR_SERIALIZATION_FAILED;
    uint8_t *buf = cfdb_arena_alloc(a, u->bytes ? (size_t)u->bytes : 1);
    if (!buf)
        return CFDB_ERR_OUT_OF_MEMORY;
    size_t at = 0;
    for (uint32_t i = 0; i < u->npieces; i++) {
        cfdb_bytes p = u->pieces[u->reverse ? u->npieces - 1 - i : i];
        if (p.len)
            memcpy(buf + at, p.ptr, p.len);
        at += p.len;
    }
    item->record_bytes = at;
    item->split = u->split;
    item->version = u->version;
    cfdb_tuple_init(&item->primary_key, a);
    cfdb_tuple_init(&item->index_key, a);
    cfdb_tuple_init(&item->index_value, a);
    if (cfdb_tuple_unpack(a, cfdb_bytes_make(u->prefix + u->base_len, u->prefix_len - u->base_len),
                          &item->primary_key))
        rc = CFDB_ERR_SERIALIZATION_FAILED;
    if (!rc && !u->whole)
        rc = keep_last(u, u->prefix, u->prefix_len);
    cfdb_pb_msg *un = NULL;
    if (!rc && cfdb_pb_decode(a, md->union_descriptor, buf, at, 0, &un, NULL))
        rc = CFDB_ERR_SERIALIZATION_FAILED;
    const cfdb_pb_field *set = NULL;
    for (uint32_t i = 0; !rc && i < md->union_descriptor->field_count; i++) {
        const cfdb_pb_field *f = &md->union_descriptor->fields[i];
        if (cfdb_pb_count(un, f)) {
            if (set)
                rc = CFDB_ERR_SERIALIZATION_FAILED;
            set = f;
        }
    }
    if (!rc) {
        item->type = set ? cfdb_rl_record_type_of(md, set->message) : NULL;
        if (!item->type)
            rc = CFDB_ERR_SERIALIZATION_FAILED;
        else
            item->record = cfdb_pb_get(un, set, 0)->m;
    }
    /* reset for the next record */
    cfdb_arena_reset(&u->arena);
    u->prefix = NULL;
    u->prefix_cap = 0;
    u->active = false;
    u->has_data = false;
    u->pieces = NULL;
    u->npieces = u->cap = 0;
    u->bytes = 0;
    u->split = false;
    memset(&u->version, 0, sizeof u->version);
    return rc;
}

int rl_unsplit_whole(bool unsuffixed, size_t base_len, const cfdb_rl_metadata *md, cfdb_arena *a,
                     const void *rows, uint32_t n, rl_row_fn row, cfdb_rl_item *item, bool *found)
{
    rl_unsplit u;
    rl_unsplit_init(&u, false, unsuffixed, base_len);
    u.whole = a;
    *found = false;
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        cfdb_bytes k, v;
        rl_us_action act;
        row(rows, i, &k, &v);
        rc = rl_unsplit_add(&u, k, v, &act);
        if (!rc && (act == RL_US_DONE_BEFORE || (act == RL_US_DONE_WITH && i + 1 < n)))
            rc = CFDB_ERR_SERIALIZATION_FAILED;   /* rows of two records */
    }
    if (!rc)
        rc = rl_unsplit_finish(&u, found);
    if (!rc && *found)
        rc = rl_unsplit_take(&u, md, a, item);
    rl_unsplit_free(&u);
    return rc;
}
