/* SPDX-License-Identifier: Apache-2.0 */
/* Directory layer operations (include/cfdb/directory.h), step for step the behaviour of the
 * official bindings' DirectoryLayer (bindings/python/fdb/directory_impl.py, 7.3): the same
 * keys read and written in the same transaction, the same checks in the same order, so that
 * both sides see one tree and raise the same errors.
 *
 * Invariants:
 *   - a node is N + pack((prefix,)); every read of the path walks from the root node through
 *     node + pack((0, name)) and stops at a missing name or at a partition;
 *   - an operation whose path goes through a partition is handed, with the rest of the path,
 *     to the partition's own layer (N = p + "\xfe", C = p), recursively;
 *   - the version key is checked before any read of the tree and written before the first
 *     write to it. */
#include "error_codes.h"
#include "directory_internal.h"
#include "tuple_internal.h"

#include <string.h>

static const cfdb_bytes PARTITION = { (const uint8_t *)"partition", 9 };

/* ---- keys ---- */

static int pack1(cfdb_arena *a, cfdb_bytes base, cfdb_tuple *t, cfdb_bytes *out)
{
    return cfdb_tuple_pack(a, base, t, out);
}

int dk_bytes(cfdb_arena *a, cfdb_bytes base, cfdb_bytes b, cfdb_bytes *out)
{
    cfdb_tuple_elem e[1];
    memset(e, 0, sizeof e);
    e[0].type = CFDB_TUPLE_BYTES;
    e[0].v.bytes = b;
    cfdb_tuple t = { .arena = a, .elems = e, .count = 1, .cap = 1 };
    return pack1(a, base, &t, out);
}

int dk_word(cfdb_arena *a, cfdb_bytes base, const char *s, cfdb_bytes *out)
{
    return dk_bytes(a, base, cfdb_bytes_str(s), out);
}

int dk_int(cfdb_arena *a, cfdb_bytes base, int64_t i, cfdb_bytes *out)
{
    cfdb_tuple_elem e[1];
    memset(e, 0, sizeof e);
    e[0].type = CFDB_TUPLE_INT;
    e[0].v.i = i;
    cfdb_tuple t = { .arena = a, .elems = e, .count = 1, .cap = 1 };
    return pack1(a, base, &t, out);
}

/* base + pack((0, name)) */
static int dk_subdir(cfdb_arena *a, cfdb_bytes node, cfdb_bytes name, cfdb_bytes *out)
{
    cfdb_tuple_elem e[2];
    memset(e, 0, sizeof e);
    e[0].type = CFDB_TUPLE_INT;
    e[0].v.i = 0;
    e[1].type = CFDB_TUPLE_STRING;
    e[1].v.bytes = name;
    cfdb_tuple t = { .arena = a, .elems = e, .count = 2, .cap = 2 };
    return pack1(a, node, &t, out);
}

static int node_of(const cfdb_directory_layer *dl, cfdb_arena *a, cfdb_bytes prefix, cfdb_bytes *out)
{
    return dk_bytes(a, dl->node_prefix, prefix, out);
}

int dk_root(const cfdb_directory_layer *dl, cfdb_arena *a, cfdb_bytes *out)
{
    return node_of(dl, a, dl->node_prefix, out);
}

/* The prefix a node key stands for: the first element of what follows N. */
static int prefix_of(const cfdb_directory_layer *dl, cfdb_arena *a, cfdb_bytes node, cfdb_bytes *out)
{
    cfdb_tuple t;
    cfdb_bytes rest = { 0 };
    if (node.len < dl->node_prefix.len)
        return CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA;
    if (node.len > dl->node_prefix.len)
        rest = cfdb_bytes_make(node.ptr + dl->node_prefix.len, node.len - dl->node_prefix.len);
    if (cfdb_tuple_unpack(a, rest, &t) || cfdb_tuple_get_bytes(&t, 0, out))
        return CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA;
    return 0;
}

