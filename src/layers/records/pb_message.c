/* SPDX-License-Identifier: Apache-2.0 */
/* Dynamic protobuf messages: creation, field access, oneof rules, MergeFrom.
 *
 * Invariants: a message's slots follow its type's fields one for one; a singular slot's
 * vals is &one and its count is 0 or 1; a repeated slot's vals holds cap >= count values in
 * the message's arena. Setting a oneof member clears every other member of that oneof.
 * Strings given to setters are copied into the arena, so a message never points into
 * caller memory except where decoding was asked not to copy its input. */
#include <string.h>

#include "pb_internal.h"

const cfdb_pb_field *cfdb_pb_field_by_number(const cfdb_pb_message *m, uint32_t number)
{
    uint32_t lo = 0, hi = m->field_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t n = m->fields[mid].number;
        if (n == number)
            return &m->fields[mid];
        if (n < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const cfdb_pb_field *cfdb_pb_field_by_name(const cfdb_pb_message *m, const char *name)
{
    for (uint32_t i = 0; i < m->field_count; i++)
        if (strcmp(m->fields[i].name, name) == 0)
            return &m->fields[i];
    return NULL;
}

const cfdb_pb_enum_value *cfdb_pb_enum_by_number(const cfdb_pb_enum *e, int32_t number)
{
    for (uint32_t i = 0; i < e->value_count; i++)
        if (e->values[i].number == number)
            return &e->values[i];
    return NULL;
}

const cfdb_pb_enum_value *cfdb_pb_enum_by_name(const cfdb_pb_enum *e, const char *name)
{
    for (uint32_t i = 0; i < e->value_count; i++)
        if (strcmp(e->values[i].name, name) == 0)
            return &e->values[i];
    return NULL;
}

cfdb_pb_msg *cfdb_pb_msg_new(cfdb_arena *arena, const cfdb_pb_message *type)
{
    size_t n = type->field_count;
    cfdb_pb_msg *m = cfdb_arena_zalloc(arena, sizeof *m + n * sizeof(pb_slot));
    if (!m)
        return NULL;
    m->type = type;
    m->arena = arena;
    for (size_t i = 0; i < n; i++)
        if (!cfdb_pb_field_repeated(&type->fields[i]))
            m->slots[i].vals = &m->slots[i].one;
    return m;
}

const cfdb_pb_message *cfdb_pb_msg_type(const cfdb_pb_msg *msg)
{
    return msg->type;
}

static const pb_slot *slot_of(const cfdb_pb_msg *msg, const cfdb_pb_field *f)
{
    if (!f || f->index >= msg->type->field_count || &msg->type->fields[f->index] != f)
        return NULL;
    return &msg->slots[f->index];
}

static bool value_is_default(const cfdb_pb_field *f, const cfdb_pb_value *v)
{
    switch (f->type) {
    case CFDB_PB_STRING: case CFDB_PB_BYTES:
        return v->s.len == 0;
    case CFDB_PB_MESSAGE: case CFDB_PB_GROUP:
        return v->m == NULL;
    case CFDB_PB_BOOL:
        return !v->b;
    case CFDB_PB_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &v->f, 4);
        return bits == 0;
    }
    default:
        return v->u == 0;   /* integers, enums and double share the 64-bit word */
    }
}

bool cfdb_pb_has(const cfdb_pb_msg *msg, const cfdb_pb_field *f)
{
    const pb_slot *s = slot_of(msg, f);
    if (!s || s->count == 0)
        return false;
    if (cfdb_pb_field_repeated(f) || f->presence)
        return true;
    return !value_is_default(f, &s->vals[0]);
}

uint32_t cfdb_pb_count(const cfdb_pb_msg *msg, const cfdb_pb_field *f)
{
    const pb_slot *s = slot_of(msg, f);
    return s ? s->count : 0;
}

const cfdb_pb_value *cfdb_pb_get(const cfdb_pb_msg *msg, const cfdb_pb_field *f, uint32_t i)
{
    const pb_slot *s = slot_of(msg, f);
    if (!s || i >= s->count)
        return NULL;
    return &s->vals[i];
}

