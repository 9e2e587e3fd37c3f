/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell's session state and command interpreter (fdbcli's cli() loop body,
 * fdbcli/fdbcli.actor.cpp in FoundationDB 7.3.77, for the data commands).
 *
 * State, as in fdbcli: outside a transaction every command runs in a transaction of its
 * own with the global options applied (writes commit at once, "Committed (V)"); `begin'
 * copies the global options into the transaction's own set and keeps one transaction until
 * commit / rollback, or until a command fails ("Rolling back current transaction").
 * Writes (set, clear, clearrange) are refused unless `writemode on'.
 *
 * Output goes to stdout and errors to stderr exactly where fdbcli sends them.
 */
#ifndef CFDB_SHELL_SHELL_H
#define CFDB_SHELL_SHELL_H

#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "lexer.h"
#include "options.h"

typedef struct shell {
    FDBDatabase *db;
    FDBTransaction *tr;
    /* the tenant of usetenant (NULL: the default, raw key space) and its name, malloc'd */
    FDBTenant *tenant;
    char *tenant_name;
    size_t tenant_name_n;
    bool intrans;
    bool writemode;
    bool exec_mode;   /* --exec: no blank lines around status */
    bool tuple_mode;  /* --tuple */
    shell_optset global_opts, active_opts;
    shell_optset *opts;
    /* the processes kill, suspend and expensive_data_check may name (fdbcli's
     * address_interface): set by those commands without arguments; sorted, unique, malloc'd */
    char **workers;
    size_t nworkers;
} shell;

/* Set from a SIGINT handler: the operation being waited for is cancelled (1101). */
extern volatile sig_atomic_t shell_interrupted;

void shell_init(shell *s, FDBDatabase *db);
void shell_destroy(shell *s);

typedef enum shell_result {
    SHELL_OK = 0,    /* every command succeeded */
    SHELL_ERROR = 1, /* a command failed (the rest of the line was not run) */
    SHELL_EXIT = 2,  /* exit or quit */
} shell_result;

/* Runs one input line (one or more ';'-separated commands), as fdbcli does. */
shell_result shell_run_line(shell *s, const char *line, size_t len);

/* fdbcli's getTransaction: the transaction of `begin', else a fresh one with the current
 * options, in s->tr: in the tenant of usetenant for the data commands (shell_get_tr), in
 * no tenant for the management commands that fdbcli gives its empty managementTenant
 * (shell_get_mgmt_tr: kill, suspend, expensive_data_check, waitopen). */
fdb_error_t shell_get_tr(shell *s);
fdb_error_t shell_get_mgmt_tr(shell *s);

/* Makes `name' (n bytes) the tenant of the data commands, opened as t (NULL, NULL: back to
 * the default); the shell owns t from then on (tenant.c). 0, or 4100 when out of memory
 * (t destroyed, the tenant unchanged). */
fdb_error_t shell_set_tenant(shell *s, FDBTenant *t, const char *name, size_t n);

/* Blocks until f is ready (or SIGINT: then cancels it and returns 1101); f's error. */
fdb_error_t shell_wait(FDBFuture *f);

/* \xff\xff/status/json read in a transaction of its own and parsed (status.c): *out NULL
 * when absent or not JSON; cfdb_jv_free it. */
struct cfdb_jv;
fdb_error_t shell_read_status(shell *s, struct cfdb_jv **out, bool *present);

/* The minimal status text (fdbcli's `status minimal') from \xff\xff/status/json; true
 * when it could be read. With blank lines around it unless exec_mode. */
bool shell_status_minimal(shell *s, bool blank_lines);

/* What a command returns: CMD_FAIL when it printed its own message (fdbcli's is_error),
 * CMD_FDB with an fdb_error_t the interpreter prints as "ERROR: <description> (<code>)". */
enum { CMD_OK, CMD_FAIL, CMD_FDB, CMD_EXIT };
int shell_cmd_status(shell *s, const shell_token *t, size_t n, fdb_error_t *err); /* status.c */

/* A line from the user (the terminal with prompt, else stdin), malloc'd; NULL at the end of
 * input (fdbcli's linenoise.read, e.g. for unlock's passphrase). */
char *shell_read_line(const char *prompt);

/* Command names, for completion: the i-th visible command name or NULL past the end. */
const char *shell_command_name(size_t i);

#endif /* CFDB_SHELL_SHELL_H */
