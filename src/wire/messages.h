/* C structs of the FoundationDB 7.3 messages cfdb sends and receives, and their
 * declarative descriptions (src/wire/msg_*.c). Member names are FoundationDB's, so decoded
 * output reads like the source; members are listed in serialization order.
 *
 * Strings (cfdb_bytes) point into the decoded buffer or caller memory; vectors point into
 * an arena. A zeroed struct is a valid "default" message except where noted. */
#ifndef CFDB_MESSAGES_H
#define CFDB_MESSAGES_H

#include "fb.h"
#include "mutation.h"

typedef CFDB_VEC(cfdb_bytes) cfdb_bytes_vec;
typedef CFDB_VEC(int64_t) cfdb_i64_vec;
typedef CFDB_VEC(int32_t) cfdb_i32_vec;
typedef CFDB_VEC(uint8_t) cfdb_u8_vec;
typedef CFDB_OPTIONAL(cfdb_bytes) cfdb_opt_bytes;
typedef CFDB_OPTIONAL(cfdb_uid) cfdb_opt_uid;
typedef CFDB_OPTIONAL(int64_t) cfdb_opt_i64;
typedef CFDB_OPTIONAL(cfdb_error_value) cfdb_opt_error;
typedef CFDB_OPTIONAL(cfdb_i32_vec) cfdb_opt_i32_vec;
typedef CFDB_OPTIONAL(cfdb_i64_vec) cfdb_opt_i64_vec;

/* ---------- helper types ---------- */

typedef struct cfdb_void { char unused; } cfdb_void;

typedef struct cfdb_reply_promise {
    cfdb_uid token;
} cfdb_reply_promise;

typedef struct cfdb_span_context {
    cfdb_uid traceID;
    uint64_t spanID;
    uint8_t m_Flags;
} cfdb_span_context;

typedef struct cfdb_wiped_string {
    cfdb_bytes str;
} cfdb_wiped_string;
typedef CFDB_OPTIONAL(cfdb_wiped_string) cfdb_opt_wiped_string;

/* tenantId -1 = no tenant. Always send this table: servers compute trust while reading it. */
typedef struct cfdb_tenant_info {
    int64_t tenantId;
    cfdb_opt_wiped_string token;
} cfdb_tenant_info;

enum cfdb_read_type { CFDB_READ_EAGER = 0, CFDB_READ_FETCH = 1, CFDB_READ_LOW = 2, CFDB_READ_NORMAL = 3, CFDB_READ_HIGH = 4 };

typedef struct cfdb_read_options {
    int32_t type;
    bool cacheResult;
    cfdb_opt_uid debugID;
    cfdb_opt_i64 consistencyCheckStartVersion;
    bool lockAware;
} cfdb_read_options;
typedef CFDB_OPTIONAL(cfdb_read_options) cfdb_opt_read_options;

/* Half-open [begin, end). Single-key ranges [k, k\0) travel as {k\0, ""}: handled by the codec. */
typedef struct cfdb_key_range {
    cfdb_bytes begin;
    cfdb_bytes end;
} cfdb_key_range;
typedef CFDB_VEC(cfdb_key_range) cfdb_key_range_vec;

typedef struct cfdb_key_selector {
    cfdb_bytes key;
    bool orEqual;
    int32_t offset;
} cfdb_key_selector;

typedef struct cfdb_key_value {
    cfdb_bytes key;
    cfdb_bytes value;
} cfdb_key_value;
typedef CFDB_VEC(cfdb_key_value) cfdb_key_value_vec;

/* MutationRef: type codes and struct in src/common/mutation.h */
typedef CFDB_VEC(cfdb_mutation) cfdb_mutation_vec;

/* TagSet: a blob of u8-length-prefixed tags. */
typedef struct cfdb_tag_set {
    cfdb_bytes_vec tags;
} cfdb_tag_set;
typedef CFDB_OPTIONAL(cfdb_tag_set) cfdb_opt_tag_set;

/* VersionVector blob. 7.3 clusters run without version vectors: the empty form is
 * {u64 0, i64 maxVersion} with maxVersion -1. Other forms are kept raw. A zeroed struct
 * encodes as maxVersion 0, so set maxVersion = -1 (cfdb_version_vector_empty()). */
