/* SPDX-License-Identifier: Apache-2.0 */
/* Record Layer metadata from a MetaData protobuf or from a records .proto with the Record
 * Layer's options (rules in include/cfdb/records/metadata.h, after fdb-record-layer's
 * RecordMetaDataBuilder and Index).
 *
 * Building goes: descriptors into the metadata's own pool; the union message; one record
 * type per union message type (in union field order, keyed by the smallest union field
 * number unless explicit); then record type settings and indexes (from the MetaData lists,
 * or from field options); last, each type's single- and multi-type index lists. Everything
 * is allocated in the metadata's arena; arrays are sized up front from the counts in the
 * input, so nothing grows. */
#include <stdlib.h>
#include <string.h>

#include "cfdb/records/metadata.h"
#include "pb_internal.h"
#include "rl_internal.h"

typedef struct md_impl {
    cfdb_rl_metadata pub;
    cfdb_arena arena;
    cfdb_rl_record_type *types;     /* = pub.record_types, writable */
    cfdb_rl_index *indexes;         /* = pub.indexes, writable */
    uint32_t index_cap;
    cfdb_pb_error *err;
} md_impl;

static int md_fail(md_impl *m, const char *what, const char *name)
{
    pb_errorf(m->err, CFDB_ERR_SERIALIZATION_FAILED, 0, "record metadata: %s%s%s", what,
              name ? ": " : "", name ? name : "");
    return CFDB_ERR_SERIALIZATION_FAILED;
}

static int md_oom(md_impl *m)
{
    pb_errorf(m->err, CFDB_ERR_OUT_OF_MEMORY, 0, "record metadata: out of memory");
    return CFDB_ERR_OUT_OF_MEMORY;
}

void cfdb_rl_metadata_free(cfdb_rl_metadata *md)
{
    if (!md)
        return;
    md_impl *m = (md_impl *)md;
    cfdb_pb_pool_destroy(m->pub.pool);
    cfdb_arena_free(&m->arena);
    free(m);
}

/* A failed load's error record always carries its code: paths that fail before a message is
 * written (an allocation, a code passed up from a layer below) get a generic one. */
static int md_failed(cfdb_pb_error *err, int rc)
{
    if (err && !err->code)
        pb_errorf(err, rc, 0, "record metadata: %s",
                  rc == CFDB_ERR_OUT_OF_MEMORY ? "out of memory" : cfdb_error_message(rc));
    return rc;
}

static int md_new(cfdb_pb_error *err, md_impl **out)
{
    if (err)
        memset(err, 0, sizeof *err);
    md_impl *m = calloc(1, sizeof *m);
    if (!m)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_arena_init(&m->arena);
    m->err = err;
    if (!cfdb_rl_schema() || cfdb_pb_pool_create(&m->pub.pool)) {
        free(m);
        return CFDB_ERR_OUT_OF_MEMORY;
    }
    *out = m;
    return 0;
}

/* The Record Layer's extension (field 1233) inside raw options bytes: the `field` member of
 * a carrier message (FileOptionsExt.schema, MessageOptionsExt.record, FieldOptionsExt.field).
 * NULL when the options do not carry it. */
static int ext_option(md_impl *m, cfdb_bytes raw, const char *carrier, const char *field,
                      const cfdb_pb_msg **out)
{
    *out = NULL;
    if (!raw.len)
        return 0;
    const cfdb_pb_message *t = cfdb_rl_schema_msg(carrier);
    cfdb_pb_msg *msg;
    if (!t)
        return md_oom(m);
    int rc = cfdb_pb_decode(&m->arena, t, raw.ptr, raw.len, 0, &msg, m->err);
    if (rc)
        return rc;
    *out = rl_msg(msg, field);
    return 0;
}

enum { USAGE_UNSET = 0, USAGE_RECORD = 1, USAGE_UNION = 2, USAGE_NESTED = 3 };

