/* The \xff system keys a client reads to find servers: \xff/keyServers/ (shard map),
 * \xff/serverTag/ and \xff/serverList/, written into the store like real metadata;
 * \xff/worker/ (the cluster controller's worker list, which fdbcli's configure and
 * exclude read through getWorkers: one ProcessData for this one process, see worker_value);
 * \xff/logs (the transaction logs, which fdbcli's exclude asserts present: logs_value);
 * and
 * \xff/coordinators (fdbclient/SystemData.cpp coordinatorsKey), which a real cluster
 * sets to its connection string as ClusterConnectionString::toString() gives it
 * ("description:id@ip:port[:tls],..."; fdbclient/MonitorLeader.actor.cpp), or to the new
 * one after the coordinators moved (fdbclient/ManagementAPI.actor.cpp changeQuorum). */
#include <stdlib.h>
#include <string.h>

#include "exclusion.h"
#include "protocol_version.h"
#include "commit_proxy.h"
#include "system_keys.h"

#define PV_KEY_SERVER_VALUE UINT64_C(0x0FDB00B062010001) /* withKeyServerValue / withServerTagValue */

static cfdb_bytes cat(cfdb_arena *a, const char *prefix, size_t plen, const void *tail, size_t tlen)
{
    uint8_t *p = cfdb_arena_alloc(a, plen + tlen + 1);
    if (!p)
        return (cfdb_bytes){ 0, 0 };
    memcpy(p, prefix, plen);
    if (tlen)
        memcpy(p + plen, tail, tlen);
    return cfdb_bytes_make(p, plen + tlen);
}

/* \xff/worker/<processID> (fdbclient/SystemData.cpp workerListKeyFor: BinaryWriter
 * Unversioned, the prefix then the id as a StringRef: 4-byte little-endian length + bytes) =
 * workerListValue: BinaryWriter with IncludeVersion(withWorkerListValue =
 * 0x0FDB00B062010001), then ProcessData (fdbrpc/include/fdbrpc/Locality.h: locality,
 * processClass, address):
 *   LocalityData: uint64 entry count, then per entry in key order a StringRef key and an
 *     Optional<StringRef> value (bool present, then the StringRef);
 *   ProcessClass: _class and _source as int16 (fdbrpc/include/fdbrpc/Locality.h: int16_t
 *     _class, _source; UnsetClass 0, CommandLineSource 0: a process started without --class);
 *   NetworkAddress (flow/include/flow/NetworkAddress.h; IPv6 protocol, no hostname flag
 *     before 0x0FDB00B071010000): IPAddress as bool isV6 + uint32, uint16 port, uint16 flags. */
static cfdb_bytes worker_key(cfdb_arena *a, const char *pid)
{
    uint32_t n = (uint32_t)strlen(pid);
    static const char prefix[] = "\xff/worker/"; /* workerListKeys.begin: 9 bytes */
    const size_t pl = sizeof prefix - 1;
    uint8_t *k = cfdb_arena_alloc(a, pl + 4 + n);
    if (!k)
        return (cfdb_bytes){ 0, 0 };
    memcpy(k, prefix, pl);
    memcpy(k + pl, &n, 4);
    memcpy(k + pl + 4, pid, n);
    return cfdb_bytes_make(k, pl + 4 + n);
}

static size_t put_str(uint8_t *p, const char *str)
{
    uint32_t n = (uint32_t)strlen(str);
    memcpy(p, &n, 4);
    memcpy(p + 4, str, n);
    return 4 + n;
}

static cfdb_bytes worker_value(srv *s, cfdb_arena *a)
{
    uint8_t *v = cfdb_arena_alloc(a, 512);
    if (!v)
        return (cfdb_bytes){ 0, 0 };
    size_t o = 0;
    uint64_t pv = PV_KEY_SERVER_VALUE; /* withWorkerListValue has the same number */
    memcpy(v, &pv, 8);
    o = 8;
    const char *keys[3] = { "machineid", "processid", "zoneid" }; /* std::map order */
    const char *vals[3] = { s->storage[0].machine_id, s->proxy_process_id, s->storage[0].machine_id };
    uint64_t count = 3;
    memcpy(v + o, &count, 8);
    o += 8;
    for (int i = 0; i < 3; i++) {
        o += put_str(v + o, keys[i]);
        v[o++] = 1;
        o += put_str(v + o, vals[i]);
    }
    int16_t cls = 0, src = 0;
    memcpy(v + o, &cls, 2);
    memcpy(v + o + 2, &src, 2);
    o += 4;
    cfdb_network_address addr = srv_listener_address(s, s->coord_listener);
    v[o++] = 0; /* not v6 */
    memcpy(v + o, &addr.ip.v4, 4);
    memcpy(v + o + 4, &addr.port, 2);
    memcpy(v + o + 6, &addr.flags, 2);
    o += 8;
    return cfdb_bytes_make(v, o);
}

/* \xff/logs (fdbclient/SystemData.cpp logsValue, encoded by cfdb_logs_value_encode, which the
 * client's in_progress_exclusion decodes): IncludeVersion(withLogsValue = 0x0FDB00B062010001),
 * the current logs then the old ones. One log, this process (its coordinator listener's
 * address, as worker_value); no old logs. */
