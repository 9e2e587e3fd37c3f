/* \xff\xff/transaction/conflicting_keys/: after a commit fails with not_committed and the
 * transaction asked for REPORT_CONFLICTING_KEYS, the read conflict ranges the resolver named
 * can be read back as the boundaries of a coalesced map: each conflicting range [b, e) shows as
 * prefix+b = "1" and prefix+e = "0" (NativeAPI tryCommit + ConflictingKeysImpl). The map is
 * cleared by the next commit attempt and by reset. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "txn_api.h"
#include "txn_internal.h"

#define PREFIX "\xff\xff/transaction/conflicting_keys/"
#define PREFIX_LEN (sizeof PREFIX - 1)

bool cfdb_conflicts_is_special(cfdb_bytes key)
{
    return key.len >= PREFIX_LEN && memcmp(key.ptr, PREFIX, PREFIX_LEN) == 0;
}

void cfdb_conflicts_clear(cfdb_txn *tx)
{
    free(tx->conflicts.mem);
    memset(&tx->conflicts, 0, sizeof tx->conflicts);
}

static int by_begin(const void *a, const void *b)
{
    return cfdb_bytes_cmp(((const cfdb_key_range *)a)->begin, ((const cfdb_key_range *)b)->begin);
}

void cfdb_conflicts_record(cfdb_txn *tx, const cfdb_key_range *reads, uint32_t nreads, const int32_t *indices,
                           uint32_t n)
{
    cfdb_key_range *picked = malloc((n ? n : 1) * sizeof *picked);
    if (!picked)
        return;
    uint32_t k = 0;
    size_t bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (indices[i] < 0 || (uint32_t)indices[i] >= nreads)
            continue;
        picked[k++] = reads[indices[i]];
    }
    qsort(picked, k, sizeof *picked, by_begin);
    /* union of the ranges: overlapping or touching ones merge (the map is coalesced) */
    uint32_t m = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (m && cfdb_bytes_cmp(picked[i].begin, picked[m - 1].end) <= 0) {
            if (cfdb_bytes_cmp(picked[i].end, picked[m - 1].end) > 0)
                picked[m - 1].end = picked[i].end;
        } else {
            picked[m++] = picked[i];
        }
    }
    for (uint32_t i = 0; i < m; i++)
        bytes += 2 * PREFIX_LEN + picked[i].begin.len + picked[i].end.len;

    pthread_mutex_lock(&tx->mu);
    cfdb_conflicts_clear(tx);
    uint8_t *mem = malloc(bytes + 2 * m * (sizeof(cfdb_bytes) + 1) + 1);
    if (mem) {
        cfdb_bytes *keys = (cfdb_bytes *)mem;
        uint8_t *values = mem + 2 * m * sizeof(cfdb_bytes);
        uint8_t *p = values + 2 * m;
        for (uint32_t i = 0; i < m; i++) {
            cfdb_bytes ends[2] = { picked[i].begin, picked[i].end };
            for (int e = 0; e < 2; e++) {
                memcpy(p, PREFIX, PREFIX_LEN);
                memcpy(p + PREFIX_LEN, ends[e].ptr, ends[e].len);
                keys[2 * i + e] = cfdb_bytes_make(p, PREFIX_LEN + ends[e].len);
                values[2 * i + e] = e == 0 ? '1' : '0';
                p += PREFIX_LEN + ends[e].len;
            }
        }
        tx->conflicts.mem = mem;
        tx->conflicts.keys = keys;
        tx->conflicts.values = values;
        tx->conflicts.count = 2 * m;
    }
    pthread_mutex_unlock(&tx->mu);
    free(picked);
}

/* Both reads answer from the map at once: nothing goes to the network. */

cfdb_future *cfdb_conflicts_get(cfdb_txn *tx, cfdb_bytes key)
{
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_VALUE);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_VALUE);
    pthread_mutex_lock(&tx->mu);
    int rc = tx->deferred_error;
    for (uint32_t i = 0; !rc && i < tx->conflicts.count; i++) {
        if (cfdb_bytes_eq(tx->conflicts.keys[i], key)) {
            f->r.value.present = true;
            rc = cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_make(&tx->conflicts.values[i], 1), &f->r.value.value)
                     ? TXN_ERR_NO_MEMORY
                     : 0;
            break;
        }
    }
    pthread_mutex_unlock(&tx->mu);
    cfdb_future_complete(f, rc);
    return f;
}

cfdb_future *cfdb_conflicts_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse)
{
    cfdb_future *f = cfdb_future_new(CFDB_FUTURE_KEYVALUES);
    if (!f)
        return txn_future_no_memory(CFDB_FUTURE_KEYVALUES);
    pthread_mutex_lock(&tx->mu);
    int rc = tx->deferred_error;
    uint32_t n = tx->conflicts.count, first = 0, last = 0;
    while (first < n && cfdb_bytes_cmp(tx->conflicts.keys[first], begin) < 0)
        first++;
    last = first;
    while (last < n && cfdb_bytes_cmp(tx->conflicts.keys[last], end) < 0)
        last++;
    uint32_t count = last - first;
    bool more = false;
    if (limit > 0 && count > (uint32_t)limit) {
        count = (uint32_t)limit;
        more = true;
    }
    cfdb_fdb_kv *kv = rc ? NULL : cfdb_arena_alloc(&f->arena, (count ? count : 1) * sizeof *kv);
    if (!rc && !kv)
        rc = TXN_ERR_NO_MEMORY;
    for (uint32_t i = 0; !rc && i < count; i++) {
        uint32_t at = reverse ? last - 1 - i : first + i;
        cfdb_bytes k, v;
        if (cfdb_arena_dup_bytes(&f->arena, tx->conflicts.keys[at], &k) ||
            cfdb_arena_dup_bytes(&f->arena, cfdb_bytes_make(&tx->conflicts.values[at], 1), &v)) {
            rc = TXN_ERR_NO_MEMORY;
            break;
        }
        kv[i] = (cfdb_fdb_kv){ k.ptr, (int)k.len, v.ptr, (int)v.len };
    }
    pthread_mutex_unlock(&tx->mu);
    if (!rc) {
        f->r.kvs.items = kv;
        f->r.kvs.count = (int)count;
        f->r.kvs.more = more;
    }
    cfdb_future_complete(f, rc);
    return f;
}