static bool starts_with(cfdb_bytes k, cfdb_bytes p)
{
    return k.len >= p.len && (p.len == 0 || memcmp(k.ptr, p.ptr, p.len) == 0);
}

static bool path_eq(const cfdb_bytes *x, const cfdb_bytes *y, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!cfdb_bytes_eq(x[i], y[i]))
            return false;
    return true;
}

static int check_names(const cfdb_bytes *path, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!tuple_utf8_valid(path[i].ptr, path[i].len))
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return 0;
}

/* ---- layers ---- */

void cfdb_directory_layer_init_custom(cfdb_directory_layer *dl, cfdb_bytes node_prefix,
                                      cfdb_bytes content_prefix, bool allow_manual_prefixes)
{
    memset(dl, 0, sizeof *dl);
    dl->node_prefix = node_prefix;
    dl->content_prefix = content_prefix;
    dl->allow_manual_prefixes = allow_manual_prefixes;
}

void cfdb_directory_layer_init(cfdb_directory_layer *dl)
{
    cfdb_directory_layer_init_custom(dl, CFDB_BYTES_LIT("\xfe"), CFDB_BYTES_LIT(""), false);
}

/* path_a + path_b in the arena */
static int join_paths(cfdb_arena *a, const cfdb_bytes *x, uint32_t nx, const cfdb_bytes *y, uint32_t ny,
                      const cfdb_bytes **out, uint32_t *n)
{
    cfdb_bytes *p = cfdb_arena_alloc(a, ((size_t)nx + ny + 1) * sizeof *p);
    if (!p)
        return CFDB_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < nx; i++)
        if (cfdb_arena_dup_bytes(a, x[i], &p[i]))
            return CFDB_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < ny; i++)
        if (cfdb_arena_dup_bytes(a, y[i], &p[nx + i]))
            return CFDB_ERR_OUT_OF_MEMORY;
    *out = p;
    *n = nx + ny;
    return 0;
}

/* The layer inside the partition with prefix p found at path[0..n) of dl. */
static int partition_layer(const cfdb_directory_layer *dl, cfdb_arena *a, cfdb_bytes p,
                           const cfdb_bytes *path, uint32_t n, cfdb_directory_layer *out)
{
    cfdb_bytes node_prefix;
    int err = dir_concat(a, p, CFDB_BYTES_LIT("\xfe"), &node_prefix);
    if (err)
        return err;
    cfdb_directory_layer_init_custom(out, node_prefix, p, false);
    out->random = dl->random;
    out->random_ctx = dl->random_ctx;
    return join_paths(a, dl->path, dl->path_len, path, n, &out->path, &out->path_len);
}

int cfdb_directory_partition_layer(const cfdb_directory *d, cfdb_arena *a, cfdb_directory_layer *out)
{
    if (!d->is_partition)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    const cfdb_directory_layer *dl = &d->owner;
    return partition_layer(dl, a, d->prefix, d->path + dl->path_len, d->path_len - dl->path_len, out);
}

int cfdb_directory_resolve(const cfdb_directory *d, cfdb_arena *a, const cfdb_bytes *sub, uint32_t n,
                           cfdb_directory_layer *dl, const cfdb_bytes **path, uint32_t *path_n)
{
    const cfdb_directory_layer *owner = &d->owner;
    if (d->is_partition && n > 0) {
        int err = cfdb_directory_partition_layer(d, a, dl);
        if (err)
            return err;
        return join_paths(a, NULL, 0, sub, n, path, path_n);
    }
    *dl = *owner;
    return join_paths(a, d->path + owner->path_len, d->path_len - owner->path_len, sub, n, path, path_n);
}

int cfdb_directory_subspace(const cfdb_directory *d, cfdb_subspace *out)
{
    if (d->is_partition)
        return CFDB_ERR_CANNOT_USE_PARTITION_AS_SUBSPACE;
    out->prefix = d->prefix;
    return 0;
}

/* ---- version ---- */

