/* Independent reader of FoundationDB 7.3.77 client requests: see fdb_ref.h.
 *
 * Written from the FoundationDB 7.3.77 sources (tag 7.3.77), not from cfdb's src/wire:
 *   layout rules   flow/include/flow/flat_buffers.h (LoadMember, SaveVisitorLambda),
 *                  flow/flat_buffers.cpp (generate_vtable), flow/include/flow/ObjectSerializer.h
 *                  (the FakeRoot wrapper: a one-member root table around the item);
 *   member lists   the serialize() of each type, cited next to its description below.
 * Paths abbreviated: SSI = fdbclient/include/fdbclient/StorageServerInterface.h,
 * CPI = fdbclient/include/fdbclient/CommitProxyInterface.h,
 * CI = fdbclient/include/fdbclient/CoordinationInterface.h,
 * FT = fdbclient/include/fdbclient/FDBTypes.h, CT = fdbclient/include/fdbclient/CommitTransaction.h.
 * Zero-size members (Arena) take no slot and are left out of the lists. */
#include "fdb_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- type descriptions ---------------- */

#define SCALAR(var, nm, k) static const ref_type var = { nm, k, NULL, 0, NULL, NULL, 0 }
#define TABLE_T(var, nm, ...)                                       \
    static const ref_field var##_f[] = { __VA_ARGS__ };             \
    const ref_type var = { nm, REF_TABLE, var##_f, (unsigned)(sizeof var##_f / sizeof var##_f[0]), NULL, NULL, 0 }
#define STABLE_T(var, nm, ...)                                      \
    static const ref_field var##_f[] = { __VA_ARGS__ };             \
    static const ref_type var = { nm, REF_TABLE, var##_f, (unsigned)(sizeof var##_f / sizeof var##_f[0]), NULL, \
                                  NULL, 0 }
#define VECTOR_T(var, nm, el) static const ref_type var = { nm, REF_VECTOR, NULL, 0, &(el), NULL, 0 }
#define OPTIONAL_T(var, nm, alt)                          \
    static const ref_type *const var##_a[] = { &(alt) }; \
    static const ref_type var = { nm, REF_UNION, NULL, 0, NULL, var##_a, 1 }

SCALAR(t_u8, "uint8_t", REF_U8);
SCALAR(t_bool, "bool", REF_BOOL);
SCALAR(t_u16, "uint16_t", REF_U16);
SCALAR(t_i32, "int32_t", REF_I32);
SCALAR(t_u32, "uint32_t", REF_U32);
SCALAR(t_i64, "int64_t", REF_I64);
SCALAR(t_u64, "uint64_t", REF_U64);
SCALAR(t_uid, "UID", REF_UID);
/* StringRef/Key/Value/std::string, and the dynamic-size blobs (dynamic_size_traits): TagSet
 * (fdbclient/include/fdbclient/TagThrottle.actor.h:114), VersionVector
 * (fdbclient/include/fdbclient/VersionVector.h:502), IdempotencyIdRef
 * (fdbclient/include/fdbclient/IdempotencyId.actor.h:148): u32 length + content bytes. */
SCALAR(t_bytes, "bytes", REF_BYTES);

OPTIONAL_T(t_opt_uid, "Optional<UID>", t_uid);
OPTIONAL_T(t_opt_i64, "Optional<int64_t>", t_i64);
OPTIONAL_T(t_opt_bytes, "Optional<bytes>", t_bytes);
/* Optional<TagSet>: TagSet is a blob */
OPTIONAL_T(t_opt_tagset, "Optional<TagSet>", t_bytes);
VECTOR_T(t_vec_bytes, "VectorRef<StringRef>", t_bytes);
VECTOR_T(t_vec_u8, "std::array<uint8_t,16>", t_u8);
VECTOR_T(t_vec_i64, "VectorRef<int64_t>", t_i64);
OPTIONAL_T(t_opt_vec_i64, "Optional<VectorRef<int64_t>>", t_vec_i64);

/* ReplyPromise<T>: serializable_traits serializes the endpoint token only
 * (fdbrpc/include/fdbrpc/fdbrpc.h:217). */
TABLE_T(ref_t_reply_promise, "ReplyPromise", { "token", &t_uid });
/* SpanContext: fdbclient/include/fdbclient/Tracing.h:60 serializer(ar, traceID, spanID, m_Flags). */
TABLE_T(ref_t_span_context, "SpanContext", { "traceID", &t_uid }, { "spanID", &t_u64 }, { "m_Flags", &t_u8 });
OPTIONAL_T(t_opt_span_context, "Optional<SpanContext>", ref_t_span_context);
/* WipedString: flow/include/flow/WipedString.h:128 serializer(ar, ws, arena), ws a string. */
TABLE_T(ref_t_wiped_string, "WipedString", { "string", &t_bytes });
OPTIONAL_T(t_opt_wiped_string, "Optional<WipedString>", ref_t_wiped_string);
/* TenantInfo: fdbrpc/include/fdbrpc/TenantInfo.h:72 serializer(ar, v.tenantId, v.token, v.arena). */
TABLE_T(ref_t_tenant_info, "TenantInfo", { "tenantId", &t_i64 }, { "token", &t_opt_wiped_string });
/* ReadOptions: FT:1759 serializer(ar, type, cacheResult, debugID, consistencyCheckStartVersion,
 * lockAware); type is enum ReadType (int). */
TABLE_T(ref_t_read_options, "ReadOptions", { "type", &t_i32 }, { "cacheResult", &t_bool }, { "debugID", &t_opt_uid },
        { "consistencyCheckStartVersion", &t_opt_i64 }, { "lockAware", &t_bool });
OPTIONAL_T(t_opt_read_options, "Optional<ReadOptions>", ref_t_read_options);
/* KeySelectorRef: FT:673 serializer(ar, key, orEqual, offset). */
TABLE_T(ref_t_key_selector, "KeySelectorRef", { "key", &t_bytes }, { "orEqual", &t_bool }, { "offset", &t_i32 });
/* KeyRangeRef: FT:385-389 serializer(ar, begin, end); a single-key range [k, k\0) is written as
 * (k\0, "") (FT:385). The reader keeps the wire form. */
TABLE_T(ref_t_key_range, "KeyRangeRef", { "begin", &t_bytes }, { "end", &t_bytes });
VECTOR_T(t_vec_key_range, "VectorRef<KeyRangeRef>", ref_t_key_range);
/* MutationRef: CT:349 serializer(ar, type, param1, param2), type uint8_t; a single-key clear is
 * written as (type, param1\0, "") (CT:317-333). Wire form kept. */
TABLE_T(ref_t_mutation, "MutationRef", { "type", &t_u8 }, { "param1", &t_bytes }, { "param2", &t_bytes });
VECTOR_T(t_vec_mutation, "VectorRef<MutationRef>", ref_t_mutation);
/* CommitTransactionRef: CT:649-657 (flatbuffers branch) serializer(ar, read_conflict_ranges,
 * write_conflict_ranges, mutations, read_snapshot, report_conflicting_keys, lock_aware,
 * spanContext, tenantIds); spanContext is Optional<SpanContext> (CT:639), tenantIds
 * Optional<VectorRef<int64_t>> (CT:644). */
TABLE_T(ref_t_commit_transaction_ref, "CommitTransactionRef", { "read_conflict_ranges", &t_vec_key_range },
        { "write_conflict_ranges", &t_vec_key_range }, { "mutations", &t_vec_mutation }, { "read_snapshot", &t_i64 },
        { "report_conflicting_keys", &t_bool }, { "lock_aware", &t_bool }, { "spanContext", &t_opt_span_context },
        { "tenantIds", &t_opt_vec_i64 });
/* ClientTrCommitCostEstimation: fdbclient/include/fdbclient/TagThrottle.actor.h:238
 * serializer(ar, opsCount, writeCosts, clearIdxCosts, expensiveCostEstCount); clearIdxCosts is a
 * std::deque<std::pair<int, uint64_t>> (a vector of pair tables {first, second}). */
TABLE_T(ref_t_clear_idx_cost_pair, "std::pair<int,uint64_t>", { "first", &t_i32 }, { "second", &t_u64 });
VECTOR_T(t_vec_clear_idx_cost, "std::deque<std::pair<int,uint64_t>>", ref_t_clear_idx_cost_pair);
TABLE_T(ref_t_commit_cost_estimation, "ClientTrCommitCostEstimation", { "opsCount", &t_i32 },
        { "writeCosts", &t_u64 }, { "clearIdxCosts", &t_vec_clear_idx_cost }, { "expensiveCostEstCount", &t_u32 });
OPTIONAL_T(t_opt_commit_cost_estimation, "Optional<ClientTrCommitCostEstimation>", ref_t_commit_cost_estimation);
/* TransactionTagMap<uint32_t> (TagThrottle.actor.h:624, an unordered_map): a vector of pair
 * tables {first: tag string, second: uint32_t}. */
TABLE_T(ref_t_tag_count_pair, "std::pair<TransactionTag,uint32_t>", { "first", &t_bytes }, { "second", &t_u32 });
VECTOR_T(t_vec_tag_count, "TransactionTagMap<uint32_t>", ref_t_tag_count_pair);
/* StorageMetrics: SSI:697 serializer(ar, bytes, bytesWrittenPerKSecond, iosPerKSecond,
 * bytesReadPerKSecond, opsReadPerKSecond), all int64_t. */
TABLE_T(ref_t_storage_metrics, "StorageMetrics", { "bytes", &t_i64 }, { "bytesWrittenPerKSecond", &t_i64 },
        { "iosPerKSecond", &t_i64 }, { "bytesReadPerKSecond", &t_i64 }, { "opsReadPerKSecond", &t_i64 });
/* ClientVersionRef: fdbclient/include/fdbclient/ClientVersion.h:58 serializer(ar, clientVersion,
 * sourceVersion, protocolVersion), three StringRefs. */
TABLE_T(ref_t_client_version, "ClientVersionRef", { "clientVersion", &t_bytes }, { "sourceVersion", &t_bytes },
        { "protocolVersion", &t_bytes });
VECTOR_T(t_vec_client_version, "VectorRef<ClientVersionRef>", ref_t_client_version);
/* IPAddress: flow/include/flow/IPAddress.h:60 serializer(ar, addr), addr a
 * std::variant<uint32_t, std::array<uint8_t, 16>>. */
static const ref_type *const t_ip_variant_a[] = { &t_u32, &t_vec_u8 };
static const ref_type t_ip_variant = { "std::variant<uint32_t,IPv6>", REF_UNION, NULL, 0, NULL, t_ip_variant_a, 2 };
TABLE_T(ref_t_ip_address, "IPAddress", { "addr", &t_ip_variant });
/* NetworkAddress: flow/include/flow/NetworkAddress.h:98 serializer(ar, ip, port, flags,
 * fromHostname): IPAddress, uint16_t, uint16_t, bool. */
TABLE_T(ref_t_network_address, "NetworkAddress", { "ip", &ref_t_ip_address }, { "port", &t_u16 },
        { "flags", &t_u16 }, { "fromHostname", &t_bool });
VECTOR_T(t_vec_network_address, "std::vector<NetworkAddress>", ref_t_network_address);
/* Hostname: flow/include/flow/Hostname.h:69 serializer(ar, host, service, isTLS). */
TABLE_T(ref_t_hostname, "Hostname", { "host", &t_bytes }, { "service", &t_bytes }, { "isTLS", &t_bool });
VECTOR_T(t_vec_hostname, "std::vector<Hostname>", ref_t_hostname);

/* ---------------- the requests ---------------- */

/* PingRequest: fdbrpc/FlowTransport.actor.cpp:244 serializer(ar, reply). */
STABLE_T(t_ping_request, "PingRequest", { "reply", &ref_t_reply_promise });
/* ProtocolInfoRequest: CI:330 serializer(ar, reply). */
STABLE_T(t_protocol_info_request, "ProtocolInfoRequest", { "reply", &ref_t_reply_promise });
/* StatusRequest: fdbclient/include/fdbclient/ClusterInterface.h:251 serializer(ar, reply). */
STABLE_T(t_status_request, "StatusRequest", { "reply", &ref_t_reply_promise });
/* GetLeaderRequest: CI:256 serializer(ar, key, knownLeader, reply). */
STABLE_T(t_get_leader_request, "GetLeaderRequest", { "key", &t_bytes }, { "knownLeader", &t_uid },
         { "reply", &ref_t_reply_promise });
/* OpenDatabaseCoordRequest: CI:279-288 serializer(ar, issues, supportedVersions, traceLogGroup,
 * knownClientInfoID, clusterKey, coordinators, reply, hostnames, internal). */
STABLE_T(t_open_database_coord_request, "OpenDatabaseCoordRequest", { "issues", &t_vec_bytes },
         { "supportedVersions", &t_vec_client_version }, { "traceLogGroup", &t_bytes }, { "knownClientInfoID", &t_uid },
         { "clusterKey", &t_bytes }, { "coordinators", &t_vec_network_address }, { "reply", &ref_t_reply_promise },
         { "hostnames", &t_vec_hostname }, { "internal", &t_bool });
/* GlobalConfigRefreshRequest: CPI:751 serializer(ar, lastKnown, reply); lastKnown a Version. */
STABLE_T(t_global_config_refresh_request, "GlobalConfigRefreshRequest", { "lastKnown", &t_i64 },
         { "reply", &ref_t_reply_promise });
/* GetReadVersionRequest: CPI:362 serializer(ar, transactionCount, flags, tags, debugID, reply,
 * spanContext, maxVersion); uint32_t, uint32_t, TransactionTagMap<uint32_t>, Optional<UID>, ...,
 * Version. */
STABLE_T(t_get_read_version_request, "GetReadVersionRequest", { "transactionCount", &t_u32 }, { "flags", &t_u32 },
         { "tags", &t_vec_tag_count }, { "debugID", &t_opt_uid }, { "reply", &ref_t_reply_promise },
         { "spanContext", &ref_t_span_context }, { "maxVersion", &t_i64 });
/* GetKeyServerLocationsRequest: CPI:472 serializer(ar, begin, end, limit, reverse, reply,
 * spanContext, tenant, minTenantVersion, arena); KeyRef, Optional<KeyRef>, int, bool. */
STABLE_T(t_get_key_server_locations_request, "GetKeyServerLocationsRequest", { "begin", &t_bytes },
         { "end", &t_opt_bytes }, { "limit", &t_i32 }, { "reverse", &t_bool }, { "reply", &ref_t_reply_promise },
         { "spanContext", &ref_t_span_context }, { "tenant", &ref_t_tenant_info }, { "minTenantVersion", &t_i64 });
/* CommitTransactionRequest: CPI:236-246 serializer(ar, transaction, reply, flags, debugID,
 * commitCostEstimation, tagSet, spanContext, tenantInfo, idempotencyId, arena); flags uint32_t,
 * idempotencyId an IdempotencyIdRef blob. */
STABLE_T(t_commit_transaction_request, "CommitTransactionRequest", { "transaction", &ref_t_commit_transaction_ref },
         { "reply", &ref_t_reply_promise }, { "flags", &t_u32 }, { "debugID", &t_opt_uid },
         { "commitCostEstimation", &t_opt_commit_cost_estimation }, { "tagSet", &t_opt_tagset },
         { "spanContext", &ref_t_span_context }, { "tenantInfo", &ref_t_tenant_info }, { "idempotencyId", &t_bytes });
/* GetTenantIdRequest: CPI:410 serializer(ar, reply, tenantName, minTenantVersion). */
STABLE_T(t_get_tenant_id_request, "GetTenantIdRequest", { "reply", &ref_t_reply_promise }, { "tenantName", &t_bytes },
         { "minTenantVersion", &t_i64 });
/* GetHealthMetricsRequest: CPI:646-647 serializer(ar, reply, detailed). */
STABLE_T(t_get_health_metrics_request, "GetHealthMetricsRequest", { "reply", &ref_t_reply_promise },
         { "detailed", &t_bool });
/* ExpireIdempotencyIdRequest: CPI:184 serializer(ar, commitVersion, batchIndexHighByte, tenant);
 * Version, uint8_t, TenantInfo (CPI:172-174). */
STABLE_T(t_expire_idempotency_id_request, "ExpireIdempotencyIdRequest", { "commitVersion", &t_i64 },
         { "batchIndexHighByte", &t_u8 }, { "tenant", &ref_t_tenant_info });
/* GetValueRequest: SSI:340 serializer(ar, key, version, tags, reply, spanContext, tenantInfo,
 * options, ssLatestCommitVersions); Key, Version, Optional<TagSet>, ..., Optional<ReadOptions>,
 * VersionVector (blob). */
STABLE_T(t_get_value_request, "GetValueRequest", { "key", &t_bytes }, { "version", &t_i64 }, { "tags", &t_opt_tagset },
         { "reply", &ref_t_reply_promise }, { "spanContext", &ref_t_span_context },
         { "tenantInfo", &ref_t_tenant_info }, { "options", &t_opt_read_options },
         { "ssLatestCommitVersions", &t_bytes });
/* GetKeyRequest: SSI:610 serializer(ar, sel, version, tags, reply, spanContext, tenantInfo,
 * options, ssLatestCommitVersions, arena); sel a KeySelectorRef. */
STABLE_T(t_get_key_request, "GetKeyRequest", { "sel", &ref_t_key_selector }, { "version", &t_i64 },
         { "tags", &t_opt_tagset }, { "reply", &ref_t_reply_promise }, { "spanContext", &ref_t_span_context },
         { "tenantInfo", &ref_t_tenant_info }, { "options", &t_opt_read_options },
         { "ssLatestCommitVersions", &t_bytes });
/* GetKeyValuesRequest: SSI:429-441 serializer(ar, begin, end, version, limit, limitBytes, tags,
 * reply, spanContext, tenantInfo, options, ssLatestCommitVersions, arena); limit and limitBytes
 * are int (SSI:415). */
STABLE_T(t_get_key_values_request, "GetKeyValuesRequest", { "begin", &ref_t_key_selector },
         { "end", &ref_t_key_selector }, { "version", &t_i64 }, { "limit", &t_i32 }, { "limitBytes", &t_i32 },
         { "tags", &t_opt_tagset }, { "reply", &ref_t_reply_promise }, { "spanContext", &ref_t_span_context },
         { "tenantInfo", &ref_t_tenant_info }, { "options", &t_opt_read_options },
         { "ssLatestCommitVersions", &t_bytes });
/* GetMappedKeyValuesRequest: SSI:485-498 serializer(ar, begin, end, mapper, version, limit,
 * limitBytes, tags, reply, spanContext, tenantInfo, options, ssLatestCommitVersions, arena). */
STABLE_T(t_get_mapped_key_values_request, "GetMappedKeyValuesRequest", { "begin", &ref_t_key_selector },
         { "end", &ref_t_key_selector }, { "mapper", &t_bytes }, { "version", &t_i64 }, { "limit", &t_i32 },
         { "limitBytes", &t_i32 }, { "tags", &t_opt_tagset }, { "reply", &ref_t_reply_promise },
         { "spanContext", &ref_t_span_context }, { "tenantInfo", &ref_t_tenant_info },
         { "options", &t_opt_read_options }, { "ssLatestCommitVersions", &t_bytes });
/* WatchValueRequest: SSI:385 serializer(ar, key, value, version, tags, debugID, reply, spanContext,
 * tenantInfo); Key, Optional<Value>, Version, Optional<TagSet>, Optional<UID>. */
STABLE_T(t_watch_value_request, "WatchValueRequest", { "key", &t_bytes }, { "value", &t_opt_bytes },
         { "version", &t_i64 }, { "tags", &t_opt_tagset }, { "debugID", &t_opt_uid }, { "reply", &ref_t_reply_promise },
         { "spanContext", &ref_t_span_context }, { "tenantInfo", &ref_t_tenant_info });
/* WaitMetricsRequest: SSI:765 serializer(ar, keys, min, max, reply, tenantInfo, minVersion,
 * arena); KeyRangeRef, StorageMetrics, StorageMetrics, ..., Version. */
STABLE_T(t_wait_metrics_request, "WaitMetricsRequest", { "keys", &ref_t_key_range }, { "min", &ref_t_storage_metrics },
         { "max", &ref_t_storage_metrics }, { "reply", &ref_t_reply_promise }, { "tenantInfo", &ref_t_tenant_info },
         { "minVersion", &t_i64 });
/* SplitRangeRequest: SSI:901 serializer(ar, keys, chunkSize, reply, tenantInfo, arena); chunkSize
 * int64_t (SSI:892). */
STABLE_T(t_split_range_request, "SplitRangeRequest", { "keys", &ref_t_key_range }, { "chunkSize", &t_i64 },
         { "reply", &ref_t_reply_promise }, { "tenantInfo", &ref_t_tenant_info });

/* File identifiers: the file_identifier constant of each type (FlowTransport.actor.cpp:239,
 * CI:322,244,261, ClusterInterface.h:246, CPI:740,298,440,210,392,639,171, SSI:313,581,406,464,
 * 359 (GetValue, GetKey, GetKeyValues, GetMappedKeyValues, WatchValue),
 * 743, 888 (WaitMetrics, SplitRange); see also tests/vectors/golden/file_identifiers.tsv. */
const ref_msg ref_ping_request = { "PingRequest", 4707015, &t_ping_request };
const ref_msg ref_protocol_info_request = { "ProtocolInfoRequest", 13261233, &t_protocol_info_request };
const ref_msg ref_get_leader_request = { "GetLeaderRequest", 214727, &t_get_leader_request };
const ref_msg ref_open_database_coord_request = { "OpenDatabaseCoordRequest", 214728, &t_open_database_coord_request };
const ref_msg ref_status_request = { "StatusRequest", 14419140, &t_status_request };
const ref_msg ref_global_config_refresh_request = { "GlobalConfigRefreshRequest", 2828131,
                                                    &t_global_config_refresh_request };
const ref_msg ref_get_read_version_request = { "GetReadVersionRequest", 838566, &t_get_read_version_request };
const ref_msg ref_get_key_server_locations_request = { "GetKeyServerLocationsRequest", 9144680,
                                                       &t_get_key_server_locations_request };
const ref_msg ref_commit_transaction_request = { "CommitTransactionRequest", 93948, &t_commit_transaction_request };
const ref_msg ref_get_tenant_id_request = { "GetTenantIdRequest", 11299717, &t_get_tenant_id_request };
const ref_msg ref_get_health_metrics_request = { "GetHealthMetricsRequest", 11403900, &t_get_health_metrics_request };
const ref_msg ref_expire_idempotency_id_request = { "ExpireIdempotencyIdRequest", 1900933,
                                                    &t_expire_idempotency_id_request };
const ref_msg ref_get_value_request = { "GetValueRequest", 8454530, &t_get_value_request };
const ref_msg ref_get_key_request = { "GetKeyRequest", 10457870, &t_get_key_request };
const ref_msg ref_get_key_values_request = { "GetKeyValuesRequest", 6795746, &t_get_key_values_request };
const ref_msg ref_get_mapped_key_values_request = { "GetMappedKeyValuesRequest", 6795747,
                                                    &t_get_mapped_key_values_request };
const ref_msg ref_watch_value_request = { "WatchValueRequest", 14747733, &t_watch_value_request };
const ref_msg ref_wait_metrics_request = { "WaitMetricsRequest", 1795961, &t_wait_metrics_request };
const ref_msg ref_split_range_request = { "SplitRangeRequest", 10725174, &t_split_range_request };

const ref_msg *const ref_msgs[] = {
    &ref_ping_request,
    &ref_protocol_info_request,
    &ref_get_leader_request,
    &ref_open_database_coord_request,
    &ref_status_request,
    &ref_global_config_refresh_request,
    &ref_get_read_version_request,
    &ref_get_key_server_locations_request,
    &ref_commit_transaction_request,
    &ref_get_tenant_id_request,
    &ref_get_health_metrics_request,
    &ref_expire_idempotency_id_request,
    &ref_get_value_request,
    &ref_get_key_request,
    &ref_get_key_values_request,
    &ref_get_mapped_key_values_request,
    &ref_watch_value_request,
    &ref_wait_metrics_request,
    &ref_split_range_request,
};
const unsigned ref_msg_count = (unsigned)(sizeof ref_msgs / sizeof ref_msgs[0]);

const ref_msg *ref_msg_by_file_id(uint32_t file_id)
{
    for (unsigned i = 0; i < ref_msg_count; i++)
        if (ref_msgs[i]->file_id == file_id)
            return ref_msgs[i];
    return NULL;
}

static uint32_t rd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint64_t rd_u64(const uint8_t *p)
{
    return (uint64_t)rd_u32(p) | (uint64_t)rd_u32(p + 4) << 32;
}

uint32_t ref_peek_file_id(const uint8_t *msg, size_t len)
{
    return len >= 8 ? rd_u32(msg + 4) : 0;
}

/* ---------------- vtables as FoundationDB's writer derives them ---------------- */

static bool is_scalar(const ref_type *t)
{
    return t->kind <= REF_UID;
}

static unsigned scalar_size(const ref_type *t)
{
    switch (t->kind) {
    case REF_U8:
    case REF_BOOL:
        return 1;
    case REF_U16:
        return 2;
    case REF_I32:
    case REF_U32:
        return 4;
    case REF_I64:
    case REF_U64:
        return 8;
    case REF_UID:
        return 16;
    default:
        return 4; /* an offset */
    }
}

/* A slot's size and alignment (UID: 16 bytes, aligned 8; others aligned to their size). */
typedef struct slot_sa {
    unsigned size, align;
} slot_sa;

static unsigned table_slots(const ref_type *t, slot_sa *out, unsigned cap)
{
    unsigned n = 0;
    for (unsigned i = 0; i < t->nfields && n + 2 <= cap; i++) {
        const ref_type *ft = t->fields[i].type;
        if (ft->kind == REF_UNION) {
            out[n++] = (slot_sa){ 1, 1 };
            out[n++] = (slot_sa){ 4, 4 };
        } else {
            unsigned s = is_scalar(ft) ? scalar_size(ft) : 4;
            out[n++] = (slot_sa){ s, s > 8 ? 8 : s };
        }
    }
    return n;
}

unsigned ref_expected_vtable(const ref_type *t, uint16_t *out, unsigned cap)
{
    slot_sa s[64];
    unsigned n = table_slots(t, s, 64);
    if (cap < n + 2)
        return 0;
    /* stable order by size, largest first */
    unsigned order[64];
    for (unsigned i = 0; i < n; i++)
        order[i] = i;
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && s[order[j]].size > s[order[j - 1]].size; j--) {
            unsigned x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    unsigned at = 0;
    for (unsigned k = 0; k < n; k++) {
        const slot_sa *f = &s[order[k]];
        at = (at + f->align - 1) / f->align * f->align;
        out[2 + order[k]] = (uint16_t)(at + 4);
        at += f->size;
    }
    out[0] = (uint16_t)(4 + 2 * n);
    out[1] = (uint16_t)(at + 4);
    return n + 2;
}

/* ---------------- the document ---------------- */

static void add(ref_doc *d, const char *path, const char *value)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 64;
        d->e = realloc(d->e, d->cap * sizeof *d->e);
    }
    d->e[d->n].path = strdup(path);
    d->e[d->n].value = strdup(value);
    d->n++;
}

