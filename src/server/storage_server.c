/* Storage servers: reads over the shared MVCC store, restricted to the shards each
 * server owns; watches; metrics and split points.
 *
 * Tenants (fdbserver/storageserver.actor.cpp getValueQ, getKeyQ, getKeyValuesQ,
 * getMappedKeyValuesQ, watchValueSendReply): a request with TenantInfo.tenantId != -1
 * names keys relative to the tenant. At the read version the tenant must exist
 * (tenant_not_found, 2131) and, unless ReadOptions.lockAware, not be LOCKED
 * (tenant_locked, 2144); keys and selectors are then prefixed with the tenant's 8-byte
 * prefix, the shard searched is clamped to the tenant (TenantAPI::clampRangeToTenant) and
 * the prefix is removed from the keys answered. A watch is set only in a tenant that
 * exists and is not LOCKED; one whose tenant is removed later ends with tenant_removed
 * (2142). Metrics and split points in a tenant are checked lock aware and prefixed. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "mapper.h"
#include "storage_server.h"
#include "tenant_map.h"

typedef struct ss_ctx {
    srv *s;
    srv_conn *c;
    const srv_endpoint *ep;
    const uint8_t *msg;
    uint32_t len;
    bool no_wait; /* re-run after waiting: answer future_version instead of waiting again */
    cfdb_arena a;
} ss_ctx;

static void ss_run(srv *s, srv_conn *c, const srv_endpoint *ep, const uint8_t *msg, uint32_t len, bool no_wait);

/* ---- waiting for a version ---- */

static void retry_fire(srv *s, srv_parked *p, bool timed_out)
{
    (void)timed_out;
    const srv_endpoint *ep = srv_lookup(s, p->token);
    if (ep && p->c->open)
        ss_run(s, p->c, ep, p->msg, p->msg_len, true);
    srv_unpark(s, p);
}

/* The read version of a request: 0 to serve at *version (-2, the newest, made concrete), or
 * the error code to answer. *parked is set when the version is ahead of the store's and the
 * request was parked to run again (with no_wait) once it may be there: then nothing is to be
 * answered now and the result is 0. */
static int check_version(ss_ctx *x, int64_t *version, bool *parked)
{
    srv *s = x->s;
    *parked = false;
    if (s->faults.future_version_reads > 0) {
        s->faults.future_version_reads--;
        return CFDB_ERR_FUTURE_VERSION;
    }
    int64_t latest = cfdb_mvcc_latest_version(s->store);
    if (*version == -2)
        *version = latest > 0 ? latest : 1;
    if (*version <= 0)
        return CFDB_ERR_TRANSACTION_TOO_OLD;
    if (*version > latest) {
        int64_t clock = srv_clock_version(s);
        if (*version <= clock) {
            latest = srv_advance_version(s);
        } else {
            if (x->no_wait)
                return CFDB_ERR_FUTURE_VERSION;
            uint64_t wait_ns = (uint64_t)(*version - clock) * 1000u + 1000u;
            if (wait_ns > SRV_FUTURE_VERSION_DELAY_NS)
                wait_ns = SRV_FUTURE_VERSION_DELAY_NS;
            srv_parked *p = srv_park(s, x->c, (cfdb_uid){ 0, 0 }, PARK_RETRY, retry_fire, wait_ns);
            if (!p)
                return CFDB_ERR_OPERATION_FAILED;
            p->msg = malloc(x->len ? x->len : 1);
            if (!p->msg) {
                srv_unpark(s, p);
                return CFDB_ERR_OPERATION_FAILED;
            }
            memcpy(p->msg, x->msg, x->len);
            p->msg_len = x->len;
            p->token = x->ep->token;
            *parked = true;
            return 0;
        }
    }
    return cfdb_mvcc_check_read_version(s->store, *version);
}

static bool owns(srv *s, int ss, size_t shard)
{
    return s->shards.shards[shard].owner == ss;
}

static bool is_backward(const cfdb_key_selector *sel)
{
    return !sel->orEqual && sel->offset <= 0;
}

static size_t selector_shard(srv *s, const cfdb_key_selector *sel)
{
    return is_backward(sel) ? srv_shard_map_find_before(&s->shards, sel->key) : srv_shard_map_find(&s->shards, sel->key);
}

