/* cfdb-server's configuration database node (src/server/config_node.c) through the wire, as a
 * 7.3.77 ConfigNode answers ConfigTransactionInterface (fdbserver/ConfigNode.actor.cpp):
 *  - getGeneration raises liveVersion by one, or to lastSeenLiveVersion + 1;
 *  - get of an unknown key is absent; a read at another generation is transaction_too_old;
 *  - commit at the current generation stores set mutations (every KnobValue alternative,
 *    with and without a config class) and point clears, and makes both versions the live one;
 *    a stale liveVersion is not_committed, a stale committedVersion commit_unknown_result;
 *  - getKnobs lists a class's (or the global) knob names, sorted;
 *  - the coordinators hash: libstdc++'s std::hash of the connection string is taken, another
 *    hash (or 0) after it is coordinators_changed; a node first shown another nonzero hash
 *    adopts it (see config_node.c) and then refuses the libstdc++ one;
 *  - getClasses has no reply promise on the wire in 7.3.77: no answer, the connection stays up;
 *  - the control port's status counts every request (config_requests=N);
 *  - cfdb's bounds: 4096 knobs, 8 MiB of names, classes and strings per node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config_messages.h"
#include "endpoint.h"
#include "error_codes.h"
#include "server_embed.h"

#define WAIT_NS 5000000000ull

static uint64_t g_hash;

static cfdb_uid tok(uint32_t id)
{
    return cfdb_well_known_token(id);
}

static int generation(se_fx *f, uint64_t hash, bool has_last, int64_t last, cfdb_config_generation *out)
{
    cfdb_config_get_generation_request q;
    memset(&q, 0, sizeof q);
    q.coordinatorsHash = hash;
    q.lastSeenLiveVersion.present = has_last;
    q.lastSeenLiveVersion.value = last;
    cfdb_config_get_generation_reply r;
    memset(&r, 0, sizeof r);
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, tok(CFDB_WLTOKEN_CONFIGTXN_GETGENERATION), &cfdb_msg_config_get_generation_request,
                             &q, &q.reply.token, &cfdb_msg_config_get_generation_reply, &r, &err, &f->a),
                     0);
    if (out)
        *out = r.generation;
    return err;
}

static int get(se_fx *f, uint64_t hash, cfdb_config_generation g, const char *cls, const char *name,
               cfdb_opt_knob_value *out)
{
    cfdb_config_get_request q;
    memset(&q, 0, sizeof q);
    q.coordinatorsHash = hash;
    q.generation = g;
    if (cls) {
        q.key.configClass.present = 1;
        q.key.configClass.value = cfdb_bytes_str(cls);
    }
    q.key.knobName = cfdb_bytes_str(name);
    cfdb_config_get_reply r;
    memset(&r, 0, sizeof r);
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, tok(CFDB_WLTOKEN_CONFIGTXN_GET), &cfdb_msg_config_get_request, &q, &q.reply.token,
                             &cfdb_msg_config_get_reply, &r, &err, &f->a),
                     0);
    if (out)
        *out = r.value;
    return err;
}

static int commit(se_fx *f, cfdb_config_generation g, cfdb_config_mutation *m, uint32_t n, const char *why)
{
    cfdb_config_commit_request q;
    memset(&q, 0, sizeof q);
    q.coordinatorsHash = g_hash;
    q.generation = g;
    q.mutations.items = m;
    q.mutations.count = n;
    q.annotation.timestamp = 1.5;
    q.annotation.description = cfdb_bytes_str(why);
    cfdb_void v;
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, tok(CFDB_WLTOKEN_CONFIGTXN_COMMIT), &cfdb_msg_config_commit_request, &q,
                             &q.reply.token, &cfdb_msg_void_reply, &v, &err, &f->a),
                     0);
    return err;
}

static int knobs(se_fx *f, cfdb_config_generation g, const char *cls, cfdb_bytes_vec *out)
{
    cfdb_config_get_knobs_request q;
    memset(&q, 0, sizeof q);
    q.coordinatorsHash = g_hash;
    q.generation = g;
    if (cls) {
        q.configClass.present = 1;
        q.configClass.value = cfdb_bytes_str(cls);
    }
    cfdb_config_get_knobs_reply r;
    memset(&r, 0, sizeof r);
    cfdb_reply_error err = 0;
    assert_int_equal(wc_call(&f->w, tok(CFDB_WLTOKEN_CONFIGTXN_GETKNOBS), &cfdb_msg_config_get_knobs_request, &q,
                             &q.reply.token, &cfdb_msg_config_get_knobs_reply, &r, &err, &f->a),
                     0);
    *out = r.knobNames;
    return err;
}

static bool eq(cfdb_bytes b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0;
}

static uint64_t config_requests(se_fx *f)
{
    char out[1024];
    cfdb_server_control(f->srv, "status", out, sizeof out);
    const char *p = strstr(out, "config_requests=");
    assert_non_null(p);
    return strtoull(p + strlen("config_requests="), NULL, 10);
}

static void start(se_fx *f)
{
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.cluster_id = "cfgdb001";
    assert_int_equal(se_start(f, &cfg), 0);
    const char *cs = cfdb_server_connection_string(f->srv);
    g_hash = cfdb_std_string_hash(cs, strlen(cs));
}

static cfdb_config_mutation set_m(const char *cls, const char *name, cfdb_knob_value v)
{
    cfdb_config_mutation m;
    memset(&m, 0, sizeof m);
    if (cls) {
        m.key.configClass.present = 1;
        m.key.configClass.value = cfdb_bytes_str(cls);
    }
    m.key.knobName = cfdb_bytes_str(name);
    m.value.present = 1;
    m.value.value = v;
    return m;
}

static void test_transactions(void **state)
{
    (void)state;
    se_fx f;
    start(&f);
    assert_int_equal(config_requests(&f), 0);
    cfdb_config_generation g;
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(g.committedVersion, 0);
    assert_int_equal(g.liveVersion, 1);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(g.liveVersion, 2);
    assert_int_equal(generation(&f, g_hash, true, 10, &g), 0);
    assert_int_equal(g.liveVersion, 11);
    assert_int_equal(generation(&f, g_hash, true, 3, &g), 0); /* a lower hint changes nothing */
    assert_int_equal(g.liveVersion, 12);

    cfdb_opt_knob_value v;
    assert_int_equal(get(&f, g_hash, g, NULL, "test", &v), 0);
    assert_false(v.present);
    assert_int_equal(get(&f, g_hash, (cfdb_config_generation){ 0, 11 }, NULL, "test", &v),
                     CFDB_ERR_TRANSACTION_TOO_OLD);

    cfdb_config_mutation m[5] = {
        set_m(NULL, "knob_int", (cfdb_knob_value){ .tag = CFDB_KNOB_INT, .i = -7 }),
        set_m("c1", "knob_str", (cfdb_knob_value){ .tag = CFDB_KNOB_STRING, .s = cfdb_bytes_str("xyz") }),
        set_m("c1", "knob_dbl", (cfdb_knob_value){ .tag = CFDB_KNOB_DOUBLE, .d = 0.5 }),
        set_m(NULL, "knob_i64", (cfdb_knob_value){ .tag = CFDB_KNOB_INT64, .l = INT64_C(1) << 50 }),
        set_m("c2", "knob_bool", (cfdb_knob_value){ .tag = CFDB_KNOB_BOOL, .b = true }),
    };
    assert_int_equal(commit(&f, g, m, 5, "first"), 0);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(g.committedVersion, 12);
    assert_int_equal(g.liveVersion, 13);
    assert_int_equal(get(&f, g_hash, g, NULL, "knob_int", &v), 0);
    assert_true(v.present && v.value.tag == CFDB_KNOB_INT && v.value.i == -7);
    assert_int_equal(get(&f, g_hash, g, "c1", "knob_str", &v), 0);
    assert_true(v.present && v.value.tag == CFDB_KNOB_STRING && eq(v.value.s, "xyz"));
    assert_int_equal(get(&f, g_hash, g, "c1", "knob_dbl", &v), 0);
    assert_true(v.present && v.value.tag == CFDB_KNOB_DOUBLE && v.value.d == 0.5);
    assert_int_equal(get(&f, g_hash, g, NULL, "knob_i64", &v), 0);
    assert_true(v.present && v.value.tag == CFDB_KNOB_INT64 && v.value.l == INT64_C(1) << 50);
    assert_int_equal(get(&f, g_hash, g, "c2", "knob_bool", &v), 0);
    assert_true(v.present && v.value.tag == CFDB_KNOB_BOOL && v.value.b);
    /* the class is part of the key */
    assert_int_equal(get(&f, g_hash, g, NULL, "knob_str", &v), 0);
    assert_false(v.present);
    assert_int_equal(get(&f, g_hash, g, "c2", "knob_int", &v), 0);
    assert_false(v.present);

    cfdb_bytes_vec names;
    assert_int_equal(knobs(&f, g, "c1", &names), 0);
    assert_int_equal(names.count, 2);
    assert_true(eq(names.items[0], "knob_dbl") && eq(names.items[1], "knob_str"));
    assert_int_equal(knobs(&f, g, NULL, &names), 0);
    assert_int_equal(names.count, 2);
    assert_true(eq(names.items[0], "knob_i64") && eq(names.items[1], "knob_int"));
    assert_int_equal(knobs(&f, g, "none", &names), 0);
    assert_int_equal(names.count, 0);

    /* stale generations */
    cfdb_config_generation old = g;
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(g.liveVersion, 14);
    assert_int_equal(commit(&f, old, m, 1, "late"), CFDB_ERR_NOT_COMMITTED);
    assert_int_equal(commit(&f, (cfdb_config_generation){ 0, 14 }, m, 1, "old"), CFDB_ERR_COMMIT_UNKNOWN_RESULT);
    assert_int_equal(knobs(&f, old, "c1", &names), CFDB_ERR_TRANSACTION_TOO_OLD);

    /* a point clear */
    cfdb_config_mutation clr;
    memset(&clr, 0, sizeof clr);
    clr.key.configClass.present = 1;
    clr.key.configClass.value = cfdb_bytes_str("c1");
    clr.key.knobName = cfdb_bytes_str("knob_str");
    assert_int_equal(commit(&f, g, &clr, 1, "clear"), 0);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(g.committedVersion, 14);
    assert_int_equal(get(&f, g_hash, g, "c1", "knob_str", &v), 0);
    assert_false(v.present);
    assert_int_equal(knobs(&f, g, "c1", &names), 0);
    assert_int_equal(names.count, 1);
    assert_true(eq(names.items[0], "knob_dbl"));

    /* 4 + 2 + 1 + 1 + 5 + 2 + 3 + 1 + 2 + 1 + 1 + 1 + 1 + 1 requests above */
    assert_int_equal(config_requests(&f), 26);
    se_stop(&f);
}

