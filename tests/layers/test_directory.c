/* SPDX-License-Identifier: Apache-2.0 */
/* Directory layer (include/cfdb/directory.h) against a cfdb-server of its own, through the
 * public fdb_c.h API:
 *   - replay: the operations FoundationDB 7.3.77's Python binding ran in
 *     check-python-binding.sh (python_smoke.py layers_directory_script), with the allocator
 *     fed the same random draws the binding made (tests/vectors/layers/directory_draws.txt),
 *     give byte for byte the key/values the binding wrote (directory_tree.kv);
 *   - the binding's tree, loaded raw, opens, lists and reads in cfdb;
 *   - the default layout's keys (node subspace \xfe, version, allocator);
 *   - every directory error, partitions, moves, removal of contents, and concurrent
 *     create_or_open from several threads agreeing on one prefix. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../api/api_helpers.h"
#include "cfdb/directory.h"
#include "error_codes.h"
#include "cfdb/subspace.h"
#include "cfdb/tuple.h"
#include "layers_vectors.h"

#define PY_PREFIX "layers/"

/* ---- helpers ---- */

#define P(...) ((const cfdb_bytes[]){ __VA_ARGS__ })
#define N(s) CFDB_BYTES_LIT(s)
#define NP(...) (uint32_t)(sizeof((const cfdb_bytes[]){ __VA_ARGS__ }) / sizeof(cfdb_bytes))
#define PATH(...) P(__VA_ARGS__), NP(__VA_ARGS__)

typedef int (*txn_fn)(FDBTransaction *tr, cfdb_arena *a, void *ctx);

/* Runs fn in a transaction with the usual retry loop; the arena is reset per attempt. */
static int run(txn_fn fn, void *ctx, cfdb_arena *a)
{
    FDBTransaction *tr = api_tr();
    int err;
    for (;;) {
        cfdb_arena_reset(a);
        err = fn(tr, a, ctx);
        if (!err)
            err = api_commit(tr);
        if (!err)
            break;
        if (err >= 2250 && err <= 2269) /* layer errors are final */
            break;
        if (err == CFDB_ERR_CLIENT_INVALID_OPERATION || api_on_error(tr, err))
            break;
    }
    fdb_transaction_destroy(tr);
    return err;
}

static void clear_all(void)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_clear_range(tr, S(""), 0, S("\xff"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

typedef struct {
    cfdb_bytes key;
    cfdb_bytes value;
} kv_t;
typedef kv_t dir_kv_t;

/* Every key/value in [begin, end) (committed state). */
static int dump(cfdb_arena *a, const char *begin, const char *end, dir_kv_t **out, uint32_t *n)
{
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(begin), L(begin)),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(end), L(end)), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    int err = api_wait(f);
    const FDBKeyValue *kv = NULL;
    int count = 0;
    fdb_bool_t more = 0;
    if (!err)
        err = fdb_future_get_keyvalue_array(f, &kv, &count, &more);
    if (!err) {
        *out = cfdb_arena_alloc(a, (size_t)(count + 1) * sizeof **out);
        for (int i = 0; i < count; i++) {
            (*out)[i].key = cfdb_bytes_make(cfdb_arena_dup(a, kv[i].key, (size_t)kv[i].key_length), (size_t)kv[i].key_length);
            (*out)[i].value = cfdb_bytes_make(cfdb_arena_dup(a, kv[i].value, (size_t)kv[i].value_length),
                                              (size_t)kv[i].value_length);
        }
        *n = (uint32_t)count;
        if (more)
            err = CFDB_ERR_INTERNAL_ERROR; /* the trees here are small */
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return err;
}

static bool names_are(cfdb_bytes *names, uint32_t n, const char *const *want, uint32_t wn)
{
    if (n != wn)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!cfdb_bytes_eq(names[i], cfdb_bytes_str(want[i])))
            return false;
    return true;
}

/* Replayed allocator draws. */
typedef struct {
    const int64_t *v;
    uint32_t n, next;
} draws_t;

static uint64_t replay_draw(void *ctx)
{
    draws_t *d = ctx;
    if (d->next >= d->n) {
        fprintf(stderr, "more allocator draws than the binding made\n");
        abort();
    }
    return (uint64_t)d->v[d->next++];
}

/* ---- the binding's script, replayed ---- */

typedef struct {
    cfdb_directory_layer L, M;
    int step;
    cfdb_bytes users_prefix;
    uint8_t users_buf[64];
} script_t;

