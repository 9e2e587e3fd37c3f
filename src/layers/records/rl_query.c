/* SPDX-License-Identifier: Apache-2.0 */
/* The minimal query planner and its cursor (contract and rules in
 * include/cfdb/records/query.h; the notation of fdb-record-layer's RecordQueryIndexPlan,
 * RecordQueryScanPlan, RecordQueryTypeFilterPlan and RecordQueryFilterPlan toString, and
 * TupleRange/EndpointType.toString for ranges).
 *
 * An index's columns are its root flattened (then: children in order; key_with_value: its key
 * columns); a column is matchable when it is a top-level SCALAR field. The query cursor runs
 * the chosen scan without limit or skip and applies the residual comparisons, the type check,
 * skip and limit on top, on every execution (from a continuation too: Java's filter plans'
 * skipThenLimit over an inner plan run with clearSkipAndLimit); its continuation after a record
 * is the scan's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/records/query.h"
#include "rl_cursor_internal.h"
#include "rl_internal.h"

#define MAX_COLS 32
#define MAX_FILTERS 32

struct cfdb_rl_plan {
    cfdb_arena arena;
    const cfdb_rl_metadata *md;
    const cfdb_rl_record_type *type;
    const cfdb_rl_index *index;        /* NULL: record scan */
    bool type_filter;                  /* records of other types are dropped */
    bool reverse;
    cfdb_tuple *low, *high;
    cfdb_rl_endpoint low_ep, high_ep;
    const cfdb_rl_filter *residual[MAX_FILTERS];
    const cfdb_kex *residual_expr[MAX_FILTERS];
    uint32_t nresidual;
    char *explain;
};

static const char *const op_names[] = { "EQUALS", "LESS_THAN", "LESS_THAN_OR_EQUALS", "GREATER_THAN",
                                        "GREATER_THAN_OR_EQUALS" };

/* ---- columns ---- */

static void flatten(const cfdb_kex *k, const char **cols, uint32_t *n)
{
    if (*n >= MAX_COLS)
        return;
    if (k->kind == CFDB_KEX_THEN) {
        for (uint32_t i = 0; i < k->child_count; i++)
            flatten(k->children[i], cols, n);
    } else if (k->kind == CFDB_KEX_KEY_WITH_VALUE) {
        const char *inner[MAX_COLS];
        uint32_t m = 0;
        flatten(k->children[0], inner, &m);
        for (uint32_t i = 0; i < m && i < (uint32_t)k->n1 && *n < MAX_COLS; i++)
            cols[(*n)++] = inner[i];
    } else if (k->kind == CFDB_KEX_FIELD && k->fan_type == CFDB_KEX_SCALAR) {
        cols[(*n)++] = k->field_name;
    } else {
        uint32_t c = cfdb_kex_columns(k);
        for (uint32_t i = 0; i < c && *n < MAX_COLS; i++)
            cols[(*n)++] = NULL;   /* not matchable */
    }
}

static bool index_on(const cfdb_rl_index *ix, const cfdb_rl_record_type *t)
{
    if (!ix->record_type_count)
        return true;
    for (uint32_t i = 0; i < ix->record_type_count; i++)
        if (ix->record_types[i] == t)
            return true;
    return false;
}

/* ---- explain ---- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 64) * 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

/* As Java's Double.toString for ordinary values: the shortest digits that read back, and a
 * ".0" on integral ones. */
static void put_double(sbuf *b, double d)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    put(b, "%s%s", tmp, strpbrk(tmp, ".eEn") ? "" : ".0");
}

static void put_elem(sbuf *b, const cfdb_tuple_elem *e)
{
    switch (e->type) {
    case CFDB_TUPLE_NULL: put(b, "null"); break;
    case CFDB_TUPLE_STRING: put(b, "%.*s", (int)e->v.bytes.len, (const char *)e->v.bytes.ptr); break;
    case CFDB_TUPLE_INT: put(b, "%lld", (long long)e->v.i); break;
    case CFDB_TUPLE_DOUBLE: put_double(b, e->v.d); break;
    case CFDB_TUPLE_FLOAT: put(b, "%.9g", (double)e->v.f); break;
    case CFDB_TUPLE_BOOL: put(b, "%s", e->v.b ? "true" : "false"); break;
    case CFDB_TUPLE_BYTES:
        put(b, "[");
        for (size_t i = 0; i < e->v.bytes.len; i++)
            put(b, "%s%d", i ? ", " : "", (int8_t)e->v.bytes.ptr[i]);
        put(b, "]");
        break;
    default: put(b, "?"); break;
    }
}