static cfdb_mvcc_selector to_mvcc(const cfdb_key_selector *k)
{
    cfdb_mvcc_selector m = { k->key, k->orEqual, k->offset };
    return m;
}

/* ---- tenants ---- */

static int tenant_enter(ss_ctx *x, int64_t v, const cfdb_tenant_info *ti, const cfdb_opt_read_options *o,
                        cfdb_bytes *prefix)
{
    return srv_tenant_check_read(x->s, v, ti->tenantId, o->present && o->value.lockAware, &x->a, prefix);
}

/* ---- the requests' common entry ---- */

/* Decodes the request into req (size bytes, zeroed first); false when it does not decode,
 * which is answered as a bad request named name. */
static bool ss_decode(ss_ctx *x, const fb_message *m, void *req, size_t size, const char *name)
{
    memset(req, 0, size);
    if (fb_decode(m, x->msg, x->len, req, NULL, &x->a)) {
        srv_bad_request(x->s, x->c, name);
        return false;
    }
    return true;
}

/* The read requests' prologue after decoding: the read version (check_version) and the
 * tenant entry at it (tenant_enter). False when the request was parked to wait for its
 * version (nothing to answer now). Else true with *rc 0 (serve at *v; keys relative to the
 * tenant get *prefix, empty outside a tenant) or the error code to answer. */
static bool ss_enter(ss_ctx *x, int64_t *v, const cfdb_tenant_info *ti, const cfdb_opt_read_options *o,
                     cfdb_bytes *prefix, int *rc)
{
    bool parked;
    *prefix = (cfdb_bytes){ 0, 0 };
    *rc = check_version(x, v, &parked);
    if (parked)
        return false;
    if (*rc == 0)
        *rc = tenant_enter(x, *v, ti, o, prefix);
    return true;
}

/* Both ends of a tenant's range made absolute: 0 or 4000 (out of memory). */
static int tenant_range(ss_ctx *x, cfdb_bytes prefix, cfdb_bytes *b, cfdb_bytes *e)
{
    int rc = srv_tenant_key(&x->a, prefix, b);
    return rc ? rc : srv_tenant_key(&x->a, prefix, e);
}

static bool has_prefix(cfdb_bytes k, cfdb_bytes prefix)
{
    return k.len >= prefix.len && memcmp(k.ptr, prefix.ptr, prefix.len) == 0;
}

static cfdb_bytes strip_prefix(cfdb_bytes k, cfdb_bytes prefix)
{
    if (!prefix.len || !has_prefix(k, prefix))
        return k;
    return cfdb_bytes_make(k.ptr + prefix.len, k.len - prefix.len);
}

/* The shard's bounds, clamped to the tenant's keys: a bound outside the prefix becomes the
 * prefix (begin) or the prefix + \xff\xff (end: allKeys.end with the prefix), as
 * TenantAPI::clampRangeToTenant does. */
static int search_range(ss_ctx *x, size_t shard, cfdb_bytes prefix, cfdb_bytes *b, cfdb_bytes *e)
{
    *b = srv_shard_begin(&x->s->shards, shard);
    *e = srv_shard_end(&x->s->shards, shard);
    if (!prefix.len)
        return 0;
    if (!has_prefix(*b, prefix))
        *b = prefix;
    if (has_prefix(*e, prefix))
        return 0;
    *e = CFDB_BYTES_LIT("\xff\xff");
    return srv_tenant_key(&x->a, prefix, e);
}

/* ---- GetValue ---- */

static void get_value(ss_ctx *x)
{
    srv *s = x->s;
    cfdb_get_value_request req;
    if (!ss_decode(x, &cfdb_msg_get_value_request, &req, sizeof req, "GetValueRequest"))
        return;
    cfdb_get_value_reply r;
    memset(&r, 0, sizeof r);
    r.penalty = 1.0;
    int64_t v = req.version;
    cfdb_bytes prefix;
    int rc;
    if (!ss_enter(x, &v, &req.tenantInfo, &req.options, &prefix, &rc))
        return;
    if (rc == 0)
        rc = srv_tenant_key(&x->a, prefix, &req.key);
    if (rc == 0 && !owns(s, x->ep->owner, srv_shard_map_find(&s->shards, req.key)))
        rc = CFDB_ERR_WRONG_SHARD_SERVER;
    if (rc == 0) {
        bool present = false;
        cfdb_bytes val;
        rc = cfdb_mvcc_get(s->store, v, req.key, &val, &present);
        if (rc == 0 && present) {
            r.value.present = 1;
            r.value.value = val;
        }
        s->n_reads++;
    }
    if (rc) {
        r.error.present = 1;
        r.error.value.code = (uint16_t)rc;
    }
    srv_reply(s, x->c, req.reply.token, &cfdb_msg_get_value_reply, &r, 0);
}

