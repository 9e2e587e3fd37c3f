/* Server behaviours FoundationDB's own client tests rely on (issue 9), at the wire level
 * against an in-process cfdb-server:
 *   - a read at a version older than anything the storage servers keep (version 1) is
 *     transaction_too_old (1007), for get, getKey and getRange;
 *   - \xff/coordinators holds the connection string (fdbclient/SystemData.cpp
 *     coordinatorsKey; value ClusterConnectionString::toString());
 *   - ForceRecoveryRequest on ClusterInterface.forceRecovery is answered (Void: a healthy
 *     database needs no recovery), ProxySnapRequest on the commit proxy's proxySnapReq is
 *     answered snap_path_not_whitelisted (2505), as a default fdbserver does;
 *   - no request is met with silence: to every stream index of every interface the
 *     server publishes, a request gets a reply, an error, an EndpointNotFound (FlowTransport
 *     WLTOKEN_ENDPOINT_NOT_FOUND carrying the token) or, for a message that does not decode
 *     as what the endpoint takes, a closed connection; a token nobody registered gets
 *     EndpointNotFound; a well-known token nobody serves is ignored, as FlowTransport does
 *     (tokens with first == -1 get no EndpointNotFound), and the connection stays usable.
 *   - commits that reach the commit proxy together share a version and get batch indexes
 *     0, 1, 2, ... (CommitID.txnBatchId); the stamp the server writes is the version
 *     (8 bytes) then that index (2 bytes), both big-endian, computed here by hand.
 * Message layouts below are written from fdbclient/include/fdbclient/ClusterInterface.h
 * (ForceRecoveryRequest, file id 14821350: dcId, reply) and CommitProxyInterface.h
 * (ProxySnapRequest, file id 5427684: snapPayload, snapUID, reply, debugID). */
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
#include "server_embed.h"

#define SEC 1000000000ull
#define MS 1000000ull

typedef se_fx fx; /* the shared in-process fixture (server_embed.h) */

static fx *fx_start(int storage_servers)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.seed = 7;
    cfg.description = "req";
    cfg.cluster_id = "abc123";
    if (storage_servers)
        cfg.storage_servers = storage_servers;
    assert_int_equal(se_start(f, &cfg), 0);
    return f;
}

static void fx_reconnect(fx *f)
{
    wc_close(&f->w);
    assert_int_equal(wc_connect(&f->w, f->loop, cfdb_server_port(f->srv)), 0);
    cfdb_client_db_info info;
    assert_int_equal(wc_open_database(&f->w, f->key, &info, &f->a), 0);
}

static void fx_stop(fx *f)
{
    se_stop(f);
    free(f);
}

/* ---- messages not in the wire library, from the FoundationDB headers ---- */

typedef struct t_force_recovery {
    cfdb_bytes dcId;
    cfdb_reply_promise reply;
} t_force_recovery;

typedef struct t_proxy_snap {
    cfdb_bytes snapPayload;
    cfdb_uid snapUID;
    cfdb_reply_promise reply;
    cfdb_opt_uid debugID;
} t_proxy_snap;

FB_TABLE_DEF(t_reply_promise, "ReplyPromise", cfdb_reply_promise, FB_FIELD(cfdb_reply_promise, token, fb_uid));
FB_OPTIONAL_DEF(t_opt_uid, "Optional<UID>", cfdb_opt_uid, fb_uid);
FB_TABLE_DEF(t_force_recovery_type, "ForceRecoveryRequest", t_force_recovery,
             FB_FIELD(t_force_recovery, dcId, fb_bytes), FB_FIELD(t_force_recovery, reply, t_reply_promise));
static const fb_message t_msg_force_recovery = { "ForceRecoveryRequest", 14821350, FB_MSG_REQUEST,
                                                 &t_force_recovery_type };
FB_TABLE_DEF(t_proxy_snap_type, "ProxySnapRequest", t_proxy_snap, FB_FIELD(t_proxy_snap, snapPayload, fb_bytes),
             FB_FIELD(t_proxy_snap, snapUID, fb_uid), FB_FIELD(t_proxy_snap, reply, t_reply_promise),
             FB_FIELD(t_proxy_snap, debugID, t_opt_uid));
