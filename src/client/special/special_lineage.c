/* \xff\xff/actor_lineage/ and \xff\xff/actor_profiler_conf/ (7.3.77
 * fdbclient/SpecialKeySpace.actor.cpp ActorLineageImpl, actorLineageGetRangeActor, the parse
 * helpers, ActorProfilerConf; fdbclient/ActorLineageProfiler.cpp ProfilerConfigT::reset,
 * getConfig; fdbserver/worker.actor.cpp serveProcess).
 *
 * actor_lineage/ (read only). The range read, without the module prefix (removed by byte
 * count), is split at '/' on both ends (StringRef::splitAny: empty tokens kept, none for an
 * empty string). In this order:
 *   - fewer than 2 tokens on either end: 2117, {"command":"read actor_lineage","message":
 *     "missing required parameters (index, host)",...};
 *   - the range must lie inside state/ (tokens: index, host, wait state, time, seq) or
 *     time/ (index, host, time, wait state, seq), else 2117 "invalid index in actor_lineage";
 *     the tokens present are parsed in that order (later ones may be missing), the end's
 *     only when the range is not empty;
 *   - a host NetworkAddress::parse refuses: 2117 "failed to parse key"; the parse helpers'
 *     std::exceptions (a host 0.0.0.0:0, which is not valid; a wait state other than
 *     disk/Disk/network/Network/running/Running; a time strptime("%FT%T%z") refuses or timegm
 *     cannot convert; a seq std::stoi refuses) leave the actor as unknown_error (4000);
 *   - two different hosts on the two ends: 2117 "the host must remain the same on both ends
 *     of the range".
 *   A valid read then asks the process at host for its ProcessInterface and sends it an
 *   ActorLineageRequest. 7.3.77's fdbserver is built without ENABLE_SAMPLING
 *   (fdbserver/CMakeLists.txt), so no sample is ever collected and serveProcess answers with
 *   an empty sample list: the read has no rows. cfdb-server has no actor sampling either;
 *   cfdb answers that empty result without sending the two requests (a host that does not
 *   answer would make libfdb_c wait; cfdb does not).
 *
 * actor_profiler_conf/ (read and write). Each database keeps a configuration map, taken at
 * its first use from the process-wide profiler configuration's getConfig (at start
 * {"ingestor": "none"}; with a FluentD ingestor {"collector_endpoint": address,
 * "collector_protocol": "tcp"|"udp", "ingestor": "fluentd"}). The map is the database's, not
 * the transaction's: sets and clears change it at once, whether or not the transaction
 * commits.
 *   read [b, e): with b' and e' the two ends without the prefix (by byte count, so the
 *     module's end \xff\xff/actor_profiler_conf0 gives ""), the entries n in key order with
 *     b' < n, stopping at the first n > e'; each as the row (b + n, value). A read of the
 *     whole module or a get of one option has no rows.
 *   set k = v: the map's entry becomes v, the write is recorded, the database is marked
 *     written.
 *   clear k: the entry is removed, the database is marked written; nothing recorded.
 *   clear [b, e): nothing when no entry is >= b'; else the entries from b' through e'
 *     inclusive are removed and the database is marked written; nothing recorded.
 *   commit (only after a set in this transaction): once the database was ever marked
 *     written, the whole map goes through ProfilerConfigT::reset, in key order: "ingestor"
 *     "none" sets the no-op ingestor at once, "fluentd" asks for FluentD, anything else fails
 *     "Unsupported ingestor: <v>"; "ingestor_endpoint" is kept; "ingestor_protocol" "tcp" or
 *     "udp" (else "Unsupported protocol for fluentd: <v>"); any other name "Unknown option
 *     <name>". With fluentd: no endpoint "Endpoint is required for fluentd ingestor", an
 *     address NetworkAddress::parse refuses "Can't parse address <endpoint>". A failure
 *     fails the commit with 2117, \xff\xff/error_message holding that text as it is. */
#define _GNU_SOURCE /* strptime, timegm */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error_codes.h"
#include "network_address.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define AL_PREFIX "\xff\xff/actor_lineage/"
#define AP_PREFIX "\xff\xff/actor_profiler_conf/"

/* ---------------- actor_lineage/ ---------------- */

typedef struct tokens {
    cfdb_bytes t[8];
    int n; /* may exceed 8: only the first 8 are kept */
} tokens;

static void split(cfdb_bytes s, tokens *out)
{
    out->n = 0;
    size_t i = 0;
    while (i < s.len) {
        size_t j = i;
        while (j < s.len && s.ptr[j] != '/')
            j++;
        if (out->n < 8)
            out->t[out->n] = cfdb_bytes_make(s.ptr + i, j - i);
        out->n++;
        i = j < s.len ? j + 1 : j;
    }
}

