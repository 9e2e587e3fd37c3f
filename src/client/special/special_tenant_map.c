/* \xff\xff/management/tenant/ (TenantRangeImpl, fdbclient/TenantSpecialKeys.actor.h and
 * TenantManagement.actor.h at 7.3.77), computed on a management worker:
 *   map/<name>        read: the tenants in a name range, values TenantMapEntry::toJson;
 *                     set: create (an existing tenant is left as it is), clear: delete
 *                     (a tenant with data: 2133; an absent one: nothing)
 *   configure/<tuple(name, param)>  set / clear a tenant's parameter ("tenant_group")
 *   rename/<old>      value: the new name
 * Every commit first checks the cluster: a metacluster member 2161, tenant mode disabled 2136.
 * New tenants take ids after \xff/tenant/lastId (or idPrefix << 48), one per created name in
 * name order; their prefix range must be empty (2135). Names beginning with \xff: 2134
 * (groups: 2139). Conflicting renames and malformed configure keys: 2117 with
 * \xff\xff/error_message set, as libfdb_c does. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "mutation.h"
#include "special_keys_internal.h"
#include "tenant_entry.h"

#define SK_TENANT SK_MGMT "tenant/"
#define SK_TENANT_MAP SK_TENANT "map/"
#define SK_TENANT_CONFIGURE SK_TENANT "configure/"
#define SK_TENANT_RENAME SK_TENANT "rename/"
#define MAX_TENANTS_PER_CLUSTER 1000000
#define TOO_MANY 1000000

static cfdb_bytes after_prefix(cfdb_bytes k, const char *prefix)
{
    size_t n = strlen(prefix);
    return cfdb_bytes_make(k.ptr + n, k.len - n);
}

/* prefix + tuple(name) */
static cfdb_bytes name_key(cfdb_arena *a, const char *prefix, cfdb_bytes name)
{
    size_t n = strlen(prefix);
    uint8_t *p = cfdb_arena_alloc(a, n + 2 * name.len + 2);
    if (!p)
        return cfdb_bytes_make(NULL, 0);
    memcpy(p, prefix, n);
    return cfdb_bytes_make(p, n + tuple_put_bytes(p + n, name));
}

static cfdb_bytes id_key(cfdb_arena *a, int64_t id)
{
    uint8_t pre[8];
    cfdb_tenant_prefix(id, pre);
    return sk_key(a, TENANT_MAP_PREFIX, cfdb_bytes_make(pre, 8));
}

static cfdb_bytes tuple_int_value(cfdb_arena *a, int64_t v)
{
    uint8_t *p = cfdb_arena_alloc(a, 9);
    return p ? cfdb_bytes_make(p, tuple_put_int(p, v)) : cfdb_bytes_make(NULL, 0);
}

#define NOMEM_IF(x)                        \
    do {                                   \
        if ((x).ptr == NULL)               \
            return CFDB_ERR_UNKNOWN_ERROR; \
    } while (0)

/* ---- TenantMetadata reads ---- */

static int name_to_id(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes name, bool *found, int64_t *id)
{
    cfdb_bytes k = name_key(a, TENANT_NAME_INDEX_PREFIX, name), v;
    NOMEM_IF(k);
    int rc = skw_get(tx, k, a, found, &v);
    size_t pos = 0;
    if (!rc && *found)
        rc = tuple_get_int(v, &pos, id);
    return rc;
}

static int entry_by_id(cfdb_txn *tx, cfdb_arena *a, int64_t id, bool *found, tenant_entry *e)
{
    cfdb_bytes k = id_key(a, id), v;
    NOMEM_IF(k);
    int rc = skw_get(tx, k, a, found, &v);
    if (!rc && *found)
        rc = tenant_entry_decode(v, a, e);
    return rc;
}

static int entry_by_name(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes name, bool *found, tenant_entry *e)
{
    int64_t id = 0;
    int rc = name_to_id(tx, a, name, found, &id);
    if (!rc && *found)
        rc = entry_by_id(tx, a, id, found, e);
    return rc;
}

