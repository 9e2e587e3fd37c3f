/* cfdb-server driven through the wire layer: an in-process server on a port-0 listener
 * and hand-built FoundationDB 7.3 requests over real loopback connections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "atomic_ops.h"
#include "endpoint.h"
#include "error_codes.h"
#include "protocol_version.h"
#include "server.h"
#include "wire_client.h"

#define SEC 1000000000ull
#define MS 1000000ull

typedef struct fx {
    cfdb_loop *loop;
    cfdb_server *srv;
    wc w;
    cfdb_arena a;
    char key[128];
} fx;

static fx *fx_start(const cfdb_server_config *cfg_in)
{
    fx *f = calloc(1, sizeof(*f));
    cfdb_server_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        cfdb_server_config_init(&cfg);
    cfg.port = 0;
    cfg.quiet = true;
    if (!cfg.seed)
        cfg.seed = 42;
    f->loop = cfdb_loop_create();
    assert_non_null(f->loop);
    f->srv = cfdb_server_create(f->loop, &cfg);
    assert_non_null(f->srv);
    cfdb_arena_init(&f->a);
    const char *cs = cfdb_server_connection_string(f->srv);
    snprintf(f->key, sizeof f->key, "%.*s", (int)(strchr(cs, '@') - cs), cs);
    assert_int_equal(wc_connect(&f->w, f->loop, cfdb_server_port(f->srv)), 0);
    cfdb_client_db_info info;
    assert_int_equal(wc_open_database(&f->w, f->key, &info, &f->a), 0);
    return f;
}

static void fx_stop(fx *f)
{
    wc_close(&f->w);
    cfdb_server_destroy(f->srv);
    cfdb_loop_run_once(f->loop, 0);
    cfdb_loop_destroy(f->loop);
    cfdb_arena_free(&f->a);
    free(f);
}

static int get(fx *f, const char *k, int64_t v, bool *present, cfdb_bytes *val)
{
    cfdb_uid ss;
    cfdb_bytes key = cfdb_bytes_str(k);
    int rc = wc_locate(&f->w, key, &ss, NULL, NULL, &f->a);
    if (rc)
        return rc;
    return wc_get(&f->w, ss, key, v, present, val, &f->a);
}

static int64_t set1(fx *f, const char *k, const char *v)
{
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    wc_txn_set(&t, &f->a, k, v);
    cfdb_commit_id id;
    int rc = wc_commit(&f->w, &t, &id, &f->a);
    assert_int_equal(rc, 0);
    return id.version;
}

static void control(fx *f, const char *cmd)
{
    char out[1024];
    cfdb_server_control(f->srv, cmd, out, sizeof out);
    assert_true(strncmp(out, "ok", 2) == 0);
}

/* ---- discovery ---- */

