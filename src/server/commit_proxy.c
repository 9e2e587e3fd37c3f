/* Commit proxy: key-server locations and commits (batched per loop iteration, resolved
 * with FoundationDB resolver semantics, versionstamps, durable before the reply). */
#include <stdlib.h>
#include <string.h>

#include "atomic_ops.h"
#include "error_codes.h"
#include "exclusion.h"
#include "commit_proxy.h"
#include "coord_change.h"
#include "db_config.h"
#include "global_config.h"
#include "storage_server.h"
#include "tenant_map.h"
#include "wal.h"

static const cfdb_bytes metadata_version_key = { (const uint8_t *)"\xff/metadataVersion", 17 };

/* A resolver status of our own: committed by the resolver, refused because the database
 * is locked and the transaction is not lock aware (answered not_committed, as
 * CommitBatchContext's reply loop does for !(committed && (!locked || isLockAware()))). */
#define RESOLVE_LOCKED 100

static bool starts_with(cfdb_bytes k, cfdb_bytes p)
{
    return k.len >= p.len && memcmp(k.ptr, p.ptr, p.len) == 0;
}

/* ---- key locations ---- */

/* ---- minTenantVersion ----
 * Tenant requests carry the version whose tenant metadata they must see
 * (CommitProxyServer.actor.cpp): latestVersion (-2) means the one after the last version
 * assigned, which fdbserver reaches by triggering a commit; here an empty version, as
 * srv_advance_version makes them. A later version is reached when the clock gets there
 * (versions follow it at 1,000,000 a second). GetTenantIdRequest waits at most
 * FUTURE_VERSION_DELAY (1 s) for a version beyond the next one, then answers
 * future_version (1009); GetKeyServerLocationsRequest answers at once for a tenant that
 * exists, and for one that does not waits until the version is reached (checkTenant),
 * then answers tenant_not_found. Waiting requests are parked with a copy of the message
 * and re-run once their version is reached. */
#define LATEST_VERSION (-2)
#define FUTURE_VERSION_DELAY_NS 1000000000ull

static int64_t tenant_min_version(srv *s, int64_t req_min)
{
    return req_min == LATEST_VERSION ? cfdb_mvcc_latest_version(s->store) + 1 : req_min;
}

/* Whether the proxy's version has reached minv, making the next version when the clock
 * allows it. */
static bool tenant_version_reached(srv *s, int64_t minv)
{
    int64_t latest = cfdb_mvcc_latest_version(s->store);
    if (latest >= minv)
        return true;
    int64_t clock = srv_clock_version(s);
    if (minv > latest + 1 && clock < minv)
        return false;
    int64_t v = clock > latest ? clock : latest + 1;
    return cfdb_mvcc_apply(s->store, v, NULL, 0) == 0;
}

/* ns until the clock reaches minv, at most a second (a later wait is re-armed) */
static uint64_t tenant_wait_ns(srv *s, int64_t minv)
{
    int64_t d = minv - srv_clock_version(s);
    if (d <= 0)
        return 1000;
    return (uint64_t)d * 1000u > FUTURE_VERSION_DELAY_NS ? FUTURE_VERSION_DELAY_NS : (uint64_t)d * 1000u + 1000;
}

static void key_server_locations(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len, const int64_t *minv_p);
static void tenant_id(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len, const int64_t *minv_p);

static void tenant_wait_fire(srv *s, srv_parked *p, bool timed_out)
{
    (void)timed_out;
    if (!p->c->open) {
        srv_unpark(s, p);
        return;
    }
    bool reached = tenant_version_reached(s, p->version);
    if (!reached && p->kind == PARK_TENANT_LOCATIONS) { /* no limit: wait on */
        cfdb_loop_timer_add_in(s->loop, &p->timer, tenant_wait_ns(s, p->version));
        return;
    }
    if (!reached) { /* FUTURE_VERSION_DELAY passed */
        srv_reply(s, p->c, p->reply, &cfdb_msg_get_tenant_id_reply, NULL, CFDB_ERR_FUTURE_VERSION);
    } else if (p->kind == PARK_TENANT_ID) {
        tenant_id(s, p->c, p->msg, p->msg_len, &p->version);
    } else {
        key_server_locations(s, p->c, p->msg, p->msg_len, &p->version);
    }
    srv_unpark(s, p);
}

