/* SPDX-License-Identifier: Apache-2.0 */
/* High-contention prefix allocator of the directory layer, with the keys and the protocol of
 * the official bindings (HighContentionAllocator in bindings/python/fdb/directory_impl.py):
 *   counters = root + pack(("hca", 0)),  counters + pack((s,)) counts allocations in the window
 *              that starts at s (atomic little-endian ADD);
 *   recent   = root + pack(("hca", 1)),  recent + pack((k,)) = "" marks candidate k taken.
 * A window [s, s + w) is used until half of it is counted; then the next one starts, and the
 * older counters and candidates are cleared. Candidates are drawn at random in the window;
 * reads of the counters are snapshot reads, the candidate read is a normal one and the
 * candidate key gets a write conflict range, so two transactions taking the same candidate
 * conflict and one retries, while transactions taking different candidates do not. */
#include "error_codes.h"
#include "directory_internal.h"

#include <sys/random.h>

static int64_t window_size(int64_t start)
{
    if (start < 255)
        return 64;
    if (start < 65535)
        return 1024;
    return 8192;
}

static uint64_t draw(const cfdb_directory_layer *dl)
{
    if (dl->random)
        return dl->random(dl->random_ctx);
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = (uint64_t)(uintptr_t)&v ^ 0x9e3779b97f4a7c15ull; /* never fails for 8 bytes in practice */
    return v;
}

/* The start of the latest window (0 when none), read at snapshot. */
static int latest_window(FDBTransaction *tr, cfdb_arena *a, cfdb_bytes counters, int64_t *start)
{
    cfdb_bytes b, e;
    int err = dir_concat(a, counters, CFDB_BYTES_LIT("\x00"), &b);
    if (!err)
        err = dir_concat(a, counters, CFDB_BYTES_LIT("\xff"), &e);
    bool found = false;
    dir_kv kv;
    if (!err)
        err = dir_get_first(tr, a, b, e, true, true, &found, &kv);
    if (err)
        return err;
    *start = 0;
    if (!found)
        return 0;
    cfdb_tuple t;
    cfdb_bytes rest = cfdb_bytes_make(kv.key.ptr + counters.len, kv.key.len - counters.len);
    if (cfdb_tuple_unpack(a, rest, &t) || cfdb_tuple_get_int(&t, 0, start))
        return CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA;
    return 0;
}

static int64_t le64(cfdb_bytes v)
{
    uint64_t x = 0;
    for (uint32_t k = 0; k < v.len && k < 8; k++)
        x |= (uint64_t)v.ptr[k] << (8 * k);
    return (int64_t)x;
}

int dir_hca_allocate(const cfdb_directory_layer *dl, FDBTransaction *tr, cfdb_arena *a, int64_t *out)
{
    static const uint8_t one[8] = { 1, 0, 0, 0, 0, 0, 0, 0 };
    cfdb_bytes root, hca, counters, recent;
    int err = dk_root(dl, a, &root);
    if (!err)
        err = dk_word(a, root, "hca", &hca);
    if (!err)
        err = dk_int(a, hca, 0, &counters);
    if (!err)
        err = dk_int(a, hca, 1, &recent);
    if (err)
        return err;
    for (;;) {
        int64_t start;
        err = latest_window(tr, a, counters, &start);
        if (err)
            return err;
        bool advanced = false;
        int64_t window;
        for (;;) {
            cfdb_bytes ckey;
            err = dk_int(a, counters, start, &ckey);
            if (err)
                return err;
            if (advanced) {
                cfdb_bytes rkey;
                err = dk_int(a, recent, start, &rkey);
                if (err)
                    return err;
                dir_clear_range(tr, counters, ckey);
                err = fdb_transaction_set_option(tr, FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE, NULL, 0);
                if (err)
                    return err;
                dir_clear_range(tr, recent, rkey);
            }
            fdb_transaction_atomic_op(tr, ckey.ptr, (int)ckey.len, one, 8, FDB_MUTATION_TYPE_ADD);
            bool present = false;
            cfdb_bytes v;
            err = dir_get(tr, a, ckey, true, &present, &v);
            if (err)
                return err;
            int64_t count = present ? le64(v) : 0;
            window = window_size(start);
            if (count * 2 < window)
                break;
            start += window;
            advanced = true;
        }
        for (;;) {
            int64_t candidate = start + (int64_t)(draw(dl) % (uint64_t)window);
            cfdb_bytes rkey;
            err = dk_int(a, recent, candidate, &rkey);
            if (err)
                return err;
            int64_t latest;
            err = latest_window(tr, a, counters, &latest);
            if (err)
                return err;
            bool taken = false;
            cfdb_bytes v;
            err = dir_get(tr, a, rkey, false, &taken, &v);
            if (err)
                return err;
            err = fdb_transaction_set_option(tr, FDB_TR_OPTION_NEXT_WRITE_NO_WRITE_CONFLICT_RANGE, NULL, 0);
            if (err)
                return err;
            dir_set(tr, rkey, CFDB_BYTES_LIT(""));
            if (latest > start)
                break; /* another allocator advanced the window: start over */
            if (!taken) {
                cfdb_bytes end;
                err = dir_concat(a, rkey, CFDB_BYTES_LIT("\x00"), &end);
                if (!err)
                    err = fdb_transaction_add_conflict_range(tr, rkey.ptr, (int)rkey.len, end.ptr, (int)end.len,
                                                             FDB_CONFLICT_RANGE_TYPE_WRITE);
                if (err)
                    return err;
                *out = candidate;
                return 0;
            }
        }
    }
}
