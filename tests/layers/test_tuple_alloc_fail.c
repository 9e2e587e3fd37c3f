/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation failures inside the tuple and subspace layers: for N = 1, 2, ... the Nth heap
 * allocation of a scripted workload fails -- building a tuple of every element type (with
 * elements and a string large enough to grow its arena), packing it, unpacking it, taking its
 * range, packing with an incomplete versionstamp, and packing/unpacking under a subspace --
 * and the workload must stop at the operation that could not allocate with unknown_error
 * (4000, CFDB_ERR_OUT_OF_MEMORY: what libfdb_c reports for a failed allocation), never
 * internal_error (4100) or another code, never crash, and leave no heap block behind once its
 * arenas are freed. The loop ends at the first N the workload no longer reaches, after
 * checking that the workload then succeeds with the unarmed run's bytes.
 *
 * The layer's objects (cfdb_layers_objs) and the arena (cfdb_common) are linked in statically
 * with tests/common/alloc_fail.h's failing allocator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_fail.h"
#include "error_codes.h"
#include "cfdb/subspace.h"
#include "cfdb/tuple.h"

enum { STAGES = 6, BIG = 6000, ELEMS = 400 };

typedef struct run {
    int rc;
    int stage;            /* the operation that returned rc (1..STAGES), STAGES + 1 when all succeeded */
    uint8_t digest[64];   /* the first bytes of every output, for comparison with the unarmed run */
    size_t lens[STAGES];
} run;

static run g_unarmed;
static uint8_t g_big[BIG];

static void keep(run *r, int stage, cfdb_bytes b)
{
    r->lens[stage - 1] = b.len;
    for (size_t i = 0; i < b.len && i < 8; i++)
        r->digest[(stage - 1) * 8 + i] ^= b.ptr[b.len - 1 - i];
}

/* Builds (1) a tuple of every element type: ELEMS small elements, one BIG-byte string, a
 * bigint and a nested tuple. */
static int build(cfdb_tuple *t, cfdb_tuple *nested)
{
    static const uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    static const uint8_t vs[12] = { 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 2 };
    static const uint8_t mag[9] = { 1, 0, 0, 0, 0, 0, 0, 0, 0 };
    int rc;
    if ((rc = cfdb_tuple_add_cstr(nested, "inner")) || (rc = cfdb_tuple_add_null(nested)))
        return rc;
    for (int i = 0; i < ELEMS; i++) {
        switch (i % 8) {
        case 0: rc = cfdb_tuple_add_int(t, (int64_t)i * 7919 - 100000); break;
        case 1: rc = cfdb_tuple_add_bytes(t, "b\x00y", 3); break;
        case 2: rc = cfdb_tuple_add_double(t, i / 3.0); break;
        case 3: rc = cfdb_tuple_add_float(t, (float)i); break;
        case 4: rc = cfdb_tuple_add_bool(t, i & 1); break;
        case 5: rc = cfdb_tuple_add_uuid(t, uuid); break;
        case 6: rc = cfdb_tuple_add_versionstamp(t, vs); break;
        default: rc = cfdb_tuple_add_null(t); break;
        }
        if (rc)
            return rc;
    }
    if ((rc = cfdb_tuple_add_string(t, (const char *)g_big, BIG)) ||
        (rc = cfdb_tuple_add_bigint(t, true, mag, sizeof mag)) || (rc = cfdb_tuple_add_nested(t, nested)))
        return rc;
    return 0;
}