/* TenantAPI::checkTenantMode(tr, STANDALONE) */
static int check_tenant_mode(cfdb_txn *tx, cfdb_arena *a)
{
    bool has_mode = false, registered = false;
    cfdb_bytes mode, reg;
    int rc = skw_get(tx, CFDB_BYTES_LIT(TENANT_MODE_KEY), a, &has_mode, &mode);
    if (!rc)
        rc = skw_get(tx, CFDB_BYTES_LIT(METACLUSTER_REGISTRATION_KEY), a, &registered, &reg);
    if (rc)
        return rc;
    if (registered)
        return CFDB_ERR_INVALID_METACLUSTER_OPERATION;
    int m = 0;
    if (has_mode) { /* atoi: leading digits, anything else 0 */
        char buf[16] = { 0 };
        memcpy(buf, mode.ptr, mode.len < 15 ? mode.len : 15);
        m = atoi(buf);
        if (m < 0 || m >= 3)
            m = 0;
    }
    return m == 0 ? CFDB_ERR_TENANTS_DISABLED : 0;
}

/* ---- the read ---- */

int sk_tenant_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    /* only map/ answers; names from begin (or "") to end (or \xff) */
    cfdb_bytes mb = CFDB_BYTES_LIT(SK_TENANT_MAP), me = CFDB_BYTES_LIT(SK_TENANT "map0");
    if (cfdb_bytes_cmp(end, mb) <= 0 || cfdb_bytes_cmp(begin, me) >= 0)
        return 0;
    cfdb_bytes from = cfdb_bytes_cmp(begin, mb) > 0 ? after_prefix(begin, SK_TENANT_MAP) : CFDB_BYTES_LIT("");
    cfdb_bytes to = sk_has_prefix(end, SK_TENANT_MAP) ? after_prefix(end, SK_TENANT_MAP) : CFDB_BYTES_LIT("\xff");
    cfdb_bytes kb = name_key(a, TENANT_NAME_INDEX_PREFIX, from), ke = name_key(a, TENANT_NAME_INDEX_PREFIX, to);
    NOMEM_IF(kb);
    NOMEM_IF(ke);
    sk_rows names;
    int rc = skw_range(tx, kb, ke, 0, a, &names);
    for (int i = 0; i < names.n && !rc; i++) {
        cfdb_bytes v = cfdb_bytes_make(names.items[i].value, (size_t)names.items[i].value_length);
        size_t pos = 0;
        int64_t id;
        bool found = false;
        tenant_entry e;
        cfdb_bytes json;
        rc = tuple_get_int(v, &pos, &id);
        if (!rc)
            rc = entry_by_id(tx, a, id, &found, &e);
        if (!rc && !found)
            rc = CFDB_ERR_TENANT_NOT_FOUND; /* getTenantTransaction */
        if (!rc)
            rc = tenant_entry_json(&e, a, &json);
        if (!rc) {
            cfdb_bytes key = sk_key(a, SK_TENANT_MAP, e.name);
            NOMEM_IF(key);
            rc = sk_rows_push(out, a, key, json);
        }
    }
    return rc;
}

/* ---- commit pieces ---- */

static int touch_last_modification(cfdb_txn *tx)
{
    /* Versionstamp() (version -1, batch 0) then the offset 0: the stamp replaces it */
    static const uint8_t v[14] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0 };
    return skw_atomic(tx, CFDB_BYTES_LIT(TENANT_LAST_MODIFICATION_KEY), cfdb_bytes_make(v, sizeof v),
                      CFDB_MUT_SET_VERSIONSTAMPED_VALUE);
}

static int add_count(cfdb_txn *tx, int64_t delta)
{
    uint8_t v[8];
    for (int i = 0; i < 8; i++)
        v[i] = (uint8_t)((uint64_t)delta >> (8 * i));
    return skw_atomic(tx, CFDB_BYTES_LIT(TENANT_COUNT_KEY), cfdb_bytes_make(v, 8), CFDB_MUT_ADD_VALUE);
}

static cfdb_bytes group_index_key(cfdb_arena *a, cfdb_bytes group, int64_t id)
{
    size_t n = strlen(TENANT_GROUP_INDEX_PREFIX);
    uint8_t *p = cfdb_arena_alloc(a, n + 2 * group.len + 2 + 9);
    if (!p)
        return cfdb_bytes_make(NULL, 0);
    memcpy(p, TENANT_GROUP_INDEX_PREFIX, n);
    size_t o = n + tuple_put_bytes(p + n, group);
    o += tuple_put_int(p + o, id);
    return cfdb_bytes_make(p, o);
}

/* Members of a group's index (up to limit rows). */
static int group_members(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes group, int limit, sk_rows *out)
{
    cfdb_bytes b = name_key(a, TENANT_GROUP_INDEX_PREFIX, group);
    NOMEM_IF(b);
    /* tuple(group) .. tuple(keyAfter(group)) */
    uint8_t *after = cfdb_arena_alloc(a, group.len + 1);
    if (!after)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(after, group.ptr, group.len);
    after[group.len] = 0;
    cfdb_bytes e = name_key(a, TENANT_GROUP_INDEX_PREFIX, cfdb_bytes_make(after, group.len + 1));
    NOMEM_IF(e);
    return skw_range(tx, b, e, limit, a, out);
}

