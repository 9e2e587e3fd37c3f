/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation failures inside Record Layer operations: for N = 1, 2, ... the Nth heap
 * allocation of a scripted workload fails -- loading a MetaData (descriptor pool, record
 * types, key expressions, indexes), decoding a record, evaluating its primary key and its
 * index entries, planning a query with its explain string, and encoding the record again --
 * and the workload must stop at the operation that could not allocate with unknown_error
 * (4000, CFDB_ERR_OUT_OF_MEMORY: what libfdb_c reports for a failed allocation), never
 * internal_error (4100) or another code, never crash, and leave no heap block behind once
 * everything it made is freed. The loop ends at the first N the workload no longer reaches,
 * after checking that the workload then succeeds and matches an unarmed run.
 *
 * The Record Layer's objects (cfdb_records_objs) are linked into this program statically with
 * the failing allocator of tests/common/alloc_fail.h, so the failures reach every allocation
 * they make (their arenas' blocks too), in plain and sanitizer builds alike; its count of the
 * blocks alive is this test's leak check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_fail.h"
#include "error_codes.h"
#include "cfdb/records/metadata.h"
#include "cfdb/records/query.h"
#include "rl_internal.h"
#include "rl_test_util.h"

/* ---------- the workload ---------- */

static cfdb_bytes g_md_bytes;     /* an encoded MetaData with three indexes */
static cfdb_bytes g_person;       /* an encoded Person (tests/vectors/records/person.txtpb) */
static cfdb_arena g_fixture;
static char g_explain[256];       /* the unarmed run's plan */
static uint32_t g_entries;        /* the unarmed run's index entry count */

static int group_setup(void **state)
{
    (void)state;
    cfdb_arena_init(&g_fixture);
    cfdb_arena *a = &g_fixture;
    cfdb_pb_msg *md = rlt_base_metadata(a, 3);
    rlt_add_index(a, md, "Person$name", NULL, cfdb_kex_field(a, "name", CFDB_KEX_SCALAR), "Person");
    rlt_add_index(a, md, "Person$tags", NULL, cfdb_kex_field(a, "tags", CFDB_KEX_FAN_OUT), "Person");
    const cfdb_kex *city = cfdb_kex_nest(a, cfdb_kex_field(a, "home", CFDB_KEX_SCALAR),
                                         cfdb_kex_field(a, "city", CFDB_KEX_SCALAR));
    const cfdb_kex *two[] = { city, cfdb_kex_field(a, "score", CFDB_KEX_SCALAR) };
    rlt_add_index(a, md, "Person$city_score", NULL, cfdb_kex_then(a, two, 2), "Person");
    assert_int_equal(cfdb_pb_encode(md, a, &g_md_bytes), 0);
    g_person = rlt_read_vector(a, "person.bin");
    /* the embedded schema loads once per process: load it before anything is armed */
    assert_non_null(cfdb_rl_schema());
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cfdb_arena_free(&g_fixture);
    return 0;
}

typedef struct run {
    int rc;
    int stage;            /* the operation that returned rc (1..6), 7 when all succeeded */
    char explain[256];
    uint32_t entries;
} run;

/* The workload: every operation's error ends it; everything it made is freed. Each operation
 * gets an arena of its own (each index's entries too), so that its first allocation is a
 * heap allocation the countdown reaches: one shared arena would serve most of them from its
 * first block. */
static void workload(run *r)
{
    memset(r, 0, sizeof *r);
    cfdb_rl_metadata *md = NULL;
    cfdb_rl_plan *plan = NULL;
    cfdb_pb_error err;
    cfdb_arena ar[8];
    for (int i = 0; i < 8; i++)
        cfdb_arena_init(&ar[i]);
    r->stage = 1;
    r->rc = cfdb_rl_metadata_from_proto(g_md_bytes.ptr, g_md_bytes.len, &md, &err);
    if (r->rc) {
        assert_int_equal(err.code, r->rc);   /* the error record agrees with the return */
        goto out;
    }
    const cfdb_rl_record_type *person = cfdb_rl_record_type_by_name(md, "Person");
    assert_non_null(person);
    r->stage = 2;
    cfdb_pb_msg *rec;
    if ((r->rc = cfdb_pb_decode(&ar[0], person->descriptor, g_person.ptr, g_person.len, 0, &rec, NULL)))
        goto out;
    r->stage = 3;
    cfdb_tuple pk;
    if ((r->rc = cfdb_rl_primary_key(&ar[1], person, rec, &pk)))
        goto out;
    r->stage = 4;
    assert_int_equal(md->index_count, 3);
    for (uint32_t i = 0; i < md->index_count; i++) {
        cfdb_rl_index_entry *e;
        uint32_t n;
        if ((r->rc = cfdb_rl_index_entries(&ar[2 + i], &md->indexes[i], person, rec, &pk, &e, &n)))
            goto out;
        r->entries += n;
    }
    r->stage = 5;
    cfdb_rl_filter f[2] = {
        { .field = "name", .op = CFDB_RL_EQ,
          .value = { .type = CFDB_TUPLE_STRING, .v.bytes = cfdb_bytes_str("ann") } },
        { .field = "score", .op = CFDB_RL_GT,
          .value = { .type = CFDB_TUPLE_DOUBLE, .v.d = 1.0 } },
    };
    cfdb_rl_query q = { .record_type = "Person", .filters = f, .filter_count = 2 };
    if ((r->rc = cfdb_rl_plan_query(md, &q, &plan)))
        goto out;
    snprintf(r->explain, sizeof r->explain, "%s", cfdb_rl_plan_explain(plan));
    r->stage = 6;
    cfdb_bytes again;
    if ((r->rc = cfdb_pb_encode(rec, &ar[5], &again)))
        goto out;
    assert_memory_equal(again.ptr, g_person.ptr, g_person.len);
    r->stage = 7;
out:
    cfdb_rl_plan_free(plan);
    cfdb_rl_metadata_free(md);
    for (int i = 0; i < 8; i++)
        cfdb_arena_free(&ar[i]);
}

static void test_unarmed_run_succeeds(void **state)
{
    (void)state;
    run r;
    long live = af_live();
    workload(&r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.stage, 7);
    assert_int_equal(af_live(), live);
    /* name 1 + tags 3 + (home.city, score) 1 */
    assert_int_equal(r.entries, 5);
    assert_non_null(strstr(r.explain, "Person$name"));
    snprintf(g_explain, sizeof g_explain, "%s", r.explain);
    g_entries = r.entries;
}

static void test_nth_allocation_fails(void **state)
{
    (void)state;
    int stages[8] = { 0 };
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
            assert_int_equal(r.stage, 7);
            assert_string_equal(r.explain, g_explain);
            assert_int_equal(r.entries, g_entries);
            assert_int_equal(af_live(), live);
            break;
        }
        if (r.rc != CFDB_ERR_OUT_OF_MEMORY)
            fail_msg("allocation %ld failed: stage %d returned %d, want 4000 (out of memory)",
                     n, r.stage, r.rc);
        if (af_live() != live)
            fail_msg("allocation %ld failed: %ld heap blocks left behind", n, af_live() - live);
        stages[r.stage]++;
    }
    print_message("rl-alloc-fail: allocations 1..%ld failed in turn; failures per stage "
                  "metadata %d, decode %d, primary key %d, index entries %d, plan %d, encode %d\n",
                  n - 1, stages[1], stages[2], stages[3], stages[4], stages[5], stages[6]);
    /* every operation allocates, so each one's failure path was exercised */
    for (int s = 1; s <= 6; s++)
        assert_true(stages[s] > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unarmed_run_succeeds),
        cmocka_unit_test(test_nth_allocation_fails),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
