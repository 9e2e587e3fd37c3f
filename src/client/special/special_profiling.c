/* \xff\xff/management/profiling/ (7.3.77 fdbclient/SpecialKeySpace.actor.cpp ClientProfilingImpl;
 * registered by NativeAPI.actor.cpp's DatabaseContext constructor with deprecatedVersion
 * ApiVersion::withClientProfilingDeprecated() = 720, so only when the selected API version
 * is below 720). At API 720 and above (cfdb's default, 730) the range belongs to no
 * implementation: reads of it have no rows and writes fail with
 * special_keys_no_write_module_found (2115); sk_impl_registered tells the router.
 *
 * Below 720, two options, kept as global-config keys (GlobalConfig.actor.cpp):
 *   client_txn_sample_rate  config/fdb_client_info/client_txn_sample_rate  a tuple double
 *   client_txn_size_limit   config/fdb_client_info/client_txn_size_limit   a tuple int64
 * Read: the value written in this transaction when there is one (and read-your-writes is
 * on), else from the database's global-config view: a double as std::to_string ("%f"), an
 * integer in decimal, "default" when absent; a value of another type makes std::any_cast
 * throw, which leaves the read as unknown_error (4000).
 * Commit (when anything in the range was set): "default" clears the global-config key,
 * anything else must be all of a boost::lexical_cast<double> / <int64_t> (no spaces, no hex,
 * the whole string), else the commit fails with 2117 and {"command":"profile","message":
 * "Invalid transaction sample rate(double): <v>"} / "Invalid transaction size limit(int64_t):
 * <v>"; the changes go through GlobalConfig::applyChanges (\xff/globalConfig/k/ keys, a history
 * entry, the version key), sample rate before size limit, insertions before clears; a commit
 * with neither option written still writes an (empty) history entry.
 * Clears fail with 2117: {"command":"profile","message":"Clear operation is forbidden for
 * profile client. You can set it to default to disable profiling."} (a range: "Clear range is
 * forbidden ...").
 * Value text as the application wrote it is kept in the write map, so a read in the same
 * transaction shows it even when the commit would refuse it. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "global_config.h"
#include "special_keys.h"
#include "special_keys_internal.h"
#include "tenant_entry.h"
#include "txn_api.h"

#define PR_PREFIX SK_MGMT "profiling/"
#define PR_RATE PR_PREFIX "client_txn_sample_rate"
#define PR_SIZE PR_PREFIX "client_txn_size_limit"
#define GC_RATE "config/fdb_client_info/client_txn_sample_rate"
#define GC_SIZE "config/fdb_client_info/client_txn_size_limit"

static atomic_int g_api_version;

void cfdb_special_set_api_version(int version)
{
    atomic_store(&g_api_version, version);
}

bool sk_impl_registered(const sk_impl *m)
{
    if (!(m->flags & SK_BEFORE_API_720))
        return true;
    int v = atomic_load(&g_api_version);
    return v != 0 && v < 720;
}

static bool in_range(const char *key, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_bytes k = cfdb_bytes_str(key);
    return cfdb_bytes_cmp(k, begin) >= 0 && cfdb_bytes_cmp(k, end) < 0;
}

/* The value written in this transaction at key (the write map's entry), if a set. */
static bool written(cfdb_txn *tx, const char *key, cfdb_arena *a, cfdb_bytes *value, bool *ryw_disabled)
{
    cfdb_bytes k = cfdb_bytes_str(key);
    sk_entries e;
    uint8_t end[64];
    memcpy(end, k.ptr, k.len);
    end[k.len] = 0;
    if (sk_collect(tx, k, cfdb_bytes_make(end, k.len + 1), a, &e))
        return false;
    *ryw_disabled = e.ryw_disabled;
    if (e.n > 0 && e.items[0].has_value && cfdb_bytes_cmp(e.items[0].begin, k) <= 0) {
        *value = e.items[0].value;
        return true;
    }
    return false;
}

/* GlobalConfig::get<T>: 0 with *present, or 4000 when the stored type is not T. */
static int gc_typed(cfdb_txn *tx, const char *name, enum cfdb_gc_type want, cfdb_arena *a, bool *present,
                    cfdb_gc_value *out)
{
    *present = false;
    cfdb_gc_view *v = cfdb_db_gc_view(cfdb_txn_db(tx));
    if (!v)
        return 0;
    cfdb_bytes k = cfdb_bytes_str(name);
    uint8_t end[64];
    memcpy(end, k.ptr, k.len);
    end[k.len] = 0;
    cfdb_gc_entry *items;
    size_t n;
    int rc = cfdb_gc_get_range(v, k, cfdb_bytes_make(end, k.len + 1), a, &items, &n);
    if (rc || n == 0)
        return rc;
    if (items[0].value.type != want)
        return CFDB_ERR_UNKNOWN_ERROR; /* std::bad_any_cast */
    *present = true;
    *out = items[0].value;
    return 0;
}

