/* SPDX-License-Identifier: Apache-2.0 */
#include "server.h"

#include "cpus.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int bench_server_start(const char *bin, const char *dir, const char *cpus, double timeout_s,
                       bench_server *s, char *err, size_t errlen)
{
    return bench_server_start_args(bin, dir, cpus, NULL, timeout_s, s, err, errlen);
}

int bench_server_start_args(const char *bin, const char *dir, const char *cpus,
                            const char *const *extra, double timeout_s, bench_server *s, char *err,
                            size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->port = free_port();
    if (s->port <= 0) {
        snprintf(err, errlen, "no free local port");
        return -1;
    }
    snprintf(s->cluster_file, sizeof s->cluster_file, "%s/fdb.cluster", dir);
    unlink(s->cluster_file);
    char listen[64], log[4200];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", s->port);
    snprintf(log, sizeof log, "%s/server.log", dir);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setpgid(0, 0);
        if (bench_cpus_pin(cpus) < 0) {
            fprintf(stderr, "pin to CPUs %s: %s\n", cpus, strerror(errno));
            _exit(127);
        }
        const char *argv[64] = {bin, "--listen", listen, "--cluster-file", s->cluster_file};
        int n = 5;
        for (int i = 0; extra && extra[i] && n < 63; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;
        execv(bin, (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    s->pid = pid;
    int waited = 0;
    for (;;) {
        struct stat st;
        if (stat(s->cluster_file, &st) == 0 && st.st_size > 0) {
            sleep_ms(50); /* let a non-atomic writer finish the line */
            return 0;
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            s->pid = 0;
            snprintf(err, errlen, "%s exited (status %d) before writing %s; see %s", bin,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status), s->cluster_file,
                     log);
            return -1;
        }
        if (waited >= (int)(timeout_s * 1000)) {
            bench_server_stop(s);
            snprintf(err, errlen, "%s did not write %s within %.0f s; see %s", bin, s->cluster_file,
                     timeout_s, log);
            return -1;
        }
        sleep_ms(20);
        waited += 20;
    }
}

void bench_server_stop(bench_server *s)
{
    if (s->pid <= 0)
        return;
    kill(s->pid, SIGTERM);
    for (int i = 0; i < 500; i++) {
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = 0;
            return;
        }
        sleep_ms(20);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}
