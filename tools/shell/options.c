/* SPDX-License-Identifier: Apache-2.0 */
/* The transaction option table (generated once from include/foundationdb/fdb_c_options.g.h:
 * name, code, parameter type, documented) and option sets; see options.h. */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "lexer.h"

const shell_option_info shell_options[] = {
    {"ACCESS_SYSTEM_KEYS", 301, OPT_NONE, true},
    {"AUTHORIZATION_TOKEN", 2000, OPT_STRING, true},
    {"AUTOMATIC_IDEMPOTENCY", 505, OPT_NONE, true},
    {"AUTO_THROTTLE_TAG", 801, OPT_STRING, true},
    {"BYPASS_STORAGE_QUOTA", 304, OPT_NONE, true},
    {"BYPASS_UNREADABLE", 1100, OPT_NONE, true},
    {"CAUSAL_READ_DISABLE", 21, OPT_NONE, true},
    {"CAUSAL_READ_RISKY", 20, OPT_NONE, true},
    {"CAUSAL_WRITE_RISKY", 10, OPT_NONE, true},
    {"CHECK_WRITES_ENABLE", 50, OPT_NONE, false},
    {"COMMIT_ON_FIRST_PROXY", 40, OPT_NONE, false},
    {"DEBUG_DUMP", 400, OPT_NONE, false},
    {"DEBUG_RETRY_LOGGING", 401, OPT_STRING, true},
    {"DEBUG_TRANSACTION_IDENTIFIER", 403, OPT_STRING, true},
    {"DURABILITY_DATACENTER", 110, OPT_NONE, true},
    {"DURABILITY_DEV_NULL_IS_WEB_SCALE", 130, OPT_NONE, false},
    {"DURABILITY_RISKY", 120, OPT_NONE, true},
    {"EXPENSIVE_CLEAR_COST_ESTIMATION_ENABLE", 1000, OPT_NONE, true},
    {"FIRST_IN_BATCH", 710, OPT_NONE, false},
    {"IDEMPOTENCY_ID", 504, OPT_STRING, false},
    {"INCLUDE_PORT_IN_ADDRESS", 23, OPT_NONE, true},
    {"INITIALIZE_NEW_DATABASE", 300, OPT_NONE, true},
    {"LOCK_AWARE", 700, OPT_NONE, true},
    {"LOG_TRANSACTION", 404, OPT_NONE, true},
    {"MAX_RETRY_DELAY", 502, OPT_INT, true},
    {"NEXT_WRITE_NO_WRITE_CONFLICT_RANGE", 30, OPT_NONE, true},
    {"PRIORITY_BATCH", 201, OPT_NONE, true},
    {"PRIORITY_SYSTEM_IMMEDIATE", 200, OPT_NONE, true},
    {"RAW_ACCESS", 303, OPT_NONE, true},
    {"READ_AHEAD_DISABLE", 52, OPT_NONE, false},
    {"READ_LOCK_AWARE", 702, OPT_NONE, true},
    {"READ_PRIORITY_HIGH", 511, OPT_NONE, true},
    {"READ_PRIORITY_LOW", 510, OPT_NONE, true},
    {"READ_PRIORITY_NORMAL", 509, OPT_NONE, true},
    {"READ_SERVER_SIDE_CACHE_DISABLE", 508, OPT_NONE, true},
    {"READ_SERVER_SIDE_CACHE_ENABLE", 507, OPT_NONE, true},
    {"READ_SYSTEM_KEYS", 302, OPT_NONE, true},
    {"READ_YOUR_WRITES_DISABLE", 51, OPT_NONE, true},
    {"REPORT_CONFLICTING_KEYS", 712, OPT_NONE, true},
    {"RETRY_LIMIT", 501, OPT_INT, true},
    {"SERVER_REQUEST_TRACING", 406, OPT_NONE, true},
    {"SIZE_LIMIT", 503, OPT_INT, true},
    {"SKIP_GRV_CACHE", 1102, OPT_NONE, false},
    {"SNAPSHOT_RYW_DISABLE", 601, OPT_NONE, true},
    {"SNAPSHOT_RYW_ENABLE", 600, OPT_NONE, true},
    {"SPAN_PARENT", 900, OPT_BYTES, true},
    {"SPECIAL_KEY_SPACE_ENABLE_WRITES", 714, OPT_NONE, true},
    {"SPECIAL_KEY_SPACE_RELAXED", 713, OPT_NONE, true},
    {"TAG", 800, OPT_STRING, true},
    {"TIMEOUT", 500, OPT_INT, true},
    {"TRANSACTION_LOGGING_ENABLE", 402, OPT_STRING, false},
    {"TRANSACTION_LOGGING_MAX_FIELD_LENGTH", 405, OPT_INT, true},
    {"USED_DURING_COMMIT_PROTECTION_DISABLE", 701, OPT_NONE, true},
    {"USE_GRV_CACHE", 1101, OPT_NONE, true},
    {"USE_PROVISIONAL_PROXIES", 711, OPT_NONE, true},
};
const size_t shell_options_count = sizeof shell_options / sizeof shell_options[0];

