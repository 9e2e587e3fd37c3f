#define _GNU_SOURCE /* memmem */
/* \xff\xff/configuration/process/class_type/ and class_source/, as libfdb_c 7.3.77 computes
 * them (SpecialKeySpace.actor.cpp ProcessClassRangeImpl, ProcessClassSourceRangeImpl, from
 * ManagementAPI's getWorkers):
 *
 *  - the workers: every \xff/worker/ value (workerListValue: 8-byte protocol version, then
 *    ProcessData in BinaryWriter form: LocalityData = uint64 count, per entry a StringRef key
 *    (uint32 LE length + bytes) and an Optional<StringRef> (bool byte, then the StringRef);
 *    ProcessClass = int16 _class, int16 _source; NetworkAddress = bool isV6, then uint32 LE
 *    (host-order v4) or 16 bytes, uint16 port, uint16 flags);
 *  - each worker's class is replaced by \xff/processClass/<uint32 length + processid>'s
 *    (8-byte protocol version, int16 class, int16 source) when that one's source is set_class
 *    or the worker's own class is unset (a worker without such a key gets unset /
 *    command_line then); test-class workers are left out;
 *  - keys: the worker's ip:port ("[v6]:port", never ":tls"), sorted as strings, duplicates
 *    dropped; class_type's value is the class name (ProcessClass::toString), with the
 *    transaction's own writes laid over it; class_source's is the source name.
 *  - setclass (class_type's commit): each set address must parse as an AddressExclusion and
 *    each class must be a known name or "default" (else 2117 with fdbcli's text); for every
 *    worker the address names, \xff/processClass/<id> is set to the class with source
 *    set_class (IncludeVersion 0x0FDB00B062010001), or cleared for "default"; when any changed,
 *    \xff/processClassChanges gets a random UID's 32 hex digits. Clears are refused in
 *    special_keys.c (SK_W_NO_CLEAR).
 * A worker value shorter than its fields is serialization_failed (1044). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "error_codes.h"
#include "uid.h"
#include "foundationdb/fdb_c_options.g.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define CLASS_TYPE SK_CONF "process/class_type/"
#define CLASS_SOURCE SK_CONF "process/class_source/"
#define PROCESS_CLASS_PREFIX "\xff/processClass/"
#define PV_PROCESS_CLASS_VALUE 0x0FDB00B062010001ull
#define MAX_WORKERS 10000 /* CLIENT_KNOBS->TOO_MANY */

enum { UNSET_CLASS = 0, TESTER_CLASS = 4, INVALID_CLASS = -1 };
enum { COMMAND_LINE_SOURCE = 0, DB_SOURCE = 2 };

/* ProcessClass::toString by enum value (0..23) */
static const char *const class_names[] = {
    "unset",       "storage",      "transaction",        "resolution",     "test",
    "commit_proxy", "master",      "stateless",          "log",            "cluster_controller",
    "router",      "fast_restore", "data_distributor",   "coordinator",    "ratekeeper",
    "storage_cache", "backup",     "grv_proxy",          "blob_manager",   "blob_worker",
    "encrypt_key_proxy", "consistency_scan", "invalid" /* BlobMigratorClass has no name */, "sim_http_server",
};
#define NCLASSES ((int)(sizeof class_names / sizeof *class_names))

static const char *class_name(int c)
{
    return c >= 0 && c < NCLASSES ? class_names[c] : "invalid";
}

static const char *source_name(int s)
{
    return s == 0 ? "command_line" : s == 1 ? "configure_auto" : s == 2 ? "set_class" : "invalid";
}

/* ProcessClass(std::string, source): the class a name gives ("proxy" is commit_proxy) */
static int class_parse(cfdb_bytes v)
{
    char buf[32];
    if (v.len >= sizeof buf)
        return INVALID_CLASS;
    memcpy(buf, v.ptr, v.len);
    buf[v.len] = 0;
    if (strcmp(buf, "proxy") == 0)
        return 5;
    for (int c = 0; c < NCLASSES; c++)
        if (c != 22 && strcmp(buf, class_names[c]) == 0)
            return c;
    return INVALID_CLASS;
}

typedef sk_worker worker; /* special_keys_internal.h: shared with auto_coordinators */

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static bool take(reader *r, void *out, size_t n)
{
    if (r->left < n)
        return false;
    if (out)
        memcpy(out, r->p, n);
    r->p += n;
    r->left -= n;
    return true;
}

static bool take_str(reader *r, cfdb_bytes *out)
{
    uint32_t n;
    if (!take(r, &n, 4) || r->left < n)
        return false;
    *out = cfdb_bytes_make(r->p, n);
    return take(r, NULL, n);
}

