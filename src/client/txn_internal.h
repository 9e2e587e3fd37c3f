/* Shared by the transaction files: the transaction and operation structs and the
 * operation machinery (transaction.c), used by txn_metadata.c. Network-thread rules as
 * in transaction.h. */
#ifndef CFDB_CLIENT_TXN_INTERNAL_H
#define CFDB_CLIENT_TXN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "cfdb/errors.h"

#define METADATA_VERSION_KEY "\xff/metadataVersion"
#include "key_selector.h"
#include "retry_policy.h"
#include "native_range.h"
#include "ryw.h"
#include "ryw_read.h"
#include "transaction.h"

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

enum op_kind {
    OP_GET,
    OP_GET_KEY,
    OP_GET_RANGE,
    OP_GRV,
    OP_COMMIT,
    OP_WATCH,
    OP_ON_ERROR,
    /* txn_metadata.c */
    OP_STATUS,
    OP_ADDRESSES,
    OP_ESTIMATE_SIZE,
    OP_SPLIT_POINTS,
    /* txn_mapped.c */
    OP_MAPPED_RANGE,
};

typedef struct op op;

struct cfdb_txn {
    /* kept when a transaction object is recycled (see txn_free_task) */
    pthread_mutex_t mu;
    cfdb_ryw ryw; /* guarded by mu */

    /* everything from here on starts at zero */
    cfdb_db *db;
    cfdb_client *cl;
    atomic_int refs;
    atomic_uint gen;

    /* guarded by mu */
    struct {
        uint8_t *mem;          /* one allocation for keys and values */
        cfdb_bytes *keys;      /* \xff\xff/transaction/conflicting_keys/ boundaries, sorted */
        uint8_t *values;       /* '1' begins a conflicting range, '0' ends one */
        uint32_t count;
    } conflicts;
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
    op *watches;  /* waiting for the commit */
    cfdb_timer deadline_timer; /* armed (holding a reference) while ops run under a timeout */
    /* a commit waits for the attempt's reads in flight (RYW commit waits on `reading`) */
    int reads_in_flight;
    uint32_t reads_gen;
    op *commit_waiting;
};

struct op {
    cfdb_waiter w;
    enum op_kind kind;
    bool finished;
    bool read_storage;  /* some reply came from a storage server: the read has a cost */
    bool counted_read;  /* in tx->reads_in_flight */
    bool counted_watch; /* holds one of the database's MAX_WATCHES slots */
    cfdb_client *cl;    /* = tx->cl, for paths that may run after tx is gone */
    uint64_t read_bytes; /* what the storage replies weigh, as NativeAPI counts it */
    cfdb_txn *tx;
    cfdb_future *f;
    uint32_t gen;
    op *prev, *next;
    cfdb_timer timer;
    uint64_t request;
    int replica;        /* which of the shard's servers (mod their count) */
    int replicas_tried; /* failed in a row, before relocating */

    cfdb_bytes key;         /* get, watch; a NativeAPI getKey's selector key */
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
    cfdb_key_selector begin_sel, end_sel; /* orEqual removed */
    bool reverse;
    cfdb_range_limits rlimits;
    cfdb_ryw_read *rr;          /* get_key / get_range through read-your-writes */
    cfdb_native_range *nr;      /* the NativeAPI getRange in flight */
    void (*native_done_hook)(op *o); /* txn_native_read's caller, when the range is read */
                                /* (both in the future's arena, made when the read starts) */
    bool fallback_have_begin;
    cfdb_bytes fallback_begin;
    /* commit */
    cfdb_commit_transaction_request commit;
    cfdb_arena commit_arena;
    /* watch */
    cfdb_opt_bytes watch_value;
    int64_t watch_version;
    int64_t watch_fired_version; /* the storage server's answer, while waitForCommittedVersion runs */
    bool watch_have_value;
    /* on_error */
    int error;
    /* commit */
    bool read_only;
    cfdb_key_range dummy_range; /* commit_unknown_result probe (NativeAPI commitDummyTransaction) */
    int dummy_attempts;
    /* metadata operations (txn_metadata.c) */
    cfdb_bytes end_key;
    int64_t chunk_size;
    int64_t sum;
    cfdb_bytes_vec points;
    uint32_t points_cap;
    /* mapped range reads (txn_mapped.c): state in the future's arena */
    struct cfdb_mapped_state *mapped;
};

/* The storage errors after which NativeAPI looks the key's location up again and retries. */
static inline bool storage_error_relocates(int e)
{
    return e == CFDB_ERR_WRONG_SHARD_SERVER || e == CFDB_ERR_ALL_ALTERNATIVES_FAILED;
}

