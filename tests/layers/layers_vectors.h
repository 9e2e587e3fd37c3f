/* SPDX-License-Identifier: Apache-2.0 */
/* Reading tests/vectors/layers/ (format in its README.md): tuple values written as specs by the
 * Python binding's side, with the bytes fdb.tuple.pack gave; directory key/value dumps. */
#ifndef CFDB_TESTS_LAYERS_VECTORS_H
#define CFDB_TESTS_LAYERS_VECTORS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "cfdb/tuple.h"

typedef struct lv_line {
    char *spec;          /* the value spec (without a leading '@') */
    bool versionstamp;   /* '@': bytes from pack_with_versionstamp */
    cfdb_bytes bytes;    /* the recorded bytes (first column for .kv files: key) */
    cfdb_bytes value;    /* .kv files: the value */
} lv_line;

/* Reads a vectors file of "<spec> <hex>" (tuples) or "<hex> <hex>" (kv, is_kv) lines into
 * arena memory. Returns the number of lines, or -1 (message printed) on a bad file. */
int lv_read(cfdb_arena *a, const char *path, bool is_kv, lv_line **lines);
/* Builds the tuple a spec describes; 0 or an error code (2000 for a bad spec). */
int lv_parse_spec(cfdb_arena *a, const char *spec, cfdb_tuple *out);
/* Hex dump of b into a static buffer (for messages). */
const char *lv_hex(cfdb_bytes b);

#endif