static const fb_message t_msg_proxy_snap = { "ProxySnapRequest", 5427684, FB_MSG_REQUEST, &t_proxy_snap_type };

/* The cluster controller's ClusterInterface, as libfdb_c's monitorLeader learns it: a
 * GetLeaderRequest to the coordinator, LeaderInfo.serializedInfo = protocol version (8
 * bytes) + ClusterControllerClientInterface. */
static cfdb_cluster_interface cluster_interface(fx *f)
{
    cfdb_get_leader_request req;
    memset(&req, 0, sizeof req);
    req.key = cfdb_bytes_str(f->key);
    cfdb_get_leader_reply rep;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                             &cfdb_msg_get_leader_request, &req, &req.reply.token, &cfdb_msg_get_leader_reply, &rep,
                             &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(rep.leader.present, 1);
    cfdb_bytes si = rep.leader.value.serializedInfo;
    assert_true(si.len > 8);
    cfdb_cluster_controller_client_interface cc;
    memset(&cc, 0, sizeof cc);
    assert_int_equal(fb_decode(&cfdb_msg_cluster_controller_client_interface, si.ptr + 8, si.len - 8, &cc, NULL, &f->a),
                     0);
    return cc.clientInterface;
}

/* ---- 1007 for versions older than the storage servers keep ---- */

static void test_read_too_old(void **state)
{
    (void)state;
    fx *f = fx_start(0);
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("a"), &ss, NULL, NULL, &f->a), 0);
    bool present = true;
    cfdb_bytes v;
    /* what fdb_transaction_set_read_version(tr, 1) + get sends */
    assert_int_equal(wc_get(&f->w, ss, CFDB_BYTES_LIT("a"), 1, &present, &v, &f->a), CFDB_ERR_TRANSACTION_TOO_OLD);
    assert_int_equal(wc_get(&f->w, ss, CFDB_BYTES_LIT("a"), 999, &present, &v, &f->a), CFDB_ERR_TRANSACTION_TOO_OLD);
    cfdb_get_key_values_reply kv;
    assert_int_equal(wc_get_range(&f->w, ss, (cfdb_key_selector){ CFDB_BYTES_LIT("a"), false, 1 },
                                  (cfdb_key_selector){ CFDB_BYTES_LIT("b"), false, 1 }, 1, 10, 1000, &kv, &f->a),
                     CFDB_ERR_TRANSACTION_TOO_OLD);
    cfdb_get_key_request gk;
    memset(&gk, 0, sizeof gk);
    gk.sel = (cfdb_key_selector){ CFDB_BYTES_LIT("a"), false, 1 };
    gk.version = 1;
    gk.tenantInfo.tenantId = -1;
    gk.ssLatestCommitVersions = cfdb_version_vector_empty();
    cfdb_get_key_reply gkr;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_KEY), &cfdb_msg_get_key_request, &gk,
                             &gk.reply.token, &cfdb_msg_get_key_reply, &gkr, &err, &f->a),
                     0);
    assert_true(err == CFDB_ERR_TRANSACTION_TOO_OLD ||
                (err == 0 && gkr.error.present && gkr.error.value.code == CFDB_ERR_TRANSACTION_TOO_OLD));
    /* at a read version the GRV proxy gives, the same read works */
    int64_t rv = wc_grv(&f->w);
    assert_true(rv > 1);
    assert_int_equal(wc_get(&f->w, ss, CFDB_BYTES_LIT("a"), rv, &present, &v, &f->a), 0);
    assert_false(present);
    fx_stop(f);
}

/* ---- \xff/coordinators ---- */

