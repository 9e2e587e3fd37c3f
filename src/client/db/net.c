/* The client's network context: peers (one per address, in a hash table), their
 * connections, and the reply slots that route answers to requests.
 *
 * Peer lifetime: a peer is referenced by whoever keeps its pointer beyond the current loop
 * step (location cache entries, the proxy lists: cfdb_peer_ref) and by the requests
 * waiting on it (its reply-slot list). A peer with neither for PEER_FORGET_DELAY_NS
 * (FlowTransport's CONNECTION_MONITOR_UNREFERENCED_CLOSE_DELAY, 2 s) is forgotten by the
 * heartbeat: its connection, if any, is closed and its counters go with it. A pointer from
 * cfdb_client_peer without a reference is good for the current loop step only. */
#include "net.h"

#include "future.h"
#include "json_writer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "endpoint.h"
#include "error_codes.h"
#include "network_address.h"
#include "protocol_version.h"

#define PING_INTERVAL_NS (1000000000ull)
#define IDLE_TIMEOUT_NS (4000000000ull)
#define PEER_FORGET_DELAY_NS (2000000000ull)
#define PEER_BUCKETS_INITIAL 64

/* A request waiting for its reply; slots are reused, with a generation in the token so a
 * late reply to an old use is recognised and dropped. */
typedef struct reply_slot {
    uint32_t gen;
    cfdb_uid dest;          /* the endpoint the request went to */
    uint32_t next_free;     /* free list, index + 1 */
    cfdb_reply_fn fn;       /* NULL when free */
    void *ctx;
    cfdb_peer *peer;
    uint32_t peer_prev, peer_next; /* the peer's list of waiting slots, index + 1 */
} reply_slot;

struct cfdb_peer {
    cfdb_client *cl;
    char ip[64];
    uint16_t port;
    bool tls;                /* the address is marked :tls */
    cfdb_conn *conn;
    bool opened;             /* the current connection completed its handshake */
    unsigned failures;       /* connections in a row that failed before opening */
    uint64_t retry_at_ns;    /* no new connection before this (reconnection backoff) */
    uint32_t waiting_head;   /* index + 1 */
    cfdb_peer *hnext;        /* the hash bucket's chain */
    uint32_t hash;
    int refs;                /* cfdb_peer_ref holders (requests count through waiting_head) */
    uint64_t unused_since_ns; /* first seen unreferenced by the heartbeat (0: in use) */
    /* for fdb_database_get_client_status: totals over closed connections, and history */
    cfdb_conn_stats closed_totals;
    uint64_t connect_failed_total;
    uint64_t last_connect_ns;
    uint64_t protocol;
};

/* FlowTransport's reconnection delay: INITIAL_RECONNECTION_TIME 0.05 s, x1.2 per failure,
 * MAX_RECONNECTION_TIME 0.5 s. Requests meanwhile fail at once; their owners retry. */
#define RECONNECT_INITIAL_NS 50000000ull
#define RECONNECT_MAX_NS 500000000ull

struct cfdb_client {
    cfdb_loop *loop;
    cfdb_peer **buckets;  /* hash table of peers by (ip, port, tls); nbuckets a power of 2 */
    size_t nbuckets, npeers;
    reply_slot *slots;
    uint32_t nslots, cap_slots, free_head;
    uint64_t token_base;
    uint64_t rng[4];
    _Atomic(cfdb_tls_ctx *) tls; /* set once, before any :tls peer is used; owned */
    cfdb_tls_factory tls_factory; /* makes it on first need (network thread) */
    cfdb_timer heartbeat;        /* keeps the loop's busyness windows closing when idle */
};

#define HEARTBEAT_NS 1000000000ull

static void peer_free(cfdb_peer *p);

