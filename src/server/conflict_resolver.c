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

/* The same as im_find, for a key at or after the key an earlier search filled update[]
 * for, with no boundary removed since at or before that key: each level's walk starts
 * from update[] (or from where the level above stopped, when that is further) instead of
 * head, so a run of increasing keys walks only the boundaries between them. */
static void im_find_on(const interval_map *m, cfdb_bytes key, im_node **update)
{
    im_node *x = m->head;
    bool ahead = false; /* x is past update[l]: it moved on a higher level */
    for (int l = m->level - 1; l >= 0; l--) {
        if (!ahead)
            x = update[l];
        for (;;) {
            im_node *n = x->link[l].next;
            if (!n || cfdb_bytes_cmp(im_key(n), key) > 0)
                break;
            x = n;
            ahead = true;
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

/* Links a new boundary n (im_alloc'd) after update[] (the last nodes < its key) on each
 * of its levels; the span maxima are the caller's to repair. */
static void im_splice(interval_map *m, im_node **update, im_node *n)
{
    if (n->height > m->level)
        m->level = n->height; /* update[] above the old level already holds head */
    for (int l = 0; l < n->height; l++) {
        n->link[l].next = update[l]->link[l].next;
        update[l]->link[l].next = n;
    }
    m->count++;
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
 * in the map: the interval map's monotonic write. One search finds the boundaries at or
 * before begin; the ones strictly inside (begin, end) follow them at level 0 and go; the
 * version they leave in effect just before end becomes end's boundary when end has none,
 * so keys from end on keep the version they had.
 * Span maxima: every span that holds begin's boundary now has version as its maximum (no
 * version in the map is larger), which covers the spans the removals shortened; only the
 * spans that start at a new end boundary, or that now stop at a new begin boundary, are
 * recomputed from the level below, bottom-up. */
static int im_write(interval_map *m, cfdb_bytes begin, cfdb_bytes end, int64_t version,
                       im_node **update, bool from_update)
{
    if (cfdb_bytes_cmp(begin, end) >= 0)
        return 0;
    if (from_update)
        im_find_on(m, begin, update);
    else
        im_find(m, begin, true, update);
    bool begin_new = !im_is_node_at(m, update[0], begin);
    /* the boundaries strictly inside (begin, end), and whether end has one */
    size_t inside = 0;
    int c = 1;
    for (im_node *x = update[0]->link[0].next; x && (c = cfdb_bytes_cmp(im_key(x), end)) < 0;
         x = x->link[0].next)
        inside++;
    /* New boundaries are allocated before anything changes, so running out of memory
     * leaves the map as it was. */
    im_node *b = begin_new ? im_alloc(im_random_height(m), begin, version) : NULL;
    im_node *e = c != 0 ? im_alloc(im_random_height(m), end, 0) : NULL;
    if ((c != 0 && !e) || (begin_new && !b)) {
        free(b);
        free(e);
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    }
    int64_t at_end = update[0]->version; /* the version of the interval holding end */
    while (inside--) {
        /* update[l] stays the last node <= begin: n follows it on each of n's levels */
        im_node *n = update[0]->link[0].next;
        at_end = n->version;
        for (int l = 0; l < n->height; l++)
            update[l]->link[l].next = n->link[l].next;
        free(n);
        m->count--;
    }
    /* Nothing lies strictly between begin and end now, so update[] are also the last
     * nodes < end (and < begin when begin is new): end links in first, then begin
     * before it. */
    if (e) {
        e->version = at_end;
        im_splice(m, update, e);
    }
    if (b)
        im_splice(m, update, b);
    else
        update[0]->version = version;
    for (int l = 0; l < m->level; l++) {
        if (e && l < e->height)
            im_fix(e, l);
        if (b && l < b->height) {
            b->link[l].max_version = version;
            im_fix(update[l], l);
        } else {
            update[l]->link[l].max_version = version;
        }
    }
    while (m->level > 1 && !m->head->link[m->level - 1].next)
        m->level--;
    return 0;
}

/* Writes ranges[0..n) at version. A transaction's write conflict ranges arrive sorted
 * (both libfdb_c and cfdb send them so): while each begin is at or after the previous
 * one, the search goes on from the previous write's boundaries, which that write left in
 * place (it removes only boundaries after its begin, and a later begin is past them). */
static int im_write_ranges(interval_map *m, const cfdb_conflict_range *ranges, size_t n, int64_t version)
{
    im_node *update[IM_MAX_HEIGHT];
    cfdb_bytes prev = { 0 };
    bool have = false;
    for (size_t i = 0; i < n; i++) {
        const cfdb_conflict_range *w = &ranges[i];
        if (cfdb_bytes_cmp(w->begin, w->end) >= 0)
            continue;
        bool on = have && cfdb_bytes_cmp(w->begin, prev) >= 0;
        int rc = im_write(m, w->begin, w->end, version, update, on);
        if (rc)
            return rc;
        prev = w->begin;
        have = true;
    }
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

static bool im_consistent(const interval_map *m)
{
    for (int l = m->level; l < IM_MAX_HEIGHT; l++)
        if (m->head->link[l].next)
            return false;
    for (int l = 0; l < m->level; l++) {
        const im_node *low = m->head; /* walks level l - 1 alongside level l */
        for (const im_node *x = m->head; x; x = x->link[l].next) {
            if (x->height <= l)
                return false;
            const im_node *next = x->link[l].next;
            if (next && x != m->head && cfdb_bytes_cmp(im_key(x), im_key(next)) >= 0)
                return false;
            int64_t mv = x->version;
            if (l > 0) {
                if (low != x)
                    return false; /* x is not on the level below */
                mv = x->link[l - 1].max_version;
                for (low = x->link[l - 1].next; low != next; low = low->link[l - 1].next) {
                    if (!low)
                        return false;
                    mv = max64(mv, low->link[l - 1].max_version);
                }
            }
            if (x->link[l].max_version != mv)
                return false;
        }
    }
    return true;
}

bool cfdb_resolver_consistent(const cfdb_resolver *r)
{
    return im_consistent(&r->history) && im_consistent(&r->batch);
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

static int range_begin_cmp(const void *x, const void *y)
{
    return cfdb_bytes_cmp(((const cfdb_conflict_range *)x)->begin, ((const cfdb_conflict_range *)y)->begin);
}

/* The union of the read ranges that step 3 will check, as sorted disjoint ranges in
 * *out (from a). */
static int read_union(const cfdb_resolver_txn *txns, const cfdb_resolver_result *results, size_t count,
                      cfdb_arena *a, cfdb_conflict_range **out, size_t *n_out)
{
    size_t n = 0;
    for (size_t t = 0; t < count; t++)
        if (results[t].status == CFDB_RESOLVE_COMMITTED)
            n += txns[t].read_count;
    *out = NULL;
    *n_out = 0;
    if (!n)
        return 0;
    cfdb_conflict_range *u = cfdb_arena_alloc(a, n * sizeof *u);
    if (!u)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    n = 0;
    for (size_t t = 0; t < count; t++)
        if (results[t].status == CFDB_RESOLVE_COMMITTED)
            for (size_t i = 0; i < txns[t].read_count; i++)
                if (range_nonempty(&txns[t].read_ranges[i]))
                    u[n++] = txns[t].read_ranges[i];
    qsort(u, n, sizeof *u, range_begin_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && cfdb_bytes_cmp(u[i].begin, u[m - 1].end) <= 0) {
            if (cfdb_bytes_cmp(u[i].end, u[m - 1].end) > 0)
                u[m - 1].end = u[i].end;
        } else {
            u[m++] = u[i];
        }
    }
    *out = u;
    *n_out = m;
    return 0;
}

/* Whether w meets any of the sorted disjoint ranges u[0..n). */
static bool union_meets(const cfdb_conflict_range *u, size_t n, const cfdb_conflict_range *w)
{
    size_t lo = 0, hi = n; /* the first range that ends after w's begin */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cfdb_bytes_cmp(u[mid].end, w->begin) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cfdb_bytes_cmp(u[lo].begin, w->end) < 0;
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

    /* 3: against earlier survivors of this batch, in batch order. Only writes that meet
     * some read range still to check go into the batch map (a transaction's own
     * self-conflict range, say, meets no other's), and only those of transactions before
     * the last one that still reads. */
    cfdb_conflict_range *reads;
    size_t n_reads;
    if (read_union(txns, results, count, a, &reads, &n_reads))
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    size_t readers_end = 0;
    for (size_t t = 0; t < count; t++)
        if (results[t].status == CFDB_RESOLVE_COMMITTED && txns[t].read_count)
            readers_end = t + 1;
    if (r->batch.count)
        im_clear(&r->batch);
    for (size_t t = 0; t < readers_end; t++) {
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
            im_node *update[IM_MAX_HEIGHT];
            if (range_nonempty(w) && union_meets(reads, n_reads, w) &&
                im_write(&r->batch, w->begin, w->end, commit_version, update, false))
                return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        }
    }

    /* 4: the survivors' writes become history at the commit version. */
    size_t written = 0;
    for (size_t t = 0; t < count; t++) {
        if (results[t].status != CFDB_RESOLVE_COMMITTED)
            continue;
        if (im_write_ranges(&r->history, txns[t].write_ranges, txns[t].write_count, commit_version))
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        written += txns[t].write_count;
    }
    r->last_commit = commit_version;
    if (new_oldest > r->oldest)
        r->oldest = new_oldest;
    forget_history(r, written * 3 + 10);
    return 0;
}
