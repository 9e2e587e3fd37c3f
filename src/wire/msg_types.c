/* Descriptions of the helper types messages are built from, and the special encodings
 * FoundationDB uses for some of them (fdbclient/FDBTypes.h, CommitTransaction.h,
 * VersionVector.h, TagThrottle.actor.h, fdbrpc/TenantInfo.h, flow/NetworkAddress.h). */
#include <string.h>

#include "error_codes.h"
#include "messages.h"
#include "wire_errors.h"

/* The wire core names the codes it produces itself (wire_errors.h); they are these. */
_Static_assert(CFDB_WIRE_OUT_OF_MEMORY == CFDB_ERR_OUT_OF_MEMORY, "out of memory is one code");
_Static_assert(CFDB_WIRE_SERIALIZATION_FAILED == CFDB_ERR_SERIALIZATION_FAILED, "wire code");
_Static_assert(CFDB_WIRE_PLATFORM_ERROR == CFDB_ERR_PLATFORM_ERROR, "wire code");
_Static_assert(CFDB_WIRE_CONNECTION_FAILED == CFDB_ERR_CONNECTION_FAILED, "wire code");
_Static_assert(CFDB_WIRE_CHECKSUM_FAILED == CFDB_ERR_CHECKSUM_FAILED, "wire code");

#define BAD CFDB_WIRE_SERIALIZATION_FAILED

static inline uint32_t rd_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ---- simple tables ---- */

FB_EMPTY_TABLE_DEF(cfdb_fb_void, "Void", cfdb_void);

FB_TABLE_DEF(cfdb_fb_reply_promise, "ReplyPromise", cfdb_reply_promise,
             FB_FIELD(cfdb_reply_promise, token, fb_uid));

FB_TABLE_DEF(cfdb_fb_span_context, "SpanContext", cfdb_span_context,
             FB_FIELD(cfdb_span_context, traceID, fb_uid),
             FB_FIELD(cfdb_span_context, spanID, fb_u64),
             FB_FIELD(cfdb_span_context, m_Flags, fb_u8));
FB_OPTIONAL_DEF(cfdb_fb_opt_span_context, "Optional<SpanContext>", CFDB_OPTIONAL(cfdb_span_context),
                cfdb_fb_span_context);

FB_TABLE_DEF(cfdb_fb_wiped_string, "WipedString", cfdb_wiped_string,
             FB_FIELD(cfdb_wiped_string, str, fb_bytes));
FB_OPTIONAL_DEF(cfdb_fb_opt_wiped_string, "Optional<WipedString>", cfdb_opt_wiped_string, cfdb_fb_wiped_string);

FB_TABLE_DEF(cfdb_fb_tenant_info, "TenantInfo", cfdb_tenant_info,
             FB_FIELD(cfdb_tenant_info, tenantId, fb_i64),
             FB_FIELD(cfdb_tenant_info, token, cfdb_fb_opt_wiped_string));

FB_OPTIONAL_DEF(cfdb_fb_opt_uid, "Optional<UID>", cfdb_opt_uid, fb_uid);
FB_OPTIONAL_DEF(cfdb_fb_opt_i64, "Optional<int64>", cfdb_opt_i64, fb_i64);
FB_OPTIONAL_DEF(cfdb_fb_opt_bytes, "Optional<bytes>", cfdb_opt_bytes, fb_bytes);
FB_OPTIONAL_DEF(cfdb_fb_opt_error, "Optional<Error>", cfdb_opt_error, fb_error_table);
FB_VECTOR_DEF(cfdb_fb_bytes_vec, "vector<bytes>", fb_bytes);
FB_VECTOR_DEF(cfdb_fb_i64_vec, "vector<int64>", fb_i64);
FB_VECTOR_DEF(cfdb_fb_i32_vec, "vector<int32>", fb_i32);
FB_VECTOR_DEF(cfdb_fb_u8_vec, "vector<uint8>", fb_u8);
FB_OPTIONAL_DEF(cfdb_fb_opt_i64_vec, "Optional<vector<int64>>", cfdb_opt_i64_vec, cfdb_fb_i64_vec);
FB_OPTIONAL_DEF(cfdb_fb_opt_i32_vec, "Optional<vector<int32>>", cfdb_opt_i32_vec, cfdb_fb_i32_vec);

