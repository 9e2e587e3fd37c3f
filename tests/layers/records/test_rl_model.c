/* SPDX-License-Identifier: Apache-2.0 */
/* Randomized model test of the record store's index maintenance against a
 * cfdb-server of its own: transactions of 1-10 random saves and deletes of Person records
 * (200 primary keys) run against the store and against an in-memory model; after every
 * transaction the whole index space P + (2) and the record counts P + (4) are read back and
 * must equal what the model says, key and value bytes, computed here from the layouts (not
 * with the library's maintainers):
 *   name   VALUE  (2, "name", name, 1, id) = ''
 *   tags   VALUE fan-out  (2, "tags", tag, 1, id) = '' per tag
 *   uq     unique VALUE on u32  (2, "uq", u32, 1, id) = ''; a transaction that would give two
 *          records the same u32 must fail with 2000 and change nothing
 *   cnt    COUNT by color (unset color: the null group)  (2, "cnt", color) = LE int64
 *   sum    SUM of s32 by color  (2, "sum", color) = LE int64
 *   mx     MAX_EVER_LONG of u32, ungrouped  (2, "mx") = LE int64
 *   record count by record type key  (4, 1) = LE int64
 * Every 7th transaction runs under a fault from the server's control port (a commit that
 * answers commit_unknown_result, applied or not, or every connection dropped): the retry loop
 * runs the whole transaction again, and the Record Layer's saves (which read the old record)
 * must leave the indexes consistent with the records either way.
 * A second run (test_model_evolution) evolves the metadata between transactions: indexes
 * and a record type added while the store holds fewer and more than 200 records, checked by
 * the index entries and states against the model (details above test_model_evolution).
 * Seed: CFDB_RL_MODEL_SEED (default 1); the seed is printed so a failure can be replayed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../api/api_helpers.h"
#include "../../../src/layers/dir_io.h"
#include "error_codes.h"
#include "cfdb/records/store.h"
#include "rl_internal.h"
#include "rl_test_util.h"

#define IDS 200
/* Transactions: 400 (~2,100 operations, about 3 s), half under the sanitizers (which slow the
 * server too); CFDB_RL_MODEL_STEPS overrides. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STEPS 200
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STEPS 200
#endif
#endif
#ifndef STEPS
#define STEPS 400
#endif
#define TAGS 4

static cfdb_arena arena;     /* metadata, for the whole run */
static cfdb_arena step;      /* per transaction */
static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static int group_setup(void **state)
{
    (void)state;
    cfdb_arena_init(&arena);
    cfdb_arena_init(&step);
    return api_env_setup(NULL) ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cfdb_arena_free(&step);
    cfdb_arena_free(&arena);
    return api_env_teardown();
}

/* ---- the model ---- */

typedef struct rec {
    bool live;
    uint8_t name;       /* "n<name>" */
    uint8_t tags;       /* bit i: tag "t<i>" */
    uint8_t color;      /* 0: unset */
    int32_t s32;
    uint32_t u32;
} rec;

typedef struct model {
    rec r[IDS];
    int64_t count[4], sum[4];   /* by color 0 (null) .. 3 */
    bool touched[4];            /* a count/sum key exists */
    bool mx_set, rc_set;
    int64_t mx;
} model;

static const char *const tag_names[TAGS] = { "ta", "tb", "tc", "td" };

/* The model's side of a save or delete. false: a uniqueness violation. */
static bool model_apply(model *m, uint32_t id, const rec *nw)
{
    rec *old = &m->r[id];
    if (nw) {
        for (uint32_t j = 0; j < IDS; j++)
            if (j != id && m->r[j].live && m->r[j].u32 == nw->u32)
                return false;
        if (!m->mx_set || nw->u32 > m->mx)
            m->mx = nw->u32;
        m->mx_set = true;
    }
    if (old->live) {
        m->count[old->color]--;
        m->sum[old->color] -= old->s32;
    }
    if (nw) {
        m->count[nw->color]++;
        m->sum[nw->color] += nw->s32;
        m->touched[nw->color] = true;
        m->rc_set = true;
        *old = *nw;
        old->live = true;
    } else {
        old->live = false;
    }
    return true;
}

