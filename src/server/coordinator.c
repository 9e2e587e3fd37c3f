/* Coordinator (well-known tokens 3, 4, 10) and the cluster controller's status stream. */
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "protocol_version.h"
#include "coord_change.h"
#include "coordinator.h"
#include "global_config.h"
#include "status.h"

static void set_endpoint(srv *s, cfdb_request_stream *rs, int listener, cfdb_uid token)
{
    memset(rs, 0, sizeof(*rs));
    rs->endpoint.addresses.address = srv_listener_address(s, listener);
    rs->endpoint.token = token;
}

void coord_client_db_info(srv *s, cfdb_arena *a, cfdb_client_db_info *out)
{
    memset(out, 0, sizeof(*out));
    cfdb_grv_proxy_interface *g = cfdb_arena_zalloc(a, sizeof(*g));
    cfdb_commit_proxy_interface *cp = cfdb_arena_zalloc(a, sizeof(*cp));
    if (!g || !cp)
        return;
    g->processId.present = 1;
    g->processId.value = cfdb_bytes_make(s->proxy_process_id, 32);
    set_endpoint(s, &g->getConsistentReadVersion, s->grv_listener, s->grv_base);
    cp->processId = g->processId;
    set_endpoint(s, &cp->commit, s->commit_listener, s->commit_base);
    out->grvProxies.items = g;
    out->grvProxies.count = 1;
    out->commitProxies.items = cp;
    out->commitProxies.count = 1;
    out->id = s->client_info_id;
    out->clusterId = s->cluster_id_uid;
    out->tenantMode.mode = (uint32_t)s->tenant_mode;
    out->clusterType = 0;
    srv_gc_client_info(s, out);
}

static void reply_open_database(srv *s, srv_conn *c, cfdb_uid reply)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_client_db_info info;
    if (s->forward[0]) {
        /* a coordinator that was replaced answers with the new connection string only */
        memset(&info, 0, sizeof info);
        info.id = srv_random_uid(s);
        info.forward.present = 1;
        info.forward.value = cfdb_bytes_str(s->forward);
    } else {
        coord_client_db_info(s, &a, &info);
    }
    srv_reply(s, c, reply, &cfdb_msg_client_db_info_reply, &info, 0);
    cfdb_arena_free(&a);
}

void coord_forward_reply(srv *s, srv_conn *c, cfdb_uid reply, bool leader)
{
    const char *cs = cfdb_server_connection_string(s);
    if (leader) {
        /* a leader register whose key moved answers LeaderInfo{forward = true,
         * serializedInfo = the new connection string} (fdbserver/Coordination.actor.cpp) */
        cfdb_get_leader_reply r;
        memset(&r, 0, sizeof r);
        r.leader.present = 1;
        r.leader.value.changeID = srv_random_uid(s);
        r.leader.value.serializedInfo = cfdb_bytes_str(cs);
        r.leader.value.forward = true;
        srv_reply(s, c, reply, &cfdb_msg_get_leader_reply, &r, 0);
        return;
    }
    cfdb_client_db_info info;
    memset(&info, 0, sizeof info);
    info.id = srv_random_uid(s);
    info.forward.present = 1;
    info.forward.value = cfdb_bytes_str(cs);
    srv_reply(s, c, reply, &cfdb_msg_client_db_info_reply, &info, 0);
}

static void open_database_parked(srv *s, srv_parked *p, bool timed_out)
{
    (void)timed_out; /* after the register interval: the same info again */
    reply_open_database(s, p->c, p->reply);
    srv_unpark(s, p);
}

void coord_client_info_changed(srv *s)
{
    for (srv_parked *p = s->parked.next; p != &s->parked;) {
        srv_parked *n = p->next;
        if (p->kind == PARK_OPEN_DATABASE)
            open_database_parked(s, p, false);
        p = n;
    }
}

void coord_new_generation(srv *s)
{
    if (!cfdb_uid_is_zero(s->grv_base))
        srv_unregister_interface(s, s->grv_base, CFDB_GRV_STREAM_COUNT);
    if (!cfdb_uid_is_zero(s->commit_base))
        srv_unregister_interface(s, s->commit_base, CFDB_CP_STREAM_COUNT);
    s->grv_base = srv_random_base(s);
    s->commit_base = srv_random_base(s);
    srv_register_interface(s, s->grv_base, CFDB_GRV_STREAM_COUNT, ROLE_GRV, -1, s->grv_listener);
    srv_register_interface(s, s->commit_base, CFDB_CP_STREAM_COUNT, ROLE_COMMIT, -1, s->commit_listener);
    s->client_info_id = srv_random_uid(s);
    coord_client_info_changed(s);
}

bool coord_is_listener(const srv *s, int listener)
{
    for (int i = 0; i < s->n_coord_listeners; i++)
        if (s->coord_listeners[i] == listener)
            return true;
    return listener == s->coord_listener;
}

