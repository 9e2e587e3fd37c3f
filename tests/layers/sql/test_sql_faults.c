/* SPDX-License-Identifier: Apache-2.0 */
/* SQL writes under server faults leave every index exactly consistent with the records.
 *
 * Against a cfdb-server of its own, a seeded random mix of INSERT, INSERT OR REPLACE, UPDATE
 * (by primary key, by an indexed column, of the primary key, relative qty = qty + d) and
 * DELETE statements, autocommit and BEGIN..COMMIT, on a table with two value indexes (one
 * unique, one with a value column), grouped COUNT and SUM indexes and an ungrouped COUNT,
 * while the server's control port makes commits fail with commit_unknown_result (applied
 * or not) and drops every connection, before statements and between the statements of a
 * transaction.
 *
 * The test retries as a FoundationDB user must: an error that says the commit did not
 * happen (retryable, not maybe-committed) runs the transaction again; a maybe-committed one
 * (commit_unknown_result) is resolved by reading the table: it must equal either the model
 * before the transaction (run it again) or after it (done), anything else is a torn write.
 * The in-memory model predicts each statement's outcome (UNIQUE refusals included), and the
 * table is compared with it every 100 transactions and at the end.
 *
 * The index check is independent of the code that writes index entries: it reads the raw
 * keys under the store's index space P + (2) with the client API and compares them with
 * the entries it computes itself from the rows (tuple encoding only): for a value index
 * P + (2, name, key..., 0, id) = pack(value columns), for an aggregate P + (2, name, group...)
 * = the little-endian int64 COUNT or SUM (an entry of 0 for a group without rows is allowed:
 * atomic adds leave it).
 *
 * CFDB_SQL_FAULTS_SEED picks the seed (printed, and again on failure);
 * CFDB_SQL_FAULTS_TXNS the number of transactions (600). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../api/api_helpers.h"
#include "cfdb/arena.h"
#include "cfdb/sql.h"
#include "cfdb/tuple.h"

#define N_IDS 120       /* ids 1..N_IDS */
#define N_CODES 240     /* codes "c0".."c239": collisions happen */
#define N_CITIES 4      /* city -1 (NULL), 0..3 */
#define N_GRPS 5
#define MAX_STMTS 6

static unsigned long long g_seed;
static unsigned long long g_rng;
static sqlite3 *g_db;
static char g_msg[512];   /* the message of the last failed statement */

#define FAIL(...)                                                                        \
    do {                                                                                 \
        fprintf(stderr, "test_sql_faults: CFDB_SQL_FAULTS_SEED=%llu\n", g_seed);        \
        fail_msg(__VA_ARGS__);                                                           \
    } while (0)

static uint32_t rnd(uint32_t n)
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((g_rng >> 33) % n);
}

/* ---- the model ---- */

typedef struct row {
    bool present;
    int code;          /* "c<code>" */
    int city;          /* -1: NULL */
    int grp;
    long long qty;
} row;

typedef struct model {
    row r[N_IDS + 1];
} model;

static model g_model;

static int code_owner(const model *m, int code)
{
    for (int i = 1; i <= N_IDS; i++)
        if (m->r[i].present && m->r[i].code == code)
            return i;
    return 0;
}

static const char *city_sql(int city, char *buf, size_t cap)
{
    if (city < 0)
        snprintf(buf, cap, "NULL");
    else
        snprintf(buf, cap, "'city%d'", city);
    return buf;
}

typedef struct stmt {
    char sql[256];
    bool constraint;   /* the model says: refused by a UNIQUE constraint */
} stmt;