static bool decode_worker(cfdb_bytes v, worker *w)
{
    reader r = { v.ptr, v.len };
    uint64_t count;
    memset(w, 0, sizeof *w);
    if (!take(&r, NULL, 8) || !take(&r, &count, 8))
        return false;
    for (uint64_t i = 0; i < count; i++) {
        cfdb_bytes k, val = { 0 };
        uint8_t present;
        if (!take_str(&r, &k) || !take(&r, &present, 1) || (present && !take_str(&r, &val)))
            return false;
        if (present && k.len == 9 && memcmp(k.ptr, "processid", 9) == 0) {
            w->pid = val;
            w->has_pid = true;
        }
        if (present && w->nloc < SK_WORKER_LOCALITIES) {
            w->loc_key[w->nloc] = k;
            w->loc_val[w->nloc++] = val;
        }
    }
    int16_t cls, src;
    uint8_t v6;
    if (!take(&r, &cls, 2) || !take(&r, &src, 2) || !take(&r, &v6, 1))
        return false;
    w->cls = cls;
    w->src = src;
    uint16_t port;
    if (v6) {
        uint8_t b[16];
        if (!take(&r, b, 16) || !inet_ntop(AF_INET6, b, w->ip, sizeof w->ip))
            return false;
    } else {
        uint32_t h;
        if (!take(&r, &h, 4))
            return false;
        snprintf(w->ip, sizeof w->ip, "%u.%u.%u.%u", h >> 24, (h >> 16) & 255, (h >> 8) & 255, h & 255);
    }
    uint16_t flags;
    if (!take(&r, &port, 2) || !take(&r, &flags, 2))
        return false;
    w->port = port;
    w->tls = (flags & 2) != 0; /* NetworkAddress::FLAG_TLS */
    snprintf(w->addr, sizeof w->addr, v6 ? "[%s]:%u" : "%s:%u", w->ip, (unsigned)port);
    return true;
}

static int by_addr(const void *a, const void *b)
{
    return strcmp(((const worker *)a)->addr, ((const worker *)b)->addr);
}

/* getWorkers, then sorted by address with duplicates dropped; *n workers in a */
int sk_get_workers(cfdb_txn *tx, cfdb_arena *a, worker **out, int *n)
{
    sk_rows classes, list;
    int rc = skw_range(tx, CFDB_BYTES_LIT(PROCESS_CLASS_PREFIX), CFDB_BYTES_LIT("\xff/processClass0"), MAX_WORKERS, a,
                       &classes);
    if (!rc)
        rc = skw_range(tx, CFDB_BYTES_LIT("\xff/worker/"), CFDB_BYTES_LIT("\xff/worker0"), MAX_WORKERS, a, &list);
    if (rc)
        return rc;
    worker *ws = cfdb_arena_alloc(a, (size_t)(list.n ? list.n : 1) * sizeof *ws);
    if (!ws)
        return CFDB_ERR_UNKNOWN_ERROR;
    int m = 0;
    for (int i = 0; i < list.n; i++) {
        worker *w = &ws[m];
        if (!decode_worker(cfdb_bytes_make(list.items[i].value, (size_t)list.items[i].value_length), w))
            return CFDB_ERR_SERIALIZATION_FAILED;
        /* id_class[processId]: a missing entry is ProcessClass() (unset, command_line) */
        int cls = UNSET_CLASS, src = COMMAND_LINE_SOURCE;
        size_t plen = sizeof PROCESS_CLASS_PREFIX - 1;
        for (int k = 0; k < classes.n && w->has_pid; k++) {
            const cfdb_fdb_kv *c = &classes.items[k];
            uint32_t idlen;
            if ((size_t)c->key_length < plen + 4)
                continue;
            memcpy(&idlen, c->key + plen, 4);
            if (idlen != w->pid.len || (size_t)c->key_length != plen + 4 + idlen ||
                memcmp(c->key + plen + 4, w->pid.ptr, idlen) != 0)
                continue;
            int16_t cc, cs;
            if (c->value_length < 12)
                return CFDB_ERR_SERIALIZATION_FAILED;
            memcpy(&cc, c->value + 8, 2);
            memcpy(&cs, c->value + 10, 2);
            cls = cc;
            src = cs;
        }
        if (src == DB_SOURCE || w->cls == UNSET_CLASS) {
            w->cls = cls;
            w->src = src;
        }
        if (w->cls != TESTER_CLASS)
            m++;
    }
    qsort(ws, (size_t)m, sizeof *ws, by_addr);
    int u = 0;
    for (int i = 0; i < m; i++)
        if (u == 0 || strcmp(ws[u - 1].addr, ws[i].addr) != 0)
            ws[u++] = ws[i];
    *out = ws;
    *n = u;
    return 0;
}

static int class_rows(cfdb_txn *tx, const char *prefix, bool type, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a,
                      sk_rows *out)
{
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    worker *ws;
    int n, rc = sk_get_workers(tx, a, &ws, &n);
    for (int i = 0; i < n && !rc; i++) {
        cfdb_bytes key = sk_key(a, prefix, cfdb_bytes_make(ws[i].addr, strlen(ws[i].addr)));
        if (!key.ptr)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (cfdb_bytes_cmp(key, begin) < 0 || cfdb_bytes_cmp(key, end) >= 0)
            continue;
        rc = sk_rows_push(out, a, key, cfdb_bytes_str(type ? class_name(ws[i].cls) : source_name(ws[i].src)));
    }
    return rc;
}