static void test_coordinators_key(void **state)
{
    (void)state;
    fx *f = fx_start(0);
    cfdb_bytes k = CFDB_BYTES_LIT("\xff/coordinators");
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, k, &ss, NULL, NULL, &f->a), 0);
    bool present = false;
    cfdb_bytes v;
    assert_int_equal(wc_get(&f->w, ss, k, wc_grv(&f->w), &present, &v, &f->a), 0);
    assert_true(present);
    const char *cs = cfdb_server_connection_string(f->srv);
    char want[256];
    snprintf(want, sizeof want, "req:abc123@127.0.0.1:%u", cfdb_server_port(f->srv));
    assert_string_equal(cs, want);
    assert_int_equal(v.len, strlen(want));
    assert_memory_equal(v.ptr, want, v.len);
    /* after the coordinators move, it names the new ones */
    char out[300];
    cfdb_server_control(f->srv, "forward other:xyz@127.0.0.2:4600,127.0.0.3:4600", out, sizeof out);
    assert_true(strncmp(out, "ok", 2) == 0);
    assert_int_equal(wc_get(&f->w, ss, k, wc_grv(&f->w), &present, &v, &f->a), 0);
    assert_true(present);
    assert_int_equal(v.len, strlen("other:xyz@127.0.0.2:4600,127.0.0.3:4600"));
    assert_memory_equal(v.ptr, "other:xyz@127.0.0.2:4600,127.0.0.3:4600", v.len);
    fx_stop(f);
}

/* ---- force recovery and snapshots ---- */

static void test_force_recovery(void **state)
{
    (void)state;
    fx *f = fx_start(0);
    cfdb_cluster_interface ci = cluster_interface(f);
    t_force_recovery req;
    memset(&req, 0, sizeof req);
    req.dcId = CFDB_BYTES_LIT("dc0");
    cfdb_void v;
    cfdb_reply_error err = 1;
    assert_int_equal(wc_call(&f->w, ci.forceRecovery.endpoint.token, &t_msg_force_recovery, &req, &req.reply.token,
                             &cfdb_msg_void_reply, &v, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    /* still serving */
    assert_true(wc_grv(&f->w) > 0);
    fx_stop(f);
}

static void test_proxy_snapshot(void **state)
{
    (void)state;
    fx *f = fx_start(0);
    t_proxy_snap req;
    memset(&req, 0, sizeof req);
    req.snapPayload = CFDB_BYTES_LIT("/bin/snap_create.sh");
    req.snapUID = (cfdb_uid){ 0x0123456789abcdefull, 0xfedcba9876543210ull };
    req.debugID.present = 1;
    req.debugID.value = req.snapUID;
    cfdb_void v;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_PROXY_SNAP_REQ), &t_msg_proxy_snap, &req,
                             &req.reply.token, &cfdb_msg_void_reply, &v, &err, &f->a),
                     0);
    assert_int_equal(err, CFDB_ERR_SNAP_PATH_NOT_WHITELISTED);
    assert_true(wc_grv(&f->w) > 0);
    fx_stop(f);
}

/* ---- versionstamps of one batch ---- */

