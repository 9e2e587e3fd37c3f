/* SPDX-License-Identifier: Apache-2.0 */
/* The catalog: fdb-relational's system catalog store (fdb-relational-core
 * .../recordlayer/catalog/RecordLayerStoreCatalog.java, RecordLayerStoreSchemaTemplateCatalog.java,
 * systables/SchemaSystemTable.java, DatabaseInfoSystemTable.java, SchemaTemplateSystemTable.java,
 * SystemTableRegistry.java; the key space of RelationalKeyspaceProvider.java).
 *
 * The catalog is a Record Layer store at the key space path /__SYS/__SYS/CATALOG:
 * KeySpaceDirectory(__SYS, NULL) / (__SYS, NULL) / (CATALOG, LONG, 0), i.e. the tuple
 * (null, null, 0) = bytes 00 00 14. Its metadata is the template CATALOG_TEMPLATE version 1
 * with the tables SCHEMAS (record type key 0), DATABASES (1) and TEMPLATES (2), built by the
 * same code as a user template (sql_template.c) from the DDL below, so the records are:
 *   SCHEMAS    (0, DATABASE_ID, SCHEMA_NAME) -> TEMPLATE_NAME, TEMPLATE_VERSION
 *   DATABASES  (1, DATABASE_ID)
 *   TEMPLATES  (2, TEMPLATE_NAME, TEMPLATE_VERSION) -> META_DATA, the template's serialized
 *              MetaData (RecordMetaData.toProto().toByteString())
 * and the catalog template itself is saved in TEMPLATES on first use, as
 * RecordLayerStoreCatalog.initialize does.
 *
 * A schema's records live in a store of their own. fdb-relational puts it under a
 * directory-layer-interned domain and ScopedInterningLayer-interned database and schema
 * names; cfdb uses the tuple (database path, schema name) as the store's prefix instead
 * (docs/design/sql.md: differences). */
#include <stdlib.h>
#include <string.h>

#include "cfdb/errors.h"
#include "cfdb/records/cursor.h"
#include "sql_catalog.h"

static const char catalog_ddl[] =
    "CREATE SCHEMA TEMPLATE CATALOG_TEMPLATE "
    "CREATE TABLE SCHEMAS (DATABASE_ID STRING, SCHEMA_NAME STRING, TEMPLATE_NAME STRING, "
    "  TEMPLATE_VERSION INTEGER, PRIMARY KEY (DATABASE_ID, SCHEMA_NAME)) "
    "CREATE INDEX TEMPLATES_COUNT_INDEX AS SELECT COUNT(*) FROM SCHEMAS "
    "  GROUP BY TEMPLATE_NAME, TEMPLATE_VERSION "
    "CREATE INDEX TEMPLATES_VALUE_INDEX AS SELECT TEMPLATE_NAME, TEMPLATE_VERSION, DATABASE_ID, "
    "  SCHEMA_NAME FROM SCHEMAS "
    "CREATE TABLE DATABASES (DATABASE_ID STRING, PRIMARY KEY (DATABASE_ID)) "
    "CREATE INDEX DATABASES_COUNT_INDEX AS SELECT COUNT(*) FROM DATABASES "
    "CREATE TABLE TEMPLATES (TEMPLATE_NAME STRING, TEMPLATE_VERSION INTEGER, META_DATA BYTES, "
    "  PRIMARY KEY (TEMPLATE_NAME, TEMPLATE_VERSION))";

#define SCHEMA_RECORD_TYPE_KEY 0
#define DATABASE_INFO_RECORD_TYPE_KEY 1
#define SCHEMA_TEMPLATE_RECORD_TYPE_KEY 2

static const uint8_t catalog_prefix[] = { 0x00, 0x00, 0x14 };

struct sql_catalog {
    cfdb_arena arena;
    cfdb_rl_metadata *md;
    cfdb_bytes md_bytes;
    const cfdb_rl_record_type *schemas, *databases, *templates;
};

