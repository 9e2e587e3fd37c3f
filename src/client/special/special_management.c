/* \xff\xff/management/: the implementations registered in it (NativeAPI's
 * DatabaseContext constructor at 7.3.77), in key order, and those cfdb computes:
 *   consistency_check_suspended  \xff\x02/ConsistencyCheck/Suspend (a bool byte): present
 *                                "" when true; a set writes true, a clear false
 *   data_distribution/mode, /rebalance_ignored   \xff/dataDistributionMode (int32 LE, -1
 *                                when absent), \xff\x02/rebalanceDDIgnored; the commit sets them
 *                                (mode 0..2, with the move-keys lock) or clears them
 *   db_locked                    \xff/dbLocked: the lock UID (32 hex digits) from bytes
 *                                10..26 of the versionstamped value; a set locks with that
 *                                UID (database_locked 1038 when locked by another), a clear
 *                                unlocks; both make the transaction LOCK_AWARE
 *   excluded/, failed/, excluded_locality/, failed_locality/   the keys under
 *                                \xff/conf/<same>/, merged with the transaction's own writes
 *   maintenance/<zone>           \xff\x02/healthyZone (IncludeVersion: zone, end version):
 *                                the seconds left ("%.17g", as boost::lexical_cast), 0 for
 *                                IgnoreSSFailures
 *   options/                     the management options written in this transaction
 *   tenant/                      special_tenant_map.c
 *                                the four commits: set addresses / localities join \xff/conf/<same>/
 *                                (without options/<same>/force after libfdb_c's free-space and
 *                                safety checks, special_exclusion.c), cleared ones leave it,
 *                                with the version keys \xff/conf/excluded, /failed
 *   in_progress_exclusion/       special_exclusion.c
 *   min_required_commit_version, version_epoch   special_versions.c
 *   profiling/                   special_profiling.c (registered below API 720 only)
 *   auto_coordinators            special_auto_coordinators.c (read only) */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "mutation.h"
#include "network_address.h"
#include "protocol_version.h"
#include "foundationdb/fdb_c_options.g.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define DB_LOCKED_KEY "\xff/dbLocked"
#define CC_SUSPEND_KEY "\xff\x02/ConsistencyCheck/Suspend"
#define HEALTHY_ZONE_KEY "\xff\x02/healthyZone"
#define DD_MODE_KEY "\xff/dataDistributionMode"
#define DD_REBALANCE_IGNORE_KEY "\xff\x02/rebalanceDDIgnored"
#define IGNORE_SS_FAILURES "IgnoreSSFailures"
#define VERSIONS_PER_SECOND 1e6

/* The transaction's own write of key, if any (RYW on). */
static int own_write(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes key, bool *written, bool *has_value, cfdb_bytes *value)
{
    uint8_t *end = cfdb_arena_alloc(a, key.len + 1);
    if (!end)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(end, key.ptr, key.len);
    end[key.len] = 0;
    sk_entries w;
    int rc = sk_collect(tx, key, cfdb_bytes_make(end, key.len + 1), a, &w);
    *written = !rc && !w.ryw_disabled && w.n > 0 && cfdb_bytes_cmp(w.items[0].begin, key) <= 0;
    if (*written) {
        *has_value = w.items[0].has_value;
        *value = w.items[0].value;
    }
    return rc;
}

/* ---- exclusions: a one-to-one mapping onto \xff/conf/ ---- */

