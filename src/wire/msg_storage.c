/* Storage server messages (fdbclient/include/fdbclient/StorageServerInterface.h). */
#include "msg_types.h"

/* Storage replies derive from LoadBalancedReply: penalty and an in-band error come first. */

FB_TABLE_DEF(get_value_request, "GetValueRequest", cfdb_get_value_request,
             FB_FIELD(cfdb_get_value_request, key, fb_bytes),
             FB_FIELD(cfdb_get_value_request, version, fb_i64),
             FB_FIELD(cfdb_get_value_request, tags, cfdb_fb_opt_tag_set),
             FB_FIELD(cfdb_get_value_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_value_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_get_value_request, tenantInfo, cfdb_fb_tenant_info),
             FB_FIELD(cfdb_get_value_request, options, cfdb_fb_opt_read_options),
             FB_FIELD(cfdb_get_value_request, ssLatestCommitVersions, cfdb_fb_version_vector));
const fb_message cfdb_msg_get_value_request = { "GetValueRequest", 8454530, FB_MSG_REQUEST, &get_value_request };

FB_TABLE_DEF(get_value_reply, "GetValueReply", cfdb_get_value_reply,
             FB_FIELD(cfdb_get_value_reply, penalty, fb_f64),
             FB_FIELD(cfdb_get_value_reply, error, cfdb_fb_opt_error),
             FB_FIELD(cfdb_get_value_reply, value, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_get_value_reply, cached, fb_bool));
const fb_message cfdb_msg_get_value_reply = { "ErrorOr<GetValueReply>", CFDB_REPLY_FILE_ID(1378929), FB_MSG_REPLY,
                                              &get_value_reply };

FB_TABLE_DEF(get_key_request, "GetKeyRequest", cfdb_get_key_request,
             FB_FIELD(cfdb_get_key_request, sel, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_key_request, version, fb_i64),
             FB_FIELD(cfdb_get_key_request, tags, cfdb_fb_opt_tag_set),
             FB_FIELD(cfdb_get_key_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_key_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_get_key_request, tenantInfo, cfdb_fb_tenant_info),
             FB_FIELD(cfdb_get_key_request, options, cfdb_fb_opt_read_options),
             FB_FIELD(cfdb_get_key_request, ssLatestCommitVersions, cfdb_fb_version_vector));
const fb_message cfdb_msg_get_key_request = { "GetKeyRequest", 10457870, FB_MSG_REQUEST, &get_key_request };

FB_TABLE_DEF(get_key_reply, "GetKeyReply", cfdb_get_key_reply,
             FB_FIELD(cfdb_get_key_reply, penalty, fb_f64),
             FB_FIELD(cfdb_get_key_reply, error, cfdb_fb_opt_error),
             FB_FIELD(cfdb_get_key_reply, sel, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_key_reply, cached, fb_bool));
const fb_message cfdb_msg_get_key_reply = { "ErrorOr<GetKeyReply>", CFDB_REPLY_FILE_ID(11226513), FB_MSG_REPLY,
                                            &get_key_reply };

FB_TABLE_DEF(get_key_values_request, "GetKeyValuesRequest", cfdb_get_key_values_request,
             FB_FIELD(cfdb_get_key_values_request, begin, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_key_values_request, end, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_key_values_request, version, fb_i64),
             FB_FIELD(cfdb_get_key_values_request, limit, fb_i32),
             FB_FIELD(cfdb_get_key_values_request, limitBytes, fb_i32),
             FB_FIELD(cfdb_get_key_values_request, tags, cfdb_fb_opt_tag_set),
             FB_FIELD(cfdb_get_key_values_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_key_values_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_get_key_values_request, tenantInfo, cfdb_fb_tenant_info),
             FB_FIELD(cfdb_get_key_values_request, options, cfdb_fb_opt_read_options),
             FB_FIELD(cfdb_get_key_values_request, ssLatestCommitVersions, cfdb_fb_version_vector));
const fb_message cfdb_msg_get_key_values_request = { "GetKeyValuesRequest", 6795746, FB_MSG_REQUEST,
                                                     &get_key_values_request };

