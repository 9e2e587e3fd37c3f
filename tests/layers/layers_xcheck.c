/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb's side of the live layers cross-check with FoundationDB's Python binding
 * (python_smoke.py check_layers_cross, run by scripts/check-python-binding.sh), on one
 * cluster, with the default directory layer:
 *   layers_xcheck CLUSTER_FILE TUPLES_TXT read-python
 *       opens the tree Python made under ("layers-py",) and checks every tuple Python stored
 *       in ("layers-py", "tuples") at key (i,) against value i of TUPLES_TXT;
 *   layers_xcheck CLUSTER_FILE TUPLES_TXT write-c
 *       writes the same under ("layers-c",) with cfdb's layers, for Python to check.
 * Prints one summary line; exit status 0 when every check held, 1 otherwise. */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/directory.h"
#include "error_codes.h"
#include "cfdb/subspace.h"
#include "cfdb/tuple.h"
#include "layers_vectors.h"

#define N(s) CFDB_BYTES_LIT(s)
#define PATH(...) ((const cfdb_bytes[]){ __VA_ARGS__ }), \
                  (uint32_t)(sizeof((const cfdb_bytes[]){ __VA_ARGS__ }) / sizeof(cfdb_bytes))

static FDBDatabase *db;
static lv_line *vec;
static int nvec;
static cfdb_directory_layer dl;

typedef int (*txn_fn)(FDBTransaction *tr, cfdb_arena *a, void *ctx);

static int wait_destroy(FDBFuture *f)
{
    int err = fdb_future_block_until_ready(f);
    if (!err)
        err = fdb_future_get_error(f);
    fdb_future_destroy(f);
    return err;
}

static int run(txn_fn fn, void *ctx, cfdb_arena *a)
{
    FDBTransaction *tr = NULL;
    int err = fdb_database_create_transaction(db, &tr);
    while (!err) {
        cfdb_arena_reset(a);
        err = fn(tr, a, ctx);
        if (!err)
            err = wait_destroy(fdb_transaction_commit(tr));
        if (!err || (err >= 2000 && err < 3000 && err != 2017))
            break;
        err = wait_destroy(fdb_transaction_on_error(tr, err));
    }
    if (tr)
        fdb_transaction_destroy(tr);
    return err;
}

static int failures;

#define CHECK(cond, ...)                   \
    do {                                   \
        if (!(cond)) {                     \
            fprintf(stderr, __VA_ARGS__);  \
            fputc('\n', stderr);           \
            failures++;                    \
        }                                  \
    } while (0)

/* ---- read-python ---- */

typedef struct {
    int checked;
    int pairs;
} read_t;

static int read_python(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    read_t *r = ctx;
    cfdb_directory d, part, inner;
    int err = cfdb_directory_open(&dl, tr, a, PATH(N("layers-py"), N("tuples")), N(""), &d);
    if (err)
        return err;
    cfdb_subspace s;
    cfdb_bytes begin, end;
    if ((err = cfdb_directory_subspace(&d, &s)) || (err = cfdb_subspace_range(&s, a, NULL, &begin, &end)))
        return err;
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(begin.ptr, (int)begin.len),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(end.ptr, (int)end.len), 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    err = fdb_future_block_until_ready(f);
    const FDBKeyValue *kv = NULL;
    int n = 0;
    fdb_bool_t more = 0;
    if (!err)
        err = fdb_future_get_error(f);
    if (!err)
        err = fdb_future_get_keyvalue_array(f, &kv, &n, &more);
    r->pairs = n;
    for (int i = 0; !err && i < n; i++) {
        cfdb_tuple key, got, want;
        int64_t idx = -1;
        cfdb_bytes value = cfdb_bytes_make(kv[i].value, (size_t)kv[i].value_length);
        int e1 = cfdb_subspace_unpack(&s, a, cfdb_bytes_make(kv[i].key, (size_t)kv[i].key_length), &key);
        if (!e1)
            e1 = cfdb_tuple_get_int(&key, 0, &idx);
        CHECK(!e1 && idx >= 0 && idx < nvec && !vec[idx].versionstamp, "key %d: not (i,) (%d)", i, e1);
        if (e1 || idx < 0 || idx >= nvec)
            continue;
        int e2 = cfdb_tuple_unpack(a, value, &got);
        CHECK(!e2, "case %ld: cfdb cannot unpack Python's %s (%d)", (long)idx, lv_hex(value), e2);
        if (e2)
            continue;
        CHECK(!lv_parse_spec(a, vec[idx].spec, &want), "bad spec %s", vec[idx].spec);
        CHECK(cfdb_tuple_compare(&got, &want) == 0, "case %ld: Python's bytes unpack to another value (%s)", (long)idx,
              vec[idx].spec);
        cfdb_bytes again;
        CHECK(!cfdb_tuple_pack(a, (cfdb_bytes){ 0 }, &got, &again) && cfdb_bytes_eq(again, value),
              "case %ld: repacked bytes differ", (long)idx);
        r->checked++;
    }
    fdb_future_destroy(f);
    if (err)
        return err;

    cfdb_bytes *names = NULL;
    uint32_t count = 0;
    if ((err = cfdb_directory_list(&dl, tr, a, PATH(N("layers-py")), &names, &count)))
        return err;
    CHECK(count == 3 && cfdb_bytes_eq(names[0], N("moved")) && cfdb_bytes_eq(names[1], N("part")) &&
              cfdb_bytes_eq(names[2], N("tuples")),
          "list of Python's tree: %u names", count);
    if ((err = cfdb_directory_open(&dl, tr, a, PATH(N("layers-py"), N("part")), N(""), &part)) ||
        (err = cfdb_directory_open(&dl, tr, a, PATH(N("layers-py"), N("part"), N("inner")), N("table"), &inner)))
        return err;
    CHECK(part.is_partition, "Python's partition is not a partition here");
    CHECK(inner.prefix.len > part.prefix.len && !memcmp(inner.prefix.ptr, part.prefix.ptr, part.prefix.len),
          "the directory in Python's partition is not under its prefix");
    bool gone = true;
    if ((err = cfdb_directory_exists(&dl, tr, a, PATH(N("layers-py"), N("gone")), &gone)))
        return err;
    CHECK(!gone, "Python moved 'gone' away but it exists here");
    return 0;
}

