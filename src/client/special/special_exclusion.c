/* Exclusions without `force`, and \xff\xff/management/in_progress_exclusion/, as libfdb_c
 * 7.3.77 computes them (fdbclient/SpecialKeySpace.actor.cpp checkExclusion 947-1170,
 * ExclusionInProgressActor 1266-1355; NativeAPI.actor.cpp checkSafeExclusions 9261-9339).
 *
 * sk_exclusion_safety (the commit of excluded/, failed/, excluded_locality/, failed_locality/
 * when options/<kind>/force is not set):
 *  1. the status document (\xff\xff/status/json's statusFetcher): its cluster.processes; per
 *     process, excluded if status says so, else if an exclusion names its address (the IP, or
 *     IP:port), else if an excluded locality "locality_<key>:<value>" matches its locality
 *     object; per storage role kvstore_used_bytes, _free_bytes, _available_bytes (free bytes of
 *     a disk_id counted once among the processes not excluded). A missing cluster, processes,
 *     address, roles or kvstore figure is libfdb_c's "Could not calculate the impact" message.
 *     When a storage role is excluded and either every storage role is, or
 *     (used + free - available) / max(used_not_excluded + free_not_excluded, 1) > 0.9: the
 *     "total available space ... below 10%" message;
 *  2. for failed/ and failed_locality/ only, checkSafeExclusions(addresses): the commit
 *     proxy's ExclusionSafetyCheckRequest (cfdb_db_exclusion_safety_check; an error counts as
 *     unsafe) and the coordinators: with no coordinator quorum (the status document's
 *     client.coordinators.quorum_reachable, from the same GetLeaderRequest probe libfdb_c
 *     makes) unsafe; else the connection string's coordinators named by an exclusion (by IP,
 *     or IP:port) must be at most (n - 1) / 2 - unavailable, unavailable counting the
 *     coordinators given by hostname (not resolved here). Unsafe: the "It is unsafe to
 *     exclude" message. Every message is special_keys_api_failure (2117) with
 *     ManagementAPIError's JSON in \xff\xff/error_message, command "exclude" or
 *     "exclude failed".
 *
 * in_progress_exclusion/<ip:port>: the addresses (formatIpPort: no ":tls") of every
 * \xff/serverList/ storage server whose primary or secondary address is excluded (excluded/
 * and failed/) or whose locality matches an excluded locality (both locality kinds), and of
 * every \xff/logs log (current and old) at an excluded address or at the default address
 * 0.0.0.0:0; sorted as text. A value that does not decode is 1044; \xff/logs absent (libfdb_c
 * asserts) is internal_error (4100). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_reader.h"
#include "error_codes.h"
#include "exclusion.h"
#include "network_address.h"
#include "database.h"
#include "foundationdb/fdb_c_options.g.h"
#include "special_keys_internal.h"
#include "txn_api.h"
#include "txn_metadata.h"

#define EXCL_MAX_COORDINATORS 64

/* AddressExclusion::parse of canonical text (sk_parse_exclusion's output): "IP" (port 0) or
 * "IP:port". v6 bytes go to the arena. false when it does not parse. */
static bool exclusion_from_text(const char *text, cfdb_arena *a, cfdb_address_exclusion *out)
{
    memset(out, 0, sizeof *out);
    uint8_t ip[16];
    if (inet_pton(AF_INET, text, ip) == 1) {
        out->ip.tag = 1;
        out->ip.v4 = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 | (uint32_t)ip[2] << 8 | ip[3];
        return true;
    }
    uint8_t *v6 = cfdb_arena_alloc(a, 16);
    if (!v6)
        return false;
    if (inet_pton(AF_INET6, text, v6) == 1) {
        out->ip.tag = 2;
        out->ip.v6.items = v6;
        out->ip.v6.count = 16;
        return true;
    }
    cfdb_network_address na;
    if (cfdb_network_address_parse(text, strlen(text), &na, v6) || na.fromHostname)
        return false;
    out->ip = na.ip;
    out->port = na.port;
    return true;
}

static bool excluded_by(const cfdb_address_exclusion *e, size_t n, const cfdb_network_address *addr)
{
    for (size_t i = 0; i < n; i++)
        if (cfdb_exclusion_matches(&e[i], addr))
            return true;
    return false;
}

/* decodeLocality: "locality_<key>:<value>" split at the first ':' after the prefix. */
static bool split_locality(const char *text, const char **key, size_t *klen, const char **value)
{
    if (strncmp(text, "locality_", 9) == 0)
        text += 9;
    const char *colon = strchr(text, ':');
    if (!colon)
        return false;
    *key = text;
    *klen = (size_t)(colon - text);
    *value = colon + 1;
    return true;
}

