/* Multi-version skip list; see mvcc_store.h for the model. */
#include "mvcc_store.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_ops.h"
#include "error_codes.h"

enum { MAX_HEIGHT = 24 }; /* branching 1/4: ample for billions of keys */

/* One version of one key: a value, or "cleared" when !present. */
typedef struct mv_entry {
    struct mv_entry *older;
    int64_t version;
    uint32_t len;
    bool present;
    uint8_t data[];
} mv_entry;

typedef struct mv_node {
    mv_entry *newest;      /* newest first; NULL once everything was forgotten */
    struct mv_node *prev;  /* level-0 back link for reverse scans; NULL for the first */
    uint32_t klen;
    uint32_t pending;      /* forget-queue records naming this node; it lives while > 0 */
    uint8_t height;
    struct mv_node *next[]; /* height links, then the key bytes */
} mv_node;

/* Every new entry is recorded here in version order, so forgetting only visits
 * keys that actually hold old versions. */
typedef struct gc_record {
    int64_t version;
    mv_node *node;
} gc_record;

struct cfdb_mvcc_store {
    mv_node *head; /* sentinel with MAX_HEIGHT links and no key */
    int level;     /* links in use at head */
    uint64_t rng;
    int64_t latest;
    int64_t oldest;
    int64_t floor; /* forget_before stops here while > 0 */
    gc_record *queue; /* ring buffer */
    size_t q_head, q_len, q_cap;
    cfdb_arena scratch; /* atomic-op results, reset per mutation */
    cfdb_mvcc_stats stats;
};

static inline const uint8_t *node_key_ptr(const mv_node *n)
{
    return (const uint8_t *)&n->next[n->height];
}

static inline cfdb_bytes node_key(const mv_node *n)
{
    return cfdb_bytes_make(node_key_ptr(n), n->klen);
}

static inline int cmp_node(const mv_node *n, cfdb_bytes key)
{
    return cfdb_bytes_cmp(node_key(n), key);
}

/* The entry a read at version sees, or NULL when the key is absent there. */
static inline const mv_entry *visible_at(const mv_node *n, int64_t version)
{
    const mv_entry *e = n->newest;
    while (e && e->version > version)
        e = e->older;
    return e && e->present ? e : NULL;
}

static inline cfdb_bytes entry_value(const mv_entry *e)
{
    return cfdb_bytes_make(e->data, e->len);
}

static int random_height(cfdb_mvcc_store *s)
{
    /* xorshift64*: cheap, and deterministic per store. */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    uint64_t r = s->rng * 2685821657736338717ull;
    int h = 1;
    while (h < MAX_HEIGHT && (r & 3) == 0) {
        h++;
        r >>= 2;
    }
    return h;
}

cfdb_mvcc_store *cfdb_mvcc_create(void)
{
    cfdb_mvcc_store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->head = calloc(1, sizeof(mv_node) + MAX_HEIGHT * sizeof(mv_node *));
    if (!s->head) {
        free(s);
        return NULL;
    }
    s->head->height = MAX_HEIGHT;
    s->level = 1;
    s->rng = 0x9E3779B97F4A7C15ull;
    cfdb_arena_init(&s->scratch);
    return s;
}

static void free_chain(cfdb_mvcc_store *s, mv_entry *e)
{
    while (e) {
        mv_entry *older = e->older;
        s->stats.entries--;
        s->stats.bytes -= e->len;
        free(e);
        e = older;
    }
}

void cfdb_mvcc_destroy(cfdb_mvcc_store *s)
{
    if (!s)
        return;
    mv_node *n = s->head->next[0];
    while (n) {
        mv_node *next = n->next[0];
        free_chain(s, n->newest);
        free(n);
        n = next;
    }
    free(s->head);
    free(s->queue);
    cfdb_arena_free(&s->scratch);
    free(s);
}

int64_t cfdb_mvcc_latest_version(const cfdb_mvcc_store *s)
{
    return s->latest;
}

int64_t cfdb_mvcc_oldest_version(const cfdb_mvcc_store *s)
{
    return s->oldest;
}

void cfdb_mvcc_get_stats(const cfdb_mvcc_store *s, cfdb_mvcc_stats *out)
{
    *out = s->stats;
}

/* ---- skip list navigation ---- */

