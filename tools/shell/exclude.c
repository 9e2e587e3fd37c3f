/* SPDX-License-Identifier: Apache-2.0 */
/* exclude, as fdbcli 7.3.77 runs it (fdbcli/ExcludeCommand.actor.cpp), through
 * \xff\xff/management/excluded/, excluded_locality/, failed/, failed_locality/ (the key after
 * the prefix is the address or locality), options/<kind>/force and in_progress_exclusion/:
 *   exclude     lists the four ranges, each read in a transaction of its own
 *   exclude [FORCE] [failed] [no_wait] <ADDRESS|locality_<K>:<V>>...
 *       1. every token must parse (FORCE, failed, no_wait, a locality, an AddressExclusion;
 *          else fdbcli's message, and the command ends without failing);
 *       2. one transaction (special-key writes, system-immediate priority) sets the force
 *          options when FORCE (per kind present) and a key per address / locality; a
 *          management failure prints its message, the last line replaced by fdbcli's hint
 *          (FORCE for free space, FORCE failed otherwise), and fails the command;
 *       3. unless no_wait: "Waiting for state to be removed ..." and in_progress_exclusion/ is
 *          read about once a second (each time at a new read version: fdbcli keeps its
 *          transaction until it is too old) until no address in it is excluded by what was
 *          asked; with no_wait it is read once;
 *       4. per exclusion (the addresses asked and those of the workers matching a locality, in
 *          AddressExclusion order): "Missing from cluster" when no worker has that IP (and
 *          port), "Exclusion in progress" when it still excludes an in-progress address, else
 *          "Successfully excluded"; then a warning per locality matching no worker;
 *       5. a warning per coordinator the exclusions name, and the pointer to `help coordinators'.
 * The workers (addresses and localities) come from \xff\xff/status/json's cluster.processes:
 * fdbcli decodes \xff/worker/ and \xff/serverList/ itself, which the public API leaves to the
 * library. */
#define _GNU_SOURCE /* memmem */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "address.h"
#include "error_codes.h"
#include "json.h"

#define MGMT "\xff\xff/management/"
#define TOO_MANY 1000000

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

/* ---- exclude <ADDRESS...> ---- */

/* the set fdbcli builds: sorted, unique (AddressExclusion order) */
typedef struct exset {
    shell_addr *a;
    size_t n, cap;
} exset;

static bool exset_add(exset *s, const shell_addr *a)
{
    size_t i = 0;
    while (i < s->n && shell_exclusion_cmp(&s->a[i], a) < 0)
        i++;
    if (i < s->n && shell_exclusion_cmp(&s->a[i], a) == 0)
        return true;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        shell_addr *p = realloc(s->a, cap * sizeof *p);
        if (!p)
            return false;
        s->a = p;
        s->cap = cap;
    }
    memmove(&s->a[i + 1], &s->a[i], (s->n - i) * sizeof *s->a);
    s->a[i] = *a;
    s->n++;
    return true;
}

typedef struct exclude_req {
    const shell_token *t;
    size_t n;
    bool force, failed, wait;
    exset servers;                 /* the addresses asked, as exclusions */
    const shell_token **localities; /* the localities asked, in order */
    size_t nloc;
} exclude_req;

