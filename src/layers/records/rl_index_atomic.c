/* SPDX-License-Identifier: Apache-2.0 */
/* Aggregate indexes kept by atomic mutations (fdb-record-layer's AtomicMutationIndexMaintainer
 * .updateIndexKeys and AtomicMutation.Standard: getMutationParam, encodeUnsignedLong).
 *
 * The index root is a grouping expression (the metadata adds one when missing): of each key
 * it gives, the first columns - grouped_count columns are the group, the rest the grouped
 * value. One key per group: P + (2, subspace key, group...), updated by a mutation whose
 * parameter comes from the grouped value:
 *   count            ADD  +1 / -1 (little-endian int64)
 *   count_updates    ADD  +1 on every new entry, nothing on removal; entries the old and
 *                         new record share are not skipped (counts updates)
 *   count_not_null   ADD  +1 / -1, nothing when the grouped value holds a null not from a
 *                         field with the UNIQUE null interpretation
 *   sum              ADD  +v / -v of the grouped value's first column (an integer; null: none)
 *   max_ever_long    MAX  v (little-endian, so negatives are refused: 2000), none on removal
 *   min_ever_long    MIN  as max
 *   max_ever_tuple   BYTE_MAX  pack(grouped value), on removal too (Java's getMutationParam
 *                              gives the packed key whatever `remove`)
 *   min_ever_tuple   BYTE_MIN  as max
 * With the index option clearWhenZero (true, any case: Index.getBooleanOption), count,
 * count_not_null and sum follow each ADD with COMPARE_AND_CLEAR of 8 zero bytes, so a group
 * whose total comes back to 0 has no key (AtomicMutation.Standard *_CLEAR_WHEN_ZERO,
 * getCompareAndClearParam = FDBRecordStore.INT64_ZERO).
 * Entries both the old and the new record have are left alone (skipUpdateForUnchangedKeys),
 * except for count_updates. A root that is not a grouping expression is refused (2000; Java's
 * maintainer casts it to GroupingKeyExpression). Each type's mutation and parameter rule is
 * its entry in the registry of maintainers (rl_index.c). */
#include <string.h>
#include <strings.h>

#include "rl_internal.h"

static void le64(uint8_t out[8], int64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static int evaluate(cfdb_arena *a, const cfdb_rl_index *ix, const rl_side *r, cfdb_tuple **keys,
                    uint32_t *n)
{
    *n = 0;
    *keys = NULL;
    if (!r->rec)
        return 0;
    cfdb_kex_ctx ctx = { &r->type->record_type_key, r->version };
    return cfdb_kex_evaluate(a, ix->root, r->rec, &ctx, keys, n);
}

static bool in_list(const cfdb_tuple *t, const cfdb_tuple *list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (cfdb_tuple_equal(t, &list[i]))
            return true;
    return false;
}

/* One entry's mutation (or none). */
static int mutate(cfdb_arena *a, FDBTransaction *tr, const cfdb_rl_maintainer *t, const cfdb_kex *root,
                  cfdb_bytes space, uint32_t grouped, const cfdb_tuple *key, bool remove,
                  bool clear_when_zero)
{
    uint32_t cols = cfdb_tuple_count(key);
    if (grouped > cols)
        grouped = cols;
    uint32_t prefix = cols - grouped;
    cfdb_tuple group, value;
    cfdb_tuple_init(&group, a);
    cfdb_tuple_init(&value, a);
    int rc = 0;
    for (uint32_t i = 0; i < cols && !rc; i++)
        rc = cfdb_tuple_add_elem(i < prefix ? &group : &value, cfdb_tuple_get(key, i));
    if (rc)
        return rc;
    uint8_t buf[8];
    cfdb_bytes param = { buf, 8 };
    const cfdb_tuple_elem *first = cfdb_tuple_count(&value) ? cfdb_tuple_get(&value, 0) : NULL;
    switch (t->param) {
    case RL_PARAM_COUNT:
        le64(buf, remove ? -1 : 1);
        break;
    case RL_PARAM_COUNT_UPDATES:
        if (remove)
            return 0;
        le64(buf, 1);
        break;
    case RL_PARAM_COUNT_NOT_NULL:
        if (rl_key_has_non_unique_null(root, &value, prefix))   /* keyContainsNonUniqueNull */
            return 0;
        le64(buf, remove ? -1 : 1);
        break;
    case RL_PARAM_SUM:
        if (!first || first->type == CFDB_TUPLE_NULL)
            return 0;
        if (first->type != CFDB_TUPLE_INT)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        le64(buf, remove ? (int64_t)(0 - (uint64_t)first->v.i) : first->v.i);
        break;
    case RL_PARAM_LONG:
        if (remove || !first || first->type == CFDB_TUPLE_NULL)
            return 0;
        if (first->type != CFDB_TUPLE_INT || first->v.i < 0)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        le64(buf, first->v.i);
        break;
    case RL_PARAM_TUPLE: /* max/min_ever_tuple, added or removed alike */
        if ((rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, &value, &param)))
            return rc;
        break;
    default:
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    }
    cfdb_bytes k;
    if ((rc = cfdb_tuple_pack(a, space, &group, &k)))
        return rc;
    if (k.len > CFDB_RL_MAX_KEY_SIZE)
        return CFDB_ERR_KEY_TOO_LARGE;
    fdb_transaction_atomic_op(tr, k.ptr, (int)k.len, param.ptr, (int)param.len, t->op);
    if (clear_when_zero && t->op == FDB_MUTATION_TYPE_ADD && t->param != RL_PARAM_COUNT_UPDATES) {
        static const uint8_t zero[8] = { 0 };
        fdb_transaction_atomic_op(tr, k.ptr, (int)k.len, zero, 8, FDB_MUTATION_TYPE_COMPARE_AND_CLEAR);
    }
    return 0;
}

int rl_atomic_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                     const rl_side *old, const rl_side *new_)
{
    const cfdb_rl_maintainer *t = ix->maintainer;
    if (!t || !t->op)
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    /* Java's maintainer takes the root as a GroupingKeyExpression (a cast that fails
     * otherwise); the metadata adds one for count, sum, max_ever and min_ever only. */
    if (ix->root->kind != CFDB_KEX_GROUPING)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    uint32_t grouped = ix->root->n1 > 0 ? (uint32_t)ix->root->n1 : 0;
    cfdb_tuple *olds = NULL, *news = NULL;
    uint32_t no = 0, nn = 0;
    cfdb_bytes space;
    int rc = rl_index_space(s, a, ix, &space);
    if (!rc)
        rc = evaluate(a, ix, old, &olds, &no);
    if (!rc)
        rc = evaluate(a, ix, new_, &news, &nn);
    bool skip_common = t->param != RL_PARAM_COUNT_UPDATES;
    const char *cwz = cfdb_rl_index_option_value(ix, "clearWhenZero");
    bool clear_when_zero = cwz && !strcasecmp(cwz, "true");
    for (uint32_t i = 0; i < no && !rc; i++)
        if (!(skip_common && in_list(&olds[i], news, nn)))
            rc = mutate(a, tr, t, ix->root, space, grouped, &olds[i], true, clear_when_zero);
    for (uint32_t i = 0; i < nn && !rc; i++)
        if (!(skip_common && in_list(&news[i], olds, no)))
            rc = mutate(a, tr, t, ix->root, space, grouped, &news[i], false, clear_when_zero);
    return rc;
}
