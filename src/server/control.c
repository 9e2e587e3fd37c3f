/* Fault injection and administration: a line-based command socket on loopback.
 * One command per line, one answer line back ("ok ..." or "err ..."). See `help`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcp.h"
#include "control.h"
#include "coordinator.h"
#include "storage_server.h"
#include "system_keys.h"
#include "wal.h"

typedef struct srv_control_client {
    srv *s;
    int fd;
    char in[4096];
    size_t in_len;
    /* a `snapshot` command waiting for a snapshot at or after this version (0: none); the
     * client's later lines wait in `in` until it is answered */
    int64_t snapshot_want;
    bool in_lines; /* client_lines is running for it (a snapshot may end inside a command) */
    struct srv_control_client *next;
} srv_control_client;

static const char help_text[] =
    "ok commands: ping | status | shards | drop [LISTENER] | delay MS | fail-commits N [applied|unapplied] | "
    "future-version N | new-proxies | split KEY | move KEY SS | unreachable LISTENER on|off | restart | "
    "snapshot [start|hold on|off|status] | shutdown | forward CONNECTION_STRING|-   (KEY: text with \\xNN escapes; LISTENER: index, coordinator, grv, commit, storageN)";

/* Parses "\xNN" escapes into out; returns the length. */
static size_t unescape(const char *in, uint8_t *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; in[i] && o < cap; i++) {
        if (in[i] == '\\' && in[i + 1] == 'x' && in[i + 2] && in[i + 3]) {
            char h[3] = { in[i + 2], in[i + 3], 0 };
            out[o++] = (uint8_t)strtoul(h, NULL, 16);
            i += 3;
        } else {
            out[o++] = (uint8_t)in[i];
        }
    }
    return o;
}

/* The listener index `arg` names (a role or a number); false when there is none. */
static bool parse_listener(srv *s, const char *arg, int *out)
{
    int l;
    if (!arg)
        return false;
    if (strcmp(arg, "coordinator") == 0) {
        l = s->coord_listener;
    } else if (strcmp(arg, "grv") == 0) {
        l = s->grv_listener;
    } else if (strcmp(arg, "commit") == 0) {
        l = s->commit_listener;
    } else if (strncmp(arg, "storage", 7) == 0) {
        int i = atoi(arg + 7);
        if (i < 0 || i >= s->nstorage)
            return false;
        l = s->storage[i].listener;
    } else {
        char *end;
        long v = strtol(arg, &end, 10);
        if (*end || v < 0 || v >= s->nlisteners)
            return false;
        l = (int)v;
    }
    if (l < 0)
        return false;
    *out = l;
    return true;
}

static void shards_text(srv *s, char *out, size_t cap)
{
    size_t o = (size_t)snprintf(out, cap, "ok %zu shards:", s->shards.count);
    for (size_t i = 0; i < s->shards.count && o + 8 < cap; i++) {
        char k[256];
        srv_bytes_repr(srv_shard_begin(&s->shards, i), k, sizeof k);
        o += (size_t)snprintf(out + o, cap - o, " [%s]->%d", k, s->shards.shards[i].owner);
    }
}

