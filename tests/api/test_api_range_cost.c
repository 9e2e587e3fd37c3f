/* What a range read costs in requests: libfdb_c asks for min(limit, 80000) rows and
 * min(target bytes, 80000) bytes per GetKeyValuesRequest and counts each row once, so reading
 * N rows costs about N / rows-per-reply requests in every streaming mode -- EXACT with a row
 * limit included. (cfdb once counted each row twice and, past the limit, asked for one row per
 * request: 24,859 requests for 50,000 rows.) The requests are counted in the frames the
 * dev server records (--trace-frames). */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define ROWS 20000
#define VALUE_BYTES 100
#define GET_KEY_VALUES_ID 6795746 /* GetKeyValuesRequest's file_identifier */

static char g_trace[64];
static char g_prefix[64];

static int count_range_requests(void)
{
    FILE *f = fopen(g_trace, "r");
    if (!f)
        return -1;
    static char line[1 << 20];
    int n = 0;
    char needle[64];
    snprintf(needle, sizeof needle, "\"file_identifier\": %d,", GET_KEY_VALUES_ID);
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle))
            n++;
    fclose(f);
    return n;
}

static int group_setup(void **state)
{
    (void)state;
    strcpy(g_trace, "/tmp/cfdb-range-cost-XXXXXX");
    int fd = mkstemp(g_trace);
    if (fd < 0)
        return -1;
    close(fd);
    const char *args[] = { "--trace-frames", g_trace, NULL };
    if (api_env_setup(args))
        return -1;
    api_prefix(g_prefix, sizeof g_prefix, "cost");
    char value[VALUE_BYTES];
    memset(value, 'v', sizeof value);
    for (int base = 0; base < ROWS; base += 2000) {
        FDBTransaction *tr = api_tr();
        for (int i = base; i < base + 2000; i++) {
            char k[96];
            int kl = snprintf(k, sizeof k, "%s%06d", g_prefix, i);
            fdb_transaction_set(tr, (const uint8_t *)k, kl, (const uint8_t *)value, sizeof value);
        }
        fdb_error_t e = api_commit(tr);
        fdb_transaction_destroy(tr);
        if (e)
            return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    int rc = api_env_teardown();
    unlink(g_trace);
    return rc;
}

/* Reads [prefix, prefix\xff) to the end with limit/mode as a binding does (iteration after
 * iteration, from the last key returned); returns the rows read and the requests it cost. */
static int read_all(int limit, FDBStreamingMode mode, int reverse, int *requests, int *calls)
{
    char begin[96], end[96];
    int bl = snprintf(begin, sizeof begin, "%s", g_prefix);
    int el = snprintf(end, sizeof end, "%s\xff", g_prefix);
    int before = count_range_requests();
    FDBTransaction *tr = api_tr();
    int total = 0, iteration = 1;
    *calls = 0;
    char last[96] = "";
    for (;;) {
        FDBFuture *f = fdb_transaction_get_range(tr, (const uint8_t *)begin, bl, 0, 1, (const uint8_t *)end, el, 0,
                                                 1, limit ? limit - total : 0, 0, mode, iteration++, 1, reverse);
        assert_int_equal(api_wait(f), 0);
        const FDBKeyValue *kv;
        int n;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        for (int i = 0; i < n; i++) {
            /* every row once, in order */
            int idx = reverse ? ROWS - 1 - (total + i) : total + i;
            char want[96];
            int wl = snprintf(want, sizeof want, "%s%06d", g_prefix, idx);
            assert_int_equal(kv[i].key_length, wl);
            assert_memory_equal(kv[i].key, want, (size_t)wl);
            assert_int_equal(kv[i].value_length, VALUE_BYTES);
        }
        if (n) {
            memcpy(last, kv[n - 1].key, (size_t)kv[n - 1].key_length);
            if (reverse) {
                memcpy(end, last, (size_t)kv[n - 1].key_length);
                el = kv[n - 1].key_length;
            } else {
                memcpy(begin, last, (size_t)kv[n - 1].key_length);
                begin[kv[n - 1].key_length] = 0; /* firstGreaterThan(last): keyAfter */
                bl = kv[n - 1].key_length + 1;
            }
        }
        total += n;
        (*calls)++;
        fdb_future_destroy(f);
        if (!more || (limit && total >= limit))
            break;
    }
    fdb_transaction_destroy(tr);
    *requests = count_range_requests() - before;
    return total;
}

/* A reply carries at most 80,000 bytes as the storage server counts them (key + value +
 * about 10 of overhead a row): ~700 rows of these. Allow twice that many requests, plus the
 * first, the last and one per batch boundary; the old double counting cost thousands. */
static void assert_cost(const char *what, int rows, int requests)
{
    int row_bytes = (int)strlen(g_prefix) + 6 + VALUE_BYTES;
    int per_reply = 80000 / row_bytes;
    int bound = 2 * (rows / per_reply + 1) + 4;
    print_message("%s: %d rows in %d GetKeyValuesRequests (at most %d)\n", what, rows, requests, bound);
    assert_true(requests >= 1);
    assert_true(requests <= bound);
}

static void test_exact_with_limit(void **state)
{
    (void)state;
    int requests, calls;
    for (int reverse = 0; reverse <= 1; reverse++) {
        int rows = read_all(ROWS, FDB_STREAMING_MODE_EXACT, reverse, &requests, &calls);
        assert_int_equal(rows, ROWS);
        assert_int_equal(calls, 1); /* EXACT: all the rows the limit asks for, in one answer */
        assert_cost(reverse ? "EXACT limit 20000, reverse" : "EXACT limit 20000", rows, requests);
    }
}

static void test_want_all_and_iterator(void **state)
{
    (void)state;
    int requests, calls;
    int rows = read_all(0, FDB_STREAMING_MODE_WANT_ALL, 0, &requests, &calls);
    assert_int_equal(rows, ROWS);
    assert_cost("WANT_ALL", rows, requests);
    rows = read_all(0, FDB_STREAMING_MODE_ITERATOR, 0, &requests, &calls);
    assert_int_equal(rows, ROWS);
    /* the iterator starts at 4096 bytes and grows to 80000: a few more requests at first */
    assert_cost("ITERATOR", rows, requests - 8);
    rows = read_all(15000, FDB_STREAMING_MODE_WANT_ALL, 1, &requests, &calls);
    assert_int_equal(rows, 15000);
    assert_cost("WANT_ALL limit 15000, reverse", rows, requests);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_with_limit),
        cmocka_unit_test(test_want_all_and_iterator),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
