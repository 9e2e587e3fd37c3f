/* MVCC store: visibility across versions, clears, atomic ops, range limits,
 * key selectors at shard edges, forgetting, and scale. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error_codes.h"
#include "mvcc_store.h"

#define S(s) cfdb_bytes_str(s)

static cfdb_mutation set_m(const char *k, const char *v)
{
    return (cfdb_mutation){ CFDB_MUT_SET_VALUE, S(k), S(v) };
}

static cfdb_mutation clear_m(const char *b, const char *e)
{
    return (cfdb_mutation){ CFDB_MUT_CLEAR_RANGE, S(b), S(e) };
}

static void apply1(cfdb_mvcc_store *s, int64_t v, cfdb_mutation m)
{
    assert_int_equal(cfdb_mvcc_apply(s, v, &m, 1), 0);
}

/* The value as a C string, "<absent>" when absent. */
static const char *get_str(cfdb_mvcc_store *s, int64_t v, const char *k)
{
    static char buf[256];
    cfdb_bytes val;
    bool present;
    int rc = cfdb_mvcc_get(s, v, S(k), &val, &present);
    if (rc) {
        snprintf(buf, sizeof buf, "<error %d>", rc);
        return buf;
    }
    if (!present)
        return "<absent>";
    snprintf(buf, sizeof buf, "%.*s", (int)val.len, (const char *)val.ptr);
    return buf;
}

static void test_visibility_across_versions(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    apply1(s, 10, set_m("a", "1"));
    apply1(s, 20, set_m("a", "2"));
    apply1(s, 30, clear_m("a", "b"));
    apply1(s, 40, set_m("a", "3"));
    assert_string_equal(get_str(s, 0, "a"), "<absent>");
    assert_string_equal(get_str(s, 9, "a"), "<absent>");
    assert_string_equal(get_str(s, 10, "a"), "1");
    assert_string_equal(get_str(s, 19, "a"), "1");
    assert_string_equal(get_str(s, 20, "a"), "2");
    assert_string_equal(get_str(s, 29, "a"), "2");
    assert_string_equal(get_str(s, 30, "a"), "<absent>");
    assert_string_equal(get_str(s, 39, "a"), "<absent>");
    assert_string_equal(get_str(s, 40, "a"), "3");
    assert_string_equal(get_str(s, 40, "b"), "<absent>");
    cfdb_bytes v;
    bool p;
    assert_int_equal(cfdb_mvcc_get(s, 41, S("a"), &v, &p), CFDB_ERR_FUTURE_VERSION);
    assert_int_equal(cfdb_mvcc_latest_version(s), 40);
    /* An empty batch still advances the version. */
    assert_int_equal(cfdb_mvcc_apply(s, 50, NULL, 0), 0);
    assert_string_equal(get_str(s, 50, "a"), "3");
    cfdb_mvcc_destroy(s);
}

static void test_clears_and_same_version(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    cfdb_mutation init[] = { set_m("a", "1"), set_m("b", "2"), set_m("c", "3"), set_m("d", "4"),
                             set_m("", "empty-key") };
    assert_int_equal(cfdb_mvcc_apply(s, 5, init, 5), 0);
    apply1(s, 6, clear_m("b", "d"));
    assert_string_equal(get_str(s, 6, "a"), "1");
    assert_string_equal(get_str(s, 6, "b"), "<absent>");
    assert_string_equal(get_str(s, 6, "c"), "<absent>");
    assert_string_equal(get_str(s, 6, "d"), "4");
    assert_string_equal(get_str(s, 6, ""), "empty-key");
    assert_string_equal(get_str(s, 5, "c"), "3");
    /* Inverted and empty clears do nothing. */
    apply1(s, 7, clear_m("d", "a"));
    apply1(s, 7, clear_m("d", "d"));
    assert_string_equal(get_str(s, 7, "d"), "4");
    /* Within one version, order matters: clear then set, set then clear. */
    cfdb_mutation m1[] = { clear_m("", "\xff"), set_m("x", "new") };
    assert_int_equal(cfdb_mvcc_apply(s, 8, m1, 2), 0);
    assert_string_equal(get_str(s, 8, "x"), "new");
    assert_string_equal(get_str(s, 8, "a"), "<absent>");
    assert_string_equal(get_str(s, 8, ""), "<absent>");
    cfdb_mutation m2[] = { set_m("y", "tmp"), clear_m("y", "y\x01") };
    assert_int_equal(cfdb_mvcc_apply(s, 9, m2, 2), 0);
    assert_string_equal(get_str(s, 9, "y"), "<absent>");
    /* Several calls at the same version accumulate; the last write wins. */
    apply1(s, 10, set_m("z", "first"));
    apply1(s, 10, set_m("z", "second"));
    assert_string_equal(get_str(s, 10, "z"), "second");
    assert_string_equal(get_str(s, 9, "z"), "<absent>");
    /* Versions may not go backwards; bad types are refused before anything applies. */
    cfdb_mutation bad[] = { set_m("q", "1"),
                            { CFDB_MUT_SET_VERSIONSTAMPED_KEY, S("q\0\0\0\0"), S("v") } };
    assert_int_equal(cfdb_mvcc_apply(s, 9, bad, 1), CFDB_ERR_CLIENT_INVALID_OPERATION);
    assert_int_equal(cfdb_mvcc_apply(s, 11, bad, 2), CFDB_ERR_INVALID_MUTATION_TYPE);
    assert_int_equal(cfdb_mvcc_latest_version(s), 10);
    assert_string_equal(get_str(s, 10, "q"), "<absent>");
    cfdb_mvcc_destroy(s);
}