/* One random statement applied to *m (unless refused). */
static void gen_stmt(model *m, stmt *s)
{
    char cb[32];
    int id = 1 + (int)rnd(N_IDS);
    row *r = &m->r[id];
    s->constraint = false;
    switch (rnd(11)) {
    case 0:
    case 1:
    case 9:
    case 10: { /* INSERT */
        int code = (int)rnd(N_CODES), city = (int)rnd(N_CITIES + 1) - 1, grp = (int)rnd(N_GRPS);
        long long qty = rnd(1000);
        snprintf(s->sql, sizeof s->sql, "INSERT INTO item VALUES (%d, 'c%d', %s, %d, %lld)", id, code,
                 city_sql(city, cb, sizeof cb), grp, qty);
        if (r->present || code_owner(m, code)) {
            s->constraint = true;
        } else {
            *r = (row){ true, code, city, grp, qty };
        }
        break;
    }
    case 2: { /* INSERT OR REPLACE: replaces by primary key; another row's code is refused */
        int code = (int)rnd(N_CODES), city = (int)rnd(N_CITIES + 1) - 1, grp = (int)rnd(N_GRPS);
        long long qty = rnd(1000);
        snprintf(s->sql, sizeof s->sql, "INSERT OR REPLACE INTO item VALUES (%d, 'c%d', %s, %d, %lld)", id,
                 code, city_sql(city, cb, sizeof cb), grp, qty);
        int owner = code_owner(m, code);
        if (owner && owner != id)
            s->constraint = true;
        else
            *r = (row){ true, code, city, grp, qty };
        break;
    }
    case 3: { /* relative update: not idempotent */
        int d = 1 + (int)rnd(50);
        snprintf(s->sql, sizeof s->sql, "UPDATE item SET qty = qty + %d WHERE id = %d", d, id);
        if (r->present)
            r->qty += d;
        break;
    }
    case 4: { /* the unique column and an indexed one */
        int code = (int)rnd(N_CODES), city = (int)rnd(N_CITIES + 1) - 1;
        snprintf(s->sql, sizeof s->sql, "UPDATE item SET code = 'c%d', city = %s WHERE id = %d", code,
                 city_sql(city, cb, sizeof cb), id);
        int owner = code_owner(m, code);
        if (r->present && owner && owner != id) {
            s->constraint = true;
        } else if (r->present) {
            r->code = code;
            r->city = city;
        }
        break;
    }
    case 5: { /* many rows through the BY_CITY index: the group moves */
        int city = (int)rnd(N_CITIES), grp = (int)rnd(N_GRPS);
        snprintf(s->sql, sizeof s->sql, "UPDATE item SET grp = %d WHERE city = 'city%d'", grp, city);
        for (int i = 1; i <= N_IDS; i++)
            if (m->r[i].present && m->r[i].city == city)
                m->r[i].grp = grp;
        break;
    }
    case 6: { /* a new primary key */
        int nid = 1 + (int)rnd(N_IDS);
        snprintf(s->sql, sizeof s->sql, "UPDATE item SET id = %d WHERE id = %d", nid, id);
        if (r->present && nid != id && m->r[nid].present) {
            s->constraint = true;
        } else if (r->present && nid != id) {
            m->r[nid] = *r;
            r->present = false;
        }
        break;
    }
    case 7: /* DELETE by primary key */
        snprintf(s->sql, sizeof s->sql, "DELETE FROM item WHERE id = %d", id);
        r->present = false;
        break;
    default: { /* DELETE of many rows, by a scan */
        int grp = (int)rnd(N_GRPS);
        long long q = 500 + rnd(600);
        snprintf(s->sql, sizeof s->sql, "DELETE FROM item WHERE grp = %d AND qty > %lld", grp, q);
        for (int i = 1; i <= N_IDS; i++)
            if (m->r[i].present && m->r[i].grp == grp && m->r[i].qty > q)
                m->r[i].present = false;
        break;
    }
    }
}

/* ---- running statements ---- */

static void control(const char *cmd)
{
    char ans[1024];
    if (api_server_control(&g_env.server, cmd, ans, sizeof ans))
        FAIL("control '%s': %s", cmd, ans);
}

typedef enum { RUN_OK, RUN_CONSTRAINT, RUN_FDB } run_result;

