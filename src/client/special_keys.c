/* The special key space (\xff\xff ... \xff\xff\xff) as libfdb_c 7.3 lays it out in modules
 * (SpecialKeySpace::moduleToBoundary). Reads outside every module fail with
 * special_keys_no_module_found, ranges that leave their module with
 * special_keys_cross_module_read. What the client answers itself: status/json,
 * transaction/conflicting_keys/, transaction/read_conflict_range/ and write_conflict_range/
 * (the transaction's conflict ranges so far, as boundaries: begin "1", end "0"),
 * connection_string, cluster_file_path, cluster_id, and error_message (always absent: no
 * management call sets it). The modules that read cluster
 * internals (worker interfaces, metrics, management, configuration, global config, tracing,
 * actor lineage and profiler) are not implemented: their reads fail with 2108. */
#include <stdlib.h>
#include <string.h>

#include "cfdb/errors.h"
#include "database.h"
#include "special_keys.h"
#include "txn_internal.h"
#include "txn_metadata.h"

enum module {
    M_NONE,
    M_TRANSACTION,
    M_WORKERS,
    M_STATUS,
    M_CONNECTION_STRING,
    M_CLUSTER_FILE_PATH,
    M_METRICS,
    M_MANAGEMENT,
    M_ERROR_MESSAGE,
    M_CONFIGURATION,
    M_GLOBAL_CONFIG,
    M_TRACING,
    M_ACTOR_LINEAGE,
    M_ACTOR_PROFILER,
    M_CLUSTER_ID,
};

typedef struct module_range {
    const char *begin;
    const char *end; /* NULL: the single key begin */
    enum module module;
} module_range;

static const module_range modules[] = {
    { "\xff\xff/transaction/", "\xff\xff/transaction0", M_TRANSACTION },
    { "\xff\xff/worker_interfaces/", "\xff\xff/worker_interfaces0", M_WORKERS },
    { "\xff\xff/status/json", NULL, M_STATUS },
    { "\xff\xff/connection_string", NULL, M_CONNECTION_STRING },
    { "\xff\xff/cluster_file_path", NULL, M_CLUSTER_FILE_PATH },
    { "\xff\xff/metrics/", "\xff\xff/metrics0", M_METRICS },
    { "\xff\xff/management/", "\xff\xff/management0", M_MANAGEMENT },
    { "\xff\xff/error_message", NULL, M_ERROR_MESSAGE },
    { "\xff\xff/configuration/", "\xff\xff/configuration0", M_CONFIGURATION },
    { "\xff\xff/global_config/", "\xff\xff/global_config0", M_GLOBAL_CONFIG },
    { "\xff\xff/tracing/", "\xff\xff/tracing0", M_TRACING },
    { "\xff\xff/actor_lineage/", "\xff\xff/actor_lineage0", M_ACTOR_LINEAGE },
    { "\xff\xff/actor_profiler_conf/", "\xff\xff/actor_profiler_conf0", M_ACTOR_PROFILER },
    { "\xff\xff/cluster_id", NULL, M_CLUSTER_ID },
};

/* The module whose range holds key; *range gets its bounds (a single key ends at key + \0). */
static enum module module_of(cfdb_bytes key, cfdb_bytes *mbegin, cfdb_bytes *mend, uint8_t *scratch)
{
    for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
        const module_range *m = &modules[i];
        cfdb_bytes b = cfdb_bytes_str(m->begin), e;
        if (m->end) {
            e = cfdb_bytes_str(m->end);
        } else {
            memcpy(scratch, b.ptr, b.len);
            scratch[b.len] = 0;
            e = cfdb_bytes_make(scratch, b.len + 1);
        }
        if (cfdb_bytes_cmp(key, b) >= 0 && cfdb_bytes_cmp(key, e) < 0) {
            *mbegin = b;
            *mend = e;
            return m->module;
        }
    }
    return M_NONE;
}

bool cfdb_special_key(cfdb_bytes key)
{
    static const uint8_t lo[] = { 0xff, 0xff }, hi[] = { 0xff, 0xff, 0xff };
    return cfdb_bytes_cmp(key, cfdb_bytes_make(lo, 2)) >= 0 && cfdb_bytes_cmp(key, cfdb_bytes_make(hi, 3)) < 0;
}

bool cfdb_special_range(cfdb_bytes begin, cfdb_bytes end)
{
    static const uint8_t lo[] = { 0xff, 0xff }, hi[] = { 0xff, 0xff, 0xff };
    return cfdb_special_key(begin) && cfdb_bytes_cmp(end, cfdb_bytes_make(lo, 2)) >= 0 &&
           cfdb_bytes_cmp(end, cfdb_bytes_make(hi, 3)) <= 0;
}

#define READ_CONFLICTS "\xff\xff/transaction/read_conflict_range/"
#define WRITE_CONFLICTS "\xff\xff/transaction/write_conflict_range/"

static bool has_prefix(cfdb_bytes k, const char *prefix)
{
    size_t n = strlen(prefix);
    return k.len >= n && memcmp(k.ptr, prefix, n) == 0;
}