static int usage_of(md_impl *m, const cfdb_pb_message *d, int64_t *usage, const cfdb_pb_msg **opts)
{
    int rc = ext_option(m, d->options, RL_PKG "MessageOptionsExt", "record", opts);
    *usage = *opts && rl_has(*opts, "usage") ? rl_int(*opts, "usage") : -1;
    return rc;
}

static int find_union(md_impl *m)
{
    const cfdb_pb_file *file = m->pub.records_file;
    const cfdb_pb_message *u = NULL;
    for (uint32_t i = 0; i < file->message_count; i++) {
        const cfdb_pb_message *d = file->messages[i];
        int64_t usage;
        const cfdb_pb_msg *opts;
        int rc = usage_of(m, d, &usage, &opts);
        if (rc)
            return rc;
        bool named = strcmp(d->name, "RecordTypeUnion") == 0;
        if (usage == USAGE_NESTED && named)
            return md_fail(m, "RecordTypeUnion cannot have NESTED usage", NULL);
        if (usage == USAGE_UNION || (named && usage != USAGE_NESTED)) {
            if (u)
                return md_fail(m, "only one union descriptor is allowed", d->name);
            u = d;
        }
    }
    if (!u)
        return md_fail(m, "union descriptor is required", NULL);
    m->pub.union_descriptor = u;
    return 0;
}

/* A union field named "_" + its message's name. */
static bool is_canonical(const cfdb_pb_field *f)
{
    return f->name[0] == '_' && strcmp(f->name + 1, f->message->name) == 0;
}

/* One record type per distinct message type of the union's fields. */
static int build_record_types(md_impl *m, bool from_options)
{
    const cfdb_pb_message *u = m->pub.union_descriptor;
    m->types = cfdb_arena_zalloc(&m->arena, (u->field_count + 1) * sizeof *m->types);
    if (!m->types)
        return md_oom(m);
    uint32_t n = 0;
    for (uint32_t i = 0; i < u->field_count; i++) {
        const cfdb_pb_field *f = &u->fields[i];   /* by increasing number */
        if (f->type != CFDB_PB_MESSAGE)
            return md_fail(m, "union field is not a message", f->name);
        if (cfdb_pb_field_repeated(f))
            return md_fail(m, "union field should not be repeated", f->name);
        if (strcmp(f->message->name, "RecordTypeUnion") == 0)
            return md_fail(m, "the union message cannot be a union field", f->name);
        int64_t usage;
        const cfdb_pb_msg *opts;
        int rc = usage_of(m, f->message, &usage, &opts);
        if (rc)
            return rc;
        if (usage >= 0 && usage != USAGE_RECORD && usage != USAGE_UNSET)
            return md_fail(m, "union field type is not a record", f->name);
        uint32_t k = 0;
        while (k < n && m->types[k].descriptor != f->message)
            k++;
        if (k < n) {
            /* The smallest field number is the type's key (RecordType.getRecordTypeKey); a
             * record is written under the field named "_" + type name, else the largest
             * number (RecordMetaDataBuilder.remapUnionField). */
            const cfdb_pb_field *cur = m->types[k].union_field;
            if (!is_canonical(cur) && (is_canonical(f) || f->number > cur->number))
                m->types[k].union_field = f;
            continue;
        }
        for (uint32_t j = 0; j < n; j++)
            if (strcmp(m->types[j].name, f->message->name) == 0)
                return md_fail(m, "there is already a record type named", f->message->name);
        cfdb_rl_record_type *t = &m->types[n++];
        t->name = f->message->name;
        t->descriptor = f->message;
        t->union_field = f;
        t->record_type_key.type = CFDB_TUPLE_INT;
        t->record_type_key.v.i = f->number;
        if (from_options && opts) {
            if (rl_has(opts, "since_version"))
                t->since_version = (int32_t)rl_int(opts, "since_version");
            const cfdb_pb_msg *key = rl_msg(opts, "record_type_key");
            if (key && (rc = rl_value_elem(&m->arena, key, &t->record_type_key)))
                return rc;
        }
    }
    m->pub.record_types = m->types;
    m->pub.record_type_count = n;
    return 0;
}

