/* fdb_transaction_get_addresses_for_key as libfdb_c 7.3.77 answers it: from the system keys,
 * read in the transaction (getAddressesForKeyActor, fdbclient/NativeAPI.actor.cpp 5707-5753):
 *  1. the transaction's read version (startTransaction);
 *  2. a NativeAPI getRange of lastLessOrEqual(\xff/serverTag/) .. firstGreaterThan(\xff/serverTag0),
 *     limit CLIENT_KNOBS->TOO_MANY rows: the tag of each storage server;
 *  3. a NativeAPI getRange of lastLessOrEqual(\xff/keyServers/<key>) .. firstGreaterThan(the same),
 *     limit 1: the shard holding the key and its source and destination servers, decoded as
 *     decodeKeyServersValue does (fdbclient/SystemData.cpp);
 *  4. for each source server, a NativeAPI getValue of \xff/serverList/<id>
 *     (transactionalGetServerInterfaces / fetchServerInterface, NativeAPI.actor.cpp 2944-2975):
 *     its StorageServerInterface, whose getValue endpoint's primary address is the answer, with
 *     the port (includePort is set from API version 630 on, NativeAPI TransactionOptions::reset).
 * libfdb_c asks for the server list entries all at once; here they go one after the other (the
 * same requests in the same order). Each read adds its cost to the transaction's, as
 * getRangeFinished and getValue do. The operation is a read (txn_read.h) with the state below;
 * replies that do not decode are retried at most TXN_MAX_BAD_REPLIES times in a row. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "error_codes.h"
#include "network_address.h"
#include "tenant.h"
#include "txn_internal.h"
#include "txn_read.h"

#define TOO_MANY 1000000 /* CLIENT_KNOBS->TOO_MANY */
#define PV_HAS_TAG_LOCALITY UINT64_C(0x0FDB00A560010000)          /* ProtocolVersion withTagLocality */
#define PV_HAS_KEY_SERVER_VALUE_V2 UINT64_C(0x0FDB00B063010000)   /* withKeyServerValueV2 */
#define PV_HAS_SHARD_ENCODE_LOCATION UINT64_C(0x0FDB00B072000000) /* withShardEncodeLocationMetaData */
#define PV_VERSION_MASK UINT64_C(0x0FFFFFFFFFFFFFFF) /* without the object serializer flag */

enum { STAGE_SERVER_TAGS, STAGE_KEY_SERVERS, STAGE_SERVER_LIST };

typedef struct addr_state {
    read_op r; /* first: the op */
    cfdb_native_range nr; /* r.nr points here */
    int stage;
    const cfdb_key_value *tags; /* \xff/serverTag/ rows (and the one before) */
    size_t ntags;
    cfdb_uid *src;
    uint32_t nsrc, next;
    const char **addrs;
    cfdb_bytes list_key; /* \xff/serverList/<src[next]> */
    cfdb_bytes key;      /* the key asked about (the range reads use r.key meanwhile) */
} addr_state;

_Static_assert(sizeof(addr_state) <= CFDB_FUTURE_EXTRA_MAX, "get_addresses_for_key fits in its future's block");

static addr_state *state_of(op *o)
{
    return TXN_OP_AS(addr_state, o);
}

static void list_step(op *o);

static void add_cost(op *o, uint64_t bytes)
{
    /* getReadOperationCost: a 4096-byte page per started page, at least one */
    int64_t pages = bytes == 0 ? 1 : (int64_t)((bytes + 4095) / 4096);
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    if (atomic_load(&tx->gen) == o->gen)
        atomic_fetch_add(&tx->total_cost, pages * 4096);
    pthread_mutex_unlock(&tx->mu);
}

static void resume_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    op *o = arg;
    if (op_abandoned(o))
        return;
    list_step(o);
}

/* A storage server failed or no longer holds the key: forget its location, try again later
 * (on another replica). */
static void relocate(op *o, cfdb_bytes key, bool backward)
{
    cfdb_db_invalidate(o->tx->db, -1, key, backward);
    o->replica++;
    op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, resume_fire);
}