/* ---- write-c ---- */

static int write_c(FDBTransaction *tr, cfdb_arena *a, void *ctx)
{
    int *written = ctx;
    cfdb_directory d, inner, tmp;
    int err = cfdb_directory_create(&dl, tr, a, PATH(N("layers-c"), N("tuples")), N(""), NULL, &d);
    cfdb_subspace s;
    if (!err)
        err = cfdb_directory_subspace(&d, &s);
    *written = 0;
    for (int i = 0; !err && i < nvec; i++) {
        if (vec[i].versionstamp)
            continue;
        cfdb_tuple key, value;
        cfdb_bytes kb, vb;
        cfdb_tuple_init(&key, a);
        if ((err = cfdb_tuple_add_int(&key, i)) || (err = lv_parse_spec(a, vec[i].spec, &value)) ||
            (err = cfdb_subspace_pack(&s, a, &key, &kb)) || (err = cfdb_tuple_pack(a, (cfdb_bytes){ 0 }, &value, &vb)))
            break;
        fdb_transaction_set(tr, kb.ptr, (int)kb.len, vb.ptr, (int)vb.len);
        (*written)++;
    }
    if (!err)
        err = cfdb_directory_create_or_open(&dl, tr, a, PATH(N("layers-c"), N("part")), N("partition"), &d);
    if (!err)
        err = cfdb_directory_create_or_open(&dl, tr, a, PATH(N("layers-c"), N("part"), N("inner")), N("table"), &inner);
    if (!err) {
        cfdb_subspace is;
        cfdb_tuple k, v;
        cfdb_bytes kb, vb;
        cfdb_tuple_init(&k, a);
        cfdb_tuple_init(&v, a);
        if (!(err = cfdb_directory_subspace(&inner, &is)) && !(err = cfdb_tuple_add_cstr(&k, "c-key")) &&
            !(err = cfdb_tuple_add_cstr(&v, "c-value")) && !(err = cfdb_tuple_add_int(&v, 42)) &&
            !(err = cfdb_subspace_pack(&is, a, &k, &kb)) && !(err = cfdb_tuple_pack(a, (cfdb_bytes){ 0 }, &v, &vb)))
            fdb_transaction_set(tr, kb.ptr, (int)kb.len, vb.ptr, (int)vb.len);
    }
    if (!err)
        err = cfdb_directory_create(&dl, tr, a, PATH(N("layers-c"), N("gone")), N(""), NULL, &tmp);
    if (!err)
        err = cfdb_directory_move(&dl, tr, a, PATH(N("layers-c"), N("gone")), PATH(N("layers-c"), N("moved")), &tmp);
    return err;
}

static void *net_main(void *arg)
{
    (void)arg;
    int err = fdb_run_network();
    if (err)
        fprintf(stderr, "fdb_run_network: %d\n", err);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "read-python") && strcmp(argv[3], "write-c"))) {
        fprintf(stderr, "usage: %s CLUSTER_FILE TUPLES_TXT read-python|write-c\n", argv[0]);
        return 2;
    }
    cfdb_arena vecs, a;
    cfdb_arena_init(&vecs);
    cfdb_arena_init(&a);
    nvec = lv_read(&vecs, argv[2], false, &vec);
    if (nvec <= 0)
        return 1;
    pthread_t net;
    if (fdb_select_api_version(FDB_API_VERSION) || fdb_setup_network() || pthread_create(&net, NULL, net_main, NULL) ||
        fdb_create_database(argv[1], &db)) {
        fprintf(stderr, "cannot start the client\n");
        return 1;
    }
    cfdb_directory_layer_init(&dl);
    int err;
    if (!strcmp(argv[3], "read-python")) {
        read_t r = { 0, 0 };
        err = run(read_python, &r, &a);
        int want = 0;
        for (int i = 0; i < nvec; i++)
            want += !vec[i].versionstamp;
        CHECK(err || r.checked == want, "checked %d of the %d tuples Python stored", r.checked, want);
        if (!err && !failures)
            printf("cfdb read %d tuples and the directory tree Python wrote\n", r.checked);
    } else {
        int written = 0;
        err = run(write_c, &written, &a);
        if (!err)
            printf("cfdb wrote %d tuples and a directory tree (partition, layer, move)\n", written);
    }
    if (err)
        fprintf(stderr, "error %d (%s)\n", err, cfdb_error_message(err));
    fdb_database_destroy(db);
    if (fdb_stop_network() == 0)
        pthread_join(net, NULL);
    cfdb_arena_free(&vecs);
    cfdb_arena_free(&a);
    return err || failures ? 1 : 0;
}