static cfdb_rl_record_type *type_named(md_impl *m, cfdb_bytes name)
{
    for (uint32_t i = 0; i < m->pub.record_type_count; i++)
        if (cfdb_bytes_eq(cfdb_bytes_str(m->types[i].name), name))
            return &m->types[i];
    return NULL;
}

/* Adds an index: name unique; versions as RecordMetaDataBuilder.addIndexCommon. */
static int add_index(md_impl *m, cfdb_rl_index *ix)
{
    for (uint32_t i = 0; i < m->pub.index_count; i++)
        if (strcmp(m->indexes[i].name, ix->name) == 0)
            return md_fail(m, "index already defined", ix->name);
    if (m->pub.index_count >= m->index_cap)
        return md_oom(m);
    if (ix->last_modified_version <= 0)
        ix->last_modified_version = ++m->pub.version;
    else if (ix->last_modified_version > m->pub.version)
        m->pub.version = ix->last_modified_version;
    if (ix->added_version <= 0)
        ix->added_version = ix->last_modified_version;
    for (uint32_t i = 0; i < ix->option_count; i++)
        if (!strcmp(ix->options[i].key, "unique") && !strcmp(ix->options[i].value, "true"))
            ix->unique = true;
    ix->maintainer = rl_maintainer_find(ix->type);
    m->indexes[m->pub.index_count++] = *ix;
    return 0;
}

static int index_from_proto(md_impl *m, const cfdb_pb_msg *p)
{
    cfdb_arena *a = &m->arena;
    cfdb_rl_index ix;
    memset(&ix, 0, sizeof ix);
    if (!(ix.name = rl_strdup(a, rl_bytes(p, "name"))))
        return md_oom(m);
    if (!ix.name[0])
        return md_fail(m, "index without a name", NULL);
    uint32_t no = rl_count(p, "options");
    cfdb_rl_index_option *opts = cfdb_arena_zalloc(a, (no + 1) * sizeof *opts);
    if (!opts)
        return md_oom(m);
    if (rl_has(p, "index_type")) {   /* old metadata: the enum gives type and uniqueness */
        int64_t t = rl_int(p, "index_type");
        ix.type = (t == 3 || t == 4) ? "rank" : "value";
        if (t == 2 || t == 4) {
            opts[0] = (cfdb_rl_index_option){ "unique", "true" };
            ix.option_count = 1;
        }
    } else {
        ix.type = rl_has(p, "type") ? rl_strdup(a, rl_bytes(p, "type")) : "value";
        for (uint32_t i = 0; i < no; i++) {
            const cfdb_pb_msg *o = rl_at(p, "options", i)->m;
            opts[i].key = rl_strdup(a, rl_bytes(o, "key"));
            opts[i].value = rl_strdup(a, rl_bytes(o, "value"));
            if (!opts[i].key || !opts[i].value)
                return md_oom(m);
        }
        ix.option_count = no;
    }
    if (!ix.type)
        return md_oom(m);
    ix.options = opts;
    int rc = cfdb_kex_from_msg(a, rl_msg(p, "root_expression"), &ix.root);
    if (rc)
        return md_fail(m, "bad root expression of index", ix.name);
    const cfdb_rl_maintainer *mt = rl_maintainer_find(ix.type);
    if (ix.root->kind != CFDB_KEX_GROUPING && mt && mt->implied_grouping) {
        uint32_t cols = cfdb_kex_columns(ix.root);
        ix.root = cfdb_kex_grouping(a, ix.root, mt->implied_grouping < 0 ? (int32_t)cols : 1);
        if (!ix.root)
            return md_oom(m);
    }
    if (rl_has(p, "value_expression")) {
        const cfdb_kex *value;
        if (cfdb_kex_from_msg(a, rl_msg(p, "value_expression"), &value))
            return md_fail(m, "bad value expression of index", ix.name);
        if (cfdb_kex_columns(value)) {
            const cfdb_kex *both[2] = { ix.root, value };
            cfdb_kex *kv = cfdb_arena_zalloc(a, sizeof *kv);
            const cfdb_kex **child = cfdb_arena_alloc(a, sizeof *child);
            if (!kv || !child || !(*child = cfdb_kex_then(a, both, 2)))
                return md_oom(m);
            kv->kind = CFDB_KEX_KEY_WITH_VALUE;
            kv->value.type = CFDB_TUPLE_NULL;
            kv->children = child;
            kv->child_count = 1;
            kv->n1 = (int32_t)cfdb_kex_columns(ix.root);
            ix.root = kv;
        }
    }
    if (rl_has(p, "subspace_key")) {
        cfdb_tuple t;
        if (cfdb_tuple_unpack(a, rl_bytes(p, "subspace_key"), &t) || cfdb_tuple_count(&t) != 1)
            return md_fail(m, "subspace key must encode a single item tuple", ix.name);
        ix.subspace_key = *cfdb_tuple_get(&t, 0);
        if (ix.subspace_key.type == CFDB_TUPLE_NULL)
            return md_fail(m, "index subspace key cannot be null", ix.name);
    } else {
        ix.subspace_key.type = CFDB_TUPLE_STRING;
        ix.subspace_key.v.bytes = cfdb_bytes_str(ix.name);
    }
    ix.added_version = rl_has(p, "added_version") ? (int32_t)rl_int(p, "added_version") : 1;
    ix.last_modified_version = (int32_t)rl_int(p, "last_modified_version");
    uint32_t nt = rl_count(p, "record_type");
    const cfdb_rl_record_type **types = cfdb_arena_zalloc(a, (nt + 1) * sizeof *types);
    if (!types)
        return md_oom(m);
    for (uint32_t i = 0; i < nt; i++) {
        cfdb_bytes tn = rl_at(p, "record_type", i)->s;
        if (!(types[i] = type_named(m, tn)))
            return md_fail(m, "index on an unknown record type", ix.name);
    }
    ix.record_types = types;
    ix.record_type_count = nt;
    return add_index(m, &ix);
}