static int script_step(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    script_t *s = ctx;
    cfdb_directory d;
    const cfdb_bytes empty = N("");
    switch (s->step) {
    case 0: return cfdb_directory_create_or_open(&s->L, tr, a, PATH(N("app")), empty, &d);
    case 1: {
        int err = cfdb_directory_create_or_open(&s->L, tr, a, PATH(N("app"), N("users")), N("table"), &d);
        if (!err) {
            memcpy(s->users_buf, d.prefix.ptr, d.prefix.len);
            s->users_prefix = cfdb_bytes_make(s->users_buf, d.prefix.len);
        }
        return err;
    }
    case 2: return cfdb_directory_create(&s->L, tr, a, PATH(N("app"), N("orders"), N("2024")), empty, NULL, &d);
    case 3: return cfdb_directory_create_or_open(&s->L, tr, a, PATH(N("part")), N("partition"), &d);
    case 4: return cfdb_directory_create_or_open(&s->L, tr, a, PATH(N("part"), N("inner"), N("deep")), N("x"), &d);
    case 5:
        return cfdb_directory_move(&s->L, tr, a, PATH(N("app"), N("orders")), PATH(N("app"), N("archive")), &d);
    case 6: return cfdb_directory_create_or_open(&s->L, tr, a, PATH(N("tmp"), N("a")), empty, &d);
    case 7: return cfdb_directory_remove(&s->L, tr, a, PATH(N("tmp")));
    case 8:
        return cfdb_directory_create_or_open(&s->L, tr, a,
                                             PATH(N("names"), N("nul\0name"), N("\xc3\xbc\xc3\xb1\xc3\xad\xf0\x9f\x98\x80")),
                                             empty, &d);
    case 9:
        return cfdb_directory_move(&s->L, tr, a, PATH(N("part"), N("inner"), N("deep")), PATH(N("part"), N("deep2")), &d);
    case 10: {
        cfdb_subspace users = { s->users_prefix };
        cfdb_tuple k, v;
        cfdb_tuple_init(&k, a);
        cfdb_tuple_init(&v, a);
        cfdb_bytes kb, vb;
        int err = cfdb_tuple_add_cstr(&k, "alice");
        if (!err)
            err = cfdb_tuple_add_int(&k, 1);
        if (!err)
            err = cfdb_tuple_add_cstr(&v, "x");
        if (!err)
            err = cfdb_tuple_add_double(&v, 2.5);
        if (!err)
            err = cfdb_subspace_pack(&users, a, &k, &kb);
        if (!err)
            err = cfdb_tuple_pack(a, (cfdb_bytes){ 0 }, &v, &vb);
        if (!err)
            fdb_transaction_set(tr, kb.ptr, (int)kb.len, vb.ptr, (int)vb.len);
        return err;
    }
    case 11: {
        cfdb_bytes p = N(PY_PREFIX "manual/m1/");
        return cfdb_directory_create(&s->M, tr, a, PATH(N("m1")), empty, &p, &d);
    }
    case 12: return cfdb_directory_create(&s->M, tr, a, PATH(N("m1"), N("sub")), empty, NULL, &d);
    case 13: {
        cfdb_bytes p = N(PY_PREFIX "manual/m2/");
        return cfdb_directory_create(&s->M, tr, a, PATH(N("m2")), N("lay"), &p, &d);
    }
    }
    return CFDB_ERR_INTERNAL_ERROR;
}

static void py_layers(script_t *s)
{
    memset(s, 0, sizeof *s);
    cfdb_directory_layer_init_custom(&s->L, N(PY_PREFIX "\xfe"), N(PY_PREFIX), false);
    cfdb_directory_layer_init_custom(&s->M, N(PY_PREFIX "manual/\xfe"), N(PY_PREFIX "manual/"), true);
}

static void test_replay_python_script(void **state)
{
    cfdb_arena a, v;
    cfdb_arena_init(&a);
    cfdb_arena_init(&v);
    clear_all();
    lv_line *draw_lines = NULL, *tree = NULL;
    /* draws: one integer per line (read with the kv reader's sibling: plain text) */
    FILE *f = fopen(CFDB_VECTORS_DIR "/layers/directory_draws.txt", "r");
    assert_non_null(f);
    int64_t dv[256];
    uint32_t nd = 0;
    while (nd < 256 && fscanf(f, "%ld", &dv[nd]) == 1)
        nd++;
    fclose(f);
    assert_true(nd > 0);
    (void)draw_lines;
    int nt = lv_read(&v, CFDB_VECTORS_DIR "/layers/directory_tree.kv", true, &tree);
    assert_true(nt > 0);

    script_t s;
    py_layers(&s);
    draws_t d = { dv, nd, 0 };
    s.L.random = s.M.random = replay_draw;
    s.L.random_ctx = s.M.random_ctx = &d;
    for (s.step = 0; s.step < 14; s.step++) {
        int err = run(script_step, &s, &a);
        if (err)
            fprintf(stderr, "step %d: %d\n", s.step, err);
        assert_int_equal(err, 0);
    }
    assert_int_equal(d.next, d.n); /* every draw the binding made, no more */

    dir_kv_t *kvs;
    uint32_t n;
    assert_int_equal(dump(&a, PY_PREFIX, "layers0", &kvs, &n), 0);
    for (uint32_t i = 0; i < n && i < (uint32_t)nt; i++) {
        if (!cfdb_bytes_eq(kvs[i].key, tree[i].bytes) || !cfdb_bytes_eq(kvs[i].value, tree[i].value)) {
            fprintf(stderr, "pair %u: cfdb key %s", i, lv_hex(kvs[i].key));
            fprintf(stderr, " value %s\n", lv_hex(kvs[i].value));
            fprintf(stderr, "       python key %s", lv_hex(tree[i].bytes));
            fprintf(stderr, " value %s\n", lv_hex(tree[i].value));
            fail();
        }
    }
    assert_int_equal(n, (uint32_t)nt);
    cfdb_arena_free(&a);
    cfdb_arena_free(&v);
}

