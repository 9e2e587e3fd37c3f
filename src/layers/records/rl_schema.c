/* SPDX-License-Identifier: Apache-2.0 */
/* The Record Layer's own protobuf schema, loaded once from the descriptor set that protoc
 * made at build time from record_metadata.proto and record_key_expression.proto (embedded
 * as cfdb_rl_schema_set by embed.cmake), and by-name field helpers over its messages. The
 * pool is never freed: it lives for the process, like generated descriptors do. */
#include <pthread.h>
#include <string.h>

#include "rl_internal.h"

extern const uint8_t cfdb_rl_schema_set[];
extern const size_t cfdb_rl_schema_set_size;

static pthread_once_t schema_once = PTHREAD_ONCE_INIT;
static cfdb_pb_pool *schema_pool;

static void load_schema(void)
{
    cfdb_pb_pool *p;
    if (cfdb_pb_pool_create(&p))
        return;
    if (cfdb_pb_pool_add_set(p, cfdb_rl_schema_set, cfdb_rl_schema_set_size, NULL)) {
        cfdb_pb_pool_destroy(p);
        return;
    }
    schema_pool = p;
}

const cfdb_pb_pool *cfdb_rl_schema(void)
{
    pthread_once(&schema_once, load_schema);
    return schema_pool;
}

const cfdb_pb_message *cfdb_rl_schema_msg(const char *full_name)
{
    const cfdb_pb_pool *p = cfdb_rl_schema();
    return p ? cfdb_pb_pool_message(p, full_name) : NULL;
}

const cfdb_pb_field *rl_f(const cfdb_pb_msg *m, const char *name)
{
    return m ? cfdb_pb_field_by_name(cfdb_pb_msg_type(m), name) : NULL;
}

bool rl_has(const cfdb_pb_msg *m, const char *name)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f && cfdb_pb_count(m, f) != 0;
}

int64_t rl_int(const cfdb_pb_msg *m, const char *name)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f ? cfdb_pb_get_or_default(m, f).i : 0;
}

bool rl_bool(const cfdb_pb_msg *m, const char *name)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f && cfdb_pb_get_or_default(m, f).b;
}

cfdb_bytes rl_bytes(const cfdb_pb_msg *m, const char *name)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f ? cfdb_pb_get_or_default(m, f).s : (cfdb_bytes){ NULL, 0 };
}

const cfdb_pb_msg *rl_msg(const cfdb_pb_msg *m, const char *name)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f && cfdb_pb_count(m, f) ? cfdb_pb_get(m, f, 0)->m : NULL;
}

uint32_t rl_count(const cfdb_pb_msg *m, const char *name)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f ? cfdb_pb_count(m, f) : 0;
}

const cfdb_pb_value *rl_at(const cfdb_pb_msg *m, const char *name, uint32_t i)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f ? cfdb_pb_get(m, f, i) : NULL;
}

int rl_set_int(cfdb_pb_msg *m, const char *name, int64_t v)
{
    cfdb_pb_value pv;
    memset(&pv, 0, sizeof pv);
    pv.i = v;
    const cfdb_pb_field *f = rl_f(m, name);
    if (f && f->type == CFDB_PB_BOOL)
        pv.b = v != 0;
    return f ? cfdb_pb_set(m, f, pv) : CFDB_ERR_CLIENT_INVALID_OPERATION;
}

int rl_set_bytes(cfdb_pb_msg *m, const char *name, cfdb_bytes v)
{
    cfdb_pb_value pv;
    memset(&pv, 0, sizeof pv);
    pv.s = v;
    const cfdb_pb_field *f = rl_f(m, name);
    return f ? cfdb_pb_set(m, f, pv) : CFDB_ERR_CLIENT_INVALID_OPERATION;
}

int rl_mutable(cfdb_pb_msg *m, const char *name, cfdb_pb_msg **out)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f ? cfdb_pb_mutable(m, f, out) : CFDB_ERR_CLIENT_INVALID_OPERATION;
}

int rl_add_msg(cfdb_pb_msg *m, const char *name, cfdb_pb_msg **out)
{
    const cfdb_pb_field *f = rl_f(m, name);
    return f ? cfdb_pb_add_msg(m, f, out) : CFDB_ERR_CLIENT_INVALID_OPERATION;
}

char *rl_strdup(cfdb_arena *a, cfdb_bytes s)
{
    char *p = cfdb_arena_alloc(a, (size_t)s.len + 1);
    if (!p)
        return NULL;
    if (s.len)
        memcpy(p, s.ptr, s.len);
    p[s.len] = 0;
    return p;
}
