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
 *     The metrics come through the database's cache (DatabaseContext::getHealthMetrics and
 *     getHealthMetricsActor, NativeAPI.actor.cpp): within AGGREGATE_HEALTH_METRICS_MAX_STALENESS
 *     (0.5 s) of the last answer the cached metrics are used (a detailed read gets whatever
 *     per-process entries the cache holds, a plain one none). Otherwise a request goes out,
 *     detailed only when the read is detailed and the last detailed answer is older than
 *     DETAILED_HEALTH_METRICS_MAX_STALENESS (5 s); the answer replaces the cached aggregate
 *     figures and, for a detailed read, the per-process entries too (HealthMetrics::update with
 *     detailedInput = the read's detail): so a detailed read 0.5 to 5 s after a detailed
 *     answer asks without detail and empties them, as libfdb_c does. The update times are
 *     taken when the answer arrives.
 *   data_distribution_stats/ (DDStatsRangeImpl over ddStatsRange, which ends at
 *     data_distribution_stats/\xff\xff): the range read without the prefix goes to a commit
 *     proxy (db_manage.c cfdb_db_get_dd_metrics); per shard a row, key the prefix + the
 *     shard's begin key, value {"shard_bytes":N,"shard_bytes_per_ksecond":N}.
 * The special key space keeps only the rows inside the range read (sk_async_read). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "event_loop.h"
#include "database.h"
#include "future.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define HEALTH "\xff\xff/metrics/health/"

static bool meets(cfdb_bytes begin, cfdb_bytes end, const char *b, const char *e)
{
    return cfdb_bytes_cmp(begin, cfdb_bytes_str(e)) < 0 && cfdb_bytes_cmp(cfdb_bytes_str(b), end) < 0;
}

static int push(sk_rows *out, cfdb_arena *a, const char *key, const char *json)
{
    return sk_rows_push(out, a, cfdb_bytes_str(key), cfdb_bytes_str(json));
}

#define AGGREGATE_STALENESS_NS 500000000ull /* CLIENT_KNOBS->AGGREGATE_HEALTH_METRICS_MAX_STALENESS */
#define DETAILED_STALENESS_NS 5000000000ull  /* CLIENT_KNOBS->DETAILED_HEALTH_METRICS_MAX_STALENESS */

struct sk_health_cache {
    pthread_mutex_t mu;
    uint64_t updated_ns, detailed_updated_ns; /* 0: never (DatabaseContext starts them at 0) */
    cfdb_health_metrics m;
    cfdb_arena arena; /* m's per-process entries */
};

static void cache_free(void *p)
{
    struct sk_health_cache *c = p;
    cfdb_arena_free(&c->arena);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void *cache_make(void)
{
    struct sk_health_cache *c = calloc(1, sizeof *c);
    if (c) {
        pthread_mutex_init(&c->mu, NULL);
        cfdb_arena_init(&c->arena);
    }
    return c;
}

static struct sk_health_cache *cache_of(cfdb_db *db)
{
    return cfdb_db_slot(db, CFDB_DB_SLOT_HEALTH_CACHE, cache_make, cache_free);
}

static bool fresh(uint64_t then, uint64_t now, uint64_t limit)
{
    return then != 0 && now - then < limit;
}

/* The cached metrics into *m (per-process entries copied into a when detailed). c->mu held. */
static int cached(const struct sk_health_cache *c, bool detailed, cfdb_arena *a, cfdb_health_metrics *m)
{
    *m = c->m;
    m->storage = NULL;
    m->log = NULL;
    m->nstorage = m->nlog = 0;
    if (!detailed)
        return 0;
    if (c->m.nstorage) {
        m->storage = cfdb_arena_alloc(a, c->m.nstorage * sizeof *m->storage);
        if (!m->storage)
            return CFDB_ERR_UNKNOWN_ERROR;
        memcpy(m->storage, c->m.storage, c->m.nstorage * sizeof *m->storage);
        m->nstorage = c->m.nstorage;
    }
    if (c->m.nlog) {
        m->log = cfdb_arena_alloc(a, c->m.nlog * sizeof *m->log);
        if (!m->log)
            return CFDB_ERR_UNKNOWN_ERROR;
        memcpy(m->log, c->m.log, c->m.nlog * sizeof *m->log);
        m->nlog = c->m.nlog;
    }
    return 0;
}

/* DatabaseContext::getHealthMetrics(detailed) */
static int health_metrics(cfdb_db *db, bool detailed, cfdb_arena *a, cfdb_health_metrics *out)
{
    struct sk_health_cache *c = cache_of(db);
    if (!c)
        return CFDB_ERR_UNKNOWN_ERROR;
    pthread_mutex_lock(&c->mu);
    uint64_t now = cfdb_monotonic_ns();
    if (fresh(c->updated_ns, now, AGGREGATE_STALENESS_NS)) {
        int rc = cached(c, detailed, a, out);
        pthread_mutex_unlock(&c->mu);
        return rc;
    }
    bool send_detailed = detailed && !fresh(c->detailed_updated_ns, now, DETAILED_STALENESS_NS + 1);
    pthread_mutex_unlock(&c->mu);
    cfdb_future *f = cfdb_db_get_health_metrics(db, send_detailed);
    if (!f)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_future_wait(f);
    int rc = f->error;
    cfdb_health_metrics rep;
    cfdb_arena ra;
    cfdb_arena_init(&ra);
    if (!rc)
        rc = cfdb_health_metrics_decode(f->r.value.value, &ra, &rep);
    cfdb_future_unref(f);
    if (rc) {
        cfdb_arena_free(&ra);
        return rc;
    }
    pthread_mutex_lock(&c->mu);
    /* HealthMetrics::update(rep, detailed, true) */
    cfdb_health_metrics keep = c->m;
    c->m = rep;
    if (detailed) {
        cfdb_arena_free(&c->arena);
        c->arena = ra; /* the reply's entries (none when it was not detailed) */
    } else {
        c->m.storage = keep.storage;
        c->m.nstorage = keep.nstorage;
        c->m.log = keep.log;
        c->m.nlog = keep.nlog;
        cfdb_arena_free(&ra);
    }
    now = cfdb_monotonic_ns();
    c->updated_ns = now;
    if (detailed)
        c->detailed_updated_ns = now;
    rc = cached(c, detailed, a, out);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int sk_metrics_health_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    bool detailed = meets(begin, end, HEALTH "storage/", HEALTH "storage0") ||
                    meets(begin, end, HEALTH "log/", HEALTH "log0");
    cfdb_health_metrics m;
    int rc = health_metrics(cfdb_txn_db(tx), detailed, a, &m);
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
    return rc;
}

#define DD "\xff\xff/metrics/data_distribution_stats/"

int sk_metrics_dd_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    const size_t pl = sizeof DD - 1; /* begin and end lie inside ddStatsRange: both have the prefix */
    cfdb_future *f = cfdb_db_get_dd_metrics(cfdb_txn_db(tx), cfdb_bytes_make(begin.ptr + pl, begin.len - pl),
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