/* ---- the store's side ---- */

static cfdb_rl_metadata *md;
static const cfdb_rl_record_type *person_t;
static cfdb_bytes prefix;

static cfdb_pb_msg *to_msg(uint32_t id, const rec *r)
{
    const cfdb_pb_message *d = person_t->descriptor;
    cfdb_pb_msg *m = cfdb_pb_msg_new(&step, d);
    cfdb_pb_value v;
    v.i = id;
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "id"), v);
    char *name = cfdb_arena_alloc(&step, 8);
    snprintf(name, 8, "n%u", r->name);
    v.s = cfdb_bytes_str(name);
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "name"), v);
    for (int t = 0; t < TAGS; t++) {
        if (r->tags & (1u << t)) {
            v.s = cfdb_bytes_str(tag_names[t]);
            cfdb_pb_add(m, cfdb_pb_field_by_name(d, "tags"), v);
        }
    }
    if (r->color) {
        v.i = r->color;
        cfdb_pb_set(m, cfdb_pb_field_by_name(d, "color"), v);
    }
    v.i = r->s32;
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "s32"), v);
    v.u = r->u32;
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "u32"), v);
    return m;
}

typedef struct op {
    uint32_t id;
    bool del;
    rec r;
} op;

static int run_ops(FDBTransaction *tr, const op *ops, uint32_t n)
{
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_CREATE_OR_OPEN, &s);
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (ops[i].del) {
            cfdb_tuple pk;
            cfdb_tuple_init(&pk, &step);
            cfdb_tuple_add_int(&pk, 1);
            cfdb_tuple_add_int(&pk, ops[i].id);
            rc = cfdb_rl_store_delete(s, tr, &step, &pk, NULL);
        } else {
            rc = cfdb_rl_store_save(s, tr, &step, to_msg(ops[i].id, &ops[i].r), NULL);
        }
    }
    if (!rc)
        rc = cfdb_rl_store_prepare_commit(s, tr);
    cfdb_rl_store_free(s);
    return rc;
}

static void control(const char *cmd)
{
    char ans[256];
    if (api_server_control(&g_env.server, cmd, ans, sizeof ans))
        fail_msg("control '%s': %s", cmd, ans);
}

/* Runs the transaction with the retry loop; its first error that is not retryable. */
static int run_txn(const op *ops, uint32_t n, uint32_t *retries)
{
    FDBTransaction *tr = api_tr();
    int err;
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 100);
        err = run_ops(tr, ops, n);
        if (!err)
            err = api_commit(tr);
        if (!err || !fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, err))
            break;
        (*retries)++;
        if (api_on_error(tr, err))
            break;
    }
    fdb_transaction_destroy(tr);
    return err;
}

/* ---- checking ---- */

typedef struct kv {
    cfdb_bytes k, v;
} kv;

static int kv_cmp(const void *x, const void *y)
{
    const kv *a = x, *b = y;
    size_t n = a->k.len < b->k.len ? a->k.len : b->k.len;
    int c = memcmp(a->k.ptr, b->k.ptr, n);
    return c ? c : (a->k.len > b->k.len) - (a->k.len < b->k.len);
}

static cfdb_bytes le(int64_t v)
{
    uint8_t *b = cfdb_arena_alloc(&step, 8);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((uint64_t)v >> (8 * i));
    return cfdb_bytes_make(b, 8);
}

/* P + pack((ks, index name)) + pack(rest) */
static cfdb_bytes ikey(int64_t ks, const char *index, const cfdb_tuple *rest)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &step);
    cfdb_tuple_add_int(&t, ks);
    if (index)
        cfdb_tuple_add_cstr(&t, index);
    for (uint32_t i = 0; rest && i < cfdb_tuple_count(rest); i++)
        cfdb_tuple_add_elem(&t, cfdb_tuple_get(rest, i));
    cfdb_bytes out;
    assert_int_equal(cfdb_tuple_pack(&step, prefix, &t, &out), 0);
    return out;
}

