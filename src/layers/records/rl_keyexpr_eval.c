/* SPDX-License-Identifier: Apache-2.0 */
/* Key expression evaluation on dynamic messages (semantics in include/cfdb/records/keyexpr.h,
 * after fdb-record-layer's FieldKeyExpression, NestingKeyExpression, ThenKeyExpression,
 * ListKeyExpression and TupleTypeUtil).
 *
 * Every intermediate result is a key list: an arena array of tuples. then/list evaluate
 * each child once and build every key of the cartesian product once, so the work is
 * proportional to the output, which is capped at CFDB_KEX_MAX_KEYS keys,
 * CFDB_KEX_MAX_COLUMNS columns a key and CFDB_KEX_MAX_ELEMENTS columns in all (2000 past
 * any). Recursion follows the expression tree,
 * whose depth the KeyExpression decoder bounds. */
#include <string.h>

#include "cfdb/records/keyexpr.h"
#include "rl_internal.h"

typedef struct keylist {
    cfdb_tuple *keys;
    uint32_t count;
} keylist;

typedef struct ectx {
    cfdb_arena *a;
    const cfdb_kex_ctx *ctx;
} ectx;

static int eval(ectx *c, const cfdb_kex *k, const cfdb_pb_msg *msg, keylist *out);

static int alloc_keys(ectx *c, uint64_t n, keylist *out)
{
    if (n > CFDB_KEX_MAX_KEYS)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    out->count = (uint32_t)n;
    out->keys = cfdb_arena_zalloc(c->a, (size_t)(n ? n : 1) * sizeof *out->keys);
    if (!out->keys)
        return CFDB_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < n; i++)
        cfdb_tuple_init(&out->keys[i], c->a);
    return 0;
}

/* One key of one element (or of none when e is NULL). */
static int single(ectx *c, const cfdb_tuple_elem *e, keylist *out)
{
    int rc = alloc_keys(c, 1, out);
    if (!rc && e)
        rc = cfdb_tuple_add_elem(&out->keys[0], e);
    return rc;
}

static int single_null(ectx *c, keylist *out)
{
    int rc = alloc_keys(c, 1, out);
    return rc ? rc : cfdb_tuple_add_null(&out->keys[0]);
}

/* A field value as the Java Record Layer puts it in a tuple. */
static int add_value(cfdb_tuple *t, const cfdb_pb_field *f, cfdb_pb_value v)
{
    switch (f->type) {
    case CFDB_PB_UINT32: case CFDB_PB_FIXED32:
        return cfdb_tuple_add_int(t, (int32_t)(uint32_t)v.u);   /* Java int */
    case CFDB_PB_UINT64: case CFDB_PB_FIXED64:
        return cfdb_tuple_add_int(t, (int64_t)v.u);             /* Java long */
    case CFDB_PB_BOOL:
        return cfdb_tuple_add_bool(t, v.b);
    case CFDB_PB_FLOAT:
        return cfdb_tuple_add_float(t, v.f);
    case CFDB_PB_DOUBLE:
        return cfdb_tuple_add_double(t, v.d);
    case CFDB_PB_STRING:
        return cfdb_tuple_add_string(t, (const char *)v.s.ptr, v.s.len);
    case CFDB_PB_BYTES:
        return cfdb_tuple_add_bytes(t, v.s.ptr, v.s.len);
    case CFDB_PB_MESSAGE: case CFDB_PB_GROUP:
        return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* a message is not a tuple element */
    default:   /* signed integers and enum numbers */
        return cfdb_tuple_add_int(t, v.i);
    }
}

/* FieldKeyExpression's result when there is no value: no message, no such field, or an
 * absent singular field without NOT_NULL. */
static int null_result(ectx *c, const cfdb_kex *k, keylist *out)
{
    switch (k->fan_type) {
    case CFDB_KEX_FAN_OUT:
        return alloc_keys(c, 0, out);
    case CFDB_KEX_CONCATENATE:
        if (k->null_interpretation == CFDB_KEX_NOT_NULL) {
            cfdb_tuple *empty = cfdb_arena_alloc(c->a, sizeof *empty);
            if (!empty)
                return CFDB_ERR_OUT_OF_MEMORY;
            cfdb_tuple_init(empty, c->a);
            int rc = alloc_keys(c, 1, out);
            return rc ? rc : cfdb_tuple_add_nested(&out->keys[0], empty);
        }
        return single_null(c, out);
    default:
        return single_null(c, out);
    }
}