/* One statement to its end; *fdb_err is the FoundationDB error of a failure on one. */
static run_result run(const char *sql, int *fdb_err)
{
    sqlite3_stmt *st;
    *fdb_err = 0;
    if (sqlite3_prepare_v2(g_db, sql, -1, &st, NULL) != SQLITE_OK)
        FAIL("prepare %s: %s", sql, sqlite3_errmsg(g_db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    snprintf(g_msg, sizeof g_msg, "%s", sqlite3_errmsg(g_db));
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return RUN_OK;
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return RUN_CONSTRAINT;
    *fdb_err = cfdb_sql_last_error(g_db);
    if (!*fdb_err)
        FAIL("%s: %s (not a FoundationDB error)", sql, g_msg);
    return RUN_FDB;
}

static void rollback_if_open(void)
{
    if (!sqlite3_get_autocommit(g_db)) {
        int e;
        if (run("ROLLBACK", &e) != RUN_OK)
            FAIL("ROLLBACK failed: %d", e);
    }
}

/* The table as rows; false when a read failed on a FoundationDB error (faults). */
static bool read_table(model *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(g_db, "SELECT id, code, city, grp, qty FROM item", -1, &st, NULL) != SQLITE_OK)
        FAIL("prepare: %s", sqlite3_errmsg(g_db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long long id = sqlite3_column_int64(st, 0);
        if (id < 1 || id > N_IDS)
            FAIL("row with id %lld", id);
        row *r = &out->r[id];
        if (r->present)
            FAIL("id %lld twice", id);
        r->present = true;
        r->code = atoi((const char *)sqlite3_column_text(st, 1) + 1);
        r->city = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1
                                                             : atoi((const char *)sqlite3_column_text(st, 2) + 4);
        r->grp = sqlite3_column_int(st, 3);
        r->qty = sqlite3_column_int64(st, 4);
    }
    snprintf(g_msg, sizeof g_msg, "%s", sqlite3_errmsg(g_db));
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return true;
    if (!cfdb_sql_last_error(g_db))
        FAIL("reading the table: %s", g_msg);
    return false;
}

static void read_table_retrying(model *out)
{
    for (int i = 0; !read_table(out); i++)
        if (i > 100)
            FAIL("the table cannot be read");
}

static bool model_equal(const model *a, const model *b)
{
    for (int i = 1; i <= N_IDS; i++) {
        const row *x = &a->r[i], *y = &b->r[i];
        if (x->present != y->present)
            return false;
        if (x->present && (x->code != y->code || x->city != y->city || x->grp != y->grp || x->qty != y->qty))
            return false;
    }
    return true;
}

static void expect_table(const model *m, const char *when)
{
    model t;
    read_table_retrying(&t);
    for (int i = 1; i <= N_IDS; i++) {
        const row *x = &m->r[i], *y = &t.r[i];
        if (x->present != y->present ||
            (x->present && (x->code != y->code || x->city != y->city || x->grp != y->grp || x->qty != y->qty)))
            FAIL("%s: id %d: model %s c%d city%d g%d q%lld, table %s c%d city%d g%d q%lld", when, i,
                 x->present ? "row" : "none", x->code, x->city, x->grp, x->qty, y->present ? "row" : "none",
                 y->code, y->city, y->grp, y->qty);
    }
}

static struct {
    unsigned txns, statements, refused, aborted, retries, unknown_applied, unknown_unapplied, faults;
} g_stats;

/* A fault before a statement, by the seed: commits failing with commit_unknown_result
 * (applied or not) or dropped connections. */
static void maybe_fault(void)
{
    uint32_t f = rnd(100);
    if (f < 8) {
        control("fail-commits 1 applied");
        g_stats.faults++;
    } else if (f < 16) {
        control("fail-commits 1 unapplied");
        g_stats.faults++;
    } else if (f < 22) {
        control("drop");
        g_stats.faults++;
    }
}

/* Runs a transaction (one autocommit statement, or several in BEGIN..COMMIT) until it has
 * happened exactly once; before is the model before it, after the model after it. A UNIQUE
 * refusal inside BEGIN..COMMIT fails the transaction: false (COMMIT refused, rolled back). */
static bool run_txn(const stmt *s, int n, bool explicit_txn, const model *before, const model *after)
{
    for (int attempt = 0;; attempt++) {
        if (attempt > 200)
            FAIL("%s: no success after 200 attempts", s[0].sql);
        int e = 0;
        bool failed = false, at_commit = false, refused = false;
        maybe_fault();
        if (explicit_txn && run("BEGIN", &e) != RUN_OK)
            FAIL("BEGIN: %d", e);
        for (int i = 0; i < n && !failed && !refused; i++) {
            if (explicit_txn && i > 0 && rnd(10) == 0) {
                control("drop");
                g_stats.faults++;
            }
            run_result r = run(s[i].sql, &e);
            g_stats.statements++;
            if (r == RUN_CONSTRAINT) {
                if (!s[i].constraint)
                    FAIL("%s: refused (%s), the model accepts it", s[i].sql, g_msg);
                g_stats.refused++;
                refused = explicit_txn;
            } else if (r == RUN_OK) {
                if (s[i].constraint)
                    FAIL("%s: accepted, the model refuses it (UNIQUE)", s[i].sql);
            } else {
                failed = true;
                at_commit = !explicit_txn;  /* an autocommit statement commits in its step */
            }
        }
        if (!failed && refused) {
            if (run("COMMIT", &e) == RUN_OK)
                FAIL("COMMIT of a transaction with a UNIQUE refusal succeeded");
            rollback_if_open();
            g_stats.aborted++;
            return false;
        }
        if (!failed && explicit_txn) {
            run_result r = run("COMMIT", &e);
            if (r == RUN_CONSTRAINT)
                FAIL("COMMIT refused: %s", g_msg);
            if (r == RUN_FDB)
                failed = at_commit = true;
        }
        if (!failed)
            return true;
        rollback_if_open();
        if (at_commit && fdb_error_predicate(FDB_ERROR_PREDICATE_MAYBE_COMMITTED, e)) {
            /* the effect decides: exactly the state before or after */
            model t;
            read_table_retrying(&t);
            if (model_equal(&t, after)) {
                g_stats.unknown_applied++;
                return true;
            }
            if (!model_equal(&t, before))
                FAIL("after error %d on '%s': the table is neither the state before nor after", e, s[0].sql);
            g_stats.unknown_unapplied++;
        } else if (!fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, e)) {
            FAIL("%s: FoundationDB error %d (%s) is not retryable", s[0].sql, e, g_msg);
        }
        g_stats.retries++;
    }
}

/* ---- the index check: raw keys against entries computed from the rows ---- */

static const char *const g_ddl =
    "CREATE SCHEMA TEMPLATE faults "
    "CREATE TABLE item (id BIGINT, code STRING NOT NULL, city STRING, grp INTEGER NOT NULL, "
    "  qty BIGINT NOT NULL, PRIMARY KEY (id)) "
    "CREATE INDEX by_city AS SELECT city, qty FROM item ORDER BY city "
    "CREATE UNIQUE INDEX by_code ON item (code) "
    "CREATE INDEX qty_by_grp AS SELECT grp, SUM(qty) FROM item GROUP BY grp "
    "CREATE INDEX n_by_grp AS SELECT grp, COUNT(*) FROM item GROUP BY grp "
    "CREATE INDEX n_all AS SELECT COUNT(*) FROM item";

typedef struct entry {
    cfdb_bytes key, value;
    bool aggregate;     /* value: little-endian int64 */
    int64_t number;
} entry;

typedef struct entries {
    entry *e;
    size_t n, cap;
} entries;

static void push(entries *es, entry e)
{
    if (es->n == es->cap) {
        es->cap = es->cap ? es->cap * 2 : 256;
        es->e = realloc(es->e, es->cap * sizeof *es->e);
        assert_non_null(es->e);
    }
    es->e[es->n++] = e;
}

static int entry_cmp(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    uint32_t n = a->key.len < b->key.len ? a->key.len : b->key.len;
    int c = memcmp(a->key.ptr, b->key.ptr, n);
    return c ? c : (a->key.len > b->key.len) - (a->key.len < b->key.len);
}

static cfdb_bytes packed(cfdb_arena *a, cfdb_bytes prefix, const cfdb_tuple *t)
{
    cfdb_bytes out;
    assert_int_equal(cfdb_tuple_pack(a, prefix, t, &out), 0);
    return out;
}

static cfdb_bytes index_key(cfdb_arena *a, cfdb_bytes P, const char *name, cfdb_tuple *rest)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    assert_int_equal(cfdb_tuple_add_int(&t, 2), 0);
    assert_int_equal(cfdb_tuple_add_cstr(&t, name), 0);
    for (uint32_t i = 0; rest && i < cfdb_tuple_count(rest); i++)
        assert_int_equal(cfdb_tuple_add_elem(&t, cfdb_tuple_get(rest, i)), 0);
    return packed(a, P, &t);
}