static void test_atomic_ops_in_store(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    cfdb_mutation adds[] = {
        { CFDB_MUT_ADD_VALUE, S("n"), cfdb_bytes_make("\x01\x00", 2) },
        { CFDB_MUT_ADD_VALUE, S("n"), cfdb_bytes_make("\xff\x00", 2) },
    };
    assert_int_equal(cfdb_mvcc_apply(s, 10, adds, 2), 0);
    cfdb_bytes v;
    bool p;
    assert_int_equal(cfdb_mvcc_get(s, 10, S("n"), &v, &p), 0);
    assert_true(p);
    assert_int_equal(v.len, 2);
    assert_memory_equal(v.ptr, "\x00\x01", 2);
    apply1(s, 20, adds[0]);
    assert_int_equal(cfdb_mvcc_get(s, 20, S("n"), &v, &p), 0);
    assert_memory_equal(v.ptr, "\x01\x01", 2);
    assert_int_equal(cfdb_mvcc_get(s, 10, S("n"), &v, &p), 0);
    assert_memory_equal(v.ptr, "\x00\x01", 2);

    /* After a clear in the same batch the op sees an absent value. */
    cfdb_mutation m[] = { clear_m("n", "o"), { CFDB_MUT_AND, S("n"), S("\xff") } };
    assert_int_equal(cfdb_mvcc_apply(s, 30, m, 2), 0);
    assert_int_equal(cfdb_mvcc_get(s, 30, S("n"), &v, &p), 0);
    assert_true(p);
    assert_memory_equal(v.ptr, "\x00", 1);

    /* CompareAndClear: matching clears, mismatching leaves the key, absent stays absent. */
    apply1(s, 40, set_m("c", "x"));
    apply1(s, 41, (cfdb_mutation){ CFDB_MUT_COMPARE_AND_CLEAR, S("c"), S("y") });
    assert_string_equal(get_str(s, 41, "c"), "x");
    apply1(s, 42, (cfdb_mutation){ CFDB_MUT_COMPARE_AND_CLEAR, S("c"), S("x") });
    assert_string_equal(get_str(s, 42, "c"), "<absent>");
    assert_string_equal(get_str(s, 41, "c"), "x");
    apply1(s, 43, (cfdb_mutation){ CFDB_MUT_COMPARE_AND_CLEAR, S("none"), S("") });
    assert_string_equal(get_str(s, 43, "none"), "<absent>");
    /* Append onto a value written earlier in the same call. */
    cfdb_mutation ap[] = { set_m("s", "ab"), { CFDB_MUT_APPEND_IF_FITS, S("s"), S("cd") },
                           { CFDB_MUT_APPEND_IF_FITS, S("s"), S("ef") } };
    assert_int_equal(cfdb_mvcc_apply(s, 50, ap, 3), 0);
    assert_string_equal(get_str(s, 50, "s"), "abcdef");
    cfdb_mvcc_destroy(s);
}

