/* SPDX-License-Identifier: Apache-2.0 */
/* Directory layer internals shared by src/layers/directory.c and directory_hca.c: the key
 * builders of the node subspace (layout in include/cfdb/directory.h) and the allocator. */
#ifndef CFDB_LAYERS_DIRECTORY_INTERNAL_H
#define CFDB_LAYERS_DIRECTORY_INTERNAL_H

#include "cfdb/directory.h"
#include "cfdb/tuple.h"
#include "dir_io.h"

/* base + pack((b,)) for a byte string b */
int dk_bytes(cfdb_arena *a, cfdb_bytes base, cfdb_bytes b, cfdb_bytes *out);
/* base + pack((s,)) for a byte string given as text (e.g. "layer") */
int dk_word(cfdb_arena *a, cfdb_bytes base, const char *s, cfdb_bytes *out);
/* base + pack((i,)) */
int dk_int(cfdb_arena *a, cfdb_bytes base, int64_t i, cfdb_bytes *out);
/* The root node: N + pack((N,)) */
int dk_root(const cfdb_directory_layer *dl, cfdb_arena *a, cfdb_bytes *out);

/* The high-contention allocator under the root node: a fresh candidate integer k, unique
 * among all allocations of this layer (prefix = C + pack((k,))). */
int dir_hca_allocate(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a, int64_t *out);

#endif
