/* Replays every request a real libfdb_c 7.3.77 sent in the golden captures
 * (tests/vectors/golden/NAME.frames.jsonl, in the order they were recorded) against an
 * in-process cfdb-server with one storage server, as the captured cluster had, and checks
 * that each request the real fdbserver answered gets an answer of the same message type
 * and error code, and that point reads return the same values.
 *
 * Destination tokens are translated from the captured server's interfaces to ours by
 * stream index; versions are shifted onto our clock (reads at or before the captured
 * read version read our newest data, reads ahead of it stay ahead by the same amount). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "endpoint.h"
#include "error_codes.h"
#include "server.h"
#include "wire_client.h"

#define SEC 1000000000ull
#define MS 1000000ull

/* The captured cluster's interfaces (one process, see tests/vectors/golden/README.md). */
static const cfdb_uid cap_grv = { 0xc80362e1d1ee08e5ull, 0x9b445cd200000071ull };
static const cfdb_uid cap_commit = { 0x15f4efa460670ff9ull, 0xa80b993b0000009aull };
static const cfdb_uid cap_ss = { 0xa88c5f166e85f4d7ull, 0x4e0fa88000000080ull };
static const cfdb_uid cap_status = { 0x1aa3bd8f0aa54999ull, 0x685a15380000001bull };

static const char *const scenarios[] = { "connect", "seed", "get", "get_key", "get_range", "writes", "atomic",
                                         "versionstamp", "conflict", "watch", "mapped_range", "metrics",
                                         "status", "system", "read_version_errors" };

typedef struct expect {
    cfdb_uid reply;
    uint32_t fid;
    uint16_t error;       /* ErrorOr error, 0 = item */
    int inband;           /* GetValue in-band error, -1 = not a GetValueReply */
    bool value_present;
    uint8_t *value;
    uint32_t value_len;
    bool is_commit;
    bool user_key;        /* GetValue of a key below \xff */
} expect;

typedef struct replay {
    cfdb_loop *loop;
    cfdb_server *srv;
    char key[128];
    wc w;
    cfdb_arena a;
    cfdb_uid ss, status;
    expect *ex;
    size_t nex, cap;
    /* request reply token -> key of GetValue, commit flag */
    struct {
        cfdb_uid reply;
        bool commit;
        bool user_key;
    } reqs[512];
    size_t nreqs;
    int64_t cap_latest;
    unsigned checked, values_checked;
} replay;

static int hexval(char c)
{
    return c <= '9' ? c - '0' : (c | 32) - 'a' + 10;
}

static uint8_t *unhex(const char *h, size_t n, uint32_t *len)
{
    uint8_t *p = malloc(n / 2 + 1);
    for (size_t i = 0; i + 1 < n; i += 2)
        p[i / 2] = (uint8_t)(hexval(h[i]) << 4 | hexval(h[i + 1]));
    *len = (uint32_t)(n / 2);
    return p;
}

static const char *field(const char *line, const char *name, size_t *len)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", name);
    const char *p = strstr(line, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    const char *e = strchr(p, '"');
    *len = (size_t)(e - p);
    return p;
}

static cfdb_uid parse_token(const char *p)
{
    cfdb_uid u = { 0, 0 };
    for (int i = 0; i < 16; i++)
        u.first = u.first << 4 | (uint64_t)hexval(p[i]);
    for (int i = 16; i < 32; i++)
        u.second = u.second << 4 | (uint64_t)hexval(p[i]);
    return u;
}

static bool same_interface(cfdb_uid t, cfdb_uid base, uint32_t *index)
{
    uint32_t idx = (uint32_t)((t.first - base.first) >> 32);
    if (idx < 64 && cfdb_uid_eq(cfdb_adjusted_token(base, idx), t)) {
        *index = idx;
        return true;
    }
    return false;
}

static int64_t map_version(replay *r, int64_t v)
{
    if (v < 0)
        return v;
    int64_t ours = wc_grv(&r->w);
    if (v <= r->cap_latest)
        return ours;
    return ours + (v - r->cap_latest);
}

