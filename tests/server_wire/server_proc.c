/* See server_proc.h. */
#include "server_proc.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tcp.h"

int sp_start(sp_proc *p, const char *bin, const char *dir, const char *datadir, const char *const *extra)
{
    return sp_start_ex(p, bin, dir, datadir, extra, NULL);
}

int sp_start_ex(sp_proc *p, const char *bin, const char *dir, const char *datadir, const char *const *extra,
                const sp_options *o)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->cluster, sizeof p->cluster, "%s/fdb.cluster", dir);
    unlink(p->cluster);
    const char *argv[40];
    int n = 0;
    argv[n++] = bin;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--cluster-file";
    argv[n++] = p->cluster;
    argv[n++] = "--description";
    argv[n++] = "sp";
    argv[n++] = "--cluster-id";
    argv[n++] = "crash";
    if (!o || !o->log_path)
        argv[n++] = "--quiet";
    if (datadir) {
        argv[n++] = "--datadir";
        argv[n++] = datadir;
    }
    for (int i = 0; extra && extra[i] && n < 38; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    p->pid = fork();
    if (p->pid < 0)
        return -1;
    if (p->pid == 0) {
        /* dies with the test, even when the test itself is killed or aborts (sanitizers) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(127);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1); /* not the test's stdout: a pipe reader would wait for us */
            dup2(devnull, 2);
        }
        if (o && o->log_path) {
            int log = open(o->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (log >= 0)
                dup2(log, 2);
        }
        if (o && o->max_fds > 0) {
            struct rlimit rl = { (rlim_t)o->max_fds, (rlim_t)o->max_fds };
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                _exit(126);
        }
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 5000; i++) {
        FILE *f = fopen(p->cluster, "r");
        if (f) {
            char line[256] = { 0 };
            if (fgets(line, sizeof line, f)) {
                char *at = strchr(line, '@'), *colon = strrchr(line, ':');
                if (at && colon) {
                    snprintf(p->key, sizeof p->key, "%.*s", (int)(at - line), line);
                    p->port = (uint16_t)atoi(colon + 1);
                }
            }
            fclose(f);
            if (p->port)
                return 0;
        }
        int st;
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
            p->pid = 0;
            return -1;
        }
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    sp_kill9(p);
    return -1;
}

void sp_kill9(sp_proc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        int st;
        waitpid(p->pid, &st, 0);
    }
    p->pid = 0;
}

int sp_connect(wc *w, cfdb_loop *loop, const sp_proc *p, cfdb_arena *a)
{
    if (wc_connect(w, loop, p->port))
        return -1;
    cfdb_client_db_info info;
    return wc_open_database(w, p->key, &info, a) ? -1 : 0;
}

void sp_rmtree(const char *dir)
{
    if (strncmp(dir, "/tmp/", 5) != 0 || strstr(dir, ".."))
        return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}