/* Small helpers shared by the transaction files. */
static inline bool key_is_system(cfdb_bytes k)
{
    return k.len > 0 && k.ptr[0] == 0xff;
}
static inline bool is_metadata_version_key(cfdb_bytes key)
{
    return cfdb_bytes_eq(key, CFDB_BYTES_LIT(METADATA_VERSION_KEY));
}

/* Operation kinds started on the network thread by op_start (transaction.c): */
void txn_get_have_version(cfdb_waiter *w, int error, int64_t version);  /* get (txn_read.c) */
void txn_read_have_version(cfdb_waiter *w, int error, int64_t version); /* get_key, get_range */
void txn_commit_begin(op *o);                                          /* txn_commit.c */
/* A NativeAPI getRange for an operation reading system keys outside read-your-writes (rows
 * in the future's arena, no snapshot cache), with getRange's relocation and fallback;
 * done(o) runs with o->nr->result. o->nr must point at the operation's storage for it, and
 * o->key is used for relocation meanwhile (txn_read.c). */
/* The cached shard holding key (backward: the one ending at it), or NULL after asking for
 * its location at the transaction's read version: `located` runs with the answer
 * (txn_read.c). */
const cfdb_shard *txn_shard_or_locate(op *o, cfdb_bytes key, bool backward, void (*located)(cfdb_waiter *w, int error, int64_t value));
void txn_native_read(op *o, cfdb_key_selector begin, cfdb_key_selector end, cfdb_range_limits limits, bool reverse,
                     void (*done)(op *o));
/* The versionstamp future and the watches end with the commit (txn_commit.c, txn_watch.c). */
void txn_settle_versionstamp(cfdb_txn *tx, int error, bool read_only);
void txn_start_watches(cfdb_txn *tx, int error);
/* Transaction references (transaction.c). */
void txn_ref(cfdb_txn *tx);
void txn_unref(cfdb_txn *tx);

/* Operation machinery (transaction.c). */
op *op_new(cfdb_txn *tx, enum op_kind kind, cfdb_future_kind fkind);
cfdb_future *op_launch(op *o);
void op_link(op *o);
void op_finish(op *o, int error);
bool op_abandoned(op *o);
void op_retry_after(op *o, uint64_t delay_ns, cfdb_timer_fn fn);
void txn_need_read_version(cfdb_txn *tx, cfdb_waiter *w);
void txn_need_read_version_flags(cfdb_txn *tx, cfdb_waiter *w, uint32_t extra_flags);
/* getMaxReadKey: "\xff\xff" with READ_SYSTEM_KEYS or ACCESS_SYSTEM_KEYS, else "\xff". */
cfdb_bytes txn_max_read_key(const cfdb_txn *tx);
bool txn_key_readable(const cfdb_txn *tx, cfdb_bytes key);
/* get and watch: 0, or 2004 for a key outside the readable space (the metadata version
 * key is readable without system-key access) (txn_read.c) */
int txn_check_read_key(cfdb_txn *tx, cfdb_bytes key);

/* The error a new operation fails with: the deferred one, or 1031 once the deadline passed
 * (mu held). */
int txn_error_locked(cfdb_txn *tx);

/* Conflicting keys reported by a failed commit (txn_conflicts.c). */
bool cfdb_conflicts_is_special(cfdb_bytes key);
void cfdb_conflicts_clear(cfdb_txn *tx); /* mu held */
void cfdb_conflicts_record(cfdb_txn *tx, const cfdb_key_range *reads, uint32_t nreads, const int32_t *indices,
                           uint32_t n); /* takes mu */
cfdb_future *cfdb_conflicts_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_conflicts_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);

/* Metadata operations (txn_metadata.c): started on the network thread. */
void cfdb_metadata_op_start(op *o);
/* The special key space (special_keys.c): whether a key / a range read belongs to it, and
 * reads there (module errors as libfdb_c's). */
bool cfdb_special_key(cfdb_bytes key);
bool cfdb_special_range(cfdb_bytes begin, cfdb_bytes end);
cfdb_future *cfdb_special_get(cfdb_txn *tx, cfdb_bytes key);
cfdb_future *cfdb_special_get_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, bool reverse);

/* Mapped range reads (txn_mapped.c): started on the network thread. */
void cfdb_mapped_op_start(op *o);

/* txn_cost.c: the transaction cost estimates of libfdb_c 7.3 (tag throttling's units) */
void txn_cost_read(op *o, uint64_t bytes);          /* a storage reply of this weight arrived */
void txn_cost_read_rows(op *o, const cfdb_key_value *rows, uint32_t n);
void txn_cost_op_finished(op *o, int error);        /* a successful read adds its cost once */
void txn_cost_commit(cfdb_txn *tx, const cfdb_commit_transaction *t); /* the mutations sent */

#endif
