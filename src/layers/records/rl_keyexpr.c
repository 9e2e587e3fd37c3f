/* SPDX-License-Identifier: Apache-2.0 */
/* Key expressions: reading them from KeyExpression protobufs, building them in C, writing
 * them back, and their column counts. Evaluation is in rl_keyexpr_eval.c.
 *
 * A KeyExpression message has exactly one member set (Java's KeyExpression.fromProto refuses
 * none or several); the member's field number is the kind (cfdb_kex_kind). Nesting.parent is
 * a Field message (not a KeyExpression), kept here as a FIELD node in children[0]. Trees are
 * bounded by the protobuf decoder's nesting limit. */
#include <string.h>

#include "cfdb/records/keyexpr.h"
#include "rl_internal.h"

static int bad(void)
{
    return CFDB_ERR_SERIALIZATION_FAILED;
}

static cfdb_kex *new_node(cfdb_arena *a, cfdb_kex_kind kind, uint32_t nchildren)
{
    cfdb_kex *k = cfdb_arena_zalloc(a, sizeof *k);
    if (!k)
        return NULL;
    k->kind = kind;
    k->value.type = CFDB_TUPLE_NULL;
    if (nchildren) {
        k->children = cfdb_arena_zalloc(a, nchildren * sizeof *k->children);
        if (!k->children)
            return NULL;
        k->child_count = nchildren;
    }
    return k;
}

static int field_from_msg(cfdb_arena *a, const cfdb_pb_msg *fm, const cfdb_kex **out)
{
    if (!fm || !rl_has(fm, "field_name"))
        return bad();
    cfdb_kex *k = new_node(a, CFDB_KEX_FIELD, 0);
    if (!k || !(k->field_name = rl_strdup(a, rl_bytes(fm, "field_name"))))
        return CFDB_ERR_OUT_OF_MEMORY;
    int64_t fan = rl_int(fm, "fan_type"), ni = rl_int(fm, "nullInterpretation");
    if (fan < CFDB_KEX_SCALAR || fan > CFDB_KEX_CONCATENATE || ni < CFDB_KEX_NULL_NOT_UNIQUE ||
        ni > CFDB_KEX_NOT_NULL)
        return bad();
    k->fan_type = (uint8_t)fan;
    k->null_interpretation = (uint8_t)ni;
    *out = k;
    return 0;
}

