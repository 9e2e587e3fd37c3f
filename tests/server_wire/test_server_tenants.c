/* Tenants on cfdb-server, at the wire level (issue 12, the dev server's part), against an
 * in-process server (fixture: tenant_fixture.h):
 *   - GetTenantIdRequest finds a tenant by name in \xff/tenant/map/ (tenant_not_found 2131);
 *   - storage reads in a tenant see only its keys, relative (GetValue, GetKey, GetKeyValues,
 *     GetMappedKeyValues, GetKeyServerLocations clamped to the tenant: TenantAPI::
 *     clampRangeToTenant), a tenant missing at the read version is 2131, a LOCKED tenant 2144
 *     unless the read is lock aware (fdbserver/storageserver.actor.cpp checkTenantEntry);
 *   - commits in a tenant: every key and conflict range inside the prefix and versionstamp
 *     offsets >= 8, else illegal_tenant_access (2138); a missing tenant 2131; a locked or
 *     read-only tenant 2144 unless lock aware (fdbserver/CommitProxyServer.actor.cpp
 *     verifyTenantPrefix, validateAndProcessTenantAccess); in tenant mode required, raw
 *     writes outside tenants are 2138;
 *   - a watch in a tenant that is removed ends with tenant_removed (2142). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "endpoint.h"
#include "error_codes.h"
#include "protocol_version.h"
#include "tenant_fixture.h"


static void test_tenant_id(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    int64_t id = 0;
    assert_int_equal(tenant_id(f, "alpha", &id), CFDB_ERR_TENANT_NOT_FOUND);
    put_tenant(f, 1, "alpha", 0);
    put_tenant(f, 7, "gamma", 0);
    assert_int_equal(tenant_id(f, "alpha", &id), 0);
    assert_int_equal(id, 1);
    assert_int_equal(tenant_id(f, "gamma", &id), 0);
    assert_int_equal(id, 7);
    assert_int_equal(tenant_id(f, "gamm", &id), CFDB_ERR_TENANT_NOT_FOUND);
    put_tenant(f, 1, NULL, 0);
    assert_int_equal(tenant_id(f, "alpha", &id), CFDB_ERR_TENANT_NOT_FOUND);
    fx_stop(f);
}

/* ---- reads ---- */

