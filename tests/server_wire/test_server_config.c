/* Configuration, the database lock and management keys on cfdb-server, at the wire level
 * (issue 12, the dev server's part), against an in-process server (tenant_fixture.h):
 *   - \xff/conf/ holds what `configure new single memory` writes (fdbclient/
 *     ManagementAPI.actor.cpp configForToken; the policy bytes derived by hand below), the
 *     tenant mode setting reaches \xff/conf/tenant_mode and ClientDBInfo.tenantMode, and a
 *     commit to \xff/conf/tenant_mode publishes a new ClientDBInfo with the new mode;
 *   - \xff/dbLocked: GRV replies say locked, commits that are not lock aware are
 *     not_committed (1020), lock-aware ones commit;
 *   - \xff/worker/ and \xff/logs hold this process as fdbcli's getWorkers and exclude
 *     decode them (bytes derived by hand below), and status json reflects configuration,
 *     tenant mode, the lock, exclusions, maintenance and data distribution mode as
 *     fdbserver/Status.actor.cpp writes them;
 *   - with --datadir, configuration, tenants and the lock survive a restart;
 *   - the binary's --tenant-mode reaches ClientDBInfo.tenantMode. */
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
#include "server_proc.h"
#include "tenant_fixture.h"


/* ---- \xff/conf/ and the tenant mode ---- */

static void test_conf_published(void **state)
{
    (void)state;
    fx *f = fx_start(-1);
    assert_int_equal(f->info.tenantMode.mode, 0);
    cfdb_bytes cb = CFDB_BYTES_LIT("\xff/conf/");
    cfdb_uid ss = owner_of(f, cb);
    cfdb_get_key_values_reply r;
    assert_int_equal(wc_get_range(&f->w, ss, (cfdb_key_selector){ cb, false, 1 },
                                  (cfdb_key_selector){ CFDB_BYTES_LIT("\xff/conf0"), false, 1 }, wc_grv(&f->w), 100,
                                  100000, &r, &f->a),
                     0);
    /* configForToken("new"), ("single"), ("memory"); a policy value is
     * IncludeVersion(withReplicationPolicy = 0x0FDB00B062010001) little-endian, then the
     * name "One" as a StringRef (int32 length 3, bytes); PolicyOne adds nothing
     * (fdbrpc/include/fdbrpc/ReplicationPolicy.h serializeReplicationPolicy,
     * flow/ProtocolVersions.cmake FDB_PV_REPLICATION_POLICY) */
    static const char policy[] = "\x01\x00\x01\x62\xb0\x00\xdb\x0f\x03\x00\x00\x00One";
    struct {
        const char *k, *v;
        size_t vlen;
    } want[] = {
        { "\xff/conf/initialized", "1", 1 },       { "\xff/conf/log_anti_quorum", "0", 1 },
        { "\xff/conf/log_engine", "2", 1 },        { "\xff/conf/log_replicas", "1", 1 },
        { "\xff/conf/log_replication_policy", policy, 15 }, { "\xff/conf/storage_engine", "1", 1 },
        { "\xff/conf/storage_replicas", "1", 1 },  { "\xff/conf/storage_replication_policy", policy, 15 },
    };
    assert_int_equal(r.data.count, 8);
    for (int i = 0; i < 8; i++) {
        assert_bytes(r.data.items[i].key, want[i].k, strlen(want[i].k));
        assert_bytes(r.data.items[i].value, want[i].v, want[i].vlen);
    }
    /* changeConfig's \xff/init_id: a UID as text */
    bool present = false;
    cfdb_bytes v;
    cfdb_bytes ik = CFDB_BYTES_LIT("\xff/init_id");
    assert_int_equal(wc_get(&f->w, owner_of(f, ik), ik, wc_grv(&f->w), &present, &v, &f->a), 0);
    assert_true(present);
    assert_int_equal(v.len, 32);

    /* `configure tenant_mode=optional_experimental` commits \xff/conf/tenant_mode = "1":
     * a client polling with the current ClientDBInfo id gets the new mode */
    cfdb_open_database_coord_request oreq;
    memset(&oreq, 0, sizeof oreq);
    oreq.clusterKey = cfdb_bytes_str(f->key);
    oreq.traceLogGroup = CFDB_BYTES_LIT("default");
    oreq.knownClientInfoID = f->info.id;
    cfdb_uid poll = wc_send(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE),
                            &cfdb_msg_open_database_coord_request, &oreq, &oreq.reply.token);
    wc_pump(&f->w, 20 * MS);
    assert_false(wc_has(&f->w, poll)); /* nothing changed yet: the poll waits */
    put_raw(f, CFDB_BYTES_LIT("\xff/conf/tenant_mode"), "1");
    cfdb_client_db_info ni;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_wait(&f->w, poll, &cfdb_msg_client_db_info_reply, &ni, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    assert_int_equal(ni.tenantMode.mode, 1);
    assert_false(cfdb_uid_eq(ni.id, f->info.id));
    /* and back to disabled by clearing it (TenantMode::fromValue: absent = disabled) */
    t_commit t;
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_CLEAR_RANGE, CFDB_BYTES_LIT("\xff/conf/tenant_mode"),
           CFDB_BYTES_LIT("\xff/conf/tenant_mode\x00"));
    assert_int_equal(tc_commit(f, &t), 0);
    memset(&f->w.client_info_id, 0, sizeof f->w.client_info_id);
    assert_int_equal(wc_open_database(&f->w, f->key, &ni, &f->a), 0);
    assert_int_equal(ni.tenantMode.mode, 0);
    fx_stop(f);
}

