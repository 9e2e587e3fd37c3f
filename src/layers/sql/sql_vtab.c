/* SPDX-License-Identifier: Apache-2.0 */
/* The tables of a schema as SQLite virtual tables over a Record Layer store, the
 * connection's FoundationDB transaction, and the C API of include/cfdb/sql.h.
 *
 * Each table is an eponymous virtual table (a module of the table's name, so that it exists
 * in every SQLite schema search without a CREATE VIRTUAL TABLE, and can be registered from
 * inside a running statement such as the extension's SELECT cfdb_open(...)).
 *
 * Planning (xBestIndex): the candidates are the primary-key range of the table's records and
 * each readable VALUE index on the table alone. For a candidate's key columns in order,
 * equality constraints on a leading run of columns, then at most one lower and one upper
 * bound on the next, become the scan's tuple range (docs/design/sql.md has the exact bounds).
 * Only columns whose tuple order is SQLite's order are bounded: INTEGER and BIGINT (integers),
 * STRING (UTF-8 bytes = BINARY collation), BYTES (memcmp); BOOLEAN, FLOAT and DOUBLE are left
 * to SQLite (tuple order differs from SQLite's on -0.0 and booleans are not integers in a
 * tuple). A constraint is marked consumed (omit) only when its right-hand side is a constant
 * known while planning whose type is the column's (so the range enforces it exactly); other
 * used constraints narrow the scan and SQLite checks them again. When xFilter gets a value of
 * another type than the column's, that bound (and the ones after it) is dropped: the scan
 * widens and SQLite's check keeps the answer right. ORDER BY is consumed when its columns
 * follow the candidate's order (index key columns, then the primary key's) from the first
 * column or after consumed equalities, all in one direction (a reverse scan for DESC); an IN
 * list never counts for that. An index scan whose needed columns (colUsed) are all in the
 * index entry reads no record (COVERING); otherwise its records are fetched by the
 * connection's fetch method. The scan stops after LIMIT + OFFSET rows when SQLite would drop or
 * reorder none of its rows (sql_limit.c; idxNum bits 28 and 29, the last xFilter arguments).
 *
 * Costs: a table is assumed to hold CFDB_SQL_EST_ROWS rows; each equality divides by 10, each
 * bound by 4, a full primary key or unique index key gives one row; a record costs 1 to read
 * by primary key, 1 per index entry plus 1 (remote fetch) or 2 (scan and fetch) per record. */
#ifdef CFDB_SQL_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#endif

#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/errors.h"
#include "cfdb/records/cursor.h"
#include "sql_catalog.h"
#include "sql_indexes.h"
#include "sql_limit.h"

#define CFDB_SQL_EST_ROWS 100000.0

/* ---- the connection ---- */

typedef struct sql_conn sql_conn;
struct sql_conn {
    sqlite3 *db;
    FDBDatabase *fdb;
    int refs;
    cfdb_arena md_arena;
    cfdb_rl_metadata *md;
    cfdb_bytes prefix;
    char *db_path, *schema;
    /* the FoundationDB transaction of the statement or BEGIN..COMMIT in progress */
    FDBTransaction *tr;
    cfdb_rl_store *store;
    int open_cursors;
    bool writing;            /* xBegin seen, not yet committed or rolled back */
    bool synced;             /* committed in xSync */
    int txn_error;           /* an error inside BEGIN..COMMIT: every later use fails */
    FDBTransaction *failed_tr;   /* the transaction of the last failure (for on_error) */
    bool failed_ready;           /* failed_tr went through on_error: reuse it */
    bool *readable;              /* by metadata index: readable in the store */
    int last_error;
    cfdb_sql_fetch fetch;
    /* primary keys of the rows written statements read (rowid - 1 = position) */
    cfdb_arena rowid_arena;
    cfdb_bytes *rowids;
    size_t nrowids, caprowids;
    uint32_t *rowid_hash;    /* open addressing: rowid (position + 1), 0 empty */
    size_t hashcap;
    cfdb_arena write_arena;
    sql_conn *next_global;
    char **modules;          /* the table modules registered */
    uint32_t nmodules;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static sql_conn *g_conns;
static sql_catalog *g_catalog;

static int catalog_get(sql_catalog **out, char *err, size_t errcap)
{
    pthread_mutex_lock(&g_lock);
    int rc = 0;
    if (!g_catalog)
        rc = sql_catalog_new(&g_catalog, err, errcap);
    *out = g_catalog;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static sql_conn *conn_of(sqlite3 *db)
{
    pthread_mutex_lock(&g_lock);
    sql_conn *c = g_conns;
    while (c && c->db != db)
        c = c->next_global;
    pthread_mutex_unlock(&g_lock);
    return c;
}

static void rowids_reset(sql_conn *c)
{
    c->nrowids = 0;
    if (c->rowid_hash)
        memset(c->rowid_hash, 0, c->hashcap * sizeof *c->rowid_hash);
    cfdb_arena_reset(&c->rowid_arena);
}

static uint64_t hash_bytes(cfdb_bytes b)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < b.len; i++)
        h = (h ^ b.ptr[i]) * 1099511628211ull;
    return h;
}

/* The rowid of a primary key (packed): the same key gets the same rowid until the statement
 * (or, writing, the transaction) ends, as SQLite's OR optimization and UPDATE/DELETE need. */
static int rowid_for(sql_conn *c, cfdb_bytes packed, int64_t *out)
{
    if ((c->nrowids + 1) * 2 > c->hashcap) {
        size_t nc = c->hashcap ? c->hashcap * 2 : 256;
        uint32_t *nh = calloc(nc, sizeof *nh);
        if (!nh)
            return CFDB_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; i < c->nrowids; i++) {
            size_t h = hash_bytes(c->rowids[i]) & (nc - 1);
            while (nh[h])
                h = (h + 1) & (nc - 1);
            nh[h] = (uint32_t)(i + 1);
        }
        free(c->rowid_hash);
        c->rowid_hash = nh;
        c->hashcap = nc;
    }
    size_t h = hash_bytes(packed) & (c->hashcap - 1);
    while (c->rowid_hash[h]) {
        cfdb_bytes k = c->rowids[c->rowid_hash[h] - 1];
        if (k.len == packed.len && memcmp(k.ptr, packed.ptr, k.len) == 0) {
            *out = c->rowid_hash[h];
            return 0;
        }
        h = (h + 1) & (c->hashcap - 1);
    }
    if (c->nrowids == c->caprowids) {
        size_t nc = c->caprowids ? c->caprowids * 2 : 64;
        cfdb_bytes *n = realloc(c->rowids, nc * sizeof *n);
        if (!n)
            return CFDB_ERR_OUT_OF_MEMORY;
        c->rowids = n;
        c->caprowids = nc;
    }
    cfdb_bytes copy;
    if (cfdb_arena_dup_bytes(&c->rowid_arena, packed, &copy))
        return CFDB_ERR_OUT_OF_MEMORY;
    c->rowids[c->nrowids++] = copy;
    c->rowid_hash[h] = (uint32_t)c->nrowids;
    *out = (int64_t)c->nrowids;
    return 0;
}

static void conn_release_txn(sql_conn *c)
{
    cfdb_rl_store_free(c->store);
    c->store = NULL;
    if (c->tr)
        fdb_transaction_destroy(c->tr);
    c->tr = NULL;
    c->writing = c->synced = false;
    c->txn_error = 0;
    rowids_reset(c);
}