/* Parks the request until minv; false when it cannot (out of memory: answered 4000). */
static void tenant_wait(srv *s, srv_conn *c, cfdb_uid reply, int kind, const uint8_t *msg, uint32_t len,
                        int64_t minv, const fb_message *reply_msg)
{
    srv_parked *p = srv_park(s, c, reply, kind, tenant_wait_fire, tenant_wait_ns(s, minv));
    uint8_t *copy = p ? malloc(len ? len : 1) : NULL;
    if (!copy) {
        if (p)
            srv_unpark(s, p);
        srv_reply(s, c, reply, reply_msg, NULL, CFDB_ERR_UNKNOWN_ERROR);
        return;
    }
    memcpy(copy, msg, len);
    p->msg = copy;
    p->msg_len = len;
    p->version = minv;
}

void cp_key_server_locations(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    key_server_locations(s, c, msg, len, NULL);
}

void cp_get_tenant_id(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    tenant_id(s, c, msg, len, NULL);
}

/* minv_p: the version already reached (a parked request re-run), or NULL */
static void key_server_locations(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len, const int64_t *minv_p)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_key_server_locations_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_get_key_server_locations_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "GetKeyServerLocationsRequest");
        goto out;
    }
    /* doKeyServerLocationRequest: a tenant's request names keys relative to the tenant;
     * they are prefixed, and each shard range answered is clamped to the tenant
     * (TenantAPI::clampRangeToTenant: a bound outside the prefix becomes the prefix, or
     * the prefix + \xff\xff (allKeys.end with the prefix) at the end) */
    cfdb_bytes prefix = { 0, 0 };
    if (req.tenant.tenantId != -1) {
        srv_tenant t;
        if (srv_tenant_at(s, cfdb_mvcc_latest_version(s->store), req.tenant.tenantId, &a, &t)) {
            int64_t minv = minv_p ? *minv_p : tenant_min_version(s, req.minTenantVersion);
            if (!minv_p && !tenant_version_reached(s, minv)) {
                tenant_wait(s, c, req.reply.token, PARK_TENANT_LOCATIONS, msg, len, minv,
                            &cfdb_msg_get_key_server_locations_reply);
                goto out;
            }
            /* the version reached: a tenant created meanwhile is found */
            if (!minv_p || srv_tenant_at(s, cfdb_mvcc_latest_version(s->store), req.tenant.tenantId, &a, &t)) {
                srv_reply(s, c, req.reply.token, &cfdb_msg_get_key_server_locations_reply, NULL,
                          CFDB_ERR_TENANT_NOT_FOUND);
                goto out;
            }
        }
        uint8_t *p = cfdb_arena_alloc(&a, CFDB_TENANT_PREFIX_SIZE + 2);
        if (!p)
            goto oom;
        cfdb_tenant_prefix(req.tenant.tenantId, p);
        p[CFDB_TENANT_PREFIX_SIZE] = 0xff;
        p[CFDB_TENANT_PREFIX_SIZE + 1] = 0xff;
        prefix = cfdb_bytes_make(p, CFDB_TENANT_PREFIX_SIZE);
        if (srv_tenant_key(&a, prefix, &req.begin) ||
            (req.end.present && srv_tenant_key(&a, prefix, &req.end.value)))
            goto oom;
    }
    const srv_shard_map *m = &s->shards;
    size_t *picked = cfdb_arena_alloc(&a, m->count * sizeof(size_t));
    size_t n = 0;
    int limit = req.limit > 0 ? req.limit : 1;
    if (!picked)
        goto oom;
    if (!req.end.present) {
        picked[n++] = req.reverse ? srv_shard_map_find_before(m, req.begin) : srv_shard_map_find(m, req.begin);
    } else if (!req.reverse) {
        for (size_t i = srv_shard_map_find(m, req.begin);
             i < m->count && cfdb_bytes_cmp(srv_shard_begin(m, i), req.end.value) < 0 && (int)n < limit; i++)
            picked[n++] = i;
        if (n == 0)
            picked[n++] = srv_shard_map_find(m, req.begin);
    } else {
        size_t i = srv_shard_map_find_before(m, req.end.value);
        for (;;) {
            if (cfdb_bytes_cmp(req.begin, srv_shard_end(m, i)) >= 0 || (int)n >= limit)
                break;
            picked[n++] = i;
            if (i == 0)
                break;
            i--;
        }
        if (n == 0)
            picked[n++] = srv_shard_map_find_before(m, req.end.value);
    }
    cfdb_get_key_server_locations_reply r;
    memset(&r, 0, sizeof r);
    cfdb_shard_location *res = cfdb_arena_zalloc(&a, n * sizeof(*res));
    cfdb_tag_mapping *tags = cfdb_arena_zalloc(&a, (size_t)s->nstorage * sizeof(*tags));
    bool *seen = cfdb_arena_zalloc(&a, (size_t)s->nstorage);
    if (!res || !tags || !seen)
        goto oom;
    uint32_t ntags = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = picked[k];
        int owner = m->shards[i].owner;
        res[k].first.begin = srv_shard_begin(m, i);
        res[k].first.end = srv_shard_end(m, i);
        if (prefix.len) {
            if (!starts_with(res[k].first.begin, prefix))
                res[k].first.begin = prefix;
            if (!starts_with(res[k].first.end, prefix))
                res[k].first.end = cfdb_bytes_make(prefix.ptr, prefix.len + 2); /* prefix + \xff\xff */
        }
        cfdb_storage_server_interface *ssi = cfdb_arena_zalloc(&a, sizeof(*ssi));
        if (!ssi)
            goto oom;
        ss_fill_interface(s, owner, &a, ssi);
        res[k].second.items = ssi;
        res[k].second.count = 1;
        if (!seen[owner]) {
            seen[owner] = true;
            tags[ntags].first = s->storage[owner].id;
            tags[ntags].second.id = (uint16_t)owner;
            tags[ntags].second.locality = 0;
            ntags++;
        }
    }
    r.results.items = res;
    r.results.count = (uint32_t)n;
    r.resultsTagMapping.items = tags;
    r.resultsTagMapping.count = ntags;
    srv_reply(s, c, req.reply.token, &cfdb_msg_get_key_server_locations_reply, &r, 0);
    goto out;
