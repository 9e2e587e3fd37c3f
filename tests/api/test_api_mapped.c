/* Mapped range reads through fdb_c.h (fdb_transaction_get_mapped_range and
 * fdb_future_get_mappedkeyvalue_array): the golden scenario (index keys mapped to records
 * by a tuple mapper), limits and more, reverse, secondary point reads, the preconditions'
 * errors, read-your-writes refusal, conflicts, and index ranges over several shards. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Tuple encoding by hand: byte strings 02 ... 00, small ints 15 n. The multi-shard index
 * ("ms", "idx", n) is split at n = 5, 10 and 12 (one storage server, so a record is always
 * served with its index entry). */
#define T_IDX "\x02idx\x00"
#define T_ODD "\x02odd\x00"
#define T_REC "\x02rec\x00"
#define T_MS "\x02ms\x00"

static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--storage-servers", "1", "--shards",
                           "\\x02ms\\x00\\x02idx\\x00\\x15\\x05,\\x02ms\\x00\\x02idx\\x00\\x15\\x0a,"
                           "\\x02ms\\x00\\x02idx\\x00\\x15\\x0c",
                           NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

typedef struct buf {
    uint8_t b[64];
    int n;
} buf;

static buf cat(const char *a, int alen, int tail_int)
{
    buf r;
    memcpy(r.b, a, (size_t)alen);
    r.n = alen;
    if (tail_int >= 0) {
        r.b[r.n++] = 0x15;
        r.b[r.n++] = (uint8_t)tail_int;
    }
    return r;
}

#define LIT(s) s, (int)(sizeof(s) - 1)

static const char golden_mapper[] = T_REC "\x02{K[2]}\x00\x02{...}\x00";
static const char ms_mapper[] = T_MS T_REC "\x02{K[2]}\x00\x02{...}\x00";

/* Golden data: records ("rec", 1..6) = "record-n", index ("idx", "odd", n) for odd n. */
static void seed(void)
{
    static int done;
    if (done)
        return;
    FDBTransaction *tr = api_tr();
    for (;;) {
        for (int i = 1; i <= 6; i++) {
            char v[32];
            snprintf(v, sizeof v, "record-%d", i);
            buf k = cat(LIT(T_REC), i);
            fdb_transaction_set(tr, k.b, k.n, S(v), L(v));
            if (i % 2) {
                buf ik = cat(LIT(T_IDX T_ODD), i);
                fdb_transaction_set(tr, ik.b, ik.n, S(""), 0);
            }
        }
        /* the multi-shard index: entries for 1..9 and 13..20, nothing in [10, 12) */
        for (int i = 1; i <= 20; i++) {
            char v[32];
            snprintf(v, sizeof v, "ms-%d", i);
            buf k = cat(LIT(T_MS T_REC), i);
            fdb_transaction_set(tr, k.b, k.n, S(v), L(v));
            if (i < 10 || i > 12) {
                buf ik = cat(LIT(T_MS T_IDX), i);
                fdb_transaction_set(tr, ik.b, ik.n, S("x"), 1);
            }
        }
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
    done = 1;
}

static FDBFuture *mapped(FDBTransaction *tr, const buf *b, int bo, int boff, const buf *e, int eo, int eoff,
                         const char *mapper, int mlen, int limit, FDBStreamingMode mode, int snapshot, int reverse)
{
    return fdb_transaction_get_mapped_range(tr, b->b, b->n, bo, boff, e->b, e->n, eo, eoff, S(mapper), mlen, limit,
                                            0, mode, 0, snapshot, reverse);
}

static int golden_range(FDBTransaction *tr, int limit, int reverse, FDBFuture **out)
{
    buf b = cat(LIT(T_IDX T_ODD), -1), e = cat(LIT(T_IDX T_ODD "\xff"), -1);
    *out = mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, (int)sizeof golden_mapper - 1, limit,
                  FDB_STREAMING_MODE_WANT_ALL, 0, reverse);
    return api_wait(*out);
}

