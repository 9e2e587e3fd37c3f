/* The special key space's implementations, one table sorted by begin (SpecialKeySpace's
 * registerKeyRange calls at 7.3.77, one row each): the router (special_keys.c) finds the
 * implementation holding a key by one binary search here, and a module's implementations as
 * the run of rows inside the module's bounds. Ranges do not overlap. */
#include <stdatomic.h>
#include <string.h>

#include "special_keys_internal.h"

#define AL "\xff\xff/actor_lineage/"
#define AP "\xff\xff/actor_profiler_conf/"
#define GC "\xff\xff/global_config/"
#define TR "\xff\xff/tracing/"
#define WI "\xff\xff/worker_interfaces/"
#define DD "\xff\xff/metrics/data_distribution_stats/"
#define HM "\xff\xff/metrics/health/"

/* a range [SK_MGMT b, SK_MGMT e) / the single key SK_MGMT b of management/ */
#define MR(b, e) SK_MGMT b, SK_MGMT e
#define MK(b) SK_MGMT b, NULL
#define CR(b, e) SK_CONF b, SK_CONF e

#define W SK_WRITABLE

const sk_impl sk_registry[] = {
    /*  begin, end                                          read                          set                    clear                   commit                          flags                   write kind */
    { AL, "\xff\xff/actor_lineage0",                        sk_lineage_read,               NULL,                  NULL,                   NULL,                           0,                      SK_W_DEFAULT },
    { AP, "\xff\xff/actor_profiler_conf0",                  sk_profiler_conf_read,         sk_profiler_conf_set,  sk_profiler_conf_clear, sk_profiler_conf_commit,        W,                      SK_W_DEFAULT },
    { CR("coordinators/", "coordinators0"),                 sk_coordinators_read,          NULL,                  NULL,                   sk_coordinators_commit,         W,                      SK_W_NO_CLEAR },
    { CR("process/class_source/", "process/class_source0"), sk_class_source_read,          NULL,                  NULL,                   NULL,                           0,                      SK_W_DEFAULT },
    { CR("process/class_type/", "process/class_type0"),     sk_class_type_read,            NULL,                  NULL,                   sk_class_type_commit,           W,                      SK_W_NO_CLEAR },
    { GC, "\xff\xff/global_config0",                        sk_gc_read,                    NULL,                  NULL,                   sk_gc_commit,                   W,                      SK_W_DEFAULT },
    { MK("auto_coordinators"),                              sk_auto_coordinators_read,     NULL,                  NULL,                   NULL,                           0,                      SK_W_DEFAULT },
    { MK("consistency_check_suspended"),                    sk_mgmt_cc_read,               NULL,                  NULL,                   sk_mgmt_cc_commit,              W,                      SK_W_DEFAULT },
    { MR("data_distribution/", "data_distribution0"),       sk_mgmt_dd_read,               NULL,                  NULL,                   sk_mgmt_dd_commit,              W,                      SK_W_DEFAULT },
    { MK("db_locked"),                                      sk_mgmt_lock_read,             NULL,                  NULL,                   sk_mgmt_lock_commit,            W,                      SK_W_DEFAULT },
    { MR("excluded/", "excluded0"),                         sk_mgmt_excluded_read,         NULL,                  NULL,                   sk_mgmt_excluded_commit,        W,                      SK_W_IGNORE_VALUE },
    { MR("excluded_locality/", "excluded_locality0"),       sk_mgmt_excluded_locality_read, NULL,                 NULL,                   sk_mgmt_excluded_locality_commit, W,                    SK_W_IGNORE_VALUE },
    { MR("failed/", "failed0"),                             sk_mgmt_failed_read,           NULL,                  NULL,                   sk_mgmt_failed_commit,          W,                      SK_W_IGNORE_VALUE },
    { MR("failed_locality/", "failed_locality0"),           sk_mgmt_failed_locality_read,  NULL,                  NULL,                   sk_mgmt_failed_locality_commit, W,                      SK_W_IGNORE_VALUE },
    { MR("in_progress_exclusion/", "in_progress_exclusion0"), sk_in_progress_exclusion_read, NULL,                NULL,                   NULL,                           0,                      SK_W_DEFAULT },
    { MR("maintenance/", "maintenance0"),                   sk_mgmt_maintenance_read,      NULL,                  NULL,                   sk_mgmt_maintenance_commit,     W,                      SK_W_DEFAULT },
    { MK("min_required_commit_version"),                    sk_min_commit_version_read,    NULL,                  NULL,                   sk_min_commit_version_commit,   W,                      SK_W_DEFAULT },
    { MR("options/", "options0"),                           sk_mgmt_options_read,          NULL,                  NULL,                   sk_mgmt_options_commit,         W,                      SK_W_OPTIONS },
    { MR("profiling/", "profiling0"),                       sk_profiling_read,             NULL,                  sk_profiling_clear,     sk_profiling_commit,            W | SK_BEFORE_API_720,  SK_W_DEFAULT },
    { MR("tenant/", "tenant0"),                             sk_tenant_read,                NULL,                  NULL,                   sk_tenant_commit,               W,                      SK_W_DEFAULT },
    { MK("version_epoch"),                                  sk_version_epoch_read,         NULL,                  NULL,                   sk_version_epoch_commit,        W,                      SK_W_DEFAULT },
    { DD, DD "\xff\xff",                                    sk_metrics_dd_read,            NULL,                  NULL,                   NULL,                           0,                      SK_W_DEFAULT },
    { HM, "\xff\xff/metrics/health0",                       sk_metrics_health_read,        NULL,                  NULL,                   NULL,                           0,                      SK_W_DEFAULT },
    { TR, "\xff\xff/tracing0",                              sk_tracing_read,               sk_tracing_set,        NULL,                   sk_tracing_commit,              W,                      SK_W_NO_CLEAR },
    { WI, "\xff\xff/worker_interfaces0",                    sk_worker_interfaces_read,     NULL,                  NULL,                   NULL,                           0,                      SK_W_DEFAULT },
};
const int sk_registry_count = (int)(sizeof sk_registry / sizeof *sk_registry);