static int check_version(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a, bool write)
{
    cfdb_bytes root, key, v;
    int err = dk_root(dl, a, &root);
    if (!err)
        err = dk_word(a, root, "version", &key);
    bool present = false;
    if (!err)
        err = dir_get(tr, a, key, false, &present, &v);
    if (err)
        return err;
    if (!present) {
        if (write) {
            static const uint8_t version[12] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
            dir_set(tr, key, cfdb_bytes_make(version, sizeof version));
        }
        return 0;
    }
    if (v.len != 12)
        return CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA;
    uint32_t part[3];
    for (int i = 0; i < 3; i++)
        part[i] = (uint32_t)v.ptr[4 * i] | (uint32_t)v.ptr[4 * i + 1] << 8 |
                  (uint32_t)v.ptr[4 * i + 2] << 16 | (uint32_t)v.ptr[4 * i + 3] << 24;
    if (part[0] > 1)
        return CFDB_ERR_INCOMPATIBLE_DIRECTORY_VERSION;
    if (part[1] > 0 && write)
        return CFDB_ERR_INCOMPATIBLE_DIRECTORY_VERSION; /* read-only for this version */
    return 0;
}

/* ---- finding nodes ---- */

typedef struct node {
    bool exists;
    cfdb_bytes key;       /* node key when it exists */
    uint32_t depth;       /* names of the target path walked to reach it */
    cfdb_bytes layer;     /* "" when the layer key is absent */
} node;

static int read_layer(FDBTransaction *tr, cfdb_arena *a, node *nd)
{
    cfdb_bytes key;
    bool present = false;
    int err = dk_word(a, nd->key, "layer", &key);
    if (!err)
        err = dir_get(tr, a, key, false, &present, &nd->layer);
    if (!err && !present)
        nd->layer = CFDB_BYTES_LIT("");
    return err;
}

/* Walks path from the root; stops at the first missing name or at a partition. The node's
 * layer is read (the bindings' prefetch_metadata). */
static int find(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a, const cfdb_bytes *path,
                uint32_t n, node *out)
{
    node nd = { .exists = true };
    int err = dk_root(dl, a, &nd.key);
    if (err)
        return err;
    for (uint32_t i = 0; i < n; i++) {
        cfdb_bytes key, prefix;
        bool present = false;
        err = dk_subdir(a, nd.key, path[i], &key);
        if (!err)
            err = dir_get(tr, a, key, false, &present, &prefix);
        if (err)
            return err;
        nd.depth = i + 1;
        if (!present) {
            nd.exists = false;
            *out = nd;
            return 0;
        }
        err = node_of(dl, a, prefix, &nd.key);
        if (!err)
            err = read_layer(tr, a, &nd);
        if (err)
            return err;
        if (cfdb_bytes_eq(nd.layer, PARTITION))
            break;
    }
    if (n == 0 && (err = read_layer(tr, a, &nd)))
        return err;
    *out = nd;
    return 0;
}

static bool in_partition(const node *nd, uint32_t target_len, bool include_empty_subpath)
{
    return nd->exists && cfdb_bytes_eq(nd->layer, PARTITION) &&
           (include_empty_subpath || target_len > nd->depth);
}

static int inner_layer(const cfdb_directory_layer *dl, cfdb_arena *a, const node *nd, const cfdb_bytes *path,
                       cfdb_directory_layer *out)
{
    cfdb_bytes p;
    int err = prefix_of(dl, a, nd->key, &p);
    if (err)
        return err;
    return partition_layer(dl, a, p, path, nd->depth, out);
}

