/* See api_helpers.h. */
#define _GNU_SOURCE
#include "api_helpers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CFDB_SERVER_PATH
#error "CFDB_SERVER_PATH must name the cfdb-server binary"
#endif

api_env g_env;

double api_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int file_nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

static int parse_control_port(const char *log)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    char line[512];
    int port = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "control port ");
        if (p)
            port = atoi(p + strlen("control port "));
    }
    fclose(f);
    return port;
}

int api_server_start(api_server *s, const char *const *extra_args)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/cfdb-api-test-XXXXXX");
    if (!mkdtemp(s->dir))
        return -1;
    snprintf(s->cluster_file, sizeof s->cluster_file, "%s/fdb.cluster", s->dir);
    snprintf(s->log_file, sizeof s->log_file, "%s/server.log", s->dir);
    const char *argv[64];
    int n = 0;
    argv[n++] = CFDB_SERVER_PATH;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--cluster-file";
    argv[n++] = s->cluster_file;
    argv[n++] = "--control-port";
    argv[n++] = "0";
    argv[n++] = "--quiet";
    for (int i = 0; extra_args && extra_args[i] && n < 62; i++)
        argv[n++] = extra_args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* the server goes away with the test process, even when a test hangs and is killed */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(s->log_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; i < 1000; i++) { /* up to 10 s */
        if (file_nonempty(s->cluster_file)) {
            usleep(20000); /* let the write finish */
            for (int j = 0; j < 100 && !s->control_port; j++) {
                s->control_port = parse_control_port(s->log_file);
                if (!s->control_port)
                    usleep(10000);
            }
            return 0;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "cfdb-server exited early (see %s)\n", s->log_file);
            s->pid = 0;
            return -1;
        }
        usleep(10000);
    }
    api_server_stop(s);
    return -1;
}

void api_server_stop(api_server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int st;
        for (int i = 0; i < 300; i++) {
            if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
                s->pid = 0;
                break;
            }
            usleep(10000);
        }
        if (s->pid > 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &st, 0);
            s->pid = 0;
        }
    }
    if (s->dir[0]) {
        unlink(s->cluster_file);
        unlink(s->log_file);
        rmdir(s->dir);
        s->dir[0] = 0;
    }
}

