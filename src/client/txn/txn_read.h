/* Reads from storage servers, shared by the read kinds (txn_read.c: get, get_key, get_range)
 * and get_addresses_for_key (txn_addresses.c): the read operation's state and the NativeAPI
 * reads of txn_native.c -- GetKeyRequests until a selector is resolved (NativeAPI getKey),
 * GetKeyValuesRequests shard by shard with getRange's fallback (NativeAPI getRange) --, with
 * the load balancer's replica choice and relocation after storage errors.
 *
 * A read_op is a kind's struct (its first member the op). Hooks tell the engine what comes
 * next; all run on the network thread. */
#ifndef CFDB_CLIENT_TXN_READ_H
#define CFDB_CLIENT_TXN_READ_H

#include "txn_internal.h"

typedef struct read_op read_op;

struct read_op {
    op base;

    cfdb_bytes key;         /* get: the key; a NativeAPI getKey's selector key; relocation */
    cfdb_ryw_point point;   /* get: local writes over the storage value */
    bool snapshot;
    bool use_ryw;           /* reads see the transaction's writes */
    bool through;           /* read-your-writes off: NativeAPI reads, no snapshot cache */
    /* NativeAPI getKey (get_key with RYW off, getRange's fallback) */
    bool native_key;
    bool or_equal;
    int offset;
    cfdb_key_selector sel0;     /* get_key's selector as asked */
    /* get_range */
    bool range;                 /* get_range (else get_key or get) */
    cfdb_key_selector begin_sel, end_sel; /* orEqual removed */
    bool reverse;
    cfdb_range_limits rlimits;
    cfdb_ryw_read *rr;          /* get_key / get_range through read-your-writes */
    cfdb_native_range *nr;      /* the NativeAPI getRange in flight (in the future's arena) */
    bool fallback;              /* getRange's fallback is resolving its selectors */
    bool fallback_have_begin;
    cfdb_bytes fallback_begin;
    /* RYW off and not snapshot: the slot of this get_key / get_range's read conflict range
     * among NativeAPI's extra conflict ranges (native_tx.h) */
    bool has_conflict_slot;
    uint32_t conflict_slot;
    /* reads system keys for the client itself (txn_native_read): never a tenant's */
    bool raw;

    /* hooks */
    void (*resume)(read_op *r);       /* after a relocation delay; NULL: the NativeAPI read */
    void (*key_resolved)(read_op *r); /* txn_native_get_key resolved the selector to r->key */
    void (*range_done)(read_op *r);   /* the NativeAPI getRange ended: r->nr->result */
};

/* The cached shard holding key (backward: the one ending at it; key and bounds relative to
 * the tenant, -1 for none), or NULL after asking for its location at the transaction's read
 * version: `located` runs with the answer. */
const cfdb_shard *txn_shard_or_locate(op *o, int64_t tenant, cfdb_bytes key, bool backward,
                                      void (*located)(cfdb_waiter *w, int error, int64_t value));
/* A storage read of r->key failed. An unreachable replica: the shard's next one at once (the
 * load balancer's behaviour); wrong shard, or every replica tried: the location is forgotten
 * and looked up again shortly (WRONG_SHARD_SERVER_DELAY); then r->resume runs. */
void txn_storage_failed(read_op *r, int error, bool backward);
/* NativeAPI getKey of sel; r->key_resolved runs with r->key. */
void txn_native_get_key(read_op *r, cfdb_key_selector sel);
/* NativeAPI getRange: r->nr must point at storage for it; rows go to rows_arena (the
 * snapshot cache's, under mu, unless r->through); r->range_done runs when it ends. */
void txn_native_range(read_op *r, cfdb_arena *rows_arena, cfdb_key_selector begin, cfdb_key_selector end,
                      cfdb_range_limits limits, bool reverse);
/* A NativeAPI getRange of system keys outside read-your-writes (rows in the future's arena,
 * no snapshot cache): txn_native_range with r->through set and done as range_done. */
void txn_native_read(read_op *r, cfdb_key_selector begin, cfdb_key_selector end, cfdb_range_limits limits,
                     bool reverse, void (*done)(read_op *r));

/* The tenant id r's requests about key carry (txn_tenant_for, unless the read is raw). */
static inline int64_t read_tenant(const read_op *r, cfdb_bytes key)
{
    return r->raw ? -1 : txn_tenant_for(r->base.tx, key);
}

/* get and watch: 0, or 2004 for a key outside the readable space (the metadata version
 * key is readable without system-key access) (txn_read.c). */
int txn_check_read_key(cfdb_txn *tx, cfdb_bytes key);

#endif
