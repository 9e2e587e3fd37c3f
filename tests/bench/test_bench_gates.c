/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench gates: client CPU quiescence from /proc/stat samples and server
 * health from \xff\xff/status/json documents; plus the JSON reader they use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gates.h"
#include "json_reader.h"

static const bench_quiet_limits LIM = {0.15, 0.05, 0.01, 0};

/* Two CPUs; each line: user nice system idle iowait irq softirq steal. */
static void make_stat(char *buf, size_t len, unsigned long long busy0, unsigned long long idle0,
                      unsigned long long busy1, unsigned long long idle1)
{
    snprintf(buf, len,
             "cpu  %llu 0 0 %llu 0 0 0 0 0 0\n"
             "cpu0 %llu 0 0 %llu 0 0 0 0 0 0\n"
             "cpu1 %llu 0 0 %llu 0 0 0 0 0 0\n"
             "intr 12345\nctxt 999\n",
             busy0 + busy1, idle0 + idle1, busy0, idle0, busy1, idle1);
}

static void eval(unsigned long long b0, unsigned long long i0, unsigned long long b1,
                 unsigned long long i1, bench_quiet_result *r)
{
    static bench_cpu_sample a, b;
    char t0[512], t1[512];
    make_stat(t0, sizeof t0, 1000, 1000, 1000, 1000);
    make_stat(t1, sizeof t1, 1000 + b0, 1000 + i0, 1000 + b1, 1000 + i1);
    assert_int_equal(bench_parse_proc_stat(t0, &a), 0);
    assert_int_equal(bench_parse_proc_stat(t1, &b), 0);
    assert_int_equal(a.ncpu, 2);
    bench_quiet_eval(&a, &b, &LIM, r);
}

static void test_quiet_eval(void **state)
{
    (void)state;
    bench_quiet_result r;
    eval(2, 98, 1, 99, &r); /* 2 %, 1 %: quiet */
    assert_true(r.pass);
    eval(20, 80, 0, 100, &r); /* one CPU at 20 % > 15 % */
    assert_false(r.pass);
    assert_int_equal(r.busiest_index, 0);
    assert_true(r.busiest_cpu > 0.19 && r.busiest_cpu < 0.21);
    assert_non_null(strstr(r.detail, "not quiescent"));
    eval(10, 90, 0, 100, &r); /* 10 % and 0 %: aggregate exactly 5 %, must be under */
    assert_false(r.pass);
    eval(8, 92, 1, 99, &r); /* 8 % and 1 %: aggregate 4.5 % */
    assert_true(r.pass);
    eval(15, 85, 0, 100, &r); /* busiest exactly at 15 %: allowed; aggregate 7.5 %: not */
    assert_false(r.pass);
    assert_true(r.aggregate > 0.07);
    /* iowait counts as idle */
    static bench_cpu_sample a;
    assert_int_equal(bench_parse_proc_stat("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", &a), 0);
    assert_int_equal((int)a.agg_total, 36);
    assert_int_equal((int)a.agg_busy, 27);
    assert_int_equal(bench_parse_proc_stat("garbage\n", &a), -1);
}

static void test_quiet_gate_on_file(void **state)
{
    (void)state;
    char path[] = "/tmp/cfdb-bench-stat-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char t[512];
    make_stat(t, sizeof t, 5, 95, 5, 95);
    assert_true(write(fd, t, strlen(t)) == (ssize_t)strlen(t));
    close(fd);
    bench_quiet_result r;
    bench_quiet_gate(&LIM, path, &r); /* no change between samples: quiet */
    assert_true(r.pass);
    assert_int_equal(r.attempts, 1);
    unlink(path);
    bench_quiet_gate(&LIM, path, &r); /* unreadable: the gate fails */
    assert_false(r.pass);
    assert_non_null(strstr(r.detail, "cannot read"));
}

static const bench_health_limits HL = {100e6, 0};

static void health(const char *json, bench_health_result *r)
{
    bench_health_eval(json, strlen(json), &HL, r);
}