int sk_profiling_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    if (!sk_impl_registered(&(sk_impl){ .flags = SK_BEFORE_API_720 }))
        return 0; /* not registered: no implementation answers here */
    static const char *const keys[2] = { PR_RATE, PR_SIZE };
    static const char *const names[2] = { GC_RATE, GC_SIZE };
    for (int i = 0; i < 2; i++) {
        if (!in_range(keys[i], begin, end))
            continue;
        cfdb_bytes value;
        bool ryw_disabled = false;
        int rc;
        if (written(tx, keys[i], a, &value, &ryw_disabled) && !ryw_disabled) {
            rc = sk_rows_push(out, a, cfdb_bytes_str(keys[i]), value);
        } else {
            bool present;
            cfdb_gc_value gv;
            rc = gc_typed(tx, names[i], i == 0 ? CFDB_GC_DOUBLE : CFDB_GC_INT, a, &present, &gv);
            char text[400] = "default";
            if (!rc && present && i == 0 && !isinf(gv.d))
                snprintf(text, sizeof text, "%f", gv.d);
            if (!rc && present && i == 1 && gv.i != -1)
                snprintf(text, sizeof text, "%lld", (long long)gv.i);
            if (!rc)
                rc = sk_rows_push(out, a, cfdb_bytes_str(keys[i]), cfdb_bytes_str(text));
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* boost::lexical_cast: the whole string, no leading space, decimal only. */
static bool cast_double(const char *s, double *out)
{
    if (!*s || *s == ' ' || (*s >= '\t' && *s <= '\r') || strpbrk(s, "xX"))
        return false;
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return *end == 0 && errno != ERANGE;
}

static bool cast_int64(const char *s, long long *out)
{
    if (!*s || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
        return false;
    char *end;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return *end == 0 && errno != ERANGE;
}

/* Tuple::makeTuple(double).pack(): 0x21, the bits big-endian, sign bit flipped (all bits
 * when negative). */
static void pack_double(double d, uint8_t out[9])
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    bits = (bits & UINT64_C(0x8000000000000000)) ? ~bits : bits ^ UINT64_C(0x8000000000000000);
    out[0] = 0x21;
    for (int i = 0; i < 8; i++)
        out[1 + i] = (uint8_t)(bits >> (56 - 8 * i));
}

int sk_profiling_commit(cfdb_txn *tx, cfdb_arena *a)
{
    cfdb_mutation muts[4];
    size_t n = 0, nclears = 0;
    cfdb_mutation clears[2];
    static const char *const keys[2] = { PR_RATE, PR_SIZE };
    static const char *const names[2] = { GC_RATE, GC_SIZE };
    for (int i = 0; i < 2; i++) {
        cfdb_bytes value;
        bool ryw_disabled;
        if (!written(tx, keys[i], a, &value, &ryw_disabled))
            continue;
        char *s = cfdb_arena_alloc(a, value.len + 1);
        uint8_t *packed = cfdb_arena_alloc(a, 10);
        uint8_t *after = cfdb_arena_alloc(a, strlen(names[i]) + 1);
        if (!s || !packed || !after)
            return CFDB_ERR_UNKNOWN_ERROR;
        memcpy(s, value.ptr, value.len);
        s[value.len] = 0;
        if (strcmp(s, "default") == 0) {
            memcpy(after, names[i], strlen(names[i]));
            after[strlen(names[i])] = 0;
            clears[nclears++] = (cfdb_mutation){ CFDB_MUT_CLEAR_RANGE, cfdb_bytes_str(names[i]),
                                                 cfdb_bytes_make(after, strlen(names[i]) + 1) };
            continue;
        }
        double d;
        long long v;
        size_t plen;
        if (i == 0) {
            if (memchr(value.ptr, 0, value.len) || !cast_double(s, &d)) {
                char msg[300];
                snprintf(msg, sizeof msg, "Invalid transaction sample rate(double): %s", s);
                return sk_api_failure(tx, false, "profile", msg);
            }
            pack_double(d, packed);
            plen = 9;
        } else {
            if (memchr(value.ptr, 0, value.len) || !cast_int64(s, &v)) {
                char msg[300];
                snprintf(msg, sizeof msg, "Invalid transaction size limit(int64_t): %s", s);
                return sk_api_failure(tx, false, "profile", msg);
            }
            plen = tuple_put_int(packed, (int64_t)v);
        }
        muts[n++] = (cfdb_mutation){ CFDB_MUT_SET_VALUE, cfdb_bytes_str(names[i]), cfdb_bytes_make(packed, plen) };
    }
    for (size_t i = 0; i < nclears; i++)
        muts[n++] = clears[i];
    return sk_gc_apply_changes(tx, a, muts, n);
}

void sk_profiling_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single, sk_write_effect *e)
{
    (void)tx;
    (void)begin;
    (void)end;
    e->cmd = "profile";
    e->msg = single ? "Clear operation is forbidden for profile client. You can set it to default to disable profiling."
                    : "Clear range is forbidden for profile client. You can set it to default to disable profiling.";
    e->rc = CFDB_ERR_SPECIAL_KEYS_API_FAILURE;
}
