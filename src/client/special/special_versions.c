/* \xff\xff/management/version_epoch and \xff\xff/management/min_required_commit_version, as
 * libfdb_c 7.3.77 answers them (VersionEpochImpl and AdvanceVersionImpl):
 *
 *   version_epoch                 read: \xff/versionEpoch (int64 little-endian, Unversioned)
 *                                 as its decimal text, nothing when absent; never the
 *                                 transaction's own special write. Commit: a set's value is
 *                                 itself the int64 little-endian (8 bytes; shorter is
 *                                 serialization_failed 1044) and is stored in \xff/versionEpoch,
 *                                 a clear clears it.
 *   min_required_commit_version   read: the transaction's own write (when read-your-writes is
 *                                 on), else \xff/minRequiredCommitVersion (int64 LE) as decimal.
 *                                 Commit ("advanceversion"): a set's value is decimal text
 *                                 (boost::lexical_cast<int64_t>: optional sign, digits, nothing
 *                                 else); refused while \xff/versionEpoch is present, above
 *                                 INT64_MAX - 1 - VERSIONS_PER_SECOND * 3600 * 24 * 365 * 1000,
 *                                 or when the read version is already above it; else
 *                                 \xff/minRequiredCommitVersion = value + 1. A clear clears it.
 * Both make the transaction LOCK_AWARE and RAW_ACCESS as the module code does. Failures are
 * special_keys_api_failure (2117) with \xff\xff/error_message, never retriable. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "foundationdb/fdb_c_options.g.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define VERSION_EPOCH_KEY "\xff/versionEpoch"
#define MIN_COMMIT_VERSION_KEY "\xff/minRequiredCommitVersion"
#define VERSIONS_PER_SECOND 1000000LL /* CLIENT_KNOBS->VERSIONS_PER_SECOND */
#define MAX_ALLOWED_VERSION (INT64_MAX - 1 - VERSIONS_PER_SECOND * 3600 * 24 * 365 * 1000)

/* The transaction's own special write of key (the write map, whatever read-your-writes
 * says): written, and its value when set; ryw_off: read-your-writes is disabled. */
static int own_write(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes key, bool *written, bool *has_value, cfdb_bytes *value,
                     bool *ryw_off)
{
    uint8_t *end = cfdb_arena_alloc(a, key.len + 1);
    if (!end)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(end, key.ptr, key.len);
    end[key.len] = 0;
    sk_entries w;
    int rc = sk_collect(tx, key, cfdb_bytes_make(end, key.len + 1), a, &w);
    *written = !rc && w.n > 0 && cfdb_bytes_cmp(w.items[0].begin, key) <= 0;
    *has_value = *written && w.items[0].has_value;
    if (*has_value)
        *value = w.items[0].value;
    *ryw_off = w.ryw_disabled;
    return rc;
}

static void system_options(cfdb_txn *tx)
{
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
}

/* key's int64 (little-endian, exactly as BinaryReader reads it) as decimal text */
static int read_int64_key(cfdb_txn *tx, const char *key, cfdb_bytes out_key, cfdb_arena *a, sk_rows *out)
{
    bool present = false;
    cfdb_bytes v;
    system_options(tx);
    int rc = skw_get(tx, cfdb_bytes_str(key), a, &present, &v);
    if (rc || !present)
        return rc;
    if (v.len < 8)
        return CFDB_ERR_SERIALIZATION_FAILED;
    int64_t n;
    memcpy(&n, v.ptr, 8);
    char *text = cfdb_arena_alloc(a, 24);
    if (!text)
        return CFDB_ERR_UNKNOWN_ERROR;
    int len = snprintf(text, 24, "%" PRId64, n);
    return sk_rows_push(out, a, out_key, cfdb_bytes_make(text, (size_t)len));
}

int sk_version_epoch_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    (void)end;
    return read_int64_key(tx, VERSION_EPOCH_KEY, begin, a, out);
}