/* The number of rows whose begin is < key (or <= key when or_equal). */
static int rows_before(cfdb_bytes key, bool or_equal)
{
    int lo = 0, hi = sk_registry_count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = cfdb_bytes_cmp(cfdb_bytes_str(sk_registry[mid].begin), key);
        if (c < 0 || (or_equal && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool contains(const sk_impl *m, cfdb_bytes key)
{
    cfdb_bytes b = cfdb_bytes_str(m->begin);
    if (!m->end)
        return cfdb_bytes_eq(key, b);
    return cfdb_bytes_cmp(key, b) >= 0 && cfdb_bytes_cmp(key, cfdb_bytes_str(m->end)) < 0;
}

const sk_impl *sk_find_write_impl(cfdb_bytes key)
{
    int i = rows_before(key, true) - 1; /* the last row beginning at or before key */
    if (i < 0)
        return NULL;
    const sk_impl *m = &sk_registry[i];
    return (m->flags & SK_WRITABLE) && sk_impl_registered(m) && contains(m, key) ? m : NULL;
}

const sk_impl *sk_write_impl_before(cfdb_bytes end)
{
    int i = rows_before(end, false) - 1; /* the last row beginning before end */
    if (i < 0)
        return NULL;
    const sk_impl *m = &sk_registry[i];
    if (!(m->flags & SK_WRITABLE) || !sk_impl_registered(m))
        return NULL;
    cfdb_bytes b = cfdb_bytes_str(m->begin);
    if (m->end)
        return cfdb_bytes_cmp(end, cfdb_bytes_str(m->end)) <= 0 ? m : NULL;
    return end.len == b.len + 1 && end.ptr[b.len] == 0 && memcmp(end.ptr, b.ptr, b.len) == 0 ? m : NULL;
}

const sk_impl *sk_registry_slice(cfdb_bytes mbegin, cfdb_bytes mend, int *n)
{
    int first = rows_before(mbegin, false), last = rows_before(mend, false);
    *n = last - first;
    return &sk_registry[first];
}