int sql_catalog_new(sql_catalog **out, char *err, size_t errcap)
{
    sql_catalog *c = calloc(1, sizeof *c);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_arena_init(&c->arena);
    sql_ddl *d;
    int rc = sql_ddl_parse(&c->arena, catalog_ddl, strlen(catalog_ddl), &d, err, errcap);
    if (!rc)
        rc = sql_template_metadata(&c->arena, d->tmpl, 1, NULL, &c->md_bytes, err, errcap);
    cfdb_pb_error pe = { 0 };
    if (!rc && (rc = cfdb_rl_metadata_from_proto(c->md_bytes.ptr, c->md_bytes.len, &c->md, &pe)))
        sql_errf(err, errcap, "catalog metadata: %s", pe.message);
    if (rc) {
        sql_catalog_free(c);
        return rc;
    }
    c->schemas = cfdb_rl_record_type_by_name(c->md, "SCHEMAS");
    c->databases = cfdb_rl_record_type_by_name(c->md, "DATABASES");
    c->templates = cfdb_rl_record_type_by_name(c->md, "TEMPLATES");
    *out = c;
    return 0;
}

void sql_catalog_free(sql_catalog *c)
{
    if (!c)
        return;
    cfdb_rl_metadata_free(c->md);
    cfdb_arena_free(&c->arena);
    free(c);
}

static int set_str(cfdb_pb_msg *m, const char *field, const char *s)
{
    const cfdb_pb_field *f = cfdb_pb_field_by_name(cfdb_pb_msg_type(m), field);
    cfdb_pb_value v = { .s = { (const uint8_t *)s, (uint32_t)strlen(s) } };
    return cfdb_pb_set(m, f, v);
}
static int set_int(cfdb_pb_msg *m, const char *field, int64_t i)
{
    const cfdb_pb_field *f = cfdb_pb_field_by_name(cfdb_pb_msg_type(m), field);
    cfdb_pb_value v = { .i = i };
    return cfdb_pb_set(m, f, v);
}
static int set_bytes(cfdb_pb_msg *m, const char *field, cfdb_bytes b)
{
    const cfdb_pb_field *f = cfdb_pb_field_by_name(cfdb_pb_msg_type(m), field);
    cfdb_pb_value v = { .s = b };
    return cfdb_pb_set(m, f, v);
}
static cfdb_pb_value get(const cfdb_pb_msg *m, const char *field)
{
    const cfdb_pb_field *f = cfdb_pb_field_by_name(cfdb_pb_msg_type(m), field);
    return cfdb_pb_get_or_default(m, f);
}
static char *dup_value(cfdb_arena *a, cfdb_bytes s)
{
    char *o = cfdb_arena_alloc(a, s.len + 1);
    if (o) {
        memcpy(o, s.ptr, s.len);
        o[s.len] = 0;
    }
    return o;
}

static int open_store(sql_catalog *c, FDBTransaction *tr, cfdb_rl_store **out)
{
    cfdb_bytes p = { catalog_prefix, sizeof catalog_prefix };
    return cfdb_rl_store_open(tr, c->md, p, CFDB_RL_CREATE_OR_OPEN, out);
}

static int pk2(cfdb_arena *a, int64_t type, const char *s1, const char *s2, cfdb_tuple *pk)
{
    cfdb_tuple_init(pk, a);
    int rc = cfdb_tuple_add_int(pk, type);
    if (!rc && s1)
        rc = cfdb_tuple_add_cstr(pk, s1);
    if (!rc && s2)
        rc = cfdb_tuple_add_cstr(pk, s2);
    return rc;
}

/* The latest version of a template (0 when none), its metadata bytes in a. */
static int latest_template(sql_catalog *c, cfdb_rl_store *st, FDBTransaction *tr, cfdb_arena *a,
                           const char *name, int32_t *version, cfdb_bytes *md)
{
    *version = 0;
    cfdb_tuple key;
    int rc = pk2(a, SCHEMA_TEMPLATE_RECORD_TYPE_KEY, name, NULL, &key);
    if (rc)
        return rc;
    cfdb_rl_range r = { &key, &key, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE };
    cfdb_rl_scan_props props = { .reverse = true, .limit = 1 };
    cfdb_rl_cursor *cur;
    if ((rc = cfdb_rl_scan_records(st, tr, &r, (cfdb_bytes){ 0 }, &props, &cur)))
        return rc;
    cfdb_rl_item it;
    bool has;
    rc = cfdb_rl_cursor_next(cur, a, &it, &has);
    if (!rc && has) {
        *version = (int32_t)get(it.record, "TEMPLATE_VERSION").i;
        if (md)
            *md = get(it.record, "META_DATA").s;
    }
    cfdb_rl_cursor_free(cur);
    (void)c;
    return rc;
}

