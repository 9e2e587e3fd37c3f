/* Mapped range reads: the mapper tuple that turns an index row into the key (or key
 * prefix) of the record it points to (getMappedKeyValues in FoundationDB 7.3). */
#ifndef CFDB_SERVER_MAPPER_H
#define CFDB_SERVER_MAPPER_H

#include <stdbool.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"

/* Length of the tuple element encoded at p (nested-aware), or 0 if malformed. */
uint32_t srv_tuple_element_len(const uint8_t *p, uint32_t n);

/* Builds the mapped key for one row. Mapper elements that are strings "{K[i]}" / "{V[i]}"
 * copy element i of the key / value tuple; a final "{...}" makes it a prefix range read
 * (*is_range); "{{" and "}}" stand for literal braces; anything else is copied.
 * Returns 0 or CFDB_ERR_MAPPER_NOT_TUPLE, KEY_NOT_TUPLE, VALUE_NOT_TUPLE,
 * MAPPER_BAD_INDEX, MAPPER_BAD_RANGE_DECRIPTOR, or CFDB_ERR_UNKNOWN_ERROR (4000) when
 * out of memory. */
int srv_map_key(cfdb_bytes mapper, cfdb_bytes key, cfdb_bytes value, cfdb_arena *a, cfdb_bytes *out,
                bool *is_range);

#endif