FB_TABLE_DEF(cfdb_fb_read_options, "ReadOptions", cfdb_read_options,
             FB_FIELD(cfdb_read_options, type, fb_i32),
             FB_FIELD(cfdb_read_options, cacheResult, fb_bool),
             FB_FIELD(cfdb_read_options, debugID, cfdb_fb_opt_uid),
             FB_FIELD(cfdb_read_options, consistencyCheckStartVersion, cfdb_fb_opt_i64),
             FB_FIELD(cfdb_read_options, lockAware, fb_bool));
FB_OPTIONAL_DEF(cfdb_fb_opt_read_options, "Optional<ReadOptions>", cfdb_opt_read_options, cfdb_fb_read_options);

/* ---- KeyRangeRef: [k, k\0) is written as {k\0, ""} ---- */

static bool is_key_after(cfdb_bytes a, cfdb_bytes b)
{
    return b.len == a.len + 1 && b.ptr[a.len] == 0 && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static void key_range_pre_encode(const void *obj, void *tmp)
{
    const cfdb_key_range *r = obj;
    cfdb_key_range *w = tmp;
    *w = *r;
    if (is_key_after(r->begin, r->end)) {
        w->begin = r->end;
        w->end = cfdb_bytes_make("", 0);
    }
}

static int key_range_post_decode(void *obj)
{
    cfdb_key_range *r = obj;
    if (r->end.len == 0 && r->begin.len > 0) {
        if (r->begin.ptr[r->begin.len - 1] != 0)
            return BAD; /* FoundationDB asserts this */
        r->end = r->begin;
        r->begin.len--;
    }
    if (cfdb_bytes_cmp(r->begin, r->end) > 0)
        return 2005; /* inverted_range */
    return 0;
}

FB_TABLE_DEF_HOOKS(cfdb_fb_key_range, "KeyRangeRef", cfdb_key_range, key_range_pre_encode, key_range_post_decode,
                   FB_FIELD(cfdb_key_range, begin, fb_bytes),
                   FB_FIELD(cfdb_key_range, end, fb_bytes));
FB_VECTOR_DEF(cfdb_fb_key_range_vec, "vector<KeyRangeRef>", cfdb_fb_key_range);

FB_TABLE_DEF(cfdb_fb_key_selector, "KeySelectorRef", cfdb_key_selector,
             FB_FIELD(cfdb_key_selector, key, fb_bytes),
             FB_FIELD(cfdb_key_selector, orEqual, fb_bool),
             FB_FIELD(cfdb_key_selector, offset, fb_i32));

FB_TABLE_DEF(cfdb_fb_key_value, "KeyValueRef", cfdb_key_value,
             FB_FIELD(cfdb_key_value, key, fb_bytes),
             FB_FIELD(cfdb_key_value, value, fb_bytes));
FB_VECTOR_DEF(cfdb_fb_key_value_vec, "vector<KeyValueRef>", cfdb_fb_key_value);

/* ---- MutationRef: a single-key clear travels as (ClearRange, k\0, "") ---- */

#define MUTATION_CHECKSUM_FLAG 0x80
#define MUTATION_ACS_INDEX_FLAG 0x40

static void mutation_pre_encode(const void *obj, void *tmp)
{
    const cfdb_mutation *m = obj;
    cfdb_mutation *w = tmp;
    *w = *m;
    if (m->type == CFDB_MUT_CLEAR_RANGE && is_key_after(m->param1, m->param2)) {
        w->param1 = m->param2;
        w->param2 = cfdb_bytes_make("", 0);
    }
}

static int mutation_post_decode(void *obj)
{
    cfdb_mutation *m = obj;
    /* Checksum suffixes exist only from protocol 7.4 on; strip them if a peer sends them. */
    if (m->type & MUTATION_CHECKSUM_FLAG) {
        uint32_t strip = 4 + ((m->type & MUTATION_ACS_INDEX_FLAG) ? 2 : 0);
        if (m->param2.len < strip)
            return BAD;
        m->param2.len -= strip;
        m->type &= (uint8_t)~(MUTATION_CHECKSUM_FLAG | MUTATION_ACS_INDEX_FLAG);
    }
    if (m->type == CFDB_MUT_CLEAR_RANGE && m->param2.len == 0 && m->param1.len > 0) {
        if (m->param1.ptr[m->param1.len - 1] != 0)
            return BAD;
        m->param2 = m->param1;
        m->param1.len--;
    }
    return 0;
}

FB_TABLE_DEF_HOOKS(cfdb_fb_mutation, "MutationRef", cfdb_mutation, mutation_pre_encode, mutation_post_decode,
                   FB_FIELD(cfdb_mutation, type, fb_u8),
                   FB_FIELD(cfdb_mutation, param1, fb_bytes),
                   FB_FIELD(cfdb_mutation, param2, fb_bytes));
FB_VECTOR_DEF(cfdb_fb_mutation_vec, "vector<MutationRef>", cfdb_fb_mutation);

/* ---- TagSet: repeated (u8 length, bytes) ---- */

static uint32_t tag_set_size(const void *obj)
{
    const cfdb_tag_set *t = obj;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->tags.count; i++)
        n += 1 + t->tags.items[i].len;
    return n;
}