void ref_doc_free(ref_doc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->e[i].path);
        free(d->e[i].value);
    }
    free(d->e);
    memset(d, 0, sizeof *d);
}

char *ref_bytes_value(const uint8_t *p, size_t n)
{
    char *s = malloc(2 * n + 4);
    char *o = s;
    *o++ = 'x';
    *o++ = '\'';
    for (size_t i = 0; i < n; i++) {
        static const char hx[] = "0123456789abcdef";
        *o++ = hx[p[i] >> 4];
        *o++ = hx[p[i] & 15];
    }
    *o++ = '\'';
    *o = 0;
    return s;
}

typedef struct reader {
    const uint8_t *m;
    size_t len;
    ref_doc *doc;
    int failed;
} reader;

static bool fail(reader *r, const char *path, const char *why)
{
    if (!r->failed)
        snprintf(r->doc->err, sizeof r->doc->err, "%.160s: %.80s", path[0] ? path : "<root>", why);
    r->failed = 1;
    return false;
}

static bool in_bounds(reader *r, size_t pos, size_t n)
{
    return pos <= r->len && n <= r->len - pos;
}

static void join(char *out, size_t cap, const char *path, const char *name)
{
    if (path[0])
        snprintf(out, cap, "%s.%s", path, name);
    else
        snprintf(out, cap, "%s", name);
}

