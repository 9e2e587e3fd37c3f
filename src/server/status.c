/* The cluster controller's status document: the "cluster" section of \xff\xff/status/json.
 * Small but well-formed, with the fields tools look at first. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "status.h"
#include "tenant_map.h"
#include "wal.h"

typedef struct jbuf {
    char *p;
    size_t len, cap;
    cfdb_arena *a;
    bool failed;
} jbuf;

static void jput(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jput(jbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p + b->len, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = (b->cap + (size_t)n) * 2;
        char *np = cfdb_arena_alloc(b->a, ncap);
        if (!np) {
            b->failed = true;
            return;
        }
        memcpy(np, b->p, b->len);
        b->p = np;
        b->cap = ncap;
    }
}

static void counter(jbuf *b, const char *name, uint64_t n, double elapsed, bool comma)
{
    jput(b, "\"%s\":{\"counter\":%llu,\"hz\":%.6g,\"roughness\":0}%s", name, (unsigned long long)n,
         elapsed > 0 ? (double)n / elapsed : 0.0, comma ? "," : "");
}

/* A JSON string body (no quotes) of text, escaped. */
static void jstr(jbuf *b, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            jput(b, "\\%c", *p);
        else if (*p < 0x20)
            jput(b, "\\u%04x", *p);
        else
            jput(b, "%c", *p);
    }
}

/* Storage trouble as FoundationDB's status messages: {"name", "description"} objects named
 * as fdbserver names a process's disk errors ("io_error"), saying the cause, the file and
 * what the server does about it. */
static void storage_messages(srv *s, jbuf *b)
{
    srv_wal_health h;
    srv_wal_get_health(s, &h);
    char text[1024];
    bool comma = false;
    if (h.blocked) {
        snprintf(text, sizeof text,
                 "Cannot write the transaction log %s/%s: %s. Commits wait until it can be written again "
                 "(blocked for %.0f s, next try in %.1f s).",
                 s->cfg.datadir, h.block_path, strerror(h.block_errno), h.blocked_seconds, h.next_probe_seconds);
        jput(b, "{\"name\":\"io_error\",\"type\":\"log_write_failed\",\"description\":\"");
        jstr(b, text);
        jput(b, "\"}");
        comma = true;
    }
    if (h.snapshot_failures) {
        snprintf(text, sizeof text,
                 "Cannot write the snapshot %s/snapshot (%s: %s): %u failed attempt(s) in a row, next attempt in "
                 "%.0f s; %llu bytes of log wait for it.",
                 s->cfg.datadir, h.snapshot_step ? h.snapshot_step : "?", strerror(h.snapshot_errno),
                 h.snapshot_failures, h.next_snapshot_seconds, (unsigned long long)h.log_bytes);
        jput(b, "%s{\"name\":\"io_error\",\"type\":\"snapshot_failed\",\"description\":\"", comma ? "," : "");
        jstr(b, text);
        jput(b, "\"}");
    }
}

/* ---- what \xff/conf/ and the management keys say (fdbserver/Status.actor.cpp) ---- */

static bool key_get(srv *s, cfdb_bytes key, cfdb_bytes *v)
{
    bool present = false;
    return cfdb_mvcc_get(s->store, cfdb_mvcc_latest_version(s->store), key, v, &present) == 0 && present;
}

/* A decimal \xff/conf/ value, or dflt. */
static int conf_int(srv *s, const char *name, int dflt)
{
    char k[96], buf[24];
    snprintf(k, sizeof k, "\xff/conf/%s", name);
    cfdb_bytes v;
    if (!key_get(s, cfdb_bytes_str(k), &v) || v.len == 0 || v.len >= sizeof buf)
        return dflt;
    memcpy(buf, v.ptr, v.len);
    buf[v.len] = 0;
    return atoi(buf);
}

/* KeyValueStoreType::getStoreTypeStr (fdbclient/FDBTypes.cpp), by StoreType number */
static const char *store_type(int t)
{
    static const char *const names[] = { "ssd-1",          "memory",         "ssd-2",
                                         "ssd-redwood-1",  "memory-radixtree-beta", "ssd-rocksdb-v1",
                                         "ssd-sharded-rocksdb" };
    return t >= 0 && t < 7 ? names[t] : "unknown";
}

