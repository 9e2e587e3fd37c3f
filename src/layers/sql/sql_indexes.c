/* SPDX-License-Identifier: Apache-2.0 */
/* Online builds of the indexes a template upgrade added or changed.
 *
 * Opening a schema moves it to its template's latest version; the store's open then clears
 * every index modified after the store's metadata version and builds it in that
 * transaction only when the store holds at most 200 records (the Record Layer's
 * checkVersion); a bigger store gets the index DISABLED. sql_indexes_build finishes the job
 * with the Record Layer's online indexer (cfdb_rl_index_build): the index goes write-only
 * (so writes maintain it from then on), the records are indexed in batches of at most
 * max_records records, each batch one transaction that records the primary-key range it
 * built under P + (6, subspace key), and once every range is built the index is marked
 * readable. A build stopped (max_transactions reached, a crash, an error) resumes at the
 * first range not built. Until an index is readable the planner does not use it (readable[]
 * is what xBestIndex reads).
 *
 * A unique index goes readable only without uniqueness violations: while write-only the
 * Record Layer records each one under P + (7, subspace key, index key..., pk...) = the other
 * row's primary key, and the failed mark (2000) is reported with one of them. The index
 * stays write-only until the rows are fixed and a build runs again (the violations are
 * re-checked when marking readable).
 *
 * Indexes cfdb cannot build (types it does not maintain) stay disabled, as before. An index
 * another session is building (its live heartbeat, another build method's stamp, a blocked
 * build: the indexer refuses with 2000 and says why) is left to it: an open goes on without
 * it, cfdb_build_indexes reports it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cfdb/errors.h"
#include "sql_indexes.h"
#include "sql_internal.h"

static _Atomic uint32_t g_open_max_records, g_open_max_transactions;

int cfdb_sql_set_index_build_limits(unsigned max_records, unsigned max_transactions)
{
    atomic_store(&g_open_max_records, (uint32_t)max_records);
    atomic_store(&g_open_max_transactions, (uint32_t)max_transactions);
    return 0;
}

/* A tuple's elements as text: integers, strings in quotes, NULL; others by type. */
static void tuple_text(const cfdb_tuple *t, uint32_t from, uint32_t to, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = 0;
    for (uint32_t i = from; i < to && o + 1 < cap; i++) {
        const cfdb_tuple_elem *e = cfdb_tuple_get(t, i);
        const char *sep = i > from ? ", " : "";
        int n;
        switch (e->type) {
        case CFDB_TUPLE_INT:
            n = snprintf(out + o, cap - o, "%s%lld", sep, (long long)e->v.i);
            break;
        case CFDB_TUPLE_STRING:
            n = snprintf(out + o, cap - o, "%s'%.*s'", sep, (int)e->v.bytes.len, (const char *)e->v.bytes.ptr);
            break;
        case CFDB_TUPLE_NULL:
            n = snprintf(out + o, cap - o, "%sNULL", sep);
            break;
        default:
            n = snprintf(out + o, cap - o, "%s(a value of tuple type %d)", sep, (int)e->type);
        }
        if (n < 0 || (size_t)n >= cap - o)
            break;
        o += (size_t)n;
    }
}

