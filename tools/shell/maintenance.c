/* SPDX-License-Identifier: Apache-2.0 */
/* maintenance, as fdbcli 7.3.77 runs it (fdbcli/MaintenanceCommand.actor.cpp), through
 * \xff\xff/management/maintenance/ (at most one row: <ZONE> = seconds left, or the
 * IgnoreSSFailures row while data distribution ignores storage failures):
 *   maintenance                      "No ongoing maintenance." or the zone and its seconds
 *   maintenance on <ZONE> <SECONDS>  sets the zone's row (setHealthyZone)
 *   maintenance off                  clears the range (clearHealthyZone)
 * Both changes refuse to run while the IgnoreSSFailures row is there. */
#include "admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

#define MAINT "\xff\xff/management/maintenance/"
#define MAINT_END "\xff\xff/management/maintenance0"
#define IGNORE_SS MAINT "IgnoreSSFailures"

static const char ss_failures_msg[] = "ERROR: Maintenance mode cannot be used while data distribution is disabled for "
                                      "storage server failures. Use 'datadistribution on' to reenable data "
                                      "distribution.\n";

/* The maintenance row (at most one): 0 or an error; *key / *value malloc'd or NULL. */
static fdb_error_t maintenance_row(FDBTransaction *tr, char **key, size_t *klen, char **value)
{
    *key = *value = NULL;
    FDBFuture *f;
    const FDBKeyValue *kv;
    int n;
    fdb_error_t e = admin_range(tr, MAINT, SL(MAINT), MAINT_END, SL(MAINT_END), 0, &f, &kv, &n);
    if (e)
        return e;
    if (n > 0) {
        *key = strndup((const char *)kv[0].key, (size_t)kv[0].key_length);
        *value = strndup((const char *)kv[0].value, (size_t)kv[0].value_length);
        if (!*key || !*value)
            e = CFDB_ERR_INTERNAL_ERROR;
        *klen = (size_t)kv[0].key_length;
    }
    fdb_future_destroy(f);
    return e;
}

static int print_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    (void)ctx;
    char *k, *v;
    size_t kl = 0;
    if ((*e = maintenance_row(tr, &k, &kl, &v))) {
        free(k);
        free(v);
        return ADMIN_ERROR;
    }
    if (k && strcmp(k, IGNORE_SS) == 0)
        printf("Data distribution has been disabled for all storage server failures in this cluster and "
               "thus maintenance mode is not active.\n");
    else if (!k || atof(v) <= 0)
        printf("No ongoing maintenance.\n");
    else
        printf("Maintenance for zone %.*s will continue for %" PRId64 " seconds.\n", (int)(kl - SL(MAINT)),
               k + SL(MAINT), (int64_t)atof(v));
    free(k);
    free(v);
    return CMD_OK;
}

typedef struct change {
    const shell_token *zone; /* NULL: off */
    double seconds;
} change;

/* setHealthyZone (on) / clearHealthyZone (off) */
static int change_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const change *c = ctx;
    char *k, *v;
    size_t kl = 0;
    *e = maintenance_row(tr, &k, &kl, &v);
    bool ignoring = !*e && k && strcmp(k, IGNORE_SS) == 0;
    free(k);
    free(v);
    if (*e)
        return ADMIN_ERROR;
    if (ignoring) {
        fflush(stdout);
        fputs(ss_failures_msg, stderr);
        return CMD_FAIL;
    }
    if (c->zone) {
        char key[512], val[64];
        size_t zl = c->zone->n < sizeof key - SL(MAINT) ? c->zone->n : sizeof key - SL(MAINT);
        memcpy(key, MAINT, SL(MAINT));
        memcpy(key + SL(MAINT), c->zone->p, zl);
        snprintf(val, sizeof val, "%.17g", c->seconds); /* boost::lexical_cast<std::string>(double) */
        fdb_transaction_set(tr, (const uint8_t *)key, (int)(SL(MAINT) + zl), (const uint8_t *)val, (int)strlen(val));
    } else {
        fdb_transaction_clear_range(tr, (const uint8_t *)MAINT, (int)SL(MAINT), (const uint8_t *)MAINT_END,
                                    (int)SL(MAINT_END));
    }
    return (*e = admin_commit(tr)) ? ADMIN_ERROR : CMD_OK;
}

int shell_cmd_maintenance(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1)
        return admin_run(s, ADMIN_WRITES, print_body, NULL, err);
    if (n == 2 && shell_token_is(t[1], "off"))
        return admin_run(s, ADMIN_WRITES, change_body, &(change){ NULL, 0 }, err);
    if (n == 4 && shell_token_is(t[1], "on")) {
        char buf[64];
        double seconds;
        int used = 0;
        if (t[3].n < sizeof buf) {
            memcpy(buf, t[3].p, t[3].n);
            buf[t[3].n] = 0;
            if (sscanf(buf, "%lf%n", &seconds, &used) == 1 && (size_t)used == t[3].n)
                return admin_run(s, ADMIN_WRITES, change_body, &(change){ &t[2], seconds }, err);
        }
    }
    return shell_usage("maintenance");
}
