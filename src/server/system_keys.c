/* The \xff system keys a client reads to find servers: \xff/keyServers/ (shard map),
 * \xff/serverTag/ and \xff/serverList/, written into the store like real metadata; and
 * \xff/coordinators (fdbclient/SystemData.cpp coordinatorsKey), which a real cluster
 * sets to its connection string as ClusterConnectionString::toString() gives it
 * ("description:id@ip:port[:tls],..."; fdbclient/MonitorLeader.actor.cpp), or to the new
 * one after the coordinators moved (fdbclient/ManagementAPI.actor.cpp changeQuorum). */
#include <stdlib.h>
#include <string.h>

#include "cfdb/protocol_version.h"
#include "commit_proxy.h"
#include "system_keys.h"

#define PV_KEY_SERVER_VALUE UINT64_C(0x0FDB00B062010001) /* withKeyServerValue / withServerTagValue */

static const fb_message ssi_message = { "StorageServerInterface", 15302073, FB_MSG_REQUEST,
                                        &cfdb_fb_storage_server_interface };

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

int srv_write_system_keys(srv *s)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    size_t cap = s->shards.count + 2 + 2 * (size_t)s->nstorage + 5;
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
        if (fb_encode(&w, &ssi_message, &ssi, 0) == 0) {
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