/* The opened directory for a node at path[0..n) of dl. */
static int contents(const cfdb_directory_layer *dl, cfdb_arena *a, cfdb_bytes node_key, const cfdb_bytes *path,
                    uint32_t n, cfdb_bytes layer, cfdb_directory *out)
{
    memset(out, 0, sizeof *out);
    int err = prefix_of(dl, a, node_key, &out->prefix);
    if (!err)
        err = cfdb_arena_dup_bytes(a, layer, &out->layer) ? CFDB_ERR_OUT_OF_MEMORY : 0;
    if (!err)
        err = join_paths(a, dl->path, dl->path_len, path, n, &out->path, &out->path_len);
    if (err)
        return err;
    out->is_partition = cfdb_bytes_eq(layer, PARTITION);
    out->owner = *dl;
    return 0;
}

/* ---- prefixes ---- */

/* Some node whose prefix is a prefix of key (the root for keys in N); *found false if none. */
static int node_containing(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a, cfdb_bytes key,
                           bool snapshot, bool *found)
{
    *found = false;
    if (starts_with(key, dl->node_prefix)) {
        *found = true;
        return 0;
    }
    cfdb_bytes begin, end, packed;
    int err = dir_concat(a, dl->node_prefix, CFDB_BYTES_LIT("\x00"), &begin);
    if (!err)
        err = node_of(dl, a, key, &packed);
    if (!err)
        err = dir_concat(a, packed, CFDB_BYTES_LIT("\x00"), &end);
    bool any = false;
    dir_kv kv;
    if (!err)
        err = dir_get_first(tr, a, begin, end, snapshot, true, &any, &kv);
    if (err || !any)
        return err;
    cfdb_bytes prev;
    err = prefix_of(dl, a, kv.key, &prev);
    if (err)
        return err;
    *found = starts_with(key, prev);
    return 0;
}

/* Neither contains nor is contained by an allocated prefix (nor the node subspace). */
static int prefix_free(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a, cfdb_bytes prefix,
                       bool snapshot, bool *free_out)
{
    *free_out = false;
    if (prefix.len == 0)
        return 0;
    bool contained = false;
    int err = node_containing(dl, tr, a, prefix, snapshot, &contained);
    if (err || contained)
        return err;
    cfdb_bytes inc, begin, end;
    err = dir_strinc(a, prefix, &inc);
    if (err == CFDB_ERR_CLIENT_INVALID_OPERATION)
        return 0; /* all 0xff: it contains the node subspace's end */
    if (!err)
        err = node_of(dl, a, prefix, &begin);
    if (!err)
        err = node_of(dl, a, inc, &end);
    bool any = false;
    dir_kv kv;
    if (!err)
        err = dir_get_first(tr, a, begin, end, snapshot, false, &any, &kv);
    if (!err)
        *free_out = !any;
    return err;
}

/* ---- create / open ---- */

