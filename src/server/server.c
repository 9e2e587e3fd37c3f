/* The server process: listeners, connections, the version clock, parked requests.
 *
 * What a peer can make it hold is bounded (issue 11): each connection's replies waiting for
 * the peer (conn_out_budget, then its requests are not read), the buffers of all connections
 * together (memory_budget, a cfdb_conn_pool), the number of connections (max_connections:
 * more are accepted and closed at once, so a client sees a refusal, not a timeout), and time
 * (FlowTransport's connection monitor knobs: a handshake deadline, a ping after long silence).
 * When accept() runs out of descriptors (EMFILE), one spare descriptor is given up to accept
 * and close the waiting connection; if even that fails (ENFILE), the listeners stop being
 * polled for a back-off that doubles from 50 ms to 1 s, instead of spinning on a listener
 * that stays readable. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "endpoint.h"
#include "error_codes.h"
#include "network_address.h"
#include "tcp.h"
#include "control.h"
#include "config_node.h"
#include "coord_change.h"
#include "coordinator.h"
#include "db_config.h"
#include "global_config.h"
#include "srv_core.h"
#include "system_keys.h"
#include "wal.h"

/* ---- small utilities ---- */

uint64_t srv_random64(srv *s)
{
    /* splitmix64 */
    uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

cfdb_uid srv_random_uid(srv *s)
{
    cfdb_uid u = { srv_random64(s), srv_random64(s) };
    return u;
}

cfdb_uid srv_random_base(srv *s)
{
    cfdb_uid u = srv_random_uid(s);
    u.first |= CFDB_TOKEN_STREAM_FLAG;
    u.first &= ~(UINT64_C(0xFF) << 32); /* room for derived streams without carry */
    u.second &= ~UINT64_C(0xFFFF);      /* low 32 bits + index never wrap */
    if (u.first == UINT64_MAX)
        u.first ^= 2;
    return u;
}

void srv_log(srv *s, const char *fmt, ...)
{
    if (s->cfg.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cfdb-server: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void srv_bytes_repr(cfdb_bytes b, char *out, size_t cap)
{
    size_t o = 0;
    for (uint32_t i = 0; i < b.len && o + 5 < cap; i++) {
        uint8_t ch = b.ptr[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            out[o++] = (char)ch;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
    }
    if (cap)
        out[o < cap ? o : cap - 1] = 0;
}

/* ---- versions ---- */

int64_t srv_clock_version(srv *s)
{
    uint64_t now = cfdb_monotonic_ns();
    return s->base_version + (int64_t)((now - s->start_ns) / 1000u);
}

int64_t srv_advance_version(srv *s)
{
    int64_t v = srv_clock_version(s);
    int64_t latest = cfdb_mvcc_latest_version(s->store);
    if (v > latest) {
        cfdb_mvcc_apply(s->store, v, NULL, 0);
        latest = v;
    }
    return latest;
}

/* ---- connections ---- */

void srv_conn_ref(srv_conn *c)
{
    c->refs++;
}

static void conn_release(srv_conn *c)
{
    c->prev->next = c->next;
    c->next->prev = c->prev;
    free(c);
}

void srv_conn_unref(srv_conn *c)
{
    if (--c->refs == 0 && !c->open)
        conn_release(c);
}

static void on_open(cfdb_conn *conn, const cfdb_connect_packet *peer, void *arg)
{
    (void)conn;
    (void)peer;
    (void)arg;
}

/* One received frame as a JSON line, like the golden captures' *.frames.jsonl. */
static void trace_frame(srv *s, const srv_conn *c, cfdb_uid token, const uint8_t *msg, uint32_t len)
{
    char tok[33];
    fprintf(s->trace,
            "{\"conn\": %llu, \"dir\": \"c2s\", \"seq\": %llu, \"kind\": \"frame\", \"token\": \"%s\", "
            "\"file_identifier\": %u, \"length\": %u, \"hex\": \"",
            (unsigned long long)(uintptr_t)c, (unsigned long long)s->trace_seq++, cfdb_uid_format(token, tok),
            fb_peek_file_id(msg, len), len + 16);
    for (uint32_t i = 0; i < len; i++)
        fprintf(s->trace, "%02x", msg[i]);
    fputs("\"}\n", s->trace);
    fflush(s->trace);
}

static void on_frame(cfdb_conn *conn, cfdb_uid token, const uint8_t *msg, uint32_t len, void *arg)
{
    srv_conn *c = arg;
    (void)conn;
    if (c->s->trace)
        trace_frame(c->s, c, token, msg, len);
    srv_dispatch(c->s, c, token, msg, len);
}

static void on_closed(cfdb_conn *conn, int error, void *arg)
{
    srv_conn *c = arg;
    (void)conn;
    c->s->nconns--;
    c->open = false;
    c->conn = NULL;
    /* parked requests of this connection can never be answered */
    srv *s = c->s;
    c->refs++; /* keep c while its parked requests go */
    for (srv_parked *p = s->parked.next; p != &s->parked;) {
        srv_parked *n = p->next;
        if (p->c == c)
            srv_unpark(s, p);
        p = n;
    }
    (void)error;
    srv_conn_unref(c);
}

static const cfdb_conn_callbacks conn_cb = { on_open, on_frame, on_closed };

static uint32_t listen_ip4(const srv *s)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s->cfg.listen_ip, &a) != 1)
        return 0x7f000001u;
    return ntohl(a.s_addr);
}

#define SEC_NS 1000000000ull
#define ACCEPT_BACKOFF_MIN_NS (50ull * 1000000ull)
#define ACCEPT_BACKOFF_MAX_NS SEC_NS
#define ACCEPT_BATCH 64 /* accepts per callback, then the loop's other work */

static uint64_t knob_ns(double seconds, double dflt)
{
    return (uint64_t)((seconds > 0 ? seconds : dflt) * 1e9);
}

/* A refusal is logged at most once a second, with the count since the last line. */
static void refusal(srv *s, const char *why)
{
    s->refused++;
    uint64_t now = cfdb_loop_now_ns(s->loop);
    if (s->refuse_log_ns && now - s->refuse_log_ns < SEC_NS)
        return;
    s->refuse_log_ns = now;
    srv_log(s, "refusing connections: %s (%llu refused so far, %d open)", why, (unsigned long long)s->refused,
            s->nconns);
}

static void listeners_poll(srv *s, bool on)
{
    for (int i = 0; i < s->nlisteners; i++)
        if (s->listeners[i].fd >= 0)
            cfdb_loop_modify_fd(s->loop, s->listeners[i].fd, on ? CFDB_EV_READ : 0);
}

static void accept_resume(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    srv *s = arg;
    (void)loop;
    (void)t;
    listeners_poll(s, true);
}

/* accept() failed for want of descriptors: refuse the waiting connection with the spare
 * descriptor, or stop polling the listeners for a while. */
static void out_of_descriptors(srv *s, int listen_fd, int err)
{
    if (s->spare_fd >= 0) {
        close(s->spare_fd);
        int cfd = CFDB_TCP_NO_FD;
        cfdb_tcp_accept(listen_fd, &cfd);
        if (cfd >= 0)
            close(cfd);
        s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (cfd >= 0) {
            refusal(s, err == EMFILE ? "out of file descriptors (EMFILE)" : "out of file descriptors");
            return;
        }
    }
    refusal(s, err == ENFILE ? "system out of file descriptors (ENFILE): backing off"
                             : "out of file descriptors: backing off");
    s->accept_backoff_ns = s->accept_backoff_ns ? s->accept_backoff_ns * 2 : ACCEPT_BACKOFF_MIN_NS;
    if (s->accept_backoff_ns > ACCEPT_BACKOFF_MAX_NS)
        s->accept_backoff_ns = ACCEPT_BACKOFF_MAX_NS;
    listeners_poll(s, false);
    cfdb_loop_timer_add_in(s->loop, &s->accept_timer, s->accept_backoff_ns);
}

static void on_accept(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    srv_listener *l = arg;
    srv *s = l->s;
    (void)events;
    for (int batch = 0; batch < ACCEPT_BATCH && !cfdb_timer_is_armed(&s->accept_timer); batch++) {
        int cfd;
        if (cfdb_tcp_accept(fd, &cfd)) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                out_of_descriptors(s, fd, errno);
            continue; /* else ECONNABORTED and the like: that one connection */
        }
        if (cfd < 0)
            return; /* none waiting */
        s->accept_backoff_ns = 0;
        if (s->nconns >= s->max_conns) {
            close(cfd); /* the peer sees the connection closed at once */
            refusal(s, "connection limit reached");
            continue;
        }
        srv_conn *c = calloc(1, sizeof(*c));
        if (!c) {
            close(cfd);
            continue;
        }
        c->s = s;
        c->listener = (int)(l - s->listeners);
        cfdb_conn_options opt = { 0 };
        opt.canonical_port = l->port;
        opt.canonical_ip4 = listen_ip4(s);
        opt.connection_id = srv_random64(s);
        opt.tls = s->tls;
        opt.pool = &s->pool;
        opt.out_budget = s->cfg.conn_out_budget ? s->cfg.conn_out_budget : 8u << 20;
        /* FlowTransport's connectionMonitor for incoming (client) connections: silent for
         * IDLE_TIMEOUT x INCOMING_IDLE_MULTIPLIER, it is pinged; nothing within TIMEOUT closes it */
        uint64_t monitor = knob_ns(s->cfg.connection_monitor_timeout, 2.0);
        opt.handshake_timeout_ns = monitor;
        opt.quiet_ping_ns = (uint64_t)((double)knob_ns(s->cfg.connection_monitor_idle_timeout, 180.0) *
                                       (s->cfg.connection_monitor_incoming_idle_multiplier > 0
                                            ? s->cfg.connection_monitor_incoming_idle_multiplier
                                            : 1.2));
        opt.idle_timeout_ns = opt.quiet_ping_ns + monitor;
        c->conn = cfdb_conn_adopt(loop, cfd, &opt, &conn_cb, c);
        if (!c->conn) {
            close(cfd);
            free(c);
            continue;
        }
        s->nconns++;
        c->open = true;
        c->next = s->conns.next;
        c->prev = &s->conns;
        s->conns.next->prev = c;
        s->conns.next = c;
    }
}