static void conn_unref(sql_conn *c)
{
    if (--c->refs > 0)
        return;
    pthread_mutex_lock(&g_lock);
    for (sql_conn **p = &g_conns; *p; p = &(*p)->next_global)
        if (*p == c) {
            *p = c->next_global;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    conn_release_txn(c);
    if (c->failed_tr)
        fdb_transaction_destroy(c->failed_tr);
    cfdb_rl_metadata_free(c->md);
    cfdb_arena_free(&c->md_arena);
    cfdb_arena_free(&c->rowid_arena);
    cfdb_arena_free(&c->write_arena);
    free(c->rowids);
    free(c->rowid_hash);
    free(c);
}

/* An FDB error: the message for SQLite, the code for cfdb_sql_last_error, and the failed
 * transaction kept for the retry loop (inside BEGIN..COMMIT the transaction stays failed). */
static int conn_fail(sql_conn *c, sqlite3_vtab *vt, int rc, const char *what)
{
    c->last_error = rc;
    if (vt) {
        sqlite3_free(vt->zErrMsg);
        vt->zErrMsg = sqlite3_mprintf("FoundationDB error %d: %s%s%s%s", rc, fdb_get_error(rc),
                                      what ? " (" : "", what ? what : "", what ? ")" : "");
    }
    if (!sqlite3_get_autocommit(c->db) && c->tr) {
        c->txn_error = rc;
        return rc == CFDB_ERR_OUT_OF_MEMORY ? SQLITE_NOMEM : SQLITE_ERROR;
    }
    if (c->tr) {
        if (c->failed_tr)
            fdb_transaction_destroy(c->failed_tr);
        c->failed_tr = c->tr;
        c->failed_ready = false;
        c->tr = NULL;
        cfdb_rl_store_free(c->store);
        c->store = NULL;
        c->writing = c->synced = false;
        rowids_reset(c);
    }
    return rc == CFDB_ERR_OUT_OF_MEMORY ? SQLITE_NOMEM : SQLITE_ERROR;
}

/* The transaction and store for the statement running now; a read-only statement in
 * autocommit mode that starts with no cursor open gets a fresh transaction. */
static int conn_begin_use(sql_conn *c, sqlite3_vtab *vt)
{
    if (c->tr && c->open_cursors == 0 && !c->writing && sqlite3_get_autocommit(c->db))
        conn_release_txn(c);
    else if (c->open_cursors == 0 && !c->writing)
        rowids_reset(c); /* a new read statement */
    if (c->txn_error) {
        int rc = c->txn_error;
        if (vt) {
            sqlite3_free(vt->zErrMsg);
            vt->zErrMsg = sqlite3_mprintf("FoundationDB error %d: %s (the transaction failed "
                                          "earlier: ROLLBACK)", rc, fdb_get_error(rc));
        }
        c->last_error = rc;
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

static int conn_store(sql_conn *c, sqlite3_vtab *vt, cfdb_rl_store **out)
{
    if (!c->tr) {
        fdb_error_t e;
        if (c->failed_tr && c->failed_ready) {
            /* after on_error (cfdb_sql_exec's loop) the failed transaction is reset and
             * carries the back-off; reuse it */
            c->tr = c->failed_tr;
            c->failed_tr = NULL;
            c->failed_ready = false;
        } else if ((e = fdb_database_create_transaction(c->fdb, &c->tr))) {
            return conn_fail(c, vt, e, "creating a transaction");
        }
    }
    if (!c->store) {
        int rc = cfdb_rl_store_open(c->tr, c->md, c->prefix, CFDB_RL_OPEN, &c->store);
        if (rc)
            return conn_fail(c, vt, rc, "opening the schema's record store");
    }
    *out = c->store;
    return SQLITE_OK;
}

/* ---- tables ---- */

typedef struct sql_col {
    const char *name;
    const cfdb_pb_field *field;
    sql_type type;
    bool not_null;
    int pk_pos;          /* position in the primary key tuple, -1 */
} sql_col;

typedef struct sql_ix {
    const cfdb_rl_index *ix;
    uint32_t nkeys;      /* index key columns (before the primary key's) */
    int *order;          /* ordered columns: key columns then the pk columns not in the key */
    uint32_t norder;
    /* for each table column: its position in the entry key, in the entry value, or -1 */
    int *kpos, *vpos;
    uint64_t covers;     /* colUsed bits of the columns an entry holds */
    bool unique;
} sql_ix;

typedef struct sql_tab {
    sqlite3_vtab base;
    sql_conn *conn;
    const cfdb_rl_record_type *rt;
    sql_col *cols;
    uint32_t ncols;
    int *pk_cols;        /* for each primary key tuple element: column, or -1 (record type key) */
    uint32_t npk;
    int *pk_order;       /* the pk's columns alone, in order */
    uint32_t npk_order;
    bool rtk_first;      /* the primary key starts with the record type key */
    bool others_in_range;/* other types' records share the primary key range (intermingled) */
    sql_ix *ixs;
    uint32_t nixs;
} sql_tab;

typedef struct sql_module_data {
    sql_conn *conn;
    char name[];
} sql_module_data;

static const char *decl_type(sql_type t)
{
    switch (t) {
    case SQL_FLOAT:
    case SQL_DOUBLE:
        return "REAL";
    case SQL_STRING:
        return "TEXT";
    case SQL_BYTES:
        return "BLOB";
    default:
        return "INTEGER";
    }
}

static bool boundable(sql_type t)
{
    return t == SQL_INTEGER || t == SQL_BIGINT || t == SQL_STRING || t == SQL_BYTES;
}

static void tab_free(sql_tab *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nixs; i++) {
        free(t->ixs[i].order);
        free(t->ixs[i].kpos);
        free(t->ixs[i].vpos);
    }
    free(t->ixs);
    free(t->cols);
    free(t->pk_cols);
    free(t->pk_order);
    sqlite3_free(t->base.zErrMsg);
    free(t);
}

enum { NONE = -1 };

/* A column's position, NONE when the table has no such column. */
static int col_by_field(const sql_tab *t, const char *name)
{
    for (uint32_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return (int)i;
    return NONE;
}

/* The columns of a then()/field() key expression, in order: field names (top level only). */
static int kex_fields(const cfdb_kex *k, const char **out, uint32_t cap, uint32_t *n)
{
    if (k->kind == CFDB_KEX_FIELD) {
        if (*n >= cap)
            return CFDB_ERR_UNSUPPORTED_OPERATION;
        out[(*n)++] = k->field_name;
        return 0;
    }
    if (k->kind == CFDB_KEX_RECORD_TYPE_KEY) {
        if (*n >= cap)
            return CFDB_ERR_UNSUPPORTED_OPERATION;
        out[(*n)++] = NULL;
        return 0;
    }
    if (k->kind == CFDB_KEX_THEN || k->kind == CFDB_KEX_KEY_WITH_VALUE) {
        for (uint32_t i = 0; i < k->child_count; i++)
            if (kex_fields(k->children[i], out, cap, n))
                return CFDB_ERR_UNSUPPORTED_OPERATION;
        return 0;
    }
    return CFDB_ERR_UNSUPPORTED_OPERATION;
}

static int tab_build(sql_conn *c, const char *name, sql_tab **out, char **err)
{
    const cfdb_rl_record_type *rt = cfdb_rl_record_type_by_name(c->md, name);
    if (!rt) {
        *err = sqlite3_mprintf("no table %s in schema %s/%s", name, c->db_path, c->schema);
        return SQLITE_ERROR;
    }
    sql_tab *t = calloc(1, sizeof *t);
    if (!t)
        return SQLITE_NOMEM;
    t->conn = c;
    t->rt = rt;
    t->ncols = rt->descriptor->field_count;
    t->cols = calloc(t->ncols ? t->ncols : 1, sizeof *t->cols);
    if (!t->cols)
        goto nomem;
    for (uint32_t i = 0; i < t->ncols; i++) {
        const cfdb_pb_field *f = &rt->descriptor->fields[i];
        t->cols[i] = (sql_col){ f->name, f, sql_type_of_field(f), f->label == CFDB_PB_REQUIRED, -1 };
    }
    /* the primary key */
    const char *names[256];
    uint32_t n = 0;
    if (kex_fields(rt->primary_key, names, 256, &n) || n == 0) {
        *err = sqlite3_mprintf("table %s: a primary key SQL cannot use", name);
        tab_free(t);
        return SQLITE_ERROR;
    }
    t->npk = n;
    t->pk_cols = calloc(n, sizeof *t->pk_cols);
    t->pk_order = calloc(n, sizeof *t->pk_order);
    if (!t->pk_cols || !t->pk_order)
        goto nomem;
    for (uint32_t i = 0; i < n; i++) {
        if (!names[i]) {
            t->pk_cols[i] = -1;
            if (i == 0)
                t->rtk_first = true;
            continue;
        }
        int ci = col_by_field(t, names[i]);
        if (ci < 0) {
            *err = sqlite3_mprintf("table %s: primary key field %s unknown", name, names[i]);
            tab_free(t);
            return SQLITE_ERROR;
        }
        t->pk_cols[i] = ci;
        t->cols[ci].pk_pos = (int)i;
        t->cols[ci].not_null = true;
        t->pk_order[t->npk_order++] = ci;
    }
    t->others_in_range = !t->rtk_first && c->md->record_type_count > 1;
    /* value indexes on this type alone */
    t->ixs = calloc(rt->index_count ? rt->index_count : 1, sizeof *t->ixs);
    if (!t->ixs)
        goto nomem;
    for (uint32_t k = 0; k < rt->index_count; k++) {
        const cfdb_rl_index *ix = rt->indexes[k];
        if (strcmp(ix->type, "value") != 0)
            continue;
        const cfdb_kex *root = ix->root;
        uint32_t split = 0;
        if (root->kind == CFDB_KEX_KEY_WITH_VALUE)
            split = (uint32_t)root->n1;
        n = 0;
        if (kex_fields(root, names, 256, &n) || n == 0)
            continue;
        if (!split)
            split = n;
        sql_ix *x = &t->ixs[t->nixs];
        memset(x, 0, sizeof *x);
        x->ix = ix;
        x->nkeys = split;
        x->unique = ix->unique;
        x->order = calloc(split + t->npk_order, sizeof *x->order);
        x->kpos = malloc(t->ncols * sizeof *x->kpos);
        x->vpos = malloc(t->ncols * sizeof *x->vpos);
        if (!x->order || !x->kpos || !x->vpos) {
            free(x->order);
            free(x->kpos);
            free(x->vpos);
            goto nomem;
        }
        for (uint32_t i = 0; i < t->ncols; i++)
            x->kpos[i] = x->vpos[i] = -1;
        bool ok = true;
        for (uint32_t i = 0; i < n; i++) {
            int ci = names[i] ? col_by_field(t, names[i]) : -1;
            if (ci < 0) {
                ok = false;
                break;
            }
            if (i < split) {
                x->kpos[ci] = (int)i;
                x->order[x->norder++] = ci;
            } else {
                x->vpos[ci] = (int)(i - split);
            }
        }
        if (!ok) {
            free(x->order);
            free(x->kpos);
            free(x->vpos);
            continue;
        }
        /* the entry key goes on with the primary key's components the index key lacks, in
         * the primary key's order (cfdb_rl_index.pk_positions) */
        uint32_t pos = split;
        for (uint32_t i = 0; i < t->npk; i++) {
            int in_key = ix->pk_positions && i < ix->pk_position_count ? ix->pk_positions[i] : -1;
            int ci = t->pk_cols[i];
            if (in_key >= 0) {
                continue;
            }
            if (ci >= 0) {
                if (x->kpos[ci] < 0)
                    x->kpos[ci] = (int)pos;
                x->order[x->norder++] = ci;
            }
            pos++;
        }
        for (uint32_t i = 0; i < t->ncols; i++)
            if (x->kpos[i] >= 0 || x->vpos[i] >= 0)
                x->covers |= i < 63 ? (1ull << i) : 0;
        t->nixs++;
    }
    *out = t;
    return SQLITE_OK;
nomem:
    tab_free(t);
    return SQLITE_NOMEM;
}

static int x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                     sqlite3_vtab **out, char **err)
{
    (void)argc;
    (void)argv;
    sql_module_data *m = aux;
    sql_tab *t;
    int rc = tab_build(m->conn, m->name, &t, err);
    if (rc)
        return rc;
    /* the declaration */
    sqlite3_str *s = sqlite3_str_new(db);
    sqlite3_str_appendf(s, "CREATE TABLE x(");
    for (uint32_t i = 0; i < t->ncols; i++)
        sqlite3_str_appendf(s, "%s\"%w\" %s", i ? ", " : "", t->cols[i].name,
                            decl_type(t->cols[i].type));
    sqlite3_str_appendf(s, ", CFDB_CONTINUATION BLOB HIDDEN)");
    char *sql = sqlite3_str_finish(s);
    if (!sql) {
        tab_free(t);
        return SQLITE_NOMEM;
    }
    rc = sqlite3_declare_vtab(db, sql);
    sqlite3_free(sql);
    if (rc) {
        tab_free(t);
        return rc;
    }
    sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
    m->conn->refs++;
    *out = &t->base;
    return SQLITE_OK;
}

static int x_disconnect(sqlite3_vtab *vt)
{
    sql_tab *t = (sql_tab *)vt;
    sql_conn *c = t->conn;
    tab_free(t);
    conn_unref(c);
    return SQLITE_OK;
}

/* ---- planning ---- */

enum { LO_NONE = 0, LO_GT = 1, LO_GE = 2 };
enum { HI_NONE = 0, HI_LT = 1, HI_LE = 2 };

typedef struct plan {
    int cand;            /* -1: primary key, else index */
    uint32_t neq;
    int eq_c[64];        /* constraint numbers */
    int lo, hi, lo_c, hi_c;
    bool reverse, order_consumed, covering, unique;
    bool one_row;            /* unique, and xFilter surely keeps every equality (SCAN_UNIQUE) */
    bool omit[64 + 2];
    double rows, cost;
} plan;

static bool exact_rhs(sqlite3_index_info *info, int ci, sql_type t)
{
    sqlite3_value *v = NULL;
    if (sqlite3_vtab_rhs_value(info, ci, &v) != SQLITE_OK || !v)
        return false;
    const char *coll = sqlite3_vtab_collation(info, ci);
    if (coll && sqlite3_stricmp(coll, "BINARY") != 0)
        return false;
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        return t == SQL_INTEGER || t == SQL_BIGINT;
    case SQLITE_TEXT:
        return t == SQL_STRING;
    case SQLITE_BLOB:
        return t == SQL_BYTES;
    default:
        return false;
    }
}

static int find_cons(sqlite3_index_info *info, int col, int op1, int op2, bool *is_in)
{
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *k = &info->aConstraint[i];
        if (!k->usable || k->iColumn != col)
            continue;
        if (k->op != op1 && k->op != op2)
            continue;
        const char *coll = sqlite3_vtab_collation(info, i);
        if (coll && sqlite3_stricmp(coll, "BINARY") != 0)
            continue;
        if (is_in)
            *is_in = k->op == SQLITE_INDEX_CONSTRAINT_EQ && sqlite3_vtab_in(info, i, -1);
        return i;
    }
    return NONE;
}

