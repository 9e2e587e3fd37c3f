/* Copying a range read's rows (keys and values) into an arena at the cost of one allocation
 * and as few memcpy calls as the layout allows, instead of an allocation per key and value.
 *
 * Rows decoded from one GetKeyValuesReply lie in one stretch of the receive buffer with only
 * their two 4-byte length words between them, and rows copied by this function keep that
 * layout; when every row's bytes lie within a span no more than CFDB_KV_ROWS_SLACK(n, total)
 * bigger than the bytes themselves, the span is copied with one memcpy and each pointer is
 * rebased into the copy. Otherwise (rows from several replies, values from the transaction's
 * writes) one allocation receives every key and value back to back. An empty key or value
 * comes out as "" with length 0, as cfdb_arena_dup_bytes gives it. */
#ifndef CFDB_CLIENT_KV_ROWS_H
#define CFDB_CLIENT_KV_ROWS_H

#include <stddef.h>

#include "cfdb/arena.h"
#include "messages.h"

/* Bytes of gap a span copy accepts: the length words between n rows, plus a little. */
#define CFDB_KV_ROWS_SLACK(n, total) ((n) * 16 + (total) / 8 + 256)

/* Copies rows src[0..n) into `a`, writing the copies to dst[0..n) (dst may be src). Returns 0
 * or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory; dst is then unchanged). */
int cfdb_kv_rows_copy(cfdb_arena *a, const cfdb_key_value *src, size_t n, cfdb_key_value *dst);

#endif