/* Each key under prefix as {"<field>":"<rest of key>"}, comma-separated after *comma. */
static void key_list(srv *s, jbuf *b, const char *prefix, const char *field, bool *comma)
{
    size_t plen = strlen(prefix);
    cfdb_bytes begin = cfdb_bytes_str(prefix);
    cfdb_mvcc_iter it;
    for (cfdb_mvcc_iter_seek_ge(&it, s->store, cfdb_mvcc_latest_version(s->store), begin);
         cfdb_mvcc_iter_valid(&it) && it.key.len >= plen && memcmp(it.key.ptr, prefix, plen) == 0;
         cfdb_mvcc_iter_next(&it)) {
        char text[256];
        srv_bytes_repr(cfdb_bytes_make(it.key.ptr + plen, it.key.len - plen), text, sizeof text);
        jput(b, "%s{\"%s\":\"", *comma ? "," : "", field);
        jstr(b, text);
        jput(b, "\"}");
        *comma = true;
    }
}

/* Whether this process is excluded or failed, by IP or IP:port (\xff/conf/excluded/,
 * \xff/conf/failed/: AddressExclusion::toString forms). */
static bool process_excluded(srv *s)
{
    const char *prefixes[2] = { "\xff/conf/excluded/", "\xff/conf/failed/" };
    char k[160];
    cfdb_bytes v;
    for (int i = 0; i < 2; i++) {
        snprintf(k, sizeof k, "%s%s", prefixes[i], s->cfg.listen_ip);
        if (key_get(s, cfdb_bytes_str(k), &v))
            return true;
        snprintf(k, sizeof k, "%s%s:%u", prefixes[i], s->cfg.listen_ip, cfdb_server_port(s));
        if (key_get(s, cfdb_bytes_str(k), &v))
            return true;
    }
    return false;
}

/* The process's class as the cluster controller applies \xff/processClass/<processID>
 * (fdbclient/SystemData.cpp processClassKeyFor: the prefix, then the id as a StringRef,
 * int32 little-endian length + bytes; processClassValue: IncludeVersion, then ProcessClass
 * _class and _source as int32). A process started without --class (UnsetClass) takes the
 * stored class; with none stored it is "unset" from the "command_line"
 * (fdbserver/ClusterController.actor.cpp, fdbrpc/include/fdbrpc/Locality.h toString and
 * sourceString, the names below indexed by ClassType and ClassSource). */
static void process_class(srv *s, const char **type, const char **source)
{
    static const char *const types[] = { "unset", "storage", "transaction", "resolution", "test",
                                         "commit_proxy", "master", "stateless", "log", "cluster_controller",
                                         "router", "fast_restore", "data_distributor", "coordinator",
                                         "ratekeeper", "storage_cache", "backup", "grv_proxy", "blob_manager",
                                         "blob_worker", "encrypt_key_proxy", "consistency_scan", "invalid",
                                         "sim_http_server" };
    static const char *const sources[] = { "command_line", "configure_auto", "set_class" };
    *type = "unset";
    *source = "command_line";
    static const char prefix[] = "\xff/processClass/";
    const size_t pl = sizeof prefix - 1;
    uint8_t k[sizeof prefix + 4 + 64];
    uint32_t n = (uint32_t)strlen(s->proxy_process_id);
    if (n > 64)
        return;
    memcpy(k, prefix, pl);
    memcpy(k + pl, &n, 4);
    memcpy(k + pl + 4, s->proxy_process_id, n);
    cfdb_bytes v;
    /* processClassValue: IncludeVersion (8 bytes), then ProcessClass's int16 _class, _source */
    if (!key_get(s, cfdb_bytes_make(k, pl + 4 + n), &v) || v.len != 12)
        return;
    int16_t cls, src;
    memcpy(&cls, v.ptr + 8, 2);
    memcpy(&src, v.ptr + 10, 2);
    *type = cls >= 0 && cls < (int16_t)(sizeof types / sizeof *types) ? types[cls] : "invalid";
    *source = src >= 0 && src < 3 ? sources[src] : "invalid";
}

