/* The transaction engine's shared core: the transaction struct, the operation header every
 * kind of operation starts with, the table of functions through which the generic machinery
 * drives a kind, and the machinery itself (txn_op.c: lifecycle, deadlines, the read version,
 * retry timers; transaction.c: the transaction's lifecycle).
 *
 * Operation kinds live in their own files (txn_read.c, txn_commit.c, txn_watch.c,
 * txn_metadata.c, txn_addresses.c, txn_mapped.c, txn_on_error.c). Each defines a struct whose
 * first member is `op` and a `txn_op_kind` table, and includes this header; nothing here
 * knows any kind. Invariants:
 *  - an op lives in its future's block (op_new(size) <= CFDB_FUTURE_EXTRA_MAX), so an
 *    operation costs no allocation of its own;
 *  - after op_launch, only the network thread touches an op; it ends exactly once, through
 *    op_finish, which completes the future (unless already complete) and drops the op's
 *    references to its future and transaction;
 *  - errors are FoundationDB's positive codes (cfdb/errors.h); an allocation that fails
 *    fails the operation with TXN_ERR_NO_MEMORY.
 * Threading rules as in transaction.h. */
#ifndef CFDB_CLIENT_TXN_INTERNAL_H
#define CFDB_CLIENT_TXN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "error_codes.h"

#define METADATA_VERSION_KEY "\xff/metadataVersion"
#include "key_selector.h"
#include "retry_policy.h"
#include "native_range.h"
#include "ryw.h"
#include "ryw_read.h"
#include "transaction.h"
#include "txn_api.h"

/* Knobs (fdbclient/ClientKnobs.cpp at 7.3.77). */
#define WRONG_SHARD_SERVER_DELAY_NS 10000000ull  /* WRONG_SHARD_SERVER_DELAY */
#define FUTURE_VERSION_RETRY_DELAY 0.01           /* FUTURE_VERSION_RETRY_DELAY */
#define DEFAULT_BACKOFF 0.01
#define DEFAULT_MAX_BACKOFF 1.0
#define RESOURCE_CONSTRAINED_MAX_BACKOFF 30.0
#define BACKOFF_GROWTH_RATE 2.0
#define KEY_SIZE_LIMIT 10000
#define SYSTEM_KEY_SIZE_LIMIT 30000
#define VALUE_SIZE_LIMIT 100000
#define TRANSACTION_SIZE_LIMIT 10000000
#define REPLY_BYTE_LIMIT 80000
#define WATCH_RETRY_DELAY_NS 10000000ull

/* A reply that does not decode is retried (it may come from a server being replaced) at most
 * this many times in a row per operation; then the operation fails with it. libfdb_c cannot
 * meet such a reply (its transport drops the connection); without a bound a peer answering
 * garbage would keep the operation retrying forever. */
#define TXN_MAX_BAD_REPLIES 20


typedef struct op op;

struct cfdb_txn {
    /* kept when a transaction object is recycled (see txn_free_task) */
    pthread_mutex_t mu;
    cfdb_ryw ryw; /* guarded by mu */

    /* everything from here on starts at zero */
    cfdb_db *db;
    cfdb_client *cl;
    struct cfdb_tenant *tenant; /* NULL, or the tenant (referenced) all keys are relative to */
    atomic_int refs;
    atomic_uint gen;

    /* guarded by mu */
    struct {
        uint8_t *mem;          /* one allocation for keys and values */
        cfdb_bytes *keys;      /* \xff\xff/transaction/conflicting_keys/ boundaries, sorted */
        uint8_t *values;       /* '1' begins a conflicting range, '0' ends one */
        uint32_t count;
    } conflicts;
    struct cfdb_sk_state *sk; /* special-key writes and error message (special_keys.c); NULL if none */
    cfdb_txn_span span; /* (txn_api.h; special_tracing.c) */
    int deferred_error;
    bool cancelled;
    bool committing;
    bool committed;
    cfdb_txn_options opt;
    cfdb_retry_state retry; /* on_error's backoff, retry limit, cancelled state */
    uint64_t creation_ns; /* the timeout counts from here: creation or the last reset */
    _Atomic uint64_t deadline_ns; /* 0 = none; read by the network thread without mu */
    atomic_bool sys_readable;     /* READ_/ACCESS_SYSTEM_KEYS: the network thread's copy */
    int read_error;       /* the first failed read of this attempt: the commit fails with it */

