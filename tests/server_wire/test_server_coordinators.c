/* Coordinator changes on cfdb-server, at the wire level, as fdbcli's `coordinators`
 * reaches a one-process fdbserver (fdbclient/ManagementAPI.actor.cpp changeQuorumChecker:
 * GetLeaderRequest for the new key to each new coordinator, then a commit setting
 * \xff/coordinators; fdbserver/CommitProxyServer.actor.cpp: that commit ends the
 * generation through ChangeCoordinatorsRequest):
 *   - a GetLeaderRequest for a key nobody uses yet is answered (no leader), so the client's
 *     reachability check passes;
 *   - the commit naming this server with a new description and id is answered
 *     commit_unknown_result; afterwards \xff/coordinators and the cluster file hold the new
 *     string, the old key's openDatabase and getLeader polls (parked and new) are forwarded
 *     to it, the new key opens a new proxy generation, and the batch's other writes stay;
 *   - a string naming an address this server does not serve, or not parsing, is refused
 *     with coordinators_changed (1027) and nothing of the transaction is applied;
 *   - setting the value it already has is an ordinary commit;
 *   - fdbcli's `setclass` (the client writes \xff/processClass/<processID> and
 *     \xff/processClassChanges, fdbclient/SpecialKeySpace.actor.cpp ProcessClassImpl) shows in
 *     status json's class_type/class_source as fdbserver's cluster controller applies it;
 *     cleared, the process is "unset" from the "command_line" again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "endpoint.h"
#include "error_codes.h"
#include "tenant_fixture.h"

static const cfdb_bytes coord_key = { (const uint8_t *)"\xff/coordinators", 14 };

typedef struct cx {
    fx f;
    char dir[64], file[96];
    char cs[256]; /* connection string at start */
} cx;

static cx *cx_start(void)
{
    cx *c = calloc(1, sizeof *c);
    assert_non_null(c);
    snprintf(c->dir, sizeof c->dir, "/tmp/cfdb-coordXXXXXX");
    assert_non_null(mkdtemp(c->dir));
    snprintf(c->file, sizeof c->file, "%s/fdb.cluster", c->dir);
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.cluster_file = c->file;
    cfg.cluster_id = "origid01";
    assert_int_equal(se_start(&c->f, &cfg), 0);
    snprintf(c->cs, sizeof c->cs, "%s", cfdb_server_connection_string(c->f.srv));
    return c;
}

static void cx_stop(cx *c)
{
    se_stop(&c->f);
    unlink(c->file);
    rmdir(c->dir);
    free(c);
}

static cfdb_bytes read_latest(fx *f, cfdb_bytes k, bool *present)
{
    cfdb_bytes v = { 0, 0 };
    *present = false;
    assert_int_equal(wc_get(&f->w, owner_of(f, k), k, wc_grv(&f->w), present, &v, &f->a), 0);
    return v;
}

/* A transaction setting \xff/coordinators (and one more key): the commit's error. */
static int set_coordinators(fx *f, const char *cs, const char *other)
{
    t_commit t;
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, coord_key, cfdb_bytes_str(cs));
    if (other)
        tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, cfdb_bytes_str(other), CFDB_BYTES_LIT("v"));
    return tc_commit(f, &t);
}

static cfdb_uid send_open(fx *f, const char *key, cfdb_uid known)
{
    cfdb_open_database_coord_request r;
    memset(&r, 0, sizeof r);
    r.clusterKey = cfdb_bytes_str(key);
    r.traceLogGroup = CFDB_BYTES_LIT("default");
    r.knownClientInfoID = known;
    return wc_send(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE),
                   &cfdb_msg_open_database_coord_request, &r, &r.reply.token);
}

static cfdb_uid send_leader(fx *f, const char *key, cfdb_uid known)
{
    cfdb_get_leader_request r;
    memset(&r, 0, sizeof r);
    r.key = cfdb_bytes_str(key);
    r.knownLeader = known;
    return wc_send(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER), &cfdb_msg_get_leader_request,
                   &r, &r.reply.token);
}

