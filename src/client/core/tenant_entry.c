/* TenantMapEntry and TenantGroupEntry values, their JSON, and the two tuple element kinds the
 * tenant metadata keys use (tenant_entry.h has the layouts). The flat-buffer bodies
 * go through the generic ObjectSerializer (cfdb/fb.h) from the member list of
 * TenantMapEntry::serialize; the 8-byte protocol version in front is IncludeVersion's. */
#include <stdio.h>
#include <string.h>

#include "error_codes.h"
#include "fb.h"
#include "messages.h"
#include "protocol_version.h"
#include "json_writer.h"
#include "tenant_entry.h"

int tenant_entry_encode(const tenant_entry *e, cfdb_arena *a, cfdb_bytes *out)
{
    cfdb_tenant_map_entry f = { 0 };
    f.id = e->id;
    f.tenantName = e->name;
    f.tenantLockState = e->lock_state;
    f.tenantLockId.present = e->has_lock_id;
    f.tenantLockId.value = e->lock_id;
    f.tenantGroup.present = e->has_group;
    f.tenantGroup.value = e->group;
    f.configurationSequenceNum = e->config_seq;
    return fb_encode_versioned(&cfdb_msg_tenant_map_entry, &f, a, out);
}

int tenant_group_entry_encode(cfdb_arena *a, cfdb_bytes *out)
{
    cfdb_tenant_group_entry g = { 0 };
    return fb_encode_versioned(&cfdb_msg_tenant_group_entry, &g, a, out);
}

int tenant_entry_decode(cfdb_bytes value, cfdb_arena *a, tenant_entry *out)
{
    cfdb_tenant_map_entry f = { 0 };
    int rc = fb_decode_versioned(&cfdb_msg_tenant_map_entry, value, &f, NULL, a);
    if (rc)
        return rc;
    *out = (tenant_entry){ .id = f.id,
                           .name = f.tenantName,
                           .lock_state = f.tenantLockState,
                           .has_lock_id = f.tenantLockId.present,
                           .lock_id = f.tenantLockId.value,
                           .has_group = f.tenantGroup.present,
                           .group = f.tenantGroup.value,
                           .config_seq = f.configurationSequenceNum };
    return 0;
}

/* ---- JSON ---- */

static void base64(cfdb_bytes b, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < b.len; i += 3) {
        uint32_t v = (uint32_t)b.ptr[i] << 16;
        size_t k = b.len - i;
        if (k > 1)
            v |= (uint32_t)b.ptr[i + 1] << 8;
        if (k > 2)
            v |= b.ptr[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = k > 1 ? tab[(v >> 6) & 63] : '=';
        out[o++] = k > 2 ? tab[v & 63] : '=';
    }
    out[o] = 0;
}

/* flow's printable(): printable ASCII as is, a backslash doubled, other bytes \xNN */
static void printable(cfdb_bytes b, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < b.len; i++) {
        uint8_t c = b.ptr[i];
        if (c == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
        } else if (c >= 32 && c < 127) {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
        }
    }
    out[o] = 0;
}

static int binary_json(cfdb_json *j, const char *key, cfdb_bytes b, cfdb_arena *a)
{
    char *b64 = cfdb_arena_alloc(a, b.len / 3 * 4 + 8);
    char *pr = cfdb_arena_alloc(a, b.len * 4 + 1);
    if (!b64 || !pr)
        return CFDB_ERR_UNKNOWN_ERROR;
    base64(b, b64);
    printable(b, pr);
    cfdb_json_key(j, key);
    cfdb_json_begin_object(j);
    cfdb_json_key(j, "base64");
    cfdb_json_string(j, b64);
    cfdb_json_key(j, "printable");
    cfdb_json_string(j, pr);
    cfdb_json_end_object(j);
    return 0;
}

