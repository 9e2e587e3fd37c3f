/* \xff\xff/tracing/ (7.3.77 fdbclient/SpecialKeySpace.actor.cpp TracingOptionsImpl;
 * fdbclient/NativeAPI.actor.cpp generateSpanID, Transaction::setTransactionID / setToken,
 * resetImpl / fullReset).
 *
 * The transaction's span context: a random traceID (UID) and a random spanID (uint64),
 * drawn when the transaction starts and again after fdb_transaction_reset (fullReset), kept
 * across on_error's reset. cfdb draws it when first used (the values are random either way).
 *
 * Reads (SpecialKeySpace::getTracingOptions: "transaction_id", "token"):
 *   \xff\xff/tracing/transaction_id  the traceID as UID::toString (32 lowercase hex digits)
 *   \xff\xff/tracing/token           the spanID in decimal (std::to_string)
 *   only the rows whose key lies in the range read; nothing else in the module.
 * Sets act at once and are not recorded, except:
 *   - when the transaction's approximate size is above 0 (it has read or written): the error
 *     message becomes {"command":"configure trace","message":"tracing options must be set
 *     first","retriable":false}, a clear of the key is recorded, and the commit fails with
 *     special_keys_api_failure (2117; TracingOptionsImpl::commit);
 *   - a key ending in "transaction_id": the value must be 32 characters that sscanf reads
 *     as two %16llx numbers (UID::fromString; its ASSERTs fail with internal_error, 4100);
 *     the traceID becomes that UID;
 *   - a key ending in "token": "true" draws a new random spanID, "false" sets it to 0,
 *     anything else fails with 2117 and {"command":"configure trace token","message":
 *     "token must be set to true/false",...};
 *   - any other key of the module: nothing happens.
 * Clears always fail with 2117 ("clear trace": "clear disabled" / "clear range disabled"),
 * as the router's SK_W_NO_CLEAR does. The span context is not sent in cfdb's requests
 * (their spanContext fields stay zero): it is observable through these keys only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "error_codes.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define TR_PREFIX "\xff\xff/tracing/"

static uint64_t random_u64(void)
{
    uint64_t u = 0;
    if (getrandom(&u, sizeof u, 0) != (ssize_t)sizeof u)
        u = (uint64_t)(uintptr_t)&u ^ 0x9E3779B97F4A7C15ull;
    return u;
}

/* mu held */
static void ensure_span(cfdb_txn *tx)
{
    cfdb_txn_span *s = cfdb_txn_span_locked(tx);
    if (s->set)
        return;
    s->set = true;
    s->trace_first = random_u64();
    s->trace_second = random_u64();
    s->span_id = random_u64();
}

static bool in_range(const char *key, cfdb_bytes begin, cfdb_bytes end)
{
    cfdb_bytes k = cfdb_bytes_str(key);
    return cfdb_bytes_cmp(k, begin) >= 0 && cfdb_bytes_cmp(k, end) < 0;
}

int sk_tracing_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    cfdb_txn_lock(tx);
    ensure_span(tx);
    const cfdb_txn_span *s = cfdb_txn_span_locked(tx);
    uint64_t t1 = s->trace_first, t2 = s->trace_second, sid = s->span_id;
    cfdb_txn_unlock(tx);
    char text[40];
    int rc = 0;
    /* getTracingOptions' order: transaction_id, then token (both rows come out sorted) */
    if (in_range(TR_PREFIX "transaction_id", begin, end)) {
        snprintf(text, sizeof text, "%016" PRIx64 "%016" PRIx64, t1, t2);
        rc = sk_rows_push(out, a, cfdb_bytes_str(TR_PREFIX "transaction_id"), cfdb_bytes_str(text));
    }
    if (!rc && in_range(TR_PREFIX "token", begin, end)) {
        snprintf(text, sizeof text, "%" PRIu64, sid);
        rc = sk_rows_push(out, a, cfdb_bytes_str(TR_PREFIX "token"), cfdb_bytes_str(text));
    }
    if (!rc && out->n == 2) { /* "token" sorts before "transaction_id" */
        cfdb_fdb_kv t = out->items[0];
        out->items[0] = out->items[1];
        out->items[1] = t;
    }
    return rc;
}

static bool ends_with(cfdb_bytes k, const char *suffix)
{
    size_t n = strlen(suffix);
    return k.len >= n && memcmp(k.ptr + k.len - n, suffix, n) == 0;
}

void sk_tracing_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value, sk_write_effect *e)
{
    if (cfdb_ryw_size(cfdb_txn_ryw_locked(tx)) > 0) {
        e->cmd = "configure trace";
        e->msg = "tracing options must be set first";
        e->record = SK_REC_CLEAR;
        return;
    }
    ensure_span(tx);
    if (ends_with(key, "transaction_id")) {
        /* UID::fromString: ASSERT(size == 32), sscanf("%16llx%16llx") == 2 */
        char s[33];
        uint64_t hi = 0, lo = 0;
        if (value.len != 32) {
            e->rc = CFDB_ERR_INTERNAL_ERROR;
            return;
        }
        memcpy(s, value.ptr, 32);
        s[32] = 0;
        if (memchr(s, 0, 32) || sscanf(s, "%16" SCNx64 "%16" SCNx64, &hi, &lo) != 2) {
            e->rc = CFDB_ERR_INTERNAL_ERROR;
            return;
        }
        cfdb_txn_span_locked(tx)->trace_first = hi;
        cfdb_txn_span_locked(tx)->trace_second = lo;
    } else if (ends_with(key, "token")) {
        if (cfdb_bytes_eq(value, CFDB_BYTES_LIT("true"))) {
            cfdb_txn_span_locked(tx)->span_id = random_u64();
        } else if (cfdb_bytes_eq(value, CFDB_BYTES_LIT("false"))) {
            cfdb_txn_span_locked(tx)->span_id = 0;
        } else {
            e->cmd = "configure trace token";
            e->msg = "token must be set to true/false";
            e->rc = CFDB_ERR_SPECIAL_KEYS_API_FAILURE;
        }
    }
}

/* Reached only when a set was recorded (the "set first" case): always fails. */
int sk_tracing_commit(cfdb_txn *tx, cfdb_arena *a)
{
    (void)tx;
    (void)a;
    return CFDB_ERR_SPECIAL_KEYS_API_FAILURE;
}