/* One boundary of a conflict range as a row of the module, kept if its key lies in
 * [begin, end). Returns 0 or TXN_ERR_NO_MEMORY. */
static int push_boundary(cfdb_future *f, cfdb_fdb_kv **rows, int *n, int *cap, const char *prefix, cfdb_bytes key,
                         bool starts, cfdb_bytes begin, cfdb_bytes end)
{
    size_t pl = strlen(prefix);
    uint8_t *k = cfdb_arena_alloc(&f->arena, pl + key.len + 1);
    if (!k)
        return TXN_ERR_NO_MEMORY;
    memcpy(k, prefix, pl);
    if (key.len)
        memcpy(k + pl, key.ptr, key.len);
    cfdb_bytes row = cfdb_bytes_make(k, pl + key.len);
    if (cfdb_bytes_cmp(row, begin) < 0 || cfdb_bytes_cmp(row, end) >= 0)
        return 0;
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        cfdb_fdb_kv *nr = cfdb_arena_alloc(&f->arena, (size_t)nc * sizeof *nr);
        if (!nr)
            return TXN_ERR_NO_MEMORY;
        if (*n)
            memcpy(nr, *rows, (size_t)*n * sizeof *nr);
        *rows = nr;
        *cap = nc;
    }
    (*rows)[(*n)++] = (cfdb_fdb_kv){ k, (int)row.len, (const uint8_t *)(starts ? "1" : "0"), 1 };
    return 0;
}

static int by_begin(const void *a, const void *b)
{
    return cfdb_bytes_cmp(((const cfdb_key_range *)a)->begin, ((const cfdb_key_range *)b)->begin);
}

/* With read-your-writes off, the ranges NativeAPI's buffers hold (native_tx.h), as the
 * coalesced map RYW builds from them: sorted, overlapping and touching ones merged (in a).
 * mu held. */
static int native_ranges(cfdb_txn *tx, bool writes, cfdb_arena *a, cfdb_key_range **out, size_t *count)
{
    const cfdb_native_tx *t = &tx->ryw.native;
    size_t n = writes ? t->writes.n : t->reads.n + t->extra.n;
    cfdb_key_range *v = cfdb_arena_alloc(a, (n ? n : 1) * sizeof *v);
    if (!v)
        return TXN_ERR_NO_MEMORY;
    size_t k = 0;
    const cfdb_native_ranges *lists[2] = { writes ? &t->writes : &t->reads, writes ? NULL : &t->extra };
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && i < lists[l]->n; i++)
            if (cfdb_bytes_cmp(lists[l]->items[i].begin, lists[l]->items[i].end) < 0)
                v[k++] = lists[l]->items[i];
    qsort(v, k, sizeof *v, by_begin);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && cfdb_bytes_cmp(v[i].begin, v[m - 1].end) <= 0) {
            if (cfdb_bytes_cmp(v[i].end, v[m - 1].end) > 0)
                v[m - 1].end = v[i].end;
        } else {
            v[m++] = v[i];
        }
    }
    *out = v;
    *count = m;
    return 0;
}

/* The conflict ranges of one kind, in [begin, end) of the module (RYW's
 * getReadConflictRangeIntersecting / getWriteConflictRangeIntersecting). */
static cfdb_future *conflict_ranges(cfdb_txn *tx, bool writes, cfdb_bytes begin, cfdb_bytes end, int limit,
                                    bool reverse)
{
    const char *prefix = writes ? WRITE_CONFLICTS : READ_CONFLICTS;
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_KEYVALUES);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_KEYVALUES);
    cfdb_fdb_kv *rows = NULL;
    int n = 0, cap = 0, rc = 0;
    pthread_mutex_lock(&tx->mu);
    rc = txn_error_locked(tx);
    if (tx->ryw.disabled) {
        cfdb_key_range *v = NULL;
        size_t m = 0;
        if (!rc)
            rc = native_ranges(tx, writes, &f->arena, &v, &m);
        for (size_t i = 0; i < m && !rc; i++) {
            rc = push_boundary(f, &rows, &n, &cap, prefix, v[i].begin, true, begin, end);
            if (!rc)
                rc = push_boundary(f, &rows, &n, &cap, prefix, v[i].end, false, begin, end);
        }
    } else {
        const cfdb_range_set *set = writes ? &tx->ryw.wm.conflict : &tx->ryw.reads.set;
        for (cfdb_omap_node *node = cfdb_omap_first(&set->map); node && !rc; node = cfdb_omap_next(node)) {
            cfdb_bytes ends[2] = { node->key, node->val.bytes };
            for (int e = 0; e < 2 && !rc; e++)
                rc = push_boundary(f, &rows, &n, &cap, prefix, ends[e], e == 0, begin, end);
        }
    }
    pthread_mutex_unlock(&tx->mu);
    if (!rc) {
        bool more = false;
        if (reverse)
            for (int i = 0; i < n / 2; i++) {
                cfdb_fdb_kv t = rows[i];
                rows[i] = rows[n - 1 - i];
                rows[n - 1 - i] = t;
            }
        if (limit > 0 && n > limit) {
            n = limit;
            more = true;
        }
        f->r.kvs.items = rows;
        f->r.kvs.count = n;
        f->r.kvs.more = more;
    }
    cfdb_future_complete(f, rc);
    return f;
}