static void test_discovery(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    /* long poll: a request with the current id is not answered... */
    cfdb_open_database_coord_request req;
    memset(&req, 0, sizeof req);
    req.clusterKey = cfdb_bytes_str(f->key);
    req.knownClientInfoID = f->w.client_info_id;
    cfdb_uid tok = wc_send(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE),
                           &cfdb_msg_open_database_coord_request, &req, &req.reply.token);
    wc_pump(&f->w, 100 * MS);
    assert_false(wc_has(&f->w, tok));
    /* ...until the proxies change */
    control(f, "new-proxies");
    cfdb_client_db_info info;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_client_db_info_reply, &info, &err, &f->a, SEC), 0);
    assert_int_equal(err, 0);
    assert_false(cfdb_uid_eq(info.id, f->w.client_info_id));
    assert_int_equal(info.grvProxies.count, 1);
    assert_false(info.grvProxies.items[0].provisional);
    assert_int_equal(info.commitProxies.count, 1);
    /* old proxies are gone: endpoint not found */
    cfdb_uid old_grv = f->w.grv;
    cfdb_get_read_version_request g;
    memset(&g, 0, sizeof g);
    g.transactionCount = 1;
    wc_send(&f->w, old_grv, &cfdb_msg_get_read_version_request, &g, &g.reply.token);
    cfdb_endpoint_not_found nf;
    assert_int_equal(wc_wait(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_ENDPOINT_NOT_FOUND), &cfdb_msg_endpoint_not_found,
                             &nf, NULL, &f->a, SEC),
                     0);
    assert_true(cfdb_uid_eq(nf.token, old_grv));
    f->w.client_info_id = (cfdb_uid){ 0, 0 };
    assert_int_equal(wc_open_database(&f->w, f->key, &info, &f->a), 0);
    assert_true(wc_grv(&f->w) > 0);

    /* wrong cluster description */
    memset(&req, 0, sizeof req);
    req.clusterKey = CFDB_BYTES_LIT("other:abc");
    assert_int_equal(wc_call(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE),
                             &cfdb_msg_open_database_coord_request, &req, &req.reply.token,
                             &cfdb_msg_client_db_info_reply, &info, &err, &f->a),
                     0);
    assert_int_equal(err, CFDB_ERR_WRONG_CONNECTION_FILE);

    /* protocol info */
    cfdb_protocol_info_request pi;
    cfdb_protocol_info_reply pr;
    memset(&pi, 0, sizeof pi);
    assert_int_equal(wc_call(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_PROTOCOL_INFO), &cfdb_msg_protocol_info_request,
                             &pi, &pi.reply.token, &cfdb_msg_protocol_info_reply, &pr, &err, &f->a),
                     0);
    assert_true(pr.version == CFDB_PROTOCOL_VERSION);

    /* ping (answered by the connection layer) */
    cfdb_ping_request ping;
    char dummy[16];
    memset(&ping, 0, sizeof ping);
    assert_int_equal(wc_call(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET), &cfdb_msg_ping_request, &ping,
                             &ping.reply.token, &cfdb_msg_void_reply, dummy, &err, &f->a),
                     0);

    /* global config */
    cfdb_global_config_refresh_request gc;
    cfdb_global_config_refresh_reply gr;
    memset(&gc, 0, sizeof gc);
    gc.lastKnown = -1;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(f->w.grv, CFDB_GRV_REFRESH_GLOBAL_CONFIG),
                             &cfdb_msg_global_config_refresh_request, &gc, &gc.reply.token,
                             &cfdb_msg_global_config_refresh_reply, &gr, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(gr.result.data.count, 0);

    /* leader, then status from the cluster controller's databaseStatus stream */
    cfdb_get_leader_request gl;
    cfdb_get_leader_reply lr;
    memset(&gl, 0, sizeof gl);
    gl.key = cfdb_bytes_str(f->key);
    assert_int_equal(wc_call(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                             &cfdb_msg_get_leader_request, &gl, &gl.reply.token, &cfdb_msg_get_leader_reply, &lr, &err,
                             &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_true(lr.leader.present);
    cfdb_bytes si = lr.leader.value.serializedInfo;
    assert_true(si.len > 16);
    uint64_t pv;
    memcpy(&pv, si.ptr, 8);
    assert_true(pv == CFDB_PROTOCOL_VERSION);
    cfdb_cluster_controller_client_interface cc;
    memset(&cc, 0, sizeof cc);
    uint8_t *copy = cfdb_arena_dup(&f->a, si.ptr + 8, si.len - 8);
    assert_int_equal(fb_decode(&cfdb_msg_cluster_controller_client_interface, copy, si.len - 8, &cc, NULL, &f->a), 0);
    cfdb_status_request sr;
    cfdb_status_reply st;
    memset(&sr, 0, sizeof sr);
    assert_int_equal(wc_call(&f->w, cc.clientInterface.databaseStatus.endpoint.token, &cfdb_msg_status_request, &sr,
                             &sr.reply.token, &cfdb_msg_status_reply, &st, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    char *json = strndup((const char *)st.statusStr.ptr, st.statusStr.len);
    assert_non_null(strstr(json, "\"database_available\":true"));
    assert_non_null(strstr(json, "\"worst_queue_bytes_log_server\":0"));
    assert_non_null(strstr(json, "\"moving_data\""));
    assert_true(json[0] == '{' && json[strlen(json) - 1] == '}');
    free(json);
    /* a second GetLeader with the known leader is long-polled */
    memset(&gl, 0, sizeof gl);
    gl.key = cfdb_bytes_str(f->key);
    gl.knownLeader = lr.leader.value.changeID;
    tok = wc_send(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER), &cfdb_msg_get_leader_request,
                  &gl, &gl.reply.token);
    wc_pump(&f->w, 50 * MS);
    assert_false(wc_has(&f->w, tok));
    fx_stop(f);
}

/* unknown stream token -> endpoint not found; unsupported stream -> endpoint not found */
static void test_unknown_endpoint(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    cfdb_uid bogus = { 0x1234567800000001ull, 0x99 };
    cfdb_get_read_version_request g;
    memset(&g, 0, sizeof g);
    wc_send(&f->w, bogus, &cfdb_msg_get_read_version_request, &g, &g.reply.token);
    cfdb_endpoint_not_found nf;
    assert_int_equal(wc_wait(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_ENDPOINT_NOT_FOUND), &cfdb_msg_endpoint_not_found,
                             &nf, NULL, &f->a, SEC),
                     0);
    assert_true(cfdb_uid_eq(nf.token, bogus));
    /* storage stream 3 (getShardState) is not served */
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("a"), &ss, NULL, NULL, &f->a), 0);
    cfdb_uid t3 = cfdb_adjusted_token(ss, 3);
    wc_send(&f->w, t3, &cfdb_msg_get_read_version_request, &g, &g.reply.token);
    assert_int_equal(wc_wait(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_ENDPOINT_NOT_FOUND), &cfdb_msg_endpoint_not_found,
                             &nf, NULL, &f->a, SEC),
                     0);
    assert_true(cfdb_uid_eq(nf.token, t3));
    /* the server is still fine */
    assert_true(wc_grv(&f->w) > 0);
    fx_stop(f);
}

/* ---- MVCC ---- */

static void test_mvcc_visibility(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    int64_t v0 = wc_grv(&f->w);
    assert_true(v0 > 0);
    int64_t v1 = set1(f, "hello", "world");
    assert_true(v1 > v0);
    int64_t g = wc_grv(&f->w);
    assert_true(g >= v1); /* causal */
    bool present = true;
    cfdb_bytes val;
    assert_int_equal(get(f, "hello", v0, &present, &val), 0);
    assert_false(present);
    assert_int_equal(get(f, "hello", v1, &present, &val), 0);
    assert_true(present);
    assert_int_equal(val.len, 5);
    assert_memory_equal(val.ptr, "world", 5);
    int64_t v2 = set1(f, "hello", "again");
    assert_int_equal(get(f, "hello", v1, &present, &val), 0);
    assert_memory_equal(val.ptr, "world", 5);
    assert_int_equal(get(f, "hello", v2, &present, &val), 0);
    assert_memory_equal(val.ptr, "again", 5);
    /* latestVersion (-2) reads the newest */
    assert_int_equal(get(f, "hello", -2, &present, &val), 0);
    assert_memory_equal(val.ptr, "again", 5);
    /* versions: about 1e6 per second */
    int64_t a = wc_grv(&f->w);
    wc_pump(&f->w, 200 * MS);
    int64_t b = wc_grv(&f->w);
    assert_true(b - a > 100000 && b - a < 1000000);
    /* a read far in the future waits about a second, then future_version */
    uint64_t t0 = cfdb_monotonic_ns();
    assert_int_equal(get(f, "hello", b + 5000000, &present, &val), CFDB_ERR_FUTURE_VERSION);
    uint64_t took = cfdb_monotonic_ns() - t0;
    assert_true(took >= 900 * MS && took < 3 * SEC);
    /* a read slightly ahead is served once the version arrives */
    int64_t now = wc_grv(&f->w);
    assert_int_equal(get(f, "hello", now + 50000, &present, &val), 0);
    /* after a restart history is gone: old versions are too old */
    control(f, "restart");
    wc_close(&f->w);
    assert_int_equal(wc_connect(&f->w, f->loop, cfdb_server_port(f->srv)), 0);
    cfdb_client_db_info info;
    assert_int_equal(wc_open_database(&f->w, f->key, &info, &f->a), 0);
    assert_int_equal(get(f, "hello", v1, &present, &val), CFDB_ERR_TRANSACTION_TOO_OLD);
    assert_int_equal(get(f, "hello", wc_grv(&f->w), &present, &val), 0);
    assert_memory_equal(val.ptr, "again", 5);
    fx_stop(f);
}