/* Forgets the peers nobody has used for PEER_FORGET_DELAY_NS. */
static void sweep_peers(cfdb_client *cl)
{
    uint64_t now = cfdb_monotonic_ns();
    for (size_t b = 0; b < cl->nbuckets; b++) {
        cfdb_peer **pp = &cl->buckets[b];
        while (*pp) {
            cfdb_peer *p = *pp;
            if (p->refs > 0 || p->waiting_head) {
                p->unused_since_ns = 0;
            } else if (!p->unused_since_ns) {
                p->unused_since_ns = now;
            } else if (now - p->unused_since_ns >= PEER_FORGET_DELAY_NS) {
                *pp = p->hnext;
                cl->npeers--;
                peer_free(p);
                continue;
            }
            pp = &p->hnext;
        }
    }
}

static void heartbeat_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    sweep_peers(arg);
    cfdb_loop_timer_add_in(loop, t, HEARTBEAT_NS);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t cfdb_client_random(cfdb_client *cl)
{
    uint64_t *s = cl->rng;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* The network thread's iterations batch the wake-ups of threads blocked on futures
 * (future.h): one system call per iteration wakes them all. */
static void wake_batch(void *arg, bool begin)
{
    (void)arg;
    if (begin)
        cfdb_future_wake_batch_begin();
    else
        cfdb_future_wake_batch_end();
}

cfdb_client *cfdb_client_create(void)
{
    cfdb_client *cl = calloc(1, sizeof *cl);
    if (!cl)
        return NULL;
    cl->loop = cfdb_loop_create();
    cl->buckets = calloc(PEER_BUCKETS_INITIAL, sizeof *cl->buckets);
    if (!cl->loop || !cl->buckets) {
        cfdb_loop_destroy(cl->loop);
        free(cl->buckets);
        free(cl);
        return NULL;
    }
    cl->nbuckets = PEER_BUCKETS_INITIAL;
    if (getrandom(cl->rng, sizeof cl->rng, 0) != sizeof cl->rng) {
        cl->rng[0] = (uint64_t)(uintptr_t)cl ^ cfdb_monotonic_ns();
        cl->rng[1] = 0x9E3779B97F4A7C15ull;
        cl->rng[2] = 0xBF58476D1CE4E5B9ull;
        cl->rng[3] = 0x94D049BB133111EBull;
    }
    cl->token_base = cfdb_client_random(cl) & ~CFDB_TOKEN_STREAM_FLAG;
    cfdb_timer_init(&cl->heartbeat, heartbeat_fire, cl);
    cfdb_loop_timer_add_in(cl->loop, &cl->heartbeat, HEARTBEAT_NS);
    cfdb_loop_set_iteration_hook(cl->loop, wake_batch, NULL);
    return cl;
}

static void fail_waiting(cfdb_peer *p, int error);

void cfdb_client_destroy(cfdb_client *cl)
{
    cfdb_loop_timer_cancel(cl->loop, &cl->heartbeat);
    for (size_t b = 0; b < cl->nbuckets; b++) {
        cfdb_peer *p = cl->buckets[b];
        while (p) {
            cfdb_peer *next = p->hnext;
            fail_waiting(p, CFDB_ERR_OPERATION_CANCELLED);
            peer_free(p);
            p = next;
        }
    }
    free(cl->buckets);
    /* run the connections' finalizers */
    for (int i = 0; i < 4; i++)
        cfdb_loop_run_once(cl->loop, 0);
    cfdb_loop_destroy(cl->loop);
    cfdb_tls_ctx_free(atomic_load(&cl->tls));
    free(cl->slots);
    free(cl);
}

cfdb_loop *cfdb_client_loop(cfdb_client *cl)
{
    return cl->loop;
}

bool cfdb_client_set_tls(cfdb_client *cl, cfdb_tls_ctx *ctx)
{
    cfdb_tls_ctx *none = NULL;
    return atomic_compare_exchange_strong(&cl->tls, &none, ctx);
}

void cfdb_client_set_tls_factory(cfdb_client *cl, cfdb_tls_factory fn)
{
    cl->tls_factory = fn;
}

bool cfdb_client_has_tls(cfdb_client *cl)
{
    return atomic_load(&cl->tls) != NULL;
}

/* ---- reply slots ---- */

static uint32_t slot_alloc(cfdb_client *cl)
{
    if (cl->free_head) {
        uint32_t i = cl->free_head - 1;
        cl->free_head = cl->slots[i].next_free;
        return i;
    }
    if (cl->nslots == cl->cap_slots) {
        uint32_t cap = cl->cap_slots ? cl->cap_slots * 2 : 256;
        reply_slot *ns = realloc(cl->slots, cap * sizeof *ns);
        if (!ns)
            return UINT32_MAX;
        cl->slots = ns;
        cl->cap_slots = cap;
    }
    memset(&cl->slots[cl->nslots], 0, sizeof(reply_slot));
    cl->slots[cl->nslots].gen = 1; /* request ids are never 0: 0 means "not sent" */
    return cl->nslots++;
}

static void slot_unlink(cfdb_client *cl, uint32_t i)
{
    reply_slot *s = &cl->slots[i];
    if (s->peer) {
        if (s->peer_prev)
            cl->slots[s->peer_prev - 1].peer_next = s->peer_next;
        else
            s->peer->waiting_head = s->peer_next;
        if (s->peer_next)
            cl->slots[s->peer_next - 1].peer_prev = s->peer_prev;
    }
    s->peer = NULL;
    s->peer_prev = s->peer_next = 0;
}

static void slot_free(cfdb_client *cl, uint32_t i)
{
    slot_unlink(cl, i);
    reply_slot *s = &cl->slots[i];
    s->fn = NULL;
    s->ctx = NULL;
    s->gen++;
    s->next_free = cl->free_head;
    cl->free_head = i + 1;
}

static cfdb_uid slot_token(const cfdb_client *cl, uint32_t i)
{
    return (cfdb_uid){ cl->token_base, (uint64_t)cl->slots[i].gen << 32 | i };
}

static uint64_t slot_id(const cfdb_client *cl, uint32_t i)
{
    return (uint64_t)cl->slots[i].gen << 32 | i;
}

/* Looks up the slot a reply token names; UINT32_MAX if stale or foreign. */
static uint32_t slot_for_token(const cfdb_client *cl, cfdb_uid token)
{
    if (token.first != cl->token_base)
        return UINT32_MAX;
    uint32_t i = (uint32_t)token.second, gen = (uint32_t)(token.second >> 32);
    if (i >= cl->nslots || cl->slots[i].gen != gen || !cl->slots[i].fn)
        return UINT32_MAX;
    return i;
}

/* Fails the requests waiting on p. Callbacks may send new requests to p (on a new
 * connection): those are not failed, so the current list is detached first. */
static void fail_waiting(cfdb_peer *p, int error)
{
    cfdb_client *cl = p->cl;
    uint32_t n = 0;
    for (uint32_t i = p->waiting_head; i; i = cl->slots[i - 1].peer_next)
        n++;
    if (!n)
        return;
    uint64_t small[64], *ids = n <= 64 ? small : malloc(n * sizeof *ids);
    if (!ids)
        return;
    n = 0;
    for (uint32_t i = p->waiting_head; i; i = cl->slots[i - 1].peer_next)
        ids[n++] = slot_id(cl, i - 1);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (uint32_t)ids[k], gen = (uint32_t)(ids[k] >> 32);
        if (i >= cl->nslots || cl->slots[i].gen != gen || !cl->slots[i].fn)
            continue; /* already answered or forgotten by an earlier callback */
        cfdb_reply_fn fn = cl->slots[i].fn;
        void *ctx = cl->slots[i].ctx;
        slot_free(cl, i);
        fn(ctx, error, NULL, 0);
    }
    if (ids != small)
        free(ids);
}

