/* Tenants, configuration and the database lock on cfdb-server, at the wire level (issue 12,
 * the dev server's part), against an in-process server:
 *   - \xff/conf/ holds what `configure new single memory` writes (fdbclient/
 *     ManagementAPI.actor.cpp configForToken; the policy bytes derived by hand below), the
 *     --tenant-mode setting reaches \xff/conf/tenant_mode and ClientDBInfo.tenantMode, and a
 *     commit to \xff/conf/tenant_mode publishes a new ClientDBInfo with the new mode;
 *   - GetTenantIdRequest finds a tenant by name in \xff/tenant/map/ (tenant_not_found 2131);
 *   - storage reads in a tenant see only its keys, relative (GetValue, GetKey, GetKeyValues,
 *     GetKeyServerLocations clamped to the tenant), a tenant missing at the read version is
 *     2131, a LOCKED tenant 2144 unless the read is lock aware;
 *   - commits in a tenant: every key and conflict range inside the prefix and versionstamp
 *     offsets >= 8, else illegal_tenant_access (2138); a missing tenant 2131; a locked or
 *     read-only tenant 2144 unless lock aware;
 *   - a watch in a tenant that is removed ends with tenant_removed (2142);
 *   - \xff/dbLocked: GRV replies say locked, commits that are not lock aware are
 *     not_committed (1020), lock-aware ones commit;
 *   - \xff/worker/ holds this process as fdbcli's getWorkers decodes it (bytes derived by
 *     hand below), and status json reflects configuration, tenant mode, the lock,
 *     exclusions, maintenance and data distribution mode as fdbserver/Status.actor.cpp
 *     writes them.
 * TenantMapEntry values are written as fdbclient/include/fdbclient/Tenant.h serializes them
 * (ObjectWriter, IncludeVersion; file id 7054389: id, tenantName, tenantLockState
 * (uint8_t enum), tenantLockId (Optional<UID>), tenantGroup (Optional<StringRef>),
 * configurationSequenceNum) and checked with the independent reader tests/wire/fdb_ref.c,
 * including the vtable FoundationDB's writer derives from that member list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfdb/endpoint.h"
#include "cfdb/errors.h"
#include "cfdb/protocol_version.h"
#include "fdb_ref.h"
#include "server.h"
#include "wire_client.h"

#define SEC 1000000000ull
#define MS 1000000ull

/* tenant 1 ("alpha") and 2 ("beta"): prefixes are the ids as 8 big-endian bytes */
#define PA "\x00\x00\x00\x00\x00\x00\x00\x01"
#define PB "\x00\x00\x00\x00\x00\x00\x00\x02"
#define K(p, s) cfdb_bytes_make(p s, sizeof(p s) - 1)

typedef struct fx {
    cfdb_loop *loop;
    cfdb_server *srv;
    wc w;
    cfdb_arena a;
    char key[128];
    cfdb_client_db_info info;
} fx;

static fx *fx_start(int tenant_mode)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.seed = 12;
    cfg.description = "ten";
    cfg.cluster_id = "t12";
    cfg.tenant_mode = tenant_mode;
    /* tenant alpha spans two shards; beta starts a third */
    cfg.boundaries[0] = PA "k2";
    cfg.boundary_lens[0] = 10;
    cfg.boundaries[1] = PB;
    cfg.boundary_lens[1] = 8;
    cfg.nboundaries = 2;
    cfg.custom_boundaries = true;
    f->loop = cfdb_loop_create();
    f->srv = cfdb_server_create(f->loop, &cfg);
    assert_non_null(f->srv);
    cfdb_arena_init(&f->a);
    const char *cs = cfdb_server_connection_string(f->srv);
    snprintf(f->key, sizeof f->key, "%.*s", (int)(strchr(cs, '@') - cs), cs);
    assert_int_equal(wc_connect(&f->w, f->loop, cfdb_server_port(f->srv)), 0);
    assert_int_equal(wc_open_database(&f->w, f->key, &f->info, &f->a), 0);
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

/* ---- TenantMapEntry, written from Tenant.h's serializer list ---- */

typedef struct t_entry {
    int64_t id;
    cfdb_bytes tenantName;
    uint8_t tenantLockState;
    cfdb_opt_uid tenantLockId;
    cfdb_opt_bytes tenantGroup;
    int64_t configurationSequenceNum;
} t_entry;