static void test_range_reads(void **state)
{
    (void)state;
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.storage_servers = 1;
    fx *f = fx_start(&cfg);
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    char keys[20][8];
    for (int i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof keys[i], "r/%02d", i);
        wc_txn_set(&t, &f->a, keys[i], "vvvvvvvvvv");
    }
    cfdb_commit_id id;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("r/"), &ss, NULL, NULL, &f->a), 0);
    cfdb_key_selector b = { CFDB_BYTES_LIT("r/"), false, 1 }, e = { CFDB_BYTES_LIT("r0"), false, 1 };
    cfdb_get_key_values_reply r;
    assert_int_equal(wc_get_range(&f->w, ss, b, e, id.version, 1000, 80000, &r, &f->a), 0);
    assert_int_equal(r.data.count, 20);
    assert_false(r.more);
    assert_int_equal(r.version, id.version);
    /* row limit */
    assert_int_equal(wc_get_range(&f->w, ss, b, e, id.version, 5, 80000, &r, &f->a), 0);
    assert_int_equal(r.data.count, 5);
    assert_true(r.more);
    /* reverse */
    assert_int_equal(wc_get_range(&f->w, ss, b, e, id.version, -3, 80000, &r, &f->a), 0);
    assert_int_equal(r.data.count, 3);
    assert_memory_equal(r.data.items[0].key.ptr, "r/19", 4);
    assert_memory_equal(r.data.items[2].key.ptr, "r/17", 4);
    assert_true(r.more);
    /* byte limit: each row costs 32 + 4 + 10 = 46 */
    assert_int_equal(wc_get_range(&f->w, ss, b, e, id.version, 1000, 100, &r, &f->a), 0);
    assert_int_equal(r.data.count, 3);
    assert_true(r.more);
    /* get key: firstGreaterThan(r/05) = r/06; lastLessThan(r/00) = the key before */
    cfdb_get_key_request gk;
    cfdb_get_key_reply gr;
    cfdb_reply_error err = 0;
    memset(&gk, 0, sizeof gk);
    gk.sel = (cfdb_key_selector){ CFDB_BYTES_LIT("r/05"), true, 1 };
    gk.version = id.version;
    gk.tenantInfo.tenantId = -1;
    gk.ssLatestCommitVersions = cfdb_version_vector_empty();
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_KEY), &cfdb_msg_get_key_request, &gk,
                             &gk.reply.token, &cfdb_msg_get_key_reply, &gr, &err, &f->a),
                     0);
    assert_false(gr.error.present);
    assert_int_equal(gr.sel.key.len, 4);
    assert_memory_equal(gr.sel.key.ptr, "r/06", 4);
    assert_true(gr.sel.orEqual);
    assert_int_equal(gr.sel.offset, 0);
    gk.sel = (cfdb_key_selector){ CFDB_BYTES_LIT("r/10"), false, 3 };
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_KEY), &cfdb_msg_get_key_request, &gk,
                             &gk.reply.token, &cfdb_msg_get_key_reply, &gr, &err, &f->a),
                     0);
    assert_memory_equal(gr.sel.key.ptr, "r/12", 4);
    /* metrics and split points */
    cfdb_wait_metrics_request wm;
    cfdb_storage_metrics sm;
    memset(&wm, 0, sizeof wm);
    wm.keys = (cfdb_key_range){ CFDB_BYTES_LIT("r/"), CFDB_BYTES_LIT("r0") };
    wm.max.bytes = -1;
    wm.tenantInfo.tenantId = -1;
    wm.minVersion = -2;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_WAIT_METRICS), &cfdb_msg_wait_metrics_request, &wm,
                             &wm.reply.token, &cfdb_msg_storage_metrics_reply, &sm, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(sm.bytes, 20 * 14);
    cfdb_split_range_request sp;
    cfdb_split_range_reply spr;
    memset(&sp, 0, sizeof sp);
    sp.keys = wm.keys;
    sp.chunkSize = 14 * 5;
    sp.tenantInfo.tenantId = -1;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_RANGE_SPLIT_POINTS), &cfdb_msg_split_range_request,
                             &sp, &sp.reply.token, &cfdb_msg_split_range_reply, &spr, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(spr.splitPoints.count, 3);
    assert_memory_equal(spr.splitPoints.items[0].ptr, "r/05", 4);
    fx_stop(f);
}

/* ---- commits ---- */