static void scalar_value(const ref_type *t, const uint8_t *p, char *buf, size_t cap)
{
    switch (t->kind) {
    case REF_U8:
        snprintf(buf, cap, "%u", p[0]);
        break;
    case REF_BOOL:
        if (p[0] <= 1)
            snprintf(buf, cap, "%s", p[0] ? "true" : "false");
        else
            snprintf(buf, cap, "bool(%u)", p[0]);
        break;
    case REF_U16:
        snprintf(buf, cap, "%u", rd_u16(p));
        break;
    case REF_I32:
        snprintf(buf, cap, "%d", (int32_t)rd_u32(p));
        break;
    case REF_U32:
        snprintf(buf, cap, "%u", rd_u32(p));
        break;
    case REF_I64:
        snprintf(buf, cap, "%lld", (long long)(int64_t)rd_u64(p));
        break;
    case REF_U64:
        snprintf(buf, cap, "%llu", (unsigned long long)rd_u64(p));
        break;
    case REF_UID: /* first, then second, each as 16 hex digits */
        snprintf(buf, cap, "%016llx%016llx", (unsigned long long)rd_u64(p), (unsigned long long)rd_u64(p + 8));
        break;
    default:
        snprintf(buf, cap, "?");
    }
}

static bool read_table(reader *r, const ref_type *t, size_t table, const char *path, int depth);