/* ---- connections ---- */

/* The peer has no endpoint `missing` (it restarted, or the interface went away): the
 * requests sent there will never be answered. They fail as FoundationDB's failure
 * monitor makes them fail, with request_maybe_delivered, so callers relocate or retry. */
static void endpoint_not_found(cfdb_peer *p, const uint8_t *msg, uint32_t len)
{
    cfdb_client *cl = p->cl;
    cfdb_endpoint_not_found nf;
    cfdb_arena a;
    uint64_t mem[32];
    cfdb_arena_init_with(&a, mem, sizeof mem);
    memset(&nf, 0, sizeof nf);
    int rc = fb_decode(&cfdb_msg_endpoint_not_found, msg, len, &nf, NULL, &a);
    cfdb_arena_free(&a);
    if (rc)
        return;
    for (;;) {
        uint32_t i = p->waiting_head, found = 0;
        while (i && !found) {
            if (cfdb_uid_eq(cl->slots[i - 1].dest, nf.token))
                found = i;
            i = cl->slots[i - 1].peer_next;
        }
        if (!found)
            return;
        cfdb_reply_fn fn = cl->slots[found - 1].fn;
        void *ctx = cl->slots[found - 1].ctx;
        slot_free(cl, found - 1);
        fn(ctx, CFDB_ERR_REQUEST_MAYBE_DELIVERED, NULL, 0);
    }
}

