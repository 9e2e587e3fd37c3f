/* Values FoundationDB stores in system keys with ObjectWriter(IncludeVersion()) and reads
 * with ObjectReader (flow/ObjectSerializer.h): the protocol version, 8 bytes little-endian,
 * then one flat-buffer message. TenantMapEntry and TenantGroupEntry under \xff/tenant/, the
 * global configuration's VersionHistory under \xff/globalConfig/h/, a leader's serialized
 * ClusterControllerClientInterface are stored so. */
#include <string.h>

#include "protocol_version.h"
#include "wire_errors.h"
#include "fb_internal.h"

int fb_encode_versioned(const fb_message *m, const void *item, cfdb_arena *a, cfdb_bytes *out)
{
    fb_writer w;
    fb_writer_init(&w, 8);
    int rc = fb_encode(&w, m, item, 0);
    if (!rc) {
        size_t n = fb_writer_message_len(&w);
        uint8_t *p = cfdb_arena_alloc(a, n + 8);
        if (!p) {
            rc = CFDB_WIRE_OUT_OF_MEMORY;
        } else {
            uint64_t v = CFDB_PROTOCOL_VERSION;
            memcpy(p, &v, 8);
            memcpy(p + 8, fb_writer_message(&w), n);
            *out = cfdb_bytes_make(p, n + 8);
        }
    }
    fb_writer_free(&w);
    return rc;
}

int fb_decode_versioned(const fb_message *m, cfdb_bytes value, void *item, uint64_t *version, cfdb_arena *a)
{
    if (value.len < 8)
        return CFDB_WIRE_SERIALIZATION_FAILED;
    if (version)
        memcpy(version, value.ptr, 8);
    return fb_decode(m, value.ptr + 8, value.len - 8, item, NULL, a);
}
