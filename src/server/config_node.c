/* The configuration database's node: cfdb-server's coordinators answer
 * ConfigTransactionInterface (src/wire/config_messages.h) as a 7.3.77 ConfigNode does for
 * a PAXOS configuration database (fdbserver/ConfigNode.actor.cpp getNewGeneration, get,
 * getConfigClasses, getKnobs, commit). Each coordination server of the process has a node
 * of its own, as each fdbserver coordinator has (one shared state would raise the live
 * version once per coordinator asked, and no generation would reach a quorum).
 *
 * State and invariants:
 *  - generation {committedVersion, liveVersion}: each getGeneration raises liveVersion by one
 *    (to at least lastSeenLiveVersion + 1) and answers it; a commit must carry the current
 *    committedVersion (else commit_unknown_result) and liveVersion (else not_committed), and
 *    then both become that liveVersion. Reads must carry exactly the current generation
 *    (else transaction_too_old).
 *  - knobs: (configClass or none, knobName) -> KnobValue, the result of every committed
 *    mutation (ConfigNode keeps a snapshot plus a mutation log; since reads must carry the
 *    current generation, both give the same answers). At most CN_MAX_KNOBS entries holding
 *    at most CN_MAX_BYTES of names, classes and string values per node (cfdb's bound on what
 *    a peer can make the server keep; a ConfigNode has none): a commit that could exceed
 *    either is refused with not_committed and applies nothing.
 *  - annotations: the last CN_MAX_ANNOTATIONS commits' (version, timestamp, description).
 *  - coordinators hash: a ConfigNode compares every request's hash with the one the cluster
 *    controller's ConfigBroadcaster registered it with, std::hash<std::string> of the
 *    connection string; a mismatch is coordinators_changed. cfdb-server computes libstdc++'s
 *    std::hash; a libfdb_c built against libc++ hashes differently, so when the first
 *    nonzero hash a node sees for a connection string is another one, the node adopts it
 *    instead (and then holds every later request to that one). When a node first serves a new connection
 *    string it takes the knobs and generation of the process's most recently committed
 *    node, as ConfigBroadcaster moves the configuration database to new coordinators
 *    (its knobs are the result of the same commits). A process whose coordinators moved away
 *    (forward set), or a coordination server the current string does not name, answers
 *    coordinators_changed, as a locked ConfigNode does.
 *  - getClasses: 7.3.77 serializes ConfigTransactionGetConfigClassesRequest without its reply
 *    promise, so no answer can reach the asker; the request is counted and logged only.
 * The state lives in memory: it does not survive a restart, even with --datadir. */
#include <stdlib.h>
#include <string.h>

#include "config_messages.h"
#include "error_codes.h"
#include "config_node.h"
#include "coordinator.h"

#define CN_MAX_KNOBS 4096
#define CN_MAX_BYTES (8u << 20)
#define CN_MAX_ANNOTATIONS 64

typedef struct cn_knob {
    bool has_class;
    cfdb_bytes cls, name; /* malloc'd */
    cfdb_knob_value value; /* value.s malloc'd for strings */
} cn_knob;

typedef struct cn_annotation {
    int64_t version;
    double timestamp;
    char *description;
    size_t len;
} cn_annotation;

typedef struct cn_state {
    cfdb_config_generation gen;
    cn_knob *knobs;
    size_t nknobs;
    size_t bytes; /* names, classes and string values held */
    cn_annotation ann[CN_MAX_ANNOTATIONS];
    size_t nann, ann_next;
    uint64_t cs_hash;      /* libstdc++ hash of the connection string the adoption is for */
    bool seen_mine;        /* a request carried the libstdc++ hash: nothing is adopted */
    bool adopted_set;
    uint64_t adopted;      /* a client's hash adopted for that connection string */
} cn_state;

/* One node per coordination listener, created on its first request. */
struct srv_config_node {
    cn_state *by_listener[SRV_MAX_LISTENERS];
};