static void test_coordinators_hash(void **state)
{
    (void)state;
    se_fx f;
    start(&f);
    cfdb_config_generation g;
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(generation(&f, g_hash + 1, false, 0, &g), CFDB_ERR_COORDINATORS_CHANGED);
    assert_int_equal(generation(&f, 0, false, 0, &g), CFDB_ERR_COORDINATORS_CHANGED);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(get(&f, g_hash ^ 0x10, g, NULL, "test", NULL), CFDB_ERR_COORDINATORS_CHANGED);
    char none[1024];
    cfdb_server_control(f.srv, "status", none, sizeof none);
    assert_non_null(strstr(none, " config_hash_adopted=0"));
    se_stop(&f);

    /* a node first shown another hash (a libc++ libfdb_c) takes it, then holds to it */
    start(&f);
    assert_int_equal(generation(&f, 0, false, 0, &g), CFDB_ERR_COORDINATORS_CHANGED);
    assert_int_equal(generation(&f, 12345, false, 0, &g), 0);
    assert_int_equal(generation(&f, 12345, false, 0, &g), 0);
    assert_int_equal(g.liveVersion, 2);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), CFDB_ERR_COORDINATORS_CHANGED);
    char out[1024];
    cfdb_server_control(f.srv, "status", out, sizeof out);
    assert_non_null(strstr(out, " config_hash_adopted=1"));
    se_stop(&f);
}