typedef struct cfdb_version_vector {
    int64_t maxVersion;
    cfdb_bytes raw; /* non-empty form as received; empty = the 16-byte empty form */
} cfdb_version_vector;

static inline cfdb_version_vector cfdb_version_vector_empty(void)
{
    return (cfdb_version_vector){ -1, { 0, 0 } };
}

/* ---------- addresses, endpoints, interfaces ---------- */

#define CFDB_ADDR_FLAG_PRIVATE 1
#define CFDB_ADDR_FLAG_TLS 2

/* IPAddress: variant<uint32_t v4 (host-order integer), array<uint8_t,16> v6>. */
typedef struct cfdb_ip_address {
    uint8_t tag; /* 1 = v4, 2 = v6 */
    uint32_t v4;
    cfdb_u8_vec v6; /* 16 bytes */
} cfdb_ip_address;

typedef struct cfdb_network_address {
    cfdb_ip_address ip;
    uint16_t port;
    uint16_t flags;
    bool fromHostname;
} cfdb_network_address;
typedef CFDB_OPTIONAL(cfdb_network_address) cfdb_opt_network_address;
typedef CFDB_VEC(cfdb_network_address) cfdb_network_address_vec;

typedef struct cfdb_network_address_list {
    cfdb_network_address address;
    cfdb_opt_network_address secondaryAddress;
} cfdb_network_address_list;

typedef struct cfdb_endpoint {
    cfdb_network_address_list addresses;
    cfdb_uid token;
} cfdb_endpoint;

/* RequestStream<T> serializes as a table holding its endpoint. */
typedef struct cfdb_request_stream {
    cfdb_endpoint endpoint;
} cfdb_request_stream;

typedef struct cfdb_locality_entry {
    cfdb_bytes first;
    cfdb_opt_bytes second;
} cfdb_locality_entry;
typedef CFDB_VEC(cfdb_locality_entry) cfdb_locality_entry_vec;

typedef struct cfdb_locality_data {
    cfdb_locality_entry_vec _data;
} cfdb_locality_data;

/* Streams derived from getValue's token, in registration order (getAdjustedEndpoint). */
enum cfdb_storage_stream {
    CFDB_SS_GET_VALUE = 0,
    CFDB_SS_GET_KEY = 1,
    CFDB_SS_GET_KEY_VALUES = 2,
    CFDB_SS_GET_SHARD_STATE = 3,
    CFDB_SS_WAIT_METRICS = 4,
    CFDB_SS_SPLIT_METRICS = 5,
    CFDB_SS_GET_STORAGE_METRICS = 6,
    CFDB_SS_WAIT_FAILURE = 7,
    CFDB_SS_GET_QUEUING_METRICS = 8,
    CFDB_SS_GET_KEY_VALUE_STORE_TYPE = 9,
    CFDB_SS_WATCH_VALUE = 10,
    CFDB_SS_GET_READ_HOT_RANGES = 11,
    CFDB_SS_GET_RANGE_SPLIT_POINTS = 12,
    CFDB_SS_GET_KEY_VALUES_STREAM = 13,
    CFDB_SS_GET_MAPPED_KEY_VALUES = 14,
    CFDB_SS_STREAM_COUNT = 26,
};

typedef struct cfdb_storage_server_interface {
    cfdb_uid uniqueID;
    cfdb_locality_data locality;
    cfdb_request_stream getValue;
    cfdb_opt_uid tssPairID;
    bool acceptingRequests;
} cfdb_storage_server_interface;
typedef CFDB_VEC(cfdb_storage_server_interface) cfdb_storage_server_interface_vec;

enum cfdb_grv_proxy_stream {
    CFDB_GRV_GET_CONSISTENT_READ_VERSION = 0,
    CFDB_GRV_WAIT_FAILURE = 1,
    CFDB_GRV_GET_HEALTH_METRICS = 2,
    CFDB_GRV_REFRESH_GLOBAL_CONFIG = 3,
    CFDB_GRV_STREAM_COUNT = 4,
};

typedef struct cfdb_grv_proxy_interface {
    cfdb_opt_bytes processId;
    bool provisional;
    cfdb_request_stream getConsistentReadVersion;
} cfdb_grv_proxy_interface;
typedef CFDB_VEC(cfdb_grv_proxy_interface) cfdb_grv_proxy_interface_vec;