/* The tenant id of a group index row (false when the key does not decode). */
static bool member_id(const cfdb_fdb_kv *kv, cfdb_arena *a, int64_t *id)
{
    cfdb_bytes k = cfdb_bytes_make(kv->key, (size_t)kv->key_length);
    size_t pos = strlen(TENANT_GROUP_INDEX_PREFIX);
    cfdb_bytes g;
    return tuple_get_bytes(k, &pos, a, &g) == 0 && tuple_get_int(k, &pos, id) == 0;
}

static int ensure_group(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes group)
{
    cfdb_bytes k = sk_key(a, TENANT_GROUP_MAP_PREFIX, group), v;
    NOMEM_IF(k);
    bool found = false;
    int rc = skw_get(tx, k, a, &found, &v);
    if (!rc && !found && !(rc = tenant_group_entry_encode(a, &v)))
        rc = skw_set(tx, k, v);
    return rc;
}

/* After id left group: erase the group when no other member is left. */
static int drop_group_if_empty(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes group, int64_t id)
{
    sk_rows m;
    int rc = group_members(tx, a, group, 2, &m);
    int64_t only = 0;
    if (!rc && (m.n == 0 || (m.n == 1 && member_id(&m.items[0], a, &only) && only == id))) {
        cfdb_bytes k = sk_key(a, TENANT_GROUP_MAP_PREFIX, group);
        NOMEM_IF(k);
        uint8_t *end = cfdb_arena_alloc(a, k.len + 1);
        if (!end)
            return CFDB_ERR_UNKNOWN_ERROR;
        memcpy(end, k.ptr, k.len);
        end[k.len] = 0;
        rc = skw_clear(tx, k, cfdb_bytes_make(end, k.len + 1));
    }
    return rc;
}

static int clear_key(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes k)
{
    uint8_t *end = cfdb_arena_alloc(a, k.len + 1);
    if (!end)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(end, k.ptr, k.len);
    end[k.len] = 0;
    return skw_clear(tx, k, cfdb_bytes_make(end, k.len + 1));
}

/* Whether the tenant's prefix range holds any key. */
static int prefix_has_data(cfdb_txn *tx, cfdb_arena *a, int64_t id, bool *any)
{
    uint8_t *b = cfdb_arena_alloc(a, 16);
    if (!b)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_tenant_prefix(id, b);
    memcpy(b + 8, b, 8);
    /* strinc(prefix) */
    int i = 15;
    while (i >= 8 && b[i] == 0xff)
        i--;
    cfdb_bytes end;
    if (i < 8) {
        end = CFDB_BYTES_LIT("\xff");
    } else {
        b[i]++;
        end = cfdb_bytes_make(b + 8, (size_t)(i - 8 + 1));
    }
    sk_rows r;
    int rc = skw_range(tx, cfdb_bytes_make(b, 8), end, 1, a, &r);
    *any = !rc && r.n > 0;
    return rc;
}

/* TenantMapEntry::configure */
static int configure_entry(tenant_entry *e, cfdb_bytes param, const sk_write *w)
{
    if (!cfdb_bytes_eq(param, CFDB_BYTES_LIT("tenant_group")))
        return CFDB_ERR_INVALID_TENANT_CONFIGURATION;
    e->has_group = w->has_value;
    e->group = w->has_value ? w->value : cfdb_bytes_make(NULL, 0);
    return 0;
}

typedef struct config_op {
    cfdb_bytes name, param;
    const sk_write *w;
    bool used;
} config_op;

