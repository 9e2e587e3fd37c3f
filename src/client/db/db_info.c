/* Informational database operations, each a future completed on the network thread: the
 * cluster's protocol version (ProtocolInfoRequest until it differs from the expected one),
 * \xff\xff/connection_string, /cluster_file_path and /cluster_id, and
 * fdb_database_get_client_status's JSON document.
 *
 * Invariants: a db_task holds a reference on its database and on its future until
 * db_task_end; it reaches the network thread through its own task node (cannot fail). */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "network_address.h"
#include "future.h"
#include "json_writer.h"

/* ---- database-level operations: a future, the database, a step on the network thread ---- */

/* The head of every such operation's state (its first member). */
typedef struct db_task {
    cfdb_db *db;
    cfdb_future *f;
    cfdb_task run; /* the step posted to the network thread */
} db_task;

/* Allocates a task of `size` bytes with a new future of `kind`; NULL (and *out, if any, a future
 * completed with platform_error) when memory runs out. */
static db_task *db_task_new(cfdb_db *db, cfdb_future_kind kind, size_t size, cfdb_future **out)
{
    cfdb_future *f = cfdb_future_new(kind);
    db_task *t = f ? calloc(1, size) : NULL;
    *out = f;
    if (!t) {
        if (f)
            cfdb_future_complete(f, CFDB_ERR_PLATFORM_ERROR);
        return NULL;
    }
    t->db = db;
    t->f = f;
    cfdb_future_ref(f); /* the task's */
    cfdb_db_ref(db);
    return t;
}

/* Releases what the task holds (network thread, or before it was posted). */
static void db_task_end(db_task *t)
{
    cfdb_db_unref(t->db);
    cfdb_future_unref(t->f);
    free(t);
}

/* Runs run(t) on the network thread; returns the application's future. */
static cfdb_future *db_task_post(db_task *t, cfdb_task_fn run)
{
    cfdb_future *f = t->f;
    cfdb_task_init(&t->run, run, t);
    cfdb_loop_post_task(cfdb_client_loop(t->db->cl), &t->run);
    return f;
}

/* ---- the cluster's protocol version ---- */

#define PROTOCOL_RETRY_NS 500000000ull   /* no coordinator yet, or it failed */
#define PROTOCOL_RECHECK_NS 1000000000ull /* the version is still the expected one */

typedef struct protocol_query {
    db_task t; /* first */
    uint64_t expected;
    uint64_t request;
    cfdb_timer timer;
    cfdb_protocol_info_request req;
} protocol_query;

static void protocol_step(void *arg);

static void protocol_done(protocol_query *q)
{
    cfdb_loop_timer_cancel(cfdb_client_loop(q->t.db->cl), &q->timer);
    db_task_end(&q->t);
}

static void protocol_timer(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    protocol_step(arg);
}

static void protocol_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    protocol_query *q = ctx;
    q->request = 0;
    uint64_t delay = PROTOCOL_RETRY_NS;
    if (!error && !cfdb_future_is_ready(q->t.f)) {
        cfdb_protocol_info_reply rep;
        memset(&rep, 0, sizeof rep);
        cfdb_reply_error err = 0;
        uint64_t mem[16];
        cfdb_arena a;
        cfdb_arena_init_with(&a, mem, sizeof mem);
        if (fb_decode(&cfdb_msg_protocol_info_reply, msg, len, &rep, &err, &a) == 0 && err == 0) {
            if (q->expected == 0 || rep.version != q->expected) {
                q->t.f->r.i64 = (int64_t)rep.version;
                cfdb_future_complete(q->t.f, 0);
            }
            delay = PROTOCOL_RECHECK_NS; /* unchanged: look again later, until it changes */
        }
        cfdb_arena_free(&a);
    }
    if (cfdb_future_is_ready(q->t.f)) {
        protocol_done(q);
        return;
    }
    cfdb_loop_timer_add_in(cfdb_client_loop(q->t.db->cl), &q->timer, delay);
}