/* Each type's lists of single-type and multi-type indexes. */
static int link_indexes(md_impl *m)
{
    for (uint32_t t = 0; t < m->pub.record_type_count; t++) {
        cfdb_rl_record_type *rt = &m->types[t];
        const cfdb_rl_index **one = cfdb_arena_zalloc(&m->arena, (m->pub.index_count + 1) * sizeof *one);
        const cfdb_rl_index **multi = cfdb_arena_zalloc(&m->arena, (m->pub.index_count + 1) * sizeof *multi);
        if (!one || !multi)
            return md_oom(m);
        for (uint32_t i = 0; i < m->pub.index_count; i++) {
            const cfdb_rl_index *ix = &m->indexes[i];
            for (uint32_t k = 0; k < ix->record_type_count; k++) {
                if (ix->record_types[k] != rt)
                    continue;
                if (ix->record_type_count == 1)
                    one[rt->index_count++] = ix;
                else
                    multi[rt->multi_type_index_count++] = ix;
            }
        }
        rt->indexes = one;
        rt->multi_type_indexes = multi;
    }
    for (uint32_t t = 0; t < m->pub.record_type_count; t++)
        if (!m->types[t].primary_key)
            return md_fail(m, "record type must have a primary key", m->types[t].name);
    /* Primary key components already in single-type index keys (RecordMetaDataBuilder.build). */
    for (uint32_t i = 0; i < m->pub.index_count; i++) {
        cfdb_rl_index *ix = &m->indexes[i];
        if (ix->record_type_count == 1 &&
            cfdb_rl_pk_positions(&m->arena, ix->root, ix->record_types[0]->primary_key,
                                 &ix->pk_positions, &ix->pk_position_count))
            return md_oom(m);
    }
    m->pub.indexes = m->indexes;
    /* MetaDataValidator.validate (rl_validate.c) */
    const char *name = NULL, *why = rl_validate_metadata(&m->pub, &name);
    return why ? md_fail(m, why, name) : 0;
}

