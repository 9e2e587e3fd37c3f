/* \xff\xff/management/auto_coordinators, as libfdb_c 7.3.77 answers it
 * (fdbclient/SpecialKeySpace.actor.cpp CoordinatorsAutoImplActor, with
 * fdbclient/ManagementAPI.actor.cpp AutoQuorumChange(-1)::getDesired):
 *
 *  - read-only, one key; the transaction becomes LOCK_AWARE, RAW_ACCESS and
 *    PRIORITY_SYSTEM_IMMEDIATE. \xff/coordinators absent: 2117 with {"command":
 *    "auto_coordinators","message":"The coordinator key does not exist"}; not a connection
 *    string: connection_string_invalid (2104).
 *  - old coordinators: its addresses and its resolved hostnames (one that does not resolve is
 *    left out, tryResolveHostnames).
 *  - desired count: min(atoi(\xff/conf/storage_replicas), atoi(\xff/conf/log_replicas)) * 2 - 1
 *    (either absent: internal_error 4100, where libfdb_c's Optional::get would fail).
 *  - excluded: \xff/conf/excluded/ and failed/ (AddressExclusion: "ip" a whole machine,
 *    "ip:port" one process), and the ip:port of every worker a \xff/conf/excluded_locality/ or
 *    failed_locality/ entry "locality_<key>:<value>" names.
 *  - the workers: getWorkers (special_process_class.c).
 *  - the current ones stay (SAME_NETWORK_ADDRESSES) when each is a worker's address, no two
 *    of those workers share a zoneid (an absent one included), and isAcceptable: all resolved,
 *    at least the desired count, an odd count, none excluded, no two on one IP, and each answers
 *    GetLeaderRequest{current key, UID()} naming a leader within IS_ACCEPTABLE_DELAY (1.5 s).
 *    The value is then the current string's hostnames, then its addresses, as written there.
 *  - else addDesiredWorkers: the workers in random order, coordinator-class ones first; a
 *    worker is taken unless excluded or unless, for one of dcid, data_hall, zoneid, machineid,
 *    as many taken workers already share its value as that field's current limit (all limits
 *    start at 1; when no worker can be taken the first field below its hard limit, the desired
 *    count, 1 for zoneid, is raised; none: stop). Fewer than desired: none taken or fewer than
 *    the current ones is NOT_ENOUGH_MACHINES (2117, retriable, "Too few fdbserver machines to
 *    provide coordination at the current redundancy level"); else the largest odd count. The
 *    value is the taken workers' addresses (NetworkAddress::toString, ":tls" kept), in the
 *    order taken, joined by ",". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "foundationdb/fdb_c_options.g.h"
#include "net.h"
#include "database.h"
#include "special_coordinators.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define IS_ACCEPTABLE_DELAY_NS 1500000000ull /* CLIENT_KNOBS->IS_ACCEPTABLE_DELAY */
#define MAX_ROWS 10000                        /* CLIENT_KNOBS->TOO_MANY */
#define COORDINATOR_CLASS 13                  /* ProcessClass::CoordinatorClass */
#define EXCLUDE_LOCALITY_PREFIX "locality_"   /* LocalityData::ExcludeLocalityPrefix */

static const char *const fields[] = { "dcid", "data_hall", "zoneid", "machineid" };
#define NFIELDS 4

typedef struct excl_set {
    char (*items)[128]; /* AddressExclusion text: "ip" or "ip:port" */
    int n, cap;
} excl_set;

static int excl_add(excl_set *e, cfdb_arena *a, const char *text)
{
    if (e->n == e->cap) {
        int nc = e->cap ? e->cap * 2 : 16;
        char (*ni)[128] = cfdb_arena_alloc(a, (size_t)nc * sizeof *ni);
        if (!ni)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (e->n)
            memcpy(ni, e->items, (size_t)e->n * sizeof *ni);
        e->items = ni;
        e->cap = nc;
    }
    snprintf(e->items[e->n++], sizeof e->items[0], "%s", text);
    return 0;
}

/* addressExcluded: the whole machine or this process */
static bool excluded(const excl_set *e, const char *ip, const char *ip_port)
{
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->items[i], ip) == 0 || strcmp(e->items[i], ip_port) == 0)
            return true;
    return false;
}

static bool locality(const sk_worker *w, const char *key, cfdb_bytes *value)
{
    size_t kl = strlen(key);
    for (int i = 0; i < w->nloc; i++)
        if (w->loc_key[i].len == kl && memcmp(w->loc_key[i].ptr, key, kl) == 0) {
            *value = w->loc_val[i];
            return true;
        }
    return false;
}