static void pool_log(void *arg, const char *line)
{
    srv_log(arg, "%s", line);
}

/* Connection limits from the configuration and the descriptor limit. */
static void limits_init(srv *s)
{
    struct rlimit rl;
    long fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 1024;
    /* descriptors for the loop, listeners, control port, WAL, snapshots, trace and a spare */
    long cap = fds > 64 ? fds - 32 : fds / 2;
    s->max_conns = s->cfg.max_connections > 0 ? s->cfg.max_connections : (int)(cap > 1 ? cap : 1);
    s->pool.budget = s->cfg.memory_budget ? (size_t)s->cfg.memory_budget : (size_t)512 << 20;
    s->pool.log = pool_log;
    s->pool.log_arg = s;
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    cfdb_timer_init(&s->accept_timer, accept_resume, s);
}

static int listener_open(srv *s, int i, uint16_t port)
{
    srv_listener *l = &s->listeners[i];
    uint16_t bound = 0;
    int fd;
    int rc = cfdb_tcp_listen(s->cfg.listen_ip, port, 128, &bound, &fd);
    if (rc) {
        fprintf(stderr, "cfdb-server: cannot listen on %s:%u: %s\n", s->cfg.listen_ip, port, strerror(errno));
        return rc;
    }
    l->s = s;
    l->fd = fd;
    l->port = bound;
    l->unreachable = false;
    if (cfdb_loop_add_fd(s->loop, fd, CFDB_EV_READ, on_accept, l)) {
        close(fd);
        l->fd = -1;
        return CFDB_ERR_PLATFORM_ERROR;
    }
    return 0;
}

