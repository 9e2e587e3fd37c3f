/* The requests cfdb sends carry the same fields and values as the real libfdb_c 7.3.77's.
 *
 * The golden captures say what libfdb_c sent for each operation. This test replays those
 * operations through cfdb's fdb_c.h API against a cfdb-server that records every frame it
 * receives (--trace-frames), then compares request by request, field by field. Only what
 * cannot match is masked: reply tokens, versions (another cluster, another clock), span
 * ids (random in libfdb_c), the random self-conflict keys \xff/SC/<uid>, and the
 * cluster's name and addresses. */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfdb/messages.h"
#include "golden.h"

static pid_t g_server;
static char g_dir[64], g_cluster[128], g_trace[128];
static pthread_t g_net;
static FDBDatabase *g_db;

static void *network_main(void *arg)
{
    (void)arg;
    fdb_run_network();
    return NULL;
}

static int setup(void **state)
{
    strcpy(g_dir, "/tmp/cfdb-golden-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_cluster, sizeof g_cluster, "%s/fdb.cluster", g_dir);
    snprintf(g_trace, sizeof g_trace, "%s/trace.jsonl", g_dir);
    g_server = fork();
    if (g_server == 0) {
        execl(CFDB_SERVER_PATH, "cfdb-server", "--listen", "127.0.0.1:0", "--cluster-file", g_cluster,
              "--storage-servers", "1", "--quiet", "--trace-frames", g_trace, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && access(g_cluster, R_OK) != 0; i++)
        usleep(10000);
    if (fdb_select_api_version(FDB_API_VERSION) || fdb_setup_network())
        return -1;
    pthread_create(&g_net, NULL, network_main, NULL);
    return fdb_create_database(g_cluster, &g_db) ? -1 : 0;
}

static int teardown(void **state)
{
    fdb_database_destroy(g_db);
    fdb_stop_network();
    pthread_join(g_net, NULL);
    kill(g_server, SIGTERM);
    waitpid(g_server, NULL, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0)
        return -1;
    return 0;
}

static fdb_error_t wait_error(FDBFuture *f)
{
    fdb_future_block_until_ready(f);
    fdb_error_t e = fdb_future_get_error(f);
    fdb_future_destroy(f);
    return e;
}

/* ---- masking: what cannot be equal between two clusters and two runs ---- */

static bool is_self_conflict_key(cfdb_bytes k)
{
    return k.len >= 5 && memcmp(k.ptr, "\xff/SC/", 5) == 0;
}

static void mask_ranges(cfdb_key_range_vec *v)
{
    for (uint32_t i = 0; i < v->count; i++)
        if (is_self_conflict_key(v->items[i].begin)) {
            v->items[i].begin = CFDB_BYTES_LIT("\xff/SC/<uid>");
            v->items[i].end = CFDB_BYTES_LIT("\xff/SC/<uid>\x00");
        }
}

static void mask_common(cfdb_reply_promise *reply, cfdb_span_context *span)
{
    memset(reply, 0, sizeof *reply);
    if (span)
        memset(span, 0, sizeof *span);
}

static char *normalized(const fb_message *m, const uint8_t *msg, size_t len, cfdb_arena *a)
{
    void *item = cfdb_arena_zalloc(a, m->item->csize);
    assert_int_equal(fb_decode(m, msg, len, item, NULL, a), 0);
    if (m == &cfdb_msg_commit_transaction_request) {
        cfdb_commit_transaction_request *r = item;
        mask_common(&r->reply, &r->spanContext);
        r->transaction.read_snapshot = 0;
        mask_ranges(&r->transaction.read_conflict_ranges);
        mask_ranges(&r->transaction.write_conflict_ranges);
    } else if (m == &cfdb_msg_get_value_request) {
        cfdb_get_value_request *r = item;
        mask_common(&r->reply, &r->spanContext);
        r->version = 0;
    } else if (m == &cfdb_msg_get_read_version_request) {
        cfdb_get_read_version_request *r = item;
        mask_common(&r->reply, &r->spanContext);
    } else if (m == &cfdb_msg_get_key_server_locations_request) {
        cfdb_get_key_server_locations_request *r = item;
        mask_common(&r->reply, &r->spanContext);
        r->minTenantVersion = r->minTenantVersion > 0 ? 1 : r->minTenantVersion; /* "a read version" */
    } else if (m == &cfdb_msg_open_database_coord_request) {
        cfdb_open_database_coord_request *r = item;
        mask_common(&r->reply, NULL);
        memset(&r->knownClientInfoID, 0, sizeof r->knownClientInfoID);
        r->clusterKey = CFDB_BYTES_LIT("<cluster>");
        r->coordinators.count = 1; /* one coordinator in both; its address differs */
        memset(&r->coordinators.items[0], 0, sizeof r->coordinators.items[0]);
    }
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    fb_printer pr = { f, 0, true };
    fb_print_message(&pr, m, item, 0);
    fclose(f);
    return s;
}

/* The requests of one type, in order, from a capture (client to server). */
static size_t collect(const golden_capture *cap, const fb_message *m, const golden_frame **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < cap->count && n < max; i++)
        if (cap->frames[i].c2s && fb_peek_file_id(cap->frames[i].msg, cap->frames[i].len) == m->file_id)
            out[n++] = &cap->frames[i];
    return n;
}

/* ---- replaying the golden operations through the API ---- */

/* The API operation that produces a wire mutation (7.3 clients send MinV2 / AndV2). */
static int api_mutation(uint8_t wire)
{
    return wire == CFDB_MUT_MIN_V2 ? CFDB_MUT_MIN : wire == CFDB_MUT_AND_V2 ? CFDB_MUT_AND : wire;
}

static bool is_single_key_range(cfdb_key_range r)
{
    return r.end.len == r.begin.len + 1 && r.end.ptr[r.begin.len] == 0 &&
           (r.begin.len == 0 || memcmp(r.begin.ptr, r.end.ptr, r.begin.len) == 0);
}

/* Runs the transaction the golden commit request came from: its reads (gets for single
 * keys, read conflict ranges for the rest), then its mutations in order. */
static fdb_error_t replay_commit(const cfdb_commit_transaction_request *req)
{
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_db, &tr), 0);
    const cfdb_commit_transaction *t = &req->transaction;
    if (t->report_conflicting_keys)
        assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_REPORT_CONFLICTING_KEYS, NULL, 0), 0);
    for (uint32_t i = 0; i < t->read_conflict_ranges.count; i++) {
        cfdb_key_range r = t->read_conflict_ranges.items[i];
        if (is_self_conflict_key(r.begin))
            continue;
        if (is_single_key_range(r))
            assert_int_equal(wait_error(fdb_transaction_get(tr, r.begin.ptr, (int)r.begin.len, 0)), 0);
        else
            assert_int_equal(fdb_transaction_add_conflict_range(tr, r.begin.ptr, (int)r.begin.len, r.end.ptr,
                                                                (int)r.end.len, FDB_CONFLICT_RANGE_TYPE_READ),
                             0);
    }
    for (uint32_t i = 0; i < t->mutations.count; i++) {
        const cfdb_mutation *m = &t->mutations.items[i];
        if (m->type == CFDB_MUT_SET_VALUE)
            fdb_transaction_set(tr, m->param1.ptr, (int)m->param1.len, m->param2.ptr, (int)m->param2.len);
        else if (m->type == CFDB_MUT_CLEAR_RANGE && is_single_key_range((cfdb_key_range){ m->param1, m->param2 }))
            fdb_transaction_clear(tr, m->param1.ptr, (int)m->param1.len);
        else if (m->type == CFDB_MUT_CLEAR_RANGE)
            fdb_transaction_clear_range(tr, m->param1.ptr, (int)m->param1.len, m->param2.ptr, (int)m->param2.len);
        else
            fdb_transaction_atomic_op(tr, m->param1.ptr, (int)m->param1.len, m->param2.ptr, (int)m->param2.len,
                                      (FDBMutationType)api_mutation(m->type));
    }
    fdb_error_t e = wait_error(fdb_transaction_commit(tr));
    fdb_transaction_destroy(tr);
    return e;
}

