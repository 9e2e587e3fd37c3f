/* The special key space (\xff\xff ... \xff\xff\xff) as libfdb_c 7.3 lays it out in modules
 * (SpecialKeySpace::moduleToBoundary). Reads outside every module fail with
 * special_keys_no_module_found, ranges that leave their module with
 * special_keys_cross_module_read. Answered here at once: status/json,
 * transaction/conflicting_keys/, transaction/read_conflict_range/ and write_conflict_range/
 * (the transaction's conflict ranges so far, as boundaries: begin "1", end "0"),
 * connection_string, cluster_file_path, cluster_id, and error_message (the last management
 * failure's JSON). The other modules (management/, configuration/, worker_interfaces/,
 * metrics/, global_config/, tracing/, actor_lineage/, actor_profiler_conf/) are answered by
 * their implementations, all registered in one sorted table (special_registry.c, as
 * SpecialKeySpace::registerKeyRange), on a management worker (special_worker.c) that may read
 * the database through the transaction.
 *
 * Writes (SpecialKeySpace::set/clear): without SPECIAL_KEY_SPACE_ENABLE_WRITES 2114; a key
 * outside every writable implementation 2115, a clear across two 2116. They are recorded in
 * the transaction's special write map (special_writes.c) and applied at commit by each
 * written implementation, in key order, before the transaction's own commit. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "database.h"
#include <stdio.h>
#include "special_keys.h"
#include "special_keys_internal.h"
#include "txn_api.h"
#include "txn_metadata.h"

enum module {
    M_NONE,
    M_TRANSACTION,
    M_STATUS,
    M_CONNECTION_STRING,
    M_CLUSTER_FILE_PATH,
    M_ERROR_MESSAGE,
    M_REGISTRY, /* answered by its implementations in the registry, on a worker */
    M_CLUSTER_ID,
};

typedef struct module_range {
    const char *begin;
    const char *end; /* NULL: the single key begin */
    enum module module;
} module_range;