static bool json_int(const cfdb_jv *o, const char *name, long long *out)
{
    const cfdb_jv *v = o ? cfdb_jv_get(o, name) : NULL;
    if (!v || v->type != JSON_INT)
        return false;
    char buf[32];
    if (v->len == 0 || v->len >= sizeof buf)
        return false;
    memcpy(buf, v->text, v->len);
    buf[v->len] = 0;
    *out = strtoll(buf, NULL, 10);
    return true;
}

static bool json_is_true(const cfdb_jv *o, const char *name)
{
    const cfdb_jv *v = o ? cfdb_jv_get(o, name) : NULL;
    return v && v->type == JSON_BOOL && v->b;
}

/* The status part of checkExclusion: 1 safe, 0 unsafe with *msg set, or an error code. */
typedef struct space_check {
    long long used, free_bytes, available, used_not_excluded, free_not_excluded;
    int ss_total, ss_excluded;
} space_check;

/* false: the process's figures cannot be read (libfdb_c's "could not calculate") */
static bool process_excluded(const cfdb_jv *proc, const cfdb_address_exclusion *e, size_t ne,
                             char (*localities)[128], size_t nloc, cfdb_arena *a, bool *excluded)
{
    const cfdb_jv *loc = cfdb_jv_get(proc, "locality");
    *excluded = json_is_true(proc, "excluded");
    if (*excluded)
        return true;
    const cfdb_jv *addr = cfdb_jv_get(proc, "address");
    if (!addr || addr->type != JSON_STRING)
        return false;
    cfdb_network_address na;
    uint8_t *v6 = cfdb_arena_alloc(a, 16);
    if (!v6 || cfdb_network_address_parse(addr->text, addr->len, &na, v6))
        return false; /* NetworkAddress::parse throws: caught as "could not calculate" */
    *excluded = excluded_by(e, ne, &na);
    for (size_t i = 0; i < nloc && !*excluded && loc && loc->type == JSON_OBJECT; i++) {
        const char *k, *v;
        size_t kl;
        char key[128];
        if (!split_locality(localities[i], &k, &kl, &v) || kl >= sizeof key)
            continue;
        memcpy(key, k, kl);
        key[kl] = 0;
        const cfdb_jv *lv = cfdb_jv_get(loc, key);
        *excluded = lv && lv->type == JSON_STRING && lv->len == strlen(v) && memcmp(lv->text, v, lv->len) == 0;
    }
    return true;
}

/* The figures of every storage role into sc; *computed false when status lacks one. 0 or an
 * error code (out of memory). */
static int space_of(const cfdb_jv *processes, const cfdb_address_exclusion *e, size_t ne, char (*localities)[128],
                    size_t nloc, cfdb_arena *a, space_check *sc, bool *computed)
{
    memset(sc, 0, sizeof *sc);
    *computed = false;
    const char **disks = cfdb_arena_zalloc(a, (processes->count + 1) * sizeof *disks);
    size_t ndisks = 0;
    if (!disks)
        return CFDB_ERR_UNKNOWN_ERROR;
    for (size_t p = 0; p < processes->count; p++) {
        const cfdb_jv *proc = processes->items[p];
        bool excluded;
        if (proc->type != JSON_OBJECT || !process_excluded(proc, e, ne, localities, nloc, a, &excluded))
            return 0;
        const cfdb_jv *loc = cfdb_jv_get(proc, "locality");
        const cfdb_jv *disk = loc && loc->type == JSON_OBJECT ? cfdb_jv_get(loc, "disk_id") : NULL;
        const char *disk_id = disk && disk->type == JSON_STRING && disk->len ? disk->text : NULL;
        const cfdb_jv *roles = cfdb_jv_get(proc, "roles");
        if (!roles || roles->type != JSON_ARRAY)
            return 0;
        for (size_t r = 0; r < roles->count; r++) {
            const cfdb_jv *role = roles->items[r];
            const cfdb_jv *name = role->type == JSON_OBJECT ? cfdb_jv_get(role, "role") : NULL;
            if (!name || name->type != JSON_STRING)
                return 0;
            if (strcmp(name->text, "storage") != 0)
                continue;
            sc->ss_total++;
            sc->ss_excluded += excluded;
            long long used, free_bytes, available;
            if (!json_int(role, "kvstore_used_bytes", &used) || !json_int(role, "kvstore_free_bytes", &free_bytes) ||
                !json_int(role, "kvstore_available_bytes", &available))
                return 0;
            sc->used += used;
            sc->free_bytes += free_bytes;
            sc->available += available;
            if (excluded)
                continue;
            sc->used_not_excluded += used;
            bool seen = false;
            for (size_t d = 0; disk_id && d < ndisks && !seen; d++)
                seen = strcmp(disks[d], disk_id) == 0;
            if (!seen) {
                sc->free_not_excluded += free_bytes;
                if (disk_id)
                    disks[ndisks++] = disk_id;
            }
        }
    }
    *computed = true;
    return 0;
}

