/* SPDX-License-Identifier: Apache-2.0 */
/* The shell's command table and interpreter: fdbcli's data commands with fdbcli's
 * argument checks, messages and output (fdbcli/fdbcli.actor.cpp, cli(), FoundationDB
 * 7.3.77), plus cfdb's extensions `watch', `getrangereverse' and `getrangekeysreverse'
 * (fdbcli 7.3 has no watch and no reverse range read). Status is in status.c.
 *
 * Each command returns CMD_OK, CMD_FAIL (it printed its own message: fdbcli's is_error) or
 * CMD_FDB (an fdb_error_t in *err: printed "ERROR: <description> (<code>)" on stderr, as
 * fdbcli's catch block does, and an open transaction is rolled back).
 */
#include "shell.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error_codes.h"
#include "admin.h"
#include "printing.h"

volatile sig_atomic_t shell_interrupted;

typedef int (*cmd_fn)(shell *s, const shell_token *t, size_t n, fdb_error_t *err);

typedef struct command {
    const char *name;
    const char *usage;
    const char *short_desc; /* NULL: hidden (not listed, no help) */
    const char *long_desc;
    cmd_fn fn;
} command;

static const command *find_command(shell_token name);

/* fdbcli's printUsage (fdbcli/Util.actor.cpp): on stdout. */
static int usage(const shell_token *t)
{
    const command *c = find_command(t[0]);
    printf("Usage: %s\n", c->usage);
    return CMD_FAIL;
}

/* ---- futures and transactions ---- */

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool ready;
} waiter;

static void on_ready(FDBFuture *f, void *arg)
{
    (void)f;
    waiter *w = arg;
    pthread_mutex_lock(&w->mu);
    w->ready = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

fdb_error_t shell_wait(FDBFuture *f)
{
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    fdb_error_t err = fdb_future_set_callback(f, on_ready, &w);
    if (err)
        return err;
    pthread_mutex_lock(&w.mu);
    while (!w.ready) {
        if (shell_interrupted) {
            pthread_mutex_unlock(&w.mu);
            shell_interrupted = 0;
            fdb_future_cancel(f); /* runs the callback; w must outlive it */
            pthread_mutex_lock(&w.mu);
            while (!w.ready)
                pthread_cond_wait(&w.cv, &w.mu);
            pthread_mutex_unlock(&w.mu);
            return CFDB_ERR_OPERATION_CANCELLED;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&w.cv, &w.mu, &ts);
    }
    pthread_mutex_unlock(&w.mu);
    return fdb_future_get_error(f);
}

/* fdbcli's getTransaction: a fresh transaction with the current options unless one was
 * started with `begin'. */
fdb_error_t shell_get_tr(shell *s)
{
    if (s->tr && s->intrans)
        return 0;
    if (s->tr)
        fdb_transaction_destroy(s->tr);
    s->tr = NULL;
    fdb_error_t err = fdb_database_create_transaction(s->db, &s->tr);
    if (err)
        return err;
    return shell_optset_apply(s->opts, s->tr);
}

/* fdbcli's commitTransaction: "Committed (V)" or "Nothing to commit". */
static fdb_error_t commit_tr(shell *s)
{
    FDBFuture *f = fdb_transaction_commit(s->tr);
    fdb_error_t err = shell_wait(f);
    fdb_future_destroy(f);
    if (err)
        return err;
    int64_t v = -1;
    err = fdb_transaction_get_committed_version(s->tr, &v);
    if (err)
        return err;
    if (v != -1)
        printf("Committed (%" PRId64 ")\n", v);
    else
        printf("Nothing to commit\n");
    return 0;
}

void shell_init(shell *s, FDBDatabase *db)
{
    memset(s, 0, sizeof *s);
    s->db = db;
    s->opts = &s->global_opts;
}

void shell_destroy(shell *s)
{
    if (s->tr)
        fdb_transaction_destroy(s->tr);
    shell_optset_clear(&s->global_opts);
    shell_optset_clear(&s->active_opts);
    s->tr = NULL;
    shell_workers_clear(s);
}

/* ---- commands ---- */

static void print_kv(shell *s, const uint8_t *k, int kl, const uint8_t *v, int vl)
{
    printf("`");
    shell_print_bytes(stdout, k, (size_t)kl, s->tuple_mode);
    if (v) {
        printf("' is `");
        shell_print_bytes(stdout, v, (size_t)vl, s->tuple_mode);
        printf("'\n");
    } else {
        printf("'\n");
    }
}

/* Reads key in s->tr and prints it as fdbcli's get does. */
static fdb_error_t get_and_print(shell *s, const shell_token *key)
{
    FDBFuture *f = fdb_transaction_get(s->tr, (const uint8_t *)key->p, (int)key->n, 0);
    fdb_error_t err = shell_wait(f);
    fdb_bool_t present = 0;
    const uint8_t *v = NULL;
    int vl = 0;
    if (!err)
        err = fdb_future_get_value(f, &present, &v, &vl);
    if (!err) {
        if (present) {
            print_kv(s, (const uint8_t *)key->p, (int)key->n, v, vl);
        } else {
            printf("`");
            shell_print_bytes(stdout, (const uint8_t *)key->p, key->n, s->tuple_mode);
            printf("': not found\n");
        }
    }
    fdb_future_destroy(f);
    return err;
}

static int cmd_get(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 2)
        return usage(t);
    if ((*err = shell_get_tr(s)) || (*err = get_and_print(s, &t[1])))
        return CMD_FDB;
    return CMD_OK;
}