/* The entries every index must hold for the rows of m. */
static void expected_entries(cfdb_arena *a, cfdb_bytes P, const model *m, entries *out)
{
    int64_t count[N_GRPS] = { 0 }, sum[N_GRPS] = { 0 }, all = 0;
    bool seen[N_GRPS] = { false };
    char buf[32];
    for (int id = 1; id <= N_IDS; id++) {
        const row *r = &m->r[id];
        if (!r->present)
            continue;
        cfdb_tuple t, v;
        /* BY_CITY: (city, record type key 0, id) = pack((qty)) */
        cfdb_tuple_init(&t, a);
        if (r->city < 0) {
            assert_int_equal(cfdb_tuple_add_null(&t), 0);
        } else {
            snprintf(buf, sizeof buf, "city%d", r->city);
            assert_int_equal(cfdb_tuple_add_cstr(&t, buf), 0);
        }
        assert_int_equal(cfdb_tuple_add_int(&t, 0), 0);
        assert_int_equal(cfdb_tuple_add_int(&t, id), 0);
        cfdb_tuple_init(&v, a);
        assert_int_equal(cfdb_tuple_add_int(&v, r->qty), 0);
        push(out, (entry){ index_key(a, P, "BY_CITY", &t), packed(a, (cfdb_bytes){ NULL, 0 }, &v), false, 0 });
        /* BY_CODE: (code, 0, id) = empty */
        cfdb_tuple_init(&t, a);
        snprintf(buf, sizeof buf, "c%d", r->code);
        assert_int_equal(cfdb_tuple_add_cstr(&t, buf), 0);
        assert_int_equal(cfdb_tuple_add_int(&t, 0), 0);
        assert_int_equal(cfdb_tuple_add_int(&t, id), 0);
        push(out, (entry){ index_key(a, P, "BY_CODE", &t), (cfdb_bytes){ (const uint8_t *)"", 0 }, false, 0 });
        count[r->grp]++;
        sum[r->grp] += r->qty;
        seen[r->grp] = true;
        all++;
    }
    for (int g = 0; g < N_GRPS; g++) {
        if (!seen[g])
            continue;
        cfdb_tuple t;
        cfdb_tuple_init(&t, a);
        assert_int_equal(cfdb_tuple_add_int(&t, g), 0);
        push(out, (entry){ index_key(a, P, "QTY_BY_GRP", &t), { NULL, 0 }, true, sum[g] });
        push(out, (entry){ index_key(a, P, "N_BY_GRP", &t), { NULL, 0 }, true, count[g] });
    }
    if (all)
        push(out, (entry){ index_key(a, P, "N_ALL", NULL), { NULL, 0 }, true, all });
    qsort(out->e, out->n, sizeof *out->e, entry_cmp);
}

