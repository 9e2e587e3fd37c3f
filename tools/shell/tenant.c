/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell's `tenant' command, as fdbcli 7.3.77 runs it on a cluster that is not a
 * metacluster (fdbcli/TenantCommands.actor.cpp), through \xff\xff/management/tenant/:
 *   tenant create <NAME> [tenant_group=<G>]   refuses an existing name (2132), then sets
 *                                             map/<NAME> and configure/<tuple(NAME, param)>
 *   tenant delete <NAME>                      refuses an absent name (2131), clears map/<NAME>
 *   tenant list [BEGIN] [END] [limit=<N>|offset=<N>|state=<S,...>]   "  <i>. <name>"
 *   tenant get <NAME> [JSON]                  the TenantMapEntry JSON, as text or JSON
 *   tenant configure <NAME> <[unset] tenant_group[=<G>]> [ignore_capacity_limit]
 *   tenant rename <OLD> <NEW>                 rename/<OLD> = NEW, after checking both names
 * and the old one-word forms (createtenant, deletetenant, listtenants, gettenant,
 * configuretenant, renametenant); tenant lock / unlock are in tenant_lock.c. Not in cfdb's
 * shell: getId / deleteId (metacluster only). Messages, usage texts and the retry loops are
 * fdbcli's. */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "json.h"
#include "printing.h"

#define MAP "\xff\xff/management/tenant/map/"
#define CONFIGURE "\xff\xff/management/tenant/configure/"
#define RENAME "\xff\xff/management/tenant/rename/"

/* "<pre><printable name><post>" on stdout */
static void print_name(const char *pre, shell_token t, const char *post)
{
    fputs(pre, stdout);
    shell_print_printable(stdout, (const uint8_t *)t.p, t.n);
    fputs(post, stdout);
}

/* ---- configuration parameters (parseTenantConfiguration) ---- */

typedef struct config_param {
    shell_token name;
    bool has_value;
    shell_token value;
} config_param;

/* Returns the number of parameters, or -1 after printing fdbcli's error. */
static int parse_config(const shell_token *t, size_t from, size_t to, bool allow_unset, config_param *out)
{
    int n = 0;
    for (size_t i = from; i < to; i++) {
        config_param p = { 0 };
        if (allow_unset && shell_token_is(t[i], "unset")) {
            if (++i == to) {
                fprintf(stderr, "ERROR: `unset' specified without a configuration parameter.\n");
                return -1;
            }
            p.name = t[i];
        } else {
            const char *eq = memchr(t[i].p, '=', t[i].n);
            if (!eq) {
                fprintf(stderr, "ERROR: invalid configuration string `%.*s'. String must specify a value using `='.\n",
                        (int)t[i].n, t[i].p);
                return -1;
            }
            p.name = (shell_token){ t[i].p, (size_t)(eq - t[i].p) };
            p.has_value = true;
            p.value = (shell_token){ eq + 1, t[i].n - (size_t)(eq - t[i].p) - 1 };
        }
        for (int k = 0; k < n; k++)
            if (out[k].name.n == p.name.n && memcmp(out[k].name.p, p.name.p, p.name.n) == 0) {
                fprintf(stderr, "ERROR: configuration parameter `%.*s' specified more than once.\n", (int)p.name.n,
                        p.name.p);
                return -1;
            }
        if (!shell_token_is(p.name, "tenant_group") && !shell_token_is(p.name, "assigned_cluster")) {
            fprintf(stderr, "ERROR: unrecognized configuration parameter `%.*s'.\n", (int)p.name.n, p.name.p);
            return -1;
        }
        out[n++] = p;
    }
    return n;
}

/* configure/ + tuple(name, param): byte strings with \x00 escaped as \x00\xff */
static size_t tuple_bytes(uint8_t *o, shell_token t)
{
    size_t k = 0;
    o[k++] = 0x01;
    for (size_t i = 0; i < t.n; i++) {
        o[k++] = (uint8_t)t.p[i];
        if (!t.p[i])
            o[k++] = 0xff;
    }
    o[k++] = 0;
    return k;
}

