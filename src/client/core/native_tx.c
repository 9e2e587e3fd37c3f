/* NativeAPI's Transaction write and conflict-range buffers in program order (native_tx.h). */
#include "native_tx.h"

#include <string.h>

#include "atomic_ops.h"
#include "error_codes.h"
#include "conflict_ranges.h"
#include "retry_policy.h"

#define NO_MEMORY CFDB_ERR_UNKNOWN_ERROR

void cfdb_native_tx_init(cfdb_native_tx *t, cfdb_arena *arena)
{
    memset(t, 0, sizeof *t);
    t->arena = arena;
}

/* Room for one more element of size `elem` in *items (n used of *cap), doubling in the arena. */
static int grow(cfdb_arena *a, void **items, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    void *p = cfdb_arena_alloc(a, nc * elem);
    if (!p)
        return NO_MEMORY;
    if (n)
        memcpy(p, *items, n * elem);
    *items = p;
    *cap = nc;
    return 0;
}

static int push_mut(cfdb_native_tx *t, int type, cfdb_bytes p1, cfdb_bytes p2)
{
    if (grow(t->arena, (void **)&t->mutations, t->n_mutations, &t->cap_mutations, sizeof *t->mutations))
        return NO_MEMORY;
    cfdb_mutation *m = &t->mutations[t->n_mutations++];
    memset(m, 0, sizeof *m);
    m->type = (uint8_t)type;
    m->param1 = p1;
    m->param2 = p2;
    return 0;
}

static int push_range(cfdb_arena *a, cfdb_native_ranges *r, cfdb_bytes b, cfdb_bytes e)
{
    if (grow(a, (void **)&r->items, r->n, &r->cap, sizeof *r->items))
        return NO_MEMORY;
    r->items[r->n].begin = b;
    r->items[r->n].end = e;
    r->n++;
    return 0;
}

/* key and key + "\x00" sharing memory (singleKeyRange) */
static int single_key(cfdb_arena *a, cfdb_bytes key, cfdb_bytes *k, cfdb_bytes *ka)
{
    uint8_t *p = cfdb_arena_alloc(a, (size_t)key.len + 1);
    if (!p)
        return NO_MEMORY;
    if (key.len)
        memcpy(p, key.ptr, key.len);
    p[key.len] = 0;
    *k = cfdb_bytes_make(p, key.len);
    *ka = cfdb_bytes_make(p, (size_t)key.len + 1);
    return 0;
}

/* A range's bounds copied, over-long keys cut to one byte past the limit; *empty if b >= e. */
static int copy_range(cfdb_arena *a, cfdb_bytes begin, cfdb_bytes end, cfdb_bytes *b, cfdb_bytes *e, bool *empty)
{
    begin = cfdb_truncate_range_key(begin);
    end = cfdb_truncate_range_key(end);
    *empty = cfdb_bytes_cmp(begin, end) >= 0;
    if (*empty)
        return 0;
    if (cfdb_arena_dup_bytes(a, begin, b) || cfdb_arena_dup_bytes(a, end, e))
        return NO_MEMORY;
    return 0;
}

int cfdb_native_tx_set(cfdb_native_tx *t, cfdb_bytes key, cfdb_bytes value, bool add_conflict)
{
    cfdb_bytes k, ka, v;
    if (single_key(t->arena, key, &k, &ka) || cfdb_arena_dup_bytes(t->arena, value, &v) ||
        push_mut(t, CFDB_MUT_SET_VALUE, k, v))
        return NO_MEMORY;
    return add_conflict ? push_range(t->arena, &t->writes, k, ka) : 0;
}

int cfdb_native_tx_atomic(cfdb_native_tx *t, int type, cfdb_bytes key, cfdb_bytes operand, bool add_conflict)
{
    if (!cfdb_mutation_is_atomic(type))
        return CFDB_ERR_INVALID_MUTATION_TYPE;
    if (type == CFDB_MUT_MIN)
        type = CFDB_MUT_MIN_V2;
    else if (type == CFDB_MUT_AND)
        type = CFDB_MUT_AND_V2;
    if (type == CFDB_MUT_SET_VERSIONSTAMPED_KEY && cfdb_versionstamp_param_check(key))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE && cfdb_versionstamp_param_check(operand))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    cfdb_bytes k, ka, v;
    if (single_key(t->arena, key, &k, &ka) || cfdb_arena_dup_bytes(t->arena, operand, &v) ||
        push_mut(t, type, k, v))
        return NO_MEMORY;
    return (add_conflict && type != CFDB_MUT_SET_VERSIONSTAMPED_KEY) ? push_range(t->arena, &t->writes, k, ka) : 0;
}

