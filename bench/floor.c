/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: the floor arm (see floor.h for what it does and what it leaves out). */
#define _GNU_SOURCE /* memmem, sched_getaffinity */
#include "floor.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cfdb/arena.h"
#include "connect_packet.h"
#include "endpoint.h"
#include "error_codes.h"
#include "frame.h"
#include "messages.h"
#include "protocol_version.h"
#include "kvfile.h"
#include "rng.h"
#include "workloads.h"

#define FLOOR_IO_TIMEOUT_S 30
#define FLOOR_IN_CAP (16u << 20) /* replies of 64 range reads fit many times over */
#define FLOOR_MAX_SLOTS 4096
#define FLOOR_DECODE_ARENA (256u * 1024)
#define FLOOR_KEY_DIGITS 10
#define FLOOR_MAX_PATCH 4 /* places one key's digits appear in a template */
#define FLOOR_VERSION_MARK UINT64_C(0x5A17C0FFEE0DDBA5)
#define FLOOR_MARK_BASE UINT64_C(9876543200) /* key indices of the templates: ...00 to ...49 */
#define FLOOR_BENCH_BEGIN "cfdb-bench/"
#define FLOOR_BENCH_END "cfdb-bench0"

typedef void (*malloc_stats_fn)(uint64_t *, uint64_t *);

typedef struct fconn {
    int fd;
    uint8_t *in;
    size_t in_len, in_cap;
    size_t done_off; /* discovery: bytes of in already taken (the last reply points into them) */
    uint64_t writes, reads, frames_out, frames_in;
} fconn;

typedef struct floor_target {
    char ip[INET_ADDRSTRLEN];
    uint16_t port;
    cfdb_uid grv, commit, storage; /* base tokens of the three interfaces */
    int shards;                    /* shards over the bench keyspace */
} floor_target;

/* A request encoded once, patched per transaction. */
typedef struct tmpl {
    uint8_t *frame;  /* CFDB_FRAME_HEADER_MAX bytes of header, then the message */
    uint32_t msg_len;
    size_t frame_len;
    cfdb_uid token;
    size_t version_off; /* offset of the read version in frame, or 0 */
    int nkeys;
    int npatch[BENCH_BATCH];
    size_t patch[BENCH_BATCH][FLOOR_MAX_PATCH]; /* offsets of each key's digits in frame */
} tmpl;

enum { SLOT_IDLE, SLOT_GRV, SLOT_OP, SLOT_PARKED };

typedef struct slot {
    int state;
    bench_rng rng;
    uint64_t ticket, t0;
    unsigned attempts;
    uint64_t idx[BENCH_BATCH];
    tmpl grv, op;
} slot;

typedef struct floor_run {
    const bench_floor_opts *o;
    fconn conn;
    floor_target tgt;
    slot *slots;
    struct iovec *iov;
    int niov;
    uint64_t next_ticket, done, done_warmup, done_measured, total;
    bool window_open;
    uint64_t *lat;
    bench_txn_counts counts, counts_measured;
    cfdb_arena arena;
    void *arena_mem;
    const uint8_t *value;
    int vsize;
    cfdb_uid reply_base;
    malloc_stats_fn mstats;
    char err[512];
} floor_run;