/* ---- the binding's tree, opened by cfdb ---- */

typedef struct {
    lv_line *tree;
    int n;
} load_t;

static int load_tree(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    load_t *l = ctx;
    for (int i = 0; i < l->n; i++)
        fdb_transaction_set(tr, l->tree[i].bytes.ptr, (int)l->tree[i].bytes.len, l->tree[i].value.ptr,
                            (int)l->tree[i].value.len);
    return 0;
}

typedef struct {
    script_t s;
    cfdb_bytes *names;
    uint32_t count;
    cfdb_directory d;
    bool flag;
    int op;
} probe_t;

static int probe(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    probe_t *p = ctx;
    const cfdb_directory_layer *L = &p->s.L, *M = &p->s.M;
    switch (p->op) {
    case 0: return cfdb_directory_list(L, tr, a, NULL, 0, &p->names, &p->count);
    case 1: return cfdb_directory_list(L, tr, a, PATH(N("app")), &p->names, &p->count);
    case 2: return cfdb_directory_open(L, tr, a, PATH(N("app"), N("users")), N("table"), &p->d);
    case 3: return cfdb_directory_open(L, tr, a, PATH(N("app"), N("users")), N("other"), &p->d);
    case 4: return cfdb_directory_list(L, tr, a, PATH(N("part")), &p->names, &p->count);
    case 5: return cfdb_directory_open(L, tr, a, PATH(N("part"), N("deep2")), N(""), &p->d);
    case 6: return cfdb_directory_exists(L, tr, a, PATH(N("tmp")), &p->flag);
    case 7:
        return cfdb_directory_exists(L, tr, a, PATH(N("names"), N("nul\0name"), N("\xc3\xbc\xc3\xb1\xc3\xad\xf0\x9f\x98\x80")),
                                     &p->flag);
    case 8: return cfdb_directory_open(M, tr, a, PATH(N("m2")), N("lay"), &p->d);
    case 9: return cfdb_directory_list(M, tr, a, PATH(N("m1")), &p->names, &p->count);
    case 10: return cfdb_directory_open(L, tr, a, PATH(N("part")), N(""), &p->d);
    case 11: return cfdb_directory_list(L, tr, a, PATH(N("app"), N("archive")), &p->names, &p->count);
    }
    return CFDB_ERR_INTERNAL_ERROR;
}

static int do_probe(probe_t *p, int op, cfdb_arena *a)
{
    p->op = op;
    return run(probe, p, a);
}

