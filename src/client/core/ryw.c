/* A transaction's read-your-writes state (ryw.h): writes to the write map or, with
 * read-your-writes off, to NativeAPI's program-order buffers (native_tx.c); size accounting;
 * point reads over local writes; the commit request. */
#include "ryw.h"

#include <string.h>

#include "error_codes.h"
#include "mutation.h"

/* Per-item overheads FoundationDB counts in a transaction's size (expectedSize of
 * MutationRef / KeyRangeRef is their bytes; the constants approximate the structs). */
#define MUTATION_OVERHEAD 24
#define RANGE_OVERHEAD 16
/* what libfdb_c's actors make of a failed allocation (txn_internal.h TXN_ERR_NO_MEMORY) */
#define NO_MEMORY CFDB_ERR_UNKNOWN_ERROR

static const cfdb_bytes top_key = { (const uint8_t *)"\xff\xff", 2 };

void cfdb_ryw_init(cfdb_ryw *r)
{
    memset(r, 0, sizeof *r);
    cfdb_arena_init_with(&r->arena, r->arena_mem, sizeof r->arena_mem);
    cfdb_write_map_init(&r->wm, &r->arena);
    cfdb_snap_init(&r->cache, &r->arena);
    cfdb_read_conflicts_init(&r->reads, &r->arena);
}

void cfdb_ryw_free(cfdb_ryw *r)
{
    cfdb_write_map_destroy(&r->wm);
    cfdb_range_set_clear(&r->reads.set);
    cfdb_arena_free(&r->arena);
}

/* Keeps the arena's first block, so a reused transaction writes without malloc. */
void cfdb_ryw_reset(cfdb_ryw *r)
{
    cfdb_write_map_destroy(&r->wm);
    cfdb_range_set_clear(&r->reads.set);
    cfdb_arena_reset(&r->arena);
    /* everything but the arena starts afresh */
    r->next_write_no_conflict = false;
    r->has_versionstamp_ops = false;
    r->size = 0;
    r->read_version = 0;
    r->disabled = false;
    cfdb_write_map_init(&r->wm, &r->arena);
    cfdb_snap_init(&r->cache, &r->arena);
    cfdb_read_conflicts_init(&r->reads, &r->arena);
}

void cfdb_ryw_disable(cfdb_ryw *r)
{
    r->disabled = true;
    cfdb_native_tx_init(&r->native, &r->arena);
}

static bool take_conflict_flag(cfdb_ryw *r)
{
    bool add = !r->next_write_no_conflict;
    r->next_write_no_conflict = false;
    return add;
}

int cfdb_ryw_set(cfdb_ryw *r, cfdb_bytes key, cfdb_bytes value)
{
    bool add = take_conflict_flag(r);
    r->size += MUTATION_OVERHEAD + key.len + value.len + RANGE_OVERHEAD + 2 * key.len + 1;
    if (r->disabled)
        return cfdb_native_tx_set(&r->native, key, value, add);
    return cfdb_write_map_set(&r->wm, key, value, add);
}

int cfdb_ryw_clear_range(cfdb_ryw *r, cfdb_bytes begin, cfdb_bytes end, bool single_key)
{
    bool add = take_conflict_flag(r);
    if (single_key) {
        /* RYW's clear(key) hands the key to NativeAPI before counting it */
        if (r->disabled)
            return cfdb_native_tx_clear_key(&r->native, begin, add);
        r->size += MUTATION_OVERHEAD + 2 * begin.len + 1 + RANGE_OVERHEAD + 2 * begin.len + 1;
        return cfdb_write_map_clear_key(&r->wm, begin, add);
    }
    r->size += MUTATION_OVERHEAD + begin.len + end.len + RANGE_OVERHEAD + begin.len + end.len;
    if (r->disabled)
        return cfdb_native_tx_clear(&r->native, begin, end, add);
    return cfdb_write_map_clear(&r->wm, begin, end, add);
}

int cfdb_ryw_atomic(cfdb_ryw *r, int type, cfdb_bytes key, cfdb_bytes operand)
{
    bool add = take_conflict_flag(r);
    int rc = r->disabled ? cfdb_native_tx_atomic(&r->native, type, key, operand, add)
                         : cfdb_write_map_atomic(&r->wm, type, key, operand, add, r->read_version, top_key);
    if (rc == 0) {
        r->size += MUTATION_OVERHEAD + key.len + operand.len + RANGE_OVERHEAD + 2 * key.len + 1;
        if (type == CFDB_MUT_SET_VERSIONSTAMPED_KEY || type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE)
            r->has_versionstamp_ops = true;
    }
    return rc;
}

/* Keys the transaction itself wrote or cleared are left out, as libfdb_c does: their
 * values did not come from the database. */
int cfdb_ryw_add_read_conflict(cfdb_ryw *r, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    r->size += RANGE_OVERHEAD + begin.len + end.len;
    if (r->disabled)
        return cfdb_native_tx_add_read_conflict(&r->native, begin, end);
    return cfdb_read_conflicts_add(&r->reads, &r->wm, begin, end);
}

int cfdb_ryw_add_read_conflict_key(cfdb_ryw *r, cfdb_bytes key)
{
    r->size += RANGE_OVERHEAD + 2 * key.len + 1;
    if (r->disabled)
        return cfdb_native_tx_add_read_key(&r->native, key);
    return cfdb_read_conflicts_add_key(&r->reads, &r->wm, key);
}

int cfdb_ryw_add_write_conflict(cfdb_ryw *r, cfdb_bytes begin, cfdb_bytes end)
{
    r->size += RANGE_OVERHEAD + begin.len + end.len;
    if (r->disabled)
        return cfdb_native_tx_add_write_conflict(&r->native, begin, end);
    return cfdb_write_map_add_write_conflict(&r->wm, begin, end);
}

