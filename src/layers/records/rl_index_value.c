/* SPDX-License-Identifier: Apache-2.0 */
/* VALUE index maintenance, unique ones too (fdb-record-layer's StandardIndexMaintainer:
 * update, updateOneKeyAsync, checkUniqueness, addUniquenessViolation,
 * removeUniquenessViolationsAsync; FDBRecordStoreBase.indexEntryKey/uniquenessViolationKey).
 *
 * Layout, under the store prefix P:
 *   P + (2, subspace key, index key..., pk components not in the index key...)
 *        = pack(value columns) (empty unless key_with_value)
 *   P + (7, subspace key, index key..., pk...) = pack(other pk), or empty
 *        a uniqueness violation, kept while a unique index is write-only
 *
 * Update: entries both records have (same key and value) are left alone; the old record's
 * others are cleared, the new one's others set. A unique index checks every new entry whose
 * index key holds no null but those of fields with the UNIQUE null interpretation
 * (IndexEntry.keyContainsNonUniqueNull): the entries under P + (2, subspace key, index key...) (read with
 * the transaction, so saves earlier in it count) belonging to another primary key are a
 * violation: refused (2000, cfdb_rl_store_last_violation names the index) when the index is
 * readable, recorded both ways when it is write-only. A save checks its readable unique
 * indexes first (rl_value_check_unique), before it writes anything, so that a refused save
 * leaves the transaction as it was. Clearing an entry of a write-only
 * unique index removes its violation, and the last one of its key when only one is left.
 * Keys over 10,000 bytes: 2102; values over 100,000: 2103. */
#include <string.h>

#include "../dir_io.h"
#include "rl_internal.h"

static bool same_entry(const cfdb_rl_index_entry *x, const cfdb_rl_index_entry *y)
{
    return cfdb_tuple_equal(&x->key, &y->key) && cfdb_tuple_equal(&x->value, &y->value);
}

static bool in_list(const cfdb_rl_index_entry *e, const cfdb_rl_index_entry *list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (same_entry(e, &list[i]))
            return true;
    return false;
}

/* The first k columns of t. */
static int head(cfdb_arena *a, const cfdb_tuple *t, uint32_t k, cfdb_tuple *out)
{
    cfdb_tuple_init(out, a);
    int rc = 0;
    for (uint32_t i = 0; i < k && i < cfdb_tuple_count(t) && !rc; i++)
        rc = cfdb_tuple_add_elem(out, cfdb_tuple_get(t, i));
    return rc;
}

/* The null interpretation behind column col of k's keys: a field's own (FieldKeyExpression
 * .getNullResult gives NULL_UNIQUE or NULL), a nest's child's (the child is evaluated on the
 * missing message), a then's child holding it, a grouping's or key_with_value's whole key;
 * anything else NOT_UNIQUE. */
static uint8_t null_standin(const cfdb_kex *k, uint32_t col)
{
    switch (k->kind) {
    case CFDB_KEX_FIELD:
        return k->fan_type == CFDB_KEX_CONCATENATE ? CFDB_KEX_NULL_NOT_UNIQUE : k->null_interpretation;
    case CFDB_KEX_NEST:
        return null_standin(k->children[1], col);
    case CFDB_KEX_GROUPING: case CFDB_KEX_KEY_WITH_VALUE:
        return null_standin(k->children[0], col);
    case CFDB_KEX_THEN:
        for (uint32_t i = 0; i < k->child_count; i++) {
            uint32_t n = cfdb_kex_columns(k->children[i]);
            if (col < n)
                return null_standin(k->children[i], col);
            col -= n;
        }
        return CFDB_KEX_NULL_NOT_UNIQUE;
    default:
        return CFDB_KEX_NULL_NOT_UNIQUE;
    }
}

bool rl_key_has_non_unique_null(const cfdb_kex *root, const cfdb_tuple *key, uint32_t first_col)
{
    for (uint32_t i = 0; i < cfdb_tuple_count(key); i++)
        if (cfdb_tuple_get(key, i)->type == CFDB_TUPLE_NULL &&
            null_standin(root, first_col + i) != CFDB_KEX_NULL_UNIQUE)
            return true;
    return false;
}

