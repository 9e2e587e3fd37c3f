/* SPDX-License-Identifier: Apache-2.0 */
/* Subspace (include/cfdb/subspace.h): a raw prefix and the tuple layer under it. Every
 * result is prefix + tuple bytes, built by the tuple layer's prefix-taking functions so
 * that there is one packing path. */
#include "error_codes.h"
#include "cfdb/subspace.h"

#include <string.h>

static const cfdb_tuple *or_empty(const cfdb_tuple *t, cfdb_tuple *empty)
{
    if (t)
        return t;
    cfdb_tuple_init(empty, NULL);
    return empty;
}

int cfdb_subspace_init(cfdb_subspace *s, cfdb_arena *a, cfdb_bytes raw, const cfdb_tuple *t)
{
    cfdb_tuple empty;
    return cfdb_tuple_pack(a, raw, or_empty(t, &empty), &s->prefix);
}

int cfdb_subspace_sub(cfdb_subspace *s, cfdb_arena *a, const cfdb_subspace *parent,
                      const cfdb_tuple *t)
{
    return cfdb_subspace_init(s, a, parent->prefix, t);
}

bool cfdb_subspace_contains(const cfdb_subspace *s, cfdb_bytes key)
{
    return key.len >= s->prefix.len &&
           (s->prefix.len == 0 || memcmp(key.ptr, s->prefix.ptr, s->prefix.len) == 0);
}

int cfdb_subspace_pack(const cfdb_subspace *s, cfdb_arena *a, const cfdb_tuple *t, cfdb_bytes *out)
{
    cfdb_tuple empty;
    return cfdb_tuple_pack(a, s->prefix, or_empty(t, &empty), out);
}

int cfdb_subspace_pack_with_versionstamp(const cfdb_subspace *s, cfdb_arena *a, const cfdb_tuple *t,
                                         cfdb_bytes *out)
{
    cfdb_tuple empty;
    return cfdb_tuple_pack_with_versionstamp(a, s->prefix, or_empty(t, &empty), out);
}

int cfdb_subspace_unpack(const cfdb_subspace *s, cfdb_arena *a, cfdb_bytes key, cfdb_tuple *out)
{
    if (!cfdb_subspace_contains(s, key))
        return CFDB_ERR_KEY_NOT_IN_SUBSPACE;
    cfdb_bytes rest = { 0 };
    if (key.len > s->prefix.len)
        rest = cfdb_bytes_make(key.ptr + s->prefix.len, key.len - s->prefix.len);
    return cfdb_tuple_unpack(a, rest, out);
}

int cfdb_subspace_range(const cfdb_subspace *s, cfdb_arena *a, const cfdb_tuple *t,
                        cfdb_bytes *begin, cfdb_bytes *end)
{
    cfdb_tuple empty;
    return cfdb_tuple_range(a, s->prefix, or_empty(t, &empty), begin, end);
}