/* "desc:id" must name our cluster description. */
static bool cluster_key_ok(srv *s, cfdb_bytes key)
{
    size_t n = strlen(s->cluster_desc);
    return key.len > n && memcmp(key.ptr, s->cluster_desc, n) == 0 && key.ptr[n] == ':';
}

void coord_open_database(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_open_database_coord_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_open_database_coord_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "OpenDatabaseCoordRequest");
        goto out;
    }
    if (s->forward[0]) {
        reply_open_database(s, c, req.reply.token);
        goto out;
    }
    if (coord_key_forwarded(s, req.clusterKey)) {
        coord_forward_reply(s, c, req.reply.token, false);
        goto out;
    }
    if (!cluster_key_ok(s, req.clusterKey)) {
        srv_reply(s, c, req.reply.token, &cfdb_msg_client_db_info_reply, NULL, CFDB_ERR_WRONG_CONNECTION_FILE);
        goto out;
    }
    if (!cfdb_uid_eq(req.knownClientInfoID, s->client_info_id)) {
        reply_open_database(s, c, req.reply.token);
        goto out;
    }
    srv_park(s, c, req.reply.token, PARK_OPEN_DATABASE, open_database_parked, SRV_OPEN_DATABASE_TIMEOUT_NS);
out:
    cfdb_arena_free(&a);
}

static void reply_leader(srv *s, srv_conn *c, cfdb_uid reply)
{
    cfdb_cluster_controller_client_interface cc;
    memset(&cc, 0, sizeof cc);
    cfdb_request_stream *streams = &cc.clientInterface.openDatabase;
    for (int i = 0; i < 10; i++)
        set_endpoint(s, &streams[i], s->coord_listener, cfdb_adjusted_token(s->cc_base, (uint32_t)i));
    fb_writer w;
    fb_writer_init(&w, 8);
    if (fb_encode(&w, &cfdb_msg_cluster_controller_client_interface, &cc, 0) == 0) {
        uint8_t *blob = w.buf + w.base - 8;
        uint64_t pv = CFDB_PROTOCOL_VERSION;
        memcpy(blob, &pv, 8);
        cfdb_get_leader_reply r;
        memset(&r, 0, sizeof r);
        r.leader.present = 1;
        r.leader.value.changeID = s->leader_change_id;
        r.leader.value.serializedInfo = cfdb_bytes_make(blob, fb_writer_message_len(&w) + 8);
        r.leader.value.forward = false;
        srv_reply(s, c, reply, &cfdb_msg_get_leader_reply, &r, 0);
    }
    fb_writer_free(&w);
}

static void leader_parked(srv *s, srv_parked *p, bool timed_out)
{
    (void)timed_out;
    reply_leader(s, p->c, p->reply);
    srv_unpark(s, p);
}

void coord_get_leader(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_leader_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_get_leader_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "GetLeaderRequest");
        goto out;
    }
    if (coord_key_forwarded(s, req.key)) {
        coord_forward_reply(s, c, req.reply.token, true);
        goto out;
    }
    if (!cluster_key_ok(s, req.key)) {
        /* a key this coordinator elects no leader for: fdbserver (ENABLE_CROSS_CLUSTER_SUPPORT,
         * on by default) hands it to a leader register of its own, which has no nominee and
         * answers at its next interval with no leader (fdbserver/Coordination.actor.cpp
         * leaderRegister). libfdb_c's reboot_worker checks that a worker is reachable with
         * such an empty GetLeaderRequest (NativeAPI verifyInterfaceActor). */
        cfdb_get_leader_reply none;
        memset(&none, 0, sizeof none);
        srv_reply(s, c, req.reply.token, &cfdb_msg_get_leader_reply, &none, 0);
        goto out;
    }
    if (!cfdb_uid_eq(req.knownLeader, s->leader_change_id))
        reply_leader(s, c, req.reply.token);
    else /* the leader never changes: this poll stays open while the connection lives */
        srv_park(s, c, req.reply.token, PARK_GET_LEADER, leader_parked, 0);
out:
    cfdb_arena_free(&a);
}

void coord_protocol_info(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_protocol_info_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_protocol_info_request, msg, len, &req, NULL, &a) == 0) {
        cfdb_protocol_info_reply r = { CFDB_PROTOCOL_VERSION };
        srv_reply(s, c, req.reply.token, &cfdb_msg_protocol_info_reply, &r, 0);
    } else {
        srv_bad_request(s, c, "ProtocolInfoRequest");
    }
    cfdb_arena_free(&a);
}

void coord_status(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_status_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_status_request, msg, len, &req, NULL, &a) == 0) {
        cfdb_status_reply r;
        r.statusStr = status_cluster_json(s, &a);
        srv_reply(s, c, req.reply.token, &cfdb_msg_status_reply, &r, 0);
    } else {
        srv_bad_request(s, c, "StatusRequest");
    }
    cfdb_arena_free(&a);
}
