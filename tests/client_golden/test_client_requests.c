/* cfdb sends the same requests as the real libfdb_c 7.3.77, scenario by scenario.
 *
 * tests/vectors/golden holds 15 scenarios, each one fresh libfdb_c process talking to a real
 * fdbserver 7.3.77 (NAME.frames.jsonl: every frame; NAME.results.jsonl: what the client saw).
 * For each scenario this test runs the same operations through cfdb's fdb_c.h API, in a fresh
 * child process (as the captures were: one process, one connection per scenario), against a
 * cfdb-server that records every frame it receives (--trace-frames), then compares every
 * request cfdb sent with libfdb_c's:
 *  - same kinds, same count, same order. Requests are compared as two ordered streams: the
 *    "operation" stream (everything a transaction or API call causes: read versions, key
 *    locations, reads, commits, watches, metrics, leader/status/protocol queries) and the
 *    "background" stream of the database's own long polls (OpenDatabaseCoordRequest,
 *    GlobalConfigRefreshRequest), whose place relative to the operations depends on timing.
 *    Both sides use one connection, so order within a stream is send order. Extra requests
 *    from cfdb fail the test like missing ones;
 *  - same field values, read from the bytes by the independent reader tests/wire/fdb_ref.c
 *    (written from FoundationDB 7.3.77's serialize() member lists; nothing from src/wire),
 *    vtables included, after masking only what legitimately differs between two runs on two
 *    clusters: reply tokens, span ids (random), versions (another cluster's clock), the
 *    random \xff/SC/<uid> self-conflict keys, storage server ids in \xff/serverList/ keys,
 *    the cluster key, coordinator addresses and known ClientDBInfo / leader ids.
 *  - PingRequest is left out on both sides: a connection keep-alive sent when a connection
 *    is idle (fdbrpc/FlowTransport.actor.cpp connectionMonitor), timing, not an operation.
 *
 * How each scenario's operations were reconstructed (from NAME.results.jsonl and the captured
 * requests) is written above its run_ function. Notes from the captures:
 *  - libfdb_c's read-your-writes layer caches what a range read returned for the rest of the
 *    transaction (get_range: one GetKeyValuesRequest serves 20 get_range calls) and resolves
 *    key selectors with GetKeyValuesRequest (limit 1, -1, 3, -3 ...), never GetKeyRequest;
 *  - a transaction that only writes gets its read version with FLAG_CAUSAL_READ_RISKY (flags
 *    0x08000001), one that reads with 0x08000000;
 *  - at commit, read-your-writes sends the clears of its write map first, then the other
 *    mutations, each group in key order (seed, writes, atomic);
 *  - a read at a read version older than any this client saw fails with 1007 locally, with no
 *    request (read_version_errors);
 *  - status: libfdb_c's coordinator check (GetLeaderRequest, ProtocolInfoRequest) and its
 *    cluster controller lookup (GetLeaderRequest, again with the known leader) run
 *    concurrently; their interleaving here is the capture's, not a causal order.
 * Outcomes that differ from NAME.results.jsonl (values, row counts, errors) are printed as
 * notes from the child process; they are not what this test compares.
 *
 * The comparison prints, per scenario, a short diff: the two request streams when kinds or
 * counts differ, then for requests of the same kind at the same place the fields that differ
 * (libfdb_c value, cfdb value). */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdb_ref.h"
#include "golden.h"

/* ------------------------------------------------------------------------------------------
 * KNOWN-DIFFERENT: the differences from libfdb_c 7.3.77 that cfdb's requests are known to have
 * today. Each row excuses one kind of difference in one scenario and stream
 * ("operation" or "background"), named by its signature:
 *     missing:<Request>      a request libfdb_c sent and cfdb did not
 *     extra:<Request>        a request cfdb sent and libfdb_c did not
 *     <Request>.<field>      a field that differs in requests at the same place
 * ('*' matches any run of characters other than '.'). Every difference is printed whether listed
 * or not; each listed one adds a line "KNOWN-DIFFERENT <scenario>/<stream> <signature>: <reason>".
 * A case whose differences are all listed ends in cmocka's skip() (SKIPPED in the summary;
 * scripts/test.sh fails on any skip tests/allowed-skips.txt does not list), so it is never
 * silent; any unlisted difference fails the case, and so does a row that matches nothing (remove
 * it). To turn a difference back into a failure, delete or comment out its row.
 * Since 2026-12-01 the table is empty: all 15 scenarios match libfdb_c's requests exactly. A
 * row added later names its FoundationDB 7.3.77 source (NativeAPI = fdbclient/NativeAPI.actor.cpp).
 * ------------------------------------------------------------------------------------------ */
static const struct {
    const char *scenario;
    const char *stream;
    const char *signature;
    const char *reason;
} k_known_different[] = {
    { NULL, NULL, NULL, NULL }, /* end */
};

/* ---------------- the cfdb-server ---------------- */

static pid_t g_server;
static char g_dir[64], g_cluster[128], g_trace[128];

static int group_setup(void **state)
{
    (void)state;
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
    for (int i = 0; i < 500 && access(g_cluster, R_OK) != 0; i++)
        usleep(10000);
    return access(g_cluster, R_OK);
}