/* strinc: drop trailing 0xff bytes, then add one to the last byte. */
static size_t strinc(const shell_token *k, uint8_t *out)
{
    size_t n = k->n;
    while (n && (uint8_t)k->p[n - 1] == 0xff)
        n--;
    memcpy(out, k->p, n);
    if (n)
        out[n - 1]++;
    return n;
}

static int range_command(shell *s, const shell_token *t, size_t n, fdb_error_t *err, bool keys_only,
                         bool reverse)
{
    if (n < 2 || n > 4)
        return usage(t);
    int limit = 25;
    if (n == 4) {
        /* fdbcli: at most 9 characters, decimal digits only ("" is 0) */
        bool valid = t[3].n <= 9;
        limit = 0;
        for (size_t i = 0; valid && i < t[3].n; i++) {
            if (t[3].p[i] < '0' || t[3].p[i] > '9')
                valid = false;
            else
                limit = limit * 10 + (t[3].p[i] - '0');
        }
        if (!valid) {
            fprintf(stderr, "ERROR: bad limit\n");
            return CMD_FAIL;
        }
    }
    const uint8_t *end;
    size_t end_n;
    uint8_t *inc = malloc(t[1].n + 1);
    if (!inc) {
        *err = CFDB_ERR_INTERNAL_ERROR;
        return CMD_FDB;
    }
    if (n >= 3) {
        end = (const uint8_t *)t[2].p;
        end_n = t[2].n;
    } else if (t[1].n == 0) {
        end = (const uint8_t *)"\xff";
        end_n = 1;
    } else if (shell_token_is(t[1], "\xff")) {
        end = (const uint8_t *)"\xff\xff";
        end_n = 2;
    } else if (t[1].n >= 2 && memcmp(t[1].p, "\xff\xff", 2) == 0) {
        free(inc);
        *err = CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE; /* begin >= \xff\xff */
        return CMD_FDB;
    } else {
        end_n = strinc(&t[1], inc);
        end = inc;
    }
    if ((*err = shell_get_tr(s))) {
        free(inc);
        return CMD_FDB;
    }
    /* Read everything up to the limit first (fdbcli prints after the read succeeds). */
    FDBFuture **pages = NULL;
    size_t npages = 0;
    int got = 0, iteration = 1;
    const uint8_t *b = (const uint8_t *)t[1].p, *e = end;
    int bl = (int)t[1].n, el = (int)end_n, b_or_equal = 0, b_off = 1, e_or_equal = 0, e_off = 1;
    fdb_bool_t more = limit > 0; /* fdbcli's limit 0 reads nothing; fdb_c's would mean "all" */
    while (more && got < limit) {
        FDBFuture *f = fdb_transaction_get_range(s->tr, b, bl, b_or_equal, b_off, e, el, e_or_equal, e_off,
                                                 limit - got, 0, FDB_STREAMING_MODE_WANT_ALL, iteration++, 0,
                                                 reverse);
        FDBFuture **np = realloc(pages, (npages + 1) * sizeof *np);
        if (!np) {
            fdb_future_destroy(f);
            *err = CFDB_ERR_INTERNAL_ERROR;
            break;
        }
        pages = np;
        pages[npages++] = f;
        const FDBKeyValue *kv;
        int count;
        if ((*err = shell_wait(f)) || (*err = fdb_future_get_keyvalue_array(f, &kv, &count, &more)))
            break;
        got += count;
        if (count == 0)
            break;
        /* continue after the last key */
        if (reverse) {
            e = kv[count - 1].key;
            el = kv[count - 1].key_length;
            e_or_equal = 0;
            e_off = 1;
        } else {
            b = kv[count - 1].key;
            bl = kv[count - 1].key_length;
            b_or_equal = 1;
            b_off = 1;
        }
    }
    if (!*err) {
        printf("\nRange limited to %d keys\n", limit);
        for (size_t p = 0; p < npages; p++) {
            const FDBKeyValue *kv;
            int count;
            fdb_bool_t m;
            if (fdb_future_get_keyvalue_array(pages[p], &kv, &count, &m))
                continue;
            for (int i = 0; i < count; i++)
                print_kv(s, kv[i].key, kv[i].key_length, keys_only ? NULL : kv[i].value, kv[i].value_length);
        }
        printf("\n");
    }
    for (size_t p = 0; p < npages; p++)
        fdb_future_destroy(pages[p]);
    free(pages);
    free(inc);
    return *err ? CMD_FDB : CMD_OK;
}