/* First node with key >= key; update[l] receives the last node < key at level l. */
static mv_node *find_ge_update(const cfdb_mvcc_store *s, cfdb_bytes key, mv_node **update)
{
    mv_node *x = s->head;
    for (int l = s->level - 1; l >= 0; l--) {
        while (x->next[l] && cmp_node(x->next[l], key) < 0)
            x = x->next[l];
        update[l] = x;
    }
    return x->next[0];
}

/* First node with key >= key (or_equal) / > key (!or_equal). */
static mv_node *find_forward(const cfdb_mvcc_store *s, cfdb_bytes key, bool or_equal)
{
    mv_node *x = s->head;
    for (int l = s->level - 1; l >= 0; l--) {
        for (;;) {
            mv_node *n = x->next[l];
            if (!n)
                break;
            int c = cmp_node(n, key);
            if (c < 0 || (c == 0 && !or_equal))
                x = n;
            else
                break;
        }
    }
    return x->next[0];
}

/* Last node with key <= key (or_equal) / < key (!or_equal); NULL if none. */
static mv_node *find_backward(const cfdb_mvcc_store *s, cfdb_bytes key, bool or_equal)
{
    mv_node *x = s->head;
    for (int l = s->level - 1; l >= 0; l--) {
        for (;;) {
            mv_node *n = x->next[l];
            if (!n)
                break;
            int c = cmp_node(n, key);
            if (c < 0 || (c == 0 && or_equal))
                x = n;
            else
                break;
        }
    }
    return x == s->head ? NULL : x;
}

static mv_node *insert_node(cfdb_mvcc_store *s, cfdb_bytes key, mv_node **update)
{
    int h = random_height(s);
    mv_node *n = malloc(sizeof(mv_node) + (size_t)h * sizeof(mv_node *) + key.len);
    if (!n)
        return NULL;
    n->newest = NULL;
    n->klen = key.len;
    n->pending = 0;
    n->height = (uint8_t)h;
    if (key.len)
        memcpy((uint8_t *)&n->next[h], key.ptr, key.len);
    if (h > s->level) {
        for (int l = s->level; l < h; l++)
            update[l] = s->head;
        s->level = h;
    }
    for (int l = 0; l < h; l++) {
        n->next[l] = update[l]->next[l];
        update[l]->next[l] = n;
    }
    n->prev = update[0] == s->head ? NULL : update[0];
    if (n->next[0])
        n->next[0]->prev = n;
    s->stats.keys++;
    s->stats.bytes += key.len;
    return n;
}

static void unlink_node(cfdb_mvcc_store *s, mv_node *n)
{
    mv_node *update[MAX_HEIGHT];
    mv_node *found = find_ge_update(s, node_key(n), update);
    (void)found; /* keys are unique, so found == n */
    for (int l = 0; l < n->height; l++)
        update[l]->next[l] = n->next[l];
    if (n->next[0])
        n->next[0]->prev = n->prev;
    while (s->level > 1 && !s->head->next[s->level - 1])
        s->level--;
    s->stats.keys--;
    s->stats.bytes -= n->klen;
    free_chain(s, n->newest);
    free(n);
}

/* ---- writes ---- */

static int reserve_queue(cfdb_mvcc_store *s)
{
    if (s->q_len < s->q_cap)
        return 0;
    size_t cap = s->q_cap ? s->q_cap * 2 : 1024;
    gc_record *q = malloc(cap * sizeof *q);
    if (!q)
        return CFDB_ERR_UNKNOWN_ERROR;
    for (size_t i = 0; i < s->q_len; i++)
        q[i] = s->queue[(s->q_head + i) % s->q_cap];
    free(s->queue);
    s->queue = q;
    s->q_cap = cap;
    s->q_head = 0;
    return 0;
}

/* Gives node a new newest entry at version. Clearing a key that is already absent
 * is skipped: nothing a read can observe changes. A second write at the same
 * version replaces the first. value may point into the entry being replaced. */
static int put_entry(cfdb_mvcc_store *s, mv_node *n, int64_t version, bool present,
                     cfdb_bytes value)
{
    if (!present && (!n->newest || !n->newest->present))
        return 0;
    bool same_version = n->newest && n->newest->version == version;
    if (!same_version && reserve_queue(s))
        return CFDB_ERR_UNKNOWN_ERROR;
    uint32_t len = present ? value.len : 0;
    mv_entry *e = malloc(sizeof(mv_entry) + len);
    if (!e)
        return CFDB_ERR_UNKNOWN_ERROR;
    e->version = version;
    e->len = len;
    e->present = present;
    if (len)
        memcpy(e->data, value.ptr, len);
    s->stats.entries++;
    s->stats.bytes += len;
    if (same_version) {
        mv_entry *old = n->newest;
        e->older = old->older;
        old->older = NULL;
        free_chain(s, old);
    } else {
        e->older = n->newest;
        s->queue[(s->q_head + s->q_len) % s->q_cap] = (gc_record){ version, n };
        s->q_len++;
        n->pending++;
    }
    n->newest = e;
    return 0;
}