static cn_state *node_of(srv *s, srv_conn *c)
{
    if (!s->config_node && !(s->config_node = calloc(1, sizeof *s->config_node)))
        return NULL;
    if (c->listener < 0 || c->listener >= SRV_MAX_LISTENERS)
        return NULL;
    cn_state **slot = &s->config_node->by_listener[c->listener];
    if (!*slot)
        *slot = calloc(1, sizeof **slot);
    return *slot;
}

static void free_bytes(cfdb_bytes *b)
{
    free((void *)b->ptr);
    *b = cfdb_bytes_make(NULL, 0);
}

static void free_knobs(cn_state *n)
{
    for (size_t i = 0; i < n->nknobs; i++) {
        free_bytes(&n->knobs[i].cls);
        free_bytes(&n->knobs[i].name);
        free_bytes(&n->knobs[i].value.s);
    }
    free(n->knobs);
    n->knobs = NULL;
    n->nknobs = 0;
    n->bytes = 0;
}

void config_node_free(srv *s)
{
    if (!s->config_node)
        return;
    for (int l = 0; l < SRV_MAX_LISTENERS; l++) {
        cn_state *n = s->config_node->by_listener[l];
        if (!n)
            continue;
        free_knobs(n);
        for (size_t i = 0; i < n->nann; i++)
            free(n->ann[i].description);
        free(n);
    }
    free(s->config_node);
    s->config_node = NULL;
}

static bool dup_bytes(cfdb_bytes in, cfdb_bytes *out)
{
    uint8_t *p = malloc(in.len ? in.len : 1);
    if (!p)
        return false;
    if (in.len)
        memcpy(p, in.ptr, in.len);
    *out = cfdb_bytes_make(p, in.len);
    return true;
}