int tenant_entry_json(const tenant_entry *e, cfdb_arena *a, cfdb_bytes *out)
{
    static const char *const states[] = { "unlocked", "read only", "locked" };
    uint8_t prefix[8];
    cfdb_tenant_prefix(e->id, prefix);
    cfdb_json j;
    cfdb_json_init(&j);
    int rc = 0;
    /* json_spirit's mObject is a std::map: members in key order */
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "id");
    cfdb_json_int(&j, e->id);
    if (e->has_lock_id) {
        char buf[33];
        cfdb_json_key(&j, "lock_id");
        cfdb_json_string(&j, cfdb_uid_format(e->lock_id, buf));
    }
    cfdb_json_key(&j, "lock_state");
    cfdb_json_string(&j, e->lock_state <= TENANT_LOCKED ? states[e->lock_state] : "unknown");
    rc = binary_json(&j, "name", e->name, a);
    if (!rc)
        rc = binary_json(&j, "prefix", cfdb_bytes_make(prefix, 8), a);
    if (!rc && e->has_group)
        rc = binary_json(&j, "tenant_group", e->group, a);
    cfdb_json_end_object(&j);
    if (!rc && j.failed)
        rc = CFDB_ERR_UNKNOWN_ERROR;
    if (!rc) {
        void *p = cfdb_arena_dup(a, j.buf, j.len);
        if (!p)
            rc = CFDB_ERR_UNKNOWN_ERROR;
        else
            *out = cfdb_bytes_make(p, j.len);
    }
    cfdb_json_free(&j);
    return rc;
}

/* ---- tuple elements ---- */

size_t tuple_put_bytes(uint8_t *buf, cfdb_bytes b)
{
    size_t o = 0;
    buf[o++] = 0x01;
    for (size_t i = 0; i < b.len; i++) {
        buf[o++] = b.ptr[i];
        if (b.ptr[i] == 0)
            buf[o++] = 0xff;
    }
    buf[o++] = 0x00;
    return o;
}

size_t tuple_put_int(uint8_t *buf, int64_t v)
{
    if (v == 0) {
        buf[0] = 0x14;
        return 1;
    }
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int n = 0;
    for (uint64_t m = mag; m; m >>= 8)
        n++;
    buf[0] = (uint8_t)(v < 0 ? 0x14 - n : 0x14 + n);
    uint64_t enc = v < 0 ? ~mag : mag; /* negatives: one's complement of the magnitude */
    for (int i = 0; i < n; i++)
        buf[1 + i] = (uint8_t)(enc >> (8 * (n - 1 - i)));
    return (size_t)n + 1;
}

int tuple_get_int(cfdb_bytes in, size_t *pos, int64_t *out)
{
    if (*pos >= in.len)
        return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
    int code = in.ptr[*pos];
    if (code < 0x0c || code > 0x1c)
        return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
    int n = code >= 0x14 ? code - 0x14 : 0x14 - code;
    if (*pos + 1 + (size_t)n > in.len)
        return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | in.ptr[*pos + 1 + i];
    if (code < 0x14) {
        uint64_t mask = n == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * n)) - 1);
        v = (~v) & mask;
        *out = (int64_t)((uint64_t)0 - v);
    } else {
        *out = (int64_t)v;
    }
    *pos += 1 + (size_t)n;
    return 0;
}

int tuple_get_bytes(cfdb_bytes in, size_t *pos, cfdb_arena *a, cfdb_bytes *out)
{
    if (*pos >= in.len || (in.ptr[*pos] != 0x01 && in.ptr[*pos] != 0x02))
        return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
    uint8_t *buf = cfdb_arena_alloc(a, in.len - *pos + 1);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR;
    size_t o = 0, i = *pos + 1;
    for (;;) {
        if (i >= in.len)
            return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
        if (in.ptr[i] == 0) {
            if (i + 1 < in.len && in.ptr[i + 1] == 0xff) {
                buf[o++] = 0;
                i += 2;
                continue;
            }
            i++;
            break;
        }
        buf[o++] = in.ptr[i++];
    }
    *pos = i;
    *out = cfdb_bytes_make(buf, o);
    return 0;
}