/* getAllExcludedServers */
static int excluded_servers(cfdb_txn *tx, cfdb_arena *a, const sk_worker *ws, int nw, excl_set *out)
{
    static const char *const address_prefixes[] = { "\xff/conf/excluded/", "\xff/conf/failed/" };
    static const char *const locality_prefixes[] = { "\xff/conf/excluded_locality/", "\xff/conf/failed_locality/" };
    for (int k = 0; k < 4; k++) {
        const char *prefix = k < 2 ? address_prefixes[k] : locality_prefixes[k - 2];
        size_t pl = strlen(prefix);
        char end[64];
        memcpy(end, prefix, pl);
        end[pl - 1] = '0'; /* the prefix's last '/' + 1 */
        sk_rows rows;
        int rc = skw_range(tx, cfdb_bytes_str(prefix), cfdb_bytes_make(end, pl), MAX_ROWS, a, &rows);
        if (rc)
            return rc;
        for (int i = 0; i < rows.n; i++) {
            cfdb_bytes tail = cfdb_bytes_make(rows.items[i].key + pl, (size_t)rows.items[i].key_length - pl);
            if (k < 2) {
                char text[128];
                if (sk_parse_exclusion(tail, text, sizeof text) && (rc = excl_add(out, a, text)))
                    return rc;
                continue;
            }
            /* decodeLocality: "locality_<key>:<value>" */
            char loc[256];
            if (tail.len >= sizeof loc)
                continue;
            memcpy(loc, tail.ptr, tail.len);
            loc[tail.len] = 0;
            char *kv = loc;
            if (!strncmp(kv, EXCLUDE_LOCALITY_PREFIX, sizeof EXCLUDE_LOCALITY_PREFIX - 1))
                kv += sizeof EXCLUDE_LOCALITY_PREFIX - 1;
            char *colon = strchr(kv, ':');
            const char *key = "", *value = "";
            if (colon) {
                *colon = 0;
                key = kv;
                value = colon + 1;
            }
            for (int w = 0; w < nw; w++) {
                cfdb_bytes v;
                if (locality(&ws[w], key, &v) && v.len == strlen(value) && memcmp(v.ptr, value, v.len) == 0 &&
                    (rc = excl_add(out, a, ws[w].addr)))
                    return rc;
            }
        }
    }
    return 0;
}

static int conf_int(cfdb_txn *tx, cfdb_arena *a, const char *key, int *out)
{
    bool present = false;
    cfdb_bytes v;
    int rc = skw_get(tx, cfdb_bytes_str(key), a, &present, &v);
    if (rc)
        return rc;
    if (!present)
        return CFDB_ERR_INTERNAL_ERROR;
    char buf[32];
    size_t n = v.len < sizeof buf - 1 ? v.len : sizeof buf - 1;
    memcpy(buf, v.ptr, n);
    buf[n] = 0;
    *out = atoi(buf);
    return 0;
}

/* NetworkAddress::toString of a worker */
static void worker_text(const sk_worker *w, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", w->addr, w->tls ? ":tls" : "");
}

static bool same_optional(bool ha, cfdb_bytes a, bool hb, cfdb_bytes b)
{
    return ha == hb && (!ha || (a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0));
}

/* the first part of getDesired: each old coordinator a worker, no zoneid twice */
static bool check_acceptable(const sk_coord *old, int nold, const sk_worker *ws, int nw)
{
    const sk_worker *seen[SK_MAX_COORDINATORS];
    for (int i = 0; i < nold; i++) {
        const sk_worker *w = NULL;
        for (int k = 0; k < nw && !w; k++) {
            char t[80];
            worker_text(&ws[k], t, sizeof t);
            if (!old[i].hostname && strcmp(t, old[i].text) == 0)
                w = &ws[k];
        }
        if (!w)
            return false;
        cfdb_bytes z = { 0 };
        bool hz = locality(w, "zoneid", &z);
        for (int k = 0; k < i; k++) {
            cfdb_bytes z2 = { 0 };
            bool hz2 = locality(seen[k], "zoneid", &z2);
            if (same_optional(hz, z, hz2, z2))
                return false;
        }
        seen[i] = w;
    }
    return true;
}