static void test_conflicts(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    int64_t rv = wc_grv(&f->w);
    set1(f, "c/key", "1");
    /* a transaction that read c/key at rv conflicts */
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = rv;
    wc_txn_read(&t, &f->a, "c/other");
    wc_txn_read(&t, &f->a, "c/key");
    wc_txn_set(&t, &f->a, "c/x", "y");
    cfdb_commit_id id;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), CFDB_ERR_NOT_COMMITTED);
    t.report_conflicting_keys = true;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    assert_int_equal(id.version, -1);
    assert_true(id.conflictingKRIndices.present);
    assert_int_equal(id.conflictingKRIndices.value.count, 1);
    assert_int_equal(id.conflictingKRIndices.value.items[0], 1);
    bool present = true;
    cfdb_bytes val;
    assert_int_equal(get(f, "c/x", wc_grv(&f->w), &present, &val), 0);
    assert_false(present); /* conflicting writes are discarded */
    /* a fresh read version commits */
    t.read_snapshot = wc_grv(&f->w);
    t.report_conflicting_keys = false;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    assert_true(id.version > t.read_snapshot);
    /* two transactions in one batch: the second conflicts with the first */
    wc_txn a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.read_snapshot = b.read_snapshot = wc_grv(&f->w);
    wc_txn_read(&a, &f->a, "c/batch");
    wc_txn_set(&a, &f->a, "c/batch", "a");
    wc_txn_read(&b, &f->a, "c/batch");
    wc_txn_set(&b, &f->a, "c/batch", "b");
    cfdb_uid ta = wc_commit_send(&f->w, &a), tb = wc_commit_send(&f->w, &b);
    cfdb_reply_error ea = 0, eb = 0;
    cfdb_commit_id ia, ib;
    assert_int_equal(wc_wait(&f->w, ta, &cfdb_msg_commit_id_reply, &ia, &ea, &f->a, SEC), 0);
    assert_int_equal(wc_wait(&f->w, tb, &cfdb_msg_commit_id_reply, &ib, &eb, &f->a, SEC), 0);
    assert_int_equal(ea, 0);
    assert_int_equal(eb, CFDB_ERR_NOT_COMMITTED);
    fx_stop(f);
}

static void test_too_old(void **state)
{
    (void)state;
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.initial_version = 100000000;
    fx *f = fx_start(&cfg);
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w) - 6000000; /* outside the 5 s window */
    wc_txn_read(&t, &f->a, "o/k");
    wc_txn_set(&t, &f->a, "o/k", "v");
    cfdb_commit_id id;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), CFDB_ERR_TRANSACTION_TOO_OLD);
    /* without read ranges it is never too old */
    t.nreads = 0;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    fx_stop(f);
}

static cfdb_bytes le64(cfdb_arena *a, uint64_t v)
{
    uint8_t *p = cfdb_arena_alloc(a, 8);
    memcpy(p, &v, 8);
    return cfdb_bytes_make(p, 8);
}

static void test_atomic_and_versionstamps(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    cfdb_bytes ctr = CFDB_BYTES_LIT("a/counter");
    wc_txn_atomic(&t, &f->a, CFDB_MUT_ADD_VALUE, ctr, le64(&f->a, 5));
    wc_txn_atomic(&t, &f->a, CFDB_MUT_ADD_VALUE, ctr, le64(&f->a, 7));
    wc_txn_atomic(&t, &f->a, CFDB_MUT_BYTE_MAX, CFDB_BYTES_LIT("a/max"), CFDB_BYTES_LIT("m"));
    wc_txn_atomic(&t, &f->a, CFDB_MUT_BYTE_MAX, CFDB_BYTES_LIT("a/max"), CFDB_BYTES_LIT("b"));
    wc_txn_atomic(&t, &f->a, CFDB_MUT_APPEND_IF_FITS, CFDB_BYTES_LIT("a/app"), CFDB_BYTES_LIT("x"));
    wc_txn_atomic(&t, &f->a, CFDB_MUT_APPEND_IF_FITS, CFDB_BYTES_LIT("a/app"), CFDB_BYTES_LIT("y"));
    /* versionstamped key: "vs/" + 10-byte placeholder + offset 3 */
    uint8_t vk[3 + 10 + 4] = { 'v', 's', '/' };
    uint32_t off = 3;
    memcpy(vk + 13, &off, 4);
    wc_txn_atomic(&t, &f->a, CFDB_MUT_SET_VERSIONSTAMPED_KEY, cfdb_bytes_make(vk, sizeof vk), CFDB_BYTES_LIT("stamped"));
    uint8_t vv[2 + 10 + 4] = { 'v', '=' };
    off = 2;
    memcpy(vv + 12, &off, 4);
    wc_txn_atomic(&t, &f->a, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, CFDB_BYTES_LIT("a/vsv"), cfdb_bytes_make(vv, sizeof vv));
    cfdb_commit_id id;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    bool present;
    cfdb_bytes val;
    assert_int_equal(get(f, "a/counter", id.version, &present, &val), 0);
    assert_true(present);
    uint64_t n;
    memcpy(&n, val.ptr, 8);
    assert_int_equal(n, 12);
    assert_int_equal(get(f, "a/max", id.version, &present, &val), 0);
    assert_memory_equal(val.ptr, "m", 1);
    assert_int_equal(get(f, "a/app", id.version, &present, &val), 0);
    assert_int_equal(val.len, 2);
    assert_memory_equal(val.ptr, "xy", 2);
    uint8_t stamp[10];
    cfdb_place_versionstamp(stamp, id.version, id.txnBatchId);
    assert_int_equal(get(f, "a/vsv", id.version, &present, &val), 0);
    assert_int_equal(val.len, 12);
    assert_memory_equal(val.ptr + 2, stamp, 10);
    char sk[14];
    memcpy(sk, "vs/", 3);
    memcpy(sk + 3, stamp, 10);
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, cfdb_bytes_make(sk, 13), &ss, NULL, NULL, &f->a), 0);
    assert_int_equal(wc_get(&f->w, ss, cfdb_bytes_make(sk, 13), id.version, &present, &val, &f->a), 0);
    assert_true(present);
    assert_memory_equal(val.ptr, "stamped", 7);
    /* compare and clear */
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    wc_txn_atomic(&t, &f->a, CFDB_MUT_COMPARE_AND_CLEAR, CFDB_BYTES_LIT("a/max"), CFDB_BYTES_LIT("m"));
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    assert_int_equal(get(f, "a/max", id.version, &present, &val), 0);
    assert_false(present);
    /* metadata version: stamped value, reported by GRV and commit replies */
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    uint8_t mv[14] = { 0 };
    wc_txn_atomic(&t, &f->a, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, CFDB_BYTES_LIT("\xff/metadataVersion"),
                  cfdb_bytes_make(mv, 14));
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    assert_true(id.metadataVersion.present);
    cfdb_place_versionstamp(stamp, id.version, id.txnBatchId);
    assert_memory_equal(id.metadataVersion.value.ptr, stamp, 10);
    /* invalid mutation type */
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    wc_txn_atomic(&t, &f->a, CFDB_MUT_DEBUG_KEY, CFDB_BYTES_LIT("a/x"), CFDB_BYTES_LIT("y"));
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), CFDB_ERR_INVALID_MUTATION_TYPE);
    fx_stop(f);
}

