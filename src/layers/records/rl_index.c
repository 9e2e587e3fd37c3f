/* SPDX-License-Identifier: Apache-2.0 */
/* Index entries of a record (fdb-record-layer's StandardIndexMaintainer.evaluateIndex and
 * FDBRecordStoreBase.indexEntryKey) and the primary key components an index key already holds
 * (RecordMetaDataBuilder.buildPrimaryKeyComponentPositions, the expressions'
 * normalizeKeyForPositions).
 *
 * Positions: the index root and the primary key are each flattened into a list of one-column
 * expressions (then: its children's lists concatenated; nest: the child's list, each under the
 * same parent; grouping and key_with_value: their whole/inner key's; list of several children:
 * list(child) each; anything else: itself); each primary key component's position is the
 * first structurally equal index component, or -1; when none is found the index has no
 * positions. Java computes them for single-type indexes only, and so does cfdb.
 *
 * Entries: the root evaluated on the record (with the record type's key); for key_with_value
 * the first split_point columns are the key and the rest the value; the entry's key is that
 * key followed by the primary key components the index key does not already hold.
 *
 * Also the registry of index types: one table of maintainers (update, uniqueness, scans,
 * write-only rules, implied grouping), each type found by name once, when the metadata is
 * loaded (rl_index_value.c, rl_index_atomic.c, rl_index_version.c hold the updates). */
#include <string.h>

#include "cfdb/records/metadata.h"
#include "rl_internal.h"

bool rl_index_applies(const cfdb_rl_index *ix, const cfdb_rl_record_type *type)
{
    if (!type)
        return false;
    if (ix->record_type_count == 0)
        return true;   /* universal */
    for (uint32_t i = 0; i < ix->record_type_count; i++)
        if (ix->record_types[i] == type)
            return true;
    return false;
}

/* The index types cfdb knows, by name (Java's IndexTypes). rank, max_ever and min_ever
 * (the old names of the long aggregates) are known for their metadata rules but not
 * maintained. */
#define ATOMIC(name, mutation, p, idem, grouping)                                                 \
    { .type = name, .update = rl_atomic_update, .idempotent = idem,                               \
      .implied_grouping = grouping, .op = FDB_MUTATION_TYPE_##mutation, .param = p,          \
      .validate = rl_validate_atomic }

static const cfdb_rl_maintainer maintainers[] = {
    { .type = "value", .update = rl_value_update, .allows_unique = true, .value_scans = true,
      .validate = rl_validate_value },
    { .type = "version", .update = rl_version_update, .validate = rl_validate_version },
    ATOMIC("count", ADD, RL_PARAM_COUNT, false, -1),
    ATOMIC("count_updates", ADD, RL_PARAM_COUNT_UPDATES, false, 0),
    ATOMIC("count_not_null", ADD, RL_PARAM_COUNT_NOT_NULL, false, 0),
    ATOMIC("sum", ADD, RL_PARAM_SUM, false, 1),
    ATOMIC("max_ever_long", MAX, RL_PARAM_LONG, true, 0),
    ATOMIC("min_ever_long", MIN, RL_PARAM_LONG, true, 0),
    ATOMIC("max_ever_tuple", BYTE_MAX, RL_PARAM_TUPLE, true, 0),
    ATOMIC("min_ever_tuple", BYTE_MIN, RL_PARAM_TUPLE, true, 0),
    { .type = "rank", .allows_unique = true, .implied_grouping = 1, .option_ungrouped = true },
    { .type = "max_ever", .idempotent = true, .implied_grouping = 1 },
    { .type = "min_ever", .idempotent = true, .implied_grouping = 1 },
};

const cfdb_rl_maintainer *rl_maintainer_find(const char *type)
{
    for (size_t i = 0; type && i < sizeof maintainers / sizeof maintainers[0]; i++)
        if (!strcmp(maintainers[i].type, type))
            return &maintainers[i];
    return NULL;
}