/* applyConfigurationToSpecialKeys; false (after the message) for assigned_cluster */
static bool apply_config(FDBTransaction *tr, shell_token name, const config_param *c, int n, fdb_error_t *fail)
{
    for (int i = 0; i < n; i++) {
        if (shell_token_is(c[i].name, "assigned_cluster")) {
            fprintf(stderr, "ERROR: assigned_cluster is only valid in metacluster configuration.\n");
            *fail = CFDB_ERR_INVALID_TENANT_CONFIGURATION;
            return false;
        }
        uint8_t *k = malloc(SL(CONFIGURE) + 2 * (name.n + c[i].name.n) + 4);
        if (!k) {
            *fail = CFDB_ERR_INTERNAL_ERROR;
            return false;
        }
        memcpy(k, CONFIGURE, SL(CONFIGURE));
        size_t kl = SL(CONFIGURE);
        kl += tuple_bytes(k + kl, name);
        kl += tuple_bytes(k + kl, c[i].name);
        if (c[i].has_value)
            fdb_transaction_set(tr, k, (int)kl, (const uint8_t *)c[i].value.p, (int)c[i].value.n);
        else
            fdb_transaction_clear(tr, k, (int)kl);
        free(k);
    }
    return true;
}

/* the options of fdbcli's tenant management transactions */
#define MGMT (ADMIN_WRITES | ADMIN_READ_SYSTEM | ADMIN_ERROR_PREFIX)

/* ---- create / delete ---- */

typedef struct named {
    const shell_token *t; /* the command's tokens */
    const char *key;      /* map/<t[2]> */
    size_t kl;
    bool checked;         /* the existence check passed (a retry does not repeat it) */
    const config_param *cfg;
    int ncfg;
    bool as_json; /* tenant get */
} named;

static int create_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    named *c = ctx;
    if (!c->checked) {
        bool present = false;
        if ((*e = admin_get(tr, c->key, c->kl, &present, NULL, NULL)) ||
            (present && (*e = CFDB_ERR_TENANT_ALREADY_EXISTS)))
            return ADMIN_ERROR;
        c->checked = true;
    }
    fdb_transaction_set(tr, (const uint8_t *)c->key, (int)c->kl, (const uint8_t *)"", 0);
    if (!apply_config(tr, c->t[2], c->cfg, c->ncfg, e) || (*e = admin_commit(tr)))
        return ADMIN_ERROR;
    print_name("The tenant `", c->t[2], "' has been created\n");
    return CMD_OK;
}

static int delete_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    named *c = ctx;
    if (!c->checked) {
        bool present = false;
        if ((*e = admin_get(tr, c->key, c->kl, &present, NULL, NULL)) ||
            (!present && (*e = CFDB_ERR_TENANT_NOT_FOUND)))
            return ADMIN_ERROR;
        c->checked = true;
    }
    fdb_transaction_clear(tr, (const uint8_t *)c->key, (int)c->kl);
    if ((*e = admin_commit(tr)))
        return ADMIN_ERROR;
    print_name("The tenant `", c->t[2], "' has been deleted\n");
    return CMD_OK;
}

/* body on map/<t[2]> with fdbcli's management options */
static int run_named(shell *s, const shell_token *t, admin_body body, const config_param *cfg, int ncfg,
                     fdb_error_t *err)
{
    named c = { t, NULL, 0, false, cfg, ncfg, false };
    char *key = admin_key(MAP, t[2], &c.kl);
    if (!key)
        return CMD_FAIL;
    c.key = key;
    int r = admin_run(s, MGMT, body, &c, err);
    free(key);
    return r;
}