static void add_color(cfdb_tuple *t, uint8_t color)
{
    if (color)
        cfdb_tuple_add_int(t, color);
    else
        cfdb_tuple_add_null(t);
}

static uint32_t expected(const model *m, kv *out)
{
    uint32_t n = 0;
    cfdb_bytes empty = { (const uint8_t *)"", 0 };
    for (uint32_t id = 0; id < IDS; id++) {
        const rec *r = &m->r[id];
        if (!r->live)
            continue;
        cfdb_tuple t;
        char name[8];
        snprintf(name, sizeof name, "n%u", r->name);
        cfdb_tuple_init(&t, &step);
        cfdb_tuple_add_cstr(&t, name);
        cfdb_tuple_add_int(&t, 1);
        cfdb_tuple_add_int(&t, id);
        out[n++] = (kv){ ikey(2, "name", &t), empty };
        for (int g = 0; g < TAGS; g++) {
            if (!(r->tags & (1u << g)))
                continue;
            cfdb_tuple_init(&t, &step);
            cfdb_tuple_add_cstr(&t, tag_names[g]);
            cfdb_tuple_add_int(&t, 1);
            cfdb_tuple_add_int(&t, id);
            out[n++] = (kv){ ikey(2, "tags", &t), empty };
        }
        cfdb_tuple_init(&t, &step);
        cfdb_tuple_add_int(&t, (int64_t)r->u32);
        cfdb_tuple_add_int(&t, 1);
        cfdb_tuple_add_int(&t, id);
        out[n++] = (kv){ ikey(2, "uq", &t), empty };
    }
    for (uint8_t c = 0; c < 4; c++) {
        if (!m->touched[c])
            continue;
        cfdb_tuple t;
        cfdb_tuple_init(&t, &step);
        add_color(&t, c);
        out[n++] = (kv){ ikey(2, "cnt", &t), le(m->count[c]) };
        out[n++] = (kv){ ikey(2, "sum", &t), le(m->sum[c]) };
    }
    if (m->mx_set)
        out[n++] = (kv){ ikey(2, "mx", NULL), le(m->mx) };
    if (m->rc_set) {
        int64_t live = 0;
        for (uint32_t id = 0; id < IDS; id++)
            live += m->r[id].live;
        cfdb_tuple t;
        cfdb_tuple_init(&t, &step);
        cfdb_tuple_add_int(&t, 1);
        out[n++] = (kv){ ikey(4, NULL, &t), le(live) };
    }
    qsort(out, n, sizeof *out, kv_cmp);
    return n;
}

static void check(const model *m, uint32_t at)
{
    static kv want[IDS * (3 + TAGS) + 16];
    uint32_t nw = expected(m, want);
    /* P + (2) ... P + (4) + 0xff: the index space, secondary space and record counts */
    cfdb_bytes b = ikey(2, NULL, NULL), e = ikey(4, NULL, NULL);
    cfdb_bytes e2;
    assert_int_equal(dir_concat(&step, e, CFDB_BYTES_LIT("\xff"), &e2), 0);
    dir_kv *got;
    uint32_t ng;
    FDBTransaction *tr = api_tr();
    int err;
    while ((err = dir_get_all(tr, &step, b, e2, &got, &ng)))
        assert_int_equal(api_on_error(tr, err), 0);
    fdb_transaction_destroy(tr);
    uint32_t i = 0;
    for (; i < nw && i < ng; i++)
        if (!cfdb_bytes_eq(got[i].key, want[i].k) || !cfdb_bytes_eq(got[i].value, want[i].v))
            break;
    if (i < nw || i < ng) {
        print_message("step %u: first difference at pair %u (%u stored, %u expected)\n", at, i, ng, nw);
        for (int side = 0; side < 2; side++) {
            cfdb_bytes k = side ? (i < nw ? want[i].k : (cfdb_bytes){ 0 }) : (i < ng ? got[i].key : (cfdb_bytes){ 0 });
            cfdb_bytes v = side ? (i < nw ? want[i].v : (cfdb_bytes){ 0 }) : (i < ng ? got[i].value : (cfdb_bytes){ 0 });
            print_message("%s: ", side ? "want" : "got ");
            for (uint32_t j = prefix.len; j < k.len; j++)
                print_message("%02x ", k.ptr[j]);
            print_message("= ");
            for (uint32_t j = 0; j < v.len; j++)
                print_message("%02x ", v.ptr[j]);
            print_message("\n");
        }
        fail_msg("indexes differ from the records");
    }
}