static void listener_close(srv *s, int i)
{
    srv_listener *l = &s->listeners[i];
    if (l->fd >= 0) {
        cfdb_loop_remove_fd(s->loop, l->fd);
        close(l->fd);
        l->fd = -1;
    }
}

void srv_drop_connections(srv *s, int listener)
{
    for (srv_conn *c = s->conns.next; c != &s->conns; c = c->next)
        if (c->open && (listener < 0 || c->listener == listener))
            cfdb_conn_abort(c->conn, CFDB_ERR_CONNECTION_FAILED);
}

int srv_set_unreachable(srv *s, int listener, bool unreachable)
{
    if (listener < 0 || listener >= s->nlisteners)
        return CFDB_ERR_INVALID_OPTION_VALUE;
    srv_listener *l = &s->listeners[listener];
    if (unreachable && !l->unreachable) {
        listener_close(s, listener);
        srv_drop_connections(s, listener);
        l->unreachable = true;
    } else if (!unreachable && l->unreachable) {
        return listener_open(s, listener, l->port);
    }
    return 0;
}

cfdb_network_address srv_listener_address(srv *s, int listener)
{
    return cfdb_network_address_ipv4(listen_ip4(s), s->listeners[listener].port, s->tls ? CFDB_ADDR_FLAG_TLS : 0);
}