/* the row for index n of the golden scenario */
static void check_golden_row(const FDBMappedKeyValue *r, int n)
{
    buf ik = cat(LIT(T_IDX T_ODD), n), rk = cat(LIT(T_REC), n), re = cat(LIT(T_REC), n + 1);
    assert_int_equal(r->key.key_length, ik.n);
    assert_memory_equal(r->key.key, ik.b, (size_t)ik.n);
    assert_int_equal(r->value.key_length, 0);
    assert_int_equal(r->getRange.begin.key.key_length, rk.n);
    assert_memory_equal(r->getRange.begin.key.key, rk.b, (size_t)rk.n);
    assert_int_equal(r->getRange.begin.orEqual, 0);
    assert_int_equal(r->getRange.begin.offset, 1);
    assert_int_equal(r->getRange.end.key.key_length, re.n);
    assert_memory_equal(r->getRange.end.key.key, re.b, (size_t)re.n);
    assert_int_equal(r->getRange.end.offset, 1);
    assert_int_equal(r->getRange.m_size, 1);
    const FDBKeyValue *kv = &r->getRange.data[0];
    char v[32];
    snprintf(v, sizeof v, "record-%d", n);
    assert_int_equal(kv->key_length, rk.n);
    assert_memory_equal(kv->key, rk.b, (size_t)rk.n);
    assert_int_equal(kv->value_length, (int)strlen(v));
    assert_memory_equal(kv->value, v, strlen(v));
    assert_int_equal(r->buffer[24], 1); /* the variant holds a range read */
}

static void test_layout(void **state)
{
    (void)state;
    assert_int_equal(sizeof(FDBMappedKeyValue), 112);
    assert_int_equal(sizeof(FDBGetRangeReqAndResult), 56);
    assert_int_equal(offsetof(FDBMappedKeyValue, getRange), 24);
}

/* tests/vectors/golden/mapped_range.results.jsonl */
static void test_golden(void **state)
{
    (void)state;
    seed();
    FDBTransaction *tr = api_tr();
    FDBFuture *f;
    assert_int_equal(golden_range(tr, 0, 0, &f), 0);
    const FDBMappedKeyValue *kvs;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more), 0);
    assert_int_equal(n, 3);
    assert_false(more);
    for (int i = 0; i < 3; i++)
        check_golden_row(&kvs[i], 2 * i + 1);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void test_limit_and_reverse(void **state)
{
    (void)state;
    seed();
    FDBTransaction *tr = api_tr();
    FDBFuture *f;
    const FDBMappedKeyValue *kvs;
    int n;
    fdb_bool_t more;
    assert_int_equal(golden_range(tr, 2, 0, &f), 0);
    assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more), 0);
    assert_int_equal(n, 2);
    assert_true(more);
    check_golden_row(&kvs[0], 1);
    check_golden_row(&kvs[1], 3);
    fdb_future_destroy(f);

    assert_int_equal(golden_range(tr, 0, 1, &f), 0);
    assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more), 0);
    assert_int_equal(n, 3);
    assert_false(more);
    check_golden_row(&kvs[0], 5);
    check_golden_row(&kvs[1], 3);
    check_golden_row(&kvs[2], 1);
    fdb_future_destroy(f);

    assert_int_equal(golden_range(tr, 1, 1, &f), 0);
    assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more), 0);
    assert_int_equal(n, 1);
    assert_true(more);
    check_golden_row(&kvs[0], 5);
    fdb_future_destroy(f);

    /* an inverted range is empty */
    buf b = cat(LIT(T_IDX T_ODD "\xff"), -1), e = cat(LIT(T_IDX T_ODD), -1);
    f = mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, (int)sizeof golden_mapper - 1, 0, FDB_STREAMING_MODE_WANT_ALL,
               0, 0);
    assert_int_equal(api_wait(f), 0);
    assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more), 0);
    assert_int_equal(n, 0);
    assert_false(more);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

/* a mapper without {...} reads one value per row (GetValueReqAndResultRef in the row) */
static void test_point_mapper(void **state)
{
    (void)state;
    seed();
    static const char pm[] = T_REC "\x02{K[2]}\x00";
    FDBTransaction *tr = api_tr();
    buf b = cat(LIT(T_IDX T_ODD), -1), e = cat(LIT(T_IDX T_ODD "\xff"), -1);
    FDBFuture *f = mapped(tr, &b, 0, 1, &e, 0, 1, pm, (int)sizeof pm - 1, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBMappedKeyValue *kvs;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more), 0);
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) {
        const unsigned char *raw = (const unsigned char *)&kvs[i];
        FDBKey k, v;
        memcpy(&k, raw + 24, sizeof k);
        memcpy(&v, raw + 36, sizeof v);
        buf rk = cat(LIT(T_REC), 2 * i + 1);
        char val[32];
        snprintf(val, sizeof val, "record-%d", 2 * i + 1);
        assert_int_equal(k.key_length, rk.n);
        assert_memory_equal(k.key, rk.b, (size_t)rk.n);
        assert_int_equal(v.key_length, (int)strlen(val));
        assert_memory_equal(v.key, val, strlen(val));
        assert_int_equal(raw[48], 1);  /* value present */
        assert_int_equal(raw[104], 0); /* the variant holds a point read */
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static fdb_error_t err_of(FDBFuture *f)
{
    fdb_error_t e = api_wait(f);
    const FDBMappedKeyValue *kvs;
    int n;
    fdb_bool_t more;
    if (!e)
        e = fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more);
    fdb_future_destroy(f);
    return e;
}

