/* SPDX-License-Identifier: Apache-2.0 */
/* The DDL parser (src/layers/sql/sql_ddl.c) and the template's Record Layer metadata
 * (sql_template.c): fdb-relational's statements read into their parts, bad DDL refused with
 * a message naming the problem, and the MetaData a template becomes loaded back by the
 * Record Layer with the record types, keys and indexes fdb-relational gives it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cfdb/errors.h"
#include "sql_internal.h"

static cfdb_arena arena;
static char err[256];

static sql_ddl *parse_ok(const char *s)
{
    sql_ddl *d = NULL;
    err[0] = 0;
    int rc = sql_ddl_parse(&arena, s, strlen(s), &d, err, sizeof err);
    if (rc)
        fail_msg("parse failed (%d): %s\n  for: %s", rc, err, s);
    assert_non_null(d);
    return d;
}

static void parse_bad(const char *s, const char *needle)
{
    sql_ddl *d = NULL;
    err[0] = 0;
    int rc = sql_ddl_parse(&arena, s, strlen(s), &d, err, sizeof err);
    if (rc != CFDB_ERR_CLIENT_INVALID_OPERATION)
        fail_msg("expected 2000 for: %s (got %d)", s, rc);
    assert_null(d);
    if (!strstr(err, needle))
        fail_msg("message '%s' lacks '%s'", err, needle);
}

static const char tmpl_ddl[] =
    "CREATE SCHEMA TEMPLATE shop "
    "CREATE TABLE customer (id BIGINT, name STRING NOT NULL, age INTEGER, score DOUBLE, "
    "  ratio FLOAT, vip BOOLEAN, photo BYTES NULL, PRIMARY KEY (id)) "
    "CREATE TABLE orders (cust BIGINT, seq INTEGER, amount BIGINT, note STRING, "
    "  PRIMARY KEY (cust, seq)) "
    "CREATE INDEX by_name AS SELECT name, age FROM customer ORDER BY name "
    "CREATE UNIQUE INDEX \"ByAmount\" ON orders (amount ASC) INCLUDE (note) "
    "CREATE INDEX n_orders AS SELECT COUNT(*) FROM orders GROUP BY cust "
    "CREATE INDEX total AS SELECT cust, SUM(amount) FROM orders GROUP BY cust "
    "CREATE INDEX biggest AS SELECT MAX_EVER(amount) FROM orders WITH ATTRIBUTES LEGACY_EXTREMUM_EVER "
    "WITH OPTIONS (ENABLE_LONG_ROWS = true, STORE_ROW_VERSIONS = false);";

static void test_template(void **state)
{
    (void)state;
    sql_ddl *d = parse_ok(tmpl_ddl);
    assert_int_equal(d->kind, SQL_DDL_CREATE_TEMPLATE);
    sql_template *t = d->tmpl;
    assert_string_equal(t->name, "SHOP");
    assert_int_equal(t->ntables, 2);
    assert_string_equal(t->tables[0].name, "CUSTOMER");
    assert_int_equal(t->tables[0].ncols, 7);
    assert_int_equal(t->tables[0].cols[1].type, SQL_STRING);
    assert_true(t->tables[0].cols[1].not_null);
    assert_false(t->tables[0].cols[6].not_null);
    assert_int_equal(t->tables[0].cols[4].type, SQL_FLOAT);
    assert_int_equal(t->tables[1].npk, 2);
    assert_int_equal(t->tables[1].pk[0], 0);
    assert_int_equal(t->tables[1].pk[1], 1);
    assert_int_equal(t->nindexes, 5);
    assert_string_equal(t->indexes[0].name, "BY_NAME");
    assert_int_equal(t->indexes[0].nkeys, 1);
    assert_int_equal(t->indexes[0].nvalues, 1);
    assert_string_equal(t->indexes[0].values[0], "AGE");
    assert_string_equal(t->indexes[1].name, "ByAmount");
    assert_true(t->indexes[1].unique);
    assert_string_equal(t->indexes[1].values[0], "NOTE");
    assert_int_equal(t->indexes[2].kind, SQL_IX_COUNT);
    assert_int_equal(t->indexes[2].nkeys, 1);
    assert_int_equal(t->indexes[3].kind, SQL_IX_SUM);
    assert_string_equal(t->indexes[3].agg_col, "AMOUNT");
    assert_int_equal(t->indexes[4].kind, SQL_IX_MAX_EVER);
    assert_true(t->indexes[4].legacy_extremum);
    assert_int_equal(t->indexes[4].nkeys, 0);
    assert_true(t->enable_long_rows);
    assert_false(t->store_row_versions);
    assert_false(t->intermingle_tables);
}

static void test_database_schema_drop(void **state)
{
    (void)state;
    sql_ddl *d = parse_ok("create database /frl/demo");
    assert_int_equal(d->kind, SQL_DDL_CREATE_DATABASE);
    assert_string_equal(d->path, "/frl/demo");
    d = parse_ok("CREATE SCHEMA /frl/demo/s1 WITH TEMPLATE shop");
    assert_int_equal(d->kind, SQL_DDL_CREATE_SCHEMA);
    assert_string_equal(d->path, "/frl/demo");
    assert_string_equal(d->name, "S1");
    assert_string_equal(d->template_name, "SHOP");
    d = parse_ok("DROP SCHEMA TEMPLATE IF EXISTS shop");
    assert_int_equal(d->kind, SQL_DDL_DROP_TEMPLATE);
    assert_true(d->if_exists);
    assert_string_equal(d->name, "SHOP");
    d = parse_ok("DROP SCHEMA /frl/demo/s1 -- a comment\n");
    assert_int_equal(d->kind, SQL_DDL_DROP_SCHEMA);
    assert_false(d->if_exists);
    assert_string_equal(d->name, "S1");
    d = parse_ok("/* c */ DROP DATABASE IF EXISTS /frl/demo;");
    assert_int_equal(d->kind, SQL_DDL_DROP_DATABASE);
    assert_true(d->if_exists);
    assert_true(sql_is_ddl("  create schema template x"));
    assert_true(sql_is_ddl("DROP DATABASE /x"));
    assert_false(sql_is_ddl("CREATE TABLE x(a)"));
    assert_false(sql_is_ddl("SELECT 1"));
}