/* The primary key of an entry (Index.getEntryPrimaryKey): the components the index key holds
 * taken from their positions, the others from after the index key. */
static int entry_pk(cfdb_arena *a, const cfdb_rl_index *ix, const cfdb_tuple *entry, uint32_t kcols,
                    uint32_t pk_len, cfdb_tuple *out)
{
    cfdb_tuple_init(out, a);
    uint32_t tail = kcols;
    int rc = 0;
    for (uint32_t c = 0; c < pk_len && !rc; c++) {
        uint32_t at;
        if (ix->pk_positions && c < ix->pk_position_count && ix->pk_positions[c] >= 0)
            at = (uint32_t)ix->pk_positions[c];
        else
            at = tail++;
        if (at >= cfdb_tuple_count(entry))
            return CFDB_ERR_SERIALIZATION_FAILED;
        rc = cfdb_tuple_add_elem(out, cfdb_tuple_get(entry, at));
    }
    return rc;
}

static int add_violation(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                         const cfdb_tuple *value_key, const cfdb_tuple *pk, const cfdb_tuple *other)
{
    cfdb_bytes space, key, val;
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = rl_space(s, a, RL_KS_UNIQUENESS_VIOLATIONS, &ix->subspace_key, &space);
    for (uint32_t i = 0; i < cfdb_tuple_count(value_key) && !rc; i++)
        rc = cfdb_tuple_add_elem(&t, cfdb_tuple_get(value_key, i));
    for (uint32_t i = 0; i < cfdb_tuple_count(pk) && !rc; i++)
        rc = cfdb_tuple_add_elem(&t, cfdb_tuple_get(pk, i));
    if (!rc)
        rc = cfdb_tuple_pack(a, space, &t, &key);
    if (!rc)
        rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, other, &val);
    if (!rc)
        dir_set(tr, key, val);
    return rc;
}

static int remove_violation(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a,
                            const cfdb_rl_index *ix, const cfdb_tuple *value_key, const cfdb_tuple *pk)
{
    cfdb_bytes space, vspace, key, end;
    int rc = rl_space(s, a, RL_KS_UNIQUENESS_VIOLATIONS, &ix->subspace_key, &space);
    if (!rc)
        rc = cfdb_tuple_pack(a, space, value_key, &vspace);
    if (!rc)
        rc = cfdb_tuple_pack(a, vspace, pk, &key);
    if (!rc)
        rc = dir_strinc(a, vspace, &end);
    if (rc)
        return rc;
    dir_clear(tr, key);
    /* the last one left of this key goes too */
    dir_kv *kvs;
    uint32_t n;
    if ((rc = dir_get_all(tr, a, vspace, end, &kvs, &n)))
        return rc;
    if (n == 1)
        dir_clear_range(tr, vspace, end);
    return 0;
}

static int check_unique(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                        cfdb_bytes space, const cfdb_tuple *value_key, const cfdb_tuple *pk)
{
    cfdb_bytes begin, end;
    int rc = cfdb_tuple_range(a, space, value_key, &begin, &end);
    dir_kv *kvs = NULL;
    uint32_t n = 0;
    if (!rc)
        rc = dir_get_all(tr, a, begin, end, &kvs, &n);
    bool write_only = s->states[rl_index_pos(s, ix)] == CFDB_RL_INDEX_WRITE_ONLY;
    for (uint32_t i = 0; i < n && !rc; i++) {
        cfdb_tuple entry, other;
        cfdb_bytes rest = cfdb_bytes_make(kvs[i].key.ptr + space.len, kvs[i].key.len - space.len);
        if (cfdb_tuple_unpack(a, rest, &entry))
            return CFDB_ERR_SERIALIZATION_FAILED;
        if ((rc = entry_pk(a, ix, &entry, cfdb_tuple_count(value_key), cfdb_tuple_count(pk), &other)))
            return rc;
        if (cfdb_tuple_equal(&other, pk))
            continue;
        if (!write_only) {
            s->violation = ix;
            return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* RecordIndexUniquenessViolation */
        }
        if (!(rc = add_violation(s, tr, a, ix, value_key, pk, &other)))
            rc = add_violation(s, tr, a, ix, value_key, &other, pk);
    }
    return rc;
}

