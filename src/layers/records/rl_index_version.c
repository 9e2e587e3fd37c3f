/* SPDX-License-Identifier: Apache-2.0 */
/* VERSION index maintenance (fdb-record-layer's VersionIndexMaintainer.updateOneKeyAsync).
 *
 * Entries as a VALUE index's: P + (2, subspace key, index key..., pk rest...) = pack(value),
 * where the root holds a version() column: the record's 12-byte FDBRecordVersion as a tuple
 * versionstamp (type 0x33: 10-byte commit version + 2-byte local version). A record saved in
 * this transaction has an incomplete version (10 x 0xff + its local version): its entry is
 * held by the store as a SET_VERSIONSTAMPED_KEY (the key packed with its versionstamp
 * offset) until cfdb_rl_store_prepare_commit, and removing it (a second save or a delete in
 * the same transaction) drops the held mutation; FoundationDB fills in the commit version,
 * so the index orders records by commit. Entries with a complete version are set and
 * cleared directly. Unique version indexes are refused (Java: MetaDataException). */
#include <string.h>

#include "../dir_io.h"
#include "rl_internal.h"

static bool in_list(const cfdb_rl_index_entry *e, const cfdb_rl_index_entry *list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (cfdb_tuple_equal(&e->key, &list[i].key) && cfdb_tuple_equal(&e->value, &list[i].value))
            return true;
    return false;
}

int rl_version_update(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, const cfdb_rl_index *ix,
                      const rl_side *old, const rl_side *new_)
{
    if (ix->unique)
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    cfdb_rl_index_entry *olds = NULL, *news = NULL;
    uint32_t no = 0, nn = 0;
    cfdb_bytes space;
    int rc = rl_index_space(s, a, ix, &space);
    if (!rc && old->rec)
        rc = rl_index_entries_v(a, ix, old, &olds, &no);
    if (!rc && new_->rec)
        rc = rl_index_entries_v(a, ix, new_, &news, &nn);
    for (uint32_t k = 0; k < no && !rc; k++) {
        if (in_list(&olds[k], news, nn))
            continue;
        cfdb_bytes key;
        if (cfdb_tuple_count_incomplete(&olds[k].key)) {
            if (!(rc = cfdb_tuple_pack_with_versionstamp(a, space, &olds[k].key, &key)))
                rl_pending_remove(s, key);
        } else if (!(rc = cfdb_tuple_pack(a, space, &olds[k].key, &key))) {
            dir_clear(tr, key);
        }
    }
    for (uint32_t j = 0; j < nn && !rc; j++) {
        if (in_list(&news[j], olds, no))
            continue;
        cfdb_bytes key, value;
        bool incomplete = cfdb_tuple_count_incomplete(&news[j].key) > 0;
        if (incomplete)
            rc = cfdb_tuple_pack_with_versionstamp(a, space, &news[j].key, &key);
        else
            rc = cfdb_tuple_pack(a, space, &news[j].key, &key);
        if (!rc)
            rc = cfdb_tuple_pack(a, (cfdb_bytes){ NULL, 0 }, &news[j].value, &value);
        if (rc)
            break;
        if (key.len > CFDB_RL_MAX_KEY_SIZE + (incomplete ? 4u : 0u))
            return CFDB_ERR_KEY_TOO_LARGE;
        if (value.len > CFDB_RL_MAX_VALUE_SIZE)
            return CFDB_ERR_VALUE_TOO_LARGE;
        if (incomplete)
            rc = rl_pending_add(s, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY, key, value);
        else
            dir_set(tr, key, value);
    }
    return rc;
}
