/* on_error classification and backoff (Transaction::onError and
 * getBackoff in NativeAPI.actor.cpp, RYWImpl::onError in ReadYourWrites.actor.cpp),
 * client knob defaults (ClientKnobs.cpp), transaction option defaults and the
 * client-side key/value/size checks with the error codes libfdb_c returns. */
#ifndef CFDB_CLIENT_RETRY_POLICY_H
#define CFDB_CLIENT_RETRY_POLICY_H

#include "tenant_keys.h" /* CFDB_TENANT_PREFIX_SIZE */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/bytes.h"
#include "messages.h"
#include "mutation.h"

/* Client knobs (defaults, fdbclient/ClientKnobs.cpp) */
#define CFDB_KNOB_DEFAULT_BACKOFF 0.01
#define CFDB_KNOB_DEFAULT_MAX_BACKOFF 1.0
#define CFDB_KNOB_BACKOFF_GROWTH_RATE 2.0
#define CFDB_KNOB_RESOURCE_CONSTRAINED_MAX_BACKOFF 30.0
#define CFDB_KNOB_FUTURE_VERSION_RETRY_DELAY 0.01
#define CFDB_KNOB_TAG_THROTTLE_RECHECK_INTERVAL 5.0
#define CFDB_KNOB_PROXY_MAX_TAG_THROTTLE_DURATION 5.0
#define CFDB_KNOB_WRONG_SHARD_SERVER_DELAY 0.01
#define CFDB_KNOB_COORDINATOR_RECONNECTION_DELAY 1.0
#define CFDB_KNOB_WATCH_POLLING_TIME 1.0
#define CFDB_KNOB_LOCATION_CACHE_EVICTION_SIZE 600000
#define CFDB_KNOB_KEY_SIZE_LIMIT 10000
#define CFDB_KNOB_SYSTEM_KEY_SIZE_LIMIT 30000
#define CFDB_KNOB_VALUE_SIZE_LIMIT 100000
#define CFDB_KNOB_TRANSACTION_SIZE_LIMIT 10000000
#define CFDB_KNOB_REPLY_BYTE_LIMIT 80000

/* How Transaction::onError treats an error. */
typedef enum cfdb_retry_class {
    CFDB_RETRY_NO = 0,      /* returned to the caller */
    CFDB_RETRY_BACKOFF = 1, /* "R": reset, wait the exponential backoff */
    CFDB_RETRY_FUTURE = 2,  /* "F": reset, wait min(FUTURE_VERSION_RETRY_DELAY, max backoff) */
} cfdb_retry_class;

cfdb_retry_class cfdb_retry_classify(int error_code);

/* Per-transaction retry state. backoff survives on_error resets; only a full
 * reset (new transaction / fdb_transaction_reset) restores the defaults. */
typedef struct cfdb_retry_state {
    double backoff;     /* next base delay, starts at DEFAULT_BACKOFF */
    double max_backoff; /* MAX_RETRY_DELAY option (seconds), default 1.0 */
    int64_t max_retries; /* RETRY_LIMIT option, -1 = unlimited */
    int retries;         /* on_error calls so far (saturates at INT_MAX) */
    /* Set when the transaction is cancelled or timed out (RYW resetPromise):
     * on_error then fails with this code. 0 = none. */
    int cancelled_error;
    /* Sum of PROXY_MAX_TAG_THROTTLE_DURATION added per proxy_tag_throttled. */
    double proxy_tag_throttled_duration;
} cfdb_retry_state;

/* Fresh state (transaction creation or full reset). */
void cfdb_retry_state_init(cfdb_retry_state *s);
/* fdb_transaction_reset(): backoff, retries and the cancelled flag back to
 * defaults; options set with set_option are the caller's business (the
 * defaults are restored here; re-apply persistent ones). */
void cfdb_retry_state_full_reset(cfdb_retry_state *s);

/* Option MAX_RETRY_DELAY (milliseconds, as fdb_transaction_set_option passes it). */
void cfdb_retry_set_max_retry_delay_ms(cfdb_retry_state *s, int64_t ms);
/* Option RETRY_LIMIT (-1 = unlimited). */
void cfdb_retry_set_retry_limit(cfdb_retry_state *s, int64_t limit);

/* fdb_transaction_on_error(error_code).
 * random01: a uniform draw in [0, 1) (the caller's RNG; makes this testable).
 * tag_throttle: for tag_throttled, the longest known throttle duration of the
 * transaction's tags (seconds), or 0.
 * Returns 0 when the transaction should be reset and on_error completes after
 * *delay seconds; otherwise the error code on_error fails with (the transaction
 * is then cancelled: s->cancelled_error is set to transaction_cancelled). */
int cfdb_retry_on_error(cfdb_retry_state *s, int error_code, double random01, double tag_throttle,
                        double *delay);

/* Transaction::getBackoff alone (updates s->backoff). */
double cfdb_retry_get_backoff(cfdb_retry_state *s, int error_code, double random01, double tag_throttle);

/* ---- key and value checks (ReadYourWritesTransaction / Transaction) ---------------- */

/* Largest key the transaction may read ("\xff" or "\xff\xff" with READ_SYSTEM_KEYS /
 * ACCESS_SYSTEM_KEYS) or write. */
cfdb_bytes cfdb_max_read_key(bool read_system_keys);
cfdb_bytes cfdb_max_write_key(bool write_system_keys);

/* getMaxWriteKeySize: 30000 under "\xff", else 10000 (+8 with RAW_ACCESS). */
int64_t cfdb_max_write_key_size(cfdb_bytes key, bool raw_access);
/* getMaxReadKeySize / getMaxClearKeySize / getMaxKeySize (RAW_ACCESS allowance included). */
int64_t cfdb_max_key_size(cfdb_bytes key);