static void test_health_eval(void **state)
{
    (void)state;
    bench_health_result r;
    health("{\"cluster\":{\"qos\":{\"worst_queue_bytes_log_server\":12345},"
           "\"data\":{\"moving_data\":{\"in_flight_bytes\":0,\"in_queue_bytes\":0}}}}", &r);
    assert_int_equal(r.verdict, BENCH_HEALTH_PASS);
    assert_true(r.log_queue_bytes == 12345);
    assert_true(r.moving_bytes == 0);

    health("{\"cluster\":{\"qos\":{\"worst_queue_bytes_log_server\":150000000},"
           "\"data\":{\"moving_data\":{\"in_flight_bytes\":0,\"in_queue_bytes\":0}}}}", &r);
    assert_int_equal(r.verdict, BENCH_HEALTH_FAIL);
    assert_non_null(strstr(r.detail, "worst log queue 150000000 bytes > limit"));

    health("{\"cluster\":{\"qos\":{\"worst_queue_bytes_log_server\":0},"
           "\"data\":{\"moving_data\":{\"in_flight_bytes\":1000,\"in_queue_bytes\":24}}}}", &r);
    assert_int_equal(r.verdict, BENCH_HEALTH_FAIL);
    assert_true(r.moving_bytes == 1024);
    assert_non_null(strstr(r.detail, "data moving 1024 bytes > limit"));

    health("{\"cluster\":{\"qos\":{\"worst_queue_bytes_log_server\":0}}}", &r);
    assert_int_equal(r.verdict, BENCH_HEALTH_UNVERIFIED);
    assert_non_null(strstr(r.detail, "data movement not reported"));

    health("{\"cluster\":{\"qos\":{\"worst_queue_bytes_log_server\":999999999}}}", &r);
    assert_int_equal(r.verdict, BENCH_HEALTH_FAIL); /* a failure beats a missing field */

    health("not json", &r);
    assert_int_equal(r.verdict, BENCH_HEALTH_UNVERIFIED);
    assert_string_equal(bench_health_name(BENCH_HEALTH_FAIL), "fail");
}

static void test_json_reader(void **state)
{
    (void)state;
    const char *doc = " {\"a\": {\"b\": [1, 2.5e3, -3], \"s\": \"x\\\"y\\u00e9\\n\", \"t\": true,"
                      " \"n\": null}, \"e\": {}, \"f\": []} ";
    cfdb_jv *v = cfdb_jv_parse(doc, strlen(doc));
    assert_non_null(v);
    const cfdb_jv *arr = cfdb_jv_path(v, "a.b");
    assert_non_null(arr);
    assert_int_equal(arr->type, JSON_ARRAY);
    assert_int_equal(arr->count, 3);
    double d1, d2;
    assert_true(cfdb_jv_number(arr->items[1], &d1));
    assert_true(cfdb_jv_number(arr->items[2], &d2));
    assert_true(d1 == 2500);
    assert_true(d2 == -3);
    /* a \uXXXX escape keeps its low byte (the shared reader follows json_spirit) */
    assert_string_equal(cfdb_jv_path_string(v, "a.s"), "x\"y\xe9\n");
    assert_int_equal(cfdb_jv_path(v, "a.t")->type, JSON_BOOL);
    assert_int_equal(cfdb_jv_path(v, "a.n")->type, JSON_NULL);
    assert_null(cfdb_jv_path(v, "a.zzz"));
    double d;
    assert_false(cfdb_jv_path_number(v, "a.s", &d));
    cfdb_jv_free(v);
    assert_null(cfdb_jv_parse("{\"a\":}", 6));
    assert_null(cfdb_jv_parse("[1,2", 4));
    assert_null(cfdb_jv_parse("{} x", 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quiet_eval),
        cmocka_unit_test(test_quiet_gate_on_file),
        cmocka_unit_test(test_health_eval),
        cmocka_unit_test(test_json_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