static void test_errors(void **state)
{
    (void)state;
    parse_bad("SELECT 1", "not a DDL statement");
    parse_bad("", "not a DDL statement");
    parse_bad("CREATE SCHEMA TEMPLATE t", "has no tables");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT)", "has no PRIMARY KEY");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a DECIMAL, PRIMARY KEY(a))",
              "unknown type 'DECIMAL'");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(b))",
              "primary key column B is not a column");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, a STRING, PRIMARY KEY(a))",
              "defined twice");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) "
              "CREATE TABLE x (b BIGINT, PRIMARY KEY(b))", "table X defined twice");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) "
              "CREATE INDEX i AS SELECT zz FROM x", "unknown column ZZ");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) "
              "CREATE INDEX i AS SELECT a FROM y", "unknown table Y");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, b STRING, PRIMARY KEY(a)) "
              "CREATE INDEX i AS SELECT SUM(b) FROM x", "INTEGER or BIGINT");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) "
              "CREATE INDEX i AS SELECT a FROM x ORDER BY a DESC", "descending");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) "
              "CREATE INDEX i AS SELECT a FROM x WHERE a > 1", "WHERE");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) WITH OPTIONS (FOO = true)",
              "unknown option");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (\"a-b\" BIGINT, PRIMARY KEY(a))",
              "not a valid protobuf name");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT ARRAY, PRIMARY KEY(a))", "ARRAY");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) junk",
              "unexpected 'junk'");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) CREATE VIEW v",
              "not supported");
    parse_bad("CREATE DATABASE demo", "path starting with '/'");
    parse_bad("CREATE DATABASE /a//b", "empty part");
    parse_bad("CREATE SCHEMA /onlydb WITH TEMPLATE t", "no database part");
    parse_bad("CREATE DATABASE /a extra", "unexpected 'extra'");
    parse_bad("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)", "expected ')'");
    parse_bad("CREATE SCHEMA TEMPLATE \"t", "unterminated");
    parse_bad("DROP SCHEMA TEMPLATE /* open", "unterminated comment");
}

