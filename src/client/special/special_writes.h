/* A transaction's writes into the special key space (RYW's specialKeySpaceWriteMap): a map
 * from disjoint key ranges to "written" entries, each a set value or a clear. Set keys are
 * single-key ranges [k, k\0); a clear covers its range. Later writes replace what they
 * overlap. The modules read it at commit (special_commit.c) and when a read must see the
 * transaction's own special writes. At most SK_WRITES_MAX ranges (then 2101
 * transaction_too_large): a peer-independent bound, the map is the application's own data. */
#ifndef CFDB_CLIENT_SPECIAL_WRITES_H
#define CFDB_CLIENT_SPECIAL_WRITES_H

#include <stdbool.h>
#include <stddef.h>

#include "cfdb/bytes.h"

#define SK_WRITES_MAX 100000

typedef struct sk_write {
    cfdb_bytes begin, end; /* owned copies */
    bool has_value;        /* set (value) or clear */
    cfdb_bytes value;
} sk_write;

typedef struct sk_writes {
    sk_write *items; /* sorted by begin, disjoint */
    size_t n, cap;
} sk_writes;

/* Record a write over [begin, end) (value NULL: a clear). 0 or a positive error. */
int sk_writes_put(sk_writes *w, cfdb_bytes begin, cfdb_bytes end, const cfdb_bytes *value);
/* Forget whatever was written in [begin, end) (KeyRangeMap::rawErase). */
int sk_writes_erase(sk_writes *w, cfdb_bytes begin, cfdb_bytes end);
/* The entry covering key, or NULL when nothing written there. */
const sk_write *sk_writes_find(const sk_writes *w, cfdb_bytes key);
/* Index of the first entry ending after begin (iterate while items[i].begin < end). */
size_t sk_writes_lower(const sk_writes *w, cfdb_bytes begin);
bool sk_writes_any(const sk_writes *w, cfdb_bytes begin, cfdb_bytes end);
void sk_writes_free(sk_writes *w);

#endif
