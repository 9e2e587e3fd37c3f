/* SPDX-License-Identifier: Apache-2.0 */
/* Protobuf encoding of dynamic messages.
 *
 * Output order is the Java runtime's: known fields by increasing number (repeated values in
 * order, packed when the field is packed and has values), then the unknown fields as they
 * were read. Singular fields with presence are written when set; proto3 fields without
 * presence only when not default (float/double compared by bits, so -0.0 is written).
 * Negative int32 and enum values take 10 bytes (sign-extended), sint* use zigzag.
 *
 * cfdb_pb_encoded_size walks the tree once and caches every message's size in the message;
 * the writer then relies on those sizes, so it never measures twice. Sizes above 2 GiB fail
 * with 1044 (the protobuf limit), before anything is written, and so do messages nested
 * deeper than CFDB_PB_MAX_DEPTH, which the decoder refuses: what is written can be read
 * back, and the recursion of both walks is bounded.
 */
#include <string.h>

#include "pb_internal.h"

static bool is_msg(const cfdb_pb_field *f)
{
    return f->type == CFDB_PB_MESSAGE || f->type == CFDB_PB_GROUP;
}

static uint64_t varint_value(const cfdb_pb_field *f, const cfdb_pb_value *v)
{
    switch (f->type) {
    case CFDB_PB_SINT32:
        return (uint32_t)(((uint32_t)(int32_t)v->i << 1) ^ (uint32_t)((int32_t)v->i >> 31));
    case CFDB_PB_SINT64:
        return pb_zigzag64(v->i);
    case CFDB_PB_BOOL:
        return v->b ? 1 : 0;
    case CFDB_PB_INT32: case CFDB_PB_ENUM:
        return (uint64_t)(int64_t)(int32_t)v->i;
    case CFDB_PB_UINT32:
        return (uint32_t)v->u;
    default:
        return v->u;
    }
}

static bool write_singular(const cfdb_pb_field *f, const pb_slot *s)
{
    if (!s->count)
        return false;
    const cfdb_pb_value *v = &s->vals[0];
    if (is_msg(f))
        return v->m != NULL;
    if (f->presence)
        return true;
    switch (f->type) {
    case CFDB_PB_STRING: case CFDB_PB_BYTES:
        return v->s.len != 0;
    case CFDB_PB_BOOL:
        return v->b;
    case CFDB_PB_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &v->f, 4);
        return bits != 0;
    }
    case CFDB_PB_INT32: case CFDB_PB_ENUM: case CFDB_PB_SINT32: case CFDB_PB_SFIXED32:
        return (int32_t)v->i != 0;
    case CFDB_PB_UINT32: case CFDB_PB_FIXED32:
        return (uint32_t)v->u != 0;
    default:
        return v->u != 0;
    }
}

static int msg_size(cfdb_pb_msg *m, int depth, uint64_t *out);

/* Size of one value without its tag (for a group: body plus end tag). */
static int value_size(const cfdb_pb_field *f, const cfdb_pb_value *v, int depth, uint64_t *out)
{
    switch (pb_wire_type(f->type)) {
    case PB_WT_VARINT:
        *out = pb_varint_size(varint_value(f, v));
        return 0;
    case PB_WT_FIXED32:
        *out = 4;
        return 0;
    case PB_WT_FIXED64:
        *out = 8;
        return 0;
    case PB_WT_LEN:
        if (f->type == CFDB_PB_MESSAGE) {
            uint64_t n;
            int rc = msg_size(v->m, depth + 1, &n);
            *out = pb_varint_size(n) + n;
            return rc;
        }
        *out = pb_varint_size(v->s.len) + v->s.len;
        return 0;
    default: {   /* group */
        uint64_t n;
        int rc = msg_size(v->m, depth + 1, &n);
        *out = n + pb_varint_size((uint64_t)f->number << 3 | PB_WT_EGROUP);
        return rc;
    }
    }
}

static uint64_t packed_payload(const cfdb_pb_field *f, const pb_slot *s)
{
    int wt = pb_wire_type(f->type);
    if (wt == PB_WT_FIXED32)
        return (uint64_t)s->count * 4;
    if (wt == PB_WT_FIXED64)
        return (uint64_t)s->count * 8;
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->count; i++)
        n += pb_varint_size(varint_value(f, &s->vals[i]));
    return n;
}