static void test_tenant_mode_flag(void **state)
{
    (void)state;
    fx *f = fx_start(2);
    assert_int_equal(f->info.tenantMode.mode, 2);
    cfdb_bytes k = CFDB_BYTES_LIT("\xff/conf/tenant_mode");
    bool present = false;
    cfdb_bytes v;
    assert_int_equal(wc_get(&f->w, owner_of(f, k), k, wc_grv(&f->w), &present, &v, &f->a), 0);
    assert_true(present);
    ASSERT_BYTES(v, "2");
    fx_stop(f);
}

static void test_database_lock(void **state)
{
    (void)state;
    fx *f = fx_start(-1);
    assert_false(grv_locked(f));
    /* lockDatabase (fdbclient/ManagementAPI.actor.cpp) sets \xff/dbLocked lock-aware */
    t_commit t;
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/dbLocked"), CFDB_BYTES_LIT("0123456789uid"));
    assert_int_equal(tc_commit(f, &t), 0);
    assert_true(grv_locked(f));
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("a"), CFDB_BYTES_LIT("1"));
    assert_int_equal(tc_commit(f, &t), CFDB_ERR_NOT_COMMITTED);
    bool present = true;
    cfdb_bytes v;
    assert_int_equal(wc_get(&f->w, owner_of(f, CFDB_BYTES_LIT("a")), CFDB_BYTES_LIT("a"), wc_grv(&f->w), &present,
                            &v, &f->a),
                     0);
    assert_false(present);
    t.flags = CFDB_COMMIT_FLAG_IS_LOCK_AWARE;
    assert_int_equal(tc_commit(f, &t), 0);
    /* unlockDatabase clears it */
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f->a, CFDB_MUT_CLEAR_RANGE, CFDB_BYTES_LIT("\xff/dbLocked"), CFDB_BYTES_LIT("\xff/dbLocked\x00"));
    assert_int_equal(tc_commit(f, &t), 0);
    assert_false(grv_locked(f));
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("b"), CFDB_BYTES_LIT("1"));
    assert_int_equal(tc_commit(f, &t), 0);
    fx_stop(f);
}

/* ---- \xff/worker/ and status json ---- */

#define ASSERT_HAS(json, text)                                                                                       \
    do {                                                                                                             \
        if (!strstr((json), (text)))                                                                                 \
            fail_msg("status json lacks %s", (text));                                                                \
    } while (0)

