/* Resolver: interval map of last-write versions; see conflict_resolver.h. */
#include "conflict_resolver.h"

#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

enum { IM_MAX_HEIGHT = 24 };
#define NEVER_WRITTEN INT64_MIN

/* A boundary: keys from this node's key up to the next node's key were last
 * written at version. Each link also carries the largest version among the nodes
 * it spans (this node included, the target excluded), which lets a range query
 * jump over whole stretches. */
typedef struct im_link {
    struct im_node *next;
    int64_t max_version;
} im_link;

typedef struct im_node {
    int64_t version;
    uint32_t klen;
    uint8_t height;
    im_link link[]; /* height links, then the key bytes */
} im_node;

typedef struct interval_map {
    im_node *head; /* the empty key, lowest of all; never removed */
    int level;
    size_t count;  /* boundaries besides head */
    uint64_t rng;
} interval_map;

struct cfdb_resolver {
    interval_map history;
    interval_map batch; /* writes of this batch's committed transactions so far */
    int64_t window;
    int64_t last_commit;
    int64_t oldest;
    uint8_t *gc_cursor; /* where forgetting resumes (a copied key) */
    uint32_t gc_cursor_len;
    bool gc_cursor_set;
};

static inline cfdb_bytes im_key(const im_node *n)
{
    return cfdb_bytes_make((const uint8_t *)&n->link[n->height], n->klen);
}

static inline int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static im_node *im_alloc(int height, cfdb_bytes key, int64_t version)
{
    im_node *n = malloc(sizeof(im_node) + (size_t)height * sizeof(im_link) + key.len);
    if (!n)
        return NULL;
    n->version = version;
    n->klen = key.len;
    n->height = (uint8_t)height;
    for (int l = 0; l < height; l++)
        n->link[l] = (im_link){ NULL, version };
    if (key.len)
        memcpy((uint8_t *)&n->link[height], key.ptr, key.len);
    return n;
}

static int im_init(interval_map *m, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->head = im_alloc(IM_MAX_HEIGHT, (cfdb_bytes){ 0 }, NEVER_WRITTEN);
    if (!m->head)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    m->level = 1;
    m->rng = seed;
    return 0;
}

/* Frees every boundary but head and forgets head's version. */
static void im_clear(interval_map *m)
{
    im_node *n = m->head->link[0].next;
    while (n) {
        im_node *next = n->link[0].next;
        free(n);
        n = next;
    }
    m->head->version = NEVER_WRITTEN;
    for (int l = 0; l < IM_MAX_HEIGHT; l++)
        m->head->link[l] = (im_link){ NULL, NEVER_WRITTEN };
    m->level = 1;
    m->count = 0;
}

static void im_free(interval_map *m)
{
    if (!m->head)
        return;
    im_clear(m);
    free(m->head);
    m->head = NULL;
}

static int im_random_height(interval_map *m)
{
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    uint64_t r = m->rng * 2685821657736338717ull;
    int h = 1;
    while (h < IM_MAX_HEIGHT && (r & 3) == 0) {
        h++;
        r >>= 2;
    }
    return h;
}

/* update[l] = last node at level l whose key is < key (or <= key when or_equal);
 * head stands for the empty key. */
static void im_find(const interval_map *m, cfdb_bytes key, bool or_equal, im_node **update)
{
    im_node *x = m->head;
    for (int l = IM_MAX_HEIGHT - 1; l >= 0; l--) {
        if (l < m->level) {
            for (;;) {
                im_node *n = x->link[l].next;
                if (!n)
                    break;
                int c = cfdb_bytes_cmp(im_key(n), key);
                if (c < 0 || (c == 0 && or_equal))
                    x = n;
                else
                    break;
            }
        }
        update[l] = x;
    }
}

/* Recomputes x's level-l span maximum from the level below. */
static void im_fix(im_node *x, int l)
{
    if (l == 0) {
        x->link[0].max_version = x->version;
        return;
    }
    im_node *stop = x->link[l].next;
    int64_t mv = x->link[l - 1].max_version;
    for (im_node *y = x->link[l - 1].next; y != stop; y = y->link[l - 1].next)
        mv = max64(mv, y->link[l - 1].max_version);
    x->link[l].max_version = mv;
}

/* After a change at or right after update[*] (and to n itself, when given), restores
 * every span maximum that covers it, bottom-up so each level reads a correct one. */
static void im_fix_path(interval_map *m, im_node **update, im_node *n)
{
    for (int l = 0; l < m->level; l++) {
        if (n && l < n->height)
            im_fix(n, l);
        im_fix(update[l], l);
    }
}

