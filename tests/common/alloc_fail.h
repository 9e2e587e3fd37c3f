/* SPDX-License-Identifier: Apache-2.0 */
/* A failing, counting malloc family for allocation-failure tests.
 *
 * A test program links the code under test statically (object libraries) and passes the
 * linker -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free (cfdb_alloc_fail_wrap()
 * in tests/common/CMakeLists.txt), so every allocation that code makes -- its arenas' blocks
 * included -- goes through the functions in alloc_fail.c. Armed with a countdown N, the Nth
 * allocation from then on fails; the wrapper also counts the blocks alive, which is the
 * test's leak check. Not thread-safe: one thread allocates while armed. */
#ifndef CFDB_TESTS_ALLOC_FAIL_H
#define CFDB_TESTS_ALLOC_FAIL_H

#include <stdbool.h>

/* Arms the countdown: the nth allocation from now fails (0 disarms). */
void af_arm(long n);
/* Disarms; true when the armed allocation was reached (and failed). */
bool af_disarm(void);
/* Blocks handed out by the wrapped functions and not freed yet. */
long af_live(void);

#endif