static int save_template(sql_catalog *c, cfdb_rl_store *st, FDBTransaction *tr, cfdb_arena *a,
                         const char *name, int32_t version, cfdb_bytes md)
{
    cfdb_pb_msg *m = cfdb_pb_msg_new(a, c->templates->descriptor);
    if (!m)
        return CFDB_ERR_OUT_OF_MEMORY;
    int rc = set_str(m, "TEMPLATE_NAME", name);
    if (!rc)
        rc = set_int(m, "TEMPLATE_VERSION", version);
    if (!rc)
        rc = set_bytes(m, "META_DATA", md);
    if (!rc)
        rc = cfdb_rl_store_save(st, tr, a, m, NULL);
    return rc;
}

/* Opens the catalog store, saving the catalog's own template on first use. */
static int catalog_store(sql_catalog *c, FDBTransaction *tr, cfdb_arena *a, cfdb_rl_store **out)
{
    int rc = open_store(c, tr, out);
    if (rc)
        return rc;
    int32_t v;
    if ((rc = latest_template(c, *out, tr, a, "CATALOG_TEMPLATE", &v, NULL)) == 0 && v == 0)
        rc = save_template(c, *out, tr, a, "CATALOG_TEMPLATE", 1, c->md_bytes);
    if (rc) {
        cfdb_rl_store_free(*out);
        *out = NULL;
    }
    return rc;
}

int sql_schema_prefix(cfdb_arena *a, const char *db_path, const char *schema, cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    int rc = cfdb_tuple_add_cstr(&t, db_path);
    if (!rc && schema)
        rc = cfdb_tuple_add_cstr(&t, schema);
    if (!rc)
        rc = cfdb_tuple_pack(a, (cfdb_bytes){ 0 }, &t, out);
    return rc;
}

static int clear_prefix(FDBTransaction *tr, cfdb_bytes p, bool whole_tuple_prefix)
{
    /* a packed tuple prefix: every key that extends it (its strings end with 00, so
     * begin = p, end = p + ff covers exactly the keys of tuples starting with it) */
    uint8_t *end = malloc(p.len + 1);
    if (!end)
        return CFDB_ERR_OUT_OF_MEMORY;
    memcpy(end, p.ptr, p.len);
    end[p.len] = 0xff;
    (void)whole_tuple_prefix;
    fdb_transaction_clear_range(tr, p.ptr, (int)p.len, end, (int)p.len + 1);
    free(end);
    return 0;
}

static int load_rec(cfdb_rl_store *st, FDBTransaction *tr, cfdb_arena *a, int64_t type,
                    const char *s1, const char *s2, cfdb_rl_loaded *l)
{
    cfdb_tuple pk;
    int rc = pk2(a, type, s1, s2, &pk);
    if (!rc)
        rc = cfdb_rl_store_load(st, tr, a, &pk, l);
    return rc;
}

static int del_rec(cfdb_rl_store *st, FDBTransaction *tr, cfdb_arena *a, int64_t type,
                   const char *s1, const char *s2, bool *existed)
{
    cfdb_tuple pk;
    int rc = pk2(a, type, s1, s2, &pk);
    if (!rc)
        rc = cfdb_rl_store_delete(st, tr, a, &pk, existed);
    return rc;
}

/* Schemas of a database (or every one when db is NULL), through a callback. */
typedef int (*schema_fn)(void *ctx, const char *db, const char *schema, const char *tmpl,
                         int32_t version);