static int file_name_of(md_impl *m, cfdb_bytes file, char **name)
{
    cfdb_pb_msg *fm;
    int rc = cfdb_pb_decode(&m->arena, &cfdb_pb_boot_file, file.ptr, file.len, 0, &fm, m->err);
    if (rc)
        return rc;
    *name = rl_strdup(&m->arena, cfdb_pb_get_or_default(fm, &cfdb_pb_boot_file.fields[0]).s);
    return *name ? 0 : md_oom(m);
}

static int from_proto(md_impl *m, const uint8_t *data, size_t len)
{
    cfdb_arena *a = &m->arena;
    const cfdb_pb_message *t = cfdb_rl_schema_msg(RL_PKG "MetaData");
    cfdb_pb_msg *p;
    int rc = cfdb_pb_decode(a, t, data, len, CFDB_PB_COPY_INPUT, &p, m->err);
    if (rc)
        return rc;
    if (!rl_has(p, "records"))
        return md_fail(m, "no records descriptor", NULL);
    uint32_t nd = rl_count(p, "dependencies");
    cfdb_bytes *files = cfdb_arena_zalloc(a, (nd + 1) * sizeof *files);
    if (!files)
        return md_oom(m);
    for (uint32_t i = 0; i < nd; i++)
        files[i] = rl_at(p, "dependencies", i)->s;
    files[nd] = rl_bytes(p, "records");
    char *records_name;
    if ((rc = file_name_of(m, files[nd], &records_name)) ||
        (rc = cfdb_pb_pool_add_files(m->pub.pool, files, nd + 1, m->err)))
        return rc;
    m->pub.records_file = cfdb_pb_pool_file(m->pub.pool, records_name);
    if ((rc = find_union(m)) || (rc = build_record_types(m, false)))
        return rc;

    uint32_t ni = rl_count(p, "indexes");
    m->index_cap = ni;
    m->indexes = cfdb_arena_zalloc(a, (ni + 1) * sizeof *m->indexes);
    if (!m->indexes)
        return md_oom(m);
    for (uint32_t i = 0; i < ni; i++)
        if ((rc = index_from_proto(m, rl_at(p, "indexes", i)->m)))
            return rc;
    for (uint32_t i = 0; i < rl_count(p, "record_types"); i++) {
        const cfdb_pb_msg *rp = rl_at(p, "record_types", i)->m;
        cfdb_rl_record_type *rt = type_named(m, rl_bytes(rp, "name"));
        if (!rt)
            return md_fail(m, "unknown record type in record_types", NULL);
        if (rl_has(rp, "primary_key") &&
            cfdb_kex_from_msg(a, rl_msg(rp, "primary_key"), &rt->primary_key))
            return md_fail(m, "bad primary key of record type", rt->name);
        if (rl_has(rp, "since_version"))
            rt->since_version = (int32_t)rl_int(rp, "since_version");
        if (rl_has(rp, "explicit_key") &&
            (rc = rl_value_elem(a, rl_msg(rp, "explicit_key"), &rt->record_type_key)))
            return md_fail(m, "bad explicit key of record type", rt->name);
    }
    m->pub.split_long_records = rl_bool(p, "split_long_records");
    m->pub.store_record_versions = rl_bool(p, "store_record_versions");
    if (rl_has(p, "record_count_key") &&
        cfdb_kex_from_msg(a, rl_msg(p, "record_count_key"), &m->pub.record_count_key))
        return md_fail(m, "bad record count key", NULL);
    if (rl_has(p, "version"))
        m->pub.version = (int32_t)rl_int(p, "version");
    if ((rc = rl_former_indexes_from_proto(a, p, &m->pub)))
        return rc == CFDB_ERR_OUT_OF_MEMORY ? md_oom(m) : md_fail(m, "bad former index subspace key", NULL);
    return link_indexes(m);
}

int cfdb_rl_metadata_from_proto(const uint8_t *data, size_t len, cfdb_rl_metadata **out,
                                cfdb_pb_error *err)
{
    md_impl *m;
    int rc = md_new(err, &m);
    if (rc) {
        *out = NULL;
        return md_failed(err, rc);
    }
    rc = from_proto(m, data, len);
    if (rc) {
        cfdb_rl_metadata_free(&m->pub);
        *out = NULL;
        return md_failed(err, rc);
    }
    *out = &m->pub;
    return 0;
}