enum parse_rc { P_OK, P_ERROR /* an Error: "failed to parse key" */, P_STD /* a std::exception */ };

static enum parse_rc parse_host(cfdb_bytes t, cfdb_network_address *a, uint8_t v6[16])
{
    if (cfdb_network_address_parse((const char *)t.ptr, t.len, a, v6))
        return P_ERROR;
    bool ip_valid = a->ip.tag == 2 || a->ip.v4 != 0;
    return ip_valid || a->port != 0 ? P_OK : P_STD; /* isValid() */
}

static enum parse_rc parse_wait_state(cfdb_bytes t, int *w)
{
    static const char *const names[] = { "disk", "Disk", "network", "Network", "running", "Running" };
    for (int i = 0; i < 6; i++)
        if (cfdb_bytes_eq(t, cfdb_bytes_str(names[i]))) {
            *w = i / 2;
            return P_OK;
        }
    return P_STD;
}

static enum parse_rc parse_time(cfdb_bytes t)
{
    char s[128];
    if (t.len >= sizeof s || memchr(t.ptr, 0, t.len))
        return P_STD; /* strptime would stop at the NUL; such a key is refused here */
    memcpy(s, t.ptr, t.len);
    s[t.len] = 0;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!strptime(s, "%FT%T%z", &tm))
        return P_STD;
    return timegm(&tm) == (time_t)-1 ? P_STD : P_OK;
}

static enum parse_rc parse_int(cfdb_bytes t)
{
    char s[64];
    if (t.len >= sizeof s)
        return P_STD; /* std::stoi: out_of_range for any int this long, or invalid */
    memcpy(s, t.ptr, t.len);
    s[t.len] = 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno == ERANGE || v < INT_MIN || v > INT_MAX)
        return P_STD;
    return P_OK;
}

/* The tokens after the index, in the order the index names; the first failure wins. */
static enum parse_rc parse_fields(const tokens *tk, bool state_index, cfdb_network_address *host, uint8_t v6[16])
{
    enum parse_rc rc = P_OK;
    int w;
    for (int i = 1; i < tk->n && i < 5 && rc == P_OK; i++) {
        cfdb_bytes t = i < 8 ? tk->t[i] : cfdb_bytes_make(NULL, 0);
        if (i == 1)
            rc = parse_host(t, host, v6);
        else if (i == 4)
            rc = parse_int(t);
        else if ((i == 2) == state_index)
            rc = parse_wait_state(t, &w);
        else
            rc = parse_time(t);
    }
    return rc;
}

static bool inside(cfdb_bytes b, cfdb_bytes e, const char *rb, const char *re)
{
    return cfdb_bytes_cmp(b, cfdb_bytes_str(rb)) >= 0 && cfdb_bytes_cmp(e, cfdb_bytes_str(re)) <= 0;
}

static int lineage_fail(cfdb_txn *tx, const char *msg)
{
    return sk_api_failure(tx, false, "read actor_lineage", msg);
}

int sk_lineage_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    (void)a;
    (void)out;
    const size_t pl = sizeof AL_PREFIX - 1;
    tokens bt, et;
    split(cfdb_bytes_make(begin.ptr + pl, begin.len - pl), &bt);
    split(cfdb_bytes_make(end.ptr + pl, end.len - pl), &et);
    if (bt.n < 2 || et.n < 2)
        return lineage_fail(tx, "missing required parameters (index, host)");
    bool state_index;
    if (inside(begin, end, AL_PREFIX "state/", AL_PREFIX "state0"))
        state_index = true;
    else if (inside(begin, end, AL_PREFIX "time/", AL_PREFIX "time0"))
        state_index = false;
    else
        return lineage_fail(tx, "invalid index in actor_lineage");
    cfdb_network_address host, end_host;
    uint8_t v6a[16], v6b[16];
    memset(&host, 0, sizeof host);
    memset(&end_host, 0, sizeof end_host);
    enum parse_rc rc = parse_fields(&bt, state_index, &host, v6a);
    bool ranged = !cfdb_bytes_eq(begin, end);
    if (rc == P_OK && ranged)
        rc = parse_fields(&et, state_index, &end_host, v6b);
    if (rc == P_STD)
        return CFDB_ERR_UNKNOWN_ERROR;
    if (rc == P_ERROR)
        return lineage_fail(tx, "failed to parse key");
    char h1[80], h2[80];
    cfdb_network_address_format(&host, h1, sizeof h1);
    cfdb_network_address_format(&end_host, h2, sizeof h2);
    if (ranged && strcmp(h1, h2) != 0)
        return lineage_fail(tx, "the host must remain the same on both ends of the range");
    return 0; /* the process's samples: none (see the header) */
}

