/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: facts about the machine, recorded in the manifest. */
#ifndef CFDB_BENCH_MACHINE_H
#define CFDB_BENCH_MACHINE_H

#include "json_writer.h"

/* Write a JSON object of machine facts (kernel, CPU model, CPU counts,
 * memory, frequency governor, load average, libc). */
void bench_machine_json(cfdb_json *j);

#endif
