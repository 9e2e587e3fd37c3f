/* SPDX-License-Identifier: Apache-2.0 */
/* kill, suspend and expensive_data_check, as fdbcli 7.3.77 runs them (fdbcli/KillCommand,
 * SuspendCommand, ExpensiveDataCheckCommand.actor.cpp, getWorkerInterfaces in Util.actor.cpp):
 *   <cmd>                  reads \xff\xff/worker_interfaces/ in the shell's transaction (with
 *                          \xff\xff/management/options/worker_interfaces/verify set, then cleared)
 *                          into the session's list of addresses (key after the prefix, ":tls"
 *                          removed; sorted, unique) and prints it
 *   kill|expensive_data_check list           prints the list as it is
 *   kill|expensive_data_check all            every listed address in one reboot request
 *   kill|expensive_data_check <ADDRESS...>   listed addresses only ("not recognized" else)
 *   suspend <SECONDS> <ADDRESS...>           the same, suspended for (int) SECONDS
 * A request is fdb_database_reboot_worker(comma-joined addresses, check, duration):
 * kill (check 0, 0 s; after naming addresses fdbcli waits 3 s before its message),
 * expensive_data_check (check 1, 0 s), suspend (check 0, SECONDS); its answer 0 means the
 * requests were not sent. The secondary addresses fdbcli also takes from each
 * ClientWorkerInterface value are not added (cfdb-server's workers have none). */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "printing.h"

#define WI "\xff\xff/worker_interfaces/"
#define WI_END "\xff\xff/worker_interfaces0"
#define VERIFY "\xff\xff/management/options/worker_interfaces/verify"
#define TOO_MANY 1000000

void shell_workers_clear(shell *s)
{
    for (size_t i = 0; i < s->nworkers; i++)
        free(s->workers[i]);
    free(s->workers);
    s->workers = NULL;
    s->nworkers = 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* getWorkerInterfaces(tr, verify = true) into s->workers */
static fdb_error_t read_workers(shell *s)
{
    shell_workers_clear(s);
    fdb_error_t e = shell_get_mgmt_tr(s);
    if (e)
        return e;
    FDBTransaction *tr = s->tr;
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, (const uint8_t *)VERIFY, (int)SL(VERIFY), (const uint8_t *)"", 0);
    FDBFuture *f;
    const FDBKeyValue *kv;
    int n;
    if ((e = admin_range(tr, WI, SL(WI), WI_END, SL(WI_END), TOO_MANY, &f, &kv, &n)))
        return e;
    fdb_transaction_clear(tr, (const uint8_t *)VERIFY, (int)SL(VERIFY));
    s->workers = calloc((size_t)n + 1, sizeof *s->workers);
    for (int i = 0; s->workers && i < n; i++) {
        size_t l = (size_t)kv[i].key_length - SL(WI);
        const char *a = (const char *)kv[i].key + SL(WI);
        if (l >= 4 && memcmp(a + l - 4, ":tls", 4) == 0)
            l -= 4;
        if (!(s->workers[s->nworkers] = strndup(a, l)))
            break;
        s->nworkers++;
    }
    fdb_future_destroy(f);
    qsort(s->workers, s->nworkers, sizeof *s->workers, by_name);
    size_t u = 0; /* a map: one entry per address */
    for (size_t i = 0; i < s->nworkers; i++) {
        if (u && strcmp(s->workers[u - 1], s->workers[i]) == 0)
            free(s->workers[i]);
        else
            s->workers[u++] = s->workers[i];
    }
    s->nworkers = u;
    return 0;
}

static void print_workers(const shell *s, const char *able)
{
    if (s->nworkers == 0)
        printf("\nNo addresses can be %s.\n", able);
    else if (s->nworkers == 1)
        printf("\nThe following address can be %s:\n", able);
    else
        printf("\nThe following %zu addresses can be %s:\n", s->nworkers, able);
    for (size_t i = 0; i < s->nworkers; i++) {
        shell_print_printable(stdout, (const uint8_t *)s->workers[i], strlen(s->workers[i]));
        printf("\n");
    }
    printf("\n");
}

/* every token from t[from] on must be a listed address */
static bool all_listed(const shell *s, const shell_token *t, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++) {
        bool found = false;
        for (size_t k = 0; k < s->nworkers && !found; k++)
            found = strlen(s->workers[k]) == t[i].n && memcmp(s->workers[k], t[i].p, t[i].n) == 0;
        if (!found) {
            fflush(stdout);
            fprintf(stderr, "ERROR: process `");
            shell_print_printable(stderr, (const uint8_t *)t[i].p, t[i].n);
            fprintf(stderr, "' not recognized.\n");
            return false;
        }
    }
    return true;
}

/* names joined with ',' (malloc'd): the tokens from t[from], or every listed address */
static char *joined(const shell *s, const shell_token *t, size_t from, size_t n)
{
    size_t len = 1, count = t ? n - from : s->nworkers;
    for (size_t i = 0; i < count; i++)
        len += (t ? t[from + i].n : strlen(s->workers[i])) + 1;
    char *out = malloc(len), *o = out;
    for (size_t i = 0; out && i < count; i++) {
        size_t l = t ? t[from + i].n : strlen(s->workers[i]);
        if (i)
            *o++ = ',';
        memcpy(o, t ? t[from + i].p : s->workers[i], l);
        o += l;
    }
    if (out)
        *o = 0;
    return out;
}