static void tag_set_write(const void *obj, uint8_t *out)
{
    const cfdb_tag_set *t = obj;
    for (uint32_t i = 0; i < t->tags.count; i++) {
        cfdb_bytes b = t->tags.items[i];
        *out++ = (uint8_t)b.len;
        memcpy(out, b.ptr, b.len);
        out += b.len;
    }
}

static int tag_set_read(const uint8_t *p, uint32_t len, void *obj, cfdb_arena *a)
{
    cfdb_tag_set *t = obj;
    uint32_t count = 0;
    for (uint32_t i = 0; i < len; i += 1 + p[i])
        count++;
    t->tags.count = 0;
    t->tags.items = count ? cfdb_arena_alloc(a, count * sizeof(cfdb_bytes)) : NULL;
    if (count && !t->tags.items)
        return CFDB_WIRE_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < len;) {
        uint32_t n = p[i];
        if (i + 1 + n > len)
            return BAD;
        t->tags.items[t->tags.count++] = cfdb_bytes_make(p + i + 1, n);
        i += 1 + n;
    }
    return 0;
}

static void tag_set_print(const void *obj, fb_printer *pr)
{
    const cfdb_tag_set *t = obj;
    fputs("TagSet [", pr->out);
    for (uint32_t i = 0; i < t->tags.count; i++) {
        fputs(i ? ", " : "", pr->out);
        fb_print_bytes(pr, t->tags.items[i]);
    }
    fputc(']', pr->out);
}

static const fb_blob_codec tag_set_codec = { tag_set_size, tag_set_write, tag_set_read, tag_set_print };
FB_BLOB_DEF(cfdb_fb_tag_set, "TagSet", cfdb_tag_set, tag_set_codec);
FB_OPTIONAL_DEF(cfdb_fb_opt_tag_set, "Optional<TagSet>", cfdb_opt_tag_set, cfdb_fb_tag_set);

/* ---- VersionVector: size_t count, ..., i64 maxVersion; the reader checks the length ---- */

static uint32_t version_vector_size(const void *obj)
{
    const cfdb_version_vector *v = obj;
    return v->raw.len ? v->raw.len : 16;
}

static void version_vector_write(const void *obj, uint8_t *out)
{
    const cfdb_version_vector *v = obj;
    if (v->raw.len) {
        memcpy(out, v->raw.ptr, v->raw.len);
        return;
    }
    memset(out, 0, 8);
    memcpy(out + 8, &v->maxVersion, 8);
}

static int version_vector_read(const uint8_t *p, uint32_t len, void *obj, cfdb_arena *a)
{
    cfdb_version_vector *v = obj;
    if (len < 16)
        return BAD;
    uint64_t count;
    memcpy(&count, p, 8);
    if (count == 0 && len != 16)
        return BAD;
    memcpy(&v->maxVersion, p + len - 8, 8);
    v->raw = count ? cfdb_bytes_make(p, len) : cfdb_bytes_make("", 0);
    return 0;
}

static void version_vector_print(const void *obj, fb_printer *pr)
{
    const cfdb_version_vector *v = obj;
    fprintf(pr->out, "VersionVector { maxVersion: %lld%s }", (long long)v->maxVersion,
            v->raw.len ? ", non-empty" : "");
}

static const fb_blob_codec version_vector_codec = { version_vector_size, version_vector_write,
                                                    version_vector_read, version_vector_print };
FB_BLOB_DEF(cfdb_fb_version_vector, "VersionVector", cfdb_version_vector, version_vector_codec);