enum cfdb_commit_proxy_stream {
    CFDB_CP_COMMIT = 0,
    CFDB_CP_GET_CONSISTENT_READ_VERSION = 1,
    CFDB_CP_GET_KEY_SERVERS_LOCATIONS = 2,
    CFDB_CP_GET_STORAGE_SERVER_REJOIN_INFO = 3,
    CFDB_CP_WAIT_FAILURE = 4,
    CFDB_CP_TXN_STATE = 5,
    CFDB_CP_GET_HEALTH_METRICS = 6,
    CFDB_CP_PROXY_SNAP_REQ = 7,
    CFDB_CP_EXCLUSION_SAFETY_CHECK_REQ = 8,
    CFDB_CP_GET_DD_METRICS = 9,
    CFDB_CP_EXPIRE_IDEMPOTENCY_ID = 10,
    CFDB_CP_GET_TENANT_ID = 11,
    CFDB_CP_GET_BLOB_GRANULE_LOCATIONS = 12,
    CFDB_CP_STREAM_COUNT = 13,
};

typedef struct cfdb_commit_proxy_interface {
    cfdb_opt_bytes processId;
    bool provisional;
    cfdb_request_stream commit;
} cfdb_commit_proxy_interface;
typedef CFDB_VEC(cfdb_commit_proxy_interface) cfdb_commit_proxy_interface_vec;

typedef struct cfdb_encrypt_key_proxy_interface {
    cfdb_locality_data locality;
    cfdb_uid myId;
    cfdb_request_stream waitFailure;
} cfdb_encrypt_key_proxy_interface;
typedef CFDB_OPTIONAL(cfdb_encrypt_key_proxy_interface) cfdb_opt_encrypt_key_proxy_interface;

/* ---------- transport ---------- */

typedef struct cfdb_ping_request {
    cfdb_reply_promise reply;
} cfdb_ping_request;

typedef struct cfdb_protocol_info_request {
    cfdb_reply_promise reply;
} cfdb_protocol_info_request;

typedef struct cfdb_protocol_info_reply {
    uint64_t version;
} cfdb_protocol_info_reply;

/* Payload sent to WLTOKEN_ENDPOINT_NOT_FOUND / UNAUTHORIZED_ENDPOINT: the token in question. */
typedef struct cfdb_endpoint_not_found {
    cfdb_uid token;
} cfdb_endpoint_not_found;

/* ---------- discovery ---------- */

typedef struct cfdb_client_version {
    cfdb_bytes clientVersion;
    cfdb_bytes sourceVersion;
    cfdb_bytes protocolVersion;
} cfdb_client_version;
typedef CFDB_VEC(cfdb_client_version) cfdb_client_version_vec;

typedef struct cfdb_hostname {
    cfdb_bytes host;
    cfdb_bytes service;
    bool isTLS;
} cfdb_hostname;
typedef CFDB_VEC(cfdb_hostname) cfdb_hostname_vec;

typedef struct cfdb_open_database_coord_request {
    cfdb_bytes_vec issues;
    cfdb_client_version_vec supportedVersions;
    cfdb_bytes traceLogGroup;
    cfdb_uid knownClientInfoID;
    cfdb_bytes clusterKey;
    cfdb_network_address_vec coordinators;
    cfdb_reply_promise reply;
    cfdb_hostname_vec hostnames;
    bool internal;
} cfdb_open_database_coord_request;

typedef struct cfdb_version_history {
    cfdb_mutation_vec mutations;
    int64_t version;
} cfdb_version_history;
typedef CFDB_VEC(cfdb_version_history) cfdb_version_history_vec;

typedef struct cfdb_tenant_mode {
    uint32_t mode; /* 0 disabled, 1 optional, 2 required */
} cfdb_tenant_mode;

typedef struct cfdb_client_db_info {
    cfdb_grv_proxy_interface_vec grvProxies;
    cfdb_commit_proxy_interface_vec commitProxies;
    cfdb_uid id;
    cfdb_opt_bytes forward;
    cfdb_version_history_vec history;
    cfdb_tenant_mode tenantMode;
    cfdb_opt_encrypt_key_proxy_interface encryptKeyProxy;
    cfdb_uid clusterId;
    int32_t clusterType; /* 0 standalone */
    cfdb_opt_bytes metaclusterName;
} cfdb_client_db_info;

