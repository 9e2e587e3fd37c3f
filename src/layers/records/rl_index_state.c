/* SPDX-License-Identifier: Apache-2.0 */
/* Index states (fdb-record-layer's IndexState and FDBRecordStore.updateIndexState,
 * markIndexWriteOnly/markIndexDisabled/markIndexReadable, clearIndexData).
 *
 * Layout: P + (5, index name) = pack((code)) with WRITE_ONLY 1, DISABLED 2; no key means
 * READABLE (0). The states are read once when a store is opened, with one range read beside
 * the header's, as FDBRecordStore.loadIndexStatesAsync (the read conflicts with anyone
 * changing them; skipped when the metadata has no index), and kept in s->states.
 *
 * Transitions: to DISABLED clears the index's data (entries, including an ungrouped
 * aggregate's key, secondary space, built ranges, uniqueness violations); to WRITE_ONLY from
 * READABLE records the whole range as built when the range set is empty (so the index need
 * not be rebuilt); to READABLE requires the range set to cover everything (2000 otherwise,
 * Java's IndexNotBuiltException) and, for a unique index, no uniqueness violation (2000,
 * RecordIndexUniquenessViolation), then clears the built ranges. */
#include <string.h>

#include "../dir_io.h"
#include "rl_internal.h"

static int state_key(const cfdb_rl_store *s, cfdb_arena *a, const char *name, cfdb_bytes *out)
{
    cfdb_tuple_elem e = { .type = CFDB_TUPLE_STRING };
    e.v.bytes = cfdb_bytes_str(name);
    return rl_space(s, a, RL_KS_INDEX_STATE, &e, out);
}

int rl_states_load(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a)
{
    if (!s->md->index_count)
        return 0;   /* no index, no state to read */
    cfdb_bytes space, begin, end;
    cfdb_tuple empty;
    cfdb_tuple_init(&empty, a);
    int rc = rl_space(s, a, RL_KS_INDEX_STATE, NULL, &space);
    if (!rc)
        rc = cfdb_tuple_range(a, space, &empty, &begin, &end);
    dir_kv *kvs;
    uint32_t n = 0;
    if (!rc)
        rc = dir_get_all(tr, a, begin, end, &kvs, &n);
    for (uint32_t i = 0; i < n && !rc; i++) {
        cfdb_tuple k, v;
        cfdb_bytes name;
        int64_t code;
        cfdb_bytes rest = cfdb_bytes_make(kvs[i].key.ptr + space.len, kvs[i].key.len - space.len);
        if (cfdb_tuple_unpack(a, rest, &k) || cfdb_tuple_count(&k) != 1 ||
            cfdb_tuple_get_string(&k, 0, &name) || cfdb_tuple_unpack(a, kvs[i].value, &v) ||
            cfdb_tuple_count(&v) < 1 || cfdb_tuple_get_int(&v, 0, &code))
            return CFDB_ERR_SERIALIZATION_FAILED;
        for (uint32_t j = 0; j < s->md->index_count; j++) {
            const char *ixn = s->md->indexes[j].name;
            if (strlen(ixn) == name.len && !memcmp(ixn, name.ptr, name.len)) {
                /* READABLE_UNIQUE_PENDING (3) reads as readable, WRITE_ONLY_WITH_QUEUE (4)
                 * as write-only; others cfdb does not know are refused */
                if (code == 3)
                    code = CFDB_RL_INDEX_READABLE;
                else if (code == 4)
                    code = CFDB_RL_INDEX_WRITE_ONLY;
                if (code < 0 || code > CFDB_RL_INDEX_DISABLED)
                    return CFDB_ERR_SERIALIZATION_FAILED;
                s->states[j] = (uint8_t)code;
            }
        }
    }
    return rc;
}

int rl_state_write(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                   cfdb_rl_index_state st)
{
    cfdb_bytes key;
    int rc = state_key(s, a, ix->name, &key);
    if (rc)
        return rc;
    if (st == CFDB_RL_INDEX_READABLE) {
        dir_clear(tr, key);
    } else {
        cfdb_tuple v;
        cfdb_bytes packed;
        cfdb_tuple_init(&v, a);
        if ((rc = cfdb_tuple_add_int(&v, st)) ||
            (rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, &v, &packed)))
            return rc;
        dir_set(tr, key, packed);
    }
    s->states[rl_index_pos(s, ix)] = (uint8_t)st;
    /* FDBRecordStore.updateIndexState: the state is in the cached store state */
    rl_bump_metadata_version(s, tr);
    return 0;
}

/* Everything under P + (keyspace, subspace key): strictly below it (tuple range) or, with
 * with_key, the key itself too. */
static int clear_space(const cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, int64_t keyspace,
                       const cfdb_rl_index *ix, bool with_key)
{
    cfdb_bytes space, begin, end;
    cfdb_tuple empty;
    cfdb_tuple_init(&empty, a);
    int rc = rl_space(s, a, keyspace, &ix->subspace_key, &space);
    if (!rc && with_key) {
        begin = space;
        rc = dir_strinc(a, space, &end);
    } else if (!rc) {
        rc = cfdb_tuple_range(a, space, &empty, &begin, &end);
    }
    if (!rc)
        dir_clear_range(tr, begin, end);
    return rc;
}