    /* Set on the network thread, cleared by a reset on the application's thread while
     * operations of the old generation may still read them: hence atomic. */
    _Atomic int64_t read_version;
    _Atomic int64_t committed_version;
    atomic_bool has_versionstamp;
    /* fdb_transaction_get_total_cost / get_tag_throttled_duration (txn_cost.c); added to on
     * the network thread, cleared by a reset */
    _Atomic int64_t total_cost;
    _Atomic double tag_throttled_s;

    /* network thread only */
    /* the tenant's id once its lookup succeeded (-1 before, and without a tenant); operations
     * wait for the lookup with the read version (TransactionState::startTransaction) */
    int64_t tenant_id;
    bool tenant_ready;
    bool tenant_waiting;
    cfdb_waiter tenant_waiter;
    cfdb_waiter *tenant_waiters;
    /* \xff/metadataVersion as the GRV reply for read version mv_version had it */
    int64_t mv_version;
    bool mv_present;
    uint8_t mv_len;
    uint8_t mv[CFDB_WAITER_MV_MAX];
    bool rv_requested;
    uint32_t rv_gen;
    cfdb_waiter rv_waiter;
    cfdb_waiter *rv_waiters;
    uint8_t versionstamp[10];
    cfdb_future *versionstamp_future;
    op *ops;      /* in flight */
    op *watches;  /* waiting for the commit (txn_watch.c) */
    cfdb_timer deadline_timer; /* armed (holding a reference) while ops run under a timeout */
    /* Application-thread requests for the network thread, as embedded task nodes (posting
     * cannot fail). Each holds one reference while queued; a request made while its node is
     * still queued is covered by that run (both tasks read the transaction's state when they
     * run), so it takes no reference and posts nothing. */
    cfdb_task deadline_rearm_task;
    cfdb_task after_reset_task;
    /* a commit waits for the attempt's reads in flight (RYW commit waits on `reading`) */
    int reads_in_flight;
    uint32_t reads_gen;
    op *commit_waiting;
};

/* ---------- operation kinds ---------- */

enum {
    /* RYW's `reading`: a commit of the same attempt waits until it is done, and fails with
     * its error */
    TXN_OP_READ = 1u << 0,
    /* its storage replies count in the transaction's cost once it succeeds (txn_cost.c) */
    TXN_OP_COSTED = 1u << 1,
    /* not ended by the transaction's timeout, nor failed by a reset's sweep of the ops in
     * flight: on_error and watches, which have rules of their own */
    TXN_OP_OWN_LIFETIME = 1u << 2,
    /* Tenants (NativeAPI's TransactionState::getTenantInfo). By default an op waits for its
     * tenant's lookup with the read version, and its requests carry TenantInfo, so it fails
     * with tenant_name_required (2130: a tenant-less transaction, no raw access, the cluster
     * requires tenants) or tenants_disabled (2136: a tenant in a cluster with tenants off).
     * These flags narrow that: */
    TXN_OP_TENANT_NONE = 1u << 3,          /* neither waits nor checks (getReadVersion) */
    TXN_OP_TENANT_NO_CHECK = 1u << 4,      /* waits, never checks (getAddressesForKey) */
    TXN_OP_TENANT_CHECK_IF_TENANT = 1u << 5, /* checks only with a tenant (populateAndGetTenant) */
};