static int create_or_open(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                          const cfdb_bytes *path, uint32_t n, cfdb_bytes layer, const cfdb_bytes *prefix,
                          bool allow_create, bool allow_open, cfdb_directory *out)
{
    int err = check_version(dl, tr, a, false);
    if (err)
        return err;
    if (prefix && !dl->allow_manual_prefixes)
        return dl->path_len == 0 ? CFDB_ERR_MANUAL_PREFIXES_NOT_ENABLED : CFDB_ERR_PREFIX_IN_PARTITION;
    if ((err = check_names(path, n)))
        return err;
    if (n == 0)
        return CFDB_ERR_CANNOT_OPEN_ROOT_DIRECTORY;
    node nd;
    if ((err = find(dl, tr, a, path, n, &nd)))
        return err;
    if (nd.exists) {
        if (in_partition(&nd, n, false)) {
            cfdb_directory_layer inner;
            if ((err = inner_layer(dl, a, &nd, path, &inner)))
                return err;
            return create_or_open(&inner, tr, a, path + nd.depth, n - nd.depth, layer, prefix, allow_create,
                                  allow_open, out);
        }
        if (!allow_open)
            return CFDB_ERR_DIRECTORY_ALREADY_EXISTS;
        if (layer.len && !cfdb_bytes_eq(layer, nd.layer))
            return CFDB_ERR_MISMATCHED_LAYER;
        return contents(dl, a, nd.key, path, n, nd.layer, out);
    }
    if (!allow_create)
        return CFDB_ERR_DIRECTORY_DOES_NOT_EXIST;
    if ((err = check_version(dl, tr, a, true)))
        return err;

    cfdb_bytes p;
    bool is_free = false;
    if (!prefix) {
        int64_t k;
        cfdb_bytes inc;
        if ((err = dir_hca_allocate(dl, tr, a, &k)) || (err = dk_int(a, dl->content_prefix, k, &p)) ||
            (err = dir_strinc(a, p, &inc)))
            return err;
        bool used = false;
        dir_kv kv;
        if ((err = dir_get_first(tr, a, p, inc, false, false, &used, &kv)))
            return err;
        if (used)
            return CFDB_ERR_DIRECTORY_PREFIX_NOT_EMPTY;
        if ((err = prefix_free(dl, tr, a, p, true, &is_free)))
            return err;
        if (!is_free)
            return CFDB_ERR_DIRECTORY_PREFIX_IN_USE;
    } else {
        p = *prefix;
        if ((err = prefix_free(dl, tr, a, p, false, &is_free)))
            return err;
        if (!is_free)
            return CFDB_ERR_DIRECTORY_PREFIX_IN_USE;
    }

    cfdb_bytes parent_node;
    if (n > 1) {
        cfdb_directory parent;
        err = create_or_open(dl, tr, a, path, n - 1, CFDB_BYTES_LIT(""), NULL, true, true, &parent);
        if (err)
            return err;
        if (parent.is_partition)
            return CFDB_ERR_CANNOT_USE_PARTITION_AS_SUBSPACE;
        err = node_of(dl, a, parent.prefix, &parent_node);
    } else
        err = dk_root(dl, a, &parent_node);
    cfdb_bytes entry, new_node, layer_key;
    if (!err)
        err = dk_subdir(a, parent_node, path[n - 1], &entry);
    if (!err)
        err = node_of(dl, a, p, &new_node);
    if (!err)
        err = dk_word(a, new_node, "layer", &layer_key);
    if (err)
        return err;
    dir_set(tr, entry, p);
    dir_set(tr, layer_key, layer);
    return contents(dl, a, new_node, path, n, layer, out);
}

int cfdb_directory_create_or_open(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                                  const cfdb_bytes *path, uint32_t n, cfdb_bytes layer, cfdb_directory *out)
{
    return create_or_open(dl, tr, a, path, n, layer, NULL, true, true, out);
}

int cfdb_directory_open(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                        const cfdb_bytes *path, uint32_t n, cfdb_bytes layer, cfdb_directory *out)
{
    return create_or_open(dl, tr, a, path, n, layer, NULL, false, true, out);
}

int cfdb_directory_create(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                          const cfdb_bytes *path, uint32_t n, cfdb_bytes layer, const cfdb_bytes *prefix,
                          cfdb_directory *out)
{
    return create_or_open(dl, tr, a, path, n, layer, prefix, true, false, out);
}

/* ---- move ---- */

static int remove_from_parent(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                              const cfdb_bytes *path, uint32_t n)
{
    node parent;
    cfdb_bytes entry;
    int err = find(dl, tr, a, path, n - 1, &parent);
    if (!err)
        err = dk_subdir(a, parent.key, path[n - 1], &entry);
    if (!err)
        dir_clear(tr, entry);
    return err;
}

