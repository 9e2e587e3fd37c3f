/* SPDX-License-Identifier: Apache-2.0 */
/* Subspace: a raw key prefix under which keys are packed tuples, as the official bindings'
 * Subspace (bindings/python/fdb/subspace_impl.py in FoundationDB 7.3).
 *
 *   key(s)            = s.prefix
 *   pack(s, t)        = s.prefix + tuple_pack(t)
 *   unpack(s, k)      = tuple_unpack(k without s.prefix); key_not_in_subspace (2252) when k
 *                       does not start with s.prefix
 *   range(s, t)       = [s.prefix + pack(t) + 0x00, s.prefix + pack(t) + 0xff)
 *   contains(s, k)    = k starts with s.prefix
 *   sub(s, t)         = the subspace with prefix s.prefix + pack(t) (Python's s[x] / subspace())
 *
 * A subspace only points at its prefix bytes; the constructors below copy them into the
 * arena they are given. Errors as in include/cfdb/tuple.h. */
#ifndef CFDB_SUBSPACE_H
#define CFDB_SUBSPACE_H

#include <stdbool.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "cfdb/tuple.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfdb_subspace {
    cfdb_bytes prefix;
} cfdb_subspace;

/* raw + pack(t) (t may be NULL: the raw prefix alone). */
int cfdb_subspace_init(cfdb_subspace *s, cfdb_arena *a, cfdb_bytes raw, const cfdb_tuple *t);
/* The nested subspace parent + pack(t). */
int cfdb_subspace_sub(cfdb_subspace *s, cfdb_arena *a, const cfdb_subspace *parent,
                      const cfdb_tuple *t);
static inline cfdb_bytes cfdb_subspace_key(const cfdb_subspace *s) { return s->prefix; }
bool cfdb_subspace_contains(const cfdb_subspace *s, cfdb_bytes key);
/* t may be NULL (the empty tuple). */
int cfdb_subspace_pack(const cfdb_subspace *s, cfdb_arena *a, const cfdb_tuple *t, cfdb_bytes *out);
int cfdb_subspace_pack_with_versionstamp(const cfdb_subspace *s, cfdb_arena *a, const cfdb_tuple *t,
                                         cfdb_bytes *out);
int cfdb_subspace_unpack(const cfdb_subspace *s, cfdb_arena *a, cfdb_bytes key, cfdb_tuple *out);
int cfdb_subspace_range(const cfdb_subspace *s, cfdb_arena *a, const cfdb_tuple *t,
                        cfdb_bytes *begin, cfdb_bytes *end);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CFDB_SUBSPACE_H */