oom: /* answered, never left waiting */
    srv_reply(s, c, req.reply.token, &cfdb_msg_get_key_server_locations_reply, NULL, CFDB_ERR_UNKNOWN_ERROR);
out:
    cfdb_arena_free(&a);
}

static void tenant_id(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len, const int64_t *minv_p)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_tenant_id_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_get_tenant_id_request, msg, len, &req, NULL, &a) == 0) {
        int64_t minv = minv_p ? *minv_p : tenant_min_version(s, req.minTenantVersion);
        if (!minv_p && !tenant_version_reached(s, minv)) {
            tenant_wait(s, c, req.reply.token, PARK_TENANT_ID, msg, len, minv, &cfdb_msg_get_tenant_id_reply);
            cfdb_arena_free(&a);
            return;
        }
        /* doTenantIdRequest: the name looked up in the proxy's tenantNameIndex (here the
         * map at the newest version, which every committed write has reached) */
        srv_tenant t = { 0 };
        int rc = srv_tenant_by_name(s, req.tenantName, &a, &t);
        cfdb_get_tenant_id_reply r = { t.id };
        srv_reply(s, c, req.reply.token, &cfdb_msg_get_tenant_id_reply, rc ? NULL : &r, (cfdb_reply_error)rc);
    } else {
        srv_bad_request(s, c, "GetTenantIdRequest");
    }
    cfdb_arena_free(&a);
}

/* ---- commits ---- */

