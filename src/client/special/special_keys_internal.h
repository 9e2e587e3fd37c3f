/* What the special key space's modules share (special_keys.c routes, special_worker.c runs
 * the modules that read the database, special_tenant_map.c, special_management.c and
 * special_configuration.c are the modules).
 *
 * A module that needs the database (the tenant map, exclusions, the lock...) computes on a
 * management worker thread, as libfdb_c's module actors do on the network thread: it reads
 * and writes through the transaction's own calls (cfdb_txn_get, cfdb_txn_set...) and blocks
 * on their futures, so its reads join the transaction's read conflict ranges and its writes
 * go out with its commit. While a worker runs, the transaction may read and write system
 * keys (libfdb_c's module code uses the NativeAPI transaction, which does not check them);
 * the application's own access is restored when the worker ends. */
#ifndef CFDB_CLIENT_SPECIAL_KEYS_INTERNAL_H
#define CFDB_CLIENT_SPECIAL_KEYS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "future.h"
#include "special_keys.h"
#include "special_writes.h"
#include "transaction.h"

#define SK_MGMT "\xff\xff/management/"
#define SK_CONF "\xff\xff/configuration/"

/* A transaction's special-key state (cfdb_txn.sk; guarded by mu, freed by a reset). */
typedef struct cfdb_sk_state {
    sk_writes w;
    char *error_msg; /* \xff\xff/error_message: the last management failure's JSON */
    /* management jobs running on this transaction (special_worker.c): the first one saves
     * the application's system-key access, the last one restores it; kept over a reset
     * while any runs */
    int active;
    bool saved_access, saved_read, saved_readable;
} cfdb_sk_state;

/* Whether key k starts with the C string prefix. */
bool sk_has_prefix(cfdb_bytes k, const char *prefix);
/* prefix + tail, copied into a; an empty result (ptr NULL) when out of memory. */
cfdb_bytes sk_key(cfdb_arena *a, const char *prefix, cfdb_bytes tail);

/* Rows of a module's answer, in its future's arena. */
typedef struct sk_rows {
    cfdb_fdb_kv *items;
    int n, cap;
} sk_rows;
int sk_rows_push(sk_rows *r, cfdb_arena *a, cfdb_bytes key, cfdb_bytes value);

/* A copy of the transaction's special writes inside [begin, end), in a. */
typedef struct sk_entries {
    sk_write *items;
    size_t n;
    bool ryw_disabled;
} sk_entries;
int sk_collect(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_entries *out);

/* rywGetRange: the database's rows db of [begin, end) with the transaction's special writes
 * laid over them (sets replace, clears remove), into out (worker thread). */
int sk_ryw_merge(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, const sk_rows *db, sk_rows *out);

/* Sets \xff\xff/error_message (ManagementAPIError::toJsonString(retriable, command, message))
 * and returns special_keys_api_failure (2117). */
int sk_api_failure(cfdb_txn *tx, bool retriable, const char *command, const char *message);

/* ---- blocking helpers, for module code on a worker thread only ---- */
int skw_get(cfdb_txn *tx, cfdb_bytes key, cfdb_arena *a, bool *present, cfdb_bytes *value);
/* Every row of [begin, end) (up to limit rows if limit > 0), copied into a. */
int skw_range(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, cfdb_arena *a, sk_rows *out);
/* The same through NativeAPI's read beneath read-your-writes (cfdb_txn_get_range_native), for
 * module code libfdb_c runs on ryw->getTransaction(). */
int skw_range_native(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, int limit, cfdb_arena *a, sk_rows *out);
/* Writes: 0 or the transaction's deferred error. */
int skw_set(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value);
int skw_clear(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end);
int skw_atomic(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes param, int type);
int skw_write_conflict(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end);
int skw_read_conflict(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end);
void skw_set_option(cfdb_txn *tx, int option);

