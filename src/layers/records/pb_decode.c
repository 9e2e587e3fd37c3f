/* SPDX-License-Identifier: Apache-2.0 */
/* Protobuf decoding by descriptor into a dynamic message.
 *
 * Two passes over each message body. The first reads every tag and the extent of its value
 * (checking varints, lengths, fixed widths, group nesting and packed payloads), counting the
 * values of each repeated field into its slot's cap and the unknown fields into unknown_cap.
 * Then one arena array holds all repeated values and the unknown slices, and the second pass
 * fills them. Memory is therefore a fixed number of arena allocations per message, bounded
 * by a constant times the input size.
 *
 * Semantics follow the protobuf runtimes: the last value of a singular scalar wins; repeated
 * occurrences of a singular message are merged; a repeated scalar accepts packed and unpacked
 * forms whatever the descriptor says; a field that arrives with another wire type, an
 * unknown field number, and a closed-enum value that the enum does not list are unknown
 * fields (raw tag+value; an unknown value inside a packed run becomes its own varint field).
 * Setting a oneof member clears the others, so the last one read wins. int32 and enum values
 * are the low 32 bits of the varint, sign-extended; bool is any non-zero varint.
 *
 * Memory: the arena bytes one decode uses are capped at CFDB_PB_DECODE_BUDGET_BASE +
 * CFDB_PB_DECODE_BUDGET_PER_BYTE x input size (1044 past it), since a type with many fields
 * makes even an empty nested message cost one slot per field.
 */
#include <string.h>

#include "pb_internal.h"

typedef struct dctx {
    cfdb_arena *arena;
    const uint8_t *base;
    unsigned flags;
    cfdb_pb_error *err;
    size_t start_total;     /* arena->total when decoding began */
    size_t budget;          /* arena bytes this decode may use */
} dctx;

static int fail(dctx *c, const uint8_t *at, const char *why, uint32_t number)
{
    pb_errorf(c->err, CFDB_ERR_SERIALIZATION_FAILED, (size_t)(at - c->base),
              "protobuf: %s (field %u)", why, number);
    return CFDB_ERR_SERIALIZATION_FAILED;
}

static int oom(dctx *c, const uint8_t *at)
{
    pb_errorf(c->err, CFDB_ERR_OUT_OF_MEMORY, (size_t)(at - c->base), "protobuf: out of memory");
    return CFDB_ERR_OUT_OF_MEMORY;
}

/* Memory bound: a type with many fields makes each (even empty) nested message cost its
 * slots, so the arena bytes a decode may use are capped in proportion to the input. */
static int check_budget(dctx *c, const uint8_t *at)
{
    if (c->arena->total - c->start_total <= c->budget)
        return 0;
    pb_errorf(c->err, CFDB_ERR_SERIALIZATION_FAILED, (size_t)(at - c->base),
              "protobuf: decoding would use more than %zu bytes of memory", c->budget);
    return CFDB_ERR_SERIALIZATION_FAILED;
}

static int read_tag(dctx *c, const uint8_t **pp, const uint8_t *end, uint32_t *number, int *wt)
{
    const uint8_t *at = *pp;
    uint64_t tag;
    if (!pb_get_varint(pp, end, &tag) || tag > UINT32_MAX)
        return fail(c, at, "malformed tag", 0);
    *number = (uint32_t)(tag >> 3);
    *wt = (int)(tag & 7);
    if (*number == 0)
        return fail(c, at, "field number 0", 0);
    if (*wt > PB_WT_FIXED32)
        return fail(c, at, "invalid wire type", *number);
    return 0;
}

/* Moves *pp past one value of wire type wt (for a group: past its end-group tag). */
static int skip_value(dctx *c, const uint8_t **pp, const uint8_t *end, uint32_t number, int wt,
                      int depth)
{
    const uint8_t *p = *pp;
    uint64_t v;
    switch (wt) {
    case PB_WT_VARINT:
        if (!pb_get_varint(&p, end, &v))
            return fail(c, p, "truncated or overlong varint", number);
        break;
    case PB_WT_FIXED64:
        if (end - p < 8)
            return fail(c, p, "truncated fixed64", number);
        p += 8;
        break;
    case PB_WT_FIXED32:
        if (end - p < 4)
            return fail(c, p, "truncated fixed32", number);
        p += 4;
        break;
    case PB_WT_LEN:
        if (!pb_get_varint(&p, end, &v))
            return fail(c, p, "truncated length", number);
        if (v > (uint64_t)(end - p))
            return fail(c, p, "length past the end of the input", number);
        p += v;
        break;
    case PB_WT_SGROUP:
        if (depth >= CFDB_PB_MAX_DEPTH)
            return fail(c, p, "groups nested too deeply", number);
        for (;;) {
            if (p >= end)
                return fail(c, p, "group without end", number);
            uint32_t n;
            int w;
            int rc = read_tag(c, &p, end, &n, &w);
            if (rc)
                return rc;
            if (w == PB_WT_EGROUP) {
                if (n != number)
                    return fail(c, p, "end-group of another group", n);
                break;
            }
            rc = skip_value(c, &p, end, n, w, depth + 1);
            if (rc)
                return rc;
        }
        break;
    default:
        return fail(c, p, "unexpected end-group", number);
    }
    *pp = p;
    return 0;
}

