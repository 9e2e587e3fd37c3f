/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_protobuf: the Record Layer's protobuf decoder and descriptor loader.
 *
 * Input: one selector byte, then bytes to decode.
 *   selector 0      the bytes are a FileDescriptorSet added to a fresh pool (loader paths:
 *                   names, resolution, defaults, options)
 *   selector k > 0  the bytes are a message of the (k-1 mod n)-th message type of the test
 *                   descriptor set (tests/vectors/records/pb_proto3.proto and pb_types.proto,
 *                   made by protoc at build time and read at start-up)
 * A decoded message is encoded, decoded again and encoded again: the second decode must
 * succeed and the two encodings must be the same bytes, of the size cfdb_pb_encoded_size
 * said. Errors must be 1044 (malformed) with a message, never anything else. Any violation
 * aborts: that is a codec bug. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "cfdb/records/protobuf.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cfdb_pb_pool *pool;
static const cfdb_pb_message *types[64];
static size_t type_count;

static void collect(const cfdb_pb_message *m)
{
    if (type_count < sizeof types / sizeof types[0])
        types[type_count++] = m;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    FILE *f = fopen(CFDB_FUZZ_PB_SET, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_protobuf: cannot open %s\n", CFDB_FUZZ_PB_SET);
        abort();
    }
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cfdb_pb_error err;
    if (cfdb_pb_pool_create(&pool) || cfdb_pb_pool_add_set(pool, buf, n, &err)) {
        fprintf(stderr, "fuzz_protobuf: cannot load the descriptor set: %s\n", err.message);
        abort();
    }
    const char *files[] = { "pb_types.proto", "pb_proto3.proto" };
    for (size_t i = 0; i < 2; i++) {
        const cfdb_pb_file *file = cfdb_pb_pool_file(pool, files[i]);
        if (!file)
            abort();
        for (uint32_t k = 0; k < file->message_count; k++)
            collect(file->messages[k]);
    }
    return 0;
}

static void check_error(int rc, const cfdb_pb_error *err)
{
    if (rc != CFDB_ERR_SERIALIZATION_FAILED || err->code != rc || !err->message[0]) {
        fprintf(stderr, "fuzz_protobuf: unexpected error %d (%s)\n", rc, err->message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    data++;
    size--;
    cfdb_pb_error err;
    if (sel == 0) {
        cfdb_pb_pool *p;
        if (cfdb_pb_pool_create(&p))
            abort();
        int rc = cfdb_pb_pool_add_set(p, data, size, &err);
        if (rc)
            check_error(rc, &err);
        cfdb_pb_pool_destroy(p);
        return 0;
    }
    const cfdb_pb_message *type = types[(sel - 1) % type_count];
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_pb_msg *m;
    int rc = cfdb_pb_decode(&a, type, data, size, CFDB_PB_PARTIAL, &m, &err);
    if (rc) {
        check_error(rc, &err);
        cfdb_arena_free(&a);
        return 0;
    }
    cfdb_bytes once, twice;
    size_t n1;
    if (cfdb_pb_encoded_size(m, &n1) || cfdb_pb_encode(m, &a, &once) || once.len != n1)
        abort();
    cfdb_pb_msg *m2;
    rc = cfdb_pb_decode(&a, type, once.ptr, once.len, CFDB_PB_PARTIAL, &m2, &err);
    if (rc) {
        fprintf(stderr, "fuzz_protobuf: re-decode of %s failed: %s\n", type->full_name,
                err.message);
        abort();
    }
    if (cfdb_pb_encode(m2, &a, &twice) || !cfdb_bytes_eq(once, twice)) {
        fprintf(stderr, "fuzz_protobuf: %s does not re-encode to the same bytes\n",
                type->full_name);
        abort();
    }
    cfdb_arena_free(&a);
    return 0;
}
