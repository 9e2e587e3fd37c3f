/* Exclusions without force and in_progress_exclusion/ through fdb_c.h against cfdb-server
 * (started with --separate-ports, so that the process's address, the coordinator's, differs
 * from each storage server's), as libfdb_c 7.3.77 does them (special_exclusion.c):
 *  - excluded/ of an unrelated address passes the status free-space check and is written;
 *  - excluded/ of the process (IP:port or the whole IP) would exclude every storage role:
 *    2117 with libfdb_c's "below 10%" message, nothing written;
 *  - failed/ of an unrelated address passes the commit proxy's and the coordinators' checks;
 *    failed/ of one storage server's own port passes the free-space check (the process is not
 *    excluded) but the proxy answers unsafe (its team would be empty): 2117, "It is unsafe";
 *  - excluded_locality/ and failed_locality/ of the process's zoneid: the same refusal; of
 *    another zone: written;
 *  - with options/<kind>/force the same exclusions are written;
 *  - in_progress_exclusion/ lists the excluded process's log address and storage addresses
 *    (by address or by locality), not an unrelated excluded one; an undecodable \xff/serverList/ value is 1044. */
#include "api_helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define SL(x) ((int)sizeof(x) - 1)
#define S(x) ((const uint8_t *)(x))
#define MG "\xff\xff/management/"

static char g_self[64];    /* the process's (coordinator's) "127.0.0.1:port" */
static char g_storage[64]; /* one storage server's "127.0.0.1:port" */
static char g_zone[80];    /* "locality_zoneid:<the process's zoneid>" */

static const char k_low_space[] =
    "ERROR: This exclude may cause the total available space in the cluster to drop below 10%.\\n"
    "Call set(\\\"0xff0xff/management/options/exclude/force\\\", ...) first to exclude without checking "
    "available space.\\n";
static const char k_unsafe[] =
    "ERROR: It is unsafe to exclude the specified servers at this time.\\n"
    "Please check that this exclusion does not bring down an entire storage team.\\n"
    "Please also ensure that the exclusion will keep a majority of coordinators alive.\\n"
    "You may add more storage processes or coordinators to make the operation safe.\\n"
    "Call set(\\\"0xff0xff/management/failed/<ADDRESS...>\\\", ...) to exclude without performing safety "
    "checks.\\n";

static int group_setup(void **state)
{
    (void)state;
    static const char *const args[] = { "--separate-ports", NULL };
    if (api_env_setup(args))
        return -1;
    FILE *f = fopen(g_env.server.cluster_file, "r");
    char line[256] = "";
    if (!f || !fgets(line, sizeof line, f)) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    char *at = strchr(line, '@');
    if (!at)
        return -1;
    snprintf(g_self, sizeof g_self, "%s", at + 1);
    g_self[strcspn(g_self, ",\n")] = 0;
    /* a storage server's address: where key "a" lives */
    FDBTransaction *tr = api_tr();
    FDBFuture *fu = fdb_transaction_get_addresses_for_key(tr, S("a"), 1);
    const char **addrs;
    int n = 0;
    if (api_wait(fu) || fdb_future_get_string_array(fu, &addrs, &n) || n < 1)
        return -1;
    snprintf(g_storage, sizeof g_storage, "%s", addrs[0]);
    fdb_future_destroy(fu);
    /* the process's zoneid, from status json */
    static char doc[65536];
    int present = 0, len = 0;
    if (api_get(tr, "\xff\xff/status/json", SL("\xff\xff/status/json"), 0, &present, doc, sizeof doc - 1, &len) ||
        !present)
        return -1;
    doc[len] = 0;
    const char *z = strstr(doc, "\"zoneid\":\"");
    if (!z)
        return -1;
    z += strlen("\"zoneid\":\"");
    int zl = (int)strcspn(z, "\"");
    snprintf(g_zone, sizeof g_zone, "locality_zoneid:%.*s", zl, z);
    fdb_transaction_destroy(tr);
    return strcmp(g_self, g_storage) == 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

/* One management commit: key (with options/<force> set first when force is given) */
static fdb_error_t exclude(const char *kind, const char *addr, const char *force, char *msg, size_t cap)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    char key[160];
    if (force) {
        int n = snprintf(key, sizeof key, MG "options/%s/force", force);
        fdb_transaction_set(tr, S(key), n, S(""), 0);
    }
    int n = snprintf(key, sizeof key, MG "%s/%s", kind, addr);
    fdb_transaction_set(tr, S(key), n, S(""), 0);
    fdb_error_t e = api_commit(tr);
    if (msg) {
        msg[0] = 0;
        int present = 0, len = 0;
        if (e && !api_get(tr, "\xff\xff/error_message", SL("\xff\xff/error_message"), 0, &present, msg, (int)cap - 1,
                          &len) &&
            present)
            msg[len] = 0;
    }
    fdb_transaction_destroy(tr);
    return e;
}

