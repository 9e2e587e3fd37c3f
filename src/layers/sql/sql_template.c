/* SPDX-License-Identifier: Apache-2.0 */
/* A schema template as the Record Layer's MetaData protobuf, built as fdb-relational does
 * (fdb-relational-core .../recordlayer/metadata/serde/FileDescriptorSerializer.java,
 * RecordMetadataSerializer.java, RecordLayerTable.java, RecordLayerIndex.java; the field
 * layout of Type.Record.defineProtoType in fdb-record-layer-core's typing/Type.java):
 *
 *  - the records file is named after the template; each table is a message of the table's
 *    name whose fields are its columns, numbered 1.. in order, LABEL_OPTIONAL (a NOT NULL
 *    column is LABEL_REQUIRED here: see docs/design/sql.md), of the types BOOLEAN bool,
 *    INTEGER int32, BIGINT int64, FLOAT float, DOUBLE double, STRING string, BYTES bytes;
 *  - a last message RecordTypeUnion with (record).usage = UNION holds one field per table,
 *    named "<table>_0", numbered 1.. in table order (FileDescriptorSerializer's tableCounter);
 *  - each record type gets the explicit record type key 0, 1, ... in table order
 *    (RecordMetadataSerializer's recordTypeCounter) and the primary key
 *    concat(recordType(), field(c1), ...) — without recordType() when the template says
 *    INTERMINGLE_TABLES = true (RecordLayerTable.Builder adds it for non-intermingled tables);
 *  - indexes: value indexes on concat(fields) (one field alone), key_with_value when the
 *    index has value (INCLUDE / non-ORDER BY) columns; COUNT(*) a "count" index on
 *    grouping(group columns, 0), COUNT(c) "count_not_null", SUM "sum", MAX_EVER/MIN_EVER
 *    "max_ever_tuple"/"min_ever_tuple" ("max_ever_long"/"min_ever_long" with
 *    LEGACY_EXTREMUM_EVER), each on grouping(concat(group columns, c), 1); UNIQUE gives the
 *    option unique = true;
 *  - the MetaData carries the template's version, split_long_records (ENABLE_LONG_ROWS) and
 *    store_record_versions (STORE_ROW_VERSIONS).
 */
#include <string.h>

#include "cfdb/errors.h"
#include "sql_internal.h"

/* A small protobuf writer into a growable arena buffer. */
typedef struct pbw {
    cfdb_arena *a;
    uint8_t *buf;
    size_t len, cap;
    int rc;
} pbw;