static int mapped_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out, const char *sk,
                       const char *sys, const char *sys_end)
{
    size_t skl = strlen(sk);
    cfdb_bytes sb = begin.len >= skl ? sk_key(a, sys, cfdb_bytes_make(begin.ptr + skl, begin.len - skl))
                                     : cfdb_bytes_str(sys);
    cfdb_bytes se = end.len >= skl && memcmp(end.ptr, sk, skl) == 0
                        ? sk_key(a, sys, cfdb_bytes_make(end.ptr + skl, end.len - skl))
                        : cfdb_bytes_str(sys_end);
    if (!sb.ptr || !se.ptr)
        return CFDB_ERR_UNKNOWN_ERROR;
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    sk_rows db, mapped = { 0 };
    int rc = skw_range(tx, sb, se, 0, a, &db);
    size_t sl = strlen(sys);
    for (int i = 0; i < db.n && !rc; i++) {
        cfdb_bytes k = sk_key(a, sk, cfdb_bytes_make(db.items[i].key + sl, (size_t)db.items[i].key_length - sl));
        if (!k.ptr)
            return CFDB_ERR_UNKNOWN_ERROR;
        rc = sk_rows_push(&mapped, a, k, cfdb_bytes_make(db.items[i].value, (size_t)db.items[i].value_length));
    }
    return rc ? rc : sk_ryw_merge(tx, begin, end, a, &mapped, out);
}

#define MAPPED(fn, SK, SYS)                                                                        \
    int fn(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)      \
    {                                                                                               \
        return mapped_read(tx, begin, end, a, out, SK_MGMT SK "/", "\xff/conf/" SYS "/", "\xff/conf/" SYS "0"); \
    }
MAPPED(sk_mgmt_excluded_read, "excluded", "excluded")
MAPPED(sk_mgmt_excluded_locality_read, "excluded_locality", "excluded_locality")
MAPPED(sk_mgmt_failed_read, "failed", "failed")
MAPPED(sk_mgmt_failed_locality_read, "failed_locality", "failed_locality")

/* AddressExclusion::parse then toString: a whole machine ("IP") or one process ("IP:port");
 * ":tls" is refused. Returns false for an invalid address; out gets the canonical text. */
bool sk_parse_exclusion(cfdb_bytes text, char *out, size_t cap)
{
    char buf[128];
    if (text.len == 0 || text.len >= sizeof buf)
        return false;
    memcpy(buf, text.ptr, text.len);
    buf[text.len] = 0;
    uint8_t ip[16];
    if (inet_pton(AF_INET, buf, ip) == 1 || inet_pton(AF_INET6, buf, ip) == 1) {
        int v6 = strchr(buf, ':') != NULL;
        return inet_ntop(v6 ? AF_INET6 : AF_INET, ip, out, (socklen_t)cap) != NULL;
    }
    cfdb_network_address na;
    uint8_t v6[16];
    if (cfdb_network_address_parse(buf, text.len, &na, v6) || (na.flags & CFDB_ADDR_FLAG_TLS) || na.fromHostname)
        return false;
    cfdb_network_address_format(&na, out, cap);
    return true;
}

/* The four exclusion implementations: special range, \xff/conf/ range, version key, force
 * option, command name; addresses (excluded/, failed/) or localities (..._locality/). */
typedef struct exclusion_kind {
    const char *sk, *sk_end, *sys, *sys_end, *version_key, *force, *command;
    bool locality;
} exclusion_kind;

static const exclusion_kind exclusion_kinds[4] = {
    { SK_MGMT "excluded/", SK_MGMT "excluded0", "\xff/conf/excluded/", "\xff/conf/excluded0", "\xff/conf/excluded",
      SK_MGMT "options/excluded/force", "exclude", false },
    { SK_MGMT "failed/", SK_MGMT "failed0", "\xff/conf/failed/", "\xff/conf/failed0", "\xff/conf/failed",
      SK_MGMT "options/failed/force", "exclude failed", false },
    { SK_MGMT "excluded_locality/", SK_MGMT "excluded_locality0", "\xff/conf/excluded_locality/",
      "\xff/conf/excluded_locality0", "\xff/conf/excluded_locality", SK_MGMT "options/excluded_locality/force",
      "exclude", true },
    { SK_MGMT "failed_locality/", SK_MGMT "failed_locality0", "\xff/conf/failed_locality/",
      "\xff/conf/failed_locality0", "\xff/conf/failed_locality", SK_MGMT "options/failed_locality/force",
      "exclude failed", true },
};