static void compare_requests(const char *what, const fb_message *m, const golden_frame **golden, size_t ng,
                             const golden_frame **ours, size_t no)
{
    assert_true(ng > 0);
    if (no < ng)
        fail_msg("%s: cfdb sent %zu %s, libfdb_c %zu", what, no, m->name, ng);
    cfdb_arena a;
    cfdb_arena_init(&a);
    for (size_t i = 0; i < ng; i++) {
        char *g = normalized(m, golden[i]->msg, golden[i]->len, &a);
        char *o = normalized(m, ours[i]->msg, ours[i]->len, &a);
        if (strcmp(g, o) != 0)
            fail_msg("%s: %s #%zu differs\nlibfdb_c 7.3.77:\n%s\ncfdb:\n%s", what, m->name, i, g, o);
        free(g);
        free(o);
    }
    cfdb_arena_free(&a);
}

/* Frames recorded since the last call (the trace grows; earlier frames are skipped). */
static size_t g_trace_seen;

static void load_new_trace(golden_capture *out)
{
    golden_capture all;
    assert_int_equal(golden_load_frames_path(g_trace, &all), 0);
    memset(out, 0, sizeof *out);
    out->frames = all.frames + g_trace_seen;
    out->count = all.count - g_trace_seen;
    g_trace_seen = all.count;
    /* keep ownership simple: leak-free by freeing the head part now */
    for (size_t i = 0; i < g_trace_seen - out->count; i++)
        free(all.frames[i].msg);
}