static void test_preconditions(void **state)
{
    (void)state;
    seed();
    const int ml = (int)sizeof golden_mapper - 1;
    buf b = cat(LIT(T_IDX T_ODD), -1), e = cat(LIT(T_IDX T_ODD "\xff"), -1);
    FDBTransaction *tr = api_tr();
    /* snapshot reads: unsupported_operation */
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 1, 0)),
                     2108);
    /* exact mode without limits, iterator mode with iteration 0 */
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_EXACT, 0, 0)),
                     2210);
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_ITERATOR, 0, 0)),
                     2000);
    /* negative byte limit: range_limits_invalid */
    assert_int_equal(err_of(fdb_transaction_get_mapped_range(tr, b.b, b.n, 0, 1, e.b, e.n, 0, 1, S(golden_mapper), ml,
                                                             0, -5, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0)),
                     2012);
    /* beyond the readable keys; special keys */
    buf hi = cat(LIT("\xff\x01"), -1);
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &hi, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     2004);
    buf sk = cat(LIT("\xff\xff/a"), -1), se = cat(LIT("\xff\xff/b"), -1);
    assert_int_equal(err_of(mapped(tr, &sk, 0, 1, &se, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     2000);
    /* a bad mapper index: the storage server's error */
    static const char bad[] = T_REC "\x02{K[9]}\x00\x02{...}\x00";
    assert_int_equal(
        err_of(mapped(tr, &b, 0, 1, &e, 0, 1, bad, (int)sizeof bad - 1, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)), 2030);
    fdb_transaction_destroy(tr);

    /* read-your-writes disabled: unsupported_operation */
    tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     2108);
    fdb_transaction_destroy(tr);
}