/* excludeServersAndLocalities */
static int exclude_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const exclude_req *q = ctx;
    const char *kind = q->failed ? "failed" : "excluded";
    char key[256];
    if (q->force && q->servers.n) {
        snprintf(key, sizeof key, MGMT "options/%s/force", kind);
        fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)"", 0);
    }
    for (size_t i = 0; i < q->servers.n; i++) {
        char a[128];
        shell_exclusion_format(&q->servers.a[i], a, sizeof a);
        snprintf(key, sizeof key, MGMT "%s/%s", kind, a);
        fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)"", 0);
    }
    if (q->force && q->nloc) {
        snprintf(key, sizeof key, MGMT "options/%s_locality/force", kind);
        fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)"", 0);
    }
    for (size_t i = 0; i < q->nloc; i++) {
        snprintf(key, sizeof key, MGMT "%s_locality/%.*s", kind, (int)q->localities[i]->n, q->localities[i]->p);
        fdb_transaction_set(tr, (const uint8_t *)key, (int)strlen(key), (const uint8_t *)"", 0);
    }
    if (!(*e = admin_commit(tr)))
        return CMD_OK;
    if (*e != CFDB_ERR_SPECIAL_KEYS_API_FAILURE)
        return ADMIN_ERROR;
    /* the message without its last line, then fdbcli's hint for what that line says */
    char *m = admin_error_message(tr);
    const char *msg = m ? m : "";
    size_t len = strlen(msg), cut = len;
    for (size_t i = len >= 2 ? len - 2 : 0; len >= 1; i--) {
        if (msg[i] == '\n') {
            cut = i;
            break;
        }
        if (i == 0)
            break;
    }
    const char *last = cut < len ? msg + cut + 1 : msg;
    fflush(stdout);
    fprintf(stderr, "%.*s\n%s\n", (int)cut, msg,
            strstr(last, "free space") ? "Type `exclude FORCE <ADDRESS...>' to exclude without checking free space."
                                       : "Type `exclude FORCE failed <ADDRESS...>' to exclude without performing "
                                         "safety checks.");
    free(m);
    return CMD_FAIL;
}

/* checkForExcludingServers: the in-progress addresses some exclusion still names (none
 * when all are done); *err on failure */
typedef struct progress {
    const exset *set;
    bool wait;
    exset left; /* the in-progress addresses (as exclusions with their port) */
} progress;

static void sleep_about_a_second(void)
{
    unsigned r = 0;
    admin_random_bytes((uint8_t *)&r, sizeof r);
    long ms = 900 + (long)(r % 200); /* delayJittered(1.0) */
    for (long done = 0; done < ms && !shell_interrupted; done += 50)
        nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
}

static int progress_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    progress *p = ctx;
    static const char pre[] = MGMT "in_progress_exclusion/", end[] = MGMT "in_progress_exclusion0";
    p->left.n = 0;
    FDBFuture *f;
    const FDBKeyValue *kv;
    int n;
    if ((*e = admin_range(tr, pre, SL(pre), end, SL(end), TOO_MANY, &f, &kv, &n)))
        return ADMIN_ERROR;
    bool some = false;
    for (int i = 0; i < n; i++) {
        shell_addr a;
        shell_token k = { (const char *)kv[i].key + SL(pre), (size_t)kv[i].key_length - SL(pre) };
        if (!shell_addr_parse(k, &a))
            continue;
        a.tls = false;
        if (!exset_add(&p->left, &a))
            *e = CFDB_ERR_INTERNAL_ERROR;
        for (size_t x = 0; x < p->set->n && !some; x++)
            some = shell_exclusion_excludes(&p->set->a[x], &a);
    }
    fdb_future_destroy(f);
    if (*e)
        return CMD_FDB;
    if (!some)
        p->left.n = 0;
    if (!some || !p->wait)
        return CMD_OK;
    sleep_about_a_second();
    if (shell_interrupted) {
        shell_interrupted = 0;
        *e = CFDB_ERR_OPERATION_CANCELLED;
        return CMD_FDB;
    }
    /* fdbcli reads again in the same transaction and sees new state once its read version is
     * too old (1007, then on_error); a fresh read version each time gives the same answers
     * without depending on that */
    fdb_transaction_reset(tr);
    return ADMIN_AGAIN;
}

/* a worker: its address and the status document's locality object */
typedef struct worker {
    shell_addr addr;
    const cfdb_jv *locality;
} worker;

/* workers from cluster.processes of the status document (into w, at most cap) */
static size_t status_workers(const cfdb_jv *doc, worker *w, size_t cap)
{
    const cfdb_jv *procs = cfdb_jv_get(cfdb_jv_get(doc, "cluster"), "processes");
    size_t n = 0;
    for (size_t i = 0; procs && procs->type == JSON_OBJECT && i < procs->count && n < cap; i++) {
        const cfdb_jv *a = cfdb_jv_get(procs->items[i], "address");
        if (!a || a->type != JSON_STRING || !shell_addr_parse((shell_token){ a->text, a->len }, &w[n].addr))
            continue;
        w[n].locality = cfdb_jv_get(procs->items[i], "locality");
        n++;
    }
    return n;
}