int cfdb_directory_move(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                        const cfdb_bytes *old_path, uint32_t old_n, const cfdb_bytes *new_path,
                        uint32_t new_n, cfdb_directory *out)
{
    int err = check_version(dl, tr, a, true);
    if (!err)
        err = check_names(old_path, old_n);
    if (!err)
        err = check_names(new_path, new_n);
    if (err)
        return err;
    if (old_n <= new_n && path_eq(old_path, new_path, old_n))
        return CFDB_ERR_INVALID_DESTINATION_DIRECTORY;
    node old_node, new_node;
    if ((err = find(dl, tr, a, old_path, old_n, &old_node)) || (err = find(dl, tr, a, new_path, new_n, &new_node)))
        return err;
    if (!old_node.exists)
        return CFDB_ERR_DIRECTORY_DOES_NOT_EXIST;
    bool old_in = in_partition(&old_node, old_n, false), new_in = in_partition(&new_node, new_n, false);
    if (old_in || new_in) {
        if (!old_in || !new_in || old_node.depth != new_node.depth ||
            !path_eq(old_path, new_path, old_node.depth))
            return CFDB_ERR_CANNOT_MOVE_DIRECTORY_BETWEEN_PARTITIONS;
        cfdb_directory_layer inner;
        if ((err = inner_layer(dl, a, &new_node, new_path, &inner)))
            return err;
        return cfdb_directory_move(&inner, tr, a, old_path + old_node.depth, old_n - old_node.depth,
                                   new_path + new_node.depth, new_n - new_node.depth, out);
    }
    if (new_node.exists)
        return CFDB_ERR_DIRECTORY_ALREADY_EXISTS;
    node parent;
    if ((err = find(dl, tr, a, new_path, new_n - 1, &parent)))
        return err;
    if (!parent.exists)
        return CFDB_ERR_PARENT_DIRECTORY_DOES_NOT_EXIST;
    cfdb_bytes entry, p;
    if ((err = dk_subdir(a, parent.key, new_path[new_n - 1], &entry)) ||
        (err = prefix_of(dl, a, old_node.key, &p)))
        return err;
    dir_set(tr, entry, p);
    if ((err = remove_from_parent(dl, tr, a, old_path, old_n)))
        return err;
    return contents(dl, a, old_node.key, new_path, new_n, old_node.layer, out);
}

int cfdb_directory_move_to(const cfdb_directory *d, FDBTransaction *tr, cfdb_arena *a,
                           const cfdb_bytes *new_path, uint32_t new_n, cfdb_directory *out)
{
    const cfdb_directory_layer *dl = &d->owner;
    uint32_t plen = dl->path_len;
    if (new_n < plen || !path_eq(new_path, dl->path, plen))
        return CFDB_ERR_CANNOT_MOVE_DIRECTORY_BETWEEN_PARTITIONS;
    return cfdb_directory_move(dl, tr, a, d->path + plen, d->path_len - plen, new_path + plen, new_n - plen, out);
}

/* ---- remove ---- */

static int remove_recursive(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a, cfdb_bytes node_key,
                            int depth)
{
    if (depth > 1000)
        return CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA; /* a cycle in the tree */
    cfdb_bytes subdirs, begin, end;
    int err = dk_int(a, node_key, 0, &subdirs);
    if (!err)
        err = dir_concat(a, subdirs, CFDB_BYTES_LIT("\x00"), &begin);
    if (!err)
        err = dir_concat(a, subdirs, CFDB_BYTES_LIT("\xff"), &end);
    dir_kv *kvs = NULL;
    uint32_t count = 0;
    if (!err)
        err = dir_get_all(tr, a, begin, end, &kvs, &count);
    for (uint32_t i = 0; !err && i < count; i++) {
        cfdb_bytes child;
        err = node_of(dl, a, kvs[i].value, &child);
        if (!err)
            err = remove_recursive(dl, tr, a, child, depth + 1);
    }
    cfdb_bytes p, inc;
    if (!err)
        err = prefix_of(dl, a, node_key, &p);
    if (!err)
        err = dir_strinc(a, p, &inc);
    if (!err)
        err = dir_concat(a, node_key, CFDB_BYTES_LIT("\x00"), &begin);
    if (!err)
        err = dir_concat(a, node_key, CFDB_BYTES_LIT("\xff"), &end);
    if (err)
        return err;
    dir_clear_range(tr, p, inc);
    dir_clear_range(tr, begin, end);
    return 0;
}