static void test_metadata(void **state)
{
    (void)state;
    sql_ddl *d = parse_ok(tmpl_ddl);
    cfdb_bytes md;
    assert_int_equal(sql_template_metadata(&arena, d->tmpl, 3, NULL, &md, err, sizeof err), 0);
    cfdb_rl_metadata *m = NULL;
    cfdb_pb_error pe = { 0 };
    int rc = cfdb_rl_metadata_from_proto(md.ptr, md.len, &m, &pe);
    if (rc)
        fail_msg("metadata: %s", pe.message);
    assert_int_equal(m->version, 3);
    assert_true(m->split_long_records);
    assert_string_equal(m->union_descriptor->name, "RecordTypeUnion");
    assert_string_equal(m->records_file->name, "SHOP");
    const cfdb_rl_record_type *c = cfdb_rl_record_type_by_name(m, "CUSTOMER");
    const cfdb_rl_record_type *o = cfdb_rl_record_type_by_name(m, "ORDERS");
    assert_non_null(c);
    assert_non_null(o);
    /* record type keys 0, 1 in table order; union fields CUSTOMER_0 = 1, ORDERS_0 = 2 */
    assert_int_equal(c->record_type_key.type, CFDB_TUPLE_INT);
    assert_int_equal(c->record_type_key.v.i, 0);
    assert_int_equal(o->record_type_key.v.i, 1);
    assert_string_equal(c->union_field->name, "CUSTOMER_0");
    assert_int_equal(o->union_field->number, 2);
    /* the primary key: recordType() then the columns */
    assert_int_equal(c->primary_key->kind, CFDB_KEX_THEN);
    assert_int_equal(c->primary_key->child_count, 2);
    assert_int_equal(c->primary_key->children[0]->kind, CFDB_KEX_RECORD_TYPE_KEY);
    assert_int_equal(o->primary_key->child_count, 3);
    /* the fields: numbered 1.. with the DDL's types; NOT NULL is required */
    const cfdb_pb_field *f = cfdb_pb_field_by_name(c->descriptor, "NAME");
    assert_int_equal(f->number, 2);
    assert_int_equal(f->type, CFDB_PB_STRING);
    assert_int_equal(f->label, CFDB_PB_REQUIRED);
    assert_int_equal(cfdb_pb_field_by_name(c->descriptor, "AGE")->type, CFDB_PB_INT32);
    assert_int_equal(cfdb_pb_field_by_name(c->descriptor, "RATIO")->type, CFDB_PB_FLOAT);
    assert_int_equal(cfdb_pb_field_by_name(c->descriptor, "PHOTO")->type, CFDB_PB_BYTES);
    assert_int_equal(cfdb_pb_field_by_name(c->descriptor, "VIP")->type, CFDB_PB_BOOL);
    /* indexes */
    const cfdb_rl_index *ix = cfdb_rl_index_by_name(m, "BY_NAME");
    assert_non_null(ix);
    assert_string_equal(ix->type, "value");
    assert_int_equal(ix->root->kind, CFDB_KEX_KEY_WITH_VALUE);
    assert_int_equal(ix->root->n1, 1);
    ix = cfdb_rl_index_by_name(m, "ByAmount");
    assert_true(ix->unique);
    assert_string_equal(cfdb_rl_index_by_name(m, "N_ORDERS")->type, "count");
    assert_string_equal(cfdb_rl_index_by_name(m, "TOTAL")->type, "sum");
    assert_int_equal(cfdb_rl_index_by_name(m, "TOTAL")->root->kind, CFDB_KEX_GROUPING);
    assert_int_equal(cfdb_rl_index_by_name(m, "TOTAL")->root->n1, 1);
    assert_string_equal(cfdb_rl_index_by_name(m, "BIGGEST")->type, "max_ever_long");
    cfdb_rl_metadata_free(m);

    /* INTERMINGLE_TABLES = true: no record type key in the primary key */
    d = parse_ok("CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, PRIMARY KEY(a)) "
                 "WITH OPTIONS (INTERMINGLE_TABLES = true)");
    assert_int_equal(sql_template_metadata(&arena, d->tmpl, 1, NULL, &md, err, sizeof err), 0);
    assert_int_equal(cfdb_rl_metadata_from_proto(md.ptr, md.len, &m, &pe), 0);
    assert_int_equal(m->record_types[0].primary_key->kind, CFDB_KEX_FIELD);
    cfdb_rl_metadata_free(m);
}

/* The metadata of a template version, prev the version before it (NULL: none). */
static cfdb_rl_metadata *version_md(const char *ddl, int32_t version, const cfdb_rl_metadata *prev)
{
    sql_ddl *d = parse_ok(ddl);
    cfdb_bytes md;
    assert_int_equal(sql_template_metadata(&arena, d->tmpl, version, prev, &md, err, sizeof err), 0);
    cfdb_rl_metadata *m = NULL;
    cfdb_pb_error pe = { 0 };
    if (cfdb_rl_metadata_from_proto(md.ptr, md.len, &m, &pe))
        fail_msg("metadata: %s", pe.message);
    return m;
}