static void plan_candidate(sql_tab *t, sqlite3_index_info *info, int cand, plan *p)
{
    memset(p, 0, sizeof *p);
    p->cand = cand;
    p->lo_c = p->hi_c = -1;
    const int *order = cand < 0 ? t->pk_order : t->ixs[cand].order;
    uint32_t norder = cand < 0 ? t->npk_order : t->ixs[cand].norder;
    uint32_t nbound = cand < 0 ? t->npk_order : t->ixs[cand].nkeys;
    bool eq_exact[64] = { 0 };
    bool any_in = false;
    double rows = CFDB_SQL_EST_ROWS;
    for (uint32_t pos = 0; pos < nbound && pos < 64; pos++) {
        int col = order[pos];
        if (!boundable(t->cols[col].type))
            break;
        bool is_in = false;
        int ci = find_cons(info, col, SQLITE_INDEX_CONSTRAINT_EQ, -1, &is_in);
        if (ci >= 0) {
            p->eq_c[p->neq] = ci;
            eq_exact[p->neq] = !is_in && exact_rhs(info, ci, t->cols[col].type);
            any_in |= is_in;
            p->neq++;
            rows /= 10;
            continue;
        }
        p->lo_c = find_cons(info, col, SQLITE_INDEX_CONSTRAINT_GT, SQLITE_INDEX_CONSTRAINT_GE, NULL);
        p->hi_c = find_cons(info, col, SQLITE_INDEX_CONSTRAINT_LT, SQLITE_INDEX_CONSTRAINT_LE, NULL);
        if (p->lo_c >= 0) {
            p->lo = info->aConstraint[p->lo_c].op == SQLITE_INDEX_CONSTRAINT_GT ? LO_GT : LO_GE;
            rows /= 4;
        }
        if (p->hi_c >= 0) {
            p->hi = info->aConstraint[p->hi_c].op == SQLITE_INDEX_CONSTRAINT_LT ? HI_LT : HI_LE;
            rows /= 4;
        }
        break;
    }
    /* a full key of equalities finds one row */
    if (p->neq == nbound && nbound > 0 && (cand < 0 || t->ixs[cand].unique)) {
        rows = 1;
        p->unique = true;
        /* SQLite runs UPDATE and DELETE of a one-row plan in one pass over the first row the
         * scan returns: only when xFilter cannot widen the scan. It widens on a STRING column
         * whose value is not text, which only a TEXT constant known now rules out. */
        p->one_row = true;
        for (uint32_t i = 0; i < p->neq; i++)
            if (t->cols[order[i]].type == SQL_STRING && !eq_exact[i])
                p->one_row = false;
    }
    if (rows < 1)
        rows = 1;
    p->rows = rows;
    /* omit: exact constants only, and only while every equality before is one (xFilter drops
     * the bounds after a value it cannot use) */
    bool prefix_exact = true;
    for (uint32_t i = 0; i < p->neq; i++) {
        prefix_exact = prefix_exact && eq_exact[i];
        p->omit[i] = prefix_exact;
    }
    if (p->lo_c >= 0)
        p->omit[64] = prefix_exact && exact_rhs(info, p->lo_c, t->cols[order[p->neq]].type);
    if (p->hi_c >= 0)
        p->omit[65] = prefix_exact && exact_rhs(info, p->hi_c, t->cols[order[p->neq]].type);
    /* ORDER BY */
    if (info->nOrderBy > 0 && !any_in) {
        bool desc = info->aOrderBy[0].desc;
        bool ok = true;
        uint32_t pos = 0;
        for (int k = 0; k < info->nOrderBy && ok; k++) {
            const struct sqlite3_index_orderby *ob = &info->aOrderBy[k];
            if (ob->desc != desc || ob->iColumn < 0) {
                ok = false;
                break;
            }
            /* consumed equalities hold one value: skip them */
            while (pos < p->neq && pos < norder && order[pos] != ob->iColumn && p->omit[pos])
                pos++;
            if (pos < norder && order[pos] == ob->iColumn) {
                pos++;
                continue;
            }
            /* an ORDER BY term on an exactly consumed equality column before pos */
            bool on_eq = false;
            for (uint32_t e = 0; e < p->neq && e < pos; e++)
                if (order[e] == ob->iColumn && p->omit[e])
                    on_eq = true;
            if (!on_eq)
                ok = false;
        }
        if (ok) {
            p->order_consumed = true;
            p->reverse = desc;
        }
    }
    /* covering */
    if (cand >= 0) {
        uint64_t used = info->colUsed;
        p->covering = (used & ~t->ixs[cand].covers) == 0 && !(used & (1ull << 63));
    }
    double per_row = cand < 0 ? 1.0 : p->covering ? 1.0
                     : t->conn->fetch == CFDB_SQL_SCAN_AND_FETCH ? 3.0 : 2.0;
    p->cost = 10.0 + rows * per_row + (cand < 0 ? 0 : 0.5);
}

static const char *fetch_name(cfdb_sql_fetch f)
{
    switch (f) {
    case CFDB_SQL_SCAN_AND_FETCH:
        return "SCAN_AND_FETCH";
    case CFDB_SQL_USE_REMOTE_FETCH:
        return "USE_REMOTE_FETCH";
    default:
        return "USE_REMOTE_FETCH_WITH_FALLBACK";
    }
}

static const char *op_name(int lo_or_hi, bool hi)
{
    if (hi)
        return lo_or_hi == HI_LT ? "<" : "<=";
    return lo_or_hi == LO_GT ? ">" : ">=";
}

static int x_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    sql_tab *t = (sql_tab *)vt;
    plan best, cur;
    /* candidates compare with the sort SQLite adds when one leaves ORDER BY to it */
    plan_candidate(t, info, -1, &best);
    double best_total = best.cost + (info->nOrderBy && !best.order_consumed
                                         ? best.rows * log2(best.rows + 1) / 4 : 0);
    for (uint32_t i = 0; i < t->nixs; i++) {
        /* an index being built (or disabled) is not planned: readable[] is the store's */
        if (t->conn->readable && !t->conn->readable[t->ixs[i].ix - t->conn->md->indexes])
            continue;
        plan_candidate(t, info, (int)i, &cur);
        double total = cur.cost + (info->nOrderBy && !cur.order_consumed
                                       ? cur.rows * log2(cur.rows + 1) / 4 : 0);
        if (total < best_total) {
            best = cur;
            best_total = total;
        }
    }
    int argv = 1;
    /* CFDB_CONTINUATION = x (or IS x, NULL meaning the start): resume the scan there (its
     * value is used, never checked again) */
    int cont_c = -1;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *k = &info->aConstraint[i];
        if (k->iColumn == (int)t->ncols &&
            (k->op == SQLITE_INDEX_CONSTRAINT_EQ || k->op == SQLITE_INDEX_CONSTRAINT_IS)) {
            if (!k->usable)
                return SQLITE_CONSTRAINT; /* needs its value: another plan */
            cont_c = i;
        }
    }
    for (uint32_t i = 0; i < best.neq; i++) {
        info->aConstraintUsage[best.eq_c[i]].argvIndex = argv++;
        info->aConstraintUsage[best.eq_c[i]].omit = best.omit[i];
    }
    if (best.lo_c >= 0) {
        info->aConstraintUsage[best.lo_c].argvIndex = argv++;
        info->aConstraintUsage[best.lo_c].omit = best.omit[64];
    }
    if (best.hi_c >= 0) {
        info->aConstraintUsage[best.hi_c].argvIndex = argv++;
        info->aConstraintUsage[best.hi_c].omit = best.omit[65];
    }
    if (cont_c >= 0) {
        info->aConstraintUsage[cont_c].argvIndex = argv++;
        info->aConstraintUsage[cont_c].omit = 1;
    }
    /* LIMIT / OFFSET into the scan when SQLite would drop or reorder no row (sql_limit.c) */
    sql_limit_plan lim;
    sql_limit_plan_make(info, best.order_consumed || info->nOrderBy == 0,
                        !(best.cand < 0 && t->others_in_range), &argv, &lim);
    info->orderByConsumed = best.order_consumed;
    info->estimatedRows = (sqlite3_int64)best.rows;
    info->estimatedCost = best.cost;
    if (best.one_row)
        info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
    info->idxNum = (best.cand + 1) | ((int)best.neq << 10) | (best.lo << 20) | (best.hi << 22) |
                   (best.reverse ? 1 << 24 : 0) | (best.covering ? 1 << 25 : 0) |
                   (cont_c >= 0 ? 1 << 26 : 0) | lim.flags;
    /* a full primary key of equalities whose continuation is not asked for: one point read */
    uint64_t cont_bit = t->ncols < 63 ? 1ull << t->ncols : 1ull << 63;
    if (best.cand < 0 && best.unique && cont_c < 0 && !(info->colUsed & cont_bit))
        info->idxNum |= 1 << 27;
    /* the plan in words (EXPLAIN QUERY PLAN) */
    sqlite3_str *s = sqlite3_str_new(NULL);
    const int *order = best.cand < 0 ? t->pk_order : t->ixs[best.cand].order;
    if (best.cand < 0)
        sqlite3_str_appendf(s, "Scan(%s primary key", t->rt->name);
    else
        sqlite3_str_appendf(s, "Index(%s", t->ixs[best.cand].ix->name);
    const char *sep = " [";
    for (uint32_t i = 0; i < best.neq; i++) {
        sqlite3_str_appendf(s, "%s%s=?%s", sep, t->cols[order[i]].name, best.omit[i] ? "" : "~");
        sep = ", ";
    }
    if (best.lo)
        sqlite3_str_appendf(s, "%s%s%s?%s", sep, t->cols[order[best.neq]].name,
                            op_name(best.lo, false), best.omit[64] ? "" : "~"), sep = ", ";
    if (best.hi)
        sqlite3_str_appendf(s, "%s%s%s?%s", sep, t->cols[order[best.neq]].name,
                            op_name(best.hi, true), best.omit[65] ? "" : "~"), sep = ", ";
    sqlite3_str_appendf(s, "%s)", sep[0] == ',' ? "]" : "");
    if (best.reverse)
        sqlite3_str_appendf(s, " REVERSE");
    if (best.cand >= 0)
        sqlite3_str_appendf(s, " %s", best.covering ? "COVERING" : fetch_name(t->conn->fetch));
    if (best.order_consumed)
        sqlite3_str_appendf(s, " ORDERED");
    if (cont_c >= 0)
        sqlite3_str_appendf(s, " FROM CONTINUATION");
    if (info->idxNum & (1 << 27))
        sqlite3_str_appendf(s, " LOAD");
    sql_limit_plan_describe(info, &lim, s);
    info->idxStr = sqlite3_str_finish(s);
    info->needToFreeIdxStr = 1;
    return SQLITE_OK;
}

