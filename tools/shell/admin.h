/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell's management commands, all through the special key space as fdbcli
 * 7.3.77 drives them, with fdbcli's texts: lock.c (lock, unlock), maintenance.c,
 * coordinators.c, configure.c (configure tenant_mode), exclude.c (exclude, include),
 * setclass.c, kill.c, tenant.c (tenant and its old one-word forms).
 *
 * Every management command runs its transactions through admin_run (admin.c), fdbcli's
 * retry loop: a fresh transaction, then per attempt the options of `flags', the command's
 * body, and on an error fdbcli's catch block (a special-keys failure, 2117, prints the
 * \xff\xff/error_message text; anything else goes to on_error, which either retries the
 * body or ends the command with the error). */
#ifndef CFDB_SHELL_ADMIN_H
#define CFDB_SHELL_ADMIN_H

#include <stdint.h>

#include "shell.h"

/* Commands (the table is in commands.c). */
int shell_cmd_tenant(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
/* usetenant [NAME], defaulttenant (tenant.c) */
int shell_cmd_usetenant(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_defaulttenant(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_tenant_old(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_lock(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_unlock(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_maintenance(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_coordinators(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_configure(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_exclude(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_include(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_setclass(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
/* kill.c: kill, suspend, expensive_data_check; shell_workers_clear empties s->workers. */
int shell_cmd_kill(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_suspend(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
int shell_cmd_expensive_data_check(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
void shell_workers_clear(shell *s);
/* "locality_<KEY>:<VALUE>" (LocalityData::ExcludeLocalityPrefix and a ':'), include.c */
bool shell_is_locality(shell_token t);
/* tenant lock / tenant unlock (tenant_lock.c), from shell_cmd_tenant */
int shell_tenant_lock(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
/* The "id" of a TenantMapEntry's JSON (tenant.c), -1 when there is none. */
int64_t shell_tenant_entry_id(const char *json, size_t len);

/* fdbcli's printUsage for a command name. */
int shell_usage(const char *name);

/* What a management transaction sets before each attempt, and how it reports a
 * special-keys failure (2117). */
enum {
    ADMIN_WRITES = 1 << 0,       /* SPECIAL_KEY_SPACE_ENABLE_WRITES */
    ADMIN_READ_SYSTEM = 1 << 1,  /* READ_SYSTEM_KEYS */
    ADMIN_SYSTEM = 1 << 2,       /* ACCESS_SYSTEM_KEYS, LOCK_AWARE, PRIORITY_SYSTEM_IMMEDIATE */
    ADMIN_ERROR_PREFIX = 1 << 3, /* 2117 prints "ERROR: <message>\n" (else "<message>\n") */
    ADMIN_RAW_MESSAGE = 1 << 4,  /* 2117 prints the message as it is (it ends in a newline) */
    ADMIN_NO_MESSAGE = 1 << 5,   /* 2117 goes to on_error like any other error */
    ADMIN_IMMEDIATE = 1 << 6,    /* PRIORITY_SYSTEM_IMMEDIATE */
};

/* A body's answer besides CMD_OK / CMD_FAIL / CMD_FDB (the command's result; for CMD_FDB
 * *e is the error the command ends with, without on_error): *e is this attempt's error,
 * for fdbcli's catch block (a retry calls the body again on the reset transaction). */
enum { ADMIN_ERROR = -1, ADMIN_AGAIN = -2 }; /* ADMIN_AGAIN: call the body again at once (it reset tr) */
typedef int (*admin_body)(FDBTransaction *tr, void *ctx, fdb_error_t *e);

/* fdbcli's management retry loop around body(tr, ctx, &e): CMD_OK, CMD_FAIL (a message was
 * printed) or CMD_FDB with *err set. */
int admin_run(shell *s, unsigned flags, admin_body body, void *ctx, fdb_error_t *err);

/* A get in tr: 0 or an error; value malloc'd (NUL-terminated) when present. */
fdb_error_t admin_get(FDBTransaction *tr, const char *key, size_t klen, bool *present, char **value, size_t *vlen);
/* A range read [b, e) in tr of at most limit rows (0: all): 0 with *f (to destroy), *kv and
 * *n, or an error (then *f is NULL). */
fdb_error_t admin_range(FDBTransaction *tr, const char *b, size_t bl, const char *e, size_t el, int limit,
                        FDBFuture **f, const FDBKeyValue **kv, int *n);
/* A commit in tr. */
fdb_error_t admin_commit(FDBTransaction *tr);
/* getSpecialKeysFailureErrorMessage: the "message" of \xff\xff/error_message, malloc'd, or NULL. */
char *admin_error_message(FDBTransaction *tr);
/* n random bytes (getrandom, else rand). */
void admin_random_bytes(uint8_t *r, size_t n);
/* prefix + token, malloc'd (NULL when out of memory), its length in *len. */
char *admin_key(const char *prefix, shell_token t, size_t *len);
/* A random UID as 32 hex digits (buf: 33 bytes). */
void admin_random_uid(char *buf);
/* A 32-hex-digit UID token (fdbcli's UID::fromString input check). */
bool admin_is_uid(shell_token t);

#define SL(x) (sizeof(x) - 1)

#endif /* CFDB_SHELL_ADMIN_H */
