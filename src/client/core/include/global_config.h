/* The client's view of the cluster's global configuration (7.3.77
 * fdbclient/GlobalConfig.actor.cpp, class GlobalConfig): a map from bare keys (\xff/globalConfig/k/
 * removed) to typed values, filled by GlobalConfigRefreshRequests to a GRV proxy and kept
 * current from ClientDBInfo.history (GlobalConfig::updater). db_discovery.c sends the
 * refreshes and feeds the replies and each ClientDBInfo's history in on the network thread;
 * the special key modules (special_global_config.c, special_profiling.c) read it from worker
 * threads, so every call takes the view's mutex.
 *
 * Values are tuples; GlobalConfig::insert keeps the first element when it is a string
 * (code 0x02), an integer (0x0c..0x1c), a bool (0x26/0x27), a float (0x20), a double (0x21)
 * or a versionstamp (0x33), and drops the key otherwise (its ASSERT on other types and a
 * parse failure are caught there and traced). Bounded by what the cluster stores under
 * \xff/globalConfig/k/ (one GRV proxy reply) and by three history entries per ClientDBInfo. */
#ifndef CFDB_CLIENT_GLOBAL_CONFIG_H
#define CFDB_CLIENT_GLOBAL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"

#define CFDB_GC_DATA_PREFIX "\xff/globalConfig/k/"
#define CFDB_GC_HISTORY_PREFIX "\xff/globalConfig/h/"
#define CFDB_GC_VERSION_KEY "\xff/globalConfig/v"

enum cfdb_gc_type { CFDB_GC_STRING, CFDB_GC_INT, CFDB_GC_BOOL, CFDB_GC_FLOAT, CFDB_GC_DOUBLE, CFDB_GC_VERSIONSTAMP };

typedef struct cfdb_gc_value {
    enum cfdb_gc_type type;
    cfdb_bytes str; /* STRING */
    int64_t i;      /* INT */
    bool b;         /* BOOL */
    double d;       /* FLOAT (widened) and DOUBLE */
    uint8_t vs[12]; /* VERSIONSTAMP */
} cfdb_gc_value;

typedef struct cfdb_gc_view cfdb_gc_view;

cfdb_gc_view *cfdb_gc_view_new(void);
void cfdb_gc_view_free(cfdb_gc_view *v);

/* Decodes a stored global-config value as GlobalConfig::insert does: 0, or
 * CFDB_ERR_INVALID_TUPLE_DATA_TYPE when the key would be dropped (strings go into a). */
int cfdb_gc_decode(cfdb_bytes packed, cfdb_arena *a, cfdb_gc_value *out);

/* ---- the updater (network thread) ---- */
/* GlobalConfig::refresh's start: the view is emptied. */
void cfdb_gc_refresh_begin(cfdb_gc_view *v);
/* The lastKnown to send in the current refresh. */
int64_t cfdb_gc_refresh_last_known(cfdb_gc_view *v);
/* A reply's rows (keys with \xff/globalConfig/k/) are inserted; true when the refresh is
 * done (version >= the largest version seen, or that is INT64_MAX), false when it must be
 * asked again after 0.25 s. */
bool cfdb_gc_refresh_reply(cfdb_gc_view *v, const cfdb_key_value_vec *rows, int64_t version);
/* Keeps a copy of a ClientDBInfo's history (0 or 2101 when it cannot be copied). */
int cfdb_gc_set_history(cfdb_gc_view *v, const cfdb_version_history_vec *h);
/* Applies the history kept (after the first refresh): true when a refresh must run first
 * (the view missed history: cfdb_gc_refresh_last_known then gives its lastKnown). Right
 * after a refresh (after_refresh) a history whose first entry is INT64_MAX (the protocol
 * changed) is left alone until the next ClientDBInfo, as the updater's loop does. */
bool cfdb_gc_step(cfdb_gc_view *v, bool after_refresh);
bool cfdb_gc_initialized(cfdb_gc_view *v);
int64_t cfdb_gc_last_update(cfdb_gc_view *v);

/* ---- reads (any thread) ---- */
/* The entries with bare key in [begin, end), in key order, copied into a. */
typedef struct cfdb_gc_entry {
    cfdb_bytes key;
    cfdb_gc_value value;
} cfdb_gc_entry;
int cfdb_gc_get_range(cfdb_gc_view *v, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, cfdb_gc_entry **out,
                      size_t *n);
/* GlobalConfig::get<T>(name, default): the value when present and of that type. */
bool cfdb_gc_get_double(cfdb_gc_view *v, cfdb_bytes key, double *out);
bool cfdb_gc_get_int(cfdb_gc_view *v, cfdb_bytes key, int64_t *out);

#endif
