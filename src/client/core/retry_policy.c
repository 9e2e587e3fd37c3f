#include "retry_policy.h"

#include <limits.h>
#include <string.h>

#include "error_codes.h"

static const uint8_t max_key_normal[1] = { 0xff };
static const uint8_t max_key_system[2] = { 0xff, 0xff };
static const char metadata_version_key[] = "\xff/metadataVersion";

cfdb_retry_class cfdb_retry_classify(int e)
{
    switch (e) {
    case CFDB_ERR_NOT_COMMITTED:
    case CFDB_ERR_COMMIT_UNKNOWN_RESULT:
    case CFDB_ERR_DATABASE_LOCKED:
    case CFDB_ERR_COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED:
    case CFDB_ERR_GRV_PROXY_MEMORY_LIMIT_EXCEEDED:
    case CFDB_ERR_PROCESS_BEHIND:
    case CFDB_ERR_BATCH_TRANSACTION_THROTTLED:
    case CFDB_ERR_TAG_THROTTLED:
    case CFDB_ERR_BLOB_GRANULE_REQUEST_FAILED:
    case CFDB_ERR_PROXY_TAG_THROTTLED:
        return CFDB_RETRY_BACKOFF;
    case CFDB_ERR_TRANSACTION_TOO_OLD:
    case CFDB_ERR_FUTURE_VERSION:
        return CFDB_RETRY_FUTURE;
    default:
        return CFDB_RETRY_NO;
    }
}

void cfdb_retry_state_init(cfdb_retry_state *s)
{
    memset(s, 0, sizeof *s);
    s->backoff = CFDB_KNOB_DEFAULT_BACKOFF;
    s->max_backoff = CFDB_KNOB_DEFAULT_MAX_BACKOFF;
    s->max_retries = -1;
}

void cfdb_retry_state_full_reset(cfdb_retry_state *s)
{
    cfdb_retry_state_init(s);
}

void cfdb_retry_set_max_retry_delay_ms(cfdb_retry_state *s, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    if (ms > INT_MAX)
        ms = INT_MAX;
    s->max_backoff = (double)ms / 1000.0;
}

void cfdb_retry_set_retry_limit(cfdb_retry_state *s, int64_t limit)
{
    s->max_retries = limit;
}

double cfdb_retry_get_backoff(cfdb_retry_state *s, int e, double random01, double tag_throttle)
{
    double d = s->backoff;
    if (e == CFDB_ERR_TAG_THROTTLED && tag_throttle > 0) {
        double t = tag_throttle < CFDB_KNOB_TAG_THROTTLE_RECHECK_INTERVAL ? tag_throttle
                                                                          : CFDB_KNOB_TAG_THROTTLE_RECHECK_INTERVAL;
        if (t > d)
            d = t;
    }
    d *= random01;
    double cap = (e == CFDB_ERR_COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED || e == CFDB_ERR_GRV_PROXY_MEMORY_LIMIT_EXCEEDED)
                     ? CFDB_KNOB_RESOURCE_CONSTRAINED_MAX_BACKOFF
                     : s->max_backoff;
    double next = s->backoff * CFDB_KNOB_BACKOFF_GROWTH_RATE;
    s->backoff = next < cap ? next : cap;
    return d;
}

static int fail(cfdb_retry_state *s, int err)
{
    if (!s->cancelled_error)
        s->cancelled_error = CFDB_ERR_TRANSACTION_CANCELLED;
    if (err == CFDB_ERR_BROKEN_PROMISE)
        err = CFDB_ERR_TRANSACTION_CANCELLED;
    return err;
}

int cfdb_retry_on_error(cfdb_retry_state *s, int e, double random01, double tag_throttle, double *delay)
{
    *delay = 0;
    if (s->cancelled_error)
        return fail(s, s->cancelled_error);
    bool limit_hit = s->max_retries != -1 && (int64_t)s->retries >= s->max_retries;
    if (s->retries < INT_MAX)
        s->retries++;
    if (limit_hit)
        return fail(s, e);
    if (e == CFDB_ERR_SUCCESS)
        return fail(s, CFDB_ERR_CLIENT_INVALID_OPERATION);
    switch (cfdb_retry_classify(e)) {
    case CFDB_RETRY_BACKOFF:
        if (e == CFDB_ERR_PROXY_TAG_THROTTLED)
            s->proxy_tag_throttled_duration += CFDB_KNOB_PROXY_MAX_TAG_THROTTLE_DURATION;
        *delay = cfdb_retry_get_backoff(s, e, random01, tag_throttle);
        return 0;
    case CFDB_RETRY_FUTURE:
        *delay = CFDB_KNOB_FUTURE_VERSION_RETRY_DELAY < s->max_backoff ? CFDB_KNOB_FUTURE_VERSION_RETRY_DELAY
                                                                        : s->max_backoff;
        return 0;
    default:
        return fail(s, e);
    }
}

