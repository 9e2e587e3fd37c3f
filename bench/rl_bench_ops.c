/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench-records workers (see rl_bench.h): `_populate` writes the store, `_run` times one
 * case on one arm in a fresh process and writes PREFIX.lat (ns per measured op, one a line)
 * and PREFIX.kv (ops, errors, rows, range/mapped requests of the measured and of the warm-up
 * ops, reads in flight); `_placement` writes PREFIX.kv with the storage servers
 * (fdb_transaction_get_addresses_for_key) of the name index's first key and of the first
 * record's key, and whether they are the same servers. Each op is one
 * transaction: the store is opened (its header read gives the read version) outside the timed
 * part, then the operation alone is timed (for save: save and commit). Every transaction runs
 * in the standard on_error loop. Latencies are kept in a preallocated array: nothing is
 * allocated per op by the harness. */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfdb/records/cursor.h"
#include "rl_bench.h"
#include "rng.h"

extern const uint8_t bench_records_set[];
extern const size_t bench_records_set_size;

#define BIG_BYTES 150000

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *net_thread(void *arg)
{
    (void)arg;
    fdb_run_network();
    return NULL;
}

typedef struct env {
    FDBDatabase *db;
    cfdb_rl_metadata *md;
    cfdb_bytes prefix;
    cfdb_arena arena;
    pthread_t net;
} env;

static int env_open(env *e, const char *cluster)
{
    memset(e, 0, sizeof *e);
    cfdb_arena_init(&e->arena);
    cfdb_pb_error perr;
    if (fdb_select_api_version(730) || fdb_setup_network())
        return 1;
    pthread_create(&e->net, NULL, net_thread, NULL);
    if (fdb_create_database(cluster, &e->db))
        return 1;
    if (cfdb_rl_metadata_from_file(bench_records_set, bench_records_set_size, "records_bench.proto",
                                   &e->md, &perr)) {
        fprintf(stderr, "metadata: %s\n", perr.message);
        return 1;
    }
    cfdb_tuple t;
    cfdb_tuple_init(&t, &e->arena);
    cfdb_tuple_add_cstr(&t, "cfdb-bench-rl");
    return cfdb_tuple_pack(&e->arena, cfdb_bytes_make(NULL, 0), &t, &e->prefix) ? 1 : 0;
}

static void env_close(env *e)
{
    cfdb_rl_metadata_free(e->md);
    fdb_database_destroy(e->db);
    fdb_stop_network();
    pthread_join(e->net, NULL);
    cfdb_arena_free(&e->arena);
}

static int wait_err(FDBFuture *f)
{
    int e = fdb_future_block_until_ready(f);
    if (!e)
        e = fdb_future_get_error(f);
    fdb_future_destroy(f);
    return e;
}

static int retry(FDBTransaction *tr, int err)
{
    return wait_err(fdb_transaction_on_error(tr, err));
}

static void name_of(char *buf, size_t cap, bool big, uint64_t i)
{
    snprintf(buf, cap, big ? "zbig%03llu" : "n%05llu", (unsigned long long)i);
}

static cfdb_pb_msg *person(const env *e, cfdb_arena *a, int64_t id, const char *name, size_t blob)
{
    const cfdb_rl_record_type *rt = cfdb_rl_record_type_by_name(e->md, "Person");
    const cfdb_pb_message *d = rt->descriptor;
    cfdb_pb_msg *m = cfdb_pb_msg_new(a, d);
    cfdb_pb_value v;
    v.i = id;
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "id"), v);
    v.s = cfdb_bytes_str(name);
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "name"), v);
    v.i = (int64_t)(id % 7);
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "color"), v);
    v.d = (double)(id % 1000) / 10.0;
    cfdb_pb_set(m, cfdb_pb_field_by_name(d, "score"), v);
    if (blob) {
        uint8_t *b = cfdb_arena_alloc(a, blob);
        for (size_t i = 0; i < blob; i++)
            b[i] = (uint8_t)(i * 31 + (size_t)id);
        v.s = cfdb_bytes_make(b, blob);
        cfdb_pb_set(m, cfdb_pb_field_by_name(d, "blob"), v);
    }
    return m;
}