/* TupleRange.toString: endpoint, [elements], ",", [elements], endpoint */
static void put_tuple(sbuf *b, const cfdb_tuple *t)
{
    if (!t)
        return;
    put(b, "[");
    for (uint32_t i = 0; i < cfdb_tuple_count(t); i++) {
        if (i)
            put(b, ", ");
        put_elem(b, cfdb_tuple_get(t, i));
    }
    put(b, "]");
}

static void put_range(sbuf *b, const cfdb_rl_plan *p)
{
    static const char lo[] = { '<', '>', '[', '(' }, hi[] = { '<', '>', ']', ')' };
    put(b, "%c", lo[p->low_ep]);
    put_tuple(b, p->low_ep == CFDB_RL_TREE_START ? NULL : p->low);
    put(b, ",");
    put_tuple(b, p->high_ep == CFDB_RL_TREE_END ? NULL : p->high);
    put(b, "%c", hi[p->high_ep]);
}

static int explain(cfdb_rl_plan *p)
{
    sbuf b = { 0 };
    if (p->index) {
        put(&b, "Index(%s ", p->index->name);
        put_range(&b, p);
        put(&b, "%s)", p->reverse ? " REVERSE" : "");
    } else if (!p->type_filter) {
        put(&b, "Scan([IS %s]%s)", p->type->name, p->reverse ? " REVERSE" : "");
    } else {
        put(&b, "Scan(<,>%s)", p->reverse ? " REVERSE" : "");
    }
    if (p->type_filter)
        put(&b, " | [%s]", p->type->name);
    for (uint32_t i = 0; i < p->nresidual; i++) {
        put(&b, " | %s %s ", p->residual[i]->field, op_names[p->residual[i]->op]);
        put_elem(&b, &p->residual[i]->value);
    }
    if (b.oom || !b.p) {
        free(b.p);
        return CFDB_ERR_OUT_OF_MEMORY;
    }
    p->explain = cfdb_arena_dup(&p->arena, b.p, b.len + 1);
    free(b.p);
    return p->explain ? 0 : CFDB_ERR_OUT_OF_MEMORY;
}

/* ---- planning ---- */

static int add(cfdb_tuple *t, const cfdb_tuple_elem *e)
{
    return cfdb_tuple_add_elem(t, e);
}