FB_TABLE_DEF(get_key_values_reply, "GetKeyValuesReply", cfdb_get_key_values_reply,
             FB_FIELD(cfdb_get_key_values_reply, penalty, fb_f64),
             FB_FIELD(cfdb_get_key_values_reply, error, cfdb_fb_opt_error),
             FB_FIELD(cfdb_get_key_values_reply, data, cfdb_fb_key_value_blob),
             FB_FIELD(cfdb_get_key_values_reply, version, fb_i64),
             FB_FIELD(cfdb_get_key_values_reply, more, fb_bool),
             FB_FIELD(cfdb_get_key_values_reply, cached, fb_bool));
const fb_message cfdb_msg_get_key_values_reply = { "ErrorOr<GetKeyValuesReply>", CFDB_REPLY_FILE_ID(1783066),
                                                   FB_MSG_REPLY, &get_key_values_reply };

FB_TABLE_DEF(get_mapped_key_values_request, "GetMappedKeyValuesRequest", cfdb_get_mapped_key_values_request,
             FB_FIELD(cfdb_get_mapped_key_values_request, begin, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_mapped_key_values_request, end, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_mapped_key_values_request, mapper, fb_bytes),
             FB_FIELD(cfdb_get_mapped_key_values_request, version, fb_i64),
             FB_FIELD(cfdb_get_mapped_key_values_request, limit, fb_i32),
             FB_FIELD(cfdb_get_mapped_key_values_request, limitBytes, fb_i32),
             FB_FIELD(cfdb_get_mapped_key_values_request, tags, cfdb_fb_opt_tag_set),
             FB_FIELD(cfdb_get_mapped_key_values_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_mapped_key_values_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_get_mapped_key_values_request, tenantInfo, cfdb_fb_tenant_info),
             FB_FIELD(cfdb_get_mapped_key_values_request, options, cfdb_fb_opt_read_options),
             FB_FIELD(cfdb_get_mapped_key_values_request, ssLatestCommitVersions, cfdb_fb_version_vector));
const fb_message cfdb_msg_get_mapped_key_values_request = { "GetMappedKeyValuesRequest", 6795747, FB_MSG_REQUEST,
                                                            &get_mapped_key_values_request };

FB_TABLE_DEF(get_value_req_and_result, "GetValueReqAndResultRef", cfdb_get_value_req_and_result,
             FB_FIELD(cfdb_get_value_req_and_result, key, fb_bytes),
             FB_FIELD(cfdb_get_value_req_and_result, result, cfdb_fb_opt_bytes));
FB_TABLE_DEF(get_range_req_and_result, "GetRangeReqAndResultRef", cfdb_get_range_req_and_result,
             FB_FIELD(cfdb_get_range_req_and_result, begin, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_range_req_and_result, end, cfdb_fb_key_selector),
             FB_FIELD(cfdb_get_range_req_and_result, result, cfdb_fb_range_result));
FB_UNION_DEF(mapped_req_and_result, "MappedReqAndResultRef", cfdb_mapped_req_and_result,
             { &get_value_req_and_result, offsetof(cfdb_mapped_req_and_result, getValue) },
             { &get_range_req_and_result, offsetof(cfdb_mapped_req_and_result, getRange) });
FB_TABLE_DEF(mapped_key_value, "MappedKeyValueRef", cfdb_mapped_key_value,
             FB_FIELD(cfdb_mapped_key_value, kv, cfdb_fb_key_value),
             FB_FIELD(cfdb_mapped_key_value, reqAndResult, mapped_req_and_result));
FB_VECTOR_DEF(mapped_key_value_vec, "vector<MappedKeyValueRef>", mapped_key_value);

FB_TABLE_DEF(get_mapped_key_values_reply, "GetMappedKeyValuesReply", cfdb_get_mapped_key_values_reply,
             FB_FIELD(cfdb_get_mapped_key_values_reply, penalty, fb_f64),
             FB_FIELD(cfdb_get_mapped_key_values_reply, error, cfdb_fb_opt_error),
             FB_FIELD(cfdb_get_mapped_key_values_reply, data, mapped_key_value_vec),
             FB_FIELD(cfdb_get_mapped_key_values_reply, version, fb_i64),
             FB_FIELD(cfdb_get_mapped_key_values_reply, more, fb_bool),
             FB_FIELD(cfdb_get_mapped_key_values_reply, cached, fb_bool));
const fb_message cfdb_msg_get_mapped_key_values_reply = { "ErrorOr<GetMappedKeyValuesReply>",
                                                          CFDB_REPLY_FILE_ID(1783067), FB_MSG_REPLY,
                                                          &get_mapped_key_values_reply };

