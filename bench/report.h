/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: the report folder - results.json, summary.md and plots
 * (gnuplot; when gnuplot is missing the summary says so). */
#ifndef CFDB_BENCH_REPORT_H
#define CFDB_BENCH_REPORT_H

#include "analyze.h"

/* Write DIR/report/{results.json,summary.md,plots}. Returns 0 or -1. */
int bench_report_write(const bench_analysis *an, int print_summary);

/* "cfdb-bench report DIR" */
int bench_report_main(int argc, char **argv);

#endif
