/* SPDX-License-Identifier: Apache-2.0 */
/* Database management commands of the cfdb shell, as fdbcli 7.3.77 runs them through the
 * special key space (fdbcli/LockCommand.actor.cpp, MaintenanceCommand.actor.cpp,
 * CoordinatorsCommand.actor.cpp, ConfigureCommand.actor.cpp, the unlock passphrase in
 * fdbcli.actor.cpp):
 *   lock                      a random UID to \xff\xff/management/db_locked
 *   unlock <UID>              after the passphrase is repeated, clears it if it holds UID
 *   maintenance [on ZONE SECONDS | off]   \xff\xff/management/maintenance/
 *   coordinators              prints \xff\xff/configuration/coordinators/ (changing them is
 *                             not done by cfdb: the special key commit answers 2108)
 *   configure tenant_mode=... \xff/conf/tenant_mode (the only configuration cfdb's shell
 *                             changes; anything else prints the usage, as an unknown option)
 *   exclude                   lists \xff\xff/management/excluded/, excluded_locality/, failed/,
 *                             failed_locality/ (excluding addresses needs the worker list and
 *                             in_progress_exclusion/, which cfdb does not have: not in the shell)
 *   include all|failed|<ADDRESS...>   clears them (whole machines: IP and IP:*)
 * Each runs in a transaction of its own with fdbcli's retry loop (on_error). */
#define _GNU_SOURCE /* memmem */
#include "admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include "cfdb/errors.h"
#include "json.h"

#define LOCK_KEY "\xff\xff/management/db_locked"
#define MAINT "\xff\xff/management/maintenance/"
#define MAINT_END "\xff\xff/management/maintenance0"
#define IGNORE_SS MAINT "IgnoreSSFailures"
#define COORD_DESC "\xff\xff/configuration/coordinators/cluster_description"
#define COORD_PROCS "\xff\xff/configuration/coordinators/processes"
#define SL(x) (sizeof(x) - 1)

fdb_error_t admin_get(FDBTransaction *tr, const char *key, size_t klen, bool *present, char **value, size_t *vlen)
{
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)key, (int)klen, 0);
    fdb_error_t e = shell_wait(f);
    fdb_bool_t p = 0;
    const uint8_t *v = NULL;
    int n = 0;
    if (!e)
        e = fdb_future_get_value(f, &p, &v, &n);
    *present = !e && p;
    if (value)
        *value = NULL;
    if (*present && value) {
        *value = malloc((size_t)n + 1);
        if (!*value) {
            e = CFDB_ERR_INTERNAL_ERROR;
            *present = false;
        } else {
            memcpy(*value, v, (size_t)n);
            (*value)[n] = 0;
            if (vlen)
                *vlen = (size_t)n;
        }
    }
    fdb_future_destroy(f);
    return e;
}

fdb_error_t admin_commit(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_commit(tr);
    fdb_error_t e = shell_wait(f);
    fdb_future_destroy(f);
    return e;
}

void admin_random_uid(char *buf)
{
    uint8_t r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        for (size_t i = 0; i < sizeof r; i++)
            r[i] = (uint8_t)rand();
    for (int i = 0; i < 16; i++)
        snprintf(buf + 2 * i, 3, "%02x", r[i]);
}

/* getSpecialKeysFailureErrorMessage: the "message" of \xff\xff/error_message. */
char *admin_error_message(FDBTransaction *tr)
{
    bool present = false;
    char *v = NULL;
    size_t n = 0;
    if (admin_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), &present, &v, &n) || !present)
        return NULL;
    shell_json *j = shell_json_parse(v, n);
    free(v);
    const shell_json *m = j ? shell_json_get(j, "message") : NULL;
    char *out = m && m->type == JSON_STRING ? strndup(m->text, m->len) : NULL;
    shell_json_free(j);
    return out;
}

int admin_on_error(FDBTransaction *tr, fdb_error_t e, const char *prefix, fdb_error_t *err)
{
    if (e == CFDB_ERR_SPECIAL_KEYS_API_FAILURE) {
        char *m = admin_error_message(tr);
        fflush(stdout);
        fprintf(stderr, "%s%s\n", prefix ? prefix : "", m ? m : "");
        free(m);
        return CMD_FAIL;
    }
    FDBFuture *f = fdb_transaction_on_error(tr, e);
    fdb_error_t oe = shell_wait(f);
    fdb_future_destroy(f);
    if (!oe)
        return ADMIN_RETRY;
    *err = oe;
    return CMD_FDB;
}