static int set_err(sqlite3_vtab *vt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- cursors ---- */

typedef struct sql_cur {
    sqlite3_vtab_cursor base;
    cfdb_arena arena;        /* ranges of one xFilter */
    cfdb_arena row;          /* one row */
    cfdb_rl_cursor *rc;
    cfdb_rl_item item;
    bool eof;
    int cand;
    bool covering;
    sqlite3_int64 rowno;
    uint32_t plan_hash, binding_hash;
    bool point;              /* one record loaded by primary key, no cursor */
} sql_cur;

static int x_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    sql_tab *t = (sql_tab *)vt;
    int rc = conn_begin_use(t->conn, vt);
    if (rc)
        return rc;
    sql_cur *c = calloc(1, sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    cfdb_arena_init(&c->arena);
    cfdb_arena_init(&c->row);
    c->eof = true;
    t->conn->open_cursors++;
    *out = &c->base;
    return SQLITE_OK;
}

static int x_close(sqlite3_vtab_cursor *cur)
{
    sql_cur *c = (sql_cur *)cur;
    sql_tab *t = (sql_tab *)cur->pVtab;
    cfdb_rl_cursor_free(c->rc);
    cfdb_arena_free(&c->arena);
    cfdb_arena_free(&c->row);
    free(c);
    t->conn->open_cursors--;
    return SQLITE_OK;
}

/* A value as the column's tuple element; false when its type is not the column's. */
static bool value_elem(const sql_col *col, sqlite3_value *v, cfdb_tuple *t)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        if (col->type != SQL_INTEGER && col->type != SQL_BIGINT)
            return false;
        return cfdb_tuple_add_int(t, sqlite3_value_int64(v)) == 0;
    case SQLITE_TEXT:
        if (col->type != SQL_STRING)
            return false;
        return cfdb_tuple_add_string(t, (const char *)sqlite3_value_text(v),
                                     (size_t)sqlite3_value_bytes(v)) == 0;
    case SQLITE_BLOB:
        if (col->type != SQL_BYTES)
            return false;
        return cfdb_tuple_add_bytes(t, sqlite3_value_blob(v), (size_t)sqlite3_value_bytes(v)) == 0;
    default:
        return false;
    }
}

/* An equality's value as the key column's tuple element, converted as SQLite's comparison
 * converts it: EQ_ADDED, EQ_WIDEN (not usable: the scan widens), EQ_NO_ROW (no row's value
 * can be equal) or EQ_NO_MEMORY. An INTEGER or BIGINT column has INTEGER affinity, so the
 * value gets numeric affinity whatever its own (text '-6' is -6, 2.0 is 2; 2.5, 'x' and a blob equal no integer).
 * A BYTES column holds blobs only, and a blob equals no other type. A STRING column against a
 * number is left to SQLite: the number is text for a literal or parameter, but a column of
 * numeric affinity on the other side converts the string instead. */
typedef enum { EQ_ADDED, EQ_WIDEN, EQ_NO_ROW, EQ_NO_MEMORY } eq_result;

static eq_result eq_elem(const sql_col *col, sqlite3_value *v, cfdb_tuple *t)
{
    int vt = sqlite3_value_type(v);
    if (col->type == SQL_INTEGER || col->type == SQL_BIGINT) {
        sqlite3_int64 i = 0;
        double d = 0;
        if (vt == SQLITE_INTEGER) {
            i = sqlite3_value_int64(v);
        } else if (vt == SQLITE_FLOAT) {
            d = sqlite3_value_double(v);
        } else if (vt == SQLITE_TEXT) {
            /* on a copy: the argument may be a constant SQLite uses elsewhere */
            sqlite3_value *n = sqlite3_value_dup(v);
            if (!n)
                return EQ_NO_MEMORY;
            vt = sqlite3_value_numeric_type(n);
            if (vt == SQLITE_INTEGER)
                i = sqlite3_value_int64(n);
            else if (vt == SQLITE_FLOAT)
                d = sqlite3_value_double(n);
            sqlite3_value_free(n);
        }
        if (vt == SQLITE_FLOAT) {
            if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d))
                return EQ_NO_ROW;
            i = (sqlite3_int64)d;
        } else if (vt != SQLITE_INTEGER) {
            return EQ_NO_ROW;
        }
        return cfdb_tuple_add_int(t, i) == 0 ? EQ_ADDED : EQ_NO_MEMORY;
    }
    if (col->type == SQL_BYTES && vt != SQLITE_BLOB)
        return EQ_NO_ROW;
    return value_elem(col, v, t) ? EQ_ADDED : EQ_WIDEN;
}

static int cur_step(sql_cur *c)
{
    sql_tab *t = (sql_tab *)c->base.pVtab;
    for (;;) {
        cfdb_arena_reset(&c->row);
        bool has;
        int rc = cfdb_rl_cursor_next(c->rc, &c->row, &c->item, &has);
        if (rc)
            return conn_fail(t->conn, &t->base, rc, "reading");
        if (!has) {
            c->eof = true;
            return SQLITE_OK;
        }
        c->rowno++;
        if (c->cand < 0 && t->others_in_range && c->item.type != t->rt)
            continue;
        return SQLITE_OK;
    }
}

static int x_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                    sqlite3_value **argv)
{
    (void)idxStr;
    sql_cur *c = (sql_cur *)cur;
    sql_tab *t = (sql_tab *)cur->pVtab;
    sql_conn *conn = t->conn;
    cfdb_rl_cursor_free(c->rc);
    c->rc = NULL;
    c->eof = true;
    cfdb_arena_reset(&c->arena);
    int cand = (idxNum & 0x3ff) - 1;
    uint32_t neq = (uint32_t)(idxNum >> 10) & 0x3ff;
    int lo = (idxNum >> 20) & 3, hi = (idxNum >> 22) & 3;
    bool reverse = (idxNum >> 24) & 1;
    c->covering = (idxNum >> 25) & 1;
    bool resume = (idxNum >> 26) & 1;
    c->cand = cand;
    sql_limit_args lim;
    sql_limit_args_take(idxNum, argv, &argc, &lim);
    if (lim.no_rows)
        return SQLITE_OK;
    if (cand >= (int)t->nixs || (int)neq + (lo != 0) + (hi != 0) + resume > argc)
        return SQLITE_ERROR;
    cfdb_bytes cont = { 0 };
    if (resume) {
        sqlite3_value *cv = argv[argc - 1];
        if (sqlite3_value_type(cv) != SQLITE_BLOB && sqlite3_value_type(cv) != SQLITE_NULL) {
            set_err(&t->base, "CFDB_CONTINUATION of %s: a BLOB from an earlier page is needed",
                    t->rt->name);
            return SQLITE_MISMATCH;
        }
        if (sqlite3_value_type(cv) == SQLITE_BLOB) {
            const void *p = sqlite3_value_blob(cv);
            int n = sqlite3_value_bytes(cv);
            cont.ptr = n ? cfdb_arena_dup(&c->arena, p, (size_t)n) : NULL;
            cont.len = (uint32_t)n;
            if (n && !cont.ptr)
                return SQLITE_NOMEM;
            if (!n)
                cont.ptr = (const uint8_t *)"";
        }
        argc--;
    }
    /* a comparison with NULL matches nothing */
    for (int i = 0; i < argc; i++)
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
            return SQLITE_OK;
    if (resume && !cont.ptr)
        resume = false; /* NULL: from the start */
    const int *order = cand < 0 ? t->pk_order : t->ixs[cand].order;
    cfdb_tuple prefix, low, high;
    cfdb_tuple_init(&prefix, &c->arena);
    if (cand < 0 && t->rtk_first && cfdb_tuple_add_elem(&prefix, &t->rt->record_type_key))
        return SQLITE_NOMEM;
    uint32_t used = 0;
    bool widened = false;
    for (; used < neq; used++) {
        eq_result k = eq_elem(&t->cols[order[used]], argv[used], &prefix);
        if (k == EQ_NO_MEMORY)
            return SQLITE_NOMEM;
        if (k == EQ_NO_ROW)
            return SQLITE_OK; /* no row */
        if (k == EQ_WIDEN) {
            widened = true;
            break;
        }
    }
    cfdb_rl_range r = cfdb_rl_range_all();
    cfdb_tuple_init(&low, &c->arena);
    cfdb_tuple_init(&high, &c->arena);
    for (uint32_t i = 0; i < cfdb_tuple_count(&prefix); i++) {
        if (cfdb_tuple_add_elem(&low, cfdb_tuple_get(&prefix, i)) ||
            cfdb_tuple_add_elem(&high, cfdb_tuple_get(&prefix, i)))
            return SQLITE_NOMEM;
    }
    bool have_prefix = cfdb_tuple_count(&prefix) > 0;
    if (have_prefix) {
        r.low = &low;
        r.high = &high;
        r.low_endpoint = r.high_endpoint = CFDB_RL_RANGE_INCLUSIVE;
    }
    if (!widened) {
        const sql_col *col = neq < (cand < 0 ? t->npk_order : t->ixs[cand].norder)
                                 ? &t->cols[order[neq]] : NULL;
        int ai = (int)neq;
        bool lo_ok = false, hi_ok = false;
        bool lo_gt_text = false;
        if (lo && col) {
            if (lo == LO_GT && (col->type == SQL_STRING || col->type == SQL_BYTES) &&
                sqlite3_value_type(argv[ai]) == (col->type == SQL_STRING ? SQLITE_TEXT : SQLITE_BLOB)) {
                /* x > v is x >= v || 0x00: an exclusive tuple bound would also skip the
                 * values v || 0x00 ... whose packing starts with v's */
                size_t n = (size_t)sqlite3_value_bytes(argv[ai]);
                const void *src = col->type == SQL_STRING ? (const void *)sqlite3_value_text(argv[ai])
                                                          : sqlite3_value_blob(argv[ai]);
                uint8_t *v0 = cfdb_arena_alloc(&c->arena, n + 1);
                if (!v0)
                    return SQLITE_NOMEM;
                if (n)
                    memcpy(v0, src, n);
                v0[n] = 0;
                lo_ok = (col->type == SQL_STRING ? cfdb_tuple_add_string(&low, (const char *)v0, n + 1)
                                                 : cfdb_tuple_add_bytes(&low, v0, n + 1)) == 0;
                lo_gt_text = true;
            } else {
                lo_ok = value_elem(col, argv[ai], &low);
            }
            ai++;
        }
        if (hi && col)
            hi_ok = value_elem(col, argv[ai], &high);
        if (lo_ok) {
            r.low = &low;
            r.low_endpoint = lo == LO_GT && !lo_gt_text ? CFDB_RL_RANGE_EXCLUSIVE : CFDB_RL_RANGE_INCLUSIVE;
            if (!have_prefix) {
                r.high = NULL;
                r.high_endpoint = CFDB_RL_TREE_END;
            }
        } else if (hi_ok && !lo_ok) {
            /* an upper bound alone starts after the column's nulls */
            if (cfdb_tuple_add_null(&low))
                return SQLITE_NOMEM;
            r.low = &low;
            r.low_endpoint = CFDB_RL_RANGE_EXCLUSIVE;
        }
        if (hi_ok) {
            r.high = &high;
            r.high_endpoint = hi == HI_LT ? CFDB_RL_RANGE_EXCLUSIVE : CFDB_RL_RANGE_INCLUSIVE;
            if (!have_prefix && !lo_ok) {
                /* low stays (null) exclusive */
            }
        }
    }
    /* the plan and the range, for continuations: one given to another query is refused */
    c->plan_hash = sql_hash32(sql_hash32(0, t->rt->name, strlen(t->rt->name)),
                              &(int){ idxNum & ~(1 << 26 | SQL_LIMIT_PUSHED | SQL_OFFSET_PUSHED) },
                              sizeof(int));
    c->binding_hash = sql_hash32(0, &r.low_endpoint, sizeof r.low_endpoint);
    c->binding_hash = sql_hash32(c->binding_hash, &r.high_endpoint, sizeof r.high_endpoint);
    for (int side = 0; side < 2; side++) {
        const cfdb_tuple *tt = side ? r.high : r.low;
        cfdb_bytes packed;
        if (tt && cfdb_tuple_pack(&c->arena, (cfdb_bytes){ 0 }, tt, &packed) == 0)
            c->binding_hash = sql_hash32(c->binding_hash, packed.ptr, packed.len);
    }
    c->point = false;
    if (((idxNum >> 27) & 1) && !widened && cand < 0 && used == t->npk_order) {
        /* the record with this primary key, by one read */
        cfdb_rl_store *st;
        int rc = conn_store(conn, &t->base, &st);
        if (rc)
            return rc;
        cfdb_arena_reset(&c->row);
        cfdb_rl_loaded l;
        int e = cfdb_rl_store_load(st, conn->tr, &c->row, &prefix, &l);
        if (e)
            return conn_fail(conn, &t->base, e, "reading");
        if (!l.found || l.type != t->rt)
            return SQLITE_OK;
        memset(&c->item, 0, sizeof c->item);
        c->item.type = l.type;
        c->item.record = l.record;
        c->item.primary_key = l.primary_key;
        c->point = true;
        c->eof = false;
        c->rowno++;
        return SQLITE_OK;
    }
    if (resume) {
        sql_cont sc;
        if (sql_cont_decode(cont, &sc) || sc.plan_hash != c->plan_hash ||
            sc.binding_hash != c->binding_hash) {
            set_err(&t->base, "FoundationDB error 2000: CFDB_CONTINUATION is not one of this "
                    "query's continuations (another plan, other values, or not a continuation)");
            conn->last_error = CFDB_ERR_CLIENT_INVALID_OPERATION;
            return SQLITE_ERROR;
        }
        if (sc.at_end)
            return SQLITE_OK; /* the scan had ended: no rows after it */
        cont = sc.state;
    }
    cfdb_rl_store *st;
    int rc = conn_store(conn, &t->base, &st);
    if (rc)
        return rc;
    cfdb_rl_scan_props props = { .reverse = reverse, .limit = lim.limit };
    switch (conn->fetch) {
    case CFDB_SQL_SCAN_AND_FETCH:
        props.fetch = CFDB_RL_SCAN_AND_FETCH;
        break;
    case CFDB_SQL_USE_REMOTE_FETCH:
        props.fetch = CFDB_RL_USE_REMOTE_FETCH;
        break;
    default:
        props.fetch = CFDB_RL_USE_REMOTE_FETCH_WITH_FALLBACK;
        break;
    }
    int e;
    if (cand < 0)
        e = cfdb_rl_scan_records(st, conn->tr, &r, cont, &props, &c->rc);
    else if (c->covering)
        e = cfdb_rl_scan_index(st, conn->tr, t->ixs[cand].ix, &r, cont, &props, &c->rc);
    else
        e = cfdb_rl_scan_index_records(st, conn->tr, t->ixs[cand].ix, &r, cont, &props, &c->rc);
    if (e == CFDB_ERR_CLIENT_INVALID_OPERATION && cont.len) {
        set_err(&t->base, "FoundationDB error 2000: CFDB_CONTINUATION is not one of this "
                "query's continuations (%s)", fdb_get_error(e));
        conn->last_error = e;
        return SQLITE_ERROR;
    }
    if (e)
        return conn_fail(conn, &t->base, e, "starting a scan");
    c->eof = false;
    return cur_step(c);
}