static int msg_size(cfdb_pb_msg *m, int depth, uint64_t *out)
{
    if (depth > CFDB_PB_MAX_DEPTH)
        return CFDB_ERR_SERIALIZATION_FAILED;   /* the decoder would refuse it */
    const cfdb_pb_message *t = m->type;
    uint64_t total = 0;
    for (uint32_t i = 0; i < t->field_count; i++) {
        const cfdb_pb_field *f = &t->fields[i];
        const pb_slot *s = &m->slots[i];
        size_t tag = pb_varint_size((uint64_t)f->number << 3);
        if (cfdb_pb_field_repeated(f)) {
            if (!s->count)
                continue;
            if (f->packed && pb_packable(f->type)) {
                uint64_t n = packed_payload(f, s);
                total += tag + pb_varint_size(n) + n;
                continue;
            }
            for (uint32_t k = 0; k < s->count; k++) {
                uint64_t n;
                int rc = value_size(f, &s->vals[k], depth, &n);
                if (rc)
                    return rc;
                total += tag + n;
            }
        } else if (write_singular(f, s)) {
            uint64_t n;
            int rc = value_size(f, &s->vals[0], depth, &n);
            if (rc)
                return rc;
            total += tag + n;
        }
        if (total > PB_MAX_MESSAGE_SIZE)
            break;
    }
    for (uint32_t i = 0; i < m->unknown_count; i++)
        total += m->unknown[i].len;
    if (total > PB_MAX_MESSAGE_SIZE)
        return CFDB_ERR_SERIALIZATION_FAILED;
    m->cached_size = (uint32_t)total;
    *out = total;
    return 0;
}

static uint8_t *put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        *p++ = (uint8_t)v;
        v >>= 8;
    }
    return p;
}

static uint8_t *write_msg(const cfdb_pb_msg *m, uint8_t *p);

static uint8_t *write_raw(const cfdb_pb_field *f, const cfdb_pb_value *v, uint8_t *p)
{
    switch (pb_wire_type(f->type)) {
    case PB_WT_VARINT:
        return pb_put_varint(p, varint_value(f, v));
    case PB_WT_FIXED32: {
        uint32_t bits;
        if (f->type == CFDB_PB_FLOAT)
            memcpy(&bits, &v->f, 4);
        else
            bits = (uint32_t)v->u;
        return put_le(p, bits, 4);
    }
    case PB_WT_FIXED64:
        return put_le(p, v->u, 8);   /* double shares the 64-bit word */
    case PB_WT_LEN:
        if (f->type == CFDB_PB_MESSAGE) {
            p = pb_put_varint(p, v->m->cached_size);
            return write_msg(v->m, p);
        }
        p = pb_put_varint(p, v->s.len);
        if (v->s.len)
            memcpy(p, v->s.ptr, v->s.len);
        return p + v->s.len;
    default:
        p = write_msg(v->m, p);
        return pb_put_varint(p, (uint64_t)f->number << 3 | PB_WT_EGROUP);
    }
}

static uint8_t *write_msg(const cfdb_pb_msg *m, uint8_t *p)
{
    const cfdb_pb_message *t = m->type;
    for (uint32_t i = 0; i < t->field_count; i++) {
        const cfdb_pb_field *f = &t->fields[i];
        const pb_slot *s = &m->slots[i];
        uint64_t tag = (uint64_t)f->number << 3 | (uint64_t)pb_wire_type(f->type);
        if (cfdb_pb_field_repeated(f)) {
            if (!s->count)
                continue;
            if (f->packed && pb_packable(f->type)) {
                p = pb_put_varint(p, (uint64_t)f->number << 3 | PB_WT_LEN);
                p = pb_put_varint(p, packed_payload(f, s));
                for (uint32_t k = 0; k < s->count; k++)
                    p = write_raw(f, &s->vals[k], p);
                continue;
            }
            for (uint32_t k = 0; k < s->count; k++) {
                p = pb_put_varint(p, tag);
                p = write_raw(f, &s->vals[k], p);
            }
        } else if (write_singular(f, s)) {
            p = pb_put_varint(p, tag);
            p = write_raw(f, &s->vals[0], p);
        }
    }
    for (uint32_t i = 0; i < m->unknown_count; i++) {
        if (m->unknown[i].len)
            memcpy(p, m->unknown[i].ptr, m->unknown[i].len);
        p += m->unknown[i].len;
    }
    return p;
}

int cfdb_pb_encoded_size(cfdb_pb_msg *msg, size_t *size)
{
    uint64_t n;
    int rc = msg_size(msg, 0, &n);
    if (rc)
        return rc;
    *size = (size_t)n;
    return 0;
}

int cfdb_pb_encode_to(cfdb_pb_msg *msg, uint8_t *buf, size_t cap, size_t *written)
{
    size_t n;
    int rc = cfdb_pb_encoded_size(msg, &n);
    if (rc)
        return rc;
    if (n > cap)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    uint8_t *end = write_msg(msg, buf);
    *written = (size_t)(end - buf);
    return *written == n ? 0 : CFDB_ERR_INTERNAL_ERROR;
}

int cfdb_pb_encode(cfdb_pb_msg *msg, cfdb_arena *arena, cfdb_bytes *out)
{
    size_t n;
    int rc = cfdb_pb_encoded_size(msg, &n);
    if (rc)
        return rc;
    uint8_t *buf = cfdb_arena_alloc(arena, n ? n : 1);
    if (!buf)
        return CFDB_ERR_OUT_OF_MEMORY;
    uint8_t *end = write_msg(msg, buf);
    if ((size_t)(end - buf) != n)
        return CFDB_ERR_INTERNAL_ERROR;
    *out = cfdb_bytes_make(buf, n);
    return 0;
}