static void on_frame(cfdb_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len, void *arg)
{
    cfdb_peer *p = arg;
    if (!p)
        return;
    cfdb_client *cl = p->cl;
    if (cfdb_uid_eq(token, cfdb_well_known_token(CFDB_WLTOKEN_ENDPOINT_NOT_FOUND))) {
        endpoint_not_found(p, msg, len);
        return;
    }
    uint32_t i = slot_for_token(cl, token);
    if (i == UINT32_MAX)
        return; /* a late reply, or a message to an endpoint we do not serve */
    cfdb_reply_fn fn = cl->slots[i].fn;
    void *ctx = cl->slots[i].ctx;
    slot_free(cl, i);
    fn(ctx, 0, msg, len);
}

static void on_open(cfdb_conn *c, const cfdb_connect_packet *peer, void *arg)
{
    cfdb_peer *p = arg;
    if (!p || p->conn != c)
        return;
    p->opened = true;
    p->failures = 0;
    p->retry_at_ns = 0;
    p->last_connect_ns = cfdb_monotonic_ns();
    p->protocol = peer->protocol_version;
}

static void on_closed(cfdb_conn *c, int error, void *arg)
{
    cfdb_peer *p = arg;
    if (!p)
        return;
    cfdb_conn_stats st;
    cfdb_conn_get_stats(c, &st);
    p->closed_totals.bytes_in += st.bytes_in;
    p->closed_totals.bytes_out += st.bytes_out;
    p->closed_totals.pings += st.pings;
    p->closed_totals.idle_timeouts += st.idle_timeouts;
    if (p->conn == c) {
        p->conn = NULL;
        if (!p->opened) {
            p->connect_failed_total++;
            double delay = (double)RECONNECT_INITIAL_NS;
            for (unsigned i = 0; i < p->failures && delay < (double)RECONNECT_MAX_NS; i++)
                delay *= 1.2;
            p->failures++;
            p->retry_at_ns = cfdb_monotonic_ns() + (uint64_t)(delay < RECONNECT_MAX_NS ? delay : RECONNECT_MAX_NS);
        }
        p->opened = false;
    }
    fail_waiting(p, CFDB_ERR_REQUEST_MAYBE_DELIVERED);
}

static const cfdb_conn_callbacks peer_callbacks = { on_open, on_frame, on_closed };

static cfdb_conn *peer_conn(cfdb_peer *p)
{
    if (p->conn)
        return p->conn;
    if (p->retry_at_ns && cfdb_monotonic_ns() < p->retry_at_ns)
        return NULL; /* still backing off after failed connection attempts */
    cfdb_conn_options opt = { .ping_interval_ns = PING_INTERVAL_NS, .idle_timeout_ns = IDLE_TIMEOUT_NS };
    if (p->tls && !(opt.tls = atomic_load(&p->cl->tls))) {
        /* a :tls peer although the cluster file had none (proxies, forwarded coordinators) */
        cfdb_tls_ctx *ctx = p->cl->tls_factory ? p->cl->tls_factory() : NULL;
        if (ctx && !cfdb_client_set_tls(p->cl, ctx))
            cfdb_tls_ctx_free(ctx);
        if (!(opt.tls = atomic_load(&p->cl->tls)))
            return NULL; /* no usable TLS configuration: a :tls peer cannot be reached */
    }
    p->conn = cfdb_conn_connect(p->cl->loop, p->ip, p->port, &opt, &peer_callbacks, p);
    return p->conn;
}

