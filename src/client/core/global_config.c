/* The client's global configuration view (global_config.h). Entries are a sorted array of
 * malloc'd records (key bytes, then a string value's bytes); the history kept from the last
 * ClientDBInfo lives in its own arena, replaced whole by each ClientDBInfo. All state is
 * behind mu. Invariants: entries sorted by key, no duplicate keys; last_update only grows
 * except when a refresh ends (it takes the reply's version, as GlobalConfig::refresh's caller
 * does). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "mutation.h"
#include "global_config.h"
#include "tenant_entry.h"

typedef struct gc_rec {
    size_t klen;
    cfdb_gc_value value; /* str.ptr points into the record */
    uint8_t bytes[];     /* key, then a string value */
} gc_rec;

struct cfdb_gc_view {
    pthread_mutex_t mu;
    gc_rec **items;
    size_t n, cap;
    bool initialized;
    int64_t last_update;
    /* the refresh running: GlobalConfig::refresh(lastKnown, largestSeen) */
    int64_t refresh_last_known, refresh_largest_seen;
    bool refresh_from_history; /* the refresh running was started by cfdb_gc_step */
    /* the last ClientDBInfo's history */
    cfdb_arena hist_arena;
    cfdb_version_history *hist;
    size_t nhist;
};

cfdb_gc_view *cfdb_gc_view_new(void)
{
    cfdb_gc_view *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    pthread_mutex_init(&v->mu, NULL);
    cfdb_arena_init(&v->hist_arena);
    v->refresh_last_known = -1;
    return v;
}

static void clear_all(cfdb_gc_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->items[i]);
    v->n = 0;
}

void cfdb_gc_view_free(cfdb_gc_view *v)
{
    if (!v)
        return;
    clear_all(v);
    free(v->items);
    cfdb_arena_free(&v->hist_arena);
    pthread_mutex_destroy(&v->mu);
    free(v);
}

/* ---- tuple elements (FoundationDB's tuple spec; integers and strings as the tenant keys
 * decode them, tenant_entry.c) ---- */

static uint64_t be64(const uint8_t *p, int n)
{
    uint64_t r = 0;
    for (int i = 0; i < n; i++)
        r = (r << 8) | p[i];
    return r;
}

int cfdb_gc_decode(cfdb_bytes packed, cfdb_arena *a, cfdb_gc_value *out)
{
    memset(out, 0, sizeof *out);
    if (packed.len == 0)
        return CFDB_ERR_INVALID_TUPLE_DATA_TYPE; /* an empty tuple: getType(0) fails */
    uint8_t code = packed.ptr[0];
    size_t pos = 0;
    if (code == 0x02) {
        out->type = CFDB_GC_STRING;
        return tuple_get_bytes(packed, &pos, a, &out->str);
    }
    if (code >= 0x0c && code <= 0x1c) {
        out->type = CFDB_GC_INT;
        return tuple_get_int(packed, &pos, &out->i);
    }
    if (code == 0x26 || code == 0x27) {
        out->type = CFDB_GC_BOOL;
        out->b = code == 0x27;
        return 0;
    }
    if (code == 0x20 && packed.len >= 5) {
        /* big-endian IEEE bits; positives have the sign bit flipped, negatives every bit */
        uint32_t bits = (uint32_t)be64(packed.ptr + 1, 4);
        bits = (bits & 0x80000000u) ? bits ^ 0x80000000u : ~bits;
        float f;
        memcpy(&f, &bits, 4);
        out->type = CFDB_GC_FLOAT;
        out->d = f;
        return 0;
    }
    if (code == 0x21 && packed.len >= 9) {
        uint64_t bits = be64(packed.ptr + 1, 8);
        bits = (bits & UINT64_C(0x8000000000000000)) ? bits ^ UINT64_C(0x8000000000000000) : ~bits;
        memcpy(&out->d, &bits, 8);
        out->type = CFDB_GC_DOUBLE;
        return 0;
    }
    if (code == 0x33 && packed.len >= 13) {
        out->type = CFDB_GC_VERSIONSTAMP;
        memcpy(out->vs, packed.ptr + 1, 12);
        return 0;
    }
    return CFDB_ERR_INVALID_TUPLE_DATA_TYPE;
}

/* ---- the map (mu held) ---- */