static void test_model(void **state)
{
    (void)state;
    const char *env = getenv("CFDB_RL_MODEL_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 1;
    print_message("CFDB_RL_MODEL_SEED=%llu\n", (unsigned long long)seed);
    rng = seed * 2654435761u + 88172645463325252ull;
    const char *steps_env = getenv("CFDB_RL_MODEL_STEPS");
    uint32_t steps = steps_env ? (uint32_t)strtoul(steps_env, NULL, 10) : STEPS;

    cfdb_pb_msg *m = rlt_base_metadata(&arena, 1);
    rlt_kex_into(&arena, m, "record_count_key", cfdb_kex_record_type_key(&arena));
#define F(n) cfdb_kex_field(&arena, n, CFDB_KEX_SCALAR)
    rlt_add_index(&arena, m, "name", "value", F("name"), "Person");
    rlt_add_index(&arena, m, "tags", "value", cfdb_kex_field(&arena, "tags", CFDB_KEX_FAN_OUT), "Person");
    cfdb_pb_msg *uq = rlt_add_index(&arena, m, "uq", "value", F("u32"), "Person"), *opt;
    rl_add_msg(uq, "options", &opt);
    rl_set_bytes(opt, "key", cfdb_bytes_str("unique"));
    rl_set_bytes(opt, "value", cfdb_bytes_str("true"));
    rlt_add_index(&arena, m, "cnt", "count", cfdb_kex_grouping(&arena, F("color"), 0), "Person");
    const cfdb_kex *cs[] = { F("color"), F("s32") };
    rlt_add_index(&arena, m, "sum", "sum", cfdb_kex_grouping(&arena, cfdb_kex_then(&arena, cs, 2), 1),
                  "Person");
    rlt_add_index(&arena, m, "mx", "max_ever_long", cfdb_kex_grouping(&arena, F("u32"), 1), "Person");
#undef F
    md = rlt_load(&arena, m);
    person_t = cfdb_rl_record_type_by_name(md, "Person");
    char pbuf[64];
    api_prefix(pbuf, sizeof pbuf, "rlmodel");
    prefix = cfdb_bytes_str(cfdb_arena_dup(&arena, pbuf, strlen(pbuf) + 1));

    static model cur, next;
    memset(&cur, 0, sizeof cur);
    uint32_t ops_done = 0, refused = 0, retries = 0, faults = 0;
    static const char *const fault_cmds[] = { "fail-commits 1 applied", "fail-commits 1 unapplied", "drop" };
    for (uint32_t s = 0; s < steps; s++) {
        cfdb_arena_reset(&step);
        op ops[10];
        uint32_t n = 1 + rnd(10);
        next = cur;
        bool ok = true;
        for (uint32_t i = 0; i < n; i++) {
            ops[i].id = rnd(IDS);
            ops[i].del = rnd(4) == 0;
            rec *r = &ops[i].r;
            memset(r, 0, sizeof *r);
            r->name = (uint8_t)rnd(30);
            r->tags = (uint8_t)rnd(1u << TAGS);
            r->color = (uint8_t)rnd(3);   /* unset, RED, BLUE (a closed enum) */
            r->s32 = (int32_t)rnd(201) - 100;
            r->u32 = rnd(20000);
            ok = ok && model_apply(&next, ops[i].id, ops[i].del ? NULL : r);
        }
        if (s % 7 == 3) {
            control(fault_cmds[faults++ % 3]);
        }
        if (getenv("CFDB_RL_MODEL_TRACE"))
            for (uint32_t i = 0; i < n; i++)
                print_message("step %u op %u: %s id %u color %u s32 %d u32 %u (was live %d color %u)\n", s, i,
                              ops[i].del ? "del" : "save", ops[i].id, ops[i].r.color, ops[i].r.s32,
                              ops[i].r.u32, cur.r[ops[i].id].live, cur.r[ops[i].id].color);
        int err = run_txn(ops, n, &retries);
        if (s % 7 == 3)
            control("fail-commits 0");
        if (ok) {
            if (err)
                fail_msg("step %u: %d", s, err);
            cur = next;
            ops_done += n;
        } else {
            assert_int_equal(err, CFDB_ERR_CLIENT_INVALID_OPERATION);   /* uniqueness */
            refused++;
        }
        check(&cur, s);
    }
    print_message("%u operations in %u transactions, %u refused for uniqueness, %u retries\n", ops_done,
                  steps, refused, retries);
    assert_true(ops_done > steps * 4);
    assert_true(refused > 0);
    assert_true(retries > 0);
    cfdb_rl_metadata_free(md);
}

/* ---- metadata evolution ----
 * Types and indexes added between transactions, as an application's metadata evolves:
 * generation g has metadata version g; each generation adds an index (last modified g), the
 * third also the record type Order (since_version 3, with its index "who"). A generation
 * starts when the store holds a given number of records, below and above
 * FDBRecordStore.MAX_RECORDS_FOR_REBUILD (200): the first transaction opening the store with
 * it must build each new index in line (at most 200 records), leave it readable without
 * building when it is on new types only, else disable it. After every transaction the index
 * space and the index states are compared with the model: a readable index holds exactly
 * the model's entries, a disabled one none. */

#define EVO_IDS 400
#define EVO_ORDERS 50
#define EVO_GENS 6
/* Orders are keyed apart from Persons (whose keys begin with their record type key 1). */
#define ORDER_ID(i) (1000 + (int64_t)(i))

typedef struct evo_model {
    rec p[EVO_IDS];
    bool order_live[EVO_ORDERS];
    uint8_t order_who[EVO_ORDERS];
    bool cnt_touched[4];             /* cnt keys that exist (built or updated since) */
} evo_model;

typedef struct evo_index {
    const char *name;
    int gen;                         /* the generation that adds it */
} evo_index;

static const evo_index evo_indexes[] = {
    { "name", 1 }, { "col", 2 }, { "who", 3 }, { "cnt", 4 }, { "s32", 5 }, { "tag", 6 },
};
#define EVO_NIX ((int)(sizeof evo_indexes / sizeof evo_indexes[0]))
/* When generation g + 1 starts: the store holds at least this many records. */
static const uint32_t evo_start[EVO_GENS] = { 0, 40, 90, 150, 230, 260 };

static cfdb_rl_metadata *evo_md[EVO_GENS + 1];
static const cfdb_rl_record_type *order_t;

static cfdb_rl_metadata *evo_metadata(int gen)
{
    cfdb_pb_msg *m = rlt_base_metadata(&arena, gen);
#define F(n) cfdb_kex_field(&arena, n, CFDB_KEX_SCALAR)
    const cfdb_kex *roots[] = {
        F("name"), F("color"), F("who"), cfdb_kex_grouping(&arena, F("color"), 0), F("s32"),
        cfdb_kex_field(&arena, "tags", CFDB_KEX_FAN_OUT),
    };
#undef F
    static const char *const types[] = { "value", "value", "value", "count", "value", "value" };
    for (int i = 0; i < EVO_NIX; i++) {
        if (evo_indexes[i].gen > gen)
            continue;
        cfdb_pb_msg *ix = rlt_add_index(&arena, m, evo_indexes[i].name, types[i], roots[i],
                                        i == 2 ? "Order" : "Person");
        rl_set_int(ix, "last_modified_version", evo_indexes[i].gen);
        rl_set_int(ix, "added_version", evo_indexes[i].gen);
    }
    if (gen >= 3)
        rl_set_int(rl_at(m, "record_types", 1)->m, "since_version", 3);
    return rlt_load(&arena, m);
}

static uint32_t evo_live(const evo_model *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < EVO_IDS; i++)
        n += m->p[i].live;
    for (uint32_t i = 0; i < EVO_ORDERS; i++)
        n += m->order_live[i];
    return n;
}