int sk_version_epoch_commit(cfdb_txn *tx, cfdb_arena *a)
{
    bool written, has_value, ryw_off;
    cfdb_bytes v;
    int rc = own_write(tx, a, CFDB_BYTES_LIT(SK_MGMT "version_epoch"), &written, &has_value, &v, &ryw_off);
    if (rc)
        return rc;
    if (!has_value)
        return skw_clear(tx, CFDB_BYTES_LIT(VERSION_EPOCH_KEY), CFDB_BYTES_LIT(VERSION_EPOCH_KEY "\x00"));
    if (v.len < 8)
        return CFDB_ERR_SERIALIZATION_FAILED;
    system_options(tx);
    return skw_set(tx, CFDB_BYTES_LIT(VERSION_EPOCH_KEY), cfdb_bytes_make(v.ptr, 8));
}

int sk_min_commit_version_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    (void)end;
    bool written, has_value, ryw_off;
    cfdb_bytes v;
    int rc = own_write(tx, a, begin, &written, &has_value, &v, &ryw_off);
    if (rc)
        return rc;
    if (written && !ryw_off)
        return has_value ? sk_rows_push(out, a, begin, v) : 0;
    return read_int64_key(tx, MIN_COMMIT_VERSION_KEY, begin, a, out);
}

/* boost::lexical_cast<int64_t>: an optional sign, then one or more digits, in range */
static bool parse_int64(cfdb_bytes v, int64_t *out)
{
    char buf[32];
    if (v.len == 0 || v.len >= sizeof buf)
        return false;
    memcpy(buf, v.ptr, v.len);
    buf[v.len] = 0;
    size_t i = (buf[0] == '-' || buf[0] == '+') ? 1 : 0;
    if (!buf[i])
        return false;
    for (size_t k = i; buf[k]; k++)
        if (buf[k] < '0' || buf[k] > '9')
            return false;
    errno = 0;
    char *endp;
    long long n = strtoll(buf, &endp, 10);
    if (errno == ERANGE || *endp)
        return false;
    *out = (int64_t)n;
    return true;
}

int sk_min_commit_version_commit(cfdb_txn *tx, cfdb_arena *a)
{
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    bool written, has_value, ryw_off;
    cfdb_bytes v;
    int rc = own_write(tx, a, CFDB_BYTES_LIT(SK_MGMT "min_required_commit_version"), &written, &has_value, &v, &ryw_off);
    if (rc)
        return rc;
    if (!has_value)
        return skw_clear(tx, CFDB_BYTES_LIT(MIN_COMMIT_VERSION_KEY), CFDB_BYTES_LIT(MIN_COMMIT_VERSION_KEY "\x00"));
    int64_t want;
    if (!parse_int64(v, &want)) {
        char msg[160];
        snprintf(msg, sizeof msg, "Invalid version(int64_t) argument: %.*s", (int)(v.len > 64 ? 64 : v.len),
                 (const char *)v.ptr);
        return sk_api_failure(tx, false, "advanceversion", msg);
    }
    bool epoch = false;
    cfdb_bytes ev;
    if ((rc = skw_get(tx, CFDB_BYTES_LIT(VERSION_EPOCH_KEY), a, &epoch, &ev)))
        return rc;
    if (epoch)
        return sk_api_failure(tx, false, "advanceversion",
                              "Illegal to modify the version while the version epoch is enabled");
    system_options(tx);
    if (want > MAX_ALLOWED_VERSION)
        return sk_api_failure(tx, false, "advanceversion",
                              "The given version is larger than the maximum allowed "
                              "value(2**63-1-version_per_second*3600*24*365*1000)");
    cfdb_future *f = cfdb_txn_get_read_version(tx);
    cfdb_future_wait(f);
    rc = f->error;
    int64_t rv = f->r.i64;
    cfdb_future_unref(f);
    if (rc)
        return rc;
    if (rv > want)
        return sk_api_failure(tx, false, "advanceversion", "Current read version is larger than the given version");
    int64_t next = want + 1;
    uint8_t le[8];
    memcpy(le, &next, 8);
    return skw_set(tx, CFDB_BYTES_LIT(MIN_COMMIT_VERSION_KEY), cfdb_bytes_make(le, 8));
}