static void workload(run *r)
{
    memset(r, 0, sizeof *r);
    cfdb_arena ar[STAGES + 1];
    for (int i = 0; i <= STAGES; i++)
        cfdb_arena_init(&ar[i]);
    cfdb_tuple t, nested, back, vt, sub_back;
    cfdb_bytes packed, b, e;
    cfdb_tuple_init(&t, &ar[0]);
    cfdb_tuple_init(&nested, &ar[0]);
    r->stage = 1;
    if ((r->rc = build(&t, &nested)))
        goto out;
    r->stage = 2;
    if ((r->rc = cfdb_tuple_pack(&ar[1], cfdb_bytes_str("p"), &t, &packed)))
        goto out;
    keep(r, 2, packed);
    r->stage = 3;
    if ((r->rc = cfdb_tuple_unpack(&ar[2], (cfdb_bytes){ packed.ptr + 1, packed.len - 1 }, &back)))
        goto out;
    assert_true(cfdb_tuple_equal(&t, &back));
    r->stage = 4;
    if ((r->rc = cfdb_tuple_range(&ar[3], cfdb_bytes_str("p"), &t, &b, &e)))
        goto out;
    keep(r, 4, e);
    r->stage = 5;
    cfdb_tuple_init(&vt, &ar[4]);
    cfdb_bytes vkey;
    if ((r->rc = cfdb_tuple_add_string(&vt, (const char *)g_big, BIG)) ||
        (r->rc = cfdb_tuple_add_incomplete_versionstamp(&vt, 3)) ||
        (r->rc = cfdb_tuple_pack_with_versionstamp(&ar[4], cfdb_bytes_str("v"), &vt, &vkey)))
        goto out;
    keep(r, 5, vkey);
    r->stage = 6;
    cfdb_subspace s;
    cfdb_bytes skey;
    if ((r->rc = cfdb_subspace_init(&s, &ar[5], cfdb_bytes_str("s"), &nested)) ||
        (r->rc = cfdb_subspace_pack(&s, &ar[5], &t, &skey)) ||
        (r->rc = cfdb_subspace_unpack(&s, &ar[6], skey, &sub_back)))
        goto out;
    assert_true(cfdb_tuple_equal(&t, &sub_back));
    keep(r, 6, skey);
    r->stage = STAGES + 1;
out:
    for (int i = 0; i <= STAGES; i++)
        cfdb_arena_free(&ar[i]);
}

static void test_unarmed_run_succeeds(void **state)
{
    (void)state;
    for (int i = 0; i < BIG; i++)
        g_big[i] = (uint8_t)('a' + i % 26);
    long live = af_live();
    workload(&g_unarmed);
    assert_int_equal(g_unarmed.rc, 0);
    assert_int_equal(g_unarmed.stage, STAGES + 1);
    assert_int_equal(af_live(), live);
    /* the outputs are big enough that every stage's arena needs heap blocks */
    assert_true(g_unarmed.lens[1] > BIG);
    assert_true(g_unarmed.lens[5] > BIG);
}

static void test_nth_allocation_fails(void **state)
{
    (void)state;
    int stages[STAGES + 2] = { 0 };
    long n;
    for (n = 1;; n++) {
        run r;
        long live = af_live();
        af_arm(n);
        workload(&r);
        bool hit = af_disarm();
        if (!hit) {
            /* the workload makes fewer than n allocations: it must have succeeded whole */
            assert_int_equal(r.rc, 0);
            assert_int_equal(r.stage, STAGES + 1);
            assert_memory_equal(r.digest, g_unarmed.digest, sizeof r.digest);
            assert_memory_equal(r.lens, g_unarmed.lens, sizeof r.lens);
            assert_int_equal(af_live(), live);
            break;
        }
        if (r.rc != CFDB_ERR_OUT_OF_MEMORY)
            fail_msg("allocation %ld failed: stage %d returned %d, want 4000 (out of memory)", n, r.stage, r.rc);
        if (af_live() != live)
            fail_msg("allocation %ld failed: %ld heap blocks left behind", n, af_live() - live);
        stages[r.stage]++;
    }
    print_message("tuple-alloc-fail: allocations 1..%ld failed in turn; failures per stage build %d, pack %d, "
                  "unpack %d, range %d, versionstamp %d, subspace %d\n",
                  n - 1, stages[1], stages[2], stages[3], stages[4], stages[5], stages[6]);
    for (int s = 1; s <= STAGES; s++)
        assert_true(stages[s] > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unarmed_run_succeeds),
        cmocka_unit_test(test_nth_allocation_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