/* local writes the read would see: get_mapped_range_reads_your_writes */
static void test_reads_your_writes(void **state)
{
    (void)state;
    seed();
    const int ml = (int)sizeof golden_mapper - 1;
    buf b = cat(LIT(T_IDX T_ODD), -1), e = cat(LIT(T_IDX T_ODD "\xff"), -1);
    /* a written record (secondary range) */
    FDBTransaction *tr = api_tr();
    buf rk = cat(LIT(T_REC), 3);
    fdb_transaction_set(tr, rk.b, rk.n, S("local"), 5);
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     2039);
    fdb_transaction_destroy(tr);
    /* a written index entry (primary range) */
    tr = api_tr();
    buf ik = cat(LIT(T_IDX T_ODD), 7);
    fdb_transaction_set(tr, ik.b, ik.n, S(""), 0);
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     2039);
    fdb_transaction_destroy(tr);
    /* a cleared range over a record */
    tr = api_tr();
    buf c0 = cat(LIT(T_REC), 5), c1 = cat(LIT(T_REC), 6);
    fdb_transaction_clear_range(tr, c0.b, c0.n, c1.b, c1.n);
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     2039);
    fdb_transaction_destroy(tr);
    /* writes elsewhere (an unread record) are fine */
    tr = api_tr();
    buf other = cat(LIT(T_REC), 4);
    fdb_transaction_set(tr, other.b, other.n, S("x"), 1);
    assert_int_equal(err_of(mapped(tr, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     0);
    fdb_transaction_destroy(tr);
}

/* the secondary reads are read conflict ranges */
static void test_conflicts(void **state)
{
    (void)state;
    seed();
    const int ml = (int)sizeof golden_mapper - 1;
    buf b = cat(LIT(T_IDX T_ODD), -1), e = cat(LIT(T_IDX T_ODD "\xff"), -1);
    FDBTransaction *t1 = api_tr();
    assert_int_equal(err_of(mapped(t1, &b, 0, 1, &e, 0, 1, golden_mapper, ml, 0, FDB_STREAMING_MODE_WANT_ALL, 0, 0)),
                     0);
    /* another transaction rewrites record 3 (same value) */
    buf rk = cat(LIT(T_REC), 3);
    assert_int_equal(api_set_committed(rk.b, rk.n, "record-3", 8), 0);
    fdb_transaction_set(t1, S("mapped/conflict"), L("mapped/conflict"), S("1"), 1);
    assert_int_equal(api_commit(t1), 1020);
    fdb_transaction_destroy(t1);
}

/* reads ("ms", "idx") to the end the way an application does; returns the index numbers */
static int read_ms(int limit, FDBStreamingMode mode, int reverse, int *got, int *batches)
{
    FDBTransaction *tr = api_tr();
    buf b = cat(LIT(T_MS T_IDX), -1), e = cat(LIT(T_MS T_IDX "\xff"), -1);
    int bo = 0, boff = 1, eo = 0, eoff = 1, total = 0;
    *batches = 0;
    for (;;) {
        FDBFuture *f = mapped(tr, &b, bo, boff, &e, eo, eoff, ms_mapper, (int)sizeof ms_mapper - 1, limit, mode, 0,
                              reverse);
        assert_int_equal(api_wait(f), 0);
        const FDBMappedKeyValue *kvs;
        int n;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_mappedkeyvalue_array(f, &kvs, &n, &more), 0);
        (*batches)++;
        for (int i = 0; i < n; i++) {
            const FDBMappedKeyValue *r = &kvs[i];
            int idx = r->key.key[r->key.key_length - 1];
            got[total++] = idx;
            char v[32];
            snprintf(v, sizeof v, "ms-%d", idx);
            assert_int_equal(r->getRange.m_size, 1);
            assert_int_equal(r->getRange.data[0].value_length, (int)strlen(v));
            assert_memory_equal(r->getRange.data[0].value, v, strlen(v));
        }
        if (n > 0) {
            const FDBMappedKeyValue *last = &kvs[n - 1];
            if (reverse) {
                memcpy(e.b, last->key.key, (size_t)last->key.key_length);
                e.n = last->key.key_length;
                eo = 0;
                eoff = 1;
            } else {
                memcpy(b.b, last->key.key, (size_t)last->key.key_length);
                b.n = last->key.key_length;
                bo = 1;
                boff = 1;
            }
        }
        fdb_future_destroy(f);
        if (!more)
            break;
        assert_true(*batches < 50);
    }
    fdb_transaction_destroy(tr);
    return total;
}

static void check_ms(const int *got, int n, int reverse)
{
    int want[20], w = 0;
    for (int i = 1; i <= 20; i++)
        if (i < 10 || i > 12)
            want[w++] = i;
    assert_int_equal(n, w);
    for (int i = 0; i < n; i++)
        assert_int_equal(got[i], reverse ? want[w - 1 - i] : want[i]);
}

static void test_multi_shard(void **state)
{
    (void)state;
    seed();
    int got[64], batches, n;
    /* byte-limited (want all): a batch per shard at most */
    n = read_ms(0, FDB_STREAMING_MODE_WANT_ALL, 0, got, &batches);
    check_ms(got, n, 0);
    assert_true(batches >= 2);
    n = read_ms(0, FDB_STREAMING_MODE_WANT_ALL, 1, got, &batches);
    check_ms(got, n, 1);
    /* a row limit only: shards are crossed within one call; the empty shard [10, 12)
     * makes the read start over on resolved keys */
    n = read_ms(100, FDB_STREAMING_MODE_EXACT, 0, got, &batches);
    check_ms(got, n, 0);
    assert_int_equal(batches, 1);
    n = read_ms(100, FDB_STREAMING_MODE_EXACT, 1, got, &batches);
    check_ms(got, n, 1);
    assert_int_equal(batches, 1);
    /* small limits */
    n = read_ms(3, FDB_STREAMING_MODE_EXACT, 0, got, &batches);
    check_ms(got, n, 0);
    n = read_ms(4, FDB_STREAMING_MODE_EXACT, 1, got, &batches);
    check_ms(got, n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_limit_and_reverse),
        cmocka_unit_test(test_point_mapper),
        cmocka_unit_test(test_preconditions),
        cmocka_unit_test(test_reads_your_writes),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_multi_shard),
    };
    return cmocka_run_group_tests_name("api_mapped", tests, group_setup, group_teardown);
}