/* ---- VectorRef<KeyValueRef, String>: u32 count, (u32 klen, key, u32 vlen, value)* ---- */

static uint32_t kv_blob_size(const void *obj)
{
    const cfdb_key_value_vec *v = obj;
    uint32_t n = 4;
    for (uint32_t i = 0; i < v->count; i++)
        n += 8 + v->items[i].key.len + v->items[i].value.len;
    return n;
}

static void kv_blob_write(const void *obj, uint8_t *out)
{
    const cfdb_key_value_vec *v = obj;
    memcpy(out, &v->count, 4);
    out += 4;
    for (uint32_t i = 0; i < v->count; i++) {
        const cfdb_key_value *kv = &v->items[i];
        memcpy(out, &kv->key.len, 4);
        memcpy(out + 4, kv->key.ptr, kv->key.len);
        out += 4 + kv->key.len;
        memcpy(out, &kv->value.len, 4);
        memcpy(out + 4, kv->value.ptr, kv->value.len);
        out += 4 + kv->value.len;
    }
}

static int kv_blob_read(const uint8_t *p, uint32_t len, void *obj, cfdb_arena *a)
{
    cfdb_key_value_vec *v = obj;
    if (len < 4)
        return BAD;
    uint32_t count = rd_u32(p);
    if (count > (len - 4) / 8) /* every pair needs at least its two length words */
        return BAD;
    v->count = count;
    v->items = count ? cfdb_arena_alloc(a, (size_t)count * sizeof(cfdb_key_value)) : NULL;
    if (count && !v->items)
        return CFDB_WIRE_OUT_OF_MEMORY;
    uint32_t at = 4;
    for (uint32_t i = 0; i < count; i++) {
        cfdb_bytes parts[2];
        for (int k = 0; k < 2; k++) {
            if (len - at < 4)
                return BAD;
            uint32_t n = rd_u32(p + at);
            at += 4;
            if (n > len - at)
                return BAD;
            parts[k] = cfdb_bytes_make(p + at, n);
            at += n;
        }
        v->items[i].key = parts[0];
        v->items[i].value = parts[1];
    }
    return at == len ? 0 : BAD;
}

static void kv_blob_print(const void *obj, fb_printer *pr)
{
    fb_print_value(pr, &cfdb_fb_key_value_vec, obj);
}

static const fb_blob_codec kv_blob_codec = { kv_blob_size, kv_blob_write, kv_blob_read, kv_blob_print };
FB_BLOB_DEF(cfdb_fb_key_value_blob, "KeyValueBlob", cfdb_key_value_vec, kv_blob_codec);

FB_TABLE_DEF(cfdb_fb_range_result, "RangeResultRef", cfdb_range_result,
             FB_FIELD(cfdb_range_result, data, cfdb_fb_key_value_vec),
             FB_FIELD(cfdb_range_result, more, fb_bool),
             FB_FIELD(cfdb_range_result, readThrough, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_range_result, readToBegin, fb_bool),
             FB_FIELD(cfdb_range_result, readThroughEnd, fb_bool));

/* ---- addresses, endpoints, interfaces ---- */

FB_UNION_DEF(cfdb_fb_ip_variant, "IPAddress.addr", cfdb_ip_address,
             { &fb_u32, offsetof(cfdb_ip_address, v4) },
             { &cfdb_fb_u8_vec, offsetof(cfdb_ip_address, v6) });

/* IPAddress is a table with one variant member; our C struct is the variant itself. */
static const fb_field ip_address_fields[] = { { "addr", &cfdb_fb_ip_variant, 0 } };
fb_type cfdb_fb_ip_address = { .name = "IPAddress", .kind = FB_TABLE, .csize = sizeof(cfdb_ip_address),
                               .fields = ip_address_fields, .nfields = 1 };

FB_TABLE_DEF(cfdb_fb_network_address, "NetworkAddress", cfdb_network_address,
             FB_FIELD(cfdb_network_address, ip, cfdb_fb_ip_address),
             FB_FIELD(cfdb_network_address, port, fb_u16),
             FB_FIELD(cfdb_network_address, flags, fb_u16),
             FB_FIELD(cfdb_network_address, fromHostname, fb_bool));
FB_OPTIONAL_DEF(cfdb_fb_opt_network_address, "Optional<NetworkAddress>", cfdb_opt_network_address,
                cfdb_fb_network_address);