static int write_key(cfdb_mvcc_store *s, int64_t version, cfdb_bytes key, bool present,
                     cfdb_bytes value)
{
    mv_node *update[MAX_HEIGHT];
    mv_node *n = find_ge_update(s, key, update);
    if (!n || cmp_node(n, key) != 0) {
        if (!present)
            return 0;
        n = insert_node(s, key, update);
        if (!n)
            return CFDB_ERR_UNKNOWN_ERROR;
    }
    return put_entry(s, n, version, present, value);
}

static int clear_range(cfdb_mvcc_store *s, int64_t version, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    for (mv_node *n = find_forward(s, begin, true); n && cmp_node(n, end) < 0; n = n->next[0])
        if (put_entry(s, n, version, false, (cfdb_bytes){ 0 }))
            return CFDB_ERR_UNKNOWN_ERROR;
    return 0;
}

static int atomic_op(cfdb_mvcc_store *s, int64_t version, const cfdb_mutation *m)
{
    mv_node *n = find_forward(s, m->param1, true);
    if (n && cmp_node(n, m->param1) != 0)
        n = NULL;
    const mv_entry *cur = n && n->newest && n->newest->present ? n->newest : NULL;
    cfdb_bytes existing = cur ? entry_value(cur) : (cfdb_bytes){ 0 };
    cfdb_bytes result;
    bool present;
    cfdb_arena_reset(&s->scratch);
    int rc = cfdb_apply_atomic(m->type, cur ? &existing : NULL, m->param2, &s->scratch,
                               &result, &present);
    if (rc)
        return rc;
    /* The storage server drops a CompareAndClear that does not match. */
    if (m->type == CFDB_MUT_COMPARE_AND_CLEAR && present)
        return 0;
    return write_key(s, version, m->param1, present, result);
}

static bool applicable_type(int type)
{
    switch (type) {
    case CFDB_MUT_SET_VALUE:
    case CFDB_MUT_CLEAR_RANGE:
    case CFDB_MUT_NO_OP:
        return true;
    case CFDB_MUT_SET_VERSIONSTAMPED_KEY:
    case CFDB_MUT_SET_VERSIONSTAMPED_VALUE:
        return false;
    default:
        return cfdb_mutation_is_atomic(type);
    }
}