int api_server_control(const api_server *s, const char *cmd, char *ans, size_t cap)
{
    if (!s->control_port)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)s->control_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = { 5, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    char line[1024];
    int n = snprintf(line, sizeof line, "%s\n", cmd);
    if (write(fd, line, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    char buf[4096];
    size_t got = 0;
    while (got < sizeof buf - 1) {
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (memchr(buf, '\n', got))
            break;
    }
    close(fd);
    buf[got] = 0;
    if (ans && cap) {
        snprintf(ans, cap, "%s", buf);
    }
    return strncmp(buf, "ok", 2) == 0 ? 0 : -1;
}

/* ---- network ---- */
static pthread_t g_net_thread;
static int g_net_running;

static void *net_main(void *arg)
{
    (void)arg;
    fdb_error_t e = fdb_run_network();
    if (e)
        fprintf(stderr, "fdb_run_network: %d %s\n", e, fdb_get_error(e));
    return NULL;
}

int api_network_start(void)
{
    fdb_error_t e = fdb_select_api_version(FDB_API_VERSION);
    if (e && e != 2201) {
        fprintf(stderr, "select_api_version: %d\n", e);
        return -1;
    }
    e = fdb_setup_network();
    if (e) {
        fprintf(stderr, "setup_network: %d\n", e);
        return -1;
    }
    if (pthread_create(&g_net_thread, NULL, net_main, NULL))
        return -1;
    g_net_running = 1;
    return 0;
}

void api_network_stop(void)
{
    if (!g_net_running)
        return;
    fdb_error_t e = fdb_stop_network();
    if (e)
        fprintf(stderr, "stop_network: %d\n", e);
    pthread_join(g_net_thread, NULL);
    g_net_running = 0;
}

int api_env_setup(const char *const *extra_args)
{
    memset(&g_env, 0, sizeof g_env);
    if (api_server_start(&g_env.server, extra_args))
        return -1;
    if (api_network_start()) {
        api_server_stop(&g_env.server);
        return -1;
    }
    fdb_error_t e = fdb_create_database(g_env.server.cluster_file, &g_env.db);
    if (e) {
        fprintf(stderr, "create_database: %d\n", e);
        return -1;
    }
    return 0;
}

int api_env_teardown(void)
{
    if (g_env.db)
        fdb_database_destroy(g_env.db);
    g_env.db = NULL;
    api_network_stop();
    api_server_stop(&g_env.server);
    return 0;
}

/* ---- futures ---- */
fdb_error_t api_wait(FDBFuture *f)
{
    fdb_error_t e = fdb_future_block_until_ready(f);
    if (e)
        return e;
    return fdb_future_get_error(f);
}

fdb_error_t api_wait_ms(FDBFuture *f, int ms)
{
    double end = api_now_ms() + ms;
    while (!fdb_future_is_ready(f)) {
        if (api_now_ms() > end)
            return API_TIMEOUT;
        usleep(1000);
    }
    return fdb_future_get_error(f);
}

fdb_error_t api_wait_destroy(FDBFuture *f)
{
    fdb_error_t e = api_wait(f);
    fdb_future_destroy(f);
    return e;
}

fdb_error_t api_get(FDBTransaction *tr, const void *key, int klen, int snapshot, int *present, void *buf,
                    int cap, int *len)
{
    FDBFuture *f = fdb_transaction_get(tr, key, klen, snapshot);
    fdb_error_t e = api_wait(f);
    if (!e) {
        fdb_bool_t p = 0;
        const uint8_t *v = NULL;
        int n = 0;
        e = fdb_future_get_value(f, &p, &v, &n);
        if (!e) {
            if (present)
                *present = p;
            if (len)
                *len = p ? n : -1;
            if (p && buf)
                memcpy(buf, v, (size_t)(n < cap ? n : cap));
        }
    }
    fdb_future_destroy(f);
    return e;
}

fdb_error_t api_commit(FDBTransaction *tr)
{
    return api_wait_destroy(fdb_transaction_commit(tr));
}

fdb_error_t api_on_error(FDBTransaction *tr, fdb_error_t err)
{
    return api_wait_destroy(fdb_transaction_on_error(tr, err));
}

FDBTransaction *api_tr(void)
{
    FDBTransaction *tr = NULL;
    fdb_error_t e = fdb_database_create_transaction(g_env.db, &tr);
    if (e || !tr) {
        fprintf(stderr, "create_transaction: %d\n", e);
        abort();
    }
    return tr;
}

int api_prefix(char *out, size_t cap, const char *name)
{
    static int counter;
    return snprintf(out, cap, "t/%s/%d/", name, __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
}

int api_key(char *out, size_t cap, const char *prefix, const char *suffix)
{
    return snprintf(out, cap, "%s%s", prefix, suffix);
}

fdb_error_t api_set_committed(const void *key, int klen, const void *val, int vlen)
{
    FDBTransaction *tr = api_tr();
    fdb_error_t e;
    for (;;) {
        if (val)
            fdb_transaction_set(tr, key, klen, val, vlen);
        else
            fdb_transaction_clear(tr, key, klen);
        e = api_commit(tr);
        if (!e)
            break;
        e = api_on_error(tr, e);
        if (e)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

fdb_error_t api_read_committed(const void *key, int klen, int *present, void *buf, int cap, int *len)
{
    FDBTransaction *tr = api_tr();
    fdb_error_t e;
    for (;;) {
        e = api_get(tr, key, klen, 0, present, buf, cap, len);
        if (!e)
            break;
        e = api_on_error(tr, e);
        if (e)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

fdb_error_t api_clear_prefix(const char *prefix)
{
    char end[512];
    int n = snprintf(end, sizeof end, "%s", prefix);
    end[n++] = (char)0xff;
    FDBTransaction *tr = api_tr();
    fdb_error_t e;
    for (;;) {
        fdb_transaction_clear_range(tr, S(prefix), L(prefix), (const uint8_t *)end, n);
        e = api_commit(tr);
        if (!e)
            break;
        e = api_on_error(tr, e);
        if (e)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}


int api_server_status(const api_server *s, const char *name, unsigned long long *out)
{
    char ans[1024], key[64];
    if (api_server_control(s, "status", ans, sizeof ans))
        return -1;
    snprintf(key, sizeof key, " %s=", name); /* every field follows a space ("ok version=...") */
    const char *p = strstr(ans, key);
    if (!p)
        return -1;
    *out = strtoull(p + strlen(key), NULL, 10);
    return 0;
}
