/* The Record Layer in C: record types from a .proto (examples/records.proto, compiled by
 * protoc at build time and embedded), a record store, saves, queries planned with the store's
 * index states (only readable indexes are used) and run by index, and pages resumed from
 * continuations in new transactions.
 *   example_records [CLUSTER_FILE]
 * Runs against cfdb-server or a FoundationDB 7.3 cluster (it writes under the tuple prefix
 * ("example-records") and clears it first). */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/records/query.h"

extern const uint8_t example_records_set[];
extern const size_t example_records_set_size;

static void check(int err, const char *what)
{
    if (err) {
        fprintf(stderr, "%s: %s (%d)\n", what, fdb_get_error(err), err);
        exit(1);
    }
}

static void *network_thread(void *arg)
{
    (void)arg;
    check(fdb_run_network(), "run network");
    return NULL;
}

static FDBDatabase *db;
static const cfdb_rl_metadata *md;
static cfdb_bytes prefix;

/* The standard retry loop around fn(tr, ctx), committing at the end. */
static void run(int (*fn)(FDBTransaction *, void *), void *ctx)
{
    FDBTransaction *tr;
    check(fdb_database_create_transaction(db, &tr), "create transaction");
    for (;;) {
        int err = fn(tr, ctx);
        if (!err) {
            FDBFuture *f = fdb_transaction_commit(tr);
            check(fdb_future_block_until_ready(f), "block");
            err = fdb_future_get_error(f);
            fdb_future_destroy(f);
        }
        if (!err)
            break;
        FDBFuture *f = fdb_transaction_on_error(tr, err);
        check(fdb_future_block_until_ready(f), "block");
        check(fdb_future_get_error(f), "transaction");
        fdb_future_destroy(f);
    }
    fdb_transaction_destroy(tr);
}

static const struct { int64_t isbn; const char *author, *title; int year; } books[] = {
    { 9780441478125, "Ursula K. Le Guin", "The Left Hand of Darkness", 1969 },
    { 9780060512750, "Ursula K. Le Guin", "The Dispossessed", 1974 },
    { 9780553283686, "Dan Simmons", "Hyperion", 1989 },
    { 9780441172719, "Frank Herbert", "Dune", 1965 },
    { 9780345391803, "Douglas Adams", "The Hitchhiker's Guide to the Galaxy", 1979 },
    { 9780553293357, "Isaac Asimov", "Foundation", 1951 },
    { 9780812550702, "Orson Scott Card", "Ender's Game", 1985 },
    { 9780441569595, "William Gibson", "Neuromancer", 1984 },
    { 9780765377067, "Cixin Liu", "The Three-Body Problem", 2008 },
    { 9780316129084, "Ann Leckie", "Ancillary Justice", 2013 },
    { 9780547928227, "J. R. R. Tolkien", "The Hobbit", 1937 },
    { 9780553380958, "Neal Stephenson", "Snow Crash", 1992 },
};
#define NBOOKS ((int)(sizeof books / sizeof books[0]))

static int save_all(FDBTransaction *tr, void *ctx)
{
    (void)ctx;
    /* start from an empty store */
    uint8_t end[64];
    memcpy(end, prefix.ptr, prefix.len);
    end[prefix.len] = 0xff;
    fdb_transaction_clear_range(tr, prefix.ptr, (int)prefix.len, end, (int)prefix.len + 1);
    cfdb_rl_store *s;
    int err = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_CREATE_OR_OPEN, &s);
    if (err)
        return err;
    const cfdb_rl_record_type *book = cfdb_rl_record_type_by_name(md, "Book");
    const cfdb_pb_message *d = book->descriptor;
    cfdb_arena a;
    cfdb_arena_init(&a);
    for (int i = 0; i < NBOOKS && !err; i++) {
        cfdb_pb_msg *m = cfdb_pb_msg_new(&a, d);
        cfdb_pb_value v;
        v.i = books[i].isbn;
        cfdb_pb_set(m, cfdb_pb_field_by_name(d, "isbn"), v);
        v.s = cfdb_bytes_str(books[i].author);
        cfdb_pb_set(m, cfdb_pb_field_by_name(d, "author"), v);
        v.s = cfdb_bytes_str(books[i].title);
        cfdb_pb_set(m, cfdb_pb_field_by_name(d, "title"), v);
        v.i = books[i].year;
        cfdb_pb_set(m, cfdb_pb_field_by_name(d, "year"), v);
        err = cfdb_rl_store_save(s, tr, &a, m, NULL);
    }
    cfdb_arena_free(&a);
    cfdb_rl_store_free(s);
    return err;
}

typedef struct page {
    const cfdb_rl_plan *plan;
    cfdb_bytes cont;          /* in: where to resume; out: where the next page starts */
    uint8_t cont_buf[256];
    bool end;
    uint32_t limit;
} page;