static const module_range modules[] = {
    { "\xff\xff/transaction/", "\xff\xff/transaction0", M_TRANSACTION },
    { "\xff\xff/worker_interfaces/", "\xff\xff/worker_interfaces0", M_REGISTRY },
    { "\xff\xff/status/json", NULL, M_STATUS },
    { "\xff\xff/connection_string", NULL, M_CONNECTION_STRING },
    { "\xff\xff/cluster_file_path", NULL, M_CLUSTER_FILE_PATH },
    { "\xff\xff/metrics/", "\xff\xff/metrics0", M_REGISTRY },
    { "\xff\xff/management/", "\xff\xff/management0", M_REGISTRY },
    { "\xff\xff/error_message", NULL, M_ERROR_MESSAGE },
    { "\xff\xff/configuration/", "\xff\xff/configuration0", M_REGISTRY },
    { "\xff\xff/global_config/", "\xff\xff/global_config0", M_REGISTRY },
    { "\xff\xff/tracing/", "\xff\xff/tracing0", M_REGISTRY },
    { "\xff\xff/actor_lineage/", "\xff\xff/actor_lineage0", M_REGISTRY },
    { "\xff\xff/actor_profiler_conf/", "\xff\xff/actor_profiler_conf0", M_REGISTRY },
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

#define READ_CONFLICTS "\xff\xff/transaction/read_conflict_range/"
#define WRITE_CONFLICTS "\xff\xff/transaction/write_conflict_range/"

bool sk_has_prefix(cfdb_bytes k, const char *prefix)
{
    size_t n = strlen(prefix);
    return k.len >= n && memcmp(k.ptr, prefix, n) == 0;
}

cfdb_bytes sk_key(cfdb_arena *a, const char *prefix, cfdb_bytes tail)
{
    size_t n = strlen(prefix);
    uint8_t *p = cfdb_arena_alloc(a, n + tail.len + 1);
    if (!p)
        return cfdb_bytes_make(NULL, 0);
    memcpy(p, prefix, n);
    if (tail.len)
        memcpy(p + n, tail.ptr, tail.len);
    return cfdb_bytes_make(p, n + tail.len);
}

/* One boundary of a conflict range as a row of the module, kept if its key lies in
 * [begin, end). Returns 0 or TXN_ERR_NO_MEMORY. */
static int push_boundary(cfdb_future *f, cfdb_fdb_kv **rows, int *n, int *cap, const char *prefix, cfdb_bytes key,
                         bool starts, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_bytes row = sk_key(&f->arena, prefix, key);
    if (!row.ptr)
        return TXN_ERR_NO_MEMORY;
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
    (*rows)[(*n)++] = (cfdb_fdb_kv){ row.ptr, (int)row.len, (const uint8_t *)(starts ? "1" : "0"), 1 };
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
    const cfdb_native_tx *t = &cfdb_txn_ryw_locked(tx)->native;
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
    cfdb_txn_lock(tx);
    rc = txn_error_locked(tx);
    if (cfdb_txn_ryw_locked(tx)->disabled) {
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
        const cfdb_range_set *set = writes ? &cfdb_txn_ryw_locked(tx)->wm.conflict : &cfdb_txn_ryw_locked(tx)->reads.set;
        for (cfdb_omap_node *node = cfdb_omap_first(&set->map); node && !rc; node = cfdb_omap_next(node)) {
            cfdb_bytes ends[2] = { node->key, node->val.bytes };
            for (int e = 0; e < 2 && !rc; e++)
                rc = push_boundary(f, &rows, &n, &cap, prefix, ends[e], e == 0, begin, end);
        }
    }
    cfdb_txn_unlock(tx);
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

/* ---------- the implementations (special_registry.c) ---------- */

static bool impl_contains(const sk_impl *m, cfdb_bytes key)
{
    cfdb_bytes b = cfdb_bytes_str(m->begin);
    if (!m->end)
        return cfdb_bytes_eq(key, b);
    return cfdb_bytes_cmp(key, b) >= 0 && cfdb_bytes_cmp(key, cfdb_bytes_str(m->end)) < 0;
}

static size_t json_escape(const char *s, char *out)
{
    size_t o = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                      : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
        if (e) {
            memcpy(out + o, e, 2);
            o += 2;
        } else if (c < 0x20) {
            o += (size_t)snprintf(out + o, 7, "\\u%04X", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = 0;
    return o;
}

/* \xff\xff/error_message becomes m (malloc'ed, taken; NULL: out of memory, the message is
 * lost); the management failure's code. */
static int set_error_message(cfdb_txn *tx, char *m)
{
    cfdb_txn_lock(tx);
    if (m && (SK_STATE(tx) || (SK_STATE(tx) = calloc(1, sizeof *SK_STATE(tx))) != NULL)) {
        free(SK_STATE(tx)->error_msg);
        SK_STATE(tx)->error_msg = m;
        m = NULL;
    }
    cfdb_txn_unlock(tx);
    free(m);
    return CFDB_ERR_SPECIAL_KEYS_API_FAILURE;
}

int sk_api_failure(cfdb_txn *tx, bool retriable, const char *command, const char *message)
{
    /* ManagementAPIError::toJsonString: {"command":..,"message":..,"retriable":..} */
    size_t cap = 6 * (strlen(command) + strlen(message)) + 64;
    char *m = malloc(cap), *ce = malloc(6 * strlen(command) + 1), *me = malloc(6 * strlen(message) + 1);
    if (m && ce && me) {
        json_escape(command, ce);
        json_escape(message, me);
        snprintf(m, cap, "{\"command\":\"%s\",\"message\":\"%s\",\"retriable\":%s}", ce, me,
                 retriable ? "true" : "false");
    } else {
        free(m); /* not written: no message rather than garbage */
        m = NULL;
    }
    free(ce);
    free(me);
    return set_error_message(tx, m);
}

int sk_api_failure_text(cfdb_txn *tx, const char *message)
{
    return set_error_message(tx, strdup(message));
}

/* ---------- writes (mu held) ---------- */

static cfdb_sk_state *state(cfdb_txn *tx)
{
    if (!SK_STATE(tx))
        SK_STATE(tx) = calloc(1, sizeof *SK_STATE(tx));
    return SK_STATE(tx);
}

static const char *const management_options[] = {
    "excluded/force", "failed/force", "excluded_locality/force", "failed_locality/force", "worker_interfaces/verify",
};

static bool known_option(cfdb_bytes key)
{
    static const char prefix[] = SK_MGMT "options/";
    if (key.len < sizeof prefix - 1 || memcmp(key.ptr, prefix, sizeof prefix - 1) != 0)
        return false;
    cfdb_bytes rest = cfdb_bytes_make(key.ptr + sizeof prefix - 1, key.len - (sizeof prefix - 1));
    for (size_t i = 0; i < sizeof management_options / sizeof *management_options; i++)
        if (cfdb_bytes_eq(rest, cfdb_bytes_str(management_options[i])))
            return true;
    return false;
}

static int api_failure_locked(cfdb_txn *tx, const char *command, const char *message)
{
    cfdb_txn_unlock(tx);
    int rc = sk_api_failure(tx, false, command, message);
    cfdb_txn_lock(tx);
    return rc;
}

/* Runs a module's own set or clear over [begin, end) and does what it asks (mu held). */
static int apply_effect(cfdb_txn *tx, cfdb_sk_state *st, sk_set_fn set, sk_clear_fn clear, cfdb_bytes begin,
                        cfdb_bytes end, cfdb_bytes value, bool single)
{
    sk_write_effect e = { SK_REC_NONE, NULL, NULL, 0 };
    if (set)
        set(tx, begin, value, &e);
    else
        clear(tx, begin, end, single, &e);
    if (e.msg)
        api_failure_locked(tx, e.cmd, e.msg);
    int rc = 0;
    if (e.record == SK_REC_VALUE)
        rc = sk_writes_put(&st->w, begin, end, &value);
    else if (e.record == SK_REC_CLEAR)
        rc = sk_writes_put(&st->w, begin, end, NULL);
    return e.rc ? e.rc : rc;
}

int cfdb_special_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value)
{
    if (!cfdb_txn_options_locked(tx)->special_key_space_enable_writes)
        return CFDB_ERR_SPECIAL_KEYS_WRITE_DISABLED;
    const sk_impl *m = sk_find_write_impl(key);
    if (!m)
        return CFDB_ERR_SPECIAL_KEYS_NO_WRITE_MODULE_FOUND;
    if (cfdb_txn_in_tenant(tx)) /* no writable implementation supports tenants */
        return CFDB_ERR_ILLEGAL_TENANT_ACCESS;
    cfdb_sk_state *st = state(tx);
    if (!st)
        return CFDB_ERR_UNKNOWN_ERROR;
    uint8_t *after = malloc(key.len + 1);
    if (!after)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(after, key.ptr, key.len);
    after[key.len] = 0;
    cfdb_bytes end = cfdb_bytes_make(after, key.len + 1);
    int rc = 0;
    if (m->set) { /* the implementation's own set */
        rc = apply_effect(tx, st, m->set, NULL, key, end, value, false);
    } else if (m->write_kind == SK_W_OPTIONS) {
        if (known_option(key))
            rc = sk_writes_put(&st->w, key, end, &value);
    } else if (m->write_kind == SK_W_IGNORE_VALUE) {
        cfdb_bytes empty = { (const uint8_t *)"", 0 };
        rc = sk_writes_put(&st->w, key, end, &empty);
    } else {
        rc = sk_writes_put(&st->w, key, end, &value);
    }
    free(after);
    return rc;
}

int cfdb_special_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single)
{
    if (!cfdb_txn_options_locked(tx)->special_key_space_enable_writes)
        return CFDB_ERR_SPECIAL_KEYS_WRITE_DISABLED;
    const sk_impl *m = sk_find_write_impl(begin);
    uint8_t *after = NULL;
    if (single) {
        if (!m)
            return CFDB_ERR_SPECIAL_KEYS_NO_WRITE_MODULE_FOUND;
        if (!(after = malloc(begin.len + 1)))
            return CFDB_ERR_UNKNOWN_ERROR;
        memcpy(after, begin.ptr, begin.len);
        after[begin.len] = 0;
        end = cfdb_bytes_make(after, begin.len + 1);
    } else {
        if (cfdb_bytes_cmp(begin, end) >= 0)
            return 0;
        const sk_impl *last = sk_write_impl_before(end);
        if (m != last)
            return CFDB_ERR_SPECIAL_KEYS_CROSS_MODULE_CLEAR;
        if (!m)
            return CFDB_ERR_SPECIAL_KEYS_NO_WRITE_MODULE_FOUND;
    }
    if (cfdb_txn_in_tenant(tx))
        return CFDB_ERR_ILLEGAL_TENANT_ACCESS;
    int rc = 0;
    cfdb_sk_state *st = state(tx);
    if (!st) {
        rc = CFDB_ERR_UNKNOWN_ERROR;
    } else if (m->clear) { /* the implementation's own clear */
        rc = apply_effect(tx, st, NULL, m->clear, begin, end, cfdb_bytes_make(NULL, 0), single);
    } else if (m->write_kind == SK_W_NO_CLEAR) {
        bool coordinators = impl_contains(m, CFDB_BYTES_LIT(SK_CONF "coordinators/"));
        bool tracing = impl_contains(m, CFDB_BYTES_LIT("\xff\xff/tracing/"));
        const char *cmd = coordinators ? "coordinators" : tracing ? "clear trace" : "setclass";
        const char *msg = coordinators ? (single ? "Clear operation is meaningless thus forbidden for coordinators"
                                                 : "Clear range is meaningless thus forbidden for coordinators")
                          : tracing    ? (single ? "clear disabled" : "clear range disabled")
                                       : (single ? "Clear range operation is meaningless thus forbidden for setclass"
                                                 : "Clear operation is meaningless thus forbidden for setclass");
        rc = api_failure_locked(tx, cmd, msg);
    } else if (m->write_kind == SK_W_OPTIONS) {
        if (!single || known_option(begin))
            rc = sk_writes_erase(&st->w, begin, end);
    } else {
        rc = sk_writes_put(&st->w, begin, end, NULL);
    }
    free(after);
    return rc;
}

void cfdb_special_reset(cfdb_txn *tx)
{
    if (!SK_STATE(tx))
        return;
    sk_writes_free(&SK_STATE(tx)->w);
    free(SK_STATE(tx)->error_msg);
    if (SK_STATE(tx)->active > 0) { /* a worker restores the access later */
        memset(&SK_STATE(tx)->w, 0, sizeof SK_STATE(tx)->w);
        SK_STATE(tx)->error_msg = NULL;
        return;
    }
    free(SK_STATE(tx));
    SK_STATE(tx) = NULL;
}

bool cfdb_special_commit_first(cfdb_txn *tx)
{
    cfdb_txn_lock(tx);
    bool r = cfdb_txn_options_locked(tx)->special_key_space_enable_writes && SK_STATE(tx) && SK_STATE(tx)->w.n > 0;
    cfdb_txn_unlock(tx);
    return r;
}

cfdb_future *cfdb_special_commit(cfdb_txn *tx)
{
    cfdb_txn_lock(tx);
    int rc = txn_error_locked(tx);
    if (!rc && cfdb_txn_committing_locked(tx))
        rc = CFDB_ERR_USED_DURING_COMMIT;
    cfdb_txn_unlock(tx);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_VOID, rc);
    return sk_async_commit(tx);
}

static cfdb_future *error_message(cfdb_txn *tx)
{
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_VALUE);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_VALUE);
    int rc = 0;
    cfdb_txn_lock(tx);
    if (SK_STATE(tx) && SK_STATE(tx)->error_msg) {
        f->r.value.present = true;
        if (cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_str(SK_STATE(tx)->error_msg), &f->r.value.value))
            rc = CFDB_ERR_UNKNOWN_ERROR;
    }
    cfdb_txn_unlock(tx);
    cfdb_future_complete(f, rc);
    return f;
}

