/* Coordinator changes: a client whose cluster file names coordinators that were replaced
 * follows their forward to the new ones, runs its transactions there, and rewrites the
 * cluster file with the new connection string (libfdb_c's behaviour: MonitorLeader's
 * forward handling and ClusterConnectionFile::persist). Two cfdb-servers play the old
 * and the new coordinators. */
#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_dir[64];
static pid_t g_old, g_new;
static pthread_t g_net;

static void *network_main(void *arg)
{
    (void)arg;
    fdb_run_network();
    return NULL;
}

/* With a control port, the server picks a free one and prints it on stderr (log_file). */
static pid_t start_server(const char *cluster_file, const char *control_port, const char *log_file)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (log_file && !freopen(log_file, "w", stderr))
            _exit(126);
        if (control_port)
            execl(CFDB_SERVER_PATH, "cfdb-server", "--listen", "127.0.0.1:0", "--cluster-file", cluster_file,
                  "--description", "moving", "--cluster-id", "abc123", "--control-port", control_port, "--quiet",
                  (char *)NULL);
        else
            execl(CFDB_SERVER_PATH, "cfdb-server", "--listen", "127.0.0.1:0", "--cluster-file", cluster_file,
                  "--description", "moving", "--cluster-id", "abc123", "--quiet", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 300 && access(cluster_file, R_OK) != 0; i++)
        usleep(10000);
    return pid;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static int setup(void **state)
{
    strcpy(g_dir, "/tmp/cfdb-coord-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    if (fdb_select_api_version(FDB_API_VERSION) || fdb_setup_network())
        return -1;
    pthread_create(&g_net, NULL, network_main, NULL);
    return 0;
}

static int teardown(void **state)
{
    fdb_stop_network();
    pthread_join(g_net, NULL);
    if (g_old)
        kill(g_old, SIGTERM);
    if (g_new)
        kill(g_new, SIGTERM);
    waitpid(g_old, NULL, 0);
    waitpid(g_new, NULL, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static fdb_error_t wait_error(FDBFuture *f)
{
    fdb_future_block_until_ready(f);
    fdb_error_t e = fdb_future_get_error(f);
    fdb_future_destroy(f);
    return e;
}

static void test_client_follows_forward_and_rewrites_cluster_file(void **state)
{
    char old_file[128], new_file[128], client_file[128], port[16];
    snprintf(old_file, sizeof old_file, "%s/old.cluster", g_dir);
    snprintf(new_file, sizeof new_file, "%s/new.cluster", g_dir);
    snprintf(client_file, sizeof client_file, "%s/client.cluster", g_dir);
    char log[128];
    snprintf(log, sizeof log, "%s/old.log", g_dir);
    g_new = start_server(new_file, NULL, NULL);
    g_old = start_server(old_file, "0", log);
    int control = 0;
    for (int i = 0; i < 300 && !control; i++) {
        const char *l = read_file(log);
        const char *p = l ? strstr(l, "control port ") : NULL;
        if (p)
            control = atoi(p + 13);
        else
            usleep(10000);
    }
    assert_true(control > 0);
    snprintf(port, sizeof port, "%d", control);
    char new_string[256], old_string[256];
    const char *t = read_file(new_file);
    assert_non_null(t);
    size_t n = strcspn(t, "\n");
    assert_true(n < sizeof new_string);
    memcpy(new_string, t, n);
    new_string[n] = 0;
    t = read_file(old_file);
    assert_non_null(t);
    n = strcspn(t, "\n");
    assert_true(n < sizeof old_string);
    memcpy(old_string, t, n);
    old_string[n] = 0;
    assert_string_not_equal(new_string, old_string);

    /* the old coordinators now forward to the new ones */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --control %s forward '%s' > /dev/null", CFDB_SERVER_PATH, port, new_string);
    assert_int_equal(system(cmd), 0);

    FILE *f = fopen(client_file, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", old_string);
    fclose(f);
    FDBDatabase *db;
    assert_int_equal(fdb_create_database(client_file, &db), 0);
    FDBTransaction *tr;
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    fdb_transaction_set(tr, (const uint8_t *)"moved", 5, (const uint8_t *)"yes", 3);
    assert_int_equal(wait_error(fdb_transaction_commit(tr)), 0);
    fdb_transaction_destroy(tr);
    fdb_database_destroy(db);

    /* the write went to the new cluster: read it through the new cluster file */
    assert_int_equal(fdb_create_database(new_file, &db), 0);
    assert_int_equal(fdb_database_create_transaction(db, &tr), 0);
    FDBFuture *g = fdb_transaction_get(tr, (const uint8_t *)"moved", 5, 0);
    fdb_future_block_until_ready(g);
    fdb_bool_t present;
    const uint8_t *v;
    int len;
    assert_int_equal(fdb_future_get_value(g, &present, &v, &len), 0);
    assert_true(present);
    assert_int_equal(len, 3);
    fdb_future_destroy(g);
    fdb_transaction_destroy(tr);
    fdb_database_destroy(db);

    /* and the client's cluster file now names the new coordinators */
    const char *text = read_file(client_file);
    assert_non_null(text);
    assert_non_null(strstr(text, new_string));
    assert_non_null(strstr(text, "# DO NOT EDIT!"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_follows_forward_and_rewrites_cluster_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
