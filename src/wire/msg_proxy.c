/* GRV proxy and commit proxy messages (fdbclient/include/fdbclient/CommitProxyInterface.h). */
#include "msg_types.h"

/* ---- read versions ---- */

FB_TABLE_DEF(tag_count, "pair<TransactionTag,uint32>", cfdb_tag_count,
             FB_FIELD(cfdb_tag_count, first, fb_bytes),
             FB_FIELD(cfdb_tag_count, second, fb_u32));
FB_VECTOR_DEF(tag_count_vec, "TransactionTagMap<uint32>", tag_count);

FB_TABLE_DEF(get_read_version_request, "GetReadVersionRequest", cfdb_get_read_version_request,
             FB_FIELD(cfdb_get_read_version_request, transactionCount, fb_u32),
             FB_FIELD(cfdb_get_read_version_request, flags, fb_u32),
             FB_FIELD(cfdb_get_read_version_request, tags, tag_count_vec),
             FB_FIELD(cfdb_get_read_version_request, debugID, cfdb_fb_opt_uid),
             FB_FIELD(cfdb_get_read_version_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_read_version_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_get_read_version_request, maxVersion, fb_i64));
const fb_message cfdb_msg_get_read_version_request = { "GetReadVersionRequest", 838566, FB_MSG_REQUEST,
                                                       &get_read_version_request };

FB_TABLE_DEF(tag_throttle_limits, "ClientTagThrottleLimits", cfdb_tag_throttle_limits,
             FB_FIELD(cfdb_tag_throttle_limits, tpsRate, fb_f64),
             FB_FIELD(cfdb_tag_throttle_limits, duration, fb_f64));
FB_TABLE_DEF(tag_throttle_entry, "pair<TransactionTag,ClientTagThrottleLimits>", cfdb_tag_throttle_entry,
             FB_FIELD(cfdb_tag_throttle_entry, first, fb_bytes),
             FB_FIELD(cfdb_tag_throttle_entry, second, tag_throttle_limits));
FB_VECTOR_DEF(tag_throttle_entry_vec, "TransactionTagMap<ClientTagThrottleLimits>", tag_throttle_entry);

FB_TABLE_DEF(get_read_version_reply, "GetReadVersionReply", cfdb_get_read_version_reply,
             FB_FIELD(cfdb_get_read_version_reply, processBusyTime, fb_i32),
             FB_FIELD(cfdb_get_read_version_reply, version, fb_i64),
             FB_FIELD(cfdb_get_read_version_reply, locked, fb_bool),
             FB_FIELD(cfdb_get_read_version_reply, metadataVersion, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_get_read_version_reply, tagThrottleInfo, tag_throttle_entry_vec),
             FB_FIELD(cfdb_get_read_version_reply, midShardSize, fb_i64),
             FB_FIELD(cfdb_get_read_version_reply, rkDefaultThrottled, fb_bool),
             FB_FIELD(cfdb_get_read_version_reply, rkBatchThrottled, fb_bool),
             FB_FIELD(cfdb_get_read_version_reply, ssVersionVectorDelta, cfdb_fb_version_vector),
             FB_FIELD(cfdb_get_read_version_reply, proxyId, fb_uid),
             FB_FIELD(cfdb_get_read_version_reply, proxyTagThrottledDuration, fb_f64));
const fb_message cfdb_msg_get_read_version_reply = { "ErrorOr<GetReadVersionReply>", CFDB_REPLY_FILE_ID(15709388),
                                                     FB_MSG_REPLY, &get_read_version_reply };

/* ---- key locations ---- */

FB_TABLE_DEF(get_key_server_locations_request, "GetKeyServerLocationsRequest", cfdb_get_key_server_locations_request,
             FB_FIELD(cfdb_get_key_server_locations_request, begin, fb_bytes),
             FB_FIELD(cfdb_get_key_server_locations_request, end, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_get_key_server_locations_request, limit, fb_i32),
             FB_FIELD(cfdb_get_key_server_locations_request, reverse, fb_bool),
             FB_FIELD(cfdb_get_key_server_locations_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_key_server_locations_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_get_key_server_locations_request, tenant, cfdb_fb_tenant_info),
             FB_FIELD(cfdb_get_key_server_locations_request, minTenantVersion, fb_i64));
const fb_message cfdb_msg_get_key_server_locations_request = { "GetKeyServerLocationsRequest", 9144680,
                                                               FB_MSG_REQUEST, &get_key_server_locations_request };

FB_TABLE_DEF(shard_location, "pair<KeyRangeRef,vector<StorageServerInterface>>", cfdb_shard_location,
             FB_FIELD(cfdb_shard_location, first, cfdb_fb_key_range),
             FB_FIELD(cfdb_shard_location, second, cfdb_fb_storage_server_interface_vec));
