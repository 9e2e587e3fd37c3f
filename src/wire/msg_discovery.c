/* Transport-level and discovery messages: ping, protocol info, endpoint-not-found,
 * coordinators (OpenDatabaseCoordRequest, GetLeaderRequest), ClientDBInfo, cluster
 * controller status, global config. Sources: fdbrpc/FlowTransport.actor.cpp,
 * fdbclient/include/fdbclient/{CoordinationInterface,CommitProxyInterface,ClusterInterface}.h. */
#include "msg_types.h"

/* ---- transport ---- */

FB_TABLE_DEF(ping_request, "PingRequest", cfdb_ping_request, FB_FIELD(cfdb_ping_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_ping_request = { "PingRequest", 4707015, FB_MSG_REQUEST, &ping_request };
const fb_message cfdb_msg_void_reply = { "ErrorOr<Void>", CFDB_REPLY_FILE_ID(2010442), FB_MSG_REPLY, &cfdb_fb_void };

FB_TABLE_DEF(protocol_info_request, "ProtocolInfoRequest", cfdb_protocol_info_request,
             FB_FIELD(cfdb_protocol_info_request, reply, cfdb_fb_reply_promise));
FB_TABLE_DEF(protocol_info_reply, "ProtocolInfoReply", cfdb_protocol_info_reply,
             FB_FIELD(cfdb_protocol_info_reply, version, fb_u64));
const fb_message cfdb_msg_protocol_info_request = { "ProtocolInfoRequest", 13261233, FB_MSG_REQUEST,
                                                    &protocol_info_request };
const fb_message cfdb_msg_protocol_info_reply = { "ErrorOr<ProtocolInfoReply>", CFDB_REPLY_FILE_ID(7784298),
                                                  FB_MSG_REPLY, &protocol_info_reply };

FB_TABLE_DEF(endpoint_not_found, "UID", cfdb_endpoint_not_found, FB_FIELD(cfdb_endpoint_not_found, token, fb_uid));
const fb_message cfdb_msg_endpoint_not_found = { "EndpointNotFound", 15597147, FB_MSG_PLAIN, &endpoint_not_found };

/* ---- coordinators ---- */

FB_TABLE_DEF(client_version, "ClientVersionRef", cfdb_client_version,
             FB_FIELD(cfdb_client_version, clientVersion, fb_bytes),
             FB_FIELD(cfdb_client_version, sourceVersion, fb_bytes),
             FB_FIELD(cfdb_client_version, protocolVersion, fb_bytes));
FB_VECTOR_DEF(client_version_vec, "vector<ClientVersionRef>", client_version);

FB_TABLE_DEF(hostname, "Hostname", cfdb_hostname,
             FB_FIELD(cfdb_hostname, host, fb_bytes),
             FB_FIELD(cfdb_hostname, service, fb_bytes),
             FB_FIELD(cfdb_hostname, isTLS, fb_bool));
FB_VECTOR_DEF(hostname_vec, "vector<Hostname>", hostname);

/* Serialized in this order, not the declaration order. */
FB_TABLE_DEF(open_database_coord_request, "OpenDatabaseCoordRequest", cfdb_open_database_coord_request,
             FB_FIELD(cfdb_open_database_coord_request, issues, cfdb_fb_bytes_vec),
             FB_FIELD(cfdb_open_database_coord_request, supportedVersions, client_version_vec),
             FB_FIELD(cfdb_open_database_coord_request, traceLogGroup, fb_bytes),
             FB_FIELD(cfdb_open_database_coord_request, knownClientInfoID, fb_uid),
             FB_FIELD(cfdb_open_database_coord_request, clusterKey, fb_bytes),
             FB_FIELD(cfdb_open_database_coord_request, coordinators, cfdb_fb_network_address_vec),
             FB_FIELD(cfdb_open_database_coord_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_open_database_coord_request, hostnames, hostname_vec),
             FB_FIELD(cfdb_open_database_coord_request, internal, fb_bool));
const fb_message cfdb_msg_open_database_coord_request = { "OpenDatabaseCoordRequest", 214728, FB_MSG_REQUEST,
                                                          &open_database_coord_request };

FB_TABLE_DEF(version_history, "VersionHistory", cfdb_version_history,
             FB_FIELD(cfdb_version_history, mutations, cfdb_fb_mutation_vec),
             FB_FIELD(cfdb_version_history, version, fb_i64));
FB_VECTOR_DEF(version_history_vec, "vector<VersionHistory>", version_history);
/* a history entry's value, \xff/globalConfig/h/<versionstamp> (ObjectWriter, IncludeVersion) */
const fb_message cfdb_msg_version_history = { "VersionHistory", 5863456, FB_MSG_REQUEST, &version_history };

FB_TABLE_DEF(tenant_mode, "TenantMode", cfdb_tenant_mode, FB_FIELD(cfdb_tenant_mode, mode, fb_u32));

FB_TABLE_DEF(client_db_info, "ClientDBInfo", cfdb_client_db_info,
             FB_FIELD(cfdb_client_db_info, grvProxies, cfdb_fb_grv_proxy_interface_vec),
             FB_FIELD(cfdb_client_db_info, commitProxies, cfdb_fb_commit_proxy_interface_vec),
             FB_FIELD(cfdb_client_db_info, id, fb_uid),
             FB_FIELD(cfdb_client_db_info, forward, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_client_db_info, history, version_history_vec),
             FB_FIELD(cfdb_client_db_info, tenantMode, tenant_mode),
             FB_FIELD(cfdb_client_db_info, encryptKeyProxy, cfdb_fb_opt_encrypt_key_proxy_interface),
             FB_FIELD(cfdb_client_db_info, clusterId, fb_uid),
             FB_FIELD(cfdb_client_db_info, clusterType, fb_i32),
             FB_FIELD(cfdb_client_db_info, metaclusterName, cfdb_fb_opt_bytes));
const fb_message cfdb_msg_client_db_info_reply = { "ErrorOr<ClientDBInfo>", CFDB_REPLY_FILE_ID(5355080), FB_MSG_REPLY,
                                                   &client_db_info };

FB_TABLE_DEF(get_leader_request, "GetLeaderRequest", cfdb_get_leader_request,
             FB_FIELD(cfdb_get_leader_request, key, fb_bytes),
             FB_FIELD(cfdb_get_leader_request, knownLeader, fb_uid),
             FB_FIELD(cfdb_get_leader_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_get_leader_request = { "GetLeaderRequest", 214727, FB_MSG_REQUEST, &get_leader_request };

FB_TABLE_DEF(leader_info, "LeaderInfo", cfdb_leader_info,
             FB_FIELD(cfdb_leader_info, changeID, fb_uid),
             FB_FIELD(cfdb_leader_info, serializedInfo, fb_bytes),
             FB_FIELD(cfdb_leader_info, forward, fb_bool));
FB_OPTIONAL_DEF(opt_leader_info, "Optional<LeaderInfo>", cfdb_opt_leader_info, leader_info);
FB_TABLE_DEF(get_leader_reply, "EnsureTable<Optional<LeaderInfo>>", cfdb_get_leader_reply,
             FB_FIELD(cfdb_get_leader_reply, leader, opt_leader_info));
/* ErrorOr<EnsureTable<Optional<LeaderInfo>>>: Optional composes to depth 1, hence 0x2... */
const fb_message cfdb_msg_get_leader_reply = { "ErrorOr<Optional<LeaderInfo>>", 612318570, FB_MSG_REPLY,
                                               &get_leader_reply };

/* ---- cluster controller ---- */

FB_TABLE_DEF(cfdb_fb_cluster_interface, "ClusterInterface", cfdb_cluster_interface,
             FB_FIELD(cfdb_cluster_interface, openDatabase, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, failureMonitoring, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, databaseStatus, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, ping, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, getClientWorkers, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, forceRecovery, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, moveShard, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, repairSystemData, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, splitShard, cfdb_fb_request_stream),
             FB_FIELD(cfdb_cluster_interface, triggerAudit, cfdb_fb_request_stream));
FB_TABLE_DEF(cluster_controller_client_interface, "ClusterControllerClientInterface",
             cfdb_cluster_controller_client_interface,
             FB_FIELD(cfdb_cluster_controller_client_interface, clientInterface, cfdb_fb_cluster_interface));
/* Carried inside LeaderInfo.serializedInfo after an 8-byte protocol version. */
const fb_message cfdb_msg_cluster_controller_client_interface = { "ClusterControllerClientInterface", 14997695,
                                                                  FB_MSG_REQUEST, &cluster_controller_client_interface };

FB_TABLE_DEF(status_request, "StatusRequest", cfdb_status_request,
             FB_FIELD(cfdb_status_request, reply, cfdb_fb_reply_promise));
FB_TABLE_DEF(status_reply, "StatusReply", cfdb_status_reply, FB_FIELD(cfdb_status_reply, statusStr, fb_bytes));
const fb_message cfdb_msg_status_request = { "StatusRequest", 14419140, FB_MSG_REQUEST, &status_request };
const fb_message cfdb_msg_status_reply = { "ErrorOr<StatusReply>", CFDB_REPLY_FILE_ID(9980504), FB_MSG_REPLY,
                                           &status_reply };

/* ---- global configuration (GRV proxy stream 3) ---- */

FB_TABLE_DEF(global_config_refresh_request, "GlobalConfigRefreshRequest", cfdb_global_config_refresh_request,
             FB_FIELD(cfdb_global_config_refresh_request, lastKnown, fb_i64),
             FB_FIELD(cfdb_global_config_refresh_request, reply, cfdb_fb_reply_promise));
FB_TABLE_DEF(global_config_refresh_reply, "GlobalConfigRefreshReply", cfdb_global_config_refresh_reply,
             FB_FIELD(cfdb_global_config_refresh_reply, result, cfdb_fb_range_result),
             FB_FIELD(cfdb_global_config_refresh_reply, version, fb_i64));
const fb_message cfdb_msg_global_config_refresh_request = { "GlobalConfigRefreshRequest", 2828131, FB_MSG_REQUEST,
                                                            &global_config_refresh_request };
const fb_message cfdb_msg_global_config_refresh_reply = { "ErrorOr<GlobalConfigRefreshReply>",
                                                          CFDB_REPLY_FILE_ID(12680327), FB_MSG_REPLY,
                                                          &global_config_refresh_reply };
