/* SPDX-License-Identifier: Apache-2.0 */
#include "spawn.h"

#include "cpus.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_spawn(char *const argv[], const char *log_path, const char *preload, const char *cpus,
                double timeout_s, bench_spawn_result *r)
{
    memset(r, 0, sizeof *r);
    double t0 = now_s();
    /* SIGCHLD stays blocked while waiting so that sigtimedwait() can sleep
     * until the worker ends: the parent uses no CPU while a run is timed. */
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (log_path) {
            int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
        }
        if (preload && *preload)
            setenv("LD_PRELOAD", preload, 1);
        else
            unsetenv("LD_PRELOAD");
        if (bench_cpus_pin(cpus) < 0) {
            fprintf(stderr, "pin to CPUs %s: %s\n", cpus, strerror(errno));
            _exit(127);
        }
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            break;
        double left = timeout_s > 0 ? timeout_s - (now_s() - t0) : 3600;
        if (left <= 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            r->timed_out = 1;
            break;
        }
        if (left > 1)
            left = 1; /* re-check periodically in case a SIGCHLD was consumed elsewhere */
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        sigtimedwait(&chld, NULL, &ts);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    r->wall_s = now_s() - t0;
    if (!r->timed_out) {
        if (WIFEXITED(status)) {
            r->exited = 1;
            r->exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            r->signal = WTERMSIG(status);
        }
    }
    return 0;
}

void bench_spawn_describe(const bench_spawn_result *r, char *out, size_t len)
{
    if (r->timed_out)
        snprintf(out, len, "timed out after %.0f s and was killed", r->wall_s);
    else if (r->exited)
        snprintf(out, len, "exit %d", r->exit_code);
    else
        snprintf(out, len, "killed by signal %d (%s)", r->signal, strsignal(r->signal));
}
