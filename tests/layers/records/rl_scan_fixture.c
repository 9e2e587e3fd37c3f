/* SPDX-License-Identifier: Apache-2.0 */
/* See rl_scan_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_internal.h"
#include "rl_scan_fixture.h"

cfdb_arena rls_arena;

cfdb_rl_metadata *rls_metadata(void)
{
    cfdb_arena *a = &rls_arena;
    cfdb_pb_msg *m = rlt_base_metadata(a, 3);
    rl_set_int(m, "split_long_records", 1);
    rlt_add_index(a, m, "Person$name", "value", cfdb_kex_field(a, "name", CFDB_KEX_SCALAR), "Person");
    const cfdb_kex *cs[] = { cfdb_kex_field(a, "color", CFDB_KEX_SCALAR),
                             cfdb_kex_field(a, "score", CFDB_KEX_SCALAR) };
    rlt_add_index(a, m, "Person$color_score", "value", cfdb_kex_then(a, cs, 2), "Person");
    return rlt_load(a, m);
}

cfdb_rl_metadata *rls_metadata_versions(void)
{
    cfdb_arena *a = &rls_arena;
    cfdb_pb_msg *m = rlt_base_metadata(a, 3);
    rl_set_int(m, "split_long_records", 1);
    rl_set_int(m, "store_record_versions", 1);
    rlt_add_index(a, m, "Person$name", "value", cfdb_kex_field(a, "name", CFDB_KEX_SCALAR), "Person");
    return rlt_load(a, m);
}

cfdb_bytes rls_prefix(int n)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &rls_arena);
    assert_int_equal(cfdb_tuple_add_cstr(&t, "rlscan"), 0);
    assert_int_equal(cfdb_tuple_add_int(&t, n), 0);
    cfdb_bytes out;
    assert_int_equal(cfdb_tuple_pack(&rls_arena, cfdb_bytes_make(NULL, 0), &t, &out), 0);
    return out;
}

static cfdb_pb_msg *person(cfdb_arena *a, const cfdb_rl_metadata *md, const rls_person *p)
{
    const cfdb_rl_record_type *rt = cfdb_rl_record_type_by_name(md, "Person");
    cfdb_pb_msg *m = cfdb_pb_msg_new(a, rt->descriptor);
    assert_non_null(m);
    cfdb_pb_value v;
    v.i = p->id;
    assert_int_equal(cfdb_pb_set(m, cfdb_pb_field_by_name(rt->descriptor, "id"), v), 0);
    if (p->name) {
        v.s = cfdb_bytes_str(p->name);
        assert_int_equal(cfdb_pb_set(m, cfdb_pb_field_by_name(rt->descriptor, "name"), v), 0);
    }
    if (p->color) {
        v.i = p->color;
        assert_int_equal(cfdb_pb_set(m, cfdb_pb_field_by_name(rt->descriptor, "color"), v), 0);
        v.d = p->score;
        assert_int_equal(cfdb_pb_set(m, cfdb_pb_field_by_name(rt->descriptor, "score"), v), 0);
    }
    if (p->blob) {
        uint8_t *b = cfdb_arena_alloc(a, p->blob);
        for (size_t i = 0; i < p->blob; i++)
            b[i] = (uint8_t)(i * 7 + (size_t)p->id);
        v.s = cfdb_bytes_make(b, p->blob);
        assert_int_equal(cfdb_pb_set(m, cfdb_pb_field_by_name(rt->descriptor, "blob"), v), 0);
    }
    return m;
}

cfdb_pb_msg *rls_person_msg(cfdb_arena *a, const cfdb_rl_metadata *md, const rls_person *p)
{
    return person(a, md, p);
}

void rls_save(cfdb_rl_metadata *md, cfdb_bytes prefix, const rls_person *p, int n)
{
    rls_save_versioned(md, prefix, p, n, NULL);
}

void rls_save_versioned(cfdb_rl_metadata *md, cfdb_bytes prefix, const rls_person *p, int n,
                        uint8_t (*versions)[12])
{
    bool big = false;
    for (int i = 0; i < n; i++)
        big |= p[i].blob > 10000;
    int chunk = big ? 5 : 50;
    for (int at = 0; at < n; at += chunk) {
        FDBTransaction *tr = api_tr();
        for (;;) {
            cfdb_arena a;
            cfdb_arena_init(&a);
            cfdb_rl_store *s = NULL;
            int rc = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_CREATE_OR_OPEN, &s);
            for (int i = at; i < n && i < at + chunk && !rc; i++)
                rc = cfdb_rl_store_save(s, tr, &a, person(&a, md, &p[i]), NULL);
            if (!rc)
                rc = cfdb_rl_store_prepare_commit(s, tr);
            cfdb_rl_store_free(s);
            cfdb_arena_free(&a);
            FDBFuture *vf = versions && !rc ? fdb_transaction_get_versionstamp(tr) : NULL;
            if (!rc)
                rc = api_commit(tr);
            if (vf && !rc) {
                /* each record's version: the commit's versionstamp, then its local version
                 * (the order of the saves in the transaction, from 0) */
                const uint8_t *key;
                int len;
                assert_int_equal(fdb_future_block_until_ready(vf), 0);
                assert_int_equal(fdb_future_get_key(vf, &key, &len), 0);
                assert_int_equal(len, 10);
                for (int i = at; i < n && i < at + chunk; i++) {
                    memcpy(versions[i], key, 10);
                    versions[i][10] = (uint8_t)((i - at) >> 8);
                    versions[i][11] = (uint8_t)(i - at);
                }
            }
            if (vf)
                fdb_future_destroy(vf);
            if (!rc)
                break;
            assert_int_equal(api_on_error(tr, rc), 0);
        }
        fdb_transaction_destroy(tr);
    }
}