static int children_from(cfdb_arena *a, const cfdb_pb_msg *m, const char *name, cfdb_kex *k)
{
    uint32_t n = rl_count(m, name);
    if (n == 0)
        return bad();
    k->children = cfdb_arena_zalloc(a, n * sizeof *k->children);
    if (!k->children)
        return CFDB_ERR_OUT_OF_MEMORY;
    k->child_count = n;
    for (uint32_t i = 0; i < n; i++) {
        int rc = cfdb_kex_from_msg(a, rl_at(m, name, i)->m, (const cfdb_kex **)&k->children[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int one_child(cfdb_arena *a, const cfdb_pb_msg *m, const char *name, cfdb_kex *k)
{
    const cfdb_pb_msg *c = rl_msg(m, name);
    if (!c)
        return bad();
    k->children = cfdb_arena_zalloc(a, sizeof *k->children);
    if (!k->children)
        return CFDB_ERR_OUT_OF_MEMORY;
    k->child_count = 1;
    return cfdb_kex_from_msg(a, c, (const cfdb_kex **)&k->children[0]);
}

/* Value literal: at most one member (Java: more than one is an error; none is null). */
int rl_value_elem(cfdb_arena *a, const cfdb_pb_msg *vm, cfdb_tuple_elem *e)
{
    int found = 0;
    memset(e, 0, sizeof *e);
    e->type = CFDB_TUPLE_NULL;
    const cfdb_pb_message *t = cfdb_pb_msg_type(vm);
    for (uint32_t i = 0; i < t->field_count; i++) {
        const cfdb_pb_field *f = &t->fields[i];
        if (!cfdb_pb_count(vm, f))
            continue;
        found++;
        cfdb_pb_value v = cfdb_pb_get_or_default(vm, f);
        switch (f->type) {
        case CFDB_PB_DOUBLE: e->type = CFDB_TUPLE_DOUBLE; e->v.d = v.d; break;
        case CFDB_PB_FLOAT: e->type = CFDB_TUPLE_FLOAT; e->v.f = v.f; break;
        case CFDB_PB_BOOL: e->type = CFDB_TUPLE_BOOL; e->v.b = v.b; break;
        case CFDB_PB_STRING: case CFDB_PB_BYTES: {
            e->type = f->type == CFDB_PB_STRING ? CFDB_TUPLE_STRING : CFDB_TUPLE_BYTES;
            if (cfdb_arena_dup_bytes(a, v.s, &e->v.bytes))
                return CFDB_ERR_OUT_OF_MEMORY;
            break;
        }
        default: e->type = CFDB_TUPLE_INT; e->v.i = v.i; break;
        }
    }
    return found > 1 ? bad() : 0;
}

int cfdb_kex_from_msg(cfdb_arena *a, const cfdb_pb_msg *msg, const cfdb_kex **out)
{
    *out = NULL;
    if (!msg)
        return bad();
    const cfdb_pb_message *t = cfdb_pb_msg_type(msg);
    const cfdb_pb_field *member = NULL;
    for (uint32_t i = 0; i < t->field_count; i++) {
        if (cfdb_pb_count(msg, &t->fields[i])) {
            if (member)
                return bad();   /* several roots */
            member = &t->fields[i];
        }
    }
    if (!member || member->number < CFDB_KEX_THEN || member->number > CFDB_KEX_DIMENSIONS)
        return bad();
    const cfdb_pb_msg *m = cfdb_pb_get(msg, member, 0)->m;
    cfdb_kex_kind kind = (cfdb_kex_kind)member->number;
    if (kind == CFDB_KEX_FIELD)
        return field_from_msg(a, m, out);
    cfdb_kex *k = new_node(a, kind, 0);
    if (!k)
        return CFDB_ERR_OUT_OF_MEMORY;
    int rc = 0;
    switch (kind) {
    case CFDB_KEX_THEN: case CFDB_KEX_LIST:
        rc = children_from(a, m, "child", k);
        break;
    case CFDB_KEX_NEST: {
        const cfdb_pb_msg *parent = rl_msg(m, "parent"), *child = rl_msg(m, "child");
        k->children = cfdb_arena_zalloc(a, 2 * sizeof *k->children);
        if (!k->children)
            return CFDB_ERR_OUT_OF_MEMORY;
        k->child_count = 2;
        if (!parent || !child)
            return bad();
        rc = field_from_msg(a, parent, (const cfdb_kex **)&k->children[0]);
        if (!rc)
            rc = cfdb_kex_from_msg(a, child, (const cfdb_kex **)&k->children[1]);
        break;
    }
    case CFDB_KEX_GROUPING:
        rc = one_child(a, m, "whole_key", k);
        k->n1 = (int32_t)rl_int(m, "grouped_count");
        break;
    case CFDB_KEX_KEY_WITH_VALUE:
        rc = one_child(a, m, "inner_key", k);
        k->n1 = (int32_t)rl_int(m, "split_point");
        break;
    case CFDB_KEX_DIMENSIONS:
        rc = one_child(a, m, "whole_key", k);
        k->n1 = (int32_t)rl_int(m, "prefix_size");
        k->n2 = (int32_t)rl_int(m, "dimensions_size");
        break;
    case CFDB_KEX_SPLIT:
        rc = one_child(a, m, "joined", k);
        k->n1 = (int32_t)rl_int(m, "split_size");
        break;
    case CFDB_KEX_FUNCTION:
        if (!rl_has(m, "name"))
            return bad();
        rc = one_child(a, m, "arguments", k);
        k->value.type = CFDB_TUPLE_STRING;
        if (!rc && cfdb_arena_dup_bytes(a, rl_bytes(m, "name"), &k->value.v.bytes))
            rc = CFDB_ERR_OUT_OF_MEMORY;
        break;
    case CFDB_KEX_VALUE:
        rc = rl_value_elem(a, m, &k->value);
        break;
    default:   /* EMPTY, VERSION, RECORD_TYPE_KEY */
        break;
    }
    if (rc)
        return rc;
    *out = k;
    return 0;
}

int cfdb_kex_parse(cfdb_arena *a, const uint8_t *data, size_t len, const cfdb_kex **out)
{
    *out = NULL;
    const cfdb_pb_message *t = cfdb_rl_schema_msg(RL_EXPR_PKG "KeyExpression");
    if (!t)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_pb_msg *m;
    int rc = cfdb_pb_decode(a, t, data, len, CFDB_PB_COPY_INPUT, &m, NULL);
    return rc ? rc : cfdb_kex_from_msg(a, m, out);
}

uint32_t cfdb_kex_columns(const cfdb_kex *k)
{
    uint32_t n = 0;
    switch (k->kind) {
    case CFDB_KEX_THEN:
        for (uint32_t i = 0; i < k->child_count; i++)
            n += cfdb_kex_columns(k->children[i]);
        return n;
    case CFDB_KEX_LIST:
        return k->child_count;
    case CFDB_KEX_NEST:
        return cfdb_kex_columns(k->children[1]);
    case CFDB_KEX_GROUPING: case CFDB_KEX_KEY_WITH_VALUE: case CFDB_KEX_DIMENSIONS:
    case CFDB_KEX_FUNCTION:
        return cfdb_kex_columns(k->children[0]);
    case CFDB_KEX_SPLIT:
        return k->n1 > 0 ? (uint32_t)k->n1 : 0;
    case CFDB_KEX_EMPTY:
        return 0;
    default:
        return 1;
    }
}

/* ---- builders ---- */

const cfdb_kex *cfdb_kex_field(cfdb_arena *a, const char *name, int fan_type)
{
    cfdb_kex *k = new_node(a, CFDB_KEX_FIELD, 0);
    if (!k || !(k->field_name = rl_strdup(a, cfdb_bytes_str(name))))
        return NULL;
    k->fan_type = (uint8_t)fan_type;
    k->null_interpretation = CFDB_KEX_NULL_NOT_UNIQUE;
    return k;
}

static const cfdb_kex *with_children(cfdb_arena *a, cfdb_kex_kind kind,
                                     const cfdb_kex *const *children, uint32_t n)
{
    cfdb_kex *k = new_node(a, kind, n);
    if (!k)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!children[i])
            return NULL;
        ((const cfdb_kex **)k->children)[i] = children[i];
    }
    return k;
}

const cfdb_kex *cfdb_kex_nest(cfdb_arena *a, const cfdb_kex *parent, const cfdb_kex *child)
{
    if (!parent || parent->kind != CFDB_KEX_FIELD)
        return NULL;
    const cfdb_kex *two[2] = { parent, child };
    return with_children(a, CFDB_KEX_NEST, two, 2);
}

const cfdb_kex *cfdb_kex_then(cfdb_arena *a, const cfdb_kex *const *children, uint32_t n)
{
    return n ? with_children(a, CFDB_KEX_THEN, children, n) : NULL;
}

const cfdb_kex *cfdb_kex_list(cfdb_arena *a, const cfdb_kex *const *children, uint32_t n)
{
    return n ? with_children(a, CFDB_KEX_LIST, children, n) : NULL;
}

const cfdb_kex *cfdb_kex_record_type_key(cfdb_arena *a)
{
    return new_node(a, CFDB_KEX_RECORD_TYPE_KEY, 0);
}

const cfdb_kex *cfdb_kex_empty(cfdb_arena *a)
{
    return new_node(a, CFDB_KEX_EMPTY, 0);
}

const cfdb_kex *cfdb_kex_version(cfdb_arena *a)
{
    return new_node(a, CFDB_KEX_VERSION, 0);
}

const cfdb_kex *cfdb_kex_grouping(cfdb_arena *a, const cfdb_kex *whole, int32_t grouped_count)
{
    cfdb_kex *k = (cfdb_kex *)with_children(a, CFDB_KEX_GROUPING, &whole, 1);
    if (k)
        k->n1 = grouped_count;
    return k;
}

/* ---- writing ---- */

static int field_to_msg(const cfdb_kex *k, cfdb_pb_msg *fm)
{
    int rc = rl_set_bytes(fm, "field_name", cfdb_bytes_str(k->field_name));
    if (!rc)
        rc = rl_set_int(fm, "fan_type", k->fan_type);
    /* Java's FieldKeyExpression.toProto always writes nullInterpretation. */
    if (!rc)
        rc = rl_set_int(fm, "nullInterpretation", k->null_interpretation);
    return rc;
}

static int kex_to_msg(const cfdb_kex *k, cfdb_pb_msg *km)
{
    const cfdb_pb_field *member = cfdb_pb_field_by_number(cfdb_pb_msg_type(km), (uint32_t)k->kind);
    if (!member)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    cfdb_pb_msg *m, *c;
    int rc = cfdb_pb_mutable(km, member, &m);
    if (rc)
        return rc;
    switch (k->kind) {
    case CFDB_KEX_FIELD:
        return field_to_msg(k, m);
    case CFDB_KEX_THEN: case CFDB_KEX_LIST:
        for (uint32_t i = 0; i < k->child_count && !rc; i++) {
            rc = rl_add_msg(m, "child", &c);
            if (!rc)
                rc = kex_to_msg(k->children[i], c);
        }
        return rc;
    case CFDB_KEX_NEST:
        rc = rl_mutable(m, "parent", &c);
        if (!rc)
            rc = field_to_msg(k->children[0], c);
        if (!rc)
            rc = rl_mutable(m, "child", &c);
        return rc ? rc : kex_to_msg(k->children[1], c);
    case CFDB_KEX_GROUPING:
        rc = rl_mutable(m, "whole_key", &c);
        if (!rc)
            rc = kex_to_msg(k->children[0], c);
        return rc ? rc : rl_set_int(m, "grouped_count", k->n1);
    case CFDB_KEX_EMPTY: case CFDB_KEX_VERSION: case CFDB_KEX_RECORD_TYPE_KEY:
        return 0;
    default:
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    }
}

int cfdb_kex_serialize(cfdb_arena *a, const cfdb_kex *k, cfdb_bytes *out)
{
    const cfdb_pb_message *t = cfdb_rl_schema_msg(RL_EXPR_PKG "KeyExpression");
    if (!t)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_pb_msg *m = cfdb_pb_msg_new(a, t);
    if (!m)
        return CFDB_ERR_OUT_OF_MEMORY;
    int rc = kex_to_msg(k, m);
    return rc ? rc : cfdb_pb_encode(m, a, out);
}
