/* A tenant transaction's commit, made absolute (NativeAPI.actor.cpp applyTenantPrefix,
 * FoundationDB 7.3.77): the transaction's keys are relative to its tenant; the commit proxy
 * checks that every key it receives starts with the tenant's prefix, so the client prefixes
 * them before sending:
 *   - every mutation's param1, unless it is the metadata version key;
 *   - ClearRange's param2 (the end of the range);
 *   - SetVersionstampedKey: the key's last 4 bytes are the little-endian offset of the
 *     versionstamp in the key; it grows by the prefix's size;
 *   - every read and write conflict range whose begin is not the metadata version key.
 * Everything new goes into the given arena (the commit's); the inputs are not changed (they
 * may point into the transaction's own memory). Sans-I/O. */
#include <stdbool.h>
#include <string.h>

#include "error_codes.h"
#include "mutation.h"
#include "tenant_commit.h"

#define METADATA_VERSION_KEY_LIT "\xff/metadataVersion"

static bool is_mv_key(cfdb_bytes k)
{
    return cfdb_bytes_eq(k, CFDB_BYTES_LIT(METADATA_VERSION_KEY_LIT));
}

static int with_prefix(const uint8_t prefix[CFDB_TENANT_PREFIX_SIZE], cfdb_bytes k, cfdb_arena *a, cfdb_bytes *out)
{
    uint8_t *p = cfdb_arena_alloc(a, k.len + CFDB_TENANT_PREFIX_SIZE);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(p, prefix, CFDB_TENANT_PREFIX_SIZE);
    if (k.len)
        memcpy(p + CFDB_TENANT_PREFIX_SIZE, k.ptr, k.len);
    *out = cfdb_bytes_make(p, k.len + CFDB_TENANT_PREFIX_SIZE);
    return 0;
}

static int prefix_ranges(const uint8_t prefix[CFDB_TENANT_PREFIX_SIZE], cfdb_key_range_vec *v, cfdb_arena *a)
{
    if (!v->count)
        return 0;
    cfdb_key_range *n = cfdb_arena_alloc(a, v->count * sizeof *n);
    if (!n)
        return CFDB_ERR_UNKNOWN_ERROR;
    for (uint32_t i = 0; i < v->count; i++) {
        n[i] = v->items[i];
        if (is_mv_key(n[i].begin))
            continue;
        if (with_prefix(prefix, v->items[i].begin, a, &n[i].begin) ||
            with_prefix(prefix, v->items[i].end, a, &n[i].end))
            return CFDB_ERR_UNKNOWN_ERROR;
    }
    v->items = n;
    return 0;
}

int cfdb_tenant_apply_prefix(cfdb_commit_transaction *t, int64_t id, cfdb_arena *a)
{
    uint8_t prefix[CFDB_TENANT_PREFIX_SIZE];
    cfdb_tenant_prefix(id, prefix);
    if (t->mutations.count) {
        cfdb_mutation *n = cfdb_arena_alloc(a, t->mutations.count * sizeof *n);
        if (!n)
            return CFDB_ERR_UNKNOWN_ERROR;
        for (uint32_t i = 0; i < t->mutations.count; i++) {
            const cfdb_mutation *m = &t->mutations.items[i];
            n[i] = *m;
            if (is_mv_key(m->param1))
                continue;
            if (with_prefix(prefix, m->param1, a, &n[i].param1))
                return CFDB_ERR_UNKNOWN_ERROR;
            if (m->type == CFDB_MUT_CLEAR_RANGE) {
                if (with_prefix(prefix, m->param2, a, &n[i].param2))
                    return CFDB_ERR_UNKNOWN_ERROR;
            } else if (m->type == CFDB_MUT_SET_VERSIONSTAMPED_KEY && n[i].param1.len >= 4) {
                /* the offset is the key's last 4 bytes, little-endian (checked when set) */
                uint8_t *k = (uint8_t *)n[i].param1.ptr;
                size_t at = n[i].param1.len - 4;
                uint32_t off = (uint32_t)k[at] | (uint32_t)k[at + 1] << 8 | (uint32_t)k[at + 2] << 16 |
                               (uint32_t)k[at + 3] << 24;
                off += CFDB_TENANT_PREFIX_SIZE;
                for (int b = 0; b < 4; b++)
                    k[at + b] = (uint8_t)(off >> (8 * b));
            }
        }
        t->mutations.items = n;
    }
    if (prefix_ranges(prefix, &t->read_conflict_ranges, a) || prefix_ranges(prefix, &t->write_conflict_ranges, a))
        return CFDB_ERR_UNKNOWN_ERROR;
    return 0;
}