FB_TABLE_DEF(watch_value_request, "WatchValueRequest", cfdb_watch_value_request,
             FB_FIELD(cfdb_watch_value_request, key, fb_bytes),
             FB_FIELD(cfdb_watch_value_request, value, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_watch_value_request, version, fb_i64),
             FB_FIELD(cfdb_watch_value_request, tags, cfdb_fb_opt_tag_set),
             FB_FIELD(cfdb_watch_value_request, debugID, cfdb_fb_opt_uid),
             FB_FIELD(cfdb_watch_value_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_watch_value_request, spanContext, cfdb_fb_span_context),
             FB_FIELD(cfdb_watch_value_request, tenantInfo, cfdb_fb_tenant_info));
const fb_message cfdb_msg_watch_value_request = { "WatchValueRequest", 14747733, FB_MSG_REQUEST,
                                                  &watch_value_request };

FB_TABLE_DEF(watch_value_reply, "WatchValueReply", cfdb_watch_value_reply,
             FB_FIELD(cfdb_watch_value_reply, version, fb_i64),
             FB_FIELD(cfdb_watch_value_reply, cached, fb_bool));
/* WatchValueReply's file identifier really is 3. */
const fb_message cfdb_msg_watch_value_reply = { "ErrorOr<WatchValueReply>", CFDB_REPLY_FILE_ID(3), FB_MSG_REPLY,
                                                &watch_value_reply };

FB_TABLE_DEF(storage_metrics, "StorageMetrics", cfdb_storage_metrics,
             FB_FIELD(cfdb_storage_metrics, bytes, fb_i64),
             FB_FIELD(cfdb_storage_metrics, bytesWrittenPerKSecond, fb_i64),
             FB_FIELD(cfdb_storage_metrics, iosPerKSecond, fb_i64),
             FB_FIELD(cfdb_storage_metrics, bytesReadPerKSecond, fb_i64),
             FB_FIELD(cfdb_storage_metrics, opsReadPerKSecond, fb_i64));

FB_TABLE_DEF(wait_metrics_request, "WaitMetricsRequest", cfdb_wait_metrics_request,
             FB_FIELD(cfdb_wait_metrics_request, keys, cfdb_fb_key_range),
             FB_FIELD(cfdb_wait_metrics_request, min, storage_metrics),
             FB_FIELD(cfdb_wait_metrics_request, max, storage_metrics),
             FB_FIELD(cfdb_wait_metrics_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_wait_metrics_request, tenantInfo, cfdb_fb_tenant_info),
             FB_FIELD(cfdb_wait_metrics_request, minVersion, fb_i64));
const fb_message cfdb_msg_wait_metrics_request = { "WaitMetricsRequest", 1795961, FB_MSG_REQUEST,
                                                   &wait_metrics_request };
const fb_message cfdb_msg_storage_metrics_reply = { "ErrorOr<StorageMetrics>", CFDB_REPLY_FILE_ID(13622226),
                                                    FB_MSG_REPLY, &storage_metrics };

FB_TABLE_DEF(split_range_request, "SplitRangeRequest", cfdb_split_range_request,
             FB_FIELD(cfdb_split_range_request, keys, cfdb_fb_key_range),
             FB_FIELD(cfdb_split_range_request, chunkSize, fb_i64),
             FB_FIELD(cfdb_split_range_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_split_range_request, tenantInfo, cfdb_fb_tenant_info));
const fb_message cfdb_msg_split_range_request = { "SplitRangeRequest", 10725174, FB_MSG_REQUEST,
                                                  &split_range_request };
FB_TABLE_DEF(split_range_reply, "SplitRangeReply", cfdb_split_range_reply,
             FB_FIELD(cfdb_split_range_reply, splitPoints, cfdb_fb_bytes_vec));
const fb_message cfdb_msg_split_range_reply = { "ErrorOr<SplitRangeReply>", CFDB_REPLY_FILE_ID(11813134),
                                                FB_MSG_REPLY, &split_range_reply };

/* \xff/serverList/<id> values (fdbclient/SystemData.cpp serverListValue: ObjectWriter with
 * IncludeVersion, so an 8-byte protocol version precedes the message): written by
 * cfdb-server's system keys, read by the client's get_addresses_for_key. */
const fb_message cfdb_msg_storage_server_interface = { "StorageServerInterface", 15302073, FB_MSG_REQUEST,
                                                       &cfdb_fb_storage_server_interface };