void cp_commit(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    if (s->ncommits == s->commits_cap) {
        size_t ncap = s->commits_cap ? s->commits_cap * 2 : 16;
        srv_pending_commit *n = realloc(s->commits, ncap * sizeof(*n));
        if (!n)
            return;
        s->commits = n;
        s->commits_cap = ncap;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return;
    memcpy(copy, msg, len);
    srv_conn_ref(c);
    s->commits[s->ncommits].c = c;
    s->commits[s->ncommits].msg = copy;
    s->commits[s->ncommits].msg_len = len;
    s->ncommits++;
    srv_batch_schedule(s);
}

static bool mutation_type_ok(uint8_t t)
{
    return t == CFDB_MUT_SET_VALUE || t == CFDB_MUT_CLEAR_RANGE || t == CFDB_MUT_NO_OP || cfdb_mutation_is_atomic(t);
}

enum { TX_BAD = 0, TX_RESOLVE, TX_FAIL_UNAPPLIED, TX_INVALID, TX_ERROR };

typedef struct tx_state {
    cfdb_commit_transaction_request req;
    int state;
    int error; /* TX_ERROR: answered with this */
    bool fail_after_apply;
    cfdb_mutation *muts; /* transformed */
    size_t nmuts;
    int32_t resolver_index;
    bool coord_change; /* sets \xff/coordinators to a string this server takes */
} tx_state;

int64_t srv_next_commit_version(srv *s)
{
    int64_t v = srv_clock_version(s);
    int64_t latest = cfdb_mvcc_latest_version(s->store);
    if (v <= latest)
        v = latest + 1;
    if (v <= s->last_commit_version)
        v = s->last_commit_version + 1;
    return v;
}

int cp_apply_system(srv *s, const cfdb_mutation *m, size_t n)
{
    int64_t v = srv_next_commit_version(s);
    int rc = cfdb_mvcc_apply(s->store, v, m, n);
    if (rc == 0)
        s->last_commit_version = v;
    return rc;
}

/* A tenant transaction's mutations and conflict ranges all lie in its prefix
 * (fdbserver/CommitProxyServer.actor.cpp verifyTenantPrefix): every mutation's key (and a
 * clear's end), both ends of every conflict range, \xff/metadataVersion excepted; a
 * versionstamped key's offset (its last 4 bytes, little-endian) must not point into the
 * prefix. Otherwise the commit is illegal_tenant_access (2138). */
static bool tenant_prefix_ok(const cfdb_commit_transaction_request *req)
{
    if (req->tenantInfo.tenantId == -1)
        return true;
    uint8_t pb[CFDB_TENANT_PREFIX_SIZE];
    cfdb_tenant_prefix(req->tenantInfo.tenantId, pb);
    cfdb_bytes p = cfdb_bytes_make(pb, sizeof pb);
    const cfdb_commit_transaction *ct = &req->transaction;
    for (uint32_t k = 0; k < ct->mutations.count; k++) {
        const cfdb_mutation *m = &ct->mutations.items[k];
        if (cfdb_bytes_eq(m->param1, metadata_version_key))
            continue;
        if (!starts_with(m->param1, p))
            return false;
        if (m->type == CFDB_MUT_CLEAR_RANGE && !starts_with(m->param2, p))
            return false;
        if (m->type == CFDB_MUT_SET_VERSIONSTAMPED_KEY) {
            if (m->param1.len < 4)
                return false;
            const uint8_t *o = m->param1.ptr + m->param1.len - 4;
            int32_t off = (int32_t)((uint32_t)o[0] | (uint32_t)o[1] << 8 | (uint32_t)o[2] << 16 | (uint32_t)o[3] << 24);
            if (off < (int32_t)p.len)
                return false;
        }
    }
    const cfdb_key_range_vec *ranges[2] = { &ct->read_conflict_ranges, &ct->write_conflict_ranges };
    for (int r = 0; r < 2; r++)
        for (uint32_t k = 0; k < ranges[r]->count; k++) {
            const cfdb_key_range *kr = &ranges[r]->items[k];
            if (!cfdb_bytes_eq(kr->begin, metadata_version_key) && (!starts_with(kr->begin, p) || !starts_with(kr->end, p)))
                return false;
        }
    return true;
}

/* Tenant mode required, a transaction without a tenant (RAW_ACCESS): each single-key write
 * to a normal key must land in an existing tenant (its first 8 bytes, as a big-endian id;
 * a versionstamp inside them or a shorter key names none), and no transaction may both
 * change \xff/tenant/map/ and write normal keys (CommitProxyServer.actor.cpp
 * validateAndProcessTenantAccess, validTenantAccess; TenantManagement.actor.cpp
 * extractTenantIdFromMutation, tenantMapChanging). Clears are let through whole (fdbserver
 * splits them on tenant boundaries and drops the parts outside tenants: not done here).
 * 0 or illegal_tenant_access. */
static int raw_access_check(srv *s, const cfdb_commit_transaction *ct, cfdb_arena *a)
{
    static const cfdb_bytes map_b = { (const uint8_t *)"\xff/tenant/map/", 13 };
    static const cfdb_bytes map_e = { (const uint8_t *)"\xff/tenant/map0", 13 };
    bool change_tenant = false, write_normal = false;
    for (uint32_t k = 0; k < ct->mutations.count; k++) {
        const cfdb_mutation *m = &ct->mutations.items[k];
        if (m->type == CFDB_MUT_CLEAR_RANGE) {
            if (cfdb_bytes_cmp(m->param1, map_e) < 0 && cfdb_bytes_cmp(map_b, m->param2) < 0)
                change_tenant = true;
            continue;
        }
        if (starts_with(m->param1, map_b))
            change_tenant = true;
        if (m->param1.len && m->param1.ptr[0] == 0xff)
            continue; /* a system key */
        write_normal = true;
        bool valid = m->param1.len >= CFDB_TENANT_PREFIX_SIZE;
        if (valid && m->type == CFDB_MUT_SET_VERSIONSTAMPED_KEY && m->param1.len >= 4) {
            const uint8_t *o = m->param1.ptr + m->param1.len - 4;
            int32_t off = (int32_t)((uint32_t)o[0] | (uint32_t)o[1] << 8 | (uint32_t)o[2] << 16 | (uint32_t)o[3] << 24);
            valid = off >= CFDB_TENANT_PREFIX_SIZE;
        }
        if (valid) {
            uint64_t id = 0;
            for (int i = 0; i < CFDB_TENANT_PREFIX_SIZE; i++)
                id = id << 8 | m->param1.ptr[i];
            srv_tenant t;
            valid = srv_tenant_at(s, cfdb_mvcc_latest_version(s->store), (int64_t)id, a, &t) == 0;
        }
        if (!valid)
            return CFDB_ERR_ILLEGAL_TENANT_ACCESS;
    }
    return change_tenant && write_normal ? CFDB_ERR_ILLEGAL_TENANT_ACCESS : 0;
}

/* A full disk, as FoundationDB 7.3 shows it to clients:
 * - the batch whose log write fails answers commit_unknown_result (1021). In fdbserver a
 *   TLog that cannot write fails (io_error); the commit proxy's push of that batch then
 *   fails and the client sees its commit end with broken_promise/request_maybe_delivered,
 *   which NativeAPI turns into commit_unknown_result. Here the partial record is cut off,
 *   so that batch is in fact not committed, but the client cannot know that either way.
 *   On 1021 a 7.3 client (NativeAPI tryCommit, and cfdb's txn_commit.c) first commits a
 *   self-conflicting dummy transaction, which waits like any other commit below, so the
 *   application sees 1021 only once the log can be written again, as with fdbserver.
 * - later commits are not failed: they wait in the queue until the log can be written
 *   again, as fdbserver's commits wait for a log system that can accept them (and the
 *   ratekeeper holds new transactions when a log server's free space is below
 *   MIN_AVAILABLE_SPACE). A client sees its commit take longer (and its own timeout, if it
 *   set one), not a stream of retryable errors; the log's probe unblocks it by itself.
 * Status json reports the condition (status.c). */
void cp_flush(srv *s)
{
    size_t n = s->ncommits;
    if (n == 0 || srv_wal_blocked(s))
        return;
    srv_pending_commit *pend = s->commits;
    s->commits = NULL;
    s->ncommits = s->commits_cap = 0;

    cfdb_arena a;
    cfdb_arena_init(&a);
    tx_state *tx = calloc(n, sizeof(*tx));
    cfdb_resolver_txn *rtx = calloc(n, sizeof(*rtx));
    cfdb_resolver_result *res = calloc(n, sizeof(*res));
    if (!tx || !rtx || !res) {
        srv_log(s, "out of memory in commit batch");
        goto out;
    }
    int64_t version = srv_next_commit_version(s);
    size_t nres = 0;
    char new_cs[sizeof s->forward]; /* a coordinators change in this batch */
    bool coord_moved = false;
    for (size_t i = 0; i < n; i++) {
        tx_state *t = &tx[i];
        if (fb_decode(&cfdb_msg_commit_transaction_request, pend[i].msg, pend[i].msg_len, &t->req, NULL, &a)) {
            srv_bad_request(s, pend[i].c, "CommitTransactionRequest");
            t->state = TX_BAD;
            continue;
        }
        const cfdb_commit_transaction *ct = &t->req.transaction;
        t->state = TX_RESOLVE;
        for (uint32_t k = 0; k < ct->mutations.count; k++)
            if (!mutation_type_ok(ct->mutations.items[k].type))
                t->state = TX_INVALID;
        if (t->state == TX_INVALID)
            continue;
        if (!tenant_prefix_ok(&t->req)) {
            t->state = TX_ERROR;
            t->error = CFDB_ERR_ILLEGAL_TENANT_ACCESS;
            continue;
        }
        int crc = coord_change_check(s, ct->mutations.items, ct->mutations.count, new_cs, sizeof new_cs);
        if (crc > 1) {
            t->state = TX_ERROR;
            t->error = crc;
            continue;
        }
        t->coord_change = crc == 1;
        if (s->faults.fail_commits > 0) {
            s->faults.fail_commits--;
            if (s->faults.fail_commits_applied)
                t->fail_after_apply = true;
            else {
                t->state = TX_FAIL_UNAPPLIED;
                continue;
            }
        }
        /* versionstamps: the batch index is this transaction's position */
        uint16_t batch_index = (uint16_t)i;
        t->nmuts = ct->mutations.count;
        t->muts = cfdb_arena_alloc(&a, (t->nmuts ? t->nmuts : 1) * sizeof(cfdb_mutation));
        size_t extra = 0;
        for (size_t k = 0; k < t->nmuts; k++) {
            t->muts[k] = ct->mutations.items[k];
            if (t->muts[k].type == CFDB_MUT_SET_VERSIONSTAMPED_KEY)
                extra++;
            cfdb_transform_versionstamp_mutation(&t->muts[k], version, batch_index, &a);
        }
        cfdb_conflict_range *rr = cfdb_arena_alloc(&a, (ct->read_conflict_ranges.count + 1) * sizeof(*rr));
        cfdb_conflict_range *wr =
            cfdb_arena_alloc(&a, (ct->write_conflict_ranges.count + extra + 1) * sizeof(*wr));
        for (uint32_t k = 0; k < ct->read_conflict_ranges.count; k++) {
            rr[k].begin = ct->read_conflict_ranges.items[k].begin;
            rr[k].end = ct->read_conflict_ranges.items[k].end;
        }
        size_t nw = 0;
        for (uint32_t k = 0; k < ct->write_conflict_ranges.count; k++) {
            wr[nw].begin = ct->write_conflict_ranges.items[k].begin;
            wr[nw].end = ct->write_conflict_ranges.items[k].end;
            nw++;
        }
        for (size_t k = 0; k < t->nmuts; k++) {
            if (ct->mutations.items[k].type != CFDB_MUT_SET_VERSIONSTAMPED_KEY)
                continue;
            cfdb_bytes key = t->muts[k].param1;
            uint8_t *end = cfdb_arena_alloc(&a, key.len + 1);
            memcpy(end, key.ptr, key.len);
            end[key.len] = 0;
            wr[nw].begin = key;
            wr[nw].end = cfdb_bytes_make(end, key.len + 1);
            nw++;
        }
        cfdb_resolver_txn *r = &rtx[nres];
        r->read_snapshot = ct->read_snapshot;
        r->read_ranges = rr;
        r->read_count = ct->read_conflict_ranges.count;
        r->write_ranges = wr;
        r->write_count = nw;
        r->report_conflicting_keys = ct->report_conflicting_keys;
        t->resolver_index = (int32_t)nres++;
    }
    if (nres && cfdb_resolver_resolve(s->resolver, version, rtx, nres, &a, res)) {
        srv_log(s, "resolver failed");
        for (size_t i = 0; i < nres; i++)
            res[i].status = CFDB_RESOLVE_CONFLICT;
    }

    /* the tenant each transaction names must exist and, unless the transaction is lock
     * aware, not be locked (validateAndProcessTenantAccess); a locked database takes only
     * lock-aware transactions (CommitBatchContext::locked) */
    bool locked = s->db_locked;
    for (size_t i = 0; i < n; i++) {
        tx_state *t = &tx[i];
        if (t->state != TX_RESOLVE)
            continue;
        bool lock_aware = (t->req.flags & CFDB_COMMIT_FLAG_IS_LOCK_AWARE) != 0;
        int64_t tid = t->req.tenantInfo.tenantId;
        if (tid == -1 && s->tenant_mode == 2) {
            int rrc = raw_access_check(s, &t->req.transaction, &a);
            if (rrc) {
                t->state = TX_ERROR;
                t->error = rrc;
                continue;
            }
        }
        if (tid != -1) {
            srv_tenant te;
            int trc = srv_tenant_at(s, cfdb_mvcc_latest_version(s->store), tid, &a, &te);
            if (trc == 0 && !lock_aware && te.lock_state != TENANT_UNLOCKED)
                trc = CFDB_ERR_TENANT_LOCKED;
            if (trc) {
                t->state = TX_ERROR;
                t->error = trc;
                continue;
            }
        }
        if (locked && !lock_aware && res[t->resolver_index].status == CFDB_RESOLVE_COMMITTED)
            res[t->resolver_index].status = RESOLVE_LOCKED;
    }

    /* a committed coordinators change ends this generation: fdbserver's commit proxy waits
     * on ChangeCoordinatorsRequest, which never answers, so every commit of the batch
     * reaches its client as commit_unknown_result (CommitProxyServer.actor.cpp) */
    for (size_t i = 0; i < n; i++)
        if (tx[i].state == TX_RESOLVE && tx[i].coord_change &&
            res[tx[i].resolver_index].status == CFDB_RESOLVE_COMMITTED) /* the batch's last one wins */
            coord_moved = coord_change_check(s, tx[i].req.transaction.mutations.items,
                                             tx[i].req.transaction.mutations.count, new_cs, sizeof new_cs) == 1;

    /* apply the committed transactions in batch order */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (tx[i].state == TX_RESOLVE && res[tx[i].resolver_index].status == CFDB_RESOLVE_COMMITTED)
            total += tx[i].nmuts;
    cfdb_mutation *all = cfdb_arena_alloc(&a, (total ? total : 1) * sizeof(cfdb_mutation));
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        if (tx[i].state == TX_RESOLVE && res[tx[i].resolver_index].status == CFDB_RESOLVE_COMMITTED) {
            memcpy(all + na, tx[i].muts, tx[i].nmuts * sizeof(cfdb_mutation));
            na += tx[i].nmuts;
        }
    bool durable_ok = true;
    if (s->wal && na > 0 && srv_wal_append(s, version, all, na)) {
        srv_log(s, "WAL append failed: %zu commit(s) of version %lld answered commit_unknown_result", n,
                (long long)version);
        durable_ok = false;
    }
    int arc = 0;
    if (durable_ok) {
        arc = cfdb_mvcc_apply(s->store, version, all, na);
        if (arc)
            srv_log(s, "apply at %lld failed: %d", (long long)version, arc);
        s->last_commit_version = version;
    }
    cfdb_bytes mv = { 0, 0 };
    bool mv_present = false;
    cfdb_mvcc_get(s->store, cfdb_mvcc_latest_version(s->store), metadata_version_key, &mv, &mv_present);

    for (size_t i = 0; i < n; i++) {
        tx_state *t = &tx[i];
        srv_conn *c = pend[i].c;
        cfdb_uid reply = t->req.reply.token;
        if (t->state == TX_BAD)
            continue;
        if (t->state == TX_INVALID) {
            srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, NULL, CFDB_ERR_INVALID_MUTATION_TYPE);
            continue;
        }
        if (t->state == TX_ERROR) {
            srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, NULL, (cfdb_reply_error)t->error);
            continue;
        }
        if (t->state == TX_FAIL_UNAPPLIED) {
            srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, NULL, CFDB_ERR_COMMIT_UNKNOWN_RESULT);
            continue;
        }
        cfdb_resolver_result *rr = &res[t->resolver_index];
        if (rr->status == CFDB_RESOLVE_TOO_OLD) {
            srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, NULL, CFDB_ERR_TRANSACTION_TOO_OLD);
            continue;
        }
        if (rr->status == RESOLVE_LOCKED) {
            /* committed by the resolver but not applied: the database is locked */
            srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, NULL, CFDB_ERR_NOT_COMMITTED);
            continue;
        }
        if (rr->status == CFDB_RESOLVE_CONFLICT) {
            s->n_conflicts++;
            if (t->req.transaction.report_conflicting_keys) {
                cfdb_commit_id id;
                memset(&id, 0, sizeof id);
                id.version = -1;
                id.txnBatchId = (uint16_t)i;
                id.conflictingKRIndices.present = 1;
                id.conflictingKRIndices.value.items = rr->conflicting;
                id.conflictingKRIndices.value.count = (uint32_t)rr->conflicting_count;
                srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, &id, 0);
            } else {
                srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, NULL, CFDB_ERR_NOT_COMMITTED);
            }
            continue;
        }
        if (!durable_ok || arc || t->fail_after_apply || coord_moved) {
            srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, NULL, CFDB_ERR_COMMIT_UNKNOWN_RESULT);
            continue;
        }
        s->n_commits++;
        s->n_writes += t->nmuts;
        cfdb_commit_id id;
        memset(&id, 0, sizeof id);
        id.version = version;
        id.txnBatchId = (uint16_t)i;
        if (mv_present) {
            id.metadataVersion.present = 1;
            id.metadataVersion.value = mv;
        }
        srv_reply(s, c, reply, &cfdb_msg_commit_id_reply, &id, 0);
    }
    if (na > 0 && srv_config_touched(all, na))
        srv_config_refresh(s);
    if (na > 0 && srv_gc_touched(all, na))
        srv_gc_refresh(s);
    if (coord_moved && durable_ok && !arc)
        coord_change_apply(s, new_cs);
    if (na > 0)
        ss_check_watches(s);