/* k00..k(n-1), value "v" (or a given size). */
static cfdb_mvcc_store *numbered_store(int n, size_t vlen, int64_t version)
{
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    char *val = malloc(vlen + 1);
    memset(val, 'v', vlen);
    val[vlen] = 0;
    for (int i = 0; i < n; i++) {
        char k[16];
        snprintf(k, sizeof k, n > 100 ? "k%06d" : "k%02d", i);
        cfdb_mutation m = { CFDB_MUT_SET_VALUE, S(k), cfdb_bytes_make(val, vlen) };
        assert_int_equal(cfdb_mvcc_apply(s, version, &m, 1), 0);
    }
    free(val);
    return s;
}

static void expect_rows(const cfdb_mvcc_range_result *r, const char *const *keys, size_t n, bool more)
{
    if (r->count != n || r->more != more) {
        fprintf(stderr, "got %zu rows more=%d, want %zu more=%d\n", r->count, r->more, n, more);
        for (size_t i = 0; i < r->count; i++)
            fprintf(stderr, "  %.*s\n", (int)r->rows[i].key.len, (const char *)r->rows[i].key.ptr);
    }
    assert_int_equal(r->count, n);
    assert_int_equal(r->more, more);
    for (size_t i = 0; i < n; i++)
        assert_true(cfdb_bytes_eq(r->rows[i].key, S(keys[i])));
}