static const char k_could_not[] =
    "ERROR: Could not calculate the impact of this exclude on the total available space in the cluster.\n"
    "Please try the exclude again in 30 seconds.\n"
    "Call set(\"0xff0xff/management/options/exclude/force\", ...) first to exclude without checking available "
    "space.\n";
static const char k_low_space[] =
    "ERROR: This exclude may cause the total available space in the cluster to drop below 10%.\n"
    "Call set(\"0xff0xff/management/options/exclude/force\", ...) first to exclude without checking available "
    "space.\n";
static const char k_unsafe[] =
    "ERROR: It is unsafe to exclude the specified servers at this time.\n"
    "Please check that this exclusion does not bring down an entire storage team.\n"
    "Please also ensure that the exclusion will keep a majority of coordinators alive.\n"
    "You may add more storage processes or coordinators to make the operation safe.\n"
    "Call set(\"0xff0xff/management/failed/<ADDRESS...>\", ...) to exclude without performing safety checks.\n";

/* checkSafeExclusions' coordinator half: true when the coordinators stay a majority. */
static bool coordinators_safe(cfdb_txn *tx, const cfdb_jv *doc, const cfdb_address_exclusion *e, size_t ne,
                              cfdb_arena *a)
{
    const cfdb_jv *client = cfdb_jv_get(doc, "client");
    const cfdb_jv *coords = client ? cfdb_jv_get(client, "coordinators") : NULL;
    if (!json_is_true(coords, "quorum_reachable"))
        return false; /* no quorum within the wait: libfdb_c answers unsafe */
    cfdb_future *f = cfdb_db_text_value(cfdb_txn_db(tx), CFDB_DB_CONNECTION_STRING);
    if (!f)
        return false;
    cfdb_future_wait(f);
    bool ok = false;
    if (!f->error && f->r.value.present) {
        cfdb_bytes cs = f->r.value.value;
        const uint8_t *at = memchr(cs.ptr, '@', cs.len);
        int n = 0, excluded = 0, unavailable = 0;
        const uint8_t *p = at ? at + 1 : cs.ptr + cs.len, *end = cs.ptr + cs.len;
        while (p < end && n < EXCL_MAX_COORDINATORS) {
            const uint8_t *comma = memchr(p, ',', (size_t)(end - p));
            size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
            cfdb_network_address na;
            uint8_t *v6 = cfdb_arena_alloc(a, 16);
            n++;
            if (!v6 || cfdb_network_address_parse((const char *)p, len, &na, v6) || na.fromHostname)
                unavailable++;
            else if (excluded_by(e, ne, &na))
                excluded++;
            p += len + (comma ? 1 : 0);
        }
        ok = n > 0 && excluded <= (n - 1) / 2 - unavailable;
    }
    cfdb_future_unref(f);
    return ok;
}