static void test_versionstamp_batch(void **state)
{
    (void)state;
    fx *f = fx_start(0);
    enum { N = 12 };
    int64_t rv = wc_grv(&f->w);
    cfdb_uid tok[N];
    wc_txn t[N];
    for (int i = 0; i < N; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].read_snapshot = rv;
        char *k = cfdb_arena_alloc(&f->a, 16);
        snprintf(k, 16, "vsb/%02d", i);
        /* value: "s:" + 10-byte placeholder, then the 4-byte little-endian offset 2 */
        uint8_t *v = cfdb_arena_alloc(&f->a, 16);
        memcpy(v, "s:0123456789", 12);
        v[12] = 2, v[13] = 0, v[14] = 0, v[15] = 0;
        wc_txn_atomic(&t[i], &f->a, CFDB_MUT_SET_VERSIONSTAMPED_VALUE, cfdb_bytes_str(k), cfdb_bytes_make(v, 16));
    }
    /* all sent before any answer is read: one loop iteration of the server sees them all */
    for (int i = 0; i < N; i++)
        tok[i] = wc_commit_send(&f->w, &t[i]);
    cfdb_commit_id id[N];
    bool index_seen[N] = { false };
    int nonzero = 0;
    for (int i = 0; i < N; i++) {
        cfdb_reply_error err = 0;
        assert_int_equal(wc_wait(&f->w, tok[i], &cfdb_msg_commit_id_reply, &id[i], &err, &f->a, 10 * SEC), 0);
        assert_int_equal(err, 0);
        assert_true(id[i].txnBatchId < N);
        if (id[i].txnBatchId)
            nonzero++;
    }
    /* read back each value: version big-endian, then the batch index big-endian */
    int64_t v_read = wc_grv(&f->w);
    for (int i = 0; i < N; i++) {
        char k[16];
        snprintf(k, sizeof k, "vsb/%02d", i);
        cfdb_uid ss;
        assert_int_equal(wc_locate(&f->w, cfdb_bytes_str(k), &ss, NULL, NULL, &f->a), 0);
        bool present = false;
        cfdb_bytes val;
        assert_int_equal(wc_get(&f->w, ss, cfdb_bytes_str(k), v_read, &present, &val, &f->a), 0);
        assert_true(present);
        assert_int_equal(val.len, 12);
        uint8_t want[10];
        for (int b = 0; b < 8; b++)
            want[b] = (uint8_t)((uint64_t)id[i].version >> (56 - 8 * b));
        want[8] = (uint8_t)(id[i].txnBatchId >> 8);
        want[9] = (uint8_t)id[i].txnBatchId;
        if (memcmp(val.ptr + 2, want, 10) != 0)
            fail_msg("%s: stored stamp ..%02x%02x, expected version %lld index %u big-endian", k, val.ptr[10],
                     val.ptr[11], (long long)id[i].version, id[i].txnBatchId);
        /* same version, same index: same transaction */
        for (int j = 0; j < i; j++)
            assert_false(id[j].version == id[i].version && id[j].txnBatchId == id[i].txnBatchId);
        if (id[i].version == id[0].version)
            index_seen[id[i].txnBatchId] = true;
    }
    /* the batch of the first version numbers its transactions 0 .. m-1 */
    int m = 0;
    for (int i = 0; i < N; i++)
        m += id[i].version == id[0].version;
    for (int i = 0; i < m; i++)
        assert_true(index_seen[i]);
    print_message("%d commits sent together, %d with batch index != 0, %d in the first batch\n", N, nonzero, m);
    assert_true(nonzero > 0);
    fx_stop(f);
}

/* ---- never silence ---- */

typedef enum { ANS_REPLY = 1, ANS_NOT_FOUND, ANS_CLOSED } answer;

/* Sends a request whose only field is its reply promise (a PingRequest) to dest and
 * says how the server answered; fails on silence. */
static answer probe(fx *f, cfdb_uid dest, const char *what)
{
    cfdb_ping_request req;
    memset(&req, 0, sizeof req);
    cfdb_uid reply = wc_send(&f->w, dest, &cfdb_msg_ping_request, &req, &req.reply.token);
    cfdb_uid nf_tok = cfdb_well_known_token(CFDB_WLTOKEN_ENDPOINT_NOT_FOUND);
    uint64_t end = cfdb_monotonic_ns() + 2 * SEC;
    while (cfdb_monotonic_ns() < end) {
        if (wc_has(&f->w, reply)) {
            assert_int_equal(wc_wait(&f->w, reply, NULL, NULL, NULL, &f->a, 0), 0);
            return ANS_REPLY;
        }
        if (wc_has(&f->w, nf_tok)) {
            cfdb_endpoint_not_found nf;
            assert_int_equal(wc_wait(&f->w, nf_tok, &cfdb_msg_endpoint_not_found, &nf, NULL, &f->a, 0), 0);
            if (!cfdb_uid_eq(nf.token, dest))
                fail_msg("%s: EndpointNotFound names another token", what);
            return ANS_NOT_FOUND;
        }
        if (f->w.closed) {
            fx_reconnect(f);
            return ANS_CLOSED;
        }
        cfdb_loop_run_once(f->loop, 10 * MS);
    }
    fail_msg("%s: no answer in 2 s (silence)", what);
    return 0;
}