static void test_open_python_tree(void **state)
{
    cfdb_arena a, v;
    cfdb_arena_init(&a);
    cfdb_arena_init(&v);
    clear_all();
    load_t l;
    l.n = lv_read(&v, CFDB_VECTORS_DIR "/layers/directory_tree.kv", true, &l.tree);
    assert_true(l.n > 0);
    assert_int_equal(run(load_tree, &l, &a), 0);

    probe_t p;
    memset(&p, 0, sizeof p);
    py_layers(&p.s);
    assert_int_equal(do_probe(&p, 0, &a), 0);
    assert_true(names_are(p.names, p.count, (const char *[]){ "app", "names", "part" }, 3));
    assert_int_equal(do_probe(&p, 1, &a), 0);
    assert_true(names_are(p.names, p.count, (const char *[]){ "archive", "users" }, 2));
    assert_int_equal(do_probe(&p, 11, &a), 0);
    assert_true(names_are(p.names, p.count, (const char *[]){ "2024" }, 1));

    /* users: layer "table", its data key readable through its subspace */
    assert_int_equal(do_probe(&p, 2, &a), 0);
    assert_true(cfdb_bytes_eq(p.d.layer, N("table")));
    assert_int_equal(p.d.path_len, 2);
    assert_false(p.d.is_partition);
    cfdb_subspace users;
    assert_int_equal(cfdb_directory_subspace(&p.d, &users), 0);
    bool found = false;
    for (int i = 0; i < l.n; i++) {
        if (!cfdb_subspace_contains(&users, l.tree[i].bytes))
            continue;
        cfdb_tuple k, val;
        assert_int_equal(cfdb_subspace_unpack(&users, &a, l.tree[i].bytes, &k), 0);
        cfdb_bytes s;
        int64_t one;
        assert_int_equal(cfdb_tuple_get_string(&k, 0, &s), 0);
        assert_true(cfdb_bytes_eq(s, N("alice")));
        assert_int_equal(cfdb_tuple_get_int(&k, 1, &one), 0);
        assert_int_equal(one, 1);
        assert_int_equal(cfdb_tuple_unpack(&a, l.tree[i].value, &val), 0);
        assert_true(cfdb_tuple_get(&val, 1)->type == CFDB_TUPLE_DOUBLE && cfdb_tuple_get(&val, 1)->v.d == 2.5);
        found = true;
    }
    assert_true(found);
    assert_int_equal(do_probe(&p, 3, &a), CFDB_ERR_MISMATCHED_LAYER);

    /* the partition */
    assert_int_equal(do_probe(&p, 4, &a), 0);
    assert_true(names_are(p.names, p.count, (const char *[]){ "deep2", "inner" }, 2));
    assert_int_equal(do_probe(&p, 10, &a), 0);
    assert_true(p.d.is_partition);
    cfdb_bytes part_prefix;
    assert_int_equal(cfdb_arena_dup_bytes(&v, p.d.prefix, &part_prefix), 0);
    cfdb_subspace ss;
    assert_int_equal(cfdb_directory_subspace(&p.d, &ss), CFDB_ERR_CANNOT_USE_PARTITION_AS_SUBSPACE);
    assert_int_equal(do_probe(&p, 5, &a), 0);
    assert_true(cfdb_bytes_eq(p.d.layer, N("x")));
    assert_true(p.d.prefix.len > part_prefix.len && memcmp(p.d.prefix.ptr, part_prefix.ptr, part_prefix.len) == 0);
    assert_int_equal(p.d.path_len, 2);
    assert_true(cfdb_bytes_eq(p.d.path[0], N("part")) && cfdb_bytes_eq(p.d.path[1], N("deep2")));

    /* removed and unicode/NUL names */
    p.flag = true;
    assert_int_equal(do_probe(&p, 6, &a), 0);
    assert_false(p.flag);
    assert_int_equal(do_probe(&p, 7, &a), 0);
    assert_true(p.flag);

    /* manual prefixes */
    assert_int_equal(do_probe(&p, 8, &a), 0);
    assert_true(cfdb_bytes_eq(p.d.prefix, N(PY_PREFIX "manual/m2/")));
    assert_int_equal(do_probe(&p, 9, &a), 0);
    assert_true(names_are(p.names, p.count, (const char *[]){ "sub" }, 1));
    cfdb_arena_free(&a);
    cfdb_arena_free(&v);
}

/* ---- the default layout ---- */

static uint64_t fixed_draw(void *ctx)
{
    return *(uint64_t *)ctx;
}

typedef struct {
    cfdb_directory_layer dl;
    cfdb_directory d;
} one_t;

static int create_a(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    one_t *o = ctx;
    return cfdb_directory_create_or_open(&o->dl, tr, a, PATH(N("a")), N("lay"), &o->d);
}

static void test_default_layout(void **state)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    clear_all();
    one_t o;
    uint64_t draw = 5;
    cfdb_directory_layer_init(&o.dl);
    o.dl.random = fixed_draw;
    o.dl.random_ctx = &draw;
    assert_int_equal(run(create_a, &o, &a), 0);
    assert_true(cfdb_bytes_eq(o.d.prefix, N("\x15\x05")));
    dir_kv_t *kvs;
    uint32_t n;
    assert_int_equal(dump(&a, "", "\xff", &kvs, &n), 0);
    /* root node = \xfe + pack((\xfe,)) = \xfe \x01\xfe\x00 */
    static const struct {
        const char *k;
        size_t kl;
        const char *v;
        size_t vl;
    } want[] = {
        { "\xfe\x01\x15\x05\x00\x01layer\x00", 12, "lay", 3 },
        { "\xfe\x01\xfe\x00\x01hca\x00\x14\x14", 11, "\x01\x00\x00\x00\x00\x00\x00\x00", 8 },
        { "\xfe\x01\xfe\x00\x01hca\x00\x15\x01\x15\x05", 13, "", 0 },
        { "\xfe\x01\xfe\x00\x01version\x00", 13, "\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 12 },
        { "\xfe\x01\xfe\x00\x14\x02" "a\x00", 8, "\x15\x05", 2 },
    };
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < n; i++) {
        if (!cfdb_bytes_eq(kvs[i].key, cfdb_bytes_make(want[i].k, want[i].kl)) ||
            !cfdb_bytes_eq(kvs[i].value, cfdb_bytes_make(want[i].v, want[i].vl))) {
            fprintf(stderr, "pair %u: key %s", i, lv_hex(kvs[i].key));
            fprintf(stderr, " value %s\n", lv_hex(kvs[i].value));
            fail();
        }
    }
    cfdb_arena_free(&a);
}

/* ---- errors ---- */

typedef struct {
    cfdb_directory_layer dl, manual;
    int op;
    cfdb_directory d, part, plain;
    bool flag;
} err_t;