bool rl_index_type_supported(const cfdb_rl_index *ix)
{
    const cfdb_rl_maintainer *m = ix->maintainer;
    return m && m->update && (m->allows_unique || !ix->unique);
}

bool rl_index_update_needs_built_range(const cfdb_rl_index *ix)
{
    return ix->maintainer && ix->maintainer->op && !ix->maintainer->idempotent;
}

bool rl_index_value_scans(const cfdb_rl_index *ix)
{
    return ix->maintainer && ix->maintainer->value_scans;
}

int rl_index_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const rl_side *old, const rl_side *new_)
{
    if (!rl_index_type_supported(ix))
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    return ix->maintainer->update(s, tr, a, ix, old, new_);
}

int rl_index_record(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                    const cfdb_tuple *pk, const cfdb_rl_record_type *type, const cfdb_pb_msg *rec,
                    const cfdb_rl_version *version)
{
    if (!rl_index_applies(ix, type))
        return 0;
    rl_side o = { 0 };
    rl_side n = { type, rec, pk, version && version->present ? version->bytes : NULL };
    return rl_index_update(s, tr, a, ix, &o, &n);
}

typedef struct kex_list {
    const cfdb_kex **items;
    uint32_t count, cap;
} kex_list;

static int push(cfdb_arena *a, kex_list *l, const cfdb_kex *k)
{
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        const cfdb_kex **n = cfdb_arena_alloc(a, cap * sizeof *n);
        if (!n)
            return CFDB_ERR_OUT_OF_MEMORY;
        if (l->count)
            memcpy(n, l->items, l->count * sizeof *n);
        l->items = n;
        l->cap = cap;
    }
    l->items[l->count++] = k;
    return 0;
}

static int normalize(cfdb_arena *a, const cfdb_kex *k, kex_list *out)
{
    int rc = 0;
    switch (k->kind) {
    case CFDB_KEX_THEN:
        for (uint32_t i = 0; i < k->child_count && !rc; i++)
            rc = normalize(a, k->children[i], out);
        return rc;
    case CFDB_KEX_NEST: {
        kex_list sub = { 0 };
        rc = normalize(a, k->children[1], &sub);
        for (uint32_t i = 0; i < sub.count && !rc; i++) {
            const cfdb_kex *n = cfdb_kex_nest(a, k->children[0], sub.items[i]);
            rc = n ? push(a, out, n) : CFDB_ERR_OUT_OF_MEMORY;
        }
        return rc;
    }
    case CFDB_KEX_GROUPING: case CFDB_KEX_KEY_WITH_VALUE:
        return normalize(a, k->children[0], out);
    case CFDB_KEX_LIST:
        if (k->child_count <= 1)
            return k->child_count ? push(a, out, k) : 0;
        for (uint32_t i = 0; i < k->child_count && !rc; i++) {
            const cfdb_kex *n = cfdb_kex_list(a, &k->children[i], 1);
            rc = n ? push(a, out, n) : CFDB_ERR_OUT_OF_MEMORY;
        }
        return rc;
    default:
        return push(a, out, k);
    }
}

/* Structural equality as Java's equals: FieldKeyExpression.equals compares the field name and
 * fan type only, not the null interpretation (its NullStandin), so field("id") and
 * field("id", NOT_NULL) are one component. */
static bool kex_equal(const cfdb_kex *x, const cfdb_kex *y)
{
    if (x == y)
        return true;
    if (x->kind != y->kind || x->fan_type != y->fan_type || x->n1 != y->n1 || x->n2 != y->n2 ||
        x->child_count != y->child_count)
        return false;
    if ((x->field_name || y->field_name) &&
        (!x->field_name || !y->field_name || strcmp(x->field_name, y->field_name)))
        return false;
    if (x->kind == CFDB_KEX_VALUE || x->kind == CFDB_KEX_FUNCTION) {
        if (x->value.type != y->value.type)
            return false;
        if (x->value.type != CFDB_TUPLE_NULL && cfdb_tuple_elem_compare(&x->value, &y->value))
            return false;
    }
    for (uint32_t i = 0; i < x->child_count; i++)
        if (!kex_equal(x->children[i], y->children[i]))
            return false;
    return true;
}