FB_OPTIONAL_DEF(t_opt_uid, "Optional<UID>", cfdb_opt_uid, fb_uid);
FB_OPTIONAL_DEF(t_opt_bytes, "Optional<TenantGroupName>", cfdb_opt_bytes, fb_bytes);
FB_TABLE_DEF(t_entry_type, "TenantMapEntry", t_entry, FB_FIELD(t_entry, id, fb_i64),
             FB_FIELD(t_entry, tenantName, fb_bytes), FB_FIELD(t_entry, tenantLockState, fb_u8),
             FB_FIELD(t_entry, tenantLockId, t_opt_uid), FB_FIELD(t_entry, tenantGroup, t_opt_bytes),
             FB_FIELD(t_entry, configurationSequenceNum, fb_i64));
static const fb_message t_entry_msg = { "TenantMapEntry", 7054389, FB_MSG_REQUEST, &t_entry_type };

/* the same member list for the independent reader */
static const ref_type r_i64 = { "int64_t", REF_I64, NULL, 0, NULL, NULL, 0 };
static const ref_type r_u8 = { "TenantLockState", REF_U8, NULL, 0, NULL, NULL, 0 };
static const ref_type r_uid = { "UID", REF_UID, NULL, 0, NULL, NULL, 0 };
static const ref_type r_bytes = { "StringRef", REF_BYTES, NULL, 0, NULL, NULL, 0 };
static const ref_type *const r_opt_uid_a[] = { &r_uid };
static const ref_type *const r_opt_bytes_a[] = { &r_bytes };
static const ref_type r_opt_uid = { "Optional<UID>", REF_UNION, NULL, 0, NULL, r_opt_uid_a, 1 };
static const ref_type r_opt_bytes = { "Optional<TenantGroupName>", REF_UNION, NULL, 0, NULL, r_opt_bytes_a, 1 };
static const ref_field r_entry_f[] = { { "id", &r_i64 },           { "tenantName", &r_bytes },
                                       { "tenantLockState", &r_u8 }, { "tenantLockId", &r_opt_uid },
                                       { "tenantGroup", &r_opt_bytes }, { "configurationSequenceNum", &r_i64 } };
static const ref_type r_entry = { "TenantMapEntry", REF_TABLE, r_entry_f, 6, NULL, NULL, 0 };
static const ref_msg r_entry_msg = { "TenantMapEntry", 7054389, &r_entry };

/* \xff/tenant/map/<prefix> = IncludeVersion (8 bytes LE 0x0FDB00B073000000) + object */
static cfdb_bytes entry_value(cfdb_arena *a, int64_t id, const char *name, uint8_t lock)
{
    t_entry e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.tenantName = cfdb_bytes_str(name);
    e.tenantLockState = lock;
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &t_entry_msg, &e, 0), 0);
    size_t n = fb_writer_message_len(&w);
    uint8_t *v = cfdb_arena_alloc(a, n + 8);
    uint64_t pv = CFDB_PROTOCOL_VERSION;
    for (int i = 0; i < 8; i++)
        v[i] = (uint8_t)(pv >> (8 * i));
    memcpy(v + 8, fb_writer_message(&w), n);
    fb_writer_free(&w);
    /* the independent reader agrees on every field and on the vtable */
    ref_doc d;
    memset(&d, 0, sizeof d);
    assert_int_equal(ref_read(&r_entry_msg, v + 8, n, &d), 0);
    assert_int_equal(d.vt_mismatch, 0);
    char want[64];
    snprintf(want, sizeof want, "%lld", (long long)id);
    assert_string_equal(ref_get(&d, "id"), want);
    snprintf(want, sizeof want, "%u", lock);
    assert_string_equal(ref_get(&d, "tenantLockState"), want);
    ref_doc_free(&d);
    return cfdb_bytes_make(v, n + 8);
}

static cfdb_bytes map_key(cfdb_arena *a, int64_t id)
{
    /* fdbclient/SystemData.cpp tenant map under TenantMetadata's "\xff/tenant/" subspace:
     * "map/" + the id as 8 big-endian bytes */
    static const char prefix[] = "\xff/tenant/map/";
    uint8_t *k = cfdb_arena_alloc(a, sizeof prefix - 1 + 8);
    memcpy(k, prefix, sizeof prefix - 1);
    for (int i = 0; i < 8; i++)
        k[sizeof prefix - 1 + i] = (uint8_t)((uint64_t)id >> (56 - 8 * i));
    return cfdb_bytes_make(k, sizeof prefix - 1 + 8);
}

/* ---- commits ---- */

typedef struct t_commit {
    cfdb_mutation muts[8];
    uint32_t nmuts;
    cfdb_key_range reads[4], writes[8];
    uint32_t nreads, nwrites;
    int64_t tenant; /* -1 none */
    uint32_t flags;
} t_commit;

static void tc_init(t_commit *t, int64_t tenant, uint32_t flags)
{
    memset(t, 0, sizeof *t);
    t->tenant = tenant;
    t->flags = flags;
}

