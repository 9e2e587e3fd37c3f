/* SPDX-License-Identifier: Apache-2.0 */
/* Metadata validation at load, as fdb-record-layer's MetaDataValidator with the index
 * validators of each index type (IndexValidator and the maintainer factories'
 * getIndexValidator); the rules and their Java methods are listed in docs/design/records.md
 * section 2. Metadata that breaks one would load and then lose or corrupt data (two
 * indexes writing one subspace, a primary key that evaluates to null for every record, an
 * aggregate index every save refuses), so it is refused with 1044 and a sentence naming the
 * type or index.
 *
 * Key expressions are checked against each record type they apply to as
 * KeyExpression.validate(descriptor) does: a field must exist in the message, be repeated
 * exactly when fanned out or concatenated, and not be a message unless it is a nest's
 * parent; a nest's parent must be a message field and the child is checked in it. */
#include <string.h>

#include "cfdb/records/metadata.h"
#include "rl_internal.h"

/* KeyExpression.validate: NULL when k fits d; *last is the last field checked (the value
 * field of an aggregate). */
static const char *kex_validate(const cfdb_kex *k, const cfdb_pb_message *d, bool allow_message,
                                const cfdb_pb_field **last)
{
    const cfdb_pb_field *f;
    const char *why = NULL;
    switch (k->kind) {
    case CFDB_KEX_FIELD:
        if (!(f = cfdb_pb_field_by_name(d, k->field_name)))
            return "key expression names a field the record type does not have";
        if (k->fan_type == CFDB_KEX_FAN_OUT || k->fan_type == CFDB_KEX_CONCATENATE) {
            if (!cfdb_pb_field_repeated(f))
                return "key expression fans out or concatenates a field that is not repeated";
        } else if (cfdb_pb_field_repeated(f)) {
            return "key expression reads a repeated field as a scalar";
        }
        if (!allow_message && (f->type == CFDB_PB_MESSAGE || f->type == CFDB_PB_GROUP))
            return "key expression reads a nested message as a scalar";
        *last = f;
        return NULL;
    case CFDB_KEX_NEST:
        if ((why = kex_validate(k->children[0], d, true, last)))
            return why;
        f = cfdb_pb_field_by_name(d, k->children[0]->field_name);
        if (f->type != CFDB_PB_MESSAGE && f->type != CFDB_PB_GROUP)
            return "key expression nests in a field that is not a message";
        return kex_validate(k->children[1], f->message, false, last);
    case CFDB_KEX_THEN: case CFDB_KEX_LIST:
    case CFDB_KEX_GROUPING: case CFDB_KEX_KEY_WITH_VALUE: case CFDB_KEX_DIMENSIONS:
        for (uint32_t i = 0; i < k->child_count && !why; i++)
            why = kex_validate(k->children[i], d, false, last);
        return why;
    default:   /* version, record type key, value, empty; split and function are refused
                * when evaluated */
        return NULL;
    }
}

/* KeyExpression.createsDuplicates: a fan-out anywhere. */
static bool kex_duplicates(const cfdb_kex *k)
{
    if (k->kind == CFDB_KEX_FIELD)
        return k->fan_type == CFDB_KEX_FAN_OUT;
    if (k->kind == CFDB_KEX_FUNCTION)
        return false;
    for (uint32_t i = 0; i < k->child_count; i++)
        if (kex_duplicates(k->children[i]))
            return true;
    return false;
}

/* KeyExpression.versionColumns. */
static uint32_t kex_versions(const cfdb_kex *k)
{
    if (k->kind == CFDB_KEX_VERSION)
        return 1;
    if (k->kind == CFDB_KEX_FUNCTION || k->kind == CFDB_KEX_FIELD)
        return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->child_count; i++)
        n += kex_versions(k->children[i]);
    return n;
}

/* ---- the index types' validators (named in the registry, rl_index.c) ---- */

/* ValueIndexMaintainerFactory: validateNotGrouping, validateNotVersion. */
const char *rl_validate_value(const cfdb_rl_metadata *md, const cfdb_rl_index *ix,
                              const cfdb_pb_field *last)
{
    (void)md, (void)last;
    if (ix->root->kind == CFDB_KEX_GROUPING)
        return "grouping not possible in index type";
    if (kex_versions(ix->root))
        return "version key not possible in index type";
    return NULL;
}

/* VersionIndexMaintainerFactory: validateNotGrouping, validateStoresRecordVersions,
 * validateVersionKey, validateNotUnique. */
const char *rl_validate_version(const cfdb_rl_metadata *md, const cfdb_rl_index *ix,
                                const cfdb_pb_field *last)
{
    (void)last;
    if (ix->root->kind == CFDB_KEX_GROUPING)
        return "grouping not possible in index type";
    if (!md->store_record_versions)
        return "index type requires metadata store record version";
    if (kex_versions(ix->root) != 1)
        return "there must be exactly 1 version entry in index";
    if (ix->unique)
        return "index type does not allow unique indexes";
    return NULL;
}

