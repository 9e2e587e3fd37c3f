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
 * configuretenant, renametenant). Not in cfdb's shell: tenant lock / unlock (fdbcli writes
 * the tenant map entry itself there), getId / deleteId (metacluster only). Messages, usage
 * texts and the retry loops are fdbcli's. */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/errors.h"
#include "json.h"
#include "printing.h"

#define MAP "\xff\xff/management/tenant/map/"
#define CONFIGURE "\xff\xff/management/tenant/configure/"
#define RENAME "\xff\xff/management/tenant/rename/"
#define SL(x) (sizeof(x) - 1)

/* prefix + token, malloc'd */
static char *key_of(const char *prefix, shell_token t, size_t *len)
{
    size_t pl = strlen(prefix);
    char *k = malloc(pl + t.n + 1);
    if (!k)
        return NULL;
    memcpy(k, prefix, pl);
    memcpy(k + pl, t.p, t.n);
    k[pl + t.n] = 0;
    *len = pl + t.n;
    return k;
}

static void print_name(shell_token t)
{
    shell_print_printable(stdout, (const uint8_t *)t.p, t.n);
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

static FDBTransaction *new_tr(shell *s, fdb_error_t *err)
{
    FDBTransaction *tr = NULL;
    *err = fdb_database_create_transaction(s->db, &tr);
    return *err ? NULL : tr;
}

static void mgmt_options(FDBTransaction *tr)
{
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
}

/* ---- create / delete ---- */

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
    size_t kl;
    char *key = key_of(MAP, t[2], &kl);
    FDBTransaction *tr = key ? new_tr(s, err) : NULL;
    if (!tr) {
        free(key);
        return key ? CMD_FDB : CMD_FAIL;
    }
    bool checked = false;
    int r;
    for (;;) {
        mgmt_options(tr);
        fdb_error_t e = 0;
        if (!checked) {
            bool present = false;
            e = admin_get(tr, key, kl, &present, NULL, NULL);
            if (!e && present)
                e = CFDB_ERR_TENANT_ALREADY_EXISTS;
            checked = !e;
        }
        if (!e) {
            fdb_transaction_set(tr, (const uint8_t *)key, (int)kl, (const uint8_t *)"", 0);
            if (apply_config(tr, t[2], cfg, ncfg, &e))
                e = admin_commit(tr);
        }
        if (!e) {
            printf("The tenant `");
            print_name(t[2]);
            printf("' has been created\n");
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, "ERROR: ", err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    free(key);
    return r;
}

static int tenant_delete(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 3) {
        printf("Usage: tenant delete <NAME>\n\n"
               "Deletes a tenant from the cluster by name.\n"
               "Deletion will be allowed only if the specified tenant contains no data.\n");
        return CMD_FAIL;
    }
    size_t kl;
    char *key = key_of(MAP, t[2], &kl);
    FDBTransaction *tr = key ? new_tr(s, err) : NULL;
    if (!tr) {
        free(key);
        return key ? CMD_FDB : CMD_FAIL;
    }
    bool checked = false;
    int r;
    for (;;) {
        mgmt_options(tr);
        fdb_error_t e = 0;
        if (!checked) {
            bool present = false;
            e = admin_get(tr, key, kl, &present, NULL, NULL);
            if (!e && !present)
                e = CFDB_ERR_TENANT_NOT_FOUND;
            checked = !e;
        }
        if (!e) {
            fdb_transaction_clear(tr, (const uint8_t *)key, (int)kl);
            e = admin_commit(tr);
        }
        if (!e) {
            printf("The tenant `");
            print_name(t[2]);
            printf("' has been deleted\n");
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, "ERROR: ", err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    free(key);
    return r;
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
    size_t bl, el;
    char *bk = key_of(MAP, begin, &bl), *ek = key_of(MAP, end, &el);
    FDBTransaction *tr = bk && ek ? new_tr(s, err) : NULL;
    int r = CMD_FAIL;
    while (tr) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
        FDBFuture *f = fdb_transaction_get_range(tr, (const uint8_t *)bk, (int)bl, 0, 1, (const uint8_t *)ek, (int)el,
                                                 0, 1, limit, 0, FDB_STREAMING_MODE_EXACT, 0, 0, 0);
        fdb_error_t e = shell_wait(f);
        const FDBKeyValue *kv;
        int rows = 0;
        fdb_bool_t more;
        if (!e)
            e = fdb_future_get_keyvalue_array(f, &kv, &rows, &more);
        if (!e) {
            if (rows == 0)
                printf(n == 2 ? "The cluster has no tenants\n" : "The cluster has no tenants in the specified range\n");
            for (int i = 0; i < rows; i++) {
                printf("  %d. ", i + 1);
                shell_print_printable(stdout, kv[i].key + SL(MAP), (size_t)kv[i].key_length - SL(MAP));
                printf("\n");
            }
            r = CMD_OK;
        }
        fdb_future_destroy(f);
        if (!e)
            break;
        if ((r = admin_on_error(tr, e, "ERROR: ", err)) != ADMIN_RETRY)
            break;
    }
    if (tr)
        fdb_transaction_destroy(tr);
    else if (bk && ek)
        r = CMD_FDB;
    free(bk);
    free(ek);
    return r;
}

/* ---- get ---- */

static const char *json_text(const shell_json *o, const char *a, const char *b, size_t *len)
{
    const shell_json *v = shell_json_get(o, a);
    if (v && b)
        v = shell_json_get(v, b);
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
        shell_json *j = shell_json_parse(doc, (size_t)k);
        if (j) {
            shell_json_pretty(stdout, j);
            printf("\n");
        }
        shell_json_free(j);
        free(doc);
        return;
    }
    shell_json *j = shell_json_parse(json, len);
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
    shell_json_free(j);
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
    size_t kl;
    char *key = key_of(MAP, t[2], &kl);
    FDBTransaction *tr = key ? new_tr(s, err) : NULL;
    int r = CMD_FAIL;
    while (tr) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
        bool present = false;
        char *v = NULL;
        size_t vl = 0;
        fdb_error_t e = admin_get(tr, key, kl, &present, &v, &vl);
        if (!e && !present)
            e = CFDB_ERR_TENANT_NOT_FOUND;
        if (!e) {
            print_entry(v, vl, as_json);
            free(v);
            r = CMD_OK;
            break;
        }
        /* a failure that on_error does not retry: JSON mode prints it as a document */
        FDBFuture *f = fdb_transaction_on_error(tr, e);
        fdb_error_t fe = shell_wait(f);
        fdb_future_destroy(f);
        if (!fe)
            continue;
        if (as_json) {
            printf("{\n    \"error\" : \"%s\",\n    \"type\" : \"error\"\n}\n", fdb_get_error(fe));
            r = CMD_FAIL;
        } else {
            *err = fe;
            r = CMD_FDB;
        }
        break;
    }
    if (!tr && key)
        r = CMD_FDB;
    if (tr)
        fdb_transaction_destroy(tr);
    free(key);
    return r;
}