/* ---- watches ---- */

static cfdb_uid watch_send(fx *f, cfdb_uid ss, const char *k, const char *v, int64_t version)
{
    cfdb_watch_value_request req;
    memset(&req, 0, sizeof req);
    req.key = cfdb_bytes_str(k);
    if (v) {
        req.value.present = 1;
        req.value.value = cfdb_bytes_str(v);
    }
    req.version = version;
    req.tenantInfo.tenantId = -1;
    return wc_send(&f->w, cfdb_adjusted_token(ss, CFDB_SS_WATCH_VALUE), &cfdb_msg_watch_value_request, &req,
                   &req.reply.token);
}

static void test_watches(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    int64_t v1 = set1(f, "w/key", "one");
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("w/key"), &ss, NULL, NULL, &f->a), 0);
    cfdb_uid tok = watch_send(f, ss, "w/key", "one", v1);
    wc_pump(&f->w, 50 * MS);
    assert_false(wc_has(&f->w, tok));
    set1(f, "w/other", "x"); /* unrelated change: no fire */
    wc_pump(&f->w, 20 * MS);
    assert_false(wc_has(&f->w, tok));
    int64_t v2 = set1(f, "w/key", "two");
    cfdb_watch_value_reply r;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, SEC), 0);
    assert_int_equal(err, 0);
    assert_int_equal(r.version, v2);
    /* a watch on a stale value fires at once */
    tok = watch_send(f, ss, "w/key", "one", v1);
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, SEC), 0);
    assert_int_equal(err, 0);
    /* watching an absent key, then a clear of a present one */
    tok = watch_send(f, ss, "w/absent", NULL, wc_grv(&f->w));
    wc_pump(&f->w, 20 * MS);
    assert_false(wc_has(&f->w, tok));
    set1(f, "w/absent", "now");
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, SEC), 0);
    fx_stop(f);
}

/* ---- shards ---- */