static void test_workers_and_status(void **state)
{
    (void)state;
    fx *f = fx_start(1);
    /* \xff/worker/: one entry; its key names the process id, its value is ProcessData */
    cfdb_bytes wb = CFDB_BYTES_LIT("\xff/worker/");
    cfdb_get_key_values_reply kv;
    assert_int_equal(wc_get_range(&f->w, owner_of(f, wb), (cfdb_key_selector){ wb, false, 1 },
                                  (cfdb_key_selector){ CFDB_BYTES_LIT("\xff/worker0"), false, 1 }, wc_grv(&f->w), 10,
                                  100000, &kv, &f->a),
                     0);
    assert_int_equal(kv.data.count, 1);
    cfdb_bytes k = kv.data.items[0].key, v = kv.data.items[0].value;
    /* workerListKeyFor (fdbclient/SystemData.cpp): the 9-byte prefix \xff/worker/, StringRef
     * length 32, 32 hex digits */
    assert_int_equal(k.len, 9 + 4 + 32);
    assert_memory_equal(k.ptr, "\xff/worker/\x20\x00\x00\x00", 13);
    char pid[33];
    memcpy(pid, k.ptr + 13, 32);
    pid[32] = 0;
    /* the value, byte by byte: version, 3 locality entries, class, source, address */
    size_t o = 0;
    assert_memory_equal(v.ptr, "\x01\x00\x01\x62\xb0\x00\xdb\x0f", 8); /* withWorkerListValue */
    o = 8;
    assert_memory_equal(v.ptr + o, "\x03\x00\x00\x00\x00\x00\x00\x00", 8);
    o += 8;
    const char *names[3] = { "machineid", "processid", "zoneid" };
    char machine[33] = "";
    for (int i = 0; i < 3; i++) {
        uint32_t n = (uint32_t)strlen(names[i]);
        assert_int_equal(v.ptr[o], n);
        assert_memory_equal(v.ptr + o + 4, names[i], n);
        o += 4 + n;
        assert_int_equal(v.ptr[o], 1); /* Optional present */
        o++;
        assert_int_equal(v.ptr[o], 32);
        if (i == 0)
            memcpy(machine, v.ptr + o + 4, 32), machine[32] = 0;
        if (i == 1)
            assert_memory_equal(v.ptr + o + 4, pid, 32);
        if (i == 2)
            assert_memory_equal(v.ptr + o + 4, machine, 32); /* zone = machine */
        o += 4 + 32;
    }
    /* ProcessClass: int16 _class, _source (fdbrpc/include/fdbrpc/Locality.h): UnsetClass,
     * CommandLineSource */
    assert_memory_equal(v.ptr + o, "\x00\x00\x00\x00", 4);
    o += 4;
    uint16_t port = cfdb_server_port(f->srv);
    uint8_t addr[9] = { 0, 0x01, 0x00, 0x00, 0x7f, (uint8_t)port, (uint8_t)(port >> 8), 0, 0 }; /* v4 127.0.0.1 */
    assert_memory_equal(v.ptr + o, addr, 9);
    assert_int_equal(v.len, o + 9);

    /* \xff/logs: withLogsValue, one (UID, address) pair, no old logs */
    bool present = false;
    cfdb_bytes lv;
    cfdb_bytes lk = CFDB_BYTES_LIT("\xff/logs");
    assert_int_equal(wc_get(&f->w, owner_of(f, lk), lk, wc_grv(&f->w), &present, &lv, &f->a), 0);
    assert_true(present);
    assert_int_equal(lv.len, 8 + 4 + 16 + 9 + 4);
    assert_memory_equal(lv.ptr, "\x01\x00\x01\x62\xb0\x00\xdb\x0f\x01\x00\x00\x00", 12);
    assert_memory_equal(lv.ptr + 28, addr, 9);
    assert_memory_equal(lv.ptr + 37, "\x00\x00\x00\x00", 4);

    char *json = status_json(f);
    ASSERT_HAS(json, "\"configuration\":{\"redundancy_mode\":\"single\",\"log_engine\":\"ssd-2\","
                     "\"storage_engine\":\"memory\",\"log_spill\":2,\"usable_regions\":1,\"logs\":3,"
                     "\"commit_proxies\":3,\"grv_proxies\":1,\"proxies\":4,\"resolvers\":1");
    ASSERT_HAS(json, "\"tenant_mode\":\"optional_experimental\"");
    ASSERT_HAS(json, "\"excluded_servers\":[]");
    ASSERT_HAS(json, "\"database_lock_state\":{\"locked\":false}");
    ASSERT_HAS(json, "\"excluded\":false");
    /* what the client's exclude safety check reads: the process's locality and address,
     * each storage role's kvstore_used/free/available_bytes */
    char loc[200];
    snprintf(loc, sizeof loc, "\"locality\":{\"machineid\":\"%s\",\"processid\":\"%s\",\"zoneid\":\"%s\"}", machine,
             pid, machine);
    ASSERT_HAS(json, loc);
    int nstorage = 0;
    for (const char *p = json; (p = strstr(p, "{\"role\":\"storage\"")); p++) {
        const char *end = strchr(p, '}');
        end = strchr(end + 1, '}'); /* past data_lag's object */
        assert_non_null(end);
        char role[512];
        snprintf(role, sizeof role, "%.*s", (int)(end - p), p);
        ASSERT_HAS(role, "\"kvstore_used_bytes\":");
        ASSERT_HAS(role, "\"kvstore_free_bytes\":");
        ASSERT_HAS(role, "\"kvstore_available_bytes\":");
        nstorage++;
    }
    assert_int_equal(nstorage, 3);
    assert_null(strstr(json, "maintenance_zone"));
    assert_null(strstr(json, "data_distribution_disabled"));
    free(json);

    /* lock (versionstamp + UID 0x0102..., 0x1112...), exclusions, maintenance, DD off */
    t_commit t;
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/dbLocked"),
           CFDB_BYTES_LIT("0123456789\x08\x07\x06\x05\x04\x03\x02\x01\x18\x17\x16\x15\x14\x13\x12\x11"));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/conf/excluded/10.0.0.1:4500"), CFDB_BYTES_LIT(""));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/conf/failed/10.0.0.2"), CFDB_BYTES_LIT(""));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/conf/excluded_locality/zoneid:z1"),
           CFDB_BYTES_LIT(""));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/conf/excluded/127.0.0.1"), CFDB_BYTES_LIT(""));
    /* healthyZoneValue("zone9", now + 30 s) (fdbclient/SystemData.cpp): IncludeVersion(
     * withHealthyZoneValue = 0x0FDB00B062010001), StringRef zone, int64 version */
    int64_t until = wc_grv(&f->w) + 30000000;
    uint8_t hz[8 + 4 + 5 + 8] = { 0x01, 0x00, 0x01, 0x62, 0xb0, 0x00, 0xdb, 0x0f, 5, 0, 0, 0, 'z', 'o', 'n', 'e', '9' };
    for (int i = 0; i < 8; i++)
        hz[17 + i] = (uint8_t)((uint64_t)until >> (8 * i));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff\x02/healthyZone"), cfdb_bytes_make(hz, sizeof hz));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/dataDistributionMode"),
           CFDB_BYTES_LIT("\x00\x00\x00\x00"));
    assert_int_equal(tc_commit(f, &t), 0);
    json = status_json(f);
    ASSERT_HAS(json, "\"database_lock_state\":{\"locked\":true,\"lock_uid\":\"01020304050607081112131415161718\"}");
    ASSERT_HAS(json, "\"excluded_servers\":[{\"address\":\"10.0.0.1:4500\"},{\"address\":\"127.0.0.1\"},"
                     "{\"address\":\"10.0.0.2\"},{\"locality\":\"zoneid:z1\"}]");
    ASSERT_HAS(json, "\"excluded\":true");
    ASSERT_HAS(json, "\"maintenance_zone\":\"zone9\",\"maintenance_seconds_remaining\":");
    ASSERT_HAS(json, "\"data_distribution_disabled\":true");
    free(json);
    fx_stop(f);
}

