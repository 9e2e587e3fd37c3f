/* Token -> handler: the endpoint table, request routing, the batch timer that flushes the
 * proxies' per-iteration queues, and storage interfaces as published to clients. */
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "config_messages.h"
#include "commit_proxy.h"
#include "config_node.h"
#include "coordinator.h"
#include "grv_proxy.h"
#include "management.h"
#include "srv_core.h"
#include "storage_server.h"

static size_t ep_hash(cfdb_uid t)
{
    uint64_t h = t.first * 0x9E3779B97F4A7C15ull ^ (t.second + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

int srv_endpoints_init(srv *s)
{
    s->eps_cap = 256;
    s->eps = calloc(s->eps_cap, sizeof(srv_endpoint));
    s->eps_count = 0;
    return s->eps ? 0 : CFDB_ERR_PLATFORM_ERROR; /* no memory */
}

void srv_endpoints_free(srv *s)
{
    free(s->eps);
    s->eps = NULL;
    s->eps_cap = s->eps_count = 0;
}

static srv_endpoint *ep_slot(srv_endpoint *eps, size_t cap, cfdb_uid t)
{
    size_t i = ep_hash(t) & (cap - 1);
    while (eps[i].used && !cfdb_uid_eq(eps[i].token, t))
        i = (i + 1) & (cap - 1);
    return &eps[i];
}

static int ep_grow(srv *s)
{
    size_t ncap = s->eps_cap * 2;
    srv_endpoint *n = calloc(ncap, sizeof(srv_endpoint));
    if (!n)
        return CFDB_ERR_PLATFORM_ERROR; /* no memory */
    for (size_t i = 0; i < s->eps_cap; i++)
        if (s->eps[i].used == 1)
            *ep_slot(n, ncap, s->eps[i].token) = s->eps[i];
    free(s->eps);
    s->eps = n;
    s->eps_cap = ncap;
    return 0;
}

int srv_register(srv *s, cfdb_uid token, srv_role role, uint16_t index, int32_t owner, int32_t listener)
{
    int rc;
    if ((s->eps_count + 1) * 2 > s->eps_cap && (rc = ep_grow(s)))
        return rc;
    srv_endpoint *e = ep_slot(s->eps, s->eps_cap, token);
    if (!e->used)
        s->eps_count++;
    e->used = 1;
    e->token = token;
    e->role = (uint8_t)role;
    e->index = index;
    e->owner = owner;
    e->listener = listener;
    return 0;
}

int srv_register_interface(srv *s, cfdb_uid base, int nstreams, srv_role role, int32_t owner, int32_t listener)
{
    for (int i = 0; i < nstreams; i++) {
        int rc = srv_register(s, cfdb_adjusted_token(base, (uint32_t)i), role, (uint16_t)i, owner, listener);
        if (rc)
            return rc;
    }
    return 0;
}

/* Removal by rebuilding: rare (proxy generations, moves). */
void srv_unregister_interface(srv *s, cfdb_uid base, int nstreams)
{
    for (int i = 0; i < nstreams; i++) {
        cfdb_uid t = cfdb_adjusted_token(base, (uint32_t)i);
        srv_endpoint *e = ep_slot(s->eps, s->eps_cap, t);
        if (e->used) {
            e->used = 0;
            s->eps_count--;
            /* re-insert the rest of the cluster */
            size_t j = (size_t)(e - s->eps);
            for (size_t k = (j + 1) & (s->eps_cap - 1); s->eps[k].used; k = (k + 1) & (s->eps_cap - 1)) {
                srv_endpoint moved = s->eps[k];
                s->eps[k].used = 0;
                *ep_slot(s->eps, s->eps_cap, moved.token) = moved;
            }
        }
    }
}

const srv_endpoint *srv_lookup(const srv *s, cfdb_uid token)
{
    const srv_endpoint *e = ep_slot(s->eps, s->eps_cap, token);
    return e->used ? e : NULL;
}

static const char *message_name(const uint8_t *msg, uint32_t len)
{
    const fb_message *m = cfdb_message_by_file_id(fb_peek_file_id(msg, len));
    return m ? m->name : "unknown message";
}

static void not_found(srv *s, srv_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len, const char *why)
{
    char t[33];
    srv_log(s, "%s: %s (file id %u) to token %s: answering endpoint-not-found", why, message_name(msg, len),
            fb_peek_file_id(msg, len), cfdb_uid_format(token, t));
    s->n_unknown++;
    cfdb_endpoint_not_found nf = { token };
    if (c->open)
        cfdb_conn_send(c->conn, cfdb_well_known_token(CFDB_WLTOKEN_ENDPOINT_NOT_FOUND), &cfdb_msg_endpoint_not_found,
                       &nf, 0);
}

void srv_dispatch(srv *s, srv_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len)
{
    if (token.first == UINT64_MAX) {
        switch (token.second) {
        case CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER:
            if (coord_is_listener(s, c->listener))
                coord_get_leader(s, c, msg, len);
            return;
        case CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE:
            if (coord_is_listener(s, c->listener))
                coord_open_database(s, c, msg, len);
            return;
        case CFDB_WLTOKEN_CONFIGTXN_GETGENERATION: /* configuration database (wt-configdb) */
        case CFDB_WLTOKEN_CONFIGTXN_GET:
        case CFDB_WLTOKEN_CONFIGTXN_GETCLASSES:
        case CFDB_WLTOKEN_CONFIGTXN_GETKNOBS:
        case CFDB_WLTOKEN_CONFIGTXN_COMMIT:
            if (coord_is_listener(s, c->listener))
                config_node_dispatch(s, c, (uint32_t)token.second, msg, len);
            return;
        case CFDB_WLTOKEN_PROTOCOL_INFO:
            coord_protocol_info(s, c, msg, len);
            return;
        case CFDB_WLTOKEN_ENDPOINT_NOT_FOUND:
        case CFDB_WLTOKEN_UNAUTHORIZED_ENDPOINT:
            return; /* we send no requests; nothing to fail */
        default:
            srv_log(s, "ignoring %s to well-known token %llu", message_name(msg, len),
                    (unsigned long long)token.second);
            return;
        }
    }
    const srv_endpoint *ep = srv_lookup(s, token);
    if (!ep || ep->listener != c->listener) {
        if (token.first & CFDB_TOKEN_STREAM_FLAG)
            not_found(s, c, token, msg, len, "unknown endpoint");
        return; /* a reply addressed to us: we never asked */
    }
    switch (ep->role) {
    case ROLE_CLUSTER:
        if (ep->index == 2) {
            coord_status(s, c, msg, len);
            return;
        }
        if (ep->index == 4) { /* ClusterInterface.getClientWorkers */
            mgmt_client_workers(s, c, msg, len);
            return;
        }
        if (ep->index == 5) { /* ClusterInterface.forceRecovery */
            mgmt_force_recovery(s, c, msg, len);
            return;
        }
        break;
    case ROLE_GRV:
        if (ep->index == CFDB_GRV_GET_CONSISTENT_READ_VERSION) {
            grv_request(s, c, msg, len);
            return;
        }
        if (ep->index == CFDB_GRV_GET_HEALTH_METRICS) {
            grv_health_metrics(s, c, msg, len);
            return;
        }
        if (ep->index == CFDB_GRV_REFRESH_GLOBAL_CONFIG) {
            grv_global_config_refresh(s, c, msg, len);
            return;
        }
        break;
    case ROLE_COMMIT:
        switch (ep->index) {
        case CFDB_CP_COMMIT:
            cp_commit(s, c, msg, len);
            return;
        case CFDB_CP_GET_CONSISTENT_READ_VERSION:
            grv_request(s, c, msg, len);
            return;
        case CFDB_CP_GET_KEY_SERVERS_LOCATIONS:
            cp_key_server_locations(s, c, msg, len);
            return;
        case CFDB_CP_EXPIRE_IDEMPOTENCY_ID:
            return; /* one-way; we keep no idempotency records */
        case CFDB_CP_GET_TENANT_ID:
            cp_get_tenant_id(s, c, msg, len);
            return;
        case CFDB_CP_GET_DD_METRICS:
            cp_dd_metrics(s, c, msg, len);
            return;
        case CFDB_CP_PROXY_SNAP_REQ:
            mgmt_proxy_snap(s, c, msg, len);
            return;
        case CFDB_CP_EXCLUSION_SAFETY_CHECK_REQ: /* exclusions (issue 12) */
            cp_exclusion_safety_check(s, c, msg, len);
            return;
        default:
            break;
        }
        break;
    case ROLE_STORAGE:
        ss_request(s, c, ep, msg, len);
        return;
    case ROLE_WORKER:
        mgmt_reboot(s, c, msg, len);
        return;
    default:
        break;
    }
    srv_unsupported(s, c, token, msg, len);
}

void srv_unsupported(srv *s, srv_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len)
{
    not_found(s, c, token, msg, len, "unsupported request");
}

/* ---- batching: requests queued during one loop iteration, flushed together ---- */

static void batch_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    srv *s = arg;
    (void)loop;
    (void)t;
    cp_flush(s);
    grv_flush(s);
}

void srv_batch_init(srv *s)
{
    cfdb_timer_init(&s->batch_timer, batch_fire, s);
}

void srv_batch_schedule(srv *s)
{
    if (!cfdb_timer_is_armed(&s->batch_timer))
        cfdb_loop_timer_add_in(s->loop, &s->batch_timer, 0);
}

/* ---- storage interfaces as published to clients ---- */

void ss_fill_interface(srv *s, int i, cfdb_arena *a, cfdb_storage_server_interface *out)
{
    srv_storage *ss = &s->storage[i];
    memset(out, 0, sizeof(*out));
    out->uniqueID = ss->id;
    cfdb_locality_entry *loc = cfdb_arena_zalloc(a, 3 * sizeof(*loc));
    if (loc) {
        loc[0].first = CFDB_BYTES_LIT("machineid");
        loc[0].second.present = 1;
        loc[0].second.value = cfdb_bytes_make(ss->machine_id, 32);
        loc[1].first = CFDB_BYTES_LIT("processid");
        loc[1].second.present = 1;
        loc[1].second.value = cfdb_bytes_make(ss->process_id, 32);
        loc[2].first = CFDB_BYTES_LIT("zoneid");
        loc[2].second.present = 1;
        loc[2].second.value = cfdb_bytes_make(ss->machine_id, 32);
        out->locality._data.items = loc;
        out->locality._data.count = 3;
    }
    out->getValue.endpoint.addresses.address = srv_listener_address(s, ss->listener);
    out->getValue.endpoint.token = ss->base;
    out->acceptingRequests = true;
}