static int set_version_key(cfdb_txn *tx, const char *key, const char *version)
{
    uint8_t end[64];
    size_t n = strlen(key);
    memcpy(end, key, n);
    end[n] = 0;
    int rc = skw_read_conflict(tx, cfdb_bytes_make(key, n), cfdb_bytes_make(end, n + 1));
    return rc ? rc : skw_set(tx, cfdb_bytes_make(key, n), cfdb_bytes_str(version));
}

/* includeServers / includeLocalities: every cleared range of the two kinds k0, k1 */
static int include_cleared(cfdb_txn *tx, cfdb_arena *a, const exclusion_kind *k0, const exclusion_kind *k1,
                           const char *version)
{
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_CAUSAL_WRITE_RISKY);
    int rc = 0;
    for (int f = 0; f < 2 && !rc; f++) {
        const exclusion_kind *k = f ? k1 : k0;
        sk_entries c;
        rc = sk_collect(tx, cfdb_bytes_str(k->sk), cfdb_bytes_str(k->sk_end), a, &c);
        size_t il = strlen(k->sk);
        for (size_t i = 0; i < c.n && !rc; i++) {
            if (c.items[i].has_value)
                continue;
            rc = set_version_key(tx, k->version_key, version);
            /* the cleared special range, decoded onto \xff/conf/ */
            cfdb_bytes b = sk_key(a, k->sys, cfdb_bytes_make(c.items[i].begin.ptr + il, c.items[i].begin.len - il));
            cfdb_bytes e = c.items[i].end.len >= il && memcmp(c.items[i].end.ptr, k->sk, il) == 0
                               ? sk_key(a, k->sys, cfdb_bytes_make(c.items[i].end.ptr + il, c.items[i].end.len - il))
                               : cfdb_bytes_str(k->sys_end);
            if (!b.ptr || !e.ptr)
                return CFDB_ERR_UNKNOWN_ERROR;
            if (!rc)
                rc = skw_clear(tx, b, e);
        }
    }
    return rc;
}

/* excludeCommitActor / excludeLocalityCommitActor (SpecialKeySpace.actor.cpp): what is set
 * joins \xff/conf/<kind>/ with a new version key (excludeServers / excludeLocalities: the new
 * ones only), then the clears of both kinds of its family are included. Without the force
 * option the exclusion is first checked as checkExclusion does (sk_exclusion_safety: the
 * cluster's free space from status json and, for failed servers, checkSafeExclusions). */
