/* The special key space's registry (src/client/special/special_registry.c): one table of
 * implementations sorted by begin, without overlaps, inside \xff\xff ... \xff\xff\xff; the
 * lookups the router makes on it (the writable implementation holding a key, the one holding
 * the keys before a range's end, a module's run of implementations) and the API-version rule
 * of management/profiling/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "special_keys_internal.h"

/* A row's end: its end, or begin + \0 for a single key (in buf). */
static cfdb_bytes row_end(const sk_impl *m, uint8_t *buf, size_t cap)
{
    if (m->end)
        return cfdb_bytes_str(m->end);
    size_t n = strlen(m->begin);
    assert_true(n + 1 <= cap);
    memcpy(buf, m->begin, n);
    buf[n] = 0;
    return cfdb_bytes_make(buf, n + 1);
}

static void test_sorted_without_overlaps(void **state)
{
    (void)state;
    assert_true(sk_registry_count > 20);
    uint8_t buf[128];
    for (int i = 0; i < sk_registry_count; i++) {
        const sk_impl *m = &sk_registry[i];
        cfdb_bytes b = cfdb_bytes_str(m->begin), e = row_end(m, buf, sizeof buf);
        assert_true(b.len >= 2 && b.ptr[0] == 0xff && b.ptr[1] == 0xff);
        assert_true(cfdb_bytes_cmp(b, e) < 0);
        assert_true(cfdb_bytes_cmp(e, CFDB_BYTES_LIT("\xff\xff\xff")) <= 0);
        assert_non_null(m->read);
        if (i > 0) {
            uint8_t pbuf[128];
            cfdb_bytes pe = row_end(&sk_registry[i - 1], pbuf, sizeof pbuf);
            if (cfdb_bytes_cmp(pe, b) > 0)
                fail_msg("row %d (%s) begins before row %d ends", i, m->begin + 2, i - 1);
        }
    }
}

static void test_write_lookups(void **state)
{
    (void)state;
    cfdb_special_set_api_version(710); /* every row registered */
    uint8_t buf[128];
    for (int i = 0; i < sk_registry_count; i++) {
        const sk_impl *m = &sk_registry[i];
        cfdb_bytes b = cfdb_bytes_str(m->begin), e = row_end(m, buf, sizeof buf);
        const sk_impl *want = (m->flags & SK_WRITABLE) ? m : NULL;
        assert_ptr_equal(sk_find_write_impl(b), want);
        assert_ptr_equal(sk_write_impl_before(e), want);
        /* a key before the row's begin is not in it */
        uint8_t before[128];
        memcpy(before, b.ptr, b.len);
        before[b.len - 1]--;
        const sk_impl *f = sk_find_write_impl(cfdb_bytes_make(before, b.len));
        assert_true(f != m);
    }
    assert_null(sk_find_write_impl(CFDB_BYTES_LIT("\xff\xff/management/no_such_key")));
    assert_null(sk_find_write_impl(CFDB_BYTES_LIT("\xff\xff/zzz")));
    assert_null(sk_find_write_impl(CFDB_BYTES_LIT("\xff\xff")));
    const sk_impl *t = sk_find_write_impl(CFDB_BYTES_LIT("\xff\xff/management/tenant/map/x"));
    assert_non_null(t);
    assert_string_equal(t->begin, "\xff\xff/management/tenant/");
}

static void test_module_slices(void **state)
{
    (void)state;
    int n;
    const sk_impl *m = sk_registry_slice(CFDB_BYTES_LIT("\xff\xff/management/"), CFDB_BYTES_LIT("\xff\xff/management0"), &n);
    assert_int_equal(n, 15);
    for (int i = 0; i < n; i++)
        assert_memory_equal(m[i].begin, "\xff\xff/management/", 14);
    m = sk_registry_slice(CFDB_BYTES_LIT("\xff\xff/worker_interfaces/"), CFDB_BYTES_LIT("\xff\xff/worker_interfaces0"),
                          &n);
    assert_int_equal(n, 1);
    assert_string_equal(m->begin, "\xff\xff/worker_interfaces/");
    m = sk_registry_slice(CFDB_BYTES_LIT("\xff\xff/metrics/"), CFDB_BYTES_LIT("\xff\xff/metrics0"), &n);
    assert_int_equal(n, 2);
    sk_registry_slice(CFDB_BYTES_LIT("\xff\xff/status/json"), CFDB_BYTES_LIT("\xff\xff/status/json\x00"), &n);
    assert_int_equal(n, 0);
}

static void test_profiling_below_api_720_only(void **state)
{
    (void)state;
    const sk_impl *p = NULL;
    for (int i = 0; i < sk_registry_count; i++)
        if (sk_registry[i].flags & SK_BEFORE_API_720)
            p = &sk_registry[i];
    assert_non_null(p);
    assert_string_equal(p->begin, "\xff\xff/management/profiling/");
    cfdb_special_set_api_version(710);
    assert_true(sk_impl_registered(p));
    assert_ptr_equal(sk_find_write_impl(CFDB_BYTES_LIT("\xff\xff/management/profiling/x")), p);
    cfdb_special_set_api_version(730);
    assert_false(sk_impl_registered(p));
    assert_null(sk_find_write_impl(CFDB_BYTES_LIT("\xff\xff/management/profiling/x")));
    assert_true(sk_impl_registered(&sk_registry[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorted_without_overlaps),
        cmocka_unit_test(test_write_lookups),
        cmocka_unit_test(test_module_slices),
        cmocka_unit_test(test_profiling_below_api_720_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
