/* The snapshot cache of a read-your-writes transaction (SnapshotCache in
 * fdbclient/include/fdbclient/SnapshotCache.h, 7.3.77): what the transaction has
 * learnt of the database at its read version. It is a list of disjoint known
 * ranges [begin, end), each with the rows storage returned for it; everything
 * outside them is unknown. A later read of a known range is answered from here
 * without a request, exactly as libfdb_c does, so the requests cfdb sends equal
 * libfdb_c's.
 *
 * Segments. The key space is cut into segments that the RYW read algorithms walk
 * (ryw_iter.h): an unknown segment between two known ranges; inside a known range,
 * one single-key segment [k, k\0) per row (KV) and the empty segments between rows.
 * A boundary is a key or a key followed by zero bytes (cfdb_xkey: keyAfter(k) is
 * {k, 1}), so no boundary is ever materialised to compare.
 *
 * Invariants: entries never overlap; a range inserted over known ones only fills
 * the unknown part (known data is never replaced, as in FoundationDB: the cache
 * describes one read version). Two sentinels, ["", "") and ["\xff\xff",
 * "\xff\xff\x00"), bound the list. Adjacent known ranges are not merged (neither
 * are they in FoundationDB): their empty segments stay apart.
 *
 * Memory: entries and copied rows live in the arena given at init (the
 * transaction's); nothing is freed before the arena is reset. */
#ifndef CFDB_CLIENT_SNAP_CACHE_H
#define CFDB_CLIENT_SNAP_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"
#include "omap.h"

/* A key followed by z zero bytes (ExtStringRef). */
typedef struct cfdb_xkey {
    cfdb_bytes k;
    uint32_t z;
} cfdb_xkey;

static inline cfdb_xkey cfdb_xkey_of(cfdb_bytes k)
{
    cfdb_xkey x = { k, 0 };
    return x;
}
static inline cfdb_xkey cfdb_xkey_after(cfdb_xkey x)
{
    x.z++;
    return x;
}
int cfdb_xkey_cmp_tail(cfdb_xkey a, cfdb_xkey b, uint32_t common);
/* <0, 0, >0 as a is before, equal to, after b. */
static inline int cfdb_xkey_cmp(cfdb_xkey a, cfdb_xkey b)
{
    uint32_t n = a.k.len < b.k.len ? a.k.len : b.k.len;
    int c = cfdb_key_prefix_cmp(a.k.ptr, b.k.ptr, n);
    if (c)
        return c;
    if (a.k.len == b.k.len)
        return a.z < b.z ? -1 : a.z > b.z;
    return cfdb_xkey_cmp_tail(a, b, n);
}
static inline bool cfdb_xkey_eq(cfdb_xkey a, cfdb_xkey b)
{
    return a.k.len + a.z == b.k.len + b.z && cfdb_xkey_cmp(a, b) == 0;
}
/* b is a followed by exactly one more zero byte (ExtStringRef::isKeyAfter). */
bool cfdb_xkey_is_key_after(cfdb_xkey b, cfdb_xkey a);
/* The bytes of x: x.k itself when z == 0, else a copy with the zeros in arena.
 * Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_xkey_bytes(cfdb_xkey x, cfdb_arena *arena, cfdb_bytes *out);

typedef struct cfdb_snap_entry {
    cfdb_bytes begin;
    cfdb_xkey end;
    const cfdb_key_value *rows;
    size_t n;
} cfdb_snap_entry;

typedef struct cfdb_snap_cache {
    cfdb_omap entries; /* begin -> cfdb_snap_entry* */
    cfdb_arena *arena;
    /* Changes with every change of the entries (an insert that adds something, a
     * reset): a segment computed at one version is valid while it stays the same
     * (ryw_iter.c keeps cursors on that condition). */
    uint64_t version;
} cfdb_snap_cache;

/* Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_snap_init(cfdb_snap_cache *c, cfdb_arena *arena);
/* Forgets everything (a reset transaction); the arena is the caller's to reset. */
int cfdb_snap_reset(cfdb_snap_cache *c);
/* What get(key) learnt: value or absent (NULL). Ignored when the key is already
 * known. Copies key and value. Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_snap_insert_key(cfdb_snap_cache *c, cfdb_bytes key, const cfdb_bytes *value);
/* What a range read learnt: storage holds exactly rows (ascending) in [begin, end).
 * Only the part of the range not known yet is added. Copies what it keeps, unless `owned`:
 * then the rows, their array and their bytes already live in the cache's arena and are kept
 * as they are. Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_snap_insert_range(cfdb_snap_cache *c, cfdb_bytes begin, cfdb_xkey end, const cfdb_key_value *rows,
                           size_t n, bool owned);

typedef enum cfdb_snap_seg_type {
    CFDB_SNAP_UNKNOWN = 0,
    CFDB_SNAP_EMPTY = 1,
    CFDB_SNAP_KV = 2,
} cfdb_snap_seg_type;

typedef struct cfdb_snap_seg {
    cfdb_snap_seg_type type;
    cfdb_xkey begin, end;
    const cfdb_snap_entry *e;    /* the known range (EMPTY, KV), else NULL */
    size_t idx;                  /* KV: index of the row in e->rows; EMPTY: of the row after it */
    const cfdb_omap_node *node;  /* the entry it lies in (EMPTY, KV) or follows (UNKNOWN) */
} cfdb_snap_seg;

/* The segment containing key x (begin <= x < end). x < "\xff\xff\x00".
 * scratch holds the bytes of x when it has zeros. Returns 0 or 4000 unknown_error (out of memory). */
int cfdb_snap_seg_at(const cfdb_snap_cache *c, cfdb_xkey x, cfdb_arena *scratch, cfdb_snap_seg *out);
/* The segment containing the keys just before x (begin < x <= end); x > "". */
int cfdb_snap_seg_before(const cfdb_snap_cache *c, cfdb_xkey x, cfdb_arena *scratch, cfdb_snap_seg *out);
/* Steps s, a segment computed at the cache's current version, to the segment that
 * begins at s->end (next) or ends at s->begin (prev), walking from s's entry and row
 * instead of searching: the result equals cfdb_snap_seg_at(s->end) /
 * cfdb_snap_seg_before(s->begin). Returns false, s unchanged, where the step would
 * need a search (prev into an earlier entry, next past the last sentinel): the caller
 * then asks cfdb_snap_seg_at / cfdb_snap_seg_before. */
bool cfdb_snap_seg_next(cfdb_snap_seg *s);
bool cfdb_snap_seg_prev(cfdb_snap_seg *s);

#endif
