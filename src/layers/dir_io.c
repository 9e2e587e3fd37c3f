/* SPDX-License-Identifier: Apache-2.0 */
/* See dir_io.h: blocking fdb_c.h reads for the directory layer. */
#include "dir_io.h"

#include "error_codes.h"

#include <string.h>

static int wait_future(FDBFuture *f)
{
    if (!f)
        return CFDB_ERR_INTERNAL_ERROR;
    fdb_error_t err = fdb_future_block_until_ready(f);
    if (!err)
        err = fdb_future_get_error(f);
    return err;
}

static int copy(cfdb_arena *a, const uint8_t *p, int n, cfdb_bytes *out)
{
    if (n <= 0) {
        *out = (cfdb_bytes){ (const uint8_t *)"", 0 };
        return 0;
    }
    void *c = cfdb_arena_dup(a, p, (size_t)n);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    *out = cfdb_bytes_make(c, (size_t)n);
    return 0;
}

int dir_get(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes key, bool snapshot, bool *present,
            cfdb_bytes *value)
{
    FDBFuture *f = fdb_transaction_get(tr, key.ptr, (int)key.len, snapshot);
    int err = wait_future(f);
    if (!err) {
        fdb_bool_t p = 0;
        const uint8_t *v = NULL;
        int n = 0;
        err = fdb_future_get_value(f, &p, &v, &n);
        if (!err) {
            *present = p != 0;
            err = p ? copy(a, v, n, value) : 0;
            if (!p)
                *value = (cfdb_bytes){ 0 };
        }
    }
    if (f)
        fdb_future_destroy(f);
    return err;
}

/* One get_range request; the pairs copied into a. */
static int range_once(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes begin, cfdb_bytes end, int limit,
                      bool snapshot, bool reverse, int iteration, dir_kv **kvs, int *count, bool *more)
{
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(begin.ptr, (int)begin.len),
                                             FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(end.ptr, (int)end.len), limit, 0,
                                             limit ? FDB_STREAMING_MODE_EXACT : FDB_STREAMING_MODE_ITERATOR,
                                             iteration, snapshot, reverse);
    int err = wait_future(f);
    if (!err) {
        const FDBKeyValue *kv = NULL;
        int n = 0;
        fdb_bool_t m = 0;
        err = fdb_future_get_keyvalue_array(f, &kv, &n, &m);
        if (!err) {
            *more = m != 0;
            *count = n;
            *kvs = n ? cfdb_arena_alloc(a, (size_t)n * sizeof **kvs) : NULL;
            if (n && !*kvs)
                err = CFDB_ERR_OUT_OF_MEMORY;
            for (int i = 0; !err && i < n; i++) {
                err = copy(a, kv[i].key, kv[i].key_length, &(*kvs)[i].key);
                if (!err)
                    err = copy(a, kv[i].value, kv[i].value_length, &(*kvs)[i].value);
            }
        }
    }
    if (f)
        fdb_future_destroy(f);
    return err;
}

int dir_get_first(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes begin, cfdb_bytes end, bool snapshot,
                  bool reverse, bool *found, dir_kv *kv)
{
    dir_kv *kvs = NULL;
    int n = 0;
    bool more = false;
    int err = range_once(tr, a, begin, end, 1, snapshot, reverse, 1, &kvs, &n, &more);
    if (err)
        return err;
    *found = n > 0;
    if (n)
        *kv = kvs[0];
    return 0;
}

int dir_get_all(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes begin, cfdb_bytes end, dir_kv **kvs,
                uint32_t *count)
{
    dir_kv *all = NULL;
    uint32_t total = 0, cap = 0;
    for (int iteration = 1;; iteration++) {
        dir_kv *part = NULL;
        int n = 0;
        bool more = false;
        int err = range_once(tr, a, begin, end, 0, false, false, iteration, &part, &n, &more);
        if (err)
            return err;
        if (total + (uint32_t)n > cap) {
            uint32_t ncap = cap ? cap * 2 : 16;
            while (ncap < total + (uint32_t)n)
                ncap *= 2;
            dir_kv *grown = cfdb_arena_alloc(a, (size_t)ncap * sizeof *grown);
            if (!grown)
                return CFDB_ERR_OUT_OF_MEMORY;
            if (total)
                memcpy(grown, all, (size_t)total * sizeof *grown);
            all = grown;
            cap = ncap;
        }
        if (n)
            memcpy(all + total, part, (size_t)n * sizeof *part);
        total += (uint32_t)n;
        if (!more || n == 0)
            break;
        /* continue after the last key read */
        cfdb_bytes last = all[total - 1].key;
        uint8_t *next = cfdb_arena_alloc(a, (size_t)last.len + 1);
        if (!next)
            return CFDB_ERR_OUT_OF_MEMORY;
        memcpy(next, last.ptr, last.len);
        next[last.len] = 0x00;
        begin = cfdb_bytes_make(next, (size_t)last.len + 1);
    }
    *kvs = all;
    *count = total;
    return 0;
}

int dir_strinc(cfdb_arena *a, cfdb_bytes p, cfdb_bytes *out)
{
    uint32_t n = p.len;
    while (n && p.ptr[n - 1] == 0xff)
        n--;
    if (!n)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    uint8_t *c = cfdb_arena_dup(a, p.ptr, n);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    c[n - 1]++;
    *out = cfdb_bytes_make(c, n);
    return 0;
}

int dir_concat(cfdb_arena *a, cfdb_bytes x, cfdb_bytes y, cfdb_bytes *out)
{
    size_t n = (size_t)x.len + y.len;
    uint8_t *c = cfdb_arena_alloc(a, n ? n : 1);
    if (!c)
        return CFDB_ERR_OUT_OF_MEMORY;
    if (x.len)
        memcpy(c, x.ptr, x.len);
    if (y.len)
        memcpy(c + x.len, y.ptr, y.len);
    *out = cfdb_bytes_make(c, n);
    return 0;
}