/* ---- GetKey ---- */

static void get_key(ss_ctx *x)
{
    srv *s = x->s;
    cfdb_get_key_request req;
    if (!ss_decode(x, &cfdb_msg_get_key_request, &req, sizeof req, "GetKeyRequest"))
        return;
    cfdb_get_key_reply r;
    memset(&r, 0, sizeof r);
    r.penalty = 1.0;
    int64_t v = req.version;
    cfdb_bytes prefix;
    int rc;
    if (!ss_enter(x, &v, &req.tenantInfo, &req.options, &prefix, &rc))
        return;
    if (rc == 0)
        rc = srv_tenant_key(&x->a, prefix, &req.sel.key);
    size_t shard = selector_shard(s, &req.sel);
    if (rc == 0 && !owns(s, x->ep->owner, shard))
        rc = CFDB_ERR_WRONG_SHARD_SERVER;
    if (rc == 0) {
        cfdb_mvcc_selector out;
        cfdb_bytes sb, se;
        rc = search_range(x, shard, prefix, &sb, &se);
        if (rc == 0)
            rc = cfdb_mvcc_get_key(s->store, v, sb, se, to_mvcc(&req.sel), &x->a, &out);
        if (rc == 0) {
            r.sel.key = strip_prefix(out.key, prefix);
            r.sel.orEqual = out.or_equal;
            r.sel.offset = out.offset;
        }
        s->n_reads++;
    }
    if (rc) {
        r.error.present = 1;
        r.error.value.code = (uint16_t)rc;
    }
    srv_reply(s, x->c, req.reply.token, &cfdb_msg_get_key_reply, &r, 0);
}

/* ---- GetKeyValues ---- */

/* A range read; b and e are prefixed when prefix is set, the rows are not stripped. */
static int read_range(ss_ctx *x, int64_t v, cfdb_bytes prefix, const cfdb_key_selector *b, const cfdb_key_selector *e,
                      int limit, int limit_bytes, cfdb_mvcc_range_result *out)
{
    srv *s = x->s;
    size_t shard = selector_shard(s, b);
    if (!owns(s, x->ep->owner, shard))
        return CFDB_ERR_WRONG_SHARD_SERVER;
    if (limit == 0)
        limit = 1;
    if (limit_bytes <= 0)
        limit_bytes = 80000;
    s->n_reads++;
    cfdb_bytes sb, se;
    int rc = search_range(x, shard, prefix, &sb, &se);
    if (rc)
        return rc;
    rc = cfdb_mvcc_get_range(s->store, v, sb, se, to_mvcc(b), to_mvcc(e), limit, limit_bytes, &x->a, out);
    if (rc == 0)
        s->n_read_rows += out->count;
    return rc;
}

static void get_key_values(ss_ctx *x)
{
    srv *s = x->s;
    cfdb_get_key_values_request req;
    if (!ss_decode(x, &cfdb_msg_get_key_values_request, &req, sizeof req, "GetKeyValuesRequest"))
        return;
    cfdb_get_key_values_reply r;
    memset(&r, 0, sizeof r);
    r.penalty = 1.0;
    int64_t v = req.version;
    cfdb_bytes prefix;
    int rc;
    if (!ss_enter(x, &v, &req.tenantInfo, &req.options, &prefix, &rc))
        return;
    if (rc == 0) {
        rc = tenant_range(x, prefix, &req.begin.key, &req.end.key);
        cfdb_mvcc_range_result out;
        memset(&out, 0, sizeof out);
        if (rc == 0)
            rc = read_range(x, v, prefix, &req.begin, &req.end, req.limit, req.limitBytes, &out);
        cfdb_key_value *kv = NULL;
        if (rc == 0 && !(kv = cfdb_arena_alloc(&x->a, (out.count ? out.count : 1) * sizeof(*kv))))
            rc = CFDB_ERR_UNKNOWN_ERROR;
        if (rc == 0) {
            for (size_t i = 0; i < out.count; i++) {
                kv[i].key = strip_prefix(out.rows[i].key, prefix);
                kv[i].value = out.rows[i].value;
            }
            r.data.items = kv;
            r.data.count = (uint32_t)out.count;
            r.more = out.more;
            r.version = v;
        }
    }
    if (rc) {
        r.error.present = 1;
        r.error.value.code = (uint16_t)rc;
    }
    srv_reply(s, x->c, req.reply.token, &cfdb_msg_get_key_values_reply, &r, 0);
}

