/* The tenant map read from the store (see tenant_map.h for the format). Lookups by id are
 * one point read at the version asked; lookups by name walk \xff/tenant/map/ at the newest
 * version (the dev server keeps no second index that could disagree with the store). */
#include <string.h>

#include "error_codes.h"
#include "messages.h"
#include "tenant_map.h"

#define TENANT_MAP_PREFIX_LEN (sizeof TENANT_MAP_PREFIX - 1)

/* TenantMapEntry: cfdb_msg_tenant_map_entry (src/wire/msg_tenant.c). */

int srv_tenant_key(cfdb_arena *a, cfdb_bytes prefix, cfdb_bytes *k)
{
    if (!prefix.len)
        return 0;
    uint8_t *p = cfdb_arena_alloc(a, prefix.len + k->len + 1);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(p, prefix.ptr, prefix.len);
    if (k->len)
        memcpy(p + prefix.len, k->ptr, k->len);
    *k = cfdb_bytes_make(p, prefix.len + k->len);
    return 0;
}

int srv_tenant_decode(cfdb_bytes value, cfdb_arena *a, srv_tenant *out)
{
    cfdb_tenant_map_entry e;
    memset(&e, 0, sizeof e);
    if (value.len < 8 + 8 || fb_decode_versioned(&cfdb_msg_tenant_map_entry, value, &e, NULL, a))
        return CFDB_ERR_SERIALIZATION_FAILED;
    out->id = e.id;
    out->name = e.tenantName;
    out->lock_state = e.tenantLockState;
    return 0;
}

static cfdb_bytes map_key(int64_t id, uint8_t buf[TENANT_MAP_PREFIX_LEN + CFDB_TENANT_PREFIX_SIZE])
{
    memcpy(buf, TENANT_MAP_PREFIX, TENANT_MAP_PREFIX_LEN);
    cfdb_tenant_prefix(id, buf + TENANT_MAP_PREFIX_LEN);
    return cfdb_bytes_make(buf, TENANT_MAP_PREFIX_LEN + CFDB_TENANT_PREFIX_SIZE);
}

int srv_tenant_at(srv *s, int64_t version, int64_t id, cfdb_arena *a, srv_tenant *out)
{
    if (id < 0)
        return CFDB_ERR_TENANT_NOT_FOUND;
    uint8_t kb[TENANT_MAP_PREFIX_LEN + CFDB_TENANT_PREFIX_SIZE];
    cfdb_bytes v;
    bool present = false;
    if (cfdb_mvcc_get(s->store, version, map_key(id, kb), &v, &present) || !present)
        return CFDB_ERR_TENANT_NOT_FOUND;
    /* the value points into the store: copy before decoding into the caller's arena */
    cfdb_bytes copy;
    if (cfdb_arena_dup_bytes(a, v, &copy))
        return CFDB_ERR_TENANT_NOT_FOUND;
    if (srv_tenant_decode(copy, a, out)) {
        srv_log(s, "tenant %lld: map entry does not decode; treated as absent", (long long)id);
        return CFDB_ERR_TENANT_NOT_FOUND;
    }
    out->id = id;
    return 0;
}

int srv_tenant_by_name(srv *s, cfdb_bytes name, cfdb_arena *a, srv_tenant *out)
{
    cfdb_bytes begin = CFDB_BYTES_LIT(TENANT_MAP_PREFIX);
    cfdb_bytes end = CFDB_BYTES_LIT("\xff/tenant/map0");
    cfdb_mvcc_iter it;
    for (cfdb_mvcc_iter_seek_ge(&it, s->store, cfdb_mvcc_latest_version(s->store), begin);
         cfdb_mvcc_iter_valid(&it) && cfdb_bytes_cmp(it.key, end) < 0; cfdb_mvcc_iter_next(&it)) {
        cfdb_bytes copy;
        srv_tenant t;
        if (cfdb_arena_dup_bytes(a, it.value, &copy) || srv_tenant_decode(copy, a, &t))
            continue;
        if (cfdb_bytes_eq(t.name, name)) {
            *out = t;
            return 0;
        }
    }
    return CFDB_ERR_TENANT_NOT_FOUND;
}

size_t srv_tenant_count(srv *s)
{
    size_t n = 0;
    cfdb_bytes end = CFDB_BYTES_LIT("\xff/tenant/map0");
    cfdb_mvcc_iter it;
    for (cfdb_mvcc_iter_seek_ge(&it, s->store, cfdb_mvcc_latest_version(s->store), CFDB_BYTES_LIT(TENANT_MAP_PREFIX));
         cfdb_mvcc_iter_valid(&it) && cfdb_bytes_cmp(it.key, end) < 0; cfdb_mvcc_iter_next(&it))
        n++;
    return n;
}

int srv_tenant_check_read(srv *s, int64_t version, int64_t tenant_id, bool lock_aware, cfdb_arena *a,
                          cfdb_bytes *prefix)
{
    *prefix = (cfdb_bytes){ 0, 0 };
    if (tenant_id == -1)
        return 0;
    srv_tenant t;
    int rc = srv_tenant_at(s, version, tenant_id, a, &t);
    if (rc)
        return rc;
    if (!lock_aware && t.lock_state == TENANT_LOCKED)
        return CFDB_ERR_TENANT_LOCKED;
    uint8_t *p = cfdb_arena_alloc(a, CFDB_TENANT_PREFIX_SIZE);
    if (!p)
        return CFDB_ERR_OPERATION_FAILED;
    cfdb_tenant_prefix(tenant_id, p);
    *prefix = cfdb_bytes_make(p, CFDB_TENANT_PREFIX_SIZE);
    return 0;
}
