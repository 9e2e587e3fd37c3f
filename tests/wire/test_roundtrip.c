#define _GNU_SOURCE
/* Encode/decode round trips for every described message: a generic filler walks each
 * description and sets every member (every Optional present, every vector non-empty,
 * every union alternative in turn), so no field is left unchecked. Also the special
 * encodings: single-key ranges and clears, error replies, in-band errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "messages.h"
#include "print_util.h"

typedef struct filler {
    cfdb_arena *a;
    uint64_t rng;
    unsigned variant; /* which union alternative to pick */
} filler;

static uint64_t next(filler *f)
{
    f->rng ^= f->rng << 13;
    f->rng ^= f->rng >> 7;
    f->rng ^= f->rng << 17;
    return f->rng;
}

static cfdb_bytes random_bytes(filler *f, uint32_t min)
{
    uint32_t n = min + (uint32_t)(next(f) % 12);
    uint8_t *p = cfdb_arena_alloc(f->a, n + 1);
    for (uint32_t i = 0; i < n; i++)
        p[i] = (uint8_t)next(f);
    return cfdb_bytes_make(p, n);
}

static void fill(filler *f, const fb_type *t, void *obj);

static void fill_table(filler *f, const fb_type *t, void *obj)
{
    for (uint32_t i = 0; i < t->nfields; i++)
        fill(f, t->fields[i].type, (unsigned char *)obj + t->fields[i].offset);
    if (t == &cfdb_fb_key_range) { /* ranges must not be inverted */
        cfdb_key_range *r = obj;
        if (cfdb_bytes_cmp(r->begin, r->end) > 0) {
            cfdb_bytes x = r->begin;
            r->begin = r->end;
            r->end = x;
        }
    }
    if (t == &cfdb_fb_mutation) {
        cfdb_mutation *m = obj;
        m->type %= CFDB_MUT_MAX_ATOMIC_OP; /* flag bits are a 7.4 feature */
    }
}

static void fill(filler *f, const fb_type *t, void *obj)
{
    switch (t->kind) {
    case FB_BOOL: *(bool *)obj = next(f) & 1; break;
    case FB_U8: case FB_I8: *(uint8_t *)obj = (uint8_t)next(f); break;
    case FB_U16: case FB_I16: *(uint16_t *)obj = (uint16_t)next(f); break;
    case FB_U32: case FB_I32: *(uint32_t *)obj = (uint32_t)next(f); break;
    case FB_U64: case FB_I64: *(uint64_t *)obj = next(f); break;
    case FB_F64: *(double *)obj = (double)(next(f) % 100000) / 7.0; break;
    case FB_UID: ((cfdb_uid *)obj)->first = next(f); ((cfdb_uid *)obj)->second = next(f); break;
    case FB_TAG: ((cfdb_tag *)obj)->id = (uint16_t)next(f); ((cfdb_tag *)obj)->locality = (int8_t)next(f); break;
    case FB_BYTES: *(cfdb_bytes *)obj = random_bytes(f, 1); break;
    case FB_BLOB:
        if (t->csize == sizeof(cfdb_version_vector) && strcmp(t->name, "VersionVector") == 0) {
            ((cfdb_version_vector *)obj)->maxVersion = (int64_t)(next(f) >> 1);
        } else if (strcmp(t->name, "TagSet") == 0) {
            cfdb_tag_set *ts = obj;
            ts->tags.count = 3;
            ts->tags.items = cfdb_arena_alloc(f->a, 3 * sizeof(cfdb_bytes));
            for (int i = 0; i < 3; i++)
                ts->tags.items[i] = random_bytes(f, 0);
        } else { /* key-value blob */
            cfdb_key_value_vec *kv = obj;
            kv->count = 4;
            kv->items = cfdb_arena_alloc(f->a, 4 * sizeof(cfdb_key_value));
            for (int i = 0; i < 4; i++) {
                kv->items[i].key = random_bytes(f, 1);
                kv->items[i].value = random_bytes(f, 0);
            }
        }
        break;
    case FB_TABLE: fill_table(f, t, obj); break;
    case FB_VECTOR: {
        cfdb_vec *v = obj;
        v->count = 1 + (uint32_t)(next(f) % 3);
        v->items = cfdb_arena_zalloc(f->a, (size_t)v->count * t->elem->csize);
        for (uint32_t i = 0; i < v->count; i++)
            fill(f, t->elem, (unsigned char *)v->items + (size_t)i * t->elem->csize);
        break;
    }
    case FB_UNION: {
        uint8_t tag = (uint8_t)(1 + (f->variant++ % t->nalts));
        *(uint8_t *)obj = tag;
        fill(f, t->alts[tag - 1].type, (unsigned char *)obj + t->alts[tag - 1].offset);
        break;
    }
    }
}

