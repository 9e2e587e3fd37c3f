/* SPDX-License-Identifier: Apache-2.0 */
/* Heap allocations of the whole test process, for the tests that budget them (test_api_alloc,
 * test_sql_alloc). The counter is bench/malloc_count.c (target cfdb-bench-malloc) linked into
 * the program: its malloc family comes before glibc's, so every allocation of every thread is
 * counted (the client's network thread too; a cfdb-server is another process).
 *
 * Sanitizer builds (CFDB_SANITIZE, CFDB_TSAN) own malloc, so the counter is not linked there:
 * alloc_counted() is false and alloc_count() stays 0. A test then runs its workload (for the
 * sanitizer's sake) and skips, as tests/allowed-skips.txt allows for it. */
#ifndef CFDB_TESTS_ALLOC_COUNT_H
#define CFDB_TESTS_ALLOC_COUNT_H

#include <stdbool.h>
#include <stdint.h>

/* true when allocations are counted (a plain build) */
bool alloc_counted(void);
/* allocation calls so far, all threads (0 when not counted) */
uint64_t alloc_count(void);
/* true when a malloc of this program is counted (the counter is interposed at all) */
bool alloc_count_sees_malloc(void);

#endif