typedef struct fsnap {
    uint64_t wall_ns;
    double cpu_us;
    int64_t vcsw, ivcsw, allocs, bytes;
    uint64_t writes, reads;
} fsnap;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void take(const floor_run *r, fsnap *s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    s->wall_ns = now_ns();
    s->cpu_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
                (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
    s->vcsw = ru.ru_nvcsw;
    s->ivcsw = ru.ru_nivcsw;
    s->allocs = s->bytes = -1;
    if (r->mstats) {
        uint64_t n, b;
        r->mstats(&n, &b);
        s->allocs = (int64_t)n;
        s->bytes = (int64_t)b;
    }
    s->writes = r->conn.writes;
    s->reads = r->conn.reads;
}

static uint64_t random_u64(void)
{
    static uint64_t state;
    if (!state)
        state = now_ns() ^ ((uint64_t)getpid() << 32);
    return bench_splitmix64(&state);
}

/* ---------- the connection (blocking) ---------- */

static int write_all_iov(floor_run *r, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(r->conn.fd, iov, n > IOV_MAX ? IOV_MAX : n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(r->err, sizeof r->err, "floor: write to %s:%u failed: %s", r->tgt.ip, r->tgt.port,
                     w < 0 ? strerror(errno) : "closed");
            return -1;
        }
        r->conn.writes++;
        size_t left = (size_t)w;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

/* One recv() of whatever has arrived (blocking until something does). */
static int read_some(floor_run *r)
{
    fconn *c = &r->conn;
    if (c->in_len == c->in_cap) {
        snprintf(r->err, sizeof r->err, "floor: a reply larger than %u bytes", (unsigned)c->in_cap);
        return -1;
    }
    for (;;) {
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(r->err, sizeof r->err, "floor: reading from %s:%u: %s", r->tgt.ip, r->tgt.port,
                     n == 0 ? "connection closed by the server"
                     : (errno == EAGAIN || errno == EWOULDBLOCK) ? "no reply within 30 s"
                                                                 : strerror(errno));
            return -1;
        }
        c->reads++;
        c->in_len += (size_t)n;
        return 0;
    }
}

static int conn_open(floor_run *r, const char *ip, uint16_t port)
{
    fconn *c = &r->conn;
    snprintf(r->tgt.ip, sizeof r->tgt.ip, "%s", ip);
    r->tgt.port = port;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
        snprintf(r->err, sizeof r->err, "floor: bad address %s", ip);
        return -1;
    }
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        snprintf(r->err, sizeof r->err, "floor: socket: %s", strerror(errno));
        return -1;
    }
    struct timeval tv = {.tv_sec = FLOOR_IO_TIMEOUT_S};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        snprintf(r->err, sizeof r->err, "floor: cannot connect to %s:%u: %s", ip, port, strerror(errno));
        return -1;
    }
    cfdb_connect_packet cp;
    memset(&cp, 0, sizeof cp);
    cp.protocol_version = CFDB_PROTOCOL_CONNECT_VERSION;
    cp.connection_id = random_u64();
    uint8_t pkt[CFDB_CONNECT_PACKET_SIZE];
    size_t n = cfdb_connect_packet_encode(&cp, pkt);
    struct iovec iov = {pkt, n};
    if (write_all_iov(r, &iov, 1) < 0)
        return -1;
    for (;;) { /* the server's ConnectPacket */
        cfdb_connect_packet peer;
        size_t used = 0;
        int rc = cfdb_connect_packet_decode(c->in, c->in_len, &peer, &used);
        if (rc) {
            snprintf(r->err, sizeof r->err, "floor: bad ConnectPacket from %s:%u (%d)", ip, port, rc);
            return -1;
        }
        if (used) {
            if ((peer.protocol_version & CFDB_PROTOCOL_COMPATIBLE_MASK) !=
                (CFDB_PROTOCOL_CONNECT_VERSION & CFDB_PROTOCOL_COMPATIBLE_MASK)) {
                snprintf(r->err, sizeof r->err, "floor: %s:%u speaks protocol %016llx, not 7.3", ip, port,
                         (unsigned long long)peer.protocol_version);
                return -1;
            }
            memmove(c->in, c->in + used, c->in_len - used);
            c->in_len -= used;
            return 0;
        }
        if (read_some(r) < 0)
            return -1;
    }
}

static void conn_close(floor_run *r)
{
    if (r->conn.fd >= 0)
        close(r->conn.fd);
    r->conn.fd = -1;
    r->conn.in_len = r->conn.done_off = 0;
}

/* Answers a ping from the server (rare: we are never silent for long). */
static int answer_ping(floor_run *r, const uint8_t *msg, uint32_t len)
{
    cfdb_ping_request req;
    memset(&req, 0, sizeof req);
    cfdb_reply_error e = 0;
    cfdb_arena_reset(&r->arena);
    if (fb_decode(&cfdb_msg_ping_request, msg, len, &req, &e, &r->arena))
        return 0;
    fb_writer w;
    fb_writer_init(&w, CFDB_FRAME_HEADER_MAX);
    cfdb_void v = {0};
    int rc = 0;
    if (fb_encode(&w, &cfdb_msg_void_reply, &v, 0) == 0) {
        uint8_t *frame = fb_writer_message(&w) - cfdb_frame_header_size(true);
        size_t n = cfdb_frame_seal(frame, req.reply.token, (uint32_t)fb_writer_message_len(&w), true);
        struct iovec iov = {frame, n};
        rc = write_all_iov(r, &iov, 1);
    }
    fb_writer_free(&w);
    return rc;
}

/* Sends one request during discovery and waits for the reply to reply_token. */
static int rpc(floor_run *r, cfdb_uid token, const fb_message *m, const void *item, cfdb_uid reply_token,
               const fb_message *rm, void *reply, const char *what)
{
    fb_writer w;
    fb_writer_init(&w, CFDB_FRAME_HEADER_MAX);
    int rc = fb_encode(&w, m, item, 0);
    if (rc) {
        fb_writer_free(&w);
        snprintf(r->err, sizeof r->err, "floor: cannot encode %s (%d)", what, rc);
        return -1;
    }
    uint8_t *frame = fb_writer_message(&w) - cfdb_frame_header_size(true);
    size_t n = cfdb_frame_seal(frame, token, (uint32_t)fb_writer_message_len(&w), true);
    struct iovec iov = {frame, n};
    rc = write_all_iov(r, &iov, 1);
    fb_writer_free(&w);
    if (rc < 0)
        return -1;
    fconn *c = &r->conn;
    memmove(c->in, c->in + c->done_off, c->in_len - c->done_off);
    c->in_len -= c->done_off;
    c->done_off = 0;
    size_t off = 0;
    for (;;) {
        cfdb_frame fr;
        size_t used = 0;
        rc = cfdb_frame_parse(c->in + off, c->in_len - off, true, &fr, &used);
        if (rc) {
            snprintf(r->err, sizeof r->err, "floor: bad frame from %s:%u (%d)", r->tgt.ip, r->tgt.port, rc);
            return -1;
        }
        if (!used) {
            memmove(c->in, c->in + off, c->in_len - off);
            c->in_len -= off;
            off = 0;
            if (read_some(r) < 0)
                return -1;
            continue;
        }
        off += used;
        if (cfdb_uid_eq(fr.token, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET))) {
            if (answer_ping(r, fr.msg, fr.msg_len) < 0)
                return -1;
            continue;
        }
        if (!cfdb_uid_eq(fr.token, reply_token))
            continue;
        cfdb_reply_error e = 0;
        rc = fb_decode(rm, fr.msg, fr.msg_len, reply, &e, &r->arena);
        c->done_off = off; /* the reply points into c->in: dropped by the next call */
        if (rc || e) {
            snprintf(r->err, sizeof r->err, "floor: %s failed (%d)", what, rc ? rc : e);
            return -1;
        }
        return 0;
    }
}