static size_t lower(const cfdb_gc_view *v, cfdb_bytes key)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cfdb_bytes_cmp(cfdb_bytes_make(v->items[mid]->bytes, v->items[mid]->klen), key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void erase_range(cfdb_gc_view *v, cfdb_bytes begin, cfdb_bytes end)
{
    size_t i = lower(v, begin), j = lower(v, end);
    if (cfdb_bytes_cmp(begin, end) >= 0 || i >= j)
        return;
    for (size_t k = i; k < j; k++)
        free(v->items[k]);
    memmove(v->items + i, v->items + j, (v->n - j) * sizeof *v->items);
    v->n -= j - i;
}

/* GlobalConfig::insert: the key is erased, then set when its value decodes. */
static int insert(cfdb_gc_view *v, cfdb_bytes key, cfdb_bytes packed)
{
    size_t i = lower(v, key);
    if (i < v->n && cfdb_bytes_eq(cfdb_bytes_make(v->items[i]->bytes, v->items[i]->klen), key)) {
        free(v->items[i]);
        memmove(v->items + i, v->items + i + 1, (v->n - i - 1) * sizeof *v->items);
        v->n--;
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_gc_value val;
    int rc = cfdb_gc_decode(packed, &a, &val);
    if (rc) {
        cfdb_arena_free(&a);
        return 0; /* dropped, as libfdb_c does */
    }
    size_t slen = val.type == CFDB_GC_STRING ? val.str.len : 0;
    gc_rec *r = malloc(sizeof *r + key.len + slen + 1);
    if (r && v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 16;
        gc_rec **ni = realloc(v->items, nc * sizeof *ni);
        if (!ni) {
            free(r);
            r = NULL;
        } else {
            v->items = ni;
            v->cap = nc;
        }
    }
    if (!r) {
        cfdb_arena_free(&a);
        return CFDB_ERR_TRANSACTION_TOO_LARGE;
    }
    r->klen = key.len;
    memcpy(r->bytes, key.ptr, key.len);
    r->value = val;
    if (slen)
        memcpy(r->bytes + key.len, val.str.ptr, slen);
    if (val.type == CFDB_GC_STRING)
        r->value.str = cfdb_bytes_make(r->bytes + key.len, slen);
    cfdb_arena_free(&a);
    memmove(v->items + i + 1, v->items + i, (v->n - i) * sizeof *v->items);
    v->items[i] = r;
    v->n++;
    return 0;
}

/* ---- the updater ---- */

void cfdb_gc_refresh_begin(cfdb_gc_view *v)
{
    pthread_mutex_lock(&v->mu);
    clear_all(v); /* self->erase(KeyRangeRef(""_sr, "\xff"_sr)): every bare key is below \xff */
    pthread_mutex_unlock(&v->mu);
}

int64_t cfdb_gc_refresh_last_known(cfdb_gc_view *v)
{
    pthread_mutex_lock(&v->mu);
    int64_t r = v->initialized ? v->refresh_last_known : -1;
    pthread_mutex_unlock(&v->mu);
    return r;
}

bool cfdb_gc_refresh_reply(cfdb_gc_view *v, const cfdb_key_value_vec *rows, int64_t version)
{
    static const char prefix[] = CFDB_GC_DATA_PREFIX;
    const size_t pl = sizeof prefix - 1;
    pthread_mutex_lock(&v->mu);
    for (uint32_t i = 0; i < rows->count; i++) {
        cfdb_bytes k = rows->items[i].key;
        /* removePrefix: the proxy sends only \xff/globalConfig/k/ rows */
        cfdb_bytes bare = k.len >= pl ? cfdb_bytes_make(k.ptr + pl, k.len - pl) : k;
        insert(v, bare, rows->items[i].value);
    }
    int64_t largest = v->initialized ? v->refresh_largest_seen : 0;
    bool done = version >= largest || largest == INT64_MAX;
    if (done) {
        v->last_update = version;
        v->initialized = true;
    }
    pthread_mutex_unlock(&v->mu);
    return done;
}

int cfdb_gc_set_history(cfdb_gc_view *v, const cfdb_version_history_vec *h)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_version_history *copy = cfdb_arena_alloc(&a, (h->count ? h->count : 1) * sizeof *copy);
    int rc = copy ? 0 : CFDB_ERR_TRANSACTION_TOO_LARGE;
    for (uint32_t i = 0; !rc && i < h->count; i++) {
        const cfdb_version_history *s = &h->items[i];
        copy[i].version = s->version;
        copy[i].mutations.count = s->mutations.count;
        copy[i].mutations.items = cfdb_arena_alloc(&a, (s->mutations.count ? s->mutations.count : 1) *
                                                           sizeof *copy[i].mutations.items);
        if (!copy[i].mutations.items) {
            rc = CFDB_ERR_TRANSACTION_TOO_LARGE;
            break;
        }
        for (uint32_t m = 0; m < s->mutations.count; m++) {
            cfdb_mutation *d = &copy[i].mutations.items[m];
            d->type = s->mutations.items[m].type;
            if (cfdb_arena_dup_bytes(&a, s->mutations.items[m].param1, &d->param1) ||
                cfdb_arena_dup_bytes(&a, s->mutations.items[m].param2, &d->param2))
                rc = CFDB_ERR_TRANSACTION_TOO_LARGE;
        }
    }
    if (rc) {
        cfdb_arena_free(&a);
        return rc;
    }
    pthread_mutex_lock(&v->mu);
    cfdb_arena_free(&v->hist_arena);
    v->hist_arena = a;
    v->hist = copy;
    v->nhist = h->count;
    pthread_mutex_unlock(&v->mu);
    return 0;
}

bool cfdb_gc_step(cfdb_gc_view *v, bool after_refresh)
{
    bool refresh = false;
    pthread_mutex_lock(&v->mu);
    bool hold = after_refresh && v->refresh_from_history && v->nhist > 0 && v->hist[0].version == INT64_MAX;
    if (after_refresh)
        v->refresh_from_history = false;
    if (v->initialized && v->nhist > 0 && !hold) {
        if (v->last_update < v->hist[0].version) {
            /* missed history (or the protocol changed: version INT64_MAX): read it all again */
            v->refresh_last_known = v->last_update;
            v->refresh_largest_seen = v->hist[v->nhist - 1].version;
            v->refresh_from_history = true;
            refresh = true;
        } else {
            for (size_t i = 0; i < v->nhist; i++) {
                const cfdb_version_history *vh = &v->hist[i];
                if (vh->version <= v->last_update)
                    continue;
                for (uint32_t m = 0; m < vh->mutations.count; m++) {
                    const cfdb_mutation *mu = &vh->mutations.items[m];
                    if (mu->type == CFDB_MUT_SET_VALUE)
                        insert(v, mu->param1, mu->param2);
                    else if (mu->type == CFDB_MUT_CLEAR_RANGE)
                        erase_range(v, mu->param1, mu->param2);
                }
                v->last_update = vh->version;
            }
        }
    }
    pthread_mutex_unlock(&v->mu);
    return refresh;
}

bool cfdb_gc_initialized(cfdb_gc_view *v)
{
    pthread_mutex_lock(&v->mu);
    bool r = v->initialized;
    pthread_mutex_unlock(&v->mu);
    return r;
}

int64_t cfdb_gc_last_update(cfdb_gc_view *v)
{
    pthread_mutex_lock(&v->mu);
    int64_t r = v->last_update;
    pthread_mutex_unlock(&v->mu);
    return r;
}

/* ---- reads ---- */

int cfdb_gc_get_range(cfdb_gc_view *v, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, cfdb_gc_entry **out,
                      size_t *n)
{
    *out = NULL;
    *n = 0;
    int rc = 0;
    pthread_mutex_lock(&v->mu);
    size_t i = lower(v, begin), j = lower(v, end);
    if (cfdb_bytes_cmp(begin, end) < 0 && i < j) {
        cfdb_gc_entry *e = cfdb_arena_alloc(a, (j - i) * sizeof *e);
        if (!e)
            rc = CFDB_ERR_UNKNOWN_ERROR;
        for (size_t k = i; !rc && k < j; k++) {
            const gc_rec *r = v->items[k];
            e[k - i].value = r->value;
            if (cfdb_arena_dup_bytes(a, cfdb_bytes_make(r->bytes, r->klen), &e[k - i].key) ||
                (r->value.type == CFDB_GC_STRING && cfdb_arena_dup_bytes(a, r->value.str, &e[k - i].value.str)))
                rc = CFDB_ERR_UNKNOWN_ERROR;
        }
        if (!rc) {
            *out = e;
            *n = j - i;
        }
    }
    pthread_mutex_unlock(&v->mu);
    return rc;
}

static const gc_rec *find(cfdb_gc_view *v, cfdb_bytes key)
{
    size_t i = lower(v, key);
    if (i < v->n && cfdb_bytes_eq(cfdb_bytes_make(v->items[i]->bytes, v->items[i]->klen), key))
        return v->items[i];
    return NULL;
}

bool cfdb_gc_get_double(cfdb_gc_view *v, cfdb_bytes key, double *out)
{
    pthread_mutex_lock(&v->mu);
    const gc_rec *r = find(v, key);
    bool ok = r && r->value.type == CFDB_GC_DOUBLE;
    if (ok)
        *out = r->value.d;
    pthread_mutex_unlock(&v->mu);
    return ok;
}

bool cfdb_gc_get_int(cfdb_gc_view *v, cfdb_bytes key, int64_t *out)
{
    pthread_mutex_lock(&v->mu);
    const gc_rec *r = find(v, key);
    bool ok = r && r->value.type == CFDB_GC_INT;
    if (ok)
        *out = r->value.i;
    pthread_mutex_unlock(&v->mu);
    return ok;
}