int cfdb_rl_pk_positions(cfdb_arena *a, const cfdb_kex *index_root, const cfdb_kex *primary_key,
                         const int32_t **positions, uint32_t *count)
{
    kex_list ix = { 0 }, pk = { 0 };
    int rc = normalize(a, index_root, &ix);
    if (!rc)
        rc = normalize(a, primary_key, &pk);
    if (rc)
        return rc;
    int32_t *pos = cfdb_arena_alloc(a, (pk.count + 1) * sizeof *pos);
    if (!pos)
        return CFDB_ERR_OUT_OF_MEMORY;
    bool any = false;
    for (uint32_t i = 0; i < pk.count; i++) {
        pos[i] = -1;
        for (uint32_t j = 0; j < ix.count; j++) {
            if (kex_equal(pk.items[i], ix.items[j])) {
                pos[i] = (int32_t)j;
                any = true;
                break;
            }
        }
    }
    *positions = any ? pos : NULL;
    *count = any ? pk.count : 0;
    return 0;
}

int cfdb_rl_index_entries(cfdb_arena *a, const cfdb_rl_index *ix, const cfdb_rl_record_type *type,
                          const cfdb_pb_msg *record, const cfdb_tuple *pk,
                          cfdb_rl_index_entry **out, uint32_t *count)
{
    rl_side r = { type, record, pk, NULL };
    return rl_index_entries_v(a, ix, &r, out, count);
}

uint32_t rl_index_key_columns(const cfdb_rl_index *ix)
{
    uint32_t cols = cfdb_kex_columns(ix->root);
    if (ix->root->kind == CFDB_KEX_KEY_WITH_VALUE && ix->root->n1 >= 0 && (uint32_t)ix->root->n1 < cols)
        return (uint32_t)ix->root->n1;
    return cols;
}

int rl_index_entries_v(cfdb_arena *a, const cfdb_rl_index *ix, const rl_side *r,
                       cfdb_rl_index_entry **out, uint32_t *count)
{
    const cfdb_rl_record_type *type = r->type;
    const cfdb_pb_msg *record = r->rec;
    const cfdb_tuple *pk = r->pk;
    cfdb_kex_ctx ctx = { &type->record_type_key, r->version };
    cfdb_tuple *keys;
    uint32_t n;
    int rc = cfdb_kex_evaluate(a, ix->root, record, &ctx, &keys, &n);
    if (rc)
        return rc;
    cfdb_rl_index_entry *e = cfdb_arena_zalloc(a, (n ? n : 1) * sizeof *e);
    if (!e)
        return CFDB_ERR_OUT_OF_MEMORY;
    uint32_t split = ix->root->kind == CFDB_KEX_KEY_WITH_VALUE && ix->root->n1 >= 0
                         ? (uint32_t)ix->root->n1 : UINT32_MAX;
    for (uint32_t i = 0; i < n && !rc; i++) {
        cfdb_tuple_init(&e[i].key, a);
        cfdb_tuple_init(&e[i].value, a);
        for (uint32_t c = 0; c < cfdb_tuple_count(&keys[i]) && !rc; c++)
            rc = cfdb_tuple_add_elem(c < split ? &e[i].key : &e[i].value, cfdb_tuple_get(&keys[i], c));
        for (uint32_t c = 0; c < cfdb_tuple_count(pk) && !rc; c++) {
            if (ix->pk_positions && c < ix->pk_position_count && ix->pk_positions[c] >= 0)
                continue;   /* already in the index key */
            rc = cfdb_tuple_add_elem(&e[i].key, cfdb_tuple_get(pk, c));
        }
    }
    if (rc)
        return rc;
    *out = e;
    *count = n;
    return 0;
}