/* ---------- discovery ---------- */

/* The cluster key ("description:id") and first coordinator of a cluster file. */
static int read_cluster_file(floor_run *r, const char *path, char *key, size_t keylen, char *ip, uint16_t *port)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(r->err, sizeof r->err, "floor: cannot read the cluster file %s", path);
        return -1;
    }
    char line[4096] = {0}, buf[4096];
    while (fgets(buf, sizeof buf, f)) {
        char *s = buf + strspn(buf, " \t\r\n");
        if (*s && *s != '#') {
            snprintf(line, sizeof line, "%s", s);
            break;
        }
    }
    fclose(f);
    line[strcspn(line, " \t\r\n#")] = 0;
    char *at = strchr(line, '@');
    if (!at) {
        snprintf(r->err, sizeof r->err, "floor: %s holds no connection string", path);
        return -1;
    }
    *at = 0;
    snprintf(key, keylen, "%s", line);
    char *first = at + 1;
    first[strcspn(first, ",")] = 0;
    char *colon = strchr(first, ':');
    if (!colon || strstr(colon + 1, ":tls") || strchr(first, '[')) {
        snprintf(r->err, sizeof r->err, "floor: coordinator '%s' is not a plain IPv4 address:port "
                                        "(TLS, IPv6 and hostnames are not supported)", first);
        return -1;
    }
    *colon = 0;
    struct in_addr a;
    long p = strtol(colon + 1, NULL, 10);
    if (inet_pton(AF_INET, first, &a) != 1 || p <= 0 || p > 65535) {
        snprintf(r->err, sizeof r->err, "floor: coordinator '%s' is not a plain IPv4 address:port "
                                        "(hostnames are not supported)", first);
        return -1;
    }
    snprintf(ip, INET_ADDRSTRLEN, "%s", first);
    *port = (uint16_t)p;
    return 0;
}

static void addr_text(const cfdb_network_address *a, char *ip, uint16_t *port)
{
    struct in_addr in = {htonl(a->ip.v4)};
    inet_ntop(AF_INET, &in, ip, INET_ADDRSTRLEN);
    *port = a->port;
}

static bool same_addr(const cfdb_endpoint *e, const char *ip, uint16_t port)
{
    if (e->addresses.address.ip.tag != 1)
        return false;
    char eip[INET_ADDRSTRLEN];
    uint16_t eport;
    addr_text(&e->addresses.address, eip, &eport);
    return eport == port && !strcmp(eip, ip);
}

/* Finds the proxies and the bench keyspace's storage server, and leaves r->conn open to the
 * one address they share. */