static int x_next(sqlite3_vtab_cursor *cur)
{
    sql_cur *c = (sql_cur *)cur;
    if (c->point) {
        c->point = false;
        c->eof = true;
        return SQLITE_OK;
    }
    return cur_step(c);
}

static int x_eof(sqlite3_vtab_cursor *cur)
{
    return ((sql_cur *)cur)->eof;
}

/* Text for SQLite, NUL-terminated (a copy in a, the row's arena): SQLite marks such a value
 * terminated, so an application's sqlite3_column_text needs no terminator added — adding one
 * shrinks the value's buffer to the text, and the next row's value then allocates a new one:
 * a heap allocation per row. Text holding a NUL goes by length. */
static void result_text(cfdb_arena *a, sqlite3_context *ctx, const uint8_t *p, uint32_t n)
{
    char *z = n && memchr(p, 0, n) ? NULL : cfdb_arena_alloc(a, (size_t)n + 1);
    if (!z) {
        sqlite3_result_text(ctx, (const char *)p, (int)n, SQLITE_TRANSIENT);
        return;
    }
    if (n)
        memcpy(z, p, n);
    z[n] = 0;
    sqlite3_result_text(ctx, z, -1, SQLITE_TRANSIENT);
}

static void result_elem(cfdb_arena *a, sqlite3_context *ctx, const cfdb_tuple_elem *e)
{
    if (!e) {
        sqlite3_result_null(ctx);
        return;
    }
    switch (e->type) {
    case CFDB_TUPLE_INT:
        sqlite3_result_int64(ctx, e->v.i);
        break;
    case CFDB_TUPLE_STRING:
        result_text(a, ctx, e->v.bytes.ptr, e->v.bytes.len);
        break;
    case CFDB_TUPLE_BYTES:
        sqlite3_result_blob(ctx, e->v.bytes.ptr, (int)e->v.bytes.len, SQLITE_TRANSIENT);
        break;
    case CFDB_TUPLE_BOOL:
        sqlite3_result_int(ctx, e->v.b);
        break;
    case CFDB_TUPLE_FLOAT:
        sqlite3_result_double(ctx, e->v.f);
        break;
    case CFDB_TUPLE_DOUBLE:
        sqlite3_result_double(ctx, e->v.d);
        break;
    default:
        sqlite3_result_null(ctx);
        break;
    }
}