/* Durable: what configure, tenant creation and lock wrote survives a restart (the \xff/conf/
 * defaults are only written where missing), and storage_engine is ssd-2 */
static void test_durable_config(void **state)
{
    (void)state;
    char dir[] = "/tmp/cfdb-tenants-XXXXXX";
    assert_non_null(mkdtemp(dir));
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.seed = 5;
    cfg.datadir = dir;
    fx f;
    assert_int_equal(se_start(&f, &cfg), 0);
    assert_int_equal(f.info.tenantMode.mode, 0);
    put_raw(&f, CFDB_BYTES_LIT("\xff/conf/tenant_mode"), "1");
    put_tenant(&f, 3, "delta", 0);
    t_commit t;
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f.a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/dbLocked"), CFDB_BYTES_LIT("0123456789abcdefghijklmnop"));
    assert_int_equal(tc_commit(&f, &t), 0);
    se_stop(&f);
    cfg.seed = 6;
    assert_int_equal(se_start(&f, &cfg), 0);
    assert_int_equal(f.info.tenantMode.mode, 1);
    int64_t id = 0;
    assert_int_equal(tenant_id(&f, "delta", &id), 0);
    assert_int_equal(id, 3);
    assert_true(grv_locked(&f));
    cfdb_bytes k = CFDB_BYTES_LIT("\xff/conf/storage_engine");
    bool present = false;
    cfdb_bytes v;
    assert_int_equal(wc_get(&f.w, owner_of(&f, k), k, wc_grv(&f.w), &present, &v, &f.a), 0);
    ASSERT_BYTES(v, "2");
    se_stop(&f);
    sp_rmtree(dir);
}