/* the text of old coordinator c's IP, and "ip:port" */
static void ip_texts(const sk_coord *c, char *ip, size_t ipcap, char *ip_port, size_t cap)
{
    snprintf(ip_port, cap, "%s", c->text);
    size_t l = strlen(ip_port);
    if (l > 4 && strcmp(ip_port + l - 4, ":tls") == 0)
        ip_port[l - 4] = 0;
    snprintf(ip, ipcap, "%s", ip_port);
    char *colon = strrchr(ip, ':');
    if (colon)
        *colon = 0;
    if (ip[0] == '[') { /* "[v6]" -> "v6" as AddressExclusion prints an IP alone */
        memmove(ip, ip + 1, strlen(ip));
        char *b = strchr(ip, ']');
        if (b)
            *b = 0;
    }
}

/* isAcceptable */
static int is_acceptable(cfdb_txn *tx, const char *old_key, sk_coord *old, int nold, int nstring, int desired,
                         const excl_set *ex, bool *ok)
{
    *ok = false;
    if (nold != nstring || nold < desired || nold % 2 != 1)
        return 0;
    for (int i = 0; i < nold; i++) {
        char ip[128], ip_port[300];
        ip_texts(&old[i], ip, sizeof ip, ip_port, sizeof ip_port);
        if (excluded(ex, ip, ip_port))
            return 0;
    }
    for (int i = 0; i < nold; i++)
        for (int k = i + 1; k < nold; k++) {
            bool v6 = old[i].addr.ip.tag == 2;
            if (v6 == (old[k].addr.ip.tag == 2) &&
                (v6 ? memcmp(old[i].v6, old[k].v6, 16) == 0 : old[i].addr.ip.v4 == old[k].addr.ip.v4))
                return 0; /* two coordinators on one IP */
        }
    bool leaders = false;
    int rc = sk_coord_probe(tx, old, nold, old_key, IS_ACCEPTABLE_DELAY_NS, &leaders);
    if (rc == 1)
        return 0; /* not all answered in time */
    if (rc)
        return rc;
    *ok = leaders;
    return 0;
}