int sk_exclusion_safety(cfdb_txn *tx, cfdb_arena *a, char (*items)[128], size_t n, bool locality, bool failed)
{
    const char *command = failed ? "exclude failed" : "exclude";
    size_t ne = locality ? 0 : n;
    cfdb_address_exclusion *e = cfdb_arena_zalloc(a, (ne + 1) * sizeof *e);
    if (!e)
        return CFDB_ERR_UNKNOWN_ERROR;
    for (size_t i = 0; i < ne; i++)
        if (!exclusion_from_text(items[i], a, &e[i]))
            return CFDB_ERR_UNKNOWN_ERROR; /* sk_parse_exclusion accepted it: canonical text */
    cfdb_future *f = cfdb_txn_status_json(tx);
    if (!f)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_future_wait(f);
    int rc = f->error;
    cfdb_jv *doc = NULL;
    if (!rc && f->r.value.present)
        doc = cfdb_jv_parse((const char *)f->r.value.value.ptr, f->r.value.value.len);
    cfdb_future_unref(f);
    if (rc)
        return rc;
    const cfdb_jv *cluster = doc ? cfdb_jv_get(doc, "cluster") : NULL;
    const cfdb_jv *processes = cluster ? cfdb_jv_get(cluster, "processes") : NULL;
    space_check sc;
    bool computed = false;
    if (processes && processes->type == JSON_OBJECT)
        rc = space_of(processes, e, ne, locality ? items : NULL, locality ? n : 0, a, &sc, &computed);
    const char *msg = NULL;
    if (rc) {
        /* out of memory */
    } else if (!computed) {
        msg = k_could_not;
    } else if (sc.ss_excluded > 0) {
        double denominator = (double)(sc.used_not_excluded + sc.free_not_excluded);
        double ratio = (double)(sc.used + sc.free_bytes - sc.available) / (denominator > 1 ? denominator : 1);
        if (sc.ss_excluded == sc.ss_total || ratio > 0.9)
            msg = k_low_space;
    }
    if (!rc && !msg && failed) {
        /* checkSafeExclusions(addresses): for localities the address list is empty */
        cfdb_future *sf = cfdb_db_exclusion_safety_check(cfdb_txn_db(tx), e, ne);
        bool safe = false;
        if (sf) {
            cfdb_future_wait(sf);
            safe = !sf->error && sf->r.i64 == 1;
            cfdb_future_unref(sf);
        }
        if (!safe || !coordinators_safe(tx, doc, e, ne, a))
            msg = k_unsafe;
    }
    cfdb_jv_free(doc);
    return rc ? rc : msg ? sk_api_failure(tx, false, command, msg) : 0;
}

/* ---- in_progress_exclusion/ ---- */

/* ExclusionInProgressRangeImpl reads through ryw->getTransaction(): NativeAPI reads at the
 * read version, without the transaction's own writes or its read cache (a read repeated
 * after the MVCC window gives transaction_too_old, as fdbcli's exclude wait expects). */