static int create_one(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes name, int64_t id, config_op *cfg, int ncfg)
{
    tenant_entry e = { .id = id, .name = name };
    for (int i = 0; i < ncfg; i++)
        if (!cfg[i].used && cfdb_bytes_eq(cfg[i].name, name)) {
            cfg[i].used = true;
            int rc = configure_entry(&e, cfg[i].param, cfg[i].w);
            if (rc)
                return rc;
        }
    if (name.len && name.ptr[0] == 0xff)
        return CFDB_ERR_INVALID_TENANT_NAME;
    if (e.has_group && e.group.len && e.group.ptr[0] == 0xff)
        return CFDB_ERR_INVALID_TENANT_GROUP_NAME;
    bool exists = false;
    tenant_entry old;
    int rc = entry_by_name(tx, a, name, &exists, &old);
    if (!rc)
        rc = check_tenant_mode(tx, a);
    if (rc || exists)
        return rc; /* an existing tenant is left as it is */
    bool any = false;
    if ((rc = prefix_has_data(tx, a, id, &any)))
        return rc;
    if (any)
        return CFDB_ERR_TENANT_PREFIX_ALLOCATOR_CONFLICT;
    cfdb_bytes v, k = id_key(a, id), nk = name_key(a, TENANT_NAME_INDEX_PREFIX, name), iv = tuple_int_value(a, id);
    NOMEM_IF(k);
    NOMEM_IF(nk);
    NOMEM_IF(iv);
    if ((rc = tenant_entry_encode(&e, a, &v)) || (rc = skw_set(tx, k, v)) || (rc = skw_set(tx, nk, iv)) ||
        (rc = touch_last_modification(tx)))
        return rc;
    if (e.has_group) {
        cfdb_bytes gk = group_index_key(a, e.group, id);
        NOMEM_IF(gk);
        if ((rc = skw_set(tx, gk, CFDB_BYTES_LIT(""))) || (rc = ensure_group(tx, a, e.group)))
            return rc;
    }
    return add_count(tx, 1);
}

static int delete_one(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes name)
{
    bool found = false;
    tenant_entry e;
    int rc = entry_by_name(tx, a, name, &found, &e);
    if (rc || !found)
        return rc;
    if ((rc = check_tenant_mode(tx, a)))
        return rc;
    bool any = false;
    if ((rc = prefix_has_data(tx, a, e.id, &any)))
        return rc;
    if (any)
        return CFDB_ERR_TENANT_NOT_EMPTY;
    cfdb_bytes k = id_key(a, e.id), nk = name_key(a, TENANT_NAME_INDEX_PREFIX, e.name);
    NOMEM_IF(k);
    NOMEM_IF(nk);
    if ((rc = clear_key(tx, a, k)) || (rc = clear_key(tx, a, nk)) || (rc = add_count(tx, -1)) ||
        (rc = touch_last_modification(tx)))
        return rc;
    if (e.has_group) {
        cfdb_bytes gk = group_index_key(a, e.group, e.id);
        NOMEM_IF(gk);
        if ((rc = clear_key(tx, a, gk)) || (rc = drop_group_if_empty(tx, a, e.group, e.id)))
            return rc;
    }
    return 0;
}

static int configure_existing(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes name, config_op *cfg, int ncfg)
{
    bool found = false;
    tenant_entry old, e;
    int rc = entry_by_name(tx, a, name, &found, &old);
    if (rc)
        return rc;
    if (!found)
        return CFDB_ERR_TENANT_NOT_FOUND;
    e = old;
    for (int i = 0; i < ncfg; i++)
        if (!cfg[i].used && cfdb_bytes_eq(cfg[i].name, name)) {
            cfg[i].used = true;
            if ((rc = configure_entry(&e, cfg[i].param, cfg[i].w)))
                return rc;
        }
    cfdb_bytes k = id_key(a, e.id), v;
    NOMEM_IF(k);
    if ((rc = tenant_entry_encode(&e, a, &v)) || (rc = skw_set(tx, k, v)) || (rc = touch_last_modification(tx)))
        return rc;
    bool changed = old.has_group != e.has_group || (old.has_group && !cfdb_bytes_eq(old.group, e.group));
    if (!changed)
        return 0;
    if (e.has_group && e.group.len && e.group.ptr[0] == 0xff)
        return CFDB_ERR_INVALID_TENANT_GROUP_NAME;
    if (old.has_group) {
        cfdb_bytes gk = group_index_key(a, old.group, e.id);
        NOMEM_IF(gk);
        if ((rc = clear_key(tx, a, gk)) || (rc = drop_group_if_empty(tx, a, old.group, e.id)))
            return rc;
    }
    if (e.has_group) {
        cfdb_bytes gk = group_index_key(a, e.group, e.id);
        NOMEM_IF(gk);
        if ((rc = ensure_group(tx, a, e.group)) || (rc = skw_set(tx, gk, CFDB_BYTES_LIT(""))))
            return rc;
    }
    return 0;
}