/* Saves people [first, first + n) (ids: small 1.., big 1000001..) in one transaction. */
static int save_batch(env *e, bool big, uint64_t first, uint64_t n, bool clear_first)
{
    FDBTransaction *tr;
    if (fdb_database_create_transaction(e->db, &tr))
        return 1;
    int err;
    for (;;) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        if (clear_first) {
            uint8_t end[64];
            memcpy(end, e->prefix.ptr, e->prefix.len);
            end[e->prefix.len] = 0xff;
            fdb_transaction_clear_range(tr, e->prefix.ptr, (int)e->prefix.len, end, (int)e->prefix.len + 1);
        }
        cfdb_rl_store *s = NULL;
        err = cfdb_rl_store_open(tr, e->md, e->prefix, CFDB_RL_CREATE_OR_OPEN, &s);
        for (uint64_t i = first; i < first + n && !err; i++) {
            char name[32];
            name_of(name, sizeof name, big, i);
            err = cfdb_rl_store_save(s, tr, &a, person(e, &a, (int64_t)(big ? 1000001 + i : 1 + i), name,
                                                       big ? BIG_BYTES : 0), NULL);
        }
        cfdb_rl_store_free(s);
        cfdb_arena_free(&a);
        if (!err)
            err = wait_err(fdb_transaction_commit(tr));
        if (!err || retry(tr, err))
            break;
    }
    fdb_transaction_destroy(tr);
    return err;
}

static int populate(env *e, uint64_t records, uint64_t big)
{
    int err = 0;
    for (uint64_t i = 0; i < records && !err; i += 100)
        err = save_batch(e, false, i, records - i < 100 ? records - i : 100, i == 0);
    for (uint64_t i = 0; i < big && !err; i += 5)
        err = save_batch(e, true, i, big - i < 5 ? big - i : 5, false);
    if (err)
        fprintf(stderr, "populate: error %d\n", err);
    return err ? 1 : 0;
}

typedef struct kase {
    const char *name;
    int kind;          /* 0 save, 1 load, 2 index scan, 3 fetch */
    uint32_t rows, skip;
    bool reverse, big;
} kase;

static const kase cases[] = {
    { "save", 0, 1, 0, false, false },         { "load", 1, 1, 0, false, false },
    { "index-scan", 2, 10, 0, false, false },  { "fetch-1", 3, 1, 0, false, false },
    { "fetch-10", 3, 10, 0, false, false },    { "fetch-1000", 3, 1000, 0, false, false },
    { "fetch-1-rev", 3, 1, 0, true, false },   { "fetch-10-rev", 3, 10, 0, true, false },
    { "fetch-1000-rev", 3, 1000, 0, true, false }, { "fetch-skip3of10", 3, 7, 3, false, false },
    { "fetch-split", 3, 2, 0, false, true },
};

typedef struct counts {
    uint64_t ops, errors, rows, requests, max_in_flight, bad_rows;
} counts;