static int each_schema(sql_catalog *c, cfdb_rl_store *st, FDBTransaction *tr, cfdb_arena *a,
                       const char *db, schema_fn fn, void *ctx)
{
    cfdb_tuple key;
    int rc = pk2(a, SCHEMA_RECORD_TYPE_KEY, db, NULL, &key);
    if (rc)
        return rc;
    cfdb_rl_range r = { &key, &key, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_RANGE_INCLUSIVE };
    cfdb_rl_scan_props props = { 0 };
    cfdb_rl_cursor *cur;
    if ((rc = cfdb_rl_scan_records(st, tr, &r, (cfdb_bytes){ 0 }, &props, &cur)))
        return rc;
    for (;;) {
        cfdb_rl_item it;
        bool has;
        if ((rc = cfdb_rl_cursor_next(cur, a, &it, &has)) || !has)
            break;
        char *d = dup_value(a, get(it.record, "DATABASE_ID").s);
        char *s = dup_value(a, get(it.record, "SCHEMA_NAME").s);
        char *t = dup_value(a, get(it.record, "TEMPLATE_NAME").s);
        if (!d || !s || !t) {
            rc = CFDB_ERR_OUT_OF_MEMORY;
            break;
        }
        if ((rc = fn(ctx, d, s, t, (int32_t)get(it.record, "TEMPLATE_VERSION").i)))
            break;
    }
    cfdb_rl_cursor_free(cur);
    (void)c;
    return rc;
}

typedef struct uses_ctx {
    const char *tmpl;
    char *err;
    size_t errcap;
} uses_ctx;