out:
    for (size_t i = 0; i < n; i++) {
        free(pend[i].msg);
        srv_conn_unref(pend[i].c);
    }
    free(pend);
    free(tx);
    free(rtx);
    free(res);
    cfdb_arena_free(&a);
}

/* CommitProxyInterface.getDDMetrics (GetDDMetricsRequest; the proxy asks the data distributor
 * in fdbserver, whose shard tracker answers from its shard map): one DDMetricsRef per shard
 * meeting keys, at most shardLimit, beginKey the shard's own begin, shardBytes the storage
 * servers' byte estimate of the shard (ss_range_bytes, as WaitMetrics answers),
 * shardBytesPerKSecond 0 (write bandwidth is not sampled here). */
void cp_dd_metrics(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_dd_metrics_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_get_dd_metrics_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "GetDDMetricsRequest");
        cfdb_arena_free(&a);
        return;
    }
    size_t first = srv_shard_map_find(&s->shards, req.keys.begin), n = 0;
    size_t cap = s->shards.count - first;
    if (req.shardLimit >= 0 && (size_t)req.shardLimit < cap)
        cap = (size_t)req.shardLimit;
    cfdb_dd_metrics_ref *list = cfdb_arena_zalloc(&a, (cap ? cap : 1) * sizeof *list);
    for (size_t i = first; list && i < s->shards.count && n < cap; i++) {
        cfdb_bytes b = srv_shard_begin(&s->shards, i), e = srv_shard_end(&s->shards, i);
        if (cfdb_bytes_cmp(b, req.keys.end) >= 0)
            break;
        list[n].beginKey = b;
        list[n].shardBytes = ss_range_bytes(s, b, e);
        n++;
    }
    cfdb_get_dd_metrics_reply r = { { list, (uint32_t)n } };
    if (list)
        srv_reply(s, c, req.reply.token, &cfdb_msg_get_dd_metrics_reply, &r, 0);
    else
        srv_reply(s, c, req.reply.token, &cfdb_msg_get_dd_metrics_reply, NULL, CFDB_ERR_UNKNOWN_ERROR);
    cfdb_arena_free(&a);
}