static int exclusion_commit(cfdb_txn *tx, cfdb_arena *a, int kind)
{
    const exclusion_kind *k = &exclusion_kinds[kind];
    sk_entries w;
    int rc = sk_collect(tx, cfdb_bytes_str(k->sk), cfdb_bytes_str(k->sk_end), a, &w);
    if (rc)
        return rc;
    size_t skl = strlen(k->sk), nadd = 0;
    char(*items)[128] = cfdb_arena_alloc(a, (w.n + 1) * sizeof *items);
    if (!items)
        return CFDB_ERR_UNKNOWN_ERROR;
    for (size_t i = 0; i < w.n; i++) {
        if (!w.items[i].has_value)
            continue;
        cfdb_bytes text = cfdb_bytes_make(w.items[i].begin.ptr + skl, w.items[i].begin.len - skl);
        bool ok;
        if (k->locality) {
            ok = text.len < sizeof items[nadd] && text.len > 9 && memcmp(text.ptr, "locality_", 9) == 0 &&
                 memchr(text.ptr, ':', text.len) != NULL;
            if (ok) {
                memcpy(items[nadd], text.ptr, text.len);
                items[nadd][text.len] = 0;
            }
        } else {
            ok = sk_parse_exclusion(text, items[nadd], sizeof items[nadd]);
        }
        if (!ok) {
            char msg[512];
            int tls = !k->locality && memmem(text.ptr, text.len, ":tls", 4) != NULL;
            snprintf(msg, sizeof msg, "ERROR: '%.*s' is not a valid %s\n%s", (int)(text.len < 200 ? text.len : 200),
                     (const char *)text.ptr, k->locality ? "locality" : "network endpoint address",
                     tls ? "        Do not include the `:tls' suffix when naming a process\n" : "");
            return sk_api_failure(tx, false, k->command, msg);
        }
        nadd++;
    }
    bool written = false, forced = false;
    cfdb_bytes fv;
    if ((rc = own_write(tx, a, cfdb_bytes_str(k->force), &written, &forced, &fv)))
        return rc;
    if (nadd && !(written && forced) &&
        (rc = sk_exclusion_safety(tx, a, items, nadd, k->locality, kind == 1 || kind == 3)))
        return rc; /* checkExclusion (special_exclusion.c) */
    char version[33];
    cfdb_uid u = { (uint64_t)rand() << 32 ^ (uint64_t)rand(), (uint64_t)rand() << 32 ^ (uint64_t)rand() };
    cfdb_uid_format(u, version);
    if (nadd) {
        skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
        skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
        sk_rows have;
        if ((rc = skw_range(tx, cfdb_bytes_str(k->sys), cfdb_bytes_str(k->sys_end), 0, a, &have)))
            return rc;
        bool any_new = false;
        for (size_t i = 0; i < nadd && !rc; i++) {
            cfdb_bytes key = sk_key(a, k->sys, cfdb_bytes_str(items[i]));
            if (!key.ptr)
                return CFDB_ERR_UNKNOWN_ERROR;
            bool known = false;
            for (int h = 0; h < have.n && !known; h++)
                known = cfdb_bytes_eq(key, cfdb_bytes_make(have.items[h].key, (size_t)have.items[h].key_length));
            if (!known) {
                any_new = true;
                rc = skw_set(tx, key, CFDB_BYTES_LIT(""));
            }
        }
        if (!rc && any_new)
            rc = set_version_key(tx, k->version_key, version);
        if (rc)
            return rc;
    }
    return k->locality ? include_cleared(tx, a, &exclusion_kinds[2], &exclusion_kinds[3], version)
                       : include_cleared(tx, a, &exclusion_kinds[0], &exclusion_kinds[1], version);
}

int sk_mgmt_excluded_commit(cfdb_txn *tx, cfdb_arena *a)
{
    return exclusion_commit(tx, a, 0);
}

int sk_mgmt_failed_commit(cfdb_txn *tx, cfdb_arena *a)
{
    return exclusion_commit(tx, a, 1);
}

int sk_mgmt_excluded_locality_commit(cfdb_txn *tx, cfdb_arena *a)
{
    return exclusion_commit(tx, a, 2);
}

int sk_mgmt_failed_locality_commit(cfdb_txn *tx, cfdb_arena *a)
{
    return exclusion_commit(tx, a, 3);
}

/* ---- options/ ---- */

int sk_mgmt_options_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    sk_entries w;
    int rc = sk_collect(tx, begin, end, a, &w);
    for (size_t i = 0; i < w.n && !rc; i++)
        if (w.items[i].has_value)
            rc = sk_rows_push(out, a, w.items[i].begin, CFDB_BYTES_LIT(""));
    return rc;
}

int sk_mgmt_options_commit(cfdb_txn *tx, cfdb_arena *a)
{
    (void)tx;
    (void)a;
    return 0; /* the other implementations read them */
}

/* ---- db_locked ---- */

int sk_mgmt_lock_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    (void)end;
    bool written = false, has_value = false, present = false;
    cfdb_bytes v;
    int rc = own_write(tx, a, begin, &written, &has_value, &v);
    if (rc || written)
        return rc || !has_value ? rc : sk_rows_push(out, a, begin, v);
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    if ((rc = skw_get(tx, CFDB_BYTES_LIT(DB_LOCKED_KEY), a, &present, &v)) || !present)
        return rc;
    if (v.len < 26)
        return CFDB_ERR_SERIALIZATION_FAILED;
    cfdb_uid u;
    memcpy(&u.first, v.ptr + 10, 8);
    memcpy(&u.second, v.ptr + 18, 8);
    char buf[33];
    cfdb_uid_format(u, buf);
    return sk_rows_push(out, a, begin, cfdb_bytes_str(buf));
}

