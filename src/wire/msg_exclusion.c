/* Exclusion safety messages and the \xff/serverList/, \xff/logs value codecs (formats and
 * citations in exclusion.h). The message descriptions are declarative tables, as
 * in the other msg_*.c files; the two value codecs read with a bounds-checked cursor, so a
 * value cut short or with a count larger than its bytes is 1044, and the arena never holds
 * more than the value's length allows. */
#include <string.h>

#include "error_codes.h"
#include "exclusion.h"
#include "wire_errors.h"
#include "protocol_version.h"
#include "msg_types.h"

FB_TABLE_DEF(address_exclusion, "AddressExclusion", cfdb_address_exclusion,
             FB_FIELD(cfdb_address_exclusion, ip, cfdb_fb_ip_address),
             FB_FIELD(cfdb_address_exclusion, port, fb_i32));
FB_VECTOR_DEF(address_exclusion_vec, "vector<AddressExclusion>", address_exclusion);
FB_TABLE_DEF(exclusion_safety_check_request, "ExclusionSafetyCheckRequest", cfdb_exclusion_safety_check_request,
             FB_FIELD(cfdb_exclusion_safety_check_request, exclusions, address_exclusion_vec),
             FB_FIELD(cfdb_exclusion_safety_check_request, reply, cfdb_fb_reply_promise));
const fb_message cfdb_msg_exclusion_safety_check_request = { "ExclusionSafetyCheckRequest", 13852702, FB_MSG_REQUEST,
                                                             &exclusion_safety_check_request };
FB_TABLE_DEF(exclusion_safety_check_reply, "ExclusionSafetyCheckReply", cfdb_exclusion_safety_check_reply,
             FB_FIELD(cfdb_exclusion_safety_check_reply, safe, fb_bool));
const fb_message cfdb_msg_exclusion_safety_check_reply = { "ErrorOr<ExclusionSafetyCheckReply>", CFDB_REPLY_FILE_ID(11),
                                                           FB_MSG_REPLY, &exclusion_safety_check_reply };

#define PV_IPV6 UINT64_C(0x0FDB00B061030000)
#define PV_HOSTNAME_FLAG UINT64_C(0x0FDB00B071010000)     /* hasNetworkAddressHostnameFlag */
#define PV_INTERFACE_READINESS UINT64_C(0x0FDB00B071010000) /* hasStorageInterfaceReadiness */

bool cfdb_exclusion_matches(const cfdb_address_exclusion *e, const cfdb_network_address *addr)
{
    if (e->ip.tag != addr->ip.tag)
        return false;
    if (e->ip.tag == 2) {
        if (e->ip.v6.count != 16 || addr->ip.v6.count != 16 || memcmp(e->ip.v6.items, addr->ip.v6.items, 16) != 0)
            return false;
    } else if (e->ip.v4 != addr->ip.v4) {
        return false;
    }
    return e->port == 0 || e->port == (int32_t)addr->port;
}

int cfdb_server_list_value_decode(cfdb_bytes v, cfdb_arena *a, cfdb_storage_server_interface *out)
{
    memset(out, 0, sizeof *out);
    if (v.len <= 8)
        return CFDB_ERR_SERIALIZATION_FAILED;
    uint64_t pv;
    memcpy(&pv, v.ptr, 8);
    pv &= CFDB_PROTOCOL_VERSION_FLAG_MASK;
    if (pv < PV_INTERFACE_READINESS || pv >= CFDB_PROTOCOL_MIN_INVALID)
        return CFDB_ERR_SERIALIZATION_FAILED;
    int rc = fb_decode(&cfdb_msg_storage_server_interface, v.ptr + 8, v.len - 8, out, NULL, a);
    return rc == CFDB_WIRE_OUT_OF_MEMORY ? rc : rc ? CFDB_ERR_SERIALIZATION_FAILED : 0;
}

/* ---- \xff/logs ---- */

typedef struct cursor {
    const uint8_t *p, *end;
    bool bad;
} cursor;

static const uint8_t *take(cursor *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        return NULL;
    }
    const uint8_t *at = c->p;
    c->p += n;
    return at;
}

static void get(cursor *c, void *dst, size_t n)
{
    const uint8_t *at = take(c, n);
    if (at)
        memcpy(dst, at, n);
    else
        memset(dst, 0, n);
}

static void get_address(cursor *c, uint64_t pv, cfdb_network_address *out)
{
    memset(out, 0, sizeof *out);
    uint8_t v6 = 0;
    if (pv >= PV_IPV6)
        get(c, &v6, 1);
    if (v6 > 1) {
        c->bad = true; /* a bool */
        return;
    }
    if (v6) {
        const uint8_t *at = take(c, 16);
        out->ip.tag = 2;
        out->ip.v6.items = (uint8_t *)at;
        out->ip.v6.count = at ? 16 : 0;
    } else {
        out->ip.tag = 1;
        get(c, &out->ip.v4, 4);
    }
    get(c, &out->port, 2);
    get(c, &out->flags, 2);
    if (pv >= PV_HOSTNAME_FLAG) {
        uint8_t h = 0;
        get(c, &h, 1);
        out->fromHostname = h != 0;
    }
}

