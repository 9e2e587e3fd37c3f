/* Changing coordinators through \xff\xff/configuration/coordinators/ at commit, as libfdb_c
 * 7.3.77 does it (fdbclient/SpecialKeySpace.actor.cpp coordinatorsCommitActor, then
 * fdbclient/ManagementAPI.actor.cpp changeQuorumChecker). The read side is
 * special_configuration.c.
 *
 * At commit, in this order:
 *  1. processes (when written): split on ',' keeping empty parts (boost::split); each part is
 *     a hostname (Hostname::isHostname) or an address (NetworkAddress::parse, and isValid: not
 *     0.0.0.0:0), else the module's message is "ERROR: '<part>' is not a valid network
 *     endpoint address\n". Duplicates are NOT refused here (libfdb_c does not; fdbcli checks
 *     them itself before writing the key).
 *  2. cluster_description (when written): [A-Za-z0-9_]+, else "Cluster description must match
 *     [A-Za-z0-9_]+".
 *  3. \xff/coordinators is read in the transaction (LOCK_AWARE, ACCESS_SYSTEM_KEYS,
 *     PRIORITY_SYSTEM_IMMEDIATE); absent, or naming another description than the database's
 *     connection string, it is read again after CHANGE_QUORUM_BAD_STATE_RETRY_DELAY (2 s), at
 *     most CHANGE_QUORUM_BAD_STATE_RETRY_TIMES (3) times, then BAD_DATABASE_STATE.
 *  4. No processes written: the current ones. Hostnames are resolved (getaddrinfo); one that
 *     does not resolve is COORDINATOR_UNREACHABLE.
 *  5. The same coordinators (as sets) and the same description: \xff/previousCoordinators is
 *     cleared in a transaction of its own (resetPreviousCoordinatorsKey) and the answer is
 *     SAME_NETWORK_ADDRESSES. First the configuration database is checked as libfdb_c does
 *     (verifyConfigurationDatabaseAlive, config_txn.c: a PAXOS configuration transaction
 *     reads (null, "test") from the coordinators), unless config_db was written (set or
 *     cleared: CoordinatorsImpl passes whether the write map has the key). libfdb_c waits for
 *     it without bound; cfdb gives up after CONFIG_DB_CHECK_NS (60 s) with timed_out (1004),
 *     the commit's error.
 *  6. Else the new key is description:<32 random [A-Za-z0-9]>, each new coordinator is asked
 *     GetLeaderRequest{key, UID()} (well-known token 3); every one must answer within 5 s
 *     (a lost connection asks again), else COORDINATOR_UNREACHABLE; an error answer is the
 *     commit's error.
 *  7. \xff/coordinators = key@addresses (sorted as NetworkAddress sorts: plain before TLS, by
 *     IP, by port), then the hostnames (sorted: plain before TLS, by host, by service); the
 *     commit goes on. A server that takes the change answers commit_unknown_result (1021).
 * Results become \xff\xff/error_message ManagementAPIError JSON with command "coordinators"
 * (retriable only for COORDINATOR_UNREACHABLE) and special_keys_api_failure (2117).
 *
 * \xff\xff/management/auto_coordinators (CoordinatorsAutoImpl) is in special_auto_coordinators.c. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "endpoint.h"
#include "error_codes.h"
#include "event_loop.h"
#include "cluster_file.h"
#include "config_txn.h"
#include "database.h"
#include "foundationdb/fdb_c_options.g.h"
#include "net.h"
#include "special_coordinators.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define COORDINATORS SK_CONF "coordinators/"
#define COORDINATORS_KEY "\xff/coordinators"
#define PREVIOUS_COORDINATORS_KEY "\xff/previousCoordinators"
#define BAD_STATE_RETRY_TIMES 3              /* CLIENT_KNOBS->CHANGE_QUORUM_BAD_STATE_RETRY_TIMES */
#define BAD_STATE_RETRY_DELAY_NS 2000000000ll /* CHANGE_QUORUM_BAD_STATE_RETRY_DELAY */
#define PROBE_TIMEOUT_NS 5000000000ull         /* changeQuorumChecker's delay(5.0) */
#define PROBE_RETRY_NS 250000000ull            /* a lost connection: ask again */
#define CONFIG_DB_CHECK_NS 60000000000ull      /* cfdb's bound on verifyConfigurationDatabaseAlive */

