/* SPDX-License-Identifier: Apache-2.0 */
/* include, as fdbcli 7.3.77 runs it (fdbcli/IncludeCommand.actor.cpp), through
 * \xff\xff/management/excluded/, excluded_locality/, failed/ and failed_locality/:
 *   include [failed] all|<ADDRESS...>|locality_<K>:<V>   clears them: servers, then localities,
 *                             each in a transaction of its own; a whole machine (IP) takes its
 *                             IP:* entries with it. */
#define _GNU_SOURCE /* memmem */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"

bool shell_is_locality(shell_token t)
{
    return t.n > 9 && memcmp(t.p, "locality_", 9) == 0 && memchr(t.p, ':', t.n);
}

typedef struct include {
    const shell_token *t;
    size_t n;
    bool failed, all;
    bool localities; /* this pass: the localities (else the servers) */
} include;

static int include_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const include *in = ctx;
    const char *pre, *pre_end;
    if (in->localities) {
        pre = in->failed ? "\xff\xff/management/failed_locality/" : "\xff\xff/management/excluded_locality/";
        pre_end = in->failed ? "\xff\xff/management/failed_locality0" : "\xff\xff/management/excluded_locality0";
    } else {
        pre = in->failed ? "\xff\xff/management/failed/" : "\xff\xff/management/excluded/";
        pre_end = in->failed ? "\xff\xff/management/failed0" : "\xff\xff/management/excluded0";
    }
    bool any = false;
    for (size_t i = 1; i < in->n && !in->all; i++) {
        shell_token a = in->t[i];
        if (shell_token_is(a, "all") || shell_token_is(a, "failed") || shell_is_locality(a) != in->localities)
            continue;
        char key[256];
        if (in->localities) {
            snprintf(key, sizeof key, "%s%.*s", pre, (int)a.n, a.p);
            fdb_transaction_clear(tr, (const uint8_t *)key, (int)strlen(key));
            any = true;
            continue;
        }
        char addr[128];
        shell_addr ex;
        if (!shell_exclusion_parse(a, &ex)) {
            fprintf(stderr, "ERROR: '%.*s' is neither a valid network endpoint address nor a locality\n", (int)a.n,
                    a.p);
            if (memmem(a.p, a.n, ":tls", 4))
                printf("        Do not include the `:tls' suffix when naming a process\n");
            return CMD_FAIL;
        }
        shell_exclusion_format(&ex, addr, sizeof addr);
        snprintf(key, sizeof key, "%s%s", pre, addr);
        fdb_transaction_clear(tr, (const uint8_t *)key, (int)strlen(key));
        if (ex.port == 0) { /* IP:* too */
            char b[300], end[300];
            snprintf(b, sizeof b, "%s:", key);
            snprintf(end, sizeof end, "%s;", key);
            fdb_transaction_clear_range(tr, (const uint8_t *)b, (int)strlen(b), (const uint8_t *)end, (int)strlen(end));
        }
        any = true;
    }
    if (in->all) {
        fdb_transaction_clear_range(tr, (const uint8_t *)pre, (int)strlen(pre), (const uint8_t *)pre_end,
                                    (int)strlen(pre_end));
        any = true;
    }
    if (!any)
        return CMD_OK;
    return (*e = admin_commit(tr)) ? ADMIN_ERROR : CMD_OK;
}

int shell_cmd_include(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n < 2)
        return shell_usage("include");
    include in = { t, n, false, false, false };
    for (size_t i = 1; i < n; i++) {
        if (shell_token_is(t[i], "all"))
            in.all = true;
        else if (shell_token_is(t[i], "failed"))
            in.failed = true;
    }
    int r = admin_run(s, ADMIN_WRITES, include_body, &in, err); /* servers, then localities */
    in.localities = true;
    return r == CMD_OK ? admin_run(s, ADMIN_WRITES, include_body, &in, err) : r;
}