static bool bytes_eq(cfdb_bytes a, cfdb_bytes b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static int bytes_cmp(cfdb_bytes a, cfdb_bytes b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    return c ? c : (a.len < b.len ? -1 : a.len > b.len);
}

static bool class_eq(const cn_knob *k, const cfdb_opt_bytes *cls)
{
    return k->has_class == (cls->present != 0) && (!k->has_class || bytes_eq(k->cls, cls->value));
}

static cn_knob *find(cn_state *n, const cfdb_config_key *key)
{
    for (size_t i = 0; i < n->nknobs; i++)
        if (class_eq(&n->knobs[i], &key->configClass) && bytes_eq(n->knobs[i].name, key->knobName))
            return &n->knobs[i];
    return NULL;
}

static bool dup_bytes(cfdb_bytes in, cfdb_bytes *out);

/* The most recently committed other node's knobs and generation, when newer than n's. */
static void take_over(srv *s, cn_state *n)
{
    cn_state *best = NULL;
    for (int l = 0; l < SRV_MAX_LISTENERS; l++) {
        cn_state *o = s->config_node->by_listener[l];
        if (o && o != n && o->gen.committedVersion > (best ? best->gen.committedVersion : n->gen.committedVersion))
            best = o;
    }
    if (!best)
        return;
    cn_knob *copy = best->nknobs ? calloc(best->nknobs, sizeof *copy) : NULL;
    if (best->nknobs && !copy)
        return; /* out of memory: the node keeps its own state */
    bool ok = true;
    for (size_t i = 0; i < best->nknobs && ok; i++) {
        copy[i] = best->knobs[i];
        copy[i].cls = copy[i].name = copy[i].value.s = cfdb_bytes_make(NULL, 0);
        ok = dup_bytes(best->knobs[i].name, &copy[i].name) &&
             (!best->knobs[i].has_class || dup_bytes(best->knobs[i].cls, &copy[i].cls)) &&
             (best->knobs[i].value.tag != CFDB_KNOB_STRING || dup_bytes(best->knobs[i].value.s, &copy[i].value.s));
    }
    cn_state tmp = { .knobs = copy, .nknobs = best->nknobs };
    size_t bytes = best->bytes;
    if (!ok) {
        free_knobs(&tmp);
        return;
    }
    free_knobs(n);
    n->knobs = copy;
    n->nknobs = best->nknobs;
    n->bytes = bytes;
    n->gen = best->gen;
}

/* 0 when the request may be served, else the error a ConfigNode answers. */
static int check_hash(srv *s, srv_conn *c, cn_state *n, uint64_t hash)
{
    if (s->forward[0])
        return CFDB_ERR_COORDINATORS_CHANGED;
    bool named = false;
    for (int i = 0; i < s->n_coord_set; i++)
        named |= s->coord_set[i] == c->listener;
    if (!named && s->n_coord_set > 0)
        return CFDB_ERR_COORDINATORS_CHANGED;
    const char *cs = cfdb_server_connection_string(s);
    uint64_t mine = cfdb_std_string_hash(cs, strlen(cs));
    if (n->cs_hash != mine) { /* a new connection string: registered anew */
        n->cs_hash = mine;
        n->adopted_set = false;
        n->seen_mine = false;
        take_over(s, n);
    }
    if (!n->adopted_set && hash == mine) {
        n->seen_mine = true;
        return 0;
    }
    if (n->adopted_set && hash == n->adopted)
        return 0;
    if (!n->adopted_set && !n->seen_mine && hash != 0) {
        n->adopted_set = true;
        n->adopted = hash;
        s->n_config_adopted++;
        srv_log(s, "config node: adopting coordinators hash %016llx for %s", (unsigned long long)hash, cs);
        return 0;
    }
    return CFDB_ERR_COORDINATORS_CHANGED;
}

static bool gen_eq(cfdb_config_generation a, cfdb_config_generation b)
{
    return a.committedVersion == b.committedVersion && a.liveVersion == b.liveVersion;
}

static void get_generation(srv *s, srv_conn *c, cn_state *n, const uint8_t *msg, uint32_t len, cfdb_arena *a)
{
    cfdb_config_get_generation_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_config_get_generation_request, msg, len, &req, NULL, a)) {
        srv_bad_request(s, c, "ConfigTransactionGetGenerationRequest");
        return;
    }
    int err = check_hash(s, c, n, req.coordinatorsHash);
    if (err) {
        srv_reply(s, c, req.reply.token, &cfdb_msg_config_get_generation_reply, NULL, (cfdb_reply_error)err);
        return;
    }
    n->gen.liveVersion++;
    if (req.lastSeenLiveVersion.present && req.lastSeenLiveVersion.value >= n->gen.liveVersion &&
        req.lastSeenLiveVersion.value < INT64_MAX)
        n->gen.liveVersion = req.lastSeenLiveVersion.value + 1;
    cfdb_config_get_generation_reply r = { n->gen };
    srv_reply(s, c, req.reply.token, &cfdb_msg_config_get_generation_reply, &r, 0);
}

static void get_value(srv *s, srv_conn *c, cn_state *n, const uint8_t *msg, uint32_t len, cfdb_arena *a)
{
    cfdb_config_get_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_config_get_request, msg, len, &req, NULL, a)) {
        srv_bad_request(s, c, "ConfigTransactionGetRequest");
        return;
    }
    int err = check_hash(s, c, n, req.coordinatorsHash);
    if (!err && !gen_eq(req.generation, n->gen))
        err = CFDB_ERR_TRANSACTION_TOO_OLD;
    if (err) {
        srv_reply(s, c, req.reply.token, &cfdb_msg_config_get_reply, NULL, (cfdb_reply_error)err);
        return;
    }
    cfdb_config_get_reply r;
    memset(&r, 0, sizeof r);
    const cn_knob *k = find(n, &req.key);
    if (k) {
        r.value.present = 1;
        r.value.value = k->value;
    }
    srv_reply(s, c, req.reply.token, &cfdb_msg_config_get_reply, &r, 0);
}

static int name_cmp(const void *x, const void *y)
{
    return bytes_cmp(*(const cfdb_bytes *)x, *(const cfdb_bytes *)y);
}