/* ---- replies and parking ---- */

static void delayed_fire(srv *s, srv_parked *p, bool timed_out)
{
    (void)timed_out;
    if (p->c->open)
        cfdb_conn_send_raw(p->c->conn, p->reply, p->msg, p->msg_len);
    srv_unpark(s, p);
}

void srv_bad_request(srv *s, srv_conn *c, const char *what)
{
    srv_log(s, "malformed %s: closing the connection", what);
    if (c && c->open && c->conn)
        cfdb_conn_close(c->conn);
}

void srv_reply(srv *s, srv_conn *c, cfdb_uid reply, const fb_message *m, const void *item, cfdb_reply_error err)
{
    if (!c->open)
        return;
    if (s->faults.delay_ns == 0) {
        int rc = cfdb_conn_send(c->conn, reply, m, item, err);
        if (rc && rc != CFDB_ERR_CONNECTION_FAILED)
            srv_log(s, "cannot send %s: error %d", m->name, rc);
        return;
    }
    fb_writer w;
    fb_writer_init(&w, 0);
    if (fb_encode(&w, m, item, err) == 0) {
        srv_parked *p = srv_park(s, c, reply, PARK_DELAYED_REPLY, delayed_fire, s->faults.delay_ns);
        if (p) {
            p->msg_len = (uint32_t)fb_writer_message_len(&w);
            p->msg = malloc(p->msg_len ? p->msg_len : 1);
            if (p->msg)
                memcpy(p->msg, fb_writer_message(&w), p->msg_len);
            else
                srv_unpark(s, p);
        }
    }
    fb_writer_free(&w);
}

static void park_timer(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    srv_parked *p = arg;
    (void)loop;
    (void)t;
    p->fn(p->s, p, true);
}

srv_parked *srv_park(srv *s, srv_conn *c, cfdb_uid reply, int kind, srv_parked_fn fn, uint64_t timeout_ns)
{
    srv_parked *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->s = s;
    p->c = c;
    p->reply = reply;
    p->kind = kind;
    p->fn = fn;
    p->owner = -1;
    p->tenant = -1;
    srv_conn_ref(c);
    cfdb_timer_init(&p->timer, park_timer, p);
    if (timeout_ns) {
        p->deadline_ns = cfdb_monotonic_ns() + timeout_ns;
        cfdb_loop_timer_add_at(s->loop, &p->timer, p->deadline_ns);
    }
    p->next = s->parked.next;
    p->prev = &s->parked;
    s->parked.next->prev = p;
    s->parked.next = p;
    return p;
}

void srv_unpark(srv *s, srv_parked *p)
{
    cfdb_loop_timer_cancel(s->loop, &p->timer);
    p->prev->next = p->next;
    p->next->prev = p->prev;
    srv_conn_unref(p->c);
    free(p->msg);
    free(p->key);
    free(p->value);
    free(p);
}

/* ---- maintenance ---- */

static void maint(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    srv *s = arg;
    int64_t latest = srv_advance_version(s);
    cfdb_mvcc_forget_before(s->store, latest - SRV_MVCC_WINDOW);
    if (s->wal)
        srv_wal_maybe_snapshot(s);
    cfdb_loop_timer_add_in(loop, t, 100000000ull);
}

/* ---- lifetime ---- */

void cfdb_server_config_init(cfdb_server_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->listen_ip = "127.0.0.1";
    cfg->description = "cfdb";
    cfg->storage_servers = 3;
    cfg->control_port = -1;
    cfg->tenant_mode = -1;
}