/* The cfdb-server binary's --tenant-mode: \xff/conf/tenant_mode at start, so a client's
 * first ClientDBInfo already carries the mode */
static void test_tenant_mode_option(void **state)
{
    (void)state;
    char dir[] = "/tmp/cfdb-tmode-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *extra[] = { "--tenant-mode", "required", NULL };
    sp_proc p;
    assert_int_equal(sp_start(&p, CFDB_SERVER_BIN, dir, NULL, extra), 0);
    cfdb_loop *loop = cfdb_loop_create();
    wc w;
    memset(&w, 0, sizeof w);
    cfdb_arena a;
    cfdb_arena_init(&a);
    assert_int_equal(wc_connect(&w, loop, p.port), 0);
    cfdb_client_db_info info;
    assert_int_equal(wc_open_database(&w, p.key, &info, &a), 0);
    assert_int_equal(info.tenantMode.mode, 2);
    wc_close(&w);
    cfdb_arena_free(&a);
    cfdb_loop_destroy(loop);
    sp_kill9(&p);
    sp_rmtree(dir);
}

/* ClusterInterface.getClientWorkers and the worker's reboot stream (fdbclient/include/
 * fdbclient/ClusterInterface.h GetClientWorkersRequest, file id 10771791, field reply;
 * the reply ErrorOr<EnsureTable<std::vector<ClientWorkerInterface>>>, file id
 * (2 << 28) | (5 << 24) | 12418152 per flow/include/flow/FileIdentifier.h;
 * ClientWorkerInterface.h: reboot, profiler, setFailureInjection; RebootRequest, file id
 * 11913957: deleteData, checkData, waitForDuration), and the empty GetLeaderRequest
 * libfdb_c's reboot_worker sends to check the worker is reachable */
typedef struct t_cw_req {
    cfdb_reply_promise reply;
} t_cw_req;
typedef struct t_cwi {
    cfdb_request_stream reboot, profiler, setFailureInjection;
} t_cwi;
typedef CFDB_VEC(t_cwi) t_cwi_vec;
typedef struct t_cw_reply {
    t_cwi_vec workers;
} t_cw_reply;
typedef struct t_reboot {
    bool deleteData, checkData;
    uint32_t waitForDuration;
} t_reboot;
extern fb_type cfdb_fb_request_stream; /* the wire library's RequestStream */
FB_TABLE_DEF(t_reply_promise, "ReplyPromise", cfdb_reply_promise, FB_FIELD(cfdb_reply_promise, token, fb_uid));
FB_TABLE_DEF(t_cw_req_type, "GetClientWorkersRequest", t_cw_req, FB_FIELD(t_cw_req, reply, t_reply_promise));
static const fb_message t_msg_cw = { "GetClientWorkersRequest", 10771791, FB_MSG_REQUEST, &t_cw_req_type };
FB_TABLE_DEF(t_cwi_type, "ClientWorkerInterface", t_cwi, FB_FIELD(t_cwi, reboot, cfdb_fb_request_stream),
             FB_FIELD(t_cwi, profiler, cfdb_fb_request_stream), FB_FIELD(t_cwi, setFailureInjection, cfdb_fb_request_stream));