cfdb_pb_value cfdb_pb_get_or_default(const cfdb_pb_msg *msg, const cfdb_pb_field *f)
{
    const pb_slot *s = slot_of(msg, f);
    if (s && s->count && !cfdb_pb_field_repeated(f))
        return s->vals[0];
    if (f && !cfdb_pb_field_repeated(f))
        return f->default_value;
    cfdb_pb_value zero;
    memset(&zero, 0, sizeof zero);
    return zero;
}

const cfdb_pb_field *cfdb_pb_which_oneof(const cfdb_pb_msg *msg, uint32_t oneof)
{
    const cfdb_pb_message *t = msg->type;
    for (uint32_t i = 0; i < t->field_count; i++)
        if (t->fields[i].oneof == (int32_t)oneof && msg->slots[i].count)
            return &t->fields[i];
    return NULL;
}

static void clear_oneof_others(cfdb_pb_msg *msg, const cfdb_pb_field *f)
{
    if (f->oneof < 0)
        return;
    const cfdb_pb_message *t = msg->type;
    for (uint32_t i = 0; i < t->field_count; i++)
        if (i != f->index && t->fields[i].oneof == f->oneof)
            msg->slots[i].count = 0;
}

static bool is_message_type(const cfdb_pb_field *f)
{
    return f->type == CFDB_PB_MESSAGE || f->type == CFDB_PB_GROUP;
}

/* Copies string payloads into the arena; other values are taken as they are. */
static int own_value(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_value *v)
{
    if ((f->type == CFDB_PB_STRING || f->type == CFDB_PB_BYTES) && v->s.len) {
        void *p = cfdb_arena_dup(msg->arena, v->s.ptr, v->s.len);
        if (!p)
            return CFDB_ERR_OUT_OF_MEMORY;
        v->s.ptr = p;
    }
    return 0;
}

int cfdb_pb_set(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_value v)
{
    if (!slot_of(msg, f) || cfdb_pb_field_repeated(f) || is_message_type(f))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    int rc = own_value(msg, f, &v);
    if (rc)
        return rc;
    clear_oneof_others(msg, f);
    pb_slot *s = &msg->slots[f->index];
    s->one = v;
    s->count = 1;
    return 0;
}

/* Room for `more` values in a repeated slot, growing by doubling inside the arena. */
static int reserve(cfdb_pb_msg *msg, pb_slot *s, uint32_t more)
{
    if (s->cap - s->count >= more)
        return 0;
    uint64_t want = (uint64_t)s->count + more;
    uint64_t cap = s->cap ? s->cap : 4;
    while (cap < want)
        cap *= 2;
    if (cap > UINT32_MAX / sizeof(cfdb_pb_value))
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_pb_value *nv = cfdb_arena_alloc(msg->arena, (size_t)cap * sizeof *nv);
    if (!nv)
        return CFDB_ERR_OUT_OF_MEMORY;
    if (s->count)
        memcpy(nv, s->vals, s->count * sizeof *nv);
    s->vals = nv;
    s->cap = (uint32_t)cap;
    return 0;
}

int cfdb_pb_add(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_value v)
{
    if (!slot_of(msg, f) || !cfdb_pb_field_repeated(f) || is_message_type(f))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    pb_slot *s = &msg->slots[f->index];
    int rc = own_value(msg, f, &v);
    if (!rc)
        rc = reserve(msg, s, 1);
    if (rc)
        return rc;
    s->vals[s->count++] = v;
    return 0;
}

int cfdb_pb_mutable(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_msg **out)
{
    *out = NULL;
    if (!slot_of(msg, f) || cfdb_pb_field_repeated(f) || !is_message_type(f))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    pb_slot *s = &msg->slots[f->index];
    if (!s->count || !s->one.m) {
        cfdb_pb_msg *m = cfdb_pb_msg_new(msg->arena, f->message);
        if (!m)
            return CFDB_ERR_OUT_OF_MEMORY;
        clear_oneof_others(msg, f);
        s->one.m = m;
        s->count = 1;
    }
    *out = s->one.m;
    return 0;
}

