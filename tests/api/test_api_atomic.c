/* Atomic operations through fdb_c.h, checked against FoundationDB's definitions (fdbclient/
 * Atomic.h semantics, API 730: BIT_AND = AndV2 and MIN = MinV2, i.e. an absent key takes the
 * operand), both through read-your-writes before commit and after commit; versionstamps;
 * and a contended atomic counter. */
#include "api_helpers.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int group_setup(void **state)
{
    (void)state;
    const char *args[] = { "--storage-servers", "2", "--shards", "t/m", NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* ---------------- a reference model of the atomic ops ---------------- */

typedef struct val {
    int present;
    int len;
    uint8_t b[64];
} val;

static val absent(void)
{
    val v;
    memset(&v, 0, sizeof v);
    return v;
}

static val mk(const void *p, int n)
{
    val v = absent();
    v.present = 1;
    v.len = n;
    memcpy(v.b, p, (size_t)n);
    return v;
}

/* existing bytes (absent == empty) zero-extended/truncated to the operand's length */
static val fit(const val *e, const val *p)
{
    val r = mk(p->b, p->len);
    for (int i = 0; i < p->len; i++)
        r.b[i] = i < e->len ? e->b[i] : 0;
    return r;
}

static int cmp_bytes(const val *a, const val *b)
{
    int n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->b, b->b, (size_t)n);
    if (c)
        return c;
    return a->len - b->len;
}

/* compares e (fitted to p's length) with p as little-endian unsigned numbers */
static int cmp_le(const val *e, const val *p)
{
    val f = fit(e, p);
    for (int i = p->len - 1; i >= 0; i--) {
        if (f.b[i] != p->b[i])
            return f.b[i] < p->b[i] ? -1 : 1;
    }
    return 0;
}

static val ref_apply(int op, val e, val p)
{
    int elen = e.present ? e.len : 0;
    switch (op) {
    case FDB_MUTATION_TYPE_ADD: {
        if (!elen || !p.len)
            return p;
        val r = p;
        int carry = 0;
        for (int i = 0; i < p.len; i++) {
            int s = (i < elen ? e.b[i] : 0) + p.b[i] + carry;
            r.b[i] = (uint8_t)s;
            carry = s >> 8;
        }
        return r;
    }
    case FDB_MUTATION_TYPE_BIT_AND: {
        if (!e.present || !p.len)
            return p;
        val r = p;
        for (int i = 0; i < p.len; i++)
            r.b[i] = i < elen ? (uint8_t)(e.b[i] & p.b[i]) : 0;
        return r;
    }
    case FDB_MUTATION_TYPE_BIT_OR:
    case FDB_MUTATION_TYPE_BIT_XOR: {
        if (!elen || !p.len)
            return p;
        val r = p;
        for (int i = 0; i < p.len && i < elen; i++)
            r.b[i] = op == FDB_MUTATION_TYPE_BIT_OR ? (uint8_t)(e.b[i] | p.b[i]) : (uint8_t)(e.b[i] ^ p.b[i]);
        return r;
    }
    case FDB_MUTATION_TYPE_APPEND_IF_FITS: {
        if (!elen)
            return p;
        if (!p.len)
            return e;
        val r = e;
        memcpy(r.b + elen, p.b, (size_t)p.len);
        r.len = elen + p.len;
        return r;
    }
    case FDB_MUTATION_TYPE_MAX:
        if (!elen || !p.len)
            return p;
        return cmp_le(&e, &p) > 0 ? fit(&e, &p) : p;
    case FDB_MUTATION_TYPE_MIN:
        if (!e.present || !p.len)
            return p;
        return cmp_le(&e, &p) < 0 ? fit(&e, &p) : p;
    case FDB_MUTATION_TYPE_BYTE_MAX:
        if (!e.present)
            return p;
        return cmp_bytes(&e, &p) > 0 ? e : p;
    case FDB_MUTATION_TYPE_BYTE_MIN:
        if (!e.present)
            return p;
        return cmp_bytes(&e, &p) < 0 ? e : p;
    case FDB_MUTATION_TYPE_COMPARE_AND_CLEAR:
        if (!e.present || (e.len == p.len && !memcmp(e.b, p.b, (size_t)p.len)))
            return absent();
        return e;
    }
    fail_msg("unknown op %d", op);
    return absent();
}

static const char *op_name(int op)
{
    switch (op) {
    case FDB_MUTATION_TYPE_ADD: return "ADD";
    case FDB_MUTATION_TYPE_BIT_AND: return "BIT_AND";
    case FDB_MUTATION_TYPE_BIT_OR: return "BIT_OR";
    case FDB_MUTATION_TYPE_BIT_XOR: return "BIT_XOR";
    case FDB_MUTATION_TYPE_APPEND_IF_FITS: return "APPEND_IF_FITS";
    case FDB_MUTATION_TYPE_MAX: return "MAX";
    case FDB_MUTATION_TYPE_MIN: return "MIN";
    case FDB_MUTATION_TYPE_BYTE_MAX: return "BYTE_MAX";
    case FDB_MUTATION_TYPE_BYTE_MIN: return "BYTE_MIN";
    case FDB_MUTATION_TYPE_COMPARE_AND_CLEAR: return "COMPARE_AND_CLEAR";
    }
    return "?";
}

static void print_val(const char *what, const val *v)
{
    if (!v->present) {
        print_message("  %s: absent\n", what);
        return;
    }
    print_message("  %s: [%d]", what, v->len);
    for (int i = 0; i < v->len; i++)
        print_message(" %02x", v->b[i]);
    print_message("\n");
}

/* ---------------- sanity of the model on hand-checked values ---------------- */

static void test_model_sanity(void **state)
{
    (void)state;
    val r = ref_apply(FDB_MUTATION_TYPE_ADD, mk("\xff\x00", 2), mk("\x01\x00", 2));
    assert_memory_equal(r.b, "\x00\x01", 2);
    r = ref_apply(FDB_MUTATION_TYPE_ADD, mk("\xff\xff\xff", 3), mk("\x01\x00", 2)); /* truncated */
    assert_int_equal(r.len, 2);
    assert_memory_equal(r.b, "\x00\x00", 2);
    r = ref_apply(FDB_MUTATION_TYPE_BIT_AND, absent(), mk("\x0f", 1));
    assert_memory_equal(r.b, "\x0f", 1);
    r = ref_apply(FDB_MUTATION_TYPE_BIT_AND, mk("\xff", 1), mk("\x0f\x0f", 2));
    assert_memory_equal(r.b, "\x0f\x00", 2);
    r = ref_apply(FDB_MUTATION_TYPE_MAX, mk("\x00\x02", 2), mk("\xff\x01", 2)); /* 0x0200 > 0x01ff */
    assert_memory_equal(r.b, "\x00\x02", 2);
    r = ref_apply(FDB_MUTATION_TYPE_MIN, mk("\x00\x02", 2), mk("\xff\x01", 2));
    assert_memory_equal(r.b, "\xff\x01", 2);
    r = ref_apply(FDB_MUTATION_TYPE_BYTE_MAX, mk("\x00\x02", 2), mk("\xff\x01", 2));
    assert_memory_equal(r.b, "\xff\x01", 2);
    r = ref_apply(FDB_MUTATION_TYPE_BYTE_MIN, mk("ab", 2), mk("abc", 3));
    assert_int_equal(r.len, 2);
    r = ref_apply(FDB_MUTATION_TYPE_COMPARE_AND_CLEAR, mk("ab", 2), mk("ab", 2));
    assert_false(r.present);
}

/* ---------------- every op, absent and present keys ---------------- */

typedef struct bytes_case {
    int present;
    int len;
    const char *b;
} bytes_case;

static const bytes_case existing_cases[] = {
    { 0, 0, "" },                  /* absent */
    { 1, 0, "" },                  /* present, empty */
    { 1, 1, "\x05" },
    { 1, 2, "\xff\x00" },
    { 1, 4, "\x01\x02\x03\x04" },
    { 1, 4, "\xff\xff\xff\xff" },
    { 1, 8, "\x10\x00\x00\x00\x00\x00\x00\x80" },
    { 1, 3, "abc" },
};
static const bytes_case param_cases[] = {
    { 1, 0, "" },
    { 1, 1, "\x03" },
    { 1, 2, "\x01\x00" },
    { 1, 4, "\x01\x02\x03\x04" },
    { 1, 4, "\x02\x00\x00\x01" },
    { 1, 8, "\xff\xff\xff\xff\xff\xff\xff\xff" },
    { 1, 3, "abd" },
};
#define NEX ((int)(sizeof existing_cases / sizeof *existing_cases))
#define NPA ((int)(sizeof param_cases / sizeof *param_cases))

static void case_key(char *out, size_t cap, const char *p, int op, int ei, int pi)
{
    snprintf(out, cap, "%s%02d/%d/%d", p, op, ei, pi);
}

static int check_read(FDBTransaction *tr, const char *key, const val *want, const char *ctx)
{
    int present = -1, len = -1;
    uint8_t buf[128];
    fdb_error_t e = api_get(tr, key, L(key), 0, &present, buf, sizeof buf, &len);
    if (e) {
        print_message("%s: get %s: error %d\n", ctx, key, e);
        return 1;
    }
    val got = present ? mk(buf, len) : absent();
    if (got.present != want->present ||
        (got.present && (got.len != want->len || memcmp(got.b, want->b, (size_t)got.len)))) {
        print_message("%s mismatch at %s\n", ctx, key);
        print_val("want", want);
        print_val("got ", &got);
        return 1;
    }
    return 0;
}

/* For ops in [op_first, op_last): applies op(existing, param) to every pair; checks the RYW read
 * before commit and the committed value. Returns the number of mismatches. */
static int run_op_matrix(int op, const char *p, int ryw)
{
    char key[192];
    FDBTransaction *tr = api_tr();
    /* initial values */
    for (;;) {
        for (int ei = 0; ei < NEX; ei++)
            for (int pi = 0; pi < NPA; pi++) {
                case_key(key, sizeof key, p, op, ei, pi);
                if (existing_cases[ei].present)
                    fdb_transaction_set(tr, S(key), L(key), S(existing_cases[ei].b), existing_cases[ei].len);
                else
                    fdb_transaction_clear(tr, S(key), L(key));
            }
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_reset(tr);
    int bad = 0;
    char ctx[64];
    snprintf(ctx, sizeof ctx, "%s %s", op_name(op), ryw ? "ryw" : "committed");
    for (int ei = 0; ei < NEX; ei++)
        for (int pi = 0; pi < NPA; pi++) {
            case_key(key, sizeof key, p, op, ei, pi);
            fdb_transaction_atomic_op(tr, S(key), L(key), S(param_cases[pi].b), param_cases[pi].len,
                                      (FDBMutationType)op);
        }
    if (ryw) {
        for (int ei = 0; ei < NEX; ei++)
            for (int pi = 0; pi < NPA; pi++) {
                case_key(key, sizeof key, p, op, ei, pi);
                val e = existing_cases[ei].present ? mk(existing_cases[ei].b, existing_cases[ei].len) : absent();
                val want = ref_apply(op, e, mk(param_cases[pi].b, param_cases[pi].len));
                bad += check_read(tr, key, &want, ctx);
            }
        fdb_transaction_destroy(tr);
        return bad;
    }
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    for (int ei = 0; ei < NEX; ei++)
        for (int pi = 0; pi < NPA; pi++) {
            case_key(key, sizeof key, p, op, ei, pi);
            val e = existing_cases[ei].present ? mk(existing_cases[ei].b, existing_cases[ei].len) : absent();
            val want = ref_apply(op, e, mk(param_cases[pi].b, param_cases[pi].len));
            bad += check_read(tr, key, &want, ctx);
        }
    fdb_transaction_destroy(tr);
    return bad;
}

static void op_test(int op, int ryw)
{
    char p[128];
    api_prefix(p, sizeof p, ryw ? "atomic-ryw" : "atomic");
    assert_int_equal(run_op_matrix(op, p, ryw), 0);
}

#define OP_TESTS(NAME, OP)                                  \
    static void test_committed_##NAME(void **state)         \
    {                                                       \
        (void)state;                                        \
        op_test(OP, 0);                                     \
    }                                                       \
    static void test_ryw_##NAME(void **state)               \
    {                                                       \
        (void)state;                                        \
        op_test(OP, 1);                                     \
    }
OP_TESTS(add, FDB_MUTATION_TYPE_ADD)
OP_TESTS(bit_and, FDB_MUTATION_TYPE_BIT_AND)
OP_TESTS(bit_or, FDB_MUTATION_TYPE_BIT_OR)
OP_TESTS(bit_xor, FDB_MUTATION_TYPE_BIT_XOR)
OP_TESTS(append_if_fits, FDB_MUTATION_TYPE_APPEND_IF_FITS)
OP_TESTS(max, FDB_MUTATION_TYPE_MAX)
OP_TESTS(min, FDB_MUTATION_TYPE_MIN)
OP_TESTS(byte_max, FDB_MUTATION_TYPE_BYTE_MAX)
OP_TESTS(byte_min, FDB_MUTATION_TYPE_BYTE_MIN)
OP_TESTS(compare_and_clear, FDB_MUTATION_TYPE_COMPARE_AND_CLEAR)

/* several ops stacked on one key in one transaction, then read (RYW) and committed */
static void test_stacked_ops(void **state)
{
    (void)state;
    char p[128], key[192];
    api_prefix(p, sizeof p, "stacked");
    snprintf(key, sizeof key, "%sk", p);
    assert_int_equal(api_set_committed(key, L(key), "\x10\x00\x00\x00", 4), 0);
    struct {
        int op;
        int len;
        const char *b;
    } seq[] = {
        { FDB_MUTATION_TYPE_ADD, 4, "\xf0\x00\x00\x00" },    { FDB_MUTATION_TYPE_BIT_OR, 4, "\x00\x00\x01\x00" },
        { FDB_MUTATION_TYPE_MAX, 4, "\x05\x00\x00\x00" },    { FDB_MUTATION_TYPE_BIT_XOR, 2, "\xff\xff" },
        { FDB_MUTATION_TYPE_APPEND_IF_FITS, 2, "zz" },       { FDB_MUTATION_TYPE_BYTE_MIN, 3, "\xff\xff\xff" },
        { FDB_MUTATION_TYPE_MIN, 4, "\x00\x00\x00\x01" },    { FDB_MUTATION_TYPE_BIT_AND, 3, "\x0f\xff\xff" },
    };
    val model = mk("\x10\x00\x00\x00", 4);
    FDBTransaction *tr = api_tr();
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++) {
        fdb_transaction_atomic_op(tr, S(key), L(key), S(seq[i].b), seq[i].len, (FDBMutationType)seq[i].op);
        model = ref_apply(seq[i].op, model, mk(seq[i].b, seq[i].len));
        if (i % 3 == 2)
            assert_int_equal(check_read(tr, key, &model, "stacked ryw"), 0);
    }
    assert_int_equal(check_read(tr, key, &model, "stacked ryw"), 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    assert_int_equal(check_read(tr, key, &model, "stacked committed"), 0);
    /* set then atomic, clear then atomic */
    fdb_transaction_set(tr, S(key), L(key), S("\x01"), 1);
    fdb_transaction_atomic_op(tr, S(key), L(key), S("\x02"), 1, FDB_MUTATION_TYPE_ADD);
    model = mk("\x03", 1);
    assert_int_equal(check_read(tr, key, &model, "set+add"), 0);
    fdb_transaction_clear(tr, S(key), L(key));
    fdb_transaction_atomic_op(tr, S(key), L(key), S("\x07"), 1, FDB_MUTATION_TYPE_BIT_AND);
    model = mk("\x07", 1);
    assert_int_equal(check_read(tr, key, &model, "clear+and"), 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    assert_int_equal(check_read(tr, key, &model, "clear+and committed"), 0);
    fdb_transaction_destroy(tr);
}

/* APPEND_IF_FITS leaves the value alone when the result would pass 100,000 bytes */
static void test_append_if_fits_limit(void **state)
{
    (void)state;
    char p[128], key[192];
    api_prefix(p, sizeof p, "appendlimit");
    snprintf(key, sizeof key, "%sk", p);
    char *big = malloc(100000);
    memset(big, 'a', 100000);
    assert_int_equal(api_set_committed(key, L(key), big, 99990), 0);
    FDBTransaction *tr = api_tr();
    fdb_transaction_atomic_op(tr, S(key), L(key), S("0123456789"), 10, FDB_MUTATION_TYPE_APPEND_IF_FITS);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    int present, len;
    assert_int_equal(api_get(tr, key, L(key), 0, &present, NULL, 0, &len), 0);
    assert_int_equal(len, 100000);
    fdb_transaction_atomic_op(tr, S(key), L(key), S("x"), 1, FDB_MUTATION_TYPE_APPEND_IF_FITS);
    assert_int_equal(api_get(tr, key, L(key), 0, &present, NULL, 0, &len), 0);
    assert_int_equal(len, 100000);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_reset(tr);
    assert_int_equal(api_get(tr, key, L(key), 0, &present, NULL, 0, &len), 0);
    assert_int_equal(len, 100000);
    fdb_transaction_destroy(tr);
    free(big);
}

/* ---------------- versionstamps ---------------- */

static void get_versionstamp_bytes(FDBFuture *f, uint8_t out[10])
{
    assert_int_equal(api_wait(f), 0);
    const uint8_t *k;
    int n;
    assert_int_equal(fdb_future_get_key(f, &k, &n), 0);
    assert_int_equal(n, 10);
    memcpy(out, k, 10);
}

static int64_t be64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | b[i];
    return (int64_t)v;
}

static void test_versionstamped_key(void **state)
{
    (void)state;
    char p[128];
    api_prefix(p, sizeof p, "vskey");
    int pl = (int)strlen(p);
    uint8_t key[192];
    memcpy(key, p, (size_t)pl);
    memset(key + pl, 0, 10);
    memcpy(key + pl + 10, "/sfx", 4);
    int32_t off = pl;
    memcpy(key + pl + 14, &off, 4); /* little-endian offset */
    int klen = pl + 18;

    FDBTransaction *tr = api_tr();
    fdb_transaction_atomic_op(tr, key, klen, S("bar"), 3, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    FDBFuture *vf = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 0);
    int64_t cv = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
    uint8_t vs[10];
    get_versionstamp_bytes(vf, vs);
    fdb_future_destroy(vf);
    assert_int_equal(be64(vs), cv);

    /* the stored key is prefix + versionstamp + "/sfx" */
    uint8_t want[192];
    memcpy(want, p, (size_t)pl);
    memcpy(want + pl, vs, 10);
    memcpy(want + pl + 10, "/sfx", 4);
    fdb_transaction_reset(tr);
    char end[192];
    snprintf(end, sizeof end, "%s\xff", p);
    FDBFuture *f = fdb_transaction_get_range(tr, FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(p), pl),
                                  FDB_KEYSEL_FIRST_GREATER_OR_EQUAL(S(end), L(end)), 0, 0,
                                  FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 1);
    assert_int_equal(kv[0].key_length, pl + 14);
    assert_memory_equal(kv[0].key, want, (size_t)(pl + 14));
    assert_int_equal(kv[0].value_length, 3);
    assert_memory_equal(kv[0].value, "bar", 3);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

static void test_versionstamped_value(void **state)
{
    (void)state;
    char p[128], key[192];
    api_prefix(p, sizeof p, "vsval");
    snprintf(key, sizeof key, "%sk", p);
    uint8_t v[17] = { 'b', 'a', 'r', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0 };
    FDBTransaction *tr = api_tr();
    fdb_transaction_atomic_op(tr, S(key), L(key), v, 17, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    FDBFuture *vf = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 0);
    int64_t cv = 0;
    assert_int_equal(fdb_transaction_get_committed_version(tr, &cv), 0);
    uint8_t vs[10];
    get_versionstamp_bytes(vf, vs);
    fdb_future_destroy(vf);
    assert_int_equal(be64(vs), cv);
    fdb_transaction_reset(tr);
    int present, len;
    uint8_t buf[32];
    assert_int_equal(api_get(tr, key, L(key), 0, &present, buf, sizeof buf, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, 13);
    assert_memory_equal(buf, "bar", 3);
    assert_memory_equal(buf + 3, vs, 10);
    fdb_transaction_destroy(tr);
}

/* two versionstamped ops in one transaction share its versionstamp; later commits get larger ones */
static void test_versionstamps_order(void **state)
{
    (void)state;
    char p[128], k1[192], k2[192];
    api_prefix(p, sizeof p, "vsorder");
    snprintf(k1, sizeof k1, "%s1", p);
    snprintf(k2, sizeof k2, "%s2", p);
    uint8_t v[14] = { 0 };
    uint8_t last[10] = { 0 };
    for (int i = 0; i < 5; i++) {
        FDBTransaction *tr = api_tr();
        fdb_transaction_atomic_op(tr, S(k1), L(k1), v, 14, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
        fdb_transaction_atomic_op(tr, S(k2), L(k2), v, 14, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
        FDBFuture *vf = fdb_transaction_get_versionstamp(tr);
        assert_int_equal(api_commit(tr), 0);
        uint8_t vs[10];
        get_versionstamp_bytes(vf, vs);
        fdb_future_destroy(vf);
        assert_true(memcmp(vs, last, 10) > 0);
        memcpy(last, vs, 10);
        fdb_transaction_reset(tr);
        uint8_t b1[16], b2[16];
        int present, l1, l2;
        assert_int_equal(api_get(tr, k1, L(k1), 0, &present, b1, sizeof b1, &l1), 0);
        assert_int_equal(api_get(tr, k2, L(k2), 0, &present, b2, sizeof b2, &l2), 0);
        assert_int_equal(l1, 10);
        assert_int_equal(l2, 10);
        assert_memory_equal(b1, vs, 10);
        assert_memory_equal(b2, vs, 10);
        fdb_transaction_destroy(tr);
    }
}

static void test_versionstamp_invalid_offset(void **state)
{
    (void)state;
    /* only 9 bytes after offset 4 (before the 4-byte offset itself): client_invalid_operation */
    char p[128];
    api_prefix(p, sizeof p, "vsinvalid");
    uint8_t key[64];
    int pl = (int)strlen(p);
    memcpy(key, p, (size_t)pl);
    memset(key + pl, 0, 9);
    int32_t off = pl;
    memcpy(key + pl + 9, &off, 4);
    FDBTransaction *tr = api_tr();
    fdb_transaction_atomic_op(tr, key, pl + 13, S("bar"), 3, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    assert_int_equal(api_commit(tr), 2000);
    fdb_transaction_reset(tr);
    /* a key shorter than 4 bytes */
    fdb_transaction_atomic_op(tr, S("ab"), 2, S("bar"), 3, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    assert_int_equal(api_commit(tr), 2000);
    fdb_transaction_destroy(tr);
}

static void test_versionstamp_read_only(void **state)
{
    (void)state;
    /* a transaction that commits without writes fails its get_versionstamp future with
     * no_commit_version (2021), as libfdb_c 7.3 (cfdb once left it pending forever) */
    FDBTransaction *tr = api_tr();
    FDBFuture *vf = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 0);
    assert_int_equal(api_wait_ms(vf, 3000), 2021);
    fdb_future_destroy(vf);
    fdb_transaction_destroy(tr);
}

static void test_versionstamp_unreadable(void **state)
{
    (void)state;
    char p[128], key[192];
    api_prefix(p, sizeof p, "vsro");
    snprintf(key, sizeof key, "%sk", p);
    FDBTransaction *tr = api_tr();
    /* reading a versionstamped value before commit: accessed_unreadable 1036 */
    uint8_t v[14] = { 'x', 'y', 'z', 'w', 0 };
    fdb_transaction_atomic_op(tr, S(key), L(key), v, 14, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    int present;
    assert_int_equal(api_get(tr, key, L(key), 0, &present, NULL, 0, NULL), 1036);
    fdb_transaction_destroy(tr);
}

/* the versionstamp future of a transaction whose commit conflicts fails with
 * transaction_invalid_version (2020) */
static void test_versionstamp_future_on_conflict(void **state)
{
    (void)state;
    /* a failed commit fails the versionstamp future with transaction_invalid_version (2020),
     * not the commit's error (NativeAPI commitAndWatch catch block) */
    char p[128], key[192], vkey[192];
    api_prefix(p, sizeof p, "vsconflict");
    snprintf(key, sizeof key, "%sk", p);
    snprintf(vkey, sizeof vkey, "%sv", p);
    FDBTransaction *tr = api_tr();
    int present;
    assert_int_equal(api_get(tr, key, L(key), 0, &present, NULL, 0, NULL), 0);
    assert_int_equal(api_set_committed(key, L(key), "other", 5), 0);
    uint8_t v[14] = { 0 };
    fdb_transaction_atomic_op(tr, S(vkey), L(vkey), v, 14, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    FDBFuture *vf = fdb_transaction_get_versionstamp(tr);
    assert_int_equal(api_commit(tr), 1020);
    assert_int_equal(api_wait_ms(vf, 3000), 2020);
    fdb_future_destroy(vf);
    fdb_transaction_destroy(tr);
}

/* ---------------- a contended counter ---------------- */

#define COUNTER_THREADS 8
#define COUNTER_TXNS 200

static char g_counter_key[192];

static void *counter_thread(void *arg)
{
    (void)arg;
    FDBTransaction *tr = NULL;
    if (fdb_database_create_transaction(g_env.db, &tr))
        return (void *)1;
    uint8_t one[8] = { 1 };
    long failures = 0;
    for (int i = 0; i < COUNTER_TXNS; i++) {
        for (;;) {
            fdb_transaction_atomic_op(tr, S(g_counter_key), L(g_counter_key), one, 8, FDB_MUTATION_TYPE_ADD);
            fdb_error_t e = api_commit(tr);
            if (!e)
                break;
            if (api_on_error(tr, e)) {
                failures++;
                break;
            }
        }
        fdb_transaction_reset(tr);
    }
    fdb_transaction_destroy(tr);
    return (void *)failures;
}

static void test_counter_8_threads(void **state)
{
    (void)state;
    char p[128];
    api_prefix(p, sizeof p, "counter");
    snprintf(g_counter_key, sizeof g_counter_key, "%sc", p);
    pthread_t th[COUNTER_THREADS];
    for (int i = 0; i < COUNTER_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, counter_thread, NULL), 0);
    long failures = 0;
    for (int i = 0; i < COUNTER_THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        failures += (long)r;
    }
    assert_int_equal(failures, 0);
    int present, len;
    uint8_t buf[8];
    assert_int_equal(api_read_committed(g_counter_key, L(g_counter_key), &present, buf, 8, &len), 0);
    assert_int_equal(present, 1);
    assert_int_equal(len, 8);
    uint64_t total = 0;
    for (int i = 7; i >= 0; i--)
        total = (total << 8) | buf[i];
    assert_int_equal(total, COUNTER_THREADS * COUNTER_TXNS);
}

#define OPT(NAME) cmocka_unit_test(test_committed_##NAME), cmocka_unit_test(test_ryw_##NAME)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_sanity),
        OPT(add),
        OPT(bit_and),
        OPT(bit_or),
        OPT(bit_xor),
        OPT(append_if_fits),
        OPT(max),
        OPT(min),
        OPT(byte_max),
        OPT(byte_min),
        OPT(compare_and_clear),
        cmocka_unit_test(test_stacked_ops),
        cmocka_unit_test(test_append_if_fits_limit),
        cmocka_unit_test(test_versionstamped_key),
        cmocka_unit_test(test_versionstamped_value),
        cmocka_unit_test(test_versionstamps_order),
        cmocka_unit_test(test_versionstamp_invalid_offset),
        cmocka_unit_test(test_versionstamp_read_only),
        cmocka_unit_test(test_versionstamp_unreadable),
        cmocka_unit_test(test_versionstamp_future_on_conflict),
        cmocka_unit_test(test_counter_8_threads),
    };
    return cmocka_run_group_tests_name("api_atomic", tests, group_setup, group_teardown);
}
