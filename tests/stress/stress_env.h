/* The public fdb_c API (libcfdb) against a cfdb-server child process, for the stress
 * tests: one server and one client network per test program. */
#ifndef CFDB_TESTS_STRESS_ENV_H
#define CFDB_TESTS_STRESS_ENV_H

#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server_proc.h"

typedef struct st_env {
    char dir[256];
    sp_proc server;
    FDBDatabase *db;
} st_env;

extern st_env g_st;

/* Starts a server (extra args NULL-terminated or NULL) in a fresh temp dir, the client
 * network (first call only) and a database. 0 or -1. */
int st_setup(const char *const *extra);
/* Destroys the database, kills the server, removes the temp dir. The network keeps
 * running until st_shutdown (a process can set it up only once). */
void st_teardown(void);
void st_shutdown(void);

/* Waits for f; returns its error. */
fdb_error_t st_wait(FDBFuture *f);
/* Every key-value in [begin, end) at one read version, into callback; returns error. */
typedef void (*st_kv_fn)(void *ctx, const uint8_t *k, int kl, const uint8_t *v, int vl);
fdb_error_t st_read_range(FDBTransaction *tr, const void *begin, int bl, const void *end, int el, st_kv_fn fn,
                          void *ctx);
double st_now(void); /* seconds, monotonic */

#endif
