/* Running the cfdb-server binary as a child process for crash and recovery tests:
 * start it (port 0, the cluster file tells which port it got), kill -9 it, reach it
 * with the wire test client. */
#ifndef CFDB_TESTS_SERVER_PROC_H
#define CFDB_TESTS_SERVER_PROC_H

#include "free_port.h" /* test_free_port */
#include <stdint.h>
#include <sys/types.h>

#include "wire_client.h"

typedef struct sp_proc {
    pid_t pid;
    uint16_t port;
    char key[128];     /* description:id */
    char cluster[300]; /* cluster file path */
} sp_proc;

/* Starts `bin --listen 127.0.0.1:0 --cluster-file DIR/fdb.cluster --description sp
 * --cluster-id crash [--datadir DATADIR] [extra args...]` with stderr to /dev/null and
 * waits (up to 10 s) for the cluster file. extra is NULL-terminated (or NULL).
 * Returns 0, or -1 when the server did not come up. */
int sp_start(sp_proc *p, const char *bin, const char *dir, const char *datadir, const char *const *extra);

/* What sp_start_ex changes in the child. */
typedef struct sp_options {
    const char *log_path; /* non-NULL: no --quiet, stderr appended to this file */
    long max_fds;         /* > 0: RLIMIT_NOFILE (soft and hard) set to this before exec */
} sp_options;
int sp_start_ex(sp_proc *p, const char *bin, const char *dir, const char *datadir, const char *const *extra,
                const sp_options *o);
/* SIGKILL and reap. */
void sp_kill9(sp_proc *p);
/* Connects w and opens the database (discovers the proxies). 0 or -1. */
int sp_connect(wc *w, cfdb_loop *loop, const sp_proc *p, cfdb_arena *a);
/* rm -rf dir (a path this test created under /tmp). */
void sp_rmtree(const char *dir);

#endif