typedef struct txn_op_kind {
    const char *name;
    uint32_t flags;
    /* Network thread, once the op is queued. Unless the kind sets `raw_start`, the op is
     * linked into the transaction's ops first and, unless TXN_OP_OWN_LIFETIME, checked for
     * abandonment and put under the transaction's deadline. */
    void (*start)(op *o);
    bool raw_start;
    /* Optional: a commit's continuation once the reads it waited for are done
     * (txn_commit_must_wait); without it, start runs again. */
    void (*resume)(op *o);
    /* Optional: runs in op_finish before the future completes (release what the kind holds). */
    void (*finish)(op *o, int error);
} txn_op_kind;

/* The header every operation starts with (a kind's struct has it as its first member). */
struct op {
    cfdb_waiter w;      /* first: waiter lists hold ops */
    const txn_op_kind *kind;
    bool finished;
    bool read_storage;  /* some reply came from a storage server: the read has a cost */
    bool counted_read;  /* in tx->reads_in_flight */
    cfdb_client *cl;    /* = tx->cl, for paths that may run after tx is gone */
    uint64_t read_bytes; /* what the storage replies weigh, as NativeAPI counts it */
    cfdb_txn *tx;
    cfdb_future *f;
    uint32_t gen;
    op *prev, *next;
    cfdb_timer timer;
    /* The op's one network-thread task node (posting cannot fail): op_start at launch, later
     * a waiting commit's resume. Never queued twice: the launch has run before the op can
     * wait, and a waiting commit is released once per wait. */
    cfdb_task task;
    uint64_t request;
    int replica;        /* which of the shard's servers (mod their count) */
    int replicas_tried; /* failed in a row, before relocating */
    int bad_replies;    /* undecodable replies in a row (TXN_MAX_BAD_REPLIES) */
};

/* The kind's struct of an op (its first member is the op). */
#define TXN_OP_AS(type, o) ((type *)(void *)(o))

/* The storage errors after which NativeAPI looks the key's location up again and retries. */
static inline bool storage_error_relocates(int e)
{
    return e == CFDB_ERR_WRONG_SHARD_SERVER || e == CFDB_ERR_ALL_ALTERNATIVES_FAILED;
}

/* fb_decode of a reply frame: 0 or its positive FoundationDB code (1044 serialization_failed
 * ...). */
static inline int txn_decode(const fb_message *m, const uint8_t *msg, uint32_t len, void *item,
                             cfdb_reply_error *err, cfdb_arena *arena)
{
    return fb_decode(m, msg, len, item, err, arena);
}

/* ---------- a storage server's reply (txn_op.c) ----------
 *
 * Every reply from a storage server starts the same way: forget the request, stop if the op
 * was abandoned, decode, take the in-band error, and decide between "go on", "fail" and
 * "look the location up again". txn_storage_reply does that, driven by this description. */
#define TXN_REPLY_NO_INBAND SIZE_MAX
enum {
    /* future_version is retried through relocation as well (storage metrics) */
    TXN_REPLY_RELOCATE_FUTURE_VERSION = 1u << 0,
};
typedef struct txn_reply_desc {
    const fb_message *msg;
    size_t size;          /* the reply struct's size (zeroed before decoding) */
    size_t error_offset;  /* offsetof its cfdb_opt_error, or TXN_REPLY_NO_INBAND */
    uint32_t flags;
} txn_reply_desc;
/* The relocation action of a kind: look the location up again and retry, for `error` -- a
 * transport error, storage_error_relocates(error), an undecodable reply's code (a garbage
 * reply may come from a server being replaced: relocation, bounded by TXN_MAX_BAD_REPLIES),
 * or another error the kind's flags send here. The range kinds also receive
 * wrong_shard_server here (their fallback). */
typedef void (*txn_relocate_fn)(op *o, int error);
/* true: `rep` holds a good reply without error, the caller goes on. false: the op was
 * abandoned, relocated (relocate ran), or finished (an error it cannot retry, or too many
 * undecodable replies); the caller returns. Decodes into `arena`. */
bool txn_storage_reply(op *o, int transport_error, const uint8_t *msg, uint32_t len, const txn_reply_desc *d,
                       void *rep, cfdb_arena *arena, txn_relocate_fn relocate);