static int cmd_getrange(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    return range_command(s, t, n, err, false, false);
}
static int cmd_getrangekeys(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    return range_command(s, t, n, err, true, false);
}
static int cmd_getrangereverse(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    return range_command(s, t, n, err, false, true);
}
static int cmd_getrangekeysreverse(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    return range_command(s, t, n, err, true, true);
}

static int cmd_getversion(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 1)
        return usage(t);
    if ((*err = shell_get_tr(s)))
        return CMD_FDB;
    FDBFuture *f = fdb_transaction_get_read_version(s->tr);
    int64_t v = 0;
    if (!(*err = shell_wait(f)))
        *err = fdb_future_get_int64(f, &v);
    fdb_future_destroy(f);
    if (*err)
        return CMD_FDB;
    printf("%" PRId64 "\n", v);
    return CMD_OK;
}

static bool write_allowed(shell *s)
{
    if (!s->writemode)
        fprintf(stderr, "ERROR: writemode must be enabled to set or clear keys in the database.\n");
    return s->writemode;
}

/* set, clear, clearrange: n_args tokens expected; then commit unless in a transaction */
static int write_command(shell *s, const shell_token *t, size_t n, fdb_error_t *err, size_t want)
{
    if (!write_allowed(s))
        return CMD_FAIL;
    if (n != want)
        return usage(t);
    if ((*err = shell_get_tr(s)))
        return CMD_FDB;
    const uint8_t *a = (const uint8_t *)t[1].p, *b = n > 2 ? (const uint8_t *)t[2].p : NULL;
    if (shell_token_is(t[0], "set"))
        fdb_transaction_set(s->tr, a, (int)t[1].n, b, (int)t[2].n);
    else if (shell_token_is(t[0], "clear"))
        fdb_transaction_clear(s->tr, a, (int)t[1].n);
    else
        fdb_transaction_clear_range(s->tr, a, (int)t[1].n, b, (int)t[2].n);
    if (!s->intrans && (*err = commit_tr(s)))
        return CMD_FDB;
    return CMD_OK;
}

static int cmd_set(shell *s, const shell_token *t, size_t n, fdb_error_t *err) { return write_command(s, t, n, err, 3); }
static int cmd_clear(shell *s, const shell_token *t, size_t n, fdb_error_t *err) { return write_command(s, t, n, err, 2); }
static int cmd_clearrange(shell *s, const shell_token *t, size_t n, fdb_error_t *err) { return write_command(s, t, n, err, 3); }

static int cmd_writemode(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)err;
    if (n != 2)
        return usage(t);
    if (shell_token_is(t[1], "on"))
        s->writemode = true;
    else if (shell_token_is(t[1], "off"))
        s->writemode = false;
    else
        return usage(t);
    return CMD_OK;
}

static int cmd_begin(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 1)
        return usage(t);
    if (s->intrans) {
        fprintf(stderr, "ERROR: Already in transaction\n");
        return CMD_FAIL;
    }
    if ((*err = shell_optset_copy(&s->active_opts, &s->global_opts)))
        return CMD_FDB;
    s->opts = &s->active_opts;
    *err = shell_get_tr(s); /* not yet intrans: a brand-new transaction */
    s->intrans = true;
    if (*err)
        return CMD_FDB;
    printf("Transaction started\n");
    return CMD_OK;
}

static bool need_transaction(shell *s)
{
    if (!s->intrans)
        fprintf(stderr, "ERROR: No active transaction\n");
    return s->intrans;
}

static int cmd_commit(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n > 2)
        return usage(t);
    if (!need_transaction(s))
        return CMD_FAIL;
    if ((*err = commit_tr(s)))
        return CMD_FDB;
    s->intrans = false;
    s->opts = &s->global_opts;
    return CMD_OK;
}

static int cmd_reset(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 1)
        return usage(t);
    if (!need_transaction(s))
        return CMD_FAIL;
    fdb_transaction_reset(s->tr);
    if ((*err = shell_optset_copy(&s->active_opts, &s->global_opts)) ||
        (*err = shell_optset_apply(&s->active_opts, s->tr)))
        return CMD_FDB;
    s->opts = &s->active_opts;
    printf("Transaction reset\n");
    return CMD_OK;
}

static int cmd_rollback(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)err;
    if (n != 1)
        return usage(t);
    if (!need_transaction(s))
        return CMD_FAIL;
    s->intrans = false;
    s->opts = &s->global_opts;
    printf("Transaction rolled back\n");
    return CMD_OK;
}

