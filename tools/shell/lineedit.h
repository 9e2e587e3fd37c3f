/* SPDX-License-Identifier: Apache-2.0 */
/* Interactive line editing for the cfdb shell: libedit's readline interface (Debian
 * libedit-dev), its history (saved to ~/.cfdb_history, at most 1000 lines, as fdbcli keeps
 * ~/.fdbcli_history) and tab completion of fdbcli's kinds: command names, help topics,
 * `option on|off NAME', `writemode on|off' and `status minimal|details|json'. Lines that
 * contain "writemode", "expensive_data_check", "unlock" or "blobrange" are not added to the history (fdbcli keeps dangerous commands out),
 * nor a line equal to the previous one (linenoise's rule). */
#ifndef CFDB_SHELL_LINEEDIT_H
#define CFDB_SHELL_LINEEDIT_H

#include <stdbool.h>

/* history_file may be NULL (no history file). */
void shell_lineedit_init(const char *history_file);
/* A line (malloc'd, no newline) or NULL at end of input. */
char *shell_lineedit_read(const char *prompt);
void shell_lineedit_add_history(const char *line);
/* Writes the history file. */
void shell_lineedit_close(void);

/* The completions of the word that starts at start in line (for tests and libedit):
 * calls emit for each candidate, in order. */
void shell_complete(const char *line, int start, const char *word, void (*emit)(const char *, void *), void *arg);

#endif /* CFDB_SHELL_LINEEDIT_H */