/* One uniqueness violation of ix, as text; false when there is none (or it cannot be read). */
static bool violation_text(FDBDatabase *db, cfdb_bytes prefix, const cfdb_rl_index *ix, char *out, size_t cap)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_tuple t;
    cfdb_tuple_init(&t, &a);
    cfdb_bytes b, e;
    FDBTransaction *tr = NULL;
    FDBFuture *f = NULL;
    bool found = false;
    if (cfdb_tuple_add_int(&t, 7) || cfdb_tuple_add_elem(&t, &ix->subspace_key) ||
        cfdb_tuple_range(&a, prefix, &t, &b, &e) || fdb_database_create_transaction(db, &tr))
        goto out;
    f = fdb_transaction_get_range(tr, b.ptr, (int)b.len, 0, 1, e.ptr, (int)e.len, 0, 1, 1, 0,
                                  FDB_STREAMING_MODE_EXACT, 0, 0, 0);
    const FDBKeyValue *kv;
    int n = 0;
    fdb_bool_t more;
    cfdb_tuple key, other;
    uint32_t skip = (uint32_t)(b.len - 1);   /* prefix + pack((7, sk)) */
    if (fdb_future_block_until_ready(f) || fdb_future_get_error(f) ||
        fdb_future_get_keyvalue_array(f, &kv, &n, &more) || n < 1 ||
        cfdb_tuple_unpack(&a, cfdb_bytes_make(kv[0].key + skip, (uint32_t)kv[0].key_length - skip), &key) ||
        cfdb_tuple_unpack(&a, cfdb_bytes_make(kv[0].value, (uint32_t)kv[0].value_length), &other))
        goto out;
    /* the entry: the index key, then the primary key components the key does not hold */
    uint32_t held = 0;
    for (uint32_t i = 0; i < ix->pk_position_count; i++)
        held += ix->pk_positions[i] >= 0;
    uint32_t npk = cfdb_tuple_count(&other);
    uint32_t trailing = npk >= held ? npk - held : 0;
    uint32_t nkey = cfdb_tuple_count(&key) >= trailing ? cfdb_tuple_count(&key) - trailing : 0;
    char kt[256], p1[256], p2[256];
    tuple_text(&key, 0, nkey, kt, sizeof kt);
    tuple_text(&other, 0, npk, p2, sizeof p2);
    if (held == 0) {
        tuple_text(&key, nkey, cfdb_tuple_count(&key), p1, sizeof p1);
        snprintf(out, cap, "the rows with primary keys (%.150s) and (%.150s) have the same key (%.150s)", p1, p2, kt);
    } else {
        snprintf(out, cap, "two rows have the key (%.150s), one with primary key (%.150s)", kt, p2);
    }
    found = true;
out:
    fdb_future_destroy(f);
    if (tr)
        fdb_transaction_destroy(tr);
    cfdb_arena_free(&a);
    return found;
}

int sql_indexes_build(FDBDatabase *db, const cfdb_rl_metadata *md, cfdb_bytes prefix, bool *readable,
                      uint32_t max_records, uint32_t max_transactions, bool busy_ok, sql_build_report *rep,
                      char *err, size_t errcap)
{
    memset(rep, 0, sizeof *rep);
    for (uint32_t i = 0; i < md->index_count; i++) {
        const cfdb_rl_index *ix = &md->indexes[i];
        if (readable[i])
            continue;
        if (max_transactions && rep->transactions >= max_transactions) {
            rep->left++;
            continue;
        }
        cfdb_rl_indexer_options o = { .max_records = max_records,
                                      .max_batches = max_transactions ? max_transactions - rep->transactions : 0 };
        cfdb_rl_indexer_stats st;
        int rc = cfdb_rl_index_build(db, md, prefix, ix->name, &o, &st);
        rep->transactions += st.batches;
        rep->records += st.records;
        if (rc == CFDB_ERR_UNSUPPORTED_OPERATION)
            continue;   /* a type cfdb does not maintain: stays disabled */
        const char *table = ix->record_type_count ? ix->record_types[0]->name : "?";
        bool busy = st.other_method || st.blocked || st.other_indexer;
        if (rc == CFDB_ERR_CLIENT_INVALID_OPERATION && busy && busy_ok) {
            rep->left++;   /* another session builds it: it stays unplanned here */
            continue;
        }
        if (rc) {
            char v[600];
            if (rc == CFDB_ERR_CLIENT_INVALID_OPERATION && ix->unique && !busy &&
                violation_text(db, prefix, ix, v, sizeof v))
                sql_errf(err, errcap, "UNIQUE index %s of %s cannot be built: %s", ix->name, table, v);
            else if (busy)
                sql_errf(err, errcap, "building index %s of %s: another index build holds it (%s)", ix->name, table,
                         st.other_indexer ? "a live indexer" : st.blocked ? "a blocked build" : "another method");
            else
                sql_errf(err, errcap, "building index %s of %s: FoundationDB error %d: %s", ix->name, table, rc,
                         fdb_get_error(rc));
            return rc;
        }
        if (st.readable) {
            readable[i] = true;
            rep->built++;
        } else {
            rep->left++;
        }
    }
    return 0;
}

int sql_indexes_build_on_open(FDBDatabase *db, const cfdb_rl_metadata *md, cfdb_bytes prefix, bool *readable,
                              char *err, size_t errcap)
{
    sql_build_report rep;
    return sql_indexes_build(db, md, prefix, readable, atomic_load(&g_open_max_records),
                             atomic_load(&g_open_max_transactions), true, &rep, err, errcap);
}