/* ---- key checks ------------------------------------------------------------------ */

static bool is_system(cfdb_bytes k)
{
    return k.len >= 1 && k.ptr[0] == 0xff;
}

static bool is_metadata_version_key(cfdb_bytes k)
{
    return cfdb_bytes_eq(k, cfdb_bytes_make(metadata_version_key, sizeof metadata_version_key - 1));
}

cfdb_bytes cfdb_max_read_key(bool read_system_keys)
{
    return read_system_keys ? cfdb_bytes_make(max_key_system, 2) : cfdb_bytes_make(max_key_normal, 1);
}

cfdb_bytes cfdb_max_write_key(bool write_system_keys)
{
    return cfdb_max_read_key(write_system_keys);
}

int64_t cfdb_max_write_key_size(cfdb_bytes key, bool raw_access)
{
    if (is_system(key))
        return CFDB_KNOB_SYSTEM_KEY_SIZE_LIMIT;
    return CFDB_KNOB_KEY_SIZE_LIMIT + (raw_access ? CFDB_TENANT_PREFIX_SIZE : 0);
}

int64_t cfdb_max_key_size(cfdb_bytes key)
{
    return cfdb_max_write_key_size(key, true);
}

cfdb_bytes cfdb_truncate_range_key(cfdb_bytes key)
{
    int64_t m = cfdb_max_key_size(key);
    if ((int64_t)key.len > m)
        key.len = (uint32_t)(m + 1);
    return key;
}

int cfdb_check_set(cfdb_bytes key, cfdb_bytes value, bool write_system_keys, bool raw_access)
{
    if (is_metadata_version_key(key))
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    if (cfdb_bytes_cmp(key, cfdb_max_write_key(write_system_keys)) >= 0)
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    if ((int64_t)key.len > cfdb_max_write_key_size(key, raw_access))
        return CFDB_ERR_KEY_TOO_LARGE;
    if (value.len > CFDB_KNOB_VALUE_SIZE_LIMIT)
        return CFDB_ERR_VALUE_TOO_LARGE;
    return 0;
}

int cfdb_check_atomic(int type, cfdb_bytes key, cfdb_bytes operand, bool write_system_keys, bool raw_access)
{
    if (is_metadata_version_key(key)) {
        static const uint8_t required[14] = { 0 };
        if (type != CFDB_MUT_SET_VERSIONSTAMPED_VALUE || !cfdb_bytes_eq(operand, cfdb_bytes_make(required, 14)))
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
    } else if (cfdb_bytes_cmp(key, cfdb_max_write_key(write_system_keys)) >= 0) {
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    }
    if (!cfdb_mutation_is_atomic(type))
        return CFDB_ERR_INVALID_MUTATION_TYPE;
    if ((int64_t)key.len > cfdb_max_write_key_size(key, raw_access))
        return CFDB_ERR_KEY_TOO_LARGE;
    if (operand.len > CFDB_KNOB_VALUE_SIZE_LIMIT)
        return CFDB_ERR_VALUE_TOO_LARGE;
    return 0;
}

int cfdb_check_clear_key(cfdb_bytes key, bool write_system_keys, bool *noop)
{
    *noop = false;
    if (cfdb_bytes_cmp(key, cfdb_max_write_key(write_system_keys)) >= 0)
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    if ((int64_t)key.len > cfdb_max_key_size(key))
        *noop = true;
    return 0;
}

int cfdb_check_clear_range(cfdb_bytes begin, cfdb_bytes end, bool write_system_keys)
{
    if (cfdb_bytes_cmp(begin, end) > 0)
        return CFDB_ERR_INVERTED_RANGE;
    cfdb_bytes m = cfdb_max_write_key(write_system_keys);
    if (cfdb_bytes_cmp(begin, m) > 0 || cfdb_bytes_cmp(end, m) > 0)
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    return 0;
}