/* Every key-value under P + (2), read with the client API. */
static void stored_entries(cfdb_arena *a, cfdb_bytes P, entries *out)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    assert_int_equal(cfdb_tuple_add_int(&t, 2), 0);
    cfdb_bytes b, e;
    assert_int_equal(cfdb_tuple_range(a, P, &t, &b, &e), 0);
    FDBTransaction *tr = api_tr();
    for (int attempt = 0;; attempt++) {
        if (attempt > 50)
            FAIL("reading the index space keeps failing");
        out->n = 0;
        cfdb_bytes from = b;
        fdb_error_t err = 0;
        for (;;) {
            FDBFuture *f = fdb_transaction_get_range(tr, from.ptr, (int)from.len, 0, 1, e.ptr, (int)e.len, 0, 1,
                                                     0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
            err = api_wait(f);
            const FDBKeyValue *kv;
            int n = 0;
            fdb_bool_t more = 0;
            if (!err)
                err = fdb_future_get_keyvalue_array(f, &kv, &n, &more);
            for (int i = 0; !err && i < n; i++) {
                entry x = { { cfdb_arena_dup(a, kv[i].key, (size_t)kv[i].key_length + 1), (uint32_t)kv[i].key_length },
                            { cfdb_arena_dup(a, kv[i].value, (size_t)kv[i].value_length + 1),
                              (uint32_t)kv[i].value_length },
                            false, 0 };
                push(out, x);
            }
            fdb_future_destroy(f);
            if (err || !more || n == 0)
                break;
            uint8_t *nk = cfdb_arena_alloc(a, out->e[out->n - 1].key.len + 1);
            memcpy(nk, out->e[out->n - 1].key.ptr, out->e[out->n - 1].key.len);
            nk[out->e[out->n - 1].key.len] = 0;
            from = (cfdb_bytes){ nk, out->e[out->n - 1].key.len + 1 };
        }
        if (!err)
            break;
        assert_int_equal(api_on_error(tr, err), 0);
    }
    fdb_transaction_destroy(tr);
}