static int x_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
    sql_cur *c = (sql_cur *)cur;
    sql_tab *t = (sql_tab *)cur->pVtab;
    if ((uint32_t)i == t->ncols) {
        /* where the scan resumes after this row (empty: the scan ended with it) */
        bool end = false;
        cfdb_bytes k = c->rc ? cfdb_rl_cursor_continuation(c->rc, &end) : (cfdb_bytes){ 0 };
        sql_cont sc = { k, c->binding_hash, c->plan_hash, end };
        cfdb_bytes enc;
        if (sql_cont_encode(&c->row, &sc, &enc))
            return SQLITE_NOMEM;
        sqlite3_result_blob(ctx, enc.ptr, (int)enc.len, SQLITE_TRANSIENT);
        return SQLITE_OK;
    }
    if (i < 0 || (uint32_t)i > t->ncols) {
        sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    if (c->covering) {
        const sql_ix *x = &t->ixs[c->cand];
        if (x->kpos[i] >= 0)
            result_elem(&c->row, ctx, cfdb_tuple_get(&c->item.index_key, (uint32_t)x->kpos[i]));
        else if (x->vpos[i] >= 0)
            result_elem(&c->row, ctx, cfdb_tuple_get(&c->item.index_value, (uint32_t)x->vpos[i]));
        else
            sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    const cfdb_pb_msg *m = c->item.record;
    const cfdb_pb_field *f = t->cols[i].field;
    if (!m || !cfdb_pb_has(m, f)) {
        sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    const cfdb_pb_value *v = cfdb_pb_get(m, f, 0);
    switch (t->cols[i].type) {
    case SQL_BOOLEAN:
        sqlite3_result_int(ctx, v->b);
        break;
    case SQL_INTEGER:
    case SQL_BIGINT:
        sqlite3_result_int64(ctx, f->type == CFDB_PB_UINT32 || f->type == CFDB_PB_FIXED32
                                      ? (sqlite3_int64)(int32_t)v->u : (sqlite3_int64)v->i);
        break;
    case SQL_FLOAT:
        sqlite3_result_double(ctx, v->f);
        break;
    case SQL_DOUBLE:
        sqlite3_result_double(ctx, v->d);
        break;
    case SQL_STRING:
        result_text(&c->row, ctx, v->s.ptr, v->s.len);
        break;
    case SQL_BYTES:
        sqlite3_result_blob(ctx, v->s.ptr, (int)v->s.len, SQLITE_TRANSIENT);
        break;
    }
    return SQLITE_OK;
}

/* The row's primary key tuple (from the record, or from the index entry when covering). */
static int cur_pk(sql_cur *c, cfdb_arena *a, cfdb_tuple *out)
{
    sql_tab *t = (sql_tab *)c->base.pVtab;
    if (!c->covering) {
        *out = c->item.primary_key;
        return 0;
    }
    const sql_ix *x = &t->ixs[c->cand];
    cfdb_tuple_init(out, a);
    for (uint32_t i = 0; i < t->npk; i++) {
        int ci = t->pk_cols[i];
        const cfdb_tuple_elem *e = ci < 0 ? &t->rt->record_type_key
                                          : cfdb_tuple_get(&c->item.index_key, (uint32_t)x->kpos[ci]);
        if (!e || cfdb_tuple_add_elem(out, e))
            return CFDB_ERR_OUT_OF_MEMORY;
    }
    return 0;
}

static int x_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    sql_cur *c = (sql_cur *)cur;
    sql_tab *t = (sql_tab *)cur->pVtab;
    cfdb_arena *a = &c->row;
    cfdb_tuple pk;
    cfdb_bytes packed;
    int64_t id;
    if (cur_pk(c, a, &pk) || cfdb_tuple_pack(a, (cfdb_bytes){ 0 }, &pk, &packed) ||
        rowid_for(t->conn, packed, &id))
        return SQLITE_NOMEM;
    *rowid = id;
    return SQLITE_OK;
}

/* ---- writes ---- */

static int set_err(sqlite3_vtab *vt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_err(sqlite3_vtab *vt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_free(vt->zErrMsg);
    vt->zErrMsg = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    return SQLITE_ERROR;
}

/* Numeric affinity for a TEXT value: 1 integer, 2 real, 0 not a number. */
static int text_number(const char *s, int64_t *i, double *d)
{
    if (!s)
        return 0;
    while (*s == ' ')
        s++;
    if (!*s)
        return 0;
    char *end;
    long long ll = strtoll(s, &end, 10);
    while (*end == ' ')
        end++;
    if (!*end) {
        *i = ll;
        return 1;
    }
    double dd = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (!*end) {
        *d = dd;
        return 2;
    }
    return 0;
}

static int build_record(sql_tab *t, cfdb_arena *a, sqlite3_value **vals, cfdb_pb_msg **out)
{
    cfdb_pb_msg *m = cfdb_pb_msg_new(a, t->rt->descriptor);
    if (!m)
        return SQLITE_NOMEM;
    for (uint32_t i = 0; i < t->ncols; i++) {
        const sql_col *col = &t->cols[i];
        sqlite3_value *v = vals[i];
        int vt = sqlite3_value_type(v);
        if (vt == SQLITE_NULL) {
            if (col->not_null) {
                set_err(&t->base, "NOT NULL constraint failed: %s.%s", t->rt->name, col->name);
                return SQLITE_CONSTRAINT;
            }
            continue;
        }
        cfdb_pb_value pv = { 0 };
        int64_t iv = 0;
        double dv = 0;
        int num = vt == SQLITE_INTEGER ? 1 : vt == SQLITE_FLOAT ? 2 : 0;
        if (num == 1)
            iv = sqlite3_value_int64(v);
        else if (num == 2)
            dv = sqlite3_value_double(v);
        else if (vt == SQLITE_TEXT && col->type != SQL_STRING && col->type != SQL_BYTES)
            num = text_number((const char *)sqlite3_value_text(v), &iv, &dv);
        bool ok = true;
        switch (col->type) {
        case SQL_BOOLEAN:
            ok = num == 1 && (iv == 0 || iv == 1);
            pv.b = iv != 0;
            break;
        case SQL_INTEGER:
        case SQL_BIGINT:
            if (num == 2 && dv == floor(dv) && dv >= -9.2e18 && dv <= 9.2e18) {
                iv = (int64_t)dv;
                num = 1;
            }
            ok = num == 1 && (col->type == SQL_BIGINT || (iv >= INT32_MIN && iv <= INT32_MAX));
            pv.i = iv;
            break;
        case SQL_FLOAT:
            ok = num != 0;
            pv.f = (float)(num == 1 ? (double)iv : dv);
            break;
        case SQL_DOUBLE:
            ok = num != 0;
            pv.d = num == 1 ? (double)iv : dv;
            break;
        case SQL_STRING:
            ok = vt == SQLITE_TEXT;
            if (ok)
                pv.s = (cfdb_bytes){ sqlite3_value_text(v), (uint32_t)sqlite3_value_bytes(v) };
            break;
        case SQL_BYTES:
            ok = vt == SQLITE_BLOB;
            if (ok)
                pv.s = (cfdb_bytes){ sqlite3_value_blob(v), (uint32_t)sqlite3_value_bytes(v) };
            if (ok && !pv.s.ptr)
                pv.s.ptr = (const uint8_t *)"";
            break;
        }
        if (!ok) {
            static const char *const kinds[] = { "", "INTEGER", "REAL", "TEXT", "BLOB" };
            set_err(&t->base, "type mismatch: %s.%s is %s, the value is %s%s", t->rt->name,
                    col->name, sql_type_name(col->type), kinds[vt <= 4 ? vt : 0],
                    (col->type == SQL_INTEGER && num == 1) ? " out of INTEGER's range" : "");
            return SQLITE_MISMATCH;
        }
        if (cfdb_pb_set(m, col->field, pv))
            return SQLITE_NOMEM;
    }
    *out = m;
    return SQLITE_OK;
}

static int write_error(sql_tab *t, cfdb_rl_store *st, int rc)
{
    if (rc == CFDB_ERR_CLIENT_INVALID_OPERATION && cfdb_rl_store_last_violation(st)) {
        t->conn->last_error = rc;
        /* inside BEGIN..COMMIT the statement may have written before (earlier rows, the old
         * row of a new primary key): the transaction fails as a whole, as a uniqueness
         * violation fails a Record Layer transaction */
        if (!sqlite3_get_autocommit(t->conn->db) && t->conn->tr)
            t->conn->txn_error = rc;
        set_err(&t->base, "UNIQUE constraint failed: index %s of %s",
                cfdb_rl_store_last_violation(st)->name, t->rt->name);
        return SQLITE_CONSTRAINT;
    }
    if (rc == 2103 || rc == 2102) {
        t->conn->last_error = rc;
        set_err(&t->base, "FoundationDB error %d: %s (a row of %s over the Record Layer's limit: "
                "records of at most %d bytes without ENABLE_LONG_ROWS, index keys of at most %d)",
                rc, fdb_get_error(rc), t->rt->name, CFDB_RL_SPLIT_RECORD_SIZE, CFDB_RL_MAX_KEY_SIZE);
        return SQLITE_TOOBIG;
    }
    return conn_fail(t->conn, &t->base, rc, "writing");
}

static int pk_of_rowid(sql_tab *t, sqlite3_value *v, cfdb_arena *a, cfdb_tuple *pk)
{
    sqlite3_int64 id = sqlite3_value_int64(v);
    if (id < 1 || (size_t)id > t->conn->nrowids) {
        set_err(&t->base, "cfdb: row %lld of %s not read by this statement", (long long)id,
                t->rt->name);
        return SQLITE_ERROR;
    }
    cfdb_tuple_init(pk, a);
    if (cfdb_tuple_unpack(a, t->conn->rowids[id - 1], pk))
        return SQLITE_CORRUPT;
    return SQLITE_OK;
}

static int x_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid)
{
    sql_tab *t = (sql_tab *)vt;
    sql_conn *conn = t->conn;
    (void)rowid;
    cfdb_rl_store *st;
    int rc = conn_begin_use(conn, vt);
    if (rc || (rc = conn_store(conn, vt, &st)))
        return rc;
    cfdb_arena *a = &conn->write_arena;
    cfdb_arena_reset(a);
    if (argc == 1) {
        cfdb_tuple pk;
        if ((rc = pk_of_rowid(t, argv[0], a, &pk)))
            return rc;
        int e = cfdb_rl_store_delete(st, conn->tr, a, &pk, NULL);
        return e ? write_error(t, st, e) : SQLITE_OK;
    }
    if ((uint32_t)(argc - 2) != t->ncols + 1)
        return set_err(vt, "cfdb: %d values for %u columns", argc - 2, t->ncols);
    cfdb_pb_msg *m;
    if ((rc = build_record(t, a, argv + 2, &m)))
        return rc;
    cfdb_tuple pk;
    int e = cfdb_rl_primary_key(a, t->rt, m, &pk);
    if (e)
        return write_error(t, st, e);
    bool is_insert = sqlite3_value_type(argv[0]) == SQLITE_NULL;
    cfdb_tuple old;
    bool same_key = false;
    if (!is_insert) {
        if ((rc = pk_of_rowid(t, argv[0], a, &old)))
            return rc;
        same_key = cfdb_tuple_equal(&old, &pk);
    }
    if (!same_key) {
        /* a new primary key must be free (unless OR REPLACE / OR IGNORE) */
        cfdb_rl_loaded l;
        if ((e = cfdb_rl_store_load(st, conn->tr, a, &pk, &l)))
            return write_error(t, st, e);
        if (l.found) {
            int mode = sqlite3_vtab_on_conflict(conn->db);
            if (mode == SQLITE_IGNORE)
                return SQLITE_OK;
            if (mode != SQLITE_REPLACE) {
                sqlite3_str *s = sqlite3_str_new(NULL);
                for (uint32_t i = 0; i < t->npk_order; i++)
                    sqlite3_str_appendf(s, "%s%s.%s", i ? ", " : "", t->rt->name,
                                        t->cols[t->pk_order[i]].name);
                char *cols = sqlite3_str_finish(s);
                set_err(vt, "UNIQUE constraint failed: %s (primary key)", cols ? cols : "");
                sqlite3_free(cols);
                /* as a unique index's refusal (write_error): fails BEGIN..COMMIT */
                if (!sqlite3_get_autocommit(conn->db) && conn->tr)
                    conn->txn_error = CFDB_ERR_CLIENT_INVALID_OPERATION;
                return SQLITE_CONSTRAINT;
            }
        }
        if (!is_insert && (e = cfdb_rl_store_delete(st, conn->tr, a, &old, NULL)))
            return write_error(t, st, e);
    }
    e = cfdb_rl_store_save(st, conn->tr, a, m, NULL);
    if (e) {
        int mode = sqlite3_vtab_on_conflict(conn->db);
        if (e == CFDB_ERR_CLIENT_INVALID_OPERATION && cfdb_rl_store_last_violation(st) &&
            mode == SQLITE_IGNORE && (same_key || is_insert))   /* not after deleting the old row */
            return SQLITE_OK;
        return write_error(t, st, e);
    }
    return SQLITE_OK;
}

static int x_begin(sqlite3_vtab *vt)
{
    sql_tab *t = (sql_tab *)vt;
    sql_conn *c = t->conn;
    if (c->writing)
        return SQLITE_OK;
    int rc = conn_begin_use(c, vt);
    if (rc)
        return rc;
    c->writing = true;
    c->synced = false;
    return SQLITE_OK;
}

static int x_sync(sqlite3_vtab *vt)
{
    sql_tab *t = (sql_tab *)vt;
    sql_conn *c = t->conn;
    if (!c->writing || c->synced)
        return SQLITE_OK;
    if (c->txn_error)
        return conn_begin_use(c, vt);
    c->synced = true;
    if (!c->tr)
        return SQLITE_OK; /* nothing was read or written */
    int e = c->store ? cfdb_rl_store_prepare_commit(c->store, c->tr) : 0;
    if (!e) {
        FDBFuture *f = fdb_transaction_commit(c->tr);
        e = fdb_future_block_until_ready(f);
        if (!e)
            e = fdb_future_get_error(f);
        fdb_future_destroy(f);
    }
    if (e) {
        c->txn_error = 0;
        /* failed commit: keep the transaction for on_error, nothing was written */
        c->last_error = e;
        sqlite3_free(vt->zErrMsg);
        vt->zErrMsg = sqlite3_mprintf("FoundationDB error %d: %s (commit)", e, fdb_get_error(e));
        if (c->failed_tr)
            fdb_transaction_destroy(c->failed_tr);
        c->failed_tr = c->tr;
        c->failed_ready = false;
        c->tr = NULL;
        cfdb_rl_store_free(c->store);
        c->store = NULL;
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

static int x_commit(sqlite3_vtab *vt)
{
    sql_conn *c = ((sql_tab *)vt)->conn;
    if (c->writing)
        conn_release_txn(c);
    return SQLITE_OK;
}

static int x_rollback(sqlite3_vtab *vt)
{
    sql_conn *c = ((sql_tab *)vt)->conn;
    if (c->writing) {
        if (c->tr)
            fdb_transaction_cancel(c->tr);
        conn_release_txn(c);
    } else if (c->txn_error) {
        conn_release_txn(c);
    }
    return SQLITE_OK;
}

static sqlite3_module table_module = {
    .iVersion = 1,
    .xCreate = NULL, /* eponymous only */
    .xConnect = x_connect,
    .xBestIndex = x_best_index,
    .xDisconnect = x_disconnect,
    .xDestroy = x_disconnect,
    .xOpen = x_open,
    .xClose = x_close,
    .xFilter = x_filter,
    .xNext = x_next,
    .xEof = x_eof,
    .xColumn = x_column,
    .xRowid = x_rowid,
    .xUpdate = x_update,
    .xBegin = x_begin,
    .xSync = x_sync,
    .xCommit = x_commit,
    .xRollback = x_rollback,
};

static void module_data_free(void *p)
{
    sql_module_data *m = p;
    conn_unref(m->conn);
    free(m);
}

/* ---- the C API ---- */

typedef int (*txn_fn)(void *ctx, FDBTransaction *tr, char *err, size_t errcap);

/* fn in a transaction with the standard retry loop; a non-FDB refusal (2000 with a message)
 * is not retried. */
static int run_txn(FDBDatabase *db, txn_fn fn, void *ctx, char *err, size_t errcap)
{
    FDBTransaction *tr;
    int e = fdb_database_create_transaction(db, &tr);
    if (e)
        return e;
    for (int attempt = 0;; attempt++) {
        if (err && errcap)
            err[0] = 0;
        e = fn(ctx, tr, err, errcap);
        if (!e) {
            FDBFuture *f = fdb_transaction_commit(tr);
            e = fdb_future_block_until_ready(f);
            if (!e)
                e = fdb_future_get_error(f);
            fdb_future_destroy(f);
            if (!e)
                break;
        }
        if (!fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, e) || attempt >= 100)
            break;
        FDBFuture *f = fdb_transaction_on_error(tr, e);
        int e2 = fdb_future_block_until_ready(f);
        if (!e2)
            e2 = fdb_future_get_error(f);
        fdb_future_destroy(f);
        if (e2) {
            e = e2;
            break;
        }
    }
    if (e && err && errcap && !err[0])
        sql_errf(err, errcap, "FoundationDB error %d: %s", e, fdb_get_error(e));
    fdb_transaction_destroy(tr);
    return e;
}

typedef struct ddl_ctx {
    sql_catalog *cat;
    const sql_ddl *d;
} ddl_ctx;

static int ddl_txn(void *ctx, FDBTransaction *tr, char *err, size_t errcap)
{
    ddl_ctx *d = ctx;
    return sql_catalog_exec(d->cat, tr, d->d, err, errcap);
}

int cfdb_sql_ddl(FDBDatabase *db, const char *ddl, char *err, size_t errcap)
{
    if (err && errcap)
        err[0] = 0;
    sql_catalog *cat;
    int rc = catalog_get(&cat, err, errcap);
    if (rc)
        return rc;
    cfdb_arena a;
    cfdb_arena_init(&a);
    sql_ddl *d;
    rc = sql_ddl_parse(&a, ddl, strlen(ddl), &d, err, errcap);
    if (!rc) {
        ddl_ctx c = { cat, d };
        rc = run_txn(db, ddl_txn, &c, err, errcap);
    }
    cfdb_arena_free(&a);
    return rc;
}

typedef struct load_ctx {
    sql_catalog *cat;
    sql_conn *conn;
    const char *db, *schema;
    cfdb_arena *a;
    sql_schema_info info;
    cfdb_rl_metadata *md;
    bool *readable;
} load_ctx;

static int load_txn(void *ctx, FDBTransaction *tr, char *err, size_t errcap)
{
    load_ctx *l = ctx;
    cfdb_rl_metadata_free(l->md);
    l->md = NULL;
    int rc = sql_catalog_load_schema(l->cat, tr, l->a, l->db, l->schema, &l->info, err, errcap);
    if (rc)
        return rc;
    cfdb_pb_error pe = { 0 };
    if ((rc = cfdb_rl_metadata_from_proto(l->info.metadata.ptr, l->info.metadata.len, &l->md, &pe))) {
        sql_errf(err, errcap, "schema template %s: %s", l->info.template_name, pe.message);
        return rc;
    }
    /* opening the store brings it to the template's version; indexes to build are left
     * disabled for the online indexer (sql_indexes.c) */
    cfdb_rl_store *st;
    cfdb_rl_open_options oo = { .too_many_records_state = CFDB_RL_INDEX_DISABLED, .build_online = true };
    if ((rc = cfdb_rl_store_open_with(tr, l->md, l->info.prefix, CFDB_RL_OPEN, &oo, &st))) {
        sql_errf(err, errcap, "opening the store of %s/%s: FoundationDB error %d: %s", l->db,
                 l->schema, rc, fdb_get_error(rc));
        return rc;
    }
    l->readable = cfdb_arena_alloc(l->a, (l->md->index_count ? l->md->index_count : 1) * sizeof *l->readable);
    if (!l->readable) {
        cfdb_rl_store_free(st);
        return CFDB_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < l->md->index_count; i++)
        l->readable[i] = cfdb_rl_store_index_state(st, l->md->indexes[i].name) == CFDB_RL_INDEX_READABLE;
    cfdb_rl_store_free(st);
    return 0;
}

static void fn_ddl(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    sql_conn *c = sqlite3_user_data(ctx);
    const char *text = (const char *)sqlite3_value_text(argv[0]);
    if (!text) {
        sqlite3_result_error(ctx, "cfdb_ddl: a DDL statement is needed", -1);
        return;
    }
    char err[512];
    int rc = cfdb_sql_ddl(c->fdb, text, err, sizeof err);
    c->last_error = rc;
    if (rc)
        sqlite3_result_error(ctx, err, -1);
    else
        sqlite3_result_text(ctx, "OK", 2, SQLITE_STATIC);
}

static void fn_fetch(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sql_conn *c = sqlite3_user_data(ctx);
    if (argc == 1) {
        const char *m = (const char *)sqlite3_value_text(argv[0]);
        if (m && sqlite3_stricmp(m, "SCAN_AND_FETCH") == 0)
            c->fetch = CFDB_SQL_SCAN_AND_FETCH;
        else if (m && sqlite3_stricmp(m, "USE_REMOTE_FETCH") == 0)
            c->fetch = CFDB_SQL_USE_REMOTE_FETCH;
        else if (m && sqlite3_stricmp(m, "USE_REMOTE_FETCH_WITH_FALLBACK") == 0)
            c->fetch = CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK;
        else {
            sqlite3_result_error(ctx, "cfdb_fetch_method: SCAN_AND_FETCH, USE_REMOTE_FETCH or "
                                      "USE_REMOTE_FETCH_WITH_FALLBACK", -1);
            return;
        }
    }
    sqlite3_result_text(ctx, fetch_name(c->fetch), -1, SQLITE_STATIC);
}

/* Drops the table modules of the schema attached before, keeping every other module. */
static void drop_table_modules(sqlite3 *db, const sql_conn *old)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_module_list", -1, &st, NULL) != SQLITE_OK)
        return;
    const char **keep = NULL;
    size_t n = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name || cfdb_rl_record_type_by_name(old->md, name))
            continue;
        if (n + 1 >= cap) {
            size_t nc = cap ? cap * 2 : 32;
            const char **k = realloc(keep, nc * sizeof *k);
            if (!k)
                break;
            keep = k;
            cap = nc;
        }
        keep[n++] = sqlite3_mprintf("%s", name);
    }
    sqlite3_finalize(st);
    if (keep) {
        keep[n] = NULL;
        sqlite3_drop_modules(db, keep);
        for (size_t i = 0; i < n; i++)
            sqlite3_free((void *)keep[i]);
        free(keep);
    }
}