/* AtomicMutationIndexMaintainerFactory: a grouping root (validateGrouping) grouping no
 * column for count and count_updates, at least one for count_not_null and the tuple
 * aggregates, exactly one, an integer field, for sum and the long aggregates; no version
 * column (validateNotVersion). */
const char *rl_validate_atomic(const cfdb_rl_metadata *md, const cfdb_rl_index *ix,
                               const cfdb_pb_field *last)
{
    (void)md;
    const cfdb_rl_maintainer *m = ix->maintainer;
    if (ix->root->kind != CFDB_KEX_GROUPING)
        return "index type requires grouping";
    int32_t grouped = ix->root->n1;
    switch (m->param) {
    case RL_PARAM_COUNT: case RL_PARAM_COUNT_UPDATES:
        if (grouped != 0)
            return "index type does not support non-group fields; use COUNT_NOT_NULL";
        break;
    case RL_PARAM_COUNT_NOT_NULL: case RL_PARAM_TUPLE:
        if (grouped < 1)
            return "index type requires grouping at least 1 fields";
        break;
    default:   /* sum, max/min_ever_long */
        if (grouped < 1)
            return "index type requires grouping at least 1 fields";
        if (grouped != 1)
            return "index type only supports single field";
        if (!last)
            return "index type only supports integer field";
        switch (last->type) {
        case CFDB_PB_INT64: case CFDB_PB_UINT64: case CFDB_PB_INT32: case CFDB_PB_UINT32:
        case CFDB_PB_SINT32: case CFDB_PB_SINT64:
            break;
        default:
            return "index type only supports integer field";
        }
    }
    if (kex_versions(ix->root))
        return "version key not possible in index type";
    return NULL;
}

/* ---- MetaDataValidator ---- */

static const char *validate_type(const cfdb_rl_metadata *md, const cfdb_rl_record_type *t)
{
    const cfdb_pb_field *last = NULL;
    const char *why;
    /* validatePrimaryKeyForRecordType */
    if ((why = kex_validate(t->primary_key, t->descriptor, false, &last)))
        return why;
    if (kex_duplicates(t->primary_key))
        return "primary key can generate more than one entry";
    /* validateRecordType */
    for (const cfdb_rl_record_type *o = md->record_types; o < t; o++)
        if (o->record_type_key.type == t->record_type_key.type &&
            !cfdb_tuple_elem_compare(&o->record_type_key, &t->record_type_key))
            return "same record type key used by two record types";
    if (t->since_version > md->version)
        return "record type has a since version greater than the meta-data version";
    return NULL;
}

static const char *validate_index(const cfdb_rl_metadata *md, const cfdb_rl_index *ix)
{
    const char *why = NULL;
    /* IndexValidator.validate: validateIndexForRecordTypes (every type for a universal
     * index), then the type's own rules */
    uint32_t n = ix->record_type_count ? ix->record_type_count : md->record_type_count;
    for (uint32_t i = 0; i < n && !why; i++) {
        const cfdb_rl_record_type *t = ix->record_type_count ? ix->record_types[i]
                                                             : &md->record_types[i];
        const cfdb_pb_field *last = NULL;
        why = kex_validate(ix->root, t->descriptor, false, &last);
        if (!why && ix->maintainer && ix->maintainer->validate)
            why = ix->maintainer->validate(md, ix, last);
    }
    if (why)
        return why;
    if (ix->added_version > ix->last_modified_version)
        return "index has an added version greater than its last modified version";
    /* MetaDataValidator.validateIndex */
    for (const cfdb_rl_index *o = md->indexes; o < ix; o++)
        if (o->subspace_key.type == ix->subspace_key.type &&
            !cfdb_tuple_elem_compare(&o->subspace_key, &ix->subspace_key))
            return "same subspace key used by two indexes";
    if (ix->added_version > md->version)
        return "index has an added version greater than the meta-data version";
    if (ix->last_modified_version > md->version)
        return "index has a last modified version greater than the meta-data version";
    return NULL;
}

const char *rl_validate_metadata(const cfdb_rl_metadata *md, const char **name)
{
    const char *why;
    for (uint32_t i = 0; i < md->record_type_count; i++) {
        if ((why = validate_type(md, &md->record_types[i]))) {
            *name = md->record_types[i].name;
            return why;
        }
    }
    for (uint32_t i = 0; i < md->index_count; i++) {
        if ((why = validate_index(md, &md->indexes[i]))) {
            *name = md->indexes[i].name;
            return why;
        }
    }
    return NULL;
}