/* ---- GetMappedKeyValues ---- */

static cfdb_bytes strinc(cfdb_arena *a, cfdb_bytes k)
{
    uint32_t n = k.len;
    while (n > 0 && k.ptr[n - 1] == 0xff)
        n--;
    if (n == 0)
        return k;
    uint8_t *p = cfdb_arena_alloc(a, n);
    memcpy(p, k.ptr, n);
    p[n - 1]++;
    return cfdb_bytes_make(p, n);
}

static void get_mapped_key_values(ss_ctx *x)
{
    srv *s = x->s;
    cfdb_get_mapped_key_values_request req;
    if (!ss_decode(x, &cfdb_msg_get_mapped_key_values_request, &req, sizeof req, "GetMappedKeyValuesRequest"))
        return;
    s->n_mapped_requests++;
    cfdb_get_mapped_key_values_reply r;
    memset(&r, 0, sizeof r);
    r.penalty = 1.0;
    int64_t v = req.version;
    cfdb_bytes prefix;
    int rc;
    if (!ss_enter(x, &v, &req.tenantInfo, &req.options, &prefix, &rc))
        return;
    if (rc == 0) {
        rc = tenant_range(x, prefix, &req.begin.key, &req.end.key);
        cfdb_mvcc_range_result out;
        memset(&out, 0, sizeof out);
        if (rc == 0)
            rc = read_range(x, v, prefix, &req.begin, &req.end, req.limit, req.limitBytes, &out);
        /* the mapper sees and answers keys relative to the tenant (quickGetValue and
         * quickGetKeyValues read in the original request's tenant) */
        for (size_t i = 0; rc == 0 && i < out.count; i++)
            out.rows[i].key = strip_prefix(out.rows[i].key, prefix);
        cfdb_mapped_key_value *rows = NULL;
        if (rc == 0)
            rows = cfdb_arena_zalloc(&x->a, (out.count ? out.count : 1) * sizeof(*rows));
        for (size_t i = 0; rc == 0 && i < out.count; i++) {
            cfdb_mapped_key_value *m = &rows[i];
            m->kv.key = out.rows[i].key;
            m->kv.value = out.rows[i].value;
            cfdb_bytes mapped;
            bool is_range = false;
            rc = srv_map_key(req.mapper, out.rows[i].key, out.rows[i].value, &x->a, &mapped, &is_range);
            if (rc)
                break;
            if (!is_range) {
                m->reqAndResult.tag = 1;
                m->reqAndResult.getValue.key = mapped;
                bool present = false;
                cfdb_bytes val;
                /* A key on another storage server: FoundationDB reads it through a transaction
                 * at the same version (QUICK_GET_VALUE_FALLBACK, on by default); here the one
                 * store has it. In a tenant the mapped key is relative (quickGetValue reads in
                 * the request's tenant). */
                cfdb_bytes abs_key = mapped;
                rc = srv_tenant_key(&x->a, prefix, &abs_key);
                if (rc == 0)
                    rc = cfdb_mvcc_get(s->store, v, abs_key, &val, &present);
                if (rc == 0 && present) {
                    m->reqAndResult.getValue.result.present = 1;
                    m->reqAndResult.getValue.result.value = val;
                }
            } else {
                m->reqAndResult.tag = 2;
                cfdb_get_range_req_and_result *g = &m->reqAndResult.getRange;
                g->begin.key = mapped;
                g->begin.orEqual = false;
                g->begin.offset = 1;
                g->end.key = strinc(&x->a, mapped);
                g->end.orEqual = false;
                g->end.offset = 1;
                /* Another storage server's keys are read as FoundationDB's
                 * QUICK_GET_KEY_VALUES_FALLBACK (on by default) reads them, at the same version;
                 * limits: its QUICK_GET_KEY_VALUES_LIMIT (2000 rows) and _LIMIT_BYTES (1e7).
                 * In a tenant the range is relative (quickGetKeyValues). */
                cfdb_mvcc_range_result sub;
                cfdb_bytes abs_b = g->begin.key, abs_e = g->end.key;
                rc = tenant_range(x, prefix, &abs_b, &abs_e);
                if (rc == 0)
                    rc = cfdb_mvcc_read_range(s->store, v, abs_b, abs_e, 2000, 10000000, &x->a, &sub);
                if (rc)
                    break;
                if (sub.more) {
                    rc = CFDB_ERR_QUICK_GET_KEY_VALUES_HAS_MORE;
                    break;
                }
                cfdb_key_value *kv = cfdb_arena_alloc(&x->a, (sub.count ? sub.count : 1) * sizeof(*kv));
                for (size_t k = 0; k < sub.count; k++) {
                    kv[k].key = strip_prefix(sub.rows[k].key, prefix);
                    kv[k].value = sub.rows[k].value;
                }
                g->result.data.items = kv;
                g->result.data.count = (uint32_t)sub.count;
            }
        }
        if (rc == 0) {
            r.data.items = rows;
            r.data.count = (uint32_t)out.count;
            r.more = out.more;
            r.version = v;
        }
    }
    if (rc) {
        memset(&r.data, 0, sizeof r.data);
        r.error.present = 1;
        r.error.value.code = (uint16_t)rc;
    }
    srv_reply(s, x->c, req.reply.token, &cfdb_msg_get_mapped_key_values_reply, &r, 0);
}