static int discover(floor_run *r, const char *cluster_file)
{
    char key[1024], ip[INET_ADDRSTRLEN];
    uint16_t port;
    if (read_cluster_file(r, cluster_file, key, sizeof key, ip, &port) < 0)
        return -1;
    if (conn_open(r, ip, port) < 0)
        return -1;
    static const cfdb_client_version versions[1] = {
        {{(const uint8_t *)"7.3.77", 6}, {(const uint8_t *)"", 0}, {(const uint8_t *)"fdb00b073000000", 15}}};
    cfdb_network_address coord;
    memset(&coord, 0, sizeof coord);
    struct in_addr a;
    inet_pton(AF_INET, ip, &a);
    coord.ip.tag = 1;
    coord.ip.v4 = ntohl(a.s_addr);
    coord.port = port;
    cfdb_open_database_coord_request od;
    memset(&od, 0, sizeof od);
    od.supportedVersions.items = (cfdb_client_version *)versions;
    od.supportedVersions.count = 1;
    od.traceLogGroup = cfdb_bytes_str("default");
    od.clusterKey = cfdb_bytes_str(key);
    od.coordinators.items = &coord;
    od.coordinators.count = 1;
    od.reply.token = (cfdb_uid){random_u64() & ~CFDB_TOKEN_STREAM_FLAG, random_u64()};
    cfdb_client_db_info info;
    memset(&info, 0, sizeof info);
    if (rpc(r, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_OPENDATABASE), &cfdb_msg_open_database_coord_request,
            &od, od.reply.token, &cfdb_msg_client_db_info_reply, &info, "OpenDatabaseCoordRequest") < 0)
        return -1;
    if (info.forward.present || !info.grvProxies.count || !info.commitProxies.count) {
        snprintf(r->err, sizeof r->err, "floor: the coordinator %s:%u gave no proxies%s", ip, port,
                 info.forward.present ? " (it forwards to another cluster)" : "");
        return -1;
    }
    const cfdb_endpoint *grv = &info.grvProxies.items[0].getConsistentReadVersion.endpoint;
    const cfdb_endpoint *cp = &info.commitProxies.items[0].commit.endpoint;
    char pip[INET_ADDRSTRLEN];
    uint16_t pport;
    if (grv->addresses.address.ip.tag != 1 || cp->addresses.address.ip.tag != 1) {
        snprintf(r->err, sizeof r->err, "floor: the proxies are not at IPv4 addresses");
        return -1;
    }
    addr_text(&grv->addresses.address, pip, &pport);
    if (!same_addr(cp, pip, pport)) {
        snprintf(r->err, sizeof r->err, "floor: the GRV and commit proxies are in different processes; "
                                        "the floor replays on one connection");
        return -1;
    }
    r->tgt.grv = grv->token;
    r->tgt.commit = cp->token; /* grv and cp point into the input buffer: not used below */
    if (pport != port || strcmp(pip, ip)) { /* the proxies live elsewhere: move there */
        conn_close(r);
        if (conn_open(r, pip, pport) < 0)
            return -1;
    }
    cfdb_get_key_server_locations_request lr;
    memset(&lr, 0, sizeof lr);
    lr.begin = CFDB_BYTES_LIT(FLOOR_BENCH_BEGIN);
    lr.end.present = true;
    lr.end.value = CFDB_BYTES_LIT(FLOOR_BENCH_END);
    lr.limit = 100;
    lr.tenant.tenantId = -1;
    lr.minTenantVersion = -2;
    lr.reply.token = (cfdb_uid){random_u64() & ~CFDB_TOKEN_STREAM_FLAG, random_u64()};
    cfdb_get_key_server_locations_reply loc;
    memset(&loc, 0, sizeof loc);
    if (rpc(r, cfdb_adjusted_token(r->tgt.commit, CFDB_CP_GET_KEY_SERVERS_LOCATIONS),
            &cfdb_msg_get_key_server_locations_request, &lr, lr.reply.token,
            &cfdb_msg_get_key_server_locations_reply, &loc, "GetKeyServerLocationsRequest") < 0)
        return -1;
    r->tgt.shards = (int)loc.results.count;
    if (loc.results.count != 1 || !loc.results.items[0].second.count) {
        snprintf(r->err, sizeof r->err,
                 "floor: the bench keyspace [%s, %s) spans %u shards; the floor replays on one "
                 "storage server and one shard (run without it: --no-floor)",
                 FLOOR_BENCH_BEGIN, FLOOR_BENCH_END, (unsigned)loc.results.count);
        return -1;
    }
    const cfdb_endpoint *ss = &loc.results.items[0].second.items[0].getValue.endpoint;
    if (!same_addr(ss, r->tgt.ip, r->tgt.port)) {
        snprintf(r->err, sizeof r->err, "floor: the storage server is not in the proxies' process; "
                                        "the floor replays on one connection");
        return -1;
    }
    r->tgt.storage = ss->token;
    cfdb_arena_reset(&r->arena);
    return 0;
}

/* ---------- templates ---------- */

static void put_digits(uint8_t *p, uint64_t v)
{
    for (int i = FLOOR_KEY_DIGITS - 1; i >= 0; i--) {
        p[i] = (uint8_t)('0' + v % 10);
        v /= 10;
    }
}

/* Encodes item into t (header room first), then finds where its marks landed. */
static int tmpl_build(floor_run *r, tmpl *t, cfdb_uid token, const fb_message *m, const void *item, int nkeys,
                      char keys[][BENCH_KEY_MAX + 1], int keylen, bool has_version)
{
    fb_writer w;
    fb_writer_init(&w, CFDB_FRAME_HEADER_MAX);
    int rc = fb_encode(&w, m, item, 0);
    if (rc) {
        fb_writer_free(&w);
        snprintf(r->err, sizeof r->err, "floor: cannot encode %s (%d)", m->name, rc);
        return -1;
    }
    size_t head = cfdb_frame_header_size(true);
    t->msg_len = (uint32_t)fb_writer_message_len(&w);
    t->frame = malloc(head + t->msg_len);
    if (!t->frame) {
        fb_writer_free(&w);
        snprintf(r->err, sizeof r->err, "floor: out of memory");
        return -1;
    }
    memcpy(t->frame + head, fb_writer_message(&w), t->msg_len);
    fb_writer_free(&w);
    t->token = token;
    t->frame_len = cfdb_frame_seal(t->frame, token, t->msg_len, true);
    t->nkeys = nkeys;
    t->version_off = 0;
    if (has_version) {
        uint64_t mark = FLOOR_VERSION_MARK;
        uint8_t *p = memmem(t->frame + head, t->msg_len, &mark, 8);
        if (!p || memmem(p + 1, (size_t)(t->frame + head + t->msg_len - p - 1), &mark, 8)) {
            snprintf(r->err, sizeof r->err, "floor: the read version of %s is not at one place", m->name);
            return -1;
        }
        t->version_off = (size_t)(p - t->frame);
    }
    for (int k = 0; k < nkeys; k++) {
        t->npatch[k] = 0;
        const uint8_t *from = t->frame + head, *end = t->frame + head + t->msg_len;
        uint8_t *p;
        while ((p = memmem(from, (size_t)(end - from), keys[k], (size_t)keylen))) {
            if (t->npatch[k] == FLOOR_MAX_PATCH)
                break;
            t->patch[k][t->npatch[k]++] = (size_t)(p - t->frame) + (size_t)keylen - FLOOR_KEY_DIGITS;
            from = p + keylen;
        }
        if (!t->npatch[k]) {
            snprintf(r->err, sizeof r->err, "floor: key %d of %s not found in its encoding", k, m->name);
            return -1;
        }
    }
    return 0;
}