static int group_teardown(void **state)
{
    (void)state;
    kill(g_server, SIGTERM);
    waitpid(g_server, NULL, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---------------- requests, from a capture or from the trace ---------------- */

typedef struct req {
    const ref_msg *m;
    ref_doc d;
} req;

typedef struct req_list {
    req *r;
    size_t n, cap;
} req_list;

static void req_list_free(req_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        ref_doc_free(&l->r[i].d);
    free(l->r);
    memset(l, 0, sizeof *l);
}

/* Reads the client-to-server frames of a frames.jsonl file from byte offset `from`. */
static void load_requests(const char *path, long from, req_list *out, const char *who)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, from, SEEK_SET);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t ll;
    while ((ll = getline(&line, &lcap, f)) > 0) {
        char *field = malloc((size_t)ll + 1);
        bool frame = golden_json_field(line, "kind", field, (size_t)ll + 1) && strcmp(field, "frame") == 0;
        bool c2s = golden_json_field(line, "dir", field, (size_t)ll + 1) && strcmp(field, "c2s") == 0;
        if (!frame || !c2s || !golden_json_field(line, "hex", field, (size_t)ll + 1)) {
            free(field);
            continue;
        }
        size_t cap = strlen(field) / 2 + 8;
        uint8_t *msg = malloc(cap);
        long n = ref_unhex(field, msg, cap);
        free(field);
        if (n < 8)
            fail_msg("%s: a frame without a message", who);
        const ref_msg *m = ref_msg_by_file_id(ref_peek_file_id(msg, (size_t)n));
        if (!m)
            fail_msg("%s sent a request with file identifier %u, which no client request has", who,
                     ref_peek_file_id(msg, (size_t)n));
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 32;
            out->r = realloc(out->r, out->cap * sizeof *out->r);
        }
        req *r = &out->r[out->n];
        r->m = m;
        if (ref_read(m, msg, (size_t)n, &r->d))
            fail_msg("%s sent a %s the reference reader cannot read: %s", who, m->name, r->d.err);
        free(msg);
        out->n++;
    }
    free(line);
    fclose(f);
}

/* ---------------- masking ---------------- */

static bool is_hex_prefix(const char *v, const char *hexprefix)
{
    return strncmp(v, "x'", 2) == 0 && strncmp(v + 2, hexprefix, strlen(hexprefix)) == 0;
}

/* Replaces 2*nbytes hex digits after a key prefix with <what>. */
static void mask_after_prefix(ref_doc *d, const char *hexprefix, size_t nbytes, const char *what)
{
    for (size_t i = 0; i < d->n; i++) {
        char *v = d->e[i].value;
        if (!is_hex_prefix(v, hexprefix))
            continue;
        size_t p = 2 + strlen(hexprefix), len = strlen(v);
        if (len < p + 2 * nbytes + 1)
            continue;
        size_t nl = len - 2 * nbytes + strlen(what) + 1;
        char *nv = malloc(nl);
        snprintf(nv, nl, "%.*s%s%s", (int)p, v, what, v + p + 2 * nbytes);
        free(v);
        d->e[i].value = nv;
    }
}

/* A version from the cluster's clock: any positive value (special values -1, -2, -3 stay). */
static void mask_version(ref_doc *d, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->e[i].path, path) == 0 && d->e[i].value[0] != '-' && strcmp(d->e[i].value, "0") != 0) {
            free(d->e[i].value);
            d->e[i].value = strdup("<version>");
        }
}

static void mask_nonzero_uid(ref_doc *d, const char *path, const char *what)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->e[i].path, path) == 0 && strcmp(d->e[i].value, "00000000000000000000000000000000") != 0) {
            free(d->e[i].value);
            d->e[i].value = strdup(what);
        }
}

static void mask(req *r)
{
    ref_doc *d = &r->d;
    ref_mask(d, "reply.token", "<token>");
    ref_mask(d, "spanContext.traceID", "<span>");
    ref_mask(d, "spanContext.spanID", "<span>");
    ref_mask(d, "transaction.spanContext.traceID", "<span>");
    ref_mask(d, "transaction.spanContext.spanID", "<span>");
    mask_version(d, "version");
    mask_version(d, "minTenantVersion");
    mask_version(d, "transaction.read_snapshot");
    mask_version(d, "lastKnown");
    mask_version(d, "minVersion");
    /* \xff/SC/ + 16 random bytes (NativeAPI makeSelfConflicting) */
    mask_after_prefix(d, "ff2f53432f", 16, "<uid>");
    /* \xff/serverList/ + the storage server's id */
    mask_after_prefix(d, "ff2f7365727665724c6973742f", 16, "<ssid>");
    if (r->m == &ref_open_database_coord_request) {
        mask_nonzero_uid(d, "knownClientInfoID", "<clientdbinfo id>");
        ref_mask(d, "clusterKey", "<cluster>");
        ref_mask(d, "coordinators[*].ip.addr", "<ip>");
        ref_mask(d, "coordinators[*].port", "<port>");
    } else if (r->m == &ref_get_leader_request) {
        ref_mask(d, "key", "<cluster>");
        mask_nonzero_uid(d, "knownLeader", "<leader id>");
    }
}

/* ---------------- streams and the diff ---------------- */

static bool is_background(const ref_msg *m)
{
    return m == &ref_open_database_coord_request || m == &ref_global_config_refresh_request;
}

static const char *short_kind(const ref_msg *m)
{
    static const struct {
        const ref_msg *m;
        const char *s;
    } names[] = { { &ref_get_read_version_request, "GRV" },
                  { &ref_get_key_server_locations_request, "Locations" },
                  { &ref_get_value_request, "GetValue" },
                  { &ref_get_key_request, "GetKey" },
                  { &ref_get_key_values_request, "GetKeyValues" },
                  { &ref_get_mapped_key_values_request, "GetMappedKeyValues" },
                  { &ref_commit_transaction_request, "Commit" },
                  { &ref_watch_value_request, "WatchValue" },
                  { &ref_wait_metrics_request, "WaitMetrics" },
                  { &ref_split_range_request, "SplitRange" },
                  { &ref_open_database_coord_request, "OpenDatabaseCoord" },
                  { &ref_global_config_refresh_request, "GlobalConfigRefresh" } };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].m == m)
            return names[i].s;
    return m->name;
}

/* x'672f6b303130' -> g/k010 (non-printable bytes as \xNN) */
static void printable(const char *v, char *out, size_t cap)
{
    size_t o = 0;
    if (!v || strncmp(v, "x'", 2) != 0) {
        snprintf(out, cap, "%s", v ? v : "?");
        return;
    }
    for (const char *p = v + 2; p[0] && p[0] != '\'' && p[1] && o + 5 < cap; p += 2) {
        if (p[0] == '<') { /* a masked part */
            const char *e = strchr(p, '>');
            size_t n = e ? (size_t)(e - p + 1) : 1;
            if (o + n >= cap)
                break;
            memcpy(out + o, p, n);
            o += n;
            p += n - 2;
            continue;
        }
        unsigned b;
        sscanf(p, "%2x", &b);
        if (isprint((int)b) && b != '\\')
            out[o++] = (char)b;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", b);
    }
    out[o] = 0;
}