/* ---- watches ---- */

static bool watch_differs(srv *s, srv_parked *p, int64_t v)
{
    bool present = false;
    cfdb_bytes val;
    cfdb_mvcc_get(s->store, v, cfdb_bytes_make(p->key, p->key_len), &val, &present);
    if (present != p->value_present)
        return true;
    return present && !cfdb_bytes_eq(val, cfdb_bytes_make(p->value, p->value_len));
}

static void watch_timeout(srv *s, srv_parked *p, bool timed_out)
{
    (void)timed_out;
    srv_reply(s, p->c, p->reply, &cfdb_msg_watch_value_reply, NULL, CFDB_ERR_TIMED_OUT);
    srv_unpark(s, p);
}

static bool tenant_exists(srv *s, int64_t version, int64_t id)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    srv_tenant t;
    bool ok = srv_tenant_at(s, version, id, &a, &t) == 0;
    cfdb_arena_free(&a);
    return ok;
}

void ss_check_watches(srv *s)
{
    int64_t latest = cfdb_mvcc_latest_version(s->store);
    for (srv_parked *p = s->parked.next; p != &s->parked;) {
        srv_parked *n = p->next;
        if (p->kind == PARK_WATCH) {
            size_t shard = srv_shard_map_find(&s->shards, cfdb_bytes_make(p->key, p->key_len));
            if (p->tenant != -1 && !tenant_exists(s, latest, p->tenant)) {
                srv_reply(s, p->c, p->reply, &cfdb_msg_watch_value_reply, NULL, CFDB_ERR_TENANT_REMOVED);
                srv_unpark(s, p);
            } else if (!owns(s, p->owner, shard)) {
                srv_reply(s, p->c, p->reply, &cfdb_msg_watch_value_reply, NULL, CFDB_ERR_WRONG_SHARD_SERVER);
                srv_unpark(s, p);
            } else if (watch_differs(s, p, latest)) {
                cfdb_watch_value_reply r = { latest, false };
                srv_reply(s, p->c, p->reply, &cfdb_msg_watch_value_reply, &r, 0);
                srv_unpark(s, p);
            }
        }
        p = n;
    }
}