static int tenant_create(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n < 3 || n > 5) {
        printf("Usage: tenant create <NAME> [tenant_group=<TENANT_GROUP>] [assigned_cluster=<CLUSTER_NAME>]\n\n"
               "Creates a new tenant in the cluster with the specified name.\n"
               "An optional group can be specified that will require this tenant\n"
               "to be placed on the same cluster as other tenants in the same group.\n"
               "An optional cluster name can be specified that this tenant will be placed in.\n");
        return CMD_FAIL;
    }
    config_param cfg[3];
    int ncfg = parse_config(t, 3, n, false, cfg);
    if (ncfg < 0)
        return CMD_FAIL;
    return run_named(s, t, create_body, cfg, ncfg, err);
}

static int tenant_delete(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 3) {
        printf("Usage: tenant delete <NAME>\n\n"
               "Deletes a tenant from the cluster by name.\n"
               "Deletion will be allowed only if the specified tenant contains no data.\n");
        return CMD_FAIL;
    }
    return run_named(s, t, delete_body, NULL, 0, err);
}

/* ---- list ---- */

static bool parse_int_option(shell_token v, int min, int *out)
{
    char buf[32];
    int used = 0;
    if (v.n >= sizeof buf)
        return false;
    memcpy(buf, v.p, v.n);
    buf[v.n] = 0;
    return sscanf(buf, "%d%n", out, &used) == 1 && (size_t)used == v.n && *out >= min;
}

static int token_cmp(shell_token a, shell_token b)
{
    size_t m = a.n < b.n ? a.n : b.n;
    int c = memcmp(a.p, b.p, m);
    return c ? c : (a.n < b.n ? -1 : a.n > b.n);
}

typedef struct range {
    const char *b, *e; /* map/<BEGIN>, map/<END> */
    size_t bl, el;
    int limit;
    bool whole; /* no BEGIN / END given */
} range;

static int list_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const range *rg = ctx;
    FDBFuture *f;
    const FDBKeyValue *kv;
    int rows;
    if ((*e = admin_range(tr, rg->b, rg->bl, rg->e, rg->el, rg->limit, &f, &kv, &rows)))
        return ADMIN_ERROR;
    if (rows == 0)
        printf(rg->whole ? "The cluster has no tenants\n" : "The cluster has no tenants in the specified range\n");
    for (int i = 0; i < rows; i++) {
        printf("  %d. ", i + 1);
        shell_print_printable(stdout, kv[i].key + SL(MAP), (size_t)kv[i].key_length - SL(MAP));
        printf("\n");
    }
    fdb_future_destroy(f);
    return CMD_OK;
}

