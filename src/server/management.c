/* Management requests libfdb_c sends outside the data path, answered so that the caller
 * gets a result instead of waiting forever:
 *
 * ForceRecoveryRequest (fdbclient/include/fdbclient/ClusterInterface.h: file id 14821350,
 * fields dcId, reply), on ClusterInterface.forceRecovery (stream 5). libfdb_c's
 * forceRecovery (fdbclient/ManagementAPI.actor.cpp) waits on
 * brokenPromiseToNever(getReply(...)): an endpoint-not-found would hang it for good. The
 * real cluster controller (fdbserver/ClusterController.actor.cpp handleForcedRecoveries)
 * first tries an empty commit and, when that commits, answers Void without recovering:
 * the database is healthy. This one-process server's commit path is always up, so it
 * answers Void at once.
 *
 * ProxySnapRequest (fdbclient/include/fdbclient/CommitProxyInterface.h: file id 5427684,
 * fields snapPayload, snapUID, reply, debugID), on CommitProxyInterface stream 7. The
 * real commit proxy (fdbserver/CommitProxyServer.actor.cpp proxySnapCreate) first checks
 * the snapshot command's binary against the --whitelist-binpath list and fails with
 * snap_path_not_whitelisted (2505) when it is not there; fdbserver's default list is
 * empty, so a default server answers 2505 before anything else. cfdb-server has no such
 * list and cannot snapshot its roles' disks as a cluster does, so it always gives that
 * answer: an honest "this server will not run your snapshot command". */
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"

#include "coordinator.h"
#include "management.h"

/* The messages: src/wire/msg_manage.c */

void mgmt_force_recovery(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_force_recovery_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_force_recovery_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "ForceRecoveryRequest");
    } else {
        char dc[64];
        srv_bytes_repr(req.dcId, dc, sizeof dc);
        srv_log(s, "force recovery (dc %s): the database is accepting commits, nothing to recover", dc);
        cfdb_void v = { 0 };
        srv_reply(s, c, req.reply.token, &cfdb_msg_void_reply, &v, 0);
    }
    cfdb_arena_free(&a);
}

void mgmt_proxy_snap(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_proxy_snap_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_proxy_snap_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "ProxySnapRequest");
    } else {
        char cmd[128];
        srv_bytes_repr(req.snapPayload, cmd, sizeof cmd);
        srv_log(s, "snapshot request %s: no whitelisted binary path, answering snap_path_not_whitelisted", cmd);
        srv_reply(s, c, req.reply.token, &cfdb_msg_void_reply, NULL, CFDB_ERR_SNAP_PATH_NOT_WHITELISTED);
    }
    cfdb_arena_free(&a);
}

/* ---- worker interfaces and reboot ---- */

static void stream_at(srv *s, cfdb_request_stream *rs, cfdb_uid token)
{
    memset(rs, 0, sizeof(*rs));
    rs->endpoint.addresses.address = srv_listener_address(s, s->coord_listener);
    rs->endpoint.token = token;
}

void mgmt_client_workers(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_client_workers_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_get_client_workers_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "GetClientWorkersRequest");
    } else {
        cfdb_client_worker_interface w;
        stream_at(s, &w.reboot, s->worker_base);
        stream_at(s, &w.profiler, cfdb_adjusted_token(s->worker_base, MGMT_WORKER_PROFILER));
        stream_at(s, &w.setFailureInjection, cfdb_adjusted_token(s->worker_base, MGMT_WORKER_FAILURE_INJECTION));
        cfdb_client_workers_reply r = { { &w, 1 } };
        srv_reply(s, c, req.reply.token, &cfdb_msg_client_workers_reply, &r, 0);
    }
    cfdb_arena_free(&a);
}

static void reboot_back(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    srv *s = arg;
    (void)loop;
    (void)t;
    for (int i = 0; i < s->nlisteners; i++)
        srv_set_unreachable(s, i, false);
    coord_new_generation(s);
    srv_log(s, "reboot: back, new proxy generation");
}

static void reboot_now(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    srv *s = arg;
    (void)t;
    for (int i = 0; i < s->nlisteners; i++)
        srv_set_unreachable(s, i, true);
    cfdb_timer_init(&s->reboot_timer, reboot_back, s);
    cfdb_loop_timer_add_in(loop, &s->reboot_timer, (uint64_t)s->reboot_wait_s * 1000000000ull);
}

void mgmt_reboot(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_reboot_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_reboot_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "RebootRequest");
    } else if (cfdb_timer_is_armed(&s->reboot_timer)) {
        srv_log(s, "reboot request while rebooting: ignored");
    } else {
        if (req.deleteData)
            srv_log(s, "reboot request with deleteData: fdbserver refuses that outside simulation; data kept");
        srv_log(s, "reboot request (suspend %u s): dropping every connection, then a new proxy generation",
                req.waitForDuration);
        s->reboot_wait_s = req.waitForDuration;
        /* not from inside this connection's frame callback: on the next loop turn */
        cfdb_timer_init(&s->reboot_timer, reboot_now, s);
        cfdb_loop_timer_add_in(s->loop, &s->reboot_timer, 0);
    }
    cfdb_arena_free(&a);
}