static void watch_value(ss_ctx *x)
{
    srv *s = x->s;
    cfdb_watch_value_request req;
    if (!ss_decode(x, &cfdb_msg_watch_value_request, &req, sizeof req, "WatchValueRequest"))
        return;
    int64_t v = req.version;
    bool parked;
    int rc = check_version(x, &v, &parked);
    if (parked)
        return;
    if (rc == CFDB_ERR_TRANSACTION_TOO_OLD)
        rc = 0; /* compare with the newest value: a change since then fires at once */
    if (rc == 0) {
        /* watchValueWaitForVersion: checkTenantEntry at the newest version, not lock aware
         * (tenant_not_found, tenant_locked), then the key prefixed */
        cfdb_bytes prefix;
        rc = srv_tenant_check_read(s, cfdb_mvcc_latest_version(s->store), req.tenantInfo.tenantId, false, &x->a,
                                   &prefix);
        if (rc == 0)
            rc = srv_tenant_key(&x->a, prefix, &req.key);
    }
    if (rc == 0 && !owns(s, x->ep->owner, srv_shard_map_find(&s->shards, req.key)))
        rc = CFDB_ERR_WRONG_SHARD_SERVER;
    if (rc) {
        srv_reply(s, x->c, req.reply.token, &cfdb_msg_watch_value_reply, NULL, (cfdb_reply_error)rc);
        return;
    }
    srv_parked *p = srv_park(s, x->c, req.reply.token, PARK_WATCH, watch_timeout, SRV_WATCH_TIMEOUT_NS);
    if (!p)
        return;
    p->owner = x->ep->owner;
    p->tenant = req.tenantInfo.tenantId;
    p->key = malloc(req.key.len ? req.key.len : 1);
    p->key_len = req.key.len;
    p->value_present = req.value.present;
    p->value = malloc(req.value.value.len ? req.value.value.len : 1);
    p->value_len = req.value.value.len;
    if (!p->key || !p->value) {
        srv_unpark(s, p);
        return;
    }
    if (req.key.len)
        memcpy(p->key, req.key.ptr, req.key.len);
    if (req.value.value.len)
        memcpy(p->value, req.value.value.ptr, req.value.value.len);
    p->version = v;
    int64_t latest = cfdb_mvcc_latest_version(s->store);
    if (watch_differs(s, p, latest)) {
        cfdb_watch_value_reply r = { latest, false };
        srv_reply(s, x->c, req.reply.token, &cfdb_msg_watch_value_reply, &r, 0);
        srv_unpark(s, p);
    }
}

/* ---- metrics ---- */

/* Bytes of keys and values in [b, e) at the newest version. */
int64_t ss_range_bytes(srv *s, cfdb_bytes b, cfdb_bytes e)
{
    int64_t total = 0;
    cfdb_mvcc_iter it;
    for (cfdb_mvcc_iter_seek_ge(&it, s->store, cfdb_mvcc_latest_version(s->store), b);
         cfdb_mvcc_iter_valid(&it) && cfdb_bytes_cmp(it.key, e) < 0; cfdb_mvcc_iter_next(&it))
        total += it.key.len + it.value.len;
    return total;
}

/* The metrics requests' common entry (waitMetricsTenantAware, getSplitPoints): the tenant
 * checked lock aware at the latest version, keys prefixed with its prefix (*prefix), and the
 * range inside one shard this server owns (else wrong_shard_server). */
static int metrics_range(ss_ctx *x, int64_t tenant_id, cfdb_key_range *keys, cfdb_bytes *prefix)
{
    srv *s = x->s;
    int rc = srv_tenant_check_read(s, cfdb_mvcc_latest_version(s->store), tenant_id, true, &x->a, prefix);
    if (rc == 0)
        rc = tenant_range(x, *prefix, &keys->begin, &keys->end);
    if (rc)
        return rc;
    size_t shard = srv_shard_map_find(&s->shards, keys->begin);
    if (!owns(s, x->ep->owner, shard) || cfdb_bytes_cmp(keys->end, srv_shard_end(&s->shards, shard)) > 0)
        return CFDB_ERR_WRONG_SHARD_SERVER;
    return 0;
}