static void free_trace(golden_capture *c, size_t total)
{
    for (size_t i = 0; i < c->count; i++)
        free(c->frames[i].msg);
    free(c->frames - (total - c->count));
}

/* Replays every commit of a scenario and compares the commit requests. */
static void check_commits(const char *scenario)
{
    golden_capture cap;
    assert_int_equal(golden_load_frames(scenario, &cap), 0);
    const golden_frame *golden[64], *ours[64];
    size_t ng = collect(&cap, &cfdb_msg_commit_transaction_request, golden, 64);
    cfdb_arena a;
    cfdb_arena_init(&a);
    for (size_t i = 0; i < ng; i++) {
        cfdb_commit_transaction_request req;
        memset(&req, 0, sizeof req);
        assert_int_equal(fb_decode(&cfdb_msg_commit_transaction_request, golden[i]->msg, golden[i]->len, &req, NULL,
                                   &a),
                         0);
        replay_commit(&req); /* the outcome may differ (conflicts are timing); the request may not */
    }
    golden_capture mine;
    load_new_trace(&mine);
    size_t total = g_trace_seen;
    size_t no = collect(&mine, &cfdb_msg_commit_transaction_request, ours, 64);
    compare_requests(scenario, &cfdb_msg_commit_transaction_request, golden, ng, ours, no);
    free_trace(&mine, total);
    cfdb_arena_free(&a);
    golden_free(&cap);
}

static void test_discovery_and_read_requests(void **state)
{
    /* the "get" scenario: three gets in one transaction */
    golden_capture cap;
    assert_int_equal(golden_load_frames("get", &cap), 0);
    const golden_frame *golden[64], *ours[64];
    size_t ng = collect(&cap, &cfdb_msg_get_value_request, golden, 64);
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(g_db, &tr), 0);
    cfdb_arena a;
    cfdb_arena_init(&a);
    for (size_t i = 0; i < ng; i++) {
        cfdb_get_value_request req;
        memset(&req, 0, sizeof req);
        assert_int_equal(fb_decode(&cfdb_msg_get_value_request, golden[i]->msg, golden[i]->len, &req, NULL, &a), 0);
        assert_int_equal(wait_error(fdb_transaction_get(tr, req.key.ptr, (int)req.key.len, 0)), 0);
    }
    fdb_transaction_destroy(tr);
    golden_capture mine;
    load_new_trace(&mine);
    size_t total = g_trace_seen;

    size_t no = collect(&mine, &cfdb_msg_get_value_request, ours, 64);
    compare_requests("get", &cfdb_msg_get_value_request, golden, ng, ours, no);
    ng = collect(&cap, &cfdb_msg_get_read_version_request, golden, 64);
    no = collect(&mine, &cfdb_msg_get_read_version_request, ours, 64);
    compare_requests("get", &cfdb_msg_get_read_version_request, golden, 1, ours, no);
    ng = collect(&cap, &cfdb_msg_get_key_server_locations_request, golden, 64);
    no = collect(&mine, &cfdb_msg_get_key_server_locations_request, ours, 64);
    compare_requests("get", &cfdb_msg_get_key_server_locations_request, golden, 1, ours, no);
    ng = collect(&cap, &cfdb_msg_open_database_coord_request, golden, 64);
    no = collect(&mine, &cfdb_msg_open_database_coord_request, ours, 64);
    compare_requests("get", &cfdb_msg_open_database_coord_request, golden, 1, ours, no);
    free_trace(&mine, total);
    cfdb_arena_free(&a);
    golden_free(&cap);
}

static void test_write_commits(void **state)
{
    check_commits("writes");
}

static void test_atomic_commits(void **state)
{
    check_commits("atomic");
}

static void test_conflict_commits(void **state)
{
    check_commits("conflict");
}

static void test_versionstamp_commits(void **state)
{
    check_commits("versionstamp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discovery_and_read_requests),
        cmocka_unit_test(test_write_commits),
        cmocka_unit_test(test_atomic_commits),
        cmocka_unit_test(test_conflict_commits),
        cmocka_unit_test(test_versionstamp_commits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