static void located(cfdb_waiter *w, int error, int64_t v)
{
    (void)v;
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error)
        op_retry_after(o, WRONG_SHARD_SERVER_DELAY_NS, resume_fire);
    else
        list_step(o);
}

/* ---------- 4. \xff/serverList/<id>: GetValueRequest per source server ---------- */

static void deliver(op *o)
{
    addr_state *st = state_of(o);
    o->f->r.strings.items = st->addrs;
    o->f->r.strings.count = (int)st->nsrc;
    op_finish(o, 0);
}

static void list_relocate(op *o, int error)
{
    (void)error;
    relocate(o, state_of(o)->list_key, false);
}

static const txn_reply_desc list_reply = {
    &cfdb_msg_get_value_reply, sizeof(cfdb_get_value_reply), offsetof(cfdb_get_value_reply, error), 0
};

static void on_list_reply(void *ctx, int error, const uint8_t *msg, uint32_t len)
{
    op *o = ctx;
    cfdb_get_value_reply rep;
    if (!txn_storage_reply(o, error, msg, len, &list_reply, &rep, &o->f->arena, list_relocate))
        return;
    addr_state *st = state_of(o);
    add_cost(o, st->list_key.len + (rep.value.present ? rep.value.value.len : 0));
    /* a server gone from the list since \xff/keyServers/ was read: libfdb_c asserts, as the
     * two are read in one transaction */
    if (!rep.value.present || rep.value.value.len <= 8) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    /* decodeServerListValue: the protocol version, then the interface as ObjectWriter wrote it
     * (values from before hasStorageInterfaceReadiness are not read here) */
    cfdb_storage_server_interface ssi;
    memset(&ssi, 0, sizeof ssi);
    const uint8_t *v = rep.value.value.ptr;
    if (txn_decode(&cfdb_msg_storage_server_interface, v + 8, (uint32_t)(rep.value.value.len - 8), &ssi, NULL, &o->f->arena)) {
        op_finish(o, CFDB_ERR_INTERNAL_ERROR);
        return;
    }
    char buf[96];
    size_t n = cfdb_network_address_format(&ssi.getValue.endpoint.addresses.address, buf, sizeof buf);
    char *copy = cfdb_arena_dup(&o->f->arena, buf, n + 1);
    if (!copy) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    copy[n] = 0;
    st->addrs[st->next++] = copy;
    o->replica = 0;
    if (st->next == st->nsrc)
        deliver(o);
    else
        list_step(o);
}

static void list_step(op *o)
{
    addr_state *st = state_of(o);
    uint8_t uid[16];
    cfdb_uid_store(uid, st->src[st->next]);
    static const char prefix[] = "\xff/serverList/";
    uint8_t *k = cfdb_arena_alloc(&o->f->arena, sizeof prefix - 1 + 16);
    if (!k) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    memcpy(k, prefix, sizeof prefix - 1);
    memcpy(k + sizeof prefix - 1, uid, 16);
    st->list_key = cfdb_bytes_make(k, sizeof prefix - 1 + 16);
    const cfdb_shard *s = txn_shard_or_locate(o, -1, st->list_key, false, located);
    if (!s)
        return;
    const cfdb_endpoint_ref *server = &s->servers[o->replica % s->nservers];
    cfdb_get_value_request req;
    memset(&req, 0, sizeof req);
    req.key = st->list_key;
    req.version = o->tx->read_version;
    req.tenantInfo.tenantId = -1;
    req.ssLatestCommitVersions = cfdb_version_vector_empty();
    o->request = cfdb_client_request(o->tx->cl, server->peer, cfdb_adjusted_token(server->token, CFDB_SS_GET_VALUE),
                                     &cfdb_msg_get_value_request, &req, &req.reply.token, on_list_reply, o);
    if (!o->request)
        relocate(o, st->list_key, false);
}

/* ---------- 3. decodeKeyServersValue ---------- */

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static cfdb_uid uid_at(const uint8_t *p)
{
    cfdb_uid u;
    u.first = rd64(p);
    u.second = rd64(p + 8);
    return u;
}