static int rename_one(cfdb_txn *tx, cfdb_arena *a, cfdb_bytes from, cfdb_bytes to)
{
    int rc = check_tenant_mode(tx, a);
    bool found = false, taken = false;
    int64_t id = 0, other = 0;
    if (!rc)
        rc = name_to_id(tx, a, from, &found, &id);
    if (!rc && !found)
        rc = CFDB_ERR_TENANT_NOT_FOUND;
    tenant_entry e;
    if (!rc)
        rc = entry_by_id(tx, a, id, &found, &e);
    if (!rc && (!found || !cfdb_bytes_eq(e.name, from)))
        rc = CFDB_ERR_TENANT_NOT_FOUND;
    if (!rc)
        rc = name_to_id(tx, a, to, &taken, &other);
    if (!rc && taken)
        rc = CFDB_ERR_TENANT_ALREADY_EXISTS;
    if (rc)
        return rc;
    e.name = to;
    cfdb_bytes k = id_key(a, id), v, nk = name_key(a, TENANT_NAME_INDEX_PREFIX, to),
               ok = name_key(a, TENANT_NAME_INDEX_PREFIX, from), iv = tuple_int_value(a, id);
    NOMEM_IF(k);
    NOMEM_IF(nk);
    NOMEM_IF(ok);
    NOMEM_IF(iv);
    if ((rc = tenant_entry_encode(&e, a, &v)) || (rc = skw_set(tx, k, v)) || (rc = skw_set(tx, nk, iv)) ||
        (rc = clear_key(tx, a, ok)))
        return rc;
    return touch_last_modification(tx);
}

static int by_name(const void *x, const void *y)
{
    return cfdb_bytes_cmp(*(const cfdb_bytes *)x, *(const cfdb_bytes *)y);
}