/* One op; returns the fdb error. */
static int one_op(env *e, const kase *k, bool remote, bench_rng *rng, uint64_t records, uint64_t big,
                  uint64_t *ns, counts *c)
{
    FDBTransaction *tr;
    int err = fdb_database_create_transaction(e->db, &tr);
    if (err)
        return err;
    for (;;) {
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_rl_store *s = NULL;
        cfdb_rl_cursor *cur = NULL;
        uint64_t rows = 0;
        err = cfdb_rl_store_open(tr, e->md, e->prefix, CFDB_RL_OPEN, &s);
        uint64_t t0 = now_ns();
        if (!err && k->kind == 0) {
            uint64_t i = bench_rng_below(rng, records);
            char name[32];
            name_of(name, sizeof name, false, i);
            err = cfdb_rl_store_save(s, tr, &a, person(e, &a, (int64_t)(1 + i), name, 0), NULL);
            if (!err)
                err = wait_err(fdb_transaction_commit(tr));
            rows = 1;
        } else if (!err && k->kind == 1) {
            cfdb_tuple pk;
            cfdb_tuple_init(&pk, &a);
            cfdb_tuple_add_int(&pk, (int64_t)(1 + bench_rng_below(rng, records)));
            cfdb_rl_loaded l;
            err = cfdb_rl_store_load(s, tr, &a, &pk, &l);
            rows = l.found;
        } else if (!err) {
            uint64_t span = k->big ? big : records;
            uint64_t need = k->rows + k->skip;
            uint64_t at = span > need ? bench_rng_below(rng, span - need) : 0;
            if (k->reverse)
                at += need - 1;
            char name[32];
            name_of(name, sizeof name, k->big, at);
            cfdb_tuple t;
            cfdb_tuple_init(&t, &a);
            cfdb_tuple_add_cstr(&t, name);
            cfdb_rl_range r = k->reverse ? (cfdb_rl_range){ NULL, &t, CFDB_RL_TREE_START, CFDB_RL_RANGE_INCLUSIVE }
                                         : (cfdb_rl_range){ &t, NULL, CFDB_RL_RANGE_INCLUSIVE, CFDB_RL_TREE_END };
            cfdb_rl_scan_props p = { 0 };
            p.reverse = k->reverse;
            p.limit = k->rows;   /* rows returned after the skip, as ExecuteProperties counts them */
            p.skip = k->skip;
            p.fetch = remote ? CFDB_RL_USE_REMOTE_FETCH : CFDB_RL_SCAN_AND_FETCH;
            const cfdb_rl_index *ix = cfdb_rl_index_by_name(e->md, "Person$name");
            err = k->kind == 2 ? cfdb_rl_scan_index(s, tr, ix, &r, cfdb_bytes_make(NULL, 0), &p, &cur)
                               : cfdb_rl_scan_index_records(s, tr, ix, &r, cfdb_bytes_make(NULL, 0), &p, &cur);
            while (!err) {
                cfdb_rl_item it;
                bool has;
                err = cfdb_rl_cursor_next(cur, &a, &it, &has);
                if (err || !has)
                    break;
                if (k->kind == 3 && (!it.record || (k->big && it.record_bytes < BIG_BYTES)))
                    c->bad_rows++;
                rows++;
            }
        }
        uint64_t t1 = now_ns();
        if (cur) {
            c->requests += cfdb_rl_cursor_requests(cur);
            if (cfdb_rl_cursor_max_in_flight(cur) > c->max_in_flight)
                c->max_in_flight = cfdb_rl_cursor_max_in_flight(cur);
            cfdb_rl_cursor_free(cur);
        }
        cfdb_rl_store_free(s);
        cfdb_arena_free(&a);
        if (!err) {
            *ns = t1 - t0;
            c->rows += rows;
            if (k->kind == 3 && rows != k->rows)
                c->bad_rows++;
            break;
        }
        if (retry(tr, err))
            break;
    }
    fdb_transaction_destroy(tr);
    return err;
}

/* The addresses of the storage servers holding key, sorted, ' '-separated, into out. */
static int key_servers(env *e, cfdb_bytes key, char *out, size_t cap)
{
    FDBTransaction *tr;
    int err = fdb_database_create_transaction(e->db, &tr);
    if (err)
        return err;
    FDBFuture *f = NULL;
    for (;;) {
        f = fdb_transaction_get_addresses_for_key(tr, key.ptr, (int)key.len);
        err = fdb_future_block_until_ready(f);
        if (!err)
            err = fdb_future_get_error(f);
        if (!err || retry(tr, err))
            break;
        fdb_future_destroy(f);
        f = NULL;
    }
    const char **a = NULL;
    int n = 0;
    if (!err)
        err = fdb_future_get_string_array(f, &a, &n);
    out[0] = 0;
    if (!err) {
        const char *sorted[64];
        int m = n < 64 ? n : 64;
        for (int i = 0; i < m; i++) {
            int j = i;
            while (j > 0 && strcmp(sorted[j - 1], a[i]) > 0) {
                sorted[j] = sorted[j - 1];
                j--;
            }
            sorted[j] = a[i];
        }
        size_t at = 0;
        for (int i = 0; i < m && at < cap; i++)
            at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? " " : "", sorted[i]);
    }
    if (f)
        fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return err;
}

/* same: one set of servers; different: no server in common; overlapping: some in common. */
static const char *placement_of(const char *ix, const char *rec)
{
    if (!strcmp(ix, rec))
        return "same";
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", ix);
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        size_t l = strlen(t);
        for (const char *p = strstr(rec, t); p; p = strstr(p + 1, t))
            if ((p == rec || p[-1] == ' ') && (p[l] == 0 || p[l] == ' '))
                return "overlapping";
    }
    return "different";
}