/* Inserts a boundary after update[] (preds < key); returns it or NULL. */
static im_node *im_insert(interval_map *m, im_node **update, cfdb_bytes key, int64_t version)
{
    int h = im_random_height(m);
    im_node *n = im_alloc(h, key, version);
    if (!n)
        return NULL;
    if (h > m->level)
        m->level = h; /* update[] above the old level already holds head */
    for (int l = 0; l < h; l++) {
        n->link[l].next = update[l]->link[l].next;
        update[l]->link[l].next = n;
    }
    m->count++;
    im_fix_path(m, update, n);
    return n;
}

static bool im_is_node_at(const interval_map *m, const im_node *x, cfdb_bytes key)
{
    if (x == m->head)
        return key.len == 0;
    return cfdb_bytes_eq(im_key(x), key);
}

/* Largest version of any interval that intersects [begin, end). */
static int64_t im_max(const interval_map *m, cfdb_bytes begin, cfdb_bytes end)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return NEVER_WRITTEN;
    im_node *update[IM_MAX_HEIGHT];
    im_find(m, begin, true, update);
    im_node *x = update[0]; /* the interval holding begin */
    int64_t mv = x->version;
    for (;;) {
        /* Take the longest link that stays below end. */
        int l = x->height - 1;
        while (l >= 0 && !(x->link[l].next && cfdb_bytes_cmp(im_key(x->link[l].next), end) < 0))
            l--;
        if (l < 0)
            return mv;
        mv = max64(mv, x->link[l].max_version);
        x = x->link[l].next;
        mv = max64(mv, x->version);
    }
}

/* Records that [begin, end) was written at version, which must be >= every version
 * in the map: the interval map's monotonic write. */
static int im_write(interval_map *m, cfdb_bytes begin, cfdb_bytes end, int64_t version)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    im_node *update[IM_MAX_HEIGHT];

    /* Keys from end on keep the version they had. */
    im_find(m, end, true, update);
    if (!im_is_node_at(m, update[0], end)) {
        /* update[] holds the last nodes < end, as insertion wants. */
        if (!im_insert(m, update, end, update[0]->version))
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    }

    /* Drop the boundaries strictly inside (begin, end). */
    im_find(m, begin, true, update);
    im_node *n;
    while ((n = update[0]->link[0].next) && cfdb_bytes_cmp(im_key(n), end) < 0) {
        for (int l = 0; l < n->height; l++)
            update[l]->link[l].next = n->link[l].next;
        free(n);
        m->count--;
    }

    if (im_is_node_at(m, update[0], begin)) {
        update[0]->version = version;
        /* update[l] is the begin node itself on its own levels. */
        im_fix_path(m, update, NULL);
    } else {
        /* update[] are the last nodes <= begin, i.e. < begin here; inserting
         * also repairs the spans the removals shortened. */
        if (!im_insert(m, update, begin, version))
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    }
    while (m->level > 1 && !m->head->link[m->level - 1].next)
        m->level--;
    return 0;
}

/* ---- resolver ---- */

cfdb_resolver *cfdb_resolver_create(int64_t window)
{
    cfdb_resolver *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (im_init(&r->history, 0x2545F4914F6CDD1Dull) || im_init(&r->batch, 0x9E3779B97F4A7C15ull)) {
        cfdb_resolver_destroy(r);
        return NULL;
    }
    r->window = window;
    r->last_commit = INT64_MIN;
    r->oldest = INT64_MIN;
    return r;
}

void cfdb_resolver_destroy(cfdb_resolver *r)
{
    if (!r)
        return;
    im_free(&r->history);
    im_free(&r->batch);
    free(r->gc_cursor);
    free(r);
}

int64_t cfdb_resolver_oldest_version(const cfdb_resolver *r)
{
    return r->oldest;
}

size_t cfdb_resolver_history_size(const cfdb_resolver *r)
{
    return r->history.count;
}

/* Merges away up to budget boundaries whose interval and predecessor's interval
 * are both older than oldest: no surviving transaction can conflict with either,
 * so they are as good as never written. Resumes where the last call stopped and
 * wraps around, so steady work per batch keeps pace with new boundaries. */