int sk_mgmt_lock_commit(cfdb_txn *tx, cfdb_arena *a)
{
    bool written = false, has_value = false, present = false;
    cfdb_bytes uid_text, v;
    int rc = own_write(tx, a, CFDB_BYTES_LIT(SK_MGMT "db_locked"), &written, &has_value, &uid_text);
    if (rc)
        return rc;
    cfdb_uid uid = { 0, 0 };
    if (has_value) {
        char buf[64] = { 0 };
        bool ok = uid_text.len == 32;
        if (ok) {
            memcpy(buf, uid_text.ptr, 32);
            ok = cfdb_uid_parse(buf, &uid) == 0;
        }
        if (!ok) {
            char msg[128];
            snprintf(msg, sizeof msg, "Invalid UID hex string: %.*s", (int)(uid_text.len < 64 ? uid_text.len : 64),
                     (const char *)uid_text.ptr);
            return sk_api_failure(tx, false, "lock", msg);
        }
    }
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    if ((rc = skw_get(tx, CFDB_BYTES_LIT(DB_LOCKED_KEY), a, &present, &v)))
        return rc;
    if (!has_value) { /* unlock */
        return present ? skw_clear(tx, CFDB_BYTES_LIT(DB_LOCKED_KEY), CFDB_BYTES_LIT(DB_LOCKED_KEY "\x00")) : 0;
    }
    if (present) {
        cfdb_uid held = { 0, 0 };
        if (v.len >= 26) {
            memcpy(&held.first, v.ptr + 10, 8);
            memcpy(&held.second, v.ptr + 18, 8);
        }
        return cfdb_uid_eq(held, uid) ? 0 : CFDB_ERR_DATABASE_LOCKED;
    }
    /* "0123456789" (replaced by the versionstamp) + the UID + the offset 0 */
    uint8_t val[30];
    memcpy(val, "0123456789", 10);
    memcpy(val + 10, &uid.first, 8);
    memcpy(val + 18, &uid.second, 8);
    memset(val + 26, 0, 4);
    if ((rc = skw_atomic(tx, CFDB_BYTES_LIT(DB_LOCKED_KEY), cfdb_bytes_make(val, sizeof val),
                         CFDB_MUT_SET_VERSIONSTAMPED_VALUE)))
        return rc;
    return skw_write_conflict(tx, CFDB_BYTES_LIT(""), CFDB_BYTES_LIT("\xff"));
}

/* ---- consistency_check_suspended ---- */

int sk_mgmt_cc_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    (void)end;
    bool written = false, has_value = false, present = false;
    cfdb_bytes v;
    int rc = own_write(tx, a, begin, &written, &has_value, &v);
    if (rc || written)
        return rc || !has_value ? rc : sk_rows_push(out, a, begin, v);
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    if ((rc = skw_get(tx, CFDB_BYTES_LIT(CC_SUSPEND_KEY), a, &present, &v)))
        return rc;
    if (present && v.len >= 1 && v.ptr[0])
        rc = sk_rows_push(out, a, begin, CFDB_BYTES_LIT(""));
    return rc;
}

int sk_mgmt_cc_commit(cfdb_txn *tx, cfdb_arena *a)
{
    bool written = false, has_value = false;
    cfdb_bytes v;
    int rc = own_write(tx, a, CFDB_BYTES_LIT(SK_MGMT "consistency_check_suspended"), &written, &has_value, &v);
    if (rc)
        return rc;
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    uint8_t b = has_value ? 1 : 0;
    return skw_set(tx, CFDB_BYTES_LIT(CC_SUSPEND_KEY), cfdb_bytes_make(&b, 1));
}

/* ---- maintenance/ ---- */