typedef struct evo_op {
    bool order, del;
    uint32_t id;
    rec r;
    uint8_t who;
} evo_op;

static const cfdb_rl_metadata *evo_cur;

static int evo_run_ops(FDBTransaction *tr, const evo_op *ops, uint32_t n)
{
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open(tr, evo_cur, prefix, CFDB_RL_CREATE_OR_OPEN, &s);
    for (uint32_t i = 0; i < n && !rc; i++) {
        const evo_op *o = &ops[i];
        cfdb_tuple pk;
        cfdb_tuple_init(&pk, &step);
        if (!o->order)
            cfdb_tuple_add_int(&pk, 1);
        cfdb_tuple_add_int(&pk, o->order ? ORDER_ID(o->id) : o->id);
        if (o->del) {
            rc = cfdb_rl_store_delete(s, tr, &step, &pk, NULL);
        } else if (o->order) {
            const cfdb_pb_message *d = order_t->descriptor;
            cfdb_pb_msg *msg = cfdb_pb_msg_new(&step, d);
            cfdb_pb_value v = { .i = ORDER_ID(o->id) };
            cfdb_pb_set(msg, cfdb_pb_field_by_name(d, "order_id"), v);
            char *who = cfdb_arena_alloc(&step, 8);
            snprintf(who, 8, "w%u", o->who);
            v.s = cfdb_bytes_str(who);
            cfdb_pb_set(msg, cfdb_pb_field_by_name(d, "who"), v);
            rc = cfdb_rl_store_save(s, tr, &step, msg, NULL);
        } else {
            rc = cfdb_rl_store_save(s, tr, &step, to_msg(o->id, &o->r), NULL);
        }
    }
    cfdb_rl_store_free(s);
    return rc;
}