static int err_op(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    err_t *e = ctx;
    const cfdb_directory_layer *dl = &e->dl;
    const cfdb_bytes empty = N("");
    cfdb_directory d;
    cfdb_bytes pfx;
    static const uint8_t v2[12] = { 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t v11[12] = { 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 };
    switch (e->op) {
    case 0: return cfdb_directory_create_or_open(dl, tr, a, NULL, 0, empty, &d);
    case 1: return cfdb_directory_create_or_open(dl, tr, a, PATH(N("x")), empty, &e->plain);
    case 2: return cfdb_directory_create(dl, tr, a, PATH(N("x")), empty, NULL, &d);
    case 3: return cfdb_directory_open(dl, tr, a, PATH(N("nope")), empty, &d);
    case 4: return cfdb_directory_open(dl, tr, a, PATH(N("x")), N("other"), &d);
    case 5:
        pfx = N("m");
        return cfdb_directory_create(dl, tr, a, PATH(N("y")), empty, &pfx, &d);
    case 6: return cfdb_directory_create_or_open(dl, tr, a, PATH(N("p")), N("partition"), &e->part);
    case 7:
        pfx = N("m");
        return cfdb_directory_create(&e->manual, tr, a, PATH(N("p"), N("y")), empty, &pfx, &d);
    case 8:
        /* inside x's prefix, and a prefix containing the node subspace */
        pfx = e->plain.prefix;
        return cfdb_directory_create(&e->manual, tr, a, PATH(N("y")), empty, &pfx, &d);
    case 9:
        pfx = N("\xfe");
        return cfdb_directory_create(&e->manual, tr, a, PATH(N("y")), empty, &pfx, &d);
    case 10: return cfdb_directory_move(dl, tr, a, PATH(N("x")), PATH(N("x"), N("sub")), &d);
    case 11: return cfdb_directory_move(dl, tr, a, PATH(N("x")), PATH(N("p"), N("x")), &d);
    case 12: return cfdb_directory_move(dl, tr, a, PATH(N("x")), PATH(N("p")), &d);
    case 13: return cfdb_directory_move(dl, tr, a, PATH(N("x")), PATH(N("no"), N("x")), &d);
    case 14: return cfdb_directory_remove(dl, tr, a, NULL, 0);
    case 15: return cfdb_directory_remove(dl, tr, a, PATH(N("nope")));
    case 16: return cfdb_directory_remove_if_exists(dl, tr, a, PATH(N("nope")), &e->flag);
    case 17: {
        cfdb_directory x;
        int err = cfdb_directory_open(dl, tr, a, PATH(N("x")), empty, &x);
        return err ? err : cfdb_directory_move_to(&x, tr, a, PATH(N("p"), N("in")), &d);
    }
    case 18: return cfdb_directory_create_or_open(dl, tr, a, PATH(N("\xff")), empty, &d);
    case 19: /* a newer major version: nothing opens */
        fdb_transaction_set(tr, S("\xfe\x01\xfe\x00\x01version\x00"), 13, v2, 12);
        return 0;
    case 20: return cfdb_directory_open(dl, tr, a, PATH(N("x")), empty, &d);
    case 21: /* a newer minor version: readable, not writable */
        fdb_transaction_set(tr, S("\xfe\x01\xfe\x00\x01version\x00"), 13, v11, 12);
        return 0;
    case 22: return cfdb_directory_create(dl, tr, a, PATH(N("z")), empty, NULL, &d);
    case 23: /* a version value of the wrong size */
        fdb_transaction_set(tr, S("\xfe\x01\xfe\x00\x01version\x00"), 13, v11, 11);
        return 0;
    case 24: return cfdb_directory_list(dl, tr, a, PATH(N("nope")), NULL, NULL);
    case 25: return cfdb_directory_move(dl, tr, a, PATH(N("nope")), PATH(N("q")), &d);
    case 26: return cfdb_directory_move(dl, tr, a, PATH(N("p"), N("a")), PATH(N("p"), N("a"), N("b")), &d);
    case 27: return cfdb_directory_create_or_open(dl, tr, a, PATH(N("p"), N("a")), empty, &d);
    case 28: return cfdb_directory_move(dl, tr, a, PATH(N("p"), N("a")), PATH(N("x"), N("a")), &d);
    }
    return CFDB_ERR_INTERNAL_ERROR;
}

static void test_errors(void **state)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    clear_all();
    err_t *e = calloc(1, sizeof *e);
    cfdb_directory_layer_init(&e->dl);
    cfdb_directory_layer_init_custom(&e->manual, N("\xfe"), N(""), true);
    static const struct {
        int op;
        int err;
    } steps[] = {
        { 0, CFDB_ERR_CANNOT_OPEN_ROOT_DIRECTORY },
        { 1, 0 },
        { 2, CFDB_ERR_DIRECTORY_ALREADY_EXISTS },
        { 3, CFDB_ERR_DIRECTORY_DOES_NOT_EXIST },
        { 4, CFDB_ERR_MISMATCHED_LAYER },
        { 5, CFDB_ERR_MANUAL_PREFIXES_NOT_ENABLED },
        { 6, 0 },
        { 7, CFDB_ERR_PREFIX_IN_PARTITION },
        { 8, CFDB_ERR_DIRECTORY_PREFIX_IN_USE },
        { 9, CFDB_ERR_DIRECTORY_PREFIX_IN_USE },
        { 10, CFDB_ERR_INVALID_DESTINATION_DIRECTORY },
        { 11, CFDB_ERR_CANNOT_MOVE_DIRECTORY_BETWEEN_PARTITIONS },
        { 12, CFDB_ERR_DIRECTORY_ALREADY_EXISTS },
        { 13, CFDB_ERR_PARENT_DIRECTORY_DOES_NOT_EXIST },
        { 14, CFDB_ERR_CANNOT_MODIFY_ROOT_DIRECTORY },
        { 15, CFDB_ERR_DIRECTORY_DOES_NOT_EXIST },
        { 16, 0 },
        { 17, CFDB_ERR_CANNOT_MOVE_DIRECTORY_BETWEEN_PARTITIONS },
        { 18, CFDB_ERR_CLIENT_INVALID_OPERATION },
        { 24, CFDB_ERR_DIRECTORY_DOES_NOT_EXIST },
        { 25, CFDB_ERR_DIRECTORY_DOES_NOT_EXIST },
        { 27, 0 },
        { 26, CFDB_ERR_INVALID_DESTINATION_DIRECTORY },
        { 28, CFDB_ERR_CANNOT_MOVE_DIRECTORY_BETWEEN_PARTITIONS },
        { 21, 0 },
        { 20, 0 },
        { 22, CFDB_ERR_INCOMPATIBLE_DIRECTORY_VERSION },
        { 19, 0 },
        { 20, CFDB_ERR_INCOMPATIBLE_DIRECTORY_VERSION },
        { 23, 0 },
        { 20, CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA },
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        e->op = steps[i].op;
        e->flag = true;
        int err = run(err_op, e, &a);
        if (err != steps[i].err)
            fprintf(stderr, "op %d: got %d, want %d\n", steps[i].op, err, steps[i].err);
        assert_int_equal(err, steps[i].err);
        if (steps[i].op == 16)
            assert_false(e->flag);
        if (steps[i].op == 1) {
            /* keep x's prefix beyond the arena reset of the next run */
            static uint8_t keep[16];
            memcpy(keep, e->plain.prefix.ptr, e->plain.prefix.len);
            e->plain.prefix = cfdb_bytes_make(keep, e->plain.prefix.len);
        }
    }
    free(e);
    cfdb_arena_free(&a);
}

