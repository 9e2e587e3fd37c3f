/* Key selectors (KeySelectorRef in fdbclient/FDBTypes.h) and how the client
 * resolves them: the standard constructors, removeOrEqual, the checks
 * ReadYourWritesTransaction::getRange / NativeAPI getKey make before any I/O,
 * and resolution of a selector against the transaction's merged view (storage
 * rows + local writes), as the RYW layer does for get_key and for range reads. */
#ifndef CFDB_CLIENT_KEY_SELECTOR_H
#define CFDB_CLIENT_KEY_SELECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "cfdb/messages.h"
#include "write_map.h"

static inline cfdb_key_selector cfdb_sel_make(cfdb_bytes key, bool or_equal, int32_t offset)
{
    cfdb_key_selector s;
    s.key = key;
    s.orEqual = or_equal;
    s.offset = offset;
    return s;
}
static inline cfdb_key_selector cfdb_first_greater_or_equal(cfdb_bytes k)
{
    return cfdb_sel_make(k, false, 1);
}
static inline cfdb_key_selector cfdb_first_greater_than(cfdb_bytes k)
{
    return cfdb_sel_make(k, true, 1);
}
static inline cfdb_key_selector cfdb_last_less_than(cfdb_bytes k)
{
    return cfdb_sel_make(k, false, 0);
}
static inline cfdb_key_selector cfdb_last_less_or_equal(cfdb_bytes k)
{
    return cfdb_sel_make(k, true, 0);
}
static inline bool cfdb_sel_is_backward(const cfdb_key_selector *s)
{
    return !s->orEqual && s->offset <= 0;
}
static inline bool cfdb_sel_is_first_greater_or_equal(const cfdb_key_selector *s)
{
    return !s->orEqual && s->offset == 1;
}
static inline bool cfdb_sel_is_first_greater_than(const cfdb_key_selector *s)
{
    return s->orEqual && s->offset == 1;
}
static inline bool cfdb_sel_is_last_less_or_equal(const cfdb_key_selector *s)
{
    return s->orEqual && s->offset == 0;
}

/* keyAfter: key + "\x00", except that "\xff\xff" stays "\xff\xff". Returns 0 or -1. */
int cfdb_key_after(cfdb_arena *a, cfdb_bytes key, cfdb_bytes *out);

/* removeOrEqual: (k, true, n) -> (keyAfter(k), false, n). Returns 0 or -1. */
int cfdb_sel_remove_or_equal(cfdb_key_selector *s, cfdb_arena *a);

/* NativeAPI getKey's shortcuts at the ends of the key space: "\xff\xff" with
 * offset > 0 resolves to "\xff\xff" ("\xff\xff" with offset <= 0 loses orEqual);
 * "" with offset <= 0 resolves to "". Returns true and sets *result when resolved. */
bool cfdb_sel_native_shortcut(cfdb_key_selector *s, cfdb_bytes *result);

/* After removeOrEqual on both: RYW's "begin.offset >= end.offset && begin.key >=
 * end.key" test, for which get_range returns an empty result without reading. */
bool cfdb_sel_range_trivially_empty(const cfdb_key_selector *begin, const cfdb_key_selector *end);

/* Resolves a selector against storage + local writes, answering in [“”, max_key]:
 * offset > 0: the offset-th key >= k' (k' = keyAfter(key) when or_equal, else key),
 * or max_key when there are fewer; offset <= 0: the (1 - offset)-th key < k' going
 * down, or "" when there are fewer. Runs as a write-map range read: drive it
 * with cfdb_sel_resolve_advance / cfdb_sel_resolve_feed (same protocol as
 * cfdb_wm_range_advance / cfdb_wm_range_feed). */
typedef struct cfdb_sel_resolver {
    cfdb_wm_range_iter it;
    cfdb_key_selector sel;
    cfdb_bytes max_key;
    cfdb_bytes result;
    uint32_t want;
} cfdb_sel_resolver;

/* Returns 0 or -1 (out of memory). Memory from arena. */
int cfdb_sel_resolve_start(cfdb_sel_resolver *r, cfdb_write_map *wm, cfdb_key_selector sel, cfdb_bytes max_key,
                           cfdb_arena *arena);
/* CFDB_WM_RANGE_DONE (then cfdb_sel_resolve_result), CFDB_WM_RANGE_NEED_STORAGE
 * (read r->it.req_begin .. r->it.req_end in direction r->it.reverse), an error code
 * (accessed_unreadable) or -1. */
int cfdb_sel_resolve_advance(cfdb_sel_resolver *r);
void cfdb_sel_resolve_feed(cfdb_sel_resolver *r, const cfdb_key_value *rows, size_t n, bool more);
cfdb_bytes cfdb_sel_resolve_result(const cfdb_sel_resolver *r);
void cfdb_sel_resolve_free(cfdb_sel_resolver *r);

#endif