static int build_templates(floor_run *r, int s)
{
    slot *sl = &r->slots[s];
    const int wl = r->o->wl;
    cfdb_uid token = {r->reply_base.first, r->reply_base.second + (uint64_t)s};
    char keys[BENCH_BATCH][BENCH_KEY_MAX + 1];
    int keylen = 0;
    for (int k = 0; k < BENCH_BATCH; k++)
        keylen = bench_key(keys[k], r->vsize, FLOOR_MARK_BASE + (uint64_t)k);

    cfdb_get_read_version_request g;
    memset(&g, 0, sizeof g);
    g.transactionCount = 1;
    g.flags = CFDB_GRV_PRIORITY_DEFAULT;
    g.maxVersion = -1;
    g.reply.token = token;
    if (tmpl_build(r, &sl->grv, r->tgt.grv, &cfdb_msg_get_read_version_request, &g, 0, keys, keylen, false) < 0)
        return -1;
    switch (wl) {
    case WL_GRV:
        return 0;
    case WL_GET100:
    case WL_GET1000: {
        cfdb_get_value_request q;
        memset(&q, 0, sizeof q);
        q.key = cfdb_bytes_make(keys[0], (size_t)keylen);
        q.version = (int64_t)FLOOR_VERSION_MARK;
        q.reply.token = token;
        q.tenantInfo.tenantId = -1;
        q.ssLatestCommitVersions = cfdb_version_vector_empty();
        return tmpl_build(r, &sl->op, cfdb_adjusted_token(r->tgt.storage, CFDB_SS_GET_VALUE),
                          &cfdb_msg_get_value_request, &q, 1, keys, keylen, true);
    }
    case WL_RANGE100: {
        cfdb_get_key_values_request q;
        memset(&q, 0, sizeof q);
        q.begin = (cfdb_key_selector){cfdb_bytes_make(keys[0], (size_t)keylen), false, 1};
        q.end = (cfdb_key_selector){cfdb_bytes_make(keys[1], (size_t)keylen), false, 1};
        q.version = (int64_t)FLOOR_VERSION_MARK;
        q.limit = BENCH_RANGE_ROWS;
        q.limitBytes = 80000; /* REPLY_BYTE_LIMIT, as clients send it */
        q.reply.token = token;
        q.tenantInfo.tenantId = -1;
        q.ssLatestCommitVersions = cfdb_version_vector_empty();
        return tmpl_build(r, &sl->op, cfdb_adjusted_token(r->tgt.storage, CFDB_SS_GET_KEY_VALUES),
                          &cfdb_msg_get_key_values_request, &q, 2, keys, keylen, true);
    }
    default: {
        int n = wl == WL_SET100 ? 1 : BENCH_BATCH;
        cfdb_mutation mut[BENCH_BATCH];
        cfdb_key_range wr[BENCH_BATCH];
        char kz[BENCH_BATCH][BENCH_KEY_MAX + 2];
        for (int k = 0; k < n; k++) {
            memcpy(kz[k], keys[k], (size_t)keylen);
            kz[k][keylen] = 0;
            mut[k] = (cfdb_mutation){CFDB_MUT_SET_VALUE, cfdb_bytes_make(keys[k], (size_t)keylen),
                                     cfdb_bytes_make(r->value, (size_t)r->vsize)};
            wr[k] = (cfdb_key_range){cfdb_bytes_make(kz[k], (size_t)keylen), cfdb_bytes_make(kz[k], (size_t)keylen + 1)};
        }
        cfdb_commit_transaction_request q;
        memset(&q, 0, sizeof q);
        q.transaction.mutations.items = mut;
        q.transaction.mutations.count = (uint32_t)n;
        q.transaction.write_conflict_ranges.items = wr;
        q.transaction.write_conflict_ranges.count = (uint32_t)n;
        q.transaction.read_snapshot = (int64_t)FLOOR_VERSION_MARK;
        q.reply.token = token;
        q.tenantInfo.tenantId = -1;
        return tmpl_build(r, &sl->op, r->tgt.commit, &cfdb_msg_commit_transaction_request, &q, n, keys, keylen,
                          true);
    }
    }
}

/* ---------- the replay ---------- */