/* Pass 1 over the s2c frames: expected replies, and the newest captured read version. */
static void load_expectations(replay *r, const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    r->cap_latest = 0;
    while (getline(&line, &cap, f) > 0) {
        size_t n, tn;
        const char *dir = field(line, "dir", &n);
        const char *kind = field(line, "kind", &n);
        if (!dir || strncmp(dir, "s2c", 3) || !kind || strncmp(kind, "frame", 5))
            continue;
        const char *tok = field(line, "token", &tn);
        const char *hex = field(line, "hex", &n);
        uint32_t len;
        uint8_t *msg = unhex(hex, n, &len);
        expect e;
        memset(&e, 0, sizeof e);
        e.reply = parse_token(tok);
        e.fid = fb_peek_file_id(msg, len);
        e.inband = -1;
        const fb_message *m = cfdb_message_by_file_id(e.fid);
        if (m && m->kind == FB_MSG_REPLY) {
            void *item = calloc(1, m->item->csize);
            cfdb_reply_error err = 0;
            if (fb_decode(m, msg, len, item, &err, &r->a) == 0) {
                e.error = err;
                if (m == &cfdb_msg_get_value_reply && !err) {
                    cfdb_get_value_reply *gv = item;
                    e.inband = gv->error.present ? gv->error.value.code : 0;
                    e.value_present = gv->value.present;
                    e.value = malloc(gv->value.value.len + 1);
                    if (gv->value.value.len)
                        memcpy(e.value, gv->value.value.ptr, gv->value.value.len);
                    e.value_len = gv->value.value.len;
                }
                if (m == &cfdb_msg_get_read_version_reply && !err) {
                    cfdb_get_read_version_reply *g = item;
                    if (g->version > r->cap_latest)
                        r->cap_latest = g->version;
                }
            }
            free(item);
        }
        free(msg);
        if (r->nex == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 64;
            r->ex = realloc(r->ex, r->cap * sizeof(expect));
        }
        r->ex[r->nex++] = e;
    }
    free(line);
    fclose(f);
}

/* Decodes, patches and re-sends one captured request. */
static void send_request(replay *r, cfdb_uid dest, const uint8_t *msg, uint32_t len)
{
    uint32_t idx = 0;
    cfdb_uid to = dest;
    uint32_t fid = fb_peek_file_id(msg, len);
    const fb_message *m = cfdb_message_by_file_id(fid);
    if (cfdb_token_is_well_known(dest)) {
        to = dest;
    } else if (same_interface(dest, cap_grv, &idx)) {
        to = cfdb_adjusted_token(r->w.grv, idx);
    } else if (same_interface(dest, cap_commit, &idx)) {
        to = cfdb_adjusted_token(r->w.commit, idx);
    } else if (same_interface(dest, cap_ss, &idx)) {
        to = cfdb_adjusted_token(r->ss, idx);
        if (idx == CFDB_SS_GET_RANGE_SPLIT_POINTS)
            m = &cfdb_msg_split_range_request;
    } else if (cfdb_uid_eq(dest, cap_status)) {
        to = r->status;
    } else {
        fail_msg("capture frame to an unknown token");
    }
    assert_non_null(m);
    void *req = calloc(1, m->item->csize);
    uint8_t *copy = cfdb_arena_dup(&r->a, msg, len);
    assert_int_equal(fb_decode(m, copy, len, req, NULL, &r->a), 0);
    cfdb_uid reply = { 0, 0 };
    bool commit = false, user_key = false;
    if (m == &cfdb_msg_open_database_coord_request) {
        cfdb_open_database_coord_request *q = req;
        q->clusterKey = cfdb_bytes_str(r->key);
        reply = q->reply.token;
    } else if (m == &cfdb_msg_get_leader_request) {
        cfdb_get_leader_request *q = req;
        q->key = cfdb_bytes_str(r->key);
        reply = q->reply.token;
    } else if (m == &cfdb_msg_get_value_request) {
        cfdb_get_value_request *q = req;
        q->version = map_version(r, q->version);
        reply = q->reply.token;
        user_key = q->key.len == 0 || q->key.ptr[0] != 0xff;
    } else if (m == &cfdb_msg_get_key_values_request) {
        cfdb_get_key_values_request *q = req;
        q->version = map_version(r, q->version);
    } else if (m == &cfdb_msg_get_mapped_key_values_request) {
        cfdb_get_mapped_key_values_request *q = req;
        q->version = map_version(r, q->version);
    } else if (m == &cfdb_msg_get_key_request) {
        cfdb_get_key_request *q = req;
        q->version = map_version(r, q->version);
    } else if (m == &cfdb_msg_watch_value_request) {
        cfdb_watch_value_request *q = req;
        q->version = map_version(r, q->version);
    } else if (m == &cfdb_msg_commit_transaction_request) {
        cfdb_commit_transaction_request *q = req;
        q->transaction.read_snapshot = map_version(r, q->transaction.read_snapshot);
        reply = q->reply.token;
        commit = true;
    }
    if (r->nreqs < 512 && !cfdb_uid_is_zero(reply)) {
        r->reqs[r->nreqs].reply = reply;
        r->reqs[r->nreqs].commit = commit;
        r->reqs[r->nreqs].user_key = user_key;
        r->nreqs++;
    }
    assert_int_equal(cfdb_conn_send(r->w.conn, to, m, req, 0), 0);
    free(req);
    wc_pump(&r->w, 5 * MS); /* keep the client's pacing: a watch is armed before the commit that fires it */
}