FB_VECTOR_DEF(cfdb_fb_network_address_vec, "vector<NetworkAddress>", cfdb_fb_network_address);

FB_TABLE_DEF(cfdb_fb_network_address_list, "NetworkAddressList", cfdb_network_address_list,
             FB_FIELD(cfdb_network_address_list, address, cfdb_fb_network_address),
             FB_FIELD(cfdb_network_address_list, secondaryAddress, cfdb_fb_opt_network_address));

FB_TABLE_DEF(cfdb_fb_endpoint, "Endpoint", cfdb_endpoint,
             FB_FIELD(cfdb_endpoint, addresses, cfdb_fb_network_address_list),
             FB_FIELD(cfdb_endpoint, token, fb_uid));

FB_TABLE_DEF(cfdb_fb_request_stream, "RequestStream", cfdb_request_stream,
             FB_FIELD(cfdb_request_stream, endpoint, cfdb_fb_endpoint));

FB_TABLE_DEF(cfdb_fb_locality_entry, "pair<key,Optional<value>>", cfdb_locality_entry,
             FB_FIELD(cfdb_locality_entry, first, fb_bytes),
             FB_FIELD(cfdb_locality_entry, second, cfdb_fb_opt_bytes));
FB_VECTOR_DEF(cfdb_fb_locality_entry_vec, "map<key,Optional<value>>", cfdb_fb_locality_entry);
FB_TABLE_DEF(cfdb_fb_locality_data, "LocalityData", cfdb_locality_data,
             FB_FIELD(cfdb_locality_data, _data, cfdb_fb_locality_entry_vec));

FB_TABLE_DEF(cfdb_fb_storage_server_interface, "StorageServerInterface", cfdb_storage_server_interface,
             FB_FIELD(cfdb_storage_server_interface, uniqueID, fb_uid),
             FB_FIELD(cfdb_storage_server_interface, locality, cfdb_fb_locality_data),
             FB_FIELD(cfdb_storage_server_interface, getValue, cfdb_fb_request_stream),
             FB_FIELD(cfdb_storage_server_interface, tssPairID, cfdb_fb_opt_uid),
             FB_FIELD(cfdb_storage_server_interface, acceptingRequests, fb_bool));
FB_VECTOR_DEF(cfdb_fb_storage_server_interface_vec, "vector<StorageServerInterface>",
              cfdb_fb_storage_server_interface);

FB_TABLE_DEF(cfdb_fb_grv_proxy_interface, "GrvProxyInterface", cfdb_grv_proxy_interface,
             FB_FIELD(cfdb_grv_proxy_interface, processId, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_grv_proxy_interface, provisional, fb_bool),
             FB_FIELD(cfdb_grv_proxy_interface, getConsistentReadVersion, cfdb_fb_request_stream));
FB_VECTOR_DEF(cfdb_fb_grv_proxy_interface_vec, "vector<GrvProxyInterface>", cfdb_fb_grv_proxy_interface);

FB_TABLE_DEF(cfdb_fb_commit_proxy_interface, "CommitProxyInterface", cfdb_commit_proxy_interface,
             FB_FIELD(cfdb_commit_proxy_interface, processId, cfdb_fb_opt_bytes),
             FB_FIELD(cfdb_commit_proxy_interface, provisional, fb_bool),
             FB_FIELD(cfdb_commit_proxy_interface, commit, cfdb_fb_request_stream));
FB_VECTOR_DEF(cfdb_fb_commit_proxy_interface_vec, "vector<CommitProxyInterface>", cfdb_fb_commit_proxy_interface);

FB_TABLE_DEF(cfdb_fb_encrypt_key_proxy_interface, "EncryptKeyProxyInterface", cfdb_encrypt_key_proxy_interface,
             FB_FIELD(cfdb_encrypt_key_proxy_interface, locality, cfdb_fb_locality_data),
             FB_FIELD(cfdb_encrypt_key_proxy_interface, myId, fb_uid),
             FB_FIELD(cfdb_encrypt_key_proxy_interface, waitFailure, cfdb_fb_request_stream));
FB_OPTIONAL_DEF(cfdb_fb_opt_encrypt_key_proxy_interface, "Optional<EncryptKeyProxyInterface>",
                cfdb_opt_encrypt_key_proxy_interface, cfdb_fb_encrypt_key_proxy_interface);
