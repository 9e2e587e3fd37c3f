/* What a transaction with READ_YOUR_WRITES_DISABLE sends in its CommitTransactionRequest.
 * libfdb_c 7.3.77's ReadYourWritesTransaction hands every write of such a transaction to its
 * NativeAPI Transaction (ReadYourWrites.actor.cpp: set/clear/atomicOp/addWriteConflictRange
 * return tr.set(...) etc. when readYourWritesDisabled), which appends one mutation and one
 * write conflict range per call, in program order, neither sorted nor coalesced
 * (NativeAPI.actor.cpp Transaction::set/clear/atomicOp); a non-snapshot get adds its
 * single-key read conflict range when issued, a getRange's range is appended at commit
 * (extraConflictRanges). With read-your-writes on, the write map sends them coalesced in key
 * order (clears first). The requests are read from the frames the dev server records
 * (--trace-frames), decoded by the independent reader tests/wire/fdb_ref.c. On the wire a
 * single-key range [k, k\0) is (k\0, "") and a ClearRange of one key has param1 k\0 and an
 * empty param2 (KeyRangeRef::serialize and MutationRef::serialize, CommitTransaction.h). */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdb_ref.h"

#define MUT_SET_VALUE 0
#define MUT_CLEAR_RANGE 1
#define MUT_ADD_VALUE 2

static char g_trace[64];

static int group_setup(void **state)
{
    (void)state;
    strcpy(g_trace, "/tmp/cfdb-ryw-disabled-XXXXXX");
    int fd = mkstemp(g_trace);
    if (fd < 0)
        return -1;
    close(fd);
    const char *args[] = { "--trace-frames", g_trace, NULL };
    return api_env_setup(args);
}

static int group_teardown(void **state)
{
    (void)state;
    int rc = api_env_teardown();
    unlink(g_trace);
    return rc;
}

/* The last CommitTransactionRequest in the trace whose first mutation's key starts with
 * prefix, decoded into doc; false if there is none. */
static bool find_commit(const char *prefix, ref_doc *doc)
{
    FILE *f = fopen(g_trace, "r");
    if (!f)
        return false;
    static char line[1 << 20];
    static uint8_t msg[1 << 19];
    char needle[64];
    snprintf(needle, sizeof needle, "\"file_identifier\": %u,", ref_commit_transaction_request.file_id);
    char *want = ref_bytes_value((const uint8_t *)prefix, strlen(prefix));
    want[strlen(want) - 1] = 0; /* without the closing quote: a prefix of the key's value */
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, needle))
            continue;
        char *hex = strstr(line, "\"hex\": \"");
        if (!hex)
            continue;
        hex += 8;
        char *end = strchr(hex, '"');
        if (!end)
            continue;
        *end = 0;
        long n = ref_unhex(hex, msg, sizeof msg);
        ref_doc d;
        memset(&d, 0, sizeof d);
        if (n < 0 || ref_read(&ref_commit_transaction_request, msg, (size_t)n, &d) != 0) {
            ref_doc_free(&d);
            continue;
        }
        const char *k = ref_get(&d, "transaction.mutations[0].param1");
        if (k && strncmp(k, want, strlen(want)) == 0) {
            if (found)
                ref_doc_free(doc);
            *doc = d;
            found = true;
        } else {
            ref_doc_free(&d);
        }
    }
    free(want);
    fclose(f);
    return found;
}

static void assert_field(const ref_doc *doc, const char *path, const char *want)
{
    const char *got = ref_get(doc, path);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: got %s, want %s", path, got ? got : "(none)", want);
}

/* path = the bytes prefix + suffix (suffix may hold a NUL: its length is given) */
static void assert_key(const ref_doc *doc, const char *path, const char *prefix, const char *suffix, size_t slen)
{
    char buf[256];
    size_t pl = strlen(prefix);
    memcpy(buf, prefix, pl);
    memcpy(buf + pl, suffix, slen);
    char *v = ref_bytes_value((const uint8_t *)buf, pl + slen);
    assert_field(doc, path, v);
    free(v);
}