static void protocol_step(void *arg)
{
    protocol_query *q = arg;
    if (cfdb_future_is_ready(q->t.f)) { /* cancelled or destroyed */
        protocol_done(q);
        return;
    }
    cfdb_db_start(q->t.db); /* discovery picks (and resolves) the coordinator */
    cfdb_peer *p = cfdb_db_coordinator(q->t.db);
    memset(&q->req, 0, sizeof q->req);
    q->request = p ? cfdb_client_request(q->t.db->cl, p, cfdb_well_known_token(CFDB_WLTOKEN_PROTOCOL_INFO),
                                         &cfdb_msg_protocol_info_request, &q->req, &q->req.reply.token,
                                         protocol_reply, q)
                   : 0;
    if (!q->request)
        cfdb_loop_timer_add_in(cfdb_client_loop(q->t.db->cl), &q->timer, PROTOCOL_RETRY_NS);
}

cfdb_future *cfdb_db_get_server_protocol(cfdb_db *db, uint64_t expected)
{
    cfdb_future *f;
    protocol_query *q = (protocol_query *)db_task_new(db, CFDB_FUTURE_INT64, sizeof(protocol_query), &f);
    if (!q)
        return f;
    q->expected = expected;
    cfdb_timer_init(&q->timer, protocol_timer, q);
    return db_task_post(&q->t, protocol_step);
}

static void uid_text(cfdb_uid u, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)u.first, (unsigned long long)u.second);
}

/* A coordinator as written: "host:service[:tls]" or "ip:port[:tls]". */
static void coordinator_text(const coordinator *k, char *out, size_t cap)
{
    if (k->hostname)
        snprintf(out, cap, "%s:%s%s", k->host, k->service, k->tls ? ":tls" : "");
    else
        cfdb_network_address_format(&k->addr, out, cap);
}

/* "description:id@coordinator,..." as the coordinators were written (hostnames kept). */
static void connection_string(const cfdb_db *db, char *out, size_t cap)
{
    size_t o = (size_t)snprintf(out, cap, "%s@", db->cluster_key);
    for (int i = 0; i < db->ncoordinators && o < cap; i++) {
        char text[320];
        coordinator_text(&db->coordinators[i], text, sizeof text);
        o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? "," : "", text);
    }
}

/* ---- \xff\xff/connection_string, /cluster_file_path, /cluster_id ---- */

typedef struct text_task {
    db_task t; /* first */
    cfdb_waiter w; /* the ready waiter for cluster_id */
    enum cfdb_db_text which;
} text_task;

static void text_answer(text_task *t, int error)
{
    cfdb_db *db = t->t.db;
    cfdb_future *f = t->t.f;
    char buf[4200];
    bool present = true;
    if (!error) {
        switch (t->which) {
        case CFDB_DB_CONNECTION_STRING:
            connection_string(db, buf, sizeof buf);
            break;
        case CFDB_DB_CLUSTER_FILE_PATH:
            /* a database made from a connection string has a memory record: its id */
            if (db->cluster_file)
                snprintf(buf, sizeof buf, "%s", db->cluster_file);
            else
                uid_text(db->memory_record_id, buf);
            break;
        case CFDB_DB_CLUSTER_ID:
            uid_text(db->cluster_id, buf);
            break;
        }
        f->r.value.present = present;
        if (cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_make(buf, strlen(buf)), &f->r.value.value))
            error = CFDB_ERR_PLATFORM_ERROR;
    }
    cfdb_future_complete(f, error);
    db_task_end(&t->t);
}

static void text_ready(cfdb_waiter *w, int error, int64_t unused)
{
    (void)unused;
    text_answer((text_task *)((char *)w - offsetof(text_task, w)), error);
}

static void text_run(void *arg)
{
    text_task *t = arg;
    if (t->which == CFDB_DB_CLUSTER_ID && !t->t.db->have_proxies) {
        t->w.fn = text_ready; /* getClusterId waits for the cluster's ClientDBInfo */
        cfdb_db_when_ready(t->t.db, &t->w);
        return;
    }
    text_answer(t, 0);
}