/* The smallest encoded entry: UID, bool, IPv4, port, flags. */
#define LOG_ENTRY_MIN (16 + 1 + 4 + 2 + 2)

static cfdb_log_entry *get_logs(cursor *c, uint64_t pv, cfdb_arena *a, uint32_t *n)
{
    int32_t count = 0;
    get(c, &count, 4);
    *n = 0;
    if (c->bad || count < 0 || (size_t)count > (size_t)(c->end - c->p) / LOG_ENTRY_MIN) {
        c->bad = true;
        return NULL;
    }
    if (count == 0)
        return NULL;
    cfdb_log_entry *e = cfdb_arena_alloc(a, (size_t)count * sizeof *e);
    if (!e) {
        c->bad = true;
        return NULL;
    }
    for (int32_t i = 0; i < count && !c->bad; i++) {
        get(c, &e[i].id.first, 8);
        get(c, &e[i].id.second, 8);
        get_address(c, pv, &e[i].address);
    }
    *n = (uint32_t)count;
    return e;
}

int cfdb_logs_value_decode(cfdb_bytes v, cfdb_arena *a, cfdb_logs_value *out)
{
    memset(out, 0, sizeof *out);
    cursor c = { v.ptr, v.ptr + v.len, false };
    uint64_t pv = 0;
    get(&c, &pv, 8);
    pv &= CFDB_PROTOCOL_VERSION_FLAG_MASK;
    if (c.bad || pv < CFDB_PROTOCOL_MIN_VALID || pv >= CFDB_PROTOCOL_MIN_INVALID) /* IncludeVersion */
        return CFDB_ERR_SERIALIZATION_FAILED;
    out->logs = get_logs(&c, pv, a, &out->nlogs);
    out->old_logs = get_logs(&c, pv, a, &out->nold);
    if (c.bad) {
        memset(out, 0, sizeof *out);
        return CFDB_ERR_SERIALIZATION_FAILED;
    }
    return 0;
}

static size_t address_size(uint64_t pv, const cfdb_network_address *ad)
{
    return (pv >= PV_IPV6 ? 1u : 0u) + (ad->ip.tag == 2 ? 16u : 4u) + 4u + (pv >= PV_HOSTNAME_FLAG ? 1u : 0u);
}

static uint8_t *put_logs(uint8_t *p, uint64_t pv, const cfdb_log_entry *e, uint32_t n)
{
    int32_t count = (int32_t)n;
    memcpy(p, &count, 4);
    p += 4;
    for (uint32_t i = 0; i < n; i++) {
        const cfdb_network_address *ad = &e[i].address;
        memcpy(p, &e[i].id.first, 8);
        memcpy(p + 8, &e[i].id.second, 8);
        p += 16;
        bool v6 = ad->ip.tag == 2;
        if (pv >= PV_IPV6)
            *p++ = v6;
        if (v6) {
            memcpy(p, ad->ip.v6.items, 16);
            p += 16;
        } else {
            memcpy(p, &ad->ip.v4, 4);
            p += 4;
        }
        memcpy(p, &ad->port, 2);
        memcpy(p + 2, &ad->flags, 2);
        p += 4;
        if (pv >= PV_HOSTNAME_FLAG)
            *p++ = ad->fromHostname;
    }
    return p;
}

int cfdb_logs_value_encode(uint64_t pv, const cfdb_logs_value *in, cfdb_arena *a, cfdb_bytes *out)
{
    uint64_t bare = pv & CFDB_PROTOCOL_VERSION_FLAG_MASK;
    size_t n = 8 + 4 + 4;
    for (uint32_t i = 0; i < in->nlogs; i++) {
        if (in->logs[i].address.ip.tag == 2 && (bare < PV_IPV6 || in->logs[i].address.ip.v6.count != 16))
            return CFDB_ERR_SERIALIZATION_FAILED;
        n += 16 + address_size(bare, &in->logs[i].address);
    }
    for (uint32_t i = 0; i < in->nold; i++) {
        if (in->old_logs[i].address.ip.tag == 2 && (bare < PV_IPV6 || in->old_logs[i].address.ip.v6.count != 16))
            return CFDB_ERR_SERIALIZATION_FAILED;
        n += 16 + address_size(bare, &in->old_logs[i].address);
    }
    uint8_t *buf = cfdb_arena_alloc(a, n);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(buf, &pv, 8);
    uint8_t *p = put_logs(buf + 8, bare, in->logs, in->nlogs);
    p = put_logs(p, bare, in->old_logs, in->nold);
    *out = cfdb_bytes_make(buf, (size_t)(p - buf));
    return 0;
}