/* fdb_database_reboot_worker: 0 with *sent, or an error */
static fdb_error_t reboot(shell *s, const char *addrs, bool check, int duration, bool *sent)
{
    FDBFuture *f = fdb_database_reboot_worker(s->db, (const uint8_t *)addrs, (int)strlen(addrs), check, duration);
    fdb_error_t e = shell_wait(f);
    int64_t v = 0;
    if (!e)
        e = fdb_future_get_int64(f, &v);
    fdb_future_destroy(f);
    *sent = v != 0;
    return e;
}

/* The texts of kill and expensive_data_check (the ’ are fdbcli's). */
typedef struct reboot_cmd {
    const char *able;       /* "No addresses can be <able>." */
    bool check;             /* the reboot request's checkData */
    bool empty_all_fails;   /* `all' with an empty list is an error (kill) or not */
    const char *empty_all;  /* `all' with an empty list */
    const char *all_failed; /* `all': the requests were not sent */
    const char *failed;     /* addresses (%s: joined): the requests were not sent */
    const char *done;       /* %zu: the number of addresses */
    unsigned settle_s;      /* a wait after naming addresses, before the message */
} reboot_cmd;

static int reboot_command(shell *s, const reboot_cmd *c, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1 && (*err = read_workers(s)))
        return CMD_FDB;
    if (n == 1 || shell_token_is(t[1], "list")) {
        print_workers(s, c->able);
        return CMD_OK;
    }
    bool all = shell_token_is(t[1], "all");
    if (all && s->nworkers == 0) {
        fputs(c->empty_all, stderr);
        return c->empty_all_fails ? CMD_FAIL : CMD_OK;
    }
    if (!all && !all_listed(s, t, 1, n))
        return CMD_FAIL;
    char *addrs = all ? joined(s, NULL, 0, 0) : joined(s, t, 1, n);
    bool sent = false;
    *err = addrs ? reboot(s, addrs, c->check, 0, &sent) : 0;
    int r = CMD_OK;
    if (!addrs || *err) {
        r = addrs ? CMD_FDB : CMD_FAIL;
    } else if (!sent) {
        fflush(stdout);
        if (all)
            fputs(c->all_failed, stderr);
        else
            fprintf(stderr, c->failed, addrs);
        r = CMD_FAIL;
    } else {
        if (!all && c->settle_s)
            nanosleep(&(struct timespec){ .tv_sec = c->settle_s }, NULL);
        printf(c->done, all ? s->nworkers : n - 1);
    }
    free(addrs);
    return r;
}

int shell_cmd_kill(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    static const reboot_cmd kill = {
        "killed",
        false,
        true,
        "ERROR: no processes to kill. You must run the `kill\u2019 command before running `kill all\u2019.\n",
        "ERROR: failed to send requests to all processes, please run the `kill\u2019 command again to fetch latest "
        "addresses.\n",
        "ERROR: failed to send requests to kill processes `%s', please run the `kill\u2019 command again to fetch "
        "latest addresses.\n",
        "Attempted to kill %zu processes\n",
        3,
    };
    return reboot_command(s, &kill, t, n, err);
}

int shell_cmd_expensive_data_check(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    static const reboot_cmd check = {
        "checked",
        true,
        false,
        "ERROR: no processes to check. You must run the `expensive_data_check\u2019 command before running "
        "`expensive_data_check all\u2019.\n",
        "ERROR: failed to send requests to check all processes, please run the `expensive_data_check\u2019 command "
        "again to fetch latest addresses.\n",
        "ERROR: failed to send requests to check processes `%s', please run the `expensive_data_check\u2019 command "
        "again to fetch latest addresses.\n",
        "Attempted to kill and check %zu processes\n",
        0,
    };
    return reboot_command(s, &check, t, n, err);
}

int shell_cmd_suspend(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1) {
        if ((*err = read_workers(s)))
            return CMD_FDB;
        print_workers(s, "suspended");
        return CMD_OK;
    }
    if (n == 2 || !all_listed(s, t, 2, n))
        return n == 2 ? shell_usage("suspend") : CMD_FAIL;
    char buf[64];
    double seconds = 0;
    int used = 0;
    if (t[1].n >= sizeof buf)
        return shell_usage("suspend");
    memcpy(buf, t[1].p, t[1].n);
    buf[t[1].n] = 0;
    if (sscanf(buf, "%lf%n", &seconds, &used) != 1 || (size_t)used != t[1].n)
        return shell_usage("suspend");
    char *addrs = joined(s, t, 2, n);
    if (!addrs)
        return CMD_FAIL;
    bool sent = false;
    int r = CMD_OK;
    if ((*err = reboot(s, addrs, false, (int)seconds, &sent))) {
        r = CMD_FDB;
    } else if (!sent) {
        fflush(stdout);
        fprintf(stderr,
                "ERROR: failed to send requests to suspend processes `%s', please run the `suspend\u2019 command to "
                "fetch latest addresses.\n",
                addrs);
        r = CMD_FAIL;
    } else {
        printf("Attempted to suspend %zu processes\n", n - 2);
    }
    free(addrs);
    return r;
}