/* A get of one boundary key: the listing of [key, key\0). */
static cfdb_future *conflict_boundary(cfdb_txn *tx, bool writes, cfdb_bytes key)
{
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_VALUE);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_VALUE);
    uint8_t *after = cfdb_arena_alloc(&f->arena, key.len + 1);
    if (!after) {
        cfdb_future_complete(f, TXN_ERR_NO_MEMORY);
        return f;
    }
    memcpy(after, key.ptr, key.len);
    after[key.len] = 0;
    cfdb_future *r = conflict_ranges(tx, writes, key, cfdb_bytes_make(after, key.len + 1), 1, false);
    int rc = r->error;
    if (!rc && r->r.kvs.count == 1) {
        f->r.value.present = true;
        if (cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_make(r->r.kvs.items[0].value, 1), &f->r.value.value))
            rc = TXN_ERR_NO_MEMORY;
    }
    cfdb_future_unref(r);
    cfdb_future_complete(f, rc);
    return f;
}

static cfdb_future *absent(void)
{
    return cfdb_future_error(CFDB_FUTURE_VALUE, 0); /* r.value.present is false */
}

cfdb_future *cfdb_special_get(cfdb_txn *tx, cfdb_bytes key)
{
    cfdb_bytes mb, me;
    uint8_t scratch[64];
    pthread_mutex_lock(&tx->mu);
    int rc = txn_error_locked(tx);
    pthread_mutex_unlock(&tx->mu);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_VALUE, rc);
    switch (module_of(key, &mb, &me, scratch)) {
    case M_NONE:
        return cfdb_future_error(CFDB_FUTURE_VALUE, CFDB_ERR_SPECIAL_KEYS_NO_MODULE_FOUND);
    case M_TRANSACTION:
        if (cfdb_conflicts_is_special(key))
            return cfdb_conflicts_get(tx, key);
        if (has_prefix(key, READ_CONFLICTS) || has_prefix(key, WRITE_CONFLICTS))
            return conflict_boundary(tx, has_prefix(key, WRITE_CONFLICTS), key);
        return absent(); /* no module's key there */
    case M_STATUS:
        return cfdb_txn_status_json(tx);
    case M_CONNECTION_STRING:
        return cfdb_future_or_no_memory(cfdb_db_text_value(tx->db, CFDB_DB_CONNECTION_STRING), CFDB_FUTURE_VALUE);
    case M_CLUSTER_FILE_PATH:
        return cfdb_future_or_no_memory(cfdb_db_text_value(tx->db, CFDB_DB_CLUSTER_FILE_PATH), CFDB_FUTURE_VALUE);
    case M_CLUSTER_ID:
        return cfdb_future_or_no_memory(cfdb_db_text_value(tx->db, CFDB_DB_CLUSTER_ID), CFDB_FUTURE_VALUE);
    case M_ERROR_MESSAGE:
        return absent();
    default:
        return cfdb_future_error(CFDB_FUTURE_VALUE, CFDB_ERR_UNSUPPORTED_OPERATION);
    }
}

cfdb_future *cfdb_special_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse)
{
    cfdb_bytes mb, me;
    uint8_t scratch[64];
    enum module m = module_of(begin, &mb, &me, scratch);
    if (m == M_NONE)
        return cfdb_future_error(CFDB_FUTURE_KEYVALUES, CFDB_ERR_SPECIAL_KEYS_NO_MODULE_FOUND);
    if (cfdb_bytes_cmp(end, me) > 0)
        return cfdb_future_error(CFDB_FUTURE_KEYVALUES, CFDB_ERR_SPECIAL_KEYS_CROSS_MODULE_READ);
    if (m == M_TRANSACTION) {
        static const char conflicting_end[] = "\xff\xff/transaction/conflicting_keys0";
        if (cfdb_conflicts_is_special(begin) && cfdb_bytes_cmp(end, cfdb_bytes_str(conflicting_end)) <= 0)
            return cfdb_conflicts_get_range(tx, begin, end, limit, reverse);
        static const char read_end[] = "\xff\xff/transaction/read_conflict_range0";
        static const char write_end[] = "\xff\xff/transaction/write_conflict_range0";
        if (has_prefix(begin, READ_CONFLICTS) && cfdb_bytes_cmp(end, cfdb_bytes_str(read_end)) <= 0)
            return conflict_ranges(tx, false, begin, end, limit, reverse);
        if (has_prefix(begin, WRITE_CONFLICTS) && cfdb_bytes_cmp(end, cfdb_bytes_str(write_end)) <= 0)
            return conflict_ranges(tx, true, begin, end, limit, reverse);
    }
    /* single-key modules read as ranges, and the modules not implemented */
    return cfdb_future_error(CFDB_FUTURE_KEYVALUES, CFDB_ERR_UNSUPPORTED_OPERATION);
}
