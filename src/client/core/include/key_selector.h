/* Key selectors (KeySelectorRef in fdbclient/FDBTypes.h): the standard constructors,
 * removeOrEqual, and the checks ReadYourWritesTransaction::getRange / NativeAPI getKey make
 * before any I/O. Resolving them is ryw_read.c's (read-your-writes) and the storage
 * servers' (NativeAPI). */
#ifndef CFDB_CLIENT_KEY_SELECTOR_H
#define CFDB_CLIENT_KEY_SELECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "messages.h"

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

/* keyAfter: key + "\x00", except that "\xff\xff" stays "\xff\xff". Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_key_after(cfdb_arena *a, cfdb_bytes key, cfdb_bytes *out);

/* removeOrEqual: (k, true, n) -> (keyAfter(k), false, n). Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_sel_remove_or_equal(cfdb_key_selector *s, cfdb_arena *a);

/* NativeAPI getKey's shortcuts at the ends of the key space: "\xff\xff" with
 * offset > 0 resolves to "\xff\xff" ("\xff\xff" with offset <= 0 loses orEqual);
 * "" with offset <= 0 resolves to "". Returns true and sets *result when resolved. */
bool cfdb_sel_native_shortcut(cfdb_key_selector *s, cfdb_bytes *result);

/* After removeOrEqual on both: RYW's "begin.offset >= end.offset && begin.key >=
 * end.key" test, for which get_range returns an empty result without reading. */
bool cfdb_sel_range_trivially_empty(const cfdb_key_selector *begin, const cfdb_key_selector *end);

#endif