static int64_t le64(cfdb_bytes v)
{
    if (v.len != 8)
        FAIL("an aggregate entry of %u bytes", v.len);
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = (x << 8) | v.ptr[i];
    return (int64_t)x;
}

static void hex(cfdb_bytes b, char *out, size_t cap)
{
    size_t o = 0;
    for (uint32_t i = 0; i < b.len && o + 3 < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%02x", b.ptr[i]);
    out[o] = 0;
}

/* The aggregate index names: their keys have no primary key, a 0 may stay. */
static bool is_aggregate_key(cfdb_arena *a, cfdb_bytes P, cfdb_bytes key)
{
    static const char *const names[] = { "QTY_BY_GRP", "N_BY_GRP", "N_ALL" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        cfdb_bytes p = index_key(a, P, names[i], NULL);
        if (key.len >= p.len && memcmp(key.ptr, p.ptr, p.len) == 0)
            return true;
    }
    return false;
}

static void check_indexes(cfdb_bytes P, const model *m, const char *when)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    entries want = { 0 }, got = { 0 };
    expected_entries(&a, P, m, &want);
    stored_entries(&a, P, &got);
    size_t i = 0, j = 0;
    char kh[512];
    while (i < want.n || j < got.n) {
        int c = i == want.n ? 1 : j == got.n ? -1 : entry_cmp(&want.e[i], &got.e[j]);
        if (c < 0) {
            hex(want.e[i].key, kh, sizeof kh);
            FAIL("%s: index entry %s missing", when, kh);
        }
        if (c > 0) {
            if (is_aggregate_key(&a, P, got.e[j].key) && le64(got.e[j].value) == 0) {
                j++;
                continue;
            }
            hex(got.e[j].key, kh, sizeof kh);
            FAIL("%s: index entry %s that no row has", when, kh);
        }
        hex(want.e[i].key, kh, sizeof kh);
        if (want.e[i].aggregate) {
            if (le64(got.e[j].value) != want.e[i].number)
                FAIL("%s: aggregate %s is %lld, the rows give %lld", when, kh, (long long)le64(got.e[j].value),
                     (long long)want.e[i].number);
        } else if (want.e[i].value.len != got.e[j].value.len ||
                   memcmp(want.e[i].value.ptr, got.e[j].value.ptr, want.e[i].value.len)) {
            FAIL("%s: index entry %s has another value", when, kh);
        }
        i++;
        j++;
    }
    free(want.e);
    free(got.e);
    cfdb_arena_free(&a);
}