static void test_tenant_reads(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    int64_t before = wc_grv(&f->w);
    two_tenants(f);
    int64_t rv = wc_grv(&f->w);
    cfdb_get_value_reply gv;
    assert_int_equal(t_get(f, 1, CFDB_BYTES_LIT("k1"), rv, false, &gv), 0);
    assert_true(gv.value.present);
    ASSERT_BYTES(gv.value.value, "a1");
    assert_int_equal(t_get(f, 2, CFDB_BYTES_LIT("k1"), rv, false, &gv), 0);
    ASSERT_BYTES(gv.value.value, "b1");
    assert_int_equal(t_get(f, 2, CFDB_BYTES_LIT("k2"), rv, false, &gv), 0);
    assert_false(gv.value.present); /* alpha's k2 is not beta's */
    /* a tenant that does not exist (yet) at the read version */
    assert_int_equal(t_get(f, 9, CFDB_BYTES_LIT("k1"), rv, false, &gv), CFDB_ERR_TENANT_NOT_FOUND);
    assert_int_equal(t_get(f, 1, CFDB_BYTES_LIT("k1"), before, false, &gv), CFDB_ERR_TENANT_NOT_FOUND);

    /* alpha's first shard, as a client sends it (the end clamped to the shard's relative
     * end, "k2"): only alpha's keys, relative; tenant 0's "z" and anything before the
     * prefix in the same shard never show */
    cfdb_uid ss1 = owner_of(f, K(PA, ""));
    cfdb_get_key_values_reply kv;
    assert_int_equal(t_range(f, ss1, 1, (cfdb_key_selector){ CFDB_BYTES_LIT(""), false, 1 },
                             (cfdb_key_selector){ CFDB_BYTES_LIT("k2"), false, 1 }, &kv),
                     0);
    assert_int_equal(kv.data.count, 1);
    ASSERT_BYTES(kv.data.items[0].key, "k1");
    /* the second shard: k2, k3, and nothing of beta though its shard starts right after */
    cfdb_uid ss2 = owner_of(f, K(PA, "k2"));
    assert_int_equal(t_range(f, ss2, 1, (cfdb_key_selector){ CFDB_BYTES_LIT("k2"), false, 1 },
                             (cfdb_key_selector){ CFDB_BYTES_LIT("\xff"), false, 1 }, &kv),
                     0);
    assert_int_equal(kv.data.count, 2);
    ASSERT_BYTES(kv.data.items[0].key, "k2");
    ASSERT_BYTES(kv.data.items[1].key, "k3");
    assert_false(kv.more);
    /* beta from its shard: one key; the tenant-0 key "z" before it never shows */
    cfdb_uid ss3 = owner_of(f, K(PB, ""));
    assert_int_equal(t_range(f, ss3, 2, (cfdb_key_selector){ CFDB_BYTES_LIT(""), false, 1 },
                             (cfdb_key_selector){ CFDB_BYTES_LIT("\xff"), false, 1 }, &kv),
                     0);
    assert_int_equal(kv.data.count, 1);
    ASSERT_BYTES(kv.data.items[0].key, "k1");

    /* GetKey: lastLessOrEqual("zz") in alpha's second shard is k3, relative */
    cfdb_get_key_reply gk;
    assert_int_equal(t_get_key(f, ss2, 1, (cfdb_key_selector){ CFDB_BYTES_LIT("zz"), true, 0 }, &gk), 0);
    ASSERT_BYTES(gk.sel.key, "k3");
    assert_int_equal(gk.sel.offset, 0);
    /* firstGreaterThan("k3") runs off the tenant's end: the selector left over is relative
     * to the clamped range's end (the prefix + \xff\xff, allKeys.end with the prefix) */
    assert_int_equal(t_get_key(f, ss2, 1, (cfdb_key_selector){ CFDB_BYTES_LIT("k3"), true, 1 }, &gk), 0);
    ASSERT_BYTES(gk.sel.key, "\xff\xff");

    /* key locations in a tenant: relative key in, absolute ranges clamped to the tenant out */
    cfdb_get_key_server_locations_request lr;
    memset(&lr, 0, sizeof lr);
    lr.begin = CFDB_BYTES_LIT("k1");
    lr.limit = 100;
    lr.tenant.tenantId = 1;
    lr.minTenantVersion = -2;
    cfdb_get_key_server_locations_reply lrep;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                             &cfdb_msg_get_key_server_locations_request, &lr, &lr.reply.token,
                             &cfdb_msg_get_key_server_locations_reply, &lrep, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(lrep.results.count, 1);
    ASSERT_BYTES(lrep.results.items[0].first.begin, PA);     /* shard begins at "": clamped */
    ASSERT_BYTES(lrep.results.items[0].first.end, PA "k2"); /* inside the tenant: kept */
    lr.begin = CFDB_BYTES_LIT("k5");
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                             &cfdb_msg_get_key_server_locations_request, &lr, &lr.reply.token,
                             &cfdb_msg_get_key_server_locations_reply, &lrep, &err, &f->a),
                     0);
    ASSERT_BYTES(lrep.results.items[0].first.begin, PA "k2");
    ASSERT_BYTES(lrep.results.items[0].first.end, PA "\xff\xff"); /* beta's boundary: clamped */
    lr.tenant.tenantId = 9;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                             &cfdb_msg_get_key_server_locations_request, &lr, &lr.reply.token,
                             &cfdb_msg_get_key_server_locations_reply, &lrep, &err, &f->a),
                     0);
    assert_int_equal(err, CFDB_ERR_TENANT_NOT_FOUND);
    fx_stop(f);
}

