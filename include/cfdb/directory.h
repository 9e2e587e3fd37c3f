/* SPDX-License-Identifier: Apache-2.0 */
/* Directory layer: named directories mapped to short key prefixes, stored exactly as the
 * official bindings store them (bindings/python/fdb/directory_impl.py, FoundationDB 7.3),
 * so that a tree written by the Python/Java bindings opens here and the other way round.
 *
 * Layout (N = node prefix, "\xfe" by default; C = content prefix, "" by default;
 * pack = the tuple layer, names are unicode strings 0x02, prefixes byte strings 0x01):
 *   node(p)                     = N + pack((p,))          the node of the directory with prefix p
 *   root node                   = node(N)
 *   root + pack(("version",))   = three uint32 little-endian: 1, 0, 0 (written on first write)
 *   node(p) + pack((0, name))   = prefix of the subdirectory `name` of that directory
 *   node(p) + pack(("layer",))  = the directory's layer string ("partition" for a partition)
 *   root + pack(("hca", 0, s))  = high-contention allocator: allocations in the window from s
 *                                 (64-bit little-endian counter, atomic ADD)
 *   root + pack(("hca", 1, k))  = "" for each candidate k taken from the current window
 * An automatically allocated prefix is C + pack((k,)) for a candidate integer k drawn at
 * random from the current window [s, s + w), w = 64 below 255, 1024 below 65535, then 8192.
 * A partition with prefix p is a directory layer of its own with N = p + "\xfe", C = p.
 *
 * Paths: arrays of UTF-8 names (cfdb_bytes, NULs allowed), relative to the directory layer
 * they are given to; through the root layer they reach into partitions as the bindings do.
 *
 * Blocking API: every function runs inside the caller's transaction through the public
 * fdb_c.h API only, and waits for its futures (fdb_future_block_until_ready) before
 * returning: call it from an application thread, never from the network thread or a
 * future callback. Nothing is committed here: the caller commits, and on an error from
 * FoundationDB (not_committed, transaction_too_old, ...) runs fdb_transaction_on_error and
 * retries, as for any transaction. Results live in the arena passed in.
 *
 * Errors (include/cfdb/errors.h): FoundationDB errors of the reads pass through; the
 * directory errors are
 *   2253 manual_prefixes_not_enabled   2254 prefix_in_partition   2255 cannot_open_root_directory
 *   2256 directory_already_exists      2257 directory_does_not_exist
 *   2258 parent_directory_does_not_exist  2259 mismatched_layer
 *   2260 invalid_directory_layer_metadata 2261 cannot_move_directory_between_partitions
 *   2262 cannot_use_partition_as_subspace 2263 incompatible_directory_version
 *   2264 directory_prefix_not_empty    2265 directory_prefix_in_use
 *   2266 invalid_destination_directory 2267 cannot_modify_root_directory
 *   2000 client_invalid_operation (a name that is not UTF-8)
 */
#ifndef CFDB_DIRECTORY_H
#define CFDB_DIRECTORY_H

#include <stdbool.h>
#include <stdint.h>

#include <foundationdb/fdb_c_types.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "cfdb/subspace.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfdb_directory_layer {
    cfdb_bytes node_prefix;          /* N */
    cfdb_bytes content_prefix;       /* C */
    bool allow_manual_prefixes;
    const cfdb_bytes *path;          /* absolute path of the partition it serves (root: none) */
    uint32_t path_len;
    /* Source of allocator candidates: NULL uses getrandom(2). Tests may make it
     * deterministic; it must be thread-safe if the layer is shared. */
    uint64_t (*random)(void *ctx);
    void *random_ctx;
} cfdb_directory_layer;

/* The default layer: N = "\xfe", C = "", no manual prefixes. */
void cfdb_directory_layer_init(cfdb_directory_layer *dl);
/* A layer with other subspaces (the prefix bytes must outlive it). */
void cfdb_directory_layer_init_custom(cfdb_directory_layer *dl, cfdb_bytes node_prefix,
                                      cfdb_bytes content_prefix, bool allow_manual_prefixes);

/* An opened directory. */
typedef struct cfdb_directory {
    cfdb_bytes prefix;               /* its contents' prefix */
    cfdb_bytes layer;                /* its layer string ("" when none) */
    const cfdb_bytes *path;          /* absolute path */
    uint32_t path_len;
    bool is_partition;               /* layer == "partition" */
    cfdb_directory_layer owner;      /* the layer whose nodes hold its entry */
} cfdb_directory;

/* The contents subspace of d; 2262 for a partition (as the bindings refuse it). */
int cfdb_directory_subspace(const cfdb_directory *d, cfdb_subspace *out);
/* The directory layer inside partition d (2000 when d is not a partition): paths given to
 * it are relative to d. */
int cfdb_directory_partition_layer(const cfdb_directory *d, cfdb_arena *a, cfdb_directory_layer *out);

/* Operations relative to an opened directory, as the bindings' Directory methods: the layer
 * and path to pass to the functions below for d's subpath sub[0..n). For a partition d the
 * layer is the partition's own (an empty sub names the partition itself, in its parent layer);
 * otherwise d's owner with d's path in front of sub. */
int cfdb_directory_resolve(const cfdb_directory *d, cfdb_arena *a, const cfdb_bytes *sub, uint32_t n,
                           cfdb_directory_layer *dl, const cfdb_bytes **path, uint32_t *path_n);

/* Opens path, creating it and missing parents if needed. layer: checked against an
 * existing directory's layer (when non-empty), recorded for a new one. */
int cfdb_directory_create_or_open(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                                  const cfdb_bytes *path, uint32_t n, cfdb_bytes layer,
                                  cfdb_directory *out);
/* Opens an existing directory (2257 when missing, 2259 on another non-empty layer). */
int cfdb_directory_open(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                        const cfdb_bytes *path, uint32_t n, cfdb_bytes layer, cfdb_directory *out);
/* Creates a new directory (2256 when it exists). prefix: NULL to allocate one, else a
 * manual prefix (needs allow_manual_prefixes; never inside a partition). */
int cfdb_directory_create(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                          const cfdb_bytes *path, uint32_t n, cfdb_bytes layer,
                          const cfdb_bytes *prefix, cfdb_directory *out);
/* Moves old_path to new_path (same prefix, new name); never between partitions. */
int cfdb_directory_move(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                        const cfdb_bytes *old_path, uint32_t old_n, const cfdb_bytes *new_path,
                        uint32_t new_n, cfdb_directory *out);
/* Moves the opened directory d to the absolute path new_path. */
int cfdb_directory_move_to(const cfdb_directory *d, FDBTransaction *tr, cfdb_arena *a,
                           const cfdb_bytes *new_path, uint32_t new_n, cfdb_directory *out);
/* Removes the directory, its subdirectories and all their contents (2257 when missing). */
int cfdb_directory_remove(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                          const cfdb_bytes *path, uint32_t n);
int cfdb_directory_remove_if_exists(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                                    const cfdb_bytes *path, uint32_t n, bool *removed);
/* Names of the subdirectories, in key order (2257 when the directory is missing). */
int cfdb_directory_list(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                        const cfdb_bytes *path, uint32_t n, cfdb_bytes **names, uint32_t *count);
int cfdb_directory_exists(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                          const cfdb_bytes *path, uint32_t n, bool *exists);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CFDB_DIRECTORY_H */