/* ---- the test ---- */

/* P of schema /faults/<schema>: the packed tuple (database path, schema name). */
static cfdb_bytes store_prefix(cfdb_arena *a, const char *schema)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, a);
    assert_int_equal(cfdb_tuple_add_cstr(&t, "/faults"), 0);
    assert_int_equal(cfdb_tuple_add_cstr(&t, schema), 0);
    return packed(a, (cfdb_bytes){ NULL, 0 }, &t);
}

static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--storage-servers", "3", NULL };
    if (api_env_setup(args))
        return -1;
    char err[512];
    if (cfdb_sql_ddl(g_env.db, g_ddl, err, sizeof err) || cfdb_sql_ddl(g_env.db, "CREATE DATABASE /faults", err, sizeof err) ||
        cfdb_sql_ddl(g_env.db, "CREATE SCHEMA /faults/s WITH TEMPLATE faults", err, sizeof err)) {
        fprintf(stderr, "DDL: %s\n", err);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (g_db)
        sqlite3_close(g_db);
    return api_env_teardown();
}

static void test_dml_under_faults(void **state)
{
    (void)state;
    const char *env = getenv("CFDB_SQL_FAULTS_SEED");
    g_seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
    g_rng = g_seed * 2654435761ull + 1;
    const char *tn = getenv("CFDB_SQL_FAULTS_TXNS");
    int txns = tn ? atoi(tn) : 600;
    printf("test_sql_faults: CFDB_SQL_FAULTS_SEED=%llu, %d transactions\n", g_seed, txns);
    char err[512];
    if (cfdb_sql_open(g_env.db, "/faults", "s", &g_db, err, sizeof err))
        FAIL("open: %s", err);
    cfdb_arena pa;
    cfdb_arena_init(&pa);
    cfdb_bytes P = store_prefix(&pa, "S");

    for (int t = 0; t < txns; t++) {
        bool explicit_txn = rnd(3) == 0;
        int n = explicit_txn ? 2 + (int)rnd(MAX_STMTS - 1) : 1;
        stmt s[MAX_STMTS];
        model after = g_model;
        for (int i = 0; i < n; i++) {
            /* a refusal fails a whole BEGIN..COMMIT: most of them are drawn again */
            for (int k = 0; k < 5; k++) {
                gen_stmt(&after, &s[i]);
                if (!explicit_txn || !s[i].constraint || rnd(4) == 0)
                    break;
            }
        }
        if (run_txn(s, n, explicit_txn, &g_model, &after))
            g_model = after;
        g_stats.txns++;
        if ((t + 1) % 100 == 0) {
            control("fail-commits 0");
            char when[64];
            snprintf(when, sizeof when, "after %d transactions", t + 1);
            expect_table(&g_model, when);
            check_indexes(P, &g_model, when);
        }
    }
    control("fail-commits 0");
    expect_table(&g_model, "at the end");
    check_indexes(P, &g_model, "at the end");
    int rows = 0;
    for (int i = 1; i <= N_IDS; i++)
        rows += g_model.r[i].present;
    printf("test_sql_faults: %u transactions (%u failed by a UNIQUE refusal inside), %u statements (%u refused "
           "by UNIQUE), %u faults, %u retries, commit_unknown_result resolved %u applied / %u not applied; %d rows "
           "at the end\n",
           g_stats.txns, g_stats.aborted, g_stats.statements, g_stats.refused, g_stats.faults, g_stats.retries,
           g_stats.unknown_applied, g_stats.unknown_unapplied, rows);
    /* the faults happened and were resolved both ways: the run is not vacuous */
    assert_true(g_stats.unknown_applied > 0);
    assert_true(g_stats.unknown_unapplied > 0);
    assert_true(g_stats.refused > 0);
    assert_true(g_stats.aborted > 0);
    assert_true(rows > 0);
    cfdb_arena_free(&pa);
}

