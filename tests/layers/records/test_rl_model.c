/* SPDX-License-Identifier: Apache-2.0 */
/* Randomized model test of the record store's index maintenance (issue 13, item 8) against a
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