static void test_same_process_new_description(void **state)
{
    (void)state;
    cx *c = cx_start();
    fx *f = &c->f;
    uint16_t port = cfdb_server_port(f->srv);
    char ncs[256], nkey[64];
    snprintf(nkey, sizeof nkey, "newdesc_1:Zq9Wc3xY7aBcDeFgHiJkLmNoPqRsTuVw");
    snprintf(ncs, sizeof ncs, "%s@127.0.0.1:%u", nkey, port);

    /* the client's reachability check: GetLeaderRequest(newKey, UID()) is answered */
    cfdb_get_leader_reply lr;
    cfdb_reply_error err = 0;
    cfdb_uid t = send_leader(f, nkey, (cfdb_uid){ 0, 0 });
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_leader_reply, &lr, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    assert_false(lr.leader.present);

    /* a leader poll and an openDatabase poll for the current key wait */
    t = send_leader(f, f->key, (cfdb_uid){ 0, 0 });
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_get_leader_reply, &lr, &err, &f->a, 5 * SEC), 0);
    assert_true(lr.leader.present);
    assert_false(lr.leader.value.forward);
    cfdb_uid leader_poll = send_leader(f, f->key, lr.leader.value.changeID);
    cfdb_uid open_poll = send_open(f, f->key, f->info.id);
    wc_pump(&f->w, 20 * MS);
    assert_false(wc_has(&f->w, leader_poll));
    assert_false(wc_has(&f->w, open_poll));

    /* the change: the batch is answered commit_unknown_result */
    assert_int_equal(set_coordinators(f, ncs, "side"), CFDB_ERR_COMMIT_UNKNOWN_RESULT);

    /* the parked polls are forwarded to the new string */
    assert_int_equal(wc_wait(&f->w, leader_poll, &cfdb_msg_get_leader_reply, &lr, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    assert_true(lr.leader.present);
    assert_true(lr.leader.value.forward);
    assert_bytes(lr.leader.value.serializedInfo, ncs, strlen(ncs));
    cfdb_client_db_info info;
    assert_int_equal(wc_wait(&f->w, open_poll, &cfdb_msg_client_db_info_reply, &info, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, 0);
    assert_true(info.forward.present);
    assert_bytes(info.forward.value, ncs, strlen(ncs));
    assert_int_equal(info.commitProxies.count, 0);

    /* so is a new openDatabase with the old key */
    t = send_open(f, f->key, (cfdb_uid){ 0, 0 });
    assert_int_equal(wc_wait(&f->w, t, &cfdb_msg_client_db_info_reply, &info, &err, &f->a, 5 * SEC), 0);
    assert_true(info.forward.present);
    assert_bytes(info.forward.value, ncs, strlen(ncs));

    /* the server is the new connection string, in its cluster file too */
    assert_string_equal(cfdb_server_connection_string(f->srv), ncs);
    char buf[300] = { 0 };
    FILE *fp = fopen(c->file, "r");
    assert_non_null(fp);
    assert_non_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    buf[strcspn(buf, "\n")] = 0;
    assert_string_equal(buf, ncs);

    /* the new key opens a new generation of proxies */
    cfdb_uid old_commit = f->w.commit;
    memset(&f->w.client_info_id, 0, sizeof f->w.client_info_id);
    assert_int_equal(wc_open_database(&f->w, nkey, &info, &f->a), 0);
    assert_false(info.forward.present);
    assert_false(cfdb_uid_eq(f->w.commit, old_commit));
    bool present = false;
    cfdb_bytes v = read_latest(f, coord_key, &present);
    assert_true(present);
    assert_bytes(v, ncs, strlen(ncs));
    v = read_latest(f, CFDB_BYTES_LIT("side"), &present);
    assert_true(present); /* commit_unknown_result: this server kept the batch */

    /* fdbcli's retry sets the same string again: an ordinary commit */
    assert_int_equal(set_coordinators(f, ncs, "again"), 0);
    v = read_latest(f, CFDB_BYTES_LIT("again"), &present);
    assert_true(present);
    cx_stop(c);
}

static void test_refused(void **state)
{
    (void)state;
    cx *c = cx_start();
    fx *f = &c->f;
    uint16_t port = cfdb_server_port(f->srv);
    char other[256];
    const char *bad[4];
    /* another port, this server plus another, a hostname, garbage */
    char b0[128], b1[160], b2[128];
    snprintf(b0, sizeof b0, "desc:abc123@127.0.0.1:%u", (unsigned)(port == 65535 ? 1 : port + 1));
    snprintf(b1, sizeof b1, "desc:abc123@127.0.0.1:%u,127.0.0.2:4500", port);
    snprintf(b2, sizeof b2, "desc:abc123@localhost:%u", port);
    bad[0] = b0;
    bad[1] = b1;
    bad[2] = b2;
    bad[3] = "not a connection string";
    for (int i = 0; i < 4; i++) {
        snprintf(other, sizeof other, "refused%d", i);
        assert_int_equal(set_coordinators(f, bad[i], other), CFDB_ERR_COORDINATORS_CHANGED);
        bool present = true;
        read_latest(f, cfdb_bytes_str(other), &present);
        assert_false(present); /* nothing of the transaction applied */
        cfdb_bytes v = read_latest(f, coord_key, &present);
        assert_true(present);
        assert_bytes(v, c->cs, strlen(c->cs));
    }
    /* a description that is not [A-Za-z0-9_]+ */
    char b3[128];
    snprintf(b3, sizeof b3, "de-sc:abc123@127.0.0.1:%u", port);
    assert_int_equal(set_coordinators(f, b3, NULL), CFDB_ERR_COORDINATORS_CHANGED);
    assert_string_equal(cfdb_server_connection_string(f->srv), c->cs);
    /* the value it already has: an ordinary commit */
    assert_int_equal(set_coordinators(f, c->cs, "same"), 0);
    bool present = false;
    read_latest(f, CFDB_BYTES_LIT("same"), &present);
    assert_true(present);
    cx_stop(c);
}

static void ASSERT_HAS(const char *json, const char *text)
{
    if (!strstr(json, text))
        fail_msg("status json lacks %s", text);
}

static void test_setclass(void **state)
{
    (void)state;
    cx *c = cx_start();
    fx *f = &c->f;
    char *json = status_json(f);
    ASSERT_HAS(json, "\"class_type\":\"unset\",\"class_source\":\"command_line\"");
    free(json);
    /* the process id from \xff/worker/ (its locality's processid) */
    json = status_json(f);
    const char *pid = strstr(json, "\"processid\":\"");
    assert_non_null(pid);
    pid += strlen("\"processid\":\"");
    size_t n = strcspn(pid, "\"");
    assert_true(n > 0 && n < 64);
    /* processClassKeyFor(pid): prefix, int32 length, bytes; processClassValue(ProcessClass(
     * StorageClass 1, DBSource 2)): protocol 0x0FDB00B062010001 (withProcessClassValue), then
     * _class, _source as int16 (fdbrpc/include/fdbrpc/Locality.h) */
    uint8_t key[15 + 4 + 64];
    memcpy(key, "\xff/processClass/", 15);
    uint32_t len = (uint32_t)n;
    memcpy(key + 15, &len, 4);
    memcpy(key + 19, pid, n);
    free(json);
    cfdb_bytes k = cfdb_bytes_make(key, 19 + n);
    static const uint8_t storage_db[12] = { 0x01, 0x00, 0x01, 0x62, 0xb0, 0x00, 0xdb, 0x0f, 1, 0, 2, 0 };
    static const uint8_t log_db[12] = { 0x01, 0x00, 0x01, 0x62, 0xb0, 0x00, 0xdb, 0x0f, 8, 0, 2, 0 };
    t_commit t;
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, k, cfdb_bytes_make(storage_db, 12));
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("\xff/processClassChanges"), CFDB_BYTES_LIT("x"));
    assert_int_equal(tc_commit(f, &t), 0);
    json = status_json(f);
    ASSERT_HAS(json, "\"class_type\":\"storage\",\"class_source\":\"set_class\"");
    free(json);
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, k, cfdb_bytes_make(log_db, 12));
    assert_int_equal(tc_commit(f, &t), 0);
    json = status_json(f);
    ASSERT_HAS(json, "\"class_type\":\"log\",\"class_source\":\"set_class\"");
    free(json);
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    tc_mut(&t, &f->a, CFDB_MUT_CLEAR_RANGE, k, wc_key_after(&f->a, k));
    assert_int_equal(tc_commit(f, &t), 0);
    json = status_json(f);
    ASSERT_HAS(json, "\"class_type\":\"unset\",\"class_source\":\"command_line\"");
    free(json);
    cx_stop(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_process_new_description),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_setclass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
