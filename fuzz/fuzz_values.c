/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the values a client reads from the cluster outside the message protocol.
 * Byte 0 picks the decoder, the rest is its input:
 *   0  the JSON reader (status json; src/common/json_reader.c): NULL or a tree whose every
 *      member lookup works; freed without leaks;
 *   1  \xff/logs (decodeLogsValue, src/wire/msg_exclusion.c): 0 or 1044; a decoded value
 *      encodes and decodes again to the same logs;
 *   2  \xff/serverList/ values (decodeServerListValue): 0 or 1044, never past the input;
 *   3  IncludeVersion TenantMapEntry values (fb_decode_versioned): 0 or 1044; a decoded entry
 *      encodes and decodes again to the same fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exclusion.h"
#include "fb.h"
#include "json_reader.h"
#include "messages.h"
#include "protocol_version.h"
#include "wire_errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const cfdb_jv *j, int depth)
{
    if (depth > CFDB_JV_MAX_DEPTH + 1)
        abort();
    for (size_t i = 0; i < j->count; i++) {
        const cfdb_jv *c = j->items[i];
        if (j->type == JSON_OBJECT) {
            char name[64];
            size_t n = c->name_len < sizeof name - 1 ? c->name_len : sizeof name - 1;
            memcpy(name, c->name, n);
            name[n] = 0;
            if (c->name_len < sizeof name - 1 && strlen(name) == c->name_len && !cfdb_jv_get(j, name))
                abort(); /* every member is found by its name */
        }
        walk(c, depth + 1);
    }
}

static bool ok_code(int rc)
{
    return rc == 0 || rc == CFDB_WIRE_SERIALIZATION_FAILED || rc == CFDB_WIRE_OUT_OF_MEMORY;
}

static bool same_logs(const cfdb_log_entry *a, const cfdb_log_entry *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!cfdb_uid_eq(a[i].id, b[i].id) || a[i].address.port != b[i].address.port ||
            a[i].address.flags != b[i].address.flags)
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    cfdb_bytes in = cfdb_bytes_make(data + 1, size - 1);
    cfdb_arena a;
    cfdb_arena_init(&a);
    switch (data[0] % 4) {
    case 0: {
        cfdb_jv *j = cfdb_jv_parse((const char *)in.ptr, in.len);
        if (j)
            walk(j, 0);
        cfdb_jv_free(j);
        break;
    }
    case 1: {
        cfdb_logs_value v, again;
        int rc = cfdb_logs_value_decode(in, &a, &v);
        if (!ok_code(rc))
            abort();
        if (rc == 0) {
            cfdb_bytes enc;
            if (cfdb_logs_value_encode(CFDB_PROTOCOL_VERSION, &v, &a, &enc) ||
                cfdb_logs_value_decode(enc, &a, &again) || again.nlogs != v.nlogs || again.nold != v.nold ||
                !same_logs(v.logs, again.logs, v.nlogs) || !same_logs(v.old_logs, again.old_logs, v.nold))
                abort();
        }
        break;
    }
    case 2: {
        cfdb_storage_server_interface ssi;
        if (!ok_code(cfdb_server_list_value_decode(in, &a, &ssi)))
            abort();
        break;
    }
    default: {
        cfdb_tenant_map_entry e, again;
        memset(&e, 0, sizeof e);
        int rc = fb_decode_versioned(&cfdb_msg_tenant_map_entry, in, &e, NULL, &a);
        if (!ok_code(rc))
            abort();
        if (rc == 0) {
            cfdb_bytes enc;
            memset(&again, 0, sizeof again);
            if (fb_encode_versioned(&cfdb_msg_tenant_map_entry, &e, &a, &enc) ||
                fb_decode_versioned(&cfdb_msg_tenant_map_entry, enc, &again, NULL, &a) || again.id != e.id ||
                again.tenantLockState != e.tenantLockState ||
                again.configurationSequenceNum != e.configurationSequenceNum ||
                !cfdb_bytes_eq(again.tenantName, e.tenantName) ||
                again.tenantGroup.present != e.tenantGroup.present)
                abort();
        }
        break;
    }
    }
    cfdb_arena_free(&a);
    return 0;
}