typedef struct cfdb_get_leader_request {
    cfdb_bytes key;
    cfdb_uid knownLeader;
    cfdb_reply_promise reply;
} cfdb_get_leader_request;

typedef struct cfdb_leader_info {
    cfdb_uid changeID;
    cfdb_bytes serializedInfo; /* u64 protocol version + ClusterControllerClientInterface message */
    bool forward;
} cfdb_leader_info;
typedef CFDB_OPTIONAL(cfdb_leader_info) cfdb_opt_leader_info;

/* EnsureTable<Optional<LeaderInfo>>: the reply item is wrapped in a one-member table. */
typedef struct cfdb_get_leader_reply {
    cfdb_opt_leader_info leader;
} cfdb_get_leader_reply;

typedef struct cfdb_cluster_interface {
    cfdb_request_stream openDatabase;
    cfdb_request_stream failureMonitoring;
    cfdb_request_stream databaseStatus;
    cfdb_request_stream ping;
    cfdb_request_stream getClientWorkers;
    cfdb_request_stream forceRecovery;
    cfdb_request_stream moveShard;
    cfdb_request_stream repairSystemData;
    cfdb_request_stream splitShard;
    cfdb_request_stream triggerAudit;
} cfdb_cluster_interface;

typedef struct cfdb_cluster_controller_client_interface {
    cfdb_cluster_interface clientInterface;
} cfdb_cluster_controller_client_interface;

typedef struct cfdb_status_request {
    cfdb_reply_promise reply;
} cfdb_status_request;

typedef struct cfdb_status_reply {
    cfdb_bytes statusStr; /* JSON text */
} cfdb_status_reply;

typedef struct cfdb_range_result {
    cfdb_key_value_vec data;
    bool more;
    cfdb_opt_bytes readThrough;
    bool readToBegin;
    bool readThroughEnd;
} cfdb_range_result;

typedef struct cfdb_global_config_refresh_request {
    int64_t lastKnown;
    cfdb_reply_promise reply;
} cfdb_global_config_refresh_request;

typedef struct cfdb_global_config_refresh_reply {
    cfdb_range_result result;
    int64_t version;
} cfdb_global_config_refresh_reply;

/* ---------- GRV proxy ---------- */

#define CFDB_GRV_PRIORITY_SYSTEM_IMMEDIATE 0x0F000000u
#define CFDB_GRV_PRIORITY_DEFAULT 0x08000000u
#define CFDB_GRV_PRIORITY_BATCH 0x01000000u
#define CFDB_GRV_FLAG_PRIORITY_MASK 0x0F000000u
#define CFDB_GRV_FLAG_USE_MIN_KNOWN_COMMITTED_VERSION 4u
#define CFDB_GRV_FLAG_USE_PROVISIONAL_PROXIES 2u
#define CFDB_GRV_FLAG_CAUSAL_READ_RISKY 1u

typedef struct cfdb_tag_count {
    cfdb_bytes first;  /* tag */
    uint32_t second;   /* transactions carrying it */
} cfdb_tag_count;
typedef CFDB_VEC(cfdb_tag_count) cfdb_tag_count_vec;

typedef struct cfdb_get_read_version_request {
    uint32_t transactionCount;
    uint32_t flags;
    cfdb_tag_count_vec tags;
    cfdb_opt_uid debugID;
    cfdb_reply_promise reply;
    cfdb_span_context spanContext;
    int64_t maxVersion;
} cfdb_get_read_version_request;

typedef struct cfdb_tag_throttle_limits {
    double tpsRate;
    double duration;
} cfdb_tag_throttle_limits;

typedef struct cfdb_tag_throttle_entry {
    cfdb_bytes first;
    cfdb_tag_throttle_limits second;
} cfdb_tag_throttle_entry;
typedef CFDB_VEC(cfdb_tag_throttle_entry) cfdb_tag_throttle_entry_vec;

typedef struct cfdb_get_read_version_reply {
    int32_t processBusyTime;
    int64_t version;
    bool locked;
    cfdb_opt_bytes metadataVersion;
    cfdb_tag_throttle_entry_vec tagThrottleInfo;
    int64_t midShardSize;
    bool rkDefaultThrottled;
    bool rkBatchThrottled;
    cfdb_version_vector ssVersionVectorDelta;
    cfdb_uid proxyId;
    double proxyTagThrottledDuration;
} cfdb_get_read_version_reply;

