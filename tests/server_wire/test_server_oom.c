/* cfdb-server out of memory, with the exact code where it surfaces: FoundationDB 7.3 has no
 * out-of-memory code and a failed allocation inside fdbserver's actors becomes 4000
 * unknown_error, so
 *   - a storage read whose reply cannot be allocated answers the in-band error 4000
 *     (GetKeyValuesReply.error), and the server goes on serving the same read afterwards;
 *   - the control command `snapshot start` that cannot allocate its job answers
 *     "err snapshot failed to start: 4000", and a later one works.
 * Allocation failures are injected with the linker's --wrap: while armed, allocations of
 * [g_fail_from, g_fail_to) bytes fail. For the read, 16000..40000 bytes are the storage
 * server's reply arena growing for 400 rows (its blocks double from 4 KB); the wire
 * client's own buffers are smaller (request, decode) or larger (the 1.6 MB frame). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "error_codes.h"
#include "server_embed.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);

static size_t g_fail_from, g_fail_to; /* allocations of [from, to) bytes fail; 0: off */
static unsigned g_failed;

void *__wrap_malloc(size_t n)
{
    if (g_fail_from && n >= g_fail_from && n < g_fail_to) {
        g_failed++;
        return NULL;
    }
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    if (g_fail_from && m && n * m >= g_fail_from && n * m < g_fail_to) {
        g_failed++;
        return NULL;
    }
    return __real_calloc(n, m);
}

#define VLEN 4000
#define NKEYS 400

static void fill(se_fx *f)
{
    static char val[VLEN + 1];
    memset(val, 'v', VLEN);
    for (int i = 0; i < NKEYS; i += 5) {
        wc_txn t;
        memset(&t, 0, sizeof t);
        t.read_snapshot = wc_grv(&f->w);
        for (int k = i; k < i + 5; k++) {
            char *key = cfdb_arena_alloc(&f->a, 16);
            assert_non_null(key);
            snprintf(key, 16, "k%04d", k);
            wc_txn_set(&t, &f->a, key, val);
        }
        cfdb_commit_id id;
        assert_int_equal(wc_commit(&f->w, &t, &id, &f->a), 0);
    }
}

static int read_all(se_fx *f, cfdb_get_key_values_reply *r)
{
    cfdb_uid ss;
    assert_int_equal(wc_locate(&f->w, CFDB_BYTES_LIT("k"), &ss, NULL, NULL, &f->a), 0);
    return wc_get_range(&f->w, ss, (cfdb_key_selector){ CFDB_BYTES_LIT("k"), false, 1 },
                        (cfdb_key_selector){ CFDB_BYTES_LIT("l"), false, 1 }, wc_grv(&f->w), 10000, 10000000, r,
                        &f->a);
}

static void test_storage_read_oom(void **state)
{
    (void)state;
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.storage_servers = 1;
    se_fx f;
    assert_int_equal(se_start(&f, &cfg), 0);
    fill(&f);
    cfdb_get_key_values_reply r;
    g_failed = 0;
    g_fail_from = 16000;
    g_fail_to = 40000;
    int rc = read_all(&f, &r);
    g_fail_from = 0;
    assert_true(g_failed > 0);
    assert_int_equal(rc, CFDB_ERR_UNKNOWN_ERROR); /* 4000 */
    /* memory back: the same read answers every row */
    assert_int_equal(read_all(&f, &r), 0);
    assert_int_equal(r.data.count, NKEYS);
    se_stop(&f);
}

static void test_snapshot_start_oom(void **state)
{
    (void)state;
    char dir[64], data[96];
    snprintf(dir, sizeof dir, "/tmp/cfdb-oomXXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(data, sizeof data, "%s/data", dir);
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.quiet = true;
    cfg.storage_servers = 1;
    cfg.datadir = data;
    se_fx f;
    assert_int_equal(se_start(&f, &cfg), 0);
    char out[256];
    g_failed = 0;
    g_fail_from = 1; /* every allocation */
    g_fail_to = SIZE_MAX;
    cfdb_server_control(f.srv, "snapshot start", out, sizeof out);
    g_fail_from = 0;
    assert_true(g_failed > 0);
    assert_string_equal(out, "err snapshot failed to start: 4000");
    cfdb_server_control(f.srv, "snapshot", out, sizeof out);
    assert_string_equal(out, "ok snapshot written");
    se_stop(&f);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_storage_read_oom),
        cmocka_unit_test(test_snapshot_start_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