/* s: plan with its index states (NULL: every index readable). */
static int plan_query(const cfdb_rl_metadata *md, const cfdb_rl_store *s, const cfdb_rl_query *q,
                      cfdb_rl_plan **out)
{
    *out = NULL;
    const cfdb_rl_record_type *rt = q->record_type ? cfdb_rl_record_type_by_name(md, q->record_type) : NULL;
    if (!rt || q->filter_count > MAX_FILTERS)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    for (uint32_t i = 0; i < q->filter_count; i++) {
        const cfdb_pb_field *f = q->filters[i].field ? cfdb_pb_field_by_name(rt->descriptor, q->filters[i].field) : NULL;
        if (!f || f->label == CFDB_PB_REPEATED || f->type == CFDB_PB_MESSAGE ||
            f->type == CFDB_PB_GROUP || (unsigned)q->filters[i].op > CFDB_RL_GE)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
    }
    if (q->sort_field && !cfdb_pb_field_by_name(rt->descriptor, q->sort_field))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;

    /* the best index */
    const cfdb_rl_index *best = NULL;
    int best_score = -1;
    uint32_t best_eq = 0;
    int best_range_col = -1;
    for (uint32_t x = 0; x < md->index_count; x++) {
        const cfdb_rl_index *ix = &md->indexes[x];
        if (!rl_index_value_scans(ix) || !index_on(ix, rt))
            continue;
        if (s && cfdb_rl_store_index_state(s, ix->name) != CFDB_RL_INDEX_READABLE)
            continue;   /* RecordQueryPlanner plans only over readable indexes */
        const char *cols[MAX_COLS];
        uint32_t ncols = 0;
        flatten(ix->root, cols, &ncols);
        uint32_t eq = 0;
        while (eq < ncols && cols[eq]) {
            bool found = false;
            for (uint32_t i = 0; i < q->filter_count && !found; i++)
                found = q->filters[i].op == CFDB_RL_EQ && !strcmp(q->filters[i].field, cols[eq]);
            if (!found)
                break;
            eq++;
        }
        int range_col = -1;
        if (eq < ncols && cols[eq])
            for (uint32_t i = 0; i < q->filter_count; i++)
                if (q->filters[i].op != CFDB_RL_EQ && !strcmp(q->filters[i].field, cols[eq]))
                    range_col = (int)eq;
        if (q->sort_field) {
            bool ok = (eq < ncols && cols[eq] && !strcmp(cols[eq], q->sort_field)) ||
                      (eq > 0 && eq == ncols && !strcmp(cols[eq - 1], q->sort_field));
            if (!ok)
                continue;
        }
        int score = (int)eq * 2 + (range_col >= 0 ? 1 : 0);
        if (score > best_score) {
            best = ix;
            best_score = score;
            best_eq = eq;
            best_range_col = range_col;
        }
    }
    if (q->sort_field && !best)
        return CFDB_ERR_UNSUPPORTED_OPERATION;
    if (best && best_score == 0 && !q->sort_field)
        best = NULL;

    cfdb_rl_plan *p = calloc(1, sizeof *p);
    if (!p)
        return CFDB_ERR_OUT_OF_MEMORY;
    cfdb_arena_init(&p->arena);
    p->md = md;
    p->type = rt;
    p->index = best;
    p->reverse = q->sort_descending;
    p->low = cfdb_arena_alloc(&p->arena, sizeof *p->low);
    p->high = cfdb_arena_alloc(&p->arena, sizeof *p->high);
    int rc = p->low && p->high ? 0 : CFDB_ERR_OUT_OF_MEMORY;
    if (!rc) {
        cfdb_tuple_init(p->low, &p->arena);
        cfdb_tuple_init(p->high, &p->arena);
    }
    bool used[MAX_FILTERS] = { false };
    if (!rc && best) {
        const char *cols[MAX_COLS];
        uint32_t ncols = 0;
        flatten(best->root, cols, &ncols);
        p->type_filter = best->record_type_count != 1;
        for (uint32_t c = 0; c < best_eq && !rc; c++) {
            for (uint32_t i = 0; i < q->filter_count; i++) {
                if (q->filters[i].op == CFDB_RL_EQ && !strcmp(q->filters[i].field, cols[c])) {
                    used[i] = true;
                    rc = add(p->low, &q->filters[i].value);
                    if (!rc)
                        rc = add(p->high, &q->filters[i].value);
                    break;   /* a second equality on the column stays residual */
                }
            }
        }
        p->low_ep = p->high_ep = best_eq ? CFDB_RL_RANGE_INCLUSIVE : CFDB_RL_TREE_START;
        if (!best_eq)
            p->high_ep = CFDB_RL_TREE_END;
        if (!rc && best_range_col >= 0) {
            int lo = -1, hi = -1;
            for (uint32_t i = 0; i < q->filter_count; i++) {
                if (q->filters[i].op == CFDB_RL_EQ || strcmp(q->filters[i].field, cols[best_range_col]))
                    continue;
                bool lower = q->filters[i].op == CFDB_RL_GT || q->filters[i].op == CFDB_RL_GE;
                if (lower && lo < 0)
                    lo = (int)i;
                else if (!lower && hi < 0)
                    hi = (int)i;
            }
            if (lo >= 0) {
                used[lo] = true;
                rc = add(p->low, &q->filters[lo].value);
                p->low_ep = q->filters[lo].op == CFDB_RL_GT ? CFDB_RL_RANGE_EXCLUSIVE : CFDB_RL_RANGE_INCLUSIVE;
            } else {
                /* after (prefix, null): unset fields are not returned */
                cfdb_tuple_elem null = { .type = CFDB_TUPLE_NULL };
                rc = add(p->low, &null);
                p->low_ep = CFDB_RL_RANGE_EXCLUSIVE;
            }
            if (!rc && hi >= 0) {
                used[hi] = true;
                rc = add(p->high, &q->filters[hi].value);
                p->high_ep = q->filters[hi].op == CFDB_RL_LT ? CFDB_RL_RANGE_EXCLUSIVE : CFDB_RL_RANGE_INCLUSIVE;
            } else if (!rc && !best_eq) {
                p->high_ep = CFDB_RL_TREE_END;
            }
        }
    } else if (!rc) {
        /* a record scan: the type's own range when its primary key starts with its key */
        const cfdb_kex *pk = rt->primary_key;
        const cfdb_kex *first = pk->kind == CFDB_KEX_THEN && pk->child_count ? pk->children[0] : pk;
        if (first->kind == CFDB_KEX_RECORD_TYPE_KEY) {
            rc = add(p->low, &rt->record_type_key);
            if (!rc)
                rc = add(p->high, &rt->record_type_key);
            p->low_ep = p->high_ep = CFDB_RL_RANGE_INCLUSIVE;
        } else {
            p->type_filter = true;
            p->low_ep = CFDB_RL_TREE_START;
            p->high_ep = CFDB_RL_TREE_END;
        }
    }
    for (uint32_t i = 0; i < q->filter_count && !rc; i++) {
        if (used[i])
            continue;
        p->residual[p->nresidual] = &q->filters[i];
        const cfdb_kex *k = cfdb_kex_field(&p->arena, q->filters[i].field, CFDB_KEX_SCALAR);
        if (!k)
            rc = CFDB_ERR_OUT_OF_MEMORY;
        p->residual_expr[p->nresidual++] = k;
    }
    /* the filters are the caller's: copy them */
    for (uint32_t i = 0; i < p->nresidual && !rc; i++) {
        cfdb_rl_filter *f = cfdb_arena_alloc(&p->arena, sizeof *f);
        cfdb_tuple one;
        cfdb_tuple_init(&one, &p->arena);
        cfdb_bytes packed;
        cfdb_tuple back;
        if (!f || (rc = cfdb_tuple_add_elem(&one, &p->residual[i]->value)) ||
            (rc = cfdb_tuple_pack(&p->arena, cfdb_bytes_make(NULL, 0), &one, &packed)) ||
            (rc = cfdb_tuple_unpack(&p->arena, packed, &back))) {
            rc = rc ? rc : CFDB_ERR_OUT_OF_MEMORY;
            break;
        }
        f->field = rl_strdup(&p->arena, cfdb_bytes_str(p->residual[i]->field));
        f->op = p->residual[i]->op;
        f->value = *cfdb_tuple_get(&back, 0);
        p->residual[i] = f;
    }
    if (!rc)
        rc = explain(p);
    if (rc) {
        cfdb_rl_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int cfdb_rl_plan_query(const cfdb_rl_metadata *md, const cfdb_rl_query *q, cfdb_rl_plan **out)
{
    return plan_query(md, NULL, q, out);
}

int cfdb_rl_plan_query_store(const cfdb_rl_store *s, const cfdb_rl_query *q, cfdb_rl_plan **out)
{
    *out = NULL;
    if (!s)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return plan_query(cfdb_rl_store_metadata(s), s, q, out);
}

const char *cfdb_rl_plan_explain(const cfdb_rl_plan *p)
{
    return p->explain;
}

const cfdb_rl_index *cfdb_rl_plan_index(const cfdb_rl_plan *p)
{
    return p->index;
}

void cfdb_rl_plan_free(cfdb_rl_plan *p)
{
    if (!p)
        return;
    cfdb_arena_free(&p->arena);
    free(p);
}

/* ---- execution ---- */

int cfdb_rl_plan_execute(const cfdb_rl_plan *p, cfdb_rl_store *s, FDBTransaction *tr,
                         cfdb_bytes continuation, const cfdb_rl_scan_props *props,
                         cfdb_rl_cursor **out)
{
    *out = NULL;
    if (cfdb_rl_store_metadata(s) != p->md)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    cfdb_rl_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    c->kind = RL_CUR_QUERY;
    c->plan = p;
    c->md = p->md;
    cfdb_arena_init(&c->arena);
    cfdb_arena_init(&c->cont_arena);
    if (props)
        c->props = *props;
    cfdb_rl_scan_props in = c->props;
    in.reverse = p->reverse;
    in.limit = 0;
    in.skip = 0;
    if (c->props.limit && !in.mode_given) {
        in.mode_given = true;
        in.mode = FDB_STREAMING_MODE_ITERATOR;
    }
    cfdb_rl_range r = { p->low, p->high, p->low_ep, p->high_ep };
    int rc = cfdb_arena_dup_bytes(&c->cont_arena, continuation, &c->cont);
    if (!rc)
        rc = p->index ? cfdb_rl_scan_index_records(s, tr, p->index, &r, continuation, &in, &c->inner)
                      : cfdb_rl_scan_records(s, tr, &r, continuation, &in, &c->inner);
    if (rc) {
        cfdb_rl_cursor_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int matches(cfdb_rl_cursor *c, cfdb_arena *a, const cfdb_rl_item *item, bool *ok)
{
    const cfdb_rl_plan *p = c->plan;
    *ok = item->type == p->type;
    for (uint32_t i = 0; i < p->nresidual && *ok; i++) {
        cfdb_tuple *keys;
        uint32_t n;
        int rc = cfdb_kex_evaluate(a, p->residual_expr[i], item->record, NULL, &keys, &n);
        if (rc)
            return rc;
        const cfdb_tuple_elem *v = n == 1 && cfdb_tuple_count(&keys[0]) == 1 ? cfdb_tuple_get(&keys[0], 0) : NULL;
        if (!v || v->type == CFDB_TUPLE_NULL) {
            *ok = false;
            break;
        }
        int cmp = cfdb_tuple_elem_compare(v, &p->residual[i]->value);
        switch (p->residual[i]->op) {
        case CFDB_RL_EQ: *ok = cmp == 0; break;
        case CFDB_RL_LT: *ok = cmp < 0; break;
        case CFDB_RL_LE: *ok = cmp <= 0; break;
        case CFDB_RL_GT: *ok = cmp > 0; break;
        default: *ok = cmp >= 0; break;
        }
    }
    return 0;
}

int rl_query_next(cfdb_rl_cursor *c, cfdb_arena *a, cfdb_rl_item *item, bool *has)
{
    *has = false;
    for (;;) {
        if (c->props.limit && c->returned >= c->props.limit) {
            c->stop = CFDB_RL_RETURN_LIMIT_REACHED;
            return 0;
        }
        bool h;
        int rc = cfdb_rl_cursor_next(c->inner, a, item, &h);
        if (rc)
            return rc;
        if (!h) {
            c->stop = cfdb_rl_cursor_stop(c->inner);
            bool end;
            cfdb_bytes k = cfdb_rl_cursor_continuation(c->inner, &end);
            c->cont_end = end;
            cfdb_arena_reset(&c->cont_arena);
            return end ? 0 : cfdb_arena_dup_bytes(&c->cont_arena, k, &c->cont);
        }
        bool ok = item->record != NULL;
        if (ok && (rc = matches(c, a, item, &ok)))
            return rc;
        if (!ok)
            continue;
        if (c->skipped < c->props.skip) {
            c->skipped++;
            continue;
        }
        cfdb_arena_reset(&c->cont_arena);
        *has = true;
        return cfdb_arena_dup_bytes(&c->cont_arena, cfdb_rl_cursor_continuation(c->inner, NULL), &c->cont);
    }
}