/* Truncates a range boundary longer than the largest possible key to size+1 bytes
 * (an equivalent boundary, as clear/conflict ranges do). */
cfdb_bytes cfdb_truncate_range_key(cfdb_bytes key);

/* Every check returns 0 or the error code libfdb_c returns, in libfdb_c's order. */
/* set(): metadataVersion key -> client_invalid_operation; key >= max write key ->
 * key_outside_legal_range; key_too_large; value_too_large. */
int cfdb_check_set(cfdb_bytes key, cfdb_bytes value, bool write_system_keys, bool raw_access);
/* atomic_op(): metadataVersion key only with SetVersionstampedValue and the
 * required 14 zero bytes; key_outside_legal_range; invalid_mutation_type;
 * key_too_large; value_too_large (versionstamp offsets: the write map). */
int cfdb_check_atomic(int type, cfdb_bytes key, cfdb_bytes operand, bool write_system_keys, bool raw_access);
/* clear(key): key_outside_legal_range when key >= max write key. Sets *noop when
 * the key is longer than any key can be (libfdb_c ignores such a clear). */
int cfdb_check_clear_key(cfdb_bytes key, bool write_system_keys, bool *noop);
/* clear_range(): inverted_range, then key_outside_legal_range when an end is >
 * the max write key. */
int cfdb_check_clear_range(cfdb_bytes begin, cfdb_bytes end, bool write_system_keys);
/* get(): key_outside_legal_range when key >= max read key (except the
 * metadataVersion key); *noop when the key is too long to exist (result: absent). */
int cfdb_check_get(cfdb_bytes key, bool read_system_keys, bool *noop);
/* get_key()/get_range() selector keys: key_outside_legal_range when > max read key. */
int cfdb_check_selector_key(cfdb_bytes key, bool read_system_keys);
/* add_conflict_range(): inverted_range; key_outside_legal_range when an end is >
 * the max key (READ: max read key, except [metadataVersion, +\0); WRITE: max write key). */
int cfdb_check_conflict_range(cfdb_bytes begin, cfdb_bytes end, bool write, bool system_keys);

/* sizeof(MutationRef) and sizeof(KeyRangeRef) on 64-bit in 7.3, as counted by
 * Transaction::getSize (VectorRef::expectedSize). */
#define CFDB_SIZEOF_MUTATION_REF 56
#define CFDB_SIZEOF_KEY_RANGE_REF 32
/* Transaction::getSize of a commit: mutations + read + write conflict ranges. */
uint64_t cfdb_commit_size(const cfdb_mutation *mutations, size_t n_mutations, const cfdb_key_range *read_ranges,
                          size_t n_read, const cfdb_key_range *write_ranges, size_t n_write);
/* transaction_too_large (2101) when size > limit (SIZE_LIMIT option, default 10,000,000). */
int cfdb_check_commit_size(uint64_t size, int64_t size_limit);


/* ---- transaction option values ------------------------------------------------------ */

/* extractIntOption: an integer option value must be exactly 8 bytes (little-endian
 * int64) within [min, max]. Returns 0, CFDB_ERR_INVALID_OPTION_VALUE (2006) for a
 * bad length or range, or CFDB_ERR_INVALID_OPTION_VALUE when value is NULL. */
int cfdb_option_int(const uint8_t *value, int value_len, int64_t min, int64_t max, int64_t *out);
/* Bounds libfdb_c applies: TIMEOUT (ms) [0, INT_MAX]; RETRY_LIMIT [-1, INT_MAX];
 * MAX_RETRY_DELAY (ms) [0, INT32_MAX]; SIZE_LIMIT [32, 10,000,000]. */
#define CFDB_OPTION_TIMEOUT_MIN 0
#define CFDB_OPTION_TIMEOUT_MAX 2147483647LL
#define CFDB_OPTION_RETRY_LIMIT_MIN (-1)
#define CFDB_OPTION_RETRY_LIMIT_MAX 2147483647LL
#define CFDB_OPTION_MAX_RETRY_DELAY_MIN 0
#define CFDB_OPTION_MAX_RETRY_DELAY_MAX 2147483647LL
#define CFDB_OPTION_SIZE_LIMIT_MIN 32
#define CFDB_OPTION_SIZE_LIMIT_MAX CFDB_KNOB_TRANSACTION_SIZE_LIMIT

/* TIMEOUT: the transaction fails with transaction_timed_out (1031) at
 * creation_time + timeout, where creation_time is when the transaction was created
 * or last fdb_transaction_reset (on_error does not move it; the option survives
 * on_error). Returns the deadline in the caller's clock, or 0 when timeout_ms is 0
 * (no timeout). Setting the option re-arms the timer from the same creation time,
 * so a deadline already past fires at once. */
double cfdb_timeout_deadline(double creation_time, int64_t timeout_ms);

/* fdb_transaction_get_approximate_size: ReadYourWritesTransaction::approximateSize
 * grows by these amounts per call (lengths in bytes). */
int64_t cfdb_approx_size_set(size_t key_len, size_t value_len, bool add_conflict);
int64_t cfdb_approx_size_atomic(size_t key_len, size_t operand_len, bool add_conflict);
int64_t cfdb_approx_size_clear_range(size_t begin_len, size_t end_len, bool add_conflict);
int64_t cfdb_approx_size_clear_key(size_t key_len, bool add_conflict);
/* add_conflict_range(WRITE), and each read conflict piece [begin, end) added */
int64_t cfdb_approx_size_conflict_range(size_t begin_len, size_t end_len);
/* a get(key) that adds a read conflict */
int64_t cfdb_approx_size_read_key(size_t key_len);

#endif
