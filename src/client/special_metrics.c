/* \xff\xff/metrics/ (7.3.77 fdbclient/NativeAPI.actor.cpp HealthMetricsRangeImpl and
 * healthMetricsToKVPairs):
 *   health/: the GRV proxy's health metrics (db_manage.c cfdb_db_get_health_metrics), asked
 *     detailed when the range read meets health/storage/ or health/log/. Rows, each a JSON
 *     object as json_spirit writes it (keys in std::map order, no spaces, doubles with 17
 *     significant digits as %.17g, bools true/false):
 *       health/aggregate, only when worstStorageDurabilityLag != 0:
 *         batch_limited, limiting_storage_durability_lag, limiting_storage_queue, tps_limit,
 *         worst_log_queue (worstTLogQueue), worst_storage_durability_lag, worst_storage_queue;
 *       health/log/<UID::toString, 32 hex digits>: log_queue;
 *       health/storage/<uid>: cpu_usage, disk_usage, storage_durability_lag, storage_queue.
 *   data_distribution_stats/ (DDStatsRangeImpl over ddStatsRange, which ends at
 *     data_distribution_stats/\xff\xff): the range read without the prefix goes to a commit
 *     proxy (db_manage.c cfdb_db_get_dd_metrics); per shard a row, key the prefix + the
 *     shard's begin key, value {"shard_bytes":N,"shard_bytes_per_ksecond":N}.
 * The special key space keeps only the rows inside the range read (sk_async_read). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cfdb/errors.h"
#include "database.h"
#include "future.h"
#include "special_keys_internal.h"
#include "txn_internal.h"

#define HEALTH "\xff\xff/metrics/health/"

static bool meets(cfdb_bytes begin, cfdb_bytes end, const char *b, const char *e)
{
    return cfdb_bytes_cmp(begin, cfdb_bytes_str(e)) < 0 && cfdb_bytes_cmp(cfdb_bytes_str(b), end) < 0;
}

static int push(sk_rows *out, cfdb_arena *a, const char *key, const char *json)
{
    return sk_rows_push(out, a, cfdb_bytes_str(key), cfdb_bytes_str(json));
}

static int health_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    bool detailed = meets(begin, end, HEALTH "storage/", HEALTH "storage0") ||
                    meets(begin, end, HEALTH "log/", HEALTH "log0");
    cfdb_future *f = cfdb_db_get_health_metrics(tx->db, detailed);
    if (!f)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_future_wait(f);
    int rc = f->error;
    cfdb_health_metrics m;
    if (!rc)
        rc = cfdb_health_metrics_decode(f->r.value.value, a, &m);
    char key[sizeof HEALTH + 48], json[512];
    if (!rc && m.worstStorageDurabilityLag != 0) {
        snprintf(json, sizeof json,
                 "{\"batch_limited\":%s,\"limiting_storage_durability_lag\":%" PRId64
                 ",\"limiting_storage_queue\":%" PRId64 ",\"tps_limit\":%.17g,\"worst_log_queue\":%" PRId64
                 ",\"worst_storage_durability_lag\":%" PRId64 ",\"worst_storage_queue\":%" PRId64 "}",
                 m.batchLimited ? "true" : "false", m.limitingStorageDurabilityLag, m.limitingStorageQueue,
                 m.tpsLimit, m.worstTLogQueue, m.worstStorageDurabilityLag, m.worstStorageQueue);
        rc = push(out, a, HEALTH "aggregate", json);
    }
    for (size_t i = 0; !rc && i < m.nlog; i++) {
        snprintf(key, sizeof key, HEALTH "log/%016" PRIx64 "%016" PRIx64, m.log[i].id.first, m.log[i].id.second);
        snprintf(json, sizeof json, "{\"log_queue\":%" PRId64 "}", m.log[i].queue);
        rc = push(out, a, key, json);
    }
    for (size_t i = 0; !rc && i < m.nstorage; i++) {
        const cfdb_health_storage_stats *s = &m.storage[i];
        snprintf(key, sizeof key, HEALTH "storage/%016" PRIx64 "%016" PRIx64, s->id.first, s->id.second);
        snprintf(json, sizeof json,
                 "{\"cpu_usage\":%.17g,\"disk_usage\":%.17g,\"storage_durability_lag\":%" PRId64
                 ",\"storage_queue\":%" PRId64 "}",
                 s->cpuUsage, s->diskUsage, s->storageDurabilityLag, s->storageQueue);
        rc = push(out, a, key, json);
    }
    cfdb_future_unref(f);
    return rc;
}

#define DD "\xff\xff/metrics/data_distribution_stats/"

static int dd_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    const size_t pl = sizeof DD - 1; /* begin and end lie inside ddStatsRange: both have the prefix */
    cfdb_future *f = cfdb_db_get_dd_metrics(tx->db, cfdb_bytes_make(begin.ptr + pl, begin.len - pl),
                                            cfdb_bytes_make(end.ptr + pl, end.len - pl));
    if (!f)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_future_wait(f);
    int rc = f->error;
    for (int i = 0; !rc && i < f->r.kvs.count; i++) {
        const cfdb_fdb_kv *d = &f->r.kvs.items[i];
        int64_t bytes, per_ks;
        memcpy(&bytes, d->value, 8);
        memcpy(&per_ks, d->value + 8, 8);
        uint8_t *k = cfdb_arena_alloc(a, pl + (size_t)d->key_length);
        if (!k) {
            rc = CFDB_ERR_UNKNOWN_ERROR;
            break;
        }
        memcpy(k, DD, pl);
        if (d->key_length)
            memcpy(k + pl, d->key, (size_t)d->key_length);
        char json[96];
        snprintf(json, sizeof json, "{\"shard_bytes\":%" PRId64 ",\"shard_bytes_per_ksecond\":%" PRId64 "}", bytes,
                 per_ks);
        rc = sk_rows_push(out, a, cfdb_bytes_make(k, pl + (size_t)d->key_length), cfdb_bytes_str(json));
    }
    cfdb_future_unref(f);
    return rc;
}

const sk_impl sk_metrics_impls[] = {
    { DD, DD "\xff\xff", dd_read, NULL, false, SK_W_DEFAULT },
    { HEALTH, "\xff\xff/metrics/health0", health_read, NULL, false, SK_W_DEFAULT },
};
const int sk_metrics_impl_count = (int)(sizeof sk_metrics_impls / sizeof *sk_metrics_impls);