static bool enum_known(const cfdb_pb_field *f, int64_t v)
{
    return !f->enumeration || !f->enumeration->closed ||
           cfdb_pb_enum_by_number(f->enumeration, (int32_t)v) != NULL;
}

static cfdb_pb_value scalar_from_varint(uint8_t type, uint64_t raw)
{
    cfdb_pb_value v;
    memset(&v, 0, sizeof v);
    switch (type) {
    case CFDB_PB_INT32: case CFDB_PB_ENUM:
        v.i = (int32_t)(uint32_t)raw;
        break;
    case CFDB_PB_UINT32:
        v.u = (uint32_t)raw;
        break;
    case CFDB_PB_SINT32: {
        uint32_t u = (uint32_t)raw;
        v.i = (int32_t)((u >> 1) ^ (0u - (u & 1)));
        break;
    }
    case CFDB_PB_SINT64:
        v.i = pb_unzigzag64(raw);
        break;
    case CFDB_PB_BOOL:
        v.b = raw != 0;
        break;
    default:   /* int64, uint64 */
        v.u = raw;
        break;
    }
    return v;
}

static uint64_t load_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static cfdb_pb_value scalar_from_fixed(uint8_t type, const uint8_t *p)
{
    cfdb_pb_value v;
    memset(&v, 0, sizeof v);
    switch (type) {
    case CFDB_PB_DOUBLE: {
        uint64_t bits = load_le(p, 8);
        memcpy(&v.d, &bits, 8);
        break;
    }
    case CFDB_PB_FLOAT: {
        uint32_t bits = (uint32_t)load_le(p, 4);
        memcpy(&v.f, &bits, 4);
        break;
    }
    case CFDB_PB_FIXED32:
        v.u = (uint32_t)load_le(p, 4);
        break;
    case CFDB_PB_SFIXED32:
        v.i = (int32_t)(uint32_t)load_le(p, 4);
        break;
    default:   /* fixed64, sfixed64 */
        v.u = load_le(p, 8);
        break;
    }
    return v;
}

/* Counts the values of a packed payload; fails when it does not hold whole values. */
static int count_packed(dctx *c, const cfdb_pb_field *f, const uint8_t *p, const uint8_t *end,
                        uint32_t *n)
{
    int wt = pb_wire_type(f->type);
    size_t len = (size_t)(end - p);
    if (wt == PB_WT_FIXED32 || wt == PB_WT_FIXED64) {
        size_t w = wt == PB_WT_FIXED32 ? 4 : 8;
        if (len % w)
            return fail(c, p, "packed fixed-width data does not divide", f->number);
        *n = (uint32_t)(len / w);
        return 0;
    }
    uint32_t k = 0;
    while (p < end) {
        uint64_t v;
        if (!pb_get_varint(&p, end, &v))
            return fail(c, p, "truncated varint in packed data", f->number);
        k++;
    }
    *n = k;
    return 0;
}

static int decode_body(dctx *c, const cfdb_pb_message *type, const uint8_t *p, const uint8_t *end,
                       uint32_t group, int depth, cfdb_pb_msg **out, const uint8_t **body_end);

static int add_unknown(dctx *c, cfdb_pb_msg *m, cfdb_bytes raw)
{
    if (m->unknown_count >= m->unknown_cap)
        return oom(c, raw.ptr);   /* pass 1 counted every slot: cannot happen */
    m->unknown[m->unknown_count++] = raw;
    return 0;
}

/* An unknown closed-enum value from a packed run, as its own varint field. */
static int add_unknown_varint(dctx *c, cfdb_pb_msg *m, uint32_t number, uint64_t raw,
                              const uint8_t *at)
{
    uint8_t *buf = cfdb_arena_alloc(c->arena, 15);
    if (!buf)
        return oom(c, at);
    uint8_t *q = pb_put_varint(buf, (uint64_t)number << 3 | PB_WT_VARINT);
    q = pb_put_varint(q, raw);
    return add_unknown(c, m, cfdb_bytes_make(buf, (size_t)(q - buf)));
}