/* A module's read of [begin, end) (inside its own range), on a worker thread. */
typedef int (*sk_read_fn)(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
/* A module's commit work (its writes are in the transaction's special write map). */
typedef int (*sk_commit_fn)(cfdb_txn *tx, cfdb_arena *a);

/* How a write module takes set and clear (SpecialKeyRangeRWImpl's set/clear overrides). */
enum sk_write_kind {
    SK_W_DEFAULT,     /* record the value / the clear */
    SK_W_IGNORE_VALUE, /* exclusions: record "" */
    SK_W_OPTIONS,     /* options/: only the known options are recorded; clears forget */
    SK_W_NO_CLEAR,    /* clears fail with special_keys_api_failure (tracing, coordinators) */
};

/* A module's own set or clear, called with mu held (the SpecialKeyRangeRWImpl::set / clear
 * overrides that do more than record the write): it says what the router does next. */
enum sk_record { SK_REC_NONE, SK_REC_VALUE, SK_REC_CLEAR };
typedef struct sk_write_effect {
    enum sk_record record; /* what goes into the write map over the key or range */
    const char *cmd, *msg; /* msg set: \xff\xff/error_message = toJsonString(false, cmd, msg) */
    int rc;                /* the call's error, after the message */
} sk_write_effect;
typedef void (*sk_set_fn)(cfdb_txn *tx, cfdb_bytes key, cfdb_bytes value, sk_write_effect *e);
typedef void (*sk_clear_fn)(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, bool single, sk_write_effect *e);

typedef struct sk_impl {
    const char *begin, *end; /* end NULL: the single key begin */
    sk_read_fn read;         /* NULL: not answered by cfdb (2108) */
    sk_commit_fn commit;     /* NULL and writable: 2108 at commit */
    bool writable;
    enum sk_write_kind write_kind;
} sk_impl;

/* An implementation whose set or clear is its own (NULL: as its write_kind says). */
typedef struct sk_write_hooks {
    sk_read_fn read; /* the implementation's read names it */
    sk_set_fn set;
    sk_clear_fn clear;
} sk_write_hooks;

struct sk_impl;
/* The writable implementation whose range holds key, or NULL. */
const struct sk_impl *sk_find_write_impl(cfdb_bytes key);
/* The API version the application selected (0 before): which implementations exist
 * depends on it (special_profiling.c). */
void cfdb_special_set_api_version(int version);

/* The registered implementations of the modules (special_management.c etc.). */
extern const sk_impl sk_management_impls[];
extern const int sk_management_impl_count;
extern const sk_impl sk_configuration_impls[];
extern const int sk_configuration_impl_count;
extern const sk_impl sk_worker_interfaces_impls[]; /* special_worker_interfaces.c */
extern const int sk_worker_interfaces_impl_count;
extern const sk_impl sk_metrics_impls[]; /* special_metrics.c */
extern const int sk_metrics_impl_count;
/* modules (issue 12, modules): each one implementation, one file */
extern const sk_impl sk_global_config_impl;     /* special_global_config.c */
extern const sk_impl sk_tracing_impl;           /* special_tracing.c */
extern const sk_impl sk_actor_lineage_impl;     /* special_lineage.c */
extern const sk_impl sk_actor_profiler_impl;    /* special_lineage.c */
extern const sk_write_hooks sk_tracing_hooks, sk_actor_profiler_hooks, sk_profiling_hooks;
/* GlobalConfig::applyChanges: muts are SetValue / ClearRange of bare keys (special_global_config.c) */
struct cfdb_mutation;
int sk_gc_apply_changes(cfdb_txn *tx, cfdb_arena *a, struct cfdb_mutation *muts, size_t nm);
/* management/profiling/ (special_profiling.c; listed in special_management.c): registered
 * only below API 720 (ClientProfilingImpl's deprecatedVersion) */
int sk_profiling_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
int sk_profiling_commit(cfdb_txn *tx, cfdb_arena *a);
bool sk_impl_registered(const sk_impl *m);
/* Sets \xff\xff/error_message to message as it is (a module commit's own text, which
 * SpecialKeySpace::commit stores unchanged) and returns special_keys_api_failure (2117). */
int sk_api_failure_text(cfdb_txn *tx, const char *message);

/* Module reads and commits shared by several files. */
int sk_tenant_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
int sk_tenant_commit(cfdb_txn *tx, cfdb_arena *a);
/* AddressExclusion::parse then toString (special_management.c): false when invalid */
bool sk_parse_exclusion(cfdb_bytes text, char *out, size_t cap);
/* exclusions (issue 12), special_exclusion.c: checkExclusion for n canonical addresses or
 * localities (0 safe, 2117 with the message, or an error); in_progress_exclusion/ */
int sk_exclusion_safety(cfdb_txn *tx, cfdb_arena *a, char (*items)[128], size_t n, bool locality, bool failed);
int sk_in_progress_exclusion_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
/* A worker of \xff/worker/ as ManagementAPI's getWorkers gives it (its class replaced by
 * \xff/processClass/'s when that one is set_class or its own is unset; no test class). */
#define SK_WORKER_LOCALITIES 8
typedef struct sk_worker {
    char addr[64]; /* formatIpPort: "ip:port", "[v6]:port" */
    char ip[48];   /* the IP alone, for whole-machine matches */
    uint16_t port;
    bool tls;
    cfdb_bytes pid;
    bool has_pid;
    int cls, src;
    /* the present LocalityData entries (the first SK_WORKER_LOCALITIES), in the value's order */
    cfdb_bytes loc_key[SK_WORKER_LOCALITIES], loc_val[SK_WORKER_LOCALITIES];
    int nloc;
} sk_worker;
/* special_process_class.c: the workers, sorted by addr, duplicates dropped (worker thread) */
int sk_get_workers(cfdb_txn *tx, cfdb_arena *a, sk_worker **out, int *n);
/* special_process_class.c: process/class_type/, process/class_source/ */
int sk_class_type_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
int sk_class_type_commit(cfdb_txn *tx, cfdb_arena *a);
int sk_class_source_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
/* special_versions.c: version_epoch, min_required_commit_version */
int sk_version_epoch_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
int sk_version_epoch_commit(cfdb_txn *tx, cfdb_arena *a);
int sk_min_commit_version_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);
int sk_min_commit_version_commit(cfdb_txn *tx, cfdb_arena *a);
/* special_coordinators.c: configuration/coordinators/ at commit (changeQuorumChecker) */
int sk_coordinators_commit(cfdb_txn *tx, cfdb_arena *a);
/* special_auto_coordinators.c: management/auto_coordinators (CoordinatorsAutoImpl) */
int sk_auto_coordinators_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out);

/* ---- running module code on a worker ---- */
/* A range read answered by fn-s of the impls met in [begin, end); single: a get of begin. */
cfdb_future *sk_async_read(cfdb_txn *tx, const sk_impl *impls, int nimpls, cfdb_bytes begin, cfdb_bytes end,
                           int limit, bool reverse, bool single);
/* Runs the written modules' commits, then the transaction's commit. */
cfdb_future *sk_async_commit(cfdb_txn *tx);

#endif
