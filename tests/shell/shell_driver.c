/* SPDX-License-Identifier: Apache-2.0 */
/* Child processes and pseudo-terminals for the shell tests (see shell_driver.h). */
#define _GNU_SOURCE
#include "shell_driver.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void exec_shell(const char *const *args, const char *home)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = CFDB_SHELL_PATH;
    for (; args && *args && n < 63; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    if (home)
        setenv("HOME", home, 1);
    execv(CFDB_SHELL_PATH, (char *const *)argv);
    _exit(127);
}

static int wait_status(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int shell_exec(shell_run *r, const char *const *args, const char *input, const char *home)
{
    return shell_exec_bytes(r, args, input, input ? strlen(input) : 0, home);
}

int shell_exec_bytes(shell_run *r, const char *const *args, const char *input, size_t input_len, const char *home)
{
    memset(r, 0, sizeof *r);
    int in[2], out[2], err[2];
    if (pipe(in) || pipe(out) || pipe(err))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]), close(err[0]), close(err[1]);
        exec_shell(args, home);
    }
    close(in[0]), close(out[1]), close(err[1]);
    size_t in_len = input ? input_len : 0, in_off = 0;
    if (in_len == 0) {
        close(in[1]);
        in[1] = -1;
    }
    signal(SIGPIPE, SIG_IGN);
    double deadline = now_s() + 60;
    bool out_open = true, err_open = true;
    while ((out_open || err_open) && now_s() < deadline) {
        struct pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
        if (!out_open)
            fds[0].fd = -1;
        if (!err_open)
            fds[1].fd = -1;
        if (poll(fds, 3, 200) < 0 && errno != EINTR)
            break;
        if (fds[2].revents & (POLLOUT | POLLERR)) {
            ssize_t w = write(in[1], input + in_off, in_len - in_off);
            if (w > 0)
                in_off += (size_t)w;
            if (w < 0 || in_off == in_len) {
                close(in[1]);
                in[1] = -1;
            }
        }
        if (fds[0].revents) {
            ssize_t n = read(out[0], r->out + r->out_len, sizeof r->out - 1 - r->out_len);
            if (n <= 0)
                out_open = false;
            else
                r->out_len += (size_t)n;
        }
        if (fds[1].revents) {
            ssize_t n = read(err[0], r->err + r->err_len, sizeof r->err - 1 - r->err_len);
            if (n <= 0)
                err_open = false;
            else
                r->err_len += (size_t)n;
        }
    }
    if (in[1] >= 0)
        close(in[1]);
    close(out[0]), close(err[0]);
    bool timed_out = out_open || err_open;
    if (timed_out)
        kill(pid, SIGKILL);
    r->status = wait_status(pid);
    r->out[r->out_len] = 0;
    r->err[r->err_len] = 0;
    return timed_out ? -1 : 0;
}

int shell_exec_line(shell_run *r, const char *cluster_file, const char *line)
{
    const char *args[] = {"-C", cluster_file, "--exec", line, NULL};
    return shell_exec(r, args, NULL, NULL);
}

void shell_mask_versions(char *s)
{
    char *p = s;
    while ((p = strstr(p, "Committed (")) != NULL) {
        p += strlen("Committed (");
        char *q = p;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q == p)
            continue;
        *p = 'V';
        memmove(p + 1, q, strlen(q) + 1);
    }
}

static bool differs(const char *want, const char *got)
{
    return want && strcmp(want, got) != 0;
}