static int tenant_list(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n > 7) {
        printf("Usage: tenant list [BEGIN] [END] [limit=<LIMIT>|offset=<OFFSET>|state=<STATE1>,<STATE2>,...] ...\n\n"
               "Lists the tenants in a cluster.\n"
               "Only tenants in the range BEGIN - END will be printed.\n"
               "An optional LIMIT can be specified to limit the number of results (default 100).\n"
               "Optionally skip over the first OFFSET results (default 0).\n"
               "Optional comma-separated tenant state(s) can be provided to filter the list.\n");
        return CMD_FAIL;
    }
    shell_token begin = { "", 0 }, end = { "\xff\xff", 2 };
    int limit = 100, offset = 0;
    if (n >= 3)
        begin = t[2];
    if (n >= 4) {
        end = t[3];
        if (token_cmp(end, begin) <= 0) {
            fprintf(stderr, "ERROR: end must be larger than begin\n");
            return CMD_FAIL;
        }
    }
    for (size_t i = 4; i < n; i++) {
        const char *eq = memchr(t[i].p, '=', t[i].n);
        if (!eq) {
            fprintf(stderr, "ERROR: invalid option string `%.*s'. String must specify a value using `='.\n",
                    (int)t[i].n, t[i].p);
            return CMD_FAIL;
        }
        shell_token name = { t[i].p, (size_t)(eq - t[i].p) }, value = { eq + 1, t[i].n - name.n - 1 };
        if (shell_token_is(name, "limit")) {
            if (!parse_int_option(value, 1, &limit)) {
                fprintf(stderr, "ERROR: invalid limit `%.*s'\n", (int)value.n, value.p);
                return CMD_FAIL;
            }
        } else if (shell_token_is(name, "offset")) {
            if (!parse_int_option(value, 0, &offset)) {
                fprintf(stderr, "ERROR: invalid offset `%.*s'\n", (int)value.n, value.p);
                return CMD_FAIL;
            }
        } else if (!shell_token_is(name, "state")) { /* states filter metacluster listings only */
            fprintf(stderr, "ERROR: unrecognized parameter `%.*s'.\n", (int)name.n, name.p);
            return CMD_FAIL;
        }
    }
    range rg = { NULL, NULL, 0, 0, limit, n == 2 };
    char *bk = admin_key(MAP, begin, &rg.bl), *ek = admin_key(MAP, end, &rg.el);
    rg.b = bk;
    rg.e = ek;
    int r = bk && ek ? admin_run(s, ADMIN_READ_SYSTEM | ADMIN_ERROR_PREFIX, list_body, &rg, err) : CMD_FAIL;
    free(bk);
    free(ek);
    return r;
}

/* ---- get ---- */

static const char *json_text(const cfdb_jv *o, const char *a, const char *b, size_t *len)
{
    const cfdb_jv *v = cfdb_jv_get(o, a);
    if (v && b)
        v = cfdb_jv_get(v, b);
    if (!v || (v->type != JSON_STRING && v->type != JSON_INT))
        return NULL;
    *len = v->len;
    return v->text;
}

/* tenantGetCmdOutput */
static void print_entry(const char *json, size_t len, bool as_json)
{
    if (as_json) {
        size_t cap = len + 64;
        char *doc = malloc(cap);
        if (!doc)
            return;
        int k = snprintf(doc, cap, "{\"tenant\":%.*s,\"type\":\"success\"}", (int)len, json);
        cfdb_jv *j = cfdb_jv_parse(doc, (size_t)k);
        if (j) {
            shell_json_pretty(stdout, j);
            printf("\n");
        }
        cfdb_jv_free(j);
        free(doc);
        return;
    }
    cfdb_jv *j = cfdb_jv_parse(json, len);
    if (!j)
        return;
    size_t l = 0;
    const char *v;
    v = json_text(j, "id", NULL, &l);
    printf("  id: %.*s\n", v ? (int)l : 0, v ? v : "");
    printf("  prefix: ");
    if ((v = json_text(j, "prefix", "printable", &l)) != NULL)
        shell_print_printable(stdout, (const uint8_t *)v, l); /* printable() of the printable form */
    printf("\n");
    if ((v = json_text(j, "name", "printable", &l)) != NULL)
        printf("  name: %.*s\n", (int)l, v);
    if ((v = json_text(j, "tenant_state", NULL, &l)) != NULL) {
        printf("  tenant state: ");
        shell_print_printable(stdout, (const uint8_t *)v, l);
        printf("\n");
    }
    v = json_text(j, "lock_state", NULL, &l);
    printf("  lock state: %.*s\n", v ? (int)l : 0, v ? v : "");
    if ((v = json_text(j, "lock_id", NULL, &l)) != NULL)
        printf("  lock id: %.*s\n", (int)l, v);
    if ((v = json_text(j, "tenant_group", "printable", &l)) != NULL)
        printf("  tenant group: %.*s\n", (int)l, v);
    cfdb_jv_free(j);
}

static int get_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const named *c = ctx;
    bool present = false;
    char *v = NULL;
    size_t vl = 0;
    if ((*e = admin_get(tr, c->key, c->kl, &present, &v, &vl)) || (!present && (*e = CFDB_ERR_TENANT_NOT_FOUND)))
        return ADMIN_ERROR;
    print_entry(v, vl, c->as_json);
    free(v);
    return CMD_OK;
}

