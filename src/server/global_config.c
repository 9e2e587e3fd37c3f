/* The cluster's global configuration, as a one-process fdbserver serves it to clients:
 *  - the GRV proxy answers GlobalConfigRefreshRequest with the rows of \xff/globalConfig/k/
 *    and the version in \xff/globalConfig/v (the first 8 bytes of its versionstamp, big
 *    endian; 0 when never written), read at the latest version
 *    (fdbserver/GrvProxyServer.actor.cpp globalConfigRefresh; the real proxy caches them and
 *    reads again every GLOBAL_CONFIG_REFRESH_INTERVAL, this one reads at each request);
 *  - the cluster controller publishes the history \xff/globalConfig/h/<versionstamp> =
 *    IncludeVersion + VersionHistory in ClientDBInfo.history, each entry's version taken
 *    from its key's versionstamp, and a new ClientDBInfo every time a commit writes
 *    \xff/globalConfig/v (fdbserver/ClusterController.actor.cpp monitorGlobalConfig). An
 *    entry written under another protocol version, or one that does not decode, makes the
 *    history a single entry of version INT64_MAX (the client then reads everything again).
 * The published history lives in s->gc_arena, replaced whole at each change; it holds at
 * most what \xff/globalConfig/h/ holds (writers keep 3 entries). */
#include <stdint.h>
#include <string.h>

#include "fb.h"
#include "protocol_version.h"
#include "coordinator.h"
#include "global_config.h"

#define GC_VERSION_KEY "\xff/globalConfig/v"
#define GC_HISTORY "\xff/globalConfig/h/"
#define GC_HISTORY_END "\xff/globalConfig/h0"
#define GC_DATA "\xff/globalConfig/k/"
#define GC_DATA_END "\xff/globalConfig/k0"
#define GC_READ_BYTES (64 << 20) /* CLIENT_KNOBS->TOO_MANY rows: bounded by bytes here */

bool srv_gc_touched(const cfdb_mutation *m, size_t n)
{
    const cfdb_bytes vk = CFDB_BYTES_LIT(GC_VERSION_KEY);
    for (size_t i = 0; i < n; i++) {
        if (m[i].type == CFDB_MUT_CLEAR_RANGE) {
            if (cfdb_bytes_cmp(m[i].param1, vk) <= 0 && cfdb_bytes_cmp(vk, m[i].param2) < 0)
                return true;
        } else if (cfdb_bytes_eq(m[i].param1, vk)) {
            return true;
        }
    }
    return false;
}

static int64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return (int64_t)v;
}

void srv_gc_refresh(srv *s)
{
    int64_t v = cfdb_mvcc_latest_version(s->store);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_version_history *hist = NULL;
    size_t nhist = 0;
    cfdb_bytes val;
    bool present = false;
    if (cfdb_mvcc_get(s->store, v, CFDB_BYTES_LIT(GC_VERSION_KEY), &val, &present) == 0 && present) {
        cfdb_mvcc_range_result r;
        memset(&r, 0, sizeof r);
        if (cfdb_mvcc_read_range(s->store, v, CFDB_BYTES_LIT(GC_HISTORY), CFDB_BYTES_LIT(GC_HISTORY_END), 1000000,
                                 GC_READ_BYTES, &a, &r) == 0 &&
            r.count > 0) {
            hist = cfdb_arena_alloc(&a, r.count * sizeof *hist);
            const size_t pl = sizeof GC_HISTORY - 1;
            for (size_t i = 0; hist && i < r.count; i++) {
                cfdb_bytes k = r.rows[i].key, hv = r.rows[i].value;
                uint64_t pv = 0;
                memset(&hist[nhist], 0, sizeof *hist);
                if (k.len < pl + 8 || fb_decode_versioned(&cfdb_msg_version_history, hv, &hist[nhist], &pv, &a) ||
                    pv != CFDB_PROTOCOL_VERSION) {
                    hist[0] = (cfdb_version_history){ .version = INT64_MAX };
                    nhist = 1;
                    break;
                }
                hist[nhist++].version = be64(k.ptr + pl);
            }
        }
    }
    cfdb_arena_free(&s->gc_arena);
    s->gc_arena = a;
    s->gc_history = hist;
    s->gc_nhistory = nhist;
    s->client_info_id = srv_random_uid(s);
    coord_client_info_changed(s);
}

void srv_gc_client_info(srv *s, cfdb_client_db_info *out)
{
    out->history.items = s->gc_history;
    out->history.count = (uint32_t)s->gc_nhistory;
}

void srv_gc_refresh_reply(srv *s, cfdb_arena *a, cfdb_global_config_refresh_reply *r)
{
    int64_t v = cfdb_mvcc_latest_version(s->store);
    memset(r, 0, sizeof *r);
    cfdb_bytes val;
    bool present = false;
    if (cfdb_mvcc_get(s->store, v, CFDB_BYTES_LIT(GC_VERSION_KEY), &val, &present) == 0 && present && val.len >= 8)
        r->version = be64(val.ptr);
    cfdb_mvcc_range_result rows;
    memset(&rows, 0, sizeof rows);
    if (cfdb_mvcc_read_range(s->store, v, CFDB_BYTES_LIT(GC_DATA), CFDB_BYTES_LIT(GC_DATA_END), 1000000, GC_READ_BYTES,
                             a, &rows) == 0 &&
        rows.count > 0) {
        cfdb_key_value *kv = cfdb_arena_alloc(a, rows.count * sizeof *kv);
        for (size_t i = 0; kv && i < rows.count; i++)
            kv[i] = (cfdb_key_value){ rows.rows[i].key, rows.rows[i].value };
        if (kv) {
            r->result.data.items = kv;
            r->result.data.count = (uint32_t)rows.count;
        }
    }
}