/* cluster.configuration: DatabaseConfiguration::toJSON (fdbclient/DatabaseConfiguration.cpp)
 * of \xff/conf/, then excluded_servers and coordinators_count (configurationFetcher). */
static void configuration(srv *s, jbuf *b)
{
    int log_replicas = conf_int(s, "log_replicas", -1), storage_replicas = conf_int(s, "storage_replicas", -1);
    int anti_quorum = conf_int(s, "log_anti_quorum", 0);
    int log_engine = conf_int(s, "log_engine", 8), storage_engine = conf_int(s, "storage_engine", 8);
    if (log_engine == 1 || log_engine == 4) /* a memory log engine is ssd-2 (setInternal) */
        log_engine = 2;
    int tenant_mode = s->tenant_mode;
    static const char *const tenant_modes[] = { "disabled", "optional_experimental", "required_experimental" };
    jput(b, "\"configuration\":{");
    if (anti_quorum == 0 && log_replicas == 1 && storage_replicas == 1)
        jput(b, "\"redundancy_mode\":\"single\",");
    else
        jput(b, "\"storage_replicas\":%d,\"log_replicas\":%d,\"log_anti_quorum\":%d,", storage_replicas,
             log_replicas, anti_quorum);
    int logs = conf_int(s, "logs", -1), cp = conf_int(s, "commit_proxies", -1), grv = conf_int(s, "grv_proxies", -1);
    int resolvers = conf_int(s, "resolvers", -1);
    /* -1 (or absent): the auto values, whose defaults are ClientKnobs DEFAULT_AUTO_* */
    if (logs < 1)
        logs = conf_int(s, "auto_logs", 3);
    if (cp < 1)
        cp = conf_int(s, "auto_commit_proxies", 3);
    if (grv < 1)
        grv = conf_int(s, "auto_grv_proxies", 1);
    if (resolvers < 1)
        resolvers = conf_int(s, "auto_resolvers", 1);
    jput(b, "\"log_engine\":\"%s\",\"storage_engine\":\"%s\",\"log_spill\":%d,\"usable_regions\":%d,"
            "\"logs\":%d,\"commit_proxies\":%d,\"grv_proxies\":%d,\"proxies\":%d,\"resolvers\":%d,"
            "\"backup_worker_enabled\":%d,\"perpetual_storage_wiggle\":%d,"
            "\"perpetual_storage_wiggle_locality\":\"0\",\"storage_migration_type\":\"disabled\","
            "\"blob_granules_enabled\":%d,\"tenant_mode\":\"%s\",\"encryption_at_rest_mode\":\"disabled\","
            "\"excluded_servers\":[",
         store_type(log_engine), store_type(storage_engine), conf_int(s, "log_spill", 2),
         conf_int(s, "usable_regions", 1), logs, cp, grv, cp + grv, resolvers,
         conf_int(s, "backup_worker_enabled", 0) != 0, conf_int(s, "perpetual_storage_wiggle", 0),
         conf_int(s, "blob_granules_enabled", 0) != 0, tenant_modes[tenant_mode >= 0 && tenant_mode < 3 ? tenant_mode : 0]);
    bool comma = false;
    key_list(s, b, "\xff/conf/excluded/", "address", &comma);
    key_list(s, b, "\xff/conf/failed/", "address", &comma);
    key_list(s, b, "\xff/conf/excluded_locality/", "locality", &comma);
    key_list(s, b, "\xff/conf/failed_locality/", "locality", &comma);
    jput(b, "],\"coordinators_count\":%d},", s->n_coord_set ? s->n_coord_set : 1);
}

/* cluster.maintenance_zone / maintenance_seconds_remaining from \xff\x02/healthyZone
 * (healthyZoneValue: IncludeVersion, zone id as a StringRef, version as int64; the zone
 * "IgnoreSSFailures" means data distribution ignores storage failures), and the data
 * distribution switches \xff\x02/rebalanceDDIgnored and \xff/dataDistributionMode. */