static void test_shards(void **state)
{
    (void)state;
    fx *f = fx_start(NULL); /* 3 storage servers: ["", i) [i, r) [r, \xff\xff) */
    cfdb_uid s1, s2, s3;
    cfdb_key_range r1, r2, r3;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("apple"), &s1, NULL, &r1, &f->a), 0);
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("mango"), &s2, NULL, &r2, &f->a), 0);
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("zebra"), &s3, NULL, &r3, &f->a), 0);
    assert_false(cfdb_uid_eq(s1, s2));
    assert_false(cfdb_uid_eq(s2, s3));
    assert_int_equal(r1.begin.len, 0);
    assert_true(cfdb_bytes_eq(r1.end, r2.begin));
    assert_true(cfdb_bytes_eq(r3.end, CFDB_BYTES_LIT("\xff\xff")));
    int64_t v = set1(f, "mango", "yellow");
    bool present;
    cfdb_bytes val;
    /* the wrong server says so */
    assert_int_equal(wc_get(&f->w, s1, CFDB_BYTES_LIT("mango"), v, &present, &val, &f->a), CFDB_ERR_WRONG_SHARD_SERVER);
    assert_int_equal(wc_get(&f->w, s2, CFDB_BYTES_LIT("mango"), v, &present, &val, &f->a), 0);
    assert_true(present);
    /* the metrics requests answer only for a range inside one shard the server owns
     * (waitMetricsTenantAware / getSplitPoints check the shard, else wrong_shard_server) */
    {
        cfdb_wait_metrics_request wm;
        cfdb_storage_metrics sm;
        cfdb_split_range_request sr;
        cfdb_split_range_reply srr;
        cfdb_reply_error merr = 0;
        memset(&wm, 0, sizeof wm);
        wm.tenantInfo.tenantId = -1;
        wm.keys = (cfdb_key_range){ CFDB_BYTES_LIT("m"), CFDB_BYTES_LIT("n") };
        assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(s2, CFDB_SS_WAIT_METRICS), &cfdb_msg_wait_metrics_request,
                                 &wm, &wm.reply.token, &cfdb_msg_storage_metrics_reply, &sm, &merr, &f->a),
                         0);
        assert_int_equal(merr, 0);
        assert_true(sm.bytes > 0); /* "mango" = "yellow" */
        merr = 0;
        assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(s1, CFDB_SS_WAIT_METRICS), &cfdb_msg_wait_metrics_request,
                                 &wm, &wm.reply.token, &cfdb_msg_storage_metrics_reply, &sm, &merr, &f->a),
                         0);
        assert_int_equal(merr, CFDB_ERR_WRONG_SHARD_SERVER);
        memset(&sr, 0, sizeof sr);
        sr.tenantInfo.tenantId = -1;
        sr.chunkSize = 1;
        sr.keys = (cfdb_key_range){ r2.begin, r2.end };
        merr = 0;
        assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(s2, CFDB_SS_GET_RANGE_SPLIT_POINTS),
                                 &cfdb_msg_split_range_request, &sr, &sr.reply.token, &cfdb_msg_split_range_reply, &srr,
                                 &merr, &f->a),
                         0);
        assert_int_equal(merr, 0);
        /* one past the shard's end crosses into the next shard */
        sr.keys.end = wc_key_after(&f->a, r2.end);
        merr = 0;
        assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(s2, CFDB_SS_GET_RANGE_SPLIT_POINTS),
                                 &cfdb_msg_split_range_request, &sr, &sr.reply.token, &cfdb_msg_split_range_reply, &srr,
                                 &merr, &f->a),
                         0);
        assert_int_equal(merr, CFDB_ERR_WRONG_SHARD_SERVER);
    }
    /* a range lookup lists every shard */
    cfdb_get_key_server_locations_request req;
    cfdb_get_key_server_locations_reply rep;
    cfdb_reply_error err = 0;
    memset(&req, 0, sizeof req);
    req.begin = CFDB_BYTES_LIT("");
    req.end.present = 1;
    req.end.value = CFDB_BYTES_LIT("\xff\xff");
    req.limit = 100;
    req.tenant.tenantId = -1;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
                             &cfdb_msg_get_key_server_locations_request, &req, &req.reply.token,
                             &cfdb_msg_get_key_server_locations_reply, &rep, &err, &f->a),
                     0);
    assert_int_equal(rep.results.count, 3);
    assert_int_equal(rep.resultsTagMapping.count, 3);
    /* \xff/keyServers/ describes the map */
    cfdb_uid sys;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("\xff/keyServers/"), &sys, NULL, NULL, &f->a), 0);
    cfdb_get_key_values_reply kv;
    assert_int_equal(wc_get_range(&f->w, sys, (cfdb_key_selector){ CFDB_BYTES_LIT("\xff/keyServers/"), false, 1 },
                                  (cfdb_key_selector){ CFDB_BYTES_LIT("\xff/keyServers0"), false, 1 }, wc_grv(&f->w),
                                  1000, 80000, &kv, &f->a),
                     0);
    assert_int_equal(kv.data.count, 4);
    assert_int_equal(kv.data.items[0].value.len, 32);
    /* the map starts at "" and its keys are the boundaries themselves, no stray byte */
    assert_true(cfdb_bytes_eq(kv.data.items[0].key, CFDB_BYTES_LIT("\xff/keyServers/")));
    assert_int_equal(kv.data.items[1].key.len, sizeof "\xff/keyServers/" - 1 + 1);
    /* move the mango shard to server 0: the old server refuses, the new one serves */
    control(f, "move mango 0");
    v = wc_grv(&f->w);
    assert_int_equal(wc_get(&f->w, s2, CFDB_BYTES_LIT("mango"), v, &present, &val, &f->a), CFDB_ERR_WRONG_SHARD_SERVER);
    cfdb_uid s2b;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("mango"), &s2b, NULL, NULL, &f->a), 0);
    assert_true(cfdb_uid_eq(s2b, s1));
    assert_int_equal(wc_get(&f->w, s2b, CFDB_BYTES_LIT("mango"), v, &present, &val, &f->a), 0);
    assert_true(present);
    /* a watch on a moved key answers wrong_shard_server */
    cfdb_uid tok = watch_send(f, s2b, "mango", "yellow", v);
    wc_pump(&f->w, 20 * MS);
    control(f, "move mango 2");
    cfdb_watch_value_reply wr;
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &wr, &err, &f->a, SEC), 0);
    assert_int_equal(err, CFDB_ERR_WRONG_SHARD_SERVER);
    /* split */
    control(f, "split m");
    cfdb_key_range rr;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("mango"), &s2b, NULL, &rr, &f->a), 0);
    assert_true(cfdb_bytes_eq(rr.begin, CFDB_BYTES_LIT("m")));
    fx_stop(f);
}