void rls_orphan(cfdb_bytes prefix, int64_t id)
{
    cfdb_tuple t;
    cfdb_tuple_init(&t, &rls_arena);
    cfdb_tuple_add_int(&t, 1);   /* records */
    cfdb_tuple_add_int(&t, 1);   /* Person's record type key */
    cfdb_tuple_add_int(&t, id);
    cfdb_bytes b, e;
    assert_int_equal(cfdb_tuple_range(&rls_arena, prefix, &t, &b, &e), 0);
    FDBTransaction *tr = api_tr();
    fdb_transaction_clear_range(tr, b.ptr, (int)b.len, e.ptr, (int)e.len);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

void rls_scan(rls_kind kind, cfdb_rl_metadata *md, cfdb_bytes prefix, const char *index,
              const cfdb_rl_range *range, cfdb_bytes cont, const cfdb_rl_scan_props *props,
              rls_result *out)
{
    FDBTransaction *tr = api_tr();
    const cfdb_rl_index *ix = index ? cfdb_rl_index_by_name(md, index) : NULL;
    for (;;) {
        memset(out, 0, sizeof *out);
        cfdb_arena a;
        cfdb_arena_init(&a);
        cfdb_rl_store *s = NULL;
        cfdb_rl_cursor *c = NULL;
        int rc = cfdb_rl_store_open(tr, md, prefix, CFDB_RL_OPEN, &s);
        if (!rc && kind == RLS_RECORDS)
            rc = cfdb_rl_scan_records(s, tr, range, cont, props, &c);
        else if (!rc && kind == RLS_INDEX)
            rc = cfdb_rl_scan_index(s, tr, ix, range, cont, props, &c);
        else if (!rc)
            rc = cfdb_rl_scan_index_records(s, tr, ix, range, cont, props, &c);
        for (;;) {
            if (rc)
                break;
            cfdb_rl_item it;
            bool has;
            rc = cfdb_rl_cursor_next(c, &a, &it, &has);
            if (rc || !has)
                break;
            assert_true(out->n < RLS_MAX);
            int64_t id = -1;
            if (cfdb_tuple_count(&it.primary_key) == 2)
                assert_int_equal(cfdb_tuple_get_int(&it.primary_key, 1, &id), 0);
            if (kind != RLS_INDEX && !it.record)
                id = -1;
            out->ids[out->n] = id;
            out->bytes[out->n] = (size_t)it.record_bytes;
            out->versions[out->n] = it.version;
            out->split[out->n] = it.split;
            out->hash[out->n] = 0;
            if (it.record) {
                cfdb_bytes enc;
                assert_int_equal(cfdb_pb_encode(it.record, &a, &enc), 0);
                uint64_t h = 1469598103934665603ull;
                for (size_t i = 0; i < enc.len; i++)
                    h = (h ^ enc.ptr[i]) * 1099511628211ull;
                out->hash[out->n] = h;
            }
            bool end;
            cfdb_bytes k = cfdb_rl_cursor_continuation(c, &end);
            assert_false(end);
            assert_int_equal(cfdb_arena_dup_bytes(&rls_arena, k, &out->conts[out->n]), 0);
            out->n++;
        }
        if (!rc) {
            cfdb_bytes k = cfdb_rl_cursor_continuation(c, &out->final_end);
            assert_int_equal(cfdb_arena_dup_bytes(&rls_arena, k, &out->final_cont), 0);
            out->stop = cfdb_rl_cursor_stop(c);
            if (kind == RLS_FETCH)
                out->used = cfdb_rl_cursor_fetch_used(c);
            out->max_in_flight = cfdb_rl_cursor_max_in_flight(c);
            out->requests = cfdb_rl_cursor_requests(c);
        }
        cfdb_rl_cursor_free(c);
        cfdb_rl_store_free(s);
        cfdb_arena_free(&a);
        if (!rc || !fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, rc) || api_on_error(tr, rc)) {
            out->err = rc;
            break;
        }
    }
    fdb_transaction_destroy(tr);
}

void rls_counters(unsigned long long *reads, unsigned long long *mapped)
{
    assert_int_equal(api_server_status(&g_env.server, "reads", reads), 0);
    assert_int_equal(api_server_status(&g_env.server, "mapped_requests", mapped), 0);
}