static void forget_history(cfdb_resolver *r, size_t budget)
{
    interval_map *m = &r->history;
    im_node *update[IM_MAX_HEIGHT];
    cfdb_bytes from = r->gc_cursor_set ? cfdb_bytes_make(r->gc_cursor, r->gc_cursor_len)
                                       : (cfdb_bytes){ 0 };
    im_find(m, from, true, update);
    bool wrapped = false;
    while (budget--) {
        im_node *x = update[0]->link[0].next;
        if (!x) {
            if (wrapped)
                break;
            wrapped = true;
            im_find(m, (cfdb_bytes){ 0 }, true, update);
            continue;
        }
        if (x->version < r->oldest && update[0]->version < r->oldest) {
            for (int l = 0; l < x->height; l++)
                update[l]->link[l].next = x->link[l].next;
            free(x);
            m->count--;
            im_fix_path(m, update, NULL);
        } else {
            for (int l = 0; l < x->height; l++)
                update[l] = x;
        }
    }
    while (m->level > 1 && !m->head->link[m->level - 1].next)
        m->level--;
    /* Remember the last node kept as the resume point. */
    cfdb_bytes at = update[0] == m->head ? (cfdb_bytes){ 0 } : im_key(update[0]);
    uint8_t *copy = at.len ? malloc(at.len) : NULL;
    if (at.len && !copy)
        return; /* keep the old cursor; forgetting is only an optimisation */
    if (at.len)
        memcpy(copy, at.ptr, at.len);
    free(r->gc_cursor);
    r->gc_cursor = copy;
    r->gc_cursor_len = at.len;
    r->gc_cursor_set = true;
}

static bool range_nonempty(const cfdb_conflict_range *c)
{
    return cfdb_bytes_cmp(c->begin, c->end) < 0;
}

int cfdb_resolver_resolve(cfdb_resolver *r, int64_t commit_version,
                          const cfdb_resolver_txn *txns, size_t count, cfdb_arena *a,
                          cfdb_resolver_result *results)
{
    if (commit_version < r->last_commit)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    int64_t new_oldest = commit_version - r->window;

    /* 1-2: too old, then against history as it stood before this batch. */
    for (size_t t = 0; t < count; t++) {
        const cfdb_resolver_txn *tx = &txns[t];
        cfdb_resolver_result *res = &results[t];
        *res = (cfdb_resolver_result){ CFDB_RESOLVE_COMMITTED, NULL, 0 };
        if (tx->read_count && tx->read_snapshot < new_oldest) {
            res->status = CFDB_RESOLVE_TOO_OLD;
            continue;
        }
        for (size_t i = 0; i < tx->read_count; i++) {
            const cfdb_conflict_range *rr = &tx->read_ranges[i];
            if (!range_nonempty(rr) || im_max(&r->history, rr->begin, rr->end) <= tx->read_snapshot)
                continue;
            res->status = CFDB_RESOLVE_CONFLICT;
            if (!tx->report_conflicting_keys)
                break;
            if (!res->conflicting) {
                res->conflicting = cfdb_arena_alloc(a, tx->read_count * sizeof(int32_t));
                if (!res->conflicting)
                    return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
            }
            res->conflicting[res->conflicting_count++] = (int32_t)i;
        }
    }

    /* 3: against earlier survivors of this batch, in batch order. */
    im_clear(&r->batch);
    for (size_t t = 0; t < count; t++) {
        const cfdb_resolver_txn *tx = &txns[t];
        cfdb_resolver_result *res = &results[t];
        if (res->status != CFDB_RESOLVE_COMMITTED)
            continue;
        for (size_t i = 0; i < tx->read_count; i++) {
            const cfdb_conflict_range *rr = &tx->read_ranges[i];
            if (!range_nonempty(rr) || im_max(&r->batch, rr->begin, rr->end) == NEVER_WRITTEN)
                continue;
            res->status = CFDB_RESOLVE_CONFLICT;
            if (tx->report_conflicting_keys) {
                res->conflicting = cfdb_arena_alloc(a, sizeof(int32_t));
                if (!res->conflicting)
                    return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
                res->conflicting[0] = (int32_t)i;
                res->conflicting_count = 1;
            }
            break;
        }
        if (res->status != CFDB_RESOLVE_COMMITTED)
            continue;
        for (size_t i = 0; i < tx->write_count; i++) {
            const cfdb_conflict_range *w = &tx->write_ranges[i];
            if (im_write(&r->batch, w->begin, w->end, commit_version))
                return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        }
    }

    /* 4: the survivors' writes become history at the commit version. */
    size_t written = 0;
    for (size_t t = 0; t < count; t++) {
        if (results[t].status != CFDB_RESOLVE_COMMITTED)
            continue;
        for (size_t i = 0; i < txns[t].write_count; i++) {
            const cfdb_conflict_range *w = &txns[t].write_ranges[i];
            if (im_write(&r->history, w->begin, w->end, commit_version))
                return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
            written++;
        }
    }
    r->last_commit = commit_version;
    if (new_oldest > r->oldest)
        r->oldest = new_oldest;
    forget_history(r, written * 3 + 10);
    return 0;
}