static int eval_field(ectx *c, const cfdb_kex *k, const cfdb_pb_msg *msg, keylist *out)
{
    const cfdb_pb_field *f = msg ? cfdb_pb_field_by_name(cfdb_pb_msg_type(msg), k->field_name)
                                 : NULL;
    if (!f)
        return null_result(c, k, out);
    int rc;
    if (cfdb_pb_field_repeated(f)) {
        uint32_t n = cfdb_pb_count(msg, f);
        if (k->fan_type == CFDB_KEX_FAN_OUT) {
            rc = alloc_keys(c, n, out);
            for (uint32_t i = 0; i < n && !rc; i++)
                rc = add_value(&out->keys[i], f, *cfdb_pb_get(msg, f, i));
            return rc;
        }
        if (k->fan_type != CFDB_KEX_CONCATENATE)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;   /* SCALAR on a repeated field */
        cfdb_tuple *all = cfdb_arena_alloc(c->a, sizeof *all);
        if (!all)
            return CFDB_ERR_OUT_OF_MEMORY;
        cfdb_tuple_init(all, c->a);
        for (uint32_t i = 0; i < n; i++) {
            rc = add_value(all, f, *cfdb_pb_get(msg, f, i));
            if (rc)
                return rc;
        }
        rc = alloc_keys(c, 1, out);
        return rc ? rc : cfdb_tuple_add_nested(&out->keys[0], all);
    }
    if (k->null_interpretation != CFDB_KEX_NOT_NULL && !cfdb_pb_has(msg, f))
        return null_result(c, k, out);
    rc = alloc_keys(c, 1, out);
    return rc ? rc : add_value(&out->keys[0], f, cfdb_pb_get_or_default(msg, f));
}

static int eval_nest(ectx *c, const cfdb_kex *k, const cfdb_pb_msg *msg, keylist *out)
{
    const cfdb_kex *parent = k->children[0], *child = k->children[1];
    const cfdb_pb_field *f = msg ? cfdb_pb_field_by_name(cfdb_pb_msg_type(msg), parent->field_name)
                                 : NULL;
    /* The parent's values, as messages (NULL: "no message"). */
    const cfdb_pb_msg *one = NULL;
    const cfdb_pb_value *many = NULL;
    uint32_t n;
    if (!f) {
        if (parent->fan_type == CFDB_KEX_FAN_OUT)
            return alloc_keys(c, 0, out);
        if (parent->fan_type == CFDB_KEX_CONCATENATE)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        n = 1;
    } else if (f->type != CFDB_PB_MESSAGE && f->type != CFDB_PB_GROUP) {
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    } else if (cfdb_pb_field_repeated(f)) {
        if (parent->fan_type != CFDB_KEX_FAN_OUT)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        n = cfdb_pb_count(msg, f);
        many = n ? cfdb_pb_get(msg, f, 0) : NULL;
    } else {
        if (parent->fan_type != CFDB_KEX_SCALAR)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        n = 1;
        if (cfdb_pb_has(msg, f)) {
            one = cfdb_pb_get(msg, f, 0)->m;
        } else if (parent->null_interpretation == CFDB_KEX_NOT_NULL) {
            one = cfdb_pb_msg_new(c->a, f->message);   /* the default (empty) message */
            if (!one)
                return CFDB_ERR_OUT_OF_MEMORY;
        }
    }
    /* Evaluate the child per parent value and concatenate the key lists. */
    keylist *parts = cfdb_arena_alloc(c->a, (n ? n : 1) * sizeof *parts);
    if (!parts)
        return CFDB_ERR_OUT_OF_MEMORY;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        int rc = eval(c, child, many ? many[i].m : one, &parts[i]);
        if (rc)
            return rc;
        total += parts[i].count;
        if (total > CFDB_KEX_MAX_KEYS)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    out->count = (uint32_t)total;
    out->keys = cfdb_arena_alloc(c->a, (size_t)(total ? total : 1) * sizeof *out->keys);
    if (!out->keys)
        return CFDB_ERR_OUT_OF_MEMORY;
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (parts[i].count)
            memcpy(&out->keys[at], parts[i].keys, parts[i].count * sizeof *out->keys);
        at += parts[i].count;
    }
    return 0;
}