int cfdb_pb_add_msg(cfdb_pb_msg *msg, const cfdb_pb_field *f, cfdb_pb_msg **out)
{
    *out = NULL;
    if (!slot_of(msg, f) || !cfdb_pb_field_repeated(f) || !is_message_type(f))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    pb_slot *s = &msg->slots[f->index];
    cfdb_pb_msg *m = cfdb_pb_msg_new(msg->arena, f->message);
    if (!m)
        return CFDB_ERR_OUT_OF_MEMORY;
    int rc = reserve(msg, s, 1);
    if (rc)
        return rc;
    s->vals[s->count++].m = m;
    *out = m;
    return 0;
}

void cfdb_pb_clear(cfdb_pb_msg *msg, const cfdb_pb_field *f)
{
    if (slot_of(msg, f))
        msg->slots[f->index].count = 0;
}

uint32_t cfdb_pb_unknown_count(const cfdb_pb_msg *msg)
{
    return msg->unknown_count;
}

cfdb_bytes cfdb_pb_unknown(const cfdb_pb_msg *msg, uint32_t i)
{
    return i < msg->unknown_count ? msg->unknown[i] : (cfdb_bytes){ NULL, 0 };
}

static int merge(cfdb_pb_msg *dst, const cfdb_pb_msg *src, int depth);

static int copy_msg(cfdb_arena *a, const cfdb_pb_msg *src, int depth, cfdb_pb_msg **out)
{
    cfdb_pb_msg *m = cfdb_pb_msg_new(a, src->type);
    if (!m)
        return CFDB_ERR_OUT_OF_MEMORY;
    int rc = merge(m, src, depth);
    if (rc)
        return rc;
    *out = m;
    return 0;
}

int cfdb_pb_merge(cfdb_pb_msg *dst, const cfdb_pb_msg *src)
{
    return merge(dst, src, 0);
}

/* Nested messages are merged recursively, at most CFDB_PB_MAX_DEPTH deep (1044 past it, as
 * the codec refuses such messages), so a caller-built chain cannot exhaust the stack. */
static int merge(cfdb_pb_msg *dst, const cfdb_pb_msg *src, int depth)
{
    if (dst->type != src->type)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (depth > CFDB_PB_MAX_DEPTH)
        return CFDB_ERR_SERIALIZATION_FAILED;
    const cfdb_pb_message *t = src->type;
    int rc = 0;
    for (uint32_t i = 0; i < t->field_count && !rc; i++) {
        const cfdb_pb_field *f = &t->fields[i];
        const pb_slot *ss = &src->slots[i];
        pb_slot *ds = &dst->slots[i];
        if (!ss->count)
            continue;
        if (cfdb_pb_field_repeated(f)) {
            rc = reserve(dst, ds, ss->count);
            for (uint32_t k = 0; k < ss->count && !rc; k++) {
                cfdb_pb_value v = ss->vals[k];
                if (is_message_type(f))
                    rc = copy_msg(dst->arena, ss->vals[k].m, depth + 1, &v.m);
                else
                    rc = own_value(dst, f, &v);
                if (!rc)
                    ds->vals[ds->count++] = v;
            }
        } else if (is_message_type(f)) {
            cfdb_pb_msg *sub;
            rc = cfdb_pb_mutable(dst, f, &sub);
            if (!rc && ss->one.m)
                rc = merge(sub, ss->one.m, depth + 1);
        } else {
            rc = cfdb_pb_set(dst, f, ss->one);
        }
    }
    if (!rc && src->unknown_count) {
        uint64_t n = (uint64_t)dst->unknown_count + src->unknown_count;
        cfdb_bytes *u = cfdb_arena_alloc(dst->arena, (size_t)n * sizeof *u);
        if (!u)
            return CFDB_ERR_OUT_OF_MEMORY;
        if (dst->unknown_count)
            memcpy(u, dst->unknown, dst->unknown_count * sizeof *u);
        for (uint32_t k = 0; k < src->unknown_count && !rc; k++)
            rc = cfdb_arena_dup_bytes(dst->arena, src->unknown[k], &u[dst->unknown_count + k]);
        dst->unknown = u;
        dst->unknown_count = dst->unknown_cap = (uint32_t)n;
    }
    return rc;
}

bool cfdb_pb_utf8_valid(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += len;
    }
    return true;
}
