/* GRV proxy: read versions, batched per loop iteration, global configuration, and health
 * metrics. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "global_config.h"
#include "grv_proxy.h"

static const cfdb_bytes metadata_version_key = { (const uint8_t *)"\xff/metadataVersion", 17 };

void grv_request(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_read_version_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_get_read_version_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "GetReadVersionRequest");
        cfdb_arena_free(&a);
        return;
    }
    if (s->ngrvs == s->grvs_cap) {
        size_t ncap = s->grvs_cap ? s->grvs_cap * 2 : 16;
        srv_pending_grv *n = realloc(s->grvs, ncap * sizeof(*n));
        if (!n) {
            srv_reply(s, c, req.reply.token, &cfdb_msg_get_read_version_reply, NULL, CFDB_ERR_OPERATION_FAILED);
            cfdb_arena_free(&a);
            return;
        }
        s->grvs = n;
        s->grvs_cap = ncap;
    }
    srv_conn_ref(c);
    s->grvs[s->ngrvs].c = c;
    s->grvs[s->ngrvs].reply = req.reply.token;
    s->ngrvs++;
    s->n_grvs += req.transactionCount;
    s->n_grv_requests++;
    cfdb_arena_free(&a);
    srv_batch_schedule(s);
}

void grv_flush(srv *s)
{
    if (s->ngrvs == 0)
        return;
    int64_t v = srv_advance_version(s);
    cfdb_get_read_version_reply r;
    memset(&r, 0, sizeof r);
    r.version = v;
    r.locked = s->db_locked; /* \xff/dbLocked: a client that is not lock aware fails with 1038 */
    cfdb_bytes mv;
    bool present = false;
    if (cfdb_mvcc_get(s->store, v, metadata_version_key, &mv, &present) == 0 && present) {
        r.metadataVersion.present = 1;
        r.metadataVersion.value = mv;
    }
    r.midShardSize = 0;
    r.ssVersionVectorDelta = cfdb_version_vector_empty();
    r.proxyId = s->grv_base;
    /* replies may be parked (delay fault); the list is ours until we clear it */
    size_t n = s->ngrvs;
    s->ngrvs = 0;
    for (size_t i = 0; i < n; i++) {
        srv_reply(s, s->grvs[i].c, s->grvs[i].reply, &cfdb_msg_get_read_version_reply, &r, 0);
        srv_conn_unref(s->grvs[i].c);
    }
}

void grv_global_config_refresh(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_global_config_refresh_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_global_config_refresh_request, msg, len, &req, NULL, &a) == 0) {
        cfdb_global_config_refresh_reply r;
        srv_gc_refresh_reply(s, &a, &r);
        srv_reply(s, c, req.reply.token, &cfdb_msg_global_config_refresh_reply, &r, 0);
    } else {
        srv_bad_request(s, c, "GlobalConfigRefreshRequest");
    }
    cfdb_arena_free(&a);
}

/* GrvProxyInterface.getHealthMetrics (GetHealthMetricsRequest): the health metrics a
 * one-process fdbserver's ratekeeper would hand its GRV proxy (fdbserver/Ratekeeper.actor.cpp
 * updateRate), with what this process has: every queue and durability lag is 0 (writes are
 * applied and logged at commit; nothing waits), disk and CPU usage are not measured (0), the
 * TPS limit is the 1000000 status json reports as qos.transactions_per_second_limit, never
 * batch-limited. Detailed requests get one storageStats entry per storage server and one
 * tLogQueue entry for the log (\xff/logs's id), in UID order as the std::map keeps them. */
static int uid_order(const void *x, const void *y)
{
    const cfdb_health_storage_stats *a = x, *b = y;
    if (a->id.first != b->id.first)
        return a->id.first < b->id.first ? -1 : 1;
    return a->id.second < b->id.second ? -1 : a->id.second > b->id.second;
}

void grv_health_metrics(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_health_metrics_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_get_health_metrics_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "GetHealthMetricsRequest");
        cfdb_arena_free(&a);
        return;
    }
    s->n_health_requests++;
    s->n_health_detailed += req.detailed != 0;
    cfdb_health_metrics m;
    memset(&m, 0, sizeof m);
    m.tpsLimit = 1000000;
    cfdb_health_log_queue log = { s->log_id, 0 };
    if (req.detailed) {
        m.storage = cfdb_arena_zalloc(&a, (size_t)(s->nstorage ? s->nstorage : 1) * sizeof *m.storage);
        if (m.storage) {
            for (int i = 0; i < s->nstorage; i++)
                m.storage[i].id = s->storage[i].id;
            m.nstorage = (size_t)s->nstorage;
            qsort(m.storage, m.nstorage, sizeof *m.storage, uid_order);
        }
        m.log = &log;
        m.nlog = 1;
    }
    cfdb_get_health_metrics_reply r;
    if (cfdb_health_metrics_encode(&m, &a, &r.serialized) == 0)
        srv_reply(s, c, req.reply.token, &cfdb_msg_get_health_metrics_reply, &r, 0);
    else
        srv_reply(s, c, req.reply.token, &cfdb_msg_get_health_metrics_reply, NULL, CFDB_ERR_UNKNOWN_ERROR);
    cfdb_arena_free(&a);
}
