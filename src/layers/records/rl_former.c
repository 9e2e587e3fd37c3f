/* SPDX-License-Identifier: Apache-2.0 */
/* Former indexes: indexes removed from the metadata, kept as MetaData.former_indexes
 * (FormerIndex: former_name 3, subspace_key 5, removed_version 6, added_version 10;
 * metadata/FormerIndex.java, whose subspace key decodes as an index's: the single element
 * of the packed tuple). When a store's metadata version moves past a former index's
 * removed_version (and the index existed at the stored version: added_version <= stored <
 * removed_version, RecordMetaData.getFormerIndexesSince), its data is cleared in the open
 * transaction (FDBRecordStore.removeFormerIndex): the tuple ranges under P + (2, key),
 * (3, key), (10, key), (6, key) and (7, key) — like Java, not a key P + (2, key) itself, which
 * an ungrouped aggregate index writes — and its state P + (5, former name), set READABLE (no
 * key) through the state write that also sets the metadata version stamp of a cacheable
 * store (FDBRecordStore.updateIndexState). */
#include <string.h>

#include "../dir_io.h"
#include "rl_internal.h"

int rl_former_indexes_from_proto(cfdb_arena *a, const cfdb_pb_msg *p, cfdb_rl_metadata *md)
{
    uint32_t n = rl_count(p, "former_indexes");
    md->former_indexes = NULL;
    md->former_index_count = 0;
    if (!n)
        return 0;
    cfdb_rl_former_index *f = cfdb_arena_zalloc(a, n * sizeof *f);
    if (!f)
        return CFDB_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < n; i++) {
        const cfdb_pb_msg *fp = rl_at(p, "former_indexes", i)->m;
        cfdb_tuple t;
        if (cfdb_tuple_unpack(a, rl_bytes(fp, "subspace_key"), &t) || cfdb_tuple_count(&t) != 1 ||
            cfdb_tuple_get(&t, 0)->type == CFDB_TUPLE_NULL)
            return CFDB_ERR_SERIALIZATION_FAILED;   /* FormerIndex: a null subspace key */
        f[i].subspace_key = *cfdb_tuple_get(&t, 0);
        if (rl_has(fp, "former_name") && !(f[i].former_name = rl_strdup(a, rl_bytes(fp, "former_name"))))
            return CFDB_ERR_OUT_OF_MEMORY;
        f[i].added_version = (int32_t)rl_int(fp, "added_version");
        f[i].removed_version = (int32_t)rl_int(fp, "removed_version");
    }
    md->former_indexes = f;
    md->former_index_count = n;
    return 0;
}

static int clear_under(const cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, int64_t keyspace,
                       const cfdb_tuple_elem *key)
{
    cfdb_bytes space, b, e;
    cfdb_tuple empty;
    cfdb_tuple_init(&empty, a);
    int rc = rl_space(s, a, keyspace, key, &space);
    if (!rc)
        rc = cfdb_tuple_range(a, space, &empty, &b, &e);
    if (!rc)
        dir_clear_range(tr, b, e);
    return rc;
}

int rl_remove_former_indexes(cfdb_rl_store *s, FDBTransaction *tr, cfdb_arena *a, int32_t stored_md)
{
    static const int64_t spaces[] = { RL_KS_INDEX, RL_KS_SECONDARY, RL_KS_SLIDING_WINDOW,
                                      RL_KS_INDEX_RANGE, RL_KS_UNIQUENESS_VIOLATIONS };
    const cfdb_rl_metadata *md = s->md;
    int rc = 0;
    for (uint32_t i = 0; i < md->former_index_count && !rc; i++) {
        const cfdb_rl_former_index *f = &md->former_indexes[i];
        if (!(f->removed_version > stored_md && f->added_version <= stored_md))
            continue;
        for (size_t k = 0; k < sizeof spaces / sizeof spaces[0] && !rc; k++)
            rc = clear_under(s, tr, a, spaces[k], &f->subspace_key);
        if (!rc && f->former_name) {
            cfdb_tuple_elem name = { .type = CFDB_TUPLE_STRING };
            cfdb_bytes key;
            name.v.bytes = cfdb_bytes_str(f->former_name);
            if (!(rc = rl_space(s, a, RL_KS_INDEX_STATE, &name, &key))) {
                dir_clear(tr, key);
                rl_bump_metadata_version(s, tr);
            }
        }
    }
    return rc;
}
