/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: "cfdb-bench run" - plan, seal, populate and execute a campaign. */
#ifndef CFDB_BENCH_RUNNER_H
#define CFDB_BENCH_RUNNER_H

#include <stddef.h>

/* argv[0] is "run". Writes the campaign folder; returns a process exit code.
 * out_dir receives the folder (for the caller to analyze). */
int bench_run_main(int argc, char **argv, char *out_dir, size_t out_len, int *want_report);

#endif
