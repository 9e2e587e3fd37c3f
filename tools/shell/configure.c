/* SPDX-License-Identifier: Apache-2.0 */
/* configure, as far as cfdb's shell takes it (fdbcli/ConfigureCommand.actor.cpp in
 * FoundationDB 7.3.77): tenant_mode=<disabled|optional_experimental|required_experimental>
 * (repeatable with the same value) sets \xff/conf/tenant_mode to 0, 1 or 2 and prints
 * "Configuration changed"; anything else prints the usage, as an unknown option does. */
#include "admin.h"

#include <stdio.h>
#include <string.h>

static int configure_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    fdb_transaction_set(tr, (const uint8_t *)"\xff/conf/tenant_mode", (int)SL("\xff/conf/tenant_mode"),
                        (const uint8_t *)ctx, 1);
    if ((*e = admin_commit(tr)))
        return ADMIN_ERROR;
    printf("Configuration changed\n");
    return CMD_OK;
}

int shell_cmd_configure(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    static const char *const modes[] = { "disabled", "optional_experimental", "required_experimental" };
    int mode = -1;
    for (size_t i = 1; i < n; i++) {
        static const char pre[] = "tenant_mode=";
        if (t[i].n <= SL(pre) || memcmp(t[i].p, pre, SL(pre)) != 0)
            return shell_usage("configure");
        shell_token v = { t[i].p + SL(pre), t[i].n - SL(pre) };
        int m = -1;
        for (int k = 0; k < 3; k++)
            if (shell_token_is(v, modes[k]))
                m = k;
        if (m < 0 || (mode >= 0 && m != mode))
            return shell_usage("configure");
        mode = m;
    }
    if (mode < 0)
        return shell_usage("configure");
    char v[2] = { (char)('0' + mode), 0 };
    return admin_run(s, ADMIN_SYSTEM, configure_body, v, err);
}