/* An out-of-line object at pos (what a uoffset reached). */
static bool read_child(reader *r, const ref_type *t, size_t pos, const char *path, int depth)
{
    if (depth > 24)
        return fail(r, path, "nesting too deep");
    if (is_scalar(t)) { /* a scalar union alternative, stored out of line */
        if (!in_bounds(r, pos, scalar_size(t)))
            return fail(r, path, "scalar out of bounds");
        char v[64];
        scalar_value(t, r->m + pos, v, sizeof v);
        add(r->doc, path, v);
        return true;
    }
    switch (t->kind) {
    case REF_BYTES: {
        if (!in_bounds(r, pos, 4))
            return fail(r, path, "length out of bounds");
        uint32_t n = rd_u32(r->m + pos);
        if (!in_bounds(r, pos + 4, n))
            return fail(r, path, "bytes out of bounds");
        char *v = ref_bytes_value(r->m + pos + 4, n);
        add(r->doc, path, v);
        free(v);
        return true;
    }
    case REF_TABLE:
        return read_table(r, t, pos, path, depth + 1);
    case REF_VECTOR: {
        if (!in_bounds(r, pos, 4))
            return fail(r, path, "count out of bounds");
        uint32_t n = rd_u32(r->m + pos);
        char cnt[32], sub[512];
        snprintf(cnt, sizeof cnt, "%u", n);
        snprintf(sub, sizeof sub, "%s.count", path);
        add(r->doc, sub, cnt);
        const ref_type *et = t->elem;
        unsigned esz = is_scalar(et) ? scalar_size(et) : 4;
        if (n > r->len || !in_bounds(r, pos + 4, (size_t)n * esz))
            return fail(r, path, "vector out of bounds");
        for (uint32_t i = 0; i < n; i++) {
            size_t at = pos + 4 + (size_t)i * esz;
            snprintf(sub, sizeof sub, "%s[%u]", path, i);
            if (is_scalar(et)) {
                char v[64];
                scalar_value(et, r->m + at, v, sizeof v);
                add(r->doc, sub, v);
            } else if (!read_child(r, et, at + rd_u32(r->m + at), sub, depth + 1)) {
                return false;
            }
        }
        return true;
    }
    default:
        return fail(r, path, "union inside a union has no wire form");
    }
}