static void exec_ok(sqlite3 *db, const char *sql)
{
    char *e = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK)
        FAIL("%s: %s", sql, e);
}

static void exec_refused(sqlite3 *db, const char *sql, const char *needle)
{
    char *e = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &e);
    if (rc == SQLITE_OK || !e || !strstr(e, needle))
        FAIL("%s: expected an error with '%s', got %d %s", sql, needle, rc, e ? e : "");
    sqlite3_free(e);
}

/* UNIQUE refusals write nothing of the refused row (the Record Layer checks unique indexes
 * before it writes; an index entry of a refused INSERT once stayed behind), OR IGNORE
 * included; inside BEGIN..COMMIT the refusal fails the transaction (the statement may have
 * written before it: the old row of a new primary key): COMMIT is refused, ROLLBACK leaves
 * the table and indexes as before. */
static void test_unique_refusal_in_transaction(void **state)
{
    (void)state;
    char err[512];
    if (cfdb_sql_ddl(g_env.db, "CREATE SCHEMA /faults/t WITH TEMPLATE faults", err, sizeof err))
        FAIL("DDL: %s", err);
    sqlite3 *db;
    if (cfdb_sql_open(g_env.db, "/faults", "t", &db, err, sizeof err))
        FAIL("open: %s", err);
    sqlite3 *saved = g_db;
    g_db = db;
    cfdb_arena pa;
    cfdb_arena_init(&pa);
    cfdb_bytes P = store_prefix(&pa, "T");
    model m;
    memset(&m, 0, sizeof m);
    exec_ok(db, "INSERT INTO item VALUES (1, 'c1', 'city0', 0, 10)");
    exec_ok(db, "INSERT INTO item VALUES (2, 'c2', 'city1', 1, 20)");
    m.r[1] = (row){ true, 1, 0, 0, 10 };
    m.r[2] = (row){ true, 2, 1, 1, 20 };
    /* autocommit: the refused statement leaves nothing */
    exec_refused(db, "INSERT INTO item VALUES (3, 'c1', 'city2', 2, 30)", "UNIQUE constraint failed: index BY_CODE");
    exec_refused(db, "UPDATE item SET id = 4, code = 'c2' WHERE id = 1", "UNIQUE constraint failed: index BY_CODE");
    /* OR IGNORE skips the row and writes nothing of it */
    exec_ok(db, "INSERT OR IGNORE INTO item VALUES (3, 'c1', 'city2', 2, 30)");
    expect_table(&m, "after refusals in autocommit");
    check_indexes(P, &m, "after refusals in autocommit");
    /* in a transaction: the refusal fails it */
    static const char *const refused[] = {
        "INSERT INTO item VALUES (3, 'c1', 'city2', 2, 30)",
        "UPDATE item SET id = 4, code = 'c2' WHERE id = 1",
        "UPDATE item SET code = 'c1', city = 'city3' WHERE id = 2",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        exec_ok(db, "BEGIN");
        exec_ok(db, "UPDATE item SET qty = qty + 1 WHERE id = 2");
        exec_refused(db, refused[i], "UNIQUE constraint failed: index BY_CODE");
        exec_refused(db, "COMMIT", "ROLLBACK");
        if (!sqlite3_get_autocommit(db))   /* SQLite may have ended it on the failed COMMIT */
            exec_ok(db, "ROLLBACK");
        expect_table(&m, refused[i]);
        check_indexes(P, &m, refused[i]);
    }
    sqlite3_close(db);
    g_db = saved;
    cfdb_arena_free(&pa);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unique_refusal_in_transaction),
        cmocka_unit_test(test_dml_under_faults),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