static void maintenance(srv *s, jbuf *b)
{
    cfdb_bytes v;
    if (key_get(s, CFDB_BYTES_LIT("\xff\x02/healthyZone"), &v) && v.len >= 12) {
        uint32_t n = (uint32_t)v.ptr[8] | (uint32_t)v.ptr[9] << 8 | (uint32_t)v.ptr[10] << 16 |
                     (uint32_t)v.ptr[11] << 24;
        if (n <= v.len - 12 && v.len - 12 - n >= 8) {
            cfdb_bytes zone = cfdb_bytes_make(v.ptr + 12, n);
            uint64_t until = 0;
            for (int i = 7; i >= 0; i--)
                until = until << 8 | v.ptr[12 + n + i];
            int64_t now = cfdb_mvcc_latest_version(s->store);
            if (cfdb_bytes_eq(zone, CFDB_BYTES_LIT("IgnoreSSFailures"))) {
                jput(b, "\"data_distribution_disabled_for_ss_failures\":true,");
            } else if ((int64_t)until > now) {
                char text[256];
                srv_bytes_repr(zone, text, sizeof text);
                jput(b, "\"maintenance_zone\":\"");
                jstr(b, text);
                jput(b, "\",\"maintenance_seconds_remaining\":%.6f,", (double)((int64_t)until - now) / 1e6);
            }
        }
    }
    if (key_get(s, CFDB_BYTES_LIT("\xff\x02/rebalanceDDIgnored"), &v)) {
        jput(b, "\"data_distribution_disabled_for_rebalance\":true,\"data_distribution_disabled_hex\":\"");
        for (uint32_t i = 0; i < v.len; i++)
            jput(b, "%02x", v.ptr[i]);
        jput(b, "\",");
    }
    if (key_get(s, CFDB_BYTES_LIT("\xff/dataDistributionMode"), &v) && v.len >= 4 &&
        (v.ptr[0] | v.ptr[1] | v.ptr[2] | v.ptr[3]) == 0)
        jput(b, "\"data_distribution_disabled\":true,");
}

/* cluster.database_lock_state: \xff/dbLocked is a versionstamp (10 bytes) then the lock
 * UID (two little-endian uint64s), shown as UID::toString */
static void lock_state(srv *s, jbuf *b)
{
    cfdb_bytes v;
    if (!key_get(s, CFDB_BYTES_LIT("\xff/dbLocked"), &v)) {
        jput(b, "\"database_lock_state\":{\"locked\":false},");
        return;
    }
    uint64_t w[2] = { 0, 0 };
    for (int k = 0; k < 2; k++)
        for (int i = 7; i >= 0; i--)
            if (v.len >= 10 + 8u * (unsigned)k + (unsigned)i + 1)
                w[k] = w[k] << 8 | v.ptr[10 + 8 * k + i];
            else
                w[k] <<= 8;
    jput(b, "\"database_lock_state\":{\"locked\":true,\"lock_uid\":\"%016llx%016llx\"},", (unsigned long long)w[0],
         (unsigned long long)w[1]);
}

/* The space a storage server's kvstore figures describe: the data directory's file system,
 * or the machine's memory for an in-memory server. */
static void kv_space(srv *s, uint64_t *total, uint64_t *free_bytes)
{
    struct statvfs fs;
    if (s->cfg.datadir && statvfs(s->cfg.datadir, &fs) == 0) {
        *total = (uint64_t)fs.f_blocks * fs.f_frsize;
        *free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
        return;
    }
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *total = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    *free_bytes = avail > 0 && page > 0 ? (uint64_t)avail * (uint64_t)page : 0;
}