static void assert_int(const ref_doc *doc, const char *path, int want)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d", want);
    assert_field(doc, path, buf);
}

#define K(s) s, sizeof(s) - 1

/* A single-key range [prefix+key, prefix+key\0) as the wire carries it: (k\0, ""). */
static void assert_single(const ref_doc *doc, const char *a, const char *b, const char *prefix, const char *key)
{
    char s[8];
    size_t n = strlen(key);
    memcpy(s, key, n);
    s[n] = 0;
    assert_key(doc, a, prefix, s, n + 1);
    assert_field(doc, b, "x''");
}

/* The same writes, then a commit: b=1, a=2, b=3, clear(c), add(d, 1), a write conflict range
 * [x, y), after a non-snapshot get of g and a range read of [r, s). */
static void run(const char *prefix, bool ryw_disabled)
{
    FDBTransaction *tr = api_tr();
    if (ryw_disabled)
        assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    char k[96], e[96];
    int present, len;
    char val[16];
    int kl = api_key(k, sizeof k, prefix, "g");
    assert_int_equal(api_get(tr, k, kl, 0, &present, val, sizeof val, &len), 0);
    kl = api_key(k, sizeof k, prefix, "r");
    int el = api_key(e, sizeof e, prefix, "s");
    FDBFuture *f = fdb_transaction_get_range(tr, (const uint8_t *)k, kl, 0, 1, (const uint8_t *)e, el, 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait_destroy(f), 0);
    const char *writes[][2] = { { "b", "1" }, { "a", "2" }, { "b", "3" } };
    for (size_t i = 0; i < 3; i++) {
        kl = api_key(k, sizeof k, prefix, writes[i][0]);
        fdb_transaction_set(tr, (const uint8_t *)k, kl, (const uint8_t *)writes[i][1], 1);
    }
    kl = api_key(k, sizeof k, prefix, "c");
    fdb_transaction_clear(tr, (const uint8_t *)k, kl);
    static const uint8_t one[8] = { 1 };
    kl = api_key(k, sizeof k, prefix, "d");
    fdb_transaction_atomic_op(tr, (const uint8_t *)k, kl, one, sizeof one, FDB_MUTATION_TYPE_ADD);
    kl = api_key(k, sizeof k, prefix, "x");
    el = api_key(e, sizeof e, prefix, "y");
    assert_int_equal(fdb_transaction_add_conflict_range(tr, (const uint8_t *)k, kl, (const uint8_t *)e, el,
                                                        FDB_CONFLICT_RANGE_TYPE_WRITE),
                     0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

/* RYW off: NativeAPI's buffers, as issued. */
static void test_program_order_commit(void **state)
{
    (void)state;
    char prefix[64];
    api_prefix(prefix, sizeof prefix, "rywoff");
    run(prefix, true);
    ref_doc doc;
    memset(&doc, 0, sizeof doc);
    assert_true(find_commit(prefix, &doc));
    assert_int(&doc, "transaction.mutations.count", 5);
    assert_int(&doc, "transaction.mutations[0].type", MUT_SET_VALUE);
    assert_key(&doc, "transaction.mutations[0].param1", prefix, K("b"));
    assert_field(&doc, "transaction.mutations[0].param2", "x'31'");
    assert_key(&doc, "transaction.mutations[1].param1", prefix, K("a"));
    assert_key(&doc, "transaction.mutations[2].param1", prefix, K("b"));
    assert_field(&doc, "transaction.mutations[2].param2", "x'33'");
    assert_int(&doc, "transaction.mutations[3].type", MUT_CLEAR_RANGE);
    assert_single(&doc, "transaction.mutations[3].param1", "transaction.mutations[3].param2", prefix, "c");
    assert_int(&doc, "transaction.mutations[4].type", MUT_ADD_VALUE);
    assert_key(&doc, "transaction.mutations[4].param1", prefix, K("d"));
    /* one write range per write, in order, then the added one (the reads meet none: the
     * self-conflict range comes last) */
    assert_int(&doc, "transaction.write_conflict_ranges.count", 7);
    const char *wr[] = { "b", "a", "b", "c", "d" };
    for (int i = 0; i < 5; i++) {
        char b[96], e[96];
        snprintf(b, sizeof b, "transaction.write_conflict_ranges[%d].begin", i);
        snprintf(e, sizeof e, "transaction.write_conflict_ranges[%d].end", i);
        assert_single(&doc, b, e, prefix, wr[i]);
    }
    assert_key(&doc, "transaction.write_conflict_ranges[5].begin", prefix, K("x"));
    assert_key(&doc, "transaction.write_conflict_ranges[5].end", prefix, K("y"));
    /* reads: the get's range when issued, then the range read's, then the self-conflict key */
    assert_int(&doc, "transaction.read_conflict_ranges.count", 3);
    assert_single(&doc, "transaction.read_conflict_ranges[0].begin", "transaction.read_conflict_ranges[0].end",
                  prefix, "g");
    assert_key(&doc, "transaction.read_conflict_ranges[1].begin", prefix, K("r"));
    assert_key(&doc, "transaction.read_conflict_ranges[1].end", prefix, K("s"));
    const char *sc = ref_get(&doc, "transaction.read_conflict_ranges[2].begin");
    assert_non_null(sc);
    assert_true(strncmp(sc, "x'ff2f53432f", 12) == 0); /* \xff/SC/ */
    assert_field(&doc, "transaction.write_conflict_ranges[6].begin", sc);
    ref_doc_free(&doc);
}

/* RYW on: the write map's coalesced, key-ordered commit (the contrast the test above needs). */
static void test_ryw_commit_is_coalesced(void **state)
{
    (void)state;
    char prefix[64];
    api_prefix(prefix, sizeof prefix, "rywon");
    run(prefix, false);
    ref_doc doc;
    memset(&doc, 0, sizeof doc);
    assert_true(find_commit(prefix, &doc));
    assert_int(&doc, "transaction.mutations.count", 4);
    assert_int(&doc, "transaction.mutations[0].type", MUT_CLEAR_RANGE);
    assert_single(&doc, "transaction.mutations[0].param1", "transaction.mutations[0].param2", prefix, "c");
    assert_key(&doc, "transaction.mutations[1].param1", prefix, K("a"));
    assert_key(&doc, "transaction.mutations[2].param1", prefix, K("b"));
    assert_field(&doc, "transaction.mutations[2].param2", "x'33'");
    assert_int(&doc, "transaction.mutations[3].type", MUT_ADD_VALUE);
    ref_doc_free(&doc);
}

/* The transaction's conflict ranges as the special keys show them (coalesced either way). */
static void test_conflict_range_special_keys(void **state)
{
    (void)state;
    char prefix[64];
    api_prefix(prefix, sizeof prefix, "rywoffsk");
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_YOUR_WRITES_DISABLE, NULL, 0), 0);
    char k[96];
    int kl = api_key(k, sizeof k, prefix, "b");
    fdb_transaction_set(tr, (const uint8_t *)k, kl, (const uint8_t *)"1", 1);
    fdb_transaction_set(tr, (const uint8_t *)k, kl, (const uint8_t *)"2", 1); /* same range twice */
    static const char wprefix[] = "\xff\xff/transaction/write_conflict_range/";
    char b[160], e[160];
    int bl = snprintf(b, sizeof b, "%s%s", wprefix, prefix);
    int el = snprintf(e, sizeof e, "%s%s\xff", wprefix, prefix);
    FDBFuture *f = fdb_transaction_get_range(tr, (const uint8_t *)b, bl, 0, 1, (const uint8_t *)e, el, 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 2); /* [b, b\0): begin "1", end "0" */
    assert_int_equal(kv[0].key_length, bl + 1);
    assert_memory_equal(kv[0].value, "1", 1);
    assert_int_equal(kv[1].key_length, bl + 2);
    assert_memory_equal(kv[1].value, "0", 1);
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program_order_commit),
        cmocka_unit_test(test_ryw_commit_is_coalesced),
        cmocka_unit_test(test_conflict_range_special_keys),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
