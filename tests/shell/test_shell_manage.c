/* SPDX-License-Identifier: Apache-2.0 */
/* The cfdb shell's exclude and coordinators changes end to end against a cfdb-server with a
 * second coordination server (--coordinator Q), with the library's exclusion safety check,
 * in_progress_exclusion/ and coordinator changes. Expected texts are fdbcli 7.3.77's
 * (fdbcli/ExcludeCommand.actor.cpp, CoordinatorsCommand.actor.cpp, and the management
 * messages of fdbclient/SpecialKeySpace.actor.cpp / ManagementAPI.actor.cpp); effects are
 * checked through fdb_c.h. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_helpers.h"
#include "free_port.h"
#include "shell_driver.h"

static const char *cf(void) { return g_env.server.cluster_file; }

static shell_run R;
static char g_addr[64];  /* the server's (and first coordinator's) address */
static char g_q[64];     /* the second coordination server */
static char g_q_port[8];

#define CASES(...)                                                                  \
    do {                                                                            \
        const shell_case cases_[] = { __VA_ARGS__ };                                \
        char why_[8192];                                                            \
        if (shell_run_cases(&R, cf(), cases_, sizeof cases_ / sizeof *cases_, why_, \
                            sizeof why_))                                           \
            fail_msg("%s", why_);                                                   \
    } while (0)
#define C(l, o, e, st) { .line = (l), .out = (o), .err = (e), .status = (st) }

static const char WAITING[] = "Waiting for state to be removed from all excluded servers. This may take a while.\n"
                              "(Interrupting this wait with CTRL+C will not cancel the data movement.)\n";

/* stdout after coordinator warnings */
static const char COORD_HINT[] = "Type `help coordinators' for information on how to change the\n"
                                 "cluster's coordination servers before removing them.\n";

static bool special_present(const char *key)
{
    char buf[256];
    FDBTransaction *tr = api_tr();
    int present = 0, len = 0;
    assert_int_equal(api_get(tr, key, (int)strlen(key), 0, &present, buf, sizeof buf, &len), 0);
    fdb_transaction_destroy(tr);
    return present != 0;
}

static void coordinators_show(const char *desc, const char *procs)
{
    char want[512];
    snprintf(want, sizeof want,
             "Cluster description: %s\nCluster coordinators (1): %s\n"
             "Type `help coordinators' to learn how to change this information.\n",
             desc, procs);
    CASES(C("coordinators", want, "", 0));
}

static void test_coordinators_change(void **state)
{
    (void)state;
    char line[256], err[256];
    coordinators_show("cfdb", g_addr);
    snprintf(line, sizeof line, "coordinators %s", g_addr);
    CASES(C(line, "No change (existing configuration satisfies request)\n", "", 0),
          C("coordinators auto", "No change (existing configuration satisfies request)\n", "", 0),
          C("coordinators 1.2.3", "", "ERROR: '1.2.3' is not a valid network endpoint address\n", 0),
          C("coordinators description=bad-desc", "", "ERROR: Cluster description must match [A-Za-z0-9_]+\n", 1));
    snprintf(line, sizeof line, "coordinators 127.0.0.1:%s 127.0.0.01:%s", g_q_port, g_q_port);
    snprintf(err, sizeof err, "ERROR: passed redundant coordinators: `%s'\n", g_q);
    CASES(C(line, "", err, 0));
    /* a change answers commit_unknown_result, and the retry finds it made */
    CASES(C("coordinators description=newdesc", "Coordination state changed\n", "", 0));
    coordinators_show("newdesc", g_addr);
    snprintf(line, sizeof line, "coordinators %s", g_q);
    CASES(C(line, "Coordination state changed\n", "", 0));
    coordinators_show("newdesc", g_q);
    snprintf(line, sizeof line, "coordinators %s description=cfdb", g_addr);
    CASES(C(line, "Coordination state changed\n", "", 0));
    coordinators_show("cfdb", g_addr);
    CASES(C("get k", "`k': not found\n", "", 0));
}

/* the server's locality zoneid, from the shell's status json */
static void server_zone(char *out, size_t cap)
{
    CASES(C("status json", NULL, "", 0));
    const char *z = strstr(R.out, "\"zoneid\" : \"");
    assert_non_null(z);
    z += strlen("\"zoneid\" : \"");
    size_t n = strcspn(z, "\"");
    assert_true(n < cap);
    memcpy(out, z, n);
    out[n] = 0;
}