static fdb_error_t include_all(void)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_clear_range(tr, S(MG "excluded/"), SL(MG "excluded/"), S(MG "excluded0"), SL(MG "excluded0"));
    fdb_transaction_clear_range(tr, S(MG "failed/"), SL(MG "failed/"), S(MG "failed0"), SL(MG "failed0"));
    fdb_error_t e = api_commit(tr);
    fdb_transaction_destroy(tr);
    return e;
}

static bool conf_present(const char *kind, const char *addr)
{
    char key[160];
    int n = snprintf(key, sizeof key, "\xff/conf/%s/%s", kind, addr);
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_READ_SYSTEM_KEYS, NULL, 0);
    int present = 0;
    assert_int_equal(api_get(tr, key, n, 0, &present, NULL, 0, NULL), 0);
    fdb_transaction_destroy(tr);
    return present;
}

static void expect_message(const char *msg, const char *command, const char *text)
{
    char want[1024];
    snprintf(want, sizeof want, "{\"command\":\"%s\",\"message\":\"%s\",\"retriable\":false}", command, text);
    assert_string_equal(msg, want);
}

static void test_exclude_unrelated(void **state)
{
    (void)state;
    assert_int_equal(exclude("excluded", "10.9.9.9", NULL, NULL, 0), 0);
    assert_true(conf_present("excluded", "10.9.9.9"));
    assert_int_equal(exclude("excluded", "10.9.9.8:4500", NULL, NULL, 0), 0);
    assert_true(conf_present("excluded", "10.9.9.8:4500"));
    assert_int_equal(include_all(), 0);
    assert_false(conf_present("excluded", "10.9.9.9"));
}

static void test_exclude_self_refused(void **state)
{
    (void)state;
    char msg[1024];
    assert_int_equal(exclude("excluded", g_self, NULL, msg, sizeof msg), 2117);
    expect_message(msg, "exclude", k_low_space);
    assert_false(conf_present("excluded", g_self));
    assert_int_equal(exclude("excluded", "127.0.0.1", NULL, msg, sizeof msg), 2117);
    expect_message(msg, "exclude", k_low_space);
    assert_false(conf_present("excluded", "127.0.0.1"));
    /* failed/: the same free-space check first, under "exclude failed" */
    assert_int_equal(exclude("failed", g_self, NULL, msg, sizeof msg), 2117);
    expect_message(msg, "exclude failed", k_low_space);
    assert_false(conf_present("failed", g_self));
}

static void test_failed_checks(void **state)
{
    (void)state;
    char msg[1024];
    /* an address holding nothing: the proxy and the coordinators say safe */
    assert_int_equal(exclude("failed", "10.9.9.7", NULL, msg, sizeof msg), 0);
    assert_true(conf_present("failed", "10.9.9.7"));
    /* one storage server's own port: the process stays (free space passes), its team would not */
    assert_int_equal(exclude("failed", g_storage, NULL, msg, sizeof msg), 2117);
    expect_message(msg, "exclude failed", k_unsafe);
    assert_false(conf_present("failed", g_storage));
    assert_int_equal(include_all(), 0);
}

static void test_force(void **state)
{
    (void)state;
    assert_int_equal(exclude("excluded", g_self, "excluded", NULL, 0), 0);
    assert_true(conf_present("excluded", g_self));
    assert_int_equal(exclude("failed", g_storage, "failed", NULL, 0), 0);
    assert_true(conf_present("failed", g_storage));
    assert_int_equal(include_all(), 0);
}

