/* SPDX-License-Identifier: Apache-2.0 */
/* See rl_test_util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rl_internal.h"
#include "rl_test_util.h"

cfdb_bytes rlt_read_vector(cfdb_arena *a, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CFDB_PB_VECTORS, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    uint8_t *buf = cfdb_arena_alloc(a, 1 << 17);
    size_t n = fread(buf, 1, 1 << 17, f);
    fclose(f);
    assert_true(n < (1 << 17));
    return cfdb_bytes_make(buf, n);
}

cfdb_bytes rlt_records_file(cfdb_arena *a)
{
    cfdb_bytes set = rlt_read_vector(a, "rl_types_only.pb");
    assert_int_equal(set.ptr[0], 0x0a);
    uint32_t len = 0, shift = 0, i = 1;
    while (set.ptr[i] & 0x80) {
        len |= (uint32_t)(set.ptr[i++] & 0x7f) << shift;
        shift += 7;
    }
    len |= (uint32_t)set.ptr[i++] << shift;
    assert_int_equal(i + len, set.len);
    return cfdb_bytes_make(set.ptr + i, len);
}

cfdb_pb_msg *rlt_schema_msg(cfdb_arena *a, const char *full_name)
{
    const cfdb_pb_message *t = cfdb_rl_schema_msg(full_name);
    assert_non_null(t);
    return cfdb_pb_msg_new(a, t);
}

void rlt_kex_into(cfdb_arena *a, cfdb_pb_msg *parent, const char *field, const cfdb_kex *k)
{
    cfdb_bytes raw;
    assert_int_equal(cfdb_kex_serialize(a, k, &raw), 0);
    const cfdb_pb_field *f = rl_f(parent, field);
    assert_non_null(f);
    cfdb_pb_msg *decoded, *dst;
    assert_int_equal(cfdb_pb_decode(a, f->message, raw.ptr, raw.len, 0, &decoded, NULL), 0);
    assert_int_equal(cfdb_pb_mutable(parent, f, &dst), 0);
    assert_int_equal(cfdb_pb_merge(dst, decoded), 0);
}

cfdb_pb_msg *rlt_add_type(cfdb_arena *a, cfdb_pb_msg *md, const char *name, const cfdb_kex *pk)
{
    cfdb_pb_msg *rt;
    assert_int_equal(rl_add_msg(md, "record_types", &rt), 0);
    assert_int_equal(rl_set_bytes(rt, "name", cfdb_bytes_str(name)), 0);
    if (pk)
        rlt_kex_into(a, rt, "primary_key", pk);
    return rt;
}

cfdb_pb_msg *rlt_add_index(cfdb_arena *a, cfdb_pb_msg *md, const char *name, const char *type,
                           const cfdb_kex *root, const char *record_type)
{
    cfdb_pb_msg *ix;
    assert_int_equal(rl_add_msg(md, "indexes", &ix), 0);
    assert_int_equal(rl_set_bytes(ix, "name", cfdb_bytes_str(name)), 0);
    if (type)
        assert_int_equal(rl_set_bytes(ix, "type", cfdb_bytes_str(type)), 0);
    rlt_kex_into(a, ix, "root_expression", root);
    if (record_type) {
        cfdb_pb_value v;
        v.s = cfdb_bytes_str(record_type);
        assert_int_equal(cfdb_pb_add(ix, rl_f(ix, "record_type"), v), 0);
    }
    return ix;
}

cfdb_pb_msg *rlt_base_metadata(cfdb_arena *a, int32_t version)
{
    cfdb_pb_msg *md = rlt_schema_msg(a, RL_PKG "MetaData");
    assert_int_equal(rl_set_bytes(md, "records", rlt_records_file(a)), 0);
    const cfdb_kex *rt_id[] = { cfdb_kex_record_type_key(a), cfdb_kex_field(a, "id", CFDB_KEX_SCALAR) };
    rlt_add_type(a, md, "Person", cfdb_kex_then(a, rt_id, 2));
    rlt_add_type(a, md, "Order", cfdb_kex_field(a, "order_id", CFDB_KEX_SCALAR));
    assert_int_equal(rl_set_int(md, "version", version), 0);
    return md;
}

cfdb_rl_metadata *rlt_load(cfdb_arena *a, cfdb_pb_msg *md)
{
    /* The version the indexes reach (RecordMetaDataBuilder.addIndexCommon: one more for each
     * index without a last modified version), as a metadata built in code has it. */
    int64_t v = 0;
    for (uint32_t i = 0; i < rl_count(md, "indexes"); i++) {
        int64_t lm = rl_int(rl_at(md, "indexes", i)->m, "last_modified_version");
        v = lm <= 0 ? v + 1 : (lm > v ? lm : v);
    }
    if (v > rl_int(md, "version"))
        assert_int_equal(rl_set_int(md, "version", v), 0);
    cfdb_bytes raw;
    assert_int_equal(cfdb_pb_encode(md, a, &raw), 0);
    cfdb_rl_metadata *out;
    cfdb_pb_error err;
    int rc = cfdb_rl_metadata_from_proto(raw.ptr, raw.len, &out, &err);
    if (rc)
        fail_msg("from_proto: %d (%s)", rc, err.message);
    return out;
}

cfdb_bytes rlt_prefix(cfdb_arena *a, const char *tag)
{
    static int n;
    char *p = cfdb_arena_alloc(a, 48);
    assert_non_null(p);
    snprintf(p, 48, "%s/%d/", tag, ++n);
    return cfdb_bytes_str(p);
}

cfdb_bytes rlt_cat(cfdb_arena *a, cfdb_bytes x, cfdb_bytes y)
{
    uint8_t *p = cfdb_arena_alloc(a, (size_t)x.len + y.len + 1);
    assert_non_null(p);
    memcpy(p, x.ptr, x.len);
    memcpy(p + x.len, y.ptr, y.len);
    return cfdb_bytes_make(p, (size_t)x.len + y.len);
}
