/* Shared pieces of the tenant and configuration tests (tenant_fixture.h). */
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
#include "fdb_ref.h"
#include "server_embed.h"

#include "tenant_fixture.h"

fx *fx_start(int tenant_mode)
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
    assert_int_equal(se_start(f, &cfg), 0);
    return f;
}

void fx_stop(fx *f)
{
    se_stop(f);
    free(f);
}

/* ---- TenantMapEntry: written with cfdb_msg_tenant_map_entry (src/wire/msg_tenant.c), read back
 * with the independent reader below ---- */

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
cfdb_bytes entry_value(cfdb_arena *a, int64_t id, const char *name, uint8_t lock)
{
    cfdb_tenant_map_entry e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.tenantName = cfdb_bytes_str(name);
    e.tenantLockState = lock;
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &cfdb_msg_tenant_map_entry, &e, 0), 0);
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

cfdb_bytes map_key(cfdb_arena *a, int64_t id)
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


void tc_init(t_commit *t, int64_t tenant, uint32_t flags)
{
    memset(t, 0, sizeof *t);
    t->tenant = tenant;
    t->flags = flags;
}

void tc_mut(t_commit *t, cfdb_arena *a, uint8_t type, cfdb_bytes k, cfdb_bytes v)
{
    t->muts[t->nmuts++] = (cfdb_mutation){ type, k, v };
    if (type == CFDB_MUT_CLEAR_RANGE)
        t->writes[t->nwrites++] = (cfdb_key_range){ k, v };
    else if (type != CFDB_MUT_SET_VERSIONSTAMPED_KEY)
        t->writes[t->nwrites++] = (cfdb_key_range){ k, wc_key_after(a, k) };
}

int tc_commit(fx *f, const t_commit *t)
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
void put_tenant(fx *f, int64_t id, const char *name, uint8_t lock)
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

void put_raw(fx *f, cfdb_bytes k, const char *v)
{
    t_commit t;
    tc_init(&t, -1, 0);
    tc_mut(&t, &f->a, CFDB_MUT_SET_VALUE, k, cfdb_bytes_str(v));
    assert_int_equal(tc_commit(f, &t), 0);
}

/* Two tenants and their data (and a key of each outside the other). */
void two_tenants(fx *f)
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

cfdb_uid owner_of(fx *f, cfdb_bytes abs_key)
{
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, abs_key, &ss, NULL, NULL, &f->a), 0);
    return ss;
}

int t_get(fx *f, int64_t tenant, cfdb_bytes key, int64_t version, bool lock_aware, cfdb_get_value_reply *r)
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

int t_range(fx *f, cfdb_uid ss, int64_t tenant, cfdb_key_selector b, cfdb_key_selector e,
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

int t_get_key(fx *f, cfdb_uid ss, int64_t tenant, cfdb_key_selector sel, cfdb_get_key_reply *r)
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

void assert_bytes(cfdb_bytes b, const char *want, size_t n)
{
    assert_int_equal(b.len, n);
    assert_memory_equal(b.ptr, want, n);
}

/* ---- GetTenantIdRequest ---- */

int tenant_id(fx *f, const char *name, int64_t *id)
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

/* ---- the database lock ---- */

bool grv_locked(fx *f)
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

/* The cluster controller's ClusterInterface, from the leader this server elects. */
cfdb_cluster_interface cluster_iface(fx *f)
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
    return cc.clientInterface;
}

/* The status document (ClusterInterface.databaseStatus); free() it. */
char *status_json(fx *f)
{
    cfdb_cluster_interface ci = cluster_iface(f);
    cfdb_reply_error err = 0;
    cfdb_status_request sr;
    cfdb_status_reply st;
    memset(&sr, 0, sizeof sr);
    assert_int_equal(wc_call(&f->w, ci.databaseStatus.endpoint.token, &cfdb_msg_status_request, &sr,
                             &sr.reply.token, &cfdb_msg_status_reply, &st, &err, &f->a),
                     0);
    assert_int_equal(err, 0);
    return strndup((const char *)st.statusStr.ptr, st.statusStr.len);
}
