/* Health metrics (7.3.77 fdbclient/include/fdbclient/CommitProxyInterface.h and FDBTypes.h):
 *   GetHealthMetricsRequest (11403900) {reply, detailed}, sent to GrvProxyInterface's
 *     getHealthMetrics stream (getConsistentReadVersion adjusted by 2);
 *   GetHealthMetricsReply (11544290) {serialized}: one byte string, the HealthMetrics in
 *     BinaryWriter IncludeVersion form (the reply's healthMetrics member is rebuilt from it).
 * HealthMetrics binary form (HealthMetrics::serialize order, all little-endian): uint64
 * protocol version, int64 worstStorageQueue, int64 worstStorageDurabilityLag, int64
 * worstTLogQueue, double tpsLimit, bool batchLimited, storageStats (std::map: int32 count,
 * then UID (two uint64) and StorageStats {int64 storageQueue, int64 storageDurabilityLag,
 * double diskUsage, double cpuUsage} per entry, in UID order), tLogQueue (int32 count, then
 * UID and int64), int64 limitingStorageQueue, int64 limitingStorageDurabilityLag.
 * Decoding bounds the maps by the bytes present, so a peer cannot make us allocate more than
 * its message's size. */
#include <string.h>

#include "error_codes.h"
#include "protocol_version.h"
#include "msg_types.h"

FB_TABLE_DEF(get_health_metrics_request, "GetHealthMetricsRequest", cfdb_get_health_metrics_request,
             FB_FIELD(cfdb_get_health_metrics_request, reply, cfdb_fb_reply_promise),
             FB_FIELD(cfdb_get_health_metrics_request, detailed, fb_bool));
const fb_message cfdb_msg_get_health_metrics_request = { "GetHealthMetricsRequest", 11403900, FB_MSG_REQUEST,
                                                         &get_health_metrics_request };
FB_TABLE_DEF(get_health_metrics_reply, "GetHealthMetricsReply", cfdb_get_health_metrics_reply,
             FB_FIELD(cfdb_get_health_metrics_reply, serialized, fb_bytes));
const fb_message cfdb_msg_get_health_metrics_reply = { "ErrorOr<GetHealthMetricsReply>", CFDB_REPLY_FILE_ID(11544290),
                                                       FB_MSG_REPLY, &get_health_metrics_reply };

#define HM_FIXED (8 + 5 * 8 + 1 + 4 + 4 + 2 * 8) /* version, scalars, two map counts */
#define HM_STORAGE_ENTRY (16 + 4 * 8)
#define HM_LOG_ENTRY (16 + 8)

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8); /* little-endian hosts only, as the rest of the wire library */
    return p + 8;
}
static uint8_t *putd(uint8_t *p, double d)
{
    memcpy(p, &d, 8);
    return p + 8;
}
static uint8_t *put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

int cfdb_health_metrics_encode(const cfdb_health_metrics *m, cfdb_arena *a, cfdb_bytes *out)
{
    size_t n = HM_FIXED + m->nstorage * HM_STORAGE_ENTRY + m->nlog * HM_LOG_ENTRY;
    uint8_t *buf = cfdb_arena_alloc(a, n), *p = buf;
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR;
    p = put64(p, CFDB_PROTOCOL_VERSION);
    p = put64(p, (uint64_t)m->worstStorageQueue);
    p = put64(p, (uint64_t)m->worstStorageDurabilityLag);
    p = put64(p, (uint64_t)m->worstTLogQueue);
    p = putd(p, m->tpsLimit);
    *p++ = m->batchLimited;
    p = put32(p, (uint32_t)m->nstorage);
    for (size_t i = 0; i < m->nstorage; i++) {
        const cfdb_health_storage_stats *s = &m->storage[i];
        p = put64(p, s->id.first);
        p = put64(p, s->id.second);
        p = put64(p, (uint64_t)s->storageQueue);
        p = put64(p, (uint64_t)s->storageDurabilityLag);
        p = putd(p, s->diskUsage);
        p = putd(p, s->cpuUsage);
    }
    p = put32(p, (uint32_t)m->nlog);
    for (size_t i = 0; i < m->nlog; i++) {
        p = put64(p, m->log[i].id.first);
        p = put64(p, m->log[i].id.second);
        p = put64(p, (uint64_t)m->log[i].queue);
    }
    p = put64(p, (uint64_t)m->limitingStorageQueue);
    p = put64(p, (uint64_t)m->limitingStorageDurabilityLag);
    *out = cfdb_bytes_make(buf, (size_t)(p - buf));
    return 0;
}