static void test_tenant_locked(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    two_tenants(f);
    put_tenant(f, 1, "alpha", 2); /* LOCKED */
    put_tenant(f, 2, "beta", 1);  /* READ_ONLY */
    int64_t rv = wc_grv(&f->w);
    cfdb_get_value_reply gv;
    assert_int_equal(t_get(f, 1, CFDB_BYTES_LIT("k1"), rv, false, &gv), CFDB_ERR_TENANT_LOCKED);
    assert_int_equal(t_get(f, 1, CFDB_BYTES_LIT("k1"), rv, true, &gv), 0);
    ASSERT_BYTES(gv.value.value, "a1");
    assert_int_equal(t_get(f, 2, CFDB_BYTES_LIT("k1"), rv, false, &gv), 0); /* read-only reads */
    /* commits: locked and read-only both refuse a transaction that is not lock aware */
    t_commit t;
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PA, "n"), CFDB_BYTES_LIT("v"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_TENANT_LOCKED);
    t.flags = CFDB_COMMIT_FLAG_IS_LOCK_AWARE;
    assert_int_equal(tc_commit(f, &t), 0);
    tc_init(&t, 2, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PB, "n"), CFDB_BYTES_LIT("v"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_TENANT_LOCKED);
    put_tenant(f, 2, "beta", 0);
    assert_int_equal(tc_commit(f, &t), 0);
    fx_stop(f);
}

/* GetMappedKeyValues in a tenant: the index rows, the mapper's keys and the records read
 * are all relative to the tenant (quickGetKeyValues runs in the request's tenant) */
static void test_tenant_mapped_range(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    two_tenants(f);
    /* tuple("idx", "r1") -> record prefix tuple("rec", "r1") */
#define IDX "\x02idx\x00\x02r1\x00"
#define REC "\x02rec\x00\x02r1\x00\x02f\x00"
    put_raw(f, K(PA, IDX), "");
    put_raw(f, K(PA, REC), "v");
    put_raw(f, K(PB, REC), "beta's");
    put_raw(f, K("", REC), "raw");
    cfdb_get_mapped_key_values_request req;
    memset(&req, 0, sizeof req);
    req.begin = (cfdb_key_selector){ CFDB_BYTES_LIT("\x02idx\x00"), false, 1 };
    req.end = (cfdb_key_selector){ CFDB_BYTES_LIT("\x02idx\x01"), false, 1 };
    req.mapper = CFDB_BYTES_LIT("\x02rec\x00\x02{K[1]}\x00\x02{...}\x00");
    req.version = wc_grv(&f->w);
    req.limit = 10;
    req.limitBytes = 100000;
    req.tenantInfo.tenantId = 1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    cfdb_get_mapped_key_values_reply rep;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(owner_of(f, K(PA, IDX)), CFDB_SS_GET_MAPPED_KEY_VALUES),
                             &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token,
                             &cfdb_msg_get_mapped_key_values_reply, &rep, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_false(rep.error.present);
    assert_int_equal(rep.data.count, 1);
    ASSERT_BYTES(rep.data.items[0].kv.key, IDX);
    assert_int_equal(rep.data.items[0].reqAndResult.tag, 2);
    const cfdb_get_range_req_and_result *g = &rep.data.items[0].reqAndResult.getRange;
    ASSERT_BYTES(g->begin.key, "\x02rec\x00\x02r1\x00");
    assert_int_equal(g->result.data.count, 1);
    ASSERT_BYTES(g->result.data.items[0].key, REC);
    ASSERT_BYTES(g->result.data.items[0].value, "v");
#undef IDX
#undef REC
    fx_stop(f);
}

/* WaitMetrics and SplitRange in a tenant: the range is relative and prefixed by the server
 * (waitMetricsTenantAware, getSplitPoints with the prefix removed from the points) */
static void test_tenant_metrics(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    two_tenants(f);
    cfdb_wait_metrics_request wm;
    memset(&wm, 0, sizeof wm);
    wm.keys = (cfdb_key_range){ CFDB_BYTES_LIT(""), CFDB_BYTES_LIT("k2") };
    wm.tenantInfo.tenantId = 1;
    cfdb_storage_metrics m;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(owner_of(f, K(PA, "")), CFDB_SS_WAIT_METRICS),
                             &cfdb_msg_wait_metrics_request, &wm, &wm.reply.token, &cfdb_msg_storage_metrics_reply, &m,
                             &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(m.bytes, 10 + 2); /* alpha's k1 = a1, as stored (prefix included) */
    wm.tenantInfo.tenantId = 9;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(owner_of(f, K(PA, "")), CFDB_SS_WAIT_METRICS),
                             &cfdb_msg_wait_metrics_request, &wm, &wm.reply.token, &cfdb_msg_storage_metrics_reply, &m,
                             &err, &f->a),
                     0);
    assert_int_equal(err, CFDB_ERR_TENANT_NOT_FOUND);
    cfdb_split_range_request sr;
    memset(&sr, 0, sizeof sr);
    sr.keys = (cfdb_key_range){ CFDB_BYTES_LIT("k2"), CFDB_BYTES_LIT("\xff") };
    sr.chunkSize = 1;
    sr.tenantInfo.tenantId = 1;
    cfdb_split_range_reply rep;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(owner_of(f, K(PA, "k2")), CFDB_SS_GET_RANGE_SPLIT_POINTS),
                             &cfdb_msg_split_range_request, &sr, &sr.reply.token, &cfdb_msg_split_range_reply, &rep,
                             &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(rep.splitPoints.count, 1);
    ASSERT_BYTES(rep.splitPoints.items[0], "k3");
    fx_stop(f);
}