static int32_t modified(const cfdb_rl_metadata *m, const char *index)
{
    const cfdb_rl_index *ix = cfdb_rl_index_by_name(m, index);
    assert_non_null(ix);
    return ix->last_modified_version;
}

/* A new template version keeps the versions of the indexes whose definition did not change
 * (so an upgrade does not rebuild them) and gives its own to every other. */
static void test_index_versions(void **state)
{
    (void)state;
    cfdb_rl_metadata *v1 = version_md(
        "CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, b STRING, c BIGINT, PRIMARY KEY(a)) "
        "CREATE INDEX same ON x (b) CREATE INDEX key ON x (b) CREATE INDEX uniq ON x (c) "
        "CREATE INDEX typed ON x (c) CREATE INDEX n AS SELECT COUNT(*) FROM x "
        "CREATE INDEX s AS SELECT b, SUM(c) FROM x GROUP BY b CREATE INDEX nul ON x (c)", 1, NULL);
    cfdb_rl_metadata *v2 = version_md(
        "CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, b STRING, c BIGINT, d INTEGER, PRIMARY KEY(a)) "
        "CREATE INDEX same ON x (b) CREATE INDEX key ON x (b, c) CREATE UNIQUE INDEX uniq ON x (c) "
        "CREATE INDEX typed ON x (d) CREATE INDEX n AS SELECT COUNT(*) FROM x "
        "CREATE INDEX s AS SELECT b, SUM(c) FROM x GROUP BY b CREATE INDEX nul ON x (c) "
        "CREATE INDEX added ON x (d)", 2, v1);
    assert_int_equal(modified(v2, "SAME"), 1);
    assert_int_equal(cfdb_rl_index_by_name(v2, "SAME")->added_version, 1);
    assert_int_equal(modified(v2, "N"), 1);
    assert_int_equal(modified(v2, "S"), 1);
    assert_int_equal(modified(v2, "NUL"), 1);
    assert_int_equal(modified(v2, "KEY"), 2);     /* another key */
    assert_int_equal(modified(v2, "UNIQ"), 2);    /* now unique */
    assert_int_equal(modified(v2, "TYPED"), 2);   /* another column */
    assert_int_equal(modified(v2, "ADDED"), 2);
    assert_int_equal(cfdb_rl_index_by_name(v2, "ADDED")->added_version, 2);
    /* a column's type or nullability changed under the same index: changed too; so is every
     * index of a table whose record type key moved (a table inserted before it) */
    cfdb_rl_metadata *v3 = version_md(
        "CREATE SCHEMA TEMPLATE t CREATE TABLE w (k BIGINT, PRIMARY KEY(k)) "
        "CREATE TABLE x (a BIGINT, b STRING, c BIGINT, d INTEGER, PRIMARY KEY(a)) "
        "CREATE INDEX same ON x (b)", 3, v2);
    assert_int_equal(modified(v3, "SAME"), 3);
    cfdb_rl_metadata *v4 = version_md(
        "CREATE SCHEMA TEMPLATE t CREATE TABLE x (a BIGINT, b STRING NOT NULL, c INTEGER, d INTEGER, "
        "  PRIMARY KEY(a)) CREATE INDEX same ON x (b) CREATE INDEX nul ON x (c) CREATE INDEX typed ON x (d)",
        4, v2);
    assert_int_equal(modified(v4, "SAME"), 4);    /* b became NOT NULL */
    assert_int_equal(modified(v4, "NUL"), 4);     /* c became INTEGER */
    assert_int_equal(modified(v4, "TYPED"), 2);   /* kept from version 2 */
    cfdb_rl_metadata_free(v1);
    cfdb_rl_metadata_free(v2);
    cfdb_rl_metadata_free(v3);
    cfdb_rl_metadata_free(v4);
}

static int setup(void **state)
{
    (void)state;
    cfdb_arena_init(&arena);
    return 0;
}
static int teardown(void **state)
{
    (void)state;
    cfdb_arena_free(&arena);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template),
        cmocka_unit_test(test_database_schema_drop),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_index_versions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