int srv_write_cluster_file(srv *s)
{
    if (!s->cfg.cluster_file)
        return 0;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", s->cfg.cluster_file, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "cfdb-server: cannot write %s: %s\n", tmp, strerror(errno));
        return CFDB_ERR_FILE_NOT_WRITABLE;
    }
    fprintf(f, "%s\n", cfdb_server_connection_string(s));
    fflush(f);
    fsync(fileno(f));
    fclose(f);
    if (rename(tmp, s->cfg.cluster_file)) {
        fprintf(stderr, "cfdb-server: cannot write %s: %s\n", s->cfg.cluster_file, strerror(errno));
        unlink(tmp);
        return CFDB_ERR_FILE_NOT_WRITABLE;
    }
    s->cluster_file_written = true;
    return 0;
}

static char g_conn_string[1024];

const char *cfdb_server_connection_string(const cfdb_server *s)
{
    /* the coordinators of the current string (coord_change.c), in its order */
    int o = snprintf(g_conn_string, sizeof g_conn_string, "%s:%s@", s->cluster_desc, s->cluster_id);
    for (int i = 0; i < (s->n_coord_set ? s->n_coord_set : 1) && o < (int)sizeof g_conn_string; i++)
        o += snprintf(g_conn_string + o, sizeof g_conn_string - (size_t)o, "%s%s:%u%s", i ? "," : "",
                      s->cfg.listen_ip, s->listeners[s->n_coord_set ? s->coord_set[i] : s->coord_listener].port,
                      s->tls ? ":tls" : "");
    return g_conn_string;
}

uint16_t cfdb_server_port(const cfdb_server *s)
{
    return s->listeners[s->coord_listener].port;
}

uint16_t cfdb_server_control_port(const cfdb_server *s)
{
    return s->control_port;
}

void cfdb_server_control(cfdb_server *s, const char *line, char *out, unsigned cap)
{
    control_execute(s, line, out, cap);
}

static void default_boundaries(srv *s)
{
    int n = s->nstorage;
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz";
    for (int i = 1; i < n; i++) {
        char k[2] = { letters[(i * 26) / n], 0 };
        srv_shard_map_split(&s->shards, cfdb_bytes_make(k, 1));
    }
    for (size_t i = 0; i < s->shards.count; i++)
        s->shards.shards[i].owner = (int)(i % (size_t)n);
}

static void hex_id(srv *s, char out[33])
{
    static const char hx[] = "0123456789abcdef";
    uint64_t a = srv_random64(s), b = srv_random64(s);
    for (int i = 0; i < 16; i++) {
        out[i] = hx[(a >> (i * 4)) & 15];
        out[16 + i] = hx[(b >> (i * 4)) & 15];
    }
    out[32] = 0;
}

