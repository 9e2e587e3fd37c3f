/* SPDX-License-Identifier: Apache-2.0 */
/* coordinators, as fdbcli 7.3.77 runs it (fdbcli/CoordinatorsCommand.actor.cpp), through
 * \xff\xff/configuration/coordinators/ (cluster_description, processes: a comma list,
 * config_db) and \xff\xff/management/auto_coordinators:
 *   coordinators              "Cluster description: D", "Cluster coordinators (N): LIST" and
 *                             the pointer to `help coordinators'
 *   coordinators [auto|<ADDRESS|HOSTNAME>+] [description=D] [--no-config-db]
 *       the first description= sets cluster_description, --no-config-db sets config_db; `auto'
 *       alone writes the recommended list (read once); else the addresses (NetworkAddress
 *       parse and print; hostnames as given) joined with ',' ("is not a valid network endpoint
 *       address" and "passed redundant coordinators" end the command without failing it).
 *       The commit answers through the management error message: "No change (existing
 *       configuration satisfies request)" prints "No change ..." or, after a retried commit
 *       (a change answers commit_unknown_result), "Coordination state changed"; "Too few
 *       fdbserver machines ..." is retried once after 1 s; any other message is "ERROR: <msg>". */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "address.h"
#include "error_codes.h"

#define COORD "\xff\xff/configuration/coordinators/"
#define COORD_DESC COORD "cluster_description"
#define COORD_PROCS COORD "processes"
#define COORD_CONFIG_DB COORD "config_db"
#define COORD_AUTO "\xff\xff/management/auto_coordinators"
#define MSG_SAME "No change (existing configuration satisfies request)"
#define MSG_NOT_ENOUGH "Too few fdbserver machines to provide coordination at the current redundancy level"

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

typedef struct change {
    shell_token desc; /* empty: not changed */
    bool no_config_db;
    bool automatic;
    char *list;     /* the new processes (NULL: not written, or `auto') */
    char *auto_str; /* auto_coordinators, once read */
    int retries;    /* attempts after on_error */
    int not_enough; /* NOT_ENOUGH_MACHINES answers retried */
    bool failed;    /* the last attempt went to on_error */
} change;

/* the management message of a failed commit: CMD_OK / CMD_FAIL, or ADMIN_AGAIN */
static int answer(FDBTransaction *tr, change *c)
{
    char *m = admin_error_message(tr);
    int r = CMD_FAIL;
    if (m && strcmp(m, MSG_NOT_ENOUGH) == 0 && c->not_enough < 1) {
        /* the cluster controller may be updating its worker list: once more after 1 s */
        c->not_enough++;
        nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
        fdb_transaction_reset(tr);
        r = ADMIN_AGAIN;
    } else if (m && strcmp(m, MSG_SAME) == 0) {
        printf(c->retries ? "Coordination state changed\n" : "No change (existing configuration satisfies request)\n");
        r = CMD_OK;
    } else {
        fflush(stdout);
        fprintf(stderr, "ERROR: %s\n", m ? m : "");
    }
    free(m);
    return r;
}

static int change_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    change *c = ctx;
    if (c->failed)
        c->retries++;
    c->failed = false;
    if (c->desc.n)
        fdb_transaction_set(tr, (const uint8_t *)COORD_DESC, (int)SL(COORD_DESC), (const uint8_t *)c->desc.p,
                            (int)c->desc.n);
    if (c->no_config_db)
        fdb_transaction_set(tr, (const uint8_t *)COORD_CONFIG_DB, (int)SL(COORD_CONFIG_DB), (const uint8_t *)"", 0);
    const char *procs = c->list;
    if (c->automatic) {
        bool present = false;
        if (!c->auto_str && !(*e = admin_get(tr, COORD_AUTO, SL(COORD_AUTO), &present, &c->auto_str, NULL)) &&
            !present)
            *e = CFDB_ERR_INTERNAL_ERROR; /* fdbcli asserts the key is there */
        procs = c->auto_str;
    }
    if (!*e && procs)
        fdb_transaction_set(tr, (const uint8_t *)COORD_PROCS, (int)SL(COORD_PROCS), (const uint8_t *)procs,
                            (int)strlen(procs));
    if (!*e)
        *e = admin_commit(tr);
    if (!*e)
        return CMD_OK; /* fdbcli asserts a change never commits: it answers 1021 or a message */
    if (*e == CFDB_ERR_SPECIAL_KEYS_API_FAILURE)
        return answer(tr, c);
    c->failed = true;
    return ADMIN_ERROR;
}

/* The new list from the address tokens: CMD_OK with c->list set, or after fdbcli's message
 * (the command still succeeds, as fdbcli's returns true there). */
static int new_list(const shell_token *t, size_t n, change *c)
{
    size_t cap = 1;
    for (size_t i = 0; i < n; i++)
        cap += t[i].n + 80;
    char *list = calloc(1, cap), *end = list;
    if (!list)
        return CMD_FAIL;
    for (size_t i = 0; i < n; i++) {
        char item[320];
        shell_addr a;
        if (shell_is_hostname(t[i])) {
            shell_token s = t[i];
            bool tls = s.n > 4 && memcmp(s.p + s.n - 4, ":tls", 4) == 0;
            snprintf(item, sizeof item, "%.*s%s", (int)(s.n - (tls ? 4 : 0)), s.p, tls ? ":tls" : "");
        } else if (shell_addr_parse(t[i], &a)) {
            shell_addr_format(&a, item, sizeof item);
        } else {
            fprintf(stderr, "ERROR: '%.*s' is not a valid network endpoint address\n", (int)t[i].n, t[i].p);
            free(list);
            return CMD_OK;
        }
        size_t il = strlen(item);
        for (const char *p = list; *p;) { /* the items so far */
            const char *comma = strchr(p, ',');
            size_t pl = comma ? (size_t)(comma - p) : strlen(p);
            if (pl == il && memcmp(p, item, il) == 0) {
                fprintf(stderr, "ERROR: passed redundant coordinators: `%s'\n", item);
                free(list);
                return CMD_OK;
            }
            p += pl + (comma != NULL);
        }
        end += sprintf(end, "%s%s", end == list ? "" : ",", item);
    }
    c->list = list;
    return CMD_OK;
}

int shell_cmd_coordinators(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1)
        return admin_run(s, 0, print_body, NULL, err);
    change c = { { NULL, 0 }, false, false, NULL, NULL, 0, 0, false };
    shell_token *rest = malloc(n * sizeof *rest);
    if (!rest)
        return CMD_FAIL;
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (c.desc.n == 0 && t[i].n >= 12 && memcmp(t[i].p, "description=", 12) == 0)
            c.desc = (shell_token){ t[i].p + 12, t[i].n - 12 };
        else if (t[i].n >= 14 && memcmp(t[i].p, "--no-config-db", 14) == 0)
            c.no_config_db = true;
        else
            rest[m++] = t[i];
    }
    c.automatic = m == 1 && shell_token_is(rest[0], "auto");
    int r = CMD_OK;
    if (!c.automatic && m > 0)
        r = new_list(rest, m, &c);
    if (r == CMD_OK && (c.automatic || m == 0 || c.list))
        r = admin_run(s, ADMIN_WRITES | ADMIN_NO_MESSAGE, change_body, &c, err);
    free(rest);
    free(c.list);
    free(c.auto_str);
    return r;
}