static void tc_mut(t_commit *t, cfdb_arena *a, uint8_t type, cfdb_bytes k, cfdb_bytes v)
{
    t->muts[t->nmuts++] = (cfdb_mutation){ type, k, v };
    if (type == CFDB_MUT_CLEAR_RANGE)
        t->writes[t->nwrites++] = (cfdb_key_range){ k, v };
    else if (type != CFDB_MUT_SET_VERSIONSTAMPED_KEY)
        t->writes[t->nwrites++] = (cfdb_key_range){ k, wc_key_after(a, k) };
}

static int tc_commit(fx *f, const t_commit *t)
{
    cfdb_commit_transaction_request req;
    memset(&req, 0, sizeof req);
    req.transaction.read_conflict_ranges.items = (cfdb_key_range *)t->reads;
    req.transaction.read_conflict_ranges.count = t->nreads;
    req.transaction.write_conflict_ranges.items = (cfdb_key_range *)t->writes;
    req.transaction.write_conflict_ranges.count = t->nwrites;
    req.transaction.mutations.items = (cfdb_mutation *)t->muts;
    req.transaction.mutations.count = t->nmuts;
    req.transaction.read_snapshot = wc_grv(&f->w);
    req.flags = t->flags;
    req.tenantInfo.tenantId = t->tenant;
    cfdb_commit_id id;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, f->w.commit, &cfdb_msg_commit_transaction_request, &req, &req.reply.token,
                             &cfdb_msg_commit_id_reply, &id, &err, &f->a),
                     0);
    return err;
}

/* Writes (or, with name NULL, clears) tenant id's map entry. */
static void put_tenant(fx *f, int64_t id, const char *name, uint8_t lock)
{
    t_commit t;
    tc_init(&t, -1, CFDB_COMMIT_FLAG_IS_LOCK_AWARE);
    cfdb_bytes k = map_key(&f->a, id);
    if (name)
        tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, k, entry_value(&f->a, id, name, lock));
    else
        tc_mut(&t, &f->a, CFDB_MUT_CLEAR_RANGE, k, wc_key_after(&f->a, k));
    assert_int_equal(tc_commit(f, &t), 0);
}

static void put_raw(fx *f, cfdb_bytes k, const char *v)
{
    t_commit t;
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, k, cfdb_bytes_str(v));
    assert_int_equal(tc_commit(f, &t), 0);
}

/* Two tenants and their data (and a key of each outside the other). */
static void two_tenants(fx *f)
{
    put_tenant(f, 1, "alpha", 0);
    put_tenant(f, 2, "beta", 0);
    put_raw(f, K(PA, "k1"), "a1");
    put_raw(f, K(PA, "k2"), "a2");
    put_raw(f, K(PA, "k3"), "a3");
    put_raw(f, K(PB, "k1"), "b1");
    put_raw(f, K("\x00\x00\x00\x00\x00\x00\x00\x00", "z"), "zero");
}

/* ---- storage requests in a tenant ---- */

static cfdb_uid owner_of(fx *f, cfdb_bytes abs_key)
{
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, abs_key, &ss, NULL, NULL, &f->a), 0);
    return ss;
}

static int t_get(fx *f, int64_t tenant, cfdb_bytes key, int64_t version, bool lock_aware, cfdb_get_value_reply *r)
{
    uint8_t p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)tenant >> (56 - 8 * i));
    uint8_t abs[64];
    memcpy(abs, p, 8);
    memcpy(abs + 8, key.ptr, key.len);
    cfdb_uid ss = owner_of(f, cfdb_bytes_make(abs, 8 + key.len));
    cfdb_get_value_request req;
    memset(&req, 0, sizeof req);
    req.key = key;
    req.version = version;
    req.tenantInfo.tenantId = tenant;
    if (lock_aware) {
        req.options.present = 1;
        req.options.value.type = CFDB_READ_NORMAL;
        req.options.value.lockAware = true;
    }
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, ss, &cfdb_msg_get_value_request, &req, &req.reply.token,
                             &cfdb_msg_get_value_reply, r, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    return r->error.present ? r->error.value.code : 0;
}

static int t_range(fx *f, cfdb_uid ss, int64_t tenant, cfdb_key_selector b, cfdb_key_selector e,
                   cfdb_get_key_values_reply *r)
{
    cfdb_get_key_values_request req;
    memset(&req, 0, sizeof req);
    req.begin = b;
    req.end = e;
    req.version = wc_grv(&f->w);
    req.limit = 100;
    req.limitBytes = 100000;
    req.tenantInfo.tenantId = tenant;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_KEY_VALUES), &cfdb_msg_get_key_values_request,
                             &req, &req.reply.token, &cfdb_msg_get_key_values_reply, r, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    return r->error.present ? r->error.value.code : 0;
}