static void round_trip(const fb_message *m, const void *item, cfdb_reply_error err, cfdb_arena *a)
{
    fb_writer w;
    fb_writer_init(&w, 28); /* room for a frame header, as the transport uses it */
    assert_int_equal(fb_encode(&w, m, item, err), 0);
    assert_int_equal(fb_writer_message_len(&w) % 8, 0);
    void *back = cfdb_arena_zalloc(a, m->item->csize + 1);
    cfdb_reply_error err2 = 0;
    int rc = fb_decode(m, fb_writer_message(&w), fb_writer_message_len(&w), back, &err2, a);
    if (rc)
        fail_msg("%s: decode of our own encoding failed: %d", m->name, rc);
    char *t1 = print_to_string(m, item, err), *t2 = print_to_string(m, back, err2);
    if (strcmp(t1, t2) != 0)
        fail_msg("%s round trip differs:\n%s\nvs\n%s", m->name, t1, t2);
    free(t1);
    free(t2);
    fb_writer_free(&w);
}

static void test_every_message_round_trips(void **state)
{
    for (unsigned i = 0; i < cfdb_all_messages_count; i++) {
        const fb_message *m = cfdb_all_messages[i];
        for (unsigned variant = 0; variant < 3; variant++) {
            cfdb_arena a;
            cfdb_arena_init(&a);
            filler f = { &a, 0x9e3779b97f4a7c15ull * (i + 1) + variant, variant };
            void *item = cfdb_arena_zalloc(&a, m->item->csize + 1);
            fill(&f, m->item, item);
            round_trip(m, item, 0, &a);
            /* all-default values too: empty vectors, absent optionals, zero scalars */
            void *zero = cfdb_arena_zalloc(&a, m->item->csize + 1);
            round_trip(m, zero, 0, &a);
            if (m->kind == FB_MSG_REPLY)
                round_trip(m, NULL, (cfdb_reply_error)(1000 + i), &a);
            cfdb_arena_free(&a);
        }
    }
}