static void get_knobs(srv *s, srv_conn *c, cn_state *n, const uint8_t *msg, uint32_t len, cfdb_arena *a)
{
    cfdb_config_get_knobs_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_config_get_knobs_request, msg, len, &req, NULL, a)) {
        srv_bad_request(s, c, "ConfigTransactionGetKnobsRequest");
        return;
    }
    int err = check_hash(s, c, n, req.coordinatorsHash);
    if (!err && !gen_eq(req.generation, n->gen))
        err = CFDB_ERR_TRANSACTION_TOO_OLD;
    cfdb_bytes *names = n->nknobs ? cfdb_arena_alloc(a, n->nknobs * sizeof *names) : NULL;
    if (!err && n->nknobs && !names)
        err = CFDB_ERR_UNKNOWN_ERROR;
    if (err) {
        srv_reply(s, c, req.reply.token, &cfdb_msg_config_get_knobs_reply, NULL, (cfdb_reply_error)err);
        return;
    }
    uint32_t count = 0;
    for (size_t i = 0; i < n->nknobs; i++)
        if (class_eq(&n->knobs[i], &req.configClass))
            names[count++] = n->knobs[i].name; /* (class, name) is unique: no duplicates */
    if (count)
        qsort(names, count, sizeof *names, name_cmp);
    cfdb_config_get_knobs_reply r = { { names, count } };
    srv_reply(s, c, req.reply.token, &cfdb_msg_config_get_knobs_reply, &r, 0);
}

static void get_classes(srv *s, srv_conn *c, cn_state *n, const uint8_t *msg, uint32_t len, cfdb_arena *a)
{
    cfdb_config_get_classes_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_config_get_classes_request, msg, len, &req, NULL, a)) {
        srv_bad_request(s, c, "ConfigTransactionGetConfigClassesRequest");
        return;
    }
    srv_log(s, "config node: ConfigTransactionGetConfigClassesRequest carries no reply promise in 7.3.77; "
               "nothing to answer");
}

/* Applies one mutation; false if the knob table is full or memory ran out (nothing changed). */
static bool apply(cn_state *n, const cfdb_config_mutation *m)
{
    cn_knob *k = find(n, &m->key);
    if (!m->value.present) {
        if (k) {
            n->bytes -= k->cls.len + k->name.len + k->value.s.len;
            free_bytes(&k->cls);
            free_bytes(&k->name);
            free_bytes(&k->value.s);
            *k = n->knobs[--n->nknobs];
        }
        return true;
    }
    cfdb_knob_value v = m->value.value;
    v.s = cfdb_bytes_make(NULL, 0);
    if (m->value.value.tag == CFDB_KNOB_STRING && !dup_bytes(m->value.value.s, &v.s))
        return false;
    if (k) {
        n->bytes = n->bytes - k->value.s.len + v.s.len;
        free_bytes(&k->value.s);
        k->value = v;
        return true;
    }
    cn_knob nk;
    memset(&nk, 0, sizeof nk);
    nk.has_class = m->key.configClass.present;
    nk.value = v;
    cn_knob *grown = realloc(n->knobs, (n->nknobs + 1) * sizeof *grown);
    if (grown)
        n->knobs = grown;
    if (!grown || !dup_bytes(m->key.knobName, &nk.name) ||
        (nk.has_class && !dup_bytes(m->key.configClass.value, &nk.cls))) {
        free_bytes(&nk.name);
        free_bytes(&v.s);
        return false;
    }
    n->knobs[n->nknobs++] = nk;
    n->bytes += nk.cls.len + nk.name.len + nk.value.s.len;
    return true;
}

/* Whether applying the commit could exceed CN_MAX_KNOBS or CN_MAX_BYTES (every set counted
 * as new: an upper bound). */