/* ---- configure ---- */

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
    FDBTransaction *tr = new_tr(s, err);
    if (!tr)
        return CMD_FDB;
    int r;
    for (;;) {
        mgmt_options(tr);
        fdb_error_t e = 0;
        if (apply_config(tr, t[2], cfg, ncfg, &e))
            e = admin_commit(tr);
        if (!e) {
            printf("The configuration for tenant `");
            print_name(t[2]);
            printf("' has been updated\n");
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, "ERROR: ", err)) != ADMIN_RETRY)
            break;
    }
    fdb_transaction_destroy(tr);
    return r;
}

/* ---- rename ---- */

static int64_t entry_id(const char *json, size_t len)
{
    shell_json *j = shell_json_parse(json, len);
    const shell_json *id = j ? shell_json_get(j, "id") : NULL;
    int64_t v = id && id->type == JSON_INT ? strtoll(id->text, NULL, 10) : -1;
    shell_json_free(j);
    return v;
}

static int tenant_rename(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    if (n != 4) {
        printf("Usage: tenant rename <OLD_NAME> <NEW_NAME>\n\n"
               "Renames a tenant in the cluster. The old name must exist and the new\n"
               "name must not exist in the cluster.\n");
        return CMD_FAIL;
    }
    size_t rl, ol, nl;
    char *rk = key_of(RENAME, t[2], &rl), *ok = key_of(MAP, t[2], &ol), *nk = key_of(MAP, t[3], &nl);
    FDBTransaction *tr = rk && ok && nk ? new_tr(s, err) : NULL;
    int r = CMD_FAIL;
    bool first = true;
    int64_t id = -1;
    while (tr) {
        mgmt_options(tr);
        bool op = false, np = false;
        char *ov = NULL, *nv = NULL;
        size_t ovl = 0, nvl = 0;
        fdb_error_t e = admin_get(tr, ok, ol, &op, &ov, &ovl);
        if (!e)
            e = admin_get(tr, nk, nl, &np, &nv, &nvl);
        bool done = false;
        if (!e && first) {
            if (!op)
                e = CFDB_ERR_TENANT_NOT_FOUND;
            else if (np)
                e = CFDB_ERR_TENANT_ALREADY_EXISTS;
            else
                id = entry_id(ov, ovl);
            first = false;
        } else if (!e) {
            /* after commit_unknown_result the rename may have happened already */
            if (np) {
                if (entry_id(nv, nvl) == id)
                    done = true;
                else
                    e = CFDB_ERR_TENANT_ALREADY_EXISTS;
            } else if (!op || entry_id(ov, ovl) != id) {
                e = CFDB_ERR_TENANT_NOT_FOUND;
            }
        }
        free(ov);
        free(nv);
        if (done) {
            r = CMD_OK; /* fdbcli returns without its message here */
            break;
        }
        if (!e) {
            fdb_transaction_set(tr, (const uint8_t *)rk, (int)rl, (const uint8_t *)t[3].p, (int)t[3].n);
            e = admin_commit(tr);
        }
        if (!e) {
            printf("The tenant `");
            print_name(t[2]);
            printf("' has been renamed to `");
            print_name(t[3]);
            printf("'\n");
            r = CMD_OK;
            break;
        }
        if ((r = admin_on_error(tr, e, "ERROR: ", err)) != ADMIN_RETRY)
            break;
    }
    if (!tr && rk && ok && nk)
        r = CMD_FDB;
    if (tr)
        fdb_transaction_destroy(tr);
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
