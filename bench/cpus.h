/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: CPU pinning of the processes a campaign starts (--client-cpus, --server-cpus).
 * A list is "N", "N-M" or comma-separated items of those ("0", "1-3", "0,2"); every CPU named
 * must be online, so a campaign that asks for a pinning it cannot have fails before it runs
 * instead of measuring something else. An empty list means "not pinned". */
#ifndef CFDB_BENCH_CPUS_H
#define CFDB_BENCH_CPUS_H

#include <stddef.h>

/* 0 if `list` is a valid list of online CPUs, else -1 with a reason in err. */
int bench_cpus_check(const char *list, char *err, size_t errlen);
/* Pins the calling process to `list` (in a child between fork and exec). Empty or NULL: no-op.
 * Returns 0 or -1 (errno set). */
int bench_cpus_pin(const char *list);

#endif