static void queue(floor_run *r, tmpl *t)
{
    r->iov[r->niov].iov_base = t->frame;
    r->iov[r->niov].iov_len = t->frame_len;
    r->niov++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void draw_keys(floor_run *r, slot *sl)
{
    const int wl = r->o->wl;
    int n = (wl == WL_BATCHSET50 || wl == WL_BATCHSET50X1000) ? BENCH_BATCH : 1;
    uint64_t span = r->o->keys;
    if (wl == WL_RANGE100)
        span = span > BENCH_RANGE_ROWS ? span - BENCH_RANGE_ROWS + 1 : 1;
    for (int i = 0; i < n; i++) /* the same draws as bench_run_txn, so the arms see the same keys */
        sl->idx[i] = span ? bench_rng_below(&sl->rng, span) : 0;
    if (n > 1) /* conflict ranges in key order, as a client's coalesced set would be */
        qsort(sl->idx, (size_t)n, sizeof *sl->idx, cmp_u64);
    if (wl == WL_RANGE100)
        sl->idx[1] = sl->idx[0] + BENCH_RANGE_ROWS;
}

static void start_txn(floor_run *r, slot *sl)
{
    sl->state = SLOT_GRV;
    sl->attempts = 0;
    sl->t0 = now_ns();
    queue(r, &sl->grv);
}

/* Takes the next ticket for a free slot; parks it while the warm-up is still running. */
static void next_txn(floor_run *r, slot *sl)
{
    if (r->next_ticket >= r->total) {
        sl->state = SLOT_IDLE;
        return;
    }
    sl->ticket = r->next_ticket++;
    draw_keys(r, sl);
    if (sl->ticket >= r->o->warmup && !r->window_open) {
        sl->state = SLOT_PARKED;
        return;
    }
    start_txn(r, sl);
}

static bool retryable(int e)
{
    return e == CFDB_ERR_TRANSACTION_TOO_OLD || e == CFDB_ERR_FUTURE_VERSION || e == CFDB_ERR_NOT_COMMITTED ||
           e == CFDB_ERR_COMMIT_UNKNOWN_RESULT || e == CFDB_ERR_PROCESS_BEHIND ||
           e == CFDB_ERR_GRV_PROXY_MEMORY_LIMIT_EXCEEDED || e == CFDB_ERR_COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED ||
           e == CFDB_ERR_TAG_THROTTLED;
}

static void finish_txn(floor_run *r, slot *sl, fsnap *wstart, fsnap *wend, int error)
{
    bool measured = sl->ticket >= r->o->warmup;
    bench_txn_counts *c = measured ? &r->counts_measured : &r->counts;
    if (error) {
        c->errors++;
        c->last_error = error;
    }
    if (measured) {
        r->lat[sl->ticket - r->o->warmup] = now_ns() - sl->t0;
        if (++r->done_measured == r->o->measured)
            take(r, wend);
    } else if (++r->done_warmup == r->o->warmup) {
        take(r, wstart);
        r->window_open = true;
        for (int s = 0; s < r->o->workers; s++)
            if (r->slots[s].state == SLOT_PARKED)
                start_txn(r, &r->slots[s]);
    }
    r->done++;
    next_txn(r, sl);
}

/* One reply for slot sl. Returns -1 on a protocol failure (r->err set). */
static int on_reply(floor_run *r, slot *sl, const uint8_t *msg, uint32_t len, fsnap *ws, fsnap *we)
{
    const int wl = r->o->wl;
    bool measured = sl->ticket >= r->o->warmup;
    bench_txn_counts *c = measured ? &r->counts_measured : &r->counts;
    cfdb_reply_error e = 0;
    int rc, error = 0;
    cfdb_arena_reset(&r->arena);
    if (sl->state == SLOT_GRV) {
        cfdb_get_read_version_reply g;
        memset(&g, 0, sizeof g);
        rc = fb_decode(&cfdb_msg_get_read_version_reply, msg, len, &g, &e, &r->arena);
        if (rc)
            goto bad;
        if (!e && wl == WL_GRV) {
            if (g.version <= 0)
                c->verify_failures++;
            finish_txn(r, sl, ws, we, 0);
            return 0;
        }
        if (!e) {
            tmpl *t = &sl->op;
            memcpy(t->frame + t->version_off, &g.version, 8);
            for (int k = 0; k < t->nkeys; k++)
                for (int p = 0; p < t->npatch[k]; p++)
                    put_digits(t->frame + t->patch[k][p], sl->idx[k]);
            cfdb_frame_seal(t->frame, t->token, t->msg_len, true);
            sl->state = SLOT_OP;
            queue(r, t);
            return 0;
        }
        error = e;
    } else if (wl == WL_GET100 || wl == WL_GET1000) {
        cfdb_get_value_reply v;
        memset(&v, 0, sizeof v);
        rc = fb_decode(&cfdb_msg_get_value_reply, msg, len, &v, &e, &r->arena);
        if (rc)
            goto bad;
        error = e ? e : v.error.present ? v.error.value.code : 0;
        if (!error && (!v.value.present || v.value.value.len != (uint32_t)r->vsize ||
                       memcmp(v.value.value.ptr, r->value, (size_t)r->vsize)))
            c->verify_failures++;
    } else if (wl == WL_RANGE100) {
        cfdb_get_key_values_reply v;
        memset(&v, 0, sizeof v);
        rc = fb_decode(&cfdb_msg_get_key_values_reply, msg, len, &v, &e, &r->arena);
        if (rc)
            goto bad;
        error = e ? e : v.error.present ? v.error.value.code : 0;
        if (!error) {
            bool ok = v.data.count == BENCH_RANGE_ROWS;
            for (uint32_t i = 0; ok && i < v.data.count; i++)
                ok = v.data.items[i].value.len == 100 && !memcmp(v.data.items[i].value.ptr, r->value, 100);
            if (!ok)
                c->verify_failures++;
        }
    } else {
        cfdb_commit_id v;
        memset(&v, 0, sizeof v);
        rc = fb_decode(&cfdb_msg_commit_id_reply, msg, len, &v, &e, &r->arena);
        if (rc)
            goto bad;
        error = e;
        if (!error && v.version <= 0)
            c->verify_failures++;
    }
    if (error && retryable(error) && ++sl->attempts < BENCH_MAX_RETRIES) {
        c->retries++;
        sl->state = SLOT_GRV;
        queue(r, &sl->grv);
        return 0;
    }
    finish_txn(r, sl, ws, we, error);
    return 0;
bad:
    snprintf(r->err, sizeof r->err, "floor: a reply does not decode (%d)", rc);
    return -1;
}

static int replay(floor_run *r, fsnap *ws, fsnap *we)
{
    fconn *c = &r->conn;
    for (int s = 0; s < r->o->workers; s++)
        next_txn(r, &r->slots[s]);
    if (r->o->warmup == 0 && !r->window_open) {
        take(r, ws);
        r->window_open = true;
        for (int s = 0; s < r->o->workers; s++)
            if (r->slots[s].state == SLOT_PARKED)
                start_txn(r, &r->slots[s]);
    }
    while (r->done < r->total) {
        if (r->niov) {
            int n = r->niov;
            r->niov = 0;
            if (write_all_iov(r, r->iov, n) < 0)
                return -1;
        }
        if (read_some(r) < 0)
            return -1;
        size_t off = 0;
        for (;;) {
            cfdb_frame fr;
            size_t used = 0;
            int rc = cfdb_frame_parse(c->in + off, c->in_len - off, true, &fr, &used);
            if (rc) {
                snprintf(r->err, sizeof r->err, "floor: bad frame (%d)", rc);
                return -1;
            }
            if (!used)
                break;
            off += used;
            c->frames_in++;
            uint64_t s = fr.token.second - r->reply_base.second;
            if (fr.token.first == r->reply_base.first && s < (uint64_t)r->o->workers) {
                slot *sl = &r->slots[s];
                if (sl->state != SLOT_GRV && sl->state != SLOT_OP)
                    continue;
                if (on_reply(r, sl, fr.msg, fr.msg_len, ws, we) < 0)
                    return -1;
            } else if (cfdb_uid_eq(fr.token, cfdb_well_known_token(CFDB_WLTOKEN_PING_PACKET))) {
                if (answer_ping(r, fr.msg, fr.msg_len) < 0)
                    return -1;
            }
        }
        if (off) {
            memmove(c->in, c->in + off, c->in_len - off);
            c->in_len -= off;
        }
    }
    return 0;
}

/* ---------- entry points ---------- */

static int floor_init(floor_run *r, const bench_floor_opts *o)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    r->conn.fd = -1;
    r->conn.in_cap = FLOOR_IN_CAP;
    r->conn.in = malloc(FLOOR_IN_CAP);
    r->arena_mem = malloc(FLOOR_DECODE_ARENA);
    if (!r->conn.in || !r->arena_mem) {
        snprintf(r->err, sizeof r->err, "floor: out of memory");
        return -1;
    }
    cfdb_arena_init_with(&r->arena, r->arena_mem, FLOOR_DECODE_ARENA);
    void *sym = dlsym(RTLD_DEFAULT, "cfdb_bench_malloc_stats");
    memcpy(&r->mstats, &sym, sizeof sym);
    return 0;
}