/* ---------- commit proxy ---------- */

typedef struct cfdb_get_key_server_locations_request {
    cfdb_bytes begin;
    cfdb_opt_bytes end;
    int32_t limit;
    bool reverse;
    cfdb_reply_promise reply;
    cfdb_span_context spanContext;
    cfdb_tenant_info tenant;
    int64_t minTenantVersion;
} cfdb_get_key_server_locations_request;

typedef struct cfdb_shard_location {
    cfdb_key_range first;
    cfdb_storage_server_interface_vec second;
} cfdb_shard_location;
typedef CFDB_VEC(cfdb_shard_location) cfdb_shard_location_vec;

typedef struct cfdb_tss_mapping {
    cfdb_uid first;
    cfdb_storage_server_interface second;
} cfdb_tss_mapping;
typedef CFDB_VEC(cfdb_tss_mapping) cfdb_tss_mapping_vec;

typedef struct cfdb_tag_mapping {
    cfdb_uid first;
    cfdb_tag second;
} cfdb_tag_mapping;
typedef CFDB_VEC(cfdb_tag_mapping) cfdb_tag_mapping_vec;

typedef struct cfdb_get_key_server_locations_reply {
    cfdb_shard_location_vec results;
    cfdb_tss_mapping_vec resultsTssMapping;
    cfdb_tag_mapping_vec resultsTagMapping;
} cfdb_get_key_server_locations_reply;

typedef struct cfdb_commit_transaction {
    cfdb_key_range_vec read_conflict_ranges;
    cfdb_key_range_vec write_conflict_ranges;
    cfdb_mutation_vec mutations;
    int64_t read_snapshot;
    bool report_conflicting_keys;
    bool lock_aware;
    CFDB_OPTIONAL(cfdb_span_context) spanContext;
    cfdb_opt_i64_vec tenantIds;
} cfdb_commit_transaction;

typedef struct cfdb_clear_idx_cost {
    int32_t first;
    uint64_t second;
} cfdb_clear_idx_cost;
typedef CFDB_VEC(cfdb_clear_idx_cost) cfdb_clear_idx_cost_vec;

typedef struct cfdb_commit_cost_estimation {
    int32_t opsCount;
    uint64_t writeCosts;
    cfdb_clear_idx_cost_vec clearIdxCosts;
    uint32_t expensiveCostEstCount;
} cfdb_commit_cost_estimation;

#define CFDB_COMMIT_FLAG_IS_LOCK_AWARE 1u
#define CFDB_COMMIT_FLAG_FIRST_IN_BATCH 2u
#define CFDB_COMMIT_FLAG_BYPASS_STORAGE_QUOTA 4u

typedef struct cfdb_commit_transaction_request {
    cfdb_commit_transaction transaction;
    cfdb_reply_promise reply;
    uint32_t flags;
    cfdb_opt_uid debugID;
    CFDB_OPTIONAL(cfdb_commit_cost_estimation) commitCostEstimation;
    cfdb_opt_tag_set tagSet;
    cfdb_span_context spanContext;
    cfdb_tenant_info tenantInfo;
    cfdb_bytes idempotencyId;
} cfdb_commit_transaction_request;

typedef struct cfdb_commit_id {
    int64_t version; /* -1: conflicted (with report_conflicting_keys) */
    uint16_t txnBatchId;
    cfdb_opt_bytes metadataVersion;
    cfdb_opt_i32_vec conflictingKRIndices;
} cfdb_commit_id;

typedef struct cfdb_get_tenant_id_request {
    cfdb_reply_promise reply;
    cfdb_bytes tenantName;
    int64_t minTenantVersion;
} cfdb_get_tenant_id_request;

typedef struct cfdb_get_tenant_id_reply {
    int64_t tenantId;
} cfdb_get_tenant_id_reply;

typedef struct cfdb_expire_idempotency_id_request {
    int64_t commitVersion;
    uint8_t batchIndexHighByte;
    cfdb_tenant_info tenant;
} cfdb_expire_idempotency_id_request;

/* ---------- storage server ---------- */