int sk_class_type_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    sk_rows db = { 0 };
    int rc = class_rows(tx, CLASS_TYPE, true, begin, end, a, &db);
    return rc ? rc : sk_ryw_merge(tx, begin, end, a, &db, out);
}

int sk_class_source_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    return class_rows(tx, CLASS_SOURCE, false, begin, end, a, out);
}

static int setclass_failure(cfdb_txn *tx, const char *message)
{
    return sk_api_failure(tx, false, "setclass", message);
}

int sk_class_type_commit(cfdb_txn *tx, cfdb_arena *a)
{
    sk_entries w;
    int rc = sk_collect(tx, CFDB_BYTES_LIT(CLASS_TYPE), CFDB_BYTES_LIT(SK_CONF "process/class_type0"), a, &w);
    if (rc)
        return rc;
    size_t pl = sizeof CLASS_TYPE - 1;
    /* validation first, in key order */
    for (size_t i = 0; i < w.n; i++) {
        if (!w.items[i].has_value)
            continue;
        cfdb_bytes addr = cfdb_bytes_make(w.items[i].begin.ptr + pl, w.items[i].begin.len - pl);
        char canon[96], msg[256];
        if (!sk_parse_exclusion(addr, canon, sizeof canon)) {
            int n = snprintf(msg, sizeof msg, "ERROR: '%.*s' is not a valid network endpoint address\n",
                             (int)(addr.len > 96 ? 96 : addr.len), (const char *)addr.ptr);
            if (memmem(addr.ptr, addr.len, ":tls", 4))
                snprintf(msg + n, sizeof msg - (size_t)n, "        Do not include the `:tls' suffix when naming a process\n");
            return setclass_failure(tx, msg);
        }
        cfdb_bytes v = w.items[i].value;
        if (class_parse(v) == INVALID_CLASS && !(v.len == 7 && memcmp(v.ptr, "default", 7) == 0)) {
            snprintf(msg, sizeof msg, "ERROR: '%.*s' is not a valid process class\n", (int)(v.len > 64 ? 64 : v.len),
                     (const char *)v.ptr);
            return setclass_failure(tx, msg);
        }
    }
    skw_set_option(tx, FDB_TR_OPTION_PRIORITY_SYSTEM_IMMEDIATE);
    skw_set_option(tx, FDB_TR_OPTION_LOCK_AWARE);
    skw_set_option(tx, FDB_TR_OPTION_USE_PROVISIONAL_PROXIES);
    skw_set_option(tx, FDB_TR_OPTION_RAW_ACCESS);
    worker *ws;
    int n;
    if ((rc = sk_get_workers(tx, a, &ws, &n)))
        return rc;
    for (size_t i = 0; i < w.n && !rc; i++) {
        if (!w.items[i].has_value)
            continue;
        char canon[96];
        sk_parse_exclusion(cfdb_bytes_make(w.items[i].begin.ptr + pl, w.items[i].begin.len - pl), canon, sizeof canon);
        bool whole = strchr(canon, ':') == NULL || (canon[0] != '[' && strchr(canon, ':') != strrchr(canon, ':'));
        int cls = class_parse(w.items[i].value);
        bool changed = false;
        for (int k = 0; k < n && !rc; k++) {
            if (strcmp(whole ? ws[k].ip : ws[k].addr, canon) != 0 || !ws[k].has_pid)
                continue;
            size_t kl = sizeof PROCESS_CLASS_PREFIX - 1 + 4 + ws[k].pid.len;
            uint8_t *key = cfdb_arena_alloc(a, kl + 1);
            if (!key)
                return CFDB_ERR_UNKNOWN_ERROR;
            uint32_t idlen = (uint32_t)ws[k].pid.len;
            memcpy(key, PROCESS_CLASS_PREFIX, sizeof PROCESS_CLASS_PREFIX - 1);
            memcpy(key + sizeof PROCESS_CLASS_PREFIX - 1, &idlen, 4);
            memcpy(key + sizeof PROCESS_CLASS_PREFIX - 1 + 4, ws[k].pid.ptr, idlen);
            key[kl] = 0;
            if (cls != INVALID_CLASS) {
                uint8_t val[12];
                uint64_t pv = PV_PROCESS_CLASS_VALUE;
                int16_t c16 = (int16_t)cls, s16 = DB_SOURCE;
                memcpy(val, &pv, 8);
                memcpy(val + 8, &c16, 2);
                memcpy(val + 10, &s16, 2);
                rc = skw_set(tx, cfdb_bytes_make(key, kl), cfdb_bytes_make(val, sizeof val));
            } else {
                rc = skw_clear(tx, cfdb_bytes_make(key, kl), cfdb_bytes_make(key, kl + 1));
            }
            changed = true;
        }
        if (changed && !rc) {
            cfdb_uid u;
            char hex[33];
            if (getrandom(&u, sizeof u, 0) != (ssize_t)sizeof u)
                return CFDB_ERR_UNKNOWN_ERROR;
            cfdb_uid_format(u, hex);
            rc = skw_set(tx, CFDB_BYTES_LIT("\xff/processClassChanges"), cfdb_bytes_make(hex, 32));
        }
    }
    return rc;
}