void control_execute(srv *s, const char *line, char *out, size_t cap)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", line);
    char *save = NULL;
    char *cmd = strtok_r(buf, " \t\r\n", &save);
    char *a1 = strtok_r(NULL, " \t\r\n", &save);
    char *a2 = strtok_r(NULL, " \t\r\n", &save);
    if (!cmd) {
        snprintf(out, cap, "err empty command");
        return;
    }
    if (strcmp(cmd, "help") == 0) {
        snprintf(out, cap, "%s", help_text);
    } else if (strcmp(cmd, "ping") == 0) {
        snprintf(out, cap, "ok pong");
    } else if (strcmp(cmd, "status") == 0) {
        int n = 0;
        for (srv_conn *c = s->conns.next; c != &s->conns; c = c->next)
            n += c->open;
        snprintf(out, cap,
                 "ok version=%lld connections=%d shards=%zu storage_servers=%d commits=%llu conflicts=%llu "
                 "grv_requests=%llu grv_transactions=%llu reads=%llu mapped_requests=%llu health_requests=%llu "
                 "health_detailed=%llu config_requests=%llu config_hash_adopted=%llu "
                 "commit_batches=%llu commit_batch_txns=%llu commit_batch_mean=%.2f commit_batch_max=%llu "
                 "grv_batches=%llu grv_batch_requests=%llu grv_batch_mean=%.2f grv_batch_max=%llu read_rows=%llu",
                 (long long)cfdb_mvcc_latest_version(s->store), n, s->shards.count, s->nstorage,
                 (unsigned long long)s->n_commits, (unsigned long long)s->n_conflicts,
                 (unsigned long long)s->n_grv_requests, (unsigned long long)s->n_grvs,
                 (unsigned long long)s->n_reads, (unsigned long long)s->n_mapped_requests,
                 (unsigned long long)s->n_health_requests, (unsigned long long)s->n_health_detailed,
                 (unsigned long long)s->n_config_requests, (unsigned long long)s->n_config_adopted,
                 (unsigned long long)s->n_commit_batches, (unsigned long long)s->n_commit_batched,
                 s->n_commit_batches ? (double)s->n_commit_batched / (double)s->n_commit_batches : 0.0,
                 (unsigned long long)s->max_commit_batch, (unsigned long long)s->n_grv_batches,
                 (unsigned long long)s->n_grv_batched,
                 s->n_grv_batches ? (double)s->n_grv_batched / (double)s->n_grv_batches : 0.0,
                 (unsigned long long)s->max_grv_batch, (unsigned long long)s->n_read_rows);
    } else if (strcmp(cmd, "shards") == 0) {
        shards_text(s, out, cap);
    } else if (strcmp(cmd, "drop") == 0) {
        int l = -1; /* no listener named: every connection */
        if (a1 && !parse_listener(s, a1, &l)) {
            snprintf(out, cap, "err no such listener");
            return;
        }
        srv_drop_connections(s, l);
        snprintf(out, cap, "ok dropped");
    } else if (strcmp(cmd, "delay") == 0 && a1) {
        double ms = strtod(a1, NULL);   /* fractions allowed: "delay 0.5" */
        s->faults.delay_ns = ms > 0 ? (uint64_t)(ms * 1e6) : 0;
        snprintf(out, cap, "ok delay %s ms", a1);
    } else if (strcmp(cmd, "fail-commits") == 0 && a1) {
        s->faults.fail_commits = atoi(a1);
        s->faults.fail_commits_applied = a2 && strcmp(a2, "applied") == 0;
        snprintf(out, cap, "ok next %d commits fail with commit_unknown_result (%s)", s->faults.fail_commits,
                 s->faults.fail_commits_applied ? "applied" : "not applied");
    } else if (strcmp(cmd, "future-version") == 0 && a1) {
        s->faults.future_version_reads = atoi(a1);
        snprintf(out, cap, "ok next %d storage reads answer future_version", s->faults.future_version_reads);
    } else if (strcmp(cmd, "forward") == 0 && a1) {
        /* these coordinators now send clients to other ones ("-": stop forwarding) */
        snprintf(s->forward, sizeof s->forward, "%s", strcmp(a1, "-") == 0 ? "" : a1);
        coord_client_info_changed(s);
        srv_write_system_keys(s); /* \xff/coordinators: the new connection string */
        snprintf(out, cap, "ok forward %s", s->forward[0] ? s->forward : "off");
    } else if (strcmp(cmd, "new-proxies") == 0) {
        coord_new_generation(s);
        snprintf(out, cap, "ok new proxy generation");
    } else if ((strcmp(cmd, "split") == 0 && a1) || (strcmp(cmd, "move") == 0 && a1 && a2)) {
        uint8_t key[1024];
        size_t kl = unescape(a1, key, sizeof key);
        cfdb_bytes k = cfdb_bytes_make(key, kl);
        if (cmd[0] == 's') {
            if (srv_shard_map_split(&s->shards, k)) {
                snprintf(out, cap, "err out of memory");
                return;
            }
        } else {
            int ss = atoi(a2);
            if (ss < 0 || ss >= s->nstorage) {
                snprintf(out, cap, "err no such storage server");
                return;
            }
            s->shards.shards[srv_shard_map_find(&s->shards, k)].owner = ss;
        }
        srv_write_system_keys(s);
        ss_check_watches(s);
        shards_text(s, out, cap);
    } else if (strcmp(cmd, "unreachable") == 0 && a1) {
        int l = -1;
        bool on = !a2 || strcmp(a2, "off") != 0;
        if (!parse_listener(s, a1, &l) || l == s->coord_listener) {
            snprintf(out, cap, "err no such listener (the coordinator cannot be made unreachable)");
            return;
        }
        if (srv_set_unreachable(s, l, on)) {
            snprintf(out, cap, "err cannot change listener %d", l);
            return;
        }
        snprintf(out, cap, "ok listener %d (port %u) %s", l, s->listeners[l].port, on ? "unreachable" : "reachable");
    } else if (strcmp(cmd, "restart") == 0) {
        /* as after a process restart: connections gone, new proxies, no MVCC history */
        srv_drop_connections(s, -1);
        coord_new_generation(s);
        cfdb_mvcc_forget_before(s->store, cfdb_mvcc_latest_version(s->store));
        snprintf(out, cap, "ok restarted");
    } else if (strcmp(cmd, "snapshot") == 0) {
        /* snapshot: write one now and wait; start: in the background; hold on|off: a
         * background snapshot pauses between chunks (tests); status: what it is doing */
        srv_wal_health h;
        if (!s->wal) {
            snprintf(out, cap, "err not durable");
        } else if (!a1) {
            /* the embedded API's synchronous form (cfdb_server_control); the socket's
             * `snapshot` waits in the background instead (snapshot_deferred) */
            int rc = srv_wal_snapshot(s);
            if (rc)
                snprintf(out, cap, "err snapshot failed: %d", rc);
            else
                snprintf(out, cap, "ok snapshot written");
        } else if (strcmp(a1, "start") == 0) {
            int rc = srv_wal_snapshot_start(s);
            if (rc)
                snprintf(out, cap, "err snapshot failed to start: %d", rc);
            else
                snprintf(out, cap, "ok snapshot started");
        } else if (strcmp(a1, "hold") == 0 && a2 && (strcmp(a2, "on") == 0 || strcmp(a2, "off") == 0)) {
            srv_wal_snapshot_hold(s, strcmp(a2, "on") == 0);
            snprintf(out, cap, "ok hold %s", a2);
        } else if (strcmp(a1, "status") == 0) {
            srv_wal_get_health(s, &h);
            snprintf(out, cap, "ok %s version=%lld keys=%llu failures=%u log_bytes=%llu blocked=%d",
                     h.snapshot_running ? "running" : "idle", (long long)h.snapshot_version,
                     (unsigned long long)h.snapshot_keys, h.snapshot_failures, (unsigned long long)h.log_bytes,
                     h.blocked ? 1 : 0);
        } else {
            snprintf(out, cap, "err usage: snapshot [start | hold on|off | status]");
        }
    } else if (strcmp(cmd, "shutdown") == 0) {
        cfdb_loop_stop(s->loop);
        snprintf(out, cap, "ok shutting down");
    } else {
        snprintf(out, cap, "err unknown command (try help)");
    }
}