static void evo_txn(const evo_op *ops, uint32_t n)
{
    FDBTransaction *tr = api_tr();
    int err;
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 100);
        err = evo_run_ops(tr, ops, n);
        if (!err)
            err = api_commit(tr);
        if (!err || !fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, err))
            break;
        if (api_on_error(tr, err))
            break;
    }
    fdb_transaction_destroy(tr);
    if (err)
        fail_msg("evolution transaction: %d", err);
}

static void evo_apply(evo_model *m, const evo_op *o, const cfdb_rl_index_state *st)
{
    if (o->order) {
        m->order_live[o->id] = !o->del;
        m->order_who[o->id] = o->who;
        return;
    }
    rec *r = &m->p[o->id];
    if (!o->del && st[3] != CFDB_RL_INDEX_DISABLED)
        m->cnt_touched[o->r.color] = true;   /* an ADD on the new record's group */
    if (o->del) {
        r->live = false;
    } else {
        *r = o->r;
        r->live = true;
    }
}

/* The pairs the model expects under P + (2) for the indexes of generation gen, in states st. */
static uint32_t evo_expected(const evo_model *m, int gen, const cfdb_rl_index_state *st, kv *out)
{
    uint32_t n = 0;
    cfdb_bytes empty = { (const uint8_t *)"", 0 };
    bool on[EVO_NIX];
    for (int i = 0; i < EVO_NIX; i++)
        on[i] = evo_indexes[i].gen <= gen && st[i] != CFDB_RL_INDEX_DISABLED;
    int64_t count[4] = { 0 };
    for (uint32_t id = 0; id < EVO_IDS; id++) {
        const rec *r = &m->p[id];
        if (!r->live)
            continue;
        count[r->color]++;
        cfdb_tuple t;
        if (on[0]) {
            char name[8];
            snprintf(name, sizeof name, "n%u", r->name);
            cfdb_tuple_init(&t, &step);
            cfdb_tuple_add_cstr(&t, name);
            cfdb_tuple_add_int(&t, 1);
            cfdb_tuple_add_int(&t, id);
            out[n++] = (kv){ ikey(2, "name", &t), empty };
        }
        if (on[1]) {
            cfdb_tuple_init(&t, &step);
            add_color(&t, r->color);
            cfdb_tuple_add_int(&t, 1);
            cfdb_tuple_add_int(&t, id);
            out[n++] = (kv){ ikey(2, "col", &t), empty };
        }
        if (on[4]) {
            cfdb_tuple_init(&t, &step);
            cfdb_tuple_add_int(&t, r->s32);
            cfdb_tuple_add_int(&t, 1);
            cfdb_tuple_add_int(&t, id);
            out[n++] = (kv){ ikey(2, "s32", &t), empty };
        }
        for (int g = 0; on[5] && g < TAGS; g++) {
            if (!(r->tags & (1u << g)))
                continue;
            cfdb_tuple_init(&t, &step);
            cfdb_tuple_add_cstr(&t, tag_names[g]);
            cfdb_tuple_add_int(&t, 1);
            cfdb_tuple_add_int(&t, id);
            out[n++] = (kv){ ikey(2, "tag", &t), empty };
        }
    }
    for (uint32_t id = 0; on[2] && id < EVO_ORDERS; id++) {
        if (!m->order_live[id])
            continue;
        char who[8];
        snprintf(who, sizeof who, "w%u", m->order_who[id]);
        cfdb_tuple t;
        cfdb_tuple_init(&t, &step);
        cfdb_tuple_add_cstr(&t, who);
        cfdb_tuple_add_int(&t, ORDER_ID(id));
        out[n++] = (kv){ ikey(2, "who", &t), empty };
    }
    for (uint8_t c = 0; on[3] && c < 4; c++) {
        if (!m->cnt_touched[c])
            continue;
        cfdb_tuple t;
        cfdb_tuple_init(&t, &step);
        add_color(&t, c);
        out[n++] = (kv){ ikey(2, "cnt", &t), le(count[c]) };
    }
    qsort(out, n, sizeof *out, kv_cmp);
    return n;
}