static int uses_template(void *ctx, const char *db, const char *schema, const char *tmpl,
                         int32_t version)
{
    uses_ctx *u = ctx;
    (void)version;
    if (strcmp(tmpl, u->tmpl) == 0) {
        sql_errf(u->err, u->errcap, "schema template %s is used by schema %s/%s", tmpl, db,
                 schema);
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    return 0;
}

typedef struct drop_ctx {
    sql_catalog *c;
    cfdb_rl_store *st;
    FDBTransaction *tr;
    cfdb_arena *a;
} drop_ctx;

static int drop_one(void *ctx, const char *db, const char *schema, const char *tmpl,
                    int32_t version)
{
    drop_ctx *d = ctx;
    (void)tmpl;
    (void)version;
    return del_rec(d->st, d->tr, d->a, SCHEMA_RECORD_TYPE_KEY, db, schema, NULL);
}

int sql_catalog_exec(sql_catalog *c, FDBTransaction *tr, const sql_ddl *d, char *err,
                     size_t errcap)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_rl_store *st = NULL;
    int rc = catalog_store(c, tr, &a, &st);
    if (rc) {
        sql_errf(err, errcap, "opening the catalog: error %d (%s)", rc, fdb_get_error(rc));
        goto out;
    }
    cfdb_rl_loaded l;
    switch (d->kind) {
    case SQL_DDL_CREATE_TEMPLATE: {
        int32_t v;
        cfdb_bytes prev_bytes = { NULL, 0 };
        if ((rc = latest_template(c, st, tr, &a, d->name, &v, &prev_bytes)))
            break;
        cfdb_rl_metadata *prev = NULL;
        cfdb_pb_error pe = { 0 };
        if (v > 0 && cfdb_rl_metadata_from_proto(prev_bytes.ptr, prev_bytes.len, &prev, &pe))
            prev = NULL; /* unreadable: every index counts as new */
        cfdb_bytes md;
        rc = sql_template_metadata(&a, d->tmpl, v + 1, prev, &md, err, errcap);
        cfdb_rl_metadata_free(prev);
        if (rc)
            break;
        cfdb_rl_metadata *check;
        if ((rc = cfdb_rl_metadata_from_proto(md.ptr, md.len, &check, &pe))) {
            sql_errf(err, errcap, "schema template %s: %s", d->name, pe.message);
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            break;
        }
        cfdb_rl_metadata_free(check);
        rc = save_template(c, st, tr, &a, d->name, v + 1, md);
        break;
    }
    case SQL_DDL_DROP_TEMPLATE: {
        int32_t v;
        if ((rc = latest_template(c, st, tr, &a, d->name, &v, NULL)))
            break;
        if (v == 0) {
            if (!d->if_exists) {
                sql_errf(err, errcap, "schema template %s does not exist", d->name);
                rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            }
            break;
        }
        if (strcmp(d->name, "CATALOG_TEMPLATE") == 0) {
            sql_errf(err, errcap, "the catalog's template cannot be dropped");
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            break;
        }
        uses_ctx u = { d->name, err, errcap };
        if ((rc = each_schema(c, st, tr, &a, NULL, uses_template, &u)))
            break;
        for (int32_t i = 1; i <= v && !rc; i++) {
            cfdb_tuple pk;
            if (!(rc = pk2(&a, SCHEMA_TEMPLATE_RECORD_TYPE_KEY, d->name, NULL, &pk)) &&
                !(rc = cfdb_tuple_add_int(&pk, i)))
                rc = cfdb_rl_store_delete(st, tr, &a, &pk, NULL);
        }
        break;
    }
    case SQL_DDL_CREATE_DATABASE:
        if ((rc = load_rec(st, tr, &a, DATABASE_INFO_RECORD_TYPE_KEY, d->path, NULL, &l)))
            break;
        if (l.found) {
            sql_errf(err, errcap, "database %s already exists", d->path);
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            break;
        }
        {
            cfdb_pb_msg *m = cfdb_pb_msg_new(&a, c->databases->descriptor);
            if (!m) {
                rc = CFDB_ERR_OUT_OF_MEMORY;
                break;
            }
            if (!(rc = set_str(m, "DATABASE_ID", d->path)))
                rc = cfdb_rl_store_save(st, tr, &a, m, NULL);
        }
        break;
    case SQL_DDL_DROP_DATABASE: {
        bool existed;
        if ((rc = del_rec(st, tr, &a, DATABASE_INFO_RECORD_TYPE_KEY, d->path, NULL, &existed)))
            break;
        if (!existed) {
            if (!d->if_exists) {
                sql_errf(err, errcap, "database %s does not exist", d->path);
                rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            }
            break;
        }
        drop_ctx dc = { c, st, tr, &a };
        if ((rc = each_schema(c, st, tr, &a, d->path, drop_one, &dc)))
            break;
        cfdb_bytes p;
        if (!(rc = sql_schema_prefix(&a, d->path, NULL, &p)))
            rc = clear_prefix(tr, p, true);
        break;
    }
    case SQL_DDL_CREATE_SCHEMA: {
        if ((rc = load_rec(st, tr, &a, DATABASE_INFO_RECORD_TYPE_KEY, d->path, NULL, &l)))
            break;
        if (!l.found) {
            sql_errf(err, errcap, "Cannot create schema %s because database %s does not exist.",
                     d->name, d->path);
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            break;
        }
        int32_t v;
        cfdb_bytes mdb;
        if ((rc = latest_template(c, st, tr, &a, d->template_name, &v, &mdb)))
            break;
        if (v == 0) {
            sql_errf(err, errcap,
                     "Cannot create schema %s because schema template %s does not exist.",
                     d->name, d->template_name);
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            break;
        }
        if ((rc = load_rec(st, tr, &a, SCHEMA_RECORD_TYPE_KEY, d->path, d->name, &l)))
            break;
        if (l.found) {
            sql_errf(err, errcap, "schema %s/%s already exists", d->path, d->name);
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            break;
        }
        cfdb_pb_msg *m = cfdb_pb_msg_new(&a, c->schemas->descriptor);
        if (!m) {
            rc = CFDB_ERR_OUT_OF_MEMORY;
            break;
        }
        if ((rc = set_str(m, "DATABASE_ID", d->path)) || (rc = set_str(m, "SCHEMA_NAME", d->name)) ||
            (rc = set_str(m, "TEMPLATE_NAME", d->template_name)) ||
            (rc = set_int(m, "TEMPLATE_VERSION", v)) ||
            (rc = cfdb_rl_store_save(st, tr, &a, m, NULL)))
            break;
        /* the schema's store, created empty (a leftover of an older schema is cleared) */
        cfdb_bytes p;
        if ((rc = sql_schema_prefix(&a, d->path, d->name, &p)) || (rc = clear_prefix(tr, p, true)))
            break;
        cfdb_rl_metadata *md;
        cfdb_pb_error pe = { 0 };
        if ((rc = cfdb_rl_metadata_from_proto(mdb.ptr, mdb.len, &md, &pe))) {
            sql_errf(err, errcap, "schema template %s: %s", d->template_name, pe.message);
            break;
        }
        cfdb_rl_store *ss;
        if (!(rc = cfdb_rl_store_open(tr, md, p, CFDB_RL_CREATE, &ss)))
            cfdb_rl_store_free(ss);
        cfdb_rl_metadata_free(md);
        break;
    }
    case SQL_DDL_DROP_SCHEMA: {
        bool existed;
        if ((rc = del_rec(st, tr, &a, SCHEMA_RECORD_TYPE_KEY, d->path, d->name, &existed)))
            break;
        if (!existed) {
            if (!d->if_exists) {
                sql_errf(err, errcap, "Schema %s/%s does not exist", d->path, d->name);
                rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            }
            break;
        }
        cfdb_bytes p;
        if (!(rc = sql_schema_prefix(&a, d->path, d->name, &p)))
            rc = clear_prefix(tr, p, true);
        break;
    }
    }
    if (rc && err && !err[0])
        sql_errf(err, errcap, "error %d (%s)", rc, fdb_get_error(rc));
out:
    cfdb_rl_store_free(st);
    cfdb_arena_free(&a);
    return rc;
}