int sk_tenant_commit(cfdb_txn *tx, cfdb_arena *a)
{
    sk_entries w;
    int rc = sk_collect(tx, CFDB_BYTES_LIT(SK_TENANT), CFDB_BYTES_LIT(SK_MGMT "tenant0"), a, &w);
    if (rc)
        return rc;
    config_op *cfg = cfdb_arena_alloc(a, (w.n + 1) * sizeof *cfg);
    cfdb_bytes *creates = cfdb_arena_alloc(a, (w.n + 1) * sizeof *creates);
    cfdb_bytes *renames = cfdb_arena_alloc(a, (2 * w.n + 1) * sizeof *renames);
    if (!cfg || !creates || !renames)
        return CFDB_ERR_UNKNOWN_ERROR;
    int ncfg = 0, ncreate = 0, nrename = 0;
    /* parse */
    for (size_t i = 0; i < w.n; i++) {
        const sk_write *e = &w.items[i];
        if (sk_has_prefix(e->begin, SK_TENANT_CONFIGURE) && !sk_has_prefix(e->begin, SK_TENANT_MAP)) {
            cfdb_bytes t = after_prefix(e->begin, SK_TENANT_CONFIGURE);
            size_t pos = 0;
            config_op c = { .w = e };
            if (tuple_get_bytes(t, &pos, a, &c.name) || tuple_get_bytes(t, &pos, a, &c.param) || pos != t.len)
                return sk_api_failure(tx, false, "configure tenant", "invalid tenant configuration key");
            cfg[ncfg++] = c;
        } else if (sk_has_prefix(e->begin, SK_TENANT_RENAME)) {
            cfdb_bytes from = after_prefix(e->begin, SK_TENANT_RENAME), to = e->value;
            bool clash = !e->has_value || cfdb_bytes_eq(from, to);
            for (int k = 0; k < nrename && !clash; k++)
                clash = cfdb_bytes_eq(renames[k], from) || cfdb_bytes_eq(renames[k], to);
            if (clash)
                return sk_api_failure(tx, false, "rename tenant", "tenant rename conflict");
            renames[nrename++] = from;
            renames[nrename++] = to;
        }
    }
    if ((rc = check_tenant_mode(tx, a)))
        return rc;
    /* map/ mutations: creates are gathered, deletes run now */
    for (size_t i = 0; i < w.n && !rc; i++) {
        const sk_write *e = &w.items[i];
        if (cfdb_bytes_cmp(e->end, CFDB_BYTES_LIT(SK_TENANT_MAP)) <= 0 ||
            cfdb_bytes_cmp(e->begin, CFDB_BYTES_LIT(SK_TENANT "map0")) >= 0)
            continue;
        cfdb_bytes nb = sk_has_prefix(e->begin, SK_TENANT_MAP) ? after_prefix(e->begin, SK_TENANT_MAP) : CFDB_BYTES_LIT("");
        cfdb_bytes ne = sk_has_prefix(e->end, SK_TENANT_MAP) ? after_prefix(e->end, SK_TENANT_MAP) : CFDB_BYTES_LIT("\xff");
        for (int k = 0; k < nrename; k++)
            if (cfdb_bytes_cmp(renames[k], nb) >= 0 && cfdb_bytes_cmp(renames[k], ne) < 0)
                return sk_api_failure(tx, false, "rename tenant", "tenant rename conflict");
        bool single = ne.len == nb.len + 1 && ne.ptr[nb.len] == 0 && memcmp(ne.ptr, nb.ptr, nb.len) == 0;
        if (e->has_value) {
            creates[ncreate++] = nb;
        } else if (single) {
            rc = delete_one(tx, a, nb);
            for (int k = 0; k < ncfg; k++) /* configuration of a deleted tenant is dropped */
                if (cfdb_bytes_eq(cfg[k].name, nb))
                    cfg[k].used = true;
        } else {
            cfdb_bytes kb = name_key(a, TENANT_NAME_INDEX_PREFIX, nb), ke = name_key(a, TENANT_NAME_INDEX_PREFIX, ne);
            NOMEM_IF(kb);
            NOMEM_IF(ke);
            sk_rows names;
            if ((rc = skw_range(tx, kb, ke, TOO_MANY, a, &names)))
                break;
            if (names.n >= TOO_MANY)
                return sk_api_failure(tx, false, "delete tenants", "too many tenants to range delete");
            for (int k = 0; k < names.n && !rc; k++) {
                cfdb_bytes key = cfdb_bytes_make(names.items[k].key, (size_t)names.items[k].key_length), name;
                size_t pos = strlen(TENANT_NAME_INDEX_PREFIX);
                rc = tuple_get_bytes(key, &pos, a, &name);
                if (!rc)
                    rc = delete_one(tx, a, name);
            }
            for (int k = 0; k < ncfg; k++)
                if (cfdb_bytes_cmp(cfg[k].name, nb) >= 0 && cfdb_bytes_cmp(cfg[k].name, ne) < 0)
                    cfg[k].used = true;
        }
    }
    if (rc)
        return rc;
    /* creates: ids after the last one, in name order (std::map) */
    if (ncreate) {
        qsort(creates, (size_t)ncreate, sizeof *creates, by_name);
        int m = 0;
        for (int i = 0; i < ncreate; i++)
            if (!m || !cfdb_bytes_eq(creates[m - 1], creates[i]))
                creates[m++] = creates[i];
        ncreate = m;
        bool has_last = false;
        cfdb_bytes last;
        int64_t id = 0;
        if ((rc = skw_get(tx, CFDB_BYTES_LIT(TENANT_LAST_ID_KEY), a, &has_last, &last)))
            return rc;
        size_t pos = 0;
        if (has_last) {
            rc = tuple_get_int(last, &pos, &id);
        } else {
            bool has_prefix = false;
            cfdb_bytes pv;
            int64_t prefix = 0;
            rc = skw_get(tx, CFDB_BYTES_LIT(TENANT_ID_PREFIX_KEY), a, &has_prefix, &pv);
            if (!rc && has_prefix)
                rc = tuple_get_int(pv, &pos, &prefix);
            id = (int64_t)((uint64_t)prefix << 48);
        }
        for (int i = 0; i < ncreate && !rc; i++) {
            if ((id & 0xFFFFFFFFFFFFLL) + 1 > 0xFFFFFFFFFFFFLL)
                return CFDB_ERR_CLUSTER_NO_CAPACITY;
            id++;
            rc = create_one(tx, a, creates[i], id, cfg, ncfg);
        }
        if (!rc) {
            cfdb_bytes v = tuple_int_value(a, id);
            NOMEM_IF(v);
            rc = skw_set(tx, CFDB_BYTES_LIT(TENANT_LAST_ID_KEY), v);
        }
        if (rc)
            return rc;
    }
    /* configuration changes of existing tenants */
    for (int i = 0; i < ncfg && !rc; i++) {
        if (cfg[i].used)
            continue;
        for (int k = 0; k < nrename; k++)
            if (cfdb_bytes_eq(renames[k], cfg[i].name))
                return sk_api_failure(tx, false, "rename tenant", "tenant rename conflict");
        rc = configure_existing(tx, a, cfg[i].name, cfg, ncfg);
    }
    for (int k = 0; k + 1 < nrename && !rc; k += 2)
        rc = rename_one(tx, a, renames[k], renames[k + 1]);
    return rc;
}