static void test_separate_ports(void **state)
{
    (void)state;
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.separate_ports = true;
    cfg.storage_servers = 2;
    fx *f = fx_start(&cfg);
    assert_true(f->w.grv_port != cfdb_server_port(f->srv));
    assert_true(f->w.commit_port != f->w.grv_port);
    /* each role on its own connection */
    wc g, c, s;
    assert_int_equal(wc_connect(&g, f->loop, f->w.grv_port), 0);
    g.grv = f->w.grv;
    int64_t rv = wc_grv(&g);
    assert_true(rv > 0);
    /* the GRV proxy is not reachable through the coordinator's port */
    cfdb_get_read_version_request gq;
    memset(&gq, 0, sizeof gq);
    wc_send(&f->w, f->w.grv, &cfdb_msg_get_read_version_request, &gq, &gq.reply.token);
    cfdb_endpoint_not_found nf;
    assert_int_equal(wc_wait(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_ENDPOINT_NOT_FOUND), &cfdb_msg_endpoint_not_found,
                             &nf, NULL, &f->a, SEC),
                     0);
    assert_int_equal(wc_connect(&c, f->loop, f->w.commit_port), 0);
    c.commit = f->w.commit;
    cfdb_uid ss;
    uint16_t port;
    assert_int_equal(wc_locate(&c, CFDB_BYTES_LIT("k"), &ss, &port, NULL, &f->a), 0);
    assert_int_equal(wc_connect(&s, f->loop, port), 0);
    bool present;
    cfdb_bytes val;
    assert_int_equal(wc_get(&s, ss, CFDB_BYTES_LIT("k"), rv, &present, &val, &f->a), 0);
    /* make the storage server unreachable: its connection drops, new ones are refused */
    char cmd[64];
    snprintf(cmd, sizeof cmd, "unreachable %u", 0);
    char out[256];
    cfdb_server_control(f->srv, "unreachable storage0", out, sizeof out);
    assert_true(strncmp(out, "ok", 2) == 0);
    cfdb_server_control(f->srv, "unreachable storage1", out, sizeof out);
    wc_pump(&s, 50 * MS);
    assert_true(s.closed);
    wc s2;
    assert_int_equal(wc_connect(&s2, f->loop, port), -1);
    wc_close(&s2);
    cfdb_server_control(f->srv, "unreachable storage0 off", out, sizeof out);
    cfdb_server_control(f->srv, "unreachable storage1 off", out, sizeof out);
    assert_true(strncmp(out, "ok", 2) == 0);
    wc s3;
    assert_int_equal(wc_connect(&s3, f->loop, port), 0);
    int64_t rv2 = wc_grv(&g);
    assert_true(rv2 >= rv);
    assert_int_equal(wc_get(&s3, ss, CFDB_BYTES_LIT("k"), rv2, &present, &val, &f->a), 0);
    wc_close(&s3);
    wc_close(&s);
    wc_close(&c);
    wc_close(&g);
    (void)cmd;
    fx_stop(f);
}

/* ---- faults ---- */

static void test_faults(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    bool present;
    cfdb_bytes val;
    /* commit_unknown_result without applying */
    control(f, "fail-commits 1 unapplied");
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    wc_txn_set(&t, &f->a, "f/a", "1");
    cfdb_commit_id id;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), CFDB_ERR_COMMIT_UNKNOWN_RESULT);
    assert_int_equal(get(f, "f/a", wc_grv(&f->w), &present, &val), 0);
    assert_false(present);
    /* ... and after applying */
    control(f, "fail-commits 1 applied");
    t.read_snapshot = wc_grv(&f->w);
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), CFDB_ERR_COMMIT_UNKNOWN_RESULT);
    assert_int_equal(get(f, "f/a", wc_grv(&f->w), &present, &val), 0);
    assert_true(present);
    /* next commit is normal */
    t.read_snapshot = wc_grv(&f->w);
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    /* future_version */
    control(f, "future-version 1");
    assert_int_equal(get(f, "f/a", wc_grv(&f->w), &present, &val), CFDB_ERR_FUTURE_VERSION);
    assert_int_equal(get(f, "f/a", wc_grv(&f->w), &present, &val), 0);
    /* delayed replies */
    control(f, "delay 150");
    uint64_t t0 = cfdb_monotonic_ns();
    assert_true(wc_grv(&f->w) > 0);
    assert_true(cfdb_monotonic_ns() - t0 >= 140 * MS);
    control(f, "delay 0");
    /* dropped connections */
    control(f, "drop");
    wc_pump(&f->w, 50 * MS);
    assert_true(f->w.closed);
    wc_close(&f->w);
    assert_int_equal(wc_connect(&f->w, f->loop, cfdb_server_port(f->srv)), 0);
    cfdb_client_db_info info;
    assert_int_equal(wc_open_database(&f->w, f->key, &info, &f->a), 0);
    assert_true(wc_grv(&f->w) > 0);
    fx_stop(f);
}

/* ---- bounded load: 4 connections, batched commits with conflicts ---- */

static void test_load(void **state)
{
    (void)state;
    fx *f = fx_start(NULL);
    enum { NC = 4, ROUNDS = 250 };
    wc cl[NC];
    cfdb_client_db_info info;
    for (int i = 0; i < NC; i++) {
        assert_int_equal(wc_connect(&cl[i], f->loop, cfdb_server_port(f->srv)), 0);
        assert_int_equal(wc_open_database(&cl[i], f->key, &info, &f->a), 0);
    }
    uint64_t rng = 99;
    int committed = 0, conflicted = 0;
    for (int r = 0; r < ROUNDS; r++) {
        cfdb_arena ra;
        cfdb_arena_init(&ra);
        cfdb_uid toks[NC];
        int64_t rv = wc_grv(&cl[r % NC]);
        assert_true(rv > 0);
        for (int i = 0; i < NC; i++) {
            wc_txn t;
            memset(&t, 0, sizeof t);
            t.read_snapshot = rv;
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            char *k = cfdb_arena_alloc(&ra, 16);
            snprintf(k, 16, "load/%02d", (int)((rng >> 33) % 20));
            wc_txn_read(&t, &ra, k);
            wc_txn_set(&t, &ra, k, "v");
            uint64_t one = 1;
            cfdb_bytes op;
            cfdb_arena_dup_bytes(&ra, cfdb_bytes_make(&one, 8), &op);
            wc_txn_atomic(&t, &ra, CFDB_MUT_ADD_VALUE, CFDB_BYTES_LIT("load/counter"), op);
            toks[i] = wc_commit_send(&cl[i], &t);
        }
        for (int i = 0; i < NC; i++) {
            cfdb_commit_id id;
            cfdb_reply_error err = 0;
            assert_int_equal(wc_wait(&cl[i], toks[i], &cfdb_msg_commit_id_reply, &id, &err, &ra, 5 * SEC), 0);
            if (err == 0)
                committed++;
            else {
                assert_int_equal(err, CFDB_ERR_NOT_COMMITTED);
                conflicted++;
            }
        }
        bool present;
        cfdb_bytes val;
        cfdb_uid ss;
        assert_int_equal(wc_locate(&cl[0], CFDB_BYTES_LIT("load/00"), &ss, NULL, NULL, &ra), 0);
        assert_int_equal(wc_get(&cl[0], ss, CFDB_BYTES_LIT("load/00"), wc_grv(&cl[1]), &present, &val, &ra), 0);
        cfdb_arena_free(&ra);
    }
    assert_int_equal(committed + conflicted, NC * ROUNDS);
    assert_true(committed > ROUNDS);
    assert_true(conflicted > 0);
    bool present;
    cfdb_bytes val;
    assert_int_equal(get(f, "load/counter", wc_grv(&f->w), &present, &val), 0);
    uint64_t n;
    memcpy(&n, val.ptr, 8);
    assert_int_equal(n, (uint64_t)committed); /* exactly the committed transactions' increments */
    for (int i = 0; i < NC; i++)
        wc_close(&cl[i]);
    fx_stop(f);
}

