/* SPDX-License-Identifier: Apache-2.0 */
/* The shell's `status' command from \xff\xff/status/json (fdbcli/StatusCommand.actor.cpp,
 * statusCommandActor and printStatus, FoundationDB 7.3.77):
 *   status json     the document pretty-printed as json_spirit does (json.h);
 *   status minimal  client.database_status.available / .healthy and
 *                   client.cluster_file.up_to_date, with fdbcli's sentences;
 *   status, status details: cfdb prints the minimal form (fdbcli's full report needs
 *                   fields cfdb-server does not produce).
 * Outside --exec the output has a blank line before and after, as fdbcli's.
 */
#include <stdio.h>
#include <string.h>

#include "error_codes.h"
#include "json.h"
#include "shell.h"

static const char STATUS_KEY[] = "\xff\xff/status/json";

fdb_error_t shell_read_status(shell *s, cfdb_jv **out, bool *present)
{
    *out = NULL;
    *present = false;
    FDBTransaction *tr;
    fdb_error_t err = fdb_database_create_transaction(s->db, &tr);
    if (err)
        return err;
    FDBFuture *f = fdb_transaction_get(tr, (const uint8_t *)STATUS_KEY, (int)sizeof STATUS_KEY - 1, 0);
    err = shell_wait(f);
    fdb_bool_t p = 0;
    const uint8_t *v;
    int vl;
    if (!err)
        err = fdb_future_get_value(f, &p, &v, &vl);
    if (!err && p) {
        *present = true;
        *out = cfdb_jv_parse((const char *)v, (size_t)vl);
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return err;
}

static bool get_bool(const cfdb_jv *j, bool *v)
{
    if (!j || j->type != JSON_BOOL)
        return false;
    *v = j->b;
    return true;
}

/* printStatus at MINIMAL level. */
static void print_minimal(const cfdb_jv *doc, bool display_available)
{
    const cfdb_jv *client = cfdb_jv_get(doc, "client");
    const cfdb_jv *dbs = cfdb_jv_get(client, "database_status");
    bool available, healthy, up_to_date;
    if (!dbs || dbs->type != JSON_OBJECT || !get_bool(cfdb_jv_get(dbs, "available"), &available)) {
        printf("Unable to determine database state, type 'status' for more information.\n");
        return;
    }
    if (!available)
        printf("The database is unavailable; type `status' for more information.\n");
    else if (!get_bool(cfdb_jv_get(dbs, "healthy"), &healthy) || !healthy)
        printf("The database is available, but has issues (type 'status' for more information).\n");
    else if (display_available)
        printf("The database is available.\n");
    if (!get_bool(cfdb_jv_get(cfdb_jv_get(client, "cluster_file"), "up_to_date"), &up_to_date) || !up_to_date)
        fprintf(stderr, "WARNING: The cluster file is not up to date. Type 'status' for more information.\n");
}

bool shell_status_minimal(shell *s, bool blank_lines)
{
    cfdb_jv *doc;
    bool present;
    fdb_error_t err = shell_read_status(s, &doc, &present);
    if (blank_lines)
        printf("\n");
    if (err || !doc)
        printf("Unable to determine database state, type 'status' for more information.\n");
    else
        print_minimal(doc, true);
    if (blank_lines)
        printf("\n");
    cfdb_jv_free(doc);
    return !err && doc;
}

int shell_cmd_status(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    bool json = false;
    if (n == 2 && shell_token_is(t[1], "json"))
        json = true;
    else if (!(n == 1 || (n == 2 && (shell_token_is(t[1], "details") || shell_token_is(t[1], "minimal"))))) {
        printf("Usage: status [minimal|details|json]\n");
        return CMD_FAIL;
    }
    cfdb_jv *doc;
    bool present;
    if ((*err = shell_read_status(s, &doc, &present)))
        return CMD_FDB;
    if (!present)
        fprintf(stderr, "ERROR: Failed to get status json from the cluster\n");
    if (!s->exec_mode)
        printf("\n");
    if (json) {
        if (doc) {
            shell_json_pretty(stdout, doc);
            printf("\n");
        } else {
            printf("Could not retrieve status json.\n\n");
        }
    } else if (doc) {
        print_minimal(doc, true);
    } else {
        printf("Unable to determine database state, type 'status' for more information.\n");
    }
    if (!s->exec_mode)
        printf("\n");
    cfdb_jv_free(doc);
    return doc ? CMD_OK : CMD_FAIL;
}
