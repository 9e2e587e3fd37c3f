/* Shard map: a sorted array of shard begin keys. */
#include "shard_map.h"

#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

const cfdb_bytes srv_key_space_end = { (const uint8_t *)"\xff\xff", 2 };

int srv_shard_map_init(srv_shard_map *m)
{
    m->shards = calloc(1, sizeof(srv_shard));
    if (!m->shards)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    m->count = 1;
    m->shards[0].begin = NULL;
    m->shards[0].begin_len = 0;
    m->shards[0].owner = 0;
    return 0;
}

void srv_shard_map_free(srv_shard_map *m)
{
    for (size_t i = 0; i < m->count; i++)
        free(m->shards[i].begin);
    free(m->shards);
    m->shards = NULL;
    m->count = 0;
}

cfdb_bytes srv_shard_begin(const srv_shard_map *m, size_t i)
{
    return cfdb_bytes_make(m->shards[i].begin, m->shards[i].begin_len);
}

cfdb_bytes srv_shard_end(const srv_shard_map *m, size_t i)
{
    if (i + 1 < m->count)
        return srv_shard_begin(m, i + 1);
    return srv_key_space_end;
}

size_t srv_shard_map_find(const srv_shard_map *m, cfdb_bytes key)
{
    /* last shard whose begin <= key */
    size_t lo = 0, hi = m->count; /* invariant: shards[lo].begin <= key */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (cfdb_bytes_cmp(srv_shard_begin(m, mid), key) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

size_t srv_shard_map_find_before(const srv_shard_map *m, cfdb_bytes key)
{
    /* last shard whose begin < key */
    size_t lo = 0, hi = m->count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (cfdb_bytes_cmp(srv_shard_begin(m, mid), key) < 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int srv_shard_map_split(srv_shard_map *m, cfdb_bytes key)
{
    if (key.len == 0 || cfdb_bytes_cmp(key, srv_key_space_end) >= 0)
        return 0;
    size_t i = srv_shard_map_find(m, key);
    if (cfdb_bytes_eq(srv_shard_begin(m, i), key))
        return 0;
    srv_shard *n = realloc(m->shards, (m->count + 1) * sizeof(srv_shard));
    if (!n)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    m->shards = n;
    uint8_t *copy = malloc(key.len);
    if (!copy)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    memcpy(copy, key.ptr, key.len);
    memmove(&m->shards[i + 2], &m->shards[i + 1], (m->count - i - 1) * sizeof(srv_shard));
    m->shards[i + 1].begin = copy;
    m->shards[i + 1].begin_len = key.len;
    m->shards[i + 1].owner = m->shards[i].owner;
    m->count++;
    return 0;
}

void srv_shard_map_coalesce(srv_shard_map *m)
{
    size_t w = 0;
    for (size_t r = 0; r < m->count; r++) {
        if (w > 0 && m->shards[w - 1].owner == m->shards[r].owner) {
            free(m->shards[r].begin);
            continue;
        }
        m->shards[w++] = m->shards[r];
    }
    m->count = w;
}