/* ---- from a records file and its options ---- */

static int field_options(md_impl *m, cfdb_rl_record_type *rt)
{
    const cfdb_pb_message *d = rt->descriptor;
    for (uint32_t i = 0; i < d->field_count; i++) {
        const cfdb_pb_field *f = &d->fields[i];
        const cfdb_pb_msg *fo;
        int rc = ext_option(m, f->options, RL_PKG "FieldOptionsExt", "field", &fo);
        if (rc)
            return rc;
        if (!fo)
            continue;
        int fan = cfdb_pb_field_repeated(f) ? CFDB_KEX_FAN_OUT : CFDB_KEX_SCALAR;
        if (rl_has(fo, "index") || rl_has(fo, "indexed")) {
            cfdb_rl_index ix;
            memset(&ix, 0, sizeof ix);
            size_t nl = strlen(d->name) + 1 + strlen(f->name) + 1;
            char *name = cfdb_arena_alloc(&m->arena, nl);
            cfdb_rl_index_option *opts = NULL;
            uint32_t no = 0;
            if (!name)
                return md_oom(m);
            snprintf(name, nl, "%s$%s", d->name, f->name);
            ix.name = name;
            const cfdb_pb_msg *io = rl_msg(fo, "index");
            if (io) {
                ix.type = rl_strdup(&m->arena, rl_bytes(io, "type"));
                uint32_t n = rl_count(io, "options");
                bool unique = rl_bool(io, "unique");
                opts = cfdb_arena_zalloc(&m->arena, (n + 2) * sizeof *opts);
                if (!opts || !ix.type)
                    return md_oom(m);
                if (unique)
                    opts[no++] = (cfdb_rl_index_option){ "unique", "true" };
                for (uint32_t k = 0; k < n; k++, no++) {
                    const cfdb_pb_msg *o = rl_at(io, "options", k)->m;
                    opts[no].key = rl_strdup(&m->arena, rl_bytes(o, "key"));
                    opts[no].value = rl_strdup(&m->arena, rl_bytes(o, "value"));
                    if (!opts[no].key || !opts[no].value)
                        return md_oom(m);
                }
            } else {
                int64_t t = rl_int(fo, "indexed");
                ix.type = (t == 3 || t == 4) ? "rank" : "value";
                opts = cfdb_arena_zalloc(&m->arena, sizeof *opts);
                if (!opts)
                    return md_oom(m);
                if (t == 2 || t == 4)
                    opts[no++] = (cfdb_rl_index_option){ "unique", "true" };
            }
            ix.options = opts;
            ix.option_count = no;
            ix.root = cfdb_kex_field(&m->arena, f->name, fan);
            const cfdb_rl_maintainer *mt = rl_maintainer_find(ix.type);
            if (ix.root && mt && mt->option_ungrouped)
                ix.root = cfdb_kex_grouping(&m->arena, ix.root, 1);   /* ungrouped() */
            const cfdb_rl_record_type **types = cfdb_arena_alloc(&m->arena, sizeof *types);
            if (!ix.root || !types)
                return md_oom(m);
            types[0] = rt;
            ix.record_types = types;
            ix.record_type_count = 1;
            ix.subspace_key.type = CFDB_TUPLE_STRING;
            ix.subspace_key.v.bytes = cfdb_bytes_str(ix.name);
            if ((rc = add_index(m, &ix)))
                return rc;
        } else if (rl_bool(fo, "primary_key")) {
            if (rt->primary_key)
                return md_fail(m, "only one primary key per record type is allowed", rt->name);
            if (cfdb_pb_field_repeated(f))
                return md_fail(m, "primary key cannot be set on a repeated field", f->name);
            if (!(rt->primary_key = cfdb_kex_field(&m->arena, f->name, CFDB_KEX_SCALAR)))
                return md_oom(m);
        }
    }
    return 0;
}