static int evo_states_fn(FDBTransaction *tr, cfdb_rl_index_state *st)
{
    cfdb_rl_store *s;
    int rc = cfdb_rl_store_open(tr, evo_cur, prefix, CFDB_RL_OPEN, &s);
    for (int i = 0; !rc && i < EVO_NIX; i++)
        st[i] = cfdb_rl_index_by_name(evo_cur, evo_indexes[i].name)
                    ? cfdb_rl_store_index_state(s, evo_indexes[i].name) : CFDB_RL_INDEX_DISABLED;
    cfdb_rl_store_free(s);
    return rc;
}

static void evo_check(const evo_model *m, int gen, const cfdb_rl_index_state *want_st, uint32_t at)
{
    cfdb_rl_index_state st[EVO_NIX];
    FDBTransaction *tr = api_tr();
    int err;
    while ((err = evo_states_fn(tr, st)))
        assert_int_equal(api_on_error(tr, err), 0);
    for (int i = 0; i < EVO_NIX; i++)
        if (evo_indexes[i].gen <= gen && st[i] != want_st[i])
            fail_msg("step %u: index %s is %d, the model says %d", at, evo_indexes[i].name, st[i],
                     want_st[i]);
    cfdb_bytes b = ikey(2, NULL, NULL), e;
    assert_int_equal(dir_concat(&step, b, CFDB_BYTES_LIT("\xff"), &e), 0);
    dir_kv *got;
    uint32_t ng;
    while ((err = dir_get_all(tr, &step, b, e, &got, &ng)))
        assert_int_equal(api_on_error(tr, err), 0);
    fdb_transaction_destroy(tr);
    static kv want[EVO_IDS * (4 + TAGS) + EVO_ORDERS + 8];
    uint32_t nw = evo_expected(m, gen, want_st, want);
    uint32_t i = 0;
    for (; i < nw && i < ng; i++)
        if (!cfdb_bytes_eq(got[i].key, want[i].k) || !cfdb_bytes_eq(got[i].value, want[i].v))
            break;
    if (i < nw || i < ng)
        fail_msg("step %u (generation %d): index entries differ from the model at pair %u (%u "
                 "stored, %u expected)", at, gen, i, ng, nw);
}