static int placement(env *e, const char *out)
{
    /* the name index's space, P + (2, "Person$name"), and the first record, P + (1, 1) */
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_tuple ti, tr;
    cfdb_tuple_init(&ti, &a);
    cfdb_tuple_add_int(&ti, 2);
    cfdb_tuple_add_cstr(&ti, "Person$name");
    cfdb_tuple_init(&tr, &a);
    cfdb_tuple_add_int(&tr, 1);
    cfdb_tuple_add_int(&tr, 1);
    cfdb_bytes ik, rk;
    char ix[1024], rec[1024];
    int err = cfdb_tuple_pack(&a, e->prefix, &ti, &ik) || cfdb_tuple_pack(&a, e->prefix, &tr, &rk);
    if (!err)
        err = key_servers(e, ik, ix, sizeof ix);
    if (!err)
        err = key_servers(e, rk, rec, sizeof rec);
    cfdb_arena_free(&a);
    if (err) {
        fprintf(stderr, "_placement: error %d\n", err);
        return 1;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s.kv", out);
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fprintf(f, "index_servers=%s\nrecord_servers=%s\nplacement=%s\n", ix, rec, placement_of(ix, rec));
    fclose(f);
    return 0;
}

int bench_rl_worker_main(int argc, char **argv)
{
    const char *cluster = NULL, *case_name = "fetch-10", *arm = "saf", *out = NULL;
    uint64_t ops = 100, warmup = 10, seed = 1, records = 2000, big = 20;
    bool do_populate = !strcmp(argv[0], "_populate"), do_placement = !strcmp(argv[0], "_placement");
    static const struct option opts[] = {
        {"cluster-file", 1, 0, 'c'}, {"case", 1, 0, 'k'}, {"arm", 1, 0, 'a'}, {"out", 1, 0, 'o'},
        {"ops", 1, 0, 'n'}, {"warmup", 1, 0, 'w'}, {"seed", 1, 0, 's'}, {"records", 1, 0, 'r'},
        {"big", 1, 0, 'b'}, {0, 0, 0, 0},
    };
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'c': cluster = optarg; break;
        case 'k': case_name = optarg; break;
        case 'a': arm = optarg; break;
        case 'o': out = optarg; break;
        case 'n': ops = strtoull(optarg, NULL, 10); break;
        case 'w': warmup = strtoull(optarg, NULL, 10); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        case 'r': records = strtoull(optarg, NULL, 10); break;
        case 'b': big = strtoull(optarg, NULL, 10); break;
        default: return 2;
        }
    }
    env e;
    if (env_open(&e, cluster))
        return 1;
    if (do_populate || do_placement) {
        int rc = do_populate ? populate(&e, records, big) : out ? placement(&e, out) : 2;
        env_close(&e);
        return rc;
    }
    const kase *k = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(cases[i].name, case_name))
            k = &cases[i];
    if (!k || !out) {
        fprintf(stderr, "_run: unknown case %s or no --out\n", case_name);
        env_close(&e);
        return 2;
    }
    uint64_t *lat = calloc(ops ? ops : 1, sizeof *lat);
    counts c = { 0 }, warm = { 0 };
    bench_rng rng;
    bench_rng_seed(&rng, seed);
    bool remote = !strcmp(arm, "remote");
    for (uint64_t i = 0; i < warmup; i++) {
        uint64_t ns;
        one_op(&e, k, remote, &rng, records, big, &ns, &warm);
    }
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t ns = 0;
        if (one_op(&e, k, remote, &rng, records, big, &ns, &c))
            c.errors++;
        lat[c.ops++] = ns;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s.lat", out);
    FILE *f = fopen(path, "w");
    for (uint64_t i = 0; f && i < c.ops; i++)
        fprintf(f, "%llu\n", (unsigned long long)lat[i]);
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "%s.kv", out);
    f = fopen(path, "w");
    if (f) {
        fprintf(f, "case=%s\narm=%s\nops=%llu\nerrors=%llu\nrows=%llu\nbad_rows=%llu\nrequests=%llu\n"
                   "max_in_flight=%llu\nwarmup_requests=%llu\n",
                k->name, arm, (unsigned long long)c.ops, (unsigned long long)c.errors,
                (unsigned long long)c.rows, (unsigned long long)c.bad_rows,
                (unsigned long long)c.requests, (unsigned long long)c.max_in_flight,
                (unsigned long long)warm.requests);
        fclose(f);
    }
    free(lat);
    env_close(&e);
    return c.errors || c.bad_rows ? 3 : 0;
}
