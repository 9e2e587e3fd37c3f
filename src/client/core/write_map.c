#include "write_map.h"

#include <stdlib.h>
#include <string.h>

#include "atomic_ops.h"
#include "error_codes.h"

/* ---- small helpers --------------------------------------------------------------- */

static int key_after(cfdb_arena *a, cfdb_bytes k, cfdb_bytes *out)
{
    uint8_t *p = cfdb_arena_alloc(a, (size_t)k.len + 1);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR;
    if (k.len)
        memcpy(p, k.ptr, k.len);
    p[k.len] = 0;
    *out = cfdb_bytes_make(p, (size_t)k.len + 1);
    return 0;
}

/* b == a + "\x00" */
/* Vectors may start on caller storage (v->on_stack: a stack or arena array): the first
 * growth copies to the heap. */
static int mutvec_push(cfdb_wm_mutvec *v, cfdb_mutation m)
{
    if (v->count == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 16;
        cfdb_mutation *n = v->on_stack ? malloc(nc * sizeof *n) : realloc(v->items, nc * sizeof *n);
        if (!n)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (v->on_stack && v->count)
            memcpy(n, v->items, v->count * sizeof *n);
        v->on_stack = false;
        v->items = n;
        v->cap = nc;
    }
    v->items[v->count++] = m;
    return 0;
}

static int rangevec_push(cfdb_wm_rangevec *v, cfdb_bytes b, cfdb_bytes e)
{
    if (v->count == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 16;
        cfdb_key_range *n = v->on_stack ? malloc(nc * sizeof *n) : realloc(v->items, nc * sizeof *n);
        if (!n)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (v->on_stack && v->count)
            memcpy(n, v->items, v->count * sizeof *n);
        v->on_stack = false;
        v->items = n;
        v->cap = nc;
    }
    v->items[v->count].begin = b;
    v->items[v->count].end = e;
    v->count++;
    return 0;
}

static bool is_atomic(int t)
{
    return cfdb_mutation_is_atomic(t);
}

/* Ops that are not associative unless operands have equal lengths
 * (MutationRef::NON_ASSOCIATIVE_MASK). */
static bool is_non_associative(int t)
{
    return t == CFDB_MUT_ADD_VALUE || t == CFDB_MUT_OR || t == CFDB_MUT_XOR || t == CFDB_MUT_MAX ||
           t == CFDB_MUT_MIN || t == CFDB_MUT_SET_VERSIONSTAMPED_KEY || t == CFDB_MUT_SET_VERSIONSTAMPED_VALUE ||
           t == CFDB_MUT_MIN_V2 || t == CFDB_MUT_COMPARE_AND_CLEAR;
}

/* A stack whose bottom needs the stored value. */
static bool stack_dependent(const cfdb_wm_entry *e)
{
    if (!e->count)
        return false;
    int t = e->ops[0].type;
    return t != CFDB_MUT_SET_VALUE && t != CFDB_MUT_CLEAR_RANGE && t != CFDB_MUT_SET_VERSIONSTAMPED_VALUE &&
           t != CFDB_MUT_SET_VERSIONSTAMPED_KEY;
}

/* Combines an existing operation with a newer one into one (WriteMap::coalesce). */
static int coalesce(cfdb_arena *a, cfdb_wm_op existing, cfdb_wm_op next, cfdb_wm_op *out)
{
    if (next.type == CFDB_MUT_SET_VALUE || next.type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE) {
        *out = next;
        return 0;
    }
    if (existing.type != CFDB_MUT_SET_VALUE && existing.type != next.type)
        return CFDB_ERR_OPERATION_FAILED;
    if (existing.type != CFDB_MUT_SET_VALUE && next.type == CFDB_MUT_COMPARE_AND_CLEAR)
        return CFDB_ERR_OPERATION_FAILED;
    bool present = true;
    cfdb_bytes v;
    int rc = cfdb_apply_atomic(next.type, existing.present ? &existing.value : NULL, next.value, a, &v,
                               &present);
    if (rc)
        return rc;
    out->type = existing.type == CFDB_MUT_SET_VALUE ? CFDB_MUT_SET_VALUE : next.type;
    out->present = present;
    out->value = present ? v : (cfdb_bytes){ NULL, 0 };
    return 0;
}