FB_VECTOR_DEF(t_cwi_vec_type, "std::vector<ClientWorkerInterface>", t_cwi_type);
FB_TABLE_DEF(t_cw_reply_type, "EnsureTable", t_cw_reply, FB_FIELD(t_cw_reply, workers, t_cwi_vec_type));
static const fb_message t_msg_cw_reply = { "ErrorOr<std::vector<ClientWorkerInterface>>", (2u << 28) | (5u << 24) | 12418152u,
                                           FB_MSG_REPLY, &t_cw_reply_type };
FB_TABLE_DEF(t_reboot_type, "RebootRequest", t_reboot, FB_FIELD(t_reboot, deleteData, fb_bool),
             FB_FIELD(t_reboot, checkData, fb_bool), FB_FIELD(t_reboot, waitForDuration, fb_u32));
static const fb_message t_msg_reboot = { "RebootRequest", 11913957, FB_MSG_REQUEST, &t_reboot_type };

static void test_workers_reboot(void **state)
{
    (void)state;
    fx *f = fx_start(-1);
    cfdb_cluster_interface ci = cluster_iface(f);
    t_cw_req req;
    memset(&req, 0, sizeof req);
    t_cw_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, ci.getClientWorkers.endpoint.token, &t_msg_cw, &req, &req.reply.token,
                             &t_msg_cw_reply, &rep, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_int_equal(rep.workers.count, 1);
    t_cwi w = rep.workers.items[0];
    assert_int_equal(w.reboot.endpoint.addresses.address.port, cfdb_server_port(f->srv));
    assert_false(cfdb_uid_eq(w.reboot.endpoint.token, w.profiler.endpoint.token));
    /* verifyInterfaceActor: GetLeaderRequest() with no key is answered (no leader) */
    cfdb_get_leader_request gl;
    memset(&gl, 0, sizeof gl);
    cfdb_get_leader_reply lr;
    assert_int_equal(wc_call(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                             &cfdb_msg_get_leader_request, &gl, &gl.reply.token, &cfdb_msg_get_leader_reply, &lr, &err,
                             &f->a),
                     0);
    assert_int_equal(err, 0);
    assert_false(lr.leader.present);
    /* reboot: the connection drops, the data stays, the proxies are new */
    put_raw(f, CFDB_BYTES_LIT("kept"), "yes");
    cfdb_uid old_commit = f->w.commit;
    t_reboot rb = { false, false, 0 };
    fb_writer wr;
    fb_writer_init(&wr, 0);
    assert_int_equal(fb_encode(&wr, &t_msg_reboot, &rb, 0), 0);
    assert_int_equal(cfdb_conn_send_raw(f->w.conn, w.reboot.endpoint.token, fb_writer_message(&wr),
                                        (uint32_t)fb_writer_message_len(&wr)),
                     0);
    fb_writer_free(&wr);
    for (int i = 0; i < 200 && !f->w.closed; i++)
        wc_pump(&f->w, 10 * MS);
    assert_true(f->w.closed);
    wc_close(&f->w);
    memset(&f->w, 0, sizeof f->w);
    assert_int_equal(wc_connect(&f->w, f->loop, cfdb_server_port(f->srv)), 0);
    assert_int_equal(wc_open_database(&f->w, f->key, &f->info, &f->a), 0);
    assert_false(cfdb_uid_eq(f->w.commit, old_commit));
    bool present = false;
    cfdb_bytes v;
    assert_int_equal(wc_get(&f->w, owner_of(f, CFDB_BYTES_LIT("kept")), CFDB_BYTES_LIT("kept"), wc_grv(&f->w),
                            &present, &v, &f->a),
                     0);
    assert_true(present);
    fx_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf_published),     cmocka_unit_test(test_tenant_mode_flag),
        cmocka_unit_test(test_database_lock),      cmocka_unit_test(test_workers_and_status),
        cmocka_unit_test(test_durable_config),     cmocka_unit_test(test_tenant_mode_option),
        cmocka_unit_test(test_workers_reboot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