cfdb_bytes status_cluster_json(srv *s, cfdb_arena *a)
{
    srv_wal_health health;
    srv_wal_get_health(s, &health);
    jbuf b = { NULL, 0, 0, a, false };
    b.cap = 4096;
    b.p = cfdb_arena_alloc(a, b.cap);
    if (!b.p)
        return (cfdb_bytes){ (const uint8_t *)"{}", 2 };
    cfdb_mvcc_stats st;
    cfdb_mvcc_get_stats(s->store, &st);
    double elapsed = (double)(cfdb_monotonic_ns() - s->start_ns) / 1e9;
    const char *cs = cfdb_server_connection_string(s);
    jput(&b, "{\"generation\":2,\"protocol_version\":\"fdb00b073000000\",\"connection_string\":\"%s\",", cs);
    jput(&b, "\"newest_protocol_version\":\"fdb00b073000000\",\"lowest_compatible_protocol_version\":\"fdb00b072000000\",");
    jput(&b, "\"bounce_impact\":{\"can_clean_bounce\":true},\"full_replication\":true,\"database_available\":true,");
    jput(&b, "\"recovery_state\":{\"name\":\"fully_recovered\",\"description\":\"Recovery complete.\","
             "\"required_logs\":1,\"required_resolvers\":1,\"required_commit_proxies\":1,\"required_grv_proxies\":1,"
             "\"active_generations\":1},");
    jput(&b, "\"cluster_controller_timestamp\":%lld,", (long long)time(NULL));
    bool excluded = process_excluded(s);
    jput(&b, "\"machines\":{\"%s\":{\"machine_id\":\"%s\",\"address\":\"%s\",\"excluded\":%s,"
             "\"contributing_workers\":1}},",
         s->storage[0].machine_id, s->storage[0].machine_id, s->cfg.listen_ip, excluded ? "true" : "false");
    const char *cls_type, *cls_source;
    process_class(s, &cls_type, &cls_source);
    jput(&b, "\"processes\":{\"%s\":{\"class_type\":\"%s\",\"class_source\":\"%s\",", s->proxy_process_id, cls_type,
         cls_source);
    jput(&b, "\"address\":\"%s:%u\",\"machine_id\":\"%s\",\"excluded\":%s,"
             "\"locality\":{\"machineid\":\"%s\",\"processid\":\"%s\",\"zoneid\":\"%s\"},"
             "\"version\":\"7.3.77\",\"roles\":[{\"role\":\"coordinator\"},{\"role\":\"cluster_controller\"},"
             "{\"role\":\"grv_proxy\"},{\"role\":\"commit_proxy\"},{\"role\":\"resolver\"},{\"role\":\"log\"}",
         s->cfg.listen_ip, cfdb_server_port(s), s->storage[0].machine_id,
         excluded ? "true" : "false", s->storage[0].machine_id, s->proxy_process_id, s->storage[0].machine_id);
    /* kvstore_* as a storage role reports them (the client's exclude safety check,
     * fdbclient/SpecialKeySpace.actor.cpp checkExclusion, needs used, free and available):
     * the data's bytes shared out over the storage servers, and the space of the data
     * directory's file system (statvfs) or, in memory, of the machine's memory */
    uint64_t total_space = 0, free_space = 0;
    kv_space(s, &total_space, &free_space);
    for (int i = 0; i < s->nstorage; i++) {
        char id[33];
        cfdb_uid_format(s->storage[i].id, id);
        jput(&b, ",{\"role\":\"storage\",\"id\":\"%.16s\",\"data_lag\":{\"versions\":0,\"seconds\":0},"
                 "\"kvstore_used_bytes\":%zu,\"kvstore_free_bytes\":%llu,\"kvstore_available_bytes\":%llu,"
                 "\"kvstore_total_bytes\":%llu}",
             id, st.bytes / (size_t)s->nstorage, (unsigned long long)free_space, (unsigned long long)free_space,
             (unsigned long long)total_space);
    }
    jput(&b, "],\"messages\":[");
    storage_messages(s, &b);
    jput(&b, "]}},");
    configuration(s, &b);
    maintenance(s, &b);
    jput(&b, "\"data\":{\"state\":{\"name\":\"healthy\",\"healthy\":true,\"min_replicas_remaining\":1,"
             "\"description\":\"\"},\"moving_data\":{\"in_flight_bytes\":0,\"in_queue_bytes\":0,"
             "\"total_written_bytes\":0,\"highest_priority\":0},\"team_trackers\":[{\"primary\":true,"
             "\"in_flight_bytes\":0,\"unhealthy_servers\":0,\"state\":{\"name\":\"healthy\",\"healthy\":true,"
             "\"min_replicas_remaining\":1}}],\"total_kv_size_bytes\":%zu,\"total_disk_used_bytes\":%zu,"
             "\"partitions_count\":%zu,\"average_partition_size_bytes\":%zu,"
             "\"least_operating_space_bytes_storage_server\":1000000000,"
             "\"least_operating_space_bytes_log_server\":1000000000},",
         st.bytes, st.bytes, s->shards.count, s->shards.count ? st.bytes / s->shards.count : 0);
    jput(&b, "\"qos\":{\"worst_queue_bytes_log_server\":0,\"worst_queue_bytes_storage_server\":0,"
             "\"limiting_queue_bytes_storage_server\":0,\"worst_data_lag_storage_server\":{\"versions\":0,"
             "\"seconds\":0},\"limiting_data_lag_storage_server\":{\"versions\":0,\"seconds\":0},"
             "\"worst_durability_lag_storage_server\":{\"versions\":0,\"seconds\":0},"
             "\"limiting_durability_lag_storage_server\":{\"versions\":0,\"seconds\":0},"
             "\"transactions_per_second_limit\":1000000,\"batch_transactions_per_second_limit\":1000000,"
             "\"released_transactions_per_second\":0,\"batch_released_transactions_per_second\":0,"
             "\"throttled_tags\":{\"auto\":{\"count\":0,\"busy_read\":0,\"busy_write\":0,\"recommended_only\":0},"
             "\"manual\":{\"count\":0}},");
    /* a log that cannot be written holds commits, as a log server out of space makes the
     * ratekeeper hold transactions (limitReason log_server_min_free_space, id 8) */
    if (health.blocked)
        jput(&b, "\"performance_limited_by\":{\"name\":\"log_server_min_free_space\","
                 "\"description\":\"Log server running out of space (approaching 100MB limit).\",\"reason_id\":8},");
    else
        jput(&b, "\"performance_limited_by\":{\"name\":\"workload\","
                 "\"description\":\"The database is not being saturated by the workload.\",\"reason_id\":2},");
    jput(&b, "\"batch_performance_limited_by\":{\"name\":\"workload\","
             "\"description\":\"The database is not being saturated by the workload.\",\"reason_id\":2}},");
    jput(&b, "\"workload\":{\"transactions\":{");
    counter(&b, "started", s->n_grvs, elapsed, true);
    counter(&b, "committed", s->n_commits, elapsed, true);
    counter(&b, "conflicted", s->n_conflicts, elapsed, false);
    jput(&b, "},\"operations\":{");
    counter(&b, "reads", s->n_reads, elapsed, true);
    counter(&b, "read_requests", s->n_reads, elapsed, true);
    counter(&b, "writes", s->n_writes, elapsed, false);
    jput(&b, "}},");
    jput(&b, "\"latency_probe\":{\"transaction_start_seconds\":0.0001,\"immediate_priority_transaction_start_seconds\":"
             "0.0001,\"batch_priority_transaction_start_seconds\":0.0001,\"read_seconds\":0.0001,"
             "\"commit_seconds\":0.0001},");
    jput(&b, "\"fault_tolerance\":{\"max_zone_failures_without_losing_data\":0,"
             "\"max_zone_failures_without_losing_availability\":0},");
    lock_state(s, &b);
    jput(&b, "\"layers\":{\"_valid\":true},"
             "\"metacluster\":{\"cluster_type\":\"standalone\"},\"tenants\":{\"num_tenants\":%zu},",
         srv_tenant_count(s));
    jput(&b, "\"version_epoch\":{\"enabled\":false},\"messages\":[");
    storage_messages(s, &b);
    jput(&b, "],\"incompatible_connections\":[],\"clients\":{\"count\":0,\"supported_versions\":[]}}");
    if (b.failed)
        return (cfdb_bytes){ (const uint8_t *)"{}", 2 };
    return cfdb_bytes_make(b.p, b.len);
}