typedef struct cfdb_get_value_request {
    cfdb_bytes key;
    int64_t version;
    cfdb_opt_tag_set tags;
    cfdb_reply_promise reply;
    cfdb_span_context spanContext;
    cfdb_tenant_info tenantInfo;
    cfdb_opt_read_options options;
    cfdb_version_vector ssLatestCommitVersions;
} cfdb_get_value_request;

typedef struct cfdb_get_value_reply {
    double penalty;
    cfdb_opt_error error;   /* in-band error (wrong_shard_server...) */
    cfdb_opt_bytes value;   /* absent: no such key */
    bool cached;
} cfdb_get_value_reply;

typedef struct cfdb_get_key_request {
    cfdb_key_selector sel;
    int64_t version;
    cfdb_opt_tag_set tags;
    cfdb_reply_promise reply;
    cfdb_span_context spanContext;
    cfdb_tenant_info tenantInfo;
    cfdb_opt_read_options options;
    cfdb_version_vector ssLatestCommitVersions;
} cfdb_get_key_request;

typedef struct cfdb_get_key_reply {
    double penalty;
    cfdb_opt_error error;
    cfdb_key_selector sel;
    bool cached;
} cfdb_get_key_reply;

typedef struct cfdb_get_key_values_request {
    cfdb_key_selector begin;
    cfdb_key_selector end;
    int64_t version;
    int32_t limit;      /* > 0 forward, < 0 reverse */
    int32_t limitBytes;
    cfdb_opt_tag_set tags;
    cfdb_reply_promise reply;
    cfdb_span_context spanContext;
    cfdb_tenant_info tenantInfo;
    cfdb_opt_read_options options;
    cfdb_version_vector ssLatestCommitVersions;
} cfdb_get_key_values_request;

typedef struct cfdb_get_key_values_reply {
    double penalty;
    cfdb_opt_error error;
    cfdb_key_value_vec data; /* one string blob on the wire */
    int64_t version;
    bool more;
    bool cached;
} cfdb_get_key_values_reply;

typedef struct cfdb_get_mapped_key_values_request {
    cfdb_key_selector begin;
    cfdb_key_selector end;
    cfdb_bytes mapper;
    int64_t version;
    int32_t limit;
    int32_t limitBytes;
    cfdb_opt_tag_set tags;
    cfdb_reply_promise reply;
    cfdb_span_context spanContext;
    cfdb_tenant_info tenantInfo;
    cfdb_opt_read_options options;
    cfdb_version_vector ssLatestCommitVersions;
} cfdb_get_mapped_key_values_request;

typedef struct cfdb_get_value_req_and_result {
    cfdb_bytes key;
    cfdb_opt_bytes result;
} cfdb_get_value_req_and_result;

typedef struct cfdb_get_range_req_and_result {
    cfdb_key_selector begin;
    cfdb_key_selector end;
    cfdb_range_result result;
} cfdb_get_range_req_and_result;

typedef struct cfdb_mapped_req_and_result {
    uint8_t tag; /* 1 = getValue, 2 = getRange */
    cfdb_get_value_req_and_result getValue;
    cfdb_get_range_req_and_result getRange;
} cfdb_mapped_req_and_result;

typedef struct cfdb_mapped_key_value {
    cfdb_key_value kv;
    cfdb_mapped_req_and_result reqAndResult;
} cfdb_mapped_key_value;
typedef CFDB_VEC(cfdb_mapped_key_value) cfdb_mapped_key_value_vec;

typedef struct cfdb_get_mapped_key_values_reply {
    double penalty;
    cfdb_opt_error error;
    cfdb_mapped_key_value_vec data;
    int64_t version;
    bool more;
    bool cached;
} cfdb_get_mapped_key_values_reply;

typedef struct cfdb_watch_value_request {
    cfdb_bytes key;
    cfdb_opt_bytes value;
    int64_t version;
    cfdb_opt_tag_set tags;
    cfdb_opt_uid debugID;
    cfdb_reply_promise reply;
    cfdb_span_context spanContext;
    cfdb_tenant_info tenantInfo;
} cfdb_watch_value_request;

typedef struct cfdb_watch_value_reply {
    int64_t version;
    bool cached;
} cfdb_watch_value_reply;

