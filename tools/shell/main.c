/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb: an fdbcli-compatible shell on the public fdb_c.h API (libcfdb).
 *
 *   cfdb [-C FILE | --cluster-file FILE] [--exec "CMD; CMD"] [--timeout SECONDS]
 *        [--no-status] [--tuple] [-h] [-v]
 *
 * Modes, as fdbcli (fdbcli/fdbcli.actor.cpp, 7.3.77): --exec runs its line once and
 * exits 0, or 1 when a command failed; otherwise lines are read from the terminal (libedit
 * line editing, history in ~/.cfdb_history, completion) or, when stdin is not a terminal,
 * from stdin without a prompt. The cluster file is -C, else $FDB_CLUSTER_FILE, else
 * ./fdb.cluster when it exists, else /etc/foundationdb/fdb.cluster. --timeout (only with
 * --exec) ends the program with status 1 after that many seconds.
 *
 * One difference: fdbcli always exits 0 at the end of its input; cfdb exits 1 when it read
 * a script from a non-terminal stdin and a command in it failed, so scripts can test it.
 * SIGINT cancels the operation being waited for (1101) instead of ending the program.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error_codes.h"
#include "lineedit.h"
#include "shell.h"

#define CFDB_SHELL_VERSION "7.3.77-cfdb"

typedef struct args {
    const char *cluster_file;
    const char *exec;
    unsigned timeout;
    bool no_status;
    bool tuple;
} args;

static void usage(const char *name)
{
    printf("cfdb, a FoundationDB CLI on cfdb (fdbcli 7.3 commands)\n"
           "usage: %s [OPTIONS]\n"
           "\n"
           "  -C CONNFILE    The path of a file containing the connection string for the\n"
           "                 FoundationDB cluster. The default is first the value of the\n"
           "                 FDB_CLUSTER_FILE environment variable, then `./fdb.cluster',\n"
           "                 then `/etc/foundationdb/fdb.cluster'.\n"
           "  --cluster-file CONNFILE\n"
           "                 Same as -C.\n"
           "  --exec CMDS    Immediately executes the semicolon separated CLI commands\n"
           "                 and then exits.\n"
           "  --timeout SECONDS\n"
           "                 With --exec: give up and exit with status 1 after SECONDS.\n"
           "  --no-status    Disables the initial status check done when starting\n"
           "                 the CLI.\n"
           "  --tuple        Print keys and values that unpack as tuples as tuples.\n"
           "  -v, --version  Print version information and exit.\n"
           "  -h, --help     Display this help and exit.\n",
           name);
}

/* 0 to go on, else the exit status + 1 */
static int parse_args(int argc, char **argv, args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool takes = !strcmp(o, "-C") || !strcmp(o, "--cluster-file") || !strcmp(o, "--exec") ||
                     !strcmp(o, "--timeout");
        if (takes && i + 1 >= argc) {
            usage(argv[0]);
            return 2;
        }
        if (!strcmp(o, "-C") || !strcmp(o, "--cluster-file")) {
            a->cluster_file = argv[++i];
        } else if (!strcmp(o, "--exec")) {
            a->exec = argv[++i];
        } else if (!strcmp(o, "--timeout")) {
            char *end;
            errno = 0;
            unsigned long t = strtoul(argv[++i], &end, 10);
            if (*end || errno || t > 86400u * 365) {
                fprintf(stderr, "ERROR: invalid timeout %s\n", argv[i]);
                return 2;
            }
            a->timeout = (unsigned)t;
        } else if (!strcmp(o, "--no-status")) {
            a->no_status = true;
        } else if (!strcmp(o, "--tuple")) {
            a->tuple = true;
        } else if (!strcmp(o, "-h") || !strcmp(o, "--help") || !strcmp(o, "-?")) {
            usage(argv[0]);
            return 1;
        } else if (!strcmp(o, "-v") || !strcmp(o, "--version")) {
            printf("cfdb shell %s\nprotocol fdb00b073000000\n", CFDB_SHELL_VERSION);
            return 1;
        } else {
            usage(argv[0]);
            return 2;
        }
    }
    if (a->timeout && !a->exec) {
        fprintf(stderr, "ERROR: --timeout may only be specified with --exec\n");
        return 2;
    }
    return 0;
}

static void *run_network(void *arg)
{
    (void)arg;
    fdb_error_t err = fdb_run_network();
    if (err)
        fprintf(stderr, "ERROR: %s (%d)\n", fdb_get_error(err), err);
    return NULL;
}

static void *timeout_thread(void *arg)
{
    unsigned secs = *(unsigned *)arg;
    sleep(secs);
    fflush(stdout);
    fprintf(stderr, "Specified timeout reached -- exiting...\n");
    _exit(1);
    return NULL;
}

static void on_sigint(int sig)
{
    (void)sig;
    shell_interrupted = 1;
}