static int cmd_option(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 2 || n > 4)
        return usage(t);
    if (n == 1) {
        if (shell_optset_any(s->opts)) {
            printf("\nCurrently enabled options:\n\n");
            shell_optset_print(s->opts);
            printf("\n");
        } else {
            fprintf(stderr, "There are no options enabled\n");
        }
        return CMD_OK;
    }
    bool on;
    if (shell_token_is(t[1], "on")) {
        on = true;
    } else if (shell_token_is(t[1], "off")) {
        if (s->intrans) {
            fprintf(stderr, "ERROR: Cannot turn option off when using a transaction created with `begin'\n");
            return CMD_FAIL;
        }
        if (n > 3) {
            fprintf(stderr, "ERROR: Cannot specify option argument when turning option off\n");
            return CMD_FAIL;
        }
        on = false;
    } else {
        fprintf(stderr, "ERROR: Invalid option state `");
        shell_format_token(stderr, t[1].p, t[1].n, false);
        fprintf(stderr, "': option must be turned `on' or `off'\n");
        return CMD_FAIL;
    }
    int idx = shell_option_find(t[2].p, t[2].n);
    if (idx < 0) {
        fprintf(stderr, "ERROR: invalid option '%.*s'. Try `help options' for a list of available options.\n",
                (int)t[2].n, t[2].p);
        return CMD_FAIL;
    }
    const shell_option_info *info = &shell_options[idx];
    const uint8_t *value = n > 3 ? (const uint8_t *)t[3].p : NULL;
    size_t len = n > 3 ? t[3].n : 0;
    uint8_t le[8];
    if (on) {
        if ((n > 3) != (info->param != OPT_NONE)) {
            fprintf(stderr, "ERROR: option %s a parameter\n", n > 3 ? "did not expect" : "expected");
            return CMD_FAIL;
        }
        if (value && info->param == OPT_INT) {
            int64_t v;
            if (!shell_option_parse_int(t[3].p, t[3].n, &v)) {
                fprintf(stderr, "ERROR: could not parse value `%.*s' as an integer\n", (int)t[3].n, t[3].p);
                return CMD_FAIL;
            }
            for (int i = 0; i < 8; i++)
                le[i] = (uint8_t)((uint64_t)v >> (8 * i));
            value = le;
            len = 8;
        }
    }
    /* fdbcli's catch around setOption prints nothing more for a failed set */
    if (s->intrans && fdb_transaction_set_option(s->tr, (FDBTransactionOption)info->code, value, (int)len))
        return CMD_FAIL;
    if ((*err = shell_optset_set(s->opts, idx, on, value, len)))
        return CMD_FDB;
    printf("Option %s for %s\n", on ? "enabled" : "disabled", s->intrans ? "current transaction" : "all transactions");
    return CMD_OK;
}

static int cmd_sleep(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)s, (void)err;
    if (n != 2 || t[1].n > 60)
        return usage(t);
    char buf[64];
    memcpy(buf, t[1].p, t[1].n);
    buf[t[1].n] = 0;
    double v;
    int used = 0;
    if (sscanf(buf, "%lf%n", &v, &used) != 1 || (size_t)used != t[1].n)
        return usage(t);
    if (v > 0) {
        struct timespec ts = {(time_t)v, (long)((v - (double)(time_t)v) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && !shell_interrupted) {
        }
    }
    return CMD_OK;
}

static int cmd_waitopen(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)t, (void)n;
    if ((*err = shell_get_tr(s)))
        return CMD_FDB;
    FDBFuture *f = fdb_transaction_get_read_version(s->tr);
    *err = shell_wait(f);
    fdb_future_destroy(f);
    return *err ? CMD_FDB : CMD_OK;
}

/* cfdb extension: waits until KEY changes, then prints it as `get' does. The watch is set
 * in a transaction of its own (committed at once), so not inside `begin'. */
static int cmd_watch(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 2)
        return usage(t);
    if (s->intrans) {
        fprintf(stderr, "ERROR: watch cannot be used in a transaction started with `begin'\n");
        return CMD_FAIL;
    }
    if ((*err = shell_get_tr(s)))
        return CMD_FDB;
    FDBFuture *w = fdb_transaction_watch(s->tr, (const uint8_t *)t[1].p, (int)t[1].n);
    FDBFuture *c = fdb_transaction_commit(s->tr);
    *err = shell_wait(c);
    fdb_future_destroy(c);
    if (!*err) {
        fflush(stdout);
        *err = shell_wait(w);
    }
    fdb_future_destroy(w);
    if (!*err && !(*err = shell_get_tr(s)))
        *err = get_and_print(s, &t[1]);
    return *err ? CMD_FDB : CMD_OK;
}