static void replay_scenario(replay *r, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.frames.jsonl", GOLDEN_DIR, name);
    r->nex = 0;
    r->nreqs = 0;
    load_expectations(r, path);
    assert_int_equal(wc_connect(&r->w, r->loop, cfdb_server_port(r->srv)), 0);
    cfdb_client_db_info info;
    assert_int_equal(wc_open_database(&r->w, r->key, &info, &r->a), 0);
    cfdb_key_range shard;
    assert_int_equal(wc_locate(&r->w, CFDB_BYTES_LIT(""), &r->ss, NULL, &shard, &r->a), 0);
    assert_true(cfdb_bytes_eq(shard.end, CFDB_BYTES_LIT("\xff\xff")));

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        size_t n, tn;
        const char *dir = field(line, "dir", &n);
        const char *kind = field(line, "kind", &n);
        if (!dir || strncmp(dir, "c2s", 3) || !kind || strncmp(kind, "frame", 5))
            continue;
        const char *tok = field(line, "token", &tn);
        const char *hex = field(line, "hex", &n);
        uint32_t len;
        uint8_t *msg = unhex(hex, n, &len);
        send_request(r, parse_token(tok), msg, len);
        free(msg);
    }
    free(line);
    fclose(f);

    for (size_t i = 0; i < r->nex; i++) {
        expect *e = &r->ex[i];
        const fb_message *m = cfdb_message_by_file_id(e->fid);
        assert_non_null(m);
        void *item = calloc(1, m->item->csize);
        cfdb_reply_error err = 0;
        int rc = wc_wait(&r->w, e->reply, m, item, &err, &r->a, 3 * SEC);
        if (rc)
            print_error("%s: no %s reply (rc %d)\n", name, m->name, rc);
        assert_int_equal(rc, 0);
        bool commit = false, user_key = false;
        for (size_t k = 0; k < r->nreqs; k++)
            if (cfdb_uid_eq(r->reqs[k].reply, e->reply)) {
                commit = r->reqs[k].commit;
                user_key = r->reqs[k].user_key;
            }
        if (!commit) {
            if (err != e->error)
                print_error("%s: %s error %u, captured %u\n", name, m->name, err, e->error);
            assert_int_equal(err, e->error);
        }
        if (e->inband >= 0 && !err) {
            cfdb_get_value_reply *gv = item;
            int code = gv->error.present ? gv->error.value.code : 0;
            if (code != e->inband)
                print_error("%s: GetValue in-band error %d, captured %d\n", name, code, e->inband);
            assert_int_equal(code, e->inband);
            if (user_key && strcmp(name, "versionstamp") != 0) {
                assert_int_equal(gv->value.present, e->value_present);
                if (e->value_present) {
                    assert_int_equal(gv->value.value.len, e->value_len);
                    assert_memory_equal(gv->value.value.ptr, e->value, e->value_len);
                }
                r->values_checked++;
            }
        }
        free(item);
        r->checked++;
        free(e->value);
    }
    wc_close(&r->w);
}

static void test_golden_replay(void **state)
{
    (void)state;
    replay *r = calloc(1, sizeof(*r));
    cfdb_server_config cfg;
    cfdb_server_config_init(&cfg);
    cfg.port = 0;
    cfg.quiet = true;
    cfg.seed = 7;
    cfg.storage_servers = 1;
    cfg.description = "golden";
    cfg.cluster_id = "golden";
    r->loop = cfdb_loop_create();
    r->srv = cfdb_server_create(r->loop, &cfg);
    assert_non_null(r->srv);
    cfdb_arena_init(&r->a);
    snprintf(r->key, sizeof r->key, "golden:golden");
    /* the status stream from the leader info */
    assert_int_equal(wc_connect(&r->w, r->loop, cfdb_server_port(r->srv)), 0);
    cfdb_get_leader_request gl;
    cfdb_get_leader_reply lr;
    cfdb_reply_error err = 0;
    memset(&gl, 0, sizeof gl);
    gl.key = cfdb_bytes_str(r->key);
    assert_int_equal(wc_call(&r->w, cfdb_well_known_token(CFDB_WLTOKEN_CLIENTLEADERREG_GETLEADER),
                             &cfdb_msg_get_leader_request, &gl, &gl.reply.token, &cfdb_msg_get_leader_reply, &lr, &err,
                             &r->a),
                     0);
    cfdb_bytes si = lr.leader.value.serializedInfo;
    cfdb_cluster_controller_client_interface cc;
    memset(&cc, 0, sizeof cc);
    uint8_t *copy = cfdb_arena_dup(&r->a, si.ptr + 8, si.len - 8);
    assert_int_equal(fb_decode(&cfdb_msg_cluster_controller_client_interface, copy, si.len - 8, &cc, NULL, &r->a), 0);
    r->status = cc.clientInterface.databaseStatus.endpoint.token;
    wc_close(&r->w);

    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        replay_scenario(r, scenarios[i]);
    print_message("golden replay: %u captured replies matched, %u point-read values compared\n", r->checked,
                  r->values_checked);
    assert_int_equal(r->checked, 110); /* every reply frame in the captures */
    free(r->ex);
    cfdb_server_destroy(r->srv);
    cfdb_loop_run_once(r->loop, 0);
    cfdb_loop_destroy(r->loop);
    cfdb_arena_free(&r->a);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