static int stack_push(cfdb_arena *a, cfdb_wm_entry *e, cfdb_wm_op op)
{
    if (e->count == e->cap) {
        uint32_t nc = e->cap ? e->cap * 2 : 2;
        cfdb_wm_op *n = cfdb_arena_alloc(a, nc * sizeof *n);
        if (!n)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (e->count)
            memcpy(n, e->ops, e->count * sizeof *n);
        e->ops = n;
        e->cap = nc;
    }
    e->ops[e->count++] = op;
    return 0;
}

/* WriteMap::coalesceOver */
static int coalesce_over(cfdb_arena *a, cfdb_wm_entry *e, cfdb_wm_op next)
{
    cfdb_wm_op *top = &e->ops[e->count - 1];
    if (top->type == next.type && next.type != CFDB_MUT_COMPARE_AND_CLEAR) {
        if (is_non_associative(top->type) && top->present && top->value.len != next.value.len)
            return stack_push(a, e, next);
        return coalesce(a, *top, next, top);
    }
    if (is_atomic(next.type) && is_atomic(top->type))
        return stack_push(a, e, next);
    return coalesce(a, *top, next, top);
}

/* WriteMap::coalesceUnder: the value seen through the stack on top of base. */
static int coalesce_under(cfdb_arena *a, const cfdb_wm_entry *e, const cfdb_bytes *base, cfdb_wm_op *out)
{
    if (!stack_dependent(e) && e->count == 1) {
        *out = e->ops[0];
        return 0;
    }
    cfdb_wm_op cur = { CFDB_MUT_SET_VALUE, base != NULL, base ? *base : (cfdb_bytes){ NULL, 0 } };
    for (uint32_t i = 0; i < e->count; i++) {
        int rc = coalesce(a, cur, e->ops[i], &cur);
        if (rc)
            return rc;
    }
    *out = cur;
    return 0;
}

/* ---- lifecycle ---------------------------------------------------------------- */

int cfdb_write_map_init(cfdb_write_map *wm, cfdb_arena *arena)
{
    memset(wm, 0, sizeof *wm);
    wm->arena = arena;
    wm->empty = true;
    if (cfdb_omap_init(&wm->entries, arena) || cfdb_range_set_init(&wm->cleared, arena) ||
        cfdb_range_set_init(&wm->conflict, arena) || cfdb_range_set_init(&wm->unreadable, arena))
        return CFDB_ERR_UNKNOWN_ERROR;
    return 0;
}

void cfdb_write_map_destroy(cfdb_write_map *wm)
{
    free(wm->early_mutations.items);
    free(wm->early_conflicts.items);
    memset(wm, 0, sizeof *wm);
}

const cfdb_wm_entry *cfdb_write_map_entry(const cfdb_write_map *wm, cfdb_bytes key)
{
    cfdb_omap_node *n = cfdb_omap_find(&wm->entries, key);
    return n ? n->val.ptr : NULL;
}

/* ---- writes ---------------------------------------------------------------------- */