/* The cluster file fdbcli would use; true when it names an existing file. */
static const char *resolve_cluster_file(const char *opt, bool *is_default)
{
    *is_default = false;
    if (opt && *opt)
        return opt;
    const char *env = getenv("FDB_CLUSTER_FILE");
    if (env && *env)
        return env;
    *is_default = true;
    if (access("fdb.cluster", F_OK) == 0)
        return "fdb.cluster";
    return "/etc/foundationdb/fdb.cluster";
}

static char *history_path(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + sizeof "/.cfdb_history";
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/.cfdb_history", home);
    return p;
}

/* Reads stdin lines (any length) without a prompt; NULL at the end. */
static char *read_plain_line(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[--n] = 0;
    return line;
}

static bool g_tty; /* the session reads a terminal (libedit) */

char *shell_read_line(const char *prompt)
{
    fflush(stdout);
    return g_tty ? shell_lineedit_read(prompt) : read_plain_line();
}

static int interact(shell *s, bool tty)
{
    g_tty = tty;
    bool any_error = false;
    char *hist = NULL;
    if (tty) {
        hist = history_path();
        shell_lineedit_init(hist);
    }
    for (;;) {
        char *line = tty ? shell_lineedit_read("fdb> ") : read_plain_line();
        if (!line) {
            printf("\n");
            break;
        }
        shell_interrupted = 0;
        size_t len = strlen(line);
        if (len == 0) {
            free(line);
            continue;
        }
        if (tty)
            shell_lineedit_add_history(line);
        shell_result r = shell_run_line(s, line, len);
        free(line);
        if (r == SHELL_EXIT)
            break;
        if (r == SHELL_ERROR)
            any_error = true;
    }
    if (tty)
        shell_lineedit_close();
    free(hist);
    fflush(stdout);
    return tty ? 0 : any_error;
}

int main(int argc, char **argv)
{
    args a = {0};
    int pr = parse_args(argc, argv, &a);
    if (pr)
        return pr - 1;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);

    bool is_default;
    const char *cf = resolve_cluster_file(a.cluster_file, &is_default);
    if (access(cf, R_OK) != 0) {
        if (is_default)
            fprintf(stderr, "Unable to read cluster file `./fdb.cluster' or `%s' and FDB_CLUSTER_FILE unset: %d %s\n",
                    cf, CFDB_ERR_NO_CLUSTER_FILE_FOUND, fdb_get_error(CFDB_ERR_NO_CLUSTER_FILE_FOUND));
        else
            fprintf(stderr, "Unable to read cluster file `%s': %d %s\n", cf, CFDB_ERR_NO_CLUSTER_FILE_FOUND,
                    fdb_get_error(CFDB_ERR_NO_CLUSTER_FILE_FOUND));
        return 1;
    }

    fdb_error_t err = fdb_select_api_version(FDB_API_VERSION);
    if (!err)
        err = fdb_setup_network();
    if (err) {
        fprintf(stderr, "ERROR: %s (%d)\n", fdb_get_error(err), err);
        return 1;
    }
    pthread_t net;
    if (pthread_create(&net, NULL, run_network, NULL) != 0) {
        fprintf(stderr, "ERROR: %s (%d)\n", fdb_get_error(CFDB_ERR_INTERNAL_ERROR), CFDB_ERR_INTERNAL_ERROR);
        return 1;
    }
    if (a.timeout) {
        pthread_t t;
        if (pthread_create(&t, NULL, timeout_thread, &a.timeout) == 0)
            pthread_detach(t);
    }

    int status = 0;
    FDBDatabase *db = NULL;
    err = fdb_create_database(cf, &db);
    /* fdbcli parses the cluster file before anything is printed; other errors come after
     * the "Using cluster file" line */
    if (err == CFDB_ERR_CONNECTION_STRING_INVALID) {
        fprintf(stderr, "Invalid cluster file `%s': %d %s\n", cf, err, fdb_get_error(err));
        status = 1;
    } else if (!a.exec) {
        printf("Using cluster file `%s'.\n", cf);
    }
    if (err && err != CFDB_ERR_CONNECTION_STRING_INVALID) {
        fprintf(stderr, "ERROR: %s (%d)\n", fdb_get_error(err), err);
        printf("Unable to connect to cluster from `%s'\n", cf);
        status = 1;
    } else if (!err) {
        shell s;
        shell_init(&s, db);
        s.exec_mode = a.exec != NULL;
        s.tuple_mode = a.tuple;
        if (a.exec) {
            shell_result r = shell_run_line(&s, a.exec, strlen(a.exec));
            status = r == SHELL_ERROR;
        } else {
            if (!a.no_status)
                shell_status_minimal(&s, true);
            else
                printf("\n");
            printf("Welcome to the fdbcli. For help, type `help'.\n");
            fflush(stdout);
            status = interact(&s, isatty(STDIN_FILENO));
        }
        shell_destroy(&s);
        fdb_database_destroy(db);
    }
    fflush(stdout);
    fdb_stop_network();
    pthread_join(net, NULL);
    return status;
}