/* CommitProxyInterface.exclusionSafetyCheckReq (ExclusionSafetyCheckRequest, stream 8):
 * proxyCheckSafeExclusion asks the data distributor, whose ddExclusionSafetyCheck
 * (fdbserver/DataDistribution.actor.cpp 1628-1661) answers unsafe with at most one team,
 * else maps each exclusion to the storage servers at that address (primary or secondary) and
 * DDTeamCollection::exclusionSafetyCheck answers unsafe when a team would keep fewer than
 * DD_EXCLUDE_MIN_REPLICAS (1) servers. Here every storage server holds its shards alone (one
 * replica), so each is its own team: safe iff there are two or more storage servers and none
 * of them is at an excluded address. A request that does not decode is a bad request. */
void cp_exclusion_safety_check(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_exclusion_safety_check_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_exclusion_safety_check_request, msg, len, &req, NULL, &a)) {
        srv_bad_request(s, c, "ExclusionSafetyCheckRequest");
        cfdb_arena_free(&a);
        return;
    }
    cfdb_exclusion_safety_check_reply r = { s->nstorage > 1 };
    for (int i = 0; i < s->nstorage && r.safe; i++) {
        cfdb_network_address at = srv_listener_address(s, s->storage[i].listener);
        for (uint32_t e = 0; e < req.exclusions.count && r.safe; e++)
            if (cfdb_exclusion_matches(&req.exclusions.items[e], &at))
                r.safe = false; /* the team {i} would keep no server */
    }
    srv_reply(s, c, req.reply.token, &cfdb_msg_exclusion_safety_check_reply, &r, 0);
    cfdb_arena_free(&a);
}