/* ManagementAPI::generateErrorMessage */
#define MSG_SAME "No change (existing configuration satisfies request)"
#define MSG_BAD_STATE "The database is in an unexpected state from which changing coordinators might be unsafe"
#define MSG_UNREACHABLE "One of the specified coordinators is unreachable"

typedef sk_coord coord;
typedef struct coord_list {
    coord *items;
    int n;
} coord_list;

int sk_coord_cmp(const void *pa, const void *pb)
{
    const coord *a = pa, *b = pb;
    if (a->hostname != b->hostname)
        return a->hostname ? 1 : -1;
    if (a->tls != b->tls)
        return a->tls ? 1 : -1;
    if (a->hostname) {
        int c = strcmp(a->host, b->host);
        return c ? c : strcmp(a->service, b->service);
    }
    bool a6 = a->addr.ip.tag == 2, b6 = b->addr.ip.tag == 2;
    if (a6 != b6)
        return a6 ? 1 : -1;
    int c = a6 ? memcmp(a->v6, b->v6, 16) : (a->addr.ip.v4 > b->addr.ip.v4) - (a->addr.ip.v4 < b->addr.ip.v4);
    return c ? c : (a->addr.port > b->addr.port) - (a->addr.port < b->addr.port);
}

void sk_coord_from(sk_coord *out, const cfdb_coordinator *c)
{
    memset(out, 0, sizeof *out);
    cfdb_coordinator_format(c, out->text, sizeof out->text);
    out->hostname = c->is_hostname;
    out->tls = c->tls;
    if (c->is_hostname) {
        snprintf(out->host, sizeof out->host, "%s", c->host);
        snprintf(out->service, sizeof out->service, "%s", c->service);
    } else {
        out->addr = c->addr;
        if (c->addr.ip.tag == 2)
            memcpy(out->v6, c->v6, 16);
    }
}

/* One part of the processes value: 0 and *out, or false when it is no endpoint. */
static bool parse_part(const char *p, size_t len, coord *out)
{
    if (len == 0 || len > 255)
        return false;
    for (size_t i = 0; i < len; i++) /* the connection-string parser would trim or cut these */
        if (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n' || p[i] == '#' || p[i] == '@' ||
            (unsigned char)p[i] < 0x20)
            return false;
    char buf[300];
    snprintf(buf, sizeof buf, "x:y@%.*s", (int)len, p);
    cfdb_cluster_string cs;
    int rc = cfdb_cluster_string_parse(buf, strlen(buf), &cs);
    bool ok = rc == 0 && cs.count == 1;
    if (ok) {
        sk_coord_from(out, &cs.coords[0]);
        /* NetworkAddress::isValid: an address or a port */
        if (!out->hostname && out->addr.ip.tag != 2 && out->addr.ip.v4 == 0 && out->addr.port == 0)
            ok = false;
    }
    cfdb_cluster_string_free(&cs);
    return ok;
}

static int coordinators_failure(cfdb_txn *tx, bool retriable, const char *message)
{
    return sk_api_failure(tx, retriable, "coordinators", message);
}

/* The written value of COORDINATORS + name: *written, and *value when set. */
static void written(const sk_entries *w, const char *name, bool *was, bool *has_value, cfdb_bytes *value)
{
    char key[96];
    snprintf(key, sizeof key, COORDINATORS "%s", name);
    cfdb_bytes k = cfdb_bytes_str(key);
    *was = *has_value = false;
    for (size_t i = 0; i < w->n; i++) {
        if (cfdb_bytes_cmp(w->items[i].begin, k) <= 0 && cfdb_bytes_cmp(k, w->items[i].end) < 0) {
            *was = true;
            *has_value = w->items[i].has_value;
            if (*has_value)
                *value = w->items[i].value;
        }
    }
}