/* then (nested == false) and list (nested == true): cartesian product of the children,
 * the first child's keys varying slowest. Every child is evaluated once, then each output
 * key is built once from one key of each child: work and memory linear in the output,
 * which is bounded by CFDB_KEX_MAX_KEYS keys, CFDB_KEX_MAX_COLUMNS columns a key and
 * CFDB_KEX_MAX_ELEMENTS columns in all (2000 past any). */
static int eval_product(ectx *c, const cfdb_kex *k, const cfdb_pb_msg *msg, bool nested,
                        keylist *out)
{
    uint32_t n = k->child_count;
    keylist *parts = cfdb_arena_alloc(c->a, (n ? n : 1) * sizeof *parts);
    if (!parts)
        return CFDB_ERR_OUT_OF_MEMORY;
    uint64_t total = 1, width = 0;
    for (uint32_t ci = 0; ci < n; ci++) {
        int rc = eval(c, k->children[ci], msg, &parts[ci]);
        if (rc)
            return rc;
        total *= parts[ci].count;
        if (total > CFDB_KEX_MAX_KEYS)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        uint32_t w = nested ? 1 : 0;
        for (uint32_t j = 0; !nested && j < parts[ci].count; j++)
            if (parts[ci].keys[j].count > w)
                w = parts[ci].keys[j].count;
        width += w;
        if (width > CFDB_KEX_MAX_COLUMNS)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    if (total * width > CFDB_KEX_MAX_ELEMENTS)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    int rc = alloc_keys(c, total, out);
    for (uint64_t i = 0; i < total && !rc; i++) {
        cfdb_tuple *t = &out->keys[i];
        /* the key of child ci: digit ci of i in the mixed radix of the part counts */
        uint64_t stride = total;
        for (uint32_t ci = 0; ci < n && !rc; ci++) {
            stride /= parts[ci].count;
            const cfdb_tuple *pk = &parts[ci].keys[(i / stride) % parts[ci].count];
            if (nested) {
                rc = cfdb_tuple_add_nested(t, pk);
            } else {
                for (uint32_t e = 0; e < pk->count && !rc; e++)
                    rc = cfdb_tuple_add_elem(t, cfdb_tuple_get(pk, e));
            }
        }
    }
    return rc;
}

static int eval(ectx *c, const cfdb_kex *k, const cfdb_pb_msg *msg, keylist *out)
{
    cfdb_tuple_elem e;
    memset(&e, 0, sizeof e);
    switch (k->kind) {
    case CFDB_KEX_FIELD:
        return eval_field(c, k, msg, out);
    case CFDB_KEX_NEST:
        return eval_nest(c, k, msg, out);
    case CFDB_KEX_THEN:
        return eval_product(c, k, msg, false, out);
    case CFDB_KEX_LIST:
        return eval_product(c, k, msg, true, out);
    case CFDB_KEX_GROUPING: case CFDB_KEX_KEY_WITH_VALUE: case CFDB_KEX_DIMENSIONS:
        return eval(c, k->children[0], msg, out);
    case CFDB_KEX_EMPTY:
        return single(c, NULL, out);
    case CFDB_KEX_VALUE:
        return single(c, &k->value, out);
    case CFDB_KEX_RECORD_TYPE_KEY:
        if (c->ctx && c->ctx->record_type_key)
            return single(c, c->ctx->record_type_key, out);
        return single_null(c, out);
    case CFDB_KEX_VERSION:
        if (c->ctx && c->ctx->version) {
            e.type = CFDB_TUPLE_VERSIONSTAMP;
            memcpy(e.v.vs, c->ctx->version, 12);
            return single(c, &e, out);
        }
        return single_null(c, out);
    default:   /* SPLIT, FUNCTION */
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    }
}

int cfdb_kex_evaluate(cfdb_arena *a, const cfdb_kex *k, const cfdb_pb_msg *msg,
                      const cfdb_kex_ctx *ctx, cfdb_tuple **keys, uint32_t *count)
{
    ectx c = { a, ctx };
    keylist out;
    int rc = eval(&c, k, msg, &out);
    if (rc)
        return rc;
    *keys = out.keys;
    *count = out.count;
    return 0;
}