static int store(dctx *c, cfdb_pb_msg *m, const cfdb_pb_field *f, cfdb_pb_value v,
                 const uint8_t *at)
{
    pb_slot *s = &m->slots[f->index];
    if (cfdb_pb_field_repeated(f)) {
        if (s->count >= s->cap)
            return oom(c, at);
        s->vals[s->count++] = v;
        return 0;
    }
    if ((f->type == CFDB_PB_MESSAGE || f->type == CFDB_PB_GROUP) && s->count && s->one.m) {
        int rc = cfdb_pb_merge(s->one.m, v.m);
        return rc ? oom(c, at) : check_budget(c, at);
    }
    if (f->oneof >= 0) {
        const cfdb_pb_message *t = m->type;
        for (uint32_t i = 0; i < t->field_count; i++)
            if (t->fields[i].oneof == f->oneof)
                m->slots[i].count = 0;
    }
    s->one = v;
    s->count = 1;
    return 0;
}

/* Pass 2 for one field value whose wire type matches the field (not packed). */
static int read_value(dctx *c, cfdb_pb_msg *m, const cfdb_pb_field *f, const uint8_t *tag_at,
                      const uint8_t **pp, const uint8_t *end, int depth)
{
    const uint8_t *p = *pp;
    cfdb_pb_value v;
    memset(&v, 0, sizeof v);
    int rc = 0;
    switch (pb_wire_type(f->type)) {
    case PB_WT_VARINT: {
        uint64_t raw = 0;
        pb_get_varint(&p, end, &raw);   /* checked in pass 1 */
        v = scalar_from_varint(f->type, raw);
        if (f->type == CFDB_PB_ENUM && !enum_known(f, v.i)) {
            *pp = p;
            return add_unknown(c, m, cfdb_bytes_make(tag_at, (size_t)(p - tag_at)));
        }
        break;
    }
    case PB_WT_FIXED32:
        v = scalar_from_fixed(f->type, p);
        p += 4;
        break;
    case PB_WT_FIXED64:
        v = scalar_from_fixed(f->type, p);
        p += 8;
        break;
    case PB_WT_LEN: {
        uint64_t len = 0;
        pb_get_varint(&p, end, &len);
        const uint8_t *q = p + len;
        if (f->type == CFDB_PB_MESSAGE) {
            rc = decode_body(c, f->message, p, q, 0, depth + 1, &v.m, NULL);
        } else {
            if (f->type == CFDB_PB_STRING && m->type->file && m->type->file->proto3 &&
                !cfdb_pb_utf8_valid(p, (size_t)len))
                return fail(c, p, "invalid UTF-8 in a proto3 string", f->number);
            v.s = cfdb_bytes_make(p, (size_t)len);
        }
        p = q;
        break;
    }
    case PB_WT_SGROUP:
        rc = decode_body(c, f->message, p, end, f->number, depth + 1, &v.m, &p);
        break;
    }
    if (rc)
        return rc;
    *pp = p;
    return store(c, m, f, v, tag_at);
}

static int read_packed(dctx *c, cfdb_pb_msg *m, const cfdb_pb_field *f, const uint8_t *p,
                       const uint8_t *end)
{
    int wt = pb_wire_type(f->type);
    while (p < end) {
        const uint8_t *at = p;
        cfdb_pb_value v;
        int rc;
        if (wt == PB_WT_VARINT) {
            uint64_t raw = 0;
            pb_get_varint(&p, end, &raw);
            v = scalar_from_varint(f->type, raw);
            if (f->type == CFDB_PB_ENUM && !enum_known(f, v.i)) {
                rc = add_unknown_varint(c, m, f->number, raw, at);
                if (rc)
                    return rc;
                continue;
            }
        } else {
            v = scalar_from_fixed(f->type, p);
            p += wt == PB_WT_FIXED32 ? 4 : 8;
        }
        rc = store(c, m, f, v, at);
        if (rc)
            return rc;
    }
    return 0;
}

static bool packed_form(const cfdb_pb_field *f, int wt)
{
    return wt == PB_WT_LEN && cfdb_pb_field_repeated(f) && pb_packable(f->type);
}