_Static_assert(sizeof shell_options / sizeof shell_options[0] <= 64, "shell_optset holds 64 options");

int shell_option_find(const char *name, size_t n)
{
    for (size_t i = 0; i < shell_options_count; i++)
        if (strlen(shell_options[i].name) == n && memcmp(shell_options[i].name, name, n) == 0)
            return (int)i;
    return -1;
}

void shell_optset_clear(shell_optset *s)
{
    for (size_t i = 0; i < 64; i++)
        free(s->value[i]);
    memset(s, 0, sizeof *s);
}

int shell_optset_set(shell_optset *s, int idx, bool on, const uint8_t *value, size_t len)
{
    free(s->value[idx]);
    s->value[idx] = NULL;
    s->len[idx] = 0;
    s->on[idx] = on;
    if (on && value) {
        s->value[idx] = malloc(len ? len : 1);
        if (!s->value[idx])
            return CFDB_ERR_INTERNAL_ERROR;
        memcpy(s->value[idx], value, len);
        s->len[idx] = len;
    }
    return 0;
}

int shell_optset_copy(shell_optset *dst, const shell_optset *src)
{
    shell_optset_clear(dst);
    for (int i = 0; i < 64; i++)
        if (src->on[i]) {
            int err = shell_optset_set(dst, i, true, src->value[i], src->len[i]);
            if (err)
                return err;
        }
    return 0;
}

bool shell_optset_any(const shell_optset *s)
{
    for (size_t i = 0; i < 64; i++)
        if (s->on[i])
            return true;
    return false;
}

fdb_error_t shell_optset_apply(const shell_optset *s, FDBTransaction *tr)
{
    /* ascending code: pick the smallest code above the last one applied */
    int last = -1;
    for (;;) {
        int best = -1;
        for (size_t i = 0; i < shell_options_count; i++)
            if (s->on[i] && shell_options[i].code > last &&
                (best < 0 || shell_options[i].code < shell_options[best].code))
                best = (int)i;
        if (best < 0)
            return 0;
        last = shell_options[best].code;
        fdb_error_t err = fdb_transaction_set_option(tr, (FDBTransactionOption)shell_options[best].code,
                                                     s->value[best], (int)s->len[best]);
        if (err)
            return err;
    }
}

void shell_optset_print(const shell_optset *s)
{
    for (size_t i = 0; i < shell_options_count; i++) {
        if (!s->on[i])
            continue;
        if (s->value[i]) {
            printf("%s: `", shell_options[i].name);
            shell_format_token(stdout, (const char *)s->value[i], s->len[i], false);
            printf("'\n");
        } else {
            printf("%s\n", shell_options[i].name);
        }
    }
}

bool shell_option_parse_int(const char *text, size_t n, int64_t *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf || memchr(text, 0, n))
        return false;
    memcpy(buf, text, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (end == buf || *end || errno == ERANGE)
        return false;
    *out = v;
    return true;
}