/* The rows under prefix (\xff/conf/<kind>/). */
static int conf_list(cfdb_txn *tx, const char *prefix, const char *end, cfdb_arena *a, sk_rows *out)
{
    return skw_range_native(tx, cfdb_bytes_str(prefix), cfdb_bytes_str(end), 0, a, out);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* formatIpPort into a fresh arena string */
static char *ip_port(cfdb_arena *a, const cfdb_network_address *na)
{
    cfdb_network_address plain = *na;
    plain.flags = 0; /* no ":tls" */
    plain.fromHostname = false;
    char buf[96];
    size_t n = cfdb_network_address_format(&plain, buf, sizeof buf);
    char *s = cfdb_arena_alloc(a, n + 1);
    if (s) {
        memcpy(s, buf, n);
        s[n] = 0;
    }
    return s;
}

static bool locality_matches(const cfdb_locality_data *ld, const sk_rows *locs, size_t skip)
{
    for (int i = 0; i < locs->n; i++) {
        const char *k, *v;
        size_t kl;
        char text[256];
        size_t tl = (size_t)locs->items[i].key_length - skip;
        if (tl >= sizeof text)
            continue;
        memcpy(text, locs->items[i].key + skip, tl);
        text[tl] = 0;
        if (!split_locality(text, &k, &kl, &v))
            continue;
        for (uint32_t j = 0; j < ld->_data.count; j++) {
            const cfdb_locality_entry *le = &ld->_data.items[j];
            if (le->first.len == kl && memcmp(le->first.ptr, k, kl) == 0 && le->second.present &&
                le->second.value.len == strlen(v) && memcmp(le->second.value.ptr, v, le->second.value.len) == 0)
                return true;
        }
    }
    return false;
}

int sk_in_progress_exclusion_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    static const char prefix[] = SK_MGMT "in_progress_exclusion/";
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    sk_rows ex, fa, exl, fal, servers;
    int rc = conf_list(tx, "\xff/conf/excluded/", "\xff/conf/excluded0", a, &ex);
    if (!rc)
        rc = conf_list(tx, "\xff/conf/failed/", "\xff/conf/failed0", a, &fa);
    if (!rc)
        rc = conf_list(tx, "\xff/conf/excluded_locality/", "\xff/conf/excluded_locality0", a, &exl);
    if (!rc)
        rc = conf_list(tx, "\xff/conf/failed_locality/", "\xff/conf/failed_locality0", a, &fal);
    if (!rc)
        rc = skw_range_native(tx, CFDB_BYTES_LIT("\xff/serverList/"), CFDB_BYTES_LIT("\xff/serverList0"), 0, a,
                              &servers);
    if (rc)
        return rc;
    /* getAllExcludedServers: the valid addresses of both kinds */
    size_t ne = 0;
    cfdb_address_exclusion *e = cfdb_arena_zalloc(a, ((size_t)ex.n + (size_t)fa.n + 1) * sizeof *e);
    if (!e)
        return CFDB_ERR_UNKNOWN_ERROR;
    for (int k = 0; k < 2; k++) {
        const sk_rows *r = k ? &fa : &ex;
        size_t skip = strlen(k ? "\xff/conf/failed/" : "\xff/conf/excluded/");
        for (int i = 0; i < r->n; i++) {
            char canon[128];
            cfdb_bytes tail = cfdb_bytes_make(r->items[i].key + skip, (size_t)r->items[i].key_length - skip);
            if (sk_parse_exclusion(tail, canon, sizeof canon) && exclusion_from_text(canon, a, &e[ne]))
                ne++;
        }
    }
    size_t cap = 2 * (size_t)servers.n + 16, nfound = 0;
    char **found = cfdb_arena_zalloc(a, cap * sizeof *found);
    if (!found)
        return CFDB_ERR_UNKNOWN_ERROR;
#define FOUND(na)                                                                                   \
    do {                                                                                            \
        if (nfound == cap) {                                                                        \
            char **more = cfdb_arena_zalloc(a, 2 * cap * sizeof *more);                             \
            if (!more)                                                                              \
                return CFDB_ERR_UNKNOWN_ERROR;                                                      \
            memcpy(more, found, cap * sizeof *more);                                                \
            found = more;                                                                           \
            cap *= 2;                                                                               \
        }                                                                                           \
        if (!(found[nfound++] = ip_port(a, (na))))                                                  \
            return CFDB_ERR_UNKNOWN_ERROR;                                                          \
    } while (0)
    for (int i = 0; i < servers.n; i++) {
        cfdb_storage_server_interface ssi;
        rc = cfdb_server_list_value_decode(cfdb_bytes_make(servers.items[i].value, (size_t)servers.items[i].value_length),
                                           a, &ssi);
        if (rc)
            return rc;
        const cfdb_network_address_list *al = &ssi.getValue.endpoint.addresses;
        bool by_locality = locality_matches(&ssi.locality, &exl, strlen("\xff/conf/excluded_locality/")) ||
                           locality_matches(&ssi.locality, &fal, strlen("\xff/conf/failed_locality/"));
        if (by_locality || excluded_by(e, ne, &al->address))
            FOUND(&al->address);
        if (al->secondaryAddress.present && (by_locality || excluded_by(e, ne, &al->secondaryAddress.value)))
            FOUND(&al->secondaryAddress.value);
    }
    sk_rows lrow;
    if ((rc = skw_range_native(tx, CFDB_BYTES_LIT("\xff/logs"), CFDB_BYTES_LIT("\xff/logs\x00"), 1, a, &lrow)))
        return rc;
    if (lrow.n != 1)
        return CFDB_ERR_INTERNAL_ERROR; /* libfdb_c: ASSERT(value.present()) */
    cfdb_bytes lv = cfdb_bytes_make(lrow.items[0].value, (size_t)lrow.items[0].value_length);
    cfdb_logs_value logs;
    if ((rc = cfdb_logs_value_decode(lv, a, &logs)))
        return rc;
    for (int k = 0; k < 2; k++) {
        const cfdb_log_entry *l = k ? logs.old_logs : logs.logs;
        uint32_t nl = k ? logs.nold : logs.nlogs;
        for (uint32_t i = 0; i < nl; i++) {
            const cfdb_network_address *na = &l[i].address;
            bool unset = na->ip.tag != 2 && na->ip.v4 == 0 && na->port == 0 && na->flags == 1; /* NetworkAddress() */
            if (unset || excluded_by(e, ne, na))
                FOUND(na);
        }
    }
#undef FOUND
    qsort(found, nfound, sizeof *found, cmp_str);
    for (size_t i = 0; i < nfound; i++) {
        if (i && strcmp(found[i], found[i - 1]) == 0)
            continue;
        cfdb_bytes k = sk_key(a, prefix, cfdb_bytes_str(found[i]));
        if (!k.ptr)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (cfdb_bytes_cmp(k, begin) >= 0 && cfdb_bytes_cmp(k, end) < 0 && (rc = sk_rows_push(out, a, k, CFDB_BYTES_LIT(""))))
            return rc;
    }
    return 0;
}