static void floor_free(floor_run *r)
{
    conn_close(r);
    if (r->slots)
        for (int s = 0; s < r->o->workers; s++) {
            free(r->slots[s].grv.frame);
            free(r->slots[s].op.frame);
        }
    free(r->slots);
    free(r->iov);
    free(r->lat);
    cfdb_arena_free(&r->arena);
    free(r->arena_mem);
    free(r->conn.in);
}

int bench_floor_probe(const char *cluster_file, char *why, size_t len)
{
    static const bench_floor_opts none = {0};
    floor_run r;
    int rc = floor_init(&r, &none);
    if (rc == 0)
        rc = discover(&r, cluster_file);
    if (rc < 0)
        snprintf(why, len, "%s", r.err);
    floor_free(&r);
    return rc;
}

static int fail(floor_run *r, const char *prefix)
{
    fprintf(stderr, "cfdb-bench worker: %s\n", r->err);
    char path[4096];
    snprintf(path, sizeof path, "%s.kv", prefix);
    FILE *f = fopen(path, "w");
    if (f) {
        kv_put_str(f, "status", "failed");
        kv_put_str(f, "failure", r->err);
        fclose(f);
    }
    floor_free(r);
    return 1;
}

int bench_floor_main(const bench_floor_opts *o)
{
    static floor_run r;
    if (floor_init(&r, o) < 0)
        return fail(&r, o->prefix);
    if (o->wl < 0 || o->wl >= WL_COUNT || o->workers < 1 || o->workers > FLOOR_MAX_SLOTS || !o->measured) {
        snprintf(r.err, sizeof r.err, "floor: bad workload, worker or measured count");
        return fail(&r, o->prefix);
    }
    r.vsize = (o->wl == WL_GET1000 || o->wl == WL_BATCHSET50X1000) ? 1000 : 100;
    r.value = bench_value(r.vsize);
    r.total = o->warmup + o->measured;
    r.lat = calloc(o->measured, sizeof *r.lat);
    r.slots = calloc((size_t)o->workers, sizeof *r.slots);
    r.iov = calloc((size_t)o->workers, sizeof *r.iov);
    if (!r.lat || !r.slots || !r.iov) {
        snprintf(r.err, sizeof r.err, "floor: out of memory");
        return fail(&r, o->prefix);
    }
    fsnap life0, ready, ws = {0}, we = {0}, life1;
    take(&r, &life0);
    if (discover(&r, o->cluster_file) < 0)
        return fail(&r, o->prefix);
    r.reply_base = (cfdb_uid){random_u64() & ~CFDB_TOKEN_STREAM_FLAG, random_u64() & ~UINT64_C(0xFFFF)};
    for (int s = 0; s < o->workers; s++) {
        /* the worker threads' seeds (worker.c), so each slot draws a thread's key sequence */
        bench_rng_seed(&r.slots[s].rng, o->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(s + 1)));
        if (build_templates(&r, s) < 0)
            return fail(&r, o->prefix);
    }
    take(&r, &ready);
    if (replay(&r, &ws, &we) < 0)
        return fail(&r, o->prefix);
    fsnap before_close;
    take(&r, &before_close);
    conn_close(&r);
    take(&r, &life1);

    char path[4096];
    snprintf(path, sizeof path, "%s.lat", o->prefix);
    FILE *lf = fopen(path, "w");
    if (!lf) {
        snprintf(r.err, sizeof r.err, "cannot write the latency file");
        return fail(&r, o->prefix);
    }
    for (uint64_t i = 0; i < o->measured; i++)
        fprintf(lf, "%llu\n", (unsigned long long)r.lat[i]);
    if (fclose(lf)) {
        snprintf(r.err, sizeof r.err, "cannot write the latency file");
        return fail(&r, o->prefix);
    }
    bench_txn_counts all = r.counts;
    all.retries += r.counts_measured.retries;
    all.errors += r.counts_measured.errors;
    all.verify_failures += r.counts_measured.verify_failures;
    if (r.counts_measured.last_error)
        all.last_error = r.counts_measured.last_error;
    snprintf(path, sizeof path, "%s.kv", o->prefix);
    FILE *f = fopen(path, "w");
    if (!f) {
        floor_free(&r);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    kv_put_str(f, "status", "ok");
    kv_put_str(f, "mode", "floor");
    kv_put_str(f, "lib", "floor");
    kv_put_int(f, "pid", (int64_t)getpid());
    kv_put_str(f, "workload", bench_workload_name(o->wl));
    kv_put_int(f, "workers", o->workers);
    kv_put_int(f, "warmup", (int64_t)o->warmup);
    kv_put_int(f, "measured", (int64_t)o->measured);
    kv_put_int(f, "keys", (int64_t)o->keys);
    char sb[32];
    snprintf(sb, sizeof sb, "%llu", (unsigned long long)o->seed);
    kv_put_str(f, "seed", sb);
    kv_put_int(f, "retries", (int64_t)all.retries);
    kv_put_int(f, "errors", (int64_t)all.errors);
    kv_put_int(f, "retries_measured", (int64_t)r.counts_measured.retries);
    kv_put_int(f, "errors_measured", (int64_t)r.counts_measured.errors);
    kv_put_int(f, "verify_failures", (int64_t)all.verify_failures);
    kv_put_int(f, "last_error", all.last_error);
    kv_put_num(f, "window_wall_ns", (double)(we.wall_ns - ws.wall_ns));
    kv_put_num(f, "window_cpu_us", we.cpu_us - ws.cpu_us);
    kv_put_int(f, "window_vcsw", we.vcsw - ws.vcsw);
    kv_put_int(f, "window_ivcsw", we.ivcsw - ws.ivcsw);
    /* system calls of the replay: one writev and one recv per loop iteration at most */
    kv_put_int(f, "floor_writes_window", (int64_t)(we.writes - ws.writes));
    kv_put_int(f, "floor_reads_window", (int64_t)(we.reads - ws.reads));
    kv_put_int(f, "floor_shards", r.tgt.shards);
    if (r.mstats) {
        kv_put_int(f, "allocs_window", we.allocs - ws.allocs);
        kv_put_int(f, "alloc_bytes_window", we.bytes - ws.bytes);
    }
    kv_put_num(f, "load_ms", 0);
    kv_put_num(f, "setup_ms", (double)(ready.wall_ns - life0.wall_ns) / 1e6);
    kv_put_num(f, "close_ms", (double)(life1.wall_ns - before_close.wall_ns) / 1e6);
    kv_put_num(f, "lifecycle_wall_ns", (double)(life1.wall_ns - life0.wall_ns));
    kv_put_num(f, "lifecycle_cpu_us", life1.cpu_us - life0.cpu_us);
    if (r.mstats) {
        kv_put_int(f, "allocs_lifecycle", life1.allocs - life0.allocs);
        kv_put_int(f, "alloc_bytes_lifecycle", life1.bytes - life0.bytes);
    }
    kv_put_int(f, "malloc_counted", r.mstats ? 1 : 0);
    kv_put_int(f, "peak_rss_kb", ru.ru_maxrss);
    cpu_set_t allowed;
    kv_put_int(f, "cpus_allowed", sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : -1);
    kv_put_int(f, "stop_network_error", 0);
    kv_put_int(f, "run_network_error", 0);
    int rc = fclose(f) ? 1 : 0;
    floor_free(&r);
    return rc;
}