static fdb_error_t include_localities(void)
{
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0);
    fdb_transaction_clear_range(tr, S(MG "excluded_locality/"), SL(MG "excluded_locality/"),
                                S(MG "excluded_locality0"), SL(MG "excluded_locality0"));
    fdb_transaction_clear_range(tr, S(MG "failed_locality/"), SL(MG "failed_locality/"), S(MG "failed_locality0"),
                                SL(MG "failed_locality0"));
    fdb_error_t e = api_commit(tr);
    fdb_transaction_destroy(tr);
    return e;
}

/* Localities: the process's zone would take every storage role; another zone holds nothing */
static void test_localities(void **state)
{
    (void)state;
    char msg[1024];
    assert_int_equal(exclude("excluded_locality", g_zone, NULL, msg, sizeof msg), 2117);
    expect_message(msg, "exclude", k_low_space);
    assert_false(conf_present("excluded_locality", g_zone));
    assert_int_equal(exclude("failed_locality", g_zone, NULL, msg, sizeof msg), 2117);
    expect_message(msg, "exclude failed", k_low_space);
    assert_int_equal(exclude("excluded_locality", "locality_zoneid:elsewhere", NULL, msg, sizeof msg), 0);
    assert_true(conf_present("excluded_locality", "locality_zoneid:elsewhere"));
    assert_int_equal(exclude("failed_locality", "locality_zoneid:elsewhere", NULL, msg, sizeof msg), 0);
    assert_true(conf_present("failed_locality", "locality_zoneid:elsewhere"));
    assert_int_equal(exclude("excluded_locality", g_zone, "excluded_locality", NULL, 0), 0);
    assert_true(conf_present("excluded_locality", g_zone));
    assert_int_equal(include_localities(), 0);
    assert_false(conf_present("excluded_locality", g_zone));
}

static int in_progress(char keys[][96], int cap, fdb_error_t *err)
{
    FDBTransaction *tr = api_tr();
    FDBFuture *f = fdb_transaction_get_range(tr, S(MG "in_progress_exclusion/"), SL(MG "in_progress_exclusion/"), 0, 1,
                                             S(MG "in_progress_exclusion0"), SL(MG "in_progress_exclusion0"), 0, 1, 0,
                                             0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    *err = api_wait(f);
    int n = 0;
    if (!*err) {
        const FDBKeyValue *kv;
        fdb_bool_t more;
        int count = 0;
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &count, &more), 0);
        for (int i = 0; i < count && n < cap; i++, n++) {
            int skip = SL(MG "in_progress_exclusion/");
            assert_true(kv[i].key_length > skip && kv[i].key_length - skip < 96);
            memcpy(keys[n], (const char *)kv[i].key + skip, (size_t)(kv[i].key_length - skip));
            keys[n][kv[i].key_length - skip] = 0;
        }
    }
    fdb_future_destroy(f);
    fdb_transaction_destroy(tr);
    return n;
}

static bool listed(char keys[][96], int n, const char *addr)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], addr) == 0)
            return true;
    return false;
}

static void test_in_progress(void **state)
{
    (void)state;
    char keys[64][96];
    fdb_error_t e;
    assert_int_equal(in_progress(keys, 64, &e), 0);
    assert_int_equal(e, 0);
    /* an unrelated address excluded: nothing holds data there */
    assert_int_equal(exclude("excluded", "10.9.9.9", NULL, NULL, 0), 0);
    assert_int_equal(in_progress(keys, 64, &e), 0);
    assert_int_equal(e, 0);
    /* the process's own address (force): its log is there */
    assert_int_equal(exclude("excluded", g_self, "excluded", NULL, 0), 0);
    int n = in_progress(keys, 64, &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 1);
    assert_string_equal(keys[0], g_self);
    /* one storage server as failed (force): its address joins, in text order */
    assert_int_equal(exclude("failed", g_storage, "failed", NULL, 0), 0);
    n = in_progress(keys, 64, &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 2);
    assert_true(listed(keys, n, g_self));
    assert_true(listed(keys, n, g_storage));
    assert_false(listed(keys, n, "10.9.9.9"));
    assert_true(strcmp(keys[0], keys[1]) < 0);
    assert_int_equal(include_all(), 0);
    assert_int_equal(in_progress(keys, 64, &e), 0);
    assert_int_equal(e, 0);
    /* the process's zone (force): the storage server whose \xff/serverList/ locality has that
     * zoneid (cfdb-server gives each storage server its own machine id; the process reports the
     * first one's), not the log (\xff/logs holds no locality) */
    assert_int_equal(exclude("excluded_locality", g_zone, "excluded_locality", NULL, 0), 0);
    n = in_progress(keys, 64, &e);
    assert_int_equal(e, 0);
    assert_int_equal(n, 1);
    assert_false(listed(keys, n, g_self));
    assert_int_equal(strncmp(keys[0], "127.0.0.1:", 10), 0);
    assert_int_equal(exclude("excluded_locality", "locality_zoneid:elsewhere", "excluded_locality", NULL, 0), 0);
    assert_int_equal(in_progress(keys, 64, &e), 1);
    assert_int_equal(include_localities(), 0);
    assert_int_equal(in_progress(keys, 64, &e), 0);
}