int shell_run_cases(shell_run *r, const char *cluster_file, const shell_case *cases, size_t n, char *why,
                    size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        const shell_case *c = &cases[i];
        int rc;
        if (c->input) {
            const char *args[] = {"-C", cluster_file, "--no-status", NULL};
            rc = shell_exec(r, args, c->input, NULL);
        } else {
            rc = shell_exec_line(r, cluster_file, c->line);
        }
        if (rc) {
            snprintf(why, cap, "case %zu `%s': the shell did not finish", i, c->line ? c->line : c->input);
            return -1;
        }
        if (c->mask)
            shell_mask_versions(r->out);
        const char *what = differs(c->out, r->out)                     ? "stdout"
                           : differs(c->err, r->err)                   ? "stderr"
                           : (c->status >= 0 && c->status != r->status) ? "exit status"
                                                                        : NULL;
        if (what) {
            snprintf(why, cap, "case %zu `%s': %s differs\n--- stdout:\n%s\n--- stderr:\n%s\n--- status %d", i,
                     c->line ? c->line : c->input, what, r->out, r->err, r->status);
            return -1;
        }
    }
    return 0;
}

int shell_pty_start(shell_pty *p, const char *const *args, const char *home)
{
    memset(p, 0, sizeof *p);
    struct winsize ws = {.ws_row = 40, .ws_col = 200};
    p->pid = forkpty(&p->fd, NULL, NULL, &ws);
    if (p->pid < 0)
        return -1;
    if (p->pid == 0) {
        setenv("TERM", "vt100", 1);
        exec_shell(args, home);
    }
    return 0;
}

int shell_pty_send(shell_pty *p, const char *s)
{
    /* Type only while the line editor reads (raw mode): in the cooked mode between lines
     * the terminal would consume ^D itself, and libedit may flush typed-ahead input. The
     * master shares the slave's termios. */
    double deadline = now_s() + 20;
    struct termios t;
    while (tcgetattr(p->fd, &t) == 0 && (t.c_lflag & ICANON) && now_s() < deadline)
        usleep(2000);
    size_t n = strlen(s), off = 0;
    while (off < n) {
        ssize_t w = write(p->fd, s + off, n - off);
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

int shell_pty_expect(shell_pty *p, const char *text)
{
    double deadline = now_s() + 20;
    for (;;) {
        p->buf[p->len] = 0;
        char *hit = strstr(p->buf + p->mark, text);
        if (hit) {
            p->mark = (size_t)(hit - p->buf) + strlen(text);
            return 0;
        }
        if (now_s() > deadline || p->len + 1 >= sizeof p->buf) {
            fprintf(stderr, "pty: `%s' not seen after:\n%s\n", text, p->buf + p->mark);
            return -1;
        }
        struct pollfd fd = {p->fd, POLLIN, 0};
        if (poll(&fd, 1, 200) > 0) {
            ssize_t n = read(p->fd, p->buf + p->len, sizeof p->buf - 1 - p->len);
            if (n <= 0) {
                p->buf[p->len] = 0;
                return strstr(p->buf + p->mark, text) ? 0 : -1;
            }
            /* NUL bytes (terminal padding) would end the string search early */
            for (ssize_t i = 0; i < n; i++)
                if (p->buf[p->len + (size_t)i] == 0)
                    p->buf[p->len + (size_t)i] = ' ';
            p->len += (size_t)n;
        }
    }
}

int shell_pty_finish(shell_pty *p)
{
    double deadline = now_s() + 20;
    int st;
    pid_t r;
    while ((r = waitpid(p->pid, &st, WNOHANG)) == 0 && now_s() < deadline) {
        char tmp[4096];
        struct pollfd fd = {p->fd, POLLIN, 0};
        if (poll(&fd, 1, 100) > 0 && read(p->fd, tmp, sizeof tmp) <= 0)
            usleep(10000);
    }
    if (r == 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &st, 0);
    }
    close(p->fd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int shell_cluster_address(const char *cluster_file, char *out, size_t cap)
{
    char line[512];
    FILE *f = fopen(cluster_file, "r");
    int rc = -1;
    while (f && rc && fgets(line, sizeof line, f)) {
        char *a = line[0] == '#' ? NULL : strchr(line, '@');
        if (!a)
            continue;
        a++;
        a[strcspn(a, ",\r\n")] = 0;
        rc = (size_t)snprintf(out, cap, "%s", a) < cap ? 0 : -1;
    }
    if (f)
        fclose(f);
    return rc;
}