/* addDesiredWorkers: indexes of the taken workers in order */
static int add_desired(cfdb_txn *tx, cfdb_arena *a, const sk_worker *ws, int nw, int desired, const excl_set *ex,
                       int *chosen, int *nchosen)
{
    int *order = cfdb_arena_alloc(a, (size_t)(nw ? nw : 1) * sizeof *order);
    bool *taken = cfdb_arena_alloc(a, (size_t)(nw ? nw : 1) * sizeof *taken);
    if (!order || !taken)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_client *cl = cfdb_db_client(cfdb_txn_db(tx));
    for (int i = 0; i < nw; i++) {
        order[i] = i;
        taken[i] = false;
    }
    for (int i = nw - 1; i > 0; i--) { /* randomShuffle */
        int j = (int)(cfdb_client_random(cl) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int front = 0; /* std::partition: coordinator-class workers first */
    for (int i = 0; i < nw; i++)
        if (ws[order[i]].cls == COORDINATOR_CLASS) {
            int t = order[i];
            order[i] = order[front];
            order[front++] = t;
        }
    int max_counts[NFIELDS] = { 1, 1, 1, 1 }, hard[NFIELDS] = { desired, desired, 1, desired };
    *nchosen = 0;
    while (*nchosen < desired) {
        bool found = false;
        for (int i = 0; i < nw && !found; i++) {
            const sk_worker *w = &ws[order[i]];
            if (taken[order[i]] || excluded(ex, w->ip, w->addr))
                continue;
            bool valid = true;
            for (int f = 0; f < NFIELDS && valid; f++) {
                cfdb_bytes v = { (const uint8_t *)"", 0 };
                locality(w, fields[f], &v); /* orDefault("") */
                int count = 0;
                for (int c = 0; c < *nchosen; c++) {
                    cfdb_bytes cv = { (const uint8_t *)"", 0 };
                    locality(&ws[chosen[c]], fields[f], &cv);
                    count += cv.len == v.len && memcmp(cv.ptr, v.ptr, v.len) == 0;
                }
                valid = count < max_counts[f];
            }
            if (valid) {
                chosen[(*nchosen)++] = order[i];
                taken[order[i]] = true;
                found = true;
            }
        }
        if (!found) {
            bool raised = false;
            for (int f = 0; f < NFIELDS && !raised; f++)
                if (max_counts[f] < hard[f]) {
                    max_counts[f]++;
                    raised = true;
                }
            if (!raised)
                break;
        }
    }
    return 0;
}

static int auto_failure(cfdb_txn *tx, bool retriable, const char *message)
{
    return sk_api_failure(tx, retriable, "auto_coordinators", message);
}

static int join_push(cfdb_arena *a, char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t tl = strlen(text), need = *len + tl + 2;
    if (need > *cap) {
        size_t nc = need * 2;
        char *nb = cfdb_arena_alloc(a, nc);
        if (!nb)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (*len)
            memcpy(nb, *buf, *len);
        *buf = nb;
        *cap = nc;
    }
    if (*len)
        (*buf)[(*len)++] = ',';
    memcpy(*buf + *len, text, tl);
    *len += tl;
    return 0;
}

int sk_auto_coordinators_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    (void)end;
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    bool present = false;
    cfdb_bytes v;
    int rc = skw_get(tx, CFDB_BYTES_LIT("\xff/coordinators"), a, &present, &v);
    if (rc)
        return rc;
    if (!present)
        return auto_failure(tx, false, "The coordinator key does not exist");
    cfdb_cluster_string old;
    if ((rc = cfdb_cluster_string_parse((const char *)v.ptr, v.len, &old)))
        return rc;
    int nstring = (int)old.count;
    sk_coord *coords = cfdb_arena_alloc(a, (old.count ? old.count : 1) * sizeof *coords);
    char *old_key = cfdb_arena_alloc(a, strlen(old.key) + 1);
    if (!coords || !old_key || nstring > SK_MAX_COORDINATORS) {
        cfdb_cluster_string_free(&old);
        return coords && old_key ? CFDB_ERR_CONNECTION_STRING_INVALID : CFDB_ERR_UNKNOWN_ERROR;
    }
    strcpy(old_key, old.key);
    /* the value when the current ones stay: hostnames, then addresses (as written there) */
    char *same = NULL;
    size_t same_len = 0, same_cap = 0;
    for (size_t pass = 0; pass < 2 && !rc; pass++)
        for (size_t i = 0; i < old.count && !rc; i++)
            if (old.coords[i].is_hostname == (pass == 0)) {
                sk_coord c;
                sk_coord_from(&c, &old.coords[i]);
                rc = join_push(a, &same, &same_len, &same_cap, c.text);
            }
    int nold = 0;
    for (size_t i = 0; i < old.count; i++) {
        sk_coord_from(&coords[nold], &old.coords[i]);
        if (sk_coord_resolve(&coords[nold]))
            nold++;
    }
    cfdb_cluster_string_free(&old);
    if (rc)
        return rc;

    int storage = 0, logs = 0;
    if ((rc = conf_int(tx, a, "\xff/conf/storage_replicas", &storage)) ||
        (rc = conf_int(tx, a, "\xff/conf/log_replicas", &logs)))
        return rc;
    int desired = (storage < logs ? storage : logs) * 2 - 1;
    sk_worker *ws;
    int nw;
    if ((rc = sk_get_workers(tx, a, &ws, &nw)))
        return rc;
    excl_set ex = { 0 };
    if ((rc = excluded_servers(tx, a, ws, nw, &ex)))
        return rc;

    if (check_acceptable(coords, nold, ws, nw)) {
        bool ok = false;
        if ((rc = is_acceptable(tx, old_key, coords, nold, nstring, desired, &ex, &ok)))
            return rc;
        if (ok)
            return sk_rows_push(out, a, begin, cfdb_bytes_make(same ? same : "", same_len));
    }
    int *chosen = cfdb_arena_alloc(a, (size_t)(desired > 0 ? desired : 1) * sizeof *chosen);
    int nchosen = 0;
    if (!chosen)
        return CFDB_ERR_UNKNOWN_ERROR;
    if (desired > 0 && (rc = add_desired(tx, a, ws, nw, desired, &ex, chosen, &nchosen)))
        return rc;
    if (nchosen < desired) {
        if (nchosen == 0 || nchosen < nold)
            return auto_failure(tx, true,
                                "Too few fdbserver machines to provide coordination at the current redundancy level");
        nchosen = (nchosen - 1) | 1;
    }
    char *value = NULL;
    size_t len = 0, cap = 0;
    for (int i = 0; i < nchosen; i++) {
        char t[80];
        worker_text(&ws[chosen[i]], t, sizeof t);
        if ((rc = join_push(a, &value, &len, &cap, t)))
            return rc;
    }
    return sk_rows_push(out, a, begin, cfdb_bytes_make(value ? value : "", len));
}
