/* SPDX-License-Identifier: Apache-2.0 */
/* Transaction options for the shell's `option' command, by fdbcli's names (the upper-case
 * names of fdb.options, as fdbcli's FdbOptions registers FDBTransactionOptions), and a set
 * of enabled options with their values.
 *
 * An option set is ordered like fdbcli's: apply() sets options in ascending option code
 * (fdbcli's std::map keyed by the option enum), print() lists them by name. Integer
 * parameters are parsed as fdbcli does (std::stoll over the whole text) and stored as the
 * 8-byte little-endian value fdb_transaction_set_option expects. Values are copied to the
 * heap; a set holds at most one value per option, so its size is bounded by the table.
 */
#ifndef CFDB_SHELL_OPTIONS_H
#define CFDB_SHELL_OPTIONS_H

#define FDB_API_VERSION 730
#include <foundationdb/fdb_c.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum shell_opt_param { OPT_NONE, OPT_INT, OPT_STRING, OPT_BYTES } shell_opt_param;

typedef struct shell_option_info {
    const char *name;
    int code;
    shell_opt_param param;
    bool documented; /* neither deprecated nor hidden: offered by completion */
} shell_option_info;

/* The table, sorted by name. */
extern const shell_option_info shell_options[];
extern const size_t shell_options_count;

/* The index of the option called name (n bytes), or -1. */
int shell_option_find(const char *name, size_t n);

typedef struct shell_optset {
    bool on[64];
    uint8_t *value[64]; /* NULL: no parameter */
    size_t len[64];
} shell_optset;

void shell_optset_clear(shell_optset *s);
/* *dst = a copy of src. 0 or 4100. */
int shell_optset_copy(shell_optset *dst, const shell_optset *src);
/* Enables option idx with value (NULL: none) or disables it. 0 or 4100. */
int shell_optset_set(shell_optset *s, int idx, bool on, const uint8_t *value, size_t len);
bool shell_optset_any(const shell_optset *s);
/* Sets every enabled option on tr, in ascending option code; the first error. */
fdb_error_t shell_optset_apply(const shell_optset *s, FDBTransaction *tr);
/* fdbcli's print(): "NAME: `value'" or "NAME" per enabled option, by name. */
void shell_optset_print(const shell_optset *s);

/* Parses text (n bytes) as fdbcli parses an integer option value; false when it is not an
 * integer (leading white space and a sign are accepted, trailing bytes are not). */
bool shell_option_parse_int(const char *text, size_t n, int64_t *out);

#endif /* CFDB_SHELL_OPTIONS_H */