/* ---------------- actor_profiler_conf/ ---------------- */

typedef struct conf_entry {
    char *name, *value;
} conf_entry;

typedef struct conf_map {
    conf_entry *items; /* sorted by name (std::map<std::string, std::string>) */
    size_t n, cap;
} conf_map;

struct sk_profiler_conf {
    pthread_mutex_t mu;
    conf_map map;
    bool did_write;
};

/* ProfilerConfig::instance(): the process's ingestor */
static struct {
    pthread_mutex_t mu;
    bool fluentd;
    char endpoint[80];
    bool tcp;
} g_profiler = { PTHREAD_MUTEX_INITIALIZER, false, "", false };

static size_t map_lower(const conf_map *m, const char *name, size_t len)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cfdb_bytes_cmp(cfdb_bytes_str(m->items[mid].name), cfdb_bytes_make((const uint8_t *)name, len)) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static char *dup_n(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* Option names and values are C strings here: a NUL inside one cuts it (std::string keeps
 * it; such a name matches no option anyway). */
static int map_put(conf_map *m, cfdb_bytes name, cfdb_bytes value)
{
    size_t i = map_lower(m, (const char *)name.ptr, name.len);
    char *v = dup_n(value.ptr, value.len);
    if (!v)
        return CFDB_ERR_UNKNOWN_ERROR;
    if (i < m->n && cfdb_bytes_eq(cfdb_bytes_str(m->items[i].name), name)) {
        free(m->items[i].value);
        m->items[i].value = v;
        return 0;
    }
    char *k = dup_n(name.ptr, name.len);
    if (k && m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4;
        conf_entry *ni = realloc(m->items, nc * sizeof *ni);
        if (ni) {
            m->items = ni;
            m->cap = nc;
        }
    }
    if (!k || m->n == m->cap) {
        free(k);
        free(v);
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    memmove(m->items + i + 1, m->items + i, (m->n - i) * sizeof *m->items);
    m->items[i] = (conf_entry){ k, v };
    m->n++;
    return 0;
}

static void map_erase(conf_map *m, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        free(m->items[i].name);
        free(m->items[i].value);
    }
    memmove(m->items + from, m->items + to, (m->n - to) * sizeof *m->items);
    m->n -= to - from;
}

/* ProfilerConfigT::getConfig */
static int initial_config(conf_map *m)
{
    pthread_mutex_lock(&g_profiler.mu);
    int rc;
    if (g_profiler.fluentd) {
        rc = map_put(m, CFDB_BYTES_LIT("collector_endpoint"), cfdb_bytes_str(g_profiler.endpoint));
        if (!rc)
            rc = map_put(m, CFDB_BYTES_LIT("collector_protocol"), cfdb_bytes_str(g_profiler.tcp ? "tcp" : "udp"));
        if (!rc)
            rc = map_put(m, CFDB_BYTES_LIT("ingestor"), CFDB_BYTES_LIT("fluentd"));
    } else {
        rc = map_put(m, CFDB_BYTES_LIT("ingestor"), CFDB_BYTES_LIT("none"));
    }
    pthread_mutex_unlock(&g_profiler.mu);
    return rc;
}

static void conf_free(void *p)
{
    struct sk_profiler_conf *c = p;
    if (!c)
        return;
    map_erase(&c->map, 0, c->map.n);
    free(c->map.items);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void *conf_make(void)
{
    struct sk_profiler_conf *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    if (initial_config(&c->map)) {
        conf_free(c);
        return NULL;
    }
    return c;
}

static struct sk_profiler_conf *conf_of(cfdb_db *db)
{
    return cfdb_db_slot(db, CFDB_DB_SLOT_PROFILER_CONF, conf_make, conf_free);
}

int sk_profiler_conf_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    const size_t pl = sizeof AP_PREFIX - 1;
    cfdb_bytes b = cfdb_bytes_make(begin.ptr + pl, begin.len - pl), e = cfdb_bytes_make(end.ptr + pl, end.len - pl);
    struct sk_profiler_conf *c = conf_of(cfdb_txn_db(tx));
    if (!c)
        return CFDB_ERR_UNKNOWN_ERROR;
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->map.n && !rc; i++) {
        cfdb_bytes name = cfdb_bytes_str(c->map.items[i].name);
        if (cfdb_bytes_cmp(name, e) > 0)
            break;
        if (cfdb_bytes_cmp(name, b) > 0) {
            uint8_t *k = cfdb_arena_alloc(a, begin.len + name.len + 1);
            if (!k) {
                rc = CFDB_ERR_UNKNOWN_ERROR;
                break;
            }
            memcpy(k, begin.ptr, begin.len); /* withPrefix(kr.begin) */
            memcpy(k + begin.len, name.ptr, name.len);
            rc = sk_rows_push(out, a, cfdb_bytes_make(k, begin.len + name.len), cfdb_bytes_str(c->map.items[i].value));
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void sk_profiler_conf_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value, sk_write_effect *e)
{
    const size_t pl = sizeof AP_PREFIX - 1;
    struct sk_profiler_conf *c = conf_of(cfdb_txn_db(tx));
    if (!c) {
        e->rc = CFDB_ERR_UNKNOWN_ERROR;
        return;
    }
    pthread_mutex_lock(&c->mu);
    e->rc = map_put(&c->map, cfdb_bytes_make(key.ptr + pl, key.len - pl), value);
    if (!e->rc) {
        c->did_write = true;
        e->record = SK_REC_VALUE;
    }
    pthread_mutex_unlock(&c->mu);
}

void sk_profiler_conf_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single, sk_write_effect *e)
{
    const size_t pl = sizeof AP_PREFIX - 1;
    struct sk_profiler_conf *c = conf_of(cfdb_txn_db(tx));
    if (!c) {
        e->rc = CFDB_ERR_UNKNOWN_ERROR;
        return;
    }
    cfdb_bytes b = cfdb_bytes_make(begin.ptr + pl, begin.len - pl);
    pthread_mutex_lock(&c->mu);
    conf_map *m = &c->map;
    size_t first = map_lower(m, (const char *)b.ptr, b.len);
    if (single) {
        if (first < m->n && cfdb_bytes_eq(cfdb_bytes_str(m->items[first].name), b))
            map_erase(m, first, first + 1);
        c->did_write = true;
    } else if (first < m->n) {
        cfdb_bytes en = cfdb_bytes_make(end.ptr + pl, end.len - pl);
        size_t last = first; /* upper_bound(end): the names <= end go */
        while (last < m->n && cfdb_bytes_cmp(cfdb_bytes_str(m->items[last].name), en) <= 0)
            last++;
        c->did_write = true;
        map_erase(m, first, last);
    }
    pthread_mutex_unlock(&c->mu);
    e->record = SK_REC_NONE;
}

/* ProfilerConfigT::reset over the database's map; NULL or the ConfigError's text (in buf). */
static const char *profiler_reset(const conf_map *m, char *buf, size_t cap)
{
    bool fluentd = false, tcp = false;
    const char *endpoint = "";
    pthread_mutex_lock(&g_profiler.mu);
    const char *err = NULL;
    for (size_t i = 0; i < m->n && !err; i++) {
        const char *k = m->items[i].name, *v = m->items[i].value;
        if (strcmp(k, "ingestor") == 0) {
            if (strcmp(v, "none") == 0)
                g_profiler.fluentd = false; /* setBackend(NoneIngestor) at once */
            else if (strcmp(v, "fluentd") == 0)
                fluentd = true;
            else
                snprintf(buf, cap, "Unsupported ingestor: %s", v), err = buf;
        } else if (strcmp(k, "ingestor_endpoint") == 0) {
            endpoint = v;
        } else if (strcmp(k, "ingestor_protocol") == 0) {
            if (strcmp(v, "tcp") == 0)
                tcp = true;
            else if (strcmp(v, "udp") == 0)
                tcp = false;
            else
                snprintf(buf, cap, "Unsupported protocol for fluentd: %s", v), err = buf;
        } else {
            snprintf(buf, cap, "Unknown option %s", k), err = buf;
        }
    }
    if (!err && fluentd) {
        cfdb_network_address addr;
        uint8_t v6[16];
        if (!endpoint[0]) {
            err = "Endpoint is required for fluentd ingestor";
        } else if (cfdb_network_address_parse(endpoint, strlen(endpoint), &addr, v6)) {
            snprintf(buf, cap, "Can't parse address %s", endpoint);
            err = buf;
        } else {
            g_profiler.fluentd = true;
            g_profiler.tcp = tcp;
            cfdb_network_address_format(&addr, g_profiler.endpoint, sizeof g_profiler.endpoint);
        }
    }
    pthread_mutex_unlock(&g_profiler.mu);
    return err;
}

int sk_profiler_conf_commit(cfdb_txn *tx, cfdb_arena *a)
{
    (void)a;
    struct sk_profiler_conf *c = conf_of(cfdb_txn_db(tx));
    if (!c)
        return CFDB_ERR_UNKNOWN_ERROR;
    char buf[512];
    const char *err = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->did_write)
        err = profiler_reset(&c->map, buf, sizeof buf);
    pthread_mutex_unlock(&c->mu);
    return err ? sk_api_failure_text(tx, err) : 0;
}