static bool alnum_(cfdb_bytes v)
{
    if (!v.len)
        return false;
    for (size_t i = 0; i < v.len; i++) {
        char c = (char)v.ptr[i];
        if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'))
            return false;
    }
    return true;
}

/* The description of the database's connection string, into out. */
static int db_description(cfdb_txn *tx, char *out, size_t cap)
{
    cfdb_future *f = cfdb_db_text_value(cfdb_txn_db(tx), CFDB_DB_CONNECTION_STRING);
    if (!f)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_future_wait(f);
    int rc = f->error;
    if (!rc && f->r.value.present) {
        const char *p = (const char *)f->r.value.value.ptr;
        const char *colon = memchr(p, ':', f->r.value.value.len);
        size_t n = colon ? (size_t)(colon - p) : 0;
        if (n >= cap)
            n = cap - 1;
        memcpy(out, p, n);
        out[n] = 0;
    } else if (!rc) {
        rc = CFDB_ERR_UNKNOWN_ERROR;
    }
    cfdb_future_unref(f);
    return rc;
}

static void sleep_ns(long long ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000ll), (long)(ns % 1000000000ll) };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* getClusterConnectionStringFromStorageServer: \xff/coordinators, parsed into old. 0, a
 * read's error, 2104 when it does not parse, or -ish: *bad set for BAD_DATABASE_STATE. */
static int read_current(cfdb_txn *tx, cfdb_arena *a, cfdb_cluster_string *old, bool *bad)
{
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS);
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    char mine[128];
    int rc = db_description(tx, mine, sizeof mine);
    if (rc)
        return rc;
    *bad = false;
    for (int tries = 0;; tries++) {
        if (tries >= BAD_STATE_RETRY_TIMES) {
            *bad = true;
            return 0;
        }
        bool present = false;
        cfdb_bytes v;
        if ((rc = skw_get(tx, CFDB_BYTES_LIT(COORDINATORS_KEY), a, &present, &v)))
            return rc;
        if (present) {
            if ((rc = cfdb_cluster_string_parse((const char *)v.ptr, v.len, old)))
                return rc;
            if (strcmp(old->description, mine) == 0)
                return 0;
            cfdb_cluster_string_free(old);
        }
        sleep_ns(BAD_STATE_RETRY_DELAY_NS);
    }
}

/* resolves hostname coordinators; false when one does not resolve (tryResolveHostnames) */
bool sk_coord_resolve(sk_coord *c)
{
    if (!c->hostname)
        return true;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo(c->host, c->service, &hints, &res) != 0 || !res)
        return false;
    bool ok = false;
    for (struct addrinfo *r = res; r && !ok; r = r->ai_next) {
        if (r->ai_family == AF_INET) {
            const struct sockaddr_in *sa = (const struct sockaddr_in *)r->ai_addr;
            c->addr.ip.tag = 1;
            c->addr.ip.v4 = ntohl(sa->sin_addr.s_addr);
            c->addr.port = ntohs(sa->sin_port);
            ok = true;
        } else if (r->ai_family == AF_INET6) {
            const struct sockaddr_in6 *sa = (const struct sockaddr_in6 *)r->ai_addr;
            memcpy(c->v6, &sa->sin6_addr, 16);
            c->addr.ip.tag = 2;
            c->addr.port = ntohs(sa->sin6_port);
            ok = true;
        }
    }
    freeaddrinfo(res);
    c->addr.flags = c->tls ? CFDB_ADDR_FLAG_TLS : 0;
    return ok;
}

/* ---- the probe: GetLeaderRequest to each new coordinator, on the network thread ---- */

typedef struct probe probe;
typedef struct probe_one {
    probe *p;
    cfdb_network_address addr;
    uint8_t v6[16];
    uint64_t request;
    cfdb_timer retry;
    bool answered;
} probe_one;