int cfdb_mvcc_apply(cfdb_mvcc_store *s, int64_t version, const cfdb_mutation *mutations,
                    size_t count)
{
    if (version < s->latest)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    for (size_t i = 0; i < count; i++)
        if (!applicable_type(mutations[i].type))
            return CFDB_ERR_INVALID_MUTATION_TYPE;
    s->latest = version;
    for (size_t i = 0; i < count; i++) {
        const cfdb_mutation *m = &mutations[i];
        int rc;
        switch (m->type) {
        case CFDB_MUT_SET_VALUE:
            rc = write_key(s, version, m->param1, true, m->param2);
            break;
        case CFDB_MUT_CLEAR_RANGE:
            rc = clear_range(s, version, m->param1, m->param2);
            break;
        case CFDB_MUT_NO_OP:
            rc = 0;
            break;
        default:
            rc = atomic_op(s, version, m);
            break;
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- forgetting ---- */

/* Keeps the newest entry at or below oldest (what a read at oldest sees) and
 * everything newer; a cleared entry at the tail says nothing a missing one
 * would not, so it goes too. */
static void prune_node(cfdb_mvcc_store *s, mv_node *n, int64_t oldest)
{
    mv_entry **link = &n->newest;
    while (*link && (*link)->version > oldest)
        link = &(*link)->older;
    mv_entry *keep = *link;
    if (!keep)
        return;
    free_chain(s, keep->older);
    keep->older = NULL;
    if (!keep->present) {
        *link = NULL;
        free_chain(s, keep);
    }
}

void cfdb_mvcc_forget_before(cfdb_mvcc_store *s, int64_t oldest)
{
    if (oldest > s->latest)
        oldest = s->latest;
    if (s->floor > 0 && oldest > s->floor)
        oldest = s->floor;
    if (oldest <= s->oldest)
        return;
    s->oldest = oldest;
    while (s->q_len && s->queue[s->q_head].version <= oldest) {
        mv_node *n = s->queue[s->q_head].node;
        s->q_head = (s->q_head + 1) % s->q_cap;
        s->q_len--;
        prune_node(s, n, oldest);
        if (--n->pending == 0 && !n->newest)
            unlink_node(s, n);
    }
}

void cfdb_mvcc_set_floor(cfdb_mvcc_store *s, int64_t floor)
{
    s->floor = floor;
}

/* ---- reads ---- */

int cfdb_mvcc_check_read_version(const cfdb_mvcc_store *s, int64_t version)
{
    if (version < s->oldest)
        return CFDB_ERR_TRANSACTION_TOO_OLD;
    if (version > s->latest)
        return CFDB_ERR_FUTURE_VERSION;
    return 0;
}

int cfdb_mvcc_get(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes key,
                  cfdb_bytes *value, bool *present)
{
    int rc = cfdb_mvcc_check_read_version(s, version);
    if (rc)
        return rc;
    mv_node *n = find_forward(s, key, true);
    const mv_entry *e = n && cmp_node(n, key) == 0 ? visible_at(n, version) : NULL;
    *present = e != NULL;
    *value = e ? entry_value(e) : (cfdb_bytes){ (const uint8_t *)"", 0 };
    return 0;
}

/* The storage server's readRange over [begin, end): the rows it would return are
 * handed to sink in order. *bytes is the remaining budget, updated. */
typedef void (*row_sink)(void *ctx, const mv_node *n, const mv_entry *e);

static bool scan_range(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes begin,
                       cfdb_bytes end, int64_t limit, int64_t *bytes, row_sink sink,
                       void *ctx)
{
    if (limit >= 0) {
        for (const mv_node *n = find_forward(s, begin, true);
             limit > 0 && *bytes > 0 && n && cmp_node(n, end) < 0; n = n->next[0]) {
            const mv_entry *e = visible_at(n, version);
            if (!e)
                continue;
            sink(ctx, n, e);
            limit--;
            *bytes -= CFDB_MVCC_ROW_OVERHEAD + (int64_t)n->klen + e->len;
        }
    } else {
        for (const mv_node *n = find_backward(s, end, false);
             limit < 0 && *bytes > 0 && n && cmp_node(n, begin) >= 0; n = n->prev) {
            const mv_entry *e = visible_at(n, version);
            if (!e)
                continue;
            sink(ctx, n, e);
            limit++;
            *bytes -= CFDB_MVCC_ROW_OVERHEAD + (int64_t)n->klen + e->len;
        }
    }
    return limit == 0 || *bytes <= 0;
}

typedef struct collect_ctx {
    cfdb_arena *arena;
    cfdb_mvcc_kv *rows;
    size_t count, cap;
    bool oom;
} collect_ctx;

static void collect_row(void *vctx, const mv_node *n, const mv_entry *e)
{
    collect_ctx *c = vctx;
    if (c->oom)
        return;
    if (c->count == c->cap) {
        /* Doubling inside the arena wastes at most what the result itself takes. */
        size_t cap = c->cap ? c->cap * 2 : 16;
        cfdb_mvcc_kv *rows = cfdb_arena_alloc(c->arena, cap * sizeof *rows);
        if (!rows) {
            c->oom = true;
            return;
        }
        if (c->count)
            memcpy(rows, c->rows, c->count * sizeof *rows);
        c->rows = rows;
        c->cap = cap;
    }
    c->rows[c->count++] = (cfdb_mvcc_kv){ node_key(n), entry_value(e) };
}

int cfdb_mvcc_read_range(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes begin,
                         cfdb_bytes end, int limit, int limit_bytes, cfdb_arena *a,
                         cfdb_mvcc_range_result *out)
{
    int rc = cfdb_mvcc_check_read_version(s, version);
    if (rc)
        return rc;
    collect_ctx c = { .arena = a };
    int64_t bytes = limit_bytes;
    bool more = scan_range(s, version, begin, end, limit, &bytes, collect_row, &c);
    if (c.oom)
        return CFDB_ERR_UNKNOWN_ERROR;
    out->rows = c.count ? c.rows : NULL;
    out->count = c.count;
    out->more = more;
    return 0;
}

/* ---- key selectors ---- */

static bool selector_is_backward(cfdb_mvcc_selector sel)
{
    return !sel.or_equal && sel.offset <= 0;
}

static bool selector_is_first_greater_or_equal(cfdb_mvcc_selector sel)
{
    return !sel.or_equal && sel.offset == 1;
}

/* FDB's selectorInRange: the shard suffices to at least start resolving sel. */
static bool selector_in_range(cfdb_mvcc_selector sel, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(sel.key, begin) < 0)
        return false;
    int c = cfdb_bytes_cmp(sel.key, end);
    return selector_is_backward(sel) ? c <= 0 : c < 0;
}

static int key_after(cfdb_arena *a, cfdb_bytes k, cfdb_bytes *out)
{
    uint8_t *buf = cfdb_arena_alloc(a, (size_t)k.len + 1);
    if (!buf)
        return CFDB_ERR_UNKNOWN_ERROR;
    if (k.len)
        memcpy(buf, k.ptr, k.len);
    buf[k.len] = 0;
    *out = cfdb_bytes_make(buf, (size_t)k.len + 1);
    return 0;
}

/* What findKey needs from its range read: how many rows, the first, the last, and
 * the rows at two candidate positions. */
typedef struct pick_ctx {
    int64_t count;
    int64_t want_a, want_b;
    const mv_node *first, *last, *at_a, *at_b;
} pick_ctx;

static void pick_row(void *vctx, const mv_node *n, const mv_entry *e)
{
    (void)e;
    pick_ctx *p = vctx;
    if (p->count == 0)
        p->first = n;
    if (p->count == p->want_a)
        p->at_a = n;
    if (p->count == p->want_b)
        p->at_b = n;
    p->last = n;
    p->count++;
}

static int32_t saturate_i32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* The storage server's findKey within [rb, re) (selector_in_range holds). On return
 * *offset == 0 and *key is the answer, or *offset < 0 and the answer is the key
 * *offset steps before the first key >= *key, or *offset > 0 and the answer is the
 * key (*offset - 1) steps after the first key >= *key. */
static int find_key(const cfdb_mvcc_store *s, int64_t version, cfdb_mvcc_selector sel,
                    cfdb_bytes rb, cfdb_bytes re, cfdb_arena *a, cfdb_bytes *key,
                    int64_t *offset)
{
    bool forward = sel.offset > 0;
    bool skip_equal = sel.or_equal == forward;
    int64_t distance = forward ? (int64_t)sel.offset : 1 - (int64_t)sel.offset;
    int64_t want = distance + skip_equal;
    /* Trivial selectors read at most two rows, so they get no byte budget. */
    int64_t budget = sel.offset >= 0 && sel.offset <= 1 ? INT32_MAX
                                                         : CFDB_MVCC_SELECTOR_LIMIT_BYTES;
    cfdb_bytes scan_begin = rb, scan_end = re;
    if (forward) {
        scan_begin = sel.key;
    } else if (key_after(a, sel.key, &scan_end)) {
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    pick_ctx p = { .want_a = distance - 1, .want_b = distance };
    bool rep_more = scan_range(s, version, scan_begin, scan_end, forward ? want : -want,
                               &budget, pick_row, &p);
    bool more = rep_more && p.count != want;
    if (more && !forward && p.count == 1) {
        /* One huge row must not stall a backward walk: take two rows regardless. */
        budget = INT32_MAX;
        p = (pick_ctx){ .want_a = distance - 1, .want_b = distance };
        rep_more = scan_range(s, version, scan_begin, scan_end, -2, &budget, pick_row, &p);
        more = rep_more && p.count != want;
    }

    int64_t index = distance - 1;
    const mv_node *hit = p.at_a;
    if (skip_equal && p.count && cfdb_bytes_eq(node_key(p.first), sel.key)) {
        index++;
        hit = p.at_b;
    }
    if (index < p.count) {
        *offset = 0;
        *key = node_key(hit);
        return 0;
    }
    *offset = index - p.count + 1;
    if (!forward)
        *offset = -*offset;
    if (more) {
        if (forward)
            return key_after(a, node_key(p.last), key);
        *key = node_key(p.last);
    } else {
        *key = forward ? re : rb;
    }
    return 0;
}

int cfdb_mvcc_get_key(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes shard_begin,
                      cfdb_bytes shard_end, cfdb_mvcc_selector sel, cfdb_arena *a,
                      cfdb_mvcc_selector *out)
{
    int rc = cfdb_mvcc_check_read_version(s, version);
    if (rc)
        return rc;
    if (!selector_in_range(sel, shard_begin, shard_end))
        return CFDB_ERR_WRONG_SHARD_SERVER;
    cfdb_bytes k;
    int64_t offset;
    if (find_key(s, version, sel, shard_begin, shard_end, a, &k, &offset))
        return CFDB_ERR_UNKNOWN_ERROR;
    if (offset < 0) /* firstGreaterOrEqual(k) + offset */
        *out = (cfdb_mvcc_selector){ k, false, saturate_i32(1 + offset) };
    else if (offset > 0) /* firstGreaterOrEqual(k) + offset - 1 */
        *out = (cfdb_mvcc_selector){ k, false, saturate_i32(offset) };
    else
        *out = (cfdb_mvcc_selector){ k, true, 0 };
    return 0;
}

int cfdb_mvcc_get_range(const cfdb_mvcc_store *s, int64_t version, cfdb_bytes shard_begin,
                        cfdb_bytes shard_end, cfdb_mvcc_selector begin,
                        cfdb_mvcc_selector end, int limit, int limit_bytes, cfdb_arena *a,
                        cfdb_mvcc_range_result *out)
{
    int rc = cfdb_mvcc_check_read_version(s, version);
    if (rc)
        return rc;
    if (!selector_in_range(begin, shard_begin, shard_end))
        return CFDB_ERR_WRONG_SHARD_SERVER;
    /* The end may also be exactly "first key >= shard end". */
    if (!selector_in_range(end, shard_begin, shard_end) &&
        !(selector_is_first_greater_or_equal(end) && cfdb_bytes_eq(end.key, shard_end)))
        return CFDB_ERR_WRONG_SHARD_SERVER;

    cfdb_bytes b = begin.key, e = end.key;
    int64_t off_b = 0, off_e = 0;
    if (!selector_is_first_greater_or_equal(begin) &&
        find_key(s, version, begin, shard_begin, shard_end, a, &b, &off_b))
        return CFDB_ERR_UNKNOWN_ERROR;
    if (!selector_is_first_greater_or_equal(end) &&
        find_key(s, version, end, shard_begin, shard_end, a, &e, &off_e))
        return CFDB_ERR_UNKNOWN_ERROR;
    /* One step past the shard is harmless: the begin then lies at or past the end,
     * and an exclusive end at the next shard's first key excludes it. */
    if ((off_b && off_b != 1) || (off_e && off_e != 1))
        return CFDB_ERR_WRONG_SHARD_SERVER;

    if (cfdb_bytes_cmp(b, e) >= 0) {
        *out = (cfdb_mvcc_range_result){ NULL, 0, false };
        return 0;
    }
    return cfdb_mvcc_read_range(s, version, b, e, limit, limit_bytes, a, out);
}

/* ---- iteration ---- */

static void iter_settle(cfdb_mvcc_iter *it, const mv_node *n, bool forward)
{
    while (n) {
        const mv_entry *e = visible_at(n, it->version);
        if (e) {
            it->node = n;
            it->key = node_key(n);
            it->value = entry_value(e);
            return;
        }
        n = forward ? n->next[0] : n->prev;
    }
    it->node = NULL;
    it->key = it->value = (cfdb_bytes){ (const uint8_t *)"", 0 };
}

static void iter_init(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version)
{
    it->store = s;
    it->version = version;
}

void cfdb_mvcc_iter_seek_ge(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key)
{
    iter_init(it, s, version);
    iter_settle(it, find_forward(s, key, true), true);
}

void cfdb_mvcc_iter_seek_gt(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key)
{
    iter_init(it, s, version);
    iter_settle(it, find_forward(s, key, false), true);
}

void cfdb_mvcc_iter_seek_le(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key)
{
    iter_init(it, s, version);
    iter_settle(it, find_backward(s, key, true), false);
}

void cfdb_mvcc_iter_seek_lt(cfdb_mvcc_iter *it, const cfdb_mvcc_store *s, int64_t version,
                            cfdb_bytes key)
{
    iter_init(it, s, version);
    iter_settle(it, find_backward(s, key, false), false);
}

bool cfdb_mvcc_iter_valid(const cfdb_mvcc_iter *it)
{
    return it->node != NULL;
}

void cfdb_mvcc_iter_next(cfdb_mvcc_iter *it)
{
    if (it->node)
        iter_settle(it, ((const mv_node *)it->node)->next[0], true);
}

void cfdb_mvcc_iter_prev(cfdb_mvcc_iter *it)
{
    if (it->node)
        iter_settle(it, ((const mv_node *)it->node)->prev, false);
}
