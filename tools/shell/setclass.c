/* SPDX-License-Identifier: Apache-2.0 */
/* setclass, as fdbcli 7.3.77 runs it (fdbcli/SetClassCommand.actor.cpp):
 *   setclass                   reads \xff\xff/configuration/process/class_type/ and class_source/
 *                              and prints "There are currently N processes in the database:"
 *                              then "  ADDRESS: CLASS (SOURCE)" per process (with "No processes
 *                              are registered in the database." first when there are none)
 *   setclass <ADDRESS> <CLASS> the address's class_type key must be present ("No matching
 *                              addresses found" otherwise); sets it and commits. A management
 *                              failure prints the error message as it is (it ends in a newline).
 * Any other number of arguments prints the usage. Each runs in fdbcli's retry loop. */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/errors.h"

#define TYPE_B "\xff\xff/configuration/process/class_type/"
#define TYPE_E "\xff\xff/configuration/process/class_type0"
#define SOURCE_B "\xff\xff/configuration/process/class_source/"
#define SOURCE_E "\xff\xff/configuration/process/class_source0"
#define SL(x) (sizeof(x) - 1)
#define TOO_MANY 10000

static FDBFuture *range(FDBTransaction *tr, const char *b, size_t bl, const char *e, size_t el)
{
    return fdb_transaction_get_range(tr, (const uint8_t *)b, (int)bl, 0, 1, (const uint8_t *)e, (int)el, 0, 1, TOO_MANY,
                                     0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
}

static int print_classes(FDBTransaction *tr, fdb_error_t *err)
{
    for (;;) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
        FDBFuture *ft = range(tr, TYPE_B, SL(TYPE_B), TYPE_E, SL(TYPE_E));
        FDBFuture *fs = range(tr, SOURCE_B, SL(SOURCE_B), SOURCE_E, SL(SOURCE_E));
        fdb_error_t e = shell_wait(fs);
        if (!e)
            e = shell_wait(ft);
        const FDBKeyValue *types = NULL, *sources = NULL;
        int nt = 0, ns = 0;
        fdb_bool_t more;
        if (!e)
            e = fdb_future_get_keyvalue_array(ft, &types, &nt, &more);
        if (!e)
            e = fdb_future_get_keyvalue_array(fs, &sources, &ns, &more);
        if (!e && nt != ns)
            e = CFDB_ERR_INTERNAL_ERROR; /* fdbcli asserts the two lists match */
        if (!e) {
            if (!nt)
                printf("No processes are registered in the database.\n");
            printf("There are currently %d processes in the database:\n", nt);
            for (int i = 0; i < nt; i++)
                printf("  %.*s: %.*s (%.*s)\n", types[i].key_length - (int)SL(TYPE_B),
                       (const char *)types[i].key + SL(TYPE_B), types[i].value_length, (const char *)types[i].value,
                       sources[i].value_length, (const char *)sources[i].value);
        }
        fdb_future_destroy(ft);
        fdb_future_destroy(fs);
        if (!e)
            return CMD_OK;
        int r = admin_on_error(tr, e, NULL, err);
        if (r != ADMIN_RETRY)
            return r;
    }
}

static int set_class(FDBTransaction *tr, const shell_token *addr, const shell_token *cls, fdb_error_t *err)
{
    size_t kl = SL(TYPE_B) + addr->n;
    char *key = malloc(kl);
    if (!key) {
        *err = CFDB_ERR_INTERNAL_ERROR;
        return CMD_FDB;
    }
    memcpy(key, TYPE_B, SL(TYPE_B));
    memcpy(key + SL(TYPE_B), addr->p, addr->n);
    int r;
    for (;;) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
        bool present = false;
        fdb_error_t e = admin_get(tr, key, kl, &present, NULL, NULL);
        if (!e && !present) {
            printf("No matching addresses found\n");
            r = CMD_FAIL;
            break;
        }
        if (!e) {
            fdb_transaction_set(tr, (const uint8_t *)key, (int)kl, (const uint8_t *)cls->p, (int)cls->n);
            e = admin_commit(tr);
        }
        if (!e) {
            r = CMD_OK;
            break;
        }
        if (e == CFDB_ERR_SPECIAL_KEYS_API_FAILURE) {
            char *m = admin_error_message(tr);
            fflush(stdout);
            fprintf(stderr, "%s", m ? m : "");
            free(m);
            r = CMD_FAIL;
            break;
        }
        if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
            break;
    }
    free(key);
    return r;
}

int shell_cmd_setclass(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 1 && n != 3)
        return shell_usage("setclass");
    FDBTransaction *tr = NULL;
    if ((*err = fdb_database_create_transaction(s->db, &tr)))
        return CMD_FDB;
    int r = n == 1 ? print_classes(tr, err) : set_class(tr, &t[1], &t[2], err);
    fdb_transaction_destroy(tr);
    return r;
}