static int read_version(cfdb_txn *tx, int64_t *out)
{
    cfdb_future *f = cfdb_txn_get_read_version(tx);
    cfdb_future_wait(f);
    int rc = f->error;
    *out = f->r.i64;
    cfdb_future_unref(f);
    return rc;
}

/* healthyZoneValue: IncludeVersion, then zone (u32 length + bytes), then the version */
static int zone_decode(cfdb_bytes v, cfdb_bytes *zone, int64_t *version)
{
    if (v.len < 12)
        return CFDB_ERR_SERIALIZATION_FAILED;
    uint32_t n;
    memcpy(&n, v.ptr + 8, 4);
    if (v.len != 12 + (size_t)n + 8)
        return CFDB_ERR_SERIALIZATION_FAILED;
    *zone = cfdb_bytes_make(v.ptr + 12, n);
    memcpy(version, v.ptr + 12 + n, 8);
    return 0;
}

int sk_mgmt_maintenance_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    bool present = false;
    cfdb_bytes v, zone;
    int64_t until = 0, rv = 0;
    sk_rows db = { 0 };
    int rc = skw_get(tx, CFDB_BYTES_LIT(HEALTHY_ZONE_KEY), a, &present, &v);
    if (!rc && present)
        rc = zone_decode(v, &zone, &until);
    if (!rc && present)
        rc = read_version(tx, &rv);
    if (!rc && present) {
        bool ignore = cfdb_bytes_eq(zone, CFDB_BYTES_LIT(IGNORE_SS_FAILURES));
        if (ignore || until > rv) {
            cfdb_bytes k = sk_key(a, SK_MGMT "maintenance/", zone);
            if (!k.ptr)
                return CFDB_ERR_UNKNOWN_ERROR;
            char secs[40];
            snprintf(secs, sizeof secs, "%.17g", ignore ? 0.0 : (double)(until - rv) / VERSIONS_PER_SECOND);
            if (cfdb_bytes_cmp(k, begin) >= 0 && cfdb_bytes_cmp(k, end) < 0)
                rc = sk_rows_push(&db, a, k, cfdb_bytes_str(secs));
        }
    }
    return rc ? rc : sk_ryw_merge(tx, begin, end, a, &db, out);
}