/* The numeric IP text of an address (no brackets); false if it has none. */
static bool addr_ip(const cfdb_network_address *addr, char *ip, size_t cap)
{
    if (addr->ip.tag == 1) {
        uint32_t v = addr->ip.v4;
        snprintf(ip, cap, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255);
        return true;
    }
    if (addr->ip.tag == 2 && addr->ip.v6.count == 16) {
        cfdb_network_address_format(addr, ip, cap);
        char *close_b = strchr(ip, ']');
        if (close_b)
            *close_b = 0;
        memmove(ip, ip + 1, strlen(ip));
        return true;
    }
    return false;
}

/* Closes the peer's connection (its callbacks no longer see the peer) and frees it. */
static void peer_free(cfdb_peer *p)
{
    if (p->conn) {
        cfdb_conn_set_user(p->conn, NULL);
        cfdb_conn_abort(p->conn, 0);
    }
    free(p);
}

/* FNV-1a over the address text, port and TLS mark. */
static uint32_t peer_hash(const char *ip, uint16_t port, bool tls)
{
    uint32_t h = 2166136261u;
    for (const char *c = ip; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    h = (h ^ (port & 255)) * 16777619u;
    h = (h ^ (port >> 8)) * 16777619u;
    return (h ^ (tls ? 1u : 0u)) * 16777619u;
}

/* Doubles the table when chains average more than two peers; a failed allocation keeps the
 * old table (longer chains, still correct). */
static void maybe_grow(cfdb_client *cl)
{
    if (cl->npeers <= 2 * cl->nbuckets)
        return;
    size_t n = cl->nbuckets * 2;
    cfdb_peer **nb = calloc(n, sizeof *nb);
    if (!nb)
        return;
    for (size_t b = 0; b < cl->nbuckets; b++)
        for (cfdb_peer *p = cl->buckets[b], *next; p; p = next) {
            next = p->hnext;
            p->hnext = nb[p->hash & (n - 1)];
            nb[p->hash & (n - 1)] = p;
        }
    free(cl->buckets);
    cl->buckets = nb;
    cl->nbuckets = n;
}

cfdb_peer *cfdb_client_peer(cfdb_client *cl, const cfdb_network_address *addr)
{
    char ip[64];
    if (!addr_ip(addr, ip, sizeof ip))
        return NULL;
    bool tls = (addr->flags & CFDB_ADDR_FLAG_TLS) != 0;
    uint32_t h = peer_hash(ip, addr->port, tls);
    for (cfdb_peer *p = cl->buckets[h & (cl->nbuckets - 1)]; p; p = p->hnext)
        if (p->hash == h && p->port == addr->port && p->tls == tls && strcmp(p->ip, ip) == 0)
            return p;
    cfdb_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cl = cl;
    snprintf(p->ip, sizeof p->ip, "%s", ip);
    p->port = addr->port;
    p->tls = tls;
    p->hash = h;
    size_t b = h & (cl->nbuckets - 1);
    p->hnext = cl->buckets[b];
    cl->buckets[b] = p;
    cl->npeers++;
    maybe_grow(cl);
    return p;
}

void cfdb_peer_ref(cfdb_peer *p)
{
    p->refs++;
}

void cfdb_peer_unref(cfdb_peer *p)
{
    p->refs--; /* forgotten by the heartbeat once unused for PEER_FORGET_DELAY_NS */
}

size_t cfdb_client_peer_count(const cfdb_client *cl)
{
    return cl->npeers;
}

uint64_t cfdb_client_request(cfdb_client *cl, cfdb_peer *peer, cfdb_uid dest, const fb_message *m, void *item,
                             cfdb_uid *reply_token, cfdb_reply_fn fn, void *ctx)
{
    cfdb_conn *c = peer_conn(peer);
    if (!c)
        return 0;
    uint32_t i = slot_alloc(cl);
    if (i == UINT32_MAX)
        return 0;
    *reply_token = slot_token(cl, i);
    if (cfdb_conn_send(c, dest, m, item, 0) != 0) {
        cl->slots[i].fn = fn; /* so slot_free's bookkeeping is uniform */
        slot_free(cl, i);
        return 0;
    }
    reply_slot *s = &cl->slots[i];
    s->fn = fn;
    s->ctx = ctx;
    s->dest = dest;
    s->peer = peer;
    s->peer_prev = 0;
    s->peer_next = peer->waiting_head;
    if (peer->waiting_head)
        cl->slots[peer->waiting_head - 1].peer_prev = i + 1;
    peer->waiting_head = i + 1;
    return slot_id(cl, i);
}

void cfdb_client_forget(cfdb_client *cl, uint64_t request_id)
{
    uint32_t i = (uint32_t)request_id, gen = (uint32_t)(request_id >> 32);
    if (request_id && i < cl->nslots && cl->slots[i].gen == gen && cl->slots[i].fn)
        slot_free(cl, i);
}

void cfdb_peer_connection_json(cfdb_peer *p, cfdb_json *j)
{
    char text[96];
    cfdb_peer_address(p, text, sizeof text);
    cfdb_conn_stats st = p->closed_totals;
    if (p->conn) {
        cfdb_conn_stats now;
        cfdb_conn_get_stats(p->conn, &now);
        st.bytes_in += now.bytes_in;
        st.bytes_out += now.bytes_out;
        st.pings += now.pings;
    }
    const char *status = p->conn ? (p->opened ? "connected" : "connecting") : p->failures ? "failed" : "disconnected";
    double since = p->last_connect_ns ? (double)(cfdb_monotonic_ns() - p->last_connect_ns) / 1e9 : 0;
    cfdb_json_begin_object(j);
    cfdb_json_key(j, "Address");
    cfdb_json_string(j, text);
    cfdb_json_key(j, "BytesReceived");
    cfdb_json_int(j, (int64_t)st.bytes_in);
    cfdb_json_key(j, "BytesSampleTime");
    cfdb_json_double(j, since);
    cfdb_json_key(j, "BytesSent");
    cfdb_json_int(j, (int64_t)st.bytes_out);
    cfdb_json_key(j, "Compatible");
    cfdb_json_bool(j, p->protocol == 0 || cfdb_protocol_peer_exact(p->protocol));
    cfdb_json_key(j, "ConnectFailedCount");
    cfdb_json_int(j, (int64_t)p->connect_failed_total);
    cfdb_json_key(j, "LastConnectTime");
    cfdb_json_double(j, since);
    cfdb_json_key(j, "PingCount");
    cfdb_json_int(j, (int64_t)st.pings);
    cfdb_json_key(j, "PingTimeoutCount");
    cfdb_json_int(j, (int64_t)st.idle_timeouts);
    if (p->protocol) {
        char proto[24];
        /* ProtocolVersion::version(): without the flag bits (objectSerializerFlag) */
        snprintf(proto, sizeof proto, "%llx", (unsigned long long)(p->protocol & 0x0FFFFFFFFFFFFFFFull));
        cfdb_json_key(j, "ProtocolVersion");
        cfdb_json_string(j, proto);
    }
    cfdb_json_key(j, "Status");
    cfdb_json_string(j, status);
    cfdb_json_end_object(j);
}

bool cfdb_peer_failed(const cfdb_peer *p)
{
    return !p->conn && p->failures > 0;
}

void cfdb_peer_address(const cfdb_peer *p, char *buf, size_t cap)
{
    const char *tls = p->tls ? ":tls" : "";
    if (strchr(p->ip, ':'))
        snprintf(buf, cap, "[%s]:%u%s", p->ip, p->port, tls);
    else
        snprintf(buf, cap, "%s:%u%s", p->ip, p->port, tls);
}