static void print_book(const cfdb_pb_msg *m)
{
    const cfdb_pb_message *d = cfdb_pb_msg_type(m);
    cfdb_bytes title = cfdb_pb_get(m, cfdb_pb_field_by_name(d, "title"), 0)->s;
    cfdb_bytes author = cfdb_pb_get(m, cfdb_pb_field_by_name(d, "author"), 0)->s;
    int64_t year = cfdb_pb_get(m, cfdb_pb_field_by_name(d, "year"), 0)->i;
    printf("  %lld  %-38.*s %.*s\n", (long long)year, (int)title.len, (const char *)title.ptr,
           (int)author.len, (const char *)author.ptr);
}

static int one_page(FDBTransaction *tr, void *ctx)
{
    page *p = ctx;
    cfdb_rl_store *s;
    int err = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_OPEN, &s);
    if (err)
        return err;
    cfdb_rl_scan_props props = { 0 };
    props.limit = p->limit;
    props.fetch = CFDB_RL_USE_REMOTE_FETCH_WITH_FALLBACK;   /* one get_mapped_range per batch */
    cfdb_rl_cursor *c;
    cfdb_arena a;
    cfdb_arena_init(&a);
    err = cfdb_rl_plan_execute(p->plan, s, tr, p->cont, &props, &c);
    while (!err) {
        cfdb_rl_item it;
        bool has;
        err = cfdb_rl_cursor_next(c, &a, &it, &has);
        if (err || !has)
            break;
        print_book(it.record);
    }
    if (!err) {
        cfdb_bytes k = cfdb_rl_cursor_continuation(c, &p->end);
        if (k.len > sizeof p->cont_buf)
            err = 2000;
        else {
            memcpy(p->cont_buf, k.ptr, k.len);
            p->cont = cfdb_bytes_make(p->cont_buf, k.len);
        }
    }
    if (c)
        cfdb_rl_cursor_free(c);
    cfdb_arena_free(&a);
    cfdb_rl_store_free(s);
    return err;
}

typedef struct planning {
    const cfdb_rl_query *q;
    cfdb_rl_plan *plan;
} planning;

/* Plans with the store's index states (cfdb_rl_plan_query_store): only indexes readable in
 * this store are candidates, as the Java planner given the store's RecordStoreState. */
static int plan_in_store(FDBTransaction *tr, void *ctx)
{
    planning *pl = ctx;
    cfdb_rl_store *s;
    int err = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_OPEN, &s);
    if (err)
        return err;
    cfdb_rl_plan_free(pl->plan);   /* a retried transaction plans again */
    pl->plan = NULL;
    err = cfdb_rl_plan_query_store(s, pl->q, &pl->plan);
    cfdb_rl_store_free(s);
    return err;
}

/* Plans a query against the store, then runs it page by page, each page in its own
 * transaction. */
static void query(const cfdb_rl_query *q, uint32_t limit)
{
    planning pl = { q, NULL };
    run(plan_in_store, &pl);
    cfdb_rl_plan *plan = pl.plan;
    printf("plan: %s\n", cfdb_rl_plan_explain(plan));
    page p = { plan, { NULL, 0 }, { 0 }, false, limit };
    for (int n = 1; !p.end; n++) {
        printf(" page %d\n", n);
        run(one_page, &p);
    }
    cfdb_rl_plan_free(plan);
}

int main(int argc, char **argv)
{
    check(fdb_select_api_version(FDB_API_VERSION), "select api version");
    check(fdb_setup_network(), "setup network");
    pthread_t net;
    pthread_create(&net, NULL, network_thread, NULL);
    check(fdb_create_database(argc > 1 ? argv[1] : NULL, &db), "create database");

    /* the record types, from the descriptor set protoc made of records.proto */
    cfdb_rl_metadata *meta;
    cfdb_pb_error perr;
    int err = cfdb_rl_metadata_from_file(example_records_set, example_records_set_size, "records.proto",
                                         &meta, &perr);
    if (err) {
        fprintf(stderr, "metadata: %s\n", perr.message);
        return 1;
    }
    md = meta;
    /* the store prefix, a tuple so that remote fetch can name the records in its mapper */
    cfdb_arena pa;
    cfdb_arena_init(&pa);
    cfdb_tuple t;
    cfdb_tuple_init(&t, &pa);
    cfdb_tuple_add_cstr(&t, "example-records");
    check(cfdb_tuple_pack(&pa, cfdb_bytes_make(NULL, 0), &t, &prefix), "prefix");

    run(save_all, NULL);
    printf("saved %d books\n", NBOOKS);

    cfdb_rl_filter by_author = { "author", CFDB_RL_EQ, { .type = CFDB_TUPLE_STRING } };
    by_author.value.v.bytes = cfdb_bytes_str("Ursula K. Le Guin");
    cfdb_rl_query q1 = { "Book", &by_author, 1, NULL, false };
    query(&q1, 0);

    cfdb_rl_filter since = { "year", CFDB_RL_GE, { .type = CFDB_TUPLE_INT } };
    since.value.v.i = 1970;
    cfdb_rl_query q2 = { "Book", &since, 1, "year", false };
    query(&q2, 3);

    cfdb_arena_free(&pa);
    cfdb_rl_metadata_free(meta);
    fdb_database_destroy(db);
    check(fdb_stop_network(), "stop network");
    pthread_join(net, NULL);
    return 0;
}