/* A key selector as FoundationDB names the four usual ones. */
static void selector(const ref_doc *d, const char *which, char *out, size_t cap)
{
    char p[64], k[96];
    snprintf(p, sizeof p, "%s.key", which);
    printable(ref_get(d, p), k, sizeof k);
    snprintf(p, sizeof p, "%s.orEqual", which);
    bool eq = strcmp(ref_get(d, p), "true") == 0;
    snprintf(p, sizeof p, "%s.offset", which);
    int off = atoi(ref_get(d, p));
    if (off == 1)
        snprintf(out, cap, "%s(%s)", eq ? "firstGreaterThan" : "firstGreaterOrEqual", k);
    else if (off == 0)
        snprintf(out, cap, "%s(%s)", eq ? "lastLessOrEqual" : "lastLessThan", k);
    else
        snprintf(out, cap, "(%s, orEqual %d, offset %d)", k, eq, off);
}

/* One line describing a request: kind and its main arguments. */
static void summary(const req *r, char *buf, size_t cap)
{
    const ref_doc *d = &r->d;
    char a[256], b[256];
    const ref_msg *m = r->m;
    if (m == &ref_get_value_request || m == &ref_watch_value_request) {
        printable(ref_get(d, "key"), a, sizeof a);
        snprintf(buf, cap, "%s(%.160s)", short_kind(m), a);
    } else if (m == &ref_get_key_server_locations_request) {
        printable(ref_get(d, "begin"), a, sizeof a);
        snprintf(buf, cap, "%s(%.160s limit %.12s)", short_kind(m), a, ref_get(d, "limit"));
    } else if (m == &ref_get_key_values_request || m == &ref_get_mapped_key_values_request) {
        selector(d, "begin", a, sizeof a);
        selector(d, "end", b, sizeof b);
        snprintf(buf, cap, "%s(%.100s .. %.100s, limit %.12s, bytes %.12s)", short_kind(m), a, b, ref_get(d, "limit"),
                 ref_get(d, "limitBytes"));
    } else if (m == &ref_get_read_version_request) {
        snprintf(buf, cap, "GRV(flags %s, count %s)", ref_get(d, "flags"), ref_get(d, "transactionCount"));
    } else if (m == &ref_commit_transaction_request) {
        snprintf(buf, cap, "Commit(%s mutations, %s read / %s write ranges)",
                 ref_get(d, "transaction.mutations.count"), ref_get(d, "transaction.read_conflict_ranges.count"),
                 ref_get(d, "transaction.write_conflict_ranges.count"));
    } else {
        snprintf(buf, cap, "%s", short_kind(m));
    }
}

typedef struct report {
    char *text;
    size_t len, cap;
    size_t differences;
    char **sig; /* one per difference: "missing:<Request>", "extra:<Request>", "<Request>.<field>" */
} report;

static void add_sig(report *rp, const char *fmt, const char *a, const char *b)
{
    char buf[512];
    snprintf(buf, sizeof buf, fmt, a, b);
    rp->sig = realloc(rp->sig, (rp->differences + 1) * sizeof *rp->sig);
    rp->sig[rp->differences++] = strdup(buf);
}

static void report_free(report *rp)
{
    for (size_t i = 0; i < rp->differences; i++)
        free(rp->sig[i]);
    free(rp->sig);
    free(rp->text);
}

