/* SPDX-License-Identifier: Apache-2.0 */
/* Descriptor pool: builds message and enum descriptors from serialized FileDescriptorProtos.
 *
 * A batch of files (a FileDescriptorSet, or the Record Layer's records file with its
 * dependencies) is decoded with the bootstrap descriptors of descriptor.proto, then built in
 * two phases: (A) every message and enum gets its full name ("package.Outer.Inner") and a
 * descriptor in the pool's arena; the names of the pool and of the batch are merged into one
 * sorted index, where a duplicate is an error; (B) fields are built, sorted by number, and
 * their type names resolved with protobuf's scoping rules (".a.b" is absolute, otherwise the
 * name is tried in the enclosing scopes from the innermost out). The new index replaces the
 * old only when the whole batch succeeded, so a failed add leaves the pool's contents as they
 * were (its arena keeps the discarded descriptors until the pool is destroyed).
 *
 * Field rules: numbers 1 .. 2^29-1, unique in a message; presence for every singular field
 * of a proto2 file, for proto3 `optional`, message fields and oneof members; repeated numeric
 * fields are packed when FieldOptions.packed says so, or by default in proto3; enums of a
 * proto2 file are closed. proto2 defaults are parsed from default_value (bytes C-unescaped);
 * an enum field without one defaults to its enum's first value.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pb_internal.h"

enum { KIND_MESSAGE = 1, KIND_ENUM = 2 };

typedef struct pool_entry {
    const char *name;
    int kind;
    void *ptr;
} pool_entry;

struct cfdb_pb_pool {
    cfdb_arena arena;
    pool_entry *index;      /* sorted by name, malloc'd */
    size_t index_count;
    const cfdb_pb_file **files;
    size_t file_count;
};

/* A message being built: its descriptor and the DescriptorProto it comes from. */
typedef struct pending_msg {
    cfdb_pb_message *desc;
    const cfdb_pb_msg *proto;
    const char *scope;      /* full name of the message itself: where its fields resolve */
} pending_msg;

typedef struct build {
    cfdb_pb_pool *pool;
    cfdb_arena tmp;
    cfdb_pb_error *err;
    pool_entry *index;
    size_t index_count, index_cap;
    pending_msg *msgs;
    size_t msg_count, msg_cap;
} build;

int cfdb_pb_pool_create(cfdb_pb_pool **out)
{
    *out = NULL;
    cfdb_pb_pool *p = calloc(1, sizeof *p);
    if (!p)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_arena_init(&p->arena);
    *out = p;
    return 0;
}

void cfdb_pb_pool_destroy(cfdb_pb_pool *pool)
{
    if (!pool)
        return;
    cfdb_arena_free(&pool->arena);
    free(pool->index);
    free(pool->files);
    free(pool);
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const pool_entry *)a)->name, ((const pool_entry *)b)->name);
}

static const pool_entry *find_entry(const pool_entry *index, size_t n, const char *name)
{
    if (n == 0)
        return NULL;
    pool_entry key = { name, 0, NULL };
    return bsearch(&key, index, n, sizeof *index, entry_cmp);
}

const cfdb_pb_message *cfdb_pb_pool_message(const cfdb_pb_pool *pool, const char *full_name)
{
    const pool_entry *e = find_entry(pool->index, pool->index_count, full_name);
    return e && e->kind == KIND_MESSAGE ? e->ptr : NULL;
}

const cfdb_pb_enum *cfdb_pb_pool_enum(const cfdb_pb_pool *pool, const char *full_name)
{
    const pool_entry *e = find_entry(pool->index, pool->index_count, full_name);
    return e && e->kind == KIND_ENUM ? e->ptr : NULL;
}

const cfdb_pb_file *cfdb_pb_pool_file(const cfdb_pb_pool *pool, const char *name)
{
    for (size_t i = 0; i < pool->file_count; i++)
        if (strcmp(pool->files[i]->name, name) == 0)
            return pool->files[i];
    return NULL;
}

/* ---- helpers over decoded bootstrap messages ---- */

