/* The cluster controller's status document: the "cluster" section of \xff\xff/status/json.
 * Small but well-formed, with the fields tools look at first. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "status.h"
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
    jput(&b, "\"machines\":{\"%s\":{\"machine_id\":\"%s\",\"address\":\"%s\",\"excluded\":false,"
             "\"contributing_workers\":1}},",
         s->storage[0].machine_id, s->storage[0].machine_id, s->cfg.listen_ip);
    jput(&b, "\"processes\":{\"%s\":{\"address\":\"%s:%u\",\"machine_id\":\"%s\",\"excluded\":false,"
             "\"version\":\"7.3.77\",\"roles\":[{\"role\":\"coordinator\"},{\"role\":\"cluster_controller\"},"
             "{\"role\":\"grv_proxy\"},{\"role\":\"commit_proxy\"},{\"role\":\"resolver\"},{\"role\":\"log\"}",
         s->proxy_process_id, s->cfg.listen_ip, cfdb_server_port(s), s->storage[0].machine_id);
    for (int i = 0; i < s->nstorage; i++) {
        char id[33];
        cfdb_uid_format(s->storage[i].id, id);
        jput(&b, ",{\"role\":\"storage\",\"id\":\"%.16s\",\"data_lag\":{\"versions\":0,\"seconds\":0}}", id);
    }
    jput(&b, "],\"messages\":[");
    storage_messages(s, &b);
    jput(&b, "]}},");
    jput(&b, "\"configuration\":{\"redundancy_mode\":\"single\",\"storage_engine\":\"%s\",\"log_engine\":\"%s\","
             "\"commit_proxies\":1,\"grv_proxies\":1,\"resolvers\":1,\"logs\":1,\"usable_regions\":1,"
             "\"coordinators_count\":1,\"tenant_mode\":\"disabled\",\"encryption_at_rest_mode\":\"disabled\","
             "\"backup_worker_enabled\":0,\"blob_granules_enabled\":0,\"excluded_servers\":[]},",
         s->cfg.datadir ? "ssd-2" : "memory", s->cfg.datadir ? "ssd-2" : "memory");
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
    jput(&b, "\"database_lock_state\":{\"locked\":false},\"layers\":{\"_valid\":true},"
             "\"metacluster\":{\"cluster_type\":\"standalone\"},\"tenants\":{\"num_tenants\":0},"
             "\"version_epoch\":{\"enabled\":false},\"messages\":[");
    storage_messages(s, &b);
    jput(&b, "],\"incompatible_connections\":[],\"clients\":{\"count\":0,\"supported_versions\":[]}}");
    if (b.failed)
        return (cfdb_bytes){ (const uint8_t *)"{}", 2 };
    return cfdb_bytes_make(b.p, b.len);
}