size_t cfdb_ryw_size(const cfdb_ryw *r)
{
    return r->size;
}

bool cfdb_ryw_is_read_only(const cfdb_ryw *r)
{
    if (r->disabled)
        return cfdb_native_tx_is_read_only(&r->native);
    return cfdb_write_map_is_empty(&r->wm);
}

bool cfdb_ryw_has_versionstamp_ops(const cfdb_ryw *r)
{
    return r->has_versionstamp_ops;
}

/* ---- point reads ---- */

int cfdb_ryw_point_prepare(cfdb_ryw *r, cfdb_bytes key, cfdb_ryw_point *p, cfdb_arena *arena)
{
    memset(p, 0, sizeof *p);
    cfdb_bytes v;
    switch (cfdb_write_map_lookup(&r->wm, key, &v)) {
    case CFDB_WM_UNMODIFIED:
        return 0;
    case CFDB_WM_VALUE:
        p->known = true;
        p->present = true;
        return cfdb_arena_dup_bytes(arena, v, &p->value) ? NO_MEMORY : 0;
    case CFDB_WM_ABSENT:
        p->known = true;
        return 0;
    case CFDB_WM_DEPENDENT:
        p->dependent = true;
        return 0;
    case CFDB_WM_UNREADABLE:
    default:
        return CFDB_ERR_ACCESSED_UNREADABLE;
    }
}

int cfdb_ryw_point_resolve(cfdb_ryw *r, cfdb_bytes key, const cfdb_ryw_point *p, const cfdb_bytes *storage,
                           cfdb_arena *arena, cfdb_bytes *out, bool *present)
{
    cfdb_bytes v = { 0, 0 };
    bool has = false;
    if (p->known) {
        v = p->value;
        has = p->present;
    } else if (p->dependent && r) {
        int rc = cfdb_write_map_apply(&r->wm, key, storage, &v, &has);
        if (rc)
            return rc;
    } else if (storage) {
        v = *storage;
        has = true;
    }
    *present = has;
    if (!has) {
        *out = cfdb_bytes_make("", 0);
        return 0;
    }
    return cfdb_arena_dup_bytes(arena, v, out) ? NO_MEMORY : 0;
}

/* ---- limits and selectors ---- */

int cfdb_ryw_limits_from_api(int limit, int target_bytes, int mode, int iteration, cfdb_ryw_limits *out)
{
    static const int mode_bytes[] = { -1, 256, 1000, 4096, 80000 };
    static const int progression[] = { 4096, 6144, 9216, 13824, 20736, 31104, 46656, 69984, 80000, 120000 };
    enum { WANT_ALL = -2, ITERATOR = -1, EXACT = 0, SERIAL = 4 };
    int rows = limit ? limit : -1;
    int bytes = target_bytes ? target_bytes : -1;
    if (rows < 0 && bytes < 0 && mode == EXACT)
        return CFDB_ERR_EXACT_MODE_WITHOUT_LIMITS;
    if (mode == WANT_ALL)
        mode = SERIAL;
    int mb;
    if (mode == ITERATOR) {
        if (iteration <= 0)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        mb = progression[(iteration > 10 ? 10 : iteration) - 1];
    } else if (mode >= 0 && mode <= SERIAL) {
        mb = mode_bytes[mode];
    } else {
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    if (bytes < 0)
        bytes = mb;
    else if (mb >= 0 && mb < bytes)
        bytes = mb;
    if (limit < 0)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    out->rows = rows;
    out->bytes = bytes;
    return 0;
}

bool cfdb_selector_simple_key(cfdb_key_selector sel, cfdb_arena *arena, cfdb_bytes *key)
{
    if (sel.offset != 1)
        return false;
    if (!sel.orEqual) {
        *key = sel.key;
        return true;
    }
    uint8_t *p = cfdb_arena_alloc(arena, sel.key.len + 1);
    if (!p)
        return false;
    memcpy(p, sel.key.ptr, sel.key.len);
    p[sel.key.len] = 0;
    *key = cfdb_bytes_make(p, sel.key.len + 1);
    return true;
}

/* ---- commit ---- */

int cfdb_ryw_build_commit(cfdb_ryw *r, int64_t read_version, bool causal_write_risky, uint64_t rnd1, uint64_t rnd2,
                          cfdb_arena *arena, cfdb_commit_transaction *out)
{
    uint8_t random16[16];
    memcpy(random16, &rnd1, 8);
    memcpy(random16 + 8, &rnd2, 8);
    if (r->disabled)
        return cfdb_native_tx_build_commit(&r->native, read_version, causal_write_risky, random16, arena, out);
    memset(out, 0, sizeof *out);
    cfdb_mutation *muts;
    size_t nmuts;
    cfdb_key_range *writes;
    size_t nwrites;
    if (cfdb_write_map_commit_data(&r->wm, arena, &muts, &nmuts, &writes, &nwrites))
        return NO_MEMORY;
    cfdb_key_range *rd, *wr;
    size_t nrd, nwr;
    if (cfdb_commit_conflict_ranges(&r->reads, writes, nwrites, causal_write_risky, random16, arena, &rd, &nrd, &wr,
                                    &nwr))
        return NO_MEMORY;
    out->read_conflict_ranges.items = rd;
    out->read_conflict_ranges.count = (uint32_t)nrd;
    out->write_conflict_ranges.items = wr;
    out->write_conflict_ranges.count = (uint32_t)nwr;
    out->mutations.items = muts;
    out->mutations.count = (uint32_t)nmuts;
    out->read_snapshot = read_version;
    return 0;
}