static void say(report *rp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[8192];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t k = (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1;
    if (rp->len + k + 1 > rp->cap) {
        rp->cap = (rp->len + k + 1) * 2;
        rp->text = realloc(rp->text, rp->cap);
    }
    memcpy(rp->text + rp->len, tmp, k + 1);
    rp->len += k;
}

/* Aligns the two kind sequences (longest common subsequence), so that one missing or extra
 * request shows as one row and the requests around it are still compared field by field. */
static size_t align(req *const *want, size_t nw, req *const *got, size_t ng, long *ai, long *aj)
{
    size_t *L = calloc((nw + 1) * (ng + 1), sizeof *L);
#define LCS(i, j) L[(i) * (ng + 1) + (j)]
    for (size_t i = nw; i-- > 0;)
        for (size_t j = ng; j-- > 0;)
            LCS(i, j) = want[i]->m == got[j]->m ? LCS(i + 1, j + 1) + 1
                        : LCS(i + 1, j) >= LCS(i, j + 1) ? LCS(i + 1, j)
                                                          : LCS(i, j + 1);
    size_t i = 0, j = 0, n = 0;
    while (i < nw || j < ng) {
        if (i < nw && j < ng && want[i]->m == got[j]->m && LCS(i, j) == LCS(i + 1, j + 1) + 1) {
            ai[n] = (long)i++;
            aj[n++] = (long)j++;
        } else if (j >= ng || (i < nw && LCS(i + 1, j) >= LCS(i, j + 1))) {
            ai[n] = (long)i++;
            aj[n++] = -1;
        } else {
            ai[n] = -1;
            aj[n++] = (long)j++;
        }
    }
#undef LCS
    free(L);
    return n;
}

static void compare_stream(report *rp, const char *label, req *const *want, size_t nw, req *const *got, size_t ng)
{
    long *ai = calloc(nw + ng + 1, sizeof *ai), *aj = calloc(nw + ng + 1, sizeof *aj);
    size_t rows = align(want, nw, got, ng, ai, aj);
    bool kinds_same = nw == ng && rows == nw;
    if (!kinds_same) {
        say(rp, "  %s requests: libfdb_c sent %zu, cfdb %zu; kinds, count or order differ "
                "(libfdb_c | cfdb, * = only on one side):\n", label, nw, ng);
        for (size_t r = 0; r < rows; r++) {
            char a[256] = "-", b[256] = "-", ia[24] = "", ib[24] = "";
            if (ai[r] >= 0) {
                summary(want[ai[r]], a, sizeof a);
                snprintf(ia, sizeof ia, "#%ld", ai[r]);
            }
            if (aj[r] >= 0) {
                summary(got[aj[r]], b, sizeof b);
                snprintf(ib, sizeof ib, "#%ld", aj[r]);
            }
            say(rp, "    %s %-4s %-62s | %-4s %s\n", ai[r] >= 0 && aj[r] >= 0 ? " " : "*", ia, a, ib, b);
            if (aj[r] < 0)
                add_sig(rp, "missing:%s%s", want[ai[r]]->m->name, "");
            else if (ai[r] < 0)
                add_sig(rp, "extra:%s%s", got[aj[r]]->m->name, "");
        }
    }
    for (size_t r = 0; r < rows; r++) {
        if (ai[r] < 0 || aj[r] < 0)
            continue;
        char diff[6000];
        size_t nd = ref_diff(&want[ai[r]]->d, &got[aj[r]]->d, diff, sizeof diff, 12);
        if (nd == 0)
            continue;
        char **paths;
        size_t np = ref_diff_paths(&want[ai[r]]->d, &got[aj[r]]->d, &paths);
        for (size_t k = 0; k < np; k++) {
            add_sig(rp, "%s.%s", want[ai[r]]->m->name, paths[k]);
            free(paths[k]);
        }
        free(paths);
        char a[256];
        summary(want[ai[r]], a, sizeof a);
        say(rp, "  %s request libfdb_c #%ld / cfdb #%ld %s: %zu field(s) differ:\n%s", label, ai[r], aj[r], a, nd,
            diff);
    }
    free(ai);
    free(aj);
}

/* ---------------- running a scenario in a child process ---------------- */

typedef struct scen scen;
typedef void (*scen_fn)(FDBDatabase *db, scen *s);
struct scen {
    const char *name;
    scen_fn run;
    char **results; /* NAME.results.jsonl lines */
    size_t nresults;
    req_list golden;
    int notes; /* outcomes that differ from results.jsonl (printed, informational) */
};

static void *network_main(void *arg)
{
    (void)arg;
    fdb_error_t e = fdb_run_network();
    if (e)
        fprintf(stderr, "fdb_run_network: %d\n", e);
    return NULL;
}

static void note(scen *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  [%s: outcome differs from the capture's results] ", s->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    s->notes++;
}

static fdb_error_t wait_fut(FDBFuture *f)
{
    fdb_error_t e = fdb_future_block_until_ready(f);
    return e ? e : fdb_future_get_error(f);
}

static fdb_error_t done(FDBFuture *f)
{
    fdb_error_t e = wait_fut(f);
    fdb_future_destroy(f);
    return e;
}

static FDBTransaction *new_tr(FDBDatabase *db)
{
    FDBTransaction *tr = NULL;
    if (fdb_database_create_transaction(db, &tr)) {
        fprintf(stderr, "cannot create a transaction\n");
        _exit(3);
    }
    return tr;
}

/* A results.jsonl field as bytes (hex) or text. */
static long res_bytes(const char *line, const char *name, uint8_t *out, size_t cap)
{
    char hex[65536];
    if (!golden_json_field(line, name, hex, sizeof hex))
        return -1;
    return golden_unhex(hex, out, cap);
}

static long res_int(const char *line, const char *name)
{
    char v[64];
    return golden_json_field(line, name, v, sizeof v) ? atol(v) : 0;
}

static bool res_is(const char *line, const char *op)
{
    char v[64];
    return golden_json_field(line, "op", v, sizeof v) && strcmp(v, op) == 0;
}

static int hexbytes(const char *v, uint8_t *out, size_t cap)
{
    /* "x'....'" */
    char tmp[65536];
    size_t n = strlen(v);
    if (n < 3 || n - 3 >= sizeof tmp)
        return -1;
    memcpy(tmp, v + 2, n - 3);
    tmp[n - 3] = 0;
    return (int)golden_unhex(tmp, out, cap);
}

/* The k-th captured request of a kind. */
static const req *golden_nth(const scen *s, const ref_msg *m, unsigned k)
{
    for (size_t i = 0; i < s->golden.n; i++)
        if (s->golden.r[i].m == m && k-- == 0)
            return &s->golden.r[i];
    fprintf(stderr, "%s: the capture has no such %s\n", s->name, m->name);
    _exit(4);
}

static unsigned doc_count(const ref_doc *d, const char *path)
{
    const char *v = ref_get(d, path);
    return v ? (unsigned)atoi(v) : 0;
}

/* API operation codes from wire mutation types (API 730 sends AND as AndV2, MIN as MinV2). */
static FDBMutationType api_op(int wire)
{
    return wire == 19 ? FDB_MUTATION_TYPE_BIT_AND : wire == 18 ? FDB_MUTATION_TYPE_MIN : (FDBMutationType)wire;
}

/* Applies the non-clear mutations of a captured commit through the API, in order. */
static void apply_captured_mutations(FDBTransaction *tr, const req *commit)
{
    unsigned n = doc_count(&commit->d, "transaction.mutations.count");
    for (unsigned i = 0; i < n; i++) {
        char p[128];
        static uint8_t k[65536], v[65536];
        snprintf(p, sizeof p, "transaction.mutations[%u].type", i);
        int type = atoi(ref_get(&commit->d, p));
        snprintf(p, sizeof p, "transaction.mutations[%u].param1", i);
        int kl = hexbytes(ref_get(&commit->d, p), k, sizeof k);
        snprintf(p, sizeof p, "transaction.mutations[%u].param2", i);
        int vl = hexbytes(ref_get(&commit->d, p), v, sizeof v);
        if (type == 1) /* ClearRange: replayed by the scenario itself */
            continue;
        if (type == 0)
            fdb_transaction_set(tr, k, kl, v, vl);
        else
            fdb_transaction_atomic_op(tr, k, kl, v, vl, api_op(type));
    }
}

static void check_get(scen *s, FDBTransaction *tr, const char *line)
{
    uint8_t key[4096], want[16384];
    long kl = res_bytes(line, "key", key, sizeof key);
    long wl = res_bytes(line, "value", want, sizeof want);
    char pres[16];
    bool want_present = !golden_json_field(line, "present", pres, sizeof pres) || strcmp(pres, "false") != 0;
    FDBFuture *f = fdb_transaction_get(tr, key, (int)kl, 0);
    fdb_error_t e = wait_fut(f);
    fdb_bool_t present = 0;
    const uint8_t *v = NULL;
    int vl = 0;
    if (!e)
        e = fdb_future_get_value(f, &present, &v, &vl);
    if (e)
        note(s, "get of %.*s: error %d", (int)kl, key, e);
    else if ((bool)present != want_present || (present && (vl != wl || memcmp(v, want, (size_t)vl) != 0)))
        note(s, "get of %.*s: present %d, %d bytes", (int)kl, key, present, vl);
    fdb_future_destroy(f);
}

/* connect: one transaction reads its read version. */
static void run_connect(FDBDatabase *db, scen *s)
{
    (void)s;
    FDBTransaction *tr = new_tr(db);
    FDBFuture *f = fdb_transaction_get_read_version(tr);
    if (wait_fut(f))
        note(s, "get_read_version failed");
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* seed: the capture's two commits. The first clears [g/, g0) and sets g/hello and g/k000..k049
 * (on the wire: 52 clear pieces around the 51 set keys, then the sets); the second sets the
 * index and record keys used by mapped_range. */
static void run_seed(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    fdb_transaction_clear_range(tr, (const uint8_t *)"g/", 2, (const uint8_t *)"g0", 2);
    apply_captured_mutations(tr, golden_nth(s, &ref_commit_transaction_request, 0));
    if (done(fdb_transaction_commit(tr)))
        note(s, "first commit failed");
    fdb_transaction_destroy(tr);
    tr = new_tr(db);
    apply_captured_mutations(tr, golden_nth(s, &ref_commit_transaction_request, 1));
    if (done(fdb_transaction_commit(tr)))
        note(s, "second commit failed");
    fdb_transaction_destroy(tr);
}

/* get: the results' gets, in one transaction. */
static void run_get(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    for (size_t i = 0; i < s->nresults; i++)
        if (res_is(s->results[i], "get"))
            check_get(s, tr, s->results[i]);
    fdb_transaction_destroy(tr);
}

/* get_key: the results' get_key calls (selector key, or_equal, offset), in one transaction. */
static void run_get_key(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    for (size_t i = 0; i < s->nresults; i++) {
        const char *line = s->results[i];
        if (!res_is(line, "get_key"))
            continue;
        char sel[256];
        golden_json_field(line, "sel", sel, sizeof sel); /* text, not hex */
        uint8_t want[256];
        long wl = res_bytes(line, "result", want, sizeof want);
        FDBFuture *f = fdb_transaction_get_key(tr, (const uint8_t *)sel, (int)strlen(sel),
                                               (fdb_bool_t)res_int(line, "or_equal"), (int)res_int(line, "offset"), 0);
        const uint8_t *k = NULL;
        int kl = 0;
        fdb_error_t e = wait_fut(f);
        if (!e)
            e = fdb_future_get_key(f, &k, &kl);
        if (e || kl != wl || memcmp(k, want, (size_t)kl) != 0)
            note(s, "get_key(%s, %ld, %ld): error %d or another key", sel, res_int(line, "or_equal"),
                 res_int(line, "offset"), e);
        fdb_future_destroy(f);
    }
    fdb_transaction_destroy(tr);
}

/* Runs one get_range result line; returns the last key read (for the next iteration). */
static void do_get_range(scen *s, FDBTransaction *tr, const char *line, const uint8_t *after, int after_len)
{
    uint8_t b[256], e[256];
    long bl = res_bytes(line, "begin", b, sizeof b), el = res_bytes(line, "end", e, sizeof e);
    int iteration = (int)res_int(line, "iteration");
    bool reverse = res_int(line, "reverse") != 0;
    /* iteration > 1 continues after the previous call's last key, as a range iterator does */
    const uint8_t *bk = b, *ek = e;
    int bkl = (int)bl, ekl = (int)el;
    fdb_bool_t bor = 0, eor = 0;
    if (iteration > 1 && !reverse) {
        bk = after;
        bkl = after_len;
        bor = 1; /* firstGreaterThan(last) */
    } else if (iteration > 1) {
        ek = after;
        ekl = after_len; /* firstGreaterOrEqual(last) as the end */
    }
    FDBFuture *f = fdb_transaction_get_range(tr, bk, bkl, bor, 1, ek, ekl, eor, 1, (int)res_int(line, "limit"),
                                             (int)res_int(line, "target_bytes"),
                                             (FDBStreamingMode)res_int(line, "mode"), iteration, 0, reverse);
    const FDBKeyValue *kv = NULL;
    int count = 0;
    fdb_bool_t more = 0;
    fdb_error_t err = wait_fut(f);
    if (!err)
        err = fdb_future_get_keyvalue_array(f, &kv, &count, &more);
    if (err || count != res_int(line, "count") || (bool)more != (res_int(line, "more") != 0))
        note(s, "get_range iteration %d mode %ld: error %d, %d rows (libfdb_c %ld), more %d", iteration,
             res_int(line, "mode"), err, count, res_int(line, "count"), more);
    fdb_future_destroy(f);
}

/* get_range: the results' 20 get_range calls, in one transaction (one GetKeyValuesRequest in
 * the capture: the first call read all of [g/, g0) and the others were served from RYW's
 * cache). Each line's begin/end are firstGreaterOrEqual selectors; later iterations start
 * after the previous line's last key. */
static void run_get_range(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    uint8_t last[256];
    long last_len = 0;
    for (size_t i = 0; i < s->nresults; i++) {
        const char *line = s->results[i];
        if (!res_is(line, "get_range"))
            continue;
        do_get_range(s, tr, line, last, (int)last_len);
        last_len = res_bytes(line, "last", last, sizeof last);
        if (last_len < 0)
            last_len = 0;
    }
    fdb_transaction_destroy(tr);
}

/* writes: one transaction sets w/a = "1", clears w/b and [w/c, w/d), then reads w/a (from its
 * own writes: no request) and w/z (absent), and commits. The capture's commit: clears first,
 * then the set; read conflict on w/z only. */
static void run_writes(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    fdb_transaction_set(tr, (const uint8_t *)"w/a", 3, (const uint8_t *)"1", 1);
    fdb_transaction_clear(tr, (const uint8_t *)"w/b", 3);
    fdb_transaction_clear_range(tr, (const uint8_t *)"w/c", 3, (const uint8_t *)"w/d", 3);
    for (size_t i = 0; i < s->nresults; i++)
        if (res_is(s->results[i], "get"))
            check_get(s, tr, s->results[i]);
    if (done(fdb_transaction_commit(tr)))
        note(s, "commit failed");
    fdb_transaction_destroy(tr);
}

/* atomic: one transaction with the capture's ten atomic operations, committed; then a second
 * transaction reads the ten keys in the results' order. */
static void run_atomic(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    apply_captured_mutations(tr, golden_nth(s, &ref_commit_transaction_request, 0));
    if (done(fdb_transaction_commit(tr)))
        note(s, "commit failed");
    fdb_transaction_destroy(tr);
    tr = new_tr(db);
    for (size_t i = 0; i < s->nresults; i++)
        if (res_is(s->results[i], "get"))
            check_get(s, tr, s->results[i]);
    fdb_transaction_destroy(tr);
}

/* versionstamp: SetVersionstampedKey and SetVersionstampedValue (operands as captured, with
 * their 4-byte offsets), commit, get_versionstamp (10 bytes). */
static void run_versionstamp(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    apply_captured_mutations(tr, golden_nth(s, &ref_commit_transaction_request, 0));
    FDBFuture *vs = fdb_transaction_get_versionstamp(tr);
    if (done(fdb_transaction_commit(tr)))
        note(s, "commit failed");
    const uint8_t *k;
    int kl = 0;
    if (wait_fut(vs) || fdb_future_get_key(vs, &k, &kl) || kl != 10)
        note(s, "versionstamp: %d bytes", kl);
    fdb_future_destroy(vs);
    fdb_transaction_destroy(tr);
}

/* conflict, twice (the second time with REPORT_CONFLICTING_KEYS): t1 reads c/x; t2 sets
 * c/x = "t2" and commits; t1 sets c/y = "t1" and commits: 1020. The second time, t1 then reads
 * \xff\xff/transaction/conflicting_keys/ (answered locally). */
static void run_conflict(FDBDatabase *db, scen *s)
{
    for (int with_report = 0; with_report < 2; with_report++) {
        FDBTransaction *t1 = new_tr(db);
        if (with_report && fdb_transaction_set_option(t1, FDB_TR_OPTION_REPORT_CONFLICTING_KEYS, NULL, 0))
            note(s, "REPORT_CONFLICTING_KEYS refused");
        FDBFuture *f = fdb_transaction_get(t1, (const uint8_t *)"c/x", 3, 0);
        if (wait_fut(f))
            note(s, "get c/x failed");
        fdb_future_destroy(f);
        FDBTransaction *t2 = new_tr(db);
        fdb_transaction_set(t2, (const uint8_t *)"c/x", 3, (const uint8_t *)"t2", 2);
        if (done(fdb_transaction_commit(t2)))
            note(s, "t2 commit failed");
        fdb_transaction_destroy(t2);
        fdb_transaction_set(t1, (const uint8_t *)"c/y", 3, (const uint8_t *)"t1", 2);
        fdb_error_t e = done(fdb_transaction_commit(t1));
        if (e != 1020)
            note(s, "t1 commit: %d, libfdb_c 1020", e);
        if (with_report) {
            static const char b[] = "\xff\xff/transaction/conflicting_keys/";
            static const char en[] = "\xff\xff/transaction/conflicting_keys0";
            f = fdb_transaction_get_range(t1, (const uint8_t *)b, (int)sizeof b - 1, 0, 1, (const uint8_t *)en,
                                          (int)sizeof en - 1, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
            const FDBKeyValue *kv;
            int count = 0;
            fdb_bool_t more;
            if (wait_fut(f) || fdb_future_get_keyvalue_array(f, &kv, &count, &more) || count != 2)
                note(s, "conflicting keys: %d rows, libfdb_c 2", count);
            fdb_future_destroy(f);
        }
        fdb_transaction_destroy(t1);
    }
}

/* watch: t1 reads wt/key (absent), watches it and commits (read-only: nothing sent); t2 sets it
 * to "changed" and commits; the watch fires. */
static void run_watch(FDBDatabase *db, scen *s)
{
    FDBTransaction *t1 = new_tr(db);
    FDBFuture *f = fdb_transaction_get(t1, (const uint8_t *)"wt/key", 6, 0);
    if (wait_fut(f))
        note(s, "get failed");
    fdb_future_destroy(f);
    FDBFuture *w = fdb_transaction_watch(t1, (const uint8_t *)"wt/key", 6);
    if (done(fdb_transaction_commit(t1)))
        note(s, "t1 commit failed");
    FDBTransaction *t2 = new_tr(db);
    fdb_transaction_set(t2, (const uint8_t *)"wt/key", 6, (const uint8_t *)"changed", 7);
    if (done(fdb_transaction_commit(t2)))
        note(s, "t2 commit failed");
    if (done(w))
        note(s, "watch did not fire cleanly");
    fdb_transaction_destroy(t2);
    fdb_transaction_destroy(t1);
}

/* mapped_range: get_mapped_range over the odd index entries [\x02idx\x00\x02odd\x00,
 * ...\xff) with the captured mapper, WANT_ALL. */
static void run_mapped_range(FDBDatabase *db, scen *s)
{
    const req *g = golden_nth(s, &ref_get_mapped_key_values_request, 0);
    uint8_t b[256], e[256], mapper[256];
    int bl = hexbytes(ref_get(&g->d, "begin.key"), b, sizeof b);
    int el = hexbytes(ref_get(&g->d, "end.key"), e, sizeof e);
    int ml = hexbytes(ref_get(&g->d, "mapper"), mapper, sizeof mapper);
    FDBTransaction *tr = new_tr(db);
    FDBFuture *f = fdb_transaction_get_mapped_range(tr, b, bl, 0, 1, e, el, 0, 1, mapper, ml, 0, 0,
                                                    FDB_STREAMING_MODE_WANT_ALL, 1, 0, 0);
    const FDBMappedKeyValue *kv;
    int count = 0;
    fdb_bool_t more;
    fdb_error_t err = wait_fut(f);
    if (err || fdb_future_get_mappedkeyvalue_array(f, &kv, &count, &more) || count != 3)
        note(s, "get_mapped_range: error %d, %d rows (libfdb_c 3)", err, count);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* metrics: estimated size of [g/, g0), split points of [g/, g0) by 1000 bytes, addresses of
 * g/hello, one after the other in one transaction. */
static void run_metrics(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    if (done(fdb_transaction_get_estimated_range_size_bytes(tr, (const uint8_t *)"g/", 2, (const uint8_t *)"g0", 2)))
        note(s, "estimated range size failed");
    if (done(fdb_transaction_get_range_split_points(tr, (const uint8_t *)"g/", 2, (const uint8_t *)"g0", 2, 1000)))
        note(s, "split points failed");
    /* the answer must be right, not only asked as libfdb_c asks: the one storage server of
     * this cfdb-server listens where its coordinator does (a wrong answer fails the case) */
    FDBFuture *f = fdb_transaction_get_addresses_for_key(tr, (const uint8_t *)"g/hello", 7);
    const char **addrs = NULL;
    int count = 0;
    if (wait_fut(f) || fdb_future_get_string_array(f, &addrs, &count)) {
        note(s, "addresses for key failed");
    } else {
        char text[256] = "";
        FILE *cf = fopen(g_cluster, "r");
        if (cf) {
            if (!fgets(text, sizeof text, cf))
                text[0] = 0;
            fclose(cf);
        }
        const char *at = strchr(text, '@');
        size_t alen = at ? strcspn(at + 1, ",\n") : 0;
        if (count != 1 || !at || strlen(addrs[0]) != alen || strncmp(addrs[0], at + 1, alen) != 0) {
            fprintf(stderr, "addresses for key: %d, first %s; the server is at %.*s\n", count,
                    count > 0 ? addrs[0] : "-", (int)alen, at ? at + 1 : "");
            _exit(4);
        }
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* status: one read of \xff\xff/status/json. */
static void run_status(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)"\xff\xff/status/json", 14, 0);
    fdb_bool_t present = 0;
    const uint8_t *v;
    int vl;
    if (wait_fut(f) || fdb_future_get_value(f, &present, &v, &vl) || !present) {
        note(s, "status json missing");
    } else {
        /* the document must be right too: coordinators reachable, the database available, the
         * cluster section from the cluster controller (a wrong answer fails the case) */
        char *doc = strndup((const char *)v, (size_t)vl);
        if (!doc || !strstr(doc, "\"quorum_reachable\":true") || !strstr(doc, "\"available\":true") ||
            !strstr(doc, "\"cluster\":{") || strstr(doc, "status_incomplete")) {
            fprintf(stderr, "status json: %.400s\n", doc ? doc : "?");
            _exit(4);
        }
        free(doc);
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* system: with READ_SYSTEM_KEYS, get \xff/metadataVersion (answered from the read version
 * reply: no request) and read [\xff/keyServers/, \xff/keyServers0) (WANT_ALL). */
static void run_system(FDBDatabase *db, scen *s)
{
    FDBTransaction *tr = new_tr(db);
    if (fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0))
        note(s, "READ_SYSTEM_KEYS refused");
    for (size_t i = 0; i < s->nresults; i++) {
        const char *line = s->results[i];
        if (res_is(line, "get"))
            check_get(s, tr, line);
        else if (res_is(line, "get_range"))
            do_get_range(s, tr, line, NULL, 0);
    }
    fdb_transaction_destroy(tr);
}

/* read_version_errors: t1 gets a read version v (> 1e6); t2 reads g/hello at read version 1
 * (1007; libfdb_c answers it locally: older than any version it saw); t3 reads g/hello at
 * v + 1e9 (the capture's future version: 1009 from the storage server). */
static void run_read_version_errors(FDBDatabase *db, scen *s)
{
    FDBTransaction *t1 = new_tr(db);
    FDBFuture *f = fdb_transaction_get_read_version(t1);
    int64_t v = 0;
    if (wait_fut(f) || fdb_future_get_int64(f, &v) || v <= 1000000)
        note(s, "read version %lld, libfdb_c's was above 1e6", (long long)v);
    fdb_future_destroy(f);
    fdb_transaction_destroy(t1);
    FDBTransaction *t2 = new_tr(db);
    fdb_transaction_set_read_version(t2, 1);
    fdb_error_t e = done(fdb_transaction_get(t2, (const uint8_t *)"g/hello", 7, 0));
    if (e != 1007)
        note(s, "old read version: %d, libfdb_c 1007", e);
    fdb_transaction_destroy(t2);
    FDBTransaction *t3 = new_tr(db);
    fdb_transaction_set_read_version(t3, v + 1000000000);
    e = done(fdb_transaction_get(t3, (const uint8_t *)"g/hello", 7, 0));
    if (e != 1009)
        note(s, "future read version: %d, libfdb_c 1009", e);
    fdb_transaction_destroy(t3);
}

static void child_main(scen *s)
{
    if (fdb_select_api_version(FDB_API_VERSION) || fdb_setup_network()) {
        fprintf(stderr, "cannot start the network\n");
        _exit(2);
    }
    pthread_t net;
    pthread_create(&net, NULL, network_main, NULL);
    FDBDatabase *db = NULL;
    if (fdb_create_database(g_cluster, &db)) {
        fprintf(stderr, "cannot create the database\n");
        _exit(2);
    }
    s->run(db, s);
    fdb_database_destroy(db);
    fdb_stop_network();
    pthread_join(net, NULL);
    fflush(stderr);
    _exit(0);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void load_results(scen *s)
{
    char path[512];
    snprintf(path, sizeof path, "%s/golden/%s.results.jsonl", CFDB_VECTORS_DIR, s->name);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("no %s", path);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        s->results = realloc(s->results, (s->nresults + 1) * sizeof *s->results);
        s->results[s->nresults++] = strdup(line);
    }
    free(line);
    fclose(f);
}

/* The row that excuses a difference, or -1. */
static long known_row(const char *scenario, const char *stream, const char *sig)
{
    for (long i = 0; k_known_different[i].scenario; i++)
        if (strcmp(k_known_different[i].scenario, scenario) == 0 && strcmp(k_known_different[i].stream, stream) == 0 &&
            ref_glob(k_known_different[i].signature, sig))
            return i;
    return -1;
}

static void run_scenario(const char *name, scen_fn fn)
{
    scen s;
    memset(&s, 0, sizeof s);
    s.name = name;
    s.run = fn;
    load_results(&s);
    char path[512];
    snprintf(path, sizeof path, "%s/golden/%s.frames.jsonl", CFDB_VECTORS_DIR, name);
    load_requests(path, 0, &s.golden, "libfdb_c");

    long from = file_size(g_trace);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child_main(&s);
    assert_true(pid > 0);
    int status = 0;
    double start = now_s();
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_s() - start > 90) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("%s: cfdb's run of the scenario did not finish in 90 s", name);
        }
        usleep(20000);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("%s: cfdb's run of the scenario ended with status 0x%x", name, status);
    /* let the server record what was in flight when the client closed */
    long size = file_size(g_trace);
    for (int i = 0; i < 50; i++) {
        usleep(50000);
        long now = file_size(g_trace);
        if (now == size && i >= 4)
            break;
        size = now;
    }
    req_list mine;
    load_requests(g_trace, from, &mine, "cfdb");

    /* the two streams of each side, keep-alives left out, masked */
    req **gw_op = calloc(s.golden.n + 1, sizeof *gw_op), **gw_bg = calloc(s.golden.n + 1, sizeof *gw_bg);
    req **cf_op = calloc(mine.n + 1, sizeof *cf_op), **cf_bg = calloc(mine.n + 1, sizeof *cf_bg);
    size_t ngo = 0, ngb = 0, nco = 0, ncb = 0;
    for (size_t i = 0; i < s.golden.n; i++) {
        req *r = &s.golden.r[i];
        if (r->m == &ref_ping_request)
            continue;
        mask(r);
        if (is_background(r->m))
            gw_bg[ngb++] = r;
        else
            gw_op[ngo++] = r;
    }
    for (size_t i = 0; i < mine.n; i++) {
        req *r = &mine.r[i];
        if (r->m == &ref_ping_request)
            continue;
        mask(r);
        if (is_background(r->m))
            cf_bg[ncb++] = r;
        else
            cf_op[nco++] = r;
    }
    report ops, bg;
    memset(&ops, 0, sizeof ops);
    memset(&bg, 0, sizeof bg);
    compare_stream(&ops, "operation", gw_op, ngo, cf_op, nco);
    compare_stream(&bg, "background", gw_bg, ngb, cf_bg, ncb);
    /* printed directly: cmocka's print_message cuts messages at 1 KiB */
    if (ops.differences || bg.differences)
        printf("scenario %s: cfdb's requests differ from libfdb_c 7.3.77's (%zu operation + %zu background "
               "requests captured, cfdb sent %zu + %zu):\n%s%s",
               name, ngo, ngb, nco, ncb, ops.text ? ops.text : "", bg.text ? bg.text : "");
    else
        printf("scenario %s: %zu operation + %zu background requests, same kinds, order and fields\n", name, ngo,
               ngb);
    size_t nrows = 0;
    while (k_known_different[nrows].scenario)
        nrows++;
    bool *used = calloc(nrows + 1, sizeof *used);
    size_t hard = 0, known = 0;
    const report *streams[2] = { &ops, &bg };
    const char *stream_names[2] = { "operation", "background" };
    for (int st = 0; st < 2; st++)
        for (size_t i = 0; i < streams[st]->differences; i++) {
            long row = known_row(name, stream_names[st], streams[st]->sig[i]);
            if (row < 0) {
                printf("  NOT LISTED in k_known_different: %s/%s %s\n", name, stream_names[st], streams[st]->sig[i]);
                hard++;
            } else {
                used[row] = true;
                known++;
            }
        }
    size_t stale = 0;
    for (size_t r = 0; r < nrows; r++) {
        if (strcmp(k_known_different[r].scenario, name) != 0)
            continue;
        if (used[r]) {
            printf("KNOWN-DIFFERENT %s/%s %s: %s\n", name, k_known_different[r].stream,
                   k_known_different[r].signature, k_known_different[r].reason);
        } else {
            printf("  STALE ROW in k_known_different (nothing differs that way now; remove it): %s/%s %s\n", name,
                   k_known_different[r].stream, k_known_different[r].signature);
            stale++;
        }
    }
    fflush(stdout);
    free(used);
    report_free(&ops);
    report_free(&bg);
    free(gw_op);
    free(gw_bg);
    free(cf_op);
    free(cf_bg);
    req_list_free(&mine);
    req_list_free(&s.golden);
    for (size_t i = 0; i < s.nresults; i++)
        free(s.results[i]);
    free(s.results);
    if (hard || stale)
        fail_msg("%s: %zu difference(s) from libfdb_c 7.3.77 not in k_known_different, %zu stale row(s) (above)",
                 name, hard, stale);
    if (known)
        skip(); /* only KNOWN-DIFFERENT differences: printed above, counted as skipped */
}

#define SCENARIO(n)                         \
    static void test_##n(void **state)      \
    {                                       \
        (void)state;                        \
        run_scenario(#n, run_##n);          \
    }
SCENARIO(connect)
SCENARIO(seed)
SCENARIO(get)
SCENARIO(get_key)
SCENARIO(get_range)
SCENARIO(writes)
SCENARIO(atomic)
SCENARIO(versionstamp)
SCENARIO(conflict)
SCENARIO(watch)
SCENARIO(mapped_range)
SCENARIO(metrics)
SCENARIO(status)
SCENARIO(system)
SCENARIO(read_version_errors)

int main(void)
{
    /* in the captures' order: later scenarios read what seed wrote */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect),      cmocka_unit_test(test_seed),
        cmocka_unit_test(test_get),          cmocka_unit_test(test_get_key),
        cmocka_unit_test(test_get_range),    cmocka_unit_test(test_writes),
        cmocka_unit_test(test_atomic),       cmocka_unit_test(test_versionstamp),
        cmocka_unit_test(test_conflict),     cmocka_unit_test(test_watch),
        cmocka_unit_test(test_mapped_range), cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_status),       cmocka_unit_test(test_system),
        cmocka_unit_test(test_read_version_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