int sql_catalog_load_schema(sql_catalog *c, FDBTransaction *tr, cfdb_arena *a, const char *db,
                            const char *schema, sql_schema_info *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    cfdb_rl_store *st = NULL;
    int rc = catalog_store(c, tr, a, &st);
    if (rc) {
        sql_errf(err, errcap, "opening the catalog: error %d (%s)", rc, fdb_get_error(rc));
        return rc;
    }
    cfdb_rl_loaded l;
    if ((rc = load_rec(st, tr, a, SCHEMA_RECORD_TYPE_KEY, db, schema, &l)))
        goto out;
    if (!l.found) {
        sql_errf(err, errcap, "Schema <%s/%s> does not exist in the catalog!", db, schema);
        rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
        goto out;
    }
    out->template_name = dup_value(a, get(l.record, "TEMPLATE_NAME").s);
    out->template_version = (int32_t)get(l.record, "TEMPLATE_VERSION").i;
    if (!out->template_name) {
        rc = CFDB_ERR_OUT_OF_MEMORY;
        goto out;
    }
    /* a newer version of the template upgrades the schema (the store's open then builds or
     * disables what changed, as the Record Layer's checkVersion) */
    int32_t latest;
    cfdb_bytes md;
    if ((rc = latest_template(c, st, tr, a, out->template_name, &latest, &md)))
        goto out;
    if (latest == 0) {
        sql_errf(err, errcap, "schema template %s of schema %s/%s does not exist",
                 out->template_name, db, schema);
        rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
        goto out;
    }
    if (latest > out->template_version) {
        if ((rc = set_int(l.record, "TEMPLATE_VERSION", latest)) ||
            (rc = cfdb_rl_store_save(st, tr, a, l.record, NULL)))
            goto out;
        out->upgraded_from = out->template_version;
        out->template_version = latest;
    }
    out->metadata = md;
    rc = sql_schema_prefix(a, db, schema, &out->prefix);
out:
    cfdb_rl_store_free(st);
    return rc;
}

typedef struct list_ctx {
    sql_schema_fn fn;
    void *ctx;
} list_ctx;

static int list_one(void *ctx, const char *db, const char *schema, const char *tmpl,
                    int32_t version)
{
    list_ctx *l = ctx;
    return l->fn(l->ctx, db, schema, tmpl, version);
}

int sql_catalog_list_schemas(sql_catalog *c, FDBTransaction *tr, const char *db, sql_schema_fn fn,
                             void *ctx)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_rl_store *st = NULL;
    int rc = catalog_store(c, tr, &a, &st);
    list_ctx l = { fn, ctx };
    if (!rc)
        rc = each_schema(c, st, tr, &a, db, list_one, &l);
    cfdb_rl_store_free(st);
    cfdb_arena_free(&a);
    return rc;
}