int sk_mgmt_maintenance_commit(cfdb_txn *tx, cfdb_arena *a)
{
    static const char pre[] = SK_MGMT "maintenance/";
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    bool present = false;
    cfdb_bytes v, zone = { 0 }, set_zone = { 0 };
    int64_t until = 0;
    int rc = skw_get(tx, CFDB_BYTES_LIT(HEALTHY_ZONE_KEY), a, &present, &v);
    if (!rc && present)
        rc = zone_decode(v, &zone, &until);
    sk_entries w;
    if (!rc)
        rc = sk_collect(tx, CFDB_BYTES_LIT(SK_MGMT "maintenance/"), CFDB_BYTES_LIT(SK_MGMT "maintenance0"), a, &w);
    if (rc)
        return rc;
    bool is_set = false;
    double seconds = 0;
    for (size_t i = 0; i < w.n && !rc; i++) {
        const sk_write *e = &w.items[i];
        if (e->has_value) {
            if (is_set)
                return sk_api_failure(tx, false, "maintenance",
                                      "Multiple zones given for maintenance, only one allowed at the same time");
            is_set = true;
            set_zone = cfdb_bytes_make(e->begin.ptr + sizeof pre - 1, e->begin.len - (sizeof pre - 1));
            char buf[64] = { 0 }, *endp = NULL;
            memcpy(buf, e->value.ptr, e->value.len < 63 ? e->value.len : 63);
            seconds = strtod(buf, &endp);
            if (!e->value.len || e->value.len >= 63 || *endp)
                return CFDB_ERR_SPECIAL_KEYS_API_FAILURE; /* lexical_cast throws bad_lexical_cast */
        } else if (!is_set && present) {
            cfdb_bytes zk = sk_key(a, pre, zone);
            if (!zk.ptr)
                return CFDB_ERR_UNKNOWN_ERROR;
            if (cfdb_bytes_cmp(zk, e->begin) >= 0 && cfdb_bytes_cmp(zk, e->end) < 0)
                rc = skw_clear(tx, CFDB_BYTES_LIT(HEALTHY_ZONE_KEY), CFDB_BYTES_LIT(HEALTHY_ZONE_KEY "\x00"));
        }
    }
    if (rc || !is_set)
        return rc;
    if (present && cfdb_bytes_eq(zone, CFDB_BYTES_LIT(IGNORE_SS_FAILURES)))
        return sk_api_failure(tx, false, "maintenance",
                              "Maintenance mode cannot be used while data distribution is disabled for storage "
                              "server failures.");
    if (seconds < 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "The specified maintenance time %.17g is a negative value", seconds);
        return sk_api_failure(tx, false, "maintenance", msg);
    }
    int64_t rv = 0;
    if ((rc = read_version(tx, &rv)))
        return rc;
    int64_t end_version = (int64_t)((double)rv + seconds * VERSIONS_PER_SECOND);
    uint8_t *val = cfdb_arena_alloc(a, 20 + set_zone.len);
    if (!val)
        return CFDB_ERR_UNKNOWN_ERROR;
    uint64_t pv = CFDB_PROTOCOL_VERSION;
    uint32_t n = (uint32_t)set_zone.len;
    memcpy(val, &pv, 8);
    memcpy(val + 8, &n, 4);
    if (n)
        memcpy(val + 12, set_zone.ptr, n);
    memcpy(val + 12 + n, &end_version, 8);
    return skw_set(tx, CFDB_BYTES_LIT(HEALTHY_ZONE_KEY), cfdb_bytes_make(val, 20 + n));
}

/* ---- data_distribution/ ---- */

int sk_mgmt_dd_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    static const char mode_key[] = SK_MGMT "data_distribution/mode";
    static const char ignored_key[] = SK_MGMT "data_distribution/rebalance_ignored";
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    sk_rows db = { 0 };
    int rc = 0;
    cfdb_bytes mk = CFDB_BYTES_LIT(mode_key), ik = CFDB_BYTES_LIT(ignored_key), v, wv;
    bool written = false, has_value = false, present = false;
    if (cfdb_bytes_cmp(mk, begin) >= 0 && cfdb_bytes_cmp(mk, end) < 0) {
        rc = own_write(tx, a, mk, &written, &has_value, &wv);
        if (!rc && !written) {
            int32_t mode = -1;
            rc = skw_get(tx, CFDB_BYTES_LIT(DD_MODE_KEY), a, &present, &v);
            if (!rc && present && v.len >= 4)
                memcpy(&mode, v.ptr, 4);
            char buf[16];
            snprintf(buf, sizeof buf, "%d", (int)mode);
            if (!rc)
                rc = sk_rows_push(&db, a, mk, cfdb_bytes_str(buf));
        }
    }
    if (!rc && cfdb_bytes_cmp(ik, begin) >= 0 && cfdb_bytes_cmp(ik, end) < 0) {
        rc = own_write(tx, a, ik, &written, &has_value, &wv);
        if (!rc && !written) {
            rc = skw_get(tx, CFDB_BYTES_LIT(DD_REBALANCE_IGNORE_KEY), a, &present, &v);
            if (!rc && present)
                rc = sk_rows_push(&db, a, ik, CFDB_BYTES_LIT(""));
        }
    }
    return rc ? rc : sk_ryw_merge(tx, begin, end, a, &db, out);
}

/* DataDistributionImpl::commit: mode (0, 1 or 2) takes the move-keys lock as data
 * distribution's mode lock (UID(6345, 3425)) with a new write UID and sets
 * \xff/dataDistributionMode (int32); rebalance_ignored sets \xff\x02/rebalanceDDIgnored;
 * clears clear them. A bad value: 2117 with libfdb_c's message (the last one found). */