cfdb_server *cfdb_server_create(cfdb_loop *loop, const cfdb_server_config *cfg)
{
    srv *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->loop = loop;
    s->cfg = *cfg;
    if (!s->cfg.listen_ip)
        s->cfg.listen_ip = "127.0.0.1";
    if (s->cfg.storage_servers <= 0)
        s->cfg.storage_servers = 3;
    s->rng = cfg->seed ? cfg->seed : (cfdb_monotonic_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL));
    snprintf(s->cluster_desc, sizeof s->cluster_desc, "%s", cfg->description ? cfg->description : "cfdb");
    if (cfg->cluster_id)
        snprintf(s->cluster_id, sizeof s->cluster_id, "%s", cfg->cluster_id);
    else {
        char h[33];
        hex_id(s, h);
        h[16] = 0;
        snprintf(s->cluster_id, sizeof s->cluster_id, "%s", h);
    }
    s->conns.next = s->conns.prev = &s->conns;
    s->parked.next = s->parked.prev = &s->parked;
    s->control_fd = -1;
    limits_init(s);
    for (int i = 0; i < SRV_MAX_LISTENERS; i++)
        s->listeners[i].fd = -1;
    cfdb_timer_init(&s->maint_timer, maint, s);
    srv_batch_init(s);

    if (cfg->trace_frames && !(s->trace = fopen(cfg->trace_frames, "a")))
        fprintf(stderr, "cfdb-server: cannot open %s for frame traces\n", cfg->trace_frames);

    if (cfg->tls_cert) {
        cfdb_tls_config tc = { .cert_path = cfg->tls_cert,
                               .key_path = cfg->tls_key,
                               .ca_path = cfg->tls_ca,
                               .password = cfg->tls_password,
                               .verify_peers = cfg->tls_verify_peers };
        char err[300];
        if (!(s->tls = cfdb_tls_ctx_create(&tc, true, err, sizeof err))) {
            fprintf(stderr, "cfdb-server: TLS: %s\n", err);
            goto fail;
        }
    }

    s->store = cfdb_mvcc_create();
    s->resolver = cfdb_resolver_create(CFDB_RESOLVER_DEFAULT_WINDOW);
    if (!s->store || !s->resolver || srv_endpoints_init(s) || srv_shard_map_init(&s->shards))
        goto fail;

    s->nstorage = s->cfg.storage_servers;
    if (s->cfg.separate_ports && 3 + s->nstorage > SRV_MAX_LISTENERS)
        s->nstorage = SRV_MAX_LISTENERS - 3;
    s->storage = calloc((size_t)s->nstorage, sizeof(srv_storage));
    if (!s->storage)
        goto fail;

    /* listeners: 0 coordinator + cluster controller (+ everything else unless separate) */
    s->nlisteners = s->cfg.separate_ports ? 3 + s->nstorage : 1;
    for (int i = 0; i < s->nlisteners; i++)
        if (listener_open(s, i, i == 0 ? s->cfg.port : 0))
            goto fail;
    s->listeners[0].name = "coordinator";
    s->coord_listener = 0;
    s->grv_listener = s->cfg.separate_ports ? 1 : 0;
    s->commit_listener = s->cfg.separate_ports ? 2 : 0;
    /* extra coordination servers (coord_change.c), after the role listeners */
    s->coord_listeners[0] = s->coord_set[0] = s->coord_listener;
    s->n_coord_listeners = s->n_coord_set = 1;
    for (int i = 0; i < s->cfg.n_extra_coordinators && s->n_coord_listeners < SRV_MAX_COORDS &&
                    s->nlisteners < SRV_MAX_LISTENERS;
         i++) {
        if (listener_open(s, s->nlisteners, s->cfg.extra_coordinator_ports[i]))
            goto fail;
        s->listeners[s->nlisteners].name = "coordinator";
        s->coord_listeners[s->n_coord_listeners++] = s->nlisteners++;
    }
    if (s->cfg.separate_ports) {
        s->listeners[1].name = "grv";
        s->listeners[2].name = "commit";
        for (int i = 3; i < s->nlisteners; i++)
            s->listeners[i].name = "storage";
    }

    /* shards */
    if (s->cfg.custom_boundaries) {
        for (int i = 0; i < s->cfg.nboundaries; i++)
            srv_shard_map_split(&s->shards, cfdb_bytes_make(s->cfg.boundaries[i], s->cfg.boundary_lens[i]));
        for (size_t i = 0; i < s->shards.count; i++)
            s->shards.shards[i].owner = (int)(i % (size_t)s->nstorage);
    } else {
        default_boundaries(s);
    }

    /* roles */
    s->cluster_id_uid = srv_random_uid(s);
    hex_id(s, s->proxy_process_id);
    s->log_id = srv_random_uid(s);
    s->cc_base = srv_random_base(s);
    s->leader_change_id = srv_random_uid(s);
    if (srv_register_interface(s, s->cc_base, 10, ROLE_CLUSTER, -1, s->coord_listener))
        goto fail;
    for (int i = 0; i < s->nstorage; i++) {
        srv_storage *ss = &s->storage[i];
        ss->id = srv_random_uid(s);
        ss->base = srv_random_base(s);
        ss->listener = s->cfg.separate_ports ? 3 + i : 0;
        hex_id(s, ss->machine_id);
        hex_id(s, ss->process_id);
        if (srv_register_interface(s, ss->base, CFDB_SS_STREAM_COUNT, ROLE_STORAGE, i, ss->listener))
            goto fail;
    }
    coord_new_generation(s);
    s->worker_base = srv_random_base(s);
    cfdb_timer_init(&s->reboot_timer, NULL, s);
    if (srv_register(s, s->worker_base, ROLE_WORKER, 0, -1, s->coord_listener))
        goto fail;

    /* data */
    s->start_ns = cfdb_monotonic_ns();
    s->base_version = cfg->initial_version > 0 ? cfg->initial_version : 1000;
    if (s->cfg.datadir) {
        int64_t recovered = 0;
        int wrc = srv_wal_open(s, &recovered);
        if (wrc) {
            /* the code the log or snapshot gave: 1522 file_corrupt, 1510 io_error, 4000 ... */
            fprintf(stderr, "cfdb-server: not started: %s (%d)\n", cfdb_error_name(wrc), wrc);
            goto fail;
        }
        /* Versions follow the wall clock since the data directory was created, so read
         * versions handed out before a crash stay below every version after it. */
        int64_t wall = srv_wal_epoch_version(s);
        if (wall > s->base_version)
            s->base_version = wall;
        if (recovered > 0) {
            /* like a recovery: read versions from before it are too old */
            if (s->base_version < recovered + 10 * SRV_MVCC_WINDOW)
                s->base_version = recovered + 10 * SRV_MVCC_WINDOW;
            s->last_commit_version = recovered;
            cfdb_mvcc_forget_before(s->store, recovered);
        }
    }
    if (s->cfg.datadir)
        coord_change_recover(s); /* a coordinators change made before the restart */
    srv_advance_version(s);
    if (srv_write_system_keys(s) || srv_config_init(s))
        goto fail;
    srv_gc_refresh(s); /* the history a restarted durable cluster already has */
    /* The store begins here, as a storage server's history begins at the recovery
     * version: a read at any version before it (e.g. set_read_version(1)) is
     * transaction_too_old (1007), not an empty database. */
    cfdb_mvcc_forget_before(s->store, cfdb_mvcc_latest_version(s->store));

    if (s->cfg.control_port >= 0 && control_start(s, (uint16_t)s->cfg.control_port))
        goto fail;
    cfdb_loop_timer_add_in(loop, &s->maint_timer, 100000000ull);
    if (srv_write_cluster_file(s))
        goto fail;
    s->started = true;
    srv_log(s, "listening on %s:%u (cluster %s, %d storage servers, %zu shards%s%s)", s->cfg.listen_ip,
            cfdb_server_port(s), cfdb_server_connection_string(s), s->nstorage, s->shards.count,
            s->cfg.datadir ? ", durable in " : ", in memory", s->cfg.datadir ? s->cfg.datadir : "");
    return s;