/* ---------- reads ---------- */

cfdb_future *cfdb_special_get(cfdb_txn *tx, cfdb_bytes key)
{
    cfdb_bytes mb, me;
    uint8_t scratch[64];
    cfdb_txn_lock(tx);
    int rc = txn_error_locked(tx);
    cfdb_txn_unlock(tx);
    if (rc)
        return cfdb_future_error(CFDB_FUTURE_VALUE, rc);
    enum module m = module_of(key, &mb, &me, scratch);
    switch (m) {
    case M_NONE:
        return cfdb_future_error(CFDB_FUTURE_VALUE, CFDB_ERR_SPECIAL_KEYS_NO_MODULE_FOUND);
    case M_TRANSACTION:
        if (cfdb_conflicts_is_special(key))
            return cfdb_conflicts_get(tx, key);
        if (sk_has_prefix(key, READ_CONFLICTS) || sk_has_prefix(key, WRITE_CONFLICTS))
            return conflict_boundary(tx, sk_has_prefix(key, WRITE_CONFLICTS), key);
        return absent(); /* no module's key there */
    case M_STATUS:
        return cfdb_txn_status_json(tx);
    case M_CONNECTION_STRING:
        return cfdb_future_or_no_memory(cfdb_db_text_value(cfdb_txn_db(tx), CFDB_DB_CONNECTION_STRING), CFDB_FUTURE_VALUE);
    case M_CLUSTER_FILE_PATH:
        return cfdb_future_or_no_memory(cfdb_db_text_value(cfdb_txn_db(tx), CFDB_DB_CLUSTER_FILE_PATH), CFDB_FUTURE_VALUE);
    case M_CLUSTER_ID:
        return cfdb_future_or_no_memory(cfdb_db_text_value(cfdb_txn_db(tx), CFDB_DB_CLUSTER_ID), CFDB_FUTURE_VALUE);
    case M_ERROR_MESSAGE:
        return error_message(tx);
    case M_REGISTRY: {
        if (cfdb_txn_in_tenant(tx)) /* their implementations do not support tenants */
            return cfdb_future_error(CFDB_FUTURE_VALUE, CFDB_ERR_ILLEGAL_TENANT_ACCESS);
        uint8_t *after = malloc(key.len + 1);
        if (!after)
            return txn_future_no_memory(CFDB_FUTURE_VALUE);
        memcpy(after, key.ptr, key.len);
        after[key.len] = 0;
        int n;
        const sk_impl *impls = sk_registry_slice(mb, me, &n);
        cfdb_future *f = sk_async_read(tx, impls, n, key, cfdb_bytes_make(after, key.len + 1), 0, false, true);
        free(after);
        return f;
    }
    default: /* every module is one of the cases above */
        return cfdb_future_error(CFDB_FUTURE_VALUE, CFDB_ERR_INTERNAL_ERROR);
    }
}