/* ---- commits ---- */

static void test_tenant_commit_checks(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    two_tenants(f);
    t_commit t;
    /* inside the prefix: commits, and the value is where a tenant read finds it */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PA, "x"), CFDB_BYTES_LIT("ax"));
    t.reads[t.nreads++] = (cfdb_key_range){ K(PA, "k1"), K(PA, "k1\x00") };
    assert_int_equal(tc_commit(f, &t), 0);
    cfdb_get_value_reply gv;
    assert_int_equal(t_get(f, 1, CFDB_BYTES_LIT("x"), wc_grv(&f->w), false, &gv), 0);
    ASSERT_BYTES(gv.value.value, "ax");
    /* \xff/metadataVersion is allowed from a tenant */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, CFDB_BYTES_LIT("\xff/metadataVersion"),
           CFDB_BYTES_LIT("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"));
    assert_int_equal(tc_commit(f, &t), 0);
    /* another tenant's key */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PB, "x"), CFDB_BYTES_LIT("no"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    /* a clear whose end leaves the prefix (its conflict range kept inside, so that only the
     * mutation's param2 is wrong) */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_CLEAR_RANGE, K(PA, "a"), K(PB, ""));
    t.writes[0].end = K(PA, "b");
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    /* a read conflict range outside */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PA, "y"), CFDB_BYTES_LIT("ay"));
    t.reads[t.nreads++] = (cfdb_key_range){ K(PB, "k1"), K(PB, "k1\x00") };
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    /* a write conflict range whose end leaves the prefix */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PA, "y"), CFDB_BYTES_LIT("ay"));
    t.writes[t.nwrites++] = (cfdb_key_range){ K(PA, "y"), K(PB, "") };
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    /* a versionstamped key whose offset (last 4 bytes, little-endian) points into the prefix */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VERSIONSTAMPED_KEY,
           K(PA, "vs\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00"), CFDB_BYTES_LIT("v"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    /* ... and one at offset 10 (after "vs"): commits */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VERSIONSTAMPED_KEY,
           K(PA, "vs\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00"), CFDB_BYTES_LIT("v"));
    assert_int_equal(tc_commit(f, &t), 0);
    cfdb_get_key_values_reply kv;
    assert_int_equal(t_range(f, owner_of(f, K(PA, "vs")), 1, (cfdb_key_selector){ CFDB_BYTES_LIT("vs"), false, 1 },
                             (cfdb_key_selector){ CFDB_BYTES_LIT("vt"), false, 1 }, &kv),
                     0);
    assert_int_equal(kv.data.count, 1);
    assert_int_equal(kv.data.items[0].key.len, 12);
    /* a tenant that does not exist */
    tc_init(&t, 9, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\x00\x00\x00\x00\x00\x00\x00\x09x"), CFDB_BYTES_LIT("v"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_TENANT_NOT_FOUND);
    /* none of the refused writes landed */
    bool present = true;
    cfdb_bytes v;
    assert_int_equal(wc_get(&f->w, owner_of(f, K(PB, "x")), K(PB, "x"), wc_grv(&f->w), &present, &v, &f->a), 0);
    assert_false(present);
    assert_int_equal(t_get(f, 1, CFDB_BYTES_LIT("y"), wc_grv(&f->w), false, &gv), 0);
    assert_false(gv.value.present);
    fx_stop(f);
}

/* Tenant mode required: a transaction without a tenant may write normal keys only inside
 * existing tenants, and not together with a tenant map change */