static bool too_big(cn_state *n, const cfdb_config_commit_request *req)
{
    size_t added = 0, bytes = 0;
    for (uint32_t i = 0; i < req->mutations.count; i++) {
        const cfdb_config_mutation *m = &req->mutations.items[i];
        if (!m->value.present)
            continue;
        added += !find(n, &m->key);
        bytes += m->key.knobName.len + (m->key.configClass.present ? m->key.configClass.value.len : 0) +
                 (m->value.value.tag == CFDB_KNOB_STRING ? m->value.value.s.len : 0);
    }
    return n->nknobs + added > CN_MAX_KNOBS || bytes > CN_MAX_BYTES || n->bytes + bytes > CN_MAX_BYTES;
}

static void commit(srv *s, srv_conn *c, cn_state *n, const uint8_t *msg, uint32_t len, cfdb_arena *a)
{
    cfdb_config_commit_request req;
    memset(&req, 0, sizeof req);
    if (fb_decode(&cfdb_msg_config_commit_request, msg, len, &req, NULL, a)) {
        srv_bad_request(s, c, "ConfigTransactionCommitRequest");
        return;
    }
    int err = check_hash(s, c, n, req.coordinatorsHash);
    if (!err && req.generation.committedVersion != n->gen.committedVersion)
        err = CFDB_ERR_COMMIT_UNKNOWN_RESULT;
    else if (!err && req.generation.liveVersion != n->gen.liveVersion)
        err = CFDB_ERR_NOT_COMMITTED;
    else if (!err && too_big(n, &req))
        err = CFDB_ERR_NOT_COMMITTED;
    for (uint32_t i = 0; !err && i < req.mutations.count; i++)
        if (!apply(n, &req.mutations.items[i]))
            err = CFDB_ERR_UNKNOWN_ERROR; /* out of memory part way: the mutations before stay */
    if (err) {
        srv_reply(s, c, req.reply.token, &cfdb_msg_void_reply, NULL, (cfdb_reply_error)err);
        return;
    }
    cn_annotation *an = &n->ann[n->ann_next];
    free(an->description);
    an->version = req.generation.liveVersion;
    an->timestamp = req.annotation.timestamp;
    an->len = req.annotation.description.len;
    an->description = malloc(an->len + 1);
    if (an->description) {
        if (an->len)
            memcpy(an->description, req.annotation.description.ptr, an->len);
        an->description[an->len] = 0;
    } else {
        an->len = 0;
    }
    n->ann_next = (n->ann_next + 1) % CN_MAX_ANNOTATIONS;
    if (n->nann < CN_MAX_ANNOTATIONS)
        n->nann++;
    n->gen.committedVersion = n->gen.liveVersion = req.generation.liveVersion;
    srv_log(s, "config node: committed %u mutation(s) at version %lld (\"%s\")", req.mutations.count,
            (long long)n->gen.liveVersion, an->description ? an->description : "");
    srv_reply(s, c, req.reply.token, &cfdb_msg_void_reply, NULL, 0);
}

void config_node_dispatch(srv *s, srv_conn *c, uint32_t token, const uint8_t *msg, uint32_t len)
{
    cn_state *n = node_of(s, c);
    if (!n) {
        srv_bad_request(s, c, "configuration database request (out of memory)");
        return;
    }
    s->n_config_requests++;
    cfdb_arena a;
    cfdb_arena_init(&a);
    switch (token) {
    case CFDB_WLTOKEN_CONFIGTXN_GETGENERATION:
        get_generation(s, c, n, msg, len, &a);
        break;
    case CFDB_WLTOKEN_CONFIGTXN_GET:
        get_value(s, c, n, msg, len, &a);
        break;
    case CFDB_WLTOKEN_CONFIGTXN_GETCLASSES:
        get_classes(s, c, n, msg, len, &a);
        break;
    case CFDB_WLTOKEN_CONFIGTXN_GETKNOBS:
        get_knobs(s, c, n, msg, len, &a);
        break;
    case CFDB_WLTOKEN_CONFIGTXN_COMMIT:
        commit(s, c, n, msg, len, &a);
        break;
    default:
        break;
    }
    cfdb_arena_free(&a);
}