/* A single-key module (status/json, connection_string, cluster_file_path, cluster_id,
 * error_message) read as a range: SingleSpecialKeyImpl::getRange answers the key's row when
 * the key has a value (the range read stays inside the module, so it holds the key). The
 * key's own get runs and its value is copied into the range's future when it completes. */
typedef struct single_range {
    cfdb_future *out;
    cfdb_bytes key; /* in out's arena */
} single_range;

static void single_range_done(void *future, void *arg)
{
    cfdb_future *g = future;
    single_range *sr = arg;
    cfdb_future *out = sr->out;
    int rc = g->error;
    if (!rc && g->r.value.present) {
        cfdb_fdb_kv *kv = cfdb_arena_alloc(&out->arena, sizeof *kv);
        void *v = cfdb_arena_dup(&out->arena, g->r.value.value.ptr, g->r.value.value.len ? g->r.value.value.len : 1);
        if (kv && v) {
            kv->key = sr->key.ptr;
            kv->key_length = (int)sr->key.len;
            kv->value = v;
            kv->value_length = (int)g->r.value.value.len;
            out->r.kvs.items = kv;
            out->r.kvs.count = 1;
        } else {
            rc = CFDB_ERR_OUT_OF_MEMORY;
        }
    }
    cfdb_future_complete(out, rc);
    cfdb_future_unref(out);
    cfdb_future_unref(g);
}