/* decodeServerTagValue: a Tag {int8 locality, uint16 id} after the protocol version (an old
 * value holds an int16 id only, locality tagLocalityUpgraded = -2). false if malformed. */
static bool decode_tag(cfdb_bytes v, int8_t *locality, uint16_t *id)
{
    if (v.len < 10)
        return false;
    uint64_t pv = rd64(v.ptr) & PV_VERSION_MASK;
    if (pv < PV_HAS_TAG_LOCALITY) {
        memcpy(id, v.ptr + 8, 2);
        *locality = -2;
        return true;
    }
    if (v.len < 11)
        return false;
    *locality = (int8_t)v.ptr[8];
    memcpy(id, v.ptr + 9, 2);
    return true;
}

static int uid_cmp(const void *a, const void *b)
{
    const cfdb_uid *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->second < y->second ? -1 : x->second > y->second;
}

/* The source servers of a \xff/keyServers/ value into st->src. Returns 0, internal_error
 * (malformed: libfdb_c asserts) or TXN_ERR_NO_MEMORY. */
static int decode_key_servers(op *o, cfdb_bytes v)
{
    addr_state *st = state_of(o);
    st->nsrc = 0;
    if (v.len == 0)
        return 0; /* past the last shard (\xff\xff): no servers */
    if (v.len < 12)
        return CFDB_ERR_INTERNAL_ERROR;
    uint64_t pv = rd64(v.ptr) & PV_VERSION_MASK;
    uint32_t n = rd32(v.ptr + 8);
    if (pv >= PV_HAS_SHARD_ENCODE_LOCATION || pv < PV_HAS_KEY_SERVER_VALUE_V2) {
        /* src (vector<UID>), dest, [srcID, destID]: the source servers lead */
        if (n > (v.len - 12) / 16)
            return CFDB_ERR_INTERNAL_ERROR;
        st->src = cfdb_arena_alloc(&o->f->arena, (n ? n : 1) * sizeof *st->src);
        if (!st->src)
            return TXN_ERR_NO_MEMORY;
        for (uint32_t i = 0; i < n; i++)
            st->src[i] = uid_at(v.ptr + 12 + 16 * (size_t)i);
        st->nsrc = n;
        return 0;
    }
    /* withKeyServerValueV2: src and dest as Tags, mapped back to servers through the
     * \xff/serverTag/ rows read before, sorted */
    if (n > (v.len - 12) / 3)
        return CFDB_ERR_INTERNAL_ERROR;
    const uint8_t *tags = v.ptr + 12;
    st->src = cfdb_arena_alloc(&o->f->arena, (st->ntags ? st->ntags : 1) * sizeof *st->src);
    if (!st->src)
        return TXN_ERR_NO_MEMORY;
    static const char prefix[] = "\xff/serverTag/";
    for (size_t r = 0; r < st->ntags; r++) {
        const cfdb_key_value *kv = &st->tags[r];
        int8_t loc;
        uint16_t id;
        if (kv->key.len != sizeof prefix - 1 + 16 || memcmp(kv->key.ptr, prefix, sizeof prefix - 1) ||
            !decode_tag(kv->value, &loc, &id))
            continue;
        for (uint32_t i = 0; i < n; i++) {
            uint16_t tid;
            memcpy(&tid, tags + 3 * (size_t)i + 1, 2);
            if ((int8_t)tags[3 * (size_t)i] == loc && tid == id) {
                st->src[st->nsrc++] = uid_at(kv->key.ptr + sizeof prefix - 1);
                break;
            }
        }
    }
    qsort(st->src, st->nsrc, sizeof *st->src, uid_cmp);
    return 0;
}

/* ---------- 2, 3. NativeAPI getRange ---------- */

static void range_done(read_op *r);

static void start_range(op *o, cfdb_bytes key, cfdb_bytes end_key, int32_t rows)
{
    cfdb_key_selector b = { key, true, 0 };     /* lastLessOrEqual */
    cfdb_key_selector e = { end_key, true, 1 }; /* firstGreaterThan */
    txn_native_read(&state_of(o)->r, b, e, cfdb_range_limits_make(rows, -1), false, range_done);
}