static void test_read_range_limits(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = numbered_store(10, 1, 10);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_mvcc_range_result r;
    cfdb_bytes all_b = S(""), all_e = S("\xff");

    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 3, 100000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k00", "k01", "k02" }, 3, true);
    /* Hitting the row limit exactly reports more even when nothing is left. */
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 10, 100000, &a, &r), 0);
    assert_int_equal(r.count, 10);
    assert_true(r.more);
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 11, 100000, &a, &r), 0);
    assert_int_equal(r.count, 10);
    assert_false(r.more);
    /* Reverse. */
    assert_int_equal(cfdb_mvcc_read_range(s, 10, S("k03"), S("k07"), -3, 100000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k06", "k05", "k04" }, 3, true);
    assert_int_equal(cfdb_mvcc_read_range(s, 10, S("k03"), S("k07"), -10, 100000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k06", "k05", "k04", "k03" }, 4, false);
    /* Bytes: each row costs 32 + 3 + 1 = 36. */
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 100, 36, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k00" }, 1, true);
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 100, 37, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k00", "k01" }, 2, true);
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 100, 1, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k00" }, 1, true);
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, -100, 72, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k09", "k08" }, 2, true);
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 100, 360, &a, &r), 0);
    assert_int_equal(r.count, 10);
    assert_true(r.more); /* budget reached exactly 0 */
    assert_int_equal(cfdb_mvcc_read_range(s, 10, all_b, all_e, 100, 361, &a, &r), 0);
    assert_int_equal(r.count, 10);
    assert_false(r.more);
    /* Empty and inverted ranges. */
    assert_int_equal(cfdb_mvcc_read_range(s, 10, S("k05"), S("k05"), 10, 1000, &a, &r), 0);
    expect_rows(&r, NULL, 0, false);
    assert_int_equal(cfdb_mvcc_read_range(s, 10, S("k07"), S("k03"), -10, 1000, &a, &r), 0);
    expect_rows(&r, NULL, 0, false);
    /* Hidden keys (cleared) are skipped and cost nothing. */
    apply1(s, 20, clear_m("k01", "k08"));
    assert_int_equal(cfdb_mvcc_read_range(s, 20, all_b, all_e, 100, 73, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k00", "k08", "k09" }, 3, true);
    assert_int_equal(cfdb_mvcc_read_range(s, 20, all_b, all_e, -2, 1000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k09", "k08" }, 2, true);
    /* Old version still sees them. */
    assert_int_equal(cfdb_mvcc_read_range(s, 10, S("k02"), S("k04"), 100, 1000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k02", "k03" }, 2, false);
    assert_int_equal(cfdb_mvcc_read_range(s, 21, all_b, all_e, 1, 1, &a, &r), CFDB_ERR_FUTURE_VERSION);
    cfdb_arena_free(&a);
    cfdb_mvcc_destroy(s);
}

static cfdb_mvcc_selector sel(const char *k, bool or_equal, int32_t offset)
{
    return (cfdb_mvcc_selector){ S(k), or_equal, offset };
}
#define FGE(k) sel(k, false, 1)
#define FGT(k) sel(k, true, 1)
#define LLT(k) sel(k, false, 0)
#define LLE(k) sel(k, true, 0)

static void expect_key(cfdb_mvcc_store *s, const char *sb, const char *se, cfdb_mvcc_selector in,
                       const char *want_key, bool want_or_equal, int32_t want_offset)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_mvcc_selector out;
    assert_int_equal(cfdb_mvcc_get_key(s, cfdb_mvcc_latest_version(s), S(sb), S(se), in, &a, &out), 0);
    if (!cfdb_bytes_eq(out.key, S(want_key)) || out.or_equal != want_or_equal ||
        out.offset != want_offset)
        fprintf(stderr, "selector (%.*s,%d,%d) -> (%.*s,%d,%d), want (%s,%d,%d)\n",
                (int)in.key.len, (const char *)in.key.ptr, in.or_equal, in.offset,
                (int)out.key.len, (const char *)out.key.ptr, out.or_equal, out.offset, want_key,
                want_or_equal, want_offset);
    assert_true(cfdb_bytes_eq(out.key, S(want_key)));
    assert_int_equal(out.or_equal, want_or_equal);
    assert_int_equal(out.offset, want_offset);
    cfdb_arena_free(&a);
}

static void test_selectors_single_shard(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = numbered_store(10, 1, 10);
    const char *b = "", *e = "\xff";
    expect_key(s, b, e, FGE("k03"), "k03", true, 0);
    expect_key(s, b, e, FGT("k03"), "k04", true, 0);
    expect_key(s, b, e, LLT("k03"), "k02", true, 0);
    expect_key(s, b, e, LLE("k03"), "k03", true, 0);
    expect_key(s, b, e, FGE("k035"), "k04", true, 0);
    expect_key(s, b, e, LLE("k035"), "k03", true, 0);
    expect_key(s, b, e, sel("k03", false, 3), "k05", true, 0);
    expect_key(s, b, e, sel("k03", true, -1), "k02", true, 0);
    expect_key(s, b, e, sel("k03", false, -2), "k00", true, 0);
    /* Off the ends of the shard (here the whole user keyspace). */
    expect_key(s, b, e, LLT("k00"), "", false, 0);
    expect_key(s, b, e, sel("k01", false, -5), "", false, -4);
    expect_key(s, b, e, FGT("k09"), "\xff", false, 1);
    expect_key(s, b, e, sel("k08", false, 5), "\xff", false, 3);
    cfdb_mvcc_destroy(s);
}

static void test_selectors_shard_edges(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = numbered_store(10, 1, 10);
    const char *b = "k03", *e = "k07";
    /* Resolved inside. */
    expect_key(s, b, e, sel("k04", false, 2), "k05", true, 0);
    expect_key(s, b, e, LLT("k07"), "k06", true, 0); /* backward selector may sit on the end */
    expect_key(s, b, e, FGE("k03"), "k03", true, 0);
    /* Forward past the end: FGE(end) + remaining - 1. FGE(k05)+5 is k10 (absent). */
    expect_key(s, b, e, sel("k05", false, 6), "k07", false, 4);
    expect_key(s, b, e, FGT("k06"), "k07", false, 1);
    /* Backward past the begin: FGE(begin) + remaining. LLT(k04)-3 is k00. */
    expect_key(s, b, e, sel("k04", false, -3), "k03", false, -2);
    expect_key(s, b, e, LLT("k03"), "k03", false, 0);
    expect_key(s, b, e, sel("k03", true, -1), "k03", false, 0);
    /* Not in the shard at all. */
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_mvcc_selector out;
    assert_int_equal(cfdb_mvcc_get_key(s, 10, S(b), S(e), FGE("k07"), &a, &out),
                     CFDB_ERR_WRONG_SHARD_SERVER);
    assert_int_equal(cfdb_mvcc_get_key(s, 10, S(b), S(e), LLE("k07"), &a, &out),
                     CFDB_ERR_WRONG_SHARD_SERVER);
    assert_int_equal(cfdb_mvcc_get_key(s, 10, S(b), S(e), FGE("k02"), &a, &out),
                     CFDB_ERR_WRONG_SHARD_SERVER);
    /* Version checks apply. */
    assert_int_equal(cfdb_mvcc_get_key(s, 11, S(b), S(e), FGE("k04"), &a, &out),
                     CFDB_ERR_FUTURE_VERSION);
    cfdb_arena_free(&a);
    cfdb_mvcc_destroy(s);
}

/* A large offset over big rows stops at the 500,000-byte budget and returns a
 * partial selector; following it lands where one step would have. */
static void test_selector_byte_budget(void **state)
{
    (void)state;
    const int n = 20000;
    cfdb_mvcc_store *s = numbered_store(n, 100, 10);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_mvcc_selector cur = sel("", false, 1 + 12345), out;
    int rounds = 0;
    for (;;) {
        assert_int_equal(cfdb_mvcc_get_key(s, 10, S(""), S("\xff"), cur, &a, &out), 0);
        rounds++;
        if (out.or_equal && out.offset == 0)
            break;
        cur = out;
        assert_true(rounds < 20);
    }
    assert_true(rounds > 1); /* 12346 rows of 139 bytes do not fit in one budget */
    assert_true(cfdb_bytes_eq(out.key, S("k012345")));
    /* Backward too. */
    cur = sel("k019999", true, -15000);
    rounds = 0;
    for (;;) {
        assert_int_equal(cfdb_mvcc_get_key(s, 10, S(""), S("\xff"), cur, &a, &out), 0);
        rounds++;
        if (out.or_equal && out.offset == 0)
            break;
        cur = out;
        assert_true(rounds < 20);
    }
    assert_true(rounds > 1);
    assert_true(cfdb_bytes_eq(out.key, S("k004999")));
    cfdb_arena_free(&a);
    cfdb_mvcc_destroy(s);
}

static void test_get_range_selectors(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = numbered_store(10, 1, 10);
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_mvcc_range_result r;
    cfdb_bytes sb = S("k03"), se = S("k07");
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGE("k03"), FGE("k05"), 100, 10000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k03", "k04" }, 2, false);
    /* End clamped to the shard end by the client. */
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGT("k03"), FGE("k07"), 100, 10000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k04", "k05", "k06" }, 3, false);
    /* End one step past the shard is fine. */
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGE("k05"), FGT("k06"), 100, 10000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k05", "k06" }, 2, false);
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGE("k03"), LLE("k05"), -100, 10000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k04", "k03" }, 2, false);
    /* Begin at/after end: empty, more false. */
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGE("k05"), FGE("k04"), 100, 10000, &a, &r), 0);
    expect_rows(&r, NULL, 0, false);
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGT("k06"), FGE("k07"), 100, 10000, &a, &r), 0);
    expect_rows(&r, NULL, 0, false);
    /* Needing more than the shard. */
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGE("k03"), FGE("k08"), 100, 10000, &a, &r),
                     CFDB_ERR_WRONG_SHARD_SERVER);
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGE("k03"), sel("k06", false, 3), 100, 10000, &a, &r),
                     CFDB_ERR_WRONG_SHARD_SERVER);
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, LLT("k03"), FGE("k05"), 100, 10000, &a, &r),
                     CFDB_ERR_WRONG_SHARD_SERVER);
    assert_int_equal(cfdb_mvcc_get_range(s, 10, sb, se, FGE("k02"), FGE("k05"), 100, 10000, &a, &r),
                     CFDB_ERR_WRONG_SHARD_SERVER);
    /* Limits pass through. */
    assert_int_equal(cfdb_mvcc_get_range(s, 10, S(""), S("\xff"), FGE(""), FGE("\xff"), -2, 10000, &a, &r), 0);
    expect_rows(&r, (const char *[]){ "k09", "k08" }, 2, true);
    cfdb_arena_free(&a);
    cfdb_mvcc_destroy(s);
}