static const cfdb_pb_field *bf(const cfdb_pb_msg *m, uint32_t idx)
{
    return &cfdb_pb_msg_type(m)->fields[idx];
}

static cfdb_bytes get_str(const cfdb_pb_msg *m, uint32_t idx)
{
    return cfdb_pb_get_or_default(m, bf(m, idx)).s;
}

static int64_t get_int(const cfdb_pb_msg *m, uint32_t idx)
{
    return cfdb_pb_get_or_default(m, bf(m, idx)).i;
}

static bool has(const cfdb_pb_msg *m, uint32_t idx)
{
    return cfdb_pb_count(m, bf(m, idx)) != 0;
}

static int bad(build *b, const char *fmt, const char *a, const char *c)
{
    pb_errorf(b->err, CFDB_ERR_SERIALIZATION_FAILED, 0, fmt, a, c ? c : "");
    return CFDB_ERR_SERIALIZATION_FAILED;
}

static int nomem(build *b)
{
    pb_errorf(b->err, CFDB_ERR_OUT_OF_MEMORY, 0, "protobuf descriptors: out of memory");
    return CFDB_ERR_OUT_OF_MEMORY;
}

static char *pool_str(build *b, cfdb_bytes s)
{
    char *p = cfdb_arena_alloc(&b->pool->arena, (size_t)s.len + 1);
    if (!p)
        return NULL;
    if (s.len)
        memcpy(p, s.ptr, s.len);
    p[s.len] = 0;
    return p;
}

static char *join_name(build *b, const char *scope, cfdb_bytes name)
{
    size_t sl = strlen(scope);
    char *p = cfdb_arena_alloc(&b->pool->arena, sl + 1 + name.len + 1);
    if (!p)
        return NULL;
    size_t k = 0;
    if (sl) {
        memcpy(p, scope, sl);
        p[sl] = '.';
        k = sl + 1;
    }
    if (name.len)
        memcpy(p + k, name.ptr, name.len);
    p[k + name.len] = 0;
    return p;
}

static int add_entry(build *b, const char *name, int kind, void *ptr)
{
    if (b->index_count == b->index_cap) {
        size_t cap = b->index_cap ? b->index_cap * 2 : 64;
        pool_entry *n = realloc(b->index, cap * sizeof *n);
        if (!n)
            return nomem(b);
        b->index = n;
        b->index_cap = cap;
    }
    b->index[b->index_count++] = (pool_entry){ name, kind, ptr };
    return 0;
}