static void wait_metrics(ss_ctx *x)
{
    srv *s = x->s;
    cfdb_wait_metrics_request req;
    if (!ss_decode(x, &cfdb_msg_wait_metrics_request, &req, sizeof req, "WaitMetricsRequest"))
        return;
    /* waitMetricsTenantAware */
    cfdb_bytes prefix;
    int trc = metrics_range(x, req.tenantInfo.tenantId, &req.keys, &prefix);
    if (trc) {
        srv_reply(s, x->c, req.reply.token, &cfdb_msg_storage_metrics_reply, NULL, (cfdb_reply_error)trc);
        return;
    }
    /* Answered at once with the current figures (no waiting for them to leave [min, max]). */
    cfdb_storage_metrics m;
    memset(&m, 0, sizeof m);
    m.bytes = ss_range_bytes(s, req.keys.begin, req.keys.end);
    srv_reply(s, x->c, req.reply.token, &cfdb_msg_storage_metrics_reply, &m, 0);
}

static void split_range(ss_ctx *x)
{
    srv *s = x->s;
    cfdb_split_range_request req;
    if (!ss_decode(x, &cfdb_msg_split_range_request, &req, sizeof req, "SplitRangeRequest"))
        return;
    /* getSplitPoints: the points are answered without the tenant's prefix */
    cfdb_bytes prefix;
    int trc = metrics_range(x, req.tenantInfo.tenantId, &req.keys, &prefix);
    if (trc) {
        srv_reply(s, x->c, req.reply.token, &cfdb_msg_split_range_reply, NULL, (cfdb_reply_error)trc);
        return;
    }
    int64_t chunk = req.chunkSize > 0 ? req.chunkSize : 1;
    size_t cap = 16, n = 0;
    cfdb_bytes *pts = cfdb_arena_alloc(&x->a, cap * sizeof(*pts));
    int64_t acc = 0;
    cfdb_mvcc_iter it;
    for (cfdb_mvcc_iter_seek_ge(&it, s->store, cfdb_mvcc_latest_version(s->store), req.keys.begin);
         pts && cfdb_mvcc_iter_valid(&it) && cfdb_bytes_cmp(it.key, req.keys.end) < 0; cfdb_mvcc_iter_next(&it)) {
        if (acc >= chunk && cfdb_bytes_cmp(it.key, req.keys.begin) > 0) {
            if (n == cap) {
                cfdb_bytes *np = cfdb_arena_alloc(&x->a, cap * 2 * sizeof(*np));
                if (!np)
                    break;
                memcpy(np, pts, n * sizeof(*np));
                pts = np;
                cap *= 2;
            }
            cfdb_arena_dup_bytes(&x->a, strip_prefix(it.key, prefix), &pts[n++]);
            acc = 0;
        }
        acc += it.key.len + it.value.len;
    }
    cfdb_split_range_reply r;
    r.splitPoints.items = pts;
    r.splitPoints.count = (uint32_t)n;
    srv_reply(s, x->c, req.reply.token, &cfdb_msg_split_range_reply, &r, 0);
}

/* ---- routing ---- */

static void ss_run(srv *s, srv_conn *c, const srv_endpoint *ep, const uint8_t *msg, uint32_t len, bool no_wait)
{
    ss_ctx x = { s, c, ep, msg, len, no_wait, { 0 } };
    cfdb_arena_init(&x.a);
    switch (ep->index) {
    case CFDB_SS_GET_VALUE:
        get_value(&x);
        break;
    case CFDB_SS_GET_KEY:
        get_key(&x);
        break;
    case CFDB_SS_GET_KEY_VALUES:
        get_key_values(&x);
        break;
    case CFDB_SS_WAIT_METRICS:
        wait_metrics(&x);
        break;
    case CFDB_SS_WATCH_VALUE:
        watch_value(&x);
        break;
    case CFDB_SS_GET_RANGE_SPLIT_POINTS:
        split_range(&x);
        break;
    case CFDB_SS_GET_MAPPED_KEY_VALUES:
        get_mapped_key_values(&x);
        break;
    default:
        srv_unsupported(s, c, ep->token, msg, len);
        break;
    }
    cfdb_arena_free(&x.a);
}

void ss_request(srv *s, srv_conn *c, const srv_endpoint *ep, const uint8_t *msg, uint32_t len)
{
    ss_run(s, c, ep, msg, len, false);
}