cfdb_future *cfdb_db_text_value(cfdb_db *db, enum cfdb_db_text which)
{
    cfdb_future *f;
    text_task *t = (text_task *)db_task_new(db, CFDB_FUTURE_VALUE, sizeof(text_task), &f);
    if (!t)
        return f;
    t->which = which;
    return db_task_post(&t->t, text_run);
}

/* ---- fdb_database_get_client_status ---- */

/* Adds p to the distinct peers the report covers. */
static void note_peer(cfdb_peer **seen, int *n, int cap, cfdb_peer *p)
{
    if (!p)
        return;
    for (int i = 0; i < *n; i++)
        if (seen[i] == p)
            return;
    if (*n < cap)
        seen[(*n)++] = p;
}

static void proxies_json(cfdb_json *j, const char *key, const cfdb_endpoint_ref *refs, int n, cfdb_peer **seen,
                         int *nseen, int cap)
{
    cfdb_json_key(j, key);
    cfdb_json_begin_array(j);
    for (int i = 0; i < n; i++) {
        char a[96];
        cfdb_peer_address(refs[i].peer, a, sizeof a);
        cfdb_json_string(j, a);
        note_peer(seen, nseen, cap, refs[i].peer);
    }
    cfdb_json_end_array(j);
}

/* The distinct storage servers (by token) of the location cache, at most SS_CAP. */
#define SS_CAP 256
struct ss_list {
    cfdb_peer *peer[SS_CAP];
    cfdb_uid id[SS_CAP];
    int n;
};

static void note_storage_server(void *ctx, cfdb_peer *peer, cfdb_uid token)
{
    struct ss_list *l = ctx;
    for (int x = 0; x < l->n; x++)
        if (cfdb_uid_eq(l->id[x], token))
            return;
    if (l->n < SS_CAP) {
        l->peer[l->n] = peer;
        l->id[l->n++] = token;
    }
}

/* DatabaseContext::getClientStatus's report (keys in order, as json_spirit writes them);
 * returns its Healthy. */
static bool database_status_json(cfdb_db *db, cfdb_json *j)
{
    enum { CAP = 256 };
    cfdb_peer *seen[CAP];
    int nseen = 0;
    bool healthy = db->ncoordinators > 0 && db->ngrv > 0 && db->ncommit > 0;
    cfdb_json_begin_object(j);
    char id[33];
    uid_text(db->cluster_id, id);
    cfdb_json_key(j, "ClusterID");
    cfdb_json_string(j, id);
    proxies_json(j, "CommitProxies", db->commit, db->ncommit, seen, &nseen, CAP);

    /* coordinators: hostnames first, then addresses, as written */
    cfdb_peer *current = NULL;
    const cfdb_network_address *cur = db->ncoordinators ? db_coordinator_address(db, db->coordinator_index) : NULL;
    if (cur)
        current = cfdb_client_peer(db->cl, cur);
    healthy = healthy && current;
    for (int i = 0; i < db->ncoordinators; i++) {
        const cfdb_network_address *a = db_coordinator_address(db, i);
        if (a)
            note_peer(seen, &nseen, CAP, cfdb_client_peer(db->cl, a));
    }
    /* storage servers known from the location cache */
    struct ss_list ss = { .n = 0 };
    db_locations_servers(db, note_storage_server, &ss);
    cfdb_peer **ss_peer = ss.peer;
    cfdb_uid *ss_id = ss.id;
    int nss = ss.n;

    /* Connections: every distinct peer named anywhere above */
    for (int i = 0; i < db->ngrv; i++)
        note_peer(seen, &nseen, CAP, db->grv[i].peer);
    for (int i = 0; i < nss; i++)
        note_peer(seen, &nseen, CAP, ss_peer[i]);
    int failed = 0;
    cfdb_json_key(j, "Connections");
    cfdb_json_begin_array(j);
    for (int i = 0; i < nseen; i++) {
        cfdb_peer_connection_json(seen[i], j);
        failed += cfdb_peer_failed(seen[i]);
    }
    cfdb_json_end_array(j);
    healthy = healthy && failed == 0;

    cfdb_json_key(j, "Coordinators");
    cfdb_json_begin_array(j);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < db->ncoordinators; i++) {
            const coordinator *k = &db->coordinators[i];
            if (k->hostname != (pass == 0))
                continue;
            char text[320];
            coordinator_text(k, text, sizeof text);
            cfdb_json_string(j, text);
        }
    cfdb_json_end_array(j);
    if (current) {
        char a[96];
        cfdb_peer_address(current, a, sizeof a);
        cfdb_json_key(j, "CurrentCoordinator");
        cfdb_json_string(j, a);
    }
    proxies_json(j, "GrvProxies", db->grv, db->ngrv, seen, &nseen, CAP);
    cfdb_json_key(j, "Healthy");
    cfdb_json_bool(j, healthy);
    cfdb_json_key(j, "NumConnectionsFailed");
    cfdb_json_int(j, failed);
    cfdb_json_key(j, "StorageServers");
    cfdb_json_begin_array(j);
    for (int i = 0; i < nss; i++) {
        char a[96];
        cfdb_peer_address(ss_peer[i], a, sizeof a);
        uid_text(ss_id[i], id);
        cfdb_json_begin_object(j);
        cfdb_json_key(j, "Address");
        cfdb_json_string(j, a);
        cfdb_json_key(j, "SSID");
        cfdb_json_string(j, id);
        cfdb_json_end_object(j);
    }
    cfdb_json_end_array(j);
    cfdb_json_end_object(j);
    return healthy;
}