static int t_get_key(fx *f, cfdb_uid ss, int64_t tenant, cfdb_key_selector sel, cfdb_get_key_reply *r)
{
    cfdb_get_key_request req;
    memset(&req, 0, sizeof req);
    req.sel = sel;
    req.version = wc_grv(&f->w);
    req.tenantInfo.tenantId = tenant;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(ss, CFDB_SS_GET_KEY), &cfdb_msg_get_key_request, &req,
                             &req.reply.token, &cfdb_msg_get_key_reply, r, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    return r->error.present ? r->error.value.code : 0;
}

static void assert_bytes(cfdb_bytes b, const char *want, size_t n)
{
    assert_int_equal(b.len, n);
    assert_memory_equal(b.ptr, want, n);
}
#define ASSERT_BYTES(b, lit) assert_bytes((b), (lit), sizeof(lit) - 1)

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

/* ---- GetTenantIdRequest ---- */

static int tenant_id(fx *f, const char *name, int64_t *id)
{
    cfdb_get_tenant_id_request req;
    memset(&req, 0, sizeof req);
    req.tenantName = cfdb_bytes_str(name);
    req.minTenantVersion = -2; /* latestVersion */
    cfdb_get_tenant_id_reply r;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, cfdb_adjusted_token(f->w.commit, CFDB_CP_GET_TENANT_ID),
                             &cfdb_msg_get_tenant_id_request, &req, &req.reply.token, &cfdb_msg_get_tenant_id_reply,
                             &r, &err, &f->a),
                     0);
    if (!err)
        *id = r.tenantId;
    return err;
}

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
     * to the clamped range's end (the prefix + \xff) */
    assert_int_equal(t_get_key(f, ss2, 1, (cfdb_key_selector){ CFDB_BYTES_LIT("k3"), true, 1 }, &gk), 0);
    ASSERT_BYTES(gk.sel.key, "\xff");

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
    ASSERT_BYTES(lrep.results.items[0].first.end, PA "\xff"); /* beta's boundary: clamped */
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
    /* a clear whose end leaves the prefix */
    tc_init(&t, 1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_CLEAR_RANGE, K(PA, "a"), K(PB, ""));
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
    /* a watch in a tenant that is not there */
    req.version = wc_grv(&f->w);
    tok = wc_send(&f->w, cfdb_adjusted_token(ss, CFDB_SS_WATCH_VALUE), &cfdb_msg_watch_value_request, &req,
                  &req.reply.token);
    assert_int_equal(wc_wait(&f->w, tok, &cfdb_msg_watch_value_reply, &r, &err, &f->a, 5 * SEC), 0);
    assert_int_equal(err, CFDB_ERR_TENANT_REMOVED);
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

/* ---- the database lock ---- */

static bool grv_locked(fx *f)
{
    cfdb_get_read_version_request req;
    memset(&req, 0, sizeof req);
    req.transactionCount = 1;
    req.flags = CFDB_GRV_PRIORITY_DEFAULT;
    req.maxVersion = -1;
    cfdb_get_read_version_reply r;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, f->w.grv, &cfdb_msg_get_read_version_request, &req, &req.reply.token,
                             &cfdb_msg_get_read_version_reply, &r, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    return r.locked;
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

static char *status_json(fx *f)
{
    cfdb_get_leader_request gl;
    cfdb_get_leader_reply lr;
    cfdb_reply_error err = 0;
    memset(&gl, 0, sizeof gl);
    gl.key = cfdb_bytes_str(f->key);
    assert_int_equal(wc_call(&f->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                             &cfdb_msg_get_leader_request, &gl, &gl.reply.token, &cfdb_msg_get_leader_reply, &lr, &err,
                             &f->a),
                     0);
    cfdb_bytes si = lr.leader.value.serializedInfo;
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
    return strndup((const char *)st.statusStr.ptr, st.statusStr.len);
}

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
    assert_int_equal(k.len, 10 + 4 + 32); /* prefix, StringRef length 32, 32 hex digits */
    assert_memory_equal(k.ptr + 10, "\x20\x00\x00\x00", 4);
    char pid[33];
    memcpy(pid, k.ptr + 14, 32);
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
    assert_memory_equal(v.ptr + o, "\x00\x00\x00\x00\x00\x00\x00\x00", 8); /* UnsetClass, CommandLineSource */
    o += 8;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf_published),   cmocka_unit_test(test_tenant_mode_flag),
        cmocka_unit_test(test_tenant_id),        cmocka_unit_test(test_tenant_reads),
        cmocka_unit_test(test_tenant_locked),    cmocka_unit_test(test_tenant_commit_checks),
        cmocka_unit_test(test_watch_tenant_removed), cmocka_unit_test(test_database_lock),
        cmocka_unit_test(test_workers_and_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