/* WriteMap::mutate. param must already live in the arena. */
static int mutate(cfdb_write_map *wm, cfdb_bytes key, int type, cfdb_bytes param, bool add_conflict)
{
    wm->empty = false;
    wm->version++;
    cfdb_arena *a = wm->arena;
    cfdb_omap_node *n = cfdb_omap_find(&wm->entries, key);
    cfdb_wm_entry *e = n ? n->val.ptr : NULL;
    bool was_unreadable = e ? e->unreadable : cfdb_range_set_find(&wm->unreadable, key) != NULL;
    bool unreadable = was_unreadable || type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE ||
                      type == CFDB_MUT_SET_VERSIONSTAMPED_KEY;
    bool dependent = type != CFDB_MUT_SET_VALUE && type != CFDB_MUT_SET_VERSIONSTAMPED_VALUE &&
                     type != CFDB_MUT_SET_VERSIONSTAMPED_KEY;
    cfdb_wm_op op = { (uint8_t)type, true, param };
    int rc;

    if (!e) {
        e = cfdb_arena_zalloc(a, sizeof *e);
        if (!e)
            return CFDB_ERR_UNKNOWN_ERROR;
        n = cfdb_omap_insert(&wm->entries, key, NULL);
        if (!n)
            return CFDB_ERR_UNKNOWN_ERROR;
        n->val.ptr = e;
        e->unreadable = unreadable;
        if (dependent && cfdb_range_set_find(&wm->cleared, key)) {
            cfdb_wm_op cleared = { CFDB_MUT_SET_VALUE, false, { NULL, 0 } };
            if (stack_push(a, e, cleared))
                return CFDB_ERR_UNKNOWN_ERROR;
            rc = coalesce_over(a, e, op);
        } else {
            rc = stack_push(a, e, op);
        }
    } else if (!was_unreadable && (type == CFDB_MUT_SET_VALUE || type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE)) {
        e->count = 0;
        e->unreadable = unreadable;
        rc = stack_push(a, e, op);
    } else {
        e->unreadable = unreadable;
        if (!unreadable && e->count > 0)
            rc = coalesce_over(a, e, op);
        else
            rc = stack_push(a, e, op);
    }
    if (rc)
        return rc;
    if (add_conflict) {
        cfdb_bytes ka;
        if (key_after(a, key, &ka) || cfdb_range_set_add(&wm->conflict, key, ka))
            return CFDB_ERR_UNKNOWN_ERROR;
    }
    return 0;
}

static int remove_entries(cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_omap_node *n = cfdb_omap_find_ge(&wm->entries, begin);
    while (n && cfdb_bytes_cmp(n->key, end) < 0) {
        cfdb_omap_node *nx = cfdb_omap_next(n);
        cfdb_omap_remove(&wm->entries, n->key);
        n = nx;
    }
    return 0;
}

int cfdb_write_map_set(cfdb_write_map *wm, cfdb_bytes key, cfdb_bytes value, bool add_conflict)
{
    cfdb_bytes v;
    if (cfdb_arena_dup_bytes(wm->arena, value, &v))
        return CFDB_ERR_UNKNOWN_ERROR;
    return mutate(wm, key, CFDB_MUT_SET_VALUE, v, add_conflict);
}

int cfdb_write_map_clear(cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end, bool add_conflict)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    wm->empty = false;
    wm->version++;
    cfdb_bytes b, e;
    if (cfdb_arena_dup_bytes(wm->arena, begin, &b) || cfdb_arena_dup_bytes(wm->arena, end, &e))
        return CFDB_ERR_UNKNOWN_ERROR;
    remove_entries(wm, b, e);
    if (cfdb_range_set_remove(&wm->unreadable, b, e) || cfdb_range_set_add(&wm->cleared, b, e))
        return CFDB_ERR_UNKNOWN_ERROR;
    if (add_conflict && cfdb_range_set_add(&wm->conflict, b, e))
        return CFDB_ERR_UNKNOWN_ERROR;
    return 0;
}

int cfdb_write_map_clear_key(cfdb_write_map *wm, cfdb_bytes key, bool add_conflict)
{
    cfdb_bytes ka;
    if (key_after(wm->arena, key, &ka))
        return CFDB_ERR_UNKNOWN_ERROR;
    return cfdb_write_map_clear(wm, key, ka, add_conflict);
}

int cfdb_write_map_add_write_conflict(cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    wm->empty = false;
    return cfdb_range_set_add(&wm->conflict, begin, end);
}

/* Emits the writes of [begin, end) as the native transaction would receive them
 * (ReadYourWritesTransaction::writeRangeToNativeTransaction). */