/* The index's space and the old and new records' entries (none for a missing record). */
typedef struct entry_sets {
    cfdb_bytes space;
    cfdb_rl_index_entry *olds, *news;
    uint32_t no, nn;
} entry_sets;

static int entry_sets_of(cfdb_rl_store *s, cfdb_arena *a, const cfdb_rl_index *ix, const rl_side *old,
                         const rl_side *new_, entry_sets *e)
{
    memset(e, 0, sizeof *e);
    int rc = rl_index_space(s, a, ix, &e->space);
    if (!rc && old->rec)
        rc = rl_index_entries_v(a, ix, old, &e->olds, &e->no);
    if (!rc && new_->rec)
        rc = rl_index_entries_v(a, ix, new_, &e->news, &e->nn);
    return rc;
}

/* A new entry's uniqueness check (StandardIndexMaintainer.updateOneKeyAsync: unless its key
 * holds a non-unique null). */
static int check_entry(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                       cfdb_bytes space, const cfdb_rl_index_entry *e, const cfdb_tuple *pk)
{
    cfdb_tuple vk;
    int rc = head(a, &e->key, rl_index_key_columns(ix), &vk);
    if (!rc && !rl_key_has_non_unique_null(ix->root, &vk, 0))
        rc = check_unique(s, tr, a, ix, space, &vk, pk);
    return rc;
}

int rl_value_check_unique(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                          const rl_side *old, const rl_side *new_)
{
    if (!ix->unique || !new_->rec || s->states[rl_index_pos(s, ix)] != CFDB_RL_INDEX_READABLE)
        return 0;
    entry_sets e;
    int rc = entry_sets_of(s, a, ix, old, new_, &e);
    for (uint32_t j = 0; j < e.nn && !rc; j++)
        if (!in_list(&e.news[j], e.olds, e.no))
            rc = check_entry(s, tr, a, ix, e.space, &e.news[j], new_->pk);
    return rc;
}

int rl_value_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const rl_side *old, const rl_side *new_)
{
    entry_sets e;
    int rc = entry_sets_of(s, a, ix, old, new_, &e);
    cfdb_bytes space = e.space;
    cfdb_rl_index_entry *olds = e.olds, *news = e.news;
    uint32_t no = e.no, nn = e.nn;
    uint32_t kcols = rl_index_key_columns(ix);
    bool write_only = s->states[rl_index_pos(s, ix)] == CFDB_RL_INDEX_WRITE_ONLY;
    for (uint32_t k = 0; k < no && !rc; k++) {
        if (in_list(&olds[k], news, nn))
            continue;
        cfdb_bytes key;
        if ((rc = cfdb_tuple_pack(a, space, &olds[k].key, &key)))
            break;
        dir_clear(tr, key);
        if (ix->unique && write_only) {
            cfdb_tuple vk;
            if (!(rc = head(a, &olds[k].key, kcols, &vk)))
                rc = remove_violation(s, tr, a, ix, &vk, old->pk);
        }
    }
    for (uint32_t j = 0; j < nn && !rc; j++) {
        if (in_list(&news[j], olds, no))
            continue;
        cfdb_bytes key, value;
        if ((rc = cfdb_tuple_pack(a, space, &news[j].key, &key)) ||
            (rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, &news[j].value, &value)))
            break;
        if (key.len > CFDB_RL_MAX_KEY_SIZE)
            return CFDB_ERR_KEY_TOO_LARGE;
        if (value.len > CFDB_RL_MAX_VALUE_SIZE)
            return CFDB_ERR_VALUE_TOO_LARGE;
        if (ix->unique && (rc = check_entry(s, tr, a, ix, space, &news[j], new_->pk)))
            break;
        dir_set(tr, key, value);
    }
    return rc;
}