int cfdb_check_get(cfdb_bytes key, bool read_system_keys, bool *noop)
{
    *noop = false;
    if (cfdb_bytes_cmp(key, cfdb_max_read_key(read_system_keys)) >= 0 && !is_metadata_version_key(key))
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    if ((int64_t)key.len > cfdb_max_key_size(key))
        *noop = true;
    return 0;
}

int cfdb_check_selector_key(cfdb_bytes key, bool read_system_keys)
{
    if (cfdb_bytes_cmp(key, cfdb_max_read_key(read_system_keys)) > 0)
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    return 0;
}

int cfdb_check_conflict_range(cfdb_bytes begin, cfdb_bytes end, bool write, bool system_keys)
{
    if (cfdb_bytes_cmp(begin, end) > 0)
        return CFDB_ERR_INVERTED_RANGE;
    cfdb_bytes m = cfdb_max_read_key(system_keys);
    if (cfdb_bytes_cmp(begin, m) > 0 || cfdb_bytes_cmp(end, m) > 0) {
        if (!write && is_metadata_version_key(begin) && end.len == sizeof metadata_version_key &&
            memcmp(end.ptr, metadata_version_key, sizeof metadata_version_key) == 0)
            return 0;
        return CFDB_ERR_KEY_OUTSIDE_LEGAL_RANGE;
    }
    return 0;
}

uint64_t cfdb_commit_size(const cfdb_mutation *mutations, size_t n_mutations, const cfdb_key_range *read_ranges,
                          size_t n_read, const cfdb_key_range *write_ranges, size_t n_write)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n_mutations; i++)
        s += CFDB_SIZEOF_MUTATION_REF + (uint64_t)mutations[i].param1.len + mutations[i].param2.len;
    for (size_t i = 0; i < n_read; i++)
        s += CFDB_SIZEOF_KEY_RANGE_REF + (uint64_t)read_ranges[i].begin.len + read_ranges[i].end.len;
    for (size_t i = 0; i < n_write; i++)
        s += CFDB_SIZEOF_KEY_RANGE_REF + (uint64_t)write_ranges[i].begin.len + write_ranges[i].end.len;
    return s;
}

int cfdb_check_commit_size(uint64_t size, int64_t size_limit)
{
    return (int64_t)size > size_limit ? CFDB_ERR_TRANSACTION_TOO_LARGE : 0;
}

int64_t cfdb_approx_size_set(size_t key_len, size_t value_len, bool add_conflict)
{
    return (int64_t)(key_len + value_len + CFDB_SIZEOF_MUTATION_REF +
                     (add_conflict ? CFDB_SIZEOF_KEY_RANGE_REF + 2 * key_len + 1 : 0));
}

int64_t cfdb_approx_size_atomic(size_t key_len, size_t operand_len, bool add_conflict)
{
    return cfdb_approx_size_set(key_len, operand_len, add_conflict);
}

int64_t cfdb_approx_size_clear_range(size_t begin_len, size_t end_len, bool add_conflict)
{
    size_t r = begin_len + end_len;
    return (int64_t)(r + CFDB_SIZEOF_MUTATION_REF + (add_conflict ? CFDB_SIZEOF_KEY_RANGE_REF + r : 0));
}

int64_t cfdb_approx_size_clear_key(size_t key_len, bool add_conflict)
{
    size_t r = 2 * key_len + 1;
    return (int64_t)(r + CFDB_SIZEOF_KEY_RANGE_REF + (add_conflict ? CFDB_SIZEOF_KEY_RANGE_REF + r : 0));
}

int64_t cfdb_approx_size_conflict_range(size_t begin_len, size_t end_len)
{
    return (int64_t)(begin_len + end_len + CFDB_SIZEOF_KEY_RANGE_REF);
}

int64_t cfdb_approx_size_read_key(size_t key_len)
{
    return (int64_t)(2 * key_len + 1 + CFDB_SIZEOF_KEY_RANGE_REF);
}

int cfdb_option_int(const uint8_t *value, int value_len, int64_t min, int64_t max, int64_t *out)
{
    if (!value || value_len != 8)
        return CFDB_ERR_INVALID_OPTION_VALUE;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = (u << 8) | value[i];
    int64_t v = (int64_t)u;
    if (v > max || v < min)
        return CFDB_ERR_INVALID_OPTION_VALUE;
    *out = v;
    return 0;
}

double cfdb_timeout_deadline(double creation_time, int64_t timeout_ms)
{
    if (timeout_ms <= 0)
        return 0;
    return creation_time + (double)timeout_ms / 1000.0;
}
