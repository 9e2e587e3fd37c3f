/* SPDX-License-Identifier: Apache-2.0 */
/* exclude (listing) and include, as fdbcli 7.3.77 runs them (fdbcli/ExcludeCommand.actor.cpp,
 * IncludeCommand.actor.cpp) through \xff\xff/management/excluded/, excluded_locality/,
 * failed/ and failed_locality/ (the key after the prefix is the address or locality):
 *   exclude                   lists the four ranges, each read in a transaction of its own
 *                             (fdbcli's getExcludedServers / getExcludedLocalities ...)
 *   include all|failed|<ADDRESS...>|locality_<K>:<V>   clears them: servers, then localities,
 *                             each in a transaction of its own; a whole machine (IP) takes its
 *                             IP:* entries with it. */
#define _GNU_SOURCE /* memmem */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "cfdb/errors.h"

/* ---- exclude (listing) ---- */

typedef struct suffixes {
    const char *b, *e; /* the range */
    char *list;        /* the keys after b, NUL-separated, malloc'd */
    size_t count;
} suffixes;

static int list_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    suffixes *l = ctx;
    FDBFuture *f;
    const FDBKeyValue *kv;
    int n;
    if ((*e = admin_range(tr, l->b, strlen(l->b), l->e, strlen(l->e), 0, &f, &kv, &n)))
        return ADMIN_ERROR;
    size_t total = 1, pl = strlen(l->b);
    for (int i = 0; i < n; i++)
        total += (size_t)kv[i].key_length - pl + 1;
    free(l->list);
    if ((l->list = malloc(total)) != NULL) {
        size_t o = 0;
        for (int i = 0; i < n; i++) {
            memcpy(l->list + o, kv[i].key + pl, (size_t)kv[i].key_length - pl);
            o += (size_t)kv[i].key_length - pl;
            l->list[o++] = 0;
        }
        l->count = (size_t)n;
    }
    fdb_future_destroy(f);
    *e = l->list ? 0 : CFDB_ERR_INTERNAL_ERROR;
    return l->list ? CMD_OK : CMD_FDB;
}

static void print_list(const suffixes *l)
{
    const char *p = l->list;
    for (size_t i = 0; i < l->count; i++, p += strlen(p) + 1)
        printf("  %s\n", p);
}

static int exclude_list(shell *s, fdb_error_t *err)
{
    suffixes l[4] = {
        { "\xff\xff/management/excluded/", "\xff\xff/management/excluded0", NULL, 0 },
        { "\xff\xff/management/excluded_locality/", "\xff\xff/management/excluded_locality0", NULL, 0 },
        { "\xff\xff/management/failed/", "\xff\xff/management/failed0", NULL, 0 },
        { "\xff\xff/management/failed_locality/", "\xff\xff/management/failed_locality0", NULL, 0 },
    };
    int r = CMD_OK;
    for (int i = 0; i < 4 && r == CMD_OK; i++)
        r = admin_run(s, 0, list_body, &l[i], err);
    if (r != CMD_OK) {
    } else if (!l[0].count && !l[1].count && !l[2].count && !l[3].count) {
        printf("There are currently no servers or localities excluded from the database.\n"
               "To learn how to exclude a server, type `help exclude'.\n");
    } else {
        printf("There are currently %zu servers or localities being excluded from the database:\n",
               l[0].count + l[1].count);
        print_list(&l[0]);
        print_list(&l[1]);
        if (l[0].count || l[1].count)
            printf("To find out whether it is safe to remove one or more of these\n"
                   "servers from the cluster, type `exclude <addresses>'.\n"
                   "To return one of these servers to the cluster, type `include <addresses>'.\n");
        printf("\n");
        printf("There are currently %zu servers or localities marked as failed in the database:\n",
               l[2].count + l[3].count);
        print_list(&l[2]);
        print_list(&l[3]);
        if (l[2].count || l[3].count)
            printf("To return one of these servers to the cluster, type `include failed <addresses>'.\n");
    }
    for (int i = 0; i < 4; i++)
        free(l[i].list);
    return r;
}

int shell_cmd_exclude(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)t;
    if (n > 1) {
        fprintf(stderr, "ERROR: cfdb's shell lists exclusions only (exclusions through the special keys: "
                        "\\xff\\xff/management/excluded/ with options/excluded/force)\n");
        return CMD_FAIL;
    }
    return exclude_list(s, err);
}

/* ---- include ---- */

/* AddressExclusion::parse: "IP" (a whole machine) or "IP:port" ("[v6]:port"), no ":tls" */
static bool exclusion_address(shell_token t, char *out, size_t cap, bool *whole)
{
    char buf[128];
    if (t.n == 0 || t.n >= sizeof buf || memchr(t.p, 0, t.n))
        return false;
    memcpy(buf, t.p, t.n);
    buf[t.n] = 0;
    uint8_t ip[16];
    if (inet_pton(AF_INET, buf, ip) == 1 || inet_pton(AF_INET6, buf, ip) == 1) {
        *whole = true;
        return inet_ntop(strchr(buf, ':') ? AF_INET6 : AF_INET, ip, out, (socklen_t)cap) != NULL;
    }
    *whole = false;
    char *colon = strrchr(buf, ':');
    if (!colon || strstr(buf, ":tls"))
        return false;
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || colon[1] == 0 || port > 65535)
        return false;
    *colon = 0;
    char *host = buf;
    bool v6 = false;
    if (host[0] == '[' && colon > host && colon[-1] == ']') {
        host++;
        colon[-1] = 0;
        v6 = true;
    }
    char canon[64];
    if (inet_pton(v6 ? AF_INET6 : AF_INET, host, ip) != 1 || !inet_ntop(v6 ? AF_INET6 : AF_INET, ip, canon, sizeof canon))
        return false;
    snprintf(out, cap, v6 ? "[%s]:%lu" : "%s:%lu", canon, port);
    return true;
}

static bool is_locality(shell_token t)
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
        if (shell_token_is(a, "all") || shell_token_is(a, "failed") || is_locality(a) != in->localities)
            continue;
        char key[256];
        if (in->localities) {
            snprintf(key, sizeof key, "%s%.*s", pre, (int)a.n, a.p);
            fdb_transaction_clear(tr, (const uint8_t *)key, (int)strlen(key));
            any = true;
            continue;
        }
        char addr[128];
        bool whole = false;
        if (!exclusion_address(a, addr, sizeof addr, &whole)) {
            fprintf(stderr, "ERROR: '%.*s' is neither a valid network endpoint address nor a locality\n", (int)a.n,
                    a.p);
            if (memmem(a.p, a.n, ":tls", 4))
                printf("        Do not include the `:tls' suffix when naming a process\n");
            return CMD_FAIL;
        }
        snprintf(key, sizeof key, "%s%s", pre, addr);
        fdb_transaction_clear(tr, (const uint8_t *)key, (int)strlen(key));
        if (whole) { /* IP:* too */
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