int sk_mgmt_dd_commit(cfdb_txn *tx, cfdb_arena *a)
{
    static const char mode_key[] = SK_MGMT "data_distribution/mode";
    static const char ignored_key[] = SK_MGMT "data_distribution/rebalance_ignored";
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    sk_entries w;
    int rc = sk_collect(tx, CFDB_BYTES_LIT(SK_MGMT "data_distribution/"), CFDB_BYTES_LIT(SK_MGMT "data_distribution0"),
                        a, &w);
    char msg[256] = "";
    cfdb_bytes mk = CFDB_BYTES_LIT(mode_key), ik = CFDB_BYTES_LIT(ignored_key);
    for (size_t i = 0; i < w.n && !rc; i++) {
        const sk_write *e = &w.items[i];
        bool is_mode = cfdb_bytes_eq(e->begin, mk) && e->end.len == mk.len + 1;
        bool is_ignored = cfdb_bytes_eq(e->begin, ik) && e->end.len == ik.len + 1;
        if (e->has_value && is_mode) {
            char buf[32] = { 0 }, *end = NULL;
            long mode = 0;
            bool ok = e->value.len > 0 && e->value.len < sizeof buf;
            if (ok) {
                memcpy(buf, e->value.ptr, e->value.len);
                mode = strtol(buf, &end, 10);
                ok = *end == 0 && buf[0] != ' ' && buf[0] != '\t';
            }
            if (!ok) {
                snprintf(msg, sizeof msg, "Invalid datadistribution mode(int): %.*s",
                         (int)(e->value.len < 64 ? e->value.len : 64), (const char *)e->value.ptr);
            } else if (mode >= 0 && mode <= 2) {
                uint8_t owner[16], write[16];
                uint64_t o1 = 6345, o2 = 3425, w1 = (uint64_t)rand() << 32 ^ (uint64_t)rand(),
                         w2 = (uint64_t)rand() << 32 ^ (uint64_t)rand();
                memcpy(owner, &o1, 8);
                memcpy(owner + 8, &o2, 8);
                memcpy(write, &w1, 8);
                memcpy(write + 8, &w2, 8);
                int32_t m = (int32_t)mode;
                rc = skw_set(tx, CFDB_BYTES_LIT("\xff/moveKeysLock/Owner"), cfdb_bytes_make(owner, 16));
                if (!rc)
                    rc = skw_set(tx, CFDB_BYTES_LIT("\xff/moveKeysLock/Write"), cfdb_bytes_make(write, 16));
                if (!rc)
                    rc = skw_set(tx, CFDB_BYTES_LIT(DD_MODE_KEY), cfdb_bytes_make(&m, 4));
            } else {
                snprintf(msg, sizeof msg, "Please set the value of the data_distribution/mode to 0(disable) or "
                                          "1(enable), other values are not allowed");
            }
        } else if (e->has_value && is_ignored) {
            rc = skw_set(tx, CFDB_BYTES_LIT(DD_REBALANCE_IGNORE_KEY), e->value);
        } else if (e->has_value) {
            snprintf(msg, sizeof msg,
                     "Changing invalid keys, please read the documentation to check valid keys in the range");
        } else if (cfdb_bytes_cmp(mk, e->begin) >= 0 && cfdb_bytes_cmp(mk, e->end) < 0) {
            rc = skw_clear(tx, CFDB_BYTES_LIT(DD_MODE_KEY), CFDB_BYTES_LIT(DD_MODE_KEY "\x00"));
        } else if (cfdb_bytes_cmp(ik, e->begin) >= 0 && cfdb_bytes_cmp(ik, e->end) < 0) {
            rc = skw_clear(tx, CFDB_BYTES_LIT(DD_REBALANCE_IGNORE_KEY), CFDB_BYTES_LIT(DD_REBALANCE_IGNORE_KEY "\x00"));
        }
    }
    if (!rc && msg[0])
        rc = sk_api_failure(tx, false, "datadistribution", msg);
    return rc;
}
