/* SPDX-License-Identifier: Apache-2.0 */
/* The management commands' shared transaction code (admin.h): fdbcli 7.3.77's retry loop
 * around a command body (`loop { try { ... } catch (Error& e) { ... tr->onError(e) } }'
 * in the fdbcli/...Command.actor.cpp files, with getSpecialKeysFailureErrorMessage for 2117), reads,
 * commits and random UIDs. A body runs on the same transaction at every attempt: on_error
 * has reset it, and admin_run sets the attempt's options again first. */
#include "admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "error_codes.h"
#include "json.h"

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

fdb_error_t admin_range(FDBTransaction *tr, const char *b, size_t bl, const char *e, size_t el, int limit,
                        FDBFuture **f, const FDBKeyValue **kv, int *n)
{
    *f = fdb_transaction_get_range(tr, (const uint8_t *)b, (int)bl, 0, 1, (const uint8_t *)e, (int)el, 0, 1, limit, 0,
                                   FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    fdb_error_t err = shell_wait(*f);
    fdb_bool_t more;
    *n = 0;
    if (!err)
        err = fdb_future_get_keyvalue_array(*f, kv, n, &more);
    if (err) {
        fdb_future_destroy(*f);
        *f = NULL;
    }
    return err;
}

char *admin_key(const char *prefix, shell_token t, size_t *len)
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

fdb_error_t admin_commit(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_commit(tr);
    fdb_error_t e = shell_wait(f);
    fdb_future_destroy(f);
    return e;
}

void admin_random_bytes(uint8_t *r, size_t n)
{
    if (getrandom(r, n, 0) != (ssize_t)n)
        for (size_t i = 0; i < n; i++)
            r[i] = (uint8_t)rand();
}

void admin_random_uid(char *buf)
{
    uint8_t r[16];
    admin_random_bytes(r, sizeof r);
    for (int i = 0; i < 16; i++)
        snprintf(buf + 2 * i, 3, "%02x", r[i]);
}

bool admin_is_uid(shell_token t)
{
    bool hex = t.n == 32;
    for (size_t i = 0; hex && i < 32; i++)
        hex = t.p[i] && strchr("0123456789abcdefABCDEF", t.p[i]) != NULL;
    return hex;
}

char *admin_error_message(FDBTransaction *tr)
{
    bool present = false;
    char *v = NULL;
    size_t n = 0;
    if (admin_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), &present, &v, &n) || !present)
        return NULL;
    cfdb_jv *j = cfdb_jv_parse(v, n);
    free(v);
    const cfdb_jv *m = j ? cfdb_jv_get(j, "message") : NULL;
    char *out = m && m->type == JSON_STRING ? strndup(m->text, m->len) : NULL;
    cfdb_jv_free(j);
    return out;
}

/* fdbcli's catch block: CMD_FAIL after printing a 2117 message, ADMIN_ERROR to retry, or
 * CMD_FDB with the error on_error ended with. */
static int catch_error(FDBTransaction *tr, fdb_error_t e, unsigned flags, fdb_error_t *err)
{
    if (e == CFDB_ERR_SPECIAL_KEYS_API_FAILURE && !(flags & ADMIN_NO_MESSAGE)) {
        char *m = admin_error_message(tr);
        fflush(stdout);
        fprintf(stderr, (flags & ADMIN_RAW_MESSAGE) ? "%s%s" : "%s%s\n", (flags & ADMIN_ERROR_PREFIX) ? "ERROR: " : "",
                m ? m : "");
        free(m);
        return CMD_FAIL;
    }
    FDBFuture *f = fdb_transaction_on_error(tr, e);
    fdb_error_t oe = shell_wait(f);
    fdb_future_destroy(f);
    if (!oe)
        return ADMIN_ERROR;
    *err = oe;
    return CMD_FDB;
}

int admin_run(shell *s, unsigned flags, admin_body body, void *ctx, fdb_error_t *err)
{
    FDBTransaction *tr = NULL;
    if ((*err = fdb_database_create_transaction(s->db, &tr)))
        return CMD_FDB;
    int r;
    do {
        if (flags & ADMIN_WRITES)
            fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
        if (flags & ADMIN_READ_SYSTEM)
            fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
        if (flags & ADMIN_IMMEDIATE)
            fdb_transaction_set_option(tr, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE, NULL, 0);
        if (flags & ADMIN_SYSTEM) {
            fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
            fdb_transaction_set_option(tr, FDB_TR_OPTION_LOCK_AWARE, NULL, 0);
            fdb_transaction_set_option(tr, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE, NULL, 0);
        }
        fdb_error_t e = 0;
        r = body(tr, ctx, &e);
        if (r == CMD_FDB)
            *err = e;
        else if (r == ADMIN_ERROR)
            r = catch_error(tr, e, flags, err);
    } while (r == ADMIN_ERROR || r == ADMIN_AGAIN);
    fdb_transaction_destroy(tr);
    return r;
}