static void test_exclude(void **state)
{
    (void)state;
    char line[256], out[1024], err[1024], key[128];
    CASES(C("exclude 10.0.0.1:4500", WAITING,
            "  10.0.0.1:4500  ---- WARNING: Missing from cluster! Be sure that you excluded the correct processes "
            "before removing them from the cluster!\n",
            0),
          C("exclude FORCE no_wait 10.0.0.2", "",
            "  10.0.0.2(Whole machine)  ---- WARNING: Missing from cluster!Be sure that you excluded the correct "
            "machines before removing them from the cluster!\n",
            0));
    assert_true(special_present("\xff\xff/management/excluded/10.0.0.1:4500"));
    assert_true(special_present("\xff\xff/management/excluded/10.0.0.2"));
    CASES(C("include all", "", "", 0),
          C("exclude bogus", "", "ERROR: 'bogus' is neither a valid network endpoint address nor a locality\n", 0),
          C("exclude 10.0.0.1:4500:tls", "        Do not include the `:tls' suffix when naming a process\n",
            "ERROR: '10.0.0.1:4500:tls' is neither a valid network endpoint address nor a locality\n", 0),
          C("exclude FORCE no_wait", "",
            "ERROR: At least one valid network endpoint address or a locality must be provided\n", 1));
    /* the only storage server: the library's free-space check refuses; fdbcli's hint is chosen by
     * "free space" in the last line, which libfdb_c's text does not have */
    snprintf(line, sizeof line, "exclude %s", g_addr);
    CASES(C(line, "",
            "ERROR: This exclude may cause the total available space in the cluster to drop below 10%.\n"
            "Type `exclude FORCE failed <ADDRESS...>' to exclude without performing safety checks.\n",
            1));
    snprintf(key, sizeof key, "\xff\xff/management/excluded/%s", g_addr);
    assert_false(special_present(key));
    /* forced, not waited for: still in progress, and a coordinator */
    snprintf(line, sizeof line, "exclude FORCE no_wait %s", g_addr);
    snprintf(err, sizeof err,
             "  %s  ---- WARNING: Exclusion in progress! It is not safe to remove this process from the cluster\n"
             "WARNING: %s is a coordinator!\n",
             g_addr, g_addr);
    CASES(C(line, COORD_HINT, err, 0));
    assert_true(special_present(key));
    CASES(C("include all", "", "", 0));
    /* a locality: the workers that match it are the exclusions reported */
    char zone[64], loc[96];
    server_zone(zone, sizeof zone);
    snprintf(loc, sizeof loc, "locality_zoneid:%s", zone);
    snprintf(line, sizeof line, "exclude FORCE no_wait %s locality_zoneid:nowhere", loc);
    snprintf(err, sizeof err,
             "  %s  ---- WARNING: Exclusion in progress! It is not safe to remove this process from the cluster\n"
             "  locality_zoneid:nowhere  ---- WARNING: Currently no servers found with this locality match! Be sure "
             "that you excluded the correct locality.\n"
             "WARNING: %s is a coordinator!\n",
             g_addr, g_addr);
    CASES(C(line, COORD_HINT, err, 0));
    snprintf(key, sizeof key, "\xff\xff/management/excluded_locality/%s", loc);
    assert_true(special_present(key));
    assert_true(special_present("\xff\xff/management/excluded_locality/locality_zoneid:nowhere"));
    snprintf(out, sizeof out,
             "There are currently 2 servers or localities being excluded from the database:\n"
             "  %s\n  locality_zoneid:nowhere\n"
             "To find out whether it is safe to remove one or more of these\n"
             "servers from the cluster, type `exclude <addresses>'.\n"
             "To return one of these servers to the cluster, type `include <addresses>'.\n"
             "\n"
             "There are currently 0 servers or localities marked as failed in the database:\n",
             loc);
    CASES(C("exclude", out, "", 0), C("include all", "", "", 0));
}

/* Without no_wait the shell waits until in_progress_exclusion/ no longer names the server:
 * here until the exclusion is taken back (through fdb_c.h) while it waits. */
static void test_exclude_waits(void **state)
{
    (void)state;
    char line[128], done[256];
    snprintf(line, sizeof line, "exclude FORCE %s", g_addr);
    const char *args[] = { "-C", cf(), "--exec", line, NULL };
    shell_pty p;
    assert_int_equal(shell_pty_start(&p, args, g_env.server.dir), 0);
    assert_int_equal(shell_pty_expect(&p, "(Interrupting this wait with CTRL+C will not cancel the data movement.)"), 0);
    /* time for a first look at in_progress_exclusion/, which names the server */
    nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 500 * 1000 * 1000 }, NULL);
    char key[128];
    snprintf(key, sizeof key, "\xff\xff/management/excluded/%s", g_addr);
    FDBTransaction *tr = api_tr();
    assert_int_equal(fdb_transaction_set_option(tr, FDB_TR_OPTION_SPECIAL_KEY_SPACE_ENABLE_WRITES, NULL, 0), 0);
    fdb_transaction_clear(tr, (const uint8_t *)key, (int)strlen(key));
    assert_int_equal(api_commit(tr), 0);
    fdb_transaction_destroy(tr);
    snprintf(done, sizeof done,
             "  %s  ---- Successfully excluded. It is now safe to remove this process from the cluster.", g_addr);
    assert_int_equal(shell_pty_expect(&p, done), 0);
    assert_int_equal(shell_pty_finish(&p), 0);
}

static int setup(void **state)
{
    (void)state;
    uint16_t q = test_free_port();
    if (!q)
        return -1;
    snprintf(g_q_port, sizeof g_q_port, "%u", q);
    snprintf(g_q, sizeof g_q, "127.0.0.1:%u", q);
    const char *args[] = { "--coordinator", g_q_port, NULL };
    if (api_env_setup(args))
        return -1;
    return shell_cluster_address(cf(), g_addr, sizeof g_addr);
}

static int teardown(void **state)
{
    (void)state;
    return api_env_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exclude),
        cmocka_unit_test(test_exclude_waits),
        cmocka_unit_test(test_coordinators_change),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