/* A prefix the allocator picks that already holds keys: directory_prefix_not_empty. */
static void test_prefix_not_empty(void **state)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    clear_all();
    FDBTransaction *tr = api_tr();
    fdb_transaction_set(tr, S("\x15\x07stray"), 7, S("v"), 1);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    one_t o;
    uint64_t draw = 7;
    cfdb_directory_layer_init(&o.dl);
    o.dl.random = fixed_draw;
    o.dl.random_ctx = &draw;
    assert_int_equal(run(create_a, &o, &a), CFDB_ERR_DIRECTORY_PREFIX_NOT_EMPTY);
    draw = 8;
    assert_int_equal(run(create_a, &o, &a), 0);
    assert_true(cfdb_bytes_eq(o.d.prefix, N("\x15\x08")));
    cfdb_arena_free(&a);
}

/* ---- moves, move_to, partitions, removal ---- */

typedef struct {
    cfdb_directory_layer dl;
    int op;
    cfdb_directory d, part;
    cfdb_bytes *names;
    uint32_t count;
    bool flag;
} tree_t;

static int tree_op(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    tree_t *t = ctx;
    const cfdb_directory_layer *dl = &t->dl;
    const cfdb_bytes empty = N("");
    cfdb_directory d;
    switch (t->op) {
    case 0: { /* a tree with data in every directory */
        static const char *const names[] = { "a", "b", "c" };
        int err = cfdb_directory_create_or_open(dl, tr, a, PATH(N("top"), N("p")), N("partition"), &t->part);
        for (int i = 0; !err && i < 3; i++) {
            err = cfdb_directory_create_or_open(dl, tr, a, PATH(N("top"), cfdb_bytes_str(names[i])), empty, &d);
            if (!err)
                fdb_transaction_set(tr, d.prefix.ptr, (int)d.prefix.len, S("data"), 4);
            if (!err)
                err = cfdb_directory_create_or_open(dl, tr, a, PATH(N("top"), N("p"), cfdb_bytes_str(names[i])),
                                                    empty, &d);
            if (!err)
                fdb_transaction_set(tr, d.prefix.ptr, (int)d.prefix.len, S("data"), 4);
        }
        return err;
    }
    case 1: return cfdb_directory_list(dl, tr, a, PATH(N("top")), &t->names, &t->count);
    case 2: return cfdb_directory_list(dl, tr, a, PATH(N("top"), N("p")), &t->names, &t->count);
    case 3: return cfdb_directory_move(dl, tr, a, PATH(N("top"), N("p"), N("a")), PATH(N("top"), N("p"), N("z")), &d);
    case 4: /* move_to of a directory opened inside the partition, within it */
        if (!(cfdb_directory_open(dl, tr, a, PATH(N("top"), N("p"), N("b")), empty, &d) == 0))
            return CFDB_ERR_INTERNAL_ERROR;
        return cfdb_directory_move_to(&d, tr, a, PATH(N("top"), N("p"), N("y")), &t->d);
    case 5: /* move_to of the partition itself, in its parent layer */
        if (cfdb_directory_open(dl, tr, a, PATH(N("top"), N("p")), empty, &d))
            return CFDB_ERR_INTERNAL_ERROR;
        return cfdb_directory_move_to(&d, tr, a, PATH(N("top"), N("q")), &t->d);
    case 6: return cfdb_directory_remove_if_exists(dl, tr, a, PATH(N("top")), &t->flag);
    case 7: return cfdb_directory_exists(dl, tr, a, PATH(N("top"), N("q"), N("y")), &t->flag);
    case 9: { /* relative to opened directories: a normal one, a partition, the partition itself */
        cfdb_directory q, c;
        cfdb_directory_layer rl;
        const cfdb_bytes *rp;
        uint32_t rn;
        int err = cfdb_directory_open(dl, tr, a, PATH(N("top"), N("q")), empty, &q);
        if (!err)
            err = cfdb_directory_resolve(&q, a, PATH(N("c"), N("sub")), &rl, &rp, &rn);
        if (!err)
            err = cfdb_directory_create_or_open(&rl, tr, a, rp, rn, empty, &d);
        if (err)
            return err;
        if (d.path_len != 4 || !cfdb_bytes_eq(d.path[3], N("sub")) || rn != 2)
            return CFDB_ERR_INTERNAL_ERROR;
        if ((err = cfdb_directory_open(dl, tr, a, PATH(N("top"), N("q"), N("c")), empty, &c)) ||
            (err = cfdb_directory_resolve(&c, a, PATH(N("sub")), &rl, &rp, &rn)) ||
            (err = cfdb_directory_exists(&rl, tr, a, rp, rn, &t->flag)))
            return err;
        if (!t->flag || rn != 2 || !cfdb_bytes_eq(rp[0], N("c")))
            return CFDB_ERR_INTERNAL_ERROR;
        if ((err = cfdb_directory_resolve(&q, a, NULL, 0, &rl, &rp, &rn)) ||
            (err = cfdb_directory_exists(&rl, tr, a, rp, rn, &t->flag)))
            return err;
        return t->flag && rn == 2 && rl.path_len == 0 ? 0 : CFDB_ERR_INTERNAL_ERROR;
    }
    case 8: { /* the partition's own layer, relative paths */
        cfdb_directory_layer inner;
        if (cfdb_directory_open(dl, tr, a, PATH(N("top"), N("q")), empty, &d) ||
            cfdb_directory_partition_layer(&d, a, &inner))
            return CFDB_ERR_INTERNAL_ERROR;
        return cfdb_directory_list(&inner, tr, a, NULL, 0, &t->names, &t->count);
    }
    }
    return CFDB_ERR_INTERNAL_ERROR;
}

