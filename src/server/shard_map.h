/* The key space ["", "\xff\xff") split into shards, each owned by one storage server.
 * Pure logic; keys are owned copies. */
#ifndef CFDB_SERVER_SHARD_MAP_H
#define CFDB_SERVER_SHARD_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/bytes.h"

typedef struct srv_shard {
    uint8_t *begin; /* owned; shard i ends where shard i+1 begins, the last at \xff\xff */
    uint32_t begin_len;
    int owner;
} srv_shard;

typedef struct srv_shard_map {
    srv_shard *shards;
    size_t count;
} srv_shard_map;

extern const cfdb_bytes srv_key_space_end; /* "\xff\xff" */

/* One shard ["", \xff\xff) owned by server 0. Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int srv_shard_map_init(srv_shard_map *m);
void srv_shard_map_free(srv_shard_map *m);
/* Splits at key (no-op if already a boundary, or key is "" or >= \xff\xff); the new
 * shard keeps the owner of the one it was cut from. Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int srv_shard_map_split(srv_shard_map *m, cfdb_bytes key);
/* Index of the shard containing key (keys >= \xff\xff: the last shard). */
size_t srv_shard_map_find(const srv_shard_map *m, cfdb_bytes key);
/* Index of the shard containing the key just before key ("" gives shard 0). */
size_t srv_shard_map_find_before(const srv_shard_map *m, cfdb_bytes key);
cfdb_bytes srv_shard_begin(const srv_shard_map *m, size_t i);
cfdb_bytes srv_shard_end(const srv_shard_map *m, size_t i);
/* Merges neighbouring shards with the same owner. */
void srv_shard_map_coalesce(srv_shard_map *m);

#endif
