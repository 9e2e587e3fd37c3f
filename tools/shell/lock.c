/* SPDX-License-Identifier: Apache-2.0 */
/* lock and unlock, as fdbcli 7.3.77 runs them (fdbcli/LockCommand.actor.cpp and the
 * passphrase in fdbcli.actor.cpp), through \xff\xff/management/db_locked:
 *   lock           sets a random UID there ("Locking database with lockUID: <UID>", then
 *                  "Database locked."); database_locked (1038) ends the command at once
 *   unlock <UID>   asks for a random 10-character passphrase to be typed back, then clears
 *                  the key if it holds UID (any case), "Database unlocked."; another UID:
 *                  "Unable to unlock database. Make sure to unlock with the correct lock UID."
 *                  (nothing locked: no message). */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error_codes.h"

#define LOCK_KEY "\xff\xff/management/db_locked"

static int lock_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    fdb_transaction_set(tr, (const uint8_t *)LOCK_KEY, (int)SL(LOCK_KEY), (const uint8_t *)ctx, 32);
    if ((*e = admin_commit(tr)))
        return *e == CFDB_ERR_DATABASE_LOCKED ? CMD_FDB : ADMIN_ERROR; /* 1038 is thrown to the command loop */
    printf("Database locked.\n");
    return CMD_OK;
}

int shell_cmd_lock(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)t;
    if (n != 1)
        return shell_usage("lock");
    char uid[33];
    admin_random_uid(uid);
    printf("Locking database with lockUID: %s\n", uid);
    return admin_run(s, ADMIN_WRITES, lock_body, uid, err);
}

static int unlock_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    bool present = false;
    char *v = NULL;
    if ((*e = admin_get(tr, LOCK_KEY, SL(LOCK_KEY), &present, &v, NULL)))
        return ADMIN_ERROR;
    if (!present)
        return CMD_OK;
    bool same = strcasecmp(v, ctx) == 0;
    free(v);
    if (!same) {
        printf("Unable to unlock database. Make sure to unlock with the correct lock UID.\n");
        return CMD_FAIL;
    }
    fdb_transaction_clear(tr, (const uint8_t *)LOCK_KEY, (int)SL(LOCK_KEY));
    if ((*e = admin_commit(tr)))
        return ADMIN_ERROR;
    printf("Database unlocked.\n");
    return CMD_OK;
}

int shell_cmd_unlock(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 2 || !admin_is_uid(t[1]))
        return shell_usage("unlock");
    /* a random passphrase of 10 letters and digits, to be typed back */
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    uint8_t r[10];
    admin_random_bytes(r, sizeof r);
    char phrase[11];
    for (int i = 0; i < 10; i++)
        phrase[i] = alnum[r[i] % (sizeof alnum - 1)];
    phrase[10] = 0;
    printf("Unlocking the database is a potentially dangerous operation.\n%s\n", phrase);
    fflush(stdout);
    char *input = shell_read_line("Repeat the above passphrase if you would like to proceed:");
    bool ok = input && strcmp(input, phrase) == 0;
    free(input);
    if (!ok) {
        fprintf(stderr, "ERROR: Incorrect passphrase entered.\n");
        return CMD_FAIL;
    }
    char uid[33];
    memcpy(uid, t[1].p, 32);
    uid[32] = 0;
    return admin_run(s, ADMIN_WRITES, unlock_body, uid, err);
}