static void range_done(read_op *r)
{
    op *o = &r->base;
    addr_state *st = state_of(o);
    const cfdb_native_result *res = &st->nr.result;
    uint64_t bytes = 32ull * res->n; /* getRangeResultFamilyBytes: RangeResultRef::expectedSize */
    for (size_t i = 0; i < res->n; i++)
        bytes += res->rows[i].key.len + res->rows[i].value.len;
    add_cost(o, bytes);
    if (st->stage == STAGE_SERVER_TAGS) {
        st->tags = res->rows;
        st->ntags = res->n;
        st->stage = STAGE_KEY_SERVERS;
        static const char prefix[] = "\xff/keyServers/";
        /* a tenant's key is looked up as the absolute key it is (resolvedKey) */
        size_t tp = o->tx->tenant ? CFDB_TENANT_PREFIX_SIZE : 0;
        uint8_t *k = cfdb_arena_alloc(&o->f->arena, sizeof prefix - 1 + tp + st->key.len + 1);
        if (!k) {
            op_finish(o, TXN_ERR_NO_MEMORY);
            return;
        }
        memcpy(k, prefix, sizeof prefix - 1);
        if (tp)
            cfdb_tenant_prefix(o->tx->tenant_id, k + sizeof prefix - 1);
        if (st->key.len)
            memcpy(k + sizeof prefix - 1 + tp, st->key.ptr, st->key.len);
        cfdb_bytes ks = cfdb_bytes_make(k, sizeof prefix - 1 + tp + st->key.len);
        start_range(o, ks, ks, 1);
        return;
    }
    /* every shard has a team: libfdb_c asserts a row */
    int rc = res->n == 0 ? CFDB_ERR_INTERNAL_ERROR : decode_key_servers(o, res->rows[0].value);
    if (rc) {
        op_finish(o, rc);
        return;
    }
    st->addrs = cfdb_arena_alloc(&o->f->arena, (st->nsrc ? st->nsrc : 1) * sizeof *st->addrs);
    if (!st->addrs) {
        op_finish(o, TXN_ERR_NO_MEMORY);
        return;
    }
    st->stage = STAGE_SERVER_LIST;
    st->next = 0;
    if (st->nsrc == 0)
        deliver(o);
    else
        list_step(o);
}

/* ---------- 1. the read version ---------- */

static void have_version(cfdb_waiter *w, int error, int64_t version)
{
    (void)version;
    op *o = (op *)w;
    if (op_abandoned(o))
        return;
    if (error) {
        op_finish(o, error);
        return;
    }
    addr_state *st = state_of(o);
    st->stage = STAGE_SERVER_TAGS;
    start_range(o, CFDB_BYTES_LIT("\xff/serverTag/"), CFDB_BYTES_LIT("\xff/serverTag0"), TOO_MANY);
}

static void addresses_start(op *o)
{
    addr_state *st = state_of(o);
    st->r.nr = &st->nr;
    o->w.fn = have_version;
    txn_need_read_version(o->tx, &o->w);
}

/* RYW adds getAddressesForKey to `reading`; it adds nothing to the cost kept per operation
 * (its reads add theirs as they end: add_cost) */
static const txn_op_kind addresses_kind = {
    .name = "get_addresses_for_key",
    .flags = TXN_OP_READ | TXN_OP_TENANT_NO_CHECK,
    .start = addresses_start,
};

cfdb_future *cfdb_txn_get_addresses_for_key(cfdb_txn *tx, cfdb_bytes key)
{
    op *o = op_new(tx, &addresses_kind, CFDB_FUTURE_STRINGS, sizeof(addr_state));
    if (!o)
        return txn_future_no_memory(CFDB_FUTURE_STRINGS);
    if (cfdb_arena_dup_bytes(&o->f->arena, key, &state_of(o)->key))
        return op_settle(o, TXN_ERR_NO_MEMORY);
    return op_launch(o);
}
