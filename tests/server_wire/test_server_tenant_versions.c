/* minTenantVersion on cfdb-server's commit proxy, as 7.3.77's CommitProxyServer.actor.cpp
 * answers it (doTenantIdRequest, doKeyServerLocationRequest / checkTenant):
 *   - latestVersion (-2): answered at once (the proxy makes the next version);
 *   - GetTenantIdRequest for a version ~0.3 s ahead: not answered before the server's
 *     version gets there, then answered, with read versions afterwards at least that;
 *     for a version 5 s ahead: future_version (1009) after FUTURE_VERSION_DELAY (1 s);
 *   - GetKeyServerLocationsRequest for an existing tenant: at once, whatever version it
 *     names; for a tenant that does not exist yet and a version ~0.3 s ahead: it waits, a
 *     tenant created meanwhile is then found (its shard answered); with latestVersion a
 *     missing tenant is tenant_not_found (2131) at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "endpoint.h"
#include "error_codes.h"
#include "tenant_fixture.h"

static cfdb_uid send_tenant_id(fx *f, const char *name, int64_t minv)
{
    cfdb_get_tenant_id_request req;
    memset(&req, 0, sizeof req);
    req.tenantName = cfdb_bytes_str(name);
    req.minTenantVersion = minv;
    return wc_send(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_GET_TENANT_ID), &cfdb_msg_get_tenant_id_request,
                   &req, &req.reply.token);
}

static cfdb_uid send_locations(fx *f, int64_t tenant, int64_t minv)
{
    cfdb_get_key_server_locations_request req;
    memset(&req, 0, sizeof req);
    req.begin = CFDB_BYTES_LIT("k1");
    req.limit = 1;
    req.tenant.tenantId = tenant;
    req.minTenantVersion = minv;
    return wc_send(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                   &cfdb_msg_get_key_server_locations_request, &req, &req.reply.token);
}

static void test_tenant_id_versions(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    put_tenant(f, 1, "alpha", 0);
    cfdb_get_tenant_id_reply r;
    cfdb_reply_error err = 0;

    cfdb_uid t = send_tenant_id(f, "alpha", -2);
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_tenant_id_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    assert_int_equal(r.tenantId, 1);

    int64_t ahead = wc_grv(&f->w) + 300000; /* versions follow the clock: ~0.3 s */
    t = send_tenant_id(f, "alpha", ahead);
    wc_pump(&f->w, 50 * MS);
    if (wc_grv(&f->w) < ahead)
        assert_false(wc_has(&f->w, t)); /* the version is not there yet */
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_tenant_id_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    assert_int_equal(r.tenantId, 1);
    assert_true(wc_grv(&f->w) >= ahead);

    t = send_tenant_id(f, "alpha", wc_grv(&f->w) + 5000000); /* 5 s ahead */
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_tenant_id_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, CFDB_ERR_FUTURE_VERSION);
    fx_stop(f);
}

static void test_locations_versions(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    put_tenant(f, 1, "alpha", 0);
    cfdb_get_key_server_locations_reply r;
    cfdb_reply_error err = 0;

    /* an existing tenant: at once, even for a version far ahead */
    cfdb_uid t = send_locations(f, 1, wc_grv(&f->w) + 60000000);
    wc_pump(&f->w, 20 * MS);
    assert_true(wc_has(&f->w, t));
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_key_server_locations_reply, &r, &err, &f->a, SEC), 0);
    assert_int_equal(err, 0);
    assert_int_equal(r.results.count, 1);

    /* a missing one at latestVersion: tenant_not_found at once */
    t = send_locations(f, 2, -2);
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_key_server_locations_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, CFDB_ERR_TENANT_NOT_FOUND);

    /* a missing one at a version ahead: it waits; created meanwhile, it is found */
    int64_t ahead = wc_grv(&f->w) + 300000;
    t = send_locations(f, 2, ahead);
    wc_pump(&f->w, 20 * MS);
    bool early = wc_has(&f->w, t);
    put_tenant(f, 2, "beta", 0);
    if (wc_grv(&f->w) < ahead)
        assert_false(early);
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_key_server_locations_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    assert_int_equal(r.results.count, 1);
    ASSERT_BYTES(r.results.items[0].first.begin, PB);

    /* and one never created: tenant_not_found once the version is reached */
    ahead = wc_grv(&f->w) + 200000;
    t = send_locations(f, 3, ahead);
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_key_server_locations_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, CFDB_ERR_TENANT_NOT_FOUND);
    assert_true(wc_grv(&f->w) >= ahead);
    fx_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tenant_id_versions),
        cmocka_unit_test(test_locations_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