static void pbw_raw(pbw *w, const void *p, size_t n)
{
    if (w->rc || n == 0)
        return;
    if (w->len + n > w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 256;
        while (nc < w->len + n)
            nc *= 2;
        uint8_t *nb = cfdb_arena_alloc(w->a, nc);
        if (!nb) {
            w->rc = CFDB_ERR_OUT_OF_MEMORY;
            return;
        }
        if (w->len)
            memcpy(nb, w->buf, w->len);
        w->buf = nb;
        w->cap = nc;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void pbw_varint(pbw *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    pbw_raw(w, b, n);
}

static void pbw_tag(pbw *w, uint32_t field, uint32_t wt) { pbw_varint(w, ((uint64_t)field << 3) | wt); }
static void pbw_int(pbw *w, uint32_t field, int64_t v)
{
    pbw_tag(w, field, 0);
    pbw_varint(w, (uint64_t)v);
}
static void pbw_bytes(pbw *w, uint32_t field, const void *p, size_t n)
{
    pbw_tag(w, field, 2);
    pbw_varint(w, n);
    pbw_raw(w, p, n);
}
static void pbw_str(pbw *w, uint32_t field, const char *s) { pbw_bytes(w, field, s, strlen(s)); }
static void pbw_sub(pbw *w, uint32_t field, const pbw *sub)
{
    if (sub->rc && !w->rc)
        w->rc = sub->rc;
    pbw_bytes(w, field, sub->buf, sub->len);
}

static const struct {
    uint8_t pb_type;
} type_map[] = {
    [SQL_BOOLEAN] = { CFDB_PB_BOOL },   [SQL_INTEGER] = { CFDB_PB_INT32 },
    [SQL_BIGINT] = { CFDB_PB_INT64 },   [SQL_FLOAT] = { CFDB_PB_FLOAT },
    [SQL_DOUBLE] = { CFDB_PB_DOUBLE },  [SQL_STRING] = { CFDB_PB_STRING },
    [SQL_BYTES] = { CFDB_PB_BYTES },
};

sql_type sql_type_of_field(const cfdb_pb_field *f)
{
    switch (f->type) {
    case CFDB_PB_BOOL:
        return SQL_BOOLEAN;
    case CFDB_PB_INT32:
    case CFDB_PB_SINT32:
    case CFDB_PB_SFIXED32:
    case CFDB_PB_UINT32:
    case CFDB_PB_FIXED32:
    case CFDB_PB_ENUM:
        return SQL_INTEGER;
    case CFDB_PB_FLOAT:
        return SQL_FLOAT;
    case CFDB_PB_DOUBLE:
        return SQL_DOUBLE;
    case CFDB_PB_STRING:
        return SQL_STRING;
    case CFDB_PB_BYTES:
        return SQL_BYTES;
    default:
        return SQL_BIGINT;
    }
}

static const sql_table *table_of(const sql_template *t, const char *name, uint32_t *pos)
{
    for (uint32_t i = 0; i < t->ntables; i++)
        if (strcmp(t->tables[i].name, name) == 0) {
            *pos = i;
            return &t->tables[i];
        }
    return NULL;
}

/* concat of fields (one field alone), optionally preceded by recordType(). */
static const cfdb_kex *fields_kex(cfdb_arena *a, const char *const *names, uint32_t n,
                                  bool record_type_first)
{
    uint32_t total = n + (record_type_first ? 1 : 0);
    const cfdb_kex **kids = cfdb_arena_alloc(a, (total ? total : 1) * sizeof *kids);
    if (!kids)
        return NULL;
    uint32_t k = 0;
    if (record_type_first && !(kids[k++] = cfdb_kex_record_type_key(a)))
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!(kids[k++] = cfdb_kex_field(a, names[i], CFDB_KEX_SCALAR)))
            return NULL;
    if (total == 0)
        return cfdb_kex_empty(a);
    if (total == 1)
        return kids[0];
    return cfdb_kex_then(a, kids, total);
}

/* A KeyExpression protobuf (record_key_expression.proto), written here because the Record
 * Layer's serializer leaves key_with_value out: the bytes Java's toProto writes (a field
 * always with its nullInterpretation). */
static void kex_write(pbw *w, const cfdb_kex *k)
{
    pbw m = { .a = w->a };
    switch (k->kind) {
    case CFDB_KEX_FIELD:
        pbw_str(&m, 1, k->field_name);
        pbw_int(&m, 2, k->fan_type);
        pbw_int(&m, 3, k->null_interpretation ? k->null_interpretation : CFDB_KEX_NULL_NOT_UNIQUE);
        break;
    case CFDB_KEX_THEN:
        for (uint32_t i = 0; i < k->child_count; i++) {
            pbw c = { .a = w->a };
            kex_write(&c, k->children[i]);
            pbw_sub(&m, 1, &c);
        }
        break;
    case CFDB_KEX_GROUPING:
    case CFDB_KEX_KEY_WITH_VALUE: {
        pbw c = { .a = w->a };
        kex_write(&c, k->children[0]);
        pbw_sub(&m, 1, &c);
        pbw_int(&m, k->kind == CFDB_KEX_GROUPING ? 3 : 2, k->n1);
        break;
    }
    default: /* EMPTY, RECORD_TYPE_KEY: empty messages */
        break;
    }
    if (m.rc && !w->rc)
        w->rc = m.rc;
    pbw_tag(w, (uint32_t)k->kind, 2);
    pbw_varint(w, m.len);
    pbw_raw(w, m.buf, m.len);
}

static void write_kex(pbw *w, uint32_t field, const cfdb_kex *k)
{
    if (w->rc)
        return;
    if (!k) {
        w->rc = CFDB_ERR_OUT_OF_MEMORY;
        return;
    }
    pbw e = { .a = w->a };
    kex_write(&e, k);
    pbw_sub(w, field, &e);
}

static bool is_pk_column(const sql_table *tb, const char *name)
{
    for (uint32_t k = 0; k < tb->npk; k++)
        if (strcmp(tb->cols[tb->pk[k]].name, name) == 0)
            return true;
    return false;
}

static const cfdb_kex *index_kex(cfdb_arena *a, const sql_table *tb, const sql_index *ix,
                                 const char **type)
{
    if (ix->kind == SQL_IX_VALUE) {
        *type = "value";
        /* primary key columns are in every entry's key already: a value column that is one is
         * left out (the Record Layer places the primary key by positions in the whole
         * key_with_value expression, so one in the value part would be lost from the key) */
        const char **all = cfdb_arena_alloc(a, (ix->nkeys + ix->nvalues + 1) * sizeof *all);
        if (!all)
            return NULL;
        memcpy(all, ix->keys, ix->nkeys * sizeof *all);
        uint32_t n = ix->nkeys;
        for (uint32_t i = 0; i < ix->nvalues; i++)
            if (!is_pk_column(tb, ix->values[i]))
                all[n++] = ix->values[i];
        if (n == ix->nkeys)
            return fields_kex(a, ix->keys, ix->nkeys, false);
        const cfdb_kex *inner = fields_kex(a, all, n, false);
        cfdb_kex *kv = cfdb_arena_zalloc(a, sizeof *kv);
        const cfdb_kex **kids = cfdb_arena_alloc(a, sizeof *kids);
        if (!inner || !kv || !kids)
            return NULL;
        kids[0] = inner;
        kv->kind = CFDB_KEX_KEY_WITH_VALUE;
        kv->children = kids;
        kv->child_count = 1;
        kv->n1 = (int32_t)ix->nkeys;
        return kv;
    }
    switch (ix->kind) {
    case SQL_IX_COUNT:
        *type = "count";
        return cfdb_kex_grouping(a, fields_kex(a, ix->keys, ix->nkeys, false), 0);
    case SQL_IX_COUNT_NOT_NULL:
        *type = "count_not_null";
        break;
    case SQL_IX_SUM:
        *type = "sum";
        break;
    case SQL_IX_MAX_EVER:
        *type = ix->legacy_extremum ? "max_ever_long" : "max_ever_tuple";
        break;
    default:
        *type = ix->legacy_extremum ? "min_ever_long" : "min_ever_tuple";
        break;
    }
    const char **all = cfdb_arena_alloc(a, (ix->nkeys + 1) * sizeof *all);
    if (!all)
        return NULL;
    if (ix->nkeys)
        memcpy(all, ix->keys, ix->nkeys * sizeof *all);
    all[ix->nkeys] = ix->agg_col;
    return cfdb_kex_grouping(a, fields_kex(a, all, ix->nkeys + 1, false), 1);
}

/* Whether two key expressions of the kinds templates write are the same. */
static bool kex_same(const cfdb_kex *x, const cfdb_kex *y)
{
    if (x->kind != y->kind || x->child_count != y->child_count)
        return false;
    switch (x->kind) {
    case CFDB_KEX_FIELD: {
        int nx = x->null_interpretation ? x->null_interpretation : CFDB_KEX_NULL_NOT_UNIQUE;
        int ny = y->null_interpretation ? y->null_interpretation : CFDB_KEX_NULL_NOT_UNIQUE;
        return strcmp(x->field_name, y->field_name) == 0 && x->fan_type == y->fan_type && nx == ny;
    }
    case CFDB_KEX_GROUPING:
    case CFDB_KEX_KEY_WITH_VALUE:
        if (x->n1 != y->n1)
            return false;
        /* fall through */
    case CFDB_KEX_THEN:
        for (uint32_t i = 0; i < x->child_count; i++)
            if (!kex_same(x->children[i], y->children[i]))
                return false;
        return true;
    case CFDB_KEX_EMPTY:
    case CFDB_KEX_RECORD_TYPE_KEY:
        return true;
    default:
        return false;
    }
}

/* Every field of k has the same type in the previous version's record type. */
static bool kex_fields_kept(const cfdb_kex *k, const sql_table *tb, const cfdb_pb_message *prev)
{
    if (k->kind == CFDB_KEX_FIELD) {
        const cfdb_pb_field *f = cfdb_pb_field_by_name(prev, k->field_name);
        for (uint32_t c = 0; f && c < tb->ncols; c++)
            if (strcmp(tb->cols[c].name, k->field_name) == 0)
                return sql_type_of_field(f) == tb->cols[c].type &&
                       (f->label == CFDB_PB_REQUIRED) == tb->cols[c].not_null;
        return false;
    }
    for (uint32_t i = 0; i < k->child_count; i++)
        if (!kex_fields_kept(k->children[i], tb, prev))
            return false;
    return true;
}

/* An index of the previous version whose entries this version's index would write the same:
 * same name, type, uniqueness, table (at the same record type key, with the same primary
 * key) and key expression over columns of the same types. Its versions are kept, so that
 * opening a store of the previous version does not rebuild it. */
static const cfdb_rl_index *same_index(const cfdb_rl_metadata *prev, const sql_table *tb, uint32_t pos,
                                       const cfdb_kex *pk, const sql_index *ix, const cfdb_kex *root,
                                       const char *type)
{
    const cfdb_rl_index *p = prev ? cfdb_rl_index_by_name(prev, ix->name) : NULL;
    if (!p || !root || strcmp(p->type, type) != 0 || p->unique != ix->unique || p->option_count != (ix->unique ? 1u : 0u) ||
        p->record_type_count != 1 || strcmp(p->record_types[0]->name, tb->name) != 0)
        return NULL;
    const cfdb_rl_record_type *rt = p->record_types[0];
    if (rt->record_type_key.type != CFDB_TUPLE_INT || rt->record_type_key.v.i != (int64_t)pos || !pk ||
        !kex_same(rt->primary_key, pk) || !kex_same(p->root, root) ||
        !kex_fields_kept(p->root, tb, rt->descriptor) || !kex_fields_kept(rt->primary_key, tb, rt->descriptor))
        return NULL;
    return p;
}

int sql_template_metadata(cfdb_arena *a, const sql_template *t, int32_t version,
                          const cfdb_rl_metadata *prev, cfdb_bytes *out, char *err, size_t errcap)
{
    /* FileDescriptorProto */
    pbw file = { .a = a };
    pbw_str(&file, 1, t->name);
    for (uint32_t i = 0; i < t->ntables; i++) {
        const sql_table *tb = &t->tables[i];
        pbw msg = { .a = a };
        pbw_str(&msg, 1, tb->name);
        for (uint32_t c = 0; c < tb->ncols; c++) {
            pbw f = { .a = a };
            pbw_str(&f, 1, tb->cols[c].name);
            pbw_int(&f, 3, c + 1);
            pbw_int(&f, 4, tb->cols[c].not_null ? CFDB_PB_REQUIRED : CFDB_PB_OPTIONAL);
            pbw_int(&f, 5, type_map[tb->cols[c].type].pb_type);
            pbw_sub(&msg, 2, &f);
        }
        pbw_sub(&file, 4, &msg);
    }
    {
        pbw un = { .a = a };
        pbw_str(&un, 1, "RecordTypeUnion");
        for (uint32_t i = 0; i < t->ntables; i++) {
            pbw f = { .a = a };
            size_t n = strlen(t->tables[i].name);
            char *fname = cfdb_arena_alloc(a, n + 3);
            if (!fname)
                return CFDB_ERR_OUT_OF_MEMORY;
            memcpy(fname, t->tables[i].name, n);
            memcpy(fname + n, "_0", 3);
            pbw_str(&f, 1, fname);
            pbw_int(&f, 3, i + 1);
            pbw_int(&f, 4, CFDB_PB_OPTIONAL);
            pbw_int(&f, 5, CFDB_PB_MESSAGE);
            pbw_str(&f, 6, t->tables[i].name);
            pbw_sub(&un, 2, &f);
        }
        /* MessageOptions: (com.apple.foundationdb.record.record) = { usage: UNION } */
        pbw rto = { .a = a };
        pbw_int(&rto, 1, 2);
        pbw mo = { .a = a };
        pbw_sub(&mo, 1233, &rto);
        pbw_sub(&un, 7, &mo);
        pbw_sub(&file, 4, &un);
    }
    /* MetaData */
    pbw md = { .a = a };
    pbw_sub(&md, 1, &file);
    for (uint32_t i = 0; i < t->nindexes; i++) {
        const sql_index *ix = &t->indexes[i];
        uint32_t pos;
        const sql_table *tb = table_of(t, ix->table, &pos);
        if (!tb) {
            sql_errf(err, errcap, "index %s: unknown table %s", ix->name, ix->table);
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        }
        const char *type = "value";
        pbw w = { .a = a };
        pbw_str(&w, 1, ix->table);
        pbw_str(&w, 3, ix->name);
        const cfdb_kex *root = index_kex(a, tb, ix, &type);
        write_kex(&w, 4, root);
        const char **pkn = cfdb_arena_alloc(a, (tb->npk ? tb->npk : 1) * sizeof *pkn);
        for (uint32_t k = 0; pkn && k < tb->npk; k++)
            pkn[k] = tb->cols[tb->pk[k]].name;
        const cfdb_rl_index *kept =
            same_index(prev, tb, pos, pkn ? fields_kex(a, pkn, tb->npk, !t->intermingle_tables) : NULL, ix, root,
                       type);
        pbw_int(&w, 6, kept ? kept->added_version : version);
        pbw_str(&w, 8, type);
        if (ix->unique) {
            pbw o = { .a = a };
            pbw_str(&o, 1, "unique");
            pbw_str(&o, 2, "true");
            pbw_sub(&w, 9, &o);
        }
        pbw_int(&w, 10, kept ? kept->last_modified_version : version);
        pbw_sub(&md, 2, &w);
    }
    for (uint32_t i = 0; i < t->ntables; i++) {
        const sql_table *tb = &t->tables[i];
        const char **names = cfdb_arena_alloc(a, tb->npk * sizeof *names);
        if (!names)
            return CFDB_ERR_OUT_OF_MEMORY;
        for (uint32_t k = 0; k < tb->npk; k++)
            names[k] = tb->cols[tb->pk[k]].name;
        pbw rt = { .a = a };
        pbw_str(&rt, 1, tb->name);
        write_kex(&rt, 2, fields_kex(a, names, tb->npk, !t->intermingle_tables));
        pbw v = { .a = a };
        pbw_int(&v, 3, i);
        pbw_sub(&rt, 4, &v);
        pbw_sub(&md, 3, &rt);
    }
    if (t->enable_long_rows)
        pbw_int(&md, 4, 1);
    pbw_int(&md, 5, version);
    if (t->store_row_versions)
        pbw_int(&md, 8, 1);
    if (md.rc) {
        sql_errf(err, errcap, "building the template's metadata failed (%d)", md.rc);
        return md.rc;
    }
    out->ptr = md.buf;
    out->len = (uint32_t)md.len;
    return 0;
}