static void test_single_key_encodings(void **state)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_key_range ranges[2] = {
        { CFDB_BYTES_LIT("abc"), { (const uint8_t *)"abc\0", 4 } }, /* single key */
        { CFDB_BYTES_LIT("a"), CFDB_BYTES_LIT("b") },
    };
    cfdb_mutation muts[2] = {
        { CFDB_MUT_CLEAR_RANGE, CFDB_BYTES_LIT("k"), { (const uint8_t *)"k\0", 2 } },
        { CFDB_MUT_SET_VALUE, CFDB_BYTES_LIT("k"), CFDB_BYTES_LIT("") },
    };
    cfdb_commit_transaction_request req;
    memset(&req, 0, sizeof req);
    req.transaction.write_conflict_ranges.items = ranges;
    req.transaction.write_conflict_ranges.count = 2;
    req.transaction.mutations.items = muts;
    req.transaction.mutations.count = 2;
    req.tenantInfo.tenantId = -1;
    fb_writer w;
    fb_writer_init(&w, 0);
    assert_int_equal(fb_encode(&w, &cfdb_msg_commit_transaction_request, &req, 0), 0);
    /* on the wire the single-key range is {"abc\0", ""}: no string "abc" of length 3 */
    static const uint8_t abc3[] = { 3, 0, 0, 0, 'a', 'b', 'c' };
    static const uint8_t abc4[] = { 4, 0, 0, 0, 'a', 'b', 'c', 0 };
    assert_null(memmem(fb_writer_message(&w), fb_writer_message_len(&w), abc3, sizeof abc3));
    assert_non_null(memmem(fb_writer_message(&w), fb_writer_message_len(&w), abc4, sizeof abc4));
    cfdb_commit_transaction_request back;
    memset(&back, 0, sizeof back);
    assert_int_equal(fb_decode(&cfdb_msg_commit_transaction_request, fb_writer_message(&w), fb_writer_message_len(&w),
                               &back, NULL, &a), 0);
    assert_int_equal(back.transaction.write_conflict_ranges.count, 2);
    assert_true(cfdb_bytes_eq(back.transaction.write_conflict_ranges.items[0].begin, ranges[0].begin));
    assert_true(cfdb_bytes_eq(back.transaction.write_conflict_ranges.items[0].end, ranges[0].end));
    assert_true(cfdb_bytes_eq(back.transaction.mutations.items[0].param1, muts[0].param1));
    assert_true(cfdb_bytes_eq(back.transaction.mutations.items[0].param2, muts[0].param2));
    /* a set with an empty value stays a set with an empty value */
    assert_int_equal(back.transaction.mutations.items[1].type, CFDB_MUT_SET_VALUE);
    assert_int_equal(back.transaction.mutations.items[1].param2.len, 0);
    fb_writer_free(&w);
    cfdb_arena_free(&a);
}

static void test_in_band_and_union_errors(void **state)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_get_key_values_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.penalty = 1.0;
    rep.error.present = 1;
    rep.error.value.code = 1001;
    round_trip(&cfdb_msg_get_key_values_reply, &rep, 0, &a);
    round_trip(&cfdb_msg_get_key_values_reply, NULL, 1009, &a);
    cfdb_arena_free(&a);
}

/* The \xff/serverList/ value's message is described once, in the registry:
 * StorageServerInterface's file_identifier is 15302073 (7.3.77
 * fdbclient/include/fdbclient/StorageServerInterface.h), and its fields in serialize() order
 * begin uniqueID, locality, then the getValue stream (whose endpoint names the server). */
static void test_shared_messages_described_once(void **state)
{
    (void)state;
    const fb_message *m = cfdb_message_by_file_id(15302073);
    assert_ptr_equal(m, &cfdb_msg_storage_server_interface);
    assert_string_equal(m->item->name, "StorageServerInterface");
    assert_ptr_equal(cfdb_message_by_name("StorageServerInterface"), m);
    /* the management requests, shared by db_manage.c and cfdb-server: file identifiers from
     * 7.3.77 ClusterInterface.h (GetClientWorkersRequest 10771791, ForceRecoveryRequest
     * 14821350), ClientWorkerInterface.h (RebootRequest 11913957, ClientWorkerInterface
     * 12418152 inside ErrorOr (2) of vector (5)), CommitProxyInterface.h (ProxySnapRequest
     * 5427684, GetHealthMetricsRequest 11403900, GetDDMetricsRequest 14536812) */
    assert_ptr_equal(cfdb_message_by_file_id(10771791), &cfdb_msg_get_client_workers_request);
    assert_ptr_equal(cfdb_message_by_file_id(14821350), &cfdb_msg_force_recovery_request);
    assert_ptr_equal(cfdb_message_by_file_id(11913957), &cfdb_msg_reboot_request);
    assert_ptr_equal(cfdb_message_by_file_id((2u << 28) | (5u << 24) | 12418152u), &cfdb_msg_client_workers_reply);
    assert_ptr_equal(cfdb_message_by_file_id(5427684), &cfdb_msg_proxy_snap_request);
    assert_ptr_equal(cfdb_message_by_file_id(11403900), &cfdb_msg_get_health_metrics_request);
    assert_ptr_equal(cfdb_message_by_file_id(14536812), &cfdb_msg_get_dd_metrics_request);
}