static bool read_table(reader *r, const ref_type *t, size_t table, const char *path, int depth)
{
    if (!in_bounds(r, table, 4))
        return fail(r, path, "table out of bounds");
    int32_t soff = (int32_t)rd_u32(r->m + table);
    long long vt = (long long)table - soff;
    if (vt < 0 || !in_bounds(r, (size_t)vt, 4))
        return fail(r, path, "vtable out of bounds");
    const uint8_t *v = r->m + vt;
    unsigned vsize = rd_u16(v), tsize = rd_u16(v + 2);
    if (vsize < 4 || vsize % 2 || !in_bounds(r, (size_t)vt, vsize) || tsize < 4 || !in_bounds(r, table, tsize))
        return fail(r, path, "bad vtable");
    unsigned nslots = vsize / 2 - 2;

    char buf[512], name[512];
    /* the vtable as read, and whether it is the one FoundationDB derives from the member list */
    int o = 0;
    for (unsigned i = 0; i < vsize / 2 && o < (int)sizeof buf - 8; i++)
        o += snprintf(buf + o, sizeof buf - (size_t)o, "%s%u", i ? "," : "", rd_u16(v + 2 * i));
    join(name, sizeof name, path, "@vt");
    add(r->doc, name, buf);
    uint16_t want[66];
    unsigned nw = ref_expected_vtable(t, want, 66);
    bool same = nw == vsize / 2;
    for (unsigned i = 0; same && i < nw; i++)
        same = want[i] == rd_u16(v + 2 * i);
    if (!same)
        r->doc->vt_mismatch++;

    uint8_t covered[65536 / 8];
    memset(covered, 0, (tsize + 7) / 8);
    for (unsigned b = 0; b < 4; b++)
        covered[b / 8] |= (uint8_t)(1u << (b % 8));
#define COVER(off, n)                                                     \
    for (unsigned b_ = (off); b_ < (off) + (n) && b_ < tsize; b_++)        \
        covered[b_ / 8] |= (uint8_t)(1u << (b_ % 8))

    unsigned s = 0;
    for (unsigned i = 0; i < t->nfields; i++) {
        const ref_field *f = &t->fields[i];
        join(name, sizeof name, path, f->name);
        if (f->type->kind == REF_UNION) {
            unsigned tag_slot = s++, off_slot = s++;
            unsigned toff = tag_slot < nslots ? rd_u16(v + 4 + 2 * tag_slot) : 0;
            unsigned ooff = off_slot < nslots ? rd_u16(v + 4 + 2 * off_slot) : 0;
            if (toff && (toff < 4 || toff + 1 > tsize))
                return fail(r, name, "union tag outside its table");
            uint8_t tag = toff ? r->m[table + toff] : 0;
            if (toff)
                COVER(toff, 1);
            if (tag == 0) {
                add(r->doc, name, toff ? "none" : "<absent>");
                continue;
            }
            if (tag > f->type->nalts) {
                snprintf(buf, sizeof buf, "tag(%u)", tag);
                add(r->doc, name, buf);
                continue;
            }
            if (!ooff || ooff < 4 || ooff + 4 > tsize)
                return fail(r, name, "union with a tag but no offset");
            COVER(ooff, 4);
            size_t at = table + ooff;
            const ref_type *alt = f->type->alts[tag - 1];
            if (f->type->nalts > 1) {
                char an[540];
                snprintf(an, sizeof an, "%s.@alt", name);
                snprintf(buf, sizeof buf, "%u", tag);
                add(r->doc, an, buf);
            } else if (alt->kind == REF_TABLE || alt->kind == REF_VECTOR) {
                add(r->doc, name, "present");
            }
            if (!read_child(r, alt, at + rd_u32(r->m + at), name, depth))
                return false;
            continue;
        }
        unsigned slot = s++;
        unsigned off = slot < nslots ? rd_u16(v + 4 + 2 * slot) : 0;
        if (off == 0) {
            add(r->doc, name, "<absent>");
            continue;
        }
        if (off < 4)
            return fail(r, name, "slot inside the soffset");
        if (is_scalar(f->type)) {
            unsigned n = scalar_size(f->type);
            if (off + n > tsize)
                return fail(r, name, "scalar outside its table");
            COVER(off, n);
            scalar_value(f->type, r->m + table + off, buf, sizeof buf);
            add(r->doc, name, buf);
        } else {
            if (off + 4 > tsize)
                return fail(r, name, "offset outside its table");
            COVER(off, 4);
            size_t at = table + off;
            if (!read_child(r, f->type, at + rd_u32(r->m + at), name, depth))
                return false;
        }
    }
#undef COVER
    if (nslots > s) { /* slots the member list does not know */
        join(name, sizeof name, path, "@extra_slots");
        snprintf(buf, sizeof buf, "%u", nslots - s);
        add(r->doc, name, buf);
    }
    /* bytes of the table no slot covers: FoundationDB's writer leaves them zero */
    int po = 0;
    bool nonzero = false;
    for (unsigned b = 4; b < tsize; b++)
        if (!(covered[b / 8] & (1u << (b % 8))) && r->m[table + b]) {
            nonzero = true;
            if (po < (int)sizeof buf - 16)
                po += snprintf(buf + po, sizeof buf - (size_t)po, "%s+%u=%02x", po ? "," : "", b, r->m[table + b]);
        }
    if (nonzero) {
        r->doc->nonzero_pad++;
        join(name, sizeof name, path, "@pad");
        add(r->doc, name, buf);
    }
    return true;
}