/* getAddressesByLocality: the workers whose locality <K> is <V> ("locality_<K>:<V>") */
static bool add_locality_addresses(const worker *w, size_t nw, shell_token loc, exset *set, bool *any)
{
    const char *colon = memchr(loc.p, ':', loc.n);
    size_t kl = (size_t)(colon - loc.p) - 9;
    shell_token key = { loc.p + 9, kl }, val = { colon + 1, loc.n - 9 - kl - 1 };
    *any = false;
    for (size_t i = 0; i < nw; i++) {
        const cfdb_jv *l = w[i].locality;
        for (size_t k = 0; l && l->type == JSON_OBJECT && k < l->count; k++) {
            const cfdb_jv *v = l->items[k];
            if (v->name_len == key.n && memcmp(v->name, key.p, key.n) == 0 && v->type == JSON_STRING &&
                v->len == val.n && memcmp(v->text, val.p, val.n) == 0) {
                shell_addr a = w[i].addr;
                a.tls = false;
                if (!exset_add(set, &a))
                    return false;
                *any = true;
            }
        }
    }
    return true;
}

/* a worker at the exclusion's IP (and port, unless a whole machine) */
static bool has_worker(const worker *w, size_t nw, const shell_addr *e)
{
    for (size_t i = 0; i < nw; i++) {
        shell_addr a = w[i].addr;
        a.tls = false;
        if (shell_exclusion_excludes(e, &a))
            return true;
    }
    return false;
}

/* the per-exclusion report */
static void report(const exset *set, const exset *left, const worker *w, size_t nw)
{
    for (size_t i = 0; i < set->n; i++) {
        const shell_addr *x = &set->a[i];
        char text[128];
        shell_exclusion_format(x, text, sizeof text);
        bool in_progress = false;
        for (size_t k = 0; k < left->n && !in_progress; k++)
            in_progress = shell_exclusion_excludes(x, &left->a[k]);
        fflush(stdout);
        if (!has_worker(w, nw, x)) {
            if (x->port == 0)
                fprintf(stderr,
                        "  %s(Whole machine)  ---- WARNING: Missing from cluster!Be sure that you excluded the correct "
                        "machines before removing them from the cluster!\n",
                        text);
            else
                fprintf(stderr,
                        "  %s  ---- WARNING: Missing from cluster! Be sure that you excluded the correct processes "
                        "before removing them from the cluster!\n",
                        text);
        } else if (in_progress) {
            if (x->port == 0)
                fprintf(stderr,
                        "  %s(Whole machine)  ---- WARNING: Exclusion in progress! It is not safe to remove this "
                        "machine from the cluster\n",
                        text);
            else
                fprintf(stderr,
                        "  %s  ---- WARNING: Exclusion in progress! It is not safe to remove this process from the "
                        "cluster\n",
                        text);
        } else if (x->port == 0) {
            printf("  %s(Whole machine)  ---- Successfully excluded. It is now safe to remove this machine from the "
                   "cluster.\n",
                   text);
        } else {
            printf("  %s  ---- Successfully excluded. It is now safe to remove this process from the cluster.\n", text);
        }
    }
}

/* checkForCoordinators */
static int coordinators_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    static const char key[] = "\xff\xff/configuration/coordinators/processes";
    const exset *set = ctx;
    bool present = false, found = false;
    char *list = NULL;
    if ((*e = admin_get(tr, key, SL(key), &present, &list, NULL)))
        return ADMIN_ERROR;
    for (char *c = list, *next; c && *c; c = next) {
        next = strchr(c, ',');
        size_t l = next ? (size_t)(next - c) : strlen(c);
        next = next ? next + 1 : c + l;
        shell_addr a;
        if (!shell_addr_parse((shell_token){ c, l }, &a))
            continue;
        shell_addr port = a, whole = a;
        port.tls = whole.tls = false;
        whole.port = 0;
        bool named = false;
        for (size_t i = 0; i < set->n && !named; i++)
            named = shell_exclusion_cmp(&set->a[i], &port) == 0 || shell_exclusion_cmp(&set->a[i], &whole) == 0;
        if (named) {
            char text[128];
            shell_addr_format(&a, text, sizeof text);
            fflush(stdout);
            fprintf(stderr, "WARNING: %s is a coordinator!\n", text);
            found = true;
        }
    }
    free(list);
    if (found)
        printf("Type `help coordinators' for information on how to change the\n"
               "cluster's coordination servers before removing them.\n");
    return CMD_OK;
}