static void test_iterators(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = numbered_store(5, 1, 10);
    apply1(s, 20, clear_m("k01", "k02"));
    cfdb_mvcc_iter it;
    cfdb_mvcc_iter_seek_ge(&it, s, 20, S("k01"));
    assert_true(cfdb_mvcc_iter_valid(&it));
    assert_true(cfdb_bytes_eq(it.key, S("k02")));
    cfdb_mvcc_iter_prev(&it);
    assert_true(cfdb_bytes_eq(it.key, S("k00")));
    cfdb_mvcc_iter_prev(&it);
    assert_false(cfdb_mvcc_iter_valid(&it));
    cfdb_mvcc_iter_seek_ge(&it, s, 10, S("k01"));
    assert_true(cfdb_bytes_eq(it.key, S("k01")));
    cfdb_mvcc_iter_seek_gt(&it, s, 20, S("k02"));
    assert_true(cfdb_bytes_eq(it.key, S("k03")));
    cfdb_mvcc_iter_seek_le(&it, s, 20, S("k02"));
    assert_true(cfdb_bytes_eq(it.key, S("k02")));
    cfdb_mvcc_iter_seek_lt(&it, s, 20, S("k02"));
    assert_true(cfdb_bytes_eq(it.key, S("k00")));
    cfdb_mvcc_iter_seek_lt(&it, s, 20, S("\xff"));
    assert_true(cfdb_bytes_eq(it.key, S("k04")));
    cfdb_mvcc_iter_next(&it);
    assert_false(cfdb_mvcc_iter_valid(&it));
    cfdb_mvcc_iter_seek_lt(&it, s, 20, S("k00"));
    assert_false(cfdb_mvcc_iter_valid(&it));
    cfdb_mvcc_destroy(s);
}