/* ---- socket ---- */

static void client_free(srv *s, srv_control_client *cl)
{
    for (srv_control_client **pp = &s->controls; *pp; pp = &(*pp)->next)
        if (*pp == cl) {
            *pp = cl->next;
            break;
        }
    cfdb_loop_remove_fd(s->loop, cl->fd);
    close(cl->fd);
    free(cl);
}

static void client_answer(srv_control_client *cl, const char *line, const char *answer)
{
    srv_log(cl->s, "control: %s -> %.200s", line, answer);
    char out[4096];
    size_t ol = (size_t)snprintf(out, sizeof out - 1, "%s", answer);
    if (ol > sizeof out - 2)
        ol = sizeof out - 2;
    out[ol++] = '\n';
    /* answers are short; a blocking-ish loop is fine on loopback */
    size_t done = 0;
    for (int tries = 0; done < ol && tries < 1000; tries++) {
        size_t w;
        if (cfdb_tcp_write(cl->fd, out + done, ol - done, &w))
            break;
        done += w;
    }
}

/* `snapshot` on the socket: a background snapshot (snapshot.c), answered when one taken at
 * or after this moment is written or fails, while the loop goes on serving everyone.
 * Returns false when it answered at once. */
static bool snapshot_deferred(srv *s, srv_control_client *cl, const char *line)
{
    if (!s->wal) {
        client_answer(cl, line, "err not durable");
        return false;
    }
    int64_t want = cfdb_mvcc_latest_version(s->store);
    int rc = s->wal->job ? 0 : srv_wal_snapshot_start(s);
    if (rc) {
        char out[96];
        snprintf(out, sizeof out, "err snapshot failed: %d", rc);
        client_answer(cl, line, out);
        return false;
    }
    cl->snapshot_want = want > 0 ? want : 1;
    return true;
}

static void client_lines(srv_control_client *cl);

static void snapshot_ended(srv *s, int rc, int64_t version)
{
    bool again = false;
    for (srv_control_client *cl = s->controls; cl; cl = cl->next) {
        if (!cl->snapshot_want)
            continue;
        if (rc || version >= cl->snapshot_want) {
            char out[96];
            if (rc)
                snprintf(out, sizeof out, "err snapshot failed: %d", rc);
            else
                snprintf(out, sizeof out, "ok snapshot written at version %lld", (long long)version);
            cl->snapshot_want = 0;
            client_answer(cl, "snapshot", out);
        } else {
            again = true; /* the one that ended had started before the command */
        }
    }
    int src = again ? srv_wal_snapshot_start(s) : 0;
    if (src) {
        char out[96];
        snprintf(out, sizeof out, "err snapshot failed: %d", src);
        for (srv_control_client *cl = s->controls; cl; cl = cl->next)
            if (cl->snapshot_want) {
                cl->snapshot_want = 0;
                client_answer(cl, "snapshot", out);
            }
    }
    /* answered clients go on with the lines they sent meanwhile (this may free some) */
    for (srv_control_client *cl = s->controls, *nx; cl; cl = nx) {
        nx = cl->next;
        if (!cl->snapshot_want && cl->in_len && !cl->in_lines)
            client_lines(cl);
    }
}