typedef struct cfdb_storage_metrics {
    int64_t bytes;
    int64_t bytesWrittenPerKSecond;
    int64_t iosPerKSecond;
    int64_t bytesReadPerKSecond;
    int64_t opsReadPerKSecond;
} cfdb_storage_metrics;

typedef struct cfdb_wait_metrics_request {
    cfdb_key_range keys;
    cfdb_storage_metrics min;
    cfdb_storage_metrics max;
    cfdb_reply_promise reply;
    cfdb_tenant_info tenantInfo;
    int64_t minVersion;
} cfdb_wait_metrics_request;

typedef struct cfdb_split_range_request {
    cfdb_key_range keys;
    int64_t chunkSize;
    cfdb_reply_promise reply;
    cfdb_tenant_info tenantInfo;
} cfdb_split_range_request;

typedef struct cfdb_split_range_reply {
    cfdb_bytes_vec splitPoints;
} cfdb_split_range_reply;

/* ---------- descriptions ---------- */

/* Helper types, for building and printing. */
extern fb_type cfdb_fb_key_range, cfdb_fb_key_selector, cfdb_fb_key_value, cfdb_fb_mutation;
extern fb_type cfdb_fb_network_address, cfdb_fb_storage_server_interface, cfdb_fb_cluster_interface;
/* for messages described outside the wire library (the client's management requests) */
extern fb_type cfdb_fb_reply_promise, cfdb_fb_request_stream;

extern const fb_message cfdb_msg_ping_request, cfdb_msg_void_reply;
extern const fb_message cfdb_msg_protocol_info_request, cfdb_msg_protocol_info_reply;
extern const fb_message cfdb_msg_endpoint_not_found;
extern const fb_message cfdb_msg_open_database_coord_request, cfdb_msg_client_db_info_reply;
extern const fb_message cfdb_msg_get_leader_request, cfdb_msg_get_leader_reply;
extern const fb_message cfdb_msg_cluster_controller_client_interface;
extern const fb_message cfdb_msg_status_request, cfdb_msg_status_reply;
extern const fb_message cfdb_msg_global_config_refresh_request, cfdb_msg_global_config_refresh_reply;
extern const fb_message cfdb_msg_get_read_version_request, cfdb_msg_get_read_version_reply;
extern const fb_message cfdb_msg_get_key_server_locations_request, cfdb_msg_get_key_server_locations_reply;
extern const fb_message cfdb_msg_commit_transaction_request, cfdb_msg_commit_id_reply;
extern const fb_message cfdb_msg_get_tenant_id_request, cfdb_msg_get_tenant_id_reply;
extern const fb_message cfdb_msg_expire_idempotency_id_request;
extern const fb_message cfdb_msg_get_value_request, cfdb_msg_get_value_reply;
extern const fb_message cfdb_msg_get_key_request, cfdb_msg_get_key_reply;
extern const fb_message cfdb_msg_get_key_values_request, cfdb_msg_get_key_values_reply;
extern const fb_message cfdb_msg_get_mapped_key_values_request, cfdb_msg_get_mapped_key_values_reply;
extern const fb_message cfdb_msg_watch_value_request, cfdb_msg_watch_value_reply;
extern const fb_message cfdb_msg_wait_metrics_request, cfdb_msg_storage_metrics_reply;
extern const fb_message cfdb_msg_split_range_request, cfdb_msg_split_range_reply;
extern const fb_message cfdb_msg_storage_server_interface; /* \xff/serverList/ values */

/* Health metrics (src/wire/msg_health.c). */
typedef struct cfdb_get_health_metrics_request {
    cfdb_reply_promise reply;
    bool detailed;
} cfdb_get_health_metrics_request;
typedef struct cfdb_get_health_metrics_reply {
    cfdb_bytes serialized; /* HealthMetrics, BinaryWriter IncludeVersion */
} cfdb_get_health_metrics_reply;
extern const fb_message cfdb_msg_get_health_metrics_request, cfdb_msg_get_health_metrics_reply;
typedef struct cfdb_health_storage_stats {
    cfdb_uid id;
    int64_t storageQueue;
    int64_t storageDurabilityLag;
    double diskUsage;
    double cpuUsage;
} cfdb_health_storage_stats;
typedef struct cfdb_health_log_queue {
    cfdb_uid id;
    int64_t queue;
} cfdb_health_log_queue;
typedef struct cfdb_health_metrics {
    int64_t worstStorageQueue, limitingStorageQueue;
    int64_t worstStorageDurabilityLag, limitingStorageDurabilityLag;
    int64_t worstTLogQueue;
    double tpsLimit;
    bool batchLimited;
    cfdb_health_storage_stats *storage; /* in UID order (std::map) */
    size_t nstorage;
    cfdb_health_log_queue *log; /* in UID order */
    size_t nlog;
} cfdb_health_metrics;
/* HealthMetrics in BinaryWriter IncludeVersion form, into / from arena memory. */
int cfdb_health_metrics_encode(const cfdb_health_metrics *m, cfdb_arena *a, cfdb_bytes *out);
int cfdb_health_metrics_decode(cfdb_bytes in, cfdb_arena *a, cfdb_health_metrics *m);