int ref_read(const ref_msg *m, const uint8_t *msg, size_t len, ref_doc *doc)
{
    memset(doc, 0, sizeof *doc);
    doc->msg = m;
    reader r = { msg, len, doc, 0 };
    if (len < 8 || len % 8) {
        snprintf(doc->err, sizeof doc->err, "message length %zu is not a multiple of 8 (>= 8)", len);
        return -1;
    }
    if (rd_u32(msg + 4) != m->file_id) {
        snprintf(doc->err, sizeof doc->err, "file identifier %u, expected %u (%s)", rd_u32(msg + 4), m->file_id,
                 m->name);
        return -1;
    }
    /* the FakeRoot wrapper: a table with one uoffset member, the request (ObjectSerializer.h) */
    size_t root = rd_u32(msg);
    if (!in_bounds(&r, root, 4)) {
        snprintf(doc->err, sizeof doc->err, "root offset out of bounds");
        return -1;
    }
    int32_t soff = (int32_t)rd_u32(msg + root);
    long long vt = (long long)root - soff;
    if (vt < 0 || !in_bounds(&r, (size_t)vt, 6) || rd_u16(msg + vt) != 6 || rd_u16(msg + vt + 2) != 8 ||
        rd_u16(msg + vt + 4) != 4 || !in_bounds(&r, root, 8)) {
        snprintf(doc->err, sizeof doc->err, "root table is not {item} (vtable 6,8,4)");
        return -1;
    }
    size_t item = root + 4 + rd_u32(msg + root + 4);
    if (!read_table(&r, m->type, item, "", 0))
        return -1;
    return 0;
}