/* cfdb_index_value(index [, group value...]): an aggregate index's value for a group, read
 * from the index (store.h: P + (2, subspace key, group...) holds a little-endian int64 for
 * count, count_not_null, sum, max_ever_long, min_ever_long, and the packed grouped tuple for
 * max_ever_tuple / min_ever_tuple); NULL when the group has none. In the statement's
 * transaction, as the tables' reads. */
static void fn_index_value(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sql_conn *c = sqlite3_user_data(ctx);
    const char *name = argc ? (const char *)sqlite3_value_text(argv[0]) : NULL;
    const cfdb_rl_index *ix = name ? cfdb_rl_index_by_name(c->md, name) : NULL;
    if (!ix || !strcmp(ix->type, "value") || !strcmp(ix->type, "version")) {
        char *m = sqlite3_mprintf("cfdb_index_value: %s is not an aggregate index of %s/%s",
                                  name ? name : "NULL", c->db_path, c->schema);
        sqlite3_result_error(ctx, m, -1);
        sqlite3_free(m);
        return;
    }
    uint32_t groups = ix->root->kind == CFDB_KEX_GROUPING
                          ? cfdb_kex_columns(ix->root) - (uint32_t)ix->root->n1 : 0;
    if ((uint32_t)(argc - 1) != groups) {
        char *m = sqlite3_mprintf("cfdb_index_value: index %s has %u group columns, %d given",
                                  name, groups, argc - 1);
        sqlite3_result_error(ctx, m, -1);
        sqlite3_free(m);
        return;
    }
    int rc = conn_begin_use(c, NULL);
    cfdb_rl_store *st = NULL;
    if (!rc)
        rc = conn_store(c, NULL, &st);
    if (rc) {
        char *m = sqlite3_mprintf("FoundationDB error %d: %s", c->last_error,
                                  fdb_get_error(c->last_error));
        sqlite3_result_error(ctx, m, -1);
        sqlite3_free(m);
        return;
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_tuple key;
    cfdb_tuple_init(&key, &a);
    int e = cfdb_tuple_add_int(&key, 2);
    if (!e)
        e = cfdb_tuple_add_elem(&key, &ix->subspace_key);
    for (int i = 1; i < argc && !e; i++) {
        sqlite3_value *v = argv[i];
        switch (sqlite3_value_type(v)) {
        case SQLITE_INTEGER:
            e = cfdb_tuple_add_int(&key, sqlite3_value_int64(v));
            break;
        case SQLITE_FLOAT:
            e = cfdb_tuple_add_double(&key, sqlite3_value_double(v));
            break;
        case SQLITE_TEXT:
            e = cfdb_tuple_add_string(&key, (const char *)sqlite3_value_text(v), (size_t)sqlite3_value_bytes(v));
            break;
        case SQLITE_BLOB:
            e = cfdb_tuple_add_bytes(&key, sqlite3_value_blob(v), (size_t)sqlite3_value_bytes(v));
            break;
        default:
            e = cfdb_tuple_add_null(&key);
        }
    }
    cfdb_bytes k;
    if (!e)
        e = cfdb_tuple_pack(&a, cfdb_rl_store_prefix(st), &key, &k);
    FDBFuture *f = NULL;
    fdb_bool_t present = 0;
    const uint8_t *val = NULL;
    int len = 0;
    if (!e) {
        f = fdb_transaction_get(c->tr, k.ptr, (int)k.len, 0);
        e = fdb_future_block_until_ready(f);
        if (!e)
            e = fdb_future_get_error(f);
        if (!e)
            e = fdb_future_get_value(f, &present, &val, &len);
    }
    if (e) {
        conn_fail(c, NULL, e, "reading an aggregate index");
        char *m = sqlite3_mprintf("FoundationDB error %d: %s", e, fdb_get_error(e));
        sqlite3_result_error(ctx, m, -1);
        sqlite3_free(m);
    } else if (!present) {
        sqlite3_result_null(ctx);
    } else if (strstr(ix->type, "_tuple")) {
        cfdb_tuple t;
        cfdb_tuple_init(&t, &a);
        if (cfdb_tuple_unpack(&a, (cfdb_bytes){ val, (uint32_t)len }, &t) || cfdb_tuple_count(&t) == 0)
            sqlite3_result_error(ctx, "cfdb_index_value: a stored value that does not decode", -1);
        else
            result_elem(&a, ctx, cfdb_tuple_get(&t, cfdb_tuple_count(&t) - 1));
    } else {
        int64_t v = 0;
        for (int i = 0; i < len && i < 8; i++)
            v |= (int64_t)((uint64_t)val[i] << (8 * i));
        sqlite3_result_int64(ctx, v);
    }
    if (f)
        fdb_future_destroy(f);
    cfdb_arena_free(&a);
}

/* cfdb_tables(): the schema's tables, comma-separated */
static void fn_tables(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    sql_conn *c = sqlite3_user_data(ctx);
    sqlite3_str *s = sqlite3_str_new(NULL);
    for (uint32_t i = 0; i < c->md->record_type_count; i++)
        sqlite3_str_appendf(s, "%s%s", i ? "," : "", c->md->record_types[i].name);
    char *out = sqlite3_str_finish(s);
    sqlite3_result_text(ctx, out ? out : "", -1, SQLITE_TRANSIENT);
    sqlite3_free(out);
}

/* cfdb_build_indexes([max records per transaction [, max transactions]]): builds the
 * indexes that are not readable (sql_indexes.c); the number of batch transactions. */
static void fn_build_indexes(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sql_conn *c = sqlite3_user_data(ctx);
    if (c->writing || !sqlite3_get_autocommit(c->db)) {
        sqlite3_result_error(ctx, "cfdb_build_indexes: not inside a transaction", -1);
        return;
    }
    int64_t lim[2] = { 0, 0 };
    for (int i = 0; i < argc && i < 2; i++)
        if ((lim[i] = sqlite3_value_int64(argv[i])) < 0 || lim[i] > UINT32_MAX) {
            sqlite3_result_error(ctx, "cfdb_build_indexes: limits are counts (0: the default)", -1);
            return;
        }
    sql_build_report rep;
    char err[768] = "";
    int rc = sql_indexes_build(c->fdb, c->md, c->prefix, c->readable, (uint32_t)lim[0], (uint32_t)lim[1], false,
                               &rep, err, sizeof err);
    if (rc) {
        c->last_error = rc;
        sqlite3_result_error(ctx, err, -1);
        return;
    }
    sqlite3_result_int64(ctx, rep.transactions);
}

static void conn_fn_free(void *p)
{
    conn_unref(p);
}

int cfdb_sql_attach(sqlite3 *db, FDBDatabase *fdb, const char *db_path, const char *schema,
                    char *err, size_t errcap)
{
    if (err && errcap)
        err[0] = 0;
    if (!db || !fdb || !db_path || !schema) {
        sql_errf(err, errcap, "cfdb_sql_attach: a connection, a database, a path and a schema");
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    sql_catalog *cat;
    int rc = catalog_get(&cat, err, errcap);
    if (rc)
        return rc;
    sql_conn *old = conn_of(db);
    if (old && (old->tr || old->writing)) {
        sql_errf(err, errcap, "cfdb_sql_attach: a transaction is in progress");
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    sql_conn *c = calloc(1, sizeof *c);
    size_t lp = strlen(db_path), ls = strlen(schema);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_arena_init(&c->md_arena);
    cfdb_arena_init(&c->rowid_arena);
    cfdb_arena_init(&c->write_arena);
    c->db = db;
    c->fdb = fdb;
    c->refs = 1;
    c->fetch = CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK;
    c->db_path = cfdb_arena_dup(&c->md_arena, db_path, lp + 1);
    c->schema = cfdb_arena_alloc(&c->md_arena, ls + 1);
    if (!c->db_path || !c->schema) {
        conn_unref(c);
        return CFDB_ERR_OUT_OF_MEMORY;
    }
    /* unquoted names fold to upper case, as in the DDL */
    for (size_t i = 0; i <= ls; i++)
        c->schema[i] = (char)((schema[i] >= 'a' && schema[i] <= 'z') ? schema[i] - 32 : schema[i]);
    load_ctx l = { cat, c, c->db_path, c->schema, &c->md_arena, { 0 }, NULL, NULL };
    rc = run_txn(fdb, load_txn, &l, err, errcap);
    /* indexes the upgrade left unbuilt: the online indexer, in bounded transactions */
    if (!rc)
        rc = sql_indexes_build_on_open(fdb, l.md, l.info.prefix, l.readable, err, errcap);
    if (rc) {
        cfdb_rl_metadata_free(l.md);
        conn_unref(c);
        return rc;
    }
    c->md = l.md;
    c->prefix = l.info.prefix;
    c->readable = l.readable;
    /* the modules of a schema attached before go */
    if (old) {
        drop_table_modules(db, old);
        pthread_mutex_lock(&g_lock);
        old->db = NULL;
        pthread_mutex_unlock(&g_lock);
    }
    pthread_mutex_lock(&g_lock);
    c->next_global = g_conns;
    g_conns = c;
    pthread_mutex_unlock(&g_lock);
    for (uint32_t i = 0; i < c->md->record_type_count; i++) {
        const char *name = c->md->record_types[i].name;
        size_t n = strlen(name);
        sql_module_data *m = malloc(sizeof *m + n + 1);
        if (!m) {
            rc = CFDB_ERR_OUT_OF_MEMORY;
            break;
        }
        m->conn = c;
        memcpy(m->name, name, n + 1);
        c->refs++;
        if (sqlite3_create_module_v2(db, name, &table_module, m, module_data_free) != SQLITE_OK) {
            sql_errf(err, errcap, "registering table %s: %s", name, sqlite3_errmsg(db));
            rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
            break;
        }
    }
    c->refs += 5;
    if (!rc && (sqlite3_create_function_v2(db, "cfdb_ddl", 1, SQLITE_UTF8, c, fn_ddl, NULL, NULL,
                                           conn_fn_free) != SQLITE_OK ||
                sqlite3_create_function_v2(db, "cfdb_build_indexes", -1, SQLITE_UTF8, c, fn_build_indexes,
                                           NULL, NULL, conn_fn_free) != SQLITE_OK ||
                sqlite3_create_function_v2(db, "cfdb_tables", 0, SQLITE_UTF8, c, fn_tables, NULL,
                                           NULL, conn_fn_free) != SQLITE_OK ||
                sqlite3_create_function_v2(db, "cfdb_index_value", -1, SQLITE_UTF8, c,
                                           fn_index_value, NULL, NULL, conn_fn_free) != SQLITE_OK ||
                sqlite3_create_function_v2(db, "cfdb_fetch_method", -1, SQLITE_UTF8, c, fn_fetch,
                                           NULL, NULL, conn_fn_free) != SQLITE_OK)) {
        sql_errf(err, errcap, "registering functions: %s", sqlite3_errmsg(db));
        rc = CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    conn_unref(c); /* the attach's own reference */
    return rc;
}

int cfdb_sql_open(FDBDatabase *fdb, const char *db_path, const char *schema, sqlite3 **out,
                  char *err, size_t errcap)
{
    *out = NULL;
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        sql_errf(err, errcap, "sqlite3_open: %s", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return CFDB_ERR_OUT_OF_MEMORY;
    }
    int rc = cfdb_sql_attach(db, fdb, db_path, schema, err, errcap);
    if (rc) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

int cfdb_sql_last_error(sqlite3 *db)
{
    sql_conn *c = conn_of(db);
    return c ? c->last_error : 0;
}

int cfdb_sql_set_fetch_method(sqlite3 *db, cfdb_sql_fetch method)
{
    sql_conn *c = conn_of(db);
    if (!c || (unsigned)method > CFDB_SQL_USE_REMOTE_FETCH_WITH_FALLBACK)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    c->fetch = method;
    return 0;
}

int cfdb_sql_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **),
                  void *ctx, char **errmsg)
{
    if (errmsg)
        *errmsg = NULL;
    const char *rest = sql;
    while (rest && *rest) {
        sqlite3_stmt *st;
        const char *tail;
        int rc = sqlite3_prepare_v2(db, rest, -1, &st, &tail);
        if (rc) {
            if (errmsg)
                *errmsg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
            return rc;
        }
        if (!st) { /* whitespace or a comment */
            rest = tail;
            continue;
        }
        for (int attempt = 0;; attempt++) {
            sql_conn *c = conn_of(db);
            if (c)
                c->last_error = 0;
            bool autocommit = sqlite3_get_autocommit(db);
            int ncol = sqlite3_column_count(st);
            while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (!cb)
                    continue;
                char *vals[ncol > 0 ? ncol : 1], *names[ncol > 0 ? ncol : 1];
                for (int i = 0; i < ncol; i++) {
                    vals[i] = (char *)sqlite3_column_text(st, i);
                    names[i] = (char *)sqlite3_column_name(st, i);
                }
                if (cb(ctx, ncol, vals, names)) {
                    sqlite3_finalize(st);
                    if (errmsg)
                        *errmsg = sqlite3_mprintf("query aborted");
                    return SQLITE_ABORT;
                }
            }
            if (rc == SQLITE_DONE)
                break;
            int e = c ? c->last_error : 0;
            if (e && autocommit && c->failed_tr && attempt < 100 &&
                fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, e)) {
                FDBFuture *f = fdb_transaction_on_error(c->failed_tr, e);
                int e2 = fdb_future_block_until_ready(f);
                if (!e2)
                    e2 = fdb_future_get_error(f);
                fdb_future_destroy(f);
                if (!e2) {
                    c->failed_ready = true;
                    sqlite3_reset(st);
                    continue;
                }
            }
            if (errmsg)
                *errmsg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
            sqlite3_finalize(st);
            return rc;
        }
        sqlite3_finalize(st);
        rest = tail;
    }
    return SQLITE_OK;
}

typedef struct list_ctx {
    sql_catalog *cat;
    const char *db;
    sql_schema_fn fn;
    void *ctx;
} list_ctx;

static int list_txn(void *ctx, FDBTransaction *tr, char *err, size_t errcap)
{
    list_ctx *l = ctx;
    (void)err;
    (void)errcap;
    return sql_catalog_list_schemas(l->cat, tr, l->db, l->fn, l->ctx);
}

int cfdb_sql_list_schemas(FDBDatabase *fdb, const char *db_path,
                          int (*fn)(void *ctx, const char *db, const char *schema,
                                    const char *template_name, int template_version),
                          void *ctx, char *err, size_t errcap)
{
    sql_catalog *cat;
    int rc = catalog_get(&cat, err, errcap);
    if (rc)
        return rc;
    list_ctx l = { cat, db_path, (sql_schema_fn)fn, ctx };
    return run_txn(fdb, list_txn, &l, err, errcap);
}