/* One in_progress_exclusion/ read in tr: its row count, or -error. */
static int in_progress_in(FDBTransaction *tr)
{
    FDBFuture *f = fdb_transaction_get_range(tr, S(MG "in_progress_exclusion/"), SL(MG "in_progress_exclusion/"), 0, 1,
                                             S(MG "in_progress_exclusion0"), SL(MG "in_progress_exclusion0"), 0, 1, 0,
                                             0, FDB_STREAMING_MODE_WANT_ALL, 0, 0, 0);
    fdb_error_t e = api_wait(f);
    const FDBKeyValue *kv;
    fdb_bool_t more;
    int count = 0;
    if (!e)
        assert_int_equal(fdb_future_get_keyvalue_array(f, &kv, &count, &more), 0);
    fdb_future_destroy(f);
    return e ? -e : count;
}

/* ExclusionInProgressRangeImpl reads through ryw->getTransaction(): the transaction's own
 * (uncommitted) \xff/conf/excluded/ write is not seen, and each read asks the storage servers
 * at the read version, so a read after the 5 s MVCC window answers transaction_too_old (1007)
 * rather than a remembered answer; fdbcli's exclude wait relies on that to move on. */
static void test_in_progress_reads_beneath_ryw(void **state)
{
    (void)state;
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0), 0);
    char key[96];
    snprintf(key, sizeof key, "\xff/conf/excluded/%s", g_self);
    fdb_transaction_set(tr, S(key), (int)strlen(key), S(""), 0);
    assert_int_equal(in_progress_in(tr), 0); /* the own write is not seen */
    struct timespec ts = { 6, 0 };
    nanosleep(&ts, NULL);
    assert_int_equal(in_progress_in(tr), -1007);
    fdb_transaction_destroy(tr);
}

/* An undecodable \xff/serverList/ value: serialization_failed, no crash; then removed. */
static void test_bad_server_list(void **state)
{
    (void)state;
    static const char key[] = "\xff/serverList/\xee\xee\xee\xee\xee\xee\xee\xee\xee\xee\xee\xee\xee\xee\xee\xee";
    static const uint8_t junk[][12] = { { 0 }, { 0, 0, 0, 0x73, 0xb0, 0, 0xdb, 0x1f, 0xff, 0xff, 0xff, 0x7f } };
    static const int junk_len[] = { 3, 12 };
    for (int j = 0; j < 2; j++) {
        FDBTransaction *tr = api_tr();
        fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
        fdb_transaction_set(tr, S(key), SL(key), junk[j], junk_len[j]);
        assert_int_equal(api_commit(tr), 0);
        fdb_transaction_destroy(tr);
        char keys[8][96];
        fdb_error_t e;
        in_progress(keys, 8, &e);
        assert_int_equal(e, 1044);
    }
    FDBTransaction *tr = api_tr();
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    fdb_transaction_clear(tr, S(key), SL(key));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    char keys[8][96];
    fdb_error_t e;
    in_progress(keys, 8, &e);
    assert_int_equal(e, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exclude_unrelated), cmocka_unit_test(test_exclude_self_refused),
        cmocka_unit_test(test_failed_checks),     cmocka_unit_test(test_force),
        cmocka_unit_test(test_localities),        cmocka_unit_test(test_in_progress),
        cmocka_unit_test(test_in_progress_reads_beneath_ryw),
        cmocka_unit_test(test_bad_server_list),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