const char *ref_get(const ref_doc *d, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->e[i].path, path) == 0)
            return d->e[i].value;
    return NULL;
}

bool ref_glob(const char *p, const char *s)
{
    if (*p == 0)
        return *s == 0;
    if (*p == '*') {
        for (const char *t = s;; t++) {
            if (ref_glob(p + 1, t))
                return true;
            if (*t == 0 || *t == '.')
                return false;
        }
    }
    return *s == *p && ref_glob(p + 1, s + 1);
}

unsigned ref_mask(ref_doc *d, const char *pattern, const char *value)
{
    unsigned n = 0;
    for (size_t i = 0; i < d->n; i++)
        if (ref_glob(pattern, d->e[i].path)) {
            free(d->e[i].value);
            d->e[i].value = strdup(value);
            n++;
        }
    return n;
}

unsigned ref_drop(ref_doc *d, const char *pattern)
{
    size_t w = 0;
    unsigned n = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (ref_glob(pattern, d->e[i].path)) {
            free(d->e[i].path);
            free(d->e[i].value);
            n++;
        } else {
            d->e[w++] = d->e[i];
        }
    }
    d->n = w;
    return n;
}

static void appendf(char *buf, size_t cap, size_t *at, const char *fmt, const char *a, const char *b, const char *c)
{
    if (*at >= cap)
        return;
    int k = snprintf(buf + *at, cap - *at, fmt, a, b, c);
    if (k > 0)
        *at += (size_t)k < cap - *at ? (size_t)k : cap - *at - 1;
}