static int tenant_get(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n < 3 || n > 4 || (n == 4 && !shell_token_is(t[3], "JSON"))) {
        printf("Usage: tenant get <NAME> [JSON]\n\n"
               "Prints metadata associated with the given tenant.\n"
               "If JSON is specified, then the output will be in JSON format.\n");
        return CMD_FAIL;
    }
    bool as_json = n == 4;
    named c = { t, NULL, 0, false, NULL, 0, as_json };
    char *key = admin_key(MAP, t[2], &c.kl);
    if (!key)
        return CMD_FAIL;
    c.key = key;
    /* a failure that on_error does not retry: JSON mode prints it as a document */
    int r = admin_run(s, ADMIN_READ_SYSTEM | ADMIN_NO_MESSAGE, get_body, &c, err);
    free(key);
    if (r == CMD_FDB && as_json) {
        printf("{\n    \"error\" : \"%s\",\n    \"type\" : \"error\"\n}\n", fdb_get_error(*err));
        r = CMD_FAIL;
    }
    return r;
}

/* ---- configure ---- */

static int configure_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const named *c = ctx;
    if (!apply_config(tr, c->t[2], c->cfg, c->ncfg, e) || (*e = admin_commit(tr)))
        return ADMIN_ERROR;
    print_name("The configuration for tenant `", c->t[2], "' has been updated\n");
    return CMD_OK;
}

static int tenant_configure(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n < 4) {
        printf("Usage: tenant configure <TENANT_NAME> <[unset] tenant_group[=<GROUP_NAME>]> "
               "[ignore_capacity_limit]\n\n"
               "Updates the configuration for a tenant.\n"
               "Use `tenant_group=<GROUP_NAME>' to change the tenant group that a\n"
               "tenant is assigned to or `unset tenant_group' to remove a tenant from\n"
               "its tenant group.\n"
               "If `ignore_capacity_limit' is specified, a new tenant group can be\n"
               "created or the tenant can be ungrouped on a cluster with no tenant group\n"
               "capacity remaining\n");
        return CMD_FAIL;
    }
    size_t end = n - (shell_token_is(t[n - 1], "ignore_capacity_limit") ? 1 : 0);
    config_param cfg[8];
    if (end - 3 > 8)
        return CMD_FAIL;
    int ncfg = parse_config(t, 3, end, true, cfg);
    if (ncfg < 0)
        return CMD_FAIL;
    return run_named(s, t, configure_body, cfg, ncfg, err);
}

/* ---- rename ---- */

int64_t shell_tenant_entry_id(const char *json, size_t len)
{
    cfdb_jv *j = cfdb_jv_parse(json, len);
    const cfdb_jv *id = j ? cfdb_jv_get(j, "id") : NULL;
    int64_t v = id && id->type == JSON_INT ? strtoll(id->text, NULL, 10) : -1;
    cfdb_jv_free(j);
    return v;
}

typedef struct rename_ctx {
    const shell_token *t;
    const char *rk, *ok, *nk; /* rename/<OLD>, map/<OLD>, map/<NEW> */
    size_t rl, ol, nl;
    bool first; /* the first attempt: checks both names and notes the tenant's id */
    int64_t id;
} rename_ctx;