static void test_forget_window(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    apply1(s, 10, set_m("a", "1"));
    apply1(s, 10, set_m("b", "b"));
    apply1(s, 20, set_m("a", "2"));
    apply1(s, 30, (cfdb_mutation){ CFDB_MUT_CLEAR_RANGE, S("a"), cfdb_bytes_make("a\0", 2) });
    apply1(s, 40, set_m("c", "3"));
    cfdb_mvcc_stats st;
    cfdb_mvcc_get_stats(s, &st);
    assert_int_equal(st.keys, 3);
    assert_int_equal(st.entries, 5);

    cfdb_mvcc_forget_before(s, 25);
    assert_int_equal(cfdb_mvcc_oldest_version(s), 25);
    cfdb_bytes v;
    bool p;
    assert_int_equal(cfdb_mvcc_get(s, 24, S("a"), &v, &p), CFDB_ERR_TRANSACTION_TOO_OLD);
    assert_string_equal(get_str(s, 25, "a"), "2");
    assert_string_equal(get_str(s, 30, "a"), "<absent>");
    assert_string_equal(get_str(s, 25, "b"), "b");
    cfdb_mvcc_get_stats(s, &st);
    assert_int_equal(st.entries, 4); /* a@20, a cleared@30, b@10, c@40 */

    cfdb_mvcc_forget_before(s, 30);
    cfdb_mvcc_get_stats(s, &st);
    assert_int_equal(st.keys, 2); /* a is gone entirely */
    assert_int_equal(st.entries, 2);
    assert_string_equal(get_str(s, 30, "a"), "<absent>");
    assert_string_equal(get_str(s, 40, "b"), "b");
    /* Never backwards, never past latest. */
    cfdb_mvcc_forget_before(s, 5);
    assert_int_equal(cfdb_mvcc_oldest_version(s), 30);
    cfdb_mvcc_forget_before(s, 1000);
    assert_int_equal(cfdb_mvcc_oldest_version(s), 40);
    assert_string_equal(get_str(s, 40, "c"), "3");
    cfdb_mvcc_get_stats(s, &st);
    assert_int_equal(st.bytes, 2 + 2); /* keys b, c plus one byte each */
    cfdb_mvcc_destroy(s);
}

/* A floor keeps one version readable across applies and forgets (a snapshot scanning at
 * that version seeks again after each step); removing it lets forgetting catch up. */
