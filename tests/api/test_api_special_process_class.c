/* \xff\xff/configuration/process/class_type/ and class_source/ through fdb_c.h against
 * cfdb-server, as libfdb_c 7.3.77 computes them from \xff/worker/ and \xff/processClass/
 * (getWorkers): the test writes its own worker list (ProcessData in FoundationDB's binary
 * form, built here byte by byte) and process classes, then checks the merged classes, their
 * sources, the order by address text, the left-out test-class worker, read-your-writes, and
 * setclass's writes and errors. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SL(x) ((int)sizeof(x) - 1)
#define CT "\xff\xff/configuration/process/class_type/"
#define CS "\xff\xff/configuration/process/class_source/"
#define PV 0x0FDB00B062010001ull

static int group_setup(void **state)
{
    (void)state;
    return api_env_setup(NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

static size_t put(uint8_t *p, const void *v, size_t n)
{
    memcpy(p, v, n);
    return n;
}

static size_t put_str(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    memcpy(p, &n, 4);
    memcpy(p + 4, s, n);
    return 4 + n;
}

/* \xff/worker/<pid> = IncludeVersion + ProcessData {locality {processid, zoneid}, class, address} */
static void set_worker(FDBTransaction *tr, const char *pid, int16_t cls, int16_t src, const uint8_t *ip, int v6,
                       uint16_t port)
{
    uint8_t k[64], v[256];
    size_t kn = put(k, "\xff/worker/", 9);
    kn += put_str(k + kn, pid);
    uint64_t pv = PV, count = 2;
    size_t o = put(v, &pv, 8);
    o += put(v + o, &count, 8);
    o += put_str(v + o, "processid");
    v[o++] = 1;
    o += put_str(v + o, pid);
    o += put_str(v + o, "zoneid");
    v[o++] = 0;
    o += put(v + o, &cls, 2);
    o += put(v + o, &src, 2);
    v[o++] = (uint8_t)v6;
    if (v6) {
        o += put(v + o, ip, 16);
    } else {
        uint32_t h = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 | (uint32_t)ip[2] << 8 | ip[3];
        o += put(v + o, &h, 4);
    }
    uint16_t flags = 0;
    o += put(v + o, &port, 2);
    o += put(v + o, &flags, 2);
    fdb_transaction_set(tr, k, (int)kn, v, (int)o);
}

static size_t class_key(uint8_t *k, const char *pid)
{
    size_t n = put(k, "\xff/processClass/", 15);
    return n + put_str(k + n, pid);
}

static void set_class(FDBTransaction *tr, const char *pid, int16_t cls, int16_t src)
{
    uint8_t k[64], v[12];
    size_t kn = class_key(k, pid);
    uint64_t pv = PV;
    memcpy(v, &pv, 8);
    memcpy(v + 8, &cls, 2);
    memcpy(v + 10, &src, 2);
    fdb_transaction_set(tr, k, (int)kn, v, 12);
}

static void fixture(void)
{
    static const uint8_t a[4] = { 127, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
    static const uint8_t l6[16] = { [15] = 1 };
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_clear_range(tr, S("\xff/worker/"), 9, S("\xff/worker0"), 9);
    fdb_transaction_clear_range(tr, S("\xff/processClass/"), 15, S("\xff/processClass0"), 15);
    set_worker(tr, "p1", 0, 0, a, 0, 4500); /* unset: takes its key's class, whatever the source */
    set_worker(tr, "p2", 1, 0, b, 0, 4501); /* storage, overridden by its set_class key */
    set_worker(tr, "p3", 4, 0, b, 0, 4600); /* test class: left out */
    set_worker(tr, "p4", 8, 0, l6, 1, 4502); /* log; its command-line class key is ignored */
    set_class(tr, "p1", 3, 1);
    set_class(tr, "p2", 7, 2);
    set_class(tr, "p4", 2, 0);
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
}

static int srange(FDBTransaction *tr, const char *b, int bl, const char *e, int el, char rows[][128], int cap,
                  fdb_error_t *err)
{
    FDBFuture *f = fdb_transaction_get_range(tr, S(b), bl, 0, 1, S(e), el, 0, 1, 0, 0, FDB_STREAMING_MODE_WANT_ALL, 0,
                                             0, 0);
    *err = api_wait(f);
    int n = 0;
    if (!*err) {
        const FDBKeyValue *kv;
        fdb_bool_t more;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
        assert_true(n <= cap);
        for (int i = 0; i < n; i++)
            snprintf(rows[i], 128, "%.*s=%.*s", kv[i].key_length - (int)strlen(CT), (const char *)kv[i].key + strlen(CT),
                     kv[i].value_length, (const char *)kv[i].value);
    }
    fdb_future_destroy(f);
    return n;
}

static void expect_types(const char *r0, const char *r1, const char *r2)
{
    char rows[8][128];
    fdb_error_t e;
    FDBTransaction *tr = api_tr();
    assert_int_equal(srange(tr, CT, SL(CT), CT "\xff", SL(CT "\xff"), rows, 8, &e), 3);
    assert_int_equal(e, 0);
    assert_string_equal(rows[0], r0);
    assert_string_equal(rows[1], r1);
    assert_string_equal(rows[2], r2);
    fdb_transaction_destroy(tr);
}

static fdb_error_t setclass(const char *addr, const char *cls, char *msg, int cap)
{
    char key[128];
    int kl = snprintf(key, sizeof key, CT "%s", addr);
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S(key), kl, S(cls), (int)strlen(cls));
    fdb_error_t e = api_commit(tr);
    if (msg) {
        int present = 0, len = 0;
        msg[0] = 0;
        if (e == 2117 &&
            api_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), 0, &present, msg, cap - 1, &len) == 0 &&
            present)
            msg[len] = 0;
    }
    fdb_transaction_destroy(tr);
    return e;
}

