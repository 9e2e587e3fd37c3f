/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell's management commands (admin.c: lock, unlock, maintenance, coordinators,
 * configure tenant_mode, exclude (listing), include; tenant.c: tenant and its old one-word forms), all through the
 * special key space as fdbcli 7.3.77 drives it, with fdbcli's texts. Shared helpers below:
 * a management transaction's error handling (fdbcli's catch blocks), the
 * \xff\xff/error_message text, and one-shot reads. */
#ifndef CFDB_SHELL_ADMIN_H
#define CFDB_SHELL_ADMIN_H

#include "shell.h"

/* Commands (the table is in commands.c). */
int shell_cmd_tenant(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_tenant_old(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_lock(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_unlock(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_maintenance(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_coordinators(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_configure(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_exclude(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_include(shell *s, const shell_token *t, size_t n, fdb_error_t *err);

/* fdbcli's printUsage for a command name. */
int shell_usage(const char *name);

/* fdbcli's `catch (Error& e) { ... wait(tr->onError(e)) }': 2117 prints the management
 * error message ("ERROR: <message>" with prefix, else just the message) and returns
 * CMD_FAIL; any other error goes to on_error: 0 (retry) or CMD_FDB with *err set. */
enum { ADMIN_RETRY = -1 };
int admin_on_error(FDBTransaction *tr, fdb_error_t e, const char *prefix, fdb_error_t *err);
/* A get in tr: 0 or an error; value malloc'd (NUL-terminated) when present. */
fdb_error_t admin_get(FDBTransaction *tr, const char *key, size_t klen, bool *present, char **value, size_t *vlen);
/* getSpecialKeysFailureErrorMessage: the "message" of \xff\xff/error_message, malloc'd, or NULL. */
char *admin_error_message(FDBTransaction *tr);
/* setclass.c */
int shell_cmd_setclass(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
/* A commit in tr. */
fdb_error_t admin_commit(FDBTransaction *tr);
/* A random UID as 32 hex digits (buf: 33 bytes). */
void admin_random_uid(char *buf);

#endif /* CFDB_SHELL_ADMIN_H */