static int emit_range(cfdb_write_map *wm, cfdb_bytes begin, cfdb_bytes end, cfdb_wm_mutvec *muts,
                      cfdb_wm_rangevec *conflicts)
{
    cfdb_arena *a = wm->arena;
    /* 1. cleared ranges, split around written keys */
    for (cfdb_omap_node *c = cfdb_range_set_first_ending_after(&wm->cleared, begin);
         c && cfdb_bytes_cmp(c->key, end) < 0; c = cfdb_omap_next(c)) {
        cfdb_bytes cb = cfdb_bytes_cmp(c->key, begin) < 0 ? begin : c->key;
        cfdb_bytes ce = cfdb_bytes_cmp(c->val.bytes, end) > 0 ? end : c->val.bytes;
        cfdb_bytes pos = cb;
        for (cfdb_omap_node *n = cfdb_omap_find_ge(&wm->entries, cb); n && cfdb_bytes_cmp(n->key, ce) < 0;
             n = cfdb_omap_next(n)) {
            if (cfdb_bytes_cmp(pos, n->key) < 0) {
                cfdb_mutation m = { CFDB_MUT_CLEAR_RANGE, pos, n->key };
                if (mutvec_push(muts, m))
                    return CFDB_ERR_UNKNOWN_ERROR;
            }
            if (key_after(a, n->key, &pos))
                return CFDB_ERR_UNKNOWN_ERROR;
        }
        if (cfdb_bytes_cmp(pos, ce) < 0) {
            cfdb_mutation m = { CFDB_MUT_CLEAR_RANGE, pos, ce };
            if (mutvec_push(muts, m))
                return CFDB_ERR_UNKNOWN_ERROR;
        }
    }
    /* 2. write conflict ranges */
    for (cfdb_omap_node *c = cfdb_range_set_first_ending_after(&wm->conflict, begin);
         c && cfdb_bytes_cmp(c->key, end) < 0; c = cfdb_omap_next(c)) {
        cfdb_bytes cb = cfdb_bytes_cmp(c->key, begin) < 0 ? begin : c->key;
        cfdb_bytes ce = cfdb_bytes_cmp(c->val.bytes, end) > 0 ? end : c->val.bytes;
        if (rangevec_push(conflicts, cb, ce))
            return CFDB_ERR_UNKNOWN_ERROR;
    }
    /* 3. per-key operations */
    for (cfdb_omap_node *n = cfdb_omap_find_ge(&wm->entries, begin); n && cfdb_bytes_cmp(n->key, end) < 0;
         n = cfdb_omap_next(n)) {
        const cfdb_wm_entry *e = n->val.ptr;
        for (uint32_t i = 0; i < e->count; i++) {
            cfdb_wm_op op = e->ops[i];
            cfdb_mutation m;
            if (op.type == CFDB_MUT_SET_VALUE) {
                if (op.present) {
                    m = (cfdb_mutation){ CFDB_MUT_SET_VALUE, n->key, op.value };
                } else {
                    cfdb_bytes ka;
                    if (key_after(a, n->key, &ka))
                        return CFDB_ERR_UNKNOWN_ERROR;
                    m = (cfdb_mutation){ CFDB_MUT_CLEAR_RANGE, n->key, ka };
                }
            } else if (is_atomic(op.type)) {
                m = (cfdb_mutation){ op.type, n->key, op.value };
            } else {
                continue;
            }
            if (mutvec_push(muts, m))
                return CFDB_ERR_UNKNOWN_ERROR;
        }
    }
    return 0;
}