FB_VECTOR_DEF(shard_location_vec, "vector<pair<KeyRangeRef,vector<StorageServerInterface>>>", shard_location);
FB_TABLE_DEF(tss_mapping, "pair<UID,StorageServerInterface>", cfdb_tss_mapping,
             FB_FIELD(cfdb_tss_mapping, first, fb_uid),
             FB_FIELD(cfdb_tss_mapping, second, cfdb_fb_storage_server_interface));
FB_VECTOR_DEF(tss_mapping_vec, "vector<pair<UID,StorageServerInterface>>", tss_mapping);
FB_TABLE_DEF(tag_mapping, "pair<UID,Tag>", cfdb_tag_mapping,
             FB_FIELD(cfdb_tag_mapping, first, fb_uid),
             FB_FIELD(cfdb_tag_mapping, second, fb_tag));
FB_VECTOR_DEF(tag_mapping_vec, "vector<pair<UID,Tag>>", tag_mapping);

FB_TABLE_DEF(get_key_server_locations_reply, "GetKeyServerLocationsReply", cfdb_get_key_server_locations_reply,
             FB_FIELD(cfdb_get_key_server_locations_reply, results, shard_location_vec),
             FB_FIELD(cfdb_get_key_server_locations_reply, resultsTssMapping, tss_mapping_vec),
             FB_FIELD(cfdb_get_key_server_locations_reply, resultsTagMapping, tag_mapping_vec));
const fb_message cfdb_msg_get_key_server_locations_reply = { "ErrorOr<GetKeyServerLocationsReply>",
                                                             CFDB_REPLY_FILE_ID(10636023), FB_MSG_REPLY,
                                                             &get_key_server_locations_reply };

/* ---- commit ---- */

FB_TABLE_DEF(commit_transaction, "CommitTransactionRef", cfdb_commit_transaction,
             FB_FIELD(cfdb_commit_transaction, read_conflict_ranges, cfdb_fb_key_range_vec),
             FB_FIELD(cfdb_commit_transaction, write_conflict_ranges, cfdb_fb_key_range_vec),
             FB_FIELD(cfdb_commit_transaction, mutations, cfdb_fb_mutation_vec),
             FB_FIELD(cfdb_commit_transaction, read_snapshot, fb_i64),
             FB_FIELD(cfdb_commit_transaction, report_conflicting_keys, fb_bool),
             FB_FIELD(cfdb_commit_transaction, lock_aware, fb_bool),
             FB_FIELD(cfdb_commit_transaction, spanContext, cfdb_fb_opt_span_context),
             FB_FIELD(cfdb_commit_transaction, tenantIds, cfdb_fb_opt_i64_vec));

FB_TABLE_DEF(clear_idx_cost, "pair<int,uint64>", cfdb_clear_idx_cost,
             FB_FIELD(cfdb_clear_idx_cost, first, fb_i32),
             FB_FIELD(cfdb_clear_idx_cost, second, fb_u64));
FB_VECTOR_DEF(clear_idx_cost_vec, "vector<pair<int,uint64>>", clear_idx_cost);
FB_TABLE_DEF(commit_cost_estimation, "ClientTrCommitCostEstimation", cfdb_commit_cost_estimation,
             FB_FIELD(cfdb_commit_cost_estimation, opsCount, fb_i32),
             FB_FIELD(cfdb_commit_cost_estimation, writeCosts, fb_u64),
             FB_FIELD(cfdb_commit_cost_estimation, clearIdxCosts, clear_idx_cost_vec),
             FB_FIELD(cfdb_commit_cost_estimation, expensiveCostEstCount, fb_u32));
FB_OPTIONAL_DEF(opt_commit_cost_estimation, "Optional<ClientTrCommitCostEstimation>",
                CFDB_OPTIONAL(cfdb_commit_cost_estimation), commit_cost_estimation);

FB_TABLE_DEF(commit_transaction_request, "CommitTransactionRequest", cfdb_commit_transaction_request,
             FB_FIELD(cfdb_commit_transaction_request, transaction, commit_transaction),
             FB_FIELD(cfdb_commit_transaction_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_commit_transaction_request, flags, fb_u32),
             FB_FIELD(cfdb_commit_transaction_request, debugID, cfdb_fb_opt_uid),
             FB_FIELD(cfdb_commit_transaction_request, commitCostEstimation, opt_commit_cost_estimation),
             FB_FIELD(cfdb_commit_transaction_request, tagSet, cfdb_fb_opt_tag_set),
             FB_FIELD(cfdb_commit_transaction_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_commit_transaction_request, tenantInfo, cfdb_fb_tenant_info),
             FB_FIELD(cfdb_commit_transaction_request, idempotencyId, fb_bytes));
