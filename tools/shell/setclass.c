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

#include "error_codes.h"

#define TYPE_B "\xff\xff/configuration/process/class_type/"
#define TYPE_E "\xff\xff/configuration/process/class_type0"
#define SOURCE_B "\xff\xff/configuration/process/class_source/"
#define SOURCE_E "\xff\xff/configuration/process/class_source0"
#define TOO_MANY 10000

static int print_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    (void)ctx;
    FDBFuture *ft = NULL, *fs = NULL;
    const FDBKeyValue *types = NULL, *sources = NULL;
    int nt = 0, ns = 0;
    *e = admin_range(tr, TYPE_B, SL(TYPE_B), TYPE_E, SL(TYPE_E), TOO_MANY, &ft, &types, &nt);
    if (!*e)
        *e = admin_range(tr, SOURCE_B, SL(SOURCE_B), SOURCE_E, SL(SOURCE_E), TOO_MANY, &fs, &sources, &ns);
    if (!*e && nt != ns)
        *e = CFDB_ERR_INTERNAL_ERROR; /* fdbcli asserts the two lists match */
    if (!*e) {
        if (!nt)
            printf("No processes are registered in the database.\n");
        printf("There are currently %d processes in the database:\n", nt);
        for (int i = 0; i < nt; i++)
            printf("  %.*s: %.*s (%.*s)\n", types[i].key_length - (int)SL(TYPE_B),
                   (const char *)types[i].key + SL(TYPE_B), types[i].value_length, (const char *)types[i].value,
                   sources[i].value_length, (const char *)sources[i].value);
    }
    if (ft)
        fdb_future_destroy(ft);
    if (fs)
        fdb_future_destroy(fs);
    return *e ? ADMIN_ERROR : CMD_OK;
}

typedef struct set_class {
    const char *key;
    size_t kl;
    shell_token cls;
} set_class;

static int set_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const set_class *c = ctx;
    bool present = false;
    if ((*e = admin_get(tr, c->key, c->kl, &present, NULL, NULL)))
        return ADMIN_ERROR;
    if (!present) {
        printf("No matching addresses found\n");
        return CMD_FAIL;
    }
    fdb_transaction_set(tr, (const uint8_t *)c->key, (int)c->kl, (const uint8_t *)c->cls.p, (int)c->cls.n);
    return (*e = admin_commit(tr)) ? ADMIN_ERROR : CMD_OK;
}

int shell_cmd_setclass(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1)
        return admin_run(s, ADMIN_WRITES, print_body, NULL, err);
    if (n != 3)
        return shell_usage("setclass");
    set_class c = { NULL, SL(TYPE_B) + t[1].n, t[2] };
    char *key = malloc(c.kl);
    if (!key) {
        *err = CFDB_ERR_INTERNAL_ERROR;
        return CMD_FDB;
    }
    memcpy(key, TYPE_B, SL(TYPE_B));
    memcpy(key + SL(TYPE_B), t[1].p, t[1].n);
    c.key = key;
    int r = admin_run(s, ADMIN_WRITES | ADMIN_RAW_MESSAGE, set_body, &c, err);
    free(key);
    return r;
}
