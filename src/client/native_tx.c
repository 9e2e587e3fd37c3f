#include "native_tx.h"

#include <stdlib.h>
#include <string.h>

#include "cfdb/atomic_ops.h"
#include "cfdb/errors.h"
#include "retry_policy.h"

void cfdb_native_tx_init(cfdb_native_tx *t, cfdb_arena *arena)
{
    memset(t, 0, sizeof *t);
    t->arena = arena;
}

void cfdb_native_tx_destroy(cfdb_native_tx *t)
{
    free(t->mutations);
    free(t->write_ranges);
    memset(t, 0, sizeof *t);
}

static int push_mut(cfdb_native_tx *t, int type, cfdb_bytes p1, cfdb_bytes p2)
{
    if (t->n_mutations == t->cap_mutations) {
        size_t nc = t->cap_mutations ? t->cap_mutations * 2 : 16;
        cfdb_mutation *n = realloc(t->mutations, nc * sizeof *n);
        if (!n)
            return -1;
        t->mutations = n;
        t->cap_mutations = nc;
    }
    cfdb_mutation *m = &t->mutations[t->n_mutations++];
    m->type = (uint8_t)type;
    m->param1 = p1;
    m->param2 = p2;
    return 0;
}

static int push_range(cfdb_native_tx *t, cfdb_bytes b, cfdb_bytes e)
{
    if (t->n_write_ranges == t->cap_write_ranges) {
        size_t nc = t->cap_write_ranges ? t->cap_write_ranges * 2 : 16;
        cfdb_key_range *n = realloc(t->write_ranges, nc * sizeof *n);
        if (!n)
            return -1;
        t->write_ranges = n;
        t->cap_write_ranges = nc;
    }
    t->write_ranges[t->n_write_ranges].begin = b;
    t->write_ranges[t->n_write_ranges].end = e;
    t->n_write_ranges++;
    return 0;
}

/* key and key + "\x00" sharing memory (singleKeyRange) */
static int single_key(cfdb_arena *a, cfdb_bytes key, cfdb_bytes *k, cfdb_bytes *ka)
{
    uint8_t *p = cfdb_arena_alloc(a, (size_t)key.len + 1);
    if (!p)
        return -1;
    if (key.len)
        memcpy(p, key.ptr, key.len);
    p[key.len] = 0;
    *k = cfdb_bytes_make(p, key.len);
    *ka = cfdb_bytes_make(p, (size_t)key.len + 1);
    return 0;
}

int cfdb_native_tx_set(cfdb_native_tx *t, cfdb_bytes key, cfdb_bytes value, bool add_conflict)
{
    cfdb_bytes k, ka, v;
    if (single_key(t->arena, key, &k, &ka) || cfdb_arena_dup_bytes(t->arena, value, &v))
        return -1;
    if (push_mut(t, CFDB_MUT_SET_VALUE, k, v))
        return -1;
    return add_conflict ? push_range(t, k, ka) : 0;
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
    if (single_key(t->arena, key, &k, &ka) || cfdb_arena_dup_bytes(t->arena, operand, &v))
        return -1;
    if (push_mut(t, type, k, v))
        return -1;
    return (add_conflict && type != CFDB_MUT_SET_VERSIONSTAMPED_KEY) ? push_range(t, k, ka) : 0;
}

int cfdb_native_tx_clear(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end, bool add_conflict)
{
    begin = cfdb_truncate_range_key(begin);
    end = cfdb_truncate_range_key(end);
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    cfdb_bytes b, e;
    if (cfdb_arena_dup_bytes(t->arena, begin, &b) || cfdb_arena_dup_bytes(t->arena, end, &e))
        return -1;
    if (push_mut(t, CFDB_MUT_CLEAR_RANGE, b, e))
        return -1;
    return add_conflict ? push_range(t, b, e) : 0;
}

int cfdb_native_tx_clear_key(cfdb_native_tx *t, cfdb_bytes key, bool add_conflict)
{
    if ((int64_t)key.len > cfdb_max_key_size(key))
        return 0;
    cfdb_bytes k, ka;
    if (single_key(t->arena, key, &k, &ka))
        return -1;
    if (push_mut(t, CFDB_MUT_CLEAR_RANGE, k, ka))
        return -1;
    return add_conflict ? push_range(t, k, ka) : 0;
}

int cfdb_native_tx_add_write_conflict(cfdb_native_tx *t, cfdb_bytes begin, cfdb_bytes end)
{
    begin = cfdb_truncate_range_key(begin);
    end = cfdb_truncate_range_key(end);
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    cfdb_bytes b, e;
    if (cfdb_arena_dup_bytes(t->arena, begin, &b) || cfdb_arena_dup_bytes(t->arena, end, &e))
        return -1;
    return push_range(t, b, e);
}