typedef struct reader {
    const uint8_t *p, *end;
    bool bad;
} reader;

static uint64_t get64(reader *r)
{
    uint64_t v = 0;
    if (r->end - r->p < 8) {
        r->bad = true;
        return 0;
    }
    memcpy(&v, r->p, 8);
    r->p += 8;
    return v;
}
static double getd(reader *r)
{
    uint64_t v = get64(r);
    double d;
    memcpy(&d, &v, 8);
    return d;
}
static uint32_t get32(reader *r)
{
    uint32_t v = 0;
    if (r->end - r->p < 4) {
        r->bad = true;
        return 0;
    }
    memcpy(&v, r->p, 4);
    r->p += 4;
    return v;
}

int cfdb_health_metrics_decode(cfdb_bytes in, cfdb_arena *a, cfdb_health_metrics *m)
{
    memset(m, 0, sizeof *m);
    reader r = { in.ptr, in.ptr + in.len, false };
    uint64_t version = get64(&r);
    if (!r.bad && (version & CFDB_PROTOCOL_VERSION_FLAG_MASK) < CFDB_PROTOCOL_MIN_VALID) /* isValid */
        return CFDB_ERR_INCOMPATIBLE_PROTOCOL_VERSION;
    m->worstStorageQueue = (int64_t)get64(&r);
    m->worstStorageDurabilityLag = (int64_t)get64(&r);
    m->worstTLogQueue = (int64_t)get64(&r);
    m->tpsLimit = getd(&r);
    if (r.p < r.end)
        m->batchLimited = *r.p++ != 0;
    else
        r.bad = true;
    uint32_t ns = get32(&r);
    if (r.bad || ns > (size_t)(r.end - r.p) / HM_STORAGE_ENTRY)
        return CFDB_ERR_SERIALIZATION_FAILED;
    m->storage = ns ? cfdb_arena_alloc(a, ns * sizeof *m->storage) : NULL;
    if (ns && !m->storage)
        return CFDB_ERR_UNKNOWN_ERROR;
    m->nstorage = ns;
    for (uint32_t i = 0; i < ns; i++) {
        cfdb_health_storage_stats *s = &m->storage[i];
        s->id.first = get64(&r);
        s->id.second = get64(&r);
        s->storageQueue = (int64_t)get64(&r);
        s->storageDurabilityLag = (int64_t)get64(&r);
        s->diskUsage = getd(&r);
        s->cpuUsage = getd(&r);
    }
    uint32_t nl = get32(&r);
    if (r.bad || nl > (size_t)(r.end - r.p) / HM_LOG_ENTRY)
        return CFDB_ERR_SERIALIZATION_FAILED;
    m->log = nl ? cfdb_arena_alloc(a, nl * sizeof *m->log) : NULL;
    if (nl && !m->log)
        return CFDB_ERR_UNKNOWN_ERROR;
    m->nlog = nl;
    for (uint32_t i = 0; i < nl; i++) {
        m->log[i].id.first = get64(&r);
        m->log[i].id.second = get64(&r);
        m->log[i].queue = (int64_t)get64(&r);
    }
    m->limitingStorageQueue = (int64_t)get64(&r);
    m->limitingStorageDurabilityLag = (int64_t)get64(&r);
    return r.bad ? CFDB_ERR_SERIALIZATION_FAILED : 0;
}