/* ---- mapped range reads ---- */

static void test_mapped_range(void **state)
{
    (void)state;
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.storage_servers = 1;
    fx *f = fx_start(&cfg);
    /* index ("idx", "odd", n) -> record ("rec", n) */
    wc_txn t;
    memset(&t, 0, sizeof t);
    t.read_snapshot = wc_grv(&f->w);
    for (int n = 1; n <= 5; n++) {
        char *ik = cfdb_arena_alloc(&f->a, 16), *rk = cfdb_arena_alloc(&f->a, 16), *rv = cfdb_arena_alloc(&f->a, 16);
        memcpy(ik, "\x02idx\x00\x02odd\x00\x15", 11);
        ik[11] = (char)n;
        memcpy(rk, "\x02rec\x00\x15", 6);
        rk[6] = (char)n;
        snprintf(rv, 16, "record-%d", n);
        if (n % 2) {
            t.muts[t.nmuts++] = (cfdb_mutation){ CFDB_MUT_SET_VALUE, cfdb_bytes_make(ik, 12), CFDB_BYTES_LIT("") };
        }
        t.muts[t.nmuts++] = (cfdb_mutation){ CFDB_MUT_SET_VALUE, cfdb_bytes_make(rk, 7), cfdb_bytes_str(rv) };
    }
    t.writes[t.nwrites++] = (cfdb_key_range){ CFDB_BYTES_LIT(""), CFDB_BYTES_LIT("\xff") };
    cfdb_commit_id id;
    assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("\x02idx"), &ss, NULL, NULL, &f->a), 0);
    cfdb_get_mapped_key_values_request req;
    cfdb_get_mapped_key_values_reply rep;
    cfdb_reply_error err = 0;
    memset(&req, 0, sizeof req);
    req.begin = (cfdb_key_selector){ cfdb_bytes_make("\x02idx\x00\x02odd\x00", 10), false, 1 };
    req.end = (cfdb_key_selector){ cfdb_bytes_make("\x02idx\x00\x02odd\x00\xff", 11), false, 1 };
    req.mapper = cfdb_bytes_make("\x02rec\x00\x02{K[2]}\x00\x02{...}\x00", 20);
    req.version = id.version;
    req.limit = 100;
    req.limitBytes = 80000;
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_MAPPED_KEY_VALUES),
                             &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token,
                             &cfdb_msg_get_mapped_key_values_reply, &rep, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_false(rep.error.present);
    assert_int_equal(rep.data.count, 3);
    for (int i = 0; i < 3; i++) {
        cfdb_mapped_key_value *m = &rep.data.items[i];
        assert_int_equal(m->reqAndResult.tag, 2);
        assert_int_equal(m->reqAndResult.getRange.result.data.count, 1);
        char want[16];
        snprintf(want, sizeof want, "record-%d", 2 * i + 1);
        assert_int_equal(m->reqAndResult.getRange.result.data.items[0].value.len, strlen(want));
        assert_memory_equal(m->reqAndResult.getRange.result.data.items[0].value.ptr, want, strlen(want));
    }
    /* point mapping, and a bad index */
    req.mapper = cfdb_bytes_make("\x02rec\x00\x02{K[2]}\x00", 13);
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_MAPPED_KEY_VALUES),
                             &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token,
                             &cfdb_msg_get_mapped_key_values_reply, &rep, &err, &f->a),
                     0);
    assert_int_equal(rep.data.count, 3);
    assert_int_equal(rep.data.items[1].reqAndResult.tag, 1);
    assert_true(rep.data.items[1].reqAndResult.getValue.result.present);
    assert_memory_equal(rep.data.items[1].reqAndResult.getValue.result.value.ptr, "record-3", 8);
    req.mapper = cfdb_bytes_make("\x02rec\x00\x02{K[9]}\x00", 13);
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_MAPPED_KEY_VALUES),
                             &cfdb_msg_get_mapped_key_values_request, &req, &req.reply.token,
                             &cfdb_msg_get_mapped_key_values_reply, &rep, &err, &f->a),
                     0);
    assert_true(rep.error.present);
    assert_int_equal(rep.error.value.code, CFDB_ERR_MAPPER_BAD_INDEX);
    fx_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discovery),
        cmocka_unit_test(test_unknown_endpoint),
        cmocka_unit_test(test_mvcc_visibility),
        cmocka_unit_test(test_range_reads),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_too_old),
        cmocka_unit_test(test_atomic_and_versionstamps),
        cmocka_unit_test(test_watches),
        cmocka_unit_test(test_shards),
        cmocka_unit_test(test_separate_ports),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_mapped_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