static cfdb_future *single_key_range(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0 || cfdb_bytes_cmp(key, begin) < 0 || cfdb_bytes_cmp(key, end) >= 0)
        return cfdb_future_error(CFDB_FUTURE_KEYVALUES, 0);
    cfdb_future *out = cfdb_future_new(CFDB_FUTURE_KEYVALUES);
    if (!out)
        return cfdb_future_error(CFDB_FUTURE_KEYVALUES, CFDB_ERR_OUT_OF_MEMORY);
    single_range *sr = cfdb_arena_alloc(&out->arena, sizeof *sr);
    if (!sr || cfdb_arena_dup_bytes(&out->arena, key, &sr->key)) {
        cfdb_future_complete(out, CFDB_ERR_OUT_OF_MEMORY);
        return out;
    }
    sr->out = out;
    cfdb_future *g = cfdb_special_get(tx, sr->key);
    if (!g) {
        cfdb_future_complete(out, CFDB_ERR_OUT_OF_MEMORY);
        return out;
    }
    cfdb_future_ref(out); /* the callback's */
    if (!cfdb_future_set_callback(g, single_range_done, sr))
        single_range_done(g, sr);
    return out;
}

/* A transaction/ range that is not inside one implementation: each implementation met
 * (conflicting_keys/, read_conflict_range/, write_conflict_range/, in key order) answers its
 * part of the range, and the rows are joined, reversed and limited as
 * SpecialKeySpace::getRangeAggregationActor joins them. The three answer at once. */