static void client_status_run(void *arg)
{
    db_task *t = arg;
    cfdb_db *db = t->db;
    cfdb_db_start(db);
    cfdb_json j;
    cfdb_json_init(&j);
    /* MultiVersionDatabase's wrapper around the report, keys in order */
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "AvailableClients");
    cfdb_json_begin_array(&j);
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "ProtocolVersion");
    cfdb_json_string(&j, "fdb00b073000000");
    cfdb_json_key(&j, "ReleaseVersion");
    cfdb_json_string(&j, "7.3.77");
    cfdb_json_key(&j, "ThreadIndex");
    cfdb_json_int(&j, 0);
    cfdb_json_end_object(&j);
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "ConnectionRecord");
    if (db->cluster_file) {
        size_t n = strlen(db->cluster_file) + 7;
        char *rec = malloc(n);
        if (rec) {
            snprintf(rec, n, "file: %s", db->cluster_file);
            cfdb_json_string(&j, rec);
            free(rec);
        } else {
            j.failed = true;
        }
    } else {
        char cs[4200];
        size_t o = (size_t)snprintf(cs, sizeof cs, "connection string: ");
        connection_string(db, cs + o, sizeof cs - o);
        cfdb_json_string(&j, cs);
    }
    cfdb_json_key(&j, "DatabaseStatus");
    bool healthy = database_status_json(db, &j);
    cfdb_json_key(&j, "Healthy");
    cfdb_json_bool(&j, healthy);
    cfdb_json_key(&j, "InitializationState");
    cfdb_json_string(&j, "created");
    if (db->have_proxies) { /* the cluster answered: it speaks our protocol */
        cfdb_json_key(&j, "ProtocolVersion");
        cfdb_json_string(&j, "fdb00b073000000");
    }
    cfdb_json_end_object(&j);

    cfdb_future *f = t->f;
    int rc = CFDB_ERR_PLATFORM_ERROR;
    if (!j.failed) {
        void *copy = cfdb_arena_dup(&f->arena, j.buf, j.len);
        if (copy) {
            f->r.key = (cfdb_bytes){ copy, j.len };
            rc = 0;
        }
    }
    cfdb_json_free(&j);
    cfdb_future_complete(f, rc);
    db_task_end(t);
}

cfdb_future *cfdb_db_get_client_status(cfdb_db *db)
{
    cfdb_future *f;
    db_task *t = db_task_new(db, CFDB_FUTURE_KEY, sizeof(db_task), &f);
    return t ? db_task_post(t, client_status_run) : f;
}