/* P + (9, subspace key, key): one part of an index's build bookkeeping (IndexingSubspaces). */
static int build_key(const cfdb_rl_store *s, cfdb_arena *a, const cfdb_rl_index *ix, int64_t key,
                     cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = cfdb_tuple_add_int(&t, RL_KS_INDEX_BUILD);
    if (!rc)
        rc = cfdb_tuple_add_elem(&t, &ix->subspace_key);
    if (!rc)
        rc = cfdb_tuple_add_int(&t, key);
    return rc ? rc : cfdb_tuple_pack(a, s->prefix, &t, out);
}

int rl_index_clear_build_data(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                              const cfdb_rl_index *ix)
{
    /* [P + (9, sk, 1), end of P + (9, sk)): everything after the lock (key 0) */
    cfdb_bytes begin, space, end;
    int rc = build_key(s, a, ix, 1, &begin);
    if (!rc)
        rc = rl_space(s, a, RL_KS_INDEX_BUILD, &ix->subspace_key, &space);
    if (!rc)
        rc = dir_concat(a, space, CFDB_BYTES_LIT("\xff"), &end);
    if (!rc)
        dir_clear_range(tr, begin, end);
    return rc;
}

int rl_index_clear_data(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix)
{
    int rc = clear_space(s, tr, a, RL_KS_INDEX, ix, true);   /* ungrouped aggregates too */
    if (!rc)
        rc = clear_space(s, tr, a, RL_KS_SECONDARY, ix, false);
    if (!rc)
        rc = clear_space(s, tr, a, RL_KS_SLIDING_WINDOW, ix, false);
    if (!rc)
        rc = clear_space(s, tr, a, RL_KS_INDEX_RANGE, ix, false);
    if (!rc)
        rc = clear_space(s, tr, a, RL_KS_UNIQUENESS_VIOLATIONS, ix, false);
    if (!rc)
        rc = rl_index_clear_build_data(s, tr, a, ix);
    return rc;
}

cfdb_rl_index_state cfdb_rl_store_index_state(const cfdb_rl_store *s, const char *index_name)
{
    const cfdb_rl_index *ix = cfdb_rl_index_by_name(s->md, index_name);
    return ix ? (cfdb_rl_index_state)s->states[rl_index_pos(s, ix)] : CFDB_RL_INDEX_DISABLED;
}

static int mark(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                cfdb_rl_index_state st)
{
    cfdb_rl_index_state cur = (cfdb_rl_index_state)s->states[rl_index_pos(s, ix)];
    if (cur == st)
        return 0;
    cfdb_bytes ranges;
    int rc = rl_space(s, a, RL_KS_INDEX_RANGE, &ix->subspace_key, &ranges);
    if (rc)
        return rc;
    if (st == CFDB_RL_INDEX_DISABLED) {
        if ((rc = rl_index_clear_data(s, tr, a, ix)))
            return rc;
    } else if (st == CFDB_RL_INDEX_WRITE_ONLY) {
        if (cur == CFDB_RL_INDEX_READABLE) {
            bool missing, changed;
            cfdb_bytes b, e;
            if ((rc = rl_rangeset_first_missing(tr, a, ranges, &missing, &b, &e)))
                return rc;
            /* an empty set: the readable index was complete */
            cfdb_bytes all_b = CFDB_BYTES_LIT("\x00"), all_e = CFDB_BYTES_LIT("\xff");
            if (missing && cfdb_bytes_eq(b, all_b) && cfdb_bytes_eq(e, all_e) &&
                (rc = rl_rangeset_insert(tr, a, ranges, all_b, all_e, false, &changed)))
                return rc;
        }
    } else {
        bool missing;
        cfdb_bytes b, e;
        if ((rc = rl_rangeset_first_missing(tr, a, ranges, &missing, &b, &e)))
            return rc;
        if (missing)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* IndexNotBuiltException */
        if (ix->unique) {
            cfdb_bytes vs, vb, ve;
            cfdb_tuple empty;
            cfdb_tuple_init(&empty, a);
            dir_kv kv;
            bool found;
            if ((rc = rl_space(s, a, RL_KS_UNIQUENESS_VIOLATIONS, &ix->subspace_key, &vs)) ||
                (rc = cfdb_tuple_range(a, vs, &empty, &vb, &ve)) ||
                (rc = dir_get_first(tr, a, vb, ve, false, false, &found, &kv)))
                return rc;
            if (found) {
                s->violation = ix;
                return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* RecordIndexUniquenessViolation */
            }
        }
        /* FDBRecordStore.clearReadableIndexBuildData: the range set and every heartbeat */
        cfdb_bytes hb, hb_end;
        if ((rc = clear_space(s, tr, a, RL_KS_INDEX_RANGE, ix, false)) ||
            (rc = build_key(s, a, ix, 7, &hb)) || (rc = dir_strinc(a, hb, &hb_end)))
            return rc;
        dir_clear_range(tr, hb, hb_end);
    }
    return rl_state_write(s, tr, a, ix, st);
}

int cfdb_rl_store_mark_index(cfdb_rl_store *s, FDBTransaction *tr, const char *index_name,
                             cfdb_rl_index_state state)
{
    const cfdb_rl_index *ix = cfdb_rl_index_by_name(s->md, index_name);
    if (!ix || state > CFDB_RL_INDEX_DISABLED)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    cfdb_arena a;
    cfdb_arena_init(&a);
    int rc = mark(s, tr, &a, ix, state);
    cfdb_arena_free(&a);
    return rc;
}
