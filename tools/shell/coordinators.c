/* SPDX-License-Identifier: Apache-2.0 */
/* coordinators, as fdbcli 7.3.77 runs it (fdbcli/CoordinatorsCommand.actor.cpp), through
 * \xff\xff/configuration/coordinators/ (cluster_description, processes: a comma list):
 *   coordinators              "Cluster description: D", "Cluster coordinators (N): LIST" and
 *                             the pointer to `help coordinators'
 *   coordinators <ADDRESS>+   writes processes; cfdb's library does not change coordinators
 *                             through the special keys (its commit answers 2108). */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/errors.h"

#define COORD_DESC "\xff\xff/configuration/coordinators/cluster_description"
#define COORD_PROCS "\xff\xff/configuration/coordinators/processes"

static int print_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    (void)ctx;
    bool p1 = false, p2 = false;
    char *desc = NULL, *procs = NULL;
    *e = admin_get(tr, COORD_DESC, SL(COORD_DESC), &p1, &desc, NULL);
    if (!*e)
        *e = admin_get(tr, COORD_PROCS, SL(COORD_PROCS), &p2, &procs, NULL);
    if (!*e) {
        size_t count = 1;
        for (const char *c = procs ? procs : ""; *c; c++)
            count += *c == ',';
        printf("Cluster description: %s\n", desc ? desc : "");
        printf("Cluster coordinators (%zu): %s\n", count, procs ? procs : "");
        printf("Type `help coordinators' to learn how to change this information.\n");
    }
    free(desc);
    free(procs);
    return *e ? ADMIN_ERROR : CMD_OK;
}

/* one attempt: a management failure prints its message, any other error ends the command */
static int change_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const char *list = ctx;
    fdb_transaction_set(tr, (const uint8_t *)COORD_PROCS, (int)SL(COORD_PROCS), (const uint8_t *)list,
                        (int)strlen(list));
    *e = admin_commit(tr);
    if (!*e)
        return CMD_OK;
    return *e == CFDB_ERR_SPECIAL_KEYS_API_FAILURE ? ADMIN_ERROR : CMD_FDB;
}

int shell_cmd_coordinators(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1)
        return admin_run(s, 0, print_body, NULL, err);
    char list[1024] = "";
    for (size_t i = 1; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%.*s", i > 1 ? "," : "", (int)t[i].n, t[i].p);
    return admin_run(s, ADMIN_WRITES | ADMIN_ERROR_PREFIX, change_body, list, err);
}