struct probe {
    cfdb_db *db;
    cfdb_future *f; /* completed with 0 (all answered), 1 (timeout) or an answer's error */
    cfdb_task start;
    cfdb_timer timeout;
    char key[300];
    uint64_t timeout_ns;
    int n, answered;
    bool done, all_leaders;
    probe_one one[SK_MAX_COORDINATORS];
};

/* error: an answer's error; timed_out: one did not answer in time */
static void probe_end(probe *p, int error, bool timed_out)
{
    if (p->done)
        return;
    p->done = true;
    cfdb_client *cl = cfdb_db_client(p->db);
    cfdb_loop *loop = cfdb_client_loop(cl);
    cfdb_loop_timer_cancel(loop, &p->timeout);
    for (int i = 0; i < p->n; i++) {
        cfdb_loop_timer_cancel(loop, &p->one[i].retry);
        if (p->one[i].request)
            cfdb_client_forget(cl, p->one[i].request);
    }
    p->f->r.i64 = (timed_out ? 1 : 0) | (p->all_leaders ? 2 : 0);
    cfdb_future_complete(p->f, error);
    cfdb_future_unref(p->f);
    cfdb_db_unref(p->db);
    free(p);
}

static void probe_send(probe_one *o);

static void on_leader(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    probe_one *o = ctx;
    probe *p = o->p;
    o->request = 0;
    if (error == CFDB_ERR_REQUEST_MAYBE_DELIVERED || error == CFDB_ERR_CONNECTION_FAILED ||
        error == CFDB_ERR_BROKEN_PROMISE) {
        /* retryBrokenPromise over a connection FlowTransport keeps trying */
        cfdb_loop_timer_add_in(cfdb_client_loop(cfdb_db_client(p->db)), &o->retry, PROBE_RETRY_NS);
        return;
    }
    if (error) {
        probe_end(p, error, false);
        return;
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_leader_reply rep;
    memset(&rep, 0, sizeof rep);
    cfdb_reply_error err = 0;
    int drc = fb_decode(&cfdb_msg_get_leader_reply, msg, len, &rep, &err, &a);
    if (!drc && err == CFDB_ERR_BROKEN_PROMISE) { /* retryBrokenPromise */
        cfdb_arena_free(&a);
        cfdb_loop_timer_add_in(cfdb_client_loop(cfdb_db_client(p->db)), &o->retry, PROBE_RETRY_NS);
        return;
    }
    if (drc || err) { /* an error answer: the commit's error (waitForAll throws it) */
        cfdb_arena_free(&a);
        probe_end(p, err ? (int)err : drc, false);
        return;
    }
    if (!rep.leader.present)
        p->all_leaders = false;
    cfdb_arena_free(&a);
    o->answered = true;
    if (++p->answered == p->n)
        probe_end(p, 0, false);
}

static void probe_retry(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    probe_send(arg);
}

static void probe_send(probe_one *o)
{
    probe *p = o->p;
    cfdb_client *cl = cfdb_db_client(p->db);
    if (o->addr.ip.tag == 2) {
        o->addr.ip.v6.items = o->v6;
        o->addr.ip.v6.count = 16;
    }
    cfdb_peer *peer = cfdb_client_peer(cl, &o->addr);
    cfdb_get_leader_request req;
    memset(&req, 0, sizeof req);
    req.key = cfdb_bytes_str(p->key);
    o->request = peer ? cfdb_client_request(cl, peer, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                                            &cfdb_msg_get_leader_request, &req, &req.reply.token, on_leader, o)
                      : 0;
    if (!o->request)
        cfdb_loop_timer_add_in(cfdb_client_loop(cl), &o->retry, PROBE_RETRY_NS);
}

static void probe_timeout(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    probe_end(arg, 0, true);
}

static void probe_start(void *arg)
{
    probe *p = arg;
    cfdb_loop_timer_add_in(cfdb_client_loop(cfdb_db_client(p->db)), &p->timeout, p->timeout_ns);
    for (int i = 0; i < p->n && !p->done; i++)
        probe_send(&p->one[i]);
}

int sk_coord_probe(cfdb_txn *tx, const sk_coord *c, int n, const char *key, uint64_t timeout_ns, bool *all_leaders)
{
    probe *p = calloc(1, sizeof *p);
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_INT64);
    if (!p || !f) {
        free(p);
        if (f)
            cfdb_future_unref(f);
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    p->db = cfdb_txn_db(tx);
    cfdb_db_ref(p->db);
    p->f = f;
    cfdb_future_ref(f);
    snprintf(p->key, sizeof p->key, "%s", key);
    p->timeout_ns = timeout_ns;
    p->all_leaders = true;
    p->n = n < SK_MAX_COORDINATORS ? n : SK_MAX_COORDINATORS;
    for (int i = 0; i < p->n; i++) {
        p->one[i].p = p;
        p->one[i].addr = c[i].addr;
        memcpy(p->one[i].v6, c[i].v6, 16);
        cfdb_timer_init(&p->one[i].retry, probe_retry, &p->one[i]);
    }
    cfdb_timer_init(&p->timeout, probe_timeout, p);
    cfdb_task_init(&p->start, probe_start, p);
    cfdb_loop_post_task(cfdb_client_loop(cfdb_db_client(p->db)), &p->start);
    cfdb_future_wait(f);
    int rc = f->error ? f->error : (int)(f->r.i64 & 1);
    if (all_leaders)
        *all_leaders = !rc && (f->r.i64 & 2);
    cfdb_future_unref(f);
    return rc;
}

/* resetPreviousCoordinatorsKey: \xff/previousCoordinators cleared in a transaction of its own */
static int reset_previous(cfdb_txn *tx)
{
    cfdb_txn *t = cfdb_txn_create(cfdb_txn_db(tx));
    if (!t)
        return CFDB_ERR_UNKNOWN_ERROR;
    int rc;
    for (;;) {
        cfdb_txn_set_option(t, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
        cfdb_txn_clear(t, CFDB_BYTES_LIT(PREVIOUS_COORDINATORS_KEY));
        cfdb_future *f = cfdb_txn_commit(t);
        cfdb_future_wait(f);
        rc = f->error;
        cfdb_future_unref(f);
        if (!rc)
            break;
        f = cfdb_txn_on_error(t, rc);
        cfdb_future_wait(f);
        rc = f->error;
        cfdb_future_unref(f);
        if (rc)
            break;
    }
    cfdb_txn_destroy(t);
    return rc;
}

static bool same_set(const coord_list *a, const coord_list *b)
{
    if (a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->items[i].text, b->items[i].text) != 0)
            return false;
    return true;
}

static void random_id(cfdb_txn *tx, char out[33])
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    cfdb_client *cl = cfdb_db_client(cfdb_txn_db(tx));
    for (int i = 0; i < 32; i++)
        out[i] = chars[cfdb_client_random(cl) % (sizeof chars - 1)];
    out[32] = 0;
}