static void test_no_silence(void **state)
{
    (void)state;
    fx *f = fx_start(2);
    int counts[4] = { 0 };
    char what[96];
    /* every stream of the cluster controller's ClusterInterface */
    cfdb_cluster_interface ci = cluster_interface(f);
    cfdb_uid cc_base = ci.openDatabase.endpoint.token;
    for (uint32_t i = 0; i < 10; i++) {
        snprintf(what, sizeof what, "ClusterInterface stream %u", i);
        counts[probe(f, cfdb_adjusted_token(cc_base, i), what)]++;
    }
    /* the forceRecovery stream with its own request is answered, not "not found" */
    assert_true(cfdb_uid_eq(ci.forceRecovery.endpoint.token, cfdb_adjusted_token(cc_base, 5)));
    /* every GRV proxy and commit proxy stream */
    for (uint32_t i = 0; i < CFDB_GRV_STREAM_COUNT; i++) {
        snprintf(what, sizeof what, "GrvProxyInterface stream %u", i);
        counts[probe(f, cfdb_adjusted_token(f->w.grv, i), what)]++;
    }
    for (uint32_t i = 0; i < CFDB_CP_STREAM_COUNT; i++) {
        if (i == CFDB_CP_EXPIRE_IDEMPOTENCY_ID)
            continue; /* one-way (ExpireIdempotencyIdRequest has no reply promise) */
        snprintf(what, sizeof what, "CommitProxyInterface stream %u", i);
        counts[probe(f, cfdb_adjusted_token(f->w.commit, i), what)]++;
    }
    /* every stream of both storage servers */
    cfdb_uid ss[2];
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("a"), &ss[0], NULL, NULL, &f->a), 0);
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("z"), &ss[1], NULL, NULL, &f->a), 0);
    assert_false(cfdb_uid_eq(ss[0], ss[1]));
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < CFDB_SS_STREAM_COUNT; i++) {
            snprintf(what, sizeof what, "StorageServerInterface %d stream %u", s, i);
            counts[probe(f, cfdb_adjusted_token(ss[s], i), what)]++;
        }
    /* tokens nobody registered: the stream flag set, as every request stream's token has */
    for (int i = 0; i < 5; i++) {
        cfdb_uid bogus = { (0x5eed000000000000ull + (uint64_t)i * 0x10001ull) | CFDB_TOKEN_STREAM_FLAG,
                           0xabcdef00ull + (uint64_t)i };
        assert_int_equal(probe(f, bogus, "unregistered token"), ANS_NOT_FOUND);
    }
    /* the proxies of an older generation are unknown now */
    cfdb_uid old_commit = f->w.commit;
    char out[200];
    cfdb_server_control(f->srv, "new-proxies", out, sizeof out);
    assert_int_equal(probe(f, cfdb_adjusted_token(old_commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS), "old proxy"),
                     ANS_NOT_FOUND);
    /* a well-known token no one serves: FlowTransport sends nothing back (first == -1),
     * and the connection keeps working */
    cfdb_ping_request pr;
    memset(&pr, 0, sizeof pr);
    cfdb_uid r = wc_send(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_LEADERELECTIONREG_CANDIDACY), &cfdb_msg_ping_request,
                         &pr, &pr.reply.token);
    wc_pump(&f->w, 100 * MS);
    assert_false(wc_has(&f->w, r));
    assert_false(f->w.closed);
    fx_reconnect(f);
    assert_true(wc_grv(&f->w) > 0);
    print_message("%d replies, %d endpoint-not-found, %d closed connections (undecodable request)\n",
                  counts[ANS_REPLY], counts[ANS_NOT_FOUND], counts[ANS_CLOSED]);
    assert_true(counts[ANS_NOT_FOUND] > 0 && counts[ANS_CLOSED] > 0);
    fx_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_too_old),
        cmocka_unit_test(test_coordinators_key),
        cmocka_unit_test(test_force_recovery),
        cmocka_unit_test(test_proxy_snapshot),
        cmocka_unit_test(test_versionstamp_batch),
        cmocka_unit_test(test_no_silence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
