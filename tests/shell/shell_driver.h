/* SPDX-License-Identifier: Apache-2.0 */
/* Runs the cfdb shell (CFDB_SHELL_PATH) for the shell tests: as a child with pipes
 * (--exec, a script on stdin), capturing stdout, stderr and the exit status; or on a
 * pseudo-terminal (forkpty) for interactive sessions. */
#ifndef CFDB_TESTS_SHELL_DRIVER_H
#define CFDB_TESTS_SHELL_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct shell_run {
    char out[65536];
    char err[16384];
    size_t out_len, err_len;
    int status; /* exit status, or 128 + signal */
} shell_run;

/* Runs CFDB_SHELL_PATH with args (NULL-terminated) and input on stdin (NULL: /dev/null),
 * with HOME=home when home is not NULL. 0 when it ran to its end within 60 s. */
int shell_exec(shell_run *r, const char *const *args, const char *input, const char *home);
/* The same with input_len bytes of input (which may hold NUL bytes). */
int shell_exec_bytes(shell_run *r, const char *const *args, const char *input, size_t input_len, const char *home);

/* Shorthand: cfdb -C cluster_file --exec line. */
int shell_exec_line(shell_run *r, const char *cluster_file, const char *line);

/* The first coordinator's address of a cluster file ("desc:id@ip:port,...", comment lines
 * skipped) into out: 0, or -1 when there is none. */
int shell_cluster_address(const char *cluster_file, char *out, size_t cap);

/* Replaces every "Committed (<digits>)" in s by "Committed (V)". */
void shell_mask_versions(char *s);

/* One run-and-compare case: `cfdb -C cluster_file --exec line' (or, with input set, the
 * script input on stdin with --no-status and no --exec) and what it must print. */
typedef struct shell_case {
    const char *line;   /* the --exec line, or NULL with input */
    const char *input;  /* a stdin script, or NULL */
    const char *out;    /* stdout, exactly (NULL: not checked) */
    const char *err;    /* stderr, exactly (NULL: not checked) */
    int status;         /* the exit status (-1: not checked) */
    bool mask;          /* versions masked in stdout first (shell_mask_versions) */
} shell_case;

/* Runs the cases in order; 0 when all matched, else -1 with why (cap bytes) naming the
 * first case that did not and what it printed. r keeps the last run. */
int shell_run_cases(shell_run *r, const char *cluster_file, const shell_case *cases, size_t n, char *why,
                    size_t cap);

/* An interactive session on a pseudo-terminal. */
typedef struct shell_pty {
    pid_t pid;
    int fd;
    char buf[65536];
    size_t len;   /* bytes read so far */
    size_t mark;  /* shell_pty_expect searches from here */
} shell_pty;

int shell_pty_start(shell_pty *p, const char *const *args, const char *home);
/* Writes s to the terminal once the shell's line editor has put it in raw mode. */
int shell_pty_send(shell_pty *p, const char *s);
/* Reads until text appears after the mark (then moves the mark past it) or 20 s pass:
 * 0 when found. */
int shell_pty_expect(shell_pty *p, const char *text);
/* Waits for the child to exit (killing it after 20 s); its exit status. */
int shell_pty_finish(shell_pty *p);

#endif