static const char *shorten(const char *v, char *tmp, size_t cap)
{
    size_t n = strlen(v);
    if (n < cap)
        return v;
    char tail[32];
    snprintf(tail, sizeof tail, "...(%zu chars)", n);
    size_t keep = cap - 1 - strlen(tail);
    memcpy(tmp, v, keep);
    memcpy(tmp + keep, tail, strlen(tail) + 1);
    return tmp;
}

size_t ref_diff_paths(const ref_doc *want, const ref_doc *got, char ***paths)
{
    size_t n = 0;
    *paths = NULL;
    bool *used = calloc(got->n + 1, 1);
    for (size_t i = 0; i < want->n; i++) {
        const ref_entry *w = &want->e[i];
        const ref_entry *g = NULL;
        for (size_t j = 0; j < got->n && !g; j++)
            if (!used[j] && strcmp(got->e[j].path, w->path) == 0) {
                g = &got->e[j];
                used[j] = true;
            }
        if (g && strcmp(g->value, w->value) == 0)
            continue;
        *paths = realloc(*paths, (n + 1) * sizeof **paths);
        (*paths)[n++] = strdup(w->path);
    }
    for (size_t j = 0; j < got->n; j++)
        if (!used[j]) {
            *paths = realloc(*paths, (n + 1) * sizeof **paths);
            (*paths)[n++] = strdup(got->e[j].path);
        }
    free(used);
    return n;
}

size_t ref_diff(const ref_doc *want, const ref_doc *got, char *buf, size_t cap, unsigned max_lines)
{
    size_t at = 0, ndiff = 0;
    unsigned lines = 0;
    if (cap)
        buf[0] = 0;
    char t1[160], t2[160];
    bool *used = calloc(got->n + 1, 1);
    for (size_t i = 0; i < want->n; i++) {
        const ref_entry *w = &want->e[i];
        const ref_entry *g = NULL;
        /* same position first (the usual case), else anywhere */
        if (i < got->n && !used[i] && strcmp(got->e[i].path, w->path) == 0) {
            g = &got->e[i];
            used[i] = true;
        } else {
            for (size_t j = 0; j < got->n && !g; j++)
                if (!used[j] && strcmp(got->e[j].path, w->path) == 0) {
                    g = &got->e[j];
                    used[j] = true;
                }
        }
        if (g && strcmp(g->value, w->value) == 0)
            continue;
        ndiff++;
        if (lines++ < max_lines)
            appendf(buf, cap, &at, "    %s: libfdb_c %s, cfdb %s\n", w->path, shorten(w->value, t1, sizeof t1),
                    g ? shorten(g->value, t2, sizeof t2) : "(no such field)");
    }
    for (size_t j = 0; j < got->n; j++)
        if (!used[j]) {
            ndiff++;
            if (lines++ < max_lines)
                appendf(buf, cap, &at, "    %s: libfdb_c %s, cfdb %s\n", got->e[j].path, "(no such field)",
                        shorten(got->e[j].value, t2, sizeof t2));
        }
    if (lines > max_lines)
        appendf(buf, cap, &at, "    ... %s more differing fields%s%s\n", "", "", "");
    free(used);
    return ndiff;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long ref_unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
        if (a < 0 || b < 0)
            return -1;
        out[i] = (uint8_t)(a << 4 | b);
    }
    return (long)(n / 2);
}