static int from_file(md_impl *m, const uint8_t *set, size_t len, const char *file_name)
{
    int rc = cfdb_pb_pool_add_set(m->pub.pool, set, len, m->err);
    if (rc)
        return rc;
    m->pub.records_file = cfdb_pb_pool_file(m->pub.pool, file_name);
    if (!m->pub.records_file)
        return md_fail(m, "the descriptor set does not hold", file_name);
    if ((rc = find_union(m)) || (rc = build_record_types(m, true)))
        return rc;
    uint32_t cap = 0;
    for (uint32_t t = 0; t < m->pub.record_type_count; t++)
        cap += m->types[t].descriptor->field_count;
    m->index_cap = cap;
    m->indexes = cfdb_arena_zalloc(&m->arena, (cap + 1) * sizeof *m->indexes);
    if (!m->indexes)
        return md_oom(m);
    /* A type's since_version is its option's, or none (RecordMetaDataBuilder.processRecordType;
     * only updateRecords, evolving a builder in place, stamps new types with the version). */
    for (uint32_t t = 0; t < m->pub.record_type_count; t++)
        if ((rc = field_options(m, &m->types[t])))
            return rc;
    const cfdb_pb_msg *so;
    if ((rc = ext_option(m, m->pub.records_file->options, RL_PKG "FileOptionsExt", "schema", &so)))
        return rc;
    if (so) {
        m->pub.split_long_records = rl_bool(so, "split_long_records");
        m->pub.store_record_versions = rl_bool(so, "store_record_versions");
    }
    return link_indexes(m);
}

int cfdb_rl_metadata_from_file(const uint8_t *set, size_t set_len, const char *file_name,
                               cfdb_rl_metadata **out, cfdb_pb_error *err)
{
    md_impl *m;
    int rc = md_new(err, &m);
    if (rc) {
        *out = NULL;
        return md_failed(err, rc);
    }
    rc = from_file(m, set, set_len, file_name);
    if (rc) {
        cfdb_rl_metadata_free(&m->pub);
        *out = NULL;
        return md_failed(err, rc);
    }
    *out = &m->pub;
    return 0;
}

/* ---- lookups ---- */

const cfdb_rl_record_type *cfdb_rl_record_type_by_name(const cfdb_rl_metadata *md,
                                                       const char *name)
{
    for (uint32_t i = 0; i < md->record_type_count; i++)
        if (strcmp(md->record_types[i].name, name) == 0)
            return &md->record_types[i];
    return NULL;
}

const cfdb_rl_record_type *cfdb_rl_record_type_of(const cfdb_rl_metadata *md,
                                                  const cfdb_pb_message *descriptor)
{
    for (uint32_t i = 0; i < md->record_type_count; i++)
        if (md->record_types[i].descriptor == descriptor)
            return &md->record_types[i];
    return NULL;
}

const cfdb_rl_index *cfdb_rl_index_by_name(const cfdb_rl_metadata *md, const char *name)
{
    for (uint32_t i = 0; i < md->index_count; i++)
        if (strcmp(md->indexes[i].name, name) == 0)
            return &md->indexes[i];
    return NULL;
}

const char *cfdb_rl_index_option_value(const cfdb_rl_index *index, const char *key)
{
    for (uint32_t i = 0; i < index->option_count; i++)
        if (strcmp(index->options[i].key, key) == 0)
            return index->options[i].value;
    return NULL;
}

int cfdb_rl_primary_key(cfdb_arena *a, const cfdb_rl_record_type *type, const cfdb_pb_msg *record,
                        cfdb_tuple *out)
{
    if (cfdb_pb_msg_type(record) != type->descriptor)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    cfdb_kex_ctx ctx = { &type->record_type_key, NULL };
    cfdb_tuple *keys;
    uint32_t n;
    int rc = cfdb_kex_evaluate(a, type->primary_key, record, &ctx, &keys, &n);
    if (rc)
        return rc;
    if (n != 1)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    *out = keys[0];
    return 0;
}