/* Before the fixture replaces it: cfdb-server's own \xff/worker/ entry, in 7.3.77's layout
 * (9-byte key prefix, int16 class and source), reads back through the module as this process
 * at its coordinator address with class unset from the command line. */
static void test_server_own_worker(void **state)
{
    (void)state;
    char line[300] = "", want[128];
    FILE *cf = fopen(g_env.server.cluster_file, "r");
    assert_non_null(cf);
    assert_non_null(fgets(line, sizeof line, cf));
    fclose(cf);
    char *at = strchr(line, '@');
    assert_non_null(at);
    at[1 + strcspn(at + 1, ",\r\n")] = 0;
    char rows[8][128];
    fdb_error_t e;
    FDBTransaction *tr = api_tr();
    assert_int_equal(srange(tr, CT, SL(CT), CT "\xff", SL(CT "\xff"), rows, 8, &e), 1);
    assert_int_equal(e, 0);
    snprintf(want, sizeof want, "%s=unset", at + 1);
    assert_string_equal(rows[0], want);
    fdb_transaction_destroy(tr);
}

static void test_classes_read(void **state)
{
    (void)state;
    fixture();
    expect_types("10.0.0.2:4501=stateless", "127.0.0.1:4500=resolution", "[::1]:4502=log");
    char rows[8][128];
    fdb_error_t e;
    FDBTransaction *tr = api_tr();
    /* class_source: the sources, in the same order */
    FDBFuture *f = fdb_transaction_get_range(tr, S(CS), SL(CS), 0, 1, S(CS "\xff"), SL(CS "\xff"), 0, 1, 0, 0,
                                             FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    assert_int_equal(api_wait(f), 0);
    const FDBKeyValue *kv;
    int n;
    fdb_bool_t more;
    assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &n, &more), 0);
    assert_int_equal(n, 3);
    static const char *const want[3][2] = { { CS "10.0.0.2:4501", "set_class" },
                                            { CS "127.0.0.1:4500", "configure_auto" },
                                            { CS "[::1]:4502", "command_line" } };
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kv[i].key_length, (int)strlen(want[i][0]));
        assert_memory_equal(kv[i].key, want[i][0], strlen(want[i][0]));
        assert_int_equal(kv[i].value_length, (int)strlen(want[i][1]));
        assert_memory_equal(kv[i].value, want[i][1], strlen(want[i][1]));
    }
    fdb_future_destroy(f);
    /* the transaction's own class write is laid over the computed ones */
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_set(tr, S(CT "127.0.0.1:4500"), SL(CT "127.0.0.1:4500"), S("storage"), 7);
    assert_int_equal(srange(tr, CT, SL(CT), CT "\xff", SL(CT "\xff"), rows, 8, &e), 3);
    assert_string_equal(rows[1], "127.0.0.1:4500=storage");
    fdb_transaction_destroy(tr);
}

static void test_setclass(void **state)
{
    (void)state;
    fixture();
    assert_int_equal(setclass("127.0.0.1:4500", "storage", NULL, 0), 0);
    expect_types("10.0.0.2:4501=stateless", "127.0.0.1:4500=storage", "[::1]:4502=log");
    /* the stored class: IncludeVersion, int16 storage (1), int16 set_class (2) */
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    uint8_t k[64], v[64];
    size_t kn = class_key(k, "p1");
    int present, len;
    assert_int_equal(api_get(tr, k, (int)kn, 0, &present, v, sizeof v, &len), 0);
    assert_true(present);
    static const uint8_t stored[12] = { 0x01, 0x00, 0x01, 0x62, 0xB0, 0x00, 0xDB, 0x0F, 1, 0, 2, 0 };
    assert_int_equal(len, 12);
    assert_memory_equal(v, stored, 12);
    assert_int_equal(api_get(tr, "\xff/processClassChanges", SL("\xff/processClassChanges"), 0, &present, v,
                             sizeof v, &len),
                     0);
    assert_true(present);
    assert_int_equal(len, 32);
    fdb_transaction_destroy(tr);
    /* a whole machine with "default": the class key goes, the worker's own class is back */
    assert_int_equal(setclass("127.0.0.1", "default", NULL, 0), 0);
    expect_types("10.0.0.2:4501=stateless", "127.0.0.1:4500=unset", "[::1]:4502=log");
    /* an IPv6 process */
    assert_int_equal(setclass("[::1]:4502", "proxy", NULL, 0), 0);
    expect_types("10.0.0.2:4501=stateless", "127.0.0.1:4500=unset", "[::1]:4502=commit_proxy");
    /* errors, with fdbcli's texts */
    char msg[512];
    assert_int_equal(setclass("127.0.0.1:4500", "bogus", msg, sizeof msg), 2117);
    assert_non_null(strstr(msg, "ERROR: 'bogus' is not a valid process class\\n"));
    assert_non_null(strstr(msg, "\"command\":\"setclass\""));
    assert_int_equal(setclass("127.0.0.1:4500:tls", "storage", msg, sizeof msg), 2117);
    assert_non_null(strstr(msg, "is not a valid network endpoint address"));
    assert_non_null(strstr(msg, "Do not include the `:tls' suffix when naming a process"));
    assert_int_equal(setclass("not-an-address", "storage", msg, sizeof msg), 2117);
    assert_null(strstr(msg, ":tls'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_own_worker),
        cmocka_unit_test(test_classes_read),
        cmocka_unit_test(test_setclass),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