/* Runs the complete lines in cl->in, stopping at a `snapshot` that has to wait. */
static void client_lines(srv_control_client *cl)
{
    srv *s = cl->s;
    char *nl;
    cl->in_lines = true;
    while (!cl->snapshot_want && (nl = memchr(cl->in, '\n', cl->in_len)) != NULL) {
        *nl = 0;
        char *line = cl->in;
        while (*line == ' ' || *line == '\t')
            line++;
        size_t ll = strlen(line);
        while (ll && (line[ll - 1] == ' ' || line[ll - 1] == '\r' || line[ll - 1] == '\t'))
            line[--ll] = 0;
        if (strcmp(line, "snapshot") == 0) {
            snapshot_deferred(s, cl, line);
        } else {
            char out[4096];
            control_execute(s, cl->in, out, sizeof out - 2);
            client_answer(cl, cl->in, out);
        }
        size_t used = (size_t)(nl - cl->in) + 1;
        memmove(cl->in, cl->in + used, cl->in_len - used);
        cl->in_len -= used;
    }
    cl->in_lines = false;
}

static void client_io(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    srv_control_client *cl = arg;
    srv *s = cl->s;
    (void)loop;
    (void)events;
    size_t n;
    if (cl->in_len >= sizeof(cl->in) - 1) { /* waiting with a full buffer: read later */
        client_free(s, cl);
        return;
    }
    if (cfdb_tcp_read(fd, cl->in + cl->in_len, sizeof(cl->in) - 1 - cl->in_len, &n)) {
        client_free(s, cl);
        return;
    }
    if (n == 0)
        return;
    cl->in_len += n;
    cl->in[cl->in_len] = 0;
    client_lines(cl);
    if (cl->in_len >= sizeof(cl->in) - 1)
        client_free(s, cl);
}

static void control_accept(cfdb_loop *loop, int fd, unsigned events, void *arg)
{
    srv *s = arg;
    (void)events;
    for (;;) {
        int cfd;
        if (cfdb_tcp_accept(fd, &cfd)) {
            /* Out of descriptors: the waiting connection would keep the listener readable and
             * the loop spinning. Give up the server's spare descriptor to accept and close it
             * (the peer sees the connection closed), then take the spare back. */
            if ((errno == EMFILE || errno == ENFILE) && s->spare_fd >= 0) {
                close(s->spare_fd);
                int refused = -1;
                cfdb_tcp_accept(fd, &refused);
                if (refused >= 0)
                    close(refused);
                s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (refused >= 0)
                    continue;
            }
            return;
        }
        if (cfd < 0)
            return;
        srv_control_client *cl = calloc(1, sizeof(*cl));
        if (!cl) {
            close(cfd);
            continue;
        }
        cl->s = s;
        cl->fd = cfd;
        if (cfdb_loop_add_fd(loop, cfd, CFDB_EV_READ, client_io, cl)) {
            close(cfd);
            free(cl);
            continue;
        }
        cl->next = s->controls;
        s->controls = cl;
    }
}

int control_start(srv *s, uint16_t port)
{
    uint16_t bound = 0;
    int fd;
    int rc = cfdb_tcp_listen("127.0.0.1", port, 16, &bound, &fd);
    if (rc) {
        fprintf(stderr, "cfdb-server: cannot listen for control on 127.0.0.1:%u: %s\n", port, strerror(errno));
        return rc;
    }
    rc = cfdb_loop_add_fd(s->loop, fd, CFDB_EV_READ, control_accept, s);
    if (rc) {
        close(fd);
        return rc;
    }
    s->control_fd = fd;
    s->control_port = bound;
    if (s->wal)
        s->wal->on_snapshot_end = snapshot_ended;
    return 0;
}

void control_stop(srv *s)
{
    if (s->wal)
        s->wal->on_snapshot_end = NULL;
    while (s->controls)
        client_free(s, s->controls);
    if (s->control_fd >= 0) {
        cfdb_loop_remove_fd(s->loop, s->control_fd);
        close(s->control_fd);
        s->control_fd = -1;
    }
}