static void test_model_evolution(void **state)
{
    (void)state;
    const char *env = getenv("CFDB_RL_MODEL_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 1;
    rng = seed * 2654435761u + 12345;
    for (int g = 1; g <= EVO_GENS; g++)
        evo_md[g] = evo_metadata(g);
    person_t = cfdb_rl_record_type_by_name(evo_md[1], "Person");
    order_t = cfdb_rl_record_type_by_name(evo_md[1], "Order");
    char pbuf[64];
    api_prefix(pbuf, sizeof pbuf, "rlevolve");
    prefix = cfdb_bytes_str(cfdb_arena_dup(&arena, pbuf, strlen(pbuf) + 1));

    static evo_model m;
    memset(&m, 0, sizeof m);
    cfdb_rl_index_state st[EVO_NIX];
    for (int i = 0; i < EVO_NIX; i++)
        st[i] = CFDB_RL_INDEX_READABLE;
    int gen = 1;
    evo_cur = evo_md[1];
    uint32_t built = 0, disabled = 0, new_type = 0, s = 0;
    for (; s < 3000 && (gen < EVO_GENS || s % 20); s++) {
        cfdb_arena_reset(&step);
        if (gen < EVO_GENS && evo_live(&m) >= evo_start[gen]) {
            /* the next generation: what its first transaction must do to the new indexes */
            gen++;
            evo_cur = evo_md[gen];
            person_t = cfdb_rl_record_type_by_name(evo_cur, "Person");   /* its own pool */
            order_t = cfdb_rl_record_type_by_name(evo_cur, "Order");
            uint32_t live = evo_live(&m);
            for (int i = 0; i < EVO_NIX; i++) {
                if (evo_indexes[i].gen != gen)
                    continue;
                if (i == 2) {
                    st[i] = CFDB_RL_INDEX_READABLE;   /* on a type new since the store's version */
                    new_type++;
                } else if (live <= 200) {
                    st[i] = CFDB_RL_INDEX_READABLE;
                    built++;
                    if (i == 3)
                        for (uint32_t id = 0; id < EVO_IDS; id++)
                            if (m.p[id].live)
                                m.cnt_touched[m.p[id].color] = true;
                } else {
                    st[i] = CFDB_RL_INDEX_DISABLED;
                    disabled++;
                }
                print_message("generation %d: index %s with %u records: %s\n", gen,
                              evo_indexes[i].name, live,
                              st[i] == CFDB_RL_INDEX_DISABLED ? "disabled" : "readable");
            }
        }
        evo_op ops[10];
        uint32_t n = 1 + rnd(10);
        for (uint32_t i = 0; i < n; i++) {
            evo_op *o = &ops[i];
            memset(o, 0, sizeof *o);
            o->order = gen >= 3 && rnd(5) == 0;
            o->id = rnd(o->order ? EVO_ORDERS : EVO_IDS);
            o->del = rnd(5) == 0;
            o->who = (uint8_t)rnd(7);
            o->r.name = (uint8_t)rnd(30);
            o->r.tags = (uint8_t)rnd(1u << TAGS);
            o->r.color = (uint8_t)rnd(3);
            o->r.s32 = (int32_t)rnd(201) - 100;
            o->r.u32 = rnd(20000);
        }
        evo_txn(ops, n);
        for (uint32_t i = 0; i < n; i++)
            evo_apply(&m, &ops[i], st);
        evo_check(&m, gen, st, s);
    }
    print_message("%u transactions, %u records, %u indexes built in line, %u disabled, %u on a "
                  "new type\n", s, evo_live(&m), built, disabled, new_type);
    assert_int_equal(gen, EVO_GENS);
    assert_true(built >= 2);
    assert_true(disabled >= 2);
    assert_int_equal(new_type, 1);
    for (int g = 1; g <= EVO_GENS; g++)
        cfdb_rl_metadata_free(evo_md[g]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_model_evolution),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