static FDBTransaction *new_tr(shell *s, fdb_error_t *err)
{
    FDBTransaction *tr = NULL;
    *err = fdb_database_create_transaction(s->db, &tr);
    return *err ? NULL : tr;
}

static void enable_writes(FDBTransaction *tr)
{
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
}

/* ---- lock / unlock ---- */

int shell_cmd_lock(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)t;
    if (n != 1)
        return shell_usage("lock");
    char uid[33];
    admin_random_uid(uid);
    printf("Locking database with lockUID: %s\n", uid);
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r;
    for (;;) {
        enable_writes(tr);
        fdb_transaction_set(tr, (const uint8_t *)LOCK_KEY, (int)SL(LOCK_KEY), (const uint8_t *)uid, 32);
        fdb_error_t e = admin_commit(tr);
        if (!e) {
            printf("Database locked.\n");
            r = CMD_OK;
            break;
        }
        if (e == CFDB_ERR_DATABASE_LOCKED) { /* thrown to the command loop */
            *err = e;
            r = CMD_FDB;
            break;
        }
        if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    return r;
}

static int unlock_database(shell *s, const char *uid, fdb_error_t *err)
{
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r;
    for (;;) {
        enable_writes(tr);
        bool present = false;
        char *v = NULL;
        fdb_error_t e = admin_get(tr, LOCK_KEY, SL(LOCK_KEY), &present, &v, NULL);
        if (!e && !present) {
            r = CMD_OK;
            break;
        }
        if (!e && strcasecmp(v, uid) != 0) {
            free(v);
            printf("Unable to unlock database. Make sure to unlock with the correct lock UID.\n");
            r = CMD_FAIL;
            break;
        }
        free(v);
        if (!e) {
            fdb_transaction_clear(tr, (const uint8_t *)LOCK_KEY, (int)SL(LOCK_KEY));
            e = admin_commit(tr);
        }
        if (!e) {
            printf("Database unlocked.\n");
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    return r;
}

int shell_cmd_unlock(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    bool hex = n == 2 && t[1].n == 32;
    for (size_t i = 0; hex && i < 32; i++)
        hex = strchr("0123456789abcdefABCDEF", t[1].p[i]) != NULL && t[1].p[i];
    if (!hex)
        return shell_usage("unlock");
    /* a random passphrase of 10 letters and digits, to be typed back */
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    uint8_t r[10];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        for (size_t i = 0; i < sizeof r; i++)
            r[i] = (uint8_t)rand();
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
    return unlock_database(s, uid, err);
}

/* ---- maintenance ---- */

static const char ss_failures_msg[] = "ERROR: Maintenance mode cannot be used while data distribution is disabled for "
                                      "storage server failures. Use 'datadistribution on' to reenable data "
                                      "distribution.\n";

/* The maintenance rows (at most one): 0 or an error; *key / *value malloc'd or NULL. */
static fdb_error_t maintenance_row(FDBTransaction *tr, char **key, size_t *klen, char **value)
{
    *key = *value = NULL;
    FDBFuture *f = fdb_transaction_get_range(tr, (const uint8_t *)MAINT, (int)SL(MAINT), 0, 1,
                                             (const uint8_t *)MAINT_END, (int)SL(MAINT_END), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    fdb_error_t e = shell_wait(f);
    const FDBKeyValue *kv;
    int n = 0;
    fdb_bool_t more;
    if (!e)
        e = fdb_future_get_keyvalue_array(f, &kv, &n, &more);
    if (!e && n > 0) {
        *key = malloc((size_t)kv[0].key_length + 1);
        *value = malloc((size_t)kv[0].value_length + 1);
        if (*key && *value) {
            memcpy(*key, kv[0].key, (size_t)kv[0].key_length);
            (*key)[kv[0].key_length] = 0;
            *klen = (size_t)kv[0].key_length;
            memcpy(*value, kv[0].value, (size_t)kv[0].value_length);
            (*value)[kv[0].value_length] = 0;
        }
    }
    fdb_future_destroy(f);
    return e;
}

static int maintenance_print(shell *s, fdb_error_t *err)
{
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r;
    for (;;) {
        enable_writes(tr);
        char *k, *v;
        size_t kl = 0;
        fdb_error_t e = maintenance_row(tr, &k, &kl, &v);
        if (!e) {
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
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    return r;
}

/* setHealthyZone (on) / clearHealthyZone (off) */
static int maintenance_change(shell *s, const shell_token *zone, double seconds, fdb_error_t *err)
{
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r;
    for (;;) {
        enable_writes(tr);
        char *k, *v;
        size_t kl = 0;
        fdb_error_t e = maintenance_row(tr, &k, &kl, &v);
        bool ignoring = !e && k && strcmp(k, IGNORE_SS) == 0;
        free(k);
        free(v);
        if (ignoring) {
            fflush(stdout);
            fputs(ss_failures_msg, stderr);
            r = CMD_FAIL;
            break;
        }
        if (!e && zone) {
            char key[512], val[64];
            size_t zl = zone->n < sizeof key - SL(MAINT) ? zone->n : sizeof key - SL(MAINT);
            memcpy(key, MAINT, SL(MAINT));
            memcpy(key + SL(MAINT), zone->p, zl);
            snprintf(val, sizeof val, "%.17g", seconds); /* boost::lexical_cast<std::string>(double) */
            fdb_transaction_set(tr, (const uint8_t *)key, (int)(SL(MAINT) + zl), (const uint8_t *)val,
                                (int)strlen(val));
        } else if (!e) {
            fdb_transaction_clear_range(tr, (const uint8_t *)MAINT, (int)SL(MAINT), (const uint8_t *)MAINT_END,
                                        (int)SL(MAINT_END));
        }
        if (!e)
            e = admin_commit(tr);
        if (!e) {
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    return r;
}

int shell_cmd_maintenance(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1)
        return maintenance_print(s, err);
    if (n == 2 && shell_token_is(t[1], "off"))
        return maintenance_change(s, NULL, 0, err);
    if (n == 4 && shell_token_is(t[1], "on")) {
        char buf[64];
        double seconds;
        int used = 0;
        if (t[3].n < sizeof buf) {
            memcpy(buf, t[3].p, t[3].n);
            buf[t[3].n] = 0;
            if (sscanf(buf, "%lf%n", &seconds, &used) == 1 && (size_t)used == t[3].n)
                return maintenance_change(s, &t[2], seconds, err);
        }
    }
    return shell_usage("maintenance");
}

/* ---- coordinators ---- */

int shell_cmd_coordinators(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)t;
    if (n > 1) {
        /* changing coordinators: the configuration module's commit, which cfdb does not do */
        FDBTransaction *tr = new_tr(s, err);
        if (!tr)
            return CMD_FDB;
        enable_writes(tr);
        char list[1024] = "";
        for (size_t i = 1; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%.*s", i > 1 ? "," : "", (int)t[i].n,
                     t[i].p);
        fdb_transaction_set(tr, (const uint8_t *)COORD_PROCS, (int)SL(COORD_PROCS), (const uint8_t *)list,
                            (int)strlen(list));
        fdb_error_t e = admin_commit(tr);
        int r = CMD_OK;
        if (e == CFDB_ERR_SPECIAL_KEYS_API_FAILURE) {
            r = admin_on_error(tr, e, "ERROR: ", err);
        } else if (e) {
            *err = e; /* 2108: cfdb does not change coordinators through the special keys */
            r = CMD_FDB;
        }
        fdb_transaction_destroy(tr);
        return r;
    }
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r;
    for (;;) {
        bool p1 = false, p2 = false;
        char *desc = NULL, *procs = NULL;
        fdb_error_t e = admin_get(tr, COORD_DESC, SL(COORD_DESC), &p1, &desc, NULL);
        if (!e)
            e = admin_get(tr, COORD_PROCS, SL(COORD_PROCS), &p2, &procs, NULL);
        if (!e) {
            size_t count = 1;
            for (const char *c = procs ? procs : ""; *c; c++)
                count += *c == ',';
            printf("Cluster description: %s\n", desc ? desc : "");
            printf("Cluster coordinators (%zu): %s\n", count, procs ? procs : "");
            printf("Type `help coordinators' to learn how to change this information.\n");
            r = CMD_OK;
        }
        free(desc);
        free(procs);
        if (!e)
            break;
        if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    return r;
}

/* ---- configure tenant_mode= ---- */

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
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r;
    for (;;) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
        fdb_transaction_set_option(tr, FDB_TR_OPTION_LOCK_AWARE, NULL, 0);
        fdb_transaction_set_option(tr, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE, NULL, 0);
        char v[2] = { (char)('0' + mode), 0 };
        fdb_transaction_set(tr, (const uint8_t *)"\xff/conf/tenant_mode", (int)SL("\xff/conf/tenant_mode"),
                            (const uint8_t *)v, 1);
        fdb_error_t e = admin_commit(tr);
        if (!e) {
            printf("Configuration changed\n");
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    return r;
}

/* ---- exclude (listing) / include ---- */

/* The keys of one special range, after its prefix, into a NUL-separated list. */
static fdb_error_t list_suffixes(FDBTransaction *tr, const char *b, const char *e, char **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    FDBFuture *f = fdb_transaction_get_range(tr, (const uint8_t *)b, (int)strlen(b), 0, 1, (const uint8_t *)e,
                                             (int)strlen(e), 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    fdb_error_t err = shell_wait(f);
    const FDBKeyValue *kv;
    int n = 0;
    fdb_bool_t more;
    if (!err)
        err = fdb_future_get_keyvalue_array(f, &kv, &n, &more);
    size_t total = 1, pl = strlen(b);
    for (int i = 0; !err && i < n; i++)
        total += (size_t)kv[i].key_length - pl + 1;
    if (!err && (*out = malloc(total)) != NULL) {
        size_t o = 0;
        for (int i = 0; i < n; i++) {
            memcpy(*out + o, kv[i].key + pl, (size_t)kv[i].key_length - pl);
            o += (size_t)kv[i].key_length - pl;
            (*out)[o++] = 0;
        }
        *count = (size_t)n;
    } else if (!err) {
        err = CFDB_ERR_INTERNAL_ERROR;
    }
    fdb_future_destroy(f);
    return err;
}

static void print_list(const char *list, size_t n)
{
    for (size_t i = 0; i < n; i++, list += strlen(list) + 1)
        printf("  %s\n", list);
}

int shell_cmd_exclude(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)t;
    if (n > 1) {
        fprintf(stderr, "ERROR: cfdb's shell lists exclusions only (exclusions through the special keys: "
                        "\\xff\\xff/management/excluded/ with options/excluded/force)\n");
        return CMD_FAIL;
    }
    static const char *const ranges[4][2] = {
        { "\xff\xff/management/excluded/", "\xff\xff/management/excluded0" },
        { "\xff\xff/management/excluded_locality/", "\xff\xff/management/excluded_locality0" },
        { "\xff\xff/management/failed/", "\xff\xff/management/failed0" },
        { "\xff\xff/management/failed_locality/", "\xff\xff/management/failed_locality0" },
    };
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    char *lists[4] = { NULL };
    size_t counts[4] = { 0 };
    int r = CMD_OK;
    for (int i = 0; i < 4; i++) {
        for (;;) { /* each list in a retry loop of its own, as fdbcli's getters */
            fdb_error_t e = list_suffixes(tr, ranges[i][0], ranges[i][1], &lists[i], &counts[i]);
            if (!e)
                break;
            if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
                goto done;
            r = CMD_OK;
        }
    }
    if (!counts[0] && !counts[1] && !counts[2] && !counts[3]) {
        printf("There are currently no servers or localities excluded from the database.\n"
               "To learn how to exclude a server, type `help exclude'.\n");
        goto done;
    }
    printf("There are currently %zu servers or localities being excluded from the database:\n", counts[0] + counts[1]);
    print_list(lists[0], counts[0]);
    print_list(lists[1], counts[1]);
    if (counts[0] || counts[1])
        printf("To find out whether it is safe to remove one or more of these\n"
               "servers from the cluster, type `exclude <addresses>'.\n"
               "To return one of these servers to the cluster, type `include <addresses>'.\n");
    printf("\n");
    printf("There are currently %zu servers or localities marked as failed in the database:\n", counts[2] + counts[3]);
    print_list(lists[2], counts[2]);
    print_list(lists[3], counts[3]);
    if (counts[2] || counts[3])
        printf("To return one of these servers to the cluster, type `include failed <addresses>'.\n");
done:
    for (int i = 0; i < 4; i++)
        free(lists[i]);
    fdb_transaction_destroy(tr);
    return r;
}

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

int shell_cmd_include(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n < 2)
        return shell_usage("include");
    bool failed = false, all = false;
    for (size_t i = 1; i < n; i++) {
        if (shell_token_is(t[i], "all"))
            all = true;
        else if (shell_token_is(t[i], "failed"))
            failed = true;
    }
    const char *pre = failed ? "\xff\xff/management/failed/" : "\xff\xff/management/excluded/";
    const char *pre_end = failed ? "\xff\xff/management/failed0" : "\xff\xff/management/excluded0";
    const char *loc = failed ? "\xff\xff/management/failed_locality/" : "\xff\xff/management/excluded_locality/";
    const char *loc_end = failed ? "\xff\xff/management/failed_locality0" : "\xff\xff/management/excluded_locality0";
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r = CMD_OK;
    for (int pass = 0; pass < 2 && r == CMD_OK; pass++) { /* servers, then localities (two transactions) */
        for (;;) {
            enable_writes(tr);
            bool any = false;
            for (size_t i = 1; i < n && r == CMD_OK; i++) {
                if (shell_token_is(t[i], "all") || shell_token_is(t[i], "failed"))
                    continue;
                bool locality = t[i].n > 9 && memcmp(t[i].p, "locality_", 9) == 0 && memchr(t[i].p, ':', t[i].n);
                if (locality != (pass == 1) || all)
                    continue;
                char key[256];
                if (locality) {
                    snprintf(key, sizeof key, "%s%.*s", loc, (int)t[i].n, t[i].p);
                    fdb_transaction_clear(tr, (const uint8_t *)key, (int)strlen(key));
                    any = true;
                    continue;
                }
                char addr[128];
                bool whole = false;
                if (!exclusion_address(t[i], addr, sizeof addr, &whole)) {
                    fprintf(stderr, "ERROR: '%.*s' is neither a valid network endpoint address nor a locality\n",
                            (int)t[i].n, t[i].p);
                    if (memmem(t[i].p, t[i].n, ":tls", 4))
                        printf("        Do not include the `:tls' suffix when naming a process\n");
                    r = CMD_FAIL;
                    break;
                }
                snprintf(key, sizeof key, "%s%s", pre, addr);
                fdb_transaction_clear(tr, (const uint8_t *)key, (int)strlen(key));
                if (whole) { /* IP:* too */
                    char b[300], e[300];
                    snprintf(b, sizeof b, "%s:", key);
                    snprintf(e, sizeof e, "%s;", key);
                    fdb_transaction_clear_range(tr, (const uint8_t *)b, (int)strlen(b), (const uint8_t *)e,
                                                (int)strlen(e));
                }
                any = true;
            }
            if (r != CMD_OK)
                break;
            if (all) {
                if (pass == 0)
                    fdb_transaction_clear_range(tr, (const uint8_t *)pre, (int)strlen(pre), (const uint8_t *)pre_end,
                                                (int)strlen(pre_end));
                else
                    fdb_transaction_clear_range(tr, (const uint8_t *)loc, (int)strlen(loc), (const uint8_t *)loc_end,
                                                (int)strlen(loc_end));
                any = true;
            }
            if (!any)
                break;
            fdb_error_t e = admin_commit(tr);
            if (!e) {
                fdb_transaction_reset(tr);
                break;
            }
            if ((r = admin_on_error(tr, e, NULL, err)) != ADMIN_RETRY)
                break;
            r = CMD_OK;
        }
    }
    fdb_transaction_destroy(tr);
    return r;
}