static void test_required_raw_access(void **state)
{
    (void)state;
    fx *f = fx_start(2);
    put_tenant(f, 1, "alpha", 0);
    t_commit t;
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PA, "raw"), CFDB_BYTES_LIT("ok"));
    assert_int_equal(tc_commit(f, &t), 0);
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PB, "raw"), CFDB_BYTES_LIT("no tenant 2"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("short"), CFDB_BYTES_LIT("x"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    /* system keys are fine */
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/anything"), CFDB_BYTES_LIT("x"));
    assert_int_equal(tc_commit(f, &t), 0);
    /* a tenant map change with a normal write */
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, map_key(&f->a, 2), entry_value(&f->a, 2, "beta", 0));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, K(PA, "raw2"), CFDB_BYTES_LIT("x"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_ILLEGAL_TENANT_ACCESS);
    /* optional mode lets the same write through */
    put_raw(f, CFDB_BYTES_LIT("\xff/conf/tenant_mode"), "1");
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("short"), CFDB_BYTES_LIT("x"));
    assert_int_equal(tc_commit(f, &t), 0);
    fx_stop(f);
}

/* ---- watches ---- */

static void test_watch_tenant_removed(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    two_tenants(f);
    cfdb_uid ss = owner_of(f, K(PA, "k1"));
    cfdb_watch_value_request req;
    memset(&req, 0, sizeof req);
    req.key = CFDB_BYTES_LIT("k1");
    req.value.present = 1;
    req.value.value = CFDB_BYTES_LIT("a1");
    req.version = wc_grv(&f->w);
    req.tenantInfo.tenantId = 1;
    cfdb_uid tok = wc_send(&f->w, cfdb_adjusted_token(ss, CFDB_SS_WATCH_VALUE), &cfdb_msg_watch_value_request, &req,
                           &req.reply.token);
    wc_pump(&f->w, 20 * MS);
    assert_false(wc_has(&f->w, tok)); /* same value: the watch waits */
    /* beta's k1 changing does not fire alpha's watch */
    put_raw(f, K(PB, "k1"), "b2");
    wc_pump(&f->w, 20 * MS);
    assert_false(wc_has(&f->w, tok));
    put_tenant(f, 1, NULL, 0);
    cfdb_watch_value_reply r;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, CFDB_ERR_TENANT_REMOVED);
    /* a watch set in a tenant that is not there: checkTenantEntry's tenant_not_found */
    req.version = wc_grv(&f->w);
    tok = wc_send(&f->w, cfdb_adjusted_token(ss, CFDB_SS_WATCH_VALUE), &cfdb_msg_watch_value_request, &req,
                  &req.reply.token);
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, CFDB_ERR_TENANT_NOT_FOUND);
    /* ... or that is LOCKED: tenant_locked (a watch is never lock aware) */
    put_tenant(f, 2, "beta", 2);
    req.tenantInfo.tenantId = 2;
    req.version = wc_grv(&f->w);
    tok = wc_send(&f->w, cfdb_adjusted_token(owner_of(f, K(PB, "k1")), CFDB_SS_WATCH_VALUE),
                  &cfdb_msg_watch_value_request, &req, &req.reply.token);
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, CFDB_ERR_TENANT_LOCKED);
    put_tenant(f, 2, "beta", 0);
    /* a watch in beta fires on beta's key, relative */
    req.tenantInfo.tenantId = 2;
    req.value.value = CFDB_BYTES_LIT("b2");
    req.version = wc_grv(&f->w);
    tok = wc_send(&f->w, cfdb_adjusted_token(owner_of(f, K(PB, "k1")), CFDB_SS_WATCH_VALUE),
                  &cfdb_msg_watch_value_request, &req, &req.reply.token);
    wc_pump(&f->w, 20 * MS);
    assert_false(wc_has(&f->w, tok));
    put_raw(f, K(PB, "k1"), "b3");
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    fx_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tenant_id),           cmocka_unit_test(test_tenant_reads),
        cmocka_unit_test(test_tenant_locked),       cmocka_unit_test(test_tenant_mapped_range),
        cmocka_unit_test(test_tenant_commit_checks), cmocka_unit_test(test_required_raw_access),
        cmocka_unit_test(test_watch_tenant_removed), cmocka_unit_test(test_tenant_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