int cfdb_native_tx_clear(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end, bool add_conflict)
{
    cfdb_bytes b, e;
    bool empty;
    int rc = copy_range(t->arena, begin, end, &b, &e, &empty);
    if (rc || empty)
        return rc;
    if (push_mut(t, CFDB_MUT_CLEAR_RANGE, b, e))
        return NO_MEMORY;
    return add_conflict ? push_range(t->arena, &t->writes, b, e) : 0;
}

int cfdb_native_tx_clear_key(cfdb_native_tx *t, cfdb_bytes key, bool add_conflict)
{
    if ((int64_t)key.len > cfdb_max_key_size(key))
        return 0;
    cfdb_bytes k, ka;
    if (single_key(t->arena, key, &k, &ka) || push_mut(t, CFDB_MUT_CLEAR_RANGE, k, ka))
        return NO_MEMORY;
    return add_conflict ? push_range(t->arena, &t->writes, k, ka) : 0;
}

int cfdb_native_tx_add_write_conflict(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_bytes b, e;
    bool empty;
    int rc = copy_range(t->arena, begin, end, &b, &e, &empty);
    return rc || empty ? rc : push_range(t->arena, &t->writes, b, e);
}

int cfdb_native_tx_add_read_conflict(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_bytes b, e;
    bool empty;
    int rc = copy_range(t->arena, begin, end, &b, &e, &empty);
    return rc || empty ? rc : push_range(t->arena, &t->reads, b, e);
}

int cfdb_native_tx_add_read_key(cfdb_native_tx *t, cfdb_bytes key)
{
    cfdb_bytes k, ka;
    if (single_key(t->arena, key, &k, &ka))
        return NO_MEMORY;
    return push_range(t->arena, &t->reads, k, ka);
}

int cfdb_native_tx_reserve_read(cfdb_native_tx *t, uint32_t *slot)
{
    *slot = (uint32_t)t->extra.n;
    return push_range(t->arena, &t->extra, cfdb_bytes_make(NULL, 0), cfdb_bytes_make(NULL, 0));
}

int cfdb_native_tx_fill_read(cfdb_native_tx *t, uint32_t slot, cfdb_bytes begin, cfdb_bytes end)
{
    if (slot >= t->extra.n || cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    cfdb_key_range *r = &t->extra.items[slot];
    if (cfdb_arena_dup_bytes(t->arena, begin, &r->begin) || cfdb_arena_dup_bytes(t->arena, end, &r->end)) {
        r->begin = r->end = cfdb_bytes_make(NULL, 0);
        return NO_MEMORY;
    }
    return 0;
}

bool cfdb_native_tx_is_read_only(const cfdb_native_tx *t)
{
    return t->n_mutations == 0 && t->writes.n == 0;
}

int cfdb_native_tx_build_commit(const cfdb_native_tx *t, int64_t read_version, bool causal_write_risky,
                                const uint8_t random16[16], cfdb_arena *arena, cfdb_commit_transaction *out)
{
    memset(out, 0, sizeof *out);
    size_t nr = t->reads.n, nw = t->writes.n;
    /* room for the self-conflict range in both */
    cfdb_key_range *rd = cfdb_arena_alloc(arena, (nr + t->extra.n + 1) * sizeof *rd);
    cfdb_key_range *wr = cfdb_arena_alloc(arena, (nw + 1) * sizeof *wr);
    if (!rd || !wr)
        return NO_MEMORY;
    if (nr)
        memcpy(rd, t->reads.items, nr * sizeof *rd);
    for (size_t i = 0; i < t->extra.n; i++)
        if (cfdb_bytes_cmp(t->extra.items[i].begin, t->extra.items[i].end) < 0)
            rd[nr++] = t->extra.items[i];
    if (nw)
        memcpy(wr, t->writes.items, nw * sizeof *wr);
    if (!causal_write_risky && !cfdb_ranges_intersect(wr, nw, rd, nr)) {
        cfdb_bytes k;
        if (cfdb_self_conflict_key(random16, arena, &k))
            return NO_MEMORY;
        uint8_t *p = cfdb_arena_alloc(arena, k.len + 1);
        if (!p)
            return NO_MEMORY;
        memcpy(p, k.ptr, k.len);
        p[k.len] = 0;
        cfdb_key_range sc = { cfdb_bytes_make(p, k.len), cfdb_bytes_make(p, k.len + 1) };
        rd[nr++] = sc;
        wr[nw++] = sc;
    }
    out->mutations.items = t->mutations;
    out->mutations.count = (uint32_t)t->n_mutations;
    out->read_conflict_ranges.items = rd;
    out->read_conflict_ranges.count = (uint32_t)nr;
    out->write_conflict_ranges.items = wr;
    out->write_conflict_ranges.count = (uint32_t)nw;
    out->read_snapshot = read_version;
    return 0;
}