static int cmd_help(shell *s, const shell_token *t, size_t n, fdb_error_t *err);
static int cmd_exit(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)s, (void)t, (void)n, (void)err;
    return CMD_EXIT;
}

#define ESCK "\n\nFor information on escaping keys, type `help escaping'."
#define ESCKV "\n\nFor information on escaping keys and values, type `help escaping'."

/* Sorted by name (fdbcli lists its help map in std::map order). */
static const command commands[] = {
    {"begin", "begin", "begin a new transaction",
     "Starts a transaction that the following commands share, until commit, rollback or an error. Without "
     "one, every command runs and commits in a transaction of its own.",
     cmd_begin},
    {"clear", "clear <KEY>", "clear a key from the database",
     "Removes KEY; succeeds whether or not KEY exists (a conflict can still fail it)." ESCK, cmd_clear},
    {"clearrange", "clearrange <BEGINKEY> <ENDKEY>", "clear a range of keys from the database",
     "Removes every key from BEGINKEY (included) to ENDKEY (excluded); an empty range is not an error." ESCK,
     cmd_clearrange},
    {"commit", "commit [description]", "commit the current transaction",
     "Commits the writes of the transaction started with begin and prints the version it committed at. "
     "On failure the error is printed and the transaction is rolled back.",
     cmd_commit},
    {"configure",
     "configure [new|tss]<single|double|triple|three_data_hall|three_datacenter|ssd|memory|memory-radixtree-beta|"
     "proxies=<PROXIES>|commit_proxies=<COMMIT_PROXIES>|grv_proxies=<GRV_PROXIES>|logs=<LOGS>|resolvers=<RESOLVERS>>*|"
     "count=<TSS_COUNT>|perpetual_storage_wiggle=<WIGGLE_SPEED>|perpetual_storage_wiggle_locality="
     "<<LOCALITY_KEY>:<LOCALITY_VALUE>|0>|storage_migration_type={disabled|gradual|aggressive}"
     "|tenant_mode={disabled|optional_experimental|required_experimental}|blob_granules_enabled={0|1}"
     "|encryption_at_rest_mode={disabled|domain_aware|cluster_aware}|exclude=<ADDRESS...>",
     "change the database configuration",
     "cfdb's shell changes one setting: tenant_mode=<disabled|optional_experimental|required_experimental> sets the "
     "tenant mode for the cluster. If optional, then transactions can be run with or without specifying tenants. If "
     "required, all data must be accessed using tenants.",
     shell_cmd_configure},
    {"configuretenant", "configuretenant", NULL, NULL, shell_cmd_tenant_old},
    {"coordinators", "coordinators auto|<ADDRESS>+ [description=new_cluster_description]",
     "change cluster coordinators or description",
     "If 'auto' is specified, coordinator addresses will be choosen automatically to support the configured "
     "redundancy level. (If the current set of coordinators are healthy and already support the redundancy level, "
     "nothing will be changed.)\n\nOtherwise, sets the coordinators to the list of IP:port pairs specified by "
     "<ADDRESS>+. An fdbserver process must be running on each of the specified addresses.\n\ne.g. coordinators "
     "10.0.0.1:4000 10.0.0.2:4000 10.0.0.3:4000\n\nIf 'description=desc' is specified then the description field in "
     "the cluster\nfile is changed to desc, which must match [A-Za-z0-9_]+.",
     shell_cmd_coordinators},
    {"createtenant", "createtenant", NULL, NULL, shell_cmd_tenant_old},
    {"deletetenant", "deletetenant", NULL, NULL, shell_cmd_tenant_old},
    {"exclude",
     "exclude [FORCE] [failed] [no_wait] [<ADDRESS...>] [locality_dcid:<excludedcid>]\n"
     "        [locality_zoneid:<excludezoneid>] [locality_machineid:<excludemachineid>]\n"
     "        [locality_processid:<excludeprocessid>] [locality_<KEY>:<localtyvalue>]",
     "exclude servers from the database by IP address or locality",
     "If no addresses or localities are specified, lists the set of excluded addresses and localities.\n"
     "\n"
     "For each IP address or IP:port pair in <ADDRESS...> and/or each locality attribute (like dcid, "
     "zoneid, machineid, processid), adds the address/locality to the set of exclusions and waits until all "
     "database state has been safely moved away from affected servers.\n"
     "\n"
     "If 'FORCE' is set, the command does not perform safety checks before excluding.\n"
     "\n"
     "If 'no_wait' is set, the command returns immediately without checking if the exclusions have completed "
     "successfully.\n"
     "\n"
     "If 'failed' is set, the cluster will immediately forget all data associated with the excluded processes. "
     "Doing so can be helpful if the process is not expected to recover, as it will allow the cluster to delete "
     "state that would be needed to catch the failed process up. Re-including a process excluded with 'failed' will "
     "result in it joining as an empty process.\n"
     "\n"
     "If a cluster has failed storage servers that result in all replicas of some data being permanently gone, "
     "'exclude failed' can be used to clean up the affected key ranges by restoring them to empty.\n"
     "\n"
     "WARNING: use of 'exclude failed' can result in data loss. If an excluded server contains the last replica of "
     "some data, then using the 'failed' option will permanently remove that data from the cluster.",
     shell_cmd_exclude},
    {"exit", "exit", "exit the CLI", "", cmd_exit},
    {"expensive_data_check", "expensive_data_check", NULL, NULL, shell_cmd_expensive_data_check},
    {"get", "get <KEY>", "fetch the value for a given key",
     "Prints the value of KEY, or `not found' when there is none." ESCK, cmd_get},
    {"getrange", "getrange <BEGINKEY> [ENDKEY] [LIMIT]", "fetch key/value pairs in a range of keys",
     "Prints at most LIMIT (default 25) keys and their values from BEGINKEY (included) to ENDKEY (excluded). "
     "Without ENDKEY: every key that starts with BEGINKEY." ESCK,
     cmd_getrange},
    {"getrangekeys", "getrangekeys <BEGINKEY> [ENDKEY] [LIMIT]", "fetch keys in a range of keys",
     "As getrange, printing only the keys." ESCK, cmd_getrangekeys},
    {"getrangekeysreverse", "getrangekeysreverse <BEGINKEY> [ENDKEY] [LIMIT]",
     "fetch keys in a range of keys, last first (cfdb)", "As getrangekeys, from the end of the range." ESCK,
     cmd_getrangekeysreverse},
    {"getrangereverse", "getrangereverse <BEGINKEY> [ENDKEY] [LIMIT]",
     "fetch key/value pairs in a range of keys, last first (cfdb)",
     "As getrange, from the end of the range: the LIMIT last keys, in descending order." ESCK,
     cmd_getrangereverse},
    {"getversion", "getversion", "Fetch the current read version",
     "Prints the read version of the current transaction, or of a new one.", cmd_getversion},
    {"gettenant", "gettenant", NULL, NULL, shell_cmd_tenant_old},
    {"help", "help [<topic>]", "get help about a topic or command", "", cmd_help},
    {"include",
     "include all|[<ADDRESS...>] [locality_dcid:<excludedcid>] [locality_zoneid:<excludezoneid>] "
     "[locality_machineid:<excludemachineid>] [locality_processid:<excludeprocessid>] or any locality data",
     "permit previously-excluded servers and localities to rejoin the database",
     "If `all' is specified, the excluded servers and localities list is cleared.\n\nFor each IP address or IP:port "
     "pair in <ADDRESS...> or any LocalityData (like dcid, zoneid, machineid, processid), removes any matching "
     "exclusions from the excluded servers and localities list. (A specified IP will match all IP:* exclusion "
     "entries)",
     shell_cmd_include},
    {"kill", "kill all|list|<ADDRESS...>", "attempts to kill one or more processes in the cluster",
     "If no addresses are specified, populates the list of processes which can be killed. Processes cannot be "
     "killed before this list has been populated.\n\nIf `all' is specified, attempts to kill all known "
     "processes.\n\nIf `list' is specified, displays all known processes. This is only useful when the database is "
     "unresponsive.\n\nFor each IP:port pair in <ADDRESS ...>, attempt to kill the specified process.",
     shell_cmd_kill},
    {"listtenants", "listtenants", NULL, NULL, shell_cmd_tenant_old},
    {"lock", "lock", "lock the database with a randomly generated lockUID",
     "Randomly generates a lockUID, prints this lockUID, and then uses the lockUID to lock the database.",
     shell_cmd_lock},
    {"maintenance", "maintenance [on|off] [ZONEID] [SECONDS]", "mark a zone for maintenance",
     "Calling this command with `on' prevents data distribution from moving data away from the processes with the "
     "specified ZONEID. Data distribution will automatically be turned back on for ZONEID after the specified "
     "SECONDS have elapsed, or after a storage server with a different ZONEID fails. Only one ZONEID can be marked "
     "for maintenance. Calling this command with no arguments will display any ongoing maintenance. Calling this "
     "command with `off' will disable maintenance.\n",
     shell_cmd_maintenance},
    {"option", "option <STATE> <OPTION> <ARG>", "enables or disables an option",
     "option on NAME [ARG] enables transaction option NAME (with ARG when it takes one), option off NAME "
     "disables it. Outside a transaction it applies to every later command and transaction; inside one "
     "(begin) only to that transaction, where options cannot be turned off. `option' alone lists the "
     "enabled options; `help options' lists them all.",
     cmd_option},
    {"quit", "quit", NULL, NULL, cmd_exit},
    {"renametenant", "renametenant", NULL, NULL, shell_cmd_tenant_old},
    {"reset", "reset", "reset the current transaction",
     "Discards the writes of the current transaction and keeps it open.", cmd_reset},
    {"rollback", "rollback", "rolls back the current transaction",
     "Discards the current transaction and its writes.", cmd_rollback},
    {"set", "set <KEY> <VALUE>", "set a value for a given key", "Stores VALUE under KEY." ESCKV, cmd_set},
    {"setclass", "setclass [<ADDRESS> <CLASS>]", "change the class of a process",
     "If no address and class are specified, lists the classes of all servers.\n\nSetting the class to `default' "
     "resets the process class to the class specified on the command line. The available classes are `unset', "
     "`storage', `transaction', `resolution', `commit_proxy', `grv_proxy', `master', `test', `stateless', `log', "
     "`router', `cluster_controller', `fast_restore', `data_distributor', `coordinator', `ratekeeper', "
     "`storage_cache', `backup', and `default'.",
     shell_cmd_setclass},
    {"sleep", "sleep <SECONDS>", "sleep for a period of time", "", cmd_sleep},
    {"status", "status [minimal|details|json]", "get the status of a FoundationDB cluster",
     "Prints whether the database is available (cfdb prints the minimal form for status, status minimal "
     "and status details); `status json' prints the cluster's status document.",
     shell_cmd_status},
    {"suspend", "suspend <SECONDS> <ADDRESS...>", "attempts to suspend one or more processes in the cluster",
     "If no parameters are specified, populates the list of processes which can be suspended. Processes cannot be "
     "suspended before this list has been populated.\n\nFor each IP:port pair in <ADDRESS...>, attempt to suspend "
     "the processes for the specified SECONDS after which the process will die.",
     shell_cmd_suspend},
    {"tenant", "tenant <create|delete|list|get|getId|configure|rename|lock|unlock> [ARGS]",
     "view and manage tenants in a cluster or metacluster",
     "`create' and `delete' add and remove tenants from the cluster.\n"
     "`list' prints a list of tenants in the cluster.\n"
     "`get' prints the metadata for a particular tenant.\n"
     "`configure' modifies the configuration for a tenant.\n"
     "`rename' changes the name of a tenant.\n"
     "`lock` locks a tenant.\n"
     "`unlock` unlocks a tenant.\n",
     shell_cmd_tenant},
    {"unlock", "unlock <UID>", "unlock the database with the provided lockUID",
     "Unlocks the database with the provided lockUID. This is a potentially dangerous operation, so the user will be "
     "asked to enter a passphrase to confirm their intent.",
     shell_cmd_unlock},
    {"waitconnected", "waitconnected", NULL, NULL, cmd_waitopen},
    {"waitopen", "waitopen", NULL, NULL, cmd_waitopen},
    {"watch", "watch <KEY>", "wait for a key to change (cfdb)",
     "Waits until the value of KEY changes, then prints it as get does. Ctrl-C stops waiting." ESCK, cmd_watch},
    {"writemode", "writemode <on|off>", "enables or disables sets and clears",
     "set, clear and clearrange are refused until `writemode on'.", cmd_writemode},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

int shell_usage(const char *name)
{
    const command *c = find_command((shell_token){ name, strlen(name) });
    printf("Usage: %s\n", c ? c->usage : name);
    return CMD_FAIL;
}

static const command *find_command(shell_token name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (shell_token_is(name, commands[i].name))
            return &commands[i];
    return NULL;
}

const char *shell_command_name(size_t i)
{
    for (size_t k = 0; k < NCOMMANDS; k++)
        if (commands[k].short_desc && i-- == 0)
            return commands[k].name;
    return NULL;
}

/* fdbcli's printAtCol: words wrapped at col characters. */
static void print_at_col(const char *text, size_t col)
{
    const char *start = text, *space = NULL, *it = text;
    do {
        it++;
        if (*it == '\n' || *it == ' ' || *it == '\0')
            space = it;
        if (*it == '\n' || *it == '\0' || (size_t)(it - start) == col) {
            if (!space)
                space = it;
            printf("%.*s\n", (int)(space - start), start);
            start = space;
            if (*start == ' ' || *start == '\n')
                start++;
            space = NULL;
        }
    } while (*it);
}

static void help_overview(void)
{
    printf("\nList of commands:\n\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].short_desc)
            printf(" %s:\n      %s\n", commands[i].name, commands[i].short_desc);
    printf("\nFor information on a specific command, type `help <command>'.");
    printf("\nFor information on escaping keys and values, type `help escaping'.");
    printf("\nFor information on available options, type `help options'.\n\n");
}

static int cmd_help(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    (void)s, (void)err;
    if (n == 1 || (n == 2 && shell_token_is(t[1], "help"))) {
        help_overview();
    } else if (n == 2 && shell_token_is(t[1], "escaping")) {
        printf("\nA space separates tokens. To put a space inside a token, quote the token (\"hello world\"),\n"
               "escape the space (hello\\ world) or write it as a hex byte (hello\\x20world). \\\" is a\n"
               "quotation mark, \\\\ a backslash and \\; a semicolon.\n\n"
               "Any byte can be written as \\xNN (two hex digits) or \\uNNNN (0000 to 00FF), e.g. \\x0a\\x00\\x00\\x00\n"
               "for the 32-bit little-endian integer 10.\n\n"
               "Keys and values are printed with non-printable bytes as \\xNN and backslashes doubled.\n\n");
    } else if (n == 2 && shell_token_is(t[1], "options")) {
        printf("\nThe following options are available to be set using the `option' command:\n\n");
        for (size_t i = 0; i < shell_options_count; i++)
            if (shell_options[i].documented)
                printf("%s%s\n", shell_options[i].name,
                       shell_options[i].param == OPT_INT      ? " <integer>"
                       : shell_options[i].param != OPT_NONE ? " <value>"
                                                            : "");
    } else if (n == 2) {
        const command *c = find_command(t[1]);
        if (c && c->short_desc) {
            printf("\n%s\n\n", c->usage);
            printf("%c%s.\n", c->short_desc[0] >= 'a' && c->short_desc[0] <= 'z' ? c->short_desc[0] - 32
                                                                                   : c->short_desc[0],
                   c->short_desc + 1);
            if (c->long_desc[0]) {
                printf("\n");
                print_at_col(c->long_desc, 80);
            }
            printf("\n");
        } else {
            printf("I don't know anything about `");
            shell_format_token(stdout, t[1].p, t[1].n, false);
            printf("'\n");
        }
    } else {
        printf("Usage: help [topic]\n");
    }
    return CMD_OK;
}

/* ---- the line loop (fdbcli's cli(), per line) ---- */

static void echo_tokens(FILE *f, const shell_command *c, size_t from)
{
    for (size_t i = from; i < c->count; i++) {
        fputc(' ', f);
        shell_format_token(f, c->tokens[i].p, c->tokens[i].n, true);
    }
}

shell_result shell_run_line(shell *s, const char *line, size_t len)
{
    shell_parsed p;
    if (shell_lexer_parse(line, len, &p)) {
        fprintf(stderr, "ERROR: %s (%d)\n", fdb_get_error(CFDB_ERR_INTERNAL_ERROR), CFDB_ERR_INTERNAL_ERROR);
        return SHELL_ERROR;
    }
    if (p.malformed)
        printf("ERROR: malformed escape sequence\n");
    if (p.partial)
        printf("ERROR: unterminated quote\n");
    bool multi = p.count > 1, is_error = false;
    shell_result result = SHELL_OK;
    for (size_t ci = 0; ci < p.count; ci++) {
        const shell_command *c = &p.commands[ci];
        if (is_error) {
            printf("WARNING: the previous command failed, the remaining commands will not be executed.\n");
            break;
        }
        bool parse_error = (p.malformed || p.partial) && ci == p.count - 1;
        if (parse_error) {
            /* fdbcli marks the last command with a parse_error token */
            fprintf(stderr, "ERROR: Command failed to completely parse.\n");
            if (c->count > 0) {
                fprintf(stderr, "ERROR: Not running partial or malformed command:");
                echo_tokens(stdout, c, 0);
                printf("\n");
            }
            is_error = true;
            continue;
        }
        if (c->count == 0)
            continue;
        if (multi) {
            printf(">>>");
            echo_tokens(stdout, c, 0);
            printf("\n");
        }
        const command *cmd = find_command(c->tokens[0]);
        if (!cmd) {
            fprintf(stderr, "ERROR: Unknown command `");
            shell_format_token(stderr, c->tokens[0].p, c->tokens[0].n, false);
            fprintf(stderr, "'. Try `help'?\n");
            is_error = true;
            continue;
        }
        fdb_error_t err = 0;
        int r = cmd->fn(s, c->tokens, c->count, &err);
        if (r == CMD_EXIT) {
            result = SHELL_EXIT;
            break;
        }
        if (r == CMD_FAIL)
            is_error = true;
        if (r == CMD_FDB) {
            /* fdbcli's catch block: outside the command loop, so the rest of the line is
             * dropped without the WARNING */
            fflush(stdout);
            fprintf(stderr, "ERROR: %s (%d)\n", fdb_get_error(err), err);
            is_error = true;
            if (s->intrans) {
                printf("Rolling back current transaction\n");
                s->intrans = false;
                s->opts = &s->global_opts;
            }
            break;
        }
        fflush(stdout);
    }
    shell_lexer_free(&p);
    fflush(stdout);
    if (result == SHELL_EXIT)
        return result;
    return is_error ? SHELL_ERROR : SHELL_OK;
}