#define MAX_WORKERS 10000

static int exclude_addresses(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    cfdb_jv *doc = NULL;
    bool present = false;
    if ((*err = shell_read_status(s, &doc, &present)))
        return CMD_FDB;
    worker *w = calloc(MAX_WORKERS, sizeof *w);
    const shell_token **locs = calloc(n, sizeof *locs);
    const shell_token **nomatch = calloc(n, sizeof *nomatch);
    exclude_req q = { t, n, false, false, true, { 0 }, locs, 0 };
    exset all = { 0 };
    progress p = { &all, true, { 0 } };
    size_t nw = 0, nnomatch = 0;
    int r = w && locs && nomatch ? CMD_OK : CMD_FAIL;
    if (r == CMD_OK)
        nw = status_workers(doc, w, MAX_WORKERS);
    for (size_t i = 1; i < n && r == CMD_OK; i++) {
        shell_addr a;
        bool any = false;
        if (shell_token_is(t[i], "FORCE")) {
            q.force = true;
        } else if (shell_token_is(t[i], "no_wait")) {
            q.wait = false;
        } else if (shell_token_is(t[i], "failed")) {
            q.failed = true;
        } else if (shell_is_locality(t[i])) {
            bool seen = false; /* a set of names */
            for (size_t k = 0; k < q.nloc && !seen; k++)
                seen = q.localities[k]->n == t[i].n && memcmp(q.localities[k]->p, t[i].p, t[i].n) == 0;
            if (!seen)
                q.localities[q.nloc++] = &t[i];
            if (!add_locality_addresses(w, nw, t[i], &all, &any))
                r = CMD_FAIL;
            else if (!any)
                nomatch[nnomatch++] = &t[i];
        } else if (shell_exclusion_parse(t[i], &a)) {
            if (!exset_add(&all, &a) || !exset_add(&q.servers, &a))
                r = CMD_FAIL;
        } else {
            fprintf(stderr, "ERROR: '%.*s' is neither a valid network endpoint address nor a locality\n", (int)t[i].n,
                    t[i].p);
            if (t[i].n >= 4 && memmem(t[i].p, t[i].n, ":tls", 4))
                printf("        Do not include the `:tls' suffix when naming a process\n");
            goto done; /* fdbcli returns true here */
        }
    }
    if (r == CMD_OK && q.servers.n == 0 && q.nloc == 0) {
        fprintf(stderr, "ERROR: At least one valid network endpoint address or a locality must be provided\n");
        r = CMD_FAIL;
    }
    if (r == CMD_OK)
        r = admin_run(s, ADMIN_WRITES | ADMIN_IMMEDIATE | ADMIN_NO_MESSAGE, exclude_body, &q, err);
    if (r != CMD_OK)
        goto done;
    if (q.wait)
        printf("Waiting for state to be removed from all excluded servers. This may take a while.\n"
               "(Interrupting this wait with CTRL+C will not cancel the data movement.)\n");
    fflush(stdout);
    p.wait = q.wait;
    if ((r = admin_run(s, ADMIN_WRITES | ADMIN_IMMEDIATE, progress_body, &p, err)) != CMD_OK)
        goto done;
    report(&all, &p.left, w, nw);
    for (size_t i = 0; i < nnomatch; i++) {
        fflush(stdout);
        fprintf(stderr,
                "  %.*s  ---- WARNING: Currently no servers found with this locality match! Be sure that you excluded "
                "the correct locality.\n",
                (int)nomatch[i]->n, nomatch[i]->p);
    }
    r = admin_run(s, 0, coordinators_body, &all, err);
done:
    cfdb_jv_free(doc);
    free(w);
    free(locs);
    free(nomatch);
    free(q.servers.a);
    free(all.a);
    free(p.left.a);
    return r;
}

int shell_cmd_exclude(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    return n > 1 ? exclude_addresses(s, t, n, err) : exclude_list(s, err);
}