/* HealthMetrics in BinaryWriter IncludeVersion form (7.3.77 FDBTypes.h HealthMetrics::serialize:
 * worstStorageQueue, worstStorageDurabilityLag, worstTLogQueue, tpsLimit, batchLimited,
 * storageStats, tLogQueue, limitingStorageQueue, limitingStorageDurabilityLag; std::map as an
 * int32 count then key, value; flow/serialize.h): offsets derived by hand. */
static void test_health_metrics_binary(void **state)
{
    (void)state;
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_health_storage_stats ss = { { 0x1111, 0x2222 }, 7, 9, 0.5, 0.25 };
    cfdb_health_log_queue lq = { { 0x3333, 0x4444 }, 11 };
    cfdb_health_metrics m = { 1, 2, 3, 4, 5, 1e6, true, &ss, 1, &lq, 1 };
    cfdb_bytes b;
    assert_int_equal(cfdb_health_metrics_encode(&m, &a, &b), 0);
    assert_int_equal(b.len, 8 + 3 * 8 + 8 + 1 + 4 + 48 + 4 + 24 + 16);
    uint64_t u;
    double d;
    memcpy(&u, b.ptr, 8);
    assert_true(u == UINT64_C(0x0FDB00B073000000));
    memcpy(&u, b.ptr + 8, 8);
    assert_int_equal(u, 1); /* worstStorageQueue */
    memcpy(&u, b.ptr + 16, 8);
    assert_int_equal(u, 3); /* worstStorageDurabilityLag */
    memcpy(&u, b.ptr + 24, 8);
    assert_int_equal(u, 5); /* worstTLogQueue */
    memcpy(&d, b.ptr + 32, 8);
    assert_true(d == 1e6);
    assert_int_equal(b.ptr[40], 1); /* batchLimited */
    assert_int_equal(b.ptr[41], 1); /* storageStats count (int32) */
    assert_int_equal(b.ptr[45], 0x11); /* its UID first */
    memcpy(&u, b.ptr + 45 + 16, 8);
    assert_int_equal(u, 7); /* storageQueue */
    assert_int_equal(b.ptr[93], 1); /* tLogQueue count */
    memcpy(&u, b.ptr + 97 + 16, 8);
    assert_int_equal(u, 11);
    memcpy(&u, b.ptr + 121, 8);
    assert_int_equal(u, 2); /* limitingStorageQueue */
    memcpy(&u, b.ptr + 129, 8);
    assert_int_equal(u, 4); /* limitingStorageDurabilityLag */

    cfdb_health_metrics back;
    assert_int_equal(cfdb_health_metrics_decode(b, &a, &back), 0);
    assert_int_equal(back.worstStorageQueue, 1);
    assert_int_equal(back.limitingStorageQueue, 2);
    assert_int_equal(back.worstStorageDurabilityLag, 3);
    assert_int_equal(back.limitingStorageDurabilityLag, 4);
    assert_int_equal(back.worstTLogQueue, 5);
    assert_true(back.tpsLimit == 1e6 && back.batchLimited);
    assert_int_equal(back.nstorage, 1);
    assert_true(back.storage[0].id.first == 0x1111 && back.storage[0].id.second == 0x2222);
    assert_true(back.storage[0].diskUsage == 0.5 && back.storage[0].cpuUsage == 0.25);
    assert_int_equal(back.storage[0].storageDurabilityLag, 9);
    assert_int_equal(back.nlog, 1);
    assert_int_equal(back.log[0].queue, 11);
    /* truncated, and a map count larger than the bytes behind it */
    assert_int_equal(cfdb_health_metrics_decode(cfdb_bytes_make(b.ptr, b.len - 1), &a, &back), 1044);
    uint8_t *big = cfdb_arena_alloc(&a, b.len);
    memcpy(big, b.ptr, b.len);
    big[44] = 0x7f;
    assert_int_equal(cfdb_health_metrics_decode(cfdb_bytes_make(big, b.len), &a, &back), 1044);
    cfdb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_message_round_trips),
        cmocka_unit_test(test_single_key_encodings),
        cmocka_unit_test(test_in_band_and_union_errors),
        cmocka_unit_test(test_shared_messages_described_once),
        cmocka_unit_test(test_health_metrics_binary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