int cfdb_write_map_atomic(cfdb_write_map *wm, int type, cfdb_bytes key, cfdb_bytes operand, bool add_conflict,
                          int64_t read_version, cfdb_bytes max_read_key)
{
    if (!is_atomic(type))
        return CFDB_ERR_INVALID_MUTATION_TYPE;
    if (type == CFDB_MUT_MIN)
        type = CFDB_MUT_MIN_V2;
    else if (type == CFDB_MUT_AND)
        type = CFDB_MUT_AND_V2;
    cfdb_arena *a = wm->arena;
    cfdb_bytes k, v;
    if (cfdb_arena_dup_bytes(a, key, &k) || cfdb_arena_dup_bytes(a, operand, &v))
        return CFDB_ERR_UNKNOWN_ERROR;

    if (type == CFDB_MUT_SET_VERSIONSTAMPED_KEY) {
        if (k.len < 4)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        int32_t pos = (int32_t)((uint32_t)k.ptr[k.len - 4] | (uint32_t)k.ptr[k.len - 3] << 8 |
                                (uint32_t)k.ptr[k.len - 2] << 16 | (uint32_t)k.ptr[k.len - 1] << 24);
        if (pos < 0 || (int64_t)pos + 10 > (int64_t)k.len - 4)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        /* range of every key the stamp can produce */
        uint32_t blen = k.len - 4;
        uint8_t *rb = cfdb_arena_alloc(a, blen ? blen : 1);
        uint8_t *re = cfdb_arena_alloc(a, (size_t)blen + 1);
        if (!rb || !re)
            return CFDB_ERR_UNKNOWN_ERROR;
        memcpy(rb, k.ptr, blen);
        cfdb_place_versionstamp(rb + pos, read_version, 0);
        memcpy(re, k.ptr, blen);
        memset(re + pos, 0xff, 10);
        re[blen] = 0;
        cfdb_bytes rbeg = cfdb_bytes_make(rb, blen), rend = cfdb_bytes_make(re, (size_t)blen + 1);
        if (cfdb_bytes_cmp(rend, max_read_key) > 0)
            rend = max_read_key;
        if (cfdb_bytes_cmp(rbeg, rend) < 0) {
            wm->version++;
            if (emit_range(wm, rbeg, rend, &wm->early_mutations, &wm->early_conflicts))
                return CFDB_ERR_UNKNOWN_ERROR;
            remove_entries(wm, rbeg, rend);
            if (cfdb_range_set_remove(&wm->cleared, rbeg, rend) ||
                cfdb_range_set_remove(&wm->conflict, rbeg, rend) ||
                cfdb_range_set_add(&wm->unreadable, rbeg, rend))
                return CFDB_ERR_UNKNOWN_ERROR;
        }
        /* the key kept in the map carries the minimum stamp */
        uint8_t *kk = cfdb_arena_dup(a, k.ptr, k.len);
        if (!kk)
            return CFDB_ERR_UNKNOWN_ERROR;
        cfdb_place_versionstamp(kk + pos, read_version, 0);
        k = cfdb_bytes_make(kk, k.len);
        add_conflict = false;
    } else if (type == CFDB_MUT_SET_VERSIONSTAMPED_VALUE) {
        if (cfdb_versionstamp_param_check(v))
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    return mutate(wm, k, type, v, add_conflict);
}

/* ---- point reads --------------------------------------------------------------- */

cfdb_wm_lookup_kind cfdb_write_map_entry_kind(cfdb_write_map *wm, const cfdb_wm_entry *e, cfdb_bytes *value)
{
    if (e->unreadable)
        return CFDB_WM_UNREADABLE;
    if (stack_dependent(e))
        return CFDB_WM_DEPENDENT;
    cfdb_wm_op r;
    if (coalesce_under(wm->arena, e, NULL, &r))
        return CFDB_WM_DEPENDENT;
    if (!r.present)
        return CFDB_WM_ABSENT;
    if (value)
        *value = r.value;
    return CFDB_WM_VALUE;
}

cfdb_wm_lookup_kind cfdb_write_map_lookup(cfdb_write_map *wm, cfdb_bytes key, cfdb_bytes *value)
{
    cfdb_omap_node *n = cfdb_omap_find(&wm->entries, key);
    if (n)
        return cfdb_write_map_entry_kind(wm, n->val.ptr, value);
    if (cfdb_range_set_find(&wm->unreadable, key))
        return CFDB_WM_UNREADABLE;
    if (cfdb_range_set_find(&wm->cleared, key))
        return CFDB_WM_ABSENT;
    return CFDB_WM_UNMODIFIED;
}

int cfdb_write_map_apply(cfdb_write_map *wm, cfdb_bytes key, const cfdb_bytes *base, cfdb_bytes *out,
                         bool *out_present)
{
    cfdb_omap_node *n = cfdb_omap_find(&wm->entries, key);
    if (!n) {
        if (cfdb_range_set_find(&wm->unreadable, key))
            return CFDB_ERR_ACCESSED_UNREADABLE;
        if (cfdb_range_set_find(&wm->cleared, key)) {
            *out_present = false;
            *out = (cfdb_bytes){ NULL, 0 };
        } else {
            *out_present = base != NULL;
            *out = base ? *base : (cfdb_bytes){ NULL, 0 };
        }
        return 0;
    }
    return cfdb_write_map_apply_entry(wm, n->val.ptr, base, out, out_present);
}

int cfdb_write_map_apply_entry(cfdb_write_map *wm, const cfdb_wm_entry *e, const cfdb_bytes *base, cfdb_bytes *out,
                               bool *out_present)
{
    if (e->unreadable)
        return CFDB_ERR_ACCESSED_UNREADABLE;
    cfdb_wm_op r;
    int rc = coalesce_under(wm->arena, e, base, &r);
    if (rc)
        return rc;
    *out_present = r.present;
    *out = r.present ? r.value : (cfdb_bytes){ NULL, 0 };
    return 0;
}

/* ---- commit ------------------------------------------------------------------- */

int cfdb_write_map_commit_data(cfdb_write_map *wm, cfdb_arena *out_arena, cfdb_mutation **mutations,
                               size_t *n_mutations, cfdb_key_range **write_ranges, size_t *n_write_ranges)
{
    /* The arrays go straight into out_arena (the future's, recycled), sized by an upper
     * bound, so a commit allocates no heap memory: each cleared range gives at most one
     * piece per written key inside it plus one; each written key its operations, or one
     * ClearRange. Should the bound be short, the vectors move to the heap and back. */
    size_t nops = 0;
    for (cfdb_omap_node *n = cfdb_omap_first(&wm->entries); n; n = cfdb_omap_next(n))
        nops += ((const cfdb_wm_entry *)n->val.ptr)->count + 1;
    size_t mcap = wm->early_mutations.count + nops + wm->entries.count + cfdb_range_set_count(&wm->cleared) + 1;
    size_t ccap = wm->early_conflicts.count + cfdb_range_set_count(&wm->conflict) + 1;
    cfdb_mutation *mbuf = cfdb_arena_alloc(out_arena, mcap * sizeof *mbuf);
    cfdb_key_range *rbuf = cfdb_arena_alloc(out_arena, ccap * sizeof *rbuf);
    if (!mbuf || !rbuf)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_wm_mutvec muts = { mbuf, 0, mcap, true };
    cfdb_wm_rangevec confs = { rbuf, 0, ccap, true };
    int rc = CFDB_ERR_UNKNOWN_ERROR;
    for (size_t i = 0; i < wm->early_mutations.count; i++)
        if (mutvec_push(&muts, wm->early_mutations.items[i]))
            goto out;
    for (size_t i = 0; i < wm->early_conflicts.count; i++)
        if (rangevec_push(&confs, wm->early_conflicts.items[i].begin, wm->early_conflicts.items[i].end))
            goto out;
    static const uint8_t all_end[2] = { 0xff, 0xff };
    if (emit_range(wm, (cfdb_bytes){ NULL, 0 }, cfdb_bytes_make(all_end, 2), &muts, &confs))
        goto out;
    *mutations =
        muts.on_stack ? muts.items : cfdb_arena_dup(out_arena, muts.items, muts.count * sizeof(cfdb_mutation));
    *write_ranges =
        confs.on_stack ? confs.items : cfdb_arena_dup(out_arena, confs.items, confs.count * sizeof(cfdb_key_range));
    if (!*mutations || !*write_ranges)
        goto out;
    *n_mutations = muts.count;
    *n_write_ranges = confs.count;
    rc = 0;
out:
    if (!muts.on_stack)
        free(muts.items);
    if (!confs.on_stack)
        free(confs.items);
    return rc;
}
