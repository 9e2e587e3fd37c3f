/* cfdb-server command line. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event_loop.h"
#include "tcp.h"
#include "server.h"

static const char usage[] =
    "usage: cfdb-server [--listen [IP:]PORT] --cluster-file PATH [options]\n"
    "       cfdb-server --control PORT COMMAND [ARGS...]\n"
    "A FoundationDB 7.3 protocol-compatible dev server: coordinator, cluster controller,\n"
    "GRV and commit proxies, resolver and storage servers in one process.\n"
    "  --listen [IP:]PORT       listen address (default 127.0.0.1:4500; port 0 = any)\n"
    "  --cluster-file PATH      write the cluster file (desc:id@IP:PORT) once listening\n"
    "  --description NAME       cluster file description (default cfdb)\n"
    "  --cluster-id ID          cluster file id (default random)\n"
    "  --datadir DIR            durable storage (WAL + snapshots); default in memory\n"
    "  --recover-truncate       start even though the WAL is corrupt mid-file, discarding the\n"
    "                           records from the corruption on (kept as *.discarded* files)\n"
    "  --storage-servers N      storage servers (default 3)\n"
    "  --shards K1,K2,...       shard boundaries (\\xNN escapes), owners round robin\n"
    "  --coordinator PORT       one more coordination server of this cluster on PORT (0: free;\n"
    "                           repeatable, up to 7): the coordinators can move among them\n"
    "  --separate-ports         each role (grv, commit, each storage server) on its own port\n"
    "  --control-port PORT      line-based control socket on 127.0.0.1 (0 = any)\n"
    "  --seed N                 deterministic tokens and ids\n"
    "  --tenant-mode MODE       disabled|optional|required: \\xff/conf/tenant_mode at start\n"
    "  --quiet                  no log lines\n"
    "  --trace-frames FILE      append every received frame as a JSON line (cfdb-decode --jsonl)\n"
    "  --tls-cert PATH          serve TLS only (PEM chain); addresses and the cluster file get :tls\n"
    "  --tls-key PATH           the certificate's private key (PEM)\n"
    "  --tls-ca PATH            CA bundle for verifying clients' certificates\n"
    "  --tls-password PW        password of an encrypted key\n"
    "  --tls-verify-peers RULES FoundationDB's verify-peers rules for clients (default Check.Valid=1)\n"
    "                           (cfdb-certs DIR makes a throwaway CA and certificates to try it)\n"
    "  --max-connections N      connections at once (default: descriptor limit - 32); more are\n"
    "                           accepted and closed at once\n"
    "  --memory-budget BYTES    input and output buffers across connections (default 512 MiB)\n"
    "  --conn-out-budget BYTES  replies waiting for one client before its requests are not read\n"
    "                           (default 8 MiB)\n"
    "  --knob_connection_monitor_idle_timeout S, --knob_connection_monitor_incoming_idle_multiplier X,\n"
    "  --knob_connection_monitor_timeout S\n"
    "                           FlowTransport's knobs (180, 1.2, 2): a client silent for\n"
    "                           idle_timeout x multiplier is pinged and closed without an answer\n"
    "                           within timeout; a new connection has timeout to say ConnectPacket\n"
    "  --help                   this text\n"
    "Control commands (cfdb-server --control PORT help): ping, status, shards, drop,\n"
    "delay MS, fail-commits N [applied|unapplied], future-version N, new-proxies,\n"
    "split KEY, move KEY SS, unreachable LISTENER on|off, restart, snapshot [start|hold on|off|status],\nshutdown.\n";

static cfdb_loop *g_loop;

static void on_signal(int sig)
{
    (void)sig;
    if (g_loop)
        cfdb_loop_stop(g_loop);
}

static size_t unescape(const char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '\\' && i + 3 < n && in[i + 1] == 'x') {
            char h[3] = { in[i + 2], in[i + 3], 0 };
            out[o++] = (char)strtoul(h, NULL, 16);
            i += 3;
        } else {
            out[o++] = in[i];
        }
    }
    return o;
}

static int control_client(const char *port_s, int argc, char **argv)
{
    char line[2048];
    size_t o = 0;
    for (int i = 0; i < argc; i++)
        o += (size_t)snprintf(line + o, sizeof line - o, "%s%s", i ? " " : "", argv[i]);
    if (o + 2 >= sizeof line)
        return 2;
    line[o++] = '\n';
    int fd;
    if (cfdb_tcp_connect("127.0.0.1", (uint16_t)atoi(port_s), &fd)) {
        fprintf(stderr, "cfdb-server: cannot connect to control port %s: %s\n", port_s, strerror(errno));
        return 1;
    }
    /* the socket is non-blocking: poll the connect, the write and the answer */
    bool connected = false;
    int rc = 0;
    for (int i = 0; i < 5000 && !(rc = cfdb_tcp_connect_result(fd, &connected)) && !connected; i++)
        usleep(1000);
    if (rc || !connected) {
        fprintf(stderr, "cfdb-server: cannot connect to control port %s\n", port_s);
        close(fd);
        return 1;
    }
    size_t done = 0;
    for (int i = 0; done < o && i < 5000; i++) {
        size_t w;
        if (cfdb_tcp_write(fd, line + done, o - done, &w))
            break;
        done += w;
        if (w == 0)
            usleep(1000);
    }
    char ans[8192];
    size_t got = 0;
    /* up to ten minutes: `snapshot` answers once its snapshot is written */
    for (int i = 0; i < 600000 && got < sizeof ans - 1; i++) {
        size_t r;
        if (cfdb_tcp_read(fd, ans + got, sizeof ans - 1 - got, &r))
            break; /* closed */
        got += r;
        if (memchr(ans, '\n', got))
            break;
        if (r == 0)
            usleep(1000);
    }
    close(fd);
    ans[got] = 0;
    fputs(ans, stdout);
    return strncmp(ans, "ok", 2) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    static char ipbuf[64];
    static char keys[CFDB_SERVER_MAX_BOUNDARIES][256];
    cfg.port = 4500;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG                                                      \
    do {                                                              \
        if (!v) {                                                     \
            fprintf(stderr, "cfdb-server: %s needs an argument\n", a); \
            return 2;                                                 \
        }                                                             \
        i++;                                                          \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--control")) {
            NEED_ARG;
            if (i + 1 >= argc) {
                fprintf(stderr, "cfdb-server: --control PORT needs a command\n");
                return 2;
            }
            return control_client(v, argc - i - 1, argv + i + 1);
        } else if (!strcmp(a, "--listen")) {
            NEED_ARG;
            const char *colon = strrchr(v, ':');
            if (colon) {
                size_t n = (size_t)(colon - v);
                if (n >= sizeof ipbuf)
                    return 2;
                memcpy(ipbuf, v, n);
                ipbuf[n] = 0;
                cfg.listen_ip = ipbuf;
                cfg.port = (uint16_t)atoi(colon + 1);
            } else {
                cfg.port = (uint16_t)atoi(v);
            }
        } else if (!strcmp(a, "--cluster-file")) {
            NEED_ARG;
            cfg.cluster_file = v;
        } else if (!strcmp(a, "--description")) {
            NEED_ARG;
            cfg.description = v;
        } else if (!strcmp(a, "--cluster-id")) {
            NEED_ARG;
            cfg.cluster_id = v;
        } else if (!strcmp(a, "--datadir")) {
            NEED_ARG;
            cfg.datadir = v;
        } else if (!strcmp(a, "--storage-servers")) {
            NEED_ARG;
            cfg.storage_servers = atoi(v);
            if (cfg.storage_servers < 1 || cfg.storage_servers > 32) {
                fprintf(stderr, "cfdb-server: --storage-servers must be 1..32\n");
                return 2;
            }
        } else if (!strcmp(a, "--shards")) {
            NEED_ARG;
            cfg.custom_boundaries = true;
            const char *p = v;
            while (*p && cfg.nboundaries < CFDB_SERVER_MAX_BOUNDARIES) {
                const char *e = strchr(p, ',');
                size_t n = e ? (size_t)(e - p) : strlen(p);
                if (n > 0 && n < sizeof keys[0]) {
                    size_t kl = unescape(p, n, keys[cfg.nboundaries]);
                    cfg.boundaries[cfg.nboundaries] = keys[cfg.nboundaries];
                    cfg.boundary_lens[cfg.nboundaries] = (unsigned)kl;
                    cfg.nboundaries++;
                }
                p += n + (e ? 1 : 0);
            }
        } else if (!strcmp(a, "--coordinator")) {
            NEED_ARG;
            if (cfg.n_extra_coordinators == CFDB_SERVER_MAX_EXTRA_COORDINATORS) {
                fprintf(stderr, "cfdb-server: at most %d --coordinator\n", CFDB_SERVER_MAX_EXTRA_COORDINATORS);
                return 2;
            }
            cfg.extra_coordinator_ports[cfg.n_extra_coordinators++] = (uint16_t)atoi(v);
        } else if (!strcmp(a, "--separate-ports")) {
            cfg.separate_ports = true;
        } else if (!strcmp(a, "--control-port")) {
            NEED_ARG;
            cfg.control_port = atoi(v);
        } else if (!strcmp(a, "--seed")) {
            NEED_ARG;
            cfg.seed = strtoull(v, NULL, 0);
        } else if (!strcmp(a, "--quiet")) {
            cfg.quiet = true;
        } else if (!strcmp(a, "--recover-truncate")) {
            cfg.recover_truncate = true;
        } else if (!strcmp(a, "--trace-frames")) {
            NEED_ARG;
            cfg.trace_frames = v;
        } else if (!strcmp(a, "--tls-cert")) {
            NEED_ARG;
            cfg.tls_cert = v;
        } else if (!strcmp(a, "--tls-key")) {
            NEED_ARG;
            cfg.tls_key = v;
        } else if (!strcmp(a, "--tls-ca")) {
            NEED_ARG;
            cfg.tls_ca = v;
        } else if (!strcmp(a, "--tls-password")) {
            NEED_ARG;
            cfg.tls_password = v;
        } else if (!strcmp(a, "--tls-verify-peers")) {
            NEED_ARG;
            cfg.tls_verify_peers = v;
        } else if (!strcmp(a, "--max-connections")) {
            NEED_ARG;
            cfg.max_connections = atoi(v);
            if (cfg.max_connections < 1) {
                fprintf(stderr, "cfdb-server: --max-connections must be at least 1\n");
                return 2;
            }
        } else if (!strcmp(a, "--tenant-mode")) {
            NEED_ARG;
            if (!strcmp(v, "disabled"))
                cfg.tenant_mode = 0;
            else if (!strcmp(v, "optional") || !strcmp(v, "optional_experimental"))
                cfg.tenant_mode = 1;
            else if (!strcmp(v, "required") || !strcmp(v, "required_experimental"))
                cfg.tenant_mode = 2;
            else {
                fprintf(stderr, "cfdb-server: --tenant-mode takes disabled, optional or required\n");
                return 2;
            }
        } else if (!strcmp(a, "--memory-budget") || !strcmp(a, "--conn-out-budget")) {
            NEED_ARG;
            char *end;
            unsigned long long n = strtoull(v, &end, 10);
            if (*end || n < 65536) {
                fprintf(stderr, "cfdb-server: %s needs a number of bytes (at least 65536)\n", a);
                return 2;
            }
            if (a[2] == 'm')
                cfg.memory_budget = n;
            else
                cfg.conn_out_budget = n;
        } else if (!strncmp(a, "--knob_connection_monitor_", 26) || !strncmp(a, "--knob-connection-monitor-", 26)) {
            NEED_ARG;
            char *end;
            double x = strtod(v, &end);
            const char *k = a + 26;
            if (*end || !(x > 0)) {
                fprintf(stderr, "cfdb-server: %s needs a positive number\n", a);
                return 2;
            }
            if (!strcmp(k, "idle_timeout") || !strcmp(k, "idle-timeout"))
                cfg.connection_monitor_idle_timeout = x;
            else if (!strcmp(k, "incoming_idle_multiplier") || !strcmp(k, "incoming-idle-multiplier"))
                cfg.connection_monitor_incoming_idle_multiplier = x;
            else if (!strcmp(k, "timeout"))
                cfg.connection_monitor_timeout = x;
            else {
                fprintf(stderr, "cfdb-server: unknown knob %s\n", a);
                return 2;
            }
        } else {
            fprintf(stderr, "cfdb-server: unknown option %s (try --help)\n", a);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    g_loop = cfdb_loop_create();
    if (!g_loop) {
        perror("cfdb-server: event loop");
        return 1;
    }
    cfdb_server *s = cfdb_server_create(g_loop, &cfg);
    if (!s) {
        cfdb_loop_destroy(g_loop);
        return 1;
    }
    if (cfdb_server_control_port(s))
        fprintf(stderr, "cfdb-server: control port %u\n", cfdb_server_control_port(s));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = cfdb_loop_run(g_loop);
    cfdb_server_destroy(s);
    cfdb_loop_destroy(g_loop);
    return rc ? 1 : 0;
}