static int remove_internal(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                           const cfdb_bytes *path, uint32_t n, bool fail_if_missing, bool *removed)
{
    *removed = false;
    int err = check_version(dl, tr, a, true);
    if (err)
        return err;
    if (n == 0)
        return CFDB_ERR_CANNOT_MODIFY_ROOT_DIRECTORY;
    if ((err = check_names(path, n)))
        return err;
    node nd;
    if ((err = find(dl, tr, a, path, n, &nd)))
        return err;
    if (!nd.exists)
        return fail_if_missing ? CFDB_ERR_DIRECTORY_DOES_NOT_EXIST : 0;
    if (in_partition(&nd, n, false)) {
        cfdb_directory_layer inner;
        if ((err = inner_layer(dl, a, &nd, path, &inner)))
            return err;
        return remove_internal(&inner, tr, a, path + nd.depth, n - nd.depth, fail_if_missing, removed);
    }
    if ((err = remove_recursive(dl, tr, a, nd.key, 0)) || (err = remove_from_parent(dl, tr, a, path, n)))
        return err;
    *removed = true;
    return 0;
}

int cfdb_directory_remove(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                          const cfdb_bytes *path, uint32_t n)
{
    bool removed;
    return remove_internal(dl, tr, a, path, n, true, &removed);
}

int cfdb_directory_remove_if_exists(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                                    const cfdb_bytes *path, uint32_t n, bool *removed)
{
    return remove_internal(dl, tr, a, path, n, false, removed);
}

/* ---- list / exists ---- */

int cfdb_directory_list(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                        const cfdb_bytes *path, uint32_t n, cfdb_bytes **names, uint32_t *count)
{
    int err = check_version(dl, tr, a, false);
    if (!err)
        err = check_names(path, n);
    node nd;
    if (!err)
        err = find(dl, tr, a, path, n, &nd);
    if (err)
        return err;
    if (!nd.exists)
        return CFDB_ERR_DIRECTORY_DOES_NOT_EXIST;
    if (in_partition(&nd, n, true)) {
        cfdb_directory_layer inner;
        if ((err = inner_layer(dl, a, &nd, path, &inner)))
            return err;
        return cfdb_directory_list(&inner, tr, a, path + nd.depth, n - nd.depth, names, count);
    }
    cfdb_bytes subdirs, begin, end;
    dir_kv *kvs = NULL;
    uint32_t total = 0;
    if ((err = dk_int(a, nd.key, 0, &subdirs)) || (err = dir_concat(a, subdirs, CFDB_BYTES_LIT("\x00"), &begin)) ||
        (err = dir_concat(a, subdirs, CFDB_BYTES_LIT("\xff"), &end)) ||
        (err = dir_get_all(tr, a, begin, end, &kvs, &total)))
        return err;
    cfdb_bytes *out = cfdb_arena_alloc(a, ((size_t)total + 1) * sizeof *out);
    if (!out)
        return CFDB_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < total; i++) {
        cfdb_tuple t;
        cfdb_bytes rest = cfdb_bytes_make(kvs[i].key.ptr + subdirs.len, kvs[i].key.len - subdirs.len);
        if (cfdb_tuple_unpack(a, rest, &t) || cfdb_tuple_get_string(&t, 0, &out[i]))
            return CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA;
    }
    *names = out;
    *count = total;
    return 0;
}

int cfdb_directory_exists(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a,
                          const cfdb_bytes *path, uint32_t n, bool *exists)
{
    *exists = false;
    int err = check_version(dl, tr, a, false);
    if (!err)
        err = check_names(path, n);
    node nd;
    if (!err)
        err = find(dl, tr, a, path, n, &nd);
    if (err || !nd.exists)
        return err;
    if (in_partition(&nd, n, false)) {
        cfdb_directory_layer inner;
        if ((err = inner_layer(dl, a, &nd, path, &inner)))
            return err;
        return cfdb_directory_exists(&inner, tr, a, path + nd.depth, n - nd.depth, exists);
    }
    *exists = true;
    return 0;
}