/* Data distribution metrics (src/wire/msg_proxy.c). */
typedef struct cfdb_get_dd_metrics_request {
    cfdb_key_range keys;
    int32_t shardLimit;
    cfdb_reply_promise reply;
} cfdb_get_dd_metrics_request;
typedef struct cfdb_dd_metrics_ref {
    int64_t shardBytes;
    cfdb_bytes beginKey;
    int64_t shardBytesPerKSecond;
} cfdb_dd_metrics_ref;
typedef CFDB_VEC(cfdb_dd_metrics_ref) cfdb_dd_metrics_vec;
typedef struct cfdb_get_dd_metrics_reply {
    cfdb_dd_metrics_vec storageMetricsList;
} cfdb_get_dd_metrics_reply;
extern const fb_message cfdb_msg_get_dd_metrics_request, cfdb_msg_get_dd_metrics_reply;

/* Management requests (src/wire/msg_manage.c). */
typedef struct cfdb_proxy_snap_request {
    cfdb_bytes snapPayload;
    cfdb_uid snapUID;
    cfdb_reply_promise reply;
    cfdb_opt_uid debugID;
} cfdb_proxy_snap_request;
typedef struct cfdb_force_recovery_request {
    cfdb_bytes dcId;
    cfdb_reply_promise reply;
} cfdb_force_recovery_request;
typedef struct cfdb_get_client_workers_request {
    cfdb_reply_promise reply;
} cfdb_get_client_workers_request;
typedef struct cfdb_client_worker_interface {
    cfdb_request_stream reboot, profiler, setFailureInjection;
} cfdb_client_worker_interface;
typedef CFDB_VEC(cfdb_client_worker_interface) cfdb_client_worker_vec;
typedef struct cfdb_client_workers_reply {
    cfdb_client_worker_vec workers;
} cfdb_client_workers_reply;
typedef struct cfdb_reboot_request {
    bool deleteData;
    bool checkData;
    uint32_t waitForDuration;
} cfdb_reboot_request;
extern const fb_message cfdb_msg_proxy_snap_request, cfdb_msg_force_recovery_request;
extern const fb_message cfdb_msg_get_client_workers_request, cfdb_msg_client_workers_reply, cfdb_msg_reboot_request;

/* Tenant metadata values (src/wire/msg_tenant.c; IncludeVersion in front when stored). */
typedef struct cfdb_tenant_map_entry {
    int64_t id;
    cfdb_bytes tenantName;
    uint8_t tenantLockState;
    cfdb_opt_uid tenantLockId;
    cfdb_opt_bytes tenantGroup;
    int64_t configurationSequenceNum;
} cfdb_tenant_map_entry;
typedef struct cfdb_tenant_group_entry {
    char unused;
} cfdb_tenant_group_entry;
extern const fb_message cfdb_msg_tenant_map_entry, cfdb_msg_tenant_group_entry;
/* GlobalConfig history values (issue 12, modules) */
extern const fb_message cfdb_msg_version_history;

/* Every described message, for tools and tests. */
extern const fb_message *const cfdb_all_messages[];
extern const unsigned cfdb_all_messages_count;

/* The message a file identifier usually means (several types share some identifiers:
 * the endpoint decides; this returns the data-path one). NULL if unknown. */
const fb_message *cfdb_message_by_file_id(uint32_t file_id);
/* By name: "GetValueRequest", or the reply form "ErrorOr<GetValueReply>". */
const fb_message *cfdb_message_by_name(const char *name);

#endif