static int rename_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    rename_ctx *c = ctx;
    bool op = false, np = false, done = false;
    char *ov = NULL, *nv = NULL;
    size_t ovl = 0, nvl = 0;
    *e = admin_get(tr, c->ok, c->ol, &op, &ov, &ovl);
    if (!*e)
        *e = admin_get(tr, c->nk, c->nl, &np, &nv, &nvl);
    if (!*e && c->first) {
        if (!op)
            *e = CFDB_ERR_TENANT_NOT_FOUND;
        else if (np)
            *e = CFDB_ERR_TENANT_ALREADY_EXISTS;
        else
            c->id = shell_tenant_entry_id(ov, ovl);
        c->first = false;
    } else if (!*e) {
        /* after commit_unknown_result the rename may have happened already */
        if (np) {
            if (shell_tenant_entry_id(nv, nvl) == c->id)
                done = true;
            else
                *e = CFDB_ERR_TENANT_ALREADY_EXISTS;
        } else if (!op || shell_tenant_entry_id(ov, ovl) != c->id) {
            *e = CFDB_ERR_TENANT_NOT_FOUND;
        }
    }
    free(ov);
    free(nv);
    if (done)
        return CMD_OK; /* fdbcli returns without its message here */
    if (*e)
        return ADMIN_ERROR;
    fdb_transaction_set(tr, (const uint8_t *)c->rk, (int)c->rl, (const uint8_t *)c->t[3].p, (int)c->t[3].n);
    if ((*e = admin_commit(tr)))
        return ADMIN_ERROR;
    print_name("The tenant `", c->t[2], "' has been renamed to `");
    print_name("", c->t[3], "'\n");
    return CMD_OK;
}

static int tenant_rename(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 4) {
        printf("Usage: tenant rename <OLD_NAME> <NEW_NAME>\n\n"
               "Renames a tenant in the cluster. The old name must exist and the new\n"
               "name must not exist in the cluster.\n");
        return CMD_FAIL;
    }
    rename_ctx c = { t, NULL, NULL, NULL, 0, 0, 0, true, -1 };
    char *rk = admin_key(RENAME, t[2], &c.rl), *ok = admin_key(MAP, t[2], &c.ol), *nk = admin_key(MAP, t[3], &c.nl);
    c.rk = rk;
    c.ok = ok;
    c.nk = nk;
    int r = rk && ok && nk ? admin_run(s, MGMT, rename_body, &c, err) : CMD_FAIL;
    free(rk);
    free(ok);
    free(nk);
    return r;
}

/* ---- dispatch ---- */

int shell_cmd_tenant(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n == 1)
        return shell_usage("tenant"), CMD_OK; /* fdbcli prints the usage and succeeds */
    if (shell_token_is(t[1], "create"))
        return tenant_create(s, t, n, err);
    if (shell_token_is(t[1], "delete"))
        return tenant_delete(s, t, n, err);
    if (shell_token_is(t[1], "list"))
        return tenant_list(s, t, n, err);
    if (shell_token_is(t[1], "get"))
        return tenant_get(s, t, n, err);
    if (shell_token_is(t[1], "configure"))
        return tenant_configure(s, t, n, err);
    if (shell_token_is(t[1], "rename"))
        return tenant_rename(s, t, n, err);
    if (shell_token_is(t[1], "lock") || shell_token_is(t[1], "unlock"))
        return shell_tenant_lock(s, t, n, err);
    shell_usage("tenant");
    return CMD_OK;
}

/* createtenant, deletetenant, listtenants, gettenant, configuretenant, renametenant:
 * forwarded as `tenant <verb> ...' (tenantCommandForwarder) */
int shell_cmd_tenant_old(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    static const char *const verbs[] = { "create", "delete", "list", "get", "configure", "rename" };
    shell_token fw[16];
    if (n + 1 > sizeof fw / sizeof *fw)
        return shell_usage("tenant");
    fw[0] = (shell_token){ "tenant", 6 };
    fw[1] = (shell_token){ "", 0 };
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++) {
        size_t l = strlen(verbs[v]);
        if (t[0].n > l && memcmp(t[0].p, verbs[v], l) == 0)
            fw[1] = (shell_token){ verbs[v], l };
    }
    for (size_t i = 1; i < n; i++)
        fw[i + 1] = t[i];
    return shell_cmd_tenant(s, fw, n + 1, err);
}