/* The tenant id requests about key carry (network thread, once the op has its read
 * version): the transaction's tenant's, or -1 (no tenant; the metadata version key is never
 * a tenant's). */
static inline int64_t txn_tenant_for(const cfdb_txn *tx, cfdb_bytes key);

/* Small helpers shared by the transaction files. */
static inline bool key_is_system(cfdb_bytes k)
{
    return k.len > 0 && k.ptr[0] == 0xff;
}
static inline bool is_metadata_version_key(cfdb_bytes key)
{
    return cfdb_bytes_eq(key, CFDB_BYTES_LIT(METADATA_VERSION_KEY));
}

static inline int64_t txn_tenant_for(const cfdb_txn *tx, cfdb_bytes key)
{
    return tx->tenant && !is_metadata_version_key(key) ? tx->tenant_id : -1;
}

/* getTenantInfo's checks for op o (network thread): 0, 2130 or 2136 (see the kind flags). */
int txn_tenant_check(op *o);

/* ---------- the operation machinery (txn_op.c) ---------- */

/* A new op of `size` bytes (the kind's struct, >= sizeof(op), zeroed) in a new future of
 * fkind; NULL when memory is short (the caller answers txn_future_no_memory). */
op *op_new(cfdb_txn *tx, const txn_op_kind *kind, cfdb_future_kind fkind, size_t size);
/* Queues the op's start on the network thread; returns the application's future. */
cfdb_future *op_launch(op *o);
/* Ends an op that was never launched, on the application's thread: its future completes
 * with error (the kind's result fields set by the caller); returns the future. */
cfdb_future *op_settle(op *o, int error);
void op_link(op *o);
void op_finish(op *o, int error);
/* True when the op should stop (cancelled, reset, timed out); finishes it then. */
bool op_abandoned(op *o);
void op_retry_after(op *o, uint64_t delay_ns, cfdb_timer_fn fn);
/* A reply did not decode (error rc): true (after finishing the op with rc) once that happened
 * TXN_MAX_BAD_REPLIES times in a row; false: the caller retries. A good reply resets it. */
bool op_bad_reply(op *o, int rc);
static inline void op_good_reply(op *o)
{
    o->bad_replies = 0;
}
/* A commit waits for the attempt's reads in flight: true when o must wait (its kind's
 * resume runs once they are done). */
bool txn_commit_must_wait(op *o);
/* Ends the application's side of the ops in flight (reset, cancel, timeout). */
void txn_complete_ops(cfdb_txn *tx, int error, bool only_current_gen);
void txn_arm_deadline(cfdb_txn *tx);
void txn_disarm_deadline(cfdb_txn *tx);
/* Calls w when the transaction has a read version. */
void txn_need_read_version(cfdb_txn *tx, cfdb_waiter *w);
void txn_need_read_version_flags(cfdb_txn *tx, cfdb_waiter *w, uint32_t extra_flags);

/* ---------- the transaction (transaction.c) ---------- */

/* Clears the transaction's state for a new attempt (mu held); keep_backoff: on_error's reset. */
void txn_reset_locked(cfdb_txn *tx, bool keep_backoff);
/* getMaxReadKey: "\xff\xff" with READ_SYSTEM_KEYS or ACCESS_SYSTEM_KEYS, else "\xff". */
cfdb_bytes txn_max_read_key(const cfdb_txn *tx);
bool txn_key_readable(const cfdb_txn *tx, cfdb_bytes key);

/* ---------- cost (txn_cost.c): libfdb_c 7.3's estimates (tag throttling's units) ---------- */

void txn_cost_read(op *o, uint64_t bytes);          /* a storage reply of this weight arrived */
void txn_cost_read_rows(op *o, const cfdb_key_value *rows, uint32_t n);
void txn_cost_op_finished(op *o, int error);        /* a successful read adds its cost once */
void txn_cost_commit(cfdb_txn *tx, const cfdb_commit_transaction *t); /* the mutations sent */

#endif