static void test_tree_moves_and_remove(void **state)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    clear_all();
    tree_t t;
    memset(&t, 0, sizeof t);
    cfdb_directory_layer_init(&t.dl);
    t.op = 0;
    assert_int_equal(run(tree_op, &t, &a), 0);
    t.op = 1;
    assert_int_equal(run(tree_op, &t, &a), 0);
    assert_true(names_are(t.names, t.count, (const char *[]){ "a", "b", "c", "p" }, 4));
    t.op = 3;
    assert_int_equal(run(tree_op, &t, &a), 0);
    t.op = 4;
    assert_int_equal(run(tree_op, &t, &a), 0);
    assert_int_equal(t.d.path_len, 3);
    t.op = 2;
    assert_int_equal(run(tree_op, &t, &a), 0);
    assert_true(names_are(t.names, t.count, (const char *[]){ "c", "y", "z" }, 3));
    t.op = 5;
    assert_int_equal(run(tree_op, &t, &a), 0);
    assert_true(t.d.is_partition);
    t.op = 7;
    assert_int_equal(run(tree_op, &t, &a), 0);
    assert_true(t.flag);
    t.op = 8;
    assert_int_equal(run(tree_op, &t, &a), 0);
    assert_true(names_are(t.names, t.count, (const char *[]){ "c", "y", "z" }, 3));
    t.op = 9;
    assert_int_equal(run(tree_op, &t, &a), 0);

    /* removal: every content key and node goes; only the layer's own metadata stays */
    t.op = 6;
    assert_int_equal(run(tree_op, &t, &a), 0);
    assert_true(t.flag);
    dir_kv_t *kvs;
    uint32_t n;
    assert_int_equal(dump(&a, "", "\xff", &kvs, &n), 0);
    for (uint32_t i = 0; i < n; i++) {
        static const char root[] = "\xfe\x01\xfe\x00\x01";
        bool meta = kvs[i].key.len > 5 && memcmp(kvs[i].key.ptr, root, 5) == 0 &&
                    (memcmp(kvs[i].key.ptr + 5, "hca", 3) == 0 || memcmp(kvs[i].key.ptr + 5, "version", 7) == 0);
        if (!meta) {
            fprintf(stderr, "left after remove: %s\n", lv_hex(kvs[i].key));
            fail();
        }
    }
    cfdb_arena_free(&a);
}

