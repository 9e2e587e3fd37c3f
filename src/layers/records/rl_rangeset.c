/* SPDX-License-Identifier: Apache-2.0 */
/* Range sets: fdb-extensions' com.apple.foundationdb.async.RangeSet, which the Record Layer
 * uses for an index's built ranges (IndexingRangeSet.forIndexBuild: P + (6, subspace key)).
 *
 * Layout: for each range [b, e) in the set, key = space + pack((b as bytes)) and value = e
 * (raw bytes). Ranges are within [{0x00}, {0xff}) (RangeSet.FIRST_KEY / FINAL_KEY, standing
 * for "from the start" / "to the end"). Insertion fills only the gaps of [b, e) that no
 * stored range covers (RangeSet.insertRange with requireEmpty false), so stored ranges do
 * not overlap; with require_empty it adds [b, e) only when nothing of it is stored, extending
 * a stored range that ends at b rather than adding a key (what the online indexer uses, as
 * Java's IndexingBase.insertRanges); the reads are at snapshot with an explicit read conflict range over
 * [space + pack(b), space + pack(e)), as Java does. */
#include <string.h>

#include "../dir_io.h"
#include "rl_internal.h"

static int pack_bytes(cfdb_arena *a, cfdb_bytes space, cfdb_bytes b, cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = cfdb_tuple_add_bytes(&t, b.ptr, b.len);
    return rc ? rc : cfdb_tuple_pack(a, space, &t, out);
}

static int unpack_bytes(cfdb_arena *a, cfdb_bytes space, cfdb_bytes key, cfdb_bytes *out)
{
    cfdb_tuple t;
    if (key.len < space.len ||
        cfdb_tuple_unpack(a, cfdb_bytes_make(key.ptr + space.len, key.len - space.len), &t) ||
        cfdb_tuple_count(&t) != 1 || cfdb_tuple_get_bytes(&t, 0, out))
        return CFDB_ERR_SERIALIZATION_FAILED;
    return 0;
}

static int cmp(cfdb_bytes x, cfdb_bytes y)
{
    size_t n = x.len < y.len ? x.len : y.len;
    int c = n ? memcmp(x.ptr, y.ptr, n) : 0;
    return c ? c : (x.len < y.len ? -1 : x.len > y.len);
}

static int space_end(cfdb_arena *a, cfdb_bytes space, cfdb_bytes *end)
{
    return dir_concat(a, space, CFDB_BYTES_LIT("\xff"), end);
}

int rl_rangeset_insert(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes space, cfdb_bytes begin,
                       cfdb_bytes end, bool require_empty, bool *changed)
{
    *changed = false;
    if (cmp(begin, end) >= 0)
        return 0;
    cfdb_bytes fb, fe, after_begin;
    int rc = pack_bytes(a, space, begin, &fb);
    if (!rc)
        rc = pack_bytes(a, space, end, &fe);
    if (!rc)
        rc = dir_concat(a, fb, CFDB_BYTES_LIT("\x00"), &after_begin);
    if (rc)
        return rc;
    if ((rc = fdb_transaction_add_conflict_range(tr, fb.ptr, (int)fb.len, fe.ptr, (int)fe.len,
                                                 FDB_CONFLICT_RANGE_TYPE_READ)))
        return rc;
    /* the range starting at or before begin */
    dir_kv before;
    bool has_before;
    if ((rc = dir_get_first(tr, a, space, after_begin, true, true, &has_before, &before)))
        return rc;
    if (require_empty) {
        /* only into an empty range; a range ending at begin is extended instead of adding
         * a key (RangeSet's consolidation for a single writer going forward) */
        dir_kv inside;
        bool any;
        if (has_before && cmp(begin, before.value) < 0)
            return 0;
        if ((rc = dir_get_first(tr, a, after_begin, fe, true, false, &any, &inside)))
            return rc;
        if (any)
            return 0;
        if (has_before && cmp(begin, before.value) == 0) {
            cfdb_bytes next;
            if ((rc = dir_concat(a, before.key, CFDB_BYTES_LIT("\x00"), &next)) ||
                (rc = fdb_transaction_add_conflict_range(tr, before.key.ptr, (int)before.key.len,
                                                         next.ptr, (int)next.len,
                                                         FDB_CONFLICT_RANGE_TYPE_READ)))
                return rc;
            dir_set(tr, before.key, end);
        } else {
            dir_set(tr, fb, end);
        }
        *changed = true;
        return 0;
    }
    cfdb_bytes last_seen = fb;
    if (has_before && cmp(begin, before.value) < 0) {
        if ((rc = pack_bytes(a, space, before.value, &last_seen)))
            return rc;
    }
    /* the ranges starting inside (begin, end): fill the gaps between them */
    cfdb_bytes scan_b = after_begin;
    for (;;) {
        dir_kv kv;
        bool found;
        if (cmp(scan_b, fe) >= 0 ||
            (rc = dir_get_first(tr, a, scan_b, fe, true, false, &found, &kv)))
            break;
        if (!found)
            break;
        if (cmp(last_seen, kv.key) < 0) {
            cfdb_bytes kb;
            if ((rc = unpack_bytes(a, space, kv.key, &kb)))
                return rc;
            dir_set(tr, last_seen, kb);
            *changed = true;
        }
        cfdb_bytes packed_end;
        if ((rc = pack_bytes(a, space, kv.value, &packed_end)))
            return rc;
        if (cmp(packed_end, last_seen) > 0)
            last_seen = packed_end;
        if ((rc = dir_concat(a, kv.key, CFDB_BYTES_LIT("\x00"), &scan_b)))
            return rc;
    }
    if (rc)
        return rc;
    if (cmp(last_seen, fe) < 0) {
        dir_set(tr, last_seen, end);
        *changed = true;
    }
    return 0;
}

int rl_rangeset_first_missing(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes space, bool *found,
                              cfdb_bytes *begin, cfdb_bytes *end)
{
    *found = false;
    cfdb_bytes send;
    int rc = space_end(a, space, &send);
    dir_kv *kvs;
    uint32_t n = 0;
    if (!rc)
        rc = dir_get_all(tr, a, space, send, &kvs, &n);
    if (rc)
        return rc;
    cfdb_bytes last = CFDB_BYTES_LIT("\x00"), final_key = CFDB_BYTES_LIT("\xff");
    for (uint32_t i = 0; i < n; i++) {
        cfdb_bytes b;
        if ((rc = unpack_bytes(a, space, kvs[i].key, &b)))
            return rc;
        if (cmp(b, last) > 0) {
            *found = true;
            *begin = last;
            *end = b;
            return 0;
        }
        if (cmp(kvs[i].value, last) > 0)
            last = kvs[i].value;
    }
    if (cmp(last, final_key) < 0) {
        *found = true;
        *begin = last;
        *end = final_key;
    }
    return 0;
}

int rl_rangeset_contains(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes space, cfdb_bytes key,
                         bool *out)
{
    /* the last range starting at or before key covers it when its end is past key */
    cfdb_bytes fk, after;
    dir_kv kv;
    bool found;
    int rc = pack_bytes(a, space, key, &fk);
    if (!rc)
        rc = dir_concat(a, fk, CFDB_BYTES_LIT("\x00"), &after);
    if (!rc)
        rc = dir_get_first(tr, a, space, after, false, true, &found, &kv);
    if (rc)
        return rc;
    *out = found && cmp(key, kv.value) < 0;
    return 0;
}