static int decode_body(dctx *c, const cfdb_pb_message *type, const uint8_t *start,
                       const uint8_t *end, uint32_t group, int depth, cfdb_pb_msg **out,
                       const uint8_t **body_end)
{
    if (depth > CFDB_PB_MAX_DEPTH)
        return fail(c, start, "messages nested too deeply", group);
    cfdb_pb_msg *m = cfdb_pb_msg_new(c->arena, type);
    if (!m)
        return oom(c, start);
    int brc = check_budget(c, start);
    if (brc)
        return brc;

    /* Pass 1: extents and counts. */
    const uint8_t *p = start, *stop = NULL;
    while (p < end) {
        const uint8_t *tag_at = p;
        uint32_t number;
        int wt, rc = read_tag(c, &p, end, &number, &wt);
        if (rc)
            return rc;
        if (wt == PB_WT_EGROUP) {
            if (number != group)
                return fail(c, tag_at, "end-group without its start", number);
            stop = tag_at;
            break;
        }
        const uint8_t *val = p;
        rc = skip_value(c, &p, end, number, wt, depth);
        if (rc)
            return rc;
        const cfdb_pb_field *f = cfdb_pb_field_by_number(type, number);
        uint32_t extra_unknown = 0;
        if (f && wt == pb_wire_type(f->type)) {
            if (cfdb_pb_field_repeated(f))
                m->slots[f->index].cap++;
            if (f->type == CFDB_PB_ENUM)
                extra_unknown = 1;
        } else if (f && packed_form(f, wt)) {
            uint64_t len = 0;
            pb_get_varint(&val, p, &len);
            uint32_t n;
            rc = count_packed(c, f, val, p, &n);
            if (rc)
                return rc;
            m->slots[f->index].cap += n;
            if (f->type == CFDB_PB_ENUM)
                extra_unknown = n;
        } else {
            extra_unknown = 1;
        }
        m->unknown_cap += extra_unknown;
    }
    if (group && !stop)
        return fail(c, p, "group without end", group);
    if (!stop)
        stop = end;
    if (body_end)
        *body_end = group ? p : end;   /* just past the end-group tag */

    /* One array for every repeated field's values, one for the unknown slices. */
    uint64_t total = 0;
    for (uint32_t i = 0; i < type->field_count; i++)
        if (cfdb_pb_field_repeated(&type->fields[i]))
            total += m->slots[i].cap;
    if (total) {
        cfdb_pb_value *vals = cfdb_arena_alloc(c->arena, (size_t)total * sizeof *vals);
        if (!vals)
            return oom(c, start);
        for (uint32_t i = 0; i < type->field_count; i++) {
            if (cfdb_pb_field_repeated(&type->fields[i])) {
                m->slots[i].vals = vals;
                vals += m->slots[i].cap;
            }
        }
    }
    if (m->unknown_cap) {
        m->unknown = cfdb_arena_alloc(c->arena, m->unknown_cap * sizeof *m->unknown);
        if (!m->unknown)
            return oom(c, start);
    }
    brc = check_budget(c, start);
    if (brc)
        return brc;

    /* Pass 2: values. */
    p = start;
    while (p < stop) {
        const uint8_t *tag_at = p;
        uint32_t number;
        int wt, rc;
        read_tag(c, &p, stop, &number, &wt);
        const cfdb_pb_field *f = cfdb_pb_field_by_number(type, number);
        if (f && wt == pb_wire_type(f->type)) {
            rc = read_value(c, m, f, tag_at, &p, end, depth);
        } else if (f && packed_form(f, wt)) {
            uint64_t len = 0;
            pb_get_varint(&p, stop, &len);
            rc = read_packed(c, m, f, p, p + len);
            p += len;
        } else {
            skip_value(c, &p, end, number, wt, depth);
            rc = add_unknown(c, m, cfdb_bytes_make(tag_at, (size_t)(p - tag_at)));
        }
        if (rc)
            return rc;
    }

    if (!(c->flags & CFDB_PB_PARTIAL)) {
        for (uint32_t i = 0; i < type->field_count; i++) {
            const cfdb_pb_field *f = &type->fields[i];
            if (f->label == CFDB_PB_REQUIRED && !m->slots[i].count) {
                pb_errorf(c->err, CFDB_ERR_SERIALIZATION_FAILED, (size_t)(start - c->base),
                          "protobuf: %s is missing required field %s", type->full_name,
                          f->name);
                return CFDB_ERR_SERIALIZATION_FAILED;
            }
        }
    }
    *out = m;
    return 0;
}

int cfdb_pb_decode(cfdb_arena *arena, const cfdb_pb_message *type, const uint8_t *data,
                   size_t len, unsigned flags, cfdb_pb_msg **out, cfdb_pb_error *err)
{
    *out = NULL;
    if (err)
        memset(err, 0, sizeof *err);
    dctx c = { arena, data, flags, err, arena->total,
               CFDB_PB_DECODE_BUDGET_BASE + CFDB_PB_DECODE_BUDGET_PER_BYTE * len };
    if (len > PB_MAX_MESSAGE_SIZE)
        return fail(&c, data, "message over 2 GiB", 0);
    if ((flags & CFDB_PB_COPY_INPUT) && len) {
        uint8_t *copy = cfdb_arena_dup(arena, data, len);
        if (!copy)
            return oom(&c, data);
        data = copy;
        c.base = copy;
    }
    if (!data)
        data = c.base = (const uint8_t *)"";
    return decode_body(&c, type, data, data + len, 0, 0, out, NULL);
}