fail:
    cfdb_server_destroy(s);
    return NULL;
}

void cfdb_server_destroy(cfdb_server *s)
{
    if (!s)
        return;
    control_stop(s);
    if (s->trace)
        fclose(s->trace);
    cfdb_loop_timer_cancel(s->loop, &s->maint_timer);
    cfdb_loop_timer_cancel(s->loop, &s->reboot_timer);
    cfdb_loop_timer_cancel(s->loop, &s->batch_timer);
    cfdb_loop_timer_cancel(s->loop, &s->accept_timer);
    if (s->spare_fd >= 0)
        close(s->spare_fd);
    while (s->parked.next != &s->parked)
        srv_unpark(s, s->parked.next);
    for (int i = 0; i < s->nlisteners; i++)
        listener_close(s, i);
    /* close connections; their on_closed releases them from the loop */
    for (srv_conn *c = s->conns.next; c != &s->conns; c = c->next)
        if (c->open)
            cfdb_conn_close(c->conn);
    for (int i = 0; i < 100 && s->conns.next != &s->conns; i++)
        cfdb_loop_run_once(s->loop, 1000000ull);
    while (s->conns.next != &s->conns) { /* still open: abandon */
        srv_conn *c = s->conns.next;
        if (c->open)
            cfdb_conn_abort(c->conn, CFDB_ERR_CONNECTION_FAILED);
        cfdb_loop_run_once(s->loop, 0);
        if (s->conns.next == c) {
            c->open = false;
            c->refs = 0;
            conn_release(c);
        }
    }
    for (size_t i = 0; i < s->ncommits; i++)
        free(s->commits[i].msg);
    free(s->commits);
    free(s->grvs);
    if (s->wal)
        srv_wal_close(s);
    srv_shard_map_free(&s->shards);
    config_node_free(s); /* configuration database (wt-configdb) */
    srv_endpoints_free(s);
    free(s->storage);
    if (s->store)
        cfdb_mvcc_destroy(s->store);
    if (s->resolver)
        cfdb_resolver_destroy(s->resolver);
    cfdb_tls_ctx_free(s->tls);
    cfdb_arena_free(&s->gc_arena);
    free(s);
}