int sk_coordinators_commit(cfdb_txn *tx, cfdb_arena *a)
{
    sk_entries w;
    int rc = sk_collect(tx, CFDB_BYTES_LIT(COORDINATORS), CFDB_BYTES_LIT(SK_CONF "coordinators0"), a, &w);
    if (rc)
        return rc;
    bool p_written, p_set, d_written, d_set, c_written, c_set;
    cfdb_bytes pv = { 0 }, dv = { 0 }, cv = { 0 };
    written(&w, "processes", &p_written, &p_set, &pv);
    written(&w, "cluster_description", &d_written, &d_set, &dv);
    written(&w, "config_db", &c_written, &c_set, &cv); /* disableConfigDB = configDBEntry.first */

    coord_list conn = { 0 };
    if (p_written && p_set) {
        int parts = 1;
        for (size_t i = 0; i < pv.len; i++)
            parts += pv.ptr[i] == ',';
        if (parts > SK_MAX_COORDINATORS)
            return coordinators_failure(tx, false, "ERROR: too many coordinators\n");
        if (!(conn.items = cfdb_arena_alloc(a, (size_t)parts * sizeof *conn.items)))
            return CFDB_ERR_UNKNOWN_ERROR;
        const char *p = (const char *)pv.ptr, *end = p + pv.len;
        for (;;) {
            const char *comma = memchr(p, ',', (size_t)(end - p));
            const char *e = comma ? comma : end;
            if (!parse_part(p, (size_t)(e - p), &conn.items[conn.n])) {
                size_t ml = (size_t)(e - p) + 64;
                char *msg = cfdb_arena_alloc(a, ml);
                if (!msg)
                    return CFDB_ERR_UNKNOWN_ERROR;
                snprintf(msg, ml, "ERROR: '%.*s' is not a valid network endpoint address\n", (int)(e - p), p);
                return coordinators_failure(tx, false, msg);
            }
            conn.n++;
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    char new_name[256] = "";
    if (d_written) {
        if (!d_set || !alnum_(dv) || dv.len >= sizeof new_name)
            return coordinators_failure(tx, false, "Cluster description must match [A-Za-z0-9_]+");
        memcpy(new_name, dv.ptr, dv.len);
        new_name[dv.len] = 0;
    }

    cfdb_cluster_string old;
    memset(&old, 0, sizeof old);
    bool bad = false;
    if ((rc = read_current(tx, a, &old, &bad)))
        return rc;
    if (bad)
        return coordinators_failure(tx, false, MSG_BAD_STATE);
    coord_list prev = { cfdb_arena_alloc(a, (old.count ? old.count : 1) * sizeof(coord)), 0 };
    if (!prev.items) {
        cfdb_cluster_string_free(&old);
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    for (size_t i = 0; i < old.count; i++)
        sk_coord_from(&prev.items[prev.n++], &old.coords[i]);
    if (!new_name[0])
        snprintf(new_name, sizeof new_name, "%s", old.description);
    bool same_name = strcmp(new_name, old.description) == 0;
    cfdb_cluster_string_free(&old);
    if (conn.n == 0)
        conn = prev;
    for (int i = 0; i < conn.n; i++)
        if (!sk_coord_resolve(&conn.items[i]))
            return coordinators_failure(tx, true, MSG_UNREACHABLE);
    qsort(conn.items, (size_t)conn.n, sizeof *conn.items, sk_coord_cmp);
    qsort(prev.items, (size_t)prev.n, sizeof *prev.items, sk_coord_cmp);
    if (same_name && same_set(&conn, &prev)) {
        if (!c_written && (rc = cfdb_config_verify_alive(cfdb_txn_db(tx), CONFIG_DB_CHECK_NS)))
            return rc;
        if ((rc = reset_previous(tx)))
            return rc;
        return coordinators_failure(tx, false, MSG_SAME);
    }

    char id[33], key[300];
    random_id(tx, id);
    snprintf(key, sizeof key, "%s:%s", new_name, id);
    rc = sk_coord_probe(tx, conn.items, conn.n, key, PROBE_TIMEOUT_NS, NULL);
    if (rc == 1)
        return coordinators_failure(tx, true, MSG_UNREACHABLE);
    if (rc)
        return rc;
    /* ClusterConnectionString::toString: key@coords,hostnames (each group sorted above) */
    size_t cap = strlen(key) + 2 + (size_t)conn.n * sizeof conn.items[0].text;
    char *cs = cfdb_arena_alloc(a, cap);
    if (!cs)
        return CFDB_ERR_UNKNOWN_ERROR;
    size_t o = (size_t)snprintf(cs, cap, "%s@", key);
    for (int i = 0; i < conn.n; i++)
        o += (size_t)snprintf(cs + o, cap - o, "%s%s", i ? "," : "", conn.items[i].text);
    return skw_set(tx, CFDB_BYTES_LIT(COORDINATORS_KEY), cfdb_bytes_make(cs, o));
}
