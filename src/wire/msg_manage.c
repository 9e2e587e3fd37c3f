/* Management requests (7.3.77 fdbclient/include/fdbclient/ClusterInterface.h,
 * ClientWorkerInterface.h, CommitProxyInterface.h), used by the client's database calls
 * (src/client/db_manage.c) and answered by cfdb-server (src/server/management.c):
 *   ProxySnapRequest (5427684) serializer(snapPayload, snapUID, reply, debugID, arena): the
 *     arena is no field;
 *   ForceRecoveryRequest (14821350) {dcId, reply};
 *   GetClientWorkersRequest (10771791) {reply}, answered with
 *     ErrorOr<vector<ClientWorkerInterface>>: ErrorOr (2, at bit 28: the inner type is
 *     composed once) of vector (5) of ClientWorkerInterface (12418152) {reboot, profiler,
 *     setFailureInjection};
 *   RebootRequest (11913957) {deleteData, checkData, waitForDuration}. */
#include "msg_types.h"

FB_OPTIONAL_DEF(manage_opt_uid, "Optional<UID>", cfdb_opt_uid, fb_uid);

FB_TABLE_DEF(proxy_snap_request, "ProxySnapRequest", cfdb_proxy_snap_request,
             FB_FIELD(cfdb_proxy_snap_request, snapPayload, fb_bytes),
             FB_FIELD(cfdb_proxy_snap_request, snapUID, fb_uid),
             FB_FIELD(cfdb_proxy_snap_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_proxy_snap_request, debugID, manage_opt_uid));
const fb_message cfdb_msg_proxy_snap_request = { "ProxySnapRequest", 5427684, FB_MSG_REQUEST, &proxy_snap_request };

FB_TABLE_DEF(force_recovery_request, "ForceRecoveryRequest", cfdb_force_recovery_request,
             FB_FIELD(cfdb_force_recovery_request, dcId, fb_bytes),
             FB_FIELD(cfdb_force_recovery_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_force_recovery_request = { "ForceRecoveryRequest", 14821350, FB_MSG_REQUEST,
                                                     &force_recovery_request };

FB_TABLE_DEF(get_client_workers_request, "GetClientWorkersRequest", cfdb_get_client_workers_request,
             FB_FIELD(cfdb_get_client_workers_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_get_client_workers_request = { "GetClientWorkersRequest", 10771791, FB_MSG_REQUEST,
                                                         &get_client_workers_request };
FB_TABLE_DEF(client_worker_interface, "ClientWorkerInterface", cfdb_client_worker_interface,
             FB_FIELD(cfdb_client_worker_interface, reboot, cfdb_fb_request_stream),
             FB_FIELD(cfdb_client_worker_interface, profiler, cfdb_fb_request_stream),
             FB_FIELD(cfdb_client_worker_interface, setFailureInjection, cfdb_fb_request_stream));
FB_VECTOR_DEF(client_worker_vec, "vector<ClientWorkerInterface>", client_worker_interface);
FB_TABLE_DEF(client_workers_reply, "EnsureTable<vector<ClientWorkerInterface>>", cfdb_client_workers_reply,
             FB_FIELD(cfdb_client_workers_reply, workers, client_worker_vec));
const fb_message cfdb_msg_client_workers_reply = { "ErrorOr<vector<ClientWorkerInterface>>",
                                                   (2u << 28) | (5u << 24) | 12418152u, FB_MSG_REPLY,
                                                   &client_workers_reply };

FB_TABLE_DEF(reboot_request, "RebootRequest", cfdb_reboot_request, FB_FIELD(cfdb_reboot_request, deleteData, fb_bool),
             FB_FIELD(cfdb_reboot_request, checkData, fb_bool),
             FB_FIELD(cfdb_reboot_request, waitForDuration, fb_u32));
const fb_message cfdb_msg_reboot_request = { "RebootRequest", 11913957, FB_MSG_REQUEST, &reboot_request };