static cfdb_bytes logs_value(srv *s, cfdb_arena *a)
{
    cfdb_log_entry log = { s->log_id, srv_listener_address(s, s->coord_listener) };
    cfdb_logs_value v = { &log, NULL, 1, 0 };
    cfdb_bytes out = { 0, 0 };
    if (cfdb_logs_value_encode(PV_KEY_SERVER_VALUE, &v, a, &out))
        return (cfdb_bytes){ 0, 0 };
    return out;
}

int srv_write_system_keys(srv *s)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    size_t cap = s->shards.count + 2 + 2 * (size_t)s->nstorage + 8;
    cfdb_mutation *m = cfdb_arena_zalloc(&a, cap * sizeof(*m));
    size_t n = 0;
    int rc = -1;
    if (!m)
        goto out;
    m[n].type = CFDB_MUT_CLEAR_RANGE;
    m[n].param1 = CFDB_BYTES_LIT("\xff/keyServers/");
    m[n].param2 = CFDB_BYTES_LIT("\xff/keyServers0");
    n++;
    m[n].type = CFDB_MUT_CLEAR_RANGE;
    m[n].param1 = CFDB_BYTES_LIT("\xff/serverList/");
    m[n].param2 = CFDB_BYTES_LIT("\xff/serverList0");
    n++;
    m[n].type = CFDB_MUT_CLEAR_RANGE;
    m[n].param1 = CFDB_BYTES_LIT("\xff/serverTag/");
    m[n].param2 = CFDB_BYTES_LIT("\xff/serverTag0");
    n++;
    for (size_t i = 0; i < s->shards.count; i++) {
        cfdb_bytes b = srv_shard_begin(&s->shards, i);
        uint8_t *v = cfdb_arena_alloc(&a, 32);
        if (!v)
            goto out;
        uint64_t pv = PV_KEY_SERVER_VALUE;
        uint32_t one = 1, zero = 0;
        uint8_t uid[16];
        cfdb_uid_store(uid, s->storage[s->shards.shards[i].owner].id);
        memcpy(v, &pv, 8);
        memcpy(v + 8, &one, 4);
        memcpy(v + 12, uid, 16);
        memcpy(v + 28, &zero, 4);
        m[n].type = CFDB_MUT_SET_VALUE;
        m[n].param1 = cat(&a, "\xff/keyServers/", sizeof "\xff/keyServers/" - 1, b.ptr, b.len);
        m[n].param2 = cfdb_bytes_make(v, 32);
        n++;
    }
    const char *cs = s->forward[0] ? s->forward : cfdb_server_connection_string(s);
    m[n].type = CFDB_MUT_SET_VALUE;
    m[n].param1 = CFDB_BYTES_LIT("\xff/coordinators");
    m[n].param2 = cat(&a, cs, strlen(cs), NULL, 0);
    n++;
    m[n].type = CFDB_MUT_CLEAR_RANGE;
    m[n].param1 = CFDB_BYTES_LIT("\xff/worker/");
    m[n].param2 = CFDB_BYTES_LIT("\xff/worker0");
    n++;
    m[n].type = CFDB_MUT_SET_VALUE;
    m[n].param1 = worker_key(&a, s->proxy_process_id);
    m[n].param2 = worker_value(s, &a);
    if (!m[n].param1.len || !m[n].param2.len)
        goto out;
    n++;
    m[n].type = CFDB_MUT_SET_VALUE;
    m[n].param1 = CFDB_BYTES_LIT("\xff/logs");
    m[n].param2 = logs_value(s, &a);
    if (!m[n].param2.len)
        goto out;
    n++;
    m[n].type = CFDB_MUT_SET_VALUE;
    m[n].param1 = CFDB_BYTES_LIT("\xff/keyServers/\xff\xff");
    m[n].param2 = CFDB_BYTES_LIT("");
    n++;
    for (int i = 0; i < s->nstorage; i++) {
        uint8_t uid[16];
        cfdb_uid_store(uid, s->storage[i].id);
        /* tag: i8 locality, u16 id */
        uint8_t *tv = cfdb_arena_alloc(&a, 11);
        if (!tv)
            goto out;
        uint64_t pv = PV_KEY_SERVER_VALUE;
        memcpy(tv, &pv, 8);
        tv[8] = 0;
        uint16_t id = (uint16_t)i;
        memcpy(tv + 9, &id, 2);
        m[n].type = CFDB_MUT_SET_VALUE;
        m[n].param1 = cat(&a, "\xff/serverTag/", sizeof "\xff/serverTag/" - 1, uid, 16);
        m[n].param2 = cfdb_bytes_make(tv, 11);
        n++;
        cfdb_storage_server_interface ssi;
        ss_fill_interface(s, i, &a, &ssi);
        fb_writer w;
        fb_writer_init(&w, 8);
        if (fb_encode(&w, &cfdb_msg_storage_server_interface, &ssi, 0) == 0) {
            uint64_t fpv = CFDB_PROTOCOL_CONNECT_VERSION;
            uint8_t *blob = w.buf + w.base - 8;
            memcpy(blob, &fpv, 8);
            cfdb_bytes val;
            if (cfdb_arena_dup_bytes(&a, cfdb_bytes_make(blob, fb_writer_message_len(&w) + 8), &val) == 0) {
                m[n].type = CFDB_MUT_SET_VALUE;
                m[n].param1 = cat(&a, "\xff/serverList/", sizeof "\xff/serverList/" - 1, uid, 16);
                m[n].param2 = val;
                n++;
            }
        }
        fb_writer_free(&w);
    }
    rc = cp_apply_system(s, m, n);
out:
    cfdb_arena_free(&a);
    return rc;
}