static bool valid_name(cfdb_bytes s)
{
    if (s.len == 0)
        return false;
    for (uint32_t i = 0; i < s.len; i++) {
        uint8_t c = s.ptr[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

/* ---- phase A: names ---- */

static int add_enum(build *b, const cfdb_pb_file *file, const char *scope, const cfdb_pb_msg *ep,
                    const cfdb_pb_enum **out)
{
    cfdb_bytes name = get_str(ep, 0);
    if (!valid_name(name))
        return bad(b, "protobuf descriptors: invalid enum name in %s%s", scope, NULL);
    cfdb_pb_enum *e = cfdb_arena_zalloc(&b->pool->arena, sizeof *e);
    if (!e || !(e->full_name = join_name(b, scope, name)) || !(e->name = pool_str(b, name)))
        return nomem(b);
    e->closed = !file->proto3;
    e->file = file;
    uint32_t n = cfdb_pb_count(ep, bf(ep, 1));
    if (n == 0)
        return bad(b, "protobuf descriptors: enum %s has no values%s", e->full_name, NULL);
    cfdb_pb_enum_value *vals = cfdb_arena_zalloc(&b->pool->arena, n * sizeof *vals);
    if (!vals)
        return nomem(b);
    for (uint32_t i = 0; i < n; i++) {
        const cfdb_pb_msg *vp = cfdb_pb_get(ep, bf(ep, 1), i)->m;
        if (!(vals[i].name = pool_str(b, get_str(vp, 0))))
            return nomem(b);
        vals[i].number = (int32_t)get_int(vp, 1);
    }
    e->values = vals;
    e->value_count = n;
    *out = e;
    return add_entry(b, e->full_name, KIND_ENUM, e);
}

static int add_message(build *b, const cfdb_pb_file *file, const char *scope,
                       const cfdb_pb_msg *dp, const cfdb_pb_message **out)
{
    cfdb_bytes name = get_str(dp, 0);
    if (!valid_name(name))
        return bad(b, "protobuf descriptors: invalid message name in %s%s", scope, NULL);
    cfdb_pb_message *m = cfdb_arena_zalloc(&b->pool->arena, sizeof *m);
    if (!m || !(m->full_name = join_name(b, scope, name)) || !(m->name = pool_str(b, name)))
        return nomem(b);
    m->file = file;
    if (b->msg_count == b->msg_cap) {
        size_t cap = b->msg_cap ? b->msg_cap * 2 : 32;
        pending_msg *n = realloc(b->msgs, cap * sizeof *n);
        if (!n)
            return nomem(b);
        b->msgs = n;
        b->msg_cap = cap;
    }
    b->msgs[b->msg_count++] = (pending_msg){ m, dp, m->full_name };
    int rc = add_entry(b, m->full_name, KIND_MESSAGE, m);
    uint32_t nn = cfdb_pb_count(dp, bf(dp, 2)), ne = cfdb_pb_count(dp, bf(dp, 3));
    for (uint32_t i = 0; i < nn && !rc; i++) {
        const cfdb_pb_message *sub;
        rc = add_message(b, file, m->full_name, cfdb_pb_get(dp, bf(dp, 2), i)->m, &sub);
    }
    for (uint32_t i = 0; i < ne && !rc; i++) {
        const cfdb_pb_enum *sub;
        rc = add_enum(b, file, m->full_name, cfdb_pb_get(dp, bf(dp, 3), i)->m, &sub);
    }
    *out = m;
    return rc;
}

static int add_file(build *b, const cfdb_pb_msg *fp, const cfdb_pb_file **out)
{
    cfdb_pb_file *f = cfdb_arena_zalloc(&b->pool->arena, sizeof *f);
    if (!f || !(f->name = pool_str(b, get_str(fp, 0))) || !(f->package = pool_str(b, get_str(fp, 1))))
        return nomem(b);
    cfdb_bytes syntax = get_str(fp, 6);
    if (cfdb_bytes_eq(syntax, CFDB_BYTES_LIT("proto3")))
        f->proto3 = true;
    else if (syntax.len && !cfdb_bytes_eq(syntax, CFDB_BYTES_LIT("proto2")))
        return bad(b, "protobuf descriptors: %s has unsupported syntax %s", f->name,
                   pool_str(b, syntax));
    f->options = get_str(fp, 5);
    if (f->options.len && !(f->options.ptr = cfdb_arena_dup(&b->pool->arena, f->options.ptr,
                                                            f->options.len)))
        return nomem(b);
    uint32_t nd = cfdb_pb_count(fp, bf(fp, 2));
    uint32_t nm = cfdb_pb_count(fp, bf(fp, 3));
    uint32_t ne = cfdb_pb_count(fp, bf(fp, 4));
    const char **deps = cfdb_arena_zalloc(&b->pool->arena, (nd + 1) * sizeof *deps);
    const cfdb_pb_message **msgs = cfdb_arena_zalloc(&b->pool->arena, (nm + 1) * sizeof *msgs);
    const cfdb_pb_enum **enums = cfdb_arena_zalloc(&b->pool->arena, (ne + 1) * sizeof *enums);
    if (!deps || !msgs || !enums)
        return nomem(b);
    for (uint32_t i = 0; i < nd; i++)
        if (!(deps[i] = pool_str(b, cfdb_pb_get(fp, bf(fp, 2), i)->s)))
            return nomem(b);
    int rc = 0;
    for (uint32_t i = 0; i < nm && !rc; i++)
        rc = add_message(b, f, f->package, cfdb_pb_get(fp, bf(fp, 3), i)->m, &msgs[i]);
    for (uint32_t i = 0; i < ne && !rc; i++)
        rc = add_enum(b, f, f->package, cfdb_pb_get(fp, bf(fp, 4), i)->m, &enums[i]);
    f->dependencies = deps;
    f->dependency_count = nd;
    f->messages = msgs;
    f->message_count = nm;
    f->enums = enums;
    f->enum_count = ne;
    *out = f;
    return rc;
}

/* ---- phase B: fields ---- */

/* Resolves a type name seen in scope (a message's full name). */
static const pool_entry *resolve(build *b, const char *scope, const char *name)
{
    if (name[0] == '.')
        return find_entry(b->index, b->index_count, name + 1);
    size_t sl = strlen(scope), nl = strlen(name);
    char *buf = cfdb_arena_alloc(&b->tmp, sl + nl + 2);
    if (!buf)
        return NULL;
    for (;;) {
        size_t k = 0;
        if (sl) {
            memcpy(buf, scope, sl);
            buf[sl] = '.';
            k = sl + 1;
        }
        memcpy(buf + k, name, nl + 1);
        const pool_entry *e = find_entry(b->index, b->index_count, buf);
        if (e)
            return e;
        if (!sl)
            return NULL;
        while (sl && scope[sl - 1] != '.')
            sl--;
        if (sl)
            sl--;   /* drop the dot too */
    }
}

static int unescape_bytes(build *b, const char *s, cfdb_bytes *out)
{
    size_t n = strlen(s);
    uint8_t *p = cfdb_arena_alloc(&b->pool->arena, n + 1), *q = p;
    if (!p)
        return nomem(b);
    for (size_t i = 0; i < n;) {
        if (s[i] != '\\') {
            *q++ = (uint8_t)s[i++];
            continue;
        }
        if (++i >= n)
            return bad(b, "protobuf descriptors: bad escape in default %s%s", s, NULL);
        char c = s[i];
        if (c >= '0' && c <= '7') {
            unsigned v = 0;
            for (int k = 0; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++)
                v = v * 8 + (unsigned)(s[i++] - '0');
            *q++ = (uint8_t)v;
            continue;
        }
        if (c == 'x') {
            unsigned v = 0;
            int k = 0;
            for (i++; k < 2 && i < n && strchr("0123456789abcdefABCDEF", s[i]); k++, i++)
                v = v * 16 + (unsigned)(s[i] <= '9' ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
            if (!k)
                return bad(b, "protobuf descriptors: bad escape in default %s%s", s, NULL);
            *q++ = (uint8_t)v;
            continue;
        }
        const char *from = "ntr\"'\\?abfv", *to = "\n\t\r\"'\\?\a\b\f\v";
        const char *hit = strchr(from, c);
        if (!hit)
            return bad(b, "protobuf descriptors: bad escape in default %s%s", s, NULL);
        *q++ = (uint8_t)to[hit - from];
        i++;
    }
    *out = cfdb_bytes_make(p, (size_t)(q - p));
    return 0;
}

static int parse_default(build *b, cfdb_pb_field *f, const char *s, const char *msg_name)
{
    char *end = NULL;
    errno = 0;
    switch (f->type) {
    case CFDB_PB_STRING:
        f->default_value.s = cfdb_bytes_str(s);
        return 0;
    case CFDB_PB_BYTES:
        return unescape_bytes(b, s, &f->default_value.s);
    case CFDB_PB_BOOL:
        if (strcmp(s, "true") && strcmp(s, "false"))
            break;
        f->default_value.b = s[0] == 't';
        return 0;
    case CFDB_PB_FLOAT: case CFDB_PB_DOUBLE: {
        double d;
        if (!strcmp(s, "inf"))
            d = INFINITY;
        else if (!strcmp(s, "-inf"))
            d = -INFINITY;
        else if (!strcmp(s, "nan"))
            d = NAN;
        else {
            d = strtod(s, &end);
            if (!*s || *end)
                break;
        }
        if (f->type == CFDB_PB_FLOAT)
            f->default_value.f = (float)d;
        else
            f->default_value.d = d;
        return 0;
    }
    case CFDB_PB_ENUM: {
        const cfdb_pb_enum_value *v = cfdb_pb_enum_by_name(f->enumeration, s);
        if (!v)
            break;
        f->default_value.i = v->number;
        return 0;
    }
    case CFDB_PB_UINT32: case CFDB_PB_UINT64: case CFDB_PB_FIXED32: case CFDB_PB_FIXED64: {
        unsigned long long v = strtoull(s, &end, 0);
        if (!*s || *end || errno || s[0] == '-' ||
            (pb_wire_type(f->type) != PB_WT_FIXED64 && f->type != CFDB_PB_UINT64 &&
             v > UINT32_MAX))
            break;
        f->default_value.u = v;
        return 0;
    }
    default: {
        long long v = strtoll(s, &end, 0);
        bool is32 = f->type == CFDB_PB_INT32 || f->type == CFDB_PB_SINT32 ||
                    f->type == CFDB_PB_SFIXED32;
        if (!*s || *end || errno || (is32 && (v < INT32_MIN || v > INT32_MAX)))
            break;
        f->default_value.i = v;
        return 0;
    }
    }
    return bad(b, "protobuf descriptors: bad default value in %s.%s", msg_name, f->name);
}

static int field_cmp(const void *a, const void *c)
{
    uint32_t x = ((const cfdb_pb_field *)a)->number, y = ((const cfdb_pb_field *)c)->number;
    return x < y ? -1 : x > y;
}

static int build_fields(build *b, pending_msg *pm)
{
    cfdb_pb_message *m = pm->desc;
    const cfdb_pb_msg *dp = pm->proto;
    const bool proto3 = m->file->proto3;
    uint32_t nf = cfdb_pb_count(dp, bf(dp, 1)), no = cfdb_pb_count(dp, bf(dp, 5));

    const char **oneofs = cfdb_arena_zalloc(&b->pool->arena, (no + 1) * sizeof *oneofs);
    cfdb_pb_field *fields = cfdb_arena_zalloc(&b->pool->arena, (nf + 1) * sizeof *fields);
    if (!oneofs || !fields)
        return nomem(b);
    for (uint32_t i = 0; i < no; i++)
        if (!(oneofs[i] = pool_str(b, get_str(cfdb_pb_get(dp, bf(dp, 5), i)->m, 0))))
            return nomem(b);

    cfdb_bytes mopts = get_str(dp, 4);
    if (mopts.len) {
        cfdb_pb_msg *om;
        if (cfdb_pb_decode(&b->tmp, &cfdb_pb_boot_message_options, mopts.ptr, mopts.len, 0, &om,
                           NULL))
            return bad(b, "protobuf descriptors: bad options of %s%s", m->full_name, NULL);
        m->map_entry = get_int(om, 0) != 0;
        if (!(m->options.ptr = cfdb_arena_dup(&b->pool->arena, mopts.ptr, mopts.len)))
            return nomem(b);
        m->options.len = mopts.len;
    }

    for (uint32_t i = 0; i < nf; i++) {
        const cfdb_pb_msg *fp = cfdb_pb_get(dp, bf(dp, 1), i)->m;
        cfdb_pb_field *f = &fields[i];
        cfdb_bytes name = get_str(fp, 0);
        if (!valid_name(name))
            return bad(b, "protobuf descriptors: invalid field name in %s%s", m->full_name, NULL);
        if (!(f->name = pool_str(b, name)))
            return nomem(b);
        int64_t number = get_int(fp, 1), label = has(fp, 2) ? get_int(fp, 2) : CFDB_PB_OPTIONAL;
        int64_t type = get_int(fp, 3);
        if (number < 1 || number > PB_MAX_FIELD_NUMBER)
            return bad(b, "protobuf descriptors: field %s.%s has an invalid number",
                       m->full_name, f->name);
        if (label < CFDB_PB_OPTIONAL || label > CFDB_PB_REPEATED)
            return bad(b, "protobuf descriptors: field %s.%s has an invalid label",
                       m->full_name, f->name);
        f->number = (uint32_t)number;
        f->label = (uint8_t)label;
        if (has(fp, 4)) {
            if (!(f->type_name = pool_str(b, get_str(fp, 4))))
                return nomem(b);
            const pool_entry *e = resolve(b, pm->scope, f->type_name);
            if (!e)
                return bad(b, "protobuf descriptors: type %s of field %s is not defined",
                           f->type_name, f->name);
            if (type == 0)
                type = e->kind == KIND_ENUM ? CFDB_PB_ENUM : CFDB_PB_MESSAGE;
            if (e->kind == KIND_ENUM && type == CFDB_PB_ENUM)
                f->enumeration = e->ptr;
            else if (e->kind == KIND_MESSAGE && (type == CFDB_PB_MESSAGE || type == CFDB_PB_GROUP))
                f->message = e->ptr;
            else
                return bad(b, "protobuf descriptors: field %s does not match type %s", f->name,
                           f->type_name);
        } else if (type == CFDB_PB_MESSAGE || type == CFDB_PB_GROUP || type == CFDB_PB_ENUM) {
            return bad(b, "protobuf descriptors: field %s.%s has no type name", m->full_name,
                       f->name);
        }
        if (type < CFDB_PB_DOUBLE || type > CFDB_PB_SINT64)
            return bad(b, "protobuf descriptors: field %s.%s has an invalid type", m->full_name,
                       f->name);
        f->type = (uint8_t)type;
        f->oneof = -1;
        if (has(fp, 7)) {
            int64_t o = get_int(fp, 7);
            if (o < 0 || o >= no || label == CFDB_PB_REPEATED)
                return bad(b, "protobuf descriptors: field %s.%s has an invalid oneof",
                           m->full_name, f->name);
            f->oneof = (int32_t)o;
        }
        bool p3opt = get_int(fp, 8) != 0;
        f->presence = label != CFDB_PB_REPEATED &&
                      (!proto3 || p3opt || f->oneof >= 0 || type == CFDB_PB_MESSAGE ||
                       type == CFDB_PB_GROUP);
        cfdb_bytes fopts = get_str(fp, 6);
        bool packed = proto3;
        if (fopts.len) {
            cfdb_pb_msg *om;
            if (cfdb_pb_decode(&b->tmp, &cfdb_pb_boot_field_options, fopts.ptr, fopts.len, 0,
                               &om, NULL))
                return bad(b, "protobuf descriptors: bad options of field %s.%s", m->full_name,
                           f->name);
            if (has(om, 0))
                packed = get_int(om, 0) != 0;
            if (!(f->options.ptr = cfdb_arena_dup(&b->pool->arena, fopts.ptr, fopts.len)))
                return nomem(b);
            f->options.len = fopts.len;
        }
        f->packed = packed && label == CFDB_PB_REPEATED && pb_packable(f->type);
        if (f->enumeration)
            f->default_value.i = f->enumeration->values[0].number;
        if (has(fp, 5)) {
            char *dv = pool_str(b, get_str(fp, 5));
            if (!dv)
                return nomem(b);
            if (label == CFDB_PB_REPEATED || type == CFDB_PB_MESSAGE || type == CFDB_PB_GROUP)
                return bad(b, "protobuf descriptors: field %s.%s cannot have a default",
                           m->full_name, f->name);
            int rc = parse_default(b, f, dv, m->full_name);
            if (rc)
                return rc;
            f->has_default = true;
        }
    }
    if (nf > 1)
        qsort(fields, nf, sizeof *fields, field_cmp);
    for (uint32_t i = 0; i < nf; i++) {
        fields[i].index = i;
        if (i && fields[i].number == fields[i - 1].number)
            return bad(b, "protobuf descriptors: field number used twice in %s%s", m->full_name,
                       NULL);
    }
    m->fields = fields;
    m->field_count = nf;
    m->oneofs = oneofs;
    m->oneof_count = no;
    return 0;
}

/* ---- batches ---- */

static int add_batch(cfdb_pb_pool *pool, const cfdb_pb_msg *const *protos, size_t count,
                     build *b)
{
    for (size_t i = 0; i < pool->index_count; i++) {
        int rc = add_entry(b, pool->index[i].name, pool->index[i].kind, pool->index[i].ptr);
        if (rc)
            return rc;
    }
    const cfdb_pb_file **files = calloc(count + 1, sizeof *files);
    if (!files)
        return nomem(b);
    int rc = 0;
    for (size_t i = 0; i < count && !rc; i++) {
        rc = add_file(b, protos[i], &files[i]);
        if (!rc && cfdb_pb_pool_file(pool, files[i]->name))
            rc = bad(b, "protobuf descriptors: file %s is already loaded%s", files[i]->name, NULL);
        for (size_t k = 0; k < i && !rc; k++)
            if (strcmp(files[k]->name, files[i]->name) == 0)
                rc = bad(b, "protobuf descriptors: file %s appears twice%s", files[i]->name, NULL);
    }
    if (!rc && b->index_count > 1) {
        qsort(b->index, b->index_count, sizeof *b->index, entry_cmp);
        for (size_t i = 1; i < b->index_count && !rc; i++)
            if (strcmp(b->index[i].name, b->index[i - 1].name) == 0)
                rc = bad(b, "protobuf descriptors: %s is defined twice%s", b->index[i].name, NULL);
    }
    for (size_t i = 0; i < b->msg_count && !rc; i++)
        rc = build_fields(b, &b->msgs[i]);
    if (!rc) {
        const cfdb_pb_file **all =
            realloc(pool->files, (pool->file_count + count + 1) * sizeof *all);
        if (!all) {
            rc = nomem(b);
        } else {
            pool->files = all;
            memcpy(all + pool->file_count, files, count * sizeof *files);
            pool->file_count += count;
            free(pool->index);
            pool->index = b->index;
            pool->index_count = b->index_count;
            b->index = NULL;
        }
    }
    free(files);
    return rc;
}

static int run_batch(cfdb_pb_pool *pool, build *b, const cfdb_pb_msg *const *protos,
                     size_t count)
{
    int rc = add_batch(pool, protos, count, b);
    free(b->index);
    free(b->msgs);
    cfdb_arena_free(&b->tmp);
    return rc;
}

int cfdb_pb_pool_add_files(cfdb_pb_pool *pool, const cfdb_bytes *files, size_t count,
                           cfdb_pb_error *err)
{
    build b = { .pool = pool, .err = err };
    cfdb_arena_init(&b.tmp);
    if (err)
        memset(err, 0, sizeof *err);
    const cfdb_pb_msg **protos = cfdb_arena_zalloc(&b.tmp, (count + 1) * sizeof *protos);
    if (!protos) {
        cfdb_arena_free(&b.tmp);
        return nomem(&b);
    }
    for (size_t i = 0; i < count; i++) {
        cfdb_pb_msg *m;
        int rc = cfdb_pb_decode(&b.tmp, &cfdb_pb_boot_file, files[i].ptr, files[i].len, 0, &m,
                                err);
        if (rc) {
            cfdb_arena_free(&b.tmp);
            return rc;
        }
        protos[i] = m;
    }
    return run_batch(pool, &b, protos, count);
}

int cfdb_pb_pool_add_set(cfdb_pb_pool *pool, const uint8_t *data, size_t len, cfdb_pb_error *err)
{
    build b = { .pool = pool, .err = err };
    cfdb_arena_init(&b.tmp);
    cfdb_pb_msg *set;
    int rc = cfdb_pb_decode(&b.tmp, &cfdb_pb_boot_file_set, data, len, 0, &set, err);
    if (rc) {
        cfdb_arena_free(&b.tmp);
        return rc;
    }
    const cfdb_pb_field *ff = bf(set, 0);
    uint32_t n = cfdb_pb_count(set, ff);
    const cfdb_pb_msg **protos = cfdb_arena_zalloc(&b.tmp, (n + 1) * sizeof *protos);
    if (!protos) {
        cfdb_arena_free(&b.tmp);
        return nomem(&b);
    }
    for (uint32_t i = 0; i < n; i++)
        protos[i] = cfdb_pb_get(set, ff, i)->m;
    return run_batch(pool, &b, protos, n);
}