const fb_message cfdb_msg_commit_transaction_request = { "CommitTransactionRequest", 93948, FB_MSG_REQUEST,
                                                         &commit_transaction_request };

FB_TABLE_DEF(commit_id, "CommitID", cfdb_commit_id,
             FB_FIELD(cfdb_commit_id, version, fb_i64),
             FB_FIELD(cfdb_commit_id, txnBatchId, fb_u16),
             FB_FIELD(cfdb_commit_id, metadataVersion, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_commit_id, conflictingKRIndices, cfdb_fb_opt_i32_vec));
const fb_message cfdb_msg_commit_id_reply = { "ErrorOr<CommitID>", CFDB_REPLY_FILE_ID(14254927), FB_MSG_REPLY,
                                              &commit_id };

/* ---- tenants and idempotency ---- */

FB_TABLE_DEF(get_tenant_id_request, "GetTenantIdRequest", cfdb_get_tenant_id_request,
             FB_FIELD(cfdb_get_tenant_id_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_tenant_id_request, tenantName, fb_bytes),
             FB_FIELD(cfdb_get_tenant_id_request, minTenantVersion, fb_i64));
const fb_message cfdb_msg_get_tenant_id_request = { "GetTenantIdRequest", 11299717, FB_MSG_REQUEST,
                                                    &get_tenant_id_request };
FB_TABLE_DEF(get_tenant_id_reply, "GetTenantIdReply", cfdb_get_tenant_id_reply,
             FB_FIELD(cfdb_get_tenant_id_reply, tenantId, fb_i64));
const fb_message cfdb_msg_get_tenant_id_reply = { "ErrorOr<GetTenantIdReply>", CFDB_REPLY_FILE_ID(11441284),
                                                  FB_MSG_REPLY, &get_tenant_id_reply };

FB_TABLE_DEF(expire_idempotency_id_request, "ExpireIdempotencyIdRequest", cfdb_expire_idempotency_id_request,
             FB_FIELD(cfdb_expire_idempotency_id_request, commitVersion, fb_i64),
             FB_FIELD(cfdb_expire_idempotency_id_request, batchIndexHighByte, fb_u8),
             FB_FIELD(cfdb_expire_idempotency_id_request, tenant, cfdb_fb_tenant_info));
const fb_message cfdb_msg_expire_idempotency_id_request = { "ExpireIdempotencyIdRequest", 1900933, FB_MSG_REQUEST,
                                                            &expire_idempotency_id_request };

/* ---- data distribution metrics (CommitProxyInterface.getDDMetrics, stream 9) ---- */

/* GetDDMetricsRequest serializer(ar, keys, shardLimit, reply); GetDDMetricsReply
 * serializer(ar, storageMetricsList), a vector of DDMetricsRef
 * serializer(ar, shardBytes, beginKey, shardBytesPerKSecond) (7.3.77 FDBTypes.h). */
FB_TABLE_DEF(get_dd_metrics_request, "GetDDMetricsRequest", cfdb_get_dd_metrics_request,
             FB_FIELD(cfdb_get_dd_metrics_request, keys, cfdb_fb_key_range),
             FB_FIELD(cfdb_get_dd_metrics_request, shardLimit, fb_i32),
             FB_FIELD(cfdb_get_dd_metrics_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_get_dd_metrics_request = { "GetDDMetricsRequest", 14536812, FB_MSG_REQUEST,
                                                     &get_dd_metrics_request };
FB_TABLE_DEF(dd_metrics_ref, "DDMetricsRef", cfdb_dd_metrics_ref, FB_FIELD(cfdb_dd_metrics_ref, shardBytes, fb_i64),
             FB_FIELD(cfdb_dd_metrics_ref, beginKey, fb_bytes),
             FB_FIELD(cfdb_dd_metrics_ref, shardBytesPerKSecond, fb_i64));
FB_VECTOR_DEF(dd_metrics_vec, "VectorRef<DDMetricsRef>", dd_metrics_ref);
FB_TABLE_DEF(get_dd_metrics_reply, "GetDDMetricsReply", cfdb_get_dd_metrics_reply,
             FB_FIELD(cfdb_get_dd_metrics_reply, storageMetricsList, dd_metrics_vec));
const fb_message cfdb_msg_get_dd_metrics_reply = { "ErrorOr<GetDDMetricsReply>", CFDB_REPLY_FILE_ID(7277713),
                                                   FB_MSG_REPLY, &get_dd_metrics_reply };