static void test_forget_floor(void **state)
{
    (void)state;
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    apply1(s, 10, set_m("a", "1"));
    apply1(s, 10, set_m("b", "1"));
    cfdb_mvcc_set_floor(s, 10);
    apply1(s, 20, set_m("a", "2"));
    apply1(s, 30, clear_m("b", "c"));
    apply1(s, 40, set_m("c", "3"));
    cfdb_mvcc_forget_before(s, 35);
    assert_int_equal(cfdb_mvcc_oldest_version(s), 10);
    assert_string_equal(get_str(s, 10, "a"), "1");
    assert_string_equal(get_str(s, 10, "b"), "1");
    assert_string_equal(get_str(s, 10, "c"), "<absent>");
    /* an iterator at the floor, resumed after each key as a snapshot step does */
    cfdb_mvcc_iter it;
    cfdb_mvcc_iter_seek_ge(&it, s, 10, S(""));
    assert_true(cfdb_mvcc_iter_valid(&it));
    assert_true(cfdb_bytes_eq(it.key, S("a")));
    apply1(s, 50, clear_m("a", "z"));
    cfdb_mvcc_forget_before(s, 50);
    cfdb_mvcc_iter_seek_gt(&it, s, 10, S("a"));
    assert_true(cfdb_mvcc_iter_valid(&it));
    assert_true(cfdb_bytes_eq(it.key, S("b")));
    assert_true(cfdb_bytes_eq(it.value, S("1")));
    cfdb_mvcc_iter_next(&it);
    assert_false(cfdb_mvcc_iter_valid(&it));
    /* no floor: forgetting catches up and frees what only version 10 could see */
    cfdb_mvcc_set_floor(s, 0);
    cfdb_mvcc_forget_before(s, 50);
    assert_int_equal(cfdb_mvcc_oldest_version(s), 50);
    cfdb_bytes v;
    bool p;
    assert_int_equal(cfdb_mvcc_get(s, 10, S("a"), &v, &p), CFDB_ERR_TRANSACTION_TOO_OLD);
    cfdb_mvcc_stats st;
    cfdb_mvcc_get_stats(s, &st);
    assert_int_equal(st.keys, 0);
    cfdb_mvcc_destroy(s);
}

/* A million keys: loading, reading, clearing and reclaiming stay fast. */
static void test_million_keys(void **state)
{
    (void)state;
    const int n = 1000000, batch = 10000;
    cfdb_mvcc_store *s = cfdb_mvcc_create();
    cfdb_mutation *ms = malloc(sizeof *ms * batch);
    char *keys = malloc((size_t)batch * 12);
    int64_t v = 0;
    uint64_t x = 12345;
    for (int done = 0; done < n; done += batch) {
        for (int i = 0; i < batch; i++) {
            /* Scattered order exercises the skip list rather than appends. */
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int id = (int)(((uint64_t)(done + i) * 7919u) % (uint64_t)n);
            char *k = keys + (size_t)i * 12;
            snprintf(k, 12, "%08d", id);
            ms[i] = (cfdb_mutation){ CFDB_MUT_SET_VALUE, cfdb_bytes_make(k, 8), cfdb_bytes_make(k, 4) };
        }
        v += 1000;
        assert_int_equal(cfdb_mvcc_apply(s, v, ms, (size_t)batch), 0);
    }
    cfdb_mvcc_stats st;
    cfdb_mvcc_get_stats(s, &st);
    assert_int_equal(st.keys, (size_t)n);
    for (int i = 0; i < 100000; i++) {
        char k[12];
        snprintf(k, sizeof k, "%08d", (int)(((int64_t)i * 31337) % n));
        cfdb_bytes val;
        bool p;
        assert_int_equal(cfdb_mvcc_get(s, v, cfdb_bytes_make(k, 8), &val, &p), 0);
        assert_true(p);
        assert_memory_equal(val.ptr, k, 4);
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_mvcc_range_result r;
    assert_int_equal(cfdb_mvcc_read_range(s, v, S("00500000"), S("\xff"), -1000, 80000, &a, &r), 0);
    assert_true(r.count > 0 && r.more);
    assert_true(cfdb_bytes_eq(r.rows[0].key, S("00999999")));
    cfdb_arena_free(&a);

    v += 1000;
    cfdb_mutation clr = clear_m("", "\xff");
    assert_int_equal(cfdb_mvcc_apply(s, v, &clr, 1), 0);
    cfdb_mvcc_forget_before(s, v);
    cfdb_mvcc_get_stats(s, &st);
    assert_int_equal(st.keys, 0);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, 0);
    free(ms);
    free(keys);
    cfdb_mvcc_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_visibility_across_versions),
        cmocka_unit_test(test_clears_and_same_version),
        cmocka_unit_test(test_atomic_ops_in_store),
        cmocka_unit_test(test_read_range_limits),
        cmocka_unit_test(test_selectors_single_shard),
        cmocka_unit_test(test_selectors_shard_edges),
        cmocka_unit_test(test_selector_byte_budget),
        cmocka_unit_test(test_get_range_selectors),
        cmocka_unit_test(test_iterators),
        cmocka_unit_test(test_forget_window),
        cmocka_unit_test(test_forget_floor),
        cmocka_unit_test(test_million_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