static void test_get_classes_unanswerable(void **state)
{
    (void)state;
    se_fx f;
    start(&f);
    cfdb_config_get_classes_request q = { g_hash, { 0, 0 } };
    cfdb_uid none = { 0, 0 };
    wc_send(&f.w, tok(CFDB_WLTOKEN_CONFIGTXN_GETCLASSES), &cfdb_msg_config_get_classes_request, &q, &none);
    wc_pump(&f.w, 200000000ull);
    assert_false(f.w.closed);
    assert_int_equal(config_requests(&f), 1);
    cfdb_config_generation g;
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0); /* the connection still serves */
    assert_int_equal(config_requests(&f), 2);
    se_stop(&f);
}

/* cfdb's bounds on what a node keeps (config_node.c): CN_MAX_KNOBS (4096) entries and
 * CN_MAX_BYTES (8 MiB) of names, classes and string values; a commit that could pass either is
 * not_committed and applies nothing */
static void test_bounds(void **state)
{
    (void)state;
    se_fx f;
    start(&f);
    enum { N = 4097 };
    cfdb_config_mutation *m = calloc(N, sizeof *m);
    char (*names)[16] = calloc(N, 16);
    assert_non_null(m);
    assert_non_null(names);
    for (int i = 0; i < N; i++) {
        snprintf(names[i], 16, "k%05d", i);
        m[i] = set_m(NULL, names[i], (cfdb_knob_value){ .tag = CFDB_KNOB_INT, .i = i });
    }
    cfdb_config_generation g;
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(commit(&f, g, m, N, "too many"), CFDB_ERR_NOT_COMMITTED);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(g.committedVersion, 0);
    cfdb_bytes_vec list;
    assert_int_equal(knobs(&f, g, NULL, &list), 0);
    assert_int_equal(list.count, 0);
    assert_int_equal(commit(&f, g, m, N - 1, "just enough"), 0);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(knobs(&f, g, NULL, &list), 0);
    assert_int_equal(list.count, N - 1);

    se_stop(&f);

    /* bytes, on a fresh node: a string of 8 MiB - 3 with its class and name is too big */
    start(&f);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    size_t big = (8u << 20) - 3; /* with "c" and "big": one byte over */
    uint8_t *blob = malloc(big);
    assert_non_null(blob);
    memset(blob, 'v', big);
    cfdb_config_mutation s1 = set_m("c", "big", (cfdb_knob_value){ .tag = CFDB_KNOB_STRING,
                                                                   .s = cfdb_bytes_make(blob, big) });
    assert_int_equal(commit(&f, g, &s1, 1, "too big"), CFDB_ERR_NOT_COMMITTED);
    cfdb_opt_knob_value v;
    assert_int_equal(get(&f, g_hash, g, "c", "big", &v), 0);
    assert_false(v.present);
    s1.value.value.s.len = 1000;
    assert_int_equal(commit(&f, g, &s1, 1, "fits"), 0);
    assert_int_equal(generation(&f, g_hash, false, 0, &g), 0);
    assert_int_equal(get(&f, g_hash, g, "c", "big", &v), 0);
    assert_true(v.present && v.value.s.len == 1000);
    /* what the node holds counts: 1 + 3 + 1000 held, then 1 + 4 + (8 MiB - 1008) is one over */
    cfdb_config_mutation s2 = set_m("c", "big2", (cfdb_knob_value){ .tag = CFDB_KNOB_STRING,
                                                                    .s = cfdb_bytes_make(blob, (8u << 20) - 1008) });
    assert_int_equal(commit(&f, g, &s2, 1, "over"), CFDB_ERR_NOT_COMMITTED);
    s2.value.value.s.len--;
    assert_int_equal(commit(&f, g, &s2, 1, "exactly full"), 0);
    free(blob);
    free(names);
    free(m);
    se_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_coordinators_hash),
        cmocka_unit_test(test_get_classes_unanswerable),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