/* ---- concurrency ---- */

#define THREADS 8

typedef struct {
    cfdb_directory_layer dl;
    uint8_t prefix[32];
    uint32_t len;
    int err;
} conc_t;

static int conc_op(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    conc_t *c = ctx;
    cfdb_directory d;
    int err = cfdb_directory_create_or_open(&c->dl, tr, a, PATH(N("conc"), N("one")), N(""), &d);
    if (!err) {
        memcpy(c->prefix, d.prefix.ptr, d.prefix.len);
        c->len = d.prefix.len;
    }
    return err;
}

static void *conc_thread(void *arg)
{
    conc_t *c = arg;
    cfdb_arena a;
    cfdb_arena_init(&a);
    c->err = run(conc_op, c, &a);
    cfdb_arena_free(&a);
    return NULL;
}

static int conc_list(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    tree_t *t = ctx;
    return cfdb_directory_list(&t->dl, tr, a, PATH(N("conc")), &t->names, &t->count);
}

static void test_concurrent_create_or_open(void **state)
{
    clear_all();
    conc_t c[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&c[i], 0, sizeof c[i]);
        cfdb_directory_layer_init(&c[i].dl);
        assert_int_equal(pthread_create(&th[i], NULL, conc_thread, &c[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(c[i].err, 0);
        assert_int_equal(c[i].len, c[0].len);
        assert_memory_equal(c[i].prefix, c[0].prefix, c[0].len);
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    tree_t t;
    memset(&t, 0, sizeof t);
    cfdb_directory_layer_init(&t.dl);
    assert_int_equal(run(conc_list, &t, &a), 0);
    assert_true(names_are(t.names, t.count, (const char *[]){ "one" }, 1));
    cfdb_arena_free(&a);
}

/* Many directories at once in separate threads: every prefix distinct. */
typedef struct {
    cfdb_directory_layer dl;
    int id;
    uint8_t prefix[32];
    uint32_t len;
    int err;
} many_t;

static int many_op(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    many_t *m = ctx;
    char name[16];
    snprintf(name, sizeof name, "d%d", m->id);
    cfdb_directory d;
    int err = cfdb_directory_create(&m->dl, tr, a, PATH(N("many"), cfdb_bytes_str(name)), N(""), NULL, &d);
    if (!err) {
        memcpy(m->prefix, d.prefix.ptr, d.prefix.len);
        m->len = d.prefix.len;
    }
    return err;
}

static void *many_thread(void *arg)
{
    many_t *m = arg;
    cfdb_arena a;
    cfdb_arena_init(&a);
    m->err = run(many_op, m, &a);
    cfdb_arena_free(&a);
    return NULL;
}

static void test_concurrent_allocations_distinct(void **state)
{
    clear_all();
    enum { M = 40 };
    many_t *m = calloc(M, sizeof *m);
    pthread_t th[M];
    for (int i = 0; i < M; i++) {
        cfdb_directory_layer_init(&m[i].dl);
        m[i].id = i;
    }
    /* the parent first, so that the threads contend on the allocator only */
    m[0].id = 0;
    many_thread(&m[0]);
    assert_int_equal(m[0].err, 0);
    for (int i = 1; i < M; i++)
        assert_int_equal(pthread_create(&th[i], NULL, many_thread, &m[i]), 0);
    for (int i = 1; i < M; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < M; i++) {
        assert_int_equal(m[i].err, 0);
        for (int j = 0; j < i; j++)
            assert_false(m[i].len == m[j].len && memcmp(m[i].prefix, m[j].prefix, m[i].len) == 0);
    }
    free(m);
}

static int group_setup(void **state)
{
    return api_env_setup(NULL);
}

static int group_teardown(void **state)
{
    return api_env_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_python_script),
        cmocka_unit_test(test_open_python_tree),
        cmocka_unit_test(test_default_layout),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_prefix_not_empty),
        cmocka_unit_test(test_tree_moves_and_remove),
        cmocka_unit_test(test_concurrent_create_or_open),
        cmocka_unit_test(test_concurrent_allocations_distinct),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