static cfdb_future *transaction_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse)
{
    static const char *const impls[3][2] = {
        { "\xff\xff/transaction/conflicting_keys/", "\xff\xff/transaction/conflicting_keys0" },
        { READ_CONFLICTS, "\xff\xff/transaction/read_conflict_range0" },
        { WRITE_CONFLICTS, "\xff\xff/transaction/write_conflict_range0" },
    };
    cfdb_future *out = cfdb_future_new(CFDB_FUTURE_KEYVALUES);
    if (!out)
        return txn_future_no_memory(CFDB_FUTURE_KEYVALUES);
    cfdb_future *parts[3] = { NULL, NULL, NULL };
    int rc = 0, total = 0;
    for (int i = 0; i < 3 && !rc; i++) {
        cfdb_bytes ib = cfdb_bytes_str(impls[i][0]), ie = cfdb_bytes_str(impls[i][1]);
        cfdb_bytes b = cfdb_bytes_cmp(begin, ib) > 0 ? begin : ib, e = cfdb_bytes_cmp(end, ie) < 0 ? end : ie;
        if (cfdb_bytes_cmp(b, e) >= 0)
            continue;
        parts[i] = i == 0 ? cfdb_conflicts_get_range(tx, b, e, 0, false) : conflict_ranges(tx, i == 2, b, e, 0, false);
        rc = parts[i]->error;
        total += rc ? 0 : parts[i]->r.kvs.count;
    }
    int n = limit > 0 && total > limit ? limit : total;
    cfdb_fdb_kv *rows = rc || !n ? NULL : cfdb_arena_alloc(&out->arena, (size_t)n * sizeof *rows);
    if (!rc && n && !rows)
        rc = CFDB_ERR_OUT_OF_MEMORY;
    for (int i = 0, at = 0; i < 3 && !rc && at < n; i++) {
        int p = reverse ? 2 - i : i;
        if (!parts[p])
            continue;
        for (int j = 0; j < parts[p]->r.kvs.count && at < n && !rc; j++) {
            const cfdb_fdb_kv *kv = &parts[p]->r.kvs.items[reverse ? parts[p]->r.kvs.count - 1 - j : j];
            cfdb_bytes k, v;
            if (cfdb_arena_dup_bytes(&out->arena, cfdb_bytes_make(kv->key, (size_t)kv->key_length), &k) ||
                cfdb_arena_dup_bytes(&out->arena, cfdb_bytes_make(kv->value, (size_t)kv->value_length), &v))
                rc = CFDB_ERR_OUT_OF_MEMORY;
            else
                rows[at++] = (cfdb_fdb_kv){ k.ptr, (int)k.len, v.ptr, (int)v.len };
        }
    }
    for (int i = 0; i < 3; i++)
        if (parts[i])
            cfdb_future_unref(parts[i]);
    if (!rc) {
        out->r.kvs.items = rows;
        out->r.kvs.count = n;
        out->r.kvs.more = n < total;
    }
    cfdb_future_complete(out, rc);
    return out;
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
        if (sk_has_prefix(begin, READ_CONFLICTS) && cfdb_bytes_cmp(end, cfdb_bytes_str(read_end)) <= 0)
            return conflict_ranges(tx, false, begin, end, limit, reverse);
        if (sk_has_prefix(begin, WRITE_CONFLICTS) && cfdb_bytes_cmp(end, cfdb_bytes_str(write_end)) <= 0)
            return conflict_ranges(tx, true, begin, end, limit, reverse);
    }
    if (m == M_REGISTRY) {
        cfdb_txn_lock(tx);
        int rc = txn_error_locked(tx);
        cfdb_txn_unlock(tx);
        if (rc)
            return cfdb_future_error(CFDB_FUTURE_KEYVALUES, rc);
        if (cfdb_bytes_cmp(begin, end) >= 0)
            return cfdb_future_error(CFDB_FUTURE_KEYVALUES, 0);
        if (cfdb_txn_in_tenant(tx))
            return cfdb_future_error(CFDB_FUTURE_KEYVALUES, CFDB_ERR_ILLEGAL_TENANT_ACCESS);
        int n;
        const sk_impl *impls = sk_registry_slice(mb, me, &n);
        return sk_async_read(tx, impls, n, begin, end, limit, reverse, false);
    }
    if (m == M_STATUS || m == M_CONNECTION_STRING || m == M_CLUSTER_FILE_PATH || m == M_CLUSTER_ID ||
        m == M_ERROR_MESSAGE)
        return single_key_range(tx, mb, begin, end);
    if (m == M_TRANSACTION)
        return transaction_range(tx, begin, end, limit, reverse);
    return cfdb_future_error(CFDB_FUTURE_KEYVALUES, CFDB_ERR_INTERNAL_ERROR); /* every module is above */
}

static const cfdb_special_router router = {
    .get = cfdb_special_get,
    .get_range = cfdb_special_get_range,
    .set = cfdb_special_set,
    .clear = cfdb_special_clear,
    .reset = cfdb_special_reset,
    .commit_first = cfdb_special_commit_first,
    .commit = cfdb_special_commit,
};

void cfdb_special_install(int api_version)
{
    cfdb_special_set_api_version(api_version);
    cfdb_txn_set_special_router(&router);
}
